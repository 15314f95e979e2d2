//! The protocol core against the wire: every reply askpane renders is compared, as literal JSON and
//! byte for byte, with what the real Claude Code host, TS SDK or hook sent (tests/fixtures), and
//! every tool_result text with what the real CLI then gave the model.
//!
//! Where those scripted hosts and Claude Code's own terminal dialog differ, askpane sends what the
//! dialog sends (protocol.md §15): `annotations` always present, and the picked option's preview
//! echoed whether or not there is a note, before it. [`as_the_dialog_sends`] turns a recorded
//! reply into that shape, so every comparison still starts from the capture.

use askpane::protocol::envelope::parse_message;
use askpane::protocol::outcome::ResultStyle;
use askpane::protocol::{
    Ask, Choice, Draft, Envelope, EnvelopeError, HookContext, HookEvent, Incoming, Outcome, Pick,
    Question, ReplyFormat, build_answers, validate,
};
use serde_json::{Value, json};

use crate::support::{
    Session, as_the_dialog_sends, assert_json_text, assert_same_json, fixture_json, fixture_lines,
};

/// The captures' tool_use id and question texts.
const TOOL_USE_ID: &str = "toolu_fake_ask_000001";
const LAYOUT: &str = "Which layout should the settings page use?";
const FEATURES: &str = "Which features do you want to enable?";
const DATABASE: &str = "どのデータベースを使いますか？";

/// Validates a tool input that must be accepted without warnings.
fn ask_of(input: &Value) -> Ask {
    let validated = validate(input).expect("the tool input is valid");
    assert!(validated.warnings.is_empty(), "unexpected warnings: {:?}", validated.warnings);
    validated.ask
}

/// Validates a tool input that carries reply keys of its own: they are left out of the echo,
/// with exactly one warning naming them.
fn ask_dropping(input: &Value, named: &str) -> Ask {
    let validated = validate(input).expect("the tool input is valid");
    let warnings: Vec<String> = validated.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [format!(
            "the request already carries {named}; askpane left them out: only the user's own \
             answers are sent"
        )]
    );
    validated.ask
}

/// Submits one draft per question of `ask`, filled in by `fill` the way the user would.
fn submit(ask: &Ask, fill: impl FnOnce(&[Question], &mut [Draft])) -> Outcome {
    let mut drafts = vec![Draft::default(); ask.questions().len()];
    fill(ask.questions(), &mut drafts);
    Outcome::Answered(build_answers(ask, &drafts).expect("the answer is within the limits"))
}

/// The captures' three questions, so the option indices picked below mean the labels named.
fn assert_capture_questions(ask: &Ask) {
    let shape: Vec<(&str, bool, Vec<&str>)> = ask
        .questions()
        .iter()
        .map(|q| (q.text(), q.multi_select(), q.options().iter().map(Choice::label).collect()))
        .collect();
    assert_eq!(
        shape,
        [
            (LAYOUT, false, vec!["Sidebar", "Tabs"]),
            (FEATURES, true, vec!["Dark mode", "Search", "Export"]),
            (DATABASE, false, vec!["PostgreSQL", "SQLite"]),
        ]
    );
}

/// Recorded in every 2.1.330/2.1.197 host-answer capture: "Sidebar", "Dark mode, Export", and
/// the free text "MySQL を Docker で動かしたい" for the database.
fn pick_sidebar_dark_mode_export_mysql(questions: &[Question], drafts: &mut [Draft]) {
    drafts[0].pick(&questions[0], Pick::Option(0)); // Sidebar
    drafts[1].pick(&questions[1], Pick::Option(0)); // Dark mode
    drafts[1].pick(&questions[1], Pick::Option(2)); // Export
    drafts[2].set_other_text(&questions[2], "MySQL を Docker で動かしたい".into());
}

/// Recorded in both hook captures: "Tabs", "Search, Export", "SQLite".
fn pick_tabs_search_export_sqlite(questions: &[Question], drafts: &mut [Draft]) {
    drafts[0].pick(&questions[0], Pick::Option(1)); // Tabs
    drafts[1].pick(&questions[1], Pick::Option(1)); // Search
    drafts[1].pick(&questions[1], Pick::Option(2)); // Export
    drafts[2].pick(&questions[2], Pick::Option(1)); // SQLite
}

/// The previews of the captures' layout options (the only question with previews).
fn layout_preview(ask: &Ask, label: &str) -> String {
    let layout = &ask.questions()[0];
    let index = layout.option_index(label).expect("a layout option");
    layout.options()[index].preview().expect("the layout options have previews").to_owned()
}

/// What the CLI then gives the model for the dialog's reply: the recorded text with the picked
/// layout's preview after its answer (the CLI's ` selected preview:\n…` piece).
fn with_layout_preview(recorded_text: &str, label: &str, preview: &str) -> String {
    let piece = format!("\"{LAYOUT}\"=\"{label}\"");
    let with_preview = format!("{piece} selected preview:\n{preview}");
    match recorded_text.contains(&with_preview) {
        true => recorded_text.to_owned(),
        false => recorded_text.replacen(&piece, &with_preview, 1),
    }
}

