//! The native window host (binary only): one eframe or CPU-drawn window of the [`App`], the
//! choice of what draws it ([`chosen_drawing`]), the focus rules for a window that appears on its
//! own ([`focus`], [`Arrival`]), the desktop's theme, and the system fonts loaded late.

#[cfg(target_os = "linux")]
pub(crate) mod cpu;
pub(crate) mod focus;
mod pairing;

pub(crate) use pairing::show_pairing;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crossbeam_channel::Receiver;

use askpane::app::{App, AppOptions};
use askpane::transport::{Inbound, Waker};

use crate::paint::Drawing;

/// The window's colours as the user chose them (`--theme`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThemeChoice {
    /// The window system's theme where it reports one, else the desktop's setting, else dark.
    Auto,
    Dark,
    Light,
}

/// Set while the native window runs: a panic then is the window being lost (winit 0.30 panics
/// when another program destroys its window), which `show_window` turns into a closed window.
pub(crate) static WINDOW_OPEN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The window a mode shows later, as the transport sees it before it exists: the waker handed
/// to the transport repaints it once it does.
#[derive(Clone, Default)]
pub(crate) struct WindowSlot(Arc<OnceLock<egui::Context>>);

impl WindowSlot {
    /// The waker handed to the transport: it repaints the window once the window exists.
    pub(crate) fn waker(&self) -> Waker {
        let window_ctx = Arc::clone(&self.0);
        Waker::new(move || {
            if let Some(ctx) = window_ctx.get() {
                ctx.request_repaint();
            }
        })
    }
}

/// Whether a window that appears takes the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
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
///
/// The window shows the [`App`] of `inbox` with `options`, as `finish` completes it (its store,
/// its session, its notices).
pub(crate) fn show_window(
    slot: WindowSlot,
    theme: ThemeChoice,
    arrival: Arrival,
    (inbox, options): (Receiver<Inbound>, AppOptions),
    finish: impl FnOnce(App) -> App,
) -> Result<(), String> {
    use std::sync::atomic::Ordering;
    let window_ctx = slot.0;
    let app = move |ctx: &egui::Context| finish(App::new(ctx, inbox, options));
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
    theme: ThemeChoice,
    arrival: Arrival,
    app: impl FnOnce(&egui::Context) -> App,
) -> Result<(), String> {
    // Read while the window is being made: X11 reports no theme, the desktop may have one.
    let desktop = (theme == ThemeChoice::Auto)
        .then(|| askpane::transport::spawn_named("desktop-theme", desktop_theme))
        .and_then(Result::ok);
    let builder = egui::ViewportBuilder::default()
        .with_title("askpane")
        .with_app_id("askpane")
        .with_inner_size([960.0, 680.0])
        .with_min_inner_size([520.0, 380.0]);
    let system_fonts = Arc::new(SystemFontsLater::default());
    let (stop_warming, warm_stopped) = crossbeam_channel::bounded::<()>(0);
    let warming = Arc::clone(&system_fonts);
    let warm_up = askpane::transport::spawn_named("system-fonts", move || {
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
            ThemeChoice::Dark => Some(egui::Theme::Dark),
            ThemeChoice::Light => Some(egui::Theme::Light),
            // The window system's own theme, followed live, where it reports one.
            ThemeChoice::Auto if ctx.system_theme().is_some() => None,
            ThemeChoice::Auto => Some(desktop.unwrap_or(egui::Theme::Dark)),
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
pub(crate) fn chosen_drawing() -> Drawing {
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
    // The CPU window is X11 only (window/cpu.rs).
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
pub(crate) fn run_app<A: eframe::App + 'static>(
    name: &str,
    builder: egui::ViewportBuilder,
    drawing: Drawing,
    arrival: Arrival,
    make: impl FnOnce(&egui::Context) -> A,
) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    let make = match drawing {
        Drawing::Cpu => {
            use crate::window::cpu::{Failure, run};
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
        askpane::view::theme::system_font_for(self.start(), request)
    }
}

/// Issue 29 (`askpane doctor`): for each of `characters`, the family of the system font the
/// window would draw it with (the same fallback as [`SystemFontsLater`]'s), or `None` when no
/// system font has it.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read by askpane doctor, which is Linux's")
)]
pub(crate) fn system_fonts_for(characters: &[char]) -> Vec<Option<String>> {
    let provider = egui_system_font_provider::SystemFontProvider::new();
    characters
        .iter()
        .map(|c| {
            let cluster = c.to_string();
            let family = egui::FontFamily::Proportional;
            let request = egui::FallbackRequest { cluster: &cluster, family: &family };
            let insert = askpane::view::theme::system_font_for(&provider, &request)?;
            // The provider names it `system:<family>:<style>:<index>`.
            let name = insert.name.strip_prefix("system:").unwrap_or(&insert.name);
            Some(name.split(':').next().unwrap_or(name).to_owned())
        })
        .collect()
}

/// Issue 29 (`askpane doctor`): how many font families the system offers the window's fallback
/// (fontique's enumeration through fontconfig, as [`SystemFontsLater`]'s provider makes it).
/// 0 when fontconfig matches no font: the window then draws with egui's own fonts alone.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read by askpane doctor, which is Linux's")
)]
pub(crate) fn system_font_families() -> usize {
    let options = fontique::CollectionOptions { shared: false, system_fonts: true };
    fontique::Collection::new(options).family_names().count()
}

/// A frame hook that, in the first frame (before the window is shown), asks the window manager not
/// to give the window the keyboard when it appears, and (`keep_below`: the inbox's window, with
/// whether its first showing is the user's) each time the window comes back on its own keeps it
/// below the window the user works in ([`crate::window::focus::QuietArrival`]).
fn leave_the_keyboard_alone(keep_below: Option<bool>) -> askpane::app::FrameHook {
    let mut first = true;
    let mut quiet = crate::window::focus::QuietArrival::new(
        keep_below.is_some_and(|first_on_top| first_on_top),
    );
    Box::new(move |ctx, frame| {
        if std::mem::take(&mut first) {
            crate::window::focus::never_take_focus_on_arrival(frame);
        }
        if keep_below.is_none() {
            return;
        }
        let visible = ctx.input(|input| input.viewport().visible().unwrap_or(false));
        let id = crate::window::focus::x11_id(frame);
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
    if let Some(theme) = portal.as_deref().and_then(askpane::view::theme::theme_from_portal) {
        return Some(theme);
    }
    let gsettings = |key| briefly("gsettings", &["get", "org.gnome.desktop.interface", key]);
    let scheme = gsettings("color-scheme")?;
    askpane::view::theme::theme_from_gsettings(&scheme, gsettings("gtk-theme").as_deref())
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
