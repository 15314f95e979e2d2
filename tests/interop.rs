//! askpane against the real Claude Code CLI (2.1.330 and 2.1.197): the CLI runs as the Agent SDK
//! starts it, against the fake Messages API of `fake_api`, with `askpane hook` as its PreToolUse
//! hook, and each test checks the exact tool_result text the model then reads.
//!
//! The CLIs come from the npm registry through `scripts/claude-cli`, which installs them into
//! `${ASKPANE_CLAUDE_CACHE:-$HOME/.cache/askpane/claude-cli}` (layout: `bin/claude-<version>`).
//! Each run gets its own temporary HOME, TMPDIR and project directory (with the hook in
//! `.claude/settings.json`) and a cleared environment: the real home, display and any outer
//! Claude Code session are never seen. Every wait is bounded; the CLI, and any hook it started,
//! is killed by its PID if it outlives the run (hooks are found by a marker in their environment).
//!
//! A failure shows the run: tool_results, host requests, API requests, stdout and stderr tails.
//! `ASKPANE_INTEROP_SHOW=1 cargo test interop -- --nocapture` shows every run's.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{self, FakeApi, TOOL_USE_ID};
use crate::support;

/// Longest a scenario may take from starting the CLI to its `result` line.
pub(crate) const SCENARIO_LIMIT: Duration = Duration::from_secs(60);
/// Longest the CLI may take to exit once its stdin is closed after the `result`.
pub(crate) const EXIT_LIMIT: Duration = Duration::from_secs(10);

/// The user turn, as the TypeScript Agent SDK wrote it (`tests/fixtures/sdk.stdin.jsonl`).
const USER_TURN: &str = r#"{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":"Please ask me which layout, features and database I want."}]},"parent_tool_use_id":null}"#;

pub(crate) const LAYOUT: &str = "Which layout should the settings page use?";
pub(crate) const FEATURES: &str = "Which features do you want to enable?";
pub(crate) const DATABASE: &str = "どのデータベースを使いますか？";
pub(crate) const SIDEBAR_PREVIEW: &str = "+--------+-----------------+\n| Nav    | Content         |\n| - A    |                 |\n| - B    |                 |\n+--------+-----------------+";
/// The preview of the captures' "Tabs" layout option.
pub(crate) const TABS_PREVIEW: &str = "+------+------+------+\n| Tab1 | Tab2 | Tab3 |\n+------+------+------+\n| Content            |\n+--------------------+";

// ---------------------------------------------------------------------------------------------
// The CLI versions

/// A Claude Code CLI version under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cli {
    /// The native binary of `@anthropic-ai/claude-agent-sdk-linux-x64@0.3.330`.
    V2_1_330,
    /// `@anthropic-ai/claude-code@2.1.197` (its native `bin/claude.exe`).
    V2_1_197,
}

impl Cli {
    pub(crate) fn version(self) -> &'static str {
        match self {
            Cli::V2_1_330 => "2.1.330",
            Cli::V2_1_197 => "2.1.197",
        }
    }

    /// `CACHE/bin/claude-<version>`, the layout `scripts/claude-cli` documents.
    pub(crate) fn binary(self) -> PathBuf {
        support::agents::claude_cli(self.version())
    }

    /// Whether this version ends every answered tool_result with "Your questions have been
    /// answered: … You can now continue …" (2.1.197), or switches to "The user answered: … Read
    /// the answers carefully …" when an answer is free text or has notes (2.1.330; protocol §7).
    fn always_labels_ending(self) -> bool {
        self == Cli::V2_1_197
    }
}

// ---------------------------------------------------------------------------------------------
// The texts the model reads (protocol.md §7)

/// `"<question>"="<answer>"`, one piece of an answered tool_result.
pub(crate) fn piece(question: &str, answer: &str) -> String {
    format!("\"{question}\"=\"{answer}\"")
}

/// The tool_result of answers that are all option labels (or joins of labels), no notes.
pub(crate) fn labels_answered(pieces: &[String]) -> String {
    format!(
        "Your questions have been answered: {}. You can now continue with these answers in mind.",
        pieces.join(", ")
    )
}

/// The tool_result of answers with free text or notes, as `cli` words it.
pub(crate) fn free_answered(cli: Cli, pieces: &[String]) -> String {
    if cli.always_labels_ending() {
        return labels_answered(pieces);
    }
    format!(
        "The user answered: {}. Read the answers carefully \u{2014} they may request \
         clarification, changes, or that you not proceed \u{2014} and follow what they actually say.",
        pieces.join(", ")
    )
}

/// Tabs / Search, Export / SQLite: the answers of the captured hook reply.
pub(crate) fn captured_hook_answers_text() -> String {
    labels_answered(&[
        piece(LAYOUT, "Tabs"),
        piece(FEATURES, "Search, Export"),
        piece(DATABASE, "SQLite"),
    ])
}

// ---------------------------------------------------------------------------------------------
// Scenarios: the harness alone, with a stand-in hook

