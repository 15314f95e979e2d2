//! `askpane acp` (issue 28): the real claude-agent-acp 0.101.0 (from `scripts/acp-agents`)
//! against the fake Messages API on 127.0.0.1, hosted by `askpane acp --no-inbox` without a
//! window: what its model reads for each way a question form ends (the table of
//! `tests/fixtures/acp/README.md`'s source, the captures of 0.100.0), and a Bash permission
//! allowed (`--allow-tools`) and rejected (nobody to ask). Then a fake agent of our own
//! (`tests/fixtures/acp/fake_agent.py`): a generic form, and agents that never answer, which
//! must not hang askpane. Every run is bounded (`support::run_bounded`).

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{FakeApi, TOOL_USE_ID};
use crate::interop::{Scratch, tool_result_text};
use crate::interop_approvals::{Page, card};
use crate::support::{self, Finished, Process, WAIT, run_bounded};

const VERSION: &str = "0.101.0";
/// What claude-agent-acp's model reads after the answers.
const READ_CAREFULLY: &str = "Read the answers carefully — they may request clarification, \
                              changes, or that you not proceed — and follow what they actually say.";

/// The adapter's entry point, in the layout `scripts/acp-agents` documents; `None` (skipped,
/// said on stderr; a failure under CI) when it is not installed.
fn adapter() -> Option<PathBuf> {
    let cache = std::env::var_os("ASKPANE_ACP_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/askpane/acp-agents"),
        PathBuf::from,
    );
    let entry = cache.join(format!(
        "claude-agent-acp-{VERSION}/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
    ));
    if entry.is_file() {
        return Some(entry);
    }
    let message = format!("claude-agent-acp {VERSION} is not installed: run scripts/acp-agents");
    assert!(std::env::var("CI").map_or(true, |ci| ci != "true"), "{message}");
    eprintln!("acp: skipped: {message}");
    None
}

/// `askpane acp --no-inbox FLAGS -- COMMAND` in a scratch project, without a display.
fn run(scratch: &Scratch, api_url: &str, flags: &[&str], command: &[&str]) -> Finished {
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(dir).unwrap();
    }
    let mut askpane = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut askpane, api_url);
    askpane.args(["acp", "--no-inbox"]).args(flags).arg("--").args(command);
    run_bounded(&mut askpane, None)
}

/// The real adapter asked `questions` by the fake model, answered by `flags`: the one
/// tool_result its model read.
fn ask_claude(name: &str, questions: Value, flags: &[&str]) -> Option<(Value, Finished)> {
    let entry = adapter()?;
    let scratch = Scratch::new(&format!("acp-{name}"));
    let api = FakeApi::asking(questions);
    let mut all = vec!["-p", "Please ask me."];
    all.extend_from_slice(flags);
    let finished = run(&scratch, &api.base_url(), &all, &["node", entry.to_str().unwrap()]);
    let results = api.tool_results();
    let result = results.iter().find(|result| result["tool_use_id"] == TOOL_USE_ID);
    let result = result.unwrap_or_else(|| {
        panic!("no tool_result; stderr:\n{}\nrequests:\n{}", finished.stderr, api.request_summary())
    });
    Some((result.clone(), finished))
}

fn database() -> Value {
    json!({"question": "Which database?", "header": "DB", "multiSelect": false,
        "options": [{"label": "PostgreSQL", "description": "a"}, {"label": "SQLite", "description": "b"}]})
}

fn features() -> Value {
    json!({"question": "Which features?", "header": "Features", "multiSelect": true,
        "options": [{"label": "Auth", "description": "login"}, {"label": "Search", "description": "full text"},
                    {"label": "Cache", "description": "redis"}]})
}

fn answers_file(scratch_name: &str, answers: &Value) -> PathBuf {
    let path = support::scratch_dir(scratch_name).join("answers.json");
    fs::write(&path, answers.to_string()).unwrap();
    path
}

