//! A form to fill in (issue 28: an ACP agent's generic `elicitation/create`), or a link to open
//! (its URL mode: the address as text, Done when the person is done there), drawn in the card's
//! place: what the agent says, then each field with its title (a `*` when it is required), its
//! description and its widget (a text box for text and numbers, radio buttons for one choice,
//! check boxes for several and for yes/no), the problem the last Send found next to it, and
//! Send form / Decline form / Cancel form (Stop: nobody answers). Every text the agent wrote is cut to a bounded length (a 100 KB title
//! is the agent's, not a reason to stall the window).

use egui::{Frame, Label, RichText, ScrollArea, TextEdit, Ui};

use crate::app::state::{Action, PendingPermission, SessionAction};
use crate::book::form::{FormAction, FormReview};
use crate::protocol::acp::form::{Field, FieldKind, FieldValue};
use crate::protocol::text::reveal_hidden;
use crate::view::theme::{Tokens, size};

/// Characters of a title shown (the form's, a field's, a choice's).
const TITLE_CHARS: usize = 200;
/// Characters of a message or a description shown.
const TEXT_CHARS: usize = 4_000;

/// `text` with hidden characters shown, cut at `limit` characters with `…`.
fn shown(text: &str, limit: usize) -> String {
    let text = reveal_hidden(text);
    match text.chars().count() > limit {
        true => text.chars().take(limit.saturating_sub(1)).chain(['…']).collect(),
        false => text.into_owned(),
    }
}

/// The accessible name of field `field`'s widget: its title as shown.
pub fn field_label(field: &Field) -> String {
    shown(&field.title, TITLE_CHARS)
}

/// Draws form card `card`: who asks and the message on top, the buttons at the foot (always
/// in view, however many fields), the fields scrolling between.
pub fn form_ui(
    ui: &mut Ui,
    card: &PendingPermission,
    review: &FormReview,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    let id = card.id;
    let act = |action| Action::Session(SessionAction::Form { id, action });
    ui.horizontal_wrapped(|ui| {
        let agent = card.provenance.agent_name();
        ui.label(RichText::new(format!("{agent} asks you to fill in a form")).small());
        let from = card.provenance.label();
        ui.label(RichText::new(format!("· {from}")).small().color(tokens.muted));
    });
    if !review.message.is_empty() {
        ui.add(Label::new(RichText::new(shown(&review.message, TEXT_CHARS)).strong()).wrap());
    }
    if let Some(url) = &review.url {
        link_ui(ui, url);
    }
    egui::Panel::bottom(egui::Id::unique(("askpane-form-footer", id))).show(ui, |ui| {
        ui.horizontal_wrapped(|ui| {
            // Named apart from the session's own Send and Stop beside it.
            let send = match review.url {
                Some(_) => ui.button("Done").on_hover_text("Tell the agent you are done there"),
                None => ui.button("Send form").on_hover_text("Send the form to the agent"),
            };
            if send.clicked() {
                actions.push(act(FormAction::Send));
            }
            let decline = ui.button("Decline form").on_hover_text("Tell the agent you decline");
            if decline.clicked() {
                actions.push(act(FormAction::Decline));
            }
            let stop = ui.button("Cancel form");
            let stop = stop.on_hover_text("Answer nothing: the agent's request is cancelled");
            if stop.clicked() {
                actions.push(act(FormAction::Stop));
            }
        });
    });
    // The frame that first draws the form gives its first text box the keyboard, unless
    // something has it already (the session's prompt box): what is typed as the form arrives
    // lands there instead of nowhere, and no key of it can send the form.
    let drawn_before = egui::Id::unique(("askpane-form-drawn", id));
    let first_frame = !ui.ctx().data(|data| data.get_temp::<bool>(drawn_before).unwrap_or(false));
    ui.ctx().data_mut(|data| data.insert_temp(drawn_before, true));
    let mut keyboard_to_take = first_frame && ui.ctx().memory(|memory| memory.focused().is_none());
    ScrollArea::vertical().id_salt(("form", id)).auto_shrink([false, false]).show(ui, |ui| {
        Frame::new()
            .stroke(egui::Stroke::new(1.0, tokens.warning))
            .corner_radius(size::RADIUS)
            .inner_margin(10)
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                if let Some(title) = &review.form.title {
                    ui.label(RichText::new(shown(title, TITLE_CHARS)).heading());
                }
                if let Some(description) = &review.form.description {
                    let text = RichText::new(shown(description, TEXT_CHARS)).color(tokens.muted);
                    ui.add(Label::new(text).wrap());
                }
                for (index, field) in review.form.fields.iter().enumerate() {
                    ui.add_space(8.0);
                    let value = review.values.get(index).cloned().flatten();
                    let problem = review.problems.get(index).cloned().flatten();
                    let typed_in =
                        matches!(field.kind, FieldKind::Text { .. } | FieldKind::Number { .. });
                    let take_keyboard = keyboard_to_take && typed_in;
                    keyboard_to_take &= !take_keyboard;
                    ui.push_id(("form-field", id, index), |ui| {
                        if let Some(value) = field_ui(ui, field, value, take_keyboard) {
                            actions.push(act(FormAction::Set { field: index, value }));
                        }
                        if let Some(problem) = problem {
                            let text = format!("⚠ {}", shown(&problem, TEXT_CHARS));
                            ui.label(RichText::new(text).color(tokens.diff_removed));
                        }
                    });
                }
            });
    });
}

