//! Codex's `request_user_input` against the real Codex CLI (issue 13): `codex app-server`
//! 0.169.0 (from npm through `scripts/codex-cli`, cached outside the repo) with the fake
//! Responses API of `tests/fixtures/codex/fake_model_server.py` on a port chosen at run time,
//! and a throwaway CODEX_HOME and HOME; what the model reads is always taken from the fake
//! model's log. First the encoding alone (the test hosts the app-server and answers with
//! `protocol::codex`), then `askpane codex` run as a user runs it (headless, exit codes, a
//! signal), its transport in-process as the window drives it (approvals, Stop, Codex killed),
//! the window itself (kittest), the secret answer and the store, `askpane codex` under a running
//! `askpane inbox` (its question listed there, the inbox's reply read by the model, the inbox
//! killed and started again), and `askpane install codex` with the real `codex exec`.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use askpane::protocol::Outcome;
use askpane::protocol::codex::{self, UserInputRequest};

use crate::support::{Process, WAIT, clip, read_lossy, scratch_dir, tail};

const VERSION: &str = "0.169.0";

pub(crate) fn binary() -> PathBuf {
    let cache = std::env::var_os("ASKPANE_CODEX_CACHE").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set, to find the CLI cache");
            PathBuf::from(home).join(".cache/askpane/codex-cli")
        },
        PathBuf::from,
    );
    let binary = cache.join("bin").join(format!("codex-{VERSION}"));
    assert!(
        binary.is_file(),
        "Codex {VERSION} is not installed at {}: run scripts/codex-cli (needs the npm registry)",
        binary.display()
    );
    binary
}

/// The fake Responses API on a port chosen at run time, with a throwaway CODEX_HOME (its
/// config.toml from the template, plus `extra_config` lines), HOME and work folder under `root`.
pub(crate) struct FakeModel {
    pub(crate) root: PathBuf,
    process: Process,
}

impl FakeModel {
    /// `env`: the fake's own settings (`FAKE_TOOL_NAME`, `FAKE_ARGUMENTS_JSON`, …).
    pub(crate) fn start(name: &str, env: &[(&str, &str)], extra_config: &str) -> FakeModel {
        let root = scratch_dir(name);
        for dir in ["codex_home", "home", "work", "model", "state"] {
            fs::create_dir_all(root.join(dir)).expect("make a folder");
        }
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex");
        let port_file = root.join("model/port");
        let mut fake = Command::new("python3");
        fake.arg(fixture.join("fake_model_server.py"))
            .arg(root.join("model"))
            .arg(&port_file)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let process = Process::new(fake.spawn().expect("start the fake model (python3)"));
        let deadline = Instant::now() + WAIT;
        let port = loop {
            if let Ok(port) = read_lossy(&port_file).trim().parse::<u16>() {
                break port;
            }
            assert!(Instant::now() < deadline, "the fake model did not start");
            thread::sleep(Duration::from_millis(20));
        };
        let mut config = fs::read_to_string(fixture.join("config.toml.template"))
            .expect("read the config template")
            .replace("__PORT__", &port.to_string());
        // The template's approval policy is "never"; a test may want another. TOML keys may
        // not repeat, so the line is replaced rather than added.
        for line in extra_config.lines() {
            let key = line.split('=').next().unwrap_or_default().trim();
            let kept: Vec<&str> = config
                .lines()
                .filter(|old| old.split('=').next().unwrap_or_default().trim() != key)
                .collect();
            config = format!("{line}\n{}\n", kept.join("\n"));
        }
        fs::write(root.join("codex_home/config.toml"), config).expect("write config.toml");
        FakeModel { root, process }
    }
}

/// The text the model read as the output of the tool call, from the fake model's log.
pub(crate) fn model_read(root: &std::path::Path) -> Option<String> {
    let log = read_lossy(&root.join("model/model_requests.jsonl"));
    let output = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .flat_map(|record| record["body"]["input"].as_array().cloned().unwrap_or_default())
        .find(|item| {
            item["type"] == "function_call_output" || item["type"] == "custom_tool_call_output"
        })?;
    output["output"].as_str().map(str::to_owned)
}

/// One Codex app-server, hosted by the test, with its fake model.
struct AppServer {
    root: PathBuf,
    _fake: Process,
    codex: Process,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl AppServer {
    fn start(name: &str) -> AppServer {
        let binary = binary();
        let FakeModel { root, process: fake } = FakeModel::start(name, &[], "");
        let mut command = Command::new(binary);
        command
            .arg("app-server")
            .current_dir(root.join("work"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("CODEX_HOME", root.join("codex_home"))
            .env("FAKE_API_KEY", "sk-dummy-not-a-real-key")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(root.join("codex.stderr")).expect("stderr file"));
        let mut codex = Process::new(command.spawn().expect("start codex app-server"));
        let stdin = codex.child.stdin.take().expect("piped stdin");
        let stdout = codex.child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && sender.send(value).is_err()
                {
                    return;
                }
            }
        });
        AppServer { root, _fake: fake, codex, stdin, lines, next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to codex app-server");
    }

