//! The plan page (issue 26): Claude Code's plan (`ExitPlanMode`) shown as a document to
//! review, in the central panel as any card is (the request list and the session stay beside
//! it). The markdown is drawn block by block with the commonmark viewer the question
//! preview uses (only the blocks in view are laid out, so a 10 000-line plan costs a screen),
//! with a headings outline to jump to, a comment per block, a general note, and the two ends:
//! Approve (then ask before edits, or accept edits) and Keep planning (sends the review).
//!
//! Keys, never while a text box has the keyboard: ↑/↓ or k/j move the block cursor, `c`
//! comments on the block under it, `n` goes to the note, `a` approves. Ctrl+Enter (in a box
//! too) sends the review with Keep planning. The app's input guard drops every key and click
//! in the first moments after the page appears.

use egui::{
    Align, Frame, Id, Key, Label, Modifiers, Rect, RichText, ScrollArea, Sense, TextEdit, Ui,
    UiBuilder, pos2, vec2,
};
use egui_commonmark::{CommonMarkCache, CommonMarkViewer};

use crate::app::state::Action;
use crate::book::approval::PendingPermission;
use crate::book::plan::{AfterApproval, KEEP_PLANNING_DEFAULT, PlanAction, PlanReview, quote};
use crate::book::session::SessionAction;
use crate::protocol::origin::RequestId;
use crate::view::theme::{Tokens, size};

/// A block over this size is drawn as plain wrapped text: egui_commonmark lays a block out
/// whole every frame.
const MARKDOWN_BLOCK_BYTES: usize = 16 * 1024;

/// A block's height before it is first drawn.
const BLOCK_ESTIMATE: f32 = 28.0;

/// The block cursor of card `id`'s page.
fn cursor_id(id: RequestId) -> Id {
    Id::unique(("askpane-plan-cursor", id))
}

/// Where the page jumps to in its next frame (the outline, the cursor moving).
fn jump_id(id: RequestId) -> Id {
    Id::unique(("askpane-plan-jump", id))
}

/// The comment box of block `block` on card `id`'s page.
pub fn comment_box_id(id: RequestId, block: usize) -> Id {
    Id::unique(("askpane-plan-comment", id, block))
}

/// The general note box of card `id`'s page.
pub fn note_box_id(id: RequestId) -> Id {
    Id::unique(("askpane-plan-note", id))
}

/// Draws the plan page of `card` (whose `plan` is `review`); `keys` is false while a dialog
/// has the keyboard.
pub fn plan_ui(
    ui: &mut Ui,
    card: &PendingPermission,
    review: &PlanReview,
    markdown: &mut CommonMarkCache,
    keys: bool,
    actions: &mut Vec<Action>,
) {
    let id = card.id;
    let plan = |action| Action::Session(SessionAction::Plan { id, action });
    let count = review.blocks.len();
    let mut cursor: usize = ui.data(|data| data.get_temp(cursor_id(id))).unwrap_or(0);
    cursor = cursor.min(count.saturating_sub(1));
    if keys {
        plan_keys(ui, card, review, &mut cursor, actions);
    }
    ui.data_mut(|data| data.insert_temp(cursor_id(id), cursor));
    let tokens = Tokens::of(ui.ctx());
    let narrow = ui.available_width() < size::NARROW_WIDTH;
    let who = match &card.request.agent_id {
        Some(subagent) => format!("A subagent ({subagent}) of Claude"),
        None => "Claude".to_owned(),
    };
    ui.horizontal_wrapped(|ui| {
        ui.heading(format!("{who}'s plan"));
        ui.label(RichText::new(format!("· {}", card.provenance.label())).color(tokens.muted));
    });
    if let Some(path) = &review.file_path {
        ui.add(Label::new(RichText::new(path).small().monospace().color(tokens.muted)).wrap());
    }
    // The footer first, so the document takes the room left.
    egui::Panel::bottom(Id::unique(("askpane-plan-footer", id)))
        .resizable(true)
        .show(ui, |ui| footer_ui(ui, card, review, narrow, actions));
    let outline: Vec<(usize, u8, &str)> = review.outline().collect();
    if !outline.is_empty() {
        let mut jump = None;
        if narrow {
            egui::CollapsingHeader::new("Outline").id_salt(("plan-outline", id)).show(ui, |ui| {
                jump = outline_ui(ui, &outline);
            });
        } else {
            egui::Panel::left(Id::unique(("askpane-plan-outline", id)))
                .resizable(true)
                .default_size(180.0)
                .show(ui, |ui| {
                    ui.label(RichText::new("Outline").strong());
                    ScrollArea::vertical().id_salt("plan-outline").show(ui, |ui| {
                        jump = outline_ui(ui, &outline);
                    });
                });
        }
        if let Some(block) = jump {
            cursor = block;
            ui.data_mut(|data| {
                data.insert_temp(cursor_id(id), block);
                data.insert_temp(jump_id(id), block);
            });
        }
    }
    let jump: Option<usize> = ui.data_mut(|data| data.remove_temp(jump_id(id)));
    document_ui(ui, card, review, markdown, cursor, jump, &plan, actions);
}

