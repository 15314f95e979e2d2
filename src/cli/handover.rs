//! Handing a request to the inbox, as every thin client (`ask`, `hook`, `mcp`) sees it, on
//! every platform: what it may come to, and what `ask` and `hook` then do. The hand-over itself
//! is the library's (`askpane::transport::inbox::deliver`); how an inbox is started for it is
//! `client.rs`.

use std::io;

use serde_json::Value;

use askpane::protocol::inbox::{ClientMode, Policy};
use askpane::protocol::{Incoming, exit};
use askpane::transport::lines::write_line;

pub(super) use askpane::transport::inbox::{Delivered, Until};

use super::answer::PipeArgs;
use super::client::starter;
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
    match deliver(message, mode, policy, args, &Until::Signal) {
        Delivered::Outcome { reply, exit_code, problem } => {
            if let Some(problem) = problem {
                match mode {
                    ClientMode::Hook => eprintln!("askpane hook: {problem}"),
                    ClientMode::Ask
                    | ClientMode::Mcp
                    | ClientMode::Claude
                    | ClientMode::Codex
                    | ClientMode::Acp => {
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
                ClientMode::Hook | ClientMode::Claude | ClientMode::Codex | ClientMode::Acp => {
                    exit::OK
                }
                ClientMode::Ask | ClientMode::Mcp => exit::STOPPED,
            })
        }
        // Only a caller that can cancel (`askpane mcp`) is told of a cancel.
        Delivered::Cancelled | Delivered::Yourself(_) | Delivered::NotRunning => Handed::Yourself,
    }
}

/// Hands `message` to the inbox through the library's thin client
/// ([`askpane::transport::inbox::deliver`]), which starts an inbox from the client's flags when
/// none runs.
pub(super) fn deliver(
    message: &Value,
    mode: ClientMode,
    policy: &Policy,
    args: &PipeArgs,
    until: &Until,
) -> Delivered {
    let start = starter(&args.shown, &args.store);
    askpane::transport::inbox::deliver(message, mode, policy, until, Some(&start))
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
