//! `askpane acp` with more real ACP agents (issue 28), each from npm through
//! `scripts/acp-agents` (pinned, cached outside the repository) and against a fake model server
//! of the tests' own on 127.0.0.1, hosted headless (`--no-inbox`, no display):
//! - codex-acp 0.16.0 (Codex's adapter, its linux-x64 binary) against the fake Responses API of
//!   `tests/fixtures/codex/fake_model_server.py` (tests/codex.rs's `FakeModel`): a shell command's
//!   permission allowed and rejected, and the turn codex-acp never ends (its model called
//!   `request_user_input`, which 0.16.0 drops), which must not hang askpane.
//! - Gemini CLI 0.61.0 `--acp` against the fake Gemini API of
//!   `tests/fixtures/acp/fake_gemini.py`: a `run_shell_command` permission allowed and rejected.
//!
//! A missing agent is a skip with the reason on stderr (a failure under CI).

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::codex::{FakeModel, model_read};
use crate::support::{self, Finished, run_bounded};

/// `CACHE/<relative>` in `scripts/acp-agents`' layout, or `None` (skipped, said on stderr; a
/// failure under CI) when it is not there.
fn installed(relative: &str, what: &str) -> Option<PathBuf> {
    let cache = std::env::var_os("ASKPANE_ACP_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/askpane/acp-agents"),
        PathBuf::from,
    );
    let path = cache.join(relative);
    if path.is_file() {
        return Some(path);
    }
    let message = format!("{what} is not installed: run scripts/acp-agents");
    assert!(std::env::var("CI").map_or(true, |ci| ci != "true"), "{message}");
    eprintln!("acp_agents: skipped: {message}");
    None
}

// ---- codex-acp 0.16.0 ----

const CODEX_ACP: &str =
    "codex-acp-0.16.0/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp";

/// The fake model's shell command: it asks to run outside the read-only sandbox, so Codex asks
/// for permission (the session starts in codex-acp's `read-only` mode).
const COMMAND: &str = r#"{"cmd": "touch made-by-codex.txt", "sandbox_permissions": "require_escalated", "justification": "Make the file you asked for"}"#;

/// `askpane acp --no-inbox FLAGS -- codex-acp` in the fake model's work folder, with its
/// throwaway HOME and CODEX_HOME; `None` when codex-acp is not installed.
fn codex_acp(model: &FakeModel, flags: &[&str]) -> Option<Finished> {
    let agent = installed(CODEX_ACP, "codex-acp 0.16.0")?;
    let mut askpane = support::askpane(&["acp", "--no-inbox"]);
    askpane
        .args(flags)
        .arg("--")
        .arg(agent)
        .current_dir(model.root.join("work"))
        .env("HOME", model.root.join("home"))
        .env("CODEX_HOME", model.root.join("codex_home"))
        .env("FAKE_API_KEY", "sk-dummy-not-a-real-key");
    Some(run_bounded(&mut askpane, None))
}

fn command_model(name: &str) -> FakeModel {
    FakeModel::start(
        name,
        &[("FAKE_TOOL_NAME", "exec_command"), ("FAKE_ARGUMENTS_JSON", COMMAND)],
        r#"approval_policy = "on-request""#,
    )
}

