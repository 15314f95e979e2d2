//! The inbox's local API (issue 10): the JSON-lines messages between `askpane inbox` and its
//! clients on the inbox socket. Pure data (serde), no IO: the socket is `transport::inbox`.
//!
//! A connection opens with the inbox's [`InboxMessage::Hello`] (the protocol [`VERSION`]). A
//! client then sends any of [`ClientMessage`]: `ask` (an agent's message exactly as received,
//! with the client's [`Policy`]), `withdraw`, `list`, `subscribe`, `quit`, a front end's `answer`,
//! `decline` and `decide` (issue 31), or its own `hello`
//! to check the version. Every `ask` gets an `accepted` and, once decided, an `outcome` holding
//! the reply line the client prints and the exit code it ends with. A line that is not a
//! message gets an `error` that says what was wrong, and the connection stays usable.
//!
//! A client that hosts an agent session (`askpane claude`) also sends `host` once, then its
//! transcript as `session_event`s and its tool permissions as `permission`s; the inbox shows the
//! session as an entry of its own, and sends back `prompt`, `interrupt` and `permission_decided`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::envelope::ReplyFormat;
use super::hook_notification::TerminalNotice;
use super::stream::{AgentExit, SessionInfo, TurnResult};
use super::stream::{Block, CliMessage, PermissionDecision, PermissionRequest, SessionEvent};

/// The protocol version in both hellos. A client that speaks another gets an error.
pub const VERSION: u32 = 1;

/// What a client sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Optional: checks that the inbox speaks `version`.
    Hello {
        version: u32,
        /// Who the client is, for the inbox's log (`askpane hook`, a script's name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// A request to answer.
    Ask(Box<AskMessage>),
    /// Takes back this connection's open request `id`; its `outcome` then says `withdrawn`.
    Withdraw { id: String },
    /// Every open request of the inbox; with `full`, each with its [`AskContent`] (issue 31:
    /// what a front end needs to show the ask and answer it).
    List {
        #[serde(default, skip_serializing_if = "is_false")]
        full: bool,
    },
    /// From now on, an `asked` and a `settled` line for every request of every client; with
    /// `full` (issue 31), each `asked` carries the ask's [`AskContent`] as `list`'s `full` does,
    /// so a bridge needs no second round trip.
    Subscribe {
        #[serde(default, skip_serializing_if = "is_false")]
        full: bool,
    },
    /// Ends the inbox: every waiting client is told the window closed without an answer.
    Quit,
    /// Brings the inbox's window back (it hides when closed); answered with `shown`.
    Show,
    /// Issue 11 ("New link"): replaces the link of the inbox's browser page; answered with
    /// `new_link` (the new links), or an `error` when the inbox serves no page. Pages on the old
    /// link are told it was replaced, and the old link stops working.
    NewLink,
    /// This connection hosts an agent session (`askpane claude`): the inbox shows its
    /// transcript and prompt box as an entry of its own, until the connection closes.
    /// Answered with `hosting`.
    Host {
        /// The agent (`claude`), shown with the project as `claude · my-project`.
        agent: String,
        /// The folder the agent works in, by name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project: Option<String>,
        /// The first prompt, when the client was started with one (a turn is then running).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
    },
    /// One event of the hosted session: a transcript message, or its end.
    SessionEvent { event: SessionLine },
    /// A tool the hosted agent (or, with `from`, the agent this client follows) wants to run;
    /// answered with `permission_decided`.
    Permission {
        /// The client's name for it, unique among its connection's open permissions.
        id: String,
        /// Boxed: with its suggestions and the file on disk it is the largest message by far
        /// (serde reads and writes it as if unboxed).
        request: Box<PermissionRequest>,
        /// Who asks, for a connection that hosts no session (`askpane opencode` hands over an
        /// OpenCode server's requests, each from its own project and session); a hosted
        /// session's permissions are its own, and this is not read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<super::web::WhoAsked>,
    },
    /// The agent took permission `id` back: it leaves the window; no decision is sent.
    WithdrawPermission { id: String },
    /// The client's `--timeout` ran out on permission `id` with nobody deciding (`askpane
    /// opencode` keeps the deadline of the cards it hands over): it leaves the window as timed
    /// out, and history says so; no decision is sent.
    PermissionTimedOut { id: String },
    /// Issue 27: this connection carries a client of the SSH host `host`. `askpane remote HOST`
    /// writes it first on each connection it relays, before any byte of the remote client's;
    /// the inbox then scopes the connection to that host ([`super::link::Scope`]) and answers
    /// `linked`. Accepted once per connection: a second (one a remote client sent through the
    /// link) is refused.
    ViaLink { host: String },
    /// Issue 31: a front end answers the open question `id` of `connection` (as `list` names
    /// it), in the page's shape: `answers` by question index (`"1"`: option numbers from 1,
    /// comma-joined, and `other:<text>`), `notes` by question index, or `response` (a reply in
    /// the user's own words). Answered with `verdict`.
    Answer {
        connection: u64,
        id: String,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        answers: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        notes: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<String>,
        /// Who answered, as the front end names them (`@alice:example.org`); recorded as
        /// `socket:<this>`, so that no client can pose as the window.
        answered_by: String,
    },
    /// Issue 31: a front end declines the open question `id` of `connection`, with the message
    /// the agent reads. Answered with `verdict`.
    Decline {
        connection: u64,
        id: String,
        #[serde(default)]
        message: String,
        answered_by: String,
    },
    /// Issue 31: a front end's "Chat about this" on the open question `id` of `connection`: the
    /// window's button's outcome (the dialog's clarify feedback), with the picks made so far
    /// in `answer`'s shape (`answers`, `notes`; often none). Answered with `verdict`.
    Clarify {
        connection: u64,
        id: String,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        answers: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        notes: Map<String, Value>,
        answered_by: String,
    },
    /// Issue 31: a front end decides the open tool call `id` of `connection` (an approval, as
    /// `list` names it): `allow`, `allow_always` with the index of one of its `suggestions`,
    /// or `deny` with a `message` the agent reads. Answered with `verdict`.
    Decide {
        connection: u64,
        id: String,
        decision: FrontEndDecision,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<usize>,
        #[serde(default)]
        message: String,
        answered_by: String,
    },
    /// Issue 26 item 6: a Claude Code terminal says it waits (its `Notification` hook). The inbox
    /// names it in its desktop notification, unless it shows an ask of that session already.
    /// Answered with `noticed`.
    Notice { notice: TerminalNotice },
}

