//! Showing requests: the native window or the browser bridge, the reply writer beside them, the
//! signal watch while questions are open, and the desktop's theme. Every mode that shows
//! questions goes through here.

use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context as _;
use crossbeam_channel::{Receiver, Sender};

use askpane::app::{App, AppOptions};
use askpane::protocol::{Envelope, Outcome, ReplyFormat};
use askpane::store::DraftSink;
use askpane::transport::replies::{AwaitedReply, write_replies};
use askpane::transport::serve::{self, Bridge, BridgeOptions};
use askpane::transport::signals::{SignalWatch, StopSignal};
use askpane::transport::{Inbound, IoThreads, Request, SessionCommand, Waker, ui_channel};
use askpane::web_bundle;

use crate::drawing::Drawing;

use super::args::{ThemeArg, UiArgs};
use super::exit;

/// Set while the native window runs: a panic then is the window being lost (winit 0.30 panics
/// when another program destroys its window), which `show_window` turns into a closed window.
pub(super) static WINDOW_OPEN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

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
    let window_ctx = Arc::new(OnceLock::<egui::Context>::new());
    let (to_ui, inbox) = ui_channel(repaint_waker(&window_ctx));
    for request in requests {
        to_ui.send(Inbound::Ask(Box::new(request)));
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
                assets: web_bundle::ASSETS,
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
            let app = move |ctx: &egui::Context| {
                let app = App::new(ctx, inbox, options);
                match store {
                    Some(sink) => app.with_store(sink),
                    None => app,
                }
            };
            // A demo is what the user asked to see; a question arrives on its own and must
            // not take the keyboard from where the user is typing.
            let arrival = match options.close_when_done {
                true => Arrival::LeavesKeyboard,
                false => Arrival::TakesKeyboard,
            };
            if let Err(error) = show_window(window_ctx, shown.theme, arrival, app) {
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
        web_bundle::available(),
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
        if let Inbound::Ask(request) = message {
            let reason = format!("askpane could not open a window: {problem}");
            request.reply.send(Outcome::Unavailable { reason });
        }
    }
}

/// The waker handed to the transport: it repaints the window once the window exists.
pub(super) fn repaint_waker(window_ctx: &Arc<OnceLock<egui::Context>>) -> Waker {
    let window_ctx = Arc::clone(window_ctx);
    Waker::new(move || {
        if let Some(ctx) = window_ctx.get() {
            ctx.request_repaint();
        }
    })
}

/// Whether a window that appears takes the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arrival {
    /// What the user asked to see (a demo, a session they started): focused as any window.
    TakesKeyboard,
    /// A question arriving on its own: it must not take the keyboard from where the user types.
    LeavesKeyboard,
    /// The inbox's window: it leaves the keyboard, and each time it comes back on its own for a
    /// question it stays below the window the user works in (one the user asked for comes up).
    /// `first_on_top`: the user started it, so its first showing is theirs.
    ComesBackBelow { first_on_top: bool },
}

/// Runs the native window until it closes. The error says, in one line, why no window could be
/// shown. A panic inside the windowing stack (the X server gone, the window destroyed by another
/// program) is caught here and ends the window like a close: the app is dropped while unwinding,
/// so every agent is told the window closed, and the panic hook has said what happened.
pub(super) fn show_window(
    window_ctx: Arc<OnceLock<egui::Context>>,
    theme: ThemeArg,
    arrival: Arrival,
    app: impl FnOnce(&egui::Context) -> App,
) -> Result<(), String> {
    use std::sync::atomic::Ordering;
    WINDOW_OPEN.store(true, Ordering::SeqCst);
    let run = std::panic::AssertUnwindSafe(|| run_window(window_ctx, theme, arrival, app));
    let ended = std::panic::catch_unwind(run);
    WINDOW_OPEN.store(false, Ordering::SeqCst);
    match ended {
        Ok(Ok(())) | Err(_) => Ok(()),
        Ok(Err(error)) => Err(error),
    }
}

/// The last clause of a windowing error: `Failed to open connection to X server`, without the
/// source path winit puts before it.
fn window_error_summary(error: &dyn std::fmt::Display) -> String {
    let text = error.to_string();
    text.rsplit(": ").next().unwrap_or(&text).trim().to_owned()
}

