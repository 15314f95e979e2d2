//! The plan page (issue 26) in the window, by accessible label and keyboard only: approve,
//! keep planning with two comments on two blocks and a note (the decision's message holds both
//! quotes and both comments), the input guard after the page appears, and `c` typed in the note
//! box types a "c".

use askpane::protocol::stream::{PermissionDecision, PermissionRequest};
use askpane::transport::{self, ApprovalEvent, Inbound, Provenance};
use crossbeam_channel::Receiver;
use egui::Key;
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use serde_json::json;

use crate::ui::{CTRL, Window, window};

const PLAN: &str = "# Greeting\n\nChange the greeting, then test.\n\n## Steps\n\n1. Change \
    greeting.txt to say hello world.\n2. Run the tests.\n";

/// A window showing the plan page for [`PLAN`], past the input guard; the decision arrives on
/// the receiver.
fn plan_page() -> (Window, Receiver<PermissionDecision>) {
    let (mut window, decision) = plan_page_unwaited();
    window.wait_out_key_grace();
    (window, decision)
}

/// The plan page drawn once: the next input arrives as it appears.
fn plan_page_unwaited() -> (Window, Receiver<PermissionDecision>) {
    let mut window = window();
    // The window has been up a while, idle: the plan appears in it.
    window.harness.step();
    window.wait_out_key_grace();
    let request = PermissionRequest {
        request_id: "plan-1".to_owned(),
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": PLAN, "planFilePath": "/home/dev/.claude/plans/snug-duckling.md"}),
        ..Default::default()
    };
    let (reply, decision) = transport::Responder::channel();
    let provenance = Provenance::new("claude", Some("shop".to_owned()));
    let ask =
        transport::PermissionAsk { id: transport::RequestId::next(), request, provenance, reply };
    assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask)))));
    window.harness.step();
    (window, decision)
}

fn letter(window: &mut Window, key: Key, text: &str) {
    window.press(key, Some(text));
}

#[test]
fn the_plan_page_shows_the_plan_its_outline_and_file() {
    let (window, _) = plan_page();
    assert!(window.has_label("Claude's plan"));
    assert!(window.has_label("/home/dev/.claude/plans/snug-duckling.md"));
    assert!(window.has_text_with(&["Change the greeting, then test."]));
    // The outline's headings are links to jump to.
    assert!(window.harness.query_by_role_and_label(Role::Link, "Steps").is_some());
    assert!(window.has_button("Approve"));
    assert!(window.has_button("Keep planning"));
}

#[test]
fn approve_with_the_keyboard_allows_once() {
    let (mut window, decision) = plan_page();
    letter(&mut window, Key::A, "a");
    assert_eq!(decision.try_recv(), Ok(PermissionDecision::AllowOnce));
}

#[test]
fn approve_then_accept_edits_adds_claude_codes_set_mode() {
    let (mut window, decision) = plan_page();
    window.click(Role::RadioButton, "then accept edits");
    window.click_button("Approve");
    let Ok(PermissionDecision::AllowAlways { suggestion }) = decision.try_recv() else {
        panic!("approved with accept edits")
    };
    assert_eq!(
        suggestion.raw(),
        &json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
    );
}

#[test]
fn keep_planning_sends_both_comments_with_their_quotes_and_the_note() {
    let (mut window, decision) = plan_page();
    // The cursor starts on the heading; j twice: the paragraph is block 1.
    letter(&mut window, Key::J, "j");
    letter(&mut window, Key::C, "c");
    window.type_text("Say why.");
    window.press(Key::Escape, None);
    // Down to "2. Run the tests." (block 4).
    for _ in 0..3 {
        letter(&mut window, Key::J, "j");
    }
    letter(&mut window, Key::C, "c");
    window.type_text("Only the unit tests.");
    window.press(Key::Escape, None);
    letter(&mut window, Key::N, "n");
    window.type_text("Also update the README.");
    window.press_with(CTRL, Key::Enter);
    let Ok(PermissionDecision::Deny { message }) = decision.try_recv() else { panic!("sent back") };
    assert_eq!(
        message,
        "The user did not approve this plan and wants you to keep planning. Their review:\n\n\
         > Change the greeting, then test.\n\nSay why.\n\n\
         > 2. Run the tests.\n\nOnly the unit tests.\n\n\
         Also update the README."
    );
}

#[test]
fn no_key_or_click_approves_as_the_page_appears() {
    let (mut window, decision) = plan_page_unwaited();
    let approve = window.harness.get_by_role_and_label(Role::Button, "Approve").rect().center();
    // A key and a click aimed at what was under the pointer, in the frame after the page
    // appeared (each frame is 0.25 s of the harness's clock).
    window.harness.input_mut().events.push(egui::Event::Key {
        key: Key::A,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
        repeat: false,
        physical_key: None,
    });
    window.click_at_as_eframe(approve);
    assert!(decision.try_recv().is_err(), "nothing decided in the grace");
    window.wait_out_key_grace();
    window.click_button("Approve");
    assert_eq!(decision.try_recv(), Ok(PermissionDecision::AllowOnce));
}

