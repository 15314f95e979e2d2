//! The native composition root: the command line, the dispatch to one file per mode, the exit
//! codes and the panic hook.
//!
//! Each mode lives in a file of its own (`demo`, `ask`, `hook`, `claude`, `install`,
//! `validate`, `history`, `mcp`); the argument groups they share are in [`args`], answering one piped message (for
//! `ask` and `hook`) in [`answer`], and showing the window or the browser bridge, with the
//! writer of the replies, in [`show`] and [`crate::window`].

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Prints one line on standard output for the modes that print text (`validate`, `demo --list`,
/// `install`). A reader that went away (`askpane validate … | head -n1`) ends the printing
/// quietly: the mode still exits with its own code, never with a panic.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::cli::print_line(format_args!($($arg)*))
    };
}

mod acp;
mod agent_host;
mod answer;
mod args;
mod ask;
mod claude;
mod client;
mod codex;
mod codex_hook;
// `askpane completions SHELL` and the man pages (issue 29).
mod completions;
mod demo;
// Issue 29: `askpane doctor` checks the set-up (Linux: the session bus, X11/Wayland, fontconfig).
#[cfg(target_os = "linux")]
mod doctor;
mod handover;
mod history;
mod hook;
mod hook_approval;
mod hook_notice;
mod inbox;
mod install;
// The library's log lines on stderr, at the level ASKPANE_LOG names (issue 25).
mod logger;
// Issue 14: the inbox sheds its window by `exec` (Unix).
#[cfg(unix)]
mod lean;
mod mcp;
// `askpane opencode` hands its questions to the inbox.
mod opencode;
// Issue 27: `askpane remote HOST`, an SSH host's agents asking this desk's inbox.
#[cfg(unix)]
mod remote;
mod show;
// Issue 29: `askpane status` for status bars and prompts.
mod status;
mod validate;

/// [`say!`]'s writer. A closed stdout is remembered, so the rest of the text is skipped.
#[allow(
    clippy::disallowed_methods,
    reason = "modes that print a report (history, validate, demo --list, install, inbox --new-link) and no reply"
)]
fn print_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, Ordering};
    static CLOSED: AtomicBool = AtomicBool::new(false);
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(error) = out.write_fmt(line).and_then(|()| out.write_all(b"\n")) {
        CLOSED.store(true, Ordering::Relaxed);
        if error.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("askpane: cannot write to standard output: {error}");
        }
    }
}

/// Exit codes, the same in every mode (see docs/src/exit-codes.md).
use askpane::protocol::exit;

