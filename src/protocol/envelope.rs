//! Which envelope a message came in, and the reply to it rendered in that same envelope.
//!
//! One AskUserQuestion arrives in one of five wrappers: (a) the raw tool input, (b) a `tool_use`
//! content block, (c) a stream-json `control_request` `can_use_tool`, (d) a Claude Code
//! `PreToolUse` or `PermissionRequest` hook input, (e) the seed web protocol's `user_question`.
//! [`parse_message`] finds the wrapper and the tool input inside; [`Envelope::reply`] turns an
//! [`Outcome`] into the JSON that wrapper's sender expects back.

use serde_json::{Map, Value, json};

use super::answer::Answers;
use super::json_type_name;
use super::mcp::{self, McpContext};
use super::outcome::Outcome;

/// The tool this crate answers.
pub const TOOL_NAME: &str = "AskUserQuestion";

/// What Claude Code's spinner says while the hook waits (its hooks' `statusMessage`, in the
/// settings schema of 2.1.197 and 2.1.330 alike): the question is in askpane, not lost.
pub const HOOK_STATUS_MESSAGE: &str = "Waiting for your answer in askpane";

/// A message split into its envelope and the AskUserQuestion tool input it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    pub envelope: Envelope,
    /// The tool input (`{"questions": …}`), not yet validated.
    pub input: Value,
}

/// Where a question came from, with the ids its reply must carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// (a) `{"questions": …}` on its own.
    ToolInput,
    /// (b) `{"type":"tool_use","name":"AskUserQuestion","id":…,"input":…}`.
    ToolUse { id: String },
    /// (c) `{"type":"control_request","request_id":…,"request":{"subtype":"can_use_tool",…}}`.
    ControlRequest { request_id: String, tool_use_id: Option<String> },
    /// (d) a hook's stdin.
    Hook { event: HookEvent, context: HookContext },
    /// (e) `{"type":"user_question","tool_use_id":…,"questions":…,"timestamp":…}`.
    SeedWeb { tool_use_id: String },
    /// (f) an MCP `tools/call` of `ask_user_question`, as `askpane mcp` hands it to the inbox:
    /// `{"type":"mcp_tool_call","call_id":…,"client":…,"cwd":…,"arguments":…}`.
    Mcp { context: McpContext },
    /// (g) Codex's app-server `item/tool/requestUserInput` request, as `askpane codex` hands it
    /// to the inbox: `{"id":…,"method":"item/tool/requestUserInput","params":…}`. `call` is the
    /// name windows know it by ([`super::codex_server::question_call`]).
    CodexServer { call: String, id: Value, request: Box<super::codex::UserInputRequest> },
    /// (h) an ACP agent's `elicitation/create` shaped like Claude's question forms, as
    /// `askpane acp` hands it to the inbox: the JSON-RPC request itself. `call` is the name
    /// windows know it by ([`super::acp::elicitation::question_call`]); `params` are kept to
    /// write the result in the form's own field keys.
    Acp { call: String, id: Value, params: Box<Value> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    PreToolUse,
    PermissionRequest,
}

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }
}

/// What a hook input says about the session that asked, for showing beside the question.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookContext {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub permission_mode: Option<String>,
    pub tool_use_id: Option<String>,
    /// Set when a subagent asks: its id and its type (`Explore`, `general-purpose`, …).
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
}

impl HookContext {
    /// The project's folder name, from `cwd`.
    pub fn project(&self) -> Option<&str> {
        let cwd = self.cwd.as_deref()?.trim_end_matches('/');
        cwd.rsplit('/').next().filter(|name| !name.is_empty())
    }
}

/// How a request's reply is written: in `format` (else the envelope's own), and with
/// `always_a_line` (`askpane ask`) the tool-input form where the envelope's answer is to send
/// nothing. Every writer of a reply and the history use this one rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplyShape {
    pub format: Option<ReplyFormat>,
    pub always_a_line: bool,
}

