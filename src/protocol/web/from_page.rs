//! What a page sends the bridge, as serde types ([`FromPage`]), and the checks that make it what
//! the bridge acts on ([`PageRequest`]).
//!
//! A page is not trusted. Its message is read whatever its fields hold: each field is a [`Sent`],
//! which keeps a value of the wrong type as it came. The checks then refuse in the order, and
//! with the words, the bridge has always used: the message's type, then its session, then its
//! fields one by one; what an answer says about its question is checked once the question is
//! found ([`super::page_answer`] and the rest).

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{BrowserError, BrowserMessage, SessionMessage, TimeoutChange};
use crate::protocol::history::{
    HistoryFilter, HistoryKind, HistoryRequestError, MAX_HISTORY_NAME, MAX_HISTORY_SEARCH,
};
use crate::protocol::limits::{self, MAX_TIMEOUT_EXTENSION_SECS};
use crate::protocol::origin::SessionKey;
use crate::protocol::outcome::Prefill;
use crate::protocol::permission::Suggestion;
use crate::protocol::stream::PermissionDecision;

/// A field of a message as it came: absent, of the type the wire names, or anything else (kept
/// whole, so a refusal can say what it was, or the reader can take it as it always has).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Sent<T> {
    #[default]
    Absent,
    Given(T),
    Other(Value),
}

impl<T> Sent<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Sent::Absent)
    }

    /// The value, when it is of the wire's type.
    pub fn given(&self) -> Option<&T> {
        match self {
            Sent::Given(value) => Some(value),
            Sent::Absent | Sent::Other(_) => None,
        }
    }

    pub fn into_given(self) -> Option<T> {
        match self {
            Sent::Given(value) => Some(value),
            Sent::Absent | Sent::Other(_) => None,
        }
    }

    /// The text of a value that is not of the wire's type but is text (a name this askpane does
    /// not know, say).
    pub fn other_text(&self) -> Option<&str> {
        match self {
            Sent::Other(Value::String(text)) => Some(text),
            _ => None,
        }
    }
}

impl<T: Serialize> Sent<T> {
    /// What was sent, as JSON text (for a refusal that quotes it); `nothing` when absent.
    pub fn as_sent(&self) -> String {
        match self {
            Sent::Given(value) => serde_json::to_string(value).unwrap_or_default(),
            Sent::Other(value) => value.to_string(),
            Sent::Absent => "nothing".to_owned(),
        }
    }
}

impl<T: DeserializeOwned> Sent<T> {
    /// `value` read as `T`, or kept as it is.
    pub fn read(value: Value) -> Sent<T> {
        match T::deserialize(&value) {
            Ok(given) => Sent::Given(given),
            Err(_) => Sent::Other(value),
        }
    }
}

impl<T> From<T> for Sent<T> {
    fn from(value: T) -> Self {
        Sent::Given(value)
    }
}

impl<T: Serialize> Serialize for Sent<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Sent::Given(value) => value.serialize(serializer),
            Sent::Other(value) => value.serialize(serializer),
            // Fields that may be absent are skipped (`skip_serializing_if = "Sent::is_absent"`).
            Sent::Absent => serializer.serialize_none(),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Sent<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Sent::read)
    }
}

/// What a page sends the bridge: `{"type": …}` and the fields of each kind.
#[allow(
    clippy::large_enum_variant,
    reason = "a page's message lives for one step of the hub: boxing its form buys nothing"
)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromPage {
    /// The form by number, or a reply in the user's own words (`response`).
    QuestionAnswer(PageForm),
    /// Declined or stopped, with the whole message the model reads (the page's state built it).
    QuestionDeclined(PageDecline),
    /// "Chat about this", with what was picked so far.
    QuestionClarify(PageForm),
    /// The page's countdown ran out: what was picked, what was still being typed, and what was
    /// filled in and never confirmed.
    QuestionTimedOut(PageTimedOut),
    /// The page drew the question while it was visible (issue 24).
    QuestionSeen(QuestionRef),
    /// "Any key to stay": no deadline until the user answers.
    TimeoutPaused(QuestionRef),
    /// "Add time".
    TimeoutExtended(PageExtension),
    PermissionDecision(PageDecision),
    /// The next user turn of an agent session.
    SessionPrompt(PagePrompt),
    /// Stop the turn.
    SessionStop(SessionRef),
    /// End a session an inbox client hosts.
    SessionEnd(SessionRef),
    /// The entries before the oldest the page holds (issue 24).
    SessionOlder(PageOlder),
    /// A History page (issue 11).
    HistoryRequest(HistoryQuery),
}

