//! Issue 31 end to end: a real Synapse (tests/support/synapse.rs), the real inbox and hook, the
//! bridge, and a second Matrix client (askpane-matrix-peer, the same SDK) that reads the
//! encrypted room and answers in it.

use std::fs;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::member_binary;
use super::peer::{Bridged, Peer, ROOM_WAIT, answer_at_the_desk, bridge_command, bridged_or_skip};
use crate::inbox::{Client, World};
use crate::support::synapse::Homeserver;
use crate::support::{WAIT, read_lossy, run_bounded};

/// A PreToolUse hook input for AskUserQuestion with `questions`.
pub(super) fn hook_input(tool_use_id: &str, questions: Value) -> String {
    json!({
        "session_id": "5e55-10n", "cwd": "/home/dev/project", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
        "tool_use_id": tool_use_id, "tool_input": {"questions": questions}
    })
    .to_string()
}

pub(super) fn layout() -> Value {
    json!([{"question": "Which layout?", "header": "Layout", "multiSelect": false,
            "options": [{"label": "Tabs", "description": "one pane", "preview": "[a|b|c]"},
                        {"label": "Split", "description": "two panes"}]}])
}

/// Alice votes "Split" on the layout poll once it is in the room; the hook must then print what
/// the window sends for that answer. The poll, for more checks.
fn vote_split(bridged: &mut Bridged, room: &str, hook: Client, input: &str) -> Value {
    let poll = bridged
        .alice
        .call(json!({"do": "wait_poll", "room": room, "contains": "Which layout?"}))["event"]
        .clone();
    bridged
        .alice
        .call(json!({"do": "vote", "room": room, "poll": poll["event_id"], "answers": ["2"]}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, window_reply(&bridged.world, input, &json!({"Layout": "Split"})));
    poll
}

/// What the hook prints when the window sends `answers` (a preset confirmed with --submit).
pub(super) fn window_reply(world: &World, input: &str, answers: &Value) -> String {
    let file = world.answers("window.json", answers);
    world
        .client(
            &["hook", "--answers", file.to_str().expect("UTF-8"), "--submit", "--no-inbox"],
            input,
        )
        .finish()
        .1
}

#[test]
fn a_single_select_answered_by_poll_reaches_the_hook_as_the_window_s_answer() {
    let mut bridged = bridged_or_skip!("matrix-poll");
    let input = hook_input("toolu_poll", layout());
    let hook = bridged.world.client(&["hook"], &input);
    let room = bridged.room.clone();
    let message = bridged.alice.wait_message(&room, "Which layout?");
    let body = message["body"].as_str().expect("a body");
    assert!(body.contains("A question from Claude Code (hook) in project"), "{body}");
    assert!(body.contains("1. Tabs — one pane") && body.contains("```\n[a|b|c]\n```"), "{body}");
    let poll = vote_split(&mut bridged, &room, hook, &input);
    assert_eq!(poll["max_selections"], 1, "{poll}");
    bridged.alice.wait_message(&room, "Sent to Claude Code: Layout = Split");
    let message_id = message["event_id"].as_str().expect("an id").to_owned();
    bridged.alice.call(json!({"do": "wait_edit", "room": room, "event": message_id, "contains": "Answered by @alice:"}));
    bridged.alice.call(json!({"do": "wait_poll_end", "room": room, "poll": poll["event_id"]}));
}

#[test]
fn a_multi_select_by_poll_and_other_with_a_note_by_thread_reply() {
    let mut bridged = bridged_or_skip!("matrix-multi");
    let room = bridged.room.clone();
    let questions = json!([{"question": "Which checks?", "header": "Checks", "multiSelect": true,
        "options": [{"label": "fmt", "description": ""}, {"label": "clippy", "description": ""},
                    {"label": "tests", "description": ""}]}]);
    let input = hook_input("toolu_multi", questions);
    let hook = bridged.world.client(&["hook"], &input);
    let poll = bridged
        .alice
        .call(json!({"do": "wait_poll", "room": room, "contains": "Which checks?"}))["event"]
        .clone();
    assert_eq!(poll["max_selections"], 3, "{poll}");
    bridged
        .alice
        .call(json!({"do": "vote", "room": room, "poll": poll["event_id"], "answers": ["1", "3"]}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, window_reply(&bridged.world, &input, &json!({"Checks": ["fmt", "tests"]})));

    let input = hook_input("toolu_other", layout());
    let hook = bridged.world.client(&["hook"], &input);
    let message = bridged.alice.wait_message(&room, "Which layout?");
    let root = message["event_id"].clone();
    bridged
        .alice
        .call(json!({"do": "reply_in_thread", "room": room, "event": root, "text": "tabs please"}));
    bridged.alice.wait_message(&room, "Not sent: not understood: \"tabs please\"");
    bridged.alice.call(json!({"do": "reply_in_thread", "room": room, "event": root,
                              "text": "other: a grid\nnote: like the old one"}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("a grid") && stdout.contains("like the old one"), "{stdout}");
    bridged
        .alice
        .wait_message(&room, "Sent to Claude Code: Layout = a grid (note: like the old one)");
}

#[test]
fn a_decline_an_approval_allowed_and_one_denied() {
    let mut bridged = bridged_or_skip!("matrix-decide");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_decline", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    bridged.alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                              "text": "decline: not now, ask Bob"}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("not now, ask Bob"), "{stdout}");

    let approval = |command: &str| {
        let capture = fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/hook.permissionrequest.bash.stdin.2.1.332.json"),
        )
        .expect("the captured PermissionRequest");
        let mut message: Value = serde_json::from_str(&capture).expect("JSON");
        message["tool_name"] = json!("Bash");
        message["tool_input"] = json!({"command": command});
        message.to_string()
    };
    for (command, reply, behavior) in
        [("touch allowed", "allow", "allow"), ("rm -rf build", "deny: use make clean", "deny")]
    {
        let hook = bridged.world.client(&["hook"], &approval(command));
        let message = bridged.alice.wait_message(&room, command);
        bridged.alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": reply}));
        let (code, stdout, stderr) = hook.finish();
        assert_eq!(code, Some(0), "{stderr}");
        let decision: Value = serde_json::from_str(stdout.trim()).expect("JSON");
        assert_eq!(decision["hookSpecificOutput"]["decision"]["behavior"], behavior, "{stdout}");
        if behavior == "deny" {
            assert!(stdout.contains("use make clean"), "{stdout}");
        }
    }
}

#[test]
fn clarify_in_the_thread_is_the_window_s_chat_about_this() {
    let mut bridged = bridged_or_skip!("matrix-clarify");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_clarify", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    bridged.alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                              "text": "Clarify"}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // The terminal dialog's own clarify feedback, as the window's "Chat about this" sends it
    // with nothing picked (tests/front_end.rs checks the socket verb against the window's).
    assert!(stdout.contains("The user wants to clarify these questions."), "{stdout}");
    assert!(stdout.contains("- \\\"Which layout?\\\"\\n  (No answer provided)"), "{stdout}");
    bridged.alice.wait_message(&room, "Sent to Claude Code: chat about this");
    // History records the clarify as alice's, through the socket (bounded: it may lag).
    let deadline = Instant::now() + WAIT;
    loop {
        let mut history = bridged.world.askpane(&["history", "--json"]);
        let listed = crate::support::run_bounded(&mut history, None).stdout;
        let entry = listed
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|entry| entry["header"] == "Layout");
        if let Some(entry) = entry {
            assert_eq!(entry["outcome"], "clarify", "{entry}");
            let by = entry["answered_by"].as_str().unwrap_or_default();
            assert!(by.starts_with("socket:@alice:"), "{entry}");
            break;
        }
        assert!(Instant::now() < deadline, "history never recorded the clarify: {listed}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_ambiguous_reply_is_refused_saying_why_and_changes_nothing() {
    let mut bridged = bridged_or_skip!("matrix-ambiguous");
    let room = bridged.room.clone();
    let options = |a: &str, b: &str| json!([{"label": a, "description": ""}, {"label": b, "description": ""}]);
    let questions = json!([
        {"question": "Which layout?", "header": "Layout", "multiSelect": false,
         "options": options("Tabs", "Split")},
        {"question": "Which theme?", "header": "Theme", "multiSelect": false,
         "options": options("Light", "Dark")}]);
    let input = hook_input("toolu_ambiguous", questions);
    let hook = bridged.world.client(&["hook"], &input);
    let message = bridged.alice.wait_message(&room, "Which theme?");
    let root = message["event_id"].clone();
    // Which question a bare `2` answers cannot be told: refused, saying why; so is one question
    // answered twice. Nothing goes to the agent.
    bridged.alice.call(json!({"do": "reply_in_thread", "room": room, "event": root, "text": "2"}));
    bridged.alice.wait_message(&room, "Not sent: ambiguous: this ask has 2 questions");
    bridged
        .alice
        .call(json!({"do": "reply_in_thread", "room": room, "event": root, "text": "1: 1\n1: 2"}));
    bridged.alice.wait_message(&room, "Not sent: ambiguous: question 1 is answered twice");
    // Still open: a reply naming each question answers both.
    bridged
        .alice
        .call(json!({"do": "reply_in_thread", "room": room, "event": root, "text": "1: 2\n2: 1"}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let answers = json!({"Layout": "Split", "Theme": "Light"});
    assert_eq!(stdout, window_reply(&bridged.world, &input, &answers));
}

#[test]
fn a_member_who_may_not_answer_changes_nothing() {
    let mut bridged = bridged_or_skip!("matrix-stranger");
    let room = bridged.room.clone();
    let mallory_account = bridged.homeserver.register("mallory", "mallory-password", false);
    // Alice (who may answer) invites mallory into the room: a member, not an answerer.
    let mut mallory = Peer::start(&bridged.homeserver, &mallory_account);
    let invite = bridged
        .alice
        .try_call(json!({"do": "invite", "room": room, "user": mallory_account.user_id}));
    if invite["ok"] != true {
        // The peer has no invite verb: the bot's room then has only alice; nothing to test.
        panic!("the peer cannot invite: {invite}");
    }
    mallory.call(json!({"do": "join", "room": room}));
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_stranger", layout()));
    let message = mallory.wait_message(&room, "Which layout?");
    mallory.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "1"}),
    );
    mallory.wait_message(&room, "may not answer here: nothing was sent");
    // Still open: alice answers it.
    bridged.alice.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "2"}),
    );
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Split"), "{stdout}");
}

