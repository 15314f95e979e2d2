//! Issue 31: the text grammar of a chat front end (a Matrix room now, any chat later), so that
//! every bridge shows asks and reads replies the same way: [`render`] makes one message of an
//! ask (plain text and a small HTML subset, everything the agent wrote escaped and bounded),
//! [`parse_reply`] reads what a person typed back into exactly one socket verb ([`Reply`]) or
//! a [`Refusal`] in words, and [`polls`] / [`poll_reply`] map questions to polls and chosen
//! options back. Pure: no IO, no clock (a deadline comes in seconds since the Unix epoch), no
//! chat network's types. The grammar is documented for people in docs/src/chat-replies.md.

mod poll;
mod render;
mod reply;
#[cfg(test)]
mod tests;

pub use poll::{Poll, PollAnswer, poll_reply, polls};
pub use render::{MAX_BODY_BYTES, Message, field, html, render};
pub use reply::{Refusal, Reply, parse_reply};

use serde_json::{Map, Value, json};

use super::inbox::AskContent;
use super::permission::Suggestion;
use super::question::Ask;

/// What an ask is, read once from its content for rendering and parsing alike.
enum Shape<'a> {
    /// Questions, validated as the window validates them.
    Questions(Ask),
    /// A tool call to allow or deny.
    Approval {
        tool_name: &'a str,
        input: &'a Value,
        description: Option<&'a str>,
        suggestions: &'a [Suggestion],
    },
    /// An ExitPlanMode plan to approve or send back.
    Plan { plan: &'a str, suggestions: &'a [Suggestion] },
}

impl<'a> Shape<'a> {
    /// The shape of `content`; `None` for questions the window could not show either (the
    /// inbox validated them when they arrived, so only a hand-made content is refused).
    fn of(content: &'a AskContent) -> Option<Shape<'a>> {
        match content {
            AskContent::Question { questions } => {
                let input = json!({ "questions": questions });
                super::validate(&input).ok().map(|validated| Shape::Questions(validated.ask))
            }
            AskContent::Approval { plan: Some(plan), suggestions, .. } => {
                Some(Shape::Plan { plan, suggestions })
            }
            AskContent::Approval { tool_name, input, description, suggestions, plan: None } => {
                Some(Shape::Approval {
                    tool_name,
                    input,
                    description: description.as_deref(),
                    suggestions,
                })
            }
        }
    }
}

/// An answer map's key for question `index` (from 0), as the socket's `answers` has them.
fn key(index: usize) -> String {
    index.to_string()
}

/// An empty map, for the answers or notes a reply does not give.
fn no_map() -> Map<String, Value> {
    Map::new()
}
