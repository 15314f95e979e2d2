//! Hosting an agent as a child over its stdio, written once for every agent: [`HostedAgent`] is
//! what an agent's own protocol is (what its lines mean, how a reply is written), and
//! [`HostedSession`] is everything else: the agent started in a process group of its own
//! ([`GroupChild`]), three named threads (the reader turns the agent's lines into questions,
//! permission cards and the transcript for the window; the writer owns the agent's stdin and
//! writes each reply as its outcome arrives; the stderr keeper holds the last lines for the
//! "agent ended" message), the channel the window's prompts and Stop go into, and the shut-down
//! (or Drop) that ends the agent and everything it started.
//!
//! Claude Code (`claude`: stream-json) and Codex (`codex`: the app-server's JSON-RPC) implement
//! it, and so does any Agent Client Protocol agent (`acp`: JSON-RPC over stdio, like Codex). The reader's side of the
//! session is [`Host`] (`host.rs`), the writer's loop `writer.rs`.

pub mod acp;
pub mod claude;
pub mod codex;
mod host;
pub mod relay;
mod writer;

use std::collections::VecDeque;
use std::io::{self, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use serde_json::{Map, Value};

use crate::book::{Policy, policy};
use crate::protocol::inbox::{ClientMode, Policy as Flags};
use crate::protocol::stream::{AgentExit, PermissionDecision};
use crate::protocol::{Ask, Envelope, Outcome};

pub use host::Host;
pub use writer::{AgentInput, Writing};

use super::{Control, Inbound, IoThreads, Provenance, SessionCommand, SessionEvent, UiSender};
use crate::transport::group::{GroupChild, Pipes};
use crate::transport::lines::{self, Frame};

/// How long an agent gets to exit after its stdin closes, before its process group gets SIGTERM,
/// and again before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);
/// Lines of the agent's stderr kept for the "agent ended" message.
const STDERR_TAIL: usize = 12;

/// An agent askpane hosts: what its own protocol is. The implementing type is the reader's
/// state for one session (what it has seen of the agent); [`HostedAgent::Writer`] is the
/// writer's. The loop, the threads, the stderr tail and the shut-down are [`HostedSession`]'s.
pub trait HostedAgent: Sized + Send + 'static {
    /// What only this agent is run with, besides what every agent takes ([`HostOptions`]).
    type Own;
    /// The writer thread's state, and how replies and turns are written in the agent's protocol.
    type Writer: Writing;
    /// The agent as history and the inbox name it (`claude · my-project`).
    const SOURCE: &'static str;
    /// The agent in words, for the person ("Claude Code").
    const WORDS: &'static str;
    /// How its questions are handed to the inbox (whose reply goes to the agent's stdin).
    const MODE: ClientMode;
    /// The names of the session's threads.
    const THREADS: ThreadNames;

    /// The command that runs the agent as askpane's peer (its standard streams are piped).
    fn command(options: &HostOptions<Self::Own>) -> Command;
    /// What to say when `command` cannot be started.
    fn cannot_start(options: &HostOptions<Self::Own>, error: &io::Error) -> String;
    /// The prefix the agent's stderr is echoed to askpane's stderr with (`None`: kept, not echoed).
    fn stderr_echo(options: &HostOptions<Self::Own>) -> Option<&'static str>;
    /// Who asks, for every question and permission card of the session.
    fn provenance(options: &HostOptions<Self::Own>) -> Provenance;
    /// The reader's and the writer's state for a new session (it may start threads of its own:
    /// Claude Code's `--print-stream` copy).
    fn begin(
        options: &HostOptions<Self::Own>,
        threads: &mut IoThreads,
    ) -> io::Result<(Self, Self::Writer)>;

    /// A line as the agent wrote it (with its newline), before it is read as JSON.
    fn raw_line(&mut self, _line: &[u8]) {}
    /// One JSON line the agent wrote: questions, permissions and the transcript go to the
    /// window through `host`, replies and turns to the writer.
    fn line(&mut self, line: &Value, host: &mut Host<Self>);
    /// For the inbox: a question as the agent sent it, for the inbox to read and reply to in
    /// the agent's envelope; `None` for an envelope this agent does not ask in.
    fn question_message(envelope: &Envelope, input: &Map<String, Value>) -> Option<Value>;
}

/// How to run a hosted agent: what every agent takes, and `own`, what only this one does.
#[derive(Clone, Debug)]
pub struct HostOptions<O> {
    pub program: PathBuf,
    /// Extra arguments, after askpane's own.
    pub extra_args: Vec<String>,
    /// The first user turn; without it the window asks for one.
    pub prompt: Option<String>,
    /// `--debug`: echo what the agent says on stderr, and its warnings, to askpane's stderr
    /// (Codex; what askpane ignores is a debug line, which `--debug` lets through the logger).
    pub debug: bool,
    /// How questions are answered besides the window (`--answers`, `--submit`, no display).
    pub autopilot: Autopilot,
    pub own: O,
}

