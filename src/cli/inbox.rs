//! `askpane inbox` (issue 10): the long-lived process that shows every `ask` and `hook` of this
//! user in one window (or one browser page), fed by its socket; `askpane inbox --quit`, and
//! `askpane inbox --new-link` (issue 11: a new link for its browser page).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;

use askpane::app::pairing::Relink;
use askpane::app::{App, AppOptions, LeanExit};
use askpane::protocol::exit;
use askpane::protocol::inbox::{ClientMessage, InboxMessage};
use askpane::store::DraftSink;
use askpane::transport::endpoint::Listener;
use askpane::transport::inbox::{self, ConnectError, InboxClient, InboxLock, InboxServer, Place};
use askpane::transport::notify::Notifier;
use askpane::transport::serve::bundle;
use askpane::transport::serve::{self, BridgeJournal, BridgeOptions};
use askpane::transport::{Control, Inbound, IoThreads, ui_channel};
use crossbeam_channel::Receiver;

use super::args::{StoreArgs, UiArgs};
use super::show::{
    missing_display, no_display, pairing_code, start_bridge_then, tell_unavailable, watch_signals,
};
use crate::window::{Arrival, WindowSlot, show_window};

#[derive(Args, Debug)]
pub(super) struct InboxArgs {
    /// End the running inbox: every question still waiting is answered "closed without an
    /// answer", and its client exits.
    #[arg(long)]
    quit: bool,
    /// Replace the link of the running inbox's browser page with a new one: pages on the old
    /// link are told so and it stops working (a link shared by mistake, a lost phone). Prints
    /// the new links, and a QR code for a phone with `--lan`.
    #[arg(long, conflicts_with = "quit")]
    new_link: bool,
    /// Started by a client that found no inbox (not for people to type).
    #[arg(long, hide = true)]
    on_demand: bool,
    /// Start without a window: the inbox waits, lean (a few MB), until the first question
    /// shows it. What `askpane install autostart` starts at login.
    #[cfg(unix)]
    #[arg(long, conflicts_with_all = ["lean", "resumed"])]
    background: bool,
    /// Issue 14: this process was the inbox and shed its window (see `lean.rs`; not for people
    /// to type).
    #[cfg(unix)]
    #[arg(long, hide = true, conflicts_with = "resumed")]
    lean: bool,
    /// Issue 14: this process was the lean inbox and a client connected: the full inbox again,
    /// its window hidden until something is shown (not for people to type).
    #[cfg(unix)]
    #[arg(long, hide = true)]
    resumed: bool,
    /// Issue 29 item 5: resumed for the tray's "Show window": the window shows at once (not
    /// for people to type).
    #[cfg(unix)]
    #[arg(long = "shown", hide = true, requires = "resumed")]
    resumed_shown: bool,
    /// Seconds a question left open by an askpane that is gone may wait to be asked again
    /// before it is recorded as abandoned (for tests).
    #[arg(long, hide = true, default_value_t = ORPHAN_GRACE_SECS)]
    orphan_grace: u64,
    /// No desktop notifications when a question arrives while the window is not focused
    /// (`ASKPANE_NOTIFY=0` does the same).
    #[arg(long)]
    no_notify: bool,
    #[command(flatten)]
    shown: UiArgs,
    #[command(flatten)]
    store: StoreArgs,
}

/// How long a question whose askpane died (a crashed inbox, a killed `ask`) waits for its client
/// to ask it again, with its drafts, before history records it as abandoned.
const ORPHAN_GRACE_SECS: u64 = 30;

/// How long `--quit` waits for the inbox to be gone.
const QUIT_WAIT: Duration = Duration::from_secs(10);

