//! The pure state machine behind the window: pending requests, drafts, tabs, confirmations.
//!
//! No egui and no channels: the view turns input into [`Action`]s, [`State::apply`] performs
//! them, and a finished request comes out as a [`Resolved`] for the app to send. Everything the
//! user typed lives here, per request and per question, so switching tabs or requests loses
//! nothing.

use crate::protocol::origin::{Provenance, RequestId};
use crate::protocol::stream::{
    Block, CliMessage, PermissionDecision, PermissionRequest, SessionInfo, TurnResult, tool_summary,
};
use crate::protocol::{
    Ask, Draft, Envelope, Outcome, Pick, Question, ResultStyle, TextField, Warning, build_answers,
};
use crate::protocol::{limits, web};

/// Which page of a request is showing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Question(usize),
    Review,
}

/// A question waiting for the user to confirm something before it goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confirm {
    /// "Decline these questions?", with an optional message to the agent.
    Decline { message: String },
    /// Some questions are unanswered: submit anyway? Holds their indices. Enter goes back; only
    /// the button or Ctrl+Enter sends.
    PartialSubmit { missing: Vec<usize> },
    /// Answer in your own words instead of the form, as typed so far.
    Reply { text: String },
}

/// A request the user has not finished, with everything they did to it so far.
#[derive(Clone, Debug)]
pub struct Pending {
    pub id: RequestId,
    pub envelope: Envelope,
    pub ask: Ask,
    pub warnings: Vec<Warning>,
    pub provenance: Provenance,
    pub drafts: Vec<Draft>,
    pub tab: Tab,
    /// The keyboard cursor per question: an option index, or the option count for "Other".
    pub cursor: Vec<usize>,
    pub confirm: Option<Confirm>,
    /// Why the last submit did not go through (a size limit), shown until the next edit.
    pub error: Option<String>,
    /// The `--timeout` countdown, if the request has one.
    pub countdown: Option<Countdown>,
    /// Unanswered questions are sent as "skipped" rather than left out.
    pub mark_skipped: bool,
    /// Issue 9: the outcome counts once askpane's bridge acknowledges it (the browser page).
    pub awaits_ack: bool,
}

/// A request's `--timeout` countdown, in the clock the app passes to [`State::expire`] (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Countdown {
    /// Running: at `deadline` what the user finished is sent, marked as sent by the timeout.
    Running {
        deadline: f64,
        /// The seconds given in all: the timeout and any time added.
        given_secs: u64,
    },
    /// The user is here ("any key to stay"): no deadline; the agent waits for the answer.
    Stopped,
}

impl Countdown {
    /// A countdown of `secs` from `now`.
    pub fn start(now: f64, secs: u64) -> Self {
        Countdown::Running { deadline: now + secs as f64, given_secs: secs }
    }

    /// Seconds left at `now` (0 once the time ran out); `None` when stopped.
    pub fn left(&self, now: f64) -> Option<f64> {
        match self {
            Countdown::Running { deadline, .. } => Some((deadline - now).max(0.0)),
            Countdown::Stopped => None,
        }
    }

    /// The share of the time still left, from 1 down to 0, for the countdown bar.
    pub fn fraction_left(&self, now: f64) -> Option<f32> {
        match self {
            Countdown::Running { deadline, given_secs } => {
                let total = (*given_secs as f64).max(1.0);
                Some(((deadline - now) / total).clamp(0.0, 1.0) as f32)
            }
            Countdown::Stopped => None,
        }
    }
}

/// How one question stands, for the tab chips and the Review page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Answered(String),
    /// Nothing chosen (single-select) or zero chosen (multi-select).
    NotAnswered,
    /// Other is chosen but empty, so it does not count.
    OtherBlank,
}

impl Pending {
    fn new(request: NewRequest) -> Self {
        let count = request.ask.questions().len();
        // Pre-selected answers (`--answers`) fill the form; anything else starts empty.
        let mut drafts = request.drafts;
        drafts.resize(count, Draft::default());
        let cursor = request
            .ask
            .questions()
            .iter()
            .zip(&drafts)
            .map(|(question, draft)| cursor_row(question, draft))
            .collect();
        Pending {
            id: request.id,
            envelope: request.envelope,
            ask: request.ask,
            warnings: request.warnings,
            provenance: request.provenance,
            drafts,
            tab: Tab::Question(0),
            cursor,
            confirm: None,
            error: None,
            countdown: request.countdown,
            mark_skipped: request.mark_skipped,
            awaits_ack: request.awaits_ack,
        }
    }

    pub fn status(&self, question: usize) -> Status {
        let (Some(q), Some(draft)) =
            (self.ask.questions().get(question), self.drafts.get(question))
        else {
            return Status::NotAnswered;
        };
        match (draft.answer(q), draft.other_is_blank()) {
            (Some(answer), _) => Status::Answered(answer),
            (None, true) => Status::OtherBlank,
            (None, false) => Status::NotAnswered,
        }
    }

    /// Indices of the questions without an answer.
    pub fn missing(&self) -> Vec<usize> {
        (0..self.ask.questions().len())
            .filter(|&index| !matches!(self.status(index), Status::Answered(_)))
            .collect()
    }

    /// True once the user did anything to this request.
    pub fn is_touched(&self) -> bool {
        self.drafts.iter().any(Draft::is_touched)
    }

    fn question_count(&self) -> usize {
        self.ask.questions().len()
    }

    fn next_tab(&self) -> Tab {
        self.tab_after(self.tab)
    }

    fn previous_tab(&self) -> Tab {
        self.tab_before(self.tab)
    }

    /// The tab that Next (Tab, →, Enter) leads to from `tab`.
    pub fn tab_after(&self, tab: Tab) -> Tab {
        match tab {
            Tab::Question(index) if index + 1 < self.question_count() => Tab::Question(index + 1),
            _ => Tab::Review,
        }
    }

    /// The tab that Back (Shift+Tab, ←) leads to from `tab`.
    pub fn tab_before(&self, tab: Tab) -> Tab {
        match tab {
            Tab::Question(index) => Tab::Question(index.saturating_sub(1)),
            Tab::Review => Tab::Question(self.question_count().saturating_sub(1)),
        }
    }

    /// The answer as the user sees it (Review, confirmations): chosen labels exactly as shown,
    /// never JSON-quoted, and the Other text quoted; `None` when unanswered.
    pub fn shown_answer(&self, question: usize) -> Option<String> {
        let (q, draft) = (self.ask.questions().get(question)?, self.drafts.get(question)?);
        draft.answer(q)?;
        let mut items: Vec<String> = draft
            .chosen()
            .iter()
            .filter_map(|&index| q.options().get(index))
            .map(|choice| choice.label().to_owned())
            .collect();
        if draft.is_chosen(Pick::Other) && !draft.other_text().trim().is_empty() {
            items.push(format!("Other: “{}”", draft.other_text().trim()));
        }
        Some(items.join(" · "))
    }

    /// The seconds given to a timed request in all, for the "no response after N s" text.
    fn given_secs(&self) -> u64 {
        match self.countdown {
            Some(Countdown::Running { given_secs, .. }) => given_secs,
            _ => 0,
        }
    }

    /// What the user typed into this request, for the notice shown when it is withdrawn.
    fn typed_text(&self) -> String {
        let mut texts = Vec::new();
        for (question, draft) in self.ask.questions().iter().zip(&self.drafts) {
            for (what, text) in [("Other", draft.other_text()), ("note", draft.notes())] {
                if !text.trim().is_empty() {
                    texts.push(format!("{} ({what}): {}", question.header(), text.trim()));
                }
            }
        }
        texts.join("\n")
    }
}

/// Where the keyboard cursor starts on a question: the chosen option, Other when only Other is
/// chosen, else the first row.
fn cursor_row(question: &Question, draft: &Draft) -> usize {
    match (draft.chosen().first(), draft.is_chosen(Pick::Other)) {
        (Some(&row), _) => row,
        (None, true) => question.options().len(),
        (None, false) => 0,
    }
}

