//! The bridge's hub: the driver of the request book for browser pages. It holds every open
//! question in the book, tells every page about it, takes their answers and ends questions
//! that no page answers in time.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Select, Sender};
use serde_json::Value;

use crate::book::approval::{Approvals, Asked, EndedApproval};
use crate::book::journal::Journal;
use crate::book::session::{Agent, Session, SessionAction, SessionEffect, SessionUpdate};
use crate::book::{Book, Ending, NoCountdown, Open, Settled, answer_at_once};
use crate::protocol::Outcome;
use crate::protocol::history::{HistoryFilter, HistoryPage, HistoryRequestError};
use crate::protocol::limits::{MAX_BRIDGE_OPTIONS, MAX_BRIDGE_QUESTIONS, MAX_TOOL_USE_ID_LENGTH};
use crate::protocol::origin::RequestId;
use crate::protocol::stream::{CliMessage, PermissionDecision};
use crate::protocol::web::{
    self, BrowserError, BrowserMessage, FromPage, PageRequest, PermissionEnd, SessionBody,
    SessionMessage, ToPage, UserQuestion,
};

use crate::transport::{
    ApprovalEvent, Control, Inbound, PageEvent, PermissionAsk, RequestEvent, Responder,
    SessionCommand, SessionEvent, SessionInbound, SessionKey,
};

use super::{BridgeJournal, BridgeOptions, TIMEOUT_GRACE, Wakeup};

/// Issue 24: a page that connects gets each session's newest entries, at most this many...
const TAIL_ENTRIES: usize = 200;
/// ... and this many bytes ([`crate::book::session::Entry::weight`]); it asks for older ones.
const TAIL_BYTES: usize = 256 * 1024;
/// Every session's newest entries together, on a connect: with many sessions each gets an equal
/// share. With the questions and the cards, what a page gets on connecting stays far below what
/// its connection may queue (16 MiB), whatever the sessions hold.
const CATCH_UP_BYTES: usize = 2 * 1024 * 1024;
/// One answer to a page's `session_older`: at most this many entries, and bytes.
const OLDER_ENTRIES: usize = 200;
const OLDER_BYTES: usize = 256 * 1024;
/// One `session` message of new entries; more go in several (an agent's message may carry many
/// blocks).
const UPDATE_BYTES: usize = 256 * 1024;
/// A page's `session_older` is refused as busy while this many messages wait in its queue: a
/// page asks one at a time, and one that asks without reading cannot pile up answers here.
const OLDER_QUEUE_LIMIT: usize = 8;

/// What the hub sends a page: the browser wire's messages, a session's body being the book's.
pub(super) type PageMessage = ToPage<SessionUpdate>;

/// A connected page, as the hub sees it: where its messages go, and how its thread is woken.
pub(super) struct Page {
    pub(super) outgoing: Sender<PageMessage>,
    pub(super) wakeup: Arc<Wakeup>,
}

impl Page {
    fn send(&self, message: PageMessage) {
        if self.outgoing.send(message).is_ok() {
            self.wakeup.wake();
        }
    }
}

/// What connections tell the hub. `Refused`: a connection was turned away for want of room
/// (issue 24); it may have been a page coming back.
pub(super) enum ToHub {
    Connected { client: u64, page: Page },
    Disconnected { client: u64 },
    Message { client: u64, value: Value },
    Refused,
}

/// What the hub keeps beside the book for each open question: the name pages know it by and
/// the `user_question` they are sent.
pub(super) struct PageQuestion {
    tool_use_id: String,
    message: UserQuestion,
    asked_at: Instant,
    /// Some page drew it while visible (`question_seen`). Only such a question ends when every
    /// page goes away: one nobody has seen waits for a page however long (issue 24).
    seen: bool,
}

/// A countdown this far off is one that never ends here (a `--timeout` beyond what an instant
/// can hold): the page is told the time as asked, not a rounded float.
pub(super) const UNBOUNDED_SECS: f64 = 1e12;

/// The `user_question` to send a page now: a timed question says how many whole seconds are
/// left (rounded up), a paused one none.
pub(super) fn message_now(page: &PageQuestion, open: &Open, now: f64) -> PageMessage {
    let mut question = page.message.clone();
    match open.countdown.map(|countdown| countdown.left(now)) {
        Some(Some(left)) if left < UNBOUNDED_SECS => {
            question.timeout_secs = Some(left.ceil() as u64)
        }
        Some(None) => question.timeout_secs = None,
        // As asked: no countdown, or one too far off to count down.
        Some(Some(_)) | None => {}
    }
    question.into()
}

