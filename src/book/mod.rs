//! The request book: the one place a request lives, from the moment an adapter hands it in to the
//! outcome that goes back to the agent that asked.
//!
//! Pure: no egui, no IO, no threads, no clock (the driver passes the time in). Generic over the
//! reply handle `R`, so every front end drives the same book (the native window and the browser
//! page with their responders, the bridge's hub, a host with no window) and tests need no
//! channels. A request comes in as a [`Core`] (what was asked) and a [`Policy`] (how it may be
//! answered besides by the user); [`Book::admit`] lets the policy decide or opens it; the user's
//! [`Edit`]s, a withdrawal, a countdown or a close settle it, and every way out returns a
//! [`Settled`]: the outcome, every reply handle waiting on it, and how it ended.
//!
//! Beside it: [`approval`], the tool calls waiting for the user to allow or deny them;
//! [`session`], the agent session a host shows (its transcript and prompt); [`journal`], what the
//! book reports for something else to keep (the store); [`policy`], the one rule that turns a
//! client's answering flags into a request's [`Policy`]; and [`followed`], the questions held for a
//! server askpane follows (OpenCode). All are pure too, so the window, the browser bridge and the
//! store all drive the same state (`scripts/check-layers` keeps it so).

pub mod approval;
pub mod diff;
pub mod followed;
pub mod form;
pub mod journal;
pub mod plan;
pub mod policy;
pub mod request;
pub mod session;
#[cfg(test)]
mod tests;
pub mod tool_call;

pub use request::{
    Confirm, Core, Countdown, Edit, Form, Open, Policy, Status, Tab, fit_forms, review_line,
};

use crate::protocol::origin::RequestId;
use crate::protocol::web::{BrowserError, BrowserMessage, TimeoutChange};
use crate::protocol::{Outcome, TextField};
use journal::Journal;

/// Why a front end's answer was not taken (issue 31).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrontEndRefusal {
    /// The request is no longer open: answered first by someone else, withdrawn, timed out.
    Ended,
    /// The answer does not fit the request (an option it does not have, …).
    Invalid(BrowserError),
}

/// A reply handle: where the one answer to an ask goes (natively a `Responder`, whose `Drop`
/// still tells the agent when nothing was sent). The book holds handles and never sends on its
/// own; the methods a driver calls to hand an ending on ([`Settled::deliver`], [`Book::take`],
/// [`approval::Approvals`]) send through this.
pub trait ReplyHandle<T> {
    fn send(self, answer: T);

    /// Issue 31: the answer about to be sent was given by `answered_by` (`window`, `page`,
    /// `socket:<label>`), told before [`ReplyHandle::send`]. Only the inbox's handles keep it
    /// (its subscribers' `settled` says who); others ignore it.
    fn answered_by(&mut self, answered_by: &str) {
        let _ = answered_by;
    }
}

/// A handle nobody waits on (the book's and the window's tests).
impl<T> ReplyHandle<T> for () {
    fn send(self, _: T) {}
}

/// The request is not open, or has no countdown to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoCountdown;

/// How a request ended, besides its outcome: what the receipt and the notices say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The user decided it here.
    User,
    /// Its countdown ran out; `unsent` is what was being typed then and not sent.
    Deadline { unsent: Vec<String> },
    /// The agent withdrew it.
    Withdrawn,
    /// It was decided elsewhere; `how` completes "“X” was …" ("answered in another window").
    Elsewhere { how: String },
    /// Everything open ended at once (the window closed, askpane was stopped).
    Closed,
}

/// A request with its outcome: what goes back, to every handle waiting on it.
#[derive(Debug)]
pub struct Settled<R> {
    /// The request as it was when it ended.
    pub open: Open,
    pub outcome: Outcome,
    pub replies: Vec<R>,
    pub ending: Ending,
}

/// A settled request once every handle heard its outcome ([`Settled::deliver`]): what the
/// driver still shows or tells (a receipt, its pages).
#[derive(Debug)]
pub struct Delivered {
    pub open: Open,
    pub outcome: Outcome,
    pub ending: Ending,
}

impl<R: ReplyHandle<Outcome>> Settled<R> {
    /// What every driver does with a settled request: `journal` records the outcome, then every
    /// handle waiting on it hears it.
    pub fn deliver(self, journal: Option<&dyn Journal>) -> Delivered {
        self.deliver_by(journal, None)
    }

