//! `askpane hook`: Claude Code's PreToolUse / PermissionRequest hook input in, its
//! `hookSpecificOutput` out, or nothing where Claude Code is to ask in its own dialog; a
//! `Notification` (issue 26 item 6) is handed to the inbox's desktop notification, printing nothing.

use std::path::Path;

use clap::{Args, ValueEnum};

use askpane::protocol::{EnvelopeError, hook_notification, parse_message, permission};
use askpane::transport::pipe;

use askpane::protocol::inbox::ClientMode;

use super::answer::{PipeArgs, Piped, answer_piped};
use super::exit;

#[derive(Args, Debug)]
pub(super) struct HookArgs {
    /// Never show a window: hand the question back to Claude Code's own dialog.
    #[arg(long, value_enum, value_name = "WHERE")]
    fallback: Option<Fallback>,
    #[command(flatten)]
    piped: PipeArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Fallback {
    /// Claude Code's own terminal dialog.
    Terminal,
}

/// `askpane hook`: Claude Code's hook input in, `hookSpecificOutput` out (or nothing, for
/// another tool). Exits 0 whenever it printed a reply, as Claude Code reads it only then.
pub(super) fn run(args: HookArgs) -> anyhow::Result<u8> {
    let message = match pipe::read_json(Path::new("-")) {
        Ok(message) => message,
        Err(error) => {
            // Not a hook input at all: print nothing, so Claude Code carries on as usual.
            eprintln!("askpane hook: {error}; leaving the question to Claude Code");
            return Ok(exit::OK);
        }
    };
    let fallback = args.fallback.map(|_| "askpane hook --fallback terminal");
    // The one place the hook's events are told apart.
    match message.get("hook_event_name").and_then(serde_json::Value::as_str) {
        // A terminal that waits (issue 26 item 6): announced, nothing printed.
        Some(hook_notification::HOOK_EVENT) => {
            if let Some(notice) = hook_notification::parse_notification(&message) {
                return Ok(super::hook_notice::run(notice, &args.piped.inbox));
            }
        }
        // Any tool but AskUserQuestion: a tool call to allow or deny (issue 26).
        Some(permission::HOOK_EVENT) => {
            if let Some(parsed) = permission::parse_hook_permission(&message) {
                return Ok(super::hook_approval::run(&message, parsed, fallback, &args.piped));
            }
        }
        // PreToolUse (and any other input): a question, or another tool's call left alone.
        _ => {}
    }
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(EnvelopeError::OtherTool { .. }) => return Ok(exit::OK),
        Err(error) => {
            eprintln!("askpane hook: {error}; leaving the question to Claude Code");
            return Ok(exit::OK);
        }
    };
    let answered =
        match answer_piped(&message, incoming, ClientMode::Hook, None, fallback, &args.piped) {
            Piped::ByInbox(code) => return Ok(code),
            Piped::Here(answered) => answered,
        };
    if let Err(error) = answered {
        // The reply is written ("no human available": Claude Code asks instead). Exiting 2 would
        // make Claude Code block the tool call, so the problem only goes to stderr.
        eprintln!("askpane hook: {error:#}");
    }
    Ok(exit::OK)
}
