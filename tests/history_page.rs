//! The History page in the inbox's window (issue 11), driven through egui_kittest by accessible
//! label: reached by its button and by Ctrl+H, newest first, search, the project and agent
//! filters, what the model read and the exact reply with Copy. The page is read by the store's
//! writer thread (the window never queries SQLite itself).

use std::time::{Duration, Instant, SystemTime};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use askpane::app::history::HistoryFilter;
use askpane::app::journal::{HistoryDone, Journal};
use askpane::app::{App, AppOptions};
use askpane::protocol::history::{HistoryPage, NO_HISTORY_HERE};
use askpane::store::{DraftSink, Ended, HistoryRecord, Store};
use askpane::transport::{self, Provenance};
use egui::{Key, Modifiers, OutputCommand};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::support::scratch_dir;
use crate::ui::FONTS;

/// A history entry asked by `source` in `project`, ended `ago` seconds before now.
fn record(
    key: &str,
    source: &str,
    project: &str,
    header: &str,
    question: &str,
    answer: &str,
    ago: u64,
) -> HistoryRecord {
    let questions = serde_json::json!({"questions": [{"question": question, "header": header,
        "multiSelect": false, "options": [{"label": answer, "description": ""},
                                           {"label": "Other thing", "description": ""}]}]});
    HistoryRecord {
        answered_by: None,
        key: key.to_owned(),
        asked_at: None,
        ended_at: SystemTime::now() - Duration::from_secs(ago),
        provenance: Provenance::new(source, None).with_project(Some(project.to_owned())),
        header: header.to_owned(),
        questions: questions.to_string(),
        ended: Ended::Answered,
        outcome: askpane::protocol::OutcomeKind::Answered.into(),
        answer: answer.to_owned(),
        reply: Some(format!(r#"{{"answers":{{"{question}":"{answer}"}}}}"#)),
        model_text: Some(format!(r#"The user answered: "{question}"="{answer}"."#)),
        approval: None,
    }
}

/// The inbox's window (resident) on a store holding three entries.
fn window() -> Harness<'static, App> {
    window_with(&[
        record("h1", "hook", "shop", "Database", "Which database?", "Postgres", 300),
        record("h2", "ask", "blog", "Theme", "Light or dark?", "Dark", 200),
        record("h3", "hook", "shop", "Cache", "Which cache?", "Redis", 100),
    ])
}

/// The inbox's window (resident) on a store holding `entries`.
fn window_with(entries: &[HistoryRecord]) -> Harness<'static, App> {
    let state = scratch_dir("history-page");
    let mut store = Store::open_in(&state).expect("store");
    for entry in entries {
        store.record(entry).expect("record");
    }
    let sink = DraftSink::start(store).expect("writer");
    let (_sender, inbox) = transport::memory();
    let options =
        AppOptions { resident: true, key_grace: Some(Duration::ZERO), ..AppOptions::default() };
    Harness::builder()
        .with_size(egui::vec2(1000.0, 700.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, options).with_store(sink))
}

/// Steps the window until `label` is shown (the page comes from another thread).
fn wait_for(harness: &mut Harness<'static, App>, label: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while harness.query_by_label(label).is_none() {
        assert!(Instant::now() < deadline, "{label:?} never appeared");
        std::thread::sleep(Duration::from_millis(10));
        harness.step();
    }
}

/// What the window put on the clipboard in its last frames.
fn copied_after(harness: &mut Harness<'static, App>, label: &str) -> String {
    harness.get_by_label(label).click();
    for _ in 0..4 {
        harness.step();
        for command in &harness.output().platform_output.commands {
            if let OutputCommand::CopyText(text) = command {
                return text.clone();
            }
        }
    }
    panic!("{label:?} copied nothing");
}

/// Issue 30: a history larger than a page (200 entries) says the list is the newest 200, not
/// that there are 200, and pages on: "Show older entries" (reached by the keyboard: focus and
/// Enter) reads the next 200, scrolling the list to its end the rest, with a search kept.
#[test]
fn the_list_pages_beyond_the_newest_200_by_keyboard_and_by_scrolling_to_its_end() {
    let entries: Vec<HistoryRecord> = (0..405_u64)
        .map(|n| {
            let key = format!("h{n}");
            let answer = format!("Postgres {n}");
            record(&key, "hook", "shop", "Database", &format!("Which database {n}?"), &answer, n)
        })
        .collect();
    let mut harness = window_with(&entries);
    harness.run();
    harness.get_by_label("History").click();
    wait_for(&mut harness, "The newest 200 entries; older ones follow");
    assert!(harness.query_by_label("200 entries, newest first").is_none());
    // The keyboard: the button takes focus, Enter presses it.
    harness.get_by_label(askpane::view::history::SHOW_OLDER).focus();
    harness.step();
    harness.key_press(Key::Enter);
    wait_for(&mut harness, "The newest 400 entries; older ones follow");
    // A search pages the same way: every entry holds "database".
    let search = harness.get_by_label("Search");
    search.focus();
    search.type_text("DATABASE");
    wait_for(&mut harness, "The newest 200 entries; older ones follow");
    // The wheel over the list to its end: its last row reads the next page, then the last.
    let deadline = Instant::now() + Duration::from_secs(20);
    while harness.query_by_label("405 entries, newest first").is_none() {
        assert!(Instant::now() < deadline, "scrolling to the end never read all 405 entries");
        harness.hover_at(egui::pos2(150.0, 400.0));
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -5000.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
            modifiers: Modifiers::NONE,
        });
        std::thread::sleep(Duration::from_millis(10));
        harness.step();
    }
    assert!(harness.query_by_label(askpane::view::history::SHOW_OLDER).is_none());
    // The oldest entry is the list's last row, shown once.
    let rows: Vec<String> = harness
        .query_all_by_role(egui::accesskit::Role::Button)
        .filter_map(|node| node.accesskit_node().label())
        .filter(|label| label.contains(" — answered"))
        .collect();
    assert_eq!(rows.last().map(|row| row.ends_with("Postgres 404")), Some(true), "{rows:?}");
    assert_eq!(rows.iter().filter(|row| row.ends_with("Postgres 404")).count(), 1);
}

