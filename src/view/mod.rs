//! Layout of the window: request list, question tabs, the question or Review page, the footer.
//!
//! The view draws [`State`] and returns [`Action`]s; it never changes state or touches channels.

pub mod form;
pub mod history;
mod keys;
pub mod pairing;
pub mod plan;
pub mod preview;
pub mod question;
mod rows;
pub mod session;
pub mod theme;
pub mod tool_call;

use egui::{Button, Frame, Label, RichText, ScrollArea, Ui};
use egui_commonmark::CommonMarkCache;

use crate::app::state::{
    Action, Confirm, Countdown, Edit, Open, PendingPermission, Receipt, SendState, Shown, State,
    Status, Tab, review_line,
};
use crate::protocol::OutcomeKind;
use crate::view::theme::{Tokens, size};

use question::{chip_ui, question_ui};

/// The keyboard hint shown in the footer (the README's keys table says the same).
pub const KEY_HINT: &str = "↑↓ move · Enter choose & next · 1–9 choose · Space toggle · type to \
                            answer in Other · Alt+N note · Tab/←→ switch · PgUp/PgDn preview · \
                            Ctrl+PgUp/PgDn next request · Ctrl+Enter submit · Esc decline";

/// A request with this many seconds left or fewer is marked as urgent in the list.
pub const URGENT_SECS: u64 = 60;

/// The most of a tool call's summary a list entry holds.
const CARD_ENTRY_CHARS: usize = 80;

/// Seconds the "+1 min" button adds to a countdown.
pub const ADD_TIME_SECS: u64 = 60;

/// A header as a chip shows it: at most [`size::CHIP_CHARS`] characters, cut with "…". Returns
/// whether it was cut.
pub fn chip_text(header: &str) -> (String, bool) {
    // Characters that hide or reorder text are written out, as everywhere agent text is drawn.
    let header = crate::protocol::text::reveal_hidden(header);
    match header.chars().count() > size::CHIP_CHARS {
        true => (header.chars().take(size::CHIP_CHARS - 1).chain(['…']).collect(), true),
        false => (header.into_owned(), false),
    }
}

/// A small button for a mouse; a finger's size on a touch screen (issue 11).
pub fn small_button(ui: &mut Ui, text: impl Into<egui::WidgetText>) -> egui::Response {
    match crate::view::theme::touch_sized(ui.ctx()) {
        true => ui.button(text),
        false => ui.small_button(text),
    }
}

/// Draws the whole window and returns what the user did this frame.
pub fn root_ui<R, A>(
    ui: &mut Ui,
    state: &State<R, A>,
    markdown: &mut CommonMarkCache,
) -> Vec<Action> {
    let mut actions = Vec::new();
    let keyboard_on_form = state.current().is_some() && !state.confirming_close();
    if let Some(pending) = state.current()
        && keyboard_on_form
    {
        let neighbours = neighbours(state, Shown::Question(pending.id()));
        keys::keyboard_actions(ui.ctx(), pending, neighbours, &mut actions);
    } else if let Some(card) = state.shown_card()
        && !state.confirming_close()
    {
        // A card shown: the window's keys, and the previous and next entries of the list.
        let neighbours = neighbours(state, Shown::Card(card.id));
        keys::card_keyboard_actions(ui.ctx(), state.receipt().is_some(), neighbours, &mut actions);
    } else if !state.confirming_close() {
        // Nothing to answer: the window's own keys still work (Ctrl+W hides the inbox, Esc puts
        // away what was sent).
        keys::idle_keyboard_actions(ui.ctx(), state.receipt().is_some(), &mut actions);
    }
    // The row under the keyboard cursor holds the focus (for screen readers) unless a text box,
    // a confirmation bar or the close dialog has the keyboard.
    let rows_take_focus = keyboard_on_form
        && !ui.ctx().text_edit_focused()
        && state.current().is_some_and(|pending| pending.confirm.is_none());
    ui.ctx().data_mut(|data| data.insert_temp(question::rows_take_focus_id(), rows_take_focus));
    if !state.notices().is_empty() {
        egui::Panel::top("notices").show(ui, |ui| notices_ui(ui, state.notices(), &mut actions));
    }
    if let Some(receipt) = state.receipt() {
        match state.shown().is_some() {
            // A form (or a card) shows: what was sent is one line with its details folded, so the next
            // request's options stay on screen in the smallest window.
            true => {
                egui::Panel::top("receipt-line").resizable(false).show(ui, |ui| {
                    receipt_headline_ui(ui, receipt, &mut actions);
                    egui::CollapsingHeader::new("What the model reads")
                        .id_salt("receipt-details")
                        .default_open(false)
                        .show(ui, |ui| receipt_details_ui(ui, receipt));
                });
            }
            false => {
                egui::Panel::top("receipt").resizable(true).default_size(150.0).show(ui, |ui| {
                    receipt_headline_ui(ui, receipt, &mut actions);
                    receipt_details_ui(ui, receipt);
                });
            }
        }
    }
    // A phone (issue 11): one column, and controls a finger can hit.
    let narrow = ui.available_width() < size::NARROW_WIDTH;
    crate::view::theme::fit_for_touch(ui.ctx(), narrow || is_touch_screen(ui.ctx()));
    if narrow {
        let pane = narrow_pane_ui(ui, state);
        match pane {
            NarrowPane::Requests => {
                egui::CentralPanel::default()
                    .show(ui, |ui| request_list_ui(ui, state, &mut actions));
                // Picking a request shows it.
                if actions.iter().any(|action| {
                    matches!(action, Action::SelectRequest(_) | Action::SelectCard(_))
                }) {
                    set_narrow_pane(ui.ctx(), NarrowPane::Form);
                }
                return finish_root(ui, state, actions);
            }
            NarrowPane::Transcript => {
                if let Some(session) = state.session() {
                    egui::CentralPanel::default().show(ui, |ui| {
                        if state.sessions().nth(1).is_some() {
                            session::session_switcher_ui(ui, state.sessions(), &mut actions);
                        }
                        session::session_ui(ui, session, markdown, &mut actions);
                    });
                    return finish_root(ui, state, actions);
                }
            }
            NarrowPane::Form => {}
        }
    } else {
        if state.waiting() > 1 {
            egui::Panel::left("requests")
                .resizable(true)
                .default_size(size::REQUEST_LIST_WIDTH)
                .show(ui, |ui| request_list_ui(ui, state, &mut actions));
        }
        if let Some(session) = state.session() {
            let width = ui.available_width();
            egui::Panel::left("session")
                .resizable(true)
                .default_size(width * 0.45)
                .size_range(260.0..=width * 0.75)
                .show(ui, |ui| {
                    // The inbox shows one session at a time; several get a switcher.
                    if state.sessions().nth(1).is_some() {
                        session::session_switcher_ui(ui, state.sessions(), &mut actions);
                    }
                    session::session_ui(ui, session, markdown, &mut actions);
                });
        }
    }
    if let Some(pending) = state.current() {
        egui::Panel::bottom("footer").show(ui, |ui| footer_ui(ui, pending, narrow, &mut actions));
    }
    egui::CentralPanel::default().show(ui, |ui| {
        // One item at a time (issue 26): the question or the tool call chosen in the list, else
        // the oldest waiting.
        match (state.shown_card(), state.current()) {
            // A plan to review (issue 26) is a card too, drawn as a document with its own
            // scrolling, outline and footer: the list and the session stay beside it.
            (Some(card), _) => match (&card.plan, &card.form) {
                (Some(review), _) => {
                    let keys = !state.confirming_close();
                    plan::plan_ui(ui, card, review, markdown, keys, &mut actions);
                }
                // A form (issue 28) is a card too, drawn as its fields.
                (None, Some(review)) => form::form_ui(ui, card, review, &mut actions),
                (None, None) => {
                    ScrollArea::vertical().id_salt(("card", card.id)).show(ui, |ui| {
                        session::permission_ui(ui, card, &mut actions);
                    });
                }
            },
            (None, Some(pending)) => request_ui(ui, pending, markdown, &mut actions),
            (None, None) => idle_ui(ui, state),
        }
    });
    finish_root(ui, state, actions)
}

