//! Reading the captured fixtures in `tests/fixtures/` (never the team's shared folder at run time),
//! and comparing our JSON with a recorded line both by value and byte for byte.

use std::path::PathBuf;

use serde_json::Value;

/// The text of `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read fixture {}: {error}", path.display()))
}

/// A fixture holding one JSON value.
pub fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&fixture(name))
        .unwrap_or_else(|error| panic!("{name} is not JSON: {error}"))
}

/// A fixture holding one JSON value per line.
pub fn fixture_lines(name: &str) -> Vec<Value> {
    fixture(name)
        .lines()
        .enumerate()
        .map(|(index, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("{name} line {} is not JSON: {error}", index + 1))
        })
        .collect()
}

/// The lines of a trimmed stream-json host transcript (`session.*.jsonl`) that the tests use.
pub struct Session {
    /// How the CLI was started (`{"dir":"cmd"}`).
    pub argv: Vec<String>,
    /// The CLI's `control_request` with subtype `can_use_tool` (`{"dir":"<<"}`).
    pub can_use_tool: Value,
    /// The host's `control_response` to it (`{"dir":">>"}`), keys in the order the host sent them.
    pub host_reply: Value,
    /// The `tool_result` block of the CLI's next `user` line: what the model read.
    pub tool_result: Value,
}

impl Session {
    pub fn load(name: &str) -> Self {
        let (mut argv, mut can_use_tool, mut host_reply, mut tool_result) =
            (None, None, None, None);
        for record in fixture_lines(name) {
            let line = &record["line"];
            let kind = line["type"].as_str();
            let slot = match (record["dir"].as_str(), kind) {
                (Some("cmd"), _) => &mut argv,
                (Some("<<"), Some("control_request"))
                    if line["request"]["subtype"] == "can_use_tool" =>
                {
                    &mut can_use_tool
                }
                (Some(">>"), Some("control_response")) => &mut host_reply,
                (Some("<<"), Some("user"))
                    if line["message"]["content"][0]["type"] == "tool_result" =>
                {
                    let block = line["message"]["content"][0].clone();
                    assert!(tool_result.replace(block).is_none(), "{name}: two tool_result lines");
                    continue;
                }
                (dir, kind) => panic!("{name}: unexpected line {dir:?} {kind:?}; trim it out"),
            };
            assert!(slot.replace(line.clone()).is_none(), "{name}: two {kind:?} lines");
        }
        let argv = argv.unwrap_or_else(|| panic!("{name}: no cmd line"));
        Session {
            argv: serde_json::from_value(argv).expect("the cmd line is a list of strings"),
            can_use_tool: can_use_tool.unwrap_or_else(|| panic!("{name}: no can_use_tool line")),
            host_reply: host_reply.unwrap_or_else(|| panic!("{name}: no host control_response")),
            tool_result: tool_result.unwrap_or_else(|| panic!("{name}: no tool_result line")),
        }
    }

    /// The tool_result `content` string: exactly what the model read.
    pub fn model_read(&self) -> &str {
        self.tool_result["content"].as_str().expect("tool_result content is a string")
    }
}

/// Asserts `ours` equals `recorded` as JSON values, then as compact text (so key order counts).
pub fn assert_same_json(ours: &Value, recorded: &Value) {
    let (ours_text, recorded_text) = (compact(ours), compact(recorded));
    assert!(
        ours == recorded,
        "different JSON values\n     ours: {ours_text}\n recorded: {recorded_text}"
    );
    assert_eq!(ours_text, recorded_text, "same values, different key order");
}

/// Asserts `ours` is exactly the compact JSON text `expected`.
pub fn assert_json_text(ours: &Value, expected: &str) {
    let expected_value: Value = serde_json::from_str(expected)
        .unwrap_or_else(|error| panic!("expected text is not JSON ({error}): {expected}"));
    assert_same_json(ours, &expected_value);
    assert_eq!(compact(ours), expected, "the expected text is not compact JSON");
}

pub fn compact(value: &Value) -> String {
    serde_json::to_string(value).expect("a Value always serialises")
}