#[test]
fn acp_one_question_answered_with_a_note_is_what_the_model_reads() {
    let answers = answers_file(
        "acp-answers-one",
        &json!({"DB": {"choose": "PostgreSQL", "notes": "with pgvector please"}}),
    );
    let flags = ["--answers", answers.to_str().unwrap(), "--submit"];
    let Some((result, finished)) = ask_claude("one", json!({"questions": [database()]}), &flags)
    else {
        return;
    };
    assert_eq!(
        tool_result_text(&result),
        format!(
            "The user answered: \"Which database?\"=\"PostgreSQL\" notes: with pgvector please. \
             {READ_CAREFULLY}"
        ),
        "stderr:\n{}",
        finished.stderr
    );
    assert!(finished.status.success(), "{}", finished.stderr);
}

#[test]
fn acp_two_questions_with_other_and_multi_select_are_what_the_model_reads() {
    let answers = answers_file(
        "acp-answers-multi",
        &json!({"DB": {"other": "DuckDB"},
                "Features": {"choose": ["Auth", "Search"], "other": "Redis, not Memcached"}}),
    );
    let flags = ["--answers", answers.to_str().unwrap(), "--submit"];
    let questions = json!({"questions": [database(), features()]});
    let Some((result, finished)) = ask_claude("multi", questions, &flags) else {
        return;
    };
    assert_eq!(
        tool_result_text(&result),
        format!(
            "The user answered: \"Which database?\"=\"DuckDB\", \"Which features?\"=\"Auth, \
             Search, \"Redis, not Memcached\"\". {READ_CAREFULLY}"
        ),
        "stderr:\n{}",
        finished.stderr
    );
}

#[test]
fn acp_decline_is_the_user_did_not_answer() {
    let flags = ["--decline", "Not now."];
    let Some((result, _)) = ask_claude("decline", json!({"questions": [database()]}), &flags)
    else {
        return;
    };
    assert_eq!(tool_result_text(&result), "The user did not answer the questions.");
    assert_ne!(result["is_error"], true);
}

#[test]
fn acp_nobody_to_ask_cancels_and_the_tool_use_is_aborted_never_answered() {
    let flags = ["--non-interactive"];
    let Some((result, _)) = ask_claude("cancel", json!({"questions": [database()]}), &flags) else {
        return;
    };
    assert_eq!(
        tool_result_text(&result),
        "Tool permission request failed: Error: Tool use aborted"
    );
    assert_eq!(result["is_error"], true);
}

/// The fake model calls Bash to make `made.txt`; the file and the tool_result say what ran.
fn bash(name: &str, flags: &[&str]) -> Option<(bool, Value, Finished)> {
    let entry = adapter()?;
    let scratch = Scratch::new(&format!("acp-bash-{name}"));
    let input = json!({"command": "echo made > made.txt", "description": "Make a file"});
    let api = FakeApi::calling("Bash", input, "toolu_acp_bash_1");
    // claude-agent-acp 0.101.0 starts a session in its `auto` mode (Claude decides), where Bash
    // asks nobody: the project's settings choose `default` ("Always ask before making changes").
    let settings = scratch.project().join(".claude");
    fs::create_dir_all(&settings).unwrap();
    let manual = json!({"permissions": {"defaultMode": "default"}});
    fs::write(settings.join("settings.json"), manual.to_string()).unwrap();
    let mut all = vec!["-p", "Please make the file."];
    all.extend_from_slice(flags);
    let finished = run(&scratch, &api.base_url(), &all, &["node", entry.to_str().unwrap()]);
    let results = api.tool_results();
    let result = results.iter().find(|result| result["tool_use_id"] == "toolu_acp_bash_1");
    let result = result.unwrap_or_else(|| {
        panic!("no tool_result; stderr:\n{}\nrequests:\n{}", finished.stderr, api.request_summary())
    });
    Some((scratch.project().join("made.txt").exists(), result.clone(), finished))
}

#[test]
fn acp_bash_permission_allowed_runs_the_command() {
    let Some((made, result, finished)) = bash("allowed", &["--allow-tools", "Bash"]) else {
        return;
    };
    assert!(made, "the command did not run: {result}\nstderr:\n{}", finished.stderr);
    assert_ne!(result["is_error"], true, "{result}");
}

