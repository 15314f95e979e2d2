//! The eframe app: drains the adapters' channel into [`State`], draws it, sends outcomes back.
//!
//! `logic` receives (it also runs while the window is hidden); `ui` draws and applies the
//! actions the view returns. Each request's [`Responder`] stays here, never in the state or the
//! view, and anything still open when the app ends is told the window closed.

pub mod state;

use std::collections::HashMap;

use crossbeam_channel::{Receiver, TryRecvError};
use egui_commonmark::CommonMarkCache;

use crate::protocol::Outcome;
use crate::protocol::stream::PermissionDecision;
use crate::transport::{
    Inbound, PermissionAsk, Request, RequestId, Responder, SessionCommand, SessionEvent,
};
use crate::{theme, view};

use state::{NewRequest, PendingPermission, Pushed, Resolved, SessionEffect, State};

/// How the window behaves for a mode.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppOptions {
    /// Close the window once the adapters are done and no question is left (`askpane ask`).
    /// The demo keeps it open to show what was sent.
    pub close_when_done: bool,
}

pub struct App {
    inbox: Receiver<Inbound>,
    inbox_open: bool,
    responders: HashMap<RequestId, Vec<Responder>>,
    permission_responders: HashMap<RequestId, Responder<PermissionDecision>>,
    /// Where prompts and Stop go, when the app shows an agent session.
    session: Option<crossbeam_channel::Sender<SessionCommand>>,
    state: State,
    markdown: CommonMarkCache,
    options: AppOptions,
    /// Each timed request's allowance, for the "no one answered within N seconds" message.
    timeouts: HashMap<RequestId, std::time::Duration>,
    title: String,
    /// The user confirmed closing; the next close request goes through.
    closing: bool,
    /// Called at the start of every frame: the web build polls its transport here (no threads).
    frame_hook: Option<FrameHook>,
}

/// Work a composition root runs once per frame, before the inbox is drained.
pub type FrameHook = Box<dyn FnMut(&egui::Context)>;

impl App {
    pub fn new(ctx: &egui::Context, inbox: Receiver<Inbound>, options: AppOptions) -> Self {
        theme::install(ctx);
        App {
            inbox,
            inbox_open: true,
            responders: HashMap::new(),
            permission_responders: HashMap::new(),
            session: None,
            state: State::default(),
            markdown: CommonMarkCache::default(),
            options,
            timeouts: HashMap::new(),
            title: String::new(),
            closing: false,
            frame_hook: None,
        }
    }

    /// Shows an agent session: its transcript, a prompt box, Stop. `prompt` is the first user
    /// turn when it was given on the command line (already sent by the adapter).
    pub fn with_session(
        mut self,
        commands: crossbeam_channel::Sender<SessionCommand>,
        prompt: Option<&str>,
    ) -> Self {
        self.state.start_session(prompt);
        self.session = Some(commands);
        self
    }

    /// Runs `hook` at the start of every frame (see [`FrameHook`]).
    pub fn with_frame_hook(mut self, hook: FrameHook) -> Self {
        self.frame_hook = Some(hook);
        self
    }

