//! Reading the captured fixtures in `tests/fixtures/` (never the team's shared folder at run time),
//! comparing our JSON with a recorded line both by value and byte for byte, and running child
//! processes with bounded waits (`Process`, `run_bounded`, scratch directories).

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

// The real agents' tests' own helpers (CLIs, captures, a served inbox, a page's socket).
#[cfg(target_os = "linux")]
pub mod agents;
// A real Matrix homeserver (Synapse, scripts/synapse) started per test (issue 31).
#[cfg(target_os = "linux")]
pub mod synapse;

/// The text of `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read fixture {}: {error}", path.display()))
}

/// A fixture holding one JSON value.
pub fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&fixture(name))
        .unwrap_or_else(|error| panic!("{name} is not JSON: {error}"))
}

/// A fixture holding one JSON value per line.
pub fn fixture_lines(name: &str) -> Vec<Value> {
    fixture(name)
        .lines()
        .enumerate()
        .map(|(index, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{name} line {} is not JSON: {error}", index + 1))
        })
        .collect()
}

/// The lines of a trimmed stream-json host transcript (`session.*.jsonl`) that the tests use.
pub struct Session {
    /// How the CLI was started (`{"dir":"cmd"}`).
    pub argv: Vec<String>,
    /// The CLI's `control_request` with subtype `can_use_tool` (`{"dir":"<<"}`).
    pub can_use_tool: Value,
    /// The host's `control_response` to it (`{"dir":">>"}`), keys in the order the host sent them.
    pub host_reply: Value,
    /// The `tool_result` block of the CLI's next `user` line: what the model read.
    pub tool_result: Value,
}

impl Session {
    pub fn load(name: &str) -> Self {
        let (mut argv, mut can_use_tool, mut host_reply, mut tool_result) =
            (None, None, None, None);
        for record in fixture_lines(name) {
            let line = &record["line"];
            let kind = line["type"].as_str();
            let slot = match (record["dir"].as_str(), kind) {
                (Some("cmd"), _) => &mut argv,
                (Some("<<"), Some("control_request"))
                    if line["request"]["subtype"] == "can_use_tool" =>
                {
                    &mut can_use_tool
                }
                (Some(">>"), Some("control_response")) => &mut host_reply,
                (Some("<<"), Some("user"))
                    if line["message"]["content"][0]["type"] == "tool_result" =>
                {
                    let block = line["message"]["content"][0].clone();
                    assert!(tool_result.replace(block).is_none(), "{name}: two tool_result lines");
                    continue;
                }
                (dir, kind) => panic!("{name}: unexpected line {dir:?} {kind:?}; trim it out"),
            };
            assert!(slot.replace(line.clone()).is_none(), "{name}: two {kind:?} lines");
        }
        let argv = argv.unwrap_or_else(|| panic!("{name}: no cmd line"));
        Session {
            argv: serde_json::from_value(argv).expect("the cmd line is a list of strings"),
            can_use_tool: can_use_tool.unwrap_or_else(|| panic!("{name}: no can_use_tool line")),
            host_reply: host_reply.unwrap_or_else(|| panic!("{name}: no host control_response")),
            tool_result: tool_result.unwrap_or_else(|| panic!("{name}: no tool_result line")),
        }
    }

    /// The tool_result `content` string: exactly what the model read.
    pub fn model_read(&self) -> &str {
        self.tool_result["content"].as_str().expect("tool_result content is a string")
    }
}

/// A recorded allow as Claude Code's terminal dialog would have sent it (protocol.md §15):
/// `annotations` present even when empty, and for each `(question, preview)` the picked option's
/// preview put first in that question's annotation.
pub fn as_the_dialog_sends(recorded: &Value, previews: &[(&str, &str)]) -> Value {
    let mut reply = recorded.clone();
    let updated_input = [
        "/response/response/updatedInput",
        "/hookSpecificOutput/updatedInput",
        "/hookSpecificOutput/decision/updatedInput",
        "",
    ]
    .into_iter()
    .find(|path| reply.pointer(path).is_some_and(|input| input.get("questions").is_some()))
    .expect("the recorded reply is an allow with updatedInput");
    let input = reply
        .pointer_mut(updated_input)
        .and_then(Value::as_object_mut)
        .expect("updatedInput is an object");
    let annotations = input
        .entry("annotations")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("annotations is an object");
    for (question, preview) in previews {
        let before = annotations.shift_remove(*question).unwrap_or_else(|| json!({}));
        let mut annotation = serde_json::Map::new();
        annotation.insert("preview".into(), json!(preview));
        for (key, value) in before.as_object().into_iter().flatten() {
            if key != "preview" {
                annotation.insert(key.clone(), value.clone());
            }
        }
        annotations.insert((*question).to_owned(), Value::Object(annotation));
    }
    reply
}

