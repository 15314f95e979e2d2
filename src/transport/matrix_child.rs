//! The Matrix bridge as the inbox's child (issue 31). When `askpane-matrix` is configured in the
//! state directory ([`setup`]; the files' contract is [`crate::protocol::matrix_setup`]), the
//! inbox starts `askpane-matrix run` as it starts, starts it again with backoff when it ends on
//! its own ([`Restarts`]), and stops it (SIGTERM, a bounded wait, then SIGKILL) when the inbox
//! ends. One named thread (`matrix-bridge`) watches it. The inbox's `exec` into its lean or full
//! image (issue 14) keeps the process, so the bridge stays its child: it is handed on by pid
//! ([`HANDED_ON`]) and the next image watches it. An inbox killed outright cannot stop it: the bridge watches its parent
//! (`run --inbox-pid`) and ends by itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use rustix::process::{Pid, Signal, WaitOptions, kill_process, waitpid};

use crate::protocol::matrix_setup::{self as matrix, EXIT_ANOTHER_RUNS, Setup};
use crate::transport::backoff::Backoff;

/// The environment variable that hands the running bridge's pid to the inbox's next image.
pub const HANDED_ON: &str = "ASKPANE_MATRIX_BRIDGE_PID";
/// The environment variable naming the bridge's program in place of the one found (tests).
pub const BINARY_VARIABLE: &str = "ASKPANE_MATRIX_BIN";
/// The bridge's program name, looked for beside askpane's, then on `PATH`.
pub const BINARY: &str = "askpane-matrix";

/// How often the thread looks whether the bridge has ended.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// How long a stopped bridge may take to end after SIGTERM before it is killed.
const STOP_LIMIT: Duration = Duration::from_secs(5);

/// When to start the bridge again after it ended on its own: after the wait the shared
/// [`Backoff`] gives (1 s doubling to 30 s); a bridge that keeps failing soon after it starts
/// (a revoked token, a room it left) is not started for ever.
#[derive(Debug, Default)]
pub struct Restarts {
    backoff: Backoff,
    /// Runs in a row that ended within [`Restarts::QUICK`] of their start.
    fast_failures: u32,
}

/// What [`Restarts::after_exit`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Start it again after this wait.
    Restart(Duration),
    /// Too many quick failures in a row: not again while this inbox runs.
    GiveUp,
}

impl Restarts {
    /// A run shorter than this is a quick failure; a longer one held, and starts the backoff
    /// and the count over.
    pub const QUICK: Duration = Duration::from_secs(60);
    /// Quick failures in a row after which the bridge is not started again.
    pub const LIMIT: u32 = 5;

    /// The bridge ended after running `ran_for`: when to start it again, if at all.
    pub fn after_exit(&mut self, ran_for: Duration) -> Next {
        if ran_for >= Self::QUICK {
            self.fast_failures = 0;
            self.backoff.held();
        }
        self.fast_failures = self.fast_failures.saturating_add(1);
        if self.fast_failures >= Self::LIMIT {
            return Next::GiveUp;
        }
        Next::Restart(self.backoff.failed())
    }

    /// The quick failures so far.
    pub fn fast_failures(&self) -> u32 {
        self.fast_failures
    }
}

/// What the inbox tells the watching thread.
enum Order {
    /// The inbox ends: stop the bridge.
    Stop,
    /// The inbox becomes another image: leave the bridge running and say its pid.
    HandOn,
}

/// The running bridge's watcher.
pub struct MatrixChild {
    orders: Sender<Order>,
    thread: Option<JoinHandle<Option<u32>>>,
}

impl MatrixChild {
    /// Starts (or takes over, when a previous image of this process handed one on) the bridge
    /// when it is configured in askpane's state directory `state_dir`; `None`, saying nothing,
    /// when it is not. Configured but not startable: one line says why.
    pub fn start(state_dir: &Path) -> Option<MatrixChild> {
        let adopted = handed_on();
        match setup(state_dir) {
            Setup::Configured => {}
            Setup::NotConfigured | Setup::Disabled => {
                // `disable` or `logout` since the last image: the one it started is stopped.
                if let Some(pid) = adopted {
                    stop_child(pid);
                }
                return None;
            }
            Setup::Broken(why) => {
                log::warn!("the Matrix bridge is not started: {why}");
                if let Some(pid) = adopted {
                    stop_child(pid);
                }
                return None;
            }
        }
        let program = match adopted {
            Some(_) => find_binary().unwrap_or_else(|| PathBuf::from(BINARY)),
            None => match find_binary() {
                Some(program) => program,
                None => {
                    log::warn!(
                        "the Matrix bridge is configured ({}) but {BINARY} was found neither \
                         beside askpane nor on PATH (nor as {BINARY_VARIABLE}): build it \
                         (`cargo build -p askpane-matrix`), or keep it from starting with \
                         `askpane-matrix disable`",
                        matrix::dir(state_dir).display()
                    );
                    return None;
                }
            },
        };
        let (orders, heard) = crossbeam_channel::unbounded();
        let state_dir = state_dir.to_owned();
        let thread = crate::transport::spawn_named("matrix-bridge", move || {
            watch(&program, &state_dir, adopted, &heard)
        })
        .map_err(|error| log::warn!("the Matrix bridge is not started: no thread ({error})"))
        .ok()?;
        Some(MatrixChild { orders, thread: Some(thread) })
    }

