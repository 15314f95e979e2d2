//! The window driven the way a user drives it, headless through egui_kittest: clicks and keys on
//! the accessible tree (role + exact label, the view's contract), then the exact reply the agent
//! gets back. Every harness also runs kittest's own checks after each step: no glyph may be
//! missing (CJK, Korean, Thai, emoji) and every input widget must have an accessible name.

use std::sync::{Arc, LazyLock};

use askpane::app::state::Tab;
use askpane::app::{App, AppOptions};
use askpane::protocol::envelope::parse_message;
use askpane::protocol::outcome::CLOSED_MESSAGE;
use askpane::protocol::{Envelope, Outcome, validate};
use askpane::transport::demo;
use askpane::transport::{
    self, ApprovalEvent, Inbound, Provenance, Request, RequestEvent, UiSender,
};
use crossbeam_channel::{Receiver, TryRecvError};
use egui::accesskit::{Role, Toggled};
use egui::{Event, Key, Modifiers, ViewportCommand, ViewportEvent, ViewportId};
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::{Harness, Node};
use egui_system_font_provider::SystemFontProvider;
use serde_json::{Value, json};

/// Enumerating the system fonts takes a while: one provider serves every harness.
pub(crate) static FONTS: LazyLock<Arc<SystemFontProvider>> =
    LazyLock::new(|| Arc::new(SystemFontProvider::new()));

/// The system's fonts as the window installs them (`askpane::view::theme::system_font_for`: Thai made
/// as large as the Latin text, previews asking for monospace faces).
pub(crate) fn system_fonts() -> Arc<dyn egui::FontProvider> {
    Arc::new(|request: &egui::FallbackRequest<'_>| {
        askpane::view::theme::system_font_for(FONTS.as_ref(), request)
    })
}

pub(crate) const DATABASE_QUESTION: &str = "Which database should the new orders service use?";

/// Ctrl held, as egui-winit reports it on Linux and Windows (Ctrl is also egui's "command").
pub(crate) const CTRL: Modifiers = Modifiers { ctrl: true, command: true, ..Modifiers::NONE };

/// A window with its inbox; requests go in through `sender`.
pub(crate) struct Window {
    pub(crate) harness: Harness<'static, App>,
    pub(crate) sender: UiSender,
}

/// One request sent to the window: where its outcome arrives, and the envelope it came in.
pub(crate) struct Asked {
    pub(crate) outcome: Receiver<Outcome>,
    pub(crate) envelope: Envelope,
}

/// An empty window, 960×680, with the system fonts for CJK, Korean and Thai.
pub(crate) fn window() -> Window {
    window_sized(960.0, 680.0)
}

/// An empty window of this size.
pub(crate) fn window_sized(width: f32, height: f32) -> Window {
    window_with(width, height, AppOptions::default())
}

/// An empty window of this size, with these options.
pub(crate) fn window_with(width: f32, height: f32, options: AppOptions) -> Window {
    let (sender, inbox) = transport::memory();
    let harness = Harness::builder()
        .with_size(egui::vec2(width, height))
        .with_context_setup(|ctx| ctx.add_font_provider(system_fonts()))
        .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, options));
    Window { harness, sender }
}

/// A window showing one request: a message in any envelope `parse_message` knows.
pub(crate) fn open(message: &Value) -> (Window, Asked) {
    let mut window = window();
    let asked = window.ask(message);
    (window, asked)
}

/// A window showing one demo fixture (a raw tool input).
pub(crate) fn open_fixture(name: &str) -> (Window, Asked) {
    let mut window = window();
    let asked = window.ask_fixture(name);
    (window, asked)
}

/// A request made from one message, as an adapter makes it (provenance `test`).
pub(crate) fn request(message: &Value) -> (Request, Receiver<Outcome>) {
    let incoming = parse_message(message).expect("a message askpane understands");
    Request::new(incoming, Provenance::new("test", None)).expect("a valid request")
}

impl Window {
    /// The labels of the request list's entries of these kinds (` · tool call · `,
    /// ` · plan · `, or ` question` for questions), top to bottom.
    pub(crate) fn list_entries(&self, kinds: &[&str]) -> Vec<String> {
        self.harness
            .get_all_by_role(Role::Button)
            .filter_map(|node| node.accesskit_node().label())
            .filter(|label| kinds.iter().any(|kind| label.contains(kind)))
            .collect()
    }

    pub(crate) fn ask(&mut self, message: &Value) -> Asked {
        let (request, outcome) = request(message);
        self.send(request, outcome)
    }

    pub(crate) fn ask_fixture(&mut self, name: &str) -> Asked {
        let fixture = demo::find(name).unwrap_or_else(|| panic!("no demo fixture {name}"));
        let (request, outcome) = fixture.request().expect("the fixture is a valid request");
        self.send(request, outcome)
    }

    pub(crate) fn send(&mut self, request: Request, outcome: Receiver<Outcome>) -> Asked {
        let asked = self.send_unwaited(request, outcome);
        self.wait_out_key_grace();
        asked
    }

    /// Sends a request and draws it once: the next keys arrive as it appears.
    pub(crate) fn send_unwaited(&mut self, request: Request, outcome: Receiver<Outcome>) -> Asked {
        let envelope = request.core.envelope.clone();
        assert!(
            self.sender.send(Inbound::Request(RequestEvent::Ask(Box::new(request)))),
            "the window is listening"
        );
        self.harness.step();
        Asked { outcome, envelope }
    }

    /// Lets the moment pass in which a request that just appeared ignores keys (each step is
    /// 0.25 s of the harness's clock).
    pub(crate) fn wait_out_key_grace(&mut self) {
        let steps = (askpane::app::KEY_GRACE.as_secs_f32() / 0.25).ceil() as usize + 1;
        self.harness.run_steps(steps);
    }

    pub(crate) fn app(&self) -> &App {
        self.harness.state()
    }

    /// A click at `at` in the very next frame, its input first given to the app's
    /// `raw_input_hook` as eframe and the CPU window do (kittest does not call it).
    pub(crate) fn click_at_as_eframe(&mut self, at: egui::Pos2) {
        use eframe::App as _;
        let mut input = std::mem::take(self.harness.input_mut());
        input.events.push(Event::PointerMoved(at));
        for pressed in [true, false] {
            let button = egui::PointerButton::Primary;
            input.events.push(Event::PointerButton {
                pos: at,
                button,
                pressed,
                modifiers: Modifiers::NONE,
            });
        }
        let ctx = self.harness.ctx.clone();
        self.harness.state_mut().raw_input_hook(&ctx, &mut input);
        *self.harness.input_mut() = input;
        self.harness.step();
    }

    /// The current request's page.
    pub(crate) fn tab(&self) -> Option<Tab> {
        self.app().state().current().map(|pending| pending.tab)
    }

    /// Clicks the node with this exact role and label, then lets the window settle.
    pub(crate) fn click(&mut self, role: Role, label: &str) {
        self.harness.get_by_role_and_label(role, label).click();
        self.harness.run();
    }

    pub(crate) fn click_button(&mut self, label: &str) {
        self.click(Role::Button, label);
    }

    /// Gives keyboard focus to the text box with this label (AccessKit's Focus action).
    pub(crate) fn focus_box(&mut self, role: Role, label: &str) {
        self.harness.get_by_role_and_label(role, label).focus();
        self.harness.run();
    }

