//! askpane-matrix: the bridge from askpane's inbox to an end-to-end encrypted Matrix room
//! (issue 31). `login`, `room create`/`room use`, `run`, `logout`; see docs/src/matrix.md.

// matrix-sdk's futures are deeply nested: the default limit (128) overflows proving them Send.
#![recursion_limit = "256"]

mod account;
mod bridge;
mod inbox;
mod room;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::state::Dir;

#[derive(Parser)]
#[command(
    name = "askpane-matrix",
    version,
    about = "Answers askpane's questions from an end-to-end encrypted Matrix room"
)]
struct Cli {
    /// askpane's state directory (the bridge keeps its files in `matrix/` inside it).
    #[arg(long, value_name = "DIR", env = "ASKPANE_STATE_DIR", global = true)]
    state_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Logs in as the account askpane posts as. The secret comes from a file or the
    /// environment (ASKPANE_MATRIX_PASSWORD, ASKPANE_MATRIX_TOKEN), never the command line.
    Login {
        /// The homeserver's URL (https://matrix.example.org).
        #[arg(long)]
        homeserver: String,
        /// The account's user id (@askpane:example.org).
        #[arg(long)]
        user: String,
        /// A file holding the password.
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
        /// A file holding an access token.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// The new device's name, as other members see it.
        #[arg(long, default_value = "askpane")]
        device_name: String,
    },
    /// Ends the session on the homeserver and removes the local session, store and keys.
    Logout,
    /// The room the bridge posts in.
    #[command(subcommand)]
    Room(RoomCommand),
    /// The bridge: posts every ask that waits for a person, and sends back the room's answers.
    /// The inbox starts it as it starts once a room is configured (see `disable`).
    Run {
        /// Started by the inbox with this pid: ends when that process is gone (not for people
        /// to type).
        #[arg(long, hide = true, value_name = "PID")]
        inbox_pid: Option<u32>,
    },
    /// Keeps the login and the room, but the inbox no longer starts the bridge as it starts
    /// (from the inbox's next start; `run` still works by hand).
    Disable,
    /// The inbox starts the bridge as it starts again (the default once a room is configured).
    Enable,
}

#[derive(Subcommand)]
enum RoomCommand {
    /// Creates an encrypted room and invites who answers.
    Create {
        /// Someone to invite (repeatable); by default the invited may answer.
        #[arg(long, value_name = "USER")]
        invite: Vec<String>,
        /// Who may answer: members with at least this power level instead of the invited.
        #[arg(long, value_name = "N")]
        power_level: Option<i64>,
        /// The room's name.
        #[arg(long, default_value = "askpane")]
        name: String,
    },
    /// Takes an existing room (joins it if invited); refused unless it is encrypted.
    Use {
        /// The room's id (!abc:example.org) or alias (#team:example.org).
        room: String,
        /// Someone who may answer (repeatable).
        #[arg(long, value_name = "USER")]
        answerer: Vec<String>,
        /// Who may answer: members with at least this power level.
        #[arg(long, value_name = "N")]
        power_level: Option<i64>,
        /// Uses the room though it is not end-to-end encrypted.
        #[arg(long)]
        allow_unencrypted: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            bridge::log(&format!("{error:#}"));
            match error.downcast_ref::<AnotherRuns>() {
                Some(_) => ExitCode::from(askpane::protocol::matrix_setup::EXIT_ANOTHER_RUNS),
                None => ExitCode::FAILURE,
            }
        }
    }
}

/// Another `askpane-matrix run` holds this state directory's run lock.
#[derive(Debug)]
struct AnotherRuns;

impl std::fmt::Display for AnotherRuns {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(out, "another `askpane-matrix run` already bridges this state directory")
    }
}

impl std::error::Error for AnotherRuns {}

/// The run lock (held until the process ends): one bridge per state directory, so a bridge run
/// by hand and one the inbox started never both post the same asks.
fn take_run_lock(dir: &Dir) -> Result<std::fs::File> {
    let file = dir.run_lock_file();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&file)
        .with_context(|| format!("cannot open {}", file.display()))?;
    match lock.try_lock() {
        Ok(()) => {
            // Its pid, for `askpane doctor` (which only reads it).
            use std::io::Write as _;
            lock.set_len(0)?;
            (&lock).write_all(std::process::id().to_string().as_bytes())?;
            Ok(lock)
        }
        Err(std::fs::TryLockError::WouldBlock) => Err(AnotherRuns.into()),
        Err(std::fs::TryLockError::Error(error)) => {
            Err(error).with_context(|| format!("cannot lock {}", file.display()))
        }
    }
}

/// `enable`/`disable`: whether the inbox starts the bridge, kept in the room's file.
fn start_with_inbox(dir: &Dir, start: bool) -> Result<()> {
    let mut room = dir.room()?;
    room.start_with_inbox = start;
    state::write_json(&dir.config_file(), &room)?;
    bridge::log(match start {
        true => "the inbox starts the bridge as it starts (from its next start)",
        false => "the inbox no longer starts the bridge (the login and the room are kept)",
    });
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    let dir = Dir::find(cli.state_dir.as_deref())?;
    let _run_lock = match cli.command {
        Command::Run { .. } => Some(take_run_lock(&dir)?),
        Command::Disable => return start_with_inbox(&dir, false),
        Command::Enable => return start_with_inbox(&dir, true),
        _ => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("matrix-runtime")
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Login { homeserver, user, password_file, token_file, device_name } => {
                let secret = account::Secret::find(password_file, token_file)?;
                account::login(&dir, &homeserver, &user, secret, &device_name).await?;
                bridge::log(&format!("logged in as {user}"));
                Ok(())
            }
            Command::Logout => {
                account::logout(&dir).await?;
                bridge::log("logged out; the local session and keys are removed");
                Ok(())
            }
            Command::Room(RoomCommand::Create { invite, power_level, name }) => {
                let room = room::create(&dir, invite, power_level, &name).await?;
                reply(&room);
                Ok(())
            }
            Command::Room(RoomCommand::Use { room, answerer, power_level, allow_unencrypted }) => {
                let room =
                    room::use_room(&dir, &room, answerer, power_level, allow_unencrypted).await?;
                reply(&room);
                Ok(())
            }
            Command::Run { inbox_pid } => bridge::run(dir, inbox_pid).await,
            Command::Disable | Command::Enable => Ok(()),
        }
    });
    // The runtime's threads are joined here (bounded: a request still in flight is dropped).
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    outcome
}

/// The command's one result on stdout (the room's id), for scripts.
fn reply(line: &str) {
    use std::io::Write;
    #[expect(clippy::disallowed_methods, reason = "stdout holds the command's result, the room id")]
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
}
