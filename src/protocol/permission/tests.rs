//! Approvals' vocabulary against Claude Code 2.1.332's own captures: the hook input read as a
//! card, each decision's reply compared as literal JSON with what Claude Code was given.

use serde_json::{Value, json};

use super::*;

/// A capture of 2.1.332's `PermissionRequest` hook, `stdin` or `stdout`, built in (protocol
/// code reads no files, tests included).
fn fixture(case: &str, file: &str) -> Value {
    macro_rules! captures {
        ($($case:literal),*) => {
            match (case, file) {
                $(
                    ($case, "stdin") => include_str!(concat!(
                        "../../../tests/fixtures/claude-code/2.1.332/", $case,
                        "/hooks/PermissionRequest.1.stdin.json")),
                    ($case, "stdout") => include_str!(concat!(
                        "../../../tests/fixtures/claude-code/2.1.332/", $case,
                        "/hooks/PermissionRequest.1.stdout.json")),
                )*
                _ => panic!("no capture {case} {file}"),
            }
        };
    }
    let text = captures!(
        "pr-bash-allow",
        "pr-bash-allow-rule",
        "pr-bash-allow-adddirs",
        "pr-edit-allow-setmode",
        "pr-bash-deny-message"
    );
    serde_json::from_str(text).expect("a fixture is JSON")
}

/// The input of a capture Claude Code got no reply to (nothing to compare a reply with).
fn stdin_only(case: &str) -> Value {
    let text = match case {
        "pr-bash-nodecision" => include_str!(
            "../../../tests/fixtures/claude-code/2.1.332/pr-bash-nodecision/hooks/PermissionRequest.1.stdin.json"
        ),
        "pr-mcp-nodecision" => include_str!(
            "../../../tests/fixtures/claude-code/2.1.332/pr-mcp-nodecision/hooks/PermissionRequest.1.stdin.json"
        ),
        _ => panic!("no capture {case}"),
    };
    serde_json::from_str(text).expect("a fixture is JSON")
}

fn card(case: &str) -> HookPermission {
    let stdin = match case {
        "pr-bash-nodecision" | "pr-mcp-nodecision" => stdin_only(case),
        _ => fixture(case, "stdin"),
    };
    parse_hook_permission(&stdin).expect("an approval").expect("readable")
}

#[test]
fn each_decision_replies_as_claude_code_was_answered_in_the_captures() {
    let allow = card("pr-bash-allow");
    assert_eq!(
        hook_reply(&PermissionRequest::default(), &PermissionDecision::AllowOnce),
        Some(fixture("pr-bash-allow", "stdout"))
    );
    assert_eq!(allow.request.tool_name, "Bash");
    assert_eq!(allow.request.origin, ApprovalOrigin::Hook);

    for case in ["pr-bash-allow-rule", "pr-bash-allow-adddirs", "pr-edit-allow-setmode"] {
        let request = card(case).request;
        let decision = PermissionChoice::AllowAlways { suggestion: 0 }
            .decide(&request)
            .expect("the first suggestion");
        assert_eq!(
            hook_reply(&PermissionRequest::default(), &decision),
            Some(fixture(case, "stdout")),
            "{case}"
        );
        assert_eq!(ApprovalOutcome::of(&decision), ApprovalOutcome::AllowedAlways);
    }

    let deny =
        PermissionDecision::Deny { message: "Not now: use the Makefile target instead.".into() };
    assert_eq!(
        hook_reply(&PermissionRequest::default(), &deny),
        Some(fixture("pr-bash-deny-message", "stdout"))
    );
    // Handed back: nothing is printed, and Claude Code's own dialog (or -p's policy) decides.
    assert_eq!(hook_reply(&PermissionRequest::default(), &PermissionDecision::HandBack), None);
}

#[test]
fn suggestions_are_worded_for_a_person() {
    let labels = |case: &str| -> Vec<String> {
        card(case).request.suggestions.iter().map(Suggestion::label).collect()
    };
    assert_eq!(labels("pr-bash-allow-rule"), ["Always allow `npm test *` in this project"]);
    assert_eq!(
        labels("pr-bash-nodecision"),
        ["Allow /home/dev/project for this session", "Always allow edits in this session"]
    );
    assert_eq!(labels("pr-mcp-nodecision"), ["Always allow mcp__rec__echo in this project"]);
    let session = json!({"type": "addRules", "rules": [{"toolName": "Edit"}],
        "behavior": "allow", "destination": "session"});
    let user = json!({"type": "addRules", "rules": [{"toolName": "WebFetch",
        "ruleContent": "domain:docs.rs"}], "behavior": "allow", "destination": "userSettings"});
    let labels: Vec<String> =
        parse_suggestions(Some(&json!([session, user]))).iter().map(Suggestion::label).collect();
    assert_eq!(
        labels,
        [
            "Always allow edits in this session",
            "Always allow WebFetch `domain:docs.rs` in all your projects"
        ]
    );
}

