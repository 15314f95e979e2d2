//! `askpane acp`: any Agent Client Protocol agent run as a child (JSON-RPC lines over stdio),
//! with askpane as its client (issue 28): the [`HostedAgent`] for ACP. Its `elicitation/create`
//! question forms become the session's questions, its `session/request_permission` the book's
//! approval cards, its `session/update` the transcript; its writer writes the handshake
//! (`initialize` offering form elicitation and no file-system or terminal capability, then
//! `session/new` in the current folder), the prompts, `session/cancel` for Stop, and every
//! reply. What the lines mean is `protocol::acp`; this file says which mean what to the session.
//! The threads are the session's (`acp-reader`, `acp-writer`, `acp-stderr`).

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::book::form;
use crate::protocol::acp::elicitation::{self, Action, Asked, Elicitation};
use crate::protocol::acp::permission::{self as acp_permission, PermissionAsk};
use crate::protocol::acp::transcript::{self, Transcript};
use crate::protocol::acp::update::parse_update;
use crate::protocol::acp::{self, Message, RpcError};
use crate::protocol::inbox::ClientMode;
use crate::protocol::permission::FORM_TOOL;
use crate::protocol::stream::{
    CliMessage, PermissionDecision, PermissionRequest, SessionAgent, SessionEvent, SessionInfo,
    TurnResult,
};
use crate::protocol::{Envelope, Outcome};

use super::{AgentInput, Host, HostOptions, HostedAgent, HostedSession, ThreadNames, Writing};
use crate::transport::{IoThreads, Provenance, Request};

/// askpane's own request ids: the handshake's two, then one per prompt.
const INITIALIZE_ID: u64 = 1;
const SESSION_NEW_ID: u64 = 2;
const FIRST_PROMPT_ID: u64 = 3;

/// JSON-RPC's "request cancelled": the answer to a request the agent withdrew.
const REQUEST_CANCELLED: i64 = -32800;

/// What a permission hears when nobody can decide it.
const NO_WINDOW: &str = "No human is available to approve this tool call (askpane runs the agent \
                         without a window).";

/// How to run an ACP agent.
pub type AcpOptions = HostOptions<AcpOwn>;

/// What only an ACP agent is run with.
#[derive(Clone, Debug)]
pub struct AcpOwn {
    /// The folder the session works in (`session/new`'s `cwd`).
    pub cwd: PathBuf,
    /// Tools allowed without asking (`--allow-tools`), by the name the card shows.
    pub allow_tools: Vec<String>,
    /// A turn in which the agent says nothing for this long, with nothing asked of the person,
    /// is stuck (codex-acp 0.16.0 never ends a turn whose model called request_user_input):
    /// shown as stuck where a person sees the session, who ends it with End turn; without a
    /// window or inbox, askpane's last resort is to send `session/cancel` and end it itself.
    pub stuck_after: Duration,
}

/// A running ACP session.
pub type AcpSession = HostedSession<Acp>;

/// An ACP agent as the reader sees it.
pub struct Acp {
    cwd: String,
    allow_tools: Vec<String>,
    /// The agent's own name and version (`initialize`'s `agentInfo`).
    agent_name: Option<String>,
    /// The sign-in methods the agent offers (`authMethods`' names), to name when it refuses a
    /// session for want of one: askpane holds no credentials and signs in with none itself.
    auth_methods: Vec<String>,
    /// Open question forms by their tool call: withdrawn when the tool call ends.
    forms_by_call: HashMap<String, String>,
    /// Open links by their `elicitationId`: withdrawn when the agent says it is complete.
    links: HashMap<String, String>,
    transcript: Transcript,
}

impl HostedAgent for Acp {
    type Own = AcpOwn;
    type Writer = AcpWriter;
    const SOURCE: &'static str = acp::SOURCE;
    const WORDS: &'static str = "The ACP agent";
    const MODE: ClientMode = ClientMode::Acp;
    const THREADS: ThreadNames =
        ThreadNames { reader: "acp-reader", writer: "acp-writer", stderr: "acp-stderr" };

    fn command(options: &AcpOptions) -> Command {
        let mut command = Command::new(&options.program);
        command.args(&options.extra_args).current_dir(&options.own.cwd);
        command
    }

