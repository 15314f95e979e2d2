//! What one Claude Code hook input asks, told apart in one place: `askpane hook` and the small
//! `askpane-hook` client (issue 30) read the same input the same way.

use serde_json::Value;

use super::envelope::{EnvelopeError, Incoming, parse_message};
use super::hook_notification::{self, TerminalNotice};
use super::permission::{self, HookPermission, HookPermissionError};

/// The variables that stand for `askpane hook`'s flags which change how a request is answered
/// (clap's `env`): the small client hands a hook run with any of them set to `askpane hook`.
pub const ANSWERING_VARIABLES: &[&str] = &[
    "ASKPANE_ANSWERS",
    "ASKPANE_SUBMIT",
    "ASKPANE_DECLINE",
    "ASKPANE_TIMEOUT",
    "ASKPANE_NONINTERACTIVE",
    "ASKPANE_NO_INBOX",
];

/// The variables for `askpane hook`'s other flags: how an inbox started for it shows itself and
/// where it keeps its store. They matter only where no inbox runs, and that case the small client
/// hands to `askpane hook`, whose process keeps them. A unit test of the command line holds the
/// two lists to clap's.
pub const STARTING_VARIABLES: &[&str] =
    &["ASKPANE_UI", "ASKPANE_BIND", "ASKPANE_THEME", "ASKPANE_STATE_DIR"];

/// One hook input, by what the hook is to do with it.
#[derive(Debug)]
pub enum HookInput {
    /// A terminal that waits (`Notification`, issue 26 item 6): announced, nothing printed.
    Notification(TerminalNotice),
    /// A tool call to allow or deny (`PermissionRequest` for any tool but AskUserQuestion), or
    /// why its input cannot be read.
    Permission(Result<Box<HookPermission>, HookPermissionError>),
    /// AskUserQuestion's questions (`PreToolUse`, or a `PermissionRequest` for it).
    Question(Box<Incoming>),
    /// Another tool's `PreToolUse`: left alone, nothing printed.
    OtherTool,
    /// Not a hook input askpane reads: said on stderr, nothing printed, so the agent carries on.
    Unreadable(EnvelopeError),
}

impl HookInput {
    /// Tells `message` apart: a `Notification` or a `PermissionRequest` by its event, when its
    /// fields are there; anything else as a question (or another tool's call).
    pub fn of(message: &Value) -> HookInput {
        match message.get("hook_event_name").and_then(Value::as_str) {
            Some(hook_notification::HOOK_EVENT) => {
                if let Some(notice) = hook_notification::parse_notification(message) {
                    return HookInput::Notification(notice);
                }
            }
            Some(permission::HOOK_EVENT) => {
                if let Some(parsed) = permission::parse_hook_permission(message) {
                    return HookInput::Permission(parsed.map(Box::new));
                }
            }
            _ => {}
        }
        match parse_message(message) {
            Ok(incoming) => HookInput::Question(Box::new(incoming)),
            Err(EnvelopeError::OtherTool { .. }) => HookInput::OtherTool,
            Err(error) => HookInput::Unreadable(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_event_is_told_apart_and_an_event_without_its_fields_is_read_as_a_question() {
        let notice = json!({"hook_event_name": "Notification", "session_id": "s",
            "message": "Claude needs your permission", "notification_type": "permission_prompt"});
        assert!(matches!(HookInput::of(&notice), HookInput::Notification(_)));
        let bash = json!({"hook_event_name": "PermissionRequest", "session_id": "s",
            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        assert!(matches!(HookInput::of(&bash), HookInput::Permission(Ok(_))));
        let other = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}});
        assert!(matches!(HookInput::of(&other), HookInput::OtherTool));
        let question = json!({"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
            "tool_use_id": "t", "tool_input": {"questions": []}});
        assert!(matches!(HookInput::of(&question), HookInput::Question(_)));
        assert!(matches!(HookInput::of(&json!([1])), HookInput::Unreadable(_)));
    }
}
