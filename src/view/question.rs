//! One question: its text, the option rows (radio or checkbox), "Other", the note, the preview.
//!
//! The question text scrolls with the options, so a long question never starves them of room.
//! With previews, the options and the preview share the page in a proportional split the user
//! can drag; it keeps its proportion when the window is resized.

use egui::{
    CollapsingHeader, CursorIcon, Frame, Id, Key, KeyboardShortcut, Label, Modifiers, Rect,
    Response, RichText, ScrollArea, Sense, Stroke, TextEdit, TextStyle, TextWrapMode, Ui,
    UiBuilder, WidgetInfo, WidgetText, pos2, vec2,
};
use egui_commonmark::CommonMarkCache;

use crate::app::state::{Action, Edit, Open};
use crate::protocol::origin::RequestId;
use crate::protocol::text::reveal_hidden;
use crate::protocol::{Choice, Pick, Question};
use crate::view::theme::{Tokens, size};

use super::chip_text;
use super::preview::{preview_body, preview_ui};

/// The id of a question's Other text box (keyboard shortcuts focus it).
pub fn other_text_id(request: RequestId, question: usize) -> Id {
    Id::unique(("askpane-other", request, question))
}

/// The id of a question's note box.
pub fn notes_id(request: RequestId, question: usize) -> Id {
    Id::unique(("askpane-notes", request, question))
}

/// Whether the row under the keyboard cursor may hold egui's focus this frame (no text box, no
/// dialog has it). Set by the root view before drawing.
pub fn rows_take_focus_id() -> Id {
    Id::unique("askpane-rows-take-focus")
}

/// In a text box, Shift+Enter starts a new line; a plain Enter moves on (the keyboard handler
/// takes it before the box sees it).
fn newline_key() -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::SHIFT, Key::Enter)
}

/// Draws question `index` of `pending`.
pub fn question_ui(
    ui: &mut Ui,
    pending: &Open,
    index: usize,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) {
    let Some(question) = pending.core.ask.questions().get(index) else { return };
    // A phone has no room beside the options: the preview goes under them (issue 11).
    let beside = ui.available_width()
        >= size::SPLIT_MIN_OPTIONS + size::SPLIT_HANDLE + size::SPLIT_MIN_PREVIEW;
    if question.has_side_preview() && beside {
        side_by_side_ui(ui, pending, index, question, markdown, actions);
    } else {
        ScrollArea::vertical()
            .id_salt(("options", pending.id(), index))
            .auto_shrink([false, false])
            .show(ui, |ui| {
                question_head_ui(ui, question);
                options_ui(ui, pending, index, question, markdown, actions);
                if question.has_side_preview()
                    && let Some(choice) = previewed_row(ui, pending, index, question, None)
                {
                    ui.add_space(8.0);
                    preview_ui(
                        ui,
                        ("preview", pending.id(), index),
                        choice.label(),
                        choice.preview().unwrap_or_default(),
                        markdown,
                    );
                }
            });
    }
}

/// The header chip, what kind of choice it is, and the question text: the strongest text on
/// the page, and a heading to a screen reader.
fn question_head_ui(ui: &mut Ui, question: &Question) {
    let tokens = Tokens::of(ui.ctx());
    ui.horizontal_wrapped(|ui| {
        chip_ui(ui, question.header(), &tokens);
        let kind = match question.multi_select() {
            true => "Choose any",
            false => "Choose one",
        };
        ui.label(RichText::new(kind).small().color(tokens.muted));
    });
    ui.add_space(4.0);
    // Characters that hide or reorder text are written out, in the window as in the terminal.
    let text = RichText::new(reveal_hidden(question.text()))
        .text_style(TextStyle::Heading)
        .color(ui.visuals().strong_text_color());
    let response = ui.add(Label::new(text).wrap().selectable(true));
    response.widget_info(|| {
        WidgetInfo::labeled(egui::Role::Heading, true, reveal_hidden(question.text()))
    });
    ui.add_space(8.0);
}

/// The fraction of the page the options take beside a preview, kept while askpane runs.
fn split_id() -> Id {
    Id::unique("askpane-preview-split")
}

