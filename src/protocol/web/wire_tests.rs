//! Pins the browser wire, message by message: the JSON of every kind either side sends, and what
//! a malformed or hostile page message is told. Written against the `json!` builders, before the
//! wire became serde types; only the helpers at the top changed with them, never an expected value.

use serde_json::{Value, json};

use super::*;
use crate::protocol::ReplyFormat;
use crate::protocol::history::{HistoryFilter, HistoryItem, HistoryPage, HistoryRequestError};
use crate::protocol::limits::LimitError;
use crate::protocol::origin::{Provenance, SessionKey};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::validate;

// --- helpers: the only lines that follow the API -----------------------------------------------

use super::tests::wire;

/// The page's session messages, about session `key`.
fn prompt(key: SessionKey, text: &str) -> Value {
    wire(session_prompt(key, text))
}
fn stop(key: SessionKey) -> Value {
    wire(session_stop(key))
}
fn end(key: SessionKey) -> Value {
    wire(session_end(key))
}
fn older(key: SessionKey, before: usize) -> Value {
    wire(session_older(key, before))
}
fn decision(key: SessionKey, request_id: &str, decision: &PermissionDecision) -> Value {
    wire(permission_decision(key, request_id, decision))
}

/// What the bridge makes of a page's message `value`, up to the question it names (which is
/// `ask`, open as `t`): what it would do, or the `error` the page gets back, as JSON text.
fn read(value: &Value) -> String {
    let refused = |error: BrowserError| format!("refused: {}", wire(refusal(&error, value)));
    let message = match FromPage::parse(value) {
        Ok(PageRequest::History(filter)) => return format!("history {filter:?}"),
        Ok(PageRequest::Session(key, message)) => return format!("session {key:?} {message:?}"),
        Ok(PageRequest::Question(message)) => message,
        Err(error) => return refused(error),
    };
    let ask = ask();
    // An outcome as its kind and the seed reply a page would send for it (picks by number).
    let outcome = |result: Result<Outcome, BrowserError>| match result {
        Ok(outcome) => {
            let reply = Envelope::SeedWeb { tool_use_id: "t".into() }.reply(&outcome);
            format!("{} {}", outcome.kind().as_str(), reply.unwrap_or_default())
        }
        Err(error) => refused(error),
    };
    match message {
        BrowserMessage::Answer { tool_use_id, body } => {
            format!("answer {tool_use_id}: {}", outcome(answer_outcome(&ask, &body, false)))
        }
        BrowserMessage::Clarify { tool_use_id, body } => {
            format!("clarify {tool_use_id}: {}", outcome(clarify_outcome(&ask, &body)))
        }
        BrowserMessage::TimedOut { tool_use_id, body } => {
            format!("timed out {tool_use_id}: {}", outcome(timed_out_outcome(&ask, &body, 30)))
        }
        BrowserMessage::Declined { tool_use_id, stop, message } => {
            format!("declined {tool_use_id} stop={stop} {message:?}")
        }
        BrowserMessage::Timeout { tool_use_id, change } => {
            format!("timeout {tool_use_id} {change:?}")
        }
        BrowserMessage::Seen { tool_use_id } => format!("seen {tool_use_id}"),
    }
}

// --- fixtures ----------------------------------------------------------------------------------

fn questions() -> Value {
    json!([
        {"question": "Layout?", "header": "Layout", "multiSelect": false, "options": [
            {"label": "Sidebar", "description": ""}, {"label": "Tabs", "description": ""}]},
        {"question": "Features?", "header": "Features", "multiSelect": true, "options": [
            {"label": "Dark", "description": ""}, {"label": "Search", "description": ""}]},
    ])
}

fn ask() -> Ask {
    validate(&json!({"questions": questions()})).expect("valid").ask
}

fn bash_request() -> PermissionRequest {
    PermissionRequest {
        request_id: "r1".into(),
        tool_name: "Bash".into(),
        input: json!({"command": "ls"}),
        tool_use_id: Some("toolu_1".into()),
        title: None,
        description: Some("List".into()),
        reason: None,
        agent_id: None,
        ..Default::default()
    }
}

// --- the bridge → a page -----------------------------------------------------------------------