    fn cannot_start(options: &AcpOptions, error: &io::Error) -> String {
        format!("cannot start the ACP agent {}: {error}", options.program.display())
    }

    fn stderr_echo(options: &AcpOptions) -> Option<&'static str> {
        options.debug.then_some("acp")
    }

    fn provenance(options: &AcpOptions) -> Provenance {
        let project = options.own.cwd.file_name().map(|name| name.to_string_lossy().into_owned());
        Provenance::new(Self::SOURCE, project.clone()).with_project(project)
    }

    fn begin(options: &AcpOptions, _: &mut IoThreads) -> io::Result<(Acp, AcpWriter)> {
        let cwd = options.own.cwd.to_string_lossy().into_owned();
        let reader = Acp {
            cwd: cwd.clone(),
            allow_tools: options.own.allow_tools.clone(),
            agent_name: None,
            auth_methods: Vec::new(),
            forms_by_call: HashMap::new(),
            links: HashMap::new(),
            transcript: Transcript::default(),
        };
        let writer = AcpWriter {
            cwd,
            session_id: None,
            turn_running: false,
            waiting_turns: options.prompt.iter().cloned().collect(),
            next_id: FIRST_PROMPT_ID,
            last_heard: Instant::now(),
            stuck_after: options.own.stuck_after,
            handshake_given_up: false,
            headless: options.autopilot.headless,
            stuck_shown: false,
        };
        Ok((reader, writer))
    }

    fn line(&mut self, line: &Value, host: &mut Host<Acp>) {
        // Anything the agent says shows it is not stuck.
        host.tell_writer(AcpNote::Heard);
        let message = match acp::parse_message(line.clone()) {
            Ok(message) => message,
            Err(error) => {
                log::debug!("ignored a line from the ACP agent: {error}");
                return;
            }
        };
        match message {
            Message::Response { id, result } => self.response(&id, result, host),
            Message::Request { id, method, params } => match method.as_str() {
                acp::ELICITATION_CREATE => self.elicitation(id, &params, host),
                acp::REQUEST_PERMISSION => self.permission(id, &params, host),
                other => {
                    // The agent waits for an answer to every request: one each, and the person
                    // hears what was turned away.
                    let problem = format!("askpane does not serve `{other}`");
                    host.write(acp::error_response(&id, acp::METHOD_NOT_FOUND, &problem));
                    host.notice(format!(
                        "The ACP agent sent a request askpane does not handle ({other}); askpane \
                         answered it with an error so that the agent does not wait."
                    ));
                }
            },
            Message::Notification { method, params } => match method.as_str() {
                acp::SESSION_UPDATE => self.update(&params, host),
                acp::CANCEL_REQUEST => {
                    // The writer answers it `cancelled` if it is still open (once: never after
                    // its outcome was written).
                    if let Some(id) = acp::cancelled_request_id(&params) {
                        self.withdraw(&request_key(&id), host);
                    }
                }
                // The link's interaction is done (ACP's name, and MCP's it came from): its card
                // goes, and the request is answered "request cancelled" like any withdrawn one.
                acp::ELICITATION_COMPLETE | acp::ELICITATION_COMPLETE_MCP => {
                    let elicitation_id = acp::text(&params, "elicitationId");
                    if let Some(key) = elicitation_id.and_then(|id| self.links.remove(&id)) {
                        self.withdraw(&key, host);
                    }
                }
                other => log::debug!("ignored `{other}` from the ACP agent"),
            },
        }
    }

    fn question_message(envelope: &Envelope, _: &Map<String, Value>) -> Option<Value> {
        match envelope {
            Envelope::Acp { id, params, .. } => Some(elicitation::question_message(id, params)),
            _ => None,
        }
    }
}

/// How askpane names an agent's request until it is answered.
fn request_key(id: &Value) -> String {
    format!("acp:{id}")
}

