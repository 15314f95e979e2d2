//! The one flags → policy rule (issue 25) under every mode that takes the answering flags:
//! `ask`, `hook`, `claude` (the scripted Claude Code of tests/fake-claude) and `codex` (the real
//! Codex CLI with its fake model), each alone (no display, no inbox), in a window of its own
//! (`--no-inbox` on an Xvfb) where it has one, and under a running inbox. An `--answers` file
//! that does not fit the questions is never dropped: whoever would show the question, the agent
//! hears at once that no answer is available, naming the file (and `ask` exits 2). And what the
//! flags decide without a person (`--answers f --submit`) is in history, as every outcome is,
//! whether `claude` or `codex` runs alone, in a window of its own or under the inbox.
//!
//! Every process runs in directories of its own (runtime, state), so no test sees another's
//! inbox or store; every wait is bounded.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::claude_host::{FAKE, PROMPT, Report};
use crate::codex::{FakeModel, codex_in_world, host_command, model_read_json};
use crate::hosted::{reply_message, report_after, send_signal};
use crate::inbox::{Client, World, hook_input};
use crate::support::{self, run_bounded, scratch_dir};

/// A question as `askpane ask` reads it: the tool input alone.
const COLOUR: &str = r#"{"questions":[{"question":"Which colour?","header":"Colour","multiSelect":false,"options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"cool"}]}]}"#;

/// Answers that fit no question of any test here.
fn wrong_answers(dir: &Path) -> String {
    let path = dir.join("wrong.json");
    std::fs::write(&path, json!({"Shape": "Round"}).to_string()).expect("write the answers");
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// What the agent reads (and `ask` prints on stderr) about answers from `file` that do not fit.
fn names_the_misfit(text: &str, file: &str) -> bool {
    text.contains(&format!("--answers {file}: "))
}

/// The scripted session whose question the captured host declined: any deny fits its shape.
fn deny_transcript() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session.deny.2.1.330.replay.jsonl")
}

/// `askpane <args>` alone: no display, no inbox (`ASKPANE_NO_INBOX`), its runtime and state
/// directories under `dir`, run in `dir`.
fn alone(dir: &Path, args: &[&str]) -> Command {
    let run = dir.join("run");
    std::fs::create_dir_all(&run).expect("a runtime dir");
    let mut command = support::askpane(args);
    command
        .env("XDG_RUNTIME_DIR", &run)
        .env("ASKPANE_STATE_DIR", dir.join("state"))
        .current_dir(dir);
    command
}

/// `ask` and `hook` with `args`, as the checks below read them: exit code, stdout, stderr.
type Ran = (Option<i32>, String, String);

fn alone_ran(dir: &Path, args: &[&str], input: &str) -> Ran {
    let finished = run_bounded(&mut alone(dir, args), Some(input));
    (finished.status.code(), finished.stdout, finished.stderr)
}

fn assert_ask_unavailable((code, stdout, stderr): &Ran, file: &str, context: &str) {
    assert_eq!(*code, Some(2), "{context}: exit 2 names the misfit\n{stdout}\n{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(reply["outcome"], "unavailable", "{context}: {reply}");
    let message = reply["message"].as_str().unwrap_or_default();
    assert!(names_the_misfit(message, file), "{context}: {message}");
    assert!(names_the_misfit(stderr, file), "{context}: {stderr}");
}

fn assert_hook_unavailable((code, stdout, stderr): &Ran, file: &str, context: &str) {
    assert_eq!(*code, Some(0), "{context}: {stderr}");
    assert!(names_the_misfit(stdout, file), "{context}: {stdout}\n{stderr}");
}

#[test]
fn ask_and_hook_answer_unavailable_to_answers_that_do_not_fit_with_and_without_an_inbox() {
    let world = World::with_inbox("policy-ask-hook");
    let own = scratch_dir("policy-ask-hook-alone");
    let wrong = wrong_answers(&world.root);
    let hook = hook_input("toolu_policy", "Which colour?");
    for submit in [&[][..], &["--submit"][..]] {
        let ask: Vec<&str> = [&["ask", "--answers", &wrong][..], submit].concat();
        let context = format!("{ask:?}");
        assert_ask_unavailable(&alone_ran(&own, &ask, COLOUR), &wrong, &context);
        assert_ask_unavailable(&world.client(&ask, COLOUR).finish(), &wrong, &context);
        let hooked: Vec<&str> = [&["hook", "--answers", &wrong][..], submit].concat();
        let context = format!("{hooked:?}");
        assert_hook_unavailable(&alone_ran(&own, &hooked, &hook), &wrong, &context);
        assert_hook_unavailable(&world.client(&hooked, &hook).finish(), &wrong, &context);
    }
    // None of them waited for a person.
    assert!(world.connect().list().is_empty());
}

// ---------------------------------------------------------------------------------------------
// `askpane claude`

/// `askpane claude` on the fake replaying `transcript`, from `command` (alone, or in a world),
/// until the fake has its reply: the deny message it read. The session is then stopped (a
/// window of its own, or the inbox's, stays until then).
fn claude_reply(mut command: Command, dir: &Path, transcript: &Path) -> (String, Ran) {
    let report = dir.join("report.json");
    command.env("FAKE_CLAUDE_TRANSCRIPT", transcript).env("FAKE_CLAUDE_REPORT", &report);
    let claude = Client::spawn(command, "");
    // initialize, the prompt, the reply to the question, and what follows it.
    let message = reply_message(&report_after(&report, 4));
    send_signal(claude.pid(), "TERM");
    (message, claude.finish())
}

fn claude_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [&["claude", "--claude-bin", FAKE, "-p", PROMPT][..], extra].concat()
}

