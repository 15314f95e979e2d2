//! Answering one message from a pipe (`ask` and `hook`): refuse it if it is invalid, settle it
//! from the flags when they decide it (`--decline`, `--answers --submit`, no human), or show it
//! and wait for the user.

use anyhow::Context as _;

use askpane::app::AppOptions;
use askpane::book::Policy;
use askpane::protocol::{Ask, Incoming, Outcome, ReplyFormat, build_answers, drafts_from_preset};
use askpane::transport::pipe;
use askpane::transport::replies::AwaitedReply;
use askpane::transport::signals::StopSignal;
use askpane::transport::{Provenance, Request};

use super::args::{AnsweringArgs, UiArgs};
use super::window::{missing_display, show_requests, write_direct};

/// How one message was answered: its outcome, and the signal that stopped askpane, if any.
pub(super) struct Answered {
    pub(super) outcome: Outcome,
    pub(super) stopped_by: Option<StopSignal>,
}

/// The two modes that answer one message from a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PipeMode {
    Ask,
    Hook,
}

impl PipeMode {
    fn name(self) -> &'static str {
        match self {
            PipeMode::Ask => "ask",
            PipeMode::Hook => "hook",
        }
    }

    /// `ask` promises exactly one line on stdout; a hook prints nothing where that is how Claude
    /// Code is told to ask in its own dialog.
    fn always_a_line(self) -> bool {
        self == PipeMode::Ask
    }
}

/// Answers one parsed message: refuse it if invalid, settle it from the flags if they say so,
/// or show the window. The reply is written (once) by the writer thread; the outcome is returned.
pub(super) fn answer_one(
    incoming: Incoming,
    mode: PipeMode,
    format: Option<ReplyFormat>,
    answering: &AnsweringArgs,
    shown: &UiArgs,
    unavailable: Option<&str>,
) -> anyhow::Result<Answered> {
    let envelope = incoming.envelope.clone();
    let provenance = Provenance::from_envelope(mode.name(), &incoming.envelope);
    let (mut request, outcome) = match Request::new(incoming, provenance) {
        Ok(pair) => pair,
        Err(invalid) => {
            eprintln!("askpane: the questions cannot be shown: {invalid}");
            let outcome = Outcome::Refused { reason: invalid.to_string() };
            write_direct(&envelope, format, &outcome, mode.always_a_line())?;
            return Ok(Answered { outcome, stopped_by: None });
        }
    };
    for warning in &request.core.warnings {
        eprintln!("askpane: warning: {warning}");
    }
    let always_a_line = mode.always_a_line();
    let awaited = vec![AwaitedReply { envelope, format, outcome, always_a_line }];
    let settled = match unavailable {
        Some(reason) => Ok(Some(Outcome::Unavailable { reason: reason.to_owned() })),
        None => settle_without_window(&mut request, answering, shown.web()),
    };
    let decided = match settled {
        Ok(decided) => decided,
        Err(problem) => {
            // The flags do not fit these questions: the agent is told no answer is available,
            // and the caller gets the error (exit 2) that names what did not match.
            request.reply.send(Outcome::Unavailable { reason: problem.clone() });
            show_requests(Vec::new(), awaited, AppOptions::default(), shown)?;
            anyhow::bail!(problem);
        }
    };
    let requests = match decided {
        Some(outcome) => {
            request.reply.send(outcome);
            Vec::new()
        }
        None => vec![request],
    };
    let served = show_requests(
        requests,
        awaited,
        AppOptions { close_when_done: true, ..AppOptions::default() },
        shown,
    )?;
    match (&served.problem, served.bridge_failed) {
        // The agent was told no one can answer; the caller hears the usage error (exit 2).
        (Some(problem), true) => anyhow::bail!("cannot show the questions: {problem}"),
        (Some(problem), false) => eprintln!("askpane: cannot show the questions ({problem})"),
        (None, _) => {}
    }
    let outcome = served.outcomes.into_iter().next().context("no reply was decided")?;
    Ok(Answered { outcome, stopped_by: served.stopped_by })
}

/// The outcome the flags decide on their own (`--decline`, `--answers --submit`, a
/// non-interactive run, no display); `None` when the user is to answer in the window, with
/// pre-selected answers (without `--submit`) filling the form.
fn settle_without_window(
    request: &mut Request,
    answering: &AnsweringArgs,
    in_browser: bool,
) -> Result<Option<Outcome>, String> {
    request.policy = policy_from_flags(&request.core.ask, answering, in_browser)?;
    Ok(request.policy.decide(&request.core.ask))
}

/// The request's policy as the flags state it. A preset that does not fit the questions is an
/// error that names the file (exit 2), never a partial answer.
fn policy_from_flags(
    ask: &Ask,
    answering: &AnsweringArgs,
    in_browser: bool,
) -> Result<Policy, String> {
    let mut policy = Policy {
        timeout_secs: answering.timeout.map(|timeout| timeout.as_secs()),
        ..Policy::default()
    };
    if let Some(message) = &answering.decline {
        policy.decline = Some(message.clone());
        return Ok(policy);
    }
    if let Some(path) = &answering.answers {
        let preset = pipe::read_json(path).map_err(|error| format!("--answers: {error}"))?;
        let misfit =
            |error: &dyn std::fmt::Display| format!("--answers {}: {error}", path.display());
        policy.preset = drafts_from_preset(ask, &preset).map_err(|error| misfit(&error))?;
        if answering.submit {
            build_answers(ask, &policy.preset).map_err(|error| misfit(&error))?;
            policy.submit = true;
        }
    }
    if answering.non_interactive {
        policy.unavailable = Some(
            "askpane runs non-interactively (--non-interactive or ASKPANE_NONINTERACTIVE)"
                .to_owned(),
        );
    } else if !in_browser && let Some(problem) = missing_display() {
        policy.unavailable = Some(format!("no display: {problem}"));
    }
    Ok(policy)
}
