//! A `PermissionRequest` hook's tool call handed to the inbox by `askpane hook` (issue 26): the
//! inbox recognises the hook input, decides it from the client's flags when they decide it,
//! else shows it as a permission card, and answers the client with the hook's reply line (or
//! none: Claude Code's own dialog or policy then decides). The client stays thin: it hands the
//! hook input over as it came and prints what comes back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;

use crate::book::approval::EndedApproval;
use crate::protocol::envelope::{Envelope, HookEvent};
use crate::protocol::exit;
use crate::protocol::inbox::{InboxMessage, OutcomeMessage, Policy};
use crate::protocol::permission::{self, ApprovalOutcome, HookPermission};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::tool_call::FileSnapshot;
use crate::transport::snapshot;

use super::waiters::Pending;
use super::writer::Writer;
use super::{ApprovalEvent, Inbound, PermissionAsk, Provenance, RequestId, Responder, Shared};

/// One hook approval to take in: the client's name for it, the card, and the client's flags.
pub(super) struct HookApproval {
    pub(super) connection: u64,
    pub(super) id: String,
    pub(super) approval: HookPermission,
    pub(super) policy: Policy,
    /// The SSH host it came through (issue 27), as its link names it.
    pub(super) host: Option<String>,
    /// The file its call would change, as the client read it (used only through a link).
    pub(super) on_disk: Option<FileSnapshot>,
}

/// Takes a hook's tool call in: decided at once by the flags, or shown as a card whose
/// decision the waiting thread (`waiters.rs`) waits for (until `--timeout`, when given). `open` maps this connection's
/// open cards (the client's id → the request id the window knows) so a withdraw, or the
/// connection's end, takes the card back.
pub(super) fn take(
    shared: &Arc<Shared>,
    writer: &Arc<Writer>,
    pending: &Pending,
    open: &Arc<Mutex<HashMap<String, String>>>,
    ask: HookApproval,
) -> Result<(), String> {
    let HookApproval { connection, id, approval, policy, host, on_disk } = ask;
    if let Some((kind, decision)) = permission::decided_by_policy(&policy) {
        writer.send(&InboxMessage::Accepted { id: id.clone(), shown: false, warnings: Vec::new() });
        writer.send(&outcome(id, &approval.request, kind, &decision));
        // Issue 26: history keeps it, though no card was shown.
        let HookPermission { request, context, source } = approval;
        let envelope = Envelope::Hook { event: HookEvent::PermissionRequest, context };
        let ended = EndedApproval {
            id: RequestId::next(),
            request,
            provenance: Provenance { host, ..Provenance::from_envelope(source, &envelope) },
            outcome: kind,
            decision,
            answered_by: None,
        };
        shared.to_ui(Inbound::Approval(ApprovalEvent::Unshown(Box::new(ended))));
        return Ok(());
    }
    let HookPermission { mut request, context, source } = approval;
    // The hook's request carries no id of its own: the window gets one no other client has.
    let request_id = format!("inbox-{connection}-{id}");
    match open.lock() {
        Ok(cards) if cards.contains_key(&id) => {
            return Err(format!("request {id:?} is already open on this connection"));
        }
        Ok(mut cards) => {
            cards.insert(id.clone(), request_id.clone());
        }
        Err(_) => return Err("the inbox cannot keep this tool call".to_owned()),
    }
    request.request_id = request_id.clone();
    // A hook of this machine (its socket is this user's, checked on connect): the file its call
    // would change is read here. One through a link (issue 27) names a file of its remote host,
    // which this machine's file of the same path is not: the card shows what the hook read
    // there and sent, checked, never a file of this machine's.
    match host {
        None => {
            let cwd = request.cwd.clone().map(std::path::PathBuf::from);
            snapshot::attach(&mut request, cwd.as_deref());
        }
        Some(_) => request.on_disk = snapshot::sent_from_host(on_disk, &request),
    }
    // The reply of a plan's allow echoes its input (`permission::hook_reply`).
    let asked = request.clone();
    let envelope = Envelope::Hook { event: HookEvent::PermissionRequest, context };
    let provenance = Provenance { host, ..Provenance::from_envelope(source, &envelope) };
    let listed = super::card_listed(connection, &id, &asked, &provenance, policy.timeout_secs);
    let (mut reply, decision) = Responder::channel();
    // Issue 31: who decides it, for the subscribers' `settled`.
    let witness = reply.witnessed();
    let card = PermissionAsk { id: RequestId::next(), request, provenance, reply };
    let timeout = policy.timeout_secs.map(Duration::from_secs);
    // Said before the wait starts: a deadline of 0 s must not reach the client first.
    writer.send(&InboxMessage::Accepted { id: id.clone(), shown: true, warnings: Vec::new() });
    // Listed before its wait starts: one whose deadline passes at once settles it after this.
    let listed_id = listed.id.clone();
    shared.card_shown(listed);
    let waiting = {
        let waiters = &shared.waiters;
        let (shared, writer, open) = (Arc::clone(shared), Arc::clone(writer), Arc::clone(open));
        waiters.once(pending, decision, timeout, move |decided| {
            let (kind, decision) = match decided {
                Ok(decision) => (ApprovalOutcome::of(&decision), decision),
                Err(RecvTimeoutError::Timeout) => {
                    // The card leaves every window; nobody decided.
                    let gone = ApprovalEvent::TimedOutPermission { request_id };
                    shared.to_ui(Inbound::Approval(gone));
                    (ApprovalOutcome::TimedOut, PermissionDecision::HandBack)
                }
                // The window let go of the card undecided: nobody allowed it.
                Err(RecvTimeoutError::Disconnected) => {
                    (ApprovalOutcome::NoHuman, PermissionDecision::HandBack)
                }
            };
            // Withdrawn meanwhile (the client went away): nobody waits for it.
            let still_open = open.lock().map(|mut cards| cards.remove(&id).is_some());
            let settled = match still_open {
                Ok(true) => kind.as_str(),
                _ => "withdrawn",
            };
            let answered_by = witness.lock().ok().and_then(|mut witness| witness.take());
            let answered_by = answered_by.filter(|_| still_open.as_ref().is_ok_and(|open| *open));
            shared.card_settled(connection, &id, settled, answered_by);
            if still_open.unwrap_or(false) {
                writer.send(&outcome(id, &asked, kind, &decision));
            }
        })
    };
    if !waiting {
        shared.card_settled(connection, &listed_id, "withdrawn", None);
        return Err("the inbox is ending".to_owned());
    }
    shared.to_ui(Inbound::Approval(ApprovalEvent::Permission(Box::new(card))));
    Ok(())
}

/// The outcome a hook client prints: the reply line (none for a hand-back) and exit code 0,
/// which is the only code whose output Claude Code reads.
fn outcome(
    id: String,
    request: &PermissionRequest,
    kind: ApprovalOutcome,
    decision: &PermissionDecision,
) -> InboxMessage {
    InboxMessage::Outcome(OutcomeMessage {
        id,
        outcome: kind.as_str().to_owned(),
        reply: permission::hook_reply(request, decision),
        exit_code: exit::OK,
        problem: None,
    })
}
