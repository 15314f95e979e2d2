//! Literal tests of the ACP wire against real captures (claude-agent-acp 0.100.0 with a fake
//! model, `tests/fixtures/acp/`): what the agent sent, and what the probe client answered that
//! made the model read the README table's text.

use serde_json::{Value, json};

use super::elicitation::{self, Action, Asked, QuestionForm};
use super::form::{FieldKind, FieldValue, Form};
use super::permission::{self, OptionKind};
use super::update::{ToolStatus, Update, parse_update};
use super::{Message, StopReason, parse_message, parse_stop_reason};
use crate::protocol::answer::{Draft, Pick, build_answers};
use crate::protocol::stream::{Block, CliMessage, PermissionDecision};

const ELICIT: &str = include_str!("../../../tests/fixtures/acp/successor-elicit.acp.jsonl");
const MULTI: &str = include_str!("../../../tests/fixtures/acp/successor-multi.acp.jsonl");
const DECLINE: &str = include_str!("../../../tests/fixtures/acp/successor-decline.acp.jsonl");
const CANCEL: &str = include_str!("../../../tests/fixtures/acp/successor-cancel.acp.jsonl");
/// claude-agent-acp 0.101.0's request for the fake model's Bash call (tests/acp.rs, captured).
const BASH_PERMISSION: &str =
    include_str!("../../../tests/fixtures/acp/request_permission.bash.0.101.0.json");

/// The capture's `elicitation/create` params and the result the client answered.
fn exchange(capture: &str) -> (Value, Value) {
    let lines: Vec<Value> =
        capture.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    let asked = lines
        .iter()
        .find(|line| line["msg"]["method"] == "elicitation/create")
        .expect("an elicitation");
    let id = &asked["msg"]["id"];
    let answered = lines
        .iter()
        .find(|line| line["dir"] == "client->agent" && &line["msg"]["id"] == id)
        .expect("the answer");
    (asked["msg"]["params"].clone(), answered["msg"]["result"].clone())
}

fn questions(params: &Value) -> QuestionForm {
    match elicitation::parse(params).expect("an elicitation").asked {
        Asked::Questions(form) => form,
        other => panic!("not questions: {other:?}"),
    }
}

#[test]
fn one_question_answered_with_a_note_is_the_capture_s_accept() {
    let (params, answered) = exchange(ELICIT);
    let parsed = elicitation::parse(&params).expect("an elicitation");
    assert_eq!(parsed.tool_call_id.as_deref(), Some("toolu_01AskPaneProbe000000000001"));
    let form = questions(&params);
    let [question] = form.ask.questions() else { panic!("one question") };
    assert_eq!(question.text(), "Which database?");
    assert_eq!(question.header(), "DB");
    assert!(!question.multi_select());
    let labels: Vec<(&str, &str)> =
        question.options().iter().map(|c| (c.label(), c.description())).collect();
    assert_eq!(labels, [("PostgreSQL", "a"), ("SQLite", "b")]);
    let mut draft = Draft::default();
    draft.pick(question, Pick::Option(0));
    draft.set_notes("with pgvector please".into());
    let answers = build_answers(&form.ask, &[draft]).expect("within limits");
    let reply = elicitation::reply(Action::Accept(form.content(&answers)));
    assert_eq!(reply, answered);
    assert_eq!(
        reply,
        json!({"action": "accept", "content": {"question_0": "PostgreSQL", "question_0_custom": "with pgvector please"}})
    );
}

#[test]
fn two_questions_with_other_and_multi_select_are_the_capture_s_accept() {
    let (params, answered) = exchange(MULTI);
    let form = questions(&params);
    let [database, features] = form.ask.questions() else { panic!("two questions") };
    // Several questions: each text is its field's description, not the message.
    assert_eq!(database.text(), "Which database?");
    assert_eq!((features.text(), features.header()), ("Which features?", "Features"));
    assert!(features.multi_select());
    let mut first = Draft::default();
    first.set_other_text(database, "DuckDB".into());
    let mut second = Draft::default();
    second.pick(features, Pick::Option(0));
    second.pick(features, Pick::Option(1));
    second.set_other_text(features, "Redis, not Memcached".into());
    let answers = build_answers(&form.ask, &[first, second]).expect("within limits");
    let reply = elicitation::reply(Action::Accept(form.content(&answers)));
    assert_eq!(reply, answered);
}

#[test]
fn decline_and_cancel_are_the_capture_s_results() {
    assert_eq!(elicitation::reply(Action::Decline), exchange(DECLINE).1);
    assert_eq!(elicitation::reply(Action::Cancel), exchange(CANCEL).1);
}

