//! askpane stopped by a signal while a question is open: the real binary, a real window on its own
//! Xvfb (or the browser bridge), and the signal sent by PID. The agent still gets exactly one
//! reply, which names the signal, and the exit code says so (4; `hook` 0 once it printed). A
//! second signal while stopping loses nothing. Also: a window destroyed by another program
//! (`xdotool windowclose`) is a closed window, told in one line of stderr, never a backtrace.
//!
//! (`askpane claude` stopped by a signal, with its process group, is in `claude_host`.)

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use askpane::app::AppOptions;
use askpane::protocol::outcome::CLOSED_MESSAGE;
use askpane::protocol::parse_message;
use askpane::protocol::stream::{PermissionDecision, PermissionRequest};
use askpane::transport::signals::StopSignal;
use askpane::transport::{
    self, ApprovalEvent, Control, Inbound, PermissionAsk, Provenance, Request, RequestEvent,
    RequestId, Responder,
};
use egui_kittest::Harness;
use serde_json::{Value, json};

use crate::display::{App, Xvfb};
use crate::support::{Process, WAIT, collect, fixture, fixture_json, read_all};

/// The window title of the settings-capture questions, and an `xdotool search` pattern for it.
const LAYOUT_TITLE: &str = "Layout · 3 questions — askpane";
const LAYOUT_PATTERN: &str = "^Layout .* askpane$";

/// Every signal askpane answers for.
const SIGNALS: [&str; 5] = ["TERM", "INT", "HUP", "QUIT", "USR1"];

/// What the model reads when askpane was stopped by `SIG<name>`.
fn stopped_message(name: &str) -> String {
    format!(
        "askpane was stopped (SIG{name}) before the user answered. Do not assume an answer; ask \
         again in chat if you still need one."
    )
}

fn settings_capture() -> String {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/fixtures/settings-capture.json");
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// Sends `SIG<name>` to `pid` (the `kill` command, by PID).
fn send_signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid} failed");
}

/// Waits for askpane to exit after a signal; asserts its code, one stdout line, no panic.
fn finish_stopped(app: &mut App, code: i32) -> Value {
    let (status, lines) = app.finish(WAIT);
    let stderr = app.stderr();
    assert_eq!(status.code(), Some(code), "{lines:?}\nstderr:\n{stderr}");
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
    serde_json::from_str(&lines[0]).unwrap_or_else(|error| panic!("not JSON ({error}): {lines:?}"))
}

#[test]
fn every_signal_while_ask_shows_its_window_ends_it_with_one_reply_and_exit_4() {
    let xvfb = Xvfb::start();
    for name in SIGNALS {
        let mut app = App::start(&xvfb, &["ask", &settings_capture()]);
        app.wait_for_window(LAYOUT_PATTERN, LAYOUT_TITLE);
        send_signal(app.pid(), name);
        let reply = finish_stopped(&mut app, 4);
        assert_eq!(
            reply,
            json!({"outcome": "declined", "message": stopped_message(name)}),
            "SIG{name}"
        );
        let stderr = app.stderr();
        assert!(stderr.contains(&format!("askpane: stopped by SIG{name}")), "{stderr}");
    }
}

#[test]
fn a_second_signal_while_stopping_loses_nothing() {
    let xvfb = Xvfb::start();
    let mut app = App::start(&xvfb, &["ask", &settings_capture()]);
    app.wait_for_window(LAYOUT_PATTERN, LAYOUT_TITLE);
    // Three in a row, as an impatient Ctrl+C does.
    send_signal(app.pid(), "INT");
    send_signal(app.pid(), "INT");
    send_signal(app.pid(), "TERM");
    let reply = finish_stopped(&mut app, 4);
    // Signals that are pending together reach the watcher in no promised order (signal-hook
    // gathers them in one pass), so the first one seen may be any of those sent; what is
    // promised is one reply that names a signal that was sent, and a log that says the same.
    let first = ["INT", "TERM"]
        .into_iter()
        .find(|name| reply == json!({"outcome": "declined", "message": stopped_message(name)}))
        .unwrap_or_else(|| panic!("the reply names no signal that was sent: {reply}"));
    let stderr = app.stderr();
    assert!(stderr.contains(&format!("askpane: stopped by SIG{first}")), "{stderr}");
}

#[test]
fn a_hook_stopped_by_a_signal_denies_with_the_reason_and_exits_0() {
    let xvfb = Xvfb::start();
    let input = fixture("hook.pretooluse.stdin.json");
    let mut app = App::start_with_input(&xvfb, &["hook"], Some(&input));
    // A hook's window is named after the project the question comes from.
    app.wait_for_window_titled("3 questions .* askpane$", |_| {});
    send_signal(app.pid(), "TERM");
    // Claude Code reads a hook's stdout only when it exits 0.
    let reply = finish_stopped(&mut app, 0);
    assert_eq!(
        reply,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": stopped_message("TERM")}})
    );
}