pub(super) fn run(args: InboxArgs) -> anyhow::Result<u8> {
    let place = Place::find().context("finding the inbox's directory")?;
    if args.quit {
        return quit(&place);
    }
    if args.new_link {
        return new_link(&place);
    }
    #[cfg(unix)]
    if args.lean {
        return super::lean::run(&place.socket(), bridge_state_dir(&args).as_deref());
    }
    let handed_on = handed_on(&args);
    // A resumed inbox holds the lock already: the file it took it with stayed open across exec.
    let lock = match handed_on {
        Some(_) => None,
        None => match take_lock(&place, args.on_demand)? {
            Some(lock) => Some(lock),
            None => {
                eprintln!("askpane: an inbox already runs ({})", place.socket().display());
                // Run by a person: bring its window back (it hides when closed). Not at login
                // (`--background`): no window then.
                if !args.on_demand
                    && !in_background(&args)
                    && let Ok(mut client) = InboxClient::connect(&place)
                {
                    let _ = client.send(&ClientMessage::Show);
                }
                return Ok(exit::OK);
            }
        },
    };
    let web = args.shown.web();
    if !web && let Some(problem) = missing_display() {
        return Ok(no_display(&problem));
    }
    let listener = match handed_on {
        Some(listener) => listener
            .context("taking the inbox socket handed on")?
            .context("no inbox socket was handed on to askpane inbox --resumed")?,
        None => inbox::bind(&place).context("opening the inbox socket")?,
    };
    // Started lean (`--background`): no window until a client comes.
    #[cfg(unix)]
    if args.background && !web {
        eprintln!(
            "askpane: inbox started in the background, pid {}, on {}",
            std::process::id(),
            place.socket().display()
        );
        return super::lean::watch(
            &place.socket(),
            listener,
            lock.as_ref(),
            bridge_state_dir(&args).as_deref(),
        );
    }
    // Issue 14: a copy of the listener outlives the server, for the lean inbox.
    let kept_listener = listener.try_clone().context("opening the inbox socket")?;
    let started = match (args.on_demand, resumed(&args)) {
        (_, true) => "resumed for a client",
        (true, false) => "started by a client",
        (false, false) => "started",
    };
    eprintln!(
        "askpane: inbox {started}, pid {}, on {}",
        std::process::id(),
        place.socket().display()
    );
    let signals = watch_signals();
    let window = WindowSlot::default();
    let (to_ui, requests) = ui_channel(window.waker());
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    // Issue 11: a desktop notification when a question arrives and the window is not
    // focused; its "Open" shows the window on that request. Started before the socket serves:
    // a terminal's notice (issue 26 item 6) may be the first thing a resumed inbox is sent.
    let notifier = (!web && notifications_wanted(args.no_notify))
        .then(|| start_notifier(to_ui.clone()))
        .flatten();
    #[cfg(target_os = "linux")]
    let to_tray = to_ui.clone();
    let server = InboxServer::start(listener, place.socket(), to_ui)
        .context("starting the inbox's socket server")?;
    // Issue 31: the Matrix bridge, when it is configured, runs as long as the inbox does.
    #[cfg(unix)]
    let matrix = bridge_state_dir(&args)
        .and_then(|dir| askpane::transport::matrix_child::MatrixChild::start(&dir));
    // Issue 29 item 5: the tray icon follows what the socket tells subscribers.
    #[cfg(target_os = "linux")]
    let tray =
        (!web && tray_wanted()).then(|| start_tray(to_tray, notifier.as_ref(), &server)).flatten();
    // Issue 26 item 6: Claude Code terminals that wait (`askpane hook` given a Notification)
    // join the same notification.
    if let Some(notifier) = &notifier {
        server.serve_notices(Box::new(notifier.noticer()));
    }
    let went_lean = Arc::new(AtomicBool::new(false));
    let mut threads = IoThreads::default();
    let stop_sweep = sweep_orphans(&args, &mut threads)?;
    let unshown = requests.clone();
    // Issue 11: the window (or the browser bridge) saves drafts and records outcomes in the
    // store, if it opens.
    let sink = args.store.open_or_warn().and_then(|store| {
        DraftSink::start(store)
            .map_err(|error| eprintln!("askpane: warning: drafts are not saved ({error})"))
            .ok()
    });
    match web {
        true => in_browser(&args, &server, requests, sink, &mut threads),
        false => {
            let lean = can_go_lean().then(|| LeanExit {
                claim_quiet: Box::new(server.claim_quiet()),
                went_lean: Arc::clone(&went_lean),
            });
            in_window(&args, window, requests, (sink, notifier), lean);
        }
    }
    #[cfg(target_os = "linux")]
    drop(tray);
    // The window is gone: every request it held was told. What is still queued hears the window
    // closed (its responder is dropped with it), then the clients are let go.
    drop(route);
    drop(signals);
    drop(stop_sweep);
    drop(unshown.try_iter().collect::<Vec<Inbound>>());
    drop(unshown);
    let going_lean = went_lean.load(Ordering::SeqCst);
    // Going lean keeps the bridge (the same process, another image); ending stops it, before the
    // socket closes, so that it does not report the inbox away.
    #[cfg(unix)]
    let matrix = match going_lean {
        true => matrix.and_then(askpane::transport::matrix_child::MatrixChild::hand_on),
        false => {
            if let Some(matrix) = matrix {
                matrix.stop();
            }
            None
        }
    };
    match going_lean {
        true => server.hand_over(),
        false => server.stop(),
    }
    threads.join().context("ending the browser bridge")?;
    #[cfg(unix)]
    if going_lean {
        let error = super::lean::become_stage(
            super::lean::Stage::Lean,
            kept_listener,
            lock.as_ref(),
            matrix,
        );
        // Still this program: nothing is open, so the inbox ends; the next client starts one.
        eprintln!("askpane: cannot go lean ({error:#}); the inbox ends");
        let _ = std::fs::remove_file(place.socket());
        drop(lock);
        eprintln!("askpane: inbox ended");
        return Ok(exit::OK);
    }
    drop(kept_listener);
    drop(lock);
    eprintln!("askpane: inbox ended");
    Ok(exit::OK)
}

