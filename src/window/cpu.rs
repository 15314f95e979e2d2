//! The native window drawn by the CPU (issue 14): winit and egui-winit as eframe uses them, the
//! vendored `egui_software_backend` rasterizer, and X11 `PutImage` requests of the tiles that
//! changed, over a connection of our own (x11rb, pure Rust).
//!
//! Why: on a machine without a GPU, eframe's OpenGL means Mesa's llvmpipe, which maps and
//! relocates libLLVM before the first frame and keeps 60 MB of it for as long as the window
//! lives, while drawing a form of text and rectangles is a millisecond of CPU work. This runner
//! drives the same [`eframe::App`] as eframe does (`logic`, then `ui`, a close the app may
//! cancel, a hidden window that runs only `logic`), so `App` does not know which one draws it.
//!
//! X11 only: softbuffer, which would also serve Wayland, loads libX11 from a constructor in every
//! process of the binary (tiny-xlib), hooks included, and a Wayland desktop without a GPU is rare.

use std::time::Instant;

use egui_software_backend::{BufferMutRef, ColorFieldOrder, Damage, EguiSoftwareRender};
use egui_winit::accesskit_winit;
use egui_winit::winit;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::platform::run_on_demand::EventLoopExtRunOnDemand;
use winit::window::{Window, WindowId};
use x11rb::connection::{Connection as _, RequestConnection as _};
use x11rb::protocol::xproto::{self, ConnectionExt as _};
use x11rb::rust_connection::RustConnection;

use crate::paint::cpu_frame::{CpuFrame, opaque_pixel};

/// What wakes the event loop besides the window system.
#[derive(Debug)]
enum Wake {
    /// egui asked for a frame at `when`, during or after pass `pass`.
    Repaint { when: Instant, pass: u64 },
    /// A screen reader's request.
    AccessKit(accesskit_winit::Event),
}

impl From<accesskit_winit::Event> for Wake {
    fn from(event: accesskit_winit::Event) -> Self {
        Wake::AccessKit(event)
    }
}

thread_local! {
    /// winit allows one event loop per process; it is kept for the next window, as eframe does.
    static EVENT_LOOP: std::cell::RefCell<Option<EventLoop<Wake>>> =
        const { std::cell::RefCell::new(None) };
}

/// Why the CPU window did not run.
pub(super) enum Failure<F> {
    /// This display cannot take our pixels (not X11, or an unusual pixel format): `make` is
    /// handed back unused, for the OpenGL window.
    CannotDraw { make: F, reason: String },
    /// The window could not open, or was lost.
    Window(String),
}

/// Shows one window drawn by the CPU until the app lets it close. `make` builds the app once the
/// window exists (hidden until its first frame is painted). `arrival`: whether the window manager
/// is asked not to focus the window when it appears, and whether it is kept below the window in
/// use when it comes back on its own.
pub(super) fn run<A: eframe::App, F: FnOnce(&egui::Context) -> A>(
    builder: egui::ViewportBuilder,
    arrival: super::Arrival,
    make: F,
) -> Result<(), Failure<F>> {
    use super::Arrival;
    let leave_keyboard = arrival != Arrival::TakesKeyboard;
    let keep_below = match arrival {
        Arrival::ComesBackBelow { first_on_top } => Some(first_on_top),
        Arrival::TakesKeyboard | Arrival::LeavesKeyboard => None,
    };
    let display = match XDisplay::connect() {
        Ok(display) => display,
        Err(Unusable::NoDisplay(error)) => return Err(Failure::Window(error)),
        Err(Unusable::CannotDraw(reason)) => return Err(Failure::CannotDraw { make, reason }),
    };
    EVENT_LOOP.with(|cell| {
        let mut slot = cell.borrow_mut();
        let event_loop = match slot.as_mut() {
            Some(event_loop) => event_loop,
            None => slot.insert(new_event_loop().map_err(Failure::Window)?),
        };
        let mut runner = Runner {
            ctx: egui::Context::default(),
            builder,
            leave_keyboard,
            keep_below,
            make: Some(make),
            display: Some(display),
            proxy: event_loop.create_proxy(),
            shown: None,
            repaint_at: None,
            error: None,
        };
        let ran = event_loop.run_app_on_demand(&mut runner);
        // The app is dropped with its window, before the next one can start.
        runner.close();
        match (runner.error, ran) {
            (Some(error), _) => Err(Failure::Window(error)),
            (None, Err(error)) => Err(Failure::Window(error.to_string())),
            (None, Ok(())) => Ok(()),
        }
    })
}