#[test]
fn a_note_beside_other_is_kept_in_the_custom_text_and_unanswered_questions_are_left_out() {
    let (params, _) = exchange(MULTI);
    let form = questions(&params);
    let [database, _] = form.ask.questions() else { panic!("two questions") };
    let mut first = Draft::default();
    first.set_other_text(database, "DuckDB".into());
    first.set_notes("embedded, please".into());
    let answers = build_answers(&form.ask, &[first]).expect("within limits");
    assert_eq!(
        Value::Object(form.content(&answers)),
        json!({"question_0": "", "question_0_custom": "DuckDB\nembedded, please"})
    );
}

#[test]
fn previews_come_from_the_option_meta() {
    let params = json!({"mode": "form", "sessionId": "s", "message": "Which layout?",
        "requestedSchema": {"type": "object", "properties": {
            "question_0": {"type": "string", "title": "Layout", "oneOf": [
                {"const": "Sidebar", "title": "Sidebar", "description": "left",
                 "_meta": {"_claude/askUserQuestionOption": {"preview": "| nav | main |"}}},
                {"const": "Top", "title": "Top", "description": "bar"}]},
            "question_0_custom": {"type": "string", "title": "Other"}}}});
    let form = questions(&params);
    let [question] = form.ask.questions() else { panic!("one question") };
    assert_eq!(question.options()[0].preview(), Some("| nav | main |"));
    assert_eq!(question.options()[1].preview(), None);
}

#[test]
fn a_schema_not_shaped_like_claude_s_questions_is_a_generic_form() {
    // A gap in the numbering, a stray key, an option-less question: each is a plain form.
    for properties in [
        json!({"question_1": {"type": "string", "oneOf": [{"const": "a", "title": "a"}]}}),
        json!({"question_0": {"type": "string", "oneOf": [{"const": "a", "title": "a"}]},
               "name": {"type": "string"}}),
        json!({"question_0": {"type": "string"}}),
    ] {
        let params = json!({"mode": "form", "message": "m",
            "requestedSchema": {"type": "object", "properties": properties}});
        let parsed = elicitation::parse(&params).expect("an elicitation");
        assert!(matches!(parsed.asked, Asked::Form(_)), "{properties}");
    }
}

fn every_field() -> Form {
    let schema = json!({"type": "object", "title": "Deploy", "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
        "region": {"type": "string", "enum": ["eu", "us"], "default": "eu"},
        "tier": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}, "maxItems": 1},
        "confirm": {"type": "boolean", "default": false},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number", "maximum": 1.5}},
        "required": ["name", "replicas"]});
    Form::parse(&schema).expect("a form")
}

#[test]
fn a_generic_form_reads_every_field_type() {
    let form = every_field();
    let kinds: Vec<(&str, bool)> =
        form.fields.iter().map(|field| (field.key.as_str(), field.required)).collect();
    assert_eq!(
        kinds,
        [
            ("name", true),
            ("region", false),
            ("tier", false),
            ("tags", false),
            ("confirm", false),
            ("replicas", true),
            ("ratio", false)
        ]
    );
    assert!(matches!(form.fields[5].kind, FieldKind::Number { integer: true, .. }));
    assert!(
        matches!(&form.fields[2].kind, FieldKind::Choice { choices, .. } if choices[1].title == "Large")
    );
    assert_eq!(form.fields[1].title, "region");
    assert_eq!(
        form.defaults(),
        [
            None,
            Some(FieldValue::Text("eu".into())),
            None,
            None,
            Some(FieldValue::Boolean(false)),
            None,
            None
        ]
    );
}

#[test]
fn a_generic_form_is_validated_before_sending() {
    let form = every_field();
    let text = |value: &str| Some(FieldValue::Text(value.into()));
    let number = |value: &str| Some(FieldValue::Number(value.into()));
    // Nothing filled in: both required fields are named.
    let errors = form.content(&[]).expect_err("required fields");
    let keys: Vec<&str> = errors.iter().map(|error| error.key.as_str()).collect();
    assert_eq!(keys, ["name", "replicas"]);
    assert_eq!(errors[0].to_string(), "Name: required");
    // Every bound broken at once.
    let wrong = [
        text("x"),
        text("mars"),
        None,
        Some(FieldValue::Choices(vec!["a".into(), "b".into()])),
        None,
        number("2.5"),
        number("2"),
    ];
    let problems: Vec<String> =
        form.content(&wrong).expect_err("bounds").iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            "Name: at least 2 characters",
            "region: `mars` is not one of the choices",
            "tags: pick at most 1",
            "replicas: `2.5` is not a whole number",
            "ratio: at most 1.5",
        ]
    );
    let right = [
        text("web"),
        text("us"),
        text("l"),
        Some(FieldValue::Choices(vec!["b".into()])),
        Some(FieldValue::Boolean(true)),
        number(" 3 "),
        number("0.25"),
    ];
    assert_eq!(
        Value::Object(form.content(&right).expect("valid")),
        json!({"name": "web", "region": "us", "tier": "l", "tags": ["b"], "confirm": true,
               "replicas": 3, "ratio": 0.25})
    );
    assert!(form.content(&[text("web"), None, None, None, None, number("1e999")]).is_err());
}

