//! `askpane claude` and `askpane codex` under the inbox (issues 10, 13): the relay between a hosted
//! session and the running inbox, which shows its questions, permission cards and transcript
//! instead of a window of its own.
//!
//! The relay runs on the caller's thread between two channels: what the agent's session sends
//! toward a window ([`Inbound`]), and what the inbox sends back. A question goes over as the
//! request the agent sent (Claude Code's `can_use_tool`, Codex's `item/tool/requestUserInput`:
//! the agent's [`HostedAgent::question_message`]); the inbox computes its reply line, which goes
//! to the agent's stdin as it is. A permission's decision, the prompt box and Stop come back as
//! messages of their own. An inbox that dies is started again and told everything still open,
//! with the transcript so far; an inbox that ends on purpose (`quitting`) ends the session.
//! An inbox reached through `askpane remote`'s link (issue 27) is not started again on this host
//! when the link drops: the relay waits for the link to come back and tells the inbox everything
//! again there (the same ids, so nothing shows twice), while each open question waits until its
//! `--timeout` (then it hears the time ran out) or, without one, [`LINK_WAIT`] (then that no one
//! can answer), as `askpane hook` does.
//!
//! What the relay decides is [`RelayState`]'s, which does no IO: it takes one message from either
//! side and says what to send the inbox and what comes next ([`Step`]); [`relay`] is the loop
//! around it that reads the channels and writes the socket.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};

use crate::book::approval::undecided;
use crate::protocol::Outcome;
use crate::protocol::inbox::{
    AskMessage, ClientMessage, InboxMessage, OutcomeMessage, Policy, SessionLine,
};
use crate::protocol::stream::{CliMessage, PermissionDecision, PermissionRequest};

use super::super::inbox::{InboxConnection, LINK_POLL, LINK_WAIT};
use super::super::{
    ApprovalEvent, Control, Inbound, PermissionAsk, Request, RequestEvent, Responder,
    SessionCommand, SessionEvent, SessionInbound,
};
use super::{AgentLines, HostedAgent};

/// How often the relay starts a new inbox after the one it used went away.
const RESTARTS: usize = 2;

/// Transcript lines kept to show a restarted inbox; older ones are not shown again.
const REPLAYED_LINES: usize = 2000;

/// How long an ended session waits for the agent to finish the turn its last answers went to.
const TURN_END_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What the relay needs from `askpane claude`'s or `askpane codex`'s flags and session.
pub struct Relay<A: HostedAgent> {
    /// The answering flags (`--answers` read), for the inbox to decide each question by, as
    /// it decides `ask`'s and `hook`'s (and record what they decide).
    pub flags: Policy,
    /// The first prompt, already sent to the agent.
    pub prompt: Option<String>,
    pub project: Option<String>,
    /// The agent's stdin, for the reply lines the inbox computes.
    pub lines: AgentLines<A>,
    /// The session's prompts and Stop.
    pub commands: Sender<SessionCommand>,
}

/// How the relay reaches an inbox again after its connection ended.
pub struct Reconnect<'a> {
    /// The running inbox, or one started now (the inbox on this machine died).
    pub start: &'a dyn Fn() -> Result<InboxConnection, String>,
    /// An inbox that answers now, none started: a link to the desk that came back.
    pub find: &'a dyn Fn() -> Option<InboxConnection>,
}

