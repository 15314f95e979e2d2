//! Every way a request can end, and the exact text the model then reads (protocol.md §6–§7).
//!
//! The promise to the user is that the agent is always told what really happened: an answer, a
//! decline, a question the agent withdrew, nobody answering in time, nobody there to answer, or
//! input that could not be shown. Each variant carries the text the model will read.

use serde_json::{Map, Value};

use super::answer::{Answers, QuestionAnswer};
use super::question::Ask;

/// What the model reads when the user closed the window with questions still open.
pub const CLOSED_MESSAGE: &str = "The user closed the question window without answering. Do not assume an answer; ask again \
     in chat if you still need one.";

/// How a request ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The user submitted; unanswered questions are left out (and may all be out).
    Answered(Answers),
    /// The user refused to answer. `message` is what the model reads, verbatim.
    Declined { message: String },
    /// The agent took the question back before the user answered; nothing is sent on paths that
    /// already know (the CLI's `control_cancel_request`).
    Withdrawn,
    /// Nobody answered within the time allowed.
    TimedOut { waited_secs: u64 },
    /// No human can answer (no display, a non-interactive run). `reason` says why.
    Unavailable { reason: String },
    /// The input could not be shown: `reason` lists what is wrong with it.
    Refused { reason: String },
    /// The user declined and stopped the agent's turn (a stream-json host's deny with
    /// `interrupt`). `message` goes where the envelope has room for it.
    Stopped { message: String },
    /// The user answered in their own words instead of the form (`updatedInput.response`).
    Replied(Reply),
}

/// A free-form reply, with the tool input it answers (the reply echoes it).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    input: Map<String, Value>,
    text: String,
}

impl Reply {
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The input echoed, `answers` empty, and `response`: the CLI then tells the model "The user
    /// responded: …" (protocol.md §5.3).
    pub fn updated_input(&self) -> Value {
        let mut input = self.input.clone();
        input.insert("answers".into(), Value::Object(Map::new()));
        input.shift_remove("annotations");
        input.insert("response".into(), Value::String(self.text.clone()));
        Value::Object(input)
    }
}

/// What the model reads after a deny with `interrupt` (protocol.md §6); the message is not used.
pub const STOPPED_TEXT: &str = "The user doesn't want to proceed with this tool use. The tool use \
    was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what \
    you are doing and wait for the user to tell you how to proceed.";

/// The two endings the CLI has used for an answered tool_result (protocol.md §7, §12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResultStyle {
    /// 2.1.330: "Your questions have been answered" only when every answer is an option label and
    /// there are no notes; otherwise "The user answered: … Read the answers carefully …".
    #[default]
    Current,
    /// 2.1.197 and earlier: always "Your questions have been answered: …".
    Legacy,
}

impl Outcome {
    /// A decline with the user's optional words to the agent.
    pub fn declined(user_message: &str) -> Self {
        Outcome::Declined { message: decline_message(user_message) }
    }

    /// Declined, and the agent's turn stopped.
    pub fn stopped(user_message: &str) -> Self {
        Outcome::Stopped { message: decline_message(user_message) }
    }

    /// The user's own words instead of the form.
    pub fn replied(ask: &Ask, text: &str) -> Self {
        Outcome::Replied(Reply { input: ask.input().clone(), text: text.trim().to_owned() })
    }

    /// The decline sent when the window closes with the question still open.
    pub fn closed() -> Self {
        Outcome::Declined { message: CLOSED_MESSAGE.to_owned() }
    }

    /// A short machine name: `answered`, `declined`, `withdrawn`, `timed_out`, `unavailable`,
    /// `refused`, `stopped`, `replied`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Answered(_) => "answered",
            Outcome::Declined { .. } => "declined",
            Outcome::Withdrawn => "withdrawn",
            Outcome::TimedOut { .. } => "timed_out",
            Outcome::Unavailable { .. } => "unavailable",
            Outcome::Refused { .. } => "refused",
            Outcome::Stopped { .. } => "stopped",
            Outcome::Replied(_) => "replied",
        }
    }

    /// The message of a deny: what the model reads when the outcome is not an answer.
    pub fn deny_message(&self) -> Option<String> {
        match self {
            Outcome::Answered(_) | Outcome::Replied(_) => None,
            Outcome::Declined { message } | Outcome::Stopped { message } => Some(message.clone()),
            Outcome::Withdrawn => {
                Some("The question was withdrawn before the user answered it.".into())
            }
            Outcome::TimedOut { waited_secs } => Some(format!(
                "No one answered these questions within {waited_secs} seconds. Proceed using your \
                 best judgment, state the assumptions you make, and ask again later if it still \
                 matters."
            )),
            Outcome::Unavailable { reason } => Some(format!(
                "No human is available to answer questions right now ({reason}). Proceed with \
                 reasonable assumptions and state them clearly, or stop and report what you need \
                 decided."
            )),
            Outcome::Refused { reason } => Some(format!(
                "These questions could not be shown to the user because the AskUserQuestion input \
                 is invalid: {reason}. Fix the input and call AskUserQuestion again."
            )),
        }
    }

    /// The tool_result text the model reads on the stream-json path, as the CLI builds it.
    pub fn model_text(&self, style: ResultStyle) -> String {
        match self {
            Outcome::Answered(answers) => answered_text(answers, style),
            Outcome::Replied(reply) => format!("The user responded: {}", reply.text),
            Outcome::Stopped { .. } => STOPPED_TEXT.to_owned(),
            other => other.deny_message().unwrap_or_default(),
        }
    }
}

/// What the model reads after a decline, with the user's words when they gave any.
fn decline_message(user_message: &str) -> String {
    match user_message.trim() {
        "" => "The user declined to answer these questions. Do not assume an answer; continue \
               without it or ask in chat."
            .to_owned(),
        words => format!("The user declined to answer these questions and said: {words}"),
    }
}

/// The CLI's per-question piece: `"Q"="A"`, then ` selected preview:\n…` and ` notes: …`.
fn piece(entry: &QuestionAnswer) -> String {
    let mut parts = vec![match &entry.answer {
        Some(answer) => format!("\"{}\"=\"{answer}\"", entry.question),
        None => format!("\"{}\"=(no option selected)", entry.question),
    }];
    if let Some(preview) = &entry.preview {
        parts.push(format!("selected preview:\n{preview}"));
    }
    if let Some(notes) = &entry.notes {
        parts.push(format!("notes: {notes}"));
    }
    parts.join(" ")
}

fn answered_text(answers: &Answers, style: ResultStyle) -> String {
    if answers.is_empty() {
        return "The user did not answer the questions.".into();
    }
    let pieces: Vec<String> = answers.entries().iter().map(piece).collect();
    let pieces = pieces.join(", ");
    // The CLI checks each answer against the option labels and that no question has notes.
    let plain = answers.entries().iter().all(|entry| entry.notes.is_none() && entry.labels_only);
    match (style, plain) {
        (ResultStyle::Legacy, _) | (ResultStyle::Current, true) => format!(
            "Your questions have been answered: {pieces}. You can now continue with these answers \
             in mind."
        ),
        (ResultStyle::Current, false) => format!(
            "The user answered: {pieces}. Read the answers carefully \u{2014} they may request \
             clarification, changes, or that you not proceed \u{2014} and follow what they \
             actually say."
        ),
    }
}
