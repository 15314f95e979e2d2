//! askpane's exit codes, the same in every mode (see docs/src/exit-codes.md), and the code an
//! `ask` ends with for an outcome. Here rather than in the command line because the inbox
//! computes a thin client's code for it (issue 10): one table, whichever process decides.

use super::outcome::Outcome;

/// Answered, or the command did what it was asked.
pub const OK: u8 = 0;
/// The user declined, or closed the window.
pub const DECLINED: u8 = 1;
/// Invalid input: the reply and standard error say what is wrong.
pub const INVALID: u8 = 2;
/// No human can answer: no display, or a non-interactive run.
pub const NO_HUMAN: u8 = 3;
/// askpane was stopped by a signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1) before anyone
/// answered; the agent was told so. (`hook` still exits 0 once it printed.)
pub const STOPPED: u8 = 4;
/// Nobody answered in time (`--timeout`).
pub const TIMED_OUT: u8 = 5;
/// The agent went away while `ask` or `hook` waited for the inbox (its end of stdout closed, or
/// the process that started askpane ended): the request was withdrawn and nothing printed.
pub const AGENT_GONE: u8 = 6;

/// The code `askpane ask` exits with for `outcome`; `by_signal` when the outcome is the one a
/// signal to askpane decided.
pub fn for_ask(outcome: &Outcome, by_signal: bool) -> u8 {
    if by_signal {
        return STOPPED;
    }
    match outcome {
        Outcome::Answered(_) | Outcome::Replied(_) => OK,
        Outcome::Declined { .. }
        | Outcome::Stopped { .. }
        | Outcome::Clarify { .. }
        | Outcome::Withdrawn => DECLINED,
        Outcome::Refused { .. } => INVALID,
        Outcome::Unavailable { .. } => NO_HUMAN,
        Outcome::TimedOut { .. } => TIMED_OUT,
    }
}