/// Replays a host-answer capture: the CLI's can_use_tool in, the user's recorded selections made
/// with [`Draft`], and our reply and model text compared with the host's line and the tool_result
/// (as the terminal dialog would have sent them: the picked layout's preview echoed).
fn replay_host_answer(
    file: &str,
    style: ResultStyle,
    fill: impl FnOnce(&[Question], &mut [Draft]),
) {
    let session = Session::load(file);
    let incoming =
        parse_message(&session.can_use_tool).expect("the CLI's can_use_tool is recognised");
    let request_id = session.can_use_tool["request_id"].as_str().expect("the request has an id");
    assert_eq!(
        incoming.envelope,
        Envelope::ControlRequest {
            request_id: request_id.into(),
            tool_use_id: Some(TOOL_USE_ID.into())
        }
    );
    let ask = ask_of(&incoming.input);
    assert_capture_questions(&ask);
    let outcome = submit(&ask, fill);
    let reply = incoming.envelope.reply(&outcome).expect("an answer is always sent");
    let preview = layout_preview(&ask, "Sidebar");
    let dialog = as_the_dialog_sends(&session.host_reply, &[(LAYOUT, &preview)]);
    assert_same_json(&reply, &dialog);
    let model_read = with_layout_preview(session.model_read(), "Sidebar", &preview);
    assert_eq!(outcome.model_text(style), model_read);
    assert_eq!(session.tool_result.get("is_error"), None, "an answer is not an error");
}

#[test]
fn captures_are_stream_json_host_sessions() {
    let argv = [
        "claude",
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-prompt-tool",
        "stdio",
    ];
    for file in [
        "session.answer-with-notes.2.1.330.jsonl",
        "session.answer-free-text.2.1.330.jsonl",
        "session.answer.2.1.197.jsonl",
        "session.deny.2.1.330.jsonl",
        "session.allow-without-input.2.1.330.jsonl",
    ] {
        assert_eq!(Session::load(file).argv, argv, "{file}");
    }
}

// 1. Host answers -------------------------------------------------------------------------------

#[test]
fn answer_with_notes_and_preview_equals_the_2_1_330_host_reply_and_tool_result() {
    replay_host_answer(
        "session.answer-with-notes.2.1.330.jsonl",
        ResultStyle::Current,
        |questions, drafts| {
            pick_sidebar_dark_mode_export_mysql(questions, drafts);
            drafts[0].set_notes("Keep the sidebar narrow, please.".into());
        },
    );
}

#[test]
fn answer_with_free_text_equals_the_2_1_330_host_reply_and_tool_result() {
    replay_host_answer(
        "session.answer-free-text.2.1.330.jsonl",
        ResultStyle::Current,
        pick_sidebar_dark_mode_export_mysql,
    );
}

#[test]
fn answer_with_notes_and_preview_equals_the_2_1_197_host_reply_and_legacy_tool_result() {
    replay_host_answer("session.answer.2.1.197.jsonl", ResultStyle::Legacy, |questions, drafts| {
        pick_sidebar_dark_mode_export_mysql(questions, drafts);
        drafts[0].set_notes("Keep the sidebar narrow, please.".into());
    });
}

// 2. Deny ---------------------------------------------------------------------------------------

#[test]
fn decline_equals_the_2_1_330_host_deny_and_the_model_reads_the_message_verbatim() {
    let session = Session::load("session.deny.2.1.330.jsonl");
    let incoming =
        parse_message(&session.can_use_tool).expect("the CLI's can_use_tool is recognised");
    assert_capture_questions(&ask_of(&incoming.input));
    let outcome = Outcome::Declined {
        message: "The user closed the question dialog without answering.".into(),
    };
    let reply = incoming.envelope.reply(&outcome).expect("a decline is always sent");
    assert_same_json(&reply, &session.host_reply);
    assert_eq!(outcome.model_text(ResultStyle::Current), session.model_read());
    assert_eq!(session.tool_result["is_error"], true);
}

// 3. Nothing answered ---------------------------------------------------------------------------

#[test]
fn nothing_answered_reads_as_not_answered_and_still_echoes_the_questions_with_empty_answers() {
    let session = Session::load("session.allow-without-input.2.1.330.jsonl");
    assert_eq!(session.model_read(), "The user did not answer the questions.");
    let incoming =
        parse_message(&session.can_use_tool).expect("the CLI's can_use_tool is recognised");
    let ask = ask_of(&incoming.input);
    let untouched = submit(&ask, |_, _| {});
    let blank = submit(&ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Other); // Other chosen, nothing typed
        drafts[1].set_notes("   ".into());
        drafts[2].set_other_text(&questions[2], "  ".into());
    });
    // protocol.md §5.3: 2.1.197 rejects an allow without `updatedInput`, so we always send it.
    let expected = json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": "3bf00962-e4ff-42ed-a78b-64a4ca9d305a", "response": {"behavior": "allow",
        "updatedInput": {"questions": incoming.input["questions"].clone(), "answers": {},
            "annotations": {}},
        "toolUseID": TOOL_USE_ID}}});
    for outcome in [&untouched, &blank] {
        assert_eq!(outcome.model_text(ResultStyle::Current), session.model_read());
        assert_eq!(outcome.model_text(ResultStyle::Legacy), session.model_read());
        let reply = incoming.envelope.reply(outcome).expect("an answer is always sent");
        assert_same_json(&reply, &expected);
        // Apart from `updatedInput`, it is the host's bare allow, byte for byte.
        let mut bare = reply.clone();
        bare["response"]["response"]
            .as_object_mut()
            .expect("the response is an object")
            .shift_remove("updatedInput");
        assert_same_json(&bare, &session.host_reply);
    }
}

// 4. The TS SDK's control_response --------------------------------------------------------------

