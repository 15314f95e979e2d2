//! Issue 26 end to end: the real Claude Code 2.1.332 (`-p`, stream-json out) against the fake
//! Messages API scripted to call Bash, then Edit; `askpane install claude --approvals --project`
//! writes the `PermissionRequest` hook; the hook hands each call to a running `askpane inbox
//! --ui web`, and this test is its page: a WebSocket client on 127.0.0.1 with the link's token,
//! deciding each card as the page's buttons do. Each test checks what Claude Code then did (the
//! file made or not, the edit, the rule written) and what the model read next.
//!
//! The CLI comes from `scripts/claude-cli` (`CACHE/bin/claude-2.1.332`). Every wait is bounded;
//! the inbox and the CLI (with any hook it started) are killed by their PIDs at the end.

use std::fs;
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use askpane::book::tool_call::ToolCallView;
use askpane::protocol::stream::PermissionRequest;
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use crate::fake_api::{FakeApi, ToolCall};
use crate::interop::{CliProcess, EXIT_LIMIT, SCENARIO_LIMIT, Scratch, tool_result_text};
use crate::support::{Process, WAIT};

const VERSION: &str = "2.1.332";
/// The words a person typed with a denial (the research's own).
const DENY_WORDS: &str = "Not now: use the Makefile target instead.";

/// `CACHE/bin/claude-2.1.332`, the layout `scripts/claude-cli` documents.
fn claude_binary() -> PathBuf {
    crate::support::agents::claude_cli(VERSION)
}

/// The page: a WebSocket client of the inbox's bridge, as the browser's is (tests/acp.rs too).
pub(crate) struct Page {
    socket: WebSocket<TcpStream>,
    /// Every message read, for failure messages and for what must not have come.
    seen: Vec<Value>,
}

impl Page {
    pub(crate) fn connect(link: &str) -> Page {
        let socket = crate::support::agents::page_socket(link);
        socket.get_ref().set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        Page { socket, seen: Vec::new() }
    }

    /// The next message, or `None` once `until` passed.
    fn read_until(&mut self, until: Instant) -> Option<Value> {
        while Instant::now() < until {
            match self.socket.read() {
                Ok(Message::Text(text)) => {
                    let message: Value = serde_json::from_str(text.as_str()).unwrap();
                    self.seen.push(message.clone());
                    return Some(message);
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(error))
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(error) => panic!("the page's connection ended: {error}"),
            }
        }
        None
    }

    /// The next message of type `kind`, within `within`.
    pub(crate) fn next(&mut self, kind: &str, within: Duration) -> Value {
        let until = Instant::now() + within;
        while let Some(message) = self.read_until(until) {
            if message["type"] == kind {
                return message;
            }
        }
        panic!("no {kind} within {within:?}; the page saw {:#?}", self.seen);
    }

    pub(crate) fn send(&mut self, value: &Value) {
        self.socket.send(Message::text(value.to_string())).expect("send from the page");
    }

    /// Decides card `request_id` as a button does, and waits until it leaves the page.
    pub(crate) fn decide(&mut self, request_id: &str, decision: Value, ended: &str) {
        let mut message = json!({"type": "permission_decision", "request_id": request_id});
        let (Some(object), Some(fields)) = (message.as_object_mut(), decision.as_object()) else {
            unreachable!()
        };
        object.extend(fields.clone());
        self.send(&message);
        let gone = self.next("permission_withdrawn", WAIT);
        assert_eq!(
            gone,
            json!({"type": "permission_withdrawn", "request_id": request_id,
            "reason": ended})
        );
    }
}

/// A scratch project with the approval hook, an `askpane inbox --ui web` and its page.
struct World {
    scratch: Scratch,
    run: PathBuf,
    api: FakeApi,
    page: Page,
    _inbox: Process,
}

