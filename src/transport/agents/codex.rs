//! `askpane codex`: Codex's `codex app-server` run as a child (JSON-RPC lines over stdio), with
//! askpane as its host (issue 13): the [`HostedAgent`] for Codex. Its questions, permission cards
//! and transcript reach the window in the session vocabulary Claude Code's host uses; its writer
//! writes the handshake, user turns, interrupts and every reply in JSON-RPC. What the lines mean
//! is `protocol::codex` and `protocol::codex_server`; this file says which mean what to the
//! session. The threads are the session's (`codex-reader`, `codex-writer`, `codex-stderr`).

use std::collections::HashMap;
use std::io::{self, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::book::{Core, Policy};
use crate::protocol::codex::{self, UserInputRequest};
use crate::protocol::codex_server::{self as server, ServerLine};
use crate::protocol::inbox::ClientMode;
use crate::protocol::stream::{CliMessage, PermissionDecision, PermissionRequest, TurnResult};
use crate::protocol::{Envelope, Outcome, ReplyShape};

use super::{AgentInput, Host, HostOptions, HostedAgent, HostedSession, ThreadNames, Writing};
use crate::transport::lines::{self, Line};
use crate::transport::{IoThreads, Provenance, Request, RequestId, Responder};

/// What a question or permission hears when nobody can answer it.
const NO_WINDOW: &str = "askpane runs Codex without a window";

/// How to run Codex.
pub type CodexOptions = HostOptions<CodexOwn>;

/// What only Codex is run with.
#[derive(Clone, Debug)]
pub struct CodexOwn {
    /// The folder Codex works in (the thread's `cwd`).
    pub cwd: PathBuf,
}

/// A running Codex session.
pub type CodexSession = HostedSession<Codex>;

/// Codex as the reader sees it.
pub struct Codex {
    debug: bool,
    /// File-change items started in this turn, by item id: their diffs go on the card.
    started: HashMap<String, Value>,
}

impl HostedAgent for Codex {
    type Own = CodexOwn;
    type Writer = CodexWriter;
    const SOURCE: &'static str = server::SOURCE;
    const WORDS: &'static str = "Codex";
    const MODE: ClientMode = ClientMode::Codex;
    const THREADS: ThreadNames =
        ThreadNames { reader: "codex-reader", writer: "codex-writer", stderr: "codex-stderr" };

    fn command(options: &CodexOptions) -> Command {
        let mut command = Command::new(&options.program);
        command.arg("app-server").args(&options.extra_args).current_dir(&options.own.cwd);
        command
    }

    fn cannot_start(options: &CodexOptions, error: &io::Error) -> String {
        format!(
            "cannot start {} app-server: {error} (install Codex, or name it with --codex-bin or \
             ASKPANE_CODEX_BIN)",
            options.program.display()
        )
    }

    fn stderr_echo(options: &CodexOptions) -> Option<&'static str> {
        options.debug.then_some("codex")
    }

    fn provenance(options: &CodexOptions) -> Provenance {
        let project = options.own.cwd.file_name().map(|name| name.to_string_lossy().into_owned());
        Provenance::new(Self::SOURCE, project.clone()).with_project(project)
    }

    fn begin(options: &CodexOptions, _: &mut IoThreads) -> io::Result<(Codex, CodexWriter)> {
        let writer = CodexWriter {
            cwd: options.own.cwd.to_string_lossy().into_owned(),
            thread_id: None,
            turn_id: None,
            waiting_turns: options.prompt.iter().cloned().collect(),
            next_id: server::FIRST_FREE_ID,
        };
        Ok((Codex { debug: options.debug, started: HashMap::new() }, writer))
    }

    fn line(&mut self, line: &Value, host: &mut Host<Codex>) {
        match server::parse_server_line(line) {
            ServerLine::Response { id, result, error } => self.response(id, &result, error, host),
            ServerLine::Question { id, request } => self.question(id, request, host),
            ServerLine::CommandApproval { id, request } => self.permission(id, request, host),
            ServerLine::FileChangeApproval { id, item_id, reason } => {
                let started = self.started.remove(&item_id);
                let key = server::request_key(&id);
                let request =
                    server::file_change_permission(&key, &item_id, reason, started.as_ref());
                self.permission(id, request, host);
            }
            ServerLine::Unhandled { id, method } => {
                host.write(server::unhandled_reply(&id, &method));
                host.notice(format!(
                    "Codex sent a request askpane does not handle ({method}); askpane answered it \
                     with an error so that Codex does not wait."
                ));
            }
            ServerLine::Resolved { key } => host.resolved(&key),
            ServerLine::TurnStarted { turn_id } => {
                host.tell_writer(CodexNote::TurnStarted { turn_id })
            }
            ServerLine::TurnEnded(result) => self.turn_ended(result, host),
            ServerLine::ItemStarted { item } => {
                if item.get("type").and_then(Value::as_str) == Some("fileChange")
                    && let Some(id) = item.get("id").and_then(Value::as_str)
                {
                    self.started.insert(id.to_owned(), item.clone());
                }
            }
            ServerLine::Transcript(messages) => {
                for message in messages {
                    host.session(message);
                }
            }
            // Codex warns that the feature askpane switched on for the thread is unstable:
            // askpane chose it, the user cannot act on it.
            ServerLine::Problem { text, error: false }
                if text.contains(server::QUESTION_FEATURE.trim_start_matches("features.")) => {}
            ServerLine::Problem { text, error } => {
                let what = if error { "Codex reported an error" } else { "Codex warns" };
                if host.headless() || self.debug {
                    let level = if error { log::Level::Error } else { log::Level::Warn };
                    log::log!(level, "{what}: {text}");
                }
                if error {
                    host.notice(format!("{what}: {text}"));
                }
            }
            ServerLine::Other { method } => log::debug!("ignored `{method}` from Codex"),
        }
    }

    fn question_message(envelope: &Envelope, _: &Map<String, Value>) -> Option<Value> {
        match envelope {
            Envelope::CodexServer { id, request, .. } => {
                Some(server::question_message(id, request))
            }
            _ => None,
        }
    }
}

