//! A private D-Bus session bus for a test: `dbus-daemon` started with a config the test writes
//! (no service directories, so nothing on the machine is activated behind the test's back), its
//! address once it listens, and the daemon stopped by its PID when the bus is dropped.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::{Process, WAIT, require};

/// A running session bus of the test's own.
pub struct SessionBus {
    /// Its address (`unix:path=…`), as `DBUS_SESSION_BUS_ADDRESS` takes it.
    pub address: String,
    _daemon: Process,
}

impl SessionBus {
    /// Starts a session bus listening at `<root>/bus`, its config written to `<root>/bus.conf`.
    /// `display` is the environment the daemon keeps (an X display for what connects to it).
    pub fn start(root: &Path, display: &str) -> SessionBus {
        SessionBus::start_by(Command::new("dbus-daemon"), root, display, Admits::Owner)
    }

    /// A session bus of another user, `nobody` (uid 65534), at `<root>/bus`, admitting who
    /// `admits` says; `None` (the test says why and skips) unless the test runs as root with
    /// `setpriv`, as the other tests that need a second user do.
    pub fn of_another_user(root: &Path, display: &str, admits: Admits) -> Option<SessionBus> {
        let root_user = rustix::process::getuid().is_root();
        if !root_user || !Path::new("/usr/bin/setpriv").exists() {
            eprintln!("skipped: needs root and setpriv to be another user");
            return None;
        }
        std::os::unix::fs::chown(root, Some(NOBODY), Some(NOBODY)).expect("give nobody its dir");
        let mut daemon = Command::new("setpriv");
        daemon.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "dbus-daemon"]);
        Some(SessionBus::start_by(daemon, root, display, admits))
    }

    fn start_by(mut daemon: Command, root: &Path, display: &str, admits: Admits) -> SessionBus {
        require("dbus-daemon");
        let socket = root.join("bus");
        let config = root.join("bus.conf");
        fs::write(&config, session_config(&socket, admits)).expect("write the bus's config");
        daemon
            .arg("--nofork")
            .arg("--nopidfile")
            .arg("--print-address=1")
            .arg(format!("--config-file={}", config.display()))
            .env("DISPLAY", display)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut daemon = Process::new(daemon.spawn().expect("start dbus-daemon"));
        let stdout = daemon.child.stdout.take().expect("piped stdout");
        let (sender, address) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line.trim().to_owned());
        });
        let address = address.recv_timeout(WAIT).expect("dbus-daemon printed its address");
        assert!(address.starts_with("unix:path="), "dbus-daemon's address: {address:?}");
        SessionBus { address, _daemon: daemon }
    }

    /// Waits (bounded) until someone owns `name` on this bus.
    pub fn wait_for_owner(&self, name: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let owned = Command::new("dbus-send")
                .args(["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/"])
                .arg("org.freedesktop.DBus.NameHasOwner")
                .arg(format!("string:{name}"))
                .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                .output()
                .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains("true"));
            if owned {
                return;
            }
            assert!(Instant::now() < deadline, "nobody took {name} on the test's bus");
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The uid of `nobody`, the second user of the tests that need one.
pub const NOBODY: u32 = 65534;

/// Who a bus lets in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admits {
    /// Only the user who started it, as a desktop's session bus.
    Owner,
    /// Every user of the machine (`<allow user="*"/>`): a bus another user set up so.
    Everyone,
}

/// A session bus's config: listening on `socket`, authenticated by uid (only the user who
/// started it gets in unless `admits` says everyone), everything allowed between its clients,
/// and no `<servicedir>`: a name nobody owns stays unowned instead of starting the machine's
/// dunst.
fn session_config(socket: &Path, admits: Admits) -> String {
    let everyone = match admits {
        Admits::Owner => "",
        Admits::Everyone => "\n    <allow user=\"*\"/>",
    };
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">{}
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
        socket.display(),
        everyone
    )
}