/// Issue 31: what a front end's `decide` decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontEndDecision {
    Allow,
    AllowAlways,
    Deny,
}

/// A hosted session's event on the wire: the transcript messages a window shows, and the end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SessionLine {
    Init {
        info: SessionInfo,
    },
    Assistant {
        blocks: Vec<Block>,
    },
    User {
        blocks: Vec<Block>,
    },
    Result {
        result: TurnResult,
    },
    /// The agent ended: how, and the last lines it wrote to stderr.
    Ended {
        status: AgentExit,
        stderr_tail: Vec<String>,
    },
    /// The running turn is stuck (silent this long with nothing asked).
    Stuck {
        silent_secs: u64,
    },
}

impl SessionLine {
    /// The wire form of `event`, when a window shows it (questions and permissions travel as
    /// messages of their own; control lines are nobody's to see).
    pub fn from_event(event: SessionEvent) -> Option<SessionLine> {
        match event {
            SessionEvent::Message(CliMessage::Init(info)) => Some(SessionLine::Init { info }),
            SessionEvent::Message(CliMessage::Assistant { blocks }) => {
                Some(SessionLine::Assistant { blocks })
            }
            SessionEvent::Message(CliMessage::User { blocks }) => {
                Some(SessionLine::User { blocks })
            }
            SessionEvent::Message(CliMessage::Result(result)) => {
                Some(SessionLine::Result { result })
            }
            SessionEvent::Message(_) => None,
            SessionEvent::Ended { status, stderr_tail } => {
                Some(SessionLine::Ended { status, stderr_tail })
            }
            SessionEvent::Stuck { silent_secs } => Some(SessionLine::Stuck { silent_secs }),
        }
    }

    /// The event again, as the window records it.
    pub fn into_event(self) -> SessionEvent {
        let message = match self {
            SessionLine::Init { info } => CliMessage::Init(info),
            SessionLine::Assistant { blocks } => CliMessage::Assistant { blocks },
            SessionLine::User { blocks } => CliMessage::User { blocks },
            SessionLine::Result { result } => CliMessage::Result(result),
            SessionLine::Ended { status, stderr_tail } => {
                return SessionEvent::Ended { status, stderr_tail };
            }
            SessionLine::Stuck { silent_secs } => return SessionEvent::Stuck { silent_secs },
        };
        SessionEvent::Message(message)
    }
}