    /// Sends a request and waits for its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}));
        let reply = self.receive(|line| line["id"] == id && line.get("method").is_none());
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    /// Waits for the first line that `wanted` accepts.
    fn receive(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(_) => {}
                Err(_) => panic!("codex app-server said nothing in time: {}", self.report()),
            }
        }
    }

    /// Starts a thread with the question tool switched on for it alone, and a turn.
    fn ask(&mut self) {
        let capabilities = json!({"experimentalApi": false, "requestAttestation": false});
        let client = json!({"name": "askpane_test", "title": "askpane test", "version": "0"});
        self.call("initialize", json!({"clientInfo": client, "capabilities": capabilities}));
        self.send(&json!({"method": "initialized"}));
        let work = self.root.join("work");
        let thread = self.call(
            "thread/start",
            json!({"cwd": work, "approvalPolicy": "never", "sandbox": "read-only",
                "ephemeral": true,
                "config": {"features.default_mode_request_user_input": true}}),
        );
        let thread_id = thread["thread"]["id"].as_str().expect("a thread id").to_owned();
        let text = "Set up a new service. Ask me which database to use and what to name it.";
        self.call(
            "turn/start",
            json!({"threadId": thread_id,
                "input": [{"type": "text", "text": text, "text_elements": []}]}),
        );
    }

    /// Answers the question with `outcome` (through `protocol::codex`), waits for the turn to
    /// end, and returns what the model read: the function_call_output of the next request.
    fn answer(&mut self, outcome: impl Fn(&UserInputRequest) -> Outcome) -> Value {
        let asked = self.receive(|line| line["method"] == "item/tool/requestUserInput");
        let request: UserInputRequest =
            serde_json::from_value(asked["params"].clone()).expect("a request_user_input");
        codex::to_ask(&request).expect("askpane can show Codex's questions");
        let result = codex::response(&request, &outcome(&request)).expect("a result to send");
        self.send(&json!({"id": asked["id"], "result": result}));
        self.receive(|line| line["method"] == "turn/completed");
        let text = model_read(&self.root)
            .unwrap_or_else(|| panic!("the model read no tool output: {}", self.report()));
        serde_json::from_str(&text).expect("the output is the answers JSON")
    }

    fn report(&self) -> String {
        format!("\n--- codex stderr:\n{}", tail(&read_lossy(&self.root.join("codex.stderr")), 3000))
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.codex.wait(Duration::from_millis(10));
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

#[test]
fn a_decline_reaches_codexs_model_in_words_not_as_an_empty_answer() {
    let mut server = AppServer::start("codex-decline");
    server.ask();
    let read = server.answer(|_| Outcome::declined("I'll decide this myself later"));
    let note = "user_note: The user declined to answer these questions and said: I'll decide \
                this myself later";
    assert_eq!(
        read,
        json!({"answers": {"db_choice": {"answers": [note]}, "project_name": {"answers": [note]}}}),
        "{}",
        server.report()
    );
}

#[test]
fn picks_notes_and_other_reach_codexs_model_as_its_own_ui_sends_them() {
    use askpane::protocol::{Draft, Pick, build_answers};
    let mut server = AppServer::start("codex-answer");
    server.ask();
    let read = server.answer(|request| {
        let ask = codex::to_ask(request).expect("valid").ask;
        let mut drafts = vec![Draft::default(), Draft::default()];
        drafts[0].pick(&ask.questions()[0], Pick::Option(1));
        drafts[0].set_notes("prefer WAL mode".to_owned());
        drafts[1].set_other_text(&ask.questions()[1], "my-custom-service".to_owned());
        Outcome::Answered(build_answers(&ask, &drafts).expect("fits"))
    });
    // What the probe captured from Codex's own terminal UI (`tui-notes`).
    assert_eq!(
        read,
        json!({"answers": {
            "db_choice": {"answers": ["SQLite", "user_note: prefer WAL mode"]},
            "project_name": {"answers": ["None of the above", "user_note: my-custom-service"]}}}),
        "{}",
        server.report()
    );
}

// ---- `askpane codex`: askpane hosts the app-server ----

/// The environment `askpane codex` runs Codex in: the throwaway homes, the dummy key, and the
/// binary through `ASKPANE_CODEX_BIN`.
pub(crate) fn host_command(model: &FakeModel, args: &[&str]) -> Command {
    let mut command = crate::support::askpane(args);
    command
        .current_dir(model.root.join("work"))
        .env("HOME", model.root.join("home"))
        .env("CODEX_HOME", model.root.join("codex_home"))
        .env("FAKE_API_KEY", "sk-dummy-not-a-real-key")
        .env("ASKPANE_CODEX_BIN", binary())
        .env("ASKPANE_STATE_DIR", model.root.join("state"));
    command
}

fn read_json(model: &FakeModel, finished: &crate::support::Finished) -> Value {
    let text = model_read(&model.root).unwrap_or_else(|| {
        panic!("the model read no tool output\nstderr:\n{}", tail(&finished.stderr, 3000))
    });
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

pub(crate) const PROMPT: &str =
    "Set up a new service. Ask me which database to use and what to name it.";

#[test]
fn askpane_codex_headless_submits_the_answers_file() {
    let model = FakeModel::start("codex-host-answers", &[], "");
    let answers = model.root.join("answers.json");
    fs::write(
        &answers,
        r#"{"Which database should the service use?": "SQLite", "Name": "codex-probe"}"#,
    )
    .expect("write answers");
    let answers = answers.to_string_lossy().into_owned();
    let finished = crate::support::run_bounded(
        &mut host_command(&model, &["codex", "-p", PROMPT, "--answers", &answers, "--submit"]),
        None,
    );
    let read = read_json(&model, &finished);
    assert_eq!(
        read,
        json!({"answers": {"db_choice": {"answers": ["SQLite"]},
            "project_name": {"answers": ["codex-probe"]}}}),
        "{}",
        finished.stderr
    );
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn askpane_codex_headless_decline_and_no_human_reach_the_model_in_words() {
    let model = FakeModel::start("codex-host-decline", &[], "");
    let finished = crate::support::run_bounded(
        &mut host_command(&model, &["codex", "-p", PROMPT, "--decline", "Not now"]),
        None,
    );
    let note = "user_note: The user declined to answer these questions and said: Not now";
    assert_eq!(
        read_json(&model, &finished),
        json!({"answers": {"db_choice": {"answers": [note]}, "project_name": {"answers": [note]}}}),
        "{}",
        finished.stderr
    );
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);

    // No flag and no display: nobody can answer, and the model is told so.
    let model = FakeModel::start("codex-host-nobody", &[], "");
    let finished = crate::support::run_bounded(
        &mut host_command(&model, &["codex", "-p", PROMPT, "--non-interactive"]),
        None,
    );
    let read = read_json(&model, &finished);
    let first = read["answers"]["db_choice"]["answers"][0].as_str().unwrap_or_default();
    assert!(first.starts_with("user_note: No human is available"), "{read}");
    assert_eq!(read["answers"]["project_name"]["answers"][0].as_str(), Some(first));
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn askpane_codex_without_the_codex_binary_says_so_and_exits_2() {
    let model = FakeModel::start("codex-host-missing", &[], "");
    let mut command = host_command(&model, &["codex", "-p", PROMPT]);
    command.env("ASKPANE_CODEX_BIN", model.root.join("no-such-codex"));
    let finished = crate::support::run_bounded(&mut command, None);
    assert_eq!(finished.status.code(), Some(2), "{}", finished.stderr);
    let missing = model.root.join("no-such-codex");
    assert!(
        finished.stderr.contains(&format!("cannot start {} app-server", missing.display()))
            && finished.stderr.contains("--codex-bin or ASKPANE_CODEX_BIN"),
        "{}",
        finished.stderr
    );
}

/// The command a fake model runs through `exec_command`, asking to leave the read-only sandbox
/// (with `approval_policy = "on-request"` that needs the user's approval; 0.169 refuses
/// "untrusted" in config.toml), and what Codex's model reads when the user declines it.
const COMMAND: &str = r#"{"cmd": "touch made-by-codex.txt", "sandbox_permissions": "require_escalated", "justification": "Make the file you asked for"}"#;
const COMMAND_DECLINED: &str =
    r#"exec_command failed: CreateProcess { message: "Rejected(\"rejected by user\")" }"#;

fn command_model(name: &str) -> FakeModel {
    FakeModel::start(
        name,
        &[("FAKE_TOOL_NAME", "exec_command"), ("FAKE_ARGUMENTS_JSON", COMMAND)],
        r#"approval_policy = "on-request""#,
    )
}

#[test]
fn askpane_codex_headless_declines_a_command_and_the_model_reads_the_rejection() {
    let model = command_model("codex-host-command-headless");
    let finished = crate::support::run_bounded(
        &mut host_command(&model, &["codex", "-p", "Make a file", "--non-interactive"]),
        None,
    );
    assert_eq!(model_read(&model.root).as_deref(), Some(COMMAND_DECLINED), "{}", finished.stderr);
    assert!(!model.root.join("work/made-by-codex.txt").exists());
    assert!(
        finished.stderr.contains("declined Codex's Shell: touch made-by-codex.txt"),
        "{}",
        finished.stderr
    );
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

/// The patch a fake model sends through Codex's freeform `apply_patch` tool: a new file, and an
/// edit of `notes.txt` (which [`patch_model`] writes first).
const PATCH: &str = "*** Begin Patch\n*** Add File: made-by-codex.txt\n+Hello from Codex\n+second \
                     line\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** End Patch\n";
const NOTES: &str = "alpha\nbeta\ngamma\n";
/// What Codex's model reads when the user declines a file change (Codex has no place for the
/// user's words).
const PATCH_DECLINED: &str = "patch rejected by user";

/// A fake model that calls `apply_patch` with [`PATCH`]. Codex offers that tool only to models
/// whose metadata names it: the config names a model Codex knows (`gpt-5.5`, still served by
/// the fake), and `on-request` with the template's read-only sandbox makes Codex ask before
/// writing.
fn patch_model(name: &str) -> FakeModel {
    let model = FakeModel::start(
        name,
        &[("FAKE_TOOL_NAME", "apply_patch"), ("FAKE_CUSTOM_INPUT", PATCH)],
        "approval_policy = \"on-request\"\nmodel = \"gpt-5.5\"",
    );
    fs::write(model.root.join("work/notes.txt"), NOTES).expect("write notes.txt");
    model
}

/// The patch was applied, and the model read Codex's success output, naming both files.
fn assert_patch_applied(model: &FakeModel) {
    let work = model.root.join("work");
    assert_eq!(read_lossy(&work.join("made-by-codex.txt")), "Hello from Codex\nsecond line\n");
    assert_eq!(read_lossy(&work.join("notes.txt")), "alpha\nBETA\ngamma\n");
    let read = model_read(&model.root).expect("the model read the patch's output");
    assert!(read.starts_with("Exit code: 0\n"), "{read}");
    assert!(
        read.ends_with(
            "Output:\nSuccess. Updated the following files:\nA made-by-codex.txt\nM notes.txt\n"
        ),
        "{read}"
    );
}

/// The patch was not applied, and the model read that the user rejected it.
fn assert_patch_declined(model: &FakeModel) {
    let work = model.root.join("work");
    assert!(!work.join("made-by-codex.txt").exists());
    assert_eq!(read_lossy(&work.join("notes.txt")), NOTES);
    assert_eq!(model_read(&model.root).as_deref(), Some(PATCH_DECLINED));
}

#[test]
fn askpane_codex_headless_declines_a_file_change_and_the_model_reads_the_rejection() {
    let model = patch_model("codex-host-patch-headless");
    let finished = crate::support::run_bounded(
        &mut host_command(&model, &["codex", "-p", "Make the files", "--non-interactive"]),
        None,
    );
    assert_patch_declined(&model);
    // The summary names the first changed file (shortened to 80 characters).
    let declined = format!("declined Codex's Edit: {}", model.root.join("work").display());
    assert!(finished.stderr.contains(&declined), "{}", finished.stderr);
    assert!(finished.stderr.contains("(no window to ask in)"), "{}", finished.stderr);
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

// ---- the transport in-process, as the window drives it ----

use askpane::protocol::stream::{CliMessage, PermissionDecision};
use askpane::transport::agents::claude::Autopilot;
use askpane::transport::agents::codex::{CodexOptions, CodexOwn, CodexSession};
use askpane::transport::{
    ApprovalEvent, Inbound, IoThreads, RequestEvent, SessionCommand, SessionEvent, SessionInbound,
};

/// `CodexSession` with the real app-server, its UI channel read by the test as the window
/// would read it.
struct Hosted {
    model: FakeModel,
    session: Option<CodexSession>,
    threads: Option<IoThreads>,
    inbox: crossbeam_channel::Receiver<Inbound>,
}

impl Hosted {
    /// Starts Codex (through [`wrapper`]) in the model's work folder, with [`PROMPT`].
    fn start(model: FakeModel) -> Hosted {
        let options = session_options(&model, PROMPT);
        let (to_ui, inbox) = askpane::transport::memory();
        let mut threads = IoThreads::default();
        let session = CodexSession::start(&options, to_ui, &mut threads).expect("start Codex");
        Hosted { model, session: Some(session), threads: Some(threads), inbox }
    }

    /// Waits for the first message `wanted` accepts, skipping the rest.
    fn wait_for<T>(&self, what: &str, wanted: impl Fn(Inbound) -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.inbox.recv_timeout(left) {
                Ok(message) => {
                    if let Some(found) = wanted(message) {
                        return found;
                    }
                }
                Err(_) => panic!("no {what} came from Codex in time"),
            }
        }
    }

    /// The first permission card.
    fn permission(&self) -> Box<askpane::transport::PermissionAsk> {
        self.wait_for("permission", |message| match message {
            Inbound::Approval(ApprovalEvent::Permission(permission)) => Some(permission),
            _ => None,
        })
    }

    /// The first question.
    fn question(&self) -> Box<askpane::transport::Request> {
        self.wait_for("question", |message| match message {
            Inbound::Request(RequestEvent::Ask(request)) => Some(request),
            _ => None,
        })
    }

    /// The first withdrawn question's id.
    fn withdrawn(&self) -> String {
        self.wait_for("withdrawal", |message| match message {
            Inbound::Request(RequestEvent::Withdraw { tool_use_id }) => Some(tool_use_id),
            _ => None,
        })
    }

    fn turn_ended(&self) -> String {
        self.wait_for("turn end", |message| match message {
            Inbound::Session(SessionInbound::Event(event)) => match *event {
                SessionEvent::Message(CliMessage::Result(result)) => Some(result.subtype),
                _ => None,
            },
            _ => None,
        })
    }

    fn commands(&self) -> crossbeam_channel::Sender<SessionCommand> {
        self.session.as_ref().expect("running").commands()
    }
}

impl Drop for Hosted {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.shut_down(Duration::from_secs(3));
        }
        if let Some(threads) = self.threads.take() {
            let _ = threads.join();
        }
    }
}

/// A wrapper that runs the real Codex with the throwaway homes (and writes its PID, which
/// `exec` keeps, to `codex.pid`): the test process's own environment stays as it is.
fn wrapper(model: &FakeModel) -> PathBuf {
    wrapper_then(model, "")
}

/// [`wrapper`], running the shell `lines` just before Codex.
fn wrapper_then(model: &FakeModel, lines: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let root = &model.root;
    let script = format!(
        "#!/bin/sh\necho $$ > '{pid}'\nexport HOME='{home}' CODEX_HOME='{codex_home}' \
         FAKE_API_KEY=sk-dummy-not-a-real-key\n{lines}exec '{codex}' \"$@\"\n",
        pid = root.join("codex.pid").display(),
        home = root.join("home").display(),
        codex_home = root.join("codex_home").display(),
        codex = binary().display(),
    );
    let path = root.join("codex-wrapper");
    fs::write(&path, script).expect("write the wrapper");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("make it executable");
    path
}

/// How the in-process tests start Codex: through [`wrapper`], in the model's work folder.
fn session_options(model: &FakeModel, prompt: &str) -> CodexOptions {
    CodexOptions {
        program: wrapper(model),
        extra_args: Vec::new(),
        prompt: Some(prompt.to_owned()),
        debug: false,
        autopilot: Autopilot::default(),
        own: CodexOwn { cwd: model.root.join("work") },
    }
}

#[test]
fn a_command_allowed_in_the_window_runs_and_the_model_reads_its_result() {
    let model = command_model("codex-window-allow");
    let hosted = Hosted::start(model);
    let permission = hosted.permission();
    assert_eq!(permission.request.tool_name, "Shell");
    assert_eq!(permission.request.input["command"], "touch made-by-codex.txt");
    assert_eq!(permission.request.reason.as_deref(), Some("Make the file you asked for"));
    permission.reply.send(PermissionDecision::AllowOnce);
    assert_eq!(hosted.turn_ended(), "success");
    let read = model_read(&hosted.model.root).expect("the model read the command's output");
    assert!(read.contains("Process exited with code 0"), "{read}");
    assert!(hosted.model.root.join("work/made-by-codex.txt").exists());
}

#[test]
fn a_command_denied_in_the_window_is_read_as_rejected_by_the_user() {
    let model = command_model("codex-window-deny");
    let hosted = Hosted::start(model);
    let permission = hosted.permission();
    permission.reply.send(PermissionDecision::Deny { message: "no".into() });
    assert_eq!(hosted.turn_ended(), "success");
    assert_eq!(model_read(&hosted.model.root).as_deref(), Some(COMMAND_DECLINED));
    assert!(!hosted.model.root.join("work/made-by-codex.txt").exists());
}

#[test]
fn a_file_change_allowed_in_the_window_is_applied_and_the_model_reads_success() {
    let model = patch_model("codex-window-patch-allow");
    let hosted = Hosted::start(model);
    let permission = hosted.permission();
    let work = hosted.model.root.join("work");
    let (added, edited) = (work.join("made-by-codex.txt"), work.join("notes.txt"));
    assert_eq!(permission.request.tool_name, "Edit");
    assert_eq!(
        permission.request.input,
        json!({"file_path": format!("{}, {}", added.display(), edited.display()),
            "diff": format!("{} (new file)\n+Hello from Codex\n+second line\n\n{}\n\
                @@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma", added.display(), edited.display())})
    );
    // Nothing is written before the user allows it.
    assert!(!added.exists());
    permission.reply.send(PermissionDecision::AllowOnce);
    assert_eq!(hosted.turn_ended(), "success");
    assert_patch_applied(&hosted.model);
}

#[test]
fn a_file_change_denied_in_the_window_is_not_applied_and_the_model_reads_the_rejection() {
    let model = patch_model("codex-window-patch-deny");
    let hosted = Hosted::start(model);
    let permission = hosted.permission();
    permission.reply.send(PermissionDecision::Deny { message: "not these files".into() });
    assert_eq!(hosted.turn_ended(), "success");
    assert_patch_declined(&hosted.model);
}

#[test]
fn stop_withdraws_the_open_question_at_once_and_nothing_is_sent_later() {
    let model = FakeModel::start("codex-window-stop", &[], "");
    let hosted = Hosted::start(model);
    let asked = hosted.question();
    let asked_id = asked.core.envelope.tool_use_id().map(str::to_owned).expect("an id");
    hosted.commands().send(SessionCommand::Interrupt).expect("the writer listens");
    let withdrawn = hosted.withdrawn();
    assert_eq!(withdrawn, asked_id);
    assert_eq!(hosted.turn_ended(), "interrupted");
    // The window's late answer goes nowhere: the model never read a tool output this turn.
    asked.reply.send(Outcome::declined("too late"));
    // A write that does not come marks nothing: the reply would reach Codex within a moment.
    thread::sleep(Duration::from_millis(300));
    assert_eq!(model_read(&hosted.model.root), None);
}

#[test]
fn codex_dying_mid_question_withdraws_it_and_the_session_says_it_ended() {
    let model = FakeModel::start("codex-window-dies", &[], "");
    let hosted = Hosted::start(model);
    let asked = hosted.question();
    let asked_id = asked.core.envelope.tool_use_id().map(str::to_owned).expect("an id");
    let pid = read_lossy(&hosted.model.root.join("codex.pid")).trim().to_owned();
    let killed = Command::new("kill").args(["-KILL", &pid]).status().expect("run kill");
    assert!(killed.success());
    let withdrawn = hosted.withdrawn();
    assert_eq!(withdrawn, asked_id);
    let status = hosted.wait_for("end", |message| match message {
        Inbound::Session(SessionInbound::Event(event)) => match *event {
            SessionEvent::Ended { status, .. } => Some(status),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(status, "signal: 9 (SIGKILL)");
}

#[test]
fn a_secret_answer_is_masked_for_the_window_and_never_reaches_the_store() {
    use askpane::app::journal::Journal;
    use askpane::book::{Core, Form};
    use askpane::protocol::{Draft, Envelope, Pick, ReplyShape, build_answers};
    use askpane::store::{DraftSink, Store};

    const SECRET: &str = "hunter2-do-not-keep";
    // What Codex sends when the model marks a question secret (isSecret passes through).
    let request: UserInputRequest = serde_json::from_value(json!({
        "threadId": "t", "turnId": "u", "itemId": "call_secret",
        "questions": [{"id": "token", "header": "Token", "question": "Paste the API token",
            "isOther": true, "isSecret": true,
            "options": [{"label": "Skip", "description": "Do without it."}]}]}))
    .expect("a request");
    let ask = codex::to_ask(&request).expect("valid").ask;
    assert!(ask.questions()[0].secret(), "isSecret reaches the question");
    let mut draft = Draft::default();
    draft.set_other_text(&ask.questions()[0], SECRET.to_owned());
    let outcome =
        Outcome::Answered(build_answers(&ask, std::slice::from_ref(&draft)).expect("fits"));
    // Codex's model gets the secret: that is what it asked for.
    assert_eq!(
        codex::response(&request, &outcome),
        Some(
            json!({"answers": {"token": {"answers": ["None of the above", format!("user_note: {SECRET}")]}}})
        )
    );

    let dir = scratch_dir("codex-secret-store");
    let sink = DraftSink::start(Store::open_in(&dir).expect("a store")).expect("the writer");
    let core = Core {
        id: askpane::protocol::origin::RequestId::next(),
        envelope: Envelope::ToolUse { id: "call_secret#0".into() },
        ask: ask.clone(),
        warnings: Vec::new(),
        provenance: askpane::protocol::origin::Provenance::new("codex", None),
        reply_shape: ReplyShape::default(),
    };
    sink.opened(&core);
    let mut form = Form { draft, cursor: 1, ..Form::default() };
    form.draft.pick(&ask.questions()[0], Pick::Other);
    Journal::draft_changed(&sink, &core, 0, &form);
    Journal::settled(&sink, &core, &outcome);
    sink.flush();
    drop(sink);
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).expect("the store's folder") {
        let path = entry.expect("an entry").path();
        let bytes = fs::read(&path).unwrap_or_default();
        if bytes.windows(SECRET.len()).any(|window| window == SECRET.as_bytes()) {
            found.push(path);
        }
    }
    assert!(found.is_empty(), "the secret was written to {found:?}");
    let store = Store::open_in(&dir).expect("the store again");
    let history = store.history(&Default::default()).expect("the history");
    assert_eq!(history.len(), 1);
    let _ = fs::remove_dir_all(&dir);
}

// ---- the window, with the real app-server behind it (kittest) ----

use askpane::app::App;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

/// The window (kittest) with a `CodexSession` on the real app-server behind it.
struct Window {
    model: FakeModel,
    harness: Harness<'static, App>,
    session: Option<CodexSession>,
    threads: Option<IoThreads>,
}

impl Window {
    fn start(model: FakeModel, prompt: &str) -> Window {
        use askpane::app::AppOptions;
        // Codex's own log, at info, to a file: what a failure shows of where Codex was.
        let log = model.root.join("codex-stderr.log");
        let logging = format!("export RUST_LOG=info NO_COLOR=1\nexec 2>>'{}'\n", log.display());
        let mut options = session_options(&model, prompt);
        options.program = wrapper_then(&model, &logging);
        let (to_ui, inbox) = askpane::transport::memory();
        let mut threads = IoThreads::default();
        let session = CodexSession::start(&options, to_ui, &mut threads).expect("start Codex");
        let commands = session.commands();
        let prompt = prompt.to_owned();
        let harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 800.0))
            // Codex's transcript goes on arriving while a click settles: a few more frames
            // than kittest's default 4 (seen in CI: 6).
            .with_max_steps(16)
            .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::FONTS.clone()))
            .build_eframe(move |cc| {
                App::new(&cc.egui_ctx, inbox, AppOptions::default())
                    .with_session(commands, Some(&prompt))
            });
        Window { model, harness, session: Some(session), threads: Some(threads) }
    }

    /// Whether some node (not a text run) shows `part` in its value or label.
    fn has_text(&self, part: &str) -> bool {
        crate::claude_host::has_text_with(&self.harness, &[part])
    }

    /// Steps the window until `done` (bounded by WAIT).
    fn step_until(&mut self, what: &str, done: impl Fn(&Window) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            self.harness.step();
            if done(self) {
                self.harness.run();
                return;
            }
            assert!(Instant::now() < deadline, "waited {WAIT:?} for {what}; {}", self.state());
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// What a failure needs to tell a slow Codex from a window that missed its line: the
    /// window's texts, the requests the fake model served, whether Codex still runs.
    fn state(&self) -> String {
        let shown: Vec<String> = crate::claude_host::shown_texts(&self.harness)
            .iter()
            .map(|text| clip(text, 200))
            .collect();
        let requests: Vec<String> = read_lossy(&self.model.root.join("model/model_requests.jsonl"))
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .map(|record| {
                let text = |key: &str| record[key].as_str().unwrap_or_default().to_owned();
                format!("{} {} at {} s", text("method"), text("path"), record["t"])
            })
            .collect();
        let codex = read_lossy(&self.model.root.join("codex.pid"));
        let running =
            codex.trim().parse::<u32>().is_ok_and(|pid| !crate::claude_host::process_gone(pid));
        // Without the once-a-second lines about ChatGPT sign-in, which would fill the tail.
        let log: String = read_lossy(&self.model.root.join("codex-stderr.log"))
            .lines()
            .filter(|line| !line.contains("auth::manager") && !line.contains("remote_control"))
            .map(|line| format!("{line}\n"))
            .collect();
        format!(
            "the window shows {shown:?}; the fake model served {requests:?}; Codex (pid {}) {}; \
             the end of its log:\n{}",
            codex.trim(),
            if running { "runs" } else { "has ended" },
            tail(&log, 6000)
        )
    }

    fn click(&mut self, role: Role, label: &str) {
        self.harness.get_by_role_and_label(role, label).click();
        self.harness.run();
    }

    /// Ends the session as the window does on closing; Codex exits cleanly.
    fn shut_down(mut self) {
        let session = self.session.take().expect("running");
        let status = session.shut_down(Duration::from_secs(3)).expect("shut down");
        let threads = self.threads.take().expect("running");
        threads.join().expect("the session's threads end cleanly");
        assert!(status.success(), "{status}");
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.shut_down(Duration::from_secs(3));
        }
        if let Some(threads) = self.threads.take() {
            let _ = threads.join();
        }
    }
}

