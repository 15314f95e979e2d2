//! The browser protocol of `--ui web`: the seed web messages, and the few more a bridge needs.
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

use serde_json::{Map, Value, json};

use super::answer::{Answers, Draft, Pick, build_answers};
use super::envelope::{Envelope, ReplyFormat};
use super::limits::{self, LimitError, MAX_TIMEOUT_EXTENSION_SECS};
use super::origin::{Provenance, SessionKey};
use super::outcome::{AtDeadline, Outcome, OutcomeKind, Prefill};
use super::question::Ask;
use super::stream::{PermissionDecision, PermissionRequest};

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
    let request = message.get("agent_request")?;
    let envelope = super::parse_message(request).ok()?.envelope;
    matches!(envelope, Envelope::CodexServer { .. }).then_some(envelope)
}

/// `user_question`: a question for the browser.
pub fn user_question(
    tool_use_id: &str,
    ask: &Ask,
    timestamp: &str,
    extras: &QuestionExtras,
) -> Value {
    let questions = ask.input().get("questions").cloned().unwrap_or(Value::Array(Vec::new()));
    let mut message = json!({"type": "user_question", "tool_use_id": tool_use_id,
        "questions": questions, "timestamp": timestamp, "source": extras.provenance.label(),
        "warnings": extras.warnings});
    if let Some(object) = message.as_object_mut() {
        let from = &extras.provenance;
        object.insert("agent".into(), json!(from.source));
        for (key, value) in
            [("project", &from.project), ("session", &from.session), ("subagent", &from.subagent)]
        {
            if let Some(value) = value {
                object.insert(key.into(), json!(value));
            }
        }
        if let Some(secs) = extras.timeout_secs {
            object.insert("timeout_secs".into(), json!(secs));
        }
        if !extras.selected.is_empty() {
            object.insert("selected".into(), Value::Object(extras.selected.clone()));
        }
        if extras.mark_skipped {
            object.insert("mark_skipped".into(), Value::Bool(true));
        }
        if let Some(format) = extras.reply_format
            && let Ok(format) = serde_json::to_value(super::inbox::Format::from(format))
        {
            object.insert("reply_format".into(), format);
        }
        if let Some(request) = &extras.agent_request {
            object.insert("agent_request".into(), request.clone());
        }
    }
    message
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

/// The reply shape a `user_question` names ([`QuestionExtras::reply_format`]), if any.
pub fn question_reply_format(message: &Value) -> Option<ReplyFormat> {
    let format = message.get("reply_format")?;
    serde_json::from_value::<super::inbox::Format>(format.clone()).ok().map(ReplyFormat::from)
}

/// Who asked a `user_question`, as the page shows it: the bridge's label, and the project,
/// session and subagent when the message names them.
pub fn question_provenance(message: &Value) -> Provenance {
    let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_owned);
    let label = text("source");
    let mut provenance = match text("agent") {
        // `source` is `agent · detail`: the detail is what follows the agent.
        Some(agent) => {
            let detail =
                label.as_deref().and_then(|label| label.strip_prefix(&agent)?.strip_prefix(" · "));
            Provenance::new(agent.clone(), detail.map(str::to_owned))
        }
        None => Provenance::new("askpane", label),
    }
    .with_project(text("project"));
    provenance.session = text("session");
    provenance.subagent = text("subagent");
    provenance
}

/// `question_withdrawn`: the question is gone; the browser drops it. `reason` is how it ended
/// (an [`Outcome::kind`]: `answered` in another tab, `withdrawn` by the agent, …).
pub fn question_withdrawn(tool_use_id: &str, reason: OutcomeKind) -> Value {
    json!({"type": "question_withdrawn", "tool_use_id": tool_use_id, "reason": reason})
}

/// `answer_received`: the bridge took the page's answer (or decline); `outcome` is its kind.
pub fn answer_received(tool_use_id: &str, outcome: OutcomeKind) -> Value {
    json!({"type": "answer_received", "tool_use_id": tool_use_id, "outcome": outcome})
}

