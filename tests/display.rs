//! The virtual display the real-window tests run on: an Xvfb of each test's own (`Xvfb`), askpane
//! started on it with its stdout read line by line (`App`), finding a window by its title, and
//! closing a window the way a window manager does (`send_wm_delete_window`).
//!
//! Xvfb picks a free display number and writes it to our pipe, so tests run in parallel. Every
//! process is stopped by its PID when its guard drops, pass or fail; every wait is bounded.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Process, WAIT, read_lossy, require, run_bounded, scratch_dir};

/// The pause between the inputs of one sequence: a key and the next, the pointer's move and its
/// click. egui takes a frame's input together, and a person's keys never share a frame; nothing
/// the window shows says that a frame was drawn, so this is a time, not an event.
pub const INPUT_GAP: Duration = Duration::from_millis(200);

/// An Xvfb of this test's own, on the display number Xvfb chose, with a scratch directory for
/// its log and askpane's stderr (removed afterwards: failure messages already quote them).
pub struct Xvfb {
    /// The display number: `:<number>`.
    pub number: u32,
    /// A scratch directory for logs, removed when the display stops.
    pub dir: PathBuf,
    _process: Process,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // Runs before the fields drop, so Xvfb itself is stopped right after this.
        let _ = fs::remove_dir_all(&self.dir);
    }
}

