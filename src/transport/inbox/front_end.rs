//! Issue 31: a front end's verbs on the inbox socket (`answer`, `decline`, `clarify`,
//! `decide`): a bridge (a chat room, a script) answers an open question or decides a tool call
//! the way the browser page does, through the same book rules in the window's (or page's)
//! driver, and hears whether its answer counted.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::book::FrontEndRefusal;
use crate::book::approval::deny_words;
use crate::book::plan::keep_planning_words;
use crate::protocol::inbox::{AskContent, FrontEndDecision, InboxMessage};
use crate::protocol::permission::Suggestion;
use crate::protocol::stream::PermissionDecision;
use crate::protocol::web::BrowserMessage;

use super::writer::Writer;
use super::{ApprovalEvent, FrontEndAnswer, Inbound, RequestEvent, RequestId, Shared};
use crate::transport::FrontEndDecision as DecisionEvent;

/// One ask a front end may answer: a question (by the window's request) or a permission card
/// (by connection and the client's id, as the inbox names its cards).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Asked {
    Question(RequestId),
    Card(u64, String),
}

/// How many ended asks the inbox remembers, to tell a late front end how each ended.
const REMEMBERED_ENDINGS: usize = 512;

/// The longest `answered_by` label a front end may give, in bytes.
pub(super) const MAX_LABEL_BYTES: usize = 256;

/// What the inbox remembers for front ends: who answered the asks a front end answered, and
/// how the last asks ended (so a late answer hears who came first, not "unknown").
#[derive(Debug, Default)]
pub(super) struct Memory {
    answered_by: HashMap<Asked, String>,
    ended: VecDeque<((u64, String), Asked, String)>,
}

impl Memory {
    /// The ask `request` (`id` of `connection`) ended as `outcome`: remembered in words.
    pub(super) fn ended(&mut self, connection: u64, id: &str, request: RequestId, outcome: &str) {
        self.remember(connection, id, Asked::Question(request), outcome);
    }

    /// The card `id` of `connection` left the window as `outcome`.
    pub(super) fn card_ended(&mut self, connection: u64, id: &str, outcome: &str) {
        self.remember(connection, id, Asked::Card(connection, id.to_owned()), outcome);
    }

    fn remember(&mut self, connection: u64, id: &str, request: Asked, outcome: &str) {
        let how = match (self.answered_by.remove(&request), outcome) {
            (Some(label), _) => format!("it was already answered by {label}"),
            (None, "answered") => {
                "it was already answered in the inbox's window or browser page".to_owned()
            }
            (None, decided) if decided.starts_with("allowed") || decided.starts_with("denied") => {
                format!("it was already decided in the inbox's window or browser page ({decided})")
            }
            (None, other) => format!("it has ended ({other})"),
        };
        if self.ended.len() >= REMEMBERED_ENDINGS {
            self.ended.pop_front();
        }
        self.ended.push_back(((connection, id.to_owned()), request, how));
    }

    /// How ask `id` of `connection` ended, when it is remembered (the latest of that name).
    fn how_it_ended(&self, connection: u64, id: &str) -> Option<&str> {
        self.ended
            .iter()
            .rev()
            .find(|((number, name), _, _)| *number == connection && name == id)
            .map(|(_, _, how)| how.as_str())
    }

    /// How the ask `request` ended, in words: who answered it first, when a front end did.
    fn how_request_ended(&self, request: &Asked) -> Option<String> {
        if let Some(label) = self.answered_by.get(request) {
            return Some(format!("it was already answered by {label}"));
        }
        let ended = self.ended.iter().rev().find(|(_, ended, _)| ended == request);
        ended.map(|(_, _, how)| how.clone())
    }
}

/// Checks a front end's label: printable text of a bounded size.
fn label(answered_by: &str) -> Result<String, String> {
    let fits = !answered_by.trim().is_empty()
        && answered_by.len() <= MAX_LABEL_BYTES
        && !answered_by.chars().any(char::is_control);
    match fits {
        true => Ok(format!("socket:{answered_by}")),
        false => Err(format!(
            "answered_by must be printable text of 1 to {MAX_LABEL_BYTES} bytes, not {answered_by:?}"
        )),
    }
}

