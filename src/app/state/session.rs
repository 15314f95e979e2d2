//! The agent session shown beside the questions (`askpane claude`): its transcript, the prompt
//! box, and the tool permissions waiting for the user.

use crate::protocol::origin::{Provenance, RequestId, SessionKey};
use crate::protocol::stream::{
    Block, CliMessage, PermissionDecision, PermissionRequest, SessionEvent, SessionInfo,
    TurnResult, tool_summary,
};

/// What the user does to an agent session run under askpane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionAction {
    AllowPermission(RequestId),
    DenyPermission(RequestId),
    SetDenyMessage {
        id: RequestId,
        text: String,
    },
    SetPrompt(String),
    /// Send the prompt box as the next user turn.
    SendPrompt,
    /// Stop the current turn.
    Stop,
    /// Show this session (the inbox shows several).
    SelectSession(SessionKey),
    /// End the session shown, when an inbox client hosts it ("End session").
    End,
}

/// What the app must do for the agent after a [`SessionAction`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEffect {
    Decided { id: RequestId, decision: PermissionDecision },
    Prompt { session: SessionKey, text: String },
    Interrupt { session: SessionKey },
    End { session: SessionKey },
}

/// A tool the agent wants to run, waiting for the user.
#[derive(Clone, Debug)]
pub struct PendingPermission {
    pub id: RequestId,
    pub request: PermissionRequest,
    pub provenance: Provenance,
    /// The message sent with a deny, as typed so far.
    pub deny_message: String,
}

/// Longest tool output or input kept per transcript entry; the rest is counted, not kept, so a
/// session with huge tool results stays small.
pub const ENTRY_LIMIT: usize = 64 * 1024;

/// One line of the session transcript. Serialized as it is for the browser page (issue 11),
/// which shows the bridge's transcript rather than building its own.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "body", rename_all = "snake_case")]
pub enum Entry {
    User(String),
    Assistant(String),
    Thinking(String),
    ToolCall { id: String, summary: String, input: String },
    ToolResult { tool_use_id: String, content: String, is_error: bool },
    TurnEnded(TurnResult),
}

/// The agent session shown beside the questions (`askpane claude`).
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// Who runs it, when an inbox client hosts it (`claude · my-project`); such a session can
    /// be ended from the window.
    pub label: Option<String>,
    pub info: Option<SessionInfo>,
    pub entries: Vec<Entry>,
    /// A turn is running (a prompt was sent and its `result` has not come).
    pub busy: bool,
    /// How the agent ended, and the last lines of its stderr.
    pub ended: Option<(String, Vec<String>)>,
    /// The prompt box, as typed so far.
    pub prompt: String,
}

/// What a browser page needs to show a session as the bridge holds it (issue 11): the entries
/// from index `from` on (everything before it the page has already), and the session's state.
/// The prompt box is the page's own and does not travel.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionUpdate {
    pub from: usize,
    pub entries: Vec<Entry>,
    pub info: Option<SessionInfo>,
    pub busy: bool,
    pub ended: Option<(String, Vec<String>)>,
}

/// Keeps at most [`ENTRY_LIMIT`] bytes of a text (on a char boundary), saying how much was cut.
fn capped(text: &str) -> String {
    if text.len() <= ENTRY_LIMIT {
        return text.to_owned();
    }
    let mut end = ENTRY_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… {} more bytes not shown", &text[..end], text.len() - end)
}

impl Session {
    /// The entries from `from` on (none when `from` is past the end), and the state: what a page
    /// that has the first `from` entries needs to show this session.
    pub fn update_from(&self, from: usize) -> SessionUpdate {
        let from = from.min(self.entries.len());
        SessionUpdate {
            from,
            entries: self.entries.get(from..).unwrap_or_default().to_vec(),
            info: self.info.clone(),
            busy: self.busy,
            ended: self.ended.clone(),
        }
    }

    /// Shows the bridge's session in a page: the entries from `update.from` are replaced (an
    /// entry the page added itself, its own prompt, is replaced by the bridge's), the prompt box
    /// is kept.
    pub fn apply_update(&mut self, update: SessionUpdate) {
        self.entries.truncate(update.from);
        self.entries.extend(update.entries);
        self.info = update.info;
        self.busy = update.busy;
        self.ended = update.ended;
    }

    /// Adds what a CLI message shows; other messages change nothing.
    fn record(&mut self, message: CliMessage) {
        // Text on a user line is the user's side ("[Request interrupted by user for tool use]").
        let from_user = matches!(message, CliMessage::User { .. });
        match message {
            CliMessage::Init(info) => self.info = Some(info),
            CliMessage::Assistant { blocks } | CliMessage::User { blocks } => {
                for block in blocks {
                    self.entries.push(match block {
                        Block::Text(text) if from_user => Entry::User(capped(&text)),
                        Block::Text(text) => Entry::Assistant(capped(&text)),
                        Block::Thinking(text) => Entry::Thinking(capped(&text)),
                        Block::ToolUse { id, name, input } => Entry::ToolCall {
                            id,
                            summary: tool_summary(&name, &input),
                            input: capped(
                                &serde_json::to_string_pretty(&input).unwrap_or_default(),
                            ),
                        },
                        Block::ToolResult { tool_use_id, content, is_error } => {
                            Entry::ToolResult { tool_use_id, content: capped(&content), is_error }
                        }
                    });
                }
            }
            CliMessage::Result(result) => {
                self.busy = false;
                self.entries.push(Entry::TurnEnded(result));
            }
            _ => {}
        }
    }
}

