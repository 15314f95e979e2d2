//! A tiny fake Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI: the
//! first main-loop turn gets an `AskUserQuestion` tool_use (or each turn the next call of a
//! script, [`FakeApi::scripted`]), every other request a short text.
//!
//! std only: a `TcpListener` on port 0, one thread per connection, HTTP/1.1 with keep-alive.
//! `POST /v1/messages` is answered in the real Messages format, as Server-Sent Events when the
//! request says `"stream": true` (the CLI always does) and as one JSON message otherwise. A request
//! is a *main-loop turn* when its `tools` include `AskUserQuestion`; anything else (title or quota
//! side calls, none of which the CLI made with the variables of protocol.md §0) gets the text reply.
//! Every `tool_result` block a request brings after the model's last message is kept for the test
//! to read. A scripted call's `"$planfile"` becomes the plan file the CLI named (plan mode).

use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;

/// The id of the one `tool_use` block the fake model sends (the id of the captures).
pub const TOOL_USE_ID: &str = "toolu_fake_ask_000001";
/// The text of every reply that is not the question.
pub const DONE_TEXT: &str = "Done.";

/// How often a connection thread that waits for bytes looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
/// Requests larger than these are refused (the CLI's main request is about 100 KB).
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The three captured questions (Layout with previews, Features multi-select, a Japanese
/// database question), as the model's `AskUserQuestion` input.
pub fn captured_questions() -> Value {
    support::fixture_json("hook.pretooluse.stdin.json")["tool_input"].clone()
}

/// A running fake API; stops (and joins its threads) when dropped.
pub struct FakeApi {
    address: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    stop: AtomicBool,
    /// The tool calls the model makes, one per main-loop turn, in order: one `AskUserQuestion`
    /// (or an MCP tool, `mcp__askpane__…`), or a script (issue 26: Bash, then Edit).
    script: Vec<ToolCall>,
    log: Mutex<Log>,
    connections: Mutex<Vec<JoinHandle<()>>>,
}

#[derive(Default)]
struct Log {
    /// `{"method", "path", "body"}` of every request, in arrival order.
    requests: Vec<Value>,
    /// Every distinct `tool_result` block seen, `cache_control` removed.
    tool_results: Vec<Value>,
    /// How many of the script's tool calls have been sent.
    called: usize,
    /// Messages sent so far (for their ids).
    messages: u32,
}

impl FakeApi {
    /// A fake API whose model asks the three captured questions.
    pub fn start() -> Self {
        Self::asking(captured_questions())
    }

    /// A fake API whose model calls `AskUserQuestion` with the captured questions, as the
    /// tool_use `tool_use_id`.
    pub fn start_as(tool_use_id: &str) -> Self {
        Self::asking_as(captured_questions(), tool_use_id)
    }

    /// A fake API whose model calls `AskUserQuestion` with `tool_input`.
    pub fn asking(tool_input: Value) -> Self {
        Self::asking_as(tool_input, TOOL_USE_ID)
    }

    /// A fake API whose model calls `AskUserQuestion` with `tool_input`, as `tool_use_id`.
    pub fn asking_as(tool_input: Value, tool_use_id: &str) -> Self {
        Self::calling("AskUserQuestion", tool_input, tool_use_id)
    }

    /// A fake API whose model calls the tool `tool_name` (once offered it) with `tool_input`.
    pub fn calling(tool_name: &str, tool_input: Value, tool_use_id: &str) -> Self {
        Self::scripted(vec![ToolCall::new(tool_name, tool_input, tool_use_id)])
    }

    /// A fake API whose model makes `script`'s tool calls, one per main-loop turn (a turn whose
    /// tools include the first call's tool), then says [`DONE_TEXT`].
    pub fn scripted(script: Vec<ToolCall>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake API on 127.0.0.1");
        let address = listener.local_addr().expect("the fake API's address");
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            script,
            log: Mutex::new(Log::default()),
            connections: Mutex::new(Vec::new()),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("fake-api-accept".into())
                .spawn(move || accept_loop(&listener, &shared))
                .expect("spawn the fake API's accept thread")
        };
        FakeApi { address, shared, accept: Some(accept) }
    }

    /// What `ANTHROPIC_BASE_URL` should be.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every `tool_result` block the CLI sent, in order (each once, without `cache_control`).
    pub fn tool_results(&self) -> Vec<Value> {
        self.shared.log().tool_results.clone()
    }

    /// Every request, as `{"method", "path", "body"}` (`body` is the JSON, or the text if not JSON).
    pub fn requests(&self) -> Vec<Value> {
        self.shared.log().requests.clone()
    }

    /// One line per request: method, path, model, whether it was a main-loop turn, and what its
    /// last message held. For failure messages.
    pub fn request_summary(&self) -> String {
        let mut summary = String::new();
        for (index, request) in self.requests().iter().enumerate() {
            let body = &request["body"];
            let last = body["messages"].as_array().and_then(|messages| messages.last());
            let last = last.map_or_else(|| "-".to_owned(), describe_message);
            summary.push_str(&format!(
                "  {}. {} {} model={} main={} last message: {last}\n",
                index + 1,
                request["method"].as_str().unwrap_or("?"),
                request["path"].as_str().unwrap_or("?"),
                body["model"].as_str().unwrap_or("-"),
                is_main_turn(body, self.shared.main_tool()),
            ));
        }
        if summary.is_empty() {
            summary.push_str("  (no request reached the fake API)\n");
        }
        summary
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept() so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        // Each connection thread looks at the flag every POLL, so these joins are bounded.
        let connections = std::mem::take(&mut *self.shared.connections_guard());
        for connection in connections {
            let _ = connection.join();
        }
    }
}

