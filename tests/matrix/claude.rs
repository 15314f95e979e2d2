//! Issue 31 with the real Claude Code 2.1.332 (`scripts/claude-cli`) against the fake Messages
//! API (tests/fake_api.rs): its hooks reach the test's inbox, the bridge posts each ask to a real
//! Synapse's encrypted room, and alice (askpane-matrix-peer) answers there. The model must read
//! exactly what it reads when the same answer is given in the window (questions: a preset
//! confirmed by `--submit`, as tests/interop.rs; tool calls: the page's buttons, as
//! tests/interop_approvals.rs; plans: the review the window's plan page sends, book::plan).
//! Each scenario is one Claude run answered from the room, beside one answered the other way:
//! the two runs' tool_results are compared whole.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::peer::{Bridged, bridged_or_skip};
use crate::fake_api::{FakeApi, ToolCall};
use crate::interop::{CliProcess, EXIT_LIMIT, RUN_MARKER, SCENARIO_LIMIT, Scratch};
use crate::interop_approvals::{Page, card};
use crate::support::Process;

const VERSION: &str = "2.1.332";

/// The prompt of a stream-json session (AskUserQuestion is offered only with a host).
const USER_TURN: &str = r#"{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":"Please ask me."}]},"parent_tool_use_id":null}"#;

/// What the test host says if Claude Code asks it: the hook was to answer, so a wrong turn ends
/// quickly and shows in the tool_result.
const HOST_WAS_ASKED: &str = "(the test host was asked; the hook was to answer)";

