//! The browser protocol of `--ui web`: the seed web messages, and the few more a bridge needs.
//! Its messages are serde types, as `protocol/inbox.rs`'s are: [`ToPage`] (`to_page.rs`) is what
//! the bridge sends a page, [`FromPage`] (`from_page.rs`) what a page sends the bridge. Here:
//! building them, and turning a page's answer into the outcome the window's rules would make.
//!
//! Server → browser: `user_question` (the seed's `{type, tool_use_id, questions, timestamp}`, plus
//! `source` and `warnings`), and `question_withdrawn` when the question is no longer open (the
//! agent withdrew it, or another tab answered first). Browser → server: `question_answer` (the
//! seed's answers by number: `{"<question index>": "<option numbers from 1, comma-joined>"}`,
//! Other as `other:<text>` after the numbers, plus optional `notes` by index and `response` for
//! a reply in the user's own words) and `question_declined` (`outcome` `declined` or `stopped`,
//! with the message). Everything a browser sends is checked against the question it answers:
//! an unknown id, a question index or option number that was not offered, a text over its
//! limit ([`super::limits`]) is refused with an `error` that says why (and which field).
//!
//! Acknowledgement: once the bridge has taken an answer or a decline, the page that sent it gets
//! `answer_received`; only then does it say "Sent". The page may also pause or extend a
//! question's `--timeout` (`timeout_paused`, `timeout_extended`); the other tabs then get
//! `timeout_changed`.
//!
//! Issue 11, the agent session in the browser (`askpane claude --ui web`). Server → browser:
//! `session` (the transcript from entry `from` on, and the session's state; a page gets the
//! newest entries when it connects, then each change), `permission_request` (a tool the agent
//! wants to run), `permission_withdrawn` (decided in some page, or taken back by the agent: every
//! page drops the card) and `permissions_open` (after a connect: the cards still waiting).
//! Browser → server: `permission_decision` (`decision` `allow` or `deny`, with the user's
//! `message` for a deny), `session_prompt` (`text`: the next user turn) and `session_stop`
//! (interrupt the turn).
//!
//! Hosted sessions (`askpane inbox --ui web`): an inbox shows every session its clients host
//! (`askpane claude` under the inbox). Each message about one says which in `session` (the
//! number askpane gave it); a message without `session` is about the bridge's own session
//! (`askpane claude --ui web`), so pages and bridges from before keep working. Server → browser:
//! `session` also carries `label` (who runs it) for a hosted one, `session_gone` when its host
//! went away, and `sessions_open` after a connect (the hosted sessions still shown: any other
//! the page shows went while it was away). Browser → server: `session_prompt` and `session_stop`
//! may carry `session`, and `session_end` (with `session`) ends a hosted session.
//!
//! Issue 24: a long session never keeps a page out. A page that connects gets each session's
//! newest entries (`session` with `from` past 0 when earlier ones are not sent, and `kept_from`
//! once the bridge dropped the oldest); it asks for the ones before with `session_older`
//! (`before`: the number of the oldest entry it holds, and `session` for a hosted one), one at a
//! time, and gets `session_older_entries` (a `session` body with `before`: the entries just
//! before it, bounded in count and bytes). A refused `session_older` gets an `error` with
//! `"request":"session_older"`.
//!
//! History (issue 11, [`super::history`]): `history_kept` once connected when the bridge keeps
//! history, `history_request` from a page and `history_page` back; a refused request gets an
//! `error` with `"request":"history_request"`.

use serde_json::{Map, Value};

use super::answer::{Answers, Draft, Pick, build_answers};
use super::envelope::{Envelope, ReplyFormat};
use super::history::HistoryPage;
use super::limits::{self, LimitError, MAX_TIMEOUT_EXTENSION_SECS};
use super::origin::{Provenance, SessionKey};
use super::outcome::{AtDeadline, Outcome, OutcomeKind, Prefill};
use super::question::Ask;
use super::stream::{PermissionDecision, PermissionRequest};

mod from_page;
mod to_page;

