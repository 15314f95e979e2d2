//! The person's own `ssh`, run twice per connection of a link (issue 27): once to ask the remote
//! where its inbox socket goes (a POSIX `sh` snippet: the remote needs no askpane for it), then
//! `ssh -R REMOTE_SOCKET:LINK_SOCKET HOST 'sh -c …'` (a session that notes itself for the next
//! ssh, [`RECORD_THE_SESSION`]) for as long as it holds. Their config, keys and
//! agent decide how it logs in; askpane never prompts for a password of its own.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use rustix::event::{PollFd, PollFlags, Timespec};

/// How long asking the remote for its socket's path may take (a login, one `sh`).
const ASK_WAIT: Duration = Duration::from_secs(30);

/// How often ssh is checked on while the path is asked for.
const ASK_POLL: Duration = Duration::from_millis(20);

/// The folder askpane itself would use on the remote for its socket
/// (`src/transport/endpoint/unix.rs`), as `$d`: the start of both snippets below. Run by the
/// remote's login shell as `sh -c '…'` (so a csh or fish login shell reads it too; hence no
/// single quote in any snippet).
const INBOX_FOLDER: &str = "d=${XDG_RUNTIME_DIR:-}; \
    if [ -n \"$d\" ] && [ -d \"$d\" ]; then d=$d/askpane; else d=/tmp/askpane-$(id -u); fi; ";

/// Asks the remote where the inbox socket goes: the folder made 0700, a stale socket in it
/// removed (sshd's `StreamLocalBindUnlink` is off by default, and a socket an ended link left
/// would make the next forward fail), and the session an earlier ssh of this same link left
/// there ended (`LINK` is the link's id). First it notes that this link is coming up
/// (`link-LINK.coming`, [`crate::transport::inbox::COMING_PREFIX`]; another link's such note
/// goes): from here until the forward holds the socket is stale or missing, and a client that
/// finds it so waits for the forward while the note is fresh rather than answering on the host.
/// Then the session: a link cut silently (a network gone) ends ssh on the desk within its
/// keep-alives, but sshd on the host keeps that session until its own
/// keep-alive, holding what waited through it (a hook, Claude Code's HTTP request) and the
/// `--http` port. It is ended only if it is still the process recorded (its pid and start
/// time), so a pid used again by another process is left alone. Notes of other links whose
/// session has ended (a link stopped on purpose leaves its note) are removed, nothing else.
const WHERE_IS_THE_INBOX: &str = "mkdir -p -m 0700 \"$d\" && chmod 0700 \"$d\" && \
    c=$d/link-LINK.coming && : > \"$c\" && for g in \"$d\"/link-*.coming; do \
    [ \"$g\" = \"$c\" ] || rm -f \"$g\"; done && \
    rm -f \"$d/inbox.sock\" && f=$d/link-LINK.session && \
    if [ -f \"$f\" ]; then read p s < \"$f\"; case \"$p\" in \"\"|*[!0-9]*) p=;; esac; \
    if [ -n \"$p\" ] && [ -n \"$s\" ] && \
    [ \"$(echo $(ps -o lstart= -p \"$p\" 2>/dev/null))\" = \"$s\" ]; then \
    kill \"$p\" 2>/dev/null; i=0; \
    while kill -0 \"$p\" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; fi; \
    rm -f \"$f\"; fi; for g in \"$d\"/link-*.session; do [ -f \"$g\" ] || continue; \
    read q t < \"$g\"; [ -n \"$q\" ] && \
    [ \"$(echo $(ps -o lstart= -p \"$q\" 2>/dev/null))\" = \"$t\" ] || rm -f \"$g\"; done; \
    echo \"askpane-socket=$d/inbox.sock\"";

/// Run as the forward's session (instead of `ssh -N`): removes the note that the link is coming
/// up (ssh asked for the forward before this session, and sshd granted it first: it holds),
/// records the sshd process that serves it (its nearest `sshd` ancestor, with its start time) in `link-LINK.session` for
/// [`WHERE_IS_THE_INBOX`] of the link's next ssh, then stays until the session ends (a write to
/// its closed output ends it, so nothing of it is left on the host).
const RECORD_THE_SESSION: &str = "rm -f \"$d/link-LINK.coming\"; p=$PPID; while [ \"$p\" -gt 1 ]; do \
    case \"$(ps -o comm= -p \"$p\" 2>/dev/null)\" in sshd*) break;; esac; \
    p=$(echo $(ps -o ppid= -p \"$p\" 2>/dev/null)); [ -n \"$p\" ] || p=1; done; \
    if [ \"$p\" -gt 1 ]; then echo \"$p\" $(ps -o lstart= -p \"$p\") > \"$d/link-LINK.session\"; fi; \
    while sleep 10; do echo || exit 0; done";

