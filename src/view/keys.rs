//! Keyboard answering: 1–9 pick, ↑/↓ move, Enter picks the highlighted option and moves on,
//! Space toggles, typing starts the Other answer, Alt+N writes a note, Tab and ←/→ switch
//! questions, PageUp/PageDown scroll the preview, Ctrl+PageUp/PageDown switch requests,
//! Ctrl+Enter submits, Esc asks to decline, Ctrl+W closes.
//!
//! The app owns the keyboard: egui's own focus rests on a text box or on the row under the
//! cursor. Keys typed into a text box never trigger shortcuts (Enter in the Other and note
//! boxes, Ctrl+Enter, Ctrl+W, and Esc in the decline box excepted). Keys are taken in the order
//! they were pressed, several per frame if need be (a fast typist, xdotool).

use egui::{Context, Event, FocusDirection, Id, Key, Modifiers};

use crate::app::state::{Action, Confirm, Edit, Open, Shown, Tab};
use crate::protocol::Pick;

use super::preview::preview_scroll_id;
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

/// Remembers across frames whether a text box had focus, so the key that left it (Esc, Enter)
/// does not also act as a shortcut.
fn typing_memory_id() -> Id {
    Id::unique("askpane-text-focus-last-frame")
}

/// Where the keys that follow a focus change in the same frame wait for the next frame, so they
/// reach the box that now has the keyboard rather than the one that had it.
fn carried_keys_id() -> Id {
    Id::unique("askpane-keys-carried-to-the-next-frame")
}

/// A focus change and the keys after it, carried to the next frame: the keys before it reach
/// the box that has the keyboard in this one.
#[derive(Clone, Default)]
struct Carried {
    focus: Option<Id>,
    events: Vec<Event>,
}

/// The requests before and after the current one in the list as it is shown: where
/// Ctrl+PgUp and Ctrl+PgDn go (the list wraps round).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Neighbours {
    pub previous: Option<Shown>,
    pub next: Option<Shown>,
}

/// Reads this frame's keys for the current request. Call before drawing, so keys it uses never
/// reach a widget.
pub fn keyboard_actions(
    ctx: &Context,
    pending: &Open,
    neighbours: Neighbours,
    actions: &mut Vec<Action>,
) {
    let moved_to_a_box = take_carried_keys(ctx);
    // A box the keyboard was just moved to is typed in, though it has not been drawn yet.
    let typing_now = ctx.text_edit_focused() || moved_to_a_box;
    let typing_before = ctx.data(|data| data.get_temp::<bool>(typing_memory_id())).unwrap_or(false);
    if !typing_now {
        // Buttons never keep focus: Space and Enter belong to the shortcuts below, and a focused
        // button would act on them a second time. (The row under the cursor takes it back.)
        if let Some(focused) = ctx.memory(|memory| memory.focused()) {
            ctx.memory_mut(|memory| memory.surrender_focus(focused));
        }
    }
    chord_actions(ctx, pending, neighbours, actions);
    if typing_now {
        note_key_in_a_box(ctx, pending);
        enter_leaves_answer_box(ctx, pending, actions);
        return;
    }
    if typing_before {
        return;
    }
    let (focus, preview_pages) = shortcut_actions(ctx, pending, actions);
    if preview_pages != 0.0 {
        ctx.data_mut(|data| data.insert_temp(preview_scroll_id(), preview_pages));
    }
    // Tab and the arrows were ours; keep egui from also moving its focus with them.
    ctx.memory_mut(|memory| {
        memory.move_focus(FocusDirection::None);
        if let Some(id) = focus {
            memory.request_focus(id);
        }
    });
}

/// Puts back the keys carried from the last frame (see [`Carried`]) before this frame's, moving
/// the keyboard where it was going. True when it moved the keyboard to a text box.
fn take_carried_keys(ctx: &Context) -> bool {
    let Some(Carried { focus, events }) =
        ctx.data_mut(|data| data.remove_temp::<Carried>(carried_keys_id()))
    else {
        return false;
    };
    if let Some(id) = focus {
        ctx.memory_mut(|memory| memory.request_focus(id));
    }
    ctx.input_mut(|input| {
        input.events.splice(0..0, events);
    });
    focus.is_some()
}

