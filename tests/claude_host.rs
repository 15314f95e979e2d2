//! `askpane claude` as Claude Code's stream-json host, end to end.
//!
//! Most tests run askpane against `tests/fake-claude/fake_claude.py`, a scripted Claude Code that
//! replays a captured session (`tests/fixtures/session.*.replay.jsonl`) and checks every line
//! askpane writes back against the line the captured host wrote, in shape (the script's header
//! says exactly what is compared). Its JSON report is what these tests read.
//!
//! a. headless, through the binary: `--answers --submit`, `--decline`, `--print-stream`;
//! b. in-process, a `ClaudeSession` feeding an `App` in a kittest harness, driven by accessible
//!    labels: answer by clicks, "Decline and stop Claude", Stop while the question is open,
//!    "Reply instead";
//! c. a malformed line from the CLI, and the CLI dying mid-question;
//! d. the transcript, permission cards and prompt box, fed through `transport::memory()`;
//! e. the real Claude Code CLI (2.1.330 and 2.1.197) against the fake Messages API, headless.
//!
//! Every wait is bounded; every process started here is stopped by its PID when a test ends.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use askpane::app::{App, AppOptions, WindowState};
use askpane::protocol::stream::{PermissionDecision, PermissionRequest, parse_cli_line};
use askpane::transport::agents::claude::{Autopilot, ClaudeOptions, ClaudeOwn, ClaudeSession};
use askpane::transport::{
    self, ApprovalEvent, Inbound, IoThreads, PermissionAsk, Provenance, RequestId, Responder,
    SessionCommand, SessionEvent, SessionInbound, UiSender,
};
use crossbeam_channel::{Receiver, TryRecvError};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use serde_json::{Value, json};

use crate::fake_api::FakeApi;
use crate::interop::{
    self, Cli, CliProcess, DATABASE, FEATURES, LAYOUT, RUN_MARKER, SCENARIO_LIMIT, SIDEBAR_PREVIEW,
    Scratch, TABS_PREVIEW, free_answered, labels_answered, piece,
};
use crate::support::{self, WAIT};
use crate::ui::FONTS;

/// The scripted Claude Code.
pub(crate) const FAKE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake-claude/fake_claude.py");

/// The prompt of every capture.
pub(crate) const PROMPT: &str = "Please ask me which layout, features and database I want.";

/// The note, the multi-select and the Japanese free text of `session.answer-with-notes`.
const NOTE: &str = "Keep the sidebar narrow, please.";
const MYSQL: &str = "MySQL を Docker で動かしたい";
/// What the captured host sent with "Reply instead" (`session.response-freeform`).
const REPLY: &str = "Let's talk about this in chat first.";

/// The `--answers` that make the captured answer of `session.answer-with-notes`.
pub(crate) fn notes_answers() -> Value {
    json!({"Layout": {"choose": "Sidebar", "notes": NOTE}, "Features": ["Dark mode", "Export"],
        "データベース": {"other": MYSQL}})
}

// ---------------------------------------------------------------------------------------------
// Transcripts and the fake's report

/// `tests/fixtures/session.<name>.2.1.330.replay.jsonl`.
pub(crate) fn replay(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("session.{name}.2.1.330.replay.jsonl"))
}

/// The records of a replay fixture.
fn records(name: &str) -> Vec<Value> {
    support::fixture_lines(&format!("session.{name}.2.1.330.replay.jsonl"))
}

/// The exit code recorded at the end of a transcript (0 if none).
fn recorded_exit(name: &str) -> i32 {
    records(name)
        .iter()
        .rev()
        .find(|record| record["dir"] == "exit")
        .and_then(|record| record["line"].as_i64())
        .map_or(0, |code| i32::try_from(code).expect("a small exit code"))
}

/// The host's recorded `control_response` (the answer to the question).
fn recorded_reply(name: &str) -> Value {
    records(name)
        .into_iter()
        .find(|record| record["dir"] == ">>" && record["line"]["type"] == "control_response")
        .map(|record| record["line"].clone())
        .unwrap_or_else(|| panic!("{name}: no recorded control_response"))
}

/// Writes a transcript the test made (records as the fake reads them).
fn write_transcript(dir: &Path, records: &[Value]) -> PathBuf {
    let path = dir.join("transcript.jsonl");
    let text: String = records.iter().map(|record| format!("{record}\n")).collect();
    fs::write(&path, text).expect("write the transcript");
    path
}

/// The first records of a capture, up to and including its `system/init` line (the CLI has
/// started, the turn runs): the start of a transcript a test writes.
fn session_start(name: &str) -> Vec<Value> {
    let mut records = records(name);
    let init = records
        .iter()
        .position(|record| record["line"]["subtype"] == "init")
        .expect("the capture has system/init");
    records.truncate(init + 1);
    records
}

/// `{"dir":"<<","line":…}`: a line the CLI writes.
fn cli_line(line: Value) -> Value {
    json!({"dir": "<<", "line": line})
}

/// `{"dir":">>","line":…}`: a line the host must write.
fn host_line(line: Value) -> Value {
    json!({"dir": ">>", "line": line})
}

/// The CLI asking to run `cargo test` (an assistant tool_use, then its `can_use_tool`).
fn bash_permission_asked() -> [Value; 2] {
    [
        cli_line(json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_bash_1", "name": "Bash",
             "input": {"command": "cargo test", "description": "Run the tests"}}]}})),
        cli_line(json!({"type": "control_request", "request_id": "perm-1", "request": {
            "subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash",
            "input": {"command": "cargo test", "description": "Run the tests"},
            "tool_use_id": "toolu_bash_1"}})),
    ]
}

/// The end of a turn: the tool's result and the `result` line, then exit 0 when stdin closes.
fn turn_end(tool_use_id: &str, content: &str, is_error: bool) -> [Value; 3] {
    [
        cli_line(json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": content, "is_error": is_error,
             "tool_use_id": tool_use_id}]}})),
        cli_line(json!({"type": "result", "subtype": "success", "is_error": false,
            "num_turns": 2, "duration_ms": 120, "result": "Done."})),
        json!({"dir": "exit", "line": 0}),
    ]
}

/// The fake's report.
pub(crate) struct Report(Value);

impl Report {
    pub(crate) fn read(path: &Path) -> Report {
        let text = fs::read_to_string(path).unwrap_or_else(|error| {
            panic!("the fake Claude Code left no report at {} ({error})", path.display())
        });
        Report(serde_json::from_str(&text).expect("the report is JSON"))
    }

    pub(crate) fn comparisons(&self) -> &[Value] {
        self.0["comparisons"].as_array().map_or(&[], Vec::as_slice)
    }

    /// A summary for failure messages: status, exit, and every comparison that is not ok.
    pub(crate) fn summary(&self) -> String {
        let mut text = format!(
            "fake Claude Code report: status {}, exit {}, all_ok {}\n",
            self.0["status"], self.0["exit"], self.0["all_ok"]
        );
        for comparison in self.comparisons() {
            let mark = if comparison["ok"] == true { "ok " } else { "BAD" };
            text.push_str(&format!(
                "  {mark} {}: {}\n       got: {}\n",
                comparison["step"].as_str().unwrap_or("?"),
                comparison["problems"],
                crate::support::clip(comparison["got_text"].as_str().unwrap_or("(nothing)"), 400),
            ));
        }
        text
    }

    /// Every comparison ok, the transcript played to its end.
    pub(crate) fn assert_all_ok(&self, context: &str) {
        let summary = self.summary();
        assert!(!self.comparisons().is_empty(), "no comparisons\n{summary}{context}");
        for comparison in self.comparisons() {
            assert_eq!(comparison["ok"], true, "a host line is wrong\n{summary}{context}");
        }
        assert!(
            ["done", "died"].contains(&self.0["status"].as_str().unwrap_or_default()),
            "the transcript did not play to its end\n{summary}{context}"
        );
        assert_eq!(self.0["all_ok"], true, "{summary}{context}");
    }

