//! Approvals: the tool calls an agent wants to make, each waiting for the person to allow or deny
//! it (the window's and the page's permission cards). They live here, beside the questions, with
//! one map from each card to every reply handle waiting on it, so the native window and the
//! browser bridge keep them by the same rules: shown once however often asked, decided once, and
//! whoever waits always hears how it ended (allowed, denied with the person's words, withdrawn by
//! the agent, or denied because askpane ended).
//!
//! Pure like the rest of the book: no IO, no egui, no clock; generic over the reply handle `R`
//! (natively a `Responder<PermissionDecision>`, in tests a plain value). A decision goes to the
//! handles through [`ReplyHandle`]; a handle dropped undecided says what its own `Drop` says.

use super::ReplyHandle;
use super::form::FormReview;
use super::plan::PlanReview;
use super::session::{SessionAction, SessionEffect};
use super::tool_call::ToolCallView;
use crate::protocol::origin::{Provenance, RequestId};
use crate::protocol::permission::{self, ApprovalOutcome, PermissionChoice};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::web::PermissionEnd;

/// What the agent's handle hears when the agent itself takes back a tool call it asked about
/// (nobody reads it: the agent no longer waits; it is said rather than nothing).
pub const WITHDRAWN_BY_AGENT: &str = "Withdrawn by the agent.";

/// A tool the agent wants to run, waiting for the user: what the card shows.
#[derive(Clone, Debug)]
pub struct PendingPermission {
    pub id: RequestId,
    pub request: PermissionRequest,
    pub provenance: Provenance,
    /// The message sent with a deny, as typed so far.
    pub deny_message: String,
    /// What the card shows of the call, prepared once when it arrived (issue 26).
    pub view: ToolCallView,
    /// The call in one line ("Bash: npm test"), for the request list; made once, as a large
    /// input is serialised to make it.
    pub summary: String,
    /// A plan to review (`ExitPlanMode`), drawn as a plan page in the card's place, with the
    /// review so far.
    pub plan: Option<PlanReview>,
    /// A form to fill in (an ACP agent's `elicitation/create`), drawn as its fields in the
    /// card's place, with what is filled in so far (issue 28).
    pub form: Option<FormReview>,
    /// When the driver received it, on the driver's own clock (the book reads none): what its
    /// age in the list counts from. `None` until the driver says ([`Approvals::arrived`]).
    pub arrived_at: Option<f64>,
}

/// What [`Approvals::ask`] did with a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    /// A new card, shown to the user.
    Opened(RequestId),
    /// A card for the same request_id already waits (the agent asked again): this handle waits
    /// on it too, and nothing new is shown.
    Joined(RequestId),
}

/// What the agent's handle hears when `--timeout` runs out on a card nobody decided (nobody
/// reads it either: a hook's card is handed back).
pub const TIMED_OUT: &str = "No decision before askpane's --timeout ran out.";

/// A card that ended, for the journal (issue 26: history keeps every approval): what was
/// asked, who asked, how it ended, and the decision its handles heard.
#[derive(Clone, Debug)]
pub struct EndedApproval {
    pub id: RequestId,
    pub request: PermissionRequest,
    pub provenance: Provenance,
    pub outcome: ApprovalOutcome,
    pub decision: PermissionDecision,
    /// Issue 31: who decided it (`window`, `page`, `socket:<label>`); `None` where nobody did.
    pub answered_by: Option<String>,
}

/// Who decided a card decided by [`Approvals::decide`] (a browser page), as history keeps it.
const PAGE: &str = "page";

/// Who decided a card decided by [`Approvals::apply`] (this window), as history keeps it.
const WINDOW: &str = "window";

/// One card and every handle waiting for its decision.
#[derive(Debug)]
struct Approval<R> {
    card: PendingPermission,
    replies: Vec<R>,
}

