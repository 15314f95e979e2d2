//! Nobody else gets in (issue 24): what another user of this machine may have planted in the
//! inbox's socket directory is not trusted (a socket that poses as the inbox, a lock that links
//! to a file of the user's), and the history the store keeps is the user's alone.
//!
//! Another user is `nobody` (uid 65534), played through `setpriv` by a root test run (said and
//! skipped otherwise); the socket it serves is Python's.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;

use crate::inbox::{World, hook_input};
use crate::support::{Process, WAIT, read_lossy};

/// `nobody`, the other user these tests play.
const NOBODY: u32 = 65534;

/// True when this run can act as another user (root, and `setpriv` to drop to `nobody`).
fn can_be_nobody() -> bool {
    let root = Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout == b"0\n");
    let tools = Path::new("/usr/bin/setpriv").exists() && Path::new("/usr/bin/python3").exists();
    if !(root && tools) {
        eprintln!("skipped: needs root, setpriv and python3 to act as another user");
    }
    root && tools
}

/// The mode bits of `path` (not following a link).
fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).map(|metadata| metadata.mode() & 0o7777).unwrap_or(0)
}

/// What another user's listener at the inbox's place does: greets as the inbox would, and
/// answers whatever it is sent with a forged outcome. It prints `listening`, then `received`
/// and the bytes it got (`b''` when the client hung up without sending).
const IMPOSTOR: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
print("listening", flush=True)
c, _ = s.accept()
c.settimeout(10)
got = b''
try:
    c.sendall(b'{"type":"hello","version":1,"pid":1}\n')
    got = c.recv(1 << 16)
except OSError:
    pass
if got:
    c.sendall(b'{"type":"accepted","id":"1","shown":true}\n'
              b'{"type":"outcome","id":"1","outcome":"answered",'
              b'"reply":{"forged":true},"exit_code":0}\n')
print("received " + repr(got), flush=True)
"#;

/// Another user's process listening at `socket` as the inbox (see [`IMPOSTOR`]), and its
/// stdout, line by line.
struct Impostor {
    _process: Process,
    lines: mpsc::Receiver<String>,
}

impl Impostor {
    /// Starts it as `nobody` and waits until it listens. The directory must let `nobody` in.
    fn listen(socket: &Path) -> Impostor {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3"]);
        command.arg("-c").arg(IMPOSTOR).arg(socket).env("PATH", "/usr/bin:/bin");
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut process = Process::new(command.spawn().expect("run python as nobody"));
        let stdout = BufReader::new(process.child.stdout.take().expect("piped stdout"));
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let impostor = Impostor { _process: process, lines };
        assert_eq!(impostor.line().as_deref(), Some("listening"), "the impostor did not start");
        let owner = fs::symlink_metadata(socket).map(|metadata| metadata.uid());
        assert_eq!(owner.ok(), Some(NOBODY), "the planted socket is nobody's");
        impostor
    }

    /// Its next line, within `WAIT`.
    fn line(&self) -> Option<String> {
        self.lines.recv_timeout(WAIT).ok()
    }
}

#[test]
fn a_socket_another_user_serves_at_the_inbox_place_is_never_sent_the_question() {
    if !can_be_nobody() {
        return;
    }
    let world = World::new("security-impostor");
    let dir = world.root.join("run/askpane");
    fs::create_dir_all(&dir).expect("make the socket directory");
    // The directory was open for a moment (mode 0777), long enough for another user to plant a
    // socket; it is the user's own and private again before the client runs, so only the
    // client's own check of who serves the socket can refuse it.
    fs::set_permissions(world.root.join("run"), fs::Permissions::from_mode(0o711)).expect("x");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).expect("open the directory");
    let impostor = Impostor::listen(&world.socket());
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("narrow it again");

    let client = world.client(&["hook", "--decline", "not now"], &hook_input("toolu_i", "Which?"));
    let (code, stdout, stderr) = client.finish();
    assert!(!stdout.contains("forged"), "the impostor's answer was taken: {stdout}\n{stderr}");
    assert_eq!(impostor.line().as_deref(), Some("received b''"), "the question was sent to it");
    // Refused in words, and answered as when no inbox can be used: here, by the flags.
    let refusal = stderr.lines().find(|line| line.contains("another user (uid 65534)"));
    let socket = world.socket().display().to_string();
    assert!(refusal.is_some_and(|line| line.contains(&socket)), "no clear refusal: {stderr}");
    assert!(stderr.contains("answering here"), "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("deny") && stdout.contains("not now"), "{stdout}");
}

