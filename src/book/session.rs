//! The agent session shown beside the questions (`askpane claude`): its transcript and the prompt
//! box (the tool calls waiting for the user are [`super::approval`]'s).
//!
//! A transcript keeps its newest entries only ([`MAX_KEPT_ENTRIES`], [`MAX_KEPT_BYTES`]; issue 24:
//! a long hosted session held every event, 412 MB for 100 000 of 4 KB). Entries are numbered from
//! the session's start however many were dropped: `first` is the number of the oldest one held,
//! so a page asks for and receives entries by number, and the window says how many earlier ones
//! are gone.

use std::collections::VecDeque;

use crate::protocol::origin::{RequestId, SessionKey};
use crate::protocol::stream::{
    Block, CliMessage, PermissionDecision, SessionEvent, SessionInfo, TurnResult, tool_summary,
};

/// What the user does to an agent session run under askpane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionAction {
    AllowPermission(RequestId),
    /// Allow, adding the card's suggestion number `suggestion` as a rule.
    AlwaysAllowPermission {
        id: RequestId,
        suggestion: usize,
    },
    DenyPermission(RequestId),
    /// Deny with the card's "deny always" number `rule` (the agent's own, issue 28).
    AlwaysDenyPermission {
        id: RequestId,
        rule: usize,
    },
    /// "Answer in the terminal": no decision; the agent's own dialog decides.
    HandBackPermission(RequestId),
    SetDenyMessage {
        id: RequestId,
        text: String,
    },
    /// On the plan page of card `id` (issue 26): a comment, the note, approve, keep planning.
    Plan {
        id: RequestId,
        action: super::plan::PlanAction,
    },
    /// On the form of card `id` (issue 28): a field filled in, Send, Decline, Stop.
    Form {
        id: RequestId,
        action: super::form::FormAction,
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
    /// Show the entries before the oldest shown, which a browser page asks its bridge for
    /// (issue 24: a page gets a session's newest entries when it connects).
    ShowEarlier,
}

/// What the app must do for the agent after a [`SessionAction`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEffect {
    /// A card was decided; its handles already heard the decision
    /// ([`super::approval::Approvals::apply`]): nothing is left to send.
    Decided {
        id: RequestId,
        decision: PermissionDecision,
    },
    Prompt {
        session: SessionKey,
        text: String,
    },
    Interrupt {
        session: SessionKey,
    },
    End {
        session: SessionKey,
    },
    /// Ask for the entries before number `before` (a page's `session_older`).
    Older {
        session: SessionKey,
        before: usize,
    },
}

/// Longest tool output or input kept per transcript entry; the rest is counted, not kept, so a
/// session with huge tool results stays small.
pub const ENTRY_LIMIT: usize = 64 * 1024;
/// Most transcript entries a session keeps; the oldest go first, and the window says how many
/// went. The window lays out only the rows in view (issue 14: 10 000 events draw in 1 ms), so
/// this bound is about memory.
pub const MAX_KEPT_ENTRIES: usize = 10_000;
/// Most a session's transcript keeps, by [`Entry::weight`] (issue 24: 100 000 events of 4 KB
/// held 412 MB in the inbox). At [`ENTRY_LIMIT`] per entry that is still the last 128 tool
/// results; at 4 KB, the last 2 000.
pub const MAX_KEPT_BYTES: usize = 8 * 1024 * 1024;
/// Longest of a session's facts kept (its model, its directory, a tool's name, a line of stderr):
/// they travel with every update a page gets.
const FACT_LIMIT: usize = 1024;
/// Most tools, capabilities or stderr lines kept of a session's facts.
const MAX_FACTS: usize = 256;

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

impl Entry {
    /// What keeping (or sending) this entry costs, near enough: its text, and a little for the
    /// rest. The transcript's cap and the bridge's page budgets count in this.
    pub fn weight(&self) -> usize {
        const OVERHEAD: usize = 64;
        let text = match self {
            Entry::User(text) | Entry::Assistant(text) | Entry::Thinking(text) => text.len(),
            Entry::ToolCall { id, summary, input } => id.len() + summary.len() + input.len(),
            Entry::ToolResult { tool_use_id, content, .. } => tool_use_id.len() + content.len(),
            Entry::TurnEnded(result) => {
                result.subtype.len() + result.text.as_ref().map_or(0, String::len)
            }
        };
        text + OVERHEAD
    }
}

