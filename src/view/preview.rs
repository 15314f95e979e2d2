//! The preview pane: an option's `preview` in a monospace box, scrollable both ways.
//!
//! Agents send two kinds of preview: bare ASCII mockups and markdown (fenced code, tables). A
//! markdown renderer folds a mockup's line breaks into spaces, strips its indentation and reads
//! its `|-----|` rows as table rules, so only fenced code or clearly-markdown text is rendered as
//! markdown; everything else, box drawing above all, is shown verbatim, character for character.
//!
//! Verbatim previews are drawn as a terminal draws them (issue 24.25): every character takes the
//! cells of the monospace grid its East Asian Width gives it (a CJK character or an emoji two, a
//! combining mark none), whichever font draws it, so a box drawn around Japanese text closes.
//! Only the lines in view are laid out (issue 24.23): 100 000 lines cost what a screen of them
//! costs. egui_commonmark lays out a whole document every frame, so markdown over
//! [`MARKDOWN_WHOLE_BYTES`] or [`MARKDOWN_WHOLE_LINES`] is cut into blocks, each given to it only
//! when in view; code blocks whose characters Hack does not draw in one cell are drawn on the
//! grid.

use std::ops::Range;
use std::sync::Arc;

use egui::text::{LayoutJob, TextFormat};
use egui::{
    Align, Color32, FontId, Frame, Id, Label, Layout, Rect, RichText, ScrollArea, Sense, TextStyle,
    Ui, UiBuilder, pos2, vec2,
};
use egui_commonmark::{CommonMarkCache, CommonMarkViewer};
use unicode_width::UnicodeWidthChar as _;

use crate::view::theme::{self, Tokens, size};

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
    let prepared = prepared(ui, text);
    // Monospace in the preview's own family: colour emoji, and Thai as large as the rest.
    let font = theme::preview_font();
    ui.style_mut().text_styles.insert(TextStyle::Monospace, font.clone());
    if prepared.shown == Shown::Grid {
        grid_lines_ui(ui, text, &prepared.lines, prepared.widest, &font);
        return;
    }
    // Wide enough for the longest line: long lines scroll sideways, as in a terminal, instead
    // of wrapping out of shape.
    let cell = ui.fonts_mut(|fonts| fonts.glyph_width(&font, ' '));
    ui.set_width(ui.available_width().max(prepared.widest as f32 * cell + 40.0));
    // A monospace box, like the terminal the agent expects: body text and headings in
    // monospace too (and their emoji in colour).
    ui.style_mut().text_styles.insert(TextStyle::Body, font.clone());
    let heading = FontId::new(size::QUESTION, theme::preview_family());
    ui.style_mut().text_styles.insert(TextStyle::Heading, heading);
    match prepared.shown {
        Shown::MarkdownBlocks => blocks_ui(ui, text, &prepared, &font, markdown),
        Shown::Markdown | Shown::Grid => {
            CommonMarkViewer::new().show(ui, markdown, &keep_line_breaks(text));
        }
    }
}

/// Markdown up to this size is laid out whole by egui_commonmark, which lays out every block of
/// a document in every frame (about 2 s for a megabyte, issue 24.23, where a frame has 16 ms);
/// larger markdown is cut into blocks laid out only when in view ([`blocks_of`]).
pub const MARKDOWN_WHOLE_BYTES: usize = 16 * 1024;
pub const MARKDOWN_WHOLE_LINES: usize = 300;

/// Lines per block of a large markdown preview: a few screens, cut where markdown allows.
const BLOCK_LINES: usize = 60;

/// A block over this size is shown as plain text: one paragraph of a megabyte is a galley of a
/// megabyte.
const BLOCK_MAX_BYTES: usize = 32 * 1024;

/// How a preview is drawn, decided once per text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shown {
    /// On the terminal's grid, line by line.
    Grid,
    /// Markdown, laid out whole by egui_commonmark.
    Markdown,
    /// Markdown cut into [`Block`]s, each laid out when in view: large markdown, and markdown
    /// with code blocks that need the grid.
    MarkdownBlocks,
}