/// A request as the app hands it to the state (its responder stays with the app).
#[derive(Clone, Debug)]
pub struct NewRequest {
    pub id: RequestId,
    pub envelope: Envelope,
    pub ask: Ask,
    pub warnings: Vec<Warning>,
    pub provenance: Provenance,
    /// Pre-selected answers, one per question (may be empty).
    pub drafts: Vec<Draft>,
    /// The `--timeout` countdown, started by the app when the request arrives.
    pub countdown: Option<Countdown>,
    /// Send unanswered questions as "skipped" (the session can take it).
    pub mark_skipped: bool,
    /// The outcome counts once askpane's bridge acknowledges it (issue 9; the browser page).
    pub awaits_ack: bool,
}

/// What [`State::push`] did with a new request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushed {
    Added,
    /// The same tool_use id is already showing: reply to both, show it once.
    SameAs(RequestId),
}

/// A request that is finished, for the app to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub id: RequestId,
    pub outcome: Outcome,
}

/// What was sent for the last finished request: shown so the user sees exactly what the agent got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub title: String,
    pub provenance: String,
    pub outcome_kind: &'static str,
    /// Sent because the `--timeout` ran out, not by the user's own submit.
    pub by_timeout: bool,
    /// The reply JSON in the request's envelope, pretty-printed (empty when nothing is sent).
    pub reply: String,
    /// The tool_result text the model reads.
    pub model_text: String,
    /// Issue 9: whether askpane has it yet. A browser page says "Sent" only once it has.
    pub tool_use_id: Option<String>,
    pub send_state: SendState,
}

/// Whether askpane has a finished request's outcome (issue 9). Natively handing it over is
/// delivery; a browser page waits for the bridge's acknowledgement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendState {
    Sending,
    Sent,
    /// It did not count; why.
    NotSent(String),
}

impl Receipt {
    fn new(pending: &Pending, outcome: &Outcome, by_timeout: bool) -> Self {
        let reply = pending
            .envelope
            .reply(outcome)
            .and_then(|value| serde_json::to_string_pretty(&value).ok())
            .unwrap_or_default();
        Receipt {
            title: pending.ask.title().to_owned(),
            provenance: pending.provenance.label(),
            outcome_kind: outcome.kind(),
            by_timeout,
            reply,
            model_text: outcome.model_text(ResultStyle::Current),
            tool_use_id: pending.envelope.tool_use_id().map(str::to_owned),
            send_state: match pending.awaits_ack {
                true => SendState::Sending,
                false => SendState::Sent,
            },
        }
    }
}

/// Everything the user can do. Actions without a request id act on the current request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    SelectRequest(RequestId),
    ShowTab(Tab),
    NextTab,
    PreviousTab,
    Pick {
        question: usize,
        pick: Pick,
    },
    /// Move the keyboard cursor of the current question by rows (Other is the last row).
    MoveCursor(isize),
    /// Put the cursor on a row without picking it (a click on an option also moves it there).
    SetCursor {
        question: usize,
        row: usize,
    },
    /// Pick the row under the cursor (Space).
    PickAtCursor,
    ClearChoice {
        question: usize,
    },
    SetOtherText {
        question: usize,
        text: String,
    },
    SetNotes {
        question: usize,
        text: String,
    },
    /// Enter: pick the highlighted row (single-select) and go to the next question, or submit
    /// from Review.
    Advance,
    /// Submit; asks first when some questions are unanswered.
    Submit,
    /// Submit although some questions are unanswered (they are left out).
    ConfirmSubmit,
    /// Esc or the Decline button: ask "Decline these questions?".
    AskDecline,
    SetDeclineMessage(String),
    ConfirmDecline,
    /// Decline, and stop the agent's turn (stream-json hosts only).
    ConfirmDeclineAndStop,
    /// "Chat about this": tell the agent you want to talk before answering (protocol.md §15).
    Clarify,
    /// "Answer in your own words…": a reply that replaces the form.
    AskReply,
    SetReplyText(String),
    ConfirmReply,
    /// Back out of a confirmation (second Esc, a click elsewhere).
    CancelConfirm,
    DismissReceipt,
    DismissNotice(usize),
    /// Any key or click while a countdown runs: the user is here, stop every countdown.
    Stay,
    /// Give the current request this many more seconds.
    AddTime(u64),
    /// Ctrl+W: close the window, exactly as its close button does.
    RequestClose,
    /// "Close askpane?" answered with "Keep answering".
    KeepOpen,
    /// "Close askpane?" answered with "Close": every open request is declined as closed.
    ConfirmClose,
    /// Something for the agent session (`askpane claude`): permissions, prompts, Stop.
    Session(SessionAction),
}

/// What the user does to an agent session run under askpane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionAction {
    AllowPermission(RequestId),
    DenyPermission(RequestId),
    SetDenyMessage {
        id: RequestId,
        text: String,
    },
    SetPrompt(String),
    /// Send the prompt box as the next user turn.
    SendPrompt,
    /// Stop the current turn.
    Stop,
}

/// What the app must do for the agent after a [`SessionAction`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEffect {
    Decided { id: RequestId, decision: PermissionDecision },
    Prompt(String),
    Interrupt,
}

/// A tool the agent wants to run, waiting for the user.
#[derive(Clone, Debug)]
pub struct PendingPermission {
    pub id: RequestId,
    pub request: PermissionRequest,
    pub provenance: Provenance,
    /// The message sent with a deny, as typed so far.
    pub deny_message: String,
}

/// Longest tool output or input kept per transcript entry; the rest is counted, not kept, so a
/// session with huge tool results stays small.
pub const ENTRY_LIMIT: usize = 64 * 1024;

/// One line of the session transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    User(String),
    Assistant(String),
    Thinking(String),
    ToolCall { id: String, summary: String, input: String },
    ToolResult { tool_use_id: String, content: String, is_error: bool },
    TurnEnded(TurnResult),
}

/// The agent session shown beside the questions (`askpane claude`).
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub info: Option<SessionInfo>,
    pub entries: Vec<Entry>,
    /// A turn is running (a prompt was sent and its `result` has not come).
    pub busy: bool,
    /// How the agent ended, and the last lines of its stderr.
    pub ended: Option<(String, Vec<String>)>,
    /// The prompt box, as typed so far.
    pub prompt: String,
}

/// Keeps at most [`ENTRY_LIMIT`] bytes of a text (on a char boundary), saying how much was cut.
fn capped(text: &str) -> String {
    if text.len() <= ENTRY_LIMIT {
        return text.to_owned();
    }
    let mut end = ENTRY_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… {} more bytes not shown", &text[..end], text.len() - end)
}

impl Session {
    /// Adds what a CLI message shows; other messages change nothing.
    fn record(&mut self, message: CliMessage) {
        // Text on a user line is the user's side ("[Request interrupted by user for tool use]").
        let from_user = matches!(message, CliMessage::User { .. });
        match message {
            CliMessage::Init(info) => self.info = Some(info),
            CliMessage::Assistant { blocks } | CliMessage::User { blocks } => {
                for block in blocks {
                    self.entries.push(match block {
                        Block::Text(text) if from_user => Entry::User(capped(&text)),
                        Block::Text(text) => Entry::Assistant(capped(&text)),
                        Block::Thinking(text) => Entry::Thinking(capped(&text)),
                        Block::ToolUse { id, name, input } => Entry::ToolCall {
                            id,
                            summary: tool_summary(&name, &input),
                            input: capped(
                                &serde_json::to_string_pretty(&input).unwrap_or_default(),
                            ),
                        },
                        Block::ToolResult { tool_use_id, content, is_error } => {
                            Entry::ToolResult { tool_use_id, content: capped(&content), is_error }
                        }
                    });
                }
            }
            CliMessage::Result(result) => {
                self.busy = false;
                self.entries.push(Entry::TurnEnded(result));
            }
            _ => {}
        }
    }
}

