//! OpenCode's `question` tool (issue 13) as pure data: its pending question and the events of
//! its server's `/global/event` stream in, askpane's validated [`Ask`] out ([`to_ask`]), and an
//! [`Outcome`] back into the reply OpenCode takes ([`reply`]). No IO: the HTTP side is
//! `transport::opencode`.
//!
//! OpenCode answers a question with `POST /question/{id}/reply` and `{"answers": string[][]}`
//! (one list of labels per question; a typed answer is one more string) and dismisses it with
//! `POST /question/{id}/reject`, after which its model reads only "The user dismissed this
//! question" and the turn stops. Shapes: the fixtures in `tests/fixtures/opencode/`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::outcome::Outcome;
use super::validate::{Invalid, Validated, validate};

/// The agent's name in a request's provenance (`Provenance::source`).
pub const SOURCE: &str = "opencode";

/// One pending question request: a `question.asked` event's `properties`, or an item of
/// `GET /question`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QuestionRequest {
    /// `que_…`: the id the reply and the `question.replied` event name.
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub questions: Vec<QuestionInfo>,
}

/// One question as OpenCode sends it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QuestionInfo {
    pub question: String,
    #[serde(default)]
    pub header: String,
    pub options: Vec<QuestionOption>,
    /// Several answers allowed.
    #[serde(default)]
    pub multiple: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// A question converted: the message askpane's inbox takes (its browser protocol's
/// `user_question`, naming who asked), and the questions as validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Converted {
    pub message: Value,
    pub validated: Validated,
}

/// OpenCode's question, asked in `directory`, as askpane's validated questions and the message
/// that carries them to the inbox: `multiple` is a multi-select; the request id is the
/// message's `tool_use_id` (the same question sent again is shown once); who asked is
/// `opencode · <directory> · <session>`. OpenCode never sends `custom` on (it strips it), and
/// its answers may be any text, so Other is always offered, as OpenCode's own TUI does.
pub fn to_ask(request: &QuestionRequest, directory: &str) -> Result<Converted, Invalid> {
    let questions: Vec<Value> = request
        .questions
        .iter()
        .map(|question| {
            let options: Vec<Value> = question
                .options
                .iter()
                .map(|option| json!({"label": option.label, "description": option.description}))
                .collect();
            json!({"question": question.question, "header": question.header,
                "options": options, "multiSelect": question.multiple})
        })
        .collect();
    let validated = validate(&json!({ "questions": questions }))?;
    let project = directory.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    let message = json!({"type": "user_question", "tool_use_id": request.id,
        "questions": questions, "timestamp": "",
        "agent": SOURCE, "source": format!("{SOURCE} · {directory} · {}", request.session_id),
        "project": project, "session": request.session_id});
    Ok(Converted { message, validated })
}

/// What goes back to OpenCode for one question request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Reply {
    /// `POST /question/{id}/reply` with `{"answers": …}`: per question, the labels chosen (an
    /// empty list: the model reads "Unanswered").
    Reply { answers: Vec<Vec<String>> },
    /// `POST /question/{id}/reject`: the model reads "The user dismissed this question" and the
    /// turn stops.
    Reject,
}

impl Reply {
    /// The body of `POST /question/{id}/reply`; `None` for a reject (it has no body).
    pub fn body(&self) -> Option<Value> {
        match self {
            Reply::Reply { answers } => Some(json!({ "answers": answers })),
            Reply::Reject => None,
        }
    }
}

