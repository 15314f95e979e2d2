//! The approval card's body (issue 26): each tool call typed from real-shaped inputs (and
//! anything else falling back to its JSON), its diff against the file on disk as literal unified
//! text, and the card in the window (kittest, by accessible label): a command, a diff, a huge
//! command that leaves the buttons on screen, a path with a bidi override shown written out.

use std::time::Instant;

use askpane::book::diff::MAX_SHOWN_LINES;
use askpane::book::tool_call::ToolCallView;
use askpane::protocol::codex_server::{self, ServerLine};
use askpane::protocol::stream::PermissionRequest;
use askpane::protocol::tool_call::{FileSnapshot, NotebookEditMode, StringEdit, ToolCall};
use askpane::transport::{self, ApprovalEvent, Inbound, Provenance};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use serde_json::{Value, json};

use crate::ui::{Window, window};

fn request(tool_name: &str, input: Value, on_disk: Option<FileSnapshot>) -> PermissionRequest {
    PermissionRequest {
        request_id: format!("perm-{tool_name}"),
        tool_name: tool_name.to_owned(),
        input,
        cwd: Some("/home/dev/project".to_owned()),
        on_disk,
        ..PermissionRequest::default()
    }
}

fn on_disk(text: &str) -> Option<FileSnapshot> {
    Some(FileSnapshot::Text { path: "/home/dev/project/src/lib.rs".into(), text: text.into() })
}