/// A snippet for the link `link` (hex digits), as `sh -c '…'`.
fn remote_command(snippet: &str, link: &str) -> String {
    format!("sh -c '{INBOX_FOLDER}{}'", snippet.replace("LINK", link))
}

/// How often ssh checks that the server still answers, and how many missed answers end it: a
/// dead link is noticed within about 30 s even where no packet says so. A person's own
/// `-o ServerAliveInterval=…` or `-o ServerAliveCountMax=…` after `--` wins ([`Ssh::forward`]).
const ALIVE_INTERVAL_SECS: u32 = 10;
const ALIVE_COUNT: u32 = 3;

/// The marker of the socket's path in the snippet's output (a login banner or a shell's rc
/// file may print lines of its own before it).
const PATH_MARKER: &str = "askpane-socket=";

/// What `ssh -v` says on stderr once every forward it asked for was granted (OpenSSH 7.x–9.x).
const FORWARDS_UP: [&str; 2] = ["forwarding_success", "remote forward success"];

/// Which ssh to run, and the person's arguments for it.
#[derive(Clone, Debug)]
pub struct Ssh {
    pub program: OsString,
    /// What came after `--`: put before the host, as ssh reads options.
    pub args: Vec<OsString>,
    pub host: String,
}

impl Ssh {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command.stdin(Stdio::null());
        command
    }

    /// Asks the remote for its inbox socket's path (and makes its folder, and removes a stale
    /// socket there). The reason, in words, when it cannot.
    pub fn remote_socket(&self, stop: &Receiver<()>, link: &str) -> Result<String, String> {
        let mut command = self.command();
        command.arg(&self.host).arg(remote_command(WHERE_IS_THE_INBOX, link));
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child =
            command.spawn().map_err(|error| format!("cannot run {:?}: {error}", self.program))?;
        let stdout = child.stdout.take().map(read_to_end);
        let stderr = child.stderr.take().map(read_to_end);
        let status = wait_bounded(&mut child, stop)?;
        let said = |text: Option<Reading>| text.map(Reading::finish).unwrap_or_default();
        let (stdout, stderr) = (said(stdout), said(stderr));
        if !status.success() {
            let last = last_line(&stderr).unwrap_or("no message");
            return Err(format!("ssh {} failed ({status}): {last}", self.host));
        }
        socket_path(&stdout).map(str::to_owned).ok_or_else(|| {
            format!("ssh {} did not say where the inbox goes (is its shell POSIX?)", self.host)
        })
    }

    /// Starts `ssh -R remote:link HOST 'sh -c …'` (the session [`RECORD_THE_SESSION`]), verbose so that it says when the forward holds;
    /// with `tcp` (`--http`), also `-R 127.0.0.1:REMOTE_PORT:127.0.0.1:LOCAL_PORT`.
    pub fn forward(
        &self,
        remote_socket: &str,
        link_socket: &Path,
        tcp: Option<(u16, u16)>,
        link: &str,
    ) -> std::io::Result<Child> {
        self.forward_command(remote_socket, link_socket, tcp, link).spawn()
    }

    /// The command [`Ssh::forward`] runs. ssh takes the first value it is given for an option
    /// (its command line before any config file), so the options the link depends on come before
    /// the person's arguments, and the keep-alives after them: an `-o ServerAliveInterval=…` after
    /// `--` wins (a slow or metered network), one in `~/.ssh/config` does not.
    fn forward_command(
        &self,
        remote_socket: &str,
        link_socket: &Path,
        tcp: Option<(u16, u16)>,
        link: &str,
    ) -> Command {
        let mut command = Command::new(&self.program);
        command.args(["-v", "-T"]);
        for option in ["ExitOnForwardFailure=yes", "StreamLocalBindUnlink=yes"] {
            command.arg("-o").arg(option);
        }
        let mut forward = OsString::from(remote_socket);
        forward.push(":");
        forward.push(link_socket);
        command.arg("-R").arg(forward);
        if let Some((remote_port, local_port)) = tcp {
            command.arg("-R").arg(format!("127.0.0.1:{remote_port}:127.0.0.1:{local_port}"));
        }
        command.args(&self.args);
        for option in [
            format!("ServerAliveInterval={ALIVE_INTERVAL_SECS}"),
            format!("ServerAliveCountMax={ALIVE_COUNT}"),
        ] {
            command.arg("-o").arg(option);
        }
        command.arg(&self.host).arg(remote_command(RECORD_THE_SESSION, link));
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        command
    }
}