/// Every tool call waiting for a decision, oldest first, and the cards that ended since the
/// driver last took them ([`Approvals::take_ended`]).
#[derive(Debug)]
pub struct Approvals<R> {
    waiting: Vec<Approval<R>>,
    ended: Vec<EndedApproval>,
}

impl<R> Default for Approvals<R> {
    fn default() -> Self {
        Approvals { waiting: Vec::new(), ended: Vec::new() }
    }
}

impl<R> Approvals<R> {
    /// Takes a tool call in. The same `request.request_id` asked again joins the card already
    /// shown (request ids are the agent's own; the inbox makes each client's unique).
    pub fn ask(
        &mut self,
        id: RequestId,
        request: PermissionRequest,
        provenance: Provenance,
        reply: R,
    ) -> Asked {
        if let Some(approval) = self.find_mut(&request.request_id) {
            approval.replies.push(reply);
            return Asked::Joined(approval.card.id);
        }
        let view = ToolCallView::of(&request);
        let plan = PlanReview::of(&request);
        let form = FormReview::of(&request);
        let deny_message = String::new();
        let summary = crate::protocol::stream::tool_summary(&request.tool_name, &request.input);
        let arrived_at = None;
        let card = PendingPermission {
            id,
            request,
            provenance,
            deny_message,
            view,
            summary,
            plan,
            form,
            arrived_at,
        };
        self.waiting.push(Approval { card, replies: vec![reply] });
        Asked::Opened(id)
    }

    /// The cards waiting, oldest first.
    pub fn cards(&self) -> impl ExactSizeIterator<Item = &PendingPermission> + '_ {
        self.waiting.iter().map(|approval| &approval.card)
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The card waiting under the agent's `request_id`.
    pub fn by_request_id(&self, request_id: &str) -> Option<&PendingPermission> {
        self.cards().find(|card| card.request.request_id == request_id)
    }

    fn find_mut(&mut self, request_id: &str) -> Option<&mut Approval<R>> {
        self.waiting.iter_mut().find(|approval| approval.card.request.request_id == request_id)
    }

    /// Card `id` arrived at `at` (the driver's clock): its age counts from then.
    pub fn arrived(&mut self, id: RequestId, at: f64) {
        if let Some(card) = self.card_mut(id) {
            card.arrived_at = Some(at);
        }
    }

    /// Gives plan card `id` back what the person wrote on it before (a crash, a restart: the
    /// store's [`PlanDraft`](super::plan::PlanDraft)). False when no such plan waits.
    pub fn restore_plan(&mut self, id: RequestId, draft: super::plan::PlanDraft) -> bool {
        let Some(review) = self.card_mut(id).and_then(|card| card.plan.as_mut()) else {
            return false;
        };
        review.restore(draft);
        true
    }

    /// Gives form card `id` back what was filled in before ([`FormReview::restore`]); false when
    /// no such form waits.
    pub fn restore_form(&mut self, id: RequestId, draft: super::form::FormDraft) -> bool {
        let Some(review) = self.card_mut(id).and_then(|card| card.form.as_mut()) else {
            return false;
        };
        review.restore(draft);
        true
    }

    /// The waiting card `id`, to change.
    fn card_mut(&mut self, id: RequestId) -> Option<&mut PendingPermission> {
        let approval = self.waiting.iter_mut().find(|approval| approval.card.id == id)?;
        Some(&mut approval.card)
    }

    /// Takes the card `id` out with its handles.
    fn take(&mut self, id: RequestId) -> Option<Approval<R>> {
        let index = self.waiting.iter().position(|approval| approval.card.id == id)?;
        Some(self.waiting.remove(index))
    }

    /// Ends every card without a decision: each handle is dropped and says what a dropped one
    /// says (natively: "The user closed askpane without deciding."). Each ends as no human
    /// decided it.
    pub fn clear(&mut self) {
        for approval in self.waiting.drain(..) {
            let PendingPermission { id, request, provenance, .. } = approval.card;
            let (outcome, decision) = (ApprovalOutcome::NoHuman, PermissionDecision::HandBack);
            let answered_by = None;
            self.ended.push(EndedApproval {
                id,
                request,
                provenance,
                outcome,
                decision,
                answered_by,
            });
        }
    }