#[test]
fn a_user_question_without_extras() {
    let message = wire(user_question("t1", &ask(), "2026-11-22T00:00:00Z", &Default::default()));
    assert_eq!(
        message,
        json!({"type": "user_question", "tool_use_id": "t1", "questions": questions(),
            "timestamp": "2026-11-22T00:00:00Z", "source": "", "warnings": [], "agent": ""})
    );
}

#[test]
fn a_user_question_with_every_extra() {
    let provenance = Provenance {
        source: "hook".into(),
        detail: Some("shop · plan".into()),
        project: Some("shop".into()),
        session: Some("s-1".into()),
        subagent: Some("Explore".into()),
        host: None,
    };
    let mut selected = Map::new();
    selected.insert("0".into(), json!("2"));
    let extras = QuestionExtras {
        provenance,
        warnings: vec!["a warning".into()],
        timeout_secs: Some(90),
        selected,
        mark_skipped: true,
        reply_format: Some(ReplyFormat::OpenCode),
        agent_request: Some(json!({"method": "item/tool/requestUserInput", "id": 0})),
    };
    let message = wire(user_question("t1", &ask(), "2026-11-22T00:00:00Z", &extras));
    assert_eq!(
        message,
        json!({"type": "user_question", "tool_use_id": "t1", "questions": questions(),
            "timestamp": "2026-11-22T00:00:00Z", "source": "hook · shop · plan",
            "warnings": ["a warning"], "agent": "hook", "project": "shop", "session": "s-1",
            "subagent": "Explore", "timeout_secs": 90, "selected": {"0": "2"},
            "mark_skipped": true, "reply_format": "opencode",
            "agent_request": {"method": "item/tool/requestUserInput", "id": 0}})
    );
    // Only the ones given: a project alone.
    let extras = QuestionExtras {
        provenance: Provenance::new("ask", None).with_project(Some("shop".into())),
        ..QuestionExtras::default()
    };
    let message = wire(user_question("t2", &ask(), "2026-11-22T00:00:00Z", &extras));
    assert_eq!(
        message,
        json!({"type": "user_question", "tool_use_id": "t2", "questions": questions(),
            "timestamp": "2026-11-22T00:00:00Z", "source": "ask", "warnings": [],
            "agent": "ask", "project": "shop"})
    );
}

#[test]
fn how_a_question_ended_and_its_countdown() {
    assert_eq!(
        wire(question_withdrawn("t1", OutcomeKind::TimedOut)),
        json!({"type": "question_withdrawn", "tool_use_id": "t1", "reason": "timed_out"})
    );
    assert_eq!(
        wire(answer_received("t1", OutcomeKind::Answered)),
        json!({"type": "answer_received", "tool_use_id": "t1", "outcome": "answered"})
    );
    assert_eq!(
        wire(timeout_changed("t1", Some(42))),
        json!({"type": "timeout_changed", "tool_use_id": "t1", "timeout_secs": 42})
    );
    assert_eq!(
        wire(timeout_changed("t1", None)),
        json!({"type": "timeout_changed", "tool_use_id": "t1", "timeout_secs": null})
    );
}