/// The agent session shown beside the questions (`askpane claude`).
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// Who runs it, when an inbox client hosts it (`claude · my-project`); such a session can
    /// be ended from the window.
    pub label: Option<String>,
    pub info: Option<SessionInfo>,
    /// The newest entries of the transcript: entry number `first + i` is `entries[i]`.
    entries: VecDeque<Entry>,
    /// The number of the oldest entry held: how many earlier ones are not here.
    first: usize,
    /// In a browser page: the oldest entry the bridge still keeps (from each update). The
    /// entries from it to `first` can be asked for; those before it were dropped. `None` where
    /// the session is kept (the window, the bridge): what is not held was dropped.
    kept_from: Option<usize>,
    /// What the entries held weigh ([`Entry::weight`]).
    kept_bytes: usize,
    /// A turn is running (a prompt was sent and its `result` has not come).
    pub busy: bool,
    /// The running turn looks stuck: the agent has said nothing for this many seconds with
    /// nothing asked of the person (issue 28). Shown with End turn; gone when the agent speaks
    /// or the turn ends.
    pub stuck: Option<u64>,
    /// How the agent ended, and the last lines of its stderr.
    pub ended: Option<(String, Vec<String>)>,
    /// The prompt box, as typed so far.
    pub prompt: String,
}

/// What a browser page needs to show a session as the bridge holds it (issue 11): entries by
/// number from `from` on, and the session's state. The prompt box is the page's own and does
/// not travel.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionUpdate {
    /// The number of the first entry in `entries`.
    pub from: usize,
    pub entries: Vec<Entry>,
    pub info: Option<SessionInfo>,
    pub busy: bool,
    /// The turn looks stuck ([`Session::stuck`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<u64>,
    pub ended: Option<(String, Vec<String>)>,
    /// The oldest entry the bridge keeps: the ones before it were dropped (issue 24). Left out
    /// while it keeps them all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kept_from: usize,
    /// Set on an answer to a page's `session_older`: `entries` are the ones just before entry
    /// `before` (the oldest the page held), to go in front of it rather than replace anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<usize>,
}

fn is_zero(number: &usize) -> bool {
    *number == 0
}

/// How much of a transcript is not shown, and why: for the line above the first entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Earlier {
    /// Kept by the bridge, not sent to this page yet: a page asks for them (`session_older`).
    pub loadable: usize,
    /// Dropped for good: the transcript keeps its newest entries only.
    pub dropped: usize,
}

impl Earlier {
    /// The words for the line above the first entry, when anything is not shown.
    pub fn note(self) -> Option<String> {
        let events = |count: usize| match count {
            1 => "1 earlier event".to_owned(),
            count => format!("{count} earlier events"),
        };
        let kept = format!(
            "askpane keeps the last {} events of a session, {} MiB at most",
            grouped(MAX_KEPT_ENTRIES),
            MAX_KEPT_BYTES / (1024 * 1024)
        );
        match (self.loadable, self.dropped) {
            (0, 0) => None,
            (0, dropped) => Some(format!("{} dropped: {kept}.", events(dropped))),
            (loadable, 0) => Some(format!("{} not shown here.", events(loadable))),
            (loadable, dropped) => Some(format!(
                "{} not shown here; {dropped} before them dropped: {kept}.",
                events(loadable)
            )),
        }
    }
}

/// `10000` as `10 000`: the window's numbers read as the README's.
fn grouped(number: usize) -> String {
    let digits = number.to_string();
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(' ');
        }
        text.push(digit);
    }
    text
}

/// Keeps at most [`ENTRY_LIMIT`] bytes of a text (on a char boundary), saying how much was cut.
fn capped(text: &str) -> String {
    capped_to(text, ENTRY_LIMIT)
}

/// Keeps at most `limit` bytes of a text (on a char boundary), saying how much was cut.
fn capped_to(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… {} more bytes not shown", &text[..end], text.len() - end)
}

/// A session's facts, each within [`FACT_LIMIT`] and the lists within [`MAX_FACTS`]: they go
/// with every update a page gets.
fn capped_info(info: SessionInfo) -> SessionInfo {
    let fact = |text: Option<String>| text.map(|text| capped_to(&text, FACT_LIMIT));
    let list = |items: Vec<String>| {
        items.iter().take(MAX_FACTS).map(|item| capped_to(item, FACT_LIMIT)).collect()
    };
    SessionInfo {
        agent: info.agent,
        session_id: capped_to(&info.session_id, FACT_LIMIT),
        version: fact(info.version),
        model: fact(info.model),
        cwd: fact(info.cwd),
        tools: list(info.tools),
        capabilities: list(info.capabilities),
    }
}

impl Session {
    /// The transcript's entries held here, oldest first (entry number [`Session::first`] on).
    pub fn entries(&self) -> &VecDeque<Entry> {
        &self.entries
    }

    /// The number of the oldest entry held: how many earlier ones are not here.
    pub fn first(&self) -> usize {
        self.first
    }

    /// The number the next entry gets: how many the session has had.
    pub fn end(&self) -> usize {
        self.first + self.entries.len()
    }

    /// What the entries held weigh ([`Entry::weight`]), at most about [`MAX_KEPT_BYTES`].
    pub fn kept_bytes(&self) -> usize {
        self.kept_bytes
    }

