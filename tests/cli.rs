//! `askpane ask`, `askpane hook` and `askpane install|uninstall claude` run the way a user, a
//! script or Claude Code runs them: the built binary, a request on stdin or in a file, and the one
//! line of JSON and the exit code that come back, compared with literal JSON and with the captured
//! host and hook replies in `tests/fixtures/`.
//!
//! Every child runs with no `ASKPANE_*` variable and no `DISPLAY`/`WAYLAND_DISPLAY` unless the test
//! sets them, and `install`/`uninstall` always run with `HOME` set to a scratch directory, so the
//! real settings are never read or written. The tests that need a window start their own Xvfb
//! (`crate::display`); every wait is bounded.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use askpane::protocol::outcome::CLOSED_MESSAGE;
use serde_json::{Value, json};

use crate::display::{App, Xvfb, send_wm_delete_window};
use crate::support::{
    Finished, Session, WAIT, as_the_dialog_sends, assert_same_json, capture_preview, compact,
    fixture, fixture_json, run_bounded, scratch_dir,
};

const LAYOUT: &str = "Which layout should the settings page use?";
const FEATURES: &str = "Which features do you want to enable?";
const DATABASE: &str = "どのデータベースを使いますか？";
/// The window title of the settings-capture questions, and an `xdotool search --name` pattern
/// for it (xdotool reads the em dash as Latin-1; see `window.rs`).
const LAYOUT_TITLE: &str = "Layout · 3 questions — askpane";
const LAYOUT_PATTERN: &str = "^Layout .* askpane$";

/// The captured stream-json session whose host answered with a label plus a note, a multi-select
/// join and Japanese free text.
const NOTES_SESSION: &str = "session.answer-with-notes.2.1.330.jsonl";

// ---------------------------------------------------------------------------------------------
// Running askpane

/// Runs `askpane <args>` (clean environment plus `env`) to its end, feeding it `stdin`.
fn run_askpane(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Finished {
    let mut command = crate::support::askpane(args);
    command.envs(env.iter().copied());
    let run = run_bounded(&mut command, stdin);
    assert!(!run.stderr.contains("panicked"), "askpane panicked: {run:?}");
    run
}

/// The one line askpane printed, parsed: stdout must be exactly one JSON line and nothing else.
fn one_line(run: &Finished) -> Value {
    assert!(run.stdout.ends_with('\n'), "stdout does not end in a newline: {run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "stdout is not one line: {run:?}");
    serde_json::from_str(lines[0])
        .unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {run:?}"))
}

/// Asserts the exit code, then returns the one line of stdout.
fn exit_and_reply(run: &Finished, code: i32) -> Value {
    assert_eq!(run.status.code(), Some(code), "exit code: {run:?}");
    one_line(run)
}

/// Asserts stdout is exactly `expected` as one compact line (so key order and escapes count).
fn assert_line(run: &Finished, expected: &Value) {
    let ours = one_line(run);
    assert_same_json(&ours, expected);
    assert_eq!(run.stdout, format!("{}\n", compact(expected)), "not byte-identical: {run:?}");
}

/// stderr is exactly one line starting with `askpane`, and it contains each of `needles`.
fn assert_one_stderr_line(run: &Finished, needles: &[&str]) {
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr is not one line: {run:?}");
    assert!(lines[0].starts_with("askpane"), "{run:?}");
    for needle in needles {
        assert!(lines[0].contains(needle), "stderr does not name {needle:?}: {run:?}");
    }
}

/// A scratch directory with `files` written into it.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch_dir(&format!("cli-{name}"));
    for (file, text) in files {
        fs::write(dir.join(file), text).expect("write a scratch file");
    }
    dir
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("scratch paths are UTF-8")
}

// ---------------------------------------------------------------------------------------------
// The requests, one per envelope, all carrying the three captured questions

/// The captured `can_use_tool` control_request.
fn control_request() -> Value {
    Session::load(NOTES_SESSION).can_use_tool
}

/// The raw tool input `{"questions": …}` of the captures.
fn tool_input() -> Value {
    control_request()["request"]["input"].clone()
}

fn questions() -> Value {
    tool_input()["questions"].clone()
}

fn tool_use() -> Value {
    json!({"type": "tool_use", "id": "toolu_cli_000001", "name": "AskUserQuestion",
           "input": tool_input()})
}

fn seed_web() -> Value {
    json!({"type": "user_question", "tool_use_id": "t1", "questions": questions(),
           "timestamp": "2026-11-21T20:56:22.619Z"})
}

fn settings_capture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/fixtures/settings-capture.json")
}

/// An answers file with labels only, keyed by header, question text and header, in each value
/// form: Tabs; Dark mode + Export; SQLite.
const LABELS: &str = r#"{"Layout": "Tabs",
    "Which features do you want to enable?": ["Export", "Dark mode"],
    "データベース": {"choose": "SQLite"}}"#;

/// The selections the captured host sent in `NOTES_SESSION`: Sidebar with a note, Dark mode +
/// Export, and Other text on the Japanese question.
const CAPTURED_SELECTIONS: &str = r#"{
    "Layout": {"choose": "Sidebar", "notes": "Keep the sidebar narrow, please."},
    "Features": ["Dark mode", "Export"],
    "データベース": {"other": "MySQL を Docker で動かしたい"}}"#;

/// The selections of the captured hook replies: Tabs; Search + Export; SQLite.
const HOOK_SELECTIONS: &str = r#"{"Layout": "Tabs", "Features": ["Search", "Export"], "どのデータベースを使いますか？": "SQLite"}"#;

/// What `LABELS` answers, keyed by question text.
fn label_answers() -> Value {
    json!({LAYOUT: "Tabs", FEATURES: "Dark mode, Export", DATABASE: "SQLite"})
}

/// The tool input answered with `LABELS`, as Claude Code's dialog sends it: the picked layout's
/// mockup goes with the answer.
fn label_reply() -> Value {
    json!({"questions": questions(), "answers": label_answers(),
        "annotations": {LAYOUT: {"preview": capture_preview("Tabs")}}})
}

/// A recorded reply of the captures, as the dialog would have sent it with `label` picked.
fn dialog(recorded: &Value, label: &str) -> Value {
    as_the_dialog_sends(recorded, &[(LAYOUT, &capture_preview(label))])
}

/// `askpane ask <request file> --answers <answers> --submit [extra…]`.
fn ask_submitted(name: &str, request: &Value, answers: &str, extra: &[&str]) -> Finished {
    let dir = scratch(name, &[("request.json", &request.to_string()), ("answers.json", answers)]);
    let (request, answers) = (dir.join("request.json"), dir.join("answers.json"));
    let mut args = vec!["ask", path_str(&request), "--answers", path_str(&answers), "--submit"];
    args.extend(extra);
    let run = run_askpane(&args, &[], None);
    let _ = fs::remove_dir_all(&dir);
    run
}

// ---------------------------------------------------------------------------------------------
// 1. Every envelope in, the matching reply out (answered without a window)

#[test]
fn ask_answers_a_raw_tool_input_with_the_questions_and_answers() {
    let run = ask_submitted("raw", &tool_input(), LABELS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &label_reply());
}

#[test]
fn ask_answers_a_tool_use_block_with_the_tool_input() {
    let run = ask_submitted("tool-use", &tool_use(), LABELS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &label_reply());
}

#[test]
fn ask_answers_a_control_request_byte_for_byte_as_the_captured_host_did() {
    let session = Session::load(NOTES_SESSION);
    let run = ask_submitted("control-request", &session.can_use_tool, CAPTURED_SELECTIONS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &dialog(&session.host_reply, "Sidebar"));
}

