//! Handing a request to the inbox, as every thin client (`ask`, `hook`, `mcp`) sees it, on
//! every platform: what it may come to, and what `ask` and `hook` then do. The hand-over itself
//! is `client::deliver` (the inbox's socket, Unix or Windows), or `no_inbox::deliver` where there is none.

use std::io;

use serde_json::Value;

use askpane::protocol::inbox::{ClientMode, Policy};
use askpane::protocol::{Incoming, exit};
use askpane::transport::lines::write_line;
use askpane::transport::signals::StopSignal;

use super::answer::PipeArgs;
use super::client::deliver;
use super::show::write_direct;

/// What became of handing a request to the inbox.
pub(super) enum Handed {
    /// The inbox decided: the reply is printed; exit with this code.
    Done(u8),
    /// No inbox can be used: answer here.
    Yourself,
}

/// Hands `message` to the inbox, unless `--no-inbox`, an invalid message, or a policy that
/// decides without a person says to answer here.
pub(super) fn hand_to_inbox(
    message: &Value,
    incoming: &Incoming,
    mode: ClientMode,
    policy: &Policy,
    args: &PipeArgs,
) -> Handed {
    if args.inbox.no_inbox || askpane::protocol::validate(&incoming.input).is_err() {
        // Refusing an invalid message needs no person: the reply is the same anywhere.
        return Handed::Yourself;
    }
    match deliver(message, mode, policy, args, Until::Signal) {
        Delivered::Outcome { reply, exit_code, problem } => {
            if let Some(problem) = problem {
                match mode {
                    ClientMode::Hook => eprintln!("askpane hook: {problem}"),
                    ClientMode::Ask | ClientMode::Mcp | ClientMode::Claude | ClientMode::Codex => {
                        eprintln!("askpane: {problem}")
                    }
                }
            }
            if let Some(reply) = reply {
                print_reply(&reply);
            }
            Handed::Done(exit_code)
        }
        Delivered::Stopped(signal) => {
            // This client was stopped: the inbox withdrew the request when the connection
            // closed; the agent hears why, as from a window of its own.
            let format = policy.format.map(Into::into);
            let written =
                write_direct(&incoming.envelope, format, &signal.outcome(), mode.always_a_line());
            if let Err(error) = written {
                eprintln!("askpane: cannot write the reply: {error:#}");
            }
            Handed::Done(match mode {
                ClientMode::Hook | ClientMode::Claude | ClientMode::Codex => exit::OK,
                ClientMode::Ask | ClientMode::Mcp => exit::STOPPED,
            })
        }
        // Only a caller that can cancel (`askpane mcp`) is told of a cancel.
        Delivered::Cancelled | Delivered::Yourself(_) => Handed::Yourself,
    }
}

/// What a thin client waits for besides its outcome.
#[cfg_attr(not(any(unix, windows)), allow(dead_code, reason = "read only by the socket client"))]
pub(super) enum Until {
    /// A signal (SIGTERM, Ctrl+C …) that stops this client: `ask` and `hook`.
    Signal,
    /// A message on this channel: the agent took the request back (`askpane mcp`'s
    /// `notifications/cancelled`). The request is withdrawn from the inbox at once.
    Cancelled(crossbeam_channel::Receiver<()>),
}

/// How handing one request to the inbox ended.
#[cfg_attr(not(any(unix, windows)), allow(dead_code, reason = "built only by the socket client"))]
pub(super) enum Delivered {
    /// The inbox decided: the reply line (`None`: print nothing), the exit code, and what did
    /// not fit the policy (for stderr).
    Outcome { reply: Option<Value>, exit_code: u8, problem: Option<String> },
    /// A signal stopped this client before the outcome came.
    Stopped(StopSignal),
    /// The caller cancelled; the request left the inbox.
    Cancelled,
    /// No inbox can be used (said on stderr): answer here. The reason, in words.
    Yourself(String),
}

/// Writes the inbox's reply, the one line this client prints.
#[allow(
    clippy::disallowed_methods,
    reason = "a thin client's one writer: the reply line the inbox computed"
)]
fn print_reply(reply: &Value) {
    if let Err(error) = write_line(&mut io::stdout().lock(), reply)
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("askpane: cannot write the reply: {error}");
    }
}
