//! `--ui web`: the questions go to browsers over a WebSocket instead of a native window.
//!
//! askpane serves its own web app (the same egui app built for wasm32, embedded in the binary)
//! and a WebSocket endpoint on 127.0.0.1. The page gets a fresh 256-bit token in the URL
//! fragment (never sent in a request line a proxy could log) and presents it when it connects;
//! it is compared in constant time before the upgrade (401 otherwise), and the Host and Origin
//! headers must name this server exactly (403 otherwise: no DNS rebinding, no other site). Frames
//! are limited to [`MAX_MESSAGE`]; an answer must name an open question and only options that
//! were offered. Nothing a browser sends reaches a shell.
//!
//! Threads: `web-accept` (the listener; it joins its `web-conn-N` threads before ending) and
//! `web-hub`, which owns every open question and every connected browser. The first answer wins;
//! the other tabs see the question withdrawn. A browser that reconnects gets every open question
//! again.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Select, Sender};
use serde_json::Value;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::protocol::Outcome;
use crate::protocol::stream::{CliMessage, PermissionDecision};
use crate::protocol::web::{self, BrowserMessage};

use super::{Inbound, IoThreads, Responder, SessionEvent};

/// Largest WebSocket message or frame a browser may send: an answer is a few KiB at most.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// Largest HTTP request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long after a question's `--timeout` the bridge ends it, if no page did: time for the
/// page's own expiry (which sends what the user touched) to arrive.
const TIMEOUT_GRACE: Duration = Duration::from_secs(1);
/// How often a connection looks at its outgoing messages and the shutdown flag: the longest a
/// message from askpane waits before it goes to the page.
const POLL: Duration = Duration::from_millis(10);

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
}

/// A running bridge.
pub struct Bridge {
    address: SocketAddr,
    token: String,
    stopped: Arc<AtomicBool>,
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
        let address = listener.local_addr()?;
        let token = new_token()?;
        let stopped = Arc::new(AtomicBool::new(false));
        let (to_hub, hub_inbox) = crossbeam_channel::unbounded();
        let (done_sender, done) = crossbeam_channel::bounded(1);

        let hub = Hub {
            clients: HashMap::new(),
            open: Vec::new(),
            stop_when_done: options.stop_when_done,
            stop_after_turn: options.stop_after_turn,
            turn_over: false,
            stopped: Arc::clone(&stopped),
            address,
            next_synthetic_id: 1,
        };
        threads.spawn("web-hub", move || {
            hub.run(&inbox, &hub_inbox);
            let _ = done_sender.send(());
            Ok(())
        })?;

        let site = Site {
            assets: options.assets,
            token: token.clone(),
            address,
            to_hub,
            stopped: Arc::clone(&stopped),
        };
        let accept_stopped = Arc::clone(&stopped);
        threads.spawn("web-accept", move || accept(listener, &site, &accept_stopped))?;
        Ok(Bridge { address, token, stopped, done })
    }

    /// Where the page is: open it in a browser. The token is in the fragment.
    pub fn url(&self) -> String {
        format!("http://{}/#token={}", self.address, self.token)
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Waits until the hub ends (all adapters done and nothing open, with `stop_when_done`).
    pub fn wait(&self) {
        let _ = self.done.recv();
    }

    /// Stops accepting and ends every connection; the threads then end by themselves.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wake the listener, blocked in accept(), so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_millis(200));
    }
}

/// True when browsers elsewhere on the network could reach the bridge.
pub fn is_exposed(bind: &SocketAddr) -> bool {
    !bind.ip().is_loopback()
}