/// The chords that work from a text box too: Ctrl+Enter sends (or confirms what is being
/// confirmed), Ctrl+W closes (dropping the keys after it), Esc leaves the decline and reply bars,
/// Ctrl+PgUp and Ctrl+PgDn go to the previous and next request.
fn chord_actions(ctx: &Context, pending: &Open, neighbours: Neighbours, actions: &mut Vec<Action>) {
    // The decline and reply bars hold a text box: Esc there goes back, Ctrl+Enter sends.
    let text_bar_open =
        matches!(pending.confirm, Some(Confirm::Decline { .. } | Confirm::Reply { .. }));
    let prompt_focused = ctx.memory(|memory| memory.has_focus(super::session::prompt_id()));
    ctx.input_mut(|input| {
        // Ctrl+Enter in the session's prompt box sends the prompt, not the answers.
        if !prompt_focused && input.consume_key(Modifiers::COMMAND, Key::Enter) {
            actions.push(Action::Edit(match pending.confirm {
                Some(Confirm::Reply { .. }) => Edit::ConfirmReply,
                // As Enter in its box: the decline with the words typed, never the form.
                Some(Confirm::Decline { .. }) => Edit::ConfirmDecline,
                // The explicit chord sends what a plain Enter would not.
                Some(Confirm::PartialSubmit { .. }) => Edit::ConfirmSubmit,
                _ => Edit::Submit,
            }));
        }
        if let Some(at) = close_key_position(&input.events) {
            actions.push(Action::RequestClose);
            // Ctrl+W and the keys pressed after it this frame go: those were pressed before its
            // dialog could show and must not act on the form behind it (a busy frame once gave
            // them to it, and Enter sent an answer). Keys before it still count.
            let from_close = input.events.split_off(at);
            input.events.extend(from_close.into_iter().filter(|event| {
                !matches!(event, Event::Key { pressed: true, .. } | Event::Text(_))
            }));
        }
        if text_bar_open && input.consume_key(Modifiers::NONE, Key::Escape) {
            actions.push(Action::Edit(Edit::CancelConfirm));
        }
        // Ctrl+PgUp / Ctrl+PgDn: the previous or next waiting request, from a box too.
        for (key, to) in [(Key::PageUp, neighbours.previous), (Key::PageDown, neighbours.next)] {
            if input.consume_key(Modifiers::COMMAND, key)
                && let Some(to) = to
            {
                actions.push(Action::select(to));
            }
        }
    });
}

/// The keys while a tool call's card is shown (issue 26): the window's own (as when idle), and
/// Ctrl+PgUp / Ctrl+PgDn to the previous or next entry of the list.
pub fn card_keyboard_actions(
    ctx: &Context,
    receipt: bool,
    neighbours: Neighbours,
    actions: &mut Vec<Action>,
) {
    idle_keyboard_actions(ctx, receipt, actions);
    ctx.input_mut(|input| {
        for (key, to) in [(Key::PageUp, neighbours.previous), (Key::PageDown, neighbours.next)] {
            if input.consume_key(Modifiers::COMMAND, key)
                && let Some(to) = to
            {
                actions.push(Action::select(to));
            }
        }
    });
}

