//! Issue 31: the bridge started with the inbox. A configured `askpane-matrix` (a session and a
//! room in the state directory's `matrix/`) is started by the inbox as it starts, started again
//! when it dies, stopped when the inbox ends, and ends by itself when the inbox is killed
//! outright; not configured, disabled or missing, nothing runs. The tests without Synapse use a
//! stand-in program (`ASKPANE_MATRIX_BIN`) and a fake configuration: the inbox reads only the
//! files' shape.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use super::end_to_end::{hook_input, layout, window_reply};
use super::member_binary;
use super::peer::{Peer, ROOM_WAIT};
use crate::inbox::World;
use crate::support::synapse::Homeserver;
use crate::support::{WAIT, read_lossy, run_bounded};

/// The inbox's stderr, where the bridge's lines go too (they start `askpane-matrix: `).
fn inbox_log(world: &World) -> String {
    read_lossy(&world.root.join("inbox.stderr"))
}

/// Waits (bounded by `limit`) until `done` holds of the inbox's stderr; fails with it.
fn wait_log(world: &World, limit: Duration, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let log = inbox_log(world);
        if done(&log) {
            return log;
        }
        assert!(Instant::now() < deadline, "never {what}; the inbox's stderr:\n{log}");
        thread::sleep(Duration::from_millis(50));
    }
}

/// The pids of the bridges the inbox said it started, in order.
fn started_bridges(log: &str) -> Vec<u32> {
    log.lines()
        .filter(|line| line.contains("started the Matrix bridge ("))
        .filter_map(|line| line.rsplit_once(", pid ")?.1.trim().parse().ok())
        .collect()
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        }
    }
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| parent_of(*child) == Some(pid))
        .collect()
}

fn wait_ended(pid: u32, limit: Duration, why: &str) {
    let deadline = Instant::now() + limit;
    while !ended(pid) {
        assert!(Instant::now() < deadline, "{why}: process {pid} still runs after {limit:?}");
        thread::sleep(Duration::from_millis(50));
    }
}

fn kill(signal: &str, pid: u32) {
    let killed = Command::new("kill").args([signal, &pid.to_string()]).status().expect("kill");
    assert!(killed.success(), "kill {signal} {pid}");
}

/// `world`'s state directory for askpane (`$XDG_STATE_HOME/askpane`).
fn state_dir(world: &World) -> PathBuf {
    world.root.join("state/askpane")
}

/// A session and a room file as `askpane-matrix` writes them, with nothing behind them: the
/// inbox decides from the files alone.
fn fake_configuration(world: &World, start_with_inbox: Option<bool>) {
    let dir = state_dir(world).join("matrix");
    fs::create_dir_all(&dir).expect("the bridge's directory");
    fs::write(dir.join("session.json"), "{}").expect("a session file");
    let mut room = json!({"room_id": "!fake:localhost", "answerers": {"users": []}});
    if let Some(start) = start_with_inbox {
        room["start_with_inbox"] = json!(start);
    }
    fs::write(dir.join("room.json"), room.to_string()).expect("a room file");
}

/// A stand-in for `askpane-matrix` running `body` (a shell script's lines after it says it
/// started, with its arguments).
fn stand_in(world: &World, name: &str, body: &str) -> PathBuf {
    let script = world.root.join(name);
    fs::write(&script, format!("#!/bin/sh\necho \"stand-in $$: $*\" >&2\n{body}\n"))
        .expect("write the stand-in");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("make it runnable");
    script
}

/// Starts `askpane inbox <args>` in `world` with `bin` as the bridge's program.
fn start_inbox(world: &mut World, args: &[&str], bin: Option<&Path>) {
    let mut command = world.askpane(args);
    if let Some(bin) = bin {
        command.env("ASKPANE_MATRIX_BIN", bin);
    }
    world.start_inbox_command(command);
}

fn quit_inbox(world: &mut World) {
    let finished = run_bounded(&mut world.askpane(&["inbox", "--quit"]), None);
    assert!(finished.status.success(), "inbox --quit: {}", finished.stderr);
    if let Some(mut inbox) = world.inbox.take() {
        assert!(inbox.wait(WAIT).is_some(), "the inbox did not end");
    }
}

