//! Termination signals turned into one message on the UI channel: the agent still gets its reply.
//!
//! A named thread (`signal-watch`) waits for SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGUSR1 with
//! signal-hook's iterator. The first one sends [`Control::Shutdown`] into the channel the adapters
//! use, so the window, the browser bridge and the headless host end every open request the way
//! closing the window does, with a message that names the signal, and then end themselves.
//! Later signals change nothing: the replies are already on their way, and a second Ctrl+C must
//! not cut them off. SIGPIPE is left as it is (Rust ignores it: a write to a closed pipe fails).
//!
//! On Windows the same thread waits for the console's control events (Ctrl+C, Ctrl+Break, the
//! console closing, logoff, shutdown) through the `ctrlc` crate, which tells them apart no
//! further: they arrive as [`StopSignal::Console`]. Windows ends a process soon after the
//! console closes whatever it does, so only Ctrl+C and Ctrl+Break are sure to get replies out.
//!
//! The channel is reached through a [`SignalRoute`], a guard that owns a sender while something
//! can still be answered; the watcher itself holds only a weak reference, so it never keeps the
//! channel open (the window and the bridge close once their adapters are done).

use std::io;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread::JoinHandle;

use crate::protocol::Outcome;

use super::{Control, Inbound, UiSender};

/// The signals askpane answers for; each ends the run with exit code 4 (see the README).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    Term,
    Int,
    Hup,
    Quit,
    Usr1,
    /// A Windows console control event: Ctrl+C, Ctrl+Break or the console closing.
    Console,
}

impl StopSignal {
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Term => "SIGTERM",
            StopSignal::Int => "SIGINT",
            StopSignal::Hup => "SIGHUP",
            StopSignal::Quit => "SIGQUIT",
            StopSignal::Usr1 => "SIGUSR1",
            StopSignal::Console => "Ctrl+C or the console closing",
        }
    }

    /// What every open request ends with: a decline that says askpane was stopped.
    pub fn outcome(self) -> Outcome {
        Outcome::askpane_stopped(self.name())
    }

    /// The signal whose [`StopSignal::outcome`] this is, if any (the inbox tells its clients'
    /// exit code from the outcome alone).
    pub fn from_outcome(outcome: &Outcome) -> Option<StopSignal> {
        let every = [
            StopSignal::Term,
            StopSignal::Int,
            StopSignal::Hup,
            StopSignal::Quit,
            StopSignal::Usr1,
            StopSignal::Console,
        ];
        every.into_iter().find(|signal| signal.outcome() == *outcome)
    }

    #[cfg(unix)]
    fn number(self) -> i32 {
        use signal_hook::consts::signal;
        match self {
            StopSignal::Term => signal::SIGTERM,
            StopSignal::Int => signal::SIGINT,
            StopSignal::Hup => signal::SIGHUP,
            StopSignal::Quit => signal::SIGQUIT,
            StopSignal::Usr1 => signal::SIGUSR1,
            // Not a Unix signal: never registered there, and matches no number.
            StopSignal::Console => -1,
        }
    }
}

#[cfg(unix)]
const ALL: [StopSignal; 5] =
    [StopSignal::Term, StopSignal::Int, StopSignal::Hup, StopSignal::Quit, StopSignal::Usr1];

/// What the watcher and its owner share.
#[derive(Debug, Default)]
struct Shared {
    /// Where a signal goes: the live [`SignalRoute`]'s sender, if any.
    route: Mutex<Weak<UiSender>>,
    /// The first signal, once one came.
    caught: OnceLock<StopSignal>,
}

/// Tells the UI channel, if a route is open. Called with the route locked, by the watcher when
/// the first signal comes and by [`SignalWatch::route`] when one came before: the lock makes
/// exactly one of them deliver it.
fn deliver(route: &Weak<UiSender>, signal: StopSignal) {
    if let Some(to_ui) = route.upgrade() {
        to_ui.send(Inbound::Control(Control::Shutdown { outcome: signal.outcome() }));
    }
}

/// The first signal is delivered (if a route is open); later ones are only said.
fn caught(shared: &Shared, signal: StopSignal) {
    let Ok(route) = shared.route.lock() else { return };
    if shared.caught.set(signal).is_ok() {
        log::info!("stopped by {}; telling the agent", signal.name());
        deliver(&route, signal);
    } else {
        log::info!("{} while stopping; the replies are on their way", signal.name());
    }
}

