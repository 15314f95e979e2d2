//! Desktop notifications where askpane speaks no notification service (the BSDs): the same
//! [`Notifier`] as on Linux, which cannot start, so the inbox says once why there are none.

use std::io;

use crate::protocol::hook_notification::TerminalNotice;
use crate::protocol::notice::{Notification, Snapshot};
use crate::protocol::origin::RequestId;

/// Never started here.
#[derive(Debug)]
pub struct Notifier;

impl Notifier {
    pub fn start(open: impl Fn(RequestId) + Send + 'static) -> io::Result<Notifier> {
        drop(open);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "askpane shows them on Linux, macOS and Windows only",
        ))
    }

    pub fn reporter(&self) -> impl FnMut(Snapshot) + Send + 'static {
        |_snapshot| {}
    }

    pub fn noticer(&self) -> impl Fn(TerminalNotice) + Send + Sync + 'static {
        |_notice| {}
    }

    pub fn stop(self) {}
}

/// Nothing to raise a notification with here.
pub fn notify_once(notification: &Notification) -> io::Result<()> {
    let _ = notification;
    Err(io::Error::new(io::ErrorKind::Unsupported, "no desktop notifications on this system"))
}