#[test]
fn acp_bash_permission_with_nobody_to_ask_is_rejected() {
    let Some((made, result, finished)) = bash("rejected", &[]) else {
        return;
    };
    assert!(!made, "the command ran: {result}\nstderr:\n{}", finished.stderr);
    assert_eq!(result["is_error"], true, "{result}");
    assert!(finished.stderr.contains("declined the ACP agent's Bash"), "{}", finished.stderr);
}

/// `askpane acp` running our fake agent in `mode`: what the agent was sent, and the run.
fn fake_agent(name: &str, mode: &str, flags: &[&str]) -> (Vec<Value>, Finished) {
    fake_agent_in(&Scratch::new(&format!("acp-fake-{name}")), None, mode, flags)
}

/// As [`fake_agent`], in `scratch`, under the inbox of `run_dir` when given.
fn fake_agent_in(
    scratch: &Scratch,
    run_dir: Option<&PathBuf>,
    mode: &str,
    flags: &[&str],
) -> (Vec<Value>, Finished) {
    let log = scratch.root.join("agent.jsonl");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp/fake_agent.py");
    let mut all = vec!["-p", "Go."];
    all.extend_from_slice(flags);
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(dir).unwrap();
    }
    let mut askpane = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut askpane, "http://127.0.0.1:9");
    askpane.env("FAKE_ACP_MODE", mode).env("FAKE_ACP_LOG", &log);
    match run_dir {
        Some(run_dir) => askpane.env("XDG_RUNTIME_DIR", run_dir).arg("acp"),
        None => askpane.args(["acp", "--no-inbox"]),
    };
    askpane.args(&all).arg("--").arg("python3").arg(script);
    let finished = run_bounded(&mut askpane, None);
    let sent = fs::read_to_string(&log).unwrap_or_default();
    let sent = sent.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    (sent, finished)
}

#[test]
fn acp_initialize_offers_forms_and_no_file_system_or_terminal() {
    let (sent, finished) = fake_agent("initialize", "form", &[]);
    assert_eq!(sent[0]["method"], "initialize", "{}", finished.stderr);
    assert_eq!(
        sent[0]["params"]["clientCapabilities"],
        json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false,
               "elicitation": {"form": {}, "url": {}}})
    );
    assert_eq!(sent[1]["method"], "session/new");
    assert_eq!(sent[2]["params"]["prompt"], json!([{"type": "text", "text": "Go."}]));
}

#[test]
fn acp_a_generic_form_with_nobody_to_ask_is_cancelled_never_a_decline() {
    let (sent, finished) = fake_agent("form", "form", &[]);
    let answer = sent.iter().find(|line| line["id"] == "e1").expect("the form was answered");
    // Shown as a card in a window (tests/acp_forms.rs); without one nobody answers it.
    assert_eq!(answer["result"], json!({"action": "cancel"}), "{answer}");
    assert!(finished.stderr.contains("Deploy where?"), "{}", finished.stderr);
    assert!(finished.status.success(), "{}", finished.stderr);
}

#[test]
fn acp_an_agent_that_never_ends_its_turn_does_not_hang_askpane() {
    let (sent, finished) = fake_agent("hang", "hang", &["--stuck-after", "2"]);
    assert!(
        sent.iter().any(|line| line["method"] == "session/cancel"),
        "no session/cancel: {sent:?}"
    );
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
    assert!(finished.stderr.contains("sent nothing for 2 s"), "{}", finished.stderr);
}

#[test]
fn acp_an_agent_that_never_answers_the_handshake_does_not_hang_askpane() {
    let (_, finished) = fake_agent("mute", "mute", &["--stuck-after", "2"]);
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
    assert!(finished.stderr.contains("did not start a session"), "{}", finished.stderr);
}

