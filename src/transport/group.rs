//! An agent's process in a process group of its own: stopped as a whole, never left behind.
//!
//! `askpane claude` starts Claude Code through [`GroupChild::spawn`]. The CLI and everything it
//! starts (shells, MCP servers, a stray `sleep`) share one process group, so askpane can stop all
//! of it: first by closing the CLI's stdin, then SIGTERM to the group, then SIGKILL after the
//! grace period. A named thread (`agent-exit`) waits for the CLI to exit and then sweeps its group
//! the same way, so a grandchild neither outlives askpane nor keeps askpane's readers waiting on
//! a pipe it inherited: once the group is gone, [`GroupReader`] reads what is left and ends.
//!
//! Unix only in full. Elsewhere the child is started normally, killed alone (`Child::kill`), and
//! the readers read until the pipe closes: the path to follow there is a job object on Windows.

use std::io::{self, Read};
#[cfg(not(unix))]
use std::process::Child;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::IoThreads;

/// How often the group is checked for leftovers while they are given time to end.
const POLL: Duration = Duration::from_millis(20);

/// A running child in its own process group; cheap to clone (every clone is the same child).
#[derive(Clone, Debug)]
pub struct GroupChild {
    pid: u32,
    exit: Arc<ExitSlot>,
    /// The child itself, for `Child::kill` where there are no process groups.
    #[cfg(not(unix))]
    child: Arc<Mutex<Child>>,
}

/// The child's standard streams; stdout and stderr end once the group is gone.
pub struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: GroupReader<ChildStdout>,
    pub stderr: GroupReader<ChildStderr>,
}

/// The exit status, once the `agent-exit` thread has it.
#[derive(Debug, Default)]
struct ExitSlot {
    status: Mutex<Option<ExitStatus>>,
    changed: Condvar,
}

impl ExitSlot {
    fn publish(&self, status: ExitStatus) {
        if let Ok(mut slot) = self.status.lock() {
            *slot = Some(status);
        }
        self.changed.notify_all();
    }

    /// Waits up to `within` for the status; `None` if the child still runs.
    fn wait(&self, within: Duration) -> Option<ExitStatus> {
        // A deadline too far to represent is no deadline: wait until the status comes.
        let deadline = Instant::now().checked_add(within);
        let mut slot = self.status.lock().ok()?;
        loop {
            if let Some(status) = *slot {
                return Some(status);
            }
            let left = match deadline {
                Some(deadline) => deadline.checked_duration_since(Instant::now())?,
                None => Duration::from_secs(3600),
            };
            slot = self.changed.wait_timeout(slot, left).ok()?.0;
        }
    }
}

impl GroupChild {
    /// Starts `command` (its stdin, stdout and stderr must be piped) in a new process group, and
    /// the named `agent-exit` thread that waits for it. `grace` is how long leftovers of the
    /// group get after SIGTERM before SIGKILL, once the child has exited.
    pub fn spawn(
        command: &mut Command,
        grace: Duration,
        threads: &mut IoThreads,
    ) -> io::Result<(GroupChild, Pipes)> {
        // Before the child exists, so that a failure here leaves nothing running.
        let (gone, watch) = GoneSignal::new()?;
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(command, 0);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the child's standard streams were not captured"));
        };
        let pid = child.id();
        let exit = Arc::new(ExitSlot::default());
        let (stdout, stderr) = (GroupReader::new(stdout, &watch), GroupReader::new(stderr, &watch));
        let slot = Arc::clone(&exit);
        #[cfg(unix)]
        let started = threads.spawn("agent-exit", move || {
            let status = child.wait();
            if let Ok(status) = status {
                slot.publish(status);
            }
            // The child is gone; what it started in its group goes too: no orphans, and no
            // inherited pipe keeps askpane's readers waiting.
            sweep_group(pid, grace);
            drop(gone);
            status.map(drop)
        });
        #[cfg(unix)]
        if let Err(error) = started {
            // Nobody could wait for it: it must not run on unwatched.
            signal_group(pid, Stop::Now);
            return Err(error);
        }
        #[cfg(not(unix))]
        let child = {
            let child = Arc::new(Mutex::new(child));
            let shared = Arc::clone(&child);
            threads.spawn("agent-exit", move || {
                let _ = grace;
                loop {
                    let exited =
                        shared.lock().map_err(|_| io::Error::other("child lock"))?.try_wait()?;
                    if let Some(status) = exited {
                        slot.publish(status);
                        #[allow(
                            clippy::drop_non_drop,
                            reason = "empty here; on Unix dropping it tells the readers the \
                                      group is gone, and both paths keep that shape"
                        )]
                        drop(gone);
                        return Ok(());
                    }
                    std::thread::sleep(POLL);
                }
            })?;
            child
        };
        let group = GroupChild {
            pid,
            exit,
            #[cfg(not(unix))]
            child,
        };
        Ok((group, Pipes { stdin, stdout, stderr }))
    }

    /// The child's process id, which is also its process group's id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits up to `within` for the child to exit; its status, or `None` if it still runs.
    pub fn wait_timeout(&self, within: Duration) -> Option<ExitStatus> {
        self.exit.wait(within)
    }

    /// Stops the child: it gets `grace` to exit by itself (its stdin is closed by then), then its
    /// group gets SIGTERM and another `grace`, then SIGKILL. Returns the child's exit status.
    pub fn stop(&self, grace: Duration) -> io::Result<ExitStatus> {
        if let Some(status) = self.wait_timeout(grace) {
            return Ok(status);
        }
        self.signal(Stop::Politely);
        if let Some(status) = self.wait_timeout(grace) {
            return Ok(status);
        }
        self.signal(Stop::Now);
        // SIGKILL cannot be refused; the wait is bounded all the same.
        self.wait_timeout(grace.max(Duration::from_secs(1))).ok_or_else(|| {
            io::Error::other(format!("process {} did not end even after SIGKILL", self.pid))
        })
    }

    /// Stops the whole group at once (SIGKILL), without waiting.
    pub fn kill(&self) {
        self.signal(Stop::Now);
    }

    fn signal(&self, how: Stop) {
        #[cfg(unix)]
        signal_group(self.pid, how);
        #[cfg(not(unix))]
        if let Ok(mut child) = self.child.lock() {
            // No process groups here: only the child itself can be stopped, and only for good.
            let _ = how;
            let _ = child.kill();
        }
    }
}

