//! Real-window smoke tests: the built `askpane` binary on its own Xvfb display, driven with
//! xdotool, plus the command-line checks that need no display (`validate`, `demo --list`, and
//! the exit code when there is no display).
//!
//! Every test that needs a display starts its own Xvfb (Xvfb picks a free display number and
//! writes it to our pipe), so they can run in parallel. Every process a test spawns is stopped by
//! its PID when the test ends, pass or fail, and every wait is bounded; failure messages carry
//! askpane's stderr.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use askpane::protocol::outcome::CLOSED_MESSAGE;
use serde_json::{Value, json};

use crate::support;

/// The longest any single wait in these tests may take.
const WAIT: Duration = Duration::from_secs(20);
/// The title the database fixture gives the window.
const DATABASE_TITLE: &str = "Database — askpane";
/// `xdotool search --name` pattern for that title. winit stores the UTF-8 title in WM_NAME typed
/// as Latin-1 STRING, so xdotool sees the em dash as three other characters; `getwindowname`
/// (which reads _NET_WM_NAME) then checks the exact title.
const DATABASE_PATTERN: &str = "^Database .* askpane$";
const DATABASE_QUESTION: &str = "Which database should the new orders service use?";

// Where the database fixture draws things, in pixels from the window's top-left corner (measured
// on a screenshot at the default 960×680 size): option rows are ~65 px tall, the first starting
// ~140 px down; the Submit button sits in the bottom-right corner.
const ROW_X: i32 = 120;
const FIRST_ROW_Y: i32 = 140;
const ROW_HEIGHT: i32 = 65;
const SUBMIT_FROM_RIGHT: i32 = 42;
const SUBMIT_FROM_BOTTOM: i32 = 35;

#[test]
fn demo_window_shows_a_question_and_prints_the_reply_after_a_click() {
    let xvfb = Xvfb::start();
    let mut app = App::demo(&xvfb, &["--fixture", "database"]);
    let window = app.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);
    let (width, height) = xvfb.window_size(window);

    // The third option row: SQLite.
    xvfb.click(window, ROW_X, FIRST_ROW_Y + 2 * ROW_HEIGHT + ROW_HEIGHT / 2);
    thread::sleep(Duration::from_millis(300));
    xvfb.screenshot(window, &artifact("window-smoke.png"));
    xvfb.click(window, width - SUBMIT_FROM_RIGHT, height - SUBMIT_FROM_BOTTOM);

    let reply = app.reply();
    assert_eq!(reply["answers"], json!({ DATABASE_QUESTION: "SQLite" }), "reply: {reply}");
    assert_eq!(reply["questions"], database_fixture()["questions"], "reply: {reply}");
}

#[test]
fn demo_window_answers_from_the_keyboard_alone() {
    let xvfb = Xvfb::start();
    let mut app = App::demo(&xvfb, &["--fixture", "database"]);
    let window = app.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);

    let id = window.to_string();
    xvfb.xdotool(&["windowfocus", "--sync", &id]);
    xvfb.xdotool(&["key", "--window", &id, "2"]);
    thread::sleep(Duration::from_millis(200));
    xvfb.xdotool(&["key", "--window", &id, "ctrl+Return"]);

    let reply = app.reply();
    assert_eq!(reply["answers"], json!({ DATABASE_QUESTION: "MySQL" }), "reply: {reply}");
    assert_eq!(reply["questions"], database_fixture()["questions"], "reply: {reply}");
}

