//! `askpane claude` under the inbox (issue 10), real processes: a scripted Claude Code
//! (tests/fake-claude) hosted by `askpane claude`, whose question goes to a running `askpane
//! inbox` and whose reply comes back from it; an inbox that dies is started again and asked
//! again; an inbox that quits ends the session with an honest reply.

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use askpane::app::{App, AppOptions};
use askpane::transport::{self, inbox::InboxServer};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use serde_json::{Value, json};

use crate::claude_host::{FAKE, PROMPT, Report, has_text_with};
use crate::fake_api::FakeApi;
use crate::inbox::{Client, Connection, World};
use crate::interop::{self, Cli, Scratch};
use crate::support::WAIT;
use crate::ui::FONTS;

const DENY: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/session.deny.2.1.330.replay.jsonl");

/// `askpane claude` in `world` (its inbox, display and directories), replaying `transcript`.
fn hosted_claude(
    world: &World,
    transcript: &str,
    args: &[&str],
    unset: &[&str],
) -> (Client, PathBuf) {
    let report = world.root.join("report.json");
    let mut all = vec!["claude", "--claude-bin", FAKE, "-p", PROMPT];
    all.extend(args);
    let mut command = world.askpane(&all);
    command.env("FAKE_CLAUDE_TRANSCRIPT", transcript).env("FAKE_CLAUDE_REPORT", &report);
    for name in unset {
        command.env_remove(name);
    }
    (Client::spawn(command, ""), report)
}

/// The inbox's open requests, once there are some (a new connection each time: the inbox may
/// be a new one).
pub(crate) fn listed(world: &World) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let requests = world.connect().list();
        if !requests.is_empty() {
            return requests;
        }
        assert!(Instant::now() < deadline, "nothing was listed in the inbox");
        thread::sleep(Duration::from_millis(100));
    }
}

/// The fake's report once it has compared `count` host lines.
pub(crate) fn report_after(path: &Path, count: usize) -> Report {
    let deadline = Instant::now() + WAIT;
    loop {
        if path.exists() {
            let report = Report::read(path);
            if report.comparisons().len() >= count || Instant::now() > deadline {
                return report;
            }
        }
        assert!(Instant::now() < deadline, "the fake Claude Code wrote no report");
        thread::sleep(Duration::from_millis(100));
    }
}

/// The deny message of the reply the fake received to its question.
pub(crate) fn reply_message(report: &Report) -> String {
    let reply = report
        .comparisons()
        .iter()
        .find(|c| c["step"].as_str().is_some_and(|step| step.ends_with("control_response")))
        .and_then(|c| c["got_text"].as_str())
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .unwrap_or_else(|| panic!("no reply to the question\n{}", report.summary()));
    reply["response"]["response"]["message"].as_str().unwrap_or_default().to_owned()
}