/// What a front-end verb acts on, once [`open_ask`] found it open.
enum Target {
    /// A question in the window, by its request, with the `tool_use_id` its page form names.
    Question { request: RequestId, tool_use_id: Option<String> },
    /// A tool call to decide, with the rules an "always" may add; `plan` when it is a plan
    /// (its deny is "keep planning", in the plan page's words).
    Card { suggestions: Vec<Suggestion>, plan: bool },
}

/// The kind of ask a verb acts on, for what [`open_ask`] says when it finds none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    Question,
    Card,
}

/// The rule every front-end verb passes first, in one place: the label must be printable and
/// bounded; the ask `id` of `connection` must be open and of the kind the verb acts on. One
/// that ended is told in a `verdict` (who came first, or how it ended), anything else in an
/// `error`; then `None`, and nothing changed.
fn open_ask(
    shared: &Arc<Shared>,
    writer: &Arc<Writer>,
    connection: u64,
    id: &str,
    answered_by: &str,
    wanted: Wanted,
) -> Option<(String, Target)> {
    let error = |message: String| {
        writer.send(&InboxMessage::Error { message, id: Some(id.to_owned()) });
    };
    let label = match label(answered_by) {
        Ok(label) => label,
        Err(message) => {
            error(message);
            return None;
        }
    };
    let key = (connection, id.to_owned());
    let question = shared.open.lock().ok().and_then(|open| {
        open.get(&key).map(|open| Target::Question {
            request: open.request,
            tool_use_id: open.listed.tool_use_id.clone(),
        })
    });
    let card = || {
        shared.cards.lock().ok().and_then(|cards| {
            cards.get(&key).map(|card| match card.content.as_deref() {
                Some(AskContent::Approval { suggestions, plan, .. }) => {
                    Target::Card { suggestions: suggestions.clone(), plan: plan.is_some() }
                }
                _ => Target::Card { suggestions: Vec::new(), plan: false },
            })
        })
    };
    let what = match wanted {
        Wanted::Question => "question",
        Wanted::Card => "tool call",
    };
    match (question.or_else(card), wanted) {
        (Some(target @ Target::Question { .. }), Wanted::Question)
        | (Some(target @ Target::Card { .. }), Wanted::Card) => Some((label, target)),
        (Some(Target::Card { .. }), Wanted::Question) => {
            error(format!(
                "{id:?} of connection {connection} is a tool call to allow or deny (`decide`), \
                 not a question"
            ));
            None
        }
        (Some(Target::Question { .. }), Wanted::Card) => {
            error(format!(
                "{id:?} of connection {connection} is a question (`answer`, `decline`, \
                 `clarify`), not a tool call"
            ));
            None
        }
        (None, _) => {
            let ended = shared
                .front_end
                .lock()
                .ok()
                .and_then(|memory| memory.how_it_ended(connection, id).map(str::to_owned));
            match ended {
                Some(reason) => {
                    let (id, reason) = (id.to_owned(), Some(reason));
                    writer.send(&InboxMessage::Verdict { connection, id, accepted: false, reason });
                }
                None => error(format!("no open {what} {id:?} of connection {connection}")),
            }
            None
        }
    }
}

/// A front end's answer to ask `id` of `connection`: handed to the window, whose verdict goes
/// back to `writer` as `verdict`; an error at once when nothing could be handed on.
pub(super) fn answer(
    shared: &Arc<Shared>,
    writer: &Arc<Writer>,
    connection: u64,
    id: String,
    answered_by: &str,
    message: impl FnOnce(String) -> BrowserMessage,
) {
    let open = open_ask(shared, writer, connection, &id, answered_by, Wanted::Question);
    let Some((label, Target::Question { request, tool_use_id })) = open else { return };
    let answered_by = label.clone();
    let verdict = verdict(shared, writer, connection, id, label, Asked::Question(request));
    let message = message(tool_use_id.unwrap_or_default());
    shared.to_ui(Inbound::Request(RequestEvent::FrontEnd(Box::new(FrontEndAnswer {
        request,
        message,
        answered_by,
        verdict,
    }))));
}

