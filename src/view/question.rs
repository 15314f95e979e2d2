//! One question: its text, the option rows (radio or checkbox), "Other", the note, the preview.

use egui::{
    CollapsingHeader, Frame, Id, Label, Response, RichText, ScrollArea, Sense, Stroke, TextEdit,
    TextStyle, TextWrapMode, Ui, UiBuilder, WidgetInfo, WidgetText, vec2,
};
use egui_commonmark::CommonMarkCache;

use crate::app::state::{Action, Pending};
use crate::protocol::origin::RequestId;
use crate::protocol::{Choice, Pick, Question};
use crate::theme::{Tokens, size};

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

/// Draws question `index` of `pending`.
pub fn question_ui(
    ui: &mut Ui,
    pending: &Pending,
    index: usize,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) {
    let Some(question) = pending.ask.questions().get(index) else { return };
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
    ui.add(
        Label::new(RichText::new(question.text()).text_style(TextStyle::Heading)).selectable(true),
    );
    ui.add_space(8.0);

    if question.has_side_preview() {
        side_by_side_ui(ui, pending, index, question, markdown, actions);
    } else {
        ScrollArea::vertical()
            .id_salt(("options", pending.id, index))
            .auto_shrink([false, false])
            .show(ui, |ui| {
                options_ui(ui, pending, index, question, markdown, actions);
            });
    }
}

/// The option list on the left, the preview of the focused (or chosen) option on the right.
fn side_by_side_ui(
    ui: &mut Ui,
    pending: &Pending,
    index: usize,
    question: &Question,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) {
    let width = ui.available_width();
    let hovered = egui::Panel::left(("options-split", pending.id, index))
        .resizable(true)
        .default_size(width * size::PREVIEW_SPLIT)
        .size_range(200.0..=width * 0.8)
        .frame(Frame::new().inner_margin(egui::Margin { right: 8, ..Default::default() }))
        .show(ui, |ui| {
            ScrollArea::vertical()
                .id_salt(("options", pending.id, index))
                .auto_shrink([false, false])
                .show(ui, |ui| options_ui(ui, pending, index, question, markdown, actions))
                .inner
        })
        .inner;
    let draft = pending.drafts.get(index);
    let cursor = pending.cursor.get(index).copied();
    // Pointer first, then the keyboard cursor, then the chosen option.
    let shown = [hovered, cursor, draft.and_then(|d| d.chosen().first().copied())]
        .into_iter()
        .flatten()
        .find_map(|row| question.options().get(row).filter(|choice| choice.preview().is_some()));
    egui::CentralPanel::no_frame().show(ui, |ui| match shown {
        Some(choice) => preview_ui(
            ui,
            ("preview", pending.id, index),
            choice.label(),
            choice.preview().unwrap_or_default(),
            markdown,
        ),
        None => {
            ui.label(
                RichText::new("This option has no preview.").color(Tokens::of(ui.ctx()).muted),
            );
        }
    });
}