/// What every frame ends with: the close dialog, the typing clock, the accessible title.
fn finish_root<R, A>(ui: &mut Ui, state: &State<R, A>, mut actions: Vec<Action>) -> Vec<Action> {
    if state.confirming_close() {
        close_modal_ui(ui.ctx(), state, &mut actions);
    }
    keys::remember_typing(ui.ctx());
    // The window's accessible name: what a screen reader says when the window gets focus.
    let title = state.title(ui.input(|input| input.time));
    ui.ctx().accesskit_node_builder(egui::accesskit_root_id(), |node| node.set_label(title));
    actions
}

/// What a narrow (phone) page shows in its one column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum NarrowPane {
    /// The question (or the permission cards) in front of the user.
    #[default]
    Form,
    /// The list of waiting requests, which sits beside the form on a wide screen.
    Requests,
    /// The agent session's transcript and prompt box.
    Transcript,
}

fn narrow_pane_id() -> egui::Id {
    egui::Id::unique("askpane-narrow-pane")
}

fn set_narrow_pane(ctx: &egui::Context, pane: NarrowPane) {
    ctx.data_mut(|data| data.insert_temp(narrow_pane_id(), pane));
}

/// The id under which the composition root says the screen is a touch screen (the browser's
/// `(pointer: coarse)`): controls are then a finger's size however wide the page is.
pub fn touch_screen_id() -> egui::Id {
    egui::Id::unique("askpane-touch-screen")
}

fn is_touch_screen(ctx: &egui::Context) -> bool {
    ctx.data(|data| data.get_temp::<bool>(touch_screen_id())).unwrap_or(false)
}

/// The bar at the top of a narrow page that picks what its one column shows; the pane shown.
/// None when there is only the form to show.
fn narrow_pane_ui<R, A>(ui: &mut Ui, state: &State<R, A>) -> NarrowPane {
    let several = state.waiting() > 1;
    let session = state.session().is_some();
    let mut pane = ui.ctx().data(|data| data.get_temp::<NarrowPane>(narrow_pane_id()));
    let mut shown = pane.unwrap_or_default();
    if !several && shown == NarrowPane::Requests || !session && shown == NarrowPane::Transcript {
        shown = NarrowPane::Form;
    }
    if !several && !session {
        return shown;
    }
    egui::Panel::top("narrow-panes").show(ui, |ui| {
        ui.horizontal_wrapped(|ui| {
            let waiting = state.waiting();
            let form = match waiting {
                0 => "Questions".to_owned(),
                _ => format!("Questions ({waiting})"),
            };
            let mut choices = vec![(NarrowPane::Form, form)];
            if several {
                choices.push((NarrowPane::Requests, "All waiting".to_owned()));
            }
            if session {
                choices.push((NarrowPane::Transcript, "Transcript".to_owned()));
            }
            for (choice, text) in choices {
                if ui.add(Button::selectable(shown == choice, text)).clicked() {
                    shown = choice;
                    pane = Some(choice);
                }
            }
        });
    });
    if let Some(pane) = pane {
        set_narrow_pane(ui.ctx(), pane);
    }
    shown
}

