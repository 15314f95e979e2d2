//! `--ui web`: the questions go to browsers over a WebSocket instead of a native window.
//!
//! askpane serves its own web app (the same egui app built for wasm32, embedded in the binary)
//! and a WebSocket endpoint, on 127.0.0.1 unless `--bind` says otherwise. The page gets a fresh
//! 256-bit token in the URL fragment (never in a request line a proxy could log) and presents it
//! in the `Sec-WebSocket-Protocol` header when it connects; it is compared in constant time
//! before the upgrade (401 otherwise), and the Host and Origin headers must name one of the
//! addresses askpane serves and prints (403 otherwise: no DNS rebinding, no other site).
//! Messages are limited to [`MAX_MESSAGE`], which any valid answer fits; an answer must name an
//! open question and only options that were offered, and every text must be within its limit
//! ([`crate::protocol::limits`]). Nothing a browser sends reaches a shell.
//!
//! A page learns its answer counted from `answer_received`; a refused message gets an `error`
//! and the connection stays open. A connection askpane ends for a fault is closed with the RFC
//! 6455 code for it (1009 too big, 1007 not UTF-8, 1002 protocol, 1001 silent, 1011 internal);
//! only the end of askpane itself closes with 1000 "askpane is done", which the page takes as
//! final.
//!
//! Threads: `web-accept` (the listener, which joins its `web-conn-N` threads before ending; at
//! most [`MAX_CONNECTIONS`] at once) and `web-hub`, which owns every open question and every
//! connected browser. No thread polls: each blocks in `poll(2)` or a read with a timeout, and a
//! stop wakes them through a pipe or by shutting their sockets. The first answer wins; the other
//! tabs see the question withdrawn. A browser that reconnects gets every open question again. When
//! the last page has gone and none comes back within [`PAGE_GONE_GRACE`], the open questions end
//! with "the page was closed" rather than leave the agent waiting.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Select, Sender};
use rustix::event::{PollFd, PollFlags, Timespec};
use serde_json::Value;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::book::{Admission, Book, Ending, NoCountdown, Open, Settled};
use crate::protocol::Outcome;
use crate::protocol::limits::{
    self, MAX_BRIDGE_OPTIONS, MAX_BRIDGE_QUESTIONS, MAX_TOOL_USE_ID_LENGTH,
};
use crate::protocol::origin::RequestId;
use crate::protocol::stream::{CliMessage, PermissionDecision};
use crate::protocol::web::{
    self, BrowserError, BrowserMessage, DONE_REASON, SUBPROTOCOL, TOKEN_PROTOCOL_PREFIX,
};

use super::{Inbound, IoThreads, Responder, SessionEvent};

/// Largest WebSocket message or frame a browser may send: the largest valid answer
/// ([`limits::MAX_BROWSER_MESSAGE`]). A larger one ends its connection with 1009.
pub const MAX_MESSAGE: usize = limits::MAX_BROWSER_MESSAGE;
/// How long the last page may be gone, with questions open, before they end as "the page was
/// closed": time for a reload or a dropped network to come back.
pub const PAGE_GONE_GRACE: Duration = Duration::from_secs(60);
/// Most connections served at once (pages, files, sockets); more are refused with 503.
pub const MAX_CONNECTIONS: usize = 128;