/// The diff and notes of a file change's card.
fn change(request: &PermissionRequest) -> (String, Vec<String>) {
    match ToolCallView::of(request) {
        ToolCallView::Change { diff, notes, .. } => (diff.unified(), notes),
        other => panic!("not a file change: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Typed tool calls

#[test]
fn a_bash_permission_request_from_claude_code_is_a_command() {
    let hook: Value = serde_json::from_str(include_str!(
        "fixtures/hook.permissionrequest.bash.stdin.2.1.332.json"
    ))
    .unwrap();
    let call = ToolCall::parse(hook["tool_name"].as_str().unwrap(), &hook["tool_input"]);
    assert_eq!(
        call,
        ToolCall::Bash {
            command: "touch /home/dev/project/made-by-bash".into(),
            description: Some("Create a marker file".into()),
            timeout: None,
            run_in_background: false,
        }
    );
}

#[test]
fn every_claude_code_tool_is_typed_from_its_input() {
    let bash = json!({"command": "cargo test", "timeout": 120000, "run_in_background": true});
    assert_eq!(
        ToolCall::parse("Bash", &bash),
        ToolCall::Bash {
            command: "cargo test".into(),
            description: None,
            timeout: Some(120_000),
            run_in_background: true
        }
    );
    let edit =
        json!({"file_path": "/p/a.rs", "old_string": "a", "new_string": "b", "replace_all": true});
    assert_eq!(
        ToolCall::parse("Edit", &edit),
        ToolCall::Edit {
            file_path: "/p/a.rs".into(),
            old_string: "a".into(),
            new_string: "b".into(),
            replace_all: true
        }
    );
    let multi = json!({"file_path": "/p/a.rs", "edits": [
        {"old_string": "a", "new_string": "b"},
        {"old_string": "c", "new_string": "d", "replace_all": true}]});
    assert_eq!(
        ToolCall::parse("MultiEdit", &multi),
        ToolCall::MultiEdit {
            file_path: "/p/a.rs".into(),
            edits: vec![
                StringEdit { old_string: "a".into(), new_string: "b".into(), replace_all: false },
                StringEdit { old_string: "c".into(), new_string: "d".into(), replace_all: true },
            ]
        }
    );
    let write = json!({"file_path": "/p/new.md", "content": "# Hi\n"});
    assert_eq!(
        ToolCall::parse("Write", &write),
        ToolCall::Write { file_path: "/p/new.md".into(), content: "# Hi\n".into() }
    );
    let notebook = json!({"notebook_path": "/p/n.ipynb", "cell_id": "c1", "new_source": "x = 1",
                          "cell_type": "code", "edit_mode": "insert"});
    assert_eq!(
        ToolCall::parse("NotebookEdit", &notebook),
        ToolCall::NotebookEdit {
            notebook_path: "/p/n.ipynb".into(),
            cell_id: Some("c1".into()),
            new_source: "x = 1".into(),
            edit_mode: NotebookEditMode::Insert
        }
    );
    let fetch = json!({"url": "https://example.com/doc", "prompt": "Summarise it"});
    assert_eq!(
        ToolCall::parse("WebFetch", &fetch),
        ToolCall::WebFetch {
            url: "https://example.com/doc".into(),
            prompt: Some("Summarise it".into())
        }
    );
    let search = json!({"query": "egui kittest", "allowed_domains": ["docs.rs"]});
    assert_eq!(
        ToolCall::parse("WebSearch", &search),
        ToolCall::WebSearch {
            query: "egui kittest".into(),
            allowed_domains: vec!["docs.rs".into()],
            blocked_domains: vec![]
        }
    );
    let arguments = json!({"owner": "dev", "labels": ["bug"]});
    assert_eq!(
        ToolCall::parse("mcp__github__create_issue", &arguments),
        ToolCall::Mcp { server: "github".into(), tool: "create_issue".into(), arguments }
    );
}

#[test]
fn codex_command_and_file_change_approvals_are_typed_too() {
    let line = json!({"id": 7, "method": "item/commandExecution/requestApproval",
                      "params": {"itemId": "i1", "command": "ls -la", "cwd": "/home/dev/project"}});
    let ServerLine::CommandApproval { request, .. } = codex_server::parse_server_line(&line) else {
        panic!("not a command approval");
    };
    assert_eq!(request.cwd.as_deref(), Some("/home/dev/project"));
    assert!(matches!(
        ToolCall::parse(&request.tool_name, &request.input),
        ToolCall::Bash { command, .. } if command == "ls -la"
    ));
    let started = json!({"changes": [{"path": "/p/a.rs", "kind": {"type": "update"},
                                      "diff": "@@ -1 +1 @@\n-old\n+new\n"}]});
    let request = codex_server::file_change_permission("k", "i2", None, Some(&started));
    let (diff, notes) = change(&request);
    assert_eq!(diff, "/p/a.rs\n@@ -1 +1 @@\n-old\n+new\n");
    assert!(notes.is_empty());
}

#[test]
fn missing_or_wrongly_typed_fields_fall_back_to_other() {
    let cases = [
        ("Bash", json!({})),
        ("Bash", json!({"command": 42})),
        ("Bash", json!({"command": "ls", "timeout": "soon"})),
        ("Bash", json!({"command": "ls", "run_in_background": "yes"})),
        ("Edit", json!({"file_path": "/a", "old_string": "x"})),
        ("MultiEdit", json!({"file_path": "/a", "edits": [{"old_string": "x"}]})),
        ("Write", json!({"file_path": ["/a"], "content": "x"})),
        ("NotebookEdit", json!({"notebook_path": "/n", "new_source": "", "edit_mode": "append"})),
        ("WebFetch", json!({"url": "https://x"})),
        ("WebSearch", json!({"query": "q", "allowed_domains": "docs.rs"})),
        ("Bash", json!("ls")),
        ("Glob", json!({"pattern": "*.rs"})),
    ];
    for (name, input) in cases {
        assert_eq!(
            ToolCall::parse(name, &input),
            ToolCall::Other { name: name.into(), input: input.clone() },
            "{name} {input}"
        );
        // And the card shows its JSON.
        let view = ToolCallView::of(&request(name, input, None));
        assert!(matches!(view, ToolCallView::Other { .. }), "{view:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Diffs

#[test]
fn an_edit_is_placed_in_the_file_on_disk_with_its_line_numbers() {
    let file = "use std::io;\n\nfn main() {\n    let a = 1;\n    println!(\"{a}\");\n}\n";
    let input = json!({"file_path": "/home/dev/project/src/lib.rs",
                       "old_string": "    let a = 1;", "new_string": "    let a = 2;\n    let b = 3;"});
    let (diff, notes) = change(&request("Edit", input, on_disk(file)));
    assert_eq!(
        diff,
        "@@ -1,6 +1,7 @@\n use std::io;\n \n fn main() {\n-    let a = 1;\n+    let a = 2;\n\
         +    let b = 3;\n     println!(\"{a}\");\n }\n"
    );
    assert!(notes.is_empty(), "{notes:?}");
    let ToolCallView::Change { diff, .. } = ToolCallView::of(&request(
        "Edit",
        json!({"file_path": "/x", "old_string": "    let a = 1;",
            "new_string": "    let a = 2;"}),
        on_disk(file),
    )) else {
        panic!()
    };
    let removed = diff.lines.iter().find(|line| line.text == "    let a = 1;").unwrap();
    assert_eq!((removed.old, removed.new), (Some(4), None));
}

#[test]
fn an_edit_whose_text_is_not_in_the_file_is_shown_as_its_two_strings() {
    let input = json!({"file_path": "/home/dev/project/src/lib.rs", "old_string": "alpha\n",
                       "new_string": "beta\n"});
    let (diff, notes) = change(&request("Edit", input.clone(), on_disk("gamma\n")));
    assert_eq!(diff, "@@ -1 +1 @@\n-alpha\n+beta\n");
    assert_eq!(
        notes,
        ["The text to replace is not in the file on disk: the change is shown as its text alone."]
    );
    let unreadable = Some(FileSnapshot::Unreadable {
        path: "/home/dev/project/src/lib.rs".into(),
        reason: "Permission denied (os error 13)".into(),
    });
    let (diff, notes) = change(&request("Edit", input, unreadable));
    assert_eq!(diff, "@@ -1 +1 @@\n-alpha\n+beta\n");
    assert_eq!(notes, ["Could not read the file: Permission denied (os error 13)"]);
}

#[test]
fn a_multi_edit_applies_its_edits_in_turn() {
    let input = json!({"file_path": "/p/a.rs", "edits": [
        {"old_string": "one", "new_string": "uno"},
        {"old_string": "uno\ntwo", "new_string": "uno\ndos"}]});
    let (diff, _) = change(&request("MultiEdit", input, on_disk("one\ntwo\nthree\n")));
    assert_eq!(diff, "@@ -1,3 +1,3 @@\n-one\n-two\n+uno\n+dos\n three\n");
}

#[test]
fn a_write_is_diffed_against_the_file_and_a_new_file_is_all_added() {
    let input = json!({"file_path": "/p/a.txt", "content": "a\nB\nc\n"});
    let (diff, notes) = change(&request("Write", input.clone(), on_disk("a\nb\nc\n")));
    assert_eq!(diff, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    assert!(notes.is_empty());
    let missing = Some(FileSnapshot::Missing { path: "/p/a.txt".into() });
    let (diff, notes) = change(&request("Write", input, missing));
    assert_eq!(diff, "@@ -0,0 +1,3 @@\n+a\n+B\n+c\n");
    assert_eq!(notes, ["A new file."]);
}

#[test]
fn a_notebook_edit_is_diffed_against_its_cell() {
    let notebook =
        json!({"cells": [{"id": "c1", "cell_type": "code", "source": ["x = 1\n", "y = 2"]}]});
    let input =
        json!({"notebook_path": "/p/n.ipynb", "cell_id": "c1", "new_source": "x = 1\ny = 3"});
    let (diff, notes) = change(&request("NotebookEdit", input, on_disk(&notebook.to_string())));
    assert_eq!(diff, "@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n");
    assert_eq!(notes, ["Replaces the source of cell c1."]);
}

#[test]
fn a_hundred_thousand_line_write_is_bounded_when_the_card_is_made() {
    let content: String = (0..100_000).map(|n| format!("line {n}\n")).collect();
    let missing = Some(FileSnapshot::Missing { path: "/p/big".into() });
    let view = ToolCallView::of(&request(
        "Write",
        json!({"file_path": "/p/big", "content": content}),
        missing,
    ));
    let ToolCallView::Change { diff, .. } = view else { panic!() };
    assert_eq!(diff.lines.len(), MAX_SHOWN_LINES);
    assert_eq!(diff.added, 100_000);
    assert!(diff.more_lines > 0);
}

// ---------------------------------------------------------------------------------------------
// The card in the window

/// A window showing one permission card for `request`; what is decided arrives on the receiver.
fn card(
    request: PermissionRequest,
) -> (Window, crossbeam_channel::Receiver<askpane::protocol::stream::PermissionDecision>) {
    let mut window = window();
    let (reply, decision) = transport::Responder::channel();
    let provenance = Provenance::new("claude", Some("shop".to_owned()));
    let ask =
        transport::PermissionAsk { id: transport::RequestId::next(), request, provenance, reply };
    assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask)))));
    window.harness.run();
    (window, decision)
}

/// The button is there and wholly inside the window.
fn on_screen(window: &Window, label: &str) -> bool {
    let screen = window.harness.ctx.content_rect();
    let button = window.harness.get_by_role_and_label(Role::Button, label);
    screen.contains_rect(button.rect())
}

#[test]
fn a_bash_card_shows_the_command_its_description_and_folder() {
    let input = json!({"command": "cargo test --workspace", "description": "Run the tests"});
    let (window, _) = card(request("Bash", input, None));
    assert!(window.has_label("cargo test --workspace"));
    assert!(window.has_label("Run the tests"));
    assert!(window.has_text_with(&["in /home/dev/project"]));
}

#[test]
fn an_edit_card_shows_removed_and_added_lines() {
    let input = json!({"file_path": "/home/dev/project/src/lib.rs", "old_string": "let a = 1;",
                       "new_string": "let a = 2;"});
    let (window, _) = card(request("Edit", input, on_disk("// top\nlet a = 1;\n// end\n")));
    assert!(window.has_text_with(&["2", "-let a = 1;"]), "the removed line, numbered");
    assert!(window.has_text_with(&["2", "+let a = 2;"]), "the added line, numbered");
    assert!(window.has_label("/home/dev/project/src/lib.rs"));
}

#[test]
fn a_hundred_kilobytes_of_japanese_in_a_command_leave_the_buttons_on_screen() {
    let command = format!("echo {}", "日本語のテキスト".repeat(4_300));
    assert!(command.len() > 100_000);
    let (mut window, decision) = card(request("Bash", json!({"command": command}), None));
    assert!(on_screen(&window, "Allow once"), "Allow once was pushed off the window");
    assert!(on_screen(&window, "Deny"), "Deny was pushed off the window");
    window.click_button("Deny");
    assert!(decision.try_recv().is_ok(), "the click reached the card");
}

#[test]
fn a_bidi_override_and_escapes_in_a_path_are_shown_written_out() {
    let path = "/home/dev/project/\u{1b}[2Jinvoice\u{202e}txt.exe";
    let input = json!({"file_path": path, "content": "x\n"});
    let (window, _) =
        card(request("Write", input, Some(FileSnapshot::Missing { path: path.into() })));
    assert!(window.has_label("/home/dev/project/<U+001B>[2Jinvoice<U+202E>txt.exe"));
    assert_eq!(window.shown("\u{202e}"), 0, "the override itself is drawn nowhere");
    assert_eq!(window.shown("\u{1b}"), 0, "the escape itself is drawn nowhere");
}

/// Not a benchmark: how long a 5 MB Write card takes to prepare and then to draw, said once
/// (the report of issue 26 quotes it). Only bounded output is checked.
#[test]
fn a_five_megabyte_write_card_is_prepared_once_and_draws_bounded() {
    let content: String = (0..100_000).map(|n| format!("{n:>48}\n")).collect();
    assert!(content.len() >= 4_900_000);
    let old: String = (0..20_000).map(|n| format!("{n:>48}\n")).collect();
    let request =
        request("Write", json!({"file_path": "/p/big", "content": content}), on_disk(&old));
    let started = Instant::now();
    let view = ToolCallView::of(&request);
    let prepared = started.elapsed();
    let ToolCallView::Change { diff, .. } = &view else { panic!() };
    assert!(diff.lines.len() <= MAX_SHOWN_LINES);
    // The window takes the card in and draws until it settles; then one more frame.
    let started = Instant::now();
    let (mut window, _) = card(request);
    let first = started.elapsed();
    let started = Instant::now();
    window.harness.step();
    let frame = started.elapsed();
    eprintln!(
        "a 5 MB Write card: prepared in {prepared:?}; shown (until settled) in {first:?}; \
         a frame then in {frame:?}"
    );
    // Generous for a loaded machine: the whole 5 MB laid out as one label took tens of seconds.
    assert!(first.as_secs() < 5, "the card froze the window for {first:?}");
    assert!(on_screen(&window, "Allow once"));
}

// ---------------------------------------------------------------------------------------------
// Cards in the request list (issue 26, item 8)

/// A Bash card from project `project`, session `session`, asked in the window `window`.
fn ask_card(
    window: &mut Window,
    command: &str,
    session: &str,
) -> crossbeam_channel::Receiver<askpane::protocol::stream::PermissionDecision> {
    let (reply, decision) = transport::Responder::channel();
    let mut provenance = Provenance::new("claude", None).with_project(Some("shop".to_owned()));
    provenance.session = Some(session.to_owned());
    let mut request = request("Bash", json!({"command": command}), None);
    request.request_id = format!("perm-{session}");
    let ask =
        transport::PermissionAsk { id: transport::RequestId::next(), request, provenance, reply };
    assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask)))));
    window.harness.run();
    window.wait_out_key_grace();
    decision
}

