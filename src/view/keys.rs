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
    // The decline and reply bars hold a text box: Esc there goes back, Ctrl+Enter sends.
    let text_bar_open =
        matches!(pending.confirm, Some(Confirm::Decline { .. } | Confirm::Reply { .. }));
    let reply_open = matches!(pending.confirm, Some(Confirm::Reply { .. }));
    let prompt_focused = ctx.memory(|memory| memory.has_focus(super::session::prompt_id()));
    ctx.input_mut(|input| {
        // Ctrl+Enter in the session's prompt box sends the prompt, not the answers.
        if !prompt_focused && input.consume_key(Modifiers::COMMAND, Key::Enter) {
            actions.push(if reply_open { Action::ConfirmReply } else { Action::Submit });
        }
        if text_bar_open && input.consume_key(Modifiers::NONE, Key::Escape) {
            actions.push(Action::CancelConfirm);
        }
    });
    if typing_now || typing_before {
        return;
    }
    // Keys are taken in the order they were pressed, several per frame if need be (a fast typist,
    // xdotool): a digit after Enter belongs to the next question.
    let mut tab = pending.tab;
    let mut focus = None;
    ctx.input_mut(|input| {
        let mut handled = Vec::new();
        for (position, event) in input.events.iter().enumerate() {
            let egui::Event::Key { key, pressed: true, modifiers, .. } = event else { continue };
            let Some(shortcut) = shortcut(pending, tab, *key, *modifiers) else { continue };
            handled.push(position);
            let action = match shortcut {
                Shortcut::Note(question) => {
                    focus = Some(notes_id(pending.id, question));
                    continue;
                }
                Shortcut::Act(action) => action,
            };
            let submits = action == Action::Advance && tab == Tab::Review;
            match &action {
                Action::NextTab => tab = pending.tab_after(tab),
                Action::PreviousTab => tab = pending.tab_before(tab),
                Action::Advance if tab != Tab::Review => tab = pending.tab_after(tab),
                Action::Pick { question, pick: Pick::Other } => {
                    focus = Some(other_text_id(pending.id, *question));
                }
                _ => {}
            }
            let ends_frame = submits
                || matches!(
                    action,
                    Action::AskDecline | Action::CancelConfirm | Action::ConfirmSubmit
                );
            actions.push(action);
            if ends_frame {
                // The screen changes under the next keys (a confirmation, a submit): stop here.
                break;
            }
        }
        let mut position = 0;
        input.events.retain(|_| {
            position += 1;
            !handled.contains(&(position - 1))
        });
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

/// What one key press does.
enum Shortcut {
    Act(Action),
    /// N: write a note on this question.
    Note(usize),
}

/// The shortcut of one key press on `tab` of `pending`, if the key is one there.
fn shortcut(pending: &Pending, tab: Tab, key: Key, modifiers: Modifiers) -> Option<Shortcut> {
    let plain = modifiers.is_none();
    let act = |action| Some(Shortcut::Act(action));
    match key {
        Key::Escape if plain => act(match pending.confirm {
            Some(_) => Action::CancelConfirm,
            None => Action::AskDecline,
        }),
        Key::Enter if plain => act(match pending.confirm {
            Some(Confirm::PartialSubmit { .. }) => Action::ConfirmSubmit,
            _ => Action::Advance,
        }),
        Key::Tab if modifiers.shift_only() => act(Action::PreviousTab),
        Key::Tab | Key::ArrowRight if plain => act(Action::NextTab),
        Key::ArrowLeft if plain => act(Action::PreviousTab),
        _ if !plain => None,
        _ => {
            let Tab::Question(question) = tab else { return None };
            let options = pending.ask.questions().get(question)?.options().len();
            let cursor = pending.cursor.get(question).copied().unwrap_or(0);
            let pick = |pick| act(Action::Pick { question, pick });
            match (key, DIGITS.iter().position(|digit| *digit == key)) {
                (Key::ArrowDown, _) => act(Action::MoveCursor(1)),
                (Key::ArrowUp, _) => act(Action::MoveCursor(-1)),
                (Key::Space, _) if cursor >= options => pick(Pick::Other),
                (Key::Space, _) => act(Action::PickAtCursor),
                (Key::N, _) => Some(Shortcut::Note(question)),
                (_, Some(index)) if index < options => pick(Pick::Option(index)),
                (_, Some(index)) if index == options => pick(Pick::Other),
                _ => None,
            }
        }
    }
}

/// Call after drawing: records whether a text box has focus at the end of this frame.
pub fn remember_typing(ctx: &Context) {
    let typing = ctx.text_edit_focused();
    ctx.data_mut(|data| data.insert_temp(typing_memory_id(), typing));
}