    /// The Other box of the question showing.
    pub(crate) fn answer_box(&self) -> Node<'_> {
        self.harness.get_by_role_and_label(Role::MultilineTextInput, "Your answer")
    }

    /// Presses a key as a keyboard does: the key and the text it types arrive in one frame (as
    /// egui-winit sends them), the release in the next.
    pub(crate) fn press(&mut self, key: Key, text: Option<&str>) {
        let events = &mut self.harness.input_mut().events;
        events.push(Event::Key {
            key,
            pressed: true,
            modifiers: Modifiers::NONE,
            repeat: false,
            physical_key: None,
        });
        if let Some(text) = text {
            events.push(Event::Text(text.to_owned()));
        }
        self.harness.step();
        self.harness.key_up(key);
        self.harness.run();
    }

    /// A digit key, which also types the digit.
    pub(crate) fn press_digit(&mut self, digit: u8) {
        let key = match digit {
            1 => Key::Num1,
            2 => Key::Num2,
            3 => Key::Num3,
            4 => Key::Num4,
            5 => Key::Num5,
            _ => panic!("no digit key {digit} in these tests"),
        };
        self.press(key, Some(&digit.to_string()));
    }

    /// A key with modifiers; no text.
    pub(crate) fn press_with(&mut self, modifiers: Modifiers, key: Key) {
        self.harness.key_press_modifiers(modifiers, key);
        self.harness.run();
    }

    /// Types text into whatever has keyboard focus.
    pub(crate) fn type_text(&mut self, text: &str) {
        self.harness.event(Event::Text(text.to_owned()));
        self.harness.run();
    }

    /// The window manager asks to close the window (the title bar's ✕). Returns the viewport
    /// commands the app answered with in that frame.
    pub(crate) fn request_close(&mut self) -> Vec<ViewportCommand> {
        let viewport = self.harness.input_mut().viewports.entry(ViewportId::ROOT).or_default();
        viewport.events.push(ViewportEvent::Close);
        self.harness.step();
        let commands = self.harness.output().viewport_output[&ViewportId::ROOT].commands.clone();
        self.harness.run();
        commands
    }

    /// Is the row (or selectable button) with this role and label chosen?
    pub(crate) fn is_on(&self, role: Role, label: &str) -> bool {
        toggled(&self.harness.get_by_role_and_label(role, label))
    }

    /// Is a node with exactly this label (or text, for a label) on screen?
    pub(crate) fn has_label(&self, label: &str) -> bool {
        self.harness.query_by_label(label).is_some()
    }

    /// Is there a text on screen that contains every one of `parts`? For texts that are not
    /// part of the labels contract, so the wording may change around them.
    pub(crate) fn has_text_with(&self, parts: &[&str]) -> bool {
        self.harness
            .query_all_by_role(Role::Label)
            .filter_map(|node| node.accesskit_node().value())
            .any(|text| parts.iter().all(|part| text.contains(part)))
    }

    /// Is no request showing (no option rows, no tabs)?
    pub(crate) fn is_idle(&self) -> bool {
        self.app().state().current().is_none()
            && self.harness.query_all_by_role(Role::RadioButton).next().is_none()
            && self.harness.query_all_by_role(Role::CheckBox).next().is_none()
            && !self.has_button("Review")
    }

    pub(crate) fn has_button(&self, label: &str) -> bool {
        self.harness.query_by_role_and_label(Role::Button, label).is_some()
    }

    /// How many widgets (text runs not counted) show `text` in their label or value.
    pub(crate) fn shown(&self, text: &str) -> usize {
        self.harness
            .root()
            .children_recursive()
            .map(|node| node.accesskit_node())
            .filter(|node| node.role() != Role::TextRun)
            .filter(|node| {
                [node.label(), node.value()].into_iter().flatten().any(|t| t.contains(text))
            })
            .count()
    }

    /// The labels of the buttons whose label starts with `header` without being its tab (the
    /// request list's entries).
    pub(crate) fn request_entries(&self, header: &str) -> Vec<String> {
        let tab_labels = [header.to_owned(), format!("{header} ✔")];
        self.harness
            .query_all_by_role(Role::Button)
            .filter_map(|node| node.accesskit_node().label())
            .filter(|label| label.starts_with(header) && !tab_labels.contains(label))
            .collect()
    }
}

pub(crate) fn toggled(node: &Node<'_>) -> bool {
    node.accesskit_node().toggled() == Some(Toggled::True)
}

/// The outcome sent for a request; panics if none was sent yet.
pub(crate) fn outcome(asked: &Asked) -> Outcome {
    asked.outcome.try_recv().expect("an outcome was sent")
}

/// The reply the agent gets for this request, rendered in its envelope.
pub(crate) fn reply(envelope: &Envelope, receiver: &Receiver<Outcome>) -> Value {
    let outcome = receiver.try_recv().expect("an outcome was sent");
    envelope.reply(&outcome).expect("this envelope always gets a reply")
}

pub(crate) fn assert_nothing_sent(asked: &Asked) {
    assert_eq!(asked.outcome.try_recv(), Err(TryRecvError::Empty), "nothing is sent yet");
}

/// The tool input of a demo fixture.
pub(crate) fn fixture_input(name: &str) -> Value {
    let fixture = demo::find(name).unwrap_or_else(|| panic!("no demo fixture {name}"));
    serde_json::from_str(fixture.json).expect("fixture JSON")
}

/// The `questions` a demo fixture sends, which every reply echoes.
pub(crate) fn fixture_questions(name: &str) -> Value {
    fixture_input(name)["questions"].clone()
}

pub(crate) fn keys_of(value: &Value) -> Vec<&str> {
    value.as_object().expect("an object").keys().map(String::as_str).collect()
}

/// The `database` fixture as a `tool_use` block with this id.
pub(crate) fn database_tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "name": "AskUserQuestion", "id": id,
        "input": {"questions": fixture_questions("database")}})
}

#[test]
fn click_an_option_and_submit_sends_exactly_that_label() {
    let (mut window, asked) = open_fixture("database");
    assert!(!window.is_on(Role::RadioButton, "SQLite"));

    window.click(Role::RadioButton, "SQLite");
    assert!(window.is_on(Role::RadioButton, "SQLite"));
    assert!(!window.is_on(Role::RadioButton, "PostgreSQL (Recommended)"));
    assert!(!window.is_on(Role::RadioButton, "Other"));
    assert!(window.has_button("Database ✔"), "the tab shows the question is answered");
    assert_nothing_sent(&asked);

    window.click_button("Submit");
    let reply = reply(&asked.envelope, &asked.outcome);
    assert_eq!(
        reply,
        json!({
            "questions": fixture_questions("database"),
            "answers": {"Which database should the new orders service use?": "SQLite"},
            "annotations": {}
        })
    );
    assert_eq!(
        keys_of(&reply),
        ["questions", "answers", "annotations"],
        "the echoed input keeps its key order; annotations always come, as from the dialog"
    );
    assert!(window.app().state().book().is_empty());
    assert!(window.has_button("Copy reply"), "the receipt shows what was sent");
    assert!(window.has_button("✕"));
    assert!(window.is_idle());
    window.click_button("✕");
    assert!(!window.has_button("Copy reply"), "✕ hides the receipt");
}

#[test]
fn multi_select_with_other_joins_the_labels_in_option_order_and_the_typed_text() {
    let (mut window, asked) = open_fixture("multi-select");
    // Clicked out of order: the answer lists them in option order.
    window.click(Role::CheckBox, "Tests");
    window.click(Role::CheckBox, "Clippy");
    window.click(Role::CheckBox, "Other");
    for (label, on) in
        [("Clippy", true), ("Rustfmt", false), ("Tests", true), ("Miri", false), ("Other", true)]
    {
        assert_eq!(window.is_on(Role::CheckBox, label), on, "{label}");
    }
    window.focus_box(Role::MultilineTextInput, "Your answer");
    window.type_text("cargo deny");
    assert_eq!(window.answer_box().value().as_deref(), Some("cargo deny"));
    assert!(window.has_button("CI checks ✔"));

    window.click_button("Next →");
    assert_eq!(window.tab(), Some(Tab::Question(1)));
    window.click(Role::RadioButton, "Yes");
    window.click_button("Submit");
    assert_eq!(
        reply(&asked.envelope, &asked.outcome),
        json!({
            "questions": fixture_questions("multi-select"),
            "answers": {
                "Which CI checks should run on every pull request to the askpane repository?":
                    "Clippy, Tests, cargo deny",
                "Should the CI checks also run on pushes to the main branch?": "Yes"
            },
            "annotations": {}
        })
    );
}

#[test]
fn the_preview_follows_the_keyboard_cursor() {
    const SIDEBAR: &str = "| Nav    | Content         |";
    const TABS: &str = "| Tab1 | Tab2 | Tab3 |";
    let (mut window, _asked) = open_fixture("settings-capture");
    assert_eq!(window.shown(SIDEBAR), 1, "option 1's preview is shown first");
    assert_eq!(window.shown(TABS), 0);
    assert!(window.has_button("Copy"));

    window.press(Key::ArrowDown, None);
    assert_eq!(window.shown(TABS), 1, "↓ moves to option 2 and shows its preview");
    assert_eq!(window.shown(SIDEBAR), 0, "option 1's preview is gone");
    assert!(window.has_button("Copy"));
    assert!(!window.is_on(Role::RadioButton, "Tabs"), "moving the cursor does not choose");
    assert!(!window.is_on(Role::RadioButton, "Sidebar"));
}

