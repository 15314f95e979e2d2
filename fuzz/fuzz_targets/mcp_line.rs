//! Any bytes as one line of `askpane mcp`'s input (issue 24 item 22): the screen must not
//! panic; a line it hands to rmcp is one rmcp reads; an answer is one line of JSON-RPC 2.0
//! errors whose id is the request's exactly as written (`null` only where none can be read);
//! a request with a readable id is never left unanswered.
#![no_main]

use askpane::protocol::mcp::line::{Screened, screen};
use libfuzzer_sys::fuzz_target;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::value::RawValue;

fuzz_target!(|data: &[u8]| {
    let screened = screen(data, 1);
    let line = data.strip_suffix(b"\n").unwrap_or(data);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text =
        std::str::from_utf8(line).ok().map(|text| text.strip_prefix('\u{feff}').unwrap_or(text));
    let members = text.and_then(|text| serde_json::from_str::<Members<'_>>(text).ok());
    match &screened {
        Screened::Blank => {
            let text = text.expect("a blank line is UTF-8");
            assert!(text.trim_matches([' ', '\t', '\r', '\n']).is_empty(), "{text:?} is not blank");
        }
        Screened::Pass => {
            let text = text.expect("a line handed on is UTF-8");
            assert!(
                serde_json::from_str::<ClientJsonRpcMessage>(text).is_ok(),
                "rmcp cannot read what was handed to it: {text}"
            );
        }
        Screened::Ignore(_) => {
            // Only a notification (or a batch of them) goes unanswered: no request with an id.
            if let Some(members) = &members {
                assert!(members.get("id").is_none(), "a request was ignored: {text:?}");
            }
        }
        Screened::Answer(reply) => {
            assert!(!reply.contains('\n'), "the reply spans lines: {reply}");
            let replies: Vec<&RawValue> = match reply.starts_with('[') {
                true => serde_json::from_str(reply).expect("a batch reply is a JSON array"),
                false => vec![serde_json::from_str(reply).expect("the reply is JSON")],
            };
            assert!(!replies.is_empty(), "an empty batch reply");
            // A batch's replies carry the ids of its messages; the line's own, the line's id.
            let for_the_line = !reply.starts_with('[');
            for one in &replies {
                let reply = serde_json::from_str::<Members<'_>>(one.get()).expect("an object");
                assert_eq!(reply.get("jsonrpc").map(RawValue::get), Some(r#""2.0""#));
                let error: serde_json::Value =
                    serde_json::from_str(reply.get("error").expect("an error").get())
                        .expect("JSON");
                let code = error["code"].as_i64().expect("a code");
                assert!([-32700, -32600, -32601, -32602].contains(&code), "code {code}");
                assert!(error["message"].is_string(), "{error}");
                let id = reply.get("id").expect("every reply has an id member").get();
                if for_the_line && id != "null" {
                    // The id is the request's, exactly as written.
                    let members = members.as_ref().expect("an id from an object");
                    assert_eq!(Some(id), members.get("id").map(RawValue::get), "{reply:?}");
                }
            }
            // A single request whose id can be read gets its error with that id.
            if let Some(members) = &members
                && for_the_line
                && members.get("method").is_some()
                && members.count("id") == 1
                && members.repeated().is_none()
                && let Some(id) = members.get("id").map(RawValue::get)
                && matches!(id.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9'))
            {
                let reply =
                    serde_json::from_str::<Members<'_>>(replies[0].get()).expect("an object");
                assert_eq!(
                    reply.get("id").map(RawValue::get),
                    Some(id),
                    "the id was lost: {text:?}"
                );
            }
        }
    }
});

/// A JSON object's members in order, repeated ones kept, values as raw JSON.
#[derive(Debug)]
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Members<'a> {
    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(member, _)| member == name).map(|(_, value)| *value)
    }

    fn count(&self, name: &str) -> usize {
        self.0.iter().filter(|(member, _)| member == name).count()
    }

    fn repeated(&self) -> Option<&str> {
        self.0.iter().map(|(member, _)| member.as_str()).find(|name| self.count(name) > 1)
    }
}

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members<'de>;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}
