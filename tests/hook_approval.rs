//! Issue 26: `askpane hook` given Claude Code 2.1.332's `PermissionRequest` for a tool other
//! than AskUserQuestion. The tool call goes to a running inbox (here the inbox's own server in
//! this process, whose window is the test: it takes the card off the channel and decides it as
//! a person's click would), and the hook prints exactly what Claude Code was given in the
//! captures; where nobody decides, it prints nothing and exits 0.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use askpane::protocol::permission::ApprovalOrigin;
use askpane::protocol::stream::PermissionDecision;
use askpane::transport::{self, ApprovalEvent, Inbound, PermissionAsk};
use crossbeam_channel::Receiver;

use crate::support::agents::{ServedInbox, json_of as json, next_event, permission_capture};
use crate::support::{Finished, askpane, run_bounded, scratch_dir};

fn capture(case: &str, file: &str) -> String {
    permission_capture(case, file)
}

/// An inbox server on a runtime directory of its own; its window is the channel.
pub(crate) struct Inbox {
    pub(crate) served: ServedInbox,
    window: Receiver<Inbound>,
}

impl Inbox {
    pub(crate) fn start(name: &str) -> Inbox {
        let (to_ui, window) = transport::memory();
        Inbox { served: ServedInbox::serve(scratch_dir(name), to_ui), window }
    }

    /// `askpane hook <args>` against this inbox, fed `stdin`, running in the background.
    fn hook(&self, args: &[&str], stdin: String) -> thread::JoinHandle<Finished> {
        self.served.run("hook", args, stdin)
    }

    /// `askpane codex-hook <args>` (Codex's hook, issue 26 part 5) against this inbox.
    pub(crate) fn codex_hook(&self, args: &[&str], stdin: String) -> thread::JoinHandle<Finished> {
        self.served.run("codex-hook", args, stdin)
    }

    /// The next card the window is given (other events are skipped).
    pub(crate) fn card(&self) -> PermissionAsk {
        next_event(&self.window, "a card", |event| match event {
            Inbound::Approval(ApprovalEvent::Permission(card)) => Some(*card),
            _ => None,
        })
    }

    /// The next card the window is told timed out (issue 26: it leaves as a withdrawn one
    /// does, and history says it timed out).
    fn timed_out(&self) -> String {
        next_event(&self.window, "a card's time-out", |event| match event {
            Inbound::Approval(ApprovalEvent::TimedOutPermission { request_id }) => Some(request_id),
            _ => None,
        })
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