/// A message about one question: `question_seen`, `timeout_paused`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionRef {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub tool_use_id: Sent<String>,
}

/// What was picked, by number: the seed's `answers` and `notes`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PagePicks {
    /// `{"<question index>": "<option numbers from 1, comma-joined>[,other:<text>]"}`: each
    /// entry is checked against the question, in the order sent ([`super::drafts_from_numbers`]).
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub answers: Sent<Map<String, Value>>,
    /// `{"<question index>": "<note>"}`; anything but an object is no notes.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub notes: Sent<Map<String, Value>>,
}

/// `question_answer`, `question_clarify`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageForm {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub tool_use_id: Sent<String>,
    #[serde(flatten)]
    pub picks: PagePicks,
    /// A reply in the user's own words ("Answer in your own words"); only text that is not
    /// blank is one.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub response: Sent<String>,
}

/// `question_timed_out`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageTimedOut {
    #[serde(flatten)]
    pub form: PageForm,
    /// The questions whose box was still being typed in, by index.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub typing: Sent<Vec<Sent<u64>>>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub unconfirmed: Sent<PageUnconfirmed>,
}

/// What was filled in (by `--answers`, or a saved draft) and never confirmed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PageUnconfirmed {
    #[serde(skip_serializing_if = "Sent::is_absent")]
    pub from: Sent<Prefill>,
    #[serde(flatten)]
    pub picks: PagePicks,
}

impl<'de> Deserialize<'de> for PageUnconfirmed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // An object only: serde would read a struct from an array too, and an array is what the
        // bridge has always refused here.
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let from = fields.remove("from").map_or(Sent::Absent, Sent::read);
        let picks = PagePicks::deserialize(Value::Object(fields)).map_err(D::Error::custom)?;
        Ok(PageUnconfirmed { from, picks })
    }
}

/// `question_declined`'s `outcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeclineOutcome {
    Declined,
    Stopped,
}

/// `question_declined`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageDecline {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub tool_use_id: Sent<String>,
    /// `declined` when absent (or not text).
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub outcome: Sent<DeclineOutcome>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub message: Sent<String>,
}

/// `timeout_extended`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageExtension {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub tool_use_id: Sent<String>,
    /// More seconds, from 1 to [`MAX_TIMEOUT_EXTENSION_SECS`].
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub secs: Sent<u64>,
}

/// The session a page's session message is about: a hosted session's number (`session`), or
/// none for the bridge's own session. Null is none too.
pub type SessionField = Sent<Option<u64>>;

fn session_field(key: SessionKey) -> SessionField {
    match key {
        SessionKey::Own => Sent::Absent,
        SessionKey::Hosted(number) => Sent::Given(Some(number)),
    }
}

fn session_key(field: &SessionField) -> Result<SessionKey, BrowserError> {
    match field {
        Sent::Absent | Sent::Given(None) => Ok(SessionKey::Own),
        Sent::Given(Some(number)) => Ok(SessionKey::Hosted(*number)),
        Sent::Other(_) => Err(BrowserError::BadSession),
    }
}

/// `permission_decision`'s `decision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Allow,
    /// Allow, adding the rule in `suggestion` (one the card's agent suggested, as it sent it).
    AllowAlways,
    Deny,
    /// No decision: the agent's own dialog decides ("Answer in the terminal").
    HandBack,
    /// Deny with the agent's own "deny always" choice in `rule` (ACP's reject_always).
    DenyAlways,
    /// A form filled in: its `content` (checked against the form's schema where it is kept).
    Fill,
}

/// `permission_decision`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageDecision {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub request_id: Sent<String>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub decision: Sent<DecisionKind>,
    /// A deny's message, which the model reads (the page's state built it).
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub message: Sent<String>,
    /// An `allow_always`'s rule: the card's suggestion as the agent sent it.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub suggestion: Sent<Value>,
    /// A `deny_always`'s rule: one of the card's `deny_always`, as the card has it.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub rule: Sent<Value>,
    /// A `fill`'s content: the form's values by field key, in their JSON types.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub content: Sent<Value>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub session: SessionField,
}

