//! The link's own socket (issue 27): ssh's reverse forward connects here for each client on the
//! remote, and each such connection is relayed, byte for byte, to the local inbox after one line
//! of the relay's own: `via_link` naming the host as the link knows it. The inbox then scopes
//! the connection to that host (`protocol/link.rs`); a `via_link` the remote client sends after
//! it is refused there, so nothing the remote says can change which host it is.

use std::io::{self, BufReader, Write};
use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::protocol::inbox::{ClientMessage, InboxMessage};
use crate::transport::endpoint::{self, Acceptor, Gate, Listener, Server, Stream, Waited};
use crate::transport::inbox::{InboxClient, Place};
use crate::transport::lines::{self, Frame};

/// Starts an inbox when none runs (the client's own starter: a window, or the browser page).
pub type StartInbox = Arc<dyn Fn(&Place) -> Result<InboxClient, String> + Send + Sync>;

/// How long the inbox has to greet and confirm the link (it answers at once when it runs).
const GREETING_WAIT: Duration = Duration::from_secs(10);

/// The longest greeting line the relay reads (a hello or `linked` is a few dozen bytes).
const GREETING_MAX_BYTES: u64 = 4096;

/// How long one write to either side may block before the relay counts that side as gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The link's socket, accepting on a thread of its own (`remote-accept`) until stopped.
pub struct LinkSocket {
    path: PathBuf,
    acceptor: Arc<Acceptor>,
    accept: Option<JoinHandle<()>>,
}

impl LinkSocket {
    /// Binds `path` (0600, in the user's 0700 folder) and relays each client to the inbox at
    /// `place` as coming from `host`.
    pub fn serve(
        path: &Path,
        host: String,
        place: Place,
        start: StartInbox,
    ) -> io::Result<LinkSocket> {
        let listener = endpoint::bind(path)?;
        let acceptor = Arc::new(Acceptor::new(path)?);
        let stops = Arc::clone(&acceptor);
        let accept = crate::transport::spawn_named("remote-accept", move || {
            accept_loop(&listener, &stops, &host, &place, &start)
        })?;
        Ok(LinkSocket { path: path.to_owned(), acceptor, accept: Some(accept) })
    }

