//! The inbox's endpoint on Unix: `$XDG_RUNTIME_DIR/askpane/inbox.sock` (else
//! `/tmp/askpane-<uid>/inbox.sock`) in a directory that must be the user's own and is kept at
//! 0700; the socket 0600; every peer's uid checked before a byte is read, by the inbox of its
//! clients and by a client of the inbox (issue 24).

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use std::os::unix::net::{UnixListener as Listener, UnixStream as Stream};

use super::Server;
use crate::transport::peer::peer_of;

/// The directory for this user: `$XDG_RUNTIME_DIR/askpane`, else `/tmp/askpane-<uid>`.
/// Made 0700 if missing; refused if it is not a directory of this user's own.
pub fn private_dir() -> io::Result<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let dir = private_dir_path();
    own_private_dir(&dir, uid)?;
    Ok(dir)
}

/// Where [`private_dir`] is, neither made nor checked (`askpane doctor` looks at it as it is).
pub fn private_dir_path() -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    // `$XDG_RUNTIME_DIR` where the platform has one (Linux); macOS has none.
    let runtime = dirs::runtime_dir().filter(|dir| dir.is_dir());
    match runtime {
        Some(runtime) => runtime.join("askpane"),
        // Not `TMPDIR`: every client of this user must find the same socket, and Claude Code
        // gives each session a TMPDIR of its own.
        None => PathBuf::from("/tmp").join(format!("askpane-{uid}")),
    }
}

/// Makes `dir` (0700) or checks the one there: a real directory (not a link) owned by `uid`.
/// Our own directory found open to other users (issue 24) is narrowed to 0700, and what other
/// users put in it meanwhile (a socket posing as the inbox, a lock that links to a file of the
/// user's) is removed, said in one line on stderr.
fn own_private_dir(dir: &Path, uid: u32) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => {
            return Err(io::Error::new(
                error.kind(),
                format!("cannot make {}: {error}", dir.display()),
            ));
        }
    }
    let metadata = fs::symlink_metadata(dir)?;
    if !metadata.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory; askpane will not put its socket there",
            dir.display()
        )));
    }
    if metadata.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to another user (uid {}); askpane will not put its socket there",
                dir.display(),
                metadata.uid()
            ),
        ));
    }
    let was = metadata.mode() & 0o7777;
    if was & 0o077 != 0 {
        // Narrowed first: from here on nobody else can add to it.
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        let removed = remove_others_entries(dir, uid);
        log::warn!(
            "{} was open to other users (mode {was:04o}): narrowed to 0700{removed}",
            dir.display()
        );
    }
    Ok(())
}

/// Removes every entry of `dir` that is not `uid`'s (only another user, or root, could have
/// made one), and says what went, for the line [`own_private_dir`] writes. The user's own
/// entries stay: an inbox of theirs may be running on them.
fn remove_others_entries(dir: &Path, uid: u32) -> String {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => return format!(", but cannot look inside it ({error})"),
    };
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    for entry in entries.flatten() {
        let Ok(metadata) = entry.path().symlink_metadata() else { continue };
        if metadata.uid() == uid {
            continue;
        }
        let name = format!("{} (uid {})", entry.file_name().to_string_lossy(), metadata.uid());
        // Not following links: a planted link goes, what it names stays.
        let gone = match metadata.is_dir() {
            true => fs::remove_dir_all(entry.path()),
            false => fs::remove_file(entry.path()),
        };
        match gone {
            Ok(()) => removed.push(name),
            Err(error) => kept.push(format!("{name}: {error}")),
        }
    }
    let mut said = match removed.is_empty() {
        true => String::from(", and nothing of another user's was in it"),
        false => format!(", and removed what other users put there: {}", removed.join(", ")),
    };
    if !kept.is_empty() {
        said.push_str(&format!("; could not remove {}", kept.join(", ")));
    }
    said
}

