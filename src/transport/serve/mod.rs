//! `--ui web`: the questions go to browsers over a WebSocket instead of a native window.
//!
//! askpane serves its own web app (the same egui app built for wasm32, embedded in the binary)
//! and a WebSocket endpoint, on 127.0.0.1 unless `--bind` says otherwise. The page gets a fresh
//! 256-bit token in the URL fragment (never in a request line a proxy could log) and presents it
//! in the `Sec-WebSocket-Protocol` header when it connects; it is compared in constant time
//! before the upgrade (401 otherwise), and the Host and Origin headers must name one of the
//! addresses askpane serves and prints (403 otherwise: no DNS rebinding, no other site).
//! Messages are limited to [`MAX_MESSAGE`], which any valid answer fits; an answer must name an
//! open question and only options that were offered, and every text must be within its limit
//! ([`crate::protocol::limits`]). Nothing a browser sends reaches a shell.
//!
//! A page learns its answer counted from `answer_received`; a refused message gets an `error`
//! and the connection stays open. A connection askpane ends for a fault is closed with the RFC
//! 6455 code for it (1009 too big, 1007 not UTF-8, 1002 protocol, 1001 silent, 1011 internal);
//! only the end of askpane itself closes with 1000 "askpane is done", which the page takes as
//! final.
//!
//! Connections without the token (issue 24: any local user, or any LAN peer under `--lan`, could
//! hold every place and keep the page out) are bounded apart from the pages: at most
//! [`MAX_WAITING`] may still be sending their request ([`MAX_WAITING_PER_PEER`] from one address),
//! each for [`HEAD_TIMEOUT`] at most, and one that has had [`HEAD_PROMPTLY`] makes room for a
//! newer one when they are full; files go to at most [`MAX_FILES`] at once
//! ([`MAX_FILES_PER_PEER`]), each within [`FILE_DEADLINE`]. A page with the token counts only
//! against [`MAX_PAGES`], which connections without it never take. A connection turned away for
//! want of room may have been a page coming back, so it restarts the [`PAGE_GONE_GRACE`].
//!
//! Threads: `web-accept` (the listener, which joins its `web-conn-N` threads before ending) and
//! `web-hub`, which owns every open question and every connected browser. No thread polls: each blocks in `poll(2)` or a read with a timeout, and a
//! stop wakes them through a pipe or by shutting their sockets. The first answer wins; the other
//! tabs see the question withdrawn. A browser that reconnects gets every open question again,
//! first, then each agent session's newest entries (issue 24: a whole transcript could outgrow
//! what a connection may queue, and closed every page with 1011); it asks for older ones. When
//! the last page has gone and none comes back within [`PAGE_GONE_GRACE`], the open questions end
//! with "the page was closed" rather than leave the agent waiting.
//!
//! Here: the options, starting and stopping the bridge, its addresses, token and wake-up pipe;
//! `http.rs`: the listener and each connection (HTTP head, files, the WebSocket pump); `hub.rs`:
//! the request book's driver for pages.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use rustix::event::{PollFd, PollFlags, Timespec};
// On Windows rustix names a socket handle `AsFd` too, so this one import serves every platform.
use rustix::fd::{AsFd, BorrowedFd};

use crate::book::journal::Journal;
use crate::protocol::limits::{self};

use super::{Inbound, IoThreads, SessionCommand};

