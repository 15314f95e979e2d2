//! `askpane acp -- COMMAND [ARGS…]`: any Agent Client Protocol agent as a child, askpane as its
//! client (issue 28), with the transcript, its question forms and its permission requests in the
//! running inbox (started if none runs), as `askpane claude`'s are; or in a window of its own
//! (`--no-inbox`), the browser, or none. Only its own flags and its exit codes are here; the rest
//! is `agent_host::run`'s.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use askpane::transport::agents::acp::{Acp, AcpOwn};

use super::agent_host::{HostMode, SessionArgs};

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
    /// is shown as stuck, with End turn (askpane sends session/cancel and ends it); without a
    /// window or inbox askpane ends it itself: an agent that hangs never hangs askpane.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    stuck_after: u64,
    /// The agent's command and its arguments (after `--`), e.g.
    /// `npx @agentclientprotocol/claude-agent-acp`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

impl HostMode for AcpArgs {
    const AGENT: &'static str = "the ACP agent";
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
}