    /// How many earlier entries are not here, and whether a page can still ask for them.
    pub fn earlier(&self) -> Earlier {
        let kept_from = self.kept_from.unwrap_or(self.first).min(self.first);
        Earlier { loadable: self.first - kept_from, dropped: kept_from }
    }

    /// Adds an entry at the end, dropping the oldest past the caps.
    fn push(&mut self, entry: Entry) {
        self.kept_bytes += entry.weight();
        self.entries.push_back(entry);
        // The newest entry stays whatever it weighs (it is within ENTRY_LIMIT per text).
        while self.entries.len() > MAX_KEPT_ENTRIES
            || (self.kept_bytes > MAX_KEPT_BYTES && self.entries.len() > 1)
        {
            let Some(oldest) = self.entries.pop_front() else { break };
            self.kept_bytes -= oldest.weight();
            self.first += 1;
        }
    }

    /// Drops the entries from number `from` on.
    fn truncate(&mut self, from: usize) {
        while self.end() > from.max(self.first) {
            let Some(newest) = self.entries.pop_back() else { break };
            self.kept_bytes -= newest.weight();
        }
    }

    /// What a page that holds the entries before number `from` needs: the entries from `from`
    /// on (clamped to those held) as far as `max_bytes` allows (at least one), and the state.
    /// The rest follows in further updates from where this one ends.
    pub fn update_from(&self, from: usize, max_bytes: usize) -> SessionUpdate {
        let from = from.clamp(self.first, self.end());
        let mut bytes = 0;
        let entries = self
            .entries
            .range(from - self.first..)
            .take_while(|entry| {
                let first = bytes == 0;
                bytes += entry.weight();
                first || bytes <= max_bytes
            })
            .cloned()
            .collect();
        self.update(from, entries, None)
    }

    /// What a page that connects gets (issue 24): the newest entries, at most `max_entries` and
    /// `max_bytes` of them (none when the newest alone weighs more), and the state. A page asks
    /// for the ones before with `session_older`.
    pub fn tail(&self, max_entries: usize, max_bytes: usize) -> SessionUpdate {
        let count = self.fitting_before(self.end(), max_entries, max_bytes);
        let from = self.end() - count;
        let entries = self.entries.range(from - self.first..).cloned().collect();
        self.update(from, entries, None)
    }

    /// A page's older entries: those just before number `before` (clamped to those held), at
    /// most `max_entries` and `max_bytes` of them but at least one while there is one, so that
    /// every request gets further.
    pub fn older(&self, before: usize, max_entries: usize, max_bytes: usize) -> SessionUpdate {
        let before = before.clamp(self.first, self.end());
        let count = self.fitting_before(before, max_entries, max_bytes);
        let count = if count == 0 && before > self.first { 1 } else { count };
        let from = before - count;
        let entries = self.entries.range(from - self.first..before - self.first).cloned().collect();
        self.update(from, entries, Some(before))
    }

    /// How many of the entries just before number `before` fit in `max_entries` and `max_bytes`.
    fn fitting_before(&self, before: usize, max_entries: usize, max_bytes: usize) -> usize {
        let mut bytes = 0;
        self.entries
            .range(..before - self.first)
            .rev()
            .take(max_entries)
            .take_while(|entry| {
                bytes += entry.weight();
                bytes <= max_bytes
            })
            .count()
    }

    fn update(&self, from: usize, entries: Vec<Entry>, before: Option<usize>) -> SessionUpdate {
        SessionUpdate {
            from,
            entries,
            info: self.info.clone(),
            busy: self.busy,
            stuck: self.stuck,
            ended: self.ended.clone(),
            kept_from: self.kept_from.unwrap_or(self.first),
            before,
        }
    }

    /// Shows the bridge's session in a page: the entries from `update.from` are replaced (an
    /// entry the page added itself, its own prompt, is replaced by the bridge's), or, for an
    /// answer to `session_older`, go in front of the oldest held. An update that does not join
    /// what the page holds (a page that was away, a session that started again) replaces it all.
    /// The prompt box is kept, and the page keeps no more than the caps either.
    pub fn apply_update(&mut self, update: SessionUpdate) {
        self.info = update.info;
        self.busy = update.busy;
        self.stuck = update.stuck;
        self.ended = update.ended;
        self.kept_from = Some(update.kept_from);
        if let Some(before) = update.before {
            self.prepend(update.from, before, update.entries);
            return;
        }
        if update.from < self.first || update.from > self.end() {
            self.entries.clear();
            self.kept_bytes = 0;
            self.first = update.from;
        }
        self.truncate(update.from);
        for entry in update.entries {
            self.push(entry);
        }
    }