/// Largest HTTP request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one write to a browser may block (a tab that stopped reading).
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After a stop: how long connections get to end by themselves (a page its 1000 close, a file
/// its last bytes) before their sockets are shut. The reply to the agent is already written.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);
/// How long after a question's `--timeout` the bridge ends it, if no page did: time for the
/// page's own expiry (which sends what the user touched) to arrive.
const TIMEOUT_GRACE: Duration = Duration::from_secs(1);
/// How often a quiet page is pinged (browsers answer pings by themselves).
const PING_EVERY: Duration = Duration::from_secs(20);
/// A page that sent nothing (not even a pong) for this long is gone: a tab on a lost network
/// leaves a half-open socket that would otherwise count as a page forever.
const SILENT_LIMIT: Duration = Duration::from_secs(60);
/// Most bytes queued for a page that does not read: past this its connection ends.
const MAX_WRITE_BUFFER: usize = 16 * 1024 * 1024;
/// The longest the listener waits after a failed accept (out of file descriptors, say) before
/// it tries again; the wait doubles from 10 ms up to this.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// One file of the web app, served at `path`.
#[derive(Clone, Copy, Debug)]
pub struct Asset {
    pub path: &'static str,
    pub bytes: &'static [u8],
    pub mime: &'static str,
}

/// How the bridge serves.
#[derive(Clone, Debug)]
pub struct BridgeOptions {
    pub bind: SocketAddr,
    pub assets: &'static [Asset],
    /// Stop once the adapters are done and no question is open (`askpane ask`, `askpane hook`).
    pub stop_when_done: bool,
    /// Stop when the agent's turn ends or the agent does (`askpane claude --ui web`: the browser
    /// has no prompt box for another turn).
    pub stop_after_turn: bool,
    /// How long the open questions wait for a page to come back once the last one has gone
    /// ([`PAGE_GONE_GRACE`]; tests pass less).
    pub page_gone_grace: Duration,
}

/// A running bridge.
pub struct Bridge {
    address: SocketAddr,
    served: Vec<SocketAddr>,
    token: String,
    stopped: Arc<AtomicBool>,
    wakeup: Arc<Wakeup>,
    done: Receiver<()>,
}

impl Bridge {
    /// Binds, and starts the hub and the listener. `inbox` is what the adapters send.
    pub fn start(
        options: &BridgeOptions,
        inbox: Receiver<Inbound>,
        threads: &mut IoThreads,
    ) -> io::Result<Bridge> {
        let listener = TcpListener::bind(options.bind)?;
        // Non-blocking: the listener waits in poll(2), so a stop wakes it at once, and a
        // connection that went away between poll and accept does not block it.
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let served = served_addresses(address);
        let token = new_token()?;
        let stopped = Arc::new(AtomicBool::new(false));
        let wakeup = Arc::new(Wakeup::new()?);
        let (to_hub, hub_inbox) = crossbeam_channel::unbounded();
        let (done_sender, done) = crossbeam_channel::bounded(1);

        let hub = Hub {
            clients: HashMap::new(),
            book: Book::default(),
            pages: HashMap::new(),
            started: Instant::now(),
            stop_when_done: options.stop_when_done,
            stop_after_turn: options.stop_after_turn,
            turn_over: false,
            stopped: Arc::clone(&stopped),
            wakeup: Arc::clone(&wakeup),
            next_synthetic_id: 1,
            page_gone_grace: options.page_gone_grace,
            pages_seen: false,
            pages_gone_since: None,
        };
        threads.spawn("web-hub", move || {
            hub.run(&inbox, &hub_inbox);
            let _ = done_sender.send(());
            Ok(())
        })?;

        let site = Arc::new(Site {
            assets: options.assets,
            token: token.clone(),
            served: served.clone(),
            to_hub,
            stopped: Arc::clone(&stopped),
            registry: Registry::default(),
        });
        let accept_wakeup = Arc::clone(&wakeup);
        threads.spawn("web-accept", move || {
            accept(&listener, &site, &accept_wakeup);
            Ok(())
        })?;
        Ok(Bridge { address, served, token, stopped, wakeup, done })
    }

    /// Where the page is: open it in a browser. The token is in the fragment. On a loopback or
    /// unspecified bind this is the loopback address; [`Bridge::urls`] lists every address.
    pub fn url(&self) -> String {
        self.urls().into_iter().next().unwrap_or_default()
    }

    /// A link per address the bridge serves (loopback first): with `--bind 0.0.0.0`, one per
    /// address of this machine, the ones another device can use.
    pub fn urls(&self) -> Vec<String> {
        self.served
            .iter()
            .map(|address| format!("http://{address}/#token={}", self.token))
            .collect()
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Waits until the hub ends (all adapters done and nothing open, with `stop_when_done`).
    pub fn wait(&self) {
        let _ = self.done.recv();
    }

    /// Stops accepting and ends every connection; the threads then end by themselves, within
    /// about a second.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.wakeup.wake();
    }
}

/// True when browsers elsewhere on the network could reach the bridge.
pub fn is_exposed(bind: &SocketAddr) -> bool {
    !bind.ip().is_loopback()
}

/// The addresses a browser can reach the bridge at: the bound one, or on an unspecified bind
/// (`0.0.0.0`, `::`) loopback and every address of this machine's network interfaces (IPv6
/// link-local ones left out: a link to them needs a zone). Only these are accepted as Host and
/// Origin, and a link is printed for each.
fn served_addresses(bound: SocketAddr) -> Vec<SocketAddr> {
    let port = bound.port();
    if !bound.ip().is_unspecified() {
        return vec![bound];
    }
    let ipv6 = bound.is_ipv6();
    let mut ips: Vec<IpAddr> = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    if ipv6 {
        ips.push(IpAddr::V6(Ipv6Addr::LOCALHOST));
    }
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => {
            for ip in interfaces.iter().map(if_addrs::Interface::ip) {
                let usable = match ip {
                    IpAddr::V4(_) => true,
                    // A `::` socket takes IPv4 too (Linux's default dual stack).
                    IpAddr::V6(v6) => ipv6 && !v6.is_unicast_link_local(),
                };
                if usable && !ips.contains(&ip) {
                    ips.push(ip);
                }
            }
        }
        Err(error) => eprintln!(
            "askpane: could not list this machine's network addresses ({error}); only loopback \
             links work"
        ),
    }
    ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect()
}

fn new_token() -> io::Result<String> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// True when `host` (a `Host` header, or an `Origin` without its scheme) names one of the
/// addresses the bridge serves, with its port: an IP literal among them, or `localhost` when
/// loopback is among them. A DNS name other than localhost is never accepted: that is what a
/// DNS-rebinding page sends.
fn names_this_server(host: &str, served: &[SocketAddr]) -> bool {
    let Some((name, port)) = host.rsplit_once(':') else { return false };
    let Some(first) = served.first() else { return false };
    if port != first.port().to_string() {
        return false;
    }
    // An IPv6 literal is bracketed in a Host ("[::1]:8123"), and only then.
    let ip = match name.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')) {
        Some(inner) => inner.parse::<Ipv6Addr>().ok().map(IpAddr::V6),
        None => name.parse::<Ipv4Addr>().ok().map(IpAddr::V4),
    };
    match ip {
        Some(ip) => served.iter().any(|address| address.ip() == ip),
        None => name == "localhost" && served.iter().any(|address| address.ip().is_loopback()),
    }
}

