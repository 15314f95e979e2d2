//! The eframe app: drains the adapters' channel into the request book ([`State`]), draws it, and
//! sends each outcome to the reply handles the book gives back.
//!
//! `logic` receives (it also runs while the window is hidden); `ui` draws and applies the
//! actions the view returns. Each request's [`Responder`] waits in the book beside it, and
//! anything still open when the app ends is told the window closed.
//!
//! Keys are the user's only when they meant them for askpane: for a moment after the window
//! appears, gains focus, or shows a request the user did not pick, key input is dropped, so
//! typing aimed at a terminal (or Enter pressed once too often) never answers a question. Clicks
//! get the same guard, a little longer after the window appears or comes back: a click aimed at
//! the program that was under the pointer never answers one either.

pub mod history;
// The journal is the book's (issue 25: the store implements it, and must not import the app).
pub use crate::book::journal;
pub mod pairing;
pub mod state;

use std::collections::HashMap;

use crate::book::Settled;

use crossbeam_channel::{Receiver, TryRecvError};
use egui_commonmark::CommonMarkCache;

use crate::protocol::notice::{Snapshot, Waiting};
use crate::protocol::stream::PermissionDecision;
use crate::protocol::web::TimeoutChange;
use crate::protocol::{Outcome, TextField};
use crate::transport::{
    Delivery, Inbound, PermissionAsk, Request, RequestId, Responder, SessionCommand, SessionEvent,
    SessionKey,
};
use crate::view::{self, theme};
use history::{HistoryAction, HistoryPage};

use state::{Countdown, SessionEffect, State};

/// How long key input is ignored after the window appears, gains focus, or shows a request the
/// user did not pick: longer than a keystroke already on its way, shorter than a deliberate one.
pub const KEY_GRACE: std::time::Duration = std::time::Duration::from_millis(400);

/// How long presses of the pointer are ignored after the window appears, comes back or gains
/// focus: a click aimed at the program that was there lands a little later than a key (one
/// arrived 0.6 s after the inbox's window came back over the user's editor, issue 24).
pub const POINTER_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// A box edited this recently counts as being typed in when a countdown runs out.
const STILL_TYPING_SECS: f64 = 3.0;

/// How the window behaves for a mode.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppOptions {
    /// Close the window once the adapters are done and no question is left (`askpane ask`).
    /// The demo keeps it open to show what was sent.
    pub close_when_done: bool,
    /// How long keys (and clicks) are ignored at the moments described in the module docs
    /// ([`KEY_GRACE`] and [`POINTER_GRACE`] unless a test needs another).
    pub key_grace: Option<std::time::Duration>,
    /// Issue 10 (inbox): the long-lived inbox's window. Closing it hides it (asking first,
    /// when requests are open, whether to decline them all); a request that arrives shows it
    /// again without taking the keyboard. Only a signal or `askpane inbox --quit` ends it
    /// (or [`App::with_lean_exit`]).
    pub resident: bool,
    /// The window starts hidden (a resident inbox woken from its lean state by a client: what
    /// the client sends decides whether it shows).
    pub start_hidden: bool,
}

