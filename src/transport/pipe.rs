//! Pipe mode's input: one message read whole from a file or standard input.
//!
//! `askpane ask` and `askpane hook` each answer exactly one message; reading it whole (rather than
//! line by line) accepts pretty-printed JSON as well as a single line.

use std::io::{self, Read};
use std::path::Path;

use serde_json::Value;

/// Why no message could be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {source_name}: {error}")]
    Io { source_name: String, error: io::Error },
    #[error("{source_name} is not JSON: {error}")]
    NotJson { source_name: String, error: serde_json::Error },
}

/// Where the message comes from, for messages: the file name, or "standard input" for `-`.
pub fn source_name(path: &Path) -> String {
    match path == Path::new("-") {
        true => "standard input".to_owned(),
        false => path.display().to_string(),
    }
}

/// Reads a whole file, or standard input for `-`.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    let result = match path == Path::new("-") {
        true => {
            let mut text = String::new();
            io::stdin().lock().read_to_string(&mut text).map(|_| text)
        }
        false => std::fs::read_to_string(path),
    };
    result.map_err(|error| ReadError::Io { source_name: source_name(path), error })
}

/// Reads one JSON message.
pub fn read_json(path: &Path) -> Result<Value, ReadError> {
    let text = read_text(path)?;
    serde_json::from_str(&text)
        .map_err(|error| ReadError::NotJson { source_name: source_name(path), error })
}
