//! Whether the agent that started a thin client (`ask`, `hook`, `codex-hook`) is still there to
//! read its reply (issue 24): its end of our stdout, and our parent process.
//!
//! A client waiting on the inbox for hours would otherwise outlive a killed agent, and the
//! person's answer to the question it left open would be recorded and then lost. Two signs that
//! nobody will read the reply, each one cheap, non-blocking system call, checked on the client's
//! waiting tick:
//! - stdout hung up: `poll` reports `POLLERR` on a pipe whose reader closed (Linux; `POLLHUP`
//!   elsewhere) and `POLLHUP` on a socket whose peer closed (Node, hence Claude Code, gives its
//!   children socket pairs for their stdio). A file or a terminal that is still there never does.
//! - the parent changed: a process whose parent dies is handed to init or a subreaper, so
//!   `getppid` differs from the parent seen at the start. (Comparing with 1 would miss a
//!   subreaper, and an agent started by init itself.)
//!
//! On Windows neither is watched: the caller is never reported gone.

/// Why the caller is taken to be gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallerGone {
    /// Whoever read our standard output closed their end.
    StdoutClosed,
    /// The process that started us ended.
    ParentEnded,
}

impl CallerGone {
    /// What happened, for stderr.
    pub fn describe(self) -> &'static str {
        match self {
            CallerGone::StdoutClosed => "its reader closed askpane's standard output",
            CallerGone::ParentEnded => "the process that started askpane (its parent) ended",
        }
    }
}

/// The caller as first seen; [`Caller::gone`] compares with it.
#[derive(Debug)]
pub struct Caller {
    #[cfg(unix)]
    parent: Option<rustix::process::Pid>,
}

impl Caller {
    /// Remembers the parent process now: call early, before waiting.
    pub fn now() -> Caller {
        Caller {
            #[cfg(unix)]
            parent: rustix::process::getppid(),
        }
    }

    /// `Some` once the caller is gone; never blocks.
    #[cfg(unix)]
    pub fn gone(&self) -> Option<CallerGone> {
        if stdout_hung_up() {
            return Some(CallerGone::StdoutClosed);
        }
        (rustix::process::getppid() != self.parent).then_some(CallerGone::ParentEnded)
    }

    /// Not watched here (see the module's note).
    #[cfg(not(unix))]
    pub fn gone(&self) -> Option<CallerGone> {
        None
    }
}

/// True when our stdout reports a hang-up or an error: nobody reads it any more.
#[cfg(unix)]
#[allow(
    clippy::disallowed_methods,
    reason = "stdout is only polled for a hang-up here, never written"
)]
fn stdout_hung_up() -> bool {
    hung_up(&std::io::stdout())
}

/// True when `fd` reports a hang-up or an error. An fd that is not open (`POLLNVAL`) is not a
/// reader that left, and a failing `poll` says nothing.
#[cfg(unix)]
fn hung_up(fd: &impl std::os::fd::AsFd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    // No events asked for: `POLLERR` and `POLLHUP` are always reported.
    let mut fds = [PollFd::new(fd, PollFlags::empty())];
    let now = Timespec { tv_sec: 0, tv_nsec: 0 };
    match poll(&mut fds, Some(&now)) {
        Ok(0) | Err(_) => false,
        Ok(_) => {
            fds.first().is_some_and(|fd| fd.revents().intersects(PollFlags::ERR | PollFlags::HUP))
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_hangs_up_once_its_reader_closes() {
        let (reader, writer) = rustix::pipe::pipe().expect("a pipe");
        assert!(!hung_up(&writer));
        drop(reader);
        assert!(hung_up(&writer));
    }

    #[test]
    fn a_socket_hangs_up_once_its_peer_closes() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        assert!(!hung_up(&theirs));
        // Only the peer's write side shut: it may still read, so it is still there.
        ours.shutdown(std::net::Shutdown::Write).expect("shut the peer's writing");
        assert!(!hung_up(&theirs));
        drop(ours);
        assert!(hung_up(&theirs));
    }

    #[test]
    fn a_file_never_hangs_up() {
        let file = std::fs::File::open("/dev/null").expect("/dev/null");
        assert!(!hung_up(&file));
    }
}