/// The page's keys (see the module docs).
fn plan_keys(
    ui: &Ui,
    card: &PendingPermission,
    review: &PlanReview,
    cursor: &mut usize,
    actions: &mut Vec<Action>,
) {
    let id = card.id;
    let plan = |action| Action::Session(SessionAction::Plan { id, action });
    let ctx = ui.ctx();
    if ctx.input_mut(|input| input.consume_key(Modifiers::COMMAND, Key::Enter)) {
        actions.push(plan(PlanAction::KeepPlanning));
        return;
    }
    if ctx.text_edit_focused() {
        return;
    }
    let last = review.blocks.len().saturating_sub(1);
    let mut consumed = false;
    let mut pressed = |key| {
        let hit = ctx.input_mut(|input| input.consume_key(Modifiers::NONE, key));
        consumed |= hit;
        hit
    };
    let mut moved = false;
    if pressed(Key::ArrowDown) || pressed(Key::J) {
        *cursor = (*cursor + 1).min(last);
        moved = true;
    }
    if pressed(Key::ArrowUp) || pressed(Key::K) {
        *cursor = cursor.saturating_sub(1);
        moved = true;
    }
    if moved {
        let block = *cursor;
        ctx.data_mut(|data| data.insert_temp(jump_id(id), block));
    }
    if pressed(Key::C) && !review.blocks.is_empty() {
        actions.push(plan(PlanAction::Comment { block: *cursor }));
        let block = *cursor;
        ctx.memory_mut(|memory| memory.request_focus(comment_box_id(id, block)));
        ctx.data_mut(|data| data.insert_temp(jump_id(id), block));
    }
    if pressed(Key::N) {
        ctx.memory_mut(|memory| memory.request_focus(note_box_id(id)));
    }
    if pressed(Key::A) {
        actions.push(plan(PlanAction::Approve));
    }
    // The letters pressed were keys, not text for the box that takes the focus this frame
    // (`c` must not type a "c" into the comment it opens).
    if consumed {
        ctx.input_mut(|input| input.events.retain(|event| !matches!(event, egui::Event::Text(_))));
    }
}

/// The outline's headings as links; returns the block clicked.
fn outline_ui(ui: &mut Ui, outline: &[(usize, u8, &str)]) -> Option<usize> {
    let mut jump = None;
    for &(block, level, title) in outline {
        ui.horizontal(|ui| {
            ui.add_space(f32::from(level.saturating_sub(1)) * 10.0);
            let title = if title.is_empty() { "(untitled)" } else { title };
            if ui.link(title).clicked() {
                jump = Some(block);
            }
        });
    }
    jump
}

