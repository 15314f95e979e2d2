//! `askpane mcp`'s side of the protocol (issue 12), as pure data: the `ask_user_question` tool
//! as MCP clients list it (AskUserQuestion's input schema, descriptions written for models), the
//! message an MCP tool call becomes on its way to the inbox (`mcp_tool_call`), and the MCP tool
//! result every [`Outcome`] is rendered as.

use serde_json::{Map, Value, json};

use super::outcome::{Outcome, ResultStyle};

/// Each input line of `askpane mcp` before rmcp reads it (rmcp is native only).
#[cfg(not(target_arch = "wasm32"))]
pub mod line;

/// The tool's name as MCP clients list it (Claude Code shows it as
/// `mcp__askpane__ask_user_question`).
pub const TOOL: &str = "ask_user_question";

/// The `type` of the message an MCP tool call is handed to the inbox as.
pub const MESSAGE_TYPE: &str = "mcp_tool_call";

/// The tool's title, for clients that show one.
pub const TITLE: &str = "Ask the user";

/// What the model reads about the tool: when to ask, and how (Claude Code's own AskUserQuestion
/// guidance, plus what an MCP client needs said: the answer may take a while).
pub const DESCRIPTION: &str = "Ask the user one to four multiple-choice questions in a window \
and wait for their answers.

Use this tool only when you are blocked on a decision that is genuinely the user's to make: one \
you cannot resolve from the request, the code, or sensible defaults. Reserve it for decisions \
where the user's answer changes what you do next — not for choices with a conventional default \
or facts you can verify yourself; in those cases pick the obvious option, mention it in your \
response, and proceed.

Usage notes:
- Users will always be able to select \"Other\" to provide custom text input; do not add an \
\"Other\" option yourself.
- Use multiSelect: true to allow multiple answers to be selected for a question.
- If you recommend a specific option, make that the first option in the list and add \
\"(Recommended)\" at the end of the label.
- Keep each header at most 12 characters.
- The user may see only the question window: make each question stand on its own, and name the \
items you are asking about in the question itself.
- Use the optional `preview` on options for concrete artifacts the user should compare (ASCII \
mockups of layouts, code snippets, configuration examples), single-select questions only; not \
for simple preferences.

The person may take minutes to answer. The result says what they chose, or that they declined, \
did not answer in time, or could not be reached: never assume an answer they did not give.";

/// The input schema: AskUserQuestion's `questions` (Claude Code 2.1.330's schema and wording).
/// Clients may not enforce it; askpane validates every call itself and lists every problem.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "questions": {
                "description": "Questions to ask the user (1-4 questions)",
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {
                            "description": "The complete question to ask the user. Should be clear, specific, and end with a question mark. Example: \"Which library should we use for date formatting?\" If multiSelect is true, phrase it accordingly, e.g. \"Which features do you want to enable?\"",
                            "type": "string"
                        },
                        "header": {
                            "description": "Very short label displayed as a chip/tag (max 12 chars). Examples: \"Auth method\", \"Library\", \"Approach\".",
                            "type": "string"
                        },
                        "options": {
                            "description": "The available choices for this question. Must have 2-4 options. Each option should be a distinct, mutually exclusive choice (unless multiSelect is enabled). There should be no 'Other' option, that will be provided automatically. Put the option you recommend first and end its label with \"(Recommended)\".",
                            "type": "array",
                            "minItems": 2,
                            "maxItems": 4,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {
                                        "description": "The display text for this option that the user will see and select. Should be concise (1-5 words) and clearly describe the choice.",
                                        "type": "string"
                                    },
                                    "description": {
                                        "description": "Explanation of what this option means or what will happen if chosen. Useful for providing context about trade-offs or implications.",
                                        "type": "string"
                                    },
                                    "preview": {
                                        "description": "Optional preview shown beside the options when this option is focused (markdown in a monospace box): an ASCII mockup, a code snippet, a configuration example. Single-select questions only.",
                                        "type": "string"
                                    }
                                },
                                "required": ["label", "description"],
                                "additionalProperties": false
                            }
                        },
                        "multiSelect": {
                            "description": "Set to true to allow the user to select multiple options instead of just one. Use when choices are not mutually exclusive.",
                            "type": "boolean",
                            "default": false
                        }
                    },
                    "required": ["question", "header", "options", "multiSelect"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["questions"],
        "additionalProperties": false
    })
}

/// The structured result of an answered call: AskUserQuestion's `answers` and `annotations`
/// (the shape of its `updatedInput`, without the questions), or the user's own words, and the
/// `message` the model reads.
pub fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "answers": {
                "description": "Question text → the chosen label (several joined by \", \"), or the user's own text.",
                "type": "object",
                "additionalProperties": {"type": "string"}
            },
            "annotations": {
                "description": "Question text → the user's notes and the preview of the option they chose.",
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {
                        "preview": {"type": "string"},
                        "notes": {"type": "string"}
                    }
                }
            },
            "response": {
                "description": "Set when the user answered in their own words instead of the form.",
                "type": "string"
            },
            "message": {
                "description": "The answers in words: read them carefully and follow what the user actually says.",
                "type": "string"
            }
        },
        "required": ["answers", "message"]
    })
}