#[test]
fn a_field_of_an_unknown_type_makes_the_form_unreadable() {
    let schema = json!({"type": "object", "properties": {"file": {"type": "object"}}});
    assert!(Form::parse(&schema).is_err());
    assert!(Form::parse(&json!({"type": "object"})).is_err());
}

fn bash_permission() -> Value {
    json!({"sessionId": "s", "toolCall": {"toolCallId": "toolu_1", "title": "`npm test`",
        "kind": "execute", "status": "pending", "rawInput": {"command": "npm test"},
        "_meta": {"claudeCode": {"toolName": "Bash"}}},
        "options": [
            {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            {"optionId": "x", "name": "Something new", "kind": "ask_later"}]})
}

#[test]
fn a_permission_request_is_an_approval_with_the_agent_s_options() {
    let ask = permission::parse(&bash_permission()).expect("a permission request");
    let kinds: Vec<OptionKind> = ask.options.iter().map(|option| option.kind).collect();
    assert_eq!(kinds, [OptionKind::AllowAlways, OptionKind::AllowOnce, OptionKind::RejectOnce]);
    let request = ask.to_request("acp-1".into(), Some("/work".into()));
    assert_eq!(request.tool_name, "Bash");
    assert_eq!(request.input, json!({"command": "npm test"}));
    assert_eq!(request.suggestions.len(), 1);
    let allowed = json!({"outcome": {"outcome": "selected", "optionId": "allow"}});
    assert_eq!(ask.reply(&PermissionDecision::AllowOnce), allowed);
    let always = PermissionDecision::AllowAlways { suggestion: request.suggestions[0].clone() };
    assert_eq!(
        ask.reply(&always),
        json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}})
    );
    let denied = PermissionDecision::Deny { message: "not now".into() };
    assert_eq!(
        ask.reply(&denied),
        json!({"outcome": {"outcome": "selected", "optionId": "reject"}})
    );
    assert_eq!(
        ask.reply(&PermissionDecision::HandBack),
        json!({"outcome": {"outcome": "cancelled"}})
    );
}

#[test]
fn a_permission_without_an_option_for_the_decision_is_cancelled_never_another_choice() {
    let mut params = bash_permission();
    params["options"] =
        json!([{"optionId": "allow_always", "name": "Always", "kind": "allow_always"}]);
    let ask = permission::parse(&params).expect("a permission request");
    let cancelled = json!({"outcome": {"outcome": "cancelled"}});
    assert_eq!(ask.reply(&PermissionDecision::AllowOnce), cancelled);
    assert_eq!(ask.reply(&PermissionDecision::Deny { message: String::new() }), cancelled);
    params["options"] = json!([]);
    assert!(permission::parse(&params).is_err());
}

#[test]
fn the_capture_s_lines_are_sorted_and_its_updates_read() {
    let mut tool_calls = Vec::new();
    let mut text = String::new();
    let mut stop = None;
    for line in ELICIT.lines() {
        let line: Value = serde_json::from_str(line).expect("a JSON line");
        if line["dir"] != "agent->client" {
            continue;
        }
        match parse_message(line["msg"].clone()).expect("a message") {
            Message::Notification { method, params } if method == "session/update" => {
                match parse_update(&params).1 {
                    Update::ToolCall(call) | Update::ToolCallUpdate(call) => tool_calls.push(call),
                    Update::AgentMessage(chunk) => text.push_str(&chunk),
                    _ => {}
                }
            }
            Message::Response { id, result: Ok(result) } if id == 3 => {
                stop = Some(parse_stop_reason(&result));
            }
            _ => {}
        }
    }
    assert_eq!(stop, Some(StopReason::EndTurn));
    assert!(text.contains("The user answered"), "{text}");
    assert_eq!(tool_calls[0].tool.as_deref(), Some("AskUserQuestion"));
    assert_eq!(tool_calls[0].status, Some(ToolStatus::Pending));
    assert_eq!(tool_calls.last().and_then(|call| call.status), Some(ToolStatus::Completed));
    assert!(parse_message(json!([1])).is_err());
    assert!(parse_message(json!({"id": 1})).is_err());
    let error = parse_message(json!({"id": 1, "error": {"code": -32000, "message": "auth"}}));
    assert!(matches!(error, Ok(Message::Response { result: Err(_), .. })));
}

