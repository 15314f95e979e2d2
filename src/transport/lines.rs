//! The one line framing askpane reads every stream with: agents' stdout and stderr, the inbox's
//! socket (both ends), OpenCode's event stream, and `askpane mcp`'s stdin (through the async
//! twin of [`read_frame`]). A line ends at `\n` (a `\r` before it is the line's, for the caller to
//! trim); the last line may end at the end of the input without one; a line longer than the
//! reader's limit is [`Frame::TooLong`], its first bytes read and the rest left unread, for the
//! caller to refuse, skip ([`skip_rest`]) or take as it is. Over it, [`read_line`] reads
//! JSON lines: one JSON value per line, blank lines skipped.
//!
//! Framing is separate from message types (as in lsp-server). A malformed line is an error the
//! caller reports and reads past; it never ends the stream.

use std::io::{self, BufRead, Read as _, Write};

use serde_json::Value;

/// What one read of a line found; the line is in the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A whole line: with its `\n`, or the last one, without, where the input ended.
    Line,
    /// More than the limit and no `\n` yet: the buffer holds the first `limit` bytes; the rest
    /// of the line is still to be read.
    TooLong,
    /// The input ended (nothing was read).
    End,
}

impl Frame {
    /// What `buffer` holds after a read of at most `limit` bytes in all.
    pub fn of(buffer: &[u8], limit: u64) -> Frame {
        match buffer.last() {
            None => Frame::End,
            Some(b'\n') => Frame::Line,
            Some(_) if buffer.len() as u64 >= limit => Frame::TooLong,
            Some(_) => Frame::Line,
        }
    }
}

/// No limit on a line's length (an agent's own stdout: a multi-megabyte line is read in place).
pub const UNLIMITED: u64 = u64::MAX;

/// Reads one line into `buffer`, after what it already holds, so that `buffer` holds at most
/// `limit` bytes. A read that fails part-way (a read timeout) keeps what it read: called again,
/// it goes on with the same line. The caller clears `buffer` before each new line.
pub fn read_frame(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    limit: u64,
) -> io::Result<Frame> {
    let room = limit.saturating_sub(buffer.len() as u64);
    reader.take(room).read_until(b'\n', buffer)?;
    Ok(Frame::of(buffer, limit))
}

/// Reads past the rest of a line that was [`Frame::TooLong`], `limit` bytes at a time, never
/// holding it whole. Returns once the line's `\n` (or the end of the input) is passed.
pub fn skip_rest(reader: &mut impl BufRead, limit: u64) -> io::Result<()> {
    let mut rest = Vec::new();
    loop {
        rest.clear();
        if read_frame(reader, &mut rest, limit)? != Frame::TooLong {
            return Ok(());
        }
    }
}

/// [`read_frame`] on an async reader (`askpane mcp`'s stdin, read on its tokio runtime).
#[cfg(not(target_arch = "wasm32"))]
pub async fn read_frame_async<R>(
    reader: &mut R,
    buffer: &mut Vec<u8>,
    limit: u64,
) -> io::Result<Frame>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};
    let room = limit.saturating_sub(buffer.len() as u64);
    reader.take(room).read_until(b'\n', buffer).await?;
    Ok(Frame::of(buffer, limit))
}

/// [`skip_rest`] on an async reader.
#[cfg(not(target_arch = "wasm32"))]
pub async fn skip_rest_async<R>(reader: &mut R, limit: u64) -> io::Result<()>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let mut rest = Vec::new();
    loop {
        rest.clear();
        if read_frame_async(reader, &mut rest, limit).await? != Frame::TooLong {
            return Ok(());
        }
    }
}

/// One line read from the stream.
#[derive(Debug)]
pub enum Line {
    Json(Value),
    /// Not JSON (nor, perhaps, UTF-8): the error, and the start of the line for the message.
    Malformed {
        error: serde_json::Error,
        excerpt: String,
    },
}

impl Line {
    /// A line's bytes as JSON; `None` for a blank line (spaces, a lone `\r`).
    pub fn parse(bytes: &[u8]) -> Option<Line> {
        let line = bytes.trim_ascii();
        if line.is_empty() {
            return None;
        }
        Some(match serde_json::from_slice(line) {
            Ok(value) => Line::Json(value),
            Err(error) => {
                let excerpt: String = String::from_utf8_lossy(line).chars().take(80).collect();
                Line::Malformed { error, excerpt }
            }
        })
    }
}

/// Reads the next non-blank line as JSON, of any length. `Ok(None)` at end of input. The buffer
/// is reused between calls, so long lines cost one allocation that grows, not one per line.
pub fn read_line(reader: &mut impl BufRead, buffer: &mut Vec<u8>) -> io::Result<Option<Line>> {
    loop {
        buffer.clear();
        if read_frame(reader, buffer, UNLIMITED)? == Frame::End {
            return Ok(None);
        }
        if let Some(line) = Line::parse(buffer) {
            return Ok(Some(line));
        }
    }
}