#[test]
fn the_window_shows_a_codex_question_and_the_transcript_with_what_the_model_read() {
    let mut window = Window::start(FakeModel::start("codex-kittest", &[], ""), PROMPT);
    window.step_until("the question", |window| {
        window.harness.query_by_role_and_label(Role::RadioButton, "SQLite").is_some()
    });
    assert!(window.has_text("codex · work"), "the provenance names Codex and the project");
    // The session pane names its agent (it said "Claude Code" for a Codex session).
    window.step_until("the session's name", |window| {
        window.harness.query_by_label("Codex").is_some()
    });
    assert!(!window.has_text("Claude Code"), "a Codex session is called Claude Code");
    window.click(Role::RadioButton, "SQLite");
    window.click(Role::Button, "Name");
    window.click(Role::RadioButton, "codex-probe");
    window.click(Role::Button, "Submit");
    window
        .step_until("the turn's end", |window| window.has_text("FAKE MODEL RECEIVED TOOL OUTPUT"));
    let read: Value =
        serde_json::from_str(&model_read(&window.model.root).expect("the model read the answers"))
            .expect("JSON");
    assert_eq!(
        read,
        json!({"answers": {"db_choice": {"answers": ["SQLite"]},
            "project_name": {"answers": ["codex-probe"]}}})
    );
    window.shut_down();
}