/// The bridge's driver of the request book: the book holds each open question, its countdown
/// (the backstop for no page answering) and who waits for it; the hub adds what pages need.
pub(super) struct Hub {
    clients: HashMap<u64, Page>,
    book: Book<Responder>,
    pages: HashMap<RequestId, PageQuestion>,
    /// The book's clock starts here (seconds since).
    started: Instant,
    stop_when_done: bool,
    stop_after_turn: bool,
    turn_over: bool,
    stopped: Arc<AtomicBool>,
    wakeup: Arc<Wakeup>,
    next_synthetic_id: u64,
    page_gone_grace: Duration,
    /// A page has connected at least once (before that, the user may not have opened the link).
    pages_seen: bool,
    /// Since when no page is connected (after one was).
    pages_gone_since: Option<Instant>,
    /// The questions waiting unseen with no page open were named in the log (once per time
    /// the pages went).
    unseen_told: bool,
    /// Where each request opened and each ending is reported (the inbox's history).
    journal: Option<BridgeJournal>,
    /// The agent session the pages show (issue 11), when the bridge carries one: its
    /// transcript, kept by the same rules as the native window's.
    agent: Agent,
    /// The tool calls waiting for a page's decision, and who waits for each: the book's, as in
    /// the native window.
    approvals: Approvals<Responder<PermissionDecision>>,
    /// Where the pages' prompts and Stop go; `None` when no session is carried.
    session_commands: Option<Sender<SessionCommand>>,
    /// The sessions the inbox's clients host (`askpane inbox --ui web`), kept in `agent` under
    /// their keys: where the pages' prompts, Stop and End session for each go.
    hosted: HashMap<SessionKey, Sender<SessionCommand>>,
    /// An inbox client has hosted a session here (pages are then told which still are).
    hosted_seen: bool,
    /// A `PermissionRequest` hook's card came here (issue 26: `askpane inbox --ui web`):
    /// pages are then told which cards are still open, as where a session is carried.
    hook_cards_seen: bool,
    /// Issue 11 (History in the browser): per page, whether its history request is being read
    /// on the store's thread (one at a time per page: a page cannot queue unbounded queries).
    history_in_flight: HashMap<u64, Arc<AtomicBool>>,
}

/// Marks a page's history request as done when the answer is sent, or when the store's thread
/// drops it unanswered (it ended): the page may then ask again.
struct HistoryInFlight(Arc<AtomicBool>);

impl Drop for HistoryInFlight {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The agent session a bridge carries to its pages (`askpane claude --ui web`).
pub(super) struct CarriedSession {
    pub(super) commands: Sender<SessionCommand>,
    /// The first user turn, when it was given on the command line (already sent).
    pub(super) prompt: Option<String>,
}

/// What a permission still waiting hears when the bridge ends without a page deciding it.
pub(super) const BRIDGE_ENDED_DENY: &str =
    "askpane's browser bridge ended before the user decided on this tool call.";

impl Hub {
    pub(super) fn new(
        options: &BridgeOptions,
        stopped: Arc<AtomicBool>,
        wakeup: Arc<Wakeup>,
        session: Option<CarriedSession>,
    ) -> Hub {
        let mut agent = Agent::default();
        if let Some(session) = &session {
            agent.start_session(SessionKey::Own, None, session.prompt.as_deref());
        }
        Hub {
            agent,
            approvals: Approvals::default(),
            session_commands: session.map(|session| session.commands),
            hosted: HashMap::new(),
            hosted_seen: false,
            hook_cards_seen: false,
            history_in_flight: HashMap::new(),
            clients: HashMap::new(),
            book: Book::default(),
            pages: HashMap::new(),
            started: Instant::now(),
            stop_when_done: options.stop_when_done,
            stop_after_turn: options.stop_after_turn,
            turn_over: false,
            stopped,
            wakeup,
            next_synthetic_id: 1,
            page_gone_grace: options.page_gone_grace,
            pages_seen: false,
            pages_gone_since: None,
            unseen_told: false,
            journal: options.journal.clone(),
        }
    }

    pub(super) fn run(mut self, inbox: &Receiver<Inbound>, connections: &Receiver<ToHub>) {
        let mut inbox_open = true;
        loop {
            if self.stop_when_done && !inbox_open && self.book.is_empty() {
                break;
            }
            if self.turn_over || self.stopped.load(Ordering::SeqCst) {
                break;
            }
            self.expire();
            self.end_if_pages_gone();
            let mut select = Select::new();
            let inbox_index = inbox_open.then(|| select.recv(inbox));
            let connections_index = select.recv(connections);
            // Blocks until a message, or the next deadline; a stop sends the hub nothing, so it
            // looks at the flag at least every second.
            let wait = self
                .next_deadline()
                .map_or(Duration::from_secs(1), |at| at.saturating_duration_since(Instant::now()))
                .min(Duration::from_secs(1));
            let Ok(operation) = select.select_timeout(wait) else { continue };
            let index = operation.index();
            if Some(index) == inbox_index {
                match operation.recv(inbox) {
                    Ok(message) => {
                        self.handle_agent(message);
                        self.journal_ended_permissions();
                    }
                    Err(_) => inbox_open = false,
                }
            } else if index == connections_index {
                match operation.recv(connections) {
                    Ok(message) => {
                        self.handle_browser(message);
                        self.journal_ended_permissions();
                    }
                    // Every connection ended because the bridge is stopping: the usual end.
                    Err(_) if self.stopped.load(Ordering::SeqCst) => break,
                    Err(_) => {
                        // The listener is gone without a stop: no page can answer any more.
                        let reason = "askpane's browser bridge stopped accepting pages".to_owned();
                        self.resolve_all(&Outcome::Unavailable { reason });
                        break;
                    }
                }
            }
        }
        // Still open at a stop (the agent's turn ended, askpane is ending): nobody answered
        // these here, and the agent is told so.
        self.resolve_all(&Outcome::closed());
        // A tool call is never allowed for want of a page: what still waits is denied, saying so.
        self.deny_all_permissions(BRIDGE_ENDED_DENY);
        self.stopped.store(true, Ordering::SeqCst);
        self.wakeup.wake();
    }