#[test]
fn ask_in_the_browser_stopped_by_a_signal_gets_one_reply_and_exit_4() {
    if !crate::support::web_bundle_built() {
        return; // Built without scripts/build-web: `--ui web` is tested in `bridge`.
    }
    let file = settings_capture();
    let mut command = crate::support::askpane(&["ask", "--ui", "web", &file]);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut process = Process::new(command.spawn().expect("run askpane"));
    let stdout = read_all(process.child.stdout.take().expect("piped stdout"));
    let stderr = BufReader::new(process.child.stderr.take().expect("piped stderr"));
    let (lines_sender, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines_sender.send(line);
        }
    });
    // The question is open in the bridge once it says where the page is.
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).unwrap_or_else(|_| panic!("no URL: {seen:?}"));
        let found = line.starts_with("askpane: answer in your browser: ");
        seen.push(line);
        if found {
            break;
        }
    }
    send_signal(process.child.id(), "TERM");
    let status = process.wait(WAIT).expect("askpane ends after SIGTERM");
    let stdout = collect(stdout);
    seen.extend(lines.try_iter());
    assert_eq!(status.code(), Some(4), "stdout {stdout}\nstderr {seen:?}");
    let expected = json!({"outcome": "declined", "message": stopped_message("TERM")});
    assert_eq!(stdout, format!("{expected}\n"), "stderr {seen:?}");
    assert!(!seen.iter().any(|line| line.contains("panicked")), "{seen:?}");
}

#[test]
fn a_window_destroyed_by_another_program_is_a_closed_window_told_in_one_line() {
    let xvfb = Xvfb::start();
    let mut app = App::start(&xvfb, &["ask", &settings_capture()]);
    let window = app.wait_for_window(LAYOUT_PATTERN, LAYOUT_TITLE);
    // Destroys the window outright (no WM_DELETE_WINDOW): winit 0.30 panics on its next call.
    xvfb.xdotool(&["windowclose", &window.to_string()]);
    let reply = finish_stopped(&mut app, 1);
    assert_eq!(reply, json!({"outcome": "declined", "message": CLOSED_MESSAGE}));
    let stderr = app.stderr();
    assert!(!stderr.contains("backtrace") && !stderr.contains("RUST_BACKTRACE"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr:\n{stderr}");
    assert!(lines[0].starts_with("askpane: the window ended unexpectedly: "), "{stderr}");
    assert!(lines[0].ends_with("its open questions are answered as a closed window"), "{stderr}");
}

/// Issue 24: `askpane demo` stays open once its questions are answered (to try them again), and
/// Ctrl+C or SIGTERM must still end it then, as they do before.
#[test]
fn the_demo_ends_on_a_signal_also_once_its_questions_are_answered() {
    use crate::window::{DATABASE_PATTERN, DATABASE_QUESTION, DATABASE_TITLE};
    let xvfb = Xvfb::start();
    for name in ["INT", "TERM"] {
        let mut app = App::start(&xvfb, &["demo", "--fixture", "database"]);
        let window = app.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);
        // Keys in the moment the window takes the keyboard are dropped: `focus` waits that out
        // (`KEY_GRACE`).
        xvfb.focus(window);
        xvfb.keys(window, &["2", "ctrl+Return"]);
        let reply = app.reply();
        assert_eq!(reply["answers"], json!({ DATABASE_QUESTION: "MySQL" }), "SIG{name}: {reply}");
        send_signal(app.pid(), name);
        let (status, lines) = app.finish(WAIT);
        let stderr = app.stderr();
        assert_eq!(status.code(), Some(4), "SIG{name}: {lines:?}\nstderr:\n{stderr}");
        assert!(lines.is_empty(), "SIG{name}: one reply, already printed: {lines:?}");
        assert!(stderr.contains(&format!("askpane: stopped by SIG{name}")), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// In-process, the window with a question, a tool permission and a question still queued: the
/// shutdown message ends all three with the stop text.
#[test]
fn the_window_ends_questions_and_permissions_with_the_stop_message() {
    let (to_ui, inbox) = transport::memory();
    let asked = |id: &str| {
        let mut input = fixture_json("hook.pretooluse.stdin.json");
        input["tool_use_id"] = json!(id);
        let incoming = parse_message(&input).expect("a hook input");
        Request::new(incoming, Provenance::new("test", None)).expect("valid questions")
    };
    let (shown, shown_outcome) = asked("toolu_shown");
    to_ui.send(Inbound::Request(RequestEvent::Ask(Box::new(shown))));
    let (reply, decision) = Responder::channel();
    let request = PermissionRequest {
        request_id: "perm-1".to_owned(),
        tool_name: "Bash".to_owned(),
        input: json!({"command": "ls"}),
        tool_use_id: Some("toolu_bash".to_owned()),
        title: None,
        description: None,
        reason: None,
        agent_id: None,
        ..Default::default()
    };
    let permission = PermissionAsk {
        id: RequestId::next(),
        request,
        provenance: Provenance::new("claude", None),
        reply,
    };
    to_ui.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(permission))));
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::FONTS.clone()))
        .build_eframe(move |cc| askpane::app::App::new(&cc.egui_ctx, inbox, AppOptions::default()));
    harness.run();
    assert_eq!(harness.state().state().book().len(), 1, "the question is shown");

    // The shutdown, then one more question that arrives behind it.
    let (late, late_outcome) = asked("toolu_late");
    to_ui.send(Inbound::Control(Control::Shutdown { outcome: StopSignal::Hup.outcome() }));
    to_ui.send(Inbound::Request(RequestEvent::Ask(Box::new(late))));
    harness.step();
    let stopped = StopSignal::Hup.outcome();
    assert_eq!(shown_outcome.try_recv().ok(), Some(stopped.clone()));
    assert_eq!(late_outcome.try_recv().ok(), Some(stopped.clone()));
    assert_eq!(
        decision.try_recv().ok(),
        Some(PermissionDecision::Deny { message: stopped_message("HUP") })
    );
    assert!(harness.state().state().book().is_empty());
}