/// Equal in constant time: how long it takes says nothing about where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

// ---------------------------------------------------------------------------------------------
// Waking threads that block in poll(2)

/// A pipe that wakes a thread blocked in `poll(2)` (std has no poll): the listener on a stop, a
/// connection when the hub queued a message for its page.
struct Wakeup {
    read: OwnedFd,
    write: OwnedFd,
}

impl Wakeup {
    fn new() -> io::Result<Wakeup> {
        let (read, write) = rustix::pipe::pipe()?;
        for end in [&read, &write] {
            rustix::io::ioctl_fionbio(end, true)?;
            rustix::io::fcntl_setfd(end, rustix::io::FdFlags::CLOEXEC)?;
        }
        Ok(Wakeup { read, write })
    }

    /// Wakes the waiter. A full pipe means it is woken already.
    fn wake(&self) {
        let _ = rustix::io::write(&self.write, &[1]);
    }

    /// Empties the pipe once woken, so the next poll blocks again.
    fn drain(&self) {
        let mut buffer = [0_u8; 64];
        while matches!(rustix::io::read(&self.read, &mut buffer), Ok(read) if read > 0) {}
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }
}

/// Waits until `socket` (for `interest`) or `wakeup` is ready, at most `timeout` (`None`:
/// no limit). Returns the socket's events.
fn wait_ready(
    socket: BorrowedFd<'_>,
    interest: PollFlags,
    wakeup: &Wakeup,
    timeout: Option<Duration>,
) -> io::Result<PollFlags> {
    let mut fds =
        [PollFd::from_borrowed_fd(socket, interest), PollFd::new(&wakeup.read, PollFlags::IN)];
    let timeout = timeout.and_then(|timeout| Timespec::try_from(timeout).ok());
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(_) | Err(rustix::io::Errno::INTR) => {}
        Err(error) => return Err(error.into()),
    }
    if fds[1].revents().contains(PollFlags::IN) {
        wakeup.drain();
    }
    Ok(fds[0].revents())
}

// ---------------------------------------------------------------------------------------------
// The listener

/// Every open connection, so a stop can wake them and, after [`SHUTDOWN_GRACE`], end them (a
/// download to a tab that stopped reading).
#[derive(Default)]
struct Registry {
    connections: Mutex<HashMap<u64, Registration>>,
}

/// A connection's socket, and for a page's WebSocket the pipe that wakes its thread.
struct Registration {
    socket: TcpStream,
    wakeup: Option<Arc<Wakeup>>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Registration>> {
        self.connections.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, id: u64, stream: &TcpStream) -> io::Result<()> {
        let socket = stream.try_clone()?;
        self.lock().insert(id, Registration { socket, wakeup: None });
        Ok(())
    }

    /// The connection became a page's WebSocket: a stop wakes it through `wakeup`.
    fn set_wakeup(&self, id: u64, wakeup: &Arc<Wakeup>) {
        if let Some(registration) = self.lock().get_mut(&id) {
            registration.wakeup = Some(Arc::clone(wakeup));
        }
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Wakes every connection for a stop: a page's thread through its pipe (it still has its
    /// answer to deliver and its 1000 to send, which a shut socket would lose), any other by
    /// ending its blocked read.
    fn wake_all(&self) {
        for registration in self.lock().values() {
            match &registration.wakeup {
                Some(wakeup) => wakeup.wake(),
                None => {
                    let _ = registration.socket.shutdown(Shutdown::Read);
                }
            }
        }
    }

    fn shutdown_all(&self) {
        for registration in self.lock().values() {
            let _ = registration.socket.shutdown(Shutdown::Both);
        }
    }
}

/// Takes a connection out of the registry when its thread ends, however it ends.
struct Registered<'a> {
    registry: &'a Registry,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.registry.remove(self.id);
    }
}

/// What a connection needs from the server.
struct Site {
    assets: &'static [Asset],
    token: String,
    served: Vec<SocketAddr>,
    to_hub: Sender<ToHub>,
    stopped: Arc<AtomicBool>,
    registry: Registry,
}