    /// The host's reply to the question, as it came (the line's text).
    pub(crate) fn host_reply_text(&self) -> &str {
        self.comparisons()
            .iter()
            .find(|comparison| comparison["expected"]["type"] == "control_response")
            .and_then(|comparison| comparison["got_text"].as_str())
            .unwrap_or_else(|| panic!("no control_response from the host\n{}", self.summary()))
    }

    /// The host lines the transcript does not have.
    fn extra_lines(&self) -> Vec<&Value> {
        self.comparisons()
            .iter()
            .filter(|comparison| comparison["step"] == "extra host line")
            .map(|comparison| &comparison["got"])
            .collect()
    }

    /// Every stdout line the fake wrote, each with its newline, as one text.
    fn written(&self) -> String {
        let lines = self.0["written"].as_array().map_or(&[][..], Vec::as_slice);
        lines.iter().map(|line| format!("{}\n", line.as_str().unwrap_or_default())).collect()
    }
}

/// Asserts the host's reply equals the captured host's line byte for byte, as Claude Code's
/// terminal dialog would have sent it (protocol.md §15: for an answer, `annotations` always, the
/// picked Sidebar mockup first; see `support::as_the_dialog_sends`).
fn assert_reply_as_captured(report: &Report, transcript: &str, context: &str) {
    let recorded = recorded_reply(transcript);
    let answered = recorded["response"]["response"]["updatedInput"]["answers"][LAYOUT] == "Sidebar";
    let recorded = match answered {
        true => support::as_the_dialog_sends(&recorded, &[(LAYOUT, SIDEBAR_PREVIEW)]),
        false => recorded,
    };
    let recorded = support::compact(&recorded);
    assert_eq!(
        report.host_reply_text(),
        recorded,
        "askpane's reply differs from the captured host's (left: askpane)\n{context}"
    );
}

// ---------------------------------------------------------------------------------------------
// a. Headless, through the binary

/// `askpane claude --claude-bin <fake> -p PROMPT <args>` with no display, replaying `transcript`.
fn headless(transcript: &Path, args: &[&str]) -> (support::Finished, Report) {
    let dir = support::scratch_dir("claude-headless");
    let report = dir.join("report.json");
    let mut command = claude_command(transcript, &report, &dir, args);
    let finished = support::run_bounded(&mut command, None);
    let report = Report::read(&report);
    (finished, report)
}

/// The command `headless` runs: no display, no `ASKPANE_*` variable, the fake replaying
/// `transcript` and reporting to `report`, in `dir`.
fn claude_command(transcript: &Path, report: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut command = crate::support::askpane_command();
    command.env("ASKPANE_STATE_DIR", crate::support::private_state_dir());
    command
        .args(["claude", "--claude-bin", FAKE, "-p", PROMPT])
        .args(args)
        .current_dir(dir)
        .env("FAKE_CLAUDE_TRANSCRIPT", transcript)
        .env("FAKE_CLAUDE_REPORT", report);
    for name in [
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "ASKPANE_ANSWERS",
        "ASKPANE_SUBMIT",
        "ASKPANE_DECLINE",
        "ASKPANE_TIMEOUT",
        "ASKPANE_NONINTERACTIVE",
        "ASKPANE_CLAUDE_BIN",
        "ASKPANE_DEBUG",
        "ASKPANE_UI",
    ] {
        command.env_remove(name);
    }
    command
}

fn describe(finished: &support::Finished) -> String {
    format!(
        "askpane exited {:?}\nstdout:\n{}\nstderr:\n{}",
        finished.status.code(),
        crate::support::clip(&finished.stdout, 2000),
        finished.stderr
    )
}

fn write_answers(dir: &Path, answers: &Value) -> String {
    let path = dir.join("answers.json");
    fs::write(&path, answers.to_string()).expect("write the answers file");
    path.to_str().expect("a UTF-8 path").to_owned()
}

#[test]
fn headless_answers_submit_as_the_captured_host_did() {
    let dir = support::scratch_dir("claude-answers");
    let answers = write_answers(&dir, &notes_answers());
    let (finished, report) =
        headless(&replay("answer-with-notes"), &["--answers", &answers, "--submit"]);
    let context = describe(&finished);
    report.assert_all_ok(&context);
    assert_reply_as_captured(&report, "answer-with-notes", &context);
    assert_eq!(finished.status.code(), Some(recorded_exit("answer-with-notes")), "{context}");
    assert_eq!(finished.stdout, "", "nothing on stdout without --print-stream\n{context}");
}

#[test]
fn headless_decline_sends_the_message() {
    let (finished, report) =
        headless(&replay("deny"), &["--decline", "Not now, use the defaults."]);
    let context = describe(&finished);
    report.assert_all_ok(&context);
    let reply: Value = serde_json::from_str(report.host_reply_text()).expect("JSON");
    assert_eq!(
        reply["response"]["response"],
        json!({"behavior": "deny",
            "message": "The user declined to answer these questions and said: Not now, use the defaults.",
            "toolUseID": "toolu_fake_ask_000001"}),
        "{context}"
    );
    assert_eq!(finished.status.code(), Some(recorded_exit("deny")), "{context}");
}

#[test]
fn print_stream_relays_every_cli_line_byte_for_byte() {
    let dir = support::scratch_dir("claude-print-stream");
    let answers = write_answers(&dir, &notes_answers());
    let (finished, report) = headless(
        &replay("answer-with-notes"),
        &["--answers", &answers, "--submit", "--print-stream"],
    );
    let context = describe(&finished);
    report.assert_all_ok(&context);
    let written = report.written();
    assert_eq!(written.lines().count(), 7, "the capture's seven CLI lines\n{context}");
    assert!(finished.stdout == written, "stdout differs from what the CLI wrote\n{context}");
    assert_eq!(finished.status.code(), Some(0), "{context}");
}

/// The fake is not a rubber stamp: a decline where the capture answered is caught.
#[test]
fn the_fake_catches_a_reply_of_the_wrong_shape() {
    let (finished, report) = headless(&replay("answer-with-notes"), &["--decline", "no"]);
    let bad: Vec<&Value> =
        report.comparisons().iter().filter(|comparison| comparison["ok"] != true).collect();
    let [bad] = bad.as_slice() else {
        panic!("expected exactly one bad comparison\n{}{}", report.summary(), describe(&finished));
    };
    let problems = bad["problems"].to_string();
    assert!(problems.contains("behavior 'deny', recorded 'allow'"), "{problems}");
    assert!(problems.contains("updatedInput missing"), "{problems}");
    assert_eq!(report.0["all_ok"], false);
}

/// Without a window, a tool permission is allowed only when `--allow-tools` names the tool
/// (the input goes back unchanged, with the tool_use id), and denied with a message otherwise.
#[test]
fn headless_permissions_follow_allow_tools() {
    let input = json!({"command": "cargo test", "description": "Run the tests"});
    let allowed = json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": "perm-1", "response": {"behavior": "allow", "updatedInput": input,
        "toolUseID": "toolu_bash_1"}}});
    let denied = json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": "perm-1", "response": {"behavior": "deny",
        "message": "(any message)", "toolUseID": "toolu_bash_1"}}});
    for (args, reply) in [(&["--allow-tools", "Read,Bash"][..], allowed), (&[][..], denied)] {
        let dir = support::scratch_dir("claude-permission");
        let mut records = session_start("answer-with-notes");
        records.extend(bash_permission_asked());
        records.push(host_line(reply.clone()));
        records.extend(turn_end("toolu_bash_1", "ok", false));
        let (finished, report) = headless(&write_transcript(&dir, &records), args);
        let context = describe(&finished);
        report.assert_all_ok(&context);
        let got: Value = serde_json::from_str(report.host_reply_text()).expect("JSON");
        match reply["response"]["response"]["behavior"].as_str() {
            Some("allow") => assert_eq!(got, reply, "{context}"),
            _ => assert_eq!(
                got["response"]["response"]["message"],
                "No human is available to approve this tool call (askpane runs without a window).",
                "{context}"
            ),
        }
        assert_eq!(finished.status.code(), Some(0), "{context}");
    }
}