#[test]
fn a_markdown_code_preview_follows_the_cursor_too() {
    let (mut window, _asked) = open_fixture("previews");
    window.click_button("Errors");
    window.harness.remove_cursor();
    window.harness.run();
    assert_eq!(window.tab(), Some(Tab::Question(1)));
    assert_eq!(window.shown("pub enum ConfigError {"), 1, "the Rust code is shown");
    assert_eq!(window.shown("class ConfigError(Exception):"), 0);

    window.press(Key::ArrowDown, None);
    assert_eq!(window.shown("class ConfigError(Exception):"), 1);
    assert_eq!(window.shown("pub enum ConfigError {"), 0);
}

#[test]
fn keyboard_only_answers_three_questions() {
    let (mut window, asked) = open_fixture("settings-capture");
    window.press_digit(2);
    assert!(window.is_on(Role::RadioButton, "Tabs"));
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Question(1)));
    window.press_digit(1);
    window.press_digit(3);
    assert!(window.is_on(Role::CheckBox, "Dark mode"));
    assert!(!window.is_on(Role::CheckBox, "Search"));
    assert!(window.is_on(Role::CheckBox, "Export"));
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Question(2)));
    window.press_digit(2);
    assert!(window.is_on(Role::RadioButton, "SQLite"));
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Review));
    assert_nothing_sent(&asked);
    window.press(Key::Enter, None);
    let tabs_preview =
        fixture_input("settings-capture")["questions"][0]["options"][1]["preview"].clone();
    assert_eq!(
        reply(&asked.envelope, &asked.outcome),
        json!({
            "questions": fixture_questions("settings-capture"),
            "answers": {
                "Which layout should the settings page use?": "Tabs",
                "Which features do you want to enable?": "Dark mode, Export",
                "どのデータベースを使いますか？": "SQLite"
            },
            // As Claude Code's dialog does: the picked mockup goes with the answer.
            "annotations": {"Which layout should the settings page use?": {"preview": tabs_preview}}
        })
    );
}

#[test]
fn arrows_space_tab_and_ctrl_enter_work_without_a_mouse() {
    let (mut window, asked) = open_fixture("settings-capture");
    window.press(Key::ArrowDown, None);
    window.press(Key::ArrowDown, None);
    window.press(Key::ArrowUp, None);
    window.press(Key::Space, Some(" "));
    assert!(window.is_on(Role::RadioButton, "Tabs"), "Space picks the row under the cursor");
    window.press(Key::Tab, None);
    assert_eq!(window.tab(), Some(Tab::Question(1)));
    window.press(Key::ArrowRight, None);
    assert_eq!(window.tab(), Some(Tab::Question(2)));
    window.press(Key::ArrowLeft, None);
    assert_eq!(window.tab(), Some(Tab::Question(1)));
    // On the multi-select question Space toggles.
    window.press(Key::ArrowDown, None);
    window.press(Key::Space, Some(" "));
    assert!(window.is_on(Role::CheckBox, "Search"));
    window.press(Key::Space, Some(" "));
    assert!(!window.is_on(Role::CheckBox, "Search"));
    window.press(Key::Space, Some(" "));
    assert!(window.is_on(Role::CheckBox, "Search"));

    window.press_with(CTRL, Key::Enter);
    assert_nothing_sent(&asked);
    assert_eq!(window.tab(), Some(Tab::Review));
    assert!(window.has_text_with(&["1 of 3", "not answered", "データベース"]));
    assert!(window.has_button("Submit anyway"));
    // Enter on the confirmation goes back: only the button or Ctrl+Enter sends less.
    window.press(Key::Enter, None);
    assert_nothing_sent(&asked);
    assert!(!window.has_button("Submit anyway"), "Enter went back");
    window.press_with(CTRL, Key::Enter);
    assert!(window.has_button("Submit anyway"));
    window.press_with(CTRL, Key::Enter);
    assert_eq!(
        reply(&asked.envelope, &asked.outcome)["answers"],
        json!({
            "Which layout should the settings page use?": "Tabs",
            "Which features do you want to enable?": "Search"
        })
    );
}

#[test]
fn shift_tab_goes_to_the_previous_question() {
    let (mut window, _asked) = open_fixture("settings-capture");
    window.press(Key::Tab, None);
    window.press(Key::Tab, None);
    assert_eq!(window.tab(), Some(Tab::Question(2)));
    window.press_with(Modifiers::SHIFT, Key::Tab);
    assert_eq!(window.tab(), Some(Tab::Question(1)));
}

#[test]
fn escape_twice_keeps_the_question_and_decline_sends_the_message() {
    const DECLINED: &str = "The user declined to answer these questions and said: Use the defaults";
    let (mut window, asked) = open_fixture("database");
    window.press(Key::Escape, None);
    assert!(window.has_label("Decline these questions?"));
    assert!(window.has_button("Decline"));
    assert!(window.has_button("Go back"));
    assert_nothing_sent(&asked);

    window.press(Key::Escape, None);
    assert!(!window.has_label("Decline these questions?"));
    assert!(!window.has_button("Decline"));
    assert_nothing_sent(&asked);
    assert!(window.has_label(DATABASE_QUESTION), "the question is still showing");
    assert!(window.harness.query_by_role_and_label(Role::RadioButton, "SQLite").is_some());

    window.press(Key::Escape, None);
    assert!(window.has_label("Decline these questions?"));
    window.focus_box(Role::TextInput, "Message to the agent (optional)");
    window.type_text("Use the defaults");
    assert_nothing_sent(&asked);
    window.click_button("Decline");
    let outcome = outcome(&asked);
    assert_eq!(outcome, Outcome::Declined { message: DECLINED.into() });
    assert_eq!(
        asked.envelope.reply(&outcome),
        Some(json!({"outcome": "declined", "message": DECLINED}))
    );
    assert!(window.app().state().book().is_empty());
}

#[test]
fn the_decline_button_and_go_back_work_by_mouse() {
    let (mut window, asked) = open_fixture("database");
    window.click_button("Decline…");
    assert!(window.has_label("Decline these questions?"));
    window.click_button("Go back");
    assert!(!window.has_label("Decline these questions?"));
    assert_nothing_sent(&asked);
    window.click_button("Decline…");
    window.click_button("Decline");
    assert_eq!(
        reply(&asked.envelope, &asked.outcome),
        json!({"outcome": "declined", "message": "The user declined to answer these questions. \
            Do not assume an answer; continue without it or ask in chat."})
    );
}

#[test]
fn review_lists_the_unanswered_and_a_partial_submit_asks_first() {
    let (mut window, asked) = open_fixture("four-questions");
    window.click(Role::RadioButton, "OAuth via GitHub (Recommended)");
    window.click_button("Review");
    assert_eq!(window.tab(), Some(Tab::Review));
    assert_eq!(window.harness.query_all_by_label_contains("not answered").count(), 3);
    assert!(window.has_text_with(&["OAuth via GitHub (Recommended)"]), "the answer is listed");

    window.click_button("Submit");
    assert!(window.has_text_with(&["3 of 4", "not answered", "Deploy", "Tests", "Logging"]));
    assert!(window.has_button("Go back"));
    assert_nothing_sent(&asked);

    window.click_button("Submit anyway");
    assert_eq!(
        reply(&asked.envelope, &asked.outcome),
        json!({
            "questions": fixture_questions("four-questions"),
            "answers": {
                "How should users authenticate with the new admin dashboard?":
                    "OAuth via GitHub (Recommended)"
            },
            "annotations": {}
        })
    );
}

#[test]
fn keys_typed_into_the_other_box_are_text_not_shortcuts() {
    let (mut window, asked) = open_fixture("database");
    window.focus_box(Role::MultilineTextInput, "Your answer");
    window.press_digit(1);
    window.press_digit(2);
    window.press(Key::Space, Some(" "));
    window.press(Key::N, Some("n"));
    window.press(Key::ArrowRight, None);
    window.press(Key::ArrowDown, None);
    window.press_with(Modifiers::SHIFT, Key::Enter);
    window.press_digit(3);

    let answer_box = window.answer_box();
    assert_eq!(answer_box.value().as_deref(), Some("12 n\n3"), "Shift+Enter: a new line");
    assert!(answer_box.is_focused());
    assert_eq!(window.tab(), Some(Tab::Question(0)), "the question did not change");
    for label in ["PostgreSQL (Recommended)", "MySQL", "SQLite", "MongoDB"] {
        assert!(!window.is_on(Role::RadioButton, label), "{label} stays unchosen");
    }
    assert!(window.is_on(Role::RadioButton, "Other"), "typing into Other chooses it");
    assert!(!window.has_label("Decline these questions?"));
    let note = window.harness.query_by_role_and_label(Role::MultilineTextInput, "Note");
    assert!(note.is_none(), "N typed into a box does not open the note");
    // Tab leaves the box (egui's focus order) but does not switch the question.
    window.press(Key::Tab, None);
    assert_eq!(window.tab(), Some(Tab::Question(0)));
    assert_nothing_sent(&asked);

    // Ctrl+Enter submits even from the text box.
    window.press_with(CTRL, Key::Enter);
    assert_eq!(
        reply(&asked.envelope, &asked.outcome)["answers"],
        json!({DATABASE_QUESTION: "12 n\n3"})
    );
}