/// How a [`Block`] is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    /// By egui_commonmark.
    Markdown,
    /// Too large to format ([`BLOCK_MAX_BYTES`]): as plain text on the grid, saying so.
    Plain,
    /// The lines of a fenced code block with characters that are not one cell of Hack (CJK,
    /// emoji, Thai...), drawn on the grid in a code box, so a box drawn in it closes.
    Code,
}

/// What drawing a preview needs from its whole text, worked out once per text (a megabyte takes
/// milliseconds to scan, a frame has 16).
struct Prepared {
    shown: Shown,
    /// Each line's bytes in the text, without its line break (as `str::lines` splits it).
    lines: Vec<Range<usize>>,
    /// The cells of the widest line.
    widest: usize,
    /// The blocks of [`Shown::MarkdownBlocks`].
    blocks: Vec<Block>,
    /// Each block's height when last shown (an estimate before): where the blocks in view are.
    heights: egui::mutex::Mutex<Vec<f32>>,
}

impl Prepared {
    fn of(text: &str) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let content = line.strip_suffix('\n').unwrap_or(line);
            let content = content.strip_suffix('\r').unwrap_or(content);
            lines.push(start..start + content.len());
            start += line.len();
        }
        let widest = lines
            .iter()
            .filter_map(|range| text.get(range.clone()))
            .map(line_cells)
            .max()
            .unwrap_or(0);
        let shown = match classify(text) {
            PreviewKind::Verbatim => Shown::Grid,
            PreviewKind::Markdown
                if text.len() > MARKDOWN_WHOLE_BYTES || lines.len() > MARKDOWN_WHOLE_LINES =>
            {
                Shown::MarkdownBlocks
            }
            PreviewKind::Markdown => Shown::Markdown,
        };
        // Code blocks with characters the grid must place are drawn by askpane, not
        // egui_commonmark (which lays code out in the fonts' advances): any markdown with one is
        // drawn in blocks.
        let mut blocks = match shown {
            Shown::Grid => Vec::new(),
            _ => blocks_of(text, &lines),
        };
        let shown = match shown {
            Shown::Markdown if blocks.iter().any(|block| block.kind == BlockKind::Code) => {
                Shown::MarkdownBlocks
            }
            Shown::Markdown => {
                blocks.clear();
                Shown::Markdown
            }
            other => other,
        };
        let heights = blocks.iter().map(Block::estimated_height).collect();
        Prepared { shown, lines, widest, blocks, heights: egui::mutex::Mutex::new(heights) }
    }
}

/// A piece of a large markdown preview laid out on its own: the preview's lines `lines`, after
/// the lines `repeated` (a cut table's header, a cut code block's opening fence) and before a
/// closing fence when it cuts a code block.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Block {
    repeated: Range<usize>,
    lines: Range<usize>,
    /// The opening fence of the code block this block cuts, which a closing fence must match.
    fence: Option<usize>,
    kind: BlockKind,
}

impl Block {
    fn whole(lines: Range<usize>) -> Self {
        Block { repeated: 0..0, lines, fence: None, kind: BlockKind::Markdown }
    }

    /// The height the block is taken to have before it is shown: a line of text per line.
    fn estimated_height(&self) -> f32 {
        let lines = self.repeated.len() + self.lines.len() + usize::from(self.fence.is_some());
        lines as f32 * 18.0
    }
}