#[test]
fn a_codex_file_change_card_shows_its_diff_and_allow_once_writes_the_files() {
    let model = patch_model("codex-kittest-patch");
    let mut window = Window::start(model, "Make the files");
    window.step_until("the file-change card", |window| window.has_text("Codex wants to use Edit"));
    // The changed files and every +/- line of the patch, an added file's lines included.
    let work = window.model.root.join("work");
    let paths = format!(
        "{}, {}",
        work.join("made-by-codex.txt").display(),
        work.join("notes.txt").display()
    );
    for shown in [paths.as_str(), "+Hello from Codex", "+second line", "-beta", "+BETA", " gamma"] {
        assert!(window.has_text(shown), "the card does not show {shown:?}");
    }
    window.click(Role::Button, "Allow once");
    window
        .step_until("the turn's end", |window| window.has_text("FAKE MODEL RECEIVED TOOL OUTPUT"));
    assert_patch_applied(&window.model);
    window.shut_down();
}

#[test]
fn a_codex_file_change_denied_on_its_card_leaves_the_files_and_the_model_reads_the_rejection() {
    let mut window = Window::start(patch_model("codex-kittest-patch-deny"), "Make the files");
    window.step_until("the file-change card", |window| window.has_text("Codex wants to use Edit"));
    window.click(Role::Button, "Deny");
    window
        .step_until("the turn's end", |window| window.has_text("FAKE MODEL RECEIVED TOOL OUTPUT"));
    assert_patch_declined(&window.model);
    window.shut_down();
}

