//! What the window shows, as pure data: the request book, the receipt of what was last sent, the
//! notices, the close confirmation, and the agent session beside them.
//!
//! No egui and no channels: the view turns input into [`Action`]s, [`State::apply`] performs
//! them, and a request that ends comes out as a [`Settled`] for the app to send to its reply
//! handles. Everything the user typed lives in the book, per request and per question, so
//! switching tabs or requests loses nothing.

pub mod receipt;
// The agent session's state is the book's (issue 25: transport and store drive it too).
pub use crate::book::session;

pub use crate::book::approval::{Approvals, Asked, PendingPermission};
pub use crate::book::{
    Admission, Book, Confirm, Core, Countdown, Edit, Ending, Form, Open, Policy, ReplyHandle,
    Settled, Status, Tab, review_line,
};
pub use receipt::{Receipt, SendState};
pub use session::{
    Agent, ENTRY_LIMIT, Earlier, Entry, MAX_KEPT_BYTES, MAX_KEPT_ENTRIES, Session, SessionAction,
    SessionEffect, SessionUpdate,
};

use crate::book::journal::Journal;
use crate::protocol::origin::{Provenance, RequestId, SessionKey};
use crate::protocol::stream::{PermissionDecision, PermissionRequest, SessionEvent};
use crate::protocol::{Outcome, TextField, web};

/// Everything the user can do: an [`Edit`] of the request in front of them, or something about
/// the window, the requests list or the agent session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Edit(Edit),
    SelectRequest(RequestId),
    /// The user turns to one tool call's card (issue 26: cards are entries of the list too).
    SelectCard(RequestId),
    DismissReceipt,
    DismissNotice(usize),
    /// Any key or click while a countdown runs: the user is here, stop every countdown.
    Stay,
    /// Ctrl+W: close the window, exactly as its close button does.
    RequestClose,
    /// "Close askpane?" answered with "Keep answering".
    KeepOpen,
    /// "Close askpane?" answered with "Close": every open request is declined as closed.
    ConfirmClose,
    /// Issue 10 (inbox): "Close the inbox's window?" answered with "Keep waiting in the
    /// background": the window hides; the requests stay open.
    Hide,
    /// Something for the agent session (`askpane claude`): permissions, prompts, Stop.
    Session(SessionAction),
}

impl Action {
    /// Turning to `item`, whichever kind it is.
    pub fn select(item: Shown) -> Action {
        match item {
            Shown::Question(id) => Action::SelectRequest(id),
            Shown::Card(id) => Action::SelectCard(id),
        }
    }
}

/// What the central panel shows (issue 26): one question's form or one tool call's card. Ids
/// are given in arrival order across both, so the oldest is the smallest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    Question(RequestId),
    Card(RequestId),
}

impl Shown {
    pub fn id(self) -> RequestId {
        match self {
            Shown::Question(id) | Shown::Card(id) => id,
        }
    }
}

impl From<Edit> for Action {
    fn from(edit: Edit) -> Self {
        Action::Edit(edit)
    }
}

/// How many of each kind wait (issue 26 leftovers): what the close dialogs and the History bar
/// count, in words a person reads ([`Counts::words`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub questions: usize,
    /// Tool calls waiting for Allow or Deny (plans not counted).
    pub tool_calls: usize,
    pub plans: usize,
}