/// The capture's recorded preview of the layout option `label` (`Sidebar` or `Tabs`).
pub fn capture_preview(label: &str) -> String {
    let session = Session::load("session.answer-with-notes.2.1.330.jsonl");
    let options = session.can_use_tool["request"]["input"]["questions"][0]["options"].clone();
    options
        .as_array()
        .into_iter()
        .flatten()
        .find(|option| option["label"] == label)
        .and_then(|option| option["preview"].as_str())
        .unwrap_or_else(|| panic!("the capture has no layout option {label:?} with a preview"))
        .to_owned()
}

/// Asserts `ours` equals `recorded` as JSON values, then as compact text (so key order counts).
pub fn assert_same_json(ours: &Value, recorded: &Value) {
    let (ours_text, recorded_text) = (compact(ours), compact(recorded));
    assert!(
        ours == recorded,
        "different JSON values\n     ours: {ours_text}\n recorded: {recorded_text}"
    );
    assert_eq!(ours_text, recorded_text, "same values, different key order");
}

/// Asserts `ours` is exactly the compact JSON text `expected`.
pub fn assert_json_text(ours: &Value, expected: &str) {
    let expected_value: Value = serde_json::from_str(expected)
        .unwrap_or_else(|error| panic!("expected text is not JSON ({error}): {expected}"));
    assert_same_json(ours, &expected_value);
    assert_eq!(compact(ours), expected, "the expected text is not compact JSON");
}

pub fn compact(value: &Value) -> String {
    serde_json::to_string(value).expect("a Value always serialises")
}

// ---------------------------------------------------------------------------------------------
// Processes: every child a test spawns is stopped by its PID when the test ends, pass or fail,
// and every wait is bounded.

/// The longest any single wait in these tests may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// A spawned process, stopped by its PID when dropped: SIGTERM, a bounded wait, then SIGKILL.
pub struct Process {
    pub child: Child,
}

impl Process {
    pub fn new(child: Child) -> Self {
        Process { child }
    }

    /// Waits up to `timeout` for the process to exit by itself.
    pub fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("query a child's status") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM (by PID) without waiting: the process ends in its own time, and dropping
    /// it still waits (bounded) and kills what did not end.
    pub fn terminate(&mut self) {
        // Never a PID that was reaped already (it may be another process's by now).
        if self.exited().is_some() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// The exit status, if the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("query a child's status")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // SIGTERM first so Xvfb removes its lock file and socket; SIGKILL if that is ignored.
        if self.exited().is_some() {
            return;
        }
        self.terminate();
        if self.wait(Duration::from_secs(3)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Fails the test, pointing at the set-up script, if a tool the tests drive is missing.
pub fn require(tool: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| dir.join(tool).is_file());
    assert!(
        found,
        "`{tool}` is not installed: the real-window tests need Xvfb, xdotool and ImageMagick. \
         Run the README's set-up command, `scripts/setup`, to install them."
    );
}

/// What a finished command printed.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` to completion (feeding it `stdin`), killing it if it takes longer than WAIT.
pub fn run_bounded(command: &mut Command, stdin: Option<&str>) -> Finished {
    command
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command.spawn().unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let mut process = Process::new(child);
    if let (Some(text), Some(mut pipe)) = (stdin, process.child.stdin.take()) {
        let text = text.to_owned();
        thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let stdout = read_all(process.child.stdout.take().expect("piped stdout"));
    let stderr = read_all(process.child.stderr.take().expect("piped stderr"));
    let status = process.wait(WAIT);
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    let status = status.unwrap_or_else(|| {
        panic!("{command:?} still runs after {WAIT:?}\nstdout:\n{stdout}\nstderr:\n{stderr}")
    });
    Finished { status, stdout, stderr }
}

/// Reads a pipe to its end on a thread.
pub fn read_all(mut pipe: impl Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}

/// What `read_all` read, once the process has exited (a grandchild holding the pipe open
/// cannot hang the test: this waits a bounded time).
pub fn collect(receiver: Receiver<String>) -> String {
    receiver
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "<output pipe still open>".to_owned())
}

/// A new directory under target/tmp, unique to this call (`<name>-<pid>-<serial>`).
pub fn scratch_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let serial = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}-{serial}", std::process::id()));
    fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// A file under target/test-artifacts, for the lead to look at.
pub fn artifact(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    fs::create_dir_all(&dir).expect("create target/test-artifacts");
    dir.join(name)
}

/// A file's text, or "" if it cannot be read (for failure messages).
pub fn read_lossy(path: &Path) -> String {
    fs::read(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default()
}

/// A runtime directory (`XDG_RUNTIME_DIR`) of one askpane's own, 0700 as askpane wants it: the
/// inbox that askpane looks for, or starts, is then never another test's, another run's on this
/// machine, nor the user's own (`/tmp/askpane-<uid>` when the variable is unset).
pub fn private_runtime_dir() -> PathBuf {
    let dir = scratch_dir("run");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
            .expect("narrow a runtime directory");
    }
    dir
}

/// The askpane binary with a runtime directory of its own ([`private_runtime_dir`]); a test
/// whose processes share an inbox sets `XDG_RUNTIME_DIR` to their common one after this.
pub fn askpane_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
    command.env("XDG_RUNTIME_DIR", private_runtime_dir());
    command
}

