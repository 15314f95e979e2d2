//! The process side that `askpane claude` and `askpane codex` share in hosting an agent, written
//! once: the agent started in a process group of its own ([`GroupChild`]), a named thread that
//! keeps the last lines of its stderr, the channels to its writer thread and from the window, and
//! the session handle whose shut-down (or Drop) ends the agent and everything it started. What
//! the agent's lines mean, and the reader and writer threads, stay with each agent's module.

pub mod claude;
pub mod codex;

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};
use std::process::{ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::book::{Policy, policy};
use crate::protocol::Ask;
use crate::protocol::inbox::Policy as Flags;
use crossbeam_channel::{Receiver, Sender};

use super::{Inbound, IoThreads, SessionCommand, SessionEvent, UiSender};
use crate::transport::group::{GroupChild, GroupReader, Pipes};

/// How long an agent gets to exit after its stdin closes, before its process group gets SIGTERM,
/// and again before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);
/// Lines of the agent's stderr kept for the "agent ended" message.
const STDERR_TAIL: usize = 12;

/// Answering without (or before) a person, as in `askpane ask`: the session's answering flags
/// (`--decline`, `--answers` with `--submit`, `--timeout`), stated for each question by the one
/// rule ([`policy::from_flags`]); `headless` (no window, browser or inbox) answers the rest "no
/// human available" and denies permissions that are not pre-allowed.
#[derive(Clone, Debug, Default)]
pub struct Autopilot {
    /// The flags as `ask` and `hook` hand them to the inbox, `--answers` read once at the start.
    /// `--non-interactive` is not among them: it makes the host `headless`, and the agent reads
    /// the host's own words for why nobody answers.
    pub flags: Flags,
    pub headless: bool,
}

impl Autopilot {
    /// How one question may be answered besides the window; without a window, `no_window` is
    /// why nobody answers. `--answers` that do not fit the question answer it "unavailable",
    /// naming the problem, as for `ask` (and the user hears of it on `to_ui`).
    pub fn policy(&self, ask: &Ask, no_window: &str, to_ui: &UiSender) -> Policy {
        let ruling = policy::from_flags(ask, &self.flags, self.headless.then_some(no_window));
        if let Some(problem) = ruling.misfit {
            let text = format!(
                "{problem}; the agent was told no answer is available for “{}”",
                ask.title()
            );
            if self.headless {
                eprintln!("askpane: {text}");
            }
            to_ui.send(Inbound::Notice(text));
        }
        ruling.policy
    }
}

/// The message that tells an agent's writer thread to finish its turn's business, close the
/// agent's stdin and end.
pub trait Closing {
    fn close() -> Self;
}

/// A running agent: the child, the channel to its writer, and the channel the window's prompts
/// and Stop go into. Dropped without [`AgentSession::shut_down`], it still ends the agent.
pub struct AgentSession<M: Closing> {
    agent: GroupChild,
    to_writer: Sender<M>,
    commands: Sender<SessionCommand>,
}

/// What [`start`] hands to the agent's module for its own threads.
pub struct Started<M: Closing> {
    pub session: AgentSession<M>,
    pub agent: GroupChild,
    pub stdin: ChildStdin,
    pub stdout: GroupReader<ChildStdout>,
    pub to_writer: Sender<M>,
    pub writer_inbox: Receiver<M>,
    pub command_inbox: Receiver<SessionCommand>,
    pub stderr_tail: StderrTail,
}

/// How the agent's stderr is kept: the thread's name, and the prefix it is echoed to askpane's
/// stderr with (`None`: kept, not echoed).
pub struct StderrKeeping {
    pub thread: &'static str,
    pub echo: Option<&'static str>,
}

/// Starts `command` (its standard streams are piped here) in a process group of its own, and the
/// thread that keeps its stderr. `cannot_start` words a failure to start it.
pub fn start<M: Closing + Send + 'static>(
    command: &mut Command,
    cannot_start: impl FnOnce(&io::Error) -> String,
    stderr: StderrKeeping,
    threads: &mut IoThreads,
) -> io::Result<Started<M>> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let (agent, Pipes { stdin, stdout, stderr: agent_stderr }) =
        GroupChild::spawn(command, GRACE, threads)
            .map_err(|error| io::Error::new(error.kind(), cannot_start(&error)))?;
    let (to_writer, writer_inbox) = crossbeam_channel::unbounded();
    let (commands, command_inbox) = crossbeam_channel::unbounded();
    // Made now, so that a thread that cannot be started below still ends the agent (its Drop).
    let session = AgentSession { agent: agent.clone(), to_writer: to_writer.clone(), commands };
    let stderr_tail = StderrTail::default();
    let tail = stderr_tail.clone();
    threads.spawn(stderr.thread, move || tail.keep(agent_stderr, stderr.echo))?;
    Ok(Started {
        session,
        agent,
        stdin,
        stdout,
        to_writer,
        writer_inbox,
        command_inbox,
        stderr_tail,
    })
}

impl<M: Closing> AgentSession<M> {
    /// The channel the window sends prompts and Stop on.
    pub fn commands(&self) -> Sender<SessionCommand> {
        self.commands.clone()
    }

    /// The channel to the agent's writer thread.
    pub fn to_writer(&self) -> Sender<M> {
        self.to_writer.clone()
    }

    /// Ends the session cleanly: the writer is told to close (it interrupts the turn and closes
    /// the agent's stdin); after `grace` SIGTERM to the agent's process group, after another
    /// `grace` SIGKILL. Returns the agent's exit status.
    pub fn shut_down(self, grace: Duration) -> io::Result<ExitStatus> {
        let _ = self.to_writer.send(M::close());
        self.agent.stop(grace)
    }
}

impl<M: Closing> Drop for AgentSession<M> {
    /// A session dropped without [`AgentSession::shut_down`] still ends its agent and everything
    /// it started: no orphan.
    fn drop(&mut self) {
        let _ = self.to_writer.send(M::close());
        if self.agent.wait_timeout(Duration::ZERO).is_none() {
            self.agent.kill();
        }
    }
}

/// The last lines the agent wrote to stderr, for the "agent ended" message.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn keep(&self, stderr: impl Read, echo: Option<&str>) -> io::Result<()> {
        for line in BufReader::new(stderr).lines() {
            let line = line?;
            if let Some(prefix) = echo {
                eprintln!("{prefix}: {line}");
            }
            if let Ok(mut tail) = self.0.lock() {
                if tail.len() == STDERR_TAIL {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        }
        Ok(())
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().map(|tail| tail.iter().cloned().collect()).unwrap_or_default()
    }
}

/// The agent closed its stdout: how it ended (its exit status, once it has one within
/// [`GRACE`]) and the last lines of its stderr.
pub fn ended(agent: &GroupChild, stderr_tail: &StderrTail) -> SessionEvent {
    let status = match agent.wait_timeout(GRACE) {
        Some(status) => match status.code() {
            Some(code) => format!("exit code {code}"),
            None => format!("{status}"),
        },
        None => "still running after closing its output".to_owned(),
    };
    SessionEvent::Ended { status, stderr_tail: stderr_tail.lines() }
}
