//! The store's files are the user's alone (issue 24: a typed answer was read from another
//! user's account): the state directory is made 0700, the database and its `-wal` and `-shm`
//! 0600, and ones an older askpane left open to others are narrowed, said once in one line on
//! stderr. On Windows the state directory is under `%LOCALAPPDATA%`, whose ACL is the user's.

use std::io;
use std::path::{Path, PathBuf};

/// One file or directory whose mode was narrowed: where, and from what to what.
#[derive(Debug)]
pub(super) struct Narrowed {
    path: PathBuf,
    was: u32,
    now: u32,
}

/// Makes `dir` (0700, and its missing parents) if missing. `narrow_existing`: an existing one
/// open to others is narrowed to 0700 too (askpane's own directory; one the user named keeps
/// the mode the user gave it).
#[cfg(unix)]
pub(super) fn make_dir(dir: &Path, narrow_existing: bool) -> io::Result<Vec<Narrowed>> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let mut narrowed = Vec::new();
    if narrow_existing {
        narrowed.extend(narrow(dir, 0o700)?);
    }
    Ok(narrowed)
}

#[cfg(not(unix))]
pub(super) fn make_dir(dir: &Path, _narrow_existing: bool) -> io::Result<Vec<Narrowed>> {
    std::fs::create_dir_all(dir).map(|()| Vec::new())
}

/// Makes the database file 0600 before SQLite opens it (SQLite would make it 0644, and its
/// `-wal` and `-shm` as the database), and narrows the three files where they are open to
/// others. Best effort: what cannot be made or changed here, SQLite's open reports (or the
/// line [`say`] writes names it).
#[cfg(unix)]
pub(super) fn make_files(database: &Path) -> (Vec<Narrowed>, Vec<String>) {
    use std::os::unix::fs::OpenOptionsExt;
    // A new file of zero bytes is an empty database to SQLite.
    let _ = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(database);
    let mut narrowed = Vec::new();
    let mut failed = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        let path = PathBuf::from(name);
        match narrow(&path, 0o600) {
            Ok(done) => narrowed.extend(done),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => failed.push(format!("{} ({error})", path.display())),
        }
    }
    (narrowed, failed)
}

#[cfg(not(unix))]
pub(super) fn make_files(_database: &Path) -> (Vec<Narrowed>, Vec<String>) {
    (Vec::new(), Vec::new())
}

/// Sets `path`'s mode to `now` when it lets group or others in.
#[cfg(unix)]
fn narrow(path: &Path, now: u32) -> io::Result<Option<Narrowed>> {
    use std::os::unix::fs::PermissionsExt;
    let was = std::fs::metadata(path)?.permissions().mode() & 0o7777;
    if was & 0o077 == 0 {
        return Ok(None);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(now))?;
    Ok(Some(Narrowed { path: path.to_owned(), was, now }))
}

/// The one line that says what was narrowed (nothing when nothing was).
pub(super) fn say(dir: &Path, narrowed: &[Narrowed], failed: &[String]) {
    if narrowed.is_empty() && failed.is_empty() {
        return;
    }
    let changes: Vec<String> = narrowed
        .iter()
        .map(|change| {
            let name = match change.path.strip_prefix(dir) {
                Ok(name) if name.as_os_str().is_empty() => "the directory".to_owned(),
                Ok(name) => name.display().to_string(),
                Err(_) => change.path.display().to_string(),
            };
            format!("{name} from {:04o} to {:04o}", change.was, change.now)
        })
        .collect();
    let mut line = format!(
        "the store in {} was readable by other users; narrowed {}",
        dir.display(),
        changes.join(", ")
    );
    if !failed.is_empty() {
        line.push_str(&format!("; could not narrow {}", failed.join(", ")));
    }
    log::warn!("{line}");
}