impl Codex {
    /// The answer to one of askpane's requests: the handshake goes on, a refusal is told.
    fn response(
        &mut self,
        id: Option<u64>,
        result: &Value,
        error: Option<String>,
        host: &mut Host<Codex>,
    ) {
        if let Some(error) = error {
            let what = match id {
                Some(server::INITIALIZE_ID) => "initialize",
                Some(server::THREAD_START_ID) => "thread/start",
                _ => "a request",
            };
            let text = format!("Codex refused askpane's {what}: {error}");
            if host.headless() {
                log::error!("{text}");
            }
            host.notice(text);
            if matches!(id, Some(server::INITIALIZE_ID | server::THREAD_START_ID)) {
                // Without a thread there is no session: end Codex, and the run with it.
                host.close();
            } else {
                // Most likely a turn/start that failed: no turn runs (the Stop button goes;
                // without a window the run ends).
                self.turn_ended(
                    TurnResult {
                        subtype: "error".to_owned(),
                        is_error: true,
                        text: Some(error),
                        ..TurnResult::default()
                    },
                    host,
                );
            }
            return;
        }
        match id {
            Some(server::INITIALIZE_ID) => host.tell_writer(CodexNote::Initialized),
            Some(server::THREAD_START_ID) => match server::session_info(result) {
                Some(info) => {
                    host.provenance_mut().session = Some(info.session_id.clone());
                    let thread_id = info.session_id.clone();
                    host.session(CliMessage::Init(info));
                    host.tell_writer(CodexNote::ThreadStarted { thread_id });
                }
                None => {
                    host.notice(
                        "Codex started no thread (its reply to thread/start has no id).".into(),
                    );
                    host.close();
                }
            },
            _ => {}
        }
    }