#[test]
fn errors_name_the_field_the_question_and_the_request() {
    assert_eq!(
        wire(error_message(&BrowserError::MissingId, None)),
        json!({"type": "error", "message": "no tool_use_id", "tool_use_id": null,
            "kind": "invalid"})
    );
    assert_eq!(
        wire(error_message(&BrowserError::UnknownQuestion("t9".into()), Some(&json!("t9")))),
        json!({"type": "error", "message": "no question is open with tool_use_id \"t9\"",
            "tool_use_id": "t9", "kind": "not_open"})
    );
    let long = BrowserError::Limit(LimitError::ReplyTooLong { length: 99_999 });
    assert_eq!(
        wire(error_message(&long, Some(&json!("t1")))),
        json!({"type": "error",
            "message": "the reply is 99999 characters long; the limit is 32768",
            "tool_use_id": "t1", "kind": "too_long", "field": "reply"})
    );
    let long = BrowserError::Limit(LimitError::AnswerTooLong { question: 0, length: 9000 });
    assert_eq!(
        wire(error_message(&long, Some(&json!("t1")))),
        json!({"type": "error",
            "message": "the answer to question 1 is 9000 characters long; the limit is 32768",
            "tool_use_id": "t1", "kind": "too_long", "field": "answer", "question": 0})
    );
    let history = BrowserError::History(HistoryRequestError::NotText { field: "project" });
    assert_eq!(
        wire(error_message(&history, None)),
        json!({"type": "error",
            "message": "the history filter's `project` must be a string or null",
            "tool_use_id": null, "kind": "invalid", "request": "history_request",
            "field": "project"})
    );
    let busy = BrowserError::History(HistoryRequestError::Busy);
    assert_eq!(
        wire(error_message(&busy, None)),
        json!({"type": "error",
            "message": "one history request at a time: wait for the history_page of the last one",
            "tool_use_id": null, "kind": "invalid", "request": "history_request"})
    );
    // A refusal echoes the page's tool_use_id as it was sent, and names a `session_older`.
    assert_eq!(
        wire(refusal(
            &BrowserError::MissingId,
            &json!({"type": "question_seen", "tool_use_id": 5})
        )),
        json!({"type": "error", "message": "no tool_use_id", "tool_use_id": 5, "kind": "invalid"})
    );
    assert_eq!(
        wire(refusal(&BrowserError::OlderBusy, &json!({"type": "session_older", "before": 3}))),
        json!({"type": "error", "tool_use_id": null, "kind": "invalid",
            "request": "session_older",
            "message": "the earlier entries asked for before are still on their way; ask again \
                after them"})
    );
}

#[test]
fn sessions_and_their_going() {
    assert_eq!(
        wire(session_gone(SessionKey::Hosted(3))),
        json!({"type": "session_gone", "session": 3})
    );
    assert_eq!(
        wire(sessions_open(
            [SessionKey::Hosted(3), SessionKey::Own, SessionKey::Hosted(5)].into_iter()
        )),
        json!({"type": "sessions_open", "sessions": [3, 5]})
    );
    assert_eq!(
        wire(sessions_open(std::iter::empty())),
        json!({"type": "sessions_open", "sessions": []})
    );
}

#[test]
fn permission_cards_and_their_ends() {
    let provenance =
        Provenance::new("claude", Some("shop".into())).with_project(Some("shop".into()));
    let request = json!({"request_id": "r1", "tool_name": "Bash", "input": {"command": "ls"},
        "tool_use_id": "toolu_1", "title": null, "description": "List", "reason": null,
        "agent_id": null});
    assert_eq!(
        wire(permission_request(&bash_request(), &provenance)),
        json!({"type": "permission_request", "request": request, "source": "claude · shop",
            "agent": "claude", "project": "shop"})
    );
    assert_eq!(
        wire(permission_request(&bash_request(), &Provenance::new("claude", None))),
        json!({"type": "permission_request", "request": request, "source": "claude",
            "agent": "claude"})
    );
    for (end, reason) in [
        (PermissionEnd::Allowed, "allowed"),
        (PermissionEnd::Denied, "denied"),
        (PermissionEnd::HandedBack, "handed_back"),
        (PermissionEnd::Withdrawn, "withdrawn"),
    ] {
        assert_eq!(
            wire(permission_withdrawn("r1", end)),
            json!({"type": "permission_withdrawn", "request_id": "r1", "reason": reason})
        );
    }
    assert_eq!(
        wire(permissions_open(["r1", "r2"].into_iter())),
        json!({"type": "permissions_open", "request_ids": ["r1", "r2"]})
    );
}

/// Issue 26: the card's folder and the file it changes, read where the agent runs, reach a page
/// (whose wasm app prepares the same card body from them); a card without them is unchanged.
#[test]
fn a_permission_card_carries_its_folder_and_the_file_on_disk() {
    let request = PermissionRequest {
        tool_name: "Write".into(),
        input: json!({"file_path": "/p/a.txt", "content": "b\n"}),
        cwd: Some("/p".into()),
        on_disk: Some(crate::protocol::tool_call::FileSnapshot::Text {
            path: "/p/a.txt".into(),
            text: "a\n".into(),
        }),
        ..bash_request()
    };
    let sent = wire(permission_request(&request, &Provenance::new("claude", None)));
    assert_eq!(sent["request"]["cwd"], json!("/p"));
    assert_eq!(
        sent["request"]["on_disk"],
        json!({"state": "text", "path": "/p/a.txt", "text": "a\n"})
    );
    let read: PermissionRequest =
        serde_json::from_value(sent["request"].clone()).expect("a request");
    assert_eq!(read, request);
}