    /// Stops the bridge (SIGTERM; SIGKILL after a bounded wait) and joins the thread.
    pub fn stop(mut self) {
        let _ = self.orders.send(Order::Stop);
        self.join();
    }

    /// Joins the thread, leaving the bridge running: its pid, for the next image
    /// ([`HANDED_ON`]); `None` when none runs.
    pub fn hand_on(mut self) -> Option<u32> {
        let _ = self.orders.send(Order::HandOn);
        self.join()
    }

    fn join(&mut self) -> Option<u32> {
        self.thread.take().and_then(|thread| thread.join().ok()).flatten()
    }
}

impl Drop for MatrixChild {
    /// Dropped without [`MatrixChild::hand_on`]: the bridge is stopped.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.orders.send(Order::Stop);
            self.join();
        }
    }
}

/// The bridge's setup in askpane's state directory `state_dir`, from its files.
pub fn setup(state_dir: &Path) -> Setup {
    let dir = matrix::dir(state_dir);
    let session = dir.join(matrix::SESSION_FILE).is_file();
    let file = dir.join(matrix::ROOM_FILE);
    match std::fs::read(&file) {
        Ok(room) => match matrix::setup_of(session, Some(&room)) {
            Setup::Broken(why) => Setup::Broken(format!("{}: {why}", file.display())),
            setup => setup,
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            matrix::setup_of(session, None)
        }
        Err(error) => Setup::Broken(format!("cannot read {}: {error}", file.display())),
    }
}

/// The bridge a previous image handed on, if it is still this process's running child.
fn handed_on() -> Option<Pid> {
    let pid = std::env::var(HANDED_ON).ok()?.trim().parse::<i32>().ok()?;
    let pid = Pid::from_raw(pid)?;
    // Ours and running: no status yet. Not ours (a stale variable): ECHILD.
    matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None)).then_some(pid)
}

/// Whether an `askpane-matrix run` runs for askpane's state directory `state_dir`: the pid its
/// run lock's file holds is a running `askpane-matrix`. Only looks (taking the lock, even
/// shared, could make a bridge starting that moment think another runs).
#[cfg(target_os = "linux")]
pub fn running(state_dir: &Path) -> bool {
    let file = matrix::dir(state_dir).join(matrix::RUN_LOCK_FILE);
    let Some(pid) =
        std::fs::read_to_string(file).ok().and_then(|text| text.trim().parse::<u32>().ok())
    else {
        return false;
    };
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|command| {
        command
            .split(|byte| *byte == 0)
            .next()
            .is_some_and(|program| program.ends_with(BINARY.as_bytes()))
    })
}

/// `ASKPANE_MATRIX_BIN`, else `askpane-matrix` beside askpane's program, else on `PATH`.
pub fn find_binary() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os(BINARY_VARIABLE) {
        return Some(PathBuf::from(named)).filter(|path| path.is_file());
    }
    let beside = std::env::current_exe().ok().map(|askpane| askpane.with_file_name(BINARY));
    if let Some(beside) = beside.filter(|path| path.is_file()) {
        return Some(beside);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(BINARY)).find(|path| path.is_file())
}