/// How Claude Code's hooks are answered in a run.
enum Answered<'a> {
    /// By the inbox of `Bridged` (its hooks reach its socket), so by the room.
    Room(&'a Bridged),
    /// By each hook's own window, confirming the preset of the tool_use id
    /// (`<scratch>/presets/<id>.env`, sourced by a wrapper hook).
    Window,
    /// By the page of the inbox served on this runtime directory.
    Page(&'a Path),
}

/// One Claude Code run in a scratch project.
struct ClaudeRun {
    scratch: Scratch,
    api: FakeApi,
    process: Option<CliProcess>,
    stdout: Option<JoinHandle<(Vec<String>, usize)>>,
    stderr: Option<JoinHandle<String>>,
}

impl ClaudeRun {
    /// Starts Claude Code on `script` as `how`, its hooks installed for `answered`.
    fn start(
        name: &str,
        script: impl FnOnce(&Path) -> Vec<ToolCall>,
        answered: &Answered,
        how: How,
    ) -> ClaudeRun {
        let binary = crate::support::agents::claude_cli(VERSION);
        let scratch = Scratch::new(&format!("matrix-claude-{name}"));
        let project = scratch.project();
        for dir in [scratch.home(), project.clone(), scratch.tmp()] {
            fs::create_dir_all(&dir).expect("a scratch directory");
        }
        let package = json!({"name": "shop", "version": "1.0.0",
            "scripts": {"test": "echo tested-by-npm"}});
        fs::write(project.join("package.json"), package.to_string()).expect("package.json");
        fs::write(project.join("greeting.txt"), "hello\n").expect("greeting.txt");
        let api = FakeApi::scripted(script(&project));
        install_hooks(&scratch, answered);

        let mut command = Command::new(binary);
        command.args(["--output-format", "stream-json", "--verbose"]);
        match how {
            How::Print => command.args(["-p", "Please do the task."]),
            How::Host(_) => command.args(["--input-format", "stream-json"]),
        };
        if let How::Host(host) = how {
            command.args(["--permission-prompt-tool", "stdio"]);
            if matches!(host, Host::SilentInPlanMode) {
                command.args(["--permission-mode", "plan"]);
            }
        }
        let host = match how {
            How::Print => None,
            How::Host(host) => Some(host),
        };
        scratch.isolate(&mut command, &api.base_url());
        command.env("NO_UPDATE_NOTIFIER", "1").env("npm_config_update_notifier", "false");
        match answered {
            Answered::Room(bridged) => {
                let root = &bridged.world.root;
                command.env("XDG_RUNTIME_DIR", root.join("run"));
                command.env("XDG_STATE_HOME", root.join("state"));
            }
            Answered::Page(run) => {
                command.env("XDG_RUNTIME_DIR", run);
                command.env("ASKPANE_STATE_DIR", scratch.root.join("state"));
            }
            Answered::Window => {}
        }
        command
            .stdin(if host.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start Claude Code");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let stdout = thread::spawn(move || host_loop(stdout, stdin, host));
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let marker = format!("{RUN_MARKER}={}", scratch.root.display());
        ClaudeRun {
            scratch,
            api,
            process: Some(CliProcess::new(child, Some(marker))),
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    /// Waits (bounded) for the run to end; every tool_result the model read, by tool_use id, as
    /// (text, is_error). Fails if the CLI asked its host or did not end.
    fn finish(&mut self) -> Vec<(String, String, bool)> {
        let mut process = self.process.take().expect("finished once");
        let status = process.wait(SCENARIO_LIMIT + EXIT_LIMIT);
        drop(process);
        let (stdout, asked) =
            self.stdout.take().and_then(|thread| thread.join().ok()).unwrap_or_default();
        let stderr = self.stderr.take().and_then(|thread| thread.join().ok()).unwrap_or_default();
        let report = format!(
            "Claude Code {VERSION} ended {status:?}\nAPI requests:\n{}stdout (last lines):\n{}\nstderr:\n{stderr}",
            self.api.request_summary(),
            stdout[stdout.len().saturating_sub(8)..].join("\n")
        );
        assert!(status.is_some_and(|status| status.success()), "{report}");
        assert_eq!(asked, 0, "Claude Code asked its host: the hook did not answer\n{report}");
        self.api
            .tool_results()
            .iter()
            .map(|result| {
                (
                    result["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                    crate::interop::tool_result_text(result),
                    result["is_error"] == true,
                )
            })
            .collect()
    }
}

/// How Claude Code runs.
#[derive(Clone, Copy)]
enum How {
    /// `-p`: no host; what the hooks do not decide is denied (AskUserQuestion is not offered).
    Print,
    /// With a stream-json host (`--permission-prompt-tool stdio`), this test.
    Host(Host),
}

/// What the test host does when Claude Code asks it (`can_use_tool`).
#[derive(Clone, Copy, PartialEq)]
enum Host {
    /// Denies at once (the hook was to answer before it is asked: it never should be).
    Denies,
    /// In plan mode (which needs a host, the 2.1.332 captures `plan-p-nohost`), the host is
    /// asked beside the hook and stays silent, as the captures' `$wait`: the hook decides and
    /// Claude Code cancels the host's request.
    SilentInPlanMode,
}

/// Reads the CLI's stream-json; as its host (when it has stdin) sends the prompt, answers
/// `can_use_tool` as `host` says and closes stdin at the `result`. The lines and how many times
/// a denying host was asked.
fn host_loop(
    stdout: impl Read,
    mut stdin: Option<ChildStdin>,
    host: Option<Host>,
) -> (Vec<String>, usize) {
    let send = |stdin: &mut Option<ChildStdin>, line: &str| {
        if let Some(pipe) = stdin {
            let _ = writeln!(pipe, "{line}").and_then(|()| pipe.flush());
        }
    };
    send(&mut stdin, USER_TURN);
    let (mut lines, mut asked) = (Vec::new(), 0);
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let message: Value = serde_json::from_str(&line).unwrap_or_default();
        lines.push(line);
        match message["type"].as_str() {
            Some("control_request") if host == Some(Host::SilentInPlanMode) => {}
            Some("control_request") => {
                asked += usize::from(message["request"]["subtype"] == "can_use_tool");
                let decision = json!({"behavior": "deny", "message": HOST_WAS_ASKED,
                    "toolUseID": message["request"]["tool_use_id"]});
                let reply = json!({"type": "control_response", "response": {"subtype": "success",
                    "request_id": message["request_id"], "response": decision}});
                send(&mut stdin, &reply.to_string());
            }
            Some("result") => drop(stdin.take()),
            _ => {}
        }
    }
    (lines, asked)
}

/// The project's Claude Code settings: askpane's question and approval hooks, as `askpane
/// install claude --approvals` writes them; for [`Answered::Window`] the question hook is a
/// wrapper that gives each call the preset of its tool_use id and no inbox.
fn install_hooks(scratch: &Scratch, answered: &Answered) {
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let mut install = Command::new(askpane);
    install.args(["install", "claude", "--approvals", "--project"]).arg(scratch.project());
    install
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch.home())
        .env("XDG_RUNTIME_DIR", crate::support::private_runtime_dir());
    let installed = crate::support::run_bounded(&mut install, None);
    assert!(installed.status.success(), "askpane install: {}", installed.stderr);
    if !matches!(answered, Answered::Window) {
        return;
    }
    let presets = scratch.root.join("presets");
    fs::create_dir_all(&presets).expect("the presets' directory");
    let wrapper = scratch.root.join("window-hook");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n# askpane hook in a window of its own, confirming this call's preset.\n\
             input=$(cat)\n\
             id=$(printf '%s' \"$input\" | tr -d '\\n' | sed -n 's/.*\"tool_use_id\" *: *\"\\([^\"]*\\)\".*/\\1/p')\n\
             . '{}/'\"$id.env\" || exit 98\n\
             printf '%s' \"$input\" | ASKPANE_NO_INBOX=1 exec '{askpane}' hook\n",
            presets.display()
        ),
    )
    .expect("the wrapper hook");
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).expect("executable");
    let settings_path = scratch.project().join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&fs::read_to_string(&settings_path).expect("settings")).unwrap();
    let entries = settings["hooks"]["PreToolUse"].as_array_mut().expect("PreToolUse hooks");
    for entry in entries {
        for hook in entry["hooks"].as_array_mut().expect("hooks") {
            hook["command"] = json!(wrapper.display().to_string());
        }
    }
    fs::write(&settings_path, settings.to_string()).expect("write settings");
}