/// One request, as a thin client hands it over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AskMessage {
    /// The client's name for it, unique among its connection's open requests.
    pub id: String,
    /// Which command asks: decides who the request is shown as from and the exit code.
    pub mode: ClientMode,
    /// The agent's message exactly as the client received it (any envelope askpane reads).
    pub message: Value,
    /// How the request may be answered: the client's flags.
    #[serde(default)]
    pub policy: Policy,
    /// The file a hook's tool call would change, as the client read it where the agent runs
    /// (issue 27: `askpane hook` on an SSH host sends it through the link, since the desk's file
    /// of the same path is another). The inbox uses it only for a request through a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk: Option<super::tool_call::FileSnapshot>,
}

/// The command a request comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientMode {
    /// `askpane ask`: always one reply line; the exit code says how it ended.
    Ask,
    /// `askpane hook`: prints nothing where Claude Code is to ask in its own dialog; exits 0.
    Hook,
    /// `askpane mcp`: the reply is an MCP tool result, always one (issue 12).
    Mcp,
    /// `askpane claude`: the reply goes to the hosted Claude Code's stdin; a question the CLI
    /// withdrew gets none.
    Claude,
    /// `askpane codex`: the reply (a JSON-RPC result) goes to the hosted `codex app-server`'s
    /// stdin; a question Codex resolved gets none.
    Codex,
    /// `askpane acp`: the reply (a JSON-RPC result) goes to the hosted ACP agent's stdin; a
    /// form the agent withdrew gets none.
    Acp,
}

impl ClientMode {
    /// The adapter name shown beside the question (`hook · my-project`).
    pub fn name(self) -> &'static str {
        match self {
            ClientMode::Ask => "ask",
            ClientMode::Hook => "hook",
            ClientMode::Mcp => "mcp",
            ClientMode::Claude => "claude",
            ClientMode::Codex => "codex",
            ClientMode::Acp => "acp",
        }
    }

    /// `ask` promises exactly one line on stdout; a hook prints nothing where that is how Claude
    /// Code is told to ask in its own dialog.
    pub fn always_a_line(self) -> bool {
        matches!(self, ClientMode::Ask | ClientMode::Mcp)
    }
}

/// How a request may be answered without a person, and how its reply is written: the client's
/// `--answers`, `--submit`, `--decline`, `--timeout`, `--non-interactive`, `--format` (and
/// `hook --fallback`). Whoever holds the request decides its outcome from this, the same way.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Pre-selected answers (`--answers`), read by the client (its working directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Preset>,
    /// Send the preset answers without showing the question (`--submit`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub submit: bool,
    /// Decline at once with this message (`--decline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decline: Option<String>,
    /// Seconds the user has (`--timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Reply at once that no human is available (`--non-interactive`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub non_interactive: bool,
    /// Reply at once that no human is available, for this reason (`hook --fallback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Say "skipped" for unanswered questions.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mark_skipped: bool,
    /// Reply in this envelope instead of the request's own (`--format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
}

impl Policy {
    /// True unless the flags decide the outcome on their own (`--decline`, `--answers
    /// --submit`, `--non-interactive`, `hook --fallback`): only then is an inbox started.
    pub fn needs_a_person(&self) -> bool {
        let decided = self.decline.is_some()
            || (self.submit && self.answers.is_some())
            || self.non_interactive
            || self.unavailable.is_some();
        !decided
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// An `--answers` file as the client read it: its JSON, or why it could not be read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preset {
    /// The file as the user named it, for messages.
    pub file: String,
    /// Its JSON (an object keyed by question text or header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// Why it could not be read; then `json` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl Preset {
    /// The answers, or the message that says why there are none.
    pub fn content(&self) -> Result<&Value, String> {
        match (&self.json, &self.unreadable) {
            (Some(json), None) => Ok(json),
            (_, Some(error)) => Err(format!("--answers: {error}")),
            (None, None) => Err(format!("--answers {}: no answers were sent", self.file)),
        }
    }
}

/// The reply envelopes `--format` names, spelled as on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    ToolInput,
    ControlResponse,
    PreToolUse,
    PermissionRequest,
    SeedWeb,
    McpToolResult,
    /// `askpane opencode`'s reply to OpenCode's question tool.
    #[serde(rename = "opencode")]
    OpenCode,
    /// `askpane codex-hook`'s reply to Codex's PreToolUse hook.
    CodexHook,
    /// `askpane codex`'s JSON-RPC result to Codex's `item/tool/requestUserInput`.
    CodexServer,
    /// `askpane acp`'s JSON-RPC result to an ACP agent's `elicitation/create`.
    Acp,
}

