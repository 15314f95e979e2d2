//! `askpane mcp` (issue 12): a stdio MCP server with one tool, `ask_user_question`, for every
//! agent that speaks MCP. rmcp does the protocol (version negotiation, dispatch, cancellation);
//! each input line is screened first (`protocol::mcp::line`), so every request rmcp cannot read
//! is answered here with its id. Each call is handed to the inbox as a thin client (the code
//! `ask` and `hook` use), and the reply the inbox renders (`protocol::mcp::tool_result`) is the
//! tool result. Only MCP messages go to stdout, one whole line each ([`write_output`]); every
//! log line goes to stderr. The end of the input ends the process at once.

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
use askpane::protocol::mcp::line::{self, Screened};
use askpane::protocol::mcp::{self, McpContext};
use askpane::protocol::{Outcome, ReplyShape, parse_message};
use askpane::transport::admit::admit;
use askpane::transport::lines::{self, Frame};
use askpane::transport::pipe::MAX_INPUT_BYTES;

use super::answer::{Asked, PipeArgs, policy, record};
use super::exit;
use super::handover::{Delivered, Until, deliver};

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
    let (input_closes, input_closed) = tokio::sync::watch::channel(false);
    let server = Server { args: Arc::new(args), calls: Arc::new(AtomicU64::new(0)), input_closed };
    let served = runtime.block_on(async move {
        let (to_server, server_input) = tokio::io::duplex(PIPE_BYTES);
        let (server_output, from_server) = tokio::io::duplex(PIPE_BYTES);
        let (answers, answers_out) = tokio::sync::mpsc::unbounded_channel();
        let reading = tokio::spawn(screen_input(to_server, answers, input_closes));
        let writing = tokio::spawn(write_output(from_server, answers_out));
        let served = serve(server, server_input, server_output).await;
        // The session is over, however it ended (a client that never initialized too): nothing
        // more is read, and everything the server and the screen wrote reaches stdout, each
        // line whole, before the process ends.
        reading.abort();
        let _ = writing.await;
        served
    });
    // Nothing waits here any more: a call that waited on the inbox was withdrawn when the input
    // closed. Only a read of stdin still blocked (a session that ended before its input did)
    // is left behind.
    runtime.shutdown_timeout(Duration::from_millis(200));
    served?;
    Ok(exit::OK)
}

/// The MCP session over the in-process pipes, until the client's input ends.
async fn serve(
    server: Server,
    input: tokio::io::DuplexStream,
    output: tokio::io::DuplexStream,
) -> anyhow::Result<()> {
    let running = server
        .serve((input, output))
        .await
        .map_err(|error| anyhow::anyhow!("the MCP client did not initialize: {error}"))?;
    running.waiting().await.context("the MCP session failed")?;
    Ok(())
}

/// Room in each in-process pipe between stdio and the MCP server.
const PIPE_BYTES: usize = 1 << 20;

/// The longest line passed on: the largest request askpane reads, escaped as JSON, and room
/// for the JSON-RPC around it. A longer line is skipped with an error, never held whole.
const MAX_LINE_BYTES: u64 = MAX_INPUT_BYTES * 2 + 64 * 1024;