#[test]
fn an_ask_answered_in_the_inbox_first_edits_the_room_message_and_a_late_room_answer_is_refused() {
    let mut bridged = bridged_or_skip!("matrix-elsewhere");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_elsewhere", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    let mut front = bridged.world.connect();
    let asks = front.list();
    assert!(answer_at_the_desk(&mut front, asks.first().expect("the ask")));
    let (_, stdout, _) = hook.finish();
    assert!(stdout.contains("Tabs"), "{stdout}");
    bridged.alice.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"], "contains": "Answered by @desk."}));
    bridged.alice.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "2"}),
    );
    bridged.alice.wait_message(&room, "Not sent: this ask has already ended. Answered by @desk.");
}

#[test]
fn an_unencrypted_room_is_refused_unless_allowed() {
    let Some(homeserver) = Homeserver::start() else { return };
    let world = World::new("matrix-unencrypted");
    let bot = homeserver.register("askpane", "bot-password", false);
    let alice_account = homeserver.register("alice", "alice-password", false);
    let mut alice = Peer::start(&homeserver, &alice_account);
    let room = alice
        .call(json!({"do": "create_room", "invite": [bot.user_id], "encrypted": false}))["room"]
        .as_str()
        .expect("a room")
        .to_owned();
    let bridge = |args: &[&str]| {
        let mut command = Command::new(member_binary("askpane-matrix"));
        command
            .args(args)
            .env_remove("ASKPANE_STATE_DIR")
            .env("ASKPANE_MATRIX_PASSWORD", "bot-password")
            .env("XDG_RUNTIME_DIR", world.root.join("run"))
            .env("XDG_STATE_HOME", world.root.join("state"));
        run_bounded(&mut command, None)
    };
    let url = homeserver.url();
    let name = "askpane on devbox";
    let login = ["login", "--homeserver", &url, "--user", &bot.user_id, "--device-name", name];
    let login = bridge(&login);
    assert!(login.status.success(), "{}", login.stderr);
    // The session, keys and the SDK's stores are the user's alone (matrix.md, step 3).
    let mut private = vec![world.root.join("state/askpane/matrix")];
    let mut files = Vec::new();
    while let Some(path) = private.pop() {
        let meta = fs::metadata(&path).expect("a file of the bridge's");
        let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777;
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "{} is {mode:o}", path.display());
            private
                .extend(fs::read_dir(&path).expect("a folder").map(|e| e.expect("entry").path()));
        } else {
            assert_eq!(mode & 0o077, 0, "{} is {mode:o}", path.display());
            files.push(path);
        }
    }
    assert!(files.iter().any(|file| file.ends_with("session.json")), "{files:?}");
    assert!(
        files.iter().any(|file| file.starts_with(world.root.join("state/askpane/matrix/store"))),
        "the SDK's stores: {files:?}"
    );
    let refused = bridge(&["room", "use", &room, "--answerer", &alice_account.user_id]);
    assert!(!refused.status.success());
    assert!(refused.stderr.contains("is not encrypted"), "{}", refused.stderr);
    assert!(!world.root.join("state/askpane/matrix/room.json").exists());
    let allowed = bridge(&[
        "room",
        "use",
        &room,
        "--answerer",
        &alice_account.user_id,
        "--allow-unencrypted",
    ]);
    assert!(allowed.status.success(), "{}", allowed.stderr);
    // `run` checks again: the room is bridged only while room.json marks it allowed.
    let config = world.root.join("state/askpane/matrix/room.json");
    let mut marked: Value =
        serde_json::from_str(&fs::read_to_string(&config).expect("room.json")).expect("JSON");
    assert_eq!(marked["allow_unencrypted"], true, "{marked}");
    marked["allow_unencrypted"] = json!(false);
    fs::write(&config, marked.to_string()).expect("room.json");
    let run = bridge(&["run"]);
    assert!(!run.status.success());
    assert!(run.stderr.contains("is not encrypted"), "{}", run.stderr);
    let session = fs::read_to_string(world.root.join("state/askpane/matrix/session.json"))
        .expect("session.json");
    let session: Value = serde_json::from_str(&session).expect("JSON");
    let token = session["session"]["access_token"].as_str().expect("the session's token");
    assert_eq!(homeserver.get("/_matrix/client/v3/account/whoami", Some(token)).0, 200);
    // The new device is named as `--device-name` said, as other members see it.
    let (_, devices) = homeserver.get("/_matrix/client/v3/devices", Some(token));
    let device = &session["session"]["device_id"];
    let named =
        devices["devices"].as_array().into_iter().flatten().find(|d| &d["device_id"] == device);
    assert_eq!(named.map(|d| d["display_name"].clone()), Some(json!(name)), "{devices}");
    let logout = bridge(&["logout"]);
    assert!(logout.status.success(), "{}", logout.stderr);
    // Ended on the homeserver too: the token no longer works.
    let (status, said) = homeserver.get("/_matrix/client/v3/account/whoami", Some(token));
    assert_eq!(status, 401, "the token still works after logout: {said}");
    assert!(!world.root.join("state/askpane/matrix/session.json").exists());
    assert!(!world.root.join("state/askpane/matrix/store").exists());
}

