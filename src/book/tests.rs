//! The book on its own: admission by policy, one question shown once however often it is asked,
//! every way a request ends, and what each waiting handle gets. Handles are plain names: the book
//! needs no channels.

use serde_json::json;

use super::*;
use crate::protocol::origin::Provenance;
use crate::protocol::{Draft, Envelope, Pick, validate};

fn core(tool_use_id: Option<&str>) -> Core {
    let input = json!({"questions": [
        {"question": "Which database?", "header": "Database", "multiSelect": false, "options": [
            {"label": "PostgreSQL"}, {"label": "SQLite"}]},
        {"question": "Deploy?", "header": "Deploy", "multiSelect": false, "options": [
            {"label": "Yes"}, {"label": "No"}]}]});
    let validated = validate(&input).expect("valid");
    let envelope = match tool_use_id {
        Some(id) => Envelope::ToolUse { id: id.into() },
        None => Envelope::ToolInput,
    };
    Core {
        id: RequestId::next(),
        envelope,
        ask: validated.ask,
        warnings: validated.warnings,
        provenance: Provenance::new("test", None),
        reply_shape: crate::protocol::ReplyShape::default(),
    }
}

fn opened(admission: Admission<&'static str>) -> RequestId {
    match admission {
        Admission::Opened(id) => id,
        other => panic!("expected it to open, got {other:?}"),
    }
}

#[test]
fn a_policy_that_decides_never_opens_the_request() {
    let mut book = Book::default();
    let decline = Policy { decline: Some("not now".into()), ..Policy::default() };
    let Admission::Decided { outcome, reply } = book.admit(core(None), decline, "agent", 0.0)
    else {
        panic!("decided")
    };
    assert_eq!((outcome.kind().as_str(), reply), ("declined", "agent"));
    let nobody = Policy { unavailable: Some("no display".into()), ..Policy::default() };
    let Admission::Decided { outcome, .. } = book.admit(core(None), nobody, "agent", 0.0) else {
        panic!("decided")
    };
    assert_eq!(outcome, Outcome::Unavailable { reason: "no display".into() });
    assert!(book.is_empty());
}

#[test]
fn a_submitted_preset_is_the_answer_and_an_unsubmitted_one_only_fills_the_form() {
    let asked = core(None);
    let mut first = Draft::default();
    first.pick(&asked.ask.questions()[0], Pick::Option(1));
    let preset = vec![first];
    let mut book = Book::default();
    let submit = Policy { preset: preset.clone(), submit: true, ..Policy::default() };
    let Admission::Decided { outcome: Outcome::Answered(answers), .. } =
        book.admit(asked.clone(), submit, "agent", 0.0)
    else {
        panic!("answered")
    };
    assert_eq!(answers.answers_json().get("Which database?"), Some(&json!("SQLite")));
    assert!(answers.answers_json().get("Deploy?").is_none(), "only what the preset gave");
    let fill = Policy { preset, ..Policy::default() };
    let id = opened(book.admit(asked, fill, "agent", 0.0));
    let open = book.get(id).expect("open");
    assert_eq!((open.cursor(0), open.status(0)), (1, Status::Answered("SQLite".into())));
}

#[test]
fn the_same_question_asked_twice_is_shown_once_and_both_handles_hear_the_outcome() {
    let mut book = Book::default();
    let id = opened(book.admit(core(Some("toolu_1")), Policy::default(), "first", 0.0));
    let again = book.admit(core(Some("toolu_1")), Policy::default(), "reconnected", 1.0);
    assert!(matches!(again, Admission::Joined(joined) if joined == id));
    assert_eq!(book.len(), 1);
    book.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    book.edit(Edit::Pick { question: 1, pick: Pick::Option(0) });
    let settled = book.edit(Edit::Submit).expect("answered");
    assert_eq!(settled.replies, vec!["first", "reconnected"]);
    assert_eq!((settled.outcome.kind().as_str(), settled.ending), ("answered", Ending::User));
    assert!(book.is_empty() && book.current().is_none());
}

#[test]
fn one_tool_use_id_in_two_sessions_or_for_other_questions_is_two_requests() {
    // Two agents may count their ids alike (MCP clients number their calls from 1): joining them
    // would send one agent the answer the person gave the other.
    let mut book = Book::default();
    let in_session = |session: &str| {
        let mut asked = core(Some("call_1"));
        asked.provenance.session = Some(session.to_owned());
        asked
    };
    let first = opened(book.admit(in_session("one"), Policy::default(), "one", 0.0));
    let second = opened(book.admit(in_session("two"), Policy::default(), "two", 0.0));
    let mut other_questions = core(Some("call_1"));
    let input = json!({"questions": [{"question": "Ship it?", "header": "Ship",
        "multiSelect": false, "options": [{"label": "Yes"}, {"label": "No"}]}]});
    other_questions.ask = validate(&input).expect("valid").ask;
    let third = opened(book.admit(other_questions, Policy::default(), "three", 0.0));
    assert_eq!(book.len(), 3);
    // Answering the first reaches its own agent only.
    book.select(first);
    book.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    book.edit(Edit::Pick { question: 1, pick: Pick::Option(0) });
    let settled = book.edit(Edit::Submit).expect("answered");
    assert_eq!(settled.replies, vec!["one"]);
    assert!(book.get(second).is_some() && book.get(third).is_some());
    // The same session asking the same question again is still one request.
    let again = book.admit(in_session("two"), Policy::default(), "two again", 1.0);
    assert!(matches!(again, Admission::Joined(joined) if joined == second));
}

