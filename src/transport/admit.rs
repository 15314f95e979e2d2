//! Taking in one agent message with its client's policy: the one place a [`Request`] is built
//! for `ask` and `hook`, whether the process that shows it is the command itself or the inbox
//! (issue 10). The policy (`--decline`, `--answers --submit`, `--non-interactive`, no display)
//! may decide the outcome at once; otherwise the request waits for the user, its form filled
//! from `--answers` and its countdown from `--timeout`.

use crossbeam_channel::Receiver;

use crate::book::Core;
use crate::book::policy;
use crate::protocol::inbox::{ClientMode, Policy as WirePolicy};
use crate::protocol::{Envelope, Incoming, Invalid, Outcome, ReplyFormat, ReplyShape, Warning};

use super::{Provenance, Request};

/// One message taken in: the request to show (if the policy left it to the user), and where its
/// outcome arrives either way.
#[derive(Debug)]
pub struct Admission {
    /// Which envelope the reply goes in, and the `--format` that overrides it.
    pub envelope: Envelope,
    pub format: Option<ReplyFormat>,
    /// Write a line even where the envelope's answer is to send nothing (`ask`, not `hook`).
    pub always_a_line: bool,
    /// The request, for the window; `None` when its outcome is already decided.
    pub request: Option<Request>,
    /// The request's core when the policy decided its outcome here, never shown: for history
    /// (issue 11: every outcome is recorded, also those no one saw).
    pub decided: Option<Box<Core>>,
    /// Where the outcome arrives.
    pub outcome: Receiver<Outcome>,
    /// What is odd about the questions (shown anyway).
    pub warnings: Vec<Warning>,
    /// Why the questions cannot be shown at all (then the outcome is `Refused`).
    pub invalid: Option<Invalid>,
    /// The policy does not fit these questions (an `--answers` file naming another question):
    /// the outcome says no answer is available, and `ask` exits 2 naming this.
    pub problem: Option<String>,
}

/// Takes in `incoming` from a `mode` client with `policy`. `no_display` says why no window can
/// be shown, when none can (and no browser is used): the agent then hears no human is there.
pub fn admit(
    incoming: Incoming,
    mode: ClientMode,
    policy: &WirePolicy,
    no_display: Option<String>,
) -> Admission {
    let envelope = incoming.envelope.clone();
    let format = policy.format.map(ReplyFormat::from);
    let always_a_line = mode.always_a_line();
    let provenance = Provenance::from_envelope(mode.name(), &incoming.envelope);
    let (mut request, outcome) = match Request::new(incoming, provenance) {
        Ok(pair) => pair,
        Err(invalid) => {
            let (responder, outcome) = super::Responder::channel();
            responder.send(Outcome::Refused { reason: invalid.to_string() });
            return Admission {
                envelope,
                format,
                always_a_line,
                request: None,
                decided: None,
                outcome,
                warnings: Vec::new(),
                invalid: Some(invalid),
                problem: None,
            };
        }
    };
    request.core.reply_shape = ReplyShape { format, always_a_line };
    let warnings = request.core.warnings.clone();
    let (request, decided, problem) = match settle(&mut request, policy, no_display) {
        Ok(None) => (Some(request), None, None),
        Ok(Some(decided)) => {
            request.reply.send(decided);
            (None, Some(Box::new(request.core)), None)
        }
        Err(problem) => {
            // The flags do not fit these questions: the agent is told no answer is available,
            // and the caller names what did not match.
            request.reply.send(Outcome::Unavailable { reason: problem.clone() });
            (None, Some(Box::new(request.core)), Some(problem))
        }
    };
    Admission {
        envelope,
        format,
        always_a_line,
        request,
        decided,
        outcome,
        warnings,
        invalid: None,
        problem,
    }
}

/// The outcome the client's policy decides on its own (`--decline`, `--answers --submit`, a
/// non-interactive run, no display, `hook --fallback`); `None` when the user is to answer, with
/// the preset (without `--submit`) filling the form. The flags become the book's policy by the
/// one rule ([`policy::from_flags`]); the book's [`crate::book::Policy::decide`] decides. `Err` names what in
/// the flags does not fit the questions (the outcome is then "unavailable").
fn settle(
    request: &mut Request,
    flags: &WirePolicy,
    no_display: Option<String>,
) -> Result<Option<Outcome>, String> {
    let nobody = no_display.map(|problem| format!("no display: {problem}"));
    let ruling = policy::from_flags(&request.core.ask, flags, nobody.as_deref());
    if let Some(problem) = ruling.misfit {
        return Err(problem);
    }
    request.policy = ruling.policy;
    Ok(request.policy.decide(&request.core.ask))
}
