//! Every size limit on what a person sends, the checks that name the field over its limit, and
//! the browser bridge's message limit, derived from them.
//!
//! Lengths are JavaScript string lengths (UTF-16 code units, [`super::js_length`]), as Claude Code
//! measures them. Nothing is ever cut: a text over its limit is refused with a [`LimitError`] that
//! says which field and by how much, and the user shortens it.

use super::js_length;

/// Longest answer string a strict host admits (JavaScript string length).
pub const MAX_ANSWER_LENGTH: usize = 32_768;
/// Longest `annotations[q].notes` a strict host admits.
pub const MAX_NOTES_LENGTH: usize = 8_192;
/// Longest answer a strict host admits in all: answers, notes and previews together. The echoed
/// previews are dropped before the user's own text is refused.
pub const MAX_TOTAL_LENGTH: usize = 32_768;
/// Longest "Reply instead" text. It goes to `updatedInput.response`, which the model reads in
/// place of every answer, so the bound for all answers together is the natural one.
pub const MAX_REPLY_LENGTH: usize = MAX_TOTAL_LENGTH;
/// Longest message to the agent when declining. It is the user's note on why they decline, so
/// it gets a note's limit.
pub const MAX_DECLINE_LENGTH: usize = MAX_NOTES_LENGTH;
/// Room for askpane's own words around a decline message ("The user declined to answer these
/// questions and said: …"): a browser sends the whole text the model reads.
pub const DECLINE_WORDING_ALLOWANCE: usize = 256;

/// Most questions one request may have to be shown in a browser. The tool allows 4; askpane shows
/// more with a warning, and the bridge needs some bound to size its messages from.
pub const MAX_BRIDGE_QUESTIONS: usize = 16;
/// Most options one question may have to be shown in a browser (the tool allows 4).
pub const MAX_BRIDGE_OPTIONS: usize = 64;
/// Longest `tool_use_id` the bridge takes (Claude Code's are about 30 characters).
pub const MAX_TOOL_USE_ID_LENGTH: usize = 256;
/// Most seconds one `timeout_extended` may add (an "add time" click adds far less).
pub const MAX_TIMEOUT_EXTENSION_SECS: u64 = 3_600;

/// The most bytes one UTF-16 unit of text can take in a browser's JSON: a `\uXXXX` escape (a
/// control character, or one half of an escaped surrogate pair). A character of the BMP is at
/// most 3 bytes of UTF-8; one outside it is 4 bytes for 2 units.
const WORST_BYTES_PER_UNIT: usize = 6;
/// The keys of the largest message a page sends, with every text empty.
const ANSWER_SHAPE: &str =
    r#"{"type":"question_answer","tool_use_id":"","answers":{},"notes":{},"response":""}"#;
/// Slack for what a valid message may have beyond askpane's own form: whitespace between tokens,
/// a field askpane ignores.
const MESSAGE_MARGIN: usize = 4_096;

/// The largest WebSocket message the bridge reads: the largest valid `question_answer`, with
/// every text at its limit and written in the costliest JSON, for the most questions and options
/// the bridge shows, plus a margin. A message that fits its semantic limits always fits this; one
/// that does not is refused by the limit it breaks, by name, before anything is decided.
pub const MAX_BROWSER_MESSAGE: usize = WORST_BYTES_PER_UNIT
    * (MAX_TOTAL_LENGTH + MAX_REPLY_LENGTH + MAX_TOOL_USE_ID_LENGTH)
    + MAX_BRIDGE_QUESTIONS * question_bytes(MAX_BRIDGE_QUESTIONS, MAX_BRIDGE_OPTIONS)
    + ANSWER_SHAPE.len()
    + MESSAGE_MARGIN;

