//! The window's promise, headless through egui_kittest: no answer the user did not give. Enter
//! picks only what is highlighted and never sends less than everything by itself; keys that
//! arrive as the window appears, regains focus or shows a new request are dropped; typing goes to
//! Other; a countdown tells the truth; "Chat about this" sends the dialog's own words; and the
//! layout holds up (long texts, a small window, the preview following the keyboard).

use askpane::app::state::{Countdown, Tab};
use askpane::protocol::outcome::{CLOSED_MESSAGE, NOTHING_ANSWERED_MESSAGE};
use askpane::protocol::{Draft, Outcome};
use egui::accesskit::Role;
use egui::{Event, Key, Modifiers, ViewportCommand};
use egui_kittest::kittest::{NodeT, Queryable};
use serde_json::{Value, json};

use crate::ui::{
    CTRL, DATABASE_QUESTION, Window, assert_nothing_sent, fixture_input, fixture_questions,
    open_fixture, outcome, reply, request, window, window_sized,
};

/// A key pressed in the very next frame (a quarter second of the harness's clock), released in
/// the frame after and not waited on: for keys that follow each other closely.
fn key_now(window: &mut Window, key: Key, modifiers: Modifiers, text: Option<&str>) {
    keys_now(window, &[(key, modifiers, text)]);
}

/// Several keys in the very next frame, in this order; their releases come with the next
/// frame's input, as a keyboard's do (a key never let go would make the next press of it a
/// repeat, which the window takes only from a key pressed in it).
fn keys_now(window: &mut Window, keys: &[(Key, Modifiers, Option<&str>)]) {
    let events = &mut window.harness.input_mut().events;
    for &(key, modifiers, text) in keys {
        events.push(Event::Key {
            key,
            pressed: true,
            modifiers,
            repeat: false,
            physical_key: None,
        });
        events.extend(text.map(|text| Event::Text(text.to_owned())));
    }
    window.harness.step();
    for &(key, _, _) in keys {
        window.harness.key_up(key);
    }
}

/// The current request's status of question `index`, as Review would show it.
fn status(window: &Window, index: usize) -> askpane::app::state::Status {
    window.app().state().current().expect("a request is open").status(index)
}

/// One multi-select question, nothing pre-chosen.
fn checks() -> Value {
    json!({"questions": [{"question": "Which checks should run?", "header": "Checks",
        "multiSelect": true, "options": [
            {"label": "Clippy", "description": "Lints"}, {"label": "Tests", "description": "All"}]}]})
}

// ---------------------------------------------------------------------------------------------
// Enter

#[test]
fn enter_picks_the_highlighted_option_and_moves_on() {
    let (mut window, asked) = open_fixture("database");
    window.press(Key::ArrowDown, None);
    window.press(Key::ArrowDown, None);
    window.press(Key::Enter, None);
    assert_eq!(
        status(&window, 0),
        askpane::app::state::Status::Answered("SQLite".into()),
        "Enter chose the highlighted row"
    );
    assert_eq!(window.tab(), Some(Tab::Review), "and moved on");
    assert_nothing_sent(&asked);
    window.press(Key::Enter, None);
    assert_eq!(
        reply(&asked.envelope, &asked.outcome),
        json!({"questions": fixture_questions("database"),
            "answers": {DATABASE_QUESTION: "SQLite"}, "annotations": {}})
    );
}

#[test]
fn enter_again_and_again_never_sends_an_unfinished_form() {
    let (mut window, asked) = open_fixture("four-questions");
    for _ in 0..9 {
        window.press(Key::Enter, None);
    }
    // Enter chose the highlighted option of each single-select question, moved past the
    // multi-select one, and on Review only ever asked, then went back.
    assert_nothing_sent(&asked);
    let pending = window.app().state().current().expect("still open");
    assert_eq!(pending.missing(), vec![2], "only the multi-select question is unanswered");
    assert!(
        window.has_button("Submit anyway"),
        "Review asks, and Enter answered that by going back"
    );
    // Only the explicit chord sends less than everything.
    window.press_with(CTRL, Key::Enter);
    let answers = reply(&asked.envelope, &asked.outcome)["answers"].clone();
    assert_eq!(
        answers,
        json!({
            "How should users authenticate with the new admin dashboard?":
                "OAuth via GitHub (Recommended)",
            "Where should the admin dashboard be deployed?": "Fly.io",
            "Which log format should the dashboard's server emit?": "JSON lines"
        })
    );
}

#[test]
fn submitting_nothing_is_sent_as_what_it_is_never_as_an_answer() {
    let mut window = window();
    let asked = window.ask(&checks());
    // Enter: on to Review; Enter: "Send without answers?"; Enter: back; … six times.
    for _ in 0..6 {
        window.press(Key::Enter, None);
    }
    assert_nothing_sent(&asked);
    assert!(window.has_button("Send without answers"));
    assert!(window.has_text_with(&["No question is answered"]));
    window.click_button("Send without answers");
    let outcome = outcome(&asked);
    assert_eq!(outcome, Outcome::nothing_answered());
    assert_eq!(
        asked.envelope.reply(&outcome),
        Some(json!({"outcome": "declined", "message": NOTHING_ANSWERED_MESSAGE}))
    );
    // The receipt says what it was, and what the model reads.
    assert!(window.has_text_with(&["declined"]));
    assert!(window.has_text_with(&[NOTHING_ANSWERED_MESSAGE]));
}

