//! A tool input, then what a user does to its questions: the answer built from the drafts holds
//! only labels the user picked and text the user typed.
#![no_main]

use askpane::protocol::{Draft, Pick, build_answers, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first line is the tool input; every later byte pair is one act on one question.
    let split = data.iter().position(|&byte| byte == b'\n').unwrap_or(data.len());
    let (input, acts) = data.split_at(split);
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(input) else { return };
    let Ok(validated) = validate(&input) else { return };
    let ask = validated.ask;
    let count = ask.questions().len();
    let mut drafts = vec![Draft::default(); count];
    let mut picked_ever = vec![Vec::new(); count];
    for act in acts.chunks(2) {
        let (Some(&which), Some(&what)) = (act.first(), act.get(1)) else { break };
        let index = usize::from(which) % count;
        let question = &ask.questions()[index];
        match what % 5 {
            0 | 1 => {
                let option = usize::from(what / 5);
                drafts[index].pick(question, Pick::Option(option));
                picked_ever[index].push(option);
            }
            2 => drafts[index].pick(question, Pick::Other),
            3 => drafts[index].set_other_text(question, format!("typed {what}")),
            _ => drafts[index].set_notes(format!("note {what}")),
        }
    }
    let Ok(answers) = build_answers(&ask, &drafts) else { return };
    for entry in answers.entries() {
        assert!(drafts[entry.index].is_touched(), "an untouched question was answered");
        assert!(entry.picked.iter().all(|option| picked_ever[entry.index].contains(option)));
        if let Some(other) = &entry.other {
            assert!(other.starts_with("typed "), "Other is not what the user typed: {other}");
        }
        if let Some(notes) = &entry.notes {
            assert!(notes.starts_with("note "), "a note the user did not write: {notes}");
        }
    }
    let _ = answers.updated_input();
});
