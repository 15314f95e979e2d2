//! The inbox's one thread for every client on Unix (issue 30 item 2: a thread to read and one to
//! write each client cost 2 000 idle clients 4 000 threads). `inbox-loop` polls (poll(2), through
//! rustix) the listening socket, a wake-up socket ([`Wake`]) and every client's socket, which is
//! non-blocking: it accepts and admits clients (the peer-uid check, before a byte is read), reads
//! what they send, hands each whole line to its connection's [`Served`], and writes out each
//! connection's queue as far as its socket takes it.
//!
//! Nobody blocks anybody: a client that sends a line longer than the limit is told and closed; one
//! that never speaks costs a descriptor; one that stops reading its replies is read no further
//! (its own back-pressure) and, once nothing of its queue was written for [`WRITE_TIMEOUT`],
//! closed. A connection that ends (or every one, when the inbox ends) withdraws its requests, waits
//! for their outcomes (`waiters.rs`), writes them, and is then closed.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use super::endpoint::{Acceptor, Listener, Stream};
use super::waiters::Pending;
use super::writer::{Flushed, Writer};
use super::{INBOX, InboxMessage, MAX_LINE_BYTES, Served, Shared, WRITE_TIMEOUT};

/// How much the loop reads from one client before it looks at the others.
const READ_CHUNK: usize = 64 * 1024;
const READS_PER_TURN: usize = 4;

/// One client of the loop.
struct Client {
    stream: Arc<Stream>,
    phase: Phase,
    /// What it sent that is not yet handed on: at most one line (and the start of the next)
    /// beyond what a full queue holds back.
    buffer: Vec<u8>,
    /// The last write found the socket full: write again once it says it takes more.
    blocked: bool,
}

/// Where a connection is in its life.
enum Phase {
    /// Its lines are read and handed on.
    Reading(Box<Served>),
    /// It has gone (or the inbox is ending): its requests are withdrawn, and their outcomes
    /// are still to come.
    Draining(Pending, Arc<Writer>),
    /// The last outcomes are queued: written out, then the connection is closed.
    Finishing(Arc<Writer>),
    /// Closed: the client is let go.
    Done,
}

impl Client {
    /// Whether the window may go lean with this client connected: a link's spare that asked
    /// nothing (issue 30 item 6). Any other client keeps the inbox as it is.
    fn is_idle_link(&self) -> bool {
        matches!(&self.phase, Phase::Reading(served) if served.is_idle_link())
    }

    fn writer(&self) -> Option<&Arc<Writer>> {
        match &self.phase {
            Phase::Reading(served) => Some(&served.writer),
            Phase::Draining(_, writer) | Phase::Finishing(writer) => Some(writer),
            Phase::Done => None,
        }
    }

    /// What to poll this client's socket for.
    fn interest(&self) -> PollFlags {
        let mut flags = PollFlags::empty();
        if let Phase::Reading(served) = &self.phase
            && served.writer.has_room()
        {
            flags |= PollFlags::IN;
        }
        if self.blocked {
            flags |= PollFlags::OUT;
        }
        flags
    }

    /// The client's socket said something.
    fn ready(&mut self, shared: &Arc<Shared>, acceptor: &Acceptor, flags: PollFlags) {
        if flags.intersects(PollFlags::OUT | PollFlags::HUP | PollFlags::ERR) {
            self.blocked = false;
        }
        if matches!(self.phase, Phase::Reading(_))
            && flags.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
        {
            self.read(shared, acceptor);
        }
    }