/// Where the window's verdict on a front end's answer goes: back to `writer`, remembering who
/// answered first when it counted.
fn verdict(
    shared: &Arc<Shared>,
    writer: &Arc<Writer>,
    connection: u64,
    id: String,
    label: String,
    asked: Asked,
) -> Box<dyn FnOnce(Result<(), FrontEndRefusal>) + Send> {
    let writer = Arc::clone(writer);
    let remembering = Arc::clone(shared);
    Box::new(move |verdict: Result<(), FrontEndRefusal>| {
        let reason = match verdict {
            Ok(()) => {
                log::info!(speaker = super::INBOX; "{label} answered {id:?} of connection {connection}");
                if let Ok(mut memory) = remembering.front_end.lock() {
                    memory.answered_by.insert(asked, label);
                }
                None
            }
            Err(FrontEndRefusal::Ended) => Some(
                remembering
                    .front_end
                    .lock()
                    .ok()
                    .and_then(|memory| memory.how_request_ended(&asked))
                    .unwrap_or_else(|| {
                        "it has already ended (answered in the inbox's window or browser page, \
                         withdrawn or timed out)"
                            .to_owned()
                    }),
            ),
            Err(FrontEndRefusal::Invalid(error)) => Some(error.to_string()),
        };
        let accepted = reason.is_none();
        writer.send(&InboxMessage::Verdict { connection, id, accepted, reason });
    })
}

/// A front end's `decide`, as sent.
pub(super) struct Decided {
    pub(super) decision: FrontEndDecision,
    pub(super) suggestion: Option<usize>,
    pub(super) message: String,
}

/// A front end's decision on the card `id` of `connection`: handed to the window, whose
/// verdict goes back as `verdict`; an error at once when nothing could be handed on.
pub(super) fn decide(
    shared: &Arc<Shared>,
    writer: &Arc<Writer>,
    connection: u64,
    id: String,
    answered_by: &str,
    decided: Decided,
) {
    let error = |message: String, id: String| {
        writer.send(&InboxMessage::Error { message, id: Some(id) });
    };
    let open = open_ask(shared, writer, connection, &id, answered_by, Wanted::Card);
    let Some((label, Target::Card { suggestions, plan })) = open else { return };
    let decision = match decided.decision {
        FrontEndDecision::Allow => PermissionDecision::AllowOnce,
        FrontEndDecision::AllowAlways => {
            let index = decided.suggestion;
            let Some(suggestion) = index.and_then(|index| suggestions.get(index)).cloned() else {
                let count = suggestions.len();
                return error(
                    format!(
                        "allow_always needs the index of one of the tool call's {count} \
                         suggestions as `suggestion`, not {index:?}"
                    ),
                    id,
                );
            };
            PermissionDecision::AllowAlways { suggestion }
        }
        FrontEndDecision::Deny => {
            if let Err(problem) =
                crate::protocol::limits::check_decline_wire_message(&decided.message)
            {
                return error(format!("the deny's message: {problem}"), id);
            }
            // The words the person gave, in the sentence the window sends around them.
            let message = match plan {
                true => keep_planning_words(&decided.message),
                false => deny_words(&decided.message),
            };
            PermissionDecision::Deny { message }
        }
    };
    let request_id = format!("inbox-{connection}-{id}");
    let answered_by = label.clone();
    let verdict =
        verdict(shared, writer, connection, id.clone(), label, Asked::Card(connection, id));
    shared.to_ui(Inbound::Approval(ApprovalEvent::FrontEnd(Box::new(DecisionEvent {
        request_id,
        decision,
        answered_by,
        verdict,
    }))));
}
