//! Threads and IO that talk to agents; never egui. Adapters turn agent messages into [`Request`]s.
//!
//! Each [`Request`] carries its own [`Responder`], so one window can hold questions from several
//! agents and each outcome goes back to the agent that asked. The UI is woken through an injected
//! [`Waker`] closure, so it sleeps until something arrives. A `Responder` dropped without an
//! answer (the window closed, the app ended) still tells its agent: the agent never hangs.

#[cfg(not(target_arch = "wasm32"))]
pub mod admit;
#[cfg(not(target_arch = "wasm32"))]
pub mod agents;
pub mod backoff;
#[cfg(not(target_arch = "wasm32"))]
pub mod caller;
pub mod demo;
#[cfg(any(unix, windows))]
pub mod endpoint;
#[cfg(not(target_arch = "wasm32"))]
pub mod group;
#[cfg(any(unix, windows))]
pub mod inbox;
pub mod lines;
#[cfg(unix)]
pub mod matrix_child;
#[cfg(target_os = "linux")]
pub mod notify;
#[cfg(any(target_os = "macos", windows))]
#[path = "notify_toast.rs"]
pub mod notify;
#[cfg(not(any(target_arch = "wasm32", target_os = "linux", target_os = "macos", windows)))]
#[path = "notify_none.rs"]
pub mod notify;
#[cfg(not(target_arch = "wasm32"))]
pub mod opencode;
#[cfg(unix)]
pub mod peer;
#[cfg(not(target_arch = "wasm32"))]
pub mod pipe;
#[cfg(not(target_arch = "wasm32"))]
pub mod replies;
// Issue 27: `askpane remote HOST`, the SSH link of a remote host to the inbox.
#[cfg(unix)]
pub mod remote;
#[cfg(not(target_arch = "wasm32"))]
pub mod serve;
#[cfg(target_os = "linux")]
pub mod session_bus;
#[cfg(not(target_arch = "wasm32"))]
pub mod signals;
#[cfg(not(target_arch = "wasm32"))]
pub mod snapshot;
#[cfg(target_os = "linux")]
pub mod tray;
#[cfg(target_arch = "wasm32")]
pub mod web_client;

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

// Plain data the app's state and view also use, kept in `protocol` so they need no transport.
pub use crate::protocol::origin::{Provenance, RequestId, SessionKey};
pub use crate::protocol::stream::SessionEvent;

use crate::book::{Core, Policy};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::{self, Incoming, Invalid, Outcome, ReplyShape};

/// One AskUserQuestion call on its way to the request book: what was asked, how it may be
/// answered besides by the user, and where its outcome goes.
#[derive(Debug)]
pub struct Request {
    pub core: Core,
    pub policy: Policy,
    pub reply: Responder,
}

impl Request {
    /// Validates a parsed message into a request (the user answers; no policy yet), with the
    /// receiver its outcome will arrive on.
    pub fn new(
        incoming: Incoming,
        provenance: Provenance,
    ) -> Result<(Request, Receiver<Outcome>), Invalid> {
        let validated = protocol::validate(&incoming.input)?;
        let (reply, outcome) = Responder::channel();
        let core = Core {
            id: RequestId::next(),
            envelope: incoming.envelope,
            ask: validated.ask,
            warnings: validated.warnings,
            provenance,
            reply_shape: ReplyShape::default(),
        };
        Ok((Request { core, policy: Policy::default(), reply }, outcome))
    }
}

/// What adapters send to the UI, by concern: a driver that has nothing to do with a concern
/// (a host without a window and the browser's pages) ignores it with one arm.
#[derive(Debug)]
pub enum Inbound {
    /// Questions: asked, taken back, or decided before anyone saw them.
    Request(RequestEvent),
    /// Tool calls for the person to allow or deny.
    Approval(ApprovalEvent),
    /// Agent sessions: the one this process hosts, and those inbox clients host.
    Session(SessionInbound),
    /// What the bridge tells the browser page about what it holds (the web client only).
    Page(PageEvent),
    /// The process itself: a notice, the person asking for the window, a stop.
    Control(Control),
}

