//! Claude Code's stream-json vocabulary (the Agent SDK control protocol): the lines the CLI
//! writes, typed as far as a host shows them, and the lines a host writes back (protocol.md §3–§6).
//!
//! Unknown message types and subtypes are [`CliMessage::Other`]: a newer CLI adds kinds, and a
//! host that stopped on each one would break with every release.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::envelope::{self, Incoming, TOOL_NAME};
use super::permission::{ApprovalOrigin, HANDED_BACK_HOSTED, Suggestion, parse_suggestions};

/// One line from the CLI's stdout.
#[derive(Clone, Debug, PartialEq)]
pub enum CliMessage {
    /// `system`/`init`: the session's facts.
    Init(SessionInfo),
    /// A model turn: text, thinking and tool calls.
    Assistant { blocks: Vec<Block> },
    /// What went back to the model: tool results, or the user's own text.
    User { blocks: Vec<Block> },
    /// The turn is over.
    Result(TurnResult),
    /// `can_use_tool` for AskUserQuestion: a question for the window.
    Question(Incoming),
    /// `can_use_tool` for any other tool: a permission to grant or refuse.
    Permission(PermissionRequest),
    /// The CLI withdrew one of its requests (the user interrupted, a hook answered first).
    Cancel { request_id: String },
    /// A `control_request` askpane does not handle: an MCP `elicitation`, a subtype from a newer
    /// CLI, a `can_use_tool` without `tool_name` or `input`. The CLI waits for an answer to every
    /// request it sends, so each gets one: [`unhandled_reply`].
    Unhandled { request_id: String, subtype: String, problem: String },
    /// The answer to one of the host's own requests (`initialize`, `interrupt`).
    Response { request_id: String, error: Option<String> },
    /// Anything else (`command_lifecycle`, `attachment`, a subtype from a newer CLI): shown to
    /// nobody, logged at debug level.
    Other { kind: String },
}

/// One event of an agent session run under askpane.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "one event per line of the agent's output, moved once into the window: boxing the \
              message (a tool call's suggestions made it the larger) would only add an allocation"
)]
pub enum SessionEvent {
    /// A line of the transcript (`system/init`, assistant, user, result).
    Message(CliMessage),
    /// The agent ended: how, and the last lines it wrote to stderr.
    Ended { status: AgentExit, stderr_tail: Vec<String> },
    /// The running turn has been silent this many seconds with nothing asked of the person (an
    /// agent that hangs, issue 28): shown as stuck until the agent speaks, the turn ends, or the
    /// person ends it.
    Stuck { silent_secs: u64 },
}

/// How a hosted agent's process ended, as the session's end says it (`exit code 1`). On the
/// inbox's wire it travels as those words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum AgentExit {
    /// It exited with this code.
    Code(i32),
    /// It closed its output and had not exited within the time askpane gives it.
    StillRunning,
    /// It ended otherwise (a signal), in the platform's words (`signal: 9 (SIGKILL)`), or in
    /// words another process sent over the inbox's wire.
    Other(String),
}

/// What [`AgentExit::StillRunning`] says.
const STILL_RUNNING: &str = "still running after closing its output";

impl AgentExit {
    /// It exited with code 0.
    pub fn is_success(&self) -> bool {
        matches!(self, AgentExit::Code(0))
    }
}

impl std::fmt::Display for AgentExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentExit::Code(code) => write!(f, "exit code {code}"),
            AgentExit::StillRunning => f.write_str(STILL_RUNNING),
            AgentExit::Other(words) => f.write_str(words),
        }
    }
}

impl From<&str> for AgentExit {
    /// The words read back: what [`AgentExit`]'s `Display` writes is the same value again, and
    /// any other words are [`AgentExit::Other`], shown as they came.
    fn from(words: &str) -> Self {
        if words == STILL_RUNNING {
            return AgentExit::StillRunning;
        }
        let code = words.strip_prefix("exit code ").and_then(|code| code.parse::<i32>().ok());
        match code {
            // Only the words Display writes: "exit code 007" stays as it came.
            Some(code) if format!("exit code {code}") == words => AgentExit::Code(code),
            _ => AgentExit::Other(words.to_owned()),
        }
    }
}

