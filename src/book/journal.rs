//! [`Journal`]: where the window reports what happens to requests so that something beside the
//! book can keep it (issue 11: the store's drafts and history). The window only calls it; the
//! implementation (natively `store::DraftSink`) must return at once and do its work elsewhere.

use crate::book::approval::{EndedApproval, PendingPermission};
use crate::book::form::FormDraft;
use crate::book::plan::PlanDraft;
use crate::book::{Core, Form, Policy};
use crate::protocol::Outcome;
use crate::protocol::history::{HistoryFilter, HistoryPage};

/// Where a History page goes once read: natively the app's channel, and a repaint.
pub type HistoryDone = Box<dyn FnOnce(HistoryPage) + Send>;

/// What the window tells a journal. Every call happens on the UI thread and must be cheap.
pub trait Journal {
    /// A request is about to be admitted: fill `policy` with what the user had typed into the
    /// same question before (a crash, a restart), when the journal kept it. Called once per
    /// arriving request, never per keystroke.
    fn restore(&self, core: &Core, policy: &mut Policy);
    /// A request opened for the user.
    fn opened(&self, core: &Core);
    /// The user changed question `question`'s form of this request.
    fn draft_changed(&self, core: &Core, question: usize, form: &Form);
    /// The request ended with `outcome`.
    fn settled(&self, core: &Core, outcome: &Outcome);
    /// Issue 31: the request ended with `outcome`, which `answered_by` gave (`window`, `page`,
    /// `socket:<label>`); a journal that keeps no such thing records it as [`Journal::settled`].
    fn settled_by(&self, core: &Core, outcome: &Outcome, answered_by: Option<&str>) {
        let _ = answered_by;
        self.settled(core, outcome);
    }
    /// Issue 26: a tool call's card opened for the user (history keeps when it was asked).
    fn approval_opened(&self, card: &PendingPermission) {
        let _ = card;
    }
    /// Issue 26: an approval ended, however it ended (decided in the window or a page,
    /// withdrawn, timed out, nobody to decide, or decided by a flag before it was shown).
    fn approval_ended(&self, ended: &EndedApproval) {
        let _ = ended;
    }
    /// When the call `card` shows was first asked, in Unix milliseconds (an inbox that died
    /// with it open kept it; its relay asks again): its age counts from then.
    fn card_first_asked(&self, card: &PendingPermission) -> Option<u64> {
        let _ = card;
        None
    }
    /// A plan's card opened: what was written on the same plan before (a crash, a restart,
    /// the agent asking again), when the journal kept it. Called once per card.
    fn restore_plan(&self, card: &PendingPermission) -> Option<PlanDraft> {
        let _ = card;
        None
    }
    /// The person changed plan card `card`'s review (a comment, the note, the choice after
    /// approval): keep it ([`PlanReview::draft`](crate::book::plan::PlanReview::draft)).
    fn plan_changed(&self, card: &PendingPermission) {
        let _ = card;
    }
    /// A form's card opened (an ACP agent's `elicitation/create`): what was filled in on the same
    /// form before (a crash, a restart: a relay's new inbox asks it again), when the journal kept
    /// it. Called once per card.
    fn restore_form(&self, card: &PendingPermission) -> Option<FormDraft> {
        let _ = card;
        None
    }
    /// The person changed a field of form card `card`: keep what is filled in
    /// ([`FormReview::draft`](crate::book::form::FormReview::draft)).
    fn form_changed(&self, card: &PendingPermission) {
        let _ = card;
    }
    /// Issue 11 (History page): true when this journal can read its history back.
    fn keeps_history(&self) -> bool {
        false
    }
    /// Reads the History page `filter` asks for, off the UI thread, and hands it to `done`.
    fn history(&self, filter: &HistoryFilter, done: HistoryDone) {
        let _ = (filter, done);
    }
}