/// Questions, as the adapters hand them in.
#[derive(Debug)]
pub enum RequestEvent {
    /// A question to show.
    Ask(Box<Request>),
    /// The agent took back the question with this tool_use id (e.g. `control_cancel_request`).
    Withdraw { tool_use_id: String },
    /// The client that asked as request `asker` went away (issue 10: a thin client of the inbox
    /// was killed or gave up): its handle leaves the book ([`crate::book::Book::leave`]); the
    /// request is withdrawn when nobody else waits on it. Unlike `Withdraw`, this finds requests
    /// that have no tool_use_id (a plain tool input), and leaves the others asking the same.
    Leave { asker: RequestId },
    /// Issue 31: a front end (a bridge on the inbox socket) answers or declines request
    /// `request`; the driver applies it by the page's rules and tells the verdict.
    FrontEnd(Box<FrontEndAnswer>),
    /// A request the client's policy decided as it arrived (`--answers --submit`, `--decline`,
    /// …), never shown: its outcome goes into history like every other (issue 11).
    Unshown { core: Box<Core>, outcome: Outcome },
}

/// Issue 31: a front end's answer to an open request, and where its verdict goes.
pub struct FrontEndAnswer {
    pub request: RequestId,
    /// The answer, in the page's shape (its `tool_use_id` is not read).
    pub message: crate::protocol::web::BrowserMessage,
    /// Who answered, for history: `socket:<the front end's label>`.
    pub answered_by: String,
    /// Told whether the answer counted, before its outcome is delivered (so that whoever
    /// answers next hears who came first).
    pub verdict: Box<dyn FnOnce(Result<(), crate::book::FrontEndRefusal>) + Send>,
}

impl std::fmt::Debug for FrontEndAnswer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("FrontEndAnswer")
            .field("request", &self.request)
            .field("message", &self.message)
            .field("answered_by", &self.answered_by)
            .finish_non_exhaustive()
    }
}

/// Issue 31: a front end's decision on a permission card, and where its verdict goes.
pub struct FrontEndDecision {
    pub request_id: String,
    pub decision: crate::protocol::stream::PermissionDecision,
    /// Who decided, for history: `socket:<the front end's label>`.
    pub answered_by: String,
    pub verdict: Box<dyn FnOnce(Result<(), crate::book::FrontEndRefusal>) + Send>,
}

impl std::fmt::Debug for FrontEndDecision {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("FrontEndDecision")
            .field("request_id", &self.request_id)
            .field("decision", &self.decision)
            .finish_non_exhaustive()
    }
}

/// Tool calls an agent wants to make.
#[derive(Debug)]
pub enum ApprovalEvent {
    /// A tool the agent wants to run, for the user to allow or deny (`askpane claude`).
    Permission(Box<PermissionAsk>),
    /// The agent took back a permission request.
    WithdrawPermission { request_id: String },
    /// Issue 26: `--timeout` ran out on a card nobody decided: it goes as a withdrawn one does,
    /// and history says it timed out.
    TimedOutPermission { request_id: String },
    /// Issue 31: a front end on the inbox socket decides the card `request_id`.
    FrontEnd(Box<FrontEndDecision>),
    /// Issue 26: a tool call decided as it arrived (a flag: `--decline`, `--non-interactive`),
    /// never shown, but recorded all the same.
    Unshown(Box<crate::book::approval::EndedApproval>),
}

/// Agent sessions shown beside the questions.
#[derive(Debug)]
pub enum SessionInbound {
    /// What happens in the agent session this process hosts: its messages, and its end.
    Event(Box<SessionEvent>),
    /// An inbox client hosts an agent session (`askpane claude`): show it as an entry of its
    /// own; prompts and Stop for it go into `commands`.
    Hosted {
        session: SessionKey,
        label: String,
        prompt: Option<String>,
        commands: Sender<SessionCommand>,
    },
    /// An event of a session an inbox client hosts.
    HostedEvent { session: SessionKey, event: Box<SessionEvent> },
    /// The client hosting this session went away: the session leaves the window.
    HostGone { session: SessionKey },
}