impl From<String> for AgentExit {
    fn from(words: String) -> Self {
        AgentExit::from(words.as_str())
    }
}

impl From<AgentExit> for String {
    fn from(exit: AgentExit) -> Self {
        exit.to_string()
    }
}

impl PartialEq<&str> for AgentExit {
    /// Compares what it says.
    fn eq(&self, words: &&str) -> bool {
        let read = AgentExit::from(*words);
        *self == read
    }
}

/// What `system`/`init` says about the session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Which agent runs the session (absent from what older peers send: Claude Code).
    #[serde(default)]
    pub agent: SessionAgent,
    pub session_id: String,
    pub version: Option<String>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub tools: Vec<String>,
    pub capabilities: Vec<String>,
}

/// The agent a hosted session runs, as the session pane names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionAgent {
    #[default]
    ClaudeCode,
    Codex,
    /// An Agent Client Protocol agent (`askpane acp`).
    Acp,
}

impl SessionAgent {
    /// The agent's name in words.
    pub fn name(self) -> &'static str {
        match self {
            SessionAgent::ClaudeCode => "Claude Code",
            SessionAgent::Codex => "Codex",
            // A heading, and a name in sentences ("What should ACP agent do?"); which agent it
            // is, its version line says (`initialize`'s agentInfo).
            SessionAgent::Acp => "ACP agent",
        }
    }
}

impl SessionInfo {
    /// The capability that lets an answer carry `annotations[q].unanswered` (protocol.md §10).
    pub fn accepts_unanswered(&self) -> bool {
        self.capabilities.iter().any(|capability| capability == "ask_user_question_unanswered_v1")
    }
}

/// One content block of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    Text(String),
    Thinking(String),
    ToolUse { id: String, name: String, input: Value },
    ToolResult { tool_use_id: String, content: String, is_error: bool },
}

/// A `result` line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnResult {
    pub subtype: String,
    pub is_error: bool,
    pub duration_ms: Option<u64>,
    pub num_turns: Option<u64>,
    pub total_cost_usd: Option<f64>,
    /// The final text (`result`), when the turn ended with one.
    pub text: Option<String>,
}

/// `can_use_tool` for a tool other than AskUserQuestion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub request_id: String,
    pub tool_name: String,
    pub input: Value,
    pub tool_use_id: Option<String>,
    /// The CLI's own words about it, when it gives any (`title`, `description`, `decision_reason`).
    pub title: Option<String>,
    pub description: Option<String>,
    pub reason: Option<String>,
    /// Set when a subagent asks.
    pub agent_id: Option<String>,
    /// Where the agent works (its session's or the hook's `cwd`): the card shows it under a
    /// command, and a relative path is read from there (issue 26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The file the call would change, as it was on disk when it was asked about (attached in
    /// transport, see `transport::snapshot`); `None` when nothing was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disk: Option<super::tool_call::FileSnapshot>,
    /// The rules the agent suggests adding with an allow (`permission_suggestions`), each
    /// offered as an "Always …" button (issue 26).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// The agent's own "deny always" choices (ACP's `reject_always`), each offered by its name
    /// beside Deny (issue 28).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_always: Vec<super::permission::DenyRule>,
    /// Who asks: a hosted session (the default, and unsaid on the wire), or a
    /// `PermissionRequest` hook.
    #[serde(default, skip_serializing_if = "ApprovalOrigin::is_hosted")]
    pub origin: ApprovalOrigin,
}

