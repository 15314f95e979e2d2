//! A person's reply in a chat, read against the ask it answers: exactly one socket verb
//! ([`Reply`]), or a [`Refusal`] that says in words why nothing was sent.
//!
//! The grammar (docs/src/chat-replies.md): keywords are case-insensitive; a leading mention of
//! the bot and quoted lines (`> …`, a client's reply fallback) are skipped. Questions: `2`,
//! `1,3`, `other: text`, `note: text` on a line of its own; with several questions one line
//! each, `1: 2`, `2: 1,3`, `1 note: …`; `decline: message`; `clarify`. Tool calls: `allow`,
//! `always` (`always 2` when there are several rules), `deny: reason`. Plans: `approve`,
//! `keep planning: feedback`. A text (`other:`, `note:`, `decline:`, `deny:`, `keep
//! planning:`) runs to the end of the message, or, with several questions, to the next line
//! that starts another question, so long and multi-line text passes whole.

use serde_json::{Map, Value};

use super::{Shape, key, no_map};
use crate::protocol::inbox::{AskContent, ClientMessage, FrontEndDecision};
use crate::protocol::limits;
use crate::protocol::question::Ask;

/// What a reply asks the inbox to do: one socket verb, without its address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `answer`: option numbers from 1 (comma-joined, `other:<text>` last) and notes, by
    /// question index from 0.
    Answer { answers: Map<String, Value>, notes: Map<String, Value> },
    /// `decline` with the message the agent reads.
    Decline { message: String },
    /// `clarify`: "Chat about this".
    Clarify,
    /// `decide`: allow, allow always with the rule `suggestion` (an index from 0), or deny
    /// with `message`.
    Decide { decision: FrontEndDecision, suggestion: Option<usize>, message: String },
}

impl Reply {
    /// The socket message for the ask `id` of `connection`, answered by `answered_by`.
    pub fn message(self, connection: u64, id: String, answered_by: String) -> ClientMessage {
        match self {
            Reply::Answer { answers, notes } => ClientMessage::Answer {
                connection,
                id,
                answers,
                notes,
                response: None,
                answered_by,
            },
            // The socket's `decline` carries the text the agent reads: the window's wording
            // around the person's words, as the window sends a decline.
            Reply::Decline { message } => ClientMessage::Decline {
                connection,
                id,
                message: crate::protocol::outcome::decline_message(&message),
                answered_by,
            },
            Reply::Clarify => ClientMessage::Clarify {
                connection,
                id,
                answers: no_map(),
                notes: no_map(),
                answered_by,
            },
            Reply::Decide { decision, suggestion, message } => {
                ClientMessage::Decide { connection, id, decision, suggestion, message, answered_by }
            }
        }
    }
}

/// Why a reply sent nothing, in words for the person who typed it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

fn refuse<T>(why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(why.into()))
}

/// Reads `text`, a person's reply to the ask whose content is `content`. `bot_names` are the
/// names a client may put first when the person mentions the bot (`@askpane:example.org`,
/// `askpane`); any leading `@…` word is skipped too.
pub fn parse_reply(content: &AskContent, text: &str, bot_names: &[&str]) -> Result<Reply, Refusal> {
    let Some(shape) = Shape::of(content) else {
        return refuse("this ask cannot be answered from a chat: open the inbox");
    };
    let text = strip_preamble(text, bot_names);
    if let Some(c) = text.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')) {
        return refuse(format!(
            "the reply holds a control character (U+{:04X}); nothing was sent",
            u32::from(c)
        ));
    }
    if text.trim().is_empty() {
        return refuse("the reply is empty");
    }
    let (word, rest) = keyword(text);
    match shape {
        Shape::Questions(ask) => match word.as_str() {
            "decline" => decline(rest),
            "clarify" if rest.trim().is_empty() => Ok(Reply::Clarify),
            "clarify" => {
                refuse("`clarify` takes no words: the agent asks what you want to clarify")
            }
            "allow" | "always" | "deny" | "approve" => refuse(format!(
                "this is a question, not a tool call: reply with an option's number, \
                 `other: …`, `decline: …` or `clarify` (`{word}` is for tool calls)"
            )),
            _ => answer(&ask, text),
        },
        Shape::Approval { suggestions, .. } => decide(&word, rest, suggestions.len(), false),
        Shape::Plan { suggestions, .. } => decide(&word, rest, suggestions.len(), true),
    }
}

