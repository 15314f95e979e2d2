//! The bridge's connections: the listener with its back-off, the limits on each kind of
//! connection (issue 24), each connection's HTTP head, the pages and files it serves, and the
//! WebSocket pump between a page and the hub.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use rustix::event::PollFlags;
use rustix::fd::AsFd;
use serde_json::Value;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::protocol::web::{
    DONE_REASON, LINK_REPLACED_CODE, LINK_REPLACED_REASON, SUBPROTOCOL, TOKEN_PROTOCOL_PREFIX,
};

use super::hub::{Page, PageMessage, ToHub};
use super::{
    ACCEPT_BACKOFF_MAX, Asset, Encoding, FILE_DEADLINE, HEAD_PROMPTLY, HEAD_TIMEOUT, MAX_FILES,
    MAX_FILES_PER_PEER, MAX_HEAD, MAX_MESSAGE, MAX_PAGES, MAX_WAITING, MAX_WAITING_PER_PEER,
    MAX_WRITE_BUFFER, PING_EVERY, SHUTDOWN_GRACE, SILENT_LIMIT, WRITE_TIMEOUT, Wakeup,
    names_this_server, same_secret, wait_ready,
};

/// Every open connection, so a stop can wake them and, after [`SHUTDOWN_GRACE`], end them (a
/// download to a tab that stopped reading), and so each kind is kept within its limits.
#[derive(Default)]
pub(super) struct Registry {
    connections: Mutex<HashMap<u64, Registration>>,
}

/// A connection's socket, whom it counts against, where it is, and for a page's WebSocket the
/// pipe that wakes its thread.
pub(super) struct Registration {
    socket: TcpStream,
    peer: IpAddr,
    stage: Stage,
    wakeup: Option<Arc<Wakeup>>,
}

/// Where a connection is, for the limit on each kind (issue 24).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// Connected, its request not read yet (so no token shown), since then.
    Waiting { since: Instant },
    /// Ended to make room for a newer connection: its request was late. Its thread says 503.
    Evicted,
    /// Its request is read and has a short answer (a refusal, not found).
    Answering,
    /// Being sent a file: the page's files need no token.
    File,
    /// A page's WebSocket, its token checked.
    Page,
}

/// What [`Registry::admit`] made of a new connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Admitted {
    /// Taken in; `evicted`: an older silent connection was ended for it.
    Yes { evicted: bool },
    /// No room among the connections still to send their request: refuse it (503).
    Full,
}

