//! `session/request_permission` → an approval card of the book, and its decision → the option
//! the agent offered (issue 28).
//!
//! The agent names its own options (`optionId`, `name`, `kind`: allow_once / allow_always /
//! reject_once / reject_always). The card's decisions map onto them by kind: Allow → the first
//! `allow_once`; each `allow_always` option is offered as an "Always …" button (a suggestion
//! carrying the option's id and name, so the reply picks exactly that option); Deny → the first
//! `reject_once` (an agent offering none hears `cancelled`: the person did not choose its
//! "never"); each `reject_always` option is offered beside Deny by its
//! own name (a [`DenyRule`]), and picks exactly that option. ACP carries no words with a rejection, so a deny's
//! message reaches the person's history, not the model. Anything the agent offers no option for,
//! a hand-back, a withdrawal and askpane ending answer `cancelled`: the agent never reads a choice
//! the person did not make.

use serde_json::{Value, json};

use super::text;
use super::update::{ToolCallInfo, tool_call};
use crate::protocol::permission::{ApprovalOrigin, DenyRule, Suggestion};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};

/// The kind of one of the agent's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

impl OptionKind {
    fn parse(name: &str) -> Option<OptionKind> {
        match name {
            "allow_once" => Some(OptionKind::AllowOnce),
            "allow_always" => Some(OptionKind::AllowAlways),
            "reject_once" => Some(OptionKind::RejectOnce),
            "reject_always" => Some(OptionKind::RejectAlways),
            _ => None,
        }
    }
}

/// One option the agent offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionOption {
    pub id: String,
    pub name: String,
    pub kind: OptionKind,
}

/// One `session/request_permission`.
#[derive(Clone, Debug, PartialEq)]
pub struct PermissionAsk {
    pub session_id: Option<String>,
    pub tool_call: ToolCallInfo,
    /// The options askpane can pick, in the agent's order (unknown kinds left out).
    pub options: Vec<PermissionOption>,
}

/// Why a permission request cannot be shown.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PermissionError {
    #[error("a permission request without a toolCall (its toolCallId)")]
    NoToolCall,
    #[error("a permission request without options askpane can pick")]
    NoOptions,
}

/// The key of a suggestion's raw JSON that names the agent's option it stands for.
const OPTION_ID: &str = "acpOptionId";

/// Reads `session/request_permission`'s params (ACP v1: `toolCall` + `options`).
pub fn parse(params: &Value) -> Result<PermissionAsk, PermissionError> {
    let tool_call =
        params.get("toolCall").and_then(tool_call).ok_or(PermissionError::NoToolCall)?;
    let listed = params.get("options").and_then(Value::as_array);
    let options: Vec<PermissionOption> = listed
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|option| {
            let id = text(option, "optionId")?;
            Some(PermissionOption {
                name: text(option, "name").unwrap_or_else(|| id.clone()),
                kind: OptionKind::parse(option.get("kind").and_then(Value::as_str)?)?,
                id,
            })
        })
        .collect();
    if options.is_empty() {
        return Err(PermissionError::NoOptions);
    }
    Ok(PermissionAsk { session_id: text(params, "sessionId"), tool_call, options })
}

impl PermissionAsk {
    /// The tool's name for the card: its own (`Bash`) when the agent says it, else ACP's kind
    /// (`execute`), else the title.
    pub fn tool_name(&self) -> String {
        let call = &self.tool_call;
        call.tool.clone().or_else(|| call.title.clone()).unwrap_or_else(|| "tool".to_owned())
    }

    /// The book's request for this ask. `request_id` is askpane's own key for it.
    pub fn to_request(&self, request_id: String, cwd: Option<String>) -> PermissionRequest {
        let tool_name = self.tool_name();
        let suggestions = self
            .options
            .iter()
            .filter(|option| option.kind == OptionKind::AllowAlways)
            .filter_map(|option| {
                let raw = json!({
                    "type": "addRules",
                    "rules": [{"toolName": tool_name}],
                    "behavior": "allow",
                    "destination": option.name,
                    OPTION_ID: option.id,
                });
                Suggestion::try_from(raw).ok()
            })
            .collect();
        PermissionRequest {
            request_id,
            tool_name: tool_name.clone(),
            input: self.tool_call.raw_input.clone().unwrap_or_else(|| json!({})),
            tool_use_id: Some(self.tool_call.id.clone()),
            title: self.tool_call.title.clone(),
            description: (!self.tool_call.text.is_empty()).then(|| self.tool_call.text.join("\n")),
            reason: None,
            agent_id: None,
            cwd,
            on_disk: None,
            suggestions,
            deny_always: self
                .options
                .iter()
                .filter(|option| option.kind == OptionKind::RejectAlways)
                .map(|option| DenyRule { id: option.id.clone(), name: option.name.clone() })
                .collect(),
            origin: ApprovalOrigin::Hosted,
        }
    }

    fn first(&self, kinds: &[OptionKind]) -> Option<&PermissionOption> {
        kinds.iter().find_map(|kind| self.options.iter().find(|option| option.kind == *kind))
    }

    /// The option a decision picks, or `None` (answer `cancelled`).
    pub fn option_for(&self, decision: &PermissionDecision) -> Option<&PermissionOption> {
        match decision {
            PermissionDecision::AllowOnce => self.first(&[OptionKind::AllowOnce]),
            PermissionDecision::AllowAlways { suggestion } => {
                let id = suggestion.raw().get(OPTION_ID).and_then(Value::as_str)?;
                self.options.iter().find(|option| option.id == id)
            }
            // Only a rejection this once: a plain Deny never becomes the agent's "never" rule.
            PermissionDecision::Deny { .. } => self.first(&[OptionKind::RejectOnce]),
            // The agent's own reject_always, by its id.
            PermissionDecision::DenyAlways { rule, .. } => self
                .options
                .iter()
                .find(|option| option.kind == OptionKind::RejectAlways && option.id == rule.id),
            // A form's content is no option of a permission: nobody chose.
            PermissionDecision::HandBack | PermissionDecision::Fill { .. } => None,
        }
    }

    /// The result of `session/request_permission` for a decision.
    pub fn reply(&self, decision: &PermissionDecision) -> Value {
        match self.option_for(decision) {
            Some(option) => selected(&option.id),
            None => cancelled(),
        }
    }
}

/// `{"outcome": {"outcome": "selected", "optionId": …}}`.
pub fn selected(option_id: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option_id}})
}

/// `{"outcome": {"outcome": "cancelled"}}`: nobody chose (withdrawn, stopped, askpane ended).
pub fn cancelled() -> Value {
    json!({"outcome": {"outcome": "cancelled"}})
}
