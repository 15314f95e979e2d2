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
mod logic;
mod ui;
// The journal is the book's (issue 25: the store implements it, and must not import the app).
pub use crate::book::journal;
pub mod pairing;
pub mod state;

use std::collections::HashMap;

use crate::book::Settled;
use crate::book::approval::Asked;

use crossbeam_channel::{Receiver, TryRecvError};
use egui_commonmark::CommonMarkCache;

use crate::protocol::notice::{Snapshot, Waiting, WaitingKind};
use crate::protocol::stream::PermissionDecision;
use crate::protocol::web::TimeoutChange;
use crate::protocol::{Outcome, TextField};
use crate::transport::{
    ApprovalEvent, Control, Delivery, Inbound, PageEvent, PermissionAsk, Request, RequestEvent,
    RequestId, Responder, SessionCommand, SessionEvent, SessionInbound, SessionKey,
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
    /// Keys whose press this showing took and that are not let go yet: only their repeats are
    /// the user's (issue 25: see [`App::guard_input`]).
    keys_down_here: Vec<egui::Key>,
    /// The request shown last frame, to notice one the user did not pick.
    shown: Option<RequestId>,
    /// The newest permission card drawn last frame: a new one starts the graces as a new
    /// question does (its buttons must not take a key or click meant for something else).
    newest_card: Option<RequestId>,
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
            keys_down_here: Vec::new(),
            shown: None,
            newest_card: None,
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
    /// whose session (if the bridge carries one) arrives as [`PageEvent::SessionUpdate`].
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
            match (message, &self.stopped) {
                (Inbound::Request(RequestEvent::Ask(request)), Some(stopped)) => {
                    request.reply.send(stopped.clone());
                }
                // Issue 26: history keeps a tool call decided by a flag even now.
                (Inbound::Approval(ApprovalEvent::Unshown(ended)), _) => {
                    if let Some(journal) = &self.journal {
                        journal.approval_ended(&ended);
                    }
                }
                _ => {}
            }
        }
        let stopped = self.stopped.as_ref().and_then(Outcome::deny_message);
        self.state.close_permissions(stopped.as_deref());
        self.journal_ended_permissions();
    }
}

impl eframe::App for App {
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        crate::view::theme::background(visuals).to_normalized_gamma_f32()
    }

    fn logic(&mut self, ctx: &egui::Context, frame: &mut eframe::Frame) {
        self.frame_logic(ctx, frame);
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
