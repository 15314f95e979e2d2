//! `askpane claude`: Claude Code as a child, askpane as its stream-json host, with the
//! transcript, questions and permissions in one window (or the browser, or none).

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use crossbeam_channel::Receiver;

use askpane::protocol::inbox::Policy as Flags;
use askpane::protocol::stream::CliMessage;
use askpane::transport::agents::claude::{self, ClaudeOptions, ClaudeSession};
use askpane::transport::signals::SignalWatch;
use askpane::transport::{Inbound, IoThreads, SessionEvent, ui_channel};

use super::agent_host::{self, HeadlessHistory, SessionArgs};
use super::exit;
use super::show::watch_signals;
use crate::window::WindowSlot;

#[derive(Args, Debug)]
pub(super) struct ClaudeArgs {
    /// The Claude Code executable.
    #[arg(long, value_name = "PATH", default_value = "claude", env = "ASKPANE_CLAUDE_BIN")]
    claude_bin: PathBuf,
    #[command(flatten)]
    session: SessionArgs,
    /// Tools to allow without asking, comma-separated (e.g. Read,Grep).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    allow_tools: Vec<String>,
    /// Copy every line Claude Code writes to stdout, unchanged.
    #[arg(long)]
    print_stream: bool,
    /// Arguments passed on to Claude Code (after `--`).
    #[arg(last = true, value_name = "CLAUDE_ARGS")]
    extra: Vec<String>,
}

/// `askpane claude`: Claude Code as a child, askpane as its host, until the window closes (or,
/// without a window, until Claude Code ends). Exits with Claude Code's exit code.
pub(super) fn run(args: ClaudeArgs) -> anyhow::Result<u8> {
    let shared = &args.session;
    let agent_host::Showing { in_browser, headless, inbox } = shared.showing()?;
    let options = ClaudeOptions {
        program: args.claude_bin.clone(),
        extra_args: args.extra.clone(),
        prompt: shared.prompt.clone(),
        allow_tools: args.allow_tools.clone(),
        print_stream: args.print_stream,
        debug: shared.debug,
        autopilot: shared.autopilot(headless)?,
    };
    // A signal ends the session the way closing the window does: open questions hear why, and
    // Claude Code's process group is stopped (issue 9).
    let signals = watch_signals();
    let window = WindowSlot::default();
    let (to_ui, from_session) = ui_channel(window.waker());
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    let mut threads = IoThreads::default();
    let session = ClaudeSession::start(&options, to_ui, &mut threads)?;
    if headless {
        host_without_window(&from_session, &mut HeadlessHistory::new(&shared.store));
    } else if in_browser {
        agent_host::in_browser(
            &shared.shown,
            from_session,
            session.commands(),
            shared.prompt.clone(),
            &mut threads,
        )?;
    } else if let Some(connection) = inbox {
        let flags = options.autopilot.flags.clone();
        through_the_inbox(connection, &args, flags, &session, &from_session);
    } else {
        let (commands, prompt) = (session.commands(), shared.prompt.clone());
        let (shown, store) = (&shared.shown, &shared.store);
        agent_host::in_window(window, shown, store, from_session, commands, prompt);
    }
    drop(route);
    let status = session.shut_down(claude::GRACE)?;
    threads.join().context("ending the Claude Code session")?;
    // Asked only now: a signal while Claude Code was being stopped (the turn over, the CLI slow
    // to exit) stopped askpane too, and the status of a CLI askpane had to end says nothing.
    let stopped_by = signals.as_ref().and_then(SignalWatch::caught);
    if stopped_by.is_some() {
        return Ok(exit::STOPPED);
    }
    Ok(status.code().map_or(1, |code| u8::try_from(code).unwrap_or(1)))
}

#[cfg(not(any(unix, windows)))]
fn through_the_inbox(
    inbox: agent_host::InboxConnection,
    _args: &ClaudeArgs,
    _flags: Flags,
    _session: &ClaudeSession,
    _from_session: &Receiver<Inbound>,
) {
    match inbox {}
}

/// Issue 10: the session's questions, permissions and transcript go to the inbox until the
/// session ends.
#[cfg(any(unix, windows))]
fn through_the_inbox(
    inbox: agent_host::InboxConnection,
    args: &ClaudeArgs,
    autopilot_flags: Flags,
    session: &ClaudeSession,
    from_session: &Receiver<Inbound>,
) {
    let agent = super::hosted::Agent::Claude(session.lines());
    let relay =
        args.session.relay(autopilot_flags, claude::project_name(), agent, session.commands());
    super::hosted::relay(relay, inbox, from_session);
}

/// The host without a window: notices go to stderr, and whatever reaches the window is answered
/// "no human available", until the turn ends (or Claude Code does).
fn host_without_window(inbox: &Receiver<Inbound>, history: &mut HeadlessHistory<'_>) {
    for message in inbox {
        match message {
            Inbound::Ask(request) => {
                history.decide(*request, "askpane runs Claude Code without a window");
            }
            Inbound::Notice(notice) => eprintln!("askpane: {notice}"),
            Inbound::Session(event) => match *event {
                // The prompt's turn is over: there is no one to type another.
                SessionEvent::Message(CliMessage::Result(_)) => break,
                SessionEvent::Ended { status, stderr_tail } => {
                    if !status.ends_with(" 0") {
                        eprintln!("askpane: Claude Code ended ({status})");
                        for line in stderr_tail {
                            eprintln!("  {line}");
                        }
                    }
                    break;
                }
                SessionEvent::Message(_) => {}
            },
            // askpane is being stopped: nothing is open here (everything is answered at once).
            Inbound::Shutdown { .. } => break,
            // Permissions are decided by the reader when headless.
            Inbound::Permission(_)
            | Inbound::Hosted { .. }
            | Inbound::HostedEvent { .. }
            | Inbound::HostGone { .. }
            | Inbound::WithdrawPermission { .. }
            | Inbound::Withdraw { .. }
            | Inbound::Leave { .. }
            | Inbound::Settled { .. }
            | Inbound::Delivery(_)
            | Inbound::SessionUpdate(_)
            | Inbound::HostedUpdate { .. }
            | Inbound::Countdown { .. }
            | Inbound::Reveal { .. }
            | Inbound::Unshown { .. } => {}
        }
    }
}
