//! What the bridge sends a page, as serde types ([`ToPage`]).
//!
//! A page reads these from the bridge that served it; after an upgrade it may be a newer one
//! (an open tab reconnects). So the fields a page takes whatever they hold are [`Sent`]: an
//! outcome kind or a refusal's kind this page does not know is read as it always was (see
//! each field), not a message dropped.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::from_page::Sent;
use crate::protocol::envelope::{Envelope, EnvelopeError, Incoming, ReplyFormat};
use crate::protocol::history::HistoryPage;
use crate::protocol::inbox::Format;
use crate::protocol::origin::{Provenance, SessionKey};
use crate::protocol::outcome::OutcomeKind;
use crate::protocol::stream::PermissionRequest;

/// What the bridge sends a page: `{"type": …}` and the fields of each kind. `U` is an agent
/// session's body: the book's `SessionUpdate` (this layer cannot name it; tests use a `Value`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPage<U = Value> {
    UserQuestion(UserQuestion),
    /// The question is no longer open: the agent withdrew it, another tab answered, its time ran
    /// out. `reason` is how it ended; a kind this page does not know reads as withdrawn.
    QuestionWithdrawn {
        tool_use_id: String,
        reason: Sent<OutcomeKind>,
    },
    /// The bridge took this page's answer (or decline); `outcome` is its kind.
    AnswerReceived {
        tool_use_id: String,
        outcome: Sent<OutcomeKind>,
    },
    /// Another tab paused (`null`) or extended a question's time: the seconds left now.
    TimeoutChanged {
        tool_use_id: String,
        timeout_secs: Option<u64>,
    },
    /// Why a page's message was refused.
    Error(Refusal),
    /// An agent session's entries from `from` on, and its state.
    Session(SessionBody<U>),
    /// The answer to a `session_older`: entries that go in front of the ones the page holds.
    SessionOlderEntries(SessionBody<U>),
    /// A hosted session's host went away; the session leaves every page.
    SessionGone {
        #[serde(default = "own", with = "session_number", skip_serializing_if = "is_own")]
        session: SessionKey,
    },
    /// After a page (re)connects: the hosted sessions still shown, by number.
    SessionsOpen {
        sessions: Vec<u64>,
    },
    /// A tool the agent wants to run.
    PermissionRequest(PermissionCard),
    /// The card goes from every page: decided (in some page) or withdrawn.
    PermissionWithdrawn {
        request_id: String,
        reason: Sent<PermissionEnd>,
    },
    /// After a page (re)connects: the cards still waiting.
    PermissionsOpen {
        request_ids: Vec<String>,
    },
    /// This bridge keeps history: the page may show History.
    HistoryKept,
    /// The answer to a `history_request`.
    HistoryPage(HistoryPage),
}

impl<U> From<UserQuestion> for ToPage<U> {
    fn from(question: UserQuestion) -> Self {
        ToPage::UserQuestion(question)
    }
}

impl<U> From<Refusal> for ToPage<U> {
    fn from(refusal: Refusal) -> Self {
        ToPage::Error(refusal)
    }
}

/// `user_question`: the seed web message (`tool_use_id`, `questions`, `timestamp`) and what a
/// page needs besides.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UserQuestion {
    pub tool_use_id: String,
    /// The questions as the agent sent them.
    pub questions: Value,
    /// When it was asked, `2026-11-21T23:02:23Z`.
    pub timestamp: String,
    #[serde(flatten)]
    pub who: WhoAsked,
    /// Soft warnings about the input, as text.
    pub warnings: Vec<String>,
    /// Seconds the user has (`--timeout`), left now: the page shows the countdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Pre-selected answers (`--answers`) by number, to fill the form.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub selected: Map<String, Value>,
    /// Unanswered questions are sent as skipped.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mark_skipped: bool,
    /// The shape the agent's reply takes when it is not its envelope's own; a name this page
    /// does not know is no shape at all.
    #[serde(default, skip_serializing_if = "Sent::is_absent")]
    pub reply_format: Sent<Format>,
    /// The agent's own request, when its model reads a reply the page cannot word from the
    /// questions alone ([`super::agent_request`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_request: Option<Value>,
}

impl UserQuestion {
    /// The question as an agent's message: a seed web `user_question`, which askpane reads as
    /// it reads any agent's ([`crate::protocol::parse_message`]).
    pub fn incoming(&self) -> Result<Incoming, EnvelopeError> {
        // Our own types hold text keys only: writing them as JSON cannot fail.
        let message = serde_json::to_value(ToPage::<Value>::from(self.clone())).unwrap_or_default();
        crate::protocol::parse_message(&message)
    }

    /// Who asked, as the page shows it.
    pub fn provenance(&self) -> Provenance {
        self.who.provenance()
    }

    /// The reply shape it names, if any.
    pub fn reply_format(&self) -> Option<ReplyFormat> {
        self.reply_format.given().copied().map(ReplyFormat::from)
    }