/// The captured hook reply (allow + answers) is what the model reads, and the host is not asked.
/// Proves the harness without askpane: the expected text is protocol.md §7's "labels only".
fn stand_in_allow(cli: Cli) {
    let mut session = Session::new(cli, "stand-in-allow");
    session.install_stand_in_hook(&support::fixture_json("hook.pretooluse.allow.stdout.json"));
    session.env("ASKPANE_INTEROP_PROBE", "passed down");
    let run = session.run();
    let expected = "Your questions have been answered: \"Which layout should the settings page use?\"=\"Tabs\", \"Which features do you want to enable?\"=\"Search, Export\", \"どのデータベースを使いますか？\"=\"SQLite\". You can now continue with these answers in mind.";
    assert_eq!(expected, captured_hook_answers_text());
    run.assert_host_asked(false);
    run.assert_tool_result(expected, false);
    // What the hook was given: the PreToolUse envelope, and the CLI's environment.
    let input = run.hook_input();
    let context = run.report();
    assert_eq!(input["hook_event_name"], "PreToolUse", "{context}");
    assert_eq!(input["tool_name"], "AskUserQuestion", "{context}");
    assert_eq!(input["tool_use_id"], TOOL_USE_ID, "{context}");
    assert_eq!(input["tool_input"], fake_api::captured_questions(), "{context}");
    let environment = run.hook_environment();
    assert!(
        environment.lines().any(|line| line == "ASKPANE_INTEROP_PROBE=passed down"),
        "the CLI did not pass its environment down to the hook:\n{environment}\n{context}"
    );
    assert!(
        !environment.lines().any(|line| line.starts_with("DISPLAY=")),
        "the hook saw a DISPLAY:\n{environment}\n{context}"
    );
    // With the variables of protocol.md §0 the CLI calls nothing but the streaming Messages API
    // (and 2.1.197 first sends a `HEAD /`, to open the connection early).
    for request in &run.api_requests {
        let route = (request["method"].as_str(), request["path"].as_str());
        match route {
            (Some("POST"), Some("/v1/messages?beta=true")) => {
                assert_eq!(request["body"]["stream"], true, "a request did not stream\n{context}");
            }
            (Some("HEAD"), Some("/")) if cli == Cli::V2_1_197 => {}
            _ => panic!("the CLI called {route:?}\n{context}"),
        }
    }
}

/// A PreToolUse deny with a reason: what the model reads, as each version words it.
fn stand_in_deny(cli: Cli) {
    let reason = "The user declined to answer these questions and said: Not now, use the defaults.";
    let session = Session::new(cli, "stand-in-deny");
    session.install_stand_in_hook(&json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": reason}}));
    let run = session.run();
    run.assert_host_asked(false);
    run.assert_tool_result(&deny_text(cli, reason), true);
}

/// A PreToolUse allow without `updatedInput` does not answer: the host is asked, and the host's
/// answer is what the model reads.
fn stand_in_falls_through(cli: Cli) {
    let mut session = Session::new(cli, "stand-in-falls-through");
    session.install_stand_in_hook(
        &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}),
    );
    session.host_answers(json!({LAYOUT: "Tabs", FEATURES: "Search, Export", DATABASE: "SQLite"}));
    let run = session.run();
    run.assert_host_asked(true);
    run.assert_tool_result(&captured_hook_answers_text(), false);
}

/// What the model reads when a hook's 3-second `--timeout` ran out on a preset nobody confirmed
/// (`pieces`, as the model reads them): a deny that tells it apart.
fn unconfirmed(cli: Cli, pieces: &[String]) -> String {
    let reason = format!(
        "No response after 3s \u{2014} the user may be away from keyboard. Proceed using your \
         best judgment based on the context so far; you can re-ask this question later if it's \
         still relevant.\n\nAnswers were filled in in advance for the user to confirm, but \
         nobody confirmed them: {}. They are not the user's answers.",
        pieces.join(", ")
    );
    deny_text(cli, &reason)
}

