//! The inbox's socket (issue 10): where it lives, the lock that makes one inbox per user, the
//! server `askpane inbox` runs, and the connection a thin client opens.
//!
//! The socket is `inbox.sock` in a directory only this user can use, and who may connect is
//! checked before a byte is read; both are the endpoint's, per platform (`endpoint/`: Unix
//! `$XDG_RUNTIME_DIR/askpane` with a peer-uid check, Windows `%LOCALAPPDATA%\askpane`).
//! `inbox.lock` beside it is held (std's file lock) for the inbox's life: of two inboxes started
//! at once, exactly one gets it.
//!
//! Issue 30 item 2: a bounded number of threads, however many clients. On Unix one thread
//! (`inbox-loop`, `event_loop.rs`) accepts, reads and writes every connection (each with a
//! bounded queue of lines, `writer.rs`); on Windows each connection has a reader thread
//! (`inbox-client`) and a writer thread (`inbox-writer`). Every open request of every client
//! (an outcome, a card's decision, a hosted session's prompts) is waited for on one thread
//! (`inbox-waiter`, `waiters.rs`). Nobody waits on another client's socket: a subscriber whose
//! queue is full has stopped reading and is dropped (issue 24 item 21). A connection that ends
//! (its client was killed, or gave up) withdraws its open requests at once, and its socket is
//! closed once their outcomes are written.

mod approval;
mod client;
mod coming;
mod connection;
mod deliver;
#[cfg(unix)]
mod event_loop;
mod front_end;
mod launch;
mod notice;
mod waiters;
mod writer;

pub use client::{ConnectError, InboxClient};
pub use coming::{COMING_PREFIX, COMING_SUFFIX};
pub use connection::InboxConnection;
pub use deliver::{Delivered, LINK_POLL, LINK_WAIT, Until, deliver};
pub use launch::start_inbox;
pub use notice::{NoticeError, send_notice};

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
#[cfg(any(windows, test))]
use std::io::{BufReader, Read};
use std::path::PathBuf;
#[cfg(windows)]
use std::sync::Weak;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::protocol::hook_notification::TerminalNotice;
use crate::protocol::inbox::{
    self, AskMessage, ClientMessage, ClientMode, InboxMessage, Listed, OutcomeMessage, VERSION,
};
use crate::protocol::link::Scope;
use crate::protocol::permission::ApprovalOutcome;
use crate::protocol::{Envelope, Outcome, ReplyShape, exit, parse_message, permission};

use super::UiSender;
use super::admit::{Admission, admit};
#[cfg(any(windows, test))]
use super::endpoint::Stream;
#[cfg(windows)]
use super::endpoint::Waited;
use super::endpoint::{self, Acceptor, Gate, Listener};
#[cfg(any(windows, test))]
use super::lines;
#[cfg(windows)]
use super::lines::Frame;
use super::pipe::MAX_INPUT_BYTES;
use super::signals::StopSignal;
use super::{
    ApprovalEvent, Control, FrontEndAnswer, Inbound, PermissionAsk, Provenance, RequestEvent,
    RequestId, Responder, SessionCommand, SessionInbound, SessionKey,
};
use waiters::{Pending, Waiters};
#[cfg(unix)]
use writer::Wake;
use writer::{MAX_QUEUED_BYTES, Offered, Writer, line_bytes};

/// The longest line the inbox reads: a request at its size limit, with room for the policy.
const MAX_LINE_BYTES: u64 = MAX_INPUT_BYTES * 2 + 64 * 1024;

/// How long a write to a client may block before the client counts as gone (its writer then
/// closes the connection).
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Who the server's log lines say they are from (`askpane inbox: …`, the logger's `speaker`):
/// the inbox's log holds lines of every part of the process.
const INBOX: &str = "askpane inbox";

/// Where the inbox of this user lives.
#[derive(Clone, Debug)]
pub struct Place {
    dir: PathBuf,
}

impl Place {
    /// This user's private directory for the inbox (the endpoint's, per platform), made if
    /// missing; refused if it is not this user's own.
    pub fn find() -> io::Result<Place> {
        Ok(Place { dir: endpoint::private_dir()? })
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("inbox.sock")
    }

    pub fn lock_file(&self) -> PathBuf {
        self.dir.join("inbox.lock")
    }
}

/// The lock one inbox holds for its life (`inbox.lock`, holding its pid).
#[derive(Debug)]
pub struct InboxLock {
    _file: File,
}

impl InboxLock {
    /// Takes the lock, or `None` when another inbox holds it.
    pub fn take(place: &Place) -> io::Result<Option<InboxLock>> {
        let mut file = endpoint::open_lock_file(&place.lock_file())?;
        // std's file lock: flock on Unix, LockFileEx on Windows.
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(error)) => return Err(error),
        }
        file.set_len(0)?;
        writeln!(file, "{}", std::process::id())?;
        Ok(Some(InboxLock { _file: file }))
    }
}

#[cfg(unix)]
impl InboxLock {
    /// A second descriptor of the lock's open file: the lean inbox (issue 14) keeps it open
    /// across `exec`, and the lock with it (a flock belongs to the open file).
    pub fn duplicate(&self) -> io::Result<std::os::fd::OwnedFd> {
        Ok(self._file.try_clone()?.into())
    }
}

/// Binds the socket, replacing one a dead inbox left. Call with the lock held.
pub fn bind(place: &Place) -> io::Result<Listener> {
    endpoint::bind(&place.socket())
}

/// A request the inbox holds for a client.
#[derive(Debug)]
struct Open {
    request: RequestId,
    listed: Listed,
}

/// A live connection (Windows: a thread each), for shutting it down at the end. Its socket is its threads': this only
/// watches it, so the socket closes when they end (issue 24: an ended connection's descriptor
/// was held until the next client connected).
#[cfg(windows)]
#[derive(Debug)]
struct Connection {
    stream: Weak<Stream>,
    thread: JoinHandle<()>,
}