impl ReplyShape {
    /// What the asking agent's model reads for `outcome`, asked in `envelope`: OpenCode words an
    /// answer its own way; Codex's model reads the answers' JSON (or, through its hook, the
    /// blocked call's reason); every other agent reads Claude Code's tool result (the MCP result
    /// carries the same words). The receipt and the history both show this.
    pub fn model_text(&self, envelope: &Envelope, ask: &super::Ask, outcome: &Outcome) -> String {
        match self.format.unwrap_or_else(|| envelope.format()) {
            ReplyFormat::OpenCode => super::opencode::model_text(ask, outcome),
            ReplyFormat::CodexHook => super::codex::hook_model_text(outcome),
            // The tool's output Codex hands its model is the result's `{"answers": …}`.
            ReplyFormat::CodexServer => envelope
                .reply_as(ReplyFormat::CodexServer, outcome)
                .and_then(|line| line.get("result").map(Value::to_string))
                .unwrap_or_default(),
            // claude-agent-acp turns the result back into Claude Code's own tool result.
            ReplyFormat::Acp
            | ReplyFormat::ToolInput
            | ReplyFormat::ControlResponse
            | ReplyFormat::PreToolUse
            | ReplyFormat::PermissionRequest
            | ReplyFormat::SeedWeb
            | ReplyFormat::McpToolResult => {
                outcome.model_text(super::outcome::ResultStyle::Current)
            }
        }
    }

    /// The reply line for `outcome` in `envelope`, or `None` when nothing is written.
    pub fn line(&self, envelope: &Envelope, outcome: &Outcome) -> Option<Value> {
        let format = self.format.unwrap_or_else(|| envelope.format());
        envelope.reply_as(format, outcome).or_else(|| {
            self.always_a_line.then(|| envelope.reply_as(ReplyFormat::ToolInput, outcome)).flatten()
        })
    }
}

/// The reply shapes askpane can write; each envelope has its own, and `--format` can pick another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyFormat {
    /// `{questions, answers, annotations}` (the `updatedInput`), or `{outcome, message}`.
    ToolInput,
    /// A stream-json `control_response` (allow with `updatedInput`, or deny with `message`).
    ControlResponse,
    /// A `PreToolUse` hook's `hookSpecificOutput`.
    PreToolUse,
    /// A `PermissionRequest` hook's `hookSpecificOutput`.
    PermissionRequest,
    /// The seed web protocol's `question_answer` (answers by number).
    SeedWeb,
    /// An MCP `CallToolResult`: the text the model reads, `structuredContent`, `isError`.
    McpToolResult,
    /// What goes back to OpenCode's question tool (`askpane opencode`): answers by label, or a
    /// reject ([`super::opencode::Reply`]).
    OpenCode,
    /// What Codex's `PreToolUse` hook prints for `request_user_input` (`askpane codex-hook`):
    /// always a deny, whose reason carries the answer ([`super::codex::hook_reply`]).
    CodexHook,
    /// The JSON-RPC result `codex app-server` takes for `item/tool/requestUserInput`
    /// ([`super::codex::response`]); only a [`Envelope::CodexServer`] request can be answered so.
    CodexServer,
    /// The JSON-RPC result an ACP agent takes for `elicitation/create`
    /// ([`super::acp::elicitation::outcome_result`]); only an [`Envelope::Acp`] request.
    Acp,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("expected a JSON object, found {found}")]
    NotObject { found: &'static str },
    #[error("this {envelope} is for the tool `{tool}`, not {TOOL_NAME}")]
    OtherTool { envelope: &'static str, tool: String },
    #[error("this {envelope} has no `{field}`")]
    MissingField { envelope: &'static str, field: &'static str },
    #[error("this {envelope} cannot be read: {reason}")]
    Unreadable { envelope: &'static str, reason: String },
    #[error("the hook event `{0}` is not one askpane answers (PreToolUse or PermissionRequest)")]
    UnsupportedHookEvent(String),
    #[error("the control_request subtype `{0}` is not a question (askpane answers can_use_tool)")]
    NotAQuestion(String),
    #[error(
        "not a message askpane understands: expected an {TOOL_NAME} tool input \
         ({{\"questions\": …}}), a tool_use block, a can_use_tool control_request, a PreToolUse or \
         PermissionRequest hook input, or a user_question message"
    )]
    Unrecognised,
}

fn text_field(object: &Map<String, Value>, field: &str) -> Option<String> {
    object.get(field).and_then(Value::as_str).map(str::to_owned)
}

