//! An OpenCode server over HTTP (issue 13): the `/global/event` stream of every project
//! directory, the pending questions and permission requests (issue 26), and the reply that
//! answers one. Blocking calls
//! with timeouts (ureq), Basic auth when the server has a password. What the bytes mean is
//! `protocol::opencode`; this file only moves them.
//!
//! The event stream is Server-Sent Events: [`SseReader`] is a small parser of that framing
//! (`data:` lines up to a blank line), since the SSE crates are async or pull in a runtime.

pub mod host;

use std::io::{self, BufReader, Read};
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use crate::protocol::opencode::{self, PermissionAsked, PermissionReply, QuestionRequest, Reply};
use crate::transport::lines::{self, Frame};

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one call (a list, a reply) may take in all.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// The longest silence on the event stream: the server sends a heartbeat every 10 s, so a
/// stream quiet for longer is dead (a server gone without closing) and is opened again.
const STREAM_SILENCE: Duration = Duration::from_secs(35);
/// How long a server may take to answer a request with its status line and headers. A server
/// that is starting accepts connections before it answers them: without this bound the event
/// stream's request waited for [`STREAM_SILENCE`] after a restart, and the questions asked
/// meanwhile were seen that much later.
const RESPONSE_HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest event askpane reads (a question with long texts is a few KB).
const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;
/// The largest JSON body read from a call.
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// Why a call to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot reach the OpenCode server at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error(
        "the OpenCode server at {0} wants a password (401): give it with --password or \
         OPENCODE_SERVER_PASSWORD"
    )]
    Unauthorized(String),
    #[error("{what}: HTTP {status}: {body}")]
    Status { what: String, status: u16, body: String },
    #[error("{what}: {detail}")]
    Unreadable { what: String, detail: String },
}

impl ServerError {
    /// True when the question is not pending there (already answered, dismissed, or gone with a
    /// server restart): nothing more can be sent for it.
    pub fn not_found(&self) -> bool {
        matches!(self, ServerError::Status { status: 404, .. })
    }
}

/// One OpenCode server: where it is and how to sign in.
#[derive(Clone)]
pub struct Server {
    base: String,
    authorization: Option<String>,
    calls: ureq::Agent,
    stream: ureq::Agent,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("Server").field("base", &self.base).finish_non_exhaustive()
    }
}

impl Server {
    /// The server at `url` (`http://127.0.0.1:4096`), with Basic auth as `username` when a
    /// password is given.
    pub fn new(url: &str, username: &str, password: Option<&str>) -> Server {
        let agent = |read: Option<Duration>, global: Option<Duration>| -> ureq::Agent {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_connect(Some(CONNECT_TIMEOUT))
                .timeout_recv_response(Some(RESPONSE_HEAD_TIMEOUT))
                .timeout_per_read(read)
                .timeout_global(global)
                .build()
                .into()
        };
        let authorization = password.map(|password| {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
            format!("Basic {token}")
        });
        Server {
            base: url.trim_end_matches('/').to_owned(),
            authorization,
            calls: agent(Some(CALL_TIMEOUT), Some(CALL_TIMEOUT)),
            stream: agent(Some(STREAM_SILENCE), None),
        }
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    fn get(
        &self,
        agent: &ureq::Agent,
        path: &str,
    ) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        let request = agent.get(format!("{}{path}", self.base));
        match &self.authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        }
    }

    fn post(&self, path: &str) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        let request = self.calls.post(format!("{}{path}", self.base));
        match &self.authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        }
    }

    /// Reads a call's response: its JSON when 2xx, else the error that says why.
    fn json(
        &self,
        what: &str,
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, ServerError> {
        let mut response = response.map_err(|error| self.unreachable(error))?;
        let status = response.status().as_u16();
        let body =
            response.body_mut().with_config().limit(MAX_BODY_BYTES).read_to_string().map_err(
                |error| ServerError::Unreadable {
                    what: what.to_owned(),
                    detail: error.to_string(),
                },
            )?;
        match status {
            200..=299 => serde_json::from_str(&body).map_err(|error| ServerError::Unreadable {
                what: what.to_owned(),
                detail: format!("not JSON: {error}"),
            }),
            401 => Err(ServerError::Unauthorized(self.base.clone())),
            _ => Err(ServerError::Status {
                what: what.to_owned(),
                status,
                body: body.chars().take(300).collect(),
            }),
        }
    }

    fn unreachable(&self, error: ureq::Error) -> ServerError {
        ServerError::Unreachable { url: self.base.clone(), detail: error.to_string() }
    }

    /// The project directories OpenCode has sessions in.
    pub fn directories(&self) -> Result<Vec<String>, ServerError> {
        let response = self.get(&self.calls, "/experimental/session").call();
        let body = self.json("listing sessions", response)?;
        Ok(opencode::session_directories(&body))
    }

    /// The questions pending in `directory`.
    pub fn pending(&self, directory: &str) -> Result<Vec<QuestionRequest>, ServerError> {
        let response = self.get(&self.calls, "/question").query("directory", directory).call();
        let what = format!("listing the questions of {directory}");
        let body = self.json(&what, response)?;
        opencode::pending(&body).map_err(|detail| ServerError::Unreadable { what, detail })
    }

    /// The permission requests pending in `directory`.
    pub fn pending_permissions(
        &self,
        directory: &str,
    ) -> Result<Vec<PermissionAsked>, ServerError> {
        let response = self.get(&self.calls, "/permission").query("directory", directory).call();
        let what = format!("listing the permission requests of {directory}");
        let body = self.json(&what, response)?;
        opencode::pending_permissions(&body)
            .map_err(|detail| ServerError::Unreadable { what, detail })
    }

    /// Sends `reply` for the permission request `id` of `directory`.
    pub fn reply_permission(
        &self,
        directory: &str,
        id: &str,
        reply: &PermissionReply,
    ) -> Result<(), ServerError> {
        let path = format!("/permission/{}/reply", path_segment(id));
        let response = self
            .post(&path)
            .query("directory", directory)
            .content_type("application/json")
            .send(reply.body().to_string());
        self.json(&format!("answering {id}"), response).map(|_| ())
    }

    /// The sessions of `directory` that are working (their questions can still be answered).
    pub fn working_sessions(&self, directory: &str) -> Result<Vec<String>, ServerError> {
        let response =
            self.get(&self.calls, "/session/status").query("directory", directory).call();
        let what = format!("listing the sessions of {directory}");
        let body = self.json(&what, response)?;
        opencode::working_sessions(&body).map_err(|detail| ServerError::Unreadable { what, detail })
    }

    /// Sends `reply` for the question `id` of `directory`.
    pub fn send(&self, directory: &str, id: &str, reply: &Reply) -> Result<(), ServerError> {
        let response = match reply.body() {
            Some(body) => {
                let path = format!("/question/{}/reply", path_segment(id));
                self.post(&path)
                    .query("directory", directory)
                    .content_type("application/json")
                    .send(body.to_string())
            }
            None => {
                let path = format!("/question/{}/reject", path_segment(id));
                self.post(&path).query("directory", directory).send_empty()
            }
        };
        self.json(&format!("answering {id}"), response).map(|_| ())
    }

    /// Opens `/global/event`: the events of every directory, until the server ends the stream
    /// or is silent too long.
    pub fn events(&self) -> Result<SseReader<impl Read>, ServerError> {
        let response = self
            .get(&self.stream, "/global/event")
            .header("Accept", "text/event-stream")
            .call()
            .map_err(|error| self.unreachable(error))?;
        match response.status().as_u16() {
            200 => Ok(SseReader::new(response.into_body().into_reader())),
            401 => Err(ServerError::Unauthorized(self.base.clone())),
            status => Err(ServerError::Status {
                what: "opening /global/event".to_owned(),
                status,
                body: String::new(),
            }),
        }
    }
}