#[test]
fn hostile_or_unknown_suggestions_are_skipped_never_a_panic() {
    let kept = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
    let hostile = json!([
        null, 7, "addRules", [], {},
        {"type": "addRules", "behavior": "deny", "destination": "session",
         "rules": [{"toolName": "Bash"}]},
        {"type": "addRules", "behavior": "allow", "destination": "session", "rules": []},
        {"type": "addRules", "behavior": "allow", "destination": "session", "rules": [7]},
        {"type": "addRules", "behavior": "allow", "destination": "session",
         "rules": [{"toolName": "Bash", "ruleContent": 3}]},
        {"type": "addDirectories", "destination": "session", "directories": ["/a", 1]},
        {"type": "removeRules", "behavior": "allow", "destination": "session", "rules": []},
        {"type": "setMode", "destination": "session"},
        {"type": "setMode", "mode": "acceptEdits"},
        kept.clone(),
    ]);
    let parsed = parse_suggestions(Some(&hostile));
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed.first().map(Suggestion::raw), Some(&kept));
    assert!(parse_suggestions(Some(&json!({"type": "setMode"}))).is_empty());
    assert!(parse_suggestions(None).is_empty());
    assert_eq!(
        Suggestion::try_from(json!({"type": "removeDirectories", "destination": "session"})),
        Err(SuggestionError::NotAnAllow("removeDirectories".into()))
    );
    assert_eq!(Suggestion::try_from(json!([])), Err(SuggestionError::NotObject));
}

#[test]
fn a_suggestion_travels_as_the_json_claude_code_gave() {
    let given = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}],
        "behavior": "allow", "destination": "session", "fromANewerVersion": {"x": 1}});
    let suggestion = Suggestion::try_from(given.clone()).expect("a suggestion");
    let decision = PermissionDecision::AllowAlways { suggestion };
    let wire = serde_json::to_value(&decision).expect("serialises");
    assert_eq!(wire, json!({"behavior": "allow_always", "suggestion": given}));
    let back: PermissionDecision = serde_json::from_value(wire).expect("reads back");
    assert_eq!(back, decision);
    // A decision that names a rule askpane would not offer is no decision.
    let bad = json!({"behavior": "allow_always", "suggestion": {"type": "removeRules"}});
    assert!(serde_json::from_value::<PermissionDecision>(bad).is_err());
}

#[test]
fn a_choice_decides_only_what_the_card_offers() {
    let request = card("pr-bash-allow-rule").request;
    assert_eq!(PermissionChoice::AllowAlways { suggestion: 1 }.decide(&request), None);
    assert_eq!(PermissionChoice::HandBack.decide(&request), Some(PermissionDecision::HandBack));
    let hosted = PermissionRequest { origin: ApprovalOrigin::Hosted, ..request };
    // A hosted session has no terminal dialog to hand a call back to.
    assert_eq!(PermissionChoice::HandBack.decide(&hosted), None);
}

#[test]
fn hook_inputs_that_are_not_approvals_are_left_alone() {
    let question = json!({"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion",
        "tool_input": {"questions": []}});
    assert!(parse_hook_permission(&question).is_none());
    let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}});
    assert!(parse_hook_permission(&pre).is_none());
    assert!(parse_hook_permission(&json!([1])).is_none());
    let no_input = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"});
    assert_eq!(
        parse_hook_permission(&no_input),
        Some(Err(HookPermissionError::Missing("tool_input")))
    );
    let no_tool = json!({"hook_event_name": "PermissionRequest", "tool_input": {}});
    assert_eq!(
        parse_hook_permission(&no_tool),
        Some(Err(HookPermissionError::Missing("tool_name")))
    );
}

#[test]
fn every_outcome_kind_has_its_own_name() {
    let names: std::collections::HashSet<&str> =
        ApprovalOutcome::ALL.iter().map(|kind| kind.as_str()).collect();
    assert_eq!(names.len(), ApprovalOutcome::ALL.len());
    assert!(ApprovalOutcome::AllowedAlways.allowed());
    assert!(!ApprovalOutcome::HandedBack.allowed());
    assert!(!ApprovalOutcome::NoHuman.allowed());
}

