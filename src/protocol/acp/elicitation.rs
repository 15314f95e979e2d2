//! `elicitation/create` → what askpane shows, and the person's answer → the reply the agent maps
//! back (issue 28; the captures and the table in `tests/fixtures/acp/`, claude-agent-acp 0.100.0).
//!
//! A form shaped like Claude's AskUserQuestion (every property `question_<i>`, a string with
//! `oneOf` or an array with `items.anyOf`, each with an optional `question_<i>_custom` string) is
//! shown as the real question groups, through [`crate::protocol::validate`] like every other
//! agent's questions: radio or checkbox options with their descriptions, Other, and the
//! previews the adapter passes in `_meta["_claude/askUserQuestionOption"].preview`. Its answer
//! is written as the adapter reads it back into Claude Code's own `answers`/`annotations`:
//! - single-select, an option picked: `question_<i>` = the label, the note in `_custom` (it
//!   becomes `annotations[q].notes`);
//! - single-select answered with Other: `question_<i>` = `""`, the text in `_custom` (the
//!   adapter takes a custom text as the answer when nothing was picked);
//! - multi-select: `question_<i>` = the picked labels, Other's text in `_custom` (appended as
//!   one more item).
//!
//! The ACP form has no note box of its own besides `_custom`: a note typed beside an Other
//! answer (or beside a multi-select) is added to the same `_custom` text on a new line, so no
//! typed word is lost, and the model reads it as part of that answer.
//!
//! Any other schema is a generic [`Form`]; `mode: "url"` is a link the person may open.

use serde_json::{Map, Value, json};

use super::form::{Form, FormError};
use super::{entries, text};
use crate::protocol::Outcome;
use crate::protocol::answer::Answers;
use crate::protocol::question::Ask;
use crate::protocol::validate::validate;

/// Where the adapter puts an option's preview.
const PREVIEW_META: &str = "_claude/askUserQuestionOption";

/// The message claude-agent-acp sends when a form holds several questions (each question's text
/// is then its field's `description`).
pub const SEVERAL_QUESTIONS: &str = "Please answer the following questions.";

/// A Claude-shaped form as askpane questions, with the field keys to answer each in.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionForm {
    pub ask: Ask,
    /// Per question, in order: its field key, and its `_custom` field's key when it has one.
    pub keys: Vec<(String, Option<String>)>,
}

/// What an `elicitation/create` asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Asked {
    Questions(QuestionForm),
    Form(Form),
    /// A link the person may open; askpane shows it and never opens it itself.
    Url {
        url: String,
        elicitation_id: Option<String>,
    },
}

/// One `elicitation/create`.
#[derive(Clone, Debug, PartialEq)]
pub struct Elicitation {
    /// `sessionId` (session scope), absent for a request-scoped one.
    pub session_id: Option<String>,
    /// The tool call it belongs to: withdrawn with it.
    pub tool_call_id: Option<String>,
    pub message: String,
    pub asked: Asked,
}

/// Why an `elicitation/create` cannot be shown. askpane answers it with a JSON-RPC error
/// (`INVALID_PARAMS`), never `decline`: the agent must not read it as the person's refusal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ElicitationError {
    #[error("unknown elicitation mode `{0}`")]
    Mode(String),
    #[error("a url elicitation without a url")]
    NoUrl,
    #[error(transparent)]
    Form(#[from] FormError),
}

/// Reads `elicitation/create`'s params.
pub fn parse(params: &Value) -> Result<Elicitation, ElicitationError> {
    let message = text(params, "message").unwrap_or_default();
    let asked = match params.get("mode").and_then(Value::as_str).unwrap_or("form") {
        "url" => Asked::Url {
            url: text(params, "url").ok_or(ElicitationError::NoUrl)?,
            elicitation_id: text(params, "elicitationId"),
        },
        "form" => {
            let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
            match question_form(schema, &message) {
                Some(questions) => Asked::Questions(questions),
                None => Asked::Form(Form::parse(schema)?),
            }
        }
        other => return Err(ElicitationError::Mode(other.to_owned())),
    };
    Ok(Elicitation {
        session_id: text(params, "sessionId"),
        tool_call_id: text(params, "toolCallId"),
        message,
        asked,
    })
}

/// The question number of a `question_<i>` key.
fn question_number(key: &str) -> Option<usize> {
    let digits = key.strip_prefix("question_")?;
    match digits.bytes().all(|byte| byte.is_ascii_digit()) {
        true => digits.parse().ok(),
        false => None,
    }
}

/// The options of a question field: `oneOf` (single) or `items.anyOf` (multi).
fn options(property: &Value) -> Option<(Vec<Value>, bool)> {
    let (listed, multi) = match property.get("type").and_then(Value::as_str)? {
        "string" => (property.get("oneOf")?, false),
        "array" => (property.pointer("/items/anyOf")?, true),
        _ => return None,
    };
    let options = listed.as_array()?.iter().map(|option| {
        let label = text(option, "const")?;
        let mut choice = json!({
            "label": label,
            "description": text(option, "description").unwrap_or_default(),
        });
        let preview =
            option.pointer(&format!("/_meta/{}/preview", PREVIEW_META.replace('/', "~1")));
        if let (Some(preview), Some(object)) =
            (preview.and_then(Value::as_str), choice.as_object_mut())
        {
            object.insert("preview".into(), Value::String(preview.to_owned()));
        }
        Some(choice)
    });
    Some((options.collect::<Option<Vec<Value>>>()?, multi))
}

