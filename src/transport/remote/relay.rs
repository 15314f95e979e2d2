//! The link's own socket (issue 27): ssh's reverse forward connects here for each client on the
//! remote, and each such connection is relayed, byte for byte, to the local inbox after one line
//! of the relay's own: `via_link` naming the host as the link knows it. The inbox then scopes
//! the connection to that host (`protocol/link.rs`); a `via_link` the remote client sends after
//! it is refused there, so nothing the remote says can change which host it is.
//!
//! Issue 30 item 6: once a client has been relayed, the link keeps one spare connection to the
//! inbox, already greeted and scoped (`remote-spare` makes it), so that the next client hears
//! the inbox's hello at once instead of after a connect and the `via_link` round trip. A spare
//! is made only after a client came (the link never starts or wakes an inbox by itself), one at
//! a time (the clients of a burst that find none go the long way), and one the inbox closed
//! (it ended, or went lean) is dropped, not used.

use std::io::{self, BufReader, Write};
use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::protocol::inbox::{ClientMessage, InboxMessage};
use crate::transport::endpoint::{self, Acceptor, Gate, Listener, Server, Stream, Waited};
use crate::transport::inbox::{InboxClient, Place};
use crate::transport::lines::{self, Frame};

/// Starts an inbox when none runs (the client's own starter: a window, or the browser page).
pub type StartInbox = Arc<dyn Fn(&Place) -> Result<InboxClient, String> + Send + Sync>;

/// How long the inbox has to greet and confirm the link (it answers at once when it runs).
const GREETING_WAIT: Duration = Duration::from_secs(10);

/// The longest greeting line the relay reads (a hello or `linked` is a few dozen bytes).
const GREETING_MAX_BYTES: u64 = 4096;

/// How long one write to either side may block before the relay counts that side as gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The link's socket, accepting on a thread of its own (`remote-accept`) until stopped.
pub struct LinkSocket {
    path: PathBuf,
    acceptor: Arc<Acceptor>,
    accept: Option<JoinHandle<()>>,
    spare: Arc<Spare>,
    keeper: Option<JoinHandle<()>>,
}

impl LinkSocket {
    /// Binds `path` (0600, in the user's 0700 folder) and relays each client to the inbox at
    /// `place` as coming from `host`.
    pub fn serve(
        path: &Path,
        host: String,
        place: Place,
        start: StartInbox,
    ) -> io::Result<LinkSocket> {
        let listener = endpoint::bind(path)?;
        let acceptor = Arc::new(Acceptor::new(path)?);
        let spare = Arc::new(Spare::default());
        let keeper = {
            let (spare, host, place) = (Arc::clone(&spare), host.clone(), place.clone());
            crate::transport::spawn_named("remote-spare", move || {
                keep_spare(&spare, &host, &place);
            })?
        };
        let stops = Arc::clone(&acceptor);
        let spares = Arc::clone(&spare);
        let accept = crate::transport::spawn_named("remote-accept", move || {
            accept_loop(&listener, &stops, &spares, &host, &place, &start)
        });
        let accept = match accept {
            Ok(accept) => accept,
            Err(error) => {
                spare.stop();
                let _ = keeper.join();
                return Err(error);
            }
        };
        Ok(LinkSocket {
            path: path.to_owned(),
            acceptor,
            accept: Some(accept),
            spare,
            keeper: Some(keeper),
        })
    }