/// The options on the left, the preview on the right, and a handle between them to drag.
fn side_by_side_ui(
    ui: &mut Ui,
    pending: &Open,
    index: usize,
    question: &Question,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    let page = ui.available_rect_before_wrap();
    let fraction = ui.data(|data| data.get_temp::<f32>(split_id())).unwrap_or(size::PREVIEW_SPLIT);
    let width = page.width();
    // Each side keeps a usable minimum; in between, the proportion holds at any window size.
    let smallest = size::SPLIT_MIN_OPTIONS.min(width / 2.0);
    let largest = (width - size::SPLIT_MIN_PREVIEW - size::SPLIT_HANDLE).max(smallest);
    let left_width = (width * fraction).clamp(smallest, largest);
    let left = Rect::from_min_size(page.min, vec2(left_width, page.height()));
    let handle = Rect::from_min_size(
        pos2(left.right(), page.top()),
        vec2(size::SPLIT_HANDLE, page.height()),
    );
    let right = Rect::from_min_max(pos2(handle.right(), page.top()), page.max);

    let drag = ui.interact(handle, split_id().with("handle"), Sense::click_and_drag());
    drag.widget_info(|| {
        WidgetInfo::labeled(egui::Role::Splitter, true, "Resize the options and the preview")
    });
    if drag.dragged()
        && let Some(pointer) = drag.interact_pointer_pos()
    {
        let dragged_to = ((pointer.x - page.left()) / width.max(1.0)).clamp(0.15, 0.85);
        ui.data_mut(|data| data.insert_temp(split_id(), dragged_to));
    }
    if drag.double_clicked() {
        ui.data_mut(|data| data.remove::<f32>(split_id()));
    }
    if drag.hovered() || drag.dragged() {
        ui.ctx().set_cursor_icon(CursorIcon::ResizeHorizontal);
    }
    let line = match drag.hovered() || drag.dragged() {
        true => Stroke::new(2.0, tokens.accent),
        false => Stroke::new(1.0, tokens.code_stroke),
    };
    ui.painter().vline(handle.center().x, handle.y_range(), line);

    let hovered = ui
        .scope_builder(UiBuilder::new().max_rect(left), |ui| {
            ScrollArea::vertical()
                .id_salt(("options", pending.id(), index))
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    question_head_ui(ui, question);
                    options_ui(ui, pending, index, question, markdown, actions)
                })
                .inner
        })
        .inner;
    let shown = previewed_row(ui, pending, index, question, hovered);
    ui.scope_builder(UiBuilder::new().max_rect(right), |ui| match shown {
        Some(choice) => preview_ui(
            ui,
            ("preview", pending.id(), index),
            choice.label(),
            choice.preview().unwrap_or_default(),
            markdown,
        ),
        None => {
            ui.label(RichText::new("This option has no preview.").color(tokens.muted));
        }
    });
    ui.allocate_rect(page, Sense::hover());
}

/// Which input moved last on a question: the preview follows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Follow {
    cursor: usize,
    hovered: Option<usize>,
    pointer_last: bool,
}

/// The option whose preview shows: the row the keyboard cursor or the pointer moved to last,
/// else the chosen option; only rows that have a preview count.
fn previewed_row<'q>(
    ui: &Ui,
    pending: &Open,
    index: usize,
    question: &'q Question,
    hovered: Option<usize>,
) -> Option<&'q Choice> {
    let id = Id::unique(("askpane-preview-follow", pending.id(), index));
    let cursor = pending.cursor(index);
    let before = ui.data(|data| data.get_temp::<Follow>(id)).unwrap_or_default();
    let pointer_last = match (cursor != before.cursor, hovered) {
        (true, _) | (_, None) => false,
        (false, Some(row)) => before.pointer_last || before.hovered != Some(row),
    };
    ui.data_mut(|data| data.insert_temp(id, Follow { cursor, hovered, pointer_last }));
    let latest = if pointer_last { hovered } else { Some(cursor) };
    let chosen = pending.draft(index).and_then(|draft| draft.chosen().first().copied());
    [latest, chosen]
        .into_iter()
        .flatten()
        .find_map(|row| question.options().get(row).filter(|choice| choice.preview().is_some()))
}

