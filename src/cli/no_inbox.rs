//! Where the inbox cannot run yet (Windows: it listens on a Unix domain socket, issue 15): every
//! hand-over answers "here" with the reason (`ask` and `hook` then open their own window, `mcp`
//! answers from its flags or says no one can be asked), and `askpane inbox` says why it is
//! missing.

use clap::Args;
use serde_json::Value;

use askpane::protocol::inbox::{ClientMode, Policy};

use super::answer::PipeArgs;
use super::handover::{Delivered, Until};

/// The hand-over where there is no inbox: answer here, said once on stderr, as the Unix client
/// says why it cannot use the inbox.
pub(super) fn deliver(
    _message: &Value,
    _mode: ClientMode,
    _policy: &Policy,
    _args: &PipeArgs,
    _until: Until,
) -> Delivered {
    eprintln!("askpane: {MISSING}; answering here");
    Delivered::Yourself(MISSING.to_owned())
}

/// `askpane inbox` takes its usual flags here too, so scripts fail with the reason, not a
/// parse error.
#[derive(Args, Debug)]
pub(super) struct InboxArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _flags: Vec<String>,
}

pub(super) fn run(_args: InboxArgs) -> anyhow::Result<u8> {
    anyhow::bail!("{MISSING}: `askpane ask` and `askpane hook` open their own window instead")
}

const MISSING: &str = "the inbox needs a Unix domain socket, which this platform's build of \
                       askpane does not have yet";