    fn question(&mut self, id: Value, request: UserInputRequest, host: &mut Host<Codex>) {
        let key = server::request_key(&id);
        let validated = match codex::to_ask(&request) {
            Ok(validated) => validated,
            Err(invalid) => {
                // Codex waits for an answer: the model hears why there is none.
                let outcome = Outcome::Refused { reason: invalid.to_string() };
                let reply = codex::response(&request, &outcome)
                    .map(|result| server::result_line(&id, result));
                host.refuse(reply, &invalid, "the model");
                return;
            }
        };
        // The window knows a request by its tool_use id: the model's call id, made unique with
        // the request key (a model may reuse a call id in a later turn). The envelope carries
        // the request itself, for an inbox to write Codex's result from (`askpane codex`'s relay).
        let envelope = Envelope::CodexServer {
            call: server::question_call(&id, &request),
            id: id.clone(),
            request: Box::new(request.clone()),
        };
        let (reply, outcome) = Responder::channel();
        let core = Core {
            id: RequestId::next(),
            envelope,
            ask: validated.ask,
            warnings: validated.warnings,
            provenance: host.provenance().clone(),
            reply_shape: ReplyShape::default(),
        };
        let request_for_ui = Request { core, policy: Policy::default(), reply };
        host.ask(key, request_for_ui, outcome, (id, request), false);
    }

    fn permission(&mut self, id: Value, request: PermissionRequest, host: &mut Host<Codex>) {
        if host.headless() {
            let decision = PermissionDecision::Deny { message: NO_WINDOW.to_owned() };
            log::warn!(
                "declined Codex's {} (no window to ask in)",
                crate::protocol::stream::tool_summary(&request.tool_name, &request.input)
            );
            host.write(server::approval_reply(&id, &decision));
            return;
        }
        host.permission(request.request_id.clone(), request, id);
    }

    /// The turn ended (completed, interrupted, failed): what it asked is withdrawn (Codex drops
    /// a later answer), and the transcript says how it ended.
    fn turn_ended(&mut self, result: TurnResult, host: &mut Host<Codex>) {
        host.resolve_all();
        self.started.clear();
        host.tell_writer(CodexNote::TurnEnded);
        host.session(CliMessage::Result(result));
    }
}

/// What Codex's reader tells its writer: the handshake's progress and the turn's.
pub enum CodexNote {
    /// `initialize` was answered: send `initialized` and start the thread.
    Initialized,
    /// The thread runs: user turns can go.
    ThreadStarted {
        thread_id: String,
    },
    TurnStarted {
        turn_id: String,
    },
    TurnEnded,
}

/// The writer's state: the handshake's progress, the running turn, and askpane's next id.
pub struct CodexWriter {
    cwd: String,
    thread_id: Option<String>,
    turn_id: Option<String>,
    /// User turns typed before the thread started (the first prompt among them).
    waiting_turns: Vec<String>,
    next_id: u64,
}

impl CodexWriter {
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}

impl Writing for CodexWriter {
    /// The JSON-RPC id the result goes to, and what was asked.
    type Question = (Value, UserInputRequest);
    /// The JSON-RPC id the decision goes to.
    type Permission = Value;
    type Note = CodexNote;

    fn begin(&mut self, out: &mut AgentInput) {
        out.write(&server::initialize(env!("CARGO_PKG_VERSION")));
    }

    fn note(&mut self, note: CodexNote, out: &mut AgentInput) {
        match note {
            CodexNote::Initialized => {
                out.write(&server::initialized());
                out.write(&server::thread_start(&self.cwd));
            }
            CodexNote::ThreadStarted { thread_id } => {
                self.thread_id = Some(thread_id);
                for text in std::mem::take(&mut self.waiting_turns) {
                    self.user_turn(text, out);
                }
            }
            CodexNote::TurnStarted { turn_id } => self.turn_id = Some(turn_id),
            CodexNote::TurnEnded => self.turn_id = None,
        }
    }