#[test]
fn closing_the_window_declines_what_is_open() {
    let xvfb = Xvfb::start();
    let mut app = App::demo(&xvfb, &["--fixture", "database"]);
    let window = app.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);

    // What a window manager's close button does. (xdotool's `windowclose` destroys the window
    // instead, which no user does, and which makes winit 0.30.13 panic.)
    send_wm_delete_window(xvfb.number, window);

    let status = app.process.wait(WAIT).unwrap_or_else(|| {
        panic!("askpane still runs {WAIT:?} after WM_DELETE_WINDOW\nstderr:\n{}", app.stderr())
    });
    assert!(status.success(), "askpane exited with {status} on close\nstderr:\n{}", app.stderr());
    let lines = app.remaining_lines();
    assert!(
        CLOSED_MESSAGE.starts_with("The user closed the question window without answering."),
        "unexpected CLOSED_MESSAGE: {CLOSED_MESSAGE}"
    );
    let expected = json!({"outcome": "declined", "message": CLOSED_MESSAGE});
    assert_eq!(lines.len(), 1, "stdout lines: {lines:#?}\nstderr:\n{}", app.stderr());
    let reply: Value = serde_json::from_str(&lines[0])
        .unwrap_or_else(|error| panic!("not JSON ({error}): {}", lines[0]));
    assert_eq!(reply, expected);
    assert!(!app.stderr().contains("panicked"), "stderr:\n{}", app.stderr());
}

#[test]
fn no_display_exits_3_with_one_line() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
    command.arg("demo").env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    let run = run_bounded(&mut command, None);
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr is not one line: {run:?}");
    assert!(lines[0].contains("DISPLAY") && lines[0].contains("xvfb-run"), "{run:?}");
}

#[test]
fn unreachable_display_exits_3_without_panic() {
    // A display number with neither a socket nor a lock file: no X server can be listening.
    let number = (6100..6200)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .expect("a free display number between 6100 and 6200");
    let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
    command
        .args(["demo", "--fixture", "database"])
        .env("DISPLAY", format!(":{number}"))
        .env_remove("WAYLAND_DISPLAY");
    let run = run_bounded(&mut command, None);
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("askpane: no display"), "{run:?}");
}

#[test]
fn validate_reports_errors_and_warnings() {
    let dir = scratch_dir("validate");
    let validate = |file: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
        command.arg("validate").arg(file);
        run_bounded(&mut command, None)
    };
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        fs::write(&path, text).expect("write a scratch file");
        path
    };

    let hook = support::fixture("hook.pretooluse.stdin.json");
    let valid = write("valid.json", &hook);
    let run = validate(&valid);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let expected = format!("{}: valid PreToolUse hook input with 3 questions\n", valid.display());
    assert_eq!(run.stdout, expected, "{run:?}");

    let invalid = write("invalid.json", r#"{"questions":[{"question":"Q?","options":[]}]}"#);
    let run = validate(&invalid);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(
        run.stdout.lines().any(|line| {
            line.trim() == "error: question 1: `options` is empty: there is nothing to choose from"
        }),
        "{run:?}"
    );

    let long_header = json!({"questions": [{
        "question": "Which one?",
        "header": "A header of 20 chars",
        "options": [
            {"label": "One", "description": "The first."},
            {"label": "Two", "description": "The second."}
        ],
        "multiSelect": false
    }]});
    assert_eq!(long_header["questions"][0]["header"].as_str().map(str::len), Some(20));
    let soft = write("soft.json", &long_header.to_string());
    let run = validate(&soft);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.contains(": valid "), "{run:?}");
    assert!(run.stdout.lines().any(|line| line.trim_start().starts_with("warning:")), "{run:?}");

    let not_json = write("not-json.json", "this is not JSON");
    let run = validate(&not_json);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(run.stdout.contains("not JSON"), "{run:?}");

    // `-` reads standard input.
    let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
    command.args(["validate", "-"]);
    let run = run_bounded(&mut command, Some(&hook));
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(run.stdout, "standard input: valid PreToolUse hook input with 3 questions\n", "{run:?}");
    let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
    command.args(["validate", "-"]);
    let run = run_bounded(&mut command, Some(r#"{"questions":[{"question":"Q?","options":[]}]}"#));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(run.stdout.starts_with("standard input: invalid"), "{run:?}");

    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn demo_list_names_every_fixture() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askpane"));
    command.args(["demo", "--list"]).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    let run = run_bounded(&mut command, None);
    assert_eq!(run.status.code(), Some(0), "{run:?}");

    let listed: Vec<&str> =
        run.stdout.lines().filter_map(|line| line.split_whitespace().next()).collect();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/fixtures");
    let mut names: Vec<String> = fs::read_dir(&fixtures)
        .expect("read assets/fixtures")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| path.file_stem().expect("a file name").to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 9, "assets/fixtures holds {names:?}");
    for name in &names {
        assert!(listed.contains(&name.as_str()), "`demo --list` misses {name}:\n{}", run.stdout);
    }
    assert_eq!(listed.len(), names.len(), "`demo --list` printed:\n{}", run.stdout);
}