#[test]
fn c_typed_in_the_note_box_types_a_c() {
    let (mut window, decision) = plan_page();
    window.focus_box(Role::MultilineTextInput, "General note (optional)");
    letter(&mut window, Key::C, "c");
    letter(&mut window, Key::A, "a");
    assert!(decision.try_recv().is_err(), "a typed in a box approves nothing");
    let plan = window.app().state().plan().map(|(_, review)| review.clone()).expect("a plan");
    assert_eq!(plan.note, "ca");
    assert!(plan.comments.is_empty(), "no comment opened");
}

// ---------------------------------------------------------------------------------------------
// The plan as a card (issue 26 leftovers): the list, the session and the other requests stay.

/// Sends [`PLAN`] as a plan to review from project `shop` into `window`; drawn once.
fn ask_plan(window: &mut Window) -> Receiver<PermissionDecision> {
    let request = PermissionRequest {
        request_id: "plan-card".to_owned(),
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": PLAN}),
        tool_use_id: Some("toolu_plan_card".to_owned()),
        ..Default::default()
    };
    let (reply, decision) = transport::Responder::channel();
    let provenance = Provenance::new("claude", Some("shop".to_owned()));
    let ask =
        transport::PermissionAsk { id: transport::RequestId::next(), request, provenance, reply };
    assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask)))));
    window.harness.step();
    decision
}

/// The labels of the request list's entries, top to bottom.
fn list_entries(window: &Window) -> Vec<String> {
    window.list_entries(&[" · plan · ", " question"])
}

#[test]
fn a_plan_waits_in_the_list_beside_a_question_and_keeps_its_review_when_left() {
    let mut window = window();
    let question = window.ask(&crate::ui::database_tool_use("toolu_beside_plan"));
    let decision = ask_plan(&mut window);
    window.wait_out_key_grace();
    // Both listed, oldest first; the question, the oldest, is in front.
    let listed = list_entries(&window);
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed[0].contains("question"), "the question came first: {listed:?}");
    assert!(listed[1].starts_with("Plan: Greeting · askpane claude · plan · "), "{listed:?}");
    assert!(window.app().state().current().is_some(), "the question's form is shown");
    assert!(!window.has_label("Claude's plan"), "one item at a time");
    // Ctrl+PgDn: the plan, in the central panel, with the list still beside it.
    window.press_with(CTRL, Key::PageDown);
    window.wait_out_key_grace();
    assert!(window.has_label("Claude's plan"), "the plan is shown");
    assert_eq!(list_entries(&window).len(), 2, "the list stays beside the plan");
    assert!(window.app().state().current().is_none(), "the form is not shown beside it");
    // A comment and a note, by keyboard.
    letter(&mut window, Key::J, "j");
    letter(&mut window, Key::C, "c");
    window.type_text("Say why.");
    window.press(Key::Escape, None);
    letter(&mut window, Key::N, "n");
    window.type_text("Also the README.");
    window.press(Key::Escape, None);
    // Back to the question by keyboard, and to the plan again: the review is as it was left.
    window.press_with(CTRL, Key::PageDown);
    window.wait_out_key_grace();
    assert!(window.app().state().current().is_some(), "Ctrl+PgDn went back to the question");
    assert!(!window.has_label("Claude's plan"));
    window.press_with(CTRL, Key::PageUp);
    window.wait_out_key_grace();
    assert!(window.has_label("Claude's plan"));
    let review = window.app().state().plan().map(|(_, review)| review.clone()).expect("a plan");
    assert_eq!(review.note, "Also the README.");
    assert_eq!(review.comments.len(), 1, "{:?}", review.comments);
    assert_eq!((review.comments[0].block, review.comments[0].text.as_str()), (1, "Say why."));
    window.press_with(CTRL, Key::Enter);
    let Ok(PermissionDecision::Deny { message }) = decision.try_recv() else { panic!("sent back") };
    assert!(message.contains("Say why.") && message.contains("Also the README."), "{message}");
    // The question is back in front, untouched.
    window.wait_out_key_grace();
    assert!(window.app().state().current().is_some());
    assert!(question.outcome.try_recv().is_err(), "nothing was sent for the question");
}

