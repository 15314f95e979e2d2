//! The app's logic, run every frame and while the window is hidden: what arrives on the channel
//! goes into the book, what ends goes to its reply handles, countdowns run out, the notifier and
//! the countdown listeners hear what changed, and the window hides, closes or goes lean.

use super::*;

/// Who answered what the user answered in this window, as history keeps it (issue 31).
const WINDOW: &str = "window";

impl App {
    /// One frame's logic (eframe's `logic`): see the module's documentation.
    pub(super) fn frame_logic(&mut self, ctx: &egui::Context, frame: &mut eframe::Frame) {
        if let Some(hook) = &mut self.frame_hook {
            hook(ctx, frame);
        }
        let now = ctx.input(|input| input.time);
        let arrived = self.receive(now);
        // The cards the last frame's clicks or these messages ended.
        self.journal_ended_permissions();
        if let Some(history) = &mut self.history {
            for page in self.history_pages.1.try_iter() {
                history.received(page);
            }
        }
        self.expire(ctx, now);
        if arrived && self.options.resident {
            // Issue 10 (inbox): a hidden inbox window comes back for a new question (the window
            // manager was told at the first frame not to give it the keyboard).
            self.show(ctx);
        }
        if std::mem::take(&mut self.revealed) {
            // The user asked for the window (a notification's "Open", `askpane inbox` run
            // again): here, raising it and giving it the keyboard is what they want. The host
            // hears it too ([`take_window_asked_for`]): a window manager that keeps windows from
            // taking the keyboard by themselves is told the user asked.
            self.show(ctx);
            ctx.send_viewport_cmd(egui::ViewportCommand::Focus);
            ctx.data_mut(|data| data.insert_temp(window_asked_for_id(), true));
        }
        self.report_notices(ctx);
        let focused = ctx.input(|input| input.viewport().focused.unwrap_or(true));
        if arrived && !focused {
            // Ask for attention (a blinking task bar entry), never steal the focus.
            ctx.send_viewport_cmd(egui::ViewportCommand::RequestUserAttention(
                egui::UserAttentionType::Informational,
            ));
        }
        let title = self.state.title(now);
        if title != self.title {
            self.host.set_title(ctx, &title);
            self.title = title;
        }
        // A window of its own waits for its tool calls as for its questions (`askpane hook`).
        let done = self.options.close_when_done
            && !self.inbox_open
            && self.state.book().is_empty()
            && self.state.permissions().is_empty();
        if done || self.stopped.is_some() {
            self.closing = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        let close_requested = ctx.input(|input| input.viewport().close_requested());
        if close_requested && !self.closing && self.options.resident {
            // Issue 10 (inbox): the inbox's window never closes by its close button: it hides,
            // or asks first when requests wait.
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            if self.state.request_close() {
                self.hidden = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
            }
            ctx.request_repaint();
        } else if close_requested && !self.closing && !self.state.request_close() {
            // Answers are in progress: keep the window and ask (nothing typed is lost by accident).
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            ctx.request_repaint();
        }
        if std::mem::take(&mut self.hide_at_start) && self.hidden {
            // eframe maps every window after its first frame; this one has nothing to show yet.
            ctx.send_viewport_cmd(egui::ViewportCommand::Visible(false));
        }
        if self.hidden && !self.closing && self.lean_exit.is_some() {
            // Issue 14: hidden and empty, the inbox gives its window's memory back once no
            // client is connected (one may still be reading its outcome or hosting a session).
            match self.claim_lean() {
                true => self.go_lean(ctx),
                false => ctx.request_repaint_after(LEAN_CHECK),
            }
        }
    }

    /// Whether the window ends now for the inbox to go lean: nothing open, no agent session
    /// shown, no question about closing on screen, and no client connected. A yes has stopped
    /// the socket server accepting ([`LeanExit::claim_quiet`]): the window must then end.
    pub(super) fn claim_lean(&self) -> bool {
        self.lean_exit.as_ref().is_some_and(|lean| {
            self.options.resident
                && self.state.book().is_empty()
                && self.sessions.is_empty()
                && self.state.permissions().is_empty()
                && !self.state.confirming_close()
                && (lean.claim_quiet)()
        })
    }

    pub(super) fn go_lean(&mut self, ctx: &egui::Context) {
        if let Some(lean) = &self.lean_exit {
            lean.went_lean.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        self.closing = true;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    /// Shows the resident window again (it may be hidden).
    pub(super) fn show(&mut self, ctx: &egui::Context) {
        if self.hidden {
            self.raised = true;
        }
        self.hidden = false;
        ctx.send_viewport_cmd(egui::ViewportCommand::Visible(true));
    }

    /// Moves everything the adapters sent into the state. Returns true if a question arrived.
    pub(super) fn receive(&mut self, now: f64) -> bool {
        let mut arrived = false;
        loop {
            match self.inbox.try_recv() {
                Ok(Inbound::Request(RequestEvent::Ask(request))) => {
                    arrived = true;
                    self.add(*request, now);
                }
                Ok(Inbound::Request(RequestEvent::Withdraw { tool_use_id })) => {
                    let settled = self.state.withdraw(&tool_use_id);
                    self.send(settled);
                }
                // Issue 31: a front end on the inbox socket answers; its verdict first, so
                // that one answering next hears who came first.
                Ok(Inbound::Request(RequestEvent::FrontEnd(answer))) => {
                    let crate::transport::FrontEndAnswer { request, message, answered_by, verdict } =
                        *answer;
                    match self.state.answer_from_front_end(request, message) {
                        Ok(settled) => {
                            verdict(Ok(()));
                            self.send_by(Some(settled), &answered_by);
                        }
                        Err(refusal) => verdict(Err(refusal)),
                    }
                }
                // Issue 10 (inbox): the client that asked went away.
                Ok(Inbound::Request(RequestEvent::Leave { asker })) => {
                    let settled = self.state.leave(asker);
                    self.send(settled);
                }
                Ok(Inbound::Page(PageEvent::Settled { tool_use_id, how })) => {
                    let settled = self.state.settled_elsewhere(&tool_use_id, &how);
                    self.send(settled);
                }
                Ok(Inbound::Control(Control::Notice(notice))) => self.state.notify(notice),
                Ok(Inbound::Approval(ApprovalEvent::Permission(permission))) => {
                    arrived = true;
                    let PermissionAsk { id, request, provenance, reply } = *permission;
                    let asked = self.state.ask_permission(id, request, provenance, reply);
                    // Its age counts from now, though the list may be drawn much later (a card
                    // alone is shown without it; a hidden window draws nothing), or from when it
                    // was first asked, when the journal kept that (an inbox that died with it).
                    if let Asked::Opened(id) = asked {
                        let waited = self.waited_before(id);
                        self.state.card_arrived(id, now - waited);
                    }
                    // Issue 26: history notes when the card opened; a plan or a form asked
                    // again comes back with what was written on it (a crash, a restart).
                    let (mut plan, mut form) = (None, None);
                    if let (Asked::Opened(id), Some(journal)) = (asked, &self.journal)
                        && let Some(card) = self.state.permissions().cards().find(|c| c.id == id)
                    {
                        journal.approval_opened(card);
                        plan = journal.restore_plan(card).map(|draft| (id, draft));
                        form = journal.restore_form(card).map(|draft| (id, draft));
                    }
                    if let Some((id, draft)) = plan {
                        self.state.restore_plan(id, draft);
                    }
                    if let Some((id, draft)) = form {
                        self.state.restore_form(id, draft);
                    }
                }
                // Issue 31: a front end on the inbox socket decides a card.
                Ok(Inbound::Approval(ApprovalEvent::FrontEnd(decided))) => {
                    let crate::transport::FrontEndDecision {
                        request_id,
                        decision,
                        answered_by,
                        verdict,
                    } = *decided;
                    let decided =
                        self.state.decide_from_front_end(&request_id, decision, &answered_by);
                    verdict(decided.map(|_| ()));
                }
                Ok(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id })) => {
                    self.state.withdraw_permission(&request_id);
                }
                Ok(Inbound::Approval(ApprovalEvent::TimedOutPermission { request_id })) => {
                    self.state.time_out_permission(&request_id);
                }
                // Issue 26: decided by a flag as it arrived, never shown, recorded all the same.
                Ok(Inbound::Approval(ApprovalEvent::Unshown(ended))) => {
                    if let Some(journal) = &self.journal {
                        journal.approval_ended(&ended);
                    }
                }
                Ok(Inbound::Control(Control::Shutdown { outcome })) => {
                    // Issue 9: a signal. Everything open hears why, and the window closes.
                    self.stopped = Some(outcome);
                    self.close_all();
                    self.closing = true;
                }
                // Issue 9: what became of an answer the browser page sent to askpane.
                Ok(Inbound::Page(PageEvent::Delivery(delivery))) => match delivery {
                    Delivery::Received { tool_use_id } => self.state.delivered(&tool_use_id),
                    Delivery::Lost { tool_use_id, how } => {
                        self.state.not_delivered(&tool_use_id, how)
                    }
                    Delivery::Refused { request, refused, error, question } => {
                        let id = request.core.id;
                        self.add(*request, now);
                        self.state.returned(id, &refused, &error, question);
                    }
                },
                // Issue 11: decided as it arrived, never shown, but recorded all the same.
                Ok(Inbound::Request(RequestEvent::Unshown { core, outcome })) => {
                    if let Some(journal) = &self.journal {
                        journal.settled(&core, &outcome);
                    }
                }
                // Issue 11: a desktop notification's "Open": back on screen, on that request.
                Ok(Inbound::Control(Control::Reveal { request })) => {
                    if let Some(request) = request
                        && self.state.book().get(request).is_some()
                    {
                        self.state.apply(state::Action::SelectRequest(request));
                        self.picked_by_user = true;
                    }
                    // The question, not the History page, is what the user asked to see.
                    if let Some(history) = &mut self.history {
                        history.open = false;
                    }
                    self.revealed = true;
                }
                Ok(Inbound::Page(PageEvent::Countdown { tool_use_id, left_secs })) => {
                    self.state.countdown_changed(&tool_use_id, now, left_secs);
                }
                Ok(Inbound::Page(PageEvent::SessionUpdate(update))) => {
                    self.state.session_update(*update)
                }
                Ok(Inbound::Page(PageEvent::HostedUpdate { session, update })) => {
                    self.state.hosted_update(session, *update);
                }
                Ok(Inbound::Session(SessionInbound::Event(event))) => {
                    let event = *event;
                    if let SessionEvent::Ended { status, .. } = &event {
                        self.state.notify(format!("The agent ended ({status})."));
                    }
                    self.state.session_event(SessionKey::Own, event);
                }
                // Issue 10: an inbox client hosts a session (`askpane claude`).
                Ok(Inbound::Session(SessionInbound::Hosted {
                    session,
                    label,
                    prompt,
                    commands,
                })) => {
                    self.state.start_session(session, Some(label), prompt.as_deref());
                    self.sessions.insert(session, commands);
                }
                Ok(Inbound::Session(SessionInbound::HostedEvent { session, event })) => {
                    self.state.session_event(session, *event);
                }
                Ok(Inbound::Session(SessionInbound::HostGone { session })) => {
                    self.state.end_session(session);
                    self.sessions.remove(&session);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.inbox_open = false;
                    break;
                }
            }
        }
        arrived
    }

    /// Seconds the call card `id` shows had waited before it opened here: since the journal
    /// says it was first asked (an inbox that died with it open, whose relay asks again), else
    /// none.
    fn waited_before(&self, id: RequestId) -> f64 {
        // The browser's journal keeps no such time, and wasm has no system clock to read.
        if cfg!(target_arch = "wasm32") {
            return 0.0;
        }
        let card = self.state.permissions().cards().find(|card| card.id == id);
        let first = card.zip(self.journal.as_ref());
        let Some(first) = first.and_then(|(card, journal)| journal.card_first_asked(card)) else {
            return 0.0;
        };
        let since = std::time::UNIX_EPOCH + std::time::Duration::from_millis(first);
        let waited = std::time::SystemTime::now().duration_since(since);
        waited.map_or(0.0, |waited| waited.as_secs_f64())
    }

    /// Issue 26: hands every card that ended to the journal (history keeps each approval).
    pub(super) fn journal_ended_permissions(&mut self) {
        let ended = self.state.take_ended_permissions();
        if let Some(journal) = &self.journal {
            for approval in &ended {
                journal.approval_ended(approval);
            }
        }
    }

    /// Hands a request to the book; one its policy decides is answered at once.
    pub(super) fn add(&mut self, request: Request, now: f64) {
        let Request { core, mut policy, reply } = request;
        // Issue 11 (store): a question asked again after a crash comes back as it was left.
        if let Some(journal) = &self.journal {
            journal.restore(&core, &mut policy);
        }
        self.state.take(core, policy, reply, now, self.journal.as_deref());
    }

    /// Sends a settled request's outcome to every agent waiting on it.
    pub(super) fn send(&mut self, settled: Option<Settled<Responder>>) {
        self.send_by(settled, WINDOW);
    }

    /// [`Self::send`], with who answered when the user did (issue 31: history keeps it).
    pub(super) fn send_by(&mut self, settled: Option<Settled<Responder>>, answered_by: &str) {
        let Some(settled) = settled else { return };
        let delivered = settled.deliver_by(self.journal.as_deref(), Some(answered_by));
        self.edited.retain(|(id, _, _), _| *id != delivered.open.id());
    }

    pub(super) fn note_edit(&mut self, question: usize, field: TextField, now: f64) {
        if let Some(current) = self.state.current() {
            self.edited.insert((current.id(), question, field), now);
        }
    }

    /// Sends what the user finished of every request whose time ran out; wakes for the next.
    pub(super) fn expire(&mut self, ctx: &egui::Context, now: f64) {
        let edited = &self.edited;
        let focused = ctx.memory(|memory| memory.focused());
        // A box counts as being typed in while it has the keyboard or was edited a moment ago.
        let typing = |id, question, field| {
            let box_id = match field {
                TextField::Other => view::question::other_text_id(id, question),
                TextField::Notes => view::question::notes_id(id, question),
            };
            focused == Some(box_id)
                || edited
                    .get(&(id, question, field))
                    .is_some_and(|&at| now - at < STILL_TYPING_SECS)
        };
        for settled in self.state.expire(now, &typing) {
            self.send(Some(settled));
        }
        if let Some(deadline) = self.state.next_deadline() {
            // Once a second for the countdown, and exactly at the deadline.
            let until = (deadline - now).clamp(0.0, 1.0);
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(until));
        }
    }