#[derive(Parser, Debug)]
#[command(name = "askpane", version, about = "Answer an AI coding agent's questions in a window")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Open the window on built-in question sets; no agent needed. Prints each reply on stdout.
    Demo(demo::DemoArgs),
    /// Answer one request (any envelope) from a file or stdin; print the reply in the same envelope.
    Ask(ask::AskArgs),
    /// Claude Code PreToolUse / PermissionRequest hook: answer AskUserQuestion in the window.
    ///
    /// `askpane install claude` writes `askpane-hook` as the command when it is beside this
    /// binary: a small client that answers through the running inbox alike and hands everything
    /// else (arguments, no inbox, a notification) to `askpane hook`.
    Hook(hook::HookArgs),
    /// One window for every agent's questions: a long-lived inbox that `ask` and `hook` hand
    /// their requests to (started on demand by the first of them when none runs).
    Inbox(inbox::InboxArgs),
    /// Run Claude Code under askpane as its host: the transcript, questions and permissions in
    /// one window. Exits with Claude Code's exit code.
    Claude(claude::ClaudeArgs),
    /// Run Codex (`codex app-server`) under askpane as its host: the transcript, its
    /// request_user_input questions and its command / file-change approvals in one window.
    Codex(codex::CodexArgs),
    /// Codex's PreToolUse hook for request_user_input (`askpane install codex` adds it): the
    /// questions in askpane, the answer back to the model as the hook's deny reason.
    #[command(name = "codex-hook")]
    CodexHook(codex_hook::CodexHookArgs),
    /// Run any Agent Client Protocol agent (`askpane acp -- COMMAND …`) under askpane as its
    /// client: the transcript, its question forms and its permission requests in one window.
    Acp(acp::AcpArgs),
    /// A stdio MCP server with one tool, ask_user_question, for any MCP-capable agent: each
    /// call is shown in the inbox's window and the user's answer is the tool result.
    Mcp(mcp::McpArgs),
    /// Answer every OpenCode session's questions in the inbox: attach to an OpenCode server
    /// (`opencode serve`, or the TUI with `--port`) and run until stopped.
    #[cfg(any(unix, windows))]
    #[command(name = "opencode")]
    OpenCode(opencode::OpenCodeArgs),
    /// Link an SSH host to this desk's inbox: its agents' questions come here (through your own
    /// ssh, with a reverse forward of the inbox's socket), until stopped. `--list` shows links.
    #[cfg(unix)]
    Remote(remote::RemoteArgs),
    /// Add askpane's hook to Claude Code's settings, or start the inbox when you log in.
    Install {
        #[command(subcommand)]
        target: install::Target,
    },
    /// Remove askpane's hook from Claude Code's settings, or the inbox's autostart entry.
    Uninstall {
        #[command(subcommand)]
        target: install::Target,
    },
    /// What was asked and how it ended (the store's history): a table, or --json lines.
    History(history::HistoryArgs),
    /// Check the set-up (display, notifications, the inbox, its directories, each agent's hooks
    /// and MCP entries, the web bundle, fonts) and print the fix for each problem. Exit 1 when
    /// something needs you.
    #[cfg(target_os = "linux")]
    Doctor(doctor::DoctorArgs),
    /// What waits in the inbox, for a status bar or a prompt: a count (text), JSON, or a
    /// waybar module; `--watch` prints a line at every change.
    Status(status::StatusArgs),
    /// Check a request (any envelope askpane reads) and report what is wrong with it.
    Validate {
        /// The request file; `-` reads standard input.
        file: std::path::PathBuf,
    },
    /// Print a shell's completion script: `source <(askpane completions bash)`, or see the
    /// manual for where each shell loads them from.
    Completions(completions::CompletionsArgs),
    /// Write the man pages (askpane.1, askpane-hook.1, …) into DIR (scripts/package).
    #[command(hide = true)]
    Man {
        /// The folder the pages are written into (created if missing).
        dir: std::path::PathBuf,
        /// The pages' date, YYYY-MM-DD (scripts/package: the last commit's).
        #[arg(long)]
        date: Option<String>,
    },
}

pub fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if is_hook_run() && error.use_stderr() => {
            // A hook that exits 2 blocks the tool call in Claude Code: a bad ASKPANE_* variable
            // must not do that. Print nothing, so Claude Code asks in its own dialog.
            eprintln!("askpane hook: {}; leaving the question to Claude Code", first_line(&error));
            return ExitCode::from(exit::OK);
        }
        // The README's SDK example parses `ask`'s stdout whatever the exit code: a bad flag or
        // ASKPANE_* value still gets its one line (issue 24).
        Err(error) if is_ask_run() && error.use_stderr() => {
            return ExitCode::from(ask::usage_error(&error));
        }
        Err(error) => error.exit(),
    };
    logger::install(cli.command.debug());
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("askpane: {error:#}");
            ExitCode::from(exit::INVALID)
        }
    }
}

