//! Issue 31: the inbox's socket as a front end's (a bridge's) way in, over the real socket of a
//! real inbox: `list` with each ask's full content; `answer` and `decline` by the page's rules
//! (first answer wins, an ended ask refuses, a link may not answer, hostile lines change nothing).

use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::inbox::{Client, Connection, World};
use crate::support::WAIT;

/// A PreToolUse hook input whose question has a preview on one option.
fn question_with_preview(tool_use_id: &str) -> String {
    json!({
        "session_id": "5e55-10n", "cwd": "/home/dev/project", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
        "tool_use_id": tool_use_id,
        "tool_input": {"questions": [{
            "question": "Which layout?", "header": "Layout", "multiSelect": false,
            "options": [{"label": "Tabs", "description": "one pane", "preview": "[a|b|c]"},
                        {"label": "Split", "description": "two panes"}]
        }]}
    })
    .to_string()
}

/// A PermissionRequest hook input (Claude Code 2.1.332's, as captured) for `tool` and `input`.
fn approval(tool: &str, input: Value) -> String {
    let capture = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hook.permissionrequest.bash.stdin.2.1.332.json"),
    )
    .expect("the captured PermissionRequest");
    let mut message: Value = serde_json::from_str(&capture).expect("JSON");
    message["tool_name"] = json!(tool);
    message["tool_input"] = input;
    message.to_string()
}

