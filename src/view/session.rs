//! An agent session beside the questions: the transcript, permission cards, the prompt box.
//!
//! The transcript shows assistant text as markdown, each tool call as a one-line summary that
//! expands to its input, tool results folded, and each turn's result (turns, time, cost).

use egui::{CollapsingHeader, Frame, Key, Label, Modifiers, RichText, ScrollArea, TextEdit, Ui};
use egui_commonmark::{CommonMarkCache, CommonMarkViewer};

use crate::app::state::{Action, Earlier, Entry, PendingPermission, Session, SessionAction};
use crate::protocol::origin::SessionKey;
use crate::protocol::permission::ApprovalOrigin;
use crate::protocol::stream::TurnResult;
use crate::view::theme::{Tokens, size};

use super::rows;

/// The prompt box's id (the keyboard handling leaves Ctrl+Enter to it when it has focus).
pub fn prompt_id() -> egui::Id {
    egui::Id::unique("askpane-session-prompt")
}

/// The transcript with the prompt box and Stop under it.
/// One selectable name per agent session (the inbox hosts several), the shown one selected.
pub fn session_switcher_ui<'a>(
    ui: &mut Ui,
    sessions: impl Iterator<Item = (SessionKey, &'a Session, bool)>,
    actions: &mut Vec<Action>,
) {
    ui.horizontal_wrapped(|ui| {
        for (key, session, shown) in sessions {
            let name = session.label.as_deref().unwrap_or("this session");
            let text = match (&session.ended, session.busy) {
                (Some(_), _) => format!("{name} (ended)"),
                (None, true) => format!("{name} …"),
                (None, false) => name.to_owned(),
            };
            if ui.selectable_label(shown, text).clicked() && !shown {
                actions.push(Action::Session(SessionAction::SelectSession(key)));
            }
        }
    });
    ui.separator();
}

pub fn session_ui(
    ui: &mut Ui,
    session: &Session,
    markdown: &mut CommonMarkCache,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    let agent = session_agent(session);
    ui.horizontal(|ui| {
        ui.label(RichText::new(agent).strong());
        let mut facts = Vec::new();
        facts.extend(session.label.clone());
        if let Some(info) = &session.info {
            facts.extend(info.version.clone());
            facts.extend(info.model.clone());
        }
        let status = match (&session.ended, session.busy) {
            (Some((status, _)), _) => format!("ended ({status})"),
            (None, true) => "working…".to_owned(),
            (None, false) => "waiting for you".to_owned(),
        };
        facts.push(status);
        ui.label(RichText::new(facts.join(" · ")).small().color(tokens.muted));
    });
    egui::Panel::bottom("session-prompt").show(ui, |ui| {
        stuck_ui(ui, session, actions);
        prompt_ui(ui, session, actions);
    });
    egui::CentralPanel::no_frame().show(ui, |ui| {
        // One scroll position and one set of row heights per session the inbox shows.
        let salt = ("transcript", session.label.as_deref());
        let scroll =
            ScrollArea::vertical().id_salt(salt).stick_to_bottom(true).auto_shrink([false, false]);
        let entries = session.entries().len();
        // Issue 24: a long transcript keeps its newest entries; the first row says how many
        // earlier ones are not here (a page can ask for them).
        let earlier = session.earlier();
        let note = usize::from(earlier.note().is_some());
        // Only the rows in view are laid out: a session of 10 000 events costs what a screen
        // of them costs. The last row says how the agent ended, when it did.
        let rows = note + entries + usize::from(session.ended.is_some());
        let id = ui.make_persistent_id(salt);
        rows::show_rows(ui, scroll, id, rows, ROW_ESTIMATE, |ui, row| {
            let Some(index) = row.checked_sub(note) else {
                return earlier_ui(ui, earlier, actions);
            };
            match session.entries().get(index) {
                // Numbered from the session's start: a row keeps its folding as older go.
                Some(entry) => entry_ui(ui, session.first() + index, entry, markdown),
                None => ended_ui(ui, session),
            }
        });
    });
}