/// Accepts connections until the bridge stops, each on its own thread. Nothing here ends the
/// bridge but a stop: a failed accept or thread spawn (out of file descriptors or memory) drops
/// that one connection and waits a little before the next, rather than spin or give up.
fn accept(listener: &TcpListener, site: &Arc<Site>, wakeup: &Wakeup) {
    let mut connections: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 1_u64;
    let mut backoff = Duration::ZERO;
    while !site.stopped.load(Ordering::SeqCst) {
        if !backoff.is_zero() {
            // Waiting in poll on the wake-up pipe alone: a stop still ends the wait at once.
            let _ = wait_ready(wakeup.fd(), PollFlags::empty(), wakeup, Some(backoff));
        }
        let ready = wait_ready(listener.as_fd(), PollFlags::IN, wakeup, None);
        if site.stopped.load(Ordering::SeqCst) {
            break;
        }
        if ready.is_err() {
            backoff = next_backoff(backoff);
            continue;
        }
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => {
                if backoff.is_zero() {
                    eprintln!("askpane: the browser bridge could not accept a connection: {error}");
                }
                backoff = next_backoff(backoff);
                continue;
            }
        };
        connections.retain(|handle| !handle.is_finished());
        if site.registry.len() >= MAX_CONNECTIONS {
            refuse_busy(stream);
            continue;
        }
        let id = next_id;
        next_id += 1;
        if site.registry.add(id, &stream).is_err() {
            backoff = next_backoff(backoff);
            continue;
        }
        let connection_site = Arc::clone(site);
        let spawned = std::thread::Builder::new()
            .name(format!("web-conn-{id}"))
            .spawn(move || serve_connection(stream, id, &connection_site));
        match spawned {
            Ok(handle) => {
                connections.push(handle);
                backoff = Duration::ZERO;
            }
            Err(error) => {
                // The connection (moved into the closure) is closed as it is dropped.
                site.registry.remove(id);
                if backoff.is_zero() {
                    eprintln!("askpane: the browser bridge could not start a thread: {error}");
                }
                backoff = next_backoff(backoff);
            }
        }
    }
    // Stopping. Blocked reads end now; pages get their close frame; then whatever still runs (a
    // download to a tab that stopped reading) has its socket shut.
    site.registry.wake_all();
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while connections.iter().any(|handle| !handle.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    site.registry.shutdown_all();
    for handle in connections {
        let _ = handle.join();
    }
}

fn next_backoff(backoff: Duration) -> Duration {
    (backoff * 2).clamp(Duration::from_millis(10), ACCEPT_BACKOFF_MAX)
}

/// Too many connections: a short 503 without blocking the listener, then closed.
fn refuse_busy(mut stream: TcpStream) {
    const BODY: &str = "too many connections; retry\n";
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Retry-After: 1\r\nConnection: close\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = stream.set_nonblocking(true);
    let _ = stream.write_all(response.as_bytes());
}

/// A parsed request head.
struct Head {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Reads the request head, blocking with a timeout (no polling): a stop wakes the read by
/// shutting the socket.
fn read_head(mut stream: &TcpStream) -> io::Result<Head> {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut text = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 1024];
    while !text.windows(4).any(|window| window == b"\r\n\r\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no request head in time"));
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut chunk) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::InvalidData, "incomplete head")),
            // Byte by byte would be slow; a client must not send before the 101 anyway.
            Ok(read) => text.extend_from_slice(chunk.get(..read).unwrap_or_default()),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
        if text.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "request head too large"));
        }
    }
    let text = String::from_utf8_lossy(&text);
    let mut lines = text.lines();
    let mut request_line = lines.next().unwrap_or_default().split_whitespace();
    let method = request_line.next().unwrap_or_default().to_owned();
    let target = request_line.next().unwrap_or_default();
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Ok(Head { method, path: path.to_owned(), headers })
}

/// Writes a whole response. The page carries its own strict Content-Security-Policy (with the
/// hashes of its inline script and style, made by scripts/build-web); the header adds what a
/// `<meta>` policy cannot say: no framing.
fn respond(stream: &mut TcpStream, status: &str, mime: &str, body: &[u8]) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Content-Security-Policy: frame-ancestors 'none'\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

fn serve_connection(mut stream: TcpStream, id: u64, site: &Site) {
    let _registered = Registered { registry: &site.registry, id };
    // A tab that stops reading must not block this thread for long (a stop shuts the socket).
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let Ok(head) = read_head(&stream) else {
        if !site.stopped.load(Ordering::SeqCst) {
            let _ = respond(&mut stream, "400 Bad Request", "text/plain", b"bad request\n");
        }
        return;
    };
    // Every request must name this server: a page elsewhere that points a DNS name at
    // 127.0.0.1 (DNS rebinding) sends its own name here.
    let host_ok = head.header("host").is_some_and(|host| names_this_server(host, &site.served));
    if !host_ok {
        let _ = respond(&mut stream, "403 Forbidden", "text/plain", b"wrong Host\n");
        return;
    }
    if head.method != "GET" {
        let _ = respond(&mut stream, "405 Method Not Allowed", "text/plain", b"GET only\n");
        return;
    }
    if head.path == "/ws" {
        let _ = serve_socket(stream, id, &head, site);
        return;
    }
    let path = if head.path == "/" { "/index.html" } else { head.path.as_str() };
    let _ = match site.assets.iter().find(|asset| asset.path == path) {
        Some(asset) => respond(&mut stream, "200 OK", asset.mime, asset.bytes),
        None => respond(&mut stream, "404 Not Found", "text/plain", b"not found\n"),
    };
    let _ = stream.shutdown(Shutdown::Both);
}

/// The token the page presents: `Sec-WebSocket-Protocol: askpane, askpane-token.<hex>`. Not in
/// the request line, which proxies and logs keep.
fn presented_token(head: &Head) -> &str {
    head.header("sec-websocket-protocol")
        .into_iter()
        .flat_map(|protocols| protocols.split(','))
        .find_map(|protocol| protocol.trim().strip_prefix(TOKEN_PROTOCOL_PREFIX))
        .unwrap_or_default()
}

