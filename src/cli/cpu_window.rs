//! The native window drawn by the CPU (issue 14): winit and egui-winit as eframe uses them, the
//! vendored `egui_software_backend` rasterizer, and softbuffer to put the pixels on screen.
//!
//! Why: on a machine without a GPU, eframe's OpenGL means Mesa's llvmpipe, which maps and
//! relocates libLLVM before the first frame and keeps 60 MB of it for as long as the window
//! lives, while drawing a form of text and rectangles is a millisecond of CPU work. This runner
//! drives the same [`eframe::App`] as eframe does (`logic`, then `ui`, a close the app may
//! cancel, a hidden window that runs only `logic`), so `App` does not know which one draws it.

use std::num::NonZeroU32;
use std::rc::Rc;
use std::time::Instant;

use egui_software_backend::{BufferMutRef, ColorFieldOrder, EguiSoftwareRender};
use egui_winit::accesskit_winit;
use egui_winit::winit;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::platform::run_on_demand::EventLoopExtRunOnDemand;
use winit::window::{Window, WindowId};

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

/// Shows one window drawn by the CPU until the app lets it close. `make` builds the app once the
/// window exists (hidden until its first frame is painted). `leave_keyboard`: the window manager
/// is asked not to focus the window when it appears. The error says why no window could open.
pub(super) fn run<A: eframe::App>(
    builder: egui::ViewportBuilder,
    leave_keyboard: bool,
    make: impl FnOnce(&egui::Context) -> A,
) -> Result<(), String> {
    EVENT_LOOP.with(|cell| {
        let mut slot = cell.borrow_mut();
        let event_loop = match slot.as_mut() {
            Some(event_loop) => event_loop,
            None => slot.insert(new_event_loop()?),
        };
        let mut runner = Runner {
            ctx: egui::Context::default(),
            builder,
            leave_keyboard,
            make: Some(make),
            proxy: event_loop.create_proxy(),
            shown: None,
            repaint_at: None,
            error: None,
        };
        let ran = event_loop.run_app_on_demand(&mut runner);
        // The app is dropped with its window, before the next one can start.
        runner.close();
        match (runner.error, ran) {
            (Some(error), _) => Err(error),
            (None, Err(error)) => Err(error.to_string()),
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
    make: Option<F>,
    proxy: EventLoopProxy<Wake>,
    shown: Option<Shown<A>>,
    /// When the next frame is due, if one is.
    repaint_at: Option<Instant>,
    error: Option<String>,
}

/// The window and what draws into it, from its creation to its close.
struct Shown<A> {
    app: A,
    window: Rc<Window>,
    surface: softbuffer::Surface<Rc<Window>, Rc<Window>>,
    input: egui_winit::State,
    info: egui::ViewportInfo,
    renderer: EguiSoftwareRender,
    /// Texture changes not yet given to the renderer (a frame of zero size paints nothing).
    textures: egui::TexturesDelta,
    frame: eframe::Frame,
    /// The window stays unmapped until its first frame is painted (no empty flash), as eframe.
    painted_once: bool,
    /// The app let a close go ahead.
    closing: bool,
}

impl<A: eframe::App, F: FnOnce(&egui::Context) -> A> Runner<A, F> {
    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        let Some(make) = self.make.take() else { return Ok(()) };
        let builder = self.builder.clone().with_visible(false);
        let window = egui_winit::create_window(&self.ctx, event_loop, &builder)
            .map_err(|error| error.to_string())?;
        let window = Rc::new(window);
        if self.leave_keyboard {
            askpane::window_manager::never_take_focus_on_arrival(&*window);
        }
        let context =
            softbuffer::Context::new(Rc::clone(&window)).map_err(|error| error.to_string())?;
        let surface = softbuffer::Surface::new(&context, Rc::clone(&window))
            .map_err(|error| error.to_string())?;
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
            surface,
            input,
            info,
            renderer: EguiSoftwareRender::new(ColorFieldOrder::Bgra),
            textures: egui::TexturesDelta::default(),
            frame: eframe::Frame::_new_kittest(),
            painted_once: false,
            closing: false,
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
        let close_requested = raw_input.viewport().close_requested();
        let visible = !self.painted_once || self.info.visible().unwrap_or(true);
        let (platform_output, commands, painted) = if visible {
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
            let clipped = ctx.tessellate(output.shapes, output.pixels_per_point);
            self.paint(ctx, &clipped, output.pixels_per_point)?;
            (output.platform_output, commands, true)
        } else {
            // Hidden: only the app's logic runs (it may ask to be shown), as eframe does.
            let output = ctx.run_logic(&raw_input, |ctx| self.app.logic(ctx, &mut self.frame));
            let commands =
                output.viewport_commands.get(&egui::ViewportId::ROOT).cloned().unwrap_or_default();
            (output.platform_output, commands, false)
        };
        self.info.events.clear();
        self.input.handle_platform_output(&self.window, platform_output);
        if close_requested && !commands.contains(&egui::ViewportCommand::CancelClose) {
            self.closing = true;
            return Ok(());
        }
        let hides = commands.contains(&egui::ViewportCommand::Visible(false));
        if painted && !std::mem::replace(&mut self.painted_once, true) && !hides {
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
        Ok(())
    }

    fn paint(
        &mut self,
        ctx: &egui::Context,
        clipped: &[egui::ClippedPrimitive],
        pixels_per_point: f32,
    ) -> Result<(), String> {
        let size = self.window.inner_size();
        let (Some(width), Some(height)) =
            (NonZeroU32::new(size.width), NonZeroU32::new(size.height))
        else {
            return Ok(());
        };
        self.surface.resize(width, height).map_err(|error| error.to_string())?;
        let mut buffer = self.surface.buffer_mut().map_err(|error| error.to_string())?;
        let background = self.app.clear_color(&ctx.global_style().visuals);
        buffer.fill(opaque_xrgb(background));
        let pixels: &mut [[u8; 4]] = bytemuck::cast_slice_mut(&mut buffer);
        let mut target = BufferMutRef::new(pixels, width.get() as usize, height.get() as usize);
        self.renderer.render(&mut target, clipped, &self.textures, pixels_per_point);
        self.textures.clear();
        self.window.pre_present_notify();
        buffer.present().map_err(|error| error.to_string())
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

/// egui's clear colour (gamma-space, 0..1) as softbuffer's `0x00RRGGBB`.
fn opaque_xrgb(color: [f32; 4]) -> u32 {
    let [red, green, blue, _] =
        color.map(|channel| (channel.clamp(0.0, 1.0) * 255.0).round() as u32);
    (red << 16) | (green << 8) | blue
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