#[test]
fn enter_on_an_empty_other_puts_the_keyboard_in_its_box() {
    let (mut window, asked) = open_fixture("database");
    for _ in 0..4 {
        window.press(Key::ArrowDown, None);
    }
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Question(0)), "an empty Other is no answer");
    assert!(window.answer_box().is_focused());
    assert_nothing_sent(&asked);
}

// ---------------------------------------------------------------------------------------------
// Keys the user did not mean for askpane

#[test]
fn keys_typed_as_the_question_appears_are_dropped() {
    let mut window = window();
    let (request, receiver) = request(&fixture_input("database"));
    let asked = window.send_unwaited(request, receiver);
    // Typed a moment before, aimed at a terminal: a "3" and Ctrl+Enter arrive with the window.
    keys_now(&mut window, &[(Key::Num3, Modifiers::NONE, Some("3")), (Key::Enter, CTRL, None)]);
    window.harness.run();
    assert!(!window.is_on(Role::RadioButton, "SQLite"), "the 3 chose nothing");
    assert!(
        window.harness.query_by_role_and_label(Role::MultilineTextInput, "Your answer").is_some()
    );
    assert_eq!(window.answer_box().value().as_deref(), Some(""), "nor was it typed");
    assert_nothing_sent(&asked);
    // A moment later the keys are the user's.
    window.wait_out_key_grace();
    window.press_digit(3);
    assert!(window.is_on(Role::RadioButton, "SQLite"));
}

#[test]
fn keys_arriving_with_the_focus_are_dropped() {
    let (mut window, asked) = open_fixture("database");
    // The user clicks back into the window while still typing: the key comes with the focus.
    window.harness.event(Event::WindowFocused(true));
    window.press_digit(2);
    assert!(!window.is_on(Role::RadioButton, "MySQL"));
    window.wait_out_key_grace();
    window.press_digit(2);
    assert!(window.is_on(Role::RadioButton, "MySQL"));
    assert_nothing_sent(&asked);
}

/// Keys repeating in the very next frame, each held down since its press (`repeat`: the
/// keyboard's own repeat, 25 a second once held 0.66 s on X11), with the text each types.
fn repeats_now(window: &mut Window, keys: &[(Key, Option<&str>)]) {
    let events = &mut window.harness.input_mut().events;
    for &(key, text) in keys {
        events.push(Event::Key {
            key,
            pressed: true,
            modifiers: Modifiers::NONE,
            repeat: true,
            physical_key: None,
        });
        events.extend(text.map(|text| Event::Text(text.to_owned())));
    }
    window.harness.step();
}

/// Issue 25: a key held down since before the window appeared repeats on past the key grace,
/// as long as it is held; a repeat of a press the window never took is no more the user's
/// than the press was. (On Xvfb a Return left held down by a test answered "Red" this way,
/// 0.66 s after the press, once the grace of the window it reached ran out.)
#[test]
fn a_key_held_since_before_the_window_appeared_never_acts_however_long_it_repeats() {
    let mut window = window();
    let (request, receiver) = request(&fixture_input("database"));
    let asked = window.send_unwaited(request, receiver);
    // Enter and "3" went down in another window; here only their repeats arrive, from the
    // first frame on, for 3 s (a harness step is 0.25 s).
    for _ in 0..12 {
        repeats_now(&mut window, &[(Key::Enter, None), (Key::Num3, Some("3"))]);
    }
    window.harness.run();
    assert_eq!(window.tab(), Some(Tab::Question(0)), "no repeated Enter moved on");
    assert!(!window.is_on(Role::RadioButton, "SQLite"), "no repeated 3 chose");
    assert_eq!(window.answer_box().value().as_deref(), Some(""), "nor was it typed");
    assert_nothing_sent(&asked);
    // Let go, then pressed here and held: the press and its repeats are the user's.
    window.harness.key_up(Key::Enter);
    window.harness.key_up(Key::Num3);
    window.harness.run();
    window.press_digit(3);
    key_now(&mut window, Key::Enter, Modifiers::NONE, None);
    assert_eq!(window.tab(), Some(Tab::Review), "the Enter pressed here moved on");
    repeats_now(&mut window, &[(Key::Enter, None)]);
    let answered = outcome(&asked);
    assert!(matches!(answered, Outcome::Answered(_)), "its repeat sent: {answered:?}");
}