#[test]
fn flags_never_allow_a_tool_call() {
    use crate::protocol::inbox::{Policy, Preset};
    assert_eq!(decided_by_policy(&Policy::default()), None);
    let decline = Policy { decline: Some("not today".into()), ..Policy::default() };
    assert_eq!(
        decided_by_policy(&decline),
        Some((ApprovalOutcome::Denied, PermissionDecision::Deny { message: "not today".into() }))
    );
    let preset =
        Preset { file: "a.json".into(), json: Some(json!({"Bash": "yes"})), unreadable: None };
    let nobody = [
        Policy { non_interactive: true, ..Policy::default() },
        Policy {
            unavailable: Some("askpane hook --fallback terminal".into()),
            ..Policy::default()
        },
        Policy { answers: Some(preset.clone()), submit: true, ..Policy::default() },
    ];
    for policy in nobody {
        assert_eq!(
            decided_by_policy(&policy),
            Some((ApprovalOutcome::NoHuman, PermissionDecision::HandBack)),
            "{policy:?}"
        );
    }
    // Preset answers alone still ask the person: they are for questions.
    let answers = Policy { answers: Some(preset), ..Policy::default() };
    assert_eq!(decided_by_policy(&answers), None);
    // A deadline alone asks the person too; the inbox ends it with no decision.
    assert_eq!(decided_by_policy(&Policy { timeout_secs: Some(5), ..Policy::default() }), None);
}

/// Codex 0.169.0's `PermissionRequest` input (tests/fixtures/codex/approvals) has Claude Code's
/// shape; only the field `askpane codex-hook` adds says it is Codex's, and without it the card
/// would name Claude Code. Codex sends no suggestions, so no "always" is offered.
#[test]
fn codex_input_marked_by_codex_hook_is_a_codex_card_without_suggestions() {
    let mut input = json!({"session_id": "s", "turn_id": "t", "transcript_path": null,
        "cwd": "/home/dev/run/work", "hook_event_name": "PermissionRequest", "model": "gpt-5.5",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": "touch made_by_tool.txt",
            "description": "Create the file the user asked for"}});
    let unmarked = parse_hook_permission(&input).expect("an approval").expect("readable");
    assert_eq!(unmarked.source, CLAUDE_HOOK_SOURCE);
    input[AGENT_FIELD] = json!(CODEX_AGENT);
    let marked = parse_hook_permission(&input).expect("an approval").expect("readable");
    assert_eq!(marked.source, CODEX_HOOK_SOURCE);
    assert_eq!(marked.request.tool_name, "Bash");
    assert!(marked.request.suggestions.is_empty());
    assert_eq!(marked.request.origin, ApprovalOrigin::Hook);
    // The reply is the one Codex honoured in `app-shell-perm_allow`.
    assert_eq!(
        hook_reply(&marked.request, &PermissionDecision::AllowOnce),
        Some(json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}}))
    );
}

/// One place names a hook's agent: Codex's input is marked by `askpane codex-hook`; anything
/// else (no mark, another value, a mark of the wrong type) is Claude Code's.
#[test]
fn a_hook_s_agent_is_named_once() {
    let codex = json!({AGENT_FIELD: CODEX_AGENT, "tool_name": "Bash"});
    assert_eq!(HookAgent::of_input(&codex), HookAgent::Codex);
    for input in [json!({}), json!({AGENT_FIELD: "claude"}), json!({AGENT_FIELD: 7}), json!([])] {
        assert_eq!(HookAgent::of_input(&input), HookAgent::ClaudeCode, "{input}");
    }
    assert_eq!(
        (HookAgent::Codex.name(), HookAgent::Codex.command(), HookAgent::Codex.source()),
        ("Codex", "askpane codex-hook", CODEX_HOOK_SOURCE)
    );
    assert_eq!(
        (
            HookAgent::ClaudeCode.name(),
            HookAgent::ClaudeCode.command(),
            HookAgent::ClaudeCode.source()
        ),
        ("Claude Code", "askpane hook", CLAUDE_HOOK_SOURCE)
    );
    let provenance = |source: &str| crate::protocol::origin::Provenance::new(source, None);
    let names: Vec<&str> = ["hook", "codex-hook", "codex", "opencode", "claude", "acp"]
        .into_iter()
        .map(|source| provenance(source).agent_name())
        .collect();
    // An ACP agent may be any agent (Gemini, Kimi, Claude): never named Claude by guess.
    assert_eq!(names, ["Claude", "Codex", "Codex", "OpenCode", "Claude", "The ACP agent"]);
    assert_eq!(provenance("codex-hook").agent(), "Codex (hook)");
    assert_eq!(provenance("hook").agent(), "Claude Code (hook)");
}