/// Questions askpane cannot show (no questions at all) are refused at once with a deny that
/// says why; the session goes on.
#[test]
fn an_invalid_question_is_refused_with_the_reason() {
    let dir = support::scratch_dir("claude-invalid");
    let mut records = session_start("answer-with-notes");
    records.push(cli_line(json!({"type": "control_request", "request_id": "ask-1", "request": {
        "subtype": "can_use_tool", "tool_name": "AskUserQuestion", "input": {"questions": []},
        "tool_use_id": "toolu_ask_bad"}})));
    records.push(host_line(json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": "ask-1", "response": {"behavior": "deny", "message": "(why)",
        "toolUseID": "toolu_ask_bad"}}})));
    records.extend(turn_end("toolu_ask_bad", "refused", true));
    let (finished, report) = headless(&write_transcript(&dir, &records), &[]);
    let context = describe(&finished);
    report.assert_all_ok(&context);
    let got: Value = serde_json::from_str(report.host_reply_text()).expect("JSON");
    let message = got["response"]["response"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("These questions could not be shown to the user because"),
        "{message}\n{context}"
    );
    assert!(finished.stderr.contains("cannot show"), "the notice goes to stderr\n{context}");
    assert_eq!(finished.status.code(), Some(0), "{context}");
}

/// Every `control_request` gets exactly one answer, also the ones askpane does not handle: an MCP
/// elicitation is declined (as the Agent SDK does without a handler), anything else gets the
/// SDK's error response. Unanswered, Claude Code would wait for ever.
#[test]
fn every_control_request_gets_exactly_one_answer() {
    let dir = support::scratch_dir("claude-unhandled");
    let requests = [
        json!({"subtype": "elicitation", "mcp_server_name": "db", "message": "Password?",
            "requested_schema": {"type": "object"}}),
        json!({"subtype": "frobnicate_v9", "payload": 1}),
        json!({"subtype": "can_use_tool", "input": {"command": "ls"}, "tool_use_id": "t1"}),
        json!({"subtype": "can_use_tool", "tool_name": "AskUserQuestion", "tool_use_id": "t2"}),
        json!({"subtype": "can_use_tool", "tool_name": "Bash", "tool_use_id": "t3"}),
    ];
    let expected = [
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req-1","response":{"action":"decline"}}}"#,
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"req-2","error":"Unsupported control request subtype: frobnicate_v9"}}"#,
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"req-3","error":"can_use_tool without a tool_name: askpane cannot tell what asks"}}"#,
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"req-4","error":"can_use_tool for AskUserQuestion without an input: there is nothing to show"}}"#,
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"req-5","error":"can_use_tool for Bash without an input: there is nothing to show"}}"#,
    ];
    let mut records = session_start("answer-with-notes");
    for (index, (request, reply)) in requests.iter().zip(expected).enumerate() {
        let request_id = format!("req-{}", index + 1);
        records.push(cli_line(
            json!({"type": "control_request", "request_id": request_id, "request": request}),
        ));
        records.push(host_line(serde_json::from_str(reply).expect("the expected reply is JSON")));
    }
    records.push(cli_line(json!({"type": "result", "subtype": "success", "is_error": false,
        "num_turns": 1, "duration_ms": 10, "result": "Done."})));
    records.push(json!({"dir": "exit", "line": 0}));
    let (finished, report) = headless(&write_transcript(&dir, &records), &[]);
    let context = describe(&finished);
    // Each in order, one line each; nothing extra (the fake flags any line it did not expect).
    report.assert_all_ok(&context);
    let replies: Vec<&str> = report
        .comparisons()
        .iter()
        .filter(|comparison| comparison["expected"]["type"] == "control_response")
        .filter_map(|comparison| comparison["got_text"].as_str())
        .collect();
    assert_eq!(replies, expected, "{context}");
    assert!(report.extra_lines().is_empty(), "{context}");
    assert!(
        finished.stderr.contains("askpane: Claude Code asked for input for an MCP server"),
        "{context}"
    );
    assert_eq!(
        finished
            .stderr
            .matches("answered it with an error so that Claude Code does not wait")
            .count(),
        4,
        "{context}"
    );
    assert_eq!(finished.status.code(), Some(0), "{context}");
}

/// True once process `pid` has ended: no such process, or a zombie nobody reaped yet.
pub fn process_gone(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `123 (sleep) S …`.
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// Waits (bounded) for the fake's `spawn` record to write "child fake" pids; then returns them.
pub fn spawned_pids(path: &Path) -> (u32, u32) {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(text) = fs::read_to_string(path) {
            let pids: Vec<u32> =
                text.split_whitespace().filter_map(|pid| pid.parse().ok()).collect();
            if let [child, fake] = pids[..] {
                return (child, fake);
            }
        }
        assert!(Instant::now() < deadline, "the fake wrote no pids to {}", path.display());
        thread::sleep(Duration::from_millis(20));
    }
}

/// Stops a process the fake started if a test failed before askpane did (by its PID).
pub struct StrayGuard(pub Vec<u32>);

impl Drop for StrayGuard {
    fn drop(&mut self) {
        for pid in &self.0 {
            if !process_gone(*pid) {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        }
    }
}

/// The CLI exits but leaves a child that holds its stdout and stderr open (a shell's background
/// job, an MCP server). askpane must not wait on those pipes for ever, and must not leave the
/// child behind: the CLI's process group is swept once the CLI has exited.
#[test]
fn a_child_the_cli_leaves_behind_is_stopped_and_not_waited_for() {
    let dir = support::scratch_dir("claude-leftover");
    let pids = dir.join("pids");
    let mut records = session_start("answer-with-notes");
    records.push(json!({"dir": "spawn", "line": pids}));
    records.push(cli_line(json!({"type": "result", "subtype": "success", "is_error": false,
        "num_turns": 1, "duration_ms": 10, "result": "Done."})));
    records.push(json!({"dir": "exit", "line": 0}));
    let transcript = write_transcript(&dir, &records);
    let started = Instant::now();
    let (finished, report) = headless(&transcript, &[]);
    let took = started.elapsed();
    let context = describe(&finished);
    let (child, fake) = spawned_pids(&pids);
    let _guard = StrayGuard(vec![child, fake]);
    report.assert_all_ok(&context);
    assert_eq!(finished.status.code(), Some(0), "{context}");
    // Bounded by the grace period, not by the child's 1000 s.
    assert!(took < Duration::from_secs(15), "took {took:?}\n{context}");
    assert!(process_gone(fake), "the fake CLI still runs\n{context}");
    assert!(process_gone(child), "the CLI's child was left behind\n{context}");
}

/// `askpane claude` started in the background (see `claude_command`), with its stdout collected
/// and its stderr lines arriving on a channel.
struct Running {
    process: support::Process,
    stdout: std::sync::mpsc::Receiver<String>,
    stderr: std::sync::mpsc::Receiver<String>,
    report: PathBuf,
}

impl Running {
    fn start(transcript: &Path, dir: &Path, args: &[&str]) -> Running {
        let report = dir.join("report.json");
        let mut command = claude_command(transcript, &report, dir, args);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = support::Process::new(command.spawn().expect("start askpane claude"));
        let stdout = support::read_all(process.child.stdout.take().expect("piped stdout"));
        let pipe = process.child.stderr.take().expect("piped stderr");
        let (sender, stderr) = std::sync::mpsc::channel();
        thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        Running { process, stdout, stderr, report }
    }