    /// The cards that ended since the last call, oldest first, for the driver to hand to its
    /// journal: every card ends here exactly once, however it ended (issue 26).
    pub fn take_ended(&mut self) -> Vec<EndedApproval> {
        std::mem::take(&mut self.ended)
    }
}

impl<R: ReplyHandle<PermissionDecision>> Approvals<R> {
    /// Sends `decision` to every handle of `approval` (told first who decided it, issue 31),
    /// and notes that it ended as `outcome`, decided by `answered_by` (`None`: nobody did);
    /// returns its card.
    fn end(
        &mut self,
        approval: Approval<R>,
        decision: PermissionDecision,
        outcome: ApprovalOutcome,
        answered_by: Option<&str>,
    ) -> PendingPermission {
        for mut reply in approval.replies {
            if let Some(answered_by) = answered_by {
                reply.answered_by(answered_by);
            }
            reply.send(decision.clone());
        }
        let card = approval.card;
        self.ended.push(EndedApproval {
            id: card.id,
            request: card.request.clone(),
            provenance: card.provenance.clone(),
            outcome,
            decision,
            answered_by: answered_by.map(str::to_owned),
        });
        card
    }

    /// Decides card `id` as `answered_by` did (`None`: nobody): every handle hears `decision`.
    /// `None` when it no longer waits (decided already, withdrawn).
    fn decide_card(
        &mut self,
        id: RequestId,
        decision: PermissionDecision,
        outcome: ApprovalOutcome,
        answered_by: Option<&str>,
    ) -> Option<()> {
        let approval = self.take(id)?;
        self.end(approval, decision, outcome, answered_by);
        Some(())
    }

    /// What the user did to a card in this window ([`SessionAction::AllowPermission`],
    /// [`SessionAction::AlwaysAllowPermission`], [`SessionAction::DenyPermission`],
    /// [`SessionAction::HandBackPermission`], [`SessionAction::SetDenyMessage`]): a decision goes
    /// to every handle at once and is returned as [`SessionEffect::Decided`]; a choice the card
    /// does not offer (a suggestion it lacks, a hand-back with nowhere to go) and other actions
    /// change nothing here.
    pub fn apply(&mut self, action: &SessionAction) -> Option<SessionEffect> {
        self.apply_here(action)
    }

    fn apply_here(&mut self, action: &SessionAction) -> Option<SessionEffect> {
        let (id, choice) = match action {
            SessionAction::AllowPermission(id) => (*id, PermissionChoice::AllowOnce),
            SessionAction::AlwaysAllowPermission { id, suggestion } => {
                (*id, PermissionChoice::AllowAlways { suggestion: *suggestion })
            }
            SessionAction::DenyPermission(id) => {
                let card = self.cards().find(|card| card.id == *id)?;
                (*id, PermissionChoice::Deny { message: deny_words(&card.deny_message) })
            }
            SessionAction::AlwaysDenyPermission { id, rule } => {
                let card = self.cards().find(|card| card.id == *id)?;
                let rule = card.request.deny_always.get(*rule)?.clone();
                let message = deny_words(&card.deny_message);
                let decision = PermissionDecision::DenyAlways { rule, message };
                return self.decided_in_window(*id, decision);
            }
            SessionAction::HandBackPermission(id) => (*id, PermissionChoice::HandBack),
            SessionAction::SetDenyMessage { id, text } => {
                let approval = self.waiting.iter_mut().find(|approval| approval.card.id == *id)?;
                approval.card.deny_message.clone_from(text);
                return None;
            }
            SessionAction::Plan { id, action } => {
                let approval = self.waiting.iter_mut().find(|approval| approval.card.id == *id)?;
                let outcome = approval.card.plan.as_mut()?.apply(action.clone())?;
                let decision = outcome.decision();
                return self.decided_in_window(*id, decision);
            }
            SessionAction::Form { id, action } => {
                let approval = self.waiting.iter_mut().find(|approval| approval.card.id == *id)?;
                let decision = approval.card.form.as_mut()?.apply(action.clone())?.decision();
                return self.decided_in_window(*id, decision);
            }
            _ => return None,
        };
        let card = self.cards().find(|card| card.id == id)?;
        let decision = choice.decide(&card.request)?;
        self.decided_in_window(id, decision)
    }

