//! What the inbox writes to one client (issue 24 item 21): lines go into a bounded queue that is
//! written out without anyone who sends to a client waiting on that client's socket: on Unix by
//! the inbox's one event loop (`event_loop.rs`, issue 30 item 2), which writes what the socket
//! takes and is woken ([`Wake`]) when a line is queued; on Windows by the connection's own thread
//! (`inbox-writer`). Nothing ever waits for room: a client's own replies are held back by its
//! reader, which reads no more from a client whose queue is full (that client's own
//! back-pressure); an event for a subscriber whose queue is full finds a client that stopped
//! reading, and closes it.
//!
//! Closing shuts the socket down both ways at once, so the client sees the end of the stream
//! without waiting for the descriptor to be released; what the client had sent and nobody read
//! is then discarded, so that releasing the descriptor does not turn that end into a reset.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::Shutdown;
#[cfg(any(windows, test))]
use std::sync::MutexGuard;
#[cfg(unix)]
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::super::endpoint::Stream;

/// How many bytes may wait for one client beyond what its socket holds. Events for a front end
/// are a few hundred bytes each, so a reading subscriber is never this far behind; one that
/// stopped reading is dropped here rather than held in memory for ever. A single line larger
/// than this (a long reply) is still taken into an empty queue.
pub(super) const MAX_QUEUED_BYTES: usize = 1024 * 1024;

/// The most a closing connection reads and throws away of what its client sent: more than a
/// socket holds (after the shutdown the client can add nothing).
const MAX_DISCARDED_BYTES: u64 = 16 * 1024 * 1024;

/// Lines to one client, written in order by the connection's writer thread.
#[derive(Debug)]
pub(super) struct Writer {
    queue: Mutex<Queue>,
    /// A line was queued, or the queue ended: the writer thread looks again.
    queued: Condvar,
    /// A line was taken, or the queue ended: a sender waiting for room looks again.
    taken: Condvar,
    stream: Arc<Stream>,
    /// The event loop that writes this queue out, woken when there is something to do.
    #[cfg(unix)]
    wake: Option<Arc<Wake>>,
}

#[derive(Debug, Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    flow: Flow,
    /// How much of the first line is written already (the event loop writes what the socket
    /// takes).
    written: usize,
    /// Since when the queue has waited for the client to read: when it stopped being empty, or
    /// the last write that made progress. `None` while empty.
    waiting_since: Option<Instant>,
}

/// Whether a queue still takes lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Flow {
    #[default]
    Open,
    /// The connection ends: what is queued is written, then the socket is shut down.
    Ending,
    /// Shut down: nothing more is written.
    Closed,
}

/// What [`Writer::offer`] did with a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Offered {
    Queued,
    /// The queue was full: the client has stopped reading, and this closed its connection.
    Full,
    /// The connection was closed or ending already.
    Closed,
}

impl Queue {
    /// Room for `length` more bytes; an empty queue takes a line of any length.
    fn has_room(&self, length: usize) -> bool {
        self.lines.is_empty() || self.bytes.saturating_add(length) <= MAX_QUEUED_BYTES
    }

    fn push(&mut self, line: Vec<u8>) {
        if self.lines.is_empty() {
            self.waiting_since = Some(Instant::now());
        }
        self.bytes = self.bytes.saturating_add(line.len());
        self.lines.push_back(line);
    }

    fn pop(&mut self) -> Option<Vec<u8>> {
        let line = self.lines.pop_front()?;
        self.bytes = self.bytes.saturating_sub(line.len());
        self.written = 0;
        if self.lines.is_empty() {
            self.waiting_since = None;
        }
        Some(line)
    }

    fn close(&mut self) {
        self.flow = Flow::Closed;
        self.lines.clear();
        self.bytes = 0;
        self.written = 0;
        self.waiting_since = None;
    }
}

/// What [`Writer::write_some`] left.
#[cfg(unix)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flushed {
    /// Nothing left to write.
    Empty,
    /// The socket takes no more for now.
    Blocked,
    /// The connection is closed (shut down both ways), or was already.
    Closed,
}

/// Wakes the event loop (issue 30 item 2): one byte down a socket pair it polls, written only when
/// none waits unread already, so a burst of lines costs one wake-up.
#[cfg(unix)]
#[derive(Debug)]
pub(super) struct Wake {
    signal: Stream,
    woken: Stream,
    armed: AtomicBool,
}