// Checked when building: 6 bytes per unit for answers, notes, reply and id, and not wildly more
// (about 393 KiB).
const _: () = assert!(
    MAX_BROWSER_MESSAGE >= 6 * (MAX_TOTAL_LENGTH + MAX_REPLY_LENGTH + MAX_TOOL_USE_ID_LENGTH)
);
const _: () = assert!(MAX_BROWSER_MESSAGE < 400 * 1024);

/// One question's share of a message, texts aside: `"15":"1,2,…,64,other:",` in `answers` and
/// `"15":"",` in `notes`.
const fn question_bytes(questions: usize, options: usize) -> usize {
    let key = 2 + digits(questions) + 1;
    let mut numbers = 0;
    let mut option = 1;
    while option <= options {
        numbers += digits(option) + 1;
        option += 1;
    }
    let answer = key + 2 + numbers + "other:".len() + 1;
    let note = key + 2 + 1;
    answer + note
}

const fn digits(mut number: usize) -> usize {
    let mut count = 1;
    while number >= 10 {
        number /= 10;
        count += 1;
    }
    count
}

/// Which text is over its limit. Questions are 0-based here and printed from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The answer to one question (the chosen labels and the Other text).
    Answer { question: usize },
    /// The note on one question.
    Note { question: usize },
    /// All answers and notes together.
    Total,
    /// The "Reply instead" text.
    Reply,
    /// The message to the agent when declining.
    DeclineMessage,
}

impl Field {
    /// The name a browser is told (`error.field`): `answer`, `note`, `total`, `reply`,
    /// `decline_message`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Answer { .. } => "answer",
            Field::Note { .. } => "note",
            Field::Total => "total",
            Field::Reply => "reply",
            Field::DeclineMessage => "decline_message",
        }
    }

    /// The question the field belongs to, if it belongs to one.
    pub fn question(self) -> Option<usize> {
        match self {
            Field::Answer { question } | Field::Note { question } => Some(question),
            Field::Total | Field::Reply | Field::DeclineMessage => None,
        }
    }
}

/// Why a text cannot be sent as it is. Shown to the user, who shortens it; never truncated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error(
        "the answer to question {} is {length} characters long; the limit is {MAX_ANSWER_LENGTH}",
        question + 1
    )]
    AnswerTooLong { question: usize, length: usize },
    #[error(
        "the note on question {} is {length} characters long; the limit is {MAX_NOTES_LENGTH}",
        question + 1
    )]
    NotesTooLong { question: usize, length: usize },
    #[error("the answers are {length} characters long in all; the limit is {MAX_TOTAL_LENGTH}")]
    TooLarge { length: usize },
    #[error("the reply is {length} characters long; the limit is {MAX_REPLY_LENGTH}")]
    ReplyTooLong { length: usize },
    #[error("the message to the agent is {length} characters long; the limit is {limit}")]
    DeclineTooLong { length: usize, limit: usize },
}

impl LimitError {
    /// The field over its limit.
    pub fn field(&self) -> Field {
        match *self {
            LimitError::AnswerTooLong { question, .. } => Field::Answer { question },
            LimitError::NotesTooLong { question, .. } => Field::Note { question },
            LimitError::TooLarge { .. } => Field::Total,
            LimitError::ReplyTooLong { .. } => Field::Reply,
            LimitError::DeclineTooLong { .. } => Field::DeclineMessage,
        }
    }
}

/// A "Reply instead" text, as it will be sent (trimmed).
pub fn check_reply(text: &str) -> Result<(), LimitError> {
    let length = js_length(text.trim());
    match length > MAX_REPLY_LENGTH {
        true => Err(LimitError::ReplyTooLong { length }),
        false => Ok(()),
    }
}

/// The user's own words when declining, as they will be sent (trimmed).
pub fn check_decline_message(words: &str) -> Result<(), LimitError> {
    let length = js_length(words.trim());
    match length > MAX_DECLINE_LENGTH {
        true => Err(LimitError::DeclineTooLong { length, limit: MAX_DECLINE_LENGTH }),
        false => Ok(()),
    }
}

