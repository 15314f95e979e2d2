//! `askpane opencode`'s host (issue 13): answers every OpenCode session's questions in the inbox.
//! It follows the server's `/global/event` stream (every project directory) on a thread of its
//! own, lists the questions already pending at start (and after each reconnect), hands each one
//! to the inbox as one request (a thin client, like `ask` and `hook`), and sends the inbox's
//! outcome back to OpenCode as a reply or a reject. A question answered elsewhere (OpenCode's own
//! TUI) or whose session ends leaves the inbox at once.
//!
//! Its permission requests (issue 26) go the same way, as permission cards: the decision comes
//! back as `once`, `always` or `reject`, and a hand-back leaves the request pending for
//! OpenCode's TUI.
//!
//! What each event means is [`FollowedServer`]'s (pure, in the book); this file does the IO it
//! asks for. The command line gives it the inbox's connection and history's recorder.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use serde_json::Value;

use crate::book::followed::{FollowedServer, Step};
use crate::protocol::inbox::{AskMessage, ClientMessage, ClientMode, InboxMessage, Policy};
use crate::protocol::opencode::{
    self, Happening, PermissionAsked, PermissionReply, QuestionRequest, Reply,
};
use crate::protocol::origin::Provenance;
use crate::protocol::permission::decided_by_policy;
use crate::protocol::{Incoming, Outcome, ReplyFormat, ReplyShape, exit, parse_message, web};

use super::super::admit::admit;
use super::super::inbox::InboxConnection;
use super::super::{Control, Inbound, spawn_named};
use super::{Server, ServerError};

/// Who this host's log lines say they are from.
const SPEAKER: &str = "askpane opencode";

/// The first wait before connecting again to a server that went away; doubled up to
/// [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How long the event thread may take to notice the end before askpane ends without it. It is
/// usually blocked reading the stream (the server feeds it a heartbeat every 10 s), holds
/// nothing to write, and only hands events to this thread, which is done with them: waiting
/// longer only delays the exit a person asked for (Ctrl+C took 2 s with a 2 s grace).
const EVENT_THREAD_GRACE: Duration = Duration::from_millis(250);

/// What the host is given by the command line.
pub struct OpenCodeHost {
    pub server: Server,
    /// The answering flags; every reply comes back in OpenCode's form.
    pub policy: Policy,
    /// Connects to the running inbox, or starts one.
    pub connect: Box<dyn Fn() -> Result<InboxConnection, String>>,
    /// Records in history a question decided here, without the inbox (the inbox records what
    /// it is given).
    pub record: Recorder,
}

/// Records one question decided here: what was asked, by whom, how it ended, in what shape.
pub type Recorder = Box<dyn Fn(&Incoming, Provenance, &Outcome, ReplyShape)>;

/// What is pending in OpenCode, by directory.
#[derive(Default)]
struct Pending {
    questions: Vec<(String, QuestionRequest)>,
    permissions: Vec<(String, PermissionAsked)>,
}

/// What the event thread tells the main loop.
enum FromServer {
    /// Something happened on the stream.
    Event(Happening),
    /// The questions and permission requests pending right after (re)connecting, every
    /// directory listed: any held for OpenCode and not among them was settled while askpane was
    /// not listening.
    Pending(Pending),
    /// The server cannot be used now (it is down, or refuses us); trying again.
    Lost(String),
}

impl OpenCodeHost {
    /// Runs until a signal comes on `stop` (a `Control::Shutdown`): returns the exit code.
    /// Questions still held for the inbox are withdrawn from it; they stay pending in OpenCode,
    /// for its TUI or the next askpane.
    pub fn run(self, stop: &Receiver<Inbound>) -> std::io::Result<u8> {
        let (from_server, server_events) = crossbeam_channel::unbounded();
        let (stop_events, events_stopped) = crossbeam_channel::bounded::<()>(0);
        let watching = self.server.clone();
        let events_thread = spawn_named("opencode-events", move || {
            follow_events(&watching, &from_server, &events_stopped)
        })?;
        log::info!(speaker = SPEAKER; "answering the questions and permission requests of the OpenCode server at {}", self.server.url());
        // Nothing the flags say allows a tool call: a decline rejects it, nobody to ask leaves
        // it to OpenCode's TUI.
        let permissions_decided = decided_by_policy(&self.policy).map(|(_, decision)| decision);
        let mut host = Host {
            followed: FollowedServer::new(self.policy.needs_a_person())
                .deciding_permissions(permissions_decided)
                .timing_out_permissions(self.policy.timeout_secs.map(Duration::from_secs)),
            given: self,
            inbox: None,
        };
        let code = host.serve(&server_events, stop);
        // Closing the inbox connection takes every question still held back from the window.
        if let Some(inbox) = host.inbox.take() {
            inbox.close();
        }
        drop(stop_events);
        // The event thread is blocked reading the stream until the next heartbeat at most; it is
        // joined when it ends within the grace, and otherwise ends with the process.
        let deadline = Instant::now() + EVENT_THREAD_GRACE;
        while !events_thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if events_thread.is_finished() && events_thread.join().is_err() {
            log::error!(speaker = SPEAKER; "the event thread panicked");
        }
        Ok(code)
    }
}