#[test]
fn the_other_digit_focuses_its_box_and_esc_leaves_it_without_declining() {
    let (mut window, asked) = open_fixture("database");
    // The key alone (see the ignored test below for the text it also types).
    window.press(Key::Num5, None);
    assert!(window.is_on(Role::RadioButton, "Other"));
    assert!(window.answer_box().is_focused(), "5 = Other puts the cursor in its box");
    window.type_text("MariaDB");
    assert_eq!(window.answer_box().value().as_deref(), Some("MariaDB"));

    window.press(Key::Escape, None);
    assert!(!window.answer_box().is_focused(), "Esc leaves the box");
    assert!(!window.has_label("Decline these questions?"), "the same Esc does not ask to decline");
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Review));
    window.press(Key::Enter, None);
    assert_eq!(
        reply(&asked.envelope, &asked.outcome)["answers"],
        json!({DATABASE_QUESTION: "MariaDB"})
    );
}

#[test]
fn the_other_digit_is_not_typed_into_its_box() {
    let (mut window, _asked) = open_fixture("database");
    window.press_digit(5);
    assert!(window.is_on(Role::RadioButton, "Other"));
    assert!(window.answer_box().is_focused());
    assert_eq!(window.answer_box().value().as_deref(), Some(""), "the 5 itself is not typed");
}

#[test]
fn alt_n_opens_the_note_and_the_note_is_sent() {
    let (mut window, asked) = open_fixture("database");
    window.press_digit(3);
    window.press_with(Modifiers::ALT, Key::N);
    let note = window.harness.get_by_role_and_label(Role::MultilineTextInput, "Note");
    assert!(note.is_focused(), "Alt+N puts the cursor in the note");
    window.type_text("Prefer managed hosting");
    window.press_with(CTRL, Key::Enter);
    let reply = reply(&asked.envelope, &asked.outcome);
    assert_eq!(reply["answers"], json!({DATABASE_QUESTION: "SQLite"}));
    assert_eq!(
        reply["annotations"],
        json!({DATABASE_QUESTION: {"notes": "Prefer managed hosting"}})
    );
}

#[test]
fn a_plain_n_is_typed_into_other_and_never_opens_the_note() {
    let (mut window, _asked) = open_fixture("database");
    window.press(Key::N, Some("n"));
    window.press(Key::O, Some("o"));
    assert!(window.harness.query_by_role_and_label(Role::MultilineTextInput, "Note").is_none());
    assert_eq!(window.answer_box().value().as_deref(), Some("no"));
    assert!(window.answer_box().is_focused());
    assert!(window.is_on(Role::RadioButton, "Other"));
}

#[test]
fn clicking_other_puts_the_cursor_in_its_box() {
    let (mut window, _asked) = open_fixture("database");
    window.click(Role::RadioButton, "Other");
    assert!(window.is_on(Role::RadioButton, "Other"));
    assert!(window.answer_box().is_focused());
}

#[test]
fn clicking_an_options_description_chooses_it() {
    let (mut window, _asked) = open_fixture("database");
    let description = "Embedded single-file database with zero setup, best for local \
                       development or low write concurrency.";
    window.harness.get_by_label(description).click();
    window.harness.run();
    assert!(window.is_on(Role::RadioButton, "SQLite"));
}

#[test]
fn japanese_korean_and_thai_labels_render_and_answer() {
    for (name, single, multi, answers) in [
        (
            "library-ja",
            "reqwest (推奨)",
            "TLS (rustls)",
            json!({"この Rust CLI でどの HTTP クライアントライブラリを使いますか？": "reqwest (推奨)",
                "HTTP クライアントでどの機能を有効にしますか？": "TLS (rustls)"}),
        ),
        (
            "korean",
            "Zustand (권장)",
            "Prettier",
            json!({"이 웹 서비스의 상태 관리를 어떤 라이브러리로 할까요?": "Zustand (권장)",
                "프로젝트 초기 설정에 어떤 도구를 추가할까요?": "Prettier"}),
        ),
        (
            "thai",
            "Axum (แนะนำ)",
            "จำกัดอัตราคำขอ",
            json!({"ควรใช้เฟรมเวิร์กใดสำหรับสร้าง REST API ของบริการนี้?": "Axum (แนะนำ)",
                "ต้องการเพิ่มฟีเจอร์ใดให้กับ API บ้าง?": "จำกัดอัตราคำขอ"}),
        ),
    ] {
        let (mut window, asked) = open_fixture(name);
        let header = fixture_questions(name)[0]["header"].as_str().expect("a header").to_owned();
        assert!(window.has_button(&header), "{name}: tab {header}");
        window.click(Role::RadioButton, single);
        assert!(window.is_on(Role::RadioButton, single), "{name}: {single}");
        assert!(window.has_button(&format!("{header} ✔")), "{name}");
        window.click_button("Next →");
        window.click(Role::CheckBox, multi);
        assert!(window.is_on(Role::CheckBox, multi), "{name}: {multi}");
        window.click_button("Submit");
        assert_eq!(reply(&asked.envelope, &asked.outcome)["answers"], answers, "{name}");
    }
}