#[test]
fn a_request_that_comes_up_next_does_not_take_the_keys_meant_for_the_last() {
    let mut window = window();
    let first = window.ask_fixture("database");
    let (request, receiver) = request(&checks());
    let second = window.send_unwaited(request, receiver);
    window.wait_out_key_grace();
    window.press_digit(3);
    // Enter: SQLite and on to Review; Enter: the first request is sent …
    window.press(Key::Enter, None);
    key_now(&mut window, Key::Enter, Modifiers::NONE, None);
    assert!(matches!(outcome(&first), Outcome::Answered(_)));
    // … and the keys right after it (the next frame, a harness step later, within the grace)
    // land on the second as it appears: dropped.
    keys_now(
        &mut window,
        &[(Key::Enter, Modifiers::NONE, None), (Key::Num1, Modifiers::NONE, Some("1"))],
    );
    assert_eq!(window.app().state().current().map(|p| p.tab), Some(Tab::Question(0)));
    assert!(!window.is_on(Role::CheckBox, "Clippy"));
    assert_nothing_sent(&second);
}

// ---------------------------------------------------------------------------------------------
// Typing goes to Other

#[test]
fn typing_starts_the_other_answer_and_enter_moves_on() {
    let (mut window, asked) = open_fixture("database");
    for (key, text) in
        [(Key::M, "M"), (Key::Y, "y"), (Key::Space, " "), (Key::D, "D"), (Key::B, "B")]
    {
        window.press(key, Some(text));
    }
    assert_eq!(window.answer_box().value().as_deref(), Some("My DB"));
    assert!(window.answer_box().is_focused());
    assert!(window.is_on(Role::RadioButton, "Other"));
    window.press_with(Modifiers::SHIFT, Key::Enter);
    window.press(Key::X, Some("x"));
    assert_eq!(window.answer_box().value().as_deref(), Some("My DB\nx"), "Shift+Enter: new line");
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Review), "Enter in Other moves on");
    window.press(Key::Enter, None);
    assert_eq!(
        reply(&asked.envelope, &asked.outcome)["answers"],
        json!({DATABASE_QUESTION: "My DB\nx"})
    );
}

#[test]
fn a_digit_past_the_options_is_typed_into_other() {
    let (mut window, _asked) = open_fixture("database");
    window.press(Key::Num7, Some("7"));
    assert_eq!(window.answer_box().value().as_deref(), Some("7"));
}

// ---------------------------------------------------------------------------------------------
// Countdown

/// `fixture` with a `--timeout` of `secs`.
fn open_timed(fixture: &str, secs: u64, drafts: Vec<Draft>) -> (Window, crate::ui::Asked) {
    let mut window = window();
    let (mut request, receiver) = request(&fixture_input(fixture));
    request.policy.timeout_secs = Some(secs);
    request.policy.preset = drafts;
    let asked = window.send_unwaited(request, receiver);
    (window, asked)
}

fn countdown(window: &Window) -> Option<Countdown> {
    window.app().state().current().and_then(|pending| pending.countdown)
}

#[test]
fn nobody_there_the_countdown_ends_with_the_dialogs_own_words() {
    let (mut window, asked) = open_timed("database", 2, Vec::new());
    assert!(window.has_text_with(&["0:02 left", "any key to stay"]));
    assert!(window.has_button("+1 min") && window.has_button("Stay"));
    window.harness.run_steps(10);
    assert_eq!(outcome(&asked), Outcome::timed_out(2));
    assert!(window.has_text_with(&["⏱ Sent to", "the time ran out"]), "the receipt says how");
}

#[test]
fn any_key_stays_and_more_time_moves_the_deadline() {
    let (mut window, asked) = open_timed("database", 3, Vec::new());
    window.click_button("+1 min");
    assert!(
        matches!(countdown(&window), Some(Countdown::Running { given_secs: 63, .. })),
        "{:?}",
        countdown(&window)
    );
    window.wait_out_key_grace();
    window.press(Key::ArrowDown, None);
    assert_eq!(
        countdown(&window),
        Some(Countdown::Stopped { given_secs: 63 }),
        "any key: the user is here"
    );
    assert!(window.has_text_with(&["Countdown stopped"]));
    window.harness.run_steps(300);
    assert_nothing_sent(&asked);
}

#[test]
fn a_box_with_the_keyboard_is_never_sent_when_the_time_runs_out() {
    let input = fixture_input("database");
    let (request, _) = request(&input);
    let question = &request.core.ask.questions()[0];
    // Pre-filled, as `--answers` does: Other with text the user is now editing.
    let mut draft = Draft::default();
    draft.set_other_text(question, "Postgres on".into());
    let (mut window, asked) = open_timed("database", 2, vec![draft]);
    // The keyboard goes to the box without a key press (a screen reader, an input method).
    window.harness.get_by_role_and_label(Role::MultilineTextInput, "Your answer").focus();
    window.harness.run_steps(10);
    let Outcome::TimedOut(timed_out) = outcome(&asked) else { panic!("not an answer") };
    let message = timed_out.message();
    assert!(!message.contains("Postgres on"), "{message}");
    assert!(
        message.ends_with(&format!(
            "The user was still typing an answer to \"{DATABASE_QUESTION}\" when the time ran \
             out; what they typed was not sent."
        )),
        "{message}"
    );
    assert!(window.has_text_with(&["this was not sent", "Database (Other): Postgres on"]));
}

// ---------------------------------------------------------------------------------------------
// Chat about this, and how Review shows answers

