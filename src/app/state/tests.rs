//! The window's state driven as the view drives it: edits, confirmations, countdowns, receipts.

use serde_json::json;

use super::*;
use crate::protocol::origin::Provenance;
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::{Draft, Pick};
use crate::protocol::{Envelope, validate};

/// A request as an adapter hands it in: its core, and no policy (the user answers).
fn request(input: serde_json::Value, envelope: Envelope) -> (Core, Policy) {
    let validated = validate(&input).expect("valid test input");
    let core = Core {
        id: RequestId::next(),
        envelope,
        ask: validated.ask,
        warnings: validated.warnings,
        provenance: Provenance::new("test", None),
        reply_shape: crate::protocol::ReplyShape::default(),
    };
    (core, Policy::default())
}

/// Admits a request at time 0, with no reply handle (tests read the outcome).
fn push(state: &mut State<()>, (core, policy): (Core, Policy)) -> Admission<()> {
    state.admit(core, policy, (), 0.0)
}

fn three_questions() -> (Core, Policy) {
    request(
        json!({"questions": [
            {"question": "Which database?", "header": "Database", "multiSelect": false, "options": [
                {"label": "PostgreSQL (Recommended)", "description": ""}, {"label": "SQLite", "description": ""}]},
            {"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": [
                {"label": "Clippy", "description": ""}, {"label": "Tests", "description": ""},
                {"label": "Miri", "description": ""}]},
            {"question": "Deploy?", "header": "Deploy", "multiSelect": false, "options": [
                {"label": "Yes", "description": ""}, {"label": "No", "description": ""}]},
        ]}),
        Envelope::ToolInput,
    )
}

fn answers_of(resolved: &Settled<()>) -> serde_json::Value {
    match &resolved.outcome {
        Outcome::Answered(answers) => serde_json::Value::Object(answers.answers_json()),
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[test]
fn keyboard_flow_answers_every_question() {
    let mut state = State::default();
    push(&mut state, three_questions());
    // Q1: cursor down to SQLite, Space. Enter → Q2.
    state.edit(Edit::MoveCursor(1));
    state.edit(Edit::PickAtCursor);
    state.edit(Edit::Advance);
    // Q2: pick 1 and 3, then Other with text.
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(2) });
    state.edit(Edit::SetOtherText { question: 1, text: "Fuzzing".into() });
    state.edit(Edit::Advance);
    state.edit(Edit::Pick { question: 2, pick: Pick::Option(0) });
    state.edit(Edit::Advance);
    assert_eq!(state.current().map(|p| p.tab), Some(Tab::Review));
    let resolved = state.edit(Edit::Advance).expect("Enter on Review submits");
    assert_eq!(
        answers_of(&resolved),
        json!({"Which database?": "SQLite", "Which checks?": "Clippy, Miri, Fuzzing", "Deploy?": "Yes"})
    );
    assert!(state.current().is_none());
    assert_eq!(state.receipt().map(|r| r.outcome_kind.as_str()), Some("answered"));
}

#[test]
fn partial_submit_asks_first_and_leaves_out_unanswered() {
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 1, pick: Pick::Other });
    assert!(state.edit(Edit::Submit).is_none(), "asks before a partial submit");
    let pending = state.current().expect("still pending");
    assert_eq!(pending.confirm, Some(Confirm::PartialSubmit { missing: vec![1, 2] }));
    assert_eq!(pending.status(1), Status::OtherBlank);
    assert_eq!(pending.status(2), Status::NotAnswered);
    let resolved = state.edit(Edit::ConfirmSubmit).expect("confirmed");
    assert_eq!(answers_of(&resolved), json!({"Which database?": "PostgreSQL (Recommended)"}));
}

#[test]
fn escape_twice_keeps_the_question_and_decline_sends_the_message() {
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::AskDecline);
    state.edit(Edit::CancelConfirm);
    let pending = state.current().expect("a stray Esc loses nothing");
    assert_eq!(pending.confirm, None);
    state.edit(Edit::AskDecline);
    state.edit(Edit::SetDeclineMessage("Use the defaults".into()));
    let resolved = state.edit(Edit::ConfirmDecline).expect("declined");
    assert_eq!(
        resolved.outcome,
        Outcome::Declined {
            message: "The user declined to answer these questions and said: Use the defaults"
                .into()
        }
    );
}

#[test]
fn drafts_survive_switching_tabs_and_requests() {
    let mut state = State::default();
    push(&mut state, three_questions());
    let second = three_questions();
    let second_id = second.0.id;
    push(&mut state, second);
    let first_id = state.current().map(|p| p.id()).expect("first is current");
    state.edit(Edit::SetOtherText { question: 0, text: "MariaDB".into() });
    state.edit(Edit::SetNotes { question: 0, text: "managed".into() });
    state.edit(Edit::NextTab);
    state.apply(Action::SelectRequest(second_id));
    state.apply(Action::SelectRequest(first_id));
    let pending = state.current().expect("first again");
    assert_eq!(pending.forms[0].draft.other_text(), "MariaDB");
    assert_eq!(pending.forms[0].draft.notes(), "managed");
    assert_eq!(pending.tab, Tab::Question(1));
}