/// What ssh's stderr says that the link cares about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SshSaid {
    /// Every forward was granted: the link is up.
    ForwardsUp,
    /// A line for a person (not ssh's debug chatter): the last one says why ssh ended.
    Line(String),
}

/// How often the stderr reader looks whether it is to stop.
const STDERR_TICK: Duration = Duration::from_millis(100);

/// Reads a forwarding ssh's stderr on a thread of its own (`remote-ssh-stderr`) into `said`,
/// until it closes or `stop` is set. A process ssh started (a `ProxyCommand`, a ControlMaster)
/// may hold the pipe open after ssh ended: the reader reads only what is there, and looks at
/// `stop` in between, so it can be joined once ssh has ended. (It blocked for as long as a
/// stopped ProxyCommand lived, and the link with it: it never noticed its ssh had ended.)
pub fn read_stderr(
    mut stderr: std::process::ChildStderr,
    said: Sender<SshSaid>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    crate::transport::spawn_named("remote-ssh-stderr", move || {
        let tick = Timespec::try_from(STDERR_TICK).ok();
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = [0_u8; 4096];
        loop {
            let ready = {
                let mut fds = [PollFd::new(&stderr, PollFlags::IN)];
                rustix::event::poll(&mut fds, tick.as_ref())
            };
            match ready {
                Ok(0) | Err(rustix::io::Errno::INTR) => {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    continue;
                }
                Ok(_) => {}
                Err(_) => return,
            }
            // Readable: one read returns what is there without waiting.
            let read = match stderr.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(read) => read,
            };
            pending.extend_from_slice(chunk.get(..read).unwrap_or_default());
            while let Some(end) = pending.iter().position(|byte| *byte == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let Some(heard) = classify(&String::from_utf8_lossy(&line)) else { continue };
                if said.send(heard).is_err() {
                    return;
                }
            }
            // A line without end, for ever: not kept without bound.
            if pending.len() > 64 * 1024 {
                pending.clear();
            }
        }
    })
}

/// One line of `ssh -v`'s stderr: the forwards' success, ssh's debug chatter (nothing), or a
/// line for a person.
fn classify(line: &str) -> Option<SshSaid> {
    let line = line.trim();
    if FORWARDS_UP.iter().any(|marker| line.contains(marker)) {
        return Some(SshSaid::ForwardsUp);
    }
    let chatter = line.is_empty()
        || line.starts_with("debug")
        || line.starts_with("OpenSSH_")
        || line.starts_with("Authenticated to")
        || line.starts_with("Transferred:")
        || line.starts_with("Bytes per second");
    (!chatter).then(|| SshSaid::Line(line.to_owned()))
}

/// The socket's path in the snippet's output: absolute, one line.
fn socket_path(stdout: &str) -> Option<&str> {
    let path = stdout.lines().rev().find_map(|line| line.trim().strip_prefix(PATH_MARKER))?;
    (path.starts_with('/') && !path.contains(':')).then_some(path)
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().map(str::trim).find(|line| !line.is_empty())
}