fn new_token() -> io::Result<String> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// True when `host` (a `Host` header, or an `Origin` without its scheme) names this server: its
/// own address, `localhost` on a loopback bind, or, on an unspecified bind (`0.0.0.0`), any IP
/// address with this port. A DNS name other than localhost is never accepted: that is what a
/// DNS-rebinding page sends.
fn names_this_server(host: &str, address: SocketAddr) -> bool {
    let Some((name, port)) = host.rsplit_once(':') else { return false };
    if port != address.port().to_string() {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    match name.parse::<std::net::IpAddr>() {
        Ok(ip) => ip == address.ip() || address.ip().is_unspecified(),
        Err(_) => name == "localhost" && address.ip().is_loopback(),
    }
}

/// Equal in constant time: how long it takes says nothing about where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// What a connection needs from the server.
struct Site {
    assets: &'static [Asset],
    token: String,
    address: SocketAddr,
    to_hub: Sender<ToHub>,
    stopped: Arc<AtomicBool>,
}

fn accept(listener: TcpListener, site: &Site, stopped: &AtomicBool) -> io::Result<()> {
    let mut connections: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 1_u64;
    for stream in listener.incoming() {
        if stopped.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let id = next_id;
        next_id += 1;
        let site = Site {
            assets: site.assets,
            token: site.token.clone(),
            address: site.address,
            to_hub: site.to_hub.clone(),
            stopped: Arc::clone(&site.stopped),
        };
        let handle = std::thread::Builder::new()
            .name(format!("web-conn-{id}"))
            .spawn(move || serve_connection(stream, id, &site))?;
        connections.push(handle);
        connections.retain(|handle| !handle.is_finished());
    }
    for handle in connections {
        let _ = handle.join();
    }
    Ok(())
}

/// A parsed request head.
struct Head {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

fn read_head(mut stream: &TcpStream, stopped: &AtomicBool) -> io::Result<Head> {
    // Polled, so an idle connection never holds up a stop for longer than one poll.
    stream.set_read_timeout(Some(POLL))?;
    let deadline = std::time::Instant::now() + HEAD_TIMEOUT;
    let mut text = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 1024];
    while !text.windows(4).any(|window| window == b"\r\n\r\n") {
        if stopped.load(Ordering::SeqCst) || std::time::Instant::now() >= deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "no request head in time"));
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::InvalidData, "incomplete head")),
            // Byte by byte would be slow; a client must not send before the 101 anyway.
            Ok(read) => text.extend_from_slice(&chunk[..read]),
            Err(error)
                if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
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
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Ok(Head { method, path: path.to_owned(), query: query.to_owned(), headers })
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
    // A tab that stops reading must not block this thread (and so the stop) for long.
    let _ = stream.set_write_timeout(Some(HEAD_TIMEOUT));
    let Ok(head) = read_head(&stream, &site.stopped) else {
        let _ = respond(&mut stream, "400 Bad Request", "text/plain", b"bad request\n");
        return;
    };
    // Every request must name this server: a page elsewhere that points a DNS name at
    // 127.0.0.1 (DNS rebinding) sends its own name here.
    let host_ok = head.header("host").is_some_and(|host| names_this_server(host, site.address));
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

fn serve_socket(mut stream: TcpStream, id: u64, head: &Head, site: &Site) -> io::Result<()> {
    let token =
        head.query.split('&').find_map(|pair| pair.strip_prefix("token=")).unwrap_or_default();
    if !same_secret(token.as_bytes(), site.token.as_bytes()) {
        return respond(&mut stream, "401 Unauthorized", "text/plain", b"wrong or missing token\n");
    }
    let origin_ok = head
        .header("origin")
        .and_then(|origin| origin.strip_prefix("http://"))
        .is_some_and(|origin| names_this_server(origin, site.address));
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
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    stream.write_all(response.as_bytes())?;
    stream.set_read_timeout(Some(POLL))?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let mut socket = WebSocket::from_raw_socket(stream, Role::Server, Some(config));
    let (outgoing, outbox) = crossbeam_channel::unbounded::<Value>();
    if site.to_hub.send(ToHub::Connected { client: id, outgoing }).is_err() {
        return Ok(());
    }
    let result = pump(&mut socket, id, &outbox, site);
    let _ = site.to_hub.send(ToHub::Disconnected { client: id });
    let done = tungstenite::protocol::CloseFrame {
        code: tungstenite::protocol::frame::coding::CloseCode::Normal,
        reason: "askpane is done".into(),
    };
    let _ = socket.close(Some(done));
    let _ = socket.flush();
    result
}

/// Moves messages both ways until the browser leaves, breaks the rules, or the bridge stops.
fn pump(
    socket: &mut WebSocket<TcpStream>,
    id: u64,
    outbox: &Receiver<Value>,
    site: &Site,
) -> io::Result<()> {
    while !site.stopped.load(Ordering::SeqCst) {
        send_queued(socket, outbox)?;
        match socket.read() {
            Ok(Message::Text(text)) => {
                let value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                if site.to_hub.send(ToHub::Message { client: id, value }).is_err() {
                    return Ok(());
                }
            }
            Ok(Message::Close(_)) => return Ok(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(error))
                if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            // Too large, malformed, or gone: this connection ends; the questions stay open.
            Err(error) => return Err(io::Error::other(error)),
        }
    }
    // The bridge is ending: what the hub said last (the answered question withdrawn) still goes.
    send_queued(socket, outbox)
}

