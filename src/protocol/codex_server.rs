//! Codex's `app-server` vocabulary (issue 13): the JSON-RPC lines it writes on stdout, typed as
//! far as `askpane codex` hosts a session, and mapped onto the session vocabulary Claude Code's
//! host already uses ([`CliMessage`], [`Block`], [`PermissionRequest`]) so the window and the
//! browser show a Codex session with no Codex-specific code; and the lines askpane writes back.
//! No IO.
//!
//! Neither side sends `"jsonrpc":"2.0"`. Server requests (questions, approvals) carry integer
//! ids of their own id space; askpane keys them by the id's JSON text (`"0"`).

use serde_json::{Value, json};

use super::codex::UserInputRequest;
use super::stream::{
    Block, CliMessage, PermissionDecision, PermissionRequest, SessionAgent, SessionInfo, TurnResult,
};

/// The provenance source of a Codex session hosted by askpane.
pub const SOURCE: &str = "codex";
/// askpane's own request ids: the handshake uses these two, later requests count on from
/// [`FIRST_FREE_ID`].
pub const INITIALIZE_ID: u64 = 1;
pub const THREAD_START_ID: u64 = 2;
pub const FIRST_FREE_ID: u64 = 3;
/// The per-thread switch that lets the model ask in Codex's default mode, without touching the
/// user's config (the fixture README: `noexp-threadcfg`).
pub const QUESTION_FEATURE: &str = "features.default_mode_request_user_input";
/// The tool names a Codex command and a file change show under in the transcript and on
/// permission cards.
pub const COMMAND_TOOL: &str = "Shell";
pub const FILE_CHANGE_TOOL: &str = "Edit";
/// The server request that carries the model's questions.
pub const QUESTION_METHOD: &str = "item/tool/requestUserInput";

/// One line from the app-server.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per app-server line, moved once: 392 bytes is nothing beside parsing the line"
)]
pub enum ServerLine {
    /// The reply to one of askpane's requests.
    Response { id: Option<u64>, result: Value, error: Option<String> },
    /// `item/tool/requestUserInput`: questions for the window. `id` is the JSON-RPC id.
    Question { id: Value, request: UserInputRequest },
    /// `item/commandExecution/requestApproval`: a command to allow or deny.
    CommandApproval { id: Value, request: PermissionRequest },
    /// `item/fileChange/requestApproval`: file changes to allow or deny; the changes themselves
    /// came with the item's `item/started` (`item_id`).
    FileChangeApproval { id: Value, item_id: String, reason: Option<String> },
    /// A server request askpane does not handle (or cannot read): it gets an error reply, so
    /// Codex does not wait for ever.
    Unhandled { id: Value, method: String },
    /// `serverRequest/resolved`: the request with this key needs no answer any more.
    Resolved { key: String },
    /// `turn/started`.
    TurnStarted { turn_id: String },
    /// `turn/completed`: how the turn ended.
    TurnEnded(TurnResult),
    /// `item/started`, kept for a file change's approval.
    ItemStarted { item: Value },
    /// `item/completed`, as transcript lines.
    Transcript(Vec<CliMessage>),
    /// `error` or `warning`, in Codex's words.
    Problem { text: String, error: bool },
    /// Anything else (deltas, token usage, status changes).
    Other { method: String },
}