/// What the server's threads share.
struct Shared {
    /// Where requests go; `None` once the inbox is ending (a request then hears the window
    /// closed, as its responder is dropped).
    to_ui: Mutex<Option<UiSender>>,
    stopping: AtomicBool,
    /// Every connection is to end (after the hosts heard `quitting`).
    #[cfg(unix)]
    closing: AtomicBool,
    next_connection: AtomicU64,
    /// Open requests by (connection, the client's id).
    open: Mutex<HashMap<(u64, String), Open>>,
    /// Issue 29: the permission cards waiting for the person, by (connection, the client's id),
    /// listed and announced beside the questions (`askpane status` counts them).
    cards: Mutex<HashMap<(u64, String), Listed>>,
    /// Subscribers: the connection, its writer, and whether its `asked` events carry the ask's
    /// content (`subscribe` with `full`).
    subscribers: Mutex<Vec<(u64, Arc<Writer>, bool)>>,
    /// Connections that host an agent session: told `quitting` when the inbox ends on purpose,
    /// so they end their session instead of starting another inbox.
    hosts: Mutex<Vec<(u64, Arc<Writer>)>>,
    #[cfg(windows)]
    connections: Mutex<Vec<Connection>>,
    /// How many clients the event loop serves (Unix, issue 30 item 2), a link's idle spare
    /// connection not counted (it must not keep the inbox from going lean).
    #[cfg(unix)]
    clients: Mutex<usize>,
    /// Wakes the event loop: a line was queued for a client, a wait ended, the inbox ends.
    #[cfg(unix)]
    wake: Arc<Wake>,
    /// Who may connect (this user).
    gate: Gate,
    /// Issue 11: replaces the browser page's link (`new_link`), when the inbox serves a page.
    new_link: std::sync::OnceLock<NewLink>,
    /// Issue 26 item 6: raises a terminal's notice (`notice`), when the inbox notifies.
    notices: std::sync::OnceLock<Noticer>,
    /// Issue 29 item 5: hears every event subscribers hear (the tray icon), when the inbox has one.
    observer: std::sync::OnceLock<Observer>,
    /// Issue 29: when this inbox started (seconds since the Unix epoch), said in every hello.
    started_at: Option<u64>,
    /// Issue 30 item 2: the one thread that waits for every client's open requests.
    waiters: Waiters,
    /// Issue 31: who answered through the socket, and how the last asks ended.
    front_end: Mutex<front_end::Memory>,
}

/// Replaces the inbox's page link and returns the new links, or says why it could not.
pub type NewLink = Box<dyn Fn() -> Result<Vec<String>, String> + Send + Sync>;

/// Hands a Claude Code terminal's notice to the inbox's notifier; it never blocks.
pub type Noticer = Box<dyn Fn(TerminalNotice) + Send + Sync>;

/// Hears each event told to subscribers (`asked`, `settled`); it never blocks.
pub type Observer = Box<dyn Fn(&InboxMessage) + Send + Sync>;

/// What `new_link` hears from an inbox that serves no browser page.
pub const NO_PAGE_TO_RELINK: &str = "this inbox serves no browser page, so it has no link to \
    replace (start it with `askpane inbox --ui web`, or --lan for a phone)";

impl Shared {
    fn to_ui(&self, message: Inbound) {
        let to_ui = self.to_ui.lock().ok().and_then(|to_ui| to_ui.clone());
        // No UI any more: the message (a request and its responder) is dropped, which tells
        // the client the window closed.
        if let Some(to_ui) = to_ui {
            to_ui.send(message);
        }
    }

    /// A permission card waits for the person: listed, and announced as a question is (before
    /// the window has it, so no subscriber hears it settled first).
    fn card_shown(&self, listed: Listed) {
        if let Ok(mut cards) = self.cards.lock() {
            cards.insert((listed.connection, listed.id.clone()), listed.clone());
        }
        self.announce(&listed);
    }

    /// The card `id` of `connection` left the window (decided, timed out or withdrawn), decided
    /// by `answered_by` when a person did.
    fn card_settled(&self, connection: u64, id: &str, outcome: &str, answered_by: Option<String>) {
        let removed =
            self.cards.lock().ok().and_then(|mut cards| cards.remove(&(connection, id.to_owned())));
        if removed.is_some() {
            if let Ok(mut memory) = self.front_end.lock() {
                memory.card_ended(connection, id, outcome);
            }
            let (id, outcome) = (id.to_owned(), outcome.to_owned());
            self.broadcast(&InboxMessage::Settled { connection, id, outcome, answered_by });
        }
    }

    /// Tells every subscriber that `listed` waits for a person: its summary, or with its content
    /// to a subscriber that asked for it (issue 31).
    fn announce(&self, listed: &Listed) {
        let plain = InboxMessage::Asked { request: listed.summary() };
        let full =
            listed.content.is_some().then(|| InboxMessage::Asked { request: listed.clone() });
        self.tell_subscribers(&plain, full.as_ref());
    }

    /// Tells every subscriber `message`.
    fn broadcast(&self, message: &InboxMessage) {
        self.tell_subscribers(message, None);
    }

    /// Tells every subscriber `message` (or `full`, when there is one, to a subscriber that
    /// asked for content), never waiting for one: a subscriber whose queue is full has
    /// stopped reading, and is dropped (its connection closed, said in one line). Held under
    /// the list's lock, which never waits either, so every subscriber hears events in one order.
    fn tell_subscribers(&self, message: &InboxMessage, full: Option<&InboxMessage>) {
        let Ok(line) = line_bytes(message) else { return };
        let Ok(mut subscribers) = self.subscribers.lock() else { return };
        // Under the same lock as the subscribers: the observer hears events in their order,
        // and none between its seeding and its start (`serve_observer`).
        if let Some(observe) = self.observer.get() {
            observe(message);
        }
        // Made once for every full subscriber, and only when one is there.
        let full_line = match subscribers.iter().any(|(_, _, full)| *full) {
            true => full.and_then(|full| line_bytes(full).ok()),
            false => None,
        };
        subscribers.retain(|(connection, writer, full)| {
            let line = match (full, &full_line) {
                (true, Some(full_line)) => full_line,
                _ => &line,
            };
            match writer.offer(line) {
                Offered::Queued => true,
                Offered::Full => {
                    log::warn!(
                        speaker = INBOX;
                        "dropped subscriber {connection}: it stopped reading \
                         ({MAX_QUEUED_BYTES} bytes of events waited for it)"
                    );
                    false
                }
                Offered::Closed => false,
            }
        });
    }
}

/// The running socket server of `askpane inbox`.
pub struct InboxServer {
    shared: Arc<Shared>,
    socket: PathBuf,
    acceptor: Arc<Acceptor>,
    accept: Option<JoinHandle<()>>,
}

impl InboxServer {
    /// Serves `listener`: every request goes to the UI through `to_ui`.
    pub fn start(listener: Listener, socket: PathBuf, to_ui: UiSender) -> io::Result<Self> {
        let shared = Arc::new(Shared {
            to_ui: Mutex::new(Some(to_ui)),
            stopping: AtomicBool::new(false),
            #[cfg(unix)]
            closing: AtomicBool::new(false),
            next_connection: AtomicU64::new(1),
            open: Mutex::new(HashMap::new()),
            cards: Mutex::new(HashMap::new()),
            subscribers: Mutex::new(Vec::new()),
            hosts: Mutex::new(Vec::new()),
            #[cfg(windows)]
            connections: Mutex::new(Vec::new()),
            #[cfg(unix)]
            clients: Mutex::new(0),
            #[cfg(unix)]
            wake: Arc::new(Wake::new()?),
            gate: Gate::for_this_user(),
            new_link: std::sync::OnceLock::new(),
            notices: std::sync::OnceLock::new(),
            observer: std::sync::OnceLock::new(),
            started_at: started_at(&socket),
            waiters: Waiters::start()?,
            front_end: Mutex::new(front_end::Memory::default()),
        });
        let acceptor = Arc::new(Acceptor::new(&socket)?);
        let accepting = Arc::clone(&shared);
        let stops = Arc::clone(&acceptor);
        // Unix: one thread for every client (issue 30 item 2); Windows: a thread each.
        #[cfg(unix)]
        let accept = crate::transport::spawn_named("inbox-loop", move || {
            event_loop::run(&listener, &stops, &accepting)
        })?;
        #[cfg(windows)]
        let accept = crate::transport::spawn_named("inbox-accept", move || {
            accept_loop(&listener, &stops, &accepting)
        })?;
        Ok(InboxServer { shared, socket, acceptor, accept: Some(accept) })
    }

