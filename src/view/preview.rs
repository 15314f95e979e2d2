//! The preview pane: an option's `preview` as markdown in a monospace box, scrollable both ways.
//!
//! Agents send two kinds of preview: markdown (fenced code, tables) and bare ASCII mockups. A
//! markdown renderer folds a mockup's line breaks into spaces and strips its indentation, so text
//! with no markdown in it is shown verbatim, and markdown gets its line breaks kept.

use egui::{Frame, Label, RichText, ScrollArea, TextStyle, Ui};
use egui_commonmark::{CommonMarkCache, CommonMarkViewer};

use crate::theme::{Tokens, size};

/// How a preview is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreviewKind {
    /// Plain text, character for character (ASCII mockups, diagrams).
    Verbatim,
    /// Markdown, with every line break kept.
    Markdown,
}

/// Decides whether a preview uses markdown at all.
pub fn classify(text: &str) -> PreviewKind {
    let markdown_line = |line: &str| {
        let line = line.trim_start();
        line.starts_with("```")
            || line.starts_with("~~~")
            || line.starts_with("# ")
            || line.starts_with("## ")
            || line.starts_with("### ")
            || line.starts_with("- ")
            || line.starts_with("* ")
            || line.starts_with("> ")
            || is_table_delimiter(line)
            || line.contains("**")
            || line.contains('`')
            || line.contains("](")
    };
    match text.lines().any(markdown_line) {
        true => PreviewKind::Markdown,
        false => PreviewKind::Verbatim,
    }
}

/// `|---|:--:|` and `--- | ---`: the line that makes the one above it a table header. Every cell
/// must be dashes with optional colons; a mockup's `|-----|     |` (a blank cell) is not one.
fn is_table_delimiter(line: &str) -> bool {
    let line = line.trim();
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    line.contains('|')
        && inner.split('|').all(|cell| {
            let cell = cell.trim();
            let dashes = cell.trim_start_matches(':').trim_end_matches(':');
            !dashes.is_empty() && dashes.chars().all(|c| c == '-')
        })
}

/// Turns every line break outside fenced code into a hard break, as a terminal would show it.
pub fn keep_line_breaks(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            out.push_str(line);
        } else if in_fence || line.trim().is_empty() || is_table_delimiter(trimmed) {
            out.push_str(line);
        } else {
            out.push_str(line.trim_end());
            out.push_str("  ");
        }
        out.push('\n');
    }
    out
}

/// Draws the preview of `label` with its Copy button. `id_salt` keeps its scroll position apart
/// from other previews.
pub fn preview_ui(
    ui: &mut Ui,
    id_salt: impl egui::AsIdSalt,
    label: &str,
    text: &str,
    markdown: &mut CommonMarkCache,
) {
    let tokens = Tokens::of(ui.ctx());
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("Preview · {label}")).color(tokens.muted));
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui.small_button("Copy").on_hover_text("Copy the preview text").clicked() {
                ui.ctx().copy_text(text.to_owned());
            }
        });
    });
    Frame::new()
        .fill(tokens.code_fill)
        .stroke(egui::Stroke::new(1.0, tokens.code_stroke))
        .corner_radius(size::RADIUS)
        .inner_margin(10)
        .show(ui, |ui| {
            ScrollArea::both().id_salt(id_salt).auto_shrink([false, false]).show(ui, |ui| {
                preview_body(ui, text, markdown);
            });
        });
}

/// The preview content without its frame (also used collapsed under multi-select options).
pub fn preview_body(ui: &mut Ui, text: &str, markdown: &mut CommonMarkCache) {
    match classify(text) {
        PreviewKind::Verbatim => {
            ui.add(Label::new(RichText::new(text).monospace()).extend().selectable(true));
        }
        PreviewKind::Markdown => {
            // A monospace box, like the terminal the agent expects: body text in monospace too.
            let monospace = TextStyle::Monospace.resolve(ui.style());
            // Wide enough for the longest line: long lines scroll sideways, as in a terminal,
            // instead of wrapping out of shape.
            let longest = text.lines().map(|line| line.chars().count()).max().unwrap_or(0);
            let glyph = ui.fonts_mut(|fonts| fonts.glyph_width(&monospace, 'M'));
            ui.set_width(ui.available_width().max(longest as f32 * glyph + 40.0));
            ui.style_mut().text_styles.insert(TextStyle::Body, monospace);
            CommonMarkViewer::new().show(ui, markdown, &keep_line_breaks(text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_mockups_are_verbatim_and_markdown_is_markdown() {
        let mockup = "+--------+------+\n| Nav    | Body |\n| - A    |      |\n+--------+------+";
        assert_eq!(classify(mockup), PreviewKind::Verbatim);
        let sidebar = "+----+------+\n| a  |  Q?  |\n|----|      |\n| >b |  ( ) |\n+----+------+";
        assert_eq!(
            classify(sidebar),
            PreviewKind::Verbatim,
            "a blank cell is not a table delimiter"
        );
        assert_eq!(classify("```rust\nfn main() {}\n```"), PreviewKind::Markdown);
        assert_eq!(classify("| a | b |\n|---|---|\n| 1 | 2 |"), PreviewKind::Markdown);
        assert_eq!(classify("# Title\ntext"), PreviewKind::Markdown);
    }

    #[test]
    fn line_breaks_become_hard_outside_fences_only() {
        let text = "one\ntwo\n\n```\ncode  \nmore\n```\n| a |\n|---|";
        assert_eq!(
            keep_line_breaks(text),
            "one  \ntwo  \n\n```\ncode  \nmore\n```\n| a |  \n|---|\n"
        );
    }
}