#[cfg(unix)]
impl Wake {
    pub(super) fn new() -> io::Result<Wake> {
        let (signal, woken) = Stream::pair()?;
        signal.set_nonblocking(true)?;
        woken.set_nonblocking(true)?;
        Ok(Wake { signal, woken, armed: AtomicBool::new(false) })
    }

    pub(super) fn wake(&self) {
        if !self.armed.swap(true, Ordering::SeqCst) {
            let _ = (&self.signal).write(&[1]);
        }
    }

    /// What the loop polls.
    pub(super) fn woken(&self) -> &Stream {
        &self.woken
    }

    /// Takes the wake-up: one that comes from now on wakes the loop again. The bytes are read
    /// before the flag is lowered: lowered first, a wake-up in between would write a byte this
    /// read takes, leave the flag raised and the socket empty, and every later one would be lost.
    /// One that comes before the flag is lowered is seen by the loop's next look, which follows.
    pub(super) fn drain(&self) {
        let mut bytes = [0_u8; 64];
        while matches!((&self.woken).read(&mut bytes), Ok(read) if read > 0) {}
        self.armed.store(false, Ordering::SeqCst);
    }
}

impl Writer {
    /// A writer for `stream` that a thread writes out ([`Writer::write_out`]: Windows, tests).
    #[cfg(any(windows, test))]
    pub(super) fn new(stream: Arc<Stream>) -> Self {
        Writer {
            queue: Mutex::default(),
            queued: Condvar::new(),
            taken: Condvar::new(),
            stream,
            #[cfg(unix)]
            wake: None,
        }
    }

    /// A writer for `stream` that the event loop `wake` wakes writes out.
    #[cfg(unix)]
    pub(super) fn waking(stream: Arc<Stream>, wake: Arc<Wake>) -> Self {
        Writer {
            queue: Mutex::default(),
            queued: Condvar::new(),
            taken: Condvar::new(),
            stream,
            wake: Some(wake),
        }
    }

    fn wake(&self) {
        self.queued.notify_all();
        #[cfg(unix)]
        if let Some(wake) = &self.wake {
            wake.wake();
        }
    }

    /// Queues one of this client's own replies, never waiting: the loop (or thread) that reads
    /// this client reads no more from it while its queue is full ([`Writer::has_room`]), and the
    /// one thread that waits for every client's requests (`waiters.rs`) must not wait on one
    /// client. So a client that stops reading holds at most a full queue and the outcomes of
    /// the requests it has open. `false` when the connection is closed or ending.
    pub(super) fn send(&self, message: &impl serde::Serialize) -> bool {
        let Ok(line) = line_bytes(message) else { return false };
        let Ok(mut queue) = self.queue.lock() else { return false };
        if queue.flow != Flow::Open {
            return false;
        }
        queue.push(line);
        drop(queue);
        self.wake();
        true
    }

    /// Whether the client's queue has room: its reader takes no more lines from it until it has.
    #[cfg(any(unix, test))]
    pub(super) fn has_room(&self) -> bool {
        self.queue.lock().is_ok_and(|queue| queue.bytes <= MAX_QUEUED_BYTES)
    }

    /// Waits until the queue has room, or the connection is closed or ending (a client's own
    /// reader thread, on Windows).
    #[cfg(any(windows, test))]
    pub(super) fn wait_for_room(&self) {
        let Ok(mut queue) = self.queue.lock() else { return };
        while queue.flow == Flow::Open && queue.bytes > MAX_QUEUED_BYTES {
            queue = match self.taken.wait(queue) {
                Ok(queue) => queue,
                Err(_) => return,
            };
        }
    }

    /// Whether the connection is closed (by a full queue, a failed write, or the end).
    #[cfg(any(unix, test))]
    pub(super) fn is_closed(&self) -> bool {
        self.queue.lock().map_or(true, |queue| queue.flow == Flow::Closed)
    }

    /// Since when the queue has waited for the client to read (nothing written, though there
    /// is something to write); `None` when nothing waits.
    #[cfg(unix)]
    pub(super) fn waiting_since(&self) -> Option<Instant> {
        self.queue.lock().ok().and_then(|queue| queue.waiting_since)
    }