impl Acp {
    /// The answer to one of askpane's requests: the handshake goes on, a turn ends.
    fn response(&mut self, id: &Value, result: Result<Value, RpcError>, host: &mut Host<Acp>) {
        let id = id.as_u64();
        match (id, result) {
            (Some(INITIALIZE_ID), Ok(result)) => {
                let initialized = acp::parse_initialized(&result);
                let info = result.get("agentInfo");
                self.agent_name = info.and_then(|info| {
                    let name = acp::text(info, "title").or_else(|| acp::text(info, "name"))?;
                    Some(match acp::text(info, "version") {
                        Some(version) => format!("{name} {version}"),
                        None => name,
                    })
                });
                if initialized.protocol_version != acp::PROTOCOL_VERSION {
                    log::warn!(
                        "the ACP agent speaks protocol version {}, askpane {}",
                        initialized.protocol_version,
                        acp::PROTOCOL_VERSION
                    );
                }
                self.auth_methods =
                    initialized.auth_methods.iter().map(|(_, name)| name.clone()).collect();
                host.tell_writer(AcpNote::Initialized { auth_methods: initialized.auth_methods });
            }
            (Some(SESSION_NEW_ID), Ok(result)) => match acp::parse_session_id(&result) {
                Some(session_id) => {
                    host.provenance_mut().session = Some(session_id.clone());
                    host.session(CliMessage::Init(SessionInfo {
                        agent: SessionAgent::Acp,
                        session_id: session_id.clone(),
                        version: self.agent_name.clone(),
                        model: None,
                        cwd: Some(self.cwd.clone()),
                        tools: Vec::new(),
                        capabilities: Vec::new(),
                    }));
                    host.tell_writer(AcpNote::SessionStarted { session_id });
                }
                None => {
                    self.refused("session/new", "its answer has no sessionId", host);
                    host.close();
                }
            },
            (Some(INITIALIZE_ID | SESSION_NEW_ID), Err(error)) => {
                let what = if id == Some(INITIALIZE_ID) { "initialize" } else { "session/new" };
                let mut problem = error.to_string();
                if error.code == acp::AUTH_REQUIRED && !self.auth_methods.is_empty() {
                    problem.push_str(&format!(
                        "; it wants you to sign in ({}): sign in with the agent itself, then \
                         start askpane acp again",
                        self.auth_methods.join(", ")
                    ));
                }
                self.refused(what, &problem, host);
                // Without a session there is nothing to host: end the agent, and the run.
                host.close();
            }
            (_, Ok(result)) => {
                let reason = acp::parse_stop_reason(&result);
                self.turn_ended(transcript::turn_result(&reason), host);
            }
            (_, Err(error)) => {
                host.notice(format!("The ACP agent refused a prompt: {error}"));
                let result = TurnResult {
                    subtype: "error".to_owned(),
                    is_error: true,
                    text: Some(error.to_string()),
                    ..TurnResult::default()
                };
                self.turn_ended(result, host);
            }
        }
    }

    /// Said once: without a window the notice itself goes to stderr.
    fn refused(&self, what: &str, error: &str, host: &Host<Acp>) {
        host.notice(format!("The ACP agent refused askpane's {what}: {error}"));
    }

    fn elicitation(&mut self, id: Value, params: &Value, host: &mut Host<Acp>) {
        let key = request_key(&id);
        let parsed = match elicitation::parse(params) {
            Ok(parsed) => parsed,
            Err(error) => {
                let problem = format!("askpane cannot show this form: {error}");
                host.write(acp::error_response(&id, acp::INVALID_PARAMS, &problem));
                host.notice(format!(
                    "The ACP agent asked for input askpane cannot show ({error})."
                ));
                return;
            }
        };
        match &parsed.asked {
            Asked::Questions(_) => {}
            Asked::Form(_) => {
                let schema = params.get("requestedSchema").cloned().unwrap_or_default();
                self.form(id, key, &parsed, form::card_input(&parsed.message, &schema), host);
                return;
            }
            Asked::Url { url, elicitation_id } => {
                let input = form::link_input(&parsed.message, url);
                if let Some(elicitation_id) = elicitation_id {
                    self.links.insert(elicitation_id.clone(), key.clone());
                }
                self.form(id, key, &parsed, input, host);
                return;
            }
        }
        let incoming =
            match crate::protocol::parse_message(&elicitation::question_message(&id, params)) {
                Ok(incoming) => incoming,
                Err(error) => {
                    host.write(acp::error_response(&id, acp::INVALID_PARAMS, &error.to_string()));
                    return;
                }
            };
        let envelope = incoming.envelope.clone();
        match Request::new(incoming, host.provenance().clone()) {
            Ok((request, outcome)) => {
                if let Some(call) = &parsed.tool_call_id {
                    self.forms_by_call.insert(call.clone(), key.clone());
                }
                host.ask(key, request, outcome, envelope, false);
            }
            Err(invalid) => {
                let reply = envelope.reply(&Outcome::Refused { reason: invalid.to_string() });
                host.refuse(reply, &invalid, "the agent");
            }
        }
    }