/// Cuts markdown into blocks of about [`BLOCK_LINES`] where a top-level block of markdown
/// starts: before a fence at the start of a line and after its end, before a line at the start
/// of a line after a blank one. Longer code blocks are cut into code blocks, tables into tables
/// that repeat the header, lists at their items, other text at a line that starts at its start.
fn blocks_of(text: &str, lines: &[Range<usize>]) -> Vec<Block> {
    let line = |index: usize| lines.get(index).and_then(|range| text.get(range.clone()));
    let line = |index: usize| line(index).unwrap_or_default();
    let at_start = |index: usize| !line(index).starts_with(char::is_whitespace);
    let blank = |index: usize| line(index).trim().is_empty();
    // The top-level pieces, where nothing is lost by laying them out apart.
    let mut pieces: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    let mut fenced = false;
    for index in 0..lines.len() {
        let fence = is_fence(line(index));
        if fence && !fenced && at_start(index) && start < index {
            pieces.push(start..index);
            start = index;
        } else if !fenced && !blank(index) && at_start(index) && index > 0 && blank(index - 1) {
            if start < index {
                pieces.push(start..index);
            }
            start = index;
        }
        if fence {
            fenced = !fenced;
            if !fenced && at_start(start) && is_fence(line(start)) {
                pieces.push(start..index + 1);
                start = index + 1;
            }
        }
    }
    if start < lines.len() {
        pieces.push(start..lines.len());
    }
    let mut blocks = Vec::new();
    for piece in pieces {
        let first = line(piece.start);
        let table = piece.len() > 2
            && first.contains('|')
            && is_table_delimiter(line(piece.start + 1).trim_start());
        if is_fence(first) && at_start(piece.start) {
            let closed = piece.len() > 1 && is_fence(line(piece.end - 1));
            let content = piece.start + 1..piece.end - usize::from(closed);
            if content.clone().any(|index| needs_grid(line(index))) {
                for chunk in chunks(content, BLOCK_LINES) {
                    let kind = BlockKind::Code;
                    blocks.push(Block { repeated: 0..0, lines: chunk, fence: None, kind });
                }
                continue;
            }
        }
        if piece.len() <= BLOCK_LINES {
            blocks.push(Block::whole(piece));
        } else if is_fence(first) {
            let closed = is_fence(line(piece.end - 1));
            let content = piece.start + 1..piece.end - usize::from(closed);
            for chunk in chunks(content, BLOCK_LINES) {
                let repeated = piece.start..piece.start + 1;
                blocks.push(Block {
                    repeated,
                    lines: chunk,
                    fence: Some(piece.start),
                    kind: BlockKind::Markdown,
                });
            }
        } else if table {
            let header = piece.start..piece.start + 2;
            blocks.push(Block::whole(piece.start..(piece.start + 2 + BLOCK_LINES).min(piece.end)));
            for chunk in chunks(piece.start + 2 + BLOCK_LINES..piece.end, BLOCK_LINES) {
                blocks.push(Block {
                    repeated: header.clone(),
                    lines: chunk,
                    fence: None,
                    kind: BlockKind::Markdown,
                });
            }
        } else {
            let mut from = piece.start;
            for index in piece.clone() {
                let long = index - from >= BLOCK_LINES;
                if long && at_start(index) || index - from >= 4 * BLOCK_LINES {
                    blocks.push(Block::whole(from..index));
                    from = index;
                }
            }
            blocks.push(Block::whole(from..piece.end));
        }
    }
    blocks.retain(|block| !block.lines.is_empty());
    for block in &mut blocks {
        let bytes: usize = block.lines.clone().map(|index| line(index).len() + 1).sum();
        if block.kind == BlockKind::Markdown && bytes > BLOCK_MAX_BYTES {
            block.kind = BlockKind::Plain;
        }
    }
    blocks
}

/// A line of code egui_commonmark would not keep on the grid: a character outside Latin,
/// punctuation, arrows and box drawing, which Hack draws in one cell (a CJK character, an emoji,
/// Thai...).
fn needs_grid(line: &str) -> bool {
    line.chars().any(|c| c > '\u{2FF}' && !('\u{2000}'..='\u{25FF}').contains(&c))
}

/// `range` cut into ranges of `size` (the last one shorter).
fn chunks(range: Range<usize>, size: usize) -> impl Iterator<Item = Range<usize>> {
    let end = range.end;
    range.step_by(size.max(1)).map(move |start| start..(start + size).min(end))
}

/// The markdown of a block, its fence or table header repeated.
fn block_markdown(text: &str, lines: &[Range<usize>], block: &Block) -> String {
    let line = |index: usize| lines.get(index).and_then(|range| text.get(range.clone()));
    let mut out = String::new();
    for index in block.repeated.clone().chain(block.lines.clone()) {
        out.push_str(line(index).unwrap_or_default());
        out.push('\n');
    }
    if let Some(opening) = block.fence.and_then(line) {
        let marker = opening.trim_start();
        let fence: String = marker.chars().take_while(|c| *c == '`' || *c == '~').collect();
        out.push_str(&fence);
        out.push('\n');
    }
    out
}

