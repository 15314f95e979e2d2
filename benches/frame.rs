//! CPU time of one steady-state frame of the largest form in a headless egui context.
//!
//! The form is `fixtures/largest-form.json`: 4 questions × 4 options, every option of the three
//! single-select questions with a preview (ASCII mockups; fenced Rust, Python and TypeScript; a
//! markdown table and fenced TOML), the fourth question multi-select without previews, all in
//! English. The window is 960×680 points at 1 pixel per point.
//!
//! The app repaints only on input, so what matters is a frame with every cache warm: the
//! context, the font atlas, the galley cache and the `CommonMarkCache` persist across iterations
//! and a few frames are drawn before measuring. Ids in the `frame` group:
//!
//! - `question/ascii_preview`: question 1, an ASCII mockup (verbatim preview) beside the options;
//! - `question/code_preview`: question 2, a fenced Rust block rendered as markdown;
//! - `review`: the Review page of the four answered questions;
//! - `tessellate`: `Context::tessellate` of the `question/code_preview` frame's shapes (the
//!   other per-frame CPU work a real app does before handing meshes to the GPU).
//!
//! The `session` group times `askpane claude`'s transcript beside the questions (issue 14: a
//! session of 10 000 events, a frame ≤ 2 ms, and no frame over 16 ms when an event arrives):
//!
//! - `session/100` and `session/10000`: a steady frame of a transcript of that many events
//!   (markdown paragraphs and tool calls, alternating), scrolled to its end;
//! - `session/10000+1`: one more event arrives and the frame that shows it is drawn.
//!
//! The `preview` group times issue 24's huge previews (item 23: a preview of any size keeps the
//! window responsive, a frame ≤ 16 ms, within +50 MB), each the only option's preview of a
//! one-question form, at the top of its scroll area:
//!
//! - `preview/table`: a markdown table of 90 000 rows (1 MB);
//! - `preview/list`: 45 000 list items (1 MB);
//! - `preview/code`: 10 000 lines of fenced Rust;
//! - `preview/verbatim`: 100 000 lines of an ASCII mockup (shown verbatim);
//! - `preview/small`: the largest form's markdown table (the baseline: a preview as agents send
//!   them).
//!
//! The `list` group times the request list (issue 30 item 2: 500 agents at once, a frame ≤ 4
//! ms): `list/50` and `list/500`, that many questions waiting, one per project, the first shown.
//!
//! Beside each preview it prints (stderr) the process's RSS growth over building and drawing it.
//!
//! No pointer and no keys, so nothing is hovered; the keyboard cursor sits on each question's
//! picked option, whose preview is the one shown.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "a benchmark may assume: a failed assumption is a failed benchmark, reported with its message"
)]

use std::hint::black_box;

use askpane::app::state::{Core, Edit, Policy, State, Tab};
use askpane::protocol::origin::SessionKey;
use askpane::protocol::stream::{SessionEvent, parse_cli_line};
use askpane::protocol::{Envelope, Pick, validate};
use askpane::transport::{Provenance, RequestId};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use egui::epaint::ClippedShape;
use egui::{Context, FullOutput, RawInput, Rect, Shape, pos2, vec2};
use egui_commonmark::CommonMarkCache;

/// Latin-only, so the default fonts cover every glyph without the CJK fallback eframe adds.
const LARGEST_FORM: &str = include_str!("fixtures/largest-form.json");

/// Frames drawn before measuring, so sizing passes are over and every cache is filled; more
/// while egui still asks for a repaint (an animation), up to the maximum.
const MIN_WARM_UP_FRAMES: usize = 4;
const MAX_WARM_UP_FRAMES: usize = 120;

