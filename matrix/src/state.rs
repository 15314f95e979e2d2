//! The bridge's files, under askpane's state directory in `matrix/` (0700): the session
//! (`session.json`: homeserver, user, device, access token), the SDK's store and its passphrase,
//! the room's configuration, and the map of asks already posted. Every file is 0600, written
//! whole (a temporary file renamed over the old) so a crash never leaves half a file.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use matrix_sdk::authentication::matrix::MatrixSession;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The bridge's directory and the names in it.
#[derive(Clone, Debug)]
pub struct Dir {
    pub path: PathBuf,
}

/// A logged-in session: where, and the SDK's own session (user, device, access token).
#[derive(Clone, Serialize, Deserialize)]
pub struct Session {
    pub homeserver: String,
    pub session: MatrixSession,
}

/// Who may answer in the room.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answerers {
    /// These users (the ones invited, or listed with `room use --answerer`).
    Users(Vec<String>),
    /// Members whose power level in the room is at least this.
    PowerLevel(i64),
}

/// The room the bridge posts in (`askpane-matrix room`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RoomConfig {
    pub room_id: String,
    pub answerers: Answerers,
    /// The room was taken unencrypted on purpose (`--allow-unencrypted`).
    #[serde(default)]
    pub allow_unencrypted: bool,
    /// The inbox starts `askpane-matrix run` as it starts (`enable`, the default) or not
    /// (`disable`). Its name is askpane's contract ([`askpane::protocol::matrix_setup::START_WITH_INBOX`]).
    #[serde(default = "yes")]
    pub start_with_inbox: bool,
}

fn yes() -> bool {
    true
}

/// One ask posted to the room: its message and its polls (question index → poll event id).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Posted {
    pub event_id: String,
    pub title: String,
    #[serde(default)]
    pub polls: Vec<Option<String>>,
    /// The message was edited to say how the ask ended: nothing more is done with it.
    #[serde(default)]
    pub finished: bool,
    /// How it ended, as its edited message says (`Answered outside this room …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub how: Option<String>,
}

/// Ask key (`<inbox start>:<connection>:<id>`) → what was posted for it.
pub type PostedMap = BTreeMap<String, Posted>;

impl Dir {
    /// `matrix/` in askpane's state directory (`--state-dir`/`ASKPANE_STATE_DIR`, else the
    /// platform's), made 0700 when missing and narrowed to 0700 when found wider.
    pub fn find(state_dir: Option<&Path>) -> Result<Dir> {
        let base = askpane::store::state_dir(state_dir).context("askpane's state directory")?;
        let path = askpane::protocol::matrix_setup::dir(&base);
        fs::create_dir_all(&path).with_context(|| format!("cannot make {}", path.display()))?;
        private_dir(&path)?;
        Ok(Dir { path })
    }

    pub fn session_file(&self) -> PathBuf {
        self.path.join(askpane::protocol::matrix_setup::SESSION_FILE)
    }
    pub fn passphrase_file(&self) -> PathBuf {
        self.path.join("store-passphrase")
    }
    pub fn store_dir(&self) -> PathBuf {
        self.path.join("store")
    }
    pub fn config_file(&self) -> PathBuf {
        self.path.join(askpane::protocol::matrix_setup::ROOM_FILE)
    }
    pub fn run_lock_file(&self) -> PathBuf {
        self.path.join(askpane::protocol::matrix_setup::RUN_LOCK_FILE)
    }
    pub fn posted_file(&self) -> PathBuf {
        self.path.join("posted.json")
    }

    pub fn session(&self) -> Result<Session> {
        read_json(&self.session_file())?.context("not logged in: run `askpane-matrix login` first")
    }

    pub fn room(&self) -> Result<RoomConfig> {
        read_json(&self.config_file())?
            .context("no room configured: run `askpane-matrix room create` or `room use` first")
    }

    pub fn posted(&self) -> Result<PostedMap> {
        Ok(read_json(&self.posted_file())?.unwrap_or_default())
    }

    /// The store's passphrase, made (256 random bits, hex) when there is none.
    pub fn passphrase(&self) -> Result<String> {
        let file = self.passphrase_file();
        match fs::read_to_string(&file) {
            Ok(text) => Ok(text.trim().to_owned()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = [0u8; 32];
                getrandom::fill(&mut bytes)
                    .map_err(|error| anyhow::anyhow!("no randomness: {error}"))?;
                let text: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
                write_private(&file, text.as_bytes())?;
                Ok(text)
            }
            Err(error) => Err(error).with_context(|| format!("cannot read {}", file.display())),
        }
    }