    /// Puts older entries `from..before` in front of the oldest held, when that is entry
    /// `before` (an answer that came late, after the page moved on, is dropped), as many as the
    /// caps leave room for, newest first.
    fn prepend(&mut self, from: usize, before: usize, entries: Vec<Entry>) {
        if before != self.first || from.checked_add(entries.len()) != Some(before) {
            return;
        }
        for entry in entries.into_iter().rev() {
            let weight = entry.weight();
            if self.entries.len() >= MAX_KEPT_ENTRIES || self.kept_bytes + weight > MAX_KEPT_BYTES {
                break;
            }
            self.kept_bytes += weight;
            self.entries.push_front(entry);
            self.first -= 1;
        }
    }

    /// Adds what a CLI message shows; other messages change nothing.
    fn record(&mut self, message: CliMessage) {
        // Text on a user line is the user's side ("[Request interrupted by user for tool use]").
        let from_user = matches!(message, CliMessage::User { .. });
        // The agent spoke: whatever it says, the turn is not stuck now.
        self.stuck = None;
        match message {
            CliMessage::Init(info) => self.info = Some(capped_info(info)),
            CliMessage::Assistant { blocks } | CliMessage::User { blocks } => {
                for block in blocks {
                    self.push(match block {
                        Block::Text(text) if from_user => Entry::User(capped(&text)),
                        Block::Text(text) => Entry::Assistant(capped(&text)),
                        Block::Thinking(text) => Entry::Thinking(capped(&text)),
                        Block::ToolUse { id, name, input } => Entry::ToolCall {
                            id: capped_to(&id, FACT_LIMIT),
                            summary: capped(&tool_summary(&name, &input)),
                            input: capped(
                                &serde_json::to_string_pretty(&input).unwrap_or_default(),
                            ),
                        },
                        Block::ToolResult { tool_use_id, content, is_error } => {
                            let tool_use_id = capped_to(&tool_use_id, FACT_LIMIT);
                            Entry::ToolResult { tool_use_id, content: capped(&content), is_error }
                        }
                    });
                }
            }
            CliMessage::Result(mut result) => {
                self.busy = false;
                result.subtype = capped_to(&result.subtype, FACT_LIMIT);
                result.text = result.text.map(|text| capped(&text));
                self.push(Entry::TurnEnded(result));
            }
            _ => {}
        }
    }

    /// The agent ended: how, and the last lines of its stderr (the last [`MAX_FACTS`], each
    /// within [`FACT_LIMIT`]).
    fn end_with(&mut self, status: &str, stderr_tail: &[String]) {
        self.busy = false;
        self.stuck = None;
        let skip = stderr_tail.len().saturating_sub(MAX_FACTS);
        let tail = stderr_tail.iter().skip(skip).map(|line| capped_to(line, FACT_LIMIT)).collect();
        self.ended = Some((capped_to(status, FACT_LIMIT), tail));
    }
}

/// The sessions, as the window shows them: `askpane claude`'s own window has one session; the
/// inbox one per client that hosts one. (Their tool calls waiting for a decision are the book's
/// [`super::approval::Approvals`].)
#[derive(Clone, Debug, Default)]
pub struct Agent {
    /// In the order they came.
    sessions: Vec<(SessionKey, Session)>,
    /// The session the panel shows (the first when none was picked).
    current: Option<SessionKey>,
}

impl Agent {
    /// Starts showing a session (before its first message, so the prompt box shows). `label`
    /// names who runs it; `prompt` is its first turn, already sent.
    pub fn start_session(&mut self, key: SessionKey, label: Option<String>, prompt: Option<&str>) {
        let mut session = Session { label, ..Session::default() };
        if let Some(prompt) = prompt {
            session.push(Entry::User(capped(prompt)));
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
                session.end_with(&status.to_string(), &stderr_tail);
            }
            // Only a running turn can be stuck (a late word about one that ended says nothing).
            SessionEvent::Stuck { silent_secs } => {
                if session.busy && session.ended.is_none() {
                    session.stuck = Some(silent_secs);
                }
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

    /// Applies what the user did to the agent session (not to its cards); returns what the app
    /// must send.
    pub fn apply_session(&mut self, action: SessionAction) -> Option<SessionEffect> {
        match action {
            // The cards are the approvals' ([`super::approval::Approvals::apply`]).
            SessionAction::AllowPermission(_)
            | SessionAction::AlwaysAllowPermission { .. }
            | SessionAction::DenyPermission(_)
            | SessionAction::AlwaysDenyPermission { .. }
            | SessionAction::HandBackPermission(_)
            | SessionAction::SetDenyMessage { .. }
            | SessionAction::Plan { .. }
            | SessionAction::Form { .. } => None,
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
                session.push(Entry::User(capped(&prompt)));
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
            SessionAction::ShowEarlier => {
                let (key, session) = self.current_mut()?;
                let loadable = session.earlier().loadable > 0;
                loadable.then_some(SessionEffect::Older { session: key, before: session.first })
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