#[test]
fn labels_only_answer_equals_the_ts_sdk_control_response() {
    let sdk_reply = fixture_lines("sdk.stdin.jsonl").swap_remove(2);
    let request_id = "87d434ca-92bc-4b46-bb8b-bc51a7b97bf8";
    assert_eq!(sdk_reply["response"]["request_id"], request_id);
    // Only the SDK's stdin was kept: ask the same question (input, tool_use_id) under its id.
    let mut request = Session::load("session.answer-with-notes.2.1.330.jsonl").can_use_tool;
    request["request_id"] = json!(request_id);
    let incoming = parse_message(&request).expect("the can_use_tool is recognised");
    let ask = ask_of(&incoming.input);
    assert_capture_questions(&ask);
    let outcome = submit(&ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(1)); // Tabs
        drafts[1].pick(&questions[1], Pick::Option(0)); // Dark mode
        drafts[1].pick(&questions[1], Pick::Option(1)); // Search
        drafts[2].pick(&questions[2], Pick::Option(1)); // SQLite
    });
    let reply = incoming.envelope.reply(&outcome).expect("an answer is always sent");
    let tabs = layout_preview(&ask, "Tabs");
    assert_same_json(&reply, &as_the_dialog_sends(&sdk_reply, &[(LAYOUT, &tabs)]));
    // protocol.md §7, row "labels only (sdk, hook runs)", observed with 2.1.330, with the
    // dialog's preview piece: still the "answered" ending, as a preview is no free text.
    let recorded = "Your questions have been answered: \"Which layout should the settings page use?\"=\"Tabs\", \
         \"Which features do you want to enable?\"=\"Dark mode, Search\", \
         \"どのデータベースを使いますか？\"=\"SQLite\". You can now continue with these answers in mind.";
    assert_eq!(
        outcome.model_text(ResultStyle::Current),
        with_layout_preview(recorded, "Tabs", &tabs)
    );
}

// 5. Hooks --------------------------------------------------------------------------------------

#[test]
fn pre_tool_use_answer_equals_the_captured_hook_stdout_but_for_the_reason() {
    let incoming = parse_message(&fixture_json("hook.pretooluse.stdin.json"))
        .expect("the PreToolUse stdin is recognised");
    let context = HookContext {
        session_id: Some("41013b6e-5808-48c2-81c7-c7cd59437f74".into()),
        cwd: Some("/home/dev/project".into()),
        permission_mode: Some("default".into()),
        tool_use_id: Some(TOOL_USE_ID.into()),
        agent_id: None,
        agent_type: None,
    };
    assert_eq!(incoming.envelope, Envelope::Hook { event: HookEvent::PreToolUse, context });
    let ask = ask_of(&incoming.input);
    assert_capture_questions(&ask);
    let outcome = submit(&ask, pick_tabs_search_export_sqlite);
    let reply = incoming.envelope.reply(&outcome).expect("an answer is always sent");
    assert_eq!(reply["hookSpecificOutput"]["permissionDecisionReason"], "Answered in askpane");
    let mut recorded = fixture_json("hook.pretooluse.allow.stdout.json");
    let reason = &mut recorded["hookSpecificOutput"]["permissionDecisionReason"];
    assert_eq!(*reason, "answered by hook");
    *reason = json!("Answered in askpane");
    let tabs = layout_preview(&ask, "Tabs");
    assert_same_json(&reply, &as_the_dialog_sends(&recorded, &[(LAYOUT, &tabs)]));
}

#[test]
fn permission_request_answer_equals_the_captured_hook_stdout() {
    let incoming = parse_message(&fixture_json("hook.permissionrequest.stdin.json"))
        .expect("the PermissionRequest stdin is recognised");
    let context = HookContext {
        session_id: Some("33c3696c-c839-47b2-9d82-7d4a319ac82e".into()),
        cwd: Some("/home/dev/project".into()),
        permission_mode: Some("default".into()),
        tool_use_id: None,
        agent_id: None,
        agent_type: None,
    };
    assert_eq!(incoming.envelope, Envelope::Hook { event: HookEvent::PermissionRequest, context });
    let ask = ask_of(&incoming.input);
    assert_capture_questions(&ask);
    let outcome = submit(&ask, pick_tabs_search_export_sqlite);
    let reply = incoming.envelope.reply(&outcome).expect("an answer is always sent");
    let recorded = fixture_json("hook.permissionrequest.allow.stdout.json");
    let tabs = layout_preview(&ask, "Tabs");
    assert_same_json(&reply, &as_the_dialog_sends(&recorded, &[(LAYOUT, &tabs)]));
}

#[test]
fn hooks_deny_a_decline_and_leave_an_unavailable_question_to_claude_code() {
    let pre_tool_use = parse_message(&fixture_json("hook.pretooluse.stdin.json"))
        .expect("the PreToolUse stdin is recognised")
        .envelope;
    let permission_request = parse_message(&fixture_json("hook.permissionrequest.stdin.json"))
        .expect("the PermissionRequest stdin is recognised")
        .envelope;
    let declined = Outcome::declined("use postgres");
    assert_json_text(
        &pre_tool_use.reply(&declined).expect("a decline is sent"),
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"The user declined to answer these questions and said: use postgres"}}"#,
    );
    assert_json_text(
        &permission_request.reply(&declined).expect("a decline is sent"),
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"The user declined to answer these questions and said: use postgres"}}}"#,
    );
    // No human: PreToolUse allows without updatedInput (Claude Code then asks in its own dialog);
    // PermissionRequest writes nothing.
    let unavailable = Outcome::Unavailable { reason: "no display".into() };
    assert_json_text(
        &pre_tool_use.reply(&unavailable).expect("PreToolUse always answers"),
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"askpane cannot ask here (no display); Claude Code asks instead"}}"#,
    );
    assert_eq!(permission_request.reply(&unavailable), None);
}

// 6. Envelopes ----------------------------------------------------------------------------------

fn small_input() -> Value {
    json!({"questions": [{"question": "Which database?", "header": "Database", "options": [
        {"label": "PostgreSQL", "description": "Relational."},
        {"label": "SQLite", "description": "Embedded."}], "multiSelect": false}]})
}

fn recognised(message: &Value) -> Incoming {
    parse_message(message).expect("the message is recognised")
}

fn refused(message: &Value) -> EnvelopeError {
    parse_message(message).expect_err("the message is refused")
}