/// Option rows, Other and the note. Returns the row under the pointer, if any.
fn options_ui(
    ui: &mut Ui,
    pending: &Open,
    index: usize,
    question: &Question,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) -> Option<usize> {
    let draft = pending.draft(index)?;
    let cursor = pending.cursor(index);
    let moved = cursor_moved(ui, pending.id(), index, cursor);
    let mut hovered = None;
    ui.spacing_mut().item_spacing.y = size::ROW_GAP;
    for (row, choice) in question.options().iter().enumerate() {
        let chosen = draft.is_chosen(Pick::Option(row));
        let under_cursor = cursor == row;
        let response =
            row_ui(ui, Row::of(row + 1, choice), question.multi_select(), chosen, under_cursor);
        follow_cursor(ui, &response, under_cursor, moved);
        if response.clicked() {
            actions.push(Action::Edit(Edit::Pick { question: index, pick: Pick::Option(row) }));
        }
        if response.hovered() {
            hovered = Some(row);
        }
        if question.multi_select()
            && let Some(preview) = choice.preview()
        {
            ui.indent(("inline-preview", pending.id(), index, row), |ui| {
                CollapsingHeader::new(format!("Preview of {}", choice.label()))
                    .id_salt(("inline-preview", pending.id(), index, row))
                    .show(ui, |ui| preview_body(ui, preview, markdown));
            });
        }
    }
    other_ui(ui, pending, index, question, cursor, moved, actions);
    ui.add_space(6.0);
    notes_ui(ui, pending, index, actions);
    hovered
}

/// True when the keyboard cursor is on another row than last frame (it scrolls into view).
fn cursor_moved(ui: &Ui, request: RequestId, question: usize, cursor: usize) -> bool {
    let id = Id::unique(("askpane-cursor-last", request, question));
    let before = ui.data(|data| data.get_temp::<usize>(id));
    ui.data_mut(|data| data.insert_temp(id, cursor));
    before.is_some_and(|before| before != cursor)
}

/// The row under the keyboard cursor holds egui's focus (so a screen reader follows it) while
/// no text box or dialog has the keyboard, and scrolls into view when the cursor moves.
fn follow_cursor(ui: &Ui, row: &Response, under_cursor: bool, moved: bool) {
    if !under_cursor {
        return;
    }
    // Never over a box the keyboard was just sent to (Alt+N, typing into Other).
    let free = ui.memory(|memory| memory.focused().is_none());
    let rows_take_focus = ui.data(|data| data.get_temp::<bool>(rows_take_focus_id()));
    if rows_take_focus.unwrap_or(false) && free {
        row.request_focus();
    }
    if moved {
        row.scroll_to_me(None);
    }
}

/// What one row shows: its number, name, badge and description.
struct Row<'a> {
    number: usize,
    name: &'a str,
    recommended: bool,
    description: &'a str,
    /// The accessible name: the exact label the answer carries.
    label: &'a str,
}

impl<'a> Row<'a> {
    fn of(number: usize, choice: &'a Choice) -> Self {
        let (name, recommended) = choice.display_label();
        Row { number, name, recommended, description: choice.description(), label: choice.label() }
    }
}