/// Replaces Rust's panic report (a "panicked at" line and a backtrace, which a user cannot act
/// on and which looks like a crash after the agent was already answered) with one honest line.
/// `ASKPANE_BACKTRACE=1` brings the standard report back, for debugging.
fn install_panic_hook() {
    if std::env::var_os("ASKPANE_BACKTRACE").is_some_and(|value| value != "0") {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        let what: String = what.lines().next().unwrap_or_default().chars().take(300).collect();
        // A dependency's path without the registry folder before it: `winit-0.30.13/src/…`.
        let place = info.location().map(|at| {
            let file = at.file();
            let file = file
                .rsplit_once("/registry/src/")
                .and_then(|(_, rest)| rest.split_once('/'))
                .map_or(file, |(_, crate_path)| crate_path);
            format!(" (at {file}:{})", at.line())
        });
        let place = place.unwrap_or_default();
        let window_open = crate::window::WINDOW_OPEN.load(std::sync::atomic::Ordering::SeqCst);
        if window_open && std::thread::panicking() {
            // A panic while unwinding from a lost window: Rust aborts right after this hook.
            exit_once_replied();
        }
        // A lost window panics again on its way down (a poisoned lock, a destructor): the user
        // is told once.
        static WINDOW_LOSS_TOLD: std::sync::atomic::AtomicBool =
            std::sync::atomic::AtomicBool::new(false);
        match window_open {
            true if WINDOW_LOSS_TOLD.swap(true, std::sync::atomic::Ordering::SeqCst) => {}
            true => eprintln!(
                "askpane: the window ended unexpectedly: {what}{place}; its open questions are \
                 answered as a closed window"
            ),
            false => eprintln!("askpane: internal error: {what}{place}"),
        }
    }));
}

/// Ends the process as a closed window ends it (`hook` 0, every other mode 1), once the reply
/// writer has written every reply (the lost window's own drop tells them "closed"); waits at most
/// two seconds for that, and otherwise returns, leaving the abort to happen.
fn exit_once_replied() {
    use std::sync::atomic::Ordering;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < deadline {
        if show::REPLIES_WRITTEN.load(Ordering::SeqCst) {
            std::process::exit(i32::from(if is_hook_run() { exit::OK } else { exit::DECLINED }));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// True when askpane was started as `askpane hook …`.
fn is_hook_run() -> bool {
    std::env::args_os().nth(1).is_some_and(|command| command == "hook")
}

/// True when askpane was started as `askpane ask …`.
fn is_ask_run() -> bool {
    std::env::args_os().nth(1).is_some_and(|command| command == "ask")
}

fn first_line(error: &clap::Error) -> String {
    let text = error.to_string();
    let line = text.lines().next().unwrap_or_default();
    line.trim_start_matches("error: ").to_owned()
}

impl Command {
    /// `--debug` (`askpane claude`, `askpane codex`): askpane's debug lines are logged too.
    fn debug(&self) -> bool {
        match self {
            Command::Claude(args) => args.session.debug,
            Command::Codex(args) => args.session.debug,
            Command::Acp(args) => args.session.debug,
            _ => false,
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Ask(args) => ask::run(args),
        Command::Hook(args) => hook::run(args),
        Command::Claude(args) => agent_host::run(&args.session, &args),
        Command::Codex(args) => agent_host::run(&args.session, &args),
        Command::CodexHook(args) => codex_hook::run(args),
        Command::Acp(args) => agent_host::run(&args.session, &args),
        Command::Inbox(args) => inbox::run(args),
        Command::Mcp(args) => mcp::run(args),
        #[cfg(unix)]
        Command::Remote(args) => remote::run(args),
        #[cfg(any(unix, windows))]
        Command::OpenCode(args) => opencode::run(args),
        Command::Install { target } => install::run(&target, true),
        Command::Uninstall { target } => install::run(&target, false),
        Command::History(args) => history::run(args),
        #[cfg(target_os = "linux")]
        Command::Doctor(args) => doctor::run(args),
        Command::Status(args) => status::run(args),
        Command::Validate { file } => validate::run(&file),
        Command::Completions(args) => completions::run(&args),
        Command::Man { dir, date } => completions::write_man_pages(&dir, date.as_deref()),
    }
}
