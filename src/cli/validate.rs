//! `askpane validate FILE`: reads one message in any envelope askpane knows and reports what is
//! wrong with it (exit 2), or that it is valid (exit 0).

use std::path::Path;

use askpane::protocol::{self, parse_message};
use askpane::transport::pipe::{self, ReadError};

use super::exit;

pub(super) fn run(file: &Path) -> anyhow::Result<u8> {
    let name = pipe::source_name(file);
    let message = match pipe::read_json(file) {
        Ok(message) => message,
        Err(ReadError::NotJson { error, .. }) => {
            say!("{name}: invalid: not JSON: {error}");
            return Ok(exit::INVALID);
        }
        Err(error @ ReadError::TooLarge { .. }) => {
            say!("{name}: invalid: {error}");
            return Ok(exit::INVALID);
        }
        Err(error) => return Err(error.into()),
    };
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            say!("{name}: invalid: {error}");
            return Ok(exit::INVALID);
        }
    };
    let kind = incoming.envelope.describe();
    match protocol::validate(&incoming.input) {
        Ok(validated) => {
            let count = validated.ask.questions().len();
            let plural = if count == 1 { "" } else { "s" };
            say!("{name}: valid {kind} with {count} question{plural}");
            for warning in &validated.warnings {
                say!("  warning: {warning}");
            }
            Ok(exit::OK)
        }
        Err(invalid) => {
            say!("{name}: invalid {kind}");
            for error in &invalid.0 {
                say!("  error: {error}");
            }
            Ok(exit::INVALID)
        }
    }
}