#[test]
fn history_kept_and_a_history_page() {
    assert_eq!(wire(history_kept()), json!({"type": "history_kept"}));
    let page = HistoryPage {
        filter: HistoryFilter {
            search: "db".into(),
            project: None,
            source: Some("hook".into()),
            kind: None,
            before: None,
        },
        items: vec![HistoryItem {
            id: 3,
            kind: crate::protocol::history::HistoryKind::Question,
            ended_at: "2026-11-22 16:30:05 UTC".into(),
            project: Some("shop".into()),
            agent: "Claude Code (hook)".into(),
            header: "Database".into(),
            questions: vec!["Which?".into()],
            ended: "answered".into(),
            answer: "SQLite".into(),
            model_text: None,
            reply: Some("{}".into()),
        }],
        projects: vec!["shop".into()],
        agents: vec![("hook".into(), "Claude Code (hook)".into())],
        error: None,
    };
    assert_eq!(
        wire(history_page(&page)),
        json!({"type": "history_page",
            "filter": {"search": "db", "project": null, "agent": "hook"},
            "items": [{"id": 3, "kind": "question", "ended_at": "2026-11-22 16:30:05 UTC", "project": "shop",
                "agent": "Claude Code (hook)", "header": "Database", "questions": ["Which?"],
                "ended": "answered", "answer": "SQLite", "model_text": null, "reply": "{}"}],
            "projects": ["shop"], "agents": [["hook", "Claude Code (hook)"]], "error": null})
    );
}

// --- a page → the bridge -----------------------------------------------------------------------

#[test]
fn what_a_page_sends_about_a_question() {
    assert_eq!(wire(question_seen("t1")), json!({"type": "question_seen", "tool_use_id": "t1"}));
    assert_eq!(
        wire(timeout_change_message("t1", TimeoutChange::Paused)),
        json!({"type": "timeout_paused", "tool_use_id": "t1"})
    );
    assert_eq!(
        wire(timeout_change_message("t1", TimeoutChange::Extended { secs: 120 })),
        json!({"type": "timeout_extended", "tool_use_id": "t1", "secs": 120})
    );
}

#[test]
fn what_a_page_sends_about_a_session() {
    let (own, hosted) = (SessionKey::Own, SessionKey::Hosted(2));
    assert_eq!(
        decision(own, "r1", &PermissionDecision::AllowOnce),
        json!({"type": "permission_decision", "request_id": "r1", "decision": "allow"})
    );
    assert_eq!(
        decision(hosted, "r1", &PermissionDecision::Deny { message: "not that".into() }),
        json!({"type": "permission_decision", "request_id": "r1", "decision": "deny",
            "message": "not that", "session": 2})
    );
    let rule = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
    let suggestion =
        crate::protocol::permission::Suggestion::try_from(rule.clone()).expect("a suggestion");
    assert_eq!(
        decision(own, "r1", &PermissionDecision::AllowAlways { suggestion }),
        json!({"type": "permission_decision", "request_id": "r1", "decision": "allow_always",
            "suggestion": rule})
    );
    assert_eq!(
        decision(own, "r1", &PermissionDecision::HandBack),
        json!({"type": "permission_decision", "request_id": "r1", "decision": "hand_back"})
    );
    // Issue 28: a filled-in form and the agent's own deny-always travel with what they carry.
    let content = json!({"name": "web", "replicas": 3});
    let fill = PermissionDecision::Fill { content: content.as_object().cloned().expect("map") };
    assert_eq!(
        decision(own, "r1", &fill),
        json!({"type": "permission_decision", "request_id": "r1", "decision": "fill",
            "content": content})
    );
    let rule = crate::protocol::permission::DenyRule { id: "no".into(), name: "Never".into() };
    assert_eq!(
        decision(own, "r1", &PermissionDecision::DenyAlways { rule, message: "no".into() }),
        json!({"type": "permission_decision", "request_id": "r1", "decision": "deny_always",
            "message": "no", "rule": {"id": "no", "name": "Never"}})
    );
    assert_eq!(prompt(own, "go on"), json!({"type": "session_prompt", "text": "go on"}));
    assert_eq!(
        prompt(hosted, "go on"),
        json!({"type": "session_prompt", "text": "go on", "session": 2})
    );
    assert_eq!(stop(own), json!({"type": "session_stop"}));
    assert_eq!(stop(hosted), json!({"type": "session_stop", "session": 2}));
    assert_eq!(end(own), json!({"type": "session_end"}));
    assert_eq!(end(hosted), json!({"type": "session_end", "session": 2}));
    assert_eq!(older(own, 5), json!({"type": "session_older", "before": 5}));
    assert_eq!(older(hosted, 5), json!({"type": "session_older", "before": 5, "session": 2}));
}