/// Writes the window's preset for the call `tool_use_id`: an answers file confirmed by
/// `--submit`, or a decline message.
fn preset(run: &ClaudeRun, tool_use_id: &str, preset: Preset) {
    let dir = run.scratch.root.join("presets");
    let quoted = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    let env = match preset {
        Preset::Answers(answers) => {
            let file = dir.join(format!("{tool_use_id}.json"));
            fs::write(&file, answers.to_string()).expect("an answers file");
            format!(
                "export ASKPANE_ANSWERS={} ASKPANE_SUBMIT=1\n",
                quoted(&file.display().to_string())
            )
        }
        Preset::Decline(message) => format!("export ASKPANE_DECLINE={}\n", quoted(message)),
    };
    fs::write(dir.join(format!("{tool_use_id}.env")), env).expect("a preset");
}

enum Preset<'a> {
    Answers(Value),
    Decline(&'a str),
}

fn ask(id: &str, questions: Value) -> ToolCall {
    ToolCall::new("AskUserQuestion", json!({"questions": questions}), id)
}

fn question(text: &str, header: &str, multi: bool, options: &[(&str, Option<&str>)]) -> Value {
    let options: Vec<Value> = options
        .iter()
        .map(|(label, preview)| match preview {
            Some(preview) => json!({"label": label, "description": "", "preview": preview}),
            None => json!({"label": label, "description": ""}),
        })
        .collect();
    json!([{"question": text, "header": header, "multiSelect": multi, "options": options}])
}

/// Two questions in one ask: `(question, header, multi-select, labels)` each.
fn pair(questions: [(&str, &str, bool, [&str; 3]); 2]) -> Value {
    let questions: Vec<Value> = questions
        .iter()
        .map(|(text, header, multi, labels)| {
            let options: Vec<Value> =
                labels.iter().map(|label| json!({"label": label, "description": ""})).collect();
            json!({"question": text, "header": header, "multiSelect": multi, "options": options})
        })
        .collect();
    json!(questions)
}

/// The asks of the question scenario, one per turn.
fn the_asks(_: &Path) -> Vec<ToolCall> {
    vec![
        ask(
            "toolu_layout",
            question(
                "Which layout?",
                "Layout",
                false,
                &[("Tabs", Some("[a|b|c]")), ("Split", None)],
            ),
        ),
        ask(
            "toolu_checks",
            question(
                "Which checks?",
                "Checks",
                true,
                &[("fmt", None), ("clippy", None), ("tests", None)],
            ),
        ),
        ask(
            "toolu_database",
            question("Which database?", "Database", false, &[("SQLite", None), ("Postgres", None)]),
        ),
        ask(
            "toolu_name",
            question("Which name?", "Name", false, &[("shop", None), ("store", None)]),
        ),
        ask(
            "toolu_polls",
            pair([
                ("Which colour?", "Colour", false, ["Red", "Blue", "Green"]),
                ("Which sizes?", "Sizes", true, ["S", "M", "L"]),
            ]),
        ),
        ask(
            "toolu_lines",
            pair([
                ("Which tone?", "Tone", false, ["Light", "Dark", "Auto"]),
                ("Which fits?", "Fit", true, ["Slim", "Regular", "Loose"]),
            ]),
        ),
    ]
}