    /// Waits (bounded) until the fake has written a line containing `needle` on its stdout.
    fn wait_until_written(&self, needle: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = fs::read_to_string(&self.report).unwrap_or_default();
            if let Ok(report) = serde_json::from_str::<Value>(&text)
                && report["written"].as_array().is_some_and(|lines| {
                    lines.iter().any(|line| line.as_str().is_some_and(|l| l.contains(needle)))
                })
            {
                return;
            }
            assert!(Instant::now() < deadline, "the fake never wrote {needle:?}: {text}");
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM by PID, waits (bounded) for the exit; the exit code, stdout and stderr.
    fn stop_with_sigterm(mut self) -> (Option<i32>, String, String, Duration) {
        let sent = Instant::now();
        let pid = self.process.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(killed.success(), "kill -TERM {pid}");
        let status = self.process.wait(WAIT);
        let took = sent.elapsed();
        let stdout = support::collect(self.stdout);
        let stderr: Vec<String> = self.stderr.try_iter().collect();
        let stderr = stderr.join("\n");
        let status = status.unwrap_or_else(|| panic!("askpane still runs after SIGTERM\n{stderr}"));
        (status.code(), stdout, stderr, took)
    }
}

/// A signal to askpane stops the CLI the way closing the window does, also a CLI that never
/// reads its stdin and ignores SIGTERM: stdin closed, the grace period, SIGTERM to its process
/// group (which ends the child it started), the grace period, SIGKILL. No process is left.
#[test]
fn a_signal_stops_a_cli_that_never_reads_stdin_and_its_children() {
    let dir = support::scratch_dir("claude-signal-hang");
    let pids = dir.join("pids");
    let mut records = session_start("answer-with-notes");
    records.push(json!({"dir": "spawn", "line": pids}));
    records.push(json!({"dir": "hang", "line": {"ignore_term": true}}));
    let transcript = write_transcript(&dir, &records);
    let running = Running::start(&transcript, &dir, &[]);
    let (child, fake) = spawned_pids(&pids);
    let _guard = StrayGuard(vec![child, fake]);
    let (code, stdout, stderr, took) = running.stop_with_sigterm();
    let context = format!("exit {code:?} after {took:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(code, Some(4), "{context}");
    assert_eq!(stdout, "", "{context}");
    assert!(stderr.contains("askpane: stopped by SIGTERM"), "{context}");
    assert!(!stderr.contains("panicked"), "{context}");
    assert!(process_gone(fake), "the CLI still runs\n{context}");
    assert!(process_gone(child), "the CLI's child was left behind\n{context}");
    // Two grace periods of 3 s, then SIGKILL: bounded, and not ended early by the first SIGTERM
    // (which the fake ignores).
    assert!(took >= Duration::from_secs(5), "{context}");
}

/// Issue 24: SIGTERM after the turn has ended, while askpane waits for Claude Code to exit (a CLI
/// slow to exit once its input closed): askpane was stopped by a signal, so it exits 4, not with
/// the status of the CLI it then had to stop (1).
#[test]
fn a_signal_once_the_turn_has_ended_still_exits_4() {
    let dir = support::scratch_dir("claude-signal-after-turn");
    let mut records = session_start("answer-with-notes");
    records.push(cli_line(json!({"type": "result", "subtype": "success", "is_error": false,
        "num_turns": 1, "duration_ms": 10, "result": "Done."})));
    records.push(json!({"dir": "linger", "line": null}));
    let transcript = write_transcript(&dir, &records);
    let running = Running::start(&transcript, &dir, &[]);
    // The turn is over and askpane has closed the CLI's input: it waits for the CLI to exit.
    let deadline = Instant::now() + WAIT;
    while !fs::read_to_string(&running.report).is_ok_and(|text| text.contains("\"lingering\"")) {
        assert!(Instant::now() < deadline, "askpane never closed the CLI's input");
        thread::sleep(Duration::from_millis(20));
    }
    let (code, stdout, stderr, _) = running.stop_with_sigterm();
    let context = format!("exit {code:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(code, Some(4), "{context}");
    assert!(stderr.contains("askpane: stopped by SIGTERM"), "{context}");
    assert!(!stderr.contains("panicked"), "{context}");
}

/// `askpane claude --ui web` stopped by SIGTERM while a question is open in the bridge: Claude
/// Code gets exactly one reply to it, a deny that names the signal; askpane exits 4.
#[test]
fn a_signal_answers_the_open_question_of_a_browser_session_once() {
    if !crate::support::web_bundle_built() {
        return; // Built without scripts/build-web: `--ui web` is tested in `bridge`.
    }
    let dir = support::scratch_dir("claude-signal-web");
    let mut records = records("deny");
    let asked = records
        .iter()
        .position(|record| record["line"]["request"]["subtype"] == "can_use_tool")
        .expect("the capture asks");
    // Up to the question and the host's (captured) deny, then the end.
    records.truncate(asked + 2);
    records.push(json!({"dir": "exit", "line": 0}));
    let request_id = records[asked]["line"]["request_id"].clone();
    let transcript = write_transcript(&dir, &records);
    let running = Running::start(&transcript, &dir, &["--ui", "web"]);
    running.wait_until_written("\"can_use_tool\"");
    // The question travels reader → bridge in well under a millisecond; leave it plenty.
    thread::sleep(Duration::from_millis(500));
    let report_path = running.report.clone();
    let (code, stdout, stderr, _) = running.stop_with_sigterm();
    let report = Report::read(&report_path);
    let context =
        format!("exit {code:?}\nstdout:\n{stdout}\nstderr:\n{stderr}\n{}", report.summary());
    report.assert_all_ok(&context);
    let reply: Value = serde_json::from_str(report.host_reply_text()).expect("JSON");
    assert_eq!(
        reply,
        json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": request_id, "response": {"behavior": "deny",
            "message": "askpane was stopped (SIGTERM) before the user answered. Do not assume an \
                        answer; ask again in chat if you still need one.",
            "toolUseID": "toolu_fake_ask_000001"}}}),
        "{context}"
    );
    assert_eq!(code, Some(4), "{context}");
    assert_eq!(stdout, "", "{context}");
}

// ---------------------------------------------------------------------------------------------
// b. and c. In-process: a ClaudeSession feeding the window

/// A `ClaudeSession` running the fake, and the window showing it (a kittest harness).
struct Hosted {
    harness: Harness<'static, App>,
    session: Option<ClaudeSession>,
    threads: Option<IoThreads>,
    report: PathBuf,
}