/// Draws the blocks of a large markdown preview, laying out only those in view; each one's
/// height is learnt when it is shown (as `rows::show_rows` does for the transcript).
fn blocks_ui(
    ui: &mut Ui,
    text: &str,
    prepared: &Prepared,
    font: &FontId,
    markdown: &mut CommonMarkCache,
) {
    let tokens = Tokens::of(ui.ctx());
    let origin = ui.cursor().min;
    let width = ui.available_width();
    let view = ui.clip_rect();
    let gap = ui.spacing().item_spacing.y;
    let mut heights = prepared.heights.lock();
    let mut top = 0.0;
    for (index, (block, height)) in prepared.blocks.iter().zip(heights.iter_mut()).enumerate() {
        let y = origin.y + top;
        if y + *height >= view.min.y && y <= view.max.y {
            let room = Rect::from_min_size(pos2(origin.x, y), vec2(width, f32::MAX));
            let builder = UiBuilder::new()
                .max_rect(room)
                .layout(Layout::top_down(Align::Min))
                .id_salt(("preview-block", index));
            let mut child = ui.new_child(builder);
            let lines = prepared.lines.get(block.lines.clone()).unwrap_or_default();
            let widest = lines.iter().filter_map(|r| text.get(r.clone())).map(line_cells);
            let widest = widest.max().unwrap_or(0);
            match block.kind {
                BlockKind::Markdown => {
                    let block = block_markdown(text, &prepared.lines, block);
                    CommonMarkViewer::new().show(&mut child, markdown, &keep_line_breaks(&block));
                }
                BlockKind::Plain => {
                    let note = "Shown as plain text: too large to format as markdown.";
                    child.label(RichText::new(note).small().color(tokens.muted));
                    grid_lines_ui(&mut child, text, lines, widest, font);
                }
                BlockKind::Code => {
                    // As egui_commonmark frames its code blocks.
                    let visuals = child.visuals().clone();
                    Frame::new()
                        .fill(visuals.extreme_bg_color)
                        .stroke(visuals.widgets.noninteractive.bg_stroke)
                        .corner_radius(visuals.widgets.noninteractive.corner_radius)
                        .inner_margin(4)
                        .show(&mut child, |ui| {
                            ui.set_width(ui.available_width());
                            grid_lines_ui(ui, text, lines, widest, font);
                        });
                }
            }
            *height = child.min_rect().height();
        }
        top += *height + gap;
    }
    ui.allocate_rect(Rect::from_min_size(origin, vec2(width, top.max(0.0))), Sense::hover());
}

/// The previews prepared lately, newest first, by a hash of their text.
#[derive(Clone, Default)]
struct PreparedCache(Vec<(u64, Arc<Prepared>)>);

/// Previews kept prepared: the one shown, the ones under a multi-select's options, a few more.
const PREPARED_KEPT: usize = 8;

/// `text` prepared, from the cache when it was shown lately.
fn prepared(ui: &Ui, text: &str) -> Arc<Prepared> {
    let key = egui::util::hash(text);
    let id = Id::unique("askpane-preview-prepared");
    ui.data_mut(|data| {
        let cache = data.get_temp_mut_or_default::<PreparedCache>(id);
        let at = cache.0.iter().position(|(hash, _)| *hash == key);
        let entry = match at {
            Some(at) => cache.0.remove(at),
            None => (key, Arc::new(Prepared::of(text))),
        };
        let prepared = Arc::clone(&entry.1);
        cache.0.insert(0, entry);
        cache.0.truncate(PREPARED_KEPT);
        prepared
    })
}