fn serve_socket(mut stream: TcpStream, id: u64, head: &Head, site: &Site) -> io::Result<()> {
    if !same_secret(presented_token(head).as_bytes(), site.token.as_bytes()) {
        return respond(&mut stream, "401 Unauthorized", "text/plain", b"wrong or missing token\n");
    }
    let origin_ok = head
        .header("origin")
        .and_then(|origin| origin.strip_prefix("http://"))
        .is_some_and(|origin| names_this_server(origin, &site.served));
    if !origin_ok {
        return respond(&mut stream, "403 Forbidden", "text/plain", b"wrong Origin\n");
    }
    let upgrade = head.header("upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    let (Some(key), Some("13"), true) =
        (head.header("sec-websocket-key"), head.header("sec-websocket-version"), upgrade)
    else {
        return respond(&mut stream, "400 Bad Request", "text/plain", b"not a WebSocket request\n");
    };
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    // A browser that offered subprotocols fails the connection unless one is chosen: the
    // token's entry never is (it would be echoed back).
    let offered = head.header("sec-websocket-protocol").unwrap_or_default();
    let chosen = match offered.split(',').any(|protocol| protocol.trim() == SUBPROTOCOL) {
        true => format!("Sec-WebSocket-Protocol: {SUBPROTOCOL}\r\n"),
        false => String::new(),
    };
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n{chosen}\r\n"
    );
    stream.write_all(response.as_bytes())?;
    stream.set_nonblocking(true)?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
        .max_write_buffer_size(MAX_WRITE_BUFFER);
    let raw = stream.try_clone()?;
    let mut socket = WebSocket::from_raw_socket(stream, Role::Server, Some(config));
    let (outgoing, outbox) = crossbeam_channel::unbounded::<Value>();
    let wakeup = Arc::new(Wakeup::new()?);
    site.registry.set_wakeup(id, &wakeup);
    let page = Page { outgoing, wakeup: Arc::clone(&wakeup) };
    if site.to_hub.send(ToHub::Connected { client: id, page }).is_err() {
        return Ok(());
    }
    let ended = pump(&mut socket, &raw, id, &outbox, &wakeup, site);
    let _ = site.to_hub.send(ToHub::Disconnected { client: id });
    close(&mut socket, &raw, &wakeup, ended);
    Ok(())
}

/// Why a page's connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// askpane is done: the one normal closure (1000).
    Stopped,
    /// The page closed it, or the socket went away.
    Gone,
    /// A message over [`MAX_MESSAGE`] (1009).
    TooBig,
    /// A text message that is not UTF-8 (1007).
    NotUtf8,
    /// Broken framing (1002).
    Protocol,
    /// Nothing, not even a pong, for [`SILENT_LIMIT`] (1001).
    Silent,
    /// The hub is gone, or the page does not read what it is sent (1011).
    Internal,
}

impl Ended {
    /// The close frame to send, if one can still be sent. Only a stop uses 1000.
    fn close_frame(self) -> Option<CloseFrame> {
        let (code, reason) = match self {
            Ended::Stopped => (CloseCode::Normal, DONE_REASON.to_owned()),
            Ended::Gone => return None,
            Ended::TooBig => {
                (CloseCode::Size, format!("message too big: the limit is {MAX_MESSAGE} bytes"))
            }
            Ended::NotUtf8 => (CloseCode::Invalid, "text that is not UTF-8".to_owned()),
            Ended::Protocol => (CloseCode::Protocol, "WebSocket protocol error".to_owned()),
            Ended::Silent => (CloseCode::Away, "no reply to pings".to_owned()),
            Ended::Internal => {
                (CloseCode::Error, "askpane could not go on with this page".to_owned())
            }
        };
        Some(CloseFrame { code, reason: reason.into() })
    }
}

/// Moves messages both ways until the page leaves, breaks the rules, or the bridge stops.
/// Blocks in poll(2) on the socket and the wake-up pipe; never polls on a timer.
fn pump(
    socket: &mut WebSocket<TcpStream>,
    raw: &TcpStream,
    id: u64,
    outbox: &Receiver<Value>,
    wakeup: &Wakeup,
    site: &Site,
) -> Ended {
    let mut heard = Instant::now();
    let mut pinged = Instant::now();
    loop {
        // What the hub queued goes first, also when stopping: the page must hear its answer
        // was taken (and the question withdrawn) before the close.
        for message in outbox.try_iter() {
            if let Err(ended) = queue(socket, Message::text(message.to_string())) {
                return ended;
            }
        }
        if site.stopped.load(Ordering::SeqCst) {
            return Ended::Stopped;
        }
        if heard.elapsed() >= SILENT_LIMIT {
            return Ended::Silent;
        }
        if pinged.elapsed() >= PING_EVERY && heard.elapsed() >= PING_EVERY {
            pinged = Instant::now();
            if let Err(ended) = queue(socket, Message::Ping(Vec::new().into())) {
                return ended;
            }
        }
        let unsent = match socket.flush() {
            Ok(()) => false,
            Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => true,
            Err(error) => return ended_by(&error),
        };
        let interest = if unsent { PollFlags::IN | PollFlags::OUT } else { PollFlags::IN };
        let next_ping = PING_EVERY.saturating_sub(pinged.elapsed().min(heard.elapsed()));
        let silent = SILENT_LIMIT.saturating_sub(heard.elapsed());
        let timeout = next_ping.min(silent).max(Duration::from_millis(1));
        let Ok(ready) = wait_ready(raw.as_fd(), interest, wakeup, Some(timeout)) else {
            return Ended::Internal;
        };
        // Stopping: back to the top, which sends what is queued and ends with 1000.
        if site.stopped.load(Ordering::SeqCst) {
            continue;
        }
        if ready.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR) {
            loop {
                match socket.read() {
                    Ok(Message::Text(text)) => {
                        heard = Instant::now();
                        let value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                        if site.to_hub.send(ToHub::Message { client: id, value }).is_err() {
                            return Ended::Internal;
                        }
                    }
                    Ok(Message::Close(_)) => return Ended::Gone,
                    // Pings are answered by tungstenite; binary frames are not the protocol.
                    Ok(_) => heard = Instant::now(),
                    Err(tungstenite::Error::Io(error))
                        if error.kind() == io::ErrorKind::WouldBlock =>
                    {
                        break;
                    }
                    Err(error) => return ended_by(&error),
                }
            }
        }
    }
}