/// `login --token-file` (issue 31: "password or access token from a file"): another user's
/// token, or one the homeserver does not know, is refused and keeps no session; the bot's own
/// logs in, and the session it keeps makes a room.
#[test]
fn login_with_an_access_token_from_a_file_and_a_wrong_one_refused() {
    let Some(homeserver) = Homeserver::start() else { return };
    let world = World::new("matrix-token");
    let bot = homeserver.register("askpane", "bot-password", false);
    let alice = homeserver.register("alice", "alice-password", false);
    let token_file = world.root.join("token");
    let bridge = |args: &[&str]| run_bounded(&mut bridge_command(&world, args), None);
    let file = token_file.to_str().expect("UTF-8");
    let url = homeserver.url();
    let login = ["login", "--homeserver", &url, "--user", &bot.user_id, "--token-file", file];
    let session = world.root.join("state/askpane/matrix/session.json");
    for (token, said) in [
        (
            alice.access_token.clone(),
            format!("the token is {}'s, not {}'s", alice.user_id, bot.user_id),
        ),
        ("syt_no_such_token".to_owned(), "does not know this access token".to_owned()),
    ] {
        fs::write(&token_file, format!("{token}\n")).expect("the token file");
        let refused = bridge(&login);
        assert!(!refused.status.success(), "{token}");
        assert!(refused.stderr.contains(&said), "{}", refused.stderr);
        assert!(!session.exists(), "no session kept after a refused token");
    }
    fs::write(&token_file, homeserver.login("askpane", "bot-password")).expect("the token file");
    let logged_in = bridge(&login);
    assert!(logged_in.status.success(), "{}", logged_in.stderr);
    let created = bridge(&["room", "create", "--invite", &alice.user_id]);
    assert!(created.status.success(), "{}", created.stderr);
    assert!(created.stdout.trim().starts_with('!'), "{}", created.stdout);
}