/// The agent's name, once the session has said which it is (before: Claude Code).
pub fn session_agent(session: &Session) -> &'static str {
    session.info.as_ref().map(|info| info.agent).unwrap_or_default().name()
}

/// The height a transcript row is taken to have before it is first shown (one line of text).
const ROW_ESTIMATE: f32 = 20.0;

/// The line above the first entry when earlier ones are not here: how many, and in a browser
/// page a button that asks the bridge for those it still keeps.
fn earlier_ui(ui: &mut Ui, earlier: Earlier, actions: &mut Vec<Action>) {
    let Some(note) = earlier.note() else { return };
    let tokens = Tokens::of(ui.ctx());
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(note).small().color(tokens.muted));
        if earlier.loadable > 0 && ui.small_button("Show earlier").clicked() {
            actions.push(Action::Session(SessionAction::ShowEarlier));
        }
    });
}

/// How the agent ended, and the last lines it wrote to stderr.
fn ended_ui(ui: &mut Ui, session: &Session) {
    let Some((status, stderr_tail)) = &session.ended else { return };
    let tokens = Tokens::of(ui.ctx());
    let text = format!("{} ended ({status}).", session_agent(session));
    ui.label(RichText::new(text).color(tokens.warning));
    for line in stderr_tail {
        ui.add(Label::new(RichText::new(line).monospace().small()).wrap());
    }
}

fn entry_ui(ui: &mut Ui, index: usize, entry: &Entry, markdown: &mut CommonMarkCache) {
    let tokens = Tokens::of(ui.ctx());
    match entry {
        Entry::User(text) => {
            Frame::new().fill(tokens.row_chosen).corner_radius(size::RADIUS).inner_margin(6).show(
                ui,
                |ui| {
                    ui.set_width(ui.available_width());
                    ui.add(Label::new(RichText::new(text).strong()).wrap().selectable(true));
                },
            );
        }
        Entry::Assistant(text) => {
            CommonMarkViewer::new().show(ui, markdown, text);
        }
        Entry::Thinking(text) => {
            CollapsingHeader::new(RichText::new("Thinking").italics().color(tokens.muted))
                .id_salt(("thinking", index))
                .show(ui, |ui| {
                    ui.add(Label::new(RichText::new(text).color(tokens.muted)).wrap());
                });
        }
        Entry::ToolCall { summary, input, .. } => {
            // One line however long the call: cut to the panel, never widening it.
            ui.scope(|ui| {
                ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
                CollapsingHeader::new(RichText::new(format!("⚙ {summary}")).monospace())
                    .id_salt(("tool-call", index))
                    .show(ui, |ui| code_ui(ui, input));
            });
        }
        Entry::ToolResult { content, is_error, .. } => {
            let lines = content.lines().count();
            let (mark, color) = match is_error {
                true => ("↳ error", tokens.warning),
                false => ("↳ result", tokens.muted),
            };
            let plural = if lines == 1 { "" } else { "s" };
            let title = RichText::new(format!("{mark} ({lines} line{plural})")).color(color);
            CollapsingHeader::new(title)
                .id_salt(("tool-result", index))
                .show(ui, |ui| code_ui(ui, content));
        }
        Entry::TurnEnded(result) => {
            ui.label(RichText::new(turn_summary(result)).small().color(tokens.muted));
            ui.separator();
        }
    }
}

/// `— success · 2 turns · 1.4 s · $0.0021 —`
pub fn turn_summary(result: &TurnResult) -> String {
    let mut parts = vec![result.subtype.replace('_', " ")];
    if let Some(turns) = result.num_turns {
        parts.push(format!("{turns} turn{}", if turns == 1 { "" } else { "s" }));
    }
    if let Some(ms) = result.duration_ms {
        parts.push(format!("{:.1} s", ms as f64 / 1000.0));
    }
    if let Some(cost) = result.total_cost_usd {
        parts.push(format!("${cost:.4}"));
    }
    format!("— {} —", parts.join(" · "))
}