#[test]
fn claude_alone_answers_unavailable_to_answers_that_do_not_fit() {
    let dir = scratch_dir("policy-claude-alone");
    let wrong = wrong_answers(&dir);
    for submit in [&[][..], &["--submit"][..]] {
        let args = claude_args(&[&["--answers", &wrong][..], submit].concat());
        let report = dir.join("report.json");
        let mut command = alone(&dir, &args);
        command.env("FAKE_CLAUDE_TRANSCRIPT", deny_transcript()).env("FAKE_CLAUDE_REPORT", &report);
        // Alone, the run ends with the prompt's turn.
        let stderr = run_bounded(&mut command, None).stderr;
        let message = reply_message(&Report::read(&report));
        assert!(names_the_misfit(&message, &wrong), "{args:?}: {message}\n{stderr}");
        assert!(names_the_misfit(&stderr, &wrong), "{args:?}: the terminal is told\n{stderr}");
    }
}

#[test]
fn claude_in_a_window_of_its_own_answers_unavailable_to_answers_that_do_not_fit() {
    let world = World::new("policy-claude-window");
    let wrong = wrong_answers(&world.root);
    // --timeout bounds the wait should the question be shown instead.
    let args = claude_args(&["--no-inbox", "--timeout", "2", "--answers", &wrong]);
    let (message, (_, _, stderr)) =
        claude_reply(world.askpane(&args), &world.root, &deny_transcript());
    assert!(names_the_misfit(&message, &wrong), "{message}\n{stderr}");
}

