//! The Matrix bridge's files in askpane's state directory (issue 31): the contract between
//! `askpane-matrix`, which writes them, and the inbox, which starts the bridge when they say it
//! is configured ([`crate::transport::matrix_child`] reads them). The inbox looks only at
//! whether the session exists and at two fields of the room's file, so the main binary carries
//! no Matrix code. Pure: the reading is the caller's.

use std::path::{Path, PathBuf};

/// The bridge's directory inside askpane's state directory.
pub const DIR: &str = "matrix";
/// The logged-in session (written by `askpane-matrix login`).
pub const SESSION_FILE: &str = "session.json";
/// The room and who may answer in it (written by `askpane-matrix room`, `enable`, `disable`).
pub const ROOM_FILE: &str = "room.json";
/// Held (an exclusive file lock) by the one `askpane-matrix run` of this state directory.
pub const RUN_LOCK_FILE: &str = "run.lock";
/// The field of [`ROOM_FILE`] that says whether the inbox starts the bridge (missing: it does).
pub const START_WITH_INBOX: &str = "start_with_inbox";
/// `askpane-matrix run`'s exit status when another run already holds [`RUN_LOCK_FILE`]: the inbox
/// does not start it again.
pub const EXIT_ANOTHER_RUNS: u8 = 3;

/// `matrix/` in the state directory `state_dir`.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join(DIR)
}

/// Whether the bridge is set up, as the inbox decides it from the files alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// No session or no room: nothing to start.
    NotConfigured,
    /// Logged in with a room, but `askpane-matrix disable` said not to start with the inbox.
    Disabled,
    /// Logged in with a room: the inbox starts `askpane-matrix run`.
    Configured,
    /// The room's file cannot be read as the bridge writes it: why.
    Broken(String),
}

/// The setup the files say: whether [`SESSION_FILE`] exists, and [`ROOM_FILE`]'s bytes (`None`:
/// no such file).
pub fn setup_of(session: bool, room: Option<&[u8]>) -> Setup {
    let Some(room) = room.filter(|_| session) else { return Setup::NotConfigured };
    let room: serde_json::Value = match serde_json::from_slice(room) {
        Ok(room) => room,
        Err(error) => return Setup::Broken(format!("not JSON ({error})")),
    };
    if !room.get("room_id").is_some_and(serde_json::Value::is_string) {
        return Setup::Broken("no room_id".to_owned());
    }
    match room.get(START_WITH_INBOX) {
        None | Some(serde_json::Value::Bool(true)) => Setup::Configured,
        Some(serde_json::Value::Bool(false)) => Setup::Disabled,
        Some(other) => Setup::Broken(format!("{START_WITH_INBOX} is {other}, not true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_room_file_says_whether_the_inbox_starts_the_bridge() {
        let room = |bytes: &'static [u8]| setup_of(true, Some(bytes));
        assert_eq!(room(br#"{"room_id": "!a:x"}"#), Setup::Configured);
        assert_eq!(room(br#"{"room_id": "!a:x", "start_with_inbox": true}"#), Setup::Configured);
        assert_eq!(room(br#"{"room_id": "!a:x", "start_with_inbox": false}"#), Setup::Disabled);
        assert!(matches!(room(b"{"), Setup::Broken(_)));
        assert!(matches!(room(br#"{"answerers": 1}"#), Setup::Broken(_)));
        assert!(matches!(
            room(br#"{"room_id": "!a:x", "start_with_inbox": "no"}"#),
            Setup::Broken(_)
        ));
    }

    #[test]
    fn no_session_or_no_room_is_not_configured() {
        assert_eq!(setup_of(false, Some(br#"{"room_id": "!a:x"}"#)), Setup::NotConfigured);
        assert_eq!(setup_of(true, None), Setup::NotConfigured);
        assert_eq!(setup_of(false, None), Setup::NotConfigured);
    }
}
