//! One request in the book: what was asked ([`Core`], never changed), how it may be answered
//! ([`Policy`]), and what the user has done to it so far ([`Open`]: one [`Form`] per question,
//! the page showing, a confirmation, a countdown). [`Open::edit`] performs one [`Edit`].

use crate::protocol::limits;
use crate::protocol::origin::{Provenance, RequestId};
use crate::protocol::web::{self, BrowserError, BrowserMessage, PageAnswer, TimeoutChange};
use crate::protocol::{
    Answers, Ask, AtDeadline, Draft, Envelope, Outcome, Pick, Prefill, Question, ReplyShape,
    TextField, Warning, build_answers,
};

/// A request exactly as it was asked: which agent, in which envelope, what questions.
#[derive(Clone, Debug)]
pub struct Core {
    pub id: RequestId,
    pub envelope: Envelope,
    pub ask: Ask,
    pub warnings: Vec<Warning>,
    pub provenance: Provenance,
    /// How its reply is written (the asking client's `--format`), for the history's record.
    pub reply_shape: ReplyShape,
}

impl Core {
    /// True when `other` is this very question asked again (a client that re-sends it, a
    /// second route for the same tool call), so one answer is right for both: the same
    /// tool_use_id, the same questions and options, and not two different agent sessions.
    /// A tool_use_id alone is not enough: ids are only unique within one agent, and two agents
    /// (or two MCP clients counting their calls from 1) may use the same one for different
    /// questions — joining those would give one agent an answer the person gave the other.
    pub fn same_question(&self, other: &Core) -> bool {
        let same_id = matches!(
            (self.envelope.tool_use_id(), other.envelope.tool_use_id()),
            (Some(ours), Some(theirs)) if ours == theirs
        );
        let other_session = matches!(
            (&self.provenance.session, &other.provenance.session),
            (Some(ours), Some(theirs)) if ours != theirs
        );
        same_id
            && !other_session
            && self.ask.input().get("questions") == other.ask.input().get("questions")
    }
}

/// How a request may be answered besides by the user, as the asking client says
/// (`--answers`, `--submit`, `--decline`, `--timeout`, no human). Each client states it; the book
/// alone decides what it means ([`Policy::decide`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// Pre-selected answers, one draft per question (may be shorter): they fill the form.
    pub preset: Vec<Draft>,
    /// Where `preset` came from: the client's `--answers`, or a draft saved in an earlier
    /// showing. Either is only the user's answer once they confirm it.
    pub prefill: Prefill,
    /// Send the preset as it is, without asking (`--submit`).
    pub submit: bool,
    /// Decline at once with these words (`--decline`).
    pub decline: Option<String>,
    /// No human can answer here, and why (a non-interactive run, no display, no window).
    pub unavailable: Option<String>,
    /// Seconds the user has (`--timeout`).
    pub timeout_secs: Option<u64>,
    /// Unanswered questions are sent as skipped (the session advertises
    /// `ask_user_question_unanswered_v1`); otherwise they are left out.
    pub mark_skipped: bool,
    /// The outcome counts once askpane's bridge acknowledges it (a browser page).
    pub awaits_ack: bool,
}

impl Policy {
    /// The outcome this policy decides without asking anyone, if it decides one: a decline, the
    /// preset sent as it is, or "no human available". `None`: the user answers.
    pub fn decide(&self, ask: &Ask) -> Option<Outcome> {
        if let Some(message) = &self.decline {
            return Some(Outcome::declined(message));
        }
        if self.submit {
            return Some(match build_answers(ask, &self.preset) {
                Ok(answers) => Outcome::submitted(ask, answers, self.mark_skipped),
                // The client checks its preset before asking; this is the backstop.
                Err(limit) => Outcome::Unavailable { reason: format!("--answers: {limit}") },
            });
        }
        let reason = self.unavailable.clone()?;
        Some(Outcome::Unavailable { reason })
    }
}

/// The user's work on one question: the answer so far and where the keyboard cursor is (an
/// option index, or the option count for Other).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Form {
    pub draft: Draft,
    pub cursor: usize,
    /// The user acted on this question in this showing (picked, typed, cleared, or pressed Enter
    /// on it). What was filled in before and never acted on is not their answer: a countdown
    /// that runs out never sends it as one.
    pub acted: bool,
}

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