#[test]
fn requests_without_a_tool_use_id_are_never_merged() {
    let mut book = Book::default();
    opened(book.admit(core(None), Policy::default(), "a", 0.0));
    opened(book.admit(core(None), Policy::default(), "b", 0.0));
    assert_eq!(book.len(), 2);
}

#[test]
fn the_first_request_is_current_and_the_next_one_follows_when_it_ends() {
    let mut book = Book::default();
    let first = opened(book.admit(core(Some("t1")), Policy::default(), "a", 0.0));
    let second = opened(book.admit(core(Some("t2")), Policy::default(), "b", 0.0));
    assert_eq!(book.current().map(Open::id), Some(first));
    assert!(book.select(second));
    assert!(!book.select(RequestId::next()), "a request that is not open cannot be picked");
    let withdrawn = book.withdraw("t2").expect("withdrawn");
    assert_eq!((withdrawn.outcome, withdrawn.ending), (Outcome::Withdrawn, Ending::Withdrawn));
    assert_eq!(book.current().map(Open::id), Some(first));
    assert!(book.withdraw("t2").is_none(), "withdrawn once");
    let elsewhere = book.settled_elsewhere("t1", "answered in another window").expect("gone");
    assert_eq!(elsewhere.ending, Ending::Elsewhere { how: "answered in another window".into() });
    assert!(book.is_empty());
}

#[test]
fn closing_ends_everything_with_one_outcome_for_every_handle() {
    let mut book = Book::default();
    book.admit(core(Some("t1")), Policy::default(), "a", 0.0);
    book.admit(core(Some("t1")), Policy::default(), "a-again", 0.0);
    book.admit(core(Some("t2")), Policy::default(), "b", 0.0);
    let closed = Outcome::declined("closed");
    let settled = book.close_all(&closed);
    let replies: Vec<_> = settled.iter().flat_map(|s| s.replies.clone()).collect();
    assert_eq!(replies, vec!["a", "a-again", "b"]);
    assert!(settled.iter().all(|s| s.outcome == closed && s.ending == Ending::Closed));
    assert!(book.is_empty() && book.current().is_none());
}

#[test]
fn a_countdown_ends_only_its_own_request_and_stay_stops_every_countdown() {
    let mut book = Book::default();
    let timed = Policy { timeout_secs: Some(30), ..Policy::default() };
    let quick = opened(book.admit(core(Some("t1")), timed.clone(), "a", 0.0));
    let later = Policy { timeout_secs: Some(60), ..Policy::default() };
    opened(book.admit(core(Some("t2")), later, "b", 0.0));
    opened(book.admit(core(Some("t3")), Policy::default(), "c", 0.0));
    assert_eq!(book.next_deadline(), Some(30.0));
    let nobody_typing = |_: RequestId, _: usize, _: TextField| false;
    assert!(book.expire(29.9, &nobody_typing).is_empty());
    let expired = book.expire(30.0, &nobody_typing);
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].open.id(), quick);
    assert_eq!(expired[0].outcome.kind(), "timed_out");
    book.stay();
    assert!(!book.counting_down());
    assert!(book.expire(1_000.0, &nobody_typing).is_empty(), "the user is here");
    // Another window extends t2 again: its countdown runs from now.
    book.countdown_changed("t2", 1_000.0, Some(60));
    assert_eq!(book.next_deadline(), Some(1_060.0));
    assert_eq!(book.len(), 2);
}

#[test]
fn at_the_deadline_a_box_being_typed_in_is_left_out_and_named() {
    let mut book = Book::default();
    let timed = Policy { timeout_secs: Some(5), ..Policy::default() };
    let id = opened(book.admit(core(Some("t1")), timed, "a", 0.0));
    book.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    book.edit(Edit::SetOtherText { question: 1, text: "Only on Fridays".into() });
    let typing = |request: RequestId, question: usize, field: TextField| {
        request == id && question == 1 && field == TextField::Other
    };
    let settled = book.expire(5.0, &typing).pop().expect("expired");
    assert_eq!(
        settled.ending,
        Ending::Deadline { unsent: vec!["Deploy (Other): Only on Fridays".into()] }
    );
    let Outcome::TimedOut(timed_out) = &settled.outcome else { panic!("{:?}", settled.outcome) };
    assert_eq!(timed_out.still_typing.len(), 1);
}