#[test]
fn soft_invalid_input_shows_its_warnings_and_can_be_answered() {
    let (mut window, asked) = open_fixture("edge-cases");
    let warnings = validate(&fixture_input("edge-cases")).expect("shown anyway").warnings;
    assert!(!warnings.is_empty());
    let header = window.harness.get_by_label_contains("problems with this request");
    let header_label = header.accesskit_node().label().unwrap_or_default();
    assert!(header_label.contains(&format!("{} problems", warnings.len())), "{header_label}");
    header.click();
    window.harness.run();
    for warning in &warnings {
        assert!(window.has_text_with(&[&warning.to_string()]), "warning shown: {warning}");
    }
    // Five questions, five tabs (the over-long header may be cut on its tab).
    for tab in ["Palette", "Cleanup", "Linters", "Banner", "Review"] {
        assert!(window.has_button(tab), "tab {tab}");
    }
    let long_tab = window.harness.query_all_by_role(Role::Button).filter(|node| {
        node.accesskit_node().label().is_some_and(|label| label.starts_with("Very long"))
    });
    assert_eq!(long_tab.count(), 1);

    // By key: a click on the middle of this row lands on its long description (see the ignored
    // clicking_an_options_description_chooses_it).
    window.press_digit(1);
    assert!(window.is_on(Role::RadioButton, "Adapter with shadow mode"));
    window.click_button("Palette");
    for label in ["Fifth option", "Say \"hi\"", "Red, green"] {
        window.click(Role::CheckBox, label);
    }
    window.click_button("Cleanup");
    window.click(Role::RadioButton, "Delete them");
    window.click_button("Submit");
    assert!(window.has_text_with(&["2 of 5", "not answered", "Linters", "Banner"]));
    window.click_button("Submit anyway");
    let questions = fixture_questions("edge-cases");
    let mut expected = serde_json::Map::new();
    for (index, answer) in
        [(0, "Adapter with shadow mode"), (1, r#""Red, green", "Say \"hi\"", Fifth option"#)]
            .into_iter()
            .chain([(2, "Delete them")])
    {
        let text = questions[index]["question"].as_str().expect("question text");
        expected.insert(text.to_owned(), Value::String(answer.to_owned()));
    }
    assert_eq!(reply(&asked.envelope, &asked.outcome)["answers"], Value::Object(expected));
}

#[test]
fn several_requests_are_listed_and_answering_one_moves_to_the_next() {
    let mut window = window();
    let database = window.ask_fixture("database");
    let four = window.ask_fixture("four-questions");
    let database_entry = window.request_entries("Database");
    let auth_entry = window.request_entries("Auth");
    assert_eq!((database_entry.len(), auth_entry.len()), (1, 1), "one entry per request");
    let is_current = |window: &Window, entry: &str| window.is_on(Role::Button, entry);
    assert!(is_current(&window, &database_entry[0]));
    assert!(!is_current(&window, &auth_entry[0]));

    // Switching requests by the list, and back.
    window.click_button(&auth_entry[0]);
    assert!(window.has_label("How should users authenticate with the new admin dashboard?"));
    assert!(is_current(&window, &auth_entry[0]));
    window.click_button(&database_entry[0]);
    assert!(window.has_label(DATABASE_QUESTION));

    window.click(Role::RadioButton, "MySQL");
    window.click_button("Submit");
    assert_eq!(
        reply(&database.envelope, &database.outcome)["answers"],
        json!({DATABASE_QUESTION: "MySQL"})
    );
    assert_nothing_sent(&four);
    // The next request shows by itself; with one left, the list is gone.
    for tab in ["Auth", "Deploy", "Tests", "Logging", "Review"] {
        assert!(window.has_button(tab), "tab {tab}");
    }
    assert!(window.has_label("How should users authenticate with the new admin dashboard?"));
    assert!(window.request_entries("Auth").is_empty());
    assert!(window.request_entries("Database").is_empty());
}

#[test]
fn the_same_tool_use_twice_shows_once_and_answers_both() {
    let mut window = window();
    let first = window.ask(&database_tool_use("toolu_x"));
    let again = window.ask(&database_tool_use("toolu_x"));
    assert_eq!(window.app().state().book().len(), 1);
    assert!(window.request_entries("Database").is_empty(), "no list for one request");
    window.click(Role::RadioButton, "SQLite"); // would panic if the rows were there twice
    window.click_button("Submit");
    let expected = json!({
        "questions": fixture_questions("database"),
        "answers": {DATABASE_QUESTION: "SQLite"},
        "annotations": {}
    });
    assert_eq!(first.envelope, Envelope::ToolUse { id: "toolu_x".into() });
    assert_eq!(reply(&first.envelope, &first.outcome), expected);
    assert_eq!(reply(&again.envelope, &again.outcome), expected);
}

#[test]
fn a_withdrawn_request_disappears_and_keeps_what_was_typed() {
    let (mut window, asked) = open(&database_tool_use("toolu_w"));
    window.click(Role::RadioButton, "Other");
    window.focus_box(Role::MultilineTextInput, "Your answer");
    window.type_text("MariaDB, managed");
    assert!(
        window
            .sender
            .send(Inbound::Request(RequestEvent::Withdraw { tool_use_id: "toolu_w".into() }))
    );
    window.harness.run();

    assert_eq!(outcome(&asked), Outcome::Withdrawn);
    assert!(window.app().state().book().is_empty());
    assert!(!window.has_label(DATABASE_QUESTION));
    assert!(window.is_idle());
    let notice = ["withdrew", "Database", "MariaDB, managed"];
    assert!(window.has_text_with(&notice), "the notice keeps the typed text");

    // The keyboard still works for the next request (the focus did not stay in a gone box).
    let next = window.ask_fixture("database");
    window.press_digit(3);
    assert!(window.is_on(Role::RadioButton, "SQLite"));
    window.press_with(CTRL, Key::Enter);
    assert_eq!(
        reply(&next.envelope, &next.outcome)["answers"],
        json!({DATABASE_QUESTION: "SQLite"})
    );
    assert!(window.has_text_with(&notice), "the notice stays until dismissed");
    // Two buttons are named "✕" now, the notice's and the receipt's: the one level with the
    // notice is its own.
    let notice_rect = window
        .harness
        .query_all_by_role(Role::Label)
        .find(|node| {
            let text = node.accesskit_node().value().unwrap_or_default();
            notice.iter().all(|part| text.contains(part))
        })
        .expect("the notice")
        .rect();
    let dismiss = window
        .harness
        .get_all_by_role_and_label(Role::Button, "✕")
        .find(|node| notice_rect.y_range().intersects(node.rect().y_range()))
        .expect("the notice's ✕");
    dismiss.click();
    window.harness.run();
    assert!(!window.has_text_with(&notice), "✕ dismisses the notice");
    assert!(window.has_button("Copy reply"), "and only the notice");
}

#[test]
fn closing_the_window_tells_every_waiting_agent() {
    let mut window = window();
    let first = window.ask_fixture("database");
    let second = window.ask(&database_tool_use("toolu_closed"));
    eframe::App::on_exit(window.harness.state_mut(), None);
    for asked in [&first, &second] {
        let outcome = outcome(asked);
        assert_eq!(outcome, Outcome::closed());
        assert_eq!(
            asked.envelope.reply(&outcome),
            Some(json!({"outcome": "declined", "message": CLOSED_MESSAGE}))
        );
    }
    assert!(window.app().state().book().is_empty());
    window.harness.run();
    assert!(window.is_idle());
    drop(window);
    assert_eq!(first.outcome.try_recv(), Err(TryRecvError::Disconnected), "told once only");
}

#[test]
fn dropping_the_window_tells_every_waiting_agent() {
    let (mut window, shown) = open_fixture("four-questions");
    window.click(Role::RadioButton, "Email magic link");
    // A request still in the channel, never shown, is told too.
    let (request, in_channel) = request(&database_tool_use("toolu_late"));
    assert!(window.sender.send(Inbound::Request(RequestEvent::Ask(Box::new(request)))));
    drop(window);
    assert_eq!(outcome(&shown), Outcome::closed());
    assert_eq!(in_channel.try_recv(), Ok(Outcome::closed()));
}

#[test]
fn closing_with_answers_in_progress_asks_first() {
    let (mut window, asked) = open_fixture("database");
    window.click(Role::RadioButton, "MySQL");
    let commands = window.request_close();
    assert!(commands.contains(&ViewportCommand::CancelClose), "kept open: {commands:?}");
    assert!(window.has_label("Close askpane?"));
    assert_nothing_sent(&asked);

    window.click_button("Keep answering");
    assert!(!window.has_label("Close askpane?"));
    assert!(window.is_on(Role::RadioButton, "MySQL"), "nothing was lost");
    assert_nothing_sent(&asked);

    let commands = window.request_close();
    assert!(commands.contains(&ViewportCommand::CancelClose));
    window.harness.get_by_role_and_label(Role::Button, "Close and decline").click();
    window.harness.step();
    let commands = window.harness.output().viewport_output[&ViewportId::ROOT].commands.clone();
    assert!(commands.contains(&ViewportCommand::Close), "closes: {commands:?}");
    // eframe then ends the app.
    eframe::App::on_exit(window.harness.state_mut(), None);
    assert_eq!(outcome(&asked), Outcome::closed());
}

#[test]
fn closing_with_nothing_touched_closes_at_once() {
    let (mut window, asked) = open_fixture("database");
    let commands = window.request_close();
    assert!(!commands.contains(&ViewportCommand::CancelClose), "{commands:?}");
    assert!(!window.has_label("Close askpane?"));
    eframe::App::on_exit(window.harness.state_mut(), None);
    assert_eq!(outcome(&asked), Outcome::closed());
}

#[test]
fn every_control_has_an_accessible_name() {
    const CONTROLS: [Role; 7] = [
        Role::RadioButton,
        Role::CheckBox,
        Role::Button,
        Role::TextInput,
        Role::MultilineTextInput,
        Role::DisclosureTriangle,
        Role::Splitter,
    ];
    let (mut window, _asked) = open_fixture("settings-capture");
    let mut pages = 0;
    let mut check = |window: &Window, page: &str, expected: &[(Role, &str)]| {
        pages += 1;
        let mut seen = Vec::new();
        for node in window.harness.root().children_recursive() {
            let node = node.accesskit_node();
            if !CONTROLS.contains(&node.role()) {
                continue;
            }
            let label = node.label().unwrap_or_default();
            assert!(
                !label.trim().is_empty(),
                "{page}: unnamed {:?} at {:?}",
                node.role(),
                node.raw_bounds()
            );
            seen.push((node.role(), label));
        }
        for (role, label) in expected {
            assert!(
                seen.iter().any(|(r, l)| r == role && l == label),
                "{page}: no {role:?} {label:?} in {seen:?}"
            );
        }
    };
    let footer = [(Role::Button, "Next →"), (Role::Button, "Decline…"), (Role::Button, "Submit")];
    let tabs = [
        (Role::Button, "Layout"),
        (Role::Button, "Features"),
        (Role::Button, "データベース"),
        (Role::Button, "Review"),
    ];
    let mut expected: Vec<(Role, &str)> = [
        (Role::RadioButton, "Sidebar"),
        (Role::RadioButton, "Tabs"),
        (Role::RadioButton, "Other"),
        (Role::MultilineTextInput, "Your answer"),
        (Role::DisclosureTriangle, "Note to the agent (optional, Alt+N)"),
        (Role::Button, "Copy"),
    ]
    .into();
    expected.extend(footer.iter().chain(&tabs));
    check(&window, "Layout", &expected);

    window.click(Role::DisclosureTriangle, "Note to the agent (optional, Alt+N)");
    check(&window, "Layout with the note open", &[(Role::MultilineTextInput, "Note")]);

    window.click_button("Features");
    let mut expected: Vec<(Role, &str)> = [
        (Role::CheckBox, "Dark mode"),
        (Role::CheckBox, "Search"),
        (Role::CheckBox, "Export"),
        (Role::CheckBox, "Other"),
        (Role::MultilineTextInput, "Your answer"),
        (Role::Button, "← Back"),
    ]
    .into();
    expected.extend(footer.iter().chain(&tabs));
    check(&window, "Features", &expected);

    window.click_button("データベース");
    check(
        &window,
        "データベース",
        &[
            (Role::RadioButton, "PostgreSQL"),
            (Role::RadioButton, "SQLite"),
            (Role::RadioButton, "Other"),
        ],
    );

    window.click_button("Review");
    check(&window, "Review", &[(Role::Button, "Submit"), (Role::Button, "← Back")]);
    window.click_button("Submit");
    check(
        &window,
        "submit with nothing answered",
        &[(Role::Button, "Send without answers"), (Role::Button, "Go back")],
    );
    window.click_button("Go back");
    window.click_button("Decline…");
    check(
        &window,
        "decline",
        &[
            (Role::TextInput, "Message to the agent (optional)"),
            (Role::Button, "Decline"),
            (Role::Button, "Go back"),
        ],
    );
    assert_eq!(pages, 7);
    assert!(window.harness.unnamed_widgets().is_empty());
}

#[test]
fn enter_in_the_decline_box_declines_and_never_sends_an_answer() {
    let (mut window, asked) = open_fixture("database");
    window.press_digit(3);
    window.press(Key::Enter, None);
    assert_eq!(window.tab(), Some(Tab::Review), "all answered: Enter now would submit");
    window.press(Key::Escape, None);
    assert!(window.has_label("Decline these questions?"));
    let message_box =
        window.harness.get_by_role_and_label(Role::TextInput, "Message to the agent (optional)");
    assert!(message_box.is_focused(), "the message box takes the keyboard");
    window.press(Key::Enter, None);
    assert_eq!(outcome(&asked), Outcome::declined(""));
}

/// A hook input as Claude Code sends it, from `session` in the folder `cwd`; `subagent` is set
/// when a subagent asks.
fn hook_question(
    session: &str,
    cwd: &str,
    tool_use_id: &str,
    header: &str,
    subagent: Option<&str>,
) -> (Request, Receiver<Outcome>) {
    let mut message = json!({
        "hook_event_name": "PreToolUse", "session_id": session, "cwd": cwd,
        "permission_mode": "plan", "tool_name": "AskUserQuestion", "tool_use_id": tool_use_id,
        "tool_input": {"questions": [{"question": format!("{header}?"), "header": header,
            "multiSelect": false, "options": [{"label": "Yes"}, {"label": "No"}]}]}});
    if let Some(subagent) = subagent {
        message["agent_id"] = json!("a1b2");
        message["agent_type"] = json!(subagent);
    }
    let incoming = parse_message(&message).expect("a hook input");
    let provenance = Provenance::from_envelope("hook", &incoming.envelope);
    Request::new(incoming, provenance).expect("valid")
}

// Issue 10: the request list groups by project, then session; each entry says who asked (the
// subagent too), the permission mode and how long it has waited; the title counts them all.
#[test]
fn the_request_list_groups_by_project_and_session_and_says_who_asked() {
    let mut window = window();
    let mut asked = Vec::new();
    for (session, cwd, id, header, subagent) in [
        ("11111111-aaaa", "/home/me/orders", "t1", "Schema", None),
        ("22222222-bbbb", "/home/me/billing", "t2", "Invoices", None),
        ("33333333-cccc", "/home/me/orders", "t3", "Indexes", Some("Explore")),
    ] {
        let (request, outcome) = hook_question(session, cwd, id, header, subagent);
        asked.push(window.send(request, outcome));
    }
    let harness = &window.harness;
    harness.get_by_label("3 waiting");
    harness.get_by_label("orders");
    harness.get_by_label("billing");
    harness.get_by_label("session 11111111");
    harness.get_by_label("session 33333333");
    harness.get_by_role_and_label(
        Role::Button,
        "Indexes · Claude Code (hook) · subagent Explore · plan · 1 question · just now",
    );
    // Oldest first within the project: the two orders requests come before billing's.
    let order: Vec<String> = harness
        .get_all_by_role(Role::Button)
        .filter_map(|node| node.accesskit_node().label())
        .filter(|label| label.contains("Claude Code (hook)"))
        .map(|label| label.split(" · ").next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(order, ["Schema", "Indexes", "Invoices"]);
    let title = window.app().state().title(0.0);
    assert_eq!(title, "3 waiting · orders · 1 question — askpane");
    assert!(asked.iter().all(|asked| asked.outcome.is_empty()), "nothing was sent");
}

// Issue 10: the inbox's window is resident. Its close button hides it when nothing waits; with
// requests waiting it asks (keep them waiting in the background, or decline them all), and
// never closes by itself.
#[test]
fn the_inbox_window_hides_or_asks_and_never_closes_by_its_close_button() {
    let resident = AppOptions { resident: true, ..AppOptions::default() };
    let mut window = window_with(960.0, 680.0, resident);
    let hidden = |commands: &[ViewportCommand]| {
        commands.contains(&ViewportCommand::Visible(false))
            && !commands.contains(&ViewportCommand::Close)
    };
    assert!(hidden(&window.request_close()), "nothing waits: it hides");
    let asked = window.ask_fixture("database");
    let commands = window.request_close();
    assert!(commands.contains(&ViewportCommand::CancelClose), "{commands:?}");
    assert!(!hidden(&commands), "a request waits: it asks first");
    assert!(window.has_text_with(&[
        "1 question is waiting. They can keep waiting in the background (the window comes back \
         when another question arrives, or when you run askpane inbox), or be declined now: each \
         agent is told you closed the window without answering."
    ]));
    window.click_button("Keep waiting in the background");
    assert!(asked.outcome.is_empty(), "still waiting");
    window.request_close();
    window.click_button("Decline all");
    assert_eq!(outcome(&asked), Outcome::closed());
}

/// Issue 25: "Decline all" in the inbox's window also ends the tool calls waiting for approval:
/// each agent hears the window closed without deciding, and the card leaves the window (it had
/// stayed on screen with nobody left to hear a click on it).
#[test]
fn decline_all_in_the_inbox_window_denies_and_removes_the_waiting_tool_calls() {
    let resident = AppOptions { resident: true, ..AppOptions::default() };
    let mut window = window_with(960.0, 680.0, resident);
    let request = askpane::protocol::stream::PermissionRequest {
        request_id: "perm-1".to_owned(),
        tool_name: "Bash".to_owned(),
        input: json!({"command": "cargo test"}),
        tool_use_id: Some("toolu_perm".to_owned()),
        title: None,
        description: None,
        reason: None,
        agent_id: None,
        ..Default::default()
    };
    let (reply, decision) = transport::Responder::channel();
    let provenance = Provenance::new("claude", Some("shop".to_owned()));
    let id = transport::RequestId::next();
    let card = transport::PermissionAsk { id, request, provenance, reply };
    assert!(
        window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(card)))),
        "the window is listening"
    );
    let asked = window.ask_fixture("database");
    assert_eq!(window.app().state().permissions().len(), 1);
    window.request_close();
    window.click_button("Decline all");
    assert_eq!(outcome(&asked), Outcome::closed());
    assert_eq!(
        decision.try_recv(),
        Ok(askpane::protocol::stream::PermissionDecision::Deny {
            message: "The user closed askpane without deciding.".to_owned()
        })
    );
    assert!(window.app().state().permissions().is_empty(), "the card left the window");
}