#[test]
fn stop_and_end_session_stay_while_a_plan_waits() {
    let (sender, inbox) = transport::memory();
    let (commands, sent) = crossbeam_channel::unbounded();
    let harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::system_fonts()))
        .build_eframe(move |cc| {
            askpane::app::App::new(&cc.egui_ctx, inbox, askpane::app::AppOptions::default())
        });
    let mut window = Window { harness, sender };
    window.harness.step();
    let session = transport::SessionKey::Hosted(7);
    let hosted = transport::SessionInbound::Hosted {
        session,
        label: "claude · shop".to_owned(),
        prompt: Some("Plan the greeting.".to_owned()),
        commands,
    };
    assert!(window.sender.send(Inbound::Session(hosted)));
    let _decision = ask_plan(&mut window);
    window.wait_out_key_grace();
    assert!(window.has_label("Claude's plan"), "the plan is shown");
    window.click_button("Stop");
    assert!(matches!(sent.try_recv(), Ok(transport::SessionCommand::Interrupt)));
    window.click_button("End session");
    assert!(matches!(sent.try_recv(), Ok(transport::SessionCommand::End)));
}

#[test]
fn a_phone_lists_the_plan_under_all_waiting_and_shows_it_in_its_one_column() {
    let mut window = crate::ui::window_sized(400.0, 760.0);
    let _question = window.ask(&crate::ui::database_tool_use("toolu_phone_plan"));
    let _decision = ask_plan(&mut window);
    window.wait_out_key_grace();
    assert!(window.has_label("Questions (2)"), "the bar counts the plan");
    window.click_button("All waiting");
    let listed = list_entries(&window);
    assert_eq!(listed.len(), 2, "{listed:?}");
    let plan = listed.iter().find(|label| label.contains(" · plan · ")).expect("the plan's entry");
    window.click(Role::Button, &plan.clone());
    window.wait_out_key_grace();
    assert!(window.has_label("Claude's plan"), "the plan in the one column");
    assert!(window.has_button("Approve"));
}

#[test]
fn closing_the_inbox_window_counts_the_plan_beside_the_question() {
    let options = askpane::app::AppOptions { resident: true, ..Default::default() };
    let mut window = crate::ui::window_with(960.0, 680.0, options);
    let question = window.ask(&crate::ui::database_tool_use("toolu_count"));
    let decision = ask_plan(&mut window);
    window.wait_out_key_grace();
    window.request_close();
    assert!(
        window.has_text_with(&["1 question and 1 plan are waiting. They can keep waiting"]),
        "the dialog names both kinds"
    );
    window.click_button("Keep waiting in the background");
    assert!(question.outcome.try_recv().is_err() && decision.try_recv().is_err());
}

/// A window whose journal is a store in `dir` (as the inbox's is).
fn window_with_store(dir: &std::path::Path) -> Window {
    let (sender, inbox) = transport::memory();
    let store = askpane::store::Store::open_in(dir).expect("a store");
    let sink = askpane::store::DraftSink::start(store).expect("its writer");
    let harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(960.0, 680.0))
        .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::system_fonts()))
        .build_eframe(move |cc| {
            askpane::app::App::new(&cc.egui_ctx, inbox, askpane::app::AppOptions::default())
                .with_store(sink)
        });
    let mut window = Window { harness, sender };
    window.harness.step();
    window
}

#[test]
fn a_plans_comments_and_note_come_back_when_the_same_plan_is_asked_in_another_window() {
    let dir = crate::support::scratch_dir("plan-drafts-window");
    let mut first = window_with_store(&dir);
    let _decision = ask_plan(&mut first);
    first.wait_out_key_grace();
    letter(&mut first, Key::J, "j");
    letter(&mut first, Key::C, "c");
    first.type_text("Say why.");
    first.press(Key::Escape, None);
    letter(&mut first, Key::N, "n");
    first.type_text("Also the README.");
    first.press(Key::Escape, None);
    // The window goes without the plan decided (its journal writes what is pending as it goes).
    drop(first);
    let mut second = window_with_store(&dir);
    let decision = ask_plan(&mut second);
    second.wait_out_key_grace();
    let review = second.app().state().plan().map(|(_, review)| review.clone()).expect("a plan");
    assert_eq!(review.note, "Also the README.");
    assert_eq!(
        review.comments,
        vec![askpane::book::plan::PlanComment { block: 1, text: "Say why.".to_owned() }]
    );
    assert!(second.shown("Say why.") > 0, "the comment is drawn in its box");
    // Decided: the next window asked the same plan starts blank.
    second.press_with(CTRL, Key::Enter);
    assert!(matches!(decision.try_recv(), Ok(PermissionDecision::Deny { .. })));
    drop(second);
    let mut third = window_with_store(&dir);
    let _decision = ask_plan(&mut third);
    let review = third.app().state().plan().map(|(_, review)| review.clone()).expect("a plan");
    assert!(review.comments.is_empty() && review.note.is_empty(), "{review:?}");
}