#[test]
fn a_page_pauses_and_extends_a_countdown_and_huge_extensions_never_panic() {
    let mut book = Book::default();
    let timed = Policy { timeout_secs: Some(10), ..Policy::default() };
    let id = opened(book.admit(core(Some("t1")), timed, "a", 0.0));
    let extend = |secs| crate::protocol::web::TimeoutChange::Extended { secs };
    assert_eq!(book.change_countdown(id, 2.0, extend(60)), Ok(Some(68.0)));
    let paused = crate::protocol::web::TimeoutChange::Paused;
    assert_eq!(book.change_countdown(id, 3.0, paused), Ok(None));
    assert!(!book.counting_down());
    // Added time after a pause counts from then, and the time told is everything given.
    assert_eq!(book.change_countdown(id, 100.0, extend(5)), Ok(Some(5.0)));
    assert_eq!(book.get(id).map(Open::given_secs), Some(75));
    assert!(book.change_countdown(id, 100.0, extend(u64::MAX)).is_ok());
    assert_eq!(book.get(id).map(Open::given_secs), Some(u64::MAX));
    let untimed = opened(book.admit(core(Some("t2")), Policy::default(), "b", 0.0));
    assert_eq!(book.change_countdown(untimed, 0.0, paused), Err(NoCountdown));
    assert_eq!(book.change_countdown(RequestId::next(), 0.0, paused), Err(NoCountdown));
}

#[test]
fn an_asker_that_leaves_takes_only_its_own_handle_and_the_last_one_withdraws_the_request() {
    let mut book = Book::default();
    let first = core(Some("t1"));
    let first_asker = first.id;
    let again = core(Some("t1"));
    let again_asker = again.id;
    let id = opened(book.admit(first, Policy::default(), "first", 0.0));
    book.admit(again, Policy::default(), "again", 0.0);
    assert!(book.leave(first_asker).is_none(), "someone still waits");
    assert!(book.get(id).is_some());
    assert!(book.leave(first_asker).is_none(), "left once");
    let settled = book.leave(again_asker).expect("the last one withdraws it");
    assert_eq!((settled.outcome, settled.ending), (Outcome::Withdrawn, Ending::Withdrawn));
    assert_eq!(settled.replies, vec!["again"]);
    assert!(book.is_empty());
}

/// One draft per question of `asked`, each picking its second option.
fn second_option_everywhere(asked: &Core) -> Vec<Draft> {
    let pick = |question| {
        let mut draft = Draft::default();
        draft.pick(question, Pick::Option(1));
        draft
    };
    asked.ask.questions().iter().map(pick).collect()
}

/// Issue 24 item 6: a preset the user never confirmed is not their answer when the time runs out.
#[test]
fn an_unconfirmed_preset_at_the_deadline_is_timed_out_and_told_as_unconfirmed() {
    let asked = core(Some("t1"));
    let preset = second_option_everywhere(&asked);
    let mut book = Book::default();
    let policy = Policy { preset, timeout_secs: Some(10), ..Policy::default() };
    opened(book.admit(asked, policy, "agent", 0.0));
    let nobody_typing = |_: RequestId, _: usize, _: TextField| false;
    let settled = book.expire(10.0, &nobody_typing).pop().expect("expired");
    let Outcome::TimedOut(timed_out) = &settled.outcome else {
        panic!("an untouched preset is not the user's answer: {:?}", settled.outcome)
    };
    assert_eq!(timed_out.picked, None, "the user picked nothing");
    let unconfirmed = timed_out.unconfirmed.as_ref().expect("the preset is told apart");
    assert_eq!(unconfirmed.from, crate::protocol::Prefill::Preset);
    assert!(
        timed_out.message().ends_with(
            "Answers were filled in in advance for the user to confirm, but nobody confirmed \
             them: \"Which database?\"=\"SQLite\", \"Deploy?\"=\"No\". They are not the user's \
             answers."
        ),
        "{}",
        timed_out.message()
    );
}

/// Issue 24 item 6: what the user did in this showing counts, question by question; a preset
/// they went through with Enter is confirmed.
#[test]
fn a_preset_counts_at_the_deadline_once_the_user_confirms_each_question() {
    let asked = core(Some("t1"));
    let mut second = Draft::default();
    second.pick(&asked.ask.questions()[1], Pick::Option(0));
    let policy = Policy {
        preset: vec![Draft::default(), second],
        timeout_secs: Some(10),
        ..Policy::default()
    };
    let nobody_typing = |_: RequestId, _: usize, _: TextField| false;

    let mut book = Book::default();
    opened(book.admit(asked.clone(), policy.clone(), "agent", 0.0));
    book.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    let settled = book.expire(10.0, &nobody_typing).pop().expect("expired");
    let Outcome::TimedOut(timed_out) = &settled.outcome else {
        panic!("question 2 was never confirmed: {:?}", settled.outcome)
    };
    let picked = timed_out.picked.as_ref().expect("the user's pick is told");
    assert_eq!(
        picked.answers_json(),
        json!({"Which database?": "PostgreSQL"}).as_object().cloned().expect("object")
    );
    let unconfirmed = timed_out.unconfirmed.as_ref().expect("the preset is told apart");
    assert_eq!(
        unconfirmed.answers.answers_json(),
        json!({"Deploy?": "Yes"}).as_object().cloned().expect("object")
    );

    let mut book = Book::default();
    opened(book.admit(asked, policy, "agent", 0.0));
    book.edit(Edit::Pick { question: 0, pick: Pick::Option(0) });
    book.edit(Edit::NextTab);
    book.edit(Edit::Advance);
    let settled = book.expire(10.0, &nobody_typing).pop().expect("expired");
    let Outcome::Answered(answers) = &settled.outcome else {
        panic!("every question is the user's own now: {:?}", settled.outcome)
    };
    assert_eq!(answers.answers_json().len(), 2);
}