/// Issue 24 item 26: Ctrl+W on the inbox's empty page hides it, as its close button does.
#[test]
fn ctrl_w_hides_the_empty_inbox_window() {
    let resident = AppOptions { resident: true, ..AppOptions::default() };
    let mut window = window_with(960.0, 680.0, resident);
    window.wait_out_key_grace();
    let events = &mut window.harness.input_mut().events;
    events.push(Event::Key {
        key: Key::W,
        pressed: true,
        modifiers: CTRL,
        repeat: false,
        physical_key: None,
    });
    window.harness.step();
    // The app asks to close; the resident window answers its own close request by hiding.
    let commands = window.harness.output().viewport_output[&ViewportId::ROOT].commands.clone();
    assert!(commands.contains(&ViewportCommand::Close), "{commands:?}");
    assert!(
        window.request_close().contains(&ViewportCommand::Visible(false)),
        "the empty inbox hides"
    );
}

/// Issue 24 item 13: words being written to the agent are never thrown away by a Submit: the
/// button is not offered beside the bar, Ctrl+Enter sends the bar's own words, and a Submit
/// from elsewhere (a page, a stale click) leaves the bar and its text as they are.
#[test]
fn submit_is_not_offered_while_a_decline_or_reply_is_being_written() {
    let (mut window, asked) = open_fixture("database");
    window.press_digit(2);
    window.click_button("Decline…");
    window.focus_box(Role::TextInput, "Message to the agent (optional)");
    window.type_text("Use the defaults");
    assert!(!window.has_button("Submit"), "Submit beside the decline bar");
    let ctx = window.harness.ctx.clone();
    let submit = askpane::app::state::Action::Edit(askpane::app::state::Edit::Submit);
    window.harness.state_mut().apply(&ctx, vec![submit]);
    window.harness.run();
    assert_nothing_sent(&asked);
    assert!(window.has_label("Decline these questions?"), "the bar stays");
    window.press_with(CTRL, Key::Enter);
    assert_eq!(
        outcome(&asked),
        Outcome::Declined {
            message: "The user declined to answer these questions and said: Use the defaults"
                .into()
        }
    );

    let (mut window, asked) = open_fixture("database");
    window.click_button("Answer in my own words…");
    window.type_text("Let's talk first");
    assert!(!window.has_button("Submit"), "Submit beside the reply bar");
    window.press_with(CTRL, Key::Enter);
    let Outcome::Replied(reply) = outcome(&asked) else { panic!("the reply is sent") };
    assert_eq!(reply.text(), "Let's talk first");
}