#[test]
fn the_bridge_restarted_mid_ask_posts_nothing_twice_and_still_answers() {
    let mut bridged = bridged_or_skip!("matrix-restart");
    let room = bridged.room.clone();
    let input = hook_input("toolu_restart", layout());
    let hook = bridged.world.client(&["hook"], &input);
    let message = bridged.alice.wait_message(&room, "Which layout?");
    bridged.stop_bridge();
    bridged.run_bridge();
    bridged.alice.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "1"}),
    );
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, window_reply(&bridged.world, &input, &json!({"Layout": "Tabs"})));
    bridged.alice.wait_message(&room, "Sent to Claude Code: Layout = Tabs");
    let seen = bridged.alice.call(json!({"do": "seen"}))["events"].clone();
    let posted = seen
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| {
            event["type"] == "message"
                && event["body"].as_str().is_some_and(|body| body.contains("Which layout?"))
        })
        .count();
    assert_eq!(posted, 1, "the ask was posted {posted} times: {seen}");
}

#[test]
fn two_answers_racing_room_and_socket_exactly_one_wins() {
    let mut bridged = bridged_or_skip!("matrix-race");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_race", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    let mut front = bridged.world.connect();
    let asks = front.list();
    let ask = asks.first().expect("the ask").clone();
    bridged.alice.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "2"}),
    );
    let socket_won = answer_at_the_desk(&mut front, &ask);
    let (_, stdout, _) = hook.finish();
    if socket_won {
        assert!(stdout.contains("Tabs"), "{stdout}");
        // The inbox's verdict (the room's answer reached it second), or the bridge's own word
        // (the ask's `settled` reached the bridge before the reply did): either way, not sent.
        let refusal = bridged.alice.wait_message(&room, "Not sent: ");
        let body = refusal["body"].as_str().unwrap_or_default();
        assert!(
            body.contains("already answered by socket:@desk")
                || body.contains("already ended. Answered by @desk."),
            "{body}"
        );
    } else {
        assert!(stdout.contains("Split"), "{stdout}");
        bridged.alice.wait_message(&room, "Sent to Claude Code: Layout = Split");
    }
}