/// "Close askpane?" when closing would throw away answers in progress.
fn close_modal_ui<R, A>(ctx: &egui::Context, state: &State<R, A>, actions: &mut Vec<Action>) {
    if state.resident() {
        return hide_modal_ui(ctx, state, actions);
    }
    let counts = state.counts();
    let modal = egui::Modal::new(egui::Id::unique("askpane-close")).show(ctx, |ui| {
        ui.set_max_width(420.0);
        ui.heading("Close askpane?");
        let verb = if counts.is_one() { "is" } else { "are" };
        ui.label(format!(
            "{} {verb} still open. Closing throws away what you chose and typed, and tells \
             the agent you closed the window without answering.",
            counts.words()
        ));
        ui.label(
            RichText::new("Enter keeps answering · Esc too · Tab then Enter closes")
                .small()
                .color(Tokens::of(ui.ctx()).muted),
        );
        ui.horizontal(|ui| {
            let keep = ui.button("Keep answering");
            // The safe choice holds the keyboard: Enter keeps the window, Tab reaches Close.
            if ui.memory(|memory| memory.focused().is_none()) {
                keep.request_focus();
            }
            if keep.clicked() {
                actions.push(Action::KeepOpen);
            }
            if ui.button("Close and decline").clicked() {
                actions.push(Action::ConfirmClose);
            }
        });
    });
    if modal.should_close() && !actions.contains(&Action::ConfirmClose) {
        actions.push(Action::KeepOpen);
    }
}

/// Issue 10 (inbox): "Close the inbox's window?" while requests wait: keep them waiting in the
/// background (the window hides, and comes back when a question arrives), or decline them all.
fn hide_modal_ui<R, A>(ctx: &egui::Context, state: &State<R, A>, actions: &mut Vec<Action>) {
    let counts = state.counts();
    let modal = egui::Modal::new(egui::Id::unique("askpane-hide")).show(ctx, |ui| {
        ui.set_max_width(440.0);
        ui.heading("Close the inbox's window?");
        let verb = if counts.is_one() { "is" } else { "are" };
        ui.label(format!(
            "{} {verb} waiting. They can keep waiting in the background (the window comes \
             back when another question arrives, or when you run askpane inbox), or be declined \
             now: each agent is told you closed the window without answering.",
            counts.words()
        ));
        ui.label(
            RichText::new(
                "Enter keeps them waiting · Esc keeps the window · Tab then Enter declines",
            )
            .small()
            .color(Tokens::of(ui.ctx()).muted),
        );
        ui.horizontal(|ui| {
            let keep = ui.button("Keep waiting in the background");
            if ui.memory(|memory| memory.focused().is_none()) {
                keep.request_focus();
            }
            if keep.clicked() {
                actions.push(Action::Hide);
            }
            if ui.button("Decline all").clicked() {
                actions.push(Action::ConfirmClose);
            }
        });
    });
    if modal.should_close()
        && !actions.iter().any(|a| matches!(a, Action::ConfirmClose | Action::Hide))
    {
        actions.push(Action::KeepOpen);
    }
}

fn notices_ui(ui: &mut Ui, notices: &[String], actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    for (index, notice) in notices.iter().enumerate() {
        ui.horizontal(|ui| {
            if small_button(ui, "✕").on_hover_text("Dismiss").clicked() {
                actions.push(Action::DismissNotice(index));
            }
            ui.add(Label::new(RichText::new(notice).color(tokens.warning)).wrap().selectable(true));
        });
    }
}

/// What the agent was sent for the last finished request: who, what, how it ended, with ✕ and
/// Copy reply.
fn receipt_headline_ui(ui: &mut Ui, receipt: &Receipt, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    ui.horizontal(|ui| {
        let how = match (receipt.by_timeout, receipt.outcome_kind) {
            (true, OutcomeKind::Answered) => {
                "answered: the time ran out with every question answered"
            }
            (true, _) => "not answered: the time ran out (what you picked is listed below)",
            (false, kind) => kind.as_str(),
        };
        // Issue 9: a browser page says "Sent" only once askpane has acknowledged it.
        let (mark, sent, color) = match (&receipt.send_state, receipt.by_timeout) {
            (SendState::Sending, _) => ("…", "Sending to".to_owned(), tokens.muted),
            (SendState::NotSent(why), _) => ("✗", format!("Not sent ({why}) to"), tokens.warning),
            (SendState::Sent, true) => ("⏱", "Sent to".to_owned(), tokens.warning),
            (SendState::Sent, false) => ("✔", "Sent to".to_owned(), tokens.success),
        };
        let headline = format!("{mark} {sent} {}: “{}” {how}", receipt.provenance, receipt.title);
        ui.add(Label::new(RichText::new(headline).color(color).strong()).wrap());
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let hide = small_button(ui, "✕").on_hover_text("Hide what was sent (Esc when idle)");
            if hide.clicked() {
                actions.push(Action::DismissReceipt);
            }
            if !receipt.reply.is_empty() && small_button(ui, "Copy reply").clicked() {
                ui.ctx().copy_text(receipt.reply.clone());
            }
        });
    });
}

/// What the model reads, and the exact reply sent.
fn receipt_details_ui(ui: &mut Ui, receipt: &Receipt) {
    let tokens = Tokens::of(ui.ctx());
    ScrollArea::vertical().id_salt("receipt-scroll").auto_shrink([false, true]).show(ui, |ui| {
        ui.label(RichText::new("The model reads:").small().color(tokens.muted));
        ui.add(Label::new(&receipt.model_text).wrap().selectable(true));
        if !receipt.reply.is_empty() {
            ui.label(RichText::new("Reply sent:").small().color(tokens.muted));
            Frame::new().fill(tokens.code_fill).corner_radius(size::RADIUS).inner_margin(6).show(
                ui,
                |ui| {
                    ui.add(
                        Label::new(RichText::new(&receipt.reply).monospace())
                            .extend()
                            .selectable(true),
                    );
                },
            );
        }
    });
}

