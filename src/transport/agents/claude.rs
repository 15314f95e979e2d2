//! `askpane claude`: Claude Code run as a child in stream-json mode, with askpane as its host.
//!
//! Three named threads per session, in the shape of lsp-server: `agent-reader` reads the CLI's
//! stdout line by line and feeds the UI channel; `agent-writer` owns the CLI's stdin and writes the
//! initialize request, prompts, interrupts and every reply as its outcome arrives; `agent-stderr`
//! keeps the last lines the CLI wrote to stderr. With `--print-stream`, `stream-copy` is the one
//! thread that writes askpane's stdout: every CLI line, unchanged.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, ExitStatus};
use std::time::Duration;

use crossbeam_channel::{Receiver, Select, Sender};
use serde_json::Value;

use crate::protocol::stream::{self, CliMessage, PermissionDecision, PermissionRequest};
use crate::protocol::{Envelope, Outcome};

pub use super::Autopilot;
use super::{self as agents, AgentSession, Closing, StderrKeeping, StderrTail};
use crate::transport::group::GroupChild;
use crate::transport::lines::write_line;
use crate::transport::{
    Inbound, IoThreads, PermissionAsk, Provenance, Request, RequestId, Responder, SessionCommand,
    SessionEvent, UiSender,
};

/// The arguments that make the CLI a stream-json peer with askpane answering its permission
/// prompts (protocol.md §1: what the Agent SDK passes).
pub const HOST_ARGS: [&str; 7] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
];

/// How long the CLI gets to exit after its stdin closes, before its process group gets SIGTERM,
/// and again before SIGKILL.
pub const GRACE: Duration = agents::GRACE;

/// How to run the CLI.
#[derive(Clone, Debug)]
pub struct ClaudeOptions {
    pub program: PathBuf,
    /// Extra arguments, after askpane's own.
    pub extra_args: Vec<String>,
    /// The first user turn; without it the window asks for one.
    pub prompt: Option<String>,
    /// Tools allowed without asking (`--allow-tools`).
    pub allow_tools: Vec<String>,
    /// Copy every CLI line to askpane's stdout.
    pub print_stream: bool,
    /// Log ignored message kinds to stderr.
    pub debug: bool,
    /// How questions are answered besides the window (`--answers`, `--submit`, no display).
    pub autopilot: Autopilot,
}

/// A running session: the child, and the channel the window's prompts and Stop go into.
pub struct ClaudeSession(AgentSession<ToAgent>);

/// Writes whole reply lines to the CLI, in order with everything else the writer writes.
#[derive(Clone)]
pub struct AgentLines(Sender<ToAgent>);

impl AgentLines {
    /// Writes `line` to the CLI's stdin (dropped if the CLI is gone: its end is reported).
    pub fn write(&self, line: Value) {
        let _ = self.0.send(ToAgent::Line(line));
    }
}

/// What the writer thread is told, besides the window's commands.
enum ToAgent {
    /// Write the reply to this question once its outcome arrives.
    Question { envelope: Envelope, outcome: Receiver<Outcome> },
    /// Write the reply to this permission request once it is decided.
    Permission { request: PermissionRequest, decision: Receiver<PermissionDecision> },
    /// Write this line now.
    Line(Value),
    /// The CLI withdrew this permission request: its decision is no longer written.
    Cancelled { request_id: String },
    /// A `result` came: no turn is running now.
    TurnEnded,
    /// Stop the turn (if one is running), close the CLI's stdin and end.
    Close,
}

impl Closing for ToAgent {
    fn close() -> Self {
        ToAgent::Close
    }
}

impl ClaudeSession {
    /// Starts the CLI and its threads. Questions and permission requests go to `to_ui`.
    pub fn start(
        options: &ClaudeOptions,
        to_ui: UiSender,
        threads: &mut IoThreads,
    ) -> io::Result<ClaudeSession> {
        let mut command = Command::new(&options.program);
        command.args(HOST_ARGS).args(&options.extra_args);
        // In a process group of its own: everything the CLI starts is stopped with it.
        let started = agents::start(
            &mut command,
            |error| format!("cannot start {}: {error}", options.program.display()),
            StderrKeeping { thread: "agent-stderr", echo: Some("claude") },
            threads,
        )?;
        let session = ClaudeSession(started.session);

        let copy = match options.print_stream {
            true => {
                // Bounded: a slow reader of askpane's stdout slows the relay, it does not grow it.
                let (sender, receiver) = crossbeam_channel::bounded::<Vec<u8>>(64);
                threads.spawn("stream-copy", move || copy_stream(&receiver))?;
                Some(sender)
            }
            false => None,
        };

        let mut first_lines = vec![stream::initialize("askpane_init")];
        first_lines.extend(options.prompt.as_deref().map(stream::user_message));
        threads.spawn("agent-writer", move || {
            write_to_agent(
                started.stdin,
                &first_lines,
                &started.writer_inbox,
                &started.command_inbox,
            )
        })?;

        let reader = Reader {
            to_ui,
            to_writer: started.to_writer,
            copy,
            allow_tools: options.allow_tools.clone(),
            debug: options.debug,
            autopilot: options.autopilot.clone(),
            provenance: Provenance::new("claude", project_name()).with_project(project_name()),
            questions: HashMap::new(),
            marks_skipped: false,
            permissions: Vec::new(),
            agent: started.agent,
            stderr_tail: started.stderr_tail,
        };
        threads.spawn("agent-reader", move || reader.run(started.stdout))?;
        Ok(session)
    }

