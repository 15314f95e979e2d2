//! A frame drawn by the CPU rasterizer, kept from one frame to the next, and which rectangles of
//! it the X server must be sent: the native window without a GPU (`window::cpu`, X11) sends only
//! the tiles a key press changed.

use egui_software_backend::{ColorFieldOrder, Damage};

/// egui's clear colour (gamma-space, 0..1) as one opaque pixel in the rasterizer's `order`: the
/// frame's background.
pub fn opaque_pixel(color: [f32; 4], order: ColorFieldOrder) -> [u8; 4] {
    let [red, green, blue, _] =
        color.map(|channel| (channel.clamp(0.0, 1.0) * 255.0).round() as u8);
    match order {
        ColorFieldOrder::Rgba => [red, green, blue, 255],
        ColorFieldOrder::Bgra => [blue, green, red, 255],
    }
}

/// The window's pixels, `width` × `height` of 4 bytes: the last frame drawn, which the next one
/// is drawn over (only where it changed).
#[derive(Default)]
pub struct CpuFrame {
    pixels: Vec<[u8; 4]>,
    width: usize,
    height: usize,
    /// The background the pixels were drawn over (`None`: nothing drawn yet).
    background: Option<[u8; 4]>,
    /// What is on screen is not `pixels` (a new size, pixels the server lost): the next
    /// frame is sent whole.
    stale: bool,
}

impl CpuFrame {
    /// The pixels to draw the next frame into, `width` × `height`, and whether they must be
    /// drawn whole: `true` when they do not hold the last frame over this `background` (a new
    /// size, another background, the first frame), in which case they are cleared to it.
    pub fn next_frame(
        &mut self,
        width: usize,
        height: usize,
        background: [u8; 4],
    ) -> (&mut [[u8; 4]], bool) {
        let whole =
            (width, height) != (self.width, self.height) || self.background != Some(background);
        if whole {
            (self.width, self.height, self.stale) = (width, height, true);
            self.background = Some(background);
            // One row filled pixel by pixel, the others copied from it (memcpy): fast in the
            // unoptimised builds the window tests run.
            self.pixels.clear();
            self.pixels.resize(width, background);
            for _ in 1..height {
                self.pixels.extend_from_within(..width);
            }
        }
        (&mut self.pixels, whole)
    }

    /// The screen lost what was shown: the next frame is sent whole.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// What to send the server after a frame that changed `damage`: all of it when the screen
    /// does not hold the last frame, else `damage` kept within the frame.
    pub fn to_send(&self, damage: &[Damage]) -> Vec<Damage> {
        if self.width == 0 || self.height == 0 {
            return Vec::new();
        }
        if self.stale {
            return vec![Damage { x: 0, y: 0, width: self.width, height: self.height }];
        }
        damage
            .iter()
            .filter_map(|rect| {
                let x = rect.x.min(self.width);
                let y = rect.y.min(self.height);
                let width = rect.width.min(self.width - x);
                let height = rect.height.min(self.height - y);
                (width > 0 && height > 0).then_some(Damage { x, y, width, height })
            })
            .collect()
    }

    /// The pixels of `rows` rows of `rect` from its row `first` (within the frame, as
    /// [`Self::to_send`] gives them), row after row, into `out`.
    pub fn copy_rect(&self, rect: Damage, first: usize, rows: usize, out: &mut Vec<[u8; 4]>) {
        out.clear();
        for y in rect.y + first..(rect.y + first + rows).min(rect.y + rect.height) {
            let start = y * self.width + rect.x;
            out.extend_from_slice(self.pixels.get(start..start + rect.width).unwrap_or_default());
        }
    }

    /// This frame is now on screen.
    pub fn shown_now(&mut self) {
        self.stale = false;
    }
}

#[cfg(test)]
mod tests;
