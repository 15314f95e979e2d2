//! `askpane codex`: Codex's `codex app-server` run as a child (JSON-RPC lines over stdio), with
//! askpane as its host (issue 13). Shaped like [`super::claude`]: `codex-reader` reads the
//! server's stdout and feeds the UI channel with questions, permission cards and the transcript
//! in the session vocabulary Claude Code's host uses; `codex-writer` owns the server's stdin and
//! writes the handshake, user turns, interrupts and every reply as its outcome arrives;
//! `codex-stderr` keeps the last lines the server wrote to stderr. What the lines mean is
//! `protocol::codex` and `protocol::codex_server`; this file only moves them.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, BufWriter, Read};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;

use crossbeam_channel::{Receiver, Select, Sender};
use serde_json::Value;

use crate::book::Core;
use crate::protocol::codex::{self, UserInputRequest};
use crate::protocol::codex_server::{self as server, ServerLine};
use crate::protocol::stream::{CliMessage, PermissionDecision, PermissionRequest, TurnResult};
use crate::protocol::{Envelope, Outcome, ReplyShape};

use super::Autopilot;
use super::{self as agents, AgentSession, Closing, StderrKeeping, StderrTail};
use crate::transport::group::GroupChild;
use crate::transport::lines::write_line;
use crate::transport::{
    Inbound, IoThreads, PermissionAsk, Provenance, Request, RequestId, Responder, SessionCommand,
    SessionEvent, UiSender,
};

/// How long the server gets to exit after its stdin closes, before its process group gets
/// SIGTERM, and again before SIGKILL.
pub const GRACE: Duration = agents::GRACE;
/// What a question or permission hears when nobody can answer it.
const NO_WINDOW: &str = "askpane runs Codex without a window";

/// How to run Codex.
#[derive(Clone, Debug)]
pub struct CodexOptions {
    pub program: PathBuf,
    /// Extra arguments for `codex app-server` (after `--`).
    pub extra_args: Vec<String>,
    /// The folder Codex works in (the thread's `cwd`).
    pub cwd: PathBuf,
    /// The first user turn; without it the window asks for one.
    pub prompt: Option<String>,
    /// Log what askpane ignores, and Codex's stderr, to stderr.
    pub debug: bool,
    /// How questions are answered besides the window (`--answers`, `--submit`, no display).
    pub autopilot: Autopilot,
}

/// A running Codex session: the child, and the channel the window's prompts and Stop go into.
pub struct CodexSession(AgentSession<ToAgent>);

/// Lines for `codex app-server`'s stdin, written by its writer thread in turn with its own.
#[derive(Clone)]
pub struct CodexLines(Sender<ToAgent>);

impl CodexLines {
    /// Writes `line` to the server's stdin (dropped if the server is gone: its end is reported).
    pub fn write(&self, line: Value) {
        let _ = self.0.send(ToAgent::Line(line));
    }
}

/// What the writer is told, besides the window's commands.
enum ToAgent {
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
    /// Write the result for this question once its outcome arrives.
    Question {
        id: Value,
        key: String,
        request: UserInputRequest,
        outcome: Receiver<Outcome>,
    },
    /// Write the reply to this approval once it is decided.
    Permission {
        id: Value,
        key: String,
        decision: Receiver<PermissionDecision>,
    },
    /// Codex needs no answer to this request any more (resolved, or its turn ended).
    Resolved {
        key: String,
    },
    /// Write this line now.
    Line(Value),
    /// Interrupt the turn (if one runs), close the server's stdin and end.
    Close,
}

impl Closing for ToAgent {
    fn close() -> Self {
        ToAgent::Close
    }
}