impl Hosted {
    /// Starts the fake on `transcript`, with PROMPT as the first turn, and the window on it.
    fn start(transcript: &Path, dir: &Path) -> Self {
        let report = dir.join("report.json");
        let path = |path: &Path| path.to_str().expect("a UTF-8 path").to_owned();
        let options = ClaudeOptions {
            program: PathBuf::from(FAKE),
            extra_args: vec![
                "--transcript".into(),
                path(transcript),
                "--report".into(),
                path(&report),
            ],
            prompt: Some(PROMPT.to_owned()),
            debug: false,
            autopilot: Autopilot::default(),
            own: ClaudeOwn { allow_tools: Vec::new(), print_stream: false },
        };
        let (to_ui, inbox) = transport::memory();
        let mut threads = IoThreads::default();
        let session =
            ClaudeSession::start(&options, to_ui, &mut threads).expect("start the fake CLI");
        let commands = session.commands();
        let harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 800.0))
            .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
            .build_eframe(move |cc| {
                App::new(&cc.egui_ctx, inbox, AppOptions::default())
                    .with_session(commands, Some(PROMPT))
            });
        Hosted { harness, session: Some(session), threads: Some(threads), report }
    }

    fn replaying(name: &str) -> Self {
        Hosted::start(&replay(name), &support::scratch_dir(&format!("claude-{name}")))
    }

    fn state(&self) -> &WindowState {
        self.harness.state().state()
    }

    /// Steps the window until `done`, for at most WAIT.
    fn step_until(&mut self, what: &str, done: impl Fn(&Hosted) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            self.harness.step();
            if done(self) {
                self.harness.run();
                return;
            }
            if Instant::now() >= deadline {
                let report = fs::read_to_string(&self.report).unwrap_or_default();
                panic!(
                    "waited {WAIT:?} for {what}\nnotices: {:?}\nreport: {}",
                    self.state().notices(),
                    crate::support::clip(&report, 4000)
                );
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn wait_for_question(&mut self) {
        self.step_until("the question", |hosted| {
            hosted.state().current().is_some()
                && hosted.harness.query_by_role_and_label(Role::RadioButton, "Sidebar").is_some()
        });
    }

    fn wait_for_turn_end(&mut self) {
        self.step_until("the turn's result", |hosted| {
            hosted.state().session().is_some_and(|session| !session.busy)
        });
    }

    fn click(&mut self, role: Role, label: &str) {
        self.harness.get_by_role_and_label(role, label).click();
        self.harness.run();
    }

    fn focus(&mut self, role: Role, label: &str) {
        self.harness.get_by_role_and_label(role, label).focus();
        self.harness.run();
    }

    fn type_text(&mut self, text: &str) {
        self.harness.event(egui::Event::Text(text.to_owned()));
        self.harness.run();
    }

    fn has_text_with(&self, parts: &[&str]) -> bool {
        has_text_with(&self.harness, parts)
    }

    /// Ends the session as the window does when it closes (3 s grace), waits for its threads
    /// (bounded), and returns the CLI's exit status and the fake's report. Every session thread
    /// must have ended without an error: `run_claude` turns one into askpane's own failure.
    fn finish(&mut self) -> (ExitStatus, Report) {
        let (status, report, threads) = self.finish_unchecked();
        assert_eq!(threads, Ok(()), "a session thread failed\n{}", report.summary());
        (status, report)
    }

    /// `finish`, returning how the session's threads ended instead of asserting it.
    fn finish_unchecked(&mut self) -> (ExitStatus, Report, Result<(), String>) {
        let session = self.session.take().expect("finished once");
        let status = session.shut_down(Duration::from_secs(3)).expect("shut the session down");
        let threads = self.threads.take().expect("finished once");
        let (sender, joined) = crossbeam_channel::bounded(1);
        thread::spawn(move || {
            let _ = sender.send(threads.join().map_err(|error| error.to_string()));
        });
        let joined = joined
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("the session's threads still run {WAIT:?} after shut_down"));
        // What the reader sent last (the session's end) reaches the window.
        self.harness.run();
        (status, Report::read(&self.report), joined)
    }
}

impl Drop for Hosted {
    fn drop(&mut self) {
        // A failed test still stops the fake (by its PID, after a short grace).
        if let Some(session) = self.session.take() {
            let _ = session.shut_down(Duration::from_millis(300));
        }
    }
}

/// Is there a label on screen that contains every one of `parts`?
pub(crate) fn has_text_with(harness: &Harness<'_, App>, parts: &[&str]) -> bool {
    shown_texts(harness).iter().any(|text| parts.iter().all(|part| text.contains(part)))
}

/// The value or label of every node that is not a text run: what the window shows, in order.
pub(crate) fn shown_texts(harness: &Harness<'_, App>) -> Vec<String> {
    harness
        .root()
        .children_recursive()
        .map(|node| node.accesskit_node())
        .filter(|node| node.role() != Role::TextRun)
        .filter_map(|node| node.value().or_else(|| node.label()))
        .collect()
}

#[test]
fn answering_by_clicks_sends_the_captured_reply() {
    let mut hosted = Hosted::replaying("answer-with-notes");
    hosted.wait_for_question();
    assert!(hosted.has_text_with(&["AskUserQuestion: Layout · Features · データベース"]));

    hosted.click(Role::RadioButton, "Sidebar");
    hosted.click(Role::DisclosureTriangle, "Note to the agent (optional, Alt+N)");
    hosted.focus(Role::MultilineTextInput, "Note");
    hosted.type_text(NOTE);
    hosted.click(Role::Button, "Features");
    hosted.click(Role::CheckBox, "Dark mode");
    hosted.click(Role::CheckBox, "Export");
    hosted.click(Role::Button, "データベース");
    hosted.click(Role::RadioButton, "Other");
    hosted.focus(Role::MultilineTextInput, "Your answer");
    hosted.type_text(MYSQL);
    hosted.click(Role::Button, "Submit");
    assert!(hosted.state().book().is_empty());

    hosted.wait_for_turn_end();
    // What the CLI said came back: the tool_result and the model's next text.
    assert!(hosted.harness.query_by_label("↳ result (6 lines)").is_some());
    assert!(hosted.has_text_with(&["FAKE-MODEL GOT"]));
    assert!(hosted.has_text_with(&["— success · 2 turns · "]));
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    assert_reply_as_captured(&report, "answer-with-notes", "");
    assert!(report.extra_lines().is_empty(), "{}", report.summary());
    assert_eq!(status.code(), Some(recorded_exit("answer-with-notes")));
    assert!(hosted.has_text_with(&["ended (exit code 0)"]));
}

#[test]
fn decline_and_stop_denies_with_interrupt() {
    let mut hosted = Hosted::replaying("deny-interrupt");
    hosted.wait_for_question();
    hosted.click(Role::Button, "Decline…");
    hosted.click(Role::Button, "Decline and stop Claude");
    assert!(hosted.state().book().is_empty());
    hosted.wait_for_turn_end();
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    let reply: Value = serde_json::from_str(report.host_reply_text()).expect("JSON");
    assert_eq!(reply["response"]["response"]["behavior"], "deny");
    assert_eq!(reply["response"]["response"]["interrupt"], true);
    assert!(report.extra_lines().is_empty(), "{}", report.summary());
    // The CLI exits 1 after an interrupted turn, as captured; askpane reports it as it is.
    assert_eq!(status.code(), Some(recorded_exit("deny-interrupt")));
    assert_eq!(status.code(), Some(1));
}

#[test]
fn stop_while_the_question_is_open_interrupts_and_the_cancel_removes_it_at_once() {
    // The capture, with a pause right after the CLI's control_cancel_request: the question must
    // go on the cancel alone, before the turn's result comes.
    let dir = support::scratch_dir("claude-interrupt-while-open");
    let go = dir.join("go");
    let mut records = records("interrupt-while-open");
    let cancel = records
        .iter()
        .position(|record| record["line"]["type"] == "control_cancel_request")
        .expect("the capture has the cancel");
    records.insert(cancel + 1, json!({"dir": "wait", "line": go.to_str().expect("UTF-8")}));
    let transcript = write_transcript(&dir, &records);
    let mut hosted = Hosted::start(&transcript, &dir);
    hosted.wait_for_question();

    let stop = hosted.harness.get_by_role_and_label(Role::Button, "Stop");
    assert!(!stop.accesskit_node().is_disabled(), "Stop works while the turn runs");
    hosted.click(Role::Button, "Stop");
    hosted.step_until("the question to go", |hosted| hosted.state().book().is_empty());
    assert!(
        hosted.state().session().is_some_and(|session| session.busy),
        "removed on the cancel alone, before the turn ended"
    );
    assert!(hosted.harness.query_all_by_role(Role::RadioButton).next().is_none());
    assert!(hosted.harness.query_by_role_and_label(Role::Button, "Submit").is_none());
    assert!(
        hosted.state().notices().iter().any(|notice| notice.contains("withdrew")),
        "{:?}",
        hosted.state().notices()
    );

    fs::write(&go, "").expect("let the fake go on");
    hosted.wait_for_turn_end();
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    let interrupt = report
        .comparisons()
        .iter()
        .find(|comparison| comparison["expected"]["request"]["subtype"] == "interrupt")
        .expect("the interrupt was compared");
    assert_eq!(
        interrupt["got"]["request"],
        json!({"subtype": "interrupt"}),
        "{}",
        report.summary()
    );
    // No reply for the withdrawn question, and nothing else the capture does not have.
    assert!(report.extra_lines().is_empty(), "{}", report.summary());
    assert_eq!(status.code(), Some(recorded_exit("interrupt-while-open")));
}

