//! Where the inbox cannot run yet (Windows: it listens on a Unix domain socket, issue 15): `ask`
//! and `hook` answer in their own window, `mcp` answers from its flags or says no one can be
//! asked, and `askpane inbox` says why it is missing.

use clap::Args;
use serde_json::Value;

use askpane::protocol::Incoming;
use askpane::protocol::inbox::{ClientMode, Policy};

use super::answer::PipeArgs;

/// What became of handing a request to the inbox: here, always answered by the caller.
pub(super) enum Handed {
    /// The inbox decided: the reply is printed; exit with this code (never here).
    #[allow(dead_code, reason = "the variant the Unix client returns; kept so callers match alike")]
    Done(u8),
    /// No inbox can be used: answer here.
    Yourself,
}

/// Says once why the question opens its own window, and leaves it to the caller.
pub(super) fn hand_to_inbox(
    _message: &Value,
    _incoming: &Incoming,
    _mode: ClientMode,
    _policy: &Policy,
    args: &PipeArgs,
) -> Handed {
    if !args.inbox.no_inbox {
        eprintln!("askpane: {MISSING}; answering here");
    }
    Handed::Yourself
}

/// What a thin client waits for besides its outcome (the Unix client's shape).
#[allow(dead_code, reason = "nothing waits here: the cancel is never read without an inbox")]
pub(super) enum Until {
    /// `askpane mcp`'s cancel: nothing to withdraw here.
    Cancelled(crossbeam_channel::Receiver<()>),
}

/// How handing a request to the inbox ended: here, always "answer yourself".
pub(super) enum Delivered {
    #[allow(
        dead_code,
        reason = "the variants the Unix client returns; kept so callers match alike"
    )]
    Outcome { reply: Option<Value>, exit_code: u8, problem: Option<String> },
    #[allow(
        dead_code,
        reason = "the variants the Unix client returns; kept so callers match alike"
    )]
    Stopped(askpane::transport::signals::StopSignal),
    #[allow(
        dead_code,
        reason = "the variants the Unix client returns; kept so callers match alike"
    )]
    Cancelled,
    /// No inbox can be used: answer here, for this reason.
    Yourself(String),
}

/// `askpane mcp`'s hand-over: no inbox on this platform.
pub(super) fn deliver(
    _message: &Value,
    _mode: ClientMode,
    _policy: &Policy,
    _args: &PipeArgs,
    _until: Until,
) -> Delivered {
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
