//! Desktop notifications on macOS and Windows (issue 15): the same `notifier` thread and the same
//! [`Notices`] decisions as on Linux (`notify.rs`), shown through notify-rust, which speaks
//! Notification Center on macOS (mac-notification-sys) and WinRT toasts on Windows.
//!
//! What these platforms give through it, and so what askpane does there:
//! - A notification cannot be replaced or closed once shown: only an arrival shows one (grouped
//!   when several wait, as on Linux); a departure or the window's focus changes nothing shown,
//!   and the platform's own centre keeps or expires it.
//! - No "Open" action is heard (that would need a thread waiting on the platform for good), so a
//!   click does not raise askpane's window. Neither platform's notifications take the keyboard.
//! - On Windows the toast is attributed to PowerShell's registered app id: an unpackaged program
//!   has no id of its own until an installer registers one.

use std::io;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use crate::protocol::hook_notification::TerminalNotice;
use crate::protocol::notice::{NoticeCommand, Notices, Notification, Snapshot, Terminals};
use crate::protocol::origin::RequestId;

/// What wakes the notifier thread.
#[derive(Debug)]
enum Input {
    /// The window changed.
    Snapshot(Snapshot),
    /// A Claude Code terminal says it waits (issue 26 item 6).
    Notice(TerminalNotice),
}

/// The notifier thread and the channel that wakes it.
#[derive(Debug)]
pub struct Notifier {
    snapshots: Option<Sender<Input>>,
    thread: Option<JoinHandle<()>>,
}

impl Notifier {
    /// Starts the `notifier` thread. `open` is never called here: no platform action is heard.
    pub fn start(open: impl Fn(RequestId) + Send + 'static) -> io::Result<Notifier> {
        drop(open);
        let (snapshots, receiver) = crossbeam_channel::unbounded();
        let thread = crate::transport::spawn_named("notifier", move || run(&receiver))?;
        Ok(Notifier { snapshots: Some(snapshots), thread: Some(thread) })
    }

    /// What the window calls with each change; it never blocks.
    pub fn reporter(&self) -> impl FnMut(Snapshot) + Send + 'static {
        let snapshots = self.snapshots.clone();
        move |snapshot| {
            // The notifier is gone only once the inbox ends; nothing is left to show then.
            if let Some(snapshots) = &snapshots {
                let _ = snapshots.send(Input::Snapshot(snapshot));
            }
        }
    }

    /// What the inbox's socket calls with a terminal's notice; it never blocks.
    pub fn noticer(&self) -> impl Fn(TerminalNotice) + Send + Sync + 'static {
        let snapshots = self.snapshots.clone();
        move |notice| {
            if let Some(snapshots) = &snapshots {
                let _ = snapshots.send(Input::Notice(notice));
            }
        }
    }

    /// Ends the thread (what was shown stays in the platform's centre).
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        drop(self.snapshots.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        self.end();
    }
}

/// The thread: decides with [`Notices`], shows what is new, until every reporter is gone.
fn run(inputs: &Receiver<Input>) {
    let mut notices = Notices::default();
    let mut terminals = Terminals::default();
    let mut window = Snapshot::default();
    let mut said_why = false;
    for input in inputs {
        match input {
            Input::Snapshot(snapshot) => {
                terminals.settle(&snapshot.waiting);
                window = snapshot;
            }
            Input::Notice(notice) => {
                if !terminals.arrive(&notice, RequestId::next(), &window.waiting) {
                    continue;
                }
            }
        }
        let waiting = terminals.beside(&window.waiting);
        match notices.update(&waiting, window.focused, window.hidden) {
            Some(NoticeCommand::Show(notification)) => {
                if let Err(error) = show(&notification)
                    && !std::mem::replace(&mut said_why, true)
                {
                    log::warn!("no desktop notifications ({error})");
                }
            }
            Some(NoticeCommand::Close) | None => {}
        }
        // Nothing shown can be replaced: only the next arrival shows a notification, and the
        // terminals it named are done with.
        notices.dismissed();
        terminals.clear();
    }
}

/// Raises `notification` once, for a process that is not the inbox (`askpane hook` given a
/// terminal's notice when no inbox runs).
pub fn notify_once(notification: &Notification) -> Result<(), notify_rust::error::Error> {
    show(notification)
}

/// Shows one notification, never taking the keyboard.
fn show(notification: &Notification) -> Result<(), notify_rust::error::Error> {
    let mut shown = notify_rust::Notification::new();
    shown.appname("askpane").summary(&notification.summary).body(&notification.body);
    // The window is hidden with questions waiting: the toast stays until dismissed.
    if notification.persistent {
        shown.timeout(notify_rust::Timeout::Never);
    }
    // macOS sends on the handle's drop; Windows has shown it already.
    drop(shown.show()?);
    Ok(())
}