    fn deny_all_permissions(&mut self, message: &str) {
        for card in self.approvals.close_all(message) {
            let request_id = &card.request.request_id;
            self.broadcast(&web::permission_withdrawn(request_id, PermissionEnd::Withdrawn));
        }
        self.journal_ended_permissions();
    }

    /// Issue 26: hands every card that ended to the journal (history keeps each approval).
    fn journal_ended_permissions(&mut self) {
        let ended = self.approvals.take_ended();
        if let Some(journal) = self.journal() {
            for approval in &ended {
                journal.approval_ended(approval);
            }
        }
    }

    fn resolve_all(&mut self, outcome: &Outcome) {
        for settled in self.book.close_all(outcome) {
            self.pages.remove(&settled.open.id());
            settled.deliver(self.journal());
        }
    }

    /// Where the book's endings are recorded (the inbox's history), if anywhere.
    fn journal(&self) -> Option<&dyn Journal> {
        self.journal.as_ref().map(BridgeJournal::journal)
    }

    /// The book's clock: seconds since the hub started.
    fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The open question pages know as `tool_use_id`.
    fn find(&self, tool_use_id: &str) -> Option<RequestId> {
        self.pages.iter().find(|(_, page)| page.tool_use_id == tool_use_id).map(|(id, _)| *id)
    }

    /// The next moment the hub has something to do by itself: a backstop, or the end of the
    /// last page's grace.
    fn next_deadline(&self) -> Option<Instant> {
        let backstop = self.book.next_deadline().and_then(|deadline| {
            let after_start = Duration::try_from_secs_f64(deadline).ok()?;
            self.started.checked_add(after_start)?.checked_add(TIMEOUT_GRACE)
        });
        backstop.into_iter().chain(self.pages_gone_deadline()).min()
    }

    /// When the open questions a page has shown end for want of a page, if no page comes back
    /// (the others wait for one).
    fn pages_gone_deadline(&self) -> Option<Instant> {
        let since = self.pages_gone_since?;
        let latest_ask =
            self.pages.values().filter(|page| page.seen).map(|page| page.asked_at).max()?;
        since.max(latest_ask).checked_add(self.page_gone_grace)
    }

    /// The last page went and none came back in time: the open questions end honestly ("the
    /// page was closed") instead of waiting for ever.
    fn end_if_pages_gone(&mut self) {
        let Some(since) = self.pages_gone_since else { return };
        let now = Instant::now();
        let grace = self.page_gone_grace;
        // A session carried to pages that all went: once its turn is over and nothing waits,
        // nobody is left to type the next prompt, and the bridge ends as at the end of a turn.
        let idle = !self.session_of(SessionKey::Own).is_some_and(|session| session.busy)
            && self.approvals.is_empty()
            && self.book.is_empty();
        if self.stop_after_turn
            && self.session_commands.is_some()
            && idle
            && since.checked_add(grace).is_some_and(|end| now >= end)
        {
            self.turn_over = true;
        }
        // Only a question a page has shown can have been closed with its page: one nobody has
        // seen waits for the next page (a phone drops a background connection in seconds).
        let gone: Vec<String> = self
            .pages
            .values()
            .filter(|page| {
                page.seen
                    && since.max(page.asked_at).checked_add(grace).is_some_and(|end| now >= end)
            })
            .map(|page| page.tool_use_id.clone())
            .collect();
        for tool_use_id in gone {
            self.resolve(&tool_use_id, web::page_closed_outcome());
        }
        let unseen = self.pages.values().filter(|page| !page.seen).count();
        if unseen > 0 && !std::mem::replace(&mut self.unseen_told, true) {
            log::warn!("{}", waiting_for_a_page(unseen));
        }
    }

    fn broadcast(&self, message: &PageMessage) {
        self.broadcast_except(message, None);
    }

    fn broadcast_except(&self, message: &PageMessage, except: Option<u64>) {
        for (id, page) in &self.clients {
            if Some(*id) != except {
                page.send(message.clone());
            }
        }
    }