#[test]
fn same_tool_use_id_is_shown_once_and_withdraw_keeps_typed_text() {
    let mut state = State::default();
    let envelope = Envelope::ToolUse { id: "toolu_1".into() };
    let first = request(
        json!({"questions": [{"question": "Q?", "header": "Q",
        "options": [{"label": "A"}, {"label": "B"}]}]}),
        envelope.clone(),
    );
    let first_id = first.0.id;
    let again = (Core { id: RequestId::next(), ..first.0.clone() }, first.1.clone());
    assert!(matches!(push(&mut state, first), Admission::Opened(id) if id == first_id));
    assert!(matches!(push(&mut state, again), Admission::Joined(id) if id == first_id));
    assert_eq!(state.book().len(), 1);
    state.edit(Edit::SetOtherText { question: 0, text: "C instead".into() });
    assert_eq!(state.withdraw("toolu_1").map(|settled| settled.open.id()), Some(first_id));
    assert!(state.book().is_empty());
    let notice = state.notices().first().expect("a notice");
    assert!(notice.contains("withdrew") && notice.contains("C instead"), "{notice}");
}

#[test]
fn a_limit_error_keeps_the_request_and_says_why() {
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::SetNotes { question: 0, text: "x".repeat(9000) });
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 2, pick: Pick::Option(0) });
    assert!(state.edit(Edit::Submit).is_none());
    let error = state.current().and_then(|p| p.error.clone()).expect("an error");
    assert_eq!(
        error,
        "Not sent: the note on question 1 is 9000 characters long; the limit is 8192. Shorten \
         it and submit again."
    );
}

#[test]
fn closing_asks_first_only_when_something_was_typed_or_chosen() {
    let mut state = State::default();
    push(&mut state, three_questions());
    assert!(state.request_close(), "nothing done yet: close at once");
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(1) });
    assert!(!state.request_close());
    assert!(state.confirming_close());
    state.apply(Action::KeepOpen);
    assert!(!state.confirming_close());
    assert_eq!(state.current().map(|p| p.forms[0].draft.chosen().to_vec()), Some(vec![1]));
}

fn nobody_typing(_: RequestId, _: usize, _: TextField) -> bool {
    false
}

fn timed(seconds: u64) -> (Core, Policy) {
    let (core, policy) = three_questions();
    (core, Policy { timeout_secs: Some(seconds), ..policy })
}

#[test]
fn on_timeout_picks_are_told_as_not_submitted_never_sent_as_the_answer() {
    let mut state = State::default();
    push(&mut state, timed(10));
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(1) });
    assert!(state.expire(9.9, &nobody_typing).is_empty(), "not yet");
    let resolved = state.expire(10.0, &nobody_typing);
    assert_eq!(resolved.len(), 1);
    let Outcome::TimedOut(timed_out) = &resolved[0].outcome else {
        panic!("a partial form is not an answer: {:?}", resolved[0].outcome)
    };
    assert_eq!(
        timed_out.message(),
        "No response after 10s \u{2014} the user may be away from keyboard. Proceed using \
         your best judgment based on the context so far; you can re-ask this question later \
         if it's still relevant.\n\nBefore going idle the user had selected: \
         \"Which checks?\"=\"Tests\"."
    );
    assert!(state.book().is_empty());
    assert!(state.receipt().is_some_and(|receipt| receipt.by_timeout));

    push(&mut state, timed(5));
    let resolved = state.expire(6.0, &nobody_typing);
    assert_eq!(resolved[0].outcome, Outcome::timed_out(5));
}

#[test]
fn on_timeout_a_complete_form_is_the_users_answer() {
    let mut state = State::default();
    push(&mut state, timed(10));
    for (question, option) in [(0, 1), (1, 0), (2, 1)] {
        state.edit(Edit::Pick { question, pick: Pick::Option(option) });
    }
    let resolved = state.expire(10.0, &nobody_typing);
    assert_eq!(
        answers_of(&resolved[0]),
        json!({"Which database?": "SQLite", "Which checks?": "Clippy", "Deploy?": "No"})
    );
    assert!(state.receipt().is_some_and(|receipt| receipt.by_timeout));
}

#[test]
fn on_timeout_a_box_being_typed_in_is_never_sent() {
    let mut state = State::default();
    push(&mut state, timed(30));
    let id = state.current().map(|pending| pending.id()).expect("pending");
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(2) });
    state.edit(Edit::SetOtherText { question: 2, text: "Only on Fri".into() });
    state.edit(Edit::SetNotes { question: 0, text: "Keep it small".into() });
    // The Other box of question 3 has the keyboard: everything else is finished.
    let typing = |request: RequestId, question: usize, field: TextField| {
        request == id && question == 2 && field == TextField::Other
    };
    let resolved = state.expire(30.0, &typing);
    let Outcome::TimedOut(timed_out) = &resolved[0].outcome else {
        panic!("not complete while typing: {:?}", resolved[0].outcome)
    };
    let message = timed_out.message();
    assert!(!message.contains("Only on Fri"), "{message}");
    assert!(
        message.contains(r#""Which database?"="PostgreSQL (Recommended)" notes: Keep it small"#),
        "{message}"
    );
    assert!(
        message.ends_with(
            "The user was still typing an answer to \"Deploy?\" when the time ran out; \
             what they typed was not sent."
        ),
        "{message}"
    );
    let notice = state.notices().first().expect("what was typed is kept");
    assert!(notice.contains("Deploy (Other): Only on Fri"), "{notice}");
}