/// Whom a connection counts against: its address; one host may have a whole IPv6 /64, so that
/// counts as one (an IPv4-mapped address as the IPv4 one).
pub(super) fn peer_of(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Registration>> {
        self.connections.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a new connection in among those still to send their request, within
    /// [`MAX_WAITING`] and [`MAX_WAITING_PER_PEER`]: when its address (or everyone) is at the
    /// limit, the oldest silent connection there that has had [`HEAD_PROMPTLY`] is ended to make
    /// room; with none that old, it is refused. So connections that never send anything hold no
    /// place for long, and a flood from one address leaves room for the others.
    pub(super) fn admit(&self, id: u64, stream: &TcpStream, peer: IpAddr) -> io::Result<Admitted> {
        let socket = stream.try_clone()?;
        let mut connections = self.lock();
        let waiting = |registration: &Registration| match registration.stage {
            Stage::Waiting { since } => Some(since),
            _ => None,
        };
        let of_peer = connections
            .values()
            .filter(|registration| registration.peer == peer && waiting(registration).is_some())
            .count();
        let all = connections.values().filter_map(waiting).count();
        let scope = match (of_peer >= MAX_WAITING_PER_PEER, all >= MAX_WAITING) {
            (true, _) => Some(Some(peer)),
            (false, true) => Some(None),
            (false, false) => None,
        };
        let mut evicted = false;
        if let Some(scope) = scope {
            let oldest = connections
                .iter_mut()
                .filter(|(_, registration)| scope.is_none_or(|peer| registration.peer == peer))
                .filter_map(|(_, registration)| waiting(registration).map(|at| (at, registration)))
                .filter(|(since, _)| since.elapsed() >= HEAD_PROMPTLY)
                .min_by_key(|(since, _)| *since);
            let Some((_, oldest)) = oldest else { return Ok(Admitted::Full) };
            oldest.stage = Stage::Evicted;
            // Its thread's read ends; it can still write its 503.
            let _ = oldest.socket.shutdown(Shutdown::Read);
            evicted = true;
        }
        let since = Instant::now();
        let stage = Stage::Waiting { since };
        connections.insert(id, Registration { socket, peer, stage, wakeup: None });
        Ok(Admitted::Yes { evicted })
    }

    fn stage(&self, id: u64) -> Option<Stage> {
        self.lock().get(&id).map(|registration| registration.stage)
    }

    /// The connection's request is read: it no longer counts among those still to send one.
    fn answering(&self, id: u64) {
        if let Some(registration) = self.lock().get_mut(&id) {
            registration.stage = Stage::Answering;
        }
    }

    /// Moves the connection to `stage` (a file or a page) if there is room for one more of
    /// those ([`MAX_FILES`] and [`MAX_FILES_PER_PEER`], [`MAX_PAGES`]); false if not.
    fn promote(&self, id: u64, stage: Stage) -> bool {
        let (most, most_per_peer) = match stage {
            Stage::File => (MAX_FILES, MAX_FILES_PER_PEER),
            Stage::Page => (MAX_PAGES, MAX_PAGES),
            Stage::Waiting { .. } | Stage::Evicted | Stage::Answering => return false,
        };
        let mut connections = self.lock();
        let Some(peer) = connections.get(&id).map(|registration| registration.peer) else {
            return false;
        };
        let same = connections.values().filter(|registration| registration.stage == stage);
        let (all, of_peer) = same.fold((0, 0), |(all, of_peer), registration| {
            (all + 1, of_peer + usize::from(registration.peer == peer))
        });
        if all >= most || of_peer >= most_per_peer {
            return false;
        }
        if let Some(registration) = connections.get_mut(&id) {
            registration.stage = stage;
        }
        true
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

    /// Wakes every page's thread (a new link: each looks whether its own is still current).
    pub(super) fn wake_pages(&self) {
        for wakeup in self.lock().values().filter_map(|registration| registration.wakeup.as_ref()) {
            wakeup.wake();
        }
    }

    fn shutdown_all(&self) {
        for registration in self.lock().values() {
            let _ = registration.socket.shutdown(Shutdown::Both);
        }
    }
}

/// Takes a connection out of the registry when its thread ends, however it ends.
pub(super) struct Registered<'a> {
    registry: &'a Registry,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.registry.remove(self.id);
    }
}

/// What a connection needs from the server.
pub(super) struct Site {
    pub(super) assets: &'static [Asset],
    /// `index.html` as askpane serves it: its `askpane-served-by` tag says askpane, so the page
    /// opened without its token says it needs its link rather than show the built-in demo.
    pub(super) page: Vec<u8>,
    pub(super) link: Arc<super::Link>,
    pub(super) served: Vec<SocketAddr>,
    pub(super) to_hub: Sender<ToHub>,
    pub(super) stopped: Arc<AtomicBool>,
    pub(super) registry: Registry,
}