const OTHER: &str = "DuckDB, in memory";
const NOTE: &str = "only for the tests";
const DECLINE: &str = "not now, ask Bob";

#[test]
fn questions_answered_in_the_room_reach_claude_code_as_the_window_s_answers() {
    let mut bridged = bridged_or_skip!("matrix-claude-questions");
    let room = bridged.room.clone();

    let mut window =
        ClaudeRun::start("questions-window", the_asks, &Answered::Window, How::Host(Host::Denies));
    preset(&window, "toolu_layout", Preset::Answers(json!({"Layout": "Tabs"})));
    preset(&window, "toolu_checks", Preset::Answers(json!({"Checks": ["fmt", "tests"]})));
    let database = json!({"Database": {"other": OTHER, "notes": NOTE}});
    preset(&window, "toolu_database", Preset::Answers(database));
    preset(&window, "toolu_name", Preset::Decline(DECLINE));
    let polls = json!({"Colour": "Blue", "Sizes": ["S", "L"]});
    preset(&window, "toolu_polls", Preset::Answers(polls));
    let lines = json!({"Tone": {"choose": "Dark", "notes": "bright"},
                       "Fit": {"choose": ["Slim", "Loose"], "other": "XL"}});
    preset(&window, "toolu_lines", Preset::Answers(lines));
    let expected = window.finish();

    let mut claude = ClaudeRun::start(
        "questions-room",
        the_asks,
        &Answered::Room(&bridged),
        How::Host(Host::Denies),
    );
    let alice = &mut bridged.alice;
    for (question, votes) in [("Which layout?", json!(["1"])), ("Which checks?", json!(["1", "3"]))]
    {
        let poll = alice.call(json!({"do": "wait_poll", "room": room, "contains": question}));
        let poll = poll["event"]["event_id"].clone();
        alice.call(json!({"do": "vote", "room": room, "poll": poll, "answers": votes}));
    }
    for (question, reply) in [
        ("Which database?", format!("other: {OTHER}\nnote: {NOTE}")),
        ("Which name?", format!("decline: {DECLINE}")),
    ] {
        let message = alice.wait_message(&room, question);
        alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                          "text": reply}));
    }
    for (question, votes) in [("Which colour?", json!(["2"])), ("Which sizes?", json!(["1", "3"]))]
    {
        let poll = alice.call(json!({"do": "wait_poll", "room": room, "contains": question}));
        let poll = poll["event"]["event_id"].clone();
        alice.call(json!({"do": "vote", "room": room, "poll": poll, "answers": votes}));
    }
    let message = alice.wait_message(&room, "Which tone?");
    alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                      "text": "1: 2\n2: 1,3, other: XL\n1 note: bright"}));
    let read = claude.finish();
    assert_eq!(read.len(), 6, "{read:#?}");
    assert_eq!(read, expected, "the model read other words from the room than from the window");
    alice.wait_message(&room, "Sent to Claude Code: declined");
}

/// A scratch `askpane inbox --ui web` and its page, for the tool calls' baseline.
struct PageInbox {
    run: PathBuf,
    page: Page,
    _inbox: Process,
}