impl CodexSession {
    /// Starts `codex app-server` and its threads. Questions and permissions go to `to_ui`.
    pub fn start(
        options: &CodexOptions,
        to_ui: UiSender,
        threads: &mut IoThreads,
    ) -> io::Result<CodexSession> {
        let mut command = Command::new(&options.program);
        command.arg("app-server").args(&options.extra_args).current_dir(&options.cwd);
        let started = agents::start(
            &mut command,
            |error| {
                format!(
                    "cannot start {} app-server: {error} (install Codex, or name it with \
                     --codex-bin or ASKPANE_CODEX_BIN)",
                    options.program.display()
                )
            },
            StderrKeeping { thread: "codex-stderr", echo: options.debug.then_some("codex") },
            threads,
        )?;
        let session = CodexSession(started.session);

        let cwd = &options.cwd;
        let writer = Writer {
            stdin: AgentInput { stdin: BufWriter::new(started.stdin), gone: false },
            cwd: cwd.to_string_lossy().into_owned(),
            thread_id: None,
            turn_id: None,
            waiting_turns: options.prompt.iter().cloned().collect(),
            next_id: server::FIRST_FREE_ID,
        };
        let (writer_inbox, command_inbox) = (started.writer_inbox, started.command_inbox);
        threads.spawn("codex-writer", move || writer.run(&writer_inbox, &command_inbox))?;

        let project = cwd.file_name().map(|name| name.to_string_lossy().into_owned());
        let reader = Reader {
            to_ui,
            to_writer: started.to_writer,
            debug: options.debug,
            autopilot: options.autopilot.clone(),
            provenance: Provenance::new(server::SOURCE, project.clone()).with_project(project),
            questions: HashMap::new(),
            permissions: Vec::new(),
            started: HashMap::new(),
            turn_running: options.prompt.is_some(),
            agent: started.agent,
            stderr_tail: started.stderr_tail,
        };
        threads.spawn("codex-reader", move || reader.run(started.stdout))?;
        Ok(session)
    }

    /// The channel the window sends prompts and Stop on.
    pub fn commands(&self) -> Sender<SessionCommand> {
        self.0.commands()
    }

    /// The server's stdin, for replies computed elsewhere (the inbox's, through the relay).
    pub fn lines(&self) -> CodexLines {
        CodexLines(self.0.to_writer())
    }

    /// Ends the session: replies already decided go out, the turn is interrupted and the
    /// server's stdin closed; after `grace` SIGTERM to its process group, after another `grace`
    /// SIGKILL (dropped, the session ends Codex too). Returns the server's exit status.
    pub fn shut_down(self, grace: Duration) -> io::Result<ExitStatus> {
        self.0.shut_down(grace)
    }
}

struct Reader {
    to_ui: UiSender,
    to_writer: Sender<ToAgent>,
    debug: bool,
    autopilot: Autopilot,
    provenance: Provenance,
    /// Open questions: request key → the tool_use id the window knows them by.
    questions: HashMap<String, String>,
    /// Permission cards shown, by request key.
    permissions: Vec<String>,
    /// File-change items started in this turn, by item id: their diffs go on the card.
    started: HashMap<String, Value>,
    turn_running: bool,
    agent: GroupChild,
    stderr_tail: StderrTail,
}