fn send_queued(socket: &mut WebSocket<TcpStream>, outbox: &Receiver<Value>) -> io::Result<()> {
    for message in outbox.try_iter() {
        socket.send(Message::text(message.to_string())).map_err(io::Error::other)?;
    }
    Ok(())
}

/// What connections tell the hub.
enum ToHub {
    Connected { client: u64, outgoing: Sender<Value> },
    Disconnected { client: u64 },
    Message { client: u64, value: Value },
}

/// An open question: what to send a browser, and who waits for the answer.
struct OpenQuestion {
    tool_use_id: String,
    ask: crate::protocol::Ask,
    message: Value,
    responders: Vec<Responder>,
    /// When the bridge gives up waiting, and the time the user was given.
    deadline: Option<(Instant, Duration)>,
    mark_skipped: bool,
}

impl OpenQuestion {
    /// The `user_question` to send now: a timed question says how many seconds are left.
    fn message_now(&self) -> Value {
        let mut message = self.message.clone();
        if let (Some((expiry, _)), Some(object)) = (self.deadline, message.as_object_mut()) {
            let left = expiry.saturating_duration_since(Instant::now() + TIMEOUT_GRACE);
            object.insert("timeout_secs".into(), Value::from(left.as_secs_f64().ceil() as u64));
        }
        message
    }
}

struct Hub {
    clients: HashMap<u64, Sender<Value>>,
    open: Vec<OpenQuestion>,
    stop_when_done: bool,
    stop_after_turn: bool,
    turn_over: bool,
    stopped: Arc<AtomicBool>,
    address: SocketAddr,
    next_synthetic_id: u64,
}