/// `timeout_changed`: another tab paused (`None`) or extended a question's time; the seconds
/// left now.
pub fn timeout_changed(tool_use_id: &str, timeout_secs: Option<u64>) -> Value {
    json!({"type": "timeout_changed", "tool_use_id": tool_use_id, "timeout_secs": timeout_secs})
}

/// `error`: why a browser's message was refused. `kind` tells the page what to do with the
/// answer it is holding: `not_open` (the question ended; nothing to fix), `too_long` (shorten
/// `field`, on question `question` when it has one), `invalid` (anything else).
pub fn error_message(error: &BrowserError, tool_use_id: Option<&Value>) -> Value {
    let mut message = json!({"type": "error", "message": error.to_string(),
        "tool_use_id": tool_use_id, "kind": error.kind()});
    if let (BrowserError::Limit(limit), Some(object)) = (error, message.as_object_mut()) {
        let field = limit.field();
        object.insert("field".into(), json!(field.name()));
        if let Some(question) = field.question() {
            object.insert("question".into(), json!(question));
        }
    }
    // Issue 11: the page's History waits for its answer; this one tells it which request failed.
    if let (BrowserError::History(history), Some(object)) = (error, message.as_object_mut()) {
        object.insert("request".into(), json!(super::history::HISTORY_REQUEST));
        if let Some(field) = history.field() {
            object.insert("field".into(), json!(field));
        }
    }
    message
}