/// The tool_result of a PreToolUse deny with `reason`.
fn deny_text(cli: Cli, reason: &str) -> String {
    match cli {
        Cli::V2_1_330 => format!("PreToolUse:AskUserQuestion hook error: {reason}"),
        Cli::V2_1_197 => reason.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Scenarios: askpane hook

/// a. Labels: Layout Tabs, Features Search + Export, database SQLite.
fn hook_answers_labels(cli: Cli) {
    let mut session = Session::new(cli, "labels");
    session.install_askpane_hook();
    session.answers(
        json!({"Layout": "Tabs", FEATURES: ["Search", "Export"], "データベース": "SQLite"}),
    );
    let run = session.run();
    run.assert_askpane_hook_ran();
    run.assert_host_asked(false);
    // As Claude Code's own dialog does (protocol.md §15), the picked mockup goes with its label;
    // a preview is no free text, so the model still reads "Your questions have been answered".
    let layout = format!("{} selected preview:\n{TABS_PREVIEW}", piece(LAYOUT, "Tabs"));
    let expected =
        labels_answered(&[layout, piece(FEATURES, "Search, Export"), piece(DATABASE, "SQLite")]);
    run.assert_tool_result(&expected, false);
}

/// b. Multi-select: Features Dark mode + Search + Export; the other questions unanswered are
/// left out.
fn hook_answers_multi_select(cli: Cli) {
    let mut session = Session::new(cli, "multi-select");
    session.install_askpane_hook();
    session.answers(json!({"Features": ["Dark mode", "Search", "Export"]}));
    let run = session.run();
    run.assert_askpane_hook_ran();
    run.assert_host_asked(false);
    run.assert_tool_result(
        &labels_answered(&[piece(FEATURES, "Dark mode, Search, Export")]),
        false,
    );
}

/// c. Other: free text for the database (the capture `session.answer-free-text.2.1.330`).
fn hook_answers_other(cli: Cli) {
    let mut session = Session::new(cli, "other");
    session.install_askpane_hook();
    session.answers(json!({"Layout": "Sidebar", "Features": ["Dark mode", "Export"],
        DATABASE: {"other": "MySQL を Docker で動かしたい"}}));
    let run = session.run();
    run.assert_askpane_hook_ran();
    run.assert_host_asked(false);
    let pieces = [
        format!("{} selected preview:\n{SIDEBAR_PREVIEW}", piece(LAYOUT, "Sidebar")),
        piece(FEATURES, "Dark mode, Export"),
        piece(DATABASE, "MySQL を Docker で動かしたい"),
    ];
    run.assert_tool_result(&free_answered(cli, &pieces), false);
}

/// d. A note on a previewed option: the model reads the chosen preview and the note (the captures
/// `session.answer-with-notes.2.1.330` and `session.answer.2.1.197`).
fn hook_answers_notes_and_preview(cli: Cli) {
    let mut session = Session::new(cli, "notes");
    session.install_askpane_hook();
    session.answers(json!({
        "Layout": {"choose": "Sidebar", "notes": "Keep the sidebar narrow, please."},
        "Features": ["Dark mode", "Export"],
        DATABASE: {"other": "MySQL を Docker で動かしたい"}}));
    let run = session.run();
    run.assert_askpane_hook_ran();
    run.assert_host_asked(false);
    let layout = format!(
        "{} selected preview:\n{SIDEBAR_PREVIEW} notes: Keep the sidebar narrow, please.",
        piece(LAYOUT, "Sidebar")
    );
    let pieces = [
        layout,
        piece(FEATURES, "Dark mode, Export"),
        piece(DATABASE, "MySQL を Docker で動かしたい"),
    ];
    run.assert_tool_result(&free_answered(cli, &pieces), false);
}

/// e. Declined with a message: a PreToolUse deny whose reason the model reads.
fn hook_declines(cli: Cli) {
    let mut session = Session::new(cli, "decline");
    session.install_askpane_hook();
    session.env("ASKPANE_DECLINE", "Not now, use the defaults.");
    let run = session.run();
    run.assert_host_asked(false);
    let reason = "The user declined to answer these questions and said: Not now, use the defaults.";
    run.assert_tool_result(&deny_text(cli, reason), true);
}

/// f. No display and no preset answers: the hook hands the question back to Claude Code, the
/// host is asked (`can_use_tool`), and the host's answer is what the model reads.
fn hook_without_display_hands_back(cli: Cli) {
    let mut session = Session::new(cli, "no-display");
    session.install_askpane_hook();
    session.host_answers(json!({LAYOUT: "Tabs", FEATURES: "Search, Export", DATABASE: "SQLite"}));
    let run = session.run();
    run.assert_askpane_hook_ran();
    run.assert_host_asked(true);
    run.assert_tool_result(&captured_hook_answers_text(), false);
}

/// g. Issue 10: two sessions whose hooks ask at the same moment, through one `askpane inbox` on
/// a virtual display: each model reads its own. Each hook's preset fills its form in the inbox's
/// window and its `--timeout` runs out, so the questions really wait in the window; nobody
/// confirms the preset, so each model reads it told apart as unconfirmed (issue 24 item 6), never
/// as the user's answer. A subscriber on the socket sees both arrive.
fn two_sessions_ask_one_inbox(cli: Cli) {
    let xvfb = crate::display::Xvfb::start();
    let world = Scratch::new(&format!("one-inbox-{}", cli.version()));
    let runtime = world.root.join("run");
    fs::create_dir_all(&runtime).expect("make the runtime directory");
    fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("narrow the runtime directory");
    let state = world.root.join("state");
    let inbox_env = [
        ("DISPLAY", xvfb.display()),
        ("XDG_RUNTIME_DIR", runtime.display().to_string()),
        ("XDG_STATE_HOME", state.display().to_string()),
    ];
    let mut inbox = Command::new(env!("CARGO_BIN_EXE_askpane"));
    inbox.arg("inbox").env_clear().envs(inbox_env.iter().map(|(name, value)| (name, value)));
    inbox.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let _inbox = support::Process::new(inbox.spawn().expect("start askpane inbox"));
    let socket = runtime.join("askpane/inbox.sock");
    let deadline = Instant::now() + support::WAIT;
    let watcher = loop {
        if let Ok(stream) = std::os::unix::net::UnixStream::connect(&socket) {
            break stream;
        }
        assert!(Instant::now() < deadline, "the inbox never listened");
        thread::sleep(Duration::from_millis(20));
    };
    watcher.set_read_timeout(Some(support::WAIT)).expect("a read timeout");
    let mut writer = watcher.try_clone().expect("clone the socket");
    writer.write_all(b"{\"type\":\"subscribe\"}\n").expect("subscribe");
    let mut events = BufReader::new(watcher);

    let tabs = format!("{} selected preview:\n{TABS_PREVIEW}", piece(LAYOUT, "Tabs"));
    let sidebar = format!("{} selected preview:\n{SIDEBAR_PREVIEW}", piece(LAYOUT, "Sidebar"));
    let asks = [
        (
            "toolu_session_a",
            json!({"Layout": "Tabs", FEATURES: ["Search", "Export"], "データベース": "SQLite"}),
            unconfirmed(cli, &[tabs, piece(FEATURES, "Search, Export"), piece(DATABASE, "SQLite")]),
        ),
        (
            "toolu_session_b",
            json!({"Layout": "Sidebar", FEATURES: ["Dark mode"], "データベース": "PostgreSQL"}),
            unconfirmed(
                cli,
                &[sidebar, piece(FEATURES, "Dark mode"), piece(DATABASE, "PostgreSQL")],
            ),
        ),
    ];
    let running: Vec<_> = asks
        .iter()
        .map(|(tool_use_id, answers, _)| {
            let mut session = Session::new(cli, &format!("one-inbox-{tool_use_id}"));
            session.api = FakeApi::start_as(tool_use_id);
            session.install_askpane_hook();
            let file = session.scratch.root.join("answers.json");
            fs::write(&file, answers.to_string()).expect("write the answers file");
            session.env("ASKPANE_ANSWERS", file.to_str().expect("a UTF-8 path"));
            session.env("ASKPANE_TIMEOUT", "3").env("ASKPANE_NO_INBOX", "0");
            for (name, value) in &inbox_env {
                session.env(name, value);
            }
            thread::spawn(move || session.run())
        })
        .collect();
    let runs: Vec<Run> =
        running.into_iter().map(|run| run.join().expect("a session thread")).collect();
    for ((tool_use_id, _, expected), run) in asks.iter().zip(&runs) {
        let context = run.report();
        let [result] = run.tool_results.as_slice() else {
            panic!("expected exactly one tool_result\n{context}");
        };
        assert_eq!(result["tool_use_id"], *tool_use_id, "{context}");
        assert_eq!(tool_result_text(result), *expected, "{context}");
        run.assert_host_asked(false);
    }
    let mut asked = Vec::new();
    while asked.len() < 2 {
        let mut line = String::new();
        let read = events.read_line(&mut line).expect("the inbox's events in time");
        assert!(read > 0, "the inbox closed the connection");
        let event: Value = serde_json::from_str(&line).expect("an event is JSON");
        if event["type"] == "asked" {
            asked.push(event["request"]["tool_use_id"].as_str().unwrap_or_default().to_owned());
        }
    }
    asked.sort();
    assert_eq!(asked, ["toolu_session_a", "toolu_session_b"]);
    let mut quit = Command::new(env!("CARGO_BIN_EXE_askpane"));
    quit.args(["inbox", "--quit"]).env_clear().envs(inbox_env.iter().map(|(n, v)| (n, v)));
    let _ = support::run_bounded(&mut quit, None);
}

/// One `#[test]` per version for each scenario: `<scenario>::v2_1_330` and `<scenario>::v2_1_197`.
macro_rules! on_both_versions {
    ($($(#[$attribute:meta])* $scenario:ident;)*) => {$(
        mod $scenario {
            $(#[$attribute])*
            #[test]
            fn v2_1_330() {
                super::$scenario(super::Cli::V2_1_330);
            }
            $(#[$attribute])*
            #[test]
            fn v2_1_197() {
                super::$scenario(super::Cli::V2_1_197);
            }
        }
    )*};
}

pub(crate) use on_both_versions;

on_both_versions! {
    stand_in_allow;
    stand_in_deny;
    stand_in_falls_through;
    hook_answers_labels;
    hook_answers_multi_select;
    hook_answers_other;
    hook_answers_notes_and_preview;
    hook_declines;
    hook_without_display_hands_back;
    two_sessions_ask_one_inbox;
}

// ---------------------------------------------------------------------------------------------
// The harness

/// What the test host does when the CLI asks it (`can_use_tool`).
enum HostReply {
    /// Allow, with the questions as received plus these `answers`.
    Answer(Value),
    /// Deny with a message that says the host was not expected to be asked, so that a wrong turn
    /// still ends quickly and the failure shows what happened.
    Unexpected,
}

const UNEXPECTED_HOST_MESSAGE: &str =
    "(the test host was asked; this scenario expected the hook to answer)";

/// One CLI run being set up: a temporary HOME, TMPDIR and project, a fake API, the environment.
struct Session {
    cli: Cli,
    scratch: Scratch,
    api: FakeApi,
    env: Vec<(String, String)>,
    host: HostReply,
}

impl Session {
    fn new(cli: Cli, name: &str) -> Self {
        cli.binary(); // fails first, with the hint, when the cache is missing
        let scratch = Scratch::new(&format!("{name}-{}", cli.version()));
        for dir in [scratch.home(), scratch.project(), scratch.tmp(), scratch.hook_dir()] {
            fs::create_dir_all(&dir).expect("create a scratch directory");
        }
        Session {
            cli,
            scratch,
            api: FakeApi::start(),
            env: Vec::new(),
            host: HostReply::Unexpected,
        }
    }

    /// Adds a variable to the CLI's environment (which it passes down to the hook).
    fn env(&mut self, name: &str, value: &str) -> &mut Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Preset answers for `askpane hook`: `ASKPANE_ANSWERS=<file>` and `ASKPANE_SUBMIT=1`.
    fn answers(&mut self, answers: Value) -> &mut Self {
        let file = self.scratch.root.join("answers.json");
        fs::write(&file, answers.to_string()).expect("write the answers file");
        let file = file.to_str().expect("a UTF-8 scratch path").to_owned();
        self.env("ASKPANE_ANSWERS", &file).env("ASKPANE_SUBMIT", "1")
    }

    /// The host answers a `can_use_tool` with these answers.
    fn host_answers(&mut self, answers: Value) -> &mut Self {
        self.host = HostReply::Answer(answers);
        self
    }

    /// `askpane hook` as the project's PreToolUse hook for AskUserQuestion, installed by
    /// `askpane install claude --project <project>` (checked to write what `write_hook_settings`
    /// would: the command `<absolute path of askpane> hook`, timeout 86400).
    fn install_askpane_hook(&self) {
        let project = self.scratch.project();
        let child = Command::new(env!("CARGO_BIN_EXE_askpane"))
            .args(["install", "claude", "--project"])
            .arg(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
            .env("HOME", self.scratch.home())
            .env("XDG_RUNTIME_DIR", support::private_runtime_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run askpane install claude");
        let mut process = CliProcess::new(child, None);
        let Some(status) = process.wait(EXIT_LIMIT) else {
            panic!("askpane install claude still runs after {EXIT_LIMIT:?}");
        };
        let mut output = String::new();
        if let Some(mut pipe) = process.child.stdout.take() {
            let _ = pipe.read_to_string(&mut output);
        }
        if let Some(mut pipe) = process.child.stderr.take() {
            let _ = pipe.read_to_string(&mut output);
        }
        assert!(
            status.success(),
            "askpane install claude --project {} failed ({status}):\n{output}",
            project.display()
        );
        let settings =
            fs::read_to_string(project.join(".claude/settings.json")).unwrap_or_else(|error| {
                panic!("askpane install wrote no settings ({error}):\n{output}")
            });
        let installed: Value = serde_json::from_str(&settings).unwrap_or_else(|error| {
            panic!("askpane install wrote bad JSON ({error}):\n{settings}")
        });
        // The small hook client beside the binary (issue 30): the real Claude Code runs it.
        let expected = hook_settings(env!("CARGO_BIN_EXE_askpane-hook"));
        assert_eq!(installed, expected, "askpane install claude wrote other settings");
    }

    /// A shell script as the hook: it keeps its stdin and environment in the hook directory and
    /// prints `reply`.
    fn install_stand_in_hook(&self, reply: &Value) {
        let dir = self.scratch.hook_dir();
        fs::write(dir.join("reply.json"), reply.to_string()).expect("write the stand-in's reply");
        let script = dir.join("stand-in-hook");
        let quoted = |name: &str| format!("'{}'", dir.join(name).display());
        fs::write(
            &script,
            format!(
                "#!/bin/sh\n# Stand-in PreToolUse hook: keeps its input and environment, prints a \
                 fixed reply.\ncat > {}\nenv > {}\ncat {}\n",
                quoted("input.json"),
                quoted("env.txt"),
                quoted("reply.json")
            ),
        )
        .expect("write the stand-in hook");
        let mut permissions = fs::metadata(&script).expect("stat the stand-in").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        fs::set_permissions(&script, permissions).expect("make the stand-in executable");
        write_hook_settings(&self.scratch.project(), &script.display().to_string());
    }

    /// Starts the CLI as the Agent SDK does, sends the user turn, acts as the host until the
    /// `result` line, then closes stdin and waits for the exit. Bounded by SCENARIO_LIMIT.
    fn run(self) -> Run {
        let started = Instant::now();
        let mut command = Command::new(self.cli.binary());
        command
            .args(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"])
            .args(["--permission-prompt-tool", "stdio"]);
        self.scratch
            .isolate(&mut command, &self.api.base_url())
            // The hook answers in a window of its own unless a test says otherwise.
            .env("ASKPANE_NO_INBOX", "1")
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let marker = format!("{RUN_MARKER}={}", self.scratch.root.display());
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {:?}: {error}", command.get_program()));
        let mut process = CliProcess::new(child, Some(marker));
        let lines = read_lines(process.child.stdout.take().expect("piped stdout"));
        let stderr = read_text(process.child.stderr.take().expect("piped stderr"));
        let mut stdin = process.child.stdin.take();

        let mut stdout = Vec::new();
        let mut can_use_tool = Vec::new();
        let mut result = None;
        let mut ended = Ended::Eof;
        send(&mut stdin, USER_TURN);
        loop {
            let remaining = SCENARIO_LIMIT.saturating_sub(started.elapsed());
            let line = match lines.recv_timeout(remaining) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    ended = Ended::TimedOut;
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            stdout.push(line.clone());
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            match message["type"].as_str() {
                Some("control_request") => {
                    let reply = self.host_reply(&message, &mut can_use_tool);
                    send(&mut stdin, &reply.to_string());
                }
                Some("result") => {
                    result = Some(message);
                    ended = Ended::Result;
                    break;
                }
                _ => {}
            }
        }
        drop(stdin.take()); // the session ends when its input does
        let status = process.wait(match ended {
            Ended::TimedOut => Duration::from_secs(2),
            Ended::Result | Ended::Eof => EXIT_LIMIT,
        });
        let elapsed = started.elapsed();
        drop(process); // kills the CLI if still running, and any hook it left behind
        // Lines written after the `result` (none expected), for the report.
        stdout.extend(lines.try_iter().take(1000));
        let run = Run {
            cli: self.cli,
            tool_results: self.api.tool_results(),
            can_use_tool,
            status,
            result,
            ended,
            elapsed,
            stdout,
            stderr: stderr.lock().map(|text| text.clone()).unwrap_or_default(),
            hook_runs: hook_runs(&self.scratch.home()),
            request_summary: self.api.request_summary(),
            api_requests: self.api.requests(),
            scratch: self.scratch,
        };
        if std::env::var_os("ASKPANE_INTEROP_SHOW").is_some() {
            eprintln!("{}", run.report());
        }
        run
    }

    /// The host's reply to a `control_request`; a `can_use_tool` is recorded.
    fn host_reply(&self, message: &Value, can_use_tool: &mut Vec<Value>) -> Value {
        let request_id = message["request_id"].clone();
        let request = &message["request"];
        if request["subtype"] != "can_use_tool" {
            return json!({"type": "control_response", "response": {"subtype": "error",
                "request_id": request_id, "error": "the test host does not handle this request"}});
        }
        can_use_tool.push(message.clone());
        let decision = match &self.host {
            HostReply::Answer(answers) => {
                let mut input = request["input"].clone();
                if let Some(object) = input.as_object_mut() {
                    object.insert("answers".to_owned(), answers.clone());
                }
                json!({"behavior": "allow", "updatedInput": input,
                    "toolUseID": request["tool_use_id"]})
            }
            HostReply::Unexpected => json!({"behavior": "deny", "message": UNEXPECTED_HOST_MESSAGE,
                "toolUseID": request["tool_use_id"]}),
        };
        json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": request_id, "response": decision}})
    }
}

/// Claude Code settings with `command` as the PreToolUse hook for AskUserQuestion, as
/// `askpane install claude` writes them (with the spinner's `statusMessage`, which both CLI
/// versions take: every scenario here runs with it).
fn hook_settings(command: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "AskUserQuestion",
        "hooks": [{"type": "command", "command": command, "timeout": 86400,
            "statusMessage": askpane::protocol::HOOK_STATUS_MESSAGE}]}]}})
}

/// Writes the project's `.claude/settings.json` with `command` as the PreToolUse hook for
/// AskUserQuestion (the stand-in hooks; askpane's own is put there by `askpane install`).
fn write_hook_settings(project: &Path, command: &str) {
    let dir = project.join(".claude");
    fs::create_dir_all(&dir).expect("create .claude in the scratch project");
    fs::write(dir.join("settings.json"), hook_settings(command).to_string())
        .expect("write settings.json");
}

/// Writes one line to the CLI's stdin (ignored once it is closed: the run's report shows why).
fn send(stdin: &mut Option<ChildStdin>, line: &str) {
    if let Some(pipe) = stdin {
        let _ = pipe.write_all(line.as_bytes()).and_then(|()| pipe.write_all(b"\n"));
        let _ = pipe.flush();
    }
}

/// The CLI's stdout, line by line, from a thread (the channel closes at the end of the stream).
fn read_lines(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// The CLI's stderr, collected as it comes, so that a run that times out still shows it.
fn read_text(mut pipe: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&text);
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(count) = pipe.read(&mut chunk) {
            if count == 0 {
                break;
            }
            let mut text = sink.lock().unwrap_or_else(PoisonError::into_inner);
            text.push_str(&String::from_utf8_lossy(&chunk[..count]));
        }
    });
    text
}

/// A process the tests started; when dropped it is killed by its PID if still running, and so is
/// every process left that carries its run marker in its environment: Claude Code starts each
/// hook through `/bin/sh -c` in a session of its own, so a hook outlives a killed CLI, but it
/// inherits the CLI's environment and with it the marker.
pub(crate) struct CliProcess {
    pub(crate) child: Child,
    /// `ASKPANE_INTEROP_RUN=<unique value>`, set in the process's environment.
    marker: Option<String>,
}

/// The variable that marks the processes of one run.
pub(crate) const RUN_MARKER: &str = "ASKPANE_INTEROP_RUN";

impl CliProcess {
    pub(crate) fn new(child: Child, marker: Option<String>) -> Self {
        CliProcess { child, marker }
    }

    pub(crate) fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                _ => return None,
            }
        }
    }
}

