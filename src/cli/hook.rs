//! `askpane hook`: Claude Code's PreToolUse / PermissionRequest hook input in, its
//! `hookSpecificOutput` out, or nothing where Claude Code is to ask in its own dialog; a
//! `Notification` (issue 26 item 6) is handed to the inbox's desktop notification, printing nothing.

use std::path::Path;

use clap::{Args, ValueEnum};

use askpane::protocol::hook_input::HookInput;
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
    let incoming = match HookInput::of(&message) {
        // A terminal that waits (issue 26 item 6): announced, nothing printed.
        HookInput::Notification(notice) => {
            return Ok(super::hook_notice::run(notice, &args.piped.inbox));
        }
        // Any tool but AskUserQuestion: a tool call to allow or deny (issue 26).
        HookInput::Permission(parsed) => {
            let parsed = parsed.map(|approval| *approval);
            return Ok(super::hook_approval::run(&message, parsed, fallback, &args.piped));
        }
        HookInput::Question(incoming) => *incoming,
        HookInput::OtherTool => return Ok(exit::OK),
        HookInput::Unreadable(error) => {
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use askpane::protocol::hook_input::{ANSWERING_VARIABLES, STARTING_VARIABLES};

    /// The small client (`askpane-hook`) tells by these lists when a hook is `askpane hook`'s to
    /// answer: a flag's variable missing from both would be silently left out by it.
    #[test]
    fn the_small_client_knows_each_variable_that_stands_for_a_flag_of_the_hook() {
        let mut cli = super::super::Cli::command();
        cli.build();
        let hook = cli.find_subcommand("hook").expect("the hook subcommand");
        let mut from_clap: Vec<String> = hook
            .get_arguments()
            .filter_map(clap::Arg::get_env)
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        let mut known: Vec<String> = ANSWERING_VARIABLES
            .iter()
            .chain(STARTING_VARIABLES)
            .map(|&name| name.to_owned())
            .collect();
        from_clap.sort();
        known.sort();
        assert_eq!(from_clap, known);
    }
}
