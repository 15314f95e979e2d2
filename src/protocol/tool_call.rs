//! A tool call as typed data: the `(tool_name, input)` of a permission request read into the shape
//! each tool has (Claude Code's Bash, Edit, MultiEdit, Write, NotebookEdit, WebFetch, WebSearch,
//! MCP tools, Codex's command and file-change approvals, and OpenCode's kinds through
//! [`opencode::tool_call`]), so the approval card can show it the way a person checks it. And [`FileSnapshot`]: the file a call would change, as it was on disk
//! when the call was asked about (read in transport; the view does no IO).
//!
//! Never fails: an input missing a field the tool needs, or with a field of the wrong type, is
//! [`ToolCall::Other`] and is shown as its JSON (issue 26).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::codex_server::{COMMAND_TOOL, FILE_CHANGE_TOOL};
use super::opencode;
use super::permission::ApprovalOrigin;
use super::stream::PermissionRequest;

/// What a permission request asks to do.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolCall {
    /// A shell command: Claude Code's Bash, Codex's command approval.
    Bash {
        command: String,
        description: Option<String>,
        /// Milliseconds.
        timeout: Option<u64>,
        run_in_background: bool,
    },
    Edit {
        file_path: String,
        old_string: String,
        new_string: String,
        replace_all: bool,
    },
    MultiEdit {
        file_path: String,
        edits: Vec<StringEdit>,
    },
    Write {
        file_path: String,
        content: String,
    },
    NotebookEdit {
        notebook_path: String,
        cell_id: Option<String>,
        new_source: String,
        edit_mode: NotebookEditMode,
    },
    WebFetch {
        url: String,
        /// What to do with the page (Claude Code's); OpenCode's fetch has none.
        prompt: Option<String>,
    },
    WebSearch {
        query: String,
        allowed_domains: Vec<String>,
        blocked_domains: Vec<String>,
    },
    /// A tool of an MCP server, named `mcp__server__tool`.
    Mcp {
        server: String,
        tool: String,
        arguments: Value,
    },
    /// Codex's file-change approval: the changed paths and one unified diff of them all.
    Patch {
        files: String,
        diff: String,
    },
    Other {
        name: String,
        input: Value,
    },
}

/// One replacement of a MultiEdit.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct StringEdit {
    pub old_string: String,
    pub new_string: String,
    #[serde(default, deserialize_with = "flag")]
    pub replace_all: bool,
}

/// What a NotebookEdit does to its cell (Claude Code's default: replace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotebookEditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

/// The file a tool call would change, as it was when the call was asked about. `path` is the
/// file that was looked at (the tool's path, made absolute with the working directory).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileSnapshot {
    /// The file's whole text.
    Text { path: String, text: String },
    /// Nothing there: a Write makes a new file.
    Missing { path: String },
    /// Not read, and why (the card says "could not read the file: {reason}").
    Unreadable { path: String, reason: String },
}

impl FileSnapshot {
    pub fn path(&self) -> &str {
        match self {
            FileSnapshot::Text { path, .. }
            | FileSnapshot::Missing { path }
            | FileSnapshot::Unreadable { path, .. } => path,
        }
    }
}

/// `null` or absent reads as false; anything else must be a boolean.
fn flag<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

/// `null` or absent reads as no list; anything else must be a list of strings.
fn list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Deserialize)]
struct BashInput {
    command: String,
    description: Option<String>,
    timeout: Option<u64>,
    #[serde(default, deserialize_with = "flag")]
    run_in_background: bool,
}

#[derive(Deserialize)]
struct EditInput {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default, deserialize_with = "flag")]
    replace_all: bool,
}

#[derive(Deserialize)]
struct MultiEditInput {
    file_path: String,
    edits: Vec<StringEdit>,
}

#[derive(Deserialize)]
struct WriteInput {
    file_path: String,
    content: String,
}

#[derive(Deserialize)]
struct NotebookEditInput {
    notebook_path: String,
    cell_id: Option<String>,
    new_source: String,
    edit_mode: Option<NotebookEditMode>,
}

#[derive(Deserialize)]
struct WebFetchInput {
    url: String,
    prompt: String,
}

#[derive(Deserialize)]
struct WebSearchInput {
    query: String,
    #[serde(default, deserialize_with = "list")]
    allowed_domains: Vec<String>,
    #[serde(default, deserialize_with = "list")]
    blocked_domains: Vec<String>,
}

/// Codex's command approval (`codex_server::command_permission`): the command line.
#[derive(Deserialize)]
struct ShellInput {
    command: String,
}

/// Codex's file-change approval (`codex_server::file_change_permission`).
#[derive(Deserialize)]
struct PatchInput {
    file_path: String,
    diff: String,
}

