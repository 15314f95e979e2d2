//! ACP forms, links, stuck turns and reject-always in the window (issue 28): a fake ACP agent of
//! the tests' own (`tests/fixtures/acp/form_agent.py`) hosted in-process by an `AcpSession`, the
//! window driven headless by egui_kittest by accessible label, and what the agent was sent read
//! back from its log. Also `askpane acp --no-inbox` without a display, for what nobody can see.

use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use serde_json::{Value, json};

use askpane::app::{App, AppOptions};
use askpane::transport::IoThreads;
use askpane::transport::agents::Autopilot;
use askpane::transport::agents::acp::{AcpOptions, AcpOwn, AcpSession};

use crate::support::{self, Finished, WAIT, run_bounded};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp/form_agent.py")
}

/// A scratch folder for one test: the agent's log, the trigger file, the session's cwd.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let root = support::scratch_dir(name);
        fs::create_dir_all(root.join("work")).unwrap();
        Scratch { root }
    }

    fn log(&self) -> PathBuf {
        self.root.join("agent.jsonl")
    }

    fn trigger(&self) -> PathBuf {
        self.root.join("trigger")
    }

    /// Every line askpane wrote to the agent so far.
    fn sent(&self) -> Vec<Value> {
        let text = fs::read_to_string(self.log()).unwrap_or_default();
        text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }

    /// The answers to the agent's request `id` (lines with that id and no method).
    fn answers(&self, id: &str) -> Vec<Value> {
        let sent = self.sent();
        sent.into_iter().filter(|line| line["id"] == id && line.get("method").is_none()).collect()
    }

    /// Waits (bounded) for the answer to `id`.
    fn answer(&self, id: &str) -> Value {
        let until = Instant::now() + WAIT;
        loop {
            if let Some(answer) = self.answers(id).into_iter().next() {
                return answer;
            }
            assert!(Instant::now() < until, "no answer to {id}: {:?}", self.sent());
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The window (kittest) with the fake agent in `mode` hosted behind it.
struct Window {
    scratch: Scratch,
    harness: Harness<'static, App>,
    session: Option<AcpSession>,
    threads: Option<IoThreads>,
}

impl Window {
    fn start(name: &str, mode: &str) -> Window {
        Window::start_with(name, mode, Duration::from_secs(300))
    }

    fn start_with(name: &str, mode: &str, stuck_after: Duration) -> Window {
        Window::start_after(name, mode, stuck_after, Duration::ZERO, Some("Go."))
    }

    /// [`Window::start_with`], the agent starting `delay` late (as Python can on a loaded
    /// machine), with `prompt` as the first turn (none: the test sends one).
    fn start_after(
        name: &str,
        mode: &str,
        stuck_after: Duration,
        delay: Duration,
        prompt: Option<&'static str>,
    ) -> Window {
        let scratch = Scratch::new(name);
        // `env` hands the agent its mode, log and trigger; `sh` waits out the delay first.
        let mut extra_args = vec![
            format!("FAKE_ACP_MODE={mode}"),
            format!("FAKE_ACP_LOG={}", scratch.log().display()),
            format!("FAKE_ACP_TRIGGER={}", scratch.trigger().display()),
        ];
        if !delay.is_zero() {
            let wait = format!("sleep {}; exec \"$0\" \"$@\"", delay.as_secs_f64());
            extra_args.extend(["sh".to_owned(), "-c".to_owned(), wait]);
        }
        extra_args.extend(["python3".to_owned(), script().display().to_string()]);
        let options = AcpOptions {
            program: PathBuf::from("env"),
            extra_args,
            prompt: prompt.map(str::to_owned),
            debug: false,
            autopilot: Autopilot::default(),
            own: AcpOwn { cwd: scratch.root.join("work"), allow_tools: Vec::new(), stuck_after },
        };
        let (to_ui, inbox) = askpane::transport::memory();
        let mut threads = IoThreads::default();
        let session = AcpSession::start(&options, to_ui, &mut threads).expect("start the agent");
        let commands = session.commands();
        let harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 900.0))
            .with_max_steps(16)
            .with_context_setup(|ctx| ctx.add_font_provider(crate::ui::FONTS.clone()))
            .build_eframe(move |cc| {
                App::new(&cc.egui_ctx, inbox, AppOptions::default()).with_session(commands, prompt)
            });
        Window { scratch, harness, session: Some(session), threads: Some(threads) }
    }

    fn has_label(&self, label: &str) -> bool {
        self.harness.query_by_label(label).is_some()
    }

    /// Whether some node (not a text run) shows `part` in its value or label.
    fn has_text(&self, part: &str) -> bool {
        crate::claude_host::has_text_with(&self.harness, &[part])
    }

    /// What the window shows (labels and values, not text runs), for a failure's message.
    fn shown(&self) -> String {
        let texts: Vec<String> = self
            .harness
            .root()
            .children_recursive()
            .map(|node| node.accesskit_node())
            .filter(|node| node.role() != Role::TextRun)
            .filter_map(|node| node.value().or_else(|| node.label()))
            .map(|text| text.chars().take(200).collect())
            .collect();
        texts.join(" | ")
    }

    /// Steps the window until `done` (bounded by WAIT).
    fn step_until(&mut self, what: &str, done: impl Fn(&Window) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            self.harness.step();
            if done(self) {
                self.harness.run();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited {WAIT:?} for {what}; shown: {}",
                self.shown()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn click(&mut self, role: Role, label: &str) {
        self.harness.get_by_role_and_label(role, label).click();
        self.harness.run();
    }

    /// Types `text` into the text box labelled `label`.
    fn fill(&mut self, label: &str, text: &str) {
        self.harness.get_by_role_and_label(Role::TextInput, label).focus();
        self.harness.run();
        self.harness.event(egui::Event::Text(text.to_owned()));
        self.harness.run();
    }

    /// Empties the text box labelled `label` and types `text`.
    fn refill(&mut self, label: &str, text: &str) {
        self.harness.get_by_role_and_label(Role::TextInput, label).focus();
        self.harness.run();
        self.harness.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
        self.harness.run();
        self.harness.key_press(egui::Key::Backspace);
        self.harness.run();
        self.harness.event(egui::Event::Text(text.to_owned()));
        self.harness.run();
    }

    /// Closes the window (the app ends what is open, as on eframe's exit), then ends the
    /// session; what the agent was sent stays readable.
    fn close(mut self) -> Scratch {
        let session = self.session.take();
        let threads = self.threads.take();
        let scratch = Scratch { root: self.scratch.root.clone() };
        drop(self);
        if let Some(session) = session {
            let _ = session.shut_down(Duration::from_secs(3));
        }
        if let Some(threads) = threads {
            threads.join().expect("the session's threads end cleanly");
        }
        scratch
    }

    /// Ends the session as the window does on closing.
    fn shut_down(mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.shut_down(Duration::from_secs(3));
        }
        if let Some(threads) = self.threads.take() {
            threads.join().expect("the session's threads end cleanly");
        }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.shut_down(Duration::from_secs(3));
        }
        if let Some(threads) = self.threads.take() {
            let _ = threads.join();
        }
    }
}