/// The `error` for a page's message `refused`, with `error`: as [`error_message`], and naming
/// the request a page waits on when it was one (issue 24: a `session_older`, whose "Show
/// earlier" waits for its answer).
pub fn refusal(error: &BrowserError, refused: &Value) -> Value {
    let mut message = error_message(error, refused.get("tool_use_id"));
    if refused.get("type").and_then(Value::as_str) == Some(SESSION_OLDER)
        && let Some(object) = message.as_object_mut()
    {
        object.insert("request".into(), json!(SESSION_OLDER));
    }
    message
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

/// The browser message for a timeout change: `timeout_paused` or `timeout_extended`.
pub fn timeout_change_message(tool_use_id: &str, change: TimeoutChange) -> Value {
    match change {
        TimeoutChange::Paused => json!({"type": "timeout_paused", "tool_use_id": tool_use_id}),
        TimeoutChange::Extended { secs } => {
            json!({"type": "timeout_extended", "tool_use_id": tool_use_id, "secs": secs})
        }
    }
}

/// What a browser sent, recognised but not yet checked against its question.
#[derive(Clone, Debug, PartialEq)]
pub enum BrowserMessage {
    Answer {
        tool_use_id: String,
        body: Map<String, Value>,
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
        body: Map<String, Value>,
    },
    /// The page's countdown ran out: what was picked by number, and `typing`, the questions
    /// whose box was still being typed in.
    TimedOut {
        tool_use_id: String,
        body: Map<String, Value>,
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

/// The page's word that it showed question `tool_use_id` (see [`BrowserMessage::Seen`]).
pub fn question_seen(tool_use_id: &str) -> Value {
    json!({"type": "question_seen", "tool_use_id": tool_use_id})
}

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
    #[error("a permission decision must be allow or deny, not {0:?}")]
    BadDecision(String),
    #[error("a prompt must have some text")]
    EmptyPrompt,
    #[error("no tool permission is waiting with request_id {0:?}")]
    UnknownPermission(String),
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
    /// How the page should take it: `not_open`, `too_long` or `invalid` (see [`error_message`]).
    pub fn kind(&self) -> &'static str {
        match self {
            BrowserError::UnknownQuestion(_)
            | BrowserError::UnknownPermission(_)
            | BrowserError::UnknownSession(_) => "not_open",
            BrowserError::Limit(_)
            | BrowserError::History(
                super::history::HistoryRequestError::SearchTooLong { .. }
                | super::history::HistoryRequestError::NameTooLong { .. },
            ) => "too_long",
            _ => "invalid",
        }
    }
}

/// Recognises a browser message.
pub fn parse_browser_message(value: &Value) -> Result<BrowserMessage, BrowserError> {
    let object = value.as_object().ok_or(BrowserError::NotObject)?;
    let kind = object.get("type").and_then(Value::as_str).unwrap_or_default();
    let tool_use_id = || {
        object
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(BrowserError::MissingId)
    };
    match kind {
        "question_answer" => {
            Ok(BrowserMessage::Answer { tool_use_id: tool_use_id()?, body: object.clone() })
        }
        "question_declined" => {
            let outcome = object.get("outcome").and_then(Value::as_str).unwrap_or("declined");
            let stop = match outcome {
                "declined" => false,
                "stopped" => true,
                other => return Err(BrowserError::BadDecline(other.to_owned())),
            };
            let message = object.get("message").and_then(Value::as_str).unwrap_or_default();
            limits::check_decline_wire_message(message)?;
            Ok(BrowserMessage::Declined {
                tool_use_id: tool_use_id()?,
                stop,
                message: message.to_owned(),
            })
        }
        "question_clarify" => {
            Ok(BrowserMessage::Clarify { tool_use_id: tool_use_id()?, body: object.clone() })
        }
        "question_timed_out" => {
            Ok(BrowserMessage::TimedOut { tool_use_id: tool_use_id()?, body: object.clone() })
        }
        "question_seen" => Ok(BrowserMessage::Seen { tool_use_id: tool_use_id()? }),
        "timeout_paused" => Ok(BrowserMessage::Timeout {
            tool_use_id: tool_use_id()?,
            change: TimeoutChange::Paused,
        }),
        "timeout_extended" => {
            let secs = object.get("secs");
            let change = secs
                .and_then(Value::as_u64)
                .filter(|secs| (1..=MAX_TIMEOUT_EXTENSION_SECS).contains(secs))
                .map(|secs| TimeoutChange::Extended { secs })
                .ok_or_else(|| {
                    BrowserError::BadExtension(secs.map_or("nothing".to_owned(), Value::to_string))
                })?;
            Ok(BrowserMessage::Timeout { tool_use_id: tool_use_id()?, change })
        }
        other => Err(BrowserError::UnknownType(other.to_owned())),
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
pub fn page_answer(ask: &Ask, body: &Map<String, Value>) -> Result<PageAnswer, BrowserError> {
    if let Some(response) =
        body.get("response").and_then(Value::as_str).filter(|r| !r.trim().is_empty())
    {
        limits::check_reply(response)?;
        return Ok(PageAnswer::Replied(Outcome::replied(ask, response)));
    }
    let drafts = picked_drafts(ask, body)?;
    Ok(PageAnswer::Form(build_answers(ask, &drafts)?))
}

/// The outcome of a browser's `question_answer` for `ask`: the numbers become the same drafts
/// the window would hold, so the reply is built by the same rules ([`Outcome::submitted`]: an
/// empty form is not an answer).
pub fn answer_outcome(
    ask: &Ask,
    body: &Map<String, Value>,
    mark_skipped: bool,
) -> Result<Outcome, BrowserError> {
    Ok(match page_answer(ask, body)? {
        PageAnswer::Replied(outcome) => outcome,
        PageAnswer::Form(answers) => Outcome::submitted(ask, answers, mark_skipped),
    })
}

/// The picks of a page's answer, `question_clarify` or `question_timed_out`, as drafts, with their
/// texts checked exactly as sent (whatever passes also fits the bridge's message limit).
fn picked_drafts(ask: &Ask, body: &Map<String, Value>) -> Result<Vec<Draft>, BrowserError> {
    let answers = match body.get("answers") {
        None => Map::new(),
        Some(Value::Object(answers)) => answers.clone(),
        Some(_) => return Err(BrowserError::AnswersNotObject),
    };
    let notes = match body.get("notes") {
        Some(Value::Object(notes)) => Some(notes),
        _ => None,
    };
    let drafts = drafts_from_numbers(ask, &answers, notes)?;
    let texts = drafts
        .iter()
        .enumerate()
        .map(|(question, draft)| (question, Some(draft.other_text()), Some(draft.notes())));
    limits::check_form_texts(texts)?;
    Ok(drafts)
}

/// The outcome of a page's "Chat about this": the dialog's clarify text, built here from the
/// picks by the same rules as in the window.
pub fn clarify_outcome(ask: &Ask, body: &Map<String, Value>) -> Result<Outcome, BrowserError> {
    Ok(Outcome::clarify(ask, &picked_drafts(ask, body)?))
}

/// The outcome of a page whose countdown ran out after `waited_secs` (the time askpane gave,
/// not the page's word): what the user picked in this showing, the questions still being typed in
/// (each a question index), and what was filled in and never confirmed (`unconfirmed`), as
/// [`Outcome::at_deadline`] tells it.
pub fn timed_out_outcome(
    ask: &Ask,
    body: &Map<String, Value>,
    waited_secs: u64,
) -> Result<Outcome, BrowserError> {
    let drafts = picked_drafts(ask, body)?;
    let typing: Vec<usize> = match body.get("typing") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_u64()
                    .and_then(|index| usize::try_from(index).ok())
                    .filter(|&index| index < ask.questions().len())
                    .ok_or_else(|| BrowserError::NoSuchQuestion(item.to_string()))
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(BrowserError::NoSuchQuestion(other.to_string())),
    };
    let (prefill, prefilled) = match body.get("unconfirmed") {
        None => (Prefill::Preset, Vec::new()),
        Some(Value::Object(unconfirmed)) => {
            let from = unconfirmed.get("from").and_then(Value::as_str).unwrap_or_default();
            let prefill = Prefill::from_name(from)
                .ok_or_else(|| BrowserError::BadPrefill(from.to_owned()))?;
            (prefill, picked_drafts(ask, unconfirmed)?)
        }
        Some(_) => return Err(BrowserError::AnswersNotObject),
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

/// What a page needs from the bridge's `error` about the answer it is holding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub tool_use_id: Option<String>,
    pub message: String,
    /// `not_open`, `too_long` or `invalid`.
    pub kind: String,
    /// The question the refused field belongs to, when it belongs to one.
    pub question: Option<usize>,
}

impl Refusal {
    /// Reads an `error` message; `None` for anything else.
    pub fn parse(value: &Value) -> Option<Refusal> {
        (value.get("type")?.as_str()? == "error").then_some(())?;
        let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
        Some(Refusal {
            tool_use_id: text("tool_use_id"),
            message: text("message").unwrap_or_else(|| "refused".to_owned()),
            kind: text("kind").unwrap_or_else(|| "invalid".to_owned()),
            question: value
                .get("question")
                .and_then(Value::as_u64)
                .and_then(|question| usize::try_from(question).ok()),
        })
    }

    /// The question ended before the answer arrived: there is nothing for the user to fix.
    pub fn not_open(&self) -> bool {
        self.kind == "not_open"
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 11: the agent session in the browser (`askpane claude --ui web`)
//
// Server → browser: `session` (the transcript from entry `from` on, and the session's state; a
// page gets the newest entries when it connects, then each change), `permission_request` (a tool the agent
// wants to run), `permission_withdrawn` (decided in some page, or taken back by the agent:
// every page drops the card) and `permissions_open` (after a connect: the cards still waiting). Browser → server: `permission_decision` (`decision` `allow` or
// `deny`, with the user's `message` for a deny), `session_prompt` (`text`: the next user turn)
// and `session_stop` (interrupt the turn).

/// `session`'s type: the transcript as the bridge holds it (the body is the app's
/// `SessionUpdate`, serialized as it is).
pub const SESSION_TYPE: &str = "session";

// Issue 24: a long session never keeps a page out. A page that connects gets each session's
// newest entries (`session` with `from` past 0 when earlier ones are not sent, and `kept_from`
// once the bridge dropped the oldest); it asks for the ones before with `session_older`
// (`before`: the number of the oldest entry it holds, and `session` for a hosted one), one at a
// time, and gets `session_older_entries` (a `session` body with `before`: the entries just
// before it, bounded in count and bytes). A refused `session_older` gets an `error` with
// `"request":"session_older"`.

/// A page's request for the entries before the oldest it holds.
pub const SESSION_OLDER: &str = "session_older";
/// The answer to [`SESSION_OLDER`]: a `session` body whose entries go in front.
pub const SESSION_OLDER_ENTRIES: &str = "session_older_entries";

/// `session_older`: the entries before number `before` of session `key`.
pub fn session_older(key: SessionKey, before: usize) -> Value {
    about_session(json!({"type": SESSION_OLDER, "before": before}), key)
}

/// `permission_request`: a tool the agent wants to run, with who asked (the keys of
/// `user_question`, read back by [`question_provenance`]).
pub fn permission_request(request: &PermissionRequest, provenance: &Provenance) -> Value {
    let mut message = json!({"type": "permission_request", "request": request,
        "source": provenance.label(), "agent": provenance.source});
    if let (Some(object), Some(project)) = (message.as_object_mut(), &provenance.project) {
        object.insert("project".into(), json!(project));
    }
    message
}

/// The request and who asked, from a `permission_request`.
pub fn parse_permission_request(message: &Value) -> Option<(PermissionRequest, Provenance)> {
    let request = serde_json::from_value(message.get("request")?.clone()).ok()?;
    Some((request, question_provenance(message)))
}

/// How a permission card ended, for `permission_withdrawn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionEnd {
    Allowed,
    Denied,
    /// The agent took it back, or askpane ended it.
    Withdrawn,
}

impl PermissionEnd {
    pub fn name(self) -> &'static str {
        match self {
            PermissionEnd::Allowed => "allowed",
            PermissionEnd::Denied => "denied",
            PermissionEnd::Withdrawn => "withdrawn",
        }
    }
}

/// `permission_withdrawn`: the card goes from every page.
pub fn permission_withdrawn(request_id: &str, end: PermissionEnd) -> Value {
    json!({"type": "permission_withdrawn", "request_id": request_id, "reason": end.name()})
}

/// `permissions_open`: after a page (re)connects, the permission cards still waiting; any other
/// card the page shows was decided or withdrawn while it was away.
pub fn permissions_open<'a>(request_ids: impl Iterator<Item = &'a str>) -> Value {
    json!({"type": "permissions_open", "request_ids": request_ids.collect::<Vec<_>>()})
}

/// A page's decision on a permission: `permission_decision`.
pub fn permission_decision(request_id: &str, decision: &PermissionDecision) -> Value {
    match decision {
        PermissionDecision::AllowOnce => {
            json!({"type": "permission_decision", "request_id": request_id, "decision": "allow"})
        }
        PermissionDecision::Deny { message } => json!({"type": "permission_decision",
            "request_id": request_id, "decision": "deny", "message": message}),
    }
}

/// `session_prompt`: the next user turn, typed in a page.
pub fn session_prompt(text: &str) -> Value {
    json!({"type": "session_prompt", "text": text})
}

/// `session_stop`: the page's Stop.
pub fn session_stop() -> Value {
    json!({"type": "session_stop"})
}

/// What a page asks of the agent session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionMessage {
    /// Allow once, or deny with the message the model reads (the page's state built it).
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

// Hosted sessions (`askpane inbox --ui web`): an inbox shows every session its clients host
// (`askpane claude` under the inbox). Each message about one says which in `session` (the
// number askpane gave it); a message without `session` is about the bridge's own session
// (`askpane claude --ui web`), so pages and bridges from before keep working. Server → browser:
// `session` also carries `label` (who runs it) for a hosted one, `session_gone` when its host
// went away, and `sessions_open` after a connect (the hosted sessions still shown: any other
// the page shows went while it was away). Browser → server: `session_prompt` and `session_stop`
// may carry `session`, and `session_end` (with `session`) ends a hosted session.

/// `message` about session `key`: a hosted session's number goes in `session`; the own session
/// is the message as it is.
pub fn about_session(mut message: Value, key: SessionKey) -> Value {
    if let (SessionKey::Hosted(number), Some(object)) = (key, message.as_object_mut()) {
        object.insert("session".into(), json!(number));
    }
    message
}

/// The session a message is about: `session`'s number, or the own session when it has none.
pub fn message_session(value: &Value) -> Result<SessionKey, BrowserError> {
    match value.get("session") {
        None | Some(Value::Null) => Ok(SessionKey::Own),
        Some(number) => number.as_u64().map(SessionKey::Hosted).ok_or(BrowserError::BadSession),
    }
}

/// `session_gone`: a hosted session's host went away; the session leaves every page.
pub fn session_gone(key: SessionKey) -> Value {
    about_session(json!({"type": "session_gone"}), key)
}

/// `sessions_open`: after a page (re)connects, the hosted sessions still shown.
pub fn sessions_open(keys: impl Iterator<Item = SessionKey>) -> Value {
    let numbers: Vec<u64> = keys
        .filter_map(|key| match key {
            SessionKey::Hosted(number) => Some(number),
            SessionKey::Own => None,
        })
        .collect();
    json!({"type": "sessions_open", "sessions": numbers})
}

/// The hosted sessions a `sessions_open` names (a malformed entry is skipped).
pub fn parse_sessions_open(value: &Value) -> Vec<SessionKey> {
    let numbers = value.get("sessions").and_then(Value::as_array);
    numbers.into_iter().flatten().filter_map(Value::as_u64).map(SessionKey::Hosted).collect()
}

/// `session_end`: the page's End session, for a hosted session.
pub fn session_end(key: SessionKey) -> Value {
    about_session(json!({"type": "session_end"}), key)
}

/// Recognises a page's session message: `None` when `value` is not one (it may be a question's),
/// an error when it is one but malformed.
pub fn parse_session_message(value: &Value) -> Option<Result<SessionMessage, BrowserError>> {
    let text = |key: &str| value.get(key).and_then(Value::as_str);
    let message = match value.get("type").and_then(Value::as_str)? {
        "permission_decision" => {
            let Some(request_id) = text("request_id") else {
                return Some(Err(BrowserError::MissingId));
            };
            let decision = match text("decision") {
                Some("allow") => PermissionDecision::AllowOnce,
                Some("deny") => {
                    let message = text("message").unwrap_or_default();
                    if let Err(limit) = limits::check_decline_wire_message(message) {
                        return Some(Err(limit.into()));
                    }
                    PermissionDecision::Deny { message: message.to_owned() }
                }
                other => {
                    return Some(Err(BrowserError::BadDecision(other.unwrap_or("").to_owned())));
                }
            };
            SessionMessage::Decide { request_id: request_id.to_owned(), decision }
        }
        "session_prompt" => match text("text") {
            Some(prompt) if !prompt.trim().is_empty() => SessionMessage::Prompt(prompt.to_owned()),
            _ => return Some(Err(BrowserError::EmptyPrompt)),
        },
        "session_stop" => SessionMessage::Stop,
        "session_end" => SessionMessage::End,
        SESSION_OLDER => {
            let before = value.get("before").and_then(Value::as_u64);
            match before.and_then(|before| usize::try_from(before).ok()) {
                Some(before) => SessionMessage::Older { before },
                None => return Some(Err(BrowserError::BadOlder)),
            }
        }
        _ => return None,
    };
    Some(Ok(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::validate;

    fn ask() -> Ask {
        validate(&json!({"questions": [
            {"question": "Layout?", "header": "Layout", "options": [
                {"label": "Sidebar", "description": "", "preview": "S"}, {"label": "Tabs", "description": ""}]},
            {"question": "Features?", "header": "Features", "multiSelect": true, "options": [
                {"label": "Dark", "description": ""}, {"label": "Search", "description": ""},
                {"label": "Export", "description": ""}]},
        ]}))
        .expect("valid")
        .ask
    }

    /// Issue 24 item 7: a page's empty form is not an answer, by the window's own rule.
    #[test]
    fn an_empty_answer_from_a_page_is_nothing_answered() {
        let ask = ask();
        for answers in [
            json!({}),
            json!({"0": ""}),
            json!({"1": ","}),
            json!({"1": "other:"}),
            json!({"0": "other:   "}),
        ] {
            let body = json!({"answers": answers});
            let outcome = answer_outcome(&ask, body.as_object().expect("object"), false);
            assert_eq!(outcome, Ok(Outcome::nothing_answered()), "{answers}");
        }
        let body = json!({"answers": {}});
        let Ok(Outcome::Answered(skipped)) =
            answer_outcome(&ask, body.as_object().expect("object"), true)
        else {
            panic!("a session that takes skipped is told each question was skipped")
        };
        assert_eq!(skipped.entries().len(), 2);
    }

    /// Issue 24 items 5 and 6: what was filled in and never confirmed crosses the page's wire
    /// and the bridge rebuilds the same outcome: timed out, with it told apart.
    #[test]
    fn an_unconfirmed_prefill_at_a_pages_deadline_round_trips() {
        let ask = ask();
        let mut layout = Draft::default();
        layout.pick(&ask.questions()[0], Pick::Option(1));
        let mut features = Draft::default();
        features.pick(&ask.questions()[1], Pick::Option(0));
        for prefill in [Prefill::Preset, Prefill::SavedDraft] {
            let finished = [layout.clone(), Draft::default()];
            let prefilled = [Draft::default(), features.clone()];
            let at = AtDeadline {
                finished: &finished,
                typing: &[],
                prefilled: &prefilled,
                prefill,
                waited_secs: 30,
            };
            let outcome = Outcome::at_deadline(&ask, &at);
            let Outcome::TimedOut(timed_out) = &outcome else { panic!("{outcome:?}") };
            assert!(timed_out.unconfirmed.is_some());
            let sent =
                Envelope::SeedWeb { tool_use_id: "t1".into() }.reply(&outcome).expect("sent");
            assert_eq!(sent["unconfirmed"]["from"], prefill.name());
            assert_eq!(sent["unconfirmed"]["answers"], json!({"1": "1"}));
            let body = sent.as_object().expect("object");
            assert_eq!(timed_out_outcome(&ask, body, 30), Ok(outcome.clone()));
        }
        let bad = json!({"answers": {}, "unconfirmed": {"from": "agent", "answers": {}}});
        assert_eq!(
            timed_out_outcome(&ask, bad.as_object().expect("object"), 30),
            Err(BrowserError::BadPrefill("agent".into()))
        );
    }

    #[test]
    fn the_index_form_round_trips_through_the_same_rules() {
        let ask = ask();
        let body = json!({"type": "question_answer", "tool_use_id": "t1",
            "answers": {"0": "1", "1": "1,3,other:Sync, offline"}, "notes": {"0": "narrow"}});
        let BrowserMessage::Answer { body, .. } = parse_browser_message(&body).expect("parsed")
        else {
            panic!("an answer")
        };
        let outcome = answer_outcome(&ask, &body, false).expect("fits");
        let Outcome::Answered(answers) = &outcome else { panic!("answered") };
        assert_eq!(
            Value::Object(answers.answers_json()),
            json!({"Layout?": "Sidebar", "Features?": "Dark, Export, \"Sync, offline\""})
        );
        assert_eq!(
            Value::Object(answers.annotations_json()),
            json!({"Layout?": {"notes": "narrow", "preview": "S"}})
        );
        // And back: the seed reply of that outcome is the same numbers.
        let reply =
            Envelope::SeedWeb { tool_use_id: "t1".into() }.reply(&outcome).expect("a reply");
        assert_eq!(reply["answers"], json!({"0": "1", "1": "1,3,other:Sync, offline"}));
    }

    #[test]
    fn a_message_names_its_hosted_session_and_none_means_the_own() {
        let hosted = SessionKey::Hosted(7);
        let prompt = about_session(session_prompt("go on"), hosted);
        assert_eq!(prompt, json!({"type": "session_prompt", "text": "go on", "session": 7}));
        assert_eq!(message_session(&prompt), Ok(hosted));
        assert_eq!(about_session(session_stop(), SessionKey::Own), session_stop());
        assert_eq!(message_session(&session_stop()), Ok(SessionKey::Own));
        let bad = json!({"type": "session_stop", "session": "7"});
        assert_eq!(message_session(&bad), Err(BrowserError::BadSession));
        assert_eq!(parse_session_message(&session_end(hosted)), Some(Ok(SessionMessage::End)));
        let open = sessions_open([SessionKey::Own, hosted].into_iter());
        assert_eq!(open, json!({"type": "sessions_open", "sessions": [7]}));
        assert_eq!(parse_sessions_open(&open), [hosted]);
    }

    #[test]
    fn decline_words_come_back_out_of_askpanes_wording() {
        for words in ["not now", "  spaced  ", "", "said: twice said: "] {
            let Outcome::Declined { message } = Outcome::declined(words) else { panic!() };
            assert_eq!(decline_words(&message), words.trim(), "{message}");
        }
        assert_eq!(decline_words("a message of my own"), "a message of my own");
    }

    #[test]
    fn timeout_changes_parse_bounded_and_round_trip() {
        let paused = timeout_change_message("t", TimeoutChange::Paused);
        assert_eq!(paused, json!({"type": "timeout_paused", "tool_use_id": "t"}));
        let extended = timeout_change_message("t", TimeoutChange::Extended { secs: 60 });
        for (message, change) in
            [(paused, TimeoutChange::Paused), (extended, TimeoutChange::Extended { secs: 60 })]
        {
            assert_eq!(
                parse_browser_message(&message),
                Ok(BrowserMessage::Timeout { tool_use_id: "t".into(), change })
            );
        }
        let too_much = json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 3601});
        assert_eq!(
            parse_browser_message(&too_much).expect_err("refused").to_string(),
            "`secs` must be a whole number of seconds from 1 to 3600, not 3601"
        );
    }

    #[test]
    fn a_refusal_says_what_to_do_with_the_answer() {
        let limit = BrowserError::Limit(LimitError::NotesTooLong { question: 1, length: 9000 });
        let error = error_message(&limit, Some(&json!("t")));
        assert_eq!(
            error,
            json!({"type": "error", "tool_use_id": "t", "kind": "too_long", "field": "note",
                "question": 1,
                "message": "the note on question 2 is 9000 characters long; the limit is 8192"})
        );
        let refusal = Refusal::parse(&error).expect("an error");
        assert_eq!((refusal.question, refusal.not_open()), (Some(1), false));
        let gone = error_message(&BrowserError::UnknownQuestion("t".into()), None);
        assert!(Refusal::parse(&gone).expect("an error").not_open());
    }

    #[test]
    fn refuses_what_was_not_offered() {
        let ask = ask();
        let outcome = |answers: Value| {
            let body = json!({"answers": answers});
            answer_outcome(&ask, body.as_object().expect("object"), false)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(outcome(json!({"2": "1"})), "question index \"2\" was not asked");
        assert_eq!(outcome(json!({"0": "3"})), "question 1: option 3 was not offered");
        assert_eq!(outcome(json!({"0": "0"})), "question 1: option 0 was not offered");
        assert_eq!(
            outcome(json!({"0": "1,2"})),
            "question 1 is single-select, but several options were sent"
        );
        assert_eq!(outcome(json!({"1": "x"})), "question 2: option x was not offered");
        assert_eq!(outcome(json!({"00": "1"})), "question index \"00\" was not asked");
        assert_eq!(outcome(json!({"0": "+1"})), "question 1: option +1 was not offered");
        let bad = json!({"type": "question_declined", "tool_use_id": "t", "outcome": "answered"});
        assert_eq!(
            parse_browser_message(&bad).expect_err("refused").to_string(),
            "a decline's outcome must be declined or stopped, not \"answered\""
        );
    }
}

#[cfg(test)]
mod wire_tests;
