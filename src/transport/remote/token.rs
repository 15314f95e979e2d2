//! `askpane remote HOST --http`'s token, one per host, kept (issue 27): the settings pasted on
//! the host name it, so a link started again must use the same one. It lives in the state
//! folder (`remote/HOST.http-token`, 0600, in a 0700 folder), written whole through a file of
//! its own renamed over it, so a reader never sees half a token. A file that is not this user's
//! private regular file holding a token is not used: a new token replaces it, and says why.

use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use super::file_stem;

/// A token's length in hex digits (256 bits).
const TOKEN_DIGITS: usize = 64;

/// How the token of this start came to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenMade {
    /// The host's token from before: the settings pasted there hold.
    Kept,
    /// The host's first.
    New,
    /// `--new-token`: the old one is refused from now on.
    Rotated,
    /// The file held no usable token (why, in words): a new one replaced it.
    Replaced(String),
}

/// A host's token and where it is kept.
#[derive(Clone, Debug)]
pub struct HostToken {
    pub token: String,
    pub path: PathBuf,
    pub made: TokenMade,
}

/// The token for `host`, kept in `dir` (made 0700 if missing): the one kept there, or a new one
/// when there is none, when it cannot be used, or when `rotate` asks for one.
pub fn host_token(dir: &Path, host: &str, rotate: bool) -> io::Result<HostToken> {
    let mut make = fs::DirBuilder::new();
    make.recursive(true).mode(0o700);
    make.create(dir)?;
    let path = dir.join(format!("{}.http-token", file_stem(host)));
    let made = match rotate {
        true => TokenMade::Rotated,
        false => match read_kept(&path) {
            Kept::Token(token) => return Ok(HostToken { token, path, made: TokenMade::Kept }),
            Kept::Missing => TokenMade::New,
            Kept::Unusable(why) => TokenMade::Replaced(why),
        },
    };
    let token = new_token()?;
    write_private(&path, &token)?;
    Ok(HostToken { token, path, made })
}

/// What the token file holds.
enum Kept {
    Token(String),
    Missing,
    Unusable(String),
}

fn read_kept(path: &Path) -> Kept {
    // Not followed: a link there could point anywhere.
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Kept::Missing,
        Err(error) => return Kept::Unusable(error.to_string()),
    };
    if !meta.file_type().is_file() {
        return Kept::Unusable("it is not a regular file".to_owned());
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Kept::Unusable(format!("it belongs to another user (uid {})", meta.uid()));
    }
    // Others could have read it: the token may be known beyond this user.
    if meta.mode() & 0o077 != 0 {
        return Kept::Unusable(format!("others could read it (mode {:o})", meta.mode() & 0o777));
    }
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => return Kept::Unusable(error.to_string()),
    };
    let token = text.trim();
    match token.len() == TOKEN_DIGITS && token.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        true => Kept::Token(token.to_owned()),
        false => Kept::Unusable("it holds no token".to_owned()),
    }
}

/// 256 random bits in hex.
pub(super) fn new_token() -> io::Result<String> {
    let mut bytes = [0_u8; TOKEN_DIGITS / 2];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Writes `token` to `path` whole: into a new 0600 file beside it (never one that exists), then
/// renamed over it.
fn write_private(path: &Path, token: &str) -> io::Result<()> {
    let partial = path.with_extension(format!("partial.{}", std::process::id()));
    let _ = fs::remove_file(&partial);
    let mut file = fs::File::options().write(true).create_new(true).mode(0o600).open(&partial)?;
    let written = file.write_all(format!("{token}\n").as_bytes()).and_then(|()| file.sync_all());
    if let Err(error) = written.and_then(|()| fs::rename(&partial, path)) {
        let _ = fs::remove_file(&partial);
        return Err(error);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("askpane-token-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_host_s_token_is_made_once_kept_private_and_made_anew_only_when_asked() {
        let dir = scratch("keep");
        let first = host_token(&dir, "devbox", false).expect("made");
        assert_eq!(first.made, TokenMade::New);
        assert_eq!(first.token.len(), TOKEN_DIGITS);
        let mode = |path: &Path| fs::metadata(path).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(&first.path), 0o600);
        assert_eq!(mode(&dir), 0o700);
        let again = host_token(&dir, "devbox", false).expect("read");
        assert_eq!((again.token.as_str(), again.made), (first.token.as_str(), TokenMade::Kept));
        // Another host has its own.
        let other = host_token(&dir, "me@other", false).expect("made");
        assert_ne!(other.token, first.token);
        let rotated = host_token(&dir, "devbox", true).expect("made");
        assert_eq!(rotated.made, TokenMade::Rotated);
        assert_ne!(rotated.token, first.token);
        assert_eq!(host_token(&dir, "devbox", false).expect("read").token, rotated.token);
        // Nothing is left beside it.
        let names: Vec<String> = fs::read_dir(&dir)
            .expect("the folder")
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_token_file_others_could_read_or_that_holds_no_token_is_replaced() {
        let dir = scratch("unusable");
        let kept = host_token(&dir, "devbox", false).expect("made");
        fs::set_permissions(&kept.path, fs::Permissions::from_mode(0o644)).expect("chmod");
        let replaced = host_token(&dir, "devbox", false).expect("made");
        assert!(matches!(&replaced.made, TokenMade::Replaced(why) if why.contains("644")));
        assert_ne!(replaced.token, kept.token);
        fs::write(&replaced.path, "short\n").expect("write");
        let replaced = host_token(&dir, "devbox", false).expect("made");
        assert!(matches!(&replaced.made, TokenMade::Replaced(why) if why.contains("no token")));
        fs::remove_file(&replaced.path).expect("remove");
        std::os::unix::fs::symlink("/etc/hostname", &replaced.path).expect("a symlink");
        let replaced = host_token(&dir, "devbox", false).expect("made");
        assert!(matches!(&replaced.made, TokenMade::Replaced(why) if why.contains("regular")));
        assert!(!fs::symlink_metadata(&replaced.path).expect("exists").file_type().is_symlink());
        let _ = fs::remove_dir_all(&dir);
    }
}