fn required_text(
    object: &Map<String, Value>,
    envelope: &'static str,
    field: &'static str,
) -> Result<String, EnvelopeError> {
    text_field(object, field).ok_or(EnvelopeError::MissingField { envelope, field })
}

fn required_value(
    object: &Map<String, Value>,
    envelope: &'static str,
    field: &'static str,
) -> Result<Value, EnvelopeError> {
    object.get(field).cloned().ok_or(EnvelopeError::MissingField { envelope, field })
}

fn check_tool(envelope: &'static str, tool: Option<&str>) -> Result<(), EnvelopeError> {
    match tool {
        Some(TOOL_NAME) => Ok(()),
        Some(other) => Err(EnvelopeError::OtherTool { envelope, tool: other.to_owned() }),
        None => Err(EnvelopeError::MissingField { envelope, field: "tool_name" }),
    }
}

/// Recognises the envelope of one JSON message and takes the tool input out of it.
pub fn parse_message(message: &Value) -> Result<Incoming, EnvelopeError> {
    let Some(object) = message.as_object() else {
        return Err(EnvelopeError::NotObject { found: json_type_name(message) });
    };
    if let Some(event) = object.get("hook_event_name").and_then(Value::as_str) {
        return parse_hook(object, event);
    }
    if object.get("method").and_then(Value::as_str) == Some(super::codex_server::QUESTION_METHOD) {
        return parse_codex_request(object);
    }
    if object.get("method").and_then(Value::as_str) == Some(super::acp::ELICITATION_CREATE) {
        return parse_acp_request(object);
    }
    match object.get("type").and_then(Value::as_str) {
        Some("control_request") => parse_control_request(object),
        Some("tool_use") => {
            const ENVELOPE: &str = "tool_use block";
            check_tool(ENVELOPE, object.get("name").and_then(Value::as_str))?;
            let id = required_text(object, ENVELOPE, "id")?;
            let input = required_value(object, ENVELOPE, "input")?;
            Ok(Incoming { envelope: Envelope::ToolUse { id }, input })
        }
        Some(mcp::MESSAGE_TYPE) => {
            const ENVELOPE: &str = "mcp_tool_call message";
            let input = required_value(object, ENVELOPE, "arguments")?;
            let context = McpContext::from_message(object);
            Ok(Incoming { envelope: Envelope::Mcp { context }, input })
        }
        Some("user_question") => {
            const ENVELOPE: &str = "user_question message";
            let tool_use_id = required_text(object, ENVELOPE, "tool_use_id")?;
            let questions = required_value(object, ENVELOPE, "questions")?;
            let input = json!({ "questions": questions });
            Ok(Incoming { envelope: Envelope::SeedWeb { tool_use_id }, input })
        }
        _ if object.contains_key("questions") => {
            Ok(Incoming { envelope: Envelope::ToolInput, input: message.clone() })
        }
        _ => Err(EnvelopeError::Unrecognised),
    }
}

fn parse_hook(object: &Map<String, Value>, event: &str) -> Result<Incoming, EnvelopeError> {
    const ENVELOPE: &str = "hook input";
    let event = match event {
        "PreToolUse" => HookEvent::PreToolUse,
        "PermissionRequest" => HookEvent::PermissionRequest,
        other => return Err(EnvelopeError::UnsupportedHookEvent(other.to_owned())),
    };
    check_tool(ENVELOPE, object.get("tool_name").and_then(Value::as_str))?;
    let input = required_value(object, ENVELOPE, "tool_input")?;
    let context = HookContext {
        session_id: text_field(object, "session_id"),
        cwd: text_field(object, "cwd"),
        permission_mode: text_field(object, "permission_mode"),
        tool_use_id: text_field(object, "tool_use_id"),
        agent_id: text_field(object, "agent_id"),
        agent_type: text_field(object, "agent_type"),
    };
    Ok(Incoming { envelope: Envelope::Hook { event, context }, input })
}

fn parse_codex_request(object: &Map<String, Value>) -> Result<Incoming, EnvelopeError> {
    const ENVELOPE: &str = "Codex requestUserInput request";
    let id = required_value(object, ENVELOPE, "id")?;
    let params = required_value(object, ENVELOPE, "params")?;
    let request: super::codex::UserInputRequest =
        serde_json::from_value(params).map_err(|error| EnvelopeError::Unreadable {
            envelope: ENVELOPE,
            reason: error.to_string(),
        })?;
    let input = json!({ "questions": super::codex::questions_input(&request.questions) });
    let call = super::codex_server::question_call(&id, &request);
    Ok(Incoming { envelope: Envelope::CodexServer { call, id, request: Box::new(request) }, input })
}