    /// A generic form (issue 28): a card of the book, filled in in the window. With nobody to
    /// ask it is cancelled at once (never declined: the person did not decline it).
    fn form(
        &mut self,
        id: Value,
        key: String,
        elicitation: &Elicitation,
        input: Value,
        host: &mut Host<Acp>,
    ) {
        let card = match &elicitation.asked {
            Asked::Url { .. } => AcpCard::Link,
            _ => AcpCard::Form,
        };
        if host.headless() {
            let what = match &elicitation.asked {
                Asked::Url { url, .. } => format!("link {url}"),
                _ => "form".to_owned(),
            };
            log::warn!(
                "cancelled the ACP agent's {what} “{}” (no window to ask in)",
                elicitation.message
            );
            self.links.retain(|_, open| open != &key);
            host.write(acp::response(&id, elicitation::reply(Action::Cancel)));
            return;
        }
        if let Some(call) = &elicitation.tool_call_id {
            self.forms_by_call.insert(call.clone(), key.clone());
        }
        let request = PermissionRequest {
            request_id: key.clone(),
            tool_name: FORM_TOOL.to_owned(),
            input,
            tool_use_id: elicitation.tool_call_id.clone(),
            title: Some(elicitation.message.clone()),
            cwd: Some(self.cwd.clone()),
            ..PermissionRequest::default()
        };
        host.permission(key, request, (id, card));
    }

    fn permission(&mut self, id: Value, params: &Value, host: &mut Host<Acp>) {
        let ask = match acp_permission::parse(params) {
            Ok(ask) => ask,
            Err(error) => {
                // Nobody chose: the agent hears `cancelled`, the person why.
                host.write(acp::response(&id, acp_permission::cancelled()));
                host.notice(format!(
                    "The ACP agent asked a permission askpane cannot show ({error})."
                ));
                return;
            }
        };
        let key = request_key(&id);
        let request = ask.to_request(key.clone(), Some(self.cwd.clone()));
        let decided = match self.allow_tools.iter().any(|tool| tool == &request.tool_name) {
            true => Some(PermissionDecision::AllowOnce),
            false if host.headless() => {
                log::warn!("declined the ACP agent's {} (no window to ask in)", request.tool_name);
                Some(PermissionDecision::Deny { message: NO_WINDOW.to_owned() })
            }
            false => None,
        };
        match decided {
            Some(decision) => host.write(acp::response(&id, ask.reply(&decision))),
            None => host.permission(key, request, (id, AcpCard::Permission(Box::new(ask)))),
        }
    }

    /// The agent no longer waits for `key`: its form or card leaves the window.
    fn withdraw(&mut self, key: &str, host: &mut Host<Acp>) {
        self.forms_by_call.retain(|_, open| open != key);
        self.links.retain(|_, open| open != key);
        host.resolved(key);
    }

    fn update(&mut self, params: &Value, host: &mut Host<Acp>) {
        let shown = self.transcript.update(parse_update(params).1);
        for message in shown.messages {
            host.session(message);
        }
        if let Some(key) = shown.ended_call.and_then(|call| self.forms_by_call.remove(&call)) {
            host.resolved(&key);
        }
    }

    /// The turn ended: what it asked is withdrawn, and the transcript says how it ended.
    fn turn_ended(&mut self, result: TurnResult, host: &mut Host<Acp>) {
        self.forms_by_call.clear();
        self.links.clear();
        host.resolve_all();
        host.tell_writer(AcpNote::TurnEnded);
        for message in self.transcript.turn_ended(result) {
            host.session(message);
        }
    }
}

/// What a card of the session is to the writer: a permission (answered with one of the agent's
/// options) or a generic form (answered with an elicitation action).
pub enum AcpCard {
    Permission(Box<PermissionAsk>),
    Form,
    /// A link to open: Done is `accept` with no content.
    Link,
}