/// Issue 24 item 5: a draft restored after a crash is not the user's answer in this showing.
#[test]
fn a_restored_draft_at_the_deadline_is_timed_out_and_told_as_restored() {
    let asked = core(Some("t1"));
    let restored = second_option_everywhere(&asked);
    let policy = Policy {
        preset: restored,
        prefill: crate::protocol::Prefill::SavedDraft,
        timeout_secs: Some(10),
        ..Policy::default()
    };
    let mut book = Book::default();
    opened(book.admit(asked, policy, "agent", 0.0));
    let nobody_typing = |_: RequestId, _: usize, _: TextField| false;
    let settled = book.expire(10.0, &nobody_typing).pop().expect("expired");
    let Outcome::TimedOut(timed_out) = &settled.outcome else {
        panic!("a restored pick is not an answer given in this showing: {:?}", settled.outcome)
    };
    assert_eq!(
        timed_out.unconfirmed.as_ref().map(|unconfirmed| unconfirmed.from),
        Some(crate::protocol::Prefill::SavedDraft)
    );
    assert!(
        timed_out.message().contains("did not confirm it this time"),
        "{}",
        timed_out.message()
    );
}

/// Issue 24 item 7: an empty form sent with `--answers … --submit` is not an answer, by the
/// same rule as the window's Submit.
#[test]
fn an_empty_preset_submitted_is_nothing_answered_unless_the_session_takes_skipped() {
    let mut book = Book::default();
    let empty = Policy { preset: Vec::new(), submit: true, ..Policy::default() };
    let Admission::Decided { outcome, .. } = book.admit(core(None), empty.clone(), "agent", 0.0)
    else {
        panic!("decided")
    };
    assert_eq!(outcome, Outcome::nothing_answered());
    let skipped = Policy { mark_skipped: true, ..empty };
    let Admission::Decided { outcome: Outcome::Answered(answers), .. } =
        book.admit(core(None), skipped, "agent", 0.0)
    else {
        panic!("skipped is an answer the session takes")
    };
    assert_eq!(answers.entries().len(), 2);
    assert!(answers.entries().iter().all(|entry| entry.unanswered == Some("skipped")));
}

// The drivers' steps ([`Book::take`], [`Settled::deliver`], [`Book::answer_from_page`]) and the
// approvals ([`approval::Approvals`]), with handles and a journal that write what they hear into
// one log.

use std::cell::RefCell;
use std::rc::Rc;

use crate::book::approval::{Approvals, Asked, WITHDRAWN_BY_AGENT};
use crate::book::journal::Journal;
use crate::book::session::{SessionAction, SessionEffect};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::web::{BrowserMessage, PermissionEnd};

type Log = Rc<RefCell<Vec<String>>>;

/// A reply handle named `name`: what it is sent goes into the log, and so does being dropped
/// without an answer (natively a `Responder` then tells the agent the window closed).
#[derive(Debug)]
struct Heard {
    name: &'static str,
    log: Log,
    sent: bool,
    /// Issue 31: where who answered goes, when the test asks ([`witnessed`]).
    witness: Option<Log>,
}

fn handle(name: &'static str, log: &Log) -> Heard {
    Heard { name, log: Rc::clone(log), sent: false, witness: None }
}

/// A handle that also writes who answered (told before the answer) into `witness`.
fn witnessed(name: &'static str, log: &Log, witness: &Log) -> Heard {
    Heard { name, log: Rc::clone(log), sent: false, witness: Some(Rc::clone(witness)) }
}

/// What a handle heard, in a few words for the log.
trait Words {
    fn words(&self) -> String;
}

impl Words for PermissionDecision {
    fn words(&self) -> String {
        match self {
            PermissionDecision::AllowOnce => "allow".to_owned(),
            PermissionDecision::AllowAlways { suggestion } => {
                format!("allow always: {}", suggestion.label())
            }
            PermissionDecision::Deny { message } => format!("deny: {message}"),
            PermissionDecision::DenyAlways { rule, message } => {
                format!("deny always ({}): {message}", rule.name)
            }
            PermissionDecision::HandBack => "hand back".to_owned(),
            PermissionDecision::Fill { content } => format!("fill {content:?}"),
        }
    }
}

impl Words for Outcome {
    fn words(&self) -> String {
        self.kind().to_string()
    }
}

impl<T: Words> ReplyHandle<T> for Heard {
    fn send(mut self, answer: T) {
        self.sent = true;
        self.log.borrow_mut().push(format!("{}: {}", self.name, answer.words()));
    }

