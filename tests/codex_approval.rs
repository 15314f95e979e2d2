//! Issue 26 part 5: `askpane codex-hook` given Codex 0.169.0's `PermissionRequest` hook input
//! (recorded in tests/fixtures/codex/approvals: a shell command and a patch that Codex was about
//! to ask the person to approve). The call becomes a card marked as Codex's, in the inbox
//! (`hook_approval`'s in-process inbox, whose window is the test), and each decision is printed
//! exactly as the recorded hook printed it when Codex honoured it; where nobody decides, nothing
//! is printed and the exit code is 0, so Codex asks in its own prompt.

use std::fs;

use askpane::protocol::permission::ApprovalOrigin;
use askpane::protocol::stream::PermissionDecision;
use serde_json::{Value, json};

use crate::hook_approval::{Inbox, finished};
use crate::support::{askpane, run_bounded};

const RUNS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/codex/approvals/runs");

/// What the recorded hook was given (`stdin`) or printed (`stdout`) for the run's
/// `PermissionRequest`.
fn recorded(run: &str, field: &str) -> Value {
    let path = format!("{RUNS}/{run}/hooklog/hook_calls.jsonl");
    let text = fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let calls = text.lines().map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"));
    let mut calls = calls;
    let call = calls
        .find(|call| call["stdin"]["hook_event_name"] == "PermissionRequest")
        .unwrap_or_else(|| panic!("{path}: no PermissionRequest"));
    call[field].clone()
}

fn stdin(run: &str) -> String {
    recorded(run, "stdin").to_string()
}

#[test]
fn a_codex_approval_is_a_codex_card_and_each_decision_is_the_reply_codex_honoured() {
    let inbox = Inbox::start("codex-approval-decisions");
    // Allow: in `app-shell-perm_allow` Codex ran the command and asked nobody else.
    let hook = inbox.codex_hook(&[], stdin("app-shell-observe-decline"));
    let card = inbox.card();
    assert_eq!(card.provenance.source, "codex-hook");
    assert_eq!(card.provenance.agent(), "Codex (hook)");
    assert_eq!(card.provenance.project.as_deref(), Some("work"));
    assert_eq!(card.request.origin, ApprovalOrigin::Hook, "Codex's own prompt can take it back");
    assert_eq!(card.request.tool_name, "Bash");
    assert_eq!(card.request.input["command"], "touch made_by_tool.txt");
    assert!(card.request.suggestions.is_empty(), "Codex refuses updatedPermissions: no Always");
    card.reply.send(PermissionDecision::AllowOnce);
    let done = finished(hook);
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    let printed: Value = serde_json::from_str(&done.stdout).expect("one JSON line");
    assert_eq!(printed, recorded("app-shell-perm_allow", "stdout"));

    // Deny with a reason, for a patch: in `app-patch-perm_deny` the model read exactly it.
    let hook = inbox.codex_hook(&[], stdin("app-patch-observe-decline"));
    let card = inbox.card();
    assert_eq!(card.request.tool_name, "apply_patch");
    let message = "askpane: the user denied this: use a scratch directory instead".to_owned();
    card.reply.send(PermissionDecision::Deny { message });
    let done = finished(hook);
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    let printed: Value = serde_json::from_str(&done.stdout).expect("one JSON line");
    assert_eq!(printed, recorded("app-patch-perm_deny", "stdout"));

    // "Answer in the terminal": nothing printed, so Codex shows its own prompt.
    let hook = inbox.codex_hook(&[], stdin("app-shell-observe-decline"));
    inbox.card().reply.send(PermissionDecision::HandBack);
    let done = finished(hook);
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
}

#[test]
fn without_a_person_codex_hook_never_allows_and_exits_0() {
    let stdin = stdin("app-shell-observe-decline");
    let run = |args: &[&str]| {
        let mut command = askpane(&["codex-hook"]);
        command.args(args).env_remove("ASKPANE_NO_INBOX");
        run_bounded(&mut command, Some(&stdin))
    };
    let declined = run(&["--decline", "Use make test."]);
    assert_eq!(declined.status.code(), Some(0), "{}", declined.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&declined.stdout).expect("one JSON line"),
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "Use make test."}}})
    );
    // Nobody to ask (no inbox, no display, or --non-interactive): nothing printed, Codex asks.
    for args in [&["--non-interactive"][..], &[]] {
        let done = run(args);
        assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{args:?}");
    }
}

#[test]
fn codex_hook_says_on_stderr_that_codex_decides_never_claude_code() {
    let recorded = stdin("app-shell-observe-decline");
    let broken = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"}).to_string();
    let run = |args: &[&str], stdin: &str| {
        let mut command = askpane(&["codex-hook"]);
        command.args(args).env_remove("ASKPANE_NO_INBOX");
        run_bounded(&mut command, Some(stdin))
    };
    // Nobody to ask (--non-interactive; no inbox and no display), and an input without its
    // tool_input: each is left to Codex's own prompt, and stderr says so in Codex's name.
    for (args, input) in [
        (&["--non-interactive"][..], &recorded),
        (&[][..], &recorded),
        (&["--decline", "never"][..], &broken),
    ] {
        let done = run(args, input);
        assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{args:?}");
        assert!(!done.stderr.contains("Claude Code"), "{args:?}: {}", done.stderr);
        assert!(!done.stderr.contains("askpane hook:"), "{args:?}: {}", done.stderr);
        assert!(done.stderr.contains("askpane codex-hook: "), "{args:?}: {}", done.stderr);
        assert!(done.stderr.contains("Codex"), "{args:?}: {}", done.stderr);
    }
}

#[test]
fn a_codex_approval_decided_by_a_flag_is_recorded_as_codex_s() {
    let state = crate::support::scratch_dir("codex-hook-history");
    let mut command = askpane(&["codex-hook", "--decline", "Not here."]);
    command.env("ASKPANE_STATE_DIR", &state);
    let done = run_bounded(&mut command, Some(&stdin("app-shell-observe-decline")));
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    let mut history = askpane(&["history", "--json"]);
    history.env("ASKPANE_STATE_DIR", &state);
    let listed = run_bounded(&mut history, None);
    let entries: Vec<Value> =
        listed.stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    assert_eq!(entries.len(), 1, "{listed:?}");
    assert_eq!(entries[0]["source"], "codex-hook", "{}", entries[0]);
    assert_eq!(entries[0]["agent"], "Codex (hook)", "{}", entries[0]);
}
