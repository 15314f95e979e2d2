//! CPU time of the protocol core on a captured can_use_tool line: parse, validate, answer, reply.
//!
//! The input is `fixtures/can_use_tool.json`, the CLI's `control_request` from the Claude Code
//! 2.1.330 capture `tests/fixtures/session.answer-with-notes.2.1.330.jsonl` (one compact line, as
//! the CLI writes it). The answer is the one recorded in that capture: Sidebar (with a note, so
//! its preview goes back in `annotations`); Dark mode + Export; Other "MySQL を Docker で動かしたい".
//! Ids in the `protocol` group:
//!
//! - `parse_only`: `serde_json::from_str` of the line alone, the baseline;
//! - `parse_validate`: + `parse_message` (envelope) + `validate`;
//! - `full_round_trip`: + the drafts, `build_answers`, `Envelope::reply` and
//!   `serde_json::to_string` of the `control_response`;
//! - `full_round_trip/previews_x100`: the same round trip on the line with every preview repeated
//!   100 times (previews of 14.5 and 11.5 KB, a 28 KB line instead of 1.4 KB; the reply echoes the
//!   input and carries the chosen preview back in `annotations`).
//!
//! The previews are 100× and not larger because the note sends the chosen preview back in
//! `annotations`, and past 32 768 characters in all `build_answers` refuses the answer
//! (`LimitError::TooLarge`) instead of replying.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "a benchmark may assume: a failed assumption is a failed benchmark, reported with its message"
)]

use std::hint::black_box;

use askpane::protocol::envelope::parse_message;
use askpane::protocol::{Draft, Outcome, Pick, build_answers, validate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;

const CAN_USE_TOOL: &str = include_str!("fixtures/can_use_tool.json");

/// How many times each preview is repeated in the large variant.
const PREVIEW_REPEAT: usize = 100;

/// The line's envelope and validated input; what `parse_validate` measures.
fn parse_validate(line: &str) -> (askpane::protocol::Envelope, askpane::protocol::Ask) {
    let message: Value = serde_json::from_str(line).expect("the line is JSON");
    let incoming = parse_message(&message).expect("the line is a can_use_tool request");
    let validated = validate(&incoming.input).expect("the tool input is valid");
    (incoming.envelope, validated.ask)
}

/// The whole trip from the line read off stdin to the line written back.
fn full_round_trip(line: &str) -> String {
    let (envelope, ask) = parse_validate(line);
    let questions = ask.questions();
    let mut drafts = vec![Draft::default(); questions.len()];
    drafts[0].pick(&questions[0], Pick::Option(0)); // Sidebar
    drafts[0].set_notes("Keep the sidebar narrow, please.".to_owned());
    drafts[1].pick(&questions[1], Pick::Option(0)); // Dark mode
    drafts[1].pick(&questions[1], Pick::Option(2)); // Export
    drafts[2].set_other_text(&questions[2], "MySQL を Docker で動かしたい".to_owned());
    let answers = build_answers(&ask, &drafts).expect("the answer is within the limits");
    let reply = envelope.reply(&Outcome::Answered(answers)).expect("an answer is always sent");
    serde_json::to_string(&reply).expect("a reply serialises")
}

/// The captured line with every preview repeated [`PREVIEW_REPEAT`] times.
fn with_large_previews(line: &str) -> String {
    let mut message: Value = serde_json::from_str(line).expect("the line is JSON");
    let questions =
        message["request"]["input"]["questions"].as_array_mut().expect("the request has questions");
    let options = questions.iter_mut().flat_map(|question| {
        question["options"].as_array_mut().expect("every question has options").iter_mut()
    });
    for option in options {
        if let Some(Value::String(preview)) = option.get_mut("preview") {
            *preview = vec![preview.as_str(); PREVIEW_REPEAT].join("\n");
        }
    }
    serde_json::to_string(&message).expect("the line serialises")
}

/// Checks, once and untimed, that the round trip is the captured answer and not an error path.
fn check_reply(line: &str) {
    let reply: Value = serde_json::from_str(&full_round_trip(line)).expect("the reply is JSON");
    let result = &reply["response"]["response"];
    assert_eq!(result["behavior"], "allow", "{reply}");
    let updated = &result["updatedInput"];
    assert_eq!(updated["answers"]["Which features do you want to enable?"], "Dark mode, Export");
    assert_eq!(
        updated["answers"]["どのデータベースを使いますか？"],
        "MySQL を Docker で動かしたい"
    );
    let annotation = &updated["annotations"]["Which layout should the settings page use?"];
    assert_eq!(annotation["notes"], "Keep the sidebar narrow, please.");
    assert_eq!(annotation["preview"], updated["questions"][0]["options"][0]["preview"]);
}

fn protocol(c: &mut Criterion) {
    let line = CAN_USE_TOOL.trim_end();
    let large = with_large_previews(line);
    check_reply(line);
    check_reply(&large);

    let mut group = c.benchmark_group("protocol");
    group.throughput(Throughput::Bytes(line.len() as u64));
    group.bench_function("parse_only", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(line)).expect("the line is JSON"));
    });
    group.bench_function("parse_validate", |b| b.iter(|| parse_validate(black_box(line))));
    group.bench_function("full_round_trip", |b| b.iter(|| full_round_trip(black_box(line))));
    group.throughput(Throughput::Bytes(large.len() as u64));
    group.bench_function("full_round_trip/previews_x100", |b| {
        b.iter(|| full_round_trip(black_box(&large)));
    });
    group.finish();
}

criterion_group!(benches, protocol);
criterion_main!(benches);
