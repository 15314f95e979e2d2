//! A long-lived connection to the inbox (`askpane claude`, `codex` and `opencode` keep one for
//! the session's life) and the named thread that reads it.

use std::io;
use std::thread::JoinHandle;

use crossbeam_channel::Receiver;

use crate::protocol::inbox::InboxMessage;

use super::InboxClient;

/// A connection whose messages arrive on [`InboxConnection::messages`], ending with `Ok(None)` or
/// an error when the connection ends.
#[derive(Debug)]
pub struct InboxConnection {
    pub client: InboxClient,
    pub messages: Receiver<io::Result<Option<InboxMessage>>>,
    reader: Option<JoinHandle<()>>,
}

impl InboxConnection {
    /// Starts reading `client` on a thread of its own (`inbox-reader`).
    pub fn open(client: InboxClient) -> io::Result<InboxConnection> {
        let (sender, messages) = crossbeam_channel::unbounded();
        let reader = read_into(client.try_clone()?, sender)?;
        Ok(InboxConnection { client, messages, reader: Some(reader) })
    }

    /// Closes the connection (the inbox withdraws what it still holds for it) and joins the
    /// reader.
    pub fn close(mut self) {
        self.client.close();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Reads `reading` on a thread named `inbox-reader` into `sender` until the connection ends (the
/// end is sent too) or nobody listens.
pub(super) fn read_into(
    mut reading: InboxClient,
    sender: crossbeam_channel::Sender<io::Result<Option<InboxMessage>>>,
) -> io::Result<JoinHandle<()>> {
    crate::transport::spawn_named("inbox-reader", move || {
        loop {
            let message = reading.receive();
            let end = !matches!(message, Ok(Some(_)));
            if sender.send(message).is_err() || end {
                return;
            }
        }
    })
}
