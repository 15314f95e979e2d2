//! The `--ui web` bridge (`askpane::transport::serve`) at the protocol level: a `Bridge` started
//! in-process on 127.0.0.1:0 with a small fake web app, questions fed through `ui_channel`, and
//! browsers played by WebSocket clients (tungstenite over a plain `TcpStream`, the upgrade written
//! by hand so every header is the test's choice) and plain HTTP for the static routes.
//!
//! Every test ends the same way: the bridge is stopped, the adapter's sender dropped, and the
//! bridge's threads joined within [`JOIN_WITHIN`] (no thread may be left running). Every wait is
//! bounded. The last tests run the built binary (`askpane ask --ui web`): with the web app
//! embedded they answer through a client; without it they check the message that says how to get
//! it.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use askpane::protocol::outcome::CLOSED_MESSAGE;
use askpane::protocol::web::{PAGE_CLOSED_MESSAGE, page_closed_outcome};
use askpane::protocol::{Envelope, Outcome, parse_message};
use askpane::transport::serve::{
    Asset, Bridge, BridgeJournal, BridgeOptions, Encoding, MAX_MESSAGE, PAGE_GONE_GRACE,
};
use askpane::transport::{
    ApprovalEvent, Inbound, IoThreads, PermissionAsk, Provenance, Request, RequestEvent, RequestId,
    Responder, SessionCommand, SessionEvent, SessionInbound, UiSender, Waker, ui_channel,
};
use crossbeam_channel::Receiver;
use serde_json::{Value, json};
use tungstenite::protocol::Role;
use tungstenite::protocol::frame::Frame;
use tungstenite::protocol::frame::coding::{Data, OpCode};
use tungstenite::{Message, WebSocket};

use crate::support::{Finished, Process, WAIT, collect, fixture_json, read_all, run_bounded};

/// The hook input whose three questions every test asks.
const HOOK_INPUT: &str = "hook.pretooluse.stdin.json";
/// Its `tool_use_id`.
const TOOL_USE_ID: &str = "toolu_fake_ask_000001";
const LAYOUT: &str = "Which layout should the settings page use?";
const FEATURES: &str = "Which features do you want to enable?";
const DATABASE: &str = "どのデータベースを使いますか？";

/// How long the bridge's threads may take to end after `stop()`.
const JOIN_WITHIN: Duration = Duration::from_secs(5);
/// The longest a client waits for one message, or an outcome for its answer.
const MESSAGE_WITHIN: Duration = Duration::from_secs(5);
/// How long "nothing arrives" is watched for.
const QUIET: Duration = Duration::from_millis(400);

const INDEX_HTML: &[u8] = b"<!doctype html><title>fake</title><script src=app.js></script>";
const APP_JS: &[u8] = b"console.log('the fake askpane web app');";
static ASSETS: &[Asset] = &[
    Asset {
        path: "/index.html",
        bytes: INDEX_HTML,
        mime: "text/html; charset=utf-8",
        encoding: Encoding::Identity,
    },
    Asset {
        path: "/app.js",
        bytes: APP_JS,
        mime: "text/javascript; charset=utf-8",
        encoding: Encoding::Identity,
    },
];

// ---------------------------------------------------------------------------------------------
// The bridge under test

/// A bridge started in-process, the adapter's side of its channel, and its threads.
struct Harness {
    bridge: Arc<Bridge>,
    to_bridge: Option<UiSender>,
    threads: Option<IoThreads>,
    port: u16,
    token: String,
}

/// One question sent to the bridge: its envelope (for the reply) and where its outcome arrives.
struct Asked {
    tool_use_id: String,
    envelope: Envelope,
    outcome: Receiver<Outcome>,
}

impl Asked {
    /// The outcome, within [`MESSAGE_WITHIN`].
    fn outcome(&self) -> Outcome {
        self.outcome.recv_timeout(MESSAGE_WITHIN).unwrap_or_else(|error| {
            panic!("no outcome for {} within {MESSAGE_WITHIN:?}: {error}", self.tool_use_id)
        })
    }

    /// Asserts the question is still open: no outcome has been decided.
    fn assert_open(&self) {
        if let Ok(outcome) = self.outcome.try_recv() {
            panic!("{} should still be open, but ended: {outcome:?}", self.tool_use_id);
        }
    }

    /// The reply the hook would print for `outcome`.
    fn reply(&self, outcome: &Outcome) -> Value {
        self.envelope.reply(outcome).expect("a PreToolUse hook always gets a reply")
    }
}

impl Harness {
    fn start() -> Self {
        Harness::start_with(false)
    }

    fn start_with(stop_when_done: bool) -> Self {
        Harness::start_options(stop_when_done, false)
    }

    fn start_options(stop_when_done: bool, stop_after_turn: bool) -> Self {
        let options = BridgeOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            assets: ASSETS,
            stop_when_done,
            stop_after_turn,
            page_gone_grace: PAGE_GONE_GRACE,
            journal: None,
        };
        Harness::start_bridge(&options)
    }

    fn start_bridge(options: &BridgeOptions) -> Self {
        Harness::start_bridge_carrying(options, None)
    }

    /// A bridge carrying an agent session whose first prompt was `prompt` (`askpane claude --ui
    /// web`); the prompts and Stop of its pages arrive on the receiver.
    fn start_session(options: &BridgeOptions, prompt: &str) -> (Self, Receiver<SessionCommand>) {
        let (commands, received) = crossbeam_channel::unbounded();
        let harness =
            Harness::start_bridge_carrying(options, Some((commands, Some(prompt.to_owned()))));
        (harness, received)
    }

    fn start_bridge_carrying(
        options: &BridgeOptions,
        session: Option<(crossbeam_channel::Sender<SessionCommand>, Option<String>)>,
    ) -> Self {
        let (to_bridge, inbox) = ui_channel(Waker::noop());
        let mut threads = IoThreads::default();
        let bridge = match session {
            Some((commands, prompt)) => {
                Bridge::start_with_session(options, inbox, commands, prompt, &mut threads)
            }
            None => Bridge::start(options, inbox, &mut threads),
        }
        .expect("the bridge starts");
        let url = bridge.url();
        let port = bridge.address().port();
        let prefix = format!("http://127.0.0.1:{port}/#token=");
        let token = url
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("the URL is not {prefix}…: {url}"))
            .to_owned();
        assert_eq!(token.len(), 64, "a 256-bit token in hex: {url}");
        assert!(token.bytes().all(|byte| byte.is_ascii_hexdigit()), "{url}");
        Harness {
            bridge: Arc::new(bridge),
            to_bridge: Some(to_bridge),
            threads: Some(threads),
            port,
            token,
        }
    }

    fn sender(&self) -> &UiSender {
        self.to_bridge.as_ref().expect("the adapter's sender is still there")
    }

    /// Asks the fixture's three questions with `tool_use_id`, as `askpane hook` would.
    fn ask(&self, tool_use_id: &str) -> Asked {
        self.ask_with(tool_use_id, |_| {})
    }

    /// As [`Harness::ask`], with the request adjusted before it is sent.
    fn ask_with(&self, tool_use_id: &str, adjust: impl FnOnce(&mut Request)) -> Asked {
        let (sent, asked) = self.try_ask(tool_use_id, adjust);
        assert!(sent, "the bridge has gone");
        asked
    }

    /// Sends the question; false when the bridge no longer takes any (it has ended).
    fn try_ask(&self, tool_use_id: &str, adjust: impl FnOnce(&mut Request)) -> (bool, Asked) {
        let mut input = fixture_json(HOOK_INPUT);
        input["tool_use_id"] = json!(tool_use_id);
        let incoming = parse_message(&input).expect("a hook input");
        let envelope = incoming.envelope.clone();
        let provenance = Provenance::from_envelope("hook", &envelope);
        let (mut request, outcome) = Request::new(incoming, provenance).expect("valid questions");
        adjust(&mut request);
        let sent = self.sender().send(Inbound::Request(RequestEvent::Ask(Box::new(request))));
        (sent, Asked { tool_use_id: tool_use_id.to_owned(), envelope, outcome })
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The WebSocket endpoint (the token goes in a header, never in the URL).
    fn socket_path(&self) -> String {
        "/ws".to_owned()
    }

    /// The page's `Sec-WebSocket-Protocol`: askpane's protocol and the token.
    fn protocols(&self) -> String {
        token_protocols(&self.token)
    }

    /// A browser tab on the page: right token, Host and Origin.
    fn client(&self) -> Client {
        let (host, origin, protocols) = (self.host(), self.origin(), self.protocols());
        let headers =
            [("Host", host.as_str()), ("Origin", origin.as_str()), (PROTOCOL_HEADER, &protocols)];
        upgrade(self.port, &self.socket_path(), &headers)
            .unwrap_or_else(|refused| panic!("a correct client was refused: {refused:?}"))
    }

    /// Proves `asked` is still open by answering it with a correct client.
    fn answer_to_prove_open(&self, asked: &Asked) {
        asked.assert_open();
        let mut client = self.client();
        let question = client.recv_question(&asked.tool_use_id);
        assert_eq!(question["tool_use_id"], asked.tool_use_id.as_str());
        client.send(&json!({"type": "question_answer", "tool_use_id": asked.tool_use_id,
            "answers": {"0": "1"}}));
        let outcome = asked.outcome();
        let reply = asked.reply(&outcome);
        assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "allow", "{reply}");
        assert_eq!(
            reply["hookSpecificOutput"]["updatedInput"]["answers"],
            json!({LAYOUT: "Sidebar"})
        );
        client.recv_taken(&asked.tool_use_id);
    }

    /// Stops the bridge, drops the adapter's sender, and joins every thread within
    /// [`JOIN_WITHIN`].
    fn finish(mut self) {
        self.bridge.stop();
        self.to_bridge = None;
        let threads = self.threads.take().expect("finished once");
        join_bounded(threads, JOIN_WITHIN);
    }
}

impl Drop for Harness {
    /// A test that failed half-way still stops its bridge, so its threads end.
    fn drop(&mut self) {
        if let Some(threads) = self.threads.take() {
            self.bridge.stop();
            self.to_bridge = None;
            thread::spawn(move || threads.join());
        }
    }
}

/// Joins `threads` on a helper thread; panics if that takes longer than `within`.
fn join_bounded(threads: IoThreads, within: Duration) {
    let (done, joined) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(threads.join());
    });
    match joined.recv_timeout(within) {
        Ok(result) => result.expect("the bridge's threads end without an error"),
        Err(_) => panic!("the bridge's threads still run {within:?} after stop()"),
    }
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP and the WebSocket upgrade, written by hand

/// An HTTP response: status code, headers, body.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the bridge");
    stream.set_read_timeout(Some(MESSAGE_WITHIN)).expect("set a read timeout");
    stream.set_write_timeout(Some(MESSAGE_WITHIN)).expect("set a write timeout");
    stream
}

fn request_head(method: &str, target: &str, headers: &[(&str, &str)]) -> String {
    let mut head = format!("{method} {target} HTTP/1.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// Reads a response head, byte by byte so nothing after it is consumed.
fn read_response_head(stream: &mut TcpStream) -> (u16, Vec<(String, String)>) {
    let mut head = Vec::new();
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            Ok(_) => panic!("the connection closed inside the response head: {head:?}"),
            Err(error) => panic!("reading the response head ({error}): {head:?}"),
        }
        assert!(head.len() < 64 * 1024, "a response head that never ends");
    }
    let text = String::from_utf8(head).expect("the response head is UTF-8");
    let mut lines = text.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    (status, headers)
}

/// Reads whatever follows until the server closes the connection.
fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut body = Vec::new();
    let mut chunk = [0_u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return body,
            Ok(read) => body.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == ErrorKind::ConnectionReset => return body,
            Err(error) => panic!("the server did not close the connection ({error})"),
        }
    }
}

/// Sends one plain HTTP request and reads the whole response (the server closes after it).
fn http(port: u16, method: &str, target: &str, headers: &[(&str, &str)]) -> Response {
    let mut stream = connect(port);
    stream.write_all(request_head(method, target, headers).as_bytes()).expect("send a request");
    let (status, headers) = read_response_head(&mut stream);
    let body = read_to_close(&mut stream);
    Response { status, headers, body }
}

/// `GET target` with `Host: 127.0.0.1:PORT`.
fn get(port: u16, target: &str) -> Response {
    let host = format!("127.0.0.1:{port}");
    http(port, "GET", target, &[("Host", &host)])
}