fn new_event_loop() -> Result<EventLoop<Wake>, String> {
    EventLoop::<Wake>::with_user_event().build().map_err(|error| error.to_string())
}

struct Runner<A, F> {
    ctx: egui::Context,
    builder: egui::ViewportBuilder,
    leave_keyboard: bool,
    /// Kept below the window in use when it comes back on its own (the inbox's window), with
    /// whether its first showing is the user's.
    keep_below: Option<bool>,
    make: Option<F>,
    /// Our connection to the X server, until the window takes it.
    display: Option<XDisplay>,
    proxy: EventLoopProxy<Wake>,
    shown: Option<Shown<A>>,
    /// When the next frame is due, if one is.
    repaint_at: Option<Instant>,
    error: Option<String>,
}

/// The window and what draws into it, from its creation to its close.
struct Shown<A> {
    app: A,
    window: Window,
    screen: XWindow,
    input: egui_winit::State,
    info: egui::ViewportInfo,
    renderer: EguiSoftwareRender,
    /// Texture changes not yet given to the renderer (a frame of zero size paints nothing).
    textures: egui::TexturesDelta,
    /// What the last frame painted showed: egui runs a second pass after every input "to
    /// settle", which mostly paints the same shapes again; those are not drawn twice.
    painted: Option<Painted>,
    frame: eframe::Frame,
    /// The window stays unmapped until the app's first pass has run (it may keep the window
    /// hidden); the server's Expose at the mapping then asks for the first picture.
    first_pass_done: bool,
    /// The app let a close go ahead.
    closing: bool,
    /// A window that appears on its own stays below the one the user works in (`None`: one the
    /// user asked for, which may come up on top).
    quiet: Option<crate::window::focus::QuietArrival>,
}

impl<A: eframe::App, F: FnOnce(&egui::Context) -> A> Runner<A, F> {
    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let Some(make) = self.make.take() else { return Ok(()) };
        let builder = self.builder.clone().with_visible(false);
        let window = egui_winit::create_window(&self.ctx, event_loop, &builder)
            .map_err(|error| error.to_string())?;
        if self.leave_keyboard {
            crate::window::focus::never_take_focus_on_arrival(&window);
        }
        let display = self.display.take().ok_or("the X connection was already used")?;
        let screen = display.window(&window)?;
        let mut input = egui_winit::State::new(
            self.ctx.clone(),
            egui::ViewportId::ROOT,
            event_loop,
            Some(window.scale_factor() as f32),
            window.theme(),
            None,
        );
        input.init_accesskit(event_loop, &window, self.proxy.clone());
        let mut info = egui::ViewportInfo::default();
        egui_winit::update_viewport_info(&mut info, &self.ctx, &window, true);
        let proxy = self.proxy.clone();
        self.ctx.set_request_repaint_callback(move |asked| {
            let when = Instant::now() + asked.delay;
            let pass = asked.current_cumulative_pass_nr;
            // Fails only once the loop is gone, when no frame is wanted.
            let _ = proxy.send_event(Wake::Repaint { when, pass });
        });
        // The app may ask for the system theme while it is made.
        self.ctx.options_mut(|options| options.begin_pass(input.egui_input()));
        let app = make(&self.ctx);
        self.shown = Some(Shown {
            app,
            window,
            screen,
            input,
            info,
            renderer: EguiSoftwareRender::new(ColorFieldOrder::Bgra),
            textures: egui::TexturesDelta::default(),
            painted: None,
            // eframe's constructor for a frame outside its own runner (egui_kittest's too): no
            // GL context, no storage, which `App` does not use.
            frame: eframe::Frame::_new_kittest(),
            first_pass_done: false,
            closing: false,
            quiet: self.keep_below.map(crate::window::focus::QuietArrival::new),
        });
        self.repaint_at = Some(Instant::now());
        Ok(())
    }

    /// Runs one pass of the app and paints it; ends the loop when the app lets the window close.
    fn pass(&mut self, event_loop: &ActiveEventLoop) {
        let Some(shown) = &mut self.shown else { return };
        if let Err(error) = shown.pass(&self.ctx) {
            self.error = Some(error);
            shown.closing = true;
        }
        if shown.closing {
            event_loop.exit();
        }
    }

    /// Calls the app's `on_exit` once and drops the window.
    fn close(&mut self) {
        if let Some(mut shown) = self.shown.take() {
            shown.app.on_exit(None);
            shown.window.set_visible(false);
            // What was never painted is dropped with the window.
            shown.textures.clear();
        }
    }
}

