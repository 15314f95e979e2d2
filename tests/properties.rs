//! Property tests (proptest, stable Rust) of everything that reads outside data: the envelope
//! parser, the validator, the answer builder (from the window's drafts, from `--answers` presets,
//! from a browser's numbers), the browser message parser and the lines clients send to the inbox
//! and to `askpane mcp`, plus `askpane ask` itself run on generated requests. The invariants:
//! nothing panics; `ask` prints exactly one JSON line whose outcome matches its exit code; no
//! answer is ever produced that the user (or the preset, or the browser) did not give; a request
//! to `askpane mcp` with a readable id keeps it.
//!
//! Case counts are bounded for CI: `PROPTEST_CASES` (default 256) for the in-process properties,
//! `ASKPANE_BINARY_CASES` (default 24) for the runs of the binary. Longer, coverage-guided runs
//! live in `fuzz/` (cargo-fuzz; see docs/src/developers.md).

use std::collections::BTreeSet;
use std::fs;

use askpane::book::tool_call::ToolCallView;
use askpane::protocol::answer::join_labels;
use askpane::protocol::stream::PermissionRequest;
use askpane::protocol::tool_call::{FileSnapshot, ToolCall};
use askpane::protocol::web::{BrowserMessage, FromPage, PageRequest, answer_outcome};
use askpane::protocol::{
    Ask, Draft, Outcome, Pick, build_answers, drafts_from_preset, parse_message, validate,
};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Map, Value, json};

use crate::support::{askpane, run_bounded, scratch_dir};

// ---------------------------------------------------------------------------------------------
// Generators

/// Words the protocol cares about, so generated objects often look like real messages.
const KEYS: [&str; 34] = [
    "questions",
    "question",
    "header",
    "options",
    "label",
    "description",
    "preview",
    "markdown",
    "multiSelect",
    "type",
    "request",
    "subtype",
    "tool_name",
    "input",
    "request_id",
    "tool_use_id",
    "hook_event_name",
    "tool_input",
    "answers",
    "annotations",
    "response",
    "notes",
    "other",
    "choose",
    "outcome",
    "message",
    "id",
    "name",
    "metadata",
    "can_use_tool",
    "tool_use",
    "control_request",
    "user_question",
    "AskUserQuestion",
];

/// Texts with the awkward parts real labels have: commas, quotes, CJK, emoji, blanks.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z ]{0,12}",
        1 => Just(String::new()),
        1 => Just("  ".to_owned()),
        1 => Just("A, B".to_owned()),
        1 => Just("say \"hi\"".to_owned()),
        1 => Just("どのデータベース".to_owned()),
        1 => Just("(Recommended)".to_owned()),
        1 => "\\PC{0,16}",
        1 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
    ]
}

/// A text that is usually a fine label or question (not blank, rarely repeated).
fn name() -> impl Strategy<Value = String> {
    prop_oneof![8 => "[A-Za-z][A-Za-z ,\"]{0,12}", 1 => text()]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![3 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned), 1 => text()]
}

/// Any JSON value, a few levels deep, with protocol words for keys.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

/// A field that is usually of the right kind and sometimes anything at all.
fn or_junk(good: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![16 => good, 1 => json_value()].boxed()
}

/// An option object, near valid.
fn option_value() -> impl Strategy<Value = Value> {
    (
        or_junk(name().prop_map(Value::String)),
        prop::option::of(or_junk(text().prop_map(Value::String))),
        prop::option::of(or_junk(text().prop_map(Value::String))),
    )
        .prop_map(|(label, description, preview)| {
            let mut option = Map::new();
            option.insert("label".into(), label);
            if let Some(description) = description {
                option.insert("description".into(), description);
            }
            if let Some(preview) = preview {
                option.insert("preview".into(), preview);
            }
            Value::Object(option)
        })
}

/// A question object, near valid.
fn question_value() -> impl Strategy<Value = Value> {
    (
        or_junk(name().prop_map(Value::String)),
        prop::option::of(or_junk(text().prop_map(Value::String))),
        or_junk(prop::collection::vec(option_value(), 0..5).prop_map(Value::Array)),
        prop::option::of(or_junk(any::<bool>().prop_map(Value::Bool))),
    )
        .prop_map(|(question, header, options, multi)| {
            let mut object = Map::new();
            object.insert("question".into(), question);
            if let Some(header) = header {
                object.insert("header".into(), header);
            }
            object.insert("options".into(), options);
            if let Some(multi) = multi {
                object.insert("multiSelect".into(), multi);
            }
            Value::Object(object)
        })
}