/// Largest WebSocket message or frame a browser may send: the largest valid answer
/// ([`limits::MAX_BROWSER_MESSAGE`]). A larger one ends its connection with 1009.
pub const MAX_MESSAGE: usize = limits::MAX_BROWSER_MESSAGE;
/// How long the last page may be gone, with questions open, before they end as "the page was
/// closed": time for a reload or a dropped network to come back.
pub const PAGE_GONE_GRACE: Duration = Duration::from_secs(60);
/// Most pages (WebSockets that showed the token) served at once; one more is refused with 503.
pub const MAX_PAGES: usize = 128;
/// Most connections at once that have not sent their request yet (so showed no token). When they
/// are full, the oldest that has had [`HEAD_PROMPTLY`] is ended to make room; with none that old,
/// the new one is refused with 503.
pub const MAX_WAITING: usize = 16;
/// Of [`MAX_WAITING`], most from one address (an IPv6 /64): a browser opens up to 6 at once.
pub const MAX_WAITING_PER_PEER: usize = 8;
/// A browser sends its request as soon as it has connected: one still silent after this (a
/// speculative preconnect, or someone holding places) makes room for a newer connection.
pub const HEAD_PROMPTLY: Duration = Duration::from_secs(1);
/// Most files (the page's own, which need no token) sent at once, and to one address; one more
/// is refused with 503.
pub const MAX_FILES: usize = 16;
pub const MAX_FILES_PER_PEER: usize = 8;
/// The longest a file may take to send (the web app is about 5 MB: a slow phone's minute).
pub const FILE_DEADLINE: Duration = Duration::from_secs(60);

/// Largest HTTP request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may take to send its request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one write to a browser may block (a tab that stopped reading).
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// After a stop: how long connections get to end by themselves (a page its 1000 close, a file
/// its last bytes) before their sockets are shut. The reply to the agent is already written.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);
/// How long after a question's `--timeout` the bridge ends it, if no page did: time for the
/// page's own expiry (which sends what the user touched) to arrive.
const TIMEOUT_GRACE: Duration = Duration::from_secs(1);
/// How often a quiet page is pinged (browsers answer pings by themselves).
const PING_EVERY: Duration = Duration::from_secs(20);
/// A page that sent nothing (not even a pong) for this long is gone: a tab on a lost network
/// leaves a half-open socket that would otherwise count as a page forever.
const SILENT_LIMIT: Duration = Duration::from_secs(60);
/// Most bytes queued for a page that does not read: past this its connection ends.
const MAX_WRITE_BUFFER: usize = 16 * 1024 * 1024;
/// The longest the listener waits after a failed accept (out of file descriptors, say) before
/// it tries again; the wait doubles from 10 ms up to this.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// One file of the web app, served at `path`.
#[derive(Clone, Copy, Debug)]
pub struct Asset {
    pub path: &'static str,
    /// The file as stored: the file itself, or gzipped (see `encoding`).
    pub bytes: &'static [u8],
    pub mime: &'static str,
    pub encoding: Encoding,
}

/// How an [`Asset`]'s bytes are stored, and so sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The file's own bytes.
    Identity,
    /// Gzipped by `scripts/build-web` (the wasm, its glue, the fonts): sent as they are with
    /// `Content-Encoding: gzip` to a client that takes it (every browser does), so serving
    /// compresses and inflates nothing; inflated as they are sent to one that does not.
    Gzip,
}

/// How the bridge serves.
#[derive(Clone, Debug)]
pub struct BridgeOptions {
    pub bind: SocketAddr,
    pub assets: &'static [Asset],
    /// Stop once the adapters are done and no question is open (`askpane ask`, `askpane hook`).
    pub stop_when_done: bool,
    /// Stop when the agent's turn ends or the agent does (`askpane claude --ui web`: the browser
    /// has no prompt box for another turn).
    pub stop_after_turn: bool,
    /// How long the open questions wait for a page to come back once the last one has gone
    /// ([`PAGE_GONE_GRACE`]; tests pass less).
    pub page_gone_grace: Duration,
    /// Where the hub reports each request it opens and how each ends (issue 11: the inbox's
    /// history, natively the store's `DraftSink`). `None` where the mode records by itself
    /// (`ask`/`hook --ui web` record the replies they write).
    pub journal: Option<BridgeJournal>,
}

/// A journal the hub's thread can own: the window's [`Journal`], shared.
#[derive(Clone)]
pub struct BridgeJournal(pub Arc<dyn Journal + Send + Sync>);

impl BridgeJournal {
    /// The journal, as the book's drivers pass it.
    pub fn journal(&self) -> &dyn Journal {
        &*self.0
    }
}

impl std::fmt::Debug for BridgeJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BridgeJournal")
    }
}

/// The bridge's secret and how many times it was replaced (issue 11: "New link"): a page holds
/// the generation it connected in, and a newer one ends its connection.
pub(super) struct Link {
    token: std::sync::Mutex<String>,
    generation: std::sync::atomic::AtomicU64,
}

