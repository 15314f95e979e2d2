//! `askpane claude` and `askpane codex` under the inbox (issues 10, 13): the session's questions,
//! permission cards and transcript go to the running inbox (started if none runs) instead of a
//! window of its own.
//!
//! The relay runs on the main thread between two channels: what the agent's session sends
//! toward a window ([`Inbound`]), and what the inbox sends back. A question goes over as the
//! request the agent sent (Claude Code's `can_use_tool`, Codex's `item/tool/requestUserInput`:
//! the agent's [`HostedAgent::question_message`]); the inbox computes its reply line, which goes to the agent's
//! stdin as it is. A permission's decision, the prompt box and Stop come back as
//! messages of their own. An inbox that dies is started again and told everything still open,
//! with the transcript so far; an inbox that ends on purpose (`quitting`) ends the session.

use std::collections::{HashMap, VecDeque};

use crossbeam_channel::{Receiver, Sender, select};

use askpane::protocol::Outcome;
use askpane::protocol::inbox::{
    AskMessage, ClientMessage, InboxMessage, OutcomeMessage, Policy, SessionLine,
};
use askpane::protocol::stream::{CliMessage, PermissionDecision, PermissionRequest};
use askpane::transport::agents::{AgentLines, HostedAgent};
use askpane::transport::{
    ApprovalEvent, Control, Inbound, PermissionAsk, Request, RequestEvent, Responder,
    SessionCommand, SessionEvent, SessionInbound,
};

use super::args::{StoreArgs, UiArgs};

/// How often the relay starts a new inbox after the one it used went away.
const RESTARTS: usize = 2;

/// Transcript lines kept to show a restarted inbox; older ones are not shown again.
const REPLAYED_LINES: usize = 2000;

/// What the relay needs from `askpane claude`'s or `askpane codex`'s flags and session.
pub(super) struct Relay<A: HostedAgent> {
    pub(super) shown: UiArgs,
    pub(super) store: StoreArgs,
    /// The answering flags (`--answers` read), for the inbox to decide each question by, as
    /// it decides `ask`'s and `hook`'s (and record what they decide).
    pub(super) flags: Policy,
    /// The first prompt, already sent to Claude Code.
    pub(super) prompt: Option<String>,
    pub(super) project: Option<String>,
    /// The agent's stdin, for the reply lines the inbox computes.
    pub(super) lines: AgentLines<A>,
    /// The session's prompts and Stop.
    pub(super) commands: Sender<SessionCommand>,
}

pub(super) use super::client::Inbox;

/// The running inbox, or one started now (as for `hook`), or why there is none.
pub(super) fn connect(shown: &UiArgs, store: &StoreArgs) -> Result<Inbox, String> {
    Inbox::connect(shown, store)
}

/// A question handed to the inbox, until its outcome comes.
struct HeldQuestion {
    ask: AskMessage,
    tool_use_id: Option<String>,
    reply: Responder<Outcome>,
}

/// A permission handed to the inbox, until it is decided.
struct HeldPermission {
    request: PermissionRequest,
    reply: Responder<PermissionDecision>,
}

struct State<A: HostedAgent> {
    relay: Relay<A>,
    next_id: u64,
    questions: HashMap<String, HeldQuestion>,
    permissions: HashMap<String, HeldPermission>,
    transcript: VecDeque<SessionLine>,
    /// Answers or decisions went to the agent and its turn has not ended since: ending the
    /// session now waits for that turn ([`Step::EndAfterTurn`]).
    answered_in_turn: bool,
}