    /// The event loop's work: writes what the (non-blocking) socket takes. Once the queue is
    /// ending and empty, or a write fails, the connection is closed.
    #[cfg(unix)]
    pub(super) fn write_some(&self) -> Flushed {
        let Ok(mut queue) = self.queue.lock() else { return Flushed::Closed };
        loop {
            if queue.flow == Flow::Closed {
                return Flushed::Closed;
            }
            let Some(line) = queue.lines.front() else {
                if queue.flow == Flow::Ending {
                    queue.close();
                    drop(queue);
                    self.shut_down();
                    return Flushed::Closed;
                }
                return Flushed::Empty;
            };
            let rest = line.get(queue.written..).unwrap_or_default();
            let length = line.len();
            match (&*self.stream).write(rest) {
                Ok(0) => {}
                Ok(wrote) => {
                    queue.written = queue.written.saturating_add(wrote);
                    queue.waiting_since = Some(Instant::now());
                    if queue.written >= length {
                        queue.pop();
                        self.taken.notify_all();
                    }
                    continue;
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    return Flushed::Blocked;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {}
            }
            // The client is gone (or wrote nothing, which a socket does only when it is).
            queue.close();
            drop(queue);
            self.shut_down();
            return Flushed::Closed;
        }
    }

    /// After the connection closed: reads and throws away what the client sent and nobody read
    /// (the socket is shut down, so this ends at once), so that releasing the descriptor does
    /// not turn the client's end of the stream into a reset.
    pub(super) fn discard_unread(&self) {
        let _ = io::copy(&mut (&*self.stream).take(MAX_DISCARDED_BYTES), &mut io::sink());
    }

    /// Queues `line` (a whole line, newline included) without ever waiting: an event for a
    /// subscriber, or a last word. A full queue closes the connection.
    pub(super) fn offer(&self, line: &[u8]) -> Offered {
        let Ok(mut queue) = self.queue.lock() else { return Offered::Closed };
        if queue.flow != Flow::Open {
            return Offered::Closed;
        }
        if !queue.has_room(line.len()) {
            queue.close();
            drop(queue);
            self.shut_down();
            return Offered::Full;
        }
        queue.push(line.to_vec());
        drop(queue);
        self.wake();
        Offered::Queued
    }

    /// The connection ends: what is queued is still written, then the socket is shut down.
    /// Nothing queued from now on.
    pub(super) fn finish(&self) {
        if let Ok(mut queue) = self.queue.lock()
            && queue.flow == Flow::Open
        {
            queue.flow = Flow::Ending;
        }
        self.taken.notify_all();
        self.wake();
    }

    /// Closes the connection now: what is queued is dropped, and the socket shut down both ways
    /// (the client reads the end of the stream; the connection's reader and writer end).
    pub(super) fn close(&self) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.close();
        }
        self.shut_down();
    }

    fn shut_down(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
        self.taken.notify_all();
        self.wake();
    }

    /// The writer thread's work (Windows, and tests): writes the queued lines in order until the connection ends or
    /// a write fails (the client is gone, or read nothing for the socket's write timeout), then
    /// shuts the socket down and discards what the client sent that nobody read.
    #[cfg(any(windows, test))]
    pub(super) fn write_out(&self) {
        while let Some(line) = self.next_line() {
            if (&*self.stream).write_all(&line).is_err() {
                break;
            }
        }
        self.close();
        // After the shutdown a read returns what is buffered, then the end at once (Windows:
        // a read times out, see `endpoint::prepare_server_stream`).
        self.discard_unread();
    }

    /// The next line to write, waiting for one; `None` once the queue is closed, or ending
    /// with nothing left.
    #[cfg(any(windows, test))]
    fn next_line(&self) -> Option<Vec<u8>> {
        let mut queue: MutexGuard<'_, Queue> = self.queue.lock().ok()?;
        loop {
            if queue.flow == Flow::Closed {
                return None;
            }
            if let Some(line) = queue.pop() {
                drop(queue);
                self.taken.notify_all();
                return Some(line);
            }
            if queue.flow == Flow::Ending {
                return None;
            }
            queue = self.queued.wait(queue).ok()?;
        }
    }
}