/// The side strip listing every waiting request, grouped by project and then by session, oldest
/// first, each with who asked and how long it has waited.
fn request_list_ui<R, A>(ui: &mut Ui, state: &State<R, A>, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    let now = ui.input(|input| input.time);
    // Level with the tabs of the form beside it.
    ui.add_space(size::ROW_GAP * 2.0);
    ui.label(RichText::new(format!("{} waiting", state.waiting())).strong());
    let shown = state.shown();
    // Issue 30 item 2: 500 agents asking at once make a long list; only the rows in view are laid
    // out (`rows::show_rows`), so a frame costs what the visible rows cost.
    let rows = list_rows(request_groups(listed(state)));
    let scroll = ScrollArea::vertical().id_salt("request-list");
    let id = ui.make_persistent_id("request-list-rows");
    rows::show_rows(ui, scroll, id, rows.len(), LIST_ROW_ESTIMATE, |ui, index| {
        let Some(row) = rows.get(index) else { return };
        match row {
            ListRow::Project { name, count } => {
                ui.add_space(size::ROW_GAP);
                ui.horizontal(|ui| {
                    let name = name.unwrap_or("Other agents");
                    ui.add(Label::new(RichText::new(name).strong()).truncate().selectable(false));
                    ui.label(RichText::new(count.to_string()).small().color(tokens.muted));
                });
            }
            ListRow::Session(session) => {
                let text = RichText::new(format!("session {session}")).small().color(tokens.muted);
                ui.add(Label::new(text).selectable(false));
            }
            ListRow::Entry(entry) => {
                let current = shown == Some(entry.shown());
                let response = match entry {
                    Listed::Question(pending) => request_entry_ui(ui, pending, current, now),
                    Listed::Card(card) => card_entry_ui(ui, card, current, now),
                };
                if response.clicked() {
                    actions.push(Action::select(entry.shown()));
                }
            }
        }
    });
    // Ages are shown in minutes: repaint when the next one turns.
    let cards = state.permissions().cards().map(|card| card_arrived_at(ui.ctx(), card, now));
    if let Some(oldest) =
        state.book().requests().map(|open| open.opened_at).chain(cards).reduce(f64::min)
    {
        let into_minute = (now - oldest).max(0.0) % 60.0;
        ui.ctx().request_repaint_after(std::time::Duration::from_secs_f64(60.0 - into_minute));
    }
}

/// One entry of the list (issue 26): a question or a tool call waiting for a decision.
#[derive(Clone, Copy)]
enum Listed<'a> {
    Question(&'a Open),
    Card(&'a PendingPermission),
}

impl<'a> Listed<'a> {
    fn shown(self) -> Shown {
        match self {
            Listed::Question(open) => Shown::Question(open.id()),
            Listed::Card(card) => Shown::Card(card.id),
        }
    }

    fn provenance(self) -> &'a crate::protocol::origin::Provenance {
        match self {
            Listed::Question(open) => &open.core.provenance,
            Listed::Card(card) => &card.provenance,
        }
    }
}

/// Every waiting question and tool call, oldest first (ids are given in arrival order across
/// both).
fn listed<R, A>(state: &State<R, A>) -> impl Iterator<Item = Listed<'_>> {
    let mut entries: Vec<Listed<'_>> = state.book().requests().map(Listed::Question).collect();
    entries.extend(state.permissions().cards().map(Listed::Card));
    entries.sort_by_key(|entry| entry.shown().id());
    entries.into_iter()
}

/// What a row of the list is taller than or as tall as, before it is measured: an entry (a
/// title and a line of detail in a padded frame).
const LIST_ROW_ESTIMATE: f32 = 48.0;

/// One row of the request list: a project's heading, a session's, or an entry.
enum ListRow<'a> {
    Project { name: Option<&'a str>, count: usize },
    Session(String),
    Entry(Listed<'a>),
}

/// The list's rows in the order they are shown: each project's heading, then its sessions'
/// entries (each session headed where the project has more than one).
fn list_rows(groups: Vec<RequestGroup<'_>>) -> Vec<ListRow<'_>> {
    let mut rows = Vec::new();
    for group in groups {
        let count = group.sessions.iter().map(|(_, requests)| requests.len()).sum();
        rows.push(ListRow::Project { name: group.project, count });
        let several_sessions = group.sessions.len() > 1;
        for (session, requests) in group.sessions {
            if several_sessions && let Some(session) = session {
                rows.push(ListRow::Session(session));
            }
            rows.extend(requests.into_iter().map(ListRow::Entry));
        }
    }
    rows
}

/// One project's requests in the list, by session (in order of their oldest request).
struct RequestGroup<'a> {
    project: Option<&'a str>,
    sessions: Vec<(Option<String>, Vec<Listed<'a>>)>,
}

/// Groups requests by project, then session, keeping their order (oldest first) within each
/// and ordering groups by their oldest request.
fn request_groups<'a>(requests: impl Iterator<Item = Listed<'a>>) -> Vec<RequestGroup<'a>> {
    let mut groups: Vec<RequestGroup<'a>> = Vec::new();
    // Each project's place in `groups`: 500 agents may ask from 500 folders, every frame.
    let mut places: std::collections::HashMap<Option<&'a str>, usize> =
        std::collections::HashMap::new();
    for open in requests {
        let provenance = open.provenance();
        let project = provenance.project.as_deref();
        let session = provenance.short_session();
        let place = *places.entry(project).or_insert_with(|| {
            groups.push(RequestGroup { project, sessions: Vec::new() });
            groups.len() - 1
        });
        let Some(group) = groups.get_mut(place) else { continue };
        let sessions = &mut group.sessions;
        match sessions.iter_mut().find(|(known, _)| *known == session) {
            Some((_, requests)) => requests.push(open),
            None => sessions.push((session, vec![open])),
        }
    }
    groups
}