impl Counts {
    /// Every kind that waits, in words: "2 questions, 1 tool call and 1 plan", "1 plan",
    /// "nothing". The one place the window counts what waits in a sentence.
    pub fn words(self) -> String {
        let kinds = [
            (self.questions, "question", "questions"),
            (self.tool_calls, "tool call", "tool calls"),
            (self.plans, "plan", "plans"),
        ];
        let parts: Vec<String> = kinds
            .into_iter()
            .filter(|(count, _, _)| *count > 0)
            .map(|(count, one, many)| format!("{count} {}", if count == 1 { one } else { many }))
            .collect();
        match parts.split_last() {
            None => "nothing".to_owned(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// True when exactly one thing waits: the verb after [`Counts::words`] is singular.
    pub fn is_one(self) -> bool {
        self.questions + self.tool_calls + self.plans == 1
    }
}

/// The window's state. `R` is the reply handle each request carries in the book; `A` the one
/// each tool call waiting for approval carries (none in tests that show no agent session).
#[derive(Debug)]
pub struct State<R, A = ()> {
    book: Book<R>,
    approvals: Approvals<A>,
    receipt: Option<Receipt>,
    notices: Vec<String>,
    /// Requests answered so far in this run (the demo counts them).
    answered: usize,
    /// The window was asked to close while answers were in progress: ask first.
    confirm_close: bool,
    /// Issue 10 (inbox): the window belongs to the long-lived inbox; closing it hides it, and
    /// asks first whenever requests are open.
    resident: bool,
    agent: Agent,
    /// What the user turned to last (issue 26), while it waits; otherwise the oldest waiting
    /// item is shown (see [`State::shown`]).
    picked: Option<Shown>,
}

impl<R, A> Default for State<R, A> {
    fn default() -> Self {
        State {
            book: Book::default(),
            approvals: Approvals::default(),
            receipt: None,
            notices: Vec::new(),
            answered: 0,
            confirm_close: false,
            resident: false,
            agent: Agent::default(),
            picked: None,
        }
    }
}

impl<R, A> State<R, A> {
    pub fn book(&self) -> &Book<R> {
        &self.book
    }

    /// The question the user is on: none while a tool call's card is shown instead.
    pub fn current(&self) -> Option<&Open> {
        match self.shown()? {
            Shown::Question(_) => self.book.current(),
            Shown::Card(_) => None,
        }
    }

    /// What the central panel shows (issue 26): what the user turned to while it waits, else
    /// the oldest waiting item, question or tool call. (The book's own current question is the
    /// user's pick or its oldest: a pick of a card puts it back on its oldest.)
    pub fn shown(&self) -> Option<Shown> {
        let question = self.book.current().map(|open| Shown::Question(open.id()));
        match self.picked {
            Some(Shown::Card(id)) if self.card(id).is_some() => return Some(Shown::Card(id)),
            Some(Shown::Question(id)) if question == Some(Shown::Question(id)) => return question,
            _ => {}
        }
        let card = self.approvals.cards().next().map(|card| Shown::Card(card.id));
        [question, card].into_iter().flatten().min_by_key(|item| item.id())
    }

    /// The card shown in the central panel, when a tool call is.
    pub fn shown_card(&self) -> Option<&PendingPermission> {
        match self.shown()? {
            Shown::Card(id) => self.card(id),
            Shown::Question(_) => None,
        }
    }

    fn card(&self, id: RequestId) -> Option<&PendingPermission> {
        self.approvals.cards().find(|card| card.id == id)
    }

    /// Questions and tool calls waiting, together.
    pub fn waiting(&self) -> usize {
        self.book.len() + self.approvals.len()
    }

    /// What waits, by kind.
    pub fn counts(&self) -> Counts {
        let plans = self.approvals.cards().filter(|card| card.plan.is_some()).count();
        Counts { questions: self.book.len(), tool_calls: self.approvals.len() - plans, plans }
    }

    pub fn receipt(&self) -> Option<&Receipt> {
        self.receipt.as_ref()
    }

    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    pub fn answered_count(&self) -> usize {
        self.answered
    }

    /// The first plan waiting for review (issue 26), shown like any card when it is picked or
    /// the oldest waiting.
    pub fn plan(&self) -> Option<(&PendingPermission, &crate::book::plan::PlanReview)> {
        self.approvals.cards().find_map(|card| card.plan.as_ref().map(|plan| (card, plan)))
    }

    /// The tool calls waiting for the user to allow or deny them.
    pub fn permissions(&self) -> &Approvals<A> {
        &self.approvals
    }

    /// The agent session shown.
    pub fn session(&self) -> Option<&Session> {
        self.agent.session()
    }

    /// Every agent session: its key, the session, and whether it is the one shown.
    pub fn sessions(&self) -> impl Iterator<Item = (SessionKey, &Session, bool)> {
        self.agent.sessions()
    }

    /// Starts showing an agent session (before its first message, so the prompt box shows).
    pub fn start_session(&mut self, key: SessionKey, label: Option<String>, prompt: Option<&str>) {
        self.agent.start_session(key, label, prompt);
    }

    /// Records one event of an agent session.
    pub fn session_event(&mut self, key: SessionKey, event: SessionEvent) {
        self.agent.session_event(key, event);
    }

    /// The host of an agent session went away: the session leaves the window.
    pub fn end_session(&mut self, key: SessionKey) {
        self.agent.end_session(key);
    }

    /// Shows the session a browser page's bridge holds (issue 11).
    pub fn session_update(&mut self, update: SessionUpdate) {
        self.agent.session_update(SessionKey::Own, update);
    }

    /// Shows a session an inbox client hosts, as a browser page's bridge holds it.
    pub fn hosted_update(&mut self, key: SessionKey, update: SessionUpdate) {
        self.agent.session_update(key, update);
    }

    /// A tool the agent wants to run: a card, unless the same one already waits (see
    /// [`Approvals::ask`]).
    pub fn ask_permission(
        &mut self,
        id: RequestId,
        request: PermissionRequest,
        provenance: Provenance,
        reply: A,
    ) -> Asked {
        self.approvals.ask(id, request, provenance, reply)
    }

    /// Card `id` arrived at `at` (the app's clock; see [`Approvals::arrived`]).
    pub fn card_arrived(&mut self, id: RequestId, at: f64) {
        self.approvals.arrived(id, at);
    }

    /// Gives plan card `id` back what was written on it before (see [`Approvals::restore_plan`]).
    pub fn restore_plan(&mut self, id: RequestId, draft: crate::book::plan::PlanDraft) -> bool {
        self.approvals.restore_plan(id, draft)
    }

    /// Gives form card `id` back what was filled in before (see [`Approvals::restore_form`]).
    pub fn restore_form(&mut self, id: RequestId, draft: crate::book::form::FormDraft) -> bool {
        self.approvals.restore_form(id, draft)
    }

    /// True while "Close askpane?" is showing.
    pub fn confirming_close(&self) -> bool {
        self.confirm_close
    }

    /// The window is closing. Returns false (and asks the user first) when that would throw away
    /// answers in progress; true when it may close.
    pub fn request_close(&mut self) -> bool {
        // A plan's review written so far counts as typed (issue 26 leftovers); in the inbox,
        // anything waiting is asked about, since "Decline all" would end the cards too.
        let review_written = self.approvals.cards().any(|card| {
            card.plan.as_ref().is_some_and(|plan| plan.has_feedback())
                // A form typed in (issue 28) counts too: closing would cancel it.
                || card.form.as_ref().is_some_and(crate::book::form::FormReview::is_touched)
        });
        self.confirm_close = match self.resident {
            true => self.waiting() > 0,
            false => self.book.any_touched() || review_written,
        };
        !self.confirm_close
    }

    /// Issue 10 (inbox): this is the long-lived inbox's window (see [`State::resident`]).
    pub fn make_resident(&mut self) {
        self.resident = true;
    }

    /// Issue 10 (inbox): closing the window hides it; with requests open it asks first whether
    /// to decline them all or keep them waiting in the background.
    pub fn resident(&self) -> bool {
        self.resident
    }

    /// The window title: who asks (the project, else the first header), how many questions, how
    /// many requests wait in all when more than one does, and the countdown when one runs:
    /// `⏱ 0:42 · 2 waiting · orders · 3 questions — askpane`.
    pub fn title(&self, now: f64) -> String {
        let waiting = self.waiting();
        if let Some(card) = self.shown_card() {
            let name = card.provenance.project.as_deref().unwrap_or_default();
            let tool = &card.request.tool_name;
            let title = match name.trim().is_empty() {
                true => tool.to_owned(),
                false => format!("{} · {tool}", name.trim()),
            };
            // Control characters (a NUL above all) cannot go into a window title.
            let title: String = title.chars().filter(|c| !c.is_control()).collect();
            return match waiting > 1 {
                true => format!("{waiting} waiting · {title} — askpane"),
                false => format!("{title} — askpane"),
            };
        }
        let Some(current) = self.current() else { return "askpane".to_owned() };
        let core = &current.core;
        let name = core.provenance.project.as_deref().unwrap_or(core.ask.title());
        // Control characters (a NUL above all) cannot go into a window title.
        let name: String = name.chars().filter(|c| !c.is_control()).collect();
        let mut title = match core.ask.questions().len() {
            1 => "1 question".to_owned(),
            count => format!("{count} questions"),
        };
        if !name.trim().is_empty() {
            title = format!("{} · {title}", name.trim());
        }
        if waiting > 1 {
            title = format!("{waiting} waiting · {title}");
        }
        if let Some(left) = current.countdown.and_then(|countdown| countdown.left(now)) {
            let left = left.ceil() as u64;
            title = format!("⏱ {}:{:02} · {title}", left / 60, left % 60);
        }
        format!("{title} — askpane")
    }

    /// Takes a request into the book (see [`Book::admit`]). A decided one is recorded like any
    /// other ending; its handle comes back for the caller to send the outcome to.
    pub fn admit(&mut self, core: Core, policy: Policy, reply: R, now: f64) -> Admission<R> {
        self.book.admit(core, policy, reply, now)
    }

    pub fn notify(&mut self, notice: String) {
        self.notices.push(notice);
    }

    /// Notes how a request ended: the receipt of what was sent, a notice with what the user
    /// typed when it went without them, the count of answers.
    fn record(&mut self, settled: &Settled<R>) {
        let open = &settled.open;
        let title = open.core.ask.title();
        let headline = match &settled.ending {
            Ending::Withdrawn => Some(format!(
                "{} withdrew “{title}” before it was answered.",
                open.core.provenance.shown()
            )),
            Ending::Elsewhere { how } => Some(format!("“{title}” was {how}.")),
            Ending::Deadline { unsent } if !unsent.is_empty() => Some(format!(
                "Time ran out on “{title}” while you were typing; this was not sent:\n{}",
                unsent.join("\n")
            )),
            Ending::User | Ending::Deadline { .. } | Ending::Closed => None,
        };
        if let Some(mut notice) = headline {
            let typed = open.typed_text();
            let gone = matches!(settled.ending, Ending::Withdrawn | Ending::Elsewhere { .. });
            if gone && !typed.is_empty() {
                notice.push_str("\nWhat you typed:\n");
                notice.push_str(&typed);
            }
            self.notices.push(notice);
        }
        if matches!(settled.ending, Ending::User | Ending::Deadline { .. }) {
            self.receipt = Some(Receipt::new(open, &settled.outcome, &settled.ending));
        }
        if matches!(settled.outcome, Outcome::Answered(_)) {
            self.answered += 1;
        }
    }

    /// Records and returns what the book settled.
    fn recorded(&mut self, settled: Option<Settled<R>>) -> Option<Settled<R>> {
        let settled = settled?;
        self.record(&settled);
        Some(settled)
    }

    /// The agent withdrew the question with this tool_use_id; what the user typed stays in a
    /// notice.
    pub fn withdraw(&mut self, tool_use_id: &str) -> Option<Settled<R>> {
        let settled = self.book.withdraw(tool_use_id);
        self.recorded(settled)
    }

    /// Whoever asked as `asker` went away (see [`Book::leave`]); what the user typed stays in a
    /// notice when that withdraws the request.
    pub fn leave(&mut self, asker: RequestId) -> Option<Settled<R>> {
        let settled = self.book.leave(asker);
        self.recorded(settled)
    }

    /// Issue 31: a front end's answer through the inbox socket, by the page's rules.
    pub fn answer_from_front_end(
        &mut self,
        id: RequestId,
        message: crate::protocol::web::BrowserMessage,
    ) -> Result<Settled<R>, crate::book::FrontEndRefusal> {
        let settled = self.book.answer_from_front_end(id, message)?;
        self.record(&settled);
        Ok(settled)
    }

    /// The question was settled elsewhere (`how`: "answered in another window").
    pub fn settled_elsewhere(&mut self, tool_use_id: &str, how: &str) -> Option<Settled<R>> {
        let settled = self.book.settled_elsewhere(tool_use_id, how);
        self.recorded(settled)
    }

    /// Ends every open request with `outcome` (the window closes, askpane is stopped).
    pub fn close_all(&mut self, outcome: &Outcome) -> Vec<Settled<R>> {
        self.book.close_all(outcome)
    }

    /// Ends every request whose countdown ran out (see [`Book::expire`]).
    pub fn expire(
        &mut self,
        now: f64,
        typing: &dyn Fn(RequestId, usize, TextField) -> bool,
    ) -> Vec<Settled<R>> {
        let settled = self.book.expire(now, typing);
        settled.iter().for_each(|settled| self.record(settled));
        settled
    }

    /// Another window changed the countdown of `tool_use_id`: `left_secs` from `now`, or stopped.
    pub fn countdown_changed(&mut self, tool_use_id: &str, now: f64, left_secs: Option<u64>) {
        self.book.countdown_changed(tool_use_id, now, left_secs);
    }

    /// The earliest running deadline, so the app knows when to wake.
    pub fn next_deadline(&self) -> Option<f64> {
        self.book.next_deadline()
    }

    /// True while some request's countdown runs.
    pub fn counting_down(&self) -> bool {
        self.book.counting_down()
    }

    /// askpane acknowledged the outcome of `tool_use_id`; the receipt says "Sent".
    pub fn delivered(&mut self, tool_use_id: &str) {
        if let Some(receipt) = self.receipt_for(tool_use_id) {
            receipt.send_state = SendState::Sent;
        }
    }

    /// The outcome of `tool_use_id` did not count (`why`); the receipt and a notice say so.
    pub fn not_delivered(&mut self, tool_use_id: &str, why: String) {
        if let Some(receipt) = self.receipt_for(tool_use_id) {
            receipt.send_state = SendState::NotSent(why.clone());
        }
        self.notices.push(why);
    }

    /// askpane refused what was sent for request `id` (admitted again, with the form as it was).
    /// It comes back as the user left it, showing `error` (on `question`'s page when it names
    /// one) or the reply or decline box it came from.
    pub fn returned(
        &mut self,
        id: RequestId,
        refused: &Outcome,
        error: &str,
        question: Option<usize>,
    ) {
        let mut tool_use_id = None;
        self.book.revise(id, |open| {
            open.confirm = match refused {
                Outcome::Replied(reply) => Some(Confirm::Reply { text: reply.text().to_owned() }),
                Outcome::Declined { message } | Outcome::Stopped { message } => {
                    Some(Confirm::Decline { message: web::decline_words(message) })
                }
                _ => None,
            };
            if let Some(question) = question.filter(|&q| q < open.forms.len()) {
                open.tab = Tab::Question(question);
            }
            open.error = Some(format!("Not sent: {error}. Change it and send again."));
            tool_use_id = open.core.envelope.tool_use_id().map(str::to_owned);
        });
        if !self.book.select(id) {
            return;
        }
        self.picked = Some(Shown::Question(id));
        if self.receipt.as_ref().is_some_and(|receipt| receipt.tool_use_id == tool_use_id) {
            self.receipt = None;
        }
    }

    fn receipt_for(&mut self, tool_use_id: &str) -> Option<&mut Receipt> {
        self.receipt.as_mut().filter(|receipt| receipt.tool_use_id.as_deref() == Some(tool_use_id))
    }

    /// Performs one edit of the current request (see [`Action::Edit`]).
    pub fn edit(&mut self, edit: Edit) -> Option<Settled<R>> {
        self.apply(Action::Edit(edit))
    }

    /// Performs one action; returns the request it settled, if any.
    pub fn apply(&mut self, action: Action) -> Option<Settled<R>> {
        match action {
            // The form is not shown while a card is: its keys cannot reach it.
            Action::Edit(_) if matches!(self.shown(), Some(Shown::Card(_))) => None,
            Action::Edit(edit) => {
                let settled = self.book.edit(edit);
                self.recorded(settled)
            }
            Action::SelectRequest(id) => {
                if self.book.select(id) {
                    self.picked = Some(Shown::Question(id));
                    self.receipt = None;
                }
                None
            }
            Action::SelectCard(id) => {
                if self.card(id).is_some() {
                    self.picked = Some(Shown::Card(id));
                    // Once this card is decided, the oldest item is shown, not a question
                    // picked before it.
                    let oldest = self.book.requests().next().map(Open::id);
                    if let Some(oldest) = oldest {
                        self.book.select(oldest);
                    }
                    self.receipt = None;
                }
                None
            }
            Action::DismissReceipt => {
                self.receipt = None;
                None
            }
            Action::DismissNotice(index) => {
                if index < self.notices.len() {
                    self.notices.remove(index);
                }
                None
            }
            Action::KeepOpen | Action::Hide => {
                self.confirm_close = false;
                None
            }
            Action::Stay => {
                self.book.stay();
                None
            }
            // The app closes the window; the close path then asks or declines.
            Action::RequestClose | Action::ConfirmClose => None,
            // Session actions go through `apply_session`.
            Action::Session(_) => None,
        }
    }
}

impl<R: ReplyHandle<Outcome>, A> State<R, A> {
    /// Takes a request into the book as every driver does ([`Book::take`]): `journal` hears of
    /// it, and one its policy decides is answered at once. The id when it opened.
    pub fn take(
        &mut self,
        core: Core,
        policy: Policy,
        reply: R,
        now: f64,
        journal: Option<&dyn Journal>,
    ) -> Option<RequestId> {
        self.book.take(core, policy, reply, now, journal)
    }
}

impl<R, A: ReplyHandle<PermissionDecision>> State<R, A> {
    /// Issue 31: a front end's decision on a card through the inbox socket.
    pub fn decide_from_front_end(
        &mut self,
        request_id: &str,
        decision: crate::protocol::stream::PermissionDecision,
        answered_by: &str,
    ) -> Result<crate::protocol::web::PermissionEnd, crate::book::FrontEndRefusal> {
        self.approvals.decide_from_front_end(request_id, decision, answered_by)
    }

    /// Applies what the user did to the agent session or to its cards (a decision goes to the
    /// agent at once: [`Approvals::apply`]); returns what the app must send.
    pub fn apply_session(&mut self, action: SessionAction) -> Option<SessionEffect> {
        match action {
            SessionAction::AllowPermission(_)
            | SessionAction::AlwaysAllowPermission { .. }
            | SessionAction::DenyPermission(_)
            | SessionAction::AlwaysDenyPermission { .. }
            | SessionAction::HandBackPermission(_)
            | SessionAction::SetDenyMessage { .. }
            | SessionAction::Plan { .. }
            | SessionAction::Form { .. } => self.approvals.apply(&action),
            action => self.agent.apply_session(action),
        }
    }

    /// The agent took back the tool call `request_id` (see [`Approvals::withdraw`]).
    pub fn withdraw_permission(&mut self, request_id: &str) -> Option<RequestId> {
        self.approvals.withdraw(request_id)
    }

    /// `--timeout` ran out on the tool call `request_id` (see [`Approvals::time_out`]).
    pub fn time_out_permission(&mut self, request_id: &str) -> Option<RequestId> {
        self.approvals.time_out(request_id)
    }

    /// The cards that ended since the last call, for the journal (issue 26).
    pub fn take_ended_permissions(&mut self) -> Vec<crate::book::approval::EndedApproval> {
        self.approvals.take_ended()
    }

    /// The window ends with cards undecided: denied with `message` when askpane was stopped
    /// (it says why), else with what a dropped handle says (the window closed); a hook's card
    /// is handed back to Claude Code's own dialog either way ([`Approvals::close_all`]).
    pub fn close_permissions(&mut self, message: Option<&str>) {
        let message = message.unwrap_or(crate::transport::CLOSED_WITHOUT_DECIDING);
        self.approvals.close_all(message);
    }
}

#[cfg(test)]
mod tests;