    /// The channel the window sends prompts and Stop on.
    pub fn commands(&self) -> Sender<SessionCommand> {
        self.0.commands()
    }

    /// Where reply lines computed elsewhere go to the CLI (the inbox computes the reply to a
    /// question `askpane claude` handed to it).
    pub fn lines(&self) -> AgentLines {
        AgentLines(self.0.to_writer())
    }

    /// Ends the session cleanly: interrupt the turn and close the CLI's stdin; after `grace`
    /// SIGTERM to its process group, after another `grace` SIGKILL (dropped, the session ends
    /// its CLI too). Returns the CLI's exit status.
    pub fn shut_down(self, grace: Duration) -> io::Result<ExitStatus> {
        self.0.shut_down(grace)
    }
}

/// The project folder's name, for showing where the session runs.
pub fn project_name() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    cwd.file_name().map(|name| name.to_string_lossy().into_owned())
}

struct Reader {
    to_ui: UiSender,
    to_writer: Sender<ToAgent>,
    copy: Option<Sender<Vec<u8>>>,
    allow_tools: Vec<String>,
    debug: bool,
    autopilot: Autopilot,
    provenance: Provenance,
    /// Open questions: request_id → tool_use_id, to turn a cancel into a withdraw.
    questions: HashMap<String, String>,
    /// The session's `system/init` advertises `ask_user_question_unanswered_v1`.
    marks_skipped: bool,
    /// Permission requests shown in the window, by request_id, cleared when the CLI ends.
    permissions: Vec<String>,
    agent: GroupChild,
    stderr_tail: StderrTail,
}

impl Reader {
    fn run(mut self, stdout: impl Read) -> io::Result<()> {
        // A large buffer and one reused line vector: multi-megabyte lines are read in place,
        // never copied line-by-line into a growing string.
        let mut reader = BufReader::with_capacity(1 << 20, stdout);
        let mut line = Vec::with_capacity(1 << 16);
        let mut reported_malformed = false;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            if let Some(copy) = &self.copy {
                // askpane's stdout went away: stop copying, keep hosting.
                if copy.send(line.clone()).is_err() {
                    self.copy = None;
                }
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Value>(text) {
                Ok(value) => self.handle(stream::parse_cli_line(&value)),
                Err(error) if !reported_malformed => {
                    reported_malformed = true;
                    let excerpt: String = String::from_utf8_lossy(text).chars().take(80).collect();
                    self.to_ui.send(Inbound::Notice(format!(
                        "Claude Code wrote a line that is not JSON ({error}): {excerpt}… \
                         askpane skips such lines and goes on reading."
                    )));
                }
                Err(_) => {}
            }
        }
        self.ended();
        Ok(())
    }