/// The watching thread: keeps the bridge running until told otherwise.
fn watch(
    program: &Path,
    state_dir: &Path,
    adopted: Option<Pid>,
    orders: &Receiver<Order>,
) -> Option<u32> {
    let mut restarts = Restarts::default();
    // The running bridge and when it started; else when to start the next (none: given up).
    let mut running = adopted.map(|pid| (pid, Instant::now()));
    let mut next_start = None;
    if running.is_none() {
        running = start_child(program, state_dir);
        if running.is_none() {
            next_start = restart_after(&mut restarts, Duration::ZERO);
        }
    }
    loop {
        match orders.recv_timeout(WATCH_EVERY) {
            Ok(Order::HandOn) => {
                return running.and_then(|(pid, _)| u32::try_from(pid.as_raw_nonzero().get()).ok());
            }
            Ok(Order::Stop) | Err(RecvTimeoutError::Disconnected) => {
                if let Some((pid, _)) = running {
                    stop_child(pid);
                }
                return None;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some((pid, since)) = running {
            let status = match waitpid(Some(pid), WaitOptions::NOHANG) {
                Ok(None) => continue,
                Ok(Some((_, status))) => Some(status),
                // Reaped elsewhere or not ours: ended, how unknown.
                Err(_) => None,
            };
            running = None;
            let ran_for = since.elapsed();
            let code = status.and_then(|status| status.exit_status());
            if code == Some(i32::from(EXIT_ANOTHER_RUNS)) {
                log::warn!(
                    "the Matrix bridge was not started: another `{BINARY} run` already bridges \
                     this state directory (stop it to let the inbox run its own)"
                );
                continue;
            }
            let how = match (code, status.and_then(|status| status.terminating_signal())) {
                (Some(code), _) => format!("exit status {code}"),
                (None, Some(signal)) => format!("signal {signal}"),
                (None, None) => "unknown status".to_owned(),
            };
            log::warn!("the Matrix bridge ended ({how}) after {} s", ran_for.as_secs());
            next_start = restart_after(&mut restarts, ran_for);
        } else if let Some(at) = next_start
            && Instant::now() >= at
        {
            next_start = None;
            running = start_child(program, state_dir);
            if running.is_none() {
                next_start = restart_after(&mut restarts, Duration::ZERO);
            }
        }
    }
}

/// When to start again after a run of `ran_for`, saying so; `None` after giving up.
fn restart_after(restarts: &mut Restarts, ran_for: Duration) -> Option<Instant> {
    match restarts.after_exit(ran_for) {
        Next::Restart(wait) => {
            log::info!("starting the Matrix bridge again in {} s", wait.as_secs());
            Some(Instant::now() + wait)
        }
        Next::GiveUp => {
            log::warn!(
                "the Matrix bridge failed {} times in a row within {} s of starting; it is not \
                 started again until the inbox restarts (run `{BINARY} run` to see why)",
                restarts.fast_failures(),
                Restarts::QUICK.as_secs()
            );
            None
        }
    }
}

/// Starts `askpane-matrix run` for this inbox; its pid and start, or `None` (said) when it
/// cannot be started.
fn start_child(program: &Path, state_dir: &Path) -> Option<(Pid, Instant)> {
    let mut command = Command::new(program);
    command
        .args(["run", "--inbox-pid", &std::process::id().to_string()])
        .env("ASKPANE_STATE_DIR", state_dir)
        .env_remove(HANDED_ON)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Its lines (`askpane-matrix: …`) go where the inbox's go.
        .stderr(Stdio::inherit());
    match command.spawn() {
        Ok(child) => {
            let pid = i32::try_from(child.id()).ok().and_then(Pid::from_raw)?;
            log::info!("started the Matrix bridge ({}), pid {pid}", program.display());
            // The child is watched by pid (waitpid), which also works in the next image.
            drop(child);
            Some((pid, Instant::now()))
        }
        Err(error) => {
            log::warn!("cannot start the Matrix bridge ({}): {error}", program.display());
            None
        }
    }
}

/// SIGTERM, a bounded wait, then SIGKILL; reaped either way.
fn stop_child(pid: Pid) {
    if kill_process(pid, Signal::TERM).is_err() {
        let _ = waitpid(Some(pid), WaitOptions::NOHANG);
        return;
    }
    let deadline = Instant::now() + STOP_LIMIT;
    while Instant::now() < deadline {
        match waitpid(Some(pid), WaitOptions::NOHANG) {
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            _ => return,
        }
    }
    log::warn!(
        "the Matrix bridge (pid {pid}) did not end on SIGTERM within {STOP_LIMIT:?}; killed"
    );
    let _ = kill_process(pid, Signal::KILL);
    let _ = waitpid(Some(pid), WaitOptions::empty());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_failures_back_off_doubling_then_give_up() {
        let mut restarts = Restarts::default();
        let quick = Duration::from_secs(2);
        assert_eq!(restarts.after_exit(quick), Next::Restart(Duration::from_secs(1)));
        assert_eq!(restarts.after_exit(quick), Next::Restart(Duration::from_secs(2)));
        assert_eq!(restarts.after_exit(quick), Next::Restart(Duration::from_secs(4)));
        assert_eq!(restarts.after_exit(quick), Next::Restart(Duration::from_secs(8)));
        assert_eq!(restarts.after_exit(quick), Next::GiveUp);
        assert_eq!(restarts.fast_failures(), Restarts::LIMIT);
    }

    #[test]
    fn a_long_run_forgets_earlier_failures() {
        let mut restarts = Restarts::default();
        for _ in 0..Restarts::LIMIT - 1 {
            assert!(matches!(restarts.after_exit(Duration::ZERO), Next::Restart(_)));
        }
        assert_eq!(restarts.after_exit(Restarts::QUICK), Next::Restart(Backoff::FIRST));
        assert_eq!(restarts.fast_failures(), 1);
    }
}