#[test]
fn the_history_page_lists_newest_first_searches_filters_and_copies_the_exact_reply() {
    let mut harness = window();
    harness.run();
    harness.get_by_label("History").click();
    wait_for(&mut harness, "3 entries, newest first");
    // Newest first, and the newest is shown: its question, what the model read, its reply.
    let rows: Vec<String> = harness
        .query_all_by_role(egui::accesskit::Role::Button)
        .filter_map(|node| node.accesskit_node().label())
        .filter(|label| label.contains(" — answered"))
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows[0].contains("shop · Cache — answered: Redis"), "{rows:?}");
    assert!(rows[1].contains("blog · Theme — answered: Dark"), "{rows:?}");
    assert!(rows[2].contains("shop · Database — answered: Postgres"), "{rows:?}");
    harness.get_by_label("Which cache?");
    harness.get_by_label(r#"The user answered: "Which cache?"="Redis"."#);
    harness.get_by_label(r#"{"answers":{"Which cache?":"Redis"}}"#);

    // Search (any case) over the questions and answers.
    harness.get_by_label("Search").click();
    harness.run();
    harness.get_by_label("Search").type_text("DARK");
    wait_for(&mut harness, "1 entry, newest first");
    harness.get_by_label("Light or dark?");
    assert_eq!(
        copied_after(&mut harness, "Copy reply"),
        r#"{"answers":{"Light or dark?":"Dark"}}"#
    );
    assert_eq!(
        copied_after(&mut harness, "Copy what the model read"),
        r#"The user answered: "Light or dark?"="Dark"."#
    );

    // Clear the search; filter by project, then by agent.
    harness.get_by_label("Search").focus();
    harness.run();
    for _ in 0.."DARK".len() {
        harness.key_press(Key::Backspace);
    }
    wait_for(&mut harness, "3 entries, newest first");
    harness.get_by_label("Project").click();
    harness.run();
    harness.get_by_label("shop").click();
    wait_for(&mut harness, "2 entries, newest first");
    harness.get_by_label("Agent").click();
    harness.run();
    harness.get_by_label("a script (askpane ask)").click();
    wait_for(&mut harness, "Nothing recorded matches.");

    // Back to the questions (the button, then Ctrl+H again and back).
    harness.get_by_label("Back").click();
    harness.run();
    assert!(harness.query_by_label("Nothing recorded matches.").is_none());
    harness.key_press_modifiers(Modifiers::COMMAND, Key::H);
    wait_for(&mut harness, "Nothing recorded matches.");
}

/// The browser page's journal, played by the test: History is there once `kept` is set (the
/// bridge said `history_kept`); each read is noted in `asked` and answered "no history here".
struct PageJournal {
    kept: Arc<AtomicBool>,
    asked: Arc<Mutex<Vec<HistoryFilter>>>,
}

impl Journal for PageJournal {
    fn restore(&self, _: &askpane::book::Core, _: &mut askpane::book::Policy) {}
    fn opened(&self, _: &askpane::book::Core) {}
    fn draft_changed(&self, _: &askpane::book::Core, _: usize, _: &askpane::book::Form) {}
    fn settled(&self, _: &askpane::book::Core, _: &askpane::protocol::Outcome) {}
    fn keeps_history(&self) -> bool {
        self.kept.load(Ordering::SeqCst)
    }
    fn history(&self, filter: &HistoryFilter, done: HistoryDone) {
        self.asked.lock().expect("not poisoned").push(filter.clone());
        done(HistoryPage::none_kept(filter.clone()));
    }
}

#[test]
fn a_page_window_shows_history_only_once_its_bridge_keeps_one() {
    // The browser page's App (not resident) with the page's journal: no History button while
    // the bridge has not said it keeps history (`askpane ask --ui web`), then the same page as the
    // inbox's window, whose reads go to the journal.
    let (kept, asked) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
    let journal = PageJournal { kept: Arc::clone(&kept), asked: Arc::clone(&asked) };
    let (_sender, inbox) = transport::memory();
    let options = AppOptions { key_grace: Some(Duration::ZERO), ..AppOptions::default() };
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1000.0, 700.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, options).with_history(journal));
    harness.run_steps(3);
    assert!(harness.query_by_label("History").is_none(), "no History before the bridge keeps one");
    kept.store(true, Ordering::SeqCst);
    harness.run_steps(2);
    harness.get_by_label("History").click();
    wait_for(&mut harness, &format!("The history cannot be read: {NO_HISTORY_HERE}"));
    assert_eq!(
        *asked.lock().expect("not poisoned"),
        [HistoryFilter::default()],
        "one read, for the page as opened"
    );
}