    /// The state, for tests and for the web entry point.
    pub fn state(&self) -> &State {
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
                    if let Some(id) = self.state.withdraw(&tool_use_id) {
                        self.send(Resolved { id, outcome: Outcome::Withdrawn });
                    }
                }
                Ok(Inbound::Settled { tool_use_id, how }) => {
                    if let Some(id) = self.state.settled_elsewhere(&tool_use_id, &how) {
                        self.send(Resolved { id, outcome: Outcome::Withdrawn });
                    }
                }
                Ok(Inbound::Notice(notice)) => self.state.notify(notice),
                Ok(Inbound::Permission(permission)) => {
                    arrived = true;
                    let PermissionAsk { id, request, provenance, reply } = *permission;
                    self.permission_responders.insert(id, reply);
                    let deny_message = String::new();
                    self.state.push_permission(PendingPermission {
                        id,
                        request,
                        provenance,
                        deny_message,
                    });
                }
                Ok(Inbound::WithdrawPermission { request_id }) => {
                    if let Some(id) = self.state.withdraw_permission(&request_id) {
                        // The agent no longer waits; the responder goes without a word.
                        if let Some(responder) = self.permission_responders.remove(&id) {
                            responder.send(PermissionDecision::Deny {
                                message: "Withdrawn by the agent.".to_owned(),
                            });
                        }
                    }
                }
                Ok(Inbound::Session(event)) => {
                    let event = *event;
                    if let SessionEvent::Ended { status, .. } = &event {
                        self.state.notify(format!("The agent ended ({status})."));
                    }
                    self.state.session_event(event);
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

    fn add(&mut self, request: Request, now: f64) {
        let Request {
            id,
            envelope,
            ask,
            warnings,
            provenance,
            reply,
            drafts,
            timeout,
            mark_skipped,
        } = request;
        let deadline = timeout.map(|timeout| now + timeout.as_secs_f64());
        if let Some(timeout) = timeout {
            self.timeouts.insert(id, timeout);
        }
        let new =
            NewRequest { id, envelope, ask, warnings, provenance, drafts, deadline, mark_skipped };
        let shown_as = match self.state.push(new) {
            Pushed::Added => id,
            Pushed::SameAs(existing) => existing,
        };
        self.responders.entry(shown_as).or_default().push(reply);
    }

    /// Sends an outcome to every agent waiting on that request.
    fn send(&mut self, resolved: Resolved) {
        for responder in self.responders.remove(&resolved.id).unwrap_or_default() {
            responder.send(resolved.outcome.clone());
        }
    }

    /// Applies the view's actions; finished requests go out at once.
    pub fn apply(&mut self, ctx: &egui::Context, actions: Vec<state::Action>) {
        for action in actions {
            if let state::Action::Session(action) = action {
                if let Some(effect) = self.state.apply_session(action) {
                    self.perform(effect);
                }
                continue;
            }
            if action == state::Action::ConfirmClose {
                self.closing = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            if let Some(resolved) = self.state.apply(action) {
                self.send(resolved);
            }
        }
    }

    /// Sends what the user touched of every request whose time ran out; wakes for the next one.
    fn expire(&mut self, ctx: &egui::Context, now: f64) {
        let timeouts = &self.timeouts;
        let expired = self.state.expire(now, |pending| {
            timeouts.get(&pending.id).map_or(0, std::time::Duration::as_secs)
        });
        for resolved in expired {
            self.send(resolved);
        }
        if let Some(deadline) = self.state.next_deadline() {
            // Once a second for the countdown, and exactly at the deadline.
            let until = (deadline - now).clamp(0.0, 1.0);
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(until));
        }
    }

    fn perform(&mut self, effect: SessionEffect) {
        let command = match effect {
            SessionEffect::Decided { id, decision } => {
                if let Some(responder) = self.permission_responders.remove(&id) {
                    responder.send(decision);
                }
                return;
            }
            SessionEffect::Prompt(text) => SessionCommand::UserTurn(text),
            SessionEffect::Interrupt => SessionCommand::Interrupt,
        };
        if let Some(session) = &self.session {
            // The session may have ended; the transcript then says so.
            let _ = session.send(command);
        }
    }

    /// Tells every open request that the window closed, and drops what never reached the state.
    fn close_all(&mut self) {
        for resolved in self.state.resolve_all(|_| Outcome::closed()) {
            self.send(resolved);
        }
        // Requests still in the channel: their responders send the closed decline when dropped.
        while self.inbox.try_recv().is_ok() {}
        self.responders.clear();
        self.permission_responders.clear();
    }
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        if let Some(hook) = &mut self.frame_hook {
            hook(ctx);
        }
        let now = ctx.input(|input| input.time);
        let arrived = self.receive(now);
        self.expire(ctx, now);
        let focused = ctx.input(|input| input.viewport().focused.unwrap_or(true));
        if arrived && !focused {
            // Ask for attention (a blinking task bar entry), never steal the focus.
            ctx.send_viewport_cmd(egui::ViewportCommand::RequestUserAttention(
                egui::UserAttentionType::Informational,
            ));
        }
        let title = self.state.title();
        if title != self.title {
            set_title(ctx, &title);
            self.title = title;
        }
        if self.options.close_when_done && !self.inbox_open && self.state.pending().is_empty() {
            self.closing = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        let close_requested = ctx.input(|input| input.viewport().close_requested());
        if close_requested && !self.closing && !self.state.request_close() {
            // Answers are in progress: keep the window and ask (nothing typed is lost by accident).
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            ctx.request_repaint();
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let actions = view::root_ui(ui, &self.state, &mut self.markdown);
        if !actions.is_empty() {
            self.apply(ui.ctx(), actions);
            // Draw the result of the actions now rather than on the next input event.
            ui.ctx().request_repaint();
        }
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.close_all();
    }
}

/// The window title natively; the page title on the web (eframe's web backend has no Title).
fn set_title(ctx: &egui::Context, title: &str) {
    #[cfg(not(target_arch = "wasm32"))]
    ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.to_owned()));
    #[cfg(target_arch = "wasm32")]
    {
        let _ = ctx;
        if let Some(document) = web_sys::window().and_then(|window| window.document()) {
            document.set_title(title);
        }
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.close_all();
    }
}