/// Option rows, Other and the note. Returns the row under the pointer, if any.
fn options_ui(
    ui: &mut Ui,
    pending: &Pending,
    index: usize,
    question: &Question,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) -> Option<usize> {
    let draft = pending.drafts.get(index)?;
    let cursor = pending.cursor.get(index).copied().unwrap_or(0);
    let mut hovered = None;
    ui.spacing_mut().item_spacing.y = size::ROW_GAP;
    for (row, choice) in question.options().iter().enumerate() {
        let chosen = draft.is_chosen(Pick::Option(row));
        let response =
            row_ui(ui, Row::of(row + 1, choice), question.multi_select(), chosen, cursor == row);
        if response.clicked() {
            actions.push(Action::Pick { question: index, pick: Pick::Option(row) });
        }
        if response.hovered() {
            hovered = Some(row);
        }
        if question.multi_select()
            && let Some(preview) = choice.preview()
        {
            ui.indent(("inline-preview", pending.id, index, row), |ui| {
                CollapsingHeader::new(format!("Preview of {}", choice.label()))
                    .id_salt(("inline-preview", pending.id, index, row))
                    .show(ui, |ui| preview_body(ui, preview, markdown));
            });
        }
    }
    other_ui(ui, pending, index, question, cursor == question.options().len(), actions);
    ui.add_space(6.0);
    notes_ui(ui, pending, index, actions);
    hovered
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
                ui.horizontal(|ui| {
                    indicator_ui(ui, multi_select, chosen, &tokens);
                    let number = RichText::new(format!("{}.", row.number)).color(tokens.muted);
                    paint_text(ui, number.into(), ui.visuals().text_color());
                    let name = RichText::new(row.name).strong();
                    paint_text(ui, name.into(), ui.visuals().strong_text_color());
                    if row.recommended {
                        badge_ui(ui, "Recommended", &tokens);
                    }
                });
                // The description stays selectable for copying; a plain click on it still picks.
                (!row.description.is_empty()).then(|| {
                    let margin =
                        egui::Margin { left: size::DESCRIPTION_INDENT, ..Default::default() };
                    Frame::new()
                        .inner_margin(margin)
                        .show(ui, |ui| {
                            let text = RichText::new(row.description).color(tokens.muted);
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

/// Paints text without making it a widget of its own, so the row stays one accessible control.
fn paint_text(ui: &mut Ui, text: WidgetText, color: egui::Color32) {
    let wrap_width = ui.available_width();
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

/// A small rounded label: the "Recommended" badge.
pub fn badge_ui(ui: &mut Ui, text: &str, tokens: &Tokens) {
    let galley = WidgetText::from(RichText::new(text).small()).into_galley(
        ui,
        Some(TextWrapMode::Extend),
        f32::INFINITY,
        TextStyle::Small,
    );
    let padding = vec2(6.0, 2.0);
    let (rect, _) = ui.allocate_exact_size(galley.size() + 2.0 * padding, Sense::hover());
    ui.painter().rect_filled(rect, size::RADIUS, tokens.badge_fill);
    ui.painter().galley(rect.min + padding, galley, tokens.badge_text);
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
    pending: &Pending,
    index: usize,
    question: &Question,
    under_cursor: bool,
    actions: &mut Vec<Action>,
) {
    let Some(draft) = pending.drafts.get(index) else { return };
    let tokens = Tokens::of(ui.ctx());
    let (description, hint) = match question.multi_select() {
        true => ("Something else, added to your choices", "Type what else you want"),
        false => ("None of these: type your own answer", "Type your own answer"),
    };
    let row = Row {
        number: question.options().len() + 1,
        name: "Other",
        recommended: false,
        description,
        label: "Other",
    };
    let chosen = draft.is_chosen(Pick::Other);
    let clicked = row_ui(ui, row, question.multi_select(), chosen, under_cursor).clicked();
    if clicked {
        actions.push(Action::Pick { question: index, pick: Pick::Other });
    }
    Frame::new()
        .inner_margin(egui::Margin { left: size::DESCRIPTION_INDENT, ..Default::default() })
        .show(ui, |ui| {
            let label_id = ui.label(RichText::new("Your answer").small().color(tokens.muted)).id;
            let mut text = draft.other_text().to_owned();
            let response = ui.add(
                TextEdit::multiline(&mut text)
                    .id(other_text_id(pending.id, index))
                    .hint_text(hint)
                    .desired_rows(size::TEXT_ROWS)
                    .desired_width(f32::INFINITY),
            );
            let response = response.labelled_by(label_id);
            if clicked {
                // After the box is added: focus requested earlier is lost to the click outside it.
                response.request_focus();
            }
            if response.changed() {
                actions.push(Action::SetOtherText { question: index, text });
            }
            if draft.other_is_blank() {
                let warning = RichText::new("Type your answer, or Other will not count.").small();
                ui.label(warning.color(tokens.warning));
            }
        });
}

/// The optional note sent with the answer (`annotations[question].notes`).
fn notes_ui(ui: &mut Ui, pending: &Pending, index: usize, actions: &mut Vec<Action>) {
    let Some(draft) = pending.drafts.get(index) else { return };
    let id = notes_id(pending.id, index);
    let open = !draft.notes().is_empty() || ui.memory(|memory| memory.has_focus(id));
    CollapsingHeader::new("Note to the agent (optional)")
        .id_salt(("notes", pending.id, index))
        .open(open.then_some(true))
        .show(ui, |ui| {
            let mut text = draft.notes().to_owned();
            let label_id =
                ui.label(RichText::new("Note").small().color(Tokens::of(ui.ctx()).muted)).id;
            let response = ui.add(
                TextEdit::multiline(&mut text)
                    .id(id)
                    .hint_text("Anything the agent should know about your answer")
                    .desired_rows(size::TEXT_ROWS)
                    .desired_width(f32::INFINITY),
            );
            if response.labelled_by(label_id).changed() {
                actions.push(Action::SetNotes { question: index, text });
            }
        });
}