/// Kills the inbox (SIGKILL: a crash) and waits until another holds the lock, started by the
/// client that was waiting on it.
pub(crate) fn kill_the_inbox_until_another_runs(world: &World) {
    let first = world.locked_pid().expect("the inbox holds its lock");
    send_signal(first, "KILL");
    let deadline = Instant::now() + WAIT;
    while world.locked_pid() == Some(first) || world.locked_pid().is_none() {
        assert!(Instant::now() < deadline, "no new inbox took the lock");
        thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn send_signal(pid: u32, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status();
    assert!(status.is_ok_and(|status| status.success()), "kill -{name} {pid}");
}

#[test]
fn a_hosted_sessions_question_is_listed_in_the_inbox_and_its_reply_goes_back_to_claude_code() {
    let world = World::with_inbox("hosted-question");
    // No display here: the running inbox shows the session all the same.
    let (claude, report) = hosted_claude(&world, DENY, &["--timeout", "2"], &["DISPLAY"]);
    let requests = listed(&world);
    assert_eq!(requests.len(), 1, "{requests:?}");
    let from = requests[0]["from"].as_str().unwrap_or_default();
    assert!(from.starts_with("claude · "), "{from}");
    assert_eq!(requests[0]["tool_use_id"], "toolu_fake_ask_000001");
    // The inbox decides it (--timeout travels with it) and writes the reply Claude Code reads:
    // initialize, the prompt, then the reply to the question.
    let compared = report_after(&report, 4);
    let summary = compared.summary();
    assert!(compared.comparisons().iter().all(|c| c["ok"] == true), "{summary}");
    let message = reply_message(&compared);
    assert!(message.starts_with("No response after 2s"), "{message}\n{summary}");
    // The question left the inbox; the session stays until askpane claude is stopped.
    assert!(world.connect().list().is_empty());
    send_signal(claude.pid(), "TERM");
    let (code, _, stderr) = claude.finish();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("are in the inbox"), "{stderr}");
    Report::read(&report).assert_all_ok(&stderr);
}

#[test]
fn an_inbox_that_dies_is_started_again_and_one_that_quits_ends_the_session_honestly() {
    let world = World::with_inbox("hosted-restart");
    let (claude, report) = hosted_claude(&world, DENY, &[], &[]);
    let before = listed(&world);
    // askpane claude starts another inbox and hands it the question again.
    kill_the_inbox_until_another_runs(&world);
    let after = listed(&world);
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["tool_use_id"], before[0]["tool_use_id"]);
    assert_eq!(after[0]["from"], before[0]["from"]);
    // `--quit` is deliberate: the question hears the inbox was closed, and the session ends.
    let mut quit = world.askpane(&["inbox", "--quit"]);
    let quitting = crate::support::run_bounded(&mut quit, None);
    assert_eq!(quitting.status.code(), Some(0), "{}", quitting.stderr);
    let (code, _, stderr) = claude.finish();
    let report = Report::read(&report);
    report.assert_all_ok(&stderr);
    assert!(reply_message(&report).contains("inbox was closed"), "{}", report.summary());
    // Claude Code's own exit code: the session ended as if its window closed.
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("the inbox went away; starting it again"), "{stderr}");
}

