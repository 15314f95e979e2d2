//! `session/update` → what a hosted session's transcript shows: the agent's message and thought
//! chunks, tool calls with their status, plans and mode changes. Anything else (usage, command
//! lists, titles) is [`Update::Other`] and shown nowhere.

use serde_json::Value;

use super::text;

/// A tool call's status as ACP names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl ToolStatus {
    fn parse(value: &Value) -> Option<ToolStatus> {
        match value.get("status").and_then(Value::as_str)? {
            "pending" => Some(ToolStatus::Pending),
            "in_progress" => Some(ToolStatus::InProgress),
            "completed" => Some(ToolStatus::Completed),
            "failed" => Some(ToolStatus::Failed),
            _ => None,
        }
    }
}

/// A tool call as far as the agent told it (a `tool_call`, or an update with only what changed).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallInfo {
    pub id: String,
    pub title: Option<String>,
    /// The tool's own name when the agent gives it (claude-agent-acp: `_meta.claudeCode.toolName`,
    /// or `name`), else ACP's `kind` (`read`, `edit`, `execute`, …).
    pub tool: Option<String>,
    pub status: Option<ToolStatus>,
    pub raw_input: Option<Value>,
    /// The text parts of `content` (and diffs as `path` lines), for the transcript.
    pub text: Vec<String>,
}

/// One step of a plan (`plan` update).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanEntry {
    pub content: String,
    pub status: String,
}

/// One `session/update`.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    AgentMessage(String),
    Thought(String),
    /// The user's own message echoed back (a loaded session).
    UserMessage(String),
    ToolCall(ToolCallInfo),
    ToolCallUpdate(ToolCallInfo),
    Plan(Vec<PlanEntry>),
    ModeChanged(String),
    Other,
}

/// The session an update belongs to, and the update.
pub fn parse_update(params: &Value) -> (Option<String>, Update) {
    let session = text(params, "sessionId");
    let Some(update) = params.get("update") else {
        return (session, Update::Other);
    };
    let chunk = || update.get("content").and_then(|content| text(content, "text"));
    let parsed = match update.get("sessionUpdate").and_then(Value::as_str) {
        Some("agent_message_chunk") => chunk().map_or(Update::Other, Update::AgentMessage),
        Some("agent_thought_chunk") => chunk().map_or(Update::Other, Update::Thought),
        Some("user_message_chunk") => chunk().map_or(Update::Other, Update::UserMessage),
        Some("tool_call") => tool_call(update).map_or(Update::Other, Update::ToolCall),
        Some("tool_call_update") => tool_call(update).map_or(Update::Other, Update::ToolCallUpdate),
        Some("plan") => Update::Plan(plan(update)),
        Some("current_mode_update") => {
            text(update, "currentModeId").map_or(Update::Other, Update::ModeChanged)
        }
        _ => Update::Other,
    };
    (session, parsed)
}

/// A tool call (or its update) from a `session/update` or a permission request's `toolCall`.
pub fn tool_call(update: &Value) -> Option<ToolCallInfo> {
    let own_name = update.pointer("/_meta/claudeCode/toolName").and_then(Value::as_str);
    let content = update.get("content").and_then(Value::as_array);
    let lines: Vec<String> = content
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("content") => part.get("content").and_then(|inner| text(inner, "text")),
            Some("diff") => text(part, "path").map(|path| format!("diff: {path}")),
            _ => None,
        })
        .collect();
    Some(ToolCallInfo {
        id: text(update, "toolCallId")?,
        title: text(update, "title"),
        // claude-agent-acp names the tool in `_meta` on updates and as `name` on a permission
        // request's toolCall; ACP's own `kind` is the last resort.
        tool: own_name
            .map(str::to_owned)
            .or_else(|| text(update, "name"))
            .or_else(|| text(update, "kind")),
        status: ToolStatus::parse(update),
        raw_input: update.get("rawInput").filter(|input| !input.is_null()).cloned(),
        text: lines,
    })
}

fn plan(update: &Value) -> Vec<PlanEntry> {
    let entries = update.get("entries").and_then(Value::as_array);
    entries
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| {
            Some(PlanEntry {
                content: text(entry, "content")?,
                status: text(entry, "status").unwrap_or_default(),
            })
        })
        .collect()
}