    /// The SDK's store directory, made 0700, and its files narrowed to 0600 (the SDK creates
    /// them with the process's umask).
    pub fn secure_store(&self) -> Result<()> {
        let store = self.store_dir();
        fs::create_dir_all(&store).with_context(|| format!("cannot make {}", store.display()))?;
        private_dir(&store)?;
        for entry in fs::read_dir(&store)?.flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_file()) {
                private_file_if_present(&entry.path())?;
            }
        }
        Ok(())
    }

    /// Removes everything logging in made: the session, the store and its passphrase, and
    /// the map of posted asks (they belong to the session's device).
    pub fn forget(&self) -> Result<()> {
        for file in [self.session_file(), self.passphrase_file(), self.posted_file()] {
            match fs::remove_file(&file) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("cannot remove {}", file.display()));
                }
            }
        }
        match fs::remove_dir_all(self.store_dir()) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(error).context("cannot remove the store"),
        }
    }
}

fn read_json<T: DeserializeOwned>(file: &Path) -> Result<Option<T>> {
    match fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .with_context(|| format!("{} is broken", file.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", file.display())),
    }
}

/// Writes `value` as JSON to `file`, 0600.
pub fn write_json<T: Serialize>(file: &Path, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value)?;
    write_private(file, &bytes)
}

/// Writes `bytes` to a 0600 temporary file beside `file`, then renames it over `file`.
pub fn write_private(file: &Path, bytes: &[u8]) -> Result<()> {
    let temporary = file.with_extension("new");
    let _ = fs::remove_file(&temporary);
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut out = options
        .open(&temporary)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    out.write_all(bytes)?;
    out.sync_all()?;
    drop(out);
    fs::rename(&temporary, file).with_context(|| format!("cannot write {}", file.display()))
}

fn private_dir(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Narrows a store file that SQLite may remove meanwhile (a `-wal` or `-shm` file goes when
/// its database is closed, between `read_dir` and here): one that is gone needs nothing.
fn private_file_if_present(path: &Path) -> Result<()> {
    match private_file(path) {
        Err(error)
            if error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|error| error.kind() == std::io::ErrorKind::NotFound) =>
        {
            Ok(())
        }
        other => other,
    }
}

fn private_file(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make {} private", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inbox_reads_the_room_file_as_the_bridge_writes_it() {
        use askpane::protocol::matrix_setup::{START_WITH_INBOX, Setup};
        use askpane::transport::matrix_child::setup;
        let state =
            std::env::temp_dir().join(format!("askpane-matrix-contract-{}", std::process::id()));
        let _ = fs::remove_dir_all(&state);
        let dir = Dir { path: askpane::protocol::matrix_setup::dir(&state) };
        fs::create_dir_all(&dir.path).unwrap();
        fs::write(dir.session_file(), "{}").unwrap();
        let mut room = RoomConfig {
            room_id: "!a:x".into(),
            answerers: Answerers::PowerLevel(50),
            allow_unencrypted: false,
            start_with_inbox: true,
        };
        write_json(&dir.config_file(), &room).unwrap();
        assert_eq!(setup(&state), Setup::Configured);
        room.start_with_inbox = false;
        write_json(&dir.config_file(), &room).unwrap();
        assert_eq!(setup(&state), Setup::Disabled);
        let written: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.config_file()).unwrap()).unwrap();
        assert_eq!(written[START_WITH_INBOX], false);
        // A room file from before `enable`/`disable`: started with the inbox.
        fs::write(dir.config_file(), r#"{"room_id": "!a:x", "answerers": {"power_level": 50}}"#)
            .unwrap();
        assert!(dir.room().unwrap().start_with_inbox);
        let _ = fs::remove_dir_all(&state);
    }

    #[test]
    fn a_store_file_removed_before_it_is_narrowed_is_no_error() {
        let gone = std::env::temp_dir()
            .join(format!("askpane-matrix-gone-{}.sqlite3-wal", std::process::id()));
        assert!(private_file_if_present(&gone).is_ok());
        #[cfg(unix)]
        assert!(private_file(&gone).is_err());
    }
}
