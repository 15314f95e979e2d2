//! The page's answers made outcomes by the window's rules, and the messages' round trips.

use serde::Serialize;
use serde_json::json;

use super::*;
use crate::protocol::validate;

// --- the wire as JSON, read as the bridge and the page read it ---------------------------------

/// A message as the JSON that crosses the wire.
pub(super) fn wire(message: impl Wire) -> Value {
    message.json()
}

pub(super) trait Wire {
    fn json(self) -> Value;
}

fn to_json(message: impl Serialize) -> Value {
    serde_json::to_value(message).expect("JSON")
}

impl Wire for ToPage {
    fn json(self) -> Value {
        to_json(self)
    }
}
impl Wire for FromPage {
    fn json(self) -> Value {
        to_json(self)
    }
}
impl Wire for UserQuestion {
    fn json(self) -> Value {
        to_json(ToPage::<Value>::from(self))
    }
}
impl Wire for Refusal {
    fn json(self) -> Value {
        to_json(ToPage::<Value>::from(self))
    }
}

/// A page's message about a question, as the bridge checks it.
fn parse_browser_message(value: &Value) -> Result<BrowserMessage, BrowserError> {
    match FromPage::parse(value)? {
        PageRequest::Question(message) => Ok(message),
        other => panic!("not about a question: {other:?}"),
    }
}

/// A page's session message, as the bridge checks it: `None` when it is none.
fn parse_session_message(value: &Value) -> Option<Result<SessionMessage, BrowserError>> {
    match FromPage::parse(value) {
        Ok(PageRequest::Session(_, message)) => Some(Ok(message)),
        Ok(_) => None,
        Err(error) => Some(Err(error)),
    }
}

/// The session a page's session message is about.
fn message_session(value: &Value) -> Result<SessionKey, BrowserError> {
    match FromPage::parse(value)? {
        PageRequest::Session(key, _) => Ok(key),
        other => panic!("not about a session: {other:?}"),
    }
}

/// The hosted sessions a `sessions_open` names, as the page reads it.
fn parse_sessions_open(value: &Value) -> Vec<SessionKey> {
    match serde_json::from_value::<ToPage>(value.clone()) {
        Ok(ToPage::SessionsOpen { sessions }) => {
            sessions.into_iter().map(SessionKey::Hosted).collect()
        }
        other => panic!("not sessions_open: {other:?}"),
    }
}

/// An `error`, as the page reads it.
fn parse_refusal(value: &Value) -> Option<Refusal> {
    match serde_json::from_value::<ToPage>(value.clone()).ok()? {
        ToPage::Error(refusal) => Some(refusal),
        _ => None,
    }
}

/// The body of a `question_answer` (or any message with its keys), as the bridge reads it.
fn form(body: &Value) -> PageForm {
    serde_json::from_value(body.clone()).expect("a form reads from any object")
}

fn timed_out_form(body: &Value) -> PageTimedOut {
    serde_json::from_value(body.clone()).expect("a timed out form reads from any object")
}

fn ask() -> Ask {
    validate(&json!({"questions": [
        {"question": "Layout?", "header": "Layout", "options": [
            {"label": "Sidebar", "description": "", "preview": "S"}, {"label": "Tabs", "description": ""}]},
        {"question": "Features?", "header": "Features", "multiSelect": true, "options": [
            {"label": "Dark", "description": ""}, {"label": "Search", "description": ""},
            {"label": "Export", "description": ""}]},
    ]}))
    .expect("valid")
    .ask
}

/// Issue 24 item 7: a page's empty form is not an answer, by the window's own rule.
#[test]
fn an_empty_answer_from_a_page_is_nothing_answered() {
    let ask = ask();
    for answers in [
        json!({}),
        json!({"0": ""}),
        json!({"1": ","}),
        json!({"1": "other:"}),
        json!({"0": "other:   "}),
    ] {
        let body = json!({"answers": answers});
        let outcome = answer_outcome(&ask, &form(&body), false);
        assert_eq!(outcome, Ok(Outcome::nothing_answered()), "{answers}");
    }
    let body = json!({"answers": {}});
    let Ok(Outcome::Answered(skipped)) = answer_outcome(&ask, &form(&body), true) else {
        panic!("a session that takes skipped is told each question was skipped")
    };
    assert_eq!(skipped.entries().len(), 2);
}