fn read<'a, T: Deserialize<'a>>(input: &'a Value) -> Option<T> {
    // Only objects: serde would also read a struct from an array of its fields in order.
    input.as_object()?;
    T::deserialize(input).ok()
}

impl ToolCall {
    /// The call `request` asks to make, read in its agent's own terms: OpenCode's permission
    /// kinds and metadata ([`opencode::tool_call`]), else Claude Code's and Codex's tools.
    pub fn of(request: &PermissionRequest) -> ToolCall {
        match request.origin {
            ApprovalOrigin::OpenCode => opencode::tool_call(&request.tool_name, &request.input),
            ApprovalOrigin::Hosted | ApprovalOrigin::Hook => {
                ToolCall::parse(&request.tool_name, &request.input)
            }
        }
    }

    /// Types `input` as the tool `name` takes it; [`ToolCall::Other`] when it does not fit.
    pub fn parse(name: &str, input: &Value) -> ToolCall {
        Self::typed(name, input)
            .unwrap_or_else(|| ToolCall::Other { name: name.to_owned(), input: input.clone() })
    }

    fn typed(name: &str, input: &Value) -> Option<ToolCall> {
        Some(match name {
            "Bash" => {
                let BashInput { command, description, timeout, run_in_background } = read(input)?;
                ToolCall::Bash { command, description, timeout, run_in_background }
            }
            COMMAND_TOOL => {
                let ShellInput { command } = read(input)?;
                ToolCall::Bash {
                    command,
                    description: None,
                    timeout: None,
                    run_in_background: false,
                }
            }
            // Claude Code's Edit; Codex's file change has the same name and a diff instead.
            FILE_CHANGE_TOOL => match read::<EditInput>(input) {
                Some(EditInput { file_path, old_string, new_string, replace_all }) => {
                    ToolCall::Edit { file_path, old_string, new_string, replace_all }
                }
                None => {
                    let PatchInput { file_path, diff } = read(input)?;
                    ToolCall::Patch { files: file_path, diff }
                }
            },
            "MultiEdit" => {
                let MultiEditInput { file_path, edits } = read(input)?;
                ToolCall::MultiEdit { file_path, edits }
            }
            "Write" => {
                let WriteInput { file_path, content } = read(input)?;
                ToolCall::Write { file_path, content }
            }
            "NotebookEdit" => {
                let NotebookEditInput { notebook_path, cell_id, new_source, edit_mode } =
                    read(input)?;
                let edit_mode = edit_mode.unwrap_or_default();
                ToolCall::NotebookEdit { notebook_path, cell_id, new_source, edit_mode }
            }
            "WebFetch" => {
                let WebFetchInput { url, prompt } = read(input)?;
                ToolCall::WebFetch { url, prompt: Some(prompt) }
            }
            "WebSearch" => {
                let WebSearchInput { query, allowed_domains, blocked_domains } = read(input)?;
                ToolCall::WebSearch { query, allowed_domains, blocked_domains }
            }
            _ => {
                let (server, tool) = name.strip_prefix("mcp__")?.split_once("__")?;
                if server.is_empty() || tool.is_empty() {
                    return None;
                }
                let (server, tool) = (server.to_owned(), tool.to_owned());
                ToolCall::Mcp { server, tool, arguments: input.clone() }
            }
        })
    }

    /// The file whose current text the card needs to show the change against: an Edit's,
    /// MultiEdit's or Write's file, a NotebookEdit's notebook.
    pub fn file_to_read(&self) -> Option<&str> {
        match self {
            ToolCall::Edit { file_path, .. }
            | ToolCall::MultiEdit { file_path, .. }
            | ToolCall::Write { file_path, .. } => Some(file_path),
            ToolCall::NotebookEdit { notebook_path, .. } => Some(notebook_path),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_mcp_name_splits_into_server_and_tool_at_the_first_separator() {
        let call = ToolCall::parse("mcp__github__create_pull__request", &json!({"a": 1}));
        assert_eq!(
            call,
            ToolCall::Mcp {
                server: "github".into(),
                tool: "create_pull__request".into(),
                arguments: json!({"a": 1})
            }
        );
        for name in ["mcp__", "mcp____tool", "mcp__server__", "mcp__server"] {
            assert!(matches!(ToolCall::parse(name, &json!({})), ToolCall::Other { .. }), "{name}");
        }
    }

    #[test]
    fn an_array_in_the_shape_of_the_fields_is_not_read_as_them() {
        let call = ToolCall::parse("Write", &json!(["/tmp/a", "text"]));
        assert!(matches!(call, ToolCall::Other { .. }), "{call:?}");
    }
}