/// A question id as a path segment: OpenCode's ids are `que_` and letters and digits; anything
/// else is percent-encoded rather than trusted.
fn path_segment(id: &str) -> String {
    id.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' => (byte as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// Server-Sent Events framing: each event's `data:` lines joined by `\n`; comments, `event:`,
/// `id:` and `retry:` lines are skipped (OpenCode puts everything in `data`).
pub struct SseReader<R> {
    lines: BufReader<R>,
}

impl<R: Read> SseReader<R> {
    pub fn new(reader: R) -> Self {
        SseReader { lines: BufReader::new(reader) }
    }

    /// The next event's data; `None` when the stream ended.
    pub fn next_event(&mut self) -> io::Result<Option<String>> {
        let mut data = String::new();
        let mut has_data = false;
        let mut line = Vec::new();
        loop {
            line.clear();
            // A line longer than an event may be is read in pieces of that length: a data line
            // that long makes the event too long (below).
            let limit = MAX_EVENT_BYTES as u64 + 1;
            if lines::read_frame(&mut self.lines, &mut line, limit)? == Frame::End {
                return Ok(has_data.then_some(data));
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            if text.is_empty() {
                if has_data {
                    return Ok(Some(data));
                }
                continue;
            }
            if let Some(value) = text.strip_prefix("data:") {
                if has_data {
                    data.push('\n');
                }
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
                has_data = true;
                if data.len() > MAX_EVENT_BYTES {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("an event longer than {MAX_EVENT_BYTES} bytes"),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_frames_are_read_by_their_data_lines() {
        let bytes =
            b": comment\ndata: {\"a\":1}\n\nevent: x\ndata: one\ndata: two\r\n\r\ndata:tail";
        let mut reader = SseReader::new(&bytes[..]);
        assert_eq!(reader.next_event().expect("reads").as_deref(), Some("{\"a\":1}"));
        assert_eq!(reader.next_event().expect("reads").as_deref(), Some("one\ntwo"));
        assert_eq!(reader.next_event().expect("reads").as_deref(), Some("tail"));
        assert_eq!(reader.next_event().expect("reads"), None);
    }

    #[test]
    fn ids_are_escaped_in_paths() {
        assert_eq!(
            path_segment("que_2025bf653001wnfD8i8huoXyJ1"),
            "que_2025bf653001wnfD8i8huoXyJ1"
        );
        assert_eq!(path_segment("../x?y"), "%2E%2E%2Fx%3Fy");
    }
}
