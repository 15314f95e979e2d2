//! The reader's side of a hosted session, for every agent: the loop that reads the agent's
//! stdout line by line ([`read`]), and [`Host`], what an agent's [`HostedAgent::line`] hands its
//! questions, permission requests, transcript and replies to. It keeps which questions and cards
//! are open, so that what the agent takes back (or leaves open when it ends) leaves the window.

use std::collections::HashMap;
use std::io::{self, BufReader, Read};

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

use crate::protocol::stream::{CliMessage, PermissionRequest};
use crate::protocol::{Invalid, Outcome};
use crate::transport::group::GroupChild;
use crate::transport::lines::{self, Frame, Line};
use crate::transport::{
    ApprovalEvent, Control, Inbound, PermissionAsk, Provenance, Request, RequestEvent, RequestId,
    Responder, SessionEvent, SessionInbound, UiSender,
};

use super::{Autopilot, HostedAgent, StderrTail, ToAgent, Writing};

/// What an agent's reader reaches: the window (`to_ui`), the writer, the session's flags, and
/// what is open.
pub struct Host<A: HostedAgent> {
    to_ui: UiSender,
    to_writer: Sender<ToAgent<A::Writer>>,
    autopilot: Autopilot,
    provenance: Provenance,
    /// Open questions: the agent's key for each → the tool_use id the window knows it by.
    questions: HashMap<String, String>,
    /// Permission cards shown, by the agent's key.
    permissions: Vec<String>,
    agent: GroupChild,
    stderr_tail: StderrTail,
}

type Question<A> = <<A as HostedAgent>::Writer as Writing>::Question;
type Permission<A> = <<A as HostedAgent>::Writer as Writing>::Permission;
type Note<A> = <<A as HostedAgent>::Writer as Writing>::Note;

impl<A: HostedAgent> Host<A> {
    pub(super) fn new(
        to_ui: UiSender,
        to_writer: Sender<ToAgent<A::Writer>>,
        autopilot: Autopilot,
        provenance: Provenance,
        agent: GroupChild,
        stderr_tail: StderrTail,
    ) -> Self {
        Host {
            to_ui,
            to_writer,
            autopilot,
            provenance,
            questions: HashMap::new(),
            permissions: Vec::new(),
            agent,
            stderr_tail,
        }
    }

    /// No window, browser or inbox shows this session.
    pub fn headless(&self) -> bool {
        self.autopilot.headless
    }

    /// Who asks (the session's own id, once the agent has one).
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    pub fn provenance_mut(&mut self) -> &mut Provenance {
        &mut self.provenance
    }

    /// Something the user should know.
    pub fn notice(&self, text: String) {
        self.to_ui.send(Inbound::Control(Control::Notice(text)));
    }

    /// A message of the session's transcript.
    pub fn session(&self, message: CliMessage) {
        self.to_ui.send(Inbound::Session(SessionInbound::Event(Box::new(SessionEvent::Message(
            message,
        )))));
    }

    /// Writes `line` to the agent now (in turn with the writer's own lines).
    pub fn write(&self, line: Value) {
        let _ = self.to_writer.send(ToAgent::Line(line));
    }

    /// Tells the writer something only this agent's writer knows what to do with.
    pub fn tell_writer(&self, note: Note<A>) {
        let _ = self.to_writer.send(ToAgent::Note(note));
    }

    /// Ends the session: the writer closes the agent's stdin (the agent cannot go on).
    pub fn close(&self) {
        let _ = self.to_writer.send(ToAgent::Close);
    }

    /// A question for the person: `key` is how the agent names it when it takes it back,
    /// `question` how its reply is written once `outcome` arrives. Its policy is the session's
    /// flags stated for these questions (with `mark_skipped` when the agent takes "skipped");
    /// whoever shows it lets the book decide by that policy, and records what it decides, even
    /// when no one is shown anything.
    pub fn ask(
        &mut self,
        key: String,
        mut request: Request,
        outcome: Receiver<Outcome>,
        question: Question<A>,
        mark_skipped: bool,
    ) {
        if let Some(tool_use_id) = request.core.envelope.tool_use_id() {
            self.questions.insert(key.clone(), tool_use_id.to_owned());
        }
        let _ = self.to_writer.send(ToAgent::Question { key, question, outcome });
        let no_window = format!("askpane runs {} without a window", A::WORDS);
        request.policy = self.autopilot.policy(&request.core.ask, &no_window, &self.to_ui);
        request.policy.mark_skipped = mark_skipped;
        self.to_ui.send(Inbound::Request(RequestEvent::Ask(Box::new(request))));
    }