/// Sends a WebSocket upgrade to `target` with the standard upgrade headers plus `headers`.
/// `Ok` when the server switched protocols (the accept key checked); the refusal otherwise.
fn upgrade(port: u16, target: &str, headers: &[(&str, &str)]) -> Result<Client, Response> {
    let key = tungstenite::handshake::client::generate_key();
    let mut all = headers.to_vec();
    all.extend([
        ("Connection", "Upgrade"),
        ("Upgrade", "websocket"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", key.as_str()),
    ]);
    let mut stream = connect(port);
    stream.write_all(request_head("GET", target, &all).as_bytes()).expect("send the upgrade");
    let (status, headers) = read_response_head(&mut stream);
    if status != 101 {
        let body = read_to_close(&mut stream);
        let response = Response { status, headers, body };
        assert!(response.header("upgrade").is_none(), "a refusal that upgrades: {response:?}");
        assert!(
            response.header("sec-websocket-accept").is_none(),
            "a refusal that upgrades: {response:?}"
        );
        return Err(response);
    }
    let response = Response { status, headers, body: Vec::new() };
    // A browser that offered askpane's protocol fails the connection unless it is chosen; the
    // token's entry must never be echoed back.
    let offered = all.iter().find(|(name, _)| *name == PROTOCOL_HEADER).map(|(_, value)| *value);
    if offered.is_some_and(|offered| offered.split(',').any(|p| p.trim() == "askpane")) {
        assert_eq!(response.header(PROTOCOL_HEADER), Some("askpane"), "{response:?}");
    }
    let expected = tungstenite::handshake::derive_accept_key(key.as_bytes());
    assert_eq!(response.header("sec-websocket-accept"), Some(expected.as_str()), "{response:?}");
    assert!(
        response.header("upgrade").is_some_and(|value| value.eq_ignore_ascii_case("websocket")),
        "{response:?}"
    );
    stream.set_read_timeout(Some(Duration::from_millis(20))).expect("set a read timeout");
    Ok(Client { socket: WebSocket::from_raw_socket(stream, Role::Client, None) })
}

/// The header a page presents its token in.
const PROTOCOL_HEADER: &str = "Sec-WebSocket-Protocol";

/// `askpane, askpane-token.<token>`: what the page sends in [`PROTOCOL_HEADER`].
fn token_protocols(token: &str) -> String {
    format!("askpane, askpane-token.{token}")
}

/// Asserts the upgrade is refused with `status`; returns the refusal's body.
fn assert_refused(port: u16, target: &str, headers: &[(&str, &str)], status: u16) -> String {
    match upgrade(port, target, headers) {
        Ok(_) => panic!("upgraded, but {status} was expected: {target} {headers:?}"),
        Err(response) => {
            assert_eq!(response.status, status, "{target} {headers:?}: {response:?}");
            String::from_utf8_lossy(&response.body).into_owned()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A browser tab

/// What a read brought.
enum Polled {
    Message(Message),
    Nothing,
    Closed(String),
    /// A Close frame: its code and reason.
    CloseFrame(u16, String),
}

/// A connected WebSocket client.
struct Client {
    socket: WebSocket<TcpStream>,
}

impl Client {
    fn read_once(&mut self) -> Polled {
        match self.socket.read() {
            Ok(Message::Close(Some(frame))) => {
                Polled::CloseFrame(u16::from(frame.code), frame.reason.as_str().to_owned())
            }
            Ok(Message::Close(None)) => Polled::Closed("a Close frame without a code".to_owned()),
            Ok(message) => Polled::Message(message),
            Err(tungstenite::Error::Io(error))
                if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
            {
                Polled::Nothing
            }
            Err(error) => Polled::Closed(error.to_string()),
        }
    }

    /// The next message of any kind, within [`MESSAGE_WITHIN`].
    fn recv_message(&mut self) -> Message {
        let deadline = Instant::now() + MESSAGE_WITHIN;
        while Instant::now() < deadline {
            match self.read_once() {
                Polled::Message(message) => return message,
                Polled::Nothing => {}
                Polled::Closed(how) => panic!("the bridge closed the connection: {how}"),
                Polled::CloseFrame(code, reason) => {
                    panic!("the bridge closed the connection: {code} {reason:?}")
                }
            }
        }
        panic!("no message within {MESSAGE_WITHIN:?}");
    }

    /// The next text message, parsed as JSON.
    fn recv(&mut self) -> Value {
        loop {
            match self.recv_message() {
                Message::Text(text) => {
                    return serde_json::from_str(text.as_str()).unwrap_or_else(|error| {
                        panic!("the bridge sent text that is not JSON ({error}): {text}")
                    });
                }
                Message::Pong(_) => {}
                other => panic!("expected a text message, got {other:?}"),
            }
        }
    }

    /// The next message, which must be `user_question` for `tool_use_id`.
    fn recv_question(&mut self, tool_use_id: &str) -> Value {
        let message = self.recv();
        assert_eq!(message["type"], "user_question", "{message}");
        assert_eq!(message["tool_use_id"], tool_use_id, "{message}");
        message
    }

    /// What a page that connects to a bridge keeping history gets while `tool_use_id` is asked:
    /// the question and `history_kept`, in either order (and nothing else). Returns the question.
    /// A page gets the questions already open, then `history_kept`, then each question asked
    /// after it connected: which comes first depends on whether the hub took the question or the
    /// page's connection first, and the hub takes whichever is ready (both may be).
    fn recv_question_and_history_kept(&mut self, tool_use_id: &str) -> Value {
        let first = self.recv();
        let (question, kept) = match first["type"] == "user_question" {
            true => (first, self.recv()),
            false => (self.recv(), first),
        };
        assert_eq!(kept, json!({"type": "history_kept"}), "beside the question: {question}");
        assert_eq!(question["type"], "user_question", "beside history_kept: {question}");
        assert_eq!(question["tool_use_id"], tool_use_id, "{question}");
        question
    }

    /// The next message, which must be `question_withdrawn` for `tool_use_id`; returns its reason
    /// (how the question ended: `answered`, `withdrawn`, …).
    fn recv_withdrawn(&mut self, tool_use_id: &str) -> String {
        let message = self.recv();
        assert_eq!(message["type"], "question_withdrawn", "{message}");
        assert_eq!(message["tool_use_id"], tool_use_id, "{message}");
        message["reason"].as_str().expect("a reason").to_owned()
    }

    /// What the tab that decided a question hears: `answer_received` (askpane has it), then the
    /// question withdrawn like in every tab. Returns the outcome kind the acknowledgement names.
    fn recv_taken(&mut self, tool_use_id: &str) -> String {
        let message = self.recv();
        assert_eq!(message["type"], "answer_received", "an acknowledgement first: {message}");
        assert_eq!(message["tool_use_id"], tool_use_id, "{message}");
        let kind = message["outcome"].as_str().expect("an outcome kind").to_owned();
        assert_eq!(self.recv_withdrawn(tool_use_id), kind, "withdrawn for the same reason");
        kind
    }

    /// The next message, which must be an `error`; returns its `message`.
    fn recv_error(&mut self) -> String {
        let message = self.recv();
        assert_eq!(message["type"], "error", "expected an error: {message}");
        message["message"]
            .as_str()
            .unwrap_or_else(|| panic!("an error without a message: {message}"))
            .to_owned()
    }

    /// Asserts nothing arrives for [`QUIET`].
    fn assert_quiet(&mut self) {
        let until = Instant::now() + QUIET;
        while Instant::now() < until {
            match self.read_once() {
                Polled::Message(message) => panic!("expected nothing, got {message:?}"),
                Polled::Nothing => {}
                Polled::Closed(how) => panic!("the bridge closed the connection: {how}"),
                Polled::CloseFrame(code, reason) => {
                    panic!("the bridge closed the connection: {code} {reason:?}")
                }
            }
        }
    }

    /// Waits until the bridge ends the connection; returns how.
    fn expect_closed(&mut self) -> String {
        let deadline = Instant::now() + MESSAGE_WITHIN;
        while Instant::now() < deadline {
            match self.read_once() {
                Polled::Closed(how) => return how,
                Polled::CloseFrame(code, reason) => {
                    return format!("a Close frame {code} {reason}");
                }
                Polled::Nothing | Polled::Message(_) => {}
            }
        }
        panic!("the connection is still open after {MESSAGE_WITHIN:?}");
    }

    /// Waits for the bridge's Close frame (skipping messages before it); its code and reason.
    fn expect_close_frame(&mut self) -> (u16, String) {
        let deadline = Instant::now() + MESSAGE_WITHIN;
        while Instant::now() < deadline {
            match self.read_once() {
                Polled::CloseFrame(code, reason) => return (code, reason),
                Polled::Closed(how) => panic!("closed without a Close frame: {how}"),
                Polled::Nothing | Polled::Message(_) => {}
            }
        }
        panic!("no Close frame within {MESSAGE_WITHIN:?}");
    }

    fn send(&mut self, value: &Value) {
        self.send_text(&value.to_string());
    }

    fn send_text(&mut self, text: &str) {
        self.socket.send(Message::text(text)).expect("send a text message");
    }
}

// ---------------------------------------------------------------------------------------------
// Checks

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ`, checking the shape on the way.
fn parse_utc(stamp: &str) -> i64 {
    let bytes = stamp.as_bytes();
    let shape_ok = bytes.len() == 20
        && bytes.iter().enumerate().all(|(at, byte)| match at {
            4 | 7 => *byte == b'-',
            10 => *byte == b'T',
            13 | 16 => *byte == b':',
            19 => *byte == b'Z',
            _ => byte.is_ascii_digit(),
        });
    assert!(shape_ok, "not an ISO-8601 UTC timestamp: {stamp:?}");
    let number = |from: usize, to: usize| stamp[from..to].parse::<i64>().expect("digits");
    let (year, month, day) = (number(0, 4), number(5, 7), number(8, 10));
    let (hour, minute, second) = (number(11, 13), number(14, 16), number(17, 19));
    assert!((1..=12).contains(&month) && (1..=31).contains(&day), "{stamp:?}");
    assert!(hour < 24 && minute < 60 && second < 61, "{stamp:?}");
    // Days from civil (Howard Hinnant), written independently of the bridge's own conversion.
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    days * 86_400 + hour * 3600 + minute * 60 + second
}

fn now_secs() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970");
    i64::try_from(since.as_secs()).expect("a sane clock")
}

/// The fixture's `questions`, exactly as the hook input holds them.
fn fixture_questions() -> Value {
    fixture_json(HOOK_INPUT)["tool_input"]["questions"].clone()
}

/// The `preview` of option `option` of question `question` in the fixture.
fn fixture_preview(question: usize, option: usize) -> Value {
    fixture_questions()[question]["options"][option]["preview"].clone()
}

// ---------------------------------------------------------------------------------------------
// 1. The happy path

#[test]
fn a_browser_gets_the_questions_and_its_answer_becomes_the_hook_reply() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let before = now_secs();
    let mut client = harness.client();

    let question = client.recv_question(TOOL_USE_ID);
    assert_eq!(question["questions"], fixture_questions(), "the questions are echoed exactly");
    let stamp = question["timestamp"].as_str().expect("a timestamp string");
    let at = parse_utc(stamp);
    assert!((before - 120..=now_secs() + 120).contains(&at), "not now in UTC: {stamp}");
    assert_eq!(question["source"], "hook · project · default", "{question}");
    assert!(question["warnings"].is_array(), "{question}");
    asked.assert_open();

    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "2", "1": "1,3", "2": "other:MySQL"}, "notes": {"0": "narrow"}}));
    let outcome = asked.outcome();
    assert!(matches!(outcome, Outcome::Answered(_)), "{outcome:?}");
    let reply = asked.reply(&outcome);
    let output = &reply["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "PreToolUse", "{reply}");
    assert_eq!(output["permissionDecision"], "allow", "{reply}");
    assert_eq!(output["updatedInput"]["questions"], fixture_questions(), "{reply}");
    assert_eq!(
        output["updatedInput"]["answers"],
        json!({LAYOUT: "Tabs", FEATURES: "Dark mode, Export", DATABASE: "MySQL"}),
        "{reply}"
    );
    assert_eq!(
        output["updatedInput"]["annotations"],
        json!({LAYOUT: {"notes": "narrow", "preview": fixture_preview(0, 1)}}),
        "{reply}"
    );
    client.recv_taken(TOOL_USE_ID);
    client.assert_quiet();
    drop(client);
    harness.finish();
}

#[test]
fn the_inbox_bridge_records_each_ending_in_the_history_with_the_exact_reply() {
    // Issue 11: `askpane inbox --ui web` gives its bridge the store's writer; what a page
    // answers is in the history as the agent received it, and so is a request decided at once.
    let state = crate::support::scratch_dir("bridge-history");
    let harness = start_with_history(&state);
    let asked = harness.ask(TOOL_USE_ID);
    let mut client = harness.client();
    // Issue 11: a bridge that keeps history says so (the page then shows History).
    client.recv_question_and_history_kept(TOOL_USE_ID);
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "2", "1": "1,3", "2": "other:MySQL"}}));
    let outcome = asked.outcome();
    let reply = asked.reply(&outcome);
    client.recv_taken(TOOL_USE_ID);
    let declined = harness.ask_with("toolu_declined", |request| {
        request.policy.decline = Some("not now".to_owned());
    });
    assert!(matches!(declined.outcome(), Outcome::Declined { .. }));
    drop(client);
    harness.finish();
    let entries = history_of(&state, 2);
    let outcomes: Vec<&str> = entries.iter().map(|entry| entry.record.outcome.as_str()).collect();
    assert_eq!(outcomes, ["declined", "answered"], "newest first");
    let answered = &entries[1].record;
    let recorded: Value =
        serde_json::from_str(answered.reply.as_deref().expect("the reply kept")).expect("JSON");
    assert_eq!(recorded, reply, "the history keeps the reply the agent received");
    assert!(answered.answer.contains("MySQL"), "{}", answered.answer);
}

/// Issue 25: a question still open when the inbox's bridge ends is told the window closed, and
/// the history records that ending as the native window's does (it was left open in the store,
/// to be found abandoned later).
#[test]
fn a_question_open_when_the_inbox_bridge_ends_is_recorded_as_declined() {
    let state = crate::support::scratch_dir("bridge-history-end");
    let harness = start_with_history(&state);
    let asked = harness.ask(TOOL_USE_ID);
    // A page shows it: the bridge holds it. (The page's note that history is kept may come
    // before it or after, as the page's connection and the question reach the hub.)
    let mut client = harness.client();
    client.recv_question_and_history_kept(TOOL_USE_ID);
    drop(client);
    harness.finish();
    assert_eq!(asked.outcome(), Outcome::closed());
    let entries = history_of(&state, 1);
    let outcomes: Vec<&str> = entries.iter().map(|entry| entry.record.outcome.as_str()).collect();
    assert_eq!(outcomes, ["declined"]);
}

/// Issue 25: a page never misses a question asked as it connects, nor gets it twice. The hub
/// takes the page's connection and the question one at a time (whichever is ready, at random
/// when both are), so the question is either among the open ones the page gets on connecting
/// (before `history_kept`) or sent to it afterwards (after `history_kept`).
#[test]
fn a_page_connecting_as_a_question_arrives_gets_it_once_whichever_comes_first() {
    let state = crate::support::scratch_dir("bridge-connect-race");
    let harness = start_with_history(&state);
    for round in 0..20 {
        let id = format!("toolu_race_{round}");
        let (asked, mut page) = match round % 2 {
            0 => {
                let asked = harness.ask(&id);
                (asked, harness.client())
            }
            _ => {
                let page = harness.client();
                (harness.ask(&id), page)
            }
        };
        page.recv_question_and_history_kept(&id);
        page.send(&json!({"type": "question_declined", "tool_use_id": id,
            "outcome": "declined", "message": "Not now."}));
        assert_eq!(asked.outcome(), Outcome::Declined { message: "Not now.".into() });
        // Its acknowledgement is what comes next: a second copy of the question would be first.
        page.recv_taken(&id);
    }
    harness.finish();
}

/// A bridge whose journal is a store in `state`, as `askpane inbox --ui web` gives it one.
fn start_with_history(state: &std::path::Path) -> Harness {
    use askpane::store::{DraftSink, Store};
    let sink = DraftSink::start(Store::open_in(state).expect("a store")).expect("its writer");
    let options = BridgeOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        assets: ASSETS,
        stop_when_done: false,
        stop_after_turn: false,
        page_gone_grace: PAGE_GONE_GRACE,
        journal: Some(BridgeJournal(Arc::new(sink))),
    };
    Harness::start_bridge(&options)
}

/// The history in `state`, once it holds `count` entries (the store writes on its own thread),
/// or whatever it holds after [`WAIT`].
fn history_of(state: &std::path::Path, count: usize) -> Vec<askpane::store::HistoryEntry> {
    use askpane::store::{HistoryQuery, Store};
    let deadline = Instant::now() + WAIT;
    loop {
        let entries = Store::open_in(state)
            .and_then(|store| store.history(&HistoryQuery::default()))
            .expect("the history reads");
        if entries.len() >= count || Instant::now() > deadline {
            return entries;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn localhost_is_accepted_as_host_and_origin() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let host = format!("localhost:{}", harness.port);
    let origin = format!("http://localhost:{}", harness.port);
    let protocols = harness.protocols();
    let headers = [("Host", host.as_str()), ("Origin", &origin), (PROTOCOL_HEADER, &protocols)];
    let mut client = upgrade(harness.port, &harness.socket_path(), &headers)
        .unwrap_or_else(|refused| panic!("localhost was refused: {refused:?}"));
    client.recv_question(TOOL_USE_ID);
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"2": "2"}}));
    let outcome = asked.outcome();
    assert_eq!(
        asked.reply(&outcome)["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({DATABASE: "SQLite"})
    );
    let page = http(harness.port, "GET", "/", &[("Host", &host)]);
    assert_eq!(page.status, 200, "{page:?}");
    drop(client);
    harness.finish();
}

// ---------------------------------------------------------------------------------------------
// 2. Declines and replies in the user's own words

#[test]
fn declines_stops_and_free_replies_become_their_outcomes() {
    let harness = Harness::start();
    let declined = harness.ask("toolu_declined");
    let stopped = harness.ask("toolu_stopped");
    let replied = harness.ask("toolu_replied");
    let mut client = harness.client();
    for id in ["toolu_declined", "toolu_stopped", "toolu_replied"] {
        client.recv_question(id);
    }

    client.send(&json!({"type": "question_declined", "tool_use_id": "toolu_declined",
        "outcome": "declined", "message": "Not now: use the defaults."}));
    assert_eq!(
        declined.outcome(),
        Outcome::Declined { message: "Not now: use the defaults.".into() }
    );
    client.recv_taken("toolu_declined");

    client.send(&json!({"type": "question_declined", "tool_use_id": "toolu_stopped",
        "outcome": "stopped", "message": ""}));
    let outcome = stopped.outcome();
    assert_eq!(outcome, Outcome::stopped(""));
    let reply = stopped.reply(&outcome);
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny", "{reply}");
    client.recv_taken("toolu_stopped");

    client.send(&json!({"type": "question_answer", "tool_use_id": "toolu_replied",
        "answers": {}, "response": "Whatever you think is best."}));
    let outcome = replied.outcome();
    let Outcome::Replied(reply) = &outcome else { panic!("expected Replied, got {outcome:?}") };
    assert_eq!(reply.text(), "Whatever you think is best.");
    let hook_reply = replied.reply(&outcome);
    assert_eq!(
        hook_reply["hookSpecificOutput"]["updatedInput"]["response"], "Whatever you think is best.",
        "{hook_reply}"
    );
    client.recv_taken("toolu_replied");
    drop(client);
    harness.finish();
}

#[test]
fn chat_about_this_and_a_countdown_that_ran_out_come_back_with_their_picks() {
    let harness = Harness::start();
    let clarify = harness.ask("toolu_clarify");
    let timed = harness.ask_with("toolu_timed", |request| {
        request.policy.timeout_secs = Some(600);
    });
    let mut client = harness.client();
    client.recv_question("toolu_clarify");
    client.recv_question("toolu_timed");

    // "Chat about this" with Tabs picked and a note: the bridge builds the dialog's words.
    client.send(&json!({"type": "question_clarify", "tool_use_id": "toolu_clarify",
        "answers": {"0": "2"}, "notes": {"1": "not sure yet"}}));
    let Outcome::Clarify { message, .. } = clarify.outcome() else { panic!("a clarify") };
    assert!(message.starts_with("The user wants to clarify these questions."), "{message}");
    assert!(message.contains("- \"Which layout should the settings page use?\"\n  Answer: Tabs"));
    assert!(message.contains("  (No answer provided)\n  User notes: not sure yet"), "{message}");
    assert_eq!(client.recv_taken("toolu_clarify"), "clarify");

    // The page's countdown ran out with Sidebar picked and the database's Other being typed:
    // the agent is told so, with the time askpane gave, never the page's say.
    client.send(&json!({"type": "question_timed_out", "tool_use_id": "toolu_timed",
        "answers": {"0": "1"}, "typing": [2], "waited_secs": 1}));
    let Outcome::TimedOut(timed_out) = timed.outcome() else { panic!("a timeout") };
    let message = timed_out.message();
    assert!(message.starts_with("No response after 600s"), "{message}");
    assert!(message.contains("\"Which layout should the settings page use?\"=\"Sidebar\""));
    assert!(message.ends_with("what they typed was not sent."), "{message}");
    assert_eq!(client.recv_taken("toolu_timed"), "timed_out");

    // A typing index that was not asked is refused, by name.
    let open = harness.ask("toolu_open");
    client.recv_question("toolu_open");
    client.send(&json!({"type": "question_timed_out", "tool_use_id": "toolu_open",
        "answers": {}, "typing": [7]}));
    let error = client.recv_error();
    assert!(error.contains("7"), "{error}");
    open.assert_open();
    drop(client);
    harness.finish();
}

// ---------------------------------------------------------------------------------------------
// 3. Security: every refusal leaves the question answerable by the real page

#[test]
fn a_wrong_or_missing_token_is_refused_before_the_upgrade() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let (host, origin) = (harness.host(), harness.origin());
    let token = harness.token.clone();
    let mut last_char_differs = token.clone();
    let last = last_char_differs.pop().expect("a token");
    last_char_differs.push(if last == '0' { '1' } else { '0' });
    let protocols = [
        Some(token_protocols(&"0".repeat(64))),
        Some(token_protocols("wrong")),
        Some(token_protocols(&last_char_differs)),
        Some(token_protocols(&token[..63])),
        Some(token_protocols(&format!("{token}0"))),
        Some(token_protocols(&token.to_uppercase())),
        Some(token_protocols("")),
        Some("askpane".to_owned()),
        Some(format!("askpane, {token}")),
        None,
    ];
    for offered in &protocols {
        if offered.as_deref() == Some(token_protocols(&token).as_str()) {
            continue; // An all-digit token has no letters to change the case of.
        }
        let mut headers = vec![("Host", host.as_str()), ("Origin", origin.as_str())];
        if let Some(offered) = offered {
            headers.push((PROTOCOL_HEADER, offered));
        }
        let body = assert_refused(harness.port, "/ws", &headers, 401);
        assert!(!body.contains(&token), "the refusal leaks the token: {body}");
    }
    // The token in the request line, where proxies and logs keep it, is not accepted at all.
    let headers = [("Host", host.as_str()), ("Origin", origin.as_str())];
    assert_refused(harness.port, &format!("/ws?token={token}"), &headers, 401);
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn a_foreign_or_missing_origin_is_refused() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let host = harness.host();
    let port = harness.port;
    let origins = [
        Some("http://evil.example".to_owned()),
        Some(format!("http://evil.example:{port}")),
        None,
        Some(format!("https://127.0.0.1:{port}")),
        Some(format!("http://127.0.0.1:{}", if port == 1 { 2 } else { port - 1 })),
        Some("http://127.0.0.1".to_owned()),
        Some("null".to_owned()),
        Some(format!("http://127.0.0.1:{port}.evil.example")),
        Some(format!("http://localhost:{port}@evil.example")),
        // Another address of this machine, or any IP literal, is not where the page is.
        Some(format!("http://127.0.0.2:{port}")),
        Some(format!("http://192.0.2.1:{port}")),
    ];
    let protocols = harness.protocols();
    for origin in &origins {
        let mut headers = vec![("Host", host.as_str()), (PROTOCOL_HEADER, protocols.as_str())];
        if let Some(origin) = origin {
            headers.push(("Origin", origin.as_str()));
        }
        assert_refused(port, &harness.socket_path(), &headers, 403);
    }
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn a_foreign_host_is_refused_on_pages_and_on_the_socket() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let port = harness.port;
    let rebound = format!("evil.example:{port}");
    let rebound_origin = format!("http://evil.example:{port}");
    // DNS rebinding: the page is served from a name that now points at 127.0.0.1.
    for target in ["/", "/index.html", "/app.js"] {
        let response = http(port, "GET", target, &[("Host", &rebound)]);
        assert_eq!(response.status, 403, "GET {target} with Host {rebound}: {response:?}");
        assert!(!response.body.windows(APP_JS.len()).any(|w| w == APP_JS), "{response:?}");
    }
    let missing_host = http(port, "GET", "/", &[]);
    assert_eq!(missing_host.status, 403, "GET / without Host: {missing_host:?}");
    let origin = harness.origin();
    for (host, origin) in [
        (rebound.as_str(), rebound_origin.as_str()),
        (rebound.as_str(), origin.as_str()),
        ("127.0.0.1", origin.as_str()),
    ] {
        assert_refused(port, &harness.socket_path(), &[("Host", host), ("Origin", origin)], 403);
    }
    assert_refused(port, &harness.socket_path(), &[("Origin", &origin)], 403);
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn an_oversized_message_ends_only_that_connection_with_1009() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);

    // One Text frame just over the limit.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    let padding = "x".repeat(MAX_MESSAGE + 1);
    let oversized = json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}, "notes": {"0": padding}});
    // The bridge may close before the whole frame is written: a failed send is fine too.
    let _ = client.socket.send(Message::text(oversized.to_string()));
    let (code, reason) = client.expect_close_frame();
    assert_eq!(code, 1009, "too big is 1009, never 1000 (which the page takes as done): {reason}");
    assert!(reason.contains(&MAX_MESSAGE.to_string()), "{reason}");
    drop(client);
    asked.assert_open();

    // The same, split into frames each under the limit.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    let half = MAX_MESSAGE / 2 + 16;
    let text = oversized.to_string().into_bytes();
    let first = Frame::message(text[..half].to_vec(), OpCode::Data(Data::Text), false);
    let second = Frame::message(text[half..2 * half].to_vec(), OpCode::Data(Data::Continue), false);
    let _ = client.socket.send(Message::Frame(first));
    let _ = client.socket.send(Message::Frame(second));
    assert_eq!(client.expect_close_frame().0, 1009);
    drop(client);
    asked.assert_open();

    // A message well under the limit is read as usual.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    client.send(&json!({"type": "question_answer", "tool_use_id": "toolu_other",
        "notes": {"0": "n".repeat(MAX_MESSAGE / 2)}}));
    assert!(client.recv_error().contains("toolu_other"));
    drop(client);

    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn answers_that_were_not_offered_are_refused_and_the_question_stays_open() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);

    let answer = |answers: Value| json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID, "answers": answers});
    let forged = json!({"type": "question_answer", "tool_use_id": "toolu_forged",
        "answers": {"0": "1"}});
    let cases: Vec<(String, &str)> = vec![
        (forged.to_string(), "toolu_forged"),
        (answer(json!({"0": "3"})).to_string(), "option 3"),
        (answer(json!({"0": "0"})).to_string(), "option 0"),
        (answer(json!({"7": "1"})).to_string(), "\"7\""),
        (answer(json!({"-1": "1"})).to_string(), "\"-1\""),
        (answer(json!({"0": "1,2"})).to_string(), "single-select"),
        (answer(json!({"0": "1,other:x"})).to_string(), "single-select"),
        (answer(json!({"1": "1,4"})).to_string(), "option 4"),
        (answer(json!({"0": 1})).to_string(), "answers"),
        (answer(json!(["1"])).to_string(), "answers"),
        (json!({"type": "question_answer", "answers": {"0": "1"}}).to_string(), "tool_use_id"),
        ("this is not JSON".to_owned(), "JSON"),
        ("{\"type\": \"question_answer\", ".to_owned(), "JSON"),
        (json!([forged.clone()]).to_string(), "JSON"),
        (json!("question_answer").to_string(), "JSON"),
        (json!({"type": "user_question", "tool_use_id": TOOL_USE_ID}).to_string(), "user_question"),
        (json!({"type": "shell", "command": "rm -rf ~"}).to_string(), "shell"),
        (json!({"tool_use_id": TOOL_USE_ID, "answers": {"0": "1"}}).to_string(), "type"),
        (
            json!({"type": "question_declined", "tool_use_id": TOOL_USE_ID, "outcome": "answered"})
                .to_string(),
            "answered",
        ),
        (
            json!({"type": "question_declined", "tool_use_id": "toolu_forged"}).to_string(),
            "toolu_forged",
        ),
    ];
    for (text, named) in &cases {
        client.send_text(text);
        let error = client.recv_error();
        assert!(error.contains(named), "sent {text}\n  error {error:?} does not name {named:?}");
        asked.assert_open();
    }
    client.assert_quiet();
    drop(client);
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn a_forged_id_is_named_in_the_error() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    client.send(&json!({"type": "question_answer", "tool_use_id": "toolu_forged",
        "answers": {"0": "1"}}));
    let error = client.recv();
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["tool_use_id"], "toolu_forged", "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("toolu_forged")), "{error}");
    drop(client);
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn binary_frames_are_ignored_and_pings_get_pongs() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);

    // A valid answer, but as a Binary frame: the protocol is text, so it is not an answer.
    let answer = json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}});
    client.socket.send(Message::binary(answer.to_string().into_bytes())).expect("send binary");
    client.socket.send(Message::binary(vec![0xff_u8, 0x00, 0xfe])).expect("send binary");
    client.assert_quiet();
    asked.assert_open();

    client.socket.send(Message::Ping(b"are you there".to_vec().into())).expect("send a ping");
    match client.recv_message() {
        Message::Pong(payload) => assert_eq!(&payload[..], b"are you there"),
        other => panic!("expected a Pong, got {other:?}"),
    }
    // An unsolicited Pong is allowed (RFC 6455 §5.5.3) and ignored.
    client.socket.send(Message::Pong(b"unsolicited".to_vec().into())).expect("send a pong");
    client.assert_quiet();
    asked.assert_open();

    // The same connection still answers.
    client.send(&answer);
    assert!(matches!(asked.outcome(), Outcome::Answered(_)));
    client.recv_taken(TOOL_USE_ID);
    drop(client);
    harness.finish();
}

#[test]
fn only_get_is_served_and_unknown_paths_are_not_found() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let port = harness.port;
    let host = harness.host();
    let origin = harness.origin();
    for (method, target) in
        [("POST", "/".to_owned()), ("POST", harness.socket_path()), ("PUT", "/app.js".to_owned())]
    {
        let response = http(
            port,
            method,
            &target,
            &[("Host", &host), ("Origin", &origin), ("Content-Length", "0")],
        );
        assert_eq!(response.status, 405, "{method} {target}: {response:?}");
    }
    for target in ["/nope", "/app.js.map", "/index.html/", "/../Cargo.toml", "/%2e%2e/Cargo.toml"] {
        let response = get(port, target);
        assert_eq!(response.status, 404, "GET {target}: {response:?}");
    }
    // The socket path without an upgrade is not a page.
    let protocols = harness.protocols();
    let headers = [("Host", host.as_str()), ("Origin", &origin), (PROTOCOL_HEADER, &protocols)];
    let plain = http(port, "GET", &harness.socket_path(), &headers);
    assert_eq!(plain.status, 400, "{plain:?}");
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

// ---------------------------------------------------------------------------------------------
// 4.–6. Several tabs, reconnecting, and questions the agent withdraws

#[test]
fn with_several_tabs_the_first_answer_wins() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let mut first = harness.client();
    let mut second = harness.client();
    first.recv_question(TOOL_USE_ID);
    second.recv_question(TOOL_USE_ID);

    first.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1", "2": "1"}}));
    let outcome = asked.outcome();
    assert_eq!(
        asked.reply(&outcome)["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({LAYOUT: "Sidebar", DATABASE: "PostgreSQL"})
    );
    first.recv_taken(TOOL_USE_ID);
    assert_eq!(second.recv_withdrawn(TOOL_USE_ID), "answered", "the other tab hears how it ended");

    // The slower tab's answer comes too late: refused, and the outcome is not sent twice.
    second.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "2"}}));
    let error = second.recv_error();
    assert!(error.contains(TOOL_USE_ID), "{error}");
    second.send(&json!({"type": "question_declined", "tool_use_id": TOOL_USE_ID,
        "outcome": "stopped"}));
    second.recv_error();
    assert!(asked.outcome.recv_timeout(QUIET).is_err(), "a second outcome was sent");
    first.assert_quiet();
    drop((first, second));
    harness.finish();
}

#[test]
fn a_reconnecting_tab_gets_every_open_question_again() {
    let harness = Harness::start();
    let one = harness.ask("toolu_one");
    let two = harness.ask("toolu_two");
    let mut tab = harness.client();
    let first_one = tab.recv_question("toolu_one");
    let first_two = tab.recv_question("toolu_two");
    drop(tab);

    let mut reload = harness.client();
    assert_eq!(reload.recv_question("toolu_one"), first_one, "re-sent as it was");
    assert_eq!(reload.recv_question("toolu_two"), first_two, "re-sent as it was");
    reload.send(&json!({"type": "question_answer", "tool_use_id": "toolu_one",
        "answers": {"0": "2"}}));
    assert!(matches!(one.outcome(), Outcome::Answered(_)));
    reload.recv_taken("toolu_one");
    drop(reload);

    // Answered meanwhile: not sent again. Still open: sent again.
    let mut again = harness.client();
    assert_eq!(again.recv_question("toolu_two"), first_two);
    again.assert_quiet();
    two.assert_open();

    // A question asked while no tab is connected reaches the next one.
    drop(again);
    let three = harness.ask("toolu_three");
    let mut later = harness.client();
    later.recv_question("toolu_two");
    later.recv_question("toolu_three");
    later.assert_quiet();
    drop(later);
    three.assert_open();
    harness.finish();
    assert_eq!(two.outcome(), Outcome::closed(), "stopped with the question open");
    assert_eq!(three.outcome(), Outcome::closed(), "stopped with the question open");
}

#[test]
fn a_question_the_agent_withdraws_leaves_every_tab() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let mut first = harness.client();
    let mut second = harness.client();
    first.recv_question(TOOL_USE_ID);
    second.recv_question(TOOL_USE_ID);

    harness
        .sender()
        .send(Inbound::Request(RequestEvent::Withdraw { tool_use_id: TOOL_USE_ID.to_owned() }));
    assert_eq!(asked.outcome(), Outcome::Withdrawn);
    first.recv_withdrawn(TOOL_USE_ID);
    assert_eq!(second.recv_withdrawn(TOOL_USE_ID), "withdrawn");

    // Too late to answer; a new tab does not see it.
    first.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    first.recv_error();
    let mut third = harness.client();
    third.assert_quiet();
    // Withdrawing an id that is not open is harmless.
    harness.sender().send(Inbound::Request(RequestEvent::Withdraw {
        tool_use_id: "toolu_never_asked".to_owned(),
    }));
    third.assert_quiet();
    drop((first, second, third));
    harness.finish();
}

#[test]
fn the_same_question_asked_twice_is_shown_once_and_both_are_told() {
    let harness = Harness::start();
    let original = harness.ask(TOOL_USE_ID);
    let again = harness.ask(TOOL_USE_ID);
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    client.assert_quiet();
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    assert!(matches!(original.outcome(), Outcome::Answered(_)));
    assert!(matches!(again.outcome(), Outcome::Answered(_)));
    client.recv_taken(TOOL_USE_ID);
    drop(client);
    harness.finish();
}

// ---------------------------------------------------------------------------------------------
// 7. Ending

/// Waits for `bridge.wait()` on a helper thread, at most `within`; true when it returned.
fn waits_within(bridge: &Arc<Bridge>, within: Duration) -> bool {
    let bridge = Arc::clone(bridge);
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        bridge.wait();
        let _ = done.send(());
    });
    finished.recv_timeout(within).is_ok()
}

#[test]
fn with_stop_when_done_the_bridge_ends_after_the_last_answer() {
    let mut harness = Harness::start_with(true);
    let asked = harness.ask(TOOL_USE_ID);
    harness.to_bridge = None; // The adapter has sent everything.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    assert!(!waits_within(&harness.bridge, QUIET), "ended with a question still open");
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"1": "2"}}));
    let outcome = asked.outcome();
    assert_eq!(
        asked.reply(&outcome)["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({FEATURES: "Search"})
    );
    assert!(waits_within(&harness.bridge, MESSAGE_WITHIN), "wait() did not return by itself");
    // The bridge ends the tab's connection as it goes.
    client.expect_closed();
    drop(client);
    // No stop() needed, but the threads must all end.
    let threads = harness.threads.take().expect("the threads");
    join_bounded(threads, JOIN_WITHIN);
}

#[test]
fn with_stop_when_done_the_answering_tab_hears_its_question_is_done_before_the_end() {
    let mut harness = Harness::start_with(true);
    let asked = harness.ask(TOOL_USE_ID);
    harness.to_bridge = None;
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    assert!(matches!(asked.outcome(), Outcome::Answered(_)));
    // The page must learn its answer was taken, not just see the connection drop.
    client.recv_taken(TOOL_USE_ID);
    let how = client.expect_closed();
    assert!(how.starts_with("a Close frame"), "not a clean close: {how}");
    drop(client);
    assert!(waits_within(&harness.bridge, MESSAGE_WITHIN), "wait() did not return by itself");
    let threads = harness.threads.take().expect("the threads");
    join_bounded(threads, JOIN_WITHIN);
}

#[test]
fn with_stop_when_done_and_nothing_asked_the_bridge_ends_at_once() {
    let mut harness = Harness::start_with(true);
    harness.to_bridge = None;
    assert!(waits_within(&harness.bridge, MESSAGE_WITHIN), "wait() did not return by itself");
    let threads = harness.threads.take().expect("the threads");
    join_bounded(threads, JOIN_WITHIN);
}

#[test]
fn stopping_with_questions_open_tells_each_agent_the_window_closed() {
    for stop_when_done in [false, true] {
        let harness = Harness::start_with(stop_when_done);
        let one = harness.ask("toolu_one");
        let two = harness.ask("toolu_two");
        let mut client = harness.client();
        client.recv_question("toolu_one");
        client.recv_question("toolu_two");
        harness.bridge.stop();
        for asked in [&one, &two] {
            let outcome = asked.outcome();
            assert_eq!(outcome, Outcome::closed());
            let reply = asked.reply(&outcome);
            assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny", "{reply}");
            assert_eq!(reply["hookSpecificOutput"]["permissionDecisionReason"], CLOSED_MESSAGE);
        }
        assert!(waits_within(&harness.bridge, MESSAGE_WITHIN), "wait() after stop()");
        client.expect_closed();
        drop(client);
        // A question sent after the bridge ended is still told (its responder is dropped).
        let (sent, late) = harness.try_ask("toolu_late", |_| {});
        assert!(!sent, "the bridge has ended, so it takes no more questions");
        harness.finish();
        assert_eq!(late.outcome(), Outcome::closed());
    }
}

#[test]
fn with_stop_after_turn_the_bridge_ends_with_the_agent() {
    let mut harness = Harness::start_options(true, true);
    let asked = harness.ask(TOOL_USE_ID);
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    assert!(!waits_within(&harness.bridge, QUIET), "ended before the agent did");
    let ended = SessionEvent::Ended { status: "exit status: 0".into(), stderr_tail: Vec::new() };
    harness.sender().send(Inbound::Session(SessionInbound::Event(Box::new(ended))));
    assert!(waits_within(&harness.bridge, MESSAGE_WITHIN), "wait() did not return by itself");
    assert_eq!(asked.outcome(), Outcome::closed());
    client.expect_closed();
    drop(client);
    harness.to_bridge = None;
    let threads = harness.threads.take().expect("the threads");
    join_bounded(threads, JOIN_WITHIN);
}

#[test]
fn an_idle_connection_does_not_hold_up_stop() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    // A browser's speculative preconnect: a TCP connection that never sends a request.
    let idle = connect(harness.port);
    // And one that sent half a request head.
    let mut half = connect(harness.port);
    half.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1").expect("send half a head");
    // A whole request after them is answered: the listener has taken both before it (it
    // accepts in the order connections came), so stop finds them being served.
    assert_eq!(get(harness.port, "/").status, 200);
    let started = Instant::now();
    harness.finish();
    assert!(started.elapsed() < JOIN_WITHIN);
    assert_eq!(asked.outcome(), Outcome::closed());
    drop((idle, half));
}

#[test]
fn a_question_with_a_timeout_times_out_in_the_browser_too() {
    let harness = Harness::start();
    let asked = harness.ask_with(TOOL_USE_ID, |request| {
        request.policy.timeout_secs = Some(1);
    });
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    let outcome = asked.outcome.recv_timeout(Duration::from_secs(4));
    assert_eq!(outcome.ok(), Some(Outcome::timed_out(1)), "--timeout 1 ignored");
    assert_eq!(client.recv_withdrawn(TOOL_USE_ID), "timed_out");
    drop(client);
    harness.finish();
}

#[test]
fn a_session_that_marks_skipped_questions_gets_them_marked_from_the_browser_too() {
    let harness = Harness::start();
    let asked = harness.ask_with(TOOL_USE_ID, |request| request.policy.mark_skipped = true);
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    let outcome = asked.outcome();
    let Outcome::Answered(answers) = &outcome else { panic!("expected an answer: {outcome:?}") };
    let marked: Vec<Option<&str>> = answers.entries().iter().map(|e| e.unanswered).collect();
    assert_eq!(marked, [None, Some("skipped"), Some("skipped")], "{outcome:?}");
    drop(client);
    harness.finish();
}

// ---------------------------------------------------------------------------------------------
// 8. The static routes

#[test]
fn the_page_and_its_files_are_served_with_a_strict_policy() {
    let harness = Harness::start();
    let port = harness.port;
    for target in ["/", "/index.html", "/?from=bookmark"] {
        let page = get(port, target);
        assert_eq!(page.status, 200, "GET {target}: {page:?}");
        assert_eq!(page.body, INDEX_HTML, "GET {target}");
        assert!(
            page.header("content-type").is_some_and(|mime| mime.starts_with("text/html")),
            "GET {target}: {page:?}"
        );
        // The page's own <meta> policy (with its hashes) restricts scripts and connections; the
        // header adds what a <meta> policy cannot: no framing.
        let policy = page.header("content-security-policy").unwrap_or_default();
        assert_eq!(policy, "frame-ancestors 'none'", "GET {target}");
        assert_eq!(page.header("x-content-type-options"), Some("nosniff"), "GET {target}");
        assert_eq!(
            page.header("content-length"),
            Some(INDEX_HTML.len().to_string().as_str()),
            "GET {target}"
        );
    }
    let script = get(port, "/app.js");
    assert_eq!(script.status, 200, "{script:?}");
    assert_eq!(script.body, APP_JS);
    assert_eq!(script.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert_eq!(script.header("x-content-type-options"), Some("nosniff"));
    harness.finish();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("gzip in memory");
    encoder.finish().expect("gzip in memory")
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut plain).expect("a gzip body");
    plain
}

/// Issue 30: the web app's big files are embedded gzipped and sent as they are, with
/// `Content-Encoding: gzip` and `Vary`, to a client whose `Accept-Encoding` takes gzip (every
/// browser); any other gets the file itself, inflated on the way. The files still need no
/// token (as before: the page must load to present it), the socket still does, and the stored
/// `.gz` is no path of its own.
#[test]
fn gzipped_files_go_as_they_are_to_browsers_and_inflated_to_other_clients() {
    // Compressible but not trivially: a few hundred KiB of varied text, several write chunks.
    let plain: Vec<u8> = (0..40_000_u32)
        .flat_map(|n| format!("line {n} {}\n", n.wrapping_mul(2_654_435_761) % 9973).into_bytes())
        .collect();
    let stored: &'static [u8] = Box::leak(gzip(&plain).into_boxed_slice());
    let mut assets = ASSETS.to_vec();
    assets.push(Asset {
        path: "/app_bg.wasm",
        bytes: stored,
        mime: "application/wasm",
        encoding: Encoding::Gzip,
    });
    let assets: &'static [Asset] = Box::leak(assets.into_boxed_slice());
    let harness = Harness::start_bridge(&BridgeOptions { assets, ..loopback_options() });
    let port = harness.port;
    let host = format!("127.0.0.1:{port}");
    for accept in ["gzip, deflate, br, zstd", "gzip", "x-gzip", "*", "br;q=1.0, GZIP;q=0.5"] {
        let sent =
            http(port, "GET", "/app_bg.wasm", &[("Host", &host), ("Accept-Encoding", accept)]);
        assert_eq!(sent.status, 200, "{accept}: {sent:?}");
        assert_eq!(sent.header("content-encoding"), Some("gzip"), "{accept}: {:?}", sent.headers);
        assert_eq!(sent.header("vary"), Some("Accept-Encoding"), "{accept}");
        assert_eq!(sent.header("content-type"), Some("application/wasm"), "{accept}");
        assert_eq!(sent.header("x-content-type-options"), Some("nosniff"), "{accept}");
        assert_eq!(sent.header("content-length"), Some(stored.len().to_string().as_str()));
        assert!(sent.body == stored, "{accept}: not the stored gzip bytes");
        assert!(gunzip(&sent.body) == plain, "{accept}: does not inflate to the file");
    }
    let without: [&[(&str, &str)]; 5] = [
        &[("Host", &host)],
        &[("Host", &host), ("Accept-Encoding", "identity")],
        &[("Host", &host), ("Accept-Encoding", "br, deflate")],
        &[("Host", &host), ("Accept-Encoding", "gzip;q=0, *")],
        &[("Host", &host), ("Accept-Encoding", "*;q=0")],
    ];
    for headers in without {
        let sent = http(port, "GET", "/app_bg.wasm", headers);
        assert_eq!(sent.status, 200, "{headers:?}: {sent:?}");
        assert_eq!(sent.header("content-encoding"), None, "{headers:?}: {:?}", sent.headers);
        assert_eq!(sent.header("vary"), Some("Accept-Encoding"), "{headers:?}");
        assert_eq!(sent.header("content-length"), Some(plain.len().to_string().as_str()));
        assert!(sent.body == plain, "{headers:?}: not the file itself");
    }
    // A file stored plain is sent plain, whatever the client takes.
    let script =
        http(port, "GET", "/app.js", &[("Host", &host), ("Accept-Encoding", "gzip, deflate")]);
    assert_eq!((script.header("content-encoding"), script.body.as_slice()), (None, APP_JS));
    assert_eq!(get(port, "/app_bg.wasm.gz").status, 404);
    // The token guards the socket as before; the files never needed it.
    assert_refused(port, "/ws", &[("Host", &host), ("Origin", &format!("http://{host}"))], 401);
    harness.finish();
}

/// Issue 24 item 4: the page askpane serves says askpane served it, so opened without its token
/// it asks for its link instead of showing the built-in demo (the bundle's own file says
/// `files`, as a plain file server would serve it).
#[test]
fn the_page_is_served_marked_as_askpanes() {
    use askpane::protocol::web::{SERVED_BY_ASKPANE, SERVED_BY_FILES};
    static MARKED: &[Asset] = &[Asset {
        path: "/index.html",
        bytes:
            b"<!doctype html><meta name=\"askpane-served-by\" content=\"files\"><title>t</title>",
        mime: "text/html; charset=utf-8",
        encoding: Encoding::Identity,
    }];
    let marked = String::from_utf8_lossy(MARKED[0].bytes);
    assert!(marked.contains(SERVED_BY_FILES), "the bundle's form");
    let harness = Harness::start_bridge(&BridgeOptions { assets: MARKED, ..loopback_options() });
    let page = get(harness.port, "/");
    let body = String::from_utf8_lossy(&page.body).into_owned();
    assert!(body.contains(SERVED_BY_ASKPANE) && !body.contains(SERVED_BY_FILES), "{body}");
    assert_eq!(page.header("content-length"), Some(body.len().to_string().as_str()));
    harness.finish();
}

// ---------------------------------------------------------------------------------------------
// 9. Through the binary

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn ask_with_ui_web_answers_through_the_browser() {
    let file = fixture_path(HOOK_INPUT);
    if !crate::support::web_bundle_built() {
        // Built without scripts/build-web: askpane says how to get the web app.
        let run = run_bounded(&mut crate::support::askpane(&["ask", "--ui", "web", &file]), None);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        assert!(run.stderr.contains("scripts/build-web"), "{run:?}");
        assert!(!run.stderr.contains("panicked"), "{run:?}");
        return;
    }
    let mut command = crate::support::askpane(&["ask", "--ui", "web", &file]);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut process = Process::new(command.spawn().expect("run askpane"));
    let stdout = read_all(process.child.stdout.take().expect("piped stdout"));
    let stderr = BufReader::new(process.child.stderr.take().expect("piped stderr"));
    let (lines_sender, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines_sender.send(line);
        }
    });
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    let url = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no URL on stderr within {WAIT:?}: {seen:?}"));
        if let Some(url) = line.strip_prefix("askpane: answer in your browser: ") {
            break url.to_owned();
        }
        seen.push(line);
    };
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{url}"));
    let (port, token) = rest.split_once("/#token=").unwrap_or_else(|| panic!("{url}"));
    let port: u16 = port.parse().unwrap_or_else(|_| panic!("{url}"));
    let page = get(port, "/");
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.header("content-type").is_some_and(|mime| mime.starts_with("text/html")));
    let wasm = get(port, "/app_bg.wasm");
    assert_eq!(wasm.status, 200, "the web app's wasm: {:?}", wasm.headers);
    assert_eq!(wasm.header("content-type"), Some("application/wasm"));
    // Embedded gzipped (issue 30): a browser gets those bytes, which inflate to exactly the
    // built file; a client that does not take gzip gets the file itself (`wasm` above).
    let built = std::fs::read(format!("{}/dist/web/app_bg.wasm", env!("CARGO_MANIFEST_DIR")))
        .expect("dist/web/app_bg.wasm, which this binary embeds");
    assert!(wasm.header("content-encoding").is_none(), "{:?}", wasm.headers);
    assert!(wasm.body == built, "the plain wasm is not the built file");
    let host = format!("127.0.0.1:{port}");
    let browser = [("Host", host.as_str()), ("Accept-Encoding", "gzip, deflate")];
    let gzipped = http(port, "GET", "/app_bg.wasm", &browser);
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"), "{:?}", gzipped.headers);
    assert!(gzipped.body.len() < built.len() / 2, "{} bytes gzipped", gzipped.body.len());
    assert!(gunzip(&gzipped.body) == built, "the gzipped wasm does not inflate to the built file");

    let (host, origin) = (format!("127.0.0.1:{port}"), format!("http://127.0.0.1:{port}"));
    let protocols = token_protocols(token);
    let headers = [("Host", host.as_str()), ("Origin", &origin), (PROTOCOL_HEADER, &protocols)];
    let mut client =
        upgrade(port, "/ws", &headers).unwrap_or_else(|refused| panic!("refused: {refused:?}"));
    let question = client.recv_question(TOOL_USE_ID);
    assert_eq!(question["questions"], fixture_questions());
    client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "2", "1": "1,3", "2": "other:MySQL"}, "notes": {"0": "narrow"}}));
    let status = process.wait(WAIT);
    drop(client);
    let stdout = collect(stdout);
    let status = status.unwrap_or_else(|| panic!("askpane still runs after answering: {stdout}"));
    let errors: Vec<String> = lines.try_iter().collect();
    assert_eq!(status.code(), Some(0), "stdout {stdout}\nstderr {seen:?} {errors:?}");
    let reply: Value = serde_json::from_str(stdout.trim_end())
        .unwrap_or_else(|error| panic!("stdout is not one JSON line ({error}): {stdout}"));
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let output = &reply["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "allow", "{reply}");
    assert_eq!(
        output["updatedInput"]["answers"],
        json!({LAYOUT: "Tabs", FEATURES: "Dark mode, Export", DATABASE: "MySQL"}),
        "{reply}"
    );
    assert_eq!(
        output["updatedInput"]["annotations"],
        json!({LAYOUT: {"notes": "narrow", "preview": fixture_preview(0, 1)}}),
        "{reply}"
    );
}

/// Asserts a run whose bridge could not start said so and did not claim, on stdout, that the
/// user closed a window: nobody ever saw the question.
fn assert_no_false_close(run: &Finished, code: i32) {
    assert_eq!(run.status.code(), Some(code), "{run:?}");
    assert!(run.stderr.contains("browser"), "{run:?}");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    assert!(!run.stdout.contains(CLOSED_MESSAGE), "a false 'the user closed the window': {run:?}");
    assert!(!run.stdout.contains("\"deny\""), "a deny blocks the tool call: {run:?}");
}

#[test]
fn a_bridge_that_cannot_start_never_claims_the_user_closed_a_window() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let bind = taken.local_addr().expect("its address").to_string();
    let file = fixture_path(HOOK_INPUT);
    let input = std::fs::read_to_string(&file).expect("the fixture");
    // The race shows about one run in three: ten runs of each catch it.
    for _ in 0..10 {
        // A hook exits 0 whatever happens: exit 2 would block the tool call.
        let hook = run_bounded(
            &mut crate::support::askpane(&["hook", "--ui", "web", "--bind", &bind]),
            Some(&input),
        );
        assert_no_false_close(&hook, 0);
        let ask = run_bounded(
            &mut crate::support::askpane(&["ask", "--ui", "web", "--bind", &bind, &file]),
            None,
        );
        assert_no_false_close(&ask, 2);
    }
    drop(taken);
}

// ---------------------------------------------------------------------------------------------
// 10. Hardening (issue 9): limits, close codes, acknowledgement, timeouts, a closed page,
//     connection bounds, shutdown, `--bind`, and the binary under resource limits

/// The options every harness starts from: loopback, the fake web app, the real grace.
fn loopback_options() -> BridgeOptions {
    BridgeOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        assets: ASSETS,
        stop_when_done: false,
        stop_after_turn: false,
        page_gone_grace: PAGE_GONE_GRACE,
        journal: None,
    }
}

/// Japanese text `units` UTF-16 units long: 𠮷 (outside the BMP: 2 units, 4 bytes of UTF-8) and
/// あ for an odd unit.
fn japanese(units: usize) -> String {
    let mut text = "𠮷".repeat(units / 2);
    if units % 2 == 1 {
        text.push('あ');
    }
    text
}

/// `text` as a JSON string literal with every UTF-16 unit written as `\uXXXX`: the costliest
/// JSON a browser could send for it (6 bytes per unit).
fn escaped(text: &str) -> String {
    let mut json = String::with_capacity(text.len() * 6 + 2);
    json.push('"');
    for unit in text.encode_utf16() {
        json.push_str(&format!("\\u{unit:04x}"));
    }
    json.push('"');
    json
}

/// A `question_answer` written by hand: `answers` and `notes` as (index, JSON string literal).
fn raw_answer(tool_use_id: &str, answers: &[(usize, String)], notes: &[(usize, String)]) -> String {
    let map = |entries: &[(usize, String)]| {
        entries
            .iter()
            .map(|(index, value)| format!("\"{index}\":{value}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{{\"type\":\"question_answer\",\"tool_use_id\":\"{tool_use_id}\",\"answers\":{{{}}},\"notes\":{{{}}}}}",
        map(answers),
        map(notes)
    )
}

/// Sends `text` and expects an `error` that names `field` (and `question`, when given) as too
/// long; the connection and the question stay open.
fn assert_too_long(
    client: &mut Client,
    text: &str,
    tool_use_id: &str,
    field: &str,
    question: Option<usize>,
) {
    assert!(text.len() <= MAX_MESSAGE, "{} bytes is over the message limit", text.len());
    client.send_text(text);
    let error = client.recv();
    assert_eq!(error["type"], "error", "{}", clip_json(&error));
    assert_eq!(error["kind"], "too_long", "{}", clip_json(&error));
    assert_eq!(error["field"], field, "{}", clip_json(&error));
    assert_eq!(error["tool_use_id"], tool_use_id, "{}", clip_json(&error));
    assert_eq!(error.get("question").and_then(Value::as_u64), question.map(|q| q as u64));
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("characters long") && message.contains("the limit is"), "{message}");
}

fn clip_json(value: &Value) -> String {
    crate::support::clip(&value.to_string(), 300)
}

#[test]
fn a_maximal_japanese_answer_is_taken_and_one_character_over_is_refused_by_name() {
    use askpane::protocol::limits::{
        DECLINE_WORDING_ALLOWANCE, MAX_DECLINE_LENGTH, MAX_NOTES_LENGTH, MAX_REPLY_LENGTH,
        MAX_TOTAL_LENGTH,
    };
    let harness = Harness::start();
    let form = harness.ask("toolu_max_form");
    let reply = harness.ask("toolu_max_reply");
    let decline = harness.ask("toolu_max_decline");
    let mut client = harness.client();
    for id in ["toolu_max_form", "toolu_max_reply", "toolu_max_decline"] {
        client.recv_question(id);
    }
    let note = japanese(MAX_NOTES_LENGTH);
    let other = japanese(MAX_TOTAL_LENGTH - 3 * MAX_NOTES_LENGTH);
    let notes = |text: &str| (0..3).map(|q| (q, escaped(text))).collect::<Vec<_>>();
    let other_answer = |text: &str| vec![(2, escaped(&format!("other:{text}")))];

    // One character over, field by field: refused by name, the connection and question stay.
    let long_note =
        raw_answer("toolu_max_form", &[], &[(1, escaped(&japanese(MAX_NOTES_LENGTH + 1)))]);
    assert_too_long(&mut client, &long_note, "toolu_max_form", "note", Some(1));
    let long_answer =
        raw_answer("toolu_max_form", &other_answer(&japanese(MAX_TOTAL_LENGTH + 1)), &[]);
    assert_too_long(&mut client, &long_answer, "toolu_max_form", "answer", Some(2));
    let too_much =
        raw_answer("toolu_max_form", &other_answer(&format!("{other}あ")), &notes(&note));
    assert_too_long(&mut client, &too_much, "toolu_max_form", "total", None);
    let long_reply = format!(
        "{{\"type\":\"question_answer\",\"tool_use_id\":\"toolu_max_reply\",\"answers\":{{}},\"response\":{}}}",
        escaped(&japanese(MAX_REPLY_LENGTH + 1))
    );
    assert_too_long(&mut client, &long_reply, "toolu_max_reply", "reply", None);
    let decline_limit = MAX_DECLINE_LENGTH + DECLINE_WORDING_ALLOWANCE;
    let long_decline = format!(
        "{{\"type\":\"question_declined\",\"tool_use_id\":\"toolu_max_decline\",\"outcome\":\"declined\",\"message\":{}}}",
        escaped(&japanese(decline_limit + 1))
    );
    assert_too_long(&mut client, &long_decline, "toolu_max_decline", "decline_message", None);
    for asked in [&form, &reply, &decline] {
        asked.assert_open();
    }

    // Every field at its limit, in the costliest JSON: about three times the old 64 KiB limit.
    let maximal = raw_answer("toolu_max_form", &other_answer(&other), &notes(&note));
    assert!(maximal.len() > 3 * 64 * 1024, "{} bytes", maximal.len());
    client.send_text(&maximal);
    assert_eq!(client.recv_taken("toolu_max_form"), "answered");
    let outcome = form.outcome();
    let output = form.reply(&outcome)["hookSpecificOutput"].clone();
    assert_eq!(output["updatedInput"]["answers"][DATABASE], other.as_str());
    for question in [LAYOUT, FEATURES, DATABASE] {
        assert_eq!(output["updatedInput"]["annotations"][question]["notes"], note.as_str());
    }
    let maximal_reply = japanese(MAX_REPLY_LENGTH);
    client.send_text(&format!(
        "{{\"type\":\"question_answer\",\"tool_use_id\":\"toolu_max_reply\",\"answers\":{{}},\"response\":{}}}",
        escaped(&maximal_reply)
    ));
    assert_eq!(client.recv_taken("toolu_max_reply"), "replied");
    let Outcome::Replied(taken) = reply.outcome() else { panic!("a reply") };
    assert_eq!(taken.text(), maximal_reply);
    // A decline as the page sends it: the user's words at their limit, in askpane's wording.
    let words = japanese(MAX_DECLINE_LENGTH);
    let Outcome::Declined { message } = Outcome::declined(&words) else { panic!("a decline") };
    client.send_text(&format!(
        "{{\"type\":\"question_declined\",\"tool_use_id\":\"toolu_max_decline\",\"outcome\":\"declined\",\"message\":{}}}",
        escaped(&message)
    ));
    assert_eq!(client.recv_taken("toolu_max_decline"), "declined");
    assert_eq!(decline.outcome(), Outcome::Declined { message });
    drop(client);
    harness.finish();
}

#[test]
fn faults_close_with_their_own_codes_and_only_the_end_of_askpane_with_1000() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    // A text frame that is not UTF-8: 1007.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    let bad = Frame::message(vec![0xff_u8, 0xfe, b'x'], OpCode::Data(Data::Text), true);
    let _ = client.socket.send(Message::Frame(bad));
    assert_eq!(client.expect_close_frame().0, 1007);
    asked.assert_open();
    // A frame with a reserved bit set (no extension was agreed): 1002.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    let mut reserved = Frame::message(b"{}".to_vec(), OpCode::Data(Data::Text), true);
    reserved.header_mut().rsv1 = true;
    let _ = client.socket.send(Message::Frame(reserved));
    assert_eq!(client.expect_close_frame().0, 1002);
    asked.assert_open();
    // askpane ending is the one normal closure, and the page is told it is done.
    let mut client = harness.client();
    client.recv_question(TOOL_USE_ID);
    harness.bridge.stop();
    assert_eq!(client.expect_close_frame(), (1000, "askpane is done".to_owned()));
    assert_eq!(asked.outcome(), Outcome::closed());
    drop(client);
    harness.finish();
}

#[test]
fn a_timeout_too_large_to_add_leaves_no_backstop_and_never_panics() {
    for timeout in [u64::MAX, u64::MAX / 2] {
        let harness = Harness::start();
        let asked =
            harness.ask_with(TOOL_USE_ID, |request| request.policy.timeout_secs = Some(timeout));
        let mut client = harness.client();
        let question = client.recv_question(TOOL_USE_ID);
        assert_eq!(question["timeout_secs"], timeout, "{}", clip_json(&question));
        drop(client);
        thread::sleep(QUIET);
        // Pausing and extending it is fine too.
        let mut client = harness.client();
        client.recv_question(TOOL_USE_ID);
        client.send(&json!({"type": "timeout_extended", "tool_use_id": TOOL_USE_ID, "secs": 3600}));
        client.send(&json!({"type": "timeout_paused", "tool_use_id": TOOL_USE_ID}));
        client.assert_quiet();
        drop(client);
        harness.answer_to_prove_open(&asked);
        harness.finish();
    }
}

#[test]
fn when_the_last_page_is_gone_for_the_grace_its_questions_end_as_the_page_closed() {
    let grace = Duration::from_secs(1);
    let harness =
        Harness::start_bridge(&BridgeOptions { page_gone_grace: grace, ..loopback_options() });
    let asked = harness.ask(TOOL_USE_ID);
    // No page yet (the link may not be opened yet): the question waits.
    thread::sleep(grace * 2);
    asked.assert_open();
    // A reload within the grace keeps it; a connected page keeps it however long.
    let mut tab = harness.client();
    tab.recv_question(TOOL_USE_ID);
    tab.send(&json!({"type": "question_seen", "tool_use_id": TOOL_USE_ID}));
    drop(tab);
    thread::sleep(grace / 4);
    let mut reload = harness.client();
    reload.recv_question(TOOL_USE_ID);
    thread::sleep(grace * 2);
    asked.assert_open();
    // The last page goes and none returns: the agent hears the page was closed.
    drop(reload);
    let left = Instant::now();
    let outcome = asked.outcome.recv_timeout(grace + MESSAGE_WITHIN).unwrap_or_else(|_| {
        panic!("still waiting {:?} after the page went", grace + MESSAGE_WITHIN)
    });
    assert!(left.elapsed() >= grace / 2, "ended before the grace: {:?}", left.elapsed());
    assert_eq!(outcome, page_closed_outcome());
    let reply = asked.reply(&outcome);
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "deny", "{reply}");
    assert_eq!(reply["hookSpecificOutput"]["permissionDecisionReason"], PAGE_CLOSED_MESSAGE);
    // Issue 24 item 1: a question asked after the page left has been seen by nobody: it waits
    // for a page, however long, and is never declined for want of one.
    let late = harness.ask("toolu_late");
    thread::sleep(grace * 3);
    late.assert_open();
    harness.answer_to_prove_open(&late);
    harness.finish();
}

/// Issue 24 item 1: a page opened once and closed, then a question: nobody saw it, so it is held
/// until a page shows it. A page that only received it in the background (never drew it) has not
/// shown it either; once a page says it showed it, the page's going away counts again.
#[test]
fn a_question_no_page_has_shown_is_never_declined_for_a_missing_page() {
    let grace = Duration::from_millis(500);
    let harness =
        Harness::start_bridge(&BridgeOptions { page_gone_grace: grace, ..loopback_options() });
    let tab = harness.client();
    drop(tab);
    let asked = harness.ask(TOOL_USE_ID);
    thread::sleep(grace * 4);
    asked.assert_open();
    // A phone's background tab receives it and drops the connection without drawing it.
    let mut background = harness.client();
    background.recv_question(TOOL_USE_ID);
    drop(background);
    thread::sleep(grace * 4);
    asked.assert_open();
    // A page shows it, then goes: now the page was closed on it.
    let mut shown = harness.client();
    shown.recv_question(TOOL_USE_ID);
    shown.send(&json!({"type": "question_seen", "tool_use_id": TOOL_USE_ID}));
    shown.assert_quiet();
    drop(shown);
    let outcome = asked.outcome.recv_timeout(grace + MESSAGE_WITHIN).expect("ends once seen");
    assert_eq!(outcome, page_closed_outcome());
    harness.finish();
}

#[test]
fn a_page_pauses_or_extends_a_timeout_and_the_other_tabs_hear_of_it() {
    let harness = Harness::start();
    let one_second = |request: &mut Request| request.policy.timeout_secs = Some(1);
    let paused = harness.ask_with("toolu_paused", one_second);
    let extended = harness.ask_with("toolu_extended", one_second);
    let untimed = harness.ask("toolu_untimed");
    let mut a = harness.client();
    let mut b = harness.client();
    for tab in [&mut a, &mut b] {
        for id in ["toolu_paused", "toolu_extended", "toolu_untimed"] {
            tab.recv_question(id);
        }
    }
    a.send(&json!({"type": "timeout_paused", "tool_use_id": "toolu_paused"}));
    let changed = b.recv();
    assert_eq!(
        changed,
        json!({"type": "timeout_changed", "tool_use_id": "toolu_paused",
        "timeout_secs": null})
    );
    a.send(&json!({"type": "timeout_extended", "tool_use_id": "toolu_extended", "secs": 2}));
    let changed = b.recv();
    assert_eq!(changed["type"], "timeout_changed", "{changed}");
    assert_eq!(changed["tool_use_id"], "toolu_extended", "{changed}");
    let left = changed["timeout_secs"].as_u64().expect("seconds left");
    assert!((1..=3).contains(&left), "1 s given + 2 s added, some gone: {changed}");
    a.assert_quiet(); // The tab that changed it knows.

    // The extended question times out later, with the time given in all; the paused one not.
    let outcome = extended.outcome.recv_timeout(Duration::from_secs(8));
    assert_eq!(outcome.ok(), Some(Outcome::timed_out(3)));
    assert_eq!(a.recv_withdrawn("toolu_extended"), "timed_out");
    assert_eq!(b.recv_withdrawn("toolu_extended"), "timed_out");
    paused.assert_open();
    let mut reload = harness.client();
    let question = reload.recv_question("toolu_paused");
    assert!(question.get("timeout_secs").is_none(), "paused, so no countdown: {question}");
    reload.recv_question("toolu_untimed");

    let change = |kind: &str, id: &str, secs: Value| {
        let mut message = json!({"type": kind, "tool_use_id": id});
        if !secs.is_null() {
            message["secs"] = secs;
        }
        message
    };
    let refused = [
        (change("timeout_extended", "toolu_paused", json!(0)), "secs"),
        (change("timeout_extended", "toolu_paused", json!(3601)), "secs"),
        (change("timeout_extended", "toolu_paused", json!(-1)), "secs"),
        (change("timeout_extended", "toolu_paused", json!("5")), "secs"),
        (change("timeout_extended", "toolu_paused", Value::Null), "secs"),
        (change("timeout_paused", "toolu_untimed", Value::Null), "no --timeout"),
        (change("timeout_paused", "toolu_nope", Value::Null), "toolu_nope"),
    ];
    for (message, named) in refused {
        a.send(&message);
        let error = a.recv_error();
        assert!(error.contains(named), "sent {message}\n  error {error:?} does not name {named:?}");
    }
    b.assert_quiet();
    // Both are still open, and answerable.
    for asked in [&paused, &untimed] {
        asked.assert_open();
        a.send(&json!({"type": "question_answer", "tool_use_id": asked.tool_use_id,
            "answers": {"0": "1"}}));
        assert_eq!(a.recv_taken(&asked.tool_use_id), "answered");
        assert!(matches!(asked.outcome(), Outcome::Answered(_)));
    }
    drop((a, b, reload));
    harness.finish();
}

#[test]
fn connections_yet_to_send_a_request_have_a_small_cap_and_the_one_past_it_is_told_to_retry() {
    use askpane::transport::serve::MAX_WAITING_PER_PEER;
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    // Connections that never send a request hold their places (for a moment: a newer one may
    // take a place held a second).
    let idle: Vec<TcpStream> = (0..MAX_WAITING_PER_PEER).map(|_| connect(harness.port)).collect();
    let mut over = connect(harness.port);
    let (status, headers) = read_response_head(&mut over);
    let most = MAX_WAITING_PER_PEER;
    assert_eq!(status, 503, "connection {} of {most} from one address allowed", most + 1);
    let busy = Response { status, headers, body: read_to_close(&mut over) };
    assert_eq!(busy.body, b"too many connections; retry\n", "{busy:?}");
    assert_eq!(busy.header("content-length"), Some(busy.body.len().to_string().as_str()));
    drop((idle, over));
    // Their places free up as they close: the page gets in again.
    let deadline = Instant::now() + MESSAGE_WITHIN;
    loop {
        let mut stream = connect(harness.port);
        let head = request_head("GET", "/", &[("Host", &harness.host())]);
        if stream.write_all(head.as_bytes()).is_ok() && read_response_head(&mut stream).0 == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the page is still refused after the idle ones left");
        thread::sleep(Duration::from_millis(50));
    }
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

// --- Token-less connections never keep the page out (issue 24) -------------------------------

impl Harness {
    /// A browser tab on the page, or the refusal it got.
    fn try_client(&self) -> Result<Client, Response> {
        let (host, origin, protocols) = (self.host(), self.origin(), self.protocols());
        let headers =
            [("Host", host.as_str()), ("Origin", origin.as_str()), (PROTOCOL_HEADER, &protocols)];
        upgrade(self.port, &self.socket_path(), &headers)
    }

    /// A tab with the token that gets in within `within` (retrying what is refused).
    fn client_within(&self, within: Duration) -> Client {
        let deadline = Instant::now() + within;
        loop {
            match self.try_client() {
                Ok(client) => return client,
                Err(refused) => {
                    assert!(Instant::now() < deadline, "the page is kept out: {refused:?}");
                    thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }
}

/// A bridge serving a download big enough that a reader who stops holds its connection.
fn bridge_with_a_big_file() -> Harness {
    let big: &'static [u8] = Box::leak(vec![b'w'; 32 << 20].into_boxed_slice());
    let mut assets = ASSETS.to_vec();
    assets.push(Asset {
        path: "/app_bg.wasm",
        bytes: big,
        mime: "application/wasm",
        encoding: Encoding::Identity,
    });
    let assets: &'static [Asset] = Box::leak(assets.into_boxed_slice());
    Harness::start_bridge(&BridgeOptions { assets, ..loopback_options() })
}

/// Someone without the token holding connections: connects all the time from `source` (a
/// loopback address), sends nothing, and hangs up each connection after `hold`, so there are
/// always fresh ones waiting.
struct Flood {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<thread::JoinHandle<usize>>,
}

impl Flood {
    fn start(source: std::net::IpAddr, port: u16, hold: Duration) -> Flood {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let mut held = std::collections::VecDeque::new();
            let mut opened = 0;
            while !stopping.load(std::sync::atomic::Ordering::SeqCst) {
                if let Ok(stream) = connect_from(source, port) {
                    held.push_back((Instant::now(), stream));
                    opened += 1;
                }
                while held.front().is_some_and(|(at, _)| at.elapsed() >= hold) {
                    held.pop_front();
                }
                thread::sleep(Duration::from_millis(2));
            }
            opened
        });
        Flood { stop, thread: Some(thread) }
    }

    /// Stops it (every connection it holds is closed); returns how many it opened.
    fn stop(mut self) -> usize {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.take().map_or(0, |thread| thread.join().expect("the flood"))
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A TCP connection to the bridge on 127.0.0.1 from `source` (another loopback address is
/// another peer: Linux routes all of 127.0.0.0/8 to loopback).
fn connect_from(source: std::net::IpAddr, port: u16) -> std::io::Result<TcpStream> {
    #[cfg(target_os = "linux")]
    {
        use rustix::net::{AddressFamily, SocketType};
        let socket = rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None)?;
        rustix::net::bind(&socket, &SocketAddr::new(source, 0))?;
        rustix::net::connect(&socket, &SocketAddr::from(([127, 0, 0, 1], port)))?;
        Ok(TcpStream::from(socket))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = source;
        TcpStream::connect(("127.0.0.1", port))
    }
}

#[test]
fn token_less_connections_never_keep_a_page_with_the_token_out() {
    let harness = bridge_with_a_big_file();
    let asked = harness.ask(TOOL_USE_ID);
    let port = harness.port;
    // Anyone who can reach the port: connections that never send a request, upgrades without
    // the token, and downloads that stopped reading. All stay open on this side.
    let idle: Vec<TcpStream> = (0..200).map(|_| connect(port)).collect();
    let host = harness.host();
    let origin = harness.origin();
    let key = tungstenite::handshake::client::generate_key();
    let no_token = request_head(
        "GET",
        "/ws",
        &[
            ("Host", &host),
            ("Origin", &origin),
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", &key),
            (PROTOCOL_HEADER, "askpane"),
        ],
    );
    let download = request_head("GET", "/app_bg.wasm", &[("Host", &host)]);
    let mut held = Vec::new();
    for head in std::iter::repeat_n(&no_token, 30).chain(std::iter::repeat_n(&download, 12)) {
        let mut stream = connect(port);
        let _ = stream.write_all(head.as_bytes());
        held.push(stream);
    }
    // The page with the token gets in while they are all still there (within the time a
    // connection has to send its request), and its answer counts.
    let mut page = harness.client_within(Duration::from_secs(3));
    page.recv_question(TOOL_USE_ID);
    page.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    let outcome = asked.outcome();
    assert_eq!(asked.reply(&outcome)["hookSpecificOutput"]["permissionDecision"], "allow");
    page.recv_taken(TOOL_USE_ID);
    drop((idle, held));
    harness.finish();
}

#[test]
fn a_refused_reconnect_never_counts_as_the_page_gone() {
    let grace = Duration::from_secs(1);
    let harness =
        Harness::start_bridge(&BridgeOptions { page_gone_grace: grace, ..loopback_options() });
    let asked = harness.ask(TOOL_USE_ID);
    let mut tab = harness.client();
    tab.recv_question(TOOL_USE_ID);
    drop(tab);
    // The page is gone, and while it would reconnect the bridge turns connections away (always
    // fresh ones without the token, waiting to send a request): any of them may be the page.
    let flood = Flood::start([127, 0, 0, 1].into(), harness.port, Duration::from_millis(300));
    thread::sleep(grace * 3);
    let opened = flood.stop();
    assert!(opened > 50, "the flood opened only {opened} connections");
    asked.assert_open();
    // It comes back and answers.
    let mut page = harness.client_within(MESSAGE_WITHIN);
    page.recv_question(TOOL_USE_ID);
    page.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    assert!(matches!(asked.outcome(), Outcome::Answered(_)));
    harness.finish();
}

#[cfg(target_os = "linux")]
#[test]
fn a_flood_from_one_address_leaves_room_for_the_page_at_another() {
    let harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    // Someone at another address (a LAN peer under --lan) keeps connecting, and holds each
    // connection a while: soon every place they may hold is taken, and by fresh ones.
    let flood = Flood::start([127, 0, 0, 2].into(), harness.port, Duration::from_secs(3));
    // Past HEAD_PROMPTLY its oldest silent connections give way to its newer ones: from then on
    // its places are held by fresh ones, which is what the page must get past. The product
    // defines that moment; nothing outside it marks it.
    thread::sleep(askpane::transport::serve::HEAD_PROMPTLY + Duration::from_millis(500));
    // The page at its own address gets in at once, each time.
    for _ in 0..3 {
        let mut page = harness.try_client().unwrap_or_else(|refused| {
            panic!("the page was refused for another address's connections: {refused:?}")
        });
        page.recv_question(TOOL_USE_ID);
    }
    assert!(flood.stop() > 50);
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

#[test]
fn a_download_the_browser_stopped_reading_does_not_hold_up_the_end() {
    // Far more than the socket buffers hold, so the server is stuck writing it.
    let big: &'static [u8] = Box::leak(vec![b'w'; 32 << 20].into_boxed_slice());
    let mut assets = ASSETS.to_vec();
    assets.push(Asset {
        path: "/app_bg.wasm",
        bytes: big,
        mime: "application/wasm",
        encoding: Encoding::Identity,
    });
    let assets: &'static [Asset] = Box::leak(assets.into_boxed_slice());
    let mut harness = Harness::start_bridge(&BridgeOptions { assets, ..loopback_options() });
    let asked = harness.ask(TOOL_USE_ID);
    // Anyone can start the download (no token is needed for the files) and then stop reading.
    let mut stalled = connect(harness.port);
    let head = request_head("GET", "/app_bg.wasm", &[("Host", &harness.host())]);
    stalled.write_all(head.as_bytes()).expect("ask for the wasm");
    // The download has begun (its head came), and nothing more is read.
    assert_eq!(read_response_head(&mut stalled).0, 200);
    // The answer goes to the agent first; then the bridge ends within about a second.
    harness.answer_to_prove_open(&asked);
    harness.bridge.stop();
    harness.to_bridge = None;
    let threads = harness.threads.take().expect("the threads");
    join_bounded(threads, Duration::from_secs(3));
    drop(stalled);
}

/// The host and port of a link, `http://HOST:PORT/#token=…`.
fn link_host(url: &str) -> &str {
    url.strip_prefix("http://").and_then(|rest| rest.split_once('/')).map_or("", |(host, _)| host)
}

#[test]
fn an_exposed_bind_serves_and_links_only_this_machines_addresses() {
    let bind = SocketAddr::from(([0, 0, 0, 0], 0));
    let harness = Harness::start_bridge(&BridgeOptions { bind, ..loopback_options() });
    let asked = harness.ask(TOOL_USE_ID);
    let urls = harness.bridge.urls();
    assert!(urls.iter().all(|url| !url.contains("0.0.0.0")), "{urls:?}");
    assert!(urls.first().is_some_and(|url| url.starts_with("http://127.0.0.1:")), "{urls:?}");
    let protocols = harness.protocols();
    for url in &urls {
        let host = link_host(url);
        assert!(url.ends_with(&format!("/#token={}", harness.token)), "{url}");
        let address: SocketAddr = host.parse().unwrap_or_else(|_| panic!("{url}"));
        let mut stream = TcpStream::connect(address).expect("each link's address is served");
        stream.set_read_timeout(Some(MESSAGE_WITHIN)).expect("a timeout");
        stream.write_all(request_head("GET", "/", &[("Host", host)]).as_bytes()).expect("a GET");
        assert_eq!(read_response_head(&mut stream).0, 200, "GET / at {url}");
        let origin = format!("http://{host}");
        let headers = [("Host", host), ("Origin", origin.as_str()), (PROTOCOL_HEADER, &protocols)];
        drop(upgrade(harness.port, "/ws", &headers).unwrap_or_else(|r| panic!("{url}: {r:?}")));
    }
    // Any other address on the port (what a rebinding page or another site could send) is not
    // this page: refused as Host and as Origin.
    let port = harness.port;
    for other in ["192.0.2.1", "10.255.255.254", "0.0.0.0", "127.0.0.2"] {
        let host = format!("{other}:{port}");
        if urls.iter().any(|url| link_host(url) == host) {
            continue; // This machine really has that address.
        }
        let page = http(port, "GET", "/", &[("Host", &host)]);
        assert_eq!(page.status, 403, "Host {host}: {page:?}");
        let origin = format!("http://{host}");
        let (own_host, protocols) = (harness.host(), harness.protocols());
        let headers =
            [("Host", own_host.as_str()), ("Origin", &origin), (PROTOCOL_HEADER, &protocols)];
        assert_refused(port, "/ws", &headers, 403);
    }
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

// --- The binary, under the conditions of the issue -----------------------------------------

/// `askpane ask --ui web <hook input>` (through `wrapper`, a command that ends by exec'ing the
/// rest of its arguments, so the PID stays askpane's), its link read off stderr.
struct WebRun {
    process: Process,
    port: u16,
    token: String,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    /// The stderr lines read so far.
    seen: Vec<String>,
}

impl WebRun {
    /// `None` when askpane was built without its web app (scripts/build-web): nothing to serve.
    fn start(wrapper: &[&str], extra: &[&str]) -> Option<WebRun> {
        if !crate::support::web_bundle_built() {
            eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
            return None;
        }
        let file = fixture_path(HOOK_INPUT);
        let mut args: Vec<&str> = vec!["ask", "--ui", "web"];
        args.extend_from_slice(extra);
        args.push(&file);
        let askpane = crate::support::askpane(&args);
        let command = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut command = std::process::Command::new(program);
                command.args(rest).arg(askpane.get_program()).args(askpane.get_args());
                for (name, value) in askpane.get_envs() {
                    match value {
                        Some(value) => command.env(name, value),
                        None => command.env_remove(name),
                    };
                }
                command
            }
            None => askpane,
        };
        Some(WebRun::launch(command))
    }

    /// Runs `command` (an askpane serving the page) and reads its link off stderr.
    fn launch(mut command: std::process::Command) -> WebRun {
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = Process::new(command.spawn().expect("run askpane"));
        let stdout = read_all(process.child.stdout.take().expect("piped stdout"));
        let stderr_pipe = BufReader::new(process.child.stderr.take().expect("piped stderr"));
        let (lines_sender, stderr) = mpsc::channel();
        thread::spawn(move || {
            for line in stderr_pipe.lines().map_while(Result::ok) {
                let _ = lines_sender.send(line);
            }
        });
        let mut run =
            WebRun { process, port: 0, token: String::new(), stdout, stderr, seen: Vec::new() };
        let url = run.line_after("askpane: answer in your browser: ");
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{url}"));
        let (port, token) = rest.split_once("/#token=").unwrap_or_else(|| panic!("{url}"));
        run.port = port.parse().unwrap_or_else(|_| panic!("{url}"));
        run.token = token.to_owned();
        run
    }

    /// The rest of the next stderr line starting with `prefix`, within [`WAIT`].
    fn line_after(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.stderr.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no {prefix:?} on stderr within {WAIT:?}: {:?}", self.seen)
            });
            self.seen.push(line.clone());
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_owned();
            }
        }
    }

    fn client(&self) -> Result<Client, Response> {
        let (host, origin) =
            (format!("127.0.0.1:{}", self.port), format!("http://127.0.0.1:{}", self.port));
        let protocols = token_protocols(&self.token);
        upgrade(
            self.port,
            "/ws",
            &[("Host", &host), ("Origin", &origin), (PROTOCOL_HEADER, &protocols)],
        )
    }

    /// Waits until askpane runs `count` threads (`/proc/PID/task`), within [`WAIT`].
    fn wait_for_threads(&self, count: usize) {
        let tasks = format!("/proc/{}/task", self.process.child.id());
        let deadline = Instant::now() + WAIT;
        loop {
            let running = std::fs::read_dir(&tasks).map_or(0, Iterator::count);
            if running >= count {
                return;
            }
            assert!(Instant::now() < deadline, "{running} threads, not {count}: {:?}", self.seen);
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// CPU time askpane has used so far, in clock ticks (utime + stime of /proc/PID/stat).
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.process.child.id()))
            .expect("askpane's /proc stat");
        let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        // State is field 3 of the file, so utime (14) and stime (15) are 11 and 12 here.
        let tick =
            |index: usize| fields.get(index).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        tick(11) + tick(12)
    }

    /// Answers through a new client (retrying while the bridge is busy), then waits for the exit.
    fn answer_and_finish(mut self) -> (std::process::ExitStatus, String, Vec<String>) {
        let deadline = Instant::now() + WAIT;
        let mut client = loop {
            match self.client() {
                Ok(client) => break client,
                Err(refused) => {
                    assert!(Instant::now() < deadline, "the page never got in: {refused:?}");
                    thread::sleep(Duration::from_millis(200));
                }
            }
        };
        client.recv_question(TOOL_USE_ID);
        client.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
            "answers": {"0": "2"}}));
        client.recv_taken(TOOL_USE_ID);
        let status = self.process.wait(WAIT);
        drop(client);
        let stdout = collect(std::mem::replace(&mut self.stdout, mpsc::channel().1));
        self.seen.extend(self.stderr.try_iter());
        let status =
            status.unwrap_or_else(|| panic!("askpane still runs: {stdout} {:?}", self.seen));
        (status, stdout, self.seen)
    }
}