/// The largest form, pushed into a fresh state with every question answered.
fn largest_form_state() -> State<()> {
    let input: serde_json::Value =
        serde_json::from_str(LARGEST_FORM).expect("largest-form.json is JSON");
    let validated = validate(&input).expect("largest-form.json is a valid AskUserQuestion input");
    assert!(validated.warnings.is_empty(), "unexpected warnings: {:?}", validated.warnings);
    let shape: Vec<(usize, bool, usize)> = validated
        .ask
        .questions()
        .iter()
        .map(|q| {
            let previews = q.options().iter().filter(|o| o.preview().is_some()).count();
            (q.options().len(), q.multi_select(), previews)
        })
        .collect();
    assert_eq!(shape, [(4, false, 4), (4, false, 4), (4, false, 4), (4, true, 0)]);
    let mut state = State::default();
    let core = Core {
        id: RequestId::next(),
        envelope: Envelope::ToolInput,
        ask: validated.ask,
        warnings: validated.warnings,
        provenance: Provenance::new("bench", Some("largest-form".to_owned())),
        reply_shape: askpane::protocol::ReplyShape::default(),
    };
    state.admit(core, Policy::default(), (), 0.0);
    // A realistic filled-in form: the Review page then lists four answers and a note.
    for (question, pick) in [
        (0, Pick::Option(0)),
        (1, Pick::Option(0)),
        (2, Pick::Option(1)),
        (3, Pick::Option(0)),
        (3, Pick::Option(1)),
    ] {
        state.edit(Edit::Pick { question, pick });
    }
    state.edit(Edit::SetNotes {
        question: 1,
        text: "Keep the error messages short enough to fit on one terminal line.".to_owned(),
    });
    state
}

/// A headless window: one persistent context and markdown cache, a fixed 960×680 screen.
struct Window {
    ctx: Context,
    markdown: CommonMarkCache,
    input: RawInput,
}

impl Window {
    fn new() -> Self {
        let ctx = Context::default();
        askpane::view::theme::install(&ctx);
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(960.0, 680.0))),
            ..RawInput::default()
        };
        Window { ctx, markdown: CommonMarkCache::default(), input }
    }

    /// One frame, as the app draws it on a repaint.
    fn frame(&mut self, state: &State<()>) -> FullOutput {
        let markdown = &mut self.markdown;
        self.ctx.run_ui(self.input.clone(), |ui| {
            let _ = askpane::view::root_ui(ui, state, markdown);
        })
    }

    /// Shows `tab` and draws frames until every cache is warm and nothing animates any more (the
    /// scroll bars fade in over the first ~15 frames); returns the output of a settled frame.
    fn show(&mut self, state: &mut State<()>, tab: Tab) -> FullOutput {
        state.edit(Edit::ShowTab(tab));
        let mut drawn = 0;
        while drawn < MIN_WARM_UP_FRAMES || self.ctx.requested_repaint_last_pass() {
            assert!(drawn < MAX_WARM_UP_FRAMES, "{tab:?}: never settles");
            // The font atlas upload is the only texture delta; headless, it has nowhere to go.
            self.frame(state).drop_without_applying_deltas();
            drawn += 1;
        }
        let passes = self.ctx.cumulative_pass_nr();
        let mut output = self.frame(state);
        output.textures_delta.clear();
        // Steady state: one pass per frame (no sizing pass, no discard) and nothing animating.
        assert_eq!(self.ctx.cumulative_pass_nr(), passes + 1, "{tab:?}: more than one pass");
        assert!(!self.ctx.requested_repaint_last_pass(), "{tab:?}: the frame asks for another");
        output
    }
}