/// The sessions and the permission cards, as the window shows them: `askpane claude`'s own
/// window has one session; the inbox one per client that hosts one.
#[derive(Clone, Debug, Default)]
pub struct Agent {
    /// In the order they came.
    sessions: Vec<(SessionKey, Session)>,
    /// The session the panel shows (the first when none was picked).
    current: Option<SessionKey>,
    pub permissions: Vec<PendingPermission>,
}

impl Agent {
    /// Starts showing a session (before its first message, so the prompt box shows). `label`
    /// names who runs it; `prompt` is its first turn, already sent.
    pub fn start_session(&mut self, key: SessionKey, label: Option<String>, prompt: Option<&str>) {
        let mut session = Session { label, ..Session::default() };
        if let Some(prompt) = prompt {
            session.entries.push(Entry::User(prompt.to_owned()));
            session.busy = true;
        }
        match self.sessions.iter_mut().find(|(known, _)| *known == key) {
            Some((_, known)) => *known = session,
            None => self.sessions.push((key, session)),
        }
    }

    /// Shows a session as a browser page's bridge holds it (issue 11).
    pub fn session_update(&mut self, key: SessionKey, update: SessionUpdate) {
        let index = self.session_index(key);
        if let Some((_, session)) = self.sessions.get_mut(index) {
            session.apply_update(update);
        }
    }

    /// Where session `key` is, added when it is new (this process's own session starts with
    /// its first event).
    fn session_index(&mut self, key: SessionKey) -> usize {
        match self.sessions.iter().position(|(known, _)| *known == key) {
            Some(index) => index,
            None => {
                self.sessions.push((key, Session::default()));
                self.sessions.len() - 1
            }
        }
    }

    /// Records one event of a session (this process's own session starts with its first).
    pub fn session_event(&mut self, key: SessionKey, event: SessionEvent) {
        let index = self.session_index(key);
        let Some((_, session)) = self.sessions.get_mut(index) else { return };
        match event {
            SessionEvent::Message(message) => session.record(message),
            SessionEvent::Ended { status, stderr_tail } => {
                session.busy = false;
                session.ended = Some((status, stderr_tail));
            }
        }
    }

    /// A session's host went away: the session leaves the window.
    pub fn end_session(&mut self, key: SessionKey) {
        self.sessions.retain(|(known, _)| *known != key);
        if self.current == Some(key) {
            self.current = None;
        }
    }

    /// The session shown.
    pub fn session(&self) -> Option<&Session> {
        self.current_index().and_then(|index| self.sessions.get(index)).map(|(_, session)| session)
    }

    /// Every session: its key, its session, and whether it is the one shown.
    pub fn sessions(&self) -> impl Iterator<Item = (SessionKey, &Session, bool)> {
        let shown = self.current_index();
        self.sessions
            .iter()
            .enumerate()
            .map(move |(index, (key, session))| (*key, session, Some(index) == shown))
    }

    fn current_index(&self) -> Option<usize> {
        let picked = self.current.and_then(|key| self.sessions.iter().position(|(k, _)| *k == key));
        picked.or((!self.sessions.is_empty()).then_some(0))
    }

    fn current_mut(&mut self) -> Option<(SessionKey, &mut Session)> {
        let index = self.current_index()?;
        self.sessions.get_mut(index).map(|(key, session)| (*key, session))
    }

    pub fn push_permission(&mut self, permission: PendingPermission) {
        self.permissions.push(permission);
    }

    /// Removes a permission request the agent withdrew. Returns its id.
    pub fn withdraw_permission(&mut self, request_id: &str) -> Option<RequestId> {
        let index = self.permissions.iter().position(|p| p.request.request_id == request_id)?;
        Some(self.permissions.remove(index).id)
    }

    /// Applies what the user did to the agent session; returns what the app must send.
    pub fn apply_session(&mut self, action: SessionAction) -> Option<SessionEffect> {
        match action {
            SessionAction::AllowPermission(id) => {
                let index = self.permissions.iter().position(|p| p.id == id)?;
                self.permissions.remove(index);
                Some(SessionEffect::Decided { id, decision: PermissionDecision::AllowOnce })
            }
            SessionAction::DenyPermission(id) => {
                let index = self.permissions.iter().position(|p| p.id == id)?;
                let permission = self.permissions.remove(index);
                let message = match permission.deny_message.trim() {
                    "" => "The user denied this tool call.".to_owned(),
                    text => format!("The user denied this tool call and said: {text}"),
                };
                Some(SessionEffect::Decided { id, decision: PermissionDecision::Deny { message } })
            }
            SessionAction::SetDenyMessage { id, text } => {
                let permission = self.permissions.iter_mut().find(|p| p.id == id)?;
                permission.deny_message = text;
                None
            }
            SessionAction::SetPrompt(text) => {
                self.current_mut()?.1.prompt = text;
                None
            }
            SessionAction::SendPrompt => {
                let (key, session) = self.current_mut()?;
                let prompt = session.prompt.trim().to_owned();
                if prompt.is_empty() || session.ended.is_some() {
                    return None;
                }
                session.prompt.clear();
                session.busy = true;
                session.entries.push(Entry::User(prompt.clone()));
                Some(SessionEffect::Prompt { session: key, text: prompt })
            }
            SessionAction::Stop => {
                let (key, session) = self.current_mut()?;
                let running = session.busy && session.ended.is_none();
                running.then_some(SessionEffect::Interrupt { session: key })
            }
            SessionAction::End => {
                let (key, session) = self.current_mut()?;
                let endable = matches!(key, SessionKey::Hosted(_)) && session.ended.is_none();
                endable.then_some(SessionEffect::End { session: key })
            }
            SessionAction::SelectSession(key) => {
                if self.sessions.iter().any(|(known, _)| *known == key) {
                    self.current = Some(key);
                }
                None
            }
        }
    }
}