#[test]
fn what_a_page_sends_for_its_history() {
    let filter = HistoryFilter::default();
    assert_eq!(
        wire(history_request(&filter)),
        json!({"type": "history_request", "search": "", "project": null, "agent": null})
    );
    // Byte for byte, as the page has always sent it.
    let filter =
        HistoryFilter { search: "post".into(), project: Some("shop".into()), ..Default::default() };
    assert_eq!(
        wire(history_request(&filter)).to_string(),
        r#"{"type":"history_request","search":"post","project":"shop","agent":null}"#
    );
}

/// Every refusal a page's message can get before its question is looked up, and what a
/// well-formed one becomes: the table the serde types must read the same.
#[test]
fn a_pages_messages_are_read_and_refused_as_before() {
    let long_decline = "x".repeat(8192 + 256 + 1);
    let long_search = "s".repeat(201);
    let long_name = "p".repeat(257);
    let table: Vec<(Value, &str)> = vec![
        // Not a message at all.
        (
            json!(null),
            r#"refused: {"type":"error","message":"not a JSON object","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!([1]),
            r#"refused: {"type":"error","message":"not a JSON object","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!("question_seen"),
            r#"refused: {"type":"error","message":"not a JSON object","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({}),
            r#"refused: {"type":"error","message":"unknown message type \"\" (expected question_answer, question_declined, question_clarify, question_timed_out, question_seen, timeout_paused or timeout_extended)","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": 5, "tool_use_id": "t"}),
            r#"refused: {"type":"error","message":"unknown message type \"\" (expected question_answer, question_declined, question_clarify, question_timed_out, question_seen, timeout_paused or timeout_extended)","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "bogus", "tool_use_id": "t"}),
            r#"refused: {"type":"error","message":"unknown message type \"bogus\" (expected question_answer, question_declined, question_clarify, question_timed_out, question_seen, timeout_paused or timeout_extended)","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "History_Request"}),
            r#"refused: {"type":"error","message":"unknown message type \"History_Request\" (expected question_answer, question_declined, question_clarify, question_timed_out, question_seen, timeout_paused or timeout_extended)","tool_use_id":null,"kind":"invalid"}"#,
        ),
        // question_answer.
        (
            json!({"type": "question_answer"}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": 7}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":7,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": null}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "2", "1": "1,2"}}),
            r#"answer t: answered {"type":"question_answer","tool_use_id":"t","answers":{"0":"2","1":"1,2"}}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {}}),
            r#"answer t: declined {"type":"question_declined","tool_use_id":"t","outcome":"declined","message":"The user submitted without answering any of these questions. Do not assume an answer; continue without one or ask in chat."}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t"}),
            r#"answer t: declined {"type":"question_declined","tool_use_id":"t","outcome":"declined","message":"The user submitted without answering any of these questions. Do not assume an answer; continue without one or ask in chat."}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": [1]}),
            r#"answer t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": "1"}),
            r#"answer t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": 1}}),
            r#"answer t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"5": 1}}),
            r#"answer t: refused: {"type":"error","message":"question index \"5\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"5": 1, "0": 1}}),
            r#"answer t: refused: {"type":"error","message":"question index \"5\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": 1, "5": 1}}),
            r#"answer t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "1"}, "notes": [1]}),
            r#"answer t: answered {"type":"question_answer","tool_use_id":"t","answers":{"0":"1"}}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "1"}, "notes": {"0": 5}}),
            r#"answer t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "1"}, "notes": {"9": "x"}}),
            r#"answer t: refused: {"type":"error","message":"question index \"9\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "1"}, "notes": {"1": "only if cheap"}}),
            r#"answer t: answered {"type":"question_answer","tool_use_id":"t","answers":{"0":"1"},"notes":{"1":"only if cheap"}}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "1"}, "response": 5}),
            r#"answer t: answered {"type":"question_answer","tool_use_id":"t","answers":{"0":"1"}}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "1"}, "response": "  "}),
            r#"answer t: answered {"type":"question_answer","tool_use_id":"t","answers":{"0":"1"}}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "answers": {"0": "9"}, "response": "in my words"}),
            r#"answer t: replied {"type":"question_answer","tool_use_id":"t","answers":{},"response":"in my words"}"#,
        ),
        (
            json!({"type": "question_answer", "tool_use_id": "t", "session": "x", "answers": {"0": "1"}}),
            r#"answer t: answered {"type":"question_answer","tool_use_id":"t","answers":{"0":"1"}}"#,
        ),
        // question_declined.
        (json!({"type": "question_declined", "tool_use_id": "t"}), r#"declined t stop=false """#),
        (
            json!({"type": "question_declined", "tool_use_id": "t", "outcome": 5, "message": 7}),
            r#"declined t stop=false """#,
        ),
        (
            json!({"type": "question_declined", "tool_use_id": "t", "outcome": "stopped", "message": "enough"}),
            r#"declined t stop=true "enough""#,
        ),
        (
            json!({"type": "question_declined", "tool_use_id": "t", "outcome": "answered"}),
            r#"refused: {"type":"error","message":"a decline's outcome must be declined or stopped, not \"answered\"","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_declined", "outcome": "answered"}),
            r#"refused: {"type":"error","message":"a decline's outcome must be declined or stopped, not \"answered\"","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_declined", "message": long_decline}),
            r#"refused: {"type":"error","message":"the message to the agent is 8449 characters long; the limit is 8448","tool_use_id":null,"kind":"too_long","field":"decline_message"}"#,
        ),
        (
            json!({"type": "question_declined", "outcome": null}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        // question_clarify and question_timed_out.
        (
            json!({"type": "question_clarify", "tool_use_id": "t", "answers": {"0": "2"}}),
            r#"clarify t: clarify {"type":"question_clarify","tool_use_id":"t","answers":{"0":"2"}}"#,
        ),
        (
            json!({"type": "question_clarify", "answers": {"0": "2"}}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "answers": {"0": "2"}, "typing": [1]}),
            r#"timed out t: timed_out {"type":"question_timed_out","tool_use_id":"t","answers":{"0":"2"},"typing":[1]}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "typing": [5]}),
            r#"timed out t: refused: {"type":"error","message":"question index \"5\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "typing": ["1"]}),
            r#"timed out t: refused: {"type":"error","message":"question index \"\\\"1\\\"\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "typing": [1.0]}),
            r#"timed out t: refused: {"type":"error","message":"question index \"1.0\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "typing": 3}),
            r#"timed out t: refused: {"type":"error","message":"question index \"3\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "typing": {"0": 1}}),
            r#"timed out t: refused: {"type":"error","message":"question index \"{\\\"0\\\":1}\" was not asked","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": {"from": "preset", "answers": {"1": "1"}}}),
            r#"timed out t: timed_out {"type":"question_timed_out","tool_use_id":"t","answers":{},"typing":[],"unconfirmed":{"from":"preset","answers":{"1":"1"}}}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": {"from": "saved_draft", "answers": {"1": "2"}, "notes": {"0": "n"}}}),
            r#"timed out t: timed_out {"type":"question_timed_out","tool_use_id":"t","answers":{},"typing":[],"unconfirmed":{"from":"saved_draft","answers":{"1":"2"},"notes":{"0":"n"}}}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": {"answers": {}}}),
            r#"timed out t: refused: {"type":"error","message":"`unconfirmed.from` must be preset or saved_draft, not \"\"","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": {"from": 5}}),
            r#"timed out t: refused: {"type":"error","message":"`unconfirmed.from` must be preset or saved_draft, not \"\"","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": ["preset", {"1": "1"}]}),
            r#"timed out t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": "preset"}),
            r#"timed out t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": {"from": "preset", "answers": []}}),
            r#"timed out t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "question_timed_out", "tool_use_id": "t", "unconfirmed": null}),
            r#"timed out t: refused: {"type":"error","message":"`answers` must be an object of strings","tool_use_id":"t","kind":"invalid"}"#,
        ),
        // question_seen, timeout_paused, timeout_extended.
        (json!({"type": "question_seen", "tool_use_id": "t"}), r#"seen t"#),
        (
            json!({"type": "question_seen", "tool_use_id": ["t"]}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":["t"],"kind":"invalid"}"#,
        ),
        (json!({"type": "timeout_paused", "tool_use_id": "t"}), r#"timeout t Paused"#),
        (
            json!({"type": "timeout_paused"}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 60}),
            r#"timeout t Extended { secs: 60 }"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 3600}),
            r#"timeout t Extended { secs: 3600 }"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 0}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not 0","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 3601}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not 3601","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": -5}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not -5","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 1.5}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not 1.5","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": "60"}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not \"60\"","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t"}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not nothing","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "tool_use_id": "t", "secs": null}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not null","tool_use_id":"t","kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "secs": 60}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "timeout_extended", "secs": 0}),
            r#"refused: {"type":"error","message":"`secs` must be a whole number of seconds from 1 to 3600, not 0","tool_use_id":null,"kind":"invalid"}"#,
        ),
        // permission_decision.
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow"}),
            r#"session Own Decide { request_id: "r1", decision: AllowOnce }"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "deny"}),
            r#"session Own Decide { request_id: "r1", decision: Deny { message: "" } }"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "deny", "message": 5}),
            r#"session Own Decide { request_id: "r1", decision: Deny { message: "" } }"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "deny", "message": "no", "session": 4}),
            r#"session Hosted(4) Decide { request_id: "r1", decision: Deny { message: "no" } }"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "deny", "message": long_decline}),
            r#"refused: {"type":"error","message":"the message to the agent is 8449 characters long; the limit is 8448","tool_use_id":null,"kind":"too_long","field":"decline_message"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "hand_back"}),
            r#"session Own Decide { request_id: "r1", decision: HandBack }"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow_always"}),
            r#"refused: {"type":"error","message":"an allow_always must name a rule the agent suggested, in `suggestion`","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow_always",
                "suggestion": {"type": "removeRules", "destination": "session"}}),
            r#"refused: {"type":"error","message":"an allow_always must name a rule the agent suggested, in `suggestion`","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "maybe"}),
            r#"refused: {"type":"error","message":"a permission decision must be allow, allow_always, deny or hand_back, not \"maybe\"","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": 1}),
            r#"refused: {"type":"error","message":"a permission decision must be allow, allow_always, deny or hand_back, not \"\"","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1"}),
            r#"refused: {"type":"error","message":"a permission decision must be allow, allow_always, deny or hand_back, not \"\"","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "decision": "maybe"}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": 5, "decision": "allow"}),
            r#"refused: {"type":"error","message":"no tool_use_id","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow", "session": "4"}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "session": "4"}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow", "session": null}),
            r#"session Own Decide { request_id: "r1", decision: AllowOnce }"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow", "session": -1}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "permission_decision", "request_id": "r1", "decision": "allow", "session": 1.5}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid"}"#,
        ),
        // session_prompt, session_stop, session_end, session_older.
        (json!({"type": "session_prompt", "text": "go on"}), r#"session Own Prompt("go on")"#),
        (
            json!({"type": "session_prompt", "text": "go on", "session": 3}),
            r#"session Hosted(3) Prompt("go on")"#,
        ),
        (
            json!({"type": "session_prompt", "text": "   "}),
            r#"refused: {"type":"error","message":"a prompt must have some text","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "session_prompt", "text": 5}),
            r#"refused: {"type":"error","message":"a prompt must have some text","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "session_prompt"}),
            r#"refused: {"type":"error","message":"a prompt must have some text","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (
            json!({"type": "session_prompt", "session": false}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (json!({"type": "session_stop"}), r#"session Own Stop"#),
        (json!({"type": "session_stop", "session": 3}), r#"session Hosted(3) Stop"#),
        (json!({"type": "session_end", "session": 3}), r#"session Hosted(3) End"#),
        (
            json!({"type": "session_end", "session": "x"}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid"}"#,
        ),
        (json!({"type": "session_older", "before": 5}), r#"session Own Older { before: 5 }"#),
        (
            json!({"type": "session_older", "before": 5, "session": 3}),
            r#"session Hosted(3) Older { before: 5 }"#,
        ),
        (
            json!({"type": "session_older", "before": -1}),
            r#"refused: {"type":"error","message":"`before` must be the number of a transcript entry","tool_use_id":null,"kind":"invalid","request":"session_older"}"#,
        ),
        (
            json!({"type": "session_older", "before": "5"}),
            r#"refused: {"type":"error","message":"`before` must be the number of a transcript entry","tool_use_id":null,"kind":"invalid","request":"session_older"}"#,
        ),
        (
            json!({"type": "session_older"}),
            r#"refused: {"type":"error","message":"`before` must be the number of a transcript entry","tool_use_id":null,"kind":"invalid","request":"session_older"}"#,
        ),
        (
            json!({"type": "session_older", "session": "x"}),
            r#"refused: {"type":"error","message":"`session` must be the number of a session askpane sent","tool_use_id":null,"kind":"invalid","request":"session_older"}"#,
        ),
        // history_request.
        (
            json!({"type": "history_request"}),
            r#"history HistoryFilter { search: "", project: None, source: None, kind: None, before: None }"#,
        ),
        (
            json!({"type": "history_request", "search": "db", "project": "shop", "agent": "hook"}),
            r#"history HistoryFilter { search: "db", project: Some("shop"), source: Some("hook"), kind: None, before: None }"#,
        ),
        (
            json!({"type": "history_request", "kind": "approval"}),
            r#"history HistoryFilter { search: "", project: None, source: None, kind: Some(Approval), before: None }"#,
        ),
        (
            json!({"type": "history_request", "search": null, "project": null, "agent": null}),
            r#"history HistoryFilter { search: "", project: None, source: None, kind: None, before: None }"#,
        ),
        (
            json!({"type": "history_request", "search": 5, "project": 5}),
            r#"refused: {"type":"error","message":"the history filter's `search` must be a string or null","tool_use_id":null,"kind":"invalid","request":"history_request","field":"search"}"#,
        ),
        (
            json!({"type": "history_request", "project": ["shop"]}),
            r#"refused: {"type":"error","message":"the history filter's `project` must be a string or null","tool_use_id":null,"kind":"invalid","request":"history_request","field":"project"}"#,
        ),
        (
            json!({"type": "history_request", "agent": 7}),
            r#"refused: {"type":"error","message":"the history filter's `agent` must be a string or null","tool_use_id":null,"kind":"invalid","request":"history_request","field":"agent"}"#,
        ),
        (
            json!({"type": "history_request", "search": long_search}),
            r#"refused: {"type":"error","message":"the history search is 201 characters long; askpane searches at most 200","tool_use_id":null,"kind":"too_long","request":"history_request","field":"search"}"#,
        ),
        (
            json!({"type": "history_request", "project": long_name}),
            r#"refused: {"type":"error","message":"the history filter's `project` is longer than 256 characters","tool_use_id":null,"kind":"too_long","request":"history_request","field":"project"}"#,
        ),
        (
            json!({"type": "history_request", "agent": long_name, "tool_use_id": "t"}),
            r#"refused: {"type":"error","message":"the history filter's `agent` is longer than 256 characters","tool_use_id":"t","kind":"too_long","request":"history_request","field":"agent"}"#,
        ),
    ];
    let mut wrong = Vec::new();
    for (value, expected) in &table {
        let actual = read(value);
        if actual != *expected {
            wrong.push(format!("{value}\n  read:     {actual}\n  expected: {expected}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} read otherwise:\n{}",
        wrong.len(),
        table.len(),
        wrong.join("\n")
    );
}
