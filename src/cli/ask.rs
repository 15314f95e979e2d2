//! `askpane ask`: one request (any envelope) from a file or stdin, its reply on stdout in the
//! same envelope (or `--format`'s), and an exit code that says how it ended.

use std::path::PathBuf;

use clap::Args;

use askpane::protocol::{Envelope, Outcome, ReplyFormat, parse_message};
use askpane::transport::pipe::{self, ReadError};

use askpane::protocol::inbox::ClientMode;

use super::answer::{Answered, PipeArgs, Piped, answer_piped};
use super::args::FormatArg;
use super::exit;
use super::show::write_direct;

#[derive(Args, Debug)]
pub(super) struct AskArgs {
    /// The request; `-` (the default) reads standard input.
    #[arg(default_value = "-")]
    file: PathBuf,
    /// Reply in this envelope instead of the one the request came in.
    #[arg(long, value_enum, value_name = "ENVELOPE")]
    format: Option<FormatArg>,
    #[command(flatten)]
    piped: PipeArgs,
}

/// `askpane ask`: one request in, its reply out, an exit code that says how it ended.
pub(super) fn run(args: AskArgs) -> anyhow::Result<u8> {
    let format = args.format.map(ReplyFormat::from);
    let message = match pipe::read_json(&args.file) {
        Ok(message) => message,
        Err(error) => return Ok(unreadable(&error, format)),
    };
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            eprintln!("askpane: {}: {error}", pipe::source_name(&args.file));
            let outcome = Outcome::Refused { reason: error.to_string() };
            write_direct(&Envelope::ToolInput, format, &outcome, true)?;
            return Ok(exit::INVALID);
        }
    };
    let piped = answer_piped(&message, incoming, ClientMode::Ask, format, None, &args.piped);
    let Answered { outcome, stopped_by } = match piped {
        Piped::ByInbox(code) => return Ok(code),
        Piped::Here(answered) => answered?,
    };
    let by_signal = stopped_by.is_some_and(|signal| outcome == signal.outcome());
    Ok(exit::for_ask(&outcome, by_signal))
}

/// A flag or `ASKPANE_*` value that clap refused before [`run`]: clap's error on stderr, and
/// still the one reply line (nobody could be asked: the agent cannot fix askpane's settings), in
/// the `--format` given when that one can be read. Exits 2, a usage error.
pub(super) fn usage_error(error: &clap::Error) -> u8 {
    let _ = error.print();
    let reason = format!(
        "askpane's command line or ASKPANE_* settings are invalid: {}",
        super::first_line(error)
    );
    let args: Vec<String> =
        std::env::args_os().map(|arg| arg.to_string_lossy().into_owned()).collect();
    let outcome = Outcome::Unavailable { reason };
    if let Err(write_error) = write_direct(&Envelope::ToolInput, format_in(&args), &outcome, true) {
        eprintln!("askpane: cannot write the reply: {write_error:#}");
    }
    exit::INVALID
}

/// The reply format `--format` names among `args`, if it names one clap would take.
fn format_in(args: &[String]) -> Option<ReplyFormat> {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let value = match word.strip_prefix("--format") {
            Some("") => words.next().map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        if let Some(value) = value {
            return <FormatArg as clap::ValueEnum>::from_str(value, false).ok().map(Into::into);
        }
    }
    None
}

/// A message that could not be read: say why on stderr and exit 2, with a reply on stdout all the
/// same. Input that is at fault (not JSON, too large) is refused, so the agent can fix it; a file
/// that cannot be read or empty stdin is the caller's mistake, which the agent cannot fix: it
/// hears that no one could be asked.
fn unreadable(error: &ReadError, format: Option<ReplyFormat>) -> u8 {
    eprintln!("askpane: {error}");
    let outcome = match error.is_input_at_fault() {
        true => Outcome::Refused { reason: error.to_string() },
        false => {
            Outcome::Unavailable { reason: format!("askpane could not read the request: {error}") }
        }
    };
    match write_direct(&Envelope::ToolInput, format, &outcome, true) {
        Ok(()) => exit::INVALID,
        Err(write_error) => {
            eprintln!("askpane: cannot write the reply: {write_error:#}");
            exit::INVALID
        }
    }
}