/// The labels of the list's entries, top to bottom.
fn entries(window: &Window) -> Vec<String> {
    window.list_entries(&[" · tool call · ", " question"])
}

#[test]
fn tool_calls_are_entries_of_the_list_and_one_is_shown_at_a_time() {
    let mut window = window();
    let question = window.ask(&crate::ui::database_tool_use("toolu_list"));
    let first = ask_card(&mut window, "npm test", "aaaa1111");
    let second = ask_card(&mut window, "cargo build --release", "bbbb2222");
    let listed = entries(&window);
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert!(listed[0].contains("question"), "the question came first: {listed:?}");
    assert!(listed[1].starts_with("Bash: npm test · askpane claude · tool call"), "{listed:?}");
    assert!(listed[2].starts_with("Bash: cargo build --release · "), "{listed:?}");
    // The oldest waits in front: the question's form, and no card.
    assert!(window.app().state().current().is_some());
    assert!(!window.has_label("npm test") && !window.has_label("cargo build --release"));
    assert!(window.app().state().title(0.0).starts_with("3 waiting · "));
    // The second card's entry shows that card alone.
    let entry = listed[2].clone();
    window.click(Role::Button, &entry);
    window.wait_out_key_grace();
    assert!(window.has_label("cargo build --release"), "the chosen card's command");
    assert!(!window.has_label("npm test"), "the other card is not shown");
    assert!(window.app().state().current().is_none(), "the form is not shown beside it");
    assert_eq!(window.app().state().title(0.0), "3 waiting · shop · Bash — askpane");
    // Deciding it moves on to the oldest item left: the question.
    window.click_button("Allow once");
    assert!(second.try_recv().is_ok(), "the chosen card was decided");
    assert!(first.try_recv().is_err(), "the other card still waits");
    window.wait_out_key_grace();
    assert_eq!(entries(&window).len(), 2);
    assert!(window.app().state().current().is_some(), "the question is shown again");
    assert!(!window.has_label("npm test"));
    assert!(question.outcome.is_empty(), "nothing was sent for the question");
    assert!(window.app().state().title(0.0).starts_with("2 waiting · "));
}