impl Hub {
    fn run(mut self, inbox: &Receiver<Inbound>, connections: &Receiver<ToHub>) {
        let mut inbox_open = true;
        loop {
            if self.stop_when_done && !inbox_open && self.open.is_empty() {
                break;
            }
            if self.turn_over {
                break;
            }
            if self.stopped.load(Ordering::SeqCst) {
                break;
            }
            let mut select = Select::new();
            let inbox_index = inbox_open.then(|| select.recv(inbox));
            let connections_index = select.recv(connections);
            self.expire();
            let Ok(operation) = select.select_timeout(Duration::from_millis(200)) else { continue };
            let index = operation.index();
            if Some(index) == inbox_index {
                match operation.recv(inbox) {
                    Ok(message) => self.handle_agent(message),
                    Err(_) => inbox_open = false,
                }
            } else if index == connections_index {
                match operation.recv(connections) {
                    Ok(message) => self.handle_browser(message),
                    Err(_) => break,
                }
            }
        }
        // Whatever is still open is told the truth: nobody answered it here.
        for question in self.open.drain(..) {
            for responder in question.responders {
                responder.send(Outcome::closed());
            }
        }
        self.stopped.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_millis(200));
    }

    fn broadcast(&self, message: &Value) {
        for client in self.clients.values() {
            let _ = client.send(message.clone());
        }
    }

    fn handle_agent(&mut self, message: Inbound) {
        match message {
            Inbound::Ask(request) => {
                let request = *request;
                let tool_use_id = match request.envelope.tool_use_id() {
                    Some(id) => id.to_owned(),
                    None => {
                        self.next_synthetic_id += 1;
                        format!("askpane-{}", self.next_synthetic_id - 1)
                    }
                };
                if let Some(open) = self.open.iter_mut().find(|q| q.tool_use_id == tool_use_id) {
                    // The same question again (a reconnecting agent): shown once, told twice.
                    open.responders.push(request.reply);
                    return;
                }
                let extras = web::QuestionExtras {
                    source: request.provenance.label(),
                    warnings: request.warnings.iter().map(ToString::to_string).collect(),
                    timeout_secs: request.timeout.map(|timeout| timeout.as_secs()),
                    selected: web::selected_numbers(&request.ask, &request.drafts),
                    mark_skipped: request.mark_skipped,
                };
                let message =
                    web::user_question(&tool_use_id, &request.ask, &utc_timestamp(), &extras);
                self.broadcast(&message);
                // The page times the question out itself (sending what was touched); this is
                // the backstop for no page at all.
                let deadline = request
                    .timeout
                    .map(|timeout| (Instant::now() + timeout + TIMEOUT_GRACE, timeout));
                self.open.push(OpenQuestion {
                    tool_use_id,
                    ask: request.ask,
                    message,
                    responders: vec![request.reply],
                    deadline,
                    mark_skipped: request.mark_skipped,
                });
            }
            Inbound::Withdraw { tool_use_id } | Inbound::Settled { tool_use_id, .. } => {
                self.resolve(&tool_use_id, &Outcome::Withdrawn);
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
            Inbound::WithdrawPermission { .. } => {}
        }
    }

    /// Ends the questions whose time ran out with no page answering them.
    fn expire(&mut self) {
        let now = Instant::now();
        let expired: Vec<(String, u64)> = self
            .open
            .iter()
            .filter_map(|question| {
                let (deadline, given) = question.deadline?;
                (now >= deadline).then(|| (question.tool_use_id.clone(), given.as_secs()))
            })
            .collect();
        for (tool_use_id, waited_secs) in expired {
            self.resolve(&tool_use_id, &Outcome::timed_out(waited_secs));
        }
    }

    /// Ends an open question with `outcome`; every browser drops it.
    fn resolve(&mut self, tool_use_id: &str, outcome: &Outcome) {
        let Some(index) = self.open.iter().position(|q| q.tool_use_id == tool_use_id) else {
            return;
        };
        let question = self.open.remove(index);
        for responder in question.responders {
            responder.send(outcome.clone());
        }
        self.broadcast(&web::question_withdrawn(tool_use_id, outcome.kind()));
    }

    fn handle_browser(&mut self, message: ToHub) {
        match message {
            ToHub::Connected { client, outgoing } => {
                // A new tab, or a reload: it gets every open question, with the time left.
                for question in &self.open {
                    let _ = outgoing.send(question.message_now());
                }
                self.clients.insert(client, outgoing);
            }
            ToHub::Disconnected { client } => {
                self.clients.remove(&client);
            }
            ToHub::Message { client, value } => {
                if let Err(error) = self.answer(&value) {
                    let refusal = serde_json::json!({"type": "error", "message": error.to_string(),
                        "tool_use_id": value.get("tool_use_id")});
                    if let Some(sender) = self.clients.get(&client) {
                        let _ = sender.send(refusal);
                    }
                }
            }
        }
    }

    fn answer(&mut self, value: &Value) -> Result<(), web::BrowserError> {
        let message = web::parse_browser_message(value)?;
        let tool_use_id = match &message {
            BrowserMessage::Answer { tool_use_id, .. }
            | BrowserMessage::Declined { tool_use_id, .. } => tool_use_id.clone(),
        };
        let question = self
            .open
            .iter()
            .find(|q| q.tool_use_id == tool_use_id)
            .ok_or_else(|| web::BrowserError::UnknownQuestion(tool_use_id.clone()))?;
        let outcome = match message {
            BrowserMessage::Answer { body, .. } => match web::answer_outcome(&question.ask, &body)?
            {
                Outcome::Answered(mut answers) if question.mark_skipped => {
                    answers.mark_skipped(&question.ask);
                    Outcome::Answered(answers)
                }
                outcome => outcome,
            },
            BrowserMessage::Declined { stop, message, .. } => web::declined_outcome(stop, &message),
        };
        self.resolve(&tool_use_id, &outcome);
        Ok(())
    }
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

    #[test]
    fn hosts_that_name_this_server() {
        let loopback: SocketAddr = "127.0.0.1:8123".parse().expect("an address");
        assert!(names_this_server("127.0.0.1:8123", loopback));
        assert!(names_this_server("localhost:8123", loopback));
        assert!(!names_this_server("localhost:8124", loopback));
        assert!(!names_this_server("evil.example:8123", loopback));
        assert!(!names_this_server("127.0.0.1", loopback));
        let exposed: SocketAddr = "0.0.0.0:8123".parse().expect("an address");
        assert!(is_exposed(&exposed));
        assert!(names_this_server("192.168.1.20:8123", exposed));
        assert!(!names_this_server("localhost:8123", exposed));
        assert!(!names_this_server("rebound.example:8123", exposed));
    }

    #[test]
    fn timestamps_are_utc_iso_8601() {
        let stamp = utc_timestamp();
        assert_eq!(stamp.len(), 20, "{stamp}");
        assert!(stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T', "{stamp}");
    }
}