impl Reader {
    fn run(mut self, stdout: impl Read) -> io::Result<()> {
        let mut reader = BufReader::with_capacity(1 << 20, stdout);
        let mut line = Vec::with_capacity(1 << 16);
        let mut reported_malformed = false;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Value>(text) {
                Ok(value) => self.handle(server::parse_server_line(&value)),
                Err(error) if !reported_malformed => {
                    reported_malformed = true;
                    let excerpt: String = String::from_utf8_lossy(text).chars().take(80).collect();
                    self.to_ui.send(Inbound::Notice(format!(
                        "Codex wrote a line that is not JSON ({error}): {excerpt}… askpane skips \
                         such lines and goes on reading."
                    )));
                }
                Err(_) => {}
            }
        }
        self.ended();
        Ok(())
    }

    fn session(&self, message: CliMessage) {
        self.to_ui.send(Inbound::Session(Box::new(SessionEvent::Message(message))));
    }

    fn handle(&mut self, line: ServerLine) {
        match line {
            ServerLine::Response { id, result, error } => self.response(id, &result, error),
            ServerLine::Question { id, request } => self.question(id, request),
            ServerLine::CommandApproval { id, request } => self.permission(id, request),
            ServerLine::FileChangeApproval { id, item_id, reason } => {
                let started = self.started.remove(&item_id);
                let key = server::request_key(&id);
                let request =
                    server::file_change_permission(&key, &item_id, reason, started.as_ref());
                self.permission(id, request);
            }
            ServerLine::Unhandled { id, method } => {
                let _ = self.to_writer.send(ToAgent::Line(server::unhandled_reply(&id, &method)));
                self.to_ui.send(Inbound::Notice(format!(
                    "Codex sent a request askpane does not handle ({method}); askpane answered it \
                     with an error so that Codex does not wait."
                )));
            }
            ServerLine::Resolved { key } => self.resolved(&key),
            ServerLine::TurnStarted { turn_id } => {
                self.turn_running = true;
                let _ = self.to_writer.send(ToAgent::TurnStarted { turn_id });
            }
            ServerLine::TurnEnded(result) => self.turn_ended(result),
            ServerLine::ItemStarted { item } => {
                if item.get("type").and_then(Value::as_str) == Some("fileChange")
                    && let Some(id) = item.get("id").and_then(Value::as_str)
                {
                    self.started.insert(id.to_owned(), item.clone());
                }
            }
            ServerLine::Transcript(messages) => {
                for message in messages {
                    self.session(message);
                }
            }
            // Codex warns that the feature askpane switched on for the thread is unstable:
            // askpane chose it, the user cannot act on it.
            ServerLine::Problem { text, error: false }
                if text.contains(server::QUESTION_FEATURE.trim_start_matches("features.")) => {}
            ServerLine::Problem { text, error } => {
                let what = if error { "Codex reported an error" } else { "Codex warns" };
                if self.autopilot.headless || self.debug {
                    eprintln!("askpane: {what}: {text}");
                }
                if error {
                    self.to_ui.send(Inbound::Notice(format!("{what}: {text}")));
                }
            }
            ServerLine::Other { method } => {
                if self.debug {
                    eprintln!("askpane: debug: ignored `{method}` from Codex");
                }
            }
        }
    }

    /// The answer to one of askpane's requests: the handshake goes on, a refusal is told.
    fn response(&mut self, id: Option<u64>, result: &Value, error: Option<String>) {
        if let Some(error) = error {
            let what = match id {
                Some(server::INITIALIZE_ID) => "initialize",
                Some(server::THREAD_START_ID) => "thread/start",
                _ => "a request",
            };
            let text = format!("Codex refused askpane's {what}: {error}");
            if self.autopilot.headless {
                eprintln!("askpane: {text}");
            }
            self.to_ui.send(Inbound::Notice(text));
            if matches!(id, Some(server::INITIALIZE_ID | server::THREAD_START_ID)) {
                // Without a thread there is no session: end Codex, and the run with it.
                let _ = self.to_writer.send(ToAgent::Close);
            } else {
                // Most likely a turn/start that failed: no turn runs (the Stop button goes;
                // without a window the run ends).
                self.turn_ended(TurnResult {
                    subtype: "error".to_owned(),
                    is_error: true,
                    text: Some(error),
                    ..TurnResult::default()
                });
            }
            return;
        }
        match id {
            Some(server::INITIALIZE_ID) => {
                let _ = self.to_writer.send(ToAgent::Initialized);
            }
            Some(server::THREAD_START_ID) => match server::session_info(result) {
                Some(info) => {
                    self.provenance.session = Some(info.session_id.clone());
                    let thread_id = info.session_id.clone();
                    self.session(CliMessage::Init(info));
                    let _ = self.to_writer.send(ToAgent::ThreadStarted { thread_id });
                }
                None => {
                    self.to_ui.send(Inbound::Notice(
                        "Codex started no thread (its reply to thread/start has no id).".into(),
                    ));
                    let _ = self.to_writer.send(ToAgent::Close);
                }
            },
            _ => {}
        }
    }

    fn question(&mut self, id: Value, request: UserInputRequest) {
        let key = server::request_key(&id);
        let validated = match codex::to_ask(&request) {
            Ok(validated) => validated,
            Err(invalid) => {
                // Codex waits for an answer: the model hears why there is none.
                let outcome = Outcome::Refused { reason: invalid.to_string() };
                if let Some(result) = codex::response(&request, &outcome) {
                    let _ = self.to_writer.send(ToAgent::Line(server::result_line(&id, result)));
                }
                self.to_ui.send(Inbound::Notice(format!(
                    "Codex asked questions askpane cannot show ({invalid}); the model was told why."
                )));
                return;
            }
        };
        // The window knows a request by its tool_use id: the model's call id, made unique with
        // the request key (a model may reuse a call id in a later turn). The envelope carries
        // the request itself, for an inbox to write Codex's result from (`askpane codex`'s relay).
        let tool_use_id = server::question_call(&id, &request);
        let (reply, outcome) = Responder::channel();
        let envelope = Envelope::CodexServer {
            call: tool_use_id.clone(),
            id: id.clone(),
            request: Box::new(request.clone()),
        };
        let core = Core {
            id: RequestId::next(),
            envelope,
            ask: validated.ask,
            warnings: validated.warnings,
            provenance: self.provenance.clone(),
            reply_shape: ReplyShape::default(),
        };
        let policy = self.autopilot.policy(&core.ask, NO_WINDOW, &self.to_ui);
        let request_for_ui = Request { core, policy, reply };
        self.questions.insert(key.clone(), tool_use_id);
        let _ = self.to_writer.send(ToAgent::Question { id, key, request, outcome });
        // Whoever shows it lets the book decide by this policy, and records what it decides.
        self.to_ui.send(Inbound::Ask(Box::new(request_for_ui)));
    }

    fn permission(&mut self, id: Value, request: PermissionRequest) {
        if self.autopilot.headless {
            let decision = PermissionDecision::Deny { message: NO_WINDOW.to_owned() };
            eprintln!(
                "askpane: declined Codex's {} (no window to ask in)",
                crate::protocol::stream::tool_summary(&request.tool_name, &request.input)
            );
            let _ = self.to_writer.send(ToAgent::Line(server::approval_reply(&id, &decision)));
            return;
        }
        let key = request.request_id.clone();
        let (reply, decision) = Responder::channel();
        self.permissions.push(key.clone());
        let _ = self.to_writer.send(ToAgent::Permission { id, key, decision });
        let ask = PermissionAsk {
            id: RequestId::next(),
            request,
            provenance: self.provenance.clone(),
            reply,
        };
        self.to_ui.send(Inbound::Permission(Box::new(ask)));
    }

    /// Codex needs no answer to this request any more: its card goes at once.
    fn resolved(&mut self, key: &str) {
        let _ = self.to_writer.send(ToAgent::Resolved { key: key.to_owned() });
        if let Some(tool_use_id) = self.questions.remove(key) {
            self.to_ui.send(Inbound::Withdraw { tool_use_id });
        }
        if let Some(index) = self.permissions.iter().position(|open| open == key) {
            let request_id = self.permissions.remove(index);
            self.to_ui.send(Inbound::WithdrawPermission { request_id });
        }
    }

    /// The turn ended (completed, interrupted, failed): what it asked is withdrawn (Codex drops
    /// a later answer), and the transcript says how it ended.
    fn turn_ended(&mut self, result: TurnResult) {
        self.turn_running = false;
        let open: Vec<String> =
            self.questions.keys().chain(self.permissions.iter()).cloned().collect();
        for key in open {
            self.resolved(&key);
        }
        self.started.clear();
        let _ = self.to_writer.send(ToAgent::TurnEnded);
        self.session(CliMessage::Result(result));
    }

    /// The server closed its stdout: it is ending. Clears what it asked and says how it ended.
    fn ended(mut self) {
        let open: Vec<String> =
            self.questions.keys().chain(self.permissions.iter()).cloned().collect();
        for key in open {
            self.resolved(&key);
        }
        let ended = agents::ended(&self.agent, &self.stderr_tail);
        self.to_ui.send(Inbound::Session(Box::new(ended)));
    }
}