/// A decline as a browser sends it: the whole text the model reads, the user's words inside
/// askpane's wording.
pub fn check_decline_wire_message(message: &str) -> Result<(), LimitError> {
    let (length, limit) = (js_length(message), MAX_DECLINE_LENGTH + DECLINE_WORDING_ALLOWANCE);
    match length > limit {
        true => Err(LimitError::DeclineTooLong { length, limit }),
        false => Ok(()),
    }
}

/// The texts of a form as a browser sends them, per question: (Other text, note). Each is checked
/// on its own and all together, exactly as sent (a page sends them trimmed, as the reply holds
/// them), so whatever passes also fits [`MAX_BROWSER_MESSAGE`].
pub fn check_form_texts<'a>(
    texts: impl IntoIterator<Item = (usize, Option<&'a str>, Option<&'a str>)>,
) -> Result<(), LimitError> {
    let mut total = 0;
    for (question, other, note) in texts {
        let other_length = other.map_or(0, js_length);
        if other_length > MAX_ANSWER_LENGTH {
            return Err(LimitError::AnswerTooLong { question, length: other_length });
        }
        let note_length = note.map_or(0, js_length);
        if note_length > MAX_NOTES_LENGTH {
            return Err(LimitError::NotesTooLong { question, length: note_length });
        }
        total += other_length + note_length;
    }
    match total > MAX_TOTAL_LENGTH {
        true => Err(LimitError::TooLarge { length: total }),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_limit_holds_every_text_at_its_limit_in_the_costliest_json() {
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
        assert_eq!(digits(64), 2);
        // "15":"1,2,…,64,other:", and "15":"",
        let numbers: String = (1..=64).map(|n| format!("{n},")).collect();
        let answer = format!("\"15\":\"{numbers}other:\",");
        assert_eq!(question_bytes(16, 64), answer.len() + "\"15\":\"\",".len());
    }

    #[test]
    fn checks_name_the_field_and_count_utf16_units() {
        assert_eq!(check_reply(&"あ".repeat(MAX_REPLY_LENGTH)), Ok(()));
        let over = check_reply(&"あ".repeat(MAX_REPLY_LENGTH + 1)).expect_err("over");
        assert_eq!(over.field(), Field::Reply);
        assert_eq!(over.to_string(), "the reply is 32769 characters long; the limit is 32768");
        // A character outside the BMP is two units, as in JavaScript.
        let emoji = "😀".repeat(MAX_DECLINE_LENGTH / 2);
        assert_eq!(check_decline_message(&emoji), Ok(()));
        let over = check_decline_message(&format!("{emoji}x")).expect_err("over");
        assert_eq!(over.field(), Field::DeclineMessage);
        assert_eq!(over.field().name(), "decline_message");
        // Surrounding whitespace is not sent, so it does not count.
        assert_eq!(check_reply(&format!("  {}  ", "x".repeat(MAX_REPLY_LENGTH))), Ok(()));
    }

    #[test]
    fn form_texts_are_checked_one_by_one_and_together() {
        let note = "ノ".repeat(MAX_NOTES_LENGTH);
        let other = "ア".repeat(MAX_TOTAL_LENGTH - 2 * MAX_NOTES_LENGTH);
        let at_limit = [(0, Some(other.as_str()), Some(note.as_str())), (1, None, Some(&note))];
        assert_eq!(check_form_texts(at_limit), Ok(()));
        let long_note = format!("{note}ノ");
        let error = check_form_texts([(2, None, Some(long_note.as_str()))]).expect_err("over");
        assert_eq!(error.field(), Field::Note { question: 2 });
        let one_more =
            [(0, Some(other.as_str()), Some(note.as_str())), (1, Some("x"), Some(&note))];
        let error = check_form_texts(one_more).expect_err("over in all");
        assert_eq!(error, LimitError::TooLarge { length: MAX_TOTAL_LENGTH + 1 });
        assert_eq!(error.field().name(), "total");
    }
}