// ---------------------------------------------------------------------------------------------
// Processes

/// A spawned process, stopped by its PID when dropped: SIGTERM, a bounded wait, then SIGKILL.
struct Process {
    child: Child,
}

impl Process {
    fn new(child: Child) -> Self {
        Process { child }
    }

    /// Waits up to `timeout` for the process to exit by itself.
    fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
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

    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("query a child's status")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.exited().is_some() {
            return;
        }
        // SIGTERM first so Xvfb removes its lock file and socket; SIGKILL if that is ignored.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if self.wait(Duration::from_secs(3)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Fails the test, pointing at the set-up script, if a tool the tests drive is missing.
fn require(tool: &str) {
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
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `command` to completion (feeding it `stdin`), killing it if it takes longer than WAIT.
fn run_bounded(command: &mut Command, stdin: Option<&str>) -> Finished {
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
fn read_all(mut pipe: impl Read + Send + 'static) -> Receiver<String> {
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
fn collect(receiver: Receiver<String>) -> String {
    receiver
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "<output pipe still open>".to_owned())
}

/// A new directory under target/tmp, unique to this call.
fn scratch_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let serial = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("window-{name}-{}-{serial}", std::process::id()));
    fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// A file under target/test-artifacts, for the lead to look at.
fn artifact(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    fs::create_dir_all(&dir).expect("create target/test-artifacts");
    dir.join(name)
}

fn database_fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/fixtures/database.json");
    let text = fs::read_to_string(&path).expect("read assets/fixtures/database.json");
    serde_json::from_str(&text).expect("the database fixture is JSON")
}

// ---------------------------------------------------------------------------------------------
// The virtual display

/// An Xvfb of this test's own, on the display number Xvfb chose, with a scratch directory for
/// its log and askpane's stderr (removed afterwards: failure messages already quote them).
struct Xvfb {
    number: u32,
    dir: PathBuf,
    _process: Process,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // Runs before the fields drop, so Xvfb itself is stopped right after this.
        let _ = fs::remove_dir_all(&self.dir);
    }
}