/// Asserts a run answered through the browser: exit 0, the answer on stdout.
fn assert_answered(status: std::process::ExitStatus, stdout: &str, stderr: &[String]) {
    assert_eq!(status.code(), Some(0), "stdout {stdout}\nstderr {stderr:?}");
    let reply: Value =
        serde_json::from_str(stdout.trim_end()).unwrap_or_else(|_| panic!("{stdout}"));
    assert_eq!(reply["hookSpecificOutput"]["updatedInput"]["answers"], json!({LAYOUT: "Tabs"}));
    assert!(!stderr.iter().any(|line| line.contains("writing the reply")), "{stderr:?}");
}

/// CPU askpane uses over `span` while nothing is asked of it, as a share of one core.
fn cpu_share(run: &WebRun, span: Duration) -> f64 {
    // Clock ticks are 1/100 s on Linux (USER_HZ).
    let before = run.cpu_ticks();
    thread::sleep(span);
    (run.cpu_ticks() - before) as f64 / 100.0 / span.as_secs_f64()
}

#[test]
fn out_of_file_descriptors_the_listener_backs_off_and_keeps_serving() {
    // askpane needs 6 descriptors to serve; 16 leave room for a few connections only.
    let Some(mut run) = WebRun::start(&["sh", "-c", "ulimit -n 16 && exec \"$@\"", "sh"], &[])
    else {
        return;
    };
    let idle: Vec<TcpStream> = (0..12).map(|_| connect(run.port)).collect();
    // Not an event to wait for but the start of a measurement: the work of taking them in is
    // left out of the span measured.
    thread::sleep(Duration::from_millis(300));
    let share = cpu_share(&run, Duration::from_millis(1500));
    assert!(share < 0.5, "askpane spins at {:.0} % of a core on EMFILE", share * 100.0);
    assert!(run.process.exited().is_none(), "askpane ended: {:?}", run.seen);
    drop(idle);
    let (status, stdout, stderr) = run.answer_and_finish();
    assert_answered(status, &stdout, &stderr);
}