/// The plan's blocks in a scrolled column, only those in view laid out (as `rows::show_rows`
/// does), each with its comment.
#[allow(clippy::too_many_arguments, reason = "one page's parts, drawn once per frame")]
fn document_ui(
    ui: &mut Ui,
    card: &PendingPermission,
    review: &PlanReview,
    markdown: &mut CommonMarkCache,
    cursor: usize,
    jump: Option<usize>,
    plan: &dyn Fn(PlanAction) -> Action,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    if review.blocks.is_empty() {
        ui.label(RichText::new("The plan is empty.").color(tokens.muted));
        return;
    }
    let id = card.id;
    let memory = Id::unique(("askpane-plan-heights", id));
    let mut heights: Vec<f32> =
        ui.data_mut(|data| std::mem::take(data.get_temp_mut_or_default(memory)));
    heights.resize(review.blocks.len(), BLOCK_ESTIMATE);
    let gap = ui.spacing().item_spacing.y;
    ScrollArea::vertical()
        .id_salt(("plan-document", id))
        .auto_shrink([false, false])
        .show_viewport(ui, |ui, viewport| {
            let origin = ui.max_rect().min;
            let width = ui.available_width();
            let mut top = 0.0;
            for (index, height) in heights.iter_mut().enumerate() {
                if jump == Some(index) {
                    let rect = Rect::from_min_size(
                        pos2(origin.x, origin.y + top),
                        vec2(width, height.min(200.0)),
                    );
                    ui.scroll_to_rect(rect, Some(Align::Center));
                }
                if top + *height >= viewport.min.y && top <= viewport.max.y {
                    let room =
                        Rect::from_min_size(pos2(origin.x, origin.y + top), vec2(width, f32::MAX));
                    let builder = UiBuilder::new().max_rect(room).id_salt(("plan-block", index));
                    let mut child = ui.new_child(builder);
                    block_ui(
                        &mut child,
                        card,
                        review,
                        index,
                        index == cursor,
                        markdown,
                        plan,
                        actions,
                    );
                    *height = child.min_rect().height();
                }
                top += *height + gap;
            }
            ui.allocate_rect(
                Rect::from_min_size(origin, vec2(width, top.max(0.0))),
                Sense::hover(),
            );
        });
    ui.data_mut(|data| data.insert_temp(memory, heights));
}

/// One block: its markdown, a Comment button, and its comment when it has one.
#[allow(clippy::too_many_arguments, reason = "one block's parts")]
fn block_ui(
    ui: &mut Ui,
    card: &PendingPermission,
    review: &PlanReview,
    index: usize,
    under_cursor: bool,
    markdown: &mut CommonMarkCache,
    plan: &dyn Fn(PlanAction) -> Action,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    let text = review.block_text(index);
    let stroke = match under_cursor {
        true => egui::Stroke::new(1.5, tokens.accent),
        false => egui::Stroke::new(1.0, egui::Color32::TRANSPARENT),
    };
    Frame::new().stroke(stroke).corner_radius(size::RADIUS).inner_margin(4).show(ui, |ui| {
        ui.set_width(ui.available_width());
        egui::Sides::new().shrink_left().show(
            ui,
            |ui| {
                ui.vertical(|ui| match text.len() > MARKDOWN_BLOCK_BYTES {
                    true => {
                        ui.add(Label::new(text).wrap());
                    }
                    false => {
                        CommonMarkViewer::new().show(ui, markdown, text);
                    }
                });
            },
            |ui| {
                let comment = super::small_button(ui, "Comment")
                    .on_hover_text("Comment on this part of the plan (c)");
                if comment.clicked() {
                    actions.push(plan(PlanAction::Comment { block: index }));
                    let focus = comment_box_id(card.id, index);
                    ui.ctx().memory_mut(|memory| memory.request_focus(focus));
                }
            },
        );
        if let Some(comment) = review.comment(index) {
            comment_ui(ui, card, index, &comment.text, plan, actions);
        }
    });
}

/// A comment's box and its Remove button.
fn comment_ui(
    ui: &mut Ui,
    card: &PendingPermission,
    block: usize,
    text: &str,
    plan: &dyn Fn(PlanAction) -> Action,
    actions: &mut Vec<Action>,
) {
    let tokens = Tokens::of(ui.ctx());
    Frame::new().fill(tokens.code_fill).corner_radius(size::RADIUS).inner_margin(6).show(
        ui,
        |ui| {
            ui.set_width(ui.available_width());
            let label = ui.label(RichText::new("Your comment").small()).id;
            let mut typed = text.to_owned();
            let response = ui.add(
                TextEdit::multiline(&mut typed)
                    .id(comment_box_id(card.id, block))
                    .hint_text("What should change here?")
                    .desired_rows(2)
                    .desired_width(f32::INFINITY),
            );
            if response.labelled_by(label).changed() {
                actions.push(plan(PlanAction::EditComment { block, text: typed }));
            }
            if super::small_button(ui, "Remove comment").clicked() {
                actions.push(plan(PlanAction::RemoveComment { block }));
            }
        },
    );
}