/// The form with every field type, as the agent asked it, waiting in the window.
fn form_window(name: &str, mode: &str) -> Window {
    let mut window = Window::start(name, mode);
    window.step_until("the form", |window| window.has_label("Replicas"));
    window
}

#[test]
fn a_generic_form_is_filled_in_the_window_and_the_agent_gets_exactly_the_typed_content() {
    let mut window = form_window("acp-form-window", "form");
    // What the schema says is shown: the form's title, the message, the choices' own titles.
    assert!(window.has_text("Deploy where?"));
    assert!(window.has_label("Europe"), "enumNames are the choices' titles");
    assert!(window.has_label("Pro"), "oneOf titles are the choices' titles");
    window.fill("Name", "web");
    window.fill("Replicas", "12");
    window.click(Role::RadioButton, "Pro");
    window.click(Role::CheckBox, "Backups");
    window.click(Role::CheckBox, "Confirm");
    window.fill("Ratio", "0.5");
    // Out of range: refused with the message by the field, and nothing goes to the agent.
    window.click(Role::Button, "Send form");
    assert!(window.has_text("at most 9"), "no message by the field");
    thread::sleep(Duration::from_millis(200));
    assert!(window.scratch.answers("f1").is_empty(), "{:?}", window.scratch.sent());
    window.refill("Replicas", "3");
    window.click(Role::Button, "Send form");
    let answer = window.scratch.answer("f1");
    assert_eq!(
        answer["result"],
        json!({"action": "accept", "content": {"name": "web", "region": "eu", "tier": "pro",
            "extras": ["backup"], "confirm": true, "replicas": 3, "ratio": 0.5}}),
        "{answer}"
    );
    window.step_until("the card gone", |window| !window.has_label("Replicas"));
    window.shut_down();
}