#[test]
fn chat_about_this_sends_the_dialogs_clarify_feedback() {
    let (mut window, asked) = open_fixture("settings-capture");
    window.click(Role::RadioButton, "Tabs");
    window.click_button("Chat about this");
    let Outcome::Clarify { message, .. } = outcome(&asked) else { panic!("a clarify outcome") };
    assert_eq!(
        message,
        "The user wants to clarify these questions.\n    This means they may have additional \
         information, context or questions for you.\n    Take their response into account and \
         then reformulate the questions if appropriate.\n    Start by asking them what they \
         would like to clarify.\n\n    Questions asked:\n- \"Which layout should the settings \
         page use?\"\n  Answer: Tabs\n- \"Which features do you want to enable?\"\n  (No answer \
         provided)\n- \"どのデータベースを使いますか？\"\n  (No answer provided)"
    );
}

#[test]
fn review_shows_labels_as_the_user_saw_them() {
    let (mut window, asked) = open_fixture("edge-cases");
    window.click_button("Palette");
    window.click(Role::CheckBox, "Say \"hi\"");
    window.click(Role::CheckBox, "Red, green");
    window.click_button("Review");
    assert!(window.has_text_with(&["→ Red, green · Say \"hi\""]));
    assert!(!window.has_text_with(&["\\\""]), "nothing is shown JSON-escaped");
    assert_nothing_sent(&asked);
}

// ---------------------------------------------------------------------------------------------
// Layout

#[test]
fn a_long_question_in_a_small_window_leaves_the_options_their_room() {
    let long = "Before I refactor the reconciliation module, which of these approaches should I \
                take, given that the nightly job must keep running, the ledger format may not \
                change, and the finance team reads the CSV exports by hand every morning? "
        .repeat(4);
    let label = "Keep the importer and wrap it in an adapter that runs in shadow mode for a \
                 week (Recommended)";
    let input = json!({"questions": [{"question": long, "header": "Approach", "options": [
        {"label": label, "description": "Safe, slower; the adapter is removed afterwards."},
        {"label": "Rewrite", "description": "Fast, risky."},
        {"label": "Wait", "description": "Do nothing yet."}]}]});
    let mut window = window_sized(520.0, 380.0);
    let asked = window.ask(&input);
    let heading = window.harness.get_by_role(Role::Heading);
    assert_eq!(heading.accesskit_node().label().as_deref(), Some(long.as_str()));
    for label in [label, "Rewrite", "Wait", "Other"] {
        let row = window.harness.get_by_role_and_label(Role::RadioButton, label).rect();
        assert!(row.right() <= 520.0 + 0.5, "{label:?} overflows: {row:?}");
    }
    let first = window.harness.get_by_role_and_label(Role::RadioButton, label).rect();
    assert!(first.height() > 60.0, "the long label wraps (with its badge): {first:?}");
    // The keyboard cursor scrolls into view, down to Other.
    for _ in 0..3 {
        window.press(Key::ArrowDown, None);
    }
    let other = window.harness.get_by_role_and_label(Role::RadioButton, "Other");
    assert!(other.is_focused(), "the cursor row is the focus a screen reader follows");
    let submit = window.harness.get_by_role_and_label(Role::Button, "Submit").rect();
    assert!(
        other.rect().bottom() <= submit.top() + 1.0,
        "Other scrolled into view above the footer"
    );
    assert!(submit.bottom() <= 380.0, "the footer stays on screen: {submit:?}");
    assert_nothing_sent(&asked);
}

#[test]
fn the_preview_follows_the_keyboard_even_under_the_mouse() {
    const SIDEBAR: &str = "| Nav    | Content         |";
    const TABS: &str = "| Tab1 | Tab2 | Tab3 |";
    let (mut window, _asked) = open_fixture("settings-capture");
    window.harness.get_by_role_and_label(Role::RadioButton, "Sidebar").hover();
    window.harness.run();
    assert_eq!(window.shown(SIDEBAR), 1);
    window.press(Key::ArrowDown, None);
    assert_eq!(window.shown(TABS), 1, "the key moved last: its row's preview shows");
    assert_eq!(window.shown(SIDEBAR), 0);
}

#[test]
fn box_drawing_mockups_are_shown_verbatim() {
    let (mut window, _asked) = open_fixture("previews");
    let wizard = fixture_input("previews")["questions"][0]["options"][2]["preview"]
        .as_str()
        .expect("the Wizard preview")
        .to_owned();
    window.press(Key::ArrowDown, None);
    window.press(Key::ArrowDown, None);
    let shown = window
        .harness
        .query_all_by_role(Role::Label)
        .filter_map(|node| node.accesskit_node().value())
        .any(|text| text == wizard);
    assert!(shown, "the Wizard mockup is one verbatim text, not a markdown table");
}