    fn handle(&mut self, message: CliMessage) {
        match message {
            CliMessage::Question(incoming) => self.question(incoming),
            CliMessage::Permission(request) => self.permission(request),
            CliMessage::Cancel { request_id } => match self.questions.remove(&request_id) {
                Some(tool_use_id) => {
                    self.to_ui.send(Inbound::Withdraw { tool_use_id });
                }
                None => {
                    self.permissions.retain(|open| open != &request_id);
                    let cancelled = ToAgent::Cancelled { request_id: request_id.clone() };
                    let _ = self.to_writer.send(cancelled);
                    self.to_ui.send(Inbound::WithdrawPermission { request_id });
                }
            },
            CliMessage::Unhandled { request_id, subtype, problem } => {
                // Claude Code waits for an answer to every request: unanswered, it would wait
                // for ever. One reply each, and the user hears what was turned away.
                let reply = stream::unhandled_reply(&request_id, &subtype, &problem);
                let _ = self.to_writer.send(ToAgent::Line(reply));
                let what = match subtype.as_str() {
                    "elicitation" => "asked for input for an MCP server (an elicitation); askpane \
                                      cannot show such forms and declined it"
                        .to_owned(),
                    _ => format!(
                        "sent a request askpane does not handle ({problem}); askpane \
                                  answered it with an error so that Claude Code does not wait"
                    ),
                };
                self.to_ui.send(Inbound::Notice(format!("Claude Code {what}.")));
            }
            CliMessage::Response { request_id, error: Some(error) } => {
                self.to_ui.send(Inbound::Notice(format!(
                    "Claude Code refused askpane's request {request_id}: {error}"
                )));
            }
            CliMessage::Other { kind } => {
                if self.debug {
                    eprintln!("askpane: debug: ignored a `{kind}` line from Claude Code");
                }
            }
            CliMessage::Response { .. } => {}
            CliMessage::Init(info) => {
                self.marks_skipped = info.accepts_unanswered();
                self.to_ui.send(Inbound::Session(Box::new(SessionEvent::Message(
                    CliMessage::Init(info),
                ))));
            }
            CliMessage::Result(result) => {
                let _ = self.to_writer.send(ToAgent::TurnEnded);
                self.to_ui.send(Inbound::Session(Box::new(SessionEvent::Message(
                    CliMessage::Result(result),
                ))));
            }
            message => {
                self.to_ui.send(Inbound::Session(Box::new(SessionEvent::Message(message))));
            }
        }
    }

    fn question(&mut self, incoming: crate::protocol::Incoming) {
        let envelope = incoming.envelope.clone();
        match Request::new(incoming, self.provenance.clone()) {
            Ok((mut request, outcome)) => {
                if let (Envelope::ControlRequest { request_id, .. }, Some(tool_use_id)) =
                    (&envelope, envelope.tool_use_id())
                {
                    self.questions.insert(request_id.clone(), tool_use_id.to_owned());
                }
                let _ = self.to_writer.send(ToAgent::Question { envelope, outcome });
                let no_window = "askpane runs Claude Code without a window";
                request.policy = self.autopilot.policy(&request.core.ask, no_window, &self.to_ui);
                request.policy.mark_skipped = self.marks_skipped;
                // Whoever shows it lets the book decide by this policy, and records what it
                // decides (history), even when no one is shown anything.
                self.to_ui.send(Inbound::Ask(Box::new(request)));
            }
            Err(invalid) => {
                let outcome = Outcome::Refused { reason: invalid.to_string() };
                if let Some(reply) = envelope.reply(&outcome) {
                    let _ = self.to_writer.send(ToAgent::Line(reply));
                }
                self.to_ui.send(Inbound::Notice(format!(
                    "Claude Code asked questions askpane cannot show ({invalid}); the agent was told why."
                )));
            }
        }
    }

    fn permission(&mut self, request: PermissionRequest) {
        let decided = match self.allow_tools.iter().any(|tool| tool == &request.tool_name) {
            true => Some(PermissionDecision::AllowOnce),
            false if self.autopilot.headless => Some(PermissionDecision::Deny {
                message: "No human is available to approve this tool call (askpane runs without \
                          a window)."
                    .to_owned(),
            }),
            false => None,
        };
        if let Some(decision) = decided {
            let reply = stream::permission_reply(&request, &decision);
            let _ = self.to_writer.send(ToAgent::Line(reply));
            return;
        }
        let (reply, decision) = Responder::channel();
        self.permissions.push(request.request_id.clone());
        let _ = self.to_writer.send(ToAgent::Permission { request: request.clone(), decision });
        let ask = PermissionAsk {
            id: RequestId::next(),
            request,
            provenance: self.provenance.clone(),
            reply,
        };
        self.to_ui.send(Inbound::Permission(Box::new(ask)));
    }

    /// The CLI closed its stdout: it is ending. Clears what it asked and says how it ended.
    fn ended(self) {
        for (_, tool_use_id) in self.questions {
            self.to_ui.send(Inbound::Withdraw { tool_use_id });
        }
        for request_id in self.permissions {
            self.to_ui.send(Inbound::WithdrawPermission { request_id });
        }
        let ended = agents::ended(&self.agent, &self.stderr_tail);
        self.to_ui.send(Inbound::Session(Box::new(ended)));
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "--print-stream: this relay is the one writer of `askpane claude`'s stdout"
)]
fn copy_stream(lines: &Receiver<Vec<u8>>) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    for line in lines {
        out.write_all(&line)?;
        // Flush when the relay has caught up, so a reader sees each line without waiting.
        if lines.is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}