/// The names of a session's threads.
pub struct ThreadNames {
    pub reader: &'static str,
    pub writer: &'static str,
    pub stderr: &'static str,
}

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
                log::warn!("{text}");
            }
            to_ui.send(Inbound::Control(Control::Notice(text)));
        }
        ruling.policy
    }
}

/// What the reader (and the inbox's relay, and the session's end) tells the writer thread.
enum ToAgent<W: Writing> {
    /// Write the reply to this question once its outcome arrives. `key` is how the agent names
    /// it when it takes it back.
    Question { key: String, question: W::Question, outcome: Receiver<Outcome> },
    /// Write the reply to this permission request once it is decided.
    Permission { key: String, permission: W::Permission, decision: Receiver<PermissionDecision> },
    /// The agent needs no reply to `key` any more (it cancelled or resolved it).
    Forget { key: String },
    /// Something only this agent's writer knows what to do with (a handshake step, a turn).
    Note(W::Note),
    /// Write this line now.
    Line(Value),
    /// Write what was decided just before, stop the turn (if one runs), close the agent's stdin
    /// and end.
    Close,
}

/// A running agent: the child, the channel to its writer, and the channel the window's prompts
/// and Stop go into. Dropped without [`HostedSession::shut_down`], it still ends the agent.
pub struct HostedSession<A: HostedAgent> {
    agent: GroupChild,
    to_writer: Sender<ToAgent<A::Writer>>,
    commands: Sender<SessionCommand>,
}

/// Whole reply lines for the agent's stdin, written by its writer in turn with its own (the
/// inbox computes the reply to a question the session handed to it).
pub struct AgentLines<A: HostedAgent>(Sender<ToAgent<A::Writer>>);

impl<A: HostedAgent> Clone for AgentLines<A> {
    fn clone(&self) -> Self {
        AgentLines(self.0.clone())
    }
}

impl<A: HostedAgent> AgentLines<A> {
    /// Writes `line` to the agent's stdin (dropped if the agent is gone: its end is reported).
    pub fn write(&self, line: Value) {
        let _ = self.0.send(ToAgent::Line(line));
    }
}

impl<A: HostedAgent> HostedSession<A> {
    /// Starts the agent and its threads. Questions, permissions and the transcript go to `to_ui`.
    pub fn start(
        options: &HostOptions<A::Own>,
        to_ui: UiSender,
        threads: &mut IoThreads,
    ) -> io::Result<HostedSession<A>> {
        let mut command = A::command(options);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // In a process group of its own: everything the agent starts is stopped with it.
        let (agent, Pipes { stdin, stdout, stderr }) =
            GroupChild::spawn(&mut command, GRACE, threads)
                .map_err(|error| io::Error::new(error.kind(), A::cannot_start(options, &error)))?;
        let (to_writer, writer_inbox) = crossbeam_channel::unbounded();
        let (commands, command_inbox) = crossbeam_channel::unbounded();
        // Made now, so that a thread that cannot be started below still ends the agent (its Drop).
        let session =
            HostedSession { agent: agent.clone(), to_writer: to_writer.clone(), commands };
        let stderr_tail = StderrTail::default();
        let tail = stderr_tail.clone();
        let echo = A::stderr_echo(options);
        threads.spawn(A::THREADS.stderr, move || tail.keep(stderr, echo))?;
        let (reader, writer) = A::begin(options, threads)?;
        let writer_ui = to_ui.clone();
        threads.spawn(A::THREADS.writer, move || {
            writer::run(writer, stdin, &writer_inbox, &command_inbox, &writer_ui)
        })?;
        let host = Host::new(
            to_ui,
            to_writer,
            options.autopilot.clone(),
            A::provenance(options),
            agent,
            stderr_tail,
        );
        threads.spawn(A::THREADS.reader, move || host::read(reader, host, stdout))?;
        Ok(session)
    }

    /// The channel the window sends prompts and Stop on.
    pub fn commands(&self) -> Sender<SessionCommand> {
        self.commands.clone()
    }

    /// Where reply lines computed elsewhere go to the agent (the inbox's, through the relay).
    pub fn lines(&self) -> AgentLines<A> {
        AgentLines(self.to_writer.clone())
    }

    /// Ends the session cleanly: the writer writes what was decided, stops the turn and closes
    /// the agent's stdin; after `grace` SIGTERM to the agent's process group, after another
    /// `grace` SIGKILL. Returns the agent's exit status.
    pub fn shut_down(self, grace: Duration) -> io::Result<ExitStatus> {
        let _ = self.to_writer.send(ToAgent::Close);
        self.agent.stop(grace)
    }
}