#[test]
fn page_down_scrolls_the_preview() {
    let lines: Vec<String> = (1..=80).map(|n| format!("line {n:02} of the preview")).collect();
    let input = json!({"questions": [{"question": "Which?", "header": "Which", "options": [
        {"label": "Long", "description": "", "preview": lines.join("\n")},
        {"label": "Short", "description": "", "preview": "short"}]}]});
    let mut window = window();
    window.ask(&input);
    // The first line in view, and where it is: only the lines in view are laid out.
    let first = |window: &Window| {
        window
            .harness
            .query_all_by_role(Role::Label)
            .filter_map(|node| {
                let value = node.accesskit_node().value()?;
                let number: u32 = value.strip_prefix("line ")?.get(..2)?.parse().ok()?;
                Some((number, node.rect().top()))
            })
            .min_by_key(|(number, _)| *number)
            .expect("the preview text")
    };
    let (line, top) = first(&window);
    assert_eq!(line, 1);
    window.press(Key::PageDown, None);
    let (after, _) = first(&window);
    assert!(after > 10, "PageDown scrolled the preview: line {after} is the first in view");
    window.press(Key::PageUp, None);
    let (line, back) = first(&window);
    assert!(line == 1 && (back - top).abs() < 1.0, "PageUp scrolled back: line {line} at {back}");
}

#[test]
fn the_split_keeps_its_proportion_when_the_window_is_resized() {
    let (mut window, _asked) = open_fixture("settings-capture");
    assert!(window.harness.query_by_role(Role::Splitter).is_some(), "a handle to drag");
    let width = |window: &Window| {
        window.harness.get_by_role_and_label(Role::RadioButton, "Sidebar").rect().width()
    };
    let wide = width(&window);
    window.harness.set_size(egui::vec2(600.0, 680.0));
    window.harness.run();
    let narrow = width(&window);
    window.harness.set_size(egui::vec2(960.0, 680.0));
    window.harness.run();
    assert!(narrow < wide - 60.0, "the options narrowed with the window: {wide} → {narrow}");
    assert!((width(&window) - wide).abs() < 1.0, "and grew back: {wide} → {}", width(&window));
}

#[test]
fn emoji_and_translated_recommendations_draw() {
    // The harness panics on a glyph no font has: 🦀 needs an emoji font (scripts/setup).
    let input = json!({"questions": [{"question": "Which crab? 🦀", "header": "Crab", "options": [
        {"label": "Ferris 🦀（推荐）", "description": "The mascot"},
        {"label": "Other crab", "description": "🦞"}]}]});
    let mut window = window();
    window.ask(&input);
    assert!(
        window.harness.query_by_role_and_label(Role::RadioButton, "Ferris 🦀（推荐）").is_some()
    );
}

// ---------------------------------------------------------------------------------------------
// Screen readers, closing

#[test]
fn the_window_and_the_question_have_accessible_names() {
    let (window, _asked) = open_fixture("database");
    let root = window.harness.root();
    assert_eq!(root.accesskit_node().label().as_deref(), Some("database · 1 question — askpane"));
    let heading = window.harness.get_by_role(Role::Heading);
    assert_eq!(heading.accesskit_node().label().as_deref(), Some(DATABASE_QUESTION));
    let cursor =
        window.harness.get_by_role_and_label(Role::RadioButton, "PostgreSQL (Recommended)");
    assert!(cursor.is_focused(), "the keyboard cursor is reported as the focus");
}

#[test]
fn ctrl_w_closes_like_the_close_button_and_enter_keeps_the_work() {
    let (mut window, _asked) = open_fixture("database");
    key_now(&mut window, Key::W, CTRL, None);
    let commands =
        window.harness.output().viewport_output[&egui::ViewportId::ROOT].commands.clone();
    assert!(commands.contains(&ViewportCommand::Close), "nothing touched: it closes {commands:?}");

    let (mut window, asked) = open_fixture("database");
    window.press_digit(2);
    let commands = window.request_close();
    assert!(commands.contains(&ViewportCommand::CancelClose), "work in progress: ask first");
    assert!(window.has_label("Close askpane?"));
    window.press(Key::Enter, None);
    assert!(!window.has_label("Close askpane?"), "Enter keeps answering");
    assert!(window.is_on(Role::RadioButton, "MySQL"), "nothing was lost");
    assert_nothing_sent(&asked);
    // The window's close button, then "Close and decline", is the way out.
    window.request_close();
    window.click_button("Close and decline");
    drop(window);
    assert_eq!(outcome(&asked), Outcome::Declined { message: CLOSED_MESSAGE.to_owned() });
}

#[test]
fn keys_after_ctrl_w_in_the_same_frame_do_not_answer_behind_its_dialog() {
    // A busy machine can deliver Ctrl+W, Tab and Enter in one frame: Tab and Enter were meant
    // for the dialog, which did not show yet, and must not pick and send an answer.
    let (mut window, asked) = open_fixture("database");
    window.press_digit(2);
    keys_now(
        &mut window,
        &[
            (Key::W, CTRL, None),
            (Key::Tab, Modifiers::NONE, None),
            (Key::Enter, Modifiers::NONE, None),
        ],
    );
    let commands =
        window.harness.output().viewport_output[&egui::ViewportId::ROOT].commands.clone();
    assert!(commands.contains(&ViewportCommand::Close), "Ctrl+W closes: {commands:?}");
    window.harness.run();
    assert_nothing_sent(&asked);
    assert!(window.is_on(Role::RadioButton, "MySQL"), "the pick made before Ctrl+W stays");
    assert!(window.request_close().contains(&ViewportCommand::CancelClose), "it asks first");
    assert!(window.has_label("Close askpane?"));
    // Keys before Ctrl+W in the same frame still count.
    let (mut window, asked) = open_fixture("database");
    keys_now(&mut window, &[(Key::Num3, Modifiers::NONE, Some("3")), (Key::W, CTRL, None)]);
    window.harness.run();
    assert!(window.is_on(Role::RadioButton, "SQLite"), "3 picked SQLite before Ctrl+W");
    assert_nothing_sent(&asked);
}