/// Issue 14 (a lean resident inbox): when the inbox's window may end so that the process can
/// give its window's memory back, and where it says it did.
pub struct LeanExit {
    /// When no client is connected (the socket server's view), stops the server accepting
    /// and returns true: nothing can then arrive that the window would have to hold. Asked
    /// last, and only when the window would end at once if it says yes.
    pub claim_quiet: Box<dyn Fn() -> bool>,
    /// Set when the window ended to go lean, for the composition root to read once the window
    /// is gone.
    pub went_lean: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// While a hidden inbox window waits for its last client to leave before it goes lean, it
/// looks this often (no event says a client left).
const LEAN_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// The window's state as the app holds it: the questions in the book, and the tool calls
/// waiting for approval, each with its responder.
pub type WindowState = State<Responder, Responder<PermissionDecision>>;

pub struct App {
    inbox: Receiver<Inbound>,
    inbox_open: bool,
    /// Where prompts and Stop go, per agent session the app shows.
    sessions: HashMap<SessionKey, crossbeam_channel::Sender<SessionCommand>>,
    state: WindowState,
    markdown: CommonMarkCache,
    options: AppOptions,
    title: String,
    /// Keys pressed before this time (the app's clock) are dropped.
    keys_blocked_until: f64,
    /// The request shown last frame, to notice one the user did not pick.
    shown: Option<RequestId>,
    /// The user picked the request now shown (a click in the request list).
    picked_by_user: bool,
    /// When each Other or note box was last edited (the app's clock).
    edited: HashMap<(RequestId, usize, TextField), f64>,
    /// The user confirmed closing; the next close request goes through.
    closing: bool,
    /// askpane is being stopped (issue 9: a signal): what every open request ends with. The
    /// window then closes without asking.
    stopped: Option<Outcome>,
    /// Called at the start of every frame: the web build polls its transport here (no threads).
    frame_hook: Option<FrameHook>,
    /// The title and the clipboard where the app runs.
    host: Box<dyn Host>,
    /// Where the user's countdown changes go (the browser page tells askpane's bridge).
    countdown_changes: Option<crossbeam_channel::Sender<(String, TimeoutChange)>>,
    /// Issue 11 (store): where opened requests, draft changes and outcomes are reported.
    journal: Option<Box<dyn journal::Journal>>,
    /// Issue 11 (notifications): where what waits, and whether the window has focus, is
    /// reported when it changes, with what was reported last.
    /// The notifier, and what it was last told.
    notices: Option<(NoticeReport, Told)>,
    /// A notification's "Open" arrived: the window comes back (and is raised) this frame.
    revealed: bool,
    /// The hidden window was shown again: clicks wait out [`POINTER_GRACE`].
    raised: bool,
    /// Until when presses of the pointer are dropped (the driver's clock).
    clicks_blocked_until: f64,
    /// A press was dropped: its release goes too.
    press_dropped: bool,
    /// The time of the last frame (the app's clock), for a host that gives none.
    last_frame_time: f64,
    /// Issue 11: the History page, in a resident window whose journal keeps history.
    history: Option<history::History>,
    /// Where the journal's thread sends the History pages it read.
    history_pages: (crossbeam_channel::Sender<HistoryPage>, Receiver<HistoryPage>),
    /// The resident window is hidden (closed by the user, or started hidden).
    hidden: bool,
    /// [`AppOptions::start_hidden`], until the first frame has hidden the window.
    hide_at_start: bool,
    /// Issue 14: when a hidden, empty inbox window may end (see [`LeanExit`]).
    lean_exit: Option<LeanExit>,
}

/// Receives the window's [`Snapshot`] for desktop notifications (natively the notifier's
/// channel; it never blocks).
pub type NoticeReport = Box<dyn FnMut(Snapshot)>;

/// What the notifier was last told: the requests waiting, and (focused, hidden).
type Told = (Vec<RequestId>, (bool, bool));

/// Work a composition root runs once per frame, before the inbox is drained: the web build polls
/// its transport here (no threads); natively, the first frame (the window exists, not yet shown)
/// is where the window manager is told how the window behaves.
pub type FrameHook = Box<dyn FnMut(&egui::Context, &mut eframe::Frame)>;

impl App {
    pub fn new(ctx: &egui::Context, inbox: Receiver<Inbound>, options: AppOptions) -> Self {
        theme::install(ctx);
        let mut state = State::default();
        if options.resident {
            state.make_resident();
        }
        App {
            inbox,
            inbox_open: true,
            sessions: HashMap::new(),
            state,
            markdown: CommonMarkCache::default(),
            options,
            title: String::new(),
            // The first frame starts the grace (see `guard_input`).
            keys_blocked_until: f64::NEG_INFINITY,
            shown: None,
            picked_by_user: false,
            edited: HashMap::new(),
            closing: false,
            stopped: None,
            frame_hook: None,
            host: Box::new(NativeHost),
            countdown_changes: None,
            journal: None,
            notices: None,
            revealed: false,
            raised: false,
            clicks_blocked_until: f64::NEG_INFINITY,
            press_dropped: false,
            last_frame_time: 0.0,
            history: None,
            history_pages: crossbeam_channel::unbounded(),
            hidden: options.start_hidden,
            hide_at_start: options.start_hidden,
            lean_exit: None,
        }
    }

    /// Issue 14: a resident window that is hidden with nothing open and no client connected
    /// ends (instead of staying hidden), setting `lean.went_lean`: the composition root then
    /// replaces the process with the lean inbox.
    pub fn with_lean_exit(mut self, lean: LeanExit) -> Self {
        self.lean_exit = Some(lean);
        self
    }

    /// Whether the window ends now for the inbox to go lean: nothing open, no agent session
    /// shown, no question about closing on screen, and no client connected. A yes has stopped
    /// the socket server accepting ([`LeanExit::claim_quiet`]): the window must then end.
    fn claim_lean(&self) -> bool {
        self.lean_exit.as_ref().is_some_and(|lean| {
            self.options.resident
                && self.state.book().is_empty()
                && self.sessions.is_empty()
                && self.state.permissions().is_empty()
                && !self.state.confirming_close()
                && (lean.claim_quiet)()
        })
    }