    /// Stops accepting, waits for every relayed connection to end (ssh's end closes them), and
    /// removes the socket.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.acceptor.stop();
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for LinkSocket {
    fn drop(&mut self) {
        self.end();
    }
}

fn accept_loop(
    listener: &Listener,
    acceptor: &Acceptor,
    host: &str,
    place: &Place,
    start: &StartInbox,
) {
    let gate = Gate::for_this_user();
    let mut relays: Vec<Relay> = Vec::new();
    loop {
        match acceptor.wait(listener) {
            Ok(Waited::Client) => {}
            Ok(Waited::Stopped) => break,
            Err(error) => {
                log::error!("the link's socket cannot wait for clients: {error}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        }
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(error) => {
                log::error!("the link's socket cannot accept: {error}");
                continue;
            }
        };
        // ssh runs as this user; anyone else reaching the 0700 folder is refused here too.
        if let Err(why) = gate.admit(&client) {
            log::warn!("the link's socket {why}");
            continue;
        }
        let relay = Relay::start(client, host.to_owned(), place.clone(), Arc::clone(start));
        match relay {
            Ok(relay) => {
                // Ended relays are joined as new ones come, so the list stays short.
                let (done, live): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut relays).into_iter().partition(Relay::is_finished);
                done.into_iter().for_each(Relay::join);
                relays = live;
                relays.push(relay);
            }
            Err(error) => log::error!("cannot relay a client of {host}: {error}"),
        }
    }
    // The link ends: its clients are cut (they wait for the link to come back, issue 27 item 3).
    for relay in relays {
        relay.cut();
        relay.join();
    }
}

/// One remote client relayed to the inbox (`remote-relay`, which copies the inbox's lines down,
/// and `remote-relay-up`, the client's lines up).
struct Relay {
    client: Arc<Stream>,
    thread: JoinHandle<()>,
}

impl Relay {
    fn start(client: Stream, host: String, place: Place, start: StartInbox) -> io::Result<Relay> {
        let client = Arc::new(client);
        let relaying = Arc::clone(&client);
        let thread = crate::transport::spawn_named("remote-relay", move || {
            if let Err(error) = relay(&relaying, &host, &place, &start) {
                log::warn!("a client of {host} could not reach the inbox: {error}");
            }
            let _ = relaying.shutdown(Shutdown::Both);
        })?;
        Ok(Relay { client, thread })
    }

    fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    fn cut(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
    }

    fn join(self) {
        let _ = self.thread.join();
    }
}

/// Connects to the inbox (starting one when none runs), says which host this is, hands the
/// client the inbox's hello naming the link once the inbox confirmed it, and copies both ways
/// until either side ends.
fn relay(client: &Arc<Stream>, host: &str, place: &Place, start: &StartInbox) -> io::Result<()> {
    let inbox = Arc::new(connect_inbox(place, start)?);
    let _ = inbox.set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = client.set_write_timeout(Some(WRITE_TIMEOUT));
    // The relay's line comes first, before any byte of the client's is read.
    let via = ClientMessage::ViaLink { host: host.to_owned() };
    (&*inbox).write_all(&line_of(&via)?)?;
    // The inbox's hello, then its `linked`: only a scoped connection is handed to the client
    // (an inbox that does not know `via_link` refuses it, and the client is cut).
    let _ = inbox.set_read_timeout(Some(GREETING_WAIT));
    let mut from_inbox = BufReader::new(&*inbox);
    let hello = match read_message(&mut from_inbox)? {
        InboxMessage::Hello { version, pid, started_at, .. } => {
            InboxMessage::Hello { version, pid, link: Some(host.to_owned()), started_at }
        }
        other => return Err(io::Error::other(format!("the inbox greeted with {other:?}"))),
    };
    match read_message(&mut from_inbox)? {
        InboxMessage::Linked { host: linked } if linked == host => {}
        other => {
            return Err(io::Error::other(format!("the inbox did not take the link: {other:?}")));
        }
    }
    let _ = inbox.set_read_timeout(None);
    (&**client).write_all(&line_of(&hello)?)?;
    let (up_from, up_to) = (Arc::clone(client), Arc::clone(&inbox));
    let up = crate::transport::spawn_named("remote-relay-up", move || {
        let _ = io::copy(&mut &*up_from, &mut &*up_to);
        // The client ended (or its link did): the inbox withdraws what it asked.
        let _ = up_to.shutdown(Shutdown::Write);
    })?;
    // What the inbox wrote after `linked` may be in the reader's buffer already: copied from it.
    let _ = io::copy(&mut from_inbox, &mut &**client);
    // The inbox ended (or closed this connection): the client hears the end and asks again.
    let _ = client.shutdown(Shutdown::Both);
    let _ = inbox.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}

fn line_of<T: serde::Serialize>(message: &T) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// One line of the inbox's, read as a message.
fn read_message(reader: &mut BufReader<&Stream>) -> io::Result<InboxMessage> {
    let mut line = Vec::new();
    match lines::read_frame(reader, &mut line, GREETING_MAX_BYTES)? {
        Frame::Line => {}
        Frame::End | Frame::TooLong => {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the inbox closed"));
        }
    }
    serde_json::from_slice(line.trim_ascii()).map_err(io::Error::other)
}

/// A raw connection to this user's inbox (its hello is left for the remote client to read),
/// starting one first when none runs.
fn connect_inbox(place: &Place, start: &StartInbox) -> io::Result<Stream> {
    let socket = place.socket();
    let stream = match endpoint::connect(&socket) {
        Ok(stream) => stream,
        Err(_) => {
            // The starter waits until the new inbox listens; its own connection is closed.
            let started = start(place).map_err(io::Error::other)?;
            started.close();
            endpoint::connect(&socket)?
        }
    };
    match endpoint::server_of(&stream)? {
        Server::ThisUser => Ok(stream),
        Server::OtherUser { uid } => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is served by another user (uid {uid})", socket.display()),
        )),
    }
}