/// How the user decided a permission request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "snake_case")]
pub enum PermissionDecision {
    AllowOnce,
    /// Allowed, and the agent's own suggestion (one of the request's) is added as a rule.
    AllowAlways {
        suggestion: Suggestion,
    },
    Deny {
        message: String,
    },
    /// Denied, with the agent's own "deny always" choice (one of the request's `deny_always`).
    /// An agent without such choices reads it as [`PermissionDecision::Deny`].
    DenyAlways {
        rule: super::permission::DenyRule,
        message: String,
    },
    /// No decision: the agent's own dialog or policy decides (a hook prints nothing).
    HandBack,
    /// A form (an ACP agent's generic `elicitation/create`, shown as a card) filled in by the
    /// person and checked against its schema: the reply's `content`, with its JSON types.
    /// Only a form's card offers it ([`super::permission::is_form`]).
    Fill {
        content: serde_json::Map<String, Value>,
    },
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn strings(value: &Value, key: &str) -> Vec<String> {
    let items = value.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
}

/// Types one CLI line. Never fails: what it cannot read is [`CliMessage::Other`].
pub fn parse_cli_line(line: &Value) -> CliMessage {
    let kind = line.get("type").and_then(Value::as_str).unwrap_or_default();
    let subtype = line.get("subtype").and_then(Value::as_str).unwrap_or_default();
    match (kind, subtype) {
        ("system", "init") => CliMessage::Init(SessionInfo {
            agent: SessionAgent::ClaudeCode,
            session_id: text(line, "session_id").unwrap_or_default(),
            version: text(line, "claude_code_version"),
            model: text(line, "model"),
            cwd: text(line, "cwd"),
            tools: strings(line, "tools"),
            capabilities: strings(line, "capabilities"),
        }),
        ("assistant", _) => CliMessage::Assistant { blocks: message_blocks(line) },
        ("user", _) => CliMessage::User { blocks: message_blocks(line) },
        ("result", _) => CliMessage::Result(TurnResult {
            subtype: subtype.to_owned(),
            is_error: line.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            duration_ms: line.get("duration_ms").and_then(Value::as_u64),
            num_turns: line.get("num_turns").and_then(Value::as_u64),
            total_cost_usd: line.get("total_cost_usd").and_then(Value::as_f64),
            text: text(line, "result").filter(|result| !result.is_empty()),
        }),
        ("control_request", _) => control_request(line),
        ("control_cancel_request", _) => match text(line, "request_id") {
            Some(request_id) => CliMessage::Cancel { request_id },
            None => CliMessage::Other { kind: kind.to_owned() },
        },
        ("control_response", _) => {
            let response = line.get("response").unwrap_or(&Value::Null);
            match text(response, "request_id") {
                Some(request_id) => {
                    CliMessage::Response { request_id, error: text(response, "error") }
                }
                None => CliMessage::Other { kind: kind.to_owned() },
            }
        }
        (kind, "") => CliMessage::Other { kind: kind.to_owned() },
        (kind, subtype) => CliMessage::Other { kind: format!("{kind}/{subtype}") },
    }
}

fn control_request(line: &Value) -> CliMessage {
    let request = line.get("request").unwrap_or(&Value::Null);
    let subtype = request.get("subtype").and_then(Value::as_str).unwrap_or_default();
    let tool = request.get("tool_name").and_then(Value::as_str);
    let Some(request_id) = text(line, "request_id") else {
        // Nothing to answer it with; the CLI cannot be waiting for a reply it cannot match.
        return CliMessage::Other { kind: format!("control_request/{subtype}") };
    };
    let unhandled = |problem: String| CliMessage::Unhandled {
        request_id: request_id.clone(),
        subtype: subtype.to_owned(),
        problem,
    };
    match (subtype, tool, request.get("input")) {
        ("can_use_tool", None, _) => {
            unhandled("can_use_tool without a tool_name: askpane cannot tell what asks".to_owned())
        }
        ("can_use_tool", Some(tool), None) => {
            unhandled(format!("can_use_tool for {tool} without an input: there is nothing to show"))
        }
        ("can_use_tool", Some(TOOL_NAME), Some(_)) => match envelope::parse_message(line) {
            Ok(incoming) => CliMessage::Question(incoming),
            Err(error) => unhandled(error.to_string()),
        },
        ("can_use_tool", Some(tool), Some(input)) => CliMessage::Permission(PermissionRequest {
            request_id,
            tool_name: tool.to_owned(),
            input: input.clone(),
            tool_use_id: text(request, "tool_use_id"),
            title: text(request, "title"),
            description: text(request, "description"),
            reason: text(request, "decision_reason"),
            agent_id: text(request, "agent_id"),
            cwd: None,
            on_disk: None,
            suggestions: parse_suggestions(request.get("permission_suggestions")),
            deny_always: Vec::new(),
            origin: ApprovalOrigin::Hosted,
        }),
        // The Agent SDK's own wording for a subtype it has no handler for.
        (subtype, _, _) => unhandled(format!("Unsupported control request subtype: {subtype}")),
    }
}

/// The one answer to a request askpane does not handle. An `elicitation` is declined, as the
/// Agent SDK does when its app gives no handler; anything else gets the error response the SDK
/// sends when a handler is missing or fails (protocol.md §3, §11).
pub fn unhandled_reply(request_id: &str, subtype: &str, problem: &str) -> Value {
    match subtype {
        "elicitation" => json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id, "response": {"action": "decline"}}}),
        _ => json!({"type": "control_response", "response": {
            "subtype": "error", "request_id": request_id, "error": problem}}),
    }
}

