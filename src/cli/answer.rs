//! Answering one message from a pipe (`ask` and `hook`) in this process: refuse it if it is
//! invalid, settle it from the flags when they decide it (`--decline`, `--answers --submit`, no
//! human), or show it and wait for the user. The request is built by [`admit`], the same
//! function the inbox uses for its clients (issue 10). Every outcome goes into the store's
//! history (issue 11); a request shown in this process's window saves its drafts there, and one
//! asked again (same tool_use_id) comes back with them.

use anyhow::Context as _;
use clap::Args;

use askpane::app::AppOptions;
use askpane::protocol::inbox::{ClientMode, Policy, Preset};
use askpane::protocol::{Envelope, Incoming, Outcome, ReplyFormat, ReplyShape};
use askpane::store::{self, DraftSink, HistoryRecord, Store};
use askpane::transport::admit::{Admission, admit};
use askpane::transport::replies::AwaitedReply;
use askpane::transport::signals::StopSignal;
use askpane::transport::{Provenance, pipe};

use super::args::{AnsweringArgs, InboxUse, StoreArgs, UiArgs};
use super::handover::{Handed, hand_to_inbox};
use super::show::{missing_display, show_requests};

/// The flags `ask` and `hook` share: how the request may be answered, where it is shown,
/// whether the inbox shows it, where drafts and history are kept.
#[derive(Args, Debug)]
pub(super) struct PipeArgs {
    #[command(flatten)]
    pub(super) answering: AnsweringArgs,
    #[command(flatten)]
    pub(super) shown: UiArgs,
    #[command(flatten)]
    pub(super) inbox: InboxUse,
    #[command(flatten)]
    pub(super) store: StoreArgs,
}

/// Where one piped message was answered.
pub(super) enum Piped {
    /// The inbox answered it; the client printed its reply and exits with this code.
    ByInbox(u8),
    /// This process answered it (or failed to: the error says why).
    Here(anyhow::Result<Answered>),
}