impl<A: eframe::App> Shown<A> {
    fn pass(&mut self, ctx: &egui::Context) -> Result<(), String> {
        egui_winit::update_viewport_info(&mut self.info, ctx, &self.window, false);
        let mut raw_input = self.input.take_egui_input(&self.window);
        raw_input.viewports =
            std::iter::once((egui::ViewportId::ROOT, self.info.clone())).collect();
        // As eframe does before every frame: the app sees the input first (its click guard).
        self.app.raw_input_hook(ctx, &mut raw_input);
        let close_requested = raw_input.viewport().close_requested();
        let visible = !self.first_pass_done || self.info.visible().unwrap_or(true);
        let (platform_output, commands) = if visible {
            let output = ctx.run_ui(raw_input, |ui| {
                self.app.logic(ui.ctx(), &mut self.frame);
                self.app.ui(ui, &mut self.frame);
            });
            let commands = output
                .viewport_output
                .get(&egui::ViewportId::ROOT)
                .map(|viewport| viewport.commands.clone())
                .unwrap_or_default();
            self.textures.append(output.textures_delta);
            // Before the window is mapped nothing would be seen: the server's Expose at the
            // mapping asks for the first picture (issue 14: the cold start draws once).
            if self.first_pass_done {
                self.paint(ctx, output.shapes, output.pixels_per_point)?;
            }
            (output.platform_output, commands)
        } else {
            // Hidden: only the app's logic runs (it may ask to be shown), as eframe does.
            let output = ctx.run_logic(&raw_input, |ctx| self.app.logic(ctx, &mut self.frame));
            let commands =
                output.viewport_commands.get(&egui::ViewportId::ROOT).cloned().unwrap_or_default();
            (output.platform_output, commands)
        };
        self.info.events.clear();
        self.input.handle_platform_output(&self.window, platform_output);
        if close_requested && !commands.contains(&egui::ViewportCommand::CancelClose) {
            self.closing = true;
            return Ok(());
        }
        let hides = commands.contains(&egui::ViewportCommand::Visible(false));
        if !std::mem::replace(&mut self.first_pass_done, true) && !hides {
            self.window.set_visible(true);
        }
        let mut actions = Vec::new();
        egui_winit::process_viewport_commands(
            ctx,
            &mut self.info,
            commands,
            &self.window,
            &mut actions,
        );
        for action in actions {
            self.act(action);
        }
        if let Some(quiet) = &mut self.quiet {
            let id = crate::window::focus::x11_id(&self.window);
            let visible = self.window.is_visible().unwrap_or(false);
            let asked_for = askpane::app::take_window_asked_for(ctx);
            if quiet.after_frame(id, visible, asked_for) {
                ctx.request_repaint_after(std::time::Duration::from_millis(50));
            }
        }
        Ok(())
    }

    /// Draws the tiles whose shapes changed since the last frame and sends them to the server.
    fn paint(
        &mut self,
        ctx: &egui::Context,
        shapes: Vec<egui::epaint::ClippedShape>,
        pixels_per_point: f32,
    ) -> Result<(), String> {
        let size = self.window.inner_size();
        let (width, height) = (size.width as usize, size.height as usize);
        if width == 0 || height == 0 {
            return Ok(());
        }
        let clear_color = self.app.clear_color(&ctx.global_style().visuals);
        let background = opaque_pixel(clear_color, ColorFieldOrder::Bgra);
        let now = Painted { shapes, pixels_per_point, background, width, height };
        let damage = if self.textures.is_empty() && self.painted.as_ref() == Some(&now) {
            // The same picture again (egui's settling pass): nothing to draw, but pixels the
            // server lost meanwhile are still sent.
            Vec::new()
        } else {
            let clipped = tessellate_apart(ctx, now.shapes.clone(), pixels_per_point);
            let (pixels, whole) = self.screen.pixels.next_frame(width, height, background);
            let mut target = BufferMutRef::new(pixels, width, height);
            let damage = self.renderer.render_damage(
                &mut target,
                &clipped,
                &self.textures,
                pixels_per_point,
                background,
                whole,
            );
            self.textures.clear();
            self.painted = Some(now);
            damage
        };
        self.window.pre_present_notify();
        self.screen.present(&damage).map_err(|error| format!("cannot draw the window: {error}"))
    }