fn parse_acp_request(object: &Map<String, Value>) -> Result<Incoming, EnvelopeError> {
    const ENVELOPE: &str = "ACP elicitation/create request";
    let id = required_value(object, ENVELOPE, "id")?;
    let params = required_value(object, ENVELOPE, "params")?;
    let unreadable = |reason: String| EnvelopeError::Unreadable { envelope: ENVELOPE, reason };
    let elicitation =
        super::acp::elicitation::parse(&params).map_err(|error| unreadable(error.to_string()))?;
    let super::acp::elicitation::Asked::Questions(form) = &elicitation.asked else {
        return Err(unreadable("not a form of questions".to_owned()));
    };
    let input = Value::Object(form.ask.input().clone());
    let call = super::acp::elicitation::question_call(&id, &elicitation);
    Ok(Incoming { envelope: Envelope::Acp { call, id, params: Box::new(params) }, input })
}

fn parse_control_request(object: &Map<String, Value>) -> Result<Incoming, EnvelopeError> {
    const ENVELOPE: &str = "control_request";
    let request_id = required_text(object, ENVELOPE, "request_id")?;
    let request = object
        .get("request")
        .and_then(Value::as_object)
        .ok_or(EnvelopeError::MissingField { envelope: ENVELOPE, field: "request" })?;
    match request.get("subtype").and_then(Value::as_str) {
        Some("can_use_tool") => {}
        Some(other) => return Err(EnvelopeError::NotAQuestion(other.to_owned())),
        None => return Err(EnvelopeError::MissingField { envelope: ENVELOPE, field: "subtype" }),
    }
    check_tool(ENVELOPE, request.get("tool_name").and_then(Value::as_str))?;
    let input = required_value(request, ENVELOPE, "input")?;
    let tool_use_id = text_field(request, "tool_use_id");
    Ok(Incoming { envelope: Envelope::ControlRequest { request_id, tool_use_id }, input })
}

impl Envelope {
    /// The reply shape this envelope's sender expects.
    pub fn format(&self) -> ReplyFormat {
        match self {
            Envelope::ToolInput | Envelope::ToolUse { .. } => ReplyFormat::ToolInput,
            Envelope::ControlRequest { .. } => ReplyFormat::ControlResponse,
            Envelope::Hook { event: HookEvent::PreToolUse, .. } => ReplyFormat::PreToolUse,
            Envelope::Hook { event: HookEvent::PermissionRequest, .. } => {
                ReplyFormat::PermissionRequest
            }
            Envelope::SeedWeb { .. } => ReplyFormat::SeedWeb,
            Envelope::Mcp { .. } => ReplyFormat::McpToolResult,
            Envelope::CodexServer { .. } => ReplyFormat::CodexServer,
            Envelope::Acp { .. } => ReplyFormat::Acp,
        }
    }