#[test]
fn idle_connections_cost_no_cpu() {
    let Some(run) = WebRun::start(&[], &[]) else { return };
    // A browser's speculative connections, a scanner: connections that never send anything.
    let idle: Vec<TcpStream> =
        (0..600).filter_map(|_| TcpStream::connect(("127.0.0.1", run.port)).ok()).collect();
    assert!(idle.len() > 500, "only {} connections", idle.len());
    // As above: taking them in is left out of the span measured.
    thread::sleep(Duration::from_millis(500));
    let share = cpu_share(&run, Duration::from_secs(2));
    assert!(share < 0.1, "{} idle connections cost {:.0} % of a core", idle.len(), share * 100.0);
    drop(idle);
    let (status, stdout, stderr) = run.answer_and_finish();
    assert_answered(status, &stdout, &stderr);
}

#[test]
fn a_thread_that_cannot_be_started_costs_one_connection_not_the_bridge() {
    // Thread limits bind only other users than root: run askpane as nobody with room for its
    // own five threads (main, reply-writer, signal-watch, web-hub, web-accept) and one
    // connection's.
    let root =
        std::process::Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout == b"0\n");
    if !root || !std::path::Path::new("/usr/bin/setpriv").exists() {
        eprintln!(
            "skipped: needs root and setpriv to run askpane as another user with a thread limit"
        );
        return;
    }
    let others =
        std::process::Command::new("ps").args(["-L", "-u", "65534", "--no-headers"]).output();
    let others = others.map_or(0, |out| out.stdout.iter().filter(|&&b| b == b'\n').count());
    let limit = format!("--nproc={}", others + 6);
    let wrapper = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--",
        "prlimit",
        &limit,
        "--",
    ];
    let Some(mut run) = WebRun::start(&wrapper, &[]) else { return };
    let held = connect(run.port); // Its thread is the last one allowed.
    run.wait_for_threads(6);
    let mut refused = connect(run.port);
    let mut byte = [0_u8; 1];
    let read = refused.read(&mut byte);
    assert!(matches!(read, Ok(0) | Err(_)), "the connection without a thread was served: {read:?}");
    let complaint = run.line_after("askpane: the browser bridge could not start a thread");
    assert!(!complaint.is_empty(), "{:?}", run.seen);
    assert!(run.process.exited().is_none(), "askpane ended: {:?}", run.seen);
    drop((held, refused));
    let (status, stdout, stderr) = run.answer_and_finish();
    assert_answered(status, &stdout, &stderr);
    assert!(!stdout.contains(CLOSED_MESSAGE), "an invented 'window closed': {stdout}");
}

