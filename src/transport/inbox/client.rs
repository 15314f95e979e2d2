//! The thin client's side of the inbox's socket: connecting (the inbox must be this user's and
//! greet in this protocol's version before anything is sent), and one line per message each way.

use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

use crate::protocol::inbox::{ClientMessage, InboxMessage, VERSION};

use super::super::endpoint::{self, Server, Stream};
use super::super::lines::{self, Frame};
use super::writer::line_bytes;
use super::{MAX_LINE_BYTES, Place};

/// A thin client's connection to the inbox.
#[derive(Debug)]
pub struct InboxClient {
    reader: BufReader<Stream>,
    writer: Stream,
    /// The inbox's process id, from its hello.
    pub inbox_pid: u32,
    /// The SSH host this connection comes from when it runs through `askpane remote`'s link
    /// (issue 27), from the hello the link hands on.
    pub link: Option<String>,
    /// When the inbox started (seconds since the Unix epoch), from its hello; `None` from an
    /// older inbox.
    pub started_at: Option<u64>,
}

/// Why no inbox could be reached.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Nothing listens on the socket (no inbox runs).
    #[error("no inbox runs ({0})")]
    NotRunning(io::Error),
    /// Something listens but does not speak the inbox's protocol.
    #[error("the inbox did not greet: {0}")]
    NoHello(String),
    /// This system has no socket of the kind the inbox uses (Windows before 10 1803).
    #[error("{0}")]
    Unsupported(io::Error),
    /// Another user's process serves the socket: not the inbox, and sent nothing (issue 24).
    #[error(
        "{} is served by another user (uid {uid}), not by your inbox: askpane sent it nothing",
        socket.display()
    )]
    Foreign { socket: PathBuf, uid: u32 },
}

impl InboxClient {
    /// Connects, checks that the inbox is this user's (before a byte goes either way), and
    /// reads its hello.
    pub fn connect(place: &Place) -> Result<InboxClient, ConnectError> {
        let socket = place.socket();
        let stream = endpoint::connect(&socket).map_err(|error| match error.kind() {
            io::ErrorKind::Unsupported => ConnectError::Unsupported(error),
            _ => ConnectError::NotRunning(error),
        })?;
        match endpoint::server_of(&stream) {
            Ok(Server::ThisUser) => {}
            Ok(Server::OtherUser { uid }) => return Err(ConnectError::Foreign { socket, uid }),
            Err(error) => {
                let why = format!("cannot tell who serves {}: {error}", socket.display());
                return Err(ConnectError::NoHello(why));
            }
        }
        let writer = stream.try_clone().map_err(ConnectError::NotRunning)?;
        // A listening inbox greets at once; one that hangs is not waited for.
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut client = InboxClient {
            reader: BufReader::new(stream),
            writer,
            inbox_pid: 0,
            link: None,
            started_at: None,
        };
        match client.receive() {
            Ok(Some(InboxMessage::Hello { version: VERSION, pid, link, started_at })) => {
                client.inbox_pid = pid;
                client.link = link;
                client.started_at = started_at;
            }
            Ok(Some(InboxMessage::Hello { version, .. })) => {
                return Err(ConnectError::NoHello(format!(
                    "it speaks version {version} of the protocol, this askpane {VERSION}"
                )));
            }
            // Closed before greeting: an inbox that is dying (its listener outlived its
            // connections for a moment). As good as none.
            Ok(None) => {
                let closed = io::Error::new(io::ErrorKind::UnexpectedEof, "closed before greeting");
                return Err(ConnectError::NotRunning(closed));
            }
            Ok(Some(other)) => return Err(ConnectError::NoHello(format!("it sent {other:?}"))),
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::ConnectionReset
                        | io::ErrorKind::BrokenPipe
                        | io::ErrorKind::UnexpectedEof
                ) =>
            {
                return Err(ConnectError::NotRunning(error));
            }
            Err(error) => return Err(ConnectError::NoHello(error.to_string())),
        }
        let _ = client.reader.get_ref().set_read_timeout(None);
        Ok(client)
    }

    pub fn send(&mut self, message: &ClientMessage) -> io::Result<()> {
        self.writer.write_all(&line_bytes(message)?)
    }

    /// The next message; `None` when the inbox closed the connection (it ended).
    pub fn receive(&mut self) -> io::Result<Option<InboxMessage>> {
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines::read_frame(&mut self.reader, &mut line, MAX_LINE_BYTES)? {
                Frame::End => return Ok(None),
                Frame::TooLong => {
                    let error = format!("the inbox sent a line longer than {MAX_LINE_BYTES} bytes");
                    return Err(io::Error::new(io::ErrorKind::InvalidData, error));
                }
                Frame::Line => {}
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            return serde_json::from_slice(line.trim_ascii())
                .map(Some)
                .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error));
        }
    }

    /// Bounds how long [`InboxClient::send`] may block: an inbox that stopped reading (Ctrl+Z,
    /// SIGSTOP) must not hold its client for ever.
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.writer.set_write_timeout(timeout)
    }

    /// Bounds how long [`InboxClient::receive`] may block (`None`: for ever, the default).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.reader.get_ref().set_read_timeout(timeout)
    }

    /// Closes the connection: the inbox withdraws what this client still waits for.
    pub fn close(&self) {
        let _ = self.writer.shutdown(std::net::Shutdown::Both);
    }

    /// A second handle on the connection, for a thread that reads while another writes.
    pub fn try_clone(&self) -> io::Result<InboxClient> {
        Ok(InboxClient {
            reader: BufReader::new(self.reader.get_ref().try_clone()?),
            writer: self.writer.try_clone()?,
            inbox_pid: self.inbox_pid,
            link: self.link.clone(),
            started_at: self.started_at,
        })
    }
}