/// How a group is asked to stop.
#[derive(Clone, Copy, Debug)]
enum Stop {
    /// SIGTERM: it may clean up.
    Politely,
    /// SIGKILL.
    Now,
}

/// Sends `how` to every process in the group `pid` leads. A group that is already empty is fine.
#[cfg(unix)]
fn signal_group(pid: u32, how: Stop) -> bool {
    use rustix::process::{Pid, Signal, kill_process_group};
    let Some(group) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return false };
    let signal = match how {
        Stop::Politely => Signal::TERM,
        Stop::Now => Signal::KILL,
    };
    kill_process_group(group, signal).is_ok()
}

/// After the leader has exited: SIGTERM to whatever is left of its group, up to `grace` for it to
/// end, then SIGKILL. Returns at once when nothing is left.
#[cfg(unix)]
fn sweep_group(pid: u32, grace: Duration) {
    use rustix::process::{Pid, test_kill_process_group};
    let Some(group) = i32::try_from(pid).ok().and_then(Pid::from_raw) else { return };
    if !signal_group(pid, Stop::Politely) {
        return; // Nobody left (ESRCH).
    }
    let deadline = Instant::now().checked_add(grace);
    while test_kill_process_group(group).is_ok() {
        if deadline.is_none_or(|deadline| Instant::now() >= deadline) {
            signal_group(pid, Stop::Now);
            return;
        }
        std::thread::sleep(POLL);
    }
}

/// Becomes "ready" once the child's group is gone: a pipe whose write end is dropped then.
struct GoneSignal {
    #[cfg(unix)]
    _write: std::os::fd::OwnedFd,
}

/// The read end of [`GoneSignal`], shared by the readers.
#[derive(Clone)]
struct GoneWatch {
    #[cfg(unix)]
    read: Arc<std::os::fd::OwnedFd>,
}

impl GoneSignal {
    fn new() -> io::Result<(GoneSignal, GoneWatch)> {
        #[cfg(unix)]
        {
            let (read, write) = rustix::pipe::pipe()?;
            Ok((GoneSignal { _write: write }, GoneWatch { read: Arc::new(read) }))
        }
        #[cfg(not(unix))]
        Ok((GoneSignal {}, GoneWatch {}))
    }
}

/// One of the child's output pipes. It reads as usual while the group lives; once the group is
/// gone it reads what the pipe still holds and then ends, even if a process that left the group
/// still holds the pipe open (it would otherwise never end).
pub struct GroupReader<R> {
    pipe: R,
    #[cfg_attr(
        not(unix),
        allow(dead_code, reason = "read only by the Unix reader, which polls it")
    )]
    gone: GoneWatch,
}

impl<R> GroupReader<R> {
    fn new(pipe: R, gone: &GoneWatch) -> Self {
        GroupReader { pipe, gone: gone.clone() }
    }
}

#[cfg(unix)]
impl<R: Read + std::os::fd::AsFd> Read for GroupReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use rustix::event::{PollFd, PollFlags, poll};
        loop {
            let mut fds = [
                PollFd::new(&self.pipe, PollFlags::IN),
                PollFd::new(&*self.gone.read, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(error) => return Err(error.into()),
            }
            // Data (or the pipe's own end) first: nothing the child wrote is lost.
            if !fds[0].revents().is_empty() {
                return self.pipe.read(buf);
            }
            if !fds[1].revents().is_empty() {
                return Ok(0);
            }
        }
    }
}

#[cfg(not(unix))]
impl<R: Read> Read for GroupReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.pipe.read(buf)
    }
}
