//! What `askpane claude` and `askpane codex` share, written once: their common flags
//! ([`SessionArgs`]), and [`run`]: the agent started as a [`HostedSession`], then its session
//! shown in the browser, in the inbox, in a window of its own, or nowhere (the host without a
//! window), and the run's end. Each mode ([`HostMode`]) keeps only its own flags and how its
//! exit code follows from how the session ended.

use std::path::PathBuf;
use std::process::ExitStatus;

use anyhow::Context as _;
use clap::Args;
use crossbeam_channel::{Receiver, Sender};

use askpane::app::{App, AppOptions};
use askpane::book::approval::EndedApproval;
use askpane::book::journal::Journal;
use askpane::protocol::inbox::{Policy as Flags, Preset};
use askpane::protocol::permission::ApprovalOutcome;
use askpane::protocol::stream::{self, AgentExit, CliMessage, PermissionDecision, TurnResult};
use askpane::protocol::{Outcome, exit};
use askpane::store::DraftSink;
use askpane::transport::agents::relay::{Reconnect, Relay};
use askpane::transport::agents::{self, Autopilot, HostOptions, HostedAgent, HostedSession};
use askpane::transport::inbox::InboxConnection;
use askpane::transport::pipe;
use askpane::transport::serve::bundle;
use askpane::transport::serve::{self, BridgeOptions};
use askpane::transport::signals::SignalWatch;
use askpane::transport::{
    ApprovalEvent, Control, Inbound, IoThreads, PermissionAsk, Request, RequestEvent,
    SessionCommand, SessionEvent, SessionInbound, ui_channel,
};

use super::args::{AnsweringArgs, InboxUse, StoreArgs, UiArgs};
use super::show::{missing_display, start_bridge_carrying, tell_unavailable, watch_signals};
use crate::window::{Arrival, WindowSlot, show_window};

/// What differs between `askpane claude` and `askpane codex` on the command line.
pub(super) trait HostMode {
    type Agent: HostedAgent;
    /// The agent's program, and the arguments passed on to it (after `--`).
    fn program(&self) -> (PathBuf, Vec<String>);
    /// What only this agent is run with.
    fn own(&self) -> anyhow::Result<<Self::Agent as HostedAgent>::Own>;
    /// The agent as stderr names it ("Codex", "the ACP agent").
    const AGENT: &'static str;
    /// Says on stderr how a session without a window ended; the exit code that follows
    /// (`None`: the agent's own). By default, a run is its turns: one that ended well is 0,
    /// any other end 1.
    fn headless_end(end: HeadlessEnd) -> Option<u8> {
        Some(match end {
            HeadlessEnd::TurnEnded(result) => {
                if let Some(text) = &result.text {
                    eprintln!("askpane: the turn ended ({}): {text}", result.subtype);
                }
                match result.subtype.as_str() {
                    "success" => exit::OK,
                    _ => exit::DECLINED,
                }
            }
            HeadlessEnd::AgentEnded { status, stderr_tail } => {
                eprintln!("askpane: {} ended before the turn did ({status})", Self::AGENT);
                tell_stderr_tail(&stderr_tail);
                exit::DECLINED
            }
            HeadlessEnd::Stopped => exit::STOPPED,
            HeadlessEnd::Gone => exit::DECLINED,
        })
    }
    /// The run's exit code, once the session `shown` so has ended and the agent with `status`
    /// (a signal to askpane is handled before: exit 4).
    fn exit_code(shown: Shown, status: ExitStatus) -> u8 {
        match shown {
            Shown::Headless(code) => code.unwrap_or(exit::DECLINED),
            Shown::Browser => exit::OK,
            Shown::Window(false) => exit::NO_HUMAN,
            // The session ended as its window or the inbox ended it: the agent's own exit
            // says the rest.
            Shown::Window(true) | Shown::Inbox if !status.success() => agent_code(status),
            Shown::Window(true) | Shown::Inbox => exit::OK,
        }
    }
}

/// Where the session was shown, and how that went.
pub(super) enum Shown {
    /// No window, browser or inbox: the exit code [`HostMode::headless_end`] chose.
    Headless(Option<u8>),
    Browser,
    Inbox,
    /// A window of its own; `false` when none could be shown.
    Window(bool),
}

/// How a session without a window ended.
pub(super) enum HeadlessEnd {
    /// The prompt's turn ended: there is no one to type another.
    TurnEnded(TurnResult),
    /// The agent ended before its turn did.
    AgentEnded { status: AgentExit, stderr_tail: Vec<String> },
    /// askpane is being stopped (a signal).
    Stopped,
    /// The session's channel closed.
    Gone,
}