// ---- `askpane install codex`: the PreToolUse hook for Codex's own UI and `codex exec` ----

#[test]
fn install_codex_adds_a_trusted_hook_that_answers_codex_exec_and_uninstall_removes_it() {
    let model = FakeModel::start("codex-install", &[], "");
    let config_path = model.root.join("codex_home/config.toml");
    let config_before = fs::read_to_string(&config_path).expect("the config");
    let install = |verb: &str| {
        let mut command = host_command(&model, &[verb, "codex"]);
        crate::support::run_bounded(&mut command, None)
    };
    let installed = install("install");
    assert_eq!(installed.status.code(), Some(0), "{}{}", installed.stdout, installed.stderr);
    let hooks: Value = serde_json::from_str(&read_lossy(&model.root.join("codex_home/hooks.json")))
        .expect("hooks.json");
    let command = format!("{} codex-hook", env!("CARGO_BIN_EXE_askpane"));
    assert_eq!(
        hooks,
        json!({"hooks": {"PreToolUse": [{"matcher": "request_user_input",
            "hooks": [{"type": "command", "command": command, "timeout": 86400}]}]}})
    );
    let config = fs::read_to_string(&config_path).expect("the config");
    assert!(config.starts_with(&config_before), "{config}");
    let key = format!("{}:pre_tool_use:0:0", model.root.join("codex_home/hooks.json").display());
    assert!(
        config.contains(&format!("[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:")),
        "{config}"
    );
    // Idempotent: nothing changes the second time.
    let again = install("install");
    assert_eq!(again.status.code(), Some(0), "{}", again.stderr);
    assert_eq!(fs::read_to_string(&config_path).expect("the config"), config);

    // The real `codex exec`, no trust bypass: the hook runs (answering from --answers through
    // its environment) and the model reads the answer as the hook's deny reason.
    let answers = model.root.join("answers.json");
    fs::write(&answers, r#"{"Database": "SQLite", "Name": "codex-probe"}"#).expect("answers");
    let mut exec = Command::new(binary());
    exec.args(["exec", "--json", "--skip-git-repo-check", PROMPT])
        .current_dir(model.root.join("work"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", model.root.join("home"))
        .env("CODEX_HOME", model.root.join("codex_home"))
        .env("FAKE_API_KEY", "sk-dummy-not-a-real-key")
        .env("ASKPANE_ANSWERS", &answers)
        .env("ASKPANE_SUBMIT", "1")
        .env("ASKPANE_NO_INBOX", "1")
        .env("XDG_RUNTIME_DIR", crate::support::private_runtime_dir())
        .env("ASKPANE_STATE_DIR", model.root.join("state"));
    let ran = crate::support::run_bounded(&mut exec, None);
    assert_eq!(
        model_read(&model.root).as_deref(),
        Some(
            "Tool call blocked by PreToolUse hook: Your questions have been answered: \
             \"Which database should the service use?\"=\"SQLite\", \"What should the project be \
             called?\"=\"codex-probe\". You can now continue with these answers in mind. Tool: \
             request_user_input"
        ),
        "{}",
        tail(&ran.stderr, 3000)
    );

    let removed = install("uninstall");
    assert_eq!(removed.status.code(), Some(0), "{}", removed.stderr);
    assert_eq!(fs::read_to_string(&config_path).expect("the config"), config_before);
    let hooks: Value = serde_json::from_str(&read_lossy(&model.root.join("codex_home/hooks.json")))
        .expect("hooks.json");
    assert_eq!(hooks, json!({"hooks": {"PreToolUse": []}}));
}

/// `askpane codex --ui web` stopped by SIGTERM while a question is open in the browser bridge:
/// Codex gets one honest reply to it (the signal, in a note for every question), then its turn
/// is interrupted, its input closed and its process group stopped; askpane exits 4.
#[test]
fn a_signal_answers_the_open_codex_question_honestly_and_stops_codex() {
    if !crate::support::web_bundle_built() {
        return; // Built without scripts/build-web: `--ui web` is tested in `bridge`.
    }
    use std::os::unix::fs::PermissionsExt as _;
    let model = FakeModel::start("codex-signal", &[], "");
    // A wrapper that keeps a copy of everything askpane writes to Codex.
    let sent = model.root.join("sent.jsonl");
    let script = format!(
        "#!/bin/sh\necho $$ > '{pid}'\ntee '{sent}' | '{codex}' \"$@\"\n",
        pid = model.root.join("codex.pid").display(),
        sent = sent.display(),
        codex = binary().display(),
    );
    let wrapper = model.root.join("codex-tee");
    fs::write(&wrapper, script).expect("write the wrapper");
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).expect("executable");
    let mut command = host_command(&model, &["codex", "-p", PROMPT, "--ui", "web"]);
    command
        .env("ASKPANE_CODEX_BIN", &wrapper)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut askpane = Process::new(command.spawn().expect("start askpane codex"));
    let stderr = crate::support::read_all(askpane.child.stderr.take().expect("stderr"));
    let stdout = crate::support::read_all(askpane.child.stdout.take().expect("stdout"));
    // The question is asked right after the model's first reply; leave it time to reach the
    // bridge.
    let deadline = Instant::now() + WAIT;
    while !read_lossy(&sent).contains("turn/start")
        || read_lossy(&model.root.join("model/model_requests.jsonl")).is_empty()
    {
        assert!(Instant::now() < deadline, "Codex never asked the model");
        thread::sleep(Duration::from_millis(20));
    }
    thread::sleep(Duration::from_millis(1000));
    let pid = askpane.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let status = askpane.wait(WAIT);
    let (stdout, stderr) = (crate::support::collect(stdout), crate::support::collect(stderr));
    let context = format!("stdout:\n{stdout}\nstderr:\n{stderr}\nsent:\n{}", read_lossy(&sent));
    let status = status.unwrap_or_else(|| panic!("askpane still runs after SIGTERM\n{context}"));
    assert_eq!(status.code(), Some(4), "{context}");
    let replies: Vec<Value> = read_lossy(&sent)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line.get("result").is_some())
        .collect();
    let note = "user_note: askpane was stopped (SIGTERM) before the user answered. Do not \
                assume an answer; ask again in chat if you still need one.";
    assert_eq!(
        replies,
        vec![json!({"id": 0, "result": {"answers": {"db_choice": {"answers": [note]},
            "project_name": {"answers": [note]}}}})],
        "{context}"
    );
    let codex_pid = read_lossy(&model.root.join("codex.pid")).trim().to_owned();
    let alive = Command::new("kill").args(["-0", &codex_pid]).stderr(Stdio::null()).status();
    assert!(!alive.expect("kill -0").success(), "Codex still runs\n{context}");
}

// ---- `askpane codex` under the inbox, as `askpane claude` is ----

/// `askpane codex -p PROMPT <args>` in `world` (its inbox, display and directories), with
/// `model`'s homes and the real Codex; no display of its own is needed.
pub(crate) fn codex_in_world(
    world: &crate::inbox::World,
    model: &FakeModel,
    args: &[&str],
) -> Command {
    let mut all = vec!["codex", "-p", PROMPT];
    all.extend(args);
    let mut command = world.askpane(&all);
    command
        .current_dir(model.root.join("work"))
        .env("HOME", model.root.join("home"))
        .env("CODEX_HOME", model.root.join("codex_home"))
        .env("FAKE_API_KEY", "sk-dummy-not-a-real-key")
        .env("ASKPANE_CODEX_BIN", binary());
    command
}

/// What the model read, once it has read something (bounded by WAIT).
pub(crate) fn model_read_json(model: &FakeModel) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(text) = model_read(&model.root) {
            return serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        }
        assert!(Instant::now() < deadline, "the model read no tool output");
        thread::sleep(Duration::from_millis(100));
    }
}

