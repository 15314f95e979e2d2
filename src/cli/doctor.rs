//! `askpane doctor` (issue 29 item 4): gathers what each check inspects (the display, the session
//! bus, the inbox, the private directories, each agent's hooks and MCP entries, the web bundle,
//! fonts) and prints the library's verdicts (`protocol::doctor`), each problem with the command
//! that fixes it. Exit 0 when all is well, 1 when something needs the person. It changes nothing:
//! no directory is made or narrowed, no inbox started, no notification shown.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::Args;

use askpane::protocol::doctor::{self, Check, DirFacts, DisplayFacts, InboxFacts, Report, Script};
use askpane::protocol::exit;
use askpane::transport::inbox::{ConnectError, InboxClient, Place};

#[derive(Args, Debug)]
pub(super) struct DoctorArgs {
    /// One JSON object for scripts (see the manual's doctor page) instead of the text report.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: DoctorArgs) -> anyhow::Result<u8> {
    let this_binary = std::env::current_exe().context("cannot find askpane's own path")?;
    let mut checks = vec![doctor::display(&display_facts())];
    checks.push(doctor::notifications(&askpane::transport::notify::service_facts()));
    #[cfg(target_os = "linux")]
    checks.push(doctor::tray(&askpane::transport::tray::host_facts()));
    let (socket_dir, inbox_usable) = socket_dir_check();
    checks.push(inbox_check(inbox_usable));
    checks.push(socket_dir);
    checks.push(state_dir_check());
    checks.extend(super::install::check::checks(&this_binary));
    checks.push(doctor::web_bundle(askpane::transport::serve::bundle::available()));
    checks.push(doctor::matrix_bridge(&matrix_facts()));
    checks.extend(font_checks());
    let report = Report::of(checks);
    match args.json {
        true => say!("{}", report.json()),
        false => {
            for line in report.text() {
                say!("{line}");
            }
        }
    }
    Ok(if report.ok { exit::OK } else { exit::DECLINED })
}

/// Issue 31: the Matrix bridge in the state directory, its program, and whether one runs.
fn matrix_facts() -> doctor::MatrixFacts {
    use askpane::protocol::matrix_setup::Setup;
    use askpane::transport::matrix_child;
    let given = std::env::var_os("ASKPANE_STATE_DIR").map(std::path::PathBuf::from);
    let Ok(state_dir) = askpane::store::state_dir(given.as_deref()) else {
        return doctor::MatrixFacts::NotConfigured;
    };
    match matrix_child::setup(&state_dir) {
        Setup::NotConfigured => doctor::MatrixFacts::NotConfigured,
        Setup::Disabled => doctor::MatrixFacts::Disabled,
        Setup::Broken(why) => doctor::MatrixFacts::Broken(why),
        Setup::Configured => doctor::MatrixFacts::Configured {
            program: matrix_child::find_binary().map(|path| path.display().to_string()),
            running: matrix_child::running(&state_dir),
        },
    }
}

/// `WAYLAND_DISPLAY` and `DISPLAY`, each tried.
fn display_facts() -> DisplayFacts {
    let set = |name| std::env::var(name).ok().filter(|value| !value.is_empty());
    let wayland = set("WAYLAND_DISPLAY").map(|name| {
        let path = match Path::new(&name).is_absolute() {
            true => std::path::PathBuf::from(&name),
            false => dirs::runtime_dir().unwrap_or_default().join(&name),
        };
        let reached = std::os::unix::net::UnixStream::connect(&path)
            .map(drop)
            .map_err(|error| format!("{}: {error}", path.display()));
        (name, reached)
    });
    let x11 = set("DISPLAY").map(|name| {
        let reached = x11_reachable(&name);
        (name, reached)
    });
    DisplayFacts { wayland, x11 }
}

/// Whether the X server `name` accepts this user (its authority checked too).
#[cfg(target_os = "linux")]
fn x11_reachable(name: &str) -> Result<(), String> {
    x11rb::connect(Some(name)).map(drop).map_err(|error| error.to_string())
}

