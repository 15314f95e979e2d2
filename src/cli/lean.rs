//! The lean inbox (issue 14): `askpane inbox` whose window was closed with nothing waiting and no
//! client connected becomes this small program, the same process (same pid, socket and lock),
//! which only watches the socket, and becomes the full inbox again when a client connects.
//!
//! Why a new program image: a window's GL stack (Mesa's llvmpipe and libLLVM) stays mapped when
//! the window closes, about 100 MB of a 120 MB process, and only `exec` gives that back. The
//! listener passes to the new image as fd 3 under systemd's socket-activation variables
//! (`LISTEN_FDS`, `LISTEN_PID`); the lock file stays open across `exec` (its flock with it), so
//! no other inbox can start in between, and a client that connects meanwhile waits in the
//! socket's backlog.

use std::ffi::OsString;
use std::io;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;

use anyhow::Context as _;
use command_fds::{CommandFdExt as _, FdMapping};
use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;

use askpane::protocol::exit;
use askpane::transport::inbox::InboxLock;
use askpane::transport::matrix_child::{HANDED_ON, MatrixChild};

/// The first descriptor of systemd's socket-activation protocol, where the listener goes.
const LISTENER_FD: i32 = 3;

/// Where the lock's open file goes. Later images never touch it: it stays open (and the lock
/// held) until the process ends, and nothing else can be given this number while it is open.
const LOCK_FD: i32 = 4;

/// What the next program image is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    /// Only the socket watched (`askpane inbox --lean`).
    Lean,
    /// The full inbox, its window hidden until a client's message shows it
    /// (`askpane inbox --resumed`).
    Resumed,
    /// The full inbox, its window shown: the tray's "Show window" (`askpane inbox --resumed
    /// --shown`, issue 29 item 5).
    Shown,
}

impl Stage {
    fn flag(self) -> &'static str {
        match self {
            Stage::Lean => "--lean",
            Stage::Resumed | Stage::Shown => "--resumed",
        }
    }

    /// The flags after [`Stage::flag`].
    fn more_flags(self) -> &'static [&'static str] {
        match self {
            Stage::Lean | Stage::Resumed => &[],
            Stage::Shown => &["--shown"],
        }
    }
}

/// The listener a previous image of this process handed on, or `None` when it handed none
/// (the environment says nothing of one).
pub(super) fn inherited_listener() -> io::Result<Option<UnixListener>> {
    let mut passed = listenfd::ListenFd::from_env();
    let listener = passed.take_unix_listener(0)?;
    if let Some(listener) = &listener {
        // The accept loop blocks; the handing-on image may have left it either way.
        listener.set_nonblocking(false)?;
    }
    Ok(listener)
}

/// Replaces this process with the `stage` inbox, handing it `listener` (and keeping `lock`
/// held across the exec, when this image took it). Returns only when that failed.
pub(super) fn become_stage(
    stage: Stage,
    listener: UnixListener,
    lock: Option<&InboxLock>,
    matrix_bridge: Option<u32>,
) -> anyhow::Error {
    match exec_stage(stage, listener, lock, matrix_bridge) {
        Ok(never) => match never {},
        Err(error) => error,
    }
}

fn exec_stage(
    stage: Stage,
    listener: UnixListener,
    lock: Option<&InboxLock>,
    matrix_bridge: Option<u32>,
) -> anyhow::Result<std::convert::Infallible> {
    let mut passed = vec![FdMapping { parent_fd: listener.into(), child_fd: LISTENER_FD }];
    // Only the image that took the lock holds a handle on it; later ones have it at LOCK_FD,
    // left open across exec (a mapped descriptor is not closed on exec).
    if let Some(lock) = lock {
        let parent_fd = lock.duplicate().context("keeping the inbox lock across exec")?;
        passed.push(FdMapping { parent_fd, child_fd: LOCK_FD });
    }
    let program = std::env::current_exe().context("finding askpane's own program")?;
    let mut command = Command::new(program);
    command
        .args(next_args(std::env::args_os().skip(1), stage))
        .env("LISTEN_FDS", "1")
        .env("LISTEN_PID", std::process::id().to_string())
        .env_remove("LISTEN_FDNAMES")
        // Issue 31: the Matrix bridge stays this process's child; the next image watches it.
        .env_remove(HANDED_ON)
        .fd_mappings(passed)
        .context("placing the inbox socket for the next stage")?;
    if let Some(pid) = matrix_bridge {
        command.env(HANDED_ON, pid.to_string());
    }
    Err(command.exec()).context(format!("starting askpane inbox {}", stage.flag()))
}