/// All pending requests and what the window shows.
#[derive(Debug, Default)]
pub struct State {
    pending: Vec<Pending>,
    current: Option<RequestId>,
    receipt: Option<Receipt>,
    notices: Vec<String>,
    /// Requests answered so far in this run (the demo counts them).
    answered: usize,
    /// The window was asked to close while answers were in progress: ask first.
    confirm_close: bool,
    permissions: Vec<PendingPermission>,
    session: Option<Session>,
}

impl State {
    pub fn pending(&self) -> &[Pending] {
        &self.pending
    }

    pub fn current(&self) -> Option<&Pending> {
        let id = self.current?;
        self.pending.iter().find(|pending| pending.id == id)
    }

    fn current_mut(&mut self) -> Option<&mut Pending> {
        let id = self.current?;
        self.pending.iter_mut().find(|pending| pending.id == id)
    }

    pub fn receipt(&self) -> Option<&Receipt> {
        self.receipt.as_ref()
    }

    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    pub fn answered_count(&self) -> usize {
        self.answered
    }

    pub fn permissions(&self) -> &[PendingPermission] {
        &self.permissions
    }

    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// Starts showing an agent session (before its first message, so the prompt box shows).
    pub fn start_session(&mut self, prompt: Option<&str>) {
        let mut session = Session::default();
        if let Some(prompt) = prompt {
            session.entries.push(Entry::User(prompt.to_owned()));
            session.busy = true;
        }
        self.session = Some(session);
    }

    /// Records one event of the agent session.
    pub fn session_event(&mut self, event: crate::protocol::stream::SessionEvent) {
        let session = self.session.get_or_insert_with(Session::default);
        match event {
            crate::protocol::stream::SessionEvent::Message(message) => session.record(message),
            crate::protocol::stream::SessionEvent::Ended { status, stderr_tail } => {
                session.busy = false;
                session.ended = Some((status, stderr_tail));
            }
        }
    }

    pub fn push_permission(&mut self, permission: PendingPermission) {
        self.permissions.push(permission);
    }

    /// Removes a permission request the agent withdrew. Returns its id.
    pub fn withdraw_permission(&mut self, request_id: &str) -> Option<RequestId> {
        let index = self.permissions.iter().position(|p| p.request.request_id == request_id)?;
        Some(self.permissions.remove(index).id)
    }

    /// Applies what the user did to the agent session; returns what the app must send.
    pub fn apply_session(&mut self, action: SessionAction) -> Option<SessionEffect> {
        match action {
            SessionAction::AllowPermission(id) => {
                let index = self.permissions.iter().position(|p| p.id == id)?;
                self.permissions.remove(index);
                Some(SessionEffect::Decided { id, decision: PermissionDecision::AllowOnce })
            }
            SessionAction::DenyPermission(id) => {
                let index = self.permissions.iter().position(|p| p.id == id)?;
                let permission = self.permissions.remove(index);
                let message = match permission.deny_message.trim() {
                    "" => "The user denied this tool call.".to_owned(),
                    text => format!("The user denied this tool call and said: {text}"),
                };
                Some(SessionEffect::Decided { id, decision: PermissionDecision::Deny { message } })
            }
            SessionAction::SetDenyMessage { id, text } => {
                let permission = self.permissions.iter_mut().find(|p| p.id == id)?;
                permission.deny_message = text;
                None
            }
            SessionAction::SetPrompt(text) => {
                self.session.as_mut()?.prompt = text;
                None
            }
            SessionAction::SendPrompt => {
                let session = self.session.as_mut()?;
                let prompt = session.prompt.trim().to_owned();
                if prompt.is_empty() || session.ended.is_some() {
                    return None;
                }
                session.prompt.clear();
                session.busy = true;
                session.entries.push(Entry::User(prompt.clone()));
                Some(SessionEffect::Prompt(prompt))
            }
            SessionAction::Stop => {
                let session = self.session.as_ref()?;
                (session.busy && session.ended.is_none()).then_some(SessionEffect::Interrupt)
            }
        }
    }

    /// True while "Close askpane?" is showing.
    pub fn confirming_close(&self) -> bool {
        self.confirm_close
    }

    /// The window is closing. Returns false (and asks the user first) when that would throw away
    /// answers in progress; true when it may close.
    pub fn request_close(&mut self) -> bool {
        self.confirm_close = self.pending.iter().any(Pending::is_touched);
        !self.confirm_close
    }

    /// The window title: who asks (the project, else the first header), how many questions, how
    /// many other requests wait, and the countdown when one runs:
    /// `⏱ 0:42 · orders · 3 questions (+1 waiting) — askpane`.
    pub fn title(&self, now: f64) -> String {
        let Some(current) = self.current() else { return "askpane".to_owned() };
        let name = current.provenance.project.as_deref().unwrap_or(current.ask.title());
        // Control characters (a NUL above all) cannot go into a window title.
        let name: String = name.chars().filter(|c| !c.is_control()).collect();
        let count = current.ask.questions().len();
        let mut title = match count {
            1 => "1 question".to_owned(),
            count => format!("{count} questions"),
        };
        if !name.trim().is_empty() {
            title = format!("{} · {title}", name.trim());
        }
        let waiting = self.pending.len() - 1;
        if waiting > 0 {
            title.push_str(&format!(" (+{waiting} waiting)"));
        }
        if let Some(left) = current.countdown.and_then(|countdown| countdown.left(now)) {
            let left = left.ceil() as u64;
            title = format!("⏱ {}:{:02} · {title}", left / 60, left % 60);
        }
        format!("{title} — askpane")
    }

    /// Adds a request, or recognises one already showing (same tool_use id).
    pub fn push(&mut self, request: NewRequest) -> Pushed {
        if let Some(key) = request.envelope.tool_use_id()
            && let Some(existing) =
                self.pending.iter().find(|p| p.envelope.tool_use_id() == Some(key))
        {
            return Pushed::SameAs(existing.id);
        }
        let id = request.id;
        self.pending.push(Pending::new(request));
        self.current.get_or_insert(id);
        Pushed::Added
    }

    /// Removes the request the agent withdrew, telling the user and keeping what they typed.
    pub fn withdraw(&mut self, tool_use_id: &str) -> Option<RequestId> {
        self.remove_with_notice(tool_use_id, |pending| {
            format!(
                "{} withdrew “{}” before it was answered.",
                pending.provenance.label(),
                pending.ask.title()
            )
        })
    }

    /// Removes a request settled elsewhere (`how`: "answered in another window"), keeping what
    /// the user typed here in the notice.
    pub fn settled_elsewhere(&mut self, tool_use_id: &str, how: &str) -> Option<RequestId> {
        self.remove_with_notice(tool_use_id, |pending| {
            format!("“{}” was {how}.", pending.ask.title())
        })
    }

    fn remove_with_notice(
        &mut self,
        tool_use_id: &str,
        headline: impl FnOnce(&Pending) -> String,
    ) -> Option<RequestId> {
        let index =
            self.pending.iter().position(|p| p.envelope.tool_use_id() == Some(tool_use_id))?;
        let pending = self.pending.remove(index);
        let typed = pending.typed_text();
        let mut notice = headline(&pending);
        if !typed.is_empty() {
            notice.push_str("\nWhat you typed:\n");
            notice.push_str(&typed);
        }
        self.notices.push(notice);
        self.after_removal(pending.id);
        Some(pending.id)
    }

    pub fn notify(&mut self, notice: String) {
        self.notices.push(notice);
    }

    /// Issue 9: askpane acknowledged the outcome of `tool_use_id`; the receipt says "Sent".
    pub fn delivered(&mut self, tool_use_id: &str) {
        if let Some(receipt) = self.receipt_for(tool_use_id) {
            receipt.send_state = SendState::Sent;
        }
    }

    /// Issue 9: the outcome of `tool_use_id` did not count (`why`); the receipt and a notice say so.
    pub fn not_delivered(&mut self, tool_use_id: &str, why: String) {
        if let Some(receipt) = self.receipt_for(tool_use_id) {
            receipt.send_state = SendState::NotSent(why.clone());
        }
        self.notices.push(why);
    }

