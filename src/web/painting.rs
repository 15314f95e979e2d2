//! How the page is painted: with WebGL through eframe where the browser has a GPU, and by the
//! CPU rasterizer into a 2D canvas where WebGL is a software renderer or missing, as the native
//! window chooses (`window::chosen_drawing`, issue 14). A software WebGL (Chromium's
//! SwiftShader, Mesa's llvmpipe) makes the first frame wait on the GPU process and read the
//! picture back; drawn by the CPU it came 10–50 ms sooner (`scripts/bench-web` times both).

use std::sync::Arc;

use egui_software_backend::{BufferMutRef, ColorFieldOrder, EguiSoftwareRender};
use wasm_bindgen::{Clamped, JsCast as _, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use crate::paint::cpu_frame::{CpuFrame, opaque_pixel};
use crate::paint::{Drawing, is_software_renderer};

/// The fragment's `drawing=cpu|gpu` when it names one, otherwise the CPU where WebGL is missing
/// or drawn in software, and WebGL elsewhere. Says in the console why the CPU draws.
pub fn chosen_drawing(asked: Option<&str>) -> Drawing {
    match Drawing::asked(asked) {
        Ok(Some(asked)) => return asked,
        Ok(None) => {}
        Err(other) => log::warn!("drawing={other} is neither cpu nor gpu: the browser decides"),
    }
    match webgl_renderer() {
        None => {
            log::info!("no WebGL: the page is drawn by the CPU");
            Drawing::Cpu
        }
        Some(renderer) if is_software_renderer(&renderer) => {
            log::info!("WebGL is drawn in software ({renderer}): the page is drawn by the CPU");
            Drawing::Cpu
        }
        Some(_) => Drawing::Gpu,
    }
}

/// The painter eframe is to use instead of its own WebGL one, if any.
pub fn painter(drawing: Drawing) -> Option<eframe::WebPainterMaker> {
    match drawing {
        Drawing::Gpu => None,
        Drawing::Cpu => Some(Box::new(|_ctx, canvas| {
            Ok(Box::new(CpuPainter::new(canvas)?) as Box<dyn eframe::web::WebPainter>)
        })),
    }
}

/// What draws WebGL in this browser, as the page found out while the app downloaded
/// (`window.askpaneWebGl` in index.html: the unmasked renderer's name, or null without WebGL).
/// `Some("")` when the page did not say: eframe's WebGL then, as without this choice.
fn webgl_renderer() -> Option<String> {
    let said = web_sys::window()
        .and_then(|window| js_sys::Reflect::get(&window, &JsValue::from_str("askpaneWebGl")).ok())
        .unwrap_or(JsValue::UNDEFINED);
    match said.as_string() {
        Some(renderer) => Some(renderer),
        None if said.is_null() => None,
        None => Some(String::new()),
    }
}

/// Paints egui's frames with the CPU rasterizer into the canvas's 2D context.
struct CpuPainter {
    canvas: HtmlCanvasElement,
    context: CanvasRenderingContext2d,
    renderer: EguiSoftwareRender,
    pixels: CpuFrame,
}

impl CpuPainter {
    fn new(canvas: HtmlCanvasElement) -> Result<CpuPainter, String> {
        // Opaque: every pixel is drawn, and the compositor need not blend the canvas.
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &JsValue::from_str("alpha"), &JsValue::FALSE);
        let context = canvas
            .get_context_with_context_options("2d", &options)
            .ok()
            .flatten()
            .and_then(|context| context.dyn_into::<CanvasRenderingContext2d>().ok())
            .ok_or("the canvas has no 2D context")?;
        Ok(CpuPainter {
            canvas,
            context,
            // Straight into the frame, not through the rasterizer's cache of primitives: in the
            // browser that was faster for every frame measured, the first one most (about
            // 20 ms against 35 on a 960×680 page; `scripts/bench-web`).
            renderer: EguiSoftwareRender::new(ColorFieldOrder::Rgba).with_caching(false),
            pixels: CpuFrame::default(),
        })
    }
}

impl eframe::web::WebPainter for CpuPainter {
    fn canvas(&self) -> &HtmlCanvasElement {
        &self.canvas
    }

    fn max_texture_side(&self) -> usize {
        // The rasterizer has no limit of its own; this is WebGL's common one.
        8192
    }

    fn paint_and_update_textures(
        &mut self,
        clear_color: [f32; 4],
        clipped_primitives: &[egui::ClippedPrimitive],
        pixels_per_point: f32,
        textures_delta: &mut egui::TexturesDelta,
        capture: Vec<egui::ScreenshotCallback>,
    ) -> Result<(), JsValue> {
        let (width, height) = (self.canvas.width() as usize, self.canvas.height() as usize);
        if width == 0 || height == 0 {
            // Nothing to draw on; the textures wait in the delta for the next frame.
            return Ok(());
        }
        let background = opaque_pixel(clear_color, ColorFieldOrder::Rgba);
        let pixels = self.pixels.next_frame(width, height, background);
        let mut target = BufferMutRef::new(pixels, width, height);
        self.renderer.render(&mut target, clipped_primitives, textures_delta, pixels_per_point);
        textures_delta.clear();
        // The whole frame, every time: egui asks for a frame only when something changed, and
        // in wasm comparing the rows to send fewer cost more (3 ms a frame at 960×680) than
        // copying them all. Setting the canvas's size clears it, too, without a word.
        let everything = self.pixels.rows(0..height).as_flattened();
        let image = ImageData::new_with_u8_clamped_array_and_sh(
            Clamped(everything),
            width as u32,
            height as u32,
        )?;
        self.context.put_image_data(&image, 0.0, 0.0)?;
        if !capture.is_empty() {
            let image =
                Arc::new(egui::ColorImage::from_rgba_unmultiplied([width, height], everything));
            for callback in capture {
                callback.complete(Arc::clone(&image));
            }
        }
        Ok(())
    }

    fn destroy(&mut self) {
        self.pixels = CpuFrame::default();
    }
}