/// `askpane codex -p PROMPT <args>` under `world`'s inbox, without a display of its own: what
/// the model read of the inbox's reply, once the inbox has listed the question (checked to be
/// from `codex · work`) and decided it. The session then stays until a signal ends it (exit 4).
fn inbox_decides(world: &crate::inbox::World, name: &str, args: &[&str]) -> Value {
    use crate::hosted::{listed, send_signal};
    let model = FakeModel::start(name, &[], "");
    let mut command = codex_in_world(world, &model, args);
    command.env_remove("DISPLAY");
    let askpane = crate::inbox::Client::spawn(command, "");
    let requests = listed(world);
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["from"], "codex · work", "{requests:?}");
    assert_eq!(requests[0]["title"], "Database", "{requests:?}");
    // The inbox writes the JSON-RPC result Codex takes; the relay writes it to Codex's stdin.
    let read = model_read_json(&model);
    assert!(world.connect().list().is_empty());
    send_signal(askpane.pid(), "TERM");
    let (code, _, stderr) = askpane.finish();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("Codex's questions, permissions and transcript are in the inbox"),
        "{stderr}"
    );
    read
}

#[test]
fn askpane_codex_hands_its_question_to_the_inbox_and_the_model_reads_the_inbox_reply() {
    let world = crate::inbox::World::with_inbox("codex-inbox");
    // --timeout travels with the question: the inbox's time runs out, and the model is told.
    let read = inbox_decides(&world, "codex-inbox-timeout", &["--timeout", "2"]);
    let note = "user_note: No response after 2s — the user may be away from keyboard. Proceed \
                using your best judgment based on the context so far; you can re-ask this \
                question later if it's still relevant.";
    assert_eq!(
        read,
        json!({"answers": {"db_choice": {"answers": [note]}, "project_name": {"answers": [note]}}})
    );
    // --answers fills the inbox's form for the user to confirm: when the time runs out with
    // nobody confirming it, the model is told the preset apart, never as the answer (issue 24).
    let answers = world.answers(
        "answers.json",
        &json!({"Which database should the service use?": "SQLite", "Name": "codex-probe"}),
    );
    let answers = answers.to_string_lossy().into_owned();
    let read =
        inbox_decides(&world, "codex-inbox-answers", &["--timeout", "2", "--answers", &answers]);
    for id in ["db_choice", "project_name"] {
        let told = read["answers"][id]["answers"][0].as_str().unwrap_or_default();
        assert!(told.starts_with("user_note: No response after 2s"), "{id}: {read}");
        assert!(
            told.contains(
                "nobody confirmed them: \"Which database should the service use?\"=\"SQLite\""
            ) && told.contains("=\"codex-probe\". They are not the user's answers."),
            "{id}: {read}"
        );
    }
}

