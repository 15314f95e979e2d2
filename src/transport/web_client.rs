//! The browser's side of `--ui web`: one WebSocket to askpane's bridge. `user_question` messages
//! become [`Request`]s for the app; each outcome goes back as `question_answer` or
//! `question_declined`, rendered by the same envelope code as every other reply.
//!
//! An outcome counts only once the bridge acknowledges it (`answer_received`): until then this
//! client holds it, and the app's receipt says "Sending…". If the bridge refuses it (`error`),
//! the question comes back to the app with what the user had sent and why; if the question ended
//! elsewhere first, the app hears that the answer did not count. A connection the bridge closes
//! with anything but 1000 "askpane is done" is retried, the form kept and the held outcomes sent
//! again.
//!
//! The token is presented in `Sec-WebSocket-Protocol`, never in the URL. wasm has no threads:
//! the socket's callbacks only queue what arrives and wake the UI, and [`BridgeClient::pump`]
//! (called at the start of every frame) does the work. The bridge sends every open question
//! again after a reconnect, and questions already shown here are not shown twice.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use crossbeam_channel::Receiver;
use serde_json::Map;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::book::approval::{EndedApproval, PendingPermission};
use crate::book::form::FormDraft;
use crate::book::journal::{HistoryDone, Journal};
use crate::book::plan::PlanDraft;
use crate::book::session::SessionUpdate;
use crate::book::{Core, Form, Policy};
use crate::protocol::history::{HistoryFilter, HistoryPage};
use crate::protocol::origin::{RequestId, SessionKey};
use crate::protocol::stream::PermissionDecision;
use crate::protocol::web::{
    self, DONE_REASON, FromPage, LINK_REPLACED_CODE, PermissionCard, Refusal, RefusedRequest,
    SUBPROTOCOL, Sent, SessionBody, TOKEN_PROTOCOL_PREFIX, TimeoutChange, ToPage, UserQuestion,
};
use crate::protocol::{Envelope, Outcome, OutcomeKind};

use super::{
    ApprovalEvent, Control, Delivery, Inbound, PageEvent, PermissionAsk, Request, RequestEvent,
    Responder, SessionCommand, SessionInbound, UiSender, Waker,
};

/// How long to wait before connecting again after the bridge went away, in milliseconds.
const RETRY_MS: f64 = 2000.0;
/// RFC 6455's "message too big": the bridge could not take what was sent.
const CLOSE_TOO_BIG: u16 = 1009;

/// What the socket's callbacks hand to [`BridgeClient::pump`].
#[derive(Default)]
struct Mailbox {
    messages: VecDeque<String>,
    opened: bool,
    /// The close code and reason, once the socket closed.
    closed: Option<(u16, String)>,
}

/// What the bridge sends this page, a session's body being the book's.
type BridgeMessage = ToPage<SessionUpdate>;

/// A question shown in the app, its outcome not decided yet.
struct Awaited {
    id: String,
    /// The `user_question` as it came: the question is rebuilt from it if it has to come back.
    question: UserQuestion,
    envelope: Envelope,
    outcome: Receiver<Outcome>,
    /// When its `--timeout` ends, in `performance.now()` milliseconds.
    deadline_ms: Option<f64>,
    /// The bridge was told this page showed it (`question_seen`).
    seen_told: bool,
}

/// An outcome decided in the app that the bridge has not acknowledged yet.
struct Held {
    id: String,
    question: UserQuestion,
    outcome: Outcome,
    /// The message for the bridge; `None` for a timeout, which the bridge decides itself.
    reply: Option<String>,
    /// Sent on the current connection (a new connection sends it again).
    sent: bool,
    deadline_ms: Option<f64>,
}

/// What became of a held outcome, for the page to publish (tests read it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryEvent {
    pub tool_use_id: String,
    pub state: DeliveryState,
    pub detail: String,
}

/// Where an answer the page sent stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    /// Sent, not yet acknowledged.
    Sending,
    /// askpane has it.
    Sent,
    /// askpane refused it; the question came back.
    Refused,
    /// It will never count (the question ended elsewhere, askpane ended).
    Lost,
}

impl DeliveryState {
    /// Its name as the page publishes it (`window.askpaneDeliveries[].state`).
    pub fn name(self) -> &'static str {
        match self {
            DeliveryState::Sending => "sending",
            DeliveryState::Sent => "sent",
            DeliveryState::Refused => "refused",
            DeliveryState::Lost => "lost",
        }
    }
}