fn code_ui(ui: &mut Ui, text: &str) {
    let tokens = Tokens::of(ui.ctx());
    Frame::new().fill(tokens.code_fill).corner_radius(size::RADIUS).inner_margin(6).show(
        ui,
        |ui| {
            ScrollArea::both().max_height(240.0).auto_shrink([false, true]).show(ui, |ui| {
                ui.add(Label::new(RichText::new(text).monospace()).extend().selectable(true));
            });
        },
    );
}

fn prompt_ui(ui: &mut Ui, session: &Session, actions: &mut Vec<Action>) {
    let ended = session.ended.is_some();
    let id = prompt_id();
    // Ctrl+Enter sends, taken before the box sees it (the box would insert a newline).
    if ui.memory(|memory| memory.has_focus(id))
        && ui.input_mut(|input| input.consume_key(Modifiers::COMMAND, Key::Enter))
    {
        actions.push(Action::Session(SessionAction::SendPrompt));
    }
    let label_id = ui.label(RichText::new("Prompt").small()).id;
    let mut text = session.prompt.clone();
    let agent = session_agent(session);
    let hint = match (ended, session.entries().is_empty() && session.first() == 0) {
        (true, _) => format!("{agent} has ended"),
        (false, true) => format!("What should {agent} do? (Ctrl+Enter sends)"),
        (false, false) => format!("A follow-up for {agent} (Ctrl+Enter sends)"),
    };
    let response = ui.add_enabled(
        !ended,
        TextEdit::multiline(&mut text)
            .id(id)
            .hint_text(hint)
            .desired_rows(size::TEXT_ROWS)
            .desired_width(f32::INFINITY),
    );
    if response.labelled_by(label_id).changed() {
        actions.push(Action::Session(SessionAction::SetPrompt(text)));
    }
    ui.horizontal(|ui| {
        let can_send = !ended && !session.prompt.trim().is_empty();
        if ui.add_enabled(can_send, egui::Button::new("Send")).clicked() {
            actions.push(Action::Session(SessionAction::SendPrompt));
        }
        let can_stop = !ended && session.busy;
        let stop = ui.add_enabled(can_stop, egui::Button::new("Stop"));
        if stop.on_hover_text("Interrupt the current turn").clicked() {
            actions.push(Action::Session(SessionAction::Stop));
        }
        // A session an inbox client hosts ends here (its own window ends it by closing).
        if session.label.is_some() && !ended {
            let end = ui.button("End session");
            let hover = format!("End {agent}, as closing its window would");
            if end.on_hover_text(hover).clicked() {
                actions.push(Action::Session(SessionAction::End));
            }
        }
    });
}

/// A turn that looks stuck (issue 28): how long the agent has been silent, and End turn, which
/// asks the agent to cancel and ends the turn on askpane's side whatever the agent does.
fn stuck_ui(ui: &mut Ui, session: &Session, actions: &mut Vec<Action>) {
    let (Some(silent_secs), true, None) = (session.stuck, session.busy, &session.ended) else {
        return;
    };
    let tokens = Tokens::of(ui.ctx());
    Frame::new()
        .fill(tokens.warning_fill)
        .stroke(egui::Stroke::new(1.0, tokens.warning))
        .corner_radius(size::RADIUS)
        .inner_margin(8)
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            let text = format!(
                "The agent has sent nothing for {silent_secs} s with nothing asked of you: the \
                 turn may be stuck."
            );
            ui.add(Label::new(RichText::new(text).color(tokens.warning)).wrap());
            let end = ui.button("End turn");
            let hover = "Ask the agent to cancel (session/cancel) and end the turn here, \
                         whether or not it answers";
            if end.on_hover_text(hover).clicked() {
                actions.push(Action::Session(SessionAction::Stop));
            }
        });
    ui.add_space(4.0);
}