    fn answered_by(&mut self, answered_by: &str) {
        if let Some(witness) = &self.witness {
            let heard = self.log.borrow().len();
            witness.borrow_mut().push(format!("{}: by {answered_by} (after {heard})", self.name));
        }
    }
}

impl Drop for Heard {
    fn drop(&mut self) {
        if !self.sent {
            self.log.borrow_mut().push(format!("{}: dropped", self.name));
        }
    }
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

fn tool_call(request_id: &str) -> PermissionRequest {
    PermissionRequest {
        request_id: request_id.into(),
        tool_name: "Bash".into(),
        input: json!({"command": "ls"}),
        tool_use_id: Some(format!("toolu_{request_id}")),
        title: None,
        description: None,
        reason: None,
        agent_id: None,
        ..Default::default()
    }
}

/// Asks for `request_id` from `agent` with a fresh id; returns what the approvals did.
fn ask(approvals: &mut Approvals<Heard>, request_id: &str, agent: &str, reply: Heard) -> Asked {
    let provenance = Provenance::new(agent, None);
    approvals.ask(RequestId::next(), tool_call(request_id), provenance, reply)
}

fn opened_card(asked: Asked) -> RequestId {
    match asked {
        Asked::Opened(id) => id,
        Asked::Joined(_) => panic!("expected a new card"),
    }
}

#[test]
fn an_approval_is_decided_once_and_its_handle_hears_the_decision() {
    let log = Log::default();
    let mut approvals = Approvals::default();
    let id = opened_card(ask(&mut approvals, "r1", "claude", handle("agent", &log)));
    assert_eq!(approvals.cards().map(|card| card.id).collect::<Vec<_>>(), vec![id]);
    let allowed = approvals.apply(&SessionAction::AllowPermission(id));
    let decision = PermissionDecision::AllowOnce;
    assert_eq!(allowed, Some(SessionEffect::Decided { id, decision }));
    assert_eq!(taken(&log), ["agent: allow"]);
    assert!(approvals.is_empty());
    // A second click (or the other button) on a card already decided sends nothing more.
    assert_eq!(approvals.apply(&SessionAction::DenyPermission(id)), None);
    assert_eq!(approvals.decide("r1", PermissionDecision::AllowOnce), None);
    assert_eq!(taken(&log), Vec::<String>::new());
}

#[test]
fn a_deny_carries_the_words_typed_on_its_card_only() {
    let log = Log::default();
    let mut approvals = Approvals::default();
    let first = opened_card(ask(&mut approvals, "r1", "claude", handle("first", &log)));
    let second = opened_card(ask(&mut approvals, "r2", "claude", handle("second", &log)));
    let text = "use the dry run".to_owned();
    assert_eq!(approvals.apply(&SessionAction::SetDenyMessage { id: first, text }), None);
    approvals.apply(&SessionAction::DenyPermission(second));
    approvals.apply(&SessionAction::DenyPermission(first));
    assert_eq!(
        taken(&log),
        [
            "second: deny: The user denied this tool call.",
            "first: deny: The user denied this tool call and said: use the dry run",
        ]
    );
    // Actions that are the session's, not the cards', change nothing here.
    assert_eq!(approvals.apply(&SessionAction::Stop), None);
}

#[test]
fn a_withdrawn_approval_tells_its_handle_once_and_a_decision_after_it_goes_nowhere() {
    let log = Log::default();
    let mut approvals = Approvals::default();
    let id = opened_card(ask(&mut approvals, "r1", "claude", handle("agent", &log)));
    assert_eq!(approvals.withdraw("r1"), Some(id));
    assert_eq!(taken(&log), [format!("agent: deny: {WITHDRAWN_BY_AGENT}")]);
    assert!(approvals.is_empty());
    // The card was on screen when the agent took it back: the user's click comes too late, in
    // this window or a page, and the agent hears nothing more.
    assert_eq!(approvals.apply(&SessionAction::AllowPermission(id)), None);
    assert_eq!(approvals.decide("r1", PermissionDecision::AllowOnce), None);
    assert_eq!(approvals.withdraw("r1"), None);
    assert_eq!(approvals.withdraw("never asked"), None);
    assert_eq!(taken(&log), Vec::<String>::new());
}

#[test]
fn the_same_request_id_asked_again_is_one_card_and_every_handle_hears_its_decision() {
    let log = Log::default();
    let mut approvals = Approvals::default();
    let id = opened_card(ask(&mut approvals, "r1", "claude", handle("first", &log)));
    assert_eq!(ask(&mut approvals, "r1", "claude", handle("again", &log)), Asked::Joined(id));
    assert_eq!(approvals.len(), 1, "shown once however often it is asked");
    let words = "The user denied this tool call.".to_owned();
    let end = approvals.decide("r1", PermissionDecision::Deny { message: words });
    assert_eq!(end, Some(PermissionEnd::Denied));
    assert_eq!(
        taken(&log),
        [
            "first: deny: The user denied this tool call.",
            "again: deny: The user denied this tool call."
        ]
    );
}

#[test]
fn two_agents_asking_at_once_each_hear_only_their_own_decision() {
    let log = Log::default();
    let mut approvals = Approvals::default();
    let claude = opened_card(ask(&mut approvals, "inbox-1-r1", "claude", handle("claude", &log)));
    let codex = opened_card(ask(&mut approvals, "inbox-2-r1", "codex", handle("codex", &log)));
    assert_ne!(claude, codex);
    let sources: Vec<&str> =
        approvals.cards().map(|card| card.provenance.source.as_str()).collect();
    assert_eq!(sources, ["claude", "codex"], "oldest first");
    // A page decides codex's card by the request id it was shown under.
    assert_eq!(
        approvals.decide("inbox-2-r1", PermissionDecision::AllowOnce),
        Some(PermissionEnd::Allowed)
    );
    assert_eq!(taken(&log), ["codex: allow"]);
    assert_eq!(approvals.cards().map(|card| card.id).collect::<Vec<_>>(), vec![claude]);
    // Codex withdrawing its own (already decided) card leaves claude's alone.
    assert_eq!(approvals.withdraw("inbox-2-r1"), None);
    assert_eq!(approvals.len(), 1);
    approvals.apply(&SessionAction::DenyPermission(claude));
    assert_eq!(taken(&log), ["claude: deny: The user denied this tool call."]);
}

#[test]
fn approvals_that_end_undecided_deny_with_why_or_drop_their_handles_exactly_once() {
    let log = Log::default();
    let mut approvals = Approvals::default();
    ask(&mut approvals, "r1", "claude", handle("one", &log));
    ask(&mut approvals, "r2", "claude", handle("two", &log));
    // askpane stopped: a tool call is never allowed for want of a person; each hears why.
    let closed = approvals.close_all("askpane was stopped (SIGTERM).");
    assert_eq!(closed.len(), 2);
    assert_eq!(
        taken(&log),
        ["one: deny: askpane was stopped (SIGTERM).", "two: deny: askpane was stopped (SIGTERM)."]
    );
    // The window closed: every handle is dropped (natively its own Drop tells the agent).
    ask(&mut approvals, "r3", "claude", handle("three", &log));
    approvals.clear();
    assert_eq!(taken(&log), ["three: dropped"]);
    // The approvals themselves dropped with a card waiting: its handle goes once, and one that
    // was decided before is not dropped again.
    let mut approvals = Approvals::default();
    let decided = opened_card(ask(&mut approvals, "r4", "claude", handle("four", &log)));
    ask(&mut approvals, "r5", "claude", handle("five", &log));
    approvals.apply(&SessionAction::AllowPermission(decided));
    drop(approvals);
    assert_eq!(taken(&log), ["four: allow", "five: dropped"]);
}

/// A journal that writes what it is told into the log.
struct Recorded(Log);

impl Journal for Recorded {
    fn restore(&self, _: &Core, _: &mut Policy) {}
    fn opened(&self, core: &Core) {
        self.0.borrow_mut().push(format!("opened {}", core.ask.title()));
    }
    fn draft_changed(&self, _: &Core, _: usize, _: &Form) {}
    fn settled(&self, core: &Core, outcome: &Outcome) {
        self.0.borrow_mut().push(format!("settled {}: {}", core.ask.title(), outcome.kind()));
    }
}

#[test]
fn taking_a_request_records_it_and_answers_a_decided_one_at_once() {
    let log = Log::default();
    let journal = Recorded(Rc::clone(&log));
    let mut book = Book::default();
    let decline = Policy { decline: Some("not now".into()), ..Policy::default() };
    let taken_in = book.take(core(None), decline, handle("decided", &log), 0.0, Some(&journal));
    assert_eq!(taken_in, None);
    assert_eq!(taken(&log), ["settled Database: declined", "decided: declined"]);
    let asked = core(Some("toolu_1"));
    let again = Core { id: RequestId::next(), ..asked.clone() };
    let id = book.take(asked, Policy::default(), handle("first", &log), 0.0, Some(&journal));
    assert!(id.is_some());
    // The same question again joins: nothing new is opened or recorded.
    let joined = book.take(again, Policy::default(), handle("again", &log), 0.0, Some(&journal));
    assert_eq!(joined, None);
    assert_eq!(taken(&log), ["opened Database"]);
    // Without a journal the handle still hears it.
    let settled = book.withdraw("toolu_1").expect("open");
    let delivered = settled.deliver(None);
    assert_eq!((delivered.outcome, delivered.ending), (Outcome::Withdrawn, Ending::Withdrawn));
    assert_eq!(taken(&log), ["first: withdrawn", "again: withdrawn"]);
    let id = book.take(core(None), Policy::default(), handle("third", &log), 0.0, None);
    let settled = book.settle(id.expect("opened"), Outcome::closed(), Ending::Closed);
    settled.expect("open").deliver(Some(&journal));
    assert_eq!(taken(&log), ["settled Database: declined", "third: declined"]);
}

#[test]
fn a_page_answer_is_made_an_outcome_by_the_book_with_the_request_s_own_rules() {
    let mut book = Book::default();
    let skipped = Policy { mark_skipped: true, ..Policy::default() };
    let id = opened(book.admit(core(Some("toolu_1")), skipped, "agent", 0.0));
    let seen = BrowserMessage::Seen { tool_use_id: "toolu_1".into() };
    assert!(book.answer_from_page(id, seen).expect("fine").is_none());
    // The page answered the first question only (questions by index, options by number): the
    // session takes "skipped", so the second is sent as skipped, as the window's Submit would.
    let body = serde_json::from_value(json!({"answers": {"0": "2"}})).expect("a form");
    let answer = BrowserMessage::Answer { tool_use_id: "toolu_1".into(), body };
    let settled = book.answer_from_page(id, answer).expect("fits").expect("settled");
    let Outcome::Answered(answers) = &settled.outcome else { panic!("answered") };
    let unanswered: Vec<Option<&str>> =
        answers.entries().iter().map(|entry| entry.unanswered).collect();
    assert_eq!(unanswered, [None, Some("skipped")]);
    assert_eq!((settled.replies, settled.ending), (vec!["agent"], Ending::User));
    assert!(book.is_empty());
    // A hostile page's answer is refused and the request stays open.
    let id = opened(book.admit(core(Some("toolu_2")), Policy::default(), "agent", 0.0));
    let body = serde_json::from_value(json!({"answers": {"0": "9"}})).expect("a form");
    let bad = BrowserMessage::Answer { tool_use_id: "toolu_2".into(), body };
    assert!(book.answer_from_page(id, bad).is_err());
    assert_eq!(book.len(), 1);
}

#[test]
fn a_card_allows_always_only_with_a_rule_its_agent_suggested_and_hands_back_only_a_hook() {
    use crate::protocol::permission::{ApprovalOrigin, Suggestion, parse_suggestions};
    let log = Log::default();
    let mut approvals: Approvals<Heard> = Approvals::default();
    let suggested = json!([{"type": "addRules", "rules": [{"toolName": "Bash",
        "ruleContent": "npm test *"}], "behavior": "allow", "destination": "localSettings"}]);
    let hook_call = |request_id: &str| PermissionRequest {
        suggestions: parse_suggestions(Some(&suggested)),
        origin: ApprovalOrigin::Hook,
        ..tool_call(request_id)
    };
    let provenance = Provenance::new("hook", None);
    let id = opened_card(approvals.ask(
        RequestId::next(),
        hook_call("h1"),
        provenance.clone(),
        handle("hook", &log),
    ));
    // A rule the agent never suggested (a page could send any JSON) decides nothing.
    let forged = Suggestion::try_from(json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
        "behavior": "allow", "destination": "userSettings"}))
    .expect("a well-formed rule");
    let forged = PermissionDecision::AllowAlways { suggestion: forged };
    assert_eq!(approvals.decide("h1", forged), None);
    let beyond = SessionAction::AlwaysAllowPermission { id, suggestion: 1 };
    assert_eq!(approvals.apply(&beyond), None);
    assert!(taken(&log).is_empty(), "nothing was decided");
    let always = SessionAction::AlwaysAllowPermission { id, suggestion: 0 };
    assert!(matches!(approvals.apply(&always), Some(SessionEffect::Decided { .. })));
    assert_eq!(taken(&log), ["hook: allow always: Always allow `npm test *` in this project"]);

    // Handed back: the hook's own dialog decides.
    let id = opened_card(approvals.ask(
        RequestId::next(),
        hook_call("h2"),
        provenance,
        handle("hook", &log),
    ));
    assert!(approvals.apply(&SessionAction::HandBackPermission(id)).is_some());
    assert_eq!(taken(&log), ["hook: hand back"]);

    // A hosted session has no dialog to hand back to: the card stays until decided.
    let id = opened_card(ask(&mut approvals, "r1", "claude", handle("claude", &log)));
    assert_eq!(approvals.apply(&SessionAction::HandBackPermission(id)), None);
    assert_eq!(approvals.decide("r1", PermissionDecision::HandBack), None);
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals.decide("r1", PermissionDecision::AllowOnce), Some(PermissionEnd::Allowed));
    assert_eq!(taken(&log), ["claude: allow"]);
}