#[test]
fn an_inbox_killed_mid_question_is_started_again_and_codex_is_asked_again() {
    use crate::hosted::{kill_the_inbox_until_another_runs, listed};
    let world = crate::inbox::World::with_inbox("codex-inbox-restart");
    let model = FakeModel::start("codex-inbox-restart-model", &[], "");
    let askpane = crate::inbox::Client::spawn(codex_in_world(&world, &model, &[]), "");
    let before = listed(&world);
    kill_the_inbox_until_another_runs(&world);
    let after = listed(&world);
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["tool_use_id"], before[0]["tool_use_id"]);
    assert_eq!(after[0]["from"], "codex · work");
    // `--quit` is deliberate: the question hears the inbox was closed, and the session ends.
    let mut quit = world.askpane(&["inbox", "--quit"]);
    let quitting = crate::support::run_bounded(&mut quit, None);
    assert_eq!(quitting.status.code(), Some(0), "{}", quitting.stderr);
    let (code, _, stderr) = askpane.finish();
    let read = model_read(&model.root)
        .unwrap_or_else(|| panic!("no reply read (askpane exited {code:?})\n{stderr}"));
    let read: Value = serde_json::from_str(&read).unwrap_or_else(|_| panic!("not JSON: {read}"));
    let closed = askpane::protocol::Outcome::inbox_closed().deny_message().unwrap_or_default();
    let note = format!("user_note: {closed}");
    assert_eq!(
        read,
        json!({"answers": {"db_choice": {"answers": [note]}, "project_name": {"answers": [note]}}}),
        "{stderr}"
    );
    assert!(stderr.contains("the inbox went away; starting it again"), "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
}