/// One tool call of the fake model's script.
#[derive(Clone, Debug)]
pub struct ToolCall {
    pub name: String,
    pub input: Value,
    pub id: String,
}

impl ToolCall {
    pub fn new(name: &str, input: Value, id: &str) -> Self {
        ToolCall { name: name.to_owned(), input, id: id.to_owned() }
    }
}

impl Shared {
    /// The tool whose offer marks a main-loop turn: the script's first.
    fn main_tool(&self) -> &str {
        self.script.first().map_or("", |call| call.name.as_str())
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn connections_guard(&self) -> MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.connections.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopping() {
            return;
        }
        let Ok(stream) = stream else { continue };
        let connection = {
            let shared = Arc::clone(shared);
            thread::Builder::new()
                .name("fake-api-connection".into())
                .spawn(move || serve_connection(stream, &shared))
        };
        if let Ok(connection) = connection {
            shared.connections_guard().push(connection);
        }
    }
}

/// One parsed HTTP request.
struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
    close: bool,
}

fn serve_connection(mut stream: TcpStream, shared: &Shared) {
    if stream.set_read_timeout(Some(POLL)).is_err()
        || stream.set_write_timeout(Some(Duration::from_secs(10))).is_err()
    {
        return;
    }
    let _ = stream.set_nodelay(true);
    let mut buffer = Vec::new();
    while let Ok(Some(request)) = read_request(&mut stream, &mut buffer, shared) {
        let response = respond(&request, shared);
        if stream.write_all(&response).and_then(|()| stream.flush()).is_err() || request.close {
            return;
        }
    }
}

/// Reads more bytes into `buffer`. `Ok(false)` at the end of the stream; an error once the fake
/// API is stopping.
fn fill(stream: &mut TcpStream, buffer: &mut Vec<u8>, shared: &Shared) -> io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if shared.stopping() {
            return Err(io::Error::other("the fake API is stopping"));
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(count) => {
                buffer.extend_from_slice(&chunk[..count]);
                return Ok(true);
            }
            Err(error)
                if matches!(
                    error.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(error) => return Err(error),
        }
    }
}

fn too_large() -> io::Error {
    io::Error::new(ErrorKind::InvalidData, "request too large")
}