    fn handle_agent(&mut self, message: Inbound) {
        match message {
            Inbound::Request(RequestEvent::Ask(request)) => self.ask(*request),
            Inbound::Request(RequestEvent::Withdraw { tool_use_id })
            | Inbound::Page(PageEvent::Settled { tool_use_id, .. }) => {
                self.resolve(&tool_use_id, Outcome::Withdrawn);
            }
            // Issue 31: a front end on the inbox socket decides a card, as a page does.
            Inbound::Approval(ApprovalEvent::FrontEnd(decided)) => {
                let crate::transport::FrontEndDecision {
                    request_id,
                    decision,
                    answered_by,
                    verdict,
                } = *decided;
                match self.approvals.decide_from_front_end(&request_id, decision, &answered_by) {
                    Ok(end) => {
                        verdict(Ok(()));
                        self.broadcast(&web::permission_withdrawn(&request_id, end));
                    }
                    Err(refusal) => verdict(Err(refusal)),
                }
            }
            // Issue 31: a front end on the inbox socket answers, by the page's rules.
            Inbound::Request(RequestEvent::FrontEnd(answer)) => {
                let crate::transport::FrontEndAnswer { request, message, answered_by, verdict } =
                    *answer;
                match self.book.answer_from_front_end(request, message) {
                    Ok(settled) => {
                        verdict(Ok(()));
                        self.told_by(settled, None, &answered_by);
                    }
                    Err(refusal) => verdict(Err(refusal)),
                }
            }
            // Issue 10 (inbox): the client that asked went away; its handle leaves.
            Inbound::Request(RequestEvent::Leave { asker }) => {
                if let Some(settled) = self.book.leave(asker) {
                    self.told(settled, None);
                }
            }
            Inbound::Control(Control::Notice(notice)) => log::warn!("{notice}"),
            Inbound::Approval(ApprovalEvent::Permission(permission)) => {
                self.ask_permission(*permission)
            }
            Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }) => {
                if self.approvals.withdraw(&request_id).is_some() {
                    let gone = web::permission_withdrawn(&request_id, PermissionEnd::Withdrawn);
                    self.broadcast(&gone);
                }
            }
            Inbound::Approval(ApprovalEvent::TimedOutPermission { request_id }) => {
                if self.approvals.time_out(&request_id).is_some() {
                    let gone = web::permission_withdrawn(&request_id, PermissionEnd::Withdrawn);
                    self.broadcast(&gone);
                }
            }
            // Issue 26: decided by a flag as it arrived, never shown, recorded all the same.
            Inbound::Approval(ApprovalEvent::Unshown(ended)) => {
                if let Some(journal) = self.journal() {
                    journal.approval_ended(&ended);
                }
            }
            Inbound::Session(SessionInbound::Event(event)) => {
                let ended = matches!(*event, SessionEvent::Ended { .. });
                let ends = ended || matches!(*event, SessionEvent::Message(CliMessage::Result(_)));
                // Pages that carry the session can start another turn: only the agent's end
                // ends the bridge then.
                let carried = self.session_commands.is_some();
                self.turn_over |= self.stop_after_turn && if carried { ended } else { ends };
                if carried {
                    self.session_event(SessionKey::Own, *event);
                }
            }
            // The sessions the inbox's clients host: kept like the own one, each under its key.
            Inbound::Session(SessionInbound::Hosted { session, label, prompt, commands }) => {
                self.agent.start_session(session, Some(label), prompt.as_deref());
                self.hosted.insert(session, commands);
                self.hosted_seen = true;
                self.broadcast_session(session, 0);
            }
            Inbound::Session(SessionInbound::HostedEvent { session, event }) => {
                if self.hosted.contains_key(&session) {
                    self.session_event(session, *event);
                }
            }
            Inbound::Session(SessionInbound::HostGone { session }) => {
                // Dropping its commands ends the inbox's forwarder for it.
                if self.hosted.remove(&session).is_some() {
                    self.agent.end_session(session);
                    self.broadcast(&web::session_gone(session));
                }
            }
            // What the bridge tells pages never comes back to it; there is no window to reveal.
            Inbound::Page(
                PageEvent::SessionUpdate(_)
                | PageEvent::HostedUpdate { .. }
                | PageEvent::Delivery(_)
                | PageEvent::Countdown { .. },
            )
            | Inbound::Control(Control::Reveal { .. }) => {}
            Inbound::Request(RequestEvent::Unshown { core, outcome }) => {
                if let Some(journal) = &self.journal {
                    journal.0.settled(&core, &outcome);
                }
            }
            Inbound::Control(Control::Shutdown { outcome }) => {
                // askpane is being stopped (issue 9): every open question hears why (and every
                // page sees it go), and the bridge ends as if stopped.
                let open: Vec<String> =
                    self.pages.values().map(|q| q.tool_use_id.clone()).collect();
                for tool_use_id in open {
                    self.resolve(&tool_use_id, outcome.clone());
                }
                let message = outcome.deny_message().unwrap_or_else(|| BRIDGE_ENDED_DENY.into());
                self.deny_all_permissions(&message);
                self.stopped.store(true, Ordering::SeqCst);
            }
        }
    }

    /// A tool the agent wants to run: a card in every page. A hook's card (issue 26: it
    /// reaches only the inbox) needs no session to be shown with. A hosted session's card
    /// without a session to show it in (a bridge for questions only) is denied at once, saying
    /// why.
    fn ask_permission(&mut self, permission: PermissionAsk) {
        let PermissionAsk { id, request, provenance, reply } = permission;
        let hook = request.origin.can_hand_back();
        self.hook_cards_seen |= hook;
        if !self.carries_sessions() && !hook {
            let decision = PermissionDecision::Deny {
                message: "askpane's browser page here shows questions only and cannot approve \
                          tool calls; allow them with --allow-tools."
                    .to_owned(),
            };
            reply.send(decision.clone());
            // Issue 26: denied with nobody asked; history keeps it.
            let outcome = crate::protocol::permission::ApprovalOutcome::NoHuman;
            let answered_by = None;
            let ended = EndedApproval { id, request, provenance, outcome, decision, answered_by };
            if let Some(journal) = self.journal() {
                journal.approval_ended(&ended);
            }
            return;
        }
        let message = web::permission_request(&request, &provenance);
        // The same tool call asked again waits on the card the pages show already.
        if let Asked::Opened(id) = self.approvals.ask(id, request, provenance, reply) {
            self.broadcast(&message);
            // Issue 26: history notes when the card opened.
            if let (Some(journal), Some(card)) =
                (self.journal(), self.approvals.cards().find(|card| card.id == id))
            {
                journal.approval_opened(card);
            }
        }
    }

    /// Pages can show a session and its cards: the bridge's own, or one an inbox client hosts.
    fn carries_sessions(&self) -> bool {
        self.session_commands.is_some() || !self.hosted.is_empty()
    }

    /// Pages show approval cards: with a session, or a hook's.
    fn carries_approvals(&self) -> bool {
        self.carries_sessions() || self.hook_cards_seen
    }

    /// Session `key`, when the hub keeps it.
    fn session_of(&self, key: SessionKey) -> Option<&Session> {
        self.agent.sessions().find(|(known, _, _)| *known == key).map(|(_, session, _)| session)
    }

    /// Records an event of session `key` and sends every page what it added.
    fn session_event(&mut self, key: SessionKey, event: SessionEvent) {
        let from = self.session_of(key).map_or(0, Session::end);
        self.agent.session_event(key, event);
        self.broadcast_session(key, from);
    }

    /// Sends every page session `key` from entry `from` on, in messages of [`UPDATE_BYTES`].
    fn broadcast_session(&self, key: SessionKey, from: usize) {
        let Some(session) = self.session_of(key) else { return };
        let mut from = from;
        loop {
            let update = session.update_from(from, UPDATE_BYTES);
            let next = update.from + update.entries.len();
            if let Some(message) = self.session_message(key, update) {
                self.broadcast(&message);
            }
            // Each update carries at least one entry while there is one after `from`.
            if next >= session.end() || next <= from {
                break;
            }
            from = next;
        }
    }

    /// `session` (or, with `before`, `session_older_entries`): `update` of session `key`; a
    /// hosted session's also says which it is and who runs it.
    fn session_message(&self, key: SessionKey, update: SessionUpdate) -> Option<PageMessage> {
        let session = self.session_of(key)?;
        Some(session_message(key, session.label.as_deref(), update))
    }

    /// Does what a page asked of the agent session: the same [`SessionAction`]s the native
    /// window applies, so the deny wording and the prompt's transcript entry are the same.
    fn take_session(
        &mut self,
        client: u64,
        key: SessionKey,
        message: SessionMessage,
    ) -> Result<(), BrowserError> {
        let decides = matches!(message, SessionMessage::Decide { .. });
        // A decision needs only its card (a hook's has no session); the rest need a session.
        let carried = self.carries_sessions() || (decides && self.carries_approvals());
        if !carried {
            return Err(BrowserError::NoSession);
        }
        if let SessionMessage::Older { before } = message {
            return self.older(client, key, before);
        }
        let commands = match key {
            SessionKey::Own => self.session_commands.clone().ok_or(BrowserError::NoSession),
            SessionKey::Hosted(number) => {
                self.hosted.get(&key).cloned().ok_or(BrowserError::UnknownSession(number))
            }
        };
        // A decision names its card; the rest act on the session the page names, which the
        // hub's agent shows for the moment (its actions act on the session shown).
        if !matches!(message, SessionMessage::Decide { .. }) {
            commands.as_ref().map_err(Clone::clone)?;
            self.agent.apply_session(SessionAction::SelectSession(key));
        }
        let from = self.session_of(key).map_or(0, Session::end);
        let effect = match message {
            SessionMessage::Decide { request_id, decision } => {
                // A deny carries the text the model reads, built by the page's own approvals by
                // the same rules; the card leaves here as it left the page.
                // A decision the card does not offer decides nothing: the card stays open.
                let open = self.approvals.cards().any(|c| c.request.request_id == request_id);
                let end =
                    self.approvals.decide(&request_id, decision).ok_or_else(|| match open {
                        true => BrowserError::NotOffered(request_id.clone()),
                        false => BrowserError::UnknownPermission(request_id.clone()),
                    })?;
                self.broadcast(&web::permission_withdrawn(&request_id, end));
                return Ok(());
            }
            SessionMessage::Prompt(text) => {
                self.agent.apply_session(SessionAction::SetPrompt(text));
                self.agent.apply_session(SessionAction::SendPrompt)
            }
            SessionMessage::Stop => self.agent.apply_session(SessionAction::Stop),
            SessionMessage::End => self.agent.apply_session(SessionAction::End),
            SessionMessage::Older { .. } => None,
        };
        match effect {
            Some(SessionEffect::Prompt { text, .. }) => {
                if let Ok(commands) = &commands {
                    let _ = commands.send(SessionCommand::UserTurn(text));
                }
                self.broadcast_session(key, from);
            }
            Some(SessionEffect::Interrupt { .. }) => {
                if let Ok(commands) = &commands {
                    let _ = commands.send(SessionCommand::Interrupt);
                }
            }
            // Only a hosted session ends from a page (the agent's own refuses End): its host
            // ends it, and its going (`HostGone`) takes it from the pages.
            Some(SessionEffect::End { .. }) => {
                if let Ok(commands) = &commands {
                    let _ = commands.send(SessionCommand::End);
                }
            }
            Some(SessionEffect::Decided { .. } | SessionEffect::Older { .. }) | None => {}
        }
        Ok(())
    }

    /// Takes a request into the book; a new question goes to every page.
    fn ask(&mut self, request: crate::transport::Request) {
        let crate::transport::Request { core, policy, reply } = request;
        let tool_use_id = match core.envelope.tool_use_id() {
            Some(id) => id.to_owned(),
            None => {
                self.next_synthetic_id += 1;
                format!("askpane-{}", self.next_synthetic_id - 1)
            }
        };
        // The same question again (a reconnecting agent) joins the one shown; a new one must
        // fit a page first.
        if self.find(&tool_use_id).is_none()
            && let Err(reason) = fits_the_page(&core.ask, &tool_use_id)
        {
            log::warn!("the questions cannot be shown in the browser: {reason}");
            return answer_at_once(&core, Outcome::Refused { reason }, reply, self.journal());
        }
        let timeout_secs = policy.timeout_secs;
        let now = self.now();
        let journal = self.journal.as_ref().map(BridgeJournal::journal);
        // Recorded, and answered at once when its policy decides it.
        let Some(id) = self.book.take(core, policy, reply, now, journal) else { return };
        let Some(open) = self.book.get(id) else { return };
        let extras = web::QuestionExtras {
            provenance: open.core.provenance.clone(),
            warnings: open.core.warnings.iter().map(ToString::to_string).collect(),
            timeout_secs,
            selected: web::selected_numbers(&open.core.ask, &open.drafts()),
            mark_skipped: open.mark_skipped,
            reply_format: open.core.reply_shape.format,
            agent_request: web::agent_request(&open.core.envelope),
        };
        let message = web::user_question(&tool_use_id, &open.core.ask, &utc_timestamp(), &extras);
        self.broadcast(&message.clone().into());
        if self.clients.is_empty() && self.pages_seen {
            log::warn!("{}", waiting_for_a_page(1));
        }
        // The page times the question out itself (sending what was touched); the book's
        // countdown, a grace later, is the backstop for no page at all.
        let asked_at = Instant::now();
        self.pages.insert(id, PageQuestion { tool_use_id, message, asked_at, seen: false });
    }

    /// Ends the questions whose time ran out (a grace after the pages' own countdown) with no
    /// page answering them: as the book decides at a deadline.
    fn expire(&mut self) {
        let now = self.now() - TIMEOUT_GRACE.as_secs_f64();
        // Pages hold what the user typed; here nobody is typing.
        for settled in self.book.expire(now, &|_, _, _| false) {
            self.told(settled, None);
        }
    }

    /// Ends an open question with `outcome` that no page decided (the agent withdrew it, the
    /// pages went, askpane is stopped): every page drops it.
    fn resolve(&mut self, tool_use_id: &str, outcome: Outcome) {
        let Some(id) = self.find(tool_use_id) else { return };
        let ending = match &outcome {
            Outcome::Withdrawn => Ending::Withdrawn,
            _ => Ending::Closed,
        };
        if let Some(settled) = self.book.settle(id, outcome, ending) {
            self.told(settled, None);
        }
    }

    /// Sends a settled question's outcome to everyone waiting for it, and tells the pages.
    fn told(&mut self, settled: Settled<Responder>, decided_by: Option<u64>) {
        self.told_by(settled, decided_by, "page");
    }

    /// [`Self::told`], with who answered when the user did (issue 31: history keeps it).
    fn told_by(&mut self, settled: Settled<Responder>, decided_by: Option<u64>, answered_by: &str) {
        let Some(page) = self.pages.remove(&settled.open.id()) else { return };
        let kind = settled.deliver_by(self.journal(), Some(answered_by)).outcome.kind();
        if let Some(client) = decided_by.and_then(|client| self.clients.get(&client)) {
            client.send(web::answer_received(&page.tool_use_id, kind));
        }
        self.broadcast(&web::question_withdrawn(&page.tool_use_id, kind));
    }

    fn handle_browser(&mut self, message: ToHub) {
        match message {
            ToHub::Connected { client, page } => {
                // A new tab, or a reload: it gets every open question, with the time left.
                let now = self.now();
                for open in self.book.requests() {
                    if let Some(question) = self.pages.get(&open.id()) {
                        page.send(message_now(question, open, now));
                    }
                }
                // Then each agent session's newest entries (issue 24: a session held whole
                // could outgrow what a connection may queue, and every page was closed before
                // it could answer), with the tools waiting for a decision.
                let keys: Vec<SessionKey> = self.agent.sessions().map(|(key, _, _)| key).collect();
                let share = (CATCH_UP_BYTES / keys.len().max(1)).min(TAIL_BYTES);
                for key in &keys {
                    let tail = self.session_of(*key).map(|s| s.tail(TAIL_ENTRIES, share));
                    if let Some(message) = tail.and_then(|tail| self.session_message(*key, tail)) {
                        page.send(message);
                    }
                }
                for card in self.approvals.cards() {
                    page.send(web::permission_request(&card.request, &card.provenance));
                }
                if self.hosted_seen {
                    // A reconnecting page drops the sessions whose host went while it was away.
                    page.send(web::sessions_open(keys.into_iter()));
                }
                // Issue 11: the page shows History only where there is one to read.
                if self.journal.as_ref().is_some_and(|journal| journal.0.keeps_history()) {
                    page.send(web::history_kept());
                }
                if self.carries_approvals() {
                    // A reconnecting page drops the cards decided while it was away.
                    let open = self.approvals.cards().map(|card| card.request.request_id.as_str());
                    page.send(web::permissions_open(open));
                }
                self.clients.insert(client, page);
                self.pages_seen = true;
                self.pages_gone_since = None;
                self.unseen_told = false;
            }
            ToHub::Disconnected { client } => {
                self.clients.remove(&client);
                self.history_in_flight.remove(&client);
                if self.clients.is_empty() && self.pages_seen {
                    self.pages_gone_since = Some(Instant::now());
                }
            }
            // Issue 24: a page whose reconnects are refused is not gone; the wait for one to
            // come back starts again after the last refusal.
            ToHub::Refused => {
                if self.pages_gone_since.is_some() {
                    self.pages_gone_since = Some(Instant::now());
                }
            }
            ToHub::Message { client, value } => {
                if let Err(error) = self.take(client, &value) {
                    let refusal = web::refusal(&error, &value);
                    if let Some(page) = self.clients.get(&client) {
                        page.send(refusal.into());
                    }
                }
            }
        }
    }

    /// Takes a page's message: an answer or a decline decides its question; a timeout change
    /// moves the backstop.
    fn take(&mut self, client: u64, value: &Value) -> Result<(), BrowserError> {
        let message = match FromPage::parse(value)? {
            PageRequest::History(filter) => return self.history(client, filter),
            PageRequest::Session(key, message) => return self.take_session(client, key, message),
            PageRequest::Question(message) => message,
        };
        let tool_use_id = message.tool_use_id().to_owned();
        let unknown = || BrowserError::UnknownQuestion(tool_use_id.clone());
        let id = self.find(&tool_use_id).ok_or_else(unknown)?;
        if let BrowserMessage::Seen { .. } = message {
            if let Some(page) = self.pages.get_mut(&id) {
                page.seen = true;
            }
            return Ok(());
        }
        if let BrowserMessage::Timeout { change, .. } = message {
            let now = self.now();
            let left = self
                .book
                .change_countdown(id, now, change)
                .map_err(|NoCountdown| BrowserError::NoTimeout(tool_use_id.clone()))?;
            let left = left.filter(|&left| left < UNBOUNDED_SECS).map(|left| left.ceil() as u64);
            let changed = web::timeout_changed(&tool_use_id, left);
            self.broadcast_except(&changed, Some(client));
            return Ok(());
        }
        // The book turns the page's answer into its outcome, by the window's rules.
        self.book.get(id).ok_or_else(unknown)?;
        if let Some(settled) = self.book.answer_from_page(id, message)? {
            self.told(settled, Some(client));
        }
        Ok(())
    }
}