/// Who made an MCP tool call: what the window shows beside the question.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpContext {
    /// The client's name and version from `initialize` (`claude-code 2.1.330`).
    pub client: Option<String>,
    /// The server's working directory (clients start it in the project).
    pub cwd: Option<String>,
    /// The client's roots (`roots/list`), as it sent them (`file:///…` URIs).
    pub roots: Vec<String>,
    /// This server process: the calls of one client session are listed together.
    pub session: Option<String>,
    /// Unique per call (the client's tool_use id when it sends one): a call asked again after the
    /// inbox restarted is the same question.
    pub call_id: String,
}

impl McpContext {
    /// Where the agent works, in words: its roots (as paths where they are files), else the
    /// working directory.
    pub fn place(&self) -> Option<String> {
        let roots: Vec<&str> = self
            .roots
            .iter()
            .map(|root| root.strip_prefix("file://").unwrap_or(root))
            .filter(|root| !root.is_empty())
            .collect();
        match roots.is_empty() {
            false => Some(roots.join(", ")),
            true => self.cwd.clone().filter(|cwd| !cwd.is_empty()),
        }
    }

    /// The project's folder name: the last part of the first root, else of the working directory.
    pub fn project(&self) -> Option<String> {
        let place = self.place()?;
        let first = place.split(", ").next()?.trim_end_matches('/');
        first.rsplit('/').next().filter(|name| !name.is_empty()).map(str::to_owned)
    }

    /// The message handed to the inbox for a call with these `arguments`.
    pub fn message(&self, arguments: Value) -> Value {
        let mut message = json!({"type": MESSAGE_TYPE, "tool": TOOL, "call_id": self.call_id});
        if let Some(object) = message.as_object_mut() {
            if let Some(client) = &self.client {
                object.insert("client".into(), Value::String(client.clone()));
            }
            if let Some(cwd) = &self.cwd {
                object.insert("cwd".into(), Value::String(cwd.clone()));
            }
            if !self.roots.is_empty() {
                let roots = self.roots.iter().cloned().map(Value::String).collect();
                object.insert("roots".into(), Value::Array(roots));
            }
            if let Some(session) = &self.session {
                object.insert("session".into(), Value::String(session.clone()));
            }
            object.insert("arguments".into(), arguments);
        }
        message
    }

    /// Reads the context of an `mcp_tool_call` message (its `arguments` are the tool input).
    pub fn from_message(object: &Map<String, Value>) -> Self {
        let text = |field: &str| object.get(field).and_then(Value::as_str).map(str::to_owned);
        let roots = object
            .get("roots")
            .and_then(Value::as_array)
            .map(|roots| roots.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        McpContext {
            client: text("client"),
            cwd: text("cwd"),
            roots,
            session: text("session"),
            call_id: text("call_id").unwrap_or_default(),
        }
    }
}

/// The MCP tool result for `outcome` (`CallToolResult`): the text the model reads, worded as
/// Claude Code words its own AskUserQuestion result; for an answer also `structuredContent`
/// (`{answers, annotations, message}`); `isError` for every outcome that is not the user's
/// answer, with the text alone.
///
/// The text is in `structuredContent` too (`message`) because Claude Code, Codex, OpenCode and
/// VS Code give their model `structuredContent` *instead of* the text when both are present
/// (seen with Claude Code 2.1.330 in tests/mcp.rs): without it their model would read the bare
/// answers, not "Read the answers carefully…".
pub fn tool_result(outcome: &Outcome) -> Value {
    let text = match outcome {
        // The model called this tool, not AskUserQuestion: name the one to call again.
        Outcome::Refused { reason } => format!(
            "These questions could not be shown to the user because the {TOOL} input is \
             invalid: {reason}. Fix the input and call {TOOL} again."
        ),
        other => other.model_text(ResultStyle::Current),
    };
    let structured = match outcome {
        Outcome::Answered(answers) => Some(answers.updated_input()),
        Outcome::Replied(reply) => Some(reply.updated_input()),
        _ => None,
    };
    let content = json!([{"type": "text", "text": text}]);
    match structured {
        Some(Value::Object(mut input)) => {
            // The questions are the model's own; the result carries what the user added.
            input.shift_remove("questions");
            input.insert("message".into(), Value::String(text.clone()));
            json!({"content": content, "structuredContent": input, "isError": false})
        }
        _ => json!({"content": content, "isError": true}),
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn the_message_round_trips_its_context() {
        let context = McpContext {
            client: Some("claude-code 2.1.330".into()),
            cwd: Some("/home/me/shop".into()),
            roots: vec!["file:///home/me/shop".into()],
            session: Some("mcp-42".into()),
            call_id: "mcp-42-1".into(),
        };
        let message = context.message(json!({"questions": []}));
        let object = message.as_object().expect("an object");
        assert_eq!(McpContext::from_message(object), context);
        assert_eq!(context.place().as_deref(), Some("/home/me/shop"));
        assert_eq!(context.project().as_deref(), Some("shop"));
    }

    #[test]
    fn errors_carry_no_structured_content() {
        let result = tool_result(&Outcome::declined(""));
        assert_eq!(result["isError"], true);
        assert!(result.get("structuredContent").is_none());
        assert_eq!(
            result["content"][0]["text"],
            "The user declined to answer these questions. Do not assume an answer; continue \
             without it or ask in chat."
        );
    }
}
