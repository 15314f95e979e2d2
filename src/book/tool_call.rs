//! What an approval card shows of its tool call (issue 26), prepared once when the card arrives:
//! the typed call ([`ToolCall`]) with its diff against the file on disk computed, every text made
//! inert (escapes and bidi overrides written out, `protocol::text::reveal_controls`) and bounded,
//! so that drawing it each frame is only drawing.

use serde_json::Value;

use super::diff::{Diff, Numbering};
use crate::protocol::stream::PermissionRequest;
use crate::protocol::text::{Breaks, reveal_controls};
use crate::protocol::tool_call::{FileSnapshot, NotebookEditMode, StringEdit, ToolCall};

/// Characters of a command, a prompt or a JSON body kept for the card.
pub const MAX_BLOCK_CHARS: usize = 50_000;
/// Characters of a path, a URL, a description or one value of an MCP call's arguments.
pub const MAX_LINE_CHARS: usize = 2_000;
/// Entries of an MCP call's arguments shown as a tree; the rest are counted.
pub const MAX_TREE_NODES: usize = 1_000;
/// Nesting shown as a tree; deeper values are shown as their JSON.
const MAX_TREE_DEPTH: usize = 16;

/// Text drawn as it is, inert and bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    pub text: String,
    /// Characters not kept.
    pub cut: usize,
}

impl Shown {
    fn new(text: &str, limit: usize, breaks: Breaks) -> Shown {
        let kept: String = text.chars().take(limit).collect();
        let cut = text.chars().count().saturating_sub(limit);
        Shown { text: reveal_controls(&kept, breaks).into_owned(), cut }
    }

    /// A path, a URL: one line.
    fn line(text: &str) -> Shown {
        Shown::new(text, MAX_LINE_CHARS, Breaks::Reveal)
    }

    /// A command, a prompt: lines kept.
    fn block(text: &str) -> Shown {
        Shown::new(text, MAX_BLOCK_CHARS, Breaks::Keep)
    }
}

/// One entry of an MCP call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// The key (`"path"`), or the index in a list (`"[0]"`).
    pub key: Shown,
    pub value: TreeValue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeValue {
    /// A string, number, boolean or null, as JSON would write it (strings without quotes).
    Leaf(Shown),
    /// An object's or a list's entries.
    Branch(Vec<TreeNode>),
}

/// The card's body, by what the call does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolCallView {
    /// A shell command.
    Command {
        command: Shown,
        description: Option<Shown>,
        cwd: Option<Shown>,
        /// Milliseconds.
        timeout: Option<u64>,
        background: bool,
    },
    /// A change to a file: its path, the diff, and what to know about how it was made (the file
    /// could not be read, the text to replace is not in it, …).
    Change {
        tool: Shown,
        path: Shown,
        diff: Diff,
        notes: Vec<String>,
    },
    Fetch {
        url: Shown,
        prompt: Option<Shown>,
    },
    Search {
        query: Shown,
        allowed: Vec<Shown>,
        blocked: Vec<Shown>,
    },
    Mcp {
        server: Shown,
        tool: Shown,
        arguments: Vec<TreeNode>,
        more_nodes: usize,
    },
    /// Anything else: its name and pretty JSON.
    Other {
        name: Shown,
        json: Shown,
    },
}

