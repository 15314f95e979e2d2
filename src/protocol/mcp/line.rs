//! One line of `askpane mcp`'s input, read before rmcp sees it (issue 24 item 22): a message
//! rmcp reads as what it is is handed on; every other line is answered here, so that a request
//! whose id can be read gets its error with that id and the right JSON-RPC 2.0 code.
//!
//! rmcp (3.11) skips a line that is not JSON (and an id like `1e400`, which serde_json cannot
//! hold as a number, makes the whole line "not JSON" to it); answers JSON of the wrong shape
//! with an Invalid Request that has no `id` member at all; and reads a known method whose
//! params do not fit its schema (`tools/call` with `"arguments": [1]`) as an unknown method
//! (-32601). Here: -32700 Parse error (id null) for what is not JSON, -32600 Invalid Request,
//! -32601 Method not found, -32602 Invalid params, each with the request's id when it has a
//! readable one (a string or a number), else `"id": null`.
//!
//! Pure: no IO; `cli::mcp` reads stdin and writes what this returns.

#[allow(
    deprecated,
    reason = "rmcp still reads the deprecated methods: their misfits are -32602 too"
)]
use rmcp::model::{
    CallToolRequest, CancelTaskRequest, ClientJsonRpcMessage, ClientRequest, CompleteRequest,
    ConstString, DiscoverRequest, GetPromptRequest, GetSkillRequest, GetTaskRequest,
    InitializeRequest, JsonRpcMessage, JsonRpcRequest, ListPromptsRequest,
    ListResourceTemplatesRequest, ListResourcesRequest, ListSkillsRequest, ListToolsRequest,
    PingRequest, ReadResourceDirectoryRequest, ReadResourceRequest, Request, RequestId,
    RequestNoParam, RequestOptionalParam, SetLevelRequest, SubscribeRequest,
    SubscriptionsListenRequest, UnsubscribeRequest, UpdateTaskRequest,
};
use serde_json::value::RawValue;

/// What `askpane mcp` does with one line of its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Screened {
    /// Nothing but whitespace: nothing to read, nothing to say.
    Blank,
    /// A message rmcp reads as what it is: it is handed on, unchanged.
    Pass,
    /// A notification rmcp cannot read: never answered (JSON-RPC 2.0 answers no
    /// notification), only logged, for this reason.
    Ignore(String),
    /// Answered here: the reply, one line of JSON without its newline.
    Answer(String),
}

/// JSON-RPC 2.0's error codes.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const METHOD_NOT_FOUND: i32 = -32601;
const INVALID_PARAMS: i32 = -32602;

/// The most of a parser's explanation quoted back: serde's messages can quote the input (a
/// string param of 8 MiB), and the reply must stay a reply.
const MAX_WHY_CHARS: usize = 300;

/// Reads input line `number` (its newline, if any, included) as `askpane mcp` does.
pub fn screen(line: &[u8], number: u64) -> Screened {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(error) => {
            let why = format!("is not UTF-8 (at byte {})", error.valid_up_to() + 1);
            return Screened::Answer(parse_error(number, &why));
        }
    };
    // rmcp skips a byte order mark, as other MCP SDKs do.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_matches(is_json_whitespace).is_empty() {
        return Screened::Blank;
    }
    // The one parse of every well-formed message: exactly what rmcp's reader does.
    let error = match serde_json::from_str::<ClientJsonRpcMessage>(text) {
        Ok(JsonRpcMessage::Request(request)) => return read_request(&request, text, number),
        Ok(_) => return Screened::Pass,
        Err(error) => error,
    };
    // Not a message rmcp reads: JSON at all? A raw value checks the syntax without holding any
    // number, so `1e400` is JSON here (serde_json's `Value` refuses it: out of range).
    let raw = match serde_json::from_str::<&RawValue>(text) {
        Ok(raw) => raw,
        Err(syntax) => {
            let why = format!("is not JSON ({})", brief(&syntax.to_string()));
            return Screened::Answer(parse_error(number, &why));
        }
    };
    match raw.get().as_bytes().first() {
        Some(b'[') => batch(raw, number),
        Some(b'{') => match refuse(raw, number, &brief(&error.to_string())) {
            Refusal::Answer(reply) => Screened::Answer(reply.line()),
            Refusal::Ignore(why) => Screened::Ignore(why),
        },
        _ => Screened::Answer(
            Reply::invalid_request(None, number, "is not a JSON-RPC message (an object)").line(),
        ),
    }
}