/// A tool_use asking one question whose first option has `preview`.
fn preview_question(preview: &str) -> Value {
    json!({"type": "tool_use", "name": "AskUserQuestion", "id": "toolu_preview",
        "input": {"questions": [{"question": "Which layout?", "header": "Layout",
            "multiSelect": false, "options": [
                {"label": "This one", "description": "With the preview", "preview": preview},
                {"label": "Another", "description": "Without one"}]}]}})
}

/// Every glyph the last frame painted, with its place on the screen: (character, left edge,
/// glyph) in painting order.
fn painted_glyphs(window: &Window) -> Vec<(char, f32, egui::epaint::text::Glyph)> {
    fn collect(shape: &egui::Shape, out: &mut Vec<(char, f32, egui::epaint::text::Glyph)>) {
        match shape {
            egui::Shape::Text(text) => {
                for row in &text.galley.rows {
                    for glyph in &row.row.glyphs {
                        let x = text.pos.x + row.pos.x + glyph.pos.x;
                        out.push((glyph.chr, x, *glyph));
                    }
                }
            }
            egui::Shape::Vec(shapes) => shapes.iter().for_each(|shape| collect(shape, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    window.harness.output().shapes.iter().for_each(|clipped| collect(&clipped.shape, &mut out));
    out
}

/// The rows of text the last frame laid out and painted, over every galley.
fn painted_rows(window: &Window) -> usize {
    fn count(shape: &egui::Shape) -> usize {
        match shape {
            egui::Shape::Text(text) => text.galley.rows.len(),
            egui::Shape::Vec(shapes) => shapes.iter().map(count).sum(),
            _ => 0,
        }
    }
    window.harness.output().shapes.iter().map(|clipped| count(&clipped.shape)).sum()
}

#[test]
fn a_box_around_japanese_and_korean_text_closes_as_in_a_terminal() {
    // Each line 16 cells: a CJK character or a Hangul syllable takes two.
    let mockup = "┌──────────────┐\n│ 日本語の設定 │\n│ 한국어 설정  │\n│ plain text   │\n\
                  │ 全角ＡＢＣ   │\n└──────────────┘";
    let (window, _asked) = open(&preview_question(mockup));
    let glyphs = painted_glyphs(&window);
    let right_edges: Vec<(char, f32)> = glyphs
        .iter()
        .filter(|(c, _, _)| matches!(c, '┐' | '┘'))
        .chain(glyphs.iter().filter(|(c, _, _)| *c == '│').skip(1).step_by(2))
        .map(|(c, x, _)| (*c, *x))
        .collect();
    assert_eq!(right_edges.len(), 6, "every line's right edge is painted: {right_edges:?}");
    let left = right_edges.iter().map(|(_, x)| *x).fold(f32::INFINITY, f32::min);
    let right = right_edges.iter().map(|(_, x)| *x).fold(f32::NEG_INFINITY, f32::max);
    assert!(
        right - left < 0.51,
        "the right edges are apart by {} pt: {right_edges:?}",
        right - left
    );
}

/// The right edges of a box's lines: the last of each line's box-drawing characters.
fn right_edges(window: &Window) -> Vec<(char, f32)> {
    let glyphs = painted_glyphs(window);
    let mut edges: Vec<(char, f32)> = Vec::new();
    let mut previous_x = f32::NEG_INFINITY;
    for (c, x, _) in glyphs.iter().filter(|(c, _, _)| matches!(c, '┐' | '┘' | '│')) {
        // A new line starts left of where the last character was.
        match edges.last_mut() {
            Some(last) if *x > previous_x && *c == '│' && last.0 == '│' => *last = (*c, *x),
            _ => edges.push((*c, *x)),
        }
        previous_x = *x;
    }
    edges
}

#[test]
fn a_box_in_a_fenced_code_block_closes_too() {
    let markdown = "## Layout 🚀\n\n```\n┌────────────┐\n│ 日本語設定 │\n│ 한국어     │\n\
                    │ plain      │\n└────────────┘\n```\nThen **this**.";
    let (window, _asked) = open(&preview_question(markdown));
    let edges = right_edges(&window);
    assert_eq!(edges.len(), 5, "every line's right edge: {edges:?}");
    let left = edges.iter().map(|(_, x)| *x).fold(f32::INFINITY, f32::min);
    let right = edges.iter().map(|(_, x)| *x).fold(f32::NEG_INFINITY, f32::max);
    assert!(right - left < 0.51, "the right edges are apart by {} pt: {edges:?}", right - left);
    let glyphs = painted_glyphs(&window);
    let (_, _, rocket) = glyphs.iter().find(|(c, _, _)| *c == '🚀').expect("the heading");
    assert!(rocket.is_color, "a heading's emoji in colour too");
}

#[test]
fn thai_in_a_preview_is_as_large_as_the_latin_text() {
    // Four pixels a point: glyphs measured to a quarter of a point.
    let (sender, inbox) = transport::memory();
    let harness = Harness::builder()
        .with_size(egui::vec2(960.0, 680.0))
        .with_pixels_per_point(4.0)
        .with_context_setup(|ctx| ctx.add_font_provider(system_fonts()))
        .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, AppOptions::default()));
    let mut window = Window { harness, sender };
    let _asked = window.ask(&preview_question("x บ x\nplain"));
    let glyphs = painted_glyphs(&window);
    let height = |wanted: char| {
        let (_, _, glyph) = glyphs.iter().find(|(c, _, _)| *c == wanted).expect("painted");
        glyph.uv_rect.size.y
    };
    let (latin, thai) = (height('x'), height('บ'));
    assert!(thai >= 0.9 * latin, "บ is {thai} pt tall, x {latin} pt");
}

#[test]
fn emoji_in_a_preview_are_in_colour_and_the_windows_own_symbols_are_not() {
    let (mut window, _asked) = open(&preview_question("Ship it 🚀 ✅\n# Done"));
    // Answered: the tab shows its ✔, drawn in the window's own colours.
    window.click(Role::RadioButton, "This one");
    let glyphs = painted_glyphs(&window);
    for emoji in ['🚀', '✅'] {
        let (_, _, glyph) = glyphs.iter().find(|(c, _, _)| *c == emoji).expect("painted");
        assert!(glyph.is_color, "{emoji} is drawn in colour (Noto Color Emoji is installed)");
    }
    let (_, _, mark) = glyphs.iter().find(|(c, _, _)| *c == '✔').expect("the tab's mark");
    assert!(!mark.is_color, "the window's ✔ stays in its colours");
}

#[test]
fn a_verbatim_preview_of_100_000_lines_lays_out_only_what_is_in_view() {
    let mut mockup = String::from("+--------+\n");
    for n in 0..100_000 {
        mockup.push_str(&format!("| {n:>6} |\n"));
    }
    let (window, _asked) = open(&preview_question(&mockup));
    assert_eq!(window.shown("|      0 |"), 1, "the first lines are shown");
    let rows = painted_rows(&window);
    assert!(rows < 300, "{rows} rows of text laid out for a screen of the preview");
}

#[test]
fn a_huge_markdown_preview_lays_out_only_what_is_in_view() {
    let mut table = String::from("| n | square |\n|---|---|\n");
    for n in 0..5_000 {
        table.push_str(&format!("| {n} | {} |\n", n * n));
    }
    let (window, _asked) = open(&preview_question(&table));
    assert!(window.shown("square") >= 1, "the table's header is shown");
    assert_eq!(window.shown("| 1 | 1 |"), 0, "formatted as a table: no pipes");
    // egui paints only the widgets in view, but lays out (and lists) every one it is given.
    let widgets = window.harness.root().children_recursive().count();
    assert!(widgets < 2_000, "{widgets} widgets laid out for a screen of a 5 000-row table");
}

#[test]
fn a_preview_line_of_a_megabyte_lays_out_only_what_is_in_view() {
    // One line of minified data: a megabyte wide, a screen of it shown.
    let line: String = (0..100_000).map(|n| format!("{n:>9},")).collect();
    let (window, _asked) = open(&preview_question(&format!("+--+\n{line}\n+--+")));
    let glyphs = painted_glyphs(&window).len();
    assert!(glyphs < 5_000, "{glyphs} glyphs laid out for a screen of a 1 MB line");
    let start: String = line.chars().take(20).collect();
    assert_eq!(window.shown(&start), 1, "the line's start is shown");
}

/// Issue 26: a hook's tool call on a card: one "Always …" button per rule Claude Code
/// suggested, in words for a person, and "Answer in the terminal"; no key or click in the first
/// moments after the card appears decides it (Enter pressed five times included), and every
/// button is reachable by keyboard.
#[test]
fn a_hooks_card_offers_each_suggestion_and_ignores_input_as_it_appears() {
    use askpane::protocol::permission::{ApprovalOrigin, parse_suggestions};
    use askpane::protocol::stream::PermissionDecision;
    // A grace of 2 s (a test's own stands for both keys and clicks): long enough for a few
    // frames of the harness's 0.25 s clock to press keys and click inside it.
    let grace = std::time::Duration::from_secs(2);
    let options = AppOptions { resident: true, key_grace: Some(grace), ..AppOptions::default() };
    let mut window = window_with(1100.0, 700.0, options);
    let wait_out_grace = |window: &mut Window| window.harness.run_steps(10);
    wait_out_grace(&mut window);
    let rules = json!([{"type": "addRules", "rules": [{"toolName": "Bash",
        "ruleContent": "npm test *"}], "behavior": "allow", "destination": "localSettings"},
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]);
    let send_card = |window: &mut Window, request_id: &str| {
        let request = askpane::protocol::stream::PermissionRequest {
            request_id: request_id.to_owned(),
            tool_name: "Bash".to_owned(),
            input: json!({"command": "npm test"}),
            tool_use_id: None,
            title: None,
            description: None,
            reason: None,
            agent_id: None,
            suggestions: parse_suggestions(Some(&rules)),
            origin: ApprovalOrigin::Hook,
            ..Default::default()
        };
        let (reply, decision) = transport::Responder::channel();
        let provenance = Provenance::new("hook", Some("project".to_owned()));
        let card = transport::PermissionAsk {
            id: transport::RequestId::next(),
            request,
            provenance,
            reply,
        };
        assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(card)))));
        window.harness.step();
        decision
    };
    let decision = send_card(&mut window, "h1");
    for label in [
        "Allow once",
        "Always allow `npm test *` in this project",
        "Always allow edits in this session",
        "Deny",
        "Answer in the terminal",
    ] {
        assert!(
            window.harness.query_by_role_and_label(Role::Button, label).is_some(),
            "no button {label:?}"
        );
    }
    // Enter pressed five times on the focused button as it appears: dropped.
    window.harness.get_by_role_and_label(Role::Button, "Allow once").focus();
    window.harness.step();
    for _ in 0..5 {
        // Pressed and released in one frame each, as fast as a person presses them.
        for pressed in [true, false] {
            window.harness.input_mut().events.push(Event::Key {
                key: Key::Enter,
                pressed,
                modifiers: Modifiers::NONE,
                repeat: false,
                physical_key: None,
            });
        }
        window.harness.step();
    }
    assert!(decision.try_recv().is_err(), "Enter decided the card as it appeared");
    // A click aimed at something else lands on the card as it appears: dropped too.
    let allow = window.harness.get_by_role_and_label(Role::Button, "Allow once").rect().center();
    window.click_at_as_eframe(allow);
    assert!(decision.try_recv().is_err(), "a click decided the card as it appeared");
    wait_out_grace(&mut window);
    window.click_button("Always allow `npm test *` in this project");
    let Ok(PermissionDecision::AllowAlways { suggestion }) = decision.try_recv() else {
        panic!("allowed always")
    };
    assert_eq!(suggestion.raw(), &rules[0]);

    // Keyboard only: focus moves to "Answer in the terminal", Enter hands the call back.
    let decision = send_card(&mut window, "h2");
    wait_out_grace(&mut window);
    window.harness.get_by_role_and_label(Role::Button, "Answer in the terminal").focus();
    window.harness.run();
    window.press(Key::Enter, None);
    assert_eq!(decision.try_recv(), Ok(PermissionDecision::HandBack));
    assert!(window.app().state().permissions().is_empty());
}

