//! What was sent for the last request that ended: shown so the user sees exactly what the agent
//! got, and (in a browser page) whether askpane has it yet.

use crate::book::{Ending, Open};
use crate::protocol::question::SECRET_NOT_SHOWN;
use crate::protocol::{Outcome, OutcomeKind, ReplyFormat};

/// What was sent for a finished request, and what its model reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub title: String,
    pub provenance: String,
    pub outcome_kind: OutcomeKind,
    /// Sent because the `--timeout` ran out, not by the user's own submit.
    pub by_timeout: bool,
    /// The reply JSON in the request's envelope, pretty-printed (empty when nothing is sent).
    pub reply: String,
    /// The tool_result text the model reads.
    pub model_text: String,
    /// Whether askpane has it yet. A browser page says "Sent" only once it has.
    pub tool_use_id: Option<String>,
    pub send_state: SendState,
}

/// Whether askpane has a finished request's outcome. Natively handing it over is delivery; a
/// browser page waits for the bridge's acknowledgement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendState {
    Sending,
    Sent,
    /// It did not count; why.
    NotSent(String),
}

impl Receipt {
    pub fn new(open: &Open, outcome: &Outcome, ending: &Ending) -> Self {
        let envelope = &open.core.envelope;
        // An OpenCode question is answered in OpenCode's form, and its model words it its way.
        // So is a question from Codex's hook (`askpane codex-hook`).
        let opencode = matches!(
            open.core.reply_shape.format,
            Some(ReplyFormat::OpenCode | ReplyFormat::CodexHook)
        );
        let reply = match opencode {
            true => open.core.reply_shape.line(envelope, outcome),
            false => envelope.reply(outcome),
        };
        let reply =
            reply.and_then(|value| serde_json::to_string_pretty(&value).ok()).unwrap_or_default();
        let mut model_text = open.core.reply_shape.model_text(envelope, &open.core.ask, outcome);
        // A secret answer was sent, but is not drawn on screen again.
        let secret = open.core.ask.questions().iter().any(|question| question.secret());
        let answered = matches!(outcome, Outcome::Answered(_) | Outcome::Replied(_));
        let reply = match secret && answered {
            true => {
                model_text = SECRET_NOT_SHOWN.to_owned();
                String::new()
            }
            false => reply,
        };
        Receipt {
            title: open.core.ask.title().to_owned(),
            provenance: open.core.provenance.shown(),
            outcome_kind: outcome.kind(),
            by_timeout: matches!(ending, Ending::Deadline { .. }),
            reply,
            model_text,
            tool_use_id: envelope.tool_use_id().map(str::to_owned),
            send_state: match open.awaits_ack {
                true => SendState::Sending,
                false => SendState::Sent,
            },
        }
    }
}