/// One row: indicator, number, name, "Recommended" badge, and the description below. The row is
/// a single radio button / checkbox to AccessKit, named with the exact label.
fn row_ui(
    ui: &mut Ui,
    row: Row<'_>,
    multi_select: bool,
    chosen: bool,
    under_cursor: bool,
) -> Response {
    let tokens = Tokens::of(ui.ctx());
    let scope = ui.scope_builder(UiBuilder::new().sense(Sense::click()), |ui| {
        let hovered = ui.response().hovered();
        let fill = match (chosen, hovered || under_cursor) {
            (true, _) => tokens.row_chosen,
            (false, true) => tokens.row_hover,
            (false, false) => egui::Color32::TRANSPARENT,
        };
        let stroke = match under_cursor {
            true => Stroke::new(1.0, tokens.accent),
            false => Stroke::NONE,
        };
        Frame::new()
            .fill(fill)
            .stroke(stroke)
            .corner_radius(size::RADIUS)
            .inner_margin(size::ROW_PADDING)
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.horizontal_top(|ui| {
                    indicator_ui(ui, multi_select, chosen, &tokens);
                    let number = RichText::new(format!("{}.", row.number)).color(tokens.muted);
                    paint_text(ui, number.into(), ui.visuals().text_color(), f32::INFINITY);
                    // The badge is measured first, so a long name wraps before it instead of
                    // pushing it out of the row.
                    let badge = row.recommended.then(|| badge_galley(ui, "Recommended", &tokens));
                    let badge_width = badge.as_ref().map_or(0.0, |badge| {
                        badge.size().x + 2.0 * BADGE_PADDING.x + ui.spacing().item_spacing.x
                    });
                    let name = RichText::new(reveal_hidden(row.name)).strong();
                    let room = (ui.available_width() - badge_width).max(40.0);
                    paint_text(ui, name.into(), ui.visuals().strong_text_color(), room);
                    if let Some(badge) = badge {
                        paint_badge(ui, badge, &tokens);
                    }
                });
                // The description stays selectable for copying; a plain click on it still picks.
                (!row.description.is_empty()).then(|| {
                    let margin =
                        egui::Margin { left: size::DESCRIPTION_INDENT, ..Default::default() };
                    Frame::new()
                        .inner_margin(margin)
                        .show(ui, |ui| {
                            let text =
                                RichText::new(reveal_hidden(row.description)).color(tokens.muted);
                            ui.add(Label::new(text).wrap().selectable(true))
                        })
                        .inner
                })
            })
            .inner
    });
    let role = match multi_select {
        true => egui::Role::CheckBox,
        false => egui::Role::RadioButton,
    };
    scope.response.widget_info(|| WidgetInfo::selected(role, true, chosen, row.label));
    match scope.inner {
        Some(description) => scope.response.union(description),
        None => scope.response,
    }
}

/// Paints text wrapped at `wrap_width` (and the space left) without making it a widget of its
/// own, so the row stays one accessible control.
fn paint_text(ui: &mut Ui, text: WidgetText, color: egui::Color32, wrap_width: f32) {
    let wrap_width = wrap_width.min(ui.available_width());
    let galley = text.into_galley(ui, Some(TextWrapMode::Wrap), wrap_width, TextStyle::Body);
    let (rect, _) = ui.allocate_exact_size(galley.size(), Sense::hover());
    ui.painter().galley(rect.min, galley, color);
}

fn indicator_ui(ui: &mut Ui, multi_select: bool, chosen: bool, tokens: &Tokens) {
    let (rect, _) = ui.allocate_exact_size(vec2(size::INDICATOR, size::INDICATOR), Sense::hover());
    let painter = ui.painter();
    let stroke = Stroke::new(1.5, if chosen { tokens.accent } else { tokens.muted });
    if multi_select {
        painter.rect_stroke(rect.shrink(1.0), 3, stroke, egui::StrokeKind::Inside);
        if chosen {
            painter.rect_filled(rect.shrink(1.0), 3, tokens.accent);
            let check = [
                rect.left_center() + vec2(3.5, 0.0),
                rect.center_bottom() + vec2(-1.5, -4.0),
                rect.right_top() + vec2(-3.5, 4.0),
            ];
            painter.line(check.to_vec(), Stroke::new(2.0, tokens.on_accent));
        }
    } else {
        painter.circle_stroke(rect.center(), size::INDICATOR / 2.0 - 1.0, stroke);
        if chosen {
            painter.circle_filled(rect.center(), size::INDICATOR / 2.0 - 4.5, tokens.accent);
        }
    }
}

/// Space between a badge's text and its edge.
const BADGE_PADDING: egui::Vec2 = vec2(6.0, 2.0);

fn badge_galley(ui: &Ui, text: &str, tokens: &Tokens) -> std::sync::Arc<egui::Galley> {
    WidgetText::from(RichText::new(text).small().color(tokens.badge_text)).into_galley(
        ui,
        Some(TextWrapMode::Extend),
        f32::INFINITY,
        TextStyle::Small,
    )
}

fn paint_badge(ui: &mut Ui, galley: std::sync::Arc<egui::Galley>, tokens: &Tokens) {
    let (rect, _) = ui.allocate_exact_size(galley.size() + 2.0 * BADGE_PADDING, Sense::hover());
    ui.painter().rect_filled(rect, size::RADIUS, tokens.badge_fill);
    ui.painter().galley(rect.min + BADGE_PADDING, galley, tokens.badge_text);
}

/// A small rounded label: the "Recommended" badge.
pub fn badge_ui(ui: &mut Ui, text: &str, tokens: &Tokens) {
    let galley = badge_galley(ui, text, tokens);
    paint_badge(ui, galley, tokens);
}