    /// The envelope its `agent_request` names (for the page's receipt); `None` without one, or
    /// one askpane cannot read.
    pub fn agent_envelope(&self) -> Option<Envelope> {
        agent_envelope(self.agent_request.as_ref()?)
    }
}

/// A Codex app-server question's envelope, from the request Codex wrote.
pub(super) fn agent_envelope(request: &Value) -> Option<Envelope> {
    let envelope = crate::protocol::parse_message(request).ok()?.envelope;
    matches!(envelope, Envelope::CodexServer { .. }).then_some(envelope)
}

/// Who asked, as a page shows it: the bridge's one-line label (`source`: `hook · my-project`),
/// the adapter (`agent`) and, when known, the project, session and subagent the page groups by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WhoAsked {
    pub source: String,
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<String>,
}

impl WhoAsked {
    pub fn of(provenance: &Provenance) -> WhoAsked {
        WhoAsked {
            source: provenance.label(),
            agent: provenance.source.clone(),
            project: provenance.project.clone(),
            session: provenance.session.clone(),
            subagent: provenance.subagent.clone(),
        }
    }

    /// The provenance again: `source` is `agent · detail`, the detail what follows the agent.
    pub fn provenance(&self) -> Provenance {
        provenance(
            Some(&self.source),
            Some(&self.agent),
            &self.project,
            &self.session,
            &self.subagent,
        )
    }
}

/// The provenance named by a message's `source`, `agent`, `project`, `session` and `subagent`.
/// Without `agent` (a bridge before issue 10), the label alone names who asked.
pub(super) fn provenance(
    label: Option<&str>,
    agent: Option<&str>,
    project: &Option<String>,
    session: &Option<String>,
    subagent: &Option<String>,
) -> Provenance {
    let mut provenance = match agent {
        Some(agent) => {
            let detail = label.and_then(|label| label.strip_prefix(agent)?.strip_prefix(" · "));
            Provenance::new(agent, detail.map(str::to_owned))
        }
        None => Provenance::new("askpane", label.map(str::to_owned)),
    }
    .with_project(project.clone());
    provenance.session = session.clone();
    provenance.subagent = subagent.clone();
    provenance
}

/// How the page should take a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// The question (card, session) ended: there is nothing to fix.
    NotOpen,
    /// Shorten `field` (on question `question` when it has one).
    TooLong,
    /// Anything else.
    Invalid,
}

/// The request a page waits on that a refusal answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedRequest {
    /// The page's History waits for its page (issue 11).
    HistoryRequest,
    /// The page's "Show earlier" waits for its entries (issue 24).
    SessionOlder,
}

/// `error`: why a page's message was refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Refusal {
    pub message: String,
    /// The message's `tool_use_id` as the page sent it (whatever it held), or null.
    #[serde(default)]
    pub tool_use_id: Value,
    /// A kind this page does not know reads as `invalid`.
    pub kind: Sent<RefusalKind>,
    /// (The fields are in the order the bridge has always written them.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RefusedRequest>,
    /// The field over its limit, or at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The question (by index) the field belongs to, when it belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<usize>,
}

impl Refusal {
    /// The question ended before the answer arrived: there is nothing for the user to fix.
    pub fn not_open(&self) -> bool {
        self.kind.given() == Some(&RefusalKind::NotOpen)
    }
}

/// `session` and `session_older_entries`: `update` (the transcript as the bridge holds it) of
/// the session `session` names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionBody<U> {
    #[serde(flatten)]
    pub update: U,
    /// Who runs a hosted session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default = "own", with = "session_number", skip_serializing_if = "is_own")]
    pub session: SessionKey,
}

/// `permission_request`: a tool the agent wants to run, and who asked (its project, not its
/// session or subagent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionCard {
    pub request: PermissionRequest,
    #[serde(flatten)]
    pub who: WhoAsked,
}

/// How a permission card ended, for `permission_withdrawn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionEnd {
    Allowed,
    Denied,
    /// Left to the agent's own dialog ("Answer in the terminal").
    HandedBack,
    /// The agent took it back, or askpane ended it.
    Withdrawn,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn own() -> SessionKey {
    SessionKey::Own
}

fn is_own(key: &SessionKey) -> bool {
    *key == SessionKey::Own
}

/// A [`SessionKey`] as the wire's `session`: a hosted session's number; absent (or null) for
/// the bridge's own session.
mod session_number {
    use super::*;

    pub fn serialize<S: Serializer>(key: &SessionKey, serializer: S) -> Result<S::Ok, S::Error> {
        match key {
            SessionKey::Hosted(number) => serializer.serialize_u64(*number),
            SessionKey::Own => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SessionKey, D::Error> {
        Ok(Option::<u64>::deserialize(deserializer)?.map_or(SessionKey::Own, SessionKey::Hosted))
    }
}
