//! Pipe mode's input: one message read whole from a file or standard input, up to a size limit.
//!
//! `askpane ask` and `askpane hook` each answer exactly one message; reading it whole (rather than
//! line by line) accepts pretty-printed JSON as well as a single line. No request needs megabytes:
//! reading stops past [`MAX_INPUT_BYTES`], so a runaway producer cannot make askpane hold (and
//! parse) gigabytes.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use serde_json::Value;

/// The most askpane reads of one request (or `--answers` file): 4 MiB, a thousand times the size
/// of a real AskUserQuestion call with previews.
pub const MAX_INPUT_BYTES: u64 = 4 * 1024 * 1024;

/// Why no message could be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file or stream could not be read at all: the caller's mistake, not the agent's.
    #[error("cannot read {source_name}: {error}")]
    Io { source_name: String, error: io::Error },
    /// Nothing but white space: nobody asked anything.
    #[error("{}", empty_message(source_name))]
    Empty { source_name: String },
    /// More than [`MAX_INPUT_BYTES`].
    #[error(
        "{source_name} {size}; askpane reads at most {MAX_INPUT_BYTES} bytes (4 MiB) of a request"
    )]
    TooLarge { source_name: String, size: Size },
    #[error("{source_name} is not JSON: {error}")]
    NotJson { source_name: String, error: serde_json::Error },
}

impl ReadError {
    /// True when the input itself was read and is at fault (not JSON, too large), as opposed to
    /// the caller pointing at nothing (a missing file, empty standard input).
    pub fn is_input_at_fault(&self) -> bool {
        matches!(self, ReadError::TooLarge { .. } | ReadError::NotJson { .. })
    }
}

/// How large an over-long input is: a file's exact size, or "more than" for a stream (it is not
/// read to its end, which may never come).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Exactly(u64),
    MoreThan(u64),
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Exactly(bytes) => write!(f, "is {bytes} bytes"),
            Size::MoreThan(bytes) => write!(f, "holds more than {bytes} bytes"),
        }
    }
}

fn empty_message(source_name: &str) -> String {
    match source_name {
        STDIN_NAME => "no input on standard input".to_owned(),
        file => format!("{file} is empty"),
    }
}

const STDIN_NAME: &str = "standard input";

/// Where the message comes from, for messages: the file name, or "standard input" for `-`.
pub fn source_name(path: &Path) -> String {
    match path == Path::new("-") {
        true => STDIN_NAME.to_owned(),
        false => path.display().to_string(),
    }
}

/// Reads a whole file, or standard input for `-`, refusing more than [`MAX_INPUT_BYTES`].
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    let source_name = source_name(path);
    let mut bytes = Vec::new();
    // One byte past the limit tells "at the limit" from "over it".
    let read = match path == Path::new("-") {
        true => io::stdin().lock().take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes),
        false => std::fs::File::open(path)
            .and_then(|file| file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)),
    };
    if let Err(error) = read {
        return Err(ReadError::Io { source_name, error });
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        let size = match std::fs::metadata(path) {
            Ok(metadata) if path != Path::new("-") && metadata.is_file() => {
                Size::Exactly(metadata.len())
            }
            _ => Size::MoreThan(MAX_INPUT_BYTES),
        };
        return Err(ReadError::TooLarge { source_name, size });
    }
    if bytes.trim_ascii().is_empty() {
        return Err(ReadError::Empty { source_name });
    }
    Ok(bytes)
}

/// Reads one JSON message.
pub fn read_json(path: &Path) -> Result<Value, ReadError> {
    json_of(path, &read_bytes(path)?)
}

/// `bytes` read from `path` (`-`: stdin) as JSON, or why they are not.
pub fn json_of(path: &Path, bytes: &[u8]) -> Result<Value, ReadError> {
    serde_json::from_slice(bytes)
        .map_err(|error| ReadError::NotJson { source_name: source_name(path), error })
}