#[test]
fn ctrl_page_down_walks_from_a_question_to_a_card_and_back() {
    let mut window = window();
    let _question = window.ask(&crate::ui::database_tool_use("toolu_keys"));
    let _card = ask_card(&mut window, "npm test", "aaaa1111");
    assert!(!window.has_label("npm test"));
    window.press_with(crate::ui::CTRL, egui::Key::PageDown);
    assert!(window.has_label("npm test"), "Ctrl+PgDn went to the card");
    assert_eq!(window.app().state().title(0.0), "2 waiting · shop · Bash — askpane");
    window.press_with(crate::ui::CTRL, egui::Key::PageDown);
    assert!(!window.has_label("npm test"), "Ctrl+PgDn wrapped round to the question");
    assert!(window.app().state().current().is_some());
}

#[test]
fn a_lone_card_titles_the_window_with_its_project_and_tool() {
    let mut window = window();
    let _card = ask_card(&mut window, "npm test", "aaaa1111");
    assert_eq!(window.app().state().title(0.0), "shop · Bash — askpane");
}

/// Item 4 of the brief: deciding one card brings the next into its place; a second click aimed
/// at the first card's Allow (a double click) lands on the new card's Allow and acts on nothing.
#[test]
fn a_click_as_the_next_card_takes_the_decided_ones_place_does_not_decide_it() {
    let mut window = window();
    let first = ask_card(&mut window, "npm test", "aaaa1111");
    let second = ask_card(&mut window, "rm -rf build", "bbbb2222");
    // A third keeps the list beside the card, so the next card's Allow is where the first's was.
    let _third = ask_card(&mut window, "ls", "cccc3333");
    assert!(window.has_label("npm test"), "the oldest card is shown");
    let allow = window.harness.get_by_role_and_label(Role::Button, "Allow once").rect().center();
    window.click_at_as_eframe(allow);
    assert!(first.try_recv().is_ok(), "the first card was decided");
    assert!(window.has_label("rm -rf build"), "the next card took its place");
    let next = window.harness.get_by_role_and_label(Role::Button, "Allow once").rect().center();
    assert!(next.distance(allow) < 1.0, "its Allow is where the first card's was");
    window.click_at_as_eframe(allow);
    window.harness.run();
    assert!(second.try_recv().is_err(), "the click aimed at the first card decided the second");
    // Once the grace is over, a click is the user's.
    window.wait_out_key_grace();
    window.click_button("Allow once");
    assert!(second.try_recv().is_ok());
}

