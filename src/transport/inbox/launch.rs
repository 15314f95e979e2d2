//! Starting an inbox for a client that found none: `askpane inbox --on-demand …` in the background
//! (a process group of its own, its output in `inbox.log`), then connecting to it. Of several
//! clients doing this at once, the inbox lock keeps one inbox.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{ConnectError, InboxClient, Place};

/// How long a client waits for an inbox it started to listen.
const START_WAIT: Duration = Duration::from_secs(15);

/// The client's own answering flags, never passed on: they travel with each request, and an
/// inbox started by one client serves every client after it.
const CLIENT_ONLY_VARIABLES: [&str; 6] = [
    "ASKPANE_ANSWERS",
    "ASKPANE_SUBMIT",
    "ASKPANE_DECLINE",
    "ASKPANE_TIMEOUT",
    "ASKPANE_UI",
    "ASKPANE_NONINTERACTIVE",
];

/// Starts this executable as `askpane inbox` with `args` (everything after `inbox`: the window
/// and store settings the client was given), its output appended to `inbox.log` in `log_dir`,
/// and connects to it once it listens.
pub fn start_inbox(
    place: &Place,
    args: &[OsString],
    log_dir: &Path,
) -> Result<InboxClient, String> {
    let exe = std::env::current_exe().map_err(|error| format!("cannot find askpane: {error}"))?;
    let (log_out, log_path) = log_file(log_dir)?;
    let log_err = log_out.try_clone().map_err(|error| error.to_string())?;
    let mut command = Command::new(exe);
    command.arg("inbox").args(args);
    for name in CLIENT_ONLY_VARIABLES {
        command.env_remove(name);
    }
    detach(&mut command);
    command.stdin(Stdio::null()).stdout(log_out).stderr(log_err);
    let mut child =
        command.spawn().map_err(|error| format!("cannot start `askpane inbox`: {error}"))?;
    let deadline = Instant::now() + START_WAIT;
    loop {
        match InboxClient::connect(place) {
            Ok(client) => return Ok(client),
            Err(ConnectError::NoHello(why)) => return Err(why),
            Err(ConnectError::Unsupported(error)) => return Err(error.to_string()),
            Err(error @ ConnectError::Foreign { .. }) => return Err(error.to_string()),
            Err(ConnectError::NotRunning(_)) => {}
        }
        // An inbox that lost the race to another exits 0 at once; keep trying the winner.
        if let Ok(Some(status)) = child.try_wait()
            && !status.success()
        {
            return Err(format!(
                "the inbox failed to start ({status}); see {}",
                log_path.display()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!("the inbox did not start in time; see {}", log_path.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Lets the inbox outlive the client that starts it. Unix: a process group of its own, so Claude
/// Code ending the hook's group leaves the inbox alone.
#[cfg(unix)]
fn detach(command: &mut Command) {
    std::os::unix::process::CommandExt::process_group(command, 0);
}

/// Lets the inbox outlive the client that starts it. Windows: no console of its own (its output
/// goes to the log file) and a process group of its own, so the client's console closing or its
/// Ctrl+C leaves the inbox alone.
#[cfg(windows)]
fn detach(command: &mut Command) {
    use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS};
    std::os::windows::process::CommandExt::creation_flags(
        command,
        DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP,
    );
}

/// The inbox's log, `inbox.log` in `dir` (made private if missing), opened to append.
fn log_file(dir: &Path) -> Result<(File, PathBuf), String> {
    // Private: the log holds the browser page's address, whose token lets anyone answer. (On
    // Windows the state directory is under %LOCALAPPDATA%, whose ACL is the user's already.)
    let mut make_dir = std::fs::DirBuilder::new();
    make_dir.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut make_dir, 0o700);
    make_dir.create(dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
    let path = dir.join("inbox.log");
    let mut open = File::options();
    open.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let file =
        open.open(&path).map_err(|error| format!("cannot open {}: {error}", path.display()))?;
    Ok((file, path))
}
