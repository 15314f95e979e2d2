//! Questions as polls (Matrix's MSC3381 `m.poll.start`, or any chat's): one poll per question,
//! its options by number, and the options a person chose back as the answer the socket takes.
//! Plain strings and numbers: no chat network's types.

use serde_json::{Map, Value};

use super::render::agent_text;
use super::reply::{Refusal, Reply};
use super::{Shape, key, no_map};
use crate::protocol::inbox::AskContent;

/// The most bytes of a poll's question or answer text (chat clients show them on one line).
const MAX_POLL_TEXT_BYTES: usize = 300;

/// One question as a poll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Poll {
    /// The question's index from 0.
    pub question: usize,
    /// `Header: question`, made safe (no mentions) and bounded.
    pub text: String,
    /// 1 for a question that takes one option, else how many it has.
    pub max_selections: usize,
    pub answers: Vec<PollAnswer>,
}

/// One option of a poll: its `id` is the option's number from 1 (`"2"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollAnswer {
    pub id: String,
    /// `Label — description`, made safe and bounded.
    pub text: String,
}

/// One poll per question of `content`; none for a tool call or a plan (they are answered by
/// words), nor for a question whose answer is a secret.
pub fn polls(content: &AskContent) -> Vec<Poll> {
    let Some(Shape::Questions(ask)) = Shape::of(content) else { return Vec::new() };
    ask.questions()
        .iter()
        .enumerate()
        .filter(|(_, question)| !question.secret())
        .map(|(index, question)| Poll {
            question: index,
            text: bounded(&format!("{}: {}", question.header(), question.text())),
            max_selections: match question.multi_select() {
                true => question.options().len(),
                false => 1,
            },
            answers: question
                .options()
                .iter()
                .enumerate()
                .map(|(number, option)| PollAnswer {
                    id: (number + 1).to_string(),
                    text: match option.description().trim().is_empty() {
                        true => bounded(option.label()),
                        false => bounded(&format!("{} — {}", option.label(), option.description())),
                    },
                })
                .collect(),
        })
        .collect()
}

/// The answer for the options `chosen` (poll answer ids) on the poll of question `question`:
/// that question answered, the others left as they are (a poll answers one question).
pub fn poll_reply(
    content: &AskContent,
    question: usize,
    chosen: &[&str],
) -> Result<Reply, Refusal> {
    let poll = polls(content).into_iter().find(|poll| poll.question == question);
    let Some(poll) = poll else {
        return Err(Refusal(format!("the ask has no poll for question {}", question + 1)));
    };
    let mut numbers: Vec<usize> = Vec::new();
    for id in chosen {
        match poll.answers.iter().position(|answer| answer.id == *id) {
            Some(index) if !numbers.contains(&(index + 1)) => numbers.push(index + 1),
            Some(_) => {}
            None => return Err(Refusal(format!("{id:?} is not one of the poll's options"))),
        }
    }
    if numbers.is_empty() {
        return Err(Refusal("no option chosen".to_owned()));
    }
    if numbers.len() > poll.max_selections {
        let count = numbers.len();
        return Err(Refusal(format!("this question takes one option; you gave {count}")));
    }
    numbers.sort_unstable();
    let joined: Vec<String> = numbers.iter().map(ToString::to_string).collect();
    let mut answers = Map::new();
    answers.insert(key(question), Value::String(joined.join(",")));
    Ok(Reply::Answer { answers, notes: no_map() })
}

fn bounded(text: &str) -> String {
    let safe = agent_text(text, true);
    if safe.len() <= MAX_POLL_TEXT_BYTES {
        return safe;
    }
    let mut end = MAX_POLL_TEXT_BYTES;
    while !safe.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", safe.split_at(end).0)
}