/// The askpane binary with `args` and none of the caller's `ASKPANE_*` settings (nor any
/// variable starting with one of `also_unset`), which would change what a test sees; a runtime
/// directory of its own ([`askpane_command`]).
pub fn askpane_unset_also(args: &[&str], also_unset: &[&str]) -> Command {
    let mut command = askpane_command();
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("ASKPANE_") || also_unset.iter().any(|prefix| text.starts_with(prefix))
        {
            command.env_remove(name);
        }
    }
    command.args(args);
    command
}

/// [`askpane_unset_also`] with only the `ASKPANE_*` settings unset.
pub fn askpane_unset(args: &[&str]) -> Command {
    askpane_unset_also(args, &[])
}

/// `askpane <args>` with no `ASKPANE_*` variable and no display (so no window and no browser),
/// answering in its own process: `ASKPANE_NO_INBOX=1` keeps `ask` and `hook` away from any
/// inbox (tests/inbox.rs takes it off). Its store (drafts and history) is a directory of its
/// own ([`private_state_dir`]), never the user's; a test whose commands share a store sets
/// `ASKPANE_STATE_DIR` to their common one after this.
pub fn askpane(args: &[&str]) -> Command {
    let mut command = askpane_unset(args);
    command.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    command.env("ASKPANE_NO_INBOX", "1");
    command.env("ASKPANE_STATE_DIR", private_state_dir());
    command
}

/// A store directory (`ASKPANE_STATE_DIR`) of one askpane's own, never the user's. One store
/// shared by every test's askpane was written by many at once (a write now and then found it
/// locked, and its warning broke a test's one-line stderr) and read by all (a draft one test
/// left was restored in another's window).
pub fn private_state_dir() -> PathBuf {
    scratch_dir("state")
}

/// The last `limit` characters of `text`, with "…" before when cut (for failure messages).
pub fn tail(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    match count <= limit {
        true => text.to_owned(),
        false => std::iter::once('…').chain(text.chars().skip(count - limit)).collect(),
    }
}

/// At most `limit` characters of `text`, with "…" when cut (for failure messages).
pub fn clip(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut clipped: String = text.chars().take(limit).collect();
    clipped.push('…');
    clipped
}

/// True when askpane was built with its web app (scripts/build-web), so `--ui web` can be tested
/// for real. Without it a test may check what askpane says instead and skip the rest, but never
/// under `CI=true`: there `scripts/test` builds the bundle first, and a missing one is a failure,
/// not ten tests passing without testing anything (issue 25).
pub fn web_bundle_built() -> bool {
    if askpane::transport::serve::bundle::available() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none_or(|ci| ci.is_empty() || ci == "false"),
        "askpane was built without its web app under CI=true: run scripts/build-web before \
         building the tests"
    );
    false
}