impl<A: HostedAgent> Drop for HostedSession<A> {
    /// A session dropped without [`HostedSession::shut_down`] still ends its agent and
    /// everything it started: no orphan.
    fn drop(&mut self) {
        let _ = self.to_writer.send(ToAgent::Close);
        if self.agent.wait_timeout(Duration::ZERO).is_none() {
            self.agent.kill();
        }
    }
}

/// The project folder's name (the current folder), for showing where the session runs.
pub fn project_name() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    cwd.file_name().map(|name| name.to_string_lossy().into_owned())
}

/// The last lines the agent wrote to stderr, for the "agent ended" message.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<(Mutex<Tail>, Condvar)>);

/// What [`StderrTail`] holds: the last lines, and whether stderr was read to its end.
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    read: bool,
}

impl StderrTail {
    /// Keeps the last lines of `stderr` (echoed with `echo` when given) until it ends. Bytes
    /// that are not UTF-8 are kept as U+FFFD: an agent's stderr is shown, never refused.
    fn keep(&self, stderr: impl Read, echo: Option<&str>) -> io::Result<()> {
        let kept = self.keep_lines(stderr, echo);
        // Read to its end, or unreadable: nothing more will come either way.
        let (tail, read) = &*self.0;
        if let Ok(mut tail) = tail.lock() {
            tail.read = true;
        }
        read.notify_all();
        kept
    }

    fn keep_lines(&self, stderr: impl Read, echo: Option<&str>) -> io::Result<()> {
        let mut reader = BufReader::new(stderr);
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            if lines::read_frame(&mut reader, &mut buffer, lines::UNLIMITED)? == Frame::End {
                return Ok(());
            }
            let line = lines::text(&buffer).into_owned();
            if let Some(agent) = echo {
                log::info!(speaker = agent; "{line}");
            }
            if let Ok(mut tail) = self.0.0.lock() {
                if tail.lines.len() == STDERR_TAIL {
                    tail.lines.pop_front();
                }
                tail.lines.push_back(line);
            }
        }
    }

    /// The last lines once stderr is read to its end, waiting at most `bound` for that: an
    /// agent that exits writes its last words to stderr after (or while) its stdout closes,
    /// and the stderr thread may not have read them yet. A stderr a grandchild keeps open is
    /// not waited for past `bound`.
    fn lines_when_read(&self, bound: Duration) -> Vec<String> {
        let (tail, read) = &*self.0;
        let Ok(tail) = tail.lock() else { return Vec::new() };
        let tail = match read.wait_timeout_while(tail, bound, |tail| !tail.read) {
            Ok((tail, _)) => tail,
            Err(poisoned) => poisoned.into_inner().0,
        };
        tail.lines.iter().cloned().collect()
    }

    #[cfg(test)]
    fn lines(&self) -> Vec<String> {
        self.lines_when_read(Duration::ZERO)
    }
}

/// The agent closed its stdout: how it ended (its exit status, once it has one within
/// [`GRACE`]) and the last lines of its stderr.
fn ended(agent: &GroupChild, stderr_tail: &StderrTail) -> SessionEvent {
    let status = match agent.wait_timeout(GRACE) {
        Some(status) => match status.code() {
            Some(code) => AgentExit::Code(code),
            None => AgentExit::Other(status.to_string()),
        },
        None => AgentExit::StillRunning,
    };
    SessionEvent::Ended { status, stderr_tail: stderr_tail.lines_when_read(GRACE) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_that_is_not_utf8_is_kept_as_text_and_read_to_its_end() {
        let tail = StderrTail::default();
        tail.keep(&b"first\n\xff\xfe broken\r\nlast"[..], None).expect("stderr is read to its end");
        assert_eq!(tail.lines(), ["first", "\u{fffd}\u{fffd} broken", "last"]);
    }

    /// An agent that says why on stderr and exits: its stdout closes first, and the lines read
    /// then must still be its last words, not whatever the stderr thread had read so far.
    #[test]
    fn the_tail_taken_when_the_agent_ended_waits_for_stderr_to_be_read_to_its_end() {
        let tail = StderrTail::default();
        let keeper = tail.clone();
        let late = crate::transport::spawn_named("late-stderr", move || {
            std::thread::sleep(Duration::from_millis(200));
            keeper.keep(&b"no API key\n"[..], None)
        })
        .expect("a thread");
        assert_eq!(tail.lines_when_read(Duration::from_secs(10)), ["no API key"]);
        late.join().expect("the stderr thread").expect("read to its end");
        // A stderr never closed (a grandchild holds it) is waited for within the bound only.
        let open = StderrTail::default();
        assert!(open.lines_when_read(Duration::from_millis(50)).is_empty());
    }
}