/// The form's shortcuts among this frame's keys (outside a text box): each key that is one
/// becomes an action and is used up; the first that types text starts the Other answer. Stops
/// at a key that changes the screen under the next ones. Returns the box to focus and the
/// preview pages to scroll by.
fn shortcut_actions(ctx: &Context, pending: &Open, actions: &mut Vec<Action>) -> (Option<Id>, f32) {
    let mut tab = pending.tab;
    let mut focus = None;
    let mut preview_pages = 0.0_f32;
    ctx.input_mut(|input| {
        let typed_by = typed_text_of_keys(&input.events);
        let mut handled = Vec::new();
        let mut position = 0;
        while let Some(event) = input.events.get(position) {
            match event {
                Event::Key {
                    key: Key::PageDown | Key::PageUp, pressed: true, modifiers, ..
                } if modifiers.is_none() => {
                    let down = matches!(event, Event::Key { key: Key::PageDown, .. });
                    preview_pages += if down { 1.0 } else { -1.0 };
                    handled.push(position);
                }
                Event::Key { key, pressed: true, modifiers, .. } => {
                    let text = typed_by.iter().find(|(key, _)| *key == position).map(|p| p.1);
                    let Some(shortcut) = shortcut(pending, tab, *key, *modifiers) else {
                        // Not a shortcut: the text it typed (if it came first, as on the web,
                        // it was left for this moment) starts the Other answer.
                        if let (Some(_), Tab::Question(question), None) =
                            (text, tab, &pending.confirm)
                        {
                            focus = Some(other_text_id(pending.id(), question));
                            if tab != pending.tab {
                                actions.push(Action::Edit(Edit::ShowTab(tab)));
                            }
                            break;
                        }
                        position += 1;
                        continue;
                    };
                    handled.push(position);
                    // The text this key types (a digit, a space, an "n") is typed nowhere.
                    handled.extend(text);
                    let action = match shortcut {
                        Shortcut::Focus(id) => {
                            focus = Some(id);
                            break;
                        }
                        Shortcut::Act(action) => action,
                    };
                    let submits = action == Action::Edit(Edit::Advance) && tab == Tab::Review;
                    match &action {
                        Action::Edit(Edit::NextTab) => tab = pending.tab_after(tab),
                        Action::Edit(Edit::PreviousTab) => tab = pending.tab_before(tab),
                        Action::Edit(Edit::Advance) if tab != Tab::Review => {
                            tab = pending.tab_after(tab)
                        }
                        Action::Edit(Edit::Pick { question, pick: Pick::Other }) => {
                            focus = Some(other_text_id(pending.id(), *question));
                        }
                        _ => {}
                    }
                    let ends_frame = submits
                        || focus.is_some()
                        || matches!(
                            action,
                            Action::Edit(Edit::AskDecline)
                                | Action::Edit(Edit::CancelConfirm)
                                | Action::Edit(Edit::ConfirmSubmit)
                                | Action::RequestClose
                        );
                    actions.push(action);
                    if ends_frame {
                        // The screen changes under the next keys (a confirmation, a submit, a
                        // text box): stop here.
                        break;
                    }
                }
                // Typing goes to Other, like the dialog's "Type something" row: the first
                // character that is no shortcut starts the Other answer, and it and everything
                // after it this frame is typed into the box.
                // A key's own text waits for its key: it is typed only if the key is no shortcut.
                Event::Text(_) if typed_by.iter().any(|(_, text)| *text == position) => {}
                Event::Text(text) if !text.trim().is_empty() => {
                    if let (Tab::Question(question), None) = (tab, &pending.confirm) {
                        focus = Some(other_text_id(pending.id(), question));
                        if tab != pending.tab {
                            // Earlier keys this frame moved on: show that question's box.
                            actions.push(Action::Edit(Edit::ShowTab(tab)));
                        }
                        break;
                    }
                }
                _ => {}
            }
            position += 1;
        }
        let mut index = 0;
        input.events.retain(|_| {
            index += 1;
            !handled.contains(&(index - 1))
        });
    });
    (focus, preview_pages)
}

/// The keys that work with no request showing: Ctrl+W closes (the inbox's window hides), from
/// a text box too (the session's prompt), as on a form; Esc puts away what was sent
/// (`receipt`: there is one showing), outside a text box.
pub fn idle_keyboard_actions(ctx: &Context, receipt: bool, actions: &mut Vec<Action>) {
    let typing = ctx.text_edit_focused();
    let (closed, dismissed) = ctx.input_mut(|input| {
        let closed = close_key_position(&input.events).map(|at| input.events.remove(at));
        let dismissed = receipt && !typing && input.consume_key(Modifiers::NONE, Key::Escape);
        (closed.is_some(), dismissed)
    });
    if closed {
        actions.push(Action::RequestClose);
    }
    if dismissed {
        actions.push(Action::DismissReceipt);
    }
}