/// A form card's decision as the elicitation's action: the person's content, the person's
/// decline, or (anything else: Stop, a close, nobody to ask) a cancel.
fn form_action(decision: &PermissionDecision) -> Action {
    match decision {
        PermissionDecision::Fill { content } => Action::Accept(content.clone()),
        PermissionDecision::Deny { .. } | PermissionDecision::DenyAlways { .. } => Action::Decline,
        PermissionDecision::AllowOnce
        | PermissionDecision::AllowAlways { .. }
        | PermissionDecision::HandBack => Action::Cancel,
    }
}

/// What the reader tells the writer: the handshake's progress and the turn's.
pub enum AcpNote {
    Initialized {
        auth_methods: Vec<(String, String)>,
    },
    SessionStarted {
        session_id: String,
    },
    TurnEnded,
    /// The agent wrote a line.
    Heard,
}

/// The writer's state: the session, the running turn, and askpane's next request id.
pub struct AcpWriter {
    cwd: String,
    session_id: Option<String>,
    turn_running: bool,
    /// Prompts typed before the session started (the first prompt among them).
    waiting_turns: Vec<String>,
    next_id: u64,
    /// When the agent last wrote, or askpane last gave it something to work on.
    last_heard: Instant,
    stuck_after: Duration,
    /// The handshake was given up on as stuck: not again.
    handshake_given_up: bool,
    /// Nobody sees the session: a stuck turn is ended here (the last resort), not shown.
    headless: bool,
    /// The running turn was shown as stuck and the agent has said nothing since: End turn (the
    /// window's Stop) ends it here too.
    stuck_shown: bool,
}

impl Writing for AcpWriter {
    /// The JSON-RPC id and the envelope the result is written from.
    type Question = Envelope;
    /// The JSON-RPC id the decision goes to, and what the card is.
    type Permission = (Value, AcpCard);
    type Note = AcpNote;

    fn begin(&mut self, out: &mut AgentInput) {
        let params = acp::initialize_params(env!("CARGO_PKG_VERSION"));
        out.write(&acp::request(INITIALIZE_ID, acp::INITIALIZE, params));
    }

    fn note(&mut self, note: AcpNote, out: &mut AgentInput) {
        match note {
            AcpNote::Initialized { auth_methods } => {
                if !auth_methods.is_empty() {
                    let names: Vec<&str> =
                        auth_methods.iter().map(|(_, name)| name.as_str()).collect();
                    log::debug!("the ACP agent offers authentication: {}", names.join(", "));
                }
                let params = acp::new_session_params(&self.cwd);
                out.write(&acp::request(SESSION_NEW_ID, acp::SESSION_NEW, params));
            }
            AcpNote::SessionStarted { session_id } => {
                self.session_id = Some(session_id);
                for text in std::mem::take(&mut self.waiting_turns) {
                    self.user_turn(text, out);
                }
            }
            AcpNote::TurnEnded => {
                self.turn_running = false;
                self.stuck_shown = false;
            }
            AcpNote::Heard => {
                self.last_heard = Instant::now();
                self.stuck_shown = false;
            }
        }
    }

    fn user_turn(&mut self, text: String, out: &mut AgentInput) {
        match &self.session_id {
            Some(session_id) => {
                let id = self.next_id;
                self.next_id += 1;
                let params = acp::prompt_params(session_id, &text);
                out.write(&acp::request(id, acp::SESSION_PROMPT, params));
                self.turn_running = true;
                self.last_heard = Instant::now();
            }
            None => self.waiting_turns.push(text),
        }
    }

    fn interrupt(&mut self, out: &mut AgentInput) {
        if let (Some(session_id), true) = (&self.session_id, self.turn_running) {
            out.write(&acp::notification(acp::SESSION_CANCEL, acp::cancel_params(session_id)));
        }
    }

    fn close(&mut self, out: &mut AgentInput) {
        self.interrupt(out);
    }

    fn answer(&mut self, envelope: &Envelope, outcome: &Outcome, out: &mut AgentInput) {
        match (outcome, envelope.reply(outcome)) {
            // The agent took the form back, and JSON-RPC still wants one answer: the same one
            // as when the reader's withdrawal reaches the writer first (the select picks either).
            (Outcome::Withdrawn, _) => self.withdrawn_question(envelope, out),
            (_, Some(reply)) => out.write(&reply),
            (_, None) => {}
        }
        self.last_heard = Instant::now();
    }