impl ToolCallView {
    /// The card's body for `request`, against the file it read (`request.on_disk`).
    pub fn of(request: &PermissionRequest) -> ToolCallView {
        let call = ToolCall::of(request);
        let on_disk = request.on_disk.as_ref();
        let tool = Shown::line(&request.tool_name);
        match call {
            ToolCall::Bash { command, description, timeout, run_in_background } => {
                ToolCallView::Command {
                    command: Shown::block(&command),
                    description: description.as_deref().map(Shown::block),
                    cwd: request.cwd.as_deref().map(Shown::line),
                    timeout,
                    background: run_in_background,
                }
            }
            ToolCall::Edit { file_path, old_string, new_string, replace_all } => {
                let edit = StringEdit { old_string, new_string, replace_all };
                let (diff, notes) = edits(std::slice::from_ref(&edit), on_disk);
                ToolCallView::Change { tool, path: Shown::line(&file_path), diff, notes }
            }
            ToolCall::MultiEdit { file_path, edits: list } => {
                let (diff, notes) = edits(&list, on_disk);
                ToolCallView::Change { tool, path: Shown::line(&file_path), diff, notes }
            }
            ToolCall::Write { file_path, content } => {
                let (diff, notes) = write(&content, on_disk);
                ToolCallView::Change { tool, path: Shown::line(&file_path), diff, notes }
            }
            ToolCall::NotebookEdit { notebook_path, cell_id, new_source, edit_mode } => {
                let (diff, notes) = notebook(cell_id.as_deref(), &new_source, edit_mode, on_disk);
                ToolCallView::Change { tool, path: Shown::line(&notebook_path), diff, notes }
            }
            ToolCall::Patch { files, diff } => ToolCallView::Change {
                tool,
                path: Shown::line(&files),
                diff: Diff::from_unified(&diff),
                notes: Vec::new(),
            },
            ToolCall::WebFetch { url, prompt } => {
                let prompt = prompt.as_deref().map(Shown::block);
                ToolCallView::Fetch { url: Shown::line(&url), prompt }
            }
            ToolCall::WebSearch { query, allowed_domains, blocked_domains } => {
                ToolCallView::Search {
                    query: Shown::line(&query),
                    allowed: allowed_domains.iter().map(|domain| Shown::line(domain)).collect(),
                    blocked: blocked_domains.iter().map(|domain| Shown::line(domain)).collect(),
                }
            }
            ToolCall::Mcp { server, tool, arguments } => {
                let mut budget = MAX_TREE_NODES;
                let mut more_nodes = 0;
                let arguments = match &arguments {
                    Value::Object(_) | Value::Array(_) => {
                        entries(&arguments, 0, &mut budget, &mut more_nodes)
                    }
                    scalar => vec![TreeNode {
                        key: Shown::line("arguments"),
                        value: TreeValue::Leaf(leaf(scalar)),
                    }],
                };
                let (server, tool) = (Shown::line(&server), Shown::line(&tool));
                ToolCallView::Mcp { server, tool, arguments, more_nodes }
            }
            ToolCall::Other { name, input } => ToolCallView::Other {
                name: Shown::line(&name),
                json: Shown::block(&serde_json::to_string_pretty(&input).unwrap_or_default()),
            },
        }
    }
}

/// What the card says about a file it could not read.
fn unread(on_disk: Option<&FileSnapshot>) -> Option<String> {
    match on_disk {
        None => Some(
            "The file on disk was not read: the change is shown without its place in \
                      the file."
                .to_owned(),
        ),
        Some(FileSnapshot::Missing { path }) => {
            Some(format!("There is no file at {}.", reveal_controls(path, Breaks::Reveal)))
        }
        Some(FileSnapshot::Unreadable { reason, .. }) => {
            Some(format!("Could not read the file: {}", reveal_controls(reason, Breaks::Reveal)))
        }
        Some(FileSnapshot::Text { .. }) => None,
    }
}

/// Edits (one for an Edit) applied to the file on disk in turn: the diff of the whole file,
/// numbered. When the file is not there to apply them to, or an edit's text is not in it, each
/// edit is shown as its two strings alone.
fn edits(edits: &[StringEdit], on_disk: Option<&FileSnapshot>) -> (Diff, Vec<String>) {
    let mut notes = Vec::new();
    if let Some(FileSnapshot::Text { text, .. }) = on_disk {
        match apply(text, edits) {
            Ok((edited, warnings)) => {
                notes.extend(warnings);
                let diff = Diff::between(text, &edited, Numbering::File);
                if diff.is_empty() {
                    notes.push("The edit leaves the file as it is.".to_owned());
                }
                return (diff, notes);
            }
            Err(problem) => {
                notes.push(format!("{problem}: the change is shown as its text alone."))
            }
        }
    }
    notes.extend(unread(on_disk));
    let mut diff = Diff::default();
    for (number, edit) in edits.iter().enumerate() {
        if edits.len() > 1 {
            diff.push_header(format!("Edit {} of {}", number + 1, edits.len()));
        }
        diff.append(&edit.old_string, &edit.new_string, Numbering::None);
    }
    (diff, notes)
}

/// `text` with `edits` applied as Claude Code applies them (each to the result of the one
/// before), and what to warn about; or why they cannot be.
fn apply(text: &str, edits: &[StringEdit]) -> Result<(String, Vec<String>), String> {
    let mut edited = text.to_owned();
    let mut warnings = Vec::new();
    for (number, edit) in edits.iter().enumerate() {
        let which = match edits.len() {
            1 => String::new(),
            _ => format!(" of edit {}", number + 1),
        };
        if edit.old_string.is_empty() {
            return Err(format!("The text to replace{which} is empty"));
        }
        let found = edited.matches(edit.old_string.as_str()).count();
        if found == 0 {
            return Err(format!("The text to replace{which} is not in the file on disk"));
        }
        edited = match edit.replace_all {
            true => edited.replace(&edit.old_string, &edit.new_string),
            false => {
                if found > 1 {
                    warnings.push(format!(
                        "The text to replace{which} is in the file {found} times; only the \
                         first is shown changed (Claude Code refuses an edit that is not unique)."
                    ));
                }
                edited.replacen(&edit.old_string, &edit.new_string, 1)
            }
        };
    }
    Ok((edited, warnings))
}