#[cfg(not(target_os = "linux"))]
fn x11_reachable(_name: &str) -> Result<(), String> {
    Ok(())
}

/// The facts of the directory at `path`, as it is.
fn dir_facts(path: &Path) -> DirFacts {
    use std::os::unix::fs::MetadataExt as _;
    match std::fs::symlink_metadata(path) {
        Err(_) => DirFacts::Missing,
        Ok(metadata) if !metadata.is_dir() => DirFacts::NotADirectory,
        Ok(metadata) => DirFacts::Present {
            owner: metadata.uid(),
            mode: metadata.mode(),
            uid: rustix::process::getuid().as_raw(),
        },
    }
}

/// The inbox's socket directory, and whether the inbox may be asked through it (it is this
/// user's own, or not made yet).
fn socket_dir_check() -> (Check, bool) {
    let path = askpane::transport::endpoint::private_dir_path();
    let facts = dir_facts(&path);
    let check = doctor::private_dir("socket directory", &path.display().to_string(), &facts);
    let usable = facts == DirFacts::Missing || check.state == doctor::State::Ok;
    (check, usable)
}

/// The store's directory (drafts and history): `ASKPANE_STATE_DIR`, else the platform's.
fn state_dir_check() -> Check {
    let given = std::env::var_os("ASKPANE_STATE_DIR").map(std::path::PathBuf::from);
    match askpane::store::state_dir(given.as_deref()) {
        Ok(path) => {
            doctor::private_dir("state directory", &path.display().to_string(), &dir_facts(&path))
        }
        Err(error) => {
            doctor::private_dir("state directory", &error.to_string(), &DirFacts::Missing)
        }
    }
}

/// The inbox, asked through its socket (only when its directory is as it should be: asking
/// would otherwise make or narrow it).
fn inbox_check(usable: bool) -> Check {
    let socket = askpane::transport::endpoint::private_dir_path().join("inbox.sock");
    if !usable {
        return doctor::inbox(if socket.exists() {
            &InboxFacts::NotChecked
        } else {
            &InboxFacts::NotRunning
        });
    }
    if !socket.exists() {
        return doctor::inbox(&InboxFacts::NotRunning);
    }
    let facts = match Place::find().map_err(|error| error.to_string()) {
        Err(why) => InboxFacts::NoAnswer { why, lock: lock_of(&socket) },
        Ok(place) => match InboxClient::connect(&place) {
            Err(ConnectError::NotRunning(_)) => InboxFacts::NotRunning,
            Err(ConnectError::Foreign { socket, uid }) => {
                InboxFacts::Foreign { socket: socket.display().to_string(), uid }
            }
            Err(error) => InboxFacts::NoAnswer { why: error.to_string(), lock: lock_of(&socket) },
            Ok(mut client) => match super::status::open_asks(&mut client) {
                Ok(open) => InboxFacts::Running {
                    pid: client.inbox_pid,
                    started_at: client.started_at,
                    waiting: open.len(),
                    now: SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |now| now.as_secs()),
                },
                Err(error) => {
                    InboxFacts::NoAnswer { why: error.to_string(), lock: lock_of(&socket) }
                }
            },
        },
    };
    doctor::inbox(&facts)
}

fn lock_of(socket: &Path) -> String {
    socket.with_file_name("inbox.lock").display().to_string()
}

/// A font for each script the window may need, found as the window finds one.
fn font_checks() -> Vec<Check> {
    let samples: Vec<char> = Script::ALL.iter().map(|script| script.sample()).collect();
    let found = crate::window::system_fonts_for(&samples);
    // No font at all (fontconfig matches none) is a finding of its own. Counted only when no
    // script has a font: the count enumerates the system's fonts a second time.
    let none_at_all =
        found.iter().all(Option::is_none) && crate::window::system_font_families() == 0;
    let failed = none_at_all.then(doctor::no_system_fonts);
    let fonts =
        Script::ALL.iter().zip(found).map(|(script, font)| doctor::font(*script, font.as_deref()));
    failed.into_iter().chain(fonts).collect()
}