pub use from_page::{
    DecisionKind, DeclineOutcome, FromPage, HistoryQuery, PageDecision, PageDecline, PageExtension,
    PageForm, PageOlder, PagePicks, PagePrompt, PageRequest, PageTimedOut, PageUnconfirmed,
    QuestionRef, Sent, SessionField, SessionRef, history_request, permission_decision,
    question_seen, session_end, session_older, session_prompt, session_stop,
    timeout_change_message,
};
pub use to_page::{
    PermissionCard, PermissionEnd, Refusal, RefusalKind, RefusedRequest, SessionBody, ToPage,
    UserQuestion, WhoAsked,
};

/// The WebSocket subprotocol a page asks for; its token travels beside it, as
/// `askpane-token.<hex>` in the same `Sec-WebSocket-Protocol` header (never in the URL).
pub const SUBPROTOCOL: &str = "askpane";
/// What the page's token entry in `Sec-WebSocket-Protocol` starts with.
pub const TOKEN_PROTOCOL_PREFIX: &str = "askpane-token.";
/// The close reason of the bridge's one normal closure (code 1000): askpane has finished and
/// there is nothing to reconnect to. Any other close is a fault the page recovers from.
pub const DONE_REASON: &str = "askpane is done";

/// The close code and reason of a page whose link was replaced ("New link", issue 11): the page
/// stops reconnecting and says so; the user opens the new link.
pub const LINK_REPLACED_CODE: u16 = 4001;
pub const LINK_REPLACED_REASON: &str = "this link was replaced by a new one";

/// What the model reads when the browser page was closed (or lost) and no page came back: the
/// user did not choose an outcome, so none is made up; the agent hears what happened.
pub const PAGE_CLOSED_MESSAGE: &str = "The user closed the askpane page in the browser without \
    answering. Do not assume an answer; ask again in chat if you still need one.";

/// The outcome when the last page has been gone for the bridge's grace and none came back.
pub fn page_closed_outcome() -> Outcome {
    Outcome::Declined { message: PAGE_CLOSED_MESSAGE.to_owned() }
}

/// What a question carries to the browser besides the questions themselves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuestionExtras {
    /// Who asked: `source` is its one-line label (`hook · my-project`); its project, session
    /// and subagent go along so the page groups requests as the window does.
    pub provenance: Provenance,
    /// Soft warnings about the input, as text.
    pub warnings: Vec<String>,
    /// Seconds the user has (`--timeout`): the page shows the countdown.
    pub timeout_secs: Option<u64>,
    /// Pre-selected answers (`--answers`) by number, to fill the form.
    pub selected: Map<String, Value>,
    /// Unanswered questions are sent as skipped (the session can take it).
    pub mark_skipped: bool,
    /// The shape the agent's reply takes when it is not its envelope's own (`--format`, an
    /// OpenCode question): the page's receipt and decline bar then say what that agent gets.
    pub reply_format: Option<ReplyFormat>,
    /// The agent's own request when its model reads a reply the page cannot word from the
    /// questions alone (Codex's answers JSON, keyed by Codex's question ids): see
    /// [`agent_request`].
    pub agent_request: Option<Value>,
}

/// The request a page needs to word a question's receipt as its agent's model reads it: a
/// Codex app-server question as Codex wrote it. `None` for every other envelope.
pub fn agent_request(envelope: &Envelope) -> Option<Value> {
    match envelope {
        Envelope::CodexServer { id, request, .. } => {
            Some(super::codex_server::question_message(id, request))
        }
        _ => None,
    }
}

/// The envelope a `user_question`'s `agent_request` names ([`agent_request`]), for the page's
/// receipt; `None` without one (or one askpane cannot read).
pub fn question_agent_envelope(message: &Value) -> Option<Envelope> {
    to_page::agent_envelope(message.get("agent_request")?)
}

/// `user_question`: a question for the browser.
pub fn user_question(
    tool_use_id: &str,
    ask: &Ask,
    timestamp: &str,
    extras: &QuestionExtras,
) -> UserQuestion {
    let questions = ask.input().get("questions").cloned().unwrap_or(Value::Array(Vec::new()));
    UserQuestion {
        tool_use_id: tool_use_id.to_owned(),
        questions,
        timestamp: timestamp.to_owned(),
        who: WhoAsked::of(&extras.provenance),
        warnings: extras.warnings.clone(),
        timeout_secs: extras.timeout_secs,
        selected: extras.selected.clone(),
        mark_skipped: extras.mark_skipped,
        reply_format: extras
            .reply_format
            .map(super::inbox::Format::from)
            .map_or(Sent::Absent, Sent::Given),
        agent_request: extras.agent_request.clone(),
    }
}