/// The reply without quoted lines (`> …`, a client's reply fallback) and a leading mention.
fn strip_preamble<'a>(text: &'a str, bot_names: &[&str]) -> &'a str {
    let mut text = text.trim_start();
    while text.starts_with('>') {
        text = text.split_once('\n').map_or("", |(_, rest)| rest).trim_start();
    }
    // ASCII lowercasing keeps every byte where it was, so the name's length cuts `text`.
    let lower = text.to_ascii_lowercase();
    let named = bot_names
        .iter()
        .filter(|name| !name.is_empty())
        .find(|name| lower.starts_with(&name.to_ascii_lowercase()))
        .and_then(|name| text.get(name.len()..))
        .filter(|rest| rest.is_empty() || rest.starts_with([':', ',', ' ', '\n', '\t']));
    let rest = match named {
        Some(rest) => rest,
        None if text.starts_with('@') => {
            let end = text.find(char::is_whitespace).unwrap_or(text.len());
            text.get(end..).unwrap_or_default()
        }
        None => return text,
    };
    rest.trim_start_matches([':', ',']).trim_start()
}

/// The first word, lowercased (with `keep planning` as one word), and what follows it without
/// its `:`; an empty word when the reply starts with no letter.
fn keyword(text: &str) -> (String, &str) {
    let trimmed = text.trim_start();
    let end = trimmed.find(|c: char| !c.is_alphabetic()).unwrap_or(trimmed.len());
    let (word, rest) = trimmed.split_at(end);
    let mut word = word.to_lowercase();
    let mut rest = rest;
    if word == "keep" {
        let after = rest.trim_start();
        let end = after.find(|c: char| !c.is_alphabetic()).unwrap_or(after.len());
        let (second, tail) = after.split_at(end);
        if second.eq_ignore_ascii_case("planning") {
            word = "keep planning".to_owned();
            rest = tail;
        }
    }
    let rest = rest.trim_start();
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    (word, rest)
}

fn decline(message: &str) -> Result<Reply, Refusal> {
    let message = message.trim().to_owned();
    if let Err(error) = limits::check_decline_message(&message) {
        return refuse(format!("the decline's message: {error}"));
    }
    Ok(Reply::Decline { message })
}

/// A tool call's (or a plan's) decision.
fn decide(word: &str, rest: &str, suggestions: usize, plan: bool) -> Result<Reply, Refusal> {
    let allow = |suggestion| Reply::Decide {
        decision: match suggestion {
            Some(_) => FrontEndDecision::AllowAlways,
            None => FrontEndDecision::Allow,
        },
        suggestion,
        message: String::new(),
    };
    let choices = match (plan, suggestions) {
        (true, 0) => "reply `approve`, or `keep planning: what to change`",
        (true, _) => "reply `approve`, `always` (approve and add a rule), or `keep planning: …`",
        (false, 0) => "reply `allow`, or `deny: why`",
        (false, _) => "reply `allow`, `always` (allow and add a rule), or `deny: why`",
    };
    match word {
        "allow" | "approve" if rest.trim().is_empty() => Ok(allow(None)),
        "always" => {
            let number = rest.trim();
            match (suggestions, number.parse::<usize>()) {
                (0, _) => refuse(format!("this tool call offers no rule to add: {choices}")),
                (1, _) if number.is_empty() => Ok(allow(Some(0))),
                (_, _) if number.is_empty() => refuse(format!(
                    "ambiguous: there are {suggestions} rules to add; reply `always 1` … \
                     `always {suggestions}`"
                )),
                (_, Ok(n)) if (1..=suggestions).contains(&n) => Ok(allow(Some(n - 1))),
                _ => refuse(format!("the rules to add are 1–{suggestions}; {number:?} is not one")),
            }
        }
        "deny" | "keep planning" => {
            let message = rest.trim().to_owned();
            if let Err(error) = limits::check_decline_message(&message) {
                return refuse(format!("the message: {error}"));
            }
            Ok(Reply::Decide { decision: FrontEndDecision::Deny, suggestion: None, message })
        }
        "decline" | "clarify" | "other" | "note" => refuse(format!(
            "this is a {} to decide, not a question: {choices}",
            if plan { "plan" } else { "tool call" }
        )),
        _ => refuse(format!("not understood: {choices}")),
    }
}

/// What one question got: its picks (option numbers from 1), its Other text, its note.
#[derive(Default)]
struct Given {
    answered: bool,
    numbers: Vec<usize>,
    other: Option<String>,
    note: Option<String>,
}

/// Which text a continuation line belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    None,
    Other(usize),
    Note(usize),
}