#[test]
fn an_exposed_bind_prints_a_usable_link_per_address() {
    let Some(mut run) = WebRun::start(&[], &["--bind", "0.0.0.0:0"]) else { return };
    thread::sleep(QUIET);
    run.seen.extend(run.stderr.try_iter());
    let links: Vec<&String> = run.seen.iter().filter(|line| line.contains("#token=")).collect();
    assert!(!links.is_empty(), "{:?}", run.seen);
    assert!(links.iter().all(|line| !line.contains("0.0.0.0")), "{links:?}");
    assert!(
        run.seen.iter().any(|line| line.contains("warning: the page listens on 0.0.0.0")),
        "{:?}",
        run.seen
    );
    let (status, stdout, stderr) = run.answer_and_finish();
    assert_answered(status, &stdout, &stderr);
}

// ---------------------------------------------------------------------------------------------
// Issue 11: the agent session in the browser (`askpane claude --ui web`)

const SESSION_PROMPT: &str = "Fix the failing test.";

/// Loopback options for a session bridge: it ends with the agent (`stop_after_turn`), pages
/// gone for `grace` end it once the turn is over.
fn session_options(grace: Duration) -> BridgeOptions {
    BridgeOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        assets: ASSETS,
        stop_when_done: false,
        stop_after_turn: true,
        page_gone_grace: grace,
        journal: None,
    }
}