/// Issue 26: every card that ends is handed to the journal once, however it ended: decided in
/// the window or a page, withdrawn, timed out, closed with nobody deciding; a card asked twice
/// (joined) ends once, and a late decision adds nothing.
#[test]
fn every_ended_card_is_taken_once_with_how_it_ended() {
    use crate::protocol::permission::ApprovalOutcome;
    let log = Log::default();
    let mut approvals = Approvals::default();
    let clicked = opened_card(ask(&mut approvals, "r1", "claude", handle("a", &log)));
    ask(&mut approvals, "r1", "claude", handle("a-again", &log));
    ask(&mut approvals, "r2", "claude", handle("b", &log));
    ask(&mut approvals, "r3", "claude", handle("c", &log));
    ask(&mut approvals, "r4", "claude", handle("d", &log));
    ask(&mut approvals, "r5", "claude", handle("e", &log));
    approvals.apply(&SessionAction::AllowPermission(clicked));
    approvals.apply(&SessionAction::AllowPermission(clicked));
    let denied = PermissionDecision::Deny { message: "not now".into() };
    approvals.decide("r2", denied.clone());
    approvals.withdraw("r3");
    approvals.time_out("r4");
    approvals.time_out("r4");
    approvals.close_all("askpane was stopped");
    let ended: Vec<(String, ApprovalOutcome)> = approvals
        .take_ended()
        .into_iter()
        .map(|ended| (ended.request.request_id, ended.outcome))
        .collect();
    assert_eq!(
        ended,
        [
            ("r1".to_owned(), ApprovalOutcome::AllowedOnce),
            ("r2".to_owned(), ApprovalOutcome::Denied),
            ("r3".to_owned(), ApprovalOutcome::Withdrawn),
            ("r4".to_owned(), ApprovalOutcome::TimedOut),
            ("r5".to_owned(), ApprovalOutcome::NoHuman),
        ]
    );
    assert!(approvals.take_ended().is_empty(), "taken once");
    assert!(taken(&log).contains(&format!("d: deny: {}", crate::book::approval::TIMED_OUT)));
}

