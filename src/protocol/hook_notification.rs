//! Claude Code's `Notification` hook input (issue 26 item 6): a terminal of Claude Code tells the
//! person something, mostly that it waits (`permission_prompt` 6 s after its own dialog appeared,
//! `idle_prompt` after `messageIdleNotifThresholdMs`), and askpane names the project and session
//! so the person knows which terminal. Pure data: no IO, no clock.
//!
//! What 2.1.332 sends (tests/fixtures/claude-code/2.1.332/notification/): exactly `session_id,
//! transcript_path, cwd, prompt_id, hook_event_name, message, notification_type`; no `title`
//! (read when a later version sends one). Every field is optional here: a payload missing one, or
//! with one of another type, still becomes a notice, never a panic.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The hook event this module reads.
pub const HOOK_EVENT: &str = "Notification";

/// The longest message kept, in characters: a desktop notification shows a few lines, and the
/// notice crosses the inbox's socket (a 100 KB message is cut here, not there).
pub const MESSAGE_CHARS: usize = 500;

/// The longest session id or project name kept, in characters.
const NAME_CHARS: usize = 200;

/// What Claude Code's `notification_type` says happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum NotificationType {
    /// Its own permission dialog has been up for 6 s (2.1.332).
    PermissionPrompt,
    /// The turn ended and nobody typed for `messageIdleNotifThresholdMs` (60 s by default).
    IdlePrompt,
    /// An MCP server asks the person for input in the terminal.
    ElicitationDialog,
    /// A background agent waits for the person.
    AgentNeedsInput,
    /// A worker of an agent team needs a permission.
    WorkerPermissionPrompt,
    /// A login finished.
    AuthSuccess,
    /// Any other type (`elicitation_complete`, `agent_completed`, a newer version's), as named.
    Other(String),
}

impl NotificationType {
    fn parse(name: &str) -> NotificationType {
        match name {
            "permission_prompt" => NotificationType::PermissionPrompt,
            "idle_prompt" => NotificationType::IdlePrompt,
            "elicitation_dialog" => NotificationType::ElicitationDialog,
            "agent_needs_input" => NotificationType::AgentNeedsInput,
            "worker_permission_prompt" => NotificationType::WorkerPermissionPrompt,
            "auth_success" => NotificationType::AuthSuccess,
            other => NotificationType::Other(other.to_owned()),
        }
    }

    /// The name Claude Code gave it.
    pub fn name(&self) -> &str {
        match self {
            NotificationType::PermissionPrompt => "permission_prompt",
            NotificationType::IdlePrompt => "idle_prompt",
            NotificationType::ElicitationDialog => "elicitation_dialog",
            NotificationType::AgentNeedsInput => "agent_needs_input",
            NotificationType::WorkerPermissionPrompt => "worker_permission_prompt",
            NotificationType::AuthSuccess => "auth_success",
            NotificationType::Other(name) => name,
        }
    }

    /// Whether the terminal now waits for the person (the notification then says "waits").
    pub fn waits(&self) -> bool {
        matches!(
            self,
            NotificationType::PermissionPrompt
                | NotificationType::IdlePrompt
                | NotificationType::ElicitationDialog
                | NotificationType::AgentNeedsInput
                | NotificationType::WorkerPermissionPrompt
        )
    }

    /// The words when Claude Code sent no message.
    fn default_message(&self) -> String {
        match self {
            NotificationType::PermissionPrompt => "Claude needs your permission".to_owned(),
            NotificationType::IdlePrompt => "Claude is waiting for your input".to_owned(),
            other => other.name().replace('_', " "),
        }
    }
}

impl From<String> for NotificationType {
    fn from(name: String) -> Self {
        NotificationType::parse(&name)
    }
}

impl From<NotificationType> for String {
    fn from(kind: NotificationType) -> Self {
        kind.name().to_owned()
    }
}

/// One notification of a Claude Code terminal, as the hook hands it to the inbox (also the
/// `notice` message's wire form).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalNotice {
    pub kind: NotificationType,
    /// Claude Code's words (`Claude needs your permission`), at most [`MESSAGE_CHARS`].
    pub message: String,
    /// A title, when a version sends one (2.1.332 does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The session the terminal runs (Claude Code's `session_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The project: the last component of the terminal's `cwd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The SSH host whose link the notice came through (issue 27): set by the inbox from the
    /// connection's scope, never read from the wire (a client may not claim a host).
    #[serde(skip)]
    pub host: Option<String>,
}

/// Reads a hook input as a `Notification`: `None` when it is another event (or not a hook input
/// at all). Never fails: what is missing or of the wrong type is left out.
pub fn parse_notification(message: &Value) -> Option<TerminalNotice> {
    let object = message.as_object()?;
    if object.get("hook_event_name").and_then(Value::as_str) != Some(HOOK_EVENT) {
        return None;
    }
    let text = |key: &str| -> Option<String> {
        let value = object.get(key)?.as_str()?.trim();
        (!value.is_empty()).then(|| value.to_owned())
    };
    let kind = match text("notification_type") {
        Some(name) => NotificationType::parse(&clip(&name, NAME_CHARS)),
        None => NotificationType::Other("notification".to_owned()),
    };
    let message =
        text("message").map_or_else(|| kind.default_message(), |m| clip(&m, MESSAGE_CHARS));
    Some(TerminalNotice {
        title: text("title").map(|title| clip(&title, NAME_CHARS)),
        session_id: text("session_id").map(|session| clip(&session, NAME_CHARS)),
        project: project_of(object),
        kind,
        message,
        // Only the inbox knows the link a notice came through.
        host: None,
    })
}

/// The last component of `cwd` (`/home/dev/orders/` → `orders`).
fn project_of(object: &Map<String, Value>) -> Option<String> {
    let cwd = object.get("cwd")?.as_str()?.trim().trim_end_matches(['/', '\\']);
    let name = cwd.rsplit(['/', '\\']).next().filter(|name| !name.is_empty())?;
    Some(clip(name, NAME_CHARS))
}

impl TerminalNotice {
    /// The session as a list shows it: its first eight characters (a UUID's first group).
    pub fn short_session(&self) -> Option<String> {
        let session = self.session_id.as_deref()?;
        Some(session.chars().take(8).collect())
    }

    /// Which terminal, in words: `Claude Code waits in orders (session 3f2a1b2c)`. A type that
    /// is not a wait (a login done, a task finished) says `Claude Code in …` instead.
    pub fn headline(&self) -> String {
        let verb = if self.kind.waits() { "Claude Code waits" } else { "Claude Code" };
        let place = match &self.project {
            Some(project) => format!(" in {project}"),
            None => String::new(),
        };
        match self.short_session() {
            Some(session) => format!("{verb}{place} (session {session})"),
            None => format!("{verb}{place}"),
        }
    }

    /// What Claude Code said: its title and message, or the message alone.
    pub fn words(&self) -> String {
        match &self.title {
            Some(title) if title != &self.message => format!("{title}: {}", self.message),
            _ => self.message.clone(),
        }
    }
}

/// At most `limit` characters, the cut marked with `…`.
fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => {
            let kept = text.get(..end).unwrap_or_default();
            let kept: String = kept.chars().take(limit.saturating_sub(1)).collect();
            format!("{}…", kept.trim_end())
        }
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[path = "hook_notification/tests.rs"]
mod tests;