#[test]
fn reply_instead_sends_the_response() {
    let mut hosted = Hosted::replaying("response-freeform");
    hosted.wait_for_question();
    hosted.click(Role::Button, "Answer in my own words…");
    hosted.focus(Role::MultilineTextInput, "Your reply (Ctrl+Enter sends)");
    hosted.type_text(REPLY);
    hosted.click(Role::Button, "Send reply");
    assert!(hosted.state().book().is_empty());
    hosted.wait_for_turn_end();
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    assert_reply_as_captured(&report, "response-freeform", "");
    assert_eq!(status.code(), Some(recorded_exit("response-freeform")));
}

#[test]
fn a_malformed_line_is_reported_once_and_reading_goes_on() {
    let dir = support::scratch_dir("claude-malformed");
    let mut records = records("deny");
    let init = records
        .iter()
        .position(|record| record["line"]["subtype"] == "init")
        .expect("the capture has system/init");
    for (offset, raw) in
        ["this is not JSON", "{\"type\": \"assistant\", cut off"].iter().enumerate()
    {
        records.insert(init + 1 + offset, json!({"dir": "<<", "raw": raw}));
    }
    let transcript = write_transcript(&dir, &records);
    let mut hosted = Hosted::start(&transcript, &dir);
    hosted.wait_for_question();
    let notices: Vec<&String> =
        hosted.state().notices().iter().filter(|notice| notice.contains("not JSON")).collect();
    assert_eq!(notices.len(), 1, "one notice for two malformed lines: {notices:?}");
    assert!(notices[0].contains("this is not JSON"), "{}", notices[0]);
    assert!(hosted.has_text_with(&["not JSON", "goes on reading"]), "shown in the window");

    hosted.click(Role::Button, "Decline…");
    hosted.click(Role::Button, "Decline");
    hosted.wait_for_turn_end();
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn the_cli_dying_mid_question_ends_the_session_and_clears_the_question() {
    let dir = support::scratch_dir("claude-dies");
    let go = dir.join("go");
    let mut records = records("answer-with-notes");
    let asked = records
        .iter()
        .position(|record| record["line"]["request"]["subtype"] == "can_use_tool")
        .expect("the capture has the can_use_tool");
    records.truncate(asked + 1);
    records.extend([
        json!({"dir": "wait", "line": go.to_str().expect("UTF-8")}),
        json!({"dir": "stderr", "line": "Error: the fake CLI fell over"}),
        json!({"dir": "stderr", "line": "    at replay (fake_claude.py)"}),
        json!({"dir": "die", "line": 3}),
    ]);
    let transcript = write_transcript(&dir, &records);
    let mut hosted = Hosted::start(&transcript, &dir);
    hosted.wait_for_question();
    fs::write(&go, "").expect("let the fake die");
    hosted.step_until("the session's end", |hosted| {
        hosted.state().session().is_some_and(|session| session.ended.is_some())
    });
    assert!(hosted.state().book().is_empty(), "the question went with the CLI");
    assert!(hosted.harness.query_all_by_role(Role::RadioButton).next().is_none());
    assert!(hosted.has_text_with(&["ended (exit code 3)"]), "the status line says how it ended");
    assert!(hosted.has_text_with(&["Error: the fake CLI fell over"]), "with its stderr");
    assert!(hosted.has_text_with(&["at replay (fake_claude.py)"]));
    assert!(hosted.state().notices().iter().any(|notice| notice.contains("exit code 3")));
    let prompt = hosted.harness.get_by_role_and_label(Role::MultilineTextInput, "Prompt");
    assert!(prompt.accesskit_node().is_disabled(), "no prompt to a CLI that is gone");

    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    assert_eq!(status.code(), Some(3));
}

/// The CLI dying while a tool permission waits: the card goes with it, as a question does, and
/// nothing can be decided for a CLI that is gone.
#[test]
fn the_cli_dying_with_a_permission_open_clears_its_card() {
    let dir = support::scratch_dir("claude-dies-permission");
    let go = dir.join("go");
    let mut records = session_start("answer-with-notes");
    records.extend(bash_permission_asked());
    records.extend([
        json!({"dir": "wait", "line": go.to_str().expect("UTF-8")}),
        json!({"dir": "stderr", "line": "Error: the fake CLI fell over"}),
        json!({"dir": "die", "line": 3}),
    ]);
    let transcript = write_transcript(&dir, &records);
    let mut hosted = Hosted::start(&transcript, &dir);
    hosted.step_until("the permission card", |hosted| {
        hosted.harness.query_by_role_and_label(Role::Button, "Allow once").is_some()
    });
    assert!(hosted.has_text_with(&["cargo test"]));
    fs::write(&go, "").expect("let the fake die");
    hosted.step_until("the session's end", |hosted| {
        hosted.state().session().is_some_and(|session| session.ended.is_some())
    });
    assert!(
        hosted.harness.query_by_role_and_label(Role::Button, "Allow once").is_none(),
        "the permission card stayed after Claude Code ended"
    );
    assert!(hosted.state().permissions().is_empty());
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    assert_eq!(status.code(), Some(3));
}

/// What the card left behind leads to: "Allow once" on it writes to a CLI that is gone, and the
/// session's writer fails, which `run_claude` reports as askpane's own error (exit 2, "ending the
/// Claude Code session: Broken pipe") instead of Claude Code's exit code 3.
#[test]
fn deciding_a_permission_after_the_cli_ended_does_not_fail_the_session() {
    let dir = support::scratch_dir("claude-decided-late");
    let go = dir.join("go");
    let mut records = session_start("answer-with-notes");
    records.extend(bash_permission_asked());
    records.extend([
        json!({"dir": "wait", "line": go.to_str().expect("UTF-8")}),
        json!({"dir": "die", "line": 3}),
    ]);
    let transcript = write_transcript(&dir, &records);
    let mut hosted = Hosted::start(&transcript, &dir);
    hosted.step_until("the permission card", |hosted| {
        hosted.harness.query_by_role_and_label(Role::Button, "Allow once").is_some()
    });
    fs::write(&go, "").expect("let the fake die");
    hosted.step_until("the session's end", |hosted| {
        hosted.state().session().is_some_and(|session| session.ended.is_some())
    });
    if hosted.harness.query_by_role_and_label(Role::Button, "Allow once").is_some() {
        hosted.click(Role::Button, "Allow once");
    }
    let (status, report, threads) = hosted.finish_unchecked();
    assert_eq!(threads, Ok(()), "the session failed after the CLI had ended");
    report.assert_all_ok("");
    assert_eq!(status.code(), Some(3));
}

/// A prompt or Stop sent after the CLI ended (the window's commands channel stays open) changes
/// nothing: the session still ends cleanly with the CLI's exit code (`App::perform`: "The
/// session may have ended; the transcript then says so").
#[test]
fn commands_after_the_cli_ended_do_not_fail_the_session() {
    let dir = support::scratch_dir("claude-after-end");
    let mut records = session_start("answer-with-notes");
    records.extend([
        json!({"dir": "stderr", "line": "Error: the fake CLI fell over"}),
        json!({"dir": "die", "line": 3}),
    ]);
    let transcript = write_transcript(&dir, &records);
    let mut hosted = Hosted::start(&transcript, &dir);
    hosted.step_until("the session's end", |hosted| {
        hosted.state().session().is_some_and(|session| session.ended.is_some())
    });
    let commands = hosted.session.as_ref().expect("running").commands();
    commands.send(SessionCommand::UserTurn("Are you there?".into())).expect("the channel is open");
    commands.send(SessionCommand::Interrupt).expect("the channel is open");
    // A failure that does not come marks nothing: the commands are handled within a moment.
    thread::sleep(Duration::from_millis(200));
    let (status, report) = hosted.finish();
    report.assert_all_ok("");
    assert_eq!(status.code(), Some(3));
}

// ---------------------------------------------------------------------------------------------
// d. The transcript view and the permission cards, through the in-memory channel

/// A window showing an agent session (no prompt given), its inbox and its commands channel.
fn session_window() -> (Harness<'static, App>, UiSender, Receiver<SessionCommand>) {
    let (sender, inbox) = transport::memory();
    let (commands, command_inbox) = crossbeam_channel::unbounded();
    let harness = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| {
            App::new(&cc.egui_ctx, inbox, AppOptions::default()).with_session(commands, None)
        });
    (harness, sender, command_inbox)
}