impl PageInbox {
    fn start() -> PageInbox {
        let run = crate::support::private_runtime_dir();
        let mut inbox = Command::new(env!("CARGO_BIN_EXE_askpane"));
        inbox
            .args(["inbox", "--ui", "web"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", crate::support::scratch_dir("page-home"))
            .env("XDG_RUNTIME_DIR", &run)
            .env("ASKPANE_STATE_DIR", crate::support::scratch_dir("page-state"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut inbox = Process::new(inbox.spawn().expect("start askpane inbox --ui web"));
        let stderr = inbox.child.stderr.take().expect("piped stderr");
        let page = Page::connect(&crate::support::agents::browser_link(stderr));
        PageInbox { run, page, _inbox: inbox }
    }
}

fn bash(command: &str, id: &str) -> ToolCall {
    ToolCall::new("Bash", json!({"command": command, "description": "Run it"}), id)
}

/// Bash allowed, one denied, `npm test` allowed always, then `npm test` again.
fn four_calls(project: &Path) -> Vec<ToolCall> {
    let project = project.display();
    vec![
        bash(&format!("touch {project}/allowed && echo ran-allowed"), "toolu_allow"),
        bash(&format!("touch {project}/denied"), "toolu_deny"),
        bash("npm test", "toolu_always"),
        bash("npm test", "toolu_again"),
    ]
}

const DENY_WORDS: &str = "use make clean";

#[test]
fn tool_calls_decided_in_the_room_reach_claude_code_as_the_page_s_decisions() {
    let mut bridged = bridged_or_skip!("matrix-claude-approvals");
    let room = bridged.room.clone();

    let mut served = PageInbox::start();
    let mut page =
        ClaudeRun::start("calls-page", four_calls, &Answered::Page(&served.run), How::Print);
    let wait = SCENARIO_LIMIT;
    let (id, _) = card(&served.page.next("permission_request", wait));
    served.page.decide(&id, json!({"decision": "allow"}), "allowed");
    let (id, _) = card(&served.page.next("permission_request", wait));
    // The page sends the text the model reads, built as the window builds it.
    let words = askpane::book::approval::deny_words(DENY_WORDS);
    served.page.decide(&id, json!({"decision": "deny", "message": words}), "denied");
    let (id, request) = card(&served.page.next("permission_request", wait));
    let suggestions = serde_json::to_value(&request.suggestions).expect("JSON");
    let suggestions = suggestions.as_array().cloned().unwrap_or_default();
    let local = suggestions
        .iter()
        .position(|s| s["type"] == "addRules" && s["destination"] == "localSettings")
        .unwrap_or_else(|| panic!("no addRules for localSettings: {suggestions:?}"));
    let rule = suggestions[local].clone();
    served.page.decide(&id, json!({"decision": "allow_always", "suggestion": rule}), "allowed");
    let expected = page.finish();
    let expected_rules =
        fs::read_to_string(page.scratch.project().join(".claude/settings.local.json"))
            .expect("the page's always wrote the rule");

    let mut claude =
        ClaudeRun::start("calls-room", four_calls, &Answered::Room(&bridged), How::Print);
    let always = match suggestions.len() {
        1 => "always".to_owned(),
        _ => format!("always {}", local + 1),
    };
    let alice = &mut bridged.alice;
    for (shown, reply) in [
        ("ran-allowed", "allow".to_owned()),
        ("denied", format!("deny: {DENY_WORDS}")),
        ("npm test", always),
    ] {
        let message = alice.wait_message(&room, shown);
        alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                          "text": reply}));
        alice.wait_message(&room, "Sent to Claude Code: ");
    }
    let read = claude.finish();
    assert_eq!(read.len(), 4, "{read:#?}");
    let written = fs::read_to_string(claude.scratch.project().join(".claude/settings.local.json"))
        .expect("the room's always wrote the rule");
    assert_eq!(written, expected_rules);
    assert_eq!(read, expected, "the model read other words from the room than from the page");
    // The second `npm test` ran by the rule: the room was asked three times, not four.
    let seen = alice.call(json!({"do": "seen"}))["events"].clone();
    let asks = seen
        .as_array()
        .into_iter()
        .flatten()
        .filter(|event| {
            event["type"] == "message"
                && event["body"].as_str().is_some_and(|body| body.contains("Reply `allow`"))
        })
        .count();
    assert_eq!(asks, 3, "{seen:#}");
}

/// The plan the fake model writes and shows.
const PLAN: &str = "# Greeting\n\nChange the greeting, then test.\n\n## Steps\n\n1. Change \
    greeting.txt to say hello world.\n2. Run the tests.\n";

/// What 2.1.332's model reads first when its plan is approved (tests/plan_interop.rs).
const APPROVED: &str = "User has approved your plan. You can now start coding. Start with \
    updating your todo list if applicable\n\nYour plan has been saved to: ";

const FEEDBACK: &str = "split step 2";

/// The recorder's plan script (tests/plan_interop.rs), with ExitPlanMode twice: sent back, then
/// approved.
fn plan_twice(_: &Path) -> Vec<ToolCall> {
    vec![
        ToolCall::new(
            "ToolSearch",
            json!({"query": "select:ExitPlanMode", "max_results": 5}),
            "toolu_fake_000001",
        ),
        ToolCall::new("Write", json!({"file_path": "$planfile", "content": PLAN}), "toolu_write"),
        ToolCall::new("ExitPlanMode", json!({"plan": PLAN}), "toolu_plan_back"),
        ToolCall::new("ExitPlanMode", json!({"plan": PLAN}), "toolu_plan_approved"),
    ]
}

#[test]
fn a_plan_sent_back_from_the_room_then_approved_reads_as_the_window_s_review() {
    let mut bridged = bridged_or_skip!("matrix-claude-plan");
    let room = bridged.room.clone();
    let mut claude = ClaudeRun::start(
        "plan-room",
        plan_twice,
        &Answered::Room(&bridged),
        How::Host(Host::SilentInPlanMode),
    );
    let alice = &mut bridged.alice;
    let message = alice.wait_message(&room, "Reply `approve`");
    alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                      "text": format!("keep planning: {FEEDBACK}")}));
    alice.wait_message(&room, "Sent to Claude Code: keep planning");
    let deadline = Instant::now() + SCENARIO_LIMIT;
    let second = loop {
        let seen = alice.call(json!({"do": "seen"}))["events"].clone();
        let plans: Vec<Value> = seen
            .as_array()
            .into_iter()
            .flatten()
            .filter(|event| {
                event["type"] == "message"
                    && event["body"].as_str().is_some_and(|body| body.contains("Reply `approve`"))
            })
            .cloned()
            .collect();
        if plans.len() >= 2 {
            break plans[1].clone();
        }
        assert!(Instant::now() < deadline, "no second plan: {seen:#}");
        thread::sleep(Duration::from_millis(100));
    };
    alice.call(json!({"do": "reply_in_thread", "room": room, "event": second["event_id"],
                      "text": "approve"}));
    let read = claude.finish();
    let of = |id: &str| {
        read.iter()
            .find(|(tool_use_id, _, _)| tool_use_id == id)
            .map(|(_, text, is_error)| (text.clone(), *is_error))
            .unwrap_or_else(|| panic!("no tool_result for {id}: {read:#?}"))
    };
    // The window's plan page with the note FEEDBACK and no comment (book::plan::feedback).
    let review = format!("{}\n\n{FEEDBACK}", askpane::book::plan::KEEP_PLANNING_LEAD);
    assert_eq!(of("toolu_plan_back"), (review, true));
    let (approved, is_error) = of("toolu_plan_approved");
    assert!(!is_error, "{approved}");
    assert!(approved.starts_with(APPROVED), "{approved}");
    assert!(approved.ends_with(&format!("## Approved Plan:\n{PLAN}")), "{approved}");
}