/// A Write against the file on disk; a new file, or one that could not be read, as all added
/// lines.
fn write(content: &str, on_disk: Option<&FileSnapshot>) -> (Diff, Vec<String>) {
    match on_disk {
        Some(FileSnapshot::Text { text, .. }) => {
            let diff = Diff::between(text, content, Numbering::File);
            let notes = match diff.is_empty() {
                true => vec!["The file already has exactly this content.".to_owned()],
                false => Vec::new(),
            };
            (diff, notes)
        }
        Some(FileSnapshot::Missing { .. }) => {
            (Diff::between("", content, Numbering::File), vec!["A new file.".to_owned()])
        }
        _ => (Diff::between("", content, Numbering::None), unread(on_disk).into_iter().collect()),
    }
}

/// A cell's source, which a notebook writes as a string or a list of lines.
fn cell_source(cell: &Value) -> Option<String> {
    match cell.get("source")? {
        Value::String(source) => Some(source.clone()),
        Value::Array(lines) => lines.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// A NotebookEdit against its cell in the notebook on disk.
fn notebook(
    cell_id: Option<&str>,
    new_source: &str,
    mode: NotebookEditMode,
    on_disk: Option<&FileSnapshot>,
) -> (Diff, Vec<String>) {
    let shown_id = cell_id.map(|id| reveal_controls(id, Breaks::Reveal).into_owned());
    let mut notes = vec![match (mode, &shown_id) {
        (NotebookEditMode::Replace, Some(id)) => format!("Replaces the source of cell {id}."),
        (NotebookEditMode::Insert, Some(id)) => format!("Inserts a new cell after cell {id}."),
        (NotebookEditMode::Delete, Some(id)) => format!("Deletes cell {id}."),
        (NotebookEditMode::Insert, None) => "Inserts a new cell at the start.".to_owned(),
        (_, None) => "Names no cell.".to_owned(),
    }];
    let old_source = match (on_disk, cell_id) {
        (Some(FileSnapshot::Text { text, .. }), Some(id)) => {
            let notebook: Option<Value> = serde_json::from_str(text).ok();
            let cells = notebook.as_ref().and_then(|notebook| notebook.get("cells"));
            let cells = cells.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let cell = cells.iter().find(|cell| cell.get("id").and_then(Value::as_str) == Some(id));
            if cell.is_none() {
                notes.push("That cell is not in the notebook on disk.".to_owned());
            }
            cell.and_then(cell_source)
        }
        _ => {
            notes.extend(unread(on_disk));
            None
        }
    };
    let numbering = if old_source.is_some() { Numbering::File } else { Numbering::None };
    let diff = match (mode, old_source) {
        (NotebookEditMode::Insert, _) => Diff::between("", new_source, Numbering::None),
        (NotebookEditMode::Delete, old) => {
            Diff::between(old.as_deref().unwrap_or_default(), "", numbering)
        }
        (NotebookEditMode::Replace, old) => {
            Diff::between(old.as_deref().unwrap_or_default(), new_source, numbering)
        }
    };
    (diff, notes)
}

/// A scalar as a tree's leaf: a string as itself, anything else as its JSON.
fn leaf(value: &Value) -> Shown {
    match value {
        Value::String(text) => Shown::new(text, MAX_LINE_CHARS, Breaks::Keep),
        other => Shown::new(&other.to_string(), MAX_LINE_CHARS, Breaks::Keep),
    }
}

/// An object's or a list's entries as tree nodes, at most `budget` of them in all; the rest are
/// counted in `more`.
fn entries(value: &Value, depth: usize, budget: &mut usize, more: &mut usize) -> Vec<TreeNode> {
    let pairs: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(key, value)| (key.clone(), value)).collect(),
        Value::Array(items) => {
            items.iter().enumerate().map(|(index, value)| (format!("[{index}]"), value)).collect()
        }
        _ => Vec::new(),
    };
    let mut nodes = Vec::new();
    for (key, value) in pairs {
        if *budget == 0 {
            *more += 1;
            continue;
        }
        *budget -= 1;
        let value = match value {
            Value::Object(_) | Value::Array(_) if depth < MAX_TREE_DEPTH => {
                TreeValue::Branch(entries(value, depth + 1, budget, more))
            }
            other => TreeValue::Leaf(leaf(other)),
        };
        nodes.push(TreeNode { key: Shown::line(&key), value });
    }
    nodes
}