/// A CLI line (stream-json) as the session event the claude transport sends.
fn cli_event(line: Value) -> Inbound {
    let message = askpane::protocol::stream::parse_cli_line(&line);
    Inbound::Session(SessionInbound::Event(Box::new(SessionEvent::Message(message))))
}

/// Claude asking to run `command` with Bash, as request `request_id`; where the decision arrives.
fn bash_permission(
    request_id: &str,
    command: &str,
) -> (Inbound, Receiver<askpane::protocol::stream::PermissionDecision>) {
    let request = askpane::protocol::stream::PermissionRequest {
        request_id: request_id.to_owned(),
        tool_name: "Bash".to_owned(),
        input: json!({"command": command}),
        tool_use_id: Some(format!("toolu_{request_id}")),
        title: None,
        description: Some("Run it".to_owned()),
        reason: None,
        agent_id: None,
        ..Default::default()
    };
    let (reply, decision) = Responder::channel();
    let provenance = Provenance::new("claude", Some("shop".to_owned()));
    let ask = PermissionAsk { id: RequestId::next(), request, provenance, reply };
    (Inbound::Approval(ApprovalEvent::Permission(Box::new(ask))), decision)
}

/// The `permission_request` a page gets for [`bash_permission`].
fn bash_card(request_id: &str, command: &str) -> Value {
    json!({"type": "permission_request", "request": {"request_id": request_id,
        "tool_name": "Bash", "input": {"command": command},
        "tool_use_id": format!("toolu_{request_id}"), "title": null, "description": "Run it",
        "reason": null, "agent_id": null}, "source": "claude · shop", "agent": "claude"})
}

fn card_gone(request_id: &str, reason: &str) -> Value {
    json!({"type": "permission_withdrawn", "request_id": request_id, "reason": reason})
}

#[test]
fn a_carried_session_reaches_every_page_and_a_card_decided_in_one_leaves_all() {
    let (harness, _commands) =
        Harness::start_session(&session_options(PAGE_GONE_GRACE), SESSION_PROMPT);
    let mut first = harness.client();
    assert_eq!(
        first.recv(),
        json!({"type": "session", "from": 0, "entries": [{"kind": "user", "body": SESSION_PROMPT}],
            "info": null, "busy": true, "ended": null})
    );
    assert_eq!(first.recv(), json!({"type": "permissions_open", "request_ids": []}));
    harness.sender().send(cli_event(json!({"type": "assistant", "message": {"role": "assistant",
        "content": [{"type": "text", "text": "Running the tests."}]}})));
    assert_eq!(
        first.recv(),
        json!({"type": "session", "from": 1,
            "entries": [{"kind": "assistant", "body": "Running the tests."}],
            "info": null, "busy": true, "ended": null})
    );
    let (card, decision) = bash_permission("perm-1", "cargo test");
    harness.sender().send(card);
    assert_eq!(first.recv(), bash_card("perm-1", "cargo test"));
    // A page that comes later gets the whole transcript, the card, and which cards are open.
    let mut second = harness.client();
    let session = second.recv();
    assert_eq!((session["type"].as_str(), &session["from"]), (Some("session"), &json!(0)));
    assert_eq!(session["entries"].as_array().map(Vec::len), Some(2), "{session}");
    assert_eq!(second.recv(), bash_card("perm-1", "cargo test"));
    assert_eq!(second.recv(), json!({"type": "permissions_open", "request_ids": ["perm-1"]}));
    // Nothing is decided until a page decides.
    thread::sleep(QUIET);
    assert!(decision.try_recv().is_err(), "decided without a page");
    first
        .send(&json!({"type": "permission_decision", "request_id": "perm-1", "decision": "allow"}));
    assert_eq!(
        decision.recv_timeout(MESSAGE_WITHIN),
        Ok(askpane::protocol::stream::PermissionDecision::AllowOnce)
    );
    assert_eq!(first.recv(), card_gone("perm-1", "allowed"));
    assert_eq!(second.recv(), card_gone("perm-1", "allowed"));
    // A second decision on it (the other page, too late) counts for nothing, and says so.
    second.send(&json!({"type": "permission_decision", "request_id": "perm-1", "decision": "deny",
        "message": "no"}));
    assert_eq!(
        second.recv(),
        json!({"type": "error", "tool_use_id": null, "kind": "not_open",
            "message": "no tool permission is waiting with request_id \"perm-1\""})
    );
    first.assert_quiet();
    drop((first, second));
    harness.finish();
}

#[test]
fn a_denial_carries_the_pages_words_and_a_card_the_agent_withdrew_leaves_every_page() {
    let (harness, _commands) =
        Harness::start_session(&session_options(PAGE_GONE_GRACE), SESSION_PROMPT);
    let mut page = harness.client();
    page.recv();
    page.recv();
    let (card, denied) = bash_permission("perm-2", "rm -rf target");
    harness.sender().send(card);
    assert_eq!(page.recv(), bash_card("perm-2", "rm -rf target"));
    let words = "The user denied this tool call and said: use cargo clean";
    page.send(&json!({"type": "permission_decision", "request_id": "perm-2", "decision": "deny",
        "message": words}));
    assert_eq!(
        denied.recv_timeout(MESSAGE_WITHIN),
        Ok(askpane::protocol::stream::PermissionDecision::Deny { message: words.to_owned() })
    );
    assert_eq!(page.recv(), card_gone("perm-2", "denied"));
    let (card, withdrawn) = bash_permission("perm-3", "cargo build");
    harness.sender().send(card);
    assert_eq!(page.recv(), bash_card("perm-3", "cargo build"));
    harness.sender().send(Inbound::Approval(ApprovalEvent::WithdrawPermission {
        request_id: "perm-3".to_owned(),
    }));
    assert_eq!(page.recv(), card_gone("perm-3", "withdrawn"));
    assert_eq!(
        withdrawn.recv_timeout(MESSAGE_WITHIN),
        Ok(askpane::protocol::stream::PermissionDecision::Deny {
            message: "Withdrawn by the agent.".to_owned()
        })
    );
    // A malformed decision is refused by name.
    page.send(&json!({"type": "permission_decision", "request_id": "perm-9", "decision": "maybe"}));
    assert_eq!(
        page.recv_error(),
        "a permission decision must be allow, allow_always, deny or hand_back, not \"maybe\""
    );
    drop(page);
    harness.finish();
}

/// Issue 25: a tool call asked again under the same request_id (an agent that re-sends it) is
/// one card, and the page's decision reaches both who wait (a second card had appeared, and the
/// second asker heard nothing until the bridge ended).
#[test]
fn a_tool_call_asked_twice_is_one_card_and_both_askers_hear_the_pages_decision() {
    let (harness, _commands) =
        Harness::start_session(&session_options(PAGE_GONE_GRACE), SESSION_PROMPT);
    let mut page = harness.client();
    page.recv();
    page.recv();
    let (card, first) = bash_permission("perm-7", "cargo test");
    harness.sender().send(card);
    assert_eq!(page.recv(), bash_card("perm-7", "cargo test"));
    let (again, second) = bash_permission("perm-7", "cargo test");
    harness.sender().send(again);
    page.send(&json!({"type": "permission_decision", "request_id": "perm-7", "decision": "allow"}));
    assert_eq!(page.recv(), card_gone("perm-7", "allowed"), "one card, decided once");
    for decision in [first, second] {
        assert_eq!(
            decision.recv_timeout(MESSAGE_WITHIN),
            Ok(askpane::protocol::stream::PermissionDecision::AllowOnce)
        );
    }
    page.assert_quiet();
    drop(page);
    harness.finish();
}

#[test]
fn a_card_waits_while_no_page_is_open_and_the_bridges_end_denies_it_honestly() {
    let grace = Duration::from_millis(300);
    let (harness, _commands) = Harness::start_session(&session_options(grace), SESSION_PROMPT);
    let (card, decision) = bash_permission("perm-4", "cargo test");
    harness.sender().send(card);
    // No page yet: it waits; a page comes and goes: it still waits, well past the grace, and
    // the bridge does not end (the card is open).
    thread::sleep(QUIET);
    let mut page = harness.client();
    page.recv();
    assert_eq!(page.recv(), bash_card("perm-4", "cargo test"));
    drop(page);
    assert!(!waits_within(&harness.bridge, grace * 3), "ended with a card open");
    assert!(decision.try_recv().is_err(), "decided without a page");
    harness.finish();
    assert_eq!(
        decision.recv_timeout(MESSAGE_WITHIN),
        Ok(askpane::protocol::stream::PermissionDecision::Deny {
            message: "askpane's browser bridge ended before the user decided on this tool call."
                .to_owned()
        })
    );
}

#[test]
fn prompts_and_stop_from_a_page_go_to_the_agent_and_the_turns_end_does_not_end_the_bridge() {
    let grace = Duration::from_millis(300);
    let (mut harness, commands) = Harness::start_session(&session_options(grace), SESSION_PROMPT);
    let mut page = harness.client();
    page.recv();
    page.recv();
    page.send(&json!({"type": "session_stop"}));
    assert_eq!(commands.recv_timeout(MESSAGE_WITHIN), Ok(SessionCommand::Interrupt));
    harness.sender().send(cli_event(json!({"type": "result", "subtype": "success",
        "is_error": false, "num_turns": 1, "duration_ms": 1500, "result": "Done."})));
    let ended = page.recv();
    assert_eq!((ended["from"].as_u64(), &ended["busy"]), (Some(1), &json!(false)), "{ended}");
    assert_eq!(ended["entries"][0]["kind"], "turn_ended", "{ended}");
    assert_eq!(ended["entries"][0]["body"]["duration_ms"], 1500, "{ended}");
    // The turn is over, and a page is there to type the next one: the bridge goes on.
    assert!(!waits_within(&harness.bridge, QUIET), "ended with the turn");
    // Stop with no turn running does nothing.
    page.send(&json!({"type": "session_stop"}));
    page.send(&json!({"type": "session_prompt", "text": "  "}));
    assert_eq!(page.recv_error(), "a prompt must have some text");
    page.send(&json!({"type": "session_prompt", "text": "Now update the docs."}));
    assert_eq!(
        commands.recv_timeout(MESSAGE_WITHIN),
        Ok(SessionCommand::UserTurn("Now update the docs.".to_owned()))
    );
    assert_eq!(
        page.recv(),
        json!({"type": "session", "from": 2,
            "entries": [{"kind": "user", "body": "Now update the docs."}],
            "info": null, "busy": true, "ended": null})
    );
    harness.sender().send(cli_event(json!({"type": "result", "subtype": "success",
        "is_error": false, "num_turns": 1, "duration_ms": 10})));
    page.recv();
    assert!(commands.try_recv().is_err(), "a Stop with no turn running was sent");
    // The last page goes, the turn is over, nothing waits: after the grace the bridge ends.
    drop(page);
    assert!(waits_within(&harness.bridge, MESSAGE_WITHIN), "still running with no page");
    harness.to_bridge = None;
    let threads = harness.threads.take().expect("the threads");
    join_bounded(threads, JOIN_WITHIN);
}

#[test]
fn a_bridge_without_a_session_denies_tool_calls_at_once_and_takes_no_prompts() {
    let harness = Harness::start();
    let mut page = harness.client();
    let (card, decision) = bash_permission("perm-5", "cargo test");
    harness.sender().send(card);
    assert_eq!(
        decision.recv_timeout(MESSAGE_WITHIN),
        Ok(askpane::protocol::stream::PermissionDecision::Deny {
            message: "askpane's browser page here shows questions only and cannot approve tool \
                      calls; allow them with --allow-tools."
                .to_owned()
        })
    );
    page.send(&json!({"type": "session_prompt", "text": "hello"}));
    assert_eq!(page.recv_error(), "this askpane runs no agent session to prompt or stop");
    page.assert_quiet();
    drop(page);
    harness.finish();
}

/// Issue 26: a `PermissionRequest` hook's card (`askpane hook` through `askpane inbox --ui web`)
/// as the inbox's hub gets it, with one suggestion: the hook's origin says so.
#[cfg(target_os = "linux")]
fn hook_permission(
    request_id: &str,
) -> (Inbound, Receiver<askpane::protocol::stream::PermissionDecision>, Value) {
    let suggestion = json!({"type": "addRules", "rules": [{"toolName": "Bash",
        "ruleContent": "npm test *"}], "behavior": "allow", "destination": "localSettings"});
    let (inbound, decision) = bash_permission(request_id, "npm test");
    let Inbound::Approval(ApprovalEvent::Permission(mut ask)) = inbound else { unreachable!() };
    ask.request.origin = askpane::protocol::permission::ApprovalOrigin::Hook;
    ask.request.suggestions = vec![serde_json::from_value(suggestion.clone()).unwrap()];
    (Inbound::Approval(ApprovalEvent::Permission(ask)), decision, suggestion)
}

/// Issue 26: the inbox's page (a bridge that carries no agent session of its own, and no
/// hosted one yet) shows a hook's approval card rather than denying it at once; Allow once,
/// Always (the agent's suggestion, as given), Deny with words and Answer in the terminal each
/// reach the hook, and the card leaves every page. A forged rule (one the agent did not
/// suggest) decides nothing, and the card stays open; a hosted session's card is still denied
/// at once where no session is shown.
#[cfg(target_os = "linux")]
#[test]
fn a_hook_card_waits_for_the_inbox_page_and_only_an_offered_decision_decides_it() {
    use askpane::protocol::stream::PermissionDecision;
    let harness = Harness::start();
    let mut page = harness.client();
    let (card, decision, suggestion) = hook_permission("inbox-1-a");
    harness.sender().send(card);
    let shown = recv_kind(&mut page, "permission_request");
    // Both orders are right: the hub took the page in before the card came (the card is
    // broadcast to it), or after (the page's catch-up is the card, then the cards open).
    let mut caught_up = false;
    assert_eq!(shown["request"]["origin"], "hook", "{shown}");
    assert_eq!(shown["request"]["suggestions"], json!([suggestion]), "{shown}");
    thread::sleep(QUIET);
    assert!(decision.try_recv().is_err(), "decided without a page");

    // A rule the agent did not suggest (a wider one) decides nothing, and says why.
    let forged = json!({"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow",
        "destination": "userSettings"});
    page.send(&json!({"type": "permission_decision", "request_id": "inbox-1-a",
        "decision": "allow_always", "suggestion": forged}));
    let mut next = page.recv();
    if next["type"] == "permissions_open" {
        assert_eq!(next["request_ids"], json!(["inbox-1-a"]), "{next}");
        (caught_up, next) = (true, page.recv());
    }
    assert_eq!(next["type"], "error", "expected an error (caught up: {caught_up}): {next}");
    assert_eq!(
        next["message"],
        "tool permission \"inbox-1-a\" does not offer that decision (a rule the agent did not \
         suggest, or nowhere to hand it back to)"
    );
    assert!(decision.try_recv().is_err(), "a forged rule decided the card");
    // A page that connects now gets the card, and which cards are open.
    let mut second = harness.client();
    assert_eq!(recv_kind(&mut second, "permission_request"), shown);
    assert_eq!(second.recv(), json!({"type": "permissions_open", "request_ids": ["inbox-1-a"]}));

    page.send(&json!({"type": "permission_decision", "request_id": "inbox-1-a",
        "decision": "allow_always", "suggestion": suggestion}));
    let Ok(PermissionDecision::AllowAlways { suggestion: given }) =
        decision.recv_timeout(MESSAGE_WITHIN)
    else {
        panic!("no allow_always reached the hook");
    };
    assert_eq!(serde_json::to_value(&given).unwrap(), suggestion);
    assert_eq!(page.recv(), card_gone("inbox-1-a", "allowed"));
    assert_eq!(second.recv(), card_gone("inbox-1-a", "allowed"));

    // Answer in the terminal: the hook hears no decision; the card leaves both pages.
    let (card, decision, _) = hook_permission("inbox-1-b");
    harness.sender().send(card);
    recv_kind(&mut page, "permission_request");
    recv_kind(&mut second, "permission_request");
    second.send(&json!({"type": "permission_decision", "request_id": "inbox-1-b",
        "decision": "hand_back"}));
    assert_eq!(decision.recv_timeout(MESSAGE_WITHIN), Ok(PermissionDecision::HandBack));
    assert_eq!(page.recv(), card_gone("inbox-1-b", "handed_back"));
    assert_eq!(second.recv(), card_gone("inbox-1-b", "handed_back"));

    // A hosted session's card still has nowhere to hand back to, here as in the window: a
    // bridge without a session denies it at once, as before.
    let (card, decision) = bash_permission("perm-6", "cargo test");
    harness.sender().send(card);
    assert!(
        matches!(decision.recv_timeout(MESSAGE_WITHIN), Ok(PermissionDecision::Deny { .. })),
        "a hosted card without a session is denied at once"
    );
    page.assert_quiet();
    drop((page, second));
    harness.finish();
}

/// The fake Claude Code CLI the claude host tests use (tests/fake-claude).
const FAKE_CLAUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake-claude/fake_claude.py");

/// A page's view of the session: every `session` message applied as the page applies it.
#[derive(Default)]
struct PageTranscript {
    entries: Vec<Value>,
    busy: bool,
}

impl PageTranscript {
    fn apply(&mut self, message: &Value) {
        let from = message["from"].as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        self.entries.truncate(from);
        self.entries.extend(message["entries"].as_array().into_iter().flatten().cloned());
        self.busy = message["busy"] == true;
    }

    fn kinds(&self) -> Vec<&str> {
        self.entries.iter().map(|entry| entry["kind"].as_str().unwrap_or("?")).collect()
    }
}

