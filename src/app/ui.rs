//! The app's drawing, run only while the window shows: the guards that keep keys and clicks the
//! user did not mean for askpane away from the form, History or the requests drawn by the view,
//! and the actions the view returns applied.

use super::logic::journal_form;
use super::*;

impl App {
    /// Applies the view's actions; finished requests go out at once.
    pub fn apply(&mut self, ctx: &egui::Context, actions: Vec<state::Action>) {
        let now = ctx.input(|input| input.time);
        for action in actions {
            match &action {
                state::Action::Session(session_action) => {
                    if let Some(effect) = self.state.apply_session(session_action.clone()) {
                        self.perform(effect);
                    }
                    // A plan's review or a form's field changed and the card still waits: the
                    // journal keeps it.
                    let changed = match session_action {
                        state::SessionAction::Plan { id, .. } => Some((*id, Changed::Plan)),
                        state::SessionAction::Form {
                            id,
                            action: crate::book::form::FormAction::Set { .. },
                        } => Some((*id, Changed::Form)),
                        _ => None,
                    };
                    if let (Some((id, changed)), Some(journal)) = (changed, &self.journal)
                        && let Some(card) = self.state.permissions().cards().find(|c| c.id == id)
                    {
                        match changed {
                            Changed::Plan => journal.plan_changed(card),
                            Changed::Form => journal.form_changed(card),
                        }
                    }
                    continue;
                }
                // Issue 10 (inbox): "Decline all" declines, and the window only hides.
                state::Action::ConfirmClose if self.options.resident => {
                    self.close_all();
                    self.hidden = true;
                    ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
                }
                state::Action::Hide => {
                    self.hidden = true;
                    ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
                }
                state::Action::ConfirmClose => {
                    self.closing = true;
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                }
                // Exactly what the window's close button does: the close path asks first when
                // answers are in progress.
                state::Action::RequestClose => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
                state::Action::SelectRequest(_) | state::Action::SelectCard(_) => {
                    self.picked_by_user = true;
                }
                state::Action::Edit(state::Edit::SetOtherText { question, .. }) => {
                    self.note_edit(*question, TextField::Other, now);
                }
                state::Action::Edit(state::Edit::SetNotes { question, .. }) => {
                    self.note_edit(*question, TextField::Notes, now);
                }
                _ => {}
            }
            // Issue 11 (store): which form this edit may change, to save it once applied.
            let edited_form = match (&self.journal, &action) {
                (Some(_), state::Action::Edit(edit)) => {
                    self.state.current().and_then(|open| journal_form(edit, open))
                }
                _ => None,
            };
            let settled = self.state.apply(action);
            if settled.is_none()
                && let (Some(journal), Some((id, question))) = (&self.journal, edited_form)
                && let Some(open) = self.state.book().get(id)
                && let Some(form) = open.forms.get(question)
            {
                journal.draft_changed(&open.core, question, form);
            }
            self.send(settled);
        }
    }

    /// Drops presses of the pointer during the pointer's grace, and the release of each press
    /// dropped, before egui reads the frame's input (egui decides clicks from it before any
    /// app code runs): a click aimed at the program that was under the pointer, or at a row
    /// that just moved, clicks nothing here. Every host runs it first (eframe's
    /// `raw_input_hook`; the CPU window and the tests call it too).
    pub fn guard_clicks(&mut self, raw_input: &mut egui::RawInput) {
        // egui's own clock when the host gives none: the last frame's time and one frame more.
        let now =
            raw_input.time.unwrap_or(self.last_frame_time + f64::from(raw_input.predicted_dt));
        let blocked = now < self.clicks_blocked_until;
        let unpressed = &mut self.press_dropped;
        raw_input.events.retain(|event| match event {
            _ if blocked && is_pointer_press(event) => {
                *unpressed = true;
                false
            }
            // egui would count a release whose press it never saw as a click: it goes with its
            // press, whenever it comes.
            egui::Event::PointerButton { pressed: false, .. }
            | egui::Event::Touch { phase: egui::TouchPhase::End, .. }
                if *unpressed =>
            {
                *unpressed = false;
                false
            }
            _ => true,
        });
    }

    /// One pass of the window: the keys' guard, then History or the requests.
    pub(super) fn draw(&mut self, ui: &mut egui::Ui) {
        self.guard_input(ui.ctx());
        if self.history_ui(ui) {
            return;
        }
        let user_acted = App::user_acted(ui.ctx());
        let mut actions = view::root_ui(ui, &self.state, &mut self.markdown);
        // "Any key to stay": a key or a click stops every countdown, except the click that
        // asks for more time.
        let adds_time = actions
            .iter()
            .any(|action| matches!(action, state::Action::Edit(state::Edit::AddTime(_))));
        if user_acted && !adds_time && self.state.counting_down() {
            actions.insert(0, state::Action::Stay);
        }
        let countdowns_before = self.countdowns();
        if !actions.is_empty() {
            self.apply(ui.ctx(), actions);
            self.report_countdown_changes(&countdowns_before);
            // This pass drew the state before the actions: draw their result instead, in
            // another pass of this same frame (issue 14: a key's change is painted once, one
            // frame sooner), or in the next frame when this frame has no pass left.
            ui.ctx().request_discard("the user's actions changed what is shown");
            if !ui.ctx().will_discard() {
                ui.ctx().request_repaint();
            }
        }
    }