/// The requests before and after `current` in the list as it is shown (grouped by project and
/// session), wrapping round; none when it is the only one.
fn neighbours<R, A>(state: &State<R, A>, current: Shown) -> keys::Neighbours {
    let listed: Vec<Shown> = request_groups(listed(state))
        .into_iter()
        .flat_map(|group| group.sessions)
        .flat_map(|(_, requests)| requests)
        .map(Listed::shown)
        .collect();
    let Some(at) = listed.iter().position(|&id| id == current) else {
        return keys::Neighbours::default();
    };
    if listed.len() < 2 {
        return keys::Neighbours::default();
    }
    let count = listed.len();
    keys::Neighbours {
        previous: listed.get((at + count - 1) % count).copied(),
        next: listed.get((at + 1) % count).copied(),
    }
}

/// How long a request has waited, in words: "just now", "3 min", "2 h".
fn age_text(seconds: f64) -> String {
    let minutes = (seconds.max(0.0) / 60.0).floor() as u64;
    match minutes {
        0 => "just now".to_owned(),
        1..=59 => format!("{minutes} min"),
        _ => format!("{} h", minutes / 60),
    }
}

/// One waiting request: its first header, who asked (agent, subagent, permission mode), how many
/// questions, its age, whether it is started.
fn request_entry_ui(ui: &mut Ui, pending: &Open, current: bool, now: f64) -> egui::Response {
    let tokens = Tokens::of(ui.ctx());
    let count = pending.core.ask.questions().len();
    let plural = if count == 1 { "" } else { "s" };
    let started = if pending.is_touched() { " · started" } else { "" };
    let title = chip_text(pending.core.ask.title()).0;
    let provenance = &pending.core.provenance;
    let mut who = provenance.agent();
    if let Some(subagent) = &provenance.subagent {
        who.push_str(&format!(" · subagent {subagent}"));
    }
    let mode = pending.core.envelope.hook_context().and_then(|c| c.permission_mode.as_deref());
    if let Some(mode) = mode {
        who.push_str(&format!(" · {mode}"));
    }
    let age = age_text(now - pending.opened_at);
    let detail = format!("{who} · {count} question{plural} · {age}{started}");
    // Issue 24: a `--timeout` question must not expire unseen while another is answered: each
    // entry says its time left, in the warning colour once a minute or less is left.
    let (deadline, urgent) = match pending.countdown.map(|countdown| countdown.left(now)) {
        Some(Some(left)) => {
            let secs = left.ceil() as u64;
            (Some(format!("⏱ {}:{:02} left", secs / 60, secs % 60)), secs <= URGENT_SECS)
        }
        Some(None) => (Some("⏱ countdown stopped".to_owned()), false),
        None => (None, false),
    };
    let scope = ui.scope_builder(egui::UiBuilder::new().sense(egui::Sense::click()), |ui| {
        let fill = match (current, ui.response().hovered()) {
            (true, _) => tokens.row_chosen,
            (false, true) => tokens.row_hover,
            (false, false) => egui::Color32::TRANSPARENT,
        };
        Frame::new().fill(fill).corner_radius(size::RADIUS).inner_margin(6).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.add(Label::new(RichText::new(&title).strong()).truncate().selectable(false));
            if let Some(deadline) = &deadline {
                let color = if urgent { tokens.warning } else { tokens.muted };
                let text = RichText::new(deadline).small().color(color);
                ui.add(Label::new(if urgent { text.strong() } else { text }).selectable(false));
            }
            let detail = RichText::new(&detail).small().color(tokens.muted);
            ui.add(Label::new(detail).wrap().selectable(false));
        });
    });
    let label = match &deadline {
        Some(deadline) => format!("{title} · {deadline} · {detail}"),
        None => format!("{title} · {detail}"),
    };
    scope.response.widget_info(|| {
        egui::WidgetInfo::selected(egui::Role::Button, true, current, label.as_str())
    });
    scope.response
}

/// When card `card` arrived (the app notes when it received it): its age counts from then. A
/// card nobody dated (a state built by hand) counts from when this page first listed it.
fn card_arrived_at(ctx: &egui::Context, card: &PendingPermission, now: f64) -> f64 {
    if let Some(at) = card.arrived_at {
        return at;
    }
    let key = egui::Id::unique(("askpane-card-seen", card.id));
    ctx.data_mut(|data| *data.get_temp_mut_or_insert_with(key, || now))
}