#[test]
fn a_declined_form_is_decline_and_a_stopped_one_cancel() {
    for (button, action) in [("Decline form", "decline"), ("Cancel form", "cancel")] {
        let mut window = form_window(&format!("acp-form-{action}"), "form");
        window.click(Role::Button, button);
        let answer = window.scratch.answer("f1");
        assert_eq!(answer["result"], json!({"action": action}), "{answer}");
        window.shut_down();
    }
}

#[test]
fn a_form_the_agent_takes_back_leaves_the_window_and_is_answered_once_request_cancelled() {
    for mode in ["withdraw", "tool"] {
        let mut window = form_window(&format!("acp-form-{mode}"), mode);
        fs::write(window.scratch.trigger(), "").unwrap();
        window.step_until("the form taken back", |window| !window.has_label("Replicas"));
        let answer = window.scratch.answer("f1");
        assert_eq!(answer["error"]["code"], -32800, "{mode}: {answer}");
        thread::sleep(Duration::from_millis(200));
        assert_eq!(window.scratch.answers("f1").len(), 1, "{mode}: {:?}", window.scratch.sent());
        window.shut_down();
    }
}

#[test]
fn a_form_open_when_the_window_closes_is_cancelled_never_declined() {
    let window = form_window("acp-form-close", "form");
    let scratch = window.close();
    let answers = scratch.answers("f1");
    assert_eq!(answers.len(), 1, "{:?}", scratch.sent());
    assert_eq!(answers[0]["result"], json!({"action": "cancel"}), "{}", answers[0]);
}

#[test]
fn hostile_forms_are_shown_bounded_or_refused_naming_the_field() {
    let mut window = Window::start("acp-form-hostile", "hostile");
    // Nested objects and unknown types: refused with INVALID_PARAMS naming the field.
    let nested = window.scratch.answer("x3");
    assert_eq!(nested["error"]["code"], -32602, "{nested}");
    assert!(nested["error"]["message"].as_str().unwrap().contains("`address`"), "{nested}");
    let unknown = window.scratch.answer("x4");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("`when`"), "{unknown}");
    // 200 fields: shown, and sent with what was typed.
    window.step_until("the 200 fields", |window| window.has_label("Field 0"));
    window.fill("Field 199", "last");
    window.click(Role::Button, "Send form");
    let many = window.scratch.answer("x1");
    assert_eq!(many["result"], json!({"action": "accept", "content": {"field_199": "last"}}));
    // A 100 KB title: shown cut, and the window goes on.
    window.step_until("the long form", |window| window.has_text("TTTT"));
    assert!(!window.has_text(&"T".repeat(1000)), "the title was shown whole");
    window.click(Role::Button, "Decline form");
    assert_eq!(window.scratch.answer("x2")["result"], json!({"action": "decline"}));
    window.shut_down();
}