    /// A link in an agent's text never opens or navigates anything (natively or in the
    /// browser, where it would replace askpane's own page with the agent's): the click is
    /// taken back, and its address is shown as text to copy, for the user to open if they
    /// trust it.
    pub(super) fn keep_links_closed(&mut self, ctx: &egui::Context) {
        let clicked = ctx.output_mut(|output| {
            let mut urls = Vec::new();
            output.commands.retain(|command| match command {
                egui::OutputCommand::OpenUrl(open) => {
                    urls.push(open.url.clone());
                    false
                }
                _ => true,
            });
            urls
        });
        for url in clicked {
            self.state.notify(link_not_opened(&url));
            ctx.request_repaint();
        }
    }

    /// Starts the graces at the moments the module docs describe, and drops key input during
    /// its grace, and the repeats of a key pressed before it: a key meant for another window
    /// never acts on what just appeared. (Clicks are dropped before egui reads them:
    /// [`App::guard_clicks`].)
    pub(super) fn guard_input(&mut self, ctx: &egui::Context) {
        // A test's own grace stands for both.
        let key_grace = self.options.key_grace.unwrap_or(KEY_GRACE).as_secs_f64();
        let pointer_grace = self.options.key_grace.unwrap_or(POINTER_GRACE).as_secs_f64();
        let now = ctx.input(|input| input.time);
        let gained_focus = ctx.input(|input| {
            input.events.iter().any(|event| matches!(event, egui::Event::WindowFocused(true)))
        });
        // The question or the card (a plan too) shown (issue 26: a card the user did not pick
        // that takes the page is a new arrival like a question).
        let shown = self.state.shown().map(state::Shown::id);
        let newest_card = self.state.permissions().cards().last().map(|card| card.id);
        let card_arrived = newest_card.is_some() && newest_card != self.newest_card;
        self.newest_card = newest_card;
        let arrived =
            (shown.is_some() && shown != self.shown && !self.picked_by_user) || card_arrived;
        let first_frame = self.keys_blocked_until == f64::NEG_INFINITY;
        let raised = std::mem::take(&mut self.raised);
        if first_frame || gained_focus || arrived || raised {
            self.keys_blocked_until = now + key_grace;
            // A key already down was pressed for something else.
            self.keys_down_here.clear();
        }
        // Clicks: a request the user did not pick took the place of the one they were on (a
        // click on its way was aimed at the other), or the window came up on its own under a
        // pointer aimed at another program (a click lands a moment later than a key would:
        // issue 24 saw one 0.6 s after the inbox's window came back over the user's editor). A
        // page in the browser is opened by the user: its first frame starts no pointer grace.
        // A card or a plan page that just appeared takes no click either: its Allow or Approve
        // is where the pointer may already be.
        let replaced = (arrived && self.shown.is_some()) || card_arrived;
        if replaced {
            self.clicks_blocked_until = self.clicks_blocked_until.max(now + key_grace);
        }
        if raised || (first_frame && cfg!(not(target_arch = "wasm32"))) {
            self.clicks_blocked_until = now + pointer_grace;
        }
        self.last_frame_time = now;
        self.shown = shown;
        self.picked_by_user = false;
        let keys = now < self.keys_blocked_until;
        let clicks = now < self.clicks_blocked_until;
        if keys || clicks {
            if keys {
                ctx.input_mut(|input| input.events.retain(|event| !is_key_input(event)));
            }
            // A grace ends without an event: look again then.
            let next = [self.keys_blocked_until, self.clicks_blocked_until]
                .into_iter()
                .filter(|&until| until > now)
                .reduce(f64::min);
            if let Some(until) = next {
                ctx.request_repaint_after(std::time::Duration::from_secs_f64(until - now));
            }
        }
        // Issue 25: a key held down since before the grace repeats on after it (on X11 25
        // times a second, for as long as it is held): a repeat of a press this showing did not
        // take is dropped, with what it types, however late it comes.
        let down = &mut self.keys_down_here;
        ctx.input_mut(|input| drop_repeats_of_keys_pressed_elsewhere(&mut input.events, down));
    }

