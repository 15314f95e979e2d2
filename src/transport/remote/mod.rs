//! Issue 27: `askpane remote HOST`, the link that lets agents on an SSH host ask the inbox on
//! this desk. The person's own `ssh` forwards the remote's inbox socket path back to a socket of
//! the link's (`links/HOST.sock` in the user's 0700 askpane folder); each connection arriving
//! there is relayed to the local inbox, tagged with the host (`relay.rs`). The link keeps ssh
//! running: when it ends it says so in one line, tries again after a backoff (1 s doubling to
//! 30 s), and says so again once the forward holds. Its state is in `links/HOST.state` for
//! `askpane remote --list`.

mod http;
mod relay;
mod setup;
mod ssh;
mod token;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, select};
use serde::{Deserialize, Serialize};

pub use http::{HttpHooks, TOKEN_HEADER};
pub use relay::StartInbox;
pub use ssh::Ssh;
pub use token::{HostToken, TokenMade, host_token};

use crate::protocol::link::valid_host;
// When to try again after the link went down: the shared backoff, started over once the link
// held (its forward came up).
use crate::transport::backoff::Backoff;
use crate::transport::inbox::Place;
use relay::LinkSocket;
use ssh::SshSaid;

/// How long ssh is given to end after SIGTERM before it is killed.
const SSH_END_WAIT: Duration = Duration::from_secs(3);

/// Where a link stands, as `--list` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// Asking the remote and starting ssh.
    Connecting,
    /// The forward holds: the remote's clients reach the inbox.
    Up,
    /// ssh ended; waiting to try again.
    Down,
}

impl LinkState {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Up => "up",
            LinkState::Down => "down",
        }
    }
}

/// A link's state file, `links/HOST.state` (JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    pub host: String,
    pub state: LinkState,
    /// The `askpane remote` process.
    pub pid: u32,
    /// Its ssh, while one runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_pid: Option<u32>,
    /// The socket path on the remote, once asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_socket: Option<String>,
    /// Since when it is in this state (seconds since 1970).
    pub since: u64,
    /// Why it is down, in ssh's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The folder of the links' sockets, locks and state files: `links/` in the user's private
/// askpane folder (made 0700).
pub fn links_dir() -> std::io::Result<PathBuf> {
    let dir = crate::transport::endpoint::private_dir()?.join("links");
    let mut make = std::fs::DirBuilder::new();
    make.recursive(true);
    std::os::unix::fs::DirBuilderExt::mode(&mut make, 0o700);
    make.create(&dir)?;
    Ok(dir)
}

/// A host's name as a file name: what [`valid_host`] admits, with `/` impossible already and the
/// characters a file name would rather not have replaced.
fn file_stem(host: &str) -> String {
    host.chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-@".contains(c) { c } else { '_' })
        .collect()
}

/// Every link's record (a process gone is shown as such by the caller), sorted by host.
pub fn list() -> std::io::Result<Vec<LinkRecord>> {
    let dir = links_dir()?;
    let mut records: Vec<LinkRecord> = std::fs::read_dir(&dir)?
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "state"))
        .filter_map(|entry| std::fs::read(entry.path()).ok())
        .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
        .collect();
    records.sort_by(|a, b| a.host.cmp(&b.host));
    Ok(records)
}

/// Whether process `pid` still runs (signal 0).
pub fn running(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    rustix::process::test_kill_process(pid).is_ok()
}