/// The CLI's stdin. Once a write fails (the CLI has exited), later lines are dropped: the reader
/// reports how the CLI ended, and askpane still exits with the CLI's own exit code.
struct AgentInput {
    stdin: BufWriter<ChildStdin>,
    gone: bool,
}

impl AgentInput {
    fn write(&mut self, line: &Value) {
        if !self.gone && write_line(&mut self.stdin, line).is_err() {
            self.gone = true;
        }
    }
}

/// The writer: owns the CLI's stdin, writes the first lines, then whatever is decided first.
#[allow(
    clippy::indexing_slicing,
    reason = "crossbeam's Select hands back the index of an operation added from these same \
              vectors, and a selected operation must be completed on that very receiver"
)]
fn write_to_agent(
    stdin: ChildStdin,
    first_lines: &[Value],
    inbox: &Receiver<ToAgent>,
    commands: &Receiver<SessionCommand>,
) -> io::Result<()> {
    let mut stdin = AgentInput { stdin: BufWriter::new(stdin), gone: false };
    for line in first_lines {
        stdin.write(line);
    }
    let mut questions: Vec<(Envelope, Receiver<Outcome>)> = Vec::new();
    let mut permissions: Vec<(PermissionRequest, Receiver<PermissionDecision>)> = Vec::new();
    let mut interrupts = 0_u64;
    let mut commands_open = true;
    // A turn runs from a user message to its `result`; only then is there anything to interrupt.
    let mut turn_running = first_lines.iter().any(|line| line["type"] == "user");
    loop {
        let mut select = Select::new();
        let inbox_index = select.recv(inbox);
        let commands_index = commands_open.then(|| select.recv(commands));
        let question_base = questions.len();
        for (_, outcome) in &questions {
            select.recv(outcome);
        }
        for (_, decision) in &permissions {
            select.recv(decision);
        }
        let operation = select.select();
        let index = operation.index();
        if index == inbox_index {
            match operation.recv(inbox) {
                Ok(ToAgent::Question { envelope, outcome }) => questions.push((envelope, outcome)),
                Ok(ToAgent::Permission { request, decision }) => {
                    permissions.push((request, decision));
                }
                Ok(ToAgent::Line(line)) => stdin.write(&line),
                Ok(ToAgent::Cancelled { request_id }) => {
                    permissions.retain(|(request, _)| request.request_id != request_id);
                }
                Ok(ToAgent::TurnEnded) => turn_running = false,
                // Closed, or the reader and the session are gone: end the CLI's input.
                Ok(ToAgent::Close) | Err(_) => {
                    // Replies decided just before (a window ending everything as it closes) go
                    // out first: the select above picks among ready operations at random.
                    for (envelope, outcome) in &questions {
                        if let Ok(outcome) = outcome.try_recv()
                            && let Some(reply) = envelope.reply(&outcome)
                        {
                            stdin.write(&reply);
                        }
                    }
                    for (request, decision) in &permissions {
                        if let Ok(decision) = decision.try_recv() {
                            stdin.write(&stream::permission_reply(request, &decision));
                        }
                    }
                    if turn_running {
                        interrupts += 1;
                        let id = format!("askpane_interrupt_{interrupts}");
                        // The CLI may already be gone; closing stdin is what matters.
                        stdin.write(&stream::interrupt(&id));
                    }
                    return Ok(());
                }
            }
        } else if Some(index) == commands_index {
            match operation.recv(commands) {
                Ok(SessionCommand::UserTurn(text)) => {
                    stdin.write(&stream::user_message(&text));
                    turn_running = true;
                }
                // The window ends its own session by closing; only the inbox's relay gets End,
                // and it ends the session by closing this writer.
                Ok(SessionCommand::End | SessionCommand::Older { .. }) => {}
                Ok(SessionCommand::Interrupt) => {
                    interrupts += 1;
                    let id = format!("askpane_interrupt_{interrupts}");
                    stdin.write(&stream::interrupt(&id));
                }
                Err(_) => commands_open = false,
            }
        } else {
            // The first index after the fixed ones is the first question.
            let first = 1 + usize::from(commands_index.is_some());
            let offset = index - first;
            if offset < question_base {
                let received = operation.recv(&questions[offset].1);
                let (envelope, _) = questions.swap_remove(offset);
                // A withdrawn question gets no reply: the CLI already cancelled it.
                if let Ok(outcome) = received
                    && let Some(reply) = envelope.reply(&outcome)
                {
                    stdin.write(&reply);
                }
            } else {
                let position = offset - question_base;
                let received = operation.recv(&permissions[position].1);
                let (request, _) = permissions.swap_remove(position);
                if let Ok(decision) = received {
                    stdin.write(&stream::permission_reply(&request, &decision));
                }
            }
        }
    }
}