fn run_window(
    window_ctx: Arc<OnceLock<egui::Context>>,
    theme: ThemeArg,
    arrival: Arrival,
    app: impl FnOnce(&egui::Context) -> App,
) -> Result<(), String> {
    // Read while the window is being made: X11 reports no theme, the desktop may have one.
    let desktop = (theme == ThemeArg::Auto)
        .then(|| std::thread::Builder::new().name("desktop-theme".into()).spawn(desktop_theme))
        .and_then(Result::ok);
    let builder = egui::ViewportBuilder::default()
        .with_title("askpane")
        .with_app_id("askpane")
        .with_inner_size([960.0, 680.0])
        .with_min_inner_size([520.0, 380.0]);
    let system_fonts = Arc::new(SystemFontsLater::default());
    let (stop_warming, warm_stopped) = crossbeam_channel::bounded::<()>(0);
    let warming = Arc::clone(&system_fonts);
    let warm_up = std::thread::Builder::new().name("system-fonts".into()).spawn(move || {
        if let Err(crossbeam_channel::RecvTimeoutError::Timeout) =
            warm_stopped.recv_timeout(SYSTEM_FONTS_AFTER)
        {
            warming.start();
        }
    });
    let drawing = chosen_drawing();
    let shown = run_app("askpane", builder, drawing, arrival, move |ctx: &egui::Context| {
        // Ignored if already set: one window per run.
        let _ = window_ctx.set(ctx.clone());
        ctx.add_font_provider(system_fonts);
        let desktop = desktop.and_then(|lookup| lookup.join().ok()).flatten();
        let chosen = match theme {
            ThemeArg::Dark => Some(egui::Theme::Dark),
            ThemeArg::Light => Some(egui::Theme::Light),
            // The window system's own theme, followed live, where it reports one.
            ThemeArg::Auto if ctx.system_theme().is_some() => None,
            ThemeArg::Auto => Some(desktop.unwrap_or(egui::Theme::Dark)),
        };
        if let Some(chosen) = chosen {
            ctx.set_theme(chosen);
        }
        let app = app(ctx);
        // The CPU window asks the window manager itself, before the window is mapped.
        match (arrival, drawing) {
            (Arrival::LeavesKeyboard, Drawing::Gpu) => {
                app.with_frame_hook(leave_the_keyboard_alone(None))
            }
            (Arrival::ComesBackBelow { first_on_top }, Drawing::Gpu) => {
                app.with_frame_hook(leave_the_keyboard_alone(Some(first_on_top)))
            }
            _ => app,
        }
    });
    drop(stop_warming);
    if let Ok(warm_up) = warm_up {
        let _ = warm_up.join();
    }
    shown
}

/// What draws the native window (issue 14): `ASKPANE_DRAWING=cpu` or `gpu` when set; otherwise
/// the CPU on Linux under X11 when the machine has no GPU render node (`/dev/dri/renderD*`),
/// where OpenGL would be Mesa's llvmpipe: a software rasterizer that loads LLVM to draw what
/// askpane draws in a millisecond itself.
pub(super) fn chosen_drawing() -> Drawing {
    match Drawing::asked(std::env::var("ASKPANE_DRAWING").ok().as_deref()) {
        Ok(Some(Drawing::Cpu)) if !cfg!(target_os = "linux") => drawing_by_machine(),
        Ok(Some(asked)) => asked,
        Ok(None) => drawing_by_machine(),
        Err(other) => {
            eprintln!("askpane: ASKPANE_DRAWING={other:?} is neither cpu nor gpu; choosing");
            drawing_by_machine()
        }
    }
}

fn drawing_by_machine() -> Drawing {
    // The CPU window is X11 only (cli/cpu_window.rs).
    if std::env::var_os("WAYLAND_DISPLAY").is_some() {
        return Drawing::Gpu;
    }
    let has_render_node = std::fs::read_dir("/dev/dri").is_ok_and(|nodes| {
        nodes.flatten().any(|node| node.file_name().to_string_lossy().starts_with("renderD"))
    });
    match cfg!(target_os = "linux") && !has_render_node {
        true => Drawing::Cpu,
        false => Drawing::Gpu,
    }
}

/// Runs one native window of `app` with `drawing` until it closes; the error says in one line
/// why none could open.
pub(super) fn run_app<A: eframe::App + 'static>(
    name: &str,
    builder: egui::ViewportBuilder,
    drawing: Drawing,
    arrival: Arrival,
    make: impl FnOnce(&egui::Context) -> A,
) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    let make = match drawing {
        Drawing::Cpu => {
            use super::cpu_window::{Failure, run};
            match run(builder.clone(), arrival, make) {
                Ok(()) => return Ok(()),
                Err(Failure::Window(error)) => return Err(window_error_summary(&error)),
                Err(Failure::CannotDraw { make, reason }) => {
                    eprintln!("askpane: drawing with OpenGL: cannot draw with the CPU ({reason})");
                    make
                }
            }
        }
        Drawing::Gpu => make,
    };
    let _ = (drawing, arrival);
    let native_options = eframe::NativeOptions {
        viewport: builder,
        renderer: eframe::Renderer::Glow,
        // Ours, enumerated later: `SystemFontsLater`.
        system_font_fallback: false,
        ..Default::default()
    };
    eframe::run_native(
        name,
        native_options,
        Box::new(move |creation| Ok(Box::new(make(&creation.egui_ctx)))),
    )
    .map_err(|error| window_error_summary(&error))
}