#[test]
fn stay_stops_every_countdown_and_more_time_moves_the_deadline() {
    let mut state = State::default();
    push(&mut state, timed(10));
    state.edit(Edit::AddTime(60));
    assert!(state.expire(60.0, &nobody_typing).is_empty(), "60 s more");
    assert_eq!(state.next_deadline(), Some(70.0));
    assert_eq!(state.title(60.0), "⏱ 0:10 · Database · 3 questions — askpane");
    state.apply(Action::Stay);
    assert!(state.expire(1000.0, &nobody_typing).is_empty(), "stopped: no deadline");
    assert_eq!(
        state.current().and_then(|p| p.countdown),
        Some(Countdown::Stopped { given_secs: 70 })
    );
    assert!(!state.counting_down());
}

#[test]
fn enter_picks_the_highlighted_option_and_moves_on() {
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::MoveCursor(1));
    state.edit(Edit::Advance);
    let pending = state.current().expect("pending");
    assert_eq!(pending.status(0), Status::Answered("SQLite".into()));
    assert_eq!(pending.tab, Tab::Question(1));
    // Multi-select: Enter only moves on.
    state.edit(Edit::Advance);
    let pending = state.current().expect("pending");
    assert_eq!(pending.status(1), Status::NotAnswered);
    // An empty Other is no answer: Enter stays.
    state.edit(Edit::MoveCursor(5));
    state.edit(Edit::Advance);
    assert_eq!(state.current().map(|p| p.tab), Some(Tab::Question(2)));
    state.edit(Edit::Advance);
    assert_eq!(state.current().map(|p| p.tab), Some(Tab::Question(2)), "Other is empty");
    state.edit(Edit::SetOtherText { question: 2, text: "Friday".into() });
    state.edit(Edit::Advance);
    let pending = state.current().expect("pending");
    assert_eq!(pending.tab, Tab::Review);
    assert_eq!(pending.status(2), Status::Answered("Friday".into()));
}

#[test]
fn enter_five_times_never_sends_an_empty_answer() {
    let mut state = State::default();
    let request = request(
        json!({"questions": [
            {"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": [
                {"label": "Clippy", "description": ""}, {"label": "Tests", "description": ""}]}]}),
        Envelope::ToolInput,
    );
    push(&mut state, request);
    for _ in 0..5 {
        assert!(state.edit(Edit::Advance).is_none(), "Enter alone never sends");
    }
    let pending = state.current().expect("still open");
    assert_eq!(pending.confirm, Some(Confirm::PartialSubmit { missing: vec![0] }));
    // Only the explicit confirmation sends, and then as what it is.
    let resolved = state.edit(Edit::ConfirmSubmit).expect("sent");
    assert_eq!(resolved.outcome, Outcome::nothing_answered());
    assert_eq!(state.receipt().map(|r| r.outcome_kind.as_str()), Some("declined"));
}

#[test]
fn chat_about_this_sends_the_dialogs_clarify_text() {
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 1, pick: Pick::Option(2) });
    state.edit(Edit::SetNotes { question: 1, text: " only fast ones ".into() });
    let resolved = state.edit(Edit::Clarify).expect("sent at once");
    let Outcome::Clarify { message, picked } = &resolved.outcome else {
        panic!("a clarify outcome: {:?}", resolved.outcome)
    };
    assert!(picked.is_some(), "the picks travel along, for the browser's wire form");
    assert_eq!(
        message,
        "The user wants to clarify these questions.
    This means they may have additional information, context or questions for you.
    Take their response into account and then reformulate the questions if appropriate.
    Start by asking them what they would like to clarify.

    Questions asked:
- \"Which database?\"
  (No answer provided)
- \"Which checks?\"
  Answer: Clippy, Miri
  User notes: only fast ones
- \"Deploy?\"
  (No answer provided)"
    );
}

#[test]
fn review_shows_labels_as_the_user_saw_them() {
    let mut state = State::default();
    push(
        &mut state,
        request(
            json!({"questions": [{"question": "Which?", "header": "W", "multiSelect": true,
            "options": [{"label": "Say \"hi\"", "description": ""},
                        {"label": "Red, green", "description": ""}]}]}),
            Envelope::ToolInput,
        ),
    );
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(1) });
    state.edit(Edit::SetOtherText { question: 0, text: "Teal".into() });
    let pending = state.current().expect("pending");
    assert_eq!(review_line(pending, 0), "Say \"hi\" · Red, green · Other: “Teal”");
    assert_eq!(
        pending.status(0),
        Status::Answered(r#""Say \"hi\"", "Red, green", Teal"#.into()),
        "the wire form is unchanged"
    );
}