/// What askpane's bridge tells the browser page (the web client only).
#[derive(Debug)]
pub enum PageEvent {
    /// The agent session as the bridge holds it (issue 11): the page shows the bridge's
    /// transcript instead of building one from the agent's messages.
    SessionUpdate(Box<crate::book::session::SessionUpdate>),
    /// A session an inbox client hosts, as the bridge holds it (`askpane inbox --ui web`); it was
    /// shown first by a [`SessionInbound::Hosted`].
    HostedUpdate { session: SessionKey, update: Box<crate::book::session::SessionUpdate> },
    /// What became of an answer the browser page sent to askpane.
    Delivery(Delivery),
    /// Another window stopped or extended a question's countdown: the seconds now left, or
    /// `None` when it stopped.
    Countdown { tool_use_id: String, left_secs: Option<u64> },
    /// The question was settled elsewhere (another browser tab); `how` completes "“X” was …".
    Settled { tool_use_id: String, how: String },
}

/// The process itself.
#[derive(Debug)]
pub enum Control {
    /// Something the user should know (a malformed line, an agent that exited).
    Notice(String),
    /// The user asked to see the window (`askpane inbox` run while one runs), or this request
    /// in it (issue 11: a desktop notification's "Open"): the window comes back, on it.
    Reveal { request: Option<RequestId> },
    /// askpane is being stopped (a signal): end every open request with `outcome`, deny every
    /// open permission with its message, and close without asking. Sent once, by `signal-watch`.
    Shutdown { outcome: Outcome },
}

/// What became of an outcome a browser page sent to askpane's bridge ([`crate::book::Policy::awaits_ack`]).
#[derive(Debug)]
pub enum Delivery {
    /// askpane took it (`answer_received`): the receipt may say "Sent".
    Received { tool_use_id: String },
    /// askpane refused it. `request` is the question again, with the form as it was sent
    /// (`refused`), for the user to fix; `error` says why, about `question` when it names one.
    Refused { request: Box<Request>, refused: Outcome, error: String, question: Option<usize> },
    /// It did not count: the question had ended before it arrived (`how`: "answered in
    /// another window").
    Lost { tool_use_id: String, how: String },
}

/// A permission request on its way to the window, with its own responder.
#[derive(Debug)]
pub struct PermissionAsk {
    pub id: RequestId,
    pub request: PermissionRequest,
    pub provenance: Provenance,
    pub reply: Responder<PermissionDecision>,
}

/// What the window asks of an agent session it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionCommand {
    /// Send this as the next user turn.
    UserTurn(String),
    /// Stop the current turn.
    Interrupt,
    /// End the session, as closing its window would (the inbox's "End session").
    End,
    /// A browser page's "Show earlier": the transcript's entries before number `before`, from
    /// the bridge (issue 24). An agent's own host has nothing to do with it.
    Older { before: usize },
}

/// What a responder sends if it is dropped without an answer: the agent is never left waiting.
pub trait WhenDropped {
    fn when_dropped() -> Self;
}

impl WhenDropped for Outcome {
    fn when_dropped() -> Self {
        Outcome::closed()
    }
}

/// What a tool call's agent reads when the window closed before anyone decided.
pub const CLOSED_WITHOUT_DECIDING: &str = "The user closed askpane without deciding.";

impl WhenDropped for PermissionDecision {
    fn when_dropped() -> Self {
        PermissionDecision::Deny { message: CLOSED_WITHOUT_DECIDING.to_owned() }
    }
}

/// Sends one request's answer back to its adapter, exactly once. If it is dropped unsent, it
/// sends [`WhenDropped::when_dropped`] (for a question: a decline that says the window closed).
#[derive(Debug)]
pub struct Responder<T: WhenDropped = Outcome> {
    sender: Option<Sender<T>>,
    /// Issue 31: where who answered is kept, for the side that waits (the inbox's `settled`),
    /// when it asked for it ([`Responder::witnessed`]).
    witness: Option<Witness>,
}

/// Who gave a responder's answer (`window`, `page`, `socket:<label>`), written before the
/// answer is sent, so whoever receives the answer finds it here; empty when no person did.
pub type Witness = Arc<std::sync::Mutex<Option<String>>>;

impl<T: WhenDropped> Responder<T> {
    /// A responder and the receiver its single answer arrives on.
    pub fn channel() -> (Responder<T>, Receiver<T>) {
        let (sender, receiver) = crossbeam_channel::bounded(1);
        (Responder { sender: Some(sender), witness: None }, receiver)
    }

    /// From now on who answers is kept in the returned [`Witness`] (issue 31).
    pub fn witnessed(&mut self) -> Witness {
        let witness = Witness::default();
        self.witness = Some(Arc::clone(&witness));
        witness
    }