/// Issue 31: "two answers racing (room and window): exactly one wins, the other sees who
/// answered". alice's thread reply and the window's keys are sent at once; the hook reads the
/// winner's answer alone, and when the window won the room is told so.
#[test]
fn two_answers_racing_room_and_window_exactly_one_wins() {
    let mut bridged = bridged_or_skip!("matrix-race-window");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_race_window", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    let xvfb = &bridged.world.xvfb;
    let window = crate::inbox::wait_for_window(xvfb, "1 question", true).expect("the window");
    xvfb.focus(window);
    let alice = &mut bridged.alice;
    std::thread::scope(|scope| {
        scope.spawn(|| xvfb.keys(window, &["1", "ctrl+Return"]));
        alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                          "text": "2"}));
    });
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(&stdout).expect("the hook's JSON");
    let answer = reply["hookSpecificOutput"]["updatedInput"]["answers"]["Which layout?"].clone();
    let window_won = answer == "Tabs";
    assert!(window_won || answer == "Split", "one answer: {stdout}");
    if window_won {
        // The inbox's verdict (the room's answer reached it second), or the bridge's own word
        // (the ask's `settled` reached the bridge first): either way not sent, and by whom.
        let refusal = bridged.alice.wait_message(&room, "Not sent: ");
        let body = refusal["body"].as_str().unwrap_or_default();
        assert!(body.contains("window"), "{body}");
        bridged.alice.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"],
                                  "contains": "Answered in the window."}));
    } else {
        bridged.alice.wait_message(&room, "Sent to Claude Code: Layout = Split");
    }
    let seen = bridged.alice.call(json!({"do": "seen"}))["events"].to_string();
    assert!(
        !(seen.contains("Sent to Claude Code") && window_won),
        "the room was told its answer was sent, but the window's won: {seen}"
    );
}