/// One tool call waiting for a decision (issue 26): the tool and what it does ("Bash: npm
/// test"), who asks, "tool call", its age.
fn card_entry_ui(ui: &mut Ui, card: &PendingPermission, current: bool, now: f64) -> egui::Response {
    let tokens = Tokens::of(ui.ctx());
    let request = &card.request;
    // A plan is named by its first heading: its summary would be the plan's markdown.
    let plan_title = card.plan.as_ref().map(|review| match review.outline().next() {
        Some((_, _, heading)) => format!("Plan: {heading}"),
        None => "Plan".to_owned(),
    });
    // A form is named by what the agent says it is for.
    let plan_title = plan_title.or_else(|| {
        card.form.as_ref().map(|review| {
            let about = review.form.title.as_deref().unwrap_or(&review.message);
            let kind = if review.url.is_some() { "Link" } else { "Form" };
            format!("{kind}: {}", about.chars().take(CARD_ENTRY_CHARS).collect::<String>())
        })
    });
    let title =
        crate::protocol::text::reveal_hidden(plan_title.as_deref().unwrap_or(&card.summary));
    // The row cuts what does not fit; the name a screen reader reads is bounded too (a command
    // may be 100 KB).
    let title: String = match title.chars().count() > CARD_ENTRY_CHARS {
        true => title.chars().take(CARD_ENTRY_CHARS - 1).chain(['…']).collect(),
        false => title.into_owned(),
    };
    let mut who = card.provenance.agent();
    if let Some(subagent) = &request.agent_id {
        who.push_str(&format!(" · subagent {subagent}"));
    }
    let age = age_text(now - card_arrived_at(ui.ctx(), card, now));
    let kind = match (&card.plan, &card.form) {
        (Some(_), _) => "plan",
        (None, Some(_)) => "form",
        (None, None) => "tool call",
    };
    let detail = format!("{who} · {kind} · {age}");
    let scope = ui.scope_builder(egui::UiBuilder::new().sense(egui::Sense::click()), |ui| {
        let fill = match (current, ui.response().hovered()) {
            (true, _) => tokens.row_chosen,
            (false, true) => tokens.row_hover,
            (false, false) => egui::Color32::TRANSPARENT,
        };
        Frame::new().fill(fill).corner_radius(size::RADIUS).inner_margin(6).show(ui, |ui| {
            ui.set_width(ui.available_width());
            let mark = match (&card.plan, &card.form) {
                (Some(_), _) => "📋",
                (None, Some(_)) => "📝",
                (None, None) => "⚙",
            };
            let text = RichText::new(format!("{mark} {title}")).strong();
            ui.add(Label::new(text).truncate().selectable(false));
            let detail = RichText::new(&detail).small().color(tokens.warning);
            ui.add(Label::new(detail).wrap().selectable(false));
        });
    });
    let label = format!("{title} · {detail}");
    scope.response.widget_info(|| {
        egui::WidgetInfo::selected(egui::Role::Button, true, current, label.as_str())
    });
    scope.response
}

fn idle_ui<R, A>(ui: &mut Ui, state: &State<R, A>) {
    let tokens = Tokens::of(ui.ctx());
    ui.vertical_centered(|ui| {
        ui.add_space(ui.available_height() / 3.0);
        ui.heading("No questions are waiting");
        if let Some(session) = state.session() {
            let agent = session::session_agent(session);
            let text =
                format!("{agent}'s questions and tool permissions appear here when it asks.");
            ui.label(RichText::new(text).color(tokens.muted));
            return;
        }
        let answered = state.answered_count();
        if answered > 0 {
            let plural = if answered == 1 { "" } else { "s" };
            ui.label(
                RichText::new(format!("{answered} request{plural} answered in this session."))
                    .color(tokens.muted),
            );
        }
        ui.label(
            RichText::new("askpane will show the next question when an agent asks.")
                .color(tokens.muted),
        );
    });
}

/// The tabs, the warnings, and the current page of a request.
fn request_ui(
    ui: &mut Ui,
    pending: &Open,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    ui.horizontal_wrapped(|ui| {
        tabs_ui(ui, pending, actions);
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let count = pending.core.ask.questions().len();
            let position = match pending.tab {
                Tab::Question(index) => format!("{} / {count}", index + 1),
                Tab::Review => "Review".to_owned(),
            };
            ui.label(RichText::new(position).color(tokens.muted));
        });
    });
    ui.label(
        RichText::new(format!("Asked by {}", pending.core.provenance.shown()))
            .small()
            .color(tokens.muted),
    );
    if let Some(countdown) = pending.countdown {
        countdown_ui(ui, countdown, actions);
    }
    if !pending.core.warnings.is_empty() {
        warnings_ui(ui, pending);
    }
    ui.separator();
    match pending.tab {
        Tab::Question(index) => question_ui(ui, pending, index, markdown, actions),
        Tab::Review => review_ui(ui, pending, actions),
    }
}

/// The `--timeout` countdown: a bar, the time left, and the ways to stay.
fn countdown_ui(ui: &mut Ui, countdown: Countdown, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    let now = ui.input(|input| input.time);
    let (Some(left), Some(fraction)) = (countdown.left(now), countdown.fraction_left(now)) else {
        let text = "Countdown stopped: the agent waits for your answer.";
        ui.label(RichText::new(text).small().color(tokens.muted));
        return;
    };
    let left = left.ceil() as u64;
    ui.horizontal(|ui| {
        let text = format!("⏱ {}:{:02} left · any key to stay", left / 60, left % 60);
        ui.label(RichText::new(text).strong().color(tokens.warning));
        if small_button(ui, "+1 min").on_hover_text("Give yourself another minute").clicked() {
            actions.push(Action::Edit(Edit::AddTime(ADD_TIME_SECS)));
        }
        if small_button(ui, "Stay").on_hover_text("Stop the countdown").clicked() {
            actions.push(Action::Stay);
        }
    });
    let bar = egui::ProgressBar::new(fraction).desired_height(6.0).fill(tokens.warning);
    ui.add(bar).on_hover_text(
        "When the time runs out, the agent is told nobody answered, with what you picked so far.",
    );
}

fn tabs_ui(ui: &mut Ui, pending: &Open, actions: &mut Vec<Action>) {
    for (index, question) in pending.core.ask.questions().iter().enumerate() {
        let (text, cut) = chip_text(question.header());
        let text = if text.is_empty() { format!("Question {}", index + 1) } else { text };
        let answered = matches!(pending.status(index), Status::Answered(_));
        let label = match answered {
            true => RichText::new(format!("{text} ✔")),
            false => RichText::new(text),
        };
        let selected = pending.tab == Tab::Question(index);
        let mut response = ui.add(Button::selectable(selected, label));
        if cut {
            response = response.on_hover_text(question.header());
        }
        if response.clicked() {
            actions.push(Action::Edit(Edit::ShowTab(Tab::Question(index))));
        }
    }
    let review = ui.add(Button::selectable(pending.tab == Tab::Review, "Review"));
    if review.clicked() {
        actions.push(Action::Edit(Edit::ShowTab(Tab::Review)));
    }
}

