//! The file a tool call would change, read when the call enters askpane (issue 26), so that the
//! approval card can show an Edit or a Write against what is on disk (the view does no IO).
//!
//! Careful with what it opens: a path is the agent's, so only a regular file is read, of at most
//! [`MAX_SNAPSHOT_BYTES`], never through a link into /proc, /sys or /dev (`/proc/self/environ`
//! would put askpane's own environment on the card), never a FIFO or a device (opened
//! non-blocking, and refused by type before a byte is read). What cannot be read says why.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::protocol::stream::PermissionRequest;
use crate::protocol::tool_call::{FileSnapshot, ToolCall};

/// The largest file read for a card (1 MiB): more is not checked by eye on a card anyway.
pub const MAX_SNAPSHOT_BYTES: u64 = 1024 * 1024;

/// Trees of the kernel's own, never read: their "files" are processes' memory and secrets.
const KERNEL_TREES: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Gives `request` what its card needs from this machine: the agent's working directory (when
/// the request names none: `cwd`, where the agent runs) and the file its call would change, as
/// it is now. Does nothing to a request that already has them (the agent's host attached them
/// before the inbox got it). Called wherever an approval enters askpane.
pub fn attach(request: &mut PermissionRequest, cwd: Option<&Path>) {
    if request.cwd.is_none() {
        request.cwd = cwd.map(|cwd| cwd.to_string_lossy().into_owned());
    }
    if request.on_disk.is_some() {
        return;
    }
    let call = ToolCall::of(request);
    if let Some(path) = call.file_to_read() {
        request.on_disk = Some(read(path, request.cwd.as_deref().map(Path::new)));
    }
}

/// The file a `PermissionRequest` hook's call would change (`message`: the hook's input, its
/// `cwd` the agent's folder), read here: what `askpane hook` on an SSH host sends with the
/// request (issue 27), since the desk cannot read the host's file. `None` when the message is
/// no such call, or its call changes no file.
pub fn of_hook_input(message: &serde_json::Value) -> Option<FileSnapshot> {
    let mut request = crate::protocol::permission::parse_hook_permission(message)?.ok()?.request;
    attach(&mut request, None);
    request.on_disk
}

/// What the card of a request through a link (issue 27) shows of the file its call would
/// change: `sent`, what its client read on its host, if it is of the file the call names (its
/// path made absolute as [`read`] makes it) and no larger than [`read`] reads; else why not.
/// Never this machine's file of that path, which is another file. `None` when the call changes
/// no file, or the client sent nothing (an askpane from before).
pub fn sent_from_host(
    sent: Option<FileSnapshot>,
    request: &PermissionRequest,
) -> Option<FileSnapshot> {
    let call = ToolCall::of(request);
    let named = call.file_to_read()?;
    let path =
        full_path(named, request.cwd.as_deref().map(Path::new)).to_string_lossy().into_owned();
    let refused =
        |reason: &str| FileSnapshot::Unreadable { path: path.clone(), reason: reason.into() };
    Some(match sent? {
        sent if sent.path() != path => refused("the host sent another file than the call's"),
        FileSnapshot::Text { text, .. } if text.len() as u64 > MAX_SNAPSHOT_BYTES => {
            refused(&more_than_read(text.len() as u64))
        }
        sent => sent,
    })
}

/// `path` made absolute with `cwd` where it is relative (as it is, where no `cwd` is known).
fn full_path(path: &str, cwd: Option<&Path>) -> PathBuf {
    match (Path::new(path), cwd) {
        (_, _) if path.is_empty() => PathBuf::new(),
        (absolute, _) if absolute.is_absolute() => absolute.to_path_buf(),
        (relative, Some(cwd)) => cwd.join(relative),
        (relative, None) => relative.to_path_buf(),
    }
}

/// The file at `path` (relative to `cwd`), as it is now.
pub fn read(path: &str, cwd: Option<&Path>) -> FileSnapshot {
    let full = full_path(path, cwd);
    let shown = full.to_string_lossy().into_owned();
    let unreadable = |reason: String| FileSnapshot::Unreadable { path: shown.clone(), reason };
    if path.is_empty() {
        return unreadable("the path is empty".to_owned());
    }
    if !full.is_absolute() {
        return unreadable("the path is relative and the agent's folder is not known".to_owned());
    }
    match text(&full) {
        Ok(text) => FileSnapshot::Text { path: shown, text },
        Err(Refused::Missing) => FileSnapshot::Missing { path: shown },
        Err(Refused::Because(reason)) => unreadable(reason),
    }
}

/// Why a file was not read.
enum Refused {
    /// Nothing is there (a Write would make it).
    Missing,
    Because(String),
}

impl From<io::Error> for Refused {
    fn from(error: io::Error) -> Self {
        Refused::Because(error.to_string())
    }
}