    pub(super) fn perform(&mut self, effect: SessionEffect) {
        let command = match effect {
            // The book sent it to the agent already.
            SessionEffect::Decided { .. } => return,
            SessionEffect::Prompt { session, text } => (session, SessionCommand::UserTurn(text)),
            SessionEffect::Interrupt { session } => (session, SessionCommand::Interrupt),
            SessionEffect::End { session } => (session, SessionCommand::End),
            // In a browser page, where only the bridge keeps the older entries.
            SessionEffect::Older { session, before } => (session, SessionCommand::Older { before }),
        };
        let (session, command) = command;
        if let Some(commands) = self.sessions.get(&session) {
            // The session may have ended; the transcript then says so.
            let _ = commands.send(command);
        }
    }

    /// Reports what waits and whether the window has focus, when either changed since the last
    /// report (a comparison of ids per frame; the texts are copied only then).
    pub(super) fn report_notices(&mut self, ctx: &egui::Context) {
        let Some((report, last)) = &mut self.notices else { return };
        // Unknown (no focus event yet) counts as not focused: nobody is known to look.
        let focused = ctx.input(|input| input.viewport().focused) == Some(true);
        let hidden = self.hidden;
        let book = self.state.book();
        let cards = self.state.permissions();
        // Questions and tool calls, oldest first (ids are given in arrival order).
        let mut ids: Vec<RequestId> = book
            .requests()
            .map(|open| open.id())
            .chain(cards.cards().map(|card| card.id))
            .collect();
        ids.sort_unstable();
        if last.1 == (focused, hidden) && last.0 == ids {
            return;
        }
        let calls = cards.cards().map(|card| Waiting {
            id: card.id,
            kind: WaitingKind::ToolCall,
            project: card.provenance.project.clone(),
            session: card.provenance.session.clone(),
            header: card.request.tool_name.clone(),
            host: card.provenance.host.clone(),
            // The card's one-line summary without the tool's name, which the title carries.
            question: card
                .summary
                .strip_prefix(&format!("{}: ", card.request.tool_name))
                .unwrap_or_default()
                .to_owned(),
        });
        let mut waiting: Vec<Waiting> = book
            .requests()
            .map(|open| Waiting {
                id: open.id(),
                kind: WaitingKind::Question,
                project: open.core.provenance.project.clone(),
                host: open.core.provenance.host.clone(),
                session: open.core.provenance.session.clone(),
                header: open.core.ask.title().to_owned(),
                question: open
                    .core
                    .ask
                    .questions()
                    .first()
                    .map(|question| question.text().to_owned())
                    .unwrap_or_default(),
            })
            .chain(calls)
            .collect();
        waiting.sort_unstable_by_key(|request| request.id);
        *last = (ids, (focused, hidden));
        report(Snapshot { waiting, focused, hidden });
    }