/// This run's arguments with the stage flag replaced: the next image keeps the user's choices
/// (theme, store, notifications).
fn next_args(args: impl Iterator<Item = OsString>, stage: Stage) -> Vec<OsString> {
    // `--background` only says how the first image starts.
    let stages = [Stage::Lean.flag(), Stage::Resumed.flag(), "--shown", "--background"];
    let mut next: Vec<OsString> =
        args.filter(|arg| !stages.iter().any(|flag| arg.as_os_str() == *flag)).collect();
    next.push(stage.flag().into());
    next.extend(stage.more_flags().iter().map(OsString::from));
    next
}

/// `askpane inbox --lean`: waits, using no CPU, until a client connects (then becomes the full
/// inbox, which accepts it) or a termination signal arrives (then ends, as the full inbox
/// would with nothing open: the socket file removed, exit 0).
pub(super) fn run(socket: &Path, state_dir: Option<&Path>) -> anyhow::Result<u8> {
    let listener = inherited_listener()
        .context("taking the inbox socket handed on")?
        .context("no inbox socket was handed on (askpane inbox --lean is started by the inbox)")?;
    watch(socket, listener, None, state_dir)
}

/// The lean inbox's wait on `listener` (see [`run`]); `lock` is the inbox lock when this image
/// took it (`askpane inbox --background`), to be handed on with the listener.
pub(super) fn watch(
    socket: &Path,
    listener: UnixListener,
    lock: Option<&InboxLock>,
    state_dir: Option<&Path>,
) -> anyhow::Result<u8> {
    // Issue 31: the Matrix bridge runs while the inbox is lean too (started, or the one the full
    // image handed on).
    let matrix = state_dir.and_then(MatrixChild::start);
    let (signalled, signal_end) = UnixStream::pair().context("making the signal pipe")?;
    for signal in signal_hook::consts::TERM_SIGNALS.iter().chain(&[signal_hook::consts::SIGHUP]) {
        let end = signal_end.try_clone().context("making the signal pipe")?;
        signal_hook::low_level::pipe::register(*signal, end).context("catching signals")?;
    }
    // Issue 29 item 5: the tray icon stays while the inbox is lean; its menu's choices come
    // to this thread over `asked` (one byte each), so that the exec happens here, in order.
    let (asked, ask_end) = UnixStream::pair().context("making the tray's pipe")?;
    // `ask_end` stays open here whether or not a tray took a copy: its closing would wake the
    // poll below for nothing.
    let tray = lean_tray(&ask_end);
    eprintln!("askpane: inbox lean (no window, nothing waiting), pid {}", std::process::id());
    let mut show = false;
    loop {
        let mut watched = [
            PollFd::new(&listener, PollFlags::IN),
            PollFd::new(&signalled, PollFlags::IN),
            PollFd::new(&asked, PollFlags::IN),
        ];
        match poll(&mut watched, None) {
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            Err(error) => return Err(error).context("watching the inbox socket"),
        }
        let ready = |fd: &PollFd| !fd.revents().is_empty();
        let [client, signal, tray_asked] = &watched;
        let choice = if ready(tray_asked) { tray_choice(&asked) } else { None };
        if ready(signal) || choice == Some(QUIT) {
            end_tray(tray);
            if let Some(matrix) = matrix {
                matrix.stop();
            }
            let _ = std::fs::remove_file(socket);
            eprintln!("askpane: inbox ended");
            return Ok(exit::OK);
        }
        if choice == Some(SHOW) {
            // Show window: the full inbox again, its window shown.
            show = true;
            break;
        }
        if ready(client) {
            break;
        }
    }
    end_tray(tray);
    drop(signalled);
    let next = match show {
        true => Stage::Shown,
        false => Stage::Resumed,
    };
    let matrix = matrix.and_then(MatrixChild::hand_on);
    Err(become_stage(next, listener, lock, matrix))
}