/// Steps the window until `done`, for at most WAIT.
fn step_until(
    harness: &mut Harness<'_, App>,
    what: &str,
    done: impl Fn(&Harness<'_, App>) -> bool,
) {
    let deadline = Instant::now() + WAIT;
    loop {
        harness.step();
        if done(harness) {
            harness.run();
            return;
        }
        assert!(Instant::now() < deadline, "waited {WAIT:?} for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_inbox_window_shows_each_hosted_session_and_sends_its_decisions_back_to_its_host() {
    let dir = crate::support::scratch_dir("hosted-window");
    let socket = dir.join("inbox.sock");
    let listener = UnixListener::bind(&socket).expect("bind a socket");
    let (to_ui, inbox) = transport::memory();
    let server = InboxServer::start(listener, socket.clone(), to_ui).expect("serve the socket");
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, AppOptions::default()));
    let host = |project: &str| {
        let mut host = Connection::new(UnixStream::connect(&socket).expect("connect"));
        host.receive_kind("hello");
        host.send(
            &json!({"type": "host", "agent": "claude", "project": project,
            "prompt": "Fix the tests"})
            .to_string(),
        );
        host.receive_kind("hosting");
        host
    };
    let mut alpha = host("alpha");
    alpha.send(
        &json!({"type": "session_event", "event": {"kind": "assistant",
        "blocks": [{"text": "Running the tests in alpha."}]}})
        .to_string(),
    );
    alpha.send(
        &json!({"type": "permission", "id": "p1", "request": {"request_id": "r1",
        "tool_name": "Bash", "input": {"command": "cargo test"}, "tool_use_id": "toolu_1"}})
        .to_string(),
    );
    step_until(&mut harness, "alpha's transcript and card", |harness| {
        has_text_with(harness, &["Running the tests in alpha."])
            && harness.query_by_role_and_label(Role::Button, "Allow once").is_some()
    });
    assert!(has_text_with(&harness, &["claude · alpha"]));
    // The card says which session asks (the inbox shows the cards of several side by side).
    assert!(has_text_with(&harness, &["· claude · alpha"]));
    harness.get_by_role_and_label(Role::Button, "Allow once").click();
    harness.run();
    let decided = alpha.receive_kind("permission_decided");
    assert_eq!(
        decided,
        json!({"type": "permission_decided", "id": "p1",
        "decision": {"behavior": "allow_once"}})
    );

    // A second session: a switcher names both; the prompt box sends to the one shown.
    let mut beta = host("beta");
    beta.send(
        &json!({"type": "session_event", "event": {"kind": "assistant",
        "blocks": [{"text": "Only beta says this."}]}})
        .to_string(),
    );
    step_until(&mut harness, "beta in the switcher", |harness| {
        harness.query_by_label_contains("claude · beta").is_some()
    });
    harness.get_by_label_contains("claude · beta").click();
    harness.run();
    assert!(has_text_with(&harness, &["Only beta says this."]));
    harness.get_by_role_and_label(Role::MultilineTextInput, "Prompt").focus();
    harness.run();
    harness.event(egui::Event::Text("Now the docs".to_owned()));
    harness.run();
    harness.get_by_role_and_label(Role::Button, "Send").click();
    harness.run();
    assert_eq!(beta.receive_kind("prompt"), json!({"type": "prompt", "text": "Now the docs"}));
    harness.get_by_role_and_label(Role::Button, "Stop").click();
    harness.run();
    assert_eq!(beta.receive_kind("interrupt"), json!({"type": "interrupt"}));
    harness.get_by_role_and_label(Role::Button, "End session").click();
    harness.run();
    assert_eq!(beta.receive_kind("end_session"), json!({"type": "end_session"}));

    // A host that goes away takes its session and its cards out of the window.
    alpha.send(
        &json!({"type": "permission", "id": "p2", "request": {"request_id": "r2",
        "tool_name": "Edit", "input": {"file_path": "src/lib.rs"}}})
        .to_string(),
    );
    step_until(&mut harness, "alpha's second card", |harness| {
        harness.query_by_role_and_label(Role::Button, "Allow once").is_some()
    });
    drop(alpha);
    step_until(&mut harness, "alpha gone", |harness| {
        // The switcher, the session's header and its card each name it: none may be left.
        harness.query_all_by_label_contains("claude · alpha").next().is_none()
            && harness.query_by_role_and_label(Role::Button, "Allow once").is_none()
    });
    drop(beta);
    drop(harness);
    server.stop();
}

#[test]
fn the_real_claude_code_under_the_inbox_reads_the_reply_the_inbox_decided() {
    // Each version waits out the inbox's 2 s: both at once, each in a world of its own.
    thread::scope(|scope| {
        for cli in [Cli::V2_1_330, Cli::V2_1_197] {
            scope.spawn(move || real_claude_code_under_the_inbox(cli));
        }
    });
}

/// [`the_real_claude_code_under_the_inbox_reads_the_reply_the_inbox_decided`] for one version.
fn real_claude_code_under_the_inbox(cli: Cli) {
    let world = World::with_inbox(&format!("hosted-real-{}", cli.version()));
    let scratch = Scratch::new(&format!("hosted-{}", cli.version()));
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
    }
    let api = FakeApi::start();
    let mut command = crate::support::askpane_command();
    command.arg("claude").arg("--claude-bin").arg(cli.binary());
    command.args(["-p", PROMPT, "--timeout", "2"]);
    scratch
        .isolate(&mut command, &api.base_url())
        .env("DISPLAY", world.xvfb.display())
        .env("XDG_RUNTIME_DIR", world.root.join("run"))
        .env("XDG_STATE_HOME", world.root.join("state"));
    let claude = Client::spawn(command, "");
    let requests = listed(&world);
    assert_eq!(requests[0]["from"], "claude · project", "{requests:?}");
    // The inbox decides (the time runs out) and Claude Code's model reads its reply.
    let deadline = Instant::now() + WAIT;
    while api.tool_results().is_empty() {
        assert!(Instant::now() < deadline, "{} read no tool_result", cli.version());
        thread::sleep(Duration::from_millis(100));
    }
    let results = api.tool_results();
    let [result] = results.as_slice() else { panic!("one tool_result: {results:?}") };
    assert_eq!(result["tool_use_id"], crate::fake_api::TOOL_USE_ID);
    let text = interop::tool_result_text(result);
    assert!(text.starts_with("No response after 2s"), "{}: {text}", cli.version());
    send_signal(claude.pid(), "TERM");
    let (code, _, stderr) = claude.finish();
    assert_eq!(code, Some(4), "{}: {stderr}", cli.version());
}

