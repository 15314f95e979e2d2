//! [`DraftSink`]: what the window holds to save drafts and record outcomes without touching the
//! disk on the UI thread. Each call sends one small message to the named `store-writer` thread,
//! which gathers drafts for up to [`DEBOUNCE`] and writes them in one transaction.

use std::collections::HashMap;
use std::io;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::book::approval::{EndedApproval, PendingPermission};
use crate::book::form::FormDraft;
use crate::book::journal::HistoryDone;
use crate::book::plan::PlanDraft;
use crate::book::{Core, Form};
use crate::protocol::history::HistoryFilter;
use crate::protocol::origin::RequestId;
use crate::protocol::permission::ApprovalOutcome;

use super::records::{
    HistoryRecord, OpenRecord, asked_fingerprint, card_key, form_key, plan_key, request_key,
};
use super::{
    DraftRow, Store, StoreError, card_draft_json, forget_card_draft, forget_open_card,
    insert_history, insert_open, insert_open_card, read_card_draft, read_draft_json,
    read_open_card, upsert_card_draft, upsert_draft,
};

/// How long the writer gathers drafts before writing them: typing is at most this far behind on
/// disk (plus one write), so a crash loses at most this much of it.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// A plan's or a form's draft on its way to the writer, which makes its JSON: the journal's calls
/// run on the UI thread at each key typed, and a review may hold 100 KB of text.
enum CardDraft {
    Plan(Box<PlanDraft>),
    Form(Box<FormDraft>),
}

impl CardDraft {
    fn json(&self) -> String {
        match self {
            CardDraft::Plan(draft) => card_draft_json(draft.as_ref()),
            CardDraft::Form(draft) => card_draft_json(draft.as_ref()),
        }
    }
}

/// One message to the writer.
enum Message {
    Opened(OpenRecord),
    Draft {
        key: String,
        /// The fingerprint of the questions it was typed into.
        asked: String,
        question: usize,
        form: Form,
        at: SystemTime,
    },
    Settled(Box<HistoryRecord>),
    /// What was written on plan `key` (issue 26 leftovers) or filled in on form `key`, gathered
    /// like a question's draft.
    CardDraft {
        key: String,
        draft: CardDraft,
        at: SystemTime,
    },
    /// Plan or form `key` was decided: its draft goes.
    CardDecided {
        key: String,
    },
    /// Write what is pending, then send what was kept of plan or form `key` (JSON).
    CardSaved {
        key: String,
        reply: Sender<Option<String>>,
    },
    /// Issue 26: a tool call's card opened at `at` (kept in memory until it ends), kept on
    /// disk as `key` ([`card_key`]) unless a crashed run kept it first.
    ApprovalOpened {
        id: RequestId,
        key: Option<String>,
        at: SystemTime,
    },
    /// Issue 26: card `id` ended; its record takes the time it was first asked, when known.
    /// `forget`: a later ask of `key` is a new one (not when askpane ended under it).
    ApprovalEnded {
        id: RequestId,
        key: Option<String>,
        forget: bool,
        record: Box<HistoryRecord>,
    },
    /// Write what is pending, then send when card `key` was first asked.
    FirstAsked {
        key: String,
        reply: Sender<Option<SystemTime>>,
    },
    /// Write what is pending now, then answer.
    Flush(Sender<()>),
    /// Write what is pending, then send the forms saved for this key and these questions.
    Saved {
        key: String,
        asked: String,
        reply: Sender<Vec<Form>>,
    },
    /// Write what is pending, then read a History page.
    History {
        filter: HistoryFilter,
        done: HistoryDone,
    },
}

/// How long [`DraftSink::saved_forms`] waits for the writer (which may be writing a batch): a
/// question arriving is shown this much later at worst.
pub const SAVED_WAIT: Duration = Duration::from_millis(250);

/// The UI side of the store: cheap calls that hand the work to the writer thread. Dropping it
/// writes what is pending and joins the thread.
#[derive(Debug)]
pub struct DraftSink {
    sender: Option<Sender<Message>>,
    thread: Option<JoinHandle<()>>,
}