#[test]
fn preset_drafts_fill_the_form_and_put_the_cursor_on_the_choice() {
    let mut state = State::default();
    let mut request = three_questions();
    let mut draft = Draft::default();
    draft.pick(&request.0.ask.questions()[0], Pick::Option(1));
    request.1.preset = vec![draft];
    push(&mut state, request);
    let pending = state.current().expect("pending");
    assert_eq!(pending.forms.len(), 3);
    let cursors: Vec<usize> = pending.forms.iter().map(|form| form.cursor).collect();
    assert_eq!(cursors, vec![1, 0, 0]);
    assert_eq!(pending.status(0), Status::Answered("SQLite".into()));
}

#[test]
fn a_session_records_its_transcript_and_caps_huge_results() {
    let mut state = State::<()>::default();
    state.start_session(SessionKey::Own, None, Some("Fix the tests"));
    let huge = "x".repeat(ENTRY_LIMIT + 10);
    let event = |line: serde_json::Value| {
        crate::protocol::stream::SessionEvent::Message(crate::protocol::stream::parse_cli_line(
            &line,
        ))
    };
    state.session_event(
        SessionKey::Own,
        event(json!({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Running them."},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test"}}]}})),
    );
    state.session_event(
        SessionKey::Own,
        event(json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": huge}]}})),
    );
    state.session_event(
        SessionKey::Own,
        event(json!({"type": "result", "subtype": "success", "num_turns": 2})),
    );
    let session = state.session().expect("a session");
    assert!(!session.busy);
    assert_eq!(session.entries().len(), 5);
    assert!(
        matches!(&session.entries()[2], Entry::ToolCall { summary, .. } if summary == "Bash: cargo test")
    );
    let Entry::ToolResult { content, .. } = &session.entries()[3] else { panic!("a result") };
    assert!(content.ends_with("… 10 more bytes not shown"), "{}", &content[content.len() - 40..]);
}

#[test]
fn permissions_are_decided_once_and_prompts_go_out_once() {
    let mut state = State::<()>::default();
    state.start_session(SessionKey::Own, None, None);
    let request = PermissionRequest {
        request_id: "r1".into(),
        tool_name: "Bash".into(),
        input: json!({"command": "ls"}),
        tool_use_id: Some("t1".into()),
        title: None,
        description: None,
        reason: None,
        agent_id: None,
        ..Default::default()
    };
    let id = RequestId::next();
    state.ask_permission(id, request, Provenance::new("claude", None), ());
    state.apply_session(SessionAction::SetDenyMessage { id, text: "not here".into() });
    assert_eq!(
        state.apply_session(SessionAction::DenyPermission(id)),
        Some(SessionEffect::Decided {
            id,
            decision: PermissionDecision::Deny {
                message: "The user denied this tool call and said: not here".into()
            }
        })
    );
    assert_eq!(state.apply_session(SessionAction::AllowPermission(id)), None);
    assert_eq!(state.apply_session(SessionAction::Stop), None, "nothing running");
    state.apply_session(SessionAction::SetPrompt("  go on  ".into()));
    assert_eq!(
        state.apply_session(SessionAction::SendPrompt),
        Some(SessionEffect::Prompt { session: SessionKey::Own, text: "go on".into() })
    );
    assert_eq!(state.apply_session(SessionAction::SendPrompt), None, "the box is empty now");
    assert_eq!(
        state.apply_session(SessionAction::Stop),
        Some(SessionEffect::Interrupt { session: SessionKey::Own })
    );
}

#[test]
fn decline_and_stop_and_reply_in_own_words() {
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::AskDecline);
    let resolved = state.edit(Edit::ConfirmDeclineAndStop).expect("stopped");
    assert_eq!(resolved.outcome.kind(), "stopped");

    push(&mut state, three_questions());
    state.edit(Edit::AskReply);
    assert!(state.edit(Edit::ConfirmReply).is_none(), "an empty reply is not sent");
    state.edit(Edit::SetReplyText("Let's talk in chat first.".into()));
    let resolved = state.edit(Edit::ConfirmReply).expect("replied");
    let Outcome::Replied(reply) = &resolved.outcome else { panic!("a reply") };
    assert_eq!(reply.updated_input()["response"], "Let's talk in chat first.");
    assert_eq!(reply.updated_input()["answers"], json!({}));
}

// Issue 9: texts over their limit are refused beside their box; a browser's receipt waits
// for askpane's acknowledgement, and a refused answer comes back as it was sent.
#[test]
fn an_over_long_reply_or_decline_message_is_refused_beside_its_box() {
    use crate::protocol::limits::{MAX_DECLINE_LENGTH, MAX_REPLY_LENGTH};
    let mut state = State::default();
    push(&mut state, three_questions());
    state.edit(Edit::AskReply);
    state.edit(Edit::SetReplyText("返".repeat(MAX_REPLY_LENGTH + 1)));
    assert!(state.edit(Edit::ConfirmReply).is_none(), "not sent");
    let pending = state.current().expect("still open");
    assert_eq!(
        pending.error.as_deref(),
        Some(
            "Not sent: the reply is 32769 characters long; the limit is 32768. Shorten it \
             and send again."
        )
    );
    assert!(matches!(&pending.confirm, Some(Confirm::Reply { text }) if text.len() > 32_768));
    state.edit(Edit::AskDecline);
    state.edit(Edit::SetDeclineMessage("x".repeat(MAX_DECLINE_LENGTH + 1)));
    assert!(state.edit(Edit::ConfirmDeclineAndStop).is_none(), "not sent");
    let error = state.current().and_then(|pending| pending.error.clone()).unwrap_or_default();
    assert!(error.contains("the message to the agent is 8193 characters long"), "{error}");
    state.edit(Edit::SetDeclineMessage("x".repeat(MAX_DECLINE_LENGTH)));
    let resolved = state.edit(Edit::ConfirmDecline).expect("at the limit it goes");
    assert_eq!(resolved.outcome.kind(), "declined");
}

