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