    /// Issue 11: from now on `new_link` calls `replace` (the inbox's browser bridge started).
    /// Set once; a second call is ignored.
    pub fn serve_new_link(&self, replace: NewLink) {
        let _ = self.shared.new_link.set(replace);
    }

    /// Issue 26 item 6: from now on a `notice` goes to `raise` (the inbox's notifier started).
    /// Set once; a second call is ignored. Without it a notice is answered `notifies: false`.
    pub fn serve_notices(&self, raise: Noticer) {
        let _ = self.shared.notices.set(raise);
    }

    /// Issue 29 item 5: from now on `observe` hears every event subscribers hear (the tray
    /// icon started). Set once; a second call is ignored.
    /// It first hears every ask open now (as `asked`): the socket serves already.
    pub fn serve_observer(&self, observe: Observer) {
        let shared = &self.shared;
        let Ok(_events) = shared.subscribers.lock() else { return };
        let mut open: Vec<Listed> = match shared.open.lock() {
            Ok(open) => open.values().map(|open| open.listed.clone()).collect(),
            Err(_) => Vec::new(),
        };
        if let Ok(cards) = shared.cards.lock() {
            open.extend(cards.values().cloned());
        }
        open.sort_by(|a, b| (a.connection, &a.id).cmp(&(b.connection, &b.id)));
        for request in open {
            observe(&InboxMessage::Asked { request });
        }
        let _ = shared.observer.set(observe);
    }

    /// How many requests are open.
    pub fn open_count(&self) -> usize {
        self.shared.open.lock().map(|open| open.len()).unwrap_or(0)
    }

    /// Issue 14: when no client is connected, stops accepting (a client that connects from
    /// then on waits in the socket's backlog for whoever takes the listener next) and says
    /// so; otherwise changes nothing. For the window deciding whether the inbox may go lean:
    /// a question, a hosted session or a subscriber each keep a connection; a link's spare that
    /// has asked nothing (`transport/remote/relay.rs`) does not, and is closed with the rest.
    pub fn claim_quiet(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let shared = Arc::clone(&self.shared);
        let acceptor = Arc::clone(&self.acceptor);
        move || {
            #[cfg(unix)]
            let Ok(clients) = shared.clients.lock() else { return false };
            #[cfg(unix)]
            let quiet = *clients == 0;
            #[cfg(windows)]
            let Ok(connections) = shared.connections.lock() else { return false };
            #[cfg(windows)]
            let quiet = connections.iter().all(|connection| connection.thread.is_finished());
            if quiet {
                acceptor.stop();
            }
            quiet
        }
    }

    /// Ends the server, after the UI has ended: every request still open hears its outcome (the
    /// window closed), then every connection is closed and every thread joined. The socket
    /// file is removed: no inbox answers there any more.
    pub fn stop(self) {
        self.end(SocketAfter::Removed);
    }

    /// Ends the server like [`InboxServer::stop`] but leaves the socket file: the listener
    /// lives on in the lean inbox this process becomes (issue 14), and a client connecting
    /// meanwhile waits in its backlog rather than finding no inbox.
    pub fn hand_over(self) {
        self.end(SocketAfter::Kept);
    }

    fn end(mut self, socket: SocketAfter) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Ok(mut to_ui) = self.shared.to_ui.lock() {
            to_ui.take();
        }
        self.acceptor.stop();
        #[cfg(windows)]
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        if socket == SocketAfter::Removed {
            let _ = fs::remove_file(&self.socket);
        }
        // Hosts hear that this end is deliberate (a crash says nothing, and they restart one);
        // one that is not reading is not waited for.
        let hosts = self.shared.hosts.lock().map(|hosts| hosts.clone()).unwrap_or_default();
        if let Ok(quitting) = line_bytes(&InboxMessage::Quitting) {
            for (_, writer) in hosts {
                writer.offer(&quitting);
            }
        }
        // Reading ends first: each connection then waits for its outcomes, which the window has
        // given (it has ended), writes them, and is closed; then the loop ends.
        #[cfg(unix)]
        {
            self.shared.closing.store(true, Ordering::SeqCst);
            self.shared.wake.wake();
            if let Some(accept) = self.accept.take() {
                let _ = accept.join();
            }
        }
        #[cfg(windows)]
        {
            let connections = match self.shared.connections.lock() {
                Ok(mut connections) => std::mem::take(&mut *connections),
                Err(_) => Vec::new(),
            };
            for connection in &connections {
                if let Some(stream) = connection.stream.upgrade() {
                    let _ = stream.shutdown(std::net::Shutdown::Read);
                }
            }
            for connection in connections {
                let _ = connection.thread.join();
            }
        }
        // Every connection has ended, and with it every wait: the waiting thread ends too.
        self.shared.waiters.stop();
    }
}

/// How a permission card is listed (issue 29): who asks, the tool, and its deadline.
fn card_listed(
    connection: u64,
    id: &str,
    request: &crate::protocol::stream::PermissionRequest,
    provenance: &Provenance,
    timeout_secs: Option<u64>,
) -> Listed {
    Listed {
        connection,
        id: id.to_owned(),
        from: provenance.label(),
        title: request.title.clone().unwrap_or_else(|| request.tool_name.clone()),
        tool_use_id: request.tool_use_id.clone(),
        pid: None,
        host: provenance.host.clone(),
        agent: Some(provenance.source.clone()),
        project: provenance.project.clone(),
        asked_at: Some(unix_now()),
        deadline_at: timeout_secs.map(|secs| unix_now().saturating_add(secs)),
        kind: Some(inbox::AskKind::Approval),
        content: Some(Box::new(inbox::AskContent::of_approval(request))),
    }
}

/// Seconds since the Unix epoch, now.
fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

/// When the inbox serving `socket` started: when it wrote its pid into `inbox.lock` beside the
/// socket (the lean inbox's `exec` keeps that file as it is, so a resumed inbox still says when
/// the first image started), else now.
fn started_at(socket: &std::path::Path) -> Option<u64> {
    let locked = fs::metadata(socket.with_file_name("inbox.lock")).and_then(|lock| lock.modified());
    match locked {
        Ok(modified) => modified.duration_since(UNIX_EPOCH).ok().map(|since| since.as_secs()),
        Err(_) => Some(unix_now()),
    }
}

/// What ending the server leaves of its socket file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SocketAfter {
    Removed,
    Kept,
}

impl Drop for InboxServer {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.shared.stopping.store(true, Ordering::SeqCst);
            self.acceptor.stop();
            // Unix: the loop ends its connections and then itself, not waited for here (their
            // last outcomes may wait for a window that still runs).
            #[cfg(unix)]
            {
                self.shared.closing.store(true, Ordering::SeqCst);
                self.shared.wake.wake();
                self.accept.take();
            }
            #[cfg(windows)]
            if let Some(accept) = self.accept.take() {
                let _ = accept.join();
            }
        }
    }
}