#[test]
fn a_picked_option_with_a_preview_carries_it_without_a_note() {
    let (mut window, asked) = open_fixture("settings-capture");
    window.click(Role::RadioButton, "Sidebar");
    window.click_button("Review");
    window.click_button("Submit");
    window.click_button("Submit anyway");
    let reply = reply(&asked.envelope, &asked.outcome);
    let sidebar =
        fixture_input("settings-capture")["questions"][0]["options"][0]["preview"].clone();
    assert_eq!(
        reply["annotations"],
        json!({"Which layout should the settings page use?": {"preview": sidebar}})
    );
}

#[test]
fn in_the_browser_a_keys_text_comes_first_and_still_belongs_to_the_key() {
    // eframe's web backend sends a key's text before the key itself.
    let (mut window, asked) = open_fixture("four-questions");
    let web_key = |key: Key, text: &str| {
        [
            Event::Text(text.to_owned()),
            Event::Key {
                key,
                pressed: true,
                modifiers: Modifiers::NONE,
                repeat: false,
                physical_key: None,
            },
        ]
    };
    let events = &mut window.harness.input_mut().events;
    events.extend(web_key(Key::Num2, "2"));
    window.harness.step();
    window.harness.run();
    assert!(window.is_on(Role::RadioButton, "Email magic link"), "2 chose option 2");
    assert_eq!(window.answer_box().value().as_deref(), Some(""), "and typed nothing");
    // A letter is no shortcut: its text starts the Other answer, on the web too.
    let events = &mut window.harness.input_mut().events;
    events.extend(web_key(Key::S, "s"));
    events.extend(web_key(Key::O, "o"));
    window.harness.step();
    window.harness.run();
    assert_eq!(window.answer_box().value().as_deref(), Some("so"));
    assert_nothing_sent(&asked);
}

#[test]
fn countdown_changes_reach_the_bridge_and_other_windows_changes_reach_this_one() {
    use askpane::app::{App, AppOptions};
    use askpane::protocol::web::TimeoutChange;
    use askpane::transport::{self, Inbound, PageEvent, RequestEvent};
    let (sender, inbox) = transport::memory();
    let (changes, changed) = crossbeam_channel::unbounded();
    let mut harness = egui_kittest::Harness::builder()
        .with_size(egui::vec2(960.0, 680.0))
        .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::system_fonts()))
        .build_eframe(|cc| {
            App::new(&cc.egui_ctx, inbox, AppOptions::default()).with_countdown_changes(changes)
        });
    let timed = |id: &str, secs: u64| {
        let (mut request, receiver) = request(&json!({"type": "user_question", "tool_use_id": id,
            "questions": fixture_questions("database")}));
        request.policy.timeout_secs = Some(secs);
        assert!(sender.send(Inbound::Request(RequestEvent::Ask(Box::new(request)))));
        receiver
    };
    let _first = timed("t1", 100);
    let _second = timed("t2", 100);
    harness.run_steps(3);
    harness.get_by_role_and_label(Role::Button, "+1 min").click();
    harness.run_steps(2);
    assert_eq!(changed.try_recv().ok(), Some(("t1".into(), TimeoutChange::Extended { secs: 60 })));
    // Another tab stopped t2's countdown: this window follows.
    assert!(
        sender.send(Inbound::Page(PageEvent::Countdown {
            tool_use_id: "t2".into(),
            left_secs: None
        }))
    );
    harness.run_steps(2);
    let second = harness
        .state()
        .state()
        .book()
        .requests()
        .find(|p| p.core.envelope.tool_use_id() == Some("t2"));
    let stopped = second.and_then(|p| p.countdown);
    assert!(matches!(stopped, Some(Countdown::Stopped { .. })), "{stopped:?}");
    // A key here: "any key to stay", told for the countdown still running.
    harness.key_press(Key::ArrowDown);
    harness.run_steps(2);
    assert_eq!(changed.try_iter().collect::<Vec<_>>(), vec![("t1".into(), TimeoutChange::Paused)]);
}

// ---------------------------------------------------------------------------------------------
// Shortcuts inside text boxes (issue 24 item 3)

/// The reply of the database question answered "Redis" in Other with a note.
fn redis_with_a_note(asked: &crate::ui::Asked) {
    let sent = reply(&asked.envelope, &asked.outcome);
    assert_eq!(sent["answers"], json!({DATABASE_QUESTION: "Redis"}), "{sent}");
    assert_eq!(sent["annotations"], json!({DATABASE_QUESTION: {"notes": "only for caching"}}));
}