/// `session_prompt`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PagePrompt {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub text: Sent<String>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub session: SessionField,
}

/// `session_stop`, `session_end`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRef {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub session: SessionField,
}

/// `session_older`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageOlder {
    /// The number of the oldest entry the page holds.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub before: Sent<u64>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub session: SessionField,
}

/// `history_request`: every field may be absent or null ("all").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryQuery {
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub search: Sent<Option<String>>,
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub project: Sent<Option<String>>,
    /// A provenance `source` (`hook`, `ask`, …).
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub agent: Sent<Option<String>>,
    /// `question`, `approval` or `plan` (issue 26); absent or null for every kind.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub kind: Sent<Option<String>>,
    /// Issue 30: the id of the oldest entry the page shows, for the entries older than it;
    /// absent or null for the newest.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub before: Sent<Option<i64>>,
}

impl From<&HistoryFilter> for HistoryQuery {
    fn from(filter: &HistoryFilter) -> Self {
        HistoryQuery {
            search: Some(filter.search.clone()).into(),
            project: filter.project.clone().into(),
            agent: filter.source.clone().into(),
            // Unsaid when every kind is wanted: the message stays as older pages sent it.
            kind: match filter.kind {
                Some(kind) => Some(kind.as_str().to_owned()).into(),
                None => Sent::Absent,
            },
            before: match filter.before {
                Some(id) => Some(id).into(),
                None => Sent::Absent,
            },
        }
    }
}

impl HistoryQuery {
    /// The filter, each field within its bound (checked in the order search, project, agent).
    pub fn filter(self) -> Result<HistoryFilter, HistoryRequestError> {
        fn text(
            sent: Sent<Option<String>>,
            field: &'static str,
            max: usize,
        ) -> Result<Option<String>, HistoryRequestError> {
            match sent {
                Sent::Absent | Sent::Given(None) => Ok(None),
                Sent::Given(Some(text)) => {
                    let length = text.chars().count();
                    match (length > max, field) {
                        (true, "search") => Err(HistoryRequestError::SearchTooLong { length }),
                        (true, _) => Err(HistoryRequestError::NameTooLong { field }),
                        (false, _) => Ok(Some(text)),
                    }
                }
                Sent::Other(_) => Err(HistoryRequestError::NotText { field }),
            }
        }
        let search = text(self.search, "search", MAX_HISTORY_SEARCH)?.unwrap_or_default();
        let project = text(self.project, "project", MAX_HISTORY_NAME)?;
        let source = text(self.agent, "agent", MAX_HISTORY_NAME)?;
        let kind = match text(self.kind, "kind", MAX_HISTORY_NAME)? {
            None => None,
            Some(name) => {
                Some(HistoryKind::from_name(&name).ok_or(HistoryRequestError::UnknownKind)?)
            }
        };
        let before = match self.before {
            Sent::Absent | Sent::Given(None) => None,
            Sent::Given(Some(id)) if id >= 0 => Some(id),
            Sent::Given(Some(_)) | Sent::Other(_) => return Err(HistoryRequestError::NotAnEntry),
        };
        Ok(HistoryFilter { search, project, source, kind, before })
    }
}

/// A page's message once checked: what the bridge acts on.
#[allow(
    clippy::large_enum_variant,
    reason = "a page's message lives for one step of the hub: boxing its form buys nothing"
)]
#[derive(Clone, Debug, PartialEq)]
pub enum PageRequest {
    /// About an open question (still to be found, and the answer checked against it).
    Question(BrowserMessage),
    /// About the agent session the bridge carries (`Own`) or one an inbox client hosts.
    Session(SessionKey, SessionMessage),
    History(HistoryFilter),
}

impl FromPage {
    /// Reads a page's message: every kind the bridge knows reads, whatever its fields hold
    /// ([`FromPage::check`] refuses them); anything else is refused here.
    pub fn read(value: &Value) -> Result<FromPage, BrowserError> {
        FromPage::deserialize(value).map_err(|_| match value {
            // The one place the type is read as text: it names none of the kinds above.
            Value::Object(object) => BrowserError::UnknownType(
                object.get("type").and_then(Value::as_str).unwrap_or_default().to_owned(),
            ),
            _ => BrowserError::NotObject,
        })
    }