    /// Clipboard shortcuts the app asked for through viewport commands.
    fn act(&mut self, action: egui_winit::ActionRequested) {
        use egui_winit::ActionRequested;
        let event = match action {
            ActionRequested::Cut => Some(egui::Event::Cut),
            ActionRequested::Copy => Some(egui::Event::Copy),
            ActionRequested::Paste => self
                .input
                .clipboard_text()
                .map(|text| text.replace("\r\n", "\n"))
                .filter(|text| !text.is_empty())
                .map(egui::Event::Paste),
            // No screenshots here; painting while hidden is what `logic` passes are for.
            ActionRequested::Screenshot(_) | ActionRequested::PaintWhileHidden => None,
        };
        if let Some(event) = event {
            self.input.egui_input_mut().events.push(event);
            self.input.egui_ctx().request_repaint();
        }
    }
}

/// egui's shapes as clipped primitives, one tessellation per shape painted: egui's own
/// tessellation merges every mesh under one clip rectangle into one, which the rasterizer caches
/// as one piece, so one character typed redrew the whole window. Apart, a key that changes one
/// text redraws that text (and the tiles it covers), as egui draws it (the same tessellator).
pub(super) fn tessellate_apart(
    ctx: &egui::Context,
    shapes: Vec<egui::epaint::ClippedShape>,
    pixels_per_point: f32,
) -> Vec<egui::ClippedPrimitive> {
    let mut primitives = Vec::with_capacity(shapes.len());
    for shape in shapes {
        primitives.extend(ctx.tessellate(vec![shape], pixels_per_point));
    }
    primitives
}

/// What a frame painted: the same again paints the same pixels.
#[derive(PartialEq)]
struct Painted {
    shapes: Vec<egui::epaint::ClippedShape>,
    pixels_per_point: f32,
    background: [u8; 4],
    width: usize,
    height: usize,
}

/// Why there is no [`XDisplay`].
enum Unusable {
    /// No X server to connect to: no window can open at all.
    NoDisplay(String),
    /// An X server (or a Wayland session) this window cannot draw on; OpenGL may.
    CannotDraw(String),
}

/// A connection to the X server whose pixels are 32 bits, least significant byte first (every
/// X server askpane meets: Xorg, Xvfb, Xwayland on x86 and ARM).
struct XDisplay {
    connection: RustConnection,
}

impl XDisplay {
    fn connect() -> Result<XDisplay, Unusable> {
        if std::env::var_os("WAYLAND_DISPLAY").is_some() {
            let reason = "a Wayland session (the CPU window is X11 only)";
            return Err(Unusable::CannotDraw(reason.into()));
        }
        // Worded as winit words it, which the callers' "no display" message quotes.
        let (connection, _screen) = x11rb::connect(None).map_err(|error| {
            Unusable::NoDisplay(format!("Failed to open connection to X server ({error})"))
        })?;
        let setup = connection.setup();
        if setup.image_byte_order != xproto::ImageOrder::LSB_FIRST {
            let reason = "the X server's pixels are most significant byte first";
            return Err(Unusable::CannotDraw(reason.into()));
        }
        Ok(XDisplay { connection })
    }

    /// Prepares drawing into `window` (winit's): a graphics context on it and its depth.
    fn window(self, window: &Window) -> Result<XWindow, String> {
        use raw_window_handle::{HasWindowHandle as _, RawWindowHandle};
        let handle = window.window_handle().map_err(|error| error.to_string())?;
        let id = match handle.as_raw() {
            RawWindowHandle::Xlib(xlib) => u32::try_from(xlib.window).ok(),
            RawWindowHandle::Xcb(xcb) => Some(xcb.window.get()),
            _ => None,
        }
        .ok_or("the window is not an X11 window")?;
        let failed = |error: &dyn std::fmt::Display| format!("cannot draw on the window: {error}");
        let depth = self
            .connection
            .get_geometry(id)
            .map_err(|e| failed(&e))?
            .reply()
            .map_err(|e| failed(&e))?
            .depth;
        let bits = self
            .connection
            .setup()
            .pixmap_formats
            .iter()
            .find(|format| format.depth == depth)
            .map(|format| format.bits_per_pixel);
        if bits != Some(32) {
            return Err(format!("the window's pixels are {bits:?} bits for depth {depth}, not 32"));
        }
        // The server's own Expose events tell us when it lost the window's pixels (winit's
        // redraw does not say why it came); each client chooses its own events.
        let exposures =
            xproto::ChangeWindowAttributesAux::new().event_mask(xproto::EventMask::EXPOSURE);
        self.connection.change_window_attributes(id, &exposures).map_err(|e| failed(&e))?;
        let gc = self.connection.generate_id().map_err(|e| failed(&e))?;
        self.connection
            .create_gc(gc, id, &xproto::CreateGCAux::new().graphics_exposures(0))
            .map_err(|e| failed(&e))?;
        Ok(XWindow {
            connection: self.connection,
            window: id,
            gc,
            depth,
            pixels: CpuFrame::default(),
            band: Vec::new(),
        })
    }
}