#[test]
fn alt_n_inside_the_other_box_opens_the_note_and_types_nothing() {
    let (mut window, asked) = open_fixture("database");
    window.press_digit(5);
    window.type_text("Redis");
    key_now(&mut window, Key::N, Modifiers::ALT, Some("n"));
    window.harness.run();
    let note =
        window.harness.get_by_role_and_label(egui::accesskit::Role::MultilineTextInput, "Note");
    assert!(note.is_focused(), "Alt+N in the Other box puts the cursor in the note");
    assert_eq!(window.answer_box().value().as_deref(), Some("Redis"), "no n typed");
    window.type_text("only for caching");
    window.press_with(CTRL, Key::Enter);
    redis_with_a_note(&asked);
}

#[test]
fn keys_after_alt_n_in_the_same_frame_go_to_the_note() {
    // Natively a key's text follows it; in the browser it comes first. Both, in one busy frame.
    for text_first in [false, true] {
        let (mut window, asked) = open_fixture("database");
        window.press_digit(5);
        let events = &mut window.harness.input_mut().events;
        events.push(Event::Text("Redis".into()));
        let alt_n = Event::Key {
            key: Key::N,
            pressed: true,
            modifiers: Modifiers::ALT,
            repeat: false,
            physical_key: None,
        };
        let letter = Event::Text("n".into());
        match text_first {
            true => events.extend([letter, alt_n]),
            false => events.extend([alt_n, letter]),
        }
        events.push(Event::Text("only for caching".into()));
        window.harness.run();
        assert_eq!(
            window.answer_box().value().as_deref(),
            Some("Redis"),
            "text first: {text_first}"
        );
        window.press_with(CTRL, Key::Enter);
        redis_with_a_note(&asked);
    }
}

// ---------------------------------------------------------------------------------------------
// Links in an agent's text (issue 24 item 18)

#[test]
fn a_link_in_an_agents_markdown_opens_nothing_and_its_address_is_shown_to_copy() {
    let message = json!({"questions": [{"question": "Which login page?", "header": "Login",
        "multiSelect": false, "options": [
            {"label": "New", "description": "the redesign",
             "preview": "# Login\n\nRead [the security notes](https://evil.example/login) first.\n\n- one\n- two"},
            {"label": "Old", "description": "as it is"}]}]});
    let (mut window, asked) = crate::ui::open(&message);
    window.harness.get_by_role_and_label(Role::Link, "the security notes").click();
    window.harness.step();
    let opened: Vec<String> = window
        .harness
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|command| match command {
            egui::OutputCommand::OpenUrl(open) => Some(open.url.clone()),
            _ => None,
        })
        .collect();
    assert!(opened.is_empty(), "the link was opened: {opened:?}");
    window.harness.run();
    assert!(
        window.has_label(&askpane::app::link_not_opened("https://evil.example/login")),
        "the address is shown as text"
    );
    assert_nothing_sent(&asked);
}

// ---------------------------------------------------------------------------------------------
// Clicks aimed elsewhere (issue 24 item 2)

/// A request the user did not pick takes the place of the one they were on: a click on its way,
/// aimed at the other, acts on nothing.
#[test]
fn a_click_as_the_shown_request_is_replaced_does_not_act_on_the_new_one() {
    let (mut window, first) = open_fixture("database");
    let (deploy, answered) = request(&json!({"questions": [{"question": "Deploy now?",
        "header": "Deploy", "multiSelect": false, "options": [
            {"label": "Yes", "description": ""}, {"label": "No", "description": ""}]}]}));
    let second = window.send(deploy, answered);
    // The first is answered (by keyboard); the second takes its place, and a click arrives.
    window.press_digit(2);
    window.harness.step();
    keys_now(&mut window, &[(Key::Enter, CTRL, None)]);
    assert!(matches!(outcome(&first), Outcome::Answered(_)));
    let at = window.harness.get_by_role_and_label(Role::Button, "Chat about this").rect().center();
    window.click_at_as_eframe(at);
    window.harness.run();
    assert_nothing_sent(&second);
    // Once the grace is over, a click is the user's.
    window.wait_out_key_grace();
    window.click_button("Chat about this");
    assert!(matches!(outcome(&second), Outcome::Clarify { .. }));
}

/// The inbox's window comes back on its own for a new question, over whatever the user works
/// in: a click aimed at that program, even 0.6 s later, acts on nothing here (issue 24 item 2).
#[test]
fn a_click_as_the_inbox_window_comes_back_does_not_act_on_it() {
    let resident = askpane::app::AppOptions { resident: true, ..Default::default() };
    let mut window = crate::ui::window_with(960.0, 680.0, resident);
    window.wait_out_key_grace();
    window.request_close();
    let (request, answered) = request(&fixture_input("database"));
    let asked = window.send_unwaited(request, answered);
    window.harness.step();
    window.harness.step();
    let at = window.harness.get_by_role_and_label(Role::Button, "Chat about this").rect().center();
    window.click_at_as_eframe(at);
    window.harness.run();
    assert_nothing_sent(&asked);
    window.harness.run_steps(5);
    window.click_button("Chat about this");
    assert!(matches!(outcome(&asked), Outcome::Clarify { .. }));
}

