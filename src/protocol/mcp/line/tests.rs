//! Unit tests of `askpane mcp`'s line screen: each kind of line, the code and id it gets.

#![allow(clippy::expect_used, clippy::indexing_slicing, reason = "tests")]

use serde_json::{Value, json};

use super::*;

/// The reply to `line` (line 7 of the input), which must be one.
fn answer(line: &str) -> String {
    match screen(line.as_bytes(), 7) {
        Screened::Answer(reply) => {
            assert!(!reply.contains('\n'), "{reply}");
            reply
        }
        other => panic!("{line}: {other:?}"),
    }
}

/// The reply to `line` as JSON (its id must be one serde_json holds).
fn answer_json(line: &str) -> Value {
    let reply = answer(line);
    serde_json::from_str(&reply).unwrap_or_else(|error| panic!("{error}: {reply}"))
}

fn code_and_id(line: &str) -> (i64, Value) {
    let reply = answer_json(line);
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    (reply["error"]["code"].as_i64().expect("a code"), reply["id"].clone())
}

#[test]
fn well_formed_messages_are_handed_to_rmcp() {
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_user_question","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rm_rf"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#,
        "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r\n",
    ] {
        assert_eq!(screen(line.as_bytes(), 1), Screened::Pass, "{line}");
    }
    assert_eq!(screen(b" \t\r\n", 1), Screened::Blank);
    assert_eq!(screen(b"", 1), Screened::Blank);
}

#[test]
fn what_is_not_json_is_a_parse_error_with_id_null() {
    assert_eq!(
        answer_json("this is not JSON"),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message":
            "Parse error: line 7 of the input is not JSON (expected ident at line 1 column 2)"}})
    );
    let reply = match screen(b"{\"id\":1,\"method\":\"ping\xff\"}", 3) {
        Screened::Answer(reply) => reply,
        other => panic!("{other:?}"),
    };
    assert!(reply.contains("line 3 of the input is not UTF-8 (at byte 23)"), "{reply}");
    // Whitespace JSON does not know is no blank line.
    assert_eq!(code_and_id("\u{a0}").0, -32700);
}

#[test]
fn wrong_arguments_are_invalid_params_with_the_id() {
    let reply = answer_json(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_user_question","arguments":[1]}}"#,
    );
    assert_eq!(reply["id"], 5, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().expect("a message");
    assert!(message.starts_with("Invalid params for tools/call: "), "{message}");
    for line in [
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask_user_question","arguments":{"x":1e400}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":5}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":[]}"#,
    ] {
        assert_eq!(code_and_id(line), (-32602, json!(6)), "{line}");
    }
}

#[test]
fn every_method_rmcp_has_a_schema_for_says_invalid_params() {
    let mut seen = std::collections::BTreeSet::new();
    for method in TYPED_METHODS {
        assert!(seen.insert(method), "{method} is listed twice");
        let line = json!({"jsonrpc": "2.0", "id": "m", "method": method, "params": 5}).to_string();
        assert_eq!(code_and_id(&line), (-32602, json!("m")), "{line}");
        // Params of the wrong type that are an object: rmcp reads a custom request.
        let line = json!({"jsonrpc": "2.0", "id": "m", "method": method,
                          "params": {"_meta": 5, "name": [], "uri": 5, "cursor": 5,
                                     "protocolVersion": 5, "level": 5, "taskId": 5}})
        .to_string();
        assert_eq!(code_and_id(&line), (-32602, json!("m")), "{line}");
    }
    assert!(TYPED_METHODS.contains(&"tools/call"));
    assert!(TYPED_METHODS.contains(&"initialize"));
}

#[test]
fn an_unknown_method_is_method_not_found_with_the_id() {
    assert_eq!(
        answer_json(r#"{"jsonrpc":"2.0","id":"x","method":"nope","params":5}"#),
        json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32601,
               "message": "Method not found: nope"}})
    );
}