/// A connection to the bridge, for the app's frame hook.
pub struct BridgeClient {
    url: String,
    token: String,
    to_ui: UiSender,
    waker: Waker,
    socket: Option<web_sys::WebSocket>,
    mailbox: Rc<RefCell<Mailbox>>,
    /// Questions shown here, by tool_use_id: a resend after a reconnect is not shown twice.
    shown: HashSet<String>,
    awaited: Vec<Awaited>,
    held: Vec<Held>,
    /// Timeout changes waiting for the socket to open.
    controls: VecDeque<String>,
    events: Vec<DeliveryEvent>,
    /// When to try again (performance.now() milliseconds), after the socket closed.
    retry_at: Option<f64>,
    told_disconnected: bool,
    finished: bool,
    /// Permission cards shown in the app, by the agent's request_id, and where the app's
    /// decision on each arrives (issue 11). Not the book's `Approvals`: the app holds the cards
    /// there with their responders; these are the responders' other ends, which carry each
    /// decision on to the bridge (as the inbox's per-client map does for its clients).
    permissions: Vec<(String, Receiver<PermissionDecision>)>,
    /// The app's prompts and Stop, for the bridge's agent session.
    session_commands: Option<Receiver<SessionCommand>>,
    /// The sessions an inbox's clients host (`askpane inbox --ui web`), shown in the app, and
    /// where the app's prompts, Stop and End session for each arrive.
    hosted: Vec<(SessionKey, Receiver<SessionCommand>)>,
    /// Issue 11: the app's History page asks here ([`BridgeHistory`]).
    history_asked: Option<Receiver<(HistoryFilter, HistoryDone)>>,
    /// The history request sent and not answered yet: the bridge takes one at a time per page.
    history_in_flight: Option<(HistoryFilter, HistoryDone)>,
    /// The newest request waiting for that one's answer (an older one waiting is dropped: the
    /// app shows only the page for its newest filter).
    history_next: Option<(HistoryFilter, HistoryDone)>,
    /// History pages answered since the last [`BridgeClient::take_history_pages`] (published
    /// for tests).
    history_pages: Vec<HistoryPage>,
    /// Shared with [`BridgeHistory`]: the bridge keeps history.
    history_kept: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Issue 24: a `session_older` was sent and not answered yet (the bridge takes one at a
    /// time; a "Show earlier" meanwhile is dropped, and the user may click again).
    older_in_flight: bool,
}

/// The page's History (issue 11): the app's journal in the browser. It records nothing (the
/// bridge's own journal does); it reads History pages from the bridge over the WebSocket.
pub struct BridgeHistory {
    asked: crossbeam_channel::Sender<(HistoryFilter, HistoryDone)>,
    waker: Waker,
    /// The bridge said it keeps history (`history_kept`): until then the app shows no History.
    kept: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The page's journal also keeps each question's form in the tab's `sessionStorage` (issue 24:
/// a reload, pull-to-refresh on a phone, lost the picks and the text). Restored only into the
/// very same questions (the same `questions` JSON), and only as a draft: at a deadline it is not
/// the user's answer until they act on it again. Secrets are never kept.
impl Journal for BridgeHistory {
    fn restore(&self, core: &Core, policy: &mut Policy) {
        if !policy.preset.is_empty() || policy.submit {
            return;
        }
        let Some(saved) = page_drafts::read(core) else { return };
        let forms = crate::book::fit_forms(&core.ask, saved);
        if forms.iter().any(|form| form.draft.is_touched()) {
            policy.preset = forms.into_iter().map(|form| form.draft).collect();
            policy.prefill = crate::protocol::Prefill::SavedDraft;
        }
    }

    fn opened(&self, _: &Core) {}

    fn draft_changed(&self, core: &Core, question: usize, form: &Form) {
        if core.ask.questions().get(question).is_some_and(|asked| asked.secret()) {
            return;
        }
        page_drafts::save(core, question, form);
    }

    fn settled(&self, core: &Core, _: &Outcome) {
        page_drafts::forget(core);
    }

    // A plan's review and a form's fields are kept in the tab too (a reload, a pull-to-refresh
    // on a phone), by the card's id on the bridge, only for the very same card.
    fn restore_plan(&self, card: &PendingPermission) -> Option<PlanDraft> {
        card.plan.as_ref()?;
        page_drafts::read_card(card)
    }

    fn plan_changed(&self, card: &PendingPermission) {
        if let Some(review) = &card.plan {
            page_drafts::save_card(card, &review.draft());
        }
    }

    fn restore_form(&self, card: &PendingPermission) -> Option<FormDraft> {
        card.form.as_ref()?;
        page_drafts::read_card(card)
    }

    fn form_changed(&self, card: &PendingPermission) {
        if let Some(review) = &card.form {
            page_drafts::save_card(card, &review.draft());
        }
    }

    fn approval_ended(&self, ended: &EndedApproval) {
        page_drafts::forget_card(&ended.request);
    }

    fn keeps_history(&self) -> bool {
        self.kept.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn history(&self, filter: &HistoryFilter, done: HistoryDone) {
        if self.asked.send((filter.clone(), done)).is_ok() {
            self.waker.wake();
        }
    }
}

impl BridgeClient {
    /// `ws_url` is `ws://host:port/ws`; `token` the one from the page's link.
    pub fn new(ws_url: String, token: String, to_ui: UiSender, waker: Waker) -> Self {
        let mut client = BridgeClient {
            url: ws_url,
            token,
            to_ui,
            waker,
            socket: None,
            mailbox: Rc::new(RefCell::new(Mailbox::default())),
            shown: HashSet::new(),
            awaited: Vec::new(),
            held: Vec::new(),
            controls: VecDeque::new(),
            events: Vec::new(),
            retry_at: None,
            told_disconnected: false,
            finished: false,
            permissions: Vec::new(),
            session_commands: None,
            hosted: Vec::new(),
            history_asked: None,
            history_in_flight: None,
            history_next: None,
            history_pages: Vec::new(),
            history_kept: Default::default(),
            older_in_flight: false,
        };
        client.connect();
        client
    }