    fn decide(
        &mut self,
        (id, card): &(Value, AcpCard),
        decision: &PermissionDecision,
        out: &mut AgentInput,
    ) {
        let result = match card {
            AcpCard::Permission(ask) => ask.reply(decision),
            AcpCard::Form => elicitation::reply(form_action(decision)),
            AcpCard::Link => match form_action(decision) {
                Action::Accept(_) => serde_json::json!({"action": "accept"}),
                other => elicitation::reply(other),
            },
        };
        out.write(&acp::response(id, result));
        self.last_heard = Instant::now();
    }

    /// JSON-RPC's answer to a request taken back while it waited: "request cancelled".
    fn withdrawn_question(&mut self, envelope: &Envelope, out: &mut AgentInput) {
        if let Envelope::Acp { id, .. } = envelope {
            out.write(&acp::error_response(id, REQUEST_CANCELLED, "cancelled"));
        }
    }

    /// ACP's own answer to a permission nobody chose: `cancelled`; to a form the agent took
    /// back, JSON-RPC's "request cancelled", as for a question form.
    fn withdrawn_permission(&mut self, (id, card): &(Value, AcpCard), out: &mut AgentInput) {
        match card {
            AcpCard::Permission(_) => out.write(&acp::response(id, acp_permission::cancelled())),
            AcpCard::Form | AcpCard::Link => {
                out.write(&acp::error_response(id, REQUEST_CANCELLED, "cancelled"));
            }
        }
    }

    fn stuck_at(&self) -> Option<Instant> {
        // The handshake counts as a turn: an agent that never answers it is stuck too. A turn
        // shown as stuck waits for the person (or the agent) from then on.
        let waiting = self.turn_running || (self.session_id.is_none() && !self.handshake_given_up);
        (waiting && !self.stuck_shown).then(|| self.last_heard + self.stuck_after)
    }

    /// End turn on a turn shown as stuck: `session/cancel`, and the turn ends here whatever
    /// the agent does. Any other Stop only asks the agent (it ends the turn `cancelled`).
    fn interrupted(&mut self, out: &mut AgentInput) -> Option<SessionEvent> {
        let stuck = self.stuck_shown && self.turn_running;
        self.interrupt(out);
        if !stuck {
            return None;
        }
        let seconds = self.last_heard.elapsed().as_secs();
        self.turn_running = false;
        self.stuck_shown = false;
        let text = format!(
            "The agent sent nothing for {seconds} s: you ended the turn (askpane sent it \
             session/cancel)."
        );
        log::info!("{text}");
        Some(SessionEvent::Message(stuck_result(text)))
    }

    /// A stuck turn someone sees is shown as stuck (the person ends it with End turn). With
    /// nobody to see it, askpane asks the agent to cancel the turn and ends it on its side
    /// whatever the agent does: a late `stopReason` only ends it again. A handshake that never
    /// finished is given up once (nothing runs that could be cancelled).
    fn stuck(&mut self, out: &mut AgentInput) -> Option<SessionEvent> {
        let seconds = self.stuck_after.as_secs();
        if self.session_id.is_some() && !self.headless {
            self.stuck_shown = true;
            log::warn!("the ACP agent has sent nothing for {seconds} s: the turn may be stuck");
            return Some(SessionEvent::Stuck { silent_secs: seconds });
        }
        let text = match self.session_id {
            Some(_) => {
                self.interrupt(out);
                format!(
                    "The agent sent nothing for {seconds} s with nothing asked of you: askpane \
                     sent it session/cancel and ended the turn."
                )
            }
            None => {
                self.handshake_given_up = true;
                format!("The agent did not start a session within {seconds} s.")
            }
        };
        self.turn_running = false;
        log::warn!("{text}");
        Some(SessionEvent::Message(stuck_result(text)))
    }
}