#[test]
fn a_browser_receipt_says_sent_only_once_acknowledged() {
    let mut state = State::default();
    let mut request = three_questions();
    request.0.envelope = Envelope::SeedWeb { tool_use_id: "t1".into() };
    request.1.awaits_ack = true;
    push(&mut state, request);
    state.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    state.edit(Edit::Submit);
    state.edit(Edit::ConfirmSubmit).expect("sent to the bridge");
    let receipt = |state: &State<()>| state.receipt().map(|r| r.send_state.clone());
    assert_eq!(receipt(&state), Some(SendState::Sending));
    state.delivered("another");
    assert_eq!(receipt(&state), Some(SendState::Sending), "only its own acknowledgement");
    state.delivered("t1");
    assert_eq!(receipt(&state), Some(SendState::Sent));
    state.not_delivered("t1", "not sent: answered in another window first".into());
    assert!(matches!(receipt(&state), Some(SendState::NotSent(_))));
    assert_eq!(state.notices().len(), 1);
    // Natively, handing the outcome over is delivery.
    push(&mut state, three_questions());
    state.edit(Edit::AskDecline);
    state.edit(Edit::ConfirmDecline).expect("declined");
    assert_eq!(receipt(&state), Some(SendState::Sent));
}

#[test]
fn a_refused_answer_comes_back_as_it_was_sent_with_why() {
    let mut state = State::default();
    let mut request = three_questions();
    request.0.envelope = Envelope::SeedWeb { tool_use_id: "t1".into() };
    request.1.awaits_ack = true;
    let again = (Core { id: RequestId::next(), ..request.0.clone() }, request.1.clone());
    push(&mut state, request);
    state.edit(Edit::AskDecline);
    state.edit(Edit::SetDeclineMessage("not now".into()));
    let declined = state.edit(Edit::ConfirmDecline).expect("sent").outcome;
    // The bridge refused it: the same question, pushed again, opens the decline box again
    // with the user's own words (not askpane's wording around them) and the reason.
    let id = again.0.id;
    push(&mut state, again);
    state.returned(id, &declined, "the message to the agent is too long", None);
    let pending = state.current().expect("back");
    assert_eq!(pending.id(), id);
    assert_eq!(pending.confirm, Some(Confirm::Decline { message: "not now".into() }));
    assert_eq!(
        pending.error.as_deref(),
        Some("Not sent: the message to the agent is too long. Change it and send again.")
    );
    assert!(state.receipt().is_none(), "no receipt for what did not count");
    // A refused form opens on the question the error names.
    let mut form = three_questions();
    form.0.envelope = Envelope::SeedWeb { tool_use_id: "t2".into() };
    let form_id = form.0.id;
    push(&mut state, form);
    let answers = crate::protocol::build_answers(&state.current().expect("t1").core.ask, &[])
        .expect("empty answers");
    state.returned(
        form_id,
        &Outcome::Answered(answers),
        "the note on question 3 is too long",
        Some(2),
    );
    let pending = state.current().expect("t2");
    assert_eq!(
        (pending.id(), pending.tab, pending.confirm.clone()),
        (form_id, Tab::Question(2), None)
    );
}

#[test]
fn title_names_the_project_the_count_and_who_else_waits() {
    let mut state = State::default();
    assert_eq!(state.title(0.0), "askpane");
    push(&mut state, three_questions());
    assert_eq!(state.title(0.0), "Database · 3 questions — askpane");
    let mut second = three_questions();
    second.0.provenance = second.0.provenance.with_project(Some("orders".into()));
    push(&mut state, second);
    assert_eq!(state.title(0.0), "2 waiting · Database · 3 questions — askpane");
    state.edit(Edit::AskDecline);
    state.edit(Edit::ConfirmDecline);
    assert_eq!(state.title(0.0), "orders · 3 questions — askpane");
    let mut state = State::default();
    let header = json!({"questions": [{"question": "Q?", "header": "A\u{0}B\n",
        "options": [{"label": "x"}, {"label": "y"}]}]});
    push(&mut state, request(header, Envelope::ToolInput));
    assert_eq!(state.title(0.0), "AB · 1 question — askpane");
}