/// Pre-selected drafts by number (the `answers` of a seed reply), for `selected`.
pub fn selected_numbers(ask: &Ask, drafts: &[Draft]) -> Map<String, Value> {
    let Ok(answers) = build_answers(ask, drafts) else { return Map::new() };
    let reply = Envelope::SeedWeb { tool_use_id: String::new() }.reply(&Outcome::Answered(answers));
    match reply.and_then(|reply| reply.get("answers").cloned()) {
        Some(Value::Object(numbers)) => numbers,
        _ => Map::new(),
    }
}

/// The reply shape a `user_question` names ([`QuestionExtras::reply_format`]), if any; a name
/// this page does not know is none.
pub fn question_reply_format(message: &Value) -> Option<ReplyFormat> {
    let format = Sent::<super::inbox::Format>::read(message.get("reply_format")?.clone());
    format.into_given().map(ReplyFormat::from)
}

/// Who asked, from a message with a `user_question`'s keys (the inbox's and OpenCode's carry
/// them too): the bridge's label, and the project, session and subagent when it names them.
pub fn question_provenance(message: &Value) -> Provenance {
    let text = |key: &str| message.get(key).and_then(Value::as_str);
    let owned = |key: &str| text(key).map(str::to_owned);
    to_page::provenance(
        text("source"),
        text("agent"),
        &owned("project"),
        &owned("session"),
        &owned("subagent"),
    )
}

/// `question_withdrawn`: the question is gone; the browser drops it. `reason` is how it ended
/// (an [`Outcome::kind`]: `answered` in another tab, `withdrawn` by the agent, …).
pub fn question_withdrawn<U>(tool_use_id: &str, reason: OutcomeKind) -> ToPage<U> {
    ToPage::QuestionWithdrawn { tool_use_id: tool_use_id.to_owned(), reason: reason.into() }
}

/// `answer_received`: the bridge took the page's answer (or decline); `outcome` is its kind.
pub fn answer_received<U>(tool_use_id: &str, outcome: OutcomeKind) -> ToPage<U> {
    ToPage::AnswerReceived { tool_use_id: tool_use_id.to_owned(), outcome: outcome.into() }
}

/// `timeout_changed`: another tab paused (`None`) or extended a question's time; the seconds
/// left now.
pub fn timeout_changed<U>(tool_use_id: &str, timeout_secs: Option<u64>) -> ToPage<U> {
    ToPage::TimeoutChanged { tool_use_id: tool_use_id.to_owned(), timeout_secs }
}

/// `error`: why a browser's message was refused. `kind` tells the page what to do with the
/// answer it is holding: `not_open` (the question ended; nothing to fix), `too_long` (shorten
/// `field`, on question `question` when it has one), `invalid` (anything else).
pub fn error_message(error: &BrowserError, tool_use_id: Option<&Value>) -> Refusal {
    let mut refusal = Refusal {
        message: error.to_string(),
        tool_use_id: tool_use_id.cloned().unwrap_or(Value::Null),
        kind: error.kind().into(),
        field: None,
        question: None,
        request: None,
    };
    match error {
        BrowserError::Limit(limit) => {
            let field = limit.field();
            refusal.field = Some(field.name().to_owned());
            refusal.question = field.question();
        }
        // Issue 11: the page's History waits for its answer; this one tells it which failed.
        BrowserError::History(history) => {
            refusal.request = Some(RefusedRequest::HistoryRequest);
            refusal.field = history.field().map(str::to_owned);
        }
        _ => {}
    }
    refusal
}

/// The `error` for a page's message `refused`, with `error`: as [`error_message`], echoing the
/// `tool_use_id` as the page sent it, and naming the request a page waits on when it was one
/// (issue 24: a `session_older`, whose "Show earlier" waits for its answer).
pub fn refusal(error: &BrowserError, refused: &Value) -> Refusal {
    let mut refusal = error_message(error, refused.get("tool_use_id"));
    if let Ok(FromPage::SessionOlder(_)) = FromPage::read(refused) {
        refusal.request = Some(RefusedRequest::SessionOlder);
    }
    refusal
}