/// Reads messages into `transcript` until `done` says so; returns the message that did.
fn recv_until(
    client: &mut Client,
    transcript: &mut PageTranscript,
    what: &str,
    done: impl Fn(&Value, &PageTranscript) -> bool,
) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "never saw {what}: {:?}", transcript.kinds());
        let message = client.recv();
        if message["type"] == "session" {
            transcript.apply(&message);
        }
        if done(&message, transcript) {
            return message;
        }
    }
}

/// `askpane claude --ui web` with the fake Claude Code: the page sees the transcript, allows the
/// tool call Claude asks for (the CLI gets exactly the allow the native window sends), sees the
/// tool's result, types a second prompt (the CLI gets it as the next user turn), and askpane
/// ends with Claude Code, exit 0.
#[test]
fn askpane_claude_in_the_browser_shows_the_transcript_takes_a_tool_decision_and_a_prompt() {
    if !crate::support::web_bundle_built() {
        eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
        return;
    }
    let dir = crate::support::scratch_dir("bridge-claude-session");
    let mut records =
        crate::support::fixture_lines("session.answer-with-notes.2.1.330.replay.jsonl");
    let init = records
        .iter()
        .position(|record| record["line"]["subtype"] == "init")
        .expect("the capture has system/init");
    records.truncate(init + 1);
    let cli = |line: Value| json!({"dir": "<<", "line": line});
    let host = |line: Value| json!({"dir": ">>", "line": line});
    let input = json!({"command": "cargo test", "description": "Run the tests"});
    let allowed = json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": "perm-1", "response": {"behavior": "allow", "updatedInput": input,
        "toolUseID": "toolu_bash_1"}}});
    let result = json!({"type": "result", "subtype": "success", "is_error": false,
        "num_turns": 2, "duration_ms": 120, "result": "Done."});
    records.extend([
        cli(json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_bash_1", "name": "Bash", "input": input}]}})),
        cli(json!({"type": "control_request", "request_id": "perm-1", "request": {
            "subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash",
            "input": input, "tool_use_id": "toolu_bash_1"}})),
        host(allowed.clone()),
        cli(json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": "test result: ok. 3 passed", "is_error": false,
             "tool_use_id": "toolu_bash_1"}]}})),
        cli(result.clone()),
        host(json!({"type": "user", "message": {"role": "user", "content": "Now the docs."}})),
        cli(json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Docs updated."}]}})),
        cli(result),
        json!({"dir": "die", "line": 0}),
    ]);
    let transcript: String = records.iter().map(|record| format!("{record}\n")).collect();
    let transcript_path = dir.join("transcript.jsonl");
    std::fs::write(&transcript_path, transcript).expect("write the transcript");
    let report_path = dir.join("report.json");
    let mut command = crate::support::askpane(&[
        "claude",
        "--claude-bin",
        FAKE_CLAUDE,
        "-p",
        "Please run the tests.",
        "--ui",
        "web",
    ]);
    command
        .current_dir(&dir)
        .env("FAKE_CLAUDE_TRANSCRIPT", &transcript_path)
        .env("FAKE_CLAUDE_REPORT", &report_path);
    let mut run = WebRun::launch(command);
    let mut client = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));
    let mut page = PageTranscript::default();
    let card = recv_until(&mut client, &mut page, "the Bash card", |message, _| {
        message["type"] == "permission_request"
    });
    assert_eq!(card["request"]["request_id"], "perm-1", "{card}");
    assert_eq!(card["request"]["input"], input, "{card}");
    assert_eq!(card["agent"], "claude", "{card}");
    client.send(&json!({"type": "permission_decision", "request_id": "perm-1",
        "decision": "allow"}));
    recv_until(&mut client, &mut page, "the first turn's end", |_, page| {
        !page.busy && page.kinds().contains(&"turn_ended")
    });
    assert_eq!(page.kinds(), ["user", "tool_call", "tool_result", "turn_ended"]);
    assert_eq!(page.entries[0]["body"], "Please run the tests.");
    assert_eq!(page.entries[1]["body"]["summary"], "Bash: cargo test", "{:?}", page.entries);
    assert_eq!(page.entries[2]["body"]["content"], "test result: ok. 3 passed");
    client.send(&json!({"type": "session_prompt", "text": "Now the docs."}));
    recv_until(&mut client, &mut page, "the second turn's end", |_, page| {
        !page.busy && page.kinds().len() == 7
    });
    assert_eq!(
        page.kinds(),
        ["user", "tool_call", "tool_result", "turn_ended", "user", "assistant", "turn_ended"]
    );
    assert_eq!(page.entries[4]["body"], "Now the docs.");
    assert_eq!(page.entries[5]["body"], "Docs updated.");
    let status = run.process.wait(WAIT);
    drop(client);
    run.seen.extend(run.stderr.try_iter());
    let status = status.unwrap_or_else(|| panic!("askpane still runs: {:?}", run.seen));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("the fake's report"))
            .expect("a JSON report");
    assert_eq!(report["all_ok"], true, "{report:#}\n{:?}", run.seen);
    let reply = report["comparisons"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|comparison| comparison["expected"]["type"] == "control_response")
        .and_then(|comparison| comparison["got_text"].as_str())
        .map(|text| serde_json::from_str::<Value>(text).expect("JSON"));
    assert_eq!(reply, Some(allowed), "{report:#}");
    assert_eq!(status.code(), Some(0), "{:?}", run.seen);
}

// --- Issue 11: "New link" ---------------------------------------------------------------------

#[test]
fn a_new_link_ends_the_pages_on_the_old_one_which_no_longer_opens_and_questions_stay_open() {
    let mut harness = Harness::start();
    let asked = harness.ask(TOOL_USE_ID);
    let mut old_page = harness.client();
    old_page.recv_question(TOOL_USE_ID);
    let old_token = harness.token.clone();
    harness.bridge.replace_link().expect("a new token");
    assert_eq!(
        old_page.expect_close_frame(),
        (4001, "this link was replaced by a new one".to_owned()),
        "the page on the old link is told, with the code that stops it reconnecting"
    );
    // The old link opens nothing any more.
    let (host, origin) = (harness.host(), harness.origin());
    let old = token_protocols(&old_token);
    let refused = assert_refused(
        harness.port,
        "/ws",
        &[("Host", &host), ("Origin", &origin), (PROTOCOL_HEADER, &old)],
        401,
    );
    assert!(refused.contains("wrong or missing token"), "{refused}");
    // The new link: the bridge's URLs hold it, and the question waits there.
    let url = harness.bridge.url();
    let token = url.rsplit_once("#token=").map(|(_, token)| token.to_owned()).expect("a token");
    assert_ne!(token, old_token);
    assert_eq!(token.len(), 64, "{url}");
    harness.token = token;
    asked.assert_open();
    harness.answer_to_prove_open(&asked);
    harness.finish();
}

// --- Issue 11: hosted sessions in the browser (`askpane inbox --ui web`) ------------------------

/// The next message of type `kind` (skipping others, within [`WAIT`]).
#[cfg(target_os = "linux")]
fn recv_kind(client: &mut Client, kind: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "never saw {kind}");
        let message = client.recv();
        if message["type"] == kind {
            return message;
        }
    }
}

/// An inbox client hosting a session, as `askpane claude` under the inbox does. (Linux-only, as
/// `tests/inbox.rs`'s world is.)
#[cfg(target_os = "linux")]
fn inbox_host(world: &crate::inbox::World, project: &str) -> crate::inbox::Connection {
    let mut host = world.connect();
    host.send(
        &json!({"type": "host", "agent": "claude", "project": project, "prompt": "Fix the tests"})
            .to_string(),
    );
    host.receive_kind("hosting");
    host
}

/// `askpane inbox --ui web` with a raw socket client hosting a session: the page gets the
/// session (with its number and who runs it) and its permission card, which waits for the page
/// (no deny at once); the page's Allow once, prompt, Stop and End session reach the host; a
/// session the page names wrongly is refused; a page that connects later gets the session
/// whole; the host going away takes the session out of every page.
#[cfg(target_os = "linux")]
#[test]
fn the_inbox_in_the_browser_shows_hosted_sessions_and_sends_the_pages_decisions_to_their_host() {
    if !crate::support::web_bundle_built() {
        eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
        return;
    }
    let world = crate::inbox::World::new("bridge-hosted");
    let mut command = world.askpane(&["inbox", "--ui", "web"]);
    command.env_remove("DISPLAY");
    let mut run = WebRun::launch(command);
    let mut page = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));

    let mut alpha = inbox_host(&world, "alpha");
    let shown = recv_kind(&mut page, "session");
    let number = shown["session"].as_u64().unwrap_or_else(|| panic!("a session number: {shown}"));
    assert_eq!(
        (&shown["label"], &shown["from"], &shown["entries"], &shown["busy"]),
        (
            &json!("claude · alpha"),
            &json!(0),
            &json!([{"kind": "user", "body": "Fix the tests"}]),
            &json!(true)
        ),
        "{shown}"
    );
    alpha.send(
        &json!({"type": "session_event", "event": {"kind": "assistant",
            "blocks": [{"text": "Running the tests in alpha."}]}})
        .to_string(),
    );
    let added = recv_kind(&mut page, "session");
    assert_eq!(
        (&added["session"], &added["from"], &added["entries"]),
        (
            &json!(number),
            &json!(1),
            &json!([{"kind": "assistant", "body": "Running the tests in alpha."}])
        ),
        "{added}"
    );

    // The card waits for the page: the first decision the host hears is the page's.
    alpha.send(
        &json!({"type": "permission", "id": "p1", "request": {"request_id": "r1",
            "tool_name": "Bash", "input": {"command": "cargo test"}, "tool_use_id": "toolu_1"}})
        .to_string(),
    );
    let card = recv_kind(&mut page, "permission_request");
    let request_id = format!("inbox-{number}-p1");
    assert_eq!(card["request"]["request_id"], json!(request_id), "{card}");
    assert_eq!(card["request"]["input"], json!({"command": "cargo test"}), "{card}");
    page.send(&json!({"type": "permission_decision", "request_id": request_id,
        "decision": "allow"}));
    assert_eq!(
        recv_kind(&mut page, "permission_withdrawn"),
        json!({"type": "permission_withdrawn", "request_id": request_id, "reason": "allowed"})
    );
    assert_eq!(
        alpha.receive_kind("permission_decided"),
        json!({"type": "permission_decided", "id": "p1", "decision": {"behavior": "allow_once"}})
    );

    // The page's prompt, Stop and End session go to the session it names.
    page.send(&json!({"type": "session_prompt", "text": "Now the docs", "session": number}));
    assert_eq!(alpha.receive_kind("prompt"), json!({"type": "prompt", "text": "Now the docs"}));
    let prompted = recv_kind(&mut page, "session");
    assert_eq!(
        (&prompted["session"], &prompted["entries"], &prompted["busy"]),
        (&json!(number), &json!([{"kind": "user", "body": "Now the docs"}]), &json!(true)),
        "{prompted}"
    );
    page.send(&json!({"type": "session_stop", "session": number}));
    assert_eq!(alpha.receive_kind("interrupt"), json!({"type": "interrupt"}));
    page.send(&json!({"type": "session_end", "session": number}));
    assert_eq!(alpha.receive_kind("end_session"), json!({"type": "end_session"}));

    // A session that is not there, or no session named where the inbox has no own one.
    page.send(&json!({"type": "session_prompt", "text": "hello", "session": number + 100}));
    assert_eq!(
        page.recv_error(),
        format!("no agent session {} is shown here (its host went away)", number + 100)
    );
    page.send(&json!({"type": "session_prompt", "text": "hello"}));
    assert_eq!(page.recv_error(), "this askpane runs no agent session to prompt or stop");

    // A page that connects now gets the session whole, and which sessions are open.
    let mut later = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));
    let whole = recv_kind(&mut later, "session");
    assert_eq!((&whole["session"], &whole["from"]), (&json!(number), &json!(0)), "{whole}");
    let kinds: Vec<&Value> =
        whole["entries"].as_array().into_iter().flatten().map(|e| &e["kind"]).collect();
    assert_eq!(kinds, [&json!("user"), &json!("assistant"), &json!("user")], "{whole}");
    assert_eq!(
        recv_kind(&mut later, "sessions_open"),
        json!({"type": "sessions_open", "sessions": [number]})
    );

    // The host goes away: the session leaves every page.
    drop(alpha);
    let gone = json!({"type": "session_gone", "session": number});
    assert_eq!(recv_kind(&mut page, "session_gone"), gone);
    assert_eq!(recv_kind(&mut later, "session_gone"), gone);
    let mut last = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));
    assert_eq!(
        recv_kind(&mut last, "sessions_open"),
        json!({"type": "sessions_open", "sessions": []})
    );

    // A card still waiting when askpane ends hears an honest deny, not an allow.
    let mut beta = inbox_host(&world, "beta");
    beta.send(
        &json!({"type": "permission", "id": "p2", "request": {"request_id": "r2",
            "tool_name": "Bash", "input": {"command": "rm -rf target"}, "tool_use_id": "toolu_2"}})
        .to_string(),
    );
    recv_kind(&mut page, "permission_request");
    let mut quit = world.askpane(&["inbox", "--quit"]);
    quit.env_remove("DISPLAY");
    let quit = run_bounded(&mut quit, None);
    assert_eq!(quit.status.code(), Some(0), "{quit:?}");
    // Issue 24 item 26: it hears the inbox was closed, not that the user closed a window.
    let closed = Outcome::inbox_closed().deny_message().expect("a closed outcome has a message");
    assert_eq!(
        beta.receive_kind("permission_decided"),
        json!({"type": "permission_decided", "id": "p2",
            "decision": {"behavior": "deny", "message": closed}})
    );
    let status = run.process.wait(WAIT);
    run.seen.extend(run.stderr.try_iter());
    let status = status.unwrap_or_else(|| panic!("askpane inbox still runs: {:?}", run.seen));
    assert_eq!(status.code(), Some(0), "{:?}", run.seen);
}

// --- Issue 11: History in the browser, and "New link" from the inbox ---------------------------

/// A bridge with `journal` (and no question asked).
fn history_harness(journal: Option<BridgeJournal>) -> Harness {
    Harness::start_bridge(&BridgeOptions {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        assets: ASSETS,
        stop_when_done: false,
        stop_after_turn: false,
        page_gone_grace: PAGE_GONE_GRACE,
        journal,
    })
}

/// The next `history_page` (skipping anything else, within [`WAIT`]).
fn recv_history(client: &mut Client) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "no history_page within {WAIT:?}");
        let message = client.recv();
        if message["type"] == "history_page" {
            return message;
        }
    }
}

/// How each entry of a `history_page` ended, newest first.
fn endings(page: &Value) -> Vec<&str> {
    page["items"].as_array().into_iter().flatten().filter_map(|i| i["ended"].as_str()).collect()
}

#[test]
fn a_page_reads_the_inbox_history_filtered_and_a_broken_request_leaves_it_usable() {
    use askpane::store::{DraftSink, Store};
    let state = crate::support::scratch_dir("bridge-history-page");
    let sink = DraftSink::start(Store::open_in(&state).expect("a store")).expect("its writer");
    let harness = history_harness(Some(BridgeJournal(Arc::new(sink))));
    let asked = harness.ask(TOOL_USE_ID);
    let mut page = harness.client();
    page.recv_question_and_history_kept(TOOL_USE_ID);
    page.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "2", "1": "1", "2": "other:MySQL"}}));
    let outcome = asked.outcome();
    let sent = asked.reply(&outcome);
    page.recv_taken(TOOL_USE_ID);
    let declined = harness.ask_with("toolu_declined", |request| {
        request.policy.decline = Some("not now".to_owned());
    });
    assert!(matches!(declined.outcome(), Outcome::Declined { .. }));

    // Everything, newest first (the store writes a moment after the reply: asked until both
    // are there, within WAIT).
    let deadline = Instant::now() + WAIT;
    let all = loop {
        page.send(&json!({"type": "history_request"}));
        let all = recv_history(&mut page);
        if endings(&all).len() >= 2 || Instant::now() > deadline {
            break all;
        }
        thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(endings(&all), ["declined", "answered"], "{all}");
    assert_eq!(all["filter"], json!({"search": "", "project": null, "agent": null}), "{all}");
    assert_eq!(all["agents"], json!([["hook", "Claude Code (hook)"]]), "{all}");
    assert_eq!(all["error"], Value::Null, "{all}");
    let answered = &all["items"][1];
    assert_eq!(answered["header"], "Layout", "{answered}");
    assert!(answered["answer"].as_str().is_some_and(|a| a.contains("MySQL")), "{answered}");
    let reply: Value =
        serde_json::from_str(answered["reply"].as_str().expect("the exact reply")).expect("JSON");
    assert_eq!(reply, sent, "the History shows the reply the agent received");

    // A search, and an agent nobody was.
    page.send(&json!({"type": "history_request", "search": "mysql"}));
    let found = recv_history(&mut page);
    assert_eq!(endings(&found), ["answered"], "{found}");
    assert_eq!(found["filter"]["search"], "mysql");
    page.send(&json!({"type": "history_request", "agent": "mcp"}));
    assert_eq!(endings(&recv_history(&mut page)), Vec::<&str>::new());

    // Broken requests get an error naming the field; the connection stays usable.
    let long = "x".repeat(askpane::protocol::history::MAX_HISTORY_SEARCH + 1);
    page.send(&json!({"type": "history_request", "search": long}));
    let refused = page.recv();
    assert_eq!(
        refused,
        json!({"type": "error", "kind": "too_long", "request": "history_request",
            "field": "search", "tool_use_id": null,
            "message": "the history search is 201 characters long; askpane searches at most 200"})
    );
    page.send(&json!({"type": "history_request", "project": ["shop"]}));
    assert_eq!(page.recv_error(), "the history filter's `project` must be a string or null");
    page.send_text("{\"type\": \"history_request\"");
    page.recv_error();
    page.send(&json!({"type": "history_request", "search": "not now"}));
    assert_eq!(endings(&recv_history(&mut page)), ["declined"]);
    drop(page);
    harness.finish();
}

/// A journal whose History reads wait until the test lets them go: a slow store.
#[derive(Default)]
struct SlowHistory {
    held: std::sync::Mutex<Vec<(askpane::app::history::HistoryFilter, HistoryDone)>>,
}

use askpane::app::journal::{HistoryDone, Journal};

impl Journal for SlowHistory {
    fn restore(&self, _: &askpane::book::Core, _: &mut askpane::book::Policy) {}
    fn opened(&self, _: &askpane::book::Core) {}
    fn draft_changed(&self, _: &askpane::book::Core, _: usize, _: &askpane::book::Form) {}
    fn settled(&self, _: &askpane::book::Core, _: &Outcome) {}
    fn keeps_history(&self) -> bool {
        true
    }
    fn history(&self, filter: &askpane::app::history::HistoryFilter, done: HistoryDone) {
        self.held.lock().expect("not poisoned").push((filter.clone(), done));
    }
}

impl SlowHistory {
    /// Answers every read held so far, with one entry-less page each; how many there were.
    fn release(&self) -> usize {
        let held = std::mem::take(&mut *self.held.lock().expect("not poisoned"));
        let count = held.len();
        for (filter, done) in held {
            done(askpane::app::history::HistoryPage { filter, ..Default::default() });
        }
        count
    }
}

#[test]
fn a_slow_history_read_stalls_no_question_and_a_page_has_one_read_at_a_time() {
    let slow = Arc::new(SlowHistory::default());
    let harness = history_harness(Some(BridgeJournal(Arc::clone(&slow) as Arc<_>)));
    let mut page = harness.client();
    let mut other = harness.client();
    for client in [&mut page, &mut other] {
        assert_eq!(client.recv(), json!({"type": "history_kept"}));
    }
    page.send(&json!({"type": "history_request", "search": "first"}));
    // While it is read, a question still reaches every page at once, and another page may read.
    let asked = harness.ask(TOOL_USE_ID);
    page.recv_question(TOOL_USE_ID);
    other.recv_question(TOOL_USE_ID);
    other.send(&json!({"type": "history_request", "search": "other"}));
    // The same page asking again before its answer is refused, saying why.
    page.send(&json!({"type": "history_request", "search": "second"}));
    let busy = page.recv();
    assert_eq!(
        busy,
        json!({"type": "error", "kind": "invalid", "request": "history_request",
            "tool_use_id": null,
            "message": "one history request at a time: wait for the history_page of the last one"})
    );
    // The first read ends: its page comes, and the page may ask again.
    let deadline = Instant::now() + WAIT;
    while slow.held.lock().expect("not poisoned").len() < 2 {
        assert!(Instant::now() < deadline, "the reads never reached the journal");
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(slow.release(), 2, "one read per page, the refused one never ran");
    assert_eq!(recv_history(&mut page)["filter"]["search"], "first");
    assert_eq!(recv_history(&mut other)["filter"]["search"], "other");
    page.send(&json!({"type": "history_request", "search": "third"}));
    let deadline = Instant::now() + WAIT;
    while slow.release() == 0 {
        assert!(Instant::now() < deadline, "the third read never reached the journal");
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(recv_history(&mut page)["filter"]["search"], "third");
    // The question waited meanwhile, and is answered as ever.
    page.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "1"}}));
    assert!(matches!(asked.outcome(), Outcome::Answered(_)));
    page.recv_taken(TOOL_USE_ID);
    drop(other);
    drop(page);
    harness.finish();
}

