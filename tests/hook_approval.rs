//! Issue 26: `askpane hook` given Claude Code 2.1.332's `PermissionRequest` for a tool other
//! than AskUserQuestion. The tool call goes to a running inbox (here the inbox's own server in
//! this process, whose window is the test: it takes the card off the channel and decides it as
//! a person's click would), and the hook prints exactly what Claude Code was given in the
//! captures; where nobody decides, it prints nothing and exits 0.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use askpane::protocol::permission::ApprovalOrigin;
use askpane::protocol::stream::PermissionDecision;
use askpane::transport::inbox::InboxServer;
use askpane::transport::{self, ApprovalEvent, Inbound, PermissionAsk};
use crossbeam_channel::Receiver;
use serde_json::Value;

use crate::support::{Finished, WAIT, askpane, run_bounded, scratch_dir};

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code/2.1.332");

fn capture(case: &str, file: &str) -> String {
    let path = format!("{CAPTURES}/{case}/hooks/PermissionRequest.1.{file}.json");
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("not JSON ({error}): {text:?}"))
}

/// An inbox server on a runtime directory of its own; its window is the channel.
pub(crate) struct Inbox {
    pub(crate) run: PathBuf,
    server: Option<InboxServer>,
    window: Receiver<Inbound>,
}

impl Inbox {
    pub(crate) fn start(name: &str) -> Inbox {
        let run = scratch_dir(name);
        let dir = run.join("askpane");
        fs::create_dir_all(&dir).expect("the socket's directory");
        for path in [&run, &dir] {
            fs::set_permissions(path, fs::Permissions::from_mode(0o700)).expect("narrow it");
        }
        let socket = dir.join("inbox.sock");
        let listener = UnixListener::bind(&socket).expect("listen");
        let (to_ui, window) = transport::memory();
        let server = InboxServer::start(listener, socket, to_ui).expect("serve the socket");
        Inbox { run, server: Some(server), window }
    }

    /// `askpane hook <args>` against this inbox, fed `stdin`, running in the background.
    fn hook(&self, args: &[&str], stdin: String) -> thread::JoinHandle<Finished> {
        let mut command = self.command(args);
        thread::spawn(move || run_bounded(&mut command, Some(&stdin)))
    }

    /// `askpane codex-hook <args>` (Codex's hook, issue 26 part 5) against this inbox.
    pub(crate) fn codex_hook(&self, args: &[&str], stdin: String) -> thread::JoinHandle<Finished> {
        let mut command = askpane(&["codex-hook"]);
        command.args(args).env_remove("ASKPANE_NO_INBOX").env("XDG_RUNTIME_DIR", &self.run);
        thread::spawn(move || run_bounded(&mut command, Some(&stdin)))
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = askpane(&["hook"]);
        command.args(args).env_remove("ASKPANE_NO_INBOX").env("XDG_RUNTIME_DIR", &self.run);
        command
    }

    /// The next card the window is given (other events are skipped).
    pub(crate) fn card(&self) -> PermissionAsk {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.window.recv_timeout(left) {
                Ok(Inbound::Approval(ApprovalEvent::Permission(card))) => return *card,
                Ok(_) => {}
                Err(error) => panic!("no card reached the window: {error}"),
            }
        }
    }

    /// The next card the window is told timed out (issue 26: it leaves as a withdrawn one
    /// does, and history says it timed out).
    fn timed_out(&self) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.window.recv_timeout(left) {
                Ok(Inbound::Approval(ApprovalEvent::TimedOutPermission { request_id })) => {
                    return request_id;
                }
                Ok(_) => {}
                Err(error) => panic!("no card timed out: {error}"),
            }
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop();
        }
    }
}

pub(crate) fn finished(hook: thread::JoinHandle<Finished>) -> Finished {
    hook.join().expect("the hook's runner")
}

#[test]
fn each_decision_in_the_inbox_is_the_reply_claude_code_was_given() {
    let inbox = Inbox::start("hook-approval-decisions");
    for case in [
        "pr-bash-allow",
        "pr-bash-allow-rule",
        "pr-bash-allow-adddirs",
        "pr-edit-allow-setmode",
        "pr-bash-deny-message",
    ] {
        let hook = inbox.hook(&[], capture(case, "stdin"));
        let card = inbox.card();
        assert_eq!(card.request.origin, ApprovalOrigin::Hook, "{case}");
        assert_eq!(card.provenance.source, "hook", "{case}");
        assert_eq!(card.provenance.project.as_deref(), Some("project"), "{case}");
        let decision = match case {
            "pr-bash-allow" => PermissionDecision::AllowOnce,
            "pr-bash-deny-message" => PermissionDecision::Deny {
                message: "Not now: use the Makefile target instead.".to_owned(),
            },
            _ => {
                let suggestion = card.request.suggestions.first().expect("a suggestion").clone();
                PermissionDecision::AllowAlways { suggestion }
            }
        };
        card.reply.send(decision);
        let done = finished(hook);
        assert_eq!(done.status.code(), Some(0), "{case}: {}", done.stderr);
        assert_eq!(json(&done.stdout), json(&capture(case, "stdout")), "{case}: {}", done.stderr);
        assert_eq!(done.stdout.lines().count(), 1, "{case}: one line");
    }
}