/// Why a link could not run.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error(transparent)]
    BadHost(#[from] crate::protocol::link::Refused),
    #[error("another `askpane remote {0}` runs already (see `askpane remote --list`)")]
    Running(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// One link, run until `stop` fires (a signal).
pub struct Link {
    ssh: Ssh,
    dir: PathBuf,
    stem: String,
    http: Option<HttpForward>,
    /// This link's own id (hex), naming on the host the session its ssh left there
    /// (`ssh.rs`), so that its next ssh ends that one and never another link's.
    id: String,
    _lock: std::fs::File,
}

/// `--http`: the endpoint for Claude Code's HTTP hooks, and the remote's loopback port ssh
/// forwards to it.
pub struct HttpForward {
    pub hooks: HttpHooks,
    pub remote_port: u16,
}

impl Link {
    /// Takes the host's lock (one link per host) in the links folder.
    pub fn new(ssh: Ssh) -> Result<Link, LinkError> {
        valid_host(&ssh.host)?;
        let dir = links_dir()?;
        let stem = file_stem(&ssh.host);
        let lock = crate::transport::endpoint::open_lock_file(&dir.join(format!("{stem}.lock")))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(LinkError::Running(ssh.host.clone()));
            }
            Err(std::fs::TryLockError::Error(error)) => return Err(error.into()),
        }
        let id = token::new_token()?.chars().take(16).collect();
        Ok(Link { ssh, dir, stem, http: None, id, _lock: lock })
    }

    /// The `XDG_RUNTIME_DIR` the `--http` endpoint gives each `askpane hook` it runs: its
    /// `askpane/inbox.sock` is a second socket of this link's, so the hook's request is stamped
    /// with the host as a relayed client's is.
    pub fn http_runtime_dir(&self) -> PathBuf {
        self.dir.join(format!("{}.http", self.stem))
    }

    /// Also forwards the remote's `127.0.0.1:remote_port` to `forward`'s endpoint.
    pub fn with_http(mut self, forward: HttpForward) -> Link {
        self.http = Some(forward);
        self
    }

    fn socket(&self) -> PathBuf {
        self.dir.join(format!("{}.sock", self.stem))
    }

    fn state_file(&self) -> PathBuf {
        self.dir.join(format!("{}.state", self.stem))
    }

    /// Serves the link's socket and keeps ssh's forward up until `stop` (closed, or sent to); then ends ssh (by its
    /// pid), the relayed connections and the socket, and removes the state file.
    pub fn run(
        self,
        place: Place,
        start: StartInbox,
        stop: &Receiver<()>,
    ) -> Result<(), LinkError> {
        let host = self.ssh.host.clone();
        let http_socket = match &self.http {
            Some(_) => {
                let folder = self.http_runtime_dir().join("askpane");
                let mut make = std::fs::DirBuilder::new();
                make.recursive(true);
                std::os::unix::fs::DirBuilderExt::mode(&mut make, 0o700);
                make.create(&folder)?;
                let path = folder.join("inbox.sock");
                let _ = std::fs::remove_file(&path);
                let socket = LinkSocket::serve(&path, host.clone(), place.clone(), start.clone())?;
                Some(socket)
            }
            None => None,
        };
        let socket = LinkSocket::serve(&self.socket(), host.clone(), place, start)?;
        let mut backoff = Backoff::default();
        // Whether any ssh of this link held: its next success is "back", not "linked".
        let mut ever_up = false;
        // Why the last try failed before its forward held.
        let mut last_failure: Option<String> = None;
        loop {
            self.record(LinkState::Connecting, None, None, None);
            let (ended, held) = self.connect_once(stop, ever_up, &mut backoff);
            ever_up |= held;
            let why = match ended {
                Ended::Stopped => break,
                Ended::Failed(why) => why,
            };
            let wait = backoff.failed();
            let secs = wait.as_secs();
            match held {
                true => {
                    log::warn!("the link to {host} went down ({why}); trying again in {secs} s")
                }
                // The same failure again (a host that stays unreachable): said once, not every
                // 30 s; `--list` shows it meanwhile.
                false if last_failure.as_deref() == Some(why.as_str()) => {
                    log::debug!("cannot link {host} ({why}); trying again in {secs} s")
                }
                false => log::warn!("cannot link {host} ({why}); trying again in {secs} s"),
            }
            last_failure = (!held).then(|| why.clone());
            self.record(LinkState::Down, None, None, Some(why));
            if stop.recv_timeout(wait) != Err(crossbeam_channel::RecvTimeoutError::Timeout) {
                break;
            }
        }
        socket.stop();
        if let Some(http_socket) = http_socket {
            http_socket.stop();
        }
        let _ = std::fs::remove_file(self.state_file());
        log::info!("the link to {host} is closed");
        Ok(())
    }

    /// One ssh: asks the remote for its path, forwards it, and waits for ssh's end or `stop`.
    /// Says whether its forward held.
    fn connect_once(
        &self,
        stop: &Receiver<()>,
        ever_up: bool,
        backoff: &mut Backoff,
    ) -> (Ended, bool) {
        let host = &self.ssh.host;
        let remote_socket = match self.ssh.remote_socket(stop, &self.id) {
            Ok(path) => path,
            Err(_) if stopped(stop) => return (Ended::Stopped, false),
            Err(why) => return (Ended::Failed(why), false),
        };
        let tcp = self.http.as_ref().map(|http| (http.remote_port, http.hooks.port()));
        let mut child = match self.ssh.forward(&remote_socket, &self.socket(), tcp, &self.id) {
            Ok(child) => child,
            Err(error) => return (Ended::Failed(format!("cannot run ssh: {error}")), false),
        };
        let ssh_pid = child.id();
        let (said_sender, said) = crossbeam_channel::unbounded();
        let stop_reading = Arc::new(AtomicBool::new(false));
        let reader = (child.stderr.take())
            .map(|stderr| ssh::read_stderr(stderr, said_sender, Arc::clone(&stop_reading)));
        let (exit_sender, exited) = crossbeam_channel::bounded(1);
        let waiter = crate::transport::spawn_named("remote-ssh", move || {
            let _ = exit_sender.send(child.wait());
        });
        let Ok(waiter) = waiter else {
            kill(ssh_pid);
            return (Ended::Failed("cannot start a thread for ssh".to_owned()), false);
        };
        self.record(LinkState::Connecting, Some(ssh_pid), Some(&remote_socket), None);
        let mut last_line: Option<String> = None;
        // ssh says it more than once (each forward, then all of them).
        let mut up = false;
        let ended = loop {
            select! {
                recv(said) -> heard => match heard {
                    Ok(SshSaid::ForwardsUp) if up => {}
                    Ok(SshSaid::ForwardsUp) => {
                        up = true;
                        backoff.held();
                        match ever_up {
                            false => log::info!(
                                "linked {host}: its agents ask here ({remote_socket} there)"
                            ),
                            true => log::info!("the link to {host} is back"),
                        }
                        self.record(LinkState::Up, Some(ssh_pid), Some(&remote_socket), None);
                    }
                    Ok(SshSaid::Line(line)) => {
                        log::debug!("ssh {host}: {line}");
                        last_line = Some(line);
                    }
                    // Its stderr closed: ssh ends; its exit comes next.
                    Err(_) => {
                        let status = exited.recv().ok();
                        break Ended::Failed(describe(status, last_line.take()));
                    }
                },
                recv(exited) -> status => {
                    break Ended::Failed(describe(status.ok(), last_line.take()));
                }
                recv(stop) -> _ => {
                    end_ssh(ssh_pid, &exited);
                    break Ended::Stopped;
                }
            }
        };
        let _ = waiter.join();
        // ssh has ended; what it said is read (its end was heard after it): a process it left
        // holding its stderr must not hold the link.
        stop_reading.store(true, Ordering::SeqCst);
        if let Some(Ok(reader)) = reader {
            let _ = reader.join();
        }
        (ended, up)
    }

    fn record(
        &self,
        state: LinkState,
        ssh_pid: Option<u32>,
        remote_socket: Option<&str>,
        why: Option<String>,
    ) {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
        let record = LinkRecord {
            host: self.ssh.host.clone(),
            state,
            pid: std::process::id(),
            ssh_pid,
            remote_socket: remote_socket.map(str::to_owned),
            since,
            why,
        };
        if let Err(error) = write_private(&self.state_file(), &record) {
            log::debug!("cannot write the link's state: {error}");
        }
    }
}

