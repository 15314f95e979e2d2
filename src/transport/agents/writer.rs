//! The writer's side of a hosted session, for every agent: the thread that owns the agent's
//! stdin and writes, in one order, the agent's first lines, the lines the reader and the inbox
//! send, the window's prompts and Stop, and each reply the moment its outcome (or decision)
//! arrives. What those lines look like is the agent's [`Writing`].

use std::io::{self, BufWriter};
use std::process::ChildStdin;
use std::time::Instant;

use crossbeam_channel::{Receiver, Select};
use serde_json::Value;

use crate::protocol::Outcome;
use crate::protocol::stream::PermissionDecision;
use crate::transport::lines::write_line;
use crate::transport::{Inbound, SessionCommand, SessionEvent, SessionInbound, UiSender};

use super::ToAgent;

/// How one agent's lines are written: its handshake, turns and interrupts, and the reply to a
/// question or a permission in its own protocol. The implementing type is the writer's state.
pub trait Writing: Send + 'static {
    /// How a question is known until its reply is written (Claude Code: its envelope; Codex:
    /// its JSON-RPC id and request).
    type Question: Send + 'static;
    /// How a permission request is known until its decision is written.
    type Permission: Send + 'static;
    /// What the reader tells this writer besides questions and permissions (a handshake step,
    /// a turn that started or ended).
    type Note: Send + 'static;

    /// Writes the first lines (the handshake; the first prompt when there is one).
    fn begin(&mut self, out: &mut AgentInput);
    fn note(&mut self, note: Self::Note, out: &mut AgentInput);
    /// The person's next turn.
    fn user_turn(&mut self, text: String, out: &mut AgentInput);
    /// The window's Stop: interrupt the running turn.
    fn interrupt(&mut self, out: &mut AgentInput);
    /// The session ends (what was decided just before is written): stop a turn still running.
    /// Closing the agent's stdin, which follows, is what ends it.
    fn close(&mut self, out: &mut AgentInput);
    /// Writes the reply to `question` (none for a question the agent took back).
    fn answer(&mut self, question: &Self::Question, outcome: &Outcome, out: &mut AgentInput);
    /// Writes the decision on `permission`.
    fn decide(
        &mut self,
        permission: &Self::Permission,
        decision: &PermissionDecision,
        out: &mut AgentInput,
    );
    /// The agent took back `question` before it was answered: write what its protocol expects
    /// then (nothing, for most).
    fn withdrawn_question(&mut self, _question: &Self::Question, _out: &mut AgentInput) {}
    /// The agent took back `permission` before it was decided.
    fn withdrawn_permission(&mut self, _permission: &Self::Permission, _out: &mut AgentInput) {}
    /// When the running turn counts as stuck (the agent said nothing since it was last heard
    /// from); `None` while no turn runs, or for an agent whose turns are never given up on.
    fn stuck_at(&self) -> Option<Instant> {
        None
    }
    /// The turn is stuck: say so (a session with a window shows it, for the person to end), or
    /// end it as far as the agent lets and say how it ended (a session without a window ends
    /// its run on that result).
    fn stuck(&mut self, _out: &mut AgentInput) -> Option<SessionEvent> {
        None
    }
    /// The window's Stop, as [`Writing::interrupt`]; a writer that ends the turn on its own side
    /// too (a stuck turn the agent may never end) says how it ended.
    fn interrupted(&mut self, out: &mut AgentInput) -> Option<SessionEvent> {
        self.interrupt(out);
        None
    }
}

/// The agent's stdin. Once a write fails (the agent has exited), later lines are dropped: the
/// reader reports how the agent ended, and askpane still exits with its own exit code.
pub struct AgentInput {
    stdin: BufWriter<ChildStdin>,
    gone: bool,
}

impl AgentInput {
    /// Input written to `stdin` (a test's stand-in agent).
    #[cfg(test)]
    pub(super) fn to(stdin: ChildStdin) -> AgentInput {
        AgentInput { stdin: BufWriter::new(stdin), gone: false }
    }

    #[cfg(test)]
    pub(super) fn flush(&mut self) {
        let _ = std::io::Write::flush(&mut self.stdin);
    }