#[cfg(windows)]
fn accept_loop(listener: &Listener, acceptor: &Acceptor, shared: &Arc<Shared>) {
    loop {
        match acceptor.wait(listener) {
            Ok(Waited::Client) => {}
            Ok(Waited::Stopped) => break,
            Err(error) => {
                log::error!(speaker = INBOX; "cannot wait for clients: {error}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        }
        // Accepting a client and listing its connection is one step under the list's lock, so
        // `InboxServer::claim_quiet` never misses a client between the two.
        let Ok(mut connections) = shared.connections.lock() else { break };
        if acceptor.is_stopped() {
            break;
        }
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(error) => {
                drop(connections);
                log::error!(speaker = INBOX; "cannot accept a client: {error}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if acceptor.is_stopped() {
            // Windows: the connection that woke this accept to end it.
            break;
        }
        let pid = match shared.gate.admit(&stream) {
            Ok(pid) => pid,
            Err(why) => {
                log::warn!(speaker = INBOX; "{why}");
                continue;
            }
        };
        let number = shared.next_connection.fetch_add(1, Ordering::Relaxed);
        let stream = Arc::new(stream);
        let watched = Arc::downgrade(&stream);
        let serving = Arc::clone(shared);
        let thread = crate::transport::spawn_named("inbox-client", move || {
            serve_connection(&serving, number, stream, pid)
        });
        let Ok(thread) = thread else {
            log::error!(speaker = INBOX; "cannot start a thread for a client");
            continue;
        };
        // Finished connections are joined as new ones come, so the list stays short.
        let (done, live): (Vec<_>, Vec<_>) =
            std::mem::take(&mut *connections).into_iter().partition(|c| c.thread.is_finished());
        for connection in done {
            let _ = connection.thread.join();
        }
        *connections = live;
        connections.push(Connection { stream: watched, thread });
    }
}

/// One connection's part of the protocol: what its driver (`serve_connection`) hands each line
/// to, and what withdraws its open requests when it goes.
struct Served {
    number: u64,
    pid: Option<u32>,
    writer: Arc<Writer>,
    /// This connection's open requests, waited for on the one waiting thread (`waiters.rs`).
    pending: Pending,
    hosted: Hosted,
    /// Issue 27: a link's connection acts for its host only, checked before every message.
    scope: Scope,
    /// Whether the client sent anything besides `via_link` (Unix: the lean inbox's count).
    #[cfg(unix)]
    spoke: bool,
    /// When it said `via_link` (Unix: the lean inbox's count, [`LINK_SETTLES`]).
    #[cfg(unix)]
    linked_at: Option<std::time::Instant>,
}

/// How long a link's connection that said `via_link` and nothing else still counts as a client
/// before it counts as an idle spare. The link relays a remote client's first line right after
/// `via_link`, so a connection this young is most likely a client about to ask: a resumed inbox
/// (a remote hook woke it) that went lean again in between closed it, and the hook had to ask
/// again, up to twice (seen in a loaded CI run). A spare only delays going lean by this much.
#[cfg(unix)]
const LINK_SETTLES: Duration = Duration::from_secs(3);

impl Served {
    /// A connection just admitted: it hears the inbox's hello.
    fn new(
        shared: &Shared,
        number: u64,
        pid: Option<u32>,
        writer: Arc<Writer>,
        pending: Pending,
    ) -> Served {
        writer.send(&InboxMessage::Hello {
            version: VERSION,
            pid: std::process::id(),
            link: None,
            started_at: shared.started_at,
        });
        let hosted = Hosted::new(number);
        Served {
            number,
            pid,
            writer,
            pending,
            hosted,
            scope: Scope::Local,
            #[cfg(unix)]
            spoke: false,
            #[cfg(unix)]
            linked_at: None,
        }
    }

    /// Issue 30 item 6: a link's connection that has asked nothing yet (its spare, kept ready
    /// for the next remote client), [`LINK_SETTLES`] after it said `via_link`: it keeps nothing
    /// open, and nothing of it is lost when the inbox closes it.
    #[cfg(unix)]
    fn is_idle_link(&self) -> bool {
        self.link_settles_at().is_none() && !self.spoke && self.scope.host().is_some()
    }

    /// When this link's connection, silent since `via_link`, will count as an idle spare, while
    /// that is still to come (the event loop wakes then to count it afresh).
    #[cfg(unix)]
    fn link_settles_at(&self) -> Option<std::time::Instant> {
        let settles = self.linked_at? + LINK_SETTLES;
        (!self.spoke && std::time::Instant::now() < settles).then_some(settles)
    }

    /// One line the client sent.
    fn line(&mut self, shared: &Arc<Shared>, line: &[u8]) {
        let message = match inbox::read_client_line(line) {
            None => return,
            Some(Ok(message)) => message,
            Some(Err(bad)) => {
                self.writer
                    .send(&InboxMessage::Error { message: bad.error.to_string(), id: bad.id });
                return;
            }
        };
        #[cfg(unix)]
        {
            self.spoke |= !matches!(message, ClientMessage::ViaLink { .. });
        }
        if let Err(refused) = self.scope.admit(&message) {
            log::warn!(speaker = INBOX; "refused on connection {}: {refused}", self.number);
            self.writer.send(&InboxMessage::Error { message: refused.to_string(), id: None });
            return;
        }
        match message {
            ClientMessage::ViaLink { host } => {
                log::info!(speaker = INBOX; "connection {} comes through the link of {host}", self.number);
                #[cfg(unix)]
                {
                    self.linked_at = Some(std::time::Instant::now());
                }
                self.hosted.host = Some(host.clone());
                self.writer.send(&InboxMessage::Linked { host });
            }
            ClientMessage::Hello { version, .. } if version != VERSION => {
                let message =
                    format!("this inbox speaks version {VERSION} of the protocol, not {version}");
                self.writer.send(&InboxMessage::Error { message, id: None });
            }
            ClientMessage::Hello { .. } => {}
            ClientMessage::Ask(ask) if approval_of(&ask).is_some() => {
                let Some(taken) = approval_of(&ask) else { return };
                match taken {
                    Ok(hook) => {
                        let ask = approval::HookApproval {
                            connection: self.number,
                            id: ask.id,
                            approval: hook,
                            policy: ask.policy,
                            host: self.scope.host().map(str::to_owned),
                            on_disk: ask.on_disk,
                        };
                        match approval::take(
                            shared,
                            &self.writer,
                            &self.pending,
                            &self.hosted.permissions,
                            ask,
                        ) {
                            Ok(()) => {}
                            Err(message) => {
                                self.writer.send(&InboxMessage::Error { message, id: None });
                            }
                        }
                    }
                    Err(error) => {
                        let message = format!("the message of request {:?}: {error}", ask.id);
                        self.writer.send(&InboxMessage::Error { message, id: Some(ask.id) });
                    }
                }
            }
            ClientMessage::Ask(ask) => {
                let from = self.hosted.provenance.as_ref();
                let link = self.scope.host();
                take_ask(
                    shared,
                    &self.pending,
                    self.number,
                    self.pid,
                    *ask,
                    from,
                    link,
                    &self.writer,
                );
            }
            ClientMessage::Withdraw { id } => {
                let request =
                    shared.open.lock().ok().and_then(|open| {
                        open.get(&(self.number, id.clone())).map(|open| open.request)
                    });
                match request {
                    Some(request) => {
                        shared.to_ui(Inbound::Request(RequestEvent::Leave { asker: request }))
                    }
                    // A hook's tool call (a card) is withdrawn as a hosted one is.
                    None if self.hosted.withdraw_permission(shared, &id).is_ok() => {}
                    None => {
                        let message = format!("no open request {id:?} on this connection");
                        self.writer.send(&InboxMessage::Error { message, id: Some(id) });
                    }
                }
            }
            ClientMessage::List { full } => {
                // Issue 31: the content only when asked for (a plain `list` stays small).
                let shown = |listed: &Listed| match full {
                    true => listed.clone(),
                    false => listed.summary(),
                };
                let mut requests: Vec<Listed> = match shared.open.lock() {
                    Ok(open) => open
                        .values()
                        .filter(|open| self.scope.sees(&open.listed))
                        .map(|open| shown(&open.listed))
                        .collect(),
                    Err(_) => Vec::new(),
                };
                if let Ok(cards) = shared.cards.lock() {
                    requests.extend(cards.values().filter(|card| self.scope.sees(card)).map(shown));
                }
                requests.sort_by(|a, b| (a.connection, &a.id).cmp(&(b.connection, &b.id)));
                self.writer.send(&InboxMessage::List { requests });
            }
            ClientMessage::Answer { connection, id, answers, notes, response, answered_by } => {
                use crate::protocol::web::{BrowserMessage, PageForm, PagePicks, Sent};
                let body = PageForm {
                    tool_use_id: Sent::Absent,
                    picks: PagePicks { answers: Sent::Given(answers), notes: Sent::Given(notes) },
                    response: response.map_or(Sent::Absent, Sent::Given),
                };
                front_end::answer(
                    shared,
                    &self.writer,
                    connection,
                    id,
                    &answered_by,
                    |tool_use_id| BrowserMessage::Answer { tool_use_id, body },
                );
            }
            ClientMessage::Decline { connection, id, message, answered_by } => {
                use crate::protocol::web::BrowserMessage;
                // The page's own bound on what the model reads.
                if let Err(error) = crate::protocol::limits::check_decline_wire_message(&message) {
                    let message = format!("the decline's message: {error}");
                    self.writer.send(&InboxMessage::Error { message, id: Some(id) });
                    return;
                }
                front_end::answer(
                    shared,
                    &self.writer,
                    connection,
                    id,
                    &answered_by,
                    |tool_use_id| BrowserMessage::Declined { tool_use_id, stop: false, message },
                );
            }
            ClientMessage::Clarify { connection, id, answers, notes, answered_by } => {
                use crate::protocol::web::{BrowserMessage, PageForm, PagePicks, Sent};
                // The page's "Chat about this", with the picks made so far.
                let body = PageForm {
                    tool_use_id: Sent::Absent,
                    picks: PagePicks { answers: Sent::Given(answers), notes: Sent::Given(notes) },
                    response: Sent::Absent,
                };
                front_end::answer(
                    shared,
                    &self.writer,
                    connection,
                    id,
                    &answered_by,
                    |tool_use_id| BrowserMessage::Clarify { tool_use_id, body },
                );
            }
            ClientMessage::Decide {
                connection,
                id,
                decision,
                suggestion,
                message,
                answered_by,
            } => {
                let decided = front_end::Decided { decision, suggestion, message };
                front_end::decide(shared, &self.writer, connection, id, &answered_by, decided);
            }
            ClientMessage::Subscribe { full } => {
                if let Ok(mut subscribers) = shared.subscribers.lock() {
                    subscribers.push((self.number, Arc::clone(&self.writer), full));
                }
                self.writer.send(&InboxMessage::Subscribed);
            }
            ClientMessage::Show => {
                shared.to_ui(Inbound::Control(Control::Reveal { request: None }));
                self.writer.send(&InboxMessage::Shown);
            }
            ClientMessage::NewLink => {
                let replaced = match shared.new_link.get() {
                    Some(replace) => replace(),
                    None => Err(NO_PAGE_TO_RELINK.to_owned()),
                };
                match replaced {
                    Ok(links) => {
                        self.writer.send(&InboxMessage::NewLink { links });
                    }
                    Err(message) => {
                        self.writer.send(&InboxMessage::Error { message, id: None });
                    }
                }
            }
            ClientMessage::Quit => {
                log::info!(speaker = INBOX; "asked to quit");
                self.writer.send(&InboxMessage::Quitting);
                shared.to_ui(Inbound::Control(Control::Shutdown {
                    outcome: Outcome::inbox_closed(),
                }));
            }
            ClientMessage::Host { agent, project, prompt } => {
                match self.hosted.host(shared, &self.writer, &self.pending, agent, project, prompt)
                {
                    Ok(()) => {}
                    Err(message) => {
                        self.writer.send(&InboxMessage::Error { message, id: None });
                    }
                }
            }
            ClientMessage::SessionEvent { event } => {
                if self.hosted.provenance.is_some() {
                    let event = Box::new(event.into_event());
                    shared.to_ui(Inbound::Session(SessionInbound::HostedEvent {
                        session: self.hosted.key(),
                        event,
                    }));
                } else {
                    let message = NOT_HOSTING.to_owned();
                    self.writer.send(&InboxMessage::Error { message, id: None });
                }
            }
            ClientMessage::Permission { id, request, from } => {
                match self.hosted.permission(
                    shared,
                    &self.writer,
                    &self.pending,
                    id.clone(),
                    *request,
                    from,
                ) {
                    Ok(()) => {}
                    Err(message) => {
                        self.writer.send(&InboxMessage::Error { message, id: Some(id) });
                    }
                }
            }
            ClientMessage::WithdrawPermission { id } => {
                if let Err(message) = self.hosted.withdraw_permission(shared, &id) {
                    self.writer.send(&InboxMessage::Error { message, id: Some(id) });
                }
            }
            ClientMessage::PermissionTimedOut { id } => {
                if let Err(message) = self.hosted.time_out_permission(shared, &id) {
                    self.writer.send(&InboxMessage::Error { message, id: Some(id) });
                }
            }
            ClientMessage::Notice { mut notice } => {
                notice.host = self.scope.host().map(str::to_owned);
                let notifies = match shared.notices.get() {
                    Some(raise) => {
                        raise(notice);
                        true
                    }
                    None => false,
                };
                self.writer.send(&InboxMessage::Noticed { notifies });
            }
        }
    }

    /// The client is gone (or the inbox is ending): what it still waits for is withdrawn, and it
    /// hears no more events. Its waits' outcomes still come (`pending`).
    fn gone(self, shared: &Arc<Shared>) -> (Pending, Arc<Writer>) {
        let number = self.number;
        self.hosted.end(shared);
        let gone: Vec<RequestId> = match shared.open.lock() {
            Ok(open) => open
                .iter()
                .filter(|((connection, _), _)| *connection == number)
                .map(|(_, open)| open.request)
                .collect(),
            Err(_) => Vec::new(),
        };
        for request in gone {
            shared.to_ui(Inbound::Request(RequestEvent::Leave { asker: request }));
        }
        if let Ok(mut subscribers) = shared.subscribers.lock() {
            subscribers.retain(|(connection, _, _)| *connection != number);
        }
        if let Ok(mut hosts) = shared.hosts.lock() {
            hosts.retain(|(connection, _)| *connection != number);
        }
        (self.pending, self.writer)
    }
}

/// One client (Windows: a thread each): its lines in, its outcomes out; its open requests
/// withdrawn when it goes. The socket is closed when this returns (its writer thread is joined
/// here).
#[cfg(windows)]
fn serve_connection(shared: &Arc<Shared>, number: u64, stream: Arc<Stream>, pid: Option<u32>) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    if let Err(error) = endpoint::prepare_server_stream(&stream) {
        log::error!(speaker = INBOX; "cannot serve a client: {error}");
        return;
    }
    let writer = Arc::new(Writer::new(Arc::clone(&stream)));
    let writing = crate::transport::spawn_named("inbox-writer", {
        let writer = Arc::clone(&writer);
        move || writer.write_out()
    });
    let writing = match writing {
        Ok(writing) => writing,
        Err(error) => {
            log::error!(speaker = INBOX; "cannot start a thread for a client: {error}");
            return;
        }
    };
    let mut served = Served::new(shared, number, pid, Arc::clone(&writer), Pending::default());
    let mut reader = BufReader::new(&*stream);
    let mut buffer = Vec::new();
    loop {
        // Its own back-pressure: nothing more is read from a client whose queue is full.
        writer.wait_for_room();
        buffer.clear();
        if read_line(&mut reader, &mut buffer, &shared.stopping).is_err() {
            break;
        }
        let frame = Frame::of(&buffer, MAX_LINE_BYTES);
        if frame == Frame::End {
            break;
        }
        if frame == Frame::TooLong {
            let message = format!("a line longer than {MAX_LINE_BYTES} bytes; closing");
            writer.send(&InboxMessage::Error { message, id: None });
            // Closed now, after the error: not once this connection's requests are settled.
            writer.finish();
            break;
        }
        served.line(shared, &buffer);
    }
    let (pending, writer) = served.gone(shared);
    pending.wait_for_none();
    // The last outcomes are queued: the writer writes them, then closes the connection.
    writer.finish();
    let _ = writing.join();
}

const NOT_HOSTING: &str = "this connection hosts no session: send `host` first";

/// The agent session a connection hosts (`askpane claude`), and its open permissions.
struct Hosted {
    connection: u64,
    /// Who the session is, once `host` came.
    provenance: Option<Provenance>,
    /// Open permissions: the client's id → the request_id the window knows them by.
    permissions: Arc<Mutex<HashMap<String, String>>>,
    /// The SSH host the connection comes through (issue 27), stamped on its session.
    host: Option<String>,
}

impl Hosted {
    fn new(connection: u64) -> Self {
        Hosted { connection, provenance: None, permissions: Arc::default(), host: None }
    }

    fn key(&self) -> SessionKey {
        SessionKey::Hosted(self.connection)
    }

    /// Shows the session; starts the thread that forwards the window's prompts and Stop.
    fn host(
        &mut self,
        shared: &Arc<Shared>,
        writer: &Arc<Writer>,
        pending: &Pending,
        agent: String,
        project: Option<String>,
        prompt: Option<String>,
    ) -> Result<(), String> {
        if self.provenance.is_some() {
            return Err("this connection hosts a session already".to_owned());
        }
        let mut provenance = Provenance::new(agent, project.clone()).with_project(project);
        provenance.host = self.host.clone();
        let (commands, to_forward) = crossbeam_channel::unbounded::<SessionCommand>();
        let forwarding = Arc::clone(writer);
        // Ends when the window drops its sender: the session left, or the window ended.
        let forwarded = shared.waiters.each(pending, to_forward, move |command| {
            let message = match command {
                SessionCommand::UserTurn(text) => InboxMessage::Prompt { text },
                SessionCommand::Interrupt => InboxMessage::Interrupt,
                SessionCommand::End => InboxMessage::EndSession,
                // A page's older entries come from the bridge, not the host.
                SessionCommand::Older { .. } => return,
            };
            forwarding.send(&message);
        });
        if !forwarded {
            return Err("the inbox is ending".to_owned());
        }
        let label = provenance.label();
        self.provenance = Some(provenance);
        if let Ok(mut hosts) = shared.hosts.lock() {
            hosts.push((self.connection, Arc::clone(writer)));
        }
        writer.send(&InboxMessage::Hosting);
        shared.to_ui(Inbound::Session(SessionInbound::Hosted {
            session: self.key(),
            label,
            prompt,
            commands,
        }));
        Ok(())
    }

    /// Shows a permission card; starts the thread that writes its decision back.
    fn permission(
        &mut self,
        shared: &Arc<Shared>,
        writer: &Arc<Writer>,
        pending: &Pending,
        id: String,
        mut request: crate::protocol::stream::PermissionRequest,
        from: Option<crate::protocol::web::WhoAsked>,
    ) -> Result<(), String> {
        // A hosted session's own, else who the client says asks (`askpane opencode`).
        let provenance = self.provenance.clone().or_else(|| from.map(|from| from.provenance()));
        let Some(mut provenance) = provenance else { return Err(NOT_HOSTING.to_owned()) };
        provenance.host = self.host.clone();
        // The CLI's request ids are its own: the window gets one no other client can have.
        let request_id = format!("inbox-{}-{id}", self.connection);
        match self.permissions.lock() {
            Ok(open) if open.contains_key(&id) => {
                return Err(format!("permission {id:?} is already open on this connection"));
            }
            Ok(mut open) => {
                open.insert(id.clone(), request_id.clone());
            }
            Err(_) => return Err("the inbox cannot keep this permission".to_owned()),
        }
        request.request_id = request_id;
        // A session on an SSH host (issue 27) read its file there: shown if it is the call's
        // file and within the size askpane reads (`snapshot::sent_from_host`).
        if self.host.is_some() {
            request.on_disk =
                crate::transport::snapshot::sent_from_host(request.on_disk.take(), &request);
        }
        let can_hand_back = request.origin.can_hand_back();
        let listed = card_listed(self.connection, &id, &request, &provenance, None);
        let (mut reply, decision) = Responder::channel();
        let witness = reply.witnessed();
        let ask = PermissionAsk { id: RequestId::next(), request, provenance, reply };
        let open = Arc::clone(&self.permissions);
        let writer = Arc::clone(writer);
        let settling = Arc::clone(shared);
        let connection = self.connection;
        // Listed before its wait starts, so no subscriber hears it settled first.
        let listed_id = listed.id.clone();
        shared.card_shown(listed);
        let waiting = shared.waiters.once(pending, decision, None, move |decision| {
            // A responder always answers (its drop denies: the window closed), except where
            // the agent can ask on its own: there nobody decided, and it is handed back.
            let decision = decision.unwrap_or_else(|_| match can_hand_back {
                true => crate::protocol::stream::PermissionDecision::HandBack,
                false => <crate::protocol::stream::PermissionDecision as super::WhenDropped>::when_dropped(),
            });
            // Withdrawn meanwhile: the agent no longer waits for it.
            let still_open = open.lock().map(|mut open| open.remove(&id).is_some());
            let outcome = match still_open {
                Ok(true) => ApprovalOutcome::of(&decision).as_str(),
                _ => "withdrawn",
            };
            let answered_by = witness.lock().ok().and_then(|mut witness| witness.take());
            let answered_by = answered_by.filter(|_| still_open.as_ref().is_ok_and(|open| *open));
            settling.card_settled(connection, &id, outcome, answered_by);
            if still_open.unwrap_or(false) {
                writer.send(&InboxMessage::PermissionDecided { id, decision });
            }
        });
        if !waiting {
            shared.card_settled(connection, &listed_id, "withdrawn", None);
            return Err("the inbox is ending".to_owned());
        }
        shared.to_ui(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask))));
        Ok(())
    }

    fn withdraw_permission(&mut self, shared: &Arc<Shared>, id: &str) -> Result<(), String> {
        let request_id = self.take_permission(id)?;
        shared.to_ui(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }));
        Ok(())
    }

    /// The client's `--timeout` ran out on the card `id`: it leaves the window as timed out.
    fn time_out_permission(&mut self, shared: &Arc<Shared>, id: &str) -> Result<(), String> {
        let request_id = self.take_permission(id)?;
        shared.to_ui(Inbound::Approval(ApprovalEvent::TimedOutPermission { request_id }));
        Ok(())
    }

    /// Lets go of the open card `id` (its decision, if one still comes, is sent nowhere): the
    /// request id the window knows it by.
    fn take_permission(&mut self, id: &str) -> Result<String, String> {
        let request_id = self.permissions.lock().ok().and_then(|mut open| open.remove(id));
        request_id.ok_or_else(|| format!("no open permission {id:?} on this connection"))
    }

    /// The connection ended: its permission cards and its session leave the window.
    fn end(self, shared: &Arc<Shared>) {
        let open: Vec<String> = match self.permissions.lock() {
            Ok(mut open) => open.drain().map(|(_, request_id)| request_id).collect(),
            Err(_) => Vec::new(),
        };
        for request_id in open {
            shared.to_ui(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }));
        }
        if self.provenance.is_some() {
            shared.to_ui(Inbound::Session(SessionInbound::HostGone { session: self.key() }));
        }
    }
}