/// Issue 24 items 5 and 6: what was filled in and never confirmed crosses the page's wire
/// and the bridge rebuilds the same outcome: timed out, with it told apart.
#[test]
fn an_unconfirmed_prefill_at_a_pages_deadline_round_trips() {
    let ask = ask();
    let mut layout = Draft::default();
    layout.pick(&ask.questions()[0], Pick::Option(1));
    let mut features = Draft::default();
    features.pick(&ask.questions()[1], Pick::Option(0));
    for prefill in [Prefill::Preset, Prefill::SavedDraft] {
        let finished = [layout.clone(), Draft::default()];
        let prefilled = [Draft::default(), features.clone()];
        let at = AtDeadline {
            finished: &finished,
            typing: &[],
            prefilled: &prefilled,
            prefill,
            waited_secs: 30,
        };
        let outcome = Outcome::at_deadline(&ask, &at);
        let Outcome::TimedOut(timed_out) = &outcome else { panic!("{outcome:?}") };
        assert!(timed_out.unconfirmed.is_some());
        let sent = Envelope::SeedWeb { tool_use_id: "t1".into() }.reply(&outcome).expect("sent");
        assert_eq!(sent["unconfirmed"]["from"], prefill.name());
        assert_eq!(sent["unconfirmed"]["answers"], json!({"1": "1"}));
        let body = timed_out_form(&sent);
        assert_eq!(timed_out_outcome(&ask, &body, 30), Ok(outcome.clone()));
    }
    let bad = json!({"answers": {}, "unconfirmed": {"from": "agent", "answers": {}}});
    assert_eq!(
        timed_out_outcome(&ask, &timed_out_form(&bad), 30),
        Err(BrowserError::BadPrefill("agent".into()))
    );
}

#[test]
fn the_index_form_round_trips_through_the_same_rules() {
    let ask = ask();
    let body = json!({"type": "question_answer", "tool_use_id": "t1",
        "answers": {"0": "1", "1": "1,3,other:Sync, offline"}, "notes": {"0": "narrow"}});
    let BrowserMessage::Answer { body, .. } = parse_browser_message(&body).expect("parsed") else {
        panic!("an answer")
    };
    let outcome = answer_outcome(&ask, &body, false).expect("fits");
    let Outcome::Answered(answers) = &outcome else { panic!("answered") };
    assert_eq!(
        Value::Object(answers.answers_json()),
        json!({"Layout?": "Sidebar", "Features?": "Dark, Export, \"Sync, offline\""})
    );
    assert_eq!(
        Value::Object(answers.annotations_json()),
        json!({"Layout?": {"notes": "narrow", "preview": "S"}})
    );
    // And back: the seed reply of that outcome is the same numbers.
    let reply = Envelope::SeedWeb { tool_use_id: "t1".into() }.reply(&outcome).expect("a reply");
    assert_eq!(reply["answers"], json!({"0": "1", "1": "1,3,other:Sync, offline"}));
}

#[test]
fn a_message_names_its_hosted_session_and_none_means_the_own() {
    let hosted = SessionKey::Hosted(7);
    let prompt = wire(session_prompt(hosted, "go on"));
    assert_eq!(prompt, json!({"type": "session_prompt", "text": "go on", "session": 7}));
    assert_eq!(message_session(&prompt), Ok(hosted));
    assert_eq!(wire(session_stop(SessionKey::Own)), json!({"type": "session_stop"}));
    assert_eq!(message_session(&wire(session_stop(SessionKey::Own))), Ok(SessionKey::Own));
    let bad = json!({"type": "session_stop", "session": "7"});
    assert_eq!(message_session(&bad), Err(BrowserError::BadSession));
    assert_eq!(parse_session_message(&wire(session_end(hosted))), Some(Ok(SessionMessage::End)));
    let open = wire(sessions_open([SessionKey::Own, hosted].into_iter()));
    assert_eq!(open, json!({"type": "sessions_open", "sessions": [7]}));
    assert_eq!(parse_sessions_open(&open), [hosted]);
}

#[test]
fn decline_words_come_back_out_of_askpanes_wording() {
    for words in ["not now", "  spaced  ", "", "said: twice said: "] {
        let Outcome::Declined { message } = Outcome::declined(words) else { panic!() };
        assert_eq!(decline_words(&message), words.trim(), "{message}");
    }
    assert_eq!(decline_words("a message of my own"), "a message of my own");
}