#[test]
fn a_socket_directory_left_open_is_narrowed_and_emptied_of_what_another_user_planted() {
    if !can_be_nobody() {
        return;
    }
    let mut world = World::new("security-open-dir");
    let dir = world.root.join("run/askpane");
    fs::create_dir_all(&dir).expect("make the socket directory");
    fs::set_permissions(world.root.join("run"), fs::Permissions::from_mode(0o711)).expect("x");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).expect("leave it open");
    // Planted while it was open: a lock that links to a file of the user's, and a socket.
    let victim = world.root.join("notes.txt");
    fs::write(&victim, "the user's own notes\n").expect("the victim file");
    let lock = dir.join("inbox.lock");
    std::os::unix::fs::symlink(&victim, &lock).expect("plant the lock link");
    std::os::unix::fs::lchown(&lock, Some(NOBODY), Some(NOBODY)).expect("nobody's link");
    let impostor = Impostor::listen(&world.socket());

    let client = world.client(&["hook", "--decline", "not now"], &hook_input("toolu_o", "Which?"));
    let (code, stdout, stderr) = client.finish();
    assert!(!stdout.contains("forged"), "the impostor's answer was taken: {stdout}\n{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("deny") && stdout.contains("not now"), "{stdout}");
    assert_eq!(mode(&dir), 0o700, "the directory is narrowed");
    assert!(fs::symlink_metadata(&lock).is_err(), "the planted lock is still there");
    assert!(fs::symlink_metadata(world.socket()).is_err(), "the planted socket is still there");
    // Said once, in one line that names the directory, its mode and what was removed.
    let said: Vec<&str> = stderr.lines().filter(|line| line.contains("open to other")).collect();
    assert_eq!(said.len(), 1, "{stderr}");
    let line = said.first().copied().unwrap_or_default();
    for part in [dir.display().to_string().as_str(), "0777", "0700", "inbox.lock", "inbox.sock"] {
        assert!(line.contains(part), "{part:?} is not named: {line}");
    }

    // The user's inbox now starts there, and the file the link named is untouched.
    world.start_inbox_command(world.askpane(&["inbox"]));
    assert_eq!(read_lossy(&victim), "the user's own notes\n", "the victim file was written");
    let metadata = fs::symlink_metadata(&lock).expect("the inbox's own lock");
    assert!(metadata.file_type().is_file() && metadata.uid() == 0, "{metadata:?}");
    assert_eq!(metadata.mode() & 0o777, 0o600);
    let client = world.client(&["hook", "--decline", "later"], &hook_input("toolu_p", "Which?"));
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("later") && !stderr.contains("answering here"), "{stdout}{stderr}");
    assert!(!stderr.contains("open to other"), "said again: {stderr}");
    drop(impostor);
}

// ---------------------------------------------------------------------------------------------
// The store: drafts and history are the user's alone

/// The modes of the state directory and of the database's three files.
fn store_modes(dir: &Path) -> [u32; 4] {
    let file = |suffix: &str| mode(&dir.join(format!("askpane.db{suffix}")));
    [mode(dir), file(""), file("-wal"), file("-shm")]
}

#[test]
fn a_new_store_is_readable_by_the_user_alone() {
    let root = crate::support::scratch_dir("security-new-store");
    let dir = root.join("state/askpane");
    let store = askpane::store::Store::open_in(&dir).expect("a store");
    // Open, in WAL mode: the write-ahead log and its index are there too.
    assert_eq!(store_modes(&dir), [0o700, 0o600, 0o600, 0o600], "modes of {}", dir.display());
    if can_be_nobody() {
        let read = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/cat"])
            .arg(dir.join("askpane.db"))
            .output()
            .expect("run cat as nobody");
        assert!(!read.status.success(), "another user read the database");
    }
    drop(store);
    let _ = fs::remove_dir_all(root);
}

/// A store as an older askpane left it: the directory 0755, the database and (its writer still
/// running) its `-wal` and `-shm` 0644. The returned connection keeps them.
fn store_left_open(dir: &Path) -> rusqlite::Connection {
    fs::create_dir_all(dir).expect("the state directory");
    let connection = rusqlite::Connection::open(dir.join("askpane.db")).expect("a database");
    connection.pragma_update(None, "journal_mode", "WAL").expect("WAL");
    connection.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);").expect("a write");
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).expect("0755");
    for suffix in ["", "-wal", "-shm"] {
        let file = dir.join(format!("askpane.db{suffix}"));
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).expect("0644");
    }
    assert_eq!(store_modes(dir), [0o755, 0o644, 0o644, 0o644]);
    connection
}

#[test]
fn a_store_open_to_other_users_is_narrowed_once_and_said_in_one_line() {
    let root = crate::support::scratch_dir("security-old-store");
    let dir = root.join("state/askpane");
    let older = store_left_open(&dir);
    let history = || {
        let mut command = crate::support::askpane_unset(&["history"]);
        command.env("XDG_STATE_HOME", root.join("state")).env("HOME", &root);
        crate::support::run_bounded(&mut command, None)
    };
    let run = history();
    assert!(run.status.success(), "{run:?}");
    assert_eq!(store_modes(&dir), [0o700, 0o600, 0o600, 0o600], "{run:?}");
    let said: Vec<&str> = run.stderr.lines().filter(|line| line.contains("other users")).collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
    let line = said.first().copied().unwrap_or_default();
    for part in [&dir.display().to_string(), "0755", "0700", "askpane.db", "-wal", "-shm", "0644"] {
        assert!(line.contains(part), "{part:?} is not named: {line}");
    }
    // Once: the next run finds nothing to narrow.
    let again = history();
    assert!(again.status.success(), "{again:?}");
    assert!(!again.stderr.contains("other users"), "said again: {}", again.stderr);
    drop(older);

    // A directory the user named (--state-dir) keeps its mode, but askpane's files in it are
    // narrowed all the same.
    let named = root.join("named");
    let older = store_left_open(&named);
    let mut command = crate::support::askpane_unset(&["history", "--state-dir"]);
    command.arg(&named).env("HOME", &root);
    let run = crate::support::run_bounded(&mut command, None);
    assert!(run.status.success(), "{run:?}");
    assert_eq!(store_modes(&named), [0o755, 0o600, 0o600, 0o600], "{run:?}");
    assert_eq!(run.stderr.lines().filter(|line| line.contains("other users")).count(), 1);
    drop(older);
    let _ = fs::remove_dir_all(root);
}