#[test]
fn ask_answers_hook_inputs_as_the_captured_hooks_did() {
    let run = ask_submitted(
        "pre-tool-use",
        &fixture_json("hook.pretooluse.stdin.json"),
        HOOK_SELECTIONS,
        &[],
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let mut expected = fixture_json("hook.pretooluse.allow.stdout.json");
    expected["hookSpecificOutput"]["permissionDecisionReason"] = json!("Answered in askpane");
    assert_line(&run, &dialog(&expected, "Tabs"));

    let run = ask_submitted(
        "permission-request",
        &fixture_json("hook.permissionrequest.stdin.json"),
        HOOK_SELECTIONS,
        &[],
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &dialog(&fixture_json("hook.permissionrequest.allow.stdout.json"), "Tabs"));
}

#[test]
fn ask_answers_a_seed_web_question_by_option_number() {
    let run = ask_submitted("seed-web", &seed_web(), LABELS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let expected =
        r#"{"type":"question_answer","tool_use_id":"t1","answers":{"0":"2","1":"1,3","2":"2"}}"#;
    assert_eq!(run.stdout, format!("{expected}\n"), "{run:?}");

    let run = ask_submitted("seed-web-notes", &seed_web(), CAPTURED_SELECTIONS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let expected = r#"{"type":"question_answer","tool_use_id":"t1","answers":{"0":"1","1":"1,3","2":"other:MySQL を Docker で動かしたい"},"notes":{"0":"Keep the sidebar narrow, please."}}"#;
    assert_eq!(run.stdout, format!("{expected}\n"), "{run:?}");
}

#[test]
fn ask_reads_pretty_printed_json_on_stdin() {
    let dir = scratch("pretty", &[("answers.json", LABELS)]);
    let answers = dir.join("answers.json");
    let pretty = serde_json::to_string_pretty(&tool_input()).expect("serialise");
    assert!(pretty.lines().count() > 20, "the request is spread over many lines");
    let run =
        run_askpane(&["ask", "--answers", path_str(&answers), "--submit"], &[], Some(&pretty));
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &label_reply());

    // `-` names standard input explicitly; a pretty control_request gets its control_response.
    let session = Session::load(NOTES_SESSION);
    let pretty = serde_json::to_string_pretty(&session.can_use_tool).expect("serialise");
    let file = dir.join("captured.json");
    fs::write(&file, CAPTURED_SELECTIONS).expect("write the answers");
    let run =
        run_askpane(&["ask", "-", "--answers", path_str(&file), "--submit"], &[], Some(&pretty));
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &dialog(&session.host_reply, "Sidebar"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn format_overrides_the_envelope_of_the_reply() {
    let updated_input = label_reply();

    // Raw tool input answered as a control_response: no request to name, so the id is empty.
    let run = ask_submitted("format-cr", &tool_input(), LABELS, &["--format", "control-response"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(
        &run,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "",
            "response": {"behavior": "allow", "updatedInput": updated_input}}}),
    );

    // A control_request answered as plain tool input.
    let run = ask_submitted("format-ti", &control_request(), LABELS, &["--format", "tool-input"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &updated_input);

    // A tool_use block answered as a PreToolUse hook output.
    let run = ask_submitted("format-pre", &tool_use(), LABELS, &["--format", "pre-tool-use"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(
        &run,
        &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "permissionDecisionReason": "Answered in askpane",
            "updatedInput": updated_input}}),
    );

    // A decline in another envelope: the control_response deny carries the tool_use id.
    let dir = scratch("format-decline", &[("request.json", &tool_use().to_string())]);
    let request = dir.join("request.json");
    let run = run_askpane(
        &["ask", path_str(&request), "--decline", "no", "--format", "control-response"],
        &[],
        None,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_line(
        &run,
        &json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": "toolu_cli_000001", "response": {"behavior": "deny",
            "message": "The user declined to answer these questions and said: no",
            "toolUseID": "toolu_cli_000001"}}}),
    );
    let _ = fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// 2. Exit codes, each with exactly one line on stdout

#[test]
fn decline_exits_1_with_the_users_message() {
    let dir = scratch("decline", &[("request.json", &tool_input().to_string())]);
    let request = dir.join("request.json");
    let run = run_askpane(&["ask", path_str(&request), "--decline", "msg"], &[], None);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_line(
        &run,
        &json!({"outcome": "declined",
            "message": "The user declined to answer these questions and said: msg"}),
    );

    // ASKPANE_DECLINE does the same; a control_request gets the CLI's deny shape.
    let session = Session::load(NOTES_SESSION);
    let run = run_askpane(
        &["ask", "-"],
        &[("ASKPANE_DECLINE", "msg")],
        Some(&session.can_use_tool.to_string()),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_line(
        &run,
        &json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": "733ae786-43af-49d1-affe-83c1f5c3a8e2", "response": {"behavior": "deny",
            "message": "The user declined to answer these questions and said: msg",
            "toolUseID": "toolu_fake_ask_000001"}}}),
    );
    let _ = fs::remove_dir_all(&dir);
}

/// The refusal text the model reads for an invalid request.
fn refused(reason: &str) -> Value {
    json!({"outcome": "refused", "message": format!(
        "These questions could not be shown to the user because the AskUserQuestion input is \
         invalid: {reason}. Fix the input and call AskUserQuestion again.")})
}

#[test]
fn invalid_input_exits_2_with_a_refusal_that_says_why() {
    // No questions.
    let run = run_askpane(&["ask"], &[], Some(r#"{"questions": []}"#));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_line(&run, &refused("`questions` is empty: there is nothing to ask"));
    assert_one_stderr_line(&run, &["`questions` is empty"]);

    // Not JSON at all.
    let run = run_askpane(&["ask"], &[], Some("this is not JSON\n"));
    let reply = exit_and_reply(&run, 2);
    assert_eq!(reply["outcome"], "refused", "{run:?}");
    let message = reply["message"].as_str().expect("a message");
    assert!(message.contains("standard input is not JSON"), "{run:?}");
    assert_one_stderr_line(&run, &["standard input is not JSON"]);

    // JSON, but no envelope askpane knows.
    let run = run_askpane(&["ask"], &[], Some(r#"{"foo": 1}"#));
    let reply = exit_and_reply(&run, 2);
    assert_eq!(reply["outcome"], "refused", "{run:?}");
    let message = reply["message"].as_str().expect("a message");
    assert!(message.contains("not a message askpane understands"), "{run:?}");
    assert_one_stderr_line(&run, &["standard input", "not a message askpane understands"]);

    // A tool_use block for another tool.
    let bash = json!({"type": "tool_use", "id": "toolu_x", "name": "Bash",
                      "input": {"command": "ls"}});
    let run = run_askpane(&["ask"], &[], Some(&bash.to_string()));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_line(&run, &refused("this tool_use block is for the tool `Bash`, not AskUserQuestion"));
    assert_one_stderr_line(&run, &["`Bash`"]);

    // A file that does not exist is the caller's mistake, not the agent's: named on stderr (exit
    // 2), and the agent hears that nobody could be asked, never "fix your input".
    let run = run_askpane(&["ask", "/nonexistent/askpane-request.json"], &[], None);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_line(
        &run,
        &unavailable(
            "askpane could not read the request: cannot read /nonexistent/askpane-request.json: \
             No such file or directory (os error 2)",
        ),
    );
    assert_one_stderr_line(&run, &["cannot read /nonexistent/askpane-request.json"]);

    // An invalid control_request is refused in its own envelope: a deny the CLI reads.
    let mut request = control_request();
    request["request"]["input"] = json!({"questions": []});
    let run = run_askpane(&["ask"], &[], Some(&request.to_string()));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let message = refused("`questions` is empty: there is nothing to ask")["message"].clone();
    assert_line(
        &run,
        &json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": "733ae786-43af-49d1-affe-83c1f5c3a8e2", "response": {"behavior": "deny",
            "message": message, "toolUseID": "toolu_fake_ask_000001"}}}),
    );
}