/// The event thread: follows `/global/event`, lists what is pending on every (re)connect, and
/// connects again with backoff when the server goes away.
fn follow_events(server: &Server, to_main: &Sender<FromServer>, stopped: &Receiver<()>) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let ended = match server.events() {
            Ok(mut stream) => {
                // Listed after subscribing, so nothing asked in between is missed (a question
                // seen twice is shown once).
                match pending_everywhere(server) {
                    Ok(pending) => {
                        backoff = FIRST_BACKOFF;
                        if to_main.send(FromServer::Pending(pending)).is_err() {
                            return;
                        }
                    }
                    Err(error) => {
                        let _ = to_main.send(FromServer::Lost(error.to_string()));
                    }
                }
                loop {
                    if !matches!(stopped.try_recv(), Err(crossbeam_channel::TryRecvError::Empty)) {
                        return;
                    }
                    match stream.next_event() {
                        Ok(Some(data)) => match opencode::global_event(&data) {
                            Ok(Happening::Other) => {}
                            Ok(happening) => {
                                if to_main.send(FromServer::Event(happening)).is_err() {
                                    return;
                                }
                            }
                            Err(why) => log::warn!(speaker = SPEAKER; "skipped an event: {why}"),
                        },
                        Ok(None) => break "the server ended the event stream".to_owned(),
                        Err(error) => break format!("the event stream failed: {error}"),
                    }
                }
            }
            Err(error) => error.to_string(),
        };
        if to_main.send(FromServer::Lost(ended)).is_err() {
            return;
        }
        match stopped.recv_timeout(backoff) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Every pending question and permission request of every directory OpenCode has sessions in.
fn pending_everywhere(server: &Server) -> Result<Pending, ServerError> {
    let mut pending = Pending::default();
    for directory in server.directories()? {
        let questions = server.pending(&directory)?;
        let permissions = server.pending_permissions(&directory)?;
        if questions.is_empty() && permissions.is_empty() {
            continue;
        }
        // An aborted session leaves its requests listed: only working sessions' are asked.
        let working = server.working_sessions(&directory)?;
        let is_stale = |id: &str, session: &str| {
            let stale = !working.iter().any(|working| working == session);
            if stale {
                log::info!(
                    speaker = SPEAKER;
                    "{id} is left from a session that ended; not asking it"
                );
            }
            stale
        };
        pending.questions.extend(
            questions
                .into_iter()
                .filter(|request| !is_stale(&request.id, &request.session_id))
                .map(|request| (directory.clone(), request)),
        );
        pending.permissions.extend(
            permissions
                .into_iter()
                .filter(|request| !is_stale(&request.id, &request.session_id))
                .map(|request| (directory.clone(), request)),
        );
    }
    Ok(pending)
}

/// The main loop's state: what it was given, the inbox connection, and the questions handed
/// over ([`FollowedServer`]).
struct Host {
    given: OpenCodeHost,
    followed: FollowedServer,
    inbox: Option<InboxConnection>,
}