/// Relays between the session (`from_session`) and the inbox until the session or the inbox
/// ends, or a signal comes; then the session is to be shut down. An inbox that goes away is
/// replaced by `reconnect.start`'s (which starts one when none runs), at most [`RESTARTS`]
/// times; one reached through a link that went down, by `reconnect.find`'s once the link is
/// back ([`wait_for_link`]).
pub fn relay<A: HostedAgent>(
    relay: Relay<A>,
    mut inbox: InboxConnection,
    from_session: &Receiver<Inbound>,
    reconnect: &Reconnect<'_>,
) {
    let mut state = RelayState::new(relay);
    send_all(&mut inbox, state.introduction(Instant::now()));
    log::info!("{}'s questions, permissions and transcript are in the inbox", A::WORDS);
    let mut restarts = 0;
    loop {
        let (step, to_inbox) = select! {
            recv(from_session) -> message => match message {
                Ok(message) => state.session_said(message),
                Err(_) => (Step::End, None),
            },
            recv(inbox.messages) -> message => match message {
                Ok(Ok(Some(message))) => (state.inbox_said(message), None),
                // The connection ended without `quitting`: the inbox died.
                Ok(Ok(None) | Err(_)) | Err(_) => (Step::InboxGone, None),
            },
        };
        send_all(&mut inbox, to_inbox);
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
            // Through `askpane remote`'s link: the inbox is on the desk, and this host may
            // have no display to start one of its own on (nor should it: the person is there).
            Step::InboxGone if inbox.client.link.is_some() => {
                inbox.close();
                match wait_for_link(&mut state, from_session, reconnect.find) {
                    Some(again) => {
                        inbox = again;
                        send_all(&mut inbox, state.introduction(Instant::now()));
                    }
                    None => return,
                }
            }
            Step::InboxGone if restarts < RESTARTS => {
                restarts += 1;
                inbox.close();
                log::warn!("the inbox went away; starting it again");
                match (reconnect.start)() {
                    Ok(again) => {
                        inbox = again;
                        send_all(&mut inbox, state.introduction(Instant::now()));
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

/// The link to the desk went down: waits for `find` to reach an inbox again (polling every
/// [`LINK_POLL`]) while the session goes on. What the session sends meanwhile is kept for the
/// inbox (its introduction tells it all once the link is back); each question and permission
/// that waited past its time ([`RelayState::end_overdue`]) hears so. `None`: the session ended
/// meanwhile (the agent ended, a signal), everything open told already.
fn wait_for_link<A: HostedAgent>(
    state: &mut RelayState<A>,
    from_session: &Receiver<Inbound>,
    find: &dyn Fn() -> Option<InboxConnection>,
) -> Option<InboxConnection> {
    let down_since = Instant::now();
    log::warn!(
        "the link to your desk went down; waiting for it to come back (each question until its \
         --timeout, else {} min)",
        LINK_WAIT.as_secs() / 60
    );
    loop {
        let now = Instant::now();
        state.end_overdue(now, down_since);
        if let Some(again) = find() {
            log::warn!("the link is back; asking again");
            return Some(again);
        }
        let mut wake = now + LINK_POLL;
        if let Some(due) = state.next_due(down_since) {
            wake = wake.min(due);
        }
        select! {
            recv(from_session) -> message => {
                let step = match message {
                    // Sent to the inbox once the link is back: the state keeps it.
                    Ok(message) => state.session_said(message).0,
                    Err(_) => Step::End,
                };
                if step == Step::End {
                    return None;
                }
            },
            recv(crossbeam_channel::at(wake)) -> _ => {},
        }
    }
}

/// Writes `messages` to the inbox in order. A failed write shows as the connection's end, which
/// the loop handles.
fn send_all(inbox: &mut InboxConnection, messages: impl IntoIterator<Item = ClientMessage>) {
    for message in messages {
        if inbox.client.send(&message).is_err() {
            break;
        }
    }
}

/// What comes after one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Go,
    End,
    /// The session ends, once the agent's turn has taken the answers just sent (see
    /// [`let_the_turn_end`]).
    EndAfterTurn,
    InboxGone,
}

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
                log::warn!(
                    "{agent} did not end its turn within {} s of the last answers; stopping it",
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
                permission.reply.send(undecided(&permission.request, &message));
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

/// A question handed to the inbox, until its outcome comes.
struct HeldQuestion {
    ask: AskMessage,
    tool_use_id: Option<String>,
    reply: Responder<Outcome>,
    /// When the agent asked: its `--timeout` runs from then.
    asked_at: Instant,
}

impl HeldQuestion {
    /// The time it allows: its `--timeout`.
    fn timeout(&self) -> Option<Duration> {
        self.ask.policy.timeout_secs.map(Duration::from_secs)
    }

    /// Until when it waits for a link that went down at `down_since`: its `--timeout`, else
    /// [`LINK_WAIT`] from when the link went down (or from when it was asked, if later).
    fn due(&self, down_since: Instant) -> Instant {
        match self.timeout() {
            Some(timeout) => self.asked_at + timeout,
            None => self.asked_at.max(down_since) + LINK_WAIT,
        }
    }
}

/// A permission handed to the inbox, until it is decided.
struct HeldPermission {
    request: PermissionRequest,
    reply: Responder<PermissionDecision>,
    asked_at: Instant,
}

impl HeldPermission {
    /// Until when it waits for a link that went down at `down_since`.
    fn due(&self, down_since: Instant) -> Instant {
        self.asked_at.max(down_since) + LINK_WAIT
    }
}

/// What a question or permission whose link did not come back in time hears.
const LINK_NOT_BACK: &str = "askpane: the link to your desk did not come back";

/// The relay's state: what waits in the inbox for the user, and the transcript to show a new
/// inbox.
struct RelayState<A: HostedAgent> {
    relay: Relay<A>,
    next_id: u64,
    /// By the id the inbox knows each by: numbered in arrival order, so a new inbox is told of
    /// them oldest first.
    questions: BTreeMap<u64, HeldQuestion>,
    permissions: BTreeMap<u64, HeldPermission>,
    transcript: VecDeque<SessionLine>,
    /// Answers or decisions went to the agent and its turn has not ended since: ending the
    /// session now waits for that turn ([`Step::EndAfterTurn`]).
    answered_in_turn: bool,
}

impl<A: HostedAgent> RelayState<A> {
    fn new(relay: Relay<A>) -> Self {
        RelayState {
            relay,
            next_id: 1,
            questions: BTreeMap::new(),
            permissions: BTreeMap::new(),
            transcript: VecDeque::new(),
            answered_in_turn: false,
        }
    }

    /// What tells a (new) inbox about the session: who it is, the transcript so far, and
    /// everything still waiting for the user (oldest first), each question with the time it has
    /// left at `now` (at least a second).
    fn introduction(&self, now: Instant) -> Vec<ClientMessage> {
        let mut messages = vec![ClientMessage::Host {
            agent: A::SOURCE.to_owned(),
            project: self.relay.project.clone(),
            prompt: self.relay.prompt.clone(),
        }];
        messages.extend(
            self.transcript.iter().map(|line| ClientMessage::SessionEvent { event: line.clone() }),
        );
        messages.extend(self.questions.values().map(|held| {
            let mut ask = held.ask.clone();
            if let Some(timeout) = held.timeout() {
                let left = (held.asked_at + timeout).saturating_duration_since(now);
                ask.policy.timeout_secs = Some(left.as_secs().max(1));
            }
            ClientMessage::Ask(Box::new(ask))
        }));
        messages.extend(self.permissions.iter().map(|(id, held)| ClientMessage::Permission {
            id: id.to_string(),
            request: Box::new(held.request.clone()),
            from: None,
        }));
        messages
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Takes one message of the session's: what to send the inbox for it, and what comes next.
    fn session_said(&mut self, message: Inbound) -> (Step, Option<ClientMessage>) {
        let sent = match message {
            Inbound::Request(RequestEvent::Ask(request)) => self.question(*request),
            Inbound::Request(RequestEvent::Withdraw { tool_use_id }) => {
                let id = self.questions.iter().find_map(|(id, held)| {
                    (held.tool_use_id.as_deref() == Some(tool_use_id.as_str())).then_some(*id)
                });
                // The agent took it back. Its writer hears so, whichever of this and the
                // reader's own withdrawal it takes first: Claude Code and Codex then want no
                // reply, an ACP agent JSON-RPC's one answer, "request cancelled".
                id.and_then(|id| self.questions.remove(&id).map(|held| (id, held))).map(
                    |(id, held)| {
                        held.reply.send(Outcome::Withdrawn);
                        ClientMessage::Withdraw { id: id.to_string() }
                    },
                )
            }
            Inbound::Approval(ApprovalEvent::Permission(permission)) => {
                let PermissionAsk { request, reply, .. } = *permission;
                let id = self.next_id();
                let message = ClientMessage::Permission {
                    id: id.to_string(),
                    request: Box::new(request.clone()),
                    from: None,
                };
                let asked_at = Instant::now();
                self.permissions.insert(id, HeldPermission { request, reply, asked_at });
                Some(message)
            }
            Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }) => {
                let id = self
                    .permissions
                    .iter()
                    .find_map(|(id, held)| (held.request.request_id == request_id).then_some(*id));
                id.and_then(|id| self.permissions.remove(&id).map(|held| (id, held))).map(
                    |(id, held)| {
                        held.reply.handed_on();
                        ClientMessage::WithdrawPermission { id: id.to_string() }
                    },
                )
            }
            Inbound::Session(SessionInbound::Event(event)) => {
                let Some(line) = SessionLine::from_event(*event) else { return (Step::Go, None) };
                let ended = matches!(line, SessionLine::Ended { .. });
                if ended || matches!(line, SessionLine::Result { .. }) {
                    self.answered_in_turn = false;
                }
                // The session leaves the inbox with the connection: the terminal keeps why.
                if let SessionLine::Ended { status, stderr_tail } = &line
                    && !status.is_success()
                {
                    let tail: String =
                        stderr_tail.iter().map(|line| format!("\n  {line}")).collect();
                    log::warn!("{} ended ({status}){tail}", A::WORDS);
                }
                if self.transcript.len() == REPLAYED_LINES {
                    self.transcript.pop_front();
                }
                self.transcript.push_back(line.clone());
                // The agent ended: so does this command (the inbox drops the session).
                let step = if ended { Step::End } else { Step::Go };
                return (step, Some(ClientMessage::SessionEvent { event: line }));
            }
            Inbound::Control(Control::Notice(notice)) => {
                log::info!("{notice}");
                None
            }
            Inbound::Control(Control::Shutdown { outcome }) => {
                // A signal: every question and permission still open hears why, here, before
                // the connection closes (which withdraws them from the inbox).
                self.answer_all(&outcome);
                return (Step::End, None);
            }
            // Only a window receives these.
            // (A front end's answer comes from the inbox's socket to its window, never here.)
            Inbound::Request(
                RequestEvent::Leave { .. }
                | RequestEvent::Unshown { .. }
                | RequestEvent::FrontEnd(_),
            )
            | Inbound::Approval(
                ApprovalEvent::TimedOutPermission { .. }
                | ApprovalEvent::Unshown(_)
                | ApprovalEvent::FrontEnd(_),
            )
            | Inbound::Session(
                SessionInbound::Hosted { .. }
                | SessionInbound::HostedEvent { .. }
                | SessionInbound::HostGone { .. },
            )
            | Inbound::Page(_)
            | Inbound::Control(Control::Reveal { .. }) => None,
        };
        (Step::Go, sent)
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
            id: id.to_string(),
            mode: A::MODE,
            message,
            // The session's flags: the inbox decides by them (`--answers --submit`, `--decline`)
            // and records it, or leaves the question to a person with the form filled in and
            // the time allowed.
            policy: Policy { mark_skipped: policy.mark_skipped, ..self.relay.flags.clone() },
            on_disk: None,
        };
        let held = HeldQuestion { ask: ask.clone(), tool_use_id, reply, asked_at: Instant::now() };
        self.questions.insert(id, held);
        Some(ClientMessage::Ask(Box::new(ask)))
    }

    /// Takes one message of the inbox's, and says what comes next.
    fn inbox_said(&mut self, message: InboxMessage) -> Step {
        match message {
            InboxMessage::Outcome(OutcomeMessage { id, reply, .. }) => {
                if let Some(held) = take(&mut self.questions, &id) {
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
                if let Some(held) = take(&mut self.permissions, &id) {
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
                log::warn!("the inbox refused a message: {message}");
                // The agent hears why, rather than waiting for a question nobody sees.
                if let Some(held) = id.as_ref().and_then(|id| take(&mut self.questions, id)) {
                    let reason = format!("askpane's inbox could not show the question: {message}");
                    held.reply.send(Outcome::Unavailable { reason });
                }
                if let Some(held) = id.as_ref().and_then(|id| take(&mut self.permissions, id)) {
                    let message = format!("askpane's inbox could not show this request: {message}");
                    held.reply.send(undecided(&held.request, &message));
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
            | InboxMessage::Linked { .. }
            | InboxMessage::NewLink { .. }
            | InboxMessage::Noticed { .. }
            | InboxMessage::Verdict { .. } => {}
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

    /// Ends everything still open with `outcome` (a permission is denied with its words, a form
    /// cancelled: [`undecided`]), and says how many there were.
    fn answer_all(&mut self, outcome: &Outcome) -> usize {
        let open = self.questions.len() + self.permissions.len();
        for held in std::mem::take(&mut self.questions).into_values() {
            held.reply.send(outcome.clone());
        }
        let message = outcome
            .deny_message()
            .unwrap_or_else(|| "askpane ended before the user decided.".to_owned());
        for held in std::mem::take(&mut self.permissions).into_values() {
            held.reply.send(undecided(&held.request, &message));
        }
        open
    }

    /// While the link is down (since `down_since`): each question and permission that waited
    /// past its time at `now` hears so: a question with `--timeout` that the time ran out (as the
    /// inbox would have told it), one without, and a permission, that no one can answer.
    fn end_overdue(&mut self, now: Instant, down_since: Instant) {
        let questions: Vec<u64> = (self.questions.iter())
            .filter_map(|(id, held)| (held.due(down_since) <= now).then_some(*id))
            .collect();
        for held in questions.iter().filter_map(|id| self.questions.remove(id)) {
            match held.ask.policy.timeout_secs {
                Some(secs) => {
                    log::warn!(
                        "the link did not come back within the {secs} s timeout; telling {} \
                         the time ran out",
                        A::WORDS
                    );
                    held.reply.send(Outcome::timed_out(secs));
                }
                None => {
                    log::warn!(
                        "the link did not come back; telling {} no one can answer",
                        A::WORDS
                    );
                    held.reply.send(Outcome::Unavailable { reason: LINK_NOT_BACK.to_owned() });
                }
            }
        }
        let permissions: Vec<u64> = (self.permissions.iter())
            .filter_map(|(id, held)| (held.due(down_since) <= now).then_some(*id))
            .collect();
        for held in permissions.iter().filter_map(|id| self.permissions.remove(id)) {
            log::warn!("the link did not come back; {} ends undecided", held.request.tool_name);
            held.reply.send(undecided(&held.request, LINK_NOT_BACK));
        }
    }

    /// The next instant [`RelayState::end_overdue`] has something to end, while the link is
    /// down since `down_since`.
    fn next_due(&self, down_since: Instant) -> Option<Instant> {
        let questions = self.questions.values().map(|held| held.due(down_since));
        let permissions = self.permissions.values().map(|held| held.due(down_since));
        questions.chain(permissions).min()
    }

    /// No inbox can be had any more: everything open is told no human can answer.
    fn give_up(&mut self, why: &str) {
        log::warn!("{why}; ending the session");
        self.answer_all(&Outcome::Unavailable { reason: format!("askpane: {why}") });
    }
}

/// Takes what waits under the inbox's `id` for it (an id the relay never gave finds nothing).
fn take<T>(held: &mut BTreeMap<u64, T>, id: &str) -> Option<T> {
    id.parse().ok().and_then(|id| held.remove(&id))
}

#[cfg(test)]
mod tests {
    use crossbeam_channel::Receiver;
    use serde_json::{Value, json};

    use super::super::ToAgent;
    use super::super::claude::{Claude, ClaudeWriter};
    use super::*;
    use crate::protocol::inbox::ClientMode;
    use crate::protocol::stream::{AgentExit, TurnResult, parse_cli_line};
    use crate::transport::{Provenance, RequestId};

    /// A relay for Claude Code, with what it writes to the agent and sends as commands.
    fn relay_state(
        flags: Policy,
    ) -> (RelayState<Claude>, Receiver<ToAgent<ClaudeWriter>>, Receiver<SessionCommand>) {
        let (to_agent, written) = crossbeam_channel::unbounded();
        let (commands, commanded) = crossbeam_channel::unbounded();
        let relay = Relay {
            flags,
            prompt: Some("tidy the shop".to_owned()),
            project: Some("shop".to_owned()),
            lines: AgentLines(to_agent),
            commands,
        };
        (RelayState::new(relay), written, commanded)
    }

    /// Claude Code's `can_use_tool` for AskUserQuestion, as the session's reader hands it on.
    fn question(request_id: &str, tool_use_id: &str) -> (Inbound, Receiver<Outcome>) {
        let line = json!({
            "type": "control_request", "request_id": request_id,
            "request": {
                "subtype": "can_use_tool", "tool_name": "AskUserQuestion",
                "tool_use_id": tool_use_id,
                "input": {"questions": [{
                    "question": "Which colour?", "header": "Colour", "multiSelect": false,
                    "options": [{"label": "Red", "description": "warm"},
                                {"label": "Blue", "description": "cool"}]
                }]}
            }
        });
        let CliMessage::Question(incoming) = parse_cli_line(&line) else {
            panic!("a question: {line}")
        };
        let (request, outcome) =
            Request::new(incoming, Provenance::new("claude", None)).expect("a valid question");
        (Inbound::Request(RequestEvent::Ask(Box::new(request))), outcome)
    }

    fn permission(request_id: &str) -> (Inbound, Receiver<PermissionDecision>) {
        let (reply, decided) = Responder::channel();
        let request = PermissionRequest {
            request_id: request_id.to_owned(),
            tool_name: "Bash".to_owned(),
            input: json!({"command": "npm test"}),
            tool_use_id: None,
            title: None,
            description: None,
            reason: None,
            agent_id: None,
            ..PermissionRequest::default()
        };
        let ask = PermissionAsk {
            id: RequestId::from_raw(7),
            request,
            provenance: Provenance::new("claude", None),
            reply,
        };
        (Inbound::Approval(ApprovalEvent::Permission(Box::new(ask))), decided)
    }

    fn event(message: CliMessage) -> Inbound {
        Inbound::Session(SessionInbound::Event(Box::new(SessionEvent::Message(message))))
    }

    fn outcome(id: &str, reply: Option<Value>) -> InboxMessage {
        InboxMessage::Outcome(OutcomeMessage {
            id: id.to_owned(),
            outcome: "answered".to_owned(),
            reply,
            exit_code: 0,
            problem: None,
        })
    }

    fn lines_written(written: &Receiver<ToAgent<ClaudeWriter>>) -> Vec<Value> {
        written
            .try_iter()
            .filter_map(|message| match message {
                ToAgent::Line(line) => Some(line),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_question_goes_over_as_the_agent_s_request_and_its_reply_line_goes_to_the_agent() {
        let flags = Policy { timeout_secs: Some(90), ..Policy::default() };
        let (mut state, written, _) = relay_state(flags);
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let (step, sent) = state.session_said(message);
        assert_eq!(step, Step::Go);
        let Some(ClientMessage::Ask(ask)) = sent else { panic!("an ask: {sent:?}") };
        assert_eq!(ask.id, "1");
        assert_eq!(ask.mode, ClientMode::Claude);
        assert_eq!(ask.policy.timeout_secs, Some(90), "the session's flags travel with it");
        assert_eq!(ask.message["request"]["subtype"], "can_use_tool");
        assert_eq!(ask.message["request"]["tool_use_id"], "toolu_1");

        let reply = json!({"type": "control_response", "response": {"request_id": "req-1"}});
        assert_eq!(state.inbox_said(outcome("1", Some(reply.clone()))), Step::Go);
        assert_eq!(lines_written(&written), vec![reply]);
        // The reply went to the agent as the inbox wrote it: the responder says nothing more.
        assert!(outcome_seen.try_recv().is_err());
        // A second outcome for the same id (a confused inbox) writes nothing.
        assert_eq!(state.inbox_said(outcome("1", Some(json!({})))), Step::Go);
        assert!(lines_written(&written).is_empty());
    }

    #[test]
    fn a_question_the_agent_takes_back_is_withdrawn_from_the_inbox_by_its_own_id() {
        let (mut state, written, _) = relay_state(Policy::default());
        let _ = state.session_said(question("req-1", "toolu_1").0);
        let (message, withdrawn_seen) = question("req-2", "toolu_2");
        let _ = state.session_said(message);
        let withdraw = RequestEvent::Withdraw { tool_use_id: "toolu_2".to_owned() };
        let (step, sent) = state.session_said(Inbound::Request(withdraw));
        assert_eq!(step, Step::Go);
        assert_eq!(sent, Some(ClientMessage::Withdraw { id: "2".to_owned() }));
        // The session's writer hears it withdrawn (an ACP agent still wants JSON-RPC's one
        // answer to its request, written there), never a silently closed reply.
        assert_eq!(withdrawn_seen.try_recv(), Ok(Outcome::Withdrawn));
        // The inbox's outcome for it (it withdrew it: no reply) writes nothing.
        let _ = state.inbox_said(outcome("2", None));
        assert!(lines_written(&written).is_empty());
        // Taking back one nobody holds sends nothing.
        let withdraw = RequestEvent::Withdraw { tool_use_id: "toolu_9".to_owned() };
        assert_eq!(state.session_said(Inbound::Request(withdraw)), (Step::Go, None));
    }

    #[test]
    fn a_permission_is_decided_by_the_inbox_and_withdrawn_when_the_agent_takes_it_back() {
        let (mut state, _, _) = relay_state(Policy::default());
        let (message, decided) = permission("perm-1");
        let (_, sent) = state.session_said(message);
        let Some(ClientMessage::Permission { id, request, .. }) = sent else { panic!("{sent:?}") };
        assert_eq!((id.as_str(), request.tool_name.as_str()), ("1", "Bash"));
        let decision = PermissionDecision::AllowOnce;
        let said = InboxMessage::PermissionDecided { id: "1".to_owned(), decision };
        assert_eq!(state.inbox_said(said), Step::Go);
        assert_eq!(decided.try_recv(), Ok(PermissionDecision::AllowOnce));

        let (message, withdrawn) = permission("perm-2");
        let _ = state.session_said(message);
        let take_back = ApprovalEvent::WithdrawPermission { request_id: "perm-2".to_owned() };
        let (_, sent) = state.session_said(Inbound::Approval(take_back));
        assert_eq!(sent, Some(ClientMessage::WithdrawPermission { id: "2".to_owned() }));
        // Handed on: the agent no longer waits, so it hears nothing.
        assert!(withdrawn.try_recv().is_err());
    }

    #[test]
    fn a_new_inbox_is_told_the_session_the_transcript_and_what_is_open_oldest_first() {
        let (mut state, _, _) = relay_state(Policy::default());
        let answered = CliMessage::Assistant { blocks: Vec::new() };
        let _ = state.session_said(event(answered));
        // Eleven questions: ids 1 to 11 (a map ordered by text would put "10" before "2").
        for n in 1..=11 {
            let _ = state.session_said(question(&format!("req-{n}"), &format!("toolu_{n}")).0);
        }
        let _ = state.session_said(permission("perm-1").0);
        let told = state.introduction(Instant::now());
        assert!(matches!(&told[0], ClientMessage::Host { agent, project: Some(project), .. }
            if agent == "claude" && project == "shop"));
        assert!(matches!(&told[1], ClientMessage::SessionEvent { .. }));
        let asked: Vec<&str> = told
            .iter()
            .filter_map(|message| match message {
                ClientMessage::Ask(ask) => Some(ask.id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(asked, ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"]);
        assert!(matches!(told.last(), Some(ClientMessage::Permission { id, .. }) if id == "12"));
    }

    #[test]
    fn the_transcript_kept_for_a_new_inbox_is_bounded() {
        let (mut state, _, _) = relay_state(Policy::default());
        for _ in 0..REPLAYED_LINES + 5 {
            let _ = state.session_said(event(CliMessage::Assistant { blocks: Vec::new() }));
        }
        assert_eq!(state.introduction(Instant::now()).len(), 1 + REPLAYED_LINES);
    }

    #[test]
    fn ending_the_session_answers_what_is_open_and_waits_for_the_turn_only_when_needed() {
        // Nothing open and nothing answered this turn: the session ends at once.
        let (mut state, _, _) = relay_state(Policy::default());
        assert_eq!(state.inbox_said(InboxMessage::EndSession), Step::End);

        // A question open: it hears the window closed, and the turn it ends gets its grace.
        let (mut state, _, _) = relay_state(Policy::default());
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let _ = state.session_said(message);
        assert_eq!(state.inbox_said(InboxMessage::Quitting), Step::EndAfterTurn);
        assert_eq!(outcome_seen.try_recv(), Ok(Outcome::closed()));

        // An answer sent this turn: the turn gets its grace; once the turn ended, no more.
        let (mut state, _, _) = relay_state(Policy::default());
        let _ = state.session_said(question("req-1", "toolu_1").0);
        let _ = state.inbox_said(outcome("1", Some(json!({"answered": true}))));
        assert_eq!(state.inbox_said(InboxMessage::EndSession), Step::EndAfterTurn);
        let (mut state, _, _) = relay_state(Policy::default());
        let _ = state.session_said(question("req-1", "toolu_1").0);
        let _ = state.inbox_said(outcome("1", Some(json!({"answered": true}))));
        let _ = state.session_said(event(CliMessage::Result(TurnResult::default())));
        assert_eq!(state.inbox_said(InboxMessage::EndSession), Step::End);
    }

    #[test]
    fn a_refused_message_tells_its_agent_why_instead_of_leaving_it_waiting() {
        let (mut state, _, _) = relay_state(Policy::default());
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let _ = state.session_said(message);
        let (message, decided) = permission("perm-1");
        let _ = state.session_said(message);
        let refused = |id: &str| InboxMessage::Error {
            message: "too big".to_owned(),
            id: Some(id.to_owned()),
        };
        let _ = state.inbox_said(refused("1"));
        let _ = state.inbox_said(refused("2"));
        // An id the relay never gave (or not a number) touches nothing.
        let _ = state.inbox_said(refused("x"));
        let Ok(Outcome::Unavailable { reason }) = outcome_seen.try_recv() else {
            panic!("the question hears it is unavailable")
        };
        assert!(reason.contains("too big"), "{reason}");
        let Ok(PermissionDecision::Deny { message }) = decided.try_recv() else {
            panic!("the permission is denied with why")
        };
        assert!(message.contains("too big"), "{message}");
    }

    #[test]
    fn a_signal_or_a_lost_inbox_answers_everything_open() {
        let (mut state, _, _) = relay_state(Policy::default());
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let _ = state.session_said(message);
        let stopped = Outcome::closed();
        let shutdown = Control::Shutdown { outcome: stopped.clone() };
        assert_eq!(state.session_said(Inbound::Control(shutdown)), (Step::End, None));
        assert_eq!(outcome_seen.try_recv(), Ok(stopped));

        let (mut state, _, _) = relay_state(Policy::default());
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let _ = state.session_said(message);
        let (message, decided) = permission("perm-1");
        let _ = state.session_said(message);
        state.give_up("the inbox keeps going away");
        assert!(matches!(outcome_seen.try_recv(), Ok(Outcome::Unavailable { .. })));
        assert!(matches!(decided.try_recv(), Ok(PermissionDecision::Deny { .. })));
    }

    #[test]
    fn the_agent_ending_ends_the_relay_and_the_inbox_hears_it() {
        let (mut state, _, _) = relay_state(Policy::default());
        let ended = SessionEvent::Ended { status: AgentExit::Code(3), stderr_tail: Vec::new() };
        let (step, sent) =
            state.session_said(Inbound::Session(SessionInbound::Event(Box::new(ended))));
        assert_eq!(step, Step::End);
        assert!(matches!(
            sent,
            Some(ClientMessage::SessionEvent { event: SessionLine::Ended { .. } })
        ));
    }

    #[test]
    fn while_the_link_is_down_a_question_waits_until_its_timeout_and_is_asked_again_with_what_is_left()
     {
        let flags = Policy { timeout_secs: Some(30), ..Policy::default() };
        let (mut state, _, _) = relay_state(flags);
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let _ = state.session_said(message);
        let (message, decided) = permission("perm-1");
        let _ = state.session_said(message);
        let down = Instant::now();
        // Back after 10 s: asked again with the 20 s left (a second less if the test was slow).
        let told = state.introduction(down + Duration::from_secs(10));
        let Some(ClientMessage::Ask(ask)) =
            told.iter().find(|m| matches!(m, ClientMessage::Ask(_)))
        else {
            panic!("asked again: {told:?}")
        };
        assert!(matches!(ask.policy.timeout_secs, Some(19 | 20)), "{:?}", ask.policy);
        // Past what is left, never less than a second.
        let told = state.introduction(down + Duration::from_secs(60));
        assert!(told.iter().any(|m| matches!(m, ClientMessage::Ask(ask)
            if ask.policy.timeout_secs == Some(1))));
        let due = state.next_due(down).expect("the question's deadline");
        assert!(due <= down + Duration::from_secs(30), "{due:?} {down:?}");
        // Not yet: nothing heard.
        state.end_overdue(due - Duration::from_millis(1), down);
        assert!(outcome_seen.try_recv().is_err());
        // Its time ran out: it hears so, as the inbox would have told it; the permission waits on.
        state.end_overdue(due, down);
        assert_eq!(outcome_seen.try_recv(), Ok(Outcome::timed_out(30)));
        assert!(decided.try_recv().is_err());
        assert_eq!(state.next_due(down), Some(down + LINK_WAIT));
        state.end_overdue(down + LINK_WAIT, down);
        let Ok(PermissionDecision::Deny { message }) = decided.try_recv() else {
            panic!("the permission is denied")
        };
        assert_eq!(message, LINK_NOT_BACK);
        assert_eq!(state.next_due(down), None);
        assert!(state.introduction(down).iter().all(|m| !matches!(m, ClientMessage::Ask(_))));
    }

    #[test]
    fn while_the_link_is_down_a_question_without_a_timeout_waits_the_link_s_wait_then_hears_no_one_can_answer()
     {
        let (mut state, _, _) = relay_state(Policy::default());
        let (message, outcome_seen) = question("req-1", "toolu_1");
        let _ = state.session_said(message);
        // The link went down a minute after it was asked: the wait runs from then.
        let down = Instant::now() + Duration::from_secs(60);
        assert_eq!(state.next_due(down), Some(down + LINK_WAIT));
        state.end_overdue(down + LINK_WAIT - Duration::from_millis(1), down);
        assert!(outcome_seen.try_recv().is_err());
        state.end_overdue(down + LINK_WAIT, down);
        let Ok(Outcome::Unavailable { reason }) = outcome_seen.try_recv() else {
            panic!("told no one can answer")
        };
        assert_eq!(reason, LINK_NOT_BACK);
    }

    #[test]
    fn prompts_and_stop_from_the_inbox_become_session_commands() {
        let (mut state, _, commanded) = relay_state(Policy::default());
        let _ = state.inbox_said(InboxMessage::Prompt { text: "go on".to_owned() });
        let _ = state.inbox_said(InboxMessage::Interrupt);
        let commands: Vec<SessionCommand> = commanded.try_iter().collect();
        assert_eq!(
            commands,
            [SessionCommand::UserTurn("go on".to_owned()), SessionCommand::Interrupt]
        );
    }
}