    /// Stops accepting, waits for every relayed connection to end (ssh's end closes them), and
    /// removes the socket.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.acceptor.stop();
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        // The spare's connection is closed with it: the inbox has nothing of this link's left.
        self.spare.stop();
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for LinkSocket {
    fn drop(&mut self) {
        self.end();
    }
}

fn accept_loop(
    listener: &Listener,
    acceptor: &Acceptor,
    spare: &Spare,
    host: &str,
    place: &Place,
    start: &StartInbox,
) {
    let gate = Gate::for_this_user();
    let mut relays: Vec<Relay> = Vec::new();
    loop {
        match acceptor.wait(listener) {
            Ok(Waited::Client) => {}
            Ok(Waited::Stopped) => break,
            Err(error) => {
                log::error!("the link's socket cannot wait for clients: {error}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        }
        let client = match listener.accept() {
            Ok((client, _)) => client,
            Err(error) => {
                log::error!("the link's socket cannot accept: {error}");
                continue;
            }
        };
        // ssh runs as this user; anyone else reaching the 0700 folder is refused here too.
        if let Err(why) = gate.admit(&client) {
            log::warn!("the link's socket {why}");
            continue;
        }
        // The spare's hello goes to the client from this thread, before any other is woken.
        let greeted = spare.take().and_then(|greeted| greeted.hand_hello(&client));
        let relay =
            Relay::start(client, greeted, host.to_owned(), place.clone(), Arc::clone(start));
        match relay {
            Ok(relay) => {
                // Ended relays are joined as new ones come, so the list stays short.
                let (done, live): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut relays).into_iter().partition(Relay::is_finished);
                done.into_iter().for_each(Relay::join);
                relays = live;
                relays.push(relay);
            }
            Err(error) => log::error!("cannot relay a client of {host}: {error}"),
        }
    }
    // The link ends: its clients are cut (they wait for the link to come back, issue 27 item 3).
    for relay in relays {
        relay.cut();
        relay.join();
    }
}

/// One remote client relayed to the inbox (`remote-relay`, which copies the inbox's lines down,
/// and `remote-relay-up`, the client's lines up).
struct Relay {
    client: Arc<Stream>,
    thread: JoinHandle<()>,
}

impl Relay {
    fn start(
        client: Stream,
        greeted: Option<Greeted>,
        host: String,
        place: Place,
        start: StartInbox,
    ) -> io::Result<Relay> {
        let client = Arc::new(client);
        let relaying = Arc::clone(&client);
        let thread = crate::transport::spawn_named("remote-relay", move || {
            let greeted = match greeted {
                Some(greeted) => Ok(greeted),
                None => greet_new(&relaying, &host, &place, &start),
            };
            if let Err(error) = greeted.and_then(|greeted| relay(&relaying, greeted)) {
                log::warn!("a client of {host} could not reach the inbox: {error}");
            }
            let _ = relaying.shutdown(Shutdown::Both);
        })?;
        Ok(Relay { client, thread })
    }

    fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    fn cut(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
    }

    fn join(self) {
        let _ = self.thread.join();
    }
}

/// A connection to the inbox that has said `via_link` and heard the inbox's hello and `linked`.
struct Greeted {
    inbox: Stream,
    /// The inbox's hello as the client reads it (naming the link), with its end of line.
    hello: Vec<u8>,
    /// What the inbox wrote after `linked` that the greeting's reader had taken in already.
    after: Vec<u8>,
}

impl Greeted {
    /// Says which host this is on `inbox` and reads the inbox's answer: only a scoped
    /// connection is handed to a client (an inbox that does not know `via_link` refuses it).
    fn greet(inbox: Stream, host: &str) -> io::Result<Greeted> {
        let _ = inbox.set_write_timeout(Some(WRITE_TIMEOUT));
        let via = ClientMessage::ViaLink { host: host.to_owned() };
        (&inbox).write_all(&line_of(&via)?)?;
        let _ = inbox.set_read_timeout(Some(GREETING_WAIT));
        let mut from_inbox = BufReader::new(&inbox);
        let hello = match read_message(&mut from_inbox)? {
            InboxMessage::Hello { version, pid, started_at, .. } => {
                InboxMessage::Hello { version, pid, link: Some(host.to_owned()), started_at }
            }
            other => return Err(io::Error::other(format!("the inbox greeted with {other:?}"))),
        };
        match read_message(&mut from_inbox)? {
            InboxMessage::Linked { host: linked } if linked == host => {}
            other => {
                return Err(io::Error::other(format!(
                    "the inbox did not take the link: {other:?}"
                )));
            }
        }
        let after = from_inbox.buffer().to_vec();
        drop(from_inbox);
        let _ = inbox.set_read_timeout(None);
        Ok(Greeted { inbox, hello: line_of(&hello)?, after })
    }

    /// Whether the inbox still holds this connection open and has said nothing on it since:
    /// a spare that the inbox closed (it ended or went lean) or wrote to is not handed on.
    fn is_quiet(&self) -> bool {
        if !self.after.is_empty() {
            return false;
        }
        let mut watched = [PollFd::new(&self.inbox, PollFlags::IN)];
        let now = Timespec { tv_sec: 0, tv_nsec: 0 };
        matches!(poll(&mut watched, Some(&now)), Ok(0))
    }

    /// Writes the inbox's hello to `client`; `None` when the client is gone already.
    fn hand_hello(self, client: &Stream) -> Option<Greeted> {
        let _ = client.set_write_timeout(Some(WRITE_TIMEOUT));
        (&*client).write_all(&self.hello).ok()?;
        Some(self)
    }
}

/// Connects to the inbox (starting one when none runs), says which host this is, and hands
/// the client the inbox's hello naming the link once the inbox confirmed it.
fn greet_new(
    client: &Stream,
    host: &str,
    place: &Place,
    start: &StartInbox,
) -> io::Result<Greeted> {
    let greeted = Greeted::greet(connect_inbox(place, start)?, host)?;
    greeted.hand_hello(client).ok_or_else(|| {
        io::Error::new(io::ErrorKind::BrokenPipe, "the client left before the inbox's hello")
    })
}

/// Copies both ways between the client (greeted already) and its inbox connection until
/// either side ends.
fn relay(client: &Arc<Stream>, greeted: Greeted) -> io::Result<()> {
    let Greeted { inbox, after, .. } = greeted;
    let inbox = Arc::new(inbox);
    let _ = client.set_write_timeout(Some(WRITE_TIMEOUT));
    let (up_from, up_to) = (Arc::clone(client), Arc::clone(&inbox));
    let up = crate::transport::spawn_named("remote-relay-up", move || {
        let _ = io::copy(&mut &*up_from, &mut &*up_to);
        // The client ended (or its link did): the inbox withdraws what it asked.
        let _ = up_to.shutdown(Shutdown::Write);
    })?;
    // What the inbox wrote after `linked` may have been read with the greeting: written first.
    if (&**client).write_all(&after).is_ok() {
        let _ = io::copy(&mut &*inbox, &mut &**client);
    }
    // The inbox ended (or closed this connection): the client hears the end and asks again.
    let _ = client.shutdown(Shutdown::Both);
    let _ = inbox.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}

/// The link's spare connection to the inbox, and whether the keeper should make one.
#[derive(Default)]
struct Spare {
    state: Mutex<SpareState>,
    changed: Condvar,
}

#[derive(Default)]
struct SpareState {
    ready: Option<Greeted>,
    /// A client came since the keeper last tried: the inbox runs (or is being started).
    wanted: bool,
    stopped: bool,
}

impl SpareState {
    /// The keeper ends, or makes a spare: one is wanted and none is ready.
    fn keeper_has_work(&self) -> bool {
        self.stopped || (self.wanted && self.ready.is_none())
    }
}

impl Spare {
    /// The spare, if one is ready and the inbox has not closed it; either way a new one is
    /// wanted (a client came).
    fn take(&self) -> Option<Greeted> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = state.ready.take();
        state.wanted = true;
        drop(state);
        self.changed.notify_all();
        // A closed spare is dropped here, outside the lock.
        taken.filter(Greeted::is_quiet)
    }

    /// Ends the keeper and closes the spare.
    fn stop(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.stopped = true;
        let ready = state.ready.take();
        drop(state);
        self.changed.notify_all();
        drop(ready);
    }
}

/// `remote-spare`: makes a spare each time one is wanted and none is ready, until stopped. Only
/// a running inbox is connected to, only after a client came (which woke or started it): a link
/// never starts an inbox, nor wakes a lean one, for a spare of its own.
fn keep_spare(spare: &Spare, host: &str, place: &Place) {
    loop {
        let mut state = spare.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !state.keeper_has_work() {
            state = spare.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        if state.stopped {
            return;
        }
        state.wanted = false;
        drop(state);
        let made = connect_running_inbox(place).and_then(|inbox| Greeted::greet(inbox, host));
        match made {
            Ok(greeted) => {
                let mut state = spare.state.lock().unwrap_or_else(PoisonError::into_inner);
                if state.stopped {
                    return;
                }
                state.ready = Some(greeted);
            }
            // The next client goes the long way (and may start the inbox).
            Err(error) => log::debug!("no spare connection to the inbox for {host}: {error}"),
        }
    }
}

fn line_of<T: serde::Serialize>(message: &T) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// One line of the inbox's, read as a message.
fn read_message(reader: &mut BufReader<&Stream>) -> io::Result<InboxMessage> {
    let mut line = Vec::new();
    match lines::read_frame(reader, &mut line, GREETING_MAX_BYTES)? {
        Frame::Line => {}
        Frame::End | Frame::TooLong => {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the inbox closed"));
        }
    }
    serde_json::from_slice(line.trim_ascii()).map_err(io::Error::other)
}

/// A raw connection to this user's inbox, starting one first when none runs.
fn connect_inbox(place: &Place, start: &StartInbox) -> io::Result<Stream> {
    let socket = place.socket();
    let stream = match endpoint::connect(&socket) {
        Ok(stream) => stream,
        Err(_) => {
            // The starter waits until the new inbox listens; its own connection is closed.
            let started = start(place).map_err(io::Error::other)?;
            started.close();
            endpoint::connect(&socket)?
        }
    };
    this_user_s(stream, &socket)
}

/// A raw connection to this user's inbox if one runs.
fn connect_running_inbox(place: &Place) -> io::Result<Stream> {
    let socket = place.socket();
    this_user_s(endpoint::connect(&socket)?, &socket)
}

/// `stream`, if this user's process serves `socket`.
fn this_user_s(stream: Stream, socket: &Path) -> io::Result<Stream> {
    match endpoint::server_of(&stream)? {
        Server::ThisUser => Ok(stream),
        Server::OtherUser { uid } => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is served by another user (uid {uid})", socket.display()),
        )),
    }
}