#[test]
fn recognises_all_five_envelopes_and_their_reply_formats() {
    let input = small_input();

    let raw = recognised(&input);
    assert_eq!(raw, Incoming { envelope: Envelope::ToolInput, input: input.clone() });
    assert_eq!(raw.envelope.format(), ReplyFormat::ToolInput);

    let tool_use = recognised(
        &json!({"type": "tool_use", "id": "toolu_1", "name": "AskUserQuestion", "input": input}),
    );
    let envelope = Envelope::ToolUse { id: "toolu_1".into() };
    assert_eq!(tool_use, Incoming { envelope, input: input.clone() });
    assert_eq!(tool_use.envelope.format(), ReplyFormat::ToolInput);
    assert_eq!(tool_use.envelope.tool_use_id(), Some("toolu_1"));

    let session = Session::load("session.answer-with-notes.2.1.330.jsonl");
    let control = recognised(&session.can_use_tool);
    let envelope = Envelope::ControlRequest {
        request_id: "733ae786-43af-49d1-affe-83c1f5c3a8e2".into(),
        tool_use_id: Some(TOOL_USE_ID.into()),
    };
    let request_input = session.can_use_tool["request"]["input"].clone();
    assert_eq!(control, Incoming { envelope, input: request_input });
    assert_eq!(control.envelope.format(), ReplyFormat::ControlResponse);

    let pre_tool_use_stdin = fixture_json("hook.pretooluse.stdin.json");
    let pre_tool_use = recognised(&pre_tool_use_stdin);
    assert_eq!(pre_tool_use.input, pre_tool_use_stdin["tool_input"]);
    assert_eq!(pre_tool_use.envelope.format(), ReplyFormat::PreToolUse);
    assert_eq!(pre_tool_use.envelope.tool_use_id(), Some(TOOL_USE_ID));
    let context = pre_tool_use.envelope.hook_context().expect("a hook has a context");
    assert_eq!(context.project(), Some("project"));

    let permission_request_stdin = fixture_json("hook.permissionrequest.stdin.json");
    let permission_request = recognised(&permission_request_stdin);
    assert_eq!(permission_request.input, permission_request_stdin["tool_input"]);
    assert_eq!(permission_request.envelope.format(), ReplyFormat::PermissionRequest);
    assert_eq!(permission_request.envelope.tool_use_id(), None);

    let seed_web = recognised(&json!({"type": "user_question", "tool_use_id": "t1",
        "questions": input["questions"], "timestamp": 1_795_294_582_611_u64}));
    let envelope = Envelope::SeedWeb { tool_use_id: "t1".into() };
    assert_eq!(seed_web, Incoming { envelope, input });
    assert_eq!(seed_web.envelope.format(), ReplyFormat::SeedWeb);
}

#[test]
fn refuses_other_tools_other_requests_and_unknown_messages() {
    let mut hook = fixture_json("hook.pretooluse.stdin.json");
    hook["tool_name"] = json!("Bash");
    let error = refused(&hook);
    assert_eq!(error, EnvelopeError::OtherTool { envelope: "hook input", tool: "Bash".into() });
    assert_eq!(error.to_string(), "this hook input is for the tool `Bash`, not AskUserQuestion");

    let mut request = Session::load("session.deny.2.1.330.jsonl").can_use_tool;
    request["request"]["tool_name"] = json!("Bash");
    let error = refused(&request);
    assert_eq!(
        error,
        EnvelopeError::OtherTool { envelope: "control_request", tool: "Bash".into() }
    );
    assert_eq!(
        error.to_string(),
        "this control_request is for the tool `Bash`, not AskUserQuestion"
    );

    let tool_use =
        json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "ls"}});
    let error = refused(&tool_use);
    assert_eq!(error, EnvelopeError::OtherTool { envelope: "tool_use block", tool: "Bash".into() });

    // protocol.md §6: the interrupt a host may send while the dialog is open.
    let interrupt = json!({"type": "control_request", "request_id": "int_1",
        "request": {"subtype": "interrupt"}});
    let error = refused(&interrupt);
    assert_eq!(error, EnvelopeError::NotAQuestion("interrupt".into()));
    assert_eq!(
        error.to_string(),
        "the control_request subtype `interrupt` is not a question (askpane answers can_use_tool)"
    );

    let mut post_tool_use = fixture_json("hook.pretooluse.stdin.json");
    post_tool_use["hook_event_name"] = json!("PostToolUse");
    let error = refused(&post_tool_use);
    assert_eq!(error, EnvelopeError::UnsupportedHookEvent("PostToolUse".into()));
    assert_eq!(
        error.to_string(),
        "the hook event `PostToolUse` is not one askpane answers (PreToolUse or PermissionRequest)"
    );

    let error = refused(&json!([1, 2]));
    assert_eq!(error, EnvelopeError::NotObject { found: "an array" });
    assert_eq!(error.to_string(), "expected a JSON object, found an array");

    let error = refused(&json!({"foo": 1}));
    assert_eq!(error, EnvelopeError::Unrecognised);
    assert_eq!(
        error.to_string(),
        "not a message askpane understands: expected an AskUserQuestion tool input \
         ({\"questions\": …}), a tool_use block, a can_use_tool control_request, a PreToolUse or \
         PermissionRequest hook input, or a user_question message"
    );
}

// 7. Seed web reply -----------------------------------------------------------------------------

fn seed_question() -> Incoming {
    recognised(&json!({"type": "user_question", "tool_use_id": "t1", "questions": [
        {"question": "Which layout?", "header": "Layout", "multiSelect": false, "options": [
            {"label": "Sidebar", "description": "d"}, {"label": "Tabs", "description": "d"},
            {"label": "Cards", "description": "d"}]},
        {"question": "Which features?", "header": "Features", "multiSelect": true, "options": [
            {"label": "Dark mode", "description": "d"}, {"label": "Search", "description": "d"},
            {"label": "Export", "description": "d"}, {"label": "Sync", "description": "d"}]},
        {"question": "Which database?", "header": "Database", "multiSelect": false, "options": [
            {"label": "PostgreSQL", "description": "d"}, {"label": "SQLite", "description": "d"}]},
        {"question": "Which licence?", "header": "Licence", "multiSelect": false, "options": [
            {"label": "MIT", "description": "d"}, {"label": "Apache-2.0", "description": "d"}]},
    ], "timestamp": 1_795_294_582_611_u64}))
}