/// An AskUserQuestion tool input, near valid, sometimes with reply keys of its own.
fn tool_input() -> impl Strategy<Value = Value> {
    (
        or_junk(prop::collection::vec(question_value(), 0..5).prop_map(Value::Array)),
        prop::option::of(json_value()),
        prop::option::of(text()),
    )
        .prop_map(|(questions, answers, response)| {
            let mut input = json!({"questions": questions});
            if let Some(answers) = answers {
                input["answers"] = answers;
            }
            if let Some(response) = response {
                input["response"] = Value::String(response);
            }
            input
        })
}

/// A message in one of the envelopes askpane reads (or not quite), around a tool input.
fn message() -> impl Strategy<Value = Value> {
    (tool_input(), 0..7usize, text(), prop::bool::weighted(0.1)).prop_map(
        |(input, envelope, id, bend)| {
            let tool = if bend { json!("Bash") } else { json!("AskUserQuestion") };
            match envelope {
                0 => input,
                1 => json!({"type": "tool_use", "id": id, "name": tool, "input": input}),
                2 => json!({"type": "control_request", "request_id": id, "request": {
                "subtype": "can_use_tool", "tool_name": tool, "input": input, "tool_use_id": id}}),
                3 => {
                    json!({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
                "tool_use_id": id, "cwd": "/tmp/x"})
                }
                4 => json!({"hook_event_name": "PermissionRequest", "tool_name": tool,
                "tool_input": input}),
                5 => json!({"type": "user_question", "tool_use_id": id,
                "questions": input["questions"].clone()}),
                _ => json!({"type": id, "request": input}),
            }
        },
    )
}

/// A valid Ask: 1–4 questions with unique texts, 1–5 options each with unique labels (some
/// with ", " or quotes), previews on some.
fn valid_ask() -> impl Strategy<Value = Ask> {
    let question = (any::<bool>(), prop::collection::vec((text(), any::<bool>()), 1..6));
    prop::collection::vec(question, 1..5).prop_map(|questions| {
        let questions: Vec<Value> = questions
            .into_iter()
            .enumerate()
            .map(|(q, (multi, options))| {
                let options: Vec<Value> = options
                    .into_iter()
                    .enumerate()
                    .map(|(o, (word, preview))| {
                        let mut option =
                            json!({"label": format!("{o}: {word}"), "description": word});
                        if preview {
                            option["preview"] = json!(format!("preview {q}.{o}"));
                        }
                        option
                    })
                    .collect();
                json!({"question": format!("Q{q}?"), "header": format!("H{q}"),
                    "options": options, "multiSelect": multi})
            })
            .collect();
        let input = json!({"questions": questions});
        validate(&input).expect("built valid").ask
    })
}

/// What a user does to a question in the window.
#[derive(Clone, Debug)]
enum Act {
    Pick(usize),
    Other,
    Type(String),
    Note(String),
    Clear,
}

fn act() -> impl Strategy<Value = (usize, Act)> {
    let act = prop_oneof![
        4 => (0..7usize).prop_map(Act::Pick),
        1 => Just(Act::Other),
        2 => text().prop_map(Act::Type),
        2 => text().prop_map(Act::Note),
        1 => Just(Act::Clear),
    ];
    (0..5usize, act)
}

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// `PROPTEST_CASES`, else `default`.
fn cases(variable: &str, default: u32) -> u32 {
    std::env::var(variable).ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}

/// Every string anywhere in `value` (keys included).
fn strings(value: &Value, into: &mut BTreeSet<String>) {
    match value {
        Value::String(text) => {
            into.insert(text.clone());
        }
        Value::Array(items) => items.iter().for_each(|item| strings(item, into)),
        Value::Object(fields) => {
            for (key, item) in fields {
                into.insert(key.clone());
                strings(item, into);
            }
        }
        _ => {}
    }
}

/// The answer a question would carry for `picked` option indices and an Other text, by the
/// documented rules (single: the one item; multi: labels in option order, then Other, joined).
fn expected_answer(ask: &Ask, index: usize, picked: &[usize], other: Option<&str>) -> String {
    let question = &ask.questions()[index];
    let labels: Vec<&str> = picked.iter().map(|&o| question.options()[o].label()).collect();
    let items: Vec<&str> = labels.into_iter().chain(other).collect();
    match question.multi_select() {
        false => items.first().copied().unwrap_or_default().to_owned(),
        true => join_labels(&items),
    }
}

// ---------------------------------------------------------------------------------------------
// In-process properties