/// A phone's page (issue 11): "All waiting" lists the tool calls too, and picking one shows it.
#[test]
fn a_narrow_page_lists_tool_calls_under_all_waiting() {
    let mut window = crate::ui::window_sized(400.0, 760.0);
    let _question = window.ask(&crate::ui::database_tool_use("toolu_narrow"));
    let _card = ask_card(&mut window, "npm test", "aaaa1111");
    assert!(window.has_label("Questions (2)"), "the bar counts the card");
    window.click_button("All waiting");
    let listed = entries(&window);
    assert_eq!(listed.len(), 2, "{listed:?}");
    let card = listed.iter().find(|label| label.contains("tool call")).expect("the card's entry");
    window.click(Role::Button, &card.clone());
    window.wait_out_key_grace();
    assert!(window.has_label("npm test"), "the card is shown in the one column");
    assert!(window.app().state().current().is_none());
}

/// Hostile commands in the list: an override is written out, and a 100 KB command makes an
/// entry of one short line.
#[test]
fn a_card_entry_writes_out_hidden_characters_and_stays_short() {
    let mut window = window();
    let _first = ask_card(&mut window, "echo \u{202e}txt.exe", "aaaa1111");
    let _second = ask_card(&mut window, &"日本語".repeat(40_000), "bbbb2222");
    let listed = entries(&window);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed[0].starts_with("Bash: echo <U+202E>txt.exe · "), "{listed:?}");
    assert!(listed[1].chars().count() < 160, "{}", listed[1].chars().count());
    assert_eq!(window.shown("\u{202e}"), 0, "the override itself is drawn nowhere");
}