impl Drop for CliProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill(); // by its PID: not reaped yet, so still ours
            let _ = self.child.wait();
        }
        let Some(marker) = &self.marker else { return };
        let left: Vec<String> = processes_marked(marker).iter().map(u32::to_string).collect();
        if !left.is_empty() {
            eprintln!("interop: killing processes the run left behind: {}", left.join(" "));
            let _ = Command::new("kill")
                .arg("-KILL")
                .args(&left)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The PIDs of the processes whose environment holds `marker` (a `NAME=value` entry).
fn processes_marked(marker: &str) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    let own = std::process::id();
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ.split(|&byte| byte == 0).any(|entry| entry == marker.as_bytes())
            })
        })
        .collect()
}

/// How the host loop ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// The CLI wrote its `result` line.
    Result,
    /// The CLI's stdout closed before a `result`.
    Eof,
    /// SCENARIO_LIMIT passed.
    TimedOut,
}

/// What one run of the CLI showed.
struct Run {
    cli: Cli,
    /// Every tool_result the fake API received, in order.
    tool_results: Vec<Value>,
    /// Every `can_use_tool` the host received.
    can_use_tool: Vec<Value>,
    /// The exit status (None: still running after EXIT_LIMIT, then killed).
    status: Option<ExitStatus>,
    result: Option<Value>,
    ended: Ended,
    elapsed: Duration,
    stdout: Vec<String>,
    stderr: String,
    /// The PreToolUse hook runs the CLI recorded in its session transcript (attachments such as
    /// `{"type":"hook_success","command","exitCode","stdout","stderr",…}`).
    hook_runs: Vec<Value>,
    /// Every request the fake API received (`{"method", "path", "body"}`), and a summary.
    api_requests: Vec<Value>,
    request_summary: String,
    scratch: Scratch,
}