    /// Checks each field, refusing the first that is wrong.
    pub fn check(self) -> Result<PageRequest, BrowserError> {
        let question = |message| Ok(PageRequest::Question(message));
        match self {
            FromPage::QuestionAnswer(body) => {
                question(BrowserMessage::Answer { tool_use_id: id(&body.tool_use_id)?, body })
            }
            FromPage::QuestionClarify(body) => {
                question(BrowserMessage::Clarify { tool_use_id: id(&body.tool_use_id)?, body })
            }
            FromPage::QuestionTimedOut(body) => question(BrowserMessage::TimedOut {
                tool_use_id: id(&body.form.tool_use_id)?,
                body,
            }),
            FromPage::QuestionDeclined(decline) => {
                let stop = match decline.outcome {
                    Sent::Given(DeclineOutcome::Stopped) => true,
                    Sent::Other(Value::String(other)) => {
                        return Err(BrowserError::BadDecline(other));
                    }
                    Sent::Given(DeclineOutcome::Declined) | Sent::Absent | Sent::Other(_) => false,
                };
                let message = decline.message.into_given().unwrap_or_default();
                limits::check_decline_wire_message(&message)?;
                let tool_use_id = id(&decline.tool_use_id)?;
                question(BrowserMessage::Declined { tool_use_id, stop, message })
            }
            FromPage::QuestionSeen(seen) => {
                question(BrowserMessage::Seen { tool_use_id: id(&seen.tool_use_id)? })
            }
            FromPage::TimeoutPaused(paused) => question(BrowserMessage::Timeout {
                tool_use_id: id(&paused.tool_use_id)?,
                change: TimeoutChange::Paused,
            }),
            FromPage::TimeoutExtended(extension) => {
                let secs = extension.secs.given().copied();
                let change = secs
                    .filter(|secs| (1..=MAX_TIMEOUT_EXTENSION_SECS).contains(secs))
                    .map(|secs| TimeoutChange::Extended { secs })
                    .ok_or_else(|| BrowserError::BadExtension(extension.secs.as_sent()))?;
                question(BrowserMessage::Timeout {
                    tool_use_id: id(&extension.tool_use_id)?,
                    change,
                })
            }
            FromPage::PermissionDecision(decided) => {
                let key = session_key(&decided.session)?;
                let request_id = id(&decided.request_id)?;
                let decision = match decided.decision {
                    Sent::Given(DecisionKind::Allow) => PermissionDecision::AllowOnce,
                    Sent::Given(DecisionKind::AllowAlways) => {
                        let suggestion = decided
                            .suggestion
                            .into_given()
                            .and_then(|raw| Suggestion::try_from(raw).ok())
                            .ok_or(BrowserError::BadSuggestion)?;
                        PermissionDecision::AllowAlways { suggestion }
                    }
                    Sent::Given(DecisionKind::HandBack) => PermissionDecision::HandBack,
                    Sent::Given(DecisionKind::DenyAlways) => {
                        let message = decided.message.into_given().unwrap_or_default();
                        limits::check_decline_wire_message(&message)?;
                        let rule = decided
                            .rule
                            .into_given()
                            .and_then(|raw| serde_json::from_value(raw).ok())
                            .ok_or(BrowserError::BadSuggestion)?;
                        PermissionDecision::DenyAlways { rule, message }
                    }
                    Sent::Given(DecisionKind::Fill) => {
                        let content = match decided.content.into_given() {
                            Some(Value::Object(content)) => content,
                            _ => return Err(BrowserError::BadDecision("fill".to_owned())),
                        };
                        PermissionDecision::Fill { content }
                    }
                    Sent::Given(DecisionKind::Deny) => {
                        let message = decided.message.into_given().unwrap_or_default();
                        limits::check_decline_wire_message(&message)?;
                        PermissionDecision::Deny { message }
                    }
                    Sent::Other(Value::String(other)) => {
                        return Err(BrowserError::BadDecision(other));
                    }
                    Sent::Absent | Sent::Other(_) => {
                        return Err(BrowserError::BadDecision(String::new()));
                    }
                };
                Ok(PageRequest::Session(key, SessionMessage::Decide { request_id, decision }))
            }
            FromPage::SessionPrompt(prompt) => {
                let key = session_key(&prompt.session)?;
                match prompt.text {
                    Sent::Given(text) if !text.trim().is_empty() => {
                        Ok(PageRequest::Session(key, SessionMessage::Prompt(text)))
                    }
                    _ => Err(BrowserError::EmptyPrompt),
                }
            }
            FromPage::SessionStop(stop) => {
                Ok(PageRequest::Session(session_key(&stop.session)?, SessionMessage::Stop))
            }
            FromPage::SessionEnd(end) => {
                Ok(PageRequest::Session(session_key(&end.session)?, SessionMessage::End))
            }
            FromPage::SessionOlder(older) => {
                let key = session_key(&older.session)?;
                let before =
                    older.before.into_given().and_then(|before| usize::try_from(before).ok());
                let before = before.ok_or(BrowserError::BadOlder)?;
                Ok(PageRequest::Session(key, SessionMessage::Older { before }))
            }
            FromPage::HistoryRequest(query) => Ok(PageRequest::History(query.filter()?)),
        }
    }