/// A page pausing or extending a question's `--timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutChange {
    /// The user is there ("any key to stay"): no deadline until they answer.
    Paused,
    /// "Add time": `secs` more seconds (from now, when paused), at most
    /// [`MAX_TIMEOUT_EXTENSION_SECS`].
    Extended { secs: u64 },
}

/// What a browser sent, recognised but not yet checked against its question.
#[allow(
    clippy::large_enum_variant,
    reason = "a page's message lives for one step of the hub: boxing its form buys nothing"
)]
#[derive(Clone, Debug, PartialEq)]
pub enum BrowserMessage {
    Answer {
        tool_use_id: String,
        body: PageForm,
    },
    Declined {
        tool_use_id: String,
        stop: bool,
        message: String,
    },
    Timeout {
        tool_use_id: String,
        change: TimeoutChange,
    },
    /// "Chat about this", with what was picked so far by number (as `question_answer`).
    Clarify {
        tool_use_id: String,
        body: PageForm,
    },
    /// The page's countdown ran out: what was picked by number, and `typing`, the questions
    /// whose box was still being typed in.
    TimedOut {
        tool_use_id: String,
        body: PageTimedOut,
    },
    /// The page drew the question while it was visible (issue 24): from now on, every page going
    /// away may end it as "the page was closed". A question no page has shown never ends so.
    Seen {
        tool_use_id: String,
    },
}

impl BrowserMessage {
    pub fn tool_use_id(&self) -> &str {
        match self {
            BrowserMessage::Answer { tool_use_id, .. }
            | BrowserMessage::Declined { tool_use_id, .. }
            | BrowserMessage::Timeout { tool_use_id, .. }
            | BrowserMessage::Clarify { tool_use_id, .. }
            | BrowserMessage::TimedOut { tool_use_id, .. }
            | BrowserMessage::Seen { tool_use_id } => tool_use_id,
        }
    }
}

/// The page's `<meta name="askpane-served-by">` as the bundle has it: a plain file server serves
/// it as it is (the built-in demo may show without a token).
pub const SERVED_BY_FILES: &str = r#"<meta name="askpane-served-by" content="files">"#;

/// The same tag as askpane's bridge serves it: a page opened without its token then needs its
/// link, and says so, instead of showing the demo.
pub const SERVED_BY_ASKPANE: &str = r#"<meta name="askpane-served-by" content="askpane">"#;

/// What a page askpane served says when it was opened without its token (issue 24: the address
/// bar without the token once showed the built-in demo, whose answers went nowhere).
pub const NEEDS_LINK_MESSAGE: &str = "This askpane page needs its link: open the address askpane \
    printed when it started (it ends in #token=…). For a new one, run `askpane inbox --new-link` \
    (the inbox), or start the command again.";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BrowserError {
    #[error("not a JSON object")]
    NotObject,
    #[error(
        "unknown message type {0:?} (expected question_answer, question_declined, \
         question_clarify, question_timed_out, question_seen, timeout_paused or timeout_extended)"
    )]
    UnknownType(String),
    #[error("no tool_use_id")]
    MissingId,
    #[error("no question is open with tool_use_id {0:?}")]
    UnknownQuestion(String),
    #[error("`answers` must be an object of strings")]
    AnswersNotObject,
    #[error("question index {0:?} was not asked")]
    NoSuchQuestion(String),
    #[error("question {question}: option {option} was not offered", question = .question + 1)]
    NoSuchOption { question: usize, option: String },
    #[error("question {question} is single-select, but several options were sent", question = .question + 1)]
    SeveralOnSingle { question: usize },
    #[error("a decline's outcome must be declined or stopped, not {0:?}")]
    BadDecline(String),
    #[error("`unconfirmed.from` must be preset or saved_draft, not {0:?}")]
    BadPrefill(String),
    #[error(
        "`secs` must be a whole number of seconds from 1 to {MAX_TIMEOUT_EXTENSION_SECS}, not {0}"
    )]
    BadExtension(String),
    #[error("question {0:?} has no --timeout to pause or extend")]
    NoTimeout(String),
    #[error("{0}")]
    Limit(#[from] LimitError),
    #[error("a permission decision must be allow, allow_always, deny or hand_back, not {0:?}")]
    BadDecision(String),
    #[error("an allow_always must name a rule the agent suggested, in `suggestion`")]
    BadSuggestion,
    #[error("a prompt must have some text")]
    EmptyPrompt,
    #[error("no tool permission is waiting with request_id {0:?}")]
    UnknownPermission(String),
    /// Issue 26: a decision the card does not offer (a forged rule, say): it decides nothing.
    #[error(
        "tool permission {0:?} does not offer that decision (a rule the agent did not suggest, \
         or nowhere to hand it back to)"
    )]
    NotOffered(String),
    #[error("this askpane runs no agent session to prompt or stop")]
    NoSession,
    #[error("no agent session {0} is shown here (its host went away)")]
    UnknownSession(u64),
    #[error("`session` must be the number of a session askpane sent")]
    BadSession,
    /// Issue 24: a `session_older` without the number of an entry.
    #[error("`before` must be the number of a transcript entry")]
    BadOlder,
    /// Issue 24: a `session_older` while the page has not read what it was sent.
    #[error("the earlier entries asked for before are still on their way; ask again after them")]
    OlderBusy,
    /// Issue 11: a `history_request` the bridge does not run ([`super::history`]).
    #[error("{0}")]
    History(#[from] super::history::HistoryRequestError),
}