/// Opens (creating, 0600) the lock file, which must be a plain file of this user's with no
/// other name: never through a link (issue 24: a planted `inbox.lock` linking to a file of the
/// user's had that file truncated), and not another user's. Refused with the reason otherwise.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let refused = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}; askpane will not use it as its lock (remove it if you did not make it)",
                path.display()
            ),
        )
    };
    // NONBLOCK: a planted FIFO must not block the open (it is refused below).
    let flags =
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let file = match rustix::fs::open(path, flags, Mode::from_raw_mode(0o600)) {
        Ok(descriptor) => File::from(descriptor),
        // Linux and macOS say ELOOP for a link under O_NOFOLLOW; FreeBSD EMLINK.
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::MLINK) => {
            return Err(refused("is a symbolic link".to_owned()));
        }
        Err(error) => {
            let error = io::Error::from(error);
            return Err(io::Error::new(error.kind(), format!("{}: {error}", path.display())));
        }
    };
    let metadata = file.metadata()?;
    let uid = rustix::process::getuid().as_raw();
    if !metadata.file_type().is_file() {
        return Err(refused("is not a plain file".to_owned()));
    }
    if metadata.uid() != uid {
        return Err(refused(format!("belongs to another user (uid {})", metadata.uid())));
    }
    if metadata.nlink() != 1 {
        return Err(refused(format!("has {} names (hard links)", metadata.nlink())));
    }
    Ok(file)
}

/// Binds the socket (0600), replacing one a dead inbox left. Call with the lock held.
pub fn bind(socket: &Path) -> io::Result<Listener> {
    match fs::remove_file(socket) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let listener = Listener::bind(socket)?;
    // The directory is 0700 already, so nobody else could reach it in between.
    fs::set_permissions(socket, fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Connects to the inbox's socket.
pub fn connect(socket: &Path) -> io::Result<Stream> {
    Stream::connect(socket)
}

/// Who serves `stream`: checked before a client sends anything (issue 24: a socket another
/// user planted where the inbox's goes was sent the question, and its forged answer taken).
pub fn server_of(stream: &Stream) -> io::Result<Server> {
    let uid = peer_of(stream)?.uid;
    Ok(match uid == rustix::process::getuid().as_raw() {
        true => Server::ThisUser,
        false => Server::OtherUser { uid },
    })
}

/// Who may use the inbox: this process's user.
#[derive(Clone, Copy, Debug)]
pub struct Gate {
    uid: u32,
}

impl Gate {
    pub fn for_this_user() -> Gate {
        Gate { uid: rustix::process::getuid().as_raw() }
    }

    /// Admits a client of this user (with its pid where the platform says), or says why not.
    pub fn admit(&self, stream: &Stream) -> Result<Option<u32>, String> {
        match peer_of(stream) {
            Ok(peer) if peer.uid == self.uid => Ok(peer.pid),
            Ok(peer) => Err(format!("refused a client of another user (uid {})", peer.uid)),
            Err(error) => Err(format!("refused a client whose user is unknown: {error}")),
        }
    }
}

/// Nothing to do: a blocked read on Unix ends when the server shuts the socket's reading down.
pub fn prepare_server_stream(_stream: &Stream) -> io::Result<()> {
    Ok(())
}

/// Tells the inbox's accept loop when a client waits, or that it must stop, and accepts none
/// after: it polls the listener beside a pipe that [`Acceptor::stop`] writes to. A client that
/// connects while the server ends stays in the socket's backlog for whoever takes the listener
/// next (the lean inbox, issue 14), rather than being accepted and dropped unanswered.
#[derive(Debug)]
pub struct Acceptor {
    stop_signal: Stream,
    stopped: Stream,
    stop_sent: std::sync::atomic::AtomicBool,
}

/// What [`Acceptor::wait`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// A client waits: `accept` returns at once.
    Client,
    Stopped,
}

impl Acceptor {
    /// `_socket` is for the platforms that wake a blocked accept with a connection.
    pub fn new(_socket: &Path) -> io::Result<Acceptor> {
        let (stop_signal, stopped) = Stream::pair()?;
        Ok(Acceptor { stop_signal, stopped, stop_sent: Default::default() })
    }

    /// Blocks until a client waits on `listener` or [`Acceptor::stop`] is called.
    pub fn wait(&self, listener: &Listener) -> io::Result<Waited> {
        use rustix::event::{PollFd, PollFlags, poll};
        loop {
            let mut watched =
                [PollFd::new(&self.stopped, PollFlags::IN), PollFd::new(listener, PollFlags::IN)];
            match poll(&mut watched, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(error) => return Err(error.into()),
            }
            let [stop, client] = &watched;
            // Stopping wins over a waiting client: that one is left for the next listener.
            if !stop.revents().is_empty() {
                return Ok(Waited::Stopped);
            }
            if !client.revents().is_empty() {
                return Ok(Waited::Client);
            }
        }
    }

    /// Whether [`Acceptor::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stop_sent.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Ends [`Acceptor::wait`], now or at its next call.
    pub fn stop(&self) {
        use std::io::Write as _;
        self.stop_sent.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = (&self.stop_signal).write_all(&[1]);
    }
}
