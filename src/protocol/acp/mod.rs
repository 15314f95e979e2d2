//! The Agent Client Protocol (ACP) as askpane's client side speaks it: JSON-RPC 2.0 lines on an
//! agent's stdio, typed here without IO (issue 28).
//!
//! Hand-written serde over JSON values rather than the `agent-client-protocol` crate: askpane runs
//! no async runtime (its bridge is sync tungstenite, its hosts are named threads on blocking
//! pipes), the SDK 5.x needs one (`LocalBoxFuture` + a spawner) and broke its API in 5.0, and the
//! part askpane needs is five requests, two agent requests and one notification. Values are read
//! leniently (an unknown key or variant is kept as `Other`, never an error), as every other wire
//! in `protocol/` is, and tests compare literal JSON from real captures
//! (`tests/fixtures/acp/`, claude-agent-acp 0.100.0).
//!
//! Reading order: this file (framing of one JSON-RPC message and the client's requests),
//! [`update`] (`session/update` → transcript events), [`elicitation`] (`elicitation/create` →
//! questions or a generic form, and the reply), [`form`] (the generic form and its validation),
//! [`permission`] (`session/request_permission` → an approval, and the reply), [`transcript`]
//! (updates → the session's transcript).

pub mod elicitation;
pub mod form;
pub mod permission;
pub mod transcript;
pub mod update;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

/// How history and the inbox name an ACP agent's asks (`acp · my-project`).
pub const SOURCE: &str = "acp";

/// The ACP version askpane speaks (`initialize`'s `protocolVersion`).
pub const PROTOCOL_VERSION: u64 = 1;

/// The methods askpane sends.
pub const INITIALIZE: &str = "initialize";
pub const AUTHENTICATE: &str = "authenticate";
pub const SESSION_NEW: &str = "session/new";
pub const SESSION_PROMPT: &str = "session/prompt";
pub const SESSION_CANCEL: &str = "session/cancel";
/// The methods an agent sends askpane.
pub const SESSION_UPDATE: &str = "session/update";
pub const REQUEST_PERMISSION: &str = "session/request_permission";
pub const ELICITATION_CREATE: &str = "elicitation/create";
pub const ELICITATION_COMPLETE: &str = "elicitation/complete";
/// The same notification under MCP's name, which URL elicitation comes from.
pub const ELICITATION_COMPLETE_MCP: &str = "notifications/elicitation/complete";
/// JSON-RPC's own withdrawal of a request still waiting for its answer.
pub const CANCEL_REQUEST: &str = "$/cancel_request";

/// JSON-RPC's "method not found": the answer to an agent request askpane does not serve
/// (`fs/*`, `terminal/*`: askpane offers neither capability).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params": an agent request askpane could not read.
pub const INVALID_PARAMS: i64 = -32602;
/// ACP's "authentication required": the agent wants `authenticate` before a session.
pub const AUTH_REQUIRED: i64 = -32000;

/// One JSON-RPC message from the agent, sorted by what it is.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// The agent asks askpane something and waits for the answer with this `id`.
    Request { id: Value, method: String, params: Value },
    /// The agent tells askpane something (no answer).
    Notification { method: String, params: Value },
    /// The answer to one of askpane's requests.
    Response { id: Value, result: Result<Value, RpcError> },
}

/// A JSON-RPC error object as the agent sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{} (code {})", self.message, self.code)
    }
}

/// Why a line is no JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    #[error("the line is not a JSON object")]
    NotObject,
    #[error("the message has neither a method nor a result or error")]
    Neither,
    #[error("the message's `method` is not a string")]
    MethodNotText,
}

/// Sorts one JSON value (one line) into a [`Message`].
pub fn parse_message(value: Value) -> Result<Message, MessageError> {
    let Value::Object(mut object) = value else {
        return Err(MessageError::NotObject);
    };
    let id = object.remove("id").filter(|id| !id.is_null());
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Message::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Message::Notification { method, params }),
        (Some(_), _) => Err(MessageError::MethodNotText),
        (None, Some(id)) => {
            let result = match (object.remove("result"), object.remove("error")) {
                (_, Some(error)) => Err(rpc_error(&error)),
                (Some(result), None) => Ok(result),
                (None, None) => return Err(MessageError::Neither),
            };
            Ok(Message::Response { id, result })
        }
        (None, None) => Err(MessageError::Neither),
    }
}