/// What the lean tray's menu asks of the lean inbox, as the byte it writes.
const SHOW: u8 = b's';
const QUIT: u8 = b'q';

/// The byte the tray wrote, if one can be read.
fn tray_choice(mut asked: &UnixStream) -> Option<u8> {
    let mut byte = [0u8; 1];
    match std::io::Read::read(&mut asked, &mut byte) {
        Ok(1) => {
            let [choice] = byte;
            Some(choice)
        }
        _ => None,
    }
}

/// The lean inbox's tray icon: nothing waits; Show window and Quit come to `ask_end`'s peer.
#[cfg(target_os = "linux")]
fn lean_tray(ask_end: &UnixStream) -> Option<askpane::transport::tray::Tray> {
    use askpane::protocol::tray::TrayAction;
    if !super::inbox::tray_wanted() {
        return None;
    }
    let ask_end =
        ask_end.try_clone().map_err(|error| eprintln!("askpane: no tray icon ({error})")).ok()?;
    let act = move |action| {
        let byte = match action {
            TrayAction::Show => SHOW,
            TrayAction::Quit => QUIT,
            // The lean inbox shows no notifications: there is nothing to pause.
            TrayAction::PauseNotifications => return,
        };
        let _ = std::io::Write::write_all(&mut &ask_end, &[byte]);
    };
    askpane::transport::tray::Tray::start(act)
        .map_err(|error| eprintln!("askpane: no tray icon ({error})"))
        .ok()
}

/// No tray off Linux (StatusNotifierItem is freedesktop's).
#[cfg(not(target_os = "linux"))]
struct NoTray;

#[cfg(not(target_os = "linux"))]
fn lean_tray(_ask_end: &UnixStream) -> Option<NoTray> {
    None
}

/// Takes the lean inbox's tray icon off the bus (its thread joined) before the process execs
/// or ends.
#[cfg(target_os = "linux")]
fn end_tray(tray: Option<askpane::transport::tray::Tray>) {
    drop(tray);
}

#[cfg(not(target_os = "linux"))]
fn end_tray(_tray: Option<NoTray>) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_stage_keeps_the_users_arguments_and_names_one_stage() {
        let args =
            ["inbox", "--background", "--no-notify", "--state-dir", "/tmp/x"].map(OsString::from);
        let next = next_args(args.into_iter(), Stage::Resumed);
        let expected = ["inbox", "--no-notify", "--state-dir", "/tmp/x", "--resumed"];
        assert_eq!(next, expected.map(OsString::from));
        let again = next_args(next.into_iter(), Stage::Lean);
        let expected = ["inbox", "--no-notify", "--state-dir", "/tmp/x", "--lean"];
        assert_eq!(again, expected.map(OsString::from));
        let shown = next_args(again.into_iter(), Stage::Shown);
        let expected = ["inbox", "--no-notify", "--state-dir", "/tmp/x", "--resumed", "--shown"];
        assert_eq!(shown, expected.map(OsString::from));
        let lean = next_args(shown.into_iter(), Stage::Lean);
        let expected = ["inbox", "--no-notify", "--state-dir", "/tmp/x", "--lean"];
        assert_eq!(lean, expected.map(OsString::from));
    }
}