    fn go_lean(&mut self, ctx: &egui::Context) {
        if let Some(lean) = &self.lean_exit {
            lean.went_lean.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        self.closing = true;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    /// Shows the resident window again (it may be hidden).
    fn show(&mut self, ctx: &egui::Context) {
        if self.hidden {
            self.raised = true;
        }
        self.hidden = false;
        ctx.send_viewport_cmd(egui::ViewportCommand::Visible(true));
    }

    /// Issue 11 (notifications): reports what waits and whether the window has focus to
    /// `report` each time either changes (the inbox's notifier decides what to show).
    pub fn with_notices(mut self, report: NoticeReport) -> Self {
        self.notices = Some((report, (Vec::new(), (false, false))));
        self
    }

    /// Issue 11 (store): reports every request opened, every change to a form and every
    /// outcome to `journal` (natively the store's `DraftSink`, which saves them off this
    /// thread).
    pub fn with_store(mut self, journal: impl journal::Journal + 'static) -> Self {
        // The inbox's window also shows what its journal kept: the History page.
        if self.options.resident && journal.keeps_history() {
            self.history = Some(history::History::default());
        }
        self.journal = Some(Box::new(journal));
        self
    }

    /// Issue 11 (History in the browser): the History page, read through `journal`, in a
    /// window that is not the inbox's (the browser page, whose journal asks the bridge).
    pub fn with_history(mut self, journal: impl journal::Journal + 'static) -> Self {
        self.history = Some(history::History::default());
        self.journal = Some(Box::new(journal));
        self
    }

    /// Shows an agent session: its transcript, a prompt box, Stop. `prompt` is the first user
    /// turn when it was given on the command line (already sent by the adapter).
    pub fn with_session(
        mut self,
        commands: crossbeam_channel::Sender<SessionCommand>,
        prompt: Option<&str>,
    ) -> Self {
        self.state.start_session(SessionKey::Own, None, prompt);
        self.sessions.insert(SessionKey::Own, commands);
        self
    }

    /// Sends prompts and Stop to `commands` without showing a session yet: the browser page,
    /// whose session (if the bridge carries one) arrives as [`Inbound::SessionUpdate`].
    pub fn with_session_commands(
        mut self,
        commands: crossbeam_channel::Sender<SessionCommand>,
    ) -> Self {
        self.sessions.insert(SessionKey::Own, commands);
        self
    }

    /// Reports every countdown the user stops ("any key to stay") or extends ("+1 min"), by
    /// tool_use_id, so another holder of the question (the bridge's backstop) follows.
    pub fn with_countdown_changes(
        mut self,
        changes: crossbeam_channel::Sender<(String, TimeoutChange)>,
    ) -> Self {
        self.countdown_changes = Some(changes);
        self
    }

    /// Sets the title and the clipboard's owner where the app does not run natively ([`Host`]).
    pub fn with_host(mut self, host: impl Host + 'static) -> Self {
        self.host = Box::new(host);
        self
    }

    /// Runs `hook` at the start of every frame (see [`FrameHook`]).
    pub fn with_frame_hook(mut self, hook: FrameHook) -> Self {
        self.frame_hook = Some(hook);
        self
    }

    /// The state, for tests and for the web entry point.
    pub fn state(&self) -> &WindowState {
        &self.state
    }

    /// Moves everything the adapters sent into the state. Returns true if a question arrived.
    fn receive(&mut self, now: f64) -> bool {
        let mut arrived = false;
        loop {
            match self.inbox.try_recv() {
                Ok(Inbound::Ask(request)) => {
                    arrived = true;
                    self.add(*request, now);
                }
                Ok(Inbound::Withdraw { tool_use_id }) => {
                    let settled = self.state.withdraw(&tool_use_id);
                    self.send(settled);
                }
                // Issue 10 (inbox): the client that asked went away.
                Ok(Inbound::Leave { asker }) => {
                    let settled = self.state.leave(asker);
                    self.send(settled);
                }
                Ok(Inbound::Settled { tool_use_id, how }) => {
                    let settled = self.state.settled_elsewhere(&tool_use_id, &how);
                    self.send(settled);
                }
                Ok(Inbound::Notice(notice)) => self.state.notify(notice),
                Ok(Inbound::Permission(permission)) => {
                    arrived = true;
                    let PermissionAsk { id, request, provenance, reply } = *permission;
                    self.state.ask_permission(id, request, provenance, reply);
                }
                Ok(Inbound::WithdrawPermission { request_id }) => {
                    self.state.withdraw_permission(&request_id);
                }
                Ok(Inbound::Shutdown { outcome }) => {
                    // Issue 9: a signal. Everything open hears why, and the window closes.
                    self.stopped = Some(outcome);
                    self.close_all();
                    self.closing = true;
                }
                // Issue 9: what became of an answer the browser page sent to askpane.
                Ok(Inbound::Delivery(delivery)) => match delivery {
                    Delivery::Received { tool_use_id } => self.state.delivered(&tool_use_id),
                    Delivery::Lost { tool_use_id, how } => {
                        self.state.not_delivered(&tool_use_id, how)
                    }
                    Delivery::Refused { request, refused, error, question } => {
                        let id = request.core.id;
                        self.add(*request, now);
                        self.state.returned(id, &refused, &error, question);
                    }
                },
                // Issue 11: decided as it arrived, never shown, but recorded all the same.
                Ok(Inbound::Unshown { core, outcome }) => {
                    if let Some(journal) = &self.journal {
                        journal.settled(&core, &outcome);
                    }
                }
                // Issue 11: a desktop notification's "Open": back on screen, on that request.
                Ok(Inbound::Reveal { request }) => {
                    if let Some(request) = request
                        && self.state.book().get(request).is_some()
                    {
                        self.state.apply(state::Action::SelectRequest(request));
                        self.picked_by_user = true;
                    }
                    // The question, not the History page, is what the user asked to see.
                    if let Some(history) = &mut self.history {
                        history.open = false;
                    }
                    self.revealed = true;
                }
                Ok(Inbound::Countdown { tool_use_id, left_secs }) => {
                    self.state.countdown_changed(&tool_use_id, now, left_secs);
                }
                Ok(Inbound::SessionUpdate(update)) => self.state.session_update(*update),
                Ok(Inbound::HostedUpdate { session, update }) => {
                    self.state.hosted_update(session, *update);
                }
                Ok(Inbound::Session(event)) => {
                    let event = *event;
                    if let SessionEvent::Ended { status, .. } = &event {
                        self.state.notify(format!("The agent ended ({status})."));
                    }
                    self.state.session_event(SessionKey::Own, event);
                }
                // Issue 10: an inbox client hosts a session (`askpane claude`).
                Ok(Inbound::Hosted { session, label, prompt, commands }) => {
                    self.state.start_session(session, Some(label), prompt.as_deref());
                    self.sessions.insert(session, commands);
                }
                Ok(Inbound::HostedEvent { session, event }) => {
                    self.state.session_event(session, *event);
                }
                Ok(Inbound::HostGone { session }) => {
                    self.state.end_session(session);
                    self.sessions.remove(&session);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.inbox_open = false;
                    break;
                }
            }
        }
        arrived
    }

    /// Hands a request to the book; one its policy decides is answered at once.
    fn add(&mut self, request: Request, now: f64) {
        let Request { core, mut policy, reply } = request;
        // Issue 11 (store): a question asked again after a crash comes back as it was left.
        if let Some(journal) = &self.journal {
            journal.restore(&core, &mut policy);
        }
        self.state.take(core, policy, reply, now, self.journal.as_deref());
    }

    /// Sends a settled request's outcome to every agent waiting on it.
    fn send(&mut self, settled: Option<Settled<Responder>>) {
        let Some(settled) = settled else { return };
        let delivered = settled.deliver(self.journal.as_deref());
        self.edited.retain(|(id, _, _), _| *id != delivered.open.id());
    }

    /// Applies the view's actions; finished requests go out at once.
    pub fn apply(&mut self, ctx: &egui::Context, actions: Vec<state::Action>) {
        let now = ctx.input(|input| input.time);
        for action in actions {
            match &action {
                state::Action::Session(session_action) => {
                    if let Some(effect) = self.state.apply_session(session_action.clone()) {
                        self.perform(effect);
                    }
                    continue;
                }
                // Issue 10 (inbox): "Decline all" declines, and the window only hides.
                state::Action::ConfirmClose if self.options.resident => {
                    self.close_all();
                    self.hidden = true;
                    ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
                }
                state::Action::Hide => {
                    self.hidden = true;
                    ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
                }
                state::Action::ConfirmClose => {
                    self.closing = true;
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
                // Exactly what the window's close button does: the close path asks first when
                // answers are in progress.
                state::Action::RequestClose => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
                state::Action::SelectRequest(_) => self.picked_by_user = true,
                state::Action::Edit(state::Edit::SetOtherText { question, .. }) => {
                    self.note_edit(*question, TextField::Other, now);
                }
                state::Action::Edit(state::Edit::SetNotes { question, .. }) => {
                    self.note_edit(*question, TextField::Notes, now);
                }
                _ => {}
            }
            // Issue 11 (store): which form this edit may change, to save it once applied.
            let edited_form = match (&self.journal, &action) {
                (Some(_), state::Action::Edit(edit)) => {
                    self.state.current().and_then(|open| journal_form(edit, open))
                }
                _ => None,
            };
            let settled = self.state.apply(action);
            if settled.is_none()
                && let (Some(journal), Some((id, question))) = (&self.journal, edited_form)
                && let Some(open) = self.state.book().get(id)
                && let Some(form) = open.forms.get(question)
            {
                journal.draft_changed(&open.core, question, form);
            }
            self.send(settled);
        }
    }

    fn note_edit(&mut self, question: usize, field: TextField, now: f64) {
        if let Some(current) = self.state.current() {
            self.edited.insert((current.id(), question, field), now);
        }
    }

    /// Sends what the user finished of every request whose time ran out; wakes for the next.
    fn expire(&mut self, ctx: &egui::Context, now: f64) {
        let edited = &self.edited;
        let focused = ctx.memory(|memory| memory.focused());
        // A box counts as being typed in while it has the keyboard or was edited a moment ago.
        let typing = |id, question, field| {
            let box_id = match field {
                TextField::Other => view::question::other_text_id(id, question),
                TextField::Notes => view::question::notes_id(id, question),
            };
            focused == Some(box_id)
                || edited
                    .get(&(id, question, field))
                    .is_some_and(|&at| now - at < STILL_TYPING_SECS)
        };
        for settled in self.state.expire(now, &typing) {
            self.send(Some(settled));
        }
        if let Some(deadline) = self.state.next_deadline() {
            // Once a second for the countdown, and exactly at the deadline.
            let until = (deadline - now).clamp(0.0, 1.0);
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(until));
        }
    }

    fn perform(&mut self, effect: SessionEffect) {
        let command = match effect {
            // The book sent it to the agent already.
            SessionEffect::Decided { .. } => return,
            SessionEffect::Prompt { session, text } => (session, SessionCommand::UserTurn(text)),
            SessionEffect::Interrupt { session } => (session, SessionCommand::Interrupt),
            SessionEffect::End { session } => (session, SessionCommand::End),
            // In a browser page, where only the bridge keeps the older entries.
            SessionEffect::Older { session, before } => (session, SessionCommand::Older { before }),
        };
        let (session, command) = command;
        if let Some(commands) = self.sessions.get(&session) {
            // The session may have ended; the transcript then says so.
            let _ = commands.send(command);
        }
    }

    /// Tells every open request that the window closed (or, when askpane is being stopped, why),
    /// and drops what never reached the state.
    fn close_all(&mut self) {
        let outcome = self.stopped.clone().unwrap_or_else(Outcome::closed);
        for settled in self.state.close_all(&outcome) {
            self.send(Some(settled));
        }
        // Requests still in the channel: their responders send the closed decline when dropped
        // (or are told askpane was stopped).
        while let Ok(message) = self.inbox.try_recv() {
            if let (Inbound::Ask(request), Some(stopped)) = (message, &self.stopped) {
                request.reply.send(stopped.clone());
            }
        }
        let stopped = self.stopped.as_ref().and_then(Outcome::deny_message);
        self.state.close_permissions(stopped.as_deref());
    }
}

impl eframe::App for App {
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        crate::view::theme::background(visuals).to_normalized_gamma_f32()
    }

    fn logic(&mut self, ctx: &egui::Context, frame: &mut eframe::Frame) {
        if let Some(hook) = &mut self.frame_hook {
            hook(ctx, frame);
        }
        let now = ctx.input(|input| input.time);
        let arrived = self.receive(now);
        if let Some(history) = &mut self.history {
            for page in self.history_pages.1.try_iter() {
                history.received(page);
            }
        }
        self.expire(ctx, now);
        if arrived && self.options.resident {
            // Issue 10 (inbox): a hidden inbox window comes back for a new question (the window
            // manager was told at the first frame not to give it the keyboard).
            self.show(ctx);
        }
        if std::mem::take(&mut self.revealed) {
            // The user asked for the window (a notification's "Open", `askpane inbox` run
            // again): here, raising it and giving it the keyboard is what they want. The host
            // hears it too ([`take_window_asked_for`]): a window manager that keeps windows from
            // taking the keyboard by themselves is told the user asked.
            self.show(ctx);
            ctx.send_viewport_cmd(egui::ViewportCommand::Focus);
            ctx.data_mut(|data| data.insert_temp(window_asked_for_id(), true));
        }
        self.report_notices(ctx);
        let focused = ctx.input(|input| input.viewport().focused.unwrap_or(true));
        if arrived && !focused {
            // Ask for attention (a blinking task bar entry), never steal the focus.
            ctx.send_viewport_cmd(egui::ViewportCommand::RequestUserAttention(
                egui::UserAttentionType::Informational,
            ));
        }
        let title = self.state.title(now);
        if title != self.title {
            self.host.set_title(ctx, &title);
            self.title = title;
        }
        let done = self.options.close_when_done && !self.inbox_open && self.state.book().is_empty();
        if done || self.stopped.is_some() {
            self.closing = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        let close_requested = ctx.input(|input| input.viewport().close_requested());
        if close_requested && !self.closing && self.options.resident {
            // Issue 10 (inbox): the inbox's window never closes by its close button: it hides,
            // or asks first when requests wait.
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            if self.state.request_close() {
                self.hidden = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
            }
            ctx.request_repaint();
        } else if close_requested && !self.closing && !self.state.request_close() {
            // Answers are in progress: keep the window and ask (nothing typed is lost by accident).
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            ctx.request_repaint();
        }
        if std::mem::take(&mut self.hide_at_start) && self.hidden {
            // eframe maps every window after its first frame; this one has nothing to show yet.
            ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
        }
        if self.hidden && !self.closing && self.lean_exit.is_some() {
            // Issue 14: hidden and empty, the inbox gives its window's memory back once no
            // client is connected (one may still be reading its outcome or hosting a session).
            match self.claim_lean() {
                true => self.go_lean(ctx),
                false => ctx.request_repaint_after(LEAN_CHECK),
            }
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.draw(ui);
        self.keep_links_closed(ui.ctx());
    }

    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        self.guard_clicks(raw_input);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.close_all();
    }
}

impl App {
    /// One pass of the window: the keys' guard, then History or the requests.
    fn draw(&mut self, ui: &mut egui::Ui) {
        self.guard_input(ui.ctx());
        if self.history_ui(ui) {
            return;
        }
        let user_acted = App::user_acted(ui.ctx());
        let mut actions = view::root_ui(ui, &self.state, &mut self.markdown);
        // "Any key to stay": a key or a click stops every countdown, except the click that
        // asks for more time.
        let adds_time = actions
            .iter()
            .any(|action| matches!(action, state::Action::Edit(state::Edit::AddTime(_))));
        if user_acted && !adds_time && self.state.counting_down() {
            actions.insert(0, state::Action::Stay);
        }
        let countdowns_before = self.countdowns();
        if !actions.is_empty() {
            self.apply(ui.ctx(), actions);
            self.report_countdown_changes(&countdowns_before);
            // This pass drew the state before the actions: draw their result instead, in
            // another pass of this same frame (issue 14: a key's change is painted once, one
            // frame sooner), or in the next frame when this frame has no pass left.
            ui.ctx().request_discard("the user's actions changed what is shown");
            if !ui.ctx().will_discard() {
                ui.ctx().request_repaint();
            }
        }
    }

    /// A link in an agent's text never opens or navigates anything (natively or in the
    /// browser, where it would replace askpane's own page with the agent's): the click is
    /// taken back, and its address is shown as text to copy, for the user to open if they
    /// trust it.
    fn keep_links_closed(&mut self, ctx: &egui::Context) {
        let clicked = ctx.output_mut(|output| {
            let mut urls = Vec::new();
            output.commands.retain(|command| match command {
                egui::OutputCommand::OpenUrl(open) => {
                    urls.push(open.url.clone());
                    false
                }
                _ => true,
            });
            urls
        });
        for url in clicked {
            self.state.notify(link_not_opened(&url));
            ctx.request_repaint();
        }
    }

    /// Starts the graces at the moments the module docs describe, and drops key input during
    /// its grace: a key meant for another window never acts on what just appeared. (Clicks are
    /// dropped before egui reads them: [`App::guard_clicks`].)
    fn guard_input(&mut self, ctx: &egui::Context) {
        // A test's own grace stands for both.
        let key_grace = self.options.key_grace.unwrap_or(KEY_GRACE).as_secs_f64();
        let pointer_grace = self.options.key_grace.unwrap_or(POINTER_GRACE).as_secs_f64();
        let now = ctx.input(|input| input.time);
        let gained_focus = ctx.input(|input| {
            input.events.iter().any(|event| matches!(event, egui::Event::WindowFocused(true)))
        });
        let shown = self.state.current().map(state::Open::id);
        let arrived = shown.is_some() && shown != self.shown && !self.picked_by_user;
        let first_frame = self.keys_blocked_until == f64::NEG_INFINITY;
        let raised = std::mem::take(&mut self.raised);
        if first_frame || gained_focus || arrived || raised {
            self.keys_blocked_until = now + key_grace;
        }
        // Clicks: a request the user did not pick took the place of the one they were on (a
        // click on its way was aimed at the other), or the window came up on its own under a
        // pointer aimed at another program (a click lands a moment later than a key would:
        // issue 24 saw one 0.6 s after the inbox's window came back over the user's editor). A
        // page in the browser is opened by the user: its first frame starts no pointer grace.
        let replaced = arrived && self.shown.is_some();
        if replaced {
            self.clicks_blocked_until = self.clicks_blocked_until.max(now + key_grace);
        }
        if raised || (first_frame && cfg!(not(target_arch = "wasm32"))) {
            self.clicks_blocked_until = now + pointer_grace;
        }
        self.last_frame_time = now;
        self.shown = shown;
        self.picked_by_user = false;
        let keys = now < self.keys_blocked_until;
        let clicks = now < self.clicks_blocked_until;
        if keys || clicks {
            if keys {
                ctx.input_mut(|input| input.events.retain(|event| !is_key_input(event)));
            }
            // A grace ends without an event: look again then.
            let next = [self.keys_blocked_until, self.clicks_blocked_until]
                .into_iter()
                .filter(|&until| until > now)
                .reduce(f64::min);
            if let Some(until) = next {
                ctx.request_repaint_after(std::time::Duration::from_secs_f64(until - now));
            }
        }
    }

    /// Drops presses of the pointer during the pointer's grace, and the release of each press
    /// dropped, before egui reads the frame's input (egui decides clicks from it before any
    /// app code runs): a click aimed at the program that was under the pointer, or at a row
    /// that just moved, clicks nothing here. Every host runs it first (eframe's
    /// `raw_input_hook`; the CPU window and the tests call it too).
    pub fn guard_clicks(&mut self, raw_input: &mut egui::RawInput) {
        // egui's own clock when the host gives none: the last frame's time and one frame more.
        let now =
            raw_input.time.unwrap_or(self.last_frame_time + f64::from(raw_input.predicted_dt));
        let blocked = now < self.clicks_blocked_until;
        let unpressed = &mut self.press_dropped;
        raw_input.events.retain(|event| match event {
            _ if blocked && is_pointer_press(event) => {
                *unpressed = true;
                false
            }
            // egui would count a release whose press it never saw as a click: it goes with its
            // press, whenever it comes.
            egui::Event::PointerButton { pressed: false, .. }
            | egui::Event::Touch { phase: egui::TouchPhase::End, .. }
                if *unpressed =>
            {
                *unpressed = false;
                false
            }
            _ => true,
        });
    }

    /// True when this frame holds a key press, typed text or a finished click: the user is here.
    /// (Keys dropped by the grace are gone by now: they do not count. A click counts when it is
    /// released, the frame its button acts: "+1 min" must not also stop the countdown.)
    fn user_acted(ctx: &egui::Context) -> bool {
        ctx.input(|input| {
            input.events.iter().any(|event| {
                matches!(
                    event,
                    egui::Event::Key { pressed: true, .. }
                        | egui::Event::PointerButton { pressed: false, .. }
                        | egui::Event::Text(_)
                        | egui::Event::Paste(_)
                        | egui::Event::Ime(egui::ImeEvent::Commit(_))
                )
            })
        })
    }
}

impl App {
    /// Issue 11: the History bar, and the History page when it is open (then the questions are
    /// not drawn: true). A close confirmation brings the questions back.
    fn history_ui(&mut self, ui: &mut egui::Ui) -> bool {
        let Some(history) = &mut self.history else { return false };
        // The browser page learns from its bridge whether there is history to read (`ask --ui
        // web` keeps none): no History until then.
        if !self.journal.as_ref().is_some_and(|journal| journal.keeps_history()) {
            return false;
        }
        if self.state.confirming_close() {
            history.open = false;
        }
        let mut actions = Vec::new();
        let waiting = self.state.book().len();
        egui::Panel::top("history-bar")
            .show(ui, |ui| view::history::history_bar_ui(ui, history.open, waiting, &mut actions));
        if history.open {
            view::history::history_ui(ui, history, &mut actions);
        }
        let open_before = history.open;
        for action in actions {
            if let HistoryAction::Copy(text) = &action {
                self.host.copy_text(ui.ctx(), text.clone());
            }
            let Some(filter) = history.apply(&action) else { continue };
            if let Some(journal) = &self.journal {
                let pages = self.history_pages.0.clone();
                let ctx = ui.ctx().clone();
                journal.history(
                    &filter,
                    Box::new(move |page| {
                        let _ = pages.send(page);
                        ctx.request_repaint();
                    }),
                );
            }
            ui.ctx().request_repaint();
        }
        if open_before != history.open {
            ui.ctx().request_repaint();
        }
        open_before
    }

    /// Reports what waits and whether the window has focus, when either changed since the last
    /// report (a comparison of ids per frame; the texts are copied only then).
    fn report_notices(&mut self, ctx: &egui::Context) {
        let Some((report, last)) = &mut self.notices else { return };
        // Unknown (no focus event yet) counts as not focused: nobody is known to look.
        let focused = ctx.input(|input| input.viewport().focused) == Some(true);
        let hidden = self.hidden;
        let book = self.state.book();
        let same = last.1 == (focused, hidden)
            && last.0.len() == book.len()
            && book.requests().zip(&last.0).all(|(open, id)| open.id() == *id);
        if same {
            return;
        }
        let waiting: Vec<Waiting> = book
            .requests()
            .map(|open| Waiting {
                id: open.id(),
                project: open.core.provenance.project.clone(),
                header: open.core.ask.title().to_owned(),
                question: open
                    .core
                    .ask
                    .questions()
                    .first()
                    .map(|question| question.text().to_owned())
                    .unwrap_or_default(),
            })
            .collect();
        *last = (waiting.iter().map(|request| request.id).collect(), (focused, hidden));
        report(Snapshot { waiting, focused, hidden });
    }

    /// Every open request's countdown, by tool_use_id.
    fn countdowns(&self) -> Vec<(String, Option<Countdown>)> {
        let requests = self.state.book().requests();
        requests
            .filter_map(|open| Some((open.core.envelope.tool_use_id()?.to_owned(), open.countdown)))
            .collect()
    }

    /// Tells [`App::with_countdown_changes`]'s listener what the user's actions did.
    fn report_countdown_changes(&self, before: &[(String, Option<Countdown>)]) {
        let Some(changes) = &self.countdown_changes else { return };
        for (tool_use_id, after) in self.countdowns() {
            let Some((_, before)) = before.iter().find(|(id, _)| *id == tool_use_id) else {
                continue;
            };
            let change = match (before, after) {
                (Some(Countdown::Running { .. }), Some(Countdown::Stopped { .. })) => {
                    TimeoutChange::Paused
                }
                (
                    Some(Countdown::Running { given_secs: was, .. }),
                    Some(Countdown::Running { given_secs: now, .. }),
                ) if now > *was => TimeoutChange::Extended { secs: now - was },
                _ => continue,
            };
            let _ = changes.send((tool_use_id, change));
        }
    }
}

/// Issue 11 (store): the request and question whose form `edit` may change (a choice, a typed
/// text, the keyboard cursor); `None` for edits that change no form.
fn journal_form(edit: &state::Edit, open: &state::Open) -> Option<(RequestId, usize)> {
    use state::Edit;
    let question = match edit {
        Edit::Pick { question, .. }
        | Edit::SetCursor { question, .. }
        | Edit::ClearChoice { question }
        | Edit::SetOtherText { question, .. }
        | Edit::SetNotes { question, .. } => *question,
        Edit::MoveCursor(_) | Edit::PickAtCursor | Edit::Advance => match open.tab {
            state::Tab::Question(question) => question,
            state::Tab::Review => return None,
        },
        _ => return None,
    };
    Some((open.id(), question))
}

/// Input that comes from the keyboard: keys, typed text, and what key chords do.
/// The input the key grace drops: every key and what keys type.
fn is_key_input(event: &egui::Event) -> bool {
    matches!(
        event,
        egui::Event::Key { .. }
            | egui::Event::Text(_)
            | egui::Event::Paste(_)
            | egui::Event::Copy
            | egui::Event::Cut
            | egui::Event::Ime(_)
    )
}

/// The input the pointer's grace drops: the start of a click or a touch (a release whose
/// press was dropped clicks nothing).
fn is_pointer_press(event: &egui::Event) -> bool {
    matches!(
        event,
        egui::Event::PointerButton { pressed: true, .. }
            | egui::Event::Touch { phase: egui::TouchPhase::Start, .. }
    )
}

/// What the app asks of the place it runs in where egui does not do it the same way everywhere:
/// the window's title and the clipboard. Natively egui's own ([`NativeHost`]); the page supplies
/// its own (the binary's `web/`), so the app holds no browser code.
pub trait Host {
    /// Shows `title` as the window's title.
    fn set_title(&self, ctx: &egui::Context, title: &str) {
        ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.to_owned()));
    }

    /// Puts `text` on the clipboard.
    fn copy_text(&self, ctx: &egui::Context, text: String) {
        ctx.copy_text(text);
    }
}

/// The native window: egui's title and clipboard as they are.
pub struct NativeHost;

impl Host for NativeHost {}

impl Drop for App {
    fn drop(&mut self) {
        self.close_all();
    }
}

/// What the window says instead of opening a link from an agent's text.
pub fn link_not_opened(url: &str) -> String {
    format!(
        "askpane does not open links from an agent's text. The address, to copy and open \
         yourself if you trust it: {url}"
    )
}

fn window_asked_for_id() -> egui::Id {
    egui::Id::unique("askpane-window-asked-for")
}

/// True once after the user asked for the window (the host then raises it and gives it the
/// keyboard, where it otherwise keeps a window that comes up on its own below the one in use).
pub fn take_window_asked_for(ctx: &egui::Context) -> bool {
    ctx.data_mut(|data| data.remove_temp::<bool>(window_asked_for_id())).unwrap_or(false)
}