#[test]
fn timeout_changes_parse_bounded_and_round_trip() {
    let paused = wire(timeout_change_message("t", TimeoutChange::Paused));
    assert_eq!(paused, json!({"type": "timeout_paused", "tool_use_id": "t"}));
    let extended = wire(timeout_change_message("t", TimeoutChange::Extended { secs: 60 }));
    for (message, change) in
        [(paused, TimeoutChange::Paused), (extended, TimeoutChange::Extended { secs: 60 })]
    {
        assert_eq!(
            parse_browser_message(&message),
            Ok(BrowserMessage::Timeout { tool_use_id: "t".into(), change })
        );
    }
    let too_much = json!({"type": "timeout_extended", "tool_use_id": "t", "secs": 3601});
    assert_eq!(
        parse_browser_message(&too_much).expect_err("refused").to_string(),
        "`secs` must be a whole number of seconds from 1 to 3600, not 3601"
    );
}

#[test]
fn a_refusal_says_what_to_do_with_the_answer() {
    let limit = BrowserError::Limit(LimitError::NotesTooLong { question: 1, length: 9000 });
    let error = wire(error_message(&limit, Some(&json!("t"))));
    assert_eq!(
        error,
        json!({"type": "error", "tool_use_id": "t", "kind": "too_long", "field": "note",
            "question": 1,
            "message": "the note on question 2 is 9000 characters long; the limit is 8192"})
    );
    let refusal = parse_refusal(&error).expect("an error");
    assert_eq!((refusal.question, refusal.not_open()), (Some(1), false));
    let gone = wire(error_message(&BrowserError::UnknownQuestion("t".into()), None));
    assert!(parse_refusal(&gone).expect("an error").not_open());
}

#[test]
fn refuses_what_was_not_offered() {
    let ask = ask();
    let outcome = |answers: Value| {
        let body = json!({"answers": answers});
        answer_outcome(&ask, &form(&body), false).expect_err("refused").to_string()
    };
    assert_eq!(outcome(json!({"2": "1"})), "question index \"2\" was not asked");
    assert_eq!(outcome(json!({"0": "3"})), "question 1: option 3 was not offered");
    assert_eq!(outcome(json!({"0": "0"})), "question 1: option 0 was not offered");
    assert_eq!(
        outcome(json!({"0": "1,2"})),
        "question 1 is single-select, but several options were sent"
    );
    assert_eq!(outcome(json!({"1": "x"})), "question 2: option x was not offered");
    assert_eq!(outcome(json!({"00": "1"})), "question index \"00\" was not asked");
    assert_eq!(outcome(json!({"0": "+1"})), "question 1: option +1 was not offered");
    let bad = json!({"type": "question_declined", "tool_use_id": "t", "outcome": "answered"});
    assert_eq!(
        parse_browser_message(&bad).expect_err("refused").to_string(),
        "a decline's outcome must be declined or stopped, not \"answered\""
    );
}

// --- the serde types read what they write, and what they must --------------------------------

/// Every kind a page sends reads from its type alone: only a type the bridge does not know is
/// refused as one (whatever else is wrong is refused by the field).
#[test]
fn every_kind_a_page_sends_reads_from_its_type_alone() {
    for kind in [
        "question_answer",
        "question_declined",
        "question_clarify",
        "question_timed_out",
        "question_seen",
        "timeout_paused",
        "timeout_extended",
        "permission_decision",
        "session_prompt",
        "session_stop",
        "session_end",
        "session_older",
        "history_request",
    ] {
        let message = FromPage::read(&json!({"type": kind})).expect(kind);
        assert_eq!(wire(message), json!({"type": kind}), "{kind}");
    }
}

/// The page's replies are the seed web protocol's (`Envelope::SeedWeb`): each reads as its
/// kind and writes back byte for byte, key order included.
#[test]
fn the_seed_replies_a_page_sends_read_back_as_sent() {
    let ask = ask();
    let mut layout = Draft::default();
    layout.pick(&ask.questions()[0], Pick::Option(1));
    layout.set_notes("narrow".into());
    let drafts = [layout.clone(), Draft::default()];
    let answers = build_answers(&ask, &drafts).expect("fits");
    let at = AtDeadline {
        finished: &drafts,
        typing: &[1],
        prefilled: &[Draft::default(), layout.clone()],
        prefill: Prefill::SavedDraft,
        waited_secs: 30,
    };
    let outcomes = [
        Outcome::Answered(answers),
        Outcome::declined("not now"),
        Outcome::stopped(""),
        Outcome::clarify(&ask, &drafts),
        Outcome::replied(&ask, "in my own words"),
        Outcome::at_deadline(&ask, &at),
    ];
    let envelope = Envelope::SeedWeb { tool_use_id: "t1".into() };
    for outcome in outcomes {
        let sent = envelope.reply(&outcome).expect("a reply").to_string();
        let read: FromPage = serde_json::from_str(&sent).expect(&sent);
        assert_eq!(serde_json::to_string(&read).expect("JSON"), sent);
        assert!(
            matches!(
                FromPage::parse(&serde_json::from_str(&sent).expect("JSON")),
                Ok(PageRequest::Question(_))
            ),
            "{sent}"
        );
    }
}

