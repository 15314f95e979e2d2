//! Keyboard answering: 1–9 pick, ↑/↓ move, Space toggles, Enter next/submit, Tab and ←/→ switch
//! questions, N writes a note, Ctrl+Enter submits, Esc asks to decline.
//!
//! The app owns the keyboard: egui's own focus only ever rests on a text box. Keys typed into a
//! text box never trigger shortcuts (Ctrl+Enter, and Esc in the decline box, excepted).

use egui::{Context, FocusDirection, Id, Key, Modifiers};

use crate::app::state::{Action, Confirm, Pending, Tab};
use crate::protocol::Pick;

use super::question::{notes_id, other_text_id};

const DIGITS: [Key; 9] = [
    Key::Num1,
    Key::Num2,
    Key::Num3,
    Key::Num4,
    Key::Num5,
    Key::Num6,
    Key::Num7,
    Key::Num8,
    Key::Num9,
];

/// Remembers across frames whether a text box had focus, so the key that left it (Esc) does not
/// also act as a shortcut.
fn typing_memory_id() -> Id {
    Id::unique("askpane-text-focus-last-frame")
}

/// Reads this frame's keys for the current request. Call before drawing, so keys it uses never
/// reach a widget.
pub fn keyboard_actions(ctx: &Context, pending: &Pending, actions: &mut Vec<Action>) {
    let typing_now = ctx.text_edit_focused();
    let typing_before = ctx.data(|data| data.get_temp::<bool>(typing_memory_id())).unwrap_or(false);
    if !typing_now {
        // Buttons never keep focus: Space and Enter belong to the shortcuts below, and a focused
        // button would act on them a second time.
        if let Some(focused) = ctx.memory(|memory| memory.focused()) {
            ctx.memory_mut(|memory| memory.surrender_focus(focused));
        }
    }
    let decline_open = matches!(pending.confirm, Some(Confirm::Decline { .. }));
    ctx.input_mut(|input| {
        if input.consume_key(Modifiers::COMMAND, Key::Enter) {
            actions.push(Action::Submit);
        }
        if decline_open && input.consume_key(Modifiers::NONE, Key::Escape) {
            actions.push(Action::CancelConfirm);
        }
    });
    if typing_now || typing_before {
        return;
    }
    let mut focus = None;
    ctx.input_mut(|input| {
        let mut pressed_with = |modifiers, key| input.consume_key(modifiers, key);
        if pressed_with(Modifiers::NONE, Key::Escape) {
            actions.push(match pending.confirm {
                Some(_) => Action::CancelConfirm,
                None => Action::AskDecline,
            });
        }
        if pressed_with(Modifiers::NONE, Key::Enter) {
            actions.push(match pending.confirm {
                Some(Confirm::PartialSubmit { .. }) => Action::ConfirmSubmit,
                _ => Action::Advance,
            });
        }
        // Shift+Tab first: `consume_key` ignores an extra Shift, so plain Tab would take it.
        if pressed_with(Modifiers::SHIFT, Key::Tab) || pressed_with(Modifiers::NONE, Key::ArrowLeft)
        {
            actions.push(Action::PreviousTab);
        }
        if pressed_with(Modifiers::NONE, Key::Tab) || pressed_with(Modifiers::NONE, Key::ArrowRight)
        {
            actions.push(Action::NextTab);
        }
        let Tab::Question(question) = pending.tab else { return };
        let Some(options) = pending.ask.questions().get(question).map(|q| q.options().len()) else {
            return;
        };
        if pressed_with(Modifiers::NONE, Key::ArrowDown) {
            actions.push(Action::MoveCursor(1));
        }
        if pressed_with(Modifiers::NONE, Key::ArrowUp) {
            actions.push(Action::MoveCursor(-1));
        }
        let cursor = pending.cursor.get(question).copied().unwrap_or(0);
        let mut pick = |pick| {
            actions.push(Action::Pick { question, pick });
            if pick == Pick::Other {
                focus = Some(other_text_id(pending.id, question));
            }
        };
        if pressed_with(Modifiers::NONE, Key::Space) {
            pick(if cursor < options { Pick::Option(cursor) } else { Pick::Other });
        }
        for (index, key) in DIGITS.into_iter().enumerate() {
            if pressed_with(Modifiers::NONE, key) {
                match index {
                    index if index < options => pick(Pick::Option(index)),
                    index if index == options => pick(Pick::Other),
                    _ => {}
                }
            }
        }
        if pressed_with(Modifiers::NONE, Key::N) {
            focus = Some(notes_id(pending.id, question));
        }
        if focus.is_some() {
            // The key that opened a text box ("5" for Other, "N") must not be typed into it.
            input.events.retain(|event| !matches!(event, egui::Event::Text(_)));
        }
    });
    // Tab and the arrows were ours; keep egui from also moving its focus with them.
    ctx.memory_mut(|memory| {
        memory.move_focus(FocusDirection::None);
        if let Some(id) = focus {
            memory.request_focus(id);
        }
    });
}

/// Call after drawing: records whether a text box has focus at the end of this frame.
pub fn remember_typing(ctx: &Context) {
    let typing = ctx.text_edit_focused();
    ctx.data_mut(|data| data.insert_temp(typing_memory_id(), typing));
}