/// `askpane claude` / `askpane codex`: the agent as a child, askpane as its host, until the
/// window closes, the inbox ends the session, or (without either) the prompt's turn ends.
/// `shared`: the flags both take; `mode`: the agent's own.
pub(super) fn run<M: HostMode>(shared: &SessionArgs, mode: &M) -> anyhow::Result<u8> {
    let Showing { in_browser: browser, headless, inbox } = shared.showing()?;
    let autopilot = shared.autopilot(headless)?;
    let flags = autopilot.flags.clone();
    let (program, extra_args) = mode.program();
    let options = HostOptions {
        program,
        extra_args,
        prompt: shared.prompt.clone(),
        debug: shared.debug,
        autopilot,
        own: mode.own()?,
    };
    // A signal ends the session the way closing the window does: open questions hear why, and
    // the agent's process group is stopped (issue 9).
    let signals = watch_signals();
    let window = WindowSlot::default();
    let (to_ui, from_session) = ui_channel(window.waker());
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    let mut threads = IoThreads::default();
    let session = HostedSession::<M::Agent>::start(&options, to_ui, &mut threads)?;
    let shown = if headless {
        let mut history = HeadlessHistory::new(&shared.store);
        let end = host_without_window::<M::Agent>(&from_session, &mut history);
        Shown::Headless(M::headless_end(end))
    } else if browser {
        let (commands, prompt) = (session.commands(), shared.prompt.clone());
        in_browser(&shared.shown, from_session, commands, prompt, &mut threads)?;
        Shown::Browser
    } else if let Some(connection) = inbox {
        through_the_inbox(connection, shared, flags, &session, &from_session);
        Shown::Inbox
    } else {
        let (commands, prompt) = (session.commands(), shared.prompt.clone());
        let (shown, store) = (&shared.shown, &shared.store);
        Shown::Window(in_window(window, shown, store, from_session, commands, prompt))
    };
    drop(route);
    let status = session.shut_down(agents::GRACE)?;
    let words = <M::Agent as HostedAgent>::WORDS;
    threads.join().with_context(|| format!("ending the {words} session"))?;
    // Asked only now: a signal while the agent was being stopped (the turn over, the agent slow
    // to exit) stopped askpane too, and the status of an agent askpane had to end says nothing.
    if signals.as_ref().and_then(SignalWatch::caught).is_some() {
        return Ok(exit::STOPPED);
    }
    Ok(M::exit_code(shown, status))
}

/// The agent's own exit code (1 when it has none: a signal ended it).
pub(super) fn agent_code(status: ExitStatus) -> u8 {
    status.code().map_or(1, |code| u8::try_from(code).unwrap_or(1))
}

/// Says the agent's last stderr lines, indented, under a line saying how it ended.
pub(super) fn tell_stderr_tail(stderr_tail: &[String]) {
    for line in stderr_tail {
        eprintln!("  {line}");
    }
}

/// Issues 10 and 13: the session's questions, permissions and transcript go to the inbox until
/// the session ends.
fn through_the_inbox<A: HostedAgent>(
    inbox: InboxConnection,
    shared: &SessionArgs,
    flags: Flags,
    session: &HostedSession<A>,
    from_session: &Receiver<Inbound>,
) {
    let relay = Relay {
        flags,
        prompt: shared.prompt.clone(),
        project: agents::project_name(),
        lines: session.lines(),
        commands: session.commands(),
    };
    let start = || super::client::connect(&shared.shown, &shared.store);
    let find = super::client::connect_running;
    let reconnect = Reconnect { start: &start, find: &find };
    agents::relay::relay(relay, inbox, from_session, &reconnect);
}