/// A link the agent asks the person to open: the address as text to read, select and copy.
/// askpane never opens it, and it is no link a click follows (the agent could name any page).
fn link_ui(ui: &mut Ui, url: &str) {
    let tokens = Tokens::of(ui.ctx());
    ui.label(RichText::new("The agent asks you to open this address yourself:").small());
    Frame::new().fill(tokens.code_fill).inner_margin(6).corner_radius(size::RADIUS).show(
        ui,
        |ui| {
            let text = RichText::new(shown(url, TEXT_CHARS)).monospace();
            ui.add(Label::new(text).wrap().selectable(true));
        },
    );
    ui.horizontal_wrapped(|ui| {
        if ui.button("Copy address").clicked() {
            ui.ctx().copy_text(url.to_owned());
        }
        let note = "askpane does not open it: open it in your browser if you trust it.";
        ui.label(RichText::new(note).small().color(tokens.muted));
    });
}

/// One field: its title, description and widget (its text box given the keyboard with
/// `take_keyboard`, before it reads this frame's keys). Returns the field's new value when the
/// person changed it (`Some(None)`: emptied).
fn field_ui(
    ui: &mut Ui,
    field: &Field,
    value: Option<FieldValue>,
    take_keyboard: bool,
) -> Option<Option<FieldValue>> {
    let tokens = Tokens::of(ui.ctx());
    let text_box = ui.scope_id().with("text-box");
    if take_keyboard {
        ui.memory_mut(|memory| memory.request_focus(text_box));
    }
    let title = field_label(field);
    // A yes/no is its own check box, titled: no title above it.
    let label_id = match &field.kind {
        FieldKind::Boolean { .. } => None,
        _ => Some(
            ui.horizontal(|ui| {
                let label = ui.label(RichText::new(&title).strong()).id;
                if field.required {
                    ui.label(RichText::new("*").color(tokens.diff_removed))
                        .on_hover_text("required");
                }
                label
            })
            .inner,
        ),
    };
    if let Some(description) = &field.description {
        let text = RichText::new(shown(description, TEXT_CHARS)).small().color(tokens.muted);
        ui.add(Label::new(text).wrap());
    }
    match &field.kind {
        FieldKind::Text { default: _, format, pattern, max_length, .. } => {
            let mut text = match value {
                Some(FieldValue::Text(text)) => text,
                _ => String::new(),
            };
            let hint = [format.as_deref(), pattern.as_deref()].into_iter().flatten().next();
            let mut edit =
                TextEdit::singleline(&mut text).id(text_box).desired_width(f32::INFINITY);
            if let Some(hint) = hint {
                edit = edit.hint_text(shown(hint, TITLE_CHARS));
            }
            if let Some(max) = max_length.and_then(|max| usize::try_from(max).ok()) {
                // Room for one more, so that "at most N" can be said rather than typing stop.
                edit = edit.char_limit(max.saturating_add(1));
            }
            let response = ui.add(edit);
            let response = match label_id {
                Some(label) => response.labelled_by(label),
                None => response,
            };
            response.changed().then(|| (!text.is_empty()).then_some(FieldValue::Text(text)))
        }
        FieldKind::Number { integer, minimum, maximum, .. } => {
            let mut text = match value {
                Some(FieldValue::Number(text)) => text,
                _ => String::new(),
            };
            let kind = if *integer { "a whole number" } else { "a number" };
            let bounds = match (minimum, maximum) {
                (Some(min), Some(max)) => format!("{kind}, {min} to {max}"),
                (Some(min), None) => format!("{kind}, at least {min}"),
                (None, Some(max)) => format!("{kind}, at most {max}"),
                (None, None) => kind.to_owned(),
            };
            let edit =
                TextEdit::singleline(&mut text).id(text_box).hint_text(bounds).desired_width(200.0);
            let response = ui.add(edit);
            let response = match label_id {
                Some(label) => response.labelled_by(label),
                None => response,
            };
            response.changed().then(|| (!text.is_empty()).then_some(FieldValue::Number(text)))
        }
        FieldKind::Choice { choices, .. } => {
            let picked = match &value {
                Some(FieldValue::Text(text)) => Some(text.as_str()),
                _ => None,
            };
            let mut changed = None;
            for choice in choices {
                let selected = picked == Some(choice.value.as_str());
                let radio = ui.radio(selected, shown(&choice.title, TITLE_CHARS));
                let radio = match &choice.description {
                    Some(description) => radio.on_hover_text(shown(description, TEXT_CHARS)),
                    None => radio,
                };
                // Picking the picked one again empties a field that may be left empty.
                if radio.clicked() {
                    changed = Some(match (selected, field.required) {
                        (true, false) => None,
                        _ => Some(FieldValue::Text(choice.value.clone())),
                    });
                }
            }
            changed
        }
        FieldKind::Choices { choices, .. } => {
            let picked = match value {
                Some(FieldValue::Choices(picked)) => picked,
                _ => Vec::new(),
            };
            let mut changed = None;
            for choice in choices {
                let mut on = picked.contains(&choice.value);
                let check = ui.checkbox(&mut on, shown(&choice.title, TITLE_CHARS));
                if check.changed() {
                    // In the schema's order, whatever order they were ticked in.
                    let now: Vec<String> = choices
                        .iter()
                        .filter(|other| match other.value == choice.value {
                            true => on,
                            false => picked.contains(&other.value),
                        })
                        .map(|other| other.value.clone())
                        .collect();
                    changed = Some((!now.is_empty()).then_some(FieldValue::Choices(now)));
                }
            }
            changed
        }
        FieldKind::Boolean { .. } => {
            let mut on = matches!(value, Some(FieldValue::Boolean(true)));
            let text = match field.required {
                true => format!("{title} *"),
                false => title,
            };
            ui.checkbox(&mut on, text).changed().then_some(Some(FieldValue::Boolean(on)))
        }
    }
}
