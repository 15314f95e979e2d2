//! `askpane acp -- COMMAND [ARGS…]`: any Agent Client Protocol agent as a child, askpane as its
//! client (issue 28), with the transcript, its question forms and its permission requests in the
//! running inbox (started if none runs), as `askpane claude`'s are; or in a window of its own
//! (`--no-inbox`), the browser, or none. Only its own flags and its exit codes are here; the rest
//! is `agent_host::run`'s.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use askpane::protocol::exit;
use askpane::transport::agents::acp::{Acp, AcpOwn};

use super::agent_host::{self, HeadlessEnd, HostMode, SessionArgs, Shown};

// `askpane acp`: an ACP agent as a child, askpane as its client, until the window closes or the
// inbox ends the session (or, without either, until the prompt's turn ends). Exit codes: 0 the
// turn ended normally (with a window or the inbox: the agent exited cleanly), 1 the turn failed,
// was cancelled, or the agent ended before it did, 2 the agent could not be started, 4 stopped
// by a signal.
#[derive(Args, Debug)]
pub(super) struct AcpArgs {
    #[command(flatten)]
    pub(super) session: SessionArgs,
    /// Tools to allow without asking, comma-separated, by the name the card shows (e.g. Read).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    allow_tools: Vec<String>,
    /// A turn in which the agent sends nothing for this many seconds, with nothing asked of you,
    /// is ended (askpane sends session/cancel): an agent that hangs never hangs askpane.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    stuck_after: u64,
    /// The agent's command and its arguments (after `--`), e.g.
    /// `npx @agentclientprotocol/claude-agent-acp`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

impl HostMode for AcpArgs {
    type Agent = Acp;

    fn program(&self) -> (PathBuf, Vec<String>) {
        match self.command.split_first() {
            Some((program, args)) => (PathBuf::from(program), args.to_vec()),
            None => (PathBuf::new(), Vec::new()),
        }
    }

    /// The session works in the current folder.
    fn own(&self) -> anyhow::Result<AcpOwn> {
        Ok(AcpOwn {
            cwd: std::env::current_dir().context("the current folder")?,
            allow_tools: self.allow_tools.clone(),
            stuck_after: Duration::from_secs(self.stuck_after),
        })
    }

    fn headless_end(end: HeadlessEnd) -> Option<u8> {
        Some(match end {
            HeadlessEnd::TurnEnded(result) => {
                if let Some(text) = &result.text {
                    eprintln!("askpane: the turn ended ({}): {text}", result.subtype);
                }
                match result.subtype.as_str() {
                    "success" => exit::OK,
                    _ => exit::DECLINED,
                }
            }
            HeadlessEnd::AgentEnded { status, stderr_tail } => {
                eprintln!("askpane: the ACP agent ended before the turn did ({status})");
                agent_host::tell_stderr_tail(&stderr_tail);
                exit::DECLINED
            }
            HeadlessEnd::Stopped => exit::STOPPED,
            HeadlessEnd::Gone => exit::DECLINED,
        })
    }

    fn exit_code(shown: Shown, status: ExitStatus) -> u8 {
        match shown {
            Shown::Headless(code) => code.unwrap_or(exit::DECLINED),
            Shown::Browser => exit::OK,
            Shown::Window(false) => exit::NO_HUMAN,
            Shown::Window(true) | Shown::Inbox if !status.success() => {
                agent_host::agent_code(status)
            }
            Shown::Window(true) | Shown::Inbox => exit::OK,
        }
    }
}