#[test]
fn seed_web_answers_by_option_number_from_1_and_leaves_unanswered_questions_out() {
    let incoming = seed_question();
    let outcome = submit(&ask_of(&incoming.input), |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(1)); // option 2, Tabs
        drafts[1].pick(&questions[1], Pick::Option(2)); // option 3, Export
        drafts[1].pick(&questions[1], Pick::Option(0)); // option 1, Dark mode
        drafts[2].set_other_text(&questions[2], "MySQL を Docker で動かしたい".into());
        // "Which licence?" is left unanswered.
    });
    assert_json_text(
        &incoming.envelope.reply(&outcome).expect("an answer is always sent"),
        r#"{"type":"question_answer","tool_use_id":"t1","answers":{"0":"2","1":"1,3","2":"other:MySQL を Docker で動かしたい"}}"#,
    );
}

#[test]
fn seed_web_puts_other_after_the_numbers_and_notes_in_their_own_object() {
    let incoming = seed_question();
    let outcome = submit(&ask_of(&incoming.input), |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(0));
        drafts[0].set_notes("Keep it narrow.".into());
        drafts[1].pick(&questions[1], Pick::Option(1));
        drafts[1].pick(&questions[1], Pick::Option(0));
        drafts[1].set_other_text(&questions[1], "x".into());
        drafts[3].set_notes("Either is fine.".into()); // notes only: no answer
    });
    assert_json_text(
        &incoming.envelope.reply(&outcome).expect("an answer is always sent"),
        r#"{"type":"question_answer","tool_use_id":"t1","answers":{"0":"1","1":"1,2,other:x"},"notes":{"0":"Keep it narrow.","3":"Either is fine."}}"#,
    );
}

#[test]
fn seed_web_decline_is_a_question_declined_message() {
    let incoming = seed_question();
    assert_json_text(
        &incoming.envelope.reply(&Outcome::declined("use postgres")).expect("a decline is sent"),
        r#"{"type":"question_declined","tool_use_id":"t1","outcome":"declined","message":"The user declined to answer these questions and said: use postgres"}"#,
    );
}

// 8. The raw tool input envelope ----------------------------------------------------------------

/// A raw tool input with keys askpane does not know: top level, in a question, in an option.
const RAW_INPUT: &str = r#"{"questions":[{"question":"Which database?","header":"Database","kind":"choice","options":[{"label":"PostgreSQL","description":"Relational.","id":7},{"label":"SQLite","description":"Embedded."}],"multiSelect":false},{"question":"Which features?","header":"Features","options":[{"label":"Dark mode","description":"Theme."},{"label":"Search","description":"Box."}],"multiSelect":true}],"metadata":{"source":"x"}}"#;

/// `RAW_INPUT` with `keys` (`,"key":value…`) added after its last key.
fn raw_input_with(keys: &str) -> String {
    let body = RAW_INPUT.strip_suffix('}').expect("RAW_INPUT is an object");
    format!("{body}{keys}}}")
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("test JSON parses")
}

#[test]
fn raw_input_reply_echoes_the_input_with_unknown_keys_and_adds_answers_then_annotations() {
    let incoming = recognised(&parse(RAW_INPUT));
    assert_eq!(incoming.envelope, Envelope::ToolInput);
    let ask = ask_of(&incoming.input);
    let choose = |questions: &[Question], drafts: &mut [Draft]| {
        drafts[0].pick(&questions[0], Pick::Option(1)); // SQLite
        drafts[1].pick(&questions[1], Pick::Option(0)); // Dark mode
        drafts[1].pick(&questions[1], Pick::Option(1)); // Search
    };
    let labels = submit(&ask, choose);
    assert_json_text(
        &incoming.envelope.reply(&labels).expect("an answer is always sent"),
        &raw_input_with(
            r#","answers":{"Which database?":"SQLite","Which features?":"Dark mode, Search"},"annotations":{}"#,
        ),
    );
    let with_notes = submit(&ask, |questions, drafts| {
        choose(questions, drafts);
        drafts[0].set_notes("Must run on ARM.".into());
    });
    assert_json_text(
        &incoming.envelope.reply(&with_notes).expect("an answer is always sent"),
        &raw_input_with(
            r#","answers":{"Which database?":"SQLite","Which features?":"Dark mode, Search"},"annotations":{"Which database?":{"notes":"Must run on ARM."}}"#,
        ),
    );
}

#[test]
fn raw_input_with_stale_answers_and_annotations_gets_them_replaced() {
    // The keys in the order the CLI itself writes them (questions, answers, annotations).
    let stale = raw_input_with(
        r#","answers":{"Which database?":"PostgreSQL","Old question?":"x"},"annotations":{"Which database?":{"notes":"old"}}"#,
    );
    let incoming = recognised(&parse(&stale));
    let ask = ask_dropping(&incoming.input, "`answers` and `annotations`");
    let sqlite = submit(&ask, |questions, drafts| drafts[0].pick(&questions[0], Pick::Option(1)));
    assert_json_text(
        &incoming.envelope.reply(&sqlite).expect("an answer is always sent"),
        &raw_input_with(r#","answers":{"Which database?":"SQLite"},"annotations":{}"#),
    );
    let with_notes = submit(&ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(1));
        drafts[0].set_notes("new".into());
    });
    assert_json_text(
        &incoming.envelope.reply(&with_notes).expect("an answer is always sent"),
        &raw_input_with(
            r#","answers":{"Which database?":"SQLite"},"annotations":{"Which database?":{"notes":"new"}}"#,
        ),
    );
}

