//! A Claude Code terminal's notice handed to the running inbox (issue 26 item 6): connect, send one
//! `notice`, read its `noticed`. Every step is bounded: the caller is a hook Claude Code runs, and
//! an inbox that is stopped or hung must not hold it.

use std::io;
use std::time::Duration;

use crate::protocol::hook_notification::TerminalNotice;
use crate::protocol::inbox::{ClientMessage, InboxMessage};

use super::{ConnectError, InboxClient, Place};

/// How long sending the notice, and then its answer, may take each. A running inbox answers in
/// milliseconds (its socket thread, never its window, answers).
const STEP_BOUND: Duration = Duration::from_secs(2);

/// Why the inbox did not take a notice.
#[derive(Debug, thiserror::Error)]
pub enum NoticeError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// Sending failed, or no answer came within the bound.
    #[error("the inbox did not answer the notice ({0})")]
    Io(#[from] io::Error),
    /// The inbox does not know `notice` (an askpane from before issue 26), or refused it.
    #[error("the inbox refused the notice: {0}")]
    Refused(String),
}

/// Hands `notice` to the inbox at `place`; `Ok(true)` when it notifies, `Ok(false)` when it shows
/// no desktop notifications (`--no-notify`, `--ui web`). Never starts an inbox.
pub fn send_notice(place: &Place, notice: TerminalNotice) -> Result<bool, NoticeError> {
    let mut client = InboxClient::connect(place)?;
    client.set_write_timeout(Some(STEP_BOUND))?;
    client.set_read_timeout(Some(STEP_BOUND))?;
    client.send(&ClientMessage::Notice { notice })?;
    // Answers come in order: the first one that is about the notice is its answer.
    loop {
        match client.receive()? {
            Some(InboxMessage::Noticed { notifies }) => return Ok(notifies),
            Some(InboxMessage::Error { message, .. }) => return Err(NoticeError::Refused(message)),
            Some(_) => {}
            None => {
                let closed = io::Error::new(io::ErrorKind::UnexpectedEof, "the inbox closed");
                return Err(NoticeError::Io(closed));
            }
        }
    }
}