/// A request's `--timeout` countdown, in the clock the driver passes in (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Countdown {
    /// Running: at `deadline` what the user finished is told, marked as the time running out.
    Running {
        deadline: f64,
        /// The seconds given in all: the timeout and any time added.
        given_secs: u64,
    },
    /// The user is here ("any key to stay"): no deadline; the agent waits for the answer.
    /// `given_secs` is kept for the time told if it runs again and ends.
    Stopped { given_secs: u64 },
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
            Countdown::Stopped { .. } => None,
        }
    }

    /// The seconds given in all: the timeout and any time added.
    pub fn given_secs(&self) -> u64 {
        match *self {
            Countdown::Running { given_secs, .. } | Countdown::Stopped { given_secs } => given_secs,
        }
    }

    /// The countdown after the user (here or in another window) paused it or added time: added
    /// time extends a running deadline, or restarts a stopped one from `now`.
    pub fn changed(self, now: f64, change: TimeoutChange) -> Countdown {
        let given_secs = self.given_secs();
        match (self, change) {
            (_, TimeoutChange::Paused) => Countdown::Stopped { given_secs },
            (Countdown::Running { deadline, .. }, TimeoutChange::Extended { secs }) => {
                Countdown::Running {
                    deadline: deadline + secs as f64,
                    given_secs: given_secs.saturating_add(secs),
                }
            }
            (Countdown::Stopped { .. }, TimeoutChange::Extended { secs }) => Countdown::Running {
                deadline: now + secs as f64,
                given_secs: given_secs.saturating_add(secs),
            },
        }
    }

    /// The share of the time still left, from 1 down to 0, for the countdown bar.
    pub fn fraction_left(&self, now: f64) -> Option<f32> {
        match self {
            Countdown::Running { deadline, given_secs } => {
                let total = (*given_secs as f64).max(1.0);
                Some(((deadline - now) / total).clamp(0.0, 1.0) as f32)
            }
            Countdown::Stopped { .. } => None,
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

/// Everything the user can do to the request in front of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    ShowTab(Tab),
    NextTab,
    PreviousTab,
    Pick {
        question: usize,
        pick: Pick,
    },
    /// Move the keyboard cursor of the current question by rows (Other is the last row).
    MoveCursor(isize),
    /// Put the cursor on a row without picking it.
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
    /// Give this request this many more seconds.
    AddTime(u64),
}

/// A request that is open: its core, and everything the user did to it so far.
#[derive(Clone, Debug)]
pub struct Open {
    pub core: Core,
    /// One per question.
    pub forms: Vec<Form>,
    pub tab: Tab,
    pub confirm: Option<Confirm>,
    /// Why the last send did not go through (a size limit, askpane's refusal), shown until the
    /// next edit.
    pub error: Option<String>,
    /// The `--timeout` countdown, if the request has one.
    pub countdown: Option<Countdown>,
    /// When it was opened, in the driver's clock (the request list shows its age).
    pub opened_at: f64,
    /// Unanswered questions are sent as "skipped" rather than left out.
    pub mark_skipped: bool,
    /// The outcome counts once askpane's bridge acknowledges it (a browser page).
    pub awaits_ack: bool,
    /// Where the answers the form opened with came from, if it opened with any.
    pub prefill: Prefill,
}

impl Open {
    /// A request opened for the user at `now`: the preset fills the form, the cursor starts on
    /// what is chosen, the countdown starts.
    pub fn new(core: Core, policy: &Policy, now: f64) -> Self {
        let forms = core
            .ask
            .questions()
            .iter()
            .enumerate()
            .map(|(index, question)| {
                let draft = policy.preset.get(index).cloned().unwrap_or_default();
                Form { cursor: cursor_row(question, &draft), draft, acted: false }
            })
            .collect();
        Open {
            core,
            forms,
            tab: Tab::Question(0),
            confirm: None,
            error: None,
            countdown: policy.timeout_secs.map(|secs| Countdown::start(now, secs)),
            opened_at: now,
            mark_skipped: policy.mark_skipped,
            awaits_ack: policy.awaits_ack,
            prefill: policy.prefill,
        }
    }

    pub fn id(&self) -> RequestId {
        self.core.id
    }

    /// The draft of question `index`.
    pub fn draft(&self, index: usize) -> Option<&Draft> {
        self.forms.get(index).map(|form| &form.draft)
    }

    /// The keyboard cursor of question `index` (0 for a question that does not exist).
    pub fn cursor(&self, index: usize) -> usize {
        self.forms.get(index).map_or(0, |form| form.cursor)
    }

    /// Every draft, in question order.
    pub fn drafts(&self) -> Vec<Draft> {
        self.forms.iter().map(|form| form.draft.clone()).collect()
    }

    pub fn status(&self, question: usize) -> Status {
        let (Some(q), Some(draft)) =
            (self.core.ask.questions().get(question), self.draft(question))
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
        (0..self.question_count())
            .filter(|&index| !matches!(self.status(index), Status::Answered(_)))
            .collect()
    }

    /// True once the user did anything to this request.
    pub fn is_touched(&self) -> bool {
        self.forms.iter().any(|form| form.draft.is_touched())
    }

    fn question_count(&self) -> usize {
        self.core.ask.questions().len()
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
        let (q, draft) = (self.core.ask.questions().get(question)?, self.draft(question)?);
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
    pub fn given_secs(&self) -> u64 {
        self.countdown.map_or(0, |countdown| countdown.given_secs())
    }

    /// What the user typed into this request, for the notice shown when it goes without them.
    pub fn typed_text(&self) -> String {
        let mut texts = Vec::new();
        for (question, form) in self.core.ask.questions().iter().zip(&self.forms) {
            let draft = &form.draft;
            for (what, text) in [("Other", draft.other_text()), ("note", draft.notes())] {
                if !text.trim().is_empty() {
                    texts.push(format!("{} ({what}): {}", question.header(), text.trim()));
                }
            }
        }
        texts.join("\n")
    }

    /// The outcome when the countdown ran out at a moment the user was `typing` in some boxes:
    /// those are left out and named, and what was filled in and never acted on is told apart
    /// (see [`Outcome::at_deadline`]). Returns the outcome and the texts that were not sent, for
    /// a notice.
    pub fn at_deadline(
        &self,
        typing: &dyn Fn(RequestId, usize, TextField) -> bool,
    ) -> (Outcome, Vec<String>) {
        let mut finished = Vec::with_capacity(self.forms.len());
        let mut prefilled = Vec::with_capacity(self.forms.len());
        let mut still_typing = Vec::new();
        let mut unsent = Vec::new();
        for (index, form) in self.forms.iter().enumerate() {
            let mut draft = form.draft.clone();
            for (field, name) in [(TextField::Other, "Other"), (TextField::Notes, "note")] {
                let text = draft.text(field).trim().to_owned();
                if !text.is_empty() && typing(self.id(), index, field) {
                    draft = draft.without_text(field);
                    let header = self.core.ask.questions().get(index).map_or("", Question::header);
                    unsent.push(format!("{header} ({name}): {text}"));
                    if still_typing.last() != Some(&index) {
                        still_typing.push(index);
                    }
                }
            }
            // What the user did in this showing is theirs; what was filled in and never acted
            // on is told apart.
            match form.acted {
                true => {
                    finished.push(draft);
                    prefilled.push(Draft::default());
                }
                false => {
                    finished.push(Draft::default());
                    prefilled.push(draft);
                }
            }
        }
        let at = AtDeadline {
            finished: &finished,
            typing: &still_typing,
            prefilled: &prefilled,
            prefill: self.prefill,
            waited_secs: self.given_secs(),
        };
        (self.deadline_outcome(Outcome::at_deadline(&self.core.ask, &at)), unsent)
    }

    /// A form sent as it is (a submit here, a page's answer): [`Outcome::submitted`] with this
    /// request's `mark_skipped`. With [`Open::deadline_outcome`], the one place an open request
    /// applies it.
    fn sent_as_is(&self, answers: Answers) -> Outcome {
        Outcome::submitted(&self.core.ask, answers, self.mark_skipped)
    }

    /// What a countdown's end decided (here, or in a page): an answer marks the questions left
    /// unanswered as skipped when the session takes that.
    fn deadline_outcome(&self, outcome: Outcome) -> Outcome {
        match outcome {
            Outcome::Answered(mut answers) if self.mark_skipped => {
                answers.mark_skipped(&self.core.ask);
                Outcome::Answered(answers)
            }
            outcome => outcome,
        }
    }

    /// The outcome of what a browser page says the user did to this request, by the same rules
    /// as an edit here; `None` for a message that decides nothing (seen, a countdown change).
    pub fn outcome_of(&self, message: BrowserMessage) -> Result<Option<Outcome>, BrowserError> {
        let ask = &self.core.ask;
        Ok(Some(match message {
            BrowserMessage::Answer { body, .. } => match web::page_answer(ask, &body)? {
                PageAnswer::Replied(outcome) => outcome,
                PageAnswer::Form(answers) => self.sent_as_is(answers),
            },
            BrowserMessage::Declined { stop, message, .. } => web::declined_outcome(stop, &message),
            BrowserMessage::Clarify { body, .. } => web::clarify_outcome(ask, &body)?,
            // The time askpane gave (with any added), not what the page says it was.
            BrowserMessage::TimedOut { body, .. } => {
                self.deadline_outcome(web::timed_out_outcome(ask, &body, self.given_secs())?)
            }
            BrowserMessage::Seen { .. } | BrowserMessage::Timeout { .. } => return Ok(None),
        }))
    }

    /// Performs one edit; returns the outcome when the edit finishes the request.
    pub fn edit(&mut self, edit: Edit) -> Option<Outcome> {
        // Any edit clears an old error; it is recomputed on the next send.
        if !matches!(edit, Edit::Submit | Edit::ConfirmSubmit | Edit::Advance) {
            self.error = None;
        }
        match edit {
            Edit::ShowTab(tab) => {
                self.tab = match tab {
                    Tab::Question(index) if index >= self.question_count() => Tab::Review,
                    tab => tab,
                };
                self.confirm = None;
            }
            Edit::NextTab => {
                self.tab = self.tab_after(self.tab);
                self.confirm = None;
            }
            Edit::PreviousTab => {
                self.tab = self.tab_before(self.tab);
                self.confirm = None;
            }
            Edit::Pick { question, pick } => self.pick(question, pick),
            Edit::MoveCursor(delta) => {
                let Tab::Question(question) = self.tab else { return None };
                let rows = self.core.ask.questions().get(question)?.options().len() + 1;
                let form = self.forms.get_mut(question)?;
                form.cursor = form.cursor.saturating_add_signed(delta).min(rows - 1);
            }
            Edit::SetCursor { question, row } => {
                let rows = self.core.ask.questions().get(question)?.options().len() + 1;
                if let Some(form) = self.forms.get_mut(question) {
                    form.cursor = row.min(rows - 1);
                }
            }
            Edit::PickAtCursor => {
                let Tab::Question(question) = self.tab else { return None };
                let options = self.core.ask.questions().get(question)?.options().len();
                let row = self.cursor(question);
                let pick = if row < options { Pick::Option(row) } else { Pick::Other };
                self.pick(question, pick);
            }
            Edit::AddTime(secs) => {
                // "+1 min" shows only while the countdown runs; a stopped one stays stopped.
                if let Some(countdown @ Countdown::Running { .. }) = self.countdown {
                    let extended = TimeoutChange::Extended { secs };
                    self.countdown = Some(countdown.changed(f64::NAN, extended));
                }
            }
            Edit::ClearChoice { question } => {
                if let Some(form) = self.forms.get_mut(question) {
                    form.draft.clear_choice();
                    form.acted = true;
                }
            }
            Edit::SetOtherText { question, text } => {
                if let (Some(q), Some(form)) =
                    (self.core.ask.questions().get(question), self.forms.get_mut(question))
                {
                    // Typing into Other makes it the row the user is on.
                    if !text.trim().is_empty() {
                        form.cursor = q.options().len();
                    }
                    form.draft.set_other_text(q, text);
                    form.acted = true;
                }
            }
            Edit::SetNotes { question, text } => {
                if let Some(form) = self.forms.get_mut(question) {
                    form.draft.set_notes(text);
                    form.acted = true;
                }
            }
            Edit::Advance => match self.tab {
                Tab::Review => return self.submit(false),
                Tab::Question(question) => {
                    // Enter answers with the highlighted row, as Claude Code's dialog and zenity
                    // do; on multi-select (Space toggles) it only moves on. An Other with nothing
                    // typed cannot be an answer: Enter stays (the view focuses its box).
                    let q = self.core.ask.questions().get(question)?;
                    let form = self.forms.get_mut(question)?;
                    if !q.multi_select() {
                        if form.cursor < q.options().len() {
                            form.draft.pick(q, Pick::Option(form.cursor));
                        } else if form.draft.other_text().trim().is_empty() {
                            return None;
                        } else if !form.draft.is_chosen(Pick::Other) {
                            form.draft.pick(q, Pick::Other);
                        }
                    }
                    // Enter on a question is the user's word on it, what was filled in included.
                    form.acted = true;
                    self.tab = self.tab_after(self.tab);
                    self.confirm = None;
                }
            },
            Edit::Submit => return self.submit(false),
            Edit::ConfirmSubmit => return self.submit(true),
            Edit::AskDecline => self.confirm = Some(Confirm::Decline { message: String::new() }),
            Edit::SetDeclineMessage(text) => {
                if let Some(Confirm::Decline { message }) = &mut self.confirm {
                    *message = text;
                }
            }
            Edit::ConfirmDecline | Edit::ConfirmDeclineAndStop => {
                let message = match &self.confirm {
                    Some(Confirm::Decline { message }) => message.clone(),
                    _ => String::new(),
                };
                // Refused before sending, shown beside the box, never cut.
                if let Err(limit) = limits::check_decline_message(&message) {
                    self.error = Some(format!("Not sent: {limit}. Shorten it and send again."));
                    return None;
                }
                return Some(match edit {
                    Edit::ConfirmDeclineAndStop => Outcome::stopped(&message),
                    _ => Outcome::declined(&message),
                });
            }
            Edit::Clarify => return Some(Outcome::clarify(&self.core.ask, &self.drafts())),
            Edit::AskReply => self.confirm = Some(Confirm::Reply { text: String::new() }),
            Edit::SetReplyText(new_text) => {
                if let Some(Confirm::Reply { text }) = &mut self.confirm {
                    *text = new_text;
                }
            }
            Edit::ConfirmReply => {
                let Some(Confirm::Reply { text }) = &self.confirm else { return None };
                if text.trim().is_empty() {
                    return None;
                }
                // Refused before sending, shown beside the box, never cut.
                if let Err(limit) = limits::check_reply(text) {
                    self.error = Some(format!("Not sent: {limit}. Shorten it and send again."));
                    return None;
                }
                return Some(Outcome::replied(&self.core.ask, text));
            }
            Edit::CancelConfirm => self.confirm = None,
        }
        None
    }

    fn pick(&mut self, question: usize, pick: Pick) {
        let (Some(q), Some(form)) =
            (self.core.ask.questions().get(question), self.forms.get_mut(question))
        else {
            return;
        };
        form.draft.pick(q, pick);
        form.acted = true;
        form.cursor = match pick {
            Pick::Option(index) => index,
            Pick::Other => q.options().len(),
        };
        self.confirm = None;
    }

    /// Sends what the form holds, asking first when questions are unanswered (`confirmed`: the
    /// user already said to send anyway).
    fn submit(&mut self, confirmed: bool) -> Option<Outcome> {
        // A decline or reply bar holds words the user is writing to the agent: a submit then
        // would throw them away unseen, so it waits until the bar is sent or closed.
        if matches!(self.confirm, Some(Confirm::Decline { .. } | Confirm::Reply { .. })) {
            return None;
        }
        let missing = self.missing();
        if !missing.is_empty() && !confirmed {
            self.tab = Tab::Review;
            self.confirm = Some(Confirm::PartialSubmit { missing });
            return None;
        }
        match build_answers(&self.core.ask, &self.drafts()) {
            Ok(answers) => Some(self.sent_as_is(answers)),
            Err(limit) => {
                self.error = Some(format!("Not sent: {limit}. Shorten it and submit again."));
                self.confirm = None;
                None
            }
        }
    }
}

/// `forms` fitted to `ask`'s questions: one per question, with choices it does not have
/// dropped and the cursor on a row that exists.
pub fn fit_forms(ask: &Ask, forms: Vec<Form>) -> Vec<Form> {
    let mut forms = forms.into_iter();
    ask.questions()
        .iter()
        .map(|question| {
            let form = forms.next().unwrap_or_default();
            Form {
                draft: form.draft.fitted(question),
                cursor: form.cursor.min(question.options().len()),
                acted: false,
            }
        })
        .collect()
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

/// The answer as the Review page shows it: labels as the user saw them, Other text quoted.
pub fn review_line(open: &Open, question: usize) -> String {
    let secret = open.core.ask.questions().get(question).is_some_and(|asked| asked.secret());
    match (open.status(question), open.shown_answer(question)) {
        // A secret is never drawn in clear, not even on the review step.
        (Status::Answered(_), _) if secret => "answered (secret, not shown)".to_owned(),
        (Status::Answered(_), Some(shown)) => shown,
        (Status::Answered(answer), None) => answer,
        (Status::NotAnswered, _) => "not answered".to_owned(),
        (Status::OtherBlank, _) => "Other is chosen but empty".to_owned(),
    }
}