impl Hub {
    /// Issue 24: a page's "Show earlier": the entries of session `key` just before number
    /// `before`, to that page only. Answered here at once (the transcript is in memory); a page
    /// that asks again before reading what it was sent is refused as busy.
    fn older(&self, client: u64, key: SessionKey, before: usize) -> Result<(), BrowserError> {
        let session = self.session_of(key).ok_or(match key {
            SessionKey::Own => BrowserError::NoSession,
            SessionKey::Hosted(number) => BrowserError::UnknownSession(number),
        })?;
        let Some(page) = self.clients.get(&client) else { return Ok(()) };
        if page.outgoing.len() >= OLDER_QUEUE_LIMIT {
            return Err(BrowserError::OlderBusy);
        }
        let update = session.older(before, OLDER_ENTRIES, OLDER_BYTES);
        if let Some(message) = self.session_message(key, update) {
            page.send(message);
        }
        Ok(())
    }

    /// Issue 11: a page's History. The query runs on the store's thread (the journal's), never
    /// here: the answer goes from there straight to the page, so a slow query stalls no
    /// question. A bridge with no store says so instead of showing an empty list.
    fn history(&mut self, client: u64, filter: HistoryFilter) -> Result<(), BrowserError> {
        let Some(page) = self.clients.get(&client) else { return Ok(()) };
        let reply = Page { outgoing: page.outgoing.clone(), wakeup: Arc::clone(&page.wakeup) };
        let Some(journal) = self.journal.as_ref().filter(|journal| journal.0.keeps_history())
        else {
            reply.send(web::history_page(&HistoryPage::none_kept(filter)));
            return Ok(());
        };
        let busy = self.history_in_flight.entry(client).or_default();
        if busy.swap(true, Ordering::SeqCst) {
            return Err(HistoryRequestError::Busy.into());
        }
        let in_flight = HistoryInFlight(Arc::clone(busy));
        journal.0.history(
            &filter,
            Box::new(move |page| {
                drop(in_flight);
                reply.send(web::history_page(&page));
            }),
        );
        Ok(())
    }
}