impl Host {
    /// Runs until a signal: returns the exit code.
    fn serve(&mut self, server_events: &Receiver<FromServer>, stop: &Receiver<Inbound>) -> u8 {
        let never = crossbeam_channel::never();
        let mut lost_said = false;
        loop {
            let inbox_messages = self.inbox.as_ref().map_or(&never, |inbox| &inbox.messages);
            // A permission card's --timeout: the book keeps the deadlines, this loop the clock.
            let timeout = match self.followed.next_deadline() {
                Some(deadline) => crossbeam_channel::at(deadline),
                None => crossbeam_channel::never(),
            };
            select! {
                recv(server_events) -> event => match event {
                    Ok(FromServer::Event(happening)) => {
                        let steps = self.followed.happened(happening, Instant::now());
                        self.take(steps);
                    }
                    Ok(FromServer::Pending(pending)) => {
                        if lost_said {
                            log::info!(speaker = SPEAKER; "connected to {}", self.given.server.url());
                            lost_said = false;
                        }
                        let steps = self.followed.pending(pending.questions);
                        self.take(steps);
                        let steps =
                            self.followed.pending_permissions(pending.permissions, Instant::now());
                        self.take(steps);
                    }
                    Ok(FromServer::Lost(why)) => {
                        if !lost_said {
                            log::warn!(speaker = SPEAKER; "{why}; connecting again");
                            lost_said = true;
                        }
                    }
                    Err(_) => return exit::OK,
                },
                recv(inbox_messages) -> message => match message {
                    Ok(Ok(Some(message))) => self.inbox_said(message),
                    _ => self.inbox_gone(),
                },
                recv(timeout) -> _ => {
                    let steps = self.followed.due(Instant::now());
                    self.take(steps);
                },
                recv(stop) -> message => {
                    if let Ok(Inbound::Control(Control::Shutdown { .. })) = message {
                        return exit::OK;
                    }
                },
            }
        }
    }

    /// Does what the followed server's state decided, in order.
    fn take(&mut self, steps: Vec<Step>) {
        for step in steps {
            match step {
                Step::HandOver { id } => self.hand_over(&id),
                Step::Withdraw { id } => {
                    if let Some(inbox) = self.inbox.as_mut() {
                        let _ = inbox.client.send(&ClientMessage::Withdraw { id });
                    }
                }
                Step::DecideHere { directory, id, message } => {
                    let reply = self.decide_here(&message, None);
                    self.send_reply(&directory, &id, reply);
                }
                Step::Refuse { directory, id, reason } => {
                    let reply = opencode::reply(&Outcome::Refused { reason });
                    self.send_reply(&directory, &id, reply);
                }
                Step::HandOverPermission { id } => self.hand_over_permission(&id),
                Step::WithdrawPermission { id } => {
                    if let Some(inbox) = self.inbox.as_mut() {
                        let _ = inbox.client.send(&ClientMessage::WithdrawPermission { id });
                    }
                }
                Step::TimeOutPermission { id } => {
                    if let Some(inbox) = self.inbox.as_mut() {
                        let _ = inbox.client.send(&ClientMessage::PermissionTimedOut { id });
                    }
                }
                Step::ReplyPermission { directory, id, reply } => {
                    self.send_permission_reply(&directory, &id, &reply);
                }
                Step::Say(line) => log::info!(speaker = SPEAKER; "{line}"),
            }
        }
    }

    /// The reply the flags decide without a person (or, with `unavailable`, that nobody can be
    /// asked): the same function the inbox takes requests in with.
    fn decide_here(&self, message: &Value, unavailable: Option<String>) -> Option<Reply> {
        let incoming = parse_message(message).ok()?;
        let provenance = web::question_provenance(message);
        let mut policy = self.given.policy.clone();
        if unavailable.is_some() {
            policy.unavailable = unavailable;
        }
        let admitted = admit(incoming.clone(), ClientMode::Ask, &policy, None);
        if let Some(problem) = &admitted.problem {
            log::warn!(speaker = SPEAKER; "{problem}");
        }
        // Decided by the flags, so nothing waits for a person; a request left open all the
        // same is dropped, which answers it as a closed window rather than waiting for ever.
        drop(admitted.request);
        let outcome = admitted.outcome.recv().unwrap_or_else(|_| Outcome::closed());
        let shape = ReplyShape { format: Some(ReplyFormat::OpenCode), always_a_line: true };
        // Decided here, so recorded here: the inbox records only what it was given.
        (self.given.record)(&incoming, provenance, &outcome, shape);
        let line = shape.line(&admitted.envelope, &outcome)?;
        serde_json::from_value(line).ok()
    }

    /// Hands the held question `id` to the inbox, connecting (or starting one) first.
    fn hand_over(&mut self, id: &str) {
        let Some(held) = self.followed.get(id) else { return };
        let ask = ClientMessage::Ask(Box::new(AskMessage {
            id: id.to_owned(),
            mode: ClientMode::Ask,
            message: held.message.clone(),
            policy: self.given.policy.clone(),
            on_disk: None,
        }));
        if let Err(why) = self.send_to_inbox(id, &ask) {
            // Nobody can be asked: OpenCode's model hears so and goes on.
            log::warn!(
                speaker = SPEAKER;
                "no inbox can show {id} ({why}); answering that nobody is available"
            );
            let Some(held) = self.followed.release(id) else { return };
            let reply = self.decide_here(&held.message, Some(format!("no inbox: {why}")));
            self.send_reply(&held.directory, id, reply);
        }
    }