/// Waits a moment more, then checks the agent got exactly one answer to `id`, and returns it.
fn the_one_answer(scratch: &Scratch, id: &str) -> Value {
    let answer = scratch.answer(id);
    // A second answer would follow the first within a few frames: give it time to show.
    thread::sleep(Duration::from_millis(300));
    assert_eq!(scratch.answers(id).len(), 1, "{:?}", scratch.sent());
    answer
}

#[test]
fn enter_pressed_five_times_on_a_form_answers_the_agent_exactly_once() {
    let mut window = Window::start("acp-form-enter", "notes");
    window.step_until("the form", |window| window.has_label("Notes"));
    window.fill("Notes", "ship it");
    // Five Enters, one a frame, then five more in one frame: as a held or bouncing key.
    for _ in 0..5 {
        window.harness.key_press(egui::Key::Enter);
        window.harness.step();
    }
    for _ in 0..5 {
        window.harness.event(egui::Event::Key {
            key: egui::Key::Enter,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: egui::Modifiers::NONE,
        });
    }
    window.harness.run();
    if window.has_label("Notes") {
        window.click(Role::Button, "Send form");
    }
    let answer = the_one_answer(&window.scratch, "n1");
    assert_eq!(
        answer["result"],
        json!({"action": "accept", "content": {"notes": "ship it"}}),
        "{answer}"
    );
    window.step_until("the card gone", |window| !window.has_label("Notes"));
    window.shut_down();
}

#[test]
fn send_clicked_twice_answers_the_agent_exactly_once() {
    // Twice in one frame, and in two frames one after the other.
    for (case, same_frame) in [("acp-form-send-twice", true), ("acp-form-send-again", false)] {
        let mut window = Window::start(case, "notes");
        window.step_until("the form", |window| window.has_label("Notes"));
        window.fill("Notes", "once");
        let send = window.harness.get_by_role_and_label(Role::Button, "Send form");
        send.click();
        if same_frame {
            send.click();
        } else {
            window.harness.step();
            if let Some(again) = window.harness.query_by_role_and_label(Role::Button, "Send form") {
                again.click();
            }
        }
        window.harness.run();
        let answer = the_one_answer(&window.scratch, "n1");
        assert_eq!(
            answer["result"],
            json!({"action": "accept", "content": {"notes": "once"}}),
            "{case}: {answer}"
        );
        window.shut_down();
    }
}

#[test]
fn a_100_kb_cjk_text_field_reaches_the_agent_whole() {
    let mut window = Window::start("acp-form-cjk", "notes");
    window.step_until("the form", |window| window.has_label("Notes"));
    // 3 bytes a character in UTF-8: about 100 KB, every character different from its neighbour.
    let text: String = "漢字かなカナ한국어中文測試"
        .chars()
        .cycle()
        .take(100 * 1024 / 3)
        .enumerate()
        .map(|(index, char)| if index % 1000 == 999 { '終' } else { char })
        .collect();
    assert!(text.len() >= 100 * 1000, "{}", text.len());
    window.fill("Notes", &text);
    window.click(Role::Button, "Send form");
    let answer = the_one_answer(&window.scratch, "n1");
    let sent = answer["result"]["content"]["notes"].as_str().unwrap_or_default();
    assert_eq!(sent.chars().count(), text.chars().count(), "characters lost");
    assert!(sent == text, "the text the agent read is not the text typed");
    window.shut_down();
}