// ---------------------------------------------------------------------------------------------
// Item 2: hostile and large input in a real room (the hook as Claude Code runs it).

/// A PreToolUse hook input for AskUserQuestion with `questions`.
fn hook_input(tool_use_id: &str, questions: Value) -> String {
    json!({
        "session_id": "5e55-10n", "cwd": "/home/dev/project", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion",
        "tool_use_id": tool_use_id, "tool_input": {"questions": questions}
    })
    .to_string()
}

/// Whether `text` holds a live tag the agent wrote (escaped, `&lt;img`, it is text).
fn live_tags(text: &str) -> Vec<&'static str> {
    ["<a href", "<img", "<script", "<iframe", "<b onclick"]
        .into_iter()
        .filter(|tag| text.to_ascii_lowercase().contains(tag))
        .collect()
}

/// What an event of the room says that a client would ping or render: `@room` in its body or
/// HTML, `m.mentions` absent (clients then match the body with the legacy push rules) or
/// naming the room, live tags of the agent's, control characters.
fn hazards(event: &Value, mentions_key: &str) -> Vec<String> {
    let mut found = Vec::new();
    for key in ["body", "formatted_body", "question"] {
        let text = event[key].as_str().unwrap_or_default();
        if text.to_ascii_lowercase().contains("@room") {
            found.push(format!("{key} can ping the room"));
        }
        if let Some(control) = text.chars().find(|c| c.is_control() && *c != '\n') {
            found.push(format!("{key} holds the control character {:?}", control));
        }
    }
    let html = event["formatted_body"].as_str().unwrap_or_default();
    if !live_tags(html).is_empty() {
        found.push(format!("formatted_body holds the agent's live tags {:?}", live_tags(html)));
    }
    let mentions = &event[mentions_key];
    if !mentions.is_object() {
        found.push(format!("{mentions_key} is {mentions}: clients fall back to the body's words"));
    }
    if mentions["room"] == true {
        found.push(format!("{mentions_key} mentions the room"));
    }
    found
}

const HOSTILE: &str = "@room <a href=\"https://evil.example/\">click</a> <img src=x onerror=alert(1)> \u{7}\u{1b}[31m";