    /// Sends `message` (about `id`) to the inbox, connecting to it (or starting one) first. An
    /// error: no inbox can be had. A failed send is only logged: the reader thread sees the
    /// connection end and [`Host::inbox_gone`] hands everything held to a new inbox.
    fn send_to_inbox(&mut self, id: &str, message: &ClientMessage) -> Result<(), String> {
        let inbox = match self.inbox.take() {
            Some(inbox) => inbox,
            None => (self.given.connect)()?,
        };
        let inbox = self.inbox.insert(inbox);
        if let Err(error) = inbox.client.send(message) {
            log::warn!(speaker = SPEAKER; "cannot hand {id} to the inbox ({error})");
        }
        Ok(())
    }

    /// Hands the held permission request `id` to the inbox as a permission card, connecting
    /// (or starting one) first. With no inbox, nobody is asked: the request stays pending for
    /// OpenCode's TUI (never allowed, and not rejected for want of a person).
    fn hand_over_permission(&mut self, id: &str) {
        let Some(held) = self.followed.permission(id) else { return };
        let card = ClientMessage::Permission {
            id: id.to_owned(),
            request: Box::new(held.request.clone()),
            from: Some(held.from.clone()),
        };
        if let Err(why) = self.send_to_inbox(id, &card) {
            log::warn!(speaker = SPEAKER; "no inbox can show {id} ({why}); it is left to OpenCode");
            self.followed.release_permission(id);
        }
    }

    /// The inbox went away (it crashed or was ended): a new one is asked every held question
    /// and permission request.
    fn inbox_gone(&mut self) {
        if let Some(inbox) = self.inbox.take() {
            inbox.close();
        }
        let ids = self.followed.held_ids();
        let permissions = self.followed.held_permission_ids();
        if ids.is_empty() && permissions.is_empty() {
            return;
        }
        log::warn!(speaker = SPEAKER; "the inbox went away; asking a new one");
        std::thread::sleep(FIRST_BACKOFF);
        for id in ids {
            self.hand_over(&id);
        }
        for id in permissions {
            self.hand_over_permission(&id);
        }
    }

    fn inbox_said(&mut self, message: InboxMessage) {
        match message {
            InboxMessage::Outcome(outcome) => {
                let Some(held) = self.followed.release(&outcome.id) else { return };
                if let Some(problem) = &outcome.problem {
                    log::warn!(speaker = SPEAKER; "{problem}");
                }
                let reply = outcome.reply.and_then(|line| serde_json::from_value(line).ok());
                log::info!(speaker = SPEAKER; "{} {}", outcome.id, outcome.outcome);
                self.send_reply(&held.directory, &outcome.id, reply);
            }
            InboxMessage::Error { message, id } => {
                log::warn!(
                    speaker = SPEAKER;
                    "the inbox refused {}: {message}",
                    id.unwrap_or_default()
                );
            }
            InboxMessage::PermissionDecided { id, decision } => {
                let steps = self.followed.permission_decided(&id, &decision);
                self.take(steps);
            }
            InboxMessage::Accepted { warnings, id, .. } => {
                for warning in warnings {
                    log::warn!(speaker = SPEAKER; "{id}: warning: {warning}");
                }
            }
            _ => {}
        }
    }

    fn send_permission_reply(&self, directory: &str, id: &str, reply: &PermissionReply) {
        match self.given.server.reply_permission(directory, id, reply) {
            Ok(()) => {}
            Err(error) if error.not_found() => {
                log::info!(
                    speaker = SPEAKER;
                    "{id} was no longer pending in OpenCode; nothing sent"
                );
            }
            Err(error) => log::warn!(speaker = SPEAKER; "cannot answer {id}: {error}"),
        }
    }

    fn send_reply(&self, directory: &str, id: &str, reply: Option<Reply>) {
        let Some(reply) = reply else { return };
        match self.given.server.send(directory, id, &reply) {
            Ok(()) => {}
            Err(error) if error.not_found() => {
                log::info!(
                    speaker = SPEAKER;
                    "{id} was no longer pending in OpenCode; nothing sent"
                );
            }
            Err(error) => log::warn!(speaker = SPEAKER; "cannot answer {id}: {error}"),
        }
    }
}