#[test]
fn keys_typed_as_a_form_arrives_are_neither_lost_nor_send_it() {
    let mut window = Window::start("acp-form-arrives", "notes");
    // Typing goes on, Enter included, frame after frame, until a frame has drawn the form: the
    // keys of that frame were typed before the form was ever seen.
    let deadline = Instant::now() + WAIT;
    let mut letters = "abcdefghijklmnopqrstuvwxyz".chars().cycle();
    while !window.has_label("Notes") {
        assert!(Instant::now() < deadline, "no form within {WAIT:?}");
        let letter = letters.next().unwrap_or('x');
        window.harness.event(egui::Event::Text(letter.to_string()));
        window.harness.key_press(egui::Key::Enter);
        window.harness.step();
        thread::sleep(Duration::from_millis(5));
    }
    // The app's grace after an arrival (KEY_GRACE) drops the keys of that moment: they were
    // meant for what was there before. Typing goes on after it.
    let steps = (askpane::app::KEY_GRACE.as_secs_f32() / 0.25).ceil() as usize + 1;
    window.harness.run_steps(steps);
    window.harness.event(egui::Event::Text("ship".to_owned()));
    window.harness.key_press(egui::Key::Enter);
    window.harness.run();
    thread::sleep(Duration::from_millis(300));
    window.harness.run();
    // Nothing was sent: the form still waits, the agent has no answer and no second prompt.
    assert!(window.has_label("Notes"), "the form left");
    let sent = window.scratch.sent();
    assert!(window.scratch.answers("n1").is_empty(), "sent by accident: {sent:?}");
    let prompts = sent.iter().filter(|line| line["method"] == "session/prompt").count();
    assert_eq!(prompts, 1, "a prompt went to the agent by accident: {sent:?}");
    // What was typed once the form could take it is in its first field, not lost; nothing of
    // the grace got in.
    let notes = window.harness.get_by_role_and_label(Role::TextInput, "Notes").value();
    assert_eq!(notes.as_deref(), Some("ship"), "the keys typed were lost");
    window.shut_down();
}