/// `list` (with `full` or not) once it holds `count` asks, sorted by title.
fn listed(connection: &mut Connection, full: bool, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        connection.send(&json!({"type": "list", "full": full}).to_string());
        let list = connection.receive_kind("list");
        let mut requests = list["requests"].as_array().cloned().unwrap_or_default();
        if requests.len() >= count || Instant::now() > deadline {
            requests.sort_by_key(|request| request["title"].as_str().map(str::to_owned));
            return requests;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn list_full_shows_each_ask_s_questions_tool_input_and_plan() {
    let world = World::with_inbox("front-list-full");
    let clients: Vec<Client> = vec![
        world.client(&["hook"], &question_with_preview("toolu_layout")),
        world.client(&["hook"], &approval("Bash", json!({"command": "touch marker"}))),
        world.client(
            &["hook"],
            &approval("ExitPlanMode", json!({"plan": "# Plan\n\n1. Build the verbs"})),
        ),
    ];
    let mut front = world.connect();
    let full = listed(&mut front, true, 3);
    assert_eq!(full.len(), 3, "{full:?}");
    let by_title = |title: &str| {
        full.iter()
            .find(|request| request["title"] == title)
            .unwrap_or_else(|| panic!("no ask titled {title}: {full:?}"))
            .clone()
    };
    let question = by_title("Layout");
    assert_eq!(question["kind"], "question");
    let content = &question["content"];
    assert_eq!(content["kind"], "question", "{question}");
    assert_eq!(content["questions"][0]["question"], "Which layout?");
    assert_eq!(content["questions"][0]["options"][0]["preview"], "[a|b|c]");
    assert_eq!(content["questions"][0]["options"][1]["label"], "Split");
    let bash = by_title("Bash");
    assert_eq!(bash["content"]["kind"], "approval", "{bash}");
    assert_eq!(bash["content"]["tool_name"], "Bash");
    assert_eq!(bash["content"]["input"]["command"], "touch marker");
    assert_eq!(bash["content"]["suggestions"][1]["mode"], "acceptEdits", "{bash}");
    let plan = by_title("ExitPlanMode");
    assert_eq!(plan["content"]["plan"], "# Plan\n\n1. Build the verbs", "{plan}");

    // A plain `list` (and a subscriber's `asked`) stays small: no content.
    let plain = listed(&mut front, false, 3);
    assert_eq!(plain.len(), 3);
    assert!(plain.iter().all(|request| request.get("content").is_none()), "{plain:?}");

    // A link's connection sees none of this machine's asks, full or not.
    let mut linked = world.connect();
    linked.send(r#"{"type":"via_link","host":"devbox"}"#);
    linked.receive_kind("linked");
    linked.send(r#"{"type":"list","full":true}"#);
    assert_eq!(linked.receive_kind("list")["requests"], json!([]));
    for client in clients {
        client.kill();
    }
}

/// The one open question's connection and id, once it waits.
fn open_question(front: &mut Connection) -> (u64, String) {
    let asks = listed(front, false, 1);
    let ask = asks.first().unwrap_or_else(|| panic!("no question waits: {asks:?}"));
    (
        ask["connection"].as_u64().expect("a connection"),
        ask["id"].as_str().expect("an id").to_owned(),
    )
}

fn answer_line(connection: u64, id: &str, by: &str) -> String {
    json!({"type": "answer", "connection": connection, "id": id,
           "answers": {"0": "1"}, "answered_by": by})
    .to_string()
}

#[test]
fn a_socket_answer_reaches_the_hook_exactly_as_the_window_s_would() {
    let world = World::with_inbox("front-answer");
    let input = question_with_preview("toolu_layout");
    let hook = world.client(&["hook"], &input);
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    front.send(&answer_line(connection, &id, "@alice:example.org"));
    let verdict = front.receive_kind("verdict");
    assert_eq!(
        verdict,
        json!({"type": "verdict", "connection": connection, "id": id, "accepted": true})
    );
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // History says who answered, and where: no client can pose as the window.
    let entry = history_entry(&world, "Layout");
    assert_eq!(entry["answered_by"], "socket:@alice:example.org", "{entry}");
    assert_eq!(entry["answer"], "Tabs", "{entry}");
    // The same answer as the window sends it for a preset the user confirms.
    let answers = world.answers("tabs.json", &json!({"Layout": "Tabs"}));
    let own = world
        .client(
            &["hook", "--answers", answers.to_str().expect("UTF-8"), "--submit", "--no-inbox"],
            &input,
        )
        .finish();
    assert_eq!(stdout, own.1, "the socket's answer differs from the window's");
    assert_eq!(crate::inbox::hook_answers(&stdout)["Which layout?"], "Tabs", "{stdout}");
}

/// The first `askpane history --json` line whose header is `header`, once recorded.
fn history_entry(world: &World, header: &str) -> Value {
    history_entry_where(world, |entry| entry["header"] == header)
}

/// The newest `askpane history --json` line that `wanted` picks, once recorded.
fn history_entry_where(world: &World, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let mut history = world.askpane(&["history", "--json"]);
        let finished = crate::support::run_bounded(&mut history, None);
        let found = finished
            .stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|entry| wanted(entry));
        if let Some(entry) = found {
            return entry;
        }
        assert!(Instant::now() < deadline, "history never recorded the entry");
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_socket_decline_reaches_the_hook_with_its_message() {
    let world = World::with_inbox("front-decline");
    let hook = world.client(&["hook"], &question_with_preview("toolu_decline"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    let line = json!({"type": "decline", "connection": connection, "id": id,
                      "message": "not now, ask Bob", "answered_by": "@alice"});
    front.send(&line.to_string());
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("not now, ask Bob"), "{stdout}");
}

#[test]
fn two_front_ends_racing_exactly_one_wins_and_the_other_hears_who() {
    let world = World::with_inbox("front-race");
    let hook = world.client(&["hook"], &question_with_preview("toolu_race"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    let mut alice = world.connect();
    let mut bob = world.connect();
    alice.send(&answer_line(connection, &id, "@alice"));
    bob.send(&answer_line(connection, &id, "@bob"));
    let verdicts = [alice.receive_kind("verdict"), bob.receive_kind("verdict")];
    let winners: Vec<&Value> = verdicts.iter().filter(|v| v["accepted"] == true).collect();
    assert_eq!(winners.len(), 1, "{verdicts:?}");
    let (winner, loser) = match verdicts[0]["accepted"] == true {
        true => ("socket:@alice", &verdicts[1]),
        false => ("socket:@bob", &verdicts[0]),
    };
    assert_eq!(loser["reason"], format!("it was already answered by {winner}"), "{verdicts:?}");
    let (code, _, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // Later still, the ask is remembered as answered by the winner.
    bob.send(&answer_line(connection, &id, "@bob"));
    let late = bob.receive_kind("verdict");
    assert_eq!(late["accepted"], false);
    assert_eq!(late["reason"], format!("it was already answered by {winner}"), "{late}");
}

#[test]
fn an_answer_to_a_withdrawn_ask_is_refused() {
    let world = World::with_inbox("front-withdrawn");
    let hook = world.client(&["hook"], &question_with_preview("toolu_gone"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    hook.kill();
    let deadline = Instant::now() + WAIT;
    while !listed(&mut front, false, 0).is_empty() {
        assert!(Instant::now() < deadline, "the killed hook's question stays open");
        thread::sleep(Duration::from_millis(50));
    }
    front.send(&answer_line(connection, &id, "@alice"));
    let verdict = front.receive_kind("verdict");
    assert_eq!(verdict["accepted"], false, "{verdict}");
    assert_eq!(verdict["reason"], "it has ended (withdrawn)", "{verdict}");
}

#[test]
fn a_link_s_connection_may_not_answer_and_hostile_lines_change_nothing() {
    let world = World::with_inbox("front-hostile");
    let hook = world.client(&["hook"], &question_with_preview("toolu_hostile"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);

    let mut linked = world.connect();
    linked.send(r#"{"type":"via_link","host":"devbox"}"#);
    linked.receive_kind("linked");
    linked.send(&answer_line(connection, &id, "@mallory"));
    let refused = linked.receive_kind("error");
    assert!(
        refused["message"].as_str().unwrap_or_default().contains("`answer` is for this machine"),
        "{refused}"
    );
    let decline = json!({"type": "decline", "connection": connection, "id": id,
                         "message": "no", "answered_by": "@mallory"});
    linked.send(&decline.to_string());
    assert!(
        linked.receive_kind("error")["message"].as_str().unwrap_or_default().contains("`decline`")
    );

    // Unknown ids, a label that is no label, a shape that is no answer, an option it lacks.
    front.send(&answer_line(connection, "nope", "@alice"));
    let unknown = front.receive_kind("error");
    assert_eq!(
        unknown["message"],
        format!("no open question \"nope\" of connection {connection}"),
        "{unknown}"
    );
    front.send(&answer_line(connection + 1000, &id, "@alice"));
    front.receive_kind("error");
    front.send(&answer_line(connection, &id, "line\nbreak"));
    let label = front.receive_kind("error");
    assert!(label["message"].as_str().unwrap_or_default().contains("answered_by"), "{label}");
    front.send(&json!({"type": "answer", "connection": connection, "id": id}).to_string());
    let missing = front.receive_kind("error");
    assert!(missing["message"].as_str().unwrap_or_default().contains("answered_by"), "{missing}");
    front.send(
        &json!({"type": "answer", "connection": connection, "id": id,
                "answers": {"0": "9"}, "answered_by": "@alice"})
        .to_string(),
    );
    let wrong = front.receive_kind("verdict");
    assert_eq!(wrong["accepted"], false, "{wrong}");
    assert!(wrong["reason"].as_str().is_some_and(|reason| !reason.is_empty()), "{wrong}");

    // Nothing changed: the question still waits, and the right answer still counts.
    assert_eq!(open_question(&mut front), (connection, id.clone()));
    front.send(&answer_line(connection, &id, "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(crate::inbox::hook_answers(&stdout)["Which layout?"], "Tabs", "{stdout}");
}

/// A `decide` line for `decision` (its `decision`, `suggestion`, `message`).
fn decide_line(connection: u64, id: &str, decision: Value, by: &str) -> String {
    let mut line = json!({"type": "decide", "connection": connection, "id": id, "answered_by": by});
    if let (Value::Object(line), Value::Object(decision)) = (&mut line, decision) {
        line.extend(decision);
    }
    line.to_string()
}

#[test]
fn a_socket_decides_tool_calls_as_the_page_does_and_the_first_decision_wins() {
    let world = World::with_inbox("front-decide");
    let mut front = world.connect();
    let decision_of = |stdout: &str| -> Value {
        let reply: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|error| panic!("no JSON ({error}): {stdout:?}"));
        reply["hookSpecificOutput"]["decision"].clone()
    };
    // Allow always, with the second suggestion: the rule goes back to Claude Code.
    let hook = world.client(&["hook"], &approval("Bash", json!({"command": "touch marker"})));
    let (connection, id) = open_question(&mut front);
    front.send(&decide_line(
        connection,
        &id,
        json!({"decision": "allow_always", "suggestion": 7}),
        "@alice",
    ));
    let bad = front.receive_kind("error");
    assert!(bad["message"].as_str().unwrap_or_default().contains("suggestion"), "{bad}");
    let mut bob = world.connect();
    front.send(&decide_line(
        connection,
        &id,
        json!({"decision": "allow_always", "suggestion": 1}),
        "@alice",
    ));
    bob.send(&decide_line(connection, &id, json!({"decision": "deny", "message": "no"}), "@bob"));
    let verdicts = [front.receive_kind("verdict"), bob.receive_kind("verdict")];
    assert_eq!(verdicts.iter().filter(|v| v["accepted"] == true).count(), 1, "{verdicts:?}");
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let decision = decision_of(&stdout);
    match verdicts[0]["accepted"] == true {
        true => {
            assert_eq!(decision["behavior"], "allow", "{stdout}");
            assert_eq!(decision["updatedPermissions"][0]["mode"], "acceptEdits", "{stdout}");
            assert_eq!(verdicts[1]["reason"], "it was already answered by socket:@alice");
        }
        false => {
            assert_eq!(decision["behavior"], "deny", "{stdout}");
            assert_eq!(verdicts[0]["reason"], "it was already answered by socket:@bob");
        }
    }
    // Deny with words: the model reads them as the page's deny says them.
    let hook = world.client(&["hook"], &approval("Bash", json!({"command": "rm -rf build"})));
    let (connection, id) = open_question(&mut front);
    front.send(&decide_line(
        connection,
        &id,
        json!({"decision": "deny", "message": "use make clean"}),
        "@alice",
    ));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (_, stdout, _) = hook.finish();
    let decision = decision_of(&stdout);
    assert_eq!(decision["behavior"], "deny", "{stdout}");
    assert_eq!(decision["message"], "The user denied this tool call and said: use make clean");
    // History says who decided it.
    let entry = history_entry_where(&world, |entry| {
        entry["kind"] == "approval" && entry["questions"]["command"] == "rm -rf build"
    });
    assert_eq!(entry["answered_by"], "socket:@alice", "{entry}");
    assert_eq!(entry["decision"], "denied", "{entry}");
    // A link may not decide.
    let hook = world.client(&["hook"], &approval("Bash", json!({"command": "ls"})));
    let (connection, id) = open_question(&mut front);
    let mut linked = world.connect();
    linked.send(r#"{"type":"via_link","host":"devbox"}"#);
    linked.receive_kind("linked");
    linked.send(&decide_line(connection, &id, json!({"decision": "allow"}), "@mallory"));
    let refused = linked.receive_kind("error");
    assert!(refused["message"].as_str().unwrap_or_default().contains("`decide`"), "{refused}");
    front.send(&decide_line(connection, &id, json!({"decision": "allow"}), "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (_, stdout, _) = hook.finish();
    assert_eq!(decision_of(&stdout)["behavior"], "allow", "{stdout}");
}

#[test]
fn an_inbox_with_the_browser_page_takes_a_socket_s_answer_and_decision_by_the_same_rules() {
    let mut world = World::new("front-web");
    let mut inbox = world.askpane(&["inbox", "--ui", "web"]);
    inbox.env_remove("DISPLAY");
    world.start_inbox_command(inbox);
    let mut front = world.connect();
    let hook = world.client(&["hook"], &question_with_preview("toolu_web"));
    let (connection, id) = open_question(&mut front);
    front.send(&answer_line(connection, &id, "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(crate::inbox::hook_answers(&stdout)["Which layout?"], "Tabs", "{stdout}");
    assert_eq!(history_entry(&world, "Layout")["answered_by"], "socket:@alice");
    front.send(&answer_line(connection, &id, "@bob"));
    assert_eq!(front.receive_kind("verdict")["reason"], "it was already answered by socket:@alice");

    let hook = world.client(&["hook"], &approval("Bash", json!({"command": "ls"})));
    let (connection, id) = open_question(&mut front);
    front.send(&decide_line(connection, &id, json!({"decision": "allow"}), "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (_, stdout, _) = hook.finish();
    let reply: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(reply["hookSpecificOutput"]["decision"]["behavior"], "allow", "{stdout}");
}

/// A `clarify` line (with `answers` picked so far, possibly none).
fn clarify_line(connection: u64, id: &str, answers: Value, by: &str) -> String {
    json!({"type": "clarify", "connection": connection, "id": id, "answers": answers,
           "answered_by": by})
    .to_string()
}

#[test]
fn a_socket_clarify_is_the_window_s_chat_about_this_and_the_first_answer_wins() {
    let world = World::with_inbox("front-clarify");
    let hook = world.client(&["hook"], &question_with_preview("toolu_clarify"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    front.send(&clarify_line(connection, &id, json!({}), "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // The dialog's own clarify feedback, as the window's "Chat about this" sends it with
    // nothing picked.
    assert!(stdout.contains("The user wants to clarify these questions."), "{stdout}");
    assert!(stdout.contains("- \\\"Which layout?\\\"\\n  (No answer provided)"), "{stdout}");
    let entry = history_entry(&world, "Layout");
    assert_eq!(entry["answered_by"], "socket:@alice", "{entry}");
    assert_eq!(entry["outcome"], "clarify", "{entry}");
    // Settled: a second clarify (or answer) hears who came first.
    front.send(&clarify_line(connection, &id, json!({}), "@bob"));
    let late = front.receive_kind("verdict");
    assert_eq!(late["accepted"], false, "{late}");
    assert_eq!(late["reason"], "it was already answered by socket:@alice", "{late}");

    // With a pick: the feedback carries it, as the window's does.
    let hook = world.client(&["hook"], &question_with_preview("toolu_clarify_2"));
    let (connection, id) = open_question(&mut front);
    front.send(&clarify_line(connection, &id, json!({"0": "2"}), "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (_, stdout, _) = hook.finish();
    assert!(stdout.contains("  Answer: Split"), "{stdout}");
}

#[test]
fn clarify_on_a_tool_call_is_refused_with_why_and_changes_nothing() {
    let world = World::with_inbox("front-clarify-approval");
    let hook = world.client(&["hook"], &approval("Bash", json!({"command": "ls"})));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    front.send(&clarify_line(connection, &id, json!({}), "@alice"));
    let refused = front.receive_kind("error");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.contains("is a tool call to allow or deny (`decide`)"), "{refused}");
    assert_eq!(open_question(&mut front), (connection, id.clone()));
    front.send(&decide_line(connection, &id, json!({"decision": "allow"}), "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (code, _, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A subscriber's next `asked` or `settled` event.
fn next_event(subscriber: &mut Connection) -> Value {
    loop {
        let event = subscriber.receive();
        if event["type"] == "asked" || event["type"] == "settled" {
            return event;
        }
    }
}

#[test]
fn subscribe_full_carries_each_ask_s_content_and_settled_says_who_and_how() {
    let world = World::with_inbox("front-subscribe");
    let mut full = world.connect();
    full.send(r#"{"type":"subscribe","full":true}"#);
    full.receive_kind("subscribed");
    let mut plain = world.connect();
    plain.send(r#"{"type":"subscribe"}"#);
    plain.receive_kind("subscribed");
    let mut front = world.connect();

    // Answered through the socket: `answered_by` and the outcome.
    let hook = world.client(&["hook"], &question_with_preview("toolu_sub"));
    let asked = next_event(&mut full);
    assert_eq!(asked["type"], "asked", "{asked}");
    let content = &asked["request"]["content"];
    assert_eq!(content["questions"][0]["options"][0]["preview"], "[a|b|c]", "{asked}");
    let asked_plain = next_event(&mut plain);
    assert!(asked_plain["request"].get("content").is_none(), "{asked_plain}");
    let (connection, id) = open_question(&mut front);
    front.send(&answer_line(connection, &id, "@alice:example.org"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let settled = next_event(&mut full);
    assert_eq!(
        settled,
        json!({"type": "settled", "connection": connection, "id": id, "outcome": "answered",
               "answered_by": "socket:@alice:example.org"})
    );
    assert_eq!(next_event(&mut plain)["answered_by"], "socket:@alice:example.org");
    hook.finish();

    // A tool call decided through the socket: the same.
    let hook = world.client(&["hook"], &approval("Bash", json!({"command": "ls"})));
    let asked = next_event(&mut full);
    assert_eq!(asked["request"]["content"]["input"]["command"], "ls", "{asked}");
    let (connection, id) = open_question(&mut front);
    front.send(&decide_line(connection, &id, json!({"decision": "deny", "message": "no"}), "@bob"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let settled = next_event(&mut full);
    assert_eq!(settled["outcome"], "denied", "{settled}");
    assert_eq!(settled["answered_by"], "socket:@bob", "{settled}");
    hook.finish();

    // Withdrawn (the hook killed) and timed out: nobody answered, so no `answered_by`.
    let hook = world.client(&["hook"], &question_with_preview("toolu_gone"));
    assert_eq!(next_event(&mut full)["type"], "asked");
    open_question(&mut front);
    hook.kill();
    let settled = next_event(&mut full);
    assert_eq!(settled["outcome"], "withdrawn", "{settled}");
    assert!(settled.get("answered_by").is_none(), "{settled}");
    let hook = world.client(&["hook", "--timeout", "1"], &question_with_preview("toolu_late"));
    assert_eq!(next_event(&mut full)["type"], "asked");
    let settled = next_event(&mut full);
    assert_eq!(settled["outcome"], "timed_out", "{settled}");
    assert!(settled.get("answered_by").is_none(), "{settled}");
    hook.finish();
}

#[test]
fn labels_with_control_characters_or_over_256_bytes_are_refused_and_change_nothing() {
    let world = World::with_inbox("front-labels");
    let hook = world.client(&["hook"], &question_with_preview("toolu_labels"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    for label in ["@alice\u{7}", "@alice\u{1b}[31m", "\u{202e}\u{0}", &"a".repeat(300), " "] {
        for line in [
            answer_line(connection, &id, label),
            clarify_line(connection, &id, json!({}), label),
            json!({"type": "decline", "connection": connection, "id": id, "message": "no",
                   "answered_by": label})
            .to_string(),
        ] {
            front.send(&line);
            let refused = front.receive_kind("error");
            let message = refused["message"].as_str().unwrap_or_default();
            assert!(message.contains("answered_by must be printable text"), "{refused}");
        }
    }
    // 256 bytes exactly is a label.
    assert_eq!(open_question(&mut front), (connection, id.clone()));
    front.send(&answer_line(connection, &id, &"é".repeat(128)));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    hook.finish();
    let entry = history_entry(&world, "Layout");
    assert_eq!(entry["answered_by"], format!("socket:{}", "é".repeat(128)), "{entry}");
}

#[test]
fn a_cjk_other_answer_at_the_hosts_limit_arrives_whole_and_one_more_is_refused() {
    let world = World::with_inbox("front-cjk");
    let hook = world.client(&["hook"], &question_with_preview("toolu_cjk"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    // 32,768 characters (98,304 bytes): the longest answer a strict host admits.
    let text: String = "漢字かな交じり文".chars().cycle().take(32_768).collect();
    let other = |text: &str| {
        json!({"type": "answer", "connection": connection, "id": id,
               "answers": {"0": format!("other:{text}")}, "answered_by": "@alice"})
        .to_string()
    };
    front.send(&other(&format!("{text}字")));
    let over = front.receive_kind("verdict");
    assert_eq!(over["accepted"], false, "{over}");
    assert!(over["reason"].as_str().unwrap_or_default().contains("32769"), "{over}");
    assert_eq!(open_question(&mut front), (connection, id.clone()));
    front.send(&other(&text));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(crate::inbox::hook_answers(&stdout)["Which layout?"], text.as_str());
    assert_eq!(history_entry(&world, "Layout")["answer"], text.as_str());
}

#[test]
fn two_answers_in_one_burst_one_counts_and_the_other_hears_it() {
    let world = World::with_inbox("front-burst");
    let hook = world.client(&["hook"], &question_with_preview("toolu_burst"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    let second = json!({"type": "answer", "connection": connection, "id": id,
                        "answers": {"0": "2"}, "answered_by": "@bob"});
    // Both lines in one write: the inbox reads them in one go.
    front.send(&format!("{}\n{second}", answer_line(connection, &id, "@alice")));
    let verdicts = [front.receive_kind("verdict"), front.receive_kind("verdict")];
    assert_eq!(verdicts[0]["accepted"], true, "{verdicts:?}");
    assert_eq!(verdicts[1]["accepted"], false, "{verdicts:?}");
    assert_eq!(verdicts[1]["reason"], "it was already answered by socket:@alice", "{verdicts:?}");
    let (_, stdout, _) = hook.finish();
    assert_eq!(crate::inbox::hook_answers(&stdout)["Which layout?"], "Tabs", "{stdout}");
}

#[test]
fn no_front_end_verb_goes_through_a_link() {
    let world = World::with_inbox("front-link-verbs");
    let hook = world.client(&["hook"], &question_with_preview("toolu_link"));
    let mut front = world.connect();
    let (connection, id) = open_question(&mut front);
    let mut linked = world.connect();
    linked.send(r#"{"type":"via_link","host":"devbox"}"#);
    linked.receive_kind("linked");
    let lines = [
        ("answer", answer_line(connection, &id, "@mallory")),
        ("clarify", clarify_line(connection, &id, json!({}), "@mallory")),
        (
            "decline",
            json!({"type": "decline", "connection": connection, "id": id, "message": "no",
                   "answered_by": "@mallory"})
            .to_string(),
        ),
        ("decide", decide_line(connection, &id, json!({"decision": "allow"}), "@mallory")),
        ("subscribe", r#"{"type":"subscribe","full":true}"#.to_owned()),
    ];
    for (verb, line) in lines {
        linked.send(&line);
        let refused = linked.receive_kind("error");
        let message = refused["message"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("`{verb}` is for this machine")), "{refused}");
    }
    assert_eq!(open_question(&mut front), (connection, id.clone()));
    front.send(&answer_line(connection, &id, "@alice"));
    assert_eq!(front.receive_kind("verdict")["accepted"], true);
    hook.finish();
}

/// A hook question whose one option carries a `bytes`-long preview.
fn question_with_a_large_preview(tool_use_id: &str, bytes: usize) -> String {
    json!({
        "session_id": "5e55-10n", "cwd": "/home/dev/project", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
        "tool_use_id": tool_use_id,
        "tool_input": {"questions": [{
            "question": "Which layout?", "header": "Layout", "multiSelect": false,
            "options": [{"label": "Tabs", "description": "one pane", "preview": "x".repeat(bytes)},
                        {"label": "Split", "description": "two panes"}]
        }]}
    })
    .to_string()
}

#[test]
fn a_full_subscriber_that_stops_reading_is_dropped_and_nobody_else_waits() {
    let world = World::with_inbox("front-slow-full");
    let mut stalled = world.connect();
    stalled.send(r#"{"type":"subscribe","full":true}"#);
    stalled.receive_kind("subscribed");
    let mut reading = world.connect();
    reading.send(r#"{"type":"subscribe"}"#);
    reading.receive_kind("subscribed");
    // 24 asks of 100 KB each: 2.4 MB of `asked` events for the stalled subscriber, far beyond
    // what its socket and its 1 MiB queue hold.
    let hooks: Vec<_> = (0..24)
        .map(|n| {
            world.client(
                &["hook"],
                &question_with_a_large_preview(&format!("toolu_big{n}"), 100_000),
            )
        })
        .collect();
    for _ in 0..24 {
        assert_eq!(next_event(&mut reading)["type"], "asked");
    }
    let mut front = world.connect();
    let asks = listed(&mut front, false, 24);
    assert_eq!(asks.len(), 24);
    for ask in &asks {
        let (connection, id) =
            (ask["connection"].as_u64().expect("a number"), ask["id"].as_str().expect("an id"));
        front.send(&answer_line(connection, id, "@alice"));
        assert_eq!(front.receive_kind("verdict")["accepted"], true);
    }
    for hook in hooks {
        let (code, _, stderr) = hook.finish();
        assert_eq!(code, Some(0), "{stderr}");
    }
    // The stalled subscriber was closed: what it reads ends before the last events.
    let mut read = 0;
    while let Some(event) = stalled.try_receive() {
        read += 1;
        assert!(read < 48, "the stalled subscriber was never dropped: {event}");
    }
    let log = std::fs::read_to_string(world.root.join("inbox.stderr")).unwrap_or_default();
    assert!(log.contains("stopped reading"), "{log}");
}