/// Draws `lines` of `text` on the grid (`widest` cells wide), laying out only those in view:
/// one label of the lines in view (one galley, so its rows sit as the rows of a terminal).
fn grid_lines_ui(ui: &mut Ui, text: &str, lines: &[Range<usize>], widest: usize, font: &FontId) {
    let (row_height, cell) =
        ui.fonts_mut(|fonts| (fonts.row_height(font), fonts.glyph_width(font, ' ')));
    // A galley's row is a whole number of pixels high: the lines in view are placed as if every
    // line above them were laid out too.
    let pixels = ui.ctx().pixels_per_point();
    let row_height = (row_height * pixels).round() / pixels;
    let width = ui.available_width().max(widest as f32 * cell);
    let height = lines.len() as f32 * row_height;
    let (rect, _) = ui.allocate_exact_size(vec2(width, height), Sense::hover());
    let view = ui.clip_rect().intersect(rect);
    if view.height() <= 0.0 || row_height <= 0.0 {
        return;
    }
    let first = ((view.min.y - rect.min.y) / row_height).floor().max(0.0) as usize;
    let end = (((view.max.y - rect.min.y) / row_height).ceil().max(0.0) as usize).min(lines.len());
    // The cells in view, and a few either side: of a very long line only those are laid out.
    let cells = match cell > 0.0 {
        true => {
            let from = ((view.min.x - rect.min.x) / cell).floor().max(0.0) as usize;
            let to = ((view.max.x - rect.min.x) / cell).ceil().max(0.0) as usize;
            from.saturating_sub(CELLS_BESIDE_VIEW)..to.saturating_add(CELLS_BESIDE_VIEW)
        }
        false => 0..usize::MAX,
    };
    let shown = lines.get(first..end).unwrap_or_default();
    let shown = shown.iter().map(|range| {
        let (part, start) = cells_in_view(text.get(range.clone()).unwrap_or_default(), &cells);
        (part, start as f32 * cell)
    });
    let job = ui.fonts_mut(|fonts| grid_job(fonts, shown, font));
    let top = rect.min.y + first as f32 * row_height;
    let room = Rect::from_min_size(pos2(rect.min.x, top), vec2(width, view.max.y - top));
    let builder = UiBuilder::new().max_rect(room).layout(Layout::left_to_right(Align::Min));
    ui.new_child(builder).add(Label::new(job).extend().selectable(true));
}

/// A line longer than this is laid out only where it is in view: a megabyte of minified data on
/// one line is a megabyte of glyphs.
const LONG_LINE_BYTES: usize = 2048;

/// Cells laid out either side of the view, for a long line.
const CELLS_BESIDE_VIEW: usize = 8;

/// The part of `line` in the grid's `cells` and the cell it starts at: all of a line up to
/// [`LONG_LINE_BYTES`], else the characters that start inside `cells`.
fn cells_in_view<'a>(line: &'a str, cells: &Range<usize>) -> (&'a str, usize) {
    if line.len() <= LONG_LINE_BYTES {
        return (line, 0);
    }
    let mut at = 0;
    let mut previous = None;
    let mut start = None;
    let mut end = line.len();
    for (byte, c) in line.char_indices() {
        if at >= cells.end {
            end = byte;
            break;
        }
        if start.is_none() && at >= cells.start {
            start = Some((byte, at));
        }
        at += cells_of(c, previous);
        previous = Some(c);
    }
    match start {
        Some((byte, cell)) => (line.get(byte..end).unwrap_or_default(), cell),
        None => ("", 0),
    }
}

/// The cells of a line on the terminal's grid.
pub fn line_cells(line: &str) -> usize {
    let mut previous = None;
    line.chars()
        .map(|c| {
            let cells = cells_of(c, previous);
            previous = Some(c);
            cells
        })
        .sum()
}

/// The cells `c` takes after `previous`, as a terminal counts them: two for a wide character
/// (CJK, most emoji), none for a combining mark or what joins an emoji, one otherwise. An emoji
/// selector after a one-cell symbol (⚠ + U+FE0F) makes it two, as in unicode-width's strings.
fn cells_of(c: char, previous: Option<char>) -> usize {
    match (c, previous) {
        (_, Some('\u{200D}')) => 0,
        ('\u{FE0F}', Some(symbol)) if symbol.width() == Some(1) => 1,
        ('\t', _) => 0,
        _ => c.width().unwrap_or(0),
    }
}