impl World {
    /// The fake model's `script` is made for the project's path.
    fn start(name: &str, script: impl FnOnce(&Path) -> Vec<ToolCall>) -> World {
        let scratch = Scratch::new(&format!("approvals-{name}"));
        let run = scratch.root.join("run");
        for dir in [scratch.home(), scratch.project(), scratch.tmp(), run.clone()] {
            fs::create_dir_all(&dir).unwrap();
        }
        fs::set_permissions(&run, fs::Permissions::from_mode(0o700)).unwrap();
        let project = scratch.project();
        fs::write(project.join("greeting.txt"), "hello\n").unwrap();
        let package = json!({"name": "shop", "version": "1.0.0",
            "scripts": {"test": "echo tested-by-npm"}});
        fs::write(project.join("package.json"), package.to_string()).unwrap();

        let askpane = env!("CARGO_BIN_EXE_askpane");
        let isolated = |command: &mut Command| {
            command
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", scratch.home())
                .env("XDG_RUNTIME_DIR", &run)
                .env("ASKPANE_STATE_DIR", scratch.root.join("state"));
        };
        let mut install = Command::new(askpane);
        install.args(["install", "claude", "--approvals", "--project"]).arg(&project);
        isolated(&mut install);
        let installed = crate::support::run_bounded(&mut install, None);
        assert_eq!(installed.status.code(), Some(0), "install: {}", installed.stderr);

        let mut inbox = Command::new(askpane);
        inbox.args(["inbox", "--ui", "web"]);
        isolated(&mut inbox);
        inbox.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut inbox = Process::new(inbox.spawn().expect("start askpane inbox --ui web"));
        let stderr = inbox.child.stderr.take().expect("piped stderr");
        let page = Page::connect(&crate::support::agents::browser_link(stderr));
        let api = FakeApi::scripted(script(&project));
        World { scratch, run, api, page, _inbox: inbox }
    }

    /// Starts `claude -p` in the project, its hooks reaching this world's inbox.
    fn claude(&self) -> Claude {
        let mut command = Command::new(claude_binary());
        command.args(["--output-format", "stream-json", "--verbose", "-p", "Please do the task."]);
        self.scratch.isolate(&mut command, &self.api.base_url());
        command
            .env("XDG_RUNTIME_DIR", &self.run)
            .env("NO_UPDATE_NOTIFIER", "1")
            .env("npm_config_update_notifier", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start Claude Code");
        let stdout = collect(child.stdout.take().expect("stdout"));
        let stderr = collect(child.stderr.take().expect("stderr"));
        let marker = format!("{}={}", crate::interop::RUN_MARKER, self.scratch.root.display());
        Claude { process: CliProcess::new(child, Some(marker)), stdout, stderr }
    }

    fn project_file(&self, name: &str) -> PathBuf {
        self.scratch.project().join(name)
    }

    /// The tool_result the model read for `tool_use_id`: its text and `is_error`.
    fn tool_result(&self, tool_use_id: &str, claude: &Finished) -> (String, bool) {
        let results = self.api.tool_results();
        let found = results.iter().find(|result| result["tool_use_id"] == tool_use_id);
        let result = found.unwrap_or_else(|| {
            panic!("no tool_result for {tool_use_id}: {results:#?}\n{}", claude.report(&self.api))
        });
        (tool_result_text(result), result["is_error"] == true)
    }
}

fn collect(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// A running `claude -p`.
struct Claude {
    process: CliProcess,
    stdout: thread::JoinHandle<String>,
    stderr: thread::JoinHandle<String>,
}

struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Claude {
    /// Waits for the CLI to end (bounded), with what it wrote.
    fn finish(mut self) -> Finished {
        let status = self.process.wait(SCENARIO_LIMIT + EXIT_LIMIT);
        if status.is_none() {
            drop(self.process);
        }
        let stdout = self.stdout.join().unwrap_or_default();
        let stderr = self.stderr.join().unwrap_or_default();
        Finished { code: status.and_then(|status| status.code()), stdout, stderr }
    }
}

impl Finished {
    fn report(&self, api: &FakeApi) -> String {
        let tail = |text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(12)..].join("\n")
        };
        format!(
            "--- claude {VERSION} exit {:?}\nAPI requests:\n{}stdout:\n{}\nstderr:\n{}\n---",
            self.code,
            api.request_summary(),
            tail(&self.stdout),
            tail(&self.stderr)
        )
    }

