//! `askpane hook` given a `PermissionRequest` for any tool but AskUserQuestion (issue 26): the
//! tool call becomes a permission card in the running inbox (the hook input handed over as it
//! came, as a question's is), or in a window of this process's own when no inbox can be used.
//! The reply is Claude Code's `hookSpecificOutput.decision`, or nothing at all, exit 0, where no
//! person decided: Claude Code's own dialog (or `-p`'s policy) then decides. Never an allow the
//! person did not give.

use std::io;

use serde_json::Value;

use askpane::app::AppOptions;
use askpane::protocol::envelope::{Envelope, HookEvent};
use askpane::protocol::exit;
use askpane::protocol::inbox::ClientMode;
use askpane::protocol::permission::{self, ApprovalOutcome, HookAgent, HookPermission};
use askpane::protocol::stream::{PermissionDecision, PermissionRequest};
use askpane::store::{DraftSink, HistoryRecord};
use askpane::transport::lines::write_line;
use askpane::transport::{
    ApprovalEvent, Inbound, PermissionAsk, Provenance, RequestId, Responder, ui_channel,
};

use crate::window::{Arrival, WindowSlot, show_window};

use super::answer::{PipeArgs, policy};
use super::args::StoreArgs;
use super::handover::{Delivered, Until, deliver};
use super::show::missing_display;

/// Answers one hook tool call; the exit code is always 0 (Claude Code reads a hook's output
/// only then, and a 2 would block the call: a decision nobody made). Codex's hook
/// (`askpane codex-hook`) comes this way too: its lines on stderr name it ([`HookAgent`]).
pub(super) fn run(
    message: &Value,
    parsed: Result<HookPermission, permission::HookPermissionError>,
    unavailable: Option<&str>,
    args: &PipeArgs,
) -> u8 {
    let agent = HookAgent::of_input(message);
    let (said, name) = (agent.command(), agent.name());
    let approval = match parsed {
        Ok(approval) => approval,
        Err(error) => {
            eprintln!("{said}: {error}; leaving the tool call to {name}");
            return exit::OK;
        }
    };
    let policy = policy(&args.answering, None, unavailable);
    if args.answering.answers.is_some() {
        eprintln!("{said}: --answers answers questions, never a tool call; ignored here");
    }
    if let Some((kind, decision)) = permission::decided_by_policy(&policy) {
        print_decision(agent, &approval.request, kind, &decision);
        // Issue 26: decided by a flag, with nobody asked: history keeps it all the same.
        record(agent, &args.store, &approval, kind, &decision);
        return exit::OK;
    }
    if !args.inbox.no_inbox {
        match deliver(message, ClientMode::Hook, &policy, args, &Until::Signal) {
            Delivered::Outcome { reply, exit_code, problem } => {
                if let Some(problem) = problem {
                    eprintln!("{said}: {problem}");
                }
                if let Some(reply) = reply {
                    print_line(agent, &reply);
                }
                return exit_code;
            }
            // Stopped before anyone decided: nothing is printed, the agent decides.
            Delivered::Stopped(_) => return exit::OK,
            Delivered::Cancelled | Delivered::Yourself(_) | Delivered::NotRunning => {}
        }
    }
    let request = approval.request.clone();
    let (kind, decision) = decide_here(agent, approval, args);
    print_decision(agent, &request, kind, &decision);
    exit::OK
}

/// Shows the card in a window of this process's own and waits for the person; no window, no
/// decision. (`--timeout` is kept by the inbox only: this window waits for the person, or for
/// Claude Code's own hook timeout.)
fn decide_here(
    agent: HookAgent,
    approval: HookPermission,
    args: &PipeArgs,
) -> (ApprovalOutcome, PermissionDecision) {
    let (said, name) = (agent.command(), agent.name());
    let nobody = (ApprovalOutcome::NoHuman, PermissionDecision::HandBack);
    // Issue 26: what history keeps when no window decides (a window records its own card).
    let unshown = |approval: &HookPermission| {
        record(agent, &args.store, approval, nobody.0, &nobody.1);
        nobody.clone()
    };
    if args.shown.web() {
        eprintln!(
            "{said}: a tool call is shown in the browser only by the inbox; leaving it to {name}"
        );
        return unshown(&approval);
    }
    if let Some(why) = missing_display() {
        eprintln!("{said}: {why}; leaving the tool call to {name}");
        return unshown(&approval);
    }
    let kept = approval.clone();
    let HookPermission { mut request, context, source } = approval;
    let cwd = request.cwd.clone().map(std::path::PathBuf::from);
    askpane::transport::snapshot::attach(&mut request, cwd.as_deref());
    let envelope = Envelope::Hook { event: HookEvent::PermissionRequest, context };
    let provenance = Provenance::from_envelope(source, &envelope);
    let (reply, decided) = Responder::channel();
    let window = WindowSlot::default();
    let (to_ui, inbox) = ui_channel(window.waker());
    let card = PermissionAsk { id: RequestId::next(), request, provenance, reply };
    to_ui.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(card))));
    drop(to_ui);
    let options = AppOptions { close_when_done: true, ..AppOptions::default() };
    // Issue 26: the window records the card in history, however it ends.
    let sink = args.store.open_or_warn().and_then(|store| {
        DraftSink::start(store)
            .map_err(|error| eprintln!("{said}: warning: no history this time ({error})"))
            .ok()
    });
    let shown = show_window(
        window,
        args.shown.theme.into(),
        Arrival::LeavesKeyboard,
        (inbox, options),
        |app| match sink {
            Some(sink) => app.with_store(sink),
            None => app,
        },
    );
    if let Err(error) = shown {
        eprintln!("{said}: cannot show the tool call ({error}); leaving it to {name}");
        return unshown(&kept);
    }
    match decided.try_recv() {
        Ok(decision) => (ApprovalOutcome::of(&decision), decision),
        Err(_) => nobody,
    }
}

/// Records in history a tool call this process ended without a window (issue 26); a failure
/// is one line on stderr, never a changed reply.
fn record(
    agent: HookAgent,
    store: &StoreArgs,
    approval: &HookPermission,
    kind: ApprovalOutcome,
    decision: &PermissionDecision,
) {
    let Some(mut store) = store.open_or_warn() else { return };
    let envelope =
        Envelope::Hook { event: HookEvent::PermissionRequest, context: approval.context.clone() };
    // Codex's hook is recorded as its own (`codex-hook`), not as Claude Code's.
    let provenance = Provenance::from_envelope(approval.source, &envelope);
    let now = std::time::SystemTime::now();
    let record =
        HistoryRecord::of_approval(&approval.request, provenance, kind, decision, (None, now));
    if let Err(error) = store.record(&record) {
        eprintln!("{}: warning: cannot record this in history ({error})", agent.command());
    }
}

/// Prints the hook's reply for `decision` (nothing for a hand-back), and says on stderr how it
/// ended when no person decided.
fn print_decision(
    agent: HookAgent,
    request: &PermissionRequest,
    kind: ApprovalOutcome,
    decision: &PermissionDecision,
) {
    if kind == ApprovalOutcome::NoHuman {
        eprintln!("{}: nobody decided; {} decides on its own", agent.command(), agent.name());
    }
    if let Some(reply) = permission::hook_reply(request, decision) {
        print_line(agent, &reply);
    }
}

/// The hook's one line on stdout.
#[allow(clippy::disallowed_methods, reason = "the hook's one writer: its reply line")]
fn print_line(agent: HookAgent, reply: &Value) {
    if let Err(error) = write_line(&mut io::stdout().lock(), reply)
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("{}: cannot write the reply: {error}", agent.command());
    }
}