/// Advances smaller than this many points are the same.
const SAME_ADVANCE: f32 = 0.01;

/// `lines` laid out on the terminal grid, one row each, each after its indent (points): every
/// character advances the cells [`cells_of`] gives it, whatever the advance of the font that
/// draws it (Hack's cell for one, a CJK font's em for two...), a wide character centred in its
/// cells. A tab keeps the font's own advance.
pub fn grid_job<'a>(
    fonts: &mut egui::epaint::text::FontsView<'_>,
    lines: impl Iterator<Item = (&'a str, f32)>,
    font: &FontId,
) -> LayoutJob {
    let format =
        TextFormat { font_id: font.clone(), color: Color32::PLACEHOLDER, ..Default::default() };
    let mut job = LayoutJob::default();
    job.wrap.max_width = f32::INFINITY;
    let cell = fonts.glyph_width(font, ' ');
    for (index, (line, indent)) in lines.enumerate() {
        if index > 0 {
            job.append("\n", 0.0, format.clone());
        }
        // Hack draws every printable ASCII character in one cell: nothing to correct.
        if line.bytes().all(|byte| (0x20..0x7f).contains(&byte)) {
            job.append(line, indent, format.clone());
            continue;
        }
        // The advances the fonts give each character, as laid out (shaped, fallback fonts,
        // tweaks): one glyph per character.
        let mut natural = LayoutJob::single_section(line.to_owned(), format.clone());
        natural.wrap.max_width = f32::INFINITY;
        let natural = fonts.layout_job(natural);
        let mut advances =
            natural.rows.iter().flat_map(|row| row.glyphs.iter()).map(|glyph| glyph.advance_width);
        // Space owed before the next character: what the last one's cells have left over.
        let mut owed = indent;
        let mut previous = None;
        for (at, c) in line.char_indices() {
            let cells = cells_of(c, previous);
            previous = Some(c);
            let advance = advances.next().unwrap_or(0.0);
            let slack = match c {
                '\t' => 0.0,
                _ => cells as f32 * cell - advance,
            };
            let before = if cells == 2 { slack / 2.0 } else { 0.0 };
            let lead = owed + before;
            let lead = if lead.abs() < SAME_ADVANCE { 0.0 } else { lead };
            job.append(line.get(at..at + c.len_utf8()).unwrap_or_default(), lead, format.clone());
            owed = slack - before;
        }
    }
    job
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
    fn cells_as_a_terminal_counts_them() {
        assert_eq!(line_cells("│ 日本語 │"), 10);
        assert_eq!(line_cells("한국어"), 6);
        assert_eq!(line_cells("ＡＢ"), 4, "full-width forms");
        assert_eq!(line_cells("ที่"), 1, "a Thai letter and its two marks");
        assert_eq!(line_cells("🚀 ok"), 5);
        assert_eq!(line_cells("👨\u{200D}👩\u{200D}👧"), 2, "one emoji, joined");
        assert_eq!(line_cells("⚠\u{FE0F}"), 2, "emoji presentation");
        assert_eq!(line_cells("e\u{301}"), 1, "a combining accent");
    }

    #[test]
    fn of_a_long_line_only_the_cells_in_view_are_laid_out() {
        let short = "a line of a normal length";
        assert_eq!(cells_in_view(short, &(5..10)), (short, 0));
        let long = "日本".repeat(LONG_LINE_BYTES);
        // 日 takes cells 0-1, 本 2-3, 日 4-5, …: the characters that start in cells 5..10.
        assert_eq!(cells_in_view(&long, &(5..10)), ("本日", 6));
        assert_eq!(cells_in_view(&long, &(0..3)), ("日本", 0));
        assert_eq!(cells_in_view(&long, &(usize::MAX - 1..usize::MAX)), ("", 0));
    }

    #[test]
    fn a_preview_is_split_into_lines_as_str_lines_splits_it() {
        let text = "a\r\nbb\n\n日本\n";
        let prepared = Prepared::of(text);
        let lines: Vec<&str> = prepared.lines.iter().map(|range| &text[range.clone()]).collect();
        assert_eq!(lines, text.lines().collect::<Vec<_>>());
        assert_eq!(prepared.widest, 4);
        assert_eq!(prepared.shown, Shown::Grid);
    }

    /// The markdown of each block of `text`.
    fn blocks(text: &str) -> Vec<String> {
        let prepared = Prepared::of(text);
        assert_eq!(prepared.shown, Shown::MarkdownBlocks);
        prepared.blocks.iter().map(|block| block_markdown(text, &prepared.lines, block)).collect()
    }

    #[test]
    fn large_markdown_is_cut_where_markdown_allows() {
        let row = "| a | b |\n";
        let table = |rows: usize| format!("| x | y |\n|---|---|\n{}", row.repeat(rows));
        assert_eq!(Prepared::of(&table(10)).shown, Shown::Markdown, "small: whole");
        // A long table: tables of its rows, each with the header.
        let cut = blocks(&table(MARKDOWN_WHOLE_LINES));
        assert!(cut.len() >= MARKDOWN_WHOLE_LINES / BLOCK_LINES, "{}", cut.len());
        assert!(cut.iter().all(|block| block.starts_with("| x | y |\n|---|---|\n| a | b |")));
        let rows: usize = cut.iter().map(|block| block.matches("| a | b |").count()).sum();
        assert_eq!(rows, MARKDOWN_WHOLE_LINES, "every row, once");
        // A long code block: code blocks, each fenced.
        let code = format!("Intro\n\n~~~~rust\n{}~~~~\nAfter\n", "let x = 1;\n".repeat(400));
        let cut = blocks(&code);
        assert_eq!(cut.first().map(String::as_str), Some("Intro\n\n"));
        assert_eq!(cut.last().map(String::as_str), Some("After\n"));
        let fenced = cut.get(1..cut.len() - 1).unwrap();
        assert!(
            fenced.iter().all(|b| b.starts_with("~~~~rust\nlet x") && b.ends_with(";\n~~~~\n"))
        );
        let lines: usize = fenced.iter().map(|block| block.matches("let x = 1;").count()).sum();
        assert_eq!(lines, 400);
        // A long list, cut between its items and never inside one.
        let list = "- item\n  more of it\n".repeat(400);
        let cut = blocks(&list);
        assert!(cut.len() > 1);
        assert!(
            cut.iter().all(|block| block.starts_with("- item\n") && block.ends_with("of it\n"))
        );
        // Paragraphs apart, and a paragraph of a megabyte shown plain.
        let huge = format!("# Title\n\n{}\n\nEnd\n", "word ".repeat(BLOCK_MAX_BYTES / 4));
        let prepared = Prepared::of(&huge);
        let kinds: Vec<BlockKind> = prepared.blocks.iter().map(|block| block.kind).collect();
        assert_eq!(kinds, [BlockKind::Markdown, BlockKind::Plain, BlockKind::Markdown]);
    }

    #[test]
    fn code_blocks_with_wide_characters_are_drawn_on_the_grid() {
        let text = "Intro\n\n```\n┌────┐\n│日本│\n└────┘\n```\nAfter\n";
        let prepared = Prepared::of(text);
        assert_eq!(prepared.shown, Shown::MarkdownBlocks, "a small preview, cut");
        let kinds: Vec<BlockKind> = prepared.blocks.iter().map(|block| block.kind).collect();
        assert_eq!(kinds, [BlockKind::Markdown, BlockKind::Code, BlockKind::Markdown]);
        let code = prepared.blocks.get(1).unwrap();
        let lines: Vec<&str> =
            code.lines.clone().map(|n| &text[prepared.lines[n].clone()]).collect();
        assert_eq!(lines, ["┌────┐", "│日本│", "└────┘"], "the code, without its fences");
        // ASCII and box-drawing code stays with egui_commonmark (and its highlighting).
        let ascii = "Intro\n\n```\n┌────┐\n│ ok │\n└────┘\n```\n";
        assert_eq!(Prepared::of(ascii).shown, Shown::Markdown);
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