    /// The person decided card `id` in the window (or the page): the decision goes to the card's
    /// reply, recorded as the window's, and the session hears it.
    fn decided_in_window(
        &mut self,
        id: RequestId,
        decision: PermissionDecision,
    ) -> Option<SessionEffect> {
        self.decide_card(id, decision.clone(), ApprovalOutcome::of(&decision), Some(WINDOW))?;
        Some(SessionEffect::Decided { id, decision })
    }

    /// A decision made elsewhere (a browser page: the deny words built there by the same
    /// rules, [`deny_words`]) on the card the agent knows as `request_id`. Returns how the card
    /// ended, for the other pages; `None` when no such card waits, or the card does not offer
    /// that decision (a rule the agent did not suggest, a hand-back with nowhere to go).
    pub fn decide(
        &mut self,
        request_id: &str,
        decision: PermissionDecision,
    ) -> Option<PermissionEnd> {
        self.decide_as(request_id, decision, PAGE)
    }

    /// [`Approvals::decide`], decided by `answered_by`.
    fn decide_as(
        &mut self,
        request_id: &str,
        decision: PermissionDecision,
        answered_by: &str,
    ) -> Option<PermissionEnd> {
        let card = self.by_request_id(request_id)?;
        if !offered(&card.request, &decision) {
            return None;
        }
        // A form's content sent from elsewhere passes the same check as a Send here.
        if let (PermissionDecision::Fill { content }, Some(form)) = (&decision, &card.form)
            && !form.accepts(content)
        {
            return None;
        }
        let id = card.id;
        let end = match decision {
            PermissionDecision::AllowOnce
            | PermissionDecision::AllowAlways { .. }
            | PermissionDecision::Fill { .. } => PermissionEnd::Allowed,
            PermissionDecision::Deny { .. } | PermissionDecision::DenyAlways { .. } => {
                PermissionEnd::Denied
            }
            PermissionDecision::HandBack => PermissionEnd::HandedBack,
        };
        let outcome = ApprovalOutcome::of(&decision);
        self.decide_card(id, decision, outcome, Some(answered_by))?;
        Some(end)
    }

    /// Issue 31: a front end's decision on the card `request_id` (the inbox socket's
    /// `decide`), by [`Approvals::decide`]'s rules: refused when the card has ended (decided
    /// first elsewhere, withdrawn) or does not offer that decision (it then stays open).
    pub fn decide_from_front_end(
        &mut self,
        request_id: &str,
        decision: PermissionDecision,
        answered_by: &str,
    ) -> Result<PermissionEnd, super::FrontEndRefusal> {
        let open = self.by_request_id(request_id).is_some();
        let end = self.decide_as(request_id, decision, answered_by).ok_or(match open {
            true => super::FrontEndRefusal::Invalid(
                crate::protocol::web::BrowserError::NotOffered(request_id.to_owned()),
            ),
            false => super::FrontEndRefusal::Ended,
        })?;
        Ok(end)
    }

    /// The agent took back the tool call `request_id`: the card goes, and its handles hear
    /// [`WITHDRAWN_BY_AGENT`] (a hook's: no decision). Returns the card's id; `None` when no
    /// such card waits (decided already: the decision stands).
    pub fn withdraw(&mut self, request_id: &str) -> Option<RequestId> {
        self.end_undecided(request_id, WITHDRAWN_BY_AGENT, ApprovalOutcome::Withdrawn)
    }