/// The blocks of `message.content`, which is a string (the user's own text) or a block list.
fn message_blocks(line: &Value) -> Vec<Block> {
    match line.get("message").and_then(|message| message.get("content")) {
        Some(Value::String(text)) => vec![Block::Text(text.clone())],
        Some(Value::Array(blocks)) => blocks.iter().filter_map(block).collect(),
        _ => Vec::new(),
    }
}

fn block(value: &Value) -> Option<Block> {
    match value.get("type").and_then(Value::as_str)? {
        "text" => Some(Block::Text(text(value, "text")?)),
        "thinking" => Some(Block::Thinking(text(value, "thinking")?)),
        "tool_use" => Some(Block::ToolUse {
            id: text(value, "id")?,
            name: text(value, "name")?,
            input: value.get("input").cloned().unwrap_or(Value::Null),
        }),
        "tool_result" => Some(Block::ToolResult {
            tool_use_id: text(value, "tool_use_id")?,
            content: flatten_content(value.get("content")),
            is_error: value.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        }),
        _ => None,
    }
}

/// A tool_result's `content`: a string, or blocks whose texts are joined (images noted).
fn flatten_content(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<String> = blocks
                .iter()
                .map(|block| match block.get("type").and_then(Value::as_str) {
                    Some("text") => text(block, "text").unwrap_or_default(),
                    Some(other) => format!("[{other}]"),
                    None => String::new(),
                })
                .collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}

/// One line naming a tool call: `Bash: cargo test`, `Edit: src/main.rs`.
pub fn tool_summary(name: &str, input: &Value) -> String {
    if name == TOOL_NAME {
        let questions = input.get("questions").and_then(Value::as_array).map(Vec::as_slice);
        let headers: Vec<&str> = questions
            .unwrap_or_default()
            .iter()
            .filter_map(|question| question.get("header").and_then(Value::as_str))
            .collect();
        return format!("{name}: {}", headers.join(" · "));
    }
    const KEYS: [&str; 9] = [
        "command",
        "file_path",
        // OpenCode's edit (its metadata also holds the whole diff, too long for one line).
        "filepath",
        "notebook_path",
        "path",
        "pattern",
        "url",
        "description",
        "prompt",
    ];
    let detail = KEYS.iter().find_map(|key| text(input, key)).unwrap_or_else(|| {
        let compact = input.to_string();
        if compact == "{}" || compact == "null" { String::new() } else { compact }
    });
    let first_line = detail.lines().next().unwrap_or_default();
    let mut detail: String = first_line.chars().take(80).collect();
    if detail.len() < first_line.len() {
        detail.push('…');
    }
    match detail.is_empty() {
        true => name.to_owned(),
        false => format!("{name}: {detail}"),
    }
}

/// The host's `initialize` request (optional; sent so the CLI's reply confirms the session).
pub fn initialize(request_id: &str) -> Value {
    json!({"request_id": request_id, "type": "control_request",
        "request": {"subtype": "initialize", "hooks": null}})
}

