//! JSON-lines framing over any `BufRead` / `Write`: one JSON value per `\n`-terminated line.
//!
//! Framing is separate from message types (as in lsp-server). A malformed line is an error the
//! caller reports and reads past; it never ends the stream.

use std::io::{self, BufRead, Write};

use serde_json::Value;

/// One line read from the stream.
#[derive(Debug)]
pub enum Line {
    Json(Value),
    /// Not JSON: the error, and the start of the line for the message.
    Malformed {
        error: serde_json::Error,
        excerpt: String,
    },
}

/// Reads the next non-blank line. `Ok(None)` at end of input. The buffer is reused between calls,
/// so long lines cost one allocation that grows, not one per line.
pub fn read_line(reader: &mut impl BufRead, buffer: &mut Vec<u8>) -> io::Result<Option<Line>> {
    loop {
        buffer.clear();
        if reader.read_until(b'\n', buffer)? == 0 {
            return Ok(None);
        }
        let line = buffer.trim_ascii();
        if line.is_empty() {
            continue;
        }
        return Ok(Some(match serde_json::from_slice(line) {
            Ok(value) => Line::Json(value),
            Err(error) => {
                let excerpt: String = String::from_utf8_lossy(line).chars().take(80).collect();
                Line::Malformed { error, excerpt }
            }
        }));
    }
}

/// Writes one value as a compact line and flushes, so the peer sees it at once.
pub fn write_line(writer: &mut impl Write, value: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *writer, value)?;
    writer.write_all(b"\n")?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_skips_blanks_and_survives_a_malformed_one() {
        let mut input = io::Cursor::new(b"{\"a\":1}\n\n  \nnot json\n[2]".to_vec());
        let mut buffer = Vec::new();
        let mut next = || read_line(&mut input, &mut buffer).expect("in-memory read");
        assert!(matches!(next(), Some(Line::Json(value)) if value == serde_json::json!({"a": 1})));
        assert!(matches!(next(), Some(Line::Malformed { excerpt, .. }) if excerpt == "not json"));
        assert!(matches!(next(), Some(Line::Json(value)) if value == serde_json::json!([2])));
        assert!(next().is_none());
    }

    #[test]
    fn writes_one_compact_line() {
        let mut output = Vec::new();
        write_line(&mut output, &serde_json::json!({"b": "ü"})).expect("in-memory write");
        assert_eq!(output, "{\"b\":\"ü\"}\n".as_bytes());
    }
}