/// The figures of issue 31 (docs/src/performance.md): ask reaches the inbox → room message
/// seen by the peer, and the peer's vote sent → hook's reply, beside Synapse's own round trip.
#[test]
fn figures_ask_to_room_and_room_to_agent_beside_the_homeserver_s_round_trip() {
    let mut bridged = bridged_or_skip!("matrix-figures");
    let room = bridged.room.clone();
    let token = bridged.homeserver.login(&bridged.alice_account.user, "alice-password");
    let round_trip = bridged.homeserver.round_trip(&token, 20);
    let (mut to_room, mut to_agent, mut vote_sent) = (Vec::new(), Vec::new(), Vec::new());
    for sample in 0..5 {
        let question = format!("Figure {sample}?");
        let questions = json!([{"question": question, "header": "Figure", "multiSelect": false,
            "options": [{"label": "A", "description": ""}, {"label": "B", "description": ""}]}]);
        let asked = Instant::now();
        let hook =
            bridged.world.client(&["hook"], &hook_input(&format!("toolu_fig{sample}"), questions));
        let poll = bridged
            .alice
            .call(json!({"do": "wait_poll", "room": room, "contains": question}))["event"]
            .clone();
        to_room.push(asked.elapsed());
        let voted = Instant::now();
        bridged
            .alice
            .call(json!({"do": "vote", "room": room, "poll": poll["event_id"], "answers": ["1"]}));
        vote_sent.push(voted.elapsed());
        let (code, _, stderr) = hook.finish();
        assert_eq!(code, Some(0), "{stderr}");
        to_agent.push(voted.elapsed());
    }
    to_room.sort();
    to_agent.sort();
    vote_sent.sort();
    eprintln!(
        "matrix figures: hook started → poll seen by the peer median {:?} (of {:?}); vote sent → hook's reply median {:?} (of {:?}), of which the peer's own send of its vote (encrypted, until the homeserver took it) median {:?} (of {:?}); Synapse's whoami round trip median {:?}",
        to_room[2], to_room, to_agent[2], to_agent, vote_sent[2], vote_sent, round_trip
    );
}

#[test]
fn synapse_restarted_mid_ask_the_answer_still_arrives() {
    let mut bridged = bridged_or_skip!("matrix-synapse-restart");
    let room = bridged.room.clone();
    let input = hook_input("toolu_synapse_restart", layout());
    let hook = bridged.world.client(&["hook"], &input);
    let message = bridged.alice.wait_message(&room, "Which layout?");
    bridged.homeserver.restart();
    // Both clients' syncs fail while it is away and go on once it is back.
    bridged.alice.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "2"}),
    );
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, window_reply(&bridged.world, &input, &json!({"Layout": "Split"})));
    bridged.alice.wait_message(&room, "Sent to Claude Code: Layout = Split");
}