/// The host without a window: questions are answered by their policy (`--answers --submit`,
/// `--decline`, else "no human available") and recorded, permissions not pre-allowed are
/// declined, notices go to stderr, until the prompt's turn ends (or the agent does, or a signal
/// comes).
fn host_without_window<A: HostedAgent>(
    inbox: &Receiver<Inbound>,
    history: &mut HeadlessHistory<'_>,
) -> HeadlessEnd {
    let nobody = format!("askpane runs {} without a window", A::WORDS);
    for message in inbox {
        match message {
            Inbound::Request(RequestEvent::Ask(request)) => history.decide(*request, &nobody),
            // The agent's reader declines them itself when headless: this is the backstop.
            Inbound::Approval(ApprovalEvent::Permission(permission)) => {
                eprintln!(
                    "askpane: declined {} (no window to ask in)",
                    stream::tool_summary(&permission.request.tool_name, &permission.request.input)
                );
                let PermissionAsk { id, request, provenance, reply } = *permission;
                let decision = PermissionDecision::Deny { message: nobody.clone() };
                reply.send(decision.clone());
                let outcome = ApprovalOutcome::NoHuman;
                history.approval_ended(&EndedApproval {
                    id,
                    request,
                    provenance,
                    outcome,
                    decision,
                    answered_by: None,
                });
            }
            Inbound::Control(Control::Notice(notice)) => eprintln!("askpane: {notice}"),
            Inbound::Session(SessionInbound::Event(event)) => match *event {
                SessionEvent::Message(CliMessage::Result(result)) => {
                    return HeadlessEnd::TurnEnded(result);
                }
                SessionEvent::Ended { status, stderr_tail } => {
                    return HeadlessEnd::AgentEnded { status, stderr_tail };
                }
                // Headless, a stuck turn is ended by the host itself (its last resort).
                SessionEvent::Message(_) | SessionEvent::Stuck { .. } => {}
            },
            // askpane is being stopped: nothing is open here (everything is answered at once).
            Inbound::Control(Control::Shutdown { .. }) => return HeadlessEnd::Stopped,
            // Nothing else is shown here: no hosted sessions, no page, no window to reveal.
            Inbound::Approval(
                ApprovalEvent::WithdrawPermission { .. }
                | ApprovalEvent::TimedOutPermission { .. }
                | ApprovalEvent::Unshown(_)
                | ApprovalEvent::FrontEnd(_),
            )
            | Inbound::Request(_)
            | Inbound::Session(_)
            | Inbound::Page(_)
            | Inbound::Control(Control::Reveal { .. }) => {}
        }
    }
    HeadlessEnd::Gone
}

/// The flags `askpane claude` and `askpane codex` share, flattened into each.
#[derive(Args, Debug)]
pub(super) struct SessionArgs {
    /// The first prompt; without it the window asks for one.
    #[arg(short = 'p', long, value_name = "PROMPT")]
    pub(super) prompt: Option<String>,
    /// Log askpane's debug lines, such as what it ignores (and, for Codex, Codex's own stderr),
    /// to stderr.
    #[arg(long, env = "ASKPANE_DEBUG", value_parser = clap::builder::FalseyValueParser::new())]
    pub(super) debug: bool,
    #[command(flatten)]
    pub(super) answering: AnsweringArgs,
    #[command(flatten)]
    pub(super) shown: UiArgs,
    #[command(flatten)]
    pub(super) store: StoreArgs,
    #[command(flatten)]
    pub(super) inbox: InboxUse,
}

impl SessionArgs {
    /// Where the session is shown ([`showing`]).
    pub(super) fn showing(&self) -> anyhow::Result<Showing> {
        let no_inbox = self.inbox.no_inbox;
        showing(&self.shown, &self.store, &self.answering, no_inbox, self.prompt.is_some())
    }

    /// How questions are answered besides the window: the answering flags, `--answers` read
    /// (a file that cannot be read stops the run here, before the agent starts).
    pub(super) fn autopilot(&self, headless: bool) -> anyhow::Result<Autopilot> {
        let answering = &self.answering;
        let answers = match &answering.answers {
            Some(path) => Some(Preset {
                file: path.display().to_string(),
                json: Some(pipe::read_json(path).context("--answers")?),
                unreadable: None,
            }),
            None => None,
        };
        let flags = Flags {
            answers,
            submit: answering.submit,
            decline: answering.decline.clone(),
            timeout_secs: answering.timeout.map(|timeout| timeout.as_secs()),
            ..Flags::default()
        };
        Ok(Autopilot { flags, headless })
    }
}

/// Where the session is shown, decided before the agent starts.
pub(super) struct Showing {
    /// `--ui web`: a browser page of this run's own.
    pub(super) in_browser: bool,
    /// No window, browser or inbox: questions and tools are decided by the flags.
    pub(super) headless: bool,
    /// Issue 10: the running inbox (or one started now), even when this terminal has no display.
    pub(super) inbox: Option<InboxConnection>,
}