/// Answers one parsed message as `mode`: the flags make the policy, the running inbox (or one
/// started for it) shows it, else this process does. `unavailable` says why nobody may be asked
/// (`hook --fallback`).
pub(super) fn answer_piped(
    message: &serde_json::Value,
    incoming: Incoming,
    mode: ClientMode,
    format: Option<ReplyFormat>,
    unavailable: Option<&str>,
    args: &PipeArgs,
) -> Piped {
    let policy = policy(&args.answering, format, unavailable);
    match hand_to_inbox(message, &incoming, mode, &policy, args) {
        Handed::Done(code) => Piped::ByInbox(code),
        Handed::Yourself => {
            Piped::Here(answer_one(incoming, mode, &policy, &args.shown, &args.store))
        }
    }
}

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
fn answer_one(
    incoming: Incoming,
    mode: ClientMode,
    policy: &Policy,
    shown: &UiArgs,
    store_args: &StoreArgs,
) -> anyhow::Result<Answered> {
    let no_display = match shown.web() {
        true => None,
        false => missing_display(),
    };
    // Issue 11: what history needs of the message, kept only when there is a store. The file is
    // open only while it is read or written, never while the questions are shown (a hook may
    // wait for hours; the browser bridge may be short of descriptors).
    let store = store_args.open_or_warn();
    let asked = store.as_ref().map(|_| Asked::new(&incoming, mode));
    let Admission {
        envelope,
        format,
        always_a_line,
        mut request,
        outcome,
        warnings,
        invalid,
        problem,
        // Recorded here from `asked` (below), as every outcome of this process is.
        decided: _,
    } = admit(incoming, mode, policy, no_display);
    if let Some(invalid) = &invalid {
        eprintln!("askpane: the questions cannot be shown: {invalid}");
    }
    for warning in &warnings {
        eprintln!("askpane: warning: {warning}");
    }
    let shape = ReplyShape { format, always_a_line };
    let awaited = vec![AwaitedReply { envelope, format, outcome, always_a_line }];
    if let Some(problem) = problem {
        // The agent was told no answer is available; the caller gets the error (exit 2) that
        // names what did not match.
        let served = show_requests(Vec::new(), awaited, AppOptions::default(), shown, None)?;
        record(store_args, asked.as_ref(), served.outcomes.first(), shape);
        anyhow::bail!(problem);
    }
    // Shown in this process's native window: the window saves its drafts and records its
    // outcome through a writer of its own. Asked again after a crash (same tool_use_id), the
    // form comes back as it was left.
    let in_window = request.is_some() && !shown.web();
    let mut sink = None;
    if let (Some(store), Some(request)) = (&store, &mut request) {
        let (key, asked) =
            (store::request_key(&request.core), store::asked_fingerprint(&request.core));
        if let Ok(saved) = store.drafts_to_restore(&key, &asked) {
            store::restore_drafts(&mut request.policy, &request.core.ask, saved);
        }
        if in_window {
            sink = store_args.open().ok().and_then(start_sink);
        }
    }
    drop(store);
    let window_records = sink.is_some();
    let served = show_requests(
        request.into_iter().collect(),
        awaited,
        AppOptions { close_when_done: true, ..AppOptions::default() },
        shown,
        sink,
    )?;
    // Decided without a window, refused, answered in the browser, or no window could open.
    if !window_records || served.problem.is_some() {
        record(store_args, asked.as_ref(), served.outcomes.first(), shape);
    }
    match (&served.problem, served.bridge_failed) {
        // The agent was told no one can answer; the caller hears the usage error (exit 2).
        (Some(problem), true) => anyhow::bail!("cannot show the questions: {problem}"),
        (Some(problem), false) => eprintln!("askpane: cannot show the questions ({problem})"),
        (None, _) => {}
    }
    let outcome = served.outcomes.into_iter().next().context("no reply was decided")?;
    Ok(Answered { outcome, stopped_by: served.stopped_by })
}

/// What history keeps of the message as it came in.
pub(super) struct Asked {
    envelope: Envelope,
    input: serde_json::Value,
    provenance: Provenance,
}

impl Asked {
    pub(super) fn new(incoming: &Incoming, mode: ClientMode) -> Self {
        Asked::asked_by(incoming, Provenance::from_envelope(mode.name(), &incoming.envelope))
    }

    /// As [`Asked::new`], for an adapter that says who asked (`askpane opencode`).
    pub(super) fn asked_by(incoming: &Incoming, provenance: Provenance) -> Self {
        Asked { envelope: incoming.envelope.clone(), input: incoming.input.clone(), provenance }
    }
}

/// Records in history how a message this process answered ended; a failure is one line on
/// stderr, never a failed answer.
/// (`asked` is `None` when the store could not be opened at the start: that was said once.)
pub(super) fn record(
    store_args: &StoreArgs,
    asked: Option<&Asked>,
    outcome: Option<&Outcome>,
    shape: ReplyShape,
) {
    let (Some(asked), Some(outcome)) = (asked, outcome) else { return };
    let mut store = match store_args.open() {
        Ok(store) => store,
        Err(error) => {
            eprintln!("askpane: warning: cannot record this in history ({error})");
            return;
        }
    };
    let record = HistoryRecord::from_message(
        &asked.envelope,
        &asked.input,
        asked.provenance.clone(),
        outcome,
        shape,
        std::time::SystemTime::now(),
    );
    if let Err(error) = store.record(&record) {
        eprintln!("askpane: warning: cannot record this in history ({error})");
    }
}

/// The store's writer for the window: drafts saved as the user types, the outcome recorded.
fn start_sink(store: Store) -> Option<DraftSink> {
    DraftSink::start(store)
        .map_err(|error| eprintln!("askpane: warning: drafts are not saved ({error})"))
        .ok()
}