fn rpc_error(error: &Value) -> RpcError {
    RpcError {
        code: error.get("code").and_then(Value::as_i64).unwrap_or_default(),
        message: text(error, "message").unwrap_or_default(),
        data: error.get("data").cloned(),
    }
}

/// A string field, when it is one.
pub(crate) fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A request askpane sends.
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification askpane sends (`session/cancel`).
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// askpane's answer to the agent's request `id`.
pub fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// askpane's error answer to the agent's request `id`.
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// `initialize`'s params: form elicitation offered (claude-agent-acp routes AskUserQuestion to
/// `elicitation/create` only when it is, and disables the tool otherwise), URL elicitation
/// offered (askpane shows the link and never opens it), and no file-system or terminal
/// capability: the agent keeps its own, askpane reads and runs nothing for it.
pub fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": {
            "fs": {"readTextFile": false, "writeTextFile": false},
            "terminal": false,
            "elicitation": {"form": {}, "url": {}},
        },
        "clientInfo": {"name": "askpane", "title": "askpane", "version": version},
    })
}

/// What `initialize` answered that askpane acts on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Initialized {
    pub protocol_version: u64,
    /// The agent's `authMethods`: `(id, name)`. askpane authenticates with none of them
    /// itself (it holds no credentials); an agent that refuses `session/new` for want of
    /// authentication is reported with these names.
    pub auth_methods: Vec<(String, String)>,
}

/// Reads `initialize`'s result.
pub fn parse_initialized(result: &Value) -> Initialized {
    let methods = result.get("authMethods").and_then(Value::as_array);
    let auth_methods = methods
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|method| {
            let id = text(method, "id")?;
            let name = text(method, "name").unwrap_or_else(|| id.clone());
            Some((id, name))
        })
        .collect();
    Initialized {
        protocol_version: result.get("protocolVersion").and_then(Value::as_u64).unwrap_or_default(),
        auth_methods,
    }
}

/// `session/new`'s params: the session works in `cwd`, with no MCP servers of askpane's.
pub fn new_session_params(cwd: &str) -> Value {
    json!({"cwd": cwd, "mcpServers": []})
}

/// The session id `session/new` answered, if it did.
pub fn parse_session_id(result: &Value) -> Option<String> {
    text(result, "sessionId")
}

/// `session/prompt`'s params: one text block.
pub fn prompt_params(session_id: &str, text: &str) -> Value {
    json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
}

/// `session/cancel`'s params (a notification: the agent ends the turn with `cancelled`).
pub fn cancel_params(session_id: &str) -> Value {
    json!({"sessionId": session_id})
}

/// Why a turn ended (`session/prompt`'s `stopReason`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
    Other(String),
}

/// Reads `session/prompt`'s result.
pub fn parse_stop_reason(result: &Value) -> StopReason {
    match text(result, "stopReason").as_deref() {
        Some("end_turn") => StopReason::EndTurn,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("max_turn_requests") => StopReason::MaxTurnRequests,
        Some("refusal") => StopReason::Refusal,
        Some("cancelled") => StopReason::Cancelled,
        other => StopReason::Other(other.unwrap_or_default().to_owned()),
    }
}

/// The `id` of the request a `$/cancel_request` withdraws.
pub fn cancelled_request_id(params: &Value) -> Option<Value> {
    params.get("requestId").or_else(|| params.get("id")).filter(|id| !id.is_null()).cloned()
}

/// An object's entries in order, or none.
pub(crate) fn entries(value: Option<&Value>) -> impl Iterator<Item = (&String, &Value)> {
    value.and_then(Value::as_object).into_iter().flat_map(Map::iter)
}