    pub fn send(mut self, answer: T) {
        self.deliver(answer);
    }

    /// The answer goes to the agent another way (`askpane claude` writes the reply line the
    /// inbox computed): this responder ends without one, so the waiting side writes nothing.
    pub fn handed_on(mut self) {
        self.sender.take();
    }

    fn deliver(&mut self, answer: T) {
        if let Some(sender) = self.sender.take() {
            // The adapter may have gone (its agent died); then nobody is left to tell.
            let _ = sender.send(answer);
        }
    }
}

/// The book's drivers hand endings on through this ([`crate::book::Settled::deliver`], the
/// approvals).
impl<T: WhenDropped> crate::book::ReplyHandle<T> for Responder<T> {
    fn send(mut self, answer: T) {
        self.deliver(answer);
    }

    fn answered_by(&mut self, answered_by: &str) {
        if let Some(mut witness) = self.witness.as_ref().and_then(|witness| witness.lock().ok()) {
            *witness = Some(answered_by.to_owned());
        }
    }
}

impl<T: WhenDropped> Drop for Responder<T> {
    fn drop(&mut self) {
        if self.sender.is_some() {
            self.deliver(T::when_dropped());
        }
    }
}

/// Wakes the UI after something was sent to it. Natively it calls `request_repaint`; tests pass a
/// no-op. Transport never sees egui: the closure is injected by the composition root.
#[derive(Clone)]
pub struct Waker(Arc<dyn Fn() + Send + Sync>);

impl Waker {
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Waker(Arc::new(wake))
    }

    pub fn noop() -> Self {
        Waker::new(|| {})
    }

    pub fn wake(&self) {
        (self.0)();
    }
}

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Waker")
    }
}

/// The adapters' side of the UI channel: every send wakes the UI.
#[derive(Clone, Debug)]
pub struct UiSender {
    sender: Sender<Inbound>,
    waker: Waker,
}

impl UiSender {
    /// Sends to the UI and wakes it. `false` when the UI has gone (the window closed).
    pub fn send(&self, message: Inbound) -> bool {
        let sent = self.sender.send(message).is_ok();
        self.waker.wake();
        sent
    }
}

/// The channel between adapters and the UI.
pub fn ui_channel(waker: Waker) -> (UiSender, Receiver<Inbound>) {
    let (sender, receiver) = crossbeam_channel::unbounded();
    (UiSender { sender, waker }, receiver)
}

/// An in-memory connection for tests: no thread, no process, no wake-up.
pub fn memory() -> (UiSender, Receiver<Inbound>) {
    ui_channel(Waker::noop())
}

/// The process's request ids: one counter, where the adapters that make requests run.
impl RequestId {
    /// A new id, never handed out before in this process.
    pub fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        RequestId::from_raw(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// Starts a thread named `name` (in a panic's report, `top -H`, a debugger): the one place
/// askpane starts a thread, as clippy's `disallowed_methods` bans `std::thread::spawn` and
/// `Builder::spawn` elsewhere (clippy.toml).
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::disallowed_methods, reason = "the named thread helper itself")]
pub fn spawn_named<T: Send + 'static>(
    name: impl Into<String>,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new().name(name.into()).spawn(work)
}

/// The named IO threads of a run, joined when the run ends.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default)]
pub struct IoThreads {
    threads: Vec<std::thread::JoinHandle<std::io::Result<()>>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl IoThreads {
    /// Starts a named thread (`agent-reader`, `reply-writer`, …).
    pub fn spawn(
        &mut self,
        name: &str,
        work: impl FnOnce() -> std::io::Result<()> + Send + 'static,
    ) -> std::io::Result<()> {
        let handle = spawn_named(name, work)?;
        self.threads.push(handle);
        Ok(())
    }

    /// Waits for every thread; the first error wins. A panicked thread is reported as an error.
    pub fn join(self) -> std::io::Result<()> {
        let mut result = Ok(());
        for handle in self.threads {
            let name = handle.thread().name().unwrap_or("io").to_owned();
            let outcome = handle.join().unwrap_or_else(|_| {
                Err(std::io::Error::other(format!("the {name} thread panicked")))
            });
            if result.is_ok() {
                result = outcome;
            }
        }
        result
    }
}