/// The JSON-RPC 2.0 Parse error (-32700, id null) for input line `line`, which could not be
/// read as a message: `why` says what was wrong and where ("is not JSON (…)", "is not UTF-8
/// …", "is longer than …"), so the client's author can find it.
pub fn parse_error(line: u64, why: &str) -> String {
    Reply {
        id: None,
        code: PARSE_ERROR,
        message: format!("Parse error: line {line} of the input {why}"),
    }
    .line()
}

/// What one message rmcp cannot read gets.
enum Refusal<'a> {
    Answer(Reply<'a>),
    Ignore(String),
}

/// An error reply. `id` is the request's id as the client wrote it (`None`: `null`).
///
/// The id is echoed as raw JSON text, not as a number parsed and written again: serde_json
/// (without `arbitrary_precision`, which would change every number askpane and rmcp read) has
/// no number for `1e400` or `18446744073709551616`, and one written back from an `f64` could
/// differ from the client's (`1.5e300`). The client's own text, valid JSON since it parsed,
/// is the id it sent, whatever its JSON library makes of it.
struct Reply<'a> {
    id: Option<&'a str>,
    code: i32,
    message: String,
}

impl<'a> Reply<'a> {
    fn invalid_request(id: Option<&'a str>, line: u64, why: &str) -> Self {
        Reply {
            id,
            code: INVALID_REQUEST,
            message: format!("Invalid request: line {line} of the input {why}"),
        }
    }

    /// The reply as one line of JSON.
    fn line(&self) -> String {
        let message = serde_json::Value::String(self.message.clone());
        let id = self.id.unwrap_or("null");
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{},"message":{message}}}}}"#,
            self.code
        )
    }
}

/// A request rmcp read: handed on, unless rmcp would answer it with another id than the
/// client's (it reads `2e-400` as 0), or its method is one MCP defines and its params do not
/// fit that method's schema (rmcp then reads it as a custom request: -32601 Method not found).
fn read_request(request: &JsonRpcRequest<ClientRequest>, text: &str, line: u64) -> Screened {
    let numbered = matches!(request.id, RequestId::Number(_));
    let custom = match &request.request {
        ClientRequest::CustomRequest(custom) => Some(custom),
        _ => None,
    };
    if !numbered && custom.is_none() {
        return Screened::Pass;
    }
    // Not `None` (rmcp read an id); never an answer without the id, though.
    let Some(id) = raw_id(text).and_then(readable_id) else { return Screened::Pass };
    if numbered && !carried(id) {
        return Screened::Answer(Reply::invalid_request(Some(id), line, UNCARRIED_ID).line());
    }
    match custom.map(|custom| (custom, typed(&custom.method, text))) {
        Some((custom, Typed::Misfit(why))) => {
            Screened::Answer(invalid_params(id, &custom.method, &why).line())
        }
        _ => Screened::Pass,
    }
}

/// Why an id is refused that is a number askpane cannot answer with as written.
const UNCARRIED_ID: &str = "has an \"id\" askpane cannot carry: MCP needs a string or an \
                            integer, and one from -2^63 to 2^63-1 here";

/// The message's `id` member as written (`null` too), if it has one.
fn raw_id(text: &str) -> Option<&RawValue> {
    #[derive(serde::Deserialize)]
    struct Id<'a> {
        #[serde(borrow, default, deserialize_with = "present")]
        id: Option<&'a RawValue>,
    }
    fn present<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<&'de RawValue>, D::Error> {
        serde::Deserialize::deserialize(deserializer).map(Some)
    }
    serde_json::from_str::<Id<'_>>(text).ok().and_then(|message| message.id)
}

/// Whether rmcp answers a request with id `id` (readable JSON text) with that same id: a
/// string (rmcp may write its escapes otherwise, never another string), or a number that is
/// exactly the integer rmcp reads from it (`1.0` and `1e2` are 1 and 100; `2e-400` is no 0).
fn carried(id: &str) -> bool {
    match serde_json::from_str::<RequestId>(id) {
        Ok(RequestId::String(_)) => true,
        Ok(RequestId::Number(number)) => exact_integer(id) == Some(number),
        Err(_) => false,
    }
}

/// The integer a JSON number's text stands for exactly, if it is one that fits an `i64`.
fn exact_integer(text: &str) -> Option<i64> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (text.get(..at)?, text.get(at + 1..)?.parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let exponent = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
    let significant = digits.trim_start_matches('0');
    let kept = significant.trim_end_matches('0');
    if kept.is_empty() {
        return Some(0);
    }
    let exponent = exponent.checked_add(i64::try_from(significant.len() - kept.len()).ok()?)?;
    // Beyond 19 digits no i64 holds it; a negative exponent left means a fraction.
    if exponent < 0 || i64::try_from(kept.len()).ok()?.checked_add(exponent)? > 19 {
        return None;
    }
    let zeros = usize::try_from(exponent).ok()?;
    let magnitude: i128 = format!("{kept}{}", "0".repeat(zeros)).parse().ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

fn invalid_params<'a>(id: &'a str, method: &str, why: &str) -> Reply<'a> {
    Reply {
        id: Some(id),
        code: INVALID_PARAMS,
        message: format!("Invalid params for {method}: {why}"),
    }
}