/// Issue 26 leftovers: an OpenCode card whose `--timeout` ran out (`askpane opencode` keeps the
/// deadline) ends as timed out for the journal, and its handle hears a hand-back: OpenCode is
/// sent nothing, and the request stays pending for its TUI.
#[test]
fn an_opencode_card_that_times_out_is_handed_back_and_ends_timed_out() {
    use crate::protocol::permission::{ApprovalOrigin, ApprovalOutcome};
    let log = Log::default();
    let mut approvals = Approvals::default();
    let mut request = tool_call("inbox-3-per_1");
    request.origin = ApprovalOrigin::OpenCode;
    let provenance = Provenance::new("opencode", None);
    approvals.ask(RequestId::next(), request, provenance, handle("opencode", &log));
    assert!(approvals.time_out("inbox-3-per_1").is_some());
    assert_eq!(taken(&log), ["opencode: hand back"]);
    let ended: Vec<ApprovalOutcome> =
        approvals.take_ended().into_iter().map(|ended| ended.outcome).collect();
    assert_eq!(ended, [ApprovalOutcome::TimedOut]);
    assert_eq!(ApprovalOutcome::TimedOut.as_str(), "timed_out", "as history writes it");
}

/// Issue 31: each handle is told who decided, before the decision, in history's words: the
/// window's click `window`, a page's `page`, a front end's its label; nobody when the card was
/// withdrawn or timed out.
#[test]
fn a_card_s_handles_hear_who_decided_it_before_the_decision() {
    let (log, witness) = (Log::default(), Log::default());
    let mut approvals = Approvals::default();
    let clicked = opened_card(ask(&mut approvals, "r1", "claude", witnessed("a", &log, &witness)));
    ask(&mut approvals, "r2", "claude", witnessed("b", &log, &witness));
    ask(&mut approvals, "r3", "claude", witnessed("c", &log, &witness));
    ask(&mut approvals, "r4", "claude", witnessed("d", &log, &witness));
    approvals.apply(&SessionAction::AllowPermission(clicked));
    approvals.decide("r2", PermissionDecision::AllowOnce);
    let by = "socket:@alice:example.org";
    let decided = approvals.decide_from_front_end("r3", PermissionDecision::AllowOnce, by);
    assert!(decided.is_ok(), "{decided:?}");
    approvals.withdraw("r4");
    assert_eq!(
        taken(&witness),
        [
            "a: by window (after 0)",
            "b: by page (after 1)",
            "c: by socket:@alice:example.org (after 2)"
        ]
    );
    assert_eq!(
        taken(&log),
        ["a: allow", "b: allow", "c: allow", "d: deny: Withdrawn by the agent."]
    );
    let ended: Vec<Option<String>> =
        approvals.take_ended().into_iter().map(|ended| ended.answered_by).collect();
    assert_eq!(ended, [Some("window".into()), Some("page".into()), Some(by.into()), None]);
}

/// Issue 31: a question's handles hear who answered before the outcome, only when a person did.
#[test]
fn a_question_s_handles_hear_who_answered_it_only_when_a_person_did() {
    let (log, witness) = (Log::default(), Log::default());
    let mut book: Book<Heard> = Book::default();
    for (tool_use_id, name) in [("t1", "a"), ("t2", "b"), ("t3", "c")] {
        let asked = core(Some(tool_use_id));
        let admission = book.admit(asked, Policy::default(), witnessed(name, &log, &witness), 0.0);
        assert!(matches!(admission, Admission::Opened(_)), "{admission:?}");
    }
    book.withdraw("t1").expect("t1 waits").deliver_by(None, Some("window"));
    // "Chat about this" in the window: the person's own answer.
    book.edit(Edit::Clarify).expect("t2 is current").deliver_by(None, Some("window"));
    for settled in book.close_all(&Outcome::declined("done")) {
        settled.deliver_by(None, Some("page"));
    }
    assert_eq!(taken(&log), ["a: withdrawn", "b: clarify", "c: declined"]);
    assert_eq!(taken(&witness), ["b: by window (after 1)"]);
}