#[test]
fn a_hostile_ask_reaches_the_room_as_text_that_pings_no_one_and_renders_no_tag_of_the_agent_s() {
    let mut bridged = bridged_or_skip!("matrix-hostile");
    let room = bridged.room.clone();
    let preview: String = (1..=100)
        .map(|line| match line % 4 {
            0 => format!("# heading {line} @room <b onclick=x>bold</b>\n"),
            1 => format!("```\nfenced {line} <script>alert({line})</script>\n"),
            2 => format!("- item {line} [link](https://evil.example/{line}) @room\n"),
            _ => format!("line {line} \u{1b}[0m <iframe src=x>\n"),
        })
        .collect();
    let questions = json!([{
        "question": format!("Which one? {HOSTILE}"),
        "header": "@room <img src=x>",
        "multiSelect": false,
        "options": [
            {"label": format!("Keep {HOSTILE}"), "description": HOSTILE, "preview": preview},
            {"label": "@room", "description": "<a href=\"https://evil.example/\">x</a>"},
        ],
    }]);
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_hostile", questions));
    let alice = &mut bridged.alice;
    let message = alice.wait_message(&room, "Which one?");
    let body = message["body"].as_str().unwrap_or_default();
    assert!(body.contains("@\u{2060}room"), "the grammar breaks the agent's @: {body}");
    assert!(body.contains("line 99"), "the 100-line preview is shown: {body}");
    assert_eq!(hazards(&message, "mentions"), Vec::<String>::new(), "{message:#}");
    let poll = alice.call(json!({"do": "wait_poll", "room": room, "contains": "Which one?"}));
    let poll = poll["event"].clone();
    let answers = poll["answers"].as_array().into_iter().flatten();
    for text in answers.map(|answer| &answer["text"]).chain([&poll["question"]]) {
        let text = text.as_str().unwrap_or_default();
        assert!(!text.to_ascii_lowercase().contains("@room"), "the poll can ping: {text:?}");
        assert!(!text.chars().any(char::is_control), "a control character: {text:?}");
    }
    alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                      "text": "2"}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"@room\""), "the agent reads its own label back: {stdout}");
    let edit = alice.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"],
                                 "contains": "Answered by"}))["event"]
        .clone();
    assert_eq!(hazards(&edit, "new_mentions"), Vec::<String>::new(), "{edit:#}");
    let sent = alice.wait_message(&room, "Sent to Claude Code");
    assert_eq!(hazards(&sent, "mentions"), Vec::<String>::new(), "{sent:#}");

    // A tool call and a plan of the agent's, as hostile, through the approval hook.
    let capture = |case: &str| -> Value {
        serde_json::from_str(&crate::support::agents::permission_capture(case, "stdin"))
            .expect("a capture")
    };
    let mut bash = capture("pr-bash-allow");
    bash["tool_input"] = json!({"command": format!("echo {HOSTILE}"), "description": HOSTILE});
    let mut plan = capture("plan-hook-allow");
    plan["tool_input"]["plan"] = json!(format!("# Plan {HOSTILE}\n\n{preview}"));
    for (input, shown, reply) in
        [(bash, "echo @", "deny: not this"), (plan, "# Plan @", "keep planning: not this")]
    {
        let hook = bridged.world.client(&["hook"], &input.to_string());
        let alice = &mut bridged.alice;
        let message = alice.wait_message(&room, shown);
        assert_eq!(hazards(&message, "mentions"), Vec::<String>::new(), "{message:#}");
        alice.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                          "text": reply}));
        let (code, stdout, stderr) = hook.finish();
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stdout.contains("not this"), "{stdout}");
        let edit = alice.call(json!({"do": "wait_edit", "room": room,
            "event": message["event_id"], "contains": "Answered by"}))["event"]
            .clone();
        assert_eq!(hazards(&edit, "new_mentions"), Vec::<String>::new(), "{edit:#}");
    }
}

fn sizes() -> Value {
    json!([{"question": "Which size?", "header": "Size", "multiSelect": false,
            "options": [{"label": "S", "description": ""}, {"label": "M", "description": ""}]}])
}