/// One CLI line, as the reader sends it to the window.
fn message(line: &Value) -> Inbound {
    Inbound::Session(SessionInbound::Event(Box::new(SessionEvent::Message(parse_cli_line(line)))))
}

/// A permission request for `tool`, and the receiver its decision arrives on.
fn permission(
    request_id: &str,
    tool: &str,
    input: Value,
) -> (Inbound, Receiver<PermissionDecision>) {
    let (reply, decision) = Responder::channel();
    let request = PermissionRequest {
        request_id: request_id.to_owned(),
        tool_name: tool.to_owned(),
        input,
        tool_use_id: Some(format!("toolu_{request_id}")),
        title: None,
        description: None,
        reason: None,
        agent_id: None,
        ..Default::default()
    };
    let ask = PermissionAsk {
        id: RequestId::next(),
        request,
        provenance: Provenance::new("claude", None),
        reply,
    };
    (Inbound::Approval(ApprovalEvent::Permission(Box::new(ask))), decision)
}

fn has_label(harness: &Harness<'_, App>, label: &str) -> bool {
    harness.query_by_label(label).is_some()
}

#[test]
fn a_transcript_of_ten_thousand_events_lays_out_only_what_is_in_view() {
    let (mut harness, sender, _commands) = session_window();
    for n in 0..10_000 {
        let line = match n % 2 {
            0 => json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": format!("Entry {n} says hello.")}]}}),
            _ => json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
                "id": format!("t{n}"), "name": "Bash", "input": {"command": format!("echo {n}")}}]}}),
        };
        sender.send(message(&line));
    }
    harness.run();
    // The newest rows are in view (the transcript sticks to its end); the oldest were never
    // laid out, so they are not in the accessibility tree either.
    assert!(has_text_with(&harness, &["Entry 9998 says hello."]));
    assert!(has_text_with(&harness, &["Bash: echo 9999"]));
    assert!(!has_text_with(&harness, &["Entry 0 says hello."]));
    let laid_out = harness
        .root()
        .children_recursive()
        .filter_map(|node| node.accesskit_node().label())
        .filter(|label| label.starts_with("Entry "))
        .count();
    assert!(laid_out < 100, "{laid_out} transcript rows laid out");
    // A new event still lands in view.
    sender.send(message(&json!({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "The newest one."}]}})));
    harness.run();
    assert!(has_text_with(&harness, &["The newest one."]));
}

#[test]
fn the_transcript_shows_text_tool_calls_results_and_the_turn_summary() {
    let (mut harness, sender, _commands) = session_window();
    sender.send(message(&json!({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "I will run the **unit tests** first."},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash",
         "input": {"command": "cargo test", "description": "Run the tests"}}]}})));
    sender.send(message(&json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "toolu_1",
         "content": "running 3 tests\ntest parse ... ok\ntest reply ... ok"}]}})));
    sender.send(message(&json!({"type": "result", "subtype": "success", "num_turns": 2,
        "duration_ms": 1400, "total_cost_usd": 0.0021, "result": "All green."})));
    harness.run();

    assert!(has_text_with(&harness, &["I will run the"]), "assistant markdown shows");
    assert!(has_text_with(&harness, &["unit tests"]));
    let call = harness.query_by_role_and_label(Role::DisclosureTriangle, "⚙ Bash: cargo test");
    assert!(call.is_some(), "the call shows as one line");
    assert!(!has_text_with(&harness, &["\"command\": \"cargo test\""]), "collapsed at first");
    harness.get_by_role_and_label(Role::DisclosureTriangle, "⚙ Bash: cargo test").click();
    harness.run();
    assert!(has_text_with(&harness, &["\"command\": \"cargo test\"", "\"description\""]));

    assert!(!has_text_with(&harness, &["test parse ... ok"]), "the result is folded");
    harness.get_by_role_and_label(Role::DisclosureTriangle, "↳ result (3 lines)").click();
    harness.run();
    assert!(has_text_with(&harness, &["test parse ... ok"]));

    assert!(has_label(&harness, "— success · 2 turns · 1.4 s · $0.0021 —"));
}

#[test]
fn a_bash_permission_shows_the_command_and_allow_once_allows() {
    let (mut harness, sender, _commands) = session_window();
    let (ask, decision) = permission("r1", "Bash", json!({"command": "cargo test"}));
    sender.send(ask);
    harness.run();
    assert!(has_label(&harness, "Claude wants to use Bash"));
    // Issue 26: the command in its own block, as it would run (no prompt before it).
    assert!(has_label(&harness, "cargo test"));
    assert_eq!(decision.try_recv(), Err(TryRecvError::Empty), "nothing decided yet");
    harness.get_by_role_and_label(Role::Button, "Allow once").click();
    harness.run();
    assert_eq!(decision.try_recv(), Ok(PermissionDecision::AllowOnce));
    assert!(harness.query_by_role_and_label(Role::Button, "Allow once").is_none(), "card gone");
    assert!(harness.state().state().permissions().is_empty());
}

#[test]
fn deny_sends_the_typed_message() {
    let (mut harness, sender, _commands) = session_window();
    let (ask, decision) = permission("r2", "Bash", json!({"command": "rm -rf target"}));
    sender.send(ask);
    harness.run();
    harness.get_by_role_and_label(Role::TextInput, "Message with the denial (optional)").focus();
    harness.run();
    harness.event(egui::Event::Text("Use cargo clean instead".to_owned()));
    harness.run();
    harness.get_by_role_and_label(Role::Button, "Deny").click();
    harness.run();
    assert_eq!(
        decision.try_recv(),
        Ok(PermissionDecision::Deny {
            message: "The user denied this tool call and said: Use cargo clean instead".to_owned()
        })
    );
    assert!(harness.state().state().permissions().is_empty());
}

#[test]
fn an_edit_permission_shows_the_lines_removed_and_added() {
    let (mut harness, sender, _commands) = session_window();
    let input = json!({"file_path": "src/main.rs", "old_string": "let x = 1;\nlet y = 2;",
        "new_string": "let x = 10;"});
    let (ask, _decision) = permission("r3", "Edit", input);
    sender.send(ask);
    harness.run();
    assert!(has_label(&harness, "Claude wants to use Edit"));
    assert!(has_label(&harness, "src/main.rs"));
    // Issue 26: a unified diff's lines (the file was not read: unnumbered).
    for line in ["-let x = 1;", "-let y = 2;", "+let x = 10;"] {
        assert!(has_label(&harness, line), "{line}");
    }
}

#[test]
fn a_withdrawn_permission_goes_at_once() {
    let (mut harness, sender, _commands) = session_window();
    let (ask, decision) = permission("r4", "Bash", json!({"command": "cargo build"}));
    sender.send(ask);
    harness.run();
    assert!(harness.query_by_role_and_label(Role::Button, "Allow once").is_some());
    sender
        .send(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id: "r4".to_owned() }));
    harness.step();
    assert!(harness.state().state().permissions().is_empty(), "gone in the next frame");
    assert!(harness.query_by_role_and_label(Role::Button, "Allow once").is_none());
    assert!(!has_text_with(&harness, &["$ cargo build"]));
    // The responder is settled, so nothing waits on it.
    assert!(matches!(decision.try_recv(), Ok(PermissionDecision::Deny { .. })));
}