#[test]
fn an_agent_that_goes_away_with_its_form_open_takes_the_card_with_it_and_nothing_hangs() {
    let mut window = form_window("acp-form-vanish", "vanish");
    fs::write(window.scratch.trigger(), "").unwrap();
    window.step_until("the card gone", |window| !window.has_label("Replicas"));
    let started = Instant::now();
    window.shut_down();
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

/// `askpane acp --no-inbox` without a display, the form agent in `mode`.
fn headless(name: &str, mode: &str, flags: &[&str]) -> (Scratch, Finished) {
    let scratch = Scratch::new(name);
    let mut askpane = Command::new(env!("CARGO_BIN_EXE_askpane"));
    askpane
        .current_dir(scratch.root.join("work"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
        .env("LANG", "C.UTF-8")
        .env("HOME", &scratch.root)
        .env("XDG_RUNTIME_DIR", support::private_runtime_dir())
        .env("FAKE_ACP_MODE", mode)
        .env("FAKE_ACP_LOG", scratch.log())
        .env("FAKE_ACP_TRIGGER", scratch.trigger())
        .args(["acp", "--no-inbox", "-p", "Go."])
        .args(flags)
        .arg("--")
        .arg("python3")
        .arg(script());
    let finished = run_bounded(&mut askpane, None);
    (scratch, finished)
}

#[test]
fn a_form_with_nobody_to_ask_is_cancelled_never_declined_or_an_error() {
    let (scratch, finished) = headless("acp-form-headless", "form", &[]);
    let answer = scratch.answer("f1");
    assert_eq!(answer["result"], json!({"action": "cancel"}), "{answer}\n{}", finished.stderr);
    assert!(finished.stderr.contains("Deploy where?"), "{}", finished.stderr);
}

// ---- item 2: a link the agent asks the person to open (URL elicitation) ----

const LINK: &str = "https://example.test/device?code=WXYZ";

/// The link card, as the agent asked it, waiting in the window.
fn link_window(name: &str) -> Window {
    let mut window = Window::start(name, "url");
    window.step_until("the link", |window| window.has_text(LINK));
    window
}

#[test]
fn a_link_is_shown_as_text_never_as_a_link_and_done_decline_cancel_answer_it() {
    for (button, result) in [
        ("Done", json!({"action": "accept"})),
        ("Decline form", json!({"action": "decline"})),
        ("Cancel form", json!({"action": "cancel"})),
    ] {
        let mut window = link_window(&format!("acp-link-{button}").replace(' ', "-"));
        assert!(window.has_text("Sign in to the deploy service"));
        // Text to read and copy: nothing askpane opens, no link a click follows.
        let links = window.harness.query_all_by_role(Role::Link).count();
        assert_eq!(links, 0, "the address is a link");
        assert!(window.has_label("Copy address"));
        window.click(Role::Button, button);
        let answer = window.scratch.answer("u1");
        assert_eq!(answer["result"], result, "{button}: {answer}");
        window.shut_down();
    }
}

#[test]
fn a_link_the_agent_says_is_complete_leaves_the_window_answered_once() {
    let mut window = link_window("acp-link-complete");
    fs::write(window.scratch.trigger(), "").unwrap();
    window.step_until("the link gone", |window| !window.has_text(LINK));
    let answer = window.scratch.answer("u1");
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    thread::sleep(Duration::from_millis(200));
    assert_eq!(window.scratch.answers("u1").len(), 1, "{:?}", window.scratch.sent());
    window.shut_down();
}

#[test]
fn a_link_with_nobody_to_ask_is_cancelled() {
    let (scratch, finished) = headless("acp-link-headless", "url", &[]);
    let answer = scratch.answer("u1");
    assert_eq!(answer["result"], json!({"action": "cancel"}), "{answer}\n{}", finished.stderr);
    assert!(finished.stderr.contains(LINK), "{}", finished.stderr);
}

// ---- item 3: a stuck turn is shown, and the person ends it ----

#[test]
fn a_stuck_turn_is_shown_and_end_turn_sends_session_cancel_and_ends_it() {
    // The turn starts once the session has: the bound counts from the agent's start and bounds
    // the handshake too (an agent that never answers it is given up, docs/src/acp.md), and
    // Python starting the fake agent on a loaded machine took longer than it. With the prompt
    // given at the start, a full run under load gave the handshake up ("— stuck —", "waiting for
    // you"), the prompt went out later unknown to the window's turn, and that turn was never
    // shown stuck: "waited 20s for the stuck turn shown", in every run when the agent starts
    // 2 s late, as here (and still under heavy load with a 5 s bound).
    let late = Duration::from_secs(2);
    let mut window = Window::start_after("acp-stuck", "hang", Duration::from_secs(1), late, None);
    window.step_until("the session started", |window| window.has_text("form-agent"));
    window.harness.get_by_role_and_label(Role::MultilineTextInput, "Prompt").focus();
    window.harness.run();
    window.harness.event(egui::Event::Text("Go.".to_owned()));
    window.harness.run();
    window.click(Role::Button, "Send");
    let cancels = |window: &Window| {
        window.scratch.sent().iter().filter(|line| line["method"] == "session/cancel").count()
    };
    window.step_until("the stuck turn shown", |window| window.has_label("End turn"));
    assert!(window.has_text("may be stuck"));
    // With a window the person decides: nothing was cancelled for them.
    thread::sleep(Duration::from_millis(1500));
    window.harness.run();
    assert_eq!(cancels(&window), 0, "{:?}", window.scratch.sent());
    window.click(Role::Button, "End turn");
    let until = Instant::now() + WAIT;
    while cancels(&window) == 0 {
        assert!(Instant::now() < until, "no session/cancel: {:?}", window.scratch.sent());
        thread::sleep(Duration::from_millis(20));
    }
    let cancel = window.scratch.sent().into_iter().find(|line| line["method"] == "session/cancel");
    assert_eq!(cancel.unwrap()["params"], json!({"sessionId": "form-session"}));
    // The turn ended on askpane's side although the agent never answers: the prompt is free.
    window.step_until("the turn ended", |window| {
        !window.has_label("End turn")
            && window.has_text("waiting for you")
            && window.has_text("stuck")
    });
    let started = Instant::now();
    window.shut_down();
    assert!(started.elapsed() < Duration::from_secs(10), "askpane hung on the agent");
}

// ---- item 4: the agent's reject_always, by its own name ----

#[test]
fn reject_always_is_offered_by_its_own_name_and_picks_that_option() {
    for (button, option) in [("Never allow rm", "no-never"), ("Deny", "no-once")] {
        let name = format!("acp-reject-{option}");
        let mut window = Window::start(&name, "reject");
        window.step_until("the card", |window| window.has_label("Allow once"));
        window.click(Role::Button, button);
        let answer = window.scratch.answer("p1");
        assert_eq!(
            answer["result"],
            json!({"outcome": {"outcome": "selected", "optionId": option}}),
            "{button}: {answer}"
        );
        window.shut_down();
    }
}

// ---- item 5: an ACP permission card and a question form decided in the window ----

#[test]
fn an_acp_permission_card_and_question_form_are_decided_in_the_window() {
    let mut window = Window::start("acp-cards", "cards");
    window.step_until("the permission card", |window| window.has_label("Allow once"));
    assert!(window.has_text("rm -rf build"), "the card shows the command");
    window.click(Role::Button, "Allow once");
    let allowed = window.scratch.answer("p1");
    assert_eq!(
        allowed["result"],
        json!({"outcome": {"outcome": "selected", "optionId": "yes-once"}})
    );
    window.step_until("the question", |window| {
        window.harness.query_by_role_and_label(Role::RadioButton, "SQLite").is_some()
    });
    window.click(Role::RadioButton, "SQLite");
    window.click(Role::Button, "Submit");
    let answered = window.scratch.answer("q1");
    assert_eq!(
        answered["result"],
        json!({"action": "accept", "content": {"question_0": "SQLite"}}),
        "{answered}"
    );
    window.step_until("the turn's end", |window| window.has_text("waiting for you"));
    window.shut_down();
}

// ---- under the inbox: a form on the inbox's page (its wire, as the page's Send form sends) ----

#[test]
fn under_the_inbox_a_form_sent_from_the_page_reaches_the_agent_checked_by_the_schema() {
    use crate::interop_approvals::{Page, card};
    if !support::web_bundle_built() {
        return;
    }
    let scratch = Scratch::new("acp-form-inbox");
    let run_dir = support::private_runtime_dir();
    let mut inbox = Command::new(env!("CARGO_BIN_EXE_askpane"));
    inbox
        .current_dir(&scratch.root)
        .env("HOME", &scratch.root)
        .env("XDG_RUNTIME_DIR", &run_dir)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args(["inbox", "--ui", "web"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut inbox = support::Process::new(inbox.spawn().expect("start the inbox"));
    let link = crate::support::agents::browser_link(inbox.child.stderr.take().unwrap());
    let mut page = Page::connect(&link);
    let mut acp = Command::new(env!("CARGO_BIN_EXE_askpane"));
    acp.current_dir(scratch.root.join("work"))
        .env("HOME", &scratch.root)
        .env("XDG_RUNTIME_DIR", &run_dir)
        .env("FAKE_ACP_MODE", "form")
        .env("FAKE_ACP_LOG", scratch.log())
        .args(["acp", "-p", "Go.", "--", "python3"])
        .arg(script())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let acp = support::Process::new(acp.spawn().expect("start askpane acp"));
    let (request_id, request) = card(&page.next("permission_request", WAIT));
    assert_eq!(request.tool_name, "elicitation/create");
    assert_eq!(request.input["message"], "Deploy where?");
    // Content the schema refuses (12 replicas, at most 9) decides nothing: the card stays.
    let refused = json!({"type": "permission_decision", "request_id": request_id,
        "decision": "fill", "content": {"name": "web", "replicas": 12}});
    page.send(&refused);
    thread::sleep(Duration::from_millis(300));
    assert!(scratch.answers("f1").is_empty(), "{:?}", scratch.sent());
    let content = json!({"name": "web", "region": "us", "replicas": 3});
    page.decide(&request_id, json!({"decision": "fill", "content": content}), "allowed");
    let answer = scratch.answer("f1");
    assert_eq!(answer["result"], json!({"action": "accept", "content": content}), "{answer}");
    drop(acp);
    drop(inbox);
}

// ---- what was typed in a form survives the inbox's crash (nothing typed is lost) ----

/// The `card_drafts` row of the one form draft the inbox's store keeps, once it holds `text`.
fn form_draft_holding(state: &std::path::Path, text: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let kept: Vec<String> = askpane::store::Store::open_in(state)
            .ok()
            .and_then(|mut store| {
                let connection = store.connection();
                let mut statement = connection
                    .prepare("SELECT draft FROM card_drafts WHERE key LIKE 'form-%'")
                    .ok()?;
                let rows = statement.query_map([], |row| row.get::<_, String>(0)).ok()?;
                Some(rows.filter_map(Result::ok).collect())
            })
            .unwrap_or_default();
        let drafts: Vec<Value> =
            kept.iter().filter_map(|json| serde_json::from_str(json).ok()).collect();
        let holding = drafts.iter().find(|draft| draft["values"][0][1]["value"] == text);
        if let (1, Some(draft)) = (drafts.len(), holding) {
            return draft.clone();
        }
        assert!(Instant::now() < deadline, "no form draft holding {text:?}: {kept:?}");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn what_is_typed_in_a_form_survives_the_inbox_s_crash_and_typing_goes_on_after_it() {
    use crate::hosted::{kill_the_inbox_until_another_runs, send_signal};
    use crate::inbox::{Client, World, wait_for_window};
    let world = World::with_inbox("acp-form-crash");
    let scratch = Scratch::new("acp-form-crash");
    let script = script();
    let args = ["acp", "-p", "Go.", "--", "python3", script.to_str().expect("a UTF-8 path")];
    let mut command = world.askpane(&args);
    command
        .current_dir(scratch.root.join("work"))
        .env("FAKE_ACP_MODE", "notes")
        .env("FAKE_ACP_LOG", scratch.log())
        .env("FAKE_ACP_TRIGGER", scratch.trigger());
    let acp = Client::spawn(command, "");
    let xvfb = &world.xvfb;
    let window = wait_for_window(xvfb, "elicitation/create", true).expect("the form's window");
    xvfb.focus(window);
    // The form's first text box has the keyboard as the form appears.
    xvfb.xdotool(&["type", "--window", &window.to_string(), "Ship it on"]);
    let state = world.root.join("state/askpane");
    let draft = form_draft_holding(&state, "Ship it on");
    assert_eq!(draft["values"][0][0], "notes", "{draft}");
    // Once it is on disk, the inbox dies without a word.
    kill_the_inbox_until_another_runs(&world);
    // The relay's new inbox shows the form again with what was typed: typing goes on at its
    // end (the text is neither lost nor replaced by the next key).
    let window = wait_for_window(xvfb, "elicitation/create", true).expect("the form again");
    xvfb.focus(window);
    xvfb.xdotool(&["type", "--window", &window.to_string(), " Friday"]);
    form_draft_holding(&state, "Ship it on Friday");
    assert!(scratch.answers("n1").is_empty(), "sent by itself: {:?}", scratch.sent());
    send_signal(acp.pid(), "TERM");
    let (_, _, stderr) = acp.finish();
    assert!(stderr.contains("the inbox went away; starting it again"), "{stderr}");
    // Stopped with the form open: nobody answered it (cancel), and the draft stays for when
    // it is asked again.
    assert_eq!(scratch.answer("n1")["result"], json!({"action": "cancel"}), "{:?}", scratch.sent());
    form_draft_holding(&state, "Ship it on Friday");
}