    /// `--timeout` ran out on the card `request_id` with nobody deciding: it goes as a
    /// withdrawn one does ([`TIMED_OUT`] for its handles), and ends as timed out.
    pub fn time_out(&mut self, request_id: &str) -> Option<RequestId> {
        self.end_undecided(request_id, TIMED_OUT, ApprovalOutcome::TimedOut)
    }

    fn end_undecided(
        &mut self,
        request_id: &str,
        message: &str,
        outcome: ApprovalOutcome,
    ) -> Option<RequestId> {
        let card = self.by_request_id(request_id)?;
        let (id, decision) = (card.id, undecided(&card.request, message));
        self.decide_card(id, decision, outcome, None)?;
        Some(id)
    }

    /// askpane ends (stopped, the window closed, or the bridge ended) with cards undecided: a
    /// tool call is never allowed for want of a person, so every one is denied with `message`,
    /// or, where the agent can ask on its own (a hook), left to it. Returns the cards.
    pub fn close_all(&mut self, message: &str) -> Vec<PendingPermission> {
        let waiting = std::mem::take(&mut self.waiting);
        let ended = waiting.into_iter().map(|approval| {
            let decision = undecided(&approval.card.request, message);
            self.end(approval, decision, ApprovalOutcome::NoHuman, None)
        });
        ended.collect()
    }
}

/// What a card nobody decided tells its agent: a hook's hands the call back (print nothing:
/// Claude Code's own dialog or policy decides); a hosted session's is denied with `message`.
/// The one rule for every card that ends without the person (the window's, and a relay's when
/// its inbox or link is gone).
pub fn undecided(request: &PermissionRequest, message: &str) -> PermissionDecision {
    // A form nobody filled in is no decline of the person's: it is cancelled (a hand-back).
    match request.origin.can_hand_back() || permission::is_form(request) {
        true => PermissionDecision::HandBack,
        false => PermissionDecision::Deny { message: message.to_owned() },
    }
}

/// Whether `request`'s card offers `decision`: a rule only if the agent suggested it, a
/// hand-back only where the agent can ask on its own; a plan's "approve and accept edits" too.
fn offered(request: &PermissionRequest, decision: &PermissionDecision) -> bool {
    let form = permission::is_form(request);
    match decision {
        // A form is sent filled in, never allowed bare: an allow would give the agent content
        // the person did not give.
        PermissionDecision::AllowOnce => !form,
        PermissionDecision::Deny { .. } => true,
        PermissionDecision::DenyAlways { rule, .. } => request.deny_always.contains(rule),
        PermissionDecision::Fill { .. } => form,
        PermissionDecision::AllowAlways { suggestion } => {
            request.suggestions.contains(suggestion)
                || (permission::is_plan(request) && *suggestion == permission::accept_edits())
        }
        PermissionDecision::HandBack => request.origin.can_hand_back(),
    }
}

/// What the model reads when the user denies a tool call without words.
const DENIED: &str = "The user denied this tool call.";
/// What comes before the user's words when they gave any.
const DENIED_SAYING: &str = "The user denied this tool call and said: ";

/// What the model reads when the user denies a tool call, with their words when they gave any.
pub fn deny_words(typed: &str) -> String {
    match typed.trim() {
        "" => DENIED.to_owned(),
        text => format!("{DENIED_SAYING}{text}"),
    }
}

/// The user's own words in a deny's message, for an agent that wraps them in a sentence of its
/// own (OpenCode: "… with the following feedback: <words>"): what [`deny_words`] was given, or
/// the whole message when it was not built by it (`--decline MESSAGE`, as given); `None` for
/// a deny without words.
pub fn said_words(message: &str) -> Option<&str> {
    let message = message.trim();
    let words = message.strip_prefix(DENIED_SAYING.trim_end()).map_or(message, str::trim_start);
    (!words.is_empty() && message != DENIED).then_some(words)
}