impl Xvfb {
    fn start() -> Self {
        require("Xvfb");
        require("xdotool");
        require("import");
        let dir = scratch_dir("display");
        let log = dir.join("xvfb.log");
        let log_file = File::create(&log).expect("create the Xvfb log");
        // `-displayfd 1`: Xvfb finds a free display number itself and writes it on its stdout
        // once it accepts connections.
        let child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-nolisten", "tcp", "-noreset"])
            .args(["-screen", "0", "1280x800x24"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start Xvfb: {error}"));
        let mut process = Process::new(child);
        let stdout = process.child.stdout.take().expect("piped stdout");
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = receiver.recv_timeout(WAIT).unwrap_or_else(|_| {
            panic!("Xvfb named no display within {WAIT:?}\n{}", read_lossy(&log))
        });
        let number = line.trim().parse().unwrap_or_else(|_| {
            panic!("Xvfb wrote {line:?}, not a display number\n{}", read_lossy(&log))
        });
        Xvfb { number, dir, _process: process }
    }

    fn display(&self) -> String {
        format!(":{}", self.number)
    }

    /// Runs xdotool on this display; fails the test if it fails or hangs.
    fn xdotool(&self, args: &[&str]) -> String {
        let mut command = Command::new("xdotool");
        command.args(args).env("DISPLAY", self.display());
        let run = run_bounded(&mut command, None);
        assert!(run.status.success(), "xdotool {args:?} failed: {run:?}");
        run.stdout
    }

    /// The window's width and height.
    fn window_size(&self, window: u32) -> (i32, i32) {
        let shell = self.xdotool(&["getwindowgeometry", "--shell", &window.to_string()]);
        let field = |name: &str| -> i32 {
            shell
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in getwindowgeometry's output:\n{shell}"))
        };
        (field("WIDTH"), field("HEIGHT"))
    }

    /// Clicks at (x, y) relative to the window's top-left corner: move, pause, then click.
    fn click(&self, window: u32, x: i32, y: i32) {
        let (x, y) = (x.to_string(), y.to_string());
        self.xdotool(&["mousemove", "--window", &window.to_string(), &x, &y]);
        thread::sleep(Duration::from_millis(200));
        self.xdotool(&["click", "1"]);
    }

    /// Saves a PNG of the window (cropped from the root window).
    fn screenshot(&self, window: u32, path: &Path) {
        let shell = self.xdotool(&["getwindowgeometry", "--shell", &window.to_string()]);
        let value = |name: &str| {
            shell
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
                .unwrap_or("0")
                .trim()
                .to_owned()
        };
        let crop = format!("{}x{}+{}+{}", value("WIDTH"), value("HEIGHT"), value("X"), value("Y"));
        let mut command = Command::new("import");
        command
            .args(["-display", &self.display(), "-window", "root", "-crop", &crop, "+repage"])
            .arg(path);
        let run = run_bounded(&mut command, None);
        assert!(run.status.success(), "screenshot failed: {run:?}");
    }
}

fn read_lossy(path: &Path) -> String {
    fs::read(path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned()).unwrap_or_default()
}

/// Asks `window` to close the way a window manager's close button does: a WM_PROTOCOLS
/// ClientMessage carrying WM_DELETE_WINDOW (ICCCM 4.2.8.1). xdotool 3.20160805 can only destroy
/// (`windowclose`) or kill (`windowkill`) a window, and wmctrl is not installed, so this speaks
/// the core X11 protocol itself over the display's Unix socket (Xvfb runs without `-auth`).
fn send_wm_delete_window(display: u32, window: u32) {
    let socket = format!("/tmp/.X11-unix/X{display}");
    // The socket file, or the abstract socket of the same name if Xvfb could not create the file.
    let mut x = UnixStream::connect(&socket)
        .or_else(|_| {
            let address = SocketAddr::from_abstract_name(socket.as_bytes())?;
            UnixStream::connect_addr(&address)
        })
        .unwrap_or_else(|error| panic!("cannot connect to {socket}: {error}"));
    x.set_read_timeout(Some(WAIT)).expect("set a read timeout");
    x.set_write_timeout(Some(WAIT)).expect("set a write timeout");

    // Connection setup: little-endian ('l'), protocol 11.0, no authorisation.
    x.write_all(&[b'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0]).expect("send the connection setup");
    let mut head = [0u8; 8];
    x.read_exact(&mut head).expect("read the connection setup reply");
    let mut rest = vec![0u8; usize::from(u16::from_le_bytes([head[6], head[7]])) * 4];
    x.read_exact(&mut rest).expect("read the connection setup data");
    assert_eq!(head[0], 1, "the X server refused us: {}", String::from_utf8_lossy(&rest));

    let protocols = intern_atom(&mut x, "WM_PROTOCOLS");
    let delete = intern_atom(&mut x, "WM_DELETE_WINDOW");

    let mut event = [0u8; 32];
    event[0] = 33; // ClientMessage
    event[1] = 32; // format: 32-bit data
    event[4..8].copy_from_slice(&window.to_le_bytes());
    event[8..12].copy_from_slice(&protocols.to_le_bytes());
    event[12..16].copy_from_slice(&delete.to_le_bytes());
    // event[16..20]: the timestamp, CurrentTime (0).
    let mut request = vec![25, 0]; // SendEvent, propagate: false
    request.extend(11u16.to_le_bytes()); // length in 4-byte units
    request.extend(window.to_le_bytes()); // destination
    request.extend(0u32.to_le_bytes()); // event mask: none, so it goes to the window's owner
    request.extend(event);
    x.write_all(&request).expect("send SendEvent");
    // GetInputFocus as a round trip: its reply comes after any error SendEvent caused.
    x.write_all(&[43, 0, 1, 0]).expect("send GetInputFocus");
    read_reply(&mut x, "SendEvent / GetInputFocus");
}

/// The atom named `name` (InternAtom with only-if-exists false).
fn intern_atom(x: &mut UnixStream, name: &str) -> u32 {
    let padded = name.len().div_ceil(4) * 4;
    let length = u16::try_from(2 + padded / 4).expect("a short atom name");
    let mut request = vec![16, 0];
    request.extend(length.to_le_bytes());
    request.extend(u16::try_from(name.len()).expect("a short atom name").to_le_bytes());
    request.extend([0, 0]);
    request.extend(name.as_bytes());
    request.resize(4 * usize::from(length), 0);
    x.write_all(&request).expect("send InternAtom");
    let reply = read_reply(x, name);
    u32::from_le_bytes([reply[8], reply[9], reply[10], reply[11]])
}

/// The next reply, skipping events; fails the test on an X error.
fn read_reply(x: &mut UnixStream, what: &str) -> [u8; 32] {
    loop {
        let mut reply = [0u8; 32];
        x.read_exact(&mut reply).unwrap_or_else(|error| panic!("no X reply to {what}: {error}"));
        match reply[0] {
            0 => panic!("X error {} answering {what}", reply[1]),
            1 => {
                let extra = u32::from_le_bytes([reply[4], reply[5], reply[6], reply[7]]);
                let mut rest = vec![0u8; extra as usize * 4];
                x.read_exact(&mut rest).expect("read the rest of an X reply");
                return reply;
            }
            _ => continue, // an event
        }
    }
}

// ---------------------------------------------------------------------------------------------
// askpane on the virtual display

/// A running `askpane` whose stdout lines arrive on a channel and whose stderr goes to a file.
struct App {
    process: Process,
    lines: Receiver<String>,
    stderr: PathBuf,
    display: String,
}

impl App {
    fn demo(xvfb: &Xvfb, args: &[&str]) -> Self {
        let stderr = xvfb.dir.join("askpane.stderr");
        let child = Command::new(env!("CARGO_BIN_EXE_askpane"))
            .arg("demo")
            .args(args)
            .env("DISPLAY", xvfb.display())
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).expect("create askpane's stderr file"))
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start askpane: {error}"));
        let mut process = Process::new(child);
        let stdout = process.child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        App { process, lines, stderr, display: xvfb.display() }
    }

    fn stderr(&self) -> String {
        read_lossy(&self.stderr)
    }

    /// Waits until a visible window's name matches `pattern`, checks its exact title, and
    /// returns its id. Fails at once if askpane exits first.
    fn wait_for_window(&mut self, pattern: &str, title: &str) -> u32 {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.process.exited() {
                panic!("askpane exited ({status}) before showing its window\n{}", self.stderr());
            }
            let mut command = Command::new("xdotool");
            command.args(["search", "--onlyvisible", "--name", pattern]);
            command.env("DISPLAY", &self.display);
            let run = run_bounded(&mut command, None);
            if let Some(id) = run.stdout.lines().next().and_then(|id| id.trim().parse().ok()) {
                let mut command = Command::new("xdotool");
                command.args(["getwindowname", &format!("{id}")]).env("DISPLAY", &self.display);
                let name = run_bounded(&mut command, None).stdout;
                assert_eq!(name.trim_end(), title, "the window's title");
                return id;
            }
            assert!(
                Instant::now() < deadline,
                "no window named {title:?} within {WAIT:?}\nstderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The next reply line, parsed; fails if none comes within WAIT.
    fn reply(&self) -> Value {
        let line = match self.lines.recv_timeout(WAIT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no reply on stdout within {WAIT:?}\nstderr:\n{}", self.stderr())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("askpane closed stdout without a reply\nstderr:\n{}", self.stderr())
            }
        };
        serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("the reply is not JSON ({error}): {line}"))
    }

    /// Every line still to come on stdout, once askpane has exited.
    fn remaining_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(5)) {
                Ok(line) => lines.push(line),
                Err(RecvTimeoutError::Disconnected) => return lines,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("stdout still open 5 s after askpane exited; read so far: {lines:?}")
                }
            }
        }
    }
}
