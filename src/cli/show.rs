//! Showing requests: the native window ([`crate::window`]) or the browser bridge, the reply writer
//! beside them, and the signal watch while questions are open. Every mode that shows questions
//! goes through here.

use std::io;

use anyhow::Context as _;
use crossbeam_channel::{Receiver, Sender};

use askpane::app::{App, AppOptions};
use askpane::protocol::{Envelope, Outcome, ReplyFormat};
use askpane::store::DraftSink;
use askpane::transport::replies::{AwaitedReply, write_replies};
use askpane::transport::serve::bundle;
use askpane::transport::serve::{self, Bridge, BridgeOptions};
use askpane::transport::signals::{SignalWatch, StopSignal};
use askpane::transport::{Inbound, IoThreads, Request, RequestEvent, SessionCommand, ui_channel};

use crate::window::{Arrival, WindowSlot, show_window};

use super::args::UiArgs;
use super::exit;

/// Set once the reply writer wrote every reply: a window lost in a way Rust cannot unwind from
/// (a second panic in winit's destructors aborts) may then still exit with its own code.
pub(super) static REPLIES_WRITTEN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// What happened to a run of the window.
pub(super) struct Served {
    /// The outcomes, in the order they were written.
    pub(super) outcomes: Vec<Outcome>,
    /// Why no window could be shown, if it could not.
    pub(super) problem: Option<String>,
    /// The browser bridge could not start (a taken `--bind`, no web app): a usage error.
    pub(super) bridge_failed: bool,
    /// The signal that stopped askpane while the questions were shown, if one did.
    pub(super) stopped_by: Option<StopSignal>,
}

/// Shows `requests` in the window or the browser (an empty list shows nothing) while a writer
/// thread writes each reply on stdout as it is decided. Returns once every reply is written.
/// The native window saves drafts and records outcomes in `store` when one is given.
pub(super) fn show_requests(
    requests: Vec<Request>,
    awaited: Vec<AwaitedReply>,
    options: AppOptions,
    shown: &UiArgs,
    store: Option<DraftSink>,
) -> anyhow::Result<Served> {
    let (written_sender, written) = crossbeam_channel::bounded(1);
    let mut threads = IoThreads::default();
    let shown_requests = !requests.is_empty();
    // While questions are shown, a signal ends them with a reply that says so (issue 9).
    let signals = match shown_requests {
        true => watch_signals(),
        false => None,
    };
    let window = WindowSlot::default();
    let (to_ui, inbox) = ui_channel(window.waker());
    for request in requests {
        to_ui.send(Inbound::Request(RequestEvent::Ask(Box::new(request))));
    }
    // The signal route keeps the channel open until every reply is written; then the window
    // (or the bridge) sees its adapters are done and closes. One that stays open after its
    // answers (the demo) keeps the route for as long as it shows: a signal still ends it.
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    let (route, route_while_shown) = match options.close_when_done {
        true => (route, None),
        false => (None, route),
    };
    drop(to_ui);
    #[allow(
        clippy::disallowed_methods,
        reason = "the reply writer: the one thread that writes `ask`/`hook` replies to stdout"
    )]
    threads.spawn("reply-writer", move || {
        let outcomes = write_replies(awaited, &mut io::stdout().lock());
        REPLIES_WRITTEN.store(outcomes.is_ok(), std::sync::atomic::Ordering::SeqCst);
        drop(route);
        let _ = written_sender.send(outcomes?);
        Ok(())
    })?;
    let mut problem = None;
    let mut bridge_failed = false;
    if shown_requests {
        if shown.web() {
            let bridge_options = BridgeOptions {
                bind: shown.bind_address(),
                assets: bundle::ASSETS,
                stop_when_done: options.close_when_done,
                stop_after_turn: false,
                page_gone_grace: serve::PAGE_GONE_GRACE,
                journal: None,
            };
            let unshown = inbox.clone();
            match start_bridge(&bridge_options, inbox, &mut threads) {
                Ok(bridge) => {
                    bridge.wait();
                    bridge.stop();
                }
                Err(error) => {
                    // No page can show them: the agent hears "no human available", never a
                    // window that was not there.
                    let error = format!("{error:#}");
                    tell_unavailable(&unshown, &error);
                    problem = Some(error);
                    bridge_failed = true;
                }
            }
        } else {
            let unshown = inbox.clone();
            let finish = move |app: App| match store {
                Some(sink) => app.with_store(sink),
                None => app,
            };
            // A demo is what the user asked to see; a question arrives on its own and must
            // not take the keyboard from where the user is typing.
            let arrival = match options.close_when_done {
                true => Arrival::LeavesKeyboard,
                false => Arrival::TakesKeyboard,
            };
            if let Err(error) =
                show_window(window, shown.theme.into(), arrival, (inbox, options), finish)
            {
                // No window ever opened: what is still queued was never seen by anyone.
                tell_unavailable(&unshown, &error);
                problem = Some(error);
            }
        }
    }
    drop(route_while_shown);
    // The app is gone, so every request has its outcome and the writer finishes.
    threads.join().context("writing the reply")?;
    let outcomes = written.try_recv().unwrap_or_default();
    let stopped_by = signals.and_then(|watch| watch.caught());
    Ok(Served { outcomes, problem, bridge_failed, stopped_by })
}

/// Starts the browser bridge, says where it is, and opens a browser when there is a display.
pub(super) fn start_bridge(
    options: &BridgeOptions,
    inbox: Receiver<Inbound>,
    threads: &mut IoThreads,
) -> anyhow::Result<Bridge> {
    start_bridge_carrying(options, inbox, None, threads)
}