#[test]
fn hosting_messages_out_of_order_or_broken_get_an_error_and_the_connection_stays_usable() {
    let world = World::with_inbox("hosted-malformed");
    let mut connection = world.connect();
    let not_hosting =
        r#"{"type":"error","message":"this connection hosts no session: send `host` first"}"#;
    connection.send(r#"{"type":"session_event","event":{"kind":"assistant","blocks":[]}}"#);
    assert_eq!(connection.receive_text(), not_hosting);
    connection.send(
        r#"{"type":"permission","id":"p1","request":{"request_id":"r","tool_name":"Bash","input":{}}}"#,
    );
    assert_eq!(
        connection.receive_text(),
        r#"{"type":"error","message":"this connection hosts no session: send `host` first","id":"p1"}"#
    );
    connection.send(r#"{"type":"permission","id":"p2","request":{"tool_name":"Bash"}}"#);
    let error = connection.receive();
    assert_eq!(error["id"], "p2", "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("missing field")), "{error}");
    connection.send(r#"{"type":"host","agent":"claude"}"#);
    assert_eq!(connection.receive_kind("hosting"), json!({"type": "hosting"}));
    connection.send(r#"{"type":"host","agent":"claude"}"#);
    assert_eq!(
        connection.receive_text(),
        r#"{"type":"error","message":"this connection hosts a session already"}"#
    );
    connection.send(r#"{"type":"withdraw_permission","id":"nope"}"#);
    assert_eq!(
        connection.receive_text(),
        r#"{"type":"error","message":"no open permission \"nope\" on this connection","id":"nope"}"#
    );
    // Still usable: a card is taken, and a second one with its id is refused.
    let card = r#"{"type":"permission","id":"p3","request":{"request_id":"r3","tool_name":"Bash","input":{"command":"ls"}}}"#;
    connection.send(card);
    connection.send(card);
    assert_eq!(
        connection.receive_text(),
        r#"{"type":"error","message":"permission \"p3\" is already open on this connection","id":"p3"}"#
    );
    // Issue 29: the card waits for the person, so `list` has it too (for `askpane status`),
    // marked as an approval.
    let listed = connection.list();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!((&listed[0]["id"], &listed[0]["kind"]), (&json!("p3"), &json!("approval")));
}

/// Issue 24 item 15: the inbox window keeps a long hosted session's newest entries (200 results
/// of 60 KB are past its 8 MiB) and says above the first how many earlier ones it dropped.
#[test]
fn the_inbox_window_keeps_a_long_sessions_newest_entries_and_says_how_many_it_dropped() {
    let dir = crate::support::scratch_dir("hosted-long-window");
    let socket = dir.join("inbox.sock");
    let listener = UnixListener::bind(&socket).expect("bind a socket");
    let (to_ui, inbox) = transport::memory();
    let server = InboxServer::start(listener, socket.clone(), to_ui).expect("serve the socket");
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, AppOptions::default()));
    let mut host = Connection::new(UnixStream::connect(&socket).expect("connect"));
    host.receive_kind("hello");
    host.send(&json!({"type": "host", "agent": "claude", "project": "long"}).to_string());
    host.receive_kind("hosting");
    let content = "0123456789abcdef\n".repeat(3_600);
    for n in 0..200 {
        host.send(
            &json!({"type": "session_event", "event": {"kind": "user", "blocks": [{"tool_result":
                {"tool_use_id": format!("toolu_{n}"), "content": content, "is_error": false}}]}})
            .to_string(),
        );
    }
    host.send(
        &json!({"type": "session_event", "event": {"kind": "assistant",
            "blocks": [{"text": "The last of 200."}]}})
        .to_string(),
    );
    step_until(&mut harness, "the last entry", |harness| {
        has_text_with(harness, &["The last of 200."])
    });
    // Up to the top of the transcript (it keeps to the bottom as entries come).
    harness.event(egui::Event::PointerMoved(egui::pos2(300.0, 400.0)));
    for _ in 0..20 {
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Page,
            delta: egui::vec2(0.0, 100.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
            modifiers: egui::Modifiers::NONE,
        });
        // Scrolling animates: frames, not a settled run.
        harness.run_steps(10);
    }
    step_until(&mut harness, "the line about the earlier entries", |harness| {
        has_text_with(harness, &["earlier events dropped: askpane keeps the last 10 000 events"])
    });
    drop(host);
    drop(harness);
    server.stop();
}