impl DraftSink {
    /// Starts the writer thread, which owns `store` from now on.
    pub fn start(store: Store) -> io::Result<DraftSink> {
        let (sender, receiver) = crossbeam_channel::unbounded();
        #[allow(
            clippy::disallowed_methods,
            reason = "named as transport::spawn_named names it: the store may not import transport (scripts/check-layers)"
        )]
        let thread = std::thread::Builder::new()
            .name("store-writer".to_owned())
            .spawn(move || Writer::new(store).run(&receiver))?;
        Ok(DraftSink { sender: Some(sender), thread: Some(thread) })
    }

    fn send(&self, message: Message) {
        if let Some(sender) = &self.sender {
            // The writer only stops when this sink drops; a send cannot fail before that.
            let _ = sender.send(message);
        }
    }

    /// A request is open (stored so that a crash leaves a trace of it).
    pub fn opened(&self, core: &Core) {
        self.send(Message::Opened(OpenRecord::new(core, SystemTime::now())));
    }

    /// The user changed question `question`'s form of request `key` ([`request_key`]), which
    /// asks the questions with fingerprint `asked` ([`asked_fingerprint`]).
    pub fn draft_changed(&self, key: &str, asked: &str, question: usize, form: &Form) {
        let (key, asked, form) = (key.to_owned(), asked.to_owned(), form.clone());
        self.send(Message::Draft { key, asked, question, form, at: SystemTime::now() });
    }

    /// A request ended: history gets it, and its drafts go.
    pub fn settled(&self, record: HistoryRecord) {
        self.send(Message::Settled(Box::new(record)));
    }

    /// The key the drafts of `core`'s request are saved under.
    pub fn key(core: &Core) -> String {
        request_key(core)
    }

    /// The forms saved for request `key` typed into the questions `asked` (what
    /// [`Store::drafts_to_restore`] reads), asked of the writer thread, which owns the file;
    /// empty when it does not answer within [`SAVED_WAIT`].
    pub fn saved_forms(&self, key: &str, asked: &str) -> Vec<Form> {
        let (reply, forms) = crossbeam_channel::bounded(1);
        self.send(Message::Saved { key: key.to_owned(), asked: asked.to_owned(), reply });
        forms.recv_timeout(SAVED_WAIT).unwrap_or_default()
    }

    /// What was written on plan `key` ([`plan_key`]) or filled in on form `key` ([`form_key`]),
    /// asked of the writer thread, which owns the file; `None` when nothing was, it does not
    /// read as a `T`, or the writer does not answer within [`SAVED_WAIT`].
    pub fn saved_card<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let (reply, draft) = crossbeam_channel::bounded(1);
        self.send(Message::CardSaved { key: key.to_owned(), reply });
        read_draft_json(&draft.recv_timeout(SAVED_WAIT).ok().flatten()?)
    }

    /// Waits until everything sent so far is written (tests; the end of a run).
    pub fn flush(&self) {
        let (done, written) = crossbeam_channel::bounded(1);
        self.send(Message::Flush(done));
        let _ = written.recv();
    }
}