/// The key of a server request id, as permission cards and withdrawals name it.
pub fn request_key(id: &Value) -> String {
    id.to_string()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Types one app-server line. Never fails: what it cannot read is [`ServerLine::Other`], or for
/// a request [`ServerLine::Unhandled`].
pub fn parse_server_line(line: &Value) -> ServerLine {
    let method = text(line, "method");
    let params = line.get("params").cloned().unwrap_or(Value::Null);
    let id = line.get("id").cloned();
    match (method, id) {
        (None, id) => ServerLine::Response {
            id: id.as_ref().and_then(Value::as_u64),
            result: line.get("result").cloned().unwrap_or(Value::Null),
            error: line
                .get("error")
                .map(|error| text(error, "message").unwrap_or_else(|| error.to_string())),
        },
        (Some(method), Some(id)) => parse_request(method, id, params),
        (Some(method), None) => parse_notification(method, &params),
    }
}

fn parse_request(method: String, id: Value, params: Value) -> ServerLine {
    match method.as_str() {
        QUESTION_METHOD => match serde_json::from_value(params) {
            Ok(request) => ServerLine::Question { id, request },
            Err(_) => ServerLine::Unhandled { id, method },
        },
        "item/commandExecution/requestApproval" => {
            let request = command_permission(&request_key(&id), &params);
            ServerLine::CommandApproval { id, request }
        }
        "item/fileChange/requestApproval" => match text(&params, "itemId") {
            Some(item_id) => {
                ServerLine::FileChangeApproval { id, item_id, reason: text(&params, "reason") }
            }
            None => ServerLine::Unhandled { id, method },
        },
        _ => ServerLine::Unhandled { id, method },
    }
}

fn parse_notification(method: String, params: &Value) -> ServerLine {
    match method.as_str() {
        "serverRequest/resolved" => match params.get("requestId") {
            Some(id) => ServerLine::Resolved { key: request_key(id) },
            None => ServerLine::Other { method },
        },
        "turn/started" => match params.get("turn").and_then(|turn| text(turn, "id")) {
            Some(turn_id) => ServerLine::TurnStarted { turn_id },
            None => ServerLine::Other { method },
        },
        "turn/completed" => ServerLine::TurnEnded(turn_result(params.get("turn"))),
        "item/started" => match params.get("item") {
            Some(item) => ServerLine::ItemStarted { item: item.clone() },
            None => ServerLine::Other { method },
        },
        "item/completed" => {
            let item = params.get("item").unwrap_or(&Value::Null);
            ServerLine::Transcript(transcript(item))
        }
        "error" => {
            let message = params.get("error").and_then(|error| text(error, "message"));
            let text = message.or_else(|| text(params, "message"));
            ServerLine::Problem { text: text.unwrap_or_else(|| params.to_string()), error: true }
        }
        "warning" => ServerLine::Problem {
            text: text(params, "message").unwrap_or_else(|| params.to_string()),
            error: false,
        },
        _ => ServerLine::Other { method },
    }
}

/// How a turn ended, in the words a Claude Code `result` uses: `success`, `interrupted`, or
/// `error` with Codex's message.
fn turn_result(turn: Option<&Value>) -> TurnResult {
    let turn = turn.unwrap_or(&Value::Null);
    let status = text(turn, "status").unwrap_or_default();
    let error = turn.get("error").and_then(|error| text(error, "message"));
    let subtype = match status.as_str() {
        "completed" => "success".to_owned(),
        "failed" => "error".to_owned(),
        other => other.to_owned(),
    };
    TurnResult {
        is_error: status == "failed",
        subtype,
        duration_ms: turn.get("durationMs").and_then(Value::as_u64),
        text: error,
        ..TurnResult::default()
    }
}

/// What `thread/start`'s result says about the session.
pub fn session_info(result: &Value) -> Option<SessionInfo> {
    let thread = result.get("thread")?;
    Some(SessionInfo {
        agent: SessionAgent::Codex,
        session_id: text(thread, "id")?,
        version: text(thread, "cliVersion").map(|version| format!("Codex {version}")),
        model: text(result, "model"),
        cwd: text(result, "cwd").or_else(|| text(thread, "cwd")),
        tools: Vec::new(),
        capabilities: Vec::new(),
    })
}

/// The command a command item or approval runs, as the user would type it: the parsed action
/// when there is exactly one (`touch x`, not `/bin/bash -lc 'touch x'`).
fn command_line(value: &Value) -> String {
    let actions = value.get("commandActions").and_then(Value::as_array);
    if let Some([action]) = actions.map(Vec::as_slice)
        && let Some(command) = text(action, "command")
    {
        return command;
    }
    text(value, "command").unwrap_or_default()
}

fn command_permission(key: &str, params: &Value) -> PermissionRequest {
    let mut input = json!({"command": command_line(params)});
    if let (Some(cwd), Some(object)) = (text(params, "cwd"), input.as_object_mut()) {
        object.insert("cwd".into(), Value::String(cwd));
    }
    PermissionRequest {
        request_id: key.to_owned(),
        tool_name: COMMAND_TOOL.to_owned(),
        input,
        tool_use_id: text(params, "itemId"),
        title: None,
        description: None,
        reason: text(params, "reason"),
        agent_id: None,
        cwd: text(params, "cwd"),
        on_disk: None,
        suggestions: Vec::new(),
        deny_always: Vec::new(),
        origin: crate::protocol::permission::ApprovalOrigin::Hosted,
    }
}

/// A file-change approval as a permission card: the changed paths and one unified diff of
/// them all, from the item's `item/started` (`started`, when it came). The diff is the card's
/// `input.diff` (the window colours its `+`/`-` lines), not its description: shown once.
pub fn file_change_permission(
    key: &str,
    item_id: &str,
    reason: Option<String>,
    started: Option<&Value>,
) -> PermissionRequest {
    let changes = started.and_then(|item| item.get("changes")).cloned().unwrap_or(json!([]));
    let paths = file_paths(&changes);
    PermissionRequest {
        request_id: key.to_owned(),
        tool_name: FILE_CHANGE_TOOL.to_owned(),
        input: json!({"file_path": paths.join(", "), "diff": diffs(&changes)}),
        tool_use_id: Some(item_id.to_owned()),
        title: None,
        description: None,
        reason,
        agent_id: None,
        cwd: None,
        on_disk: None,
        suggestions: Vec::new(),
        deny_always: Vec::new(),
        origin: crate::protocol::permission::ApprovalOrigin::Hosted,
    }
}

fn file_paths(changes: &Value) -> Vec<String> {
    let changes = changes.as_array().map(Vec::as_slice).unwrap_or_default();
    changes.iter().filter_map(|change| text(change, "path")).collect()
}

/// Every change as a unified diff under its path. Codex writes an update as a unified diff
/// already, but an added (deleted) file as its bare content: those lines get their `+` (`-`),
/// so that every change reads the same way.
fn diffs(changes: &Value) -> String {
    let changes = changes.as_array().map(Vec::as_slice).unwrap_or_default();
    let parts: Vec<String> = changes
        .iter()
        .map(|change| {
            let path = text(change, "path").unwrap_or_default();
            let diff = text(change, "diff").unwrap_or_default();
            let kind = change.get("kind").and_then(|kind| text(kind, "type"));
            let marked = |mark: &str| -> String {
                diff.lines().map(|line| format!("{mark}{line}\n")).collect()
            };
            match kind.as_deref() {
                Some("add") => format!("{path} (new file)\n{}", marked("+")),
                Some("delete") => format!("{path} (deleted)\n{}", marked("-")),
                _ => match change.pointer("/kind/move_path").and_then(Value::as_str) {
                    Some(to) => format!("{path} → {to}\n{diff}"),
                    None => format!("{path}\n{diff}"),
                },
            }
        })
        .collect();
    parts.join("\n").trim().to_owned()
}

/// A completed item as transcript lines: an agent message, reasoning, a command with its
/// output, a file change with its diff. The user's own message is left out (the window shows
/// the prompt it sent); kinds askpane does not show are empty.
pub fn transcript(item: &Value) -> Vec<CliMessage> {
    let id = text(item, "id").unwrap_or_default();
    let status = text(item, "status").unwrap_or_default();
    let tool = |name: &str, input: Value, content: String, is_error: bool| {
        vec![
            CliMessage::Assistant {
                blocks: vec![Block::ToolUse { id: id.clone(), name: name.to_owned(), input }],
            },
            CliMessage::User {
                blocks: vec![Block::ToolResult { tool_use_id: id.clone(), content, is_error }],
            },
        ]
    };
    match text(item, "type").as_deref() {
        Some("agentMessage") => match text(item, "text") {
            Some(text) if !text.is_empty() => {
                vec![CliMessage::Assistant { blocks: vec![Block::Text(text)] }]
            }
            _ => Vec::new(),
        },
        Some("reasoning") => {
            let summary = item.get("summary").and_then(Value::as_array);
            let parts: Vec<&str> =
                summary.into_iter().flatten().filter_map(Value::as_str).collect();
            match parts.join("\n") {
                text if text.trim().is_empty() => Vec::new(),
                text => vec![CliMessage::Assistant { blocks: vec![Block::Thinking(text)] }],
            }
        }
        Some("commandExecution") => {
            let output = text(item, "aggregatedOutput").unwrap_or_default();
            let exit_code = item.get("exitCode").and_then(Value::as_i64);
            let content = match (status.as_str(), exit_code) {
                ("declined", _) => "The user declined this command.".to_owned(),
                (_, Some(code)) if output.is_empty() => format!("exit code {code}"),
                (_, Some(code)) if code != 0 => format!("{output}\nexit code {code}"),
                (other, None) if output.is_empty() => other.to_owned(),
                _ => output,
            };
            let failed = status != "completed" || exit_code.is_some_and(|code| code != 0);
            tool(COMMAND_TOOL, json!({"command": command_line(item)}), content, failed)
        }
        Some("fileChange") => {
            let changes = item.get("changes").cloned().unwrap_or(json!([]));
            let content = match status.as_str() {
                "declined" => "The user declined these changes.".to_owned(),
                _ => diffs(&changes),
            };
            let input = json!({"file_path": file_paths(&changes).join(", ")});
            tool(FILE_CHANGE_TOOL, input, content, status != "completed")
        }
        _ => Vec::new(),
    }
}

/// `initialize`: askpane as the client; no experimental API is needed (the question tool is
/// switched on per thread).
pub fn initialize(version: &str) -> Value {
    json!({"id": INITIALIZE_ID, "method": "initialize", "params": {
        "clientInfo": {"name": "askpane", "title": "askpane", "version": version},
        "capabilities": {"experimentalApi": false}}})
}

pub fn initialized() -> Value {
    json!({"method": "initialized"})
}

/// `thread/start` in `cwd`, with the question tool switched on for this thread alone.
pub fn thread_start(cwd: &str) -> Value {
    json!({"id": THREAD_START_ID, "method": "thread/start", "params": {
        "cwd": cwd, "config": {QUESTION_FEATURE: true}}})
}

/// A user turn.
pub fn turn_start(id: u64, thread_id: &str, prompt: &str) -> Value {
    json!({"id": id, "method": "turn/start", "params": {"threadId": thread_id,
        "input": [{"type": "text", "text": prompt, "text_elements": []}]}})
}

/// Stop the running turn (the Stop button).
pub fn turn_interrupt(id: u64, thread_id: &str, turn_id: &str) -> Value {
    json!({"id": id, "method": "turn/interrupt", "params": {"threadId": thread_id, "turnId": turn_id}})
}

/// The question request as Codex wrote it (`id`, `method`, `params`): what `askpane codex`
/// hands to the inbox, which reads it back with [`crate::protocol::parse_message`].
pub fn question_message(id: &Value, request: &UserInputRequest) -> Value {
    json!({"id": id, "method": QUESTION_METHOD, "params": request})
}

/// The name a window knows a question by: the model's call id, made unique with the request key
/// (a model may reuse a call id in a later turn).
pub fn question_call(id: &Value, request: &UserInputRequest) -> String {
    format!("{}#{}", request.item_id, request_key(id))
}

/// The result for `item/tool/requestUserInput`.
pub fn result_line(id: &Value, result: Value) -> Value {
    json!({"id": id, "result": result})
}

/// The reply to an approval request: `accept`, or `decline` (the model reads that the user
/// rejected it, and the turn goes on). Codex has no place for a deny message.
pub fn approval_reply(id: &Value, decision: &PermissionDecision) -> Value {
    let decision = match decision {
        PermissionDecision::AllowOnce => "accept",
        // Codex sends no rule suggestions, so no card offers "Always …"; were one decided, it
        // is allowed for this session, Codex's own nearest "always".
        PermissionDecision::AllowAlways { .. } => "acceptForSession",
        // Nobody decided, and a hosted session has no dialog of its own: declined.
        // Codex asks no forms: a filled form is never this card's decision.
        PermissionDecision::Deny { .. }
        | PermissionDecision::DenyAlways { .. }
        | PermissionDecision::HandBack
        | PermissionDecision::Fill { .. } => "decline",
    };
    json!({"id": id, "result": {"decision": decision}})
}

/// The error reply to a server request askpane does not handle.
pub fn unhandled_reply(id: &Value, method: &str) -> Value {
    json!({"id": id, "error": {"code": -32601,
        "message": format!("askpane does not handle {method}")}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_approval_becomes_a_permission_card() {
        // Captured from codex app-server 0.169.0 with approval_policy "untrusted".
        let line = json!({"method":"item/commandExecution/requestApproval","id":0,"params":{"kind":"command","threadId":"t","turnId":"u","itemId":"call_ask_1","startedAtMs":1,"environmentId":"local","command":"/bin/bash -lc 'touch made-by-codex.txt'","cwd":"/w","commandActions":[{"type":"unknown","command":"touch made-by-codex.txt"}],"proposedExecpolicyAmendment":["touch","made-by-codex.txt"],"availableDecisions":["accept","cancel"]}});
        let ServerLine::CommandApproval { id, request } = parse_server_line(&line) else {
            panic!("not an approval");
        };
        assert_eq!(request.request_id, "0");
        assert_eq!(request.input, json!({"command": "touch made-by-codex.txt", "cwd": "/w"}));
        assert_eq!(
            approval_reply(&id, &PermissionDecision::Deny { message: "no".into() }).to_string(),
            r#"{"id":0,"result":{"decision":"decline"}}"#
        );
    }

    #[test]
    fn items_become_transcript_lines() {
        let message = json!({"type":"agentMessage","id":"m","text":"Done."});
        assert_eq!(
            transcript(&message),
            vec![CliMessage::Assistant { blocks: vec![Block::Text("Done.".into())] }]
        );
        let command = json!({"type":"commandExecution","id":"c","command":"/bin/bash -lc ls",
            "status":"completed","commandActions":[{"type":"listFiles","command":"ls"}],
            "aggregatedOutput":"a\nb\n","exitCode":0});
        let lines = transcript(&command);
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1],
            CliMessage::User {
                blocks: vec![Block::ToolResult {
                    tool_use_id: "c".into(),
                    content: "a\nb\n".into(),
                    is_error: false
                }]
            }
        );
        assert!(transcript(&json!({"type":"userMessage","id":"u"})).is_empty());
    }

    #[test]
    fn a_file_change_approval_carries_the_diff_its_item_announced() {
        // Captured from codex app-server 0.169.0 (the fake model's apply_patch, tests/codex.rs):
        // an update carries a unified diff, an added file its bare content.
        let item = json!({"type": "fileChange", "id": "call_9", "status": "inProgress",
            "changes": [{"path": "src/lib.rs", "kind": {"type": "update", "move_path": null},
                "diff": "@@ -1 +1 @@\n-a\n+b\n"},
                {"path": "new.txt", "kind": {"type": "add"}, "diff": "one\ntwo\n"}]});
        let line = json!({"method": "item/fileChange/requestApproval", "id": 3,
            "params": {"threadId": "t", "turnId": "u", "itemId": "call_9", "startedAtMs": 1,
                "reason": "needs write access"}});
        let ServerLine::FileChangeApproval { id, item_id, reason } = parse_server_line(&line)
        else {
            panic!("not a file-change approval");
        };
        let request = file_change_permission(&request_key(&id), &item_id, reason, Some(&item));
        assert_eq!(request.request_id, "3");
        assert_eq!(request.tool_name, FILE_CHANGE_TOOL);
        assert_eq!(request.input["file_path"], "src/lib.rs, new.txt");
        assert_eq!(
            request.input["diff"],
            "src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n\nnew.txt (new file)\n+one\n+two"
        );
        assert_eq!(request.description, None);
        assert_eq!(request.reason.as_deref(), Some("needs write access"));
        let declined = json!({"type": "fileChange", "id": "call_9", "status": "declined",
            "changes": item["changes"]});
        let lines = transcript(&declined);
        assert_eq!(
            lines.get(1),
            Some(&CliMessage::User {
                blocks: vec![Block::ToolResult {
                    tool_use_id: "call_9".into(),
                    content: "The user declined these changes.".into(),
                    is_error: true
                }]
            })
        );
    }

    #[test]
    fn an_interrupted_turn_and_a_resolved_request_are_read() {
        let ended = json!({"method":"turn/completed","params":{"turn":{"id":"u","status":"interrupted","error":null}}});
        let ServerLine::TurnEnded(result) = parse_server_line(&ended) else { panic!() };
        assert_eq!(result.subtype, "interrupted");
        let resolved =
            json!({"method":"serverRequest/resolved","params":{"threadId":"t","requestId":0}});
        assert_eq!(parse_server_line(&resolved), ServerLine::Resolved { key: "0".into() });
    }

    #[test]
    fn a_question_handed_to_the_inbox_is_read_back_and_answered_in_codexs_json_rpc() {
        use crate::protocol::{Envelope, Outcome, ReplyFormat, parse_message};
        let line = json!({"method": QUESTION_METHOD, "id": 7, "params": {"threadId": "t",
            "turnId": "u", "itemId": "call_1", "questions": [{"id": "db", "header": "Database",
            "question": "Which database?", "isOther": true, "isSecret": false,
            "options": [{"label": "SQLite", "description": "a file"}]}]}});
        let ServerLine::Question { id, request } = parse_server_line(&line) else {
            panic!("not a question");
        };
        // What `askpane codex` hands over is Codex's request again, and reads back the same.
        let message = question_message(&id, &request);
        let incoming = parse_message(&message).expect("an envelope askpane reads");
        let Envelope::CodexServer { call, id: read_id, request: read } = &incoming.envelope else {
            panic!("{:?}", incoming.envelope);
        };
        assert_eq!((call.as_str(), read_id, read.as_ref()), ("call_1#7", &id, &request));
        assert_eq!(incoming.envelope.tool_use_id(), Some("call_1#7"));
        assert_eq!(incoming.envelope.format(), ReplyFormat::CodexServer);
        let note = "user_note: The user declined to answer these questions and said: later";
        assert_eq!(
            incoming.envelope.reply(&Outcome::declined("later")),
            Some(json!({"id": 7, "result": {"answers": {"db": {"answers": [note]}}}}))
        );
        // The receipt and the history show what Codex's model reads: the answers' JSON.
        let validated = crate::protocol::validate(&incoming.input).expect("valid questions");
        let shape = crate::protocol::ReplyShape::default();
        let read =
            shape.model_text(&incoming.envelope, &validated.ask, &Outcome::declined("later"));
        assert_eq!(read, json!({"answers": {"db": {"answers": [note]}}}).to_string());
        // Resolved by Codex meanwhile: nothing is written.
        assert_eq!(incoming.envelope.reply(&Outcome::Withdrawn), None);
        // Only Codex's own request can be answered in Codex's form.
        let other = parse_message(&json!({"questions": []})).expect("a tool input");
        assert_eq!(other.envelope.reply_as(ReplyFormat::CodexServer, &Outcome::closed()), None);
        // A request whose params Codex's schema does not fit says what is wrong.
        let broken = json!({"method": QUESTION_METHOD, "id": 8, "params": {"itemId": "x"}});
        let error = parse_message(&broken).expect_err("no questions");
        assert!(error.to_string().contains("missing field"), "{error}");
    }
}