impl From<Format> for ReplyFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::ToolInput => ReplyFormat::ToolInput,
            Format::ControlResponse => ReplyFormat::ControlResponse,
            Format::PreToolUse => ReplyFormat::PreToolUse,
            Format::PermissionRequest => ReplyFormat::PermissionRequest,
            Format::SeedWeb => ReplyFormat::SeedWeb,
            Format::McpToolResult => ReplyFormat::McpToolResult,
            Format::OpenCode => ReplyFormat::OpenCode,
            Format::CodexHook => ReplyFormat::CodexHook,
            Format::CodexServer => ReplyFormat::CodexServer,
            Format::Acp => ReplyFormat::Acp,
        }
    }
}

impl From<ReplyFormat> for Format {
    fn from(format: ReplyFormat) -> Self {
        match format {
            ReplyFormat::ToolInput => Format::ToolInput,
            ReplyFormat::ControlResponse => Format::ControlResponse,
            ReplyFormat::PreToolUse => Format::PreToolUse,
            ReplyFormat::PermissionRequest => Format::PermissionRequest,
            ReplyFormat::SeedWeb => Format::SeedWeb,
            ReplyFormat::McpToolResult => Format::McpToolResult,
            ReplyFormat::OpenCode => Format::OpenCode,
            ReplyFormat::CodexHook => Format::CodexHook,
            ReplyFormat::CodexServer => Format::CodexServer,
            ReplyFormat::Acp => Format::Acp,
        }
    }
}

/// What the inbox sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InboxMessage {
    /// The first line of every connection.
    Hello {
        version: u32,
        /// The inbox's process id (`askpane inbox --quit` and scripts use it).
        pid: u32,
        /// Issue 27: the SSH host this connection comes from, when `askpane remote`'s link
        /// relays it (the link writes it, after the inbox confirmed the scope with `linked`).
        /// A client that sees it waits for a dropped link to come back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        link: Option<String>,
        /// Issue 29 (`askpane doctor`): when this inbox started, in seconds since the Unix
        /// epoch (the time it took its lock, kept across the lean inbox's `exec`). Absent from
        /// an older inbox.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        started_at: Option<u64>,
    },
    /// The request `id` was taken: `shown` when it waits for the user (false when its policy
    /// decided it at once); `warnings` about the questions, for the client's stderr.
    Accepted {
        id: String,
        shown: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    },
    /// The request `id` is decided.
    Outcome(OutcomeMessage),
    /// The answer to `list`.
    List { requests: Vec<Listed> },
    /// The answer to `subscribe`.
    Subscribed,
    /// (subscribers) A request arrived.
    Asked { request: Listed },
    /// (subscribers) A request was decided.
    Settled {
        connection: u64,
        id: String,
        /// The outcome's kind (`answered`, `declined`, `withdrawn`, …; a tool call's
        /// `allowed_once`, `denied`, …).
        outcome: String,
        /// Issue 31: who settled it, as history records it: `window`, `page` or
        /// `socket:<label>`; absent when no person did (withdrawn, timed out, the agent gone).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answered_by: Option<String>,
    },
    /// The answer to `quit`: the inbox is ending.
    Quitting,
    /// The answer to `show`: the window was asked to come back.
    Shown,
    /// The answer to `new_link`: the page's new links, loopback first (then one per address
    /// of this machine another device can use, with `--lan`).
    NewLink { links: Vec<String> },
    /// The answer to `host`: the session is shown.
    Hosting,
    /// The answer to `via_link`: this connection is scoped to `host` (issue 27). Read by the
    /// link, which tells its client in the hello it hands on.
    Linked { host: String },
    /// (hosts) The user sent this prompt from the session's prompt box.
    Prompt { text: String },
    /// (hosts) The user pressed Stop: interrupt the running turn.
    Interrupt,
    /// (hosts) The user ended the session ("End session"): end the agent, as closing a window
    /// of its own would.
    EndSession,
    /// (hosts) The user decided permission `id`.
    PermissionDecided { id: String, decision: PermissionDecision },
    /// The answer to `notice`: taken; `notifies` is false when this inbox shows no desktop
    /// notifications (`--no-notify`, `--ui web`), so nothing will be raised.
    Noticed { notifies: bool },
    /// Issue 31: whether a front end's `answer`, `decline`, `clarify` or `decide` of `id` of
    /// `connection` counted; `reason` says why not (who answered first, or how it ended).
    Verdict {
        connection: u64,
        id: String,
        accepted: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The line just read was not a message the inbox can act on; the connection stays usable.
    Error {
        message: String,
        /// The request the error is about, when the line named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
}

/// How one request ended, for its client to print and exit with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutcomeMessage {
    pub id: String,
    /// The outcome's kind (`answered`, `declined`, `withdrawn`, …).
    pub outcome: String,
    /// The reply line to print (in the request's envelope, or `--format`'s); `null` when nothing
    /// is to be printed (a hook that leaves the question to Claude Code's dialog).
    pub reply: Option<Value>,
    /// The code the client exits with.
    pub exit_code: u8,
    /// Why the policy could not be applied (an `--answers` file that does not fit), for stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// One open request, as `list` and `asked` show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    /// The connection that asked (a number the inbox gives each).
    pub connection: u64,
    /// The client's name for the request.
    pub id: String,
    /// Who asked: `hook · my-project · default`.
    pub from: String,
    /// The first question's header or text.
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The asking process, as the socket reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The SSH host it came from, as its link names it (issue 27); `None` for this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Issue 29 (`askpane status`): the adapter that asked (`hook`, `mcp`, `claude`, …), the
    /// first part of `from`. Absent from an older inbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The project the agent works in (its folder's name), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// When the inbox took the request, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_at: Option<u64>,
    /// When the client's `--timeout` runs out, in seconds since the Unix epoch; `None` when
    /// the client set none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<u64>,
    /// What waits: questions, or a tool call to allow (a permission card). Absent from an
    /// older inbox, which listed questions only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<AskKind>,
    /// Issue 31: what the ask holds, only in the answer to `list` with `full` (a plain `list`
    /// and `asked` stay small). Boxed: an ask's questions and previews can be large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Box<AskContent>>,
}