impl Drop for DraftSink {
    fn drop(&mut self) {
        // Closing the channel tells the writer to write what is pending and stop.
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The writer thread's state: drafts not yet written, newest per question.
struct Writer {
    store: Store,
    /// When each open card was shown (issue 26): its history entry's `asked_at`.
    cards_asked: HashMap<RequestId, SystemTime>,
    pending: HashMap<(String, usize), (String, Form, SystemTime)>,
    /// Plan and form drafts not yet written (JSON), newest per card.
    pending_cards: HashMap<String, (CardDraft, SystemTime)>,
    /// When the oldest pending draft arrived: it is written at most [`DEBOUNCE`] later.
    oldest: Option<Instant>,
    /// A failure has been reported; later ones are not (one line, not one per keystroke).
    warned: bool,
}

impl Writer {
    fn new(store: Store) -> Self {
        Writer {
            store,
            cards_asked: HashMap::new(),
            pending: HashMap::new(),
            pending_cards: HashMap::new(),
            oldest: None,
            warned: false,
        }
    }

    fn run(mut self, receiver: &Receiver<Message>) {
        loop {
            let message = match self.oldest {
                Some(oldest) => match receiver.recv_deadline(oldest + DEBOUNCE) {
                    Ok(message) => message,
                    Err(RecvTimeoutError::Timeout) => {
                        self.write(None);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match receiver.recv() {
                    Ok(message) => message,
                    Err(_) => break,
                },
            };
            match message {
                Message::Draft { key, asked, question, form, at } => {
                    self.pending.insert((key, question), (asked, form, at));
                    self.oldest.get_or_insert_with(Instant::now);
                }
                Message::CardDraft { key, draft, at } => {
                    self.pending_cards.insert(key, (draft, at));
                    self.oldest.get_or_insert_with(Instant::now);
                }
                // A draft still pending would bring the decided card's back.
                Message::CardDecided { key } => {
                    self.pending_cards.remove(&key);
                    self.write(Some(Message::CardDecided { key }));
                }
                Message::ApprovalOpened { id, key, at } => {
                    self.cards_asked.insert(id, at);
                    self.write(Some(Message::ApprovalOpened { id, key, at }));
                }
                Message::ApprovalEnded { id, key, forget, mut record } => {
                    if let Some(asked_at) = self.cards_asked.remove(&id) {
                        record.asked_at = Some(asked_at);
                    }
                    self.write(Some(Message::ApprovalEnded { id, key, forget, record }));
                }
                other => self.write(Some(other)),
            }
        }
        self.write(None);
    }

    /// Writes the pending drafts and `message`, in one transaction.
    fn write(&mut self, message: Option<Message>) {
        let pending = std::mem::take(&mut self.pending);
        let pending_cards = std::mem::take(&mut self.pending_cards);
        self.oldest = None;
        let mut saved_card = None;
        let mut first_asked = None;
        let mut flushed = None;
        let mut saved = None;
        let mut history = None;
        let result = (|| -> Result<(), StoreError> {
            let transaction = self.store.connection().transaction()?;
            for ((key, question), (asked, form, at)) in &pending {
                let row = DraftRow { key, asked, question: *question, form, at: *at };
                upsert_draft(&transaction, &row)?;
            }
            for (key, (draft, at)) in &pending_cards {
                upsert_card_draft(&transaction, key, &draft.json(), *at)?;
            }
            match message {
                Some(Message::Opened(record)) => insert_open(&transaction, &record)?,
                Some(Message::Settled(record)) => insert_history(&transaction, &record)?,
                Some(Message::Flush(done)) => flushed = Some(done),
                Some(Message::Saved { key, asked, reply }) => saved = Some((key, asked, reply)),
                Some(Message::History { filter, done }) => history = Some((filter, done)),
                Some(Message::CardDecided { key }) => forget_card_draft(&transaction, &key)?,
                Some(Message::CardSaved { key, reply }) => saved_card = Some((key, reply)),
                Some(Message::ApprovalOpened { key, at, .. }) => {
                    if let Some(key) = key {
                        insert_open_card(&transaction, &key, at)?;
                    }
                }
                Some(Message::ApprovalEnded { key, forget, mut record, .. }) => {
                    if let Some(key) = key {
                        // Asked before a crash: history says when it was first asked.
                        if let Some(first) = read_open_card(&transaction, &key)? {
                            record.asked_at = Some(first);
                        }
                        if forget {
                            forget_open_card(&transaction, &key)?;
                        }
                    }
                    insert_history(&transaction, &record)?;
                }
                Some(Message::FirstAsked { key, reply }) => first_asked = Some((key, reply)),
                Some(Message::Draft { .. } | Message::CardDraft { .. }) | None => {}
            }
            transaction.commit()?;
            Ok(())
        })();
        if let Err(error) = result
            && !std::mem::replace(&mut self.warned, true)
        {
            log::error!("cannot write to the store ({error}); drafts and history are not saved");
        }
        if let Some(done) = flushed {
            let _ = done.send(());
        }
        if let Some((key, asked, reply)) = saved {
            let _ = reply.send(self.store.drafts_to_restore(&key, &asked).unwrap_or_default());
        }
        if let Some((key, reply)) = first_asked {
            let _ = reply.send(self.store.card_first_asked(&key).ok().flatten());
        }
        if let Some((key, reply)) = saved_card {
            let _ = reply.send(read_card_draft(self.store.connection(), &key).ok().flatten());
        }
        if let Some((filter, done)) = history {
            done(super::history_page(&self.store, filter));
        }
    }
}

/// The window's journal: the calls above, with the history record made from the request.
impl crate::book::journal::Journal for DraftSink {
    fn restore(&self, core: &Core, policy: &mut crate::book::Policy) {
        // A policy with a preset or one that decides at once keeps it. A request without a
        // tool_use_id has a key made from what was asked and who asked: asked again, it finds
        // its drafts too.
        if !policy.preset.is_empty() || policy.submit {
            return;
        }
        let saved = self.saved_forms(&request_key(core), &asked_fingerprint(core));
        super::restore_drafts(policy, &core.ask, saved);
    }

    fn opened(&self, core: &Core) {
        DraftSink::opened(self, core);
    }

    fn draft_changed(&self, core: &Core, question: usize, form: &Form) {
        // A secret (`isSecret`) is never written to disk, not even as a draft.
        if core.ask.questions().get(question).is_some_and(|asked| asked.secret()) {
            return;
        }
        DraftSink::draft_changed(
            self,
            &request_key(core),
            &asked_fingerprint(core),
            question,
            form,
        );
    }

    fn settled(&self, core: &Core, outcome: &crate::protocol::Outcome) {
        self.settled_by(core, outcome, None);
    }

    fn settled_by(&self, core: &Core, outcome: &crate::protocol::Outcome, by: Option<&str>) {
        let reply = core.reply_shape.line(&core.envelope, outcome).map(|line| line.to_string());
        let mut record = HistoryRecord::new(core, outcome, reply, SystemTime::now());
        record.answered_by = by.map(str::to_owned);
        let answered = matches!(
            outcome,
            crate::protocol::Outcome::Answered(_) | crate::protocol::Outcome::Replied(_)
        );
        if answered && core.ask.questions().iter().any(|question| question.secret()) {
            // The history keeps that it was answered, never what: the answer holds a secret.
            let hidden = crate::protocol::question::SECRET_NOT_SHOWN.to_owned();
            record.answer = hidden.clone();
            record.reply = None;
            record.model_text = Some(hidden);
        }
        DraftSink::settled(self, record);
    }

    fn approval_opened(&self, card: &PendingPermission) {
        let key = card_key(&card.request, &card.provenance);
        self.send(Message::ApprovalOpened { id: card.id, key, at: SystemTime::now() });
    }

    fn card_first_asked(&self, card: &PendingPermission) -> Option<u64> {
        let (reply, first) = crossbeam_channel::bounded(1);
        let key = card_key(&card.request, &card.provenance)?;
        self.send(Message::FirstAsked { key, reply });
        let first = first.recv_timeout(SAVED_WAIT).ok().flatten()?;
        u64::try_from(super::to_millis(first)).ok()
    }

    fn restore_plan(&self, card: &PendingPermission) -> Option<PlanDraft> {
        card.plan.as_ref()?;
        self.saved_card(&plan_key(&card.request, &card.provenance))
    }

    fn plan_changed(&self, card: &PendingPermission) {
        let Some(review) = &card.plan else { return };
        let key = plan_key(&card.request, &card.provenance);
        let draft = CardDraft::Plan(Box::new(review.draft()));
        self.send(Message::CardDraft { key, draft, at: SystemTime::now() });
    }

    fn restore_form(&self, card: &PendingPermission) -> Option<FormDraft> {
        card.form.as_ref()?;
        self.saved_card(&form_key(&card.request, &card.provenance))
    }

    fn form_changed(&self, card: &PendingPermission) {
        let Some(review) = &card.form else { return };
        let key = form_key(&card.request, &card.provenance);
        let draft = CardDraft::Form(Box::new(review.draft()));
        self.send(Message::CardDraft { key, draft, at: SystemTime::now() });
    }

    fn approval_ended(&self, ended: &EndedApproval) {
        // A plan or a form the person decided (a form sent is allowed once, declined denied) is
        // done with what they wrote; one that ended without them (withdrawn, timed out, askpane
        // stopped) keeps it for when it is asked again.
        let decided = matches!(
            ended.outcome,
            ApprovalOutcome::AllowedOnce | ApprovalOutcome::AllowedAlways | ApprovalOutcome::Denied
        );
        let (request, provenance) = (&ended.request, &ended.provenance);
        let card = if crate::protocol::permission::is_plan(request) {
            Some(plan_key(request, provenance))
        } else if crate::protocol::permission::is_form(request) {
            Some(form_key(request, provenance))
        } else {
            None
        };
        if let (true, Some(key)) = (decided, card) {
            self.send(Message::CardDecided { key });
        }
        let now = SystemTime::now();
        let record = HistoryRecord::of_approval(
            &ended.request,
            ended.provenance.clone(),
            ended.outcome,
            &ended.decision,
            (None, now),
        );
        let record = HistoryRecord { answered_by: ended.answered_by.clone(), ..record };
        // Askpane ended under it: asked again by a relay's new inbox, it is as old as it was.
        let forget = ended.outcome != ApprovalOutcome::NoHuman;
        let key = card_key(&ended.request, &ended.provenance);
        let record = Box::new(record);
        self.send(Message::ApprovalEnded { id: ended.id, key, forget, record });
    }

    fn keeps_history(&self) -> bool {
        true
    }

    fn history(&self, filter: &HistoryFilter, done: HistoryDone) {
        self.send(Message::History { filter: filter.clone(), done });
    }
}