/// Every text the frame paints, one galley per line.
fn painted_text(shapes: &[ClippedShape]) -> String {
    fn collect(shape: &Shape, out: &mut String) {
        match shape {
            Shape::Text(text) => {
                out.push_str(text.galley.text());
                out.push('\n');
            }
            Shape::Vec(shapes) => shapes.iter().for_each(|shape| collect(shape, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    shapes.iter().for_each(|clipped| collect(&clipped.shape, &mut out));
    out
}

fn frame(c: &mut Criterion) {
    let mut state = largest_form_state();
    let mut window = Window::new();
    let mut group = c.benchmark_group("frame");
    // Each case with a text its frame must paint, so the measured frame is the one described.
    for (id, tab, painted) in [
        ("question/ascii_preview", Tab::Question(0), "| > Profile      |  Display name"),
        ("question/code_preview", Tab::Question(1), "pub enum ConfigError"),
        ("review", Tab::Review, "→ Clippy with -D warnings · Unit and integration tests"),
    ] {
        let output = window.show(&mut state, tab);
        let text = painted_text(&output.shapes);
        assert!(text.contains(painted), "{id}: {painted:?} is not painted in:\n{text}");
        group.bench_function(id, |b| {
            b.iter(|| window.frame(black_box(&state)).drop_without_applying_deltas());
        });
    }
    let output = window.show(&mut state, Tab::Question(1));
    let pixels_per_point = output.pixels_per_point;
    group.bench_function("tessellate", |b| {
        b.iter_batched(
            || output.shapes.clone(),
            |shapes| window.ctx.tessellate(shapes, pixels_per_point),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

/// Event `n` of a long session: a markdown paragraph, or a tool call.
fn session_event(n: usize) -> SessionEvent {
    let line = match n % 2 {
        0 => serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text",
            "text": format!("Step {n}: the **tests** pass; next, `cargo clippy` on module {n}.")}]}}),
        _ => serde_json::json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
            "id": format!("toolu_{n}"), "name": "Bash",
            "input": {"command": format!("cargo test -p module{n}")}}]}}),
    };
    SessionEvent::Message(parse_cli_line(&line))
}

fn session(c: &mut Criterion) {
    let mut group = c.benchmark_group("session");
    for events in [100, 10_000] {
        let mut state = largest_form_state();
        state.start_session(SessionKey::Own, None, Some("Make the tests pass"));
        for n in 0..events {
            state.session_event(SessionKey::Own, session_event(n));
        }
        let mut window = Window::new();
        let output = window.show(&mut state, Tab::Question(0));
        let last = format!("cargo test -p module{}", events - 1);
        assert!(painted_text(&output.shapes).contains(&last), "{events}: the end is not shown");
        group.bench_function(events.to_string(), |b| {
            b.iter(|| window.frame(black_box(&state)).drop_without_applying_deltas());
        });
        if events == 10_000 {
            let mut n = events;
            group.bench_function("10000+1", |b| {
                b.iter(|| {
                    state.session_event(SessionKey::Own, session_event(n));
                    n += 1;
                    window.frame(black_box(&state)).drop_without_applying_deltas()
                });
            });
        }
    }
    group.finish();
}

/// A one-question form whose only option with a preview has `preview`.
fn preview_state(preview: &str) -> State<()> {
    let input = serde_json::json!({"questions": [{
        "question": "Which layout?", "header": "Layout", "multiSelect": false,
        "options": [
            {"label": "This one", "description": "The big one", "preview": preview},
            {"label": "Another", "description": "No preview"},
        ],
    }]});
    let validated = validate(&input).expect("a valid AskUserQuestion input");
    let mut state = State::default();
    let core = Core {
        id: RequestId::next(),
        envelope: Envelope::ToolInput,
        ask: validated.ask,
        warnings: validated.warnings,
        provenance: Provenance::new("bench", Some("preview".to_owned())),
        reply_shape: askpane::protocol::ReplyShape::default(),
    };
    state.admit(core, Policy::default(), (), 0.0);
    state
}