/// The window's pixels: the frame being drawn, and what the X server was last sent.
struct XWindow {
    connection: RustConnection,
    window: xproto::Window,
    gc: xproto::Gcontext,
    depth: u8,
    pixels: CpuFrame,
    /// The rows of one rectangle being sent, reused from request to request.
    band: Vec<[u8; 4]>,
}

impl XWindow {
    /// Sends the rectangles of the frame that `damage` says changed (all of it when the server
    /// lost the window's pixels), in requests the server accepts; the frame is then the one shown.
    fn present(&mut self, damage: &[Damage]) -> Result<(), x11rb::errors::ConnectionError> {
        while let Some(event) = self.connection.poll_for_event()? {
            if let x11rb::protocol::Event::Expose(_) = event {
                self.pixels.mark_stale();
            }
        }
        let rects = self.pixels.to_send(damage);
        // A request's header is 24 bytes; the rest of what the server allows is pixels.
        let budget = self.connection.maximum_request_bytes().saturating_sub(64);
        for rect in &rects {
            let band = (budget / (rect.width * 4)).max(1);
            let mut first = 0;
            while first < rect.height {
                let rows = band.min(rect.height - first);
                self.pixels.copy_rect(*rect, first, rows, &mut self.band);
                xproto::put_image(
                    &self.connection,
                    xproto::ImageFormat::Z_PIXMAP,
                    self.window,
                    self.gc,
                    rect.width as u16,
                    rows as u16,
                    rect.x as i16,
                    (rect.y + first) as i16,
                    0,
                    self.depth,
                    self.band.as_flattened(),
                )?;
                first += rows;
            }
        }
        if !rects.is_empty() {
            self.connection.flush()?;
        }
        self.pixels.shown_now();
        Ok(())
    }
}

impl<A: eframe::App, F: FnOnce(&egui::Context) -> A> ApplicationHandler<Wake> for Runner<A, F> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if let Err(error) = self.open(event_loop) {
            self.error = Some(error);
            event_loop.exit();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(shown) = &mut self.shown else { return };
        match &event {
            WindowEvent::RedrawRequested => {
                self.repaint_at = None;
                self.pass(event_loop);
                return;
            }
            WindowEvent::CloseRequested => {
                // The app decides in its next pass (it may cancel: answers in progress).
                shown.info.events.push(egui::ViewportEvent::Close);
            }
            WindowEvent::Destroyed => {
                // Another program destroyed the window: nothing can be shown any more.
                shown.closing = true;
                event_loop.exit();
                return;
            }
            _ => {}
        }
        let response = shown.input.on_window_event(&shown.window, &event);
        let resized =
            matches!(event, WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. });
        if response.repaint || resized || matches!(event, WindowEvent::CloseRequested) {
            shown.window.request_redraw();
        }
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, wake: Wake) {
        let Some(shown) = &mut self.shown else { return };
        match wake {
            Wake::Repaint { when, pass } => {
                // A request made before the last frame was drawn is already met, as in eframe.
                let current = self.ctx.cumulative_pass_nr_for(egui::ViewportId::ROOT);
                if current == pass || current == pass + 1 {
                    self.repaint_at = Some(self.repaint_at.map_or(when, |due| due.min(when)));
                }
            }
            Wake::AccessKit(event) => match event.window_event {
                accesskit_winit::WindowEvent::InitialTreeRequested => {
                    self.ctx.enable_accesskit();
                    self.ctx.request_repaint();
                }
                accesskit_winit::WindowEvent::ActionRequested(request) => {
                    shown.input.on_accesskit_action_request(request);
                    shown.window.request_redraw();
                }
                accesskit_winit::WindowEvent::AccessibilityDeactivated => {
                    self.ctx.disable_accesskit();
                }
            },
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(shown) = &self.shown else { return };
        match self.repaint_at {
            Some(due) if due <= Instant::now() => {
                self.repaint_at = None;
                shown.window.request_redraw();
                event_loop.set_control_flow(ControlFlow::Wait);
            }
            Some(due) => event_loop.set_control_flow(ControlFlow::WaitUntil(due)),
            None => event_loop.set_control_flow(ControlFlow::Wait),
        }
    }
}

#[cfg(test)]
#[path = "cpu_tests.rs"]
mod tests;
