//! What `askpane claude` and `askpane codex` share: their common flags ([`SessionArgs`]), and
//! once their agent runs, showing its session in the browser or in a window of their own,
//! reaching the inbox, and `--answers` as the inbox takes it. Each mode keeps only what differs
//! (how the agent starts and how it is relayed).

use anyhow::Context as _;
use clap::Args;
use crossbeam_channel::{Receiver, Sender};

use askpane::app::{App, AppOptions};
use askpane::book::journal::Journal;
use askpane::protocol::Outcome;
use askpane::protocol::inbox::{Policy as Flags, Preset};
use askpane::store::DraftSink;
use askpane::transport::agents::claude::Autopilot;
use askpane::transport::pipe;
use askpane::transport::serve::bundle;
use askpane::transport::serve::{self, BridgeOptions};
use askpane::transport::{Inbound, IoThreads, Request, SessionCommand};

use super::args::{AnsweringArgs, InboxUse, StoreArgs, UiArgs};
use super::show::{missing_display, start_bridge_carrying, tell_unavailable};
use crate::window::{Arrival, WindowSlot, show_window};

/// The flags `askpane claude` and `askpane codex` share, flattened into each.
#[derive(Args, Debug)]
pub(super) struct SessionArgs {
    /// The first prompt; without it the window asks for one.
    #[arg(short = 'p', long, value_name = "PROMPT")]
    pub(super) prompt: Option<String>,
    /// Log what askpane ignores (and, for Codex, Codex's own stderr) to stderr.
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

    /// What the inbox relay needs of these flags (`flags`: the autopilot's, `--answers` read),
    /// with the agent's own parts.
    #[cfg(any(unix, windows))]
    pub(super) fn relay(
        &self,
        flags: Flags,
        project: Option<String>,
        agent: super::hosted::Agent,
        commands: Sender<SessionCommand>,
    ) -> super::hosted::Relay {
        super::hosted::Relay {
            shown: self.shown.clone(),
            store: self.store.clone(),
            flags,
            prompt: self.prompt.clone(),
            project,
            agent,
            commands,
        }
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
        false => connect_inbox(shown, store)
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
        let store = self.store;
        let sink = self.sink.get_or_insert_with(|| {
            store.open_or_warn().and_then(|store| {
                DraftSink::start(store)
                    .map_err(|error| eprintln!("askpane: warning: no history this time ({error})"))
                    .ok()
            })
        });
        if let Some(sink) = sink {
            Journal::settled(sink, &core, &outcome);
        }
        reply.send(outcome);
    }
}

/// A connection to the inbox (issue 10), where the platform has one.
#[cfg(any(unix, windows))]
pub(super) type InboxConnection = super::hosted::Inbox;
#[cfg(not(any(unix, windows)))]
pub(super) enum InboxConnection {}

/// The running inbox, or one started now, or why there is none.
#[cfg(any(unix, windows))]
pub(super) fn connect_inbox(shown: &UiArgs, store: &StoreArgs) -> Result<InboxConnection, String> {
    super::hosted::connect(shown, store)
}

#[cfg(not(any(unix, windows)))]
pub(super) fn connect_inbox(
    _shown: &UiArgs,
    _store: &StoreArgs,
) -> Result<InboxConnection, String> {
    Err("this platform has no inbox yet".to_owned())
}
