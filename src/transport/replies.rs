//! The reply writer: waits for outcomes and writes each reply, in its request's envelope, as a line.
//!
//! This is the only code that writes a mode's stdout (hook and MCP peers forbid stray bytes).
//! Replies go out in the order the user answers, not the order the questions came in.

use std::io::{self, Write};

use crossbeam_channel::{Receiver, Select};

use crate::protocol::{Envelope, Outcome, ReplyFormat, ReplyShape};

use super::lines::write_line;

/// One request whose outcome is awaited: its envelope (to render the reply) and receiver.
#[derive(Debug)]
pub struct AwaitedReply {
    pub envelope: Envelope,
    pub format: Option<ReplyFormat>,
    pub outcome: Receiver<Outcome>,
    /// Write a line even where the envelope's own answer is to send nothing (a PermissionRequest
    /// hook input with no human to ask): `askpane ask` promises exactly one line, so the
    /// tool-input form (`{outcome, message}`) is written instead. A real hook keeps its silence.
    pub always_a_line: bool,
}

/// Writes every awaited reply to `out` as it arrives; returns once each has been written or its
/// responder vanished. Returns the outcomes, in the order they were written.
#[allow(
    clippy::indexing_slicing,
    reason = "crossbeam's Select hands back the index of an operation added from this same \
              vector, and a selected operation must be completed on that very receiver"
)]
pub fn write_replies(
    mut awaited: Vec<AwaitedReply>,
    out: &mut impl Write,
) -> io::Result<Vec<Outcome>> {
    let mut written = Vec::with_capacity(awaited.len());
    while !awaited.is_empty() {
        let (index, received) = {
            let mut select = Select::new();
            for reply in &awaited {
                select.recv(&reply.outcome);
            }
            let operation = select.select();
            let index = operation.index();
            // Completed on the receiver in place: crossbeam checks it is the one selected.
            (index, operation.recv(&awaited[index].outcome))
        };
        let reply = awaited.swap_remove(index);
        // Disconnected means the responder vanished without sending, which `Responder`'s drop
        // rules out; skip it rather than block.
        let Ok(outcome) = received else { continue };
        let shape = ReplyShape { format: reply.format, always_a_line: reply.always_a_line };
        if let Some(line) = shape.line(&reply.envelope, &outcome) {
            write_line(out, &line)?;
        }
        written.push(outcome);
    }
    Ok(written)
}
