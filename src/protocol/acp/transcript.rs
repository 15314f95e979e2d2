//! `session/update`s → the hosted session's transcript, in the vocabulary Claude Code's host
//! uses (`CliMessage`): message and thought chunks gathered into one block until something else
//! comes, a tool call shown once its input is known (the first `tool_call` often carries `{}`)
//! and its result once it completes or fails, plans and mode changes as text. Pure: the reader
//! thread feeds it and sends what it returns.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::StopReason;
use super::update::{ToolCallInfo, ToolStatus, Update};
use crate::protocol::stream::{Block, CliMessage, TurnResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkKind {
    Message,
    Thought,
}

/// What the transcript has shown of one tool call.
#[derive(Debug, Default)]
struct ShownCall {
    name: String,
    input: Option<Value>,
    used: bool,
    ended: bool,
}

/// The transcript's state: the chunks not yet shown, and the tool calls seen.
#[derive(Debug, Default)]
pub struct Transcript {
    pending: Option<(ChunkKind, String)>,
    tool_calls: HashMap<String, ShownCall>,
}

/// What one update adds: messages for the transcript, and the tool call that ended, if one did
/// (a question form of that call is withdrawn with it).
#[derive(Debug, Default, PartialEq)]
pub struct Shown {
    pub messages: Vec<CliMessage>,
    pub ended_call: Option<String>,
}

impl Transcript {
    pub fn update(&mut self, update: Update) -> Shown {
        let mut shown = Shown::default();
        let chunk = match update {
            Update::AgentMessage(text) => (ChunkKind::Message, text),
            Update::Thought(text) => (ChunkKind::Thought, text),
            Update::ToolCall(call) | Update::ToolCallUpdate(call) => {
                shown.messages.extend(self.flush());
                shown.ended_call = self.tool_call(call, &mut shown.messages);
                return shown;
            }
            Update::Plan(entries) => {
                let lines: Vec<String> = entries
                    .iter()
                    .map(|entry| format!("- [{}] {}", entry.status, entry.content))
                    .collect();
                return self.text(format!("Plan:\n{}", lines.join("\n")));
            }
            Update::ModeChanged(mode) => {
                return self.text(format!("The agent's mode is now `{mode}`."));
            }
            Update::UserMessage(_) | Update::Other => return shown,
        };
        match &mut self.pending {
            Some((kind, pending)) if *kind == chunk.0 => pending.push_str(&chunk.1),
            _ => {
                shown.messages.extend(self.flush());
                self.pending = Some(chunk);
            }
        }
        shown
    }

    /// The message or thought gathered so far, as one block.
    pub fn flush(&mut self) -> Option<CliMessage> {
        let block = match self.pending.take()? {
            (ChunkKind::Message, text) => Block::Text(text),
            (ChunkKind::Thought, text) => Block::Thinking(text),
        };
        Some(CliMessage::Assistant { blocks: vec![block] })
    }

    /// The turn ended with `reason`: what is still gathered, then how it ended.
    pub fn turn_ended(&mut self, result: TurnResult) -> Vec<CliMessage> {
        self.flush().into_iter().chain([CliMessage::Result(result)]).collect()
    }

    fn text(&mut self, text: String) -> Shown {
        let mut messages: Vec<CliMessage> = self.flush().into_iter().collect();
        messages.push(CliMessage::Assistant { blocks: vec![Block::Text(text)] });
        Shown { messages, ended_call: None }
    }

    fn tool_call(&mut self, call: ToolCallInfo, messages: &mut Vec<CliMessage>) -> Option<String> {
        let shown = self.tool_calls.entry(call.id.clone()).or_default();
        if let Some(name) = call.tool.clone().or_else(|| call.title.clone())
            && shown.name.is_empty()
        {
            shown.name = name;
        }
        if let Some(input) = call.raw_input.filter(|input| input != &Value::Object(Map::new())) {
            shown.input = Some(input);
        }
        let ended = matches!(call.status, Some(ToolStatus::Completed | ToolStatus::Failed));
        if !shown.used && (shown.input.is_some() || ended) {
            shown.used = true;
            let input = shown.input.clone().unwrap_or_else(|| Value::Object(Map::new()));
            let name = if shown.name.is_empty() { "tool".to_owned() } else { shown.name.clone() };
            let block = Block::ToolUse { id: call.id.clone(), name, input };
            messages.push(CliMessage::Assistant { blocks: vec![block] });
        }
        if !ended || shown.ended {
            return None;
        }
        shown.ended = true;
        let block = Block::ToolResult {
            tool_use_id: call.id.clone(),
            content: call.text.join("\n"),
            is_error: call.status == Some(ToolStatus::Failed),
        };
        messages.push(CliMessage::User { blocks: vec![block] });
        Some(call.id)
    }
}

/// How a turn that ended with `reason` is told.
pub fn turn_result(reason: &StopReason) -> TurnResult {
    let (subtype, is_error, text) = match reason {
        StopReason::EndTurn => ("success", false, None),
        StopReason::Cancelled => ("cancelled", true, Some("The turn was cancelled.".to_owned())),
        StopReason::MaxTokens => ("error_max_tokens", true, None),
        StopReason::MaxTurnRequests => ("error_max_turns", true, None),
        StopReason::Refusal => ("refusal", true, Some("The agent refused.".to_owned())),
        StopReason::Other(other) => ("error", true, Some(format!("stop reason `{other}`"))),
    };
    TurnResult { subtype: subtype.to_owned(), is_error, text, ..TurnResult::default() }
}