/// The server's stdin. Once a write fails (the server exited), later lines are dropped: the
/// reader reports how it ended.
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

/// The writer's state: the handshake's progress, the running turn, and askpane's next id.
struct Writer {
    stdin: AgentInput,
    cwd: String,
    thread_id: Option<String>,
    turn_id: Option<String>,
    /// User turns typed before the thread started.
    waiting_turns: Vec<String>,
    next_id: u64,
}

/// An open question: its JSON-RPC id and key, what was asked, and where its outcome arrives.
type OpenQuestion = (Value, String, UserInputRequest, Receiver<Outcome>);
/// An open approval: its JSON-RPC id and key, and where its decision arrives.
type OpenPermission = (Value, String, Receiver<PermissionDecision>);

impl Writer {
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn user_turn(&mut self, text: String) {
        match self.thread_id.clone() {
            Some(thread_id) => {
                let id = self.id();
                self.stdin.write(&server::turn_start(id, &thread_id, &text));
            }
            None => self.waiting_turns.push(text),
        }
    }

    fn interrupt(&mut self) {
        if let (Some(thread_id), Some(turn_id)) = (self.thread_id.clone(), self.turn_id.clone()) {
            let id = self.id();
            self.stdin.write(&server::turn_interrupt(id, &thread_id, &turn_id));
        }
    }