/// One message as one line of bytes, written with one call: a socket is unbuffered, and
/// serde's many small writes would each cost a packet (and fill a slow reader's buffer).
pub(super) fn line_bytes(message: &impl serde::Serialize) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "a test starts its helper threads freely")]
mod tests {
    use std::io::BufRead;
    use std::time::{Duration, Instant};

    use super::*;

    /// A writer on one end of a socket pair and its thread; the other end is the client's.
    fn writing() -> (Arc<Writer>, std::thread::JoinHandle<()>, Stream) {
        let (served, client) = Stream::pair().expect("socket pair");
        let writer = Arc::new(Writer::new(Arc::new(served)));
        let thread = std::thread::spawn({
            let writer = Arc::clone(&writer);
            move || writer.write_out()
        });
        (writer, thread, client)
    }

    #[test]
    fn an_offer_to_a_client_that_stopped_reading_never_waits_and_closes_it_once() {
        let (writer, thread, client) = writing();
        let line = [vec![b'x'; 4096], b"\n".to_vec()].concat();
        let started = Instant::now();
        let mut offered = Vec::new();
        // The socket's buffer, then the queue: at most a few MiB before it is full.
        for _ in 0..4096 {
            let result = writer.offer(&line);
            offered.push(result);
            if result != Offered::Queued {
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert_eq!(offered.last(), Some(&Offered::Full));
        assert_eq!(writer.offer(&line), Offered::Closed, "full is said once");
        assert!(!writer.send(&"late"), "nothing is queued once closed");
        assert!(writer.is_closed());
        thread.join().expect("the writer thread ends");
        // The client reads whole lines up to what the socket held, then the end of the stream.
        let mut received = Vec::new();
        client.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        (&client).read_to_end(&mut received).expect("the end of the stream");
        assert!(received.len() < offered.len() * line.len());
    }

    #[test]
    fn ending_writes_what_is_queued_then_the_end_of_the_stream() {
        let (writer, thread, client) = writing();
        assert!(writer.send(&serde_json::json!({"type": "error", "message": "closing"})));
        writer.finish();
        assert!(!writer.send(&"late"), "nothing is queued once ending");
        thread.join().expect("the writer thread ends");
        client.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let mut reader = io::BufReader::new(&client);
        let mut line = String::new();
        reader.read_line(&mut line).expect("the queued line");
        assert_eq!(line, "{\"type\":\"error\",\"message\":\"closing\"}\n");
        line.clear();
        assert_eq!(reader.read_line(&mut line).expect("the end"), 0);
    }

    #[test]
    fn a_reader_waits_for_room_and_the_lines_keep_their_order() {
        let (writer, thread, client) = writing();
        let reading = std::thread::spawn(move || {
            // Slow at first: the queue fills, and senders wait for room.
            std::thread::sleep(Duration::from_millis(200));
            let mut lines = Vec::new();
            for line in io::BufReader::new(&client).lines() {
                lines.push(line.expect("a line"));
            }
            lines
        });
        let text = "y".repeat(64 * 1024);
        let count = 2 * MAX_QUEUED_BYTES / text.len() + 16;
        for index in 0..count {
            // The client's reader takes no more from it while its queue is full.
            writer.wait_for_room();
            assert!(writer.has_room(), "line {index}");
            assert!(writer.send(&format!("{index} {text}")), "line {index}");
        }
        writer.finish();
        thread.join().expect("the writer thread ends");
        let lines = reading.join().expect("the reader");
        assert_eq!(lines.len(), count);
        for (index, line) in lines.iter().enumerate() {
            assert!(line.starts_with(&format!("\"{index} ")), "line {index} out of order");
        }
    }

    #[test]
    fn unread_input_is_discarded_so_the_client_reads_the_end_not_a_reset() {
        let (writer, thread, mut client) = writing();
        client.write_all(&[b'z'; 4096]).expect("input nobody reads");
        assert!(writer.send(&"bye"));
        writer.finish();
        thread.join().expect("the writer thread ends");
        // The descriptor released: input left unread there would reset the connection.
        drop(writer);
        client.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        let mut received = Vec::new();
        (&client).read_to_end(&mut received).expect("the end of the stream, not a reset");
        assert_eq!(received, b"\"bye\"\n");
    }
}