#[test]
fn claude_under_the_inbox_answers_unavailable_to_answers_that_do_not_fit() {
    let world = World::with_inbox("policy-claude-inbox");
    let wrong = wrong_answers(&world.root);
    let args = claude_args(&["--timeout", "2", "--answers", &wrong]);
    let mut command = world.askpane(&args);
    command.env_remove("DISPLAY");
    let (message, (code, _, stderr)) = claude_reply(command, &world.root, &deny_transcript());
    assert!(names_the_misfit(&message, &wrong), "{message}\n{stderr}");
    assert!(stderr.contains("are in the inbox"), "{stderr}");
    assert_eq!(code, Some(4), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// `askpane codex` (the real Codex CLI)

/// What Codex's model read for its first question.
fn codex_first_answer(read: &Value) -> String {
    read["answers"]["db_choice"]["answers"][0].as_str().unwrap_or_default().to_owned()
}

/// `askpane codex` from `command` until its model has read the reply, then stopped.
fn codex_reply(command: Command, model: &FakeModel) -> (Value, Ran) {
    let codex = Client::spawn(command, "");
    let read = model_read_json(model);
    send_signal(codex.pid(), "TERM");
    (read, codex.finish())
}

#[test]
fn codex_alone_answers_unavailable_to_answers_that_do_not_fit() {
    let model = FakeModel::start("policy-codex-alone", &[], "");
    let wrong = wrong_answers(&model.root);
    let prompt = crate::codex::PROMPT;
    let mut command = host_command(&model, &["codex", "-p", prompt, "--answers", &wrong]);
    command.env("XDG_RUNTIME_DIR", scratch_dir("policy-codex-alone-run"));
    let finished = run_bounded(&mut command, None);
    let read = model_read_json(&model);
    let told = codex_first_answer(&read);
    assert!(names_the_misfit(&told, &wrong), "{read}\n{}", finished.stderr);
    assert!(names_the_misfit(&finished.stderr, &wrong), "{}", finished.stderr);
}

#[test]
fn codex_in_a_window_of_its_own_answers_unavailable_to_answers_that_do_not_fit() {
    let world = World::new("policy-codex-window");
    let model = FakeModel::start("policy-codex-window-model", &[], "");
    let wrong = wrong_answers(&model.root);
    let args = ["--no-inbox", "--timeout", "2", "--answers", &wrong];
    let (read, (_, _, stderr)) = codex_reply(codex_in_world(&world, &model, &args), &model);
    assert!(names_the_misfit(&codex_first_answer(&read), &wrong), "{read}\n{stderr}");
}

#[test]
fn codex_under_the_inbox_answers_unavailable_to_answers_that_do_not_fit() {
    let world = World::with_inbox("policy-codex-inbox");
    let model = FakeModel::start("policy-codex-inbox-model", &[], "");
    let wrong = wrong_answers(&model.root);
    let mut command = codex_in_world(&world, &model, &["--timeout", "2", "--answers", &wrong]);
    command.env_remove("DISPLAY");
    let (read, (code, _, stderr)) = codex_reply(command, &model);
    assert!(names_the_misfit(&codex_first_answer(&read), &wrong), "{read}\n{stderr}");
    assert_eq!(code, Some(4), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// What the flags decide is in history (issue 25): `--answers f --submit`, never shown

/// `askpane history --json` from `command` (the same store), once it lists something (the
/// process that records may still be writing): its entries, newest first.
fn history(mut command: impl FnMut() -> Command) -> Vec<Value> {
    let deadline = std::time::Instant::now() + crate::support::WAIT;
    loop {
        let finished = run_bounded(&mut command(), None);
        assert!(finished.status.success(), "history --json: {}", finished.stderr);
        let entries: Vec<Value> = finished
            .stdout
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect();
        if !entries.is_empty() || std::time::Instant::now() > deadline {
            return entries;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The one entry `entries` holds: answered, from `source`, with the reply the agent got.
fn assert_answered_entry(entries: &[Value], source: &str, reply: Option<&str>, context: &str) {
    let [entry] = entries else { panic!("one entry in history: {entries:?}\n{context}") };
    assert_eq!(entry["ended"], "answered", "{entry}\n{context}");
    assert_eq!(entry["source"], source, "{entry}\n{context}");
    if let Some(reply) = reply {
        let recorded: Value =
            serde_json::from_str(entry["reply"].as_str().unwrap_or_default()).expect("JSON");
        let sent: Value = serde_json::from_str(reply).expect("JSON");
        assert_eq!(recorded, sent, "history keeps the reply the agent read\n{context}");
    }
}

/// `--answers` that answer `session.answer-with-notes` as its captured host did.
fn notes_answers_file(dir: &Path) -> String {
    let path = dir.join("answers.json");
    std::fs::write(&path, crate::claude_host::notes_answers().to_string()).expect("write");
    path.to_str().expect("a UTF-8 path").to_owned()
}

#[test]
fn claude_alone_records_answers_it_submits_in_history() {
    let dir = scratch_dir("policy-claude-history-alone");
    let answers = notes_answers_file(&dir);
    let report = dir.join("report.json");
    let mut command = alone(&dir, &claude_args(&["--answers", &answers, "--submit"]));
    command
        .env("FAKE_CLAUDE_TRANSCRIPT", crate::claude_host::replay("answer-with-notes"))
        .env("FAKE_CLAUDE_REPORT", &report);
    let finished = run_bounded(&mut command, None);
    let report = Report::read(&report);
    let entries = history(|| alone(&dir, &["history", "--json"]));
    assert_answered_entry(&entries, "claude", Some(report.host_reply_text()), &finished.stderr);
}

#[test]
fn claude_in_a_window_of_its_own_records_answers_it_submits_in_history() {
    let world = World::new("policy-claude-history-window");
    let answers = notes_answers_file(&world.root);
    let args = claude_args(&["--no-inbox", "--answers", &answers, "--submit"]);
    let report = world.root.join("report.json");
    let mut command = world.askpane(&args);
    command
        .env("FAKE_CLAUDE_TRANSCRIPT", crate::claude_host::replay("answer-with-notes"))
        .env("FAKE_CLAUDE_REPORT", &report);
    let claude = Client::spawn(command, "");
    let reply = report_after(&report, 4).host_reply_text().to_owned();
    send_signal(claude.pid(), "TERM");
    let (_, _, stderr) = claude.finish();
    let entries = history(|| world.askpane(&["history", "--json"]));
    assert_answered_entry(&entries, "claude", Some(&reply), &stderr);
}

#[test]
fn claude_under_the_inbox_records_answers_it_submits_in_history() {
    let world = World::with_inbox("policy-claude-history-inbox");
    let answers = notes_answers_file(&world.root);
    let report = world.root.join("report.json");
    let mut command = world.askpane(&claude_args(&["--answers", &answers, "--submit"]));
    command
        .env_remove("DISPLAY")
        .env("FAKE_CLAUDE_TRANSCRIPT", crate::claude_host::replay("answer-with-notes"))
        .env("FAKE_CLAUDE_REPORT", &report);
    let claude = Client::spawn(command, "");
    let reply = report_after(&report, 4).host_reply_text().to_owned();
    let entries = history(|| world.askpane(&["history", "--json"]));
    send_signal(claude.pid(), "TERM");
    let (_, _, stderr) = claude.finish();
    assert_answered_entry(&entries, "claude", Some(&reply), &stderr);
}

/// `--answers` that answer both of Codex's questions.
fn codex_answers_file(model: &FakeModel) -> String {
    let path = model.root.join("answers.json");
    let answers =
        json!({"Which database should the service use?": "SQLite", "Name": "codex-probe"});
    std::fs::write(&path, answers.to_string()).expect("write the answers");
    path.to_str().expect("a UTF-8 path").to_owned()
}

#[test]
fn codex_alone_records_answers_it_submits_in_history() {
    let model = FakeModel::start("policy-codex-history-alone", &[], "");
    let answers = codex_answers_file(&model);
    let prompt = crate::codex::PROMPT;
    let args = ["codex", "-p", prompt, "--answers", &answers, "--submit"];
    let mut command = host_command(&model, &args);
    command.env("XDG_RUNTIME_DIR", scratch_dir("policy-codex-history-run"));
    let finished = run_bounded(&mut command, None);
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    let state = model.root.join("state");
    let entries = history(|| {
        let mut command = support::askpane(&["history", "--json"]);
        command.env("ASKPANE_STATE_DIR", &state);
        command
    });
    assert_answered_entry(&entries, "codex", None, &finished.stderr);
}

#[test]
fn codex_in_a_window_of_its_own_records_answers_it_submits_in_history() {
    let world = World::new("policy-codex-history-window");
    let model = FakeModel::start("policy-codex-history-window-model", &[], "");
    let answers = codex_answers_file(&model);
    let args = ["--no-inbox", "--answers", &answers, "--submit"];
    let (read, (_, _, stderr)) = codex_reply(codex_in_world(&world, &model, &args), &model);
    assert_eq!(codex_first_answer(&read), "SQLite", "{read}");
    let entries = history(|| world.askpane(&["history", "--json"]));
    assert_answered_entry(&entries, "codex", None, &stderr);
}

#[test]
fn codex_under_the_inbox_records_answers_it_submits_in_history() {
    let world = World::with_inbox("policy-codex-history-inbox");
    let model = FakeModel::start("policy-codex-history-inbox-model", &[], "");
    let answers = codex_answers_file(&model);
    let mut command = codex_in_world(&world, &model, &["--answers", &answers, "--submit"]);
    command.env_remove("DISPLAY");
    let codex = Client::spawn(command, "");
    let read = model_read_json(&model);
    assert_eq!(codex_first_answer(&read), "SQLite", "{read}");
    let entries = history(|| world.askpane(&["history", "--json"]));
    send_signal(codex.pid(), "TERM");
    let (_, _, stderr) = codex.finish();
    assert_answered_entry(&entries, "codex", None, &stderr);
}
