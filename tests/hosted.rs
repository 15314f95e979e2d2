//! `askpane claude` under the inbox (issue 10), real processes: a scripted Claude Code
//! (tests/fake-claude) hosted by `askpane claude`, whose question goes to a running `askpane
//! inbox` and whose reply comes back from it; an inbox that dies is started again and asked
//! again; an inbox that quits ends the session with an honest reply.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::claude_host::{FAKE, PROMPT, Report};
use crate::inbox::{Client, World};
use crate::support::WAIT;

const DENY: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/session.deny.2.1.330.replay.jsonl");

/// `askpane claude` in `world` (its inbox, display and directories), replaying `transcript`.
fn hosted_claude(world: &World, transcript: &str, args: &[&str]) -> (Client, PathBuf) {
    let report = world.root.join("report.json");
    let mut all = vec!["claude", "--claude-bin", FAKE, "-p", PROMPT];
    all.extend(args);
    let mut command = world.askpane(&all);
    command.env("FAKE_CLAUDE_TRANSCRIPT", transcript).env("FAKE_CLAUDE_REPORT", &report);
    (Client::spawn(command, ""), report)
}

/// The inbox's open requests, once there are some (a new connection each time: the inbox may
/// be a new one).
fn listed(world: &World) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let requests = world.connect().list();
        if !requests.is_empty() {
            return requests;
        }
        assert!(Instant::now() < deadline, "nothing was listed in the inbox");
        thread::sleep(Duration::from_millis(100));
    }
}

/// The fake's report once it has compared `count` host lines.
fn report_after(path: &Path, count: usize) -> Report {
    let deadline = Instant::now() + WAIT;
    loop {
        if path.exists() {
            let report = Report::read(path);
            if report.comparisons().len() >= count || Instant::now() > deadline {
                return report;
            }
        }
        assert!(Instant::now() < deadline, "the fake Claude Code wrote no report");
        thread::sleep(Duration::from_millis(100));
    }
}

/// The deny message of the reply the fake received to its question.
fn reply_message(report: &Report) -> String {
    let reply = report
        .comparisons()
        .iter()
        .find(|c| c["step"].as_str().is_some_and(|step| step.ends_with("control_response")))
        .and_then(|c| c["got_text"].as_str())
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .unwrap_or_else(|| panic!("no reply to the question\n{}", report.summary()));
    reply["response"]["response"]["message"].as_str().unwrap_or_default().to_owned()
}

fn send_signal(pid: u32, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status();
    assert!(status.is_ok_and(|status| status.success()), "kill -{name} {pid}");
}

#[test]
fn a_hosted_sessions_question_is_listed_in_the_inbox_and_its_reply_goes_back_to_claude_code() {
    let world = World::with_inbox("hosted-question");
    let (claude, report) = hosted_claude(&world, DENY, &["--timeout", "2"]);
    let requests = listed(&world);
    assert_eq!(requests.len(), 1, "{requests:?}");
    let from = requests[0]["from"].as_str().unwrap_or_default();
    assert!(from.starts_with("claude · "), "{from}");
    assert_eq!(requests[0]["tool_use_id"], "toolu_fake_ask_000001");
    // The inbox decides it (--timeout travels with it) and writes the reply Claude Code reads:
    // initialize, the prompt, then the reply to the question.
    let compared = report_after(&report, 4);
    let summary = compared.summary();
    assert!(compared.comparisons().iter().all(|c| c["ok"] == true), "{summary}");
    let message = reply_message(&compared);
    assert!(message.starts_with("No response after 2s"), "{message}\n{summary}");
    // The question left the inbox; the session stays until askpane claude is stopped.
    assert!(world.connect().list().is_empty());
    send_signal(claude.pid(), "TERM");
    let (code, _, stderr) = claude.finish();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("are in the inbox"), "{stderr}");
    Report::read(&report).assert_all_ok(&stderr);
}

#[test]
fn an_inbox_that_dies_is_started_again_and_one_that_quits_ends_the_session_honestly() {
    let world = World::with_inbox("hosted-restart");
    let (claude, report) = hosted_claude(&world, DENY, &[]);
    let before = listed(&world);
    let first = world.locked_pid().expect("the inbox holds its lock");
    send_signal(first, "KILL");
    // askpane claude starts another inbox and hands it the question again.
    let deadline = Instant::now() + WAIT;
    while world.locked_pid() == Some(first) || world.locked_pid().is_none() {
        assert!(Instant::now() < deadline, "no new inbox took the lock");
        thread::sleep(Duration::from_millis(50));
    }
    let after = listed(&world);
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["tool_use_id"], before[0]["tool_use_id"]);
    assert_eq!(after[0]["from"], before[0]["from"]);
    // `--quit` is deliberate: the question hears the window closed, and the session ends.
    let mut quit = world.askpane(&["inbox", "--quit"]);
    let quitting = crate::support::run_bounded(&mut quit, None);
    assert_eq!(quitting.status.code(), Some(0), "{}", quitting.stderr);
    let (code, _, stderr) = claude.finish();
    let report = Report::read(&report);
    report.assert_all_ok(&stderr);
    assert!(reply_message(&report).contains("closed the question window"), "{}", report.summary());
    // Claude Code's own exit code: the session ended as if its window closed.
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("the inbox went away; starting it again"), "{stderr}");
}