#[test]
fn the_inbox_shows_each_hosted_session_apart_and_sends_to_the_one_shown() {
    let mut state = State::<()>::default();
    let event = |line: serde_json::Value| {
        crate::protocol::stream::SessionEvent::Message(crate::protocol::stream::parse_cli_line(
            &line,
        ))
    };
    let first = SessionKey::Hosted(1);
    let second = SessionKey::Hosted(2);
    state.start_session(first, Some("claude · alpha".into()), Some("Fix the tests"));
    state.start_session(second, Some("claude · beta".into()), None);
    state.session_event(
        second,
        event(json!({"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Only in beta."}]}})),
    );
    // The first to come is shown until another is picked.
    assert_eq!(state.session().and_then(|s| s.label.as_deref()), Some("claude · alpha"));
    assert_eq!(state.sessions().count(), 2);
    state.apply_session(SessionAction::SelectSession(second));
    let shown = state.session().expect("a session");
    assert_eq!(*shown.entries(), vec![Entry::Assistant("Only in beta.".into())]);
    state.apply_session(SessionAction::SetPrompt("go on".into()));
    assert_eq!(
        state.apply_session(SessionAction::SendPrompt),
        Some(SessionEffect::Prompt { session: second, text: "go on".into() })
    );
    // alpha's turn is running; beta's is now too: Stop goes to the one shown.
    assert_eq!(
        state.apply_session(SessionAction::Stop),
        Some(SessionEffect::Interrupt { session: second })
    );
    // Its host went away: the other is shown; a session that is gone cannot be picked.
    state.end_session(second);
    assert_eq!(state.session().and_then(|s| s.label.as_deref()), Some("claude · alpha"));
    state.apply_session(SessionAction::SelectSession(second));
    assert_eq!(state.sessions().count(), 1);
    assert_eq!(state.session().and_then(|s| s.label.as_deref()), Some("claude · alpha"));
}

/// A tool result of `content`, as a hosted session's event.
fn tool_result(n: usize, content: &str) -> crate::protocol::stream::SessionEvent {
    let line = json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": format!("t{n}"), "content": content}]}});
    crate::protocol::stream::SessionEvent::Message(crate::protocol::stream::parse_cli_line(&line))
}

/// Issue 24 item 15: a long session kept every event (100 000 of 4 KB held 412 MB). The
/// transcript keeps its newest entries within the caps, and says how many earlier ones it
/// dropped.
#[test]
fn a_long_session_keeps_its_newest_entries_within_the_caps_and_says_how_many_it_dropped() {
    let mut state = State::<()>::default();
    let key = SessionKey::Hosted(1);
    state.start_session(key, Some("claude · big".into()), Some("Go"));
    let big = "y".repeat(ENTRY_LIMIT);
    for n in 0..10_000 {
        state.session_event(key, tool_result(n, &big));
    }
    let session = state.session().expect("a session");
    let held = session.entries().len();
    assert!(session.kept_bytes() <= MAX_KEPT_BYTES, "{} bytes kept", session.kept_bytes());
    let weighed: usize = session.entries().iter().map(Entry::weight).sum();
    assert_eq!(weighed, session.kept_bytes());
    // Still a screenful and more: the caps cut memory, not the recent work.
    assert!(held >= 100, "only {held} kept");
    assert_eq!(session.first() + held, 10_001, "entries are numbered from the session's start");
    assert!(
        matches!(session.entries().back(), Some(Entry::ToolResult { tool_use_id, .. }) if tool_use_id == "t9999")
    );
    let earlier = session.earlier();
    assert_eq!(earlier, Earlier { loadable: 0, dropped: session.first() });
    let note = earlier.note().expect("a note above the first entry");
    assert!(
        note.starts_with(&format!("{} earlier events dropped: askpane keeps", session.first())),
        "{note}"
    );
    // Many small events: the count cap.
    for n in 0..MAX_KEPT_ENTRIES + 500 {
        state.session_event(key, tool_result(n, "ok"));
    }
    let session = state.session().expect("a session");
    assert_eq!(session.entries().len(), MAX_KEPT_ENTRIES);
    assert_eq!(session.end(), 10_001 + MAX_KEPT_ENTRIES + 500);
    // Nothing dropped, nothing to say.
    let mut short = State::<()>::default();
    short.start_session(key, None, Some("Go"));
    assert_eq!(short.session().map(|s| s.earlier().note()), Some(None));
}