/// The homeserver away when an ask comes: the bridge cannot post it, and posts it once the
/// homeserver is back (before, the ask was dropped after one try: never in the room, so nobody
/// there could answer it); a vote then answers the hook as ever.
#[test]
fn an_ask_that_came_while_the_homeserver_was_away_is_posted_when_it_is_back() {
    let mut bridged = bridged_or_skip!("matrix-homeserver-away");
    let room = bridged.room.clone();
    bridged.homeserver.stop();
    let input = hook_input("toolu_homeserver_away", layout());
    let hook = bridged.world.client(&["hook"], &input);
    let deadline = Instant::now() + ROOM_WAIT;
    while !read_lossy(&bridged.bridge_log()).contains("cannot post Layout") {
        assert!(
            Instant::now() < deadline,
            "the bridge never tried: {}",
            read_lossy(&bridged.bridge_log())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    bridged.homeserver.restart();
    vote_split(&mut bridged, &room, hook, &input);
    assert!(read_lossy(&bridged.bridge_log()).contains("posted Layout now"));
}

#[test]
fn an_answer_while_the_inbox_is_away_is_not_taken_as_given() {
    let mut bridged = bridged_or_skip!("matrix-inbox-away");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_inbox_away", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    // The inbox ends (killed: no goodbye); its hook answers on its own, as it does then.
    let mut inbox = bridged.world.inbox.take().expect("the inbox");
    let _ = inbox.child.kill();
    let _ = inbox.child.wait();
    bridged.wait_log("the inbox is away");
    bridged.alice.call(
        json!({"do": "reply_in_thread", "room": room, "event": message["event_id"], "text": "1"}),
    );
    // The hook may start a new inbox of its own meanwhile (a client starts one when none runs),
    // so the bridge says either that the inbox is away or that this ask ended with it; never
    // that it sent the answer.
    let refusal = bridged.alice.wait_message(&room, " sent");
    let body = refusal["body"].as_str().unwrap_or_default().to_owned();
    assert!(
        body.contains("The inbox cannot be reached") || body.contains("this ask has already ended"),
        "{body}"
    );
    let (_, stdout) = hook.killed_with_output();
    assert!(!stdout.contains("Tabs"), "the room's answer must not reach the agent: {stdout}");
    let seen = bridged.alice.call(json!({"do": "seen"}))["events"].to_string();
    assert!(!seen.contains("Sent to Claude Code"), "{seen}");
}

/// Issue 31: an ask that ends elsewhere without an answer, withdrawn (the hook killed, as Claude
/// Code gives up on it) or timed out, has its room message edited to say so and its poll ended;
/// a vote after that is refused with how it ended.
#[test]
fn an_ask_withdrawn_or_timed_out_is_edited_to_say_so_and_its_poll_ended() {
    let mut bridged = bridged_or_skip!("matrix-ended");
    let room = bridged.room.clone();
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_withdrawn", layout()));
    let message = bridged.alice.wait_message(&room, "Which layout?");
    let poll = bridged
        .alice
        .call(json!({"do": "wait_poll", "room": room, "contains": "Which layout?"}))["event"]
        .clone();
    hook.kill();
    bridged.alice.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"],
                              "contains": "Withdrawn by the agent."}));
    bridged.alice.call(json!({"do": "wait_poll_end", "room": room, "poll": poll["event_id"]}));

    let sizes = json!([{"question": "Which size?", "header": "Size", "multiSelect": false,
        "options": [{"label": "S", "description": ""}, {"label": "M", "description": ""}]}]);
    let hook =
        bridged.world.client(&["hook", "--timeout", "2"], &hook_input("toolu_timed_out", sizes));
    let message = bridged.alice.wait_message(&room, "Which size?");
    // The deadline the hook's --timeout set is in the message (issue 31: "the deadline").
    let body = message["body"].as_str().unwrap_or_default();
    assert!(body.contains("Answer by "), "{body}");
    let poll = bridged
        .alice
        .call(json!({"do": "wait_poll", "room": room, "contains": "Which size?"}))["event"]
        .clone();
    let _ = hook.finish();
    bridged.alice.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"],
                              "contains": "Timed out."}));
    bridged.alice.call(json!({"do": "wait_poll_end", "room": room, "poll": poll["event_id"]}));
    bridged
        .alice
        .call(json!({"do": "vote", "room": room, "poll": poll["event_id"], "answers": ["1"]}));
    bridged.alice.wait_message(&room, "Not sent: this ask has already ended. Timed out.");
}