/// Accepts connections until the bridge stops, each on its own thread. Nothing here ends the
/// bridge but a stop: a failed accept or thread spawn (out of file descriptors or memory) drops
/// that one connection and waits a little before the next, rather than spin or give up.
pub(super) fn accept(listener: &TcpListener, site: &Arc<Site>, wakeup: &Wakeup) {
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
        let (stream, address) = match listener.accept() {
            Ok(accepted) => accepted,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => {
                if backoff.is_zero() {
                    log::error!("the browser bridge could not accept a connection: {error}");
                }
                backoff = next_backoff(backoff);
                continue;
            }
        };
        connections.retain(|handle| !handle.is_finished());
        let id = next_id;
        next_id += 1;
        match site.registry.admit(id, &stream, peer_of(address.ip())) {
            Ok(Admitted::Yes { evicted }) => {
                if evicted {
                    site.may_have_been_a_page();
                }
            }
            Ok(Admitted::Full) => {
                refuse_busy(stream);
                site.may_have_been_a_page();
                continue;
            }
            Err(_) => {
                backoff = next_backoff(backoff);
                continue;
            }
        }
        let connection_site = Arc::clone(site);
        let spawned = crate::transport::spawn_named(format!("web-conn-{id}"), move || {
            serve_connection(stream, id, &connection_site)
        });
        match spawned {
            Ok(handle) => {
                connections.push(handle);
                backoff = Duration::ZERO;
            }
            Err(error) => {
                // The connection (moved into the closure) is closed as it is dropped.
                site.registry.remove(id);
                if backoff.is_zero() {
                    log::error!("the browser bridge could not start a thread: {error}");
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

pub(super) fn next_backoff(backoff: Duration) -> Duration {
    (backoff * 2).clamp(Duration::from_millis(10), ACCEPT_BACKOFF_MAX)
}

impl Site {
    /// A connection was turned away for want of room before its request was read (or, a page,
    /// for want of a place): it may have been a page coming back, so the hub must not count the
    /// pages gone from before it.
    fn may_have_been_a_page(&self) {
        let _ = self.to_hub.send(ToHub::Refused);
    }
}

/// Too many connections: a short 503 without blocking the listener, then closed.
pub(super) fn refuse_busy(mut stream: TcpStream) {
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
pub(super) struct Head {
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
pub(super) fn read_head(mut stream: &TcpStream) -> io::Result<Head> {
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
pub(super) fn respond(
    stream: &mut TcpStream,
    status: &str,
    mime: &str,
    body: &[u8],
) -> io::Result<()> {
    stream.write_all(response_head(status, mime, body.len()).as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// The head of a response whose body is `length` bytes.
fn response_head(status: &str, mime: &str, length: usize) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {length}\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Content-Security-Policy: frame-ancestors 'none'\r\n\
         Connection: close\r\n\r\n"
    )
}

pub(super) fn serve_connection(mut stream: TcpStream, id: u64, site: &Site) {
    let _registered = Registered { registry: &site.registry, id };
    // A tab that stops reading must not block this thread for long (a stop shuts the socket).
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let Ok(head) = read_head(&stream) else {
        if site.registry.stage(id) == Some(Stage::Evicted) {
            refuse_busy(stream);
        } else if !site.stopped.load(Ordering::SeqCst) {
            let _ = respond(&mut stream, "400 Bad Request", "text/plain", b"bad request\n");
        }
        return;
    };
    site.registry.answering(id);
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
        Some(_) if !site.registry.promote(id, Stage::File) => {
            refuse_busy(stream);
            return;
        }
        // The page itself, marked as served by askpane (see `Site::page`).
        Some(asset) if asset.path == "/index.html" => {
            send_file(&mut stream, asset.mime, Body::Identity(&site.page))
        }
        Some(asset) => {
            let body = match (asset.encoding, takes_gzip(head.header("accept-encoding"))) {
                (Encoding::Identity, _) => Body::Identity(asset.bytes),
                (Encoding::Gzip, true) => Body::Gzip(asset.bytes),
                (Encoding::Gzip, false) => Body::Inflated(asset.bytes),
            };
            send_file(&mut stream, asset.mime, body)
        }
        None => respond(&mut stream, "404 Not Found", "text/plain", b"not found\n"),
    };
    let _ = stream.shutdown(Shutdown::Both);
}

/// Whether a request's `Accept-Encoding` takes gzip: `gzip`, `x-gzip` or `*` without `q=0`.
/// Without the header a client may take anything (RFC 9110), but one that never asked gets the
/// file itself: the odd client (a script, an old tool) is better served plain, and every
/// browser asks.
pub(super) fn takes_gzip(accept_encoding: Option<&str>) -> bool {
    let Some(codings) = accept_encoding else { return false };
    let mut wildcard = false;
    for entry in codings.split(',') {
        let mut parts = entry.split(';');
        let coding = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let refused = parts.any(|parameter| {
            let (name, value) = parameter.split_once('=').unwrap_or((parameter, ""));
            name.trim().eq_ignore_ascii_case("q")
                && value.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
        });
        match coding.as_str() {
            // An explicit word on gzip decides, whatever `*` says.
            "gzip" | "x-gzip" => return !refused,
            "*" => wildcard = !refused,
            _ => {}
        }
    }
    wildcard
}

/// A file's body as it goes out.
enum Body<'a> {
    /// The file itself.
    Identity(&'a [u8]),
    /// Stored gzipped and sent so, to a client that takes gzip.
    Gzip(&'a [u8]),
    /// Stored gzipped, inflated as it is sent to a client that does not take gzip.
    Inflated(&'a [u8]),
}

/// The inflated length of a gzip member: its trailer's ISIZE (the length modulo 2³², exact for
/// the page's files, which are far smaller).
fn gzip_length(gzip: &[u8]) -> Option<usize> {
    let trailer: [u8; 4] = gzip.get(gzip.len().checked_sub(4)?..)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(trailer)).ok()
}

/// Sends one of the page's files, all of it within [`FILE_DEADLINE`]: a reader that stops (or
/// crawls) holds its place no longer than that. A file stored gzipped says so (and that its
/// form depends on `Accept-Encoding`, for any cache between), or is inflated on the way.
fn send_file(stream: &mut TcpStream, mime: &str, body: Body<'_>) -> io::Result<()> {
    let deadline = Instant::now() + FILE_DEADLINE;
    let mut out = DeadlineWriter { stream, deadline };
    match body {
        Body::Identity(bytes) => {
            out.write_all(response_head("200 OK", mime, bytes.len()).as_bytes())?;
            out.write_all(bytes)?;
        }
        Body::Gzip(bytes) => {
            let head = file_head(mime, bytes.len(), "Content-Encoding: gzip\r\n");
            out.write_all(head.as_bytes())?;
            out.write_all(bytes)?;
        }
        Body::Inflated(bytes) => {
            let length = gzip_length(bytes)
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not gzip"))?;
            out.write_all(file_head(mime, length, "").as_bytes())?;
            let sent = io::copy(&mut flate2::read::GzDecoder::new(bytes), &mut out)?;
            // A stored file that inflates to another length than it says is cut off here: the
            // client sees a short body, never a wrong one taken for whole.
            if usize::try_from(sent).ok() != Some(length) {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "gzip length mismatch"));
            }
        }
    }
    out.stream.flush()
}

/// The head of a file stored gzipped: `Vary`, and `extra` (its encoding when sent gzipped).
fn file_head(mime: &str, length: usize, extra: &str) -> String {
    let head = response_head("200 OK", mime, length);
    let fields = format!("Vary: Accept-Encoding\r\n{extra}\r\n");
    match head.strip_suffix("\r\n") {
        Some(fields_before) => format!("{fields_before}{fields}"),
        None => head,
    }
}

/// Writes in 64 KiB chunks, each within what is left of the file's deadline.
struct DeadlineWriter<'a> {
    stream: &'a mut TcpStream,
    deadline: Instant,
}

impl Write for DeadlineWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the file took too long"));
        }
        self.stream.set_write_timeout(Some(left.min(WRITE_TIMEOUT)))?;
        let chunk = bytes.get(..bytes.len().min(64 * 1024)).unwrap_or(bytes);
        self.stream.write(chunk)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// The token the page presents: `Sec-WebSocket-Protocol: askpane, askpane-token.<hex>`. Not in
/// the request line, which proxies and logs keep.
pub(super) fn presented_token(head: &Head) -> &str {
    head.header("sec-websocket-protocol")
        .into_iter()
        .flat_map(|protocols| protocols.split(','))
        .find_map(|protocol| protocol.trim().strip_prefix(TOKEN_PROTOCOL_PREFIX))
        .unwrap_or_default()
}

pub(super) fn serve_socket(
    mut stream: TcpStream,
    id: u64,
    head: &Head,
    site: &Site,
) -> io::Result<()> {
    // The generation first: a link replaced after this is one this page must not keep.
    let generation = site.link.generation();
    if !same_secret(presented_token(head).as_bytes(), site.link.token().as_bytes()) {
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
    if !site.registry.promote(id, Stage::Page) {
        site.may_have_been_a_page();
        refuse_busy(stream);
        return Ok(());
    }
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
    let (outgoing, outbox) = crossbeam_channel::unbounded::<PageMessage>();
    let wakeup = Arc::new(Wakeup::new()?);
    site.registry.set_wakeup(id, &wakeup);
    let page = Page { outgoing, wakeup: Arc::clone(&wakeup) };
    if site.to_hub.send(ToHub::Connected { client: id, page }).is_err() {
        return Ok(());
    }
    let ended = pump(&mut socket, &raw, (id, generation), &outbox, &wakeup, site);
    let _ = site.to_hub.send(ToHub::Disconnected { client: id });
    close(&mut socket, &raw, &wakeup, ended);
    Ok(())
}

/// Why a page's connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ended {
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
    /// The link was replaced (issue 11, "New link"): the page must not reconnect with it.
    Replaced,
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
            Ended::Replaced => {
                (CloseCode::from(LINK_REPLACED_CODE), LINK_REPLACED_REASON.to_owned())
            }
        };
        Some(CloseFrame { code, reason: reason.into() })
    }
}

/// Moves messages both ways until the page leaves, breaks the rules, or the bridge stops.
/// Blocks in poll(2) on the socket and the wake-up pipe; never polls on a timer.
pub(super) fn pump(
    socket: &mut WebSocket<TcpStream>,
    raw: &TcpStream,
    (id, generation): (u64, u64),
    outbox: &Receiver<PageMessage>,
    wakeup: &Wakeup,
    site: &Site,
) -> Ended {
    let mut heard = Instant::now();
    let mut pinged = Instant::now();
    loop {
        // What the hub queued goes first, also when stopping: the page must hear its answer
        // was taken (and the question withdrawn) before the close.
        for message in outbox.try_iter() {
            // The wire's types hold text keys only: this cannot fail, and would lose one message.
            let text = match serde_json::to_string(&message) {
                Ok(text) => text,
                Err(error) => {
                    log::error!("a message for the page could not be written: {error}");
                    continue;
                }
            };
            if let Err(ended) = queue(socket, Message::text(text)) {
                return ended;
            }
        }
        if site.stopped.load(Ordering::SeqCst) {
            return Ended::Stopped;
        }
        if site.link.generation() != generation {
            return Ended::Replaced;
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
        // Stopping (or a new link): back to the top, which sends what is queued and closes.
        if site.stopped.load(Ordering::SeqCst) || site.link.generation() != generation {
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
pub(super) fn queue(socket: &mut WebSocket<TcpStream>, message: Message) -> Result<(), Ended> {
    match socket.write(message) {
        Ok(()) => Ok(()),
        Err(tungstenite::Error::Io(error)) if error.kind() == io::ErrorKind::WouldBlock => Ok(()),
        Err(error) => Err(ended_by(&error)),
    }
}

pub(super) fn ended_by(error: &tungstenite::Error) -> Ended {
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
pub(super) fn close(
    socket: &mut WebSocket<TcpStream>,
    raw: &TcpStream,
    wakeup: &Wakeup,
    ended: Ended,
) {
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

/// `index.html` (from `assets`) with its `askpane-served-by` tag saying askpane served it.
pub(super) fn marked_page(assets: &[Asset]) -> Vec<u8> {
    use crate::protocol::web::{SERVED_BY_ASKPANE, SERVED_BY_FILES};
    let Some(index) = assets.iter().find(|asset| asset.path == "/index.html") else {
        return Vec::new();
    };
    String::from_utf8_lossy(index.bytes)
        .replacen(SERVED_BY_FILES, SERVED_BY_ASKPANE, 1)
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_host_counts_once_whatever_its_ipv6_address_in_its_64() {
        let ip = |text: &str| text.parse::<IpAddr>().expect("an address");
        assert_eq!(peer_of(ip("192.168.1.20")), ip("192.168.1.20"));
        assert_eq!(peer_of(ip("::ffff:192.168.1.20")), ip("192.168.1.20"));
        assert_eq!(peer_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(peer_of(ip("2001:db8:1:2:ffff:1:2:3")), peer_of(ip("2001:db8:1:2::9")));
        assert_ne!(peer_of(ip("2001:db8:1:3::1")), peer_of(ip("2001:db8:1:2::1")));
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
}