/// The huge previews of issue 24 item 23, with a text each one's first screen must paint.
fn huge_previews() -> Vec<(&'static str, String, &'static str)> {
    let mut table = String::from("| n | v |\n|---|---|\n");
    for n in 0..90_000 {
        table.push_str(&format!("|{n}|{}|\n", n % 97));
    }
    let mut list = String::new();
    for n in 0..45_000 {
        list.push_str(&format!("- item {n:05} of the list\n"));
    }
    let mut code = String::from("```rust\n");
    for n in 0..10_000 {
        code.push_str(&format!("    let value_{n} = compute({n}, &input);\n"));
    }
    code.push_str("```\n");
    let mut verbatim = String::from("+----------+----------------------+\n");
    for n in 0..100_000 {
        verbatim.push_str(&format!("| row {n:>6} | ( ) option {n:<9} |\n"));
    }
    let largest: serde_json::Value = serde_json::from_str(LARGEST_FORM).unwrap();
    let small = largest["questions"][2]["options"][0]["preview"].as_str().unwrap().to_owned();
    vec![
        ("small", small, "Least recently used"),
        ("table", table, "\n12\n  \n12\n"),
        ("list", list, "item 00001 of the list"),
        ("code", code, "let value_1 = compute(1, &input);"),
        ("verbatim", verbatim, "| row      1 | ( ) option 1         |"),
    ]
}

/// The process's resident memory, in bytes (Linux; 0 elsewhere).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

fn preview(c: &mut Criterion) {
    let mut group = c.benchmark_group("preview");
    group.sample_size(10);
    for (id, text, painted) in huge_previews() {
        let before = resident_bytes();
        let mut state = preview_state(&text);
        drop(text);
        let mut window = Window::new();
        let output = window.show(&mut state, Tab::Question(0));
        let grown = resident_bytes().saturating_sub(before) as f64 / 1e6;
        eprintln!("preview/{id}: RSS +{grown:.1} MB (the request and its first frames)");
        let text = painted_text(&output.shapes);
        let start: String = text.chars().take(400).collect();
        assert!(text.contains(painted), "{id}: {painted:?} is not painted in:\n{start}");
        group.bench_function(id, |b| {
            b.iter(|| window.frame(black_box(&state)).drop_without_applying_deltas());
        });
    }
    group.finish();
}

/// Issue 30 item 2: `count` questions waiting at once, one per project (as 500 hooks from 500
/// folders ask), the first of them shown beside the list of all.
fn crowd_state(count: usize) -> State<()> {
    let mut state = State::default();
    for n in 0..count {
        let input = serde_json::json!({"questions": [{
            "question": format!("Which one for crowd {n}?"), "header": format!("Crowd {n}"),
            "multiSelect": false,
            "options": [{"label": "A", "description": "The first"}, {"label": "B", "description": "The second"}],
        }]});
        let validated = validate(&input).expect("a valid AskUserQuestion input");
        let core = Core {
            id: RequestId::next(),
            envelope: Envelope::ToolInput,
            ask: validated.ask,
            warnings: validated.warnings,
            provenance: Provenance::new("claude", None).with_project(Some(format!("crowd-{n}"))),
            reply_shape: askpane::protocol::ReplyShape::default(),
        };
        state.admit(core, Policy::default(), (), 0.0);
    }
    state
}

/// The request list with 50 and 500 questions waiting (issue 30 item 2: a frame of the list of
/// 500 ≤ 4 ms): a steady frame of the window showing the first question beside the list.
fn list(c: &mut Criterion) {
    let mut group = c.benchmark_group("list");
    for count in [50, 500] {
        let mut state = crowd_state(count);
        let mut window = Window::new();
        let output = window.show(&mut state, Tab::Question(0));
        let text = painted_text(&output.shapes);
        let waiting = format!("{count} waiting");
        assert!(text.contains(&waiting), "{count}: {waiting:?} is not painted in:\n{text}");
        assert!(
            text.contains("crowd-1\n"),
            "{count}: the second project is not painted in:\n{text}"
        );
        group.bench_function(count.to_string(), |b| {
            b.iter(|| window.frame(black_box(&state)).drop_without_applying_deltas());
        });
    }
    group.finish();
}

criterion_group!(benches, frame, session, preview, list);
criterion_main!(benches);