fn text(path: &Path) -> Result<String, Refused> {
    // Where the path really leads, every link followed: that, not the name, is judged.
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return match path.symlink_metadata() {
                // A link to nothing: writing through it would create its target elsewhere.
                Ok(_) => Err(Refused::Because("it is a link to a file that does not exist".into())),
                Err(_) => Err(Refused::Missing),
            };
        }
        Err(error) => return Err(error.into()),
    };
    if let Some(tree) = KERNEL_TREES.iter().find(|tree| real.starts_with(tree)) {
        let real = real.display();
        return Err(Refused::Because(format!("it is {real}, under {tree}, not a file on disk")));
    }
    let file = open(&real)?;
    let metadata = file.metadata()?;
    if metadata.is_dir() {
        return Err(Refused::Because("it is a folder".to_owned()));
    }
    if !metadata.is_file() {
        return Err(Refused::Because("it is not a regular file".to_owned()));
    }
    kernel_file_system(&file)?;
    if metadata.len() > MAX_SNAPSHOT_BYTES {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SNAPSHOT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SNAPSHOT_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| Refused::Because("it is not UTF-8 text".to_owned()))
}

fn too_large(bytes: u64) -> Refused {
    Refused::Because(more_than_read(bytes))
}

fn more_than_read(bytes: u64) -> String {
    format!("it is {bytes} bytes, more than the {MAX_SNAPSHOT_BYTES} askpane reads")
}