/// Issue 26 part 5: `--approvals` adds Codex's `PermissionRequest` hook (every tool) beside the
/// question hook, Codex's own `hooks/list` names both and both are trusted; uninstall removes
/// both hooks and both trust entries.
#[test]
fn install_codex_approvals_adds_and_trusts_the_permission_request_hook_too() {
    let model = FakeModel::start("codex-install-approvals", &[], "");
    let config_path = model.root.join("codex_home/config.toml");
    let config_before = fs::read_to_string(&config_path).expect("the config");
    let run = |args: &[&str]| {
        let mut command = host_command(&model, args);
        crate::support::run_bounded(&mut command, None)
    };
    let installed = run(&["install", "codex", "--approvals"]);
    assert_eq!(installed.status.code(), Some(0), "{}{}", installed.stdout, installed.stderr);
    let hooks_path = model.root.join("codex_home/hooks.json");
    let hooks: Value = serde_json::from_str(&read_lossy(&hooks_path)).expect("hooks.json");
    let command = format!("{} codex-hook", env!("CARGO_BIN_EXE_askpane"));
    let entry = json!([{"type": "command", "command": command, "timeout": 86400}]);
    assert_eq!(
        hooks,
        json!({"hooks": {
            "PreToolUse": [{"matcher": "request_user_input", "hooks": entry.clone()}],
            "PermissionRequest": [{"hooks": entry}]}})
    );
    let config = fs::read_to_string(&config_path).expect("the config");
    for event in ["pre_tool_use", "permission_request"] {
        let key = format!("{}:{event}:0:0", hooks_path.display());
        assert!(
            config.contains(&format!("[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:")),
            "{event}: {config}"
        );
    }
    let again = run(&["install", "codex", "--approvals"]);
    assert_eq!(again.status.code(), Some(0), "{}", again.stderr);
    assert_eq!(fs::read_to_string(&config_path).expect("the config"), config);

    let removed = run(&["uninstall", "codex"]);
    assert_eq!(removed.status.code(), Some(0), "{}", removed.stderr);
    assert_eq!(fs::read_to_string(&config_path).expect("the config"), config_before);
    let hooks: Value = serde_json::from_str(&read_lossy(&hooks_path)).expect("hooks.json");
    assert_eq!(hooks, json!({"hooks": {"PreToolUse": [], "PermissionRequest": []}}));
}
