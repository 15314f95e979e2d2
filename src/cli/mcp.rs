//! `askpane mcp` (issue 12): a stdio MCP server with one tool, `ask_user_question`, for every
//! agent that speaks MCP. rmcp does the protocol (framing, version negotiation, cancellation);
//! each call is handed to the inbox as a thin client (the code `ask` and `hook` use), and the
//! reply the inbox renders (`protocol::mcp::tool_result`) is the tool result. Only rmcp writes
//! stdout; every log line goes to stderr.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::Value;

use askpane::protocol::inbox::{ClientMode, Policy};
use askpane::protocol::mcp::{self, McpContext};
use askpane::protocol::{Outcome, ReplyShape, parse_message};
use askpane::transport::admit::admit;
use askpane::transport::pipe::MAX_INPUT_BYTES;

use super::answer::{Asked, PipeArgs, policy, record};
use super::client::deliver;
use super::exit;
use super::handover::{Delivered, Until};

#[derive(Args, Debug)]
pub(super) struct McpArgs {
    /// Seconds between progress notifications while the user has not answered (sent when the
    /// client gave a progress token, so clients that reset their timeout on progress wait on).
    #[arg(long, value_name = "SECS", default_value = "10",
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    progress_every: u64,
    /// How each call may be answered (`ASKPANE_ANSWERS`, `ASKPANE_SUBMIT`, … apply to every
    /// call), where the inbox shows it, where drafts and history are kept. `--no-inbox`: never
    /// a person (askpane mcp has no window of its own).
    #[command(flatten)]
    piped: PipeArgs,
}

/// How long the server waits for the client's `roots/list` answer before naming the working
/// directory instead.
const ROOTS_WAIT: Duration = Duration::from_secs(2);

/// `askpane mcp`: serves MCP on stdin/stdout until the client closes stdin.
pub(super) fn run(args: McpArgs) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name("mcp-runtime")
        .build()
        .context("cannot start the MCP server's runtime")?;
    let server = Server { args: Arc::new(args), calls: Arc::new(AtomicU64::new(0)) };
    let served = runtime.block_on(async move {
        let (to_server, server_input) = tokio::io::duplex(PIPE_BYTES);
        let (server_output, from_server) = tokio::io::duplex(PIPE_BYTES);
        let (parse_errors, parse_errors_out) = tokio::sync::mpsc::unbounded_channel();
        let reading = tokio::spawn(screen_input(to_server, parse_errors));
        let writing = tokio::spawn(write_output(from_server, parse_errors_out));
        let running = server
            .serve((server_input, server_output))
            .await
            .map_err(|error| anyhow::anyhow!("the MCP client did not initialize: {error}"))?;
        running.waiting().await.context("the MCP session failed")?;
        reading.abort();
        // Everything the server wrote reaches stdout before the process ends.
        let _ = writing.await;
        anyhow::Ok(())
    });
    // A call still waiting on the inbox is not waited for: the process ends, the connection
    // closes, and the inbox withdraws the question.
    runtime.shutdown_timeout(Duration::from_millis(200));
    served?;
    Ok(exit::OK)
}

/// Room in each in-process pipe between stdio and the MCP server.
const PIPE_BYTES: usize = 1 << 20;

/// The longest line passed on: the largest request askpane reads, escaped as JSON, and room
/// for the JSON-RPC around it. A longer line is skipped with an error, never held whole.
const MAX_LINE_BYTES: u64 = MAX_INPUT_BYTES * 2 + 64 * 1024;

/// Passes the client's lines on to the MCP server, except a line that is not a message at all:
/// not UTF-8, not JSON, or longer than [`MAX_LINE_BYTES`]. rmcp skips such lines without a word
/// (and its reader ends the session on bytes that are not UTF-8); JSON-RPC 2.0 asks for a Parse
/// error (-32700, id null), which goes to [`write_output`] saying what was wrong and where.
async fn screen_input(
    mut to_server: tokio::io::DuplexStream,
    parse_errors: tokio::sync::mpsc::UnboundedSender<String>,
) {
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
    let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    let mut number = 0_u64;
    loop {
        line.clear();
        match (&mut reader).take(MAX_LINE_BYTES).read_until(b'\n', &mut line).await {
            // The end of the input (or a pipe that broke): the session ends.
            Ok(0) | Err(_) => break,
            Ok(_) => number += 1,
        }
        let why = if line.last() != Some(&b'\n') && line.len() as u64 >= MAX_LINE_BYTES {
            // Read past the rest of it, a bounded piece at a time.
            let mut rest = Vec::new();
            while !matches!(rest.last(), Some(b'\n')) {
                rest.clear();
                let mut piece = (&mut reader).take(MAX_LINE_BYTES);
                if matches!(piece.read_until(b'\n', &mut rest).await, Ok(0) | Err(_)) {
                    break;
                }
            }
            Some(format!("is longer than {MAX_LINE_BYTES} bytes; it was skipped"))
        } else {
            match std::str::from_utf8(&line) {
                Err(error) => Some(format!("is not UTF-8 (at byte {})", error.valid_up_to() + 1)),
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => serde_json::from_str::<serde::de::IgnoredAny>(text)
                    .err()
                    .map(|error| format!("is not JSON ({error})")),
            }
        };
        if let Some(why) = why {
            let _ = parse_errors.send(mcp::parse_error(number, &why).to_string());
            continue;
        }
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        if to_server.write_all(&line).await.is_err() {
            break;
        }
    }
    // The server sees the end of the input, and ends the session.
    let _ = to_server.shutdown().await;
}