impl Listed {
    /// The same ask without its content, as a plain `list` and `asked` show it.
    pub fn summary(&self) -> Listed {
        Listed { content: None, ..self.clone() }
    }
}

/// Issue 31: an ask's full content, for a front end that shows and answers it elsewhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AskContent {
    /// Questions: `questions` as AskUserQuestion's input has them (each `question`, `header`,
    /// `multiSelect`, `options` with `label`, `description` and `preview`).
    Question { questions: Value },
    /// A tool call to allow or deny.
    Approval {
        tool_name: String,
        /// The tool's input as the agent sent it.
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The rules the agent suggests adding with an allow, by index (`decide`'s
        /// `always`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        suggestions: Vec<super::permission::Suggestion>,
        /// The plan's markdown, when the tool is ExitPlanMode (a plan to review).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plan: Option<String>,
    },
}

impl AskContent {
    /// The content of a tool call to allow.
    pub fn of_approval(request: &super::stream::PermissionRequest) -> AskContent {
        let plan = (request.tool_name == "ExitPlanMode")
            .then(|| request.input.get("plan").and_then(Value::as_str).map(str::to_owned))
            .flatten();
        AskContent::Approval {
            tool_name: request.tool_name.clone(),
            input: request.input.clone(),
            description: request.description.clone(),
            suggestions: request.suggestions.clone(),
            plan,
        }
    }
}

/// What a listed ask is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AskKind {
    /// Questions (`AskUserQuestion` and its cousins), answered in a form.
    Question,
    /// A tool call to allow or deny: a hook's `PermissionRequest` or a hosted agent's permission.
    Approval,
}

/// Why a line is not a client message: said back in an `error`.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error(
        "not a message the inbox understands ({0}); expected a JSON object whose \"type\" is hello, ask, withdraw, list, subscribe, show, new_link, quit, host, session_event, permission, withdraw_permission, permission_timed_out, via_link, notice, answer, decline, clarify or decide"
    )]
    NotAMessage(String),
}

/// A line that is no client message: why (said back in an `error`), and the `id` it names,
/// if any, so an error about a broken `ask` can say which one.
#[derive(Debug)]
pub struct BadLine {
    pub error: LineError,
    pub id: Option<String>,
}

