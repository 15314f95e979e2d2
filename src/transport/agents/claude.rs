//! `askpane claude`: Claude Code run as a child in stream-json mode, with askpane as its host: the
//! [`HostedAgent`] for Claude Code. What its lines mean is `protocol::stream`; this file says
//! which mean what to the session, and how replies, prompts and interrupts are written. The
//! threads are the session's (`agent-reader`, `agent-writer`, `agent-stderr`); with
//! `--print-stream`, `stream-copy` is the one thread that writes askpane's stdout: every CLI
//! line, unchanged.

use std::io::{self, BufWriter, Write};
use std::process::Command;

use crossbeam_channel::{Receiver, Sender};
use serde_json::{Map, Value};

use crate::protocol::inbox::ClientMode;
use crate::protocol::stream::{self, CliMessage, PermissionDecision, PermissionRequest};
use crate::protocol::{Envelope, Incoming, Outcome};

pub use super::Autopilot;
use super::{AgentInput, Host, HostOptions, HostedAgent, HostedSession, ThreadNames, Writing};
use crate::transport::{IoThreads, Provenance, Request};

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

/// How to run the CLI.
pub type ClaudeOptions = HostOptions<ClaudeOwn>;

/// What only Claude Code is run with.
#[derive(Clone, Debug, Default)]
pub struct ClaudeOwn {
    /// Tools allowed without asking (`--allow-tools`).
    pub allow_tools: Vec<String>,
    /// Copy every CLI line to askpane's stdout.
    pub print_stream: bool,
}

/// A running Claude Code session.
pub type ClaudeSession = HostedSession<Claude>;

/// Claude Code as the reader sees it.
pub struct Claude {
    copy: Option<Sender<Vec<u8>>>,
    allow_tools: Vec<String>,
    /// The session's `system/init` advertises `ask_user_question_unanswered_v1`.
    marks_skipped: bool,
}

impl HostedAgent for Claude {
    type Own = ClaudeOwn;
    type Writer = ClaudeWriter;
    const SOURCE: &'static str = "claude";
    const WORDS: &'static str = "Claude Code";
    const MODE: ClientMode = ClientMode::Claude;
    const THREADS: ThreadNames =
        ThreadNames { reader: "agent-reader", writer: "agent-writer", stderr: "agent-stderr" };

    fn command(options: &ClaudeOptions) -> Command {
        let mut command = Command::new(&options.program);
        command.args(HOST_ARGS).args(&options.extra_args);
        command
    }

    fn cannot_start(options: &ClaudeOptions, error: &io::Error) -> String {
        format!("cannot start {}: {error}", options.program.display())
    }

    fn stderr_echo(_: &ClaudeOptions) -> Option<&'static str> {
        Some("claude")
    }

    fn provenance(_: &ClaudeOptions) -> Provenance {
        let project = super::project_name();
        Provenance::new(Self::SOURCE, project.clone()).with_project(project)
    }

    fn begin(
        options: &ClaudeOptions,
        threads: &mut IoThreads,
    ) -> io::Result<(Claude, ClaudeWriter)> {
        let copy = match options.own.print_stream {
            true => {
                // Bounded: a slow reader of askpane's stdout slows the relay, it does not grow it.
                let (sender, receiver) = crossbeam_channel::bounded::<Vec<u8>>(64);
                threads.spawn("stream-copy", move || copy_stream(&receiver))?;
                Some(sender)
            }
            false => None,
        };
        let reader =
            Claude { copy, allow_tools: options.own.allow_tools.clone(), marks_skipped: false };
        let writer =
            ClaudeWriter { prompt: options.prompt.clone(), turn_running: false, interrupts: 0 };
        Ok((reader, writer))
    }

    fn raw_line(&mut self, line: &[u8]) {
        if let Some(copy) = &self.copy {
            // askpane's stdout went away: stop copying, keep hosting.
            if copy.send(line.to_vec()).is_err() {
                self.copy = None;
            }
        }
    }

    fn line(&mut self, line: &Value, host: &mut Host<Claude>) {
        match stream::parse_cli_line(line) {
            CliMessage::Question(incoming) => self.question(incoming, host),
            CliMessage::Permission(request) => self.permission(request, host),
            CliMessage::Cancel { request_id } => host.resolved(&request_id),
            CliMessage::Unhandled { request_id, subtype, problem } => {
                // Claude Code waits for an answer to every request: unanswered, it would wait
                // for ever. One reply each, and the user hears what was turned away.
                host.write(stream::unhandled_reply(&request_id, &subtype, &problem));
                let what = match subtype.as_str() {
                    "elicitation" => "asked for input for an MCP server (an elicitation); askpane \
                                      cannot show such forms and declined it"
                        .to_owned(),
                    _ => format!(
                        "sent a request askpane does not handle ({problem}); askpane \
                                  answered it with an error so that Claude Code does not wait"
                    ),
                };
                host.notice(format!("Claude Code {what}."));
            }
            CliMessage::Response { request_id, error: Some(error) } => {
                host.notice(format!("Claude Code refused askpane's request {request_id}: {error}"));
            }
            CliMessage::Other { kind } => {
                log::debug!("ignored a `{kind}` line from Claude Code");
            }
            CliMessage::Response { .. } => {}
            CliMessage::Init(info) => {
                self.marks_skipped = info.accepts_unanswered();
                host.session(CliMessage::Init(info));
            }
            CliMessage::Result(result) => {
                host.tell_writer(TurnEnded);
                host.session(CliMessage::Result(result));
            }
            message => host.session(message),
        }
    }

    fn question_message(envelope: &Envelope, input: &Map<String, Value>) -> Option<Value> {
        match envelope {
            Envelope::ControlRequest { request_id, tool_use_id } => {
                let input = Value::Object(input.clone());
                Some(stream::question_request(request_id, tool_use_id.as_deref(), &input))
            }
            _ => None,
        }
    }
}