    fn connect(&mut self) {
        self.mailbox = Rc::new(RefCell::new(Mailbox::default()));
        // The token goes in Sec-WebSocket-Protocol, beside the protocol the bridge chooses.
        let protocols = js_sys::Array::of2(
            &SUBPROTOCOL.into(),
            &format!("{TOKEN_PROTOCOL_PREFIX}{}", self.token).into(),
        );
        let Ok(socket) = web_sys::WebSocket::new_with_str_sequence(&self.url, &protocols) else {
            self.mailbox.borrow_mut().closed = Some((0, String::new()));
            return;
        };
        let (mailbox, waker) = (Rc::clone(&self.mailbox), self.waker.clone());
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                if let Some(text) = event.data().as_string() {
                    mailbox.borrow_mut().messages.push_back(text);
                    waker.wake();
                }
            },
        );
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let (mailbox, waker) = (Rc::clone(&self.mailbox), self.waker.clone());
        let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            mailbox.borrow_mut().opened = true;
            waker.wake();
        });
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        on_open.forget();
        let (mailbox, waker) = (Rc::clone(&self.mailbox), self.waker.clone());
        let on_close =
            Closure::<dyn FnMut(web_sys::CloseEvent)>::new(move |event: web_sys::CloseEvent| {
                mailbox.borrow_mut().closed = Some((event.code(), event.reason()));
                waker.wake();
            });
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        on_close.forget();
        self.socket = Some(socket);
    }

    /// Issue 11: the journal to give the app for its History page; its requests go to the
    /// bridge on this connection.
    pub fn history(&mut self) -> BridgeHistory {
        let (asked, receiver) = crossbeam_channel::unbounded();
        self.history_asked = Some(receiver);
        let kept = std::sync::Arc::clone(&self.history_kept);
        BridgeHistory { asked, waker: self.waker.clone(), kept }
    }

    /// The History pages answered since the last call.
    pub fn take_history_pages(&mut self) -> Vec<HistoryPage> {
        std::mem::take(&mut self.history_pages)
    }

    /// Sends the newest history request when none is in flight and the socket is open.
    fn send_history(&mut self) {
        if let Some(asked) = &self.history_asked
            && let Some(newest) = asked.try_iter().last()
        {
            self.history_next = Some(newest);
        }
        if self.history_in_flight.is_some() {
            return;
        }
        let Some(socket) =
            self.socket.as_ref().filter(|s| s.ready_state() == web_sys::WebSocket::OPEN)
        else {
            return;
        };
        if let Some((filter, done)) = self.history_next.take() {
            let _ = socket.send_with_str(&wire_text(&web::history_request(&filter)));
            self.history_in_flight = Some((filter, done));
        }
    }

    /// The bridge answered the history request in flight (or refused it: the page then says why).
    fn history_answered(&mut self, page: HistoryPage) {
        if let Some((_, done)) = self.history_in_flight.take() {
            self.history_pages.push(page.clone());
            done(page);
        }
    }

    /// The app's prompts and Stop (its session commands) go to the bridge's agent session.
    pub fn carry_session_commands(&mut self, commands: Receiver<SessionCommand>) {
        self.session_commands = Some(commands);
    }

    /// Queues the app's permission decisions, prompts and Stop for the bridge. A decision lost
    /// with a dropped connection is not sent again: the bridge shows the card again on the next
    /// connection, and the user decides once more.
    fn take_session_work(&mut self) {
        let mut index = 0;
        while let Some((request_id, decision)) = self.permissions.get(index) {
            match decision.try_recv() {
                Ok(decision) => {
                    // A card is decided by its request_id, whichever session asked.
                    let message = web::permission_decision(SessionKey::Own, request_id, &decision);
                    self.controls.push_back(wire_text(&message));
                    self.permissions.swap_remove(index);
                }
                Err(crossbeam_channel::TryRecvError::Empty) => index += 1,
                Err(crossbeam_channel::TryRecvError::Disconnected) => {
                    self.permissions.swap_remove(index);
                }
            }
        }
        let commands: Vec<SessionCommand> =
            self.session_commands.iter().flat_map(Receiver::try_iter).collect();
        for command in commands {
            let own = SessionKey::Own;
            let message = match command {
                SessionCommand::UserTurn(text) => web::session_prompt(own, &text),
                SessionCommand::Interrupt => web::session_stop(own),
                // The page's session is the bridge's own, which only its agent or askpane ends.
                SessionCommand::End => continue,
                SessionCommand::Older { before } => match self.ask_older() {
                    true => web::session_older(own, before),
                    false => continue,
                },
            };
            self.controls.push_back(wire_text(&message));
        }
        let hosted: Vec<(SessionKey, SessionCommand)> = self
            .hosted
            .iter()
            .flat_map(|(key, commands)| commands.try_iter().map(|command| (*key, command)))
            .collect();
        for (key, command) in hosted {
            let message = match command {
                SessionCommand::UserTurn(text) => web::session_prompt(key, &text),
                SessionCommand::Interrupt => web::session_stop(key),
                SessionCommand::End => web::session_end(key),
                SessionCommand::Older { before } => match self.ask_older() {
                    true => web::session_older(key, before),
                    false => continue,
                },
            };
            self.controls.push_back(wire_text(&message));
        }
    }

    /// True when a `session_older` may go now (none is waiting for its answer); it is then
    /// counted as sent.
    fn ask_older(&mut self) -> bool {
        !std::mem::replace(&mut self.older_in_flight, true)
    }

    /// A `session` message: the bridge's own session, or one an inbox client hosts (shown in
    /// the app the first time it comes, with who runs it). An answer to `session_older`
    /// (`before` set) goes to a session already shown only.
    fn session_arrived(&mut self, body: SessionBody<SessionUpdate>) {
        let SessionBody { update, label, session: key } = body;
        if update.before.is_some() {
            self.older_in_flight = false;
            if key != SessionKey::Own && !self.hosted.iter().any(|(known, _)| *known == key) {
                return;
            }
        }
        if key == SessionKey::Own {
            self.to_ui.send(Inbound::Page(PageEvent::SessionUpdate(Box::new(update))));
            return;
        }
        if !self.hosted.iter().any(|(known, _)| *known == key) {
            let (commands, from_app) = crossbeam_channel::unbounded();
            self.hosted.push((key, from_app));
            let label = label.filter(|label| !label.is_empty());
            let label = label.unwrap_or_else(|| "hosted session".to_owned());
            self.to_ui.send(Inbound::Session(SessionInbound::Hosted {
                session: key,
                label,
                prompt: None,
                commands,
            }));
        }
        self.to_ui.send(Inbound::Page(PageEvent::HostedUpdate {
            session: key,
            update: Box::new(update),
        }));
    }

    /// A hosted session's host went away: the session leaves the app.
    fn hosted_gone(&mut self, key: SessionKey) {
        let before = self.hosted.len();
        self.hosted.retain(|(known, _)| *known != key);
        if self.hosted.len() != before {
            self.to_ui.send(Inbound::Session(SessionInbound::HostGone { session: key }));
        }
    }

    /// A permission card from the bridge, shown once however often it is sent.
    fn permission_arrived(&mut self, card: PermissionCard) {
        let provenance = card.who.provenance();
        let request = card.request;
        if self.permissions.iter().any(|(id, _)| *id == request.request_id) {
            return;
        }
        let (reply, decision) = Responder::channel();
        self.permissions.push((request.request_id.clone(), decision));
        let ask = PermissionAsk { id: RequestId::next(), request, provenance, reply };
        self.to_ui.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask))));
    }

    /// A permission card decided (here or in another page) or withdrawn: it leaves the app, and
    /// what the app then says to its responder goes nowhere.
    fn permission_gone(&mut self, request_id: String) {
        self.permissions.retain(|(id, _)| *id != request_id);
        self.to_ui.send(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }));
    }

    /// Does what arrived, sends what was decided, and reconnects when it is time.
    pub fn pump(&mut self, now_ms: f64) {
        let (messages, opened, closed) = {
            let mut mailbox = self.mailbox.borrow_mut();
            let opened = std::mem::take(&mut mailbox.opened);
            (std::mem::take(&mut mailbox.messages), opened, mailbox.closed.clone())
        };
        if opened {
            self.told_disconnected = false;
        }
        for text in messages {
            self.receive(&text, now_ms);
        }
        self.take_decided();
        self.take_session_work();
        self.send_held();
        self.send_seen();
        self.send_history();
        let Some((code, reason)) = closed else { return };
        if self.finished {
            return;
        }
        // Only askpane's own end is final; anything else is a fault to recover from.
        if code == 1000 && reason == DONE_REASON {
            self.finish();
            return;
        }
        // A new link replaced this one (issue 11): reconnecting with it would be refused.
        if code == LINK_REPLACED_CODE {
            self.finished = true;
            self.socket = None;
            // No bridge to read history from any more: History leaves the page.
            self.history_kept.store(false, std::sync::atomic::Ordering::Relaxed);
            for held in std::mem::take(&mut self.held) {
                self.lost(held.id, "not sent: this page's link was replaced".to_owned());
            }
            self.to_ui.send(Inbound::Control(Control::Notice(
                "This link was replaced by a new one: open the new link askpane shows (a new \
                 QR code or address) to go on answering."
                    .to_owned(),
            )));
            return;
        }
        if self.socket.take().is_some() {
            self.connection_lost(code, &reason, now_ms);
        }
        match self.retry_at {
            None => self.retry_at = Some(now_ms + RETRY_MS),
            Some(at) if now_ms >= at => {
                self.retry_at = None;
                self.connect();
            }
            Some(_) => {}
        }
    }

    /// askpane is done: whatever it did not acknowledge did not count.
    fn finish(&mut self) {
        self.finished = true;
        self.socket = None;
        self.history_kept.store(false, std::sync::atomic::Ordering::Relaxed);
        for held in std::mem::take(&mut self.held) {
            self.lost(held.id, "askpane ended before it received this answer".to_owned());
        }
        self.to_ui.send(Inbound::Control(Control::Notice(
            "askpane has finished with this page; you can close it.".to_owned(),
        )));
    }

    /// The connection dropped (or the bridge closed it for a fault). Held outcomes go again on
    /// the next connection, except one the bridge found too big: that comes back to the user.
    fn connection_lost(&mut self, code: u16, reason: &str, now_ms: f64) {
        // "Show earlier" lost with the connection: the user may click again.
        self.older_in_flight = false;
        // A history request lost with the connection goes again, unless a newer one waits.
        if let Some(lost) = self.history_in_flight.take() {
            self.history_next.get_or_insert(lost);
        }
        let too_big = code == CLOSE_TOO_BIG;
        for held in std::mem::take(&mut self.held) {
            if too_big && held.sent {
                let error = format!("askpane could not take it ({reason})");
                self.refused(held, error, None, now_ms);
            } else {
                self.held.push(Held { sent: false, ..held });
            }
        }
        if !self.told_disconnected {
            self.told_disconnected = true;
            self.to_ui.send(Inbound::Control(Control::Notice(
                "The connection to askpane was lost; trying again. Your answers are kept."
                    .to_owned(),
            )));
        }
    }

    /// True while a reconnect is pending (the app should wake again soon).
    pub fn waiting_to_retry(&self) -> bool {
        self.retry_at.is_some()
    }

    /// What became of held outcomes since the last call, for the page to publish.
    pub fn take_events(&mut self) -> Vec<DeliveryEvent> {
        std::mem::take(&mut self.events)
    }

    /// Tells the bridge the user paused or extended a question's `--timeout` (issue 8's "any key
    /// to stay" and "add time"), so its backstop follows and the other tabs hear of it. Sent at
    /// once when connected, otherwise as soon as the connection is back.
    pub fn send_timeout_change(&mut self, tool_use_id: &str, change: TimeoutChange) {
        self.controls.push_back(wire_text(&web::timeout_change_message(tool_use_id, change)));
        self.send_held();
    }

    fn receive(&mut self, text: &str, now_ms: f64) {
        // A kind this page does not know (a newer bridge's) is not for it.
        let Ok(message) = serde_json::from_str::<BridgeMessage>(text) else { return };
        match message {
            ToPage::UserQuestion(question) => {
                let tool_use_id = question.tool_use_id.clone();
                // Held here: its outcome is on its way again, not a new question.
                if self.held.iter().any(|held| held.id == tool_use_id)
                    || !self.shown.insert(tool_use_id.clone())
                {
                    return;
                }
                let deadline_ms = question.timeout_secs.map(|secs| now_ms + secs as f64 * 1000.0);
                match self.request_for(question, deadline_ms, now_ms) {
                    Ok(request) => {
                        self.to_ui.send(Inbound::Request(RequestEvent::Ask(Box::new(request))));
                    }
                    Err(invalid) => {
                        self.shown.remove(&tool_use_id);
                        self.to_ui.send(Inbound::Control(Control::Notice(format!(
                            "askpane sent questions this page cannot show: {invalid}"
                        ))));
                    }
                }
            }
            ToPage::AnswerReceived { tool_use_id, outcome } => {
                if let Some(at) = self.held.iter().position(|held| held.id == tool_use_id) {
                    let held = self.held.remove(at);
                    self.event(&held.id, DeliveryState::Sent, kind_text(&outcome));
                    self.to_ui.send(Inbound::Page(PageEvent::Delivery(Delivery::Received {
                        tool_use_id,
                    })));
                }
            }
            ToPage::QuestionWithdrawn { tool_use_id, reason } => {
                // A kind this page does not know reads as withdrawn.
                let kind = reason.given().copied();
                // How it ended elsewhere: answered in another tab, or withdrawn by the agent.
                let how = match kind {
                    Some(OutcomeKind::Answered | OutcomeKind::Replied) => {
                        Some("answered in another window")
                    }
                    Some(OutcomeKind::Declined | OutcomeKind::Stopped) => {
                        Some("declined in another window")
                    }
                    Some(OutcomeKind::TimedOut) => Some("ended: its time ran out"),
                    _ => None,
                };
                if let Some(at) = self.held.iter().position(|held| held.id == tool_use_id) {
                    // Our own answer is acknowledged before the question goes, so this one
                    // ended otherwise; a timeout is the bridge deciding what the page held.
                    let held = self.held.remove(at);
                    let timed_out = kind == Some(OutcomeKind::TimedOut);
                    if matches!(held.outcome, Outcome::TimedOut { .. }) && timed_out {
                        self.event(&held.id, DeliveryState::Sent, kind_text(&reason));
                        self.to_ui.send(Inbound::Page(PageEvent::Delivery(Delivery::Received {
                            tool_use_id,
                        })));
                    } else {
                        let how = how.unwrap_or("withdrawn by the agent");
                        self.lost(held.id, format!("not sent: the question was {how} first"));
                    }
                    return;
                }
                self.to_ui.send(match how {
                    Some(how) => {
                        Inbound::Page(PageEvent::Settled { tool_use_id, how: how.to_owned() })
                    }
                    None => Inbound::Request(RequestEvent::Withdraw { tool_use_id }),
                });
            }
            // Issue 11: the agent session the bridge carries; issue 24: its older entries.
            ToPage::Session(body) | ToPage::SessionOlderEntries(body) => self.session_arrived(body),
            ToPage::SessionGone { session } => self.hosted_gone(session),
            ToPage::SessionsOpen { sessions } => {
                let open: Vec<SessionKey> = sessions.into_iter().map(SessionKey::Hosted).collect();
                let gone: Vec<SessionKey> = self
                    .hosted
                    .iter()
                    .map(|(key, _)| *key)
                    .filter(|key| !open.contains(key))
                    .collect();
                for key in gone {
                    self.hosted_gone(key);
                }
            }
            ToPage::PermissionRequest(card) => self.permission_arrived(card),
            ToPage::PermissionsOpen { request_ids: open } => {
                let gone: Vec<String> = self
                    .permissions
                    .iter()
                    .map(|(id, _)| id.clone())
                    .filter(|id| !open.contains(id))
                    .collect();
                for request_id in gone {
                    self.permission_gone(request_id);
                }
            }
            ToPage::PermissionWithdrawn { request_id, .. } => self.permission_gone(request_id),
            // Another tab stopped or extended the countdown: this page follows.
            ToPage::TimeoutChanged { tool_use_id, timeout_secs: left_secs } => {
                self.to_ui.send(Inbound::Page(PageEvent::Countdown { tool_use_id, left_secs }));
            }
            ToPage::HistoryKept => {
                self.history_kept.store(true, std::sync::atomic::Ordering::Relaxed);
                self.waker.wake();
            }
            ToPage::HistoryPage(page) => self.history_answered(page),
            ToPage::Error(refusal) => self.refusal_arrived(refusal, now_ms),
        }
    }

    /// The bridge refused something this page sent: "Show earlier", a History request, or an
    /// answer it holds.
    fn refusal_arrived(&mut self, refusal: Refusal, now_ms: f64) {
        match refusal.request {
            // "Show earlier" refused (asked again too soon, say): the user may click again.
            Some(RefusedRequest::SessionOlder) => {
                self.older_in_flight = false;
                return;
            }
            Some(RefusedRequest::HistoryRequest) => {
                let Some(filter) = self.history_in_flight.as_ref().map(|(f, _)| f.clone()) else {
                    return;
                };
                let error = Some(refusal.message);
                self.history_answered(HistoryPage { filter, error, ..HistoryPage::default() });
                return;
            }
            None => {}
        }
        let held = refusal
            .tool_use_id
            .as_str()
            .and_then(|id| self.held.iter().position(|held| held.id == id));
        let not_open = refusal.not_open();
        match held.map(|at| self.held.remove(at)) {
            Some(held) if not_open => self.lost(
                held.id,
                "not sent: askpane no longer had this question open (it was answered, withdrawn \
                 or ended, perhaps by this answer before the connection dropped)"
                    .to_owned(),
            ),
            Some(held) => self.refused(held, refusal.message, refusal.question, now_ms),
            None => {
                let message = refusal.message;
                self.to_ui
                    .send(Inbound::Control(Control::Notice(format!("askpane refused: {message}"))));
            }
        }
    }

    /// A request for the app from a `user_question`, whose outcome this client then awaits.
    fn request_for(
        &mut self,
        question: UserQuestion,
        deadline_ms: Option<f64>,
        now_ms: f64,
    ) -> Result<Request, String> {
        let incoming = question.incoming().map_err(|error| error.to_string())?;
        let id = incoming.envelope.tool_use_id().unwrap_or_default().to_owned();
        let envelope = incoming.envelope.clone();
        let (mut request, outcome) =
            Request::new(incoming, question.provenance()).map_err(|invalid| invalid.to_string())?;
        // An OpenCode question (say) gets OpenCode's decline bar and receipt here too.
        request.core.reply_shape.format = question.reply_format();
        // A Codex question's receipt shows the answers' JSON its model reads, and the line
        // Codex gets (the bridge is still answered in the page's own form: `envelope`).
        if let Some(agent_envelope) = question.agent_envelope() {
            request.core.envelope = agent_envelope;
        }
        let policy = &mut request.policy;
        policy.awaits_ack = true;
        // Whole seconds, rounded up: the page never ends a question before the bridge would.
        policy.timeout_secs =
            deadline_ms.map(|deadline| ((deadline - now_ms).max(0.0) / 1000.0).ceil() as u64);
        policy.mark_skipped = question.mark_skipped;
        if !question.selected.is_empty() {
            let drafts = web::drafts_from_numbers(&request.core.ask, &question.selected, None);
            policy.preset = drafts.unwrap_or_default();
        }
        self.awaited.push(Awaited {
            id,
            question,
            envelope,
            outcome,
            deadline_ms,
            seen_told: false,
        });
        Ok(request)
    }

    /// The bridge refused a held outcome: the question goes back to the app as the user left it,
    /// with why.
    fn refused(&mut self, held: Held, error: String, question: Option<usize>, now_ms: f64) {
        self.event(&held.id, DeliveryState::Refused, error.clone());
        let Ok(mut request) = self.request_for(held.question.clone(), held.deadline_ms, now_ms)
        else {
            self.lost(held.id, format!("not sent: {error}"));
            return;
        };
        self.shown.insert(held.id.clone());
        // The form the user sent comes back as they left it.
        let sent = held.reply.as_deref().and_then(|r| serde_json::from_str::<FromPage>(r).ok());
        if let (Outcome::Answered(_), Some(FromPage::QuestionAnswer(form))) = (&held.outcome, sent)
        {
            let none = Map::new();
            let answers = form.picks.answers.given().unwrap_or(&none);
            let notes = form.picks.notes.given();
            if let Ok(drafts) = web::drafts_from_numbers(&request.core.ask, answers, notes) {
                request.policy.preset = drafts;
            }
        }
        let delivery = Delivery::Refused {
            request: Box::new(request),
            refused: held.outcome,
            error,
            question,
        };
        self.to_ui.send(Inbound::Page(PageEvent::Delivery(delivery)));
    }

    fn lost(&mut self, tool_use_id: String, how: String) {
        self.event(&tool_use_id, DeliveryState::Lost, how.clone());
        self.to_ui.send(Inbound::Page(PageEvent::Delivery(Delivery::Lost { tool_use_id, how })));
    }

    fn event(&mut self, tool_use_id: &str, state: DeliveryState, detail: String) {
        self.events.push(DeliveryEvent { tool_use_id: tool_use_id.to_owned(), state, detail });
    }

    /// Moves the outcomes the app decided into the held list.
    fn take_decided(&mut self) {
        let mut index = 0;
        while let Some(waiting) = self.awaited.get(index) {
            let Ok(outcome) = waiting.outcome.try_recv() else {
                index += 1;
                continue;
            };
            let awaited = self.awaited.swap_remove(index);
            self.shown.remove(&awaited.id);
            // Withdrawn: the bridge already knows. Everything else goes, a countdown that ran
            // out included (with what was picked, so the bridge tells the agent the same).
            let reply = match outcome {
                Outcome::Withdrawn => continue,
                ref decided => awaited.envelope.reply(decided).map(|reply| reply.to_string()),
            };
            self.event(&awaited.id, DeliveryState::Sending, outcome.kind().as_str().to_owned());
            self.held.push(Held {
                id: awaited.id,
                question: awaited.question,
                outcome,
                reply,
                sent: false,
                deadline_ms: awaited.deadline_ms,
            });
        }
    }

    /// Sends the held outcomes not yet sent on this connection, and queued timeout changes.
    /// Tells the bridge which questions this page shows: a frame is being drawn and the page is
    /// visible (a hidden tab draws none). Only a question some page showed may end when every
    /// page goes away.
    fn send_seen(&mut self) {
        let visible = web_sys::window()
            .and_then(|window| window.document())
            .is_some_and(|document| !document.hidden());
        let Some(socket) =
            self.socket.as_ref().filter(|s| s.ready_state() == web_sys::WebSocket::OPEN)
        else {
            return;
        };
        if !visible {
            return;
        }
        for awaited in self.awaited.iter_mut().filter(|awaited| !awaited.seen_told) {
            awaited.seen_told =
                socket.send_with_str(&wire_text(&web::question_seen(&awaited.id))).is_ok();
        }
    }

    fn send_held(&mut self) {
        // Until the socket is open, they wait here rather than be lost.
        let Some(socket) =
            self.socket.as_ref().filter(|s| s.ready_state() == web_sys::WebSocket::OPEN)
        else {
            return;
        };
        while let Some(control) = self.controls.pop_front() {
            let _ = socket.send_with_str(&control);
        }
        for held in self.held.iter_mut().filter(|held| !held.sent) {
            held.sent = true;
            if let Some(reply) = &held.reply {
                let _ = socket.send_with_str(reply);
            }
        }
    }
}