impl Xvfb {
    pub fn start() -> Self {
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

    pub fn display(&self) -> String {
        format!(":{}", self.number)
    }

    /// The first visible window whose name matches `pattern` (`xdotool search --onlyvisible
    /// --name`), if there is one now.
    pub fn find_window(&self, pattern: &str) -> Option<u32> {
        find_window(&self.display(), pattern)
    }

    /// Runs xdotool on this display; fails the test if it fails or hangs.
    pub fn xdotool(&self, args: &[&str]) -> String {
        self.xdotool_for(args, None)
    }

    /// [`Xvfb::xdotool`] on `app`'s window: a failure also tells what askpane said (its window
    /// may be gone because askpane ended).
    pub fn xdotool_for(&self, args: &[&str], app: Option<&App>) -> String {
        let mut command = Command::new("xdotool");
        command.args(args).env("DISPLAY", self.display());
        let run = run_bounded(&mut command, None);
        let said = app.map(App::stderr).unwrap_or_default();
        assert!(
            run.status.success(),
            "xdotool {args:?} failed: {run:?}\naskpane's stderr:\n{said}"
        );
        run.stdout
    }

    /// The window's width and height.
    pub fn window_size(&self, window: u32) -> (i32, i32) {
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

    /// Starts a program on this display (a window manager, another application), stopped by
    /// its PID when the guard drops.
    pub fn spawn(&self, program: &str, args: &[&str]) -> Process {
        require(program);
        let child = Command::new(program)
            .args(args)
            .env("DISPLAY", self.display())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {program}: {error}"));
        Process::new(child)
    }

    /// Starts openbox, the window manager where focus matters, and waits until it manages the
    /// display (it names itself on the root window: `_NET_SUPPORTING_WM_CHECK`).
    pub fn window_manager(&self) -> Process {
        let process = self.spawn("openbox", &[]);
        let deadline = Instant::now() + WAIT;
        while !self.root_property("_NET_SUPPORTING_WM_CHECK").contains("window id") {
            assert!(Instant::now() < deadline, "openbox did not start within {WAIT:?}");
            thread::sleep(Duration::from_millis(50));
        }
        process
    }

    /// `xprop -root NAME`: a root window property as xprop prints it.
    pub fn root_property(&self, name: &str) -> String {
        let mut command = Command::new("xprop");
        command.args(["-root", name]).env("DISPLAY", self.display());
        run_bounded(&mut command, None).stdout
    }

    /// `xprop -id WINDOW NAME`: a window property as xprop prints it.
    pub fn window_property(&self, window: u32, name: &str) -> String {
        let mut command = Command::new("xprop");
        command.args(["-id", &window.to_string(), name]).env("DISPLAY", self.display());
        run_bounded(&mut command, None).stdout
    }

    /// The window that has the keyboard (`xdotool getwindowfocus`).
    pub fn focused_window(&self) -> u32 {
        let text = self.xdotool(&["getwindowfocus"]);
        text.trim().parse().unwrap_or_else(|_| panic!("xdotool getwindowfocus printed {text:?}"))
    }

    /// Waits until a window of this X class exists; its id. (Not only visible ones: under a
    /// window manager a new window is mapped only once the manager has taken it.)
    pub fn wait_for_class(&self, class: &str) -> u32 {
        let deadline = Instant::now() + WAIT;
        loop {
            let mut command = Command::new("xdotool");
            command.args(["search", "--class", class]);
            command.env("DISPLAY", self.display());
            let found = run_bounded(&mut command, None).stdout;
            if let Some(id) = found.lines().next().and_then(|id| id.trim().parse().ok()) {
                return id;
            }
            assert!(Instant::now() < deadline, "no {class} window within {WAIT:?}");
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The mean brightness of a window's pixels, from 0 (black) to 1 (white).
    pub fn brightness(&self, window: u32, path: &Path) -> f64 {
        self.screenshot(window, path);
        let mut command = Command::new("convert");
        command.arg(path).args(["-colorspace", "Gray", "-format", "%[fx:mean]", "info:"]);
        let run = run_bounded(&mut command, None);
        run.stdout.trim().parse().unwrap_or_else(|_| panic!("convert printed {run:?}"))
    }

    /// Gives `window` the keyboard and waits out the moment askpane ignores keys after it gains
    /// focus (`askpane::app::KEY_GRACE`), so the next keys are the user's.
    pub fn focus(&self, window: u32) {
        self.xdotool(&["windowfocus", "--sync", &window.to_string()]);
        thread::sleep(askpane::app::KEY_GRACE + Duration::from_millis(300));
    }

    /// Clicks at (x, y) relative to the window's top-left corner: move, [`INPUT_GAP`], click.
    pub fn click(&self, window: u32, x: i32, y: i32) {
        let (x, y) = (x.to_string(), y.to_string());
        self.xdotool(&["mousemove", "--window", &window.to_string(), &x, &y]);
        thread::sleep(INPUT_GAP);
        self.xdotool(&["click", "1"]);
    }

    /// Presses `keys` on `window` one after the other, [`INPUT_GAP`] apart, as a person would.
    pub fn keys(&self, window: u32, keys: &[&str]) {
        self.keys_for(window, keys, None);
    }

    /// Presses `keys` (each an xdotool key sequence, [`INPUT_GAP`] apart) on `window`, which must
    /// have the keyboard, through the X server (XTEST) as a keyboard does. For keys that hide or
    /// close the window: `xdotool key --window` sends each press and each release by XTEST when
    /// the window has the keyboard at that moment, else as an event sent to the window. A press
    /// that hid the window thus had its release sent to the window, and the server kept the key
    /// down: it repeated it (after 660 ms, 25 times a second) into the window that had the
    /// keyboard next, where a held Return answered a question; and a release sent to a window
    /// already gone failed (BadWindow).
    pub fn keys_to_focused(&self, window: u32, keys: &[&str]) {
        assert_eq!(self.focused_window(), window, "the keys are for a window with the keyboard");
        for (index, key) in keys.iter().enumerate() {
            if index > 0 {
                thread::sleep(INPUT_GAP);
            }
            self.xdotool(&["key", key]);
        }
    }

    /// [`Xvfb::keys`]; a failure also tells what `app` said.
    pub fn keys_for(&self, window: u32, keys: &[&str], app: Option<&App>) {
        let id = window.to_string();
        for (index, key) in keys.iter().enumerate() {
            if index > 0 {
                thread::sleep(INPUT_GAP);
            }
            self.xdotool_for(&["key", "--window", &id, key], app);
        }
    }

    /// The window's mean brightness ([`Xvfb::brightness`]) once `drawn` holds for it, or the last
    /// one seen when `within` has passed (the caller's assertion then says what was wrong). A
    /// window's pixels are drawn a frame or so after it maps or is uncovered: this waits for
    /// that, never past `within`. Pixels all black (0) are never taken for drawn ones.
    pub fn brightness_when(
        &self,
        window: u32,
        path: &Path,
        within: Duration,
        drawn: impl Fn(f64) -> bool,
    ) -> f64 {
        let deadline = Instant::now() + within;
        loop {
            let brightness = self.brightness(window, path);
            if (brightness > 0.0 && drawn(brightness)) || Instant::now() >= deadline {
                return brightness;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Saves a PNG of the window (cropped from the root window).
    pub fn screenshot(&self, window: u32, path: &Path) {
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

/// Asks `window` to close the way a window manager's close button does: a WM_PROTOCOLS
/// ClientMessage carrying WM_DELETE_WINDOW (ICCCM 4.2.8.1). xdotool 3.20160805 can only destroy
/// (`windowclose`) or kill (`windowkill`) a window, and wmctrl is not installed, so this speaks
/// the core X11 protocol itself over the display's Unix socket (Xvfb runs without `-auth`).
pub fn send_wm_delete_window(display: u32, window: u32) {
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

/// The first visible window on `display` whose name matches `pattern` (`xdotool search
/// --onlyvisible --name`), if there is one now.
pub fn find_window(display: &str, pattern: &str) -> Option<u32> {
    let mut command = Command::new("xdotool");
    command.args(["search", "--onlyvisible", "--name", pattern]).env("DISPLAY", display);
    let run = run_bounded(&mut command, None);
    run.stdout.lines().next().and_then(|id| id.trim().parse().ok())
}

/// A window's exact title (`xdotool getwindowname` reads `_NET_WM_NAME`, UTF-8).
pub fn window_name(display: &str, window: u32) -> String {
    let mut command = Command::new("xdotool");
    command.args(["getwindowname", &window.to_string()]).env("DISPLAY", display);
    run_bounded(&mut command, None).stdout.trim_end().to_owned()
}

// ---------------------------------------------------------------------------------------------
// askpane on the virtual display

/// A running `askpane` whose stdout lines arrive on a channel and whose stderr goes to a file.
pub struct App {
    pub process: Process,
    lines: Receiver<String>,
    stderr: PathBuf,
    display: String,
}

impl App {
    /// Starts `askpane <args>` on `xvfb`'s display (stdin empty, no `ASKPANE_*` variables).
    pub fn start(xvfb: &Xvfb, args: &[&str]) -> Self {
        App::start_with_input(xvfb, args, None)
    }

    /// [`App::start`] with `input` on stdin (then closed), as Claude Code runs a hook.
    pub fn start_with_input(xvfb: &Xvfb, args: &[&str], input: Option<&str>) -> Self {
        App::start_with_env(xvfb, args, input, &[])
    }

    /// [`App::start_with_input`] with `env` set for askpane (`ASKPANE_DRAWING`, …).
    pub fn start_with_env(
        xvfb: &Xvfb,
        args: &[&str],
        input: Option<&str>,
        env: &[(&str, &str)],
    ) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let serial = NEXT.fetch_add(1, Ordering::Relaxed);
        let stderr = xvfb.dir.join(format!("askpane-{serial}.stderr"));
        // None of the caller's settings: a store and a window of its own, never the user's
        // inbox (tests/inbox.rs starts its own).
        let mut command = crate::support::askpane_unset(args);
        command.env("ASKPANE_STATE_DIR", crate::support::private_state_dir());
        command.env("ASKPANE_NO_INBOX", "1");
        command.env("DISPLAY", xvfb.display()).env_remove("WAYLAND_DISPLAY");
        command.envs(env.iter().copied());
        let child = command
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).expect("create askpane's stderr file"))
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start askpane: {error}"));
        let mut process = Process::new(child);
        if let (Some(input), Some(mut pipe)) = (input, process.child.stdin.take()) {
            pipe.write_all(input.as_bytes()).expect("write askpane's stdin");
        }
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

    /// What askpane wrote on stderr so far.
    pub fn stderr(&self) -> String {
        read_lossy(&self.stderr)
    }

    /// Waits until a visible window's name matches `pattern`, checks its exact title, and
    /// returns its id. Fails at once if askpane exits first.
    pub fn wait_for_window(&mut self, pattern: &str, title: &str) -> u32 {
        self.wait_for_window_titled(pattern, |shown| {
            assert_eq!(shown, title, "the window's title");
        })
    }

    /// Waits until a visible window's name matches `pattern`, hands its exact title to `check`,
    /// and returns its id (for titles that change, like a countdown's).
    pub fn wait_for_window_titled(&mut self, pattern: &str, check: impl Fn(&str)) -> u32 {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.process.exited() {
                panic!("askpane exited ({status}) before showing its window\n{}", self.stderr());
            }
            if let Some(id) = find_window(&self.display, pattern) {
                check(&window_name(&self.display, id));
                return id;
            }
            assert!(
                Instant::now() < deadline,
                "no window matching {pattern:?} within {WAIT:?}\nstderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The next reply line, parsed; fails if none comes within WAIT.
    pub fn reply(&self) -> Value {
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

    /// True when no line comes on stdout within `time` (and askpane still runs).
    pub fn silent_for(&mut self, time: Duration) -> bool {
        match self.lines.recv_timeout(time) {
            Ok(line) => panic!("askpane replied when it should not have: {line}"),
            Err(RecvTimeoutError::Timeout) => self.process.exited().is_none(),
            Err(RecvTimeoutError::Disconnected) => false,
        }
    }

    /// The process id, to send it a signal.
    pub fn pid(&self) -> u32 {
        self.process.child.id()
    }

    /// Every line still to come on stdout, once askpane has exited.
    pub fn remaining_lines(&self) -> Vec<String> {
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

    /// Waits up to `within` for askpane to exit by itself; then its status and every stdout line.
    pub fn finish(&mut self, within: Duration) -> (ExitStatus, Vec<String>) {
        let status = self.process.wait(within).unwrap_or_else(|| {
            panic!("askpane still runs after {within:?}\nstderr:\n{}", self.stderr())
        });
        (status, self.remaining_lines())
    }
}