/// A tool the agent wants to run: what it would do, Allow once, Deny with a message.
pub fn permission_ui(ui: &mut Ui, permission: &PendingPermission, actions: &mut Vec<Action>) {
    let tokens = Tokens::of(ui.ctx());
    let request = &permission.request;
    Frame::new()
        .fill(tokens.warning_fill)
        .stroke(egui::Stroke::new(1.0, tokens.warning))
        .corner_radius(size::RADIUS)
        .inner_margin(10)
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            let agent = permission.provenance.agent_name();
            let who = match &request.agent_id {
                Some(subagent) => format!("A subagent ({subagent})"),
                None => agent.to_owned(),
            };
            let title = request
                .title
                .clone()
                .unwrap_or_else(|| format!("{who} wants to use {}", request.tool_name));
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(title).strong());
                // Which session asks: the inbox shows the cards of several side by side.
                let from = permission.provenance.label();
                ui.label(RichText::new(format!("· {from}")).small().color(tokens.muted));
            });
            for text in [&request.description, &request.reason].into_iter().flatten() {
                ui.add(Label::new(RichText::new(text).color(tokens.muted)).wrap());
            }
            ui.push_id(permission.id, |ui| super::tool_call::tool_call_ui(ui, &permission.view));
            let mut message = permission.deny_message.clone();
            let label_id = ui.label(RichText::new("Message with the denial (optional)").small()).id;
            let response = ui.add(
                TextEdit::singleline(&mut message)
                    .id(egui::Id::unique(("askpane-deny", permission.id)))
                    .hint_text("e.g. Use cargo check instead")
                    .desired_width(f32::INFINITY),
            );
            if response.labelled_by(label_id).changed() {
                let id = permission.id;
                actions.push(Action::Session(SessionAction::SetDenyMessage { id, text: message }));
            }
            let id = permission.id;
            ui.horizontal_wrapped(|ui| {
                if ui.button("Allow once").clicked() {
                    actions.push(Action::Session(SessionAction::AllowPermission(id)));
                }
                // One "Always …" per rule the agent suggested, in its own words for a person.
                for (suggestion, rule) in request.suggestions.iter().enumerate() {
                    let always = ui.button(rule.label());
                    let hover = match request.origin {
                        ApprovalOrigin::OpenCode => {
                            "Allow this call, and later calls like it, as OpenCode proposes"
                        }
                        ApprovalOrigin::Hosted | ApprovalOrigin::Hook => {
                            "Allow this call and add the rule Claude Code suggested"
                        }
                    };
                    if always.on_hover_text(hover).clicked() {
                        let action = SessionAction::AlwaysAllowPermission { id, suggestion };
                        actions.push(Action::Session(action));
                    }
                }
                if ui.button("Deny").clicked() {
                    actions.push(Action::Session(SessionAction::DenyPermission(id)));
                }
                // The agent's own "deny always" choices (ACP's reject_always), by their names.
                for (rule, deny) in request.deny_always.iter().enumerate() {
                    let always = ui.button(&deny.name);
                    let hover = "Deny this call, choosing the agent's own option to refuse such \
                                 calls from now on";
                    if always.on_hover_text(hover).clicked() {
                        let action = SessionAction::AlwaysDenyPermission { id, rule };
                        actions.push(Action::Session(action));
                    }
                }
                // Only a hook, or OpenCode's TUI, has a dialog of its own to hand the call back to.
                let hand_back = match request.origin {
                    ApprovalOrigin::Hosted => None,
                    ApprovalOrigin::Hook => Some((
                        "Answer in the terminal",
                        "Decide nothing here: the agent asks in its own dialog",
                    )),
                    ApprovalOrigin::OpenCode => Some((
                        "Answer in OpenCode",
                        "Decide nothing here: the call waits for OpenCode's own TUI",
                    )),
                };
                if let Some((label, hover)) = hand_back {
                    let back = ui.button(label);
                    if back.on_hover_text(hover).clicked() {
                        actions.push(Action::Session(SessionAction::HandBackPermission(id)));
                    }
                }
            });
        });
}