/// A user turn.
pub fn user_message(text: &str) -> Value {
    json!({"type": "user", "session_id": "",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": null})
}

/// The `can_use_tool` request for AskUserQuestion that `parse_cli_line` reads as
/// [`CliMessage::Question`], rebuilt from its parts: how `askpane claude` hands a question it
/// received to the inbox, which takes every agent's message as that agent sent it.
pub fn question_request(request_id: &str, tool_use_id: Option<&str>, input: &Value) -> Value {
    let mut request = json!({"subtype": "can_use_tool", "tool_name": TOOL_NAME, "input": input});
    if let (Some(id), Some(request)) = (tool_use_id, request.as_object_mut()) {
        request.insert("tool_use_id".into(), Value::String(id.to_owned()));
    }
    json!({"type": "control_request", "request_id": request_id, "request": request})
}

/// Stop the current turn (the Stop button).
pub fn interrupt(request_id: &str) -> Value {
    json!({"type": "control_request", "request_id": request_id,
        "request": {"subtype": "interrupt"}})
}

/// The reply to a permission request. An allow carries the input unchanged: 2.1.197 refuses an
/// allow without `updatedInput` (protocol.md §5.3); an allow with a rule carries the agent's
/// own suggestion back as `updatedPermissions`. A hosted session has no terminal dialog to hand
/// a call back to: a hand-back is a deny that says no one decided ([`HANDED_BACK_HOSTED`]).
pub fn permission_reply(request: &PermissionRequest, decision: &PermissionDecision) -> Value {
    if super::permission::is_plan(request) {
        return plan_reply(request, decision);
    }
    let mut result = match decision {
        PermissionDecision::AllowOnce => {
            json!({"behavior": "allow", "updatedInput": request.input})
        }
        PermissionDecision::AllowAlways { suggestion } => json!({"behavior": "allow",
            "updatedInput": request.input, "updatedPermissions": [suggestion.raw()]}),
        PermissionDecision::Deny { message } | PermissionDecision::DenyAlways { message, .. } => {
            json!({"behavior": "deny", "message": message})
        }
        // Claude Code asks no forms this way: a filled form decides none of its calls.
        PermissionDecision::HandBack | PermissionDecision::Fill { .. } => {
            json!({"behavior": "deny", "message": HANDED_BACK_HOSTED})
        }
    };
    if let (Some(id), Some(result)) = (&request.tool_use_id, result.as_object_mut()) {
        result.insert("toolUseID".into(), Value::String(id.clone()));
    }
    json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": request.request_id, "response": result}})
}

/// A plan's `control_response` (issue 26), as 2.1.332's captures have it: an approval is a
/// bare allow (with `setMode acceptEdits` when edits are to be accepted), never an echo of the
/// plan, which Claude Code would take for a plan the person edited; keep planning is a deny
/// whose message the model reads verbatim and which keeps the session in plan mode.
fn plan_reply(request: &PermissionRequest, decision: &PermissionDecision) -> Value {
    let result = match decision {
        PermissionDecision::AllowOnce => json!({"behavior": "allow"}),
        PermissionDecision::AllowAlways { suggestion } => {
            json!({"behavior": "allow", "updatedPermissions": [suggestion.raw()]})
        }
        PermissionDecision::Deny { message } | PermissionDecision::DenyAlways { message, .. } => {
            json!({"behavior": "deny", "message": message})
        }
        // Claude Code asks no forms this way: a filled form decides none of its calls.
        PermissionDecision::HandBack | PermissionDecision::Fill { .. } => {
            json!({"behavior": "deny", "message": HANDED_BACK_HOSTED})
        }
    };
    json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": request.request_id, "response": result}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_exit_says_what_the_status_string_said_and_reads_back_the_same() {
        for (exit, words) in [
            (AgentExit::Code(0), "exit code 0"),
            (AgentExit::Code(-1), "exit code -1"),
            (AgentExit::StillRunning, "still running after closing its output"),
            (AgentExit::Other("signal: 9 (SIGKILL)".into()), "signal: 9 (SIGKILL)"),
        ] {
            assert_eq!(exit.to_string(), words);
            assert_eq!(AgentExit::from(words), exit);
            assert_eq!(serde_json::to_value(&exit).expect("serialises"), json!(words));
        }
        assert!(AgentExit::Code(0).is_success());
        assert!(!AgentExit::Code(1).is_success());
        assert!(
            !AgentExit::from("signal: 10 (SIGUSR1)").is_success(),
            "ends in \" 0\" all the same"
        );
        // Words from the wire that only look like a code are kept as they came.
        assert_eq!(AgentExit::from("exit code 007").to_string(), "exit code 007");
        assert!(!AgentExit::from("exit code 00").is_success());
    }

    #[test]
    fn types_the_lines_a_host_shows_and_ignores_the_rest() {
        let init = json!({"type": "system", "subtype": "init", "session_id": "s1",
            "claude_code_version": "2.1.330", "tools": ["Bash", "AskUserQuestion"],
            "capabilities": ["ask_user_question_unanswered_v1"]});
        let CliMessage::Init(info) = parse_cli_line(&init) else { panic!("init") };
        assert!(info.accepts_unanswered());
        assert_eq!(info.version.as_deref(), Some("2.1.330"));

        let user = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": true,
             "content": [{"type": "text", "text": "no"}, {"type": "image"}]}]}});
        assert_eq!(
            parse_cli_line(&user),
            CliMessage::User {
                blocks: vec![Block::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "no\n[image]".into(),
                    is_error: true
                }]
            }
        );
        let cancel = json!({"type": "control_cancel_request", "request_id": "r1"});
        assert_eq!(parse_cli_line(&cancel), CliMessage::Cancel { request_id: "r1".into() });
        let lifecycle = json!({"type": "command_lifecycle", "state": "started"});
        assert_eq!(
            parse_cli_line(&lifecycle),
            CliMessage::Other { kind: "command_lifecycle".into() }
        );
        assert_eq!(
            parse_cli_line(&json!({"type": "system", "subtype": "permission_denied"})),
            CliMessage::Other { kind: "system/permission_denied".into() }
        );
    }

    #[test]
    fn can_use_tool_is_a_question_or_a_permission() {
        let bash = json!({"type": "control_request", "request_id": "r2", "request": {
            "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "rm -rf target"},
            "tool_use_id": "toolu_2"}});
        let CliMessage::Permission(request) = parse_cli_line(&bash) else { panic!("permission") };
        assert_eq!(tool_summary(&request.tool_name, &request.input), "Bash: rm -rf target");
        assert_eq!(
            permission_reply(&request, &PermissionDecision::AllowOnce),
            json!({"type": "control_response", "response": {"subtype": "success",
                "request_id": "r2", "response": {"behavior": "allow",
                "updatedInput": {"command": "rm -rf target"}, "toolUseID": "toolu_2"}}})
        );
        let ask = json!({"type": "control_request", "request_id": "r3", "request": {
            "subtype": "can_use_tool", "tool_name": "AskUserQuestion",
            "input": {"questions": []}, "tool_use_id": "toolu_3"}});
        let CliMessage::Question(incoming) = parse_cli_line(&ask) else { panic!("question") };
        let input = json!({"questions": []});
        assert_eq!(incoming.envelope.tool_use_id(), Some("toolu_3"));
        assert_eq!(question_request("r3", Some("toolu_3"), &input), ask);
    }

    #[test]
    fn a_hosted_call_carries_its_suggestions_and_each_decision_its_reply() {
        let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash",
            "ruleContent": "npm test *"}], "behavior": "allow", "destination": "localSettings"});
        let bash = json!({"type": "control_request", "request_id": "r4", "request": {
            "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "npm test"},
            "permission_suggestions": [rule, {"type": "removeRules"}, 7]}});
        let CliMessage::Permission(request) = parse_cli_line(&bash) else { panic!("permission") };
        assert_eq!(request.origin, ApprovalOrigin::Hosted);
        let [suggestion] = request.suggestions.as_slice() else { panic!("one offered") };
        let always = PermissionDecision::AllowAlways { suggestion: suggestion.clone() };
        assert_eq!(
            permission_reply(&request, &always),
            json!({"type": "control_response", "response": {"subtype": "success",
                "request_id": "r4", "response": {"behavior": "allow",
                "updatedInput": {"command": "npm test"}, "updatedPermissions": [rule]}}})
        );
        // No terminal dialog behind a hosted session: handed back, the call does not run.
        assert_eq!(
            permission_reply(&request, &PermissionDecision::HandBack),
            json!({"type": "control_response", "response": {"subtype": "success",
                "request_id": "r4", "response": {"behavior": "deny",
                "message": HANDED_BACK_HOSTED}}})
        );
    }
}