/// Issue 24 item 15: a page gets a session's newest entries, asks for older ones, and shows
/// how many earlier ones the bridge still keeps (a "Show earlier" that asks for them) and how
/// many it dropped; new entries and a page's own prompt go on joining up.
#[test]
fn a_page_shows_a_tail_of_the_bridges_session_and_puts_older_entries_in_front() {
    let mut bridge = State::<()>::default();
    let key = SessionKey::Hosted(3);
    bridge.start_session(key, Some("claude · long".into()), None);
    for n in 0..1_000 {
        bridge.session_event(key, tool_result(n, &format!("result {n}")));
    }
    let kept = bridge.session().expect("the bridge's session");
    // The tail: at most 100 entries, and at most 2 KiB of them.
    let tail = kept.tail(100, 100 * 1024);
    assert_eq!((tail.from, tail.entries.len(), tail.before), (900, 100, None));
    let small = kept.tail(100, 2 * 1024);
    assert!(small.entries.len() < 100 && small.from + small.entries.len() == 1_000, "{small:?}");
    assert_eq!(kept.tail(100, 10).entries.len(), 0, "none when the newest weighs more");

    let mut page = State::<()>::default();
    page.start_session(key, Some("claude · long".into()), None);
    page.hosted_update(key, tail);
    let shown = page.session().expect("the page's session");
    assert_eq!((shown.first(), shown.end()), (900, 1_000));
    assert_eq!(shown.earlier(), Earlier { loadable: 900, dropped: 0 });
    assert_eq!(shown.earlier().note().as_deref(), Some("900 earlier events not shown here."));
    // "Show earlier" asks for the ones before the oldest shown.
    assert_eq!(
        page.apply_session(SessionAction::ShowEarlier),
        Some(SessionEffect::Older { session: key, before: 900 })
    );
    let older = bridge.session().expect("the bridge's session").older(900, 50, 1 << 20);
    assert_eq!((older.from, older.entries.len(), older.before), (850, 50, Some(900)));
    page.hosted_update(key, older.clone());
    let shown = page.session().expect("the page's session");
    assert_eq!((shown.first(), shown.end()), (850, 1_000));
    assert!(matches!(shown.entries().front(),
        Some(Entry::ToolResult { tool_use_id, .. }) if tool_use_id == "t850"));
    // The same answer again (late, the page moved on) changes nothing.
    page.hosted_update(key, older);
    assert_eq!(page.session().map(Session::first), Some(850));
    // A new entry joins up; so does the page's own prompt, replaced by the bridge's.
    let from = bridge.session().map_or(0, Session::end);
    bridge.session_event(key, tool_result(1_000, "new"));
    let update = bridge.session().expect("a session").update_from(from, 1 << 20);
    page.hosted_update(key, update);
    assert_eq!(page.session().map(|s| (s.first(), s.end())), Some((850, 1_001)));
    // A page that was away (its next update is past its end) starts again from that update.
    bridge.session_event(key, tool_result(1_001, "a"));
    bridge.session_event(key, tool_result(1_002, "b"));
    let update = bridge.session().expect("a session").update_from(1_002, 1 << 20);
    page.hosted_update(key, update);
    assert_eq!(page.session().map(|s| (s.first(), s.end())), Some((1_002, 1_003)));
    // Older asked for past the oldest held, or from nothing: the oldest, at least one each time.
    let oldest = bridge.session().expect("a session").older(0, 50, 1 << 20);
    assert_eq!((oldest.from, oldest.entries.len()), (0, 0));
    let one = bridge.session().expect("a session").older(10, 50, 1);
    assert_eq!((one.from, one.entries.len()), (9, 1), "at least one entry per request");
    // An update of new entries is cut into pieces of about the size asked for.
    let pieces = bridge.session().expect("a session").update_from(0, 1024);
    assert!(pieces.entries.len() > 1 && pieces.entries.len() < 30, "{}", pieces.entries.len());
}

/// Issue 24 item 15: a bridge that dropped its oldest entries says so to a page, which shows
/// both numbers; nothing earlier to load means no "Show earlier".
#[test]
fn a_page_tells_the_entries_it_can_load_from_those_the_bridge_dropped() {
    let mut bridge = State::<()>::default();
    let key = SessionKey::Own;
    let big = "z".repeat(ENTRY_LIMIT);
    for n in 0..300 {
        bridge.session_event(key, tool_result(n, &big));
    }
    let kept = bridge.session().expect("a session");
    let dropped = kept.first();
    assert!(dropped > 0, "300 results of 64 KiB are over the cap");
    let tail = kept.tail(10, 1 << 20);
    assert_eq!(tail.kept_from, dropped);
    let mut page = State::<()>::default();
    page.session_update(tail);
    let earlier = page.session().expect("a session").earlier();
    assert_eq!(earlier, Earlier { loadable: 290 - dropped, dropped });
    let note = earlier.note().expect("a note");
    assert!(
        note.starts_with(&format!(
            "{} earlier events not shown here; {dropped} before them dropped",
            290 - dropped
        )),
        "{note}"
    );
    // The bridge's own: nothing to load, so nothing to ask.
    assert_eq!(bridge.apply_session(SessionAction::ShowEarlier), None);
}

/// A Bash card for `command`, asked now (so its id is newer than everything before it).
fn ask_bash(state: &mut State<()>, command: &str) -> RequestId {
    let request = PermissionRequest {
        request_id: format!("r-{command}"),
        tool_name: "Bash".into(),
        input: json!({"command": command}),
        ..Default::default()
    };
    let id = RequestId::next();
    state.ask_permission(id, request, Provenance::new("claude", None), ());
    id
}

#[test]
fn the_oldest_of_questions_and_cards_is_shown_until_the_user_picks() {
    let mut state = State::<()>::default();
    let card = ask_bash(&mut state, "ls");
    let Admission::Opened(question) = push(&mut state, three_questions()) else { panic!() };
    let later = ask_bash(&mut state, "make");
    assert_eq!(state.shown(), Some(Shown::Card(card)), "the card came first");
    assert!(state.current().is_none(), "no form beside the card");
    assert_eq!(state.edit(Edit::MoveCursor(1)).map(|_| ()), None);
    assert_eq!(state.book().get(question).map(|open| open.is_touched()), Some(false));
    // Picking the later card shows it; deciding it goes back to the oldest item.
    state.apply(Action::SelectCard(later));
    assert_eq!(state.shown(), Some(Shown::Card(later)));
    state.apply_session(SessionAction::AllowPermission(later));
    assert_eq!(state.shown(), Some(Shown::Card(card)));
    // A question picked stays shown while the card waits; an unknown card is no pick.
    state.apply(Action::SelectRequest(question));
    assert_eq!(state.shown(), Some(Shown::Question(question)));
    assert_eq!(state.current().map(Open::id), Some(question));
    state.apply(Action::SelectCard(RequestId::next()));
    assert_eq!(state.shown(), Some(Shown::Question(question)));
    state.apply_session(SessionAction::DenyPermission(card));
    assert_eq!(state.shown(), Some(Shown::Question(question)));
    assert_eq!(state.title(0.0), "Database · 3 questions — askpane");
}