/// The one writer of stdout: the MCP server's lines, and the parse errors of
/// [`screen_input`], each a whole line, each flushed at once.
#[allow(
    clippy::disallowed_methods,
    reason = "askpane mcp's one writer of stdout: every MCP message passes through here"
)]
async fn write_output(
    from_server: tokio::io::DuplexStream,
    mut parse_errors: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mut stdout = tokio::io::stdout();
    let mut lines = tokio::io::BufReader::new(from_server).lines();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                // The server is done: what it wrote is out.
                _ => break,
            },
            Some(error) = parse_errors.recv() => error,
        };
        let written = stdout.write_all(line.as_bytes()).await;
        let written = written.and(stdout.write_all(b"\n").await).and(stdout.flush().await);
        if written.is_err() {
            // The client is gone; its end of the session follows from its closed input.
            break;
        }
    }
}

/// The MCP server: the flags every call shares, and a counter that names each call.
#[derive(Clone)]
struct Server {
    args: Arc<McpArgs>,
    calls: Arc<AtomicU64>,
}

/// The one tool, as `tools/list` shows it.
fn tool() -> Tool {
    let object = |value: Value| match value {
        Value::Object(object) => object,
        _ => serde_json::Map::new(),
    };
    Tool::new(mcp::TOOL, mcp::DESCRIPTION, object(mcp::input_schema()))
        .with_title(mcp::TITLE)
        .with_raw_output_schema(Arc::new(object(mcp::output_schema())))
        .with_annotations(
            ToolAnnotations::with_title(mcp::TITLE)
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        )
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("askpane", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "askpane shows your questions to the user in a window and returns their \
                 answers. Call ask_user_question when a decision is genuinely the user's.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != mcp::TOOL {
            let message = format!("no tool named {:?}; askpane has {:?}", request.name, mcp::TOOL);
            return Err(McpError::invalid_params(message, None));
        }
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call_context = call_context(&context, number).await;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let message = call_context.message(arguments);
        let result = self.answer(message, &context).await;
        let result: CallToolResult = serde_json::from_value(result).map_err(|error| {
            McpError::internal_error(format!("askpane built a broken tool result: {error}"), None)
        })?;
        Ok(result.into())
    }
}

/// Who calls and from where: the client's name and version, its roots (when it has any) or the
/// working directory, this server's session, and a name for the call.
async fn call_context(context: &RequestContext<RoleServer>, number: u64) -> McpContext {
    let peer = context.peer.peer_info();
    let client = peer.as_ref().map(|info| {
        let client = &info.client_info;
        format!("{} {}", client.name, client.version).trim().to_owned()
    });
    let roots = match peer.as_ref().is_some_and(|info| info.capabilities.roots.is_some()) {
        true => roots(context).await,
        false => Vec::new(),
    };
    let pid = std::process::id();
    // Claude Code names its tool call; a call asked again after an inbox restart keeps its id.
    let call_id = context
        .meta
        .get("claudecode/toolUseId")
        .and_then(Value::as_str)
        .map_or_else(|| format!("mcp-{pid}-{number}"), str::to_owned);
    McpContext {
        client: client.filter(|client| !client.is_empty()),
        cwd: std::env::current_dir().ok().map(|cwd| cwd.display().to_string()),
        roots,
        session: Some(format!("mcp-{pid}")),
        call_id,
    }
}

/// The client's roots (`roots/list`), or none when it does not answer in time. Roots are
/// deprecated by the newest MCP revision (SEP-2577), but they are how the clients of today say
/// where they work.
#[allow(deprecated, reason = "roots are deprecated by SEP-2577 but are what clients send today")]
async fn roots(context: &RequestContext<RoleServer>) -> Vec<String> {
    match tokio::time::timeout(ROOTS_WAIT, context.peer.list_roots()).await {
        Ok(Ok(listed)) => listed.roots.into_iter().map(|root| root.uri).collect(),
        _ => Vec::new(),
    }
}