/// How long after the window starts the system's fonts are enumerated, unless a character
/// needs one sooner.
const SYSTEM_FONTS_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// The system's fonts for characters egui's own lack (日本語, العربية, …), as eframe's
/// `system_fonts` feature installs them, but enumerated only when a character first needs one,
/// or [`SYSTEM_FONTS_AFTER`] the window starts: enumerating them (fontconfig) takes a hundred
/// milliseconds or more of CPU that a window being made should not compete with (issue 14).
#[derive(Default)]
struct SystemFontsLater {
    fonts: OnceLock<egui_system_font_provider::SystemFontProvider>,
}

impl SystemFontsLater {
    /// Starts enumerating (on the provider's own thread) unless it has started.
    fn start(&self) -> &egui_system_font_provider::SystemFontProvider {
        self.fonts.get_or_init(egui_system_font_provider::SystemFontProvider::new)
    }
}

impl egui::FontProvider for SystemFontsLater {
    fn font_for(&self, request: &egui::FallbackRequest<'_>) -> Option<egui::FontInsert> {
        // Blocks until the enumeration is done, as the provider itself does.
        askpane::theme::system_font_for(self.start(), request)
    }
}

/// A frame hook that, in the first frame (before the window is shown), asks the window manager not
/// to give the window the keyboard when it appears, and (`keep_below`: the inbox's window, with
/// whether its first showing is the user's) each time the window comes back on its own keeps it
/// below the window the user works in ([`askpane::window_manager::QuietArrival`]).
fn leave_the_keyboard_alone(keep_below: Option<bool>) -> askpane::app::FrameHook {
    let mut first = true;
    let mut quiet = askpane::window_manager::QuietArrival::new(
        keep_below.is_some_and(|first_on_top| first_on_top),
    );
    Box::new(move |ctx, frame| {
        if std::mem::take(&mut first) {
            askpane::window_manager::never_take_focus_on_arrival(frame);
        }
        if keep_below.is_none() {
            return;
        }
        let visible = ctx.input(|input| input.viewport().visible().unwrap_or(false));
        let id = askpane::window_manager::x11_id(frame);
        let asked_for = askpane::app::take_window_asked_for(ctx);
        if quiet.after_frame(id, visible, asked_for) {
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        }
    })
}

/// The desktop's colour-scheme preference: the XDG desktop portal first, then GNOME's settings
/// (a real dconf store only, not gsettings' in-memory stand-in). `None` when neither says.
fn desktop_theme() -> Option<egui::Theme> {
    let portal = briefly(
        "gdbus",
        &[
            "call",
            "--session",
            "--dest",
            "org.freedesktop.portal.Desktop",
            "--object-path",
            "/org/freedesktop/portal/desktop",
            "--method",
            "org.freedesktop.portal.Settings.Read",
            "org.freedesktop.appearance",
            "color-scheme",
        ],
    );
    if let Some(theme) = portal.as_deref().and_then(askpane::theme::theme_from_portal) {
        return Some(theme);
    }
    let gsettings = |key| briefly("gsettings", &["get", "org.gnome.desktop.interface", key]);
    let scheme = gsettings("color-scheme")?;
    askpane::theme::theme_from_gsettings(&scheme, gsettings("gtk-theme").as_deref())
}

/// What a desktop helper prints, if it answers within a moment and has a real store behind it.
fn briefly(program: &str, args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_millis(300);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let output = child.wait_with_output().ok()?;
    // gsettings without dconf answers from memory: its defaults, not the user's desktop.
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("memory") {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
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

/// `link` as a QR code's modules, for the pairing window to draw.
pub(super) fn qr_modules(link: &str) -> Option<askpane::view::pairing::QrModules> {
    let code = qrcode::QrCode::new(link.as_bytes()).ok()?;
    let dark = code.to_colors().into_iter().map(|color| color == qrcode::Color::Dark).collect();
    Some(askpane::view::pairing::QrModules { width: code.width(), dark })
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