#[test]
fn counts_name_every_kind_in_words_a_person_reads() {
    let words = |questions, tool_calls, plans| Counts { questions, tool_calls, plans }.words();
    assert_eq!(words(0, 0, 0), "nothing");
    assert_eq!(words(1, 0, 0), "1 question");
    assert_eq!(words(2, 0, 0), "2 questions");
    assert_eq!(words(0, 1, 0), "1 tool call");
    assert_eq!(words(0, 3, 0), "3 tool calls");
    assert_eq!(words(0, 0, 1), "1 plan");
    assert_eq!(words(0, 0, 2), "2 plans");
    assert_eq!(words(1, 1, 0), "1 question and 1 tool call");
    assert_eq!(words(3, 0, 1), "3 questions and 1 plan");
    assert_eq!(words(0, 2, 2), "2 tool calls and 2 plans");
    assert_eq!(words(2, 1, 1), "2 questions, 1 tool call and 1 plan");
    assert_eq!(words(1, 12, 3), "1 question, 12 tool calls and 3 plans");
    // The verb that follows: one thing is, several are.
    assert!(Counts { questions: 0, tool_calls: 0, plans: 1 }.is_one());
    assert!(!Counts { questions: 1, tool_calls: 0, plans: 1 }.is_one());
    assert!(!Counts { questions: 0, tool_calls: 2, plans: 0 }.is_one());
    assert!(!Counts::default().is_one());
}

#[test]
fn the_state_counts_questions_tool_calls_and_plans_apart() {
    let mut state: State<(), ()> = State::default();
    assert_eq!(state.counts(), Counts::default());
    push(&mut state, three_questions());
    let bash = PermissionRequest {
        request_id: "bash".to_owned(),
        tool_name: "Bash".to_owned(),
        input: json!({"command": "ls"}),
        ..Default::default()
    };
    let plan = PermissionRequest {
        request_id: "plan".to_owned(),
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": "# Plan"}),
        ..Default::default()
    };
    state.ask_permission(RequestId::next(), bash, Provenance::new("claude", None), ());
    state.ask_permission(RequestId::next(), plan, Provenance::new("claude", None), ());
    assert_eq!(state.counts(), Counts { questions: 1, tool_calls: 1, plans: 1 });
    assert_eq!(state.counts().words(), "1 question, 1 tool call and 1 plan");
}

#[test]
fn closing_the_inbox_window_asks_first_while_only_a_card_or_a_plan_waits() {
    let mut state: State<(), ()> = State::default();
    state.make_resident();
    assert!(state.request_close(), "nothing waits: it may hide at once");
    let plan = PermissionRequest {
        request_id: "plan".to_owned(),
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": "# Plan"}),
        ..Default::default()
    };
    state.ask_permission(RequestId::next(), plan, Provenance::new("claude", None), ());
    assert!(!state.request_close(), "a plan waits: ask whether to keep it waiting");
    assert!(state.confirming_close());
}

#[test]
fn closing_a_window_with_a_plan_review_written_asks_first() {
    let mut state: State<(), ()> = State::default();
    let plan = PermissionRequest {
        request_id: "plan".to_owned(),
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": "# Plan\n\nDo it."}),
        ..Default::default()
    };
    let id = RequestId::next();
    state.ask_permission(id, plan, Provenance::new("claude", None), ());
    assert!(state.request_close(), "nothing written: it may close");
    let note = crate::book::plan::PlanAction::SetNote("Not like this.".to_owned());
    state.apply_session(SessionAction::Plan { id, action: note });
    assert!(!state.request_close(), "a note written: ask before throwing it away");
}

/// Issue 28: a form with something typed in it is not thrown away by a close without asking.
#[test]
fn closing_a_window_with_a_form_filled_in_asks_first() {
    let mut state: State<(), ()> = State::default();
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let form = PermissionRequest {
        request_id: "form".to_owned(),
        tool_name: crate::protocol::permission::FORM_TOOL.to_owned(),
        input: crate::book::form::card_input("Deploy where?", &schema),
        ..Default::default()
    };
    let id = RequestId::next();
    state.ask_permission(id, form, Provenance::new("acp", None), ());
    assert!(state.request_close(), "nothing typed: it may close");
    let value = Some(crate::protocol::acp::form::FieldValue::Text("web".to_owned()));
    let action = crate::book::form::FormAction::Set { field: 0, value };
    state.apply_session(SessionAction::Form { id, action });
    assert!(!state.request_close(), "a field typed in: ask before throwing it away");
}
