//! The History page (issue 11): past requests newest first, a search over question and answer
//! text, filters by project and agent, and for the entry picked what the model read and the exact
//! reply, each with Copy. Draws [`History`] and returns [`HistoryAction`]s.

use egui::{
    Button, ComboBox, Key, KeyboardShortcut, Label, Modifiers, RichText, ScrollArea, TextEdit, Ui,
};

use crate::app::history::{History, HistoryAction, HistoryItem, HistoryKind};
use crate::view::theme::{Tokens, size};

/// Ctrl+H: the History page and back.
pub const HISTORY_SHORTCUT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::H);

/// The height of one row in the entry list: rows are one line each, so only the visible ones are
/// laid out (a page holds up to 200).
const ROW_HEIGHT: f32 = 22.0;

/// The bar above the window's content: "History" (or "Back (2 questions and 1 plan waiting)"),
/// also Ctrl+H. `waiting` is what waits, in words ([`crate::app::state::Counts::words`]), or
/// `None` when nothing does.
pub fn history_bar_ui(
    ui: &mut Ui,
    open: bool,
    waiting: Option<&str>,
    actions: &mut Vec<HistoryAction>,
) {
    let toggle = if open { HistoryAction::Close } else { HistoryAction::Open };
    ui.horizontal(|ui| {
        let label = match (open, waiting) {
            (false, _) => "History".to_owned(),
            (true, None) => "Back".to_owned(),
            (true, Some(waiting)) => format!("Back ({waiting} waiting)"),
        };
        let button = ui.add(Button::new(label).selected(open));
        if button.on_hover_text("Ctrl+H").clicked() {
            actions.push(toggle.clone());
        }
    });
    if ui.input_mut(|input| input.consume_shortcut(&HISTORY_SHORTCUT)) {
        actions.push(toggle);
    }
}

/// The page itself.
pub fn history_ui(ui: &mut Ui, history: &History, actions: &mut Vec<HistoryAction>) {
    egui::Panel::top("history-filters").show(ui, |ui| filters_ui(ui, history, actions));
    let Some(page) = &history.page else {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.label(if history.waiting { "Reading the history…" } else { "" });
        });
        return;
    };
    if let Some(error) = &page.error {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.label(format!("The history cannot be read: {error}"));
        });
        return;
    }
    let width = ui.available_width();
    egui::Panel::left("history-list")
        .resizable(true)
        .default_size(width * 0.42)
        .size_range(200.0..=width * 0.7)
        .show(ui, |ui| {
            let count = page.items.len();
            let shown = match count {
                0 => "Nothing recorded matches.".to_owned(),
                1 => "1 entry, newest first".to_owned(),
                // A full page is the newest of perhaps many more (issue 30: 100 000 entries):
                // the end of the list reads the next ones.
                count if history.more => format!("The newest {count} entries; older ones follow"),
                count => format!("{count} entries, newest first"),
            };
            ui.horizontal(|ui| {
                ui.label(RichText::new(shown).small().color(Tokens::of(ui.ctx()).muted));
                // The same as scrolling to the end, for the keyboard (Tab reaches it).
                if history.more
                    && ui.add_enabled(!history.waiting, Button::new(SHOW_OLDER).small()).clicked()
                {
                    actions.push(HistoryAction::Older);
                }
            });
            // One more row after the entries while older ones may follow (or could not be
            // read): reaching it reads them (issue 30).
            let end_row = history.more || history.older_error.is_some();
            ScrollArea::vertical().auto_shrink([false, false]).show_rows(
                ui,
                ROW_HEIGHT,
                count + usize::from(end_row),
                |ui, rows| {
                    for item in page.items.iter().skip(rows.start).take(rows.len()) {
                        let picked = history.selected == Some(item.id);
                        let row = ui.add_sized(
                            [ui.available_width(), ROW_HEIGHT],
                            Button::selectable(picked, row_text(item)).truncate(),
                        );
                        if row.clicked() {
                            actions.push(HistoryAction::Select(item.id));
                        }
                    }
                    if end_row && rows.end > count {
                        end_row_ui(ui, history, actions);
                    }
                },
            );
        });
    egui::CentralPanel::default().show(ui, |ui| match history.selected_item() {
        Some(item) => {
            ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
                entry_ui(ui, item, actions);
            });
        }
        None => {
            ui.label("Pick an entry to see what was asked and what the model read.");
        }
    });
}

/// The button that reads the next older entries (its label is its accessible name).
pub const SHOW_OLDER: &str = "Show older entries";

/// The list's last row while older entries may follow: scrolled into view, it asks for them
/// (once: nothing more is asked while they are on their way); or why they could not be read.
fn end_row_ui(ui: &mut Ui, history: &History, actions: &mut Vec<HistoryAction>) {
    let tokens = Tokens::of(ui.ctx());
    let text = match &history.older_error {
        Some(error) => format!("Older entries cannot be read: {error}"),
        None => "Reading older entries…".to_owned(),
    };
    ui.add_sized(
        [ui.available_width(), ROW_HEIGHT],
        Label::new(RichText::new(text).small().color(tokens.muted)).truncate(),
    );
    if history.more && !history.waiting {
        actions.push(HistoryAction::Older);
    }
}