    /// What the envelope is, in words, for reports.
    pub fn describe(&self) -> &'static str {
        match self {
            Envelope::ToolInput => "AskUserQuestion tool input",
            Envelope::ToolUse { .. } => "tool_use block",
            Envelope::ControlRequest { .. } => "can_use_tool control_request",
            Envelope::Hook { event: HookEvent::PreToolUse, .. } => "PreToolUse hook input",
            Envelope::Hook { event: HookEvent::PermissionRequest, .. } => {
                "PermissionRequest hook input"
            }
            Envelope::SeedWeb { .. } => "user_question message",
            Envelope::Mcp { .. } => "MCP tool call",
            Envelope::CodexServer { .. } => "Codex requestUserInput request",
            Envelope::Acp { .. } => "ACP elicitation/create request",
        }
    }

    /// The id of the model's tool call, when the envelope names it. Requests with the same id are
    /// the same question (asked again after a reconnect, say) and are shown once.
    pub fn tool_use_id(&self) -> Option<&str> {
        match self {
            Envelope::ToolInput => None,
            Envelope::ToolUse { id } | Envelope::SeedWeb { tool_use_id: id } => Some(id),
            Envelope::ControlRequest { tool_use_id, .. } => tool_use_id.as_deref(),
            Envelope::Hook { context, .. } => context.tool_use_id.as_deref(),
            Envelope::Mcp { context } => Some(&context.call_id),
            Envelope::CodexServer { call, .. } | Envelope::Acp { call, .. } => Some(call),
        }
    }

    /// The hook's session details, for hook envelopes.
    pub fn hook_context(&self) -> Option<&HookContext> {
        match self {
            Envelope::Hook { context, .. } => Some(context),
            _ => None,
        }
    }

    /// The reply in this envelope's own format; `None` when nothing must be sent.
    pub fn reply(&self, outcome: &Outcome) -> Option<Value> {
        self.reply_as(self.format(), outcome)
    }

    /// The reply in a chosen format. `None` means "send nothing": a withdrawn `can_use_tool` (the
    /// CLI already cancelled it), or a `PermissionRequest` hook with no human to ask (Claude Code
    /// then goes on to its own dialog).
    pub fn reply_as(&self, format: ReplyFormat, outcome: &Outcome) -> Option<Value> {
        match format {
            ReplyFormat::ToolInput => Some(tool_input_reply(outcome)),
            ReplyFormat::ControlResponse => self.control_response(outcome),
            ReplyFormat::PreToolUse => Some(pre_tool_use_reply(outcome)),
            ReplyFormat::PermissionRequest => permission_request_reply(outcome),
            ReplyFormat::SeedWeb => Some(self.seed_web_reply(outcome)),
            ReplyFormat::McpToolResult => Some(mcp::tool_result(outcome)),
            ReplyFormat::OpenCode => {
                super::opencode::reply(outcome).and_then(|reply| serde_json::to_value(reply).ok())
            }
            ReplyFormat::CodexHook => super::codex::hook_reply(outcome),
            ReplyFormat::CodexServer => match self {
                Envelope::CodexServer { id, request, .. } => {
                    super::codex::response(request, outcome)
                        .map(|result| super::codex_server::result_line(id, result))
                }
                // The result names the question ids of Codex's request: no other has them.
                _ => None,
            },
            ReplyFormat::Acp => match self {
                Envelope::Acp { id, params, .. } => {
                    let elicitation = super::acp::elicitation::parse(params).ok()?;
                    let super::acp::elicitation::Asked::Questions(form) = elicitation.asked else {
                        return None;
                    };
                    super::acp::elicitation::outcome_result(&form, outcome)
                        .map(|result| super::acp::response(id, result))
                }
                // The result names the form's own field keys: no other request has them.
                _ => None,
            },
        }
    }

    fn control_response(&self, outcome: &Outcome) -> Option<Value> {
        let (request_id, tool_use_id) = match self {
            Envelope::ControlRequest { request_id, tool_use_id } => {
                (request_id.as_str(), tool_use_id.as_deref())
            }
            // Another envelope rendered as a control_response (`--format`): the tool_use id is
            // the only id there is.
            other => (other.tool_use_id().unwrap_or_default(), other.tool_use_id()),
        };
        let mut result = match outcome {
            Outcome::Withdrawn => return None,
            other => permission_result(other),
        };
        if let (Some(id), Some(result)) = (tool_use_id, result.as_object_mut()) {
            result.insert("toolUseID".into(), Value::String(id.to_owned()));
        }
        Some(json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id, "response": result}}))
    }

    /// The seed web reply: answers by number (`question_answer`), or what the page decided
    /// otherwise. "Chat about this" (`question_clarify`) and a countdown that ran out
    /// (`question_timed_out`, with the questions still being typed in) carry the picks by number
    /// too, so askpane's bridge rebuilds the same outcome with the same rules.
    fn seed_web_reply(&self, outcome: &Outcome) -> Value {
        let tool_use_id = self.tool_use_id().unwrap_or_default();
        let (kind, answers) = match outcome {
            Outcome::Answered(answers) => ("question_answer", Some(answers)),
            Outcome::Clarify { picked, .. } => ("question_clarify", picked.as_ref()),
            Outcome::TimedOut(timed_out) => ("question_timed_out", timed_out.picked.as_ref()),
            Outcome::Replied(reply) => {
                return json!({"type": "question_answer", "tool_use_id": tool_use_id,
                    "answers": {}, "response": reply.text()});
            }
            other => {
                return json!({"type": "question_declined", "tool_use_id": tool_use_id,
                    "outcome": other.kind(), "message": other.deny_message()});
            }
        };
        let (by_number, notes) = answers.map(answers_by_number).unwrap_or_default();
        let mut reply = json!({"type": kind, "tool_use_id": tool_use_id, "answers": by_number});
        let Some(object) = reply.as_object_mut() else { return reply };
        if !notes.is_empty() {
            object.insert("notes".into(), Value::Object(notes));
        }
        if let Outcome::TimedOut(timed_out) = outcome {
            let typing = timed_out.still_typing.iter().map(|(index, _)| Value::from(*index));
            object.insert("typing".into(), Value::Array(typing.collect()));
            // What was filled in and never confirmed, by number too, and where it came from.
            if let Some(unconfirmed) = &timed_out.unconfirmed {
                let (by_number, notes) = answers_by_number(&unconfirmed.answers);
                let mut prefilled = Map::new();
                prefilled.insert("from".into(), Value::from(unconfirmed.from.name()));
                prefilled.insert("answers".into(), Value::Object(by_number));
                if !notes.is_empty() {
                    prefilled.insert("notes".into(), Value::Object(notes));
                }
                object.insert("unconfirmed".into(), Value::Object(prefilled));
            }
        }
        reply
    }
}