impl Link {
    fn new() -> io::Result<Link> {
        Ok(Link { token: std::sync::Mutex::new(new_token()?), generation: Default::default() })
    }

    pub(super) fn token(&self) -> String {
        self.token.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(super) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// A new token; the pages on the old one are ended by their threads once woken.
    fn replace(&self) -> io::Result<()> {
        let token = new_token()?;
        *self.token.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = token;
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A running bridge.
pub struct Bridge {
    address: SocketAddr,
    site: Arc<Site>,
    stopped: Arc<AtomicBool>,
    wakeup: Arc<Wakeup>,
    done: Receiver<()>,
}

impl Bridge {
    /// Binds, and starts the hub and the listener. `inbox` is what the adapters send.
    pub fn start(
        options: &BridgeOptions,
        inbox: Receiver<Inbound>,
        threads: &mut IoThreads,
    ) -> io::Result<Bridge> {
        Bridge::start_inner(options, inbox, None, threads)
    }

    /// As [`Bridge::start`], for a bridge that carries an agent session to its pages (issue 11,
    /// `askpane claude --ui web`): they show its transcript and permission cards, and their
    /// prompts and Stop go to `commands`. `prompt` is the first user turn, when the command line
    /// gave one. With `stop_after_turn`, the bridge then ends with the agent, not its turn.
    pub fn start_with_session(
        options: &BridgeOptions,
        inbox: Receiver<Inbound>,
        commands: Sender<SessionCommand>,
        prompt: Option<String>,
        threads: &mut IoThreads,
    ) -> io::Result<Bridge> {
        let session = CarriedSession { commands, prompt };
        Bridge::start_inner(options, inbox, Some(session), threads)
    }

    fn start_inner(
        options: &BridgeOptions,
        inbox: Receiver<Inbound>,
        session: Option<CarriedSession>,
        threads: &mut IoThreads,
    ) -> io::Result<Bridge> {
        let listener = TcpListener::bind(options.bind)?;
        // Non-blocking: the listener waits in poll(2), so a stop wakes it at once, and a
        // connection that went away between poll and accept does not block it.
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let served = served_addresses(address);
        let link = Arc::new(Link::new()?);
        let stopped = Arc::new(AtomicBool::new(false));
        let wakeup = Arc::new(Wakeup::new()?);
        let (to_hub, hub_inbox) = crossbeam_channel::unbounded();
        let (done_sender, done) = crossbeam_channel::bounded(1);

        let hub = Hub::new(options, Arc::clone(&stopped), Arc::clone(&wakeup), session);
        threads.spawn("web-hub", move || {
            hub.run(&inbox, &hub_inbox);
            let _ = done_sender.send(());
            Ok(())
        })?;

        let site = Arc::new(Site {
            assets: options.assets,
            page: http::marked_page(options.assets),
            link,
            served,
            to_hub,
            stopped: Arc::clone(&stopped),
            registry: Registry::default(),
        });
        let accept_wakeup = Arc::clone(&wakeup);
        let accepting = Arc::clone(&site);
        threads.spawn("web-accept", move || {
            accept(&listener, &accepting, &accept_wakeup);
            Ok(())
        })?;
        Ok(Bridge { address, site, stopped, wakeup, done })
    }

    /// Where the page is: open it in a browser. The token is in the fragment. On a loopback or
    /// unspecified bind this is the loopback address; [`Bridge::urls`] lists every address.
    pub fn url(&self) -> String {
        self.urls().into_iter().next().unwrap_or_default()
    }

    /// A link per address the bridge serves (loopback first): with `--bind 0.0.0.0`, one per
    /// address of this machine, the ones another device can use.
    pub fn urls(&self) -> Vec<String> {
        links(&self.site)
    }

    /// "New link" (issue 11): a new token. Every page on the old one is told the link was
    /// replaced (close code [`crate::protocol::web::LINK_REPLACED_CODE`]) and stops
    /// reconnecting; the old link no longer opens a connection. Open questions stay open for
    /// the new link (pages gone count as gone: [`PAGE_GONE_GRACE`]). [`Bridge::urls`] then
    /// gives the new links.
    pub fn replace_link(&self) -> io::Result<()> {
        self.link_control().replace().map(drop)
    }

    /// A handle that replaces the link from another thread (issue 11: `askpane inbox
    /// --new-link` arrives on the inbox socket's thread).
    pub fn link_control(&self) -> LinkControl {
        LinkControl { site: Arc::clone(&self.site) }
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Waits until the hub ends (all adapters done and nothing open, with `stop_when_done`).
    pub fn wait(&self) {
        let _ = self.done.recv();
    }

    /// Stops accepting and ends every connection; the threads then end by themselves, within
    /// about a second.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.wakeup.wake();
    }
}

/// "New link" for a running bridge, from any thread (see [`Bridge::replace_link`]).
#[derive(Clone)]
pub struct LinkControl {
    site: Arc<Site>,
}

impl LinkControl {
    /// Replaces the link as [`Bridge::replace_link`] does; returns the new links, loopback
    /// first, as [`Bridge::urls`] lists them.
    pub fn replace(&self) -> io::Result<Vec<String>> {
        self.site.link.replace()?;
        self.site.registry.wake_pages();
        Ok(links(&self.site))
    }
}

/// A link per served address, with the current token in the fragment.
fn links(site: &Site) -> Vec<String> {
    let token = site.link.token();
    site.served.iter().map(|address| format!("http://{address}/#token={token}")).collect()
}

/// True when browsers elsewhere on the network could reach the bridge.
pub fn is_exposed(bind: &SocketAddr) -> bool {
    !bind.ip().is_loopback()
}

/// The addresses a browser can reach the bridge at: the bound one, or on an unspecified bind
/// (`0.0.0.0`, `::`) loopback and every address of this machine's network interfaces (IPv6
/// link-local ones left out: a link to them needs a zone). Only these are accepted as Host and
/// Origin, and a link is printed for each.
fn served_addresses(bound: SocketAddr) -> Vec<SocketAddr> {
    let port = bound.port();
    if !bound.ip().is_unspecified() {
        return vec![bound];
    }
    let ipv6 = bound.is_ipv6();
    let mut ips: Vec<IpAddr> = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    if ipv6 {
        ips.push(IpAddr::V6(Ipv6Addr::LOCALHOST));
    }
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => {
            for ip in interfaces.iter().map(if_addrs::Interface::ip) {
                let usable = match ip {
                    IpAddr::V4(_) => true,
                    // A `::` socket takes IPv4 too (Linux's default dual stack).
                    IpAddr::V6(v6) => ipv6 && !v6.is_unicast_link_local(),
                };
                if usable && !ips.contains(&ip) {
                    ips.push(ip);
                }
            }
        }
        Err(error) => log::warn!(
            "could not list this machine's network addresses ({error}); only loopback \
             links work"
        ),
    }
    ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect()
}

fn new_token() -> io::Result<String> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// True when `host` (a `Host` header, or an `Origin` without its scheme) names one of the
/// addresses the bridge serves, with its port: an IP literal among them, or `localhost` when
/// loopback is among them. A DNS name other than localhost is never accepted: that is what a
/// DNS-rebinding page sends.
fn names_this_server(host: &str, served: &[SocketAddr]) -> bool {
    let Some((name, port)) = host.rsplit_once(':') else { return false };
    let Some(first) = served.first() else { return false };
    if port != first.port().to_string() {
        return false;
    }
    // An IPv6 literal is bracketed in a Host ("[::1]:8123"), and only then.
    let ip = match name.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')) {
        Some(inner) => inner.parse::<Ipv6Addr>().ok().map(IpAddr::V6),
        None => name.parse::<Ipv4Addr>().ok().map(IpAddr::V4),
    };
    match ip {
        Some(ip) => served.iter().any(|address| address.ip() == ip),
        None => name == "localhost" && served.iter().any(|address| address.ip().is_loopback()),
    }
}

/// Equal in constant time: how long it takes says nothing about where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

// ---------------------------------------------------------------------------------------------
// Waking threads that block in poll(2)

/// Wakes a thread blocked in `poll(2)` (std has no poll): the listener on a stop, a connection
/// when the hub queued a message for its page. A loopback UDP socket connected to itself, not a
/// pipe: Windows polls only sockets, and one waker for every platform is one to get right.
struct Wakeup {
    socket: UdpSocket,
}

impl Wakeup {
    fn new() -> io::Result<Wakeup> {
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
        // Connected to itself: datagrams from anywhere else are dropped by the kernel.
        socket.connect(socket.local_addr()?)?;
        socket.set_nonblocking(true)?;
        Ok(Wakeup { socket })
    }