/// The comments listed with their quotes, the note, the choice after approval, and the two
/// buttons.
fn footer_ui(
    ui: &mut Ui,
    card: &PendingPermission,
    review: &PlanReview,
    narrow: bool,
    actions: &mut Vec<Action>,
) {
    let id = card.id;
    let plan = |action| Action::Session(SessionAction::Plan { id, action });
    let tokens = Tokens::of(ui.ctx());
    let written = review.comments.iter().filter(|c| !c.text.trim().is_empty()).count();
    if !review.comments.is_empty() {
        egui::CollapsingHeader::new(format!("Comments ({written})"))
            .id_salt(("plan-comments", id))
            .show(ui, |ui| {
                ScrollArea::vertical().max_height(160.0).show(ui, |ui| {
                    for comment in &review.comments {
                        let quoted = quote(review.block_text(comment.block));
                        ui.label(RichText::new(quoted).small().monospace().color(tokens.muted));
                        ui.horizontal_wrapped(|ui| {
                            let text = comment.text.trim();
                            ui.label(if text.is_empty() { "(empty: not sent)" } else { text });
                            if super::small_button(ui, "Go to").clicked() {
                                ui.data_mut(|data| {
                                    data.insert_temp(cursor_id(id), comment.block);
                                    data.insert_temp(jump_id(id), comment.block);
                                });
                            }
                            let block = comment.block;
                            if super::small_button(ui, "Remove").clicked() {
                                actions.push(plan(PlanAction::RemoveComment { block }));
                            }
                        });
                    }
                });
            });
    }
    let label = ui.label("General note (optional)").id;
    let mut note = review.note.clone();
    let response = ui.add(
        TextEdit::multiline(&mut note)
            .id(note_box_id(id))
            .hint_text("Anything else Claude should know (n)")
            .desired_rows(if narrow { 2 } else { 3 })
            .desired_width(f32::INFINITY),
    );
    if response.labelled_by(label).changed() {
        actions.push(plan(PlanAction::SetNote(note)));
    }
    let mut then = review.then;
    let choices = |ui: &mut Ui, then: &mut AfterApproval| {
        ui.radio_value(then, AfterApproval::KeepAsking, "then ask before edits");
        ui.radio_value(then, AfterApproval::AcceptEdits, "then accept edits");
    };
    match narrow {
        true => {
            ui.vertical(|ui| choices(ui, &mut then));
        }
        false => {
            ui.horizontal_wrapped(|ui| choices(ui, &mut then));
        }
    }
    if then != review.then {
        actions.push(plan(PlanAction::SetThen(then)));
    }
    ui.horizontal_wrapped(|ui| {
        let approve = ui.button(RichText::new("Approve").strong());
        let approve_hint = match review.then {
            AfterApproval::KeepAsking => "Claude leaves plan mode; each edit still asks (a)",
            AfterApproval::AcceptEdits => "Claude leaves plan mode and edits without asking (a)",
        };
        if approve.on_hover_text(approve_hint).clicked() {
            actions.push(plan(PlanAction::Approve));
        }
        let keep = ui.button("Keep planning");
        let keep_hint = match review.has_feedback() {
            true => "Sends your comments and note; Claude stays in plan mode (Ctrl+Enter)",
            false => "Nothing written: sends a message asking Claude to ask you what to change",
        };
        if keep.on_hover_text(keep_hint).clicked() {
            actions.push(plan(PlanAction::KeepPlanning));
        }
    });
    if !review.has_feedback() {
        let words = format!("Keep planning with nothing written sends: “{KEEP_PLANNING_DEFAULT}”");
        ui.add(Label::new(RichText::new(words).small().color(tokens.muted)).wrap());
    }
}