/// Issue 26: an OpenCode permission request's card: OpenCode's own "always" as its one Always
/// button, and "Answer in OpenCode" (not the terminal) to leave it to OpenCode's TUI.
#[test]
fn an_opencode_card_offers_opencodes_always_and_answer_in_opencode() {
    use askpane::protocol::opencode;
    use askpane::protocol::stream::PermissionDecision;
    let options = AppOptions { resident: true, key_grace: None, ..AppOptions::default() };
    let mut window = window_with(1100.0, 700.0, options);
    let asked: opencode::PermissionAsked = serde_json::from_value(json!({
        "id": "per_1", "sessionID": "ses_1", "permission": "bash",
        "patterns": ["npm test"], "metadata": {"command": "npm test"}, "always": ["npm *"]
    }))
    .expect("a permission request");
    let send_card = |window: &mut Window| {
        let (request, from) = opencode::to_permission(&asked, "/work/shop");
        let (reply, decision) = transport::Responder::channel();
        let card = transport::PermissionAsk {
            id: transport::RequestId::next(),
            request,
            provenance: from.provenance(),
            reply,
        };
        assert!(window.sender.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(card)))));
        window.harness.run();
        decision
    };
    let decision = send_card(&mut window);
    let always = "Always allow bash `npm *` (in this project, until OpenCode restarts)";
    for label in ["Allow once", always, "Deny", "Answer in OpenCode"] {
        assert!(
            window.harness.query_by_role_and_label(Role::Button, label).is_some(),
            "no button {label:?}"
        );
    }
    assert!(
        window.harness.query_by_role_and_label(Role::Button, "Answer in the terminal").is_none()
    );
    window.click_button("Answer in OpenCode");
    assert_eq!(decision.try_recv(), Ok(PermissionDecision::HandBack));
    let decision = send_card(&mut window);
    window.click_button(always);
    assert!(matches!(decision.try_recv(), Ok(PermissionDecision::AllowAlways { .. })));
}

#[test]
fn a_list_of_five_hundred_waiting_requests_lays_out_only_what_is_in_view() {
    // Issue 30 item 2: 500 agents asking at once. Before, every entry was laid out every frame.
    let mut window = window();
    let mut outcomes = Vec::new();
    for n in 0..500 {
        let (request, outcome) = request(&json!({"questions": [{
            "question": format!("Which colour for crowd {n}?"), "header": format!("Crowd {n}"),
            "multiSelect": false,
            "options": [{"label": "Red", "description": "warm"},
                        {"label": "Blue", "description": "cool"}]}]}));
        let ask = Inbound::Request(RequestEvent::Ask(Box::new(request)));
        assert!(window.sender.send(ask), "the window is listening");
        outcomes.push(outcome);
    }
    window.harness.run();
    assert!(window.has_label("500 waiting"));
    let entries = window.list_entries(&[" question"]);
    assert!(entries.first().is_some_and(|first| first.starts_with("Crowd 0 ")), "{entries:?}");
    assert!(entries.len() < 40, "{} entries laid out", entries.len());
}