/// Reads one line (at most [`MAX_LINE_BYTES`]) into `buffer`; returns how many bytes it holds
/// (0 at the end of the stream). A read that times out (only where the endpoint sets a read
/// timeout: Windows, whose shutdown does not wake a blocked read) keeps what it read and reads
/// on, unless the server is stopping.
#[cfg(any(windows, test))]
fn read_line(
    reader: &mut BufReader<impl Read>,
    buffer: &mut Vec<u8>,
    stopping: &AtomicBool,
) -> io::Result<usize> {
    loop {
        match lines::read_frame(reader, buffer, MAX_LINE_BYTES) {
            Err(error)
                if matches!(error.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
                    && !stopping.load(Ordering::SeqCst) => {}
            Err(error) => return Err(error),
            Ok(_) => return Ok(buffer.len()),
        }
    }
}

/// A `PermissionRequest` hook's tool call (any tool but AskUserQuestion), read from `askpane
/// hook`'s ask; `None` for every other ask, which is a question.
fn approval_of(
    ask: &AskMessage,
) -> Option<Result<permission::HookPermission, permission::HookPermissionError>> {
    match ask.mode {
        ClientMode::Hook => permission::parse_hook_permission(&ask.message),
        ClientMode::Ask
        | ClientMode::Mcp
        | ClientMode::Claude
        | ClientMode::Codex
        | ClientMode::Acp => None,
    }
}

/// Takes one request in, and waits for its outcome on the waiting thread.
#[allow(clippy::too_many_arguments, reason = "one request's parts, each from the connection")]
fn take_ask(
    shared: &Arc<Shared>,
    pending: &Pending,
    connection: u64,
    pid: Option<u32>,
    ask: AskMessage,
    host: Option<&Provenance>,
    link: Option<&str>,
    writer: &Arc<Writer>,
) {
    // A question's client sends no file (only a hook's tool call has one).
    let AskMessage { id, mode, message, policy, on_disk: _ } = ask;
    let key = (connection, id.clone());
    if shared.open.lock().is_ok_and(|open| open.contains_key(&key)) {
        let message = format!("request {id:?} is already open on this connection");
        writer.send(&InboxMessage::Error { message, id: Some(id) });
        return;
    }
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            let message = format!("the message of request {id:?}: {error}");
            writer.send(&InboxMessage::Error { message, id: Some(id) });
            return;
        }
    };
    let Admission {
        envelope,
        format,
        always_a_line,
        mut request,
        mut decided,
        outcome,
        warnings,
        problem,
        ..
    } = admit(incoming, mode, &policy, None);
    // An agent adapter (`askpane opencode`) names who asked in its `user_question`, as the
    // browser protocol does: shown instead of the client's mode.
    if let (Some(request), Envelope::SeedWeb { .. }) = (request.as_mut(), &envelope)
        && message.get("agent").is_some()
    {
        request.core.provenance = crate::protocol::web::question_provenance(&message);
    }
    // A hosted session's questions are from that session (`claude · my-project`).
    if let (Some(request), Some(host)) = (request.as_mut(), host) {
        request.core.provenance = host.clone();
    }
    // Issue 27: the host as the link names it, whatever the client says.
    if let Some(request) = request.as_mut() {
        request.core.provenance.host = link.map(str::to_owned);
    }
    if let Some(core) = decided.as_mut() {
        core.provenance.host = link.map(str::to_owned);
    }
    let warnings = warnings.iter().map(ToString::to_string).collect();
    let shown = request.is_some();
    // The request this ask put in the window, if any: its outcome removes only that one from the
    // open list (a decided ask's outcome must not remove a shown ask that reuses its id).
    let mine = request.as_ref().map(|request| request.core.id);
    writer.send(&InboxMessage::Accepted { id: id.clone(), shown, warnings });
    // Issue 31: who answers it, for the subscribers' `settled`.
    let witness = request.as_mut().map(|request| request.reply.witnessed());
    if let Some(request) = request {
        let listed = Listed {
            connection,
            id: id.clone(),
            from: request.core.provenance.label(),
            title: request.core.ask.title().to_owned(),
            tool_use_id: request.core.envelope.tool_use_id().map(str::to_owned),
            pid,
            host: link.map(str::to_owned),
            agent: Some(request.core.provenance.source.clone()),
            project: request.core.provenance.project.clone(),
            asked_at: Some(unix_now()),
            deadline_at: policy.timeout_secs.map(|secs| unix_now().saturating_add(secs)),
            kind: Some(inbox::AskKind::Question),
            content: Some(Box::new(inbox::AskContent::Question {
                questions: request
                    .core
                    .ask
                    .input()
                    .get("questions")
                    .cloned()
                    .unwrap_or(serde_json::Value::Array(Vec::new())),
            })),
        };
        if let Ok(mut open) = shared.open.lock() {
            open.insert(key.clone(), Open { request: request.core.id, listed: listed.clone() });
        }
        // Announced before the window has it, so that no subscriber hears it settled first.
        shared.announce(&listed);
        shared.to_ui(Inbound::Request(RequestEvent::Ask(Box::new(request))));
    }
    let waiting_on = &shared.waiters;
    let shared = Arc::clone(shared);
    let writer = Arc::clone(writer);
    let waiting = waiting_on.once(pending, outcome, None, move |outcome| {
        // A responder always answers (its drop says the window closed).
        let outcome = outcome.unwrap_or_else(|_| Outcome::closed());
        if let (Ok(mut open), Some(mine)) = (shared.open.lock(), mine)
            && open.get(&key).is_some_and(|open| open.request == mine)
        {
            open.remove(&key);
        }
        // Decided by the client's policy, never shown: the window (or page) still records it.
        if let Some(core) = decided {
            shared
                .to_ui(Inbound::Request(RequestEvent::Unshown { core, outcome: outcome.clone() }));
        }
        let exit_code = match (mode, &problem) {
            (ClientMode::Hook | ClientMode::Claude | ClientMode::Codex | ClientMode::Acp, _) => {
                exit::OK
            }
            (ClientMode::Ask | ClientMode::Mcp, Some(_)) => exit::INVALID,
            (ClientMode::Ask | ClientMode::Mcp, None) => {
                exit::for_ask(&outcome, StopSignal::from_outcome(&outcome).is_some())
            }
        };
        let reply = ReplyShape { format, always_a_line }.line(&envelope, &outcome);
        // The inbox's wire carries the name as text: a client of another version still reads it.
        let kind = outcome.kind().as_str().to_owned();
        if let (Ok(mut memory), Some(mine)) = (shared.front_end.lock(), mine) {
            memory.ended(connection, &id, mine, &kind);
        }
        writer.send(&InboxMessage::Outcome(OutcomeMessage {
            id: id.clone(),
            outcome: kind.clone(),
            reply,
            exit_code,
            problem,
        }));
        // Subscribers hear of the requests that waited for a person (announced as `asked`).
        if shown {
            let answered_by = witness.and_then(|witness| witness.lock().ok()?.take());
            shared.broadcast(&InboxMessage::Settled { connection, id, outcome: kind, answered_by });
        }
    });
    if !waiting {
        log::error!(speaker = INBOX; "cannot wait for a request: the inbox is ending");
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "a test starts its helper threads freely")]
mod tests {
    use super::*;