#[test]
fn raw_input_keys_keep_their_order_when_stale_annotations_are_dropped() {
    // Stale `answers` and `annotations` with two unknown keys after them: both are left out of
    // the echo (issue 9), the rest keeps its order, and the user's answers (with annotations,
    // always sent, as the dialog does) come after it.
    let stale = r#"{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"d"},{"label":"B","description":"d"}],"multiSelect":false}],"answers":{"Q?":"B"},"annotations":{"Q?":{"notes":"old"}},"metadata":{"source":"x"},"extra":1}"#;
    let incoming = recognised(&parse(stale));
    let ask = ask_dropping(&incoming.input, "`answers` and `annotations`");
    let outcome = submit(&ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(0));
    });
    assert_json_text(
        &incoming.envelope.reply(&outcome).expect("an answer is always sent"),
        r#"{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"d"},{"label":"B","description":"d"}],"multiSelect":false}],"metadata":{"source":"x"},"extra":1,"answers":{"Q?":"A"},"annotations":{}}"#,
    );
    // An agent's own `response` never reaches the model as "The user responded: …": the reply to
    // an answered form carries no `response` at all.
    let with_response = r#"{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"d"},{"label":"B","description":"d"}],"multiSelect":false}],"response":"Use B.","metadata":{"source":"x"}}"#;
    let incoming = recognised(&parse(with_response));
    let validated = validate(&incoming.input).expect("valid");
    assert_eq!(validated.warnings.len(), 1, "{:?}", validated.warnings);
    let outcome = submit(&validated.ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(0));
    });
    assert_json_text(
        &incoming.envelope.reply(&outcome).expect("an answer is always sent"),
        r#"{"questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"d"},{"label":"B","description":"d"}],"multiSelect":false}],"metadata":{"source":"x"},"answers":{"Q?":"A"},"annotations":{}}"#,
    );
    assert_eq!(
        outcome.model_text(ResultStyle::Current),
        "Your questions have been answered: \"Q?\"=\"A\". You can now continue with these answers \
         in mind."
    );
}

#[test]
fn raw_input_reply_names_every_non_answer_outcome_and_its_message() {
    let cases = [
        (
            Outcome::declined(""),
            r#"{"outcome":"declined","message":"The user declined to answer these questions. Do not assume an answer; continue without it or ask in chat."}"#,
        ),
        (
            Outcome::declined("use postgres"),
            r#"{"outcome":"declined","message":"The user declined to answer these questions and said: use postgres"}"#,
        ),
        (
            Outcome::Withdrawn,
            r#"{"outcome":"withdrawn","message":"The question was withdrawn before the user answered it."}"#,
        ),
        (
            Outcome::timed_out(300),
            r#"{"outcome":"timed_out","message":"No response after 300s — the user may be away from keyboard. Proceed using your best judgment based on the context so far; you can re-ask this question later if it's still relevant."}"#,
        ),
        (
            Outcome::nothing_answered(),
            r#"{"outcome":"declined","message":"The user submitted without answering any of these questions. Do not assume an answer; continue without one or ask in chat."}"#,
        ),
        (
            Outcome::Unavailable { reason: "no display".into() },
            r#"{"outcome":"unavailable","message":"No human is available to answer questions right now (no display). Proceed with reasonable assumptions and state them clearly, or stop and report what you need decided."}"#,
        ),
        (
            Outcome::Refused { reason: "question 1: `options` is missing".into() },
            r#"{"outcome":"refused","message":"These questions could not be shown to the user because the AskUserQuestion input is invalid: question 1: `options` is missing. Fix the input and call AskUserQuestion again."}"#,
        ),
    ];
    let tool_use = Envelope::ToolUse { id: "toolu_1".into() };
    for (outcome, expected) in cases {
        assert_json_text(&Envelope::ToolInput.reply(&outcome).expect("always a reply"), expected);
        assert_json_text(&tool_use.reply(&outcome).expect("always a reply"), expected);
    }
}

#[test]
fn control_request_sends_nothing_when_withdrawn_and_denies_every_other_non_answer() {
    let session = Session::load("session.deny.2.1.330.jsonl");
    let envelope = recognised(&session.can_use_tool).envelope;
    assert_eq!(envelope.reply(&Outcome::Withdrawn), None);
    assert_json_text(
        &envelope.reply(&Outcome::timed_out(300)).expect("a deny is sent"),
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"8e4d70e6-6b21-408d-bd01-efb6685c21d2","response":{"behavior":"deny","message":"No response after 300s — the user may be away from keyboard. Proceed using your best judgment based on the context so far; you can re-ask this question later if it's still relevant.","toolUseID":"toolu_fake_ask_000001"}}}"#,
    );
}

// 9. Which ending the model reads ---------------------------------------------------------------

fn colours_and_size() -> Ask {
    ask_of(&json!({"questions": [
        {"question": "Which colours?", "header": "Colours", "multiSelect": true, "options": [
            {"label": "Red, green", "description": "d"}, {"label": "Blue", "description": "d"},
            {"label": "Say \"hi\"", "description": "d"}]},
        {"question": "Which size?", "header": "Size", "multiSelect": false, "options": [
            {"label": "Small", "description": "d"}, {"label": "Large", "description": "d"}]},
    ]}))
}

#[test]
fn labels_only_answer_reads_as_answered_even_with_a_comma_space_label() {
    let ask = colours_and_size();
    let outcome = submit(&ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(0)); // "Red, green"
        drafts[0].pick(&questions[0], Pick::Option(1)); // "Blue"
        drafts[0].pick(&questions[0], Pick::Option(2)); // "Say \"hi\""
        drafts[1].pick(&questions[1], Pick::Option(1)); // "Large"
    });
    let text = r#"Your questions have been answered: "Which colours?"=""Red, green", Blue, "Say \"hi\""", "Which size?"="Large". You can now continue with these answers in mind."#;
    assert_eq!(outcome.model_text(ResultStyle::Current), text);
    assert_eq!(outcome.model_text(ResultStyle::Legacy), text);
}

