//! Any bytes as a message: the envelope parser, the validator and every reply must not panic,
//! and what is accepted keeps the validated types' promises.
#![no_main]

use askpane::protocol::{Outcome, parse_message, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    // Issue 26 item 6: a hook input may be a Notification; its notice is bounded.
    if let Some(notice) = askpane::protocol::hook_notification::parse_notification(&message) {
        let limit = askpane::protocol::hook_notification::MESSAGE_CHARS;
        assert!(notice.message.chars().count() <= limit);
        let _ = notice.headline();
    }
    let Ok(incoming) = parse_message(&message) else { return };
    let Ok(validated) = validate(&incoming.input) else { return };
    let ask = &validated.ask;
    assert!(!ask.questions().is_empty());
    for key in ["answers", "annotations", "response"] {
        assert!(!ask.input().contains_key(key), "{key} would be echoed as the user's");
    }
    for outcome in [
        Outcome::declined("no"),
        Outcome::Withdrawn,
        Outcome::timed_out(1),
        Outcome::Unavailable { reason: "r".into() },
        Outcome::Refused { reason: "r".into() },
        Outcome::stopped(""),
        Outcome::replied(ask, "words"),
        Outcome::askpane_stopped("SIGTERM"),
        Outcome::clarify(ask, &[]),
    ] {
        let _ = incoming.envelope.reply(&outcome);
    }
});