/// A message for the bridge as the text sent.
fn wire_text(message: &FromPage) -> String {
    // Our own types hold text keys only: writing them as JSON cannot fail.
    serde_json::to_string(message).unwrap_or_default()
}

/// An outcome kind as the bridge named it, for a delivery's detail.
fn kind_text(kind: &Sent<OutcomeKind>) -> String {
    match kind.given() {
        Some(kind) => kind.as_str().to_owned(),
        None => kind.other_text().unwrap_or_default().to_owned(),
    }
}

/// Forms kept in the tab's `sessionStorage`, by tool_use_id, with the questions they were typed
/// into, and plans' reviews and ACP forms' fields by the card's id on the bridge, with the card's
/// input: they survive a reload of the tab and nothing else (another tab, another device).
mod page_drafts {
    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Serialize};

    use crate::book::approval::PendingPermission;
    use crate::book::{Core, Form};
    use crate::protocol::Draft;
    use crate::protocol::stream::PermissionRequest;

    #[derive(Default, Deserialize, Serialize)]
    struct Saved {
        /// The `questions` JSON the forms were typed into.
        questions: String,
        forms: Vec<SavedForm>,
    }

    #[derive(Clone, Default, Deserialize, Serialize)]
    struct SavedForm {
        chosen: Vec<usize>,
        other_selected: bool,
        other_text: String,
        notes: String,
        cursor: usize,
        touched: bool,
    }

    fn key(core: &Core) -> Option<String> {
        core.envelope.tool_use_id().map(|id| format!("askpane-draft:{id}"))
    }

    fn questions(core: &Core) -> String {
        core.ask.input().get("questions").map(serde_json::Value::to_string).unwrap_or_default()
    }

    fn storage() -> Option<web_sys::Storage> {
        web_sys::window()?.session_storage().ok().flatten()
    }

    /// What was kept for `core`'s very questions, if anything.
    fn load(core: &Core) -> Option<Saved> {
        let text = storage()?.get_item(&key(core)?).ok().flatten()?;
        let saved: Saved = serde_json::from_str(&text).ok()?;
        (saved.questions == questions(core)).then_some(saved)
    }

    pub(super) fn read(core: &Core) -> Option<Vec<Form>> {
        let forms = load(core)?.forms.into_iter().map(|saved| Form {
            draft: Draft::restored(
                saved.chosen,
                saved.other_selected,
                saved.other_text,
                saved.notes,
                saved.touched,
            ),
            cursor: saved.cursor,
            acted: false,
        });
        Some(forms.collect())
    }

    pub(super) fn save(core: &Core, question: usize, form: &Form) {
        let (Some(storage), Some(key)) = (storage(), key(core)) else { return };
        let mut saved =
            load(core).unwrap_or_else(|| Saved { questions: questions(core), ..Saved::default() });
        // A tool allows four questions; a bound keeps a hostile index from growing the list.
        if question >= core.ask.questions().len() {
            return;
        }
        if saved.forms.len() <= question {
            saved.forms.resize(question + 1, SavedForm::default());
        }
        let draft = &form.draft;
        if let Some(slot) = saved.forms.get_mut(question) {
            *slot = SavedForm {
                chosen: draft.chosen().to_vec(),
                other_selected: draft.is_chosen(crate::protocol::Pick::Other),
                other_text: draft.other_text().to_owned(),
                notes: draft.notes().to_owned(),
                cursor: form.cursor,
                touched: draft.is_touched(),
            };
        }
        if let Ok(text) = serde_json::to_string(&saved) {
            // A full storage keeps the form on the page, only not across a reload.
            let _ = storage.set_item(&key, &text);
        }
    }

    pub(super) fn forget(core: &Core) {
        if let (Some(storage), Some(key)) = (storage(), key(core)) {
            let _ = storage.remove_item(&key);
        }
    }

    /// A card's draft as the tab keeps it: with the card's input it was typed on, so it goes
    /// back only into the very same card.
    #[derive(Deserialize, Serialize)]
    struct SavedCard {
        input: serde_json::Value,
        draft: serde_json::Value,
    }

    fn card_key(request: &PermissionRequest) -> String {
        format!("askpane-card-draft:{}", request.request_id)
    }

    /// What was kept of `card` (a plan's review, a form's fields), if it reads as a `T`.
    pub(super) fn read_card<T: DeserializeOwned>(card: &PendingPermission) -> Option<T> {
        let text = storage()?.get_item(&card_key(&card.request)).ok().flatten()?;
        let saved: SavedCard = serde_json::from_str(&text).ok()?;
        if saved.input != card.request.input {
            return None;
        }
        serde_json::from_value(saved.draft).ok()
    }

    pub(super) fn save_card(card: &PendingPermission, draft: &impl Serialize) {
        let Some(storage) = storage() else { return };
        let Ok(draft) = serde_json::to_value(draft) else { return };
        let saved = SavedCard { input: card.request.input.clone(), draft };
        if let Ok(text) = serde_json::to_string(&saved) {
            // A full storage keeps the card's draft on the page, only not across a reload.
            let _ = storage.set_item(&card_key(&card.request), &text);
        }
    }

    pub(super) fn forget_card(request: &PermissionRequest) {
        if let Some(storage) = storage() {
            let _ = storage.remove_item(&card_key(request));
        }
    }
}