/// Issue 31: the state directory whose `matrix/` says whether the inbox starts the Matrix
/// bridge: the store's (`--state-dir`, `ASKPANE_STATE_DIR`, else the platform's).
#[cfg(unix)]
fn bridge_state_dir(args: &InboxArgs) -> Option<std::path::PathBuf> {
    askpane::store::state_dir(args.store.state_dir.as_deref()).ok()
}

/// Issue 11: questions an askpane that died left open are recorded as abandoned, unless their
/// client asks them again within the grace (which makes this inbox their holder). Dropping the
/// returned sender ends the wait.
fn sweep_orphans(
    args: &InboxArgs,
    threads: &mut IoThreads,
) -> anyhow::Result<crossbeam_channel::Sender<()>> {
    let (stop_sweep, sweep_stopped) = crossbeam_channel::bounded::<()>(0);
    let store = args.store.clone();
    let grace = Duration::from_secs(args.orphan_grace);
    let draft_days = keep_drafts_days();
    threads.spawn("store-orphans", move || {
        if let Err(crossbeam_channel::RecvTimeoutError::Timeout) = sweep_stopped.recv_timeout(grace)
            && let Ok(mut store) = store.open()
        {
            match store.abandon_orphans(std::time::SystemTime::now(), pid_runs) {
                Ok(0) => {}
                Ok(count) => eprintln!(
                    "askpane: {count} question(s) left by a stopped askpane recorded as abandoned"
                ),
                Err(error) => {
                    eprintln!("askpane: warning: cannot record abandoned questions ({error})")
                }
            }
            // Issue 30: after the sweep, so a question just recorded as abandoned is no
            // longer open; its drafts go only once untouched for the whole age.
            if let Some(days) = draft_days {
                let before = std::time::SystemTime::now()
                    .checked_sub(Duration::from_secs(days.saturating_mul(24 * 3600)))
                    .unwrap_or(std::time::UNIX_EPOCH);
                match store.prune_drafts(before) {
                    Ok(pruned) if pruned == askpane::store::DraftsPruned::default() => {}
                    Ok(pruned) => eprintln!(
                        "askpane: removed what was typed into {} question request(s) and {} \
                         plan(s) or form(s) no longer open and untouched for {days} day(s)",
                        pruned.forms, pruned.cards
                    ),
                    Err(error) => {
                        eprintln!("askpane: warning: cannot remove old drafts ({error})")
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(stop_sweep)
}

/// Issue 30: how many days a draft of a request no longer open is kept untouched
/// (`ASKPANE_KEEP_DRAFTS_DAYS`, default [`askpane::store::DEFAULT_DRAFT_DAYS`]); `None` (`0`) keeps
/// them all. A value that is not a number of days is said and the default kept.
fn keep_drafts_days() -> Option<u64> {
    let days = match std::env::var("ASKPANE_KEEP_DRAFTS_DAYS") {
        Err(_) => askpane::store::DEFAULT_DRAFT_DAYS,
        Ok(text) => text.trim().parse().unwrap_or_else(|_| {
            eprintln!(
                "askpane: warning: ASKPANE_KEEP_DRAFTS_DAYS={text:?} is not a number of days; \
                 drafts are kept {} days",
                askpane::store::DEFAULT_DRAFT_DAYS
            );
            askpane::store::DEFAULT_DRAFT_DAYS
        }),
    };
    (days > 0).then_some(days)
}

/// `--ui web`: the inbox's questions in browser pages until the inbox is stopped.
fn in_browser(
    args: &InboxArgs,
    server: &InboxServer,
    requests: Receiver<Inbound>,
    sink: Option<DraftSink>,
    threads: &mut IoThreads,
) {
    let bridge_options = BridgeOptions {
        bind: args.shown.bind_address(),
        assets: bundle::ASSETS,
        stop_when_done: false,
        stop_after_turn: false,
        page_gone_grace: serve::PAGE_GONE_GRACE,
        journal: sink.map(|sink| BridgeJournal(Arc::new(sink))),
    };
    // Issue 11: `askpane inbox --new-link` replaces the page's link.
    let serve_new_link = |bridge: &serve::Bridge| {
        let control = bridge.link_control();
        server.serve_new_link(Box::new(move || {
            let links =
                control.replace().map_err(|error| format!("cannot make a new link: {error}"))?;
            // The inbox's own terminal showed the old link: it shows the new one too.
            if let Some(link) = links.first() {
                eprintln!("askpane: the page has a new link: {link}");
            }
            Ok(links)
        }));
    };
    match start_bridge_then(&bridge_options, requests, None, threads, serve_new_link) {
        Ok(bridge) => {
            show_pairing(&bridge);
            bridge.wait();
            bridge.stop();
        }
        Err(error) => eprintln!("askpane: {error:#}"),
    }
}

/// The inbox's native window, until it closes for good or goes lean (`lean`).
fn in_window(
    args: &InboxArgs,
    window: WindowSlot,
    requests: Receiver<Inbound>,
    (sink, notifier): (Option<DraftSink>, Option<Notifier>),
    lean: Option<LeanExit>,
) {
    let unshown = requests.clone();
    let notices = notifier.as_ref().map(|notifier| notifier.reporter());
    let options =
        AppOptions { resident: true, start_hidden: hidden_at_start(args), ..AppOptions::default() };
    // Run by the user in a terminal (not by a client, not resumed): the window they asked
    // for comes up as any window does; later it comes back on its own below the one in use.
    let by_the_user = !args.on_demand && !resumed(args);
    let finish = move |mut app: App| {
        if let Some(lean) = lean {
            app = app.with_lean_exit(lean);
        }
        if let Some(sink) = sink {
            app = app.with_store(sink);
        }
        if let Some(report) = notices {
            app = app.with_notices(Box::new(report));
        }
        app
    };
    if let Err(error) = show_window(
        window,
        args.shown.theme.into(),
        Arrival::ComesBackBelow { first_on_top: by_the_user },
        (requests, options),
        finish,
    ) {
        eprintln!("askpane: cannot show the inbox's window ({error})");
        tell_unavailable(&unshown, &error);
    }
    if let Some(notifier) = notifier {
        notifier.stop();
    }
}

/// The socket the lean inbox handed on, when this run is `--resumed` (issue 14).
#[cfg(unix)]
fn handed_on(args: &InboxArgs) -> Option<std::io::Result<Option<Listener>>> {
    args.resumed.then(super::lean::inherited_listener)
}

#[cfg(not(unix))]
fn handed_on(_args: &InboxArgs) -> Option<std::io::Result<Option<Listener>>> {
    None
}

/// Whether this run starts without a window (`--background`, Unix).
fn in_background(args: &InboxArgs) -> bool {
    #[cfg(unix)]
    return args.background;
    #[cfg(not(unix))]
    {
        let _ = args;
        false
    }
}

/// Whether this run was handed the socket by the lean inbox (issue 14).
fn resumed(args: &InboxArgs) -> bool {
    #[cfg(unix)]
    return args.resumed;
    #[cfg(not(unix))]
    {
        let _ = args;
        false
    }
}

/// A resumed inbox starts hidden, unless the tray's "Show window" resumed it.
fn hidden_at_start(args: &InboxArgs) -> bool {
    #[cfg(unix)]
    return args.resumed && !args.resumed_shown;
    #[cfg(not(unix))]
    {
        let _ = args;
        false
    }
}

/// Issue 14: where the inbox can shed its window by becoming the lean inbox (`exec`, Unix). It
/// can be turned off (`ASKPANE_LEAN=0`): a window that comes back at once matters more than
/// memory to some.
fn can_go_lean() -> bool {
    let off = std::env::var("ASKPANE_LEAN").is_ok_and(|value| {
        matches!(value.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off")
    });
    cfg!(unix) && !off
}

/// How long an inbox a client started waits for the lock of one that is dying.
const DYING_HOLDER_WAIT: Duration = Duration::from_secs(3);

/// The inbox lock, or `None` when another inbox holds it. An inbox a client started (after the
/// last one was killed) waits a moment while no inbox answers on the socket: a killed inbox
/// closes its socket before its lock as it dies, and a client that saw the socket close could
/// otherwise start its successor into a lock still held, which then ends at once.
fn take_lock(place: &Place, on_demand: bool) -> anyhow::Result<Option<InboxLock>> {
    let deadline = Instant::now() + DYING_HOLDER_WAIT;
    loop {
        if let Some(lock) = InboxLock::take(place).context("taking the inbox lock")? {
            return Ok(Some(lock));
        }
        let answering = InboxClient::connect(place).is_ok();
        if !on_demand || answering || Instant::now() > deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `askpane inbox --quit`: asks the running inbox to end and waits until it has.
fn quit(place: &Place) -> anyhow::Result<u8> {
    let mut client = match InboxClient::connect(place) {
        Ok(client) => client,
        Err(ConnectError::NotRunning(_)) => {
            eprintln!("askpane: no inbox runs");
            return Ok(exit::OK);
        }
        Err(error) => anyhow::bail!("cannot reach the inbox: {error}"),
    };
    let pid = client.inbox_pid;
    client.send(&ClientMessage::Quit).context("asking the inbox to quit")?;
    // The inbox says it is quitting, then closes every connection once its clients are told.
    let deadline = Instant::now() + QUIT_WAIT;
    loop {
        match client.receive() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
        if Instant::now() >= deadline {
            anyhow::bail!("the inbox (pid {pid}) did not end within {} s", QUIT_WAIT.as_secs());
        }
    }
    // The lock is free once the process is gone.
    while Instant::now() < deadline {
        if let Ok(Some(lock)) = InboxLock::take(place) {
            drop(lock);
            eprintln!("askpane: the inbox (pid {pid}) ended");
            return Ok(exit::OK);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    anyhow::bail!("the inbox (pid {pid}) did not end within {} s", QUIT_WAIT.as_secs())
}

/// How long `--new-link` waits for the inbox's answer.
const NEW_LINK_WAIT: Duration = Duration::from_secs(10);

/// `askpane inbox --new-link`: asks the running inbox for a new page link, and prints it (and
/// a QR code for the first link another device can use). Exits 2 with the reason when no inbox
/// runs, or it serves no browser page.
fn new_link(place: &Place) -> anyhow::Result<u8> {
    let mut client = match InboxClient::connect(place) {
        Ok(client) => client,
        Err(ConnectError::NotRunning(_)) => {
            eprintln!(
                "askpane: no inbox runs, so there is no link to replace (start one with \
                 `askpane inbox --ui web`)"
            );
            return Ok(exit::INVALID);
        }
        Err(error) => anyhow::bail!("cannot reach the inbox: {error}"),
    };
    client.send(&ClientMessage::NewLink).context("asking the inbox for a new link")?;
    let deadline = Instant::now() + NEW_LINK_WAIT;
    while Instant::now() < deadline {
        match client.receive().context("reading the inbox's answer")? {
            Some(InboxMessage::NewLink { links }) => {
                print_new_links(&links);
                return Ok(exit::OK);
            }
            Some(InboxMessage::Error { message, .. }) => {
                eprintln!("askpane: {message}");
                return Ok(exit::INVALID);
            }
            Some(_) => {}
            None => anyhow::bail!("the inbox closed the connection without a new link"),
        }
    }
    anyhow::bail!("the inbox did not answer within {} s", NEW_LINK_WAIT.as_secs())
}

/// The new links on stdout (for scripts), loopback first; the QR code of the first link another
/// device can use on stderr, for a person to scan.
fn print_new_links(links: &[String]) {
    for link in links {
        say!("{link}");
    }
    if let Some(code) = links.get(1).and_then(|link| pairing_code(link)) {
        eprintln!("askpane: or scan this with your phone's camera:\n{code}");
    }
    eprintln!("askpane: pages on the old link were told it was replaced; it no longer works");
}

/// Issue 11: beside the browser pages, a native "Pair a phone" window with the link another
/// device can use, its QR code and New link, when another device can reach the pages (`--lan`,
/// `--bind 0.0.0.0`) and there is a display. It closes when the inbox ends; closing it keeps the
/// inbox. Returns when it is closed (at once without one).
fn show_pairing(bridge: &serve::Bridge) {
    if bridge.urls().len() < 2 || missing_display().is_some() {
        return;
    }
    let links = bridge.urls();
    let control = bridge.link_control();
    let relink: Relink = Box::new(move || {
        let links =
            control.replace().map_err(|error| format!("cannot make a new link: {error}"))?;
        if let Some(link) = links.first() {
            eprintln!("askpane: the page has a new link (from the pairing window): {link}");
        }
        Ok(links)
    });
    let until = || bridge.wait();
    if let Err(error) = crate::window::show_pairing(links, relink, until) {
        eprintln!("askpane: no pairing window ({error}); the links above work all the same");
    }
}

/// False with `--no-notify` or `ASKPANE_NOTIFY` set to 0 (or false, no, off).
fn notifications_wanted(no_notify: bool) -> bool {
    let off = std::env::var("ASKPANE_NOTIFY").is_ok_and(|value| {
        matches!(value.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off")
    });
    !no_notify && !off
}

/// False with `ASKPANE_TRAY` set to 0 (or false, no, off).
#[cfg(target_os = "linux")]
pub(super) fn tray_wanted() -> bool {
    !std::env::var("ASKPANE_TRAY").is_ok_and(|value| {
        matches!(value.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off")
    })
}

/// The tray icon (issue 29 item 5): its menu shows the window, pauses `notifier`'s
/// notifications for an hour, or ends the inbox as `askpane inbox --quit` does.
#[cfg(target_os = "linux")]
fn start_tray(
    to_ui: askpane::transport::UiSender,
    notifier: Option<&Notifier>,
    server: &InboxServer,
) -> Option<askpane::transport::tray::Tray> {
    use askpane::protocol::tray::TrayAction;
    let pause = notifier.map(|notifier| notifier.pauser());
    let act = move |action| match action {
        TrayAction::Show => {
            // False only once the window is gone, when there is nothing to show.
            let _ = to_ui.send(Inbound::Control(Control::Reveal { request: None }));
        }
        TrayAction::PauseNotifications => {
            if let Some(pause) = &pause {
                pause(Instant::now() + askpane::transport::tray::PAUSE);
            }
        }
        TrayAction::Quit => {
            log::info!("asked to quit (the tray's menu)");
            let _ = to_ui.send(Inbound::Control(Control::Shutdown {
                outcome: askpane::protocol::Outcome::inbox_closed(),
            }));
        }
    };
    let tray = askpane::transport::tray::Tray::start(act)
        .map_err(|error| eprintln!("askpane: no tray icon ({error})"))
        .ok()?;
    server.serve_observer(Box::new(tray.observer()));
    Some(tray)
}

/// The notifier thread, whose "Open" sends [`Control::Reveal`] to the window.
fn start_notifier(reveal: askpane::transport::UiSender) -> Option<Notifier> {
    let open = move |request| {
        reveal.send(Inbound::Control(Control::Reveal { request: Some(request) }));
    };
    Notifier::start(open)
        .map_err(|error| eprintln!("askpane: no desktop notifications ({error})"))
        .ok()
}

/// True while process `pid` runs (as this user or another).
#[cfg(unix)]
fn pid_runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // It exists, but belongs to someone else.
        Err(error) => error == rustix::io::Errno::PERM,
    }
}

/// Whether process `pid` runs is not asked on Windows (it needs `OpenProcess`, unsafe code
/// askpane does not write): every process counts as running, so a question is never recorded
/// as abandoned on a guess; one left by a killed askpane stays open in the store until asked
/// again.
#[cfg(windows)]
fn pid_runs(_pid: u32) -> bool {
    true
}
