//! Any bytes as one line a client sends on the inbox socket (issue 24): the inbox's reading of
//! it must not panic; a message it reads is read again the same once a client writes it (the
//! clients write these types); an `ask`'s message goes on to the envelope parser and the
//! validator, a hosted session's event to its conversion, as the inbox does.
#![no_main]

use askpane::protocol::inbox::{ClientMessage, SessionLine, read_client_line};
use askpane::protocol::{parse_message, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(read) = read_client_line(data) else {
        assert!(data.trim_ascii().is_empty(), "a line with content was read as blank");
        return;
    };
    let message = match read {
        Ok(message) => message,
        Err(bad) => {
            // The error the client is sent, naming the id the line named.
            let _ = bad.error.to_string();
            return;
        }
    };
    let written = serde_json::to_string(&message).expect("a client message serialises");
    assert!(!written.contains('\n'), "a written message spans lines: {written}");
    let again = read_client_line(written.as_bytes())
        .expect("a written message is no blank line")
        .unwrap_or_else(|bad| panic!("{written} is not read back: {}", bad.error));
    assert_eq!(again, message, "read back otherwise: {written}");
    match message {
        ClientMessage::Ask(ask) => {
            let _ = ask.policy.needs_a_person();
            if let Ok(incoming) = parse_message(&ask.message) {
                let _ = validate(&incoming.input);
            }
        }
        ClientMessage::SessionEvent { event } => {
            let event = event.into_event();
            let _ = SessionLine::from_event(event);
        }
        _ => {}
    }
});