fn filters_ui(ui: &mut Ui, history: &History, actions: &mut Vec<HistoryAction>) {
    ui.horizontal_wrapped(|ui| {
        let mut search = history.filter.search.clone();
        let label = ui.label("Search");
        let edit = ui
            .add(
                TextEdit::singleline(&mut search)
                    .hint_text("questions, answers, commands")
                    // What a browser page may send the bridge (the native window keeps to it too).
                    .char_limit(crate::protocol::history::MAX_HISTORY_SEARCH)
                    .desired_width(260.0),
            )
            .labelled_by(label.id);
        if edit.changed() {
            actions.push(HistoryAction::Search(search));
        }
        let page = history.page.as_ref();
        let projects = page.map(|page| page.projects.as_slice()).unwrap_or_default();
        let project = history.filter.project.clone();
        ComboBox::from_label("Project")
            .selected_text(project.clone().unwrap_or_else(|| "All projects".to_owned()))
            .show_ui(ui, |ui| {
                if ui.selectable_label(project.is_none(), "All projects").clicked() {
                    actions.push(HistoryAction::Project(None));
                }
                for name in projects {
                    if ui.selectable_label(project.as_ref() == Some(name), name).clicked() {
                        actions.push(HistoryAction::Project(Some(name.clone())));
                    }
                }
            });
        let agents = page.map(|page| page.agents.as_slice()).unwrap_or_default();
        let source = history.filter.source.clone();
        let agent_name = source.as_ref().map(|source| {
            agents
                .iter()
                .find(|(known, _)| known == source)
                .map_or_else(|| source.clone(), |(_, words)| words.clone())
        });
        ComboBox::from_label("Agent")
            .selected_text(agent_name.unwrap_or_else(|| "All agents".to_owned()))
            .show_ui(ui, |ui| {
                if ui.selectable_label(source.is_none(), "All agents").clicked() {
                    actions.push(HistoryAction::Agent(None));
                }
                for (known, words) in agents {
                    if ui.selectable_label(source.as_ref() == Some(known), words).clicked() {
                        actions.push(HistoryAction::Agent(Some(known.clone())));
                    }
                }
            });
        // Issue 26: questions, tool approvals or plans.
        let kind = history.filter.kind;
        ComboBox::from_label("Kind")
            .selected_text(kind.map_or("Everything", HistoryKind::words))
            .show_ui(ui, |ui| {
                if ui.selectable_label(kind.is_none(), "Everything").clicked() {
                    actions.push(HistoryAction::Kind(None));
                }
                for each in HistoryKind::ALL {
                    if ui.selectable_label(kind == Some(each), each.words()).clicked() {
                        actions.push(HistoryAction::Kind(Some(each)));
                    }
                }
            });
        if history.waiting {
            ui.label(RichText::new("Searching…").small().color(Tokens::of(ui.ctx()).muted));
        }
    });
}

/// One list row: when, where, which question, and how it ended.
fn row_text(item: &HistoryItem) -> String {
    let mut text = item.ended_at.clone();
    if let Some(project) = &item.project {
        text.push_str(&format!(" · {project}"));
    }
    if !item.header.is_empty() {
        text.push_str(&format!(" · {}", item.header));
    }
    text.push_str(&format!(" — {}", item.ended));
    if !item.answer.is_empty() {
        text.push_str(&format!(": {}", item.answer));
    }
    text
}

/// An entry's details: the questions, the answer, what the model read, the exact reply.
fn entry_ui(ui: &mut Ui, item: &HistoryItem, actions: &mut Vec<HistoryAction>) {
    let tokens = Tokens::of(ui.ctx());
    ui.heading(if item.header.is_empty() { "(no header)" } else { item.header.as_str() });
    let mut whence = format!("{} · {}", item.ended_at, item.agent);
    if let Some(project) = &item.project {
        whence.push_str(&format!(" · {project}"));
    }
    ui.label(RichText::new(whence).small().color(tokens.muted));
    ui.add_space(6.0);
    for question in &item.questions {
        ui.add(Label::new(RichText::new(question).size(size::BODY)).wrap());
    }
    ui.add_space(8.0);
    section_ui(
        ui,
        &format!("Answer ({})", item.ended),
        &item.answer,
        "Copy answer",
        false,
        actions,
    );
    if let Some(model_text) = &item.model_text {
        section_ui(
            ui,
            "What the model read",
            model_text,
            "Copy what the model read",
            true,
            actions,
        );
    }
    match &item.reply {
        Some(reply) => section_ui(ui, "Exact reply sent", reply, "Copy reply", true, actions),
        None => {
            ui.label(RichText::new("No reply was sent.").color(tokens.muted));
        }
    }
}

/// A titled block of text with its Copy button.
fn section_ui(
    ui: &mut Ui,
    title: &str,
    text: &str,
    copy: &str,
    monospace: bool,
    actions: &mut Vec<HistoryAction>,
) {
    ui.horizontal(|ui| {
        ui.strong(title);
        if super::small_button(ui, copy).clicked() {
            actions.push(HistoryAction::Copy(text.to_owned()));
        }
    });
    let shown = if text.is_empty() { "(empty)" } else { text };
    let body = match monospace {
        true => RichText::new(shown).monospace().size(size::MONOSPACE),
        false => RichText::new(shown).size(size::BODY),
    };
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.add(Label::new(body).wrap().selectable(true));
    });
    ui.add_space(8.0);
}