/// The reply OpenCode gets for `outcome`; `None` when nothing is to be sent (OpenCode took the
/// question back itself). An answer sends each question's labels, then its Other text, then a
/// note as `note: …` (OpenCode has no notes: its model reads the items joined by ", "). A
/// decline or a stop rejects it: OpenCode passes no message on, so the model reads only "The
/// user dismissed this question" and its turn stops. Every other ending lets the model go on
/// and read what happened, as the first question's answer (the others "Unanswered"): a reply in
/// the user's own words, "Chat about this", no human available, a timeout, an invalid question.
pub fn reply(outcome: &Outcome) -> Option<Reply> {
    match outcome {
        Outcome::Withdrawn => None,
        Outcome::Declined { .. } | Outcome::Stopped { .. } => Some(Reply::Reject),
        Outcome::Answered(answers) => {
            let input = answers.updated_input();
            let questions = input.get("questions").and_then(Value::as_array);
            let count = questions.map_or(0, Vec::len);
            let mut lists = vec![Vec::new(); count];
            for entry in answers.entries() {
                let Some(list) = lists.get_mut(entry.index) else { continue };
                let options = questions
                    .and_then(|questions| questions.get(entry.index))
                    .and_then(|question| question.get("options"))
                    .and_then(Value::as_array);
                for &picked in &entry.picked {
                    let label = options
                        .and_then(|options| options.get(picked))
                        .and_then(|option| option.get("label"))
                        .and_then(Value::as_str);
                    list.extend(label.map(str::to_owned));
                }
                // A question marked skipped carries its text as the answer, not a pick.
                if entry.picked.is_empty()
                    && entry.other.is_none()
                    && let (Some(answer), Some(_)) = (&entry.answer, entry.unanswered)
                {
                    list.push(answer.clone());
                }
                list.extend(entry.other.clone());
                list.extend(entry.notes.as_ref().map(|notes| format!("note: {notes}")));
            }
            Some(Reply::Reply { answers: lists })
        }
        Outcome::Replied(reply) => Some(first_answer(reply.text().to_owned())),
        other => Some(first_answer(other.deny_message().unwrap_or_default())),
    }
}

/// `text` as the first question's answer; the others are left out, which OpenCode's model reads
/// as "Unanswered".
fn first_answer(text: String) -> Reply {
    Reply::Reply { answers: vec![vec![text]] }
}

/// What one frame of `/global/event` means to askpane.
#[derive(Clone, Debug, PartialEq)]
pub enum Happening {
    /// A question was asked in `directory`.
    Asked { directory: String, request: QuestionRequest },
    /// The question `request_id` is no longer pending: answered or dismissed elsewhere (the
    /// TUI, another client).
    Settled { directory: String, request_id: String },
    /// The session went idle or failed (an abort): its questions will never reach the model,
    /// though OpenCode still lists them.
    SessionEnded { directory: String, session_id: String },
    /// Anything else (heartbeats, messages, parts): nothing to do.
    Other,
}

/// Reads one `data:` payload of `/global/event`: `{"directory", "payload": {"type",
/// "properties"}}`. `Err` says why a frame could not be read (it is skipped).
pub fn global_event(data: &str) -> Result<Happening, String> {
    let frame: Value = serde_json::from_str(data).map_err(|error| format!("not JSON: {error}"))?;
    let directory = frame.get("directory").and_then(Value::as_str).unwrap_or_default().to_owned();
    let payload = frame.get("payload").unwrap_or(&Value::Null);
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or_default();
    let properties = payload.get("properties").cloned().unwrap_or(Value::Null);
    let text = |key: &str| properties.get(key).and_then(Value::as_str).map(str::to_owned);
    match kind {
        "question.asked" => {
            let request = serde_json::from_value(properties)
                .map_err(|error| format!("a question.asked that is not a question: {error}"))?;
            Ok(Happening::Asked { directory, request })
        }
        "question.replied" | "question.rejected" => match text("requestID") {
            Some(request_id) => Ok(Happening::Settled { directory, request_id }),
            None => Err(format!("a {kind} without requestID")),
        },
        "session.idle" | "session.error" => match text("sessionID") {
            Some(session_id) => Ok(Happening::SessionEnded { directory, session_id }),
            // A session.error not tied to a session (a provider error) ends nothing.
            None => Ok(Happening::Other),
        },
        _ => Ok(Happening::Other),
    }
}

/// The pending questions of `GET /question`.
pub fn pending(body: &Value) -> Result<Vec<QuestionRequest>, String> {
    let items = body.as_array().ok_or("GET /question did not return a list")?;
    // One broken item does not hide the others.
    Ok(items.iter().filter_map(|item| serde_json::from_value(item.clone()).ok()).collect())
}

/// The project directories of `GET /experimental/session` (each session's `directory`), each
/// once.
pub fn session_directories(body: &Value) -> Vec<String> {
    let mut directories: Vec<String> = Vec::new();
    for session in body.as_array().into_iter().flatten() {
        if let Some(directory) = session.get("directory").and_then(Value::as_str)
            && !directories.iter().any(|known| known == directory)
        {
            directories.push(directory.to_owned());
        }
    }
    directories
}