    /// A served connection with a read timeout, as Windows' endpoint sets one.
    fn timing_out_pair() -> (BufReader<Stream>, Stream) {
        let (served, client) = Stream::pair().expect("socket pair");
        served.set_read_timeout(Some(Duration::from_millis(5))).expect("read timeout");
        (BufReader::new(served), client)
    }

    #[test]
    fn a_line_split_by_read_timeouts_is_read_whole() {
        let (mut reader, mut client) = timing_out_pair();
        let writer = std::thread::spawn(move || {
            client.write_all(b"{\"type\":").expect("first half");
            // Long enough for the reader to time out a few times in between.
            std::thread::sleep(Duration::from_millis(60));
            client.write_all(b"\"list\"}\n").expect("second half");
            client
        });
        let mut buffer = Vec::new();
        let read = read_line(&mut reader, &mut buffer, &AtomicBool::new(false)).expect("a line");
        assert_eq!(buffer, b"{\"type\":\"list\"}\n");
        assert_eq!(read, buffer.len());
        drop(writer.join());
    }

    #[test]
    fn a_read_timeout_ends_the_read_once_the_server_stops() {
        let (mut reader, mut client) = timing_out_pair();
        client.write_all(b"{\"type\":").expect("half a line");
        let mut buffer = Vec::new();
        let error = read_line(&mut reader, &mut buffer, &AtomicBool::new(true))
            .expect_err("a stopping server reads no further");
        assert!(
            matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut),
            "{error:?}"
        );
        assert_eq!(buffer, b"{\"type\":");
    }

    /// A directory of this test's own, 0700 as the inbox's is.
    #[cfg(unix)]
    fn private_scratch(name: &str) -> Place {
        use std::os::unix::fs::DirBuilderExt;
        let dir = std::env::temp_dir().join(format!("askpane-lock-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::DirBuilder::new().mode(0o700).create(&dir).expect("a private directory");
        Place { dir }
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_that_is_a_link_or_a_second_name_is_refused_and_what_it_names_is_untouched() {
        let place = private_scratch("planted");
        let victim = place.dir.join("victim.txt");
        fs::write(&victim, "precious\n").expect("a file of the user's");
        // A symbolic link to it, then a hard link (a second name of the same file).
        std::os::unix::fs::symlink(&victim, place.lock_file()).expect("a link");
        let error = InboxLock::take(&place).expect_err("a link is not a lock");
        assert!(error.to_string().contains("inbox.lock"), "{error}");
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "precious\n");
        fs::remove_file(place.lock_file()).expect("remove the link");
        fs::hard_link(&victim, place.lock_file()).expect("a hard link");
        let error = InboxLock::take(&place).expect_err("a second name is not a lock");
        assert!(error.to_string().contains("inbox.lock"), "{error}");
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "precious\n");
        // Another user's file (a root test run can make one): not a lock of this user's.
        fs::remove_file(place.lock_file()).expect("remove the hard link");
        fs::write(place.lock_file(), "").expect("a plain file");
        if rustix::process::getuid().is_root() {
            std::os::unix::fs::chown(place.lock_file(), Some(65534), Some(65534)).expect("chown");
            let error = InboxLock::take(&place).expect_err("another user's file is no lock");
            assert!(error.to_string().contains("uid 65534"), "{error}");
            fs::remove_file(place.lock_file()).expect("remove it");
        }
        // The inbox's own lock is taken, and holds its pid.
        let lock = InboxLock::take(&place).expect("a lock").expect("not held");
        let pid = fs::read_to_string(place.lock_file()).expect("the lock's text");
        assert_eq!(pid.trim(), std::process::id().to_string());
        drop(lock);
        let _ = fs::remove_dir_all(&place.dir);
    }

    #[test]
    fn the_end_of_the_stream_reads_nothing() {
        let (mut reader, client) = timing_out_pair();
        drop(client);
        let mut buffer = Vec::new();
        assert_eq!(read_line(&mut reader, &mut buffer, &AtomicBool::new(false)).expect("eof"), 0);
    }
}