impl BrowserError {
    /// How the page should take it (see [`error_message`]).
    pub fn kind(&self) -> RefusalKind {
        match self {
            BrowserError::UnknownQuestion(_)
            | BrowserError::UnknownPermission(_)
            | BrowserError::UnknownSession(_) => RefusalKind::NotOpen,
            BrowserError::Limit(_)
            | BrowserError::History(
                super::history::HistoryRequestError::SearchTooLong { .. }
                | super::history::HistoryRequestError::NameTooLong { .. },
            ) => RefusalKind::TooLong,
            _ => RefusalKind::Invalid,
        }
    }
}

/// What a browser's `question_answer` for `ask` holds: a reply in the user's own words, or the
/// form as sent, its numbers turned into the same drafts the window would hold.
#[derive(Clone, Debug, PartialEq)]
pub enum PageAnswer {
    /// "Answer in your own words": already the outcome.
    Replied(Outcome),
    /// The form sent as it is: the request's book makes it an outcome ([`Outcome::submitted`]).
    Form(Answers),
}

/// Reads a browser's `question_answer` for `ask` (see [`PageAnswer`]).
pub fn page_answer(ask: &Ask, body: &PageForm) -> Result<PageAnswer, BrowserError> {
    if let Some(response) = body.response.given().filter(|r| !r.trim().is_empty()) {
        limits::check_reply(response)?;
        return Ok(PageAnswer::Replied(Outcome::replied(ask, response)));
    }
    let drafts = picked_drafts(ask, &body.picks)?;
    Ok(PageAnswer::Form(build_answers(ask, &drafts)?))
}

/// The outcome of a browser's `question_answer` for `ask`: the numbers become the same drafts
/// the window would hold, so the reply is built by the same rules ([`Outcome::submitted`]: an
/// empty form is not an answer).
pub fn answer_outcome(
    ask: &Ask,
    body: &PageForm,
    mark_skipped: bool,
) -> Result<Outcome, BrowserError> {
    Ok(match page_answer(ask, body)? {
        PageAnswer::Replied(outcome) => outcome,
        PageAnswer::Form(answers) => Outcome::submitted(ask, answers, mark_skipped),
    })
}

/// The picks of a page's answer, `question_clarify` or `question_timed_out`, as drafts, with their
/// texts checked exactly as sent (whatever passes also fits the bridge's message limit).
fn picked_drafts(ask: &Ask, picks: &PagePicks) -> Result<Vec<Draft>, BrowserError> {
    let none = Map::new();
    let answers = match &picks.answers {
        Sent::Absent => &none,
        Sent::Given(answers) => answers,
        Sent::Other(_) => return Err(BrowserError::AnswersNotObject),
    };
    // Notes that are not an object are no notes.
    let drafts = drafts_from_numbers(ask, answers, picks.notes.given())?;
    let texts = drafts
        .iter()
        .enumerate()
        .map(|(question, draft)| (question, Some(draft.other_text()), Some(draft.notes())));
    limits::check_form_texts(texts)?;
    Ok(drafts)
}