// ---------------------------------------------------------------------------------------------
// OpenCode's permission cards (tests/fixtures/opencode/permission-kinds.jsonl: OpenCode 1.18.33's
// `permission.asked` frames, one per kind its tools asked about)

/// The captured request of OpenCode's `kind` (the `nth` of that kind), as the card
/// `askpane opencode` hands to the inbox.
fn opencode_card(kind: &str, nth: usize) -> PermissionRequest {
    use askpane::protocol::opencode::{self, Happening};
    let frames = include_str!("fixtures/opencode/permission-kinds.jsonl");
    let asked = frames.lines().filter_map(|raw| match opencode::global_event(raw) {
        Ok(Happening::PermissionAsked { directory, request }) => Some((directory, request)),
        _ => None,
    });
    let (directory, request) = asked
        .filter(|(_, request)| request.permission == kind)
        .nth(nth)
        .unwrap_or_else(|| panic!("no {kind} #{nth} was captured"));
    opencode::to_permission(&request, &directory).0
}

#[test]
fn an_opencode_bash_card_shows_its_command_not_its_metadata() {
    let (window, _) = card(opencode_card("bash", 0));
    assert!(window.has_label("echo hi && ls"), "the command, as a block of its own");
    assert!(!window.has_text_with(&["\"command\""]), "not the metadata's JSON");
    assert!(window.has_text_with(&["in /tmp/ocprobe/run/project"]), "where it runs");
}