/// The next request on the connection; `Ok(None)` when the client closed it between requests.
fn read_request(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    shared: &Shared,
) -> io::Result<Option<Request>> {
    let head_end = loop {
        if let Some(at) = find(buffer, b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD {
            return Err(too_large());
        }
        if !fill(stream, buffer, shared)? {
            return if buffer.is_empty() { Ok(None) } else { Err(ErrorKind::UnexpectedEof.into()) };
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    buffer.drain(..head_end + 4);
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let (mut length, mut chunked, mut close) = (0usize, false, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().map_err(|_| too_large())?,
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" => close = value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let body = if chunked {
        read_chunked(stream, buffer, shared)?
    } else {
        if length > MAX_BODY {
            return Err(too_large());
        }
        while buffer.len() < length {
            if !fill(stream, buffer, shared)? {
                return Err(ErrorKind::UnexpectedEof.into());
            }
        }
        buffer.drain(..length).collect()
    };
    Ok(Some(Request { method, path, body, close }))
}

/// A `Transfer-Encoding: chunked` body (trailers skipped).
fn read_chunked(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    shared: &Shared,
) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(at) = find(buffer, b"\r\n") {
                break at;
            }
            if !fill(stream, buffer, shared)? {
                return Err(ErrorKind::UnexpectedEof.into());
            }
        };
        let size_text = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| too_large())?;
        if body.len() + size > MAX_BODY {
            return Err(too_large());
        }
        buffer.drain(..line_end + 2);
        if size == 0 {
            // Trailer lines up to the empty line.
            loop {
                if let Some(at) = find(buffer, b"\r\n") {
                    buffer.drain(..at + 2);
                    if at == 0 {
                        return Ok(body);
                    }
                } else if !fill(stream, buffer, shared)? {
                    return Err(ErrorKind::UnexpectedEof.into());
                }
            }
        }
        while buffer.len() < size + 2 {
            if !fill(stream, buffer, shared)? {
                return Err(ErrorKind::UnexpectedEof.into());
            }
        }
        body.extend(buffer.drain(..size));
        buffer.drain(..2);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// The whole HTTP response to `request`.
fn respond(request: &Request, shared: &Shared) -> Vec<u8> {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or_else(|_| {
        if request.body.is_empty() {
            Value::Null
        } else {
            Value::String(String::from_utf8_lossy(&request.body).into_owned())
        }
    });
    let route = request.path.split('?').next().unwrap_or_default();
    let mut log = shared.log();
    log.requests.push(json!({"method": request.method, "path": request.path, "body": body}));
    match (request.method.as_str(), route) {
        ("POST", "/v1/messages") => {
            record_tool_results(&mut log, &body);
            log.messages += 1;
            let id = format!("msg_fake_{:06}", log.messages);
            let model = body["model"].as_str().unwrap_or("claude-sonnet-4-5").to_owned();
            let call = match is_main_turn(&body, shared.main_tool()) {
                true => shared.script.get(log.called),
                false => None,
            };
            log.called += usize::from(call.is_some());
            drop(log);
            // The recorder's "$planfile": the plan file plan mode's reminder named.
            let input = call.map(|call| with_plan_file(&call.input, &request.body));
            let content = match (call, &input) {
                (Some(call), Some(input)) => Content::ToolUse(input, &call.id, &call.name),
                _ => Content::Text(DONE_TEXT),
            };
            if body["stream"] == true {
                http(200, "text/event-stream", &events(&id, &model, &content))
            } else {
                http(200, "application/json", &message(&id, &model, &content).to_string())
            }
        }
        ("POST", "/v1/messages/count_tokens") => {
            http(200, "application/json", r#"{"input_tokens":10}"#)
        }
        (method, _) => {
            let error = json!({"type": "error", "error": {"type": "not_found_error",
                "message": format!("the fake API has no route {method} {}", request.path)}});
            let mut response = http(404, "application/json", &error.to_string());
            if method == "HEAD" {
                // Headers only (2.1.197 sends `HEAD /` first, to open the connection early).
                let head_end = find(&response, b"\r\n\r\n").map_or(response.len(), |at| at + 4);
                response.truncate(head_end);
            }
            response
        }
    }
}

/// Whether a Messages request is a main-loop turn: its tools include `tool_name`.
fn is_main_turn(body: &Value, tool_name: &str) -> bool {
    body["tools"].as_array().is_some_and(|tools| tools.iter().any(|tool| tool["name"] == tool_name))
}

/// Keeps the `tool_result` blocks of what the model reads now: every message after its own last
/// one (each distinct block once). 2.1.332 sends its reminders as messages of their own after
/// the tool_result (`## Exited Plan Mode`), so the last message alone may not hold it.
fn record_tool_results(log: &mut Log, body: &Value) {
    let Some(messages) = body["messages"].as_array() else { return };
    let since =
        messages.iter().rposition(|message| message["role"] == "assistant").map_or(0, |at| at + 1);
    let blocks =
        messages[since..].iter().filter_map(|message| message["content"].as_array()).flatten();
    for block in blocks.filter(|block| block["type"] == "tool_result") {
        let mut block = block.clone();
        if let Some(object) = block.as_object_mut() {
            object.remove("cache_control");
        }
        if !log.tool_results.contains(&block) {
            log.tool_results.push(block);
        }
    }
}

/// `input` with `"$planfile"` replaced by the plan file the request names, as the 2.1.332
/// recorder's script does (`/nonexistent/plan.md` when it names none).
fn with_plan_file(input: &Value, raw: &[u8]) -> Value {
    let text = input.to_string();
    if !text.contains("$planfile") {
        return input.clone();
    }
    let path = plan_file(&String::from_utf8_lossy(raw));
    let path = path.unwrap_or_else(|| "/nonexistent/plan.md".to_owned());
    serde_json::from_str(&text.replace("$planfile", &path)).expect("still JSON")
}

/// The first `/…/.claude/plans/<slug>.md` in `text` (the recorder's `PLAN_FILE` pattern): the
/// path starts at the first `/` after a space, quote or backslash (a JSON escape before it).
fn plan_file(text: &str) -> Option<String> {
    let marker = "/.claude/plans/";
    let at = text.find(marker)?;
    let stops = |c: char| c.is_whitespace() || "\"'`()\\".contains(c);
    let after_stop = text[..at].rfind(stops).map_or(0, |index| index + 1);
    let start = text[after_stop..at].find('/').map_or(at, |index| after_stop + index);
    let rest = &text[at + marker.len()..];
    let span = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-".contains(c)))
        .unwrap_or(rest.len());
    let slug = &rest[..rest[..span].rfind(".md")?];
    Some(format!("{}{marker}{slug}.md", &text[start..at]))
}

/// A short description of a message, for the request summary.
fn describe_message(message: &Value) -> String {
    let role = message["role"].as_str().unwrap_or("?");
    let blocks = match &message["content"] {
        Value::String(text) => vec![format!("text {:?}", crate::support::clip(text, 80))],
        Value::Array(blocks) => blocks
            .iter()
            .map(|block| match block["type"].as_str() {
                Some("text") => {
                    format!(
                        "text {:?}",
                        crate::support::clip(block["text"].as_str().unwrap_or(""), 80)
                    )
                }
                Some("tool_result") => format!("tool_result for {}", block["tool_use_id"]),
                Some(kind) => kind.to_owned(),
                None => "?".to_owned(),
            })
            .collect(),
        _ => Vec::new(),
    };
    format!("{role} [{}]", blocks.join(", "))
}

/// What the fake model says.
enum Content<'a> {
    /// The input, the tool_use id, the tool's name.
    ToolUse(&'a Value, &'a str, &'a str),
    Text(&'a str),
}

impl Content<'_> {
    fn stop_reason(&self) -> &'static str {
        match self {
            Content::ToolUse(..) => "tool_use",
            Content::Text(_) => "end_turn",
        }
    }

    /// The finished content block.
    fn block(&self) -> Value {
        match self {
            Content::ToolUse(input, id, name) => json!({"type": "tool_use", "id": id,
                "name": name, "input": input}),
            Content::Text(text) => json!({"type": "text", "text": text}),
        }
    }
}

fn usage(output_tokens: u32) -> Value {
    json!({"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
        "output_tokens": output_tokens})
}

/// A non-streaming Messages response.
fn message(id: &str, model: &str, content: &Content) -> Value {
    json!({"id": id, "type": "message", "role": "assistant", "model": model,
        "content": [content.block()], "stop_reason": content.stop_reason(),
        "stop_sequence": null, "usage": usage(5)})
}

/// A streaming Messages response: the Server-Sent Events of one message with one content block.
fn events(id: &str, model: &str, content: &Content) -> String {
    let (start_block, delta) = match content {
        Content::ToolUse(input, id, name) => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
        ),
        Content::Text(text) => {
            (json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": text}))
        }
    };
    let events = [
        json!({"type": "message_start", "message": {"id": id, "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": usage(1)}}),
        json!({"type": "content_block_start", "index": 0, "content_block": start_block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta",
            "delta": {"stop_reason": content.stop_reason(), "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    let mut text = String::new();
    for event in events {
        let name = event["type"].as_str().unwrap_or("message");
        text.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    text
}

fn http(status: u16, content_type: &str, body: &str) -> Vec<u8> {
    let reason = if status == 200 { "OK" } else { "Not Found" };
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\n\
         request-id: req_fake\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}