    /// [`Settled::deliver`], with who answered (issue 31: `window`, `page`, `socket:<label>`)
    /// for the journal, when the user did ([`Ending::User`]); any other ending has nobody.
    pub fn deliver_by(self, journal: Option<&dyn Journal>, answered_by: Option<&str>) -> Delivered {
        let Settled { open, outcome, replies, ending } = self;
        let answered_by = answered_by.filter(|_| ending == Ending::User);
        if let Some(journal) = journal {
            journal.settled_by(&open.core, &outcome, answered_by);
        }
        for mut reply in replies {
            if let Some(answered_by) = answered_by {
                reply.answered_by(answered_by);
            }
            reply.send(outcome.clone());
        }
        Delivered { open, outcome, ending }
    }
}

/// A request decided as it arrived, never opened (its policy decided, or the front end cannot
/// show it): `journal` records it like any other ending, and its handle hears the outcome.
pub fn answer_at_once<R: ReplyHandle<Outcome>>(
    core: &Core,
    outcome: Outcome,
    reply: R,
    journal: Option<&dyn Journal>,
) {
    if let Some(journal) = journal {
        journal.settled(core, &outcome);
    }
    reply.send(outcome);
}

/// What [`Book::admit`] did with a request.
#[derive(Debug)]
pub enum Admission<R> {
    /// It is open, waiting for the user.
    Opened(RequestId),
    /// The same question ([`Core::same_question`]) is already open: this handle waits on it too.
    Joined(RequestId),
    /// Its policy decided at once: the outcome, for this handle.
    Decided { outcome: Outcome, reply: R },
}

/// Whether a request the user answers opened, or joined the same question already open.
enum Joining {
    Opened,
    Joined,
}

/// An open request and every handle waiting for its outcome, each with the id it was asked
/// under (a question asked again joins with its own id).
#[derive(Debug)]
struct Entry<R> {
    open: Open,
    replies: Vec<(RequestId, R)>,
}

impl<R> Entry<R> {
    fn settled(self, outcome: Outcome, ending: Ending) -> Settled<R> {
        let replies = self.replies.into_iter().map(|(_, reply)| reply).collect();
        Settled { open: self.open, outcome, replies, ending }
    }
}

/// Every open request, and which one the user is on.
#[derive(Debug)]
pub struct Book<R> {
    entries: Vec<Entry<R>>,
    current: Option<RequestId>,
}

impl<R> Default for Book<R> {
    fn default() -> Self {
        Book { entries: Vec::new(), current: None }
    }
}

impl<R> Book<R> {
    /// Takes a request in: its policy decides it, or it joins the same question already open, or
    /// it opens (and is current when nothing else is).
    pub fn admit(&mut self, core: Core, policy: Policy, reply: R, now: f64) -> Admission<R> {
        if let Some(outcome) = policy.decide(&core.ask) {
            return Admission::Decided { outcome, reply };
        }
        match self.open_or_join(core, &policy, reply, now) {
            (id, Joining::Opened) => Admission::Opened(id),
            (id, Joining::Joined) => Admission::Joined(id),
        }
    }

    /// [`Book::admit`] once the policy left the request to the user: the id it is open under.
    fn open_or_join(
        &mut self,
        core: Core,
        policy: &Policy,
        reply: R,
        now: f64,
    ) -> (RequestId, Joining) {
        if let Some(entry) =
            self.entries.iter_mut().find(|entry| entry.open.core.same_question(&core))
        {
            entry.replies.push((core.id, reply));
            return (entry.open.id(), Joining::Joined);
        }
        let id = core.id;
        let replies = vec![(id, reply)];
        self.entries.push(Entry { open: Open::new(core, policy, now), replies });
        self.current.get_or_insert(id);
        (id, Joining::Opened)
    }

    /// The user decided request `id` in a front end that keeps no book of its own (a browser
    /// page: `message`), turned into its outcome by the same rules as an edit here
    /// ([`Open::outcome_of`]); the request ends as the user's. `Ok(None)`: the message decides
    /// nothing (the page saw it, or changed its countdown) or the request is not open.
    pub fn answer_from_page(
        &mut self,
        id: RequestId,
        message: BrowserMessage,
    ) -> Result<Option<Settled<R>>, BrowserError> {
        let Some(outcome) = self.get(id).map(|open| open.outcome_of(message)).transpose()? else {
            return Ok(None);
        };
        Ok(outcome.and_then(|outcome| self.settle(id, outcome, Ending::User)))
    }