    /// Questions the agent asked that askpane cannot show: `reply` (where the agent takes one)
    /// tells it why, and the person hears of it (`told`: "the agent", "the model").
    pub fn refuse(&self, reply: Option<Value>, invalid: &Invalid, told: &str) {
        if let Some(reply) = reply {
            self.write(reply);
        }
        self.notice(format!(
            "{} asked questions askpane cannot show ({invalid}); {told} was told why.",
            A::WORDS
        ));
    }

    /// A tool the agent wants to run, for the person to allow or deny: `key` is how the agent
    /// names it when it takes it back, `permission` how the decision is written.
    pub fn permission(
        &mut self,
        key: String,
        mut request: PermissionRequest,
        permission: Permission<A>,
    ) {
        // Read here, where the agent runs (an inbox may be on the other end of an SSH forward).
        crate::transport::snapshot::attach(&mut request, std::env::current_dir().ok().as_deref());
        let (reply, decision) = Responder::channel();
        self.permissions.push(key.clone());
        let _ = self.to_writer.send(ToAgent::Permission { key, permission, decision });
        let ask = PermissionAsk {
            id: RequestId::next(),
            request,
            provenance: self.provenance.clone(),
            reply,
        };
        self.to_ui.send(Inbound::Approval(ApprovalEvent::Permission(Box::new(ask))));
    }

    /// The agent needs no reply to `key` any more (it took the question or request back, or its
    /// turn ended): the writer forgets it, and its question or card leaves the window at once.
    pub fn resolved(&mut self, key: &str) {
        let _ = self.to_writer.send(ToAgent::Forget { key: key.to_owned() });
        if let Some(tool_use_id) = self.questions.remove(key) {
            self.to_ui.send(Inbound::Request(RequestEvent::Withdraw { tool_use_id }));
        }
        if let Some(index) = self.permissions.iter().position(|open| open == key) {
            let request_id = self.permissions.remove(index);
            self.to_ui.send(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }));
        }
    }

    /// Every question and card still open goes (the turn that asked them ended).
    pub fn resolve_all(&mut self) {
        let open: Vec<String> =
            self.questions.keys().chain(self.permissions.iter()).cloned().collect();
        for key in open {
            self.resolved(&key);
        }
    }
}

/// The reader thread: reads the agent's stdout line by line and hands each JSON line to the
/// agent's [`HostedAgent::line`]. A line that is not JSON is skipped (the person hears of the
/// first). When the agent closes its stdout, what it asked leaves the window and the session
/// says how the agent ended.
pub(super) fn read<A: HostedAgent>(
    mut agent: A,
    mut host: Host<A>,
    stdout: impl Read,
) -> io::Result<()> {
    // A large buffer and one reused line vector: multi-megabyte lines are read in place,
    // never copied line-by-line into a growing string.
    let mut reader = BufReader::with_capacity(1 << 20, stdout);
    let mut line = Vec::with_capacity(1 << 16);
    let mut reported_malformed = false;
    loop {
        line.clear();
        // No limit: the agent is askpane's own child, and its lines can be megabytes.
        if lines::read_frame(&mut reader, &mut line, lines::UNLIMITED)? == Frame::End {
            break;
        }
        agent.raw_line(&line);
        match Line::parse(&line) {
            None => {}
            Some(Line::Json(value)) => agent.line(&value, &mut host),
            Some(Line::Malformed { error, excerpt }) if !reported_malformed => {
                reported_malformed = true;
                host.notice(format!(
                    "{} wrote a line that is not JSON ({error}): {excerpt}… askpane skips such \
                     lines and goes on reading.",
                    A::WORDS
                ));
            }
            Some(Line::Malformed { .. }) => {}
        }
    }
    host.resolve_all();
    let ended = super::ended(&host.agent, &host.stderr_tail);
    host.to_ui.send(Inbound::Session(SessionInbound::Event(Box::new(ended))));
    Ok(())
}