/// Why a JSON object rmcp cannot read is not a message, with the request's id when it has a
/// readable one. `rmcp_error` is what rmcp's parser said.
fn refuse<'a>(raw: &'a RawValue, line: u64, rmcp_error: &str) -> Refusal<'a> {
    let Ok(members) = serde_json::from_str::<Members<'a>>(raw.get()) else {
        return Refusal::Answer(Reply::invalid_request(None, line, "is not a JSON-RPC message"));
    };
    let has = |member: &str| members.get(member).is_some();
    let text_of = |member: &str| members.text(member);
    let id = members.get("id");
    let echoed = id.and_then(readable_id);
    let refused = |why: &str| Refusal::Answer(Reply::invalid_request(echoed, line, why));
    if !has("method") {
        if has("result") || has("error") {
            // A response askpane cannot read (to its `roots/list`): its id is askpane's own,
            // not one of the client's requests, so it is not echoed.
            let why = format!("is a response askpane cannot read ({rmcp_error})");
            return Refusal::Answer(Reply::invalid_request(None, line, &why));
        }
        return refused("has no \"method\"");
    }
    let version_ok = text_of("jsonrpc").is_some_and(|version| version == "2.0");
    let method_name = text_of("method");
    let Some(id) = id else {
        // A notification: never answered, unless it is no valid JSON-RPC at all.
        return match is_notification(&members) {
            true => Refusal::Ignore(format!(
                "line {line} of the input is a {} notification askpane cannot read \
                 ({rmcp_error}); ignored",
                method_name.unwrap_or_default()
            )),
            false => refused(
                "is neither a request nor a notification: \"jsonrpc\" must be \"2.0\" and \
                 \"method\" a string",
            ),
        };
    };
    if let Some(twice) = members.repeated() {
        // Two ids: neither is the request's.
        let echoed = if twice == "id" { None } else { echoed };
        let why = format!("has the member \"{twice}\" more than once");
        return Refusal::Answer(Reply::invalid_request(echoed, line, &why));
    }
    if has("result") || has("error") {
        return refused("has both \"method\" and \"result\" or \"error\"");
    }
    if echoed.is_none() {
        return refused("has an \"id\" that is neither a string nor a number");
    }
    if !carried(id.get()) {
        return refused(UNCARRIED_ID);
    }
    if !version_ok {
        return refused("has no \"jsonrpc\": \"2.0\"");
    }
    let Some(method_name) = method_name else {
        return refused("has a \"method\" that is not a string");
    };
    let params_object = members.get("params").is_none_or(|params| params.get().starts_with('{'));
    match typed(&method_name, raw.get()) {
        Typed::Misfit(_) if !params_object => {
            Refusal::Answer(invalid_params(id.get(), &method_name, "\"params\" must be an object"))
        }
        Typed::Misfit(why) => Refusal::Answer(invalid_params(id.get(), &method_name, &why)),
        // The method's schema fits, yet rmcp read no message: say what rmcp said.
        Typed::Fits => Refusal::Answer(invalid_params(id.get(), &method_name, rmcp_error)),
        Typed::Unknown => Refusal::Answer(Reply {
            id: Some(id.get()),
            code: METHOD_NOT_FOUND,
            message: format!("Method not found: {method_name}"),
        }),
    }
}

/// A batch (a JSON array): MCP has none since 2025-06-18, and rmcp reads none. JSON-RPC 2.0
/// answers it with an array holding an error for each request in it (none for its
/// notifications and responses), or a single Invalid Request when it is empty.
fn batch(raw: &RawValue, line: u64) -> Screened {
    let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) else {
        return Screened::Answer(
            Reply::invalid_request(None, line, "is not a JSON-RPC message").line(),
        );
    };
    if items.is_empty() {
        return Screened::Answer(Reply::invalid_request(None, line, "is an empty batch").line());
    }
    let replies: Vec<String> =
        items.iter().filter_map(|item| batch_reply(item, line)).map(|reply| reply.line()).collect();
    match replies.is_empty() {
        true => Screened::Ignore(format!(
            "line {line} of the input is a batch of notifications and responses; MCP has no \
             batches; ignored"
        )),
        false => Screened::Answer(format!("[{}]", replies.join(","))),
    }
}