/// Whether the link is to end: its stop channel is closed (every wait on it returns at once
/// from then on) or was sent to.
pub fn stopped(stop: &Receiver<()>) -> bool {
    !matches!(stop.try_recv(), Err(crossbeam_channel::TryRecvError::Empty))
}

/// How one ssh ended.
enum Ended {
    Stopped,
    Failed(String),
}

/// ssh's end in words: its status and the last line it said.
fn describe(status: Option<std::io::Result<ExitStatus>>, last: Option<String>) -> String {
    let status = match status {
        Some(Ok(status)) => format!("ssh {status}"),
        Some(Err(error)) => format!("ssh: {error}"),
        None => "ssh ended".to_owned(),
    };
    match last {
        Some(line) => format!("{status}: {line}"),
        None => status,
    }
}

/// Ends ssh by its pid: SIGTERM, then SIGKILL if it has not ended within [`SSH_END_WAIT`].
fn end_ssh(pid: u32, exited: &Receiver<std::io::Result<ExitStatus>>) {
    signal(pid, rustix::process::Signal::TERM);
    if exited.recv_timeout(SSH_END_WAIT).is_err() {
        kill(pid);
        let _ = exited.recv_timeout(SSH_END_WAIT);
    }
}

fn kill(pid: u32) {
    signal(pid, rustix::process::Signal::KILL);
}

fn signal(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Writes `record` to `path` (0600) through a file beside it, renamed over it.
fn write_private(path: &Path, record: &LinkRecord) -> std::io::Result<()> {
    use std::io::Write as _;
    let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    let partial = path.with_extension("state.partial");
    let mut open = std::fs::File::options();
    open.create(true).write(true).truncate(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let mut file = open.open(&partial)?;
    file.write_all(&bytes)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_to_thirty_seconds_and_starts_over_once_the_link_held() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..7).map(|_| backoff.failed().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        backoff.held();
        assert_eq!(backoff.failed(), Duration::from_secs(1));
    }

    #[test]
    fn a_host_s_file_name_keeps_no_path_or_shell_character() {
        assert_eq!(file_stem("me@devbox.example.org"), "me@devbox.example.org");
        assert_eq!(file_stem("[::1]"), "___1_");
    }
}