impl Run {
    /// Asserts the session finished cleanly and the model read exactly one tool_result, for the
    /// question, with `expected` as its text.
    fn assert_tool_result(&self, expected: &str, is_error: bool) {
        let context = self.report();
        assert_eq!(self.ended, Ended::Result, "the CLI wrote no `result` line\n{context}");
        assert!(
            self.status.is_some_and(|status| status.success()),
            "the CLI did not exit 0 after its stdin closed\n{context}"
        );
        let [result] = self.tool_results.as_slice() else {
            panic!("expected exactly one tool_result\n{context}");
        };
        assert_eq!(result["tool_use_id"], TOOL_USE_ID, "{context}");
        assert_eq!(
            tool_result_text(result),
            expected,
            "the tool_result text differs (left: what the model read)\n{context}"
        );
        assert_eq!(result["is_error"] == true, is_error, "is_error is wrong\n{context}");
    }

    /// Asserts whether the host got a `can_use_tool` for the question.
    fn assert_host_asked(&self, expected: bool) {
        let context = self.report();
        assert_eq!(
            !self.can_use_tool.is_empty(),
            expected,
            "the host {} a can_use_tool\n{context}",
            if expected { "never got" } else { "got" }
        );
        for request in &self.can_use_tool {
            assert_eq!(request["request"]["tool_name"], "AskUserQuestion", "{context}");
            assert_eq!(request["request"]["tool_use_id"], TOOL_USE_ID, "{context}");
        }
    }