    /// Every open request's countdown, by tool_use_id.
    pub(super) fn countdowns(&self) -> Vec<(String, Option<Countdown>)> {
        let requests = self.state.book().requests();
        requests
            .filter_map(|open| Some((open.core.envelope.tool_use_id()?.to_owned(), open.countdown)))
            .collect()
    }

    /// Tells [`App::with_countdown_changes`]'s listener what the user's actions did.
    pub(super) fn report_countdown_changes(&self, before: &[(String, Option<Countdown>)]) {
        let Some(changes) = &self.countdown_changes else { return };
        for (tool_use_id, after) in self.countdowns() {
            let Some((_, before)) = before.iter().find(|(id, _)| *id == tool_use_id) else {
                continue;
            };
            let change = match (before, after) {
                (Some(Countdown::Running { .. }), Some(Countdown::Stopped { .. })) => {
                    TimeoutChange::Paused
                }
                (
                    Some(Countdown::Running { given_secs: was, .. }),
                    Some(Countdown::Running { given_secs: now, .. }),
                ) if now > *was => TimeoutChange::Extended { secs: now - was },
                _ => continue,
            };
            let _ = changes.send((tool_use_id, change));
        }
    }
}

/// Issue 11 (store): the request and question whose form `edit` may change (a choice, a typed
/// text, the keyboard cursor); `None` for edits that change no form.
pub(super) fn journal_form(edit: &state::Edit, open: &state::Open) -> Option<(RequestId, usize)> {
    use state::Edit;
    let question = match edit {
        Edit::Pick { question, .. }
        | Edit::SetCursor { question, .. }
        | Edit::ClearChoice { question }
        | Edit::SetOtherText { question, .. }
        | Edit::SetNotes { question, .. } => *question,
        Edit::MoveCursor(_) | Edit::PickAtCursor | Edit::Advance => match open.tab {
            state::Tab::Question(question) => question,
            state::Tab::Review => return None,
        },
        _ => return None,
    };
    Some((open.id(), question))
}
