//! Answering one message from a pipe (`ask` and `hook`) in this process: refuse it if it is
//! invalid, settle it from the flags when they decide it (`--decline`, `--answers --submit`, no
//! human), or show it and wait for the user. The request is built by [`admit`], the same
//! function the inbox uses for its clients (issue 10).

use anyhow::Context as _;

use askpane::app::AppOptions;
use askpane::protocol::inbox::{ClientMode, Policy, Preset};
use askpane::protocol::{Incoming, Outcome, ReplyFormat};
use askpane::transport::admit::{Admission, admit};
use askpane::transport::pipe;
use askpane::transport::replies::AwaitedReply;
use askpane::transport::signals::StopSignal;

use super::args::{AnsweringArgs, UiArgs};
use super::window::{missing_display, show_requests};

/// How one message was answered: its outcome, and the signal that stopped askpane, if any.
pub(super) struct Answered {
    pub(super) outcome: Outcome,
    pub(super) stopped_by: Option<StopSignal>,
}

/// The client's policy from its flags: what travels with the request, to whoever shows it.
/// `--answers` is read here, in the client's own directory.
pub(super) fn policy(
    answering: &AnsweringArgs,
    format: Option<ReplyFormat>,
    unavailable: Option<&str>,
) -> Policy {
    let answers = answering.answers.as_ref().map(|path| {
        let file = path.display().to_string();
        match pipe::read_json(path) {
            Ok(json) => Preset { file, json: Some(json), unreadable: None },
            Err(error) => Preset { file, json: None, unreadable: Some(error.to_string()) },
        }
    });
    Policy {
        answers,
        submit: answering.submit,
        decline: answering.decline.clone(),
        timeout_secs: answering.timeout.map(|timeout| timeout.as_secs()),
        non_interactive: answering.non_interactive,
        unavailable: unavailable.map(str::to_owned),
        mark_skipped: false,
        format: format.map(Into::into),
    }
}

/// Answers one parsed message here: refuse it if invalid, settle it from the policy if it says
/// so, or show the window. The reply is written (once) by the writer thread; the outcome is
/// returned.
pub(super) fn answer_one(
    incoming: Incoming,
    mode: ClientMode,
    policy: &Policy,
    shown: &UiArgs,
) -> anyhow::Result<Answered> {
    let no_display = match shown.web() {
        true => None,
        false => missing_display(),
    };
    let Admission { envelope, format, always_a_line, request, outcome, warnings, invalid, problem } =
        admit(incoming, mode, policy, no_display);
    if let Some(invalid) = &invalid {
        eprintln!("askpane: the questions cannot be shown: {invalid}");
    }
    for warning in &warnings {
        eprintln!("askpane: warning: {warning}");
    }
    let awaited = vec![AwaitedReply { envelope, format, outcome, always_a_line }];
    if let Some(problem) = problem {
        // The agent was told no answer is available; the caller gets the error (exit 2) that
        // names what did not match.
        show_requests(Vec::new(), awaited, AppOptions::default(), shown)?;
        anyhow::bail!(problem);
    }
    let served = show_requests(
        request.into_iter().collect(),
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