    /// Asserts that `askpane hook` ran once for the question and exited 0: a crashed hook would
    /// also let Claude Code ask the host, so scenario f needs this to mean anything. (Both
    /// versions record a hook run that allowed, not one that denied: there the tool_result text
    /// is the proof.)
    fn assert_askpane_hook_ran(&self) {
        let context = self.report();
        let [run] = self.hook_runs.as_slice() else {
            panic!("expected one PreToolUse hook run in the transcript\n{context}");
        };
        // Both versions record a hook that has a `statusMessage` under that message, where they
        // would name its command: the message askpane installs is what Claude Code shows.
        let shown = askpane::protocol::HOOK_STATUS_MESSAGE;
        assert_eq!(run["command"], shown, "{context}");
        assert_eq!(run["toolUseID"], TOOL_USE_ID, "{context}");
        assert_eq!(run["exitCode"], 0, "askpane hook did not exit 0\n{context}");
    }

    /// What the stand-in hook read on stdin.
    fn hook_input(&self) -> Value {
        let path = self.scratch.hook_dir().join("input.json");
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("the hook left no input ({error})\n{}", self.report()));
        serde_json::from_str(&text)
            .unwrap_or_else(|error| panic!("the hook's input is not JSON ({error}): {text}"))
    }

    /// The stand-in hook's environment (`env` output).
    fn hook_environment(&self) -> String {
        fs::read_to_string(self.scratch.hook_dir().join("env.txt")).unwrap_or_else(|error| {
            panic!("the hook left no environment ({error})\n{}", self.report())
        })
    }

    /// Everything a failure message needs: the tool_results, the host's requests, the API
    /// requests, the end of stdout and of the CLI's stderr.
    fn report(&self) -> String {
        let tool_results: Vec<String> =
            self.tool_results.iter().map(|result| format!("  {result}")).collect();
        let hook_runs: Vec<String> = self
            .hook_runs
            .iter()
            .map(|run| {
                format!(
                    "  {} exit {} command {}\n    stdout: {}\n    stderr: {}",
                    run["type"].as_str().unwrap_or("?"),
                    run["exitCode"],
                    run["command"],
                    crate::support::clip(run["stdout"].as_str().unwrap_or(""), 600).trim_end(),
                    crate::support::clip(run["stderr"].as_str().unwrap_or(""), 600).trim_end(),
                )
            })
            .collect();
        let stdout_tail: Vec<String> = self.stdout[self.stdout.len().saturating_sub(8)..]
            .iter()
            .map(|line| format!("  {}", crate::support::clip(line, 600)))
            .collect();
        let stderr_tail: Vec<&str> = {
            let lines: Vec<&str> = self.stderr.lines().collect();
            lines[lines.len().saturating_sub(30)..].to_vec()
        };
        format!(
            "--- Claude Code {} run ({:?} after {:.1} s, exit {:?}, scratch {}) ---\n\
             tool_results the fake API received ({}):\n{}\n\
             can_use_tool requests to the host: {}\n\
             PreToolUse hook runs (from the session transcript):\n{}\n\
             result: {}\n\
             API requests:\n{}\
             stdout, last lines:\n{}\n\
             stderr, last lines:\n{}\n---",
            self.cli.version(),
            self.ended,
            self.elapsed.as_secs_f64(),
            self.status,
            self.scratch.root.display(),
            self.tool_results.len(),
            if tool_results.is_empty() { "  (none)".to_owned() } else { tool_results.join("\n") },
            self.can_use_tool.len(),
            if hook_runs.is_empty() { "  (none)".to_owned() } else { hook_runs.join("\n") },
            self.result.as_ref().map_or_else(
                || "(none)".to_owned(),
                |result| crate::support::clip(&result.to_string(), 400)
            ),
            self.request_summary,
            stdout_tail.join("\n"),
            if stderr_tail.is_empty() { "  (empty)".to_owned() } else { stderr_tail.join("\n") },
        )
    }
}