proptest! {
    #![proptest_config(config(cases("PROPTEST_CASES", 256)))]

    /// The envelope parser and the validator never panic, and what they accept can be replied to
    /// in every envelope with every outcome.
    #[test]
    fn any_message_is_parsed_validated_and_replied_to_without_panic(message in message()) {
        let Ok(incoming) = parse_message(&message) else { return Ok(()) };
        let Ok(validated) = validate(&incoming.input) else { return Ok(()) };
        let ask = &validated.ask;
        prop_assert!(!ask.questions().is_empty());
        for reply_key in ["answers", "annotations", "response"] {
            prop_assert!(!ask.input().contains_key(reply_key), "{reply_key} is echoed");
        }
        let texts: BTreeSet<&str> = ask.questions().iter().map(|q| q.text()).collect();
        prop_assert_eq!(texts.len(), ask.questions().len(), "question texts are unique");
        for question in ask.questions() {
            prop_assert!(!question.text().trim().is_empty());
            let labels: BTreeSet<&str> = question.options().iter().map(|o| o.label()).collect();
            prop_assert_eq!(labels.len(), question.options().len(), "labels are unique");
            prop_assert!(labels.iter().all(|label| !label.trim().is_empty()));
        }
        let outcomes = [
            Outcome::declined("no"), Outcome::closed(), Outcome::Withdrawn,
            Outcome::timed_out(3), Outcome::Unavailable { reason: "r".into() },
            Outcome::Refused { reason: "r".into() }, Outcome::stopped(""),
            Outcome::replied(ask, "words"), Outcome::askpane_stopped("SIGTERM"),
            Outcome::clarify(ask, &[]), Outcome::nothing_answered(),
        ];
        for outcome in &outcomes {
            if let Some(reply) = incoming.envelope.reply(outcome) {
                prop_assert!(reply.is_object());
                // The agent's own `response` never comes back as the user's.
                prop_assert!(
                    !matches!(outcome, Outcome::Replied(_))
                        || reply.to_string().contains("\"words\"")
                );
            }
        }
    }

    /// Any JSON at all: the validator and the parser refuse or accept, never panic, and a refusal
    /// always says why.
    #[test]
    fn any_json_is_refused_with_reasons_or_accepted(value in json_value()) {
        if let Err(invalid) = validate(&value) {
            prop_assert!(!invalid.0.is_empty());
            prop_assert!(!invalid.to_string().is_empty());
        }
        let _ = parse_message(&value);
        let _ = FromPage::parse(&value);
    }

    /// The answer from the window's drafts holds only what the user picked and typed.
    #[test]
    fn answers_hold_only_what_the_user_gave(ask in valid_ask(), acts in prop::collection::vec(act(), 0..24)) {
        let count = ask.questions().len();
        let mut drafts = vec![Draft::default(); count];
        let mut picked_ever = vec![BTreeSet::new(); count];
        let mut typed: Vec<Option<String>> = vec![None; count];
        let mut noted: Vec<Option<String>> = vec![None; count];
        for (question, act) in acts {
            let index = question % count;
            let (q, draft) = (&ask.questions()[index], &mut drafts[index]);
            match act {
                Act::Pick(option) => {
                    draft.pick(q, Pick::Option(option));
                    picked_ever[index].insert(option);
                }
                Act::Other => draft.pick(q, Pick::Other),
                Act::Type(text) => {
                    draft.set_other_text(q, text.clone());
                    typed[index] = Some(text);
                }
                Act::Note(text) => {
                    draft.set_notes(text.clone());
                    noted[index] = Some(text);
                }
                Act::Clear => draft.clear_choice(),
            }
        }
        let Ok(answers) = build_answers(&ask, &drafts) else { return Ok(()) };
        for entry in answers.entries() {
            let index = entry.index;
            prop_assert_eq!(&entry.question, ask.questions()[index].text());
            prop_assert!(drafts[index].is_touched(), "an untouched question is answered");
            prop_assert!(entry.picked.iter().all(|o| picked_ever[index].contains(o)));
            if let Some(other) = &entry.other {
                let last = typed[index].as_deref().map(str::trim);
                prop_assert_eq!(Some(other.as_str()), last, "Other is the text typed last");
            }
            if let Some(notes) = &entry.notes {
                prop_assert_eq!(Some(notes.as_str()), noted[index].as_deref().map(str::trim));
            }
            if let Some(answer) = &entry.answer {
                let expected = expected_answer(&ask, index, &entry.picked, entry.other.as_deref());
                prop_assert_eq!(answer, &expected);
            }
        }
        let reply = answers.updated_input();
        prop_assert_eq!(&reply["questions"], &ask.input()["questions"]);
    }

    /// Answers from an `--answers` preset: only labels, Other texts and notes the preset holds.
    #[test]
    fn preset_answers_hold_only_what_the_preset_gave(ask in valid_ask(), picks in prop::collection::vec((0..5usize, 0..7usize, any::<bool>()), 0..6), junk in json_value()) {
        let mut preset = Map::new();
        for (question, option, by_header) in picks {
            let q = &ask.questions()[question % ask.questions().len()];
            let key = if by_header { q.header() } else { q.text() }.to_owned();
            let label = q.options().get(option).map_or_else(|| "nope".to_owned(), |o| o.label().to_owned());
            let value = if q.multi_select() { json!([label]) } else { json!(label) };
            preset.insert(key, value);
        }
        for preset in [Value::Object(preset), junk] {
            let Ok(drafts) = drafts_from_preset(&ask, &preset) else { continue };
            let Ok(answers) = build_answers(&ask, &drafts) else { continue };
            let mut given = BTreeSet::new();
            strings(&preset, &mut given);
            for entry in answers.entries() {
                let question = &ask.questions()[entry.index];
                for option in &entry.picked {
                    prop_assert!(given.contains(question.options()[*option].label()));
                }
                if let Some(other) = &entry.other {
                    prop_assert!(given.iter().any(|text| text.trim() == other));
                }
                if let Some(notes) = &entry.notes {
                    prop_assert!(given.iter().any(|text| text.trim() == notes));
                }
            }
        }
    }

    /// A browser's `question_answer`: only offered options the message names, and its own text.
    #[test]
    fn browser_answers_hold_only_what_the_browser_sent(ask in valid_ask(), body in prop::collection::vec((0..6usize, prop::collection::vec(0..8usize, 0..4), prop::option::of(text())), 0..5), notes in prop::option::of(text()), response in prop::option::of(text()), junk in json_value()) {
        let mut answers = Map::new();
        for (question, numbers, other) in body {
            let mut items: Vec<String> = numbers.iter().map(ToString::to_string).collect();
            items.extend(other.map(|text| format!("other:{text}")));
            answers.insert(question.to_string(), Value::String(items.join(",")));
        }
        let mut message = json!({"type": "question_answer", "tool_use_id": "t", "answers": answers});
        if let Some(notes) = notes {
            message["notes"] = json!({"0": notes});
        }
        if let Some(response) = &response {
            message["response"] = json!(response);
        }
        for message in [message, junk] {
            let Ok(PageRequest::Question(BrowserMessage::Answer { body, .. })) =
                FromPage::parse(&message)
            else {
                continue;
            };
            let mut sent = BTreeSet::new();
            strings(&message, &mut sent);
            match answer_outcome(&ask, &body, false) {
                Ok(Outcome::Answered(answers)) => {
                    for entry in answers.entries() {
                        let numbers = body
                            .picks
                            .answers
                            .given()
                            .and_then(|answers| answers.get(&entry.index.to_string()))
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        for option in &entry.picked {
                            let number = (option + 1).to_string();
                            prop_assert!(numbers.split(',').any(|item| item.trim() == number));
                        }
                        if let Some(other) = &entry.other {
                            prop_assert!(numbers.contains(other.as_str()));
                        }
                    }
                }
                Ok(Outcome::Replied(reply)) => {
                    prop_assert!(sent.iter().any(|text| text.trim() == reply.text()));
                }
                // Issue 24 item 7: a form that answers nothing is not an answer.
                Ok(outcome) if outcome == Outcome::nothing_answered() => {
                    let built = askpane::protocol::web::drafts_from_numbers(
                        &ask,
                        body.picks.answers.given().unwrap_or(&Default::default()),
                        body.picks.notes.given(),
                    );
                    prop_assert!(built.is_ok_and(|drafts| drafts
                        .iter()
                        .zip(ask.questions())
                        .all(|(draft, question)| draft.answer(question).is_none()
                            && draft.notes().trim().is_empty())));
                }
                Ok(other) => prop_assert!(false, "an answer became {other:?}"),
                Err(_) => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The binary

/// The exit code a reply's outcome must come with (`ask`, no window).
fn code_for(reply: &Value) -> Option<i32> {
    if reply.get("answers").is_some() {
        return Some(0);
    }
    let message = reply["message"].as_str().unwrap_or_default();
    match reply["outcome"].as_str()? {
        "declined" | "stopped" | "clarify" => Some(1),
        "refused" => Some(2),
        // An `--answers` file that does not fit is the caller's error: exit 2, the agent hears
        // that nobody could answer.
        "unavailable" if message.contains("--answers") => Some(2),
        "unavailable" => Some(3),
        "timed_out" => Some(5),
        _ => None,
    }
}

proptest! {
    #![proptest_config(config(cases("ASKPANE_BINARY_CASES", 24)))]

    /// `askpane ask` on generated requests (raw tool inputs, without a display): exactly one JSON
    /// line on stdout, and the exit code that goes with its outcome; never a panic.
    #[test]
    fn ask_prints_one_line_whose_outcome_matches_the_exit_code(input in tool_input(), preset in prop::option::of(json_value()), submit_labels in any::<bool>()) {
        let dir = scratch_dir("property-ask");
        let request = dir.join("request.json");
        fs::write(&request, input.to_string()).expect("write the request");
        let mut args = vec!["ask".to_owned(), request.display().to_string()];
        // Either "no human" at once, or an answers file: made from the request's own labels
        // (often valid), or any JSON (often not).
        let answers = if submit_labels {
            let mut made = Map::new();
            for question in input["questions"].as_array().into_iter().flatten() {
                if let (Some(text), Some(label)) = (question["question"].as_str(), question["options"][0]["label"].as_str()) {
                    made.insert(text.to_owned(), json!(label));
                }
            }
            Some(Value::Object(made))
        } else {
            preset
        };
        match answers {
            Some(answers) => {
                let file = dir.join("answers.json");
                fs::write(&file, answers.to_string()).expect("write the answers");
                args.extend(["--answers".to_owned(), file.display().to_string(), "--submit".to_owned()]);
            }
            None => args.push("--non-interactive".to_owned()),
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_bounded(&mut askpane(&args), None);
        let _ = fs::remove_dir_all(&dir);
        prop_assert!(!run.stderr.contains("panicked"), "{run:?}");
        let lines: Vec<&str> = run.stdout.lines().collect();
        prop_assert_eq!(lines.len(), 1, "{:?}", run);
        prop_assert!(run.stdout.ends_with('\n'));
        let reply: Value = serde_json::from_str(lines[0]).expect("the line is JSON");
        prop_assert_eq!(run.status.code(), code_for(&reply), "{:?}", run);
    }
}

/// The generators are not vacuous: requests come out valid and invalid, in every envelope, and
/// drafts come out answered.
#[test]
fn the_generators_reach_valid_and_invalid_requests() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut valid, mut invalid, mut unrecognised) = (0, 0, 0);
    for _ in 0..400 {
        let message = message().new_tree(&mut runner).expect("a value").current();
        match parse_message(&message).map(|incoming| validate(&incoming.input)) {
            Ok(Ok(_)) => valid += 1,
            Ok(Err(_)) => invalid += 1,
            Err(_) => unrecognised += 1,
        }
    }
    eprintln!("valid {valid}, invalid {invalid}, unrecognised {unrecognised}");
    assert!(valid >= 40 && invalid >= 40 && unrecognised >= 20, "{valid} {invalid} {unrecognised}");
}

// ---------------------------------------------------------------------------------------------
// Lines from clients (issue 24): the inbox socket's and `askpane mcp`'s, the bounded versions of
// fuzz/'s `inbox_line` and `mcp_line`

/// A line a client might send on the inbox socket: near a message of each type, or junk.
fn inbox_line() -> impl Strategy<Value = String> {
    let kinds = vec![
        "hello",
        "ask",
        "withdraw",
        "list",
        "subscribe",
        "quit",
        "show",
        "new_link",
        "host",
        "session_event",
        "permission",
        "withdraw_permission",
        "permission_timed_out",
        "notice",
        "dance",
    ];
    let modes = vec!["ask", "hook", "mcp", "opencode", "nope"];
    let near = (
        prop::sample::select(kinds),
        text(),
        prop::sample::select(modes),
        message(),
        prop::collection::vec((key(), json_value()), 0..4),
    )
        .prop_map(|(kind, id, mode, message, extra)| {
            let mut line = json!({"type": kind, "id": id, "mode": mode, "message": message,
                                  "version": 1, "agent": "claude", "event": {"kind": "ended"}});
            if let Some(object) = line.as_object_mut() {
                object.extend(extra);
            }
            line.to_string()
        });
    prop_oneof![
        6 => near,
        1 => json_value().prop_map(|value| value.to_string()),
        1 => text().prop_map(|text| format!(" {text}\r\n")),
    ]
}

/// A number, string or other id as JSON text, `1e400` and ids askpane cannot carry among them.
fn mcp_id() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<i64>().prop_map(|id| id.to_string()),
        3 => text().prop_map(|id| Value::String(id).to_string()),
        1 => (0..1000u32).prop_map(|id| format!("{id}.0")),
        1 => (0..1000u32).prop_map(|id| format!("{id}.5")),
        1 => (0..1000u32).prop_map(|id| format!("{id}e400")),
        1 => (0..1000u32).prop_map(|id| format!("-{id}e-400")),
        1 => Just("18446744073709551616".to_owned()),
        1 => prop::sample::select(vec!["null", "true", "{}", "[1]"]).prop_map(str::to_owned),
    ]
}

/// A JSON-RPC line `askpane mcp` might be sent, members near right or wrong, and its id's text.
fn mcp_line() -> impl Strategy<Value = (String, Option<String>)> {
    let text_json = || text().prop_map(|text| Value::String(text).to_string());
    let version = prop::option::of(prop_oneof![
        4 => Just(r#""2.0""#.to_owned()),
        1 => Just(r#""1.0""#.to_owned()),
        1 => Just("2".to_owned()),
    ]);
    let method = prop::option::of(prop_oneof![
        4 => prop::sample::select(vec![
            "initialize", "ping", "tools/list", "tools/call", "prompts/get", "logging/setLevel",
            "notifications/initialized", "notifications/cancelled", "nope",
        ])
        .prop_map(|method| format!("\"{method}\"")),
        1 => text_json(),
        1 => Just("5".to_owned()),
    ]);
    let params = prop::option::of(prop_oneof![
        2 => json_value().prop_map(|value| value.to_string()),
        2 => (json_value(), text_json()).prop_map(|(arguments, name)| {
            format!(r#"{{"name":{name},"arguments":{arguments}}}"#)
        }),
        1 => Just(r#"{"name":"ask_user_question","arguments":{"n":1e400}}"#.to_owned()),
        1 => Just(r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}"#.to_owned()),
    ]);
    let result = prop::option::of(json_value().prop_map(|value| value.to_string()));
    (version, prop::option::of(mcp_id()), method, params, result).prop_map(
        |(version, id, method, params, result)| {
            let members: Vec<String> = [
                ("jsonrpc", version),
                ("id", id.clone()),
                ("method", method),
                ("params", params),
                ("result", result),
            ]
            .into_iter()
            .filter_map(|(name, value)| value.map(|value| format!("\"{name}\":{value}")))
            .collect();
            (format!("{{{}}}", members.join(",")), id)
        },
    )
}

proptest! {
    #![proptest_config(config(cases("PROPTEST_CASES", 256)))]

    /// The inbox reads any line without panic, and a message it reads is read back the same
    /// once a client writes it.
    #[test]
    fn an_inbox_line_is_read_back_the_same_or_refused(line in inbox_line()) {
        use askpane::protocol::inbox::read_client_line;
        if let Some(Ok(message)) = read_client_line(line.as_bytes()) {
            let written = serde_json::to_string(&message).expect("serialises");
            let again = read_client_line(written.as_bytes()).and_then(Result::ok);
            prop_assert_eq!(again, Some(message), "{}", written);
        }
    }

    /// `askpane mcp` hands a request to rmcp (which answers with its id) or answers it with its
    /// id as written, never without it; every answer is one line of JSON.
    #[test]
    fn an_mcp_request_with_a_readable_id_keeps_it((line, id) in mcp_line()) {
        use askpane::protocol::mcp::line::{Screened, screen};
        use serde_json::value::RawValue;
        let screened = screen(line.as_bytes(), 1);
        if let Screened::Answer(reply) = &screened {
            prop_assert!(!reply.contains('\n'), "{}", reply);
            let members: std::collections::BTreeMap<String, &RawValue> =
                serde_json::from_str(reply).expect("the reply is a JSON object");
            prop_assert_eq!(members.get("jsonrpc").map(|raw| raw.get()), Some(r#""2.0""#));
            prop_assert!(members.contains_key("error"), "{}", reply);
            let replied = members.get("id").map(|raw| raw.get()).expect("an id member");
            prop_assert!(replied == "null" || Some(replied) == id.as_deref(), "{} for {}", reply, line);
        }
        let readable = id.as_deref().is_some_and(|id| {
            matches!(id.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9'))
        });
        if readable && line.contains(r#""method":"#) {
            match &screened {
                Screened::Pass => {}
                Screened::Answer(reply) => {
                    let expected = format!(r#""id":{},"#, id.as_deref().unwrap_or_default());
                    prop_assert!(reply.contains(&expected), "{} lost the id of {}", reply, line);
                }
                other => prop_assert!(false, "{:?} for the request {}", other, line),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The approval card's tool calls (issue 26)

/// The fields Claude Code's and Codex's tools take.
const TOOL_FIELDS: [&str; 20] = [
    "command",
    "description",
    "timeout",
    "run_in_background",
    "file_path",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "content",
    "notebook_path",
    "cell_id",
    "new_source",
    "edit_mode",
    "url",
    "prompt",
    "query",
    "allowed_domains",
    "blocked_domains",
    "diff",
];

/// A tool input: an object of tool fields, each a string (often) or any JSON; sometimes not an
/// object at all.
fn tool_call_input() -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        3 => text().prop_map(Value::String),
        1 => json_value(),
        1 => prop::collection::vec(
            prop::collection::vec(
                (prop::sample::select(TOOL_FIELDS.to_vec()), text().prop_map(Value::String)),
                0..4,
            )
            .prop_map(|fields| Value::Object(
                fields.into_iter().map(|(key, value)| (key.to_owned(), value)).collect()
            )),
            0..3,
        )
        .prop_map(Value::Array),
    ];
    let object = prop::collection::vec((prop::sample::select(TOOL_FIELDS.to_vec()), field), 0..8)
        .prop_map(|fields| {
            Value::Object(fields.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
        });
    prop_oneof![6 => object, 1 => json_value()]
}

fn tool_name() -> impl Strategy<Value = String> {
    let names = vec![
        "Bash",
        "Shell",
        "Edit",
        "MultiEdit",
        "Write",
        "NotebookEdit",
        "WebFetch",
        "WebSearch",
        "mcp__github__create_issue",
        "mcp__",
        "Glob",
    ];
    prop_oneof![6 => prop::sample::select(names).prop_map(str::to_owned), 1 => text()]
}

fn file_snapshot() -> impl Strategy<Value = Option<FileSnapshot>> {
    prop_oneof![
        1 => Just(None),
        3 => (text(), text()).prop_map(|(path, text)| Some(FileSnapshot::Text { path, text })),
        1 => (text(), json_value())
            .prop_map(|(path, notebook)| Some(FileSnapshot::Text { path, text: notebook.to_string() })),
        1 => text().prop_map(|path| Some(FileSnapshot::Missing { path })),
        1 => (text(), text()).prop_map(|(path, reason)| Some(FileSnapshot::Unreadable { path, reason })),
    ]
}

proptest! {
    #![proptest_config(config(cases("PROPTEST_CASES", 256)))]

    /// Any input under any tool name is typed (or falls back to Other, keeping the input), and
    /// its card body is prepared, without a panic; what the card keeps is bounded and inert.
    #[test]
    fn any_tool_call_is_typed_and_its_card_prepared_without_panic(
        name in tool_name(),
        input in tool_call_input(),
        on_disk in file_snapshot(),
    ) {
        let call = ToolCall::parse(&name, &input);
        if let ToolCall::Other { name: other, input: kept } = &call {
            prop_assert_eq!(other, &name);
            prop_assert_eq!(kept, &input);
        }
        let request = PermissionRequest {
            tool_name: name,
            input,
            on_disk,
            ..PermissionRequest::default()
        };
        if let ToolCallView::Change { diff, path, .. } = ToolCallView::of(&request) {
            prop_assert!(diff.lines.len() <= askpane::book::diff::MAX_SHOWN_LINES);
            prop_assert!(!path.text.contains('\u{202e}') && !path.text.contains('\n'), "{:?}", path.text);
            for line in &diff.lines {
                prop_assert!(!line.text.chars().any(char::is_control), "{:?}", line.text);
            }
        }
    }
}

/// A `/global/event` frame of OpenCode's, of a kind askpane reads, with any properties (often
/// near a real permission request).
fn opencode_frame() -> impl Strategy<Value = String> {
    let kinds = vec![
        "permission.asked",
        "permission.replied",
        "question.asked",
        "question.replied",
        "session.idle",
        "session.error",
        "session.deleted",
        "server.heartbeat",
    ];
    let near_permission = (
        or_junk(name().prop_map(Value::String)),
        or_junk(name().prop_map(Value::String)),
        or_junk(prop::collection::vec(text().prop_map(Value::String), 0..3).prop_map(Value::Array)),
        or_junk(json_value()),
    )
        .prop_map(|(id, permission, patterns, metadata)| {
            json!({"id": id, "sessionID": "ses_1", "requestID": id, "permission": permission,
                "patterns": patterns, "always": patterns, "metadata": metadata,
                "info": {"id": "ses_1"}})
        });
    (
        prop::sample::select(kinds),
        prop_oneof![3 => near_permission, 1 => json_value()],
        or_junk(text().prop_map(Value::String)),
    )
        .prop_map(|(kind, properties, directory)| {
            json!({"directory": directory, "payload": {"type": kind, "properties": properties}})
                .to_string()
        })
}

proptest! {
    #![proptest_config(config(cases("PROPTEST_CASES", 256)))]

    /// Hostile OpenCode frames never panic the reader, the card built from them, or the
    /// followed server's book; and only a person's allow ever sends an allow to OpenCode.
    #[test]
    fn any_opencode_permission_frame_is_read_without_panic_and_never_allowed_alone(
        frame in opencode_frame(),
        listed in json_value(),
        decline in any::<bool>(),
    ) {
        use askpane::book::followed::{FollowedServer, Step, permission_reply};
        use askpane::protocol::opencode::{self, Happening, PermissionReply};
        use askpane::protocol::stream::PermissionDecision;
        let _ = opencode::pending_permissions(&listed);
        let Ok(happening) = opencode::global_event(&frame) else { return Ok(()) };
        if let Happening::PermissionAsked { directory, request } = &happening {
            let (card, _) = opencode::to_permission(request, directory);
            prop_assert!(card.input.is_object());
            prop_assert!(card.suggestions.len() <= 1);
        }
        let decided = match decline {
            true => PermissionDecision::Deny { message: "No.".to_owned() },
            false => PermissionDecision::HandBack,
        };
        let mut followed = FollowedServer::new(false).deciding_permissions(Some(decided.clone()));
        for step in followed.happened(happening, std::time::Instant::now()) {
            if let Step::ReplyPermission { reply, .. } = step {
                prop_assert!(matches!(reply, PermissionReply::Reject { .. }), "{reply:?}");
            }
        }
        prop_assert!(followed.held_permission_ids().is_empty());
        prop_assert_eq!(permission_reply(&decided).is_some(), decline);
    }
}

// Issue 26 item 6: Claude Code's Notification hook input, near valid or hostile.

/// A Notification hook input: the captured keys, each usually a string and sometimes anything;
/// long and non-ASCII texts included.
fn notification_input() -> impl Strategy<Value = Value> {
    let long = prop_oneof![
        3 => text(),
        1 => ("[ぁ-ゖ]{1,3}", 1usize..4000).prop_map(|(unit, times)| unit.repeat(times)),
    ];
    let kinds =
        vec!["permission_prompt", "idle_prompt", "auth_success", "elicitation_dialog", "", "x"];
    (
        or_junk(prop::sample::select(kinds).prop_map(Value::from)),
        or_junk(long.prop_map(Value::String)),
        or_junk(text().prop_map(Value::String)),
        or_junk(text().prop_map(|cwd| Value::String(format!("/home/dev/{cwd}")))),
        prop::collection::vec((key(), json_value()), 0..3),
    )
        .prop_map(|(kind, message, session, cwd, extra)| {
            let mut input = json!({"hook_event_name": "Notification", "notification_type": kind,
                "message": message, "session_id": session, "cwd": cwd});
            if let Some(object) = input.as_object_mut() {
                for (key, value) in extra {
                    if key != "hook_event_name" {
                        object.insert(key, value);
                    }
                }
            }
            input
        })
}

proptest! {
    #![proptest_config(config(cases("PROPTEST_CASES", 256)))]

    /// Any Notification input becomes a notice without panic, bounded, that crosses the inbox's
    /// socket unchanged and names its terminal in one notification no longer than its limits.
    #[test]
    fn any_notification_input_becomes_a_bounded_notice_without_panic(input in notification_input()) {
        use askpane::protocol::hook_notification::{MESSAGE_CHARS, parse_notification};
        use askpane::protocol::inbox::{ClientMessage, read_client_line};
        use askpane::protocol::notice::terminal_notification;
        let notice = parse_notification(&input).expect("a Notification is a notice");
        prop_assert!(notice.message.chars().count() <= MESSAGE_CHARS);
        prop_assert!(!notice.message.trim().is_empty());
        let line = serde_json::to_string(&ClientMessage::Notice { notice: notice.clone() }).expect("serialises");
        let read = read_client_line(line.as_bytes()).expect("a line").expect("a message");
        prop_assert_eq!(read, ClientMessage::Notice { notice: notice.clone() });
        let shown = terminal_notification(&notice, askpane::protocol::origin::RequestId::next());
        prop_assert!(shown.summary.chars().count() <= 80 && shown.body.chars().count() <= 300);
    }
}
