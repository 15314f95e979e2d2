//! `askpane codex`: Codex's app-server as a child, askpane as its host (issue 13), with the
//! transcript, questions and command / file-change approvals in the running inbox (started if
//! none runs), as `askpane claude`'s are; or in a window of its own (`--no-inbox`), the browser,
//! or none.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use crossbeam_channel::Receiver;

use askpane::protocol::exit;
use askpane::protocol::inbox::Policy as Flags;
use askpane::protocol::stream;
use askpane::protocol::stream::{CliMessage, PermissionDecision};
use askpane::transport::agents::codex::{self, CodexOptions, CodexSession};
use askpane::transport::signals::SignalWatch;
use askpane::transport::{Inbound, IoThreads, SessionEvent, ui_channel};

use super::agent_host::{self, HeadlessHistory, SessionArgs};
use super::show::watch_signals;
use crate::window::WindowSlot;

#[derive(Args, Debug)]
pub(super) struct CodexArgs {
    /// The Codex executable (askpane runs `<it> app-server`).
    #[arg(long, value_name = "PATH", default_value = "codex", env = "ASKPANE_CODEX_BIN")]
    codex_bin: PathBuf,
    #[command(flatten)]
    session: SessionArgs,
    /// Arguments passed on to `codex app-server` (after `--`), e.g. `-c model="o3"`.
    #[arg(last = true, value_name = "CODEX_ARGS")]
    extra: Vec<String>,
}

/// `askpane codex`: Codex as a child, askpane as its host, until the window closes or the inbox
/// ends the session (or, without either, until the prompt's turn ends). Exit codes: 0 the turn
/// completed (with a window or the inbox: Codex exited cleanly), 1 the turn failed or was interrupted, or Codex ended before it did,
/// 2 Codex could not be started, 4 stopped by a signal.
pub(super) fn run(args: CodexArgs) -> anyhow::Result<u8> {
    let shared = &args.session;
    let agent_host::Showing { in_browser, headless, inbox } = shared.showing()?;
    let options = CodexOptions {
        program: args.codex_bin.clone(),
        extra_args: args.extra.clone(),
        cwd: std::env::current_dir().context("the current folder")?,
        prompt: shared.prompt.clone(),
        debug: shared.debug,
        autopilot: shared.autopilot(headless)?,
    };
    // A signal ends the session the way closing the window does: open questions hear why, and
    // Codex's process group is stopped.
    let signals = watch_signals();
    let window = WindowSlot::default();
    let (to_ui, from_session) = ui_channel(window.waker());
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    let mut threads = IoThreads::default();
    let session = CodexSession::start(&options, to_ui, &mut threads)?;
    let mut code = exit::OK;
    if headless {
        code = host_without_window(&from_session, &mut HeadlessHistory::new(&shared.store));
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
        if !agent_host::in_window(window, shown, store, from_session, commands, prompt) {
            code = exit::NO_HUMAN;
        }
    }
    drop(route);
    let stopped_by = signals.as_ref().and_then(SignalWatch::caught);
    let status = session.shut_down(codex::GRACE)?;
    threads.join().context("ending the Codex session")?;
    if stopped_by.is_some() {
        return Ok(exit::STOPPED);
    }
    if !headless && !in_browser && code == exit::OK && !status.success() {
        return Ok(status.code().map_or(1, |code| u8::try_from(code).unwrap_or(1)));
    }
    Ok(code)
}

#[cfg(not(any(unix, windows)))]
fn through_the_inbox(
    inbox: agent_host::InboxConnection,
    _args: &CodexArgs,
    _flags: Flags,
    _session: &CodexSession,
    _from_session: &Receiver<Inbound>,
) {
    match inbox {}
}

/// The session's questions, approvals and transcript go to the inbox until the session ends
/// (the same relay as `askpane claude`'s).
#[cfg(any(unix, windows))]
fn through_the_inbox(
    inbox: agent_host::InboxConnection,
    args: &CodexArgs,
    autopilot_flags: Flags,
    session: &CodexSession,
    from_session: &Receiver<Inbound>,
) {
    let project = askpane::transport::agents::claude::project_name();
    let agent = super::hosted::Agent::Codex(session.lines());
    let relay = args.session.relay(autopilot_flags, project, agent, session.commands());
    super::hosted::relay(relay, inbox, from_session);
}

/// The host without a window: questions are answered by their policy (`--answers`,
/// `--decline`, else "no human available"), approvals declined, notices go to stderr, until the
/// prompt's turn ends (or Codex does). Returns the exit code.
fn host_without_window(inbox: &Receiver<Inbound>, history: &mut HeadlessHistory<'_>) -> u8 {
    for message in inbox {
        match message {
            Inbound::Ask(request) => {
                history.decide(*request, "askpane runs Codex without a window");
            }
            Inbound::Permission(permission) => {
                eprintln!(
                    "askpane: declined {} (no window to ask in)",
                    stream::tool_summary(&permission.request.tool_name, &permission.request.input)
                );
                let message = "askpane runs Codex without a window".to_owned();
                permission.reply.send(PermissionDecision::Deny { message });
            }
            Inbound::Notice(notice) => eprintln!("askpane: {notice}"),
            Inbound::Session(event) => match *event {
                // The prompt's turn is over: there is no one to type another.
                SessionEvent::Message(CliMessage::Result(result)) => {
                    if let Some(text) = &result.text {
                        eprintln!("askpane: the turn ended ({}): {text}", result.subtype);
                    }
                    return match result.subtype.as_str() {
                        "success" => exit::OK,
                        _ => exit::DECLINED,
                    };
                }
                SessionEvent::Ended { status, stderr_tail } => {
                    eprintln!("askpane: Codex ended before the turn did ({status})");
                    for line in stderr_tail {
                        eprintln!("  {line}");
                    }
                    return exit::DECLINED;
                }
                SessionEvent::Message(_) => {}
            },
            // askpane is being stopped: nothing is open here (everything is answered at once).
            Inbound::Shutdown { .. } => return exit::STOPPED,
            Inbound::WithdrawPermission { .. }
            | Inbound::Hosted { .. }
            | Inbound::HostedEvent { .. }
            | Inbound::HostGone { .. }
            | Inbound::SessionUpdate(_)
            | Inbound::HostedUpdate { .. }
            | Inbound::Withdraw { .. }
            | Inbound::Leave { .. }
            | Inbound::Settled { .. }
            | Inbound::Delivery(_)
            | Inbound::Countdown { .. }
            | Inbound::Reveal { .. }
            | Inbound::Unshown { .. } => {}
        }
    }
    exit::DECLINED
}