    /// Issue 31: a front end's answer (the inbox socket's `answer`, `decline`), by the page's
    /// rules ([`Book::answer_from_page`]): first answer wins, so a request that has ended (or a
    /// message that decides nothing) is refused rather than taken.
    pub fn answer_from_front_end(
        &mut self,
        id: RequestId,
        message: BrowserMessage,
    ) -> Result<Settled<R>, FrontEndRefusal> {
        if self.get(id).is_none() {
            return Err(FrontEndRefusal::Ended);
        }
        match self.answer_from_page(id, message) {
            Ok(Some(settled)) => Ok(settled),
            Ok(None) => Err(FrontEndRefusal::Ended),
            Err(error) => Err(FrontEndRefusal::Invalid(error)),
        }
    }

    /// Every open request, oldest first.
    pub fn requests(&self) -> impl ExactSizeIterator<Item = &Open> + '_ {
        self.entries.iter().map(|entry| &entry.open)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, id: RequestId) -> Option<&Open> {
        self.requests().find(|open| open.id() == id)
    }

    /// The open request with this tool_use_id.
    pub fn by_tool_use_id(&self, tool_use_id: &str) -> Option<&Open> {
        self.requests().find(|open| open.core.envelope.tool_use_id() == Some(tool_use_id))
    }

    /// The request the user is on.
    pub fn current(&self) -> Option<&Open> {
        self.get(self.current?)
    }

    fn open_mut(&mut self, id: RequestId) -> Option<&mut Open> {
        self.entries.iter_mut().map(|entry| &mut entry.open).find(|open| open.id() == id)
    }

    /// The user turns to request `id`. False when it is not open.
    pub fn select(&mut self, id: RequestId) -> bool {
        let open = self.get(id).is_some();
        if open {
            self.current = Some(id);
        }
        open
    }

    /// Lets `change` alter request `id` in place (a refused answer coming back with its reason).
    pub fn revise(&mut self, id: RequestId, change: impl FnOnce(&mut Open)) {
        if let Some(open) = self.open_mut(id) {
            change(open);
        }
    }

    /// True once the user did anything to some open request.
    pub fn any_touched(&self) -> bool {
        self.requests().any(Open::is_touched)
    }

    /// Performs the user's edit on the current request; the request it settled, if any.
    pub fn edit(&mut self, edit: Edit) -> Option<Settled<R>> {
        let id = self.current?;
        let outcome = self.open_mut(id)?.edit(edit)?;
        self.settle(id, outcome, Ending::User)
    }

    /// Ends request `id` with `outcome`: it leaves the book, and the next one becomes current.
    pub fn settle(
        &mut self,
        id: RequestId,
        outcome: Outcome,
        ending: Ending,
    ) -> Option<Settled<R>> {
        let index = self.entries.iter().position(|entry| entry.open.id() == id)?;
        let entry = self.entries.remove(index);
        if self.current == Some(id) {
            self.current = self.entries.first().map(|entry| entry.open.id());
        }
        Some(entry.settled(outcome, ending))
    }

    /// Whoever asked as `asker` went away (a client of the inbox was killed or gave up): its
    /// handle leaves. The request ends, withdrawn, when nobody else waits on it; otherwise it
    /// stays open for the others and `None` is returned.
    pub fn leave(&mut self, asker: RequestId) -> Option<Settled<R>> {
        let entry = self
            .entries
            .iter_mut()
            .find(|entry| entry.replies.iter().any(|(id, _)| *id == asker))?;
        if entry.replies.len() > 1 {
            entry.replies.retain(|(id, _)| *id != asker);
            return None;
        }
        let id = entry.open.id();
        self.settle(id, Outcome::Withdrawn, Ending::Withdrawn)
    }

    /// The agent took back the question with this tool_use_id.
    pub fn withdraw(&mut self, tool_use_id: &str) -> Option<Settled<R>> {
        let id = self.by_tool_use_id(tool_use_id)?.id();
        self.settle(id, Outcome::Withdrawn, Ending::Withdrawn)
    }

    /// The question with this tool_use_id was settled elsewhere (`how`: "answered in another
    /// window"); nothing more goes to the agent from here.
    pub fn settled_elsewhere(&mut self, tool_use_id: &str, how: &str) -> Option<Settled<R>> {
        let id = self.by_tool_use_id(tool_use_id)?.id();
        self.settle(id, Outcome::Withdrawn, Ending::Elsewhere { how: how.to_owned() })
    }

    /// Ends every open request with `outcome` (the window is closing, askpane is stopped).
    pub fn close_all(&mut self, outcome: &Outcome) -> Vec<Settled<R>> {
        self.current = None;
        self.entries.drain(..).map(|entry| entry.settled(outcome.clone(), Ending::Closed)).collect()
    }

    /// Ends every request whose countdown ran out at `now`. A box the user is typing in
    /// (`typing`: focused or edited a moment ago) is never sent as a finished answer.
    pub fn expire(
        &mut self,
        now: f64,
        typing: &dyn Fn(RequestId, usize, TextField) -> bool,
    ) -> Vec<Settled<R>> {
        let due: Vec<RequestId> = self
            .requests()
            .filter(|open| {
                matches!(open.countdown, Some(Countdown::Running { deadline, .. }) if now >= deadline)
            })
            .map(Open::id)
            .collect();
        due.into_iter()
            .filter_map(|id| {
                let (outcome, unsent) = self.get(id)?.at_deadline(typing);
                self.settle(id, outcome, Ending::Deadline { unsent })
            })
            .collect()
    }

    /// The user is here ("any key to stay"): every running countdown stops.
    pub fn stay(&mut self) {
        for entry in &mut self.entries {
            if let Some(countdown @ Countdown::Running { .. }) = &mut entry.open.countdown {
                *countdown = countdown.changed(f64::NAN, TimeoutChange::Paused);
            }
        }
    }

    /// Another window changed the countdown of `tool_use_id`: `left_secs` from `now`, or stopped.
    pub fn countdown_changed(&mut self, tool_use_id: &str, now: f64, left_secs: Option<u64>) {
        let Some(id) = self.by_tool_use_id(tool_use_id).map(Open::id) else { return };
        let Some(open) = self.open_mut(id) else { return };
        open.countdown = match (open.countdown, left_secs) {
            (None, _) => None,
            (Some(before), None) => Some(Countdown::Stopped { given_secs: before.given_secs() }),
            (Some(before), Some(left)) => {
                let given = match before {
                    Countdown::Running { given_secs, .. } => given_secs.max(left),
                    Countdown::Stopped { given_secs } => given_secs.max(left),
                };
                Some(Countdown::Running { deadline: now + left as f64, given_secs: given })
            }
        };
    }

    /// The user paused or added time to request `id`'s countdown (in a window that is not this
    /// book's: the browser page). Returns the seconds now left (`None`: paused), or `Err` when
    /// the request is not open or has no countdown.
    pub fn change_countdown(
        &mut self,
        id: RequestId,
        now: f64,
        change: TimeoutChange,
    ) -> Result<Option<f64>, NoCountdown> {
        let open = self.open_mut(id).ok_or(NoCountdown)?;
        let countdown = open.countdown.ok_or(NoCountdown)?.changed(now, change);
        open.countdown = Some(countdown);
        Ok(countdown.left(now))
    }

    /// The earliest running deadline, so the driver knows when to wake.
    pub fn next_deadline(&self) -> Option<f64> {
        self.requests()
            .filter_map(|open| match open.countdown {
                Some(Countdown::Running { deadline, .. }) => Some(deadline),
                _ => None,
            })
            .reduce(f64::min)
    }

    /// True while some request's countdown runs.
    pub fn counting_down(&self) -> bool {
        self.next_deadline().is_some()
    }
}

impl<R: ReplyHandle<Outcome>> Book<R> {
    /// Takes a request in as every driver does: as [`Book::admit`], then `journal` hears of an
    /// opened request, and one its policy decides is recorded and answered at once
    /// ([`answer_at_once`]). Returns the id when it opened for the user (`None`: decided, or
    /// joined to the same question already open).
    pub fn take(
        &mut self,
        core: Core,
        policy: Policy,
        reply: R,
        now: f64,
        journal: Option<&dyn Journal>,
    ) -> Option<RequestId> {
        if let Some(outcome) = policy.decide(&core.ask) {
            answer_at_once(&core, outcome, reply, journal);
            return None;
        }
        let (id, Joining::Opened) = self.open_or_join(core, &policy, reply, now) else {
            return None;
        };
        if let (Some(journal), Some(open)) = (journal, self.get(id)) {
            journal.opened(&open.core);
        }
        Some(id)
    }
}