/// As [`start_bridge`]; with `session` (its commands and first prompt) the pages also show the
/// agent session and take its prompts (`askpane claude --ui web`).
pub(super) fn start_bridge_carrying(
    options: &BridgeOptions,
    inbox: Receiver<Inbound>,
    session: Option<(Sender<SessionCommand>, Option<String>)>,
    threads: &mut IoThreads,
) -> anyhow::Result<Bridge> {
    start_bridge_then(options, inbox, session, threads, |_| {})
}

/// As [`start_bridge_carrying`]; `before_links` runs once the bridge serves, before its links
/// are printed (issue 11: the inbox readies `--new-link` there, so whoever saw a link can ask).
pub(super) fn start_bridge_then(
    options: &BridgeOptions,
    inbox: Receiver<Inbound>,
    session: Option<(Sender<SessionCommand>, Option<String>)>,
    threads: &mut IoThreads,
    before_links: impl FnOnce(&Bridge),
) -> anyhow::Result<Bridge> {
    // Checked before the inbox is handed over, so a failure leaves it to the caller.
    anyhow::ensure!(
        bundle::available(),
        "this askpane was built without its web app: run scripts/build-web, then build askpane \
         again"
    );
    let exposed = serve::is_exposed(&options.bind);
    let bridge = match session {
        Some((commands, prompt)) => {
            Bridge::start_with_session(options, inbox, commands, prompt, threads)
        }
        None => Bridge::start(options, inbox, threads),
    }
    .context("starting the browser bridge")?;
    if exposed {
        // The address it really listens on: a port of 0 was the system's to choose.
        eprintln!(
            "askpane: warning: the page listens on {}, which other machines can reach; anyone \
             with the link (it holds the token) can answer",
            bridge.address()
        );
    }
    before_links(&bridge);
    let url = bridge.url();
    eprintln!("askpane: answer in your browser: {url}");
    // `--bind 0.0.0.0`: a link per address of this machine, for a phone or another computer.
    for other in bridge.urls().iter().skip(1) {
        eprintln!("askpane: or, from another device: {other}");
    }
    // A phone scans the first link another device can use (`--lan`, `--bind 0.0.0.0`).
    if let Some(link) = bridge.urls().get(1)
        && let Some(code) = pairing_code(link)
    {
        eprintln!("askpane: or scan this with your phone's camera:\n{code}");
    }
    if missing_display().is_none() {
        // Best effort, and not waited for: xdg-open may stay until the browser it started
        // closes. The URL above is the way in when no browser opens.
        let _ = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    Ok(bridge)
}

/// Starts catching termination signals (issue 9). Without it (no thread could be started) the
/// run goes on as before: a signal then ends askpane at once.
pub(super) fn watch_signals() -> Option<SignalWatch> {
    SignalWatch::start()
        .map_err(|error| eprintln!("askpane: cannot catch signals ({error}); going on without"))
        .ok()
}

/// Answers every request still in the channel with "no human can answer".
pub(super) fn tell_unavailable(inbox: &Receiver<Inbound>, problem: &str) {
    for message in inbox.try_iter() {
        if let Inbound::Request(RequestEvent::Ask(request)) = message {
            // What its flags decide (a host's `--answers --submit`) stands; nobody answers the rest.
            let outcome =
                request.policy.decide(&request.core.ask).unwrap_or_else(|| Outcome::Unavailable {
                    reason: format!("askpane could not open a window: {problem}"),
                });
            request.reply.send(outcome);
        }
    }
}

/// Why no window can be shown, when the environment already says so.
pub(super) fn missing_display() -> Option<String> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return None;
    }
    let set = |name| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    match set("DISPLAY") || set("WAYLAND_DISPLAY") {
        true => None,
        false => Some("DISPLAY and WAYLAND_DISPLAY are not set".to_owned()),
    }
}

pub(super) fn no_display(problem: &str) -> u8 {
    eprintln!(
        "askpane: no display to open a window on ({problem}); answer in a browser instead \
         (--ui web), run it in a desktop session, or under a virtual display: xvfb-run askpane …"
    );
    exit::NO_HUMAN
}

/// Writes a reply decided before any window or thread exists, through the same writer.
pub(super) fn write_direct(
    envelope: &Envelope,
    format: Option<ReplyFormat>,
    outcome: &Outcome,
    always_a_line: bool,
) -> anyhow::Result<()> {
    let (responder, receiver) = askpane::transport::Responder::channel();
    responder.send(outcome.clone());
    let envelope = envelope.clone();
    let awaited = vec![AwaitedReply { envelope, format, outcome: receiver, always_a_line }];
    show_requests(Vec::new(), awaited, AppOptions::default(), &UiArgs::native(), None).map(drop)
}

/// `link` as a QR code drawn with Unicode half blocks, two modules a character row, for a
/// terminal that writes light on dark: the light modules (and the quiet zone) are the blocks,
/// as `qrencode -t UTF8` draws them. `None` when the link does not fit a QR code.
pub(super) fn pairing_code(link: &str) -> Option<String> {
    let code = qrcode::QrCode::new(link.as_bytes()).ok()?;
    Some(
        code.render::<qrcode::render::unicode::Dense1x2>()
            .dark_color(qrcode::render::unicode::Dense1x2::Light)
            .light_color(qrcode::render::unicode::Dense1x2::Dark)
            .quiet_zone(true)
            .build(),
    )
}