/// Issue 24 item 20: characters that reorder or hide in agent text are drawn written out.
#[test]
fn hidden_characters_in_agent_text_are_drawn_written_out() {
    let message = json!({"questions": [{"question": "Ship \u{202E}won\u{202C}?", "header": "Ship",
        "multiSelect": false, "options": [
            {"label": "Yes\u{200B}", "description": "now \u{2066}really\u{2069}"},
            {"label": "No", "description": ""}]}]});
    let (window, _asked) = crate::ui::open(&message);
    assert!(window.has_label("Ship <U+202E>won<U+202C>?"), "the question, written out");
    // (A row's accessible name stays the exact label its answer carries; its drawn name is
    // written out by the same rule, protocol::text::reveal_hidden, unit-tested there.)
    assert!(window.has_text_with(&["now <U+2066>really<U+2069>"]), "the description");
}

// ---------------------------------------------------------------------------------------------
// Waiting made visible (issue 24 item 24)

/// The title of the request showing.
fn current_title(window: &Window) -> String {
    window.app().state().current().map(|open| open.core.ask.title().to_owned()).unwrap_or_default()
}

#[test]
fn the_list_says_each_requests_time_left_and_ctrl_page_keys_switch_requests() {
    let (mut window, first) = open_fixture("database");
    let (mut deploy, answered) = request(&json!({"questions": [{"question": "Deploy now?",
        "header": "Deploy", "multiSelect": false, "options": [
            {"label": "Yes", "description": ""}, {"label": "No", "description": ""}]}]}));
    deploy.policy.timeout_secs = Some(45);
    let second = window.send(deploy, answered);
    let entries: Vec<String> = window
        .harness
        .query_all_by_role(Role::Button)
        .filter_map(|node| node.accesskit_node().label())
        .filter(|label| label.starts_with("Deploy · "))
        .collect();
    let [entry] = entries.as_slice() else { panic!("one Deploy entry: {entries:?}") };
    assert!(entry.starts_with("Deploy · ⏱ 0:4") && entry.contains(" left · "), "{entry}");
    assert_eq!(current_title(&window), "Database");
    // Ctrl+PgDn, Ctrl+PgUp: the next and the previous request in the list.
    window.press_with(CTRL, Key::PageDown);
    assert_eq!(current_title(&window), "Deploy");
    window.press_with(CTRL, Key::PageUp);
    assert_eq!(current_title(&window), "Database");
    // From inside the Other box too, typing nothing into it.
    window.press_digit(5);
    window.type_text("Redis");
    window.press_with(CTRL, Key::PageDown);
    assert_eq!(current_title(&window), "Deploy");
    let database = window.app().state().book().requests().next().expect("still open");
    assert_eq!(database.draft(0).map(|draft| draft.other_text()), Some("Redis"));
    assert_nothing_sent(&first);
    assert_nothing_sent(&second);
}

// ---------------------------------------------------------------------------------------------
// The smallest window (issue 24 item 26)

/// At its smallest (520×380, the native window's minimum), with what was sent for the last
/// request above, the next request's first option is on screen: the receipt is one line (its
/// details folded) while a form shows. With nothing left to answer, Esc puts the receipt away.
#[test]
fn the_smallest_window_shows_the_options_under_the_receipt_and_esc_hides_it_when_idle() {
    let mut window = window_sized(520.0, 380.0);
    let first = window.ask_fixture("database");
    let (deploy, answered) = request(&json!({"questions": [{"question": "Deploy now?",
        "header": "Deploy", "multiSelect": false, "options": [
            {"label": "Yes", "description": "ship it"}, {"label": "No", "description": "wait"}]}]}));
    let second = window.send(deploy, answered);
    window.press_digit(2);
    window.harness.step();
    keys_now(&mut window, &[(Key::Enter, CTRL, None)]);
    assert!(matches!(outcome(&first), Outcome::Answered(_)));
    window.wait_out_key_grace();
    assert!(window.has_text_with(&["Sent to"]), "the receipt shows");
    let screen = window.harness.ctx.content_rect();
    // The first option whole (the others a scroll away), where before the receipt pushed every
    // option below the window's bottom edge.
    let row = window.harness.get_by_role_and_label(Role::RadioButton, "Yes").rect();
    assert!(screen.contains_rect(row), "the first option is off screen: {row:?} in {screen:?}");
    window.press_digit(1);
    window.harness.step();
    keys_now(&mut window, &[(Key::Enter, CTRL, None)]);
    assert!(matches!(outcome(&second), Outcome::Answered(_)));
    window.wait_out_key_grace();
    assert!(window.has_text_with(&["Sent to"]));
    window.press(Key::Escape, None);
    assert!(!window.has_text_with(&["Sent to"]), "Esc put the receipt away");
}