/// `askpane inbox --ui web` without a display, in its own runtime folder: its page is the only
/// front end, and nobody opens it (a question waits there). Returns the runtime folder.
fn start_inbox(scratch: &Scratch, api_url: &str) -> (Process, mpsc::Receiver<String>, PathBuf) {
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(dir).unwrap();
    }
    let run_dir = support::private_runtime_dir();
    let mut inbox = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut inbox, api_url);
    inbox.env("XDG_RUNTIME_DIR", &run_dir).args(["inbox", "--ui", "web"]);
    inbox.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut inbox = Process::new(inbox.spawn().expect("start the inbox"));
    let inbox_err = support::read_all(inbox.child.stderr.take().unwrap());
    let socket = run_dir.join("askpane/inbox.sock");
    let until = Instant::now() + WAIT;
    while !socket.exists() && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
    }
    assert!(socket.exists(), "the inbox did not start");
    (inbox, inbox_err, run_dir)
}

#[test]
fn acp_under_the_inbox_a_question_is_answered_there_and_the_model_reads_it() {
    let Some(entry) = adapter() else {
        return;
    };
    if !support::web_bundle_built() {
        return;
    }
    let scratch = Scratch::new("acp-inbox");
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(dir).unwrap();
    }
    let api = FakeApi::asking(json!({"questions": [database()]}));
    let (inbox, inbox_err, run_dir) = start_inbox(&scratch, &api.base_url());

    let answers = answers_file(
        "acp-answers-inbox",
        &json!({"DB": {"choose": "SQLite", "notes": "through the inbox"}}),
    );
    let mut acp = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut acp, &api.base_url());
    acp.env("XDG_RUNTIME_DIR", &run_dir)
        .args(["acp", "--answers", answers.to_str().unwrap(), "--submit", "-p", "Ask me."])
        .args(["--", "node", entry.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut acp = Process::new(acp.spawn().expect("start askpane acp"));
    let acp_err = support::read_all(acp.child.stderr.take().unwrap());
    // The session stays in the inbox after its turn: wait for what the model read, then end.
    let until = Instant::now() + WAIT;
    let mut result = None;
    while result.is_none() && Instant::now() < until {
        result = api.tool_results().into_iter().find(|result| result["tool_use_id"] == TOOL_USE_ID);
        thread::sleep(Duration::from_millis(50));
    }
    drop(acp);
    drop(inbox);
    let stderr = support::collect(acp_err);
    let result = result.unwrap_or_else(|| {
        panic!("no tool_result\nacp:\n{stderr}\ninbox:\n{}", support::collect(inbox_err))
    });
    assert_eq!(
        tool_result_text(&result),
        format!(
            "The user answered: \"Which database?\"=\"SQLite\" notes: through the inbox. \
             {READ_CAREFULLY}"
        )
    );
    assert!(stderr.contains("are in the inbox"), "{stderr}");
}

#[test]
fn acp_a_question_form_the_agent_withdraws_gets_only_the_cancelled_error() {
    if !support::web_bundle_built() {
        return;
    }
    // Under an inbox nobody answers: the form waits there until the agent takes it back.
    let scratch = Scratch::new("acp-fake-withdraw");
    let (inbox, _, run_dir) = start_inbox(&scratch, "http://127.0.0.1:9");
    let (sent, finished) =
        fake_agent_in(&scratch, Some(&run_dir), "withdraw", &["--stuck-after", "3"]);
    drop(inbox);
    let answers: Vec<&Value> = sent.iter().filter(|line| line["id"] == "q1").collect();
    assert_eq!(answers.len(), 1, "{answers:?}\n{}", finished.stderr);
    assert_eq!(answers[0]["error"]["code"], -32800, "{}", answers[0]);
    assert!(finished.stderr.contains("are in the inbox"), "{}", finished.stderr);
}

#[test]
fn acp_a_withdrawn_form_with_nobody_to_ask_is_answered_exactly_once() {
    // Without a display the book answers at once ("cancel") while the withdrawal races it:
    // whichever comes first is the one answer.
    let (sent, finished) = fake_agent("withdraw-headless", "withdraw", &[]);
    let answers: Vec<&Value> = sent.iter().filter(|line| line["id"] == "q1").collect();
    assert_eq!(answers.len(), 1, "{answers:?}\n{}", finished.stderr);
    let cancelled = answers[0]["error"]["code"] == -32800;
    assert!(cancelled || answers[0]["result"] == json!({"action": "cancel"}), "{}", answers[0]);
}

/// The fake model calls Bash under `askpane acp` in a running inbox; its card is decided on
/// the inbox's page (a WebSocket client, as the browser's) with `decision`, which ends it as
/// `ended`. Returns whether the command ran and the tool_result the model read.
fn bash_on_the_page(name: &str, decision: Value, ended: &str) -> Option<(bool, Value)> {
    let entry = adapter()?;
    if !support::web_bundle_built() {
        return None;
    }
    let scratch = Scratch::new(&format!("acp-page-{name}"));
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(dir).unwrap();
    }
    let settings = scratch.project().join(".claude");
    fs::create_dir_all(&settings).unwrap();
    let manual = json!({"permissions": {"defaultMode": "default"}});
    fs::write(settings.join("settings.json"), manual.to_string()).unwrap();
    let input = json!({"command": "echo made > made.txt", "description": "Make a file"});
    let api = FakeApi::calling("Bash", input, "toolu_acp_bash_1");
    let run_dir = support::private_runtime_dir();
    let mut inbox = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut inbox, &api.base_url());
    inbox.env("XDG_RUNTIME_DIR", &run_dir).args(["inbox", "--ui", "web"]);
    inbox.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut inbox = Process::new(inbox.spawn().expect("start the inbox"));
    let link = crate::support::agents::browser_link(inbox.child.stderr.take().unwrap());
    let mut page = Page::connect(&link);

    let mut acp = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut acp, &api.base_url());
    acp.env("XDG_RUNTIME_DIR", &run_dir)
        .args(["acp", "-p", "Please make the file.", "--", "node", entry.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let acp = Process::new(acp.spawn().expect("start askpane acp"));
    let (request_id, request) = card(&page.next("permission_request", WAIT));
    assert_eq!(request.tool_name, "Bash");
    assert_eq!(request.input["command"], "echo made > made.txt");
    page.decide(&request_id, decision, ended);
    let until = Instant::now() + WAIT;
    let mut result = None;
    while result.is_none() && Instant::now() < until {
        let results = api.tool_results();
        result = results.into_iter().find(|result| result["tool_use_id"] == "toolu_acp_bash_1");
        thread::sleep(Duration::from_millis(50));
    }
    drop(acp);
    drop(inbox);
    let result = result.unwrap_or_else(|| panic!("no tool_result: {}", api.request_summary()));
    Some((scratch.project().join("made.txt").exists(), result))
}

#[test]
fn acp_bash_allowed_once_on_the_inbox_s_card_runs() {
    let Some((made, result)) = bash_on_the_page("allow", json!({"decision": "allow"}), "allowed")
    else {
        return;
    };
    assert!(made, "the command did not run: {result}");
    assert_ne!(result["is_error"], true, "{result}");
}

#[test]
fn acp_bash_denied_on_the_inbox_s_card_does_not_run() {
    let deny = json!({"decision": "deny", "message": "Not now."});
    let Some((made, result)) = bash_on_the_page("deny", deny, "denied") else {
        return;
    };
    assert!(!made, "the command ran: {result}");
    assert_eq!(result["is_error"], true, "{result}");
}

#[test]
fn acp_an_agent_that_wants_a_sign_in_is_told_by_name_and_the_run_ends() {
    let (sent, finished) = fake_agent("auth", "auth", &[]);
    // askpane holds no credentials: it never calls `authenticate` itself.
    assert!(!sent.iter().any(|line| line["method"] == "authenticate"), "{sent:?}");
    assert!(finished.stderr.contains("Authentication required"), "{}", finished.stderr);
    assert!(finished.stderr.contains("Log in with Claude"), "{}", finished.stderr);
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
}

#[test]
fn acp_an_agent_that_cannot_start_or_dies_is_told_with_its_exit_code() {
    let scratch = Scratch::new("acp-dies");
    let missing = run(&scratch, "http://127.0.0.1:9", &["-p", "Go."], &["/nonexistent/agent"]);
    assert_eq!(missing.status.code(), Some(2), "{}", missing.stderr);
    assert!(
        missing.stderr.contains("cannot start the ACP agent /nonexistent/agent"),
        "{}",
        missing.stderr
    );
    let dies = ["sh", "-c", "echo 'no API key' >&2; exit 3"];
    let died = run(&scratch, "http://127.0.0.1:9", &["-p", "Go."], &dies);
    assert_eq!(died.status.code(), Some(1), "{}", died.stderr);
    assert!(died.stderr.contains("ended before the turn did (exit code 3)"), "{}", died.stderr);
    assert!(died.stderr.contains("no API key"), "{}", died.stderr);
}

#[test]
fn acp_requests_askpane_cannot_serve_are_answered_so_the_agent_never_waits() {
    let (sent, finished) = fake_agent("hostile", "hostile", &[]);
    let answer = |id: &str| {
        sent.iter()
            .find(|line| line["id"] == id && line.get("method").is_none())
            .unwrap_or_else(|| panic!("no answer to {id}: {sent:?}\n{}", finished.stderr))
    };
    // No file system for the agent: method not found, nothing read.
    assert_eq!(answer("h1")["error"]["code"], -32601);
    // A permission with no option askpane knows: nobody chose.
    assert_eq!(answer("h2")["result"], json!({"outcome": {"outcome": "cancelled"}}));
    // A form that is no form: an error, never a decline.
    assert_eq!(answer("h3")["error"]["code"], -32602);
    assert!(finished.status.success(), "{}", finished.stderr);
}

#[test]
fn acp_stop_on_the_inbox_s_page_sends_session_cancel_and_end_session_ends_the_run() {
    if !support::web_bundle_built() {
        return;
    }
    let scratch = Scratch::new("acp-stop");
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(dir).unwrap();
    }
    let run_dir = support::private_runtime_dir();
    let mut inbox = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut inbox, "http://127.0.0.1:9");
    inbox.env("XDG_RUNTIME_DIR", &run_dir).args(["inbox", "--ui", "web"]);
    inbox.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut inbox = Process::new(inbox.spawn().expect("start the inbox"));
    let link = crate::support::agents::browser_link(inbox.child.stderr.take().unwrap());
    let mut page = Page::connect(&link);

    // The fake agent never ends its turn; --stuck-after is far off: only Stop can end it.
    let log = scratch.root.join("agent.jsonl");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp/fake_agent.py");
    let mut acp = Command::new(env!("CARGO_BIN_EXE_askpane"));
    scratch.isolate(&mut acp, "http://127.0.0.1:9");
    acp.env("XDG_RUNTIME_DIR", &run_dir)
        .env("FAKE_ACP_MODE", "hang")
        .env("FAKE_ACP_LOG", &log)
        .args(["acp", "--stuck-after", "600", "-p", "Go.", "--", "python3"])
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut acp = Process::new(acp.spawn().expect("start askpane acp"));
    let session = page.next("session", WAIT)["session"].clone();
    let sent = || -> Vec<Value> {
        let text = fs::read_to_string(&log).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    };
    // Stop only once the prompt is out (a Stop before it has no turn to cancel).
    let until = Instant::now() + WAIT;
    while !sent().iter().any(|line| line["method"] == "session/prompt") && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
    }
    page.send(&json!({"type": "session_stop", "session": session}));
    let until = Instant::now() + WAIT;
    while !sent().iter().any(|line| line["method"] == "session/cancel") && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
    }
    let cancel = sent().into_iter().find(|line| line["method"] == "session/cancel");
    assert_eq!(
        cancel.unwrap_or_else(|| panic!("no session/cancel: {:?}", sent()))["params"],
        json!({"sessionId": "fake-session"})
    );
    page.send(&json!({"type": "session_end", "session": session}));
    assert!(acp.wait(WAIT).is_some(), "askpane acp still runs after End session");
    drop(inbox);
}