#[test]
fn handed_back_withdrawn_or_timed_out_prints_nothing_and_exits_0() {
    let inbox = Inbox::start("hook-approval-nodecision");
    let stdin = capture("pr-bash-allow", "stdin");
    // "Answer in the terminal".
    let hook = inbox.hook(&[], stdin.clone());
    inbox.card().reply.send(PermissionDecision::HandBack);
    let done = finished(hook);
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);

    // --timeout runs out in the inbox: the card leaves the window, and nothing is printed.
    let started = Instant::now();
    let hook = inbox.hook(&["--timeout", "1"], stdin.clone());
    let card = inbox.card();
    assert_eq!(inbox.timed_out(), card.request.request_id);
    let done = finished(hook);
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    assert!(started.elapsed() < Duration::from_secs(1) + Duration::from_secs(5));
    // A decision after the deadline reaches nobody.
    card.reply.send(PermissionDecision::AllowOnce);

    // The window lets the card go undecided (closed): nobody allowed it.
    let hook = inbox.hook(&[], stdin);
    drop(inbox.card());
    let done = finished(hook);
    // A dropped handle says the window closed: a deny, never an allow.
    let reply = done.stdout.trim();
    assert!(
        reply.is_empty() || json(reply)["hookSpecificOutput"]["decision"]["behavior"] == "deny",
        "{reply}"
    );
}

#[test]
fn flags_decide_without_the_inbox_and_never_allow() {
    let stdin = capture("pr-bash-allow", "stdin");
    // No inbox runs, none may start (no display): the flags decide here.
    let run = |args: &[&str]| {
        let mut command = askpane(&["hook"]);
        command.args(args).env_remove("ASKPANE_NO_INBOX");
        run_bounded(&mut command, Some(&stdin))
    };
    let declined = run(&["--decline", "Use make test."]);
    assert_eq!(declined.status.code(), Some(0), "{}", declined.stderr);
    assert_eq!(
        json(&declined.stdout),
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "Use make test."}}})
    );
    for args in [&["--non-interactive"][..], &["--fallback", "terminal"]] {
        let done = run(args);
        assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{args:?}");
    }
    // --answers is for questions: with --submit nobody is asked, so nobody allows the call.
    let answers = scratch_dir("hook-approval-answers").join("answers.json");
    fs::write(&answers, r#"{"Bash": "allow"}"#).expect("write answers");
    let answers = answers.to_string_lossy().into_owned();
    let done = run(&["--answers", &answers, "--submit"]);
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    // No display and no inbox: nobody to ask, nothing printed (Claude Code's dialog decides).
    let done = run(&[]);
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    let mut no_inbox = askpane(&["hook", "--timeout", "1"]);
    let done = run_bounded(&mut no_inbox, Some(&stdin));
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
}

#[test]
fn a_broken_or_hostile_permission_request_is_left_to_claude_code_saying_why() {
    let run = |stdin: &str| {
        let mut command = askpane(&["hook", "--decline", "never"]);
        run_bounded(&mut command, Some(stdin))
    };
    // Without its input: nothing printed (no decision anybody made), exit 0, why on stderr.
    let missing = serde_json::json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"});
    let done = run(&missing.to_string());
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    assert!(done.stderr.contains("tool_input"), "{}", done.stderr);
    let missing = serde_json::json!({"hook_event_name": "PermissionRequest", "tool_input": {}});
    let done = run(&missing.to_string());
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    assert!(done.stderr.contains("tool_name"), "{}", done.stderr);
    // Hostile suggestions (wrong types, a deny rule, 100 KB of Japanese) are skipped or read,
    // never a panic: the flag's one reply still comes, exactly once.
    let hostile = serde_json::json!({
        "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "日本語".repeat(12_000)},
        "permission_suggestions": [7, {"type": "addRules", "behavior": "deny"}, null,
            {"type": "setMode", "mode": ["x"]}, "\u{202e}"]
    });
    let done = run(&hostile.to_string());
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert_eq!(done.stdout.lines().count(), 1, "{}", done.stdout);
    assert_eq!(json(&done.stdout)["hookSpecificOutput"]["decision"]["message"], "never");
}

#[test]
fn flags_that_decide_are_applied_by_a_running_inbox_too() {
    let inbox = Inbox::start("hook-approval-inbox-flags");
    let stdin = capture("pr-bash-allow", "stdin");
    let declined = finished(inbox.hook(&["--decline", "No."], stdin.clone()));
    assert_eq!(
        json(&declined.stdout)["hookSpecificOutput"]["decision"],
        serde_json::json!({"behavior": "deny", "message": "No."})
    );
    let nobody = finished(inbox.hook(&["--non-interactive"], stdin));
    assert_eq!((nobody.status.code(), nobody.stdout.as_str()), (Some(0), ""));
    assert!(inbox.window.try_recv().is_err(), "no card was shown");
}