#[test]
fn codex_acp_a_shell_command_allowed_runs_and_its_model_reads_the_output() {
    let model = command_model("acp-codex-allowed");
    // codex-acp names no tool: the card (and --allow-tools) goes by ACP's kind, `execute`.
    let flags = ["-p", "Make the file.", "--allow-tools", "execute"];
    let Some(finished) = codex_acp(&model, &flags) else { return };
    assert!(model.root.join("work/made-by-codex.txt").exists(), "not made: {}", finished.stderr);
    let read = model_read(&model.root).unwrap_or_else(|| panic!("no output: {}", finished.stderr));
    assert!(read.contains("Process exited with code 0"), "{read}");
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn codex_acp_a_shell_command_with_nobody_to_ask_is_rejected_and_does_not_run() {
    let model = command_model("acp-codex-rejected");
    let Some(finished) = codex_acp(&model, &["-p", "Make the file."]) else { return };
    assert!(!model.root.join("work/made-by-codex.txt").exists(), "made: {}", finished.stderr);
    assert!(finished.stderr.contains("declined the ACP agent's execute"), "{}", finished.stderr);
    // codex-acp 0.16.0's only reject option is `abort` ("No, and tell Codex what to do
    // differently"): Codex ends the turn and waits for the person's next message, so its model
    // is not called again, and the turn ends `cancelled` (exit 1), said as such.
    assert_eq!(model_read(&model.root), None, "{}", finished.stderr);
    assert!(finished.stderr.contains("the turn ended (cancelled)"), "{}", finished.stderr);
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
}

#[test]
fn codex_acp_s_turn_stuck_on_request_user_input_does_not_hang_askpane() {
    // Codex offers request_user_input in its default mode only with this feature; codex-acp
    // 0.16.0 then drops the question and never ends the turn (issue 28's captures).
    let model =
        FakeModel::start("acp-codex-stuck", &[], "features.default_mode_request_user_input = true");
    let started = std::time::Instant::now();
    let flags = ["-p", "Ask me which database.", "--stuck-after", "3"];
    let Some(finished) = codex_acp(&model, &flags) else { return };
    let took = started.elapsed();
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
    assert!(finished.stderr.contains("sent nothing for 3 s"), "{}", finished.stderr);
    assert!(took < support::WAIT, "took {took:?}");
    eprintln!("codex-acp stuck turn ended by askpane after {took:?}");
}

// ---- Gemini CLI 0.61.0 `--acp` ----

const GEMINI: &str = "gemini-cli-0.61.0/node_modules/@google/gemini-cli/bundle/gemini.js";

/// `tests/fixtures/acp/fake_gemini.py` on a free port, logging under `root/model`.
struct FakeGemini {
    root: PathBuf,
    port: u16,
    _process: support::Process,
}

impl FakeGemini {
    fn start(name: &str) -> FakeGemini {
        let root = support::scratch_dir(name);
        for dir in ["home/.gemini", "work", "model"] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        // No usage statistics sent to Google from a test.
        let settings = serde_json::json!({"privacy": {"usageStatisticsEnabled": false}});
        fs::write(root.join("home/.gemini/settings.json"), settings.to_string()).unwrap();
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp/fake_gemini.py");
        let mut fake = Command::new("python3");
        fake.arg(script).arg(root.join("model"));
        fake.stdout(Stdio::null()).stderr(Stdio::null());
        let process = support::Process::new(fake.spawn().expect("start the fake Gemini API"));
        let deadline = std::time::Instant::now() + support::WAIT;
        let port = loop {
            if let Ok(port) = support::read_lossy(&root.join("model/port")).trim().parse() {
                break port;
            }
            assert!(std::time::Instant::now() < deadline, "the fake Gemini API did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        FakeGemini { root, port, _process: process }
    }

    /// What the model read back from the shell command (the functionResponse it was sent).
    fn read(&self) -> Option<serde_json::Value> {
        let log = support::read_lossy(&self.root.join("model/requests.jsonl"));
        log.lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .flat_map(|request| request["body"]["contents"].as_array().cloned().unwrap_or_default())
            .flat_map(|content| content["parts"].as_array().cloned().unwrap_or_default())
            .find_map(|part| part.get("functionResponse").cloned())
    }
}

/// `askpane acp --no-inbox FLAGS -- node gemini.js --acp` in the fake's work folder.
fn gemini(fake: &FakeGemini, flags: &[&str]) -> Option<Finished> {
    let entry = installed(GEMINI, "Gemini CLI 0.61.0")?;
    let mut askpane = support::askpane(&["acp", "--no-inbox"]);
    askpane
        .args(flags)
        .args(["--", "node"])
        .arg(entry)
        .arg("--acp")
        .current_dir(fake.root.join("work"))
        .env("HOME", fake.root.join("home"))
        .env("GEMINI_API_KEY", "dummy-not-a-real-key")
        .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", fake.port))
        // Gemini CLI otherwise starts itself again as a child with a larger heap: twice its
        // start, which alone took 14 s on these 2 shared cores.
        .env("GEMINI_CLI_NO_RELAUNCH", "true");
    Some(run_longer(&mut askpane, GEMINI_WAIT))
}

/// How long a Gemini CLI run may take: loading its 0.61.0 bundle (node) took 14 s before it
/// answered `initialize` with these 2 cores busy, and it takes seconds to exit after the turn.
const GEMINI_WAIT: Duration = Duration::from_secs(120);

/// [`run_bounded`] with a bound of `wait` instead of `support::WAIT`.
fn run_longer(command: &mut Command, wait: Duration) -> Finished {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let mut process = support::Process::new(child);
    let stdout = support::read_all(process.child.stdout.take().expect("piped stdout"));
    let stderr = support::read_all(process.child.stderr.take().expect("piped stderr"));
    let status = process.wait(wait);
    let (stdout, stderr) = (support::collect(stdout), support::collect(stderr));
    let status = status.unwrap_or_else(|| {
        panic!("{command:?} still runs after {wait:?}\nstdout:\n{stdout}\nstderr:\n{stderr}")
    });
    Finished { status, stdout, stderr }
}

#[test]
fn gemini_acp_a_shell_command_allowed_runs_and_its_model_reads_the_output() {
    let fake = FakeGemini::start("acp-gemini-allowed");
    // Gemini CLI names no tool either: its run_shell_command is ACP's `execute`.
    let flags = ["-p", "Please make the file.", "--allow-tools", "execute"];
    let Some(finished) = gemini(&fake, &flags) else { return };
    assert!(fake.root.join("work/made.txt").exists(), "not made: {}", finished.stderr);
    let read = fake.read().unwrap_or_else(|| panic!("no functionResponse: {}", finished.stderr));
    assert!(read.to_string().contains("Output: (empty)"), "{read}");
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn gemini_acp_a_shell_command_with_nobody_to_ask_is_rejected_and_does_not_run() {
    let fake = FakeGemini::start("acp-gemini-rejected");
    let Some(finished) = gemini(&fake, &["-p", "Please make the file."]) else { return };
    assert!(!fake.root.join("work/made.txt").exists(), "made: {}", finished.stderr);
    assert!(finished.stderr.contains("declined the ACP agent's execute"), "{}", finished.stderr);
    // Gemini CLI's model is told, and the turn goes on to its end.
    let read = fake.read().unwrap_or_else(|| panic!("no functionResponse: {}", finished.stderr));
    assert_eq!(
        read["response"],
        serde_json::json!({"error": "Tool \"run_shell_command\" was canceled by the user."}),
        "{}",
        finished.stderr
    );
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}
