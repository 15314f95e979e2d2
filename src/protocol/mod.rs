//! The AskUserQuestion protocol as pure data and rules: no egui, no IO, no threads, no clocks.
//!
//! Reading order: [`question`] (the validated types), [`validate`] (wire JSON → those types, with
//! hard errors and soft warnings), [`answer`] (what the user picked → `answers` + `annotations`),
//! [`outcome`] (every way a request can end, and the text the model then reads), [`envelope`]
//! (which wrapper a message came in, and the reply rendered back in that same wrapper; [`mcp`] for
//! `askpane mcp`'s tool); [`limits`]
//! holds every size limit.

pub mod acp;
pub mod answer;
pub mod chat;
pub mod codex;
pub mod codex_server;
pub mod doctor;
pub mod envelope;
pub mod exit;
pub mod history;
pub mod hook_input;
pub mod hook_notification;
pub mod inbox;
pub mod limits;
pub mod link;
pub mod markup;
pub mod matrix_setup;
pub mod mcp;
pub mod notice;
pub mod opencode;
pub mod origin;
pub mod outcome;
pub mod permission;
pub mod preset;
pub mod question;
pub mod status;
pub mod stream;
pub mod text;
pub mod tool_call;
pub mod tray;
pub mod validate;
pub mod web;

pub use answer::{Answers, Draft, LimitError, Pick, QuestionAnswer, TextField, build_answers};
pub use envelope::{
    Envelope, EnvelopeError, HOOK_STATUS_MESSAGE, HookContext, HookEvent, Incoming, ReplyFormat,
    ReplyShape, parse_message,
};
pub use outcome::{
    AtDeadline, Outcome, OutcomeKind, Prefill, Reply, ResultStyle, TimedOut, Unconfirmed,
    UnknownOutcomeKind,
};
pub use preset::{PresetError, drafts_from_preset};
pub use question::{Ask, Choice, Question};
pub use validate::{InputError, Invalid, Validated, Warning, WarningKind, validate};

/// Names a JSON value's type the way an error message should ("a number", "null", …).
pub fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Length as the CLI measures it: JavaScript's `String.length`, which counts UTF-16 code units.
pub fn js_length(text: &str) -> usize {
    text.encode_utf16().count()
}