/// Queues a message for the page (written as the socket takes it).
fn queue(socket: &mut WebSocket<TcpStream>, message: Message) -> Result<(), Ended> {
    match socket.write(message) {
        Ok(()) => Ok(()),
        Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => Ok(()),
        Err(error) => Err(ended_by(&error)),
    }
}

fn ended_by(error: &tungstenite::Error) -> Ended {
    match error {
        tungstenite::Error::Capacity(_) => Ended::TooBig,
        tungstenite::Error::Utf8(_) => Ended::NotUtf8,
        tungstenite::Error::Protocol(_) | tungstenite::Error::AttackAttempt => Ended::Protocol,
        tungstenite::Error::WriteBufferFull(_) => Ended::Internal,
        _ => Ended::Gone,
    }
}

/// Ends a page's connection: the close frame for why (none when the page left), then the
/// page's remaining bytes are read (at most a second), so the socket is not reset under the
/// close frame before the page has read it.
fn close(socket: &mut WebSocket<TcpStream>, raw: &TcpStream, wakeup: &Wakeup, ended: Ended) {
    if let Some(frame) = ended.close_frame() {
        let _ = socket.close(Some(frame));
    }
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    loop {
        match socket.flush() {
            Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => {}
            _ => break,
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || wait_ready(raw.as_fd(), PollFlags::OUT, wakeup, Some(left)).is_err() {
            return;
        }
    }
    let _ = raw.shutdown(Shutdown::Write);
    let mut drained = 0;
    let mut buffer = [0_u8; 16 * 1024];
    while drained < 2 * MAX_MESSAGE {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        match (&*raw).read(&mut buffer) {
            Ok(0) => return,
            Ok(read) => drained += read,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                if wait_ready(raw.as_fd(), PollFlags::IN, wakeup, Some(left)).is_err() {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The hub

/// A connected page, as the hub sees it: where its messages go, and how its thread is woken.
struct Page {
    outgoing: Sender<Value>,
    wakeup: Arc<Wakeup>,
}

impl Page {
    fn send(&self, message: Value) {
        if self.outgoing.send(message).is_ok() {
            self.wakeup.wake();
        }
    }
}

/// What connections tell the hub.
enum ToHub {
    Connected { client: u64, page: Page },
    Disconnected { client: u64 },
    Message { client: u64, value: Value },
}

/// What the hub keeps beside the book for each open question: the name pages know it by and
/// the `user_question` they are sent.
struct PageQuestion {
    tool_use_id: String,
    message: Value,
    asked_at: Instant,
}

/// A countdown this far off is one that never ends here (a `--timeout` beyond what an instant
/// can hold): the page is told the time as asked, not a rounded float.
const UNBOUNDED_SECS: f64 = 1e12;

/// The `user_question` to send a page now: a timed question says how many whole seconds are
/// left (rounded up), a paused one none.
fn message_now(page: &PageQuestion, open: &Open, now: f64) -> Value {
    let mut message = page.message.clone();
    if let Some(object) = message.as_object_mut() {
        match open.countdown.map(|countdown| countdown.left(now)) {
            Some(Some(left)) if left < UNBOUNDED_SECS => {
                object.insert("timeout_secs".into(), Value::from(left.ceil() as u64));
            }
            Some(None) => {
                object.shift_remove("timeout_secs");
            }
            // As asked: no countdown, or one too far off to count down.
            Some(Some(_)) | None => {}
        }
    }
    message
}

/// The bridge's driver of the request book: the book holds each open question, its countdown
/// (the backstop for no page answering) and who waits for it; the hub adds what pages need.
struct Hub {
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
}

impl Hub {
    fn run(mut self, inbox: &Receiver<Inbound>, connections: &Receiver<ToHub>) {
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
                    Ok(message) => self.handle_agent(message),
                    Err(_) => inbox_open = false,
                }
            } else if index == connections_index {
                match operation.recv(connections) {
                    Ok(message) => self.handle_browser(message),
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
        self.stopped.store(true, Ordering::SeqCst);
        self.wakeup.wake();
    }

    fn resolve_all(&mut self, outcome: &Outcome) {
        for settled in self.book.close_all(outcome) {
            self.pages.remove(&settled.open.id());
            for responder in settled.replies {
                responder.send(outcome.clone());
            }
        }
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

    /// When the open questions end for want of a page, if no page comes back.
    fn pages_gone_deadline(&self) -> Option<Instant> {
        let since = self.pages_gone_since?;
        let latest_ask = self.pages.values().map(|page| page.asked_at).max()?;
        since.max(latest_ask).checked_add(self.page_gone_grace)
    }

    /// The last page went and none came back in time: the open questions end honestly ("the
    /// page was closed") instead of waiting for ever.
    fn end_if_pages_gone(&mut self) {
        let Some(since) = self.pages_gone_since else { return };
        let now = Instant::now();
        let grace = self.page_gone_grace;
        let gone: Vec<String> = self
            .pages
            .values()
            .filter(|page| {
                since.max(page.asked_at).checked_add(grace).is_some_and(|end| now >= end)
            })
            .map(|page| page.tool_use_id.clone())
            .collect();
        for tool_use_id in gone {
            self.resolve(&tool_use_id, web::page_closed_outcome(), None);
        }
    }

    fn broadcast(&self, message: &Value) {
        self.broadcast_except(message, None);
    }

    fn broadcast_except(&self, message: &Value, except: Option<u64>) {
        for (id, page) in &self.clients {
            if Some(*id) != except {
                page.send(message.clone());
            }
        }
    }

    fn handle_agent(&mut self, message: Inbound) {
        match message {
            Inbound::Ask(request) => self.ask(*request),
            Inbound::Withdraw { tool_use_id } | Inbound::Settled { tool_use_id, .. } => {
                self.resolve(&tool_use_id, Outcome::Withdrawn, None);
            }
            Inbound::Notice(notice) => eprintln!("askpane: {notice}"),
            Inbound::Permission(permission) => permission.reply.send(PermissionDecision::Deny {
                message: "askpane's browser UI cannot approve tool calls; allow them with \
                          --allow-tools or use the native window."
                    .to_owned(),
            }),
            Inbound::Session(event) => {
                let ends = matches!(
                    *event,
                    SessionEvent::Message(CliMessage::Result(_)) | SessionEvent::Ended { .. }
                );
                self.turn_over |= ends && self.stop_after_turn;
            }
            Inbound::WithdrawPermission { .. }
            | Inbound::Delivery(_)
            | Inbound::Countdown { .. } => {}
            Inbound::Shutdown { outcome } => {
                // askpane is being stopped (issue 9): every open question hears why (and every
                // page sees it go), and the bridge ends as if stopped.
                let open: Vec<String> =
                    self.pages.values().map(|q| q.tool_use_id.clone()).collect();
                for tool_use_id in open {
                    self.resolve(&tool_use_id, outcome.clone(), None);
                }
                self.stopped.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Takes a request into the book; a new question goes to every page.
    fn ask(&mut self, request: super::Request) {
        let super::Request { core, policy, reply } = request;
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
            eprintln!("askpane: the questions cannot be shown in the browser: {reason}");
            reply.send(Outcome::Refused { reason });
            return;
        }
        let timeout_secs = policy.timeout_secs;
        let now = self.now();
        let id = match self.book.admit(core, policy, reply, now) {
            Admission::Opened(id) => id,
            Admission::Joined(_) => return,
            Admission::Decided { outcome, reply } => return reply.send(outcome),
        };
        let Some(open) = self.book.get(id) else { return };
        let extras = web::QuestionExtras {
            provenance: open.core.provenance.clone(),
            warnings: open.core.warnings.iter().map(ToString::to_string).collect(),
            timeout_secs,
            selected: web::selected_numbers(&open.core.ask, &open.drafts()),
            mark_skipped: open.mark_skipped,
        };
        let message = web::user_question(&tool_use_id, &open.core.ask, &utc_timestamp(), &extras);
        self.broadcast(&message);
        // The page times the question out itself (sending what was touched); the book's
        // countdown, a grace later, is the backstop for no page at all.
        self.pages.insert(id, PageQuestion { tool_use_id, message, asked_at: Instant::now() });
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

    /// Ends an open question with `outcome`; the page that decided it (`decided_by`) hears that
    /// askpane has it, then every page drops it.
    fn resolve(&mut self, tool_use_id: &str, outcome: Outcome, decided_by: Option<u64>) {
        let Some(id) = self.find(tool_use_id) else { return };
        let ending = match (decided_by, &outcome) {
            (Some(_), _) => Ending::User,
            (None, Outcome::Withdrawn) => Ending::Withdrawn,
            (None, _) => Ending::Closed,
        };
        if let Some(settled) = self.book.settle(id, outcome, ending) {
            self.told(settled, decided_by);
        }
    }

    /// Sends a settled question's outcome to everyone waiting for it, and tells the pages.
    fn told(&mut self, settled: Settled<Responder>, decided_by: Option<u64>) {
        let Some(page) = self.pages.remove(&settled.open.id()) else { return };
        let kind = settled.outcome.kind();
        for responder in settled.replies {
            responder.send(settled.outcome.clone());
        }
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
                self.clients.insert(client, page);
                self.pages_seen = true;
                self.pages_gone_since = None;
            }
            ToHub::Disconnected { client } => {
                self.clients.remove(&client);
                if self.clients.is_empty() && self.pages_seen {
                    self.pages_gone_since = Some(Instant::now());
                }
            }
            ToHub::Message { client, value } => {
                if let Err(error) = self.take(client, &value) {
                    let refusal = web::error_message(&error, value.get("tool_use_id"));
                    if let Some(page) = self.clients.get(&client) {
                        page.send(refusal);
                    }
                }
            }
        }
    }

    /// Takes a page's message: an answer or a decline decides its question; a timeout change
    /// moves the backstop.
    fn take(&mut self, client: u64, value: &Value) -> Result<(), BrowserError> {
        let message = web::parse_browser_message(value)?;
        let tool_use_id = message.tool_use_id().to_owned();
        let unknown = || BrowserError::UnknownQuestion(tool_use_id.clone());
        let id = self.find(&tool_use_id).ok_or_else(unknown)?;
        let open = self.book.get(id).ok_or_else(unknown)?;
        let ask = &open.core.ask;
        let outcome = match message {
            BrowserMessage::Answer { body, .. } => match web::answer_outcome(ask, &body)? {
                Outcome::Answered(mut answers) if open.mark_skipped => {
                    answers.mark_skipped(ask);
                    Outcome::Answered(answers)
                }
                outcome => outcome,
            },
            BrowserMessage::Declined { stop, message, .. } => web::declined_outcome(stop, &message),
            BrowserMessage::Clarify { body, .. } => web::clarify_outcome(ask, &body)?,
            // The time askpane gave (with any added), not what the page says it was.
            BrowserMessage::TimedOut { body, .. } => {
                web::timed_out_outcome(ask, &body, open.given_secs())?
            }
            BrowserMessage::Timeout { change, .. } => {
                let now = self.now();
                let left = self
                    .book
                    .change_countdown(id, now, change)
                    .map_err(|NoCountdown| BrowserError::NoTimeout(tool_use_id.clone()))?;
                let left =
                    left.filter(|&left| left < UNBOUNDED_SECS).map(|left| left.ceil() as u64);
                let changed = web::timeout_changed(&tool_use_id, left);
                self.broadcast_except(&changed, Some(client));
                return Ok(());
            }
        };
        self.resolve(&tool_use_id, outcome, Some(client));
        Ok(())
    }
}

/// The bridge's own bounds on a request (its messages are sized from them): a request over them
/// is refused with the reason rather than shown in a page that could not answer it.
fn fits_the_page(ask: &crate::protocol::Ask, tool_use_id: &str) -> Result<(), String> {
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
fn utc_timestamp() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abcd", b"abcd"));
        assert!(!same_secret(b"abcd", b"abce"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
    }

    fn address(text: &str) -> SocketAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn hosts_that_name_this_server() {
        let loopback = [address("127.0.0.1:8123")];
        assert!(names_this_server("127.0.0.1:8123", &loopback));
        assert!(names_this_server("localhost:8123", &loopback));
        assert!(!names_this_server("localhost:8124", &loopback));
        assert!(!names_this_server("evil.example:8123", &loopback));
        assert!(!names_this_server("127.0.0.1", &loopback));
        assert!(!names_this_server("127.0.0.2:8123", &loopback));
        assert!(is_exposed(&address("0.0.0.0:8123")));
        // An unspecified bind serves loopback and this machine's addresses, and nothing else.
        let lan = [address("127.0.0.1:8123"), address("192.168.1.20:8123")];
        assert!(names_this_server("192.168.1.20:8123", &lan));
        assert!(names_this_server("localhost:8123", &lan));
        assert!(!names_this_server("192.168.1.21:8123", &lan));
        assert!(!names_this_server("10.0.0.1:8123", &lan));
        assert!(!names_this_server("rebound.example:8123", &lan));
        let public = [address("192.168.1.20:8123")];
        assert!(!names_this_server("localhost:8123", &public));
        let v6 = [address("[::1]:8123")];
        assert!(names_this_server("[::1]:8123", &v6));
        assert!(!names_this_server("::1:8123", &v6));
    }

    #[test]
    fn an_unspecified_bind_serves_loopback_first_and_only_real_addresses() {
        let served = served_addresses(address("0.0.0.0:8123"));
        assert_eq!(served.first(), Some(&address("127.0.0.1:8123")), "{served:?}");
        assert!(served.iter().all(|a| a.port() == 8123 && !a.ip().is_unspecified()), "{served:?}");
        assert_eq!(served_addresses(address("127.0.0.1:9")), [address("127.0.0.1:9")]);
    }

    #[test]
    fn only_a_stop_closes_with_1000() {
        for ended in [
            Ended::TooBig,
            Ended::NotUtf8,
            Ended::Protocol,
            Ended::Silent,
            Ended::Internal,
            Ended::Gone,
        ] {
            let code = ended.close_frame().map(|frame| u16::from(frame.code));
            assert_ne!(code, Some(1000), "{ended:?}");
        }
        let done = Ended::Stopped.close_frame().expect("a close frame");
        assert_eq!((u16::from(done.code), done.reason.as_str()), (1000, DONE_REASON));
        assert_eq!(Ended::TooBig.close_frame().map(|f| u16::from(f.code)), Some(1009));
    }

    #[test]
    fn timestamps_are_utc_iso_8601() {
        let stamp = utc_timestamp();
        assert_eq!(stamp.len(), 20, "{stamp}");
        assert!(stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T', "{stamp}");
    }
}