/// `session` (or, with `before`, `session_older_entries`): `update` of session `key`; a hosted
/// session's also says which it is and who runs it (`label`).
fn session_message(key: SessionKey, label: Option<&str>, update: SessionUpdate) -> PageMessage {
    let label = match key {
        SessionKey::Hosted(_) => label.map(str::to_owned),
        SessionKey::Own => None,
    };
    let older = update.before.is_some();
    let body = SessionBody { update, label, session: key };
    match older {
        true => ToPage::SessionOlderEntries(body),
        false => ToPage::Session(body),
    }
}

/// The log line for questions that wait for a page because none is open and nobody saw them.
fn waiting_for_a_page(count: usize) -> String {
    let what = match count {
        1 => "a question nobody has seen yet waits".to_owned(),
        many => format!("{many} questions nobody has seen yet wait"),
    };
    format!(
        "no page is open: {what} for one (open askpane's link again); it is never declined for \
         want of a page"
    )
}

/// The bridge's own bounds on a request (its messages are sized from them): a request over them
/// is refused with the reason rather than shown in a page that could not answer it.
pub(super) fn fits_the_page(ask: &crate::protocol::Ask, tool_use_id: &str) -> Result<(), String> {
    let questions = ask.questions();
    if questions.len() > MAX_BRIDGE_QUESTIONS {
        return Err(format!(
            "{} questions; askpane's browser page shows at most {MAX_BRIDGE_QUESTIONS} (the tool \
             allows 4)",
            questions.len()
        ));
    }
    if let Some((index, question)) =
        questions.iter().enumerate().find(|(_, q)| q.options().len() > MAX_BRIDGE_OPTIONS)
    {
        return Err(format!(
            "question {}: {} options; askpane's browser page shows at most {MAX_BRIDGE_OPTIONS} \
             (the tool allows 4)",
            index + 1,
            question.options().len()
        ));
    }
    let id_length = crate::protocol::js_length(tool_use_id);
    if id_length > MAX_TOOL_USE_ID_LENGTH {
        return Err(format!(
            "the tool_use_id is {id_length} characters long; askpane's browser page takes at \
             most {MAX_TOOL_USE_ID_LENGTH}"
        ));
    }
    Ok(())
}