#[test]
fn a_bridge_without_a_store_says_there_is_no_history_here() {
    // `askpane ask --ui web` without the inbox keeps no history: the page is told so, in words,
    // instead of an empty list that would look like nothing was ever asked.
    let harness = history_harness(None);
    let mut page = harness.client();
    // No `history_kept`: the page shows no History button.
    page.assert_quiet();
    page.send(&json!({"type": "history_request", "search": "anything"}));
    assert_eq!(
        recv_history(&mut page),
        json!({"type": "history_page", "filter": {"search": "anything", "project": null,
            "agent": null}, "items": [], "projects": [], "agents": [],
            "error": askpane::protocol::history::NO_HISTORY_HERE})
    );
    drop(page);
    harness.finish();
}

#[test]
fn a_page_cannot_replace_the_link() {
    // A page holding a leaked link must not lock the owner out: no browser message makes a new
    // link (only the owner's terminal or window does), and the link stays as it was.
    let harness = history_harness(None);
    let before = harness.bridge.url();
    let mut page = harness.client();
    for kind in ["new_link", "replace_link"] {
        page.send(&json!({"type": kind}));
        let error = page.recv_error();
        assert!(error.starts_with(&format!("unknown message type {kind:?}")), "{error}");
    }
    assert_eq!(harness.bridge.url(), before);
    page.assert_quiet();
    drop(page);
    drop(harness.client());
    harness.finish();
}

/// `askpane inbox --ui web` and `askpane inbox --new-link` (real processes): the caller gets the
/// new links on stdout and exits 0; the page on the old link is closed with 4001; the old token
/// is refused with 401 and the new one opens. Without an inbox, or with an inbox that serves no
/// page, `--new-link` exits 2 and says why.
#[cfg(target_os = "linux")]
#[test]
fn askpane_inbox_new_link_replaces_the_running_inbox_link() {
    if !crate::support::web_bundle_built() {
        eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
        return;
    }
    let world = crate::inbox::World::new("bridge-new-link");
    let none = run_bounded(&mut world.askpane(&["inbox", "--new-link"]), None);
    assert_eq!(none.status.code(), Some(2), "{}", none.stderr);
    assert_eq!(
        none.stderr,
        "askpane: no inbox runs, so there is no link to replace (start one with `askpane inbox \
         --ui web`)\n"
    );
    assert_eq!(none.stdout, "");

    // `--lan`: a link per address of this machine, and a QR code when one is not loopback.
    let mut command = world.askpane(&["inbox", "--ui", "web", "--lan"]);
    command.env_remove("DISPLAY");
    let mut run = WebRun::launch(command);
    let mut old_page = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));
    let relinked = run_bounded(&mut world.askpane(&["inbox", "--new-link"]), None);
    assert_eq!(relinked.status.code(), Some(0), "{}", relinked.stderr);
    let links: Vec<&str> = relinked.stdout.lines().collect();
    let prefix = format!("http://127.0.0.1:{}/#token=", run.port);
    let link = links.first().unwrap_or_else(|| panic!("no link: {}", relinked.stderr));
    let token = link.strip_prefix(&prefix).unwrap_or_else(|| panic!("loopback first: {link}"));
    assert_eq!(token.len(), 64, "{link}");
    assert_ne!(token, run.token);
    let suffix = format!(":{}/#token={token}", run.port);
    assert!(links.iter().all(|link| link.ends_with(&suffix)), "one token: {links:?}");
    assert_eq!(
        links.len() > 1,
        relinked.stderr.contains("scan this with your phone's camera"),
        "a QR code exactly when another device has a link: {}",
        relinked.stderr
    );
    assert!(relinked.stderr.contains("the old link"), "{}", relinked.stderr);
    // The inbox's terminal shows the new link too.
    assert_eq!(run.line_after("askpane: the page has a new link: "), *link);
    assert_eq!(
        old_page.expect_close_frame(),
        (4001, "this link was replaced by a new one".to_owned())
    );
    let (host, origin) =
        (format!("127.0.0.1:{}", run.port), format!("http://127.0.0.1:{}", run.port));
    let refused = assert_refused(
        run.port,
        "/ws",
        &[("Host", &host), ("Origin", &origin), (PROTOCOL_HEADER, &token_protocols(&run.token))],
        401,
    );
    assert!(refused.contains("wrong or missing token"), "{refused}");
    let mut new_page = upgrade(
        run.port,
        "/ws",
        &[("Host", &host), ("Origin", &origin), (PROTOCOL_HEADER, &token_protocols(token))],
    )
    .unwrap_or_else(|refused| panic!("the new link was refused: {refused:?}"));
    new_page.send(&json!({"type": "history_request"}));
    assert_eq!(recv_history(&mut new_page)["error"], Value::Null, "the inbox keeps history");
    drop(new_page);
    drop(run);

    // An inbox with a window and no page: nothing to replace.
    let world = crate::inbox::World::with_inbox("bridge-new-link-window");
    let windowed = run_bounded(&mut world.askpane(&["inbox", "--new-link"]), None);
    assert_eq!(windowed.status.code(), Some(2), "{}", windowed.stderr);
    assert_eq!(
        windowed.stderr,
        format!("askpane: {}\n", askpane::transport::inbox::NO_PAGE_TO_RELINK)
    );
}

// --- Issue 24 item 15: a long session never locks a page out -----------------------------------

/// What a page gets on connecting, up to and with `permissions_open` (the last of it where
/// sessions are carried): each message with the bytes it took.
fn catch_up(client: &mut Client) -> Vec<(Value, usize)> {
    let mut got = Vec::new();
    loop {
        let Message::Text(text) = client.recv_message() else { continue };
        let message: Value = serde_json::from_str(text.as_str()).expect("JSON");
        let last = message["type"] == "permissions_open";
        got.push((message, text.len()));
        if last {
            return got;
        }
    }
}

/// A tool result of `content` in hosted session `number`, as the inbox hands it to the bridge.
fn hosted_result(number: u64, n: usize, content: &str) -> Inbound {
    let line = json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": format!("toolu_{n}"), "content": content}]}});
    let event = SessionEvent::Message(askpane::protocol::stream::parse_cli_line(&line));
    Inbound::Session(SessionInbound::HostedEvent {
        session: askpane::protocol::origin::SessionKey::Hosted(number),
        event: Box::new(event),
    })
}

/// Twelve hosted sessions of 2.4 MB each (29 MB in all, past the 16 MiB a page's connection may
/// queue): a page that connects gets the question first, answers it, and what it got on
/// connecting is bounded (each session's newest entries); it asks for older entries of a
/// session, one page at a time, and a request for a session that is not there is refused by
/// name. Before: every page was closed with 1011 after the question, and reconnected in a loop.
#[test]
fn a_page_connecting_to_long_sessions_gets_the_question_first_and_a_bounded_catch_up() {
    let harness = Harness::start_bridge(&loopback_options());
    let mut hosts = Vec::new();
    let content: String = (0..60_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    for number in 1..=12 {
        let (commands, receiver) = crossbeam_channel::unbounded();
        hosts.push(receiver);
        harness.sender().send(Inbound::Session(SessionInbound::Hosted {
            session: askpane::protocol::origin::SessionKey::Hosted(number),
            label: format!("claude · p{number}"),
            prompt: Some("Go".to_owned()),
            commands,
        }));
        for n in 0..40 {
            harness.sender().send(hosted_result(number, n, &content));
        }
    }
    let asked = harness.ask(TOOL_USE_ID);
    // A question decided at once, sent last: once it is, the bridge has taken everything before.
    let probe = harness.ask_with("toolu_probe", |request| {
        request.policy.decline = Some("probe".to_owned());
    });
    assert!(matches!(probe.outcome(), Outcome::Declined { .. }));

    let mut page = harness.client();
    let got = catch_up(&mut page);
    let kinds: Vec<&str> = got.iter().filter_map(|(m, _)| m["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"user_question"), "the question first: {kinds:?}");
    let bytes: usize = got.iter().map(|(_, bytes)| bytes).sum();
    assert!(bytes < 3 * 1024 * 1024, "{bytes} bytes on connecting: {kinds:?}");
    let sessions: Vec<&Value> =
        got.iter().map(|(m, _)| m).filter(|m| m["type"] == "session").collect();
    assert_eq!(sessions.len(), 12, "{kinds:?}");
    for session in &sessions {
        let from = session["from"].as_u64().expect("from");
        let shown = session["entries"].as_array().map_or(0, Vec::len) as u64;
        assert_eq!(from + shown, 41, "the newest entries: {}", session["session"]);
        assert!(from > 0, "earlier entries are not sent: {}", session["session"]);
    }
    page.send(&json!({"type": "question_answer", "tool_use_id": TOOL_USE_ID,
        "answers": {"0": "2", "1": "1", "2": "other:MySQL"}}));
    assert!(matches!(asked.outcome(), Outcome::Answered(_)));
    assert_eq!(page.recv_taken(TOOL_USE_ID), "answered");

    // Older entries, on request: the ones just before the oldest the page holds, bounded.
    let first = sessions.iter().find(|s| s["session"] == 1).expect("session 1");
    let before = first["from"].as_u64().expect("from");
    page.send(&json!({"type": "session_older", "session": 1, "before": before}));
    let Message::Text(text) = page.recv_message() else { panic!("not text") };
    assert!(text.len() < 300 * 1024, "{} bytes of older entries", text.len());
    let older: Value = serde_json::from_str(text.as_str()).expect("JSON");
    assert_eq!(
        (&older["type"], &older["session"], &older["before"]),
        (&json!("session_older_entries"), &json!(1), &json!(before)),
        "{}",
        &text[..200]
    );
    let from = older["from"].as_u64().expect("from");
    let entries = older["entries"].as_array().map_or(0, Vec::len) as u64;
    assert!(entries > 0 && from + entries == before, "{from} + {entries} != {before}");
    assert_eq!(older["entries"][0]["body"]["tool_use_id"], json!(format!("toolu_{}", from - 1)));
    // Nothing earlier than the first: none, and the page knows it has them all.
    page.send(&json!({"type": "session_older", "session": 1, "before": 0}));
    let none = page.recv();
    assert_eq!((&none["from"], &none["entries"]), (&json!(0), &json!([])), "{none}");
    // A session that is not there, and a request without `before`, are refused by name.
    page.send(&json!({"type": "session_older", "session": 99, "before": 5}));
    let refused = page.recv();
    assert_eq!(
        (&refused["type"], &refused["request"], &refused["message"]),
        (
            &json!("error"),
            &json!("session_older"),
            &json!("no agent session 99 is shown here (its host went away)")
        ),
        "{refused}"
    );
    page.send(&json!({"type": "session_older", "session": 1}));
    let refused = page.recv();
    assert_eq!(
        (&refused["request"], &refused["message"]),
        (&json!("session_older"), &json!("`before` must be the number of a transcript entry")),
        "{refused}"
    );
    drop((page, hosts));
    harness.finish();
}

/// Issue 24 item 15, as reported: an `askpane claude` under `askpane inbox --ui web` whose
/// transcript passed 16 MiB (300 tool results of 60 KB) kept every page out: each was closed
/// with 1011 on connecting, and reconnected in a loop, so no question could be answered in the
/// browser. A page now gets the question first and answers it; what it gets on connecting is the
/// session's newest entries (the inbox dropped the oldest: `kept_from`), and it asks for older
/// ones.
#[cfg(target_os = "linux")]
#[test]
fn a_hosted_session_past_16_mib_never_keeps_the_inbox_page_from_answering() {
    if !crate::support::web_bundle_built() {
        eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
        return;
    }
    let world = crate::inbox::World::new("bridge-long-session");
    let mut command = world.askpane(&["inbox", "--ui", "web"]);
    command.env_remove("DISPLAY");
    let run = WebRun::launch(command);
    let mut host = inbox_host(&world, "long");
    let content: String = (0..60_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    for n in 0..300 {
        host.send(
            &json!({"type": "session_event", "event": {"kind": "user", "blocks": [{"tool_result":
                {"tool_use_id": format!("toolu_{n}"), "content": content, "is_error": false}}]}})
            .to_string(),
        );
    }
    host.send(
        &json!({"type": "session_event", "event": {"kind": "assistant",
            "blocks": [{"text": "All 300 done."}]}})
        .to_string(),
    );
    let hook = world.client(&["hook"], &crate::inbox::hook_input("toolu_long_1", "Which colour?"));
    // A page that connects once the inbox has taken all of it (the prompt, 300 results, the
    // last line: 302 entries) and the question.
    let deadline = Instant::now() + WAIT;
    let (mut page, got) = loop {
        assert!(Instant::now() < deadline, "the inbox never had the session and the question");
        let mut page = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));
        let got = catch_up(&mut page);
        let asked = got.iter().any(|(m, _)| m["type"] == "user_question");
        let whole = got.iter().any(|(m, _)| {
            m["type"] == "session"
                && m["from"].as_u64().unwrap_or(0)
                    + m["entries"].as_array().map_or(0, |e| e.len() as u64)
                    == 302
        });
        if asked && whole {
            break (page, got);
        }
        thread::sleep(Duration::from_millis(100));
    };
    let kinds: Vec<&str> = got.iter().filter_map(|(m, _)| m["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"user_question"), "the question first: {kinds:?}");
    let bytes: usize = got.iter().map(|(_, bytes)| bytes).sum();
    assert!(bytes < 512 * 1024, "{bytes} bytes on connecting: {kinds:?}");
    let (session, _) = got.iter().find(|(m, _)| m["type"] == "session").expect("the session");
    let number = session["session"].as_u64().expect("a hosted session's number");
    let from = session["from"].as_u64().expect("from");
    let kept_from = session["kept_from"].as_u64().unwrap_or(0);
    assert!(kept_from > 0, "18 MB of results are past what the inbox keeps: {kept_from}");
    assert!(from > kept_from, "the page gets the newest only: from {from}, kept {kept_from}");

    page.send(&json!({"type": "question_answer", "tool_use_id": "toolu_long_1",
        "answers": {"0": "1"}}));
    assert_eq!(page.recv_taken("toolu_long_1"), "answered");
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        crate::inbox::hook_answers(&stdout),
        json!({"Which colour?": "Red"}),
        "the page's answer reached the hook: {stdout}"
    );

    page.send(&json!({"type": "session_older", "session": number, "before": from}));
    let older = recv_kind(&mut page, "session_older_entries");
    let older_from = older["from"].as_u64().expect("from");
    let entries = older["entries"].as_array().map_or(0, Vec::len) as u64;
    assert!(older_from >= kept_from && entries > 0, "{older_from}, {entries}");
    assert_eq!(older_from + entries, from);
    assert_eq!(older["before"], json!(from));
    drop(page);
    drop(host);
}

// --- Issue 26: every approval in history ------------------------------------------------------

/// A `PermissionRequest` hook input for `Bash` running `command`, suggesting the rule
/// `npm test *` for this project (as Claude Code 2.1.332 sends them).
#[cfg(target_os = "linux")]
fn hook_bash(command: &str, tool_use_id: &str) -> String {
    json!({"session_id": "s-history", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp/shop",
        "permission_mode": "default", "hook_event_name": "PermissionRequest",
        "tool_name": "Bash", "tool_input": {"command": command, "description": "Run it"},
        "tool_use_id": tool_use_id,
        "permission_suggestions": [{"type": "addRules", "behavior": "allow",
            "destination": "localSettings",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}]}]})
    .to_string()
}

/// `askpane history --json <args>` in `world`: one JSON value per entry.
#[cfg(target_os = "linux")]
fn history_lines(world: &crate::inbox::World, args: &[&str]) -> Vec<Value> {
    let mut command = world.askpane(&["history", "--json"]);
    command.args(args);
    let run = run_bounded(&mut command, None);
    assert!(run.status.success(), "history failed: {}", run.stderr);
    run.stdout.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

/// Issue 26: a hook's tool call decided on the inbox's page (always allow, with the rule the
/// agent suggested) is in `askpane history --kind approval` with its decision and rule, and
/// not in `--kind question`; a search finds it by its command; a `--decline` decided with
/// nobody asked is recorded too.
#[cfg(target_os = "linux")]
#[test]
fn approvals_decided_on_the_inbox_page_or_by_a_flag_are_in_history_by_kind() {
    if !crate::support::web_bundle_built() {
        eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
        return;
    }
    let world = crate::inbox::World::new("history-approvals");
    let mut command = world.askpane(&["inbox", "--ui", "web"]);
    command.env_remove("DISPLAY");
    let run = WebRun::launch(command);
    let mut page = run.client().unwrap_or_else(|refused| panic!("refused: {refused:?}"));
    // The page shows cards beside a session: a client hosts one.
    let _host = inbox_host(&world, "shop");
    recv_kind(&mut page, "session");

    let hook = world.client(&["hook"], &hook_bash("npm test -- --watch=false", "toolu_h1"));
    let card = recv_kind(&mut page, "permission_request");
    let request_id = card["request"]["request_id"].clone();
    let suggestion = card["request"]["suggestions"][0].clone();
    assert_eq!(suggestion["rules"][0]["ruleContent"], "npm test *", "{card}");
    page.send(&json!({"type": "permission_decision", "request_id": request_id,
        "decision": "allow_always", "suggestion": suggestion}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("the hook's reply");
    assert_eq!(reply["hookSpecificOutput"]["decision"]["behavior"], "allow", "{reply}");

    // The inbox's store writes off its UI thread: the entry is there within a bounded wait.
    let deadline = Instant::now() + WAIT;
    let approvals = loop {
        let approvals = history_lines(&world, &["--kind", "approval"]);
        if !approvals.is_empty() || Instant::now() > deadline {
            break approvals;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let [allowed] = approvals.as_slice() else { panic!("one approval: {approvals:?}") };
    assert_eq!(allowed["kind"], "approval", "{allowed}");
    assert_eq!(allowed["tool"], "Bash", "{allowed}");
    assert_eq!(allowed["summary"], "Bash: npm test -- --watch=false", "{allowed}");
    assert_eq!(allowed["decision"], "allowed_always", "{allowed}");
    assert_eq!(allowed["rule"], "Always allow `npm test *` in this project", "{allowed}");
    assert_eq!(allowed["origin"], "hook", "{allowed}");
    assert_eq!(allowed["source"], "hook", "{allowed}");
    assert_eq!(allowed["questions"]["command"], "npm test -- --watch=false", "{allowed}");
    assert!(history_lines(&world, &["--kind", "question"]).is_empty());
    let found = history_lines(&world, &["--search", "watch=false"]);
    assert_eq!(found.len(), 1, "found by its command: {found:?}");

    // `--decline` decides with nobody asked, in the hook itself: recorded all the same.
    let declined = world.client(
        &["hook", "--decline", "No pushes today."],
        &hook_bash("git push --force", "toolu_h2"),
    );
    let (code, stdout, stderr) = declined.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("the hook's reply");
    assert_eq!(reply["hookSpecificOutput"]["decision"]["behavior"], "deny", "{reply}");
    let approvals = history_lines(&world, &["--kind", "approval"]);
    assert_eq!(approvals.len(), 2, "{approvals:?}");
    let denied = &approvals[0];
    assert_eq!(denied["summary"], "Bash: git push --force", "{denied}");
    assert_eq!(denied["decision"], "denied", "{denied}");
    assert_eq!(denied["deny_message"], "No pushes today.", "{denied}");
    assert_eq!(denied["rule"], Value::Null, "{denied}");
    // The table shows them too: the call in one line and the decision.
    let mut table = world.askpane(&["history", "--kind", "approval"]);
    let table = run_bounded(&mut table, None);
    assert!(table.stdout.contains("Bash: git push --force"), "{}", table.stdout);
    assert!(table.stdout.contains("allowed_always"), "{}", table.stdout);
    drop(page);
}