/// Relays between the session (`from_session`) and the inbox until the session or the inbox
/// ends, or a signal comes; then the session is to be shut down.
pub(super) fn relay<A: HostedAgent>(
    relay: Relay<A>,
    mut inbox: Inbox,
    from_session: &Receiver<Inbound>,
) {
    let mut state = State {
        relay,
        next_id: 1,
        questions: HashMap::new(),
        permissions: HashMap::new(),
        transcript: VecDeque::new(),
        answered_in_turn: false,
    };
    state.introduce(&mut inbox);
    eprintln!("askpane: {}'s questions, permissions and transcript are in the inbox", A::WORDS);
    let mut restarts = 0;
    loop {
        let step = select! {
            recv(from_session) -> message => match message {
                Ok(message) => state.session_said(message, &mut inbox),
                Err(_) => Step::End,
            },
            recv(inbox.messages) -> message => match message {
                Ok(Ok(Some(message))) => state.inbox_said(message),
                // The connection ended without `quitting`: the inbox died.
                Ok(Ok(None) | Err(_)) | Err(_) => Step::InboxGone,
            },
        };
        match step {
            Step::Go => {}
            Step::End => {
                inbox.close();
                return;
            }
            Step::EndAfterTurn => {
                inbox.close();
                let_the_turn_end(from_session, A::WORDS);
                return;
            }
            Step::InboxGone if restarts < RESTARTS => {
                restarts += 1;
                inbox.close();
                eprintln!("askpane: the inbox went away; starting it again");
                match Inbox::connect(&state.relay.shown, &state.relay.store) {
                    Ok(again) => {
                        inbox = again;
                        state.introduce(&mut inbox);
                    }
                    Err(why) => {
                        state.give_up(&format!("the inbox went away and cannot be started: {why}"));
                        return;
                    }
                }
            }
            Step::InboxGone => {
                inbox.close();
                state.give_up("the inbox keeps going away");
                return;
            }
        }
    }
}

enum Step {
    Go,
    End,
    /// The session ends, once the agent's turn has taken the answers just sent (see
    /// [`let_the_turn_end`]).
    EndAfterTurn,
    InboxGone,
}

/// How long an ended session waits for the agent to finish the turn its last answers went to.
const TURN_END_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// After the inbox ended the session with answers sent to the agent: they reach it before it is
/// stopped. Waits, at most [`TURN_END_GRACE`], until the turn ends or the agent does; what it
/// asks meanwhile hears the window closed. (Stopping the agent at once lost the answers when it
/// was slow to send them on: the model never read them.)
fn let_the_turn_end(from_session: &Receiver<Inbound>, agent: &str) {
    let closed = Outcome::closed();
    let deadline = std::time::Instant::now() + TURN_END_GRACE;
    loop {
        let message = match from_session.recv_deadline(deadline) {
            Ok(message) => message,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                eprintln!(
                    "askpane: {agent} did not end its turn within {} s of the last answers; \
                     stopping it",
                    TURN_END_GRACE.as_secs()
                );
                return;
            }
            // The agent ended first.
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        };
        match message {
            Inbound::Request(RequestEvent::Ask(request)) => request.reply.send(closed.clone()),
            Inbound::Approval(ApprovalEvent::Permission(permission)) => {
                let message = closed.deny_message().unwrap_or_default();
                permission.reply.send(PermissionDecision::Deny { message });
            }
            Inbound::Session(SessionInbound::Event(event)) => {
                if let SessionEvent::Message(CliMessage::Result(_)) | SessionEvent::Ended { .. } =
                    *event
                {
                    return;
                }
            }
            _ => {}
        }
    }
}

impl<A: HostedAgent> State<A> {
    /// Tells a (new) inbox about the session: who it is, the transcript so far, and everything
    /// still waiting for the user.
    fn introduce(&mut self, inbox: &mut Inbox) {
        let mut messages = vec![ClientMessage::Host {
            agent: A::SOURCE.to_owned(),
            project: self.relay.project.clone(),
            prompt: self.relay.prompt.clone(),
        }];
        messages.extend(
            self.transcript.iter().map(|line| ClientMessage::SessionEvent { event: line.clone() }),
        );
        messages.extend(
            self.questions.values().map(|held| ClientMessage::Ask(Box::new(held.ask.clone()))),
        );
        messages.extend(self.permissions.iter().map(|(id, held)| ClientMessage::Permission {
            id: id.clone(),
            request: held.request.clone(),
        }));
        for message in messages {
            // A failed write shows as the connection's end, which the loop handles.
            if inbox.client.send(&message).is_err() {
                break;
            }
        }
    }