    /// Wakes the waiter. A full buffer means it is woken already.
    fn wake(&self) {
        let _ = self.socket.send(&[1]);
    }

    /// Empties the socket once woken, so the next poll blocks again.
    fn drain(&self) {
        let mut buffer = [0_u8; 64];
        while matches!(self.socket.recv(&mut buffer), Ok(read) if read > 0) {}
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

/// Waits until `socket` (for `interest`) or `wakeup` is ready, at most `timeout` (`None`:
/// no limit). Returns the socket's events.
fn wait_ready(
    socket: BorrowedFd<'_>,
    interest: PollFlags,
    wakeup: &Wakeup,
    timeout: Option<Duration>,
) -> io::Result<PollFlags> {
    let mut fds = [
        PollFd::from_borrowed_fd(socket, interest),
        PollFd::from_borrowed_fd(wakeup.fd(), PollFlags::IN),
    ];
    let timeout = timeout.and_then(|timeout| Timespec::try_from(timeout).ok());
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(_) | Err(rustix::io::Errno::INTR) => {}
        Err(error) => return Err(error.into()),
    }
    let [socket_ready, wakeup_ready] = &fds;
    if wakeup_ready.revents().contains(PollFlags::IN) {
        wakeup.drain();
    }
    Ok(socket_ready.revents())
}

// ---------------------------------------------------------------------------------------------
// The listener

pub mod bundle;
mod http;
mod hub;

use http::{Registry, Site, accept};
use hub::{CarriedSession, Hub};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abcd", b"abcd"));
        assert!(!same_secret(b"abcd", b"abce"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
    }

    fn address(text: &str) -> SocketAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn hosts_that_name_this_server() {
        let loopback = [address("127.0.0.1:8123")];
        assert!(names_this_server("127.0.0.1:8123", &loopback));
        assert!(names_this_server("localhost:8123", &loopback));
        assert!(!names_this_server("localhost:8124", &loopback));
        assert!(!names_this_server("evil.example:8123", &loopback));
        assert!(!names_this_server("127.0.0.1", &loopback));
        assert!(!names_this_server("127.0.0.2:8123", &loopback));
        assert!(is_exposed(&address("0.0.0.0:8123")));
        // An unspecified bind serves loopback and this machine's addresses, and nothing else.
        let lan = [address("127.0.0.1:8123"), address("192.168.1.20:8123")];
        assert!(names_this_server("192.168.1.20:8123", &lan));
        assert!(names_this_server("localhost:8123", &lan));
        assert!(!names_this_server("192.168.1.21:8123", &lan));
        assert!(!names_this_server("10.0.0.1:8123", &lan));
        assert!(!names_this_server("rebound.example:8123", &lan));
        let public = [address("192.168.1.20:8123")];
        assert!(!names_this_server("localhost:8123", &public));
        let v6 = [address("[::1]:8123")];
        assert!(names_this_server("[::1]:8123", &v6));
        assert!(!names_this_server("::1:8123", &v6));
    }

    #[test]
    fn an_unspecified_bind_serves_loopback_first_and_only_real_addresses() {
        let served = served_addresses(address("0.0.0.0:8123"));
        assert_eq!(served.first(), Some(&address("127.0.0.1:8123")), "{served:?}");
        assert!(served.iter().all(|a| a.port() == 8123 && !a.ip().is_unspecified()), "{served:?}");
        assert_eq!(served_addresses(address("127.0.0.1:9")), [address("127.0.0.1:9")]);
    }
}