/// Opens `path` for reading without following a final link (the path is already resolved: a
/// link there now was swapped in since) and without blocking (a FIFO is refused, not waited on).
#[cfg(unix)]
fn open(path: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let flags = flags | OFlags::NOCTTY;
    Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Refuses a file of procfs or sysfs however it was reached (they may be mounted elsewhere than
/// /proc and /sys): their regular files are the kernel's, sized 0 or 4096 whatever they hold.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn kernel_file_system(file: &File) -> Result<(), Refused> {
    const SYSFS_MAGIC: u64 = 0x6265_6572;
    let kind = rustix::fs::fstatfs(file).map_err(io::Error::from)?.f_type as u64;
    match kind == rustix::fs::PROC_SUPER_MAGIC as u64 || kind == SYSFS_MAGIC {
        true => {
            Err(Refused::Because("it is the kernel's (procfs or sysfs), not a file on disk".into()))
        }
        false => Ok(()),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn kernel_file_system(_: &File) -> Result<(), Refused> {
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("askpane-snapshot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn reason(snapshot: FileSnapshot) -> String {
        match snapshot {
            FileSnapshot::Unreadable { reason, .. } => reason,
            other => panic!("read, but should not be: {other:?}"),
        }
    }

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = scratch("regular");
        std::fs::write(dir.join("a.txt"), "one\ntwo\n").unwrap();
        let path = dir.join("a.txt").to_string_lossy().into_owned();
        assert_eq!(read(&path, None), FileSnapshot::Text { path, text: "one\ntwo\n".into() });
    }

    #[test]
    fn a_relative_path_is_read_from_the_agents_folder() {
        let dir = scratch("relative");
        std::fs::write(dir.join("b.txt"), "b").unwrap();
        let snapshot = read("b.txt", Some(&dir));
        assert_eq!(snapshot.path(), dir.join("b.txt").to_string_lossy());
        assert!(matches!(snapshot, FileSnapshot::Text { .. }), "{snapshot:?}");
        assert!(reason(read("b.txt", None)).contains("relative"));
    }

    #[test]
    fn a_missing_file_is_missing() {
        let dir = scratch("missing");
        let path = dir.join("new.rs").to_string_lossy().into_owned();
        assert_eq!(read(&path, None), FileSnapshot::Missing { path });
    }

    #[test]
    fn a_folder_is_not_read() {
        let dir = scratch("folder");
        assert_eq!(reason(read(&dir.to_string_lossy(), None)), "it is a folder");
    }

    #[test]
    fn devices_are_not_read() {
        for device in ["/dev/zero", "/dev/null"] {
            let why = reason(read(device, None));
            assert!(why.contains("under /dev") || why.contains("under /proc"), "{device}: {why}");
        }
    }

    // rustix has no `mkfifoat` on Apple's systems; the refusal itself is the same code there.
    #[cfg(not(target_vendor = "apple"))]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = scratch("fifo");
        let fifo = dir.join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        assert_eq!(reason(read(&fifo.to_string_lossy(), None)), "it is not a regular file");
    }

    #[test]
    fn a_file_over_the_cap_is_not_read() {
        let dir = scratch("large");
        let path = dir.join("big.log");
        std::fs::write(&path, vec![b'x'; MAX_SNAPSHOT_BYTES as usize + 1]).unwrap();
        let why = reason(read(&path.to_string_lossy(), None));
        assert!(why.contains("1048577 bytes, more than the 1048576"), "{why}");
    }

    #[test]
    fn a_link_to_proc_self_environ_is_not_followed() {
        let dir = scratch("environ");
        let link = dir.join("notes.txt");
        std::os::unix::fs::symlink("/proc/self/environ", &link).unwrap();
        let why = reason(read(&link.to_string_lossy(), None));
        assert!(why.contains("under /proc"), "{why}");
        // And the kernel's own file systems are refused by kind, wherever they are reached.
        let file = File::open("/proc/self/status").unwrap();
        assert!(kernel_file_system(&file).is_err());
    }

    #[test]
    fn a_dangling_link_is_not_a_missing_file() {
        let dir = scratch("dangling");
        let link = dir.join("to-nowhere");
        std::os::unix::fs::symlink(dir.join("nothing"), &link).unwrap();
        assert!(reason(read(&link.to_string_lossy(), None)).contains("link"));
    }

    #[test]
    fn a_file_that_is_not_text_says_so() {
        let dir = scratch("binary");
        std::fs::write(dir.join("x.bin"), [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(
            reason(read(&dir.join("x.bin").to_string_lossy(), None)),
            "it is not UTF-8 text"
        );
    }

    /// A file its mode forbids reading says why (as root the mode does not stop a read: the
    /// test then only checks that askpane reads it as root can).
    #[test]
    fn an_unreadable_file_says_why() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = scratch("unreadable");
        let path = dir.join("secret");
        std::fs::write(&path, "s").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        let snapshot = read(&path.to_string_lossy(), None);
        match rustix::process::geteuid().is_root() {
            true => assert!(matches!(snapshot, FileSnapshot::Text { .. }), "{snapshot:?}"),
            false => assert!(reason(snapshot).contains("denied"), "permission denied"),
        }
    }

    #[test]
    fn a_file_sent_from_a_host_is_shown_only_if_it_is_the_call_s_file_and_within_the_cap() {
        let edit = PermissionRequest {
            tool_name: "Edit".into(),
            input: serde_json::json!({"file_path": "src/f.rs", "old_string": "a", "new_string": "b"}),
            cwd: Some("/srv/app".into()),
            ..PermissionRequest::default()
        };
        let path = "/srv/app/src/f.rs".to_owned();
        let text = FileSnapshot::Text { path: path.clone(), text: "a\n".into() };
        assert_eq!(sent_from_host(Some(text.clone()), &edit), Some(text));
        let missing = FileSnapshot::Missing { path: path.clone() };
        assert_eq!(sent_from_host(Some(missing.clone()), &edit), Some(missing));
        // An askpane on the host from before sends nothing: nothing is shown (nor read here).
        assert_eq!(sent_from_host(None, &edit), None);
        // Another file's content, or more than askpane reads, is not shown.
        let other = FileSnapshot::Text { path: "/etc/passwd".into(), text: "root".into() };
        assert!(reason(sent_from_host(Some(other), &edit).unwrap()).contains("another file"));
        let huge = "x".repeat(MAX_SNAPSHOT_BYTES as usize + 1);
        let huge = FileSnapshot::Text { path: path.clone(), text: huge };
        let why = reason(sent_from_host(Some(huge), &edit).unwrap());
        assert!(why.contains("more than the 1048576"), "{why}");
        // A call that changes no file shows none, whatever was sent.
        let bash = PermissionRequest {
            tool_name: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            ..PermissionRequest::default()
        };
        assert_eq!(sent_from_host(Some(FileSnapshot::Missing { path }), &bash), None);
    }

    #[test]
    fn a_hook_input_s_file_is_read_from_its_cwd() {
        let dir = scratch("hook-input");
        std::fs::write(dir.join("g.txt"), "hello\n").unwrap();
        let input = serde_json::json!({
            "session_id": "s", "cwd": dir, "hook_event_name": "PermissionRequest",
            "tool_name": "Edit",
            "tool_input": {"file_path": "g.txt", "old_string": "hello", "new_string": "hi"}
        });
        let path = dir.join("g.txt").to_string_lossy().into_owned();
        assert_eq!(
            of_hook_input(&input),
            Some(FileSnapshot::Text { path, text: "hello\n".into() })
        );
        let question =
            serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion"});
        assert_eq!(of_hook_input(&question), None);
    }

    #[test]
    fn attach_reads_the_file_of_an_edit_once_and_nothing_for_a_command() {
        let dir = scratch("attach");
        std::fs::write(dir.join("f.rs"), "fn main() {}\n").unwrap();
        let mut edit = PermissionRequest {
            tool_name: "Edit".into(),
            input: serde_json::json!({"file_path": "f.rs", "old_string": "main", "new_string": "go"}),
            ..PermissionRequest::default()
        };
        attach(&mut edit, Some(&dir));
        assert_eq!(edit.cwd.as_deref(), Some(dir.to_string_lossy().as_ref()));
        assert!(matches!(edit.on_disk, Some(FileSnapshot::Text { .. })), "{:?}", edit.on_disk);
        // Already attached (by the agent's host): the inbox leaves it as it came.
        std::fs::write(dir.join("f.rs"), "changed since").unwrap();
        let before = edit.on_disk.clone();
        attach(&mut edit, None);
        assert_eq!(edit.on_disk, before);
        let mut bash = PermissionRequest {
            tool_name: "Bash".into(),
            input: serde_json::json!({"command": "ls"}),
            ..PermissionRequest::default()
        };
        attach(&mut bash, Some(&dir));
        assert_eq!(bash.on_disk, None);
    }
}
