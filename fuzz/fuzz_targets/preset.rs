//! Any bytes as an `--answers` file for a fixed request: no panic, and every label, Other text
//! and note in the answer is one the file holds.
#![no_main]

use askpane::protocol::{build_answers, drafts_from_preset, validate};
use libfuzzer_sys::fuzz_target;

const REQUEST: &str = r#"{"questions":[
 {"question":"Layout?","header":"Layout","multiSelect":false,"options":[
  {"label":"Sidebar","description":""},{"label":"Tabs","description":""}]},
 {"question":"Features?","header":"Features","multiSelect":true,"options":[
  {"label":"Dark mode","description":""},{"label":"A, B","description":""}]}]}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(preset) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let request = serde_json::from_str(REQUEST).expect("the request is JSON");
    let ask = validate(&request).expect("the request is valid").ask;
    let Ok(drafts) = drafts_from_preset(&ask, &preset) else { return };
    let Ok(answers) = build_answers(&ask, &drafts) else { return };
    let text = preset.to_string();
    for entry in answers.entries() {
        for option in &entry.picked {
            let label = ask.questions()[entry.index].options()[*option].label();
            let quoted = serde_json::Value::String(label.to_owned()).to_string();
            assert!(text.contains(&quoted), "{label} is not in the answers file");
        }
    }
});
