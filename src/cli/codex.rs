//! `askpane codex`: Codex's app-server as a child, askpane as its host (issue 13), with the
//! transcript, questions and command / file-change approvals in the running inbox (started if
//! none runs), as `askpane claude`'s are; or in a window of its own (`--no-inbox`), the browser,
//! or none. Only its own flags and its exit codes are here; the rest is `agent_host::run`'s.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

use askpane::transport::agents::codex::{Codex, CodexOwn};

use super::agent_host::{HostMode, SessionArgs};

// `askpane codex`: Codex as a child, askpane as its host, until the window closes or the inbox
// ends the session (or, without either, until the prompt's turn ends). Exit codes: 0 the turn
// completed (with a window or the inbox: Codex exited cleanly), 1 the turn failed or was
// interrupted, or Codex ended before it did, 2 Codex could not be started, 4 stopped by a signal.
#[derive(Args, Debug)]
pub(super) struct CodexArgs {
    /// The Codex executable (askpane runs `<it> app-server`).
    #[arg(long, value_name = "PATH", default_value = "codex", env = "ASKPANE_CODEX_BIN")]
    codex_bin: PathBuf,
    #[command(flatten)]
    pub(super) session: SessionArgs,
    /// Arguments passed on to `codex app-server` (after `--`), e.g. `-c model="o3"`.
    #[arg(last = true, value_name = "CODEX_ARGS")]
    extra: Vec<String>,
}

impl HostMode for CodexArgs {
    const AGENT: &'static str = "Codex";
    type Agent = Codex;

    fn program(&self) -> (PathBuf, Vec<String>) {
        (self.codex_bin.clone(), self.extra.clone())
    }

    /// Codex works in the current folder.
    fn own(&self) -> anyhow::Result<CodexOwn> {
        Ok(CodexOwn { cwd: std::env::current_dir().context("the current folder")? })
    }
}
