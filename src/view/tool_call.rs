//! The body of an approval card (issue 26): the tool call shown the way a person checks it. A
//! command in a monospace block with its description and folder; a file change as a numbered,
//! coloured diff; a fetch's URL and prompt; a search's query and domains; an MCP call's server,
//! tool and arguments as a tree; anything else as its JSON.
//!
//! It draws a [`ToolCallView`] prepared when the card arrived (`book::tool_call`): its text is
//! already inert and bounded, so a frame only lays out what is visible. However large, the body
//! scrolls inside its own box, so the card's buttons stay on screen.

use egui::{CollapsingHeader, Frame, Label, RichText, ScrollArea, TextStyle, Ui};

use crate::book::diff::{Diff, LineKind};
use crate::book::tool_call::{Shown, ToolCallView, TreeNode, TreeValue};
use crate::view::theme::{Tokens, size};

/// The tallest a body's box grows, and the least it gets on a short window.
const MAX_BODY_HEIGHT: f32 = 360.0;
const MIN_BODY_HEIGHT: f32 = 72.0;
/// Room kept under the body for the card's own controls (the deny message and the buttons).
const CONTROLS_HEIGHT: f32 = 120.0;

/// The card's body for one tool call.
pub fn tool_call_ui(ui: &mut Ui, view: &ToolCallView) {
    let tokens = Tokens::of(ui.ctx());
    let height = (ui.available_height() - CONTROLS_HEIGHT).clamp(MIN_BODY_HEIGHT, MAX_BODY_HEIGHT);
    match view {
        ToolCallView::Command { command, description, cwd, timeout, background } => {
            if let Some(description) = description {
                shown_ui(ui, description, tokens.muted);
            }
            block_ui(ui, command, height);
            let mut facts = Vec::new();
            if let Some(cwd) = cwd {
                facts.push(format!("in {}", cwd.text));
            }
            if let Some(timeout) = timeout {
                facts.push(format!("timeout {}", duration(*timeout)));
            }
            if *background {
                facts.push("runs in the background".to_owned());
            }
            if !facts.is_empty() {
                let facts = RichText::new(facts.join(" · ")).small().color(tokens.muted);
                ui.add(Label::new(facts).wrap());
            }
        }
        ToolCallView::Change { tool, path, diff, notes } => {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(&tool.text).strong());
                ui.add(Label::new(RichText::new(&path.text).monospace()).wrap());
            });
            for note in notes {
                ui.add(Label::new(RichText::new(note).color(tokens.warning)).wrap());
            }
            diff_ui(ui, diff, height);
        }
        ToolCallView::Fetch { url, prompt } => {
            field_ui(ui, "URL", url);
            if let Some(prompt) = prompt {
                ui.label(RichText::new("Prompt").small().color(tokens.muted));
                block_ui(ui, prompt, height);
            }
        }
        ToolCallView::Search { query, allowed, blocked } => {
            field_ui(ui, "Search", query);
            for (label, domains) in [("Only", allowed), ("Never", blocked)] {
                if !domains.is_empty() {
                    let list: Vec<&str> =
                        domains.iter().map(|domain| domain.text.as_str()).collect();
                    let text = format!("{label}: {}", list.join(", "));
                    ui.add(Label::new(RichText::new(text).monospace()).wrap());
                }
            }
        }
        ToolCallView::Mcp { server, tool, arguments, more_nodes } => {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("MCP").small().color(tokens.muted));
                ui.label(RichText::new(&server.text).strong());
                ui.label(RichText::new("·").color(tokens.muted));
                ui.label(RichText::new(&tool.text).monospace());
            });
            code_frame(ui, |ui| {
                ScrollArea::both().max_height(height).auto_shrink([false, true]).show(ui, |ui| {
                    if arguments.is_empty() {
                        ui.label(RichText::new("No arguments").color(tokens.muted));
                    }
                    tree_ui(ui, arguments, 0);
                    if *more_nodes > 0 {
                        more_ui(ui, &format!("… {more_nodes} more entries not shown"));
                    }
                });
            });
        }
        ToolCallView::Other { name, json } => {
            ui.label(RichText::new(&name.text).strong());
            block_ui(ui, json, height);
        }
    }
}

/// A one-line field: its name, then its text.
fn field_ui(ui: &mut Ui, name: &str, shown: &Shown) {
    let tokens = Tokens::of(ui.ctx());
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(name).small().color(tokens.muted));
        ui.add(Label::new(RichText::new(&shown.text).monospace()).wrap());
    });
    if shown.cut > 0 {
        more_ui(ui, &format!("… {} more characters not shown", shown.cut));
    }
}

/// Inert text in a colour, wrapped, and what was cut.
fn shown_ui(ui: &mut Ui, shown: &Shown, colour: egui::Color32) {
    ui.add(Label::new(RichText::new(&shown.text).color(colour)).wrap());
    if shown.cut > 0 {
        more_ui(ui, &format!("… {} more characters not shown", shown.cut));
    }
}