/// What the bridge writes, a page reads as the same message.
#[test]
fn what_the_bridge_sends_a_page_reads_back_the_same() {
    let provenance = crate::protocol::origin::Provenance {
        source: "hook".into(),
        detail: Some("shop".into()),
        project: Some("shop".into()),
        session: Some("s".into()),
        subagent: None,
        host: None,
    };
    let mut selected = Map::new();
    selected.insert("0".into(), json!("1"));
    let extras = QuestionExtras {
        provenance: provenance.clone(),
        warnings: vec!["w".into()],
        timeout_secs: Some(30),
        selected,
        mark_skipped: true,
        reply_format: Some(ReplyFormat::OpenCode),
        agent_request: None,
    };
    let question = user_question("t1", &ask(), "2026-11-22T00:00:00Z", &extras);
    assert_eq!(question.provenance(), provenance);
    assert_eq!(question.reply_format(), Some(ReplyFormat::OpenCode));
    let limit = BrowserError::Limit(LimitError::NotesTooLong { question: 1, length: 9000 });
    let request = crate::protocol::stream::PermissionRequest {
        request_id: "r1".into(),
        tool_name: "Bash".into(),
        input: json!({"command": "ls"}),
        tool_use_id: None,
        title: None,
        description: None,
        reason: None,
        agent_id: None,
        ..Default::default()
    };
    let messages: Vec<ToPage> = vec![
        question.into(),
        question_withdrawn("t1", OutcomeKind::Answered),
        answer_received("t1", OutcomeKind::Declined),
        timeout_changed("t1", None),
        error_message(&limit, Some(&json!("t1"))).into(),
        refusal(&BrowserError::BadOlder, &json!({"type": "session_older"})).into(),
        ToPage::Session(SessionBody {
            update: json!({"from": 0, "entries": []}),
            label: Some("claude · shop".into()),
            session: SessionKey::Hosted(2),
        }),
        session_gone(SessionKey::Hosted(2)),
        sessions_open([SessionKey::Hosted(2)].into_iter()),
        permission_request(&request, &provenance),
        permission_withdrawn("r1", PermissionEnd::Denied),
        permissions_open(["r1"].into_iter()),
        history_kept(),
        history_page(&HistoryPage::none_kept(Default::default())),
    ];
    for message in messages {
        let text = serde_json::to_string(&message).expect("JSON");
        assert_eq!(serde_json::from_str::<ToPage>(&text).expect(&text), message, "{text}");
    }
}

/// A page reads what a newer bridge may send as it always has: an outcome or a refusal of a
/// kind it does not know, a reply shape it does not know, a field it does not know.
#[test]
fn a_page_reads_a_newer_bridges_names_as_it_always_has() {
    let read = |value: Value| serde_json::from_value::<ToPage>(value).expect("read");
    let ToPage::QuestionWithdrawn { reason, .. } =
        read(json!({"type": "question_withdrawn", "tool_use_id": "t", "reason": "vanished"}))
    else {
        panic!("question_withdrawn")
    };
    assert_eq!((reason.given(), reason.other_text()), (None, Some("vanished")));
    let ToPage::Error(refusal) = read(json!({"type": "error", "message": "no", "tool_use_id": "t",
        "kind": "rate_limited", "retry_in": 5}))
    else {
        panic!("error")
    };
    assert!(!refusal.not_open());
    let ToPage::UserQuestion(question) = read(json!({"type": "user_question",
        "tool_use_id": "t", "questions": [], "timestamp": "", "source": "hook", "agent": "hook",
        "warnings": [], "reply_format": "carrier-pigeon", "colour": "teal"}))
    else {
        panic!("user_question")
    };
    assert_eq!(question.reply_format(), None);
    // A kind it does not know at all is not for it.
    assert!(serde_json::from_value::<ToPage>(json!({"type": "weather"})).is_err());
}