    fn next_id(&mut self) -> String {
        self.next_id += 1;
        (self.next_id - 1).to_string()
    }

    fn session_said(&mut self, message: Inbound, inbox: &mut Inbox) -> Step {
        let sent = match message {
            Inbound::Request(RequestEvent::Ask(request)) => self.question(*request),
            Inbound::Request(RequestEvent::Withdraw { tool_use_id }) => {
                let id = self.questions.iter().find_map(|(id, held)| {
                    (held.tool_use_id.as_deref() == Some(tool_use_id.as_str())).then(|| id.clone())
                });
                // Claude Code took it back: it waits for no reply.
                id.and_then(|id| self.questions.remove(&id).map(|held| (id, held))).map(
                    |(id, held)| {
                        held.reply.handed_on();
                        ClientMessage::Withdraw { id }
                    },
                )
            }
            Inbound::Approval(ApprovalEvent::Permission(permission)) => {
                let PermissionAsk { request, reply, .. } = *permission;
                let id = self.next_id();
                let message =
                    ClientMessage::Permission { id: id.clone(), request: request.clone() };
                self.permissions.insert(id, HeldPermission { request, reply });
                Some(message)
            }
            Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }) => {
                let id = self.permissions.iter().find_map(|(id, held)| {
                    (held.request.request_id == request_id).then(|| id.clone())
                });
                id.and_then(|id| self.permissions.remove(&id).map(|held| (id, held))).map(
                    |(id, held)| {
                        held.reply.handed_on();
                        ClientMessage::WithdrawPermission { id }
                    },
                )
            }
            Inbound::Session(SessionInbound::Event(event)) => {
                let Some(line) = SessionLine::from_event(*event) else { return Step::Go };
                let ended = matches!(line, SessionLine::Ended { .. });
                if ended || matches!(line, SessionLine::Result { .. }) {
                    self.answered_in_turn = false;
                }
                // The session leaves the inbox with the connection: the terminal keeps why.
                if let SessionLine::Ended { status, stderr_tail } = &line
                    && !status.is_success()
                {
                    eprintln!("askpane: {} ended ({status})", A::WORDS);
                    for line in stderr_tail {
                        eprintln!("  {line}");
                    }
                }
                if self.transcript.len() == REPLAYED_LINES {
                    self.transcript.pop_front();
                }
                self.transcript.push_back(line.clone());
                let _ = inbox.client.send(&ClientMessage::SessionEvent { event: line });
                // The agent ended: so does this command (the inbox drops the session).
                return if ended { Step::End } else { Step::Go };
            }
            Inbound::Control(Control::Notice(notice)) => {
                eprintln!("askpane: {notice}");
                None
            }
            Inbound::Control(Control::Shutdown { outcome }) => {
                // A signal: every question and permission still open hears why, here, before
                // the connection closes (which withdraws them from the inbox).
                self.answer_all(&outcome);
                return Step::End;
            }
            // Only a window receives these.
            Inbound::Request(RequestEvent::Leave { .. } | RequestEvent::Unshown { .. })
            | Inbound::Session(
                SessionInbound::Hosted { .. }
                | SessionInbound::HostedEvent { .. }
                | SessionInbound::HostGone { .. },
            )
            | Inbound::Page(_)
            | Inbound::Control(Control::Reveal { .. }) => None,
        };
        if let Some(message) = sent {
            // A failed write shows as the connection's end, which the loop handles.
            let _ = inbox.client.send(&message);
        }
        Step::Go
    }

    /// Hands a question to the inbox, as the request the agent sent.
    fn question(&mut self, request: Request) -> Option<ClientMessage> {
        let Request { core, policy, reply } = request;
        let Some(message) = A::question_message(&core.envelope, core.ask.input()) else {
            // The session only asks in its own envelope; anything else has no way back.
            reply.send(Outcome::Unavailable {
                reason: "askpane could not hand this question to the inbox".to_owned(),
            });
            return None;
        };
        let tool_use_id = core.envelope.tool_use_id().map(str::to_owned);
        let id = self.next_id();
        let ask = AskMessage {
            id: id.clone(),
            mode: A::MODE,
            message,
            // The session's flags: the inbox decides by them (`--answers --submit`, `--decline`)
            // and records it, or leaves the question to a person with the form filled in and
            // the time allowed.
            policy: Policy { mark_skipped: policy.mark_skipped, ..self.relay.flags.clone() },
        };
        let held = HeldQuestion { ask: ask.clone(), tool_use_id, reply };
        self.questions.insert(id, held);
        Some(ClientMessage::Ask(Box::new(ask)))
    }

    fn inbox_said(&mut self, message: InboxMessage) -> Step {
        match message {
            InboxMessage::Outcome(OutcomeMessage { id, reply, .. }) => {
                if let Some(held) = self.questions.remove(&id) {
                    // The inbox wrote the reply in the agent's own envelope; none for a
                    // question the agent withdrew.
                    if let Some(reply) = reply {
                        self.relay.lines.write(reply);
                        self.answered_in_turn = true;
                    }
                    held.reply.handed_on();
                }
            }
            InboxMessage::PermissionDecided { id, decision } => {
                if let Some(held) = self.permissions.remove(&id) {
                    held.reply.send(decision);
                    self.answered_in_turn = true;
                }
            }
            InboxMessage::Prompt { text } => {
                let _ = self.relay.commands.send(SessionCommand::UserTurn(text));
            }
            InboxMessage::Interrupt => {
                let _ = self.relay.commands.send(SessionCommand::Interrupt);
            }
            // "End session": as closing a window of its own, what is open hears the window
            // closed, and the agent is ended.
            InboxMessage::EndSession => return self.end_with_closed(),
            // The inbox ends on purpose: it answered what it held; the session ends with it.
            InboxMessage::Quitting => return self.end_with_closed(),
            InboxMessage::Error { message, id } => {
                eprintln!("askpane: the inbox refused a message: {message}");
                // The agent hears why, rather than waiting for a question nobody sees.
                if let Some(held) = id.as_ref().and_then(|id| self.questions.remove(id)) {
                    let reason = format!("askpane's inbox could not show the question: {message}");
                    held.reply.send(Outcome::Unavailable { reason });
                }
                if let Some(held) = id.as_ref().and_then(|id| self.permissions.remove(id)) {
                    let message = format!("askpane's inbox could not show this request: {message}");
                    held.reply.send(PermissionDecision::Deny { message });
                }
            }
            InboxMessage::Hello { .. }
            | InboxMessage::Accepted { .. }
            | InboxMessage::Hosting
            | InboxMessage::List { .. }
            | InboxMessage::Subscribed
            | InboxMessage::Asked { .. }
            | InboxMessage::Settled { .. }
            | InboxMessage::Shown
            | InboxMessage::NewLink { .. } => {}
        }
        Step::Go
    }

    /// Everything open hears the window closed; the session ends after the turn those answers
    /// (or ones the inbox sent just before: `inbox --quit` closes its questions, then says it
    /// quits) went to, or at once when the agent's turn has none.
    fn end_with_closed(&mut self) -> Step {
        let open = self.answer_all(&Outcome::closed());
        match open > 0 || self.answered_in_turn {
            true => Step::EndAfterTurn,
            false => Step::End,
        }
    }

    /// Ends everything still open with `outcome` (a permission is denied with its words), and
    /// says how many there were.
    fn answer_all(&mut self, outcome: &Outcome) -> usize {
        let open = self.questions.len() + self.permissions.len();
        for (_, held) in self.questions.drain() {
            held.reply.send(outcome.clone());
        }
        let message = outcome
            .deny_message()
            .unwrap_or_else(|| "askpane ended before the user decided.".to_owned());
        for (_, held) in self.permissions.drain() {
            held.reply.send(PermissionDecision::Deny { message: message.clone() });
        }
        open
    }

    /// No inbox can be had any more: everything open is told no human can answer.
    fn give_up(&mut self, why: &str) {
        eprintln!("askpane: {why}; ending the session");
        self.answer_all(&Outcome::Unavailable { reason: format!("askpane: {why}") });
    }
}