#[test]
fn the_prompt_box_sends_a_turn_and_stop_interrupts_only_a_running_one() {
    let (mut harness, sender, commands) = session_window();
    harness.run();
    let stop_disabled = |harness: &Harness<'_, App>| {
        harness.get_by_role_and_label(Role::Button, "Stop").accesskit_node().is_disabled()
    };
    assert!(stop_disabled(&harness), "no turn yet: nothing to stop");
    harness.get_by_role_and_label(Role::MultilineTextInput, "Prompt").focus();
    harness.run();
    harness.event(egui::Event::Text("Fix the failing test".to_owned()));
    harness.run();
    harness.get_by_role_and_label(Role::Button, "Send").click();
    harness.run();
    assert_eq!(commands.try_recv(), Ok(SessionCommand::UserTurn("Fix the failing test".into())));
    assert!(has_label(&harness, "Fix the failing test"), "the turn shows in the transcript");
    let prompt = harness.get_by_role_and_label(Role::MultilineTextInput, "Prompt");
    assert_eq!(prompt.value().as_deref(), Some(""), "the box is empty again");

    assert!(!stop_disabled(&harness), "a turn runs");
    harness.get_by_role_and_label(Role::Button, "Stop").click();
    harness.run();
    assert_eq!(commands.try_recv(), Ok(SessionCommand::Interrupt));

    sender.send(message(&json!({"type": "result", "subtype": "error_during_execution",
        "is_error": true, "num_turns": 1})));
    harness.run();
    assert!(stop_disabled(&harness), "the turn is over");
    harness.get_by_role_and_label(Role::Button, "Stop").click();
    harness.run();
    assert_eq!(commands.try_recv(), Err(TryRecvError::Empty), "a disabled Stop sends nothing");
}

// ---------------------------------------------------------------------------------------------
// e. The real Claude Code CLI, headless, against the fake Messages API

/// What a headless `askpane claude` run of the real CLI showed.
struct RealRun {
    /// Kept while the test runs (and after it, when it fails).
    _scratch: Scratch,
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    tool_results: Vec<Value>,
    requests: String,
    elapsed: Duration,
}

impl RealRun {
    fn report(&self) -> String {
        format!(
            "askpane claude exited {:?} after {:.1} s\ntool_results: {:#?}\nAPI requests:\n{}\
             stdout (end):\n{}\nstderr:\n{}",
            self.status.map(|status| status.code()),
            self.elapsed.as_secs_f64(),
            self.tool_results,
            self.requests,
            crate::support::tail(&self.stdout, 3000),
            self.stderr
        )
    }

    /// The model read exactly one tool_result, for the question, with this text.
    fn assert_tool_result(&self, expected: &str, is_error: bool) {
        let report = self.report();
        assert_eq!(self.status.and_then(|status| status.code()), Some(0), "{report}");
        let [result] = self.tool_results.as_slice() else {
            panic!("expected exactly one tool_result\n{report}");
        };
        assert_eq!(result["tool_use_id"], crate::fake_api::TOOL_USE_ID, "{report}");
        assert_eq!(
            interop::tool_result_text(result),
            expected,
            "left: what the model read\n{report}"
        );
        assert_eq!(result["is_error"] == true, is_error, "is_error\n{report}");
    }
}

/// `askpane claude --claude-bin <cli> -p PROMPT <args>` in a scratch HOME and project, with the
/// variables of protocol.md §0 and no display. `answers` goes to a file passed as `--answers`.
fn real_cli(cli: Cli, name: &str, answers: Option<&Value>, args: &[&str]) -> RealRun {
    let scratch = Scratch::new(&format!("claude-host-{name}-{}", cli.version()));
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(&dir).expect("create a scratch directory");
    }
    let api = FakeApi::start();
    let mut command = crate::support::askpane_command();
    command.arg("claude").arg("--claude-bin").arg(cli.binary()).args(["-p", PROMPT]);
    if let Some(answers) = answers {
        let file = scratch.root.join("answers.json");
        fs::write(&file, answers.to_string()).expect("write the answers file");
        command.arg("--answers").arg(file).arg("--submit");
    }
    command.args(args);
    scratch
        .isolate(&mut command, &api.base_url())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = command.spawn().expect("start askpane claude");
    let marker = format!("{RUN_MARKER}={}", scratch.root.display());
    let mut process = CliProcess::new(child, Some(marker));
    let stdout = support::read_all(process.child.stdout.take().expect("piped stdout"));
    let stderr = support::read_all(process.child.stderr.take().expect("piped stderr"));
    let status = process.wait(SCENARIO_LIMIT);
    let elapsed = started.elapsed();
    drop(process); // kills askpane and the CLI (by PID and run marker) if still running
    RealRun {
        _scratch: scratch,
        status,
        stdout: support::collect(stdout),
        stderr: support::collect(stderr),
        tool_results: api.tool_results(),
        requests: api.request_summary(),
        elapsed,
    }
}

/// Labels only: Tabs; Search + Export; SQLite. Also relays the CLI's stream on stdout.
fn real_labels(cli: Cli) {
    let answers =
        json!({"Layout": "Tabs", "Features": ["Search", "Export"], "データベース": "SQLite"});
    let run = real_cli(cli, "labels", Some(&answers), &["--print-stream"]);
    // As from Claude Code's dialog, the picked layout's mockup goes with its label.
    let layout = format!("{} selected preview:\n{TABS_PREVIEW}", piece(LAYOUT, "Tabs"));
    let expected =
        labels_answered(&[layout, piece(FEATURES, "Search, Export"), piece(DATABASE, "SQLite")]);
    run.assert_tool_result(&expected, false);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("every relayed line is JSON"))
        .collect();
    let report = run.report();
    assert!(
        lines.iter().any(|line| line["request"]["subtype"] == "can_use_tool"),
        "the question is in the relayed stream\n{report}"
    );
    assert_eq!(lines.last().map(|line| &line["type"]), Some(&json!("result")), "{report}");
}

/// Free text, a note and the chosen preview (the capture `session.answer-with-notes`).
fn real_notes(cli: Cli) {
    let run = real_cli(cli, "notes", Some(&notes_answers()), &[]);
    let layout =
        format!("{} selected preview:\n{SIDEBAR_PREVIEW} notes: {NOTE}", piece(LAYOUT, "Sidebar"));
    let pieces = [layout, piece(FEATURES, "Dark mode, Export"), piece(DATABASE, MYSQL)];
    run.assert_tool_result(&free_answered(cli, &pieces), false);
}

/// Declined with a message: the model reads the message verbatim, as an error.
fn real_decline(cli: Cli) {
    let run = real_cli(cli, "decline", None, &["--decline", "Not now, use the defaults."]);
    let expected =
        "The user declined to answer these questions and said: Not now, use the defaults.";
    run.assert_tool_result(expected, true);
}

/// Only the layout answered: a CLI that advertises `ask_user_question_unanswered_v1` (2.1.330)
/// reads the other two as skipped; 2.1.197, which does not, gets them left out.
fn real_partial(cli: Cli) {
    let run = real_cli(cli, "partial", Some(&json!({"Layout": "Tabs"})), &[]);
    let layout = format!("{} selected preview:\n{TABS_PREVIEW}", piece(LAYOUT, "Tabs"));
    let expected = match cli {
        Cli::V2_1_330 => {
            let skipped = "The user skipped this question.";
            let pieces = [layout, piece(FEATURES, skipped), piece(DATABASE, skipped)];
            free_answered(cli, &pieces)
        }
        Cli::V2_1_197 => labels_answered(&[layout]),
    };
    run.assert_tool_result(&expected, false);
}

interop::on_both_versions! {
    real_labels;
    real_notes;
    real_partial;
    real_decline;
}
