//! What the Matrix tests share: the test's second Matrix client (`Peer`, askpane-matrix-peer
//! driven over JSON lines) and `Bridged`, an inbox, a Synapse, the bot's login and room, alice
//! in it and the bridge running.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::member_binary;
use crate::inbox::{Connection, World};
use crate::support::synapse::{Account, Homeserver};
use crate::support::{Process, WAIT, read_lossy, run_bounded, scratch_dir};

/// How long a Matrix round (post, sync, decrypt) may take on a loaded 2-core machine.
pub(crate) const ROOM_WAIT: Duration = Duration::from_secs(30);

/// The test's second Matrix client, driven over JSON lines.
pub(crate) struct Peer {
    pub(crate) process: Process,
    pub(crate) stdin: ChildStdin,
    pub(crate) replies: Receiver<String>,
}

impl Peer {
    pub(crate) fn start(homeserver: &Homeserver, account: &Account) -> Peer {
        Peer::start_device(homeserver, account, true)
    }

    /// A new device of `account`, cross-signed as Element does on login (`cross_sign`), or left
    /// unsigned: a device its owner never verified.
    pub(crate) fn start_device(
        homeserver: &Homeserver,
        account: &Account,
        cross_sign: bool,
    ) -> Peer {
        let mut command = Command::new(member_binary("askpane-matrix-peer"));
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut process = Process::new(command.spawn().expect("start the peer"));
        let stdin = process.child.stdin.take().expect("piped stdin");
        let stdout = process.child.stdout.take().expect("piped stdout");
        let (tell, replies) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tell.send(line).is_err() {
                    return;
                }
            }
        });
        let mut peer = Peer { process, stdin, replies };
        let store = scratch_dir("peer-store");
        peer.call(json!({"do": "login", "homeserver": homeserver.url(), "user": account.user_id,
                         "password": account.password, "store": store,
                         "cross_sign": cross_sign}));
        peer
    }

    /// One request; its reply (the test fails on an error or after the request's own wait).
    pub(crate) fn call(&mut self, request: Value) -> Value {
        let reply = self.try_call(request.clone());
        assert_eq!(reply["ok"], true, "the peer failed {request}: {reply}");
        reply
    }

    pub(crate) fn try_call(&mut self, mut request: Value) -> Value {
        if request.get("timeout_ms").is_none() {
            request["timeout_ms"] = json!(ROOM_WAIT.as_millis() as u64);
        }
        writeln!(self.stdin, "{request}").expect("write to the peer");
        let line = self
            .replies
            .recv_timeout(ROOM_WAIT + Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("the peer did not answer {request}"));
        serde_json::from_str(&line).expect("the peer's reply is JSON")
    }

    pub(crate) fn wait_message(&mut self, room: &str, contains: &str) -> Value {
        let reply = self.call(json!({"do": "wait_message", "room": room, "contains": contains}));
        reply["event"].clone()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.process.child.kill();
        let _ = self.process.child.wait();
    }
}

/// An inbox, a homeserver, the bot's login and room, alice's peer in it, and the bridge.
pub(crate) struct Bridged {
    pub(crate) world: World,
    pub(crate) homeserver: Homeserver,
    pub(crate) room: String,
    pub(crate) alice: Peer,
    pub(crate) alice_account: Account,
    pub(crate) bridge: Option<Process>,
    pub(crate) runs: usize,
}

impl Bridged {
    /// `None` when Synapse is not installed (scripts/synapse installs it).
    pub(crate) fn start(name: &str) -> Option<Bridged> {
        let mut bridged = Bridged::logged_in(name)?;
        let alice_id = bridged.alice_account.user_id.clone();
        let mut create = bridged.command(&["room", "create", "--invite", &alice_id]).into_inner();
        let finished = run_bounded(&mut create, None);
        assert!(finished.status.success(), "room create: {}", finished.stderr);
        bridged.room = finished.stdout.trim().to_owned();
        let room = bridged.room.clone();
        bridged.alice.call(json!({"do": "join", "room": room}));
        bridged.run_bridge();
        Some(bridged)
    }