    /// The stream-json lines of type `kind` and `subtype`.
    fn lines_of(&self, kind: &str, subtype: &str) -> Vec<Value> {
        let lines = self.stdout.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok());
        lines.filter(|line| line["type"] == kind && line["subtype"] == subtype).collect()
    }
}

/// A card as the page got it: its request_id and the request.
pub(crate) fn card(message: &Value) -> (String, PermissionRequest) {
    let request: PermissionRequest = serde_json::from_value(message["request"].clone())
        .unwrap_or_else(|error| panic!("a card's request ({error}): {message}"));
    (request.request_id.clone(), request)
}

fn bash(command: &str, id: &str) -> ToolCall {
    ToolCall::new("Bash", json!({"command": command, "description": "Run it"}), id)
}

/// Bash allowed once runs, and the model's next request carries its output; then an Edit, shown
/// with its diff, allowed: the file changed.
#[test]
fn allowed_once_runs_and_an_edit_shown_with_its_diff_is_made() {
    let mut world = World::start("allow", |project| {
        vec![
            bash(&format!("touch {}/made-by-bash && echo ran-bash", project.display()), "toolu_b1"),
            ToolCall::new(
                "Edit",
                json!({"file_path": project.join("greeting.txt"), "old_string": "hello",
                    "new_string": "hello world"}),
                "toolu_e1",
            ),
        ]
    });
    let claude = world.claude();
    let (request_id, request) = card(&world.page.next("permission_request", SCENARIO_LIMIT));
    assert_eq!(request.tool_name, "Bash");
    assert_eq!(request.origin, askpane::protocol::permission::ApprovalOrigin::Hook);
    world.page.decide(&request_id, json!({"decision": "allow"}), "allowed");

    let (request_id, request) = card(&world.page.next("permission_request", SCENARIO_LIMIT));
    assert_eq!(request.tool_name, "Edit");
    let ToolCallView::Change { diff, .. } = ToolCallView::of(&request) else {
        panic!("an Edit's card is a change: {request:?}");
    };
    let unified = diff.unified();
    assert!(
        unified.lines().any(|line| line == "-hello")
            && unified.lines().any(|line| line == "+hello world"),
        "the card's body shows the removed and added lines: {unified}"
    );
    world.page.decide(&request_id, json!({"decision": "allow"}), "allowed");

    let done = claude.finish();
    let report = done.report(&world.api);
    assert_eq!(done.code, Some(0), "{report}");
    assert!(world.project_file("made-by-bash").is_file(), "Bash did not run\n{report}");
    let (text, is_error) = world.tool_result("toolu_b1", &done);
    assert_eq!((text.trim(), is_error), ("ran-bash", false), "{report}");
    assert_eq!(fs::read_to_string(world.project_file("greeting.txt")).unwrap(), "hello world\n");
    let (text, is_error) = world.tool_result("toolu_e1", &done);
    assert!(!is_error && text.contains("has been updated successfully"), "{text}\n{report}");
}

/// Denied with a message: nothing ran, and the model read the message verbatim as an error.
#[test]
fn denied_with_a_message_runs_nothing_and_the_model_reads_the_words() {
    let mut world = World::start("deny", |project| {
        vec![bash(&format!("touch {}/made-by-bash", project.display()), "toolu_d1")]
    });
    let claude = world.claude();
    let (request_id, _) = card(&world.page.next("permission_request", SCENARIO_LIMIT));
    world.page.decide(&request_id, json!({"decision": "deny", "message": DENY_WORDS}), "denied");
    let done = claude.finish();
    let report = done.report(&world.api);
    assert!(!world.project_file("made-by-bash").exists(), "Bash ran\n{report}");
    assert_eq!(world.tool_result("toolu_d1", &done), (DENY_WORDS.to_owned(), true), "{report}");
}