/// Nothing is started when there is nothing to start, and a configured bridge whose program is
/// missing is said once, plainly.
#[test]
fn not_configured_or_disabled_nothing_is_started_and_a_missing_program_is_said() {
    let mut world = World::new("matrix-live-none");
    let stand_in = stand_in(&world, "bridge", "exec sleep 600");
    for (setup, expect_said) in [(None, None), (Some(false), None), (Some(true), Some(()))] {
        if let Some(start) = setup {
            fake_configuration(&world, Some(start));
        }
        // Configured and enabled: the program named is not there.
        let bin = match expect_said {
            Some(()) => world.root.join("no-such-askpane-matrix"),
            None => stand_in.clone(),
        };
        start_inbox(&mut world, &["inbox"], Some(&bin));
        let inbox = world.inbox.as_ref().expect("the inbox").child.id();
        // A round trip: the inbox has gone past where it starts the bridge.
        let mut front = world.connect();
        front.list();
        // Nothing to wait for: a bridge would have been started before the socket served.
        thread::sleep(Duration::from_millis(300));
        let log = inbox_log(&world);
        assert!(children_of(inbox).is_empty(), "{setup:?}: the inbox has children: {log}");
        match expect_said {
            None => assert!(!log.contains("Matrix"), "{setup:?}: said something: {log}"),
            Some(()) => assert!(
                log.contains("the Matrix bridge is configured")
                    && log.contains(
                        "but askpane-matrix was found neither beside askpane nor on PATH"
                    ),
                "{log}"
            ),
        }
        drop(front);
        quit_inbox(&mut world);
    }
}

/// A bridge that keeps dying at once is started again after 1, 2, 4, 8 s, each said, then given
/// up with one line.
#[test]
fn a_bridge_that_keeps_failing_is_started_again_with_backoff_then_given_up() {
    let mut world = World::new("matrix-live-backoff");
    fake_configuration(&world, None);
    let failing = stand_in(&world, "bridge", "exit 1");
    start_inbox(&mut world, &["inbox"], Some(&failing));
    let log = wait_log(&world, Duration::from_secs(60), "gave up", |log| {
        log.contains("the Matrix bridge failed 5 times in a row")
    });
    assert_eq!(started_bridges(&log).len(), 5, "{log}");
    assert_eq!(log.matches("the Matrix bridge ended (exit status 1)").count(), 5, "{log}");
    for wait in [1, 2, 4, 8] {
        assert!(log.contains(&format!("starting the Matrix bridge again in {wait} s")), "{log}");
    }
    assert!(!log.contains("again in 16 s"), "{log}");
}

/// The inbox started lean (`--background`) starts the bridge; when a client wakes it into the
/// full inbox (another program image, the same process) the bridge is handed on, not started
/// twice; `inbox --quit` stops it.
#[test]
fn the_lean_inbox_hands_its_bridge_on_to_the_full_one_which_stops_it_when_it_ends() {
    let mut world = World::new("matrix-live-lean");
    fake_configuration(&world, None);
    let sleeper = stand_in(&world, "bridge", "exec sleep 600");
    start_inbox(&mut world, &["inbox", "--background"], Some(&sleeper));
    let inbox = world.inbox.as_ref().expect("the inbox").child.id();
    let log = wait_log(&world, WAIT, "resumed with the bridge", |log| {
        log.contains("resumed for a client") && !started_bridges(log).is_empty()
    });
    let bridges = started_bridges(&log);
    assert_eq!(bridges.len(), 1, "{log}");
    let bridge = bridges[0];
    assert!(log.contains(&format!("stand-in {bridge}: run --inbox-pid {inbox}")), "{log}");
    // The full inbox answers a client, and the bridge is still the one child.
    world.connect().list();
    assert!(!ended(bridge), "the bridge ended across the exec: {}", inbox_log(&world));
    assert_eq!(children_of(inbox), vec![bridge], "{}", inbox_log(&world));
    assert_eq!(started_bridges(&inbox_log(&world)).len(), 1, "{}", inbox_log(&world));
    quit_inbox(&mut world);
    wait_ended(bridge, WAIT, "the inbox ended");
}

/// An inbox, a homeserver, the bot logged in with a room (before the inbox starts), and alice
/// in it; the inbox started with the real `askpane-matrix` found beside it.
struct Live {
    world: World,
    _homeserver: Homeserver,
    room: String,
    alice: Peer,
    /// A second answerer, for a team room ([`Live::team`]).
    bob: Option<Peer>,
}

impl Live {
    fn start(name: &str) -> Option<Live> {
        Live::start_with(name, false)
    }