/// The header chip; a header over the limit is cut, with the full text on hover.
pub fn chip_ui(ui: &mut Ui, header: &str, tokens: &Tokens) {
    let (text, cut) = chip_text(header);
    let response = Frame::new()
        .fill(tokens.chip_fill)
        .corner_radius(size::RADIUS)
        .inner_margin(egui::Margin::symmetric(8, 2))
        .show(ui, |ui| ui.label(RichText::new(text).small().strong().color(tokens.chip_text)))
        .response;
    if cut {
        response.on_hover_text(header);
    }
}

/// "Other": a row like the options, and a multiline box whose text is kept whatever is chosen.
fn other_ui(
    ui: &mut Ui,
    pending: &Open,
    index: usize,
    question: &Question,
    cursor: usize,
    moved: bool,
    actions: &mut Vec<Action>,
) {
    let Some(draft) = pending.draft(index) else { return };
    let tokens = Tokens::of(ui.ctx());
    let (description, hint) = match question.multi_select() {
        true => (
            "Something else, added to your choices",
            "Type what else you want (Enter: next · Shift+Enter: new line)",
        ),
        false => (
            "None of these: type your own answer",
            "Type your own answer (Enter: next · Shift+Enter: new line)",
        ),
    };
    let row = Row {
        number: question.options().len() + 1,
        name: "Other",
        recommended: false,
        description,
        label: "Other",
    };
    let chosen = draft.is_chosen(Pick::Other);
    let under_cursor = cursor == question.options().len();
    let response = row_ui(ui, row, question.multi_select(), chosen, under_cursor);
    follow_cursor(ui, &response, under_cursor, moved);
    let clicked = response.clicked();
    if clicked {
        actions.push(Action::Edit(Edit::Pick { question: index, pick: Pick::Other }));
    }
    Frame::new()
        .inner_margin(egui::Margin { left: size::DESCRIPTION_INDENT, ..Default::default() })
        .show(ui, |ui| {
            let label_id = ui.label(RichText::new("Your answer").small().color(tokens.muted)).id;
            let mut text = draft.other_text().to_owned();
            let response = ui.add(
                TextEdit::multiline(&mut text)
                    .id(other_text_id(pending.id(), index))
                    .password(question.secret())
                    .hint_text(hint)
                    .return_key(newline_key())
                    .desired_rows(size::TEXT_ROWS)
                    .desired_width(f32::INFINITY),
            );
            let response = response.labelled_by(label_id);
            if clicked {
                // After the box is added: focus requested earlier is lost to the click outside it.
                response.request_focus();
            }
            if response.changed() {
                actions.push(Action::Edit(Edit::SetOtherText { question: index, text }));
            }
            if draft.other_is_blank() {
                let warning = RichText::new("Type your answer, or Other will not count.").small();
                ui.label(warning.color(tokens.warning));
            }
        });
}

/// The optional note sent with the answer (`annotations[question].notes`); Alt+N opens it.
fn notes_ui(ui: &mut Ui, pending: &Open, index: usize, actions: &mut Vec<Action>) {
    let Some(draft) = pending.draft(index) else { return };
    let id = notes_id(pending.id(), index);
    let open = !draft.notes().is_empty() || ui.memory(|memory| memory.has_focus(id));
    CollapsingHeader::new("Note to the agent (optional, Alt+N)")
        .id_salt(("notes", pending.id(), index))
        .open(open.then_some(true))
        .show(ui, |ui| {
            let mut text = draft.notes().to_owned();
            let secret =
                pending.core.ask.questions().get(index).is_some_and(|question| question.secret());
            let label_id =
                ui.label(RichText::new("Note").small().color(Tokens::of(ui.ctx()).muted)).id;
            let response = ui.add(
                TextEdit::multiline(&mut text)
                    .id(id)
                    .password(secret)
                    .hint_text("Anything the agent should know about your answer")
                    .return_key(newline_key())
                    .desired_rows(size::TEXT_ROWS)
                    .desired_width(f32::INFINITY),
            );
            if response.labelled_by(label_id).changed() {
                actions.push(Action::Edit(Edit::SetNotes { question: index, text }));
            }
        });
}
