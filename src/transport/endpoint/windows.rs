//! The inbox's endpoint on Windows: an AF_UNIX socket (Windows 10 1803 and later) through
//! `uds_windows`, at `%LOCALAPPDATA%\askpane\inbox.sock`.
//!
//! Why AF_UNIX and not a named pipe: the inbox's protocol, its threads and its shutdown are
//! written once over std-shaped socket types, and `uds_windows` (kept by zbus's maintainer, for
//! zbus's own Windows transport) mirrors std's `UnixListener`/`UnixStream`; a named pipe
//! would need a second server with other semantics (no read timeouts, no half shutdown).
//! Who may connect is decided by the socket file's ACL, which Windows checks on `connect`: the
//! file inherits `%LOCALAPPDATA%`'s, which admits the user (and SYSTEM and Administrators)
//! only. AF_UNIX on Windows gives no peer credentials, so no pid is known.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use uds_windows::{UnixListener as Listener, UnixStream as Stream};

use super::Server;

/// The directory for this user: `%LOCALAPPDATA%\askpane`, made if missing.
pub fn private_dir() -> io::Result<PathBuf> {
    let local = dirs::data_local_dir().ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "%LOCALAPPDATA% is not known for this user")
    })?;
    let dir = dir_under(&local);
    fs::create_dir_all(&dir).map_err(|error| {
        io::Error::new(error.kind(), format!("cannot make {}: {error}", dir.display()))
    })?;
    let metadata = fs::symlink_metadata(&dir)?;
    if !metadata.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory; askpane will not put its socket there",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The inbox's directory under the user's `%LOCALAPPDATA%`.
fn dir_under(local_app_data: &Path) -> PathBuf {
    local_app_data.join("askpane")
}

/// Opens (creating) the lock file; its ACL is the directory's.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)
}

/// Binds the socket, replacing one a dead inbox left. Call with the lock held.
pub fn bind(socket: &Path) -> io::Result<Listener> {
    match fs::remove_file(socket) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    Listener::bind(socket).map_err(explain)
}

/// Connects to the inbox's socket.
pub fn connect(socket: &Path) -> io::Result<Stream> {
    Stream::connect(socket).map_err(explain)
}

/// Who serves `stream`: Windows gives no peer credentials on AF_UNIX, and the directory's ACL
/// (the user's `%LOCALAPPDATA%`) lets no other user make a socket there.
pub fn server_of(_stream: &Stream) -> io::Result<Server> {
    Ok(Server::ThisUser)
}

/// Winsock's "address family not supported" (`WSAEAFNOSUPPORT`): no AF_UNIX on this Windows.
const NO_UNIX_SOCKETS: i32 = 10047;

/// Says what is missing when this Windows has no Unix domain sockets.
fn explain(error: io::Error) -> io::Error {
    match error.raw_os_error() {
        Some(NO_UNIX_SOCKETS) => io::Error::new(
            io::ErrorKind::Unsupported,
            "the inbox needs Unix domain sockets, which Windows has from Windows 10 version \
             1803 on; this one has none",
        ),
        _ => error,
    }
}

/// Who may use the inbox: whoever the socket file's ACL lets connect (this user).
#[derive(Clone, Copy, Debug)]
pub struct Gate;

impl Gate {
    pub fn for_this_user() -> Gate {
        Gate
    }

    /// Every client that got through the ACL; Windows names no pid.
    pub fn admit(&self, _stream: &Stream) -> Result<Option<u32>, String> {
        Ok(None)
    }
}

/// How often a server's reader looks up from a quiet client to see whether the inbox is
/// ending: on Windows, shutting a socket down does not wake a read already blocked on it
/// (rust-lang/rust#121594), so a reader must not block for good.
const STOP_POLL: Duration = Duration::from_millis(250);

/// Makes a served connection's reads time out now and then (see [`STOP_POLL`]).
pub fn prepare_server_stream(stream: &Stream) -> io::Result<()> {
    stream.set_read_timeout(Some(STOP_POLL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_unix_sockets_is_said_in_words() {
        let error = explain(io::Error::from_raw_os_error(NO_UNIX_SOCKETS));
        assert_eq!(error.kind(), io::ErrorKind::Unsupported);
        assert!(error.to_string().contains("Windows 10 version 1803"), "{error}");
    }

    #[test]
    fn the_socket_lives_in_local_app_data() {
        let dir = dir_under(Path::new(r"C:\Users\ada\AppData\Local"));
        assert_eq!(dir, Path::new(r"C:\Users\ada\AppData\Local").join("askpane"));
    }
}

/// Tells the inbox's accept loop whether to accept again. Windows has no lean inbox to hand a
/// waiting client to, so a blocked accept is woken by a connection of our own, which is then
/// dropped.
#[derive(Debug)]
pub struct Acceptor {
    socket: PathBuf,
    stopped: std::sync::atomic::AtomicBool,
}

/// What [`Acceptor::wait`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// Go on to `accept`, which blocks here until a client (or [`Acceptor::stop`]'s) comes.
    Client,
    Stopped,
}

impl Acceptor {
    pub fn new(socket: &Path) -> io::Result<Acceptor> {
        Ok(Acceptor { socket: socket.to_owned(), stopped: Default::default() })
    }

    pub fn wait(&self, _listener: &Listener) -> io::Result<Waited> {
        Ok(match self.is_stopped() {
            true => Waited::Stopped,
            false => Waited::Client,
        })
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn stop(&self) {
        self.stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = Stream::connect(&self.socket);
    }
}