fn warnings_ui(ui: &mut Ui, pending: &Open) {
    let tokens = Tokens::of(ui.ctx());
    Frame::new().fill(tokens.warning_fill).corner_radius(size::RADIUS).inner_margin(6).show(
        ui,
        |ui| {
            ui.set_width(ui.available_width());
            let count = pending.core.warnings.len();
            let plural = if count == 1 { "" } else { "s" };
            egui::CollapsingHeader::new(
                RichText::new(format!("⚠ {count} problem{plural} with this request; shown anyway"))
                    .color(tokens.warning),
            )
            .id_salt(("warnings", pending.id()))
            .show(ui, |ui| {
                for warning in &pending.core.warnings {
                    ui.add(
                        Label::new(RichText::new(format!("• {warning}")).color(tokens.warning))
                            .wrap(),
                    );
                }
            });
        },
    );
}

/// Every question with its answer, unanswered ones flagged; Submit from here.
fn review_ui(ui: &mut Ui, pending: &Open, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    ScrollArea::vertical().id_salt(("review", pending.id())).auto_shrink([false, false]).show(
        ui,
        |ui| {
            for (index, question) in pending.core.ask.questions().iter().enumerate() {
                let status = pending.status(index);
                let shown = review_line(pending, index);
                ui.horizontal(|ui| {
                    chip_ui(ui, question.header(), &tokens);
                    if small_button(ui, "Edit").on_hover_text("Go to this question").clicked() {
                        actions.push(Action::Edit(Edit::ShowTab(Tab::Question(index))));
                    }
                });
                let text = crate::protocol::text::reveal_hidden(question.text());
                ui.add(Label::new(RichText::new(text).strong()).wrap().selectable(true));
                let color = match status {
                    Status::Answered(_) => ui.visuals().text_color(),
                    Status::NotAnswered | Status::OtherBlank => tokens.warning,
                };
                let mark = if matches!(status, Status::Answered(_)) { "→" } else { "⚠" };
                let text = RichText::new(format!("{mark} {shown}")).color(color);
                ui.add(Label::new(text).wrap().selectable(true));
                if let Some(notes) = pending
                    .draft(index)
                    .map(|d| d.notes().trim())
                    .filter(|n| !n.is_empty() && !question.secret())
                {
                    let text = RichText::new(format!("Note: {notes}")).color(tokens.muted);
                    ui.add(Label::new(text).wrap().selectable(true));
                }
                ui.add_space(8.0);
            }
        },
    );
}

/// Confirmation bars, the size-limit error, the buttons and the key hint.
fn footer_ui(ui: &mut Ui, pending: &Open, narrow: bool, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    ui.add_space(4.0);
    match &pending.confirm {
        Some(Confirm::Decline { message }) => decline_bar_ui(ui, pending, message, actions),
        Some(Confirm::Reply { text }) => reply_bar_ui(ui, pending, text, actions),
        Some(Confirm::PartialSubmit { missing }) => {
            let names: Vec<String> = missing
                .iter()
                .filter_map(|&index| pending.core.ask.questions().get(index))
                .map(|question| chip_text(question.header()).0)
                .collect();
            let count = missing.len();
            let (text, send) = match count == pending.core.ask.questions().len() {
                true => (
                    "No question is answered. Send that you did not answer? The agent is told \
                     you submitted without answering."
                        .to_owned(),
                    "Send without answers",
                ),
                false => (
                    format!(
                        "{count} of {} questions are not answered ({}). They will be left out. \
                         Submit anyway?",
                        pending.core.ask.questions().len(),
                        names.join(", ")
                    ),
                    "Submit anyway",
                ),
            };
            ui.add(Label::new(RichText::new(text).color(tokens.warning)).wrap());
            ui.horizontal(|ui| {
                // The safe choice first: Enter goes back; only this button or Ctrl+Enter sends.
                if ui.button("Go back").on_hover_text("Keep answering (Enter)").clicked() {
                    actions.push(Action::Edit(Edit::CancelConfirm));
                }
                if ui.button(send).on_hover_text("Send it like this (Ctrl+Enter)").clicked() {
                    actions.push(Action::Edit(Edit::ConfirmSubmit));
                }
            });
        }
        None => {}
    }
    if let Some(error) = &pending.error {
        ui.label(RichText::new(error).color(tokens.warning));
    }
    if narrow {
        // One column: the buttons wrap instead of running off the page, and the keyboard hint
        // (a phone has no such keys) is left out.
        return narrow_footer_buttons_ui(ui, pending, actions);
    }
    ui.horizontal(|ui| {
        let first = pending.tab == Tab::Question(0);
        if ui.add_enabled(!first, Button::new("← Back")).clicked() {
            actions.push(Action::Edit(Edit::PreviousTab));
        }
        if pending.tab != Tab::Review && ui.button("Next →").clicked() {
            actions.push(Action::Edit(Edit::NextTab));
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let submit = Button::new(RichText::new("Submit").color(tokens.on_accent).strong())
                .fill(tokens.accent);
            if !text_bar_open(pending)
                && ui.add(submit).on_hover_text("Send the answers (Ctrl+Enter)").clicked()
            {
                actions.push(Action::Edit(Edit::Submit));
            }
            if pending.confirm.is_none()
                && ui
                    .button("Decline…")
                    .on_hover_text("Tell the agent you will not answer (Esc)")
                    .clicked()
            {
                actions.push(Action::Edit(Edit::AskDecline));
            }
            if pending.confirm.is_none()
                && ui
                    .button("Chat about this")
                    .on_hover_text(
                        "Tell the agent you want to talk before answering; it gets the \
                         questions with what you picked so far",
                    )
                    .clicked()
            {
                actions.push(Action::Edit(Edit::Clarify));
            }
            if pending.confirm.is_none()
                && ui
                    .button("Answer in my own words…")
                    .on_hover_text("Write a reply that replaces the form")
                    .clicked()
            {
                actions.push(Action::Edit(Edit::AskReply));
            }
        });
    });
    ui.add(Label::new(RichText::new(KEY_HINT).small().color(tokens.muted)).truncate())
        .on_hover_text(KEY_HINT);
}