    /// Issue 9: askpane refused what was sent for request `id` (pushed again, with the form as it
    /// was). It comes back as the user left it, showing `error` (on `question`'s page when it
    /// names one) or the reply or decline box it came from.
    pub fn returned(
        &mut self,
        id: RequestId,
        refused: &Outcome,
        error: &str,
        question: Option<usize>,
    ) {
        let Some(pending) = self.pending.iter_mut().find(|pending| pending.id == id) else {
            return;
        };
        pending.confirm = match refused {
            Outcome::Replied(reply) => Some(Confirm::Reply { text: reply.text().to_owned() }),
            Outcome::Declined { message } | Outcome::Stopped { message } => {
                Some(Confirm::Decline { message: web::decline_words(message) })
            }
            _ => None,
        };
        if let Some(question) = question.filter(|&q| q < pending.question_count()) {
            pending.tab = Tab::Question(question);
        }
        pending.error = Some(format!("Not sent: {error}. Change it and send again."));
        let tool_use_id = pending.envelope.tool_use_id().map(str::to_owned);
        self.current = Some(id);
        if self.receipt.as_ref().is_some_and(|receipt| receipt.tool_use_id == tool_use_id) {
            self.receipt = None;
        }
    }

    fn receipt_for(&mut self, tool_use_id: &str) -> Option<&mut Receipt> {
        self.receipt.as_mut().filter(|receipt| receipt.tool_use_id.as_deref() == Some(tool_use_id))
    }

    /// Ends every pending request with the same outcome (the window is closing, time ran out).
    pub fn resolve_all(&mut self, outcome: impl Fn(&Pending) -> Outcome) -> Vec<Resolved> {
        let resolved = self
            .pending
            .iter()
            .map(|pending| Resolved { id: pending.id, outcome: outcome(pending) })
            .collect();
        self.pending.clear();
        self.current = None;
        resolved
    }

    /// Ends every request whose countdown ran out. A box the user is typing in (`typing`: focused
    /// or edited a moment ago) is never sent as a finished answer: it is left out and the model is
    /// told. Every question answered and nothing being typed is sent as the user's answer;
    /// anything less goes as "no response", listing what was picked (see [`Outcome::at_deadline`]).
    /// What was typed and not sent stays in a notice.
    pub fn expire(
        &mut self,
        now: f64,
        typing: &dyn Fn(RequestId, usize, TextField) -> bool,
    ) -> Vec<Resolved> {
        let due = |pending: &Pending| matches!(pending.countdown, Some(Countdown::Running { deadline, .. }) if now >= deadline);
        let (expired, kept): (Vec<Pending>, Vec<Pending>) =
            std::mem::take(&mut self.pending).into_iter().partition(due);
        self.pending = kept;
        let mut resolved = Vec::with_capacity(expired.len());
        for pending in expired {
            let mut finished = Vec::with_capacity(pending.drafts.len());
            let mut still_typing = Vec::new();
            let mut unsent = Vec::new();
            for (index, draft) in pending.drafts.iter().enumerate() {
                let mut draft = draft.clone();
                for (field, name) in [(TextField::Other, "Other"), (TextField::Notes, "note")] {
                    let text = draft.text(field).trim().to_owned();
                    if !text.is_empty() && typing(pending.id, index, field) {
                        draft = draft.without_text(field);
                        let header =
                            pending.ask.questions().get(index).map_or("", Question::header);
                        unsent.push(format!("{header} ({name}): {text}"));
                        if still_typing.last() != Some(&index) {
                            still_typing.push(index);
                        }
                    }
                }
                finished.push(draft);
            }
            let outcome =
                Outcome::at_deadline(&pending.ask, &finished, &still_typing, pending.given_secs());
            let outcome = match outcome {
                Outcome::Answered(mut answers) if pending.mark_skipped => {
                    answers.mark_skipped(&pending.ask);
                    Outcome::Answered(answers)
                }
                outcome => outcome,
            };
            if !unsent.is_empty() {
                self.notices.push(format!(
                    "Time ran out on “{}” while you were typing; this was not sent:\n{}",
                    pending.ask.title(),
                    unsent.join("\n")
                ));
            }
            self.receipt = Some(Receipt::new(&pending, &outcome, true));
            self.after_removal(pending.id);
            resolved.push(Resolved { id: pending.id, outcome });
        }
        resolved
    }

    /// Another window changed the countdown of `tool_use_id`: `left_secs` from `now`, or stopped.
    pub fn countdown_changed(&mut self, tool_use_id: &str, now: f64, left_secs: Option<u64>) {
        let Some(pending) =
            self.pending.iter_mut().find(|p| p.envelope.tool_use_id() == Some(tool_use_id))
        else {
            return;
        };
        pending.countdown = match (pending.countdown, left_secs) {
            (None, _) => None,
            (Some(_), None) => Some(Countdown::Stopped),
            (Some(before), Some(left)) => {
                let given = match before {
                    Countdown::Running { given_secs, .. } => given_secs.max(left),
                    Countdown::Stopped => left,
                };
                Some(Countdown::Running { deadline: now + left as f64, given_secs: given })
            }
        };
    }

    /// The earliest running deadline of any waiting request, so the app knows when to wake.
    pub fn next_deadline(&self) -> Option<f64> {
        self.pending
            .iter()
            .filter_map(|pending| match pending.countdown {
                Some(Countdown::Running { deadline, .. }) => Some(deadline),
                _ => None,
            })
            .reduce(f64::min)
    }

    /// True while some request's countdown runs.
    pub fn counting_down(&self) -> bool {
        self.next_deadline().is_some()
    }

    fn after_removal(&mut self, removed: RequestId) {
        if self.current == Some(removed) {
            self.current = self.pending.first().map(|pending| pending.id);
        }
    }

    /// Performs one action; returns the request it finished, if any.
    pub fn apply(&mut self, action: Action) -> Option<Resolved> {
        match action {
            Action::SelectRequest(id) => {
                if self.pending.iter().any(|pending| pending.id == id) {
                    self.current = Some(id);
                    self.receipt = None;
                }
                None
            }
            Action::DismissReceipt => {
                self.receipt = None;
                None
            }
            Action::DismissNotice(index) => {
                if index < self.notices.len() {
                    self.notices.remove(index);
                }
                None
            }
            Action::KeepOpen => {
                self.confirm_close = false;
                None
            }
            Action::Stay => {
                for pending in &mut self.pending {
                    if let Some(countdown @ Countdown::Running { .. }) = &mut pending.countdown {
                        *countdown = Countdown::Stopped;
                    }
                }
                None
            }
            // The app closes the window; the close path then asks or declines.
            Action::RequestClose => None,
            // The app closes the window; what is open is then told the window closed.
            Action::ConfirmClose => None,
            // Session actions go through `apply_session`.
            Action::Session(_) => None,
            action => self.apply_to_current(action),
        }
    }