    /// alice and bob, both invited and so both allowed to answer.
    fn team(name: &str) -> Option<Live> {
        Live::start_with(name, true)
    }

    fn start_with(name: &str, with_bob: bool) -> Option<Live> {
        let homeserver = Homeserver::start()?;
        let mut world = World::new(name);
        let bot = homeserver.register("askpane", "bot-password", false);
        let alice_account = homeserver.register("alice", "alice-password", false);
        let mut alice = Peer::start(&homeserver, &alice_account);
        let bob_account = with_bob.then(|| homeserver.register("bob", "bob-password", false));
        let mut bob = bob_account.as_ref().map(|account| Peer::start(&homeserver, account));
        let matrix = |args: &[&str]| {
            let mut command = Command::new(member_binary("askpane-matrix"));
            command
                .args(args)
                .env_remove("ASKPANE_STATE_DIR")
                .env_remove("ASKPANE_MATRIX_TOKEN")
                .env("ASKPANE_MATRIX_PASSWORD", "bot-password")
                .env("XDG_RUNTIME_DIR", world.root.join("run"))
                .env("XDG_STATE_HOME", world.root.join("state"));
            run_bounded(&mut command, None)
        };
        let login = matrix(&["login", "--homeserver", &homeserver.url(), "--user", &bot.user_id]);
        assert!(login.status.success(), "login: {}", login.stderr);
        let mut create = vec!["room", "create", "--invite", &alice_account.user_id];
        if let Some(bob) = &bob_account {
            create.extend(["--invite", &bob.user_id]);
        }
        let created = matrix(&create);
        assert!(created.status.success(), "room create: {}", created.stderr);
        let room = created.stdout.trim().to_owned();
        alice.call(json!({"do": "join", "room": room}));
        if let Some(bob) = &mut bob {
            bob.call(json!({"do": "join", "room": room}));
        }
        // No ASKPANE_MATRIX_BIN: the inbox finds askpane-matrix beside itself.
        start_inbox(&mut world, &["inbox"], None);
        let live = Live { world, _homeserver: homeserver, room, alice, bob };
        live.wait_connected(1);
        Some(live)
    }

    /// Waits until the `count`th bridge the inbox started is connected to it; its pid.
    fn wait_connected(&self, count: usize) -> u32 {
        let log = wait_log(&self.world, ROOM_WAIT, "a connected bridge", |log| {
            started_bridges(log).len() >= count
                && log.matches("askpane-matrix: connected to the inbox").count() >= count
        });
        started_bridges(&log)[count - 1]
    }

    /// A hook's ask, answered by alice's vote for option 2; the hook reads the window's answer.
    fn ask_and_vote(&mut self, tool_use_id: &str) {
        let input = hook_input(tool_use_id, layout());
        let hook = self.world.client(&["hook"], &input);
        let room = self.room.clone();
        let message = self.alice.wait_message(&room, "Which layout?");
        let body = message["body"].as_str().unwrap_or_default();
        // Who asked, as the window names it (not the adapter's name, `hook`).
        assert!(body.starts_with("A question from Claude Code (hook) in project"), "{body}");
        let poll = self
            .alice
            .call(json!({"do": "wait_poll", "room": room, "contains": "Which layout?"}))["event"]
            .clone();
        self.alice
            .call(json!({"do": "vote", "room": room, "poll": poll["event_id"], "answers": ["2"]}));
        let (code, stdout, stderr) = hook.finish();
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, window_reply(&self.world, &input, &json!({"Layout": "Split"})));
        self.alice.wait_message(&room, "Sent to Claude Code: Layout = Split");
    }
}

macro_rules! live_or_skip {
    ($name:expr) => {
        match Live::start($name) {
            Some(live) => live,
            None => return,
        }
    };
}

macro_rules! team_or_skip {
    ($name:expr) => {
        match Live::team($name) {
            Some(live) => live,
            None => return,
        }
    };
}