/// The outcome of a page's "Chat about this": the dialog's clarify text, built here from the
/// picks by the same rules as in the window.
pub fn clarify_outcome(ask: &Ask, body: &PageForm) -> Result<Outcome, BrowserError> {
    Ok(Outcome::clarify(ask, &picked_drafts(ask, &body.picks)?))
}

/// The outcome of a page whose countdown ran out after `waited_secs` (the time askpane gave,
/// not the page's word): what the user picked in this showing, the questions still being typed in
/// (each a question index), and what was filled in and never confirmed (`unconfirmed`), as
/// [`Outcome::at_deadline`] tells it.
pub fn timed_out_outcome(
    ask: &Ask,
    body: &PageTimedOut,
    waited_secs: u64,
) -> Result<Outcome, BrowserError> {
    let drafts = picked_drafts(ask, &body.form.picks)?;
    let typing: Vec<usize> = match &body.typing {
        Sent::Absent => Vec::new(),
        Sent::Given(items) => items
            .iter()
            .map(|item| {
                item.given()
                    .and_then(|&index| usize::try_from(index).ok())
                    .filter(|&index| index < ask.questions().len())
                    .ok_or_else(|| BrowserError::NoSuchQuestion(item.as_sent()))
            })
            .collect::<Result<_, _>>()?,
        Sent::Other(other) => return Err(BrowserError::NoSuchQuestion(other.to_string())),
    };
    let (prefill, prefilled) = match &body.unconfirmed {
        Sent::Absent => (Prefill::Preset, Vec::new()),
        Sent::Given(unconfirmed) => {
            let prefill = unconfirmed.from.given().copied().ok_or_else(|| {
                BrowserError::BadPrefill(
                    unconfirmed.from.other_text().unwrap_or_default().to_owned(),
                )
            })?;
            (prefill, picked_drafts(ask, &unconfirmed.picks)?)
        }
        Sent::Other(_) => return Err(BrowserError::AnswersNotObject),
    };
    let at = AtDeadline {
        finished: &drafts,
        typing: &typing,
        prefilled: &prefilled,
        prefill,
        waited_secs,
    };
    Ok(Outcome::at_deadline(ask, &at))
}

/// Answers by number (and notes by index) → one draft per question, each number checked against
/// the options offered.
pub fn drafts_from_numbers(
    ask: &Ask,
    answers: &Map<String, Value>,
    notes: Option<&Map<String, Value>>,
) -> Result<Vec<Draft>, BrowserError> {
    let mut drafts = vec![Draft::default(); ask.questions().len()];
    for (key, value) in answers {
        let index = question_index(ask, key)?;
        let text = value.as_str().ok_or(BrowserError::AnswersNotObject)?;
        let (Some(question), Some(draft)) = (ask.questions().get(index), drafts.get_mut(index))
        else {
            return Err(BrowserError::NoSuchQuestion(key.clone()));
        };
        let (numbers, other) = match text.split_once("other:") {
            Some((numbers, other)) => (numbers, Some(other)),
            None => (text, None),
        };
        let numbers: Vec<&str> =
            numbers.split(',').map(str::trim).filter(|number| !number.is_empty()).collect();
        if !question.multi_select() && numbers.len() + usize::from(other.is_some()) > 1 {
            return Err(BrowserError::SeveralOnSingle { question: index });
        }
        for number in numbers {
            let option = number
                .parse::<usize>()
                .ok()
                .filter(|&n| n.to_string() == number && (1..=question.options().len()).contains(&n))
                .ok_or_else(|| BrowserError::NoSuchOption {
                    question: index,
                    option: number.to_owned(),
                })?;
            if !draft.is_chosen(Pick::Option(option - 1)) {
                draft.pick(question, Pick::Option(option - 1));
            }
        }
        if let Some(other) = other {
            draft.set_other_text(question, other.to_owned());
            if !draft.is_chosen(Pick::Other) {
                draft.pick(question, Pick::Other);
            }
        }
    }
    for (key, value) in notes.into_iter().flatten() {
        let index = question_index(ask, key)?;
        let text = value.as_str().ok_or(BrowserError::AnswersNotObject)?;
        if let Some(draft) = drafts.get_mut(index) {
            draft.set_notes(text.to_owned());
        }
    }
    Ok(drafts)
}

