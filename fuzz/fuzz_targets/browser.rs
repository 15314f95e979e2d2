//! Any bytes as a browser message, answered against a fixed three-question request: no panic,
//! and an answer names only options that were offered and sent.
#![no_main]

use askpane::protocol::web::{BrowserMessage, FromPage, PageRequest, answer_outcome};
use askpane::protocol::{Outcome, validate};
use libfuzzer_sys::fuzz_target;

const REQUEST: &str = r#"{"questions":[
 {"question":"Layout?","header":"Layout","multiSelect":false,"options":[
  {"label":"Sidebar","description":"","preview":"+--+"},{"label":"Tabs","description":""}]},
 {"question":"Features?","header":"Features","multiSelect":true,"options":[
  {"label":"Dark mode","description":""},{"label":"A, B","description":""},
  {"label":"say \"hi\"","description":""}]},
 {"question":"データベース？","header":"DB","options":[
  {"label":"PostgreSQL","description":""},{"label":"SQLite","description":""}]}]}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(PageRequest::Question(BrowserMessage::Answer { body, .. })) = FromPage::parse(&value)
    else {
        return;
    };
    let request = serde_json::from_str(REQUEST).expect("the request is JSON");
    let ask = validate(&request).expect("the request is valid").ask;
    if let Ok(Outcome::Answered(answers)) = answer_outcome(&ask, &body, false) {
        for entry in answers.entries() {
            let sent = body
                .picks
                .answers
                .given()
                .and_then(|answers| answers.get(&entry.index.to_string()))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            for option in &entry.picked {
                assert!(*option < ask.questions()[entry.index].options().len());
                let number = (option + 1).to_string();
                assert!(sent.split(',').any(|item| item.trim() == number), "{sent} {option}");
            }
        }
    }
});