/// The schema as Claude's questions, when it is one of the adapter's question forms: every
/// property is `question_<i>` with options or `question_<i>_custom` text, the questions are
/// numbered 0.. without a gap, and they pass askpane's own validation.
fn question_form(schema: &Value, message: &str) -> Option<QuestionForm> {
    let mut questions: Vec<(usize, String, Value)> = Vec::new();
    let mut customs: Vec<(usize, String)> = Vec::new();
    for (key, property) in entries(schema.get("properties")) {
        if let Some(number) = key.strip_suffix("_custom").and_then(question_number) {
            if property.get("type").and_then(Value::as_str) != Some("string") {
                return None;
            }
            customs.push((number, key.clone()));
            continue;
        }
        let number = question_number(key)?;
        let (options, multi) = options(property)?;
        let question = json!({
            "question": text(property, "description").unwrap_or_default(),
            "header": text(property, "title").unwrap_or_default(),
            "options": options,
            "multiSelect": multi,
        });
        questions.push((number, key.clone(), question));
    }
    questions.sort_by_key(|(number, _, _)| *number);
    let numbered = questions.iter().enumerate().all(|(at, (number, _, _))| at == *number);
    if questions.is_empty() || !numbered || customs.iter().any(|(n, _)| *n >= questions.len()) {
        return None;
    }
    // One question: its text is the message, and its field has no description.
    if let [(_, _, question)] = questions.as_mut_slice()
        && question.get("question").and_then(Value::as_str) == Some("")
        && let Some(object) = question.as_object_mut()
    {
        object.insert("question".into(), Value::String(message.to_owned()));
    }
    let keys = questions
        .iter()
        .map(|(number, key, _)| {
            let custom = customs.iter().find(|(n, _)| n == number).map(|(_, key)| key.clone());
            (key.clone(), custom)
        })
        .collect();
    let input: Vec<Value> = questions.into_iter().map(|(_, _, question)| question).collect();
    let validated = validate(&json!({"questions": input})).ok()?;
    Some(QuestionForm { ask: validated.ask, keys })
}

impl QuestionForm {
    /// The reply's `content` for the person's answers (see the module's rules).
    pub fn content(&self, answers: &Answers) -> Map<String, Value> {
        let mut content = Map::new();
        for entry in answers.entries() {
            let (Some(question), Some((key, custom_key))) =
                (self.ask.questions().get(entry.index), self.keys.get(entry.index))
            else {
                continue;
            };
            let labels = entry
                .picked
                .iter()
                .filter_map(|&index| question.options().get(index))
                .map(|choice| Value::String(choice.label().to_owned()));
            let (answer, typed) = match question.multi_select() {
                true => (Value::Array(labels.collect()), vec![entry.other.as_deref()]),
                false => match (labels.into_iter().next(), &entry.other) {
                    (Some(label), None) => (label, vec![]),
                    (_, other) => (Value::String(String::new()), vec![other.as_deref()]),
                },
            };
            let typed: Vec<&str> =
                typed.into_iter().chain([entry.notes.as_deref()]).flatten().collect();
            content.insert(key.clone(), answer);
            if let (Some(custom_key), false) = (custom_key, typed.is_empty()) {
                content.insert(custom_key.clone(), Value::String(typed.join("\n")));
            }
        }
        content
    }
}

/// How the person ended an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Accept(Map<String, Value>),
    /// The person chose not to answer ("The user did not answer the questions.").
    Decline,
    /// Stopped, closed, timed out, or askpane ended: the tool call fails ("Tool use aborted").
    Cancel,
}

/// The result of `elicitation/create`.
pub fn reply(action: Action) -> Value {
    match action {
        Action::Accept(content) => json!({"action": "accept", "content": content}),
        Action::Decline => json!({"action": "decline"}),
        Action::Cancel => json!({"action": "cancel"}),
    }
}

/// The result of a question form for `outcome`; `None` for a question the agent took back
/// (it already cancelled the request). Only the person's own Decline declines; every end that
/// is not the person's (stopped, timed out, nobody to ask, askpane ending) cancels, and the
/// model reads that the tool use was aborted, never that the person chose not to answer.
pub fn outcome_result(form: &QuestionForm, outcome: &Outcome) -> Option<Value> {
    let action = match outcome {
        Outcome::Answered(answers) => Action::Accept(form.content(answers)),
        Outcome::Declined { .. } => Action::Decline,
        Outcome::Withdrawn => return None,
        // The person's own words instead of the form: the first question's free text, which
        // the adapter takes as its answer.
        Outcome::Replied(reply) => match (form.ask.questions().first(), form.keys.first()) {
            (Some(question), Some((key, Some(custom)))) => {
                let none = match question.multi_select() {
                    true => Value::Array(Vec::new()),
                    false => Value::String(String::new()),
                };
                let mut content = Map::new();
                content.insert(key.clone(), none);
                content.insert(custom.clone(), Value::String(reply.text().to_owned()));
                Action::Accept(content)
            }
            _ => Action::Cancel,
        },
        Outcome::TimedOut(_)
        | Outcome::Clarify { .. }
        | Outcome::Unavailable { .. }
        | Outcome::Refused { .. }
        | Outcome::Stopped { .. } => Action::Cancel,
    };
    Some(reply(action))
}

/// A question form as the inbox reads it: the `elicitation/create` request line itself.
pub fn question_message(id: &Value, params: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": super::ELICITATION_CREATE, "params": params})
}

/// The name windows know a question form by: its tool call, else the request id.
pub fn question_call(id: &Value, elicitation: &Elicitation) -> String {
    match &elicitation.tool_call_id {
        Some(call) => call.clone(),
        None => format!("acp-elicitation-{id}"),
    }
}
