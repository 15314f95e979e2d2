//! Issue 31: the inbox's socket as a front end's (a bridge's) way in, over the real socket of a
//! real inbox: `list` with each ask's full content.

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