#[test]
fn an_answers_file_naming_an_unknown_question_or_label_exits_2_and_names_it() {
    for (answers, named) in [
        (r#"{"Colour": "Red"}"#, r#""Colour""#),
        (r#"{"Layout": "Grid"}"#, r#""Grid""#),
        (r#"{"Which features do you want to enable?": ["Dark mode", "Sync"]}"#, r#""Sync""#),
    ] {
        let run = ask_submitted("unknown", &tool_input(), answers, &[]);
        let reply = exit_and_reply(&run, 2);
        assert_one_stderr_line(&run, &["--answers", named]);
        // A well-formed reply: nobody's answer was invented.
        let object = reply.as_object().expect("an object");
        assert_eq!(object.keys().collect::<Vec<_>>(), ["outcome", "message"], "{run:?}");
        assert_eq!(reply["outcome"], "unavailable", "{run:?}");
        assert!(reply["message"].as_str().is_some_and(|m| m.contains(named)), "{run:?}");
    }
}

/// The reply when no human can answer, for `reason`.
fn unavailable(reason: &str) -> Value {
    json!({"outcome": "unavailable", "message": format!(
        "No human is available to answer questions right now ({reason}). Proceed with reasonable \
         assumptions and state them clearly, or stop and report what you need decided.")})
}

#[test]
fn no_human_exits_3_with_the_unavailable_reply() {
    let input = tool_input().to_string();
    let non_interactive =
        unavailable("askpane runs non-interactively (--non-interactive or ASKPANE_NONINTERACTIVE)");
    // A display is set (to a server that does not exist): the flag alone must keep the window shut.
    let display = [("DISPLAY", ":4711")];

    let run = run_askpane(&["ask", "--non-interactive"], &display, Some(&input));
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    assert_line(&run, &non_interactive);

    let env = [("DISPLAY", ":4711"), ("ASKPANE_NONINTERACTIVE", "1")];
    let run = run_askpane(&["ask"], &env, Some(&input));
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    assert_line(&run, &non_interactive);

    let no_display = unavailable("no display: DISPLAY and WAYLAND_DISPLAY are not set");
    let run = run_askpane(&["ask"], &[], Some(&input));
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    assert_line(&run, &no_display);
    // Empty variables are no display either; ASKPANE_NONINTERACTIVE=0 is off.
    let env = [("DISPLAY", ""), ("WAYLAND_DISPLAY", ""), ("ASKPANE_NONINTERACTIVE", "0")];
    let run = run_askpane(&["ask"], &env, Some(&input));
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    assert_line(&run, &no_display);
}

/// While a countdown runs the title starts with the time left: `⏱ 0:02 · Layout · 3 questions — askpane`.
const COUNTDOWN_PATTERN: &str = "Layout .* askpane$";

fn assert_countdown_title(title: &str) {
    assert!(
        title.starts_with("⏱ 0:0") && title.ends_with(" · Layout · 3 questions — askpane"),
        "the title counts down: {title:?}"
    );
}

#[test]
fn nobody_at_the_window_times_out_with_exit_5() {
    let xvfb = Xvfb::start();
    let capture = settings_capture_path();
    let started = Instant::now();
    let mut app = App::start(&xvfb, &["ask", "--timeout", "2", path_str(&capture)]);
    app.wait_for_window_titled(COUNTDOWN_PATTERN, assert_countdown_title);
    let (status, lines) = app.finish(WAIT);
    let elapsed = started.elapsed();
    assert_eq!(status.code(), Some(5), "{lines:?}\nstderr:\n{}", app.stderr());
    assert!(elapsed >= Duration::from_secs(2), "timed out after only {elapsed:?}");
    assert!(elapsed < Duration::from_secs(12), "took {elapsed:?} to time out after 2 s");
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{}", app.stderr());
    let expected = r#"{"outcome":"timed_out","message":"No response after 2s — the user may be away from keyboard. Proceed using your best judgment based on the context so far; you can re-ask this question later if it's still relevant."}"#;
    assert_eq!(lines[0], expected);
}

/// Issue 24 item 6 changed what the model reads: a preset nobody confirmed is told apart, never
/// as what "the user had selected".
#[test]
fn preset_answers_left_unconfirmed_are_told_as_picks_not_sent_as_answers() {
    let xvfb = Xvfb::start();
    let capture = settings_capture_path();
    let dir = scratch("timeout-partial", &[("answers.json", r#"{"Layout": "Tabs"}"#)]);
    let answers = dir.join("answers.json");
    let args = ["ask", "--timeout", "2", "--answers", path_str(&answers), path_str(&capture)];
    let mut app = App::start(&xvfb, &args);
    app.wait_for_window_titled(COUNTDOWN_PATTERN, assert_countdown_title);
    let (status, lines) = app.finish(WAIT);
    assert_eq!(status.code(), Some(5), "not every question had an answer: {lines:?}");
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{}", app.stderr());
    let expected = json!({"outcome": "timed_out", "message": "No response after 2s — the user \
        may be away from keyboard. Proceed using your best judgment based on the context so far; \
        you can re-ask this question later if it's still relevant.\n\nAnswers were filled in \
        in advance for the user to confirm, but nobody confirmed them: \"Which layout should the \
        settings page use?\"=\"Tabs\" selected preview:\n".to_owned()
        + &capture_preview("Tabs")
        + ". They are not the user's answers."});
    let reply: Value = serde_json::from_str(&lines[0]).expect("the reply is JSON");
    assert_same_json(&reply, &expected);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_key_stops_the_countdown_and_the_window_waits_for_the_answer() {
    let xvfb = Xvfb::start();
    let capture = settings_capture_path();
    let timeout = Duration::from_secs(4);
    let mut app = App::start(&xvfb, &["ask", "--timeout", "4", path_str(&capture)]);
    let window = app.wait_for_window_titled(COUNTDOWN_PATTERN, assert_countdown_title);
    let shown = Instant::now();
    xvfb.focus(window);
    xvfb.xdotool(&["key", "--window", &window.to_string(), "2"]);
    // An end that does not come marks nothing: wait until well past the deadline the window
    // kept (`--timeout` from its showing, and a second more): any key meant "stay".
    let past_the_deadline = shown + timeout + Duration::from_secs(1);
    thread::sleep(past_the_deadline.saturating_duration_since(Instant::now()));
    assert_eq!(app.process.exited(), None, "the countdown stopped: askpane still waits");
    assert_eq!(
        crate::display::window_name(&xvfb.display(), window),
        LAYOUT_TITLE,
        "no countdown in the title any more"
    );
    xvfb.keys(window, &["ctrl+Return", "ctrl+Return"]);
    let (status, lines) = app.finish(WAIT);
    assert_eq!(status.code(), Some(0), "{lines:?}\nstderr:\n{}", app.stderr());
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{}", app.stderr());
    let reply: Value = serde_json::from_str(&lines[0]).expect("the reply is JSON");
    let expected = json!({"questions": questions(), "answers": {LAYOUT: "Tabs"},
        "annotations": {LAYOUT: {"preview": capture_preview("Tabs")}}});
    assert_same_json(&reply, &expected);
}

// ---------------------------------------------------------------------------------------------
// 3. `ask` through the real window

#[test]
fn ask_window_answers_from_the_keyboard_and_closes_by_itself() {
    let xvfb = Xvfb::start();
    let capture = settings_capture_path();
    let mut app = App::start(&xvfb, &["ask", path_str(&capture)]);
    let window = app.wait_for_window(LAYOUT_PATTERN, LAYOUT_TITLE);
    xvfb.focus(window);
    // Tabs, next; Dark mode + Export, next; SQLite, next; submit on Review.
    xvfb.keys(window, &["2", "Return", "1", "3", "Return", "2", "Return", "Return"]);
    let (status, lines) = app.finish(WAIT);
    assert_eq!(status.code(), Some(0), "{lines:?}\nstderr:\n{}", app.stderr());
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{}", app.stderr());
    let reply: Value = serde_json::from_str(&lines[0]).expect("the reply is JSON");
    assert_same_json(&reply, &label_reply());
    assert_eq!(xvfb.find_window(LAYOUT_PATTERN), None, "the window is still shown");
}

/// A machine where fontconfig matches no font at all (a bare container, a broken
/// `FONTCONFIG_FILE`): the window draws with egui's own fonts (the Japanese question as tofu),
/// stays past the moment the system's fonts are enumerated (a second after it starts), and the
/// person's answer is what the agent gets, never a closed window.
#[test]
fn ask_window_without_any_system_font_stays_and_sends_the_answer() {
    let xvfb = Xvfb::start();
    let capture = settings_capture_path();
    // An empty configuration: no font directory, so fontconfig matches nothing. Its cache stays
    // in the scratch directory.
    let dir = scratch("no-fonts", &[]);
    let empty = format!(
        "<?xml version=\"1.0\"?>\n<fontconfig><cachedir>{}</cachedir></fontconfig>\n",
        dir.join("fontcache").display()
    );
    fs::write(dir.join("fonts.conf"), empty).expect("write the empty fontconfig file");
    let fonts_conf = dir.join("fonts.conf");
    let env = [("FONTCONFIG_FILE", path_str(&fonts_conf))];
    let mut app = App::start_with_env(&xvfb, &["ask", path_str(&capture)], None, &env);
    let window = app.wait_for_window(LAYOUT_PATTERN, LAYOUT_TITLE);
    // Past the enumeration (it starts a second after the window does).
    assert!(app.silent_for(Duration::from_secs(3)), "the window ended:\n{}", app.stderr());
    xvfb.focus(window);
    // Tabs, next; Dark mode + Export, next; SQLite (the page of the Japanese question), next;
    // submit on Review.
    xvfb.keys(window, &["2", "Return", "1", "3", "Return", "2", "Return", "Return"]);
    let (status, lines) = app.finish(WAIT);
    assert_eq!(status.code(), Some(0), "{lines:?}\nstderr:\n{}", app.stderr());
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{}", app.stderr());
    let reply: Value = serde_json::from_str(&lines[0]).expect("the reply is JSON");
    assert_same_json(&reply, &label_reply());
    assert!(!app.stderr().contains("panicked"), "stderr:\n{}", app.stderr());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn closing_the_ask_window_declines_with_exit_1() {
    let xvfb = Xvfb::start();
    let capture = settings_capture_path();
    let mut app = App::start(&xvfb, &["ask", path_str(&capture)]);
    let window = app.wait_for_window(LAYOUT_PATTERN, LAYOUT_TITLE);
    send_wm_delete_window(xvfb.number, window);
    let (status, lines) = app.finish(WAIT);
    assert_eq!(status.code(), Some(1), "{lines:?}\nstderr:\n{}", app.stderr());
    assert_eq!(lines.len(), 1, "stdout: {lines:?}\nstderr:\n{}", app.stderr());
    let reply: Value = serde_json::from_str(&lines[0]).expect("the reply is JSON");
    assert_same_json(&reply, &json!({"outcome": "declined", "message": CLOSED_MESSAGE}));
    assert!(!app.stderr().contains("panicked"), "stderr:\n{}", app.stderr());
}

// ---------------------------------------------------------------------------------------------
// 4. `hook`, as Claude Code runs it: the hook input on stdin, settings only from the environment

fn pre_tool_use() -> String {
    fixture("hook.pretooluse.stdin.json")
}

fn permission_request() -> String {
    fixture("hook.permissionrequest.stdin.json")
}

/// `askpane hook [args]` with `env`, the hook input on stdin; exits 0.
fn hook(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Finished {
    let mut all = vec!["hook"];
    all.extend(args);
    let run = run_askpane(&all, env, Some(stdin));
    assert_eq!(run.status.code(), Some(0), "a hook must exit 0 here: {run:?}");
    run
}

#[test]
fn hook_answers_from_the_environment_as_the_captured_hooks_did() {
    let dir = scratch("hook-answers", &[("answers.json", HOOK_SELECTIONS)]);
    let answers = dir.join("answers.json");
    let env = [("ASKPANE_ANSWERS", path_str(&answers)), ("ASKPANE_SUBMIT", "1")];

    let run = hook(&[], &env, &pre_tool_use());
    let mut expected = fixture_json("hook.pretooluse.allow.stdout.json");
    expected["hookSpecificOutput"]["permissionDecisionReason"] = json!("Answered in askpane");
    assert_line(&run, &dialog(&expected, "Tabs"));

    let run = hook(&[], &env, &permission_request());
    assert_line(&run, &dialog(&fixture_json("hook.permissionrequest.allow.stdout.json"), "Tabs"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn hook_decline_from_the_environment_denies_with_the_message() {
    let env = [("ASKPANE_DECLINE", "use postgres")];
    let message = "The user declined to answer these questions and said: use postgres";
    let run = hook(&[], &env, &pre_tool_use());
    assert_line(
        &run,
        &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": message}}),
    );
    let run = hook(&[], &env, &permission_request());
    assert_line(
        &run,
        &json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": message}}}),
    );
}

#[test]
fn hook_without_a_display_leaves_the_question_to_claude_code() {
    let run = hook(&[], &[], &pre_tool_use());
    assert_line(
        &run,
        &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "askpane cannot ask here (no display: DISPLAY and \
                WAYLAND_DISPLAY are not set); Claude Code asks instead"}}),
    );
    let run = hook(&[], &[], &permission_request());
    assert_eq!(run.stdout, "", "PermissionRequest with no human: no decision at all: {run:?}");
}

#[test]
fn hook_fallback_terminal_leaves_the_question_to_claude_code_even_with_a_display() {
    // A display that does not exist: had askpane tried to open a window, it would say so.
    let env = [("DISPLAY", ":4711")];
    let run = hook(&["--fallback", "terminal"], &env, &pre_tool_use());
    let reply = one_line(&run);
    let output = &reply["hookSpecificOutput"];
    let keys: Vec<&String> = output.as_object().expect("an object").keys().collect();
    assert_eq!(
        keys,
        ["hookEventName", "permissionDecision", "permissionDecisionReason"],
        "an allow without updatedInput: {run:?}"
    );
    assert_eq!(output["hookEventName"], "PreToolUse");
    assert_eq!(output["permissionDecision"], "allow");
    let reason = output["permissionDecisionReason"].as_str().expect("a reason");
    assert!(reason.ends_with("Claude Code asks instead"), "{run:?}");
    assert!(!reason.contains("4711") && !reason.contains("window"), "{run:?}");

    let run = hook(&["--fallback", "terminal"], &env, &permission_request());
    assert_eq!(run.stdout, "", "{run:?}");
}

#[test]
fn hook_ignores_other_tools_and_garbage() {
    let bash = pre_tool_use()
        .replace(r#""tool_name":"AskUserQuestion""#, r#""tool_name":"Bash""#)
        .replace(r#""tool_input":{"questions""#, r#""tool_input":{"command":"ls","questions""#);
    assert!(bash.contains(r#""tool_name":"Bash""#));
    let run = hook(&[], &[("DISPLAY", ":4711")], &bash);
    assert_eq!(run.stdout, "", "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");

    let run = hook(&[], &[("DISPLAY", ":4711")], "garbage, not JSON\n");
    assert_eq!(run.stdout, "", "{run:?}");
    assert_one_stderr_line(&run, &["not JSON"]);
}

#[test]
fn hook_with_an_answers_file_that_does_not_fit_still_exits_0() {
    // Claude Code reads exit 2 from a PreToolUse hook as "block the tool call, show stderr to the
    // model", and ignores stdout. A misconfigured answers file must not block AskUserQuestion.
    let dir = scratch("hook-bad-answers", &[("answers.json", r#"{"Layout": "Grid"}"#)]);
    let answers = dir.join("answers.json");
    let env = [("ASKPANE_ANSWERS", path_str(&answers)), ("ASKPANE_SUBMIT", "1")];
    let mut command = crate::support::askpane(&["hook"]);
    command.envs(env);
    let run = run_bounded(&mut command, Some(&pre_tool_use()));
    let _ = fs::remove_dir_all(&dir);
    assert!(run.stderr.contains(r#""Grid""#), "{run:?}");
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let reply = one_line(&run);
    assert_eq!(reply["hookSpecificOutput"]["permissionDecision"], "allow", "{run:?}");
    assert!(reply["hookSpecificOutput"].get("updatedInput").is_none(), "{run:?}");
}

#[test]
fn hook_with_a_bad_environment_does_not_block_the_tool_call() {
    for env in [
        [("ASKPANE_SUBMIT", "1"), ("ASKPANE_TIMEOUT", "60")],
        [("ASKPANE_TIMEOUT", "an hour"), ("ASKPANE_SUBMIT", "0")],
        [("ASKPANE_DECLINE", "no"), ("ASKPANE_ANSWERS", "/dev/null")],
    ] {
        let mut command = crate::support::askpane(&["hook"]);
        command.envs(env);
        let run = run_bounded(&mut command, Some(&pre_tool_use()));
        assert_ne!(run.status.code(), Some(2), "{env:?}: {run:?}");
        assert!(!run.stderr.is_empty(), "{env:?}: say what is wrong: {run:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Hardening (issue 9, and the CLI items of issue 8): every outcome still one line and a code

#[test]
fn empty_stdin_is_no_input_and_still_one_line() {
    let run = run_askpane(&["ask"], &[], Some(""));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_line(
        &run,
        &unavailable("askpane could not read the request: no input on standard input"),
    );
    assert_one_stderr_line(&run, &["no input on standard input"]);
    // White space alone is no input either; the hook leaves the question to Claude Code.
    let run = hook(&[], &[("DISPLAY", ":4711")], " \n\t\n");
    assert_eq!(run.stdout, "", "{run:?}");
    assert_one_stderr_line(&run, &["no input on standard input", "leaving the question"]);
}

#[test]
fn input_over_the_size_limit_is_refused_with_the_size_and_the_limit() {
    // 4 MiB of white space and then a request: refused before it is parsed.
    let mut big = " ".repeat(4 * 1024 * 1024);
    big.push_str(&tool_input().to_string());
    let run = run_askpane(&["ask", "--non-interactive"], &[], Some(&big));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let reason = "standard input holds more than 4194304 bytes; askpane reads at most 4194304 \
                  bytes (4 MiB) of a request";
    assert_line(&run, &refused(reason));
    assert_one_stderr_line(&run, &[reason]);

    // A file: its exact size is named, by `validate` too.
    let dir = scratch("too-large", &[("big.json", &big)]);
    let file = dir.join("big.json");
    let size = big.len();
    let run = run_askpane(&["validate", path_str(&file)], &[], None);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let name = file.display();
    assert_eq!(
        run.stdout,
        format!(
            "{name}: invalid: {name} is {size} bytes; askpane reads at most 4194304 bytes (4 MiB) \
             of a request\n"
        ),
        "{run:?}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_permission_request_with_no_human_still_gets_one_line_from_ask() {
    let run = run_askpane(&["ask", "--non-interactive"], &[], Some(&permission_request()));
    assert_eq!(run.status.code(), Some(3), "{run:?}");
    assert_line(
        &run,
        &unavailable(
            "askpane runs non-interactively (--non-interactive or ASKPANE_NONINTERACTIVE)",
        ),
    );
    // The hook itself keeps printing nothing there: Claude Code then asks in its own dialog.
    let run = hook(&["--non-interactive"], &[], &permission_request());
    assert_eq!(run.stdout, "", "{run:?}");
}

#[test]
fn answers_annotations_and_response_in_the_request_are_never_echoed_as_the_users() {
    let mut request = tool_input();
    request["answers"] = json!({LAYOUT: "Sidebar"});
    request["annotations"] = json!({LAYOUT: {"notes": "the agent's own note"}});
    request["response"] = json!("the agent's own words");
    let run = ask_submitted("echoed-keys", &request, LABELS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    // Exactly the user's answers (and the picked preview, as the dialog sends): no `response`
    // (the CLI would tell the model "The user responded: the agent's own words"), no agent note.
    assert_line(&run, &label_reply());
    assert_one_stderr_line(
        &run,
        &["warning: the request already carries `answers`, `annotations` and `response`"],
    );

    // The same through the captured control_request, answered with the captured note: only the
    // user's note is in the reply.
    let session = Session::load(NOTES_SESSION);
    let mut request = session.can_use_tool.clone();
    request["request"]["input"]["response"] = json!("the agent's own words");
    let run = ask_submitted("echoed-keys-cr", &request, CAPTURED_SELECTIONS, &[]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_line(&run, &dialog(&session.host_reply, "Sidebar"));
}

#[test]
fn validate_reports_every_error_a_repeat_included() {
    let request = json!({"questions": [
        {"question": "Same?", "header": "A", "options": [{"label": "A", "description": ""},
            {"label": "B", "description": ""}]},
        {"question": "Same?", "header": "B"},
    ]});
    let run = run_askpane(&["validate", "-"], &[], Some(&request.to_string()));
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_eq!(
        run.stdout,
        "standard input: invalid AskUserQuestion tool input\n  \
         error: question 2: the `question` text repeats question 1; answers are keyed by it, so \
         texts must be unique\n  \
         error: question 2: `options` is missing\n",
        "{run:?}"
    );
}

/// Runs `askpane <args>` with its stdout closed before it writes: how it exited, and its stderr.
fn into_closed_pipe(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut command = crate::support::askpane(args);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("start askpane");
    drop(child.stdout.take());
    let stderr = crate::support::read_all(child.stderr.take().expect("piped stderr"));
    let mut process = crate::support::Process::new(child);
    let status = process.wait(WAIT).expect("askpane exits");
    (status, crate::support::collect(stderr))
}

#[test]
fn validate_into_a_closed_pipe_ends_quietly() {
    // `askpane validate … | head -n1`, with the reader gone before the first line: no panic
    // (that was exit 101 and a backtrace), the mode's own exit code.
    for (file, code) in [
        (fixture("hook.pretooluse.stdin.json"), 0),
        (r#"{"questions": [{"question": "Q?", "options": []}]}"#.to_owned(), 2),
    ] {
        let dir = scratch("closed-pipe", &[("request.json", &file)]);
        let request = dir.join("request.json");
        let (status, stderr) = into_closed_pipe(&["validate", path_str(&request)]);
        assert_eq!(status.code(), Some(code), "{stderr}");
        assert_eq!(stderr, "", "nothing on stderr either");
        let _ = fs::remove_dir_all(&dir);
    }
    // `demo --list` the same.
    let (status, stderr) = into_closed_pipe(&["demo", "--list"]);
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_timeout_outside_one_second_to_a_year_is_a_usage_error() {
    let message = "the timeout is a whole number of seconds from 1 to 31536000 (a year)";
    let input = tool_input().to_string();
    for value in ["0", "31536001", "18446744073709551615", "an hour", "-5"] {
        let flag = format!("--timeout={value}");
        let run = run_askpane(&["ask", "--non-interactive", &flag], &[], Some(&input));
        let reply = exit_and_reply(&run, 2);
        assert_eq!(reply["outcome"], "unavailable", "a usage error still replies: {run:?}");
        assert!(run.stderr.contains(message), "{value}: {run:?}");
        let run =
            run_askpane(&["ask", "--non-interactive"], &[("ASKPANE_TIMEOUT", value)], Some(&input));
        let reply = exit_and_reply(&run, 2);
        assert_eq!(reply["outcome"], "unavailable", "a usage error still replies: {run:?}");
        assert!(run.stderr.contains(message), "{value}: {run:?}");
        // `claude` refuses it before starting anything.
        let run = run_askpane(
            &["claude", "--claude-bin", "/nonexistent/claude", "-p", "hi", &flag],
            &[],
            None,
        );
        assert_eq!(run.status.code(), Some(2), "{value}: {run:?}");
        assert!(run.stderr.contains(message), "{value}: {run:?}");
        // A hook never exits 2 for it: the question is left to Claude Code.
        let run = hook(&[], &[("ASKPANE_TIMEOUT", value)], &pre_tool_use());
        assert_eq!(run.stdout, "", "{value}: {run:?}");
        assert!(run.stderr.contains(message), "{value}: {run:?}");
        assert!(run.stderr.contains("leaving the question to Claude Code"), "{value}: {run:?}");
    }
    // The edges are accepted.
    for value in ["1", "31536000"] {
        let run = run_askpane(&["ask", "--non-interactive", "--timeout", value], &[], Some(&input));
        assert_eq!(run.status.code(), Some(3), "{value}: {run:?}");
    }
}

/// Issue 24: whatever flag or `ASKPANE_*` value `ask` cannot take, it still prints one JSON line
/// (the README's SDK example parses it whatever the exit code), says what is wrong on stderr,
/// and exits 2. The agent reads that no one could be asked: it cannot fix askpane's settings.
#[test]
fn ask_with_a_bad_flag_or_variable_still_prints_one_line() {
    let input = tool_input().to_string();
    /// The arguments, the environment, and what the reply and stderr must name.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 5] = [
        (&["ask"], &[("ASKPANE_TIMEOUT", "0")], "--timeout"),
        (&["ask"], &[("ASKPANE_UI", "bogus")], "bogus"),
        (&["ask", "--timeout", "abc"], &[], "abc"),
        (&["ask", "--bogus"], &[], "--bogus"),
        (&["ask", "--format", "control-response", "--timeout=abc"], &[], "abc"),
    ];
    for (args, env, named) in cases {
        let run = run_askpane(args, env, Some(&input));
        let reply = exit_and_reply(&run, 2);
        let context = format!("{args:?} {env:?}: {run:?}");
        let message = match args.contains(&"control-response") {
            // `--format` is honoured when it is itself readable.
            true => {
                let decision = &reply["response"]["response"];
                assert_eq!(decision["behavior"], "deny", "{context}");
                &decision["message"]
            }
            false => {
                assert_eq!(reply["outcome"], "unavailable", "{context}");
                &reply["message"]
            }
        };
        let message = message.as_str().unwrap_or_default();
        assert!(message.starts_with("No human is available"), "{context}");
        assert!(message.contains(named), "the reply names what is wrong: {context}");
        assert!(run.stderr.contains(named), "stderr names what is wrong: {context}");
    }
}

// ---------------------------------------------------------------------------------------------
// 6. `install claude` / `uninstall claude`

/// `askpane <args>` with HOME pointing at `home` (never the real one).
fn settings_command(args: &[&str], home: &Path) -> Finished {
    let mut command = crate::support::askpane(args);
    command.env("HOME", home);
    let run = run_bounded(&mut command, None);
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    run
}

/// The hook command installed for this binary: the small hook client beside it (issue 30).
fn hook_command() -> String {
    let small = fs::canonicalize(env!("CARGO_BIN_EXE_askpane-hook")).expect("the client exists");
    small.display().to_string()
}

/// The entry askpane adds under `hooks.PreToolUse`.
fn askpane_entry() -> Value {
    json!({"matcher": "AskUserQuestion",
           "hooks": [{"type": "command", "command": hook_command(), "timeout": 86400,
                      "statusMessage": askpane::protocol::HOOK_STATUS_MESSAGE}]})
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read the settings folder")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn backups(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|name| name.starts_with("settings.json.askpane-backup-"))
        .collect()
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).expect("read the settings");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
}

/// A scratch HOME and a project with an empty `.claude` folder, for the settings tests.
struct Layout {
    home: PathBuf,
    project: PathBuf,
    folder: PathBuf,
    settings: PathBuf,
}

impl Layout {
    fn new(root: &Path) -> Self {
        let (home, project) = (root.join("home"), root.join("project"));
        let folder = project.join(".claude");
        fs::create_dir_all(&home).expect("create home");
        fs::create_dir_all(&folder).expect("create .claude");
        let settings = folder.join("settings.json");
        Layout { home, project, folder, settings }
    }
}

#[test]
fn install_creates_the_project_settings_and_a_second_install_changes_nothing() {
    let root = scratch("install-new", &[]);
    let Layout { home, project, settings, .. } = Layout::new(&root);
    fs::remove_dir(project.join(".claude")).expect("start without .claude");
    let args = ["install", "claude", "--project", path_str(&project)];

    let run = settings_command(&args, &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let text = fs::read_to_string(&settings).expect("settings.json was created");
    let expected = format!(
        r#"{{"hooks":{{"PreToolUse":[{{"matcher":"AskUserQuestion","hooks":[{{"type":"command","command":"{}","timeout":86400,"statusMessage":"Waiting for your answer in askpane"}}]}}]}}}}"#,
        hook_command()
    );
    assert_eq!(compact(&read_json(&settings)), expected, "{text}");
    assert!(text.ends_with('\n'), "{text:?}");
    assert_eq!(listing(&project.join(".claude")), ["settings.json"], "no backup of nothing");
    assert!(run.stdout.contains(path_str(&settings)), "names the file: {run:?}");
    assert_eq!(run.stdout.lines().count(), 1, "{run:?}");

    let run = settings_command(&args, &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        format!("{} already has askpane's hook; nothing changed\n", settings.display()),
        "{run:?}"
    );
    assert_eq!(fs::read_to_string(&settings).expect("read"), text, "the file changed");
    assert_eq!(listing(&project.join(".claude")), ["settings.json"], "a second install backs up");

    let run = settings_command(&["uninstall", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.starts_with("removed 1 askpane hook(s) from "), "{run:?}");
    assert_eq!(fs::read_to_string(&settings).expect("read"), "{}\n");
    let run = settings_command(&["uninstall", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        format!("{} has no askpane hook; nothing changed\n", settings.display()),
        "{run:?}"
    );
    assert_eq!(listing(&home), Vec::<String>::new(), "HOME was touched");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn install_with_approvals_adds_the_permission_hook_for_the_tools_named_and_uninstall_takes_both() {
    let root = scratch("install-approvals", &[]);
    let Layout { home, project, settings, .. } = Layout::new(&root);
    let project_text = path_str(&project).to_owned();
    let run_with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--project", project_text.as_str()]);
        settings_command(&all, &home)
    };

    let run = run_with(&["install", "claude", "--approvals", "Bash,Edit"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let hook = |matcher: &str| {
        format!(
            r#"{{"matcher":"{matcher}","hooks":[{{"type":"command","command":"{}","timeout":86400,"statusMessage":"Waiting for your answer in askpane"}}]}}"#,
            hook_command()
        )
    };
    let expected = format!(
        r#"{{"hooks":{{"PreToolUse":[{}],"PermissionRequest":[{}]}}}}"#,
        hook("AskUserQuestion"),
        hook("Bash|Edit")
    );
    assert_eq!(compact(&read_json(&settings)), expected);
    assert!(run.stdout.starts_with("askpane's PreToolUse hook for AskUserQuestion: added; its PermissionRequest hook for Bash, Edit: added; in "), "{run:?}");

    // Every tool, then again: the one entry follows, then nothing changes.
    let run = run_with(&["install", "claude", "--approvals"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(read_json(&settings)["hooks"]["PermissionRequest"][0]["matcher"], "*");
    let run = run_with(&["install", "claude", "--approvals"]);
    assert!(run.stdout.ends_with("already has askpane's hooks; nothing changed\n"), "{run:?}");

    // A name that is not a tool's: refused, saying which, the file untouched.
    let before = fs::read_to_string(&settings).expect("read");
    let run = run_with(&["install", "claude", "--approvals", "Bash,rm -rf"]);
    assert_ne!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stderr.contains("`rm -rf` is not a tool name"), "{run:?}");
    assert_eq!(fs::read_to_string(&settings).expect("read"), before);

    // `uninstall --approvals` takes the approval hook only; `uninstall` the rest.
    let run = run_with(&["uninstall", "claude", "--approvals"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(
        compact(&read_json(&settings)),
        format!(r#"{{"hooks":{{"PreToolUse":[{}]}}}}"#, hook("AskUserQuestion"))
    );
    run_with(&["install", "claude", "--approvals", "Write"]);
    let run = run_with(&["uninstall", "claude"]);
    assert!(run.stdout.starts_with("removed 2 askpane hook(s) from "), "{run:?}");
    assert_eq!(fs::read_to_string(&settings).expect("read"), "{}\n");
    let _ = fs::remove_dir_all(&root);
}

/// Issue 26 item 6: `--notify` adds the Notification hook (every type, a short timeout) beside
/// the question hook and the user's own; `uninstall --notify` takes it alone, `uninstall` all.
#[test]
fn install_with_notify_adds_the_notification_hook_and_uninstall_notify_takes_it_alone() {
    let root = scratch("install-notify", &[]);
    let Layout { home, project, settings, .. } = Layout::new(&root);
    let theirs = r#"{"hooks":{"Notification":[{"matcher":"idle_prompt","hooks":[{"type":"command","command":"notify-send idle"}]}]}}"#;
    fs::write(&settings, theirs).expect("write settings.json");
    let project_text = path_str(&project).to_owned();
    let run_with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--project", project_text.as_str()]);
        settings_command(&all, &home)
    };
    let run = run_with(&["install", "claude", "--notify"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let questions = format!(
        r#"{{"matcher":"AskUserQuestion","hooks":[{{"type":"command","command":"{}","timeout":86400,"statusMessage":"Waiting for your answer in askpane"}}]}}"#,
        hook_command()
    );
    let notices = format!(
        r#"{{"matcher":"*","hooks":[{{"type":"command","command":"{}","timeout":10}}]}}"#,
        hook_command()
    );
    let their_entry =
        r#"{"matcher":"idle_prompt","hooks":[{"type":"command","command":"notify-send idle"}]}"#;
    assert_eq!(
        compact(&read_json(&settings)),
        format!(
            r#"{{"hooks":{{"Notification":[{their_entry},{notices}],"PreToolUse":[{questions}]}}}}"#
        )
    );
    assert!(
        run.stdout.starts_with("askpane's PreToolUse hook for AskUserQuestion: added; its Notification hook (terminals that wait): added; in "),
        "{run:?}"
    );
    let run = run_with(&["install", "claude", "--notify"]);
    assert!(run.stdout.ends_with("already has askpane's hooks; nothing changed\n"), "{run:?}");
    // With the approvals too: each hook's change named.
    let run = run_with(&["install", "claude", "--notify", "--approvals"]);
    assert!(run.stdout.starts_with("askpane's PreToolUse hook for AskUserQuestion: already there; its PermissionRequest hook for every tool: added; its Notification hook (terminals that wait): already there; in "), "{run:?}");

    let run = run_with(&["uninstall", "claude", "--notify"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.starts_with("removed 1 askpane hook(s) from "), "{run:?}");
    let after = read_json(&settings);
    assert_eq!(
        compact(&after["hooks"]["Notification"]),
        format!("[{their_entry}]"),
        "theirs stays"
    );
    assert_eq!(after["hooks"]["PreToolUse"][0]["matcher"], "AskUserQuestion");
    let run = run_with(&["uninstall", "claude", "--notify"]);
    assert!(run.stdout.ends_with("has no askpane hook; nothing changed\n"), "{run:?}");
    run_with(&["install", "claude", "--notify"]);
    let run = run_with(&["uninstall", "claude"]);
    assert!(run.stdout.starts_with("removed 3 askpane hook(s) from "), "{run:?}");
    assert_eq!(compact(&read_json(&settings)), theirs);
    let _ = fs::remove_dir_all(&root);
}

/// Settings with other keys (not in alphabetical order), other hooks, non-ASCII text and an
/// AskUserQuestion hook of someone else's.
const OTHER_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint --strict"}]},
            {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": "log-questions"}]}
        ]
    },
    "env": {"ZED": "1", "ALPHA": "2"},
    "statusLine": {"type": "command", "command": "echo テーマ ✓"}
}
"#;

#[test]
fn install_keeps_every_other_key_and_hook_and_backs_up_the_old_text() {
    let root = scratch("install-merge", &[]);
    let Layout { home, project, folder, settings } = Layout::new(&root);
    fs::write(&settings, OTHER_SETTINGS).expect("write settings.json");
    let original: Value = serde_json::from_str(OTHER_SETTINGS).expect("OTHER_SETTINGS is JSON");

    let run = settings_command(&["install", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let mut expected = original.clone();
    expected["hooks"]["PreToolUse"].as_array_mut().expect("a list").push(askpane_entry());
    // Compact text: every other value unchanged, every key in its old place.
    assert_eq!(compact(&read_json(&settings)), compact(&expected));
    let backups = backups(&folder);
    assert_eq!(backups.len(), 1, "{:?}", listing(&folder));
    let backup = folder.join(&backups[0]);
    assert!(
        backups[0]["settings.json.askpane-backup-".len()..].chars().all(|c| c.is_ascii_digit())
    );
    assert_eq!(fs::read_to_string(&backup).expect("read the backup"), OTHER_SETTINGS);
    assert!(run.stdout.contains(path_str(&backup)), "names the backup: {run:?}");

    let run = settings_command(&["uninstall", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.starts_with("removed 1 askpane hook(s) from "), "{run:?}");
    assert!(run.stdout.contains(path_str(&settings)), "{run:?}");
    // Exactly our entry is gone: the rest is the original, value and key order.
    assert_eq!(compact(&read_json(&settings)), compact(&original));
    assert_eq!(listing(&home), Vec::<String>::new(), "HOME was touched");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn install_points_an_existing_askpane_hook_at_this_binary() {
    let root = scratch("install-moved", &[]);
    let Layout { home, project, folder, settings } = Layout::new(&root);
    let old = r#"{"hooks":{"PreToolUse":[{"matcher":"AskUserQuestion","hooks":[{"type":"command","command":"/opt/old/askpane hook","timeout":600}]}]},"model":"opus"}"#;
    fs::write(&settings, old).expect("write settings.json");

    let run = settings_command(&["install", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.contains("(was `/opt/old/askpane hook`)"), "{run:?}");
    // One entry, now running this binary; the user's own timeout is kept, and the spinner's
    // status message (issue 24) is added.
    let expected = format!(
        r#"{{"hooks":{{"PreToolUse":[{{"matcher":"AskUserQuestion","hooks":[{{"type":"command","command":"{}","timeout":600,"statusMessage":"Waiting for your answer in askpane"}}]}}]}},"model":"opus"}}"#,
        hook_command()
    );
    assert_eq!(compact(&read_json(&settings)), expected);
    let backups = backups(&folder);
    assert_eq!(backups.len(), 1, "{:?}", listing(&folder));
    assert_eq!(fs::read_to_string(folder.join(&backups[0])).expect("read the backup"), old);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn every_change_keeps_its_own_backup() {
    let root = scratch("install-backups", &[]);
    let Layout { home, project, folder, settings } = Layout::new(&root);
    fs::write(&settings, OTHER_SETTINGS).expect("write settings.json");

    let run = settings_command(&["install", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let installed = fs::read_to_string(&settings).expect("read");
    let run = settings_command(&["uninstall", "claude", "--project", path_str(&project)], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");

    let texts: Vec<String> = backups(&folder)
        .iter()
        .map(|name| fs::read_to_string(folder.join(name)).expect("read a backup"))
        .collect();
    assert!(texts.contains(&OTHER_SETTINGS.to_owned()), "the original text is in no backup");
    assert!(texts.contains(&installed), "the installed text is in no backup");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn malformed_settings_are_left_byte_identical_and_not_backed_up() {
    let root = scratch("install-malformed", &[]);
    let Layout { home, project, folder, settings } = Layout::new(&root);
    for (text, says) in [
        ("{\"model\": \"opus\",,}\n", "is not valid JSON"),
        // JSON with comments, as some people write by hand: not JSON.
        ("{\n  // mine\n  \"model\": \"opus\"\n}\n", "is not valid JSON"),
        (
            r#"{"hooks": {"PreToolUse": {"matcher": "Bash"}}}"#,
            "`hooks.PreToolUse` must be an array",
        ),
        ("[1, 2]", "must be a JSON object"),
    ] {
        for command in ["install", "uninstall"] {
            fs::write(&settings, text).expect("write settings.json");
            let args = [command, "claude", "--project", path_str(&project)];
            let run = settings_command(&args, &home);
            if command == "uninstall" && !says.contains("not valid JSON") {
                // Nothing of ours to remove in a wrong shape: either answer will do, untouched.
                assert_eq!(fs::read_to_string(&settings).expect("read"), text, "{run:?}");
                assert_eq!(listing(&folder), ["settings.json"], "{command} {text:?}: a backup");
                continue;
            }
            assert_eq!(run.status.code(), Some(2), "{command} {text:?}: {run:?}");
            assert_eq!(run.stdout, "", "{run:?}");
            assert_one_stderr_line(&run, &[path_str(&settings), says]);
            assert_eq!(fs::read_to_string(&settings).expect("read"), text, "{run:?}");
            assert_eq!(listing(&folder), ["settings.json"], "{command} {text:?}: a backup");
        }
    }
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn user_settings_live_in_home() {
    let root = scratch("install-user", &[]);
    let home = root.join("home");
    fs::create_dir_all(&home).expect("create home");
    let settings = home.join(".claude/settings.json");
    let expected = json!({"hooks": {"PreToolUse": [askpane_entry()]}});

    // Nothing to remove: nothing is created either.
    let run = settings_command(&["uninstall", "claude", "--user"], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.ends_with("has no askpane hook; nothing changed\n"), "{run:?}");
    assert_eq!(listing(&home), Vec::<String>::new(), "uninstall created something");

    let run = settings_command(&["install", "claude", "--user"], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.contains(path_str(&settings)), "{run:?}");
    assert_eq!(compact(&read_json(&settings)), compact(&expected));

    // No flag means the user settings too.
    let run = settings_command(&["install", "claude"], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.ends_with("already has askpane's hook; nothing changed\n"), "{run:?}");

    let run = settings_command(&["uninstall", "claude", "--user"], &home);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(run.stdout.starts_with("removed 1 askpane hook(s) from "), "{run:?}");
    assert_eq!(read_json(&settings), json!({}));

    // --user and --project together are a usage error.
    let run = settings_command(&["install", "claude", "--user", "--project", "x"], &home);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let _ = fs::remove_dir_all(&root);
}

// ---------------------------------------------------------------------------------------------
// `--lan`: the browser page for a phone

/// The modules of the QR code printed after `--lan`'s "scan this" line, read back from its half
/// blocks: `true` is a dark module (a space: the blocks are the light ones).
fn printed_qr_code(stderr: &str) -> Option<Vec<Vec<bool>>> {
    let after = stderr.split_once("scan this with your phone's camera:\n")?.1;
    let rows: Vec<&str> = after
        .lines()
        .take_while(|line| !line.is_empty() && line.chars().all(|c| " █▀▄".contains(c)))
        .collect();
    let mut modules = Vec::new();
    for row in rows {
        let top = row.chars().map(|c| !matches!(c, '█' | '▀')).collect();
        let bottom = row.chars().map(|c| !matches!(c, '█' | '▄')).collect();
        modules.push(top);
        modules.push(bottom);
    }
    Some(modules)
}

#[test]
fn lan_prints_a_qr_code_that_holds_the_link_for_other_devices() {
    let question = r#"{"questions":[{"question":"Go?","header":"Go","options":[{"label":"Yes","description":""},{"label":"No","description":""}]}]}"#;
    let mut command = crate::support::askpane(&["ask", "--ui", "web", "--lan", "--timeout", "2"]);
    command.env("ASKPANE_NO_INBOX", "1").env_remove("DISPLAY");
    let run = run_bounded(&mut command, Some(question));
    assert_eq!(run.status.code(), Some(5), "timed out, as asked: {run:?}");
    // Listening on every address: loopback first, then a link per address of this machine.
    assert!(run.stderr.contains("answer in your browser: http://127.0.0.1:"), "{}", run.stderr);
    // Issue 24 item 26: the warning names the port the page really listens on, never port 0.
    let port = run
        .stderr
        .split_once("answer in your browser: http://127.0.0.1:")
        .and_then(|(_, rest)| rest.split_once('/'))
        .map(|(port, _)| port.to_owned())
        .expect("the link's port");
    assert_ne!(port, "0", "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("the page listens on 0.0.0.0:{port}, which other machines")),
        "{}",
        run.stderr
    );
    let Some(link) =
        run.stderr.lines().find_map(|line| line.strip_prefix("askpane: or, from another device: "))
    else {
        // A machine with loopback only has no network for a phone: then no code either.
        assert!(printed_qr_code(&run.stderr).is_none(), "{}", run.stderr);
        eprintln!("note: this machine has no network address besides loopback");
        return;
    };
    assert!(link.contains("/#token="), "{link}");
    let modules = printed_qr_code(&run.stderr).expect("a QR code after the links");
    let (height, width) = (modules.len(), modules.first().map_or(0, Vec::len));
    assert!(width > 20 && height >= width, "{width}×{height}: {}", run.stderr);
    // Four pixels a module, as a camera would see it.
    let mut image = rqrr::PreparedImage::prepare_from_greyscale(width * 4, height * 4, |x, y| {
        let dark = modules.get(y / 4).and_then(|row| row.get(x / 4)).copied().unwrap_or(false);
        if dark { 0 } else { 255 }
    });
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code: {}", run.stderr);
    let (_, content) = grids[0].decode().expect("the code decodes");
    assert_eq!(content, link, "the code holds the link for other devices");
}

/// Issue 24 item 7: `--answers '{}' --submit` answers nothing, and that is not an answer: the
/// agent is told the user submitted without answering, exit 1, as the window's Submit does.
#[test]
fn an_empty_preset_submitted_is_not_an_answer() {
    for (name, answers) in
        [("empty-object", "{}"), ("blank-other", r#"{"Layout": {"other": "  "}}"#)]
    {
        let run = ask_submitted(name, &tool_input(), answers, &[]);
        let reply = exit_and_reply(&run, 1);
        assert_eq!(
            reply,
            json!({"outcome": "declined",
                "message": askpane::protocol::outcome::NOTHING_ANSWERED_MESSAGE}),
            "{name}: {run:?}"
        );
    }
}

/// Issue 25: `ASKPANE_LOG` picks the library's log lines. `askpane history` on a store whose
/// database another user could read narrows it and warns in its one line, as before; with
/// `ASKPANE_LOG=debug` a debug line (which store was opened) comes too, and with
/// `ASKPANE_LOG=error` the warning does not (the database is narrowed all the same).
#[test]
fn askpane_log_adds_debug_lines_and_takes_warnings_away() {
    use std::os::unix::fs::PermissionsExt as _;
    let history = |name: &str, log: Option<&str>| {
        let dir = scratch(name, &[("askpane.db", "")]);
        let database = dir.join("askpane.db");
        fs::set_permissions(&database, fs::Permissions::from_mode(0o644)).unwrap();
        let mut command = crate::support::askpane(&["history"]);
        command.env("ASKPANE_STATE_DIR", &dir);
        if let Some(log) = log {
            command.env("ASKPANE_LOG", log);
        }
        let run = run_bounded(&mut command, None);
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        let mode = fs::metadata(&database).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the database is narrowed whatever is logged: {run:?}");
        (dir, run)
    };
    let warning = |dir: &Path| {
        format!(
            "askpane: the store in {} was readable by other users; narrowed askpane.db from \
             0644 to 0600\n",
            dir.display()
        )
    };

    // The empty history's line is the binary's, for the person: never a log line.
    let nothing = "askpane: no history matches\n";
    let (dir, run) = history("log-default", None);
    assert_eq!(run.stderr, warning(&dir) + nothing, "by default as before: {run:?}");

    let (dir, run) = history("log-debug", Some("debug"));
    assert!(run.stderr.contains(&warning(&dir)), "{run:?}");
    let debug: Vec<&str> =
        run.stderr.lines().filter(|line| line.starts_with("askpane: debug: ")).collect();
    assert!(
        debug.iter().any(|line| line.contains(path_str(&dir.join("askpane.db")))),
        "ASKPANE_LOG=debug says which store was opened: {run:?}"
    );

    let (_, run) = history("log-error", Some("error"));
    assert_eq!(run.stderr, nothing, "ASKPANE_LOG=error keeps the warning back: {run:?}");
}