/// Where Ctrl+W (⌘W on a Mac) is among this frame's events, if it was pressed.
fn close_key_position(events: &[Event]) -> Option<usize> {
    events.iter().position(|event| {
        matches!(
            event,
            Event::Key { key: Key::W, pressed: true, modifiers, .. }
                if modifiers.matches_logically(Modifiers::COMMAND)
        )
    })
}

/// Which text event each key press typed, as (key position, text position). Natively egui-winit
/// sends a key's text right after the key; in the browser eframe sends it right before. A text
/// belongs to a key only when it is that key's character, so "2" then "1" typed fast are never
/// crossed.
fn typed_text_of_keys(events: &[Event]) -> Vec<(usize, usize)> {
    let typed = |key: Key, event: Option<&Event>| match (key, event) {
        (Key::Space, Some(Event::Text(text))) => text == " ",
        (key, Some(Event::Text(text))) => key.symbol_or_name().eq_ignore_ascii_case(text),
        _ => false,
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (position, event) in events.iter().enumerate() {
        let Event::Key { key, pressed: true, .. } = event else { continue };
        let taken = |text: usize| pairs.iter().any(|pair| pair.1 == text);
        let after = position + 1;
        if typed(*key, events.get(after)) && !taken(after) {
            pairs.push((position, after));
        } else if let Some(before) = position.checked_sub(1)
            && typed(*key, events.get(before))
            && !taken(before)
        {
            pairs.push((position, before));
        }
    }
    pairs
}

/// True for Alt+N, the note's shortcut.
fn is_note_key(event: &Event) -> bool {
    matches!(event, Event::Key { key: Key::N, pressed: true, modifiers, .. }
        if *modifiers == Modifiers::ALT)
}

/// Alt+N in a text box (the Other answer, the decline or reply bar, the session's prompt) is the
/// shortcut there too, never an "n" typed into the box: on a question it moves the keyboard to
/// that question's note. What was typed after it in the same frame goes to the note, in the
/// next frame, so nothing typed lands in the box it was not meant for.
fn note_key_in_a_box(ctx: &Context, pending: &Open) {
    let text_bar_open =
        matches!(pending.confirm, Some(Confirm::Decline { .. } | Confirm::Reply { .. }));
    let to_note = match pending.tab {
        Tab::Question(question) if !text_bar_open => Some(notes_id(pending.id(), question)),
        _ => None,
    };
    let carried = ctx.input_mut(|input| {
        let at = input.events.iter().position(is_note_key)?;
        let typed = typed_text_of_keys(&input.events);
        let own_text = typed.iter().find(|(key, _)| *key == at).map(|&(_, text)| text);
        // The text the browser sends just before its key belongs to it too.
        let cut = own_text.map_or(at, |text| text.min(at));
        // The key and its letter go; what follows waits for the next frame.
        let mut shortcut = input.events.split_off(cut);
        Some(shortcut.split_off((usize::from(own_text.is_some()) + 1).min(shortcut.len())))
    });
    let Some(later) = carried else { return };
    // The keyboard moves in the next frame, with what was typed after the shortcut.
    let carried = Carried { focus: to_note, events: later };
    ctx.data_mut(|data| data.insert_temp(carried_keys_id(), carried));
    ctx.request_repaint();
}

/// In the Other or note box, a plain Enter means "done with this question": it leaves the box
/// and moves on (Shift+Enter is the new line). Other boxes (decline, reply, prompt) keep Enter.
fn enter_leaves_answer_box(ctx: &Context, pending: &Open, actions: &mut Vec<Action>) {
    let Tab::Question(question) = pending.tab else { return };
    let boxes = [other_text_id(pending.id(), question), notes_id(pending.id(), question)];
    let Some(focused) = ctx.memory(|memory| memory.focused()).filter(|id| boxes.contains(id))
    else {
        return;
    };
    // Exactly Enter: egui's `consume_key` would also take Shift+Enter, the new line.
    let entered = ctx.input_mut(|input| {
        let before = input.events.len();
        input.events.retain(|event| {
            !matches!(event, Event::Key { key: Key::Enter, pressed: true, modifiers, .. }
                if modifiers.is_none())
        });
        input.events.len() < before
    });
    if entered {
        ctx.memory_mut(|memory| memory.surrender_focus(focused));
        actions.push(Action::Edit(Edit::NextTab));
    }
}

/// What one key press does.
enum Shortcut {
    Act(Action),
    /// Put the keyboard in this text box (Alt+N: the note; Enter on an empty Other).
    Focus(Id),
}

/// The shortcut of one key press on `tab` of `pending`, if the key is one there.
fn shortcut(pending: &Open, tab: Tab, key: Key, modifiers: Modifiers) -> Option<Shortcut> {
    let plain = modifiers.is_none();
    let act = |action| Some(Shortcut::Act(action));
    match key {
        Key::Escape if plain => act(Action::Edit(match pending.confirm {
            Some(_) => Edit::CancelConfirm,
            None => Edit::AskDecline,
        })),
        Key::Enter if plain => match (&pending.confirm, tab) {
            // Enter never confirms sending less than everything: it goes back.
            (Some(Confirm::PartialSubmit { .. }), _) => act(Action::Edit(Edit::CancelConfirm)),
            (Some(_), _) => None,
            (None, Tab::Question(question)) if other_needs_typing(pending, question) => {
                Some(Shortcut::Focus(other_text_id(pending.id(), question)))
            }
            (None, _) => act(Action::Edit(Edit::Advance)),
        },
        Key::Tab if modifiers.shift_only() => act(Action::Edit(Edit::PreviousTab)),
        Key::Tab | Key::ArrowRight if plain => act(Action::Edit(Edit::NextTab)),
        Key::ArrowLeft if plain => act(Action::Edit(Edit::PreviousTab)),
        Key::N if modifiers == Modifiers::ALT => match tab {
            Tab::Question(question) => Some(Shortcut::Focus(notes_id(pending.id(), question))),
            Tab::Review => None,
        },
        _ if !plain => None,
        _ => {
            let Tab::Question(question) = tab else { return None };
            let options = pending.core.ask.questions().get(question)?.options().len();
            let cursor = pending.cursor(question);
            let pick = |pick| act(Action::Edit(Edit::Pick { question, pick }));
            match (key, DIGITS.iter().position(|digit| *digit == key)) {
                (Key::ArrowDown, _) => act(Action::Edit(Edit::MoveCursor(1))),
                (Key::ArrowUp, _) => act(Action::Edit(Edit::MoveCursor(-1))),
                (Key::Space, _) if cursor >= options => pick(Pick::Other),
                (Key::Space, _) => act(Action::Edit(Edit::PickAtCursor)),
                (_, Some(index)) if index < options => pick(Pick::Option(index)),
                (_, Some(index)) if index == options => pick(Pick::Other),
                _ => None,
            }
        }
    }
}

/// True when Enter on this single-select question would pick an Other with nothing typed: the
/// box gets the keyboard instead.
fn other_needs_typing(pending: &Open, question: usize) -> bool {
    let (Some(q), Some(draft)) =
        (pending.core.ask.questions().get(question), pending.draft(question))
    else {
        return false;
    };
    let cursor = pending.cursor(question);
    !q.multi_select() && cursor >= q.options().len() && draft.other_text().trim().is_empty()
}

/// Call after drawing: records whether a text box has focus at the end of this frame.
pub fn remember_typing(ctx: &Context) {
    let typing = ctx.text_edit_focused();
    ctx.data_mut(|data| data.insert_temp(typing_memory_id(), typing));
}
