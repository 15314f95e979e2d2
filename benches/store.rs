//! The UI thread's cost of one draft change (issue 11: ≤ 50 µs per keystroke): what the window
//! pays in [`DraftSink::draft_changed`] while the `store-writer` thread writes to a real SQLite
//! file in a temporary directory. Ids in the `draft_change` group:
//!
//! - `clone_form/…`: cloning the form alone, the baseline (the least any hand-off costs);
//! - `draft_changed/…`: the call the window makes: key, form clone, time, channel send.
//!
//! Each on a short form (an Other answer of 40 characters and a note) and on one holding 100 KB of
//! Japanese text in Other. Run with `cargo bench --bench store`; the ratio to the baseline is
//! what to compare across machines.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "a benchmark may assume: a failed assumption is a failed benchmark, reported with its message"
)]

use std::hint::black_box;

use askpane::book::Form;
use askpane::protocol::Draft;
use askpane::store::{DraftSink, Store};
use criterion::{Criterion, criterion_group, criterion_main};

fn form(other: String) -> Form {
    let draft = Draft::restored(vec![1], true, other, "a note to the agent".to_owned(), true);
    Form { draft, cursor: 4, ..Form::default() }
}

fn draft_change(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("askpane-bench-store-{}", std::process::id()));
    let store = Store::open_in(&dir).expect("a store in a temporary directory");
    let sink = DraftSink::start(store).expect("the writer thread starts");
    let short = form("Postgres, but only behind the pooler we have".to_owned());
    // 100 KB of Japanese: 3 bytes per character in UTF-8.
    let japanese = form("下書きは入力中に保存されます。".repeat(100 * 1024 / 45));
    let mut group = c.benchmark_group("draft_change");
    for (name, form) in [("short", &short), ("japanese_100k", &japanese)] {
        group.bench_function(format!("clone_form/{name}"), |b| b.iter(|| black_box(form.clone())));
        group.bench_function(format!("draft_changed/{name}"), |b| {
            b.iter(|| sink.draft_changed(black_box("toolu_bench"), "asked", 0, black_box(form)))
        });
    }
    group.finish();
    sink.flush();
    drop(sink);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, draft_change);
criterion_main!(benches);
