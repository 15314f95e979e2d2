//! The preview pane: an option's `preview` in a monospace box, scrollable both ways.
//!
//! Agents send two kinds of preview: bare ASCII mockups and markdown (fenced code, tables). A
//! markdown renderer folds a mockup's line breaks into spaces, strips its indentation and reads
//! its `|-----|` rows as table rules, so only fenced code or clearly-markdown text is rendered as
//! markdown; everything else, box drawing above all, is shown verbatim, character for character.

use egui::{Frame, Id, Label, RichText, ScrollArea, TextStyle, Ui, vec2};
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

/// Where the keyboard leaves a PageUp/PageDown for the preview showing: pages to scroll down
/// (negative: up).
pub fn preview_scroll_id() -> Id {
    Id::unique("askpane-preview-scroll")
}

/// Decides whether a preview uses markdown at all.
pub fn classify(text: &str) -> PreviewKind {
    let mut in_fence = false;
    let mut fenced = false;
    let mut outside = Vec::new();
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            fenced = true;
        } else if !in_fence {
            outside.push(line);
        }
    }
    // A mockup drawn outside fences must keep its shape, whatever else the text holds.
    if outside.iter().any(|line| is_box_drawing(line)) {
        return PreviewKind::Verbatim;
    }
    let markdown =
        fenced || has_table(&outside) || outside.iter().any(|line| is_markdown_line(line));
    match markdown {
        true => PreviewKind::Markdown,
        false => PreviewKind::Verbatim,
    }
}

fn is_fence(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("```") || line.starts_with("~~~")
}

/// A line of an ASCII or Unicode box: `+----+`, `|------|` (a rule inside a box), `╔══╗`.
fn is_box_drawing(line: &str) -> bool {
    let trimmed = line.trim();
    let rule_inside_a_box = trimmed.len() > 4
        && trimmed.starts_with('|')
        && trimmed.ends_with('|')
        && trimmed[1..trimmed.len() - 1].chars().all(|c| matches!(c, '-' | '='));
    trimmed.contains("+-")
        || trimmed.contains("-+")
        || trimmed.contains("+=")
        || rule_inside_a_box
        || trimmed.chars().any(|c| ('\u{2500}'..='\u{259F}').contains(&c))
}

/// A line only markdown would write: a heading, a list item, a quote, emphasis, code, a link.
fn is_markdown_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    let heading = trimmed.trim_start_matches('#');
    let hashes = trimmed.len() - heading.len();
    let numbered = trimmed.split_once(". ").is_some_and(|(number, _)| {
        !number.is_empty() && number.len() <= 3 && number.chars().all(|c| c.is_ascii_digit())
    });
    (1..=6).contains(&hashes) && heading.starts_with(' ')
        || trimmed.starts_with("- ")
        || trimmed.starts_with("* ")
        || trimmed.starts_with("> ")
        || numbered
        || line.contains("**")
        || line.contains('`')
        || line.contains("](")
}

/// A markdown table: a header row, then a delimiter row of as many cells (`|---|:--:|`).
fn has_table(lines: &[&str]) -> bool {
    lines.windows(2).any(|pair| {
        let &[header, delimiter] = pair else { return false };
        header.contains('|')
            && is_table_delimiter(delimiter)
            && cells(header).count() == cells(delimiter).count()
            && cells(delimiter).count() >= 2
    })
}

/// The cells of a table row, without the outer pipes.
fn cells(line: &str) -> impl Iterator<Item = &str> {
    let line = line.trim();
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|')
}

/// `|---|:--:|` and `--- | ---`: every cell dashes with optional colons; a mockup's
/// `|-----|     |` (a blank cell) is not one.
fn is_table_delimiter(line: &str) -> bool {
    line.contains('|')
        && cells(line).all(|cell| {
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
    // A long label is cut, never the Copy button.
    egui::Sides::new().shrink_left().truncate().show(
        ui,
        |ui| ui.label(RichText::new(format!("Preview · {label}")).color(tokens.muted)),
        |ui| {
            if super::small_button(ui, "Copy").on_hover_text("Copy the preview text").clicked() {
                ui.ctx().copy_text(text.to_owned());
            }
        },
    );
    Frame::new()
        .fill(tokens.code_fill)
        .stroke(egui::Stroke::new(1.0, tokens.code_stroke))
        .corner_radius(size::RADIUS)
        .inner_margin(10)
        .show(ui, |ui| {
            ScrollArea::both().id_salt(id_salt).auto_shrink([false, false]).show(ui, |ui| {
                // PageUp / PageDown from the keyboard: most of a page at a time.
                let pages = ui.data_mut(|data| data.remove_temp::<f32>(preview_scroll_id()));
                if let Some(pages) = pages {
                    let page = ui.clip_rect().height() * 0.9;
                    ui.scroll_with_delta(vec2(0.0, -pages * page));
                }
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
    fn box_drawing_is_never_a_table() {
        let wizard =
            "+------------+\n|  Step 1    |\n|------------|\n|  ( ) A     |\n+------------+";
        assert_eq!(classify(wizard), PreviewKind::Verbatim);
        let rule_only = "| Name | Body |\n|------|------|\n| a    | b    |\n+------+------+";
        assert_eq!(classify(rule_only), PreviewKind::Verbatim, "a box with a rule row");
        let unicode = "╔════╗\n║ ok ║\n╚════╝";
        assert_eq!(classify(unicode), PreviewKind::Verbatim);
        let plain = "  ( ) Option A\n  (x) Option B\n  [ Cancel ]  [ Next ]";
        assert_eq!(classify(plain), PreviewKind::Verbatim);
        let fenced_mockup = "```\n+--+\n|  |\n+--+\n```";
        assert_eq!(classify(fenced_mockup), PreviewKind::Markdown, "fenced: shown as code");
        assert_eq!(classify("1. First\n2. Second"), PreviewKind::Markdown);
        assert_eq!(classify("#hashtag is not a heading"), PreviewKind::Verbatim);
    }

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