    pub fn write(&mut self, line: &Value) {
        if !self.gone && write_line(&mut self.stdin, line).is_err() {
            self.gone = true;
        }
    }
}

/// An open question: the agent's key for it, how its reply is written, and where its outcome
/// arrives.
type OpenQuestion<W> = (String, <W as Writing>::Question, Receiver<Outcome>);
/// An open permission: the agent's key, how its decision is written, and where it arrives.
type OpenPermission<W> = (String, <W as Writing>::Permission, Receiver<PermissionDecision>);

/// The writer thread: owns the agent's stdin, writes the first lines, then whatever is decided
/// first, until it is told to close (or the session and the reader are gone).
#[allow(
    clippy::indexing_slicing,
    reason = "crossbeam's Select hands back the index of an operation added from these same \
              vectors, and a selected operation must be completed on that very receiver"
)]
pub(super) fn run<W: Writing>(
    mut writer: W,
    stdin: ChildStdin,
    inbox: &Receiver<ToAgent<W>>,
    commands: &Receiver<SessionCommand>,
    to_ui: &UiSender,
) -> io::Result<()> {
    let mut out = AgentInput { stdin: BufWriter::new(stdin), gone: false };
    writer.begin(&mut out);
    let mut questions: Vec<OpenQuestion<W>> = Vec::new();
    let mut permissions: Vec<OpenPermission<W>> = Vec::new();
    let mut commands_open = true;
    loop {
        let mut select = Select::new();
        let inbox_index = select.recv(inbox);
        let commands_index = commands_open.then(|| select.recv(commands));
        for (_, _, outcome) in &questions {
            select.recv(outcome);
        }
        for (_, _, decision) in &permissions {
            select.recv(decision);
        }
        // A turn waiting on the person is not stuck: only a silent agent with nothing open is.
        let waiting_on_person = !questions.is_empty() || !permissions.is_empty();
        let stuck = writer.stuck_at().filter(|_| !waiting_on_person).map(crossbeam_channel::at);
        let stuck_index = stuck.as_ref().map(|stuck| select.recv(stuck));
        let operation = select.select();
        let index = operation.index();
        if let (Some(stuck), true) = (&stuck, Some(index) == stuck_index) {
            let _ = operation.recv(stuck);
            if let Some(event) = writer.stuck(&mut out) {
                to_ui.send(Inbound::Session(SessionInbound::Event(Box::new(event))));
            }
        } else if index == inbox_index {
            match operation.recv(inbox) {
                Ok(ToAgent::Question { key, question, outcome }) => {
                    questions.push((key, question, outcome));
                }
                Ok(ToAgent::Permission { key, permission, decision }) => {
                    permissions.push((key, permission, decision));
                }
                Ok(ToAgent::Forget { key }) => {
                    forget(&key, &mut writer, &mut out, &mut questions, &mut permissions);
                }
                Ok(ToAgent::Note(note)) => writer.note(note, &mut out),
                Ok(ToAgent::Line(line)) => out.write(&line),
                // Closed, or the reader and the session are gone: end the agent's input.
                Ok(ToAgent::Close) | Err(_) => return close(writer, out, &questions, &permissions),
            }
        } else if Some(index) == commands_index {
            match operation.recv(commands) {
                Ok(SessionCommand::UserTurn(text)) => writer.user_turn(text, &mut out),
                Ok(SessionCommand::Interrupt) => {
                    if let Some(event) = writer.interrupted(&mut out) {
                        to_ui.send(Inbound::Session(SessionInbound::Event(Box::new(event))));
                    }
                }
                // The window ends its own session by closing; only the inbox's relay gets End,
                // and it ends the session by closing this writer.
                Ok(SessionCommand::End | SessionCommand::Older { .. }) => {}
                Err(_) => commands_open = false,
            }
        } else {
            // The first index after the fixed ones is the first question.
            let first = 1 + usize::from(commands_index.is_some());
            let offset = index - first;
            // What the window decided, by the key of what it decided: received before anything
            // else is handled, as the select's operation must be completed first.
            let (answered, decided) = if offset < questions.len() {
                let (key, _, outcome) = &questions[offset];
                (Some((key.clone(), operation.recv(outcome))), None)
            } else {
                let (key, _, decision) = &permissions[offset - questions.len()];
                (None, Some((key.clone(), operation.recv(decision))))
            };
            let closing = forget_what_was_taken_back(
                inbox,
                &mut writer,
                &mut out,
                &mut questions,
                &mut permissions,
            );
            // It leaves the watched ones whatever came (a handle dropped without a reply is no
            // longer ready to watch); one taken back meanwhile gets no reply: the agent already
            // took it back.
            if let Some((key, received)) = answered
                && let Some(position) = questions.iter().position(|(open, _, _)| open == &key)
            {
                let (_, question, _) = questions.swap_remove(position);
                if let Ok(outcome) = received {
                    writer.answer(&question, &outcome, &mut out);
                }
            }
            if let Some((key, received)) = decided
                && let Some(position) = permissions.iter().position(|(open, _, _)| open == &key)
            {
                let (_, permission, _) = permissions.swap_remove(position);
                if let Ok(decision) = received {
                    writer.decide(&permission, &decision, &mut out);
                }
            }
            if closing {
                return close(writer, out, &questions, &permissions);
            }
        }
    }
}