/// A reply to questions: the answer grammar, checked against `ask`.
fn answer(ask: &Ask, text: &str) -> Result<Reply, Refusal> {
    let count = ask.questions().len();
    let mut given: Vec<Given> = (0..count).map(|_| Given::default()).collect();
    let mut open = Open::None;
    for line in text.lines() {
        let trimmed = line.trim();
        let segment = segment(trimmed, count);
        match segment {
            Segment::Text if open != Open::None => {
                let text = match open {
                    Open::Other(q) => given.get_mut(q).and_then(|g| g.other.as_mut()),
                    Open::Note(q) => given.get_mut(q).and_then(|g| g.note.as_mut()),
                    Open::None => None,
                };
                if let Some(text) = text {
                    text.push('\n');
                    text.push_str(line);
                }
            }
            Segment::Text if trimmed.is_empty() => {}
            Segment::Text if count > 1 => {
                return refuse(format!(
                    "ambiguous: this ask has {count} questions; start each line with the \
                     question's number, like `1: 2` and `2: 1,3`"
                ));
            }
            Segment::Text => {
                return refuse(format!(
                    "not understood: {:?}; reply with an option's number, `other: …`, \
                     `decline: …` or `clarify`",
                    short(trimmed)
                ));
            }
            Segment::Note { question, text } => {
                let q = question_index(question, count)?;
                let Some(slot) = given.get_mut(q) else { return refuse("no such question") };
                if slot.note.is_some() {
                    return refuse(format!("ambiguous: {} has two notes", name(q, count)));
                }
                slot.note = Some(text.to_owned());
                open = Open::Note(q);
            }
            Segment::Answer { question, items } => {
                let q = question_index(question, count)?;
                let Some(slot) = given.get_mut(q) else { return refuse("no such question") };
                if slot.answered {
                    return refuse(format!("ambiguous: {} is answered twice", name(q, count)));
                }
                slot.answered = true;
                open = Open::None;
                let (numbers, other) = items.split_once_other();
                for item in numbers.split(',').map(str::trim).filter(|item| !item.is_empty()) {
                    match item.parse::<usize>() {
                        Ok(number) => slot.numbers.push(number),
                        Err(_) => {
                            return refuse(format!(
                                "not understood: {:?} in the answer to {}; give option numbers \
                                 like `1,3`, or `other: …`",
                                short(item),
                                name(q, count)
                            ));
                        }
                    }
                }
                if let Some(other) = other {
                    slot.other = Some(other.to_owned());
                    open = Open::Other(q);
                }
            }
        }
    }
    build(ask, given)
}

/// A line of the reply: what it starts.
enum Segment<'a> {
    /// `[N:] items`.
    Answer { question: Option<usize>, items: Items<'a> },
    /// `[N ]note: text`.
    Note { question: Option<usize>, text: &'a str },
    /// Anything else: more of the text before it, or not understood.
    Text,
}

/// The items of an answer: numbers, then perhaps `other: text`.
struct Items<'a>(&'a str);

impl<'a> Items<'a> {
    /// The numbers before `other:`, and the Other text after it.
    fn split_once_other(&self) -> (&'a str, Option<&'a str>) {
        // ASCII lowercasing keeps every byte where it was.
        let lower = self.0.to_ascii_lowercase();
        // `other` as a word of its own, at the start or after a comma, followed by `:`.
        let at = lower.match_indices("other").map(|(at, _)| at).find(|&at| {
            let before = lower.get(..at).unwrap_or_default().trim_end();
            let after = lower.get(at + "other".len()..).unwrap_or_default().trim_start();
            (before.is_empty() || before.ends_with(',')) && after.starts_with(':')
        });
        let Some(at) = at else { return (self.0, None) };
        let numbers = self.0.get(..at).unwrap_or_default().trim_end();
        let numbers = numbers.strip_suffix(',').unwrap_or(numbers);
        let rest = self.0.get(at + "other".len()..).unwrap_or_default().trim_start();
        let text = rest.strip_prefix(':').unwrap_or(rest).trim_start();
        (numbers, Some(text))
    }
}

/// What `line` starts, with `count` questions in the ask.
fn segment(line: &str, count: usize) -> Segment<'_> {
    // An optional question number first: `2:` before an answer, `2 note:` or `2: note:`.
    let digits = line.find(|c: char| !c.is_ascii_digit()).unwrap_or(line.len());
    let (number, after) = line.split_at(digits);
    let question = number.parse::<usize>().ok();
    if let Some(question) = question {
        let after = after.trim_start();
        if let Some(text) = note_text(after.strip_prefix(':').unwrap_or(after).trim_start()) {
            return Segment::Note { question: Some(question), text };
        }
        if let Some(items) = after.strip_prefix(':') {
            return Segment::Answer { question: Some(question), items: Items(items.trim()) };
        }
        // A bare number (or `1,3`) answers the only question.
        if count == 1 || !line.contains(':') {
            return match is_items(line) {
                true => Segment::Answer { question: None, items: Items(line) },
                false => Segment::Text,
            };
        }
        return Segment::Text;
    }
    if let Some(text) = note_text(line) {
        return Segment::Note { question: None, text };
    }
    match is_items(line) {
        true => Segment::Answer { question: None, items: Items(line) },
        false => Segment::Text,
    }
}

