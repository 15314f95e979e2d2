//! The inbox's local endpoint, its one platform seam (issue 15), chosen at compile time: where
//! the socket lives, how it is bound, who may connect, and how the lock file is opened. The
//! inbox's protocol (`inbox.rs`) is written once, over [`Listener`] and [`Stream`].
//!
//! - Unix (`unix.rs`): a Unix domain socket in a 0700 directory, the socket 0600, and every peer's
//!   uid checked (SO_PEERCRED / getpeereid) before a byte is read, both ways: the inbox checks
//!   its clients, a client the inbox ([`Server`]).
//! - Windows (`windows.rs`): the same AF_UNIX socket (Windows 10 1803 and later) through
//!   `uds_windows`, whose types mirror std's, in `%LOCALAPPDATA%\askpane`: a directory of the
//!   user's profile, whose ACL admits only the user (and SYSTEM and Administrators), which
//!   Windows checks when a client connects. Windows gives no peer credentials on AF_UNIX.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// Who serves a socket a client connected to (Unix: as the kernel recorded it when the server
/// listened, SO_PEERCRED / getpeereid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    ThisUser,
    OtherUser { uid: u32 },
}