/// Says what the card leaves out, so nobody allows what they were not shown believing it whole.
fn more_ui(ui: &mut Ui, text: &str) {
    let tokens = Tokens::of(ui.ctx());
    ui.label(RichText::new(text).small().color(tokens.warning));
}

fn code_frame(ui: &mut Ui, add_contents: impl FnOnce(&mut Ui)) {
    let tokens = Tokens::of(ui.ctx());
    Frame::new()
        .fill(tokens.code_fill)
        .stroke(egui::Stroke::new(1.0, tokens.code_stroke))
        .corner_radius(size::RADIUS)
        .inner_margin(6)
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            add_contents(ui);
        });
}

/// A command, a prompt, JSON: monospace, wrapped, selectable, scrolling past `height`.
fn block_ui(ui: &mut Ui, shown: &Shown, height: f32) {
    code_frame(ui, |ui| {
        ScrollArea::vertical().max_height(height).auto_shrink([false, true]).show(ui, |ui| {
            ui.add(Label::new(RichText::new(&shown.text).monospace()).wrap().selectable(true));
        });
    });
    if shown.cut > 0 {
        more_ui(ui, &format!("… {} more characters not shown", shown.cut));
    }
}

/// A diff: one row per line (only the visible rows are laid out), numbered where it was placed
/// in the file, added and removed lines in the theme's diff colours.
fn diff_ui(ui: &mut Ui, diff: &Diff, height: f32) {
    let tokens = Tokens::of(ui.ctx());
    if diff.is_empty() {
        ui.label(RichText::new("No change").color(tokens.muted));
        return;
    }
    let summary = format!("+{} −{}", diff.added, diff.removed);
    ui.label(RichText::new(summary).small().color(tokens.muted));
    let widest = diff.lines.iter().flat_map(|line| [line.old, line.new]).flatten().max();
    let digits = widest.map(|number| number.to_string().len());
    let row_height = ui.text_style_height(&TextStyle::Monospace);
    code_frame(ui, |ui| {
        ScrollArea::both().max_height(height).auto_shrink([false, true]).show_rows(
            ui,
            row_height,
            diff.lines.len(),
            |ui, rows| {
                for line in diff.lines.get(rows).unwrap_or_default() {
                    let number = |number: Option<usize>, width: usize| match number {
                        Some(number) => format!("{number:>width$} "),
                        None => " ".repeat(width + 1),
                    };
                    let gutter = match digits {
                        Some(width) => number(line.old, width) + &number(line.new, width),
                        None => String::new(),
                    };
                    let mut text = format!("{gutter}{}{}", line.kind.mark(), line.text);
                    if line.cut > 0 {
                        text.push_str(&format!(" … ({} more characters)", line.cut));
                    }
                    let text = RichText::new(text).monospace();
                    let text = match line.kind {
                        LineKind::Added => text.color(tokens.diff_added),
                        LineKind::Removed => text.color(tokens.diff_removed),
                        LineKind::Header => text.color(tokens.muted),
                        LineKind::Context => text,
                    };
                    ui.add(Label::new(text).extend());
                }
            },
        );
    });
    if diff.more_lines > 0 {
        more_ui(ui, &format!("… {} more lines not shown", diff.more_lines));
    }
}

/// An MCP call's arguments: objects and lists fold, the first two levels open.
fn tree_ui(ui: &mut Ui, nodes: &[TreeNode], depth: usize) {
    let tokens = Tokens::of(ui.ctx());
    for (index, node) in nodes.iter().enumerate() {
        match &node.value {
            TreeValue::Branch(children) => {
                let title = format!("{} ({})", node.key.text, children.len());
                CollapsingHeader::new(RichText::new(title).monospace())
                    .id_salt(("askpane-mcp-argument", depth, index))
                    .default_open(depth < 2)
                    .show(ui, |ui| tree_ui(ui, children, depth + 1));
            }
            TreeValue::Leaf(value) => {
                ui.horizontal_wrapped(|ui| {
                    ui.label(
                        RichText::new(format!("{}:", node.key.text))
                            .monospace()
                            .color(tokens.muted),
                    );
                    ui.add(Label::new(RichText::new(&value.text).monospace()).wrap());
                });
                if value.cut > 0 {
                    more_ui(ui, &format!("… {} more characters not shown", value.cut));
                }
            }
        }
    }
}

/// Milliseconds as a person reads them: `2 min`, `45 s`, `800 ms`.
fn duration(milliseconds: u64) -> String {
    match milliseconds {
        ms if ms >= 60_000 && ms % 60_000 == 0 => format!("{} min", ms / 60_000),
        ms if ms >= 1_000 && ms % 1_000 == 0 => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}