/// The PreToolUse hook runs recorded in the session transcripts under `home`
/// (`.claude/projects/<project>/<session>.jsonl`, lines `{"type":"attachment","attachment":{…}}`).
fn hook_runs(home: &Path) -> Vec<Value> {
    let mut runs = Vec::new();
    let Ok(projects) = fs::read_dir(home.join(".claude/projects")) else { return runs };
    for project in projects.flatten() {
        let Ok(sessions) = fs::read_dir(project.path()) else { continue };
        for session in sessions.flatten() {
            if session.path().extension().is_none_or(|extension| extension != "jsonl") {
                continue;
            }
            let text = fs::read_to_string(session.path()).unwrap_or_default();
            for line in text.lines() {
                let Ok(line) = serde_json::from_str::<Value>(line) else { continue };
                if line["type"] == "attachment" && line["attachment"]["hookEvent"] == "PreToolUse" {
                    runs.push(line["attachment"].clone());
                }
            }
        }
    }
    runs
}

/// The text of a tool_result block: its `content` string, or its text blocks joined.
pub(crate) fn tool_result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("")
        }
        other => other.to_string(),
    }
}

/// A scratch directory outside the repository (so the CLI finds no enclosing git repository,
/// CLAUDE.md or settings), removed when dropped unless the test is failing.
pub(crate) struct Scratch {
    pub(crate) root: PathBuf,
}

impl Scratch {
    pub(crate) fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let serial = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir()
            .join(format!("askpane-interop-{}-{serial}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).expect("create the scratch directory");
        Scratch { root }
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    pub(crate) fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    fn hook_dir(&self) -> PathBuf {
        self.root.join("hook")
    }

    /// `command` in this scratch project with nothing of the caller's environment but `PATH`:
    /// its own HOME, TMPDIR and runtime directory (so the askpane it runs finds no inbox but
    /// one the test started), Claude Code pointed at the fake Messages API `api_url`, no
    /// telemetry or updates, and the run marker that lets a failing test find what it started.
    pub(crate) fn isolate<'a>(&self, command: &'a mut Command, api_url: &str) -> &'a mut Command {
        command
            .current_dir(self.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
            .env("LANG", "C.UTF-8")
            .env("HOME", self.home())
            .env("TMPDIR", self.tmp())
            .env("XDG_RUNTIME_DIR", support::private_runtime_dir())
            .env("ANTHROPIC_BASE_URL", api_url)
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env(RUN_MARKER, &self.root)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("interop: kept {} for a look", self.root.display());
        } else {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}