/// True while the decline or reply bar is open: it has its own send button, and Submit is not
/// offered beside it (a click there would throw away what is being written to the agent).
fn text_bar_open(pending: &Open) -> bool {
    matches!(pending.confirm, Some(Confirm::Decline { .. } | Confirm::Reply { .. }))
}

/// The footer's buttons on a narrow page: Submit first and wide, the rest wrapped under it.
fn narrow_footer_buttons_ui(ui: &mut Ui, pending: &Open, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    let submit = Button::new(RichText::new("Submit").color(tokens.on_accent).strong())
        .fill(tokens.accent)
        .min_size(egui::vec2(ui.available_width(), 0.0));
    if !text_bar_open(pending) && ui.add(submit).clicked() {
        actions.push(Action::Edit(Edit::Submit));
    }
    ui.horizontal_wrapped(|ui| {
        let first = pending.tab == Tab::Question(0);
        if ui.add_enabled(!first, Button::new("← Back")).clicked() {
            actions.push(Action::Edit(Edit::PreviousTab));
        }
        if pending.tab != Tab::Review && ui.button("Next →").clicked() {
            actions.push(Action::Edit(Edit::NextTab));
        }
        if pending.confirm.is_none() {
            for (text, edit) in [
                ("Decline…", Edit::AskDecline),
                ("Chat about this", Edit::Clarify),
                ("Own words…", Edit::AskReply),
            ] {
                if ui.button(text).clicked() {
                    actions.push(Action::Edit(edit));
                }
            }
        }
    });
}

/// "Reply instead": the user's own words go back in place of the form's answers.
fn reply_bar_ui(ui: &mut Ui, pending: &Open, text: &str, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    ui.label(RichText::new("Answer in your own words instead of the form").strong());
    let mut reply = text.to_owned();
    let id = egui::Id::unique(("askpane-reply", pending.id()));
    let label_id =
        ui.label(RichText::new("Your reply (Ctrl+Enter sends)").small().color(tokens.muted)).id;
    let response = ui.add(
        egui::TextEdit::multiline(&mut reply)
            .id(id)
            .hint_text("e.g. Let's talk about this before you decide")
            .desired_rows(size::TEXT_ROWS)
            .desired_width(f32::INFINITY),
    );
    let response = response.labelled_by(label_id);
    if response.changed() {
        actions.push(Action::Edit(Edit::SetReplyText(reply)));
    }
    ui.horizontal(|ui| {
        if ui.add_enabled(!text.trim().is_empty(), Button::new("Send reply")).clicked() {
            actions.push(Action::Edit(Edit::ConfirmReply));
        }
        if ui.button("Go back").on_hover_text("Back to the questions (Esc)").clicked() {
            actions.push(Action::Edit(Edit::CancelConfirm));
        }
    });
    if text.is_empty() && !response.has_focus() && ui.memory(|m| m.focused().is_none()) {
        response.request_focus();
    }
}

fn decline_bar_ui(ui: &mut Ui, pending: &Open, message: &str, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    ui.label(RichText::new("Decline these questions?").strong().color(tokens.warning));
    let mut text = message.to_owned();
    let id = egui::Id::unique(("askpane-decline-message", pending.id()));
    let label_id =
        ui.label(RichText::new("Message to the agent (optional)").small().color(tokens.muted)).id;
    let response = ui.add(
        egui::TextEdit::singleline(&mut text)
            .id(id)
            .hint_text("e.g. Use the defaults and tell me what you picked")
            .desired_width(f32::INFINITY),
    );
    let response = response.labelled_by(label_id);
    if response.changed() {
        actions.push(Action::Edit(Edit::SetDeclineMessage(text)));
    }
    let entered = response.lost_focus() && ui.input(|input| input.key_pressed(egui::Key::Enter));
    // OpenCode passes no message on: declining dismisses the question and ends the turn.
    if pending.core.reply_shape.format == Some(crate::protocol::ReplyFormat::OpenCode) {
        let text = format!(
            "OpenCode passes no message on: its model reads only “{}”, and its turn stops.",
            crate::protocol::opencode::DISMISSED_TEXT
        );
        ui.add(Label::new(RichText::new(text).small().color(tokens.warning)).wrap());
    }
    ui.horizontal(|ui| {
        if ui.button("Decline").clicked() || entered {
            actions.push(Action::Edit(Edit::ConfirmDecline));
        }
        // Only a stream-json host can stop the agent's turn along with the decline.
        if matches!(pending.core.envelope, crate::protocol::Envelope::ControlRequest { .. })
            && ui
                .button("Decline and stop Claude")
                .on_hover_text("Also end the agent's turn")
                .clicked()
        {
            actions.push(Action::Edit(Edit::ConfirmDeclineAndStop));
        }
        if ui.button("Go back").on_hover_text("Keep the questions (Esc)").clicked() {
            actions.push(Action::Edit(Edit::CancelConfirm));
        }
    });
    // The message box takes the keyboard as soon as the bar opens.
    if message.is_empty() && !response.has_focus() && ui.memory(|m| m.focused().is_none()) {
        response.request_focus();
    }
}