#[test]
fn other_text_or_notes_read_as_the_user_answered_read_carefully() {
    let ask = colours_and_size();
    let other = submit(&ask, |questions, drafts| {
        drafts[0].pick(&questions[0], Pick::Option(1)); // "Blue"
        drafts[0].set_other_text(&questions[0], "Teal".into());
        drafts[1].pick(&questions[1], Pick::Option(1)); // "Large"
    });
    assert_eq!(
        other.model_text(ResultStyle::Current),
        r#"The user answered: "Which colours?"="Blue, Teal", "Which size?"="Large". Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say."#
    );
    assert_eq!(
        other.model_text(ResultStyle::Legacy),
        r#"Your questions have been answered: "Which colours?"="Blue, Teal", "Which size?"="Large". You can now continue with these answers in mind."#
    );
    let notes = submit(&ask, |questions, drafts| {
        drafts[0].set_notes("No strong opinion; you choose.".into()); // notes only
        drafts[1].pick(&questions[1], Pick::Option(1)); // "Large"
        drafts[1].set_notes("Either works.".into());
    });
    assert_eq!(
        notes.model_text(ResultStyle::Current),
        r#"The user answered: "Which colours?"=(no option selected) notes: No strong opinion; you choose., "Which size?"="Large" notes: Either works.. Read the answers carefully — they may request clarification, changes, or that you not proceed — and follow what they actually say."#
    );
}

// 10. The dialog's other endings, in every envelope ----------------------------------------------