    fn user_turn(&mut self, text: String, out: &mut AgentInput) {
        match self.thread_id.clone() {
            Some(thread_id) => {
                let id = self.id();
                out.write(&server::turn_start(id, &thread_id, &text));
            }
            None => self.waiting_turns.push(text),
        }
    }

    fn interrupt(&mut self, out: &mut AgentInput) {
        if let (Some(thread_id), Some(turn_id)) = (self.thread_id.clone(), self.turn_id.clone()) {
            let id = self.id();
            out.write(&server::turn_interrupt(id, &thread_id, &turn_id));
        }
    }

    fn close(&mut self, out: &mut AgentInput) {
        self.interrupt(out);
    }

    fn answer(
        &mut self,
        (id, request): &(Value, UserInputRequest),
        outcome: &Outcome,
        out: &mut AgentInput,
    ) {
        // A withdrawn question gets no result: Codex resolved it already.
        if let Some(result) = codex::response(request, outcome) {
            out.write(&server::result_line(id, result));
        }
    }

    fn decide(&mut self, id: &Value, decision: &PermissionDecision, out: &mut AgentInput) {
        out.write(&server::approval_reply(id, decision));
    }
}

/// One hook as Codex's `hooks/list` reports it: the key and hash its trust is recorded under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedHook {
    pub key: String,
    pub command: String,
    pub current_hash: String,
    pub trusted: bool,
}

/// The hooks Codex sees for `cwd`, asked of a short-lived `codex app-server` (`hooks/list`):
/// the only place the hash Codex trusts a hook by is computed. Bounded by `within`.
pub fn list_hooks(program: &PathBuf, cwd: &str, within: Duration) -> io::Result<Vec<ListedHook>> {
    use std::io::Write as _;
    let mut child = Command::new(program)
        .arg("app-server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| {
            io::Error::new(error.kind(), format!("cannot start {}: {error}", program.display()))
        })?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("no pipes to codex app-server"));
    };
    let (sender, lines) = crossbeam_channel::unbounded::<Value>();
    let reader = crate::transport::spawn_named("codex-hooks-list", move || {
        let mut stdout = BufReader::new(stdout);
        let mut buffer = Vec::new();
        // A line that is not JSON is skipped; a read that fails ends the list.
        while let Ok(Some(line)) = lines::read_line(&mut stdout, &mut buffer) {
            if let Line::Json(value) = line
                && sender.send(value).is_err()
            {
                return;
            }
        }
    })?;
    let list = serde_json::json!({"id": server::THREAD_START_ID, "method": "hooks/list",
        "params": {"cwds": [cwd]}});
    let mut written = String::new();
    for line in [server::initialize(env!("CARGO_PKG_VERSION")), server::initialized(), list] {
        written.push_str(&line.to_string());
        written.push('\n');
    }
    let sent = stdin.write_all(written.as_bytes()).and_then(|()| stdin.flush());
    let deadline = std::time::Instant::now() + within;
    let mut answer = None;
    while sent.is_ok() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line)
                if line.get("method").is_none()
                    && line.get("id").and_then(Value::as_u64) == Some(server::THREAD_START_ID) =>
            {
                answer = Some(line);
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    sent?;
    let answer = answer.ok_or_else(|| {
        io::Error::new(io::ErrorKind::TimedOut, "codex app-server did not answer hooks/list")
    })?;
    if let Some(error) = answer.get("error") {
        return Err(io::Error::other(format!("codex app-server refused hooks/list: {error}")));
    }
    let data = answer.pointer("/result/data").and_then(Value::as_array).cloned();
    let data = data.unwrap_or_default();
    let text = |hook: &Value, key: &str| {
        hook.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
    };
    Ok(data
        .iter()
        .flat_map(|entry| entry.get("hooks").and_then(Value::as_array).cloned().unwrap_or_default())
        .map(|hook| ListedHook {
            key: text(&hook, "key"),
            command: text(&hook, "command"),
            current_hash: text(&hook, "currentHash"),
            trusted: hook.get("trustStatus").and_then(Value::as_str) == Some("trusted"),
        })
        .collect())
}