/// Decides where the session is shown. Without a window there is nowhere to type a first
/// prompt, so then one must be given (`has_prompt`).
fn showing(
    shown: &UiArgs,
    store: &StoreArgs,
    answering: &AnsweringArgs,
    no_inbox: bool,
    has_prompt: bool,
) -> anyhow::Result<Showing> {
    let in_browser = shown.web() && !answering.non_interactive;
    let inbox = match in_browser || answering.non_interactive || no_inbox {
        true => None,
        false => super::client::connect(shown, store)
            .map_err(|why| {
                eprintln!("askpane: no inbox runs and none can be started ({why}); hosting here");
            })
            .ok(),
    };
    let headless = !in_browser
        && inbox.is_none()
        && (answering.non_interactive || missing_display().is_some());
    if (headless || in_browser) && !has_prompt {
        anyhow::bail!("without a window there is nowhere to type a prompt: give one with -p");
    }
    Ok(Showing { in_browser, headless, inbox })
}

/// The session in the browser: the transcript, the questions and the permission cards, and
/// further prompts. Returns once the agent has ended (or the last page has gone, the turn over).
pub(super) fn in_browser(
    shown: &UiArgs,
    from_session: Receiver<Inbound>,
    commands: Sender<SessionCommand>,
    prompt: Option<String>,
    threads: &mut IoThreads,
) -> anyhow::Result<()> {
    let bridge_options = BridgeOptions {
        bind: shown.bind_address(),
        assets: bundle::ASSETS,
        stop_when_done: true,
        stop_after_turn: true,
        page_gone_grace: serve::PAGE_GONE_GRACE,
        journal: None,
    };
    let bridge =
        start_bridge_carrying(&bridge_options, from_session, Some((commands, prompt)), threads)?;
    bridge.wait();
    bridge.stop();
    Ok(())
}

/// The session in a window of this process's own, until it closes. `false` when no window
/// could be shown (what waits is then told no human is there).
pub(super) fn in_window(
    window: WindowSlot,
    shown: &UiArgs,
    store: &StoreArgs,
    from_session: Receiver<Inbound>,
    commands: Sender<SessionCommand>,
    prompt: Option<String>,
) -> bool {
    let unshown = from_session.clone();
    // Issue 11: the window saves drafts and records outcomes in the store, if it opens.
    let sink = store.open_or_warn().and_then(|store| {
        DraftSink::start(store)
            .map_err(|error| eprintln!("askpane: warning: drafts are not saved ({error})"))
            .ok()
    });
    let finish = move |app: App| {
        let app = app.with_session(commands, prompt.as_deref());
        match sink {
            Some(sink) => app.with_store(sink),
            None => app,
        }
    };
    match show_window(
        window,
        shown.theme.into(),
        Arrival::TakesKeyboard,
        (from_session, AppOptions::default()),
        finish,
    ) {
        Ok(()) => true,
        Err(problem) => {
            tell_unavailable(&unshown, &problem);
            eprintln!(
                "askpane: no display to open a window on ({problem}); answer in a browser \
                 instead (--ui web)"
            );
            false
        }
    }
}

/// Where a host without a window records what its flags decided (issue 11: every outcome is in
/// history, also those no one saw): the store, opened when the first question is decided.
pub(super) struct HeadlessHistory<'a> {
    store: &'a StoreArgs,
    /// `None` until the first record; then the journal, or `None` when the store cannot open.
    sink: Option<Option<DraftSink>>,
}

impl<'a> HeadlessHistory<'a> {
    pub(super) fn new(store: &'a StoreArgs) -> Self {
        HeadlessHistory { store, sink: None }
    }

    /// Decides `request` by its policy (without a window, nobody else answers: `nobody` says
    /// why), records it, and sends the outcome to the agent.
    pub(super) fn decide(&mut self, request: Request, nobody: &str) {
        let Request { core, policy, reply } = request;
        let outcome = policy
            .decide(&core.ask)
            .unwrap_or_else(|| Outcome::Unavailable { reason: nobody.to_owned() });
        if let Some(sink) = self.sink() {
            Journal::settled(sink, &core, &outcome);
        }
        reply.send(outcome);
    }

    /// Issue 26: records a tool call declined with nobody to ask.
    pub(super) fn approval_ended(&mut self, ended: &EndedApproval) {
        if let Some(sink) = self.sink() {
            Journal::approval_ended(sink, ended);
        }
    }

    /// The journal, opened at the first record.
    fn sink(&mut self) -> Option<&DraftSink> {
        let store = self.store;
        let sink = self.sink.get_or_insert_with(|| {
            store.open_or_warn().and_then(|store| {
                DraftSink::start(store)
                    .map_err(|error| eprintln!("askpane: warning: no history this time ({error})"))
                    .ok()
            })
        });
        sink.as_ref()
    }
}