/// The limit of an answer (32,768 characters) holds in a room: the longest Other reaches the hook
/// whole, one character more is refused with the limit. A Matrix event is at most 64 KiB, so a
/// reply of 32,768 CJK characters (98,304 bytes) cannot be sent at all: the homeserver refuses
/// it (M_TOO_LARGE) before the bridge sees it, and nothing is answered; the CJK an encrypted
/// event carries (12,000 characters here) reaches the hook whole.
#[test]
fn the_longest_other_from_the_room_reaches_the_hook_whole_and_one_character_more_is_refused() {
    let mut bridged = bridged_or_skip!("matrix-large");
    let room = bridged.room.clone();
    let limit = askpane::protocol::limits::MAX_ANSWER_LENGTH;
    let hook = bridged.world.client(&["hook"], &hook_input("toolu_large", sizes()));
    let alice = &mut bridged.alice;
    let message = alice.wait_message(&room, "Which size?");
    let reply = |alice: &mut super::peer::Peer, text: String| {
        alice.try_call(json!({"do": "reply_in_thread", "room": room,
                              "event": message["event_id"], "text": text}))
    };
    let cjk = "界".repeat(limit);
    assert_eq!(cjk.len(), 98_304);
    let sent = reply(alice, format!("other: {cjk}"));
    assert_eq!(sent["ok"], false, "a 98 KB event was taken");
    assert!(sent["error"].as_str().is_some_and(|e| e.contains("M_TOO_LARGE")), "{sent}");
    let sent = reply(alice, format!("other: {}", "x".repeat(limit + 1)));
    assert_eq!(sent["ok"], true, "{sent}");
    let refusal = alice.wait_message(&room, "Not sent: ");
    let said = refusal["body"].as_str().unwrap_or_default().to_owned();
    assert!(said.contains("32768") || said.contains("32,768"), "{said}");
    let whole = "x".repeat(limit);
    assert_eq!(reply(alice, format!("other: {whole}"))["ok"], true);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("\"{whole}\"")), "{}", &stdout[..300.min(stdout.len())]);

    let hook = bridged.world.client(&["hook"], &hook_input("toolu_cjk", sizes()));
    let alice = &mut bridged.alice;
    let seen = alice.call(json!({"do": "seen"}))["events"].as_array().map_or(0, Vec::len);
    let deadline = Instant::now() + SCENARIO_LIMIT;
    let second = loop {
        let events = alice.call(json!({"do": "seen"}))["events"].clone();
        let found = events.as_array().into_iter().flatten().skip(seen).find(|event| {
            event["type"] == "message"
                && event["body"].as_str().is_some_and(|body| body.contains("Which size?"))
        });
        if let Some(found) = found {
            break found.clone();
        }
        assert!(Instant::now() < deadline, "the second ask was not posted: {events:#}");
        thread::sleep(Duration::from_millis(100));
    };
    let cjk = "界".repeat(12_000);
    alice.call(json!({"do": "reply_in_thread", "room": room, "event": second["event_id"],
                      "text": format!("other: {cjk}")}));
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!("\"{cjk}\"")),
        "{}",
        stdout.chars().take(300).collect::<String>()
    );
}

/// The only person allowed to answer leaves the room mid-ask: nothing is answered, the ask stays
/// open in the inbox, the bridge says so (its log, and the room); the window then answers it and
/// the room's message is edited (seen by bob, a member who may not answer).
#[test]
fn the_only_answerer_leaving_mid_ask_answers_nothing_and_the_window_still_can() {
    let mut bridged = bridged_or_skip!("matrix-leave");
    let room = bridged.room.clone();
    let bob_account = bridged.homeserver.register("bob", "bob-password", false);
    let mut bob = super::peer::Peer::start(&bridged.homeserver, &bob_account);
    bridged.alice.call(json!({"do": "invite", "room": room, "user": bob_account.user_id}));
    bob.call(json!({"do": "join", "room": room}));
    let input = hook_input("toolu_leave", sizes());
    let hook = bridged.world.client(&["hook"], &input);
    let message = bob.wait_message(&room, "Which size?");
    bridged.alice.wait_message(&room, "Which size?");
    bridged.alice.call(json!({"do": "leave", "room": room}));
    bridged.wait_log("left the room");
    let notice = bob.wait_message(&room, "left the room");
    let said = notice["body"].as_str().unwrap_or_default();
    assert!(said.contains("stay open"), "{said}");
    let asks = bridged.world.connect().list();
    assert_eq!(asks.len(), 1, "the ask is still open: {asks:?}");

    let xvfb = &bridged.world.xvfb;
    let window = crate::inbox::wait_for_window(xvfb, "1 question", true).expect("the window");
    xvfb.focus(window);
    xvfb.keys(window, &["2", "ctrl+Return"]);
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"M\""), "{stdout}");
    bob.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"],
                    "contains": "Answered in the window"}));
}