#[test]
fn chat_about_this_and_a_timeout_are_denies_the_model_reads_and_round_trip_in_the_browser() {
    let session = Session::load("session.deny.2.1.330.jsonl");
    let incoming = parse_message(&session.can_use_tool).expect("recognised");
    let ask = ask_of(&incoming.input);
    let mut drafts = vec![Draft::default(); 3];
    drafts[0].pick(&ask.questions()[0], Pick::Option(1)); // Tabs
    drafts[1].set_notes("only if cheap".into());
    let clarify = Outcome::clarify(&ask, &drafts);
    let expected = "The user wants to clarify these questions.\n    This means they may have \
        additional information, context or questions for you.\n    Take their response into \
        account and then reformulate the questions if appropriate.\n    Start by asking them what \
        they would like to clarify.\n\n    Questions asked:\n- \"Which layout should the \
        settings page use?\"\n  Answer: Tabs\n- \"Which features do you want to enable?\"\n  \
        (No answer provided)\n  User notes: only if cheap\n- \"どのデータベースを使いますか？\"\n  \
        (No answer provided)";
    assert_eq!(clarify.model_text(ResultStyle::Current), expected);
    let reply = incoming.envelope.reply(&clarify).expect("a deny");
    assert_eq!(reply["response"]["response"]["behavior"], "deny");
    assert_eq!(reply["response"]["response"]["message"], expected);
    let hook = parse_message(&fixture_json("hook.pretooluse.stdin.json")).expect("recognised");
    let hook_reply = hook.envelope.reply(&clarify).expect("a deny");
    assert_eq!(hook_reply["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(hook_reply["hookSpecificOutput"]["permissionDecisionReason"], expected);
    assert_json_text(
        &Envelope::ToolInput.reply(&clarify).expect("always a reply"),
        &serde_json::to_string(&json!({"outcome": "clarify", "message": expected}))
            .expect("serialise"),
    );

    // The browser's form of both carries the picks by number, and the bridge's rules rebuild
    // the same outcome from it.
    let web = Envelope::SeedWeb { tool_use_id: "t1".into() };
    let sent = web.reply(&clarify).expect("a message");
    assert_json_text(
        &sent,
        r#"{"type":"question_clarify","tool_use_id":"t1","answers":{"0":"2"},"notes":{"1":"only if cheap"}}"#,
    );
    let body: askpane::protocol::web::PageForm = serde_json::from_value(sent).expect("a form");
    assert_eq!(askpane::protocol::web::clarify_outcome(&ask, &body), Ok(clarify));

    let at = askpane::protocol::AtDeadline {
        finished: &drafts,
        typing: &[2],
        prefilled: &[],
        prefill: askpane::protocol::Prefill::Preset,
        waited_secs: 90,
    };
    let timed_out = Outcome::at_deadline(&ask, &at);
    let sent = web.reply(&timed_out).expect("a message");
    assert_json_text(
        &sent,
        r#"{"type":"question_timed_out","tool_use_id":"t1","answers":{"0":"2"},"notes":{"1":"only if cheap"},"typing":[2]}"#,
    );
    let body: askpane::protocol::web::PageTimedOut =
        serde_json::from_value(sent).expect("a timed out form");
    assert_eq!(askpane::protocol::web::timed_out_outcome(&ask, &body, 90), Ok(timed_out.clone()));
    let reply = incoming.envelope.reply(&timed_out).expect("a deny");
    assert_eq!(
        reply["response"]["response"]["message"],
        format!(
            "No response after 90s — the user may be away from keyboard. Proceed using \
             your best judgment based on the context so far; you can re-ask this question later \
             if it's still relevant.\n\nBefore going idle the user had selected: \"Which layout \
             should the settings page use?\"=\"Tabs\" selected preview:\n{}, \"Which features \
             do you want to enable?\"=(no option selected) notes: only if cheap. The user was \
             still typing an answer to \"どのデータベースを使いますか？\" when the time ran out; \
             what they typed was not sent.",
            ask.questions()[0].options()[1].preview().expect("Tabs has a preview")
        )
    );
}

/// A `user_question` as the JSON a page gets.
fn wire(question: askpane::protocol::web::UserQuestion) -> Value {
    serde_json::to_value(askpane::protocol::web::ToPage::<Value>::from(question)).expect("JSON")
}

// Issue 10: the page groups requests as the window does, so a question carries who asked.
#[test]
fn a_user_question_carries_who_asked_and_the_page_reads_it_back() {
    use askpane::protocol::origin::Provenance;
    use askpane::protocol::web::{QuestionExtras, question_provenance, user_question};
    let hook = json!({"hook_event_name": "PreToolUse", "session_id": "5e55-10n",
        "cwd": "/home/me/orders", "permission_mode": "plan", "tool_name": "AskUserQuestion",
        "tool_use_id": "toolu_9", "agent_id": "a1", "agent_type": "Explore",
        "tool_input": {"questions": [{"question": "Q?", "header": "Q",
            "options": [{"label": "A"}, {"label": "B"}]}]}});
    let incoming = parse_message(&hook).expect("a hook input");
    let provenance = Provenance::from_envelope("hook", &incoming.envelope);
    let ask = askpane::protocol::validate(&incoming.input).expect("valid").ask;
    let extras = QuestionExtras { provenance: provenance.clone(), ..QuestionExtras::default() };
    let message = wire(user_question("toolu_9", &ask, "2026-11-22T00:00:00Z", &extras));
    assert_eq!(message["source"], "hook · orders · plan");
    assert_eq!(
        (&message["agent"], &message["project"], &message["session"], &message["subagent"]),
        (&json!("hook"), &json!("orders"), &json!("5e55-10n"), &json!("Explore"))
    );
    assert_eq!(question_provenance(&message), provenance);
    // An older bridge's message (a label only) still names who asked.
    let label_only = json!({"type": "user_question", "source": "hook · orders"});
    assert_eq!(question_provenance(&label_only).label(), "askpane · hook · orders");
}

#[test]
fn a_user_question_names_a_reply_shape_that_is_not_its_envelopes_own() {
    // An OpenCode question in the browser: the page's decline bar and receipt say what OpenCode
    // gets, as the native window does; an ordinary question names none.
    use askpane::protocol::ReplyFormat;
    use askpane::protocol::web::{QuestionExtras, question_reply_format, user_question};
    let input = json!({"questions": [{"question": "Q?", "header": "Q",
        "options": [{"label": "A"}, {"label": "B"}]}]});
    let ask = askpane::protocol::validate(&input).expect("valid").ask;
    let plain = wire(user_question("t1", &ask, "2026-11-22T00:00:00Z", &QuestionExtras::default()));
    assert_eq!((plain.get("reply_format"), question_reply_format(&plain)), (None, None));
    let extras =
        QuestionExtras { reply_format: Some(ReplyFormat::OpenCode), ..QuestionExtras::default() };
    let opencode = wire(user_question("t2", &ask, "2026-11-22T00:00:00Z", &extras));
    assert_eq!(opencode["reply_format"], "opencode");
    assert_eq!(question_reply_format(&opencode), Some(ReplyFormat::OpenCode));
    // A name this page does not know is no shape at all, not an error.
    assert_eq!(question_reply_format(&json!({"reply_format": "carrier-pigeon"})), None);
}

#[test]
fn a_codex_question_in_the_browser_carries_codexs_request_so_the_receipt_shows_its_json() {
    // The page rebuilds Codex's envelope from `agent_request`: its receipt then says what
    // Codex's model reads (the answers' JSON), not Claude Code's "Your questions have been
    // answered" (what it said before).
    use askpane::protocol::web::{
        QuestionExtras, agent_request, question_agent_envelope, user_question,
    };
    use askpane::protocol::{Envelope, ReplyShape};
    let asked = json!({"method": "item/tool/requestUserInput", "id": 0, "params": {
        "threadId": "t", "turnId": "u", "itemId": "call_ask_1", "questions": [{"id": "db_choice",
        "header": "Database", "question": "Which database?", "isOther": true, "isSecret": false,
        "options": [{"label": "SQLite", "description": "a file"},
            {"label": "Postgres", "description": "a server"}]}]}});
    let incoming = parse_message(&asked).expect("Codex's question");
    let validated = askpane::protocol::validate(&incoming.input).expect("valid");
    let extras = QuestionExtras {
        agent_request: agent_request(&incoming.envelope),
        ..QuestionExtras::default()
    };
    let message =
        wire(user_question("call_ask_1#0", &validated.ask, "2026-11-22T00:00:00Z", &extras));
    let envelope = question_agent_envelope(&message).expect("Codex's envelope again");
    assert_eq!(envelope, incoming.envelope);
    assert_eq!(envelope.tool_use_id(), Some("call_ask_1#0"));
    let mut drafts = vec![askpane::protocol::Draft::default()];
    drafts[0].pick(&validated.ask.questions()[0], askpane::protocol::Pick::Option(0));
    let answers = askpane::protocol::build_answers(&validated.ask, &drafts).expect("fits");
    let read =
        ReplyShape::default().model_text(&envelope, &validated.ask, &Outcome::Answered(answers));
    assert_eq!(read, r#"{"answers":{"db_choice":{"answers":["SQLite"]}}}"#);
    // Any other question carries none, and a page ignores one it cannot read.
    let plain = wire(user_question(
        "t1",
        &validated.ask,
        "2026-11-22T00:00:00Z",
        &QuestionExtras::default(),
    ));
    assert_eq!((plain.get("agent_request"), question_agent_envelope(&plain)), (None, None));
    let tool_use = Envelope::ToolUse { id: "t".into() };
    assert_eq!(agent_request(&tool_use), None);
    assert_eq!(question_agent_envelope(&json!({"agent_request": {"questions": []}})), None);
}