    fn answer(&mut self, id: &Value, request: &UserInputRequest, outcome: &Outcome) {
        // A withdrawn question gets no result: Codex resolved it already.
        if let Some(result) = codex::response(request, outcome) {
            self.stdin.write(&server::result_line(id, result));
        }
    }

    #[allow(
        clippy::indexing_slicing,
        reason = "crossbeam's Select hands back the index of an operation added from these same \
                  vectors, and a selected operation must be completed on that very receiver"
    )]
    fn run(
        mut self,
        inbox: &Receiver<ToAgent>,
        commands: &Receiver<SessionCommand>,
    ) -> io::Result<()> {
        self.stdin.write(&server::initialize(env!("CARGO_PKG_VERSION")));
        let mut questions: Vec<OpenQuestion> = Vec::new();
        let mut permissions: Vec<OpenPermission> = Vec::new();
        let mut commands_open = true;
        loop {
            let mut select = Select::new();
            let inbox_index = select.recv(inbox);
            let commands_index = commands_open.then(|| select.recv(commands));
            for (_, _, _, outcome) in &questions {
                select.recv(outcome);
            }
            for (_, _, decision) in &permissions {
                select.recv(decision);
            }
            let operation = select.select();
            let index = operation.index();
            if index == inbox_index {
                match operation.recv(inbox) {
                    Ok(ToAgent::Initialized) => {
                        self.stdin.write(&server::initialized());
                        self.stdin.write(&server::thread_start(&self.cwd));
                    }
                    Ok(ToAgent::ThreadStarted { thread_id }) => {
                        self.thread_id = Some(thread_id);
                        for text in std::mem::take(&mut self.waiting_turns) {
                            self.user_turn(text);
                        }
                    }
                    Ok(ToAgent::TurnStarted { turn_id }) => self.turn_id = Some(turn_id),
                    Ok(ToAgent::TurnEnded) => self.turn_id = None,
                    Ok(ToAgent::Question { id, key, request, outcome }) => {
                        questions.push((id, key, request, outcome));
                    }
                    Ok(ToAgent::Permission { id, key, decision }) => {
                        permissions.push((id, key, decision));
                    }
                    Ok(ToAgent::Resolved { key }) => {
                        questions.retain(|(_, open, _, _)| open != &key);
                        permissions.retain(|(_, open, _)| open != &key);
                    }
                    Ok(ToAgent::Line(line)) => self.stdin.write(&line),
                    Ok(ToAgent::Close) | Err(_) => {
                        // Replies decided just before (a window ending everything as it closes,
                        // a signal) go out first: the select above picks among ready operations
                        // at random.
                        for (id, _, request, outcome) in &questions {
                            if let Ok(outcome) = outcome.try_recv() {
                                self.answer(id, request, &outcome);
                            }
                        }
                        for (id, _, decision) in &permissions {
                            if let Ok(decision) = decision.try_recv() {
                                self.stdin.write(&server::approval_reply(id, &decision));
                            }
                        }
                        self.interrupt();
                        // Closing stdin is what ends the server.
                        return Ok(());
                    }
                }
            } else if Some(index) == commands_index {
                match operation.recv(commands) {
                    Ok(SessionCommand::UserTurn(text)) => self.user_turn(text),
                    Ok(SessionCommand::Interrupt) => self.interrupt(),
                    // The window ends its own session by closing (`shut_down`).
                    Ok(SessionCommand::End | SessionCommand::Older { .. }) => {}
                    Err(_) => commands_open = false,
                }
            } else {
                let first = 1 + usize::from(commands_index.is_some());
                let offset = index - first;
                if offset < questions.len() {
                    let received = operation.recv(&questions[offset].3);
                    let (id, _, request, _) = questions.swap_remove(offset);
                    if let Ok(outcome) = received {
                        self.answer(&id, &request, &outcome);
                    }
                } else {
                    let position = offset - questions.len();
                    let received = operation.recv(&permissions[position].2);
                    let (id, _, _) = permissions.swap_remove(position);
                    if let Ok(decision) = received {
                        self.stdin.write(&server::approval_reply(&id, &decision));
                    }
                }
            }
        }
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
    let reader = std::thread::Builder::new().name("codex-hooks-list".into()).spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if let Ok(value) = serde_json::from_str::<Value>(&line)
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