    fn apply_to_current(&mut self, action: Action) -> Option<Resolved> {
        let pending = self.current_mut()?;
        // Any edit clears an old size-limit message; it is recomputed on the next submit.
        if !matches!(action, Action::Submit | Action::ConfirmSubmit | Action::Advance) {
            pending.error = None;
        }
        match action {
            Action::ShowTab(tab) => {
                pending.tab = match tab {
                    Tab::Question(index) if index >= pending.question_count() => Tab::Review,
                    tab => tab,
                };
                pending.confirm = None;
            }
            Action::NextTab => {
                pending.tab = pending.next_tab();
                pending.confirm = None;
            }
            Action::PreviousTab => {
                pending.tab = pending.previous_tab();
                pending.confirm = None;
            }
            Action::Pick { question, pick } => {
                let (Some(q), Some(draft)) =
                    (pending.ask.questions().get(question), pending.drafts.get_mut(question))
                else {
                    return None;
                };
                draft.pick(q, pick);
                if let Some(cursor) = pending.cursor.get_mut(question) {
                    *cursor = match pick {
                        Pick::Option(index) => index,
                        Pick::Other => q.options().len(),
                    };
                }
                pending.confirm = None;
            }
            Action::MoveCursor(delta) => {
                let Tab::Question(question) = pending.tab else { return None };
                let rows = pending.ask.questions().get(question)?.options().len() + 1;
                let cursor = pending.cursor.get_mut(question)?;
                *cursor = cursor.saturating_add_signed(delta).min(rows - 1);
            }
            Action::SetCursor { question, row } => {
                let rows = pending.ask.questions().get(question)?.options().len() + 1;
                if let Some(cursor) = pending.cursor.get_mut(question) {
                    *cursor = row.min(rows - 1);
                }
            }
            Action::PickAtCursor => {
                let Tab::Question(question) = pending.tab else { return None };
                let q = pending.ask.questions().get(question)?;
                let row = *pending.cursor.get(question)?;
                let pick = if row < q.options().len() { Pick::Option(row) } else { Pick::Other };
                return self.apply_to_current(Action::Pick { question, pick });
            }
            Action::AddTime(secs) => {
                if let Some(Countdown::Running { deadline, given_secs }) = &mut pending.countdown {
                    *deadline += secs as f64;
                    *given_secs = given_secs.saturating_add(secs);
                }
            }
            Action::ClearChoice { question } => {
                if let Some(draft) = pending.drafts.get_mut(question) {
                    draft.clear_choice();
                }
            }
            Action::SetOtherText { question, text } => {
                if let (Some(q), Some(draft)) =
                    (pending.ask.questions().get(question), pending.drafts.get_mut(question))
                {
                    // Typing into Other makes it the row the user is on.
                    if !text.trim().is_empty()
                        && let Some(cursor) = pending.cursor.get_mut(question)
                    {
                        *cursor = q.options().len();
                    }
                    draft.set_other_text(q, text);
                }
            }
            Action::SetNotes { question, text } => {
                if let Some(draft) = pending.drafts.get_mut(question) {
                    draft.set_notes(text);
                }
            }
            Action::Advance => match pending.tab {
                Tab::Review => return self.submit(false),
                Tab::Question(question) => {
                    // Enter answers with the highlighted row, as Claude Code's dialog and zenity
                    // do; on multi-select (Space toggles) it only moves on. An Other with nothing
                    // typed cannot be an answer: Enter stays (the view focuses its box).
                    let (Some(q), Some(&row)) =
                        (pending.ask.questions().get(question), pending.cursor.get(question))
                    else {
                        return None;
                    };
                    if !q.multi_select() {
                        let draft = pending.drafts.get_mut(question)?;
                        if row < q.options().len() {
                            draft.pick(q, Pick::Option(row));
                        } else if draft.other_text().trim().is_empty() {
                            return None;
                        } else if !draft.is_chosen(Pick::Other) {
                            draft.pick(q, Pick::Other);
                        }
                    }
                    pending.tab = pending.next_tab();
                    pending.confirm = None;
                }
            },
            Action::Submit => return self.submit(false),
            Action::ConfirmSubmit => return self.submit(true),
            Action::AskDecline => {
                pending.confirm = Some(Confirm::Decline { message: String::new() });
            }
            Action::SetDeclineMessage(text) => {
                if let Some(Confirm::Decline { message }) = &mut pending.confirm {
                    *message = text;
                }
            }
            Action::ConfirmDecline | Action::ConfirmDeclineAndStop => {
                let message = match &pending.confirm {
                    Some(Confirm::Decline { message }) => message.clone(),
                    _ => String::new(),
                };
                // Issue 9: refused before sending, shown beside the box, never cut.
                if let Err(limit) = limits::check_decline_message(&message) {
                    pending.error = Some(format!("Not sent: {limit}. Shorten it and send again."));
                    return None;
                }
                return self.finish(match action {
                    Action::ConfirmDeclineAndStop => Outcome::stopped(&message),
                    _ => Outcome::declined(&message),
                });
            }
            Action::Clarify => {
                let outcome = Outcome::clarify(&pending.ask, &pending.drafts);
                return self.finish(outcome);
            }
            Action::AskReply => pending.confirm = Some(Confirm::Reply { text: String::new() }),
            Action::SetReplyText(new_text) => {
                if let Some(Confirm::Reply { text }) = &mut pending.confirm {
                    *text = new_text;
                }
            }
            Action::ConfirmReply => {
                let Some(Confirm::Reply { text }) = &pending.confirm else { return None };
                if text.trim().is_empty() {
                    return None;
                }
                // Issue 9: refused before sending, shown beside the box, never cut.
                if let Err(limit) = limits::check_reply(text) {
                    pending.error = Some(format!("Not sent: {limit}. Shorten it and send again."));
                    return None;
                }
                let outcome = Outcome::replied(&pending.ask, text);
                return self.finish(outcome);
            }
            Action::CancelConfirm => pending.confirm = None,
            Action::SelectRequest(_)
            | Action::DismissReceipt
            | Action::DismissNotice(_)
            | Action::KeepOpen
            | Action::Stay
            | Action::RequestClose
            | Action::ConfirmClose
            | Action::Session(_) => {}
        }
        None
    }

    fn submit(&mut self, partial_confirmed: bool) -> Option<Resolved> {
        let pending = self.current_mut()?;
        let missing = pending.missing();
        if !missing.is_empty() && !partial_confirmed {
            pending.tab = Tab::Review;
            pending.confirm = Some(Confirm::PartialSubmit { missing });
            return None;
        }
        match build_answers(&pending.ask, &pending.drafts) {
            // Nothing chosen and no note: not an answer. A session that takes "skipped" is told
            // each question was skipped; any other is told the user answered nothing.
            Ok(answers) if answers.is_empty() && !pending.mark_skipped => {
                self.finish(Outcome::nothing_answered())
            }
            Ok(mut answers) => {
                if pending.mark_skipped {
                    answers.mark_skipped(&pending.ask);
                }
                self.finish(Outcome::Answered(answers))
            }
            Err(limit) => {
                pending.error = Some(format!("Not sent: {limit}. Shorten it and submit again."));
                pending.confirm = None;
                None
            }
        }
    }

    /// Removes the current request with its outcome and moves on to the next one.
    fn finish(&mut self, outcome: Outcome) -> Option<Resolved> {
        let id = self.current?;
        let index = self.pending.iter().position(|pending| pending.id == id)?;
        let pending = self.pending.remove(index);
        self.receipt = Some(Receipt::new(&pending, &outcome, false));
        if matches!(outcome, Outcome::Answered(_)) {
            self.answered += 1;
        }
        self.after_removal(id);
        Some(Resolved { id, outcome })
    }
}