    /// True when this frame holds a key press, typed text or a finished click: the user is here.
    /// (Keys dropped by the grace are gone by now: they do not count. A click counts when it is
    /// released, the frame its button acts: "+1 min" must not also stop the countdown.)
    pub(super) fn user_acted(ctx: &egui::Context) -> bool {
        ctx.input(|input| {
            input.events.iter().any(|event| {
                matches!(
                    event,
                    egui::Event::Key { pressed: true, .. }
                        | egui::Event::PointerButton { pressed: false, .. }
                        | egui::Event::Text(_)
                        | egui::Event::Paste(_)
                        | egui::Event::Ime(egui::ImeEvent::Commit(_))
                )
            })
        })
    }

    /// Issue 11: the History bar, and the History page when it is open (then the questions are
    /// not drawn: true). A close confirmation brings the questions back.
    pub(super) fn history_ui(&mut self, ui: &mut egui::Ui) -> bool {
        let Some(history) = &mut self.history else { return false };
        // The browser page learns from its bridge whether there is history to read (`ask --ui
        // web` keeps none): no History until then.
        if !self.journal.as_ref().is_some_and(|journal| journal.keeps_history()) {
            return false;
        }
        if self.state.confirming_close() {
            history.open = false;
        }
        let mut actions = Vec::new();
        // Every kind that waits, not questions only (issue 26 leftovers).
        let counts = self.state.counts();
        let waiting = (counts != state::Counts::default()).then(|| counts.words());
        egui::Panel::top("history-bar").show(ui, |ui| {
            view::history::history_bar_ui(ui, history.open, waiting.as_deref(), &mut actions)
        });
        if history.open {
            view::history::history_ui(ui, history, &mut actions);
        }
        let open_before = history.open;
        for action in actions {
            if let HistoryAction::Copy(text) = &action {
                self.host.copy_text(ui.ctx(), text.clone());
            }
            let Some(filter) = history.apply(&action) else { continue };
            if let Some(journal) = &self.journal {
                let pages = self.history_pages.0.clone();
                let ctx = ui.ctx().clone();
                journal.history(
                    &filter,
                    Box::new(move |page| {
                        let _ = pages.send(page);
                        ctx.request_repaint();
                    }),
                );
            }
            ui.ctx().request_repaint();
        }
        if open_before != history.open {
            ui.ctx().request_repaint();
        }
        open_before
    }
}

/// Input that comes from the keyboard: keys, typed text, and what key chords do.
/// The input the key grace drops: every key and what keys type.
pub(super) fn is_key_input(event: &egui::Event) -> bool {
    matches!(
        event,
        egui::Event::Key { .. }
            | egui::Event::Text(_)
            | egui::Event::Paste(_)
            | egui::Event::Copy
            | egui::Event::Cut
            | egui::Event::Ime(_)
    )
}

/// Drops each repeat of a key whose press `down` does not hold, with the input that key brings
/// (egui-winit puts what a chord does, Cut, Copy or Paste, just before the key, and the text it
/// types just after); notes the presses and releases kept. egui marks a press `repeat` when it
/// saw the key go down before (the press the grace dropped, too) and not up since.
fn drop_repeats_of_keys_pressed_elsewhere(
    events: &mut Vec<egui::Event>,
    down: &mut Vec<egui::Key>,
) {
    let foreign: Vec<bool> = events
        .iter()
        .map(|event| match event {
            egui::Event::Key { key, pressed: true, repeat: false, .. } => {
                if !down.contains(key) {
                    down.push(*key);
                }
                false
            }
            egui::Event::Key { key, pressed: true, repeat: true, .. } => !down.contains(key),
            egui::Event::Key { key, pressed: false, .. } => {
                down.retain(|held| held != key);
                false
            }
            _ => false,
        })
        .collect();
    if !foreign.contains(&true) {
        return;
    }
    let before = std::iter::once(&false).chain(&foreign);
    let after = foreign.iter().skip(1).chain(std::iter::once(&false));
    let keep: Vec<bool> = events
        .iter()
        .zip(&foreign)
        .zip(before.zip(after))
        .map(|((event, &itself), (&key_before, &key_after))| {
            let brought = match event {
                egui::Event::Text(_) | egui::Event::Ime(_) => key_before,
                egui::Event::Cut
                | egui::Event::Copy
                | egui::Event::Paste(_)
                | egui::Event::PasteImage(_) => key_after,
                _ => false,
            };
            !(itself || brought)
        })
        .collect();
    let mut verdicts = keep.into_iter();
    events.retain(|_| verdicts.next().unwrap_or(true));
}

/// The input the pointer's grace drops: the start of a click or a touch (a release whose
/// press was dropped clicks nothing).
pub(super) fn is_pointer_press(event: &egui::Event) -> bool {
    matches!(
        event,
        egui::Event::PointerButton { pressed: true, .. }
            | egui::Event::Touch { phase: egui::TouchPhase::Start, .. }
    )
}

/// Which kind of card's draft an applied action changed.
#[derive(Clone, Copy)]
enum Changed {
    Plan,
    Form,
}
