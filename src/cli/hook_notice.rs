//! `askpane hook` given Claude Code's `Notification` (issue 26 item 6): a terminal says it waits.
//! The running inbox names it in its desktop notification (never a second one for a session whose
//! card it shows); with no inbox, one plain notification is raised here when a session bus is
//! there. Never a window, never a byte on stdout (Claude Code reads nothing from this hook), always
//! exit 0, every step bounded.

use askpane::protocol::exit;
use askpane::protocol::hook_notification::TerminalNotice;
use askpane::protocol::notice::terminal_notification;
use askpane::protocol::origin::RequestId;
use askpane::transport::inbox::{ConnectError, NoticeError, Place, send_notice};
use askpane::transport::notify::notify_once;

use super::args::InboxUse;

/// Hands `notice` on; the exit code is always 0 (a Notification hook decides nothing).
pub(super) fn run(notice: TerminalNotice, inbox: &InboxUse) -> u8 {
    if inbox.no_inbox {
        raise_here(&notice);
        return exit::OK;
    }
    let sent = Place::find().map_err(|error| NoticeError::Connect(ConnectError::NotRunning(error)));
    match sent.and_then(|place| send_notice(&place, notice.clone())) {
        Ok(true) => {}
        Ok(false) => eprintln!(
            "askpane hook: the inbox shows no desktop notifications (--no-notify or --ui web); \
             {} is not announced",
            notice.headline()
        ),
        // No inbox (or one from before notices): never start one for a notice.
        Err(NoticeError::Connect(ConnectError::NotRunning(_)) | NoticeError::Refused(_)) => {
            raise_here(&notice)
        }
        Err(error) => {
            eprintln!("askpane hook: {error}; raising the notification here");
            raise_here(&notice);
        }
    }
    exit::OK
}

/// One plain desktop notification, when a session bus and a notification server are there; else
/// a line on stderr.
fn raise_here(notice: &TerminalNotice) {
    let notification = terminal_notification(notice, RequestId::next());
    if let Err(error) = notify_once(&notification) {
        eprintln!("askpane hook: no desktop notification for {} ({error})", notice.headline());
    }
}