/// The answer as the Review page shows it: labels as the user saw them, Other text quoted.
pub fn review_line(pending: &Pending, question: usize) -> String {
    match (pending.status(question), pending.shown_answer(question)) {
        (Status::Answered(_), Some(shown)) => shown,
        (Status::Answered(answer), None) => answer,
        (Status::NotAnswered, _) => "not answered".to_owned(),
        (Status::OtherBlank, _) => "Other is chosen but empty".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{Envelope, validate};

    fn request(input: serde_json::Value, envelope: Envelope) -> NewRequest {
        let validated = validate(&input).expect("valid test input");
        NewRequest {
            id: RequestId::next(),
            envelope,
            ask: validated.ask,
            warnings: validated.warnings,
            provenance: Provenance::new("test", None),
            drafts: Vec::new(),
            countdown: None,
            mark_skipped: false,
            awaits_ack: false,
        }
    }

    fn three_questions() -> NewRequest {
        request(
            json!({"questions": [
                {"question": "Which database?", "header": "Database", "multiSelect": false, "options": [
                    {"label": "PostgreSQL (Recommended)", "description": ""}, {"label": "SQLite", "description": ""}]},
                {"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": [
                    {"label": "Clippy", "description": ""}, {"label": "Tests", "description": ""},
                    {"label": "Miri", "description": ""}]},
                {"question": "Deploy?", "header": "Deploy", "multiSelect": false, "options": [
                    {"label": "Yes", "description": ""}, {"label": "No", "description": ""}]},
            ]}),
            Envelope::ToolInput,
        )
    }

    fn answers_of(resolved: &Resolved) -> serde_json::Value {
        match &resolved.outcome {
            Outcome::Answered(answers) => serde_json::Value::Object(answers.answers_json()),
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn keyboard_flow_answers_every_question() {
        let mut state = State::default();
        state.push(three_questions());
        // Q1: cursor down to SQLite, Space. Enter → Q2.
        state.apply(Action::MoveCursor(1));
        state.apply(Action::PickAtCursor);
        state.apply(Action::Advance);
        // Q2: pick 1 and 3, then Other with text.
        state.apply(Action::Pick { question: 1, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 1, pick: Pick::Option(2) });
        state.apply(Action::SetOtherText { question: 1, text: "Fuzzing".into() });
        state.apply(Action::Advance);
        state.apply(Action::Pick { question: 2, pick: Pick::Option(0) });
        state.apply(Action::Advance);
        assert_eq!(state.current().map(|p| p.tab), Some(Tab::Review));
        let resolved = state.apply(Action::Advance).expect("Enter on Review submits");
        assert_eq!(
            answers_of(&resolved),
            json!({"Which database?": "SQLite", "Which checks?": "Clippy, Miri, Fuzzing", "Deploy?": "Yes"})
        );
        assert!(state.current().is_none());
        assert_eq!(state.receipt().map(|r| r.outcome_kind), Some("answered"));
    }

    #[test]
    fn partial_submit_asks_first_and_leaves_out_unanswered() {
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::Pick { question: 0, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 1, pick: Pick::Other });
        assert!(state.apply(Action::Submit).is_none(), "asks before a partial submit");
        let pending = state.current().expect("still pending");
        assert_eq!(pending.confirm, Some(Confirm::PartialSubmit { missing: vec![1, 2] }));
        assert_eq!(pending.status(1), Status::OtherBlank);
        assert_eq!(pending.status(2), Status::NotAnswered);
        let resolved = state.apply(Action::ConfirmSubmit).expect("confirmed");
        assert_eq!(answers_of(&resolved), json!({"Which database?": "PostgreSQL (Recommended)"}));
    }

    #[test]
    fn escape_twice_keeps_the_question_and_decline_sends_the_message() {
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::AskDecline);
        state.apply(Action::CancelConfirm);
        let pending = state.current().expect("a stray Esc loses nothing");
        assert_eq!(pending.confirm, None);
        state.apply(Action::AskDecline);
        state.apply(Action::SetDeclineMessage("Use the defaults".into()));
        let resolved = state.apply(Action::ConfirmDecline).expect("declined");
        assert_eq!(
            resolved.outcome,
            Outcome::Declined {
                message: "The user declined to answer these questions and said: Use the defaults"
                    .into()
            }
        );
    }

    #[test]
    fn drafts_survive_switching_tabs_and_requests() {
        let mut state = State::default();
        state.push(three_questions());
        let second = three_questions();
        let second_id = second.id;
        state.push(second);
        let first_id = state.current().map(|p| p.id).expect("first is current");
        state.apply(Action::SetOtherText { question: 0, text: "MariaDB".into() });
        state.apply(Action::SetNotes { question: 0, text: "managed".into() });
        state.apply(Action::NextTab);
        state.apply(Action::SelectRequest(second_id));
        state.apply(Action::SelectRequest(first_id));
        let pending = state.current().expect("first again");
        assert_eq!(pending.drafts[0].other_text(), "MariaDB");
        assert_eq!(pending.drafts[0].notes(), "managed");
        assert_eq!(pending.tab, Tab::Question(1));
    }

    #[test]
    fn same_tool_use_id_is_shown_once_and_withdraw_keeps_typed_text() {
        let mut state = State::default();
        let envelope = Envelope::ToolUse { id: "toolu_1".into() };
        let first = request(
            json!({"questions": [{"question": "Q?", "header": "Q",
            "options": [{"label": "A"}, {"label": "B"}]}]}),
            envelope.clone(),
        );
        let first_id = first.id;
        let again = NewRequest { id: RequestId::next(), ..first.clone() };
        assert_eq!(state.push(first), Pushed::Added);
        assert_eq!(state.push(again), Pushed::SameAs(first_id));
        assert_eq!(state.pending().len(), 1);
        state.apply(Action::SetOtherText { question: 0, text: "C instead".into() });
        assert_eq!(state.withdraw("toolu_1"), Some(first_id));
        assert!(state.pending().is_empty());
        let notice = state.notices().first().expect("a notice");
        assert!(notice.contains("withdrew") && notice.contains("C instead"), "{notice}");
    }

    #[test]
    fn a_limit_error_keeps_the_request_and_says_why() {
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::SetNotes { question: 0, text: "x".repeat(9000) });
        state.apply(Action::Pick { question: 0, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 1, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 2, pick: Pick::Option(0) });
        assert!(state.apply(Action::Submit).is_none());
        let error = state.current().and_then(|p| p.error.clone()).expect("an error");
        assert_eq!(
            error,
            "Not sent: the note on question 1 is 9000 characters long; the limit is 8192. Shorten \
             it and submit again."
        );
    }

    #[test]
    fn closing_asks_first_only_when_something_was_typed_or_chosen() {
        let mut state = State::default();
        state.push(three_questions());
        assert!(state.request_close(), "nothing done yet: close at once");
        state.apply(Action::Pick { question: 0, pick: Pick::Option(1) });
        assert!(!state.request_close());
        assert!(state.confirming_close());
        state.apply(Action::KeepOpen);
        assert!(!state.confirming_close());
        assert_eq!(state.current().map(|p| p.drafts[0].chosen().to_vec()), Some(vec![1]));
    }

    fn nobody_typing(_: RequestId, _: usize, _: TextField) -> bool {
        false
    }

    fn timed(seconds: u64) -> NewRequest {
        NewRequest { countdown: Some(Countdown::start(0.0, seconds)), ..three_questions() }
    }

    #[test]
    fn on_timeout_picks_are_told_as_not_submitted_never_sent_as_the_answer() {
        let mut state = State::default();
        state.push(timed(10));
        state.apply(Action::Pick { question: 1, pick: Pick::Option(1) });
        assert!(state.expire(9.9, &nobody_typing).is_empty(), "not yet");
        let resolved = state.expire(10.0, &nobody_typing);
        assert_eq!(resolved.len(), 1);
        let Outcome::TimedOut(timed_out) = &resolved[0].outcome else {
            panic!("a partial form is not an answer: {:?}", resolved[0].outcome)
        };
        assert_eq!(
            timed_out.message(),
            "No response after 10s \u{2014} the user may be away from keyboard. Proceed using \
             your best judgment based on the context so far; you can re-ask this question later \
             if it's still relevant.\n\nBefore going idle the user had selected: \
             \"Which checks?\"=\"Tests\"."
        );
        assert!(state.pending().is_empty());
        assert!(state.receipt().is_some_and(|receipt| receipt.by_timeout));

        state.push(timed(5));
        let resolved = state.expire(6.0, &nobody_typing);
        assert_eq!(resolved[0].outcome, Outcome::timed_out(5));
    }

    #[test]
    fn on_timeout_a_complete_form_is_the_users_answer() {
        let mut state = State::default();
        state.push(timed(10));
        for (question, option) in [(0, 1), (1, 0), (2, 1)] {
            state.apply(Action::Pick { question, pick: Pick::Option(option) });
        }
        let resolved = state.expire(10.0, &nobody_typing);
        assert_eq!(
            answers_of(&resolved[0]),
            json!({"Which database?": "SQLite", "Which checks?": "Clippy", "Deploy?": "No"})
        );
        assert!(state.receipt().is_some_and(|receipt| receipt.by_timeout));
    }

    #[test]
    fn on_timeout_a_box_being_typed_in_is_never_sent() {
        let mut state = State::default();
        state.push(timed(30));
        let id = state.current().map(|pending| pending.id).expect("pending");
        state.apply(Action::Pick { question: 0, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 1, pick: Pick::Option(2) });
        state.apply(Action::SetOtherText { question: 2, text: "Only on Fri".into() });
        state.apply(Action::SetNotes { question: 0, text: "Keep it small".into() });
        // The Other box of question 3 has the keyboard: everything else is finished.
        let typing = |request: RequestId, question: usize, field: TextField| {
            request == id && question == 2 && field == TextField::Other
        };
        let resolved = state.expire(30.0, &typing);
        let Outcome::TimedOut(timed_out) = &resolved[0].outcome else {
            panic!("not complete while typing: {:?}", resolved[0].outcome)
        };
        let message = timed_out.message();
        assert!(!message.contains("Only on Fri"), "{message}");
        assert!(
            message
                .contains(r#""Which database?"="PostgreSQL (Recommended)" notes: Keep it small"#),
            "{message}"
        );
        assert!(
            message.ends_with(
                "The user was still typing an answer to \"Deploy?\" when the time ran out; \
                 what they typed was not sent."
            ),
            "{message}"
        );
        let notice = state.notices().first().expect("what was typed is kept");
        assert!(notice.contains("Deploy (Other): Only on Fri"), "{notice}");
    }

    #[test]
    fn stay_stops_every_countdown_and_more_time_moves_the_deadline() {
        let mut state = State::default();
        state.push(timed(10));
        state.apply(Action::AddTime(60));
        assert!(state.expire(60.0, &nobody_typing).is_empty(), "60 s more");
        assert_eq!(state.next_deadline(), Some(70.0));
        assert_eq!(state.title(60.0), "⏱ 0:10 · Database · 3 questions — askpane");
        state.apply(Action::Stay);
        assert!(state.expire(1000.0, &nobody_typing).is_empty(), "stopped: no deadline");
        assert_eq!(state.current().and_then(|p| p.countdown), Some(Countdown::Stopped));
        assert!(!state.counting_down());
    }

    #[test]
    fn enter_picks_the_highlighted_option_and_moves_on() {
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::MoveCursor(1));
        state.apply(Action::Advance);
        let pending = state.current().expect("pending");
        assert_eq!(pending.status(0), Status::Answered("SQLite".into()));
        assert_eq!(pending.tab, Tab::Question(1));
        // Multi-select: Enter only moves on.
        state.apply(Action::Advance);
        let pending = state.current().expect("pending");
        assert_eq!(pending.status(1), Status::NotAnswered);
        // An empty Other is no answer: Enter stays.
        state.apply(Action::MoveCursor(5));
        state.apply(Action::Advance);
        assert_eq!(state.current().map(|p| p.tab), Some(Tab::Question(2)));
        state.apply(Action::Advance);
        assert_eq!(state.current().map(|p| p.tab), Some(Tab::Question(2)), "Other is empty");
        state.apply(Action::SetOtherText { question: 2, text: "Friday".into() });
        state.apply(Action::Advance);
        let pending = state.current().expect("pending");
        assert_eq!(pending.tab, Tab::Review);
        assert_eq!(pending.status(2), Status::Answered("Friday".into()));
    }

    #[test]
    fn enter_five_times_never_sends_an_empty_answer() {
        let mut state = State::default();
        let request = request(
            json!({"questions": [
                {"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": [
                    {"label": "Clippy", "description": ""}, {"label": "Tests", "description": ""}]}]}),
            Envelope::ToolInput,
        );
        state.push(request);
        for _ in 0..5 {
            assert_eq!(state.apply(Action::Advance), None, "Enter alone never sends");
        }
        let pending = state.current().expect("still open");
        assert_eq!(pending.confirm, Some(Confirm::PartialSubmit { missing: vec![0] }));
        // Only the explicit confirmation sends, and then as what it is.
        let resolved = state.apply(Action::ConfirmSubmit).expect("sent");
        assert_eq!(resolved.outcome, Outcome::nothing_answered());
        assert_eq!(state.receipt().map(|r| r.outcome_kind), Some("declined"));
    }

    #[test]
    fn chat_about_this_sends_the_dialogs_clarify_text() {
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::Pick { question: 1, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 1, pick: Pick::Option(2) });
        state.apply(Action::SetNotes { question: 1, text: " only fast ones ".into() });
        let resolved = state.apply(Action::Clarify).expect("sent at once");
        let Outcome::Clarify { message, picked } = &resolved.outcome else {
            panic!("a clarify outcome: {:?}", resolved.outcome)
        };
        assert!(picked.is_some(), "the picks travel along, for the browser's wire form");
        assert_eq!(
            message,
            "The user wants to clarify these questions.
    This means they may have additional information, context or questions for you.
    Take their response into account and then reformulate the questions if appropriate.
    Start by asking them what they would like to clarify.

    Questions asked:
- \"Which database?\"
  (No answer provided)
- \"Which checks?\"
  Answer: Clippy, Miri
  User notes: only fast ones
- \"Deploy?\"
  (No answer provided)"
        );
    }

    #[test]
    fn review_shows_labels_as_the_user_saw_them() {
        let mut state = State::default();
        state.push(request(
            json!({"questions": [{"question": "Which?", "header": "W", "multiSelect": true,
                "options": [{"label": "Say \"hi\"", "description": ""},
                            {"label": "Red, green", "description": ""}]}]}),
            Envelope::ToolInput,
        ));
        state.apply(Action::Pick { question: 0, pick: Pick::Option(0) });
        state.apply(Action::Pick { question: 0, pick: Pick::Option(1) });
        state.apply(Action::SetOtherText { question: 0, text: "Teal".into() });
        let pending = state.current().expect("pending");
        assert_eq!(review_line(pending, 0), "Say \"hi\" · Red, green · Other: “Teal”");
        assert_eq!(
            pending.status(0),
            Status::Answered(r#""Say \"hi\"", "Red, green", Teal"#.into()),
            "the wire form is unchanged"
        );
    }

    #[test]
    fn preset_drafts_fill_the_form_and_put_the_cursor_on_the_choice() {
        let mut state = State::default();
        let mut request = three_questions();
        let mut draft = Draft::default();
        draft.pick(&request.ask.questions()[0], Pick::Option(1));
        request.drafts = vec![draft];
        state.push(request);
        let pending = state.current().expect("pending");
        assert_eq!(pending.drafts.len(), 3);
        assert_eq!(pending.cursor, vec![1, 0, 0]);
        assert_eq!(pending.status(0), Status::Answered("SQLite".into()));
    }

    #[test]
    fn a_session_records_its_transcript_and_caps_huge_results() {
        let mut state = State::default();
        state.start_session(Some("Fix the tests"));
        let huge = "x".repeat(ENTRY_LIMIT + 10);
        let event = |line: serde_json::Value| {
            crate::protocol::stream::SessionEvent::Message(crate::protocol::stream::parse_cli_line(
                &line,
            ))
        };
        state.session_event(event(json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": "Running them."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test"}}]}})));
        state.session_event(event(json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": huge}]}})));
        state.session_event(event(json!({"type": "result", "subtype": "success", "num_turns": 2})));
        let session = state.session().expect("a session");
        assert!(!session.busy);
        assert_eq!(session.entries.len(), 5);
        assert!(
            matches!(&session.entries[2], Entry::ToolCall { summary, .. } if summary == "Bash: cargo test")
        );
        let Entry::ToolResult { content, .. } = &session.entries[3] else { panic!("a result") };
        assert!(
            content.ends_with("… 10 more bytes not shown"),
            "{}",
            &content[content.len() - 40..]
        );
    }

    #[test]
    fn permissions_are_decided_once_and_prompts_go_out_once() {
        let mut state = State::default();
        state.start_session(None);
        let request = PermissionRequest {
            request_id: "r1".into(),
            tool_name: "Bash".into(),
            input: json!({"command": "ls"}),
            tool_use_id: Some("t1".into()),
            title: None,
            description: None,
            reason: None,
            agent_id: None,
        };
        let id = RequestId::next();
        state.push_permission(PendingPermission {
            id,
            request,
            provenance: Provenance::new("claude", None),
            deny_message: String::new(),
        });
        state.apply_session(SessionAction::SetDenyMessage { id, text: "not here".into() });
        assert_eq!(
            state.apply_session(SessionAction::DenyPermission(id)),
            Some(SessionEffect::Decided {
                id,
                decision: PermissionDecision::Deny {
                    message: "The user denied this tool call and said: not here".into()
                }
            })
        );
        assert_eq!(state.apply_session(SessionAction::AllowPermission(id)), None);
        assert_eq!(state.apply_session(SessionAction::Stop), None, "nothing running");
        state.apply_session(SessionAction::SetPrompt("  go on  ".into()));
        assert_eq!(
            state.apply_session(SessionAction::SendPrompt),
            Some(SessionEffect::Prompt("go on".into()))
        );
        assert_eq!(state.apply_session(SessionAction::SendPrompt), None, "the box is empty now");
        assert_eq!(state.apply_session(SessionAction::Stop), Some(SessionEffect::Interrupt));
    }

    #[test]
    fn decline_and_stop_and_reply_in_own_words() {
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::AskDecline);
        let resolved = state.apply(Action::ConfirmDeclineAndStop).expect("stopped");
        assert_eq!(resolved.outcome.kind(), "stopped");

        state.push(three_questions());
        state.apply(Action::AskReply);
        assert_eq!(state.apply(Action::ConfirmReply), None, "an empty reply is not sent");
        state.apply(Action::SetReplyText("Let's talk in chat first.".into()));
        let resolved = state.apply(Action::ConfirmReply).expect("replied");
        let Outcome::Replied(reply) = &resolved.outcome else { panic!("a reply") };
        assert_eq!(reply.updated_input()["response"], "Let's talk in chat first.");
        assert_eq!(reply.updated_input()["answers"], json!({}));
    }

    // Issue 9: texts over their limit are refused beside their box; a browser's receipt waits
    // for askpane's acknowledgement, and a refused answer comes back as it was sent.
    #[test]
    fn an_over_long_reply_or_decline_message_is_refused_beside_its_box() {
        use crate::protocol::limits::{MAX_DECLINE_LENGTH, MAX_REPLY_LENGTH};
        let mut state = State::default();
        state.push(three_questions());
        state.apply(Action::AskReply);
        state.apply(Action::SetReplyText("返".repeat(MAX_REPLY_LENGTH + 1)));
        assert_eq!(state.apply(Action::ConfirmReply), None, "not sent");
        let pending = state.current().expect("still open");
        assert_eq!(
            pending.error.as_deref(),
            Some(
                "Not sent: the reply is 32769 characters long; the limit is 32768. Shorten it \
                 and send again."
            )
        );
        assert!(matches!(&pending.confirm, Some(Confirm::Reply { text }) if text.len() > 32_768));
        state.apply(Action::AskDecline);
        state.apply(Action::SetDeclineMessage("x".repeat(MAX_DECLINE_LENGTH + 1)));
        assert_eq!(state.apply(Action::ConfirmDeclineAndStop), None, "not sent");
        let error = state.current().and_then(|pending| pending.error.clone()).unwrap_or_default();
        assert!(error.contains("the message to the agent is 8193 characters long"), "{error}");
        state.apply(Action::SetDeclineMessage("x".repeat(MAX_DECLINE_LENGTH)));
        let resolved = state.apply(Action::ConfirmDecline).expect("at the limit it goes");
        assert_eq!(resolved.outcome.kind(), "declined");
    }

    #[test]
    fn a_browser_receipt_says_sent_only_once_acknowledged() {
        let mut state = State::default();
        let mut request = three_questions();
        request.envelope = Envelope::SeedWeb { tool_use_id: "t1".into() };
        request.awaits_ack = true;
        state.push(request);
        state.apply(Action::Pick { question: 0, pick: Pick::Option(0) });
        state.apply(Action::Submit);
        state.apply(Action::ConfirmSubmit).expect("sent to the bridge");
        let receipt = |state: &State| state.receipt().map(|r| r.send_state.clone());
        assert_eq!(receipt(&state), Some(SendState::Sending));
        state.delivered("another");
        assert_eq!(receipt(&state), Some(SendState::Sending), "only its own acknowledgement");
        state.delivered("t1");
        assert_eq!(receipt(&state), Some(SendState::Sent));
        state.not_delivered("t1", "not sent: answered in another window first".into());
        assert!(matches!(receipt(&state), Some(SendState::NotSent(_))));
        assert_eq!(state.notices().len(), 1);
        // Natively, handing the outcome over is delivery.
        state.push(three_questions());
        state.apply(Action::AskDecline);
        state.apply(Action::ConfirmDecline).expect("declined");
        assert_eq!(receipt(&state), Some(SendState::Sent));
    }

    #[test]
    fn a_refused_answer_comes_back_as_it_was_sent_with_why() {
        let mut state = State::default();
        let mut request = three_questions();
        request.envelope = Envelope::SeedWeb { tool_use_id: "t1".into() };
        request.awaits_ack = true;
        let again = NewRequest { id: RequestId::next(), ..request.clone() };
        state.push(request);
        state.apply(Action::AskDecline);
        state.apply(Action::SetDeclineMessage("not now".into()));
        let declined = state.apply(Action::ConfirmDecline).expect("sent").outcome;
        // The bridge refused it: the same question, pushed again, opens the decline box again
        // with the user's own words (not askpane's wording around them) and the reason.
        let id = again.id;
        state.push(again);
        state.returned(id, &declined, "the message to the agent is too long", None);
        let pending = state.current().expect("back");
        assert_eq!(pending.id, id);
        assert_eq!(pending.confirm, Some(Confirm::Decline { message: "not now".into() }));
        assert_eq!(
            pending.error.as_deref(),
            Some("Not sent: the message to the agent is too long. Change it and send again.")
        );
        assert!(state.receipt().is_none(), "no receipt for what did not count");
        // A refused form opens on the question the error names.
        let mut form = three_questions();
        form.envelope = Envelope::SeedWeb { tool_use_id: "t2".into() };
        let form_id = form.id;
        state.push(form);
        let answers = crate::protocol::build_answers(&state.current().expect("t1").ask, &[])
            .expect("empty answers");
        state.returned(
            form_id,
            &Outcome::Answered(answers),
            "the note on question 3 is too long",
            Some(2),
        );
        let pending = state.current().expect("t2");
        assert_eq!(
            (pending.id, pending.tab, pending.confirm.clone()),
            (form_id, Tab::Question(2), None)
        );
    }

    #[test]
    fn title_names_the_project_the_count_and_who_else_waits() {
        let mut state = State::default();
        assert_eq!(state.title(0.0), "askpane");
        state.push(three_questions());
        assert_eq!(state.title(0.0), "Database · 3 questions — askpane");
        let mut second = three_questions();
        second.provenance = second.provenance.with_project(Some("orders".into()));
        state.push(second);
        assert_eq!(state.title(0.0), "Database · 3 questions (+1 waiting) — askpane");
        state.apply(Action::AskDecline);
        state.apply(Action::ConfirmDecline);
        assert_eq!(state.title(0.0), "orders · 3 questions — askpane");
        let mut state = State::default();
        let header = json!({"questions": [{"question": "Q?", "header": "A\u{0}B\n",
            "options": [{"label": "x"}, {"label": "y"}]}]});
        state.push(request(header, Envelope::ToolInput));
        assert_eq!(state.title(0.0), "AB · 1 question — askpane");
    }
}