/// A pipe being read to its end on a thread of its own.
struct Reading {
    text: Receiver<String>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reading {
    /// The text, once ssh has ended. A pipe still held open after a second (a `ControlMaster`
    /// ssh left in the background keeps it) gives what it has not: nothing, and its thread is
    /// left to end with that process rather than waited for.
    fn finish(self) -> String {
        let text = self.text.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
        if let Some(thread) = self.thread.filter(|thread| thread.is_finished()) {
            let _ = thread.join();
        }
        text
    }
}

fn read_to_end(mut pipe: impl Read + Send + 'static) -> Reading {
    let (sender, text) = crossbeam_channel::bounded(1);
    let thread = crate::transport::spawn_named("remote-ssh-output", move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    Reading { text, thread: thread.ok() }
}

/// Waits for `child` at most [`ASK_WAIT`], or until `stop`; kills it (by its own handle) then.
fn wait_bounded(child: &mut Child, stop: &Receiver<()>) -> Result<ExitStatus, String> {
    let deadline = Instant::now() + ASK_WAIT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(error) => return Err(format!("cannot wait for ssh: {error}")),
        }
        let stopped =
            stop.recv_timeout(ASK_POLL) != Err(crossbeam_channel::RecvTimeoutError::Timeout);
        if stopped || Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(match stopped {
                true => "stopped".to_owned(),
                false => format!("ssh did not answer in {} s", ASK_WAIT.as_secs()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `forward_command`'s arguments as text.
    fn forward_args(args: &[&str]) -> Vec<String> {
        let ssh = Ssh {
            program: "ssh".into(),
            args: args.iter().map(OsString::from).collect(),
            host: "devbox".to_owned(),
        };
        let command =
            ssh.forward_command("/run/inbox.sock", Path::new("/tmp/link.sock"), None, "ab");
        command.get_args().map(|arg| arg.to_string_lossy().into_owned()).collect()
    }

    fn position(args: &[String], wanted: &str) -> usize {
        args.iter().position(|arg| arg == wanted).unwrap_or_else(|| panic!("no {wanted}: {args:?}"))
    }

    #[test]
    fn the_person_s_keep_alives_come_first_and_the_link_s_own_options_before_them() {
        let args = forward_args(&["-o", "ServerAliveInterval=2", "-o", "ExitOnForwardFailure=no"]);
        // ssh takes the first value of each option.
        assert!(
            position(&args, "ServerAliveInterval=2") < position(&args, "ServerAliveInterval=10")
        );
        assert!(
            position(&args, "ExitOnForwardFailure=yes")
                < position(&args, "ExitOnForwardFailure=no")
        );
        // Every option comes before the host, the remote command after it.
        let host = position(&args, "devbox");
        assert!(position(&args, "ServerAliveCountMax=3") < host, "{args:?}");
        assert_eq!(args.len(), host + 2, "{args:?}");
    }

    #[test]
    fn without_options_of_the_person_s_the_keep_alives_are_askpane_s() {
        let args = forward_args(&[]);
        let host = position(&args, "devbox");
        assert!(position(&args, "ServerAliveInterval=10") < host, "{args:?}");
        assert!(position(&args, "ServerAliveCountMax=3") < host, "{args:?}");
        assert!(position(&args, "StreamLocalBindUnlink=yes") < host, "{args:?}");
    }

    #[test]
    fn the_path_is_found_after_a_banner_and_nothing_else_passes_for_one() {
        let said = "Welcome to devbox\naskpane-socket=/run/user/1000/askpane/inbox.sock\n";
        assert_eq!(socket_path(said), Some("/run/user/1000/askpane/inbox.sock"));
        assert_eq!(socket_path("Welcome\n"), None);
        assert_eq!(socket_path("askpane-socket=relative/inbox.sock\n"), None);
        // A colon would split ssh's `-R remote:local`.
        assert_eq!(socket_path("askpane-socket=/tmp/a:b/inbox.sock\n"), None);
    }

    /// Runs `snippet` for link `link` as the host's shell would, with `runtime` as its
    /// `XDG_RUNTIME_DIR`; its stdout.
    fn run_snippet(snippet: &str, link: &str, runtime: &Path) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(remote_command(snippet, link))
            .env("XDG_RUNTIME_DIR", runtime)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// `ps -o lstart=` of `pid`, its words joined by one space, as the snippets note it.
    fn started(pid: u32) -> String {
        let out = std::process::Command::new("ps")
            .args(["-o", "lstart=", "-p", &pid.to_string()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[cfg(unix)]
    #[test]
    fn the_next_ssh_ends_the_noted_session_only_if_it_is_still_that_process_and_this_link_s() {
        let runtime = std::env::temp_dir().join(format!("askpane-ssh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&runtime);
        std::fs::create_dir_all(&runtime).unwrap();
        let folder = runtime.join("askpane");
        let mut stale = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        std::fs::create_dir_all(&folder).unwrap();
        // A pid used again by another process (another start time): left alone, note removed.
        let note = folder.join("link-abc123.session");
        std::fs::write(&note, format!("{} Mon Jan  1 00:00:00 2001\n", stale.id())).unwrap();
        let said = run_snippet(WHERE_IS_THE_INBOX, "abc123", &runtime);
        assert_eq!(said.trim(), format!("askpane-socket={}/inbox.sock", folder.display()));
        assert_eq!(stale.try_wait().unwrap(), None, "another process was ended");
        assert!(!note.exists());
        // Another link's note: not this link's to end.
        let other = folder.join("link-fff000.session");
        std::fs::write(&other, format!("{} {}\n", stale.id(), started(stale.id()))).unwrap();
        run_snippet(WHERE_IS_THE_INBOX, "abc123", &runtime);
        assert_eq!(stale.try_wait().unwrap(), None, "another link's session was ended");
        assert!(other.exists());
        // A note that names no process (not a number, no start time): nothing is signalled
        // (`kill -1` would signal every process of the user's).
        for bad in ["-1\n", "-1 \n", "0\n", "$(touch x) y\n"] {
            std::fs::write(&note, bad).unwrap();
            run_snippet(WHERE_IS_THE_INBOX, "abc123", &runtime);
            assert_eq!(stale.try_wait().unwrap(), None, "{bad:?}");
            assert!(!note.exists());
        }
        // Another link's note whose session has ended: removed, nothing ended.
        let gone = folder.join("link-dead00.session");
        std::fs::write(&gone, "999999999 Mon Jan  1 00:00:00 2001\n").unwrap();
        run_snippet(WHERE_IS_THE_INBOX, "abc123", &runtime);
        assert!(!gone.exists());
        assert!(other.exists());
        // This link's, still the process noted: ended, and waited for.
        std::fs::write(&note, format!("{} {}\n", stale.id(), started(stale.id()))).unwrap();
        run_snippet(WHERE_IS_THE_INBOX, "abc123", &runtime);
        let ended = (0..50).find_map(|_| {
            std::thread::sleep(Duration::from_millis(20));
            stale.try_wait().unwrap()
        });
        assert!(ended.is_some(), "the stale session still runs");
        assert!(!note.exists());
        let _ = std::fs::remove_dir_all(&runtime);
    }

    #[cfg(unix)]
    #[test]
    fn asking_notes_the_link_coming_up_under_the_name_the_client_looks_for_and_drops_others() {
        use crate::transport::inbox::{COMING_PREFIX, COMING_SUFFIX};
        let runtime = std::env::temp_dir().join(format!("askpane-coming-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&runtime);
        let folder = runtime.join("askpane");
        std::fs::create_dir_all(&folder).unwrap();
        let earlier = folder.join(format!("{COMING_PREFIX}dead00{COMING_SUFFIX}"));
        std::fs::write(&earlier, "").unwrap();
        run_snippet(WHERE_IS_THE_INBOX, "abc123", &runtime);
        assert!(folder.join(format!("{COMING_PREFIX}abc123{COMING_SUFFIX}")).exists());
        assert!(!earlier.exists(), "an earlier try's note stays");
        // The forward's session removes this link's note (what it runs first).
        let removes = format!("rm -f \"$d/{COMING_PREFIX}LINK{COMING_SUFFIX}\";");
        assert!(RECORD_THE_SESSION.starts_with(&removes), "{RECORD_THE_SESSION}");
        let _ = std::fs::remove_dir_all(&runtime);
    }

    #[test]
    fn the_snippet_has_no_single_quote_to_break_its_quoting() {
        for snippet in [INBOX_FOLDER, WHERE_IS_THE_INBOX, RECORD_THE_SESSION] {
            assert!(!snippet.contains('\''), "{snippet}");
        }
    }

    #[test]
    fn ssh_s_chatter_is_dropped_its_success_and_its_complaints_kept() {
        assert_eq!(
            classify("debug1: forwarding_success: all expected forwarding replies received"),
            Some(SshSaid::ForwardsUp)
        );
        assert_eq!(classify("debug1: Reading configuration data /etc/ssh/ssh_config"), None);
        assert_eq!(classify("OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19"), None);
        assert_eq!(
            classify("ssh: connect to host 127.0.0.1 port 4: Connection refused"),
            Some(SshSaid::Line("ssh: connect to host 127.0.0.1 port 4: Connection refused".into()))
        );
    }
}