#[test]
fn the_inbox_starts_the_configured_bridge_which_answers_and_stops_it_when_it_ends() {
    let mut live = live_or_skip!("matrix-live-start");
    let bridge = live.wait_connected(1);
    let inbox = live.world.inbox.as_ref().expect("the inbox").child.id();
    assert_eq!(parent_of(bridge), Some(inbox), "{}", inbox_log(&live.world));
    live.ask_and_vote("toolu_live_start");
    // One bridge per state directory: one run by hand beside it is refused, and says why.
    let mut by_hand = Command::new(member_binary("askpane-matrix"));
    by_hand
        .arg("run")
        .env_remove("ASKPANE_STATE_DIR")
        .env("XDG_RUNTIME_DIR", live.world.root.join("run"))
        .env("XDG_STATE_HOME", live.world.root.join("state"));
    let refused = run_bounded(&mut by_hand, None);
    assert_eq!(refused.status.code(), Some(3), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("another `askpane-matrix run` already bridges"),
        "{}",
        refused.stderr
    );
    quit_inbox(&mut live.world);
    wait_ended(bridge, WAIT, "the inbox ended");
    let log = inbox_log(&live.world);
    assert_eq!(started_bridges(&log).len(), 1, "{log}");
    assert!(!log.contains("the Matrix bridge ended"), "a stop is no failure: {log}");
}

#[test]
fn the_bridge_killed_is_started_again_and_the_next_ask_is_still_posted() {
    let mut live = live_or_skip!("matrix-live-restart");
    let first = live.wait_connected(1);
    kill("-KILL", first);
    let second = live.wait_connected(2);
    assert_ne!(first, second);
    let log = inbox_log(&live.world);
    assert!(log.contains("the Matrix bridge ended (signal 9)"), "{log}");
    assert!(log.contains("starting the Matrix bridge again in 1 s"), "{log}");
    live.ask_and_vote("toolu_live_restart");
}

#[test]
fn the_inbox_killed_outright_the_bridge_ends_by_itself() {
    let mut live = live_or_skip!("matrix-live-orphan");
    let bridge = live.wait_connected(1);
    let mut inbox = live.world.inbox.take().expect("the inbox");
    let _ = inbox.child.kill();
    let _ = inbox.child.wait();
    // The bridge looks at its parent every 250 ms.
    wait_ended(bridge, Duration::from_secs(10), "the inbox was killed");
    assert!(
        inbox_log(&live.world)
            .contains("the inbox that started the bridge is gone; the bridge ends"),
        "{}",
        inbox_log(&live.world)
    );
}