impl Server {
    /// The tool result for one call: refused here when the input is invalid, else decided by
    /// the inbox (or here, when no inbox can be used). Progress goes to the client while the
    /// user has not answered; a cancel withdraws the question.
    async fn answer(&self, message: Value, context: &RequestContext<RoleServer>) -> Value {
        let policy = policy(&self.args.piped.answering, None, None);
        let args = Arc::clone(&self.args);
        let (cancel, cancelled) = crossbeam_channel::bounded(1);
        let mut waiting = tokio::task::spawn_blocking(move || {
            answer_blocking(&message, &policy, &args.piped, cancelled)
        });
        let token = context.meta.get_progress_token();
        let every = Duration::from_secs(self.args.progress_every);
        let started = Instant::now();
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tokio::select! {
                result = &mut waiting => {
                    return result.unwrap_or_else(|error| {
                        let reason = format!("askpane failed while waiting: {error}");
                        mcp::tool_result(&Outcome::Unavailable { reason })
                    });
                }
                () = context.ct.cancelled() => {
                    // The client took the call back: the question leaves the window now.
                    let _ = cancel.try_send(());
                    let _ = (&mut waiting).await;
                    return mcp::tool_result(&Outcome::Withdrawn);
                }
                _ = ticks.tick(), if token.is_some() => {
                    if let Some(token) = &token {
                        let waited = started.elapsed().as_secs();
                        let progress = ProgressNotificationParam::new(token.clone(), waited as f64)
                            .with_message(format!("waiting for the user to answer ({waited} s)"));
                        if let Err(error) = context.peer.notify_progress(progress).await {
                            eprintln!("askpane mcp: cannot send progress: {error}");
                        }
                    }
                }
            }
        }
    }
}

/// Answers one call's message on a blocking thread: refused at once when invalid; else handed
/// to the inbox; where no inbox can be used, decided here from the flags, or "no human can
/// answer" (askpane mcp opens no window of its own: its client gave it no display).
fn answer_blocking(
    message: &Value,
    policy: &Policy,
    args: &PipeArgs,
    cancelled: crossbeam_channel::Receiver<()>,
) -> Value {
    let incoming = match parse_message(message) {
        Ok(incoming) => incoming,
        Err(error) => return mcp::tool_result(&Outcome::Refused { reason: error.to_string() }),
    };
    if let Err(invalid) = askpane::protocol::validate(&incoming.input) {
        eprintln!("askpane mcp: the questions cannot be shown: {invalid}");
        let outcome = Outcome::Refused { reason: invalid.to_string() };
        let shape = ReplyShape { format: None, always_a_line: true };
        record(&args.store, Some(&Asked::new(&incoming, ClientMode::Mcp)), Some(&outcome), shape);
        return mcp::tool_result(&outcome);
    }
    let why_here = match args.inbox.no_inbox {
        true => "askpane mcp runs with --no-inbox (ASKPANE_NO_INBOX)".to_owned(),
        false => match deliver(message, ClientMode::Mcp, policy, args, Until::Cancelled(cancelled))
        {
            Delivered::Outcome { reply: Some(reply), problem, .. } => {
                if let Some(problem) = problem {
                    eprintln!("askpane mcp: {problem}");
                }
                return reply;
            }
            Delivered::Outcome { reply: None, .. } | Delivered::Cancelled => {
                return mcp::tool_result(&Outcome::Withdrawn);
            }
            Delivered::Stopped(signal) => return mcp::tool_result(&signal.outcome()),
            Delivered::Yourself(why) => why,
        },
    };
    let asked = Asked::new(&incoming, ClientMode::Mcp);
    let mut policy = policy.clone();
    if policy.needs_a_person() {
        policy.unavailable = Some(format!("askpane mcp has no window of its own, and {why_here}"));
    }
    let admission = admit(incoming, ClientMode::Mcp, &policy, None);
    if let Some(problem) = &admission.problem {
        eprintln!("askpane mcp: {problem}");
    }
    // Decided by the flags, or "no human": a request left open would be a closed window.
    drop(admission.request);
    let outcome = admission.outcome.recv().unwrap_or_else(|_| Outcome::closed());
    let shape = ReplyShape { format: admission.format, always_a_line: true };
    // Recorded in the history, as the inbox records what it decides.
    record(&args.store, Some(&asked), Some(&outcome), shape);
    shape.line(&admission.envelope, &outcome).unwrap_or_else(|| mcp::tool_result(&outcome))
}