    /// Reads and checks a page's message.
    pub fn parse(value: &Value) -> Result<PageRequest, BrowserError> {
        FromPage::read(value)?.check()
    }
}

/// A `tool_use_id` or `request_id`: text, or the message names nothing.
fn id(sent: &Sent<String>) -> Result<String, BrowserError> {
    sent.given().cloned().ok_or(BrowserError::MissingId)
}

// What a page sends, built as it sends it.

/// `question_seen`: the page showed question `tool_use_id` (see [`BrowserMessage::Seen`]).
pub fn question_seen(tool_use_id: &str) -> FromPage {
    FromPage::QuestionSeen(QuestionRef { tool_use_id: tool_use_id.to_owned().into() })
}

/// `timeout_paused` or `timeout_extended`.
pub fn timeout_change_message(tool_use_id: &str, change: TimeoutChange) -> FromPage {
    let tool_use_id = tool_use_id.to_owned().into();
    match change {
        TimeoutChange::Paused => FromPage::TimeoutPaused(QuestionRef { tool_use_id }),
        TimeoutChange::Extended { secs } => {
            FromPage::TimeoutExtended(PageExtension { tool_use_id, secs: secs.into() })
        }
    }
}

/// `permission_decision` on card `request_id` of session `key`.
pub fn permission_decision(
    key: SessionKey,
    request_id: &str,
    decision: &PermissionDecision,
) -> FromPage {
    let mut page = PageDecision {
        request_id: request_id.to_owned().into(),
        session: session_field(key),
        ..PageDecision::default()
    };
    let kind = match decision {
        PermissionDecision::AllowOnce => DecisionKind::Allow,
        PermissionDecision::AllowAlways { suggestion } => {
            page.suggestion = suggestion.raw().clone().into();
            DecisionKind::AllowAlways
        }
        PermissionDecision::Deny { message } => {
            page.message = message.clone().into();
            DecisionKind::Deny
        }
        PermissionDecision::DenyAlways { rule, message } => {
            page.message = message.clone().into();
            page.rule = serde_json::to_value(rule).unwrap_or_default().into();
            DecisionKind::DenyAlways
        }
        PermissionDecision::HandBack => DecisionKind::HandBack,
        PermissionDecision::Fill { content } => {
            page.content = Value::Object(content.clone()).into();
            DecisionKind::Fill
        }
    };
    page.decision = kind.into();
    FromPage::PermissionDecision(page)
}

/// `session_prompt`: the next user turn of session `key`, typed in a page.
pub fn session_prompt(key: SessionKey, text: &str) -> FromPage {
    FromPage::SessionPrompt(PagePrompt {
        text: text.to_owned().into(),
        session: session_field(key),
    })
}

/// `session_stop`: the page's Stop.
pub fn session_stop(key: SessionKey) -> FromPage {
    FromPage::SessionStop(SessionRef { session: session_field(key) })
}

/// `session_end`: the page's End session, for a hosted session.
pub fn session_end(key: SessionKey) -> FromPage {
    FromPage::SessionEnd(SessionRef { session: session_field(key) })
}

/// `session_older`: the entries before number `before` of session `key`.
pub fn session_older(key: SessionKey, before: usize) -> FromPage {
    FromPage::SessionOlder(PageOlder {
        before: (before as u64).into(),
        session: session_field(key),
    })
}

/// `history_request`: a page asks for the History page `filter` selects.
pub fn history_request(filter: &HistoryFilter) -> FromPage {
    FromPage::HistoryRequest(filter.into())
}