/// An "always" (the agent's addRules suggestion for localSettings): the rule is written to
/// `.claude/settings.local.json`, and the next identical call runs without reaching askpane.
#[test]
fn always_writes_the_rule_and_the_same_call_again_never_reaches_the_inbox() {
    let mut world = World::start("always", |_| {
        vec![bash("npm test", "toolu_a1"), bash("npm test", "toolu_a2")]
    });
    let claude = world.claude();
    let (request_id, request) = card(&world.page.next("permission_request", SCENARIO_LIMIT));
    let suggestions = serde_json::to_value(&request.suggestions).unwrap();
    let rule = suggestions
        .as_array()
        .and_then(|all| {
            all.iter().find(|s| s["type"] == "addRules" && s["destination"] == "localSettings")
        })
        .unwrap_or_else(|| panic!("no addRules for localSettings: {suggestions}"))
        .clone();
    world.page.decide(
        &request_id,
        json!({"decision": "allow_always", "suggestion": rule}),
        "allowed",
    );
    let done = claude.finish();
    let report = done.report(&world.api);
    assert_eq!(done.code, Some(0), "{report}");
    let local = world.scratch.project().join(".claude/settings.local.json");
    let written: Value = serde_json::from_str(&fs::read_to_string(&local).unwrap()).unwrap();
    let rules = rule["rules"].as_array().unwrap();
    let expected: Vec<String> = rules
        .iter()
        .map(|rule| {
            format!(
                "{}({})",
                rule["toolName"].as_str().unwrap(),
                rule["ruleContent"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(written["permissions"]["allow"], json!(expected), "{written}");
    for id in ["toolu_a1", "toolu_a2"] {
        let (text, _) = world.tool_result(id, &done);
        assert!(text.contains("tested-by-npm"), "{id} did not run: {text}\n{report}");
    }
    // The inbox saw one card only.
    let quiet = Instant::now() + Duration::from_millis(500);
    while let Some(message) = world.page.read_until(quiet) {
        assert_ne!(message["type"], "permission_request", "a second card: {message}");
    }
    let cards = world.page.seen.iter().filter(|m| m["type"] == "permission_request").count();
    assert_eq!(cards, 1, "{:#?}", world.page.seen);
}

/// Handed back ("Answer in the terminal"): the hook prints nothing, and `-p` then denies the call
/// with Claude Code's own words (the research's `pr-bash-nodecision`).
#[test]
fn handed_back_prints_nothing_and_claude_code_denies_in_its_own_words() {
    let mut world = World::start("hand-back", |project| {
        vec![bash(&format!("touch {}/made-by-bash", project.display()), "toolu_h1")]
    });
    let project = world.scratch.project();
    let claude = world.claude();
    let (request_id, _) = card(&world.page.next("permission_request", SCENARIO_LIMIT));
    world.page.decide(&request_id, json!({"decision": "hand_back"}), "handed_back");
    let done = claude.finish();
    let report = done.report(&world.api);
    assert!(!world.project_file("made-by-bash").exists(), "Bash ran\n{report}");
    let project = project.display();
    let expected = format!(
        "touch in '{project}/made-by-bash' needs approval. The path is inside the working \
         directories for this session ('{project}'), and Claude Code asks before a shell \
         command creates, changes or removes files there."
    );
    assert_eq!(world.tool_result("toolu_h1", &done), (expected, true), "{report}");
    let denied = done.lines_of("system", "permission_denied");
    assert_eq!(denied.len(), 1, "{report}");
}