/// The watches alive now, each told of every console event (as signal-hook tells every
/// iterator of a signal on Unix). An event with no watch alive ends the process, as it would
/// without askpane's handler; it is never kept for a later watch.
#[cfg(windows)]
static CONSOLE_WATCHES: Mutex<Vec<crossbeam_channel::Sender<()>>> = Mutex::new(Vec::new());

/// A new watch's channel of console control events. Windows (and ctrlc) take one handler per
/// process, installed on the first call; a process may start and stop several watches.
#[cfg(windows)]
fn console_events() -> io::Result<crossbeam_channel::Receiver<()>> {
    static HANDLER: OnceLock<Result<(), String>> = OnceLock::new();
    HANDLER
        .get_or_init(|| {
            ctrlc::try_set_handler(|| {
                let Ok(mut watches) = CONSOLE_WATCHES.lock() else { return };
                // A watch that ended dropped its receiver: it leaves the list here.
                watches.retain(|watch| watch.send(()).is_ok());
                if watches.is_empty() {
                    // Nothing to answer for: Ctrl+C does what it did before askpane caught it,
                    // with Windows' own exit code for it.
                    std::process::exit(windows_sys::Win32::Foundation::STATUS_CONTROL_C_EXIT);
                }
            })
            .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(io::Error::other)?;
    let (sender, receiver) = crossbeam_channel::unbounded();
    CONSOLE_WATCHES
        .lock()
        .map_err(|_| io::Error::other("the list of console watches is poisoned"))?
        .push(sender);
    Ok(receiver)
}

/// The running watcher. Stopping it (or dropping it) ends and joins its thread.
#[derive(Debug)]
pub struct SignalWatch {
    shared: Arc<Shared>,
    #[cfg(unix)]
    handle: signal_hook::iterator::Handle,
    /// Dropped to end the watcher's thread.
    #[cfg(windows)]
    stop: Option<crossbeam_channel::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl SignalWatch {
    /// Starts catching the signals. From now on they no longer end askpane at once.
    #[cfg(unix)]
    pub fn start() -> io::Result<SignalWatch> {
        let mut signals = signal_hook::iterator::Signals::new(ALL.map(StopSignal::number))?;
        let handle = signals.handle();
        let shared = Arc::new(Shared::default());
        let watched = Arc::clone(&shared);
        let thread = crate::transport::spawn_named("signal-watch", move || {
            for number in signals.forever() {
                let Some(signal) = ALL.into_iter().find(|signal| signal.number() == number) else {
                    continue;
                };
                caught(&watched, signal);
            }
        })?;
        Ok(SignalWatch { shared, handle, thread: Some(thread) })
    }

    /// Starts catching the console's control events. From now on Ctrl+C no longer ends
    /// askpane at once.
    #[cfg(windows)]
    pub fn start() -> io::Result<SignalWatch> {
        let events = console_events()?;
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let shared = Arc::new(Shared::default());
        let watched = Arc::clone(&shared);
        let thread = crate::transport::spawn_named("signal-watch", move || {
            loop {
                crossbeam_channel::select! {
                    recv(events) -> event => if event.is_err() { return },
                    recv(stopped) -> _ => return,
                }
                caught(&watched, StopSignal::Console);
            }
        })?;
        Ok(SignalWatch { shared, stop: Some(stop), thread: Some(thread) })
    }

    /// Elsewhere nothing is caught: the platform's own handling stays.
    #[cfg(not(any(unix, windows)))]
    pub fn start() -> io::Result<SignalWatch> {
        Ok(SignalWatch { shared: Arc::new(Shared::default()), thread: None })
    }

    /// Routes a signal into `to_ui` while the returned guard lives. If one already came, it is
    /// delivered at once.
    pub fn route(&self, to_ui: UiSender) -> SignalRoute {
        let sender = Arc::new(to_ui);
        if let Ok(mut route) = self.shared.route.lock() {
            *route = Arc::downgrade(&sender);
            if let Some(signal) = self.caught() {
                deliver(&route, signal);
            }
        }
        SignalRoute { sender: Some(sender) }
    }

    /// The first signal caught, if any.
    pub fn caught(&self) -> Option<StopSignal> {
        self.shared.caught.get().copied()
    }

    fn stop_thread(&mut self) {
        #[cfg(unix)]
        self.handle.close();
        #[cfg(windows)]
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// An open route from the signal watcher to the UI channel. Dropping it drops its sender (so the
/// channel can close) and wakes the UI to notice.
#[derive(Debug)]
pub struct SignalRoute {
    sender: Option<Arc<UiSender>>,
}

impl Drop for SignalRoute {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            let waker = sender.waker.clone();
            drop(sender);
            waker.wake();
        }
    }
}
