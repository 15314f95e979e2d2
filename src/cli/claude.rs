//! `askpane claude`: Claude Code as a child, askpane as its stream-json host, with the
//! transcript, questions and permissions in one window (or the inbox, the browser, or none).
//! Only its own flags and its exit code are here; the rest is `agent_host::run`'s.

use std::path::PathBuf;
use std::process::ExitStatus;

use clap::Args;

use askpane::transport::agents::claude::{Claude, ClaudeOwn};

use super::agent_host::{self, HeadlessEnd, HostMode, SessionArgs, Shown};

// `askpane claude`: Claude Code as a child, askpane as its host, until the window closes (or,
// without a window, until Claude Code ends). Exits with Claude Code's exit code.
#[derive(Args, Debug)]
pub(super) struct ClaudeArgs {
    /// The Claude Code executable.
    #[arg(long, value_name = "PATH", default_value = "claude", env = "ASKPANE_CLAUDE_BIN")]
    claude_bin: PathBuf,
    #[command(flatten)]
    pub(super) session: SessionArgs,
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

impl HostMode for ClaudeArgs {
    const AGENT: &'static str = "Claude Code";
    type Agent = Claude;

    fn program(&self) -> (PathBuf, Vec<String>) {
        (self.claude_bin.clone(), self.extra.clone())
    }

    fn own(&self) -> anyhow::Result<ClaudeOwn> {
        Ok(ClaudeOwn { allow_tools: self.allow_tools.clone(), print_stream: self.print_stream })
    }

    /// The prompt's turn is over, or Claude Code ended (said when it failed): Claude Code's
    /// own exit code follows.
    fn headless_end(end: HeadlessEnd) -> Option<u8> {
        if let HeadlessEnd::AgentEnded { status, stderr_tail } = end
            && !status.is_success()
        {
            eprintln!("askpane: Claude Code ended ({status})");
            agent_host::tell_stderr_tail(&stderr_tail);
        }
        None
    }

    fn exit_code(_: Shown, status: ExitStatus) -> u8 {
        agent_host::agent_code(status)
    }
}