/// The reply to one message of a batch: the batch's error, with the message's id when it has a
/// readable one; none for a notification or a response.
fn batch_reply(item: &RawValue, line: u64) -> Option<Reply<'_>> {
    const WHY: &str = "is a batch; MCP has no batches (since 2025-06-18): send each message \
                       on a line of its own";
    let Ok(members) = serde_json::from_str::<Members<'_>>(item.get()) else {
        return Some(Reply::invalid_request(None, line, WHY));
    };
    let has = |member: &str| members.get(member).is_some();
    if !has("method") && (has("result") || has("error")) {
        return None;
    }
    if let Some(id) = members.get("id") {
        return Some(Reply::invalid_request(readable_id(id), line, WHY));
    }
    match is_notification(&members) {
        true => None,
        false => Some(Reply::invalid_request(None, line, WHY)),
    }
}

/// Whether a message without an id is a JSON-RPC 2.0 notification (which is never answered):
/// `"jsonrpc": "2.0"` and a `method` that is a string.
fn is_notification(members: &Members<'_>) -> bool {
    members.text("jsonrpc").is_some_and(|version| version == "2.0")
        && members.text("method").is_some()
}

/// A JSON object's members in their order, a repeated one kept (a map would keep one of two
/// ids), each value as its raw text: nothing in it is read as a number.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Members<'a> {
    /// The first value of `name`.
    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(member, _)| member == name).map(|(_, value)| *value)
    }

    /// The value of `name`, when it is a string.
    fn text(&self, name: &str) -> Option<String> {
        self.get(name).and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// A member of JSON-RPC's that appears more than once.
    fn repeated(&self) -> Option<&'static str> {
        ["jsonrpc", "id", "method", "params", "result", "error"]
            .into_iter()
            .find(|name| self.0.iter().filter(|(member, _)| member == name).nth(1).is_some())
    }
}

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members<'de>;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The id's JSON text when it is one a reply can carry back: a string or a number (any
/// number the client wrote, `1e400` too). `null`, booleans, objects and arrays are not ids.
fn readable_id(id: &RawValue) -> Option<&str> {
    let text = id.get();
    matches!(text.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9')).then_some(text)
}

/// Whether a method is one rmcp reads with a schema of its own, and whether `message` fits it.
enum Typed {
    /// No schema: a method MCP does not define (rmcp's custom request).
    Unknown,
    Fits,
    /// The params do not fit the method's schema: why, as serde said.
    Misfit(String),
}

/// The method a typed rmcp request stands for.
trait Method {
    const METHOD: &'static str;
}

impl<M: ConstString, P> Method for Request<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString, P> Method for RequestOptionalParam<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString> Method for RequestNoParam<M> {
    const METHOD: &'static str = M::VALUE;
}

/// Every typed variant of rmcp's `ClientRequest` (its custom request aside): a new one in a
/// later rmcp that is missing here only turns its misfits' -32602 into -32601.
macro_rules! typed_requests {
    ($($request:ty),* $(,)?) => {
        #[allow(deprecated, reason = "rmcp still reads the deprecated methods")]
        fn typed(method: &str, message: &str) -> Typed {
            $(
                if method == <$request as Method>::METHOD {
                    return match serde_json::from_str::<JsonRpcRequest<$request>>(message) {
                        Ok(_) => Typed::Fits,
                        Err(error) => Typed::Misfit(brief(&error.to_string())),
                    };
                }
            )*
            Typed::Unknown
        }

        /// The methods [`typed`] knows, for the tests.
        #[cfg(test)]
        #[allow(deprecated, reason = "rmcp still reads the deprecated methods")]
        const TYPED_METHODS: &[&str] = &[$(<$request as Method>::METHOD),*];
    };
}

typed_requests!(
    PingRequest,
    InitializeRequest,
    DiscoverRequest,
    CompleteRequest,
    SetLevelRequest,
    GetPromptRequest,
    ListPromptsRequest,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ReadResourceRequest,
    SubscriptionsListenRequest,
    SubscribeRequest,
    UnsubscribeRequest,
    CallToolRequest,
    ListToolsRequest,
    GetTaskRequest,
    UpdateTaskRequest,
    CancelTaskRequest,
    ListSkillsRequest,
    GetSkillRequest,
    ReadResourceDirectoryRequest,
);

fn is_json_whitespace(character: char) -> bool {
    matches!(character, ' ' | '\t' | '\r' | '\n')
}

/// `why`, cut to [`MAX_WHY_CHARS`] characters.
fn brief(why: &str) -> String {
    match why.char_indices().nth(MAX_WHY_CHARS) {
        Some((end, _)) => format!("{}…", why.get(..end).unwrap_or(why)),
        None => why.to_owned(),
    }
}

#[cfg(test)]
mod tests;