/// Now as `2026-11-21T23:02:23Z` (UTC), for `user_question.timestamp`.
pub(super) fn utc_timestamp() -> String {
    timestamp_at(std::time::SystemTime::now())
}

/// `at` as `2026-11-21T23:02:23Z`: RFC 3339 in UTC to the second, by humantime (already the
/// history's formatter) rather than a calendar of our own.
fn timestamp_at(at: std::time::SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_rfc_3339_to_the_second() {
        let at = |secs| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        assert_eq!(timestamp_at(at(0)), "1970-01-01T00:00:00Z");
        // The capture's own timestamp, and a leap day.
        assert_eq!(timestamp_at(at(1_795_302_143)), "2026-11-21T23:02:23Z");
        assert_eq!(timestamp_at(at(1_709_164_800 + 3_661)), "2024-02-29T01:01:01Z");
        assert_eq!(utc_timestamp().len(), 20);
    }

    /// Pins a session's message to the pages, as it was built with `json!`.
    #[test]
    fn a_sessions_message_says_which_session_and_who_runs_a_hosted_one() {
        use crate::book::session::Entry;
        use serde_json::json;
        let update = SessionUpdate {
            from: 4,
            entries: vec![Entry::User("go on".into())],
            busy: true,
            ..SessionUpdate::default()
        };
        let wire = |message: PageMessage| serde_json::to_value(message).expect("JSON");
        assert_eq!(
            wire(session_message(SessionKey::Own, Some("ignored"), update.clone())),
            json!({"type": "session", "from": 4, "entries": [{"kind": "user", "body": "go on"}],
                "info": null, "busy": true, "ended": null})
        );
        let older = SessionUpdate { before: Some(9), kept_from: 2, ..update.clone() };
        assert_eq!(
            wire(session_message(SessionKey::Hosted(3), Some("claude · shop"), older.clone())),
            json!({"type": "session_older_entries", "from": 4,
                "entries": [{"kind": "user", "body": "go on"}], "info": null, "busy": true,
                "ended": null, "kept_from": 2, "before": 9, "label": "claude · shop",
                "session": 3})
        );
        // The page reads it back as the book's update, for the session it names.
        let message = session_message(SessionKey::Hosted(3), Some("claude"), older.clone());
        let text = serde_json::to_string(&message).expect("JSON");
        assert_eq!(serde_json::from_str::<PageMessage>(&text).expect("read"), message);
        assert_eq!(
            wire(session_message(SessionKey::Hosted(3), None, update)),
            json!({"type": "session", "from": 4, "entries": [{"kind": "user", "body": "go on"}],
                "info": null, "busy": true, "ended": null, "session": 3})
        );
    }
}