impl Claude {
    fn question(&mut self, incoming: Incoming, host: &mut Host<Claude>) {
        let envelope = incoming.envelope.clone();
        // Claude Code names the question by its control request's id when it cancels it.
        let key = match &envelope {
            Envelope::ControlRequest { request_id, .. } => request_id.clone(),
            _ => String::new(),
        };
        match Request::new(incoming, host.provenance().clone()) {
            Ok((request, outcome)) => host.ask(key, request, outcome, envelope, self.marks_skipped),
            Err(invalid) => {
                let reply = envelope.reply(&Outcome::Refused { reason: invalid.to_string() });
                host.refuse(reply, &invalid, "the agent");
            }
        }
    }

    fn permission(&mut self, request: PermissionRequest, host: &mut Host<Claude>) {
        let decided = match self.allow_tools.iter().any(|tool| tool == &request.tool_name) {
            true => Some(PermissionDecision::AllowOnce),
            false if host.headless() => Some(PermissionDecision::Deny {
                message: "No human is available to approve this tool call (askpane runs without \
                          a window)."
                    .to_owned(),
            }),
            false => None,
        };
        match decided {
            Some(decision) => host.write(stream::permission_reply(&request, &decision)),
            None => host.permission(request.request_id.clone(), request.clone(), request),
        }
    }
}

/// The one thing Claude Code's reader tells its writer: a `result` came, no turn runs now.
pub struct TurnEnded;

/// The writer's state: the first prompt, whether a turn runs (only then is there anything to
/// interrupt), and the interrupts' ids.
pub struct ClaudeWriter {
    prompt: Option<String>,
    turn_running: bool,
    interrupts: u64,
}

impl ClaudeWriter {
    fn interrupt_now(&mut self, out: &mut AgentInput) {
        self.interrupts += 1;
        out.write(&stream::interrupt(&format!("askpane_interrupt_{}", self.interrupts)));
    }
}

impl Writing for ClaudeWriter {
    type Question = Envelope;
    type Permission = PermissionRequest;
    type Note = TurnEnded;

    fn begin(&mut self, out: &mut AgentInput) {
        out.write(&stream::initialize("askpane_init"));
        if let Some(prompt) = self.prompt.take() {
            out.write(&stream::user_message(&prompt));
            // A turn runs from a user message to its `result`.
            self.turn_running = true;
        }
    }

    fn note(&mut self, TurnEnded: TurnEnded, _: &mut AgentInput) {
        self.turn_running = false;
    }

    fn user_turn(&mut self, text: String, out: &mut AgentInput) {
        out.write(&stream::user_message(&text));
        self.turn_running = true;
    }

    fn interrupt(&mut self, out: &mut AgentInput) {
        self.interrupt_now(out);
    }

    fn close(&mut self, out: &mut AgentInput) {
        if self.turn_running {
            self.interrupt_now(out);
        }
    }

    fn answer(&mut self, envelope: &Envelope, outcome: &Outcome, out: &mut AgentInput) {
        // A withdrawn question gets no reply: the CLI already cancelled it.
        if let Some(reply) = envelope.reply(outcome) {
            out.write(&reply);
        }
    }

    fn decide(
        &mut self,
        request: &PermissionRequest,
        decision: &PermissionDecision,
        out: &mut AgentInput,
    ) {
        out.write(&stream::permission_reply(request, decision));
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