/// A line's text without its `\n` (and a `\r` before it); bytes that are not UTF-8 are shown
/// as U+FFFD (an agent's stderr, a stream's comment line).
pub fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line)
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

    /// Every frame of `input` read with `limit`, each with the bytes it held.
    fn frames(input: &[u8], limit: u64) -> Vec<(Frame, Vec<u8>)> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut buffer = Vec::new();
        let mut found = Vec::new();
        loop {
            buffer.clear();
            let frame = read_frame(&mut reader, &mut buffer, limit).expect("in-memory read");
            found.push((frame, buffer.clone()));
            if frame == Frame::End {
                return found;
            }
        }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_too_long_with_its_first_bytes_and_the_rest_unread() {
        let found = frames(b"12345678\nok\n", 5);
        assert_eq!(found[0], (Frame::TooLong, b"12345".to_vec()));
        // Read on without skipping: the rest of the line comes next.
        assert_eq!(found[1], (Frame::Line, b"678\n".to_vec()));
        assert_eq!(found[2], (Frame::Line, b"ok\n".to_vec()));
        assert_eq!(found[3], (Frame::End, Vec::new()));
        // A line of exactly the limit with its newline fits; one byte more does not.
        assert_eq!(frames(b"1234\n", 5)[0], (Frame::Line, b"1234\n".to_vec()));
        assert_eq!(frames(b"12345\n", 5)[0], (Frame::TooLong, b"12345".to_vec()));
    }

    #[test]
    fn the_rest_of_a_line_too_long_is_skipped_in_bounded_pieces() {
        let mut reader = io::BufReader::with_capacity(4, &b"0123456789abcdef\nnxt\n"[..]);
        let mut buffer = Vec::new();
        assert_eq!(read_frame(&mut reader, &mut buffer, 4).expect("read"), Frame::TooLong);
        skip_rest(&mut reader, 4).expect("skip");
        buffer.clear();
        assert_eq!(read_frame(&mut reader, &mut buffer, 4).expect("read"), Frame::Line);
        assert_eq!(buffer, b"nxt\n");
        // Skipping to the end of an input that never ends the line.
        let mut reader = io::BufReader::new(&b"0123456789"[..]);
        buffer.clear();
        assert_eq!(read_frame(&mut reader, &mut buffer, 4).expect("read"), Frame::TooLong);
        skip_rest(&mut reader, 4).expect("skip");
        buffer.clear();
        assert_eq!(read_frame(&mut reader, &mut buffer, 4).expect("read"), Frame::End);
    }

    #[test]
    fn the_last_line_without_a_newline_is_a_line_and_then_the_input_ends() {
        assert_eq!(
            frames(b"{\"a\":1}\n[2]", UNLIMITED),
            [
                (Frame::Line, b"{\"a\":1}\n".to_vec()),
                (Frame::Line, b"[2]".to_vec()),
                (Frame::End, Vec::new()),
            ]
        );
        assert_eq!(frames(b"", UNLIMITED), [(Frame::End, Vec::new())]);
    }

    #[test]
    fn a_read_that_fails_part_way_goes_on_with_the_same_line() {
        /// Hands out `first`, then fails once (a read timeout), then `rest`.
        struct Stutter {
            parts: Vec<io::Result<Vec<u8>>>,
        }
        impl io::Read for Stutter {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                if self.parts.is_empty() {
                    return Ok(0);
                }
                let bytes = self.parts.remove(0)?;
                out[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
        }
        let timed_out = io::Error::from(io::ErrorKind::TimedOut);
        let parts = vec![Ok(b"{\"type\":".to_vec()), Err(timed_out), Ok(b"\"list\"}\n".to_vec())];
        let mut reader = io::BufReader::new(Stutter { parts });
        let mut buffer = Vec::new();
        let error = read_frame(&mut reader, &mut buffer, 100).expect_err("timed out");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(buffer, b"{\"type\":");
        assert_eq!(read_frame(&mut reader, &mut buffer, 100).expect("the rest"), Frame::Line);
        assert_eq!(buffer, b"{\"type\":\"list\"}\n");
    }

    #[test]
    fn invalid_utf8_is_a_malformed_line_shown_lossily_and_text_never_fails() {
        let mut input = io::Cursor::new(b"\xff\xfe not utf-8\n{\"ok\":true}\n".to_vec());
        let mut buffer = Vec::new();
        let first = read_line(&mut input, &mut buffer).expect("read");
        assert!(
            matches!(&first, Some(Line::Malformed { excerpt, .. }) if excerpt == "\u{fffd}\u{fffd} not utf-8"),
            "{first:?}"
        );
        assert!(matches!(read_line(&mut input, &mut buffer).expect("read"), Some(Line::Json(_))));
        assert_eq!(text(b"caf\xc3\xa9 \xff\n"), "café \u{fffd}");
    }

    #[test]
    fn crlf_lines_read_as_lines_without_their_cr() {
        let mut input = io::Cursor::new(b"{\"a\":1}\r\n\r\n[2]\r\n".to_vec());
        let mut buffer = Vec::new();
        assert!(matches!(read_line(&mut input, &mut buffer).expect("read"), Some(Line::Json(_))));
        // The blank line between (a lone `\r`) is skipped.
        assert!(matches!(read_line(&mut input, &mut buffer).expect("read"), Some(Line::Json(_))));
        assert!(read_line(&mut input, &mut buffer).expect("read").is_none());
        assert_eq!(text(b"data: one\r\n"), "data: one");
    }
}