/// How a stuck turn ended, for the transcript (and the exit code of a run without a window).
fn stuck_result(text: String) -> CliMessage {
    CliMessage::Result(TurnResult {
        subtype: "stuck".to_owned(),
        is_error: true,
        text: Some(text),
        ..TurnResult::default()
    })
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::process::{Command, Stdio};

    use serde_json::json;

    use super::*;

    /// What `write` makes the writer send to an agent: the lines a `cat` standing in for it
    /// echoes back.
    /// A writer before its session: nothing sent yet, working in `/w`.
    fn fresh_writer() -> AcpWriter {
        AcpWriter {
            cwd: "/w".to_owned(),
            session_id: None,
            turn_running: false,
            waiting_turns: Vec::new(),
            next_id: FIRST_PROMPT_ID,
            last_heard: Instant::now(),
            stuck_after: Duration::from_secs(300),
            handshake_given_up: false,
            headless: false,
            stuck_shown: false,
        }
    }

    fn written(write: impl FnOnce(&mut AcpWriter, &mut AgentInput)) -> Vec<Value> {
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cat, as the agent");
        let mut out = AgentInput::to(cat.stdin.take().expect("its stdin"));
        let mut writer = fresh_writer();
        write(&mut writer, &mut out);
        out.flush();
        drop(out);
        let mut text = String::new();
        cat.stdout.take().expect("its stdout").read_to_string(&mut text).expect("read");
        let _ = cat.wait();
        text.lines().map(|line| serde_json::from_str(line).expect("JSON")).collect()
    }

    /// The agent took its form back: whether the writer hears it as the book's `Withdrawn`
    /// outcome or as the reader's `Forget` (whichever a select picks first), JSON-RPC's one
    /// answer, "request cancelled", goes back: never none, which leaves the agent waiting.
    #[test]
    fn a_form_the_agent_took_back_is_answered_request_cancelled_by_either_path() {
        let params = json!({"mode": "form", "sessionId": "s", "message": "Which database?",
            "requestedSchema": {"type": "object", "properties": {"question_0": {"type": "string",
            "oneOf": [{"const": "SQLite", "title": "SQLite"}]}}}});
        let envelope =
            Envelope::Acp { call: "toolu_1".to_owned(), id: json!("q1"), params: Box::new(params) };
        let by_outcome = written(|writer, out| writer.answer(&envelope, &Outcome::Withdrawn, out));
        let by_forget = written(|writer, out| writer.withdrawn_question(&envelope, out));
        for lines in [by_outcome, by_forget] {
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert_eq!(lines[0]["id"], "q1");
            assert_eq!(lines[0]["error"]["code"], REQUEST_CANCELLED);
        }
    }

    /// The agent took a form card back while the window was dropping it too: the reader's
    /// `Forget` and the window's decision (a hand-back: nobody filled it in) both wait for the
    /// writer, whose select picks among ready operations at random. The agent must hear JSON-RPC's
    /// "request cancelled" every time, never the `cancel` a person's hand-back writes.
    #[test]
    fn a_form_card_taken_back_as_the_window_drops_it_is_answered_request_cancelled_every_time() {
        for attempt in 0..64 {
            let mut cat = Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("cat, as the agent");
            let stdin = cat.stdin.take().expect("its stdin");
            let writer = fresh_writer();
            let (to_writer, inbox) = crossbeam_channel::unbounded();
            let (_commands, commands) = crossbeam_channel::unbounded();
            let (to_ui, _ui) = crate::transport::memory();
            let (decide, decision) = crossbeam_channel::bounded(1);
            let key = request_key(&json!("f1"));
            let permission = (json!("f1"), AcpCard::Form);
            to_writer
                .send(super::super::ToAgent::Permission { key: key.clone(), permission, decision })
                .expect("send");
            // The reader's Forget goes first (Host::resolved), the window's decision after it.
            to_writer.send(super::super::ToAgent::Forget { key }).expect("send");
            decide.send(PermissionDecision::HandBack).expect("send");
            to_writer.send(super::super::ToAgent::Close).expect("send");
            super::super::writer::run(writer, stdin, &inbox, &commands, &to_ui).expect("run");
            let mut text = String::new();
            cat.stdout.take().expect("its stdout").read_to_string(&mut text).expect("read");
            let _ = cat.wait();
            let answers: Vec<Value> = text
                .lines()
                .map(|line| serde_json::from_str::<Value>(line).expect("JSON"))
                .filter(|line| line["id"] == "f1")
                .collect();
            assert_eq!(answers.len(), 1, "attempt {attempt}: {answers:?}");
            assert_eq!(
                answers[0]["error"]["code"], REQUEST_CANCELLED,
                "attempt {attempt}: {answers:?}"
            );
        }
    }
}