    /// The world before any room: the inbox, the homeserver, alice's peer and the bot logged in
    /// (`@askpane`), no room chosen and no bridge running.
    pub(crate) fn logged_in(name: &str) -> Option<Bridged> {
        let homeserver = Homeserver::start()?;
        let world = World::with_inbox(name);
        let bot = homeserver.register("askpane", "bot-password", false);
        let alice_account = homeserver.register("alice", "alice-password", false);
        let bridged = Bridged {
            world,
            room: String::new(),
            alice: Peer::start(&homeserver, &alice_account),
            homeserver,
            alice_account,
            bridge: None,
            runs: 0,
        };
        let login = bridged.command(&[
            "login",
            "--homeserver",
            &bridged.homeserver.url(),
            "--user",
            &bot.user_id,
        ]);
        let finished =
            run_bounded(login.into_inner().env("ASKPANE_MATRIX_PASSWORD", "bot-password"), None);
        assert!(finished.status.success(), "login: {}", finished.stderr);
        Some(bridged)
    }

    /// `askpane-matrix <args>` in this world (its inbox's socket, its state directory).
    pub(crate) fn command(&self, args: &[&str]) -> Wrapped {
        Wrapped(bridge_command(&self.world, args))
    }

    pub(crate) fn bridge_log(&self) -> PathBuf {
        self.world.root.join(format!("bridge-{}.stderr", self.runs))
    }

    /// Starts `askpane-matrix run` and waits until it is connected to the inbox.
    pub(crate) fn run_bridge(&mut self) {
        self.runs += 1;
        let mut command = self.command(&["run"]).into_inner();
        command.stdin(Stdio::null()).stdout(Stdio::null());
        command.stderr(fs::File::create(self.bridge_log()).expect("the bridge's stderr"));
        self.bridge = Some(Process::new(command.spawn().expect("start the bridge")));
        self.wait_log("connected to the inbox");
    }

    pub(crate) fn wait_log(&mut self, line: &str) {
        let deadline = Instant::now() + ROOM_WAIT;
        loop {
            let log = read_lossy(&self.bridge_log());
            if log.contains(line) {
                return;
            }
            if let Some(status) = self.bridge.as_mut().and_then(Process::exited) {
                panic!("the bridge ended ({status}): {log}");
            }
            assert!(Instant::now() < deadline, "the bridge never said `{line}`: {log}");
            thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn stop_bridge(&mut self) {
        if let Some(mut bridge) = self.bridge.take() {
            bridge.terminate();
            assert!(bridge.wait(WAIT).is_some(), "the bridge did not end on SIGTERM");
        }
    }
}

impl Drop for Bridged {
    fn drop(&mut self) {
        if let Some(mut bridge) = self.bridge.take() {
            let _ = bridge.child.kill();
            let _ = bridge.child.wait();
        }
    }
}

/// A command, so that callers can add to its environment.
/// `askpane-matrix <args>` in `world` (its inbox's socket, its state directory), with no
/// password, token or state directory of the test's own environment.
pub(crate) fn bridge_command(world: &World, args: &[&str]) -> Command {
    let mut command = Command::new(member_binary("askpane-matrix"));
    command
        .args(args)
        .env_remove("ASKPANE_STATE_DIR")
        .env_remove("ASKPANE_MATRIX_PASSWORD")
        .env_remove("ASKPANE_MATRIX_TOKEN")
        .env("XDG_RUNTIME_DIR", world.root.join("run"))
        .env("XDG_STATE_HOME", world.root.join("state"));
    command
}

/// Answers `ask` (as `list` gave it) on the inbox's socket with its first question's first
/// option, as someone at the desk (`@desk`); true when the inbox took the answer.
pub(crate) fn answer_at_the_desk(front: &mut Connection, ask: &Value) -> bool {
    front.send(
        &json!({"type": "answer", "connection": ask["connection"], "id": ask["id"],
                "answers": {"0": "1"}, "answered_by": "@desk"})
        .to_string(),
    );
    front.receive_kind("verdict")["accepted"] == true
}

pub(crate) struct Wrapped(pub(crate) Command);

impl Wrapped {
    pub(crate) fn into_inner(self) -> Command {
        self.0
    }
}

/// The test's world, or the test returns: Synapse is not installed (`Homeserver::start` says
/// so, and fails the test under `CI=true`).
macro_rules! bridged_or_skip {
    ($name:expr) => {
        match Bridged::start($name) {
            Some(bridged) => bridged,
            None => return,
        }
    };
}
pub(crate) use bridged_or_skip;