#[test]
fn an_opencode_edit_card_shows_opencodes_diff() {
    let (window, _) = card(opencode_card("edit", 0));
    assert!(window.has_label("/tmp/ocprobe/run/project/hello.txt"));
    assert!(window.has_text_with(&["-hello world"]), "the removed line");
    assert!(window.has_text_with(&["+hello askpane"]), "the added line");
    assert!(!window.has_text_with(&["\"diff\""]), "not the metadata's JSON");
}

#[test]
fn a_codex_hook_card_without_a_title_names_codex() {
    let mut window = window();
    let (reply, _decision) = transport::Responder::channel();
    let provenance = Provenance::new("codex-hook", Some("work".to_owned()));
    let request = request("Bash", json!({"command": "touch made_by_tool.txt"}), None);
    let ask =
        transport::PermissionAsk { id: transport::RequestId::next(), request, provenance, reply };
    assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask)))));
    window.harness.run();
    assert!(window.has_label("Codex wants to use Bash"));
    assert_eq!(window.shown("Claude"), 0, "Claude is named nowhere");
}

/// Issue 26 leftovers: a card's age counts from when the window received it, not from when the
/// list first drew it (a card alone is shown without the list, and a hidden inbox draws nothing).
#[test]
fn a_cards_age_counts_from_its_arrival_not_from_when_the_list_first_drew_it() {
    let mut window = window();
    let _card = ask_card(&mut window, "npm test", "aaaa1111");
    // Alone, the card is shown without the list; three minutes and a bit go by.
    let later = window.harness.ctx.input(|input| input.time) + 200.0;
    window.harness.input_mut().time = Some(later);
    window.harness.step();
    let _question = window.ask(&crate::ui::database_tool_use("toolu_age"));
    let listed = entries(&window);
    let card = listed.iter().find(|label| label.contains("tool call")).expect("the card's entry");
    assert!(card.ends_with(" · tool call · 3 min"), "{listed:?}");
}

/// Issue 26 leftovers: a card asked again after the inbox died (its relay's resend) is listed as
/// old as when it was first asked, which the store kept.
#[test]
fn a_card_asked_again_after_a_crash_keeps_its_age() {
    use askpane::store::{DraftSink, Store};
    let dir = crate::support::scratch_dir("cards-age-crash");
    let mut request = request("Bash", json!({"command": "npm test"}), None);
    request.tool_use_id = Some("toolu_age_crash_card".to_owned());
    let mut provenance = Provenance::new("claude", None).with_project(Some("shop".to_owned()));
    provenance.session = Some("aaaa1111".to_owned());
    // The inbox that died had it open since 200 s ago.
    {
        let mut store = Store::open_in(&dir).expect("a store");
        let key = askpane::store::card_key(&request, &provenance).expect("a call with an id");
        let asked = std::time::SystemTime::now() - std::time::Duration::from_secs(200);
        store.card_opened(&key, asked).expect("recorded");
    }
    let (sender, inbox) = transport::memory();
    let sink = DraftSink::start(Store::open_in(&dir).expect("a store")).expect("its writer");
    let harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(960.0, 680.0))
        .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::system_fonts()))
        .build_eframe(move |cc| {
            askpane::app::App::new(&cc.egui_ctx, inbox, askpane::app::AppOptions::default())
                .with_store(sink)
        });
    let mut window = Window { harness, sender };
    window.harness.step();
    let (reply, _decision) = transport::Responder::channel();
    let ask =
        transport::PermissionAsk { id: transport::RequestId::next(), request, provenance, reply };
    assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask)))));
    window.harness.step();
    let _question = window.ask(&crate::ui::database_tool_use("toolu_age_crash"));
    let listed = entries(&window);
    let card = listed.iter().find(|label| label.contains("tool call")).expect("the card's entry");
    assert!(card.ends_with(" · tool call · 3 min"), "{listed:?}");
}