/// `note: text` → `text`.
fn note_text(line: &str) -> Option<&str> {
    let head = line.get(..4)?;
    let rest = line.get(4..)?.trim_start();
    match head.eq_ignore_ascii_case("note") {
        true => rest.strip_prefix(':').map(str::trim_start),
        false => None,
    }
}

/// Whether `line` is an answer's items: numbers and commas, perhaps ending in `other: …`.
fn is_items(line: &str) -> bool {
    let (numbers, other) = Items(line).split_once_other();
    let numbers_only = numbers.chars().all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace());
    numbers_only && (other.is_some() || numbers.chars().any(|c| c.is_ascii_digit()))
}

/// Question `number` (from 1, `None`: the only one) as an index, or why not.
fn question_index(number: Option<usize>, count: usize) -> Result<usize, Refusal> {
    match number {
        None if count == 1 => Ok(0),
        None => refuse(format!(
            "ambiguous: this ask has {count} questions; say which, like `1: 2` or `1 note: …`"
        )),
        Some(number) if (1..=count).contains(&number) => Ok(number - 1),
        Some(number) => match count {
            1 => refuse(format!("this ask has one question; there is no question {number}")),
            _ => refuse(format!("this ask has questions 1–{count}; there is no question {number}")),
        },
    }
}

/// "this question" with one, "question 2" with several.
fn name(index: usize, count: usize) -> String {
    match count {
        1 => "this question".to_owned(),
        _ => format!("question {}", index + 1),
    }
}

/// The first words of `text`, for a refusal that quotes it.
fn short(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or_default()),
        None => text.to_owned(),
    }
}

/// The answer the socket takes, once every question's part is checked against the ask.
fn build(ask: &Ask, given: Vec<Given>) -> Result<Reply, Refusal> {
    let count = ask.questions().len();
    let (mut answers, mut notes) = (Map::new(), Map::new());
    for (index, (question, given)) in ask.questions().iter().zip(given).enumerate() {
        let name = name(index, count);
        let options = question.options().len();
        // Each option once, in the options' order (a number given twice is given once).
        let mut numbers = given.numbers;
        numbers.sort_unstable();
        numbers.dedup();
        if let Some(&wrong) = numbers.iter().find(|&&n| n == 0 || n > options) {
            let which = match count {
                1 => "this question has".to_owned(),
                _ => format!("{name} has"),
            };
            return refuse(format!("{which} options 1–{options}; {wrong} is not one"));
        }
        let other = given.other.map(|text| text.trim().to_owned());
        if other.as_deref().is_some_and(str::is_empty) {
            return refuse(format!("`other:` needs your words after it ({name})"));
        }
        if other.is_some() && question.secret() {
            return refuse(format!(
                "{name}'s answer is a secret: give it in the inbox's window or page, not in a chat"
            ));
        }
        let picked = numbers.len() + usize::from(other.is_some());
        if !question.multi_select() && picked > 1 {
            let takes = match count {
                1 => "this question takes".to_owned(),
                _ => format!("{name} takes"),
            };
            return refuse(format!("{takes} one option; you gave {picked}"));
        }
        let mut items: Vec<String> = numbers.iter().map(ToString::to_string).collect();
        if let Some(other) = &other {
            items.push(format!("other:{other}"));
        }
        if !items.is_empty() {
            answers.insert(key(index), Value::String(items.join(",")));
        }
        if let Some(note) = given.note.map(|note| note.trim().to_owned())
            && !note.is_empty()
        {
            notes.insert(key(index), Value::String(note));
        }
    }
    if answers.is_empty() {
        return refuse(
            "nothing to send: a note goes with an answer (an option's number or `other: …`); \
             or reply `decline: …` or `clarify`",
        );
    }
    let texts = (0..count).map(|index| {
        let other = answers
            .get(&key(index))
            .and_then(Value::as_str)
            .and_then(|answer| answer.split_once("other:").map(|(_, text)| text));
        (index, other, notes.get(&key(index)).and_then(Value::as_str))
    });
    if let Err(error) = limits::check_form_texts(texts) {
        return refuse(error.to_string());
    }
    Ok(Reply::Answer { answers, notes })
}