/// Reads the client's lines: each is screened ([`line::screen`]); a message rmcp reads as what
/// it is goes on to the MCP server, every other line is answered here (to [`write_output`])
/// with the request's id when it has one, and the right JSON-RPC error. At the end of the input
/// `input_closes` tells every call (a question waiting for a person is withdrawn), then the
/// server sees the end and ends the session.
async fn screen_input(
    mut to_server: tokio::io::DuplexStream,
    answers: tokio::sync::mpsc::UnboundedSender<String>,
    input_closes: tokio::sync::watch::Sender<bool>,
) {
    use tokio::io::AsyncWriteExt as _;
    let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    let mut number = 0_u64;
    loop {
        line.clear();
        let frame = match lines::read_frame_async(&mut reader, &mut line, MAX_LINE_BYTES).await {
            // The end of the input (or a pipe that broke): the session ends.
            Ok(Frame::End) | Err(_) => break,
            Ok(frame) => frame,
        };
        number += 1;
        if frame == Frame::TooLong {
            // Read past the rest of it, a bounded piece at a time (a pipe that breaks meanwhile
            // ends the session at the next read).
            let _ = lines::skip_rest_async(&mut reader, MAX_LINE_BYTES).await;
            let why = format!("is longer than {MAX_LINE_BYTES} bytes; it was skipped");
            let _ = answers.send(line::parse_error(number, &why));
            continue;
        }
        match line::screen(&line, number) {
            Screened::Blank => {}
            Screened::Ignore(why) => eprintln!("askpane mcp: {why}"),
            Screened::Answer(reply) => {
                let _ = answers.send(reply);
            }
            Screened::Pass => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_server.write_all(&line).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = input_closes.send(true);
    // The server sees the end of the input, and ends the session.
    let _ = to_server.shutdown().await;
}

/// The one writer of stdout: the MCP server's lines, and the answers of [`screen_input`],
/// each a whole line written at once and flushed, until both have ended.
#[allow(
    clippy::disallowed_methods,
    reason = "askpane mcp's one writer of stdout: every MCP message passes through here"
)]
async fn write_output(
    from_server: tokio::io::DuplexStream,
    mut answers: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use tokio::io::AsyncWriteExt as _;
    let mut stdout = tokio::io::stdout();
    let mut from_server = tokio::io::BufReader::new(from_server);
    // The server's line so far: a read the other branch interrupts goes on where it stopped.
    let mut server_line = Vec::new();
    let (mut server_open, mut answers_open) = (true, true);
    while server_open || answers_open {
        let mut bytes = tokio::select! {
            frame = lines::read_frame_async(&mut from_server, &mut server_line, lines::UNLIMITED),
                if server_open => match frame {
                Ok(Frame::Line | Frame::TooLong) => std::mem::take(&mut server_line),
                // The server is done: what it wrote is out.
                Ok(Frame::End) | Err(_) => {
                    server_open = false;
                    continue;
                }
            },
            answer = answers.recv(), if answers_open => match answer {
                Some(answer) => answer.into_bytes(),
                None => {
                    answers_open = false;
                    continue;
                }
            },
        };
        // One write for the line and its newline: no message is ever seen without its end.
        if bytes.last() != Some(&b'\n') {
            bytes.push(b'\n');
        }
        let written = stdout.write_all(&bytes).await.and(stdout.flush().await);
        if written.is_err() {
            // The client is gone; its end of the session follows from its closed input.
            break;
        }
    }
}

/// The MCP server: the flags every call shares, a counter that names each call, and whether
/// the client's input has closed (the client is gone: no call waits for a person any more).
#[derive(Clone)]
struct Server {
    args: Arc<McpArgs>,
    calls: Arc<AtomicU64>,
    input_closed: tokio::sync::watch::Receiver<bool>,
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
        let call_context = call_context(&context, number, self.input_closed.clone()).await;
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
async fn call_context(
    context: &RequestContext<RoleServer>,
    number: u64,
    input_closed: tokio::sync::watch::Receiver<bool>,
) -> McpContext {
    let peer = context.peer.peer_info();
    let client = peer.as_ref().map(|info| {
        let client = &info.client_info;
        format!("{} {}", client.name, client.version).trim().to_owned()
    });
    let roots = match peer.as_ref().is_some_and(|info| info.capabilities.roots.is_some()) {
        true => roots(context, input_closed).await,
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

/// Resolves once the client's input has closed (or its reader is gone).
async fn closed(input_closed: &mut tokio::sync::watch::Receiver<bool>) {
    // Not held: the guard `wait_for` returns cannot cross an await of a task that must be Send.
    let _ = input_closed.wait_for(|closed| *closed).await;
}

/// The client's roots (`roots/list`), or none when it does not answer in time or is gone (its
/// input closed: no answer will come). Roots are deprecated by the newest MCP revision
/// (SEP-2577), but they are how the clients of today say where they work.
#[allow(deprecated, reason = "roots are deprecated by SEP-2577 but are what clients send today")]
async fn roots(
    context: &RequestContext<RoleServer>,
    mut input_closed: tokio::sync::watch::Receiver<bool>,
) -> Vec<String> {
    tokio::select! {
        listed = tokio::time::timeout(ROOTS_WAIT, context.peer.list_roots()) => match listed {
            Ok(Ok(listed)) => listed.roots.into_iter().map(|root| root.uri).collect(),
            _ => Vec::new(),
        },
        () = closed(&mut input_closed) => Vec::new(),
    }
}

impl Server {
    /// The tool result for one call: refused here when the input is invalid, else decided by
    /// the inbox (or here, when no inbox can be used). Progress goes to the client while the
    /// user has not answered; a cancel withdraws the question, and so does the end of the
    /// client's input (the client is gone).
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
        let mut input_closed = self.input_closed.clone();
        let mut withdrawing = false;
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
                // The client is gone: a question waiting for a person leaves the inbox now, and
                // the process ends at once rather than when rmcp stops waiting for this call
                // (5 s). A call decided without a person (a preset) keeps its answer.
                () = closed(&mut input_closed), if !withdrawing => {
                    withdrawing = true;
                    let _ = cancel.try_send(());
                }
                _ = ticks.tick(), if token.is_some() && !withdrawing => {
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
        false => {
            match deliver(message, ClientMode::Mcp, policy, args, &Until::Cancelled(cancelled)) {
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
                // `mcp` gives a starter: an inbox is started, or why not is said above.
                Delivered::NotRunning => "no inbox runs".to_owned(),
            }
        }
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