#[test]
fn claude_agent_acp_s_bash_permission_is_a_bash_card_with_its_own_options() {
    let line: Value = serde_json::from_str(BASH_PERMISSION).expect("the capture");
    let ask = permission::parse(&line["params"]).expect("a permission request");
    let request = ask.to_request("acp:0".into(), None);
    // The toolCall names the tool (`name`), not only ACP's kind (`execute`).
    assert_eq!(request.tool_name, "Bash");
    assert_eq!(request.input["command"], "echo made > made.txt");
    let names: Vec<(&str, OptionKind)> =
        ask.options.iter().map(|option| (option.name.as_str(), option.kind)).collect();
    assert_eq!(
        names,
        [
            ("Yes", OptionKind::AllowOnce),
            ("Yes, and allow access to project/ and echo made * commands", OptionKind::AllowAlways),
            ("No", OptionKind::RejectOnce),
        ]
    );
    let denied = PermissionDecision::Deny { message: String::new() };
    assert_eq!(
        ask.reply(&denied),
        json!({"outcome": {"outcome": "selected", "optionId": "reject"}})
    );
}

#[test]
fn the_capture_s_updates_are_one_tool_use_its_result_and_one_message() {
    let mut transcript = super::transcript::Transcript::default();
    let mut messages = Vec::new();
    let mut ended = Vec::new();
    for line in ELICIT.lines() {
        let line: Value = serde_json::from_str(line).expect("a JSON line");
        if line["dir"] == "agent->client" && line["msg"]["method"] == "session/update" {
            let shown = transcript.update(parse_update(&line["msg"]["params"]).1);
            messages.extend(shown.messages);
            ended.extend(shown.ended_call);
        }
    }
    messages.extend(transcript.flush());
    let blocks: Vec<&Block> = messages
        .iter()
        .flat_map(|message| match message {
            CliMessage::Assistant { blocks } | CliMessage::User { blocks } => blocks.iter(),
            _ => [].iter(),
        })
        .collect();
    let [
        Block::ToolUse { id, name, input },
        Block::ToolResult { content, is_error, .. },
        Block::Text(text),
    ] = blocks.as_slice()
    else {
        panic!("{blocks:#?}")
    };
    // The first tool_call carried `{}`: the call is shown once, with the input that followed.
    assert_eq!(
        (id.as_str(), name.as_str()),
        ("toolu_01AskPaneProbe000000000001", "AskUserQuestion")
    );
    assert_eq!(input["questions"][0]["question"], "Which database?");
    assert!(
        content.starts_with("The user answered: \"Which database?\"=\"PostgreSQL\""),
        "{content}"
    );
    assert!(!is_error);
    assert!(text.starts_with("FAKE-MODEL: got tool_result"), "{text}");
    assert_eq!(ended, ["toolu_01AskPaneProbe000000000001"]);
}

#[test]
fn chunks_are_gathered_until_something_else_comes() {
    let mut transcript = super::transcript::Transcript::default();
    let chunk = |kind: &str, text: &str| {
        parse_update(&json!({"sessionId": "s", "update": {"sessionUpdate": kind,
            "content": {"type": "text", "text": text}}}))
        .1
    };
    assert!(transcript.update(chunk("agent_thought_chunk", "Let me ")).messages.is_empty());
    assert!(transcript.update(chunk("agent_thought_chunk", "think.")).messages.is_empty());
    let shown = transcript.update(chunk("agent_message_chunk", "Hello"));
    assert_eq!(
        shown.messages,
        [CliMessage::Assistant { blocks: vec![Block::Thinking("Let me think.".into())] }]
    );
    transcript.update(chunk("agent_message_chunk", ", world"));
    let ended = transcript.turn_ended(super::transcript::turn_result(&StopReason::EndTurn));
    assert_eq!(
        ended[0],
        CliMessage::Assistant { blocks: vec![Block::Text("Hello, world".into())] }
    );
    assert!(matches!(&ended[1], CliMessage::Result(result) if result.subtype == "success"));
}

/// A plain Deny is a rejection this once: when the agent offers only a `reject_always`, the
/// person did not choose "never", so the agent hears `cancelled` rather than that rule.
#[test]
fn a_deny_never_picks_a_reject_always_the_person_did_not_choose() {
    let params = json!({"sessionId": "s", "toolCall": {"toolCallId": "toolu_1", "title": "rm",
        "kind": "execute", "status": "pending", "rawInput": {"command": "rm -rf build"}},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "never", "name": "Never allow rm", "kind": "reject_always"}]});
    let ask = permission::parse(&params).expect("a permission request");
    let denied = PermissionDecision::Deny { message: String::new() };
    assert_eq!(ask.reply(&denied), json!({"outcome": {"outcome": "cancelled"}}));
    let request = ask.to_request("acp-1".into(), None);
    let never = PermissionDecision::DenyAlways {
        rule: request.deny_always[0].clone(),
        message: String::new(),
    };
    assert_eq!(ask.reply(&never), json!({"outcome": {"outcome": "selected", "optionId": "never"}}));
}
