//! `askpane codex-hook`: Codex's `PreToolUse` hook for `request_user_input` (issue 13), for
//! people who run Codex's own terminal UI or `codex exec`. The questions are shown like any
//! other (the inbox, or a window of this process); the reply is a deny whose reason carries
//! the answer, since Codex's hooks cannot answer a tool: the model reads
//! `Tool call blocked by PreToolUse hook: User has answered your questions: …`.
//!
//! Installed with `--approvals`, it is also Codex's `PermissionRequest` hook (issue 26): Codex
//! runs it only when it is about to ask the person to approve a command or a patch, and takes
//! Claude Code's reply (tests/fixtures/codex/approvals): the call becomes a permission card
//! through `askpane hook`'s approval path, marked as Codex's. Allow and Deny with a reason are
//! honoured; printing nothing hands the call back to Codex's own prompt.

use std::path::Path;

use clap::Args;
use serde_json::{Value, json};

use askpane::protocol::codex::{self, UserInputQuestion};
use askpane::protocol::codex_server::SOURCE;
use askpane::protocol::inbox::ClientMode;
use askpane::protocol::permission;
use askpane::protocol::{ReplyFormat, parse_message};
use askpane::transport::pipe;

use super::answer::{PipeArgs, Piped, answer_piped};
use super::exit;

/// The tool this hook answers.
const TOOL: &str = "request_user_input";

#[derive(Args, Debug)]
pub(super) struct CodexHookArgs {
    #[command(flatten)]
    piped: PipeArgs,
}

/// Reads the hook's stdin, shows the questions, prints Codex's hook output. Prints nothing for
/// another tool or an input it cannot read (Codex then goes on as without the hook). Exits 0.
pub(super) fn run(args: CodexHookArgs) -> anyhow::Result<u8> {
    let input = match pipe::read_json(Path::new("-")) {
        Ok(input) => input,
        Err(error) => {
            eprintln!("askpane codex-hook: {error}; leaving the question to Codex");
            return Ok(exit::OK);
        }
    };
    if input.get("hook_event_name").and_then(Value::as_str) == Some(permission::HOOK_EVENT) {
        return Ok(approval(input, &args.piped));
    }
    if input.get("tool_name").and_then(Value::as_str) != Some(TOOL) {
        return Ok(exit::OK);
    }
    let Some(message) = message(&input) else {
        eprintln!("askpane codex-hook: no questions in the hook input; leaving them to Codex");
        return Ok(exit::OK);
    };
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            eprintln!("askpane codex-hook: {error}; leaving the question to Codex");
            return Ok(exit::OK);
        }
    };
    let format = Some(ReplyFormat::CodexHook);
    match answer_piped(&message, incoming, ClientMode::Ask, format, None, &args.piped) {
        Piped::Here(Err(error)) => eprintln!("askpane codex-hook: {error:#}"),
        // Codex went away while the inbox held the question: nothing was printed (issue 24).
        Piped::ByInbox(exit::AGENT_GONE) => return Ok(exit::AGENT_GONE),
        Piped::Here(Ok(_)) | Piped::ByInbox(_) => {}
    }
    // A hook that fails makes Codex show its own question: the reply (or nothing) is printed,
    // and askpane's own exit code would tell Codex nothing more.
    Ok(exit::OK)
}

/// Codex's `PermissionRequest`: its input (marked as Codex's) goes the way of Claude Code's
/// through `askpane hook`'s approval path. Always exit 0: Codex reads a 2 as a deny, and
/// nobody denied anything when askpane fails.
fn approval(mut input: Value, piped: &PipeArgs) -> u8 {
    if let Some(object) = input.as_object_mut() {
        let agent = Value::from(permission::CODEX_AGENT);
        object.insert(permission::AGENT_FIELD.to_owned(), agent);
    }
    if let Some(parsed) = permission::parse_hook_permission(&input) {
        super::hook_approval::run(&input, parsed, None, piped);
    }
    exit::OK
}

/// The hook input as a question message the inbox takes (the seed web form, as `askpane
/// opencode` sends its questions), with who asked: `codex hook`, its folder and session.
fn message(input: &Value) -> Option<Value> {
    let questions = input.get("tool_input")?.get("questions")?.clone();
    let questions: Vec<UserInputQuestion> = serde_json::from_value(questions).ok()?;
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let cwd = text("cwd");
    let project = cwd.trim_end_matches('/').rsplit('/').next().unwrap_or_default().to_owned();
    let session = text("session_id");
    let tool_use_id = match text("tool_use_id") {
        id if id.is_empty() => format!("codex-hook-{}", std::process::id()),
        id => format!("{session}/{id}"),
    };
    Some(json!({"type": "user_question", "tool_use_id": tool_use_id,
        "questions": codex::questions_input(&questions), "timestamp": "",
        "agent": SOURCE, "source": format!("codex hook · {cwd}"),
        "project": project, "session": session}))
}