/// The seed web form of answers: option numbers from 1 (Other as `other:<text>` after them) and
/// notes, each keyed by the question's index.
fn answers_by_number(answers: &Answers) -> (Map<String, Value>, Map<String, Value>) {
    let mut by_number = Map::new();
    let mut notes = Map::new();
    for entry in answers.entries().iter().filter(|entry| entry.unanswered.is_none()) {
        let key = entry.index.to_string();
        if entry.answer.is_some() {
            let numbers = entry.picked.iter().map(|index| (index + 1).to_string());
            let other = entry.other.iter().map(|text| format!("other:{text}"));
            let items: Vec<String> = numbers.chain(other).collect();
            by_number.insert(key.clone(), Value::String(items.join(",")));
        }
        if let Some(text) = &entry.notes {
            notes.insert(key, Value::String(text.clone()));
        }
    }
    (by_number, notes)
}

fn tool_input_reply(outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Answered(answers) => answers.updated_input(),
        Outcome::Replied(reply) => reply.updated_input(),
        other => json!({"outcome": other.kind(), "message": other.deny_message()}),
    }
}

fn pre_tool_use_reply(outcome: &Outcome) -> Value {
    let output = match outcome {
        Outcome::Answered(answers) => json!({"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "permissionDecisionReason": "Answered in askpane",
            "updatedInput": answers.updated_input()}),
        Outcome::Replied(reply) => json!({"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "permissionDecisionReason": "Answered in askpane",
            "updatedInput": reply.updated_input()}),
        // No human here: an allow without `updatedInput` does not answer, so Claude Code goes on
        // to ask in its own dialog (protocol.md §8.1). Never an invented answer.
        Outcome::Unavailable { reason } => json!({"hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": format!("askpane cannot ask here ({reason}); Claude Code asks instead")}),
        other => json!({"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": other.deny_message()}),
    };
    json!({ "hookSpecificOutput": output })
}

/// Claude Code's permission result for `outcome` (a `control_response`'s and a `PermissionRequest`
/// hook's alike): allow with the answers as the tool's input, or deny with the words the model
/// reads (a stop also interrupts the turn).
fn permission_result(outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Answered(answers) => {
            json!({"behavior": "allow", "updatedInput": answers.updated_input()})
        }
        Outcome::Replied(reply) => {
            json!({"behavior": "allow", "updatedInput": reply.updated_input()})
        }
        Outcome::Stopped { message } => {
            json!({"behavior": "deny", "message": message, "interrupt": true})
        }
        other => json!({"behavior": "deny", "message": other.deny_message()}),
    }
}

fn permission_request_reply(outcome: &Outcome) -> Option<Value> {
    let decision = match outcome {
        // No decision: Claude Code carries on with its own way of asking.
        Outcome::Unavailable { .. } => return None,
        other => permission_result(other),
    };
    Some(
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}),
    )
}