/// One line a client sent on the inbox socket (its newline and surrounding whitespace
/// included or not), as the inbox reads it: `None` for a blank line, else its message or why
/// it is none. Fuzzed: fuzz/fuzz_targets/inbox_line.rs.
pub fn read_client_line(line: &[u8]) -> Option<Result<ClientMessage, BadLine>> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => {
            return Some(Err(BadLine { error: LineError::NotJson(error.to_string()), id: None }));
        }
    };
    let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    Some(
        serde_json::from_value(value)
            .map_err(|error| BadLine { error: LineError::NotAMessage(error.to_string()), id }),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_have_the_documented_shape() {
        let ask = ClientMessage::Ask(Box::new(AskMessage {
            id: "1".into(),
            mode: ClientMode::Hook,
            message: json!({"questions": []}),
            policy: Policy { timeout_secs: Some(30), ..Policy::default() },
            on_disk: None,
        }));
        assert_eq!(
            serde_json::to_string(&ask).expect("serialises"),
            r#"{"type":"ask","id":"1","mode":"hook","message":{"questions":[]},"policy":{"timeout_secs":30}}"#
        );
        let outcome = InboxMessage::Outcome(OutcomeMessage {
            id: "1".into(),
            outcome: "declined".into(),
            reply: None,
            exit_code: 0,
            problem: None,
        });
        assert_eq!(
            serde_json::to_string(&outcome).expect("serialises"),
            r#"{"type":"outcome","id":"1","outcome":"declined","reply":null,"exit_code":0}"#
        );
        assert_eq!(
            read_client_line(b" {\"type\": \"list\"}\r\n").expect("a line").expect("a message"),
            ClientMessage::List { full: false }
        );
        assert_eq!(
            read_client_line(br#"{"type":"list","full":true}"#)
                .expect("a line")
                .expect("a message"),
            ClientMessage::List { full: true }
        );
        assert!(read_client_line(b" \t\r\n").is_none());
        let timed_out = ClientMessage::PermissionTimedOut { id: "p1".into() };
        assert_eq!(
            serde_json::to_string(&timed_out).expect("serialises"),
            r#"{"type":"permission_timed_out","id":"p1"}"#
        );
        assert_eq!(
            read_client_line(br#"{"type":"permission_timed_out","id":"p1"}"#)
                .expect("a line")
                .expect("a message"),
            timed_out
        );
    }

    /// Issue 26 item 6: a terminal's notice and its answer, as literal JSON.
    #[test]
    fn a_notice_and_its_answer_have_the_documented_shape() {
        let line = r#"{"type":"notice","notice":{"kind":"permission_prompt","message":"Claude needs your permission","session_id":"3f2a1b2c-1","project":"orders"}}"#;
        let message = read_client_line(line.as_bytes()).expect("a line").expect("a message");
        let ClientMessage::Notice { notice } = &message else { panic!("{message:?}") };
        assert_eq!(notice.headline(), "Claude Code waits in orders (session 3f2a1b2c)");
        assert_eq!(serde_json::to_string(&message).expect("serialises"), line);
        let noticed = InboxMessage::Noticed { notifies: true };
        assert_eq!(
            serde_json::to_string(&noticed).expect("serialises"),
            r#"{"type":"noticed","notifies":true}"#
        );
        // A newer Claude Code's type crosses as named; a notice without its kind is refused.
        let newer = r#"{"type":"notice","notice":{"kind":"brand_new","message":"m"}}"#;
        assert!(read_client_line(newer.as_bytes()).expect("a line").is_ok());
        let broken = r#"{"type":"notice","notice":{"message":"m"}}"#;
        assert!(read_client_line(broken.as_bytes()).expect("a line").is_err());
    }

    #[test]
    fn a_broken_line_names_what_is_wrong() {
        let broken = |line: &str| {
            read_client_line(line.as_bytes()).expect("a line").expect_err("no message")
        };
        let bad = broken(r#"{"type": "ask", "id": "7"}"#);
        assert!(bad.error.to_string().contains("missing field `mode`"), "{:?}", bad.error);
        assert_eq!(bad.id.as_deref(), Some("7"));
        let bad = broken(r#"{"type": "dance"}"#);
        assert!(bad.error.to_string().contains("unknown variant `dance`"), "{:?}", bad.error);
        let bad = broken("{\"type\": ");
        assert!(matches!(bad.error, LineError::NotJson(_)), "{:?}", bad.error);
        assert_eq!(bad.id, None);
    }
}