/// Before a reply decided in the window is written, what the reader sent already: the select
/// picks among ready operations at random, and an agent that took its request back as the
/// window dropped it too has its `Forget` waiting beside the window's outcome (a form card's
/// hand-back, written `cancel`, where the agent must hear "request cancelled"). Handles each
/// message already queued but a close; true when one came (the caller writes its reply, then
/// closes).
fn forget_what_was_taken_back<W: Writing>(
    inbox: &Receiver<ToAgent<W>>,
    writer: &mut W,
    out: &mut AgentInput,
    questions: &mut Vec<OpenQuestion<W>>,
    permissions: &mut Vec<OpenPermission<W>>,
) -> bool {
    while let Ok(message) = inbox.try_recv() {
        match message {
            ToAgent::Question { key, question, outcome } => {
                questions.push((key, question, outcome))
            }
            ToAgent::Permission { key, permission, decision } => {
                permissions.push((key, permission, decision));
            }
            ToAgent::Forget { key } => forget(&key, writer, out, questions, permissions),
            ToAgent::Note(note) => writer.note(note, out),
            ToAgent::Line(line) => out.write(&line),
            ToAgent::Close => return true,
        }
    }
    false
}

/// The agent needs no reply to `key` any more: each open one is answered once, here or by its
/// outcome, never both.
fn forget<W: Writing>(
    key: &str,
    writer: &mut W,
    out: &mut AgentInput,
    questions: &mut Vec<OpenQuestion<W>>,
    permissions: &mut Vec<OpenPermission<W>>,
) {
    for (_, question, _) in questions.iter().filter(|(open, _, _)| open == key) {
        writer.withdrawn_question(question, out);
    }
    for (_, permission, _) in permissions.iter().filter(|(open, _, _)| open == key) {
        writer.withdrawn_permission(permission, out);
    }
    questions.retain(|(open, _, _)| open != key);
    permissions.retain(|(open, _, _)| open != key);
}

/// Closed, or the reader and the session are gone: replies decided just before (a window
/// ending everything as it closes, a signal) go out first (the select picks among ready
/// operations at random), then the agent's input ends.
fn close<W: Writing>(
    mut writer: W,
    mut out: AgentInput,
    questions: &[OpenQuestion<W>],
    permissions: &[OpenPermission<W>],
) -> io::Result<()> {
    for (_, question, outcome) in questions {
        if let Ok(outcome) = outcome.try_recv() {
            writer.answer(question, &outcome, &mut out);
        }
    }
    for (_, permission, decision) in permissions {
        if let Ok(decision) = decision.try_recv() {
            writer.decide(permission, &decision, &mut out);
        }
    }
    // The agent may already be gone; closing its stdin is what matters.
    writer.close(&mut out);
    Ok(())
}