    /// Reads what the client sent (a few chunks at most), and hands on its whole lines.
    fn read(&mut self, shared: &Arc<Shared>, acceptor: &Acceptor) {
        let mut chunk = [0_u8; READ_CHUNK];
        for _ in 0..READS_PER_TURN {
            match (&*self.stream).read(&mut chunk) {
                Ok(0) => {
                    self.end_reading(shared);
                    return;
                }
                Ok(read) => {
                    self.buffer.extend_from_slice(chunk.get(..read).unwrap_or_default());
                    if !self.hand_on(shared, acceptor) {
                        return;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.end_reading(shared);
                    return;
                }
            }
        }
    }

    /// Hands on the whole lines in the buffer while the client's queue has room; `false` when
    /// no more should be read now (the queue is full, or the connection ended).
    fn hand_on(&mut self, shared: &Arc<Shared>, acceptor: &Acceptor) -> bool {
        if self.is_idle_link()
            && self.buffer.contains(&b'\n')
            && !self.wake_idle_link(acceptor, shared)
        {
            return false;
        }
        let Phase::Reading(served) = &mut self.phase else { return false };
        let mut taken = 0;
        let mut going_on = true;
        let mut too_long = false;
        loop {
            if !served.writer.has_room() {
                going_on = false;
                break;
            }
            let rest = self.buffer.get(taken..).unwrap_or_default();
            match rest.iter().position(|&byte| byte == b'\n') {
                Some(end) => {
                    let length = end + 1;
                    if length as u64 > MAX_LINE_BYTES {
                        too_long = true;
                        break;
                    }
                    served.line(shared, rest.get(..length).unwrap_or_default());
                    taken += length;
                }
                None => {
                    too_long = rest.len() as u64 >= MAX_LINE_BYTES;
                    break;
                }
            }
        }
        self.buffer.drain(..taken.min(self.buffer.len()));
        // No end of line within the limit: the line is refused, and the connection closed.
        if too_long {
            let message = format!("a line longer than {MAX_LINE_BYTES} bytes; closing");
            served.writer.send(&InboxMessage::Error { message, id: None });
            // Closed now, after the error: not once this connection's requests are settled.
            served.writer.finish();
            self.end_reading(shared);
            return false;
        }
        going_on
    }

    /// A link's spare is about to hand on its first line: it counts as a client from now on,
    /// unless the window has already claimed the inbox quiet to go lean (the acceptor stopped),
    /// in which case it is closed unread, and its remote client asks again once the lean inbox
    /// takes connections (issue 30 item 6). Checked and counted under the count's lock, as
    /// `InboxServer::claim_quiet` decides under it. `false` when it was closed.
    fn wake_idle_link(&mut self, acceptor: &Acceptor, shared: &Arc<Shared>) -> bool {
        let Ok(mut count) = shared.clients.lock() else { return false };
        if acceptor.is_stopped() {
            drop(count);
            self.end_reading(shared);
            return false;
        }
        *count += 1;
        true
    }

    /// The client is gone (or the inbox is ending): its requests are withdrawn.
    fn end_reading(&mut self, shared: &Arc<Shared>) {
        if let Phase::Reading(served) = std::mem::replace(&mut self.phase, Phase::Done) {
            let (pending, writer) = served.gone(shared);
            self.phase = Phase::Draining(pending, writer);
        }
        self.buffer = Vec::new();
    }

    /// Moves the connection on: writes what is queued, closes a client that read nothing of it
    /// for too long, goes from draining to finishing to done.
    fn advance(&mut self, shared: &Arc<Shared>, acceptor: &Acceptor, now: Instant) {
        if let Phase::Reading(_) = &self.phase {
            // A full queue made room: the lines waiting in the buffer go on.
            if self.writer().is_some_and(|writer| writer.has_room()) && self.buffer.contains(&b'\n')
            {
                self.hand_on(shared, acceptor);
            }
        }
        if let Phase::Draining(pending, writer) = &self.phase
            && pending.is_empty()
        {
            writer.finish();
            self.phase = Phase::Finishing(Arc::clone(writer));
        }
        let Some(writer) = self.writer().cloned() else { return };
        if !self.blocked {
            self.blocked = writer.write_some() == Flushed::Blocked;
        }
        if writer.waiting_since().is_some_and(|since| now.duration_since(since) >= WRITE_TIMEOUT) {
            log::warn!(speaker = INBOX; "closed a client that read nothing for {WRITE_TIMEOUT:?}");
            writer.close();
        }
        if writer.is_closed() {
            match &self.phase {
                Phase::Reading(_) => self.end_reading(shared),
                Phase::Finishing(writer) => {
                    writer.discard_unread();
                    self.phase = Phase::Done;
                }
                Phase::Draining(..) | Phase::Done => {}
            }
        }
    }

    /// When this client next needs the loop: its queue will have waited too long, or (a link's
    /// young connection) it will count as an idle spare, whichever comes first.
    fn deadline(&self) -> Option<Instant> {
        let written = self.writer()?.waiting_since().map(|since| since + WRITE_TIMEOUT);
        let settles = match &self.phase {
            Phase::Reading(served) => served.link_settles_at(),
            _ => None,
        };
        written.into_iter().chain(settles).min()
    }
}

/// The loop: until the inbox ends and every connection is closed.
pub(super) fn run(listener: &Listener, acceptor: &Acceptor, shared: &Arc<Shared>) {
    let mut clients: Vec<Client> = Vec::new();
    loop {
        let closing = shared.closing.load(Ordering::SeqCst);
        let now = Instant::now();
        for client in &mut clients {
            if closing {
                client.end_reading(shared);
            }
            client.advance(shared, acceptor, now);
            // Draining may have just ended: finish at once rather than on the next wake.
            client.advance(shared, acceptor, now);
        }
        clients.retain(|client| !matches!(client.phase, Phase::Done));
        // Counted afresh each turn: a connection that said `via_link` and nothing else (a
        // link's spare) leaves the count, one that hands on a line comes back into it.
        if let Ok(mut count) = shared.clients.lock() {
            *count = counted(&clients);
        }
        if closing && clients.is_empty() {
            return;
        }
        let accepting = !acceptor.is_stopped() && !closing;
        let ready = match wait(listener, accepting, shared, &clients) {
            Ok(ready) => ready,
            Err(error) => {
                log::error!(speaker = INBOX; "cannot wait for clients: {error}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if ready.woken {
            shared.wake.drain();
        }
        for (index, flags) in ready.clients {
            if let Some(client) = clients.get_mut(index) {
                client.ready(shared, acceptor, flags);
            }
        }
        if ready.client_waits {
            accept(listener, acceptor, shared, &mut clients);
        }
    }
}

/// The clients that keep the inbox from going lean: all but links' idle spares.
fn counted(clients: &[Client]) -> usize {
    clients.iter().filter(|client| !client.is_idle_link()).count()
}

/// What one wait saw.
struct Ready {
    woken: bool,
    client_waits: bool,
    clients: Vec<(usize, PollFlags)>,
}

/// Waits for a client to connect, a socket to be ready, a wake-up, or the next write deadline.
fn wait(
    listener: &Listener,
    accepting: bool,
    shared: &Shared,
    clients: &[Client],
) -> io::Result<Ready> {
    let mut watched = Vec::with_capacity(clients.len() + 2);
    watched.push(PollFd::new(shared.wake.woken(), PollFlags::IN));
    if accepting {
        watched.push(PollFd::new(listener, PollFlags::IN));
    }
    let mut polled = Vec::with_capacity(clients.len());
    for (index, client) in clients.iter().enumerate() {
        let flags = client.interest();
        // A draining connection waits for its outcomes, not its socket.
        if !flags.is_empty() || matches!(client.phase, Phase::Reading(_)) {
            watched.push(PollFd::new(&*client.stream, flags));
            polled.push(index);
        }
    }
    let timeout = clients.iter().filter_map(Client::deadline).min().map(|deadline| {
        let left = deadline.saturating_duration_since(Instant::now());
        Timespec::try_from(left).unwrap_or(Timespec { tv_sec: 1, tv_nsec: 0 })
    });
    loop {
        match poll(&mut watched, timeout.as_ref()) {
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let mut seen = watched.iter().map(PollFd::revents);
    let woken = seen.next().is_some_and(|flags| !flags.is_empty());
    let client_waits = accepting && seen.next().is_some_and(|flags| !flags.is_empty());
    let clients = polled.into_iter().zip(seen).filter(|(_, flags)| !flags.is_empty()).collect();
    Ok(Ready { woken, client_waits, clients })
}

/// Accepts the client that waits, admits it (this user only), and serves it.
fn accept(
    listener: &Listener,
    acceptor: &Acceptor,
    shared: &Arc<Shared>,
    clients: &mut Vec<Client>,
) {
    // Accepting a client and counting it is one step under the count's lock, so
    // `InboxServer::claim_quiet` never misses a client between the two.
    let Ok(mut count) = shared.clients.lock() else { return };
    if acceptor.is_stopped() {
        return;
    }
    let stream = match listener.accept() {
        Ok((stream, _)) => stream,
        Err(error) => {
            log::error!(speaker = INBOX; "cannot accept a client: {error}");
            drop(count);
            // Out of descriptors, say: the client waits in the backlog; the others are served,
            // not the error logged in a tight loop (as the accept thread did before).
            std::thread::sleep(Duration::from_millis(50));
            return;
        }
    };
    let pid = match shared.gate.admit(&stream) {
        Ok(pid) => pid,
        Err(why) => {
            log::warn!(speaker = INBOX; "{why}");
            return;
        }
    };
    if let Err(error) = stream.set_nonblocking(true) {
        log::error!(speaker = INBOX; "cannot serve a client: {error}");
        return;
    }
    let number = shared.next_connection.fetch_add(1, Ordering::Relaxed);
    let stream = Arc::new(stream);
    let writer = Arc::new(Writer::waking(Arc::clone(&stream), Arc::clone(&shared.wake)));
    let served =
        Served::new(shared, number, pid, writer, Pending::waking(Arc::clone(&shared.wake)));
    clients.push(Client {
        stream,
        phase: Phase::Reading(Box::new(served)),
        buffer: Vec::new(),
        blocked: false,
    });
    *count = counted(clients);
}