#[test]
fn an_id_no_number_type_holds_is_echoed_as_written() {
    for id in [
        "1e400",
        "-1e400",
        "18446744073709551616",
        "9223372036854775808",
        "1.5",
        "2e-400",
        "1.0000000000000001",
        "9007199254740993.0",
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let reply = answer(&line);
        assert!(
            reply.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"#)),
            "{reply}"
        );
        // Still JSON: the id is the client's own text.
        let raw: &RawValue = serde_json::from_str(&reply).expect("JSON");
        assert_eq!(raw.get(), reply);
    }
    // A string id is echoed exactly as written, escapes and all.
    let reply = answer(r#"{"jsonrpc":"2.0","id":"\u00e9\n","method":5}"#);
    assert!(
        reply.starts_with(r#"{"jsonrpc":"2.0","id":"\u00e9\n","error":{"code":-32600"#),
        "{reply}"
    );
}

#[test]
fn invalid_requests_carry_their_id_when_it_is_readable() {
    for (line, id) in [
        (r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#, json!(9)),
        (r#"{"id":10,"method":"ping"}"#, json!(10)),
        (r#"{"jsonrpc":2.0,"id":10,"method":"ping"}"#, json!(10)),
        (r#"{"jsonrpc":"2.0","id":13,"method":5}"#, json!(13)),
        (r#"{"jsonrpc":"2.0","id":"s","method":null}"#, json!("s")),
        (r#"{"jsonrpc":"2.0","id":8}"#, json!(8)),
        (r#"{"jsonrpc":"2.0","id":8,"method":"ping","result":{}}"#, json!(8)),
        (r#"{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/list"}"#, json!(4)),
        (r#"{"jsonrpc":"2.0","id":4,"jsonrpc":"2.0","method":"ping"}"#, json!(4)),
        // Two ids: neither is the request's.
        (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, Value::Null),
        (r#"{}"#, Value::Null),
        (r#"5"#, Value::Null),
        (r#""ping""#, Value::Null),
        // A response askpane cannot read: its id is askpane's, not the client's.
        (r#"{"jsonrpc":"2.0","id":3,"error":"x"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","method":5}"#, Value::Null),
    ] {
        assert_eq!(code_and_id(line), (-32600, id), "{line}");
    }
}

#[test]
fn a_notification_is_never_answered() {
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
        r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":5}"#,
    ] {
        assert!(matches!(screen(line.as_bytes(), 1), Screened::Ignore(_)), "{line}");
    }
}

#[test]
fn a_batch_gets_an_error_for_each_request_in_it() {
    let reply = answer(
        r#"[{"jsonrpc":"2.0","id":12,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":1e400,"method":"ping"},5]"#,
    );
    let items: Vec<&RawValue> = serde_json::from_str(&reply).expect("an array");
    assert_eq!(items.len(), 3, "{reply}");
    assert!(items[0].get().starts_with(r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32600"#));
    assert!(items[1].get().starts_with(r#"{"jsonrpc":"2.0","id":1e400,"error":{"code":-32600"#));
    assert!(items[2].get().starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#));
    assert_eq!(code_and_id("[]"), (-32600, Value::Null));
    let notifications = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert!(matches!(screen(notifications.as_bytes(), 1), Screened::Ignore(_)));
}

#[test]
fn deep_or_huge_params_still_get_the_id() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"ask_user_question","arguments":{{"x":{}{}}}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    assert_eq!(code_and_id(&deep), (-32602, json!(77)));
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{{"name":5,"arguments":"{}"}}}}"#,
        "x".repeat(100_000)
    );
    let reply = answer(&long);
    assert!(reply.len() < 2000, "the reply quotes the input: {} bytes", reply.len());
}

#[test]
fn an_integer_in_float_form_is_the_integer_rmcp_answers_with() {
    for (text, integer) in [
        ("1", Some(1)),
        ("-0", Some(0)),
        ("0.0e5", Some(0)),
        ("1.0", Some(1)),
        ("1e2", Some(100)),
        ("12.50e1", Some(125)),
        ("-9223372036854775808", Some(i64::MIN)),
        ("9223372036854775807", Some(i64::MAX)),
        ("9223372036854775808", None),
        ("1.5", None),
        ("2e-400", None),
        ("1e400", None),
        ("1e99999999999999999999", None),
    ] {
        assert_eq!(exact_integer(text), integer, "{text}");
    }
    for id in ["1", "1.0", "1e2", "-7", "\"x\""] {
        assert!(carried(id), "{id}");
    }
    for id in ["1.5", "2e-400", "1e400", "null"] {
        assert!(!carried(id), "{id}");
    }
}
