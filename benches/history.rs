//! The History page on a 10 000-entry history (issue 11: a frame ≤ 2 ms, a search ≤ 20 ms).
//! Ids in the `history` group:
//!
//! - `page`: what the store-writer thread does when the page opens: the newest 200 entries
//!   (`PAGE_SIZE`) and the project and agent lists, from a real SQLite file;
//! - `search/rare`: a search that matches 10 entries (every row is scanned: `instr` over the
//!   questions, the answer and what the model read);
//! - `search/common`: a search that matches every entry (the scan stops at a page);
//! - `frame`: one steady-state frame of the page (200 rows in the list, the newest entry's
//!   details) in a headless egui context at 1000×700 points, every cache warm.
//!
//! The queries run off the UI thread; the frame is what the UI thread pays.
//!
//! The `inbox_start` group is the store's part of `askpane inbox` starting (issue 11: with 10 000
//! history entries and 20 open requests ≤ 1.2× the start with an empty store): opening the
//! database (its schema checked), starting the `store-writer` thread, and the `store-orphans`
//! pass over the open requests; `empty` on a new store, `10000+20` on the full one. The rest of
//! the start (the window, the socket) never reads the store. Run with
//! `cargo bench --bench history`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "a benchmark may assume: a failed assumption is a failed benchmark, reported with its message"
)]

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use askpane::app::history::{History, HistoryAction, HistoryFilter};
use askpane::store::{self, DraftSink, Ended, HistoryRecord, OpenRecord, Store};
use askpane::transport::Provenance;
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Context, RawInput, Rect, pos2, vec2};

const ENTRIES: usize = 10_000;

/// Frames drawn before measuring, so sizing passes are over and every cache is filled.
const WARM_UP_FRAMES: usize = 30;

fn entry(n: usize) -> HistoryRecord {
    let project = ["shop", "blog", "infra", "docs", "mobile"][n % 5];
    let source = ["hook", "ask", "claude"][n % 3];
    // Every thousandth entry holds the rare word.
    let topic = if n.is_multiple_of(1000) { "kaleidoscope" } else { "database" };
    let question = format!("Question {n}: which {topic} should the service number {n} use?");
    let answer = format!("Option {} for {n}", n % 4);
    let questions = serde_json::json!({"questions": [{"question": question, "header": "Choice",
        "multiSelect": false, "options": [{"label": answer, "description": "the first"},
                                          {"label": "Something else", "description": ""}]}]});
    HistoryRecord {
        key: format!("toolu_bench_{n}"),
        asked_at: None,
        ended_at: SystemTime::now() - Duration::from_secs((ENTRIES - n) as u64 * 60),
        provenance: Provenance::new(source, None).with_project(Some(project.to_owned())),
        header: "Choice".to_owned(),
        questions: questions.to_string(),
        ended: Ended::Answered,
        outcome: askpane::protocol::OutcomeKind::Answered.into(),
        answer: answer.clone(),
        reply: Some(format!(r#"{{"answers":{{"{question}":"{answer}"}}}}"#)),
        model_text: Some(format!(
            "The user answered: \"{question}\"=\"{answer}\". Read the answers carefully."
        )),
        approval: None,
    }
}

fn history(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("askpane-bench-history-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut store = Store::open_in(&dir).expect("a store in a temporary directory");
    for n in 0..ENTRIES {
        store.record(&entry(n)).expect("record");
    }
    let mut group = c.benchmark_group("history");
    let all = HistoryFilter::default();
    let page = store::history_page(&store, all.clone());
    assert_eq!(page.items.len(), askpane::app::history::PAGE_SIZE);
    assert_eq!(page.projects.len(), 5);
    group
        .bench_function("page", |b| b.iter(|| store::history_page(&store, black_box(all.clone()))));
    let rare = HistoryFilter { search: "KALEIDOSCOPE".to_owned(), ..HistoryFilter::default() };
    assert_eq!(store::history_page(&store, rare.clone()).items.len(), ENTRIES / 1000);
    group.bench_function("search/rare", |b| {
        b.iter(|| store::history_page(&store, black_box(rare.clone())))
    });
    let common = HistoryFilter { search: "service".to_owned(), ..HistoryFilter::default() };
    group.bench_function("search/common", |b| {
        b.iter(|| store::history_page(&store, black_box(common.clone())))
    });

    // The frame: the page as the window shows it.
    let mut shown = History::default();
    let _ = shown.apply(&HistoryAction::Open);
    shown.received(page);
    let ctx = Context::default();
    askpane::view::theme::install(&ctx);
    let input = RawInput {
        screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(1000.0, 700.0))),
        ..RawInput::default()
    };
    let mut frame = || {
        ctx.run_ui(input.clone(), |ui| {
            let mut actions = Vec::new();
            askpane::view::history::history_ui(ui, black_box(&shown), &mut actions);
            assert!(actions.is_empty());
        })
        .drop_without_applying_deltas();
    };
    for _ in 0..WARM_UP_FRAMES {
        frame();
    }
    group.bench_function("frame", |b| b.iter(&mut frame));
    group.finish();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `askpane inbox` does with the store as it starts.
fn start_inbox_store(dir: &std::path::Path) {
    let sink = DraftSink::start(Store::open_in(dir).expect("open")).expect("a writer thread");
    let me = std::process::id();
    let mut orphans = Store::open_in(dir).expect("open again");
    let abandoned = orphans.abandon_orphans(SystemTime::now(), |pid| pid == me).expect("orphans");
    assert_eq!(abandoned, 0, "the open requests are this process's own: none is abandoned");
    drop(sink);
}

fn inbox_start(c: &mut Criterion) {
    let base = std::env::temp_dir().join(format!("askpane-bench-start-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (empty, full) = (base.join("empty"), base.join("full"));
    drop(Store::open_in(&empty).expect("an empty store"));
    let mut store = Store::open_in(&full).expect("a store to fill");
    for n in 0..ENTRIES {
        store.record(&entry(n)).expect("record");
    }
    for n in 0..20 {
        let questions = serde_json::json!({"questions": [{"question": format!("Open {n}?"),
            "header": "Open", "multiSelect": false,
            "options": [{"label": "Yes", "description": ""}, {"label": "No", "description": ""}]}]});
        let open = OpenRecord {
            key: format!("toolu_open_{n}"),
            envelope: "a hook's input".to_owned(),
            input: questions.to_string(),
            provenance: Provenance::new("hook", None).with_project(Some("shop".to_owned())),
            asked_at: SystemTime::now(),
            pid: std::process::id(),
        };
        store.opened(&open).expect("an open request");
    }
    assert_eq!(store.open_requests().expect("listed").len(), 20);
    drop(store);
    let mut group = c.benchmark_group("inbox_start");
    group.bench_function("empty", |b| b.iter(|| start_inbox_store(black_box(&empty))));
    group.bench_function("10000+20", |b| b.iter(|| start_inbox_store(black_box(&full))));
    group.finish();
    let _ = std::fs::remove_dir_all(&base);
}

criterion_group!(benches, history, inbox_start);
criterion_main!(benches);