fn question_index(ask: &Ask, key: &str) -> Result<usize, BrowserError> {
    // Exactly the decimal index: "+0" or "00" is not a question number.
    key.parse::<usize>()
        .ok()
        .filter(|&index| index.to_string() == key && index < ask.questions().len())
        .ok_or_else(|| BrowserError::NoSuchQuestion(key.to_owned()))
}

/// The outcome of a browser's `question_declined`.
pub fn declined_outcome(stop: bool, message: &str) -> Outcome {
    // The browser sends the whole text the model should read (its state built it); an empty one
    // gets the default wording.
    match (stop, message.trim().is_empty()) {
        (false, true) => Outcome::declined(""),
        (true, true) => Outcome::stopped(""),
        (false, false) => Outcome::Declined { message: message.to_owned() },
        (true, false) => Outcome::Stopped { message: message.to_owned() },
    }
}

/// The user's own words in a decline message the page built ("The user declined … and said:
/// WORDS"), to put back in the decline box when askpane refused it; the whole message when it
/// is not in askpane's wording, and nothing when it is the wording without words.
pub fn decline_words(message: &str) -> String {
    // The wording is built around a marker no one types, then matched around the message.
    const MARKER: &str = "\u{1}";
    let template = match Outcome::declined(MARKER) {
        Outcome::Declined { message } => message,
        _ => return message.to_owned(),
    };
    if Outcome::declined("").deny_message().as_deref() == Some(message) {
        return String::new();
    }
    match template.split_once(MARKER) {
        Some((before, after)) => message
            .strip_prefix(before)
            .and_then(|rest| rest.strip_suffix(after))
            .unwrap_or(message)
            .to_owned(),
        None => message.to_owned(),
    }
}

/// What a page asks of the agent session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionMessage {
    /// Allow once or always (with a rule the card offers), deny with the message the model
    /// reads (the page's state built it), or hand the call back.
    Decide {
        request_id: String,
        decision: PermissionDecision,
    },
    Prompt(String),
    Stop,
    /// End a session an inbox client hosts (`session_end`), as the native "End session" does.
    End,
    /// The entries before number `before` (`session_older`, issue 24), for this page only.
    Older {
        before: usize,
    },
}

/// `permission_request`: a tool the agent wants to run, with who asked (the keys of
/// `user_question`, but only the project of its groups).
pub fn permission_request<U>(request: &PermissionRequest, provenance: &Provenance) -> ToPage<U> {
    let who = WhoAsked { session: None, subagent: None, ..WhoAsked::of(provenance) };
    ToPage::PermissionRequest(PermissionCard { request: request.clone(), who })
}

/// `permission_withdrawn`: the card goes from every page.
pub fn permission_withdrawn<U>(request_id: &str, end: PermissionEnd) -> ToPage<U> {
    ToPage::PermissionWithdrawn { request_id: request_id.to_owned(), reason: end.into() }
}

/// `permissions_open`: after a page (re)connects, the permission cards still waiting; any other
/// card the page shows was decided or withdrawn while it was away.
pub fn permissions_open<'a, U>(request_ids: impl Iterator<Item = &'a str>) -> ToPage<U> {
    ToPage::PermissionsOpen { request_ids: request_ids.map(str::to_owned).collect() }
}

/// `session_gone`: a hosted session's host went away; the session leaves every page.
pub fn session_gone<U>(session: SessionKey) -> ToPage<U> {
    ToPage::SessionGone { session }
}

/// `sessions_open`: after a page (re)connects, the hosted sessions still shown.
pub fn sessions_open<U>(keys: impl Iterator<Item = SessionKey>) -> ToPage<U> {
    let sessions = keys
        .filter_map(|key| match key {
            SessionKey::Hosted(number) => Some(number),
            SessionKey::Own => None,
        })
        .collect();
    ToPage::SessionsOpen { sessions }
}

/// `history_kept`: this bridge keeps history (a page may show History).
pub fn history_kept<U>() -> ToPage<U> {
    ToPage::HistoryKept
}

/// `history_page`: the answer to a `history_request`.
pub fn history_page<U>(page: &HistoryPage) -> ToPage<U> {
    ToPage::HistoryPage(page.clone())
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wire_tests;