/// `disable` keeps the login and the room but the inbox no longer starts the bridge; `enable`
/// brings it back; without a room there is nothing to turn off.
#[test]
fn disable_and_enable_say_whether_the_inbox_starts_the_bridge() {
    use askpane::protocol::matrix_setup::Setup;
    use askpane::transport::matrix_child::setup;
    let state = crate::support::private_state_dir();
    let matrix = |args: &[&str]| {
        let mut command = Command::new(member_binary("askpane-matrix"));
        command.args(args).env("ASKPANE_STATE_DIR", &state);
        run_bounded(&mut command, None)
    };
    let refused = matrix(&["disable"]);
    assert!(!refused.status.success());
    assert!(refused.stderr.contains("no room configured"), "{}", refused.stderr);
    let dir = state.join("matrix");
    fs::write(dir.join("session.json"), "{}").expect("a session file");
    fs::write(dir.join("room.json"), r#"{"room_id": "!r:localhost", "answerers": {"users": []}}"#)
        .expect("a room file");
    assert_eq!(setup(&state), Setup::Configured);
    let disabled = matrix(&["disable"]);
    assert!(disabled.status.success(), "{}", disabled.stderr);
    assert!(
        disabled.stderr.contains("the inbox no longer starts the bridge"),
        "{}",
        disabled.stderr
    );
    assert_eq!(setup(&state), Setup::Disabled);
    let room: serde_json::Value =
        serde_json::from_str(&read_lossy(&dir.join("room.json"))).expect("JSON");
    assert_eq!(room["room_id"], "!r:localhost", "the room is kept: {room}");
    assert!(dir.join("session.json").exists(), "the login is kept");
    let enabled = matrix(&["enable"]);
    assert!(enabled.status.success(), "{}", enabled.stderr);
    assert_eq!(setup(&state), Setup::Configured);
}

/// The edits of event `message` that `peer` has seen.
fn edits_of(peer: &mut Peer, message: &str) -> usize {
    let seen = peer.call(json!({"do": "seen"}))["events"].clone();
    seen.as_array()
        .expect("events")
        .iter()
        .filter(|event| event["type"] == "edit" && event["replaces"] == message)
        .count()
}

/// A team room: alice and bob vote on the same poll at the same moment, for different options.
/// The first vote the bridge takes answers; the other voter is told in the thread that it was
/// already answered, and by whom; the message is edited once.
#[test]
fn two_voters_on_one_poll_at_once_one_answer_and_the_other_is_told_by_whom() {
    let mut live = team_or_skip!("matrix-live-team");
    let input = hook_input("toolu_team", layout());
    let hook = live.world.client(&["hook"], &input);
    let room = live.room.clone();
    let message = live.alice.wait_message(&room, "Which layout?");
    let message_id = message["event_id"].as_str().expect("an id").to_owned();
    let wait_poll = json!({"do": "wait_poll", "room": room, "contains": "Which layout?"});
    let poll = live.alice.call(wait_poll.clone())["event"]["event_id"].clone();
    let mut bob = live.bob.take().expect("bob");
    bob.call(wait_poll);
    let (alice, mut bob) = thread::scope(|scope| {
        let alice = &mut live.alice;
        let alice_votes = json!({"do": "vote", "room": room, "poll": poll, "answers": ["1"]});
        let by_alice = scope.spawn(move || {
            alice.call(alice_votes);
            alice
        });
        bob.call(json!({"do": "vote", "room": room, "poll": poll, "answers": ["2"]}));
        (by_alice.join().expect("alice voted"), bob)
    });
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let tabs = window_reply(&live.world, &input, &json!({"Layout": "Tabs"}));
    let split = window_reply(&live.world, &input, &json!({"Layout": "Split"}));
    let (winner, loser, said) = match stdout == tabs {
        true => ("alice", &mut bob, "Tabs"),
        false => {
            assert_eq!(stdout, split, "one of the two votes, whole");
            ("bob", &mut *alice, "Split")
        }
    };
    let refusal = format!(
        "Not sent: this ask has already ended. Answered by @{winner}:localhost: Layout = {said}"
    );
    let told = loser.wait_message(&room, &refusal);
    assert_eq!(told["thread"], message_id.as_str(), "told in the ask's thread: {told}");
    alice.call(json!({"do": "wait_poll_end", "room": room, "poll": poll}));
    assert_eq!(edits_of(alice, &message_id), 1, "the message is edited once");
    let seen = alice.call(json!({"do": "seen"}))["events"].to_string();
    assert_eq!(seen.matches("Sent to Claude Code").count(), 1, "{seen}");
}

/// Votes are counted once: a member's changed vote (MSC3381 allows a new response) is refused
/// and the first stands, as is another member's later vote on the same question; the ask is
/// answered with the first votes of each question.
#[test]
fn a_vote_counted_stands_a_change_or_a_later_vote_on_that_question_is_refused() {
    let mut live = team_or_skip!("matrix-live-change");
    let questions = json!([layout()[0], {"question": "Which theme?", "header": "Theme",
        "multiSelect": false, "options": [{"label": "Light", "description": ""},
                                          {"label": "Dark", "description": ""}]}]);
    let input = hook_input("toolu_change", questions);
    let hook = live.world.client(&["hook"], &input);
    let room = live.room.clone();
    let seen =
        live.alice.try_call(json!({"do": "wait_poll", "room": room, "contains": "Which layout?"}));
    assert_eq!(seen["ok"], true, "{seen}\n{}", inbox_log(&live.world));
    let layout_poll = seen["event"]["event_id"].clone();
    let theme_poll = live
        .alice
        .call(json!({"do": "wait_poll", "room": room, "contains": "Which theme?"}))["event"]
        ["event_id"]
        .clone();
    let vote = |peer: &mut Peer, poll: &serde_json::Value, answer: &str| {
        peer.call(json!({"do": "vote", "room": room, "poll": poll, "answers": [answer]}));
    };
    vote(&mut live.alice, &layout_poll, "1");
    vote(&mut live.alice, &layout_poll, "2");
    live.alice.wait_message(&room, "Not counted: your first vote stands (Layout = Tabs)");
    let mut bob = live.bob.take().expect("bob");
    bob.call(json!({"do": "wait_poll", "room": room, "contains": "Which theme?"}));
    vote(&mut bob, &layout_poll, "2");
    bob.wait_message(&room, "Not counted: @alice:localhost voted first (Layout = Tabs)");
    vote(&mut bob, &theme_poll, "2");
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let expected = json!({"Layout": "Tabs", "Theme": "Dark"});
    assert_eq!(stdout, window_reply(&live.world, &input, &expected));
    bob.wait_message(&room, "Sent to Claude Code: Layout = Tabs; Theme = Dark");
}
