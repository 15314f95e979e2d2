//! A frame drawn by the CPU rasterizer, and which of its rows differ from the frame last shown:
//! the native window without a GPU (`window::cpu`, X11) sends the X server only the rows a key
//! press changed.

use std::ops::Range;

use egui_software_backend::ColorFieldOrder;

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

/// The frame being drawn and the one last shown, both `width` × `height` pixels of 4 bytes.
#[derive(Default)]
pub struct CpuFrame {
    frame: Vec<[u8; 4]>,
    shown: Vec<[u8; 4]>,
    width: usize,
    height: usize,
    /// What is on screen is not `shown` (a new size, pixels the server lost): every row changed.
    stale: bool,
}

impl CpuFrame {
    /// The next frame, `width` × `height`, cleared to `background`.
    pub fn next_frame(
        &mut self,
        width: usize,
        height: usize,
        background: [u8; 4],
    ) -> &mut [[u8; 4]] {
        if (width, height) != (self.width, self.height) {
            (self.width, self.height, self.stale) = (width, height, true);
            self.shown.clear();
        }
        // One row filled pixel by pixel, the others copied from it (memcpy): fast in the
        // unoptimised builds the window tests run, as the byte comparisons in `changed_rows` are.
        self.frame.clear();
        self.frame.resize(width, background);
        for _ in 1..height {
            self.frame.extend_from_within(..width);
        }
        &mut self.frame
    }

    /// The screen lost what was shown: the next frame is sent whole.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Pixels in a row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The rows of this frame that differ from the frame shown (all of them when stale), from
    /// the first to the last that changed; `None` when nothing did.
    pub fn changed_rows(&self) -> Option<Range<usize>> {
        let row = self.width.max(1);
        let rows = self.frame.chunks_exact(row);
        let changed = |(index, pixels): &(usize, &[[u8; 4]])| {
            let before =
                self.shown.get(index * row..(index + 1) * row).map(<[[u8; 4]]>::as_flattened);
            self.stale || before != Some(pixels.as_flattened())
        };
        let first = rows.clone().enumerate().position(|entry| changed(&entry))?;
        let last = rows.enumerate().rev().find(|entry| changed(entry)).map(|(index, _)| index)?;
        Some(first..last + 1)
    }

    /// The pixels of `rows` of this frame, row after row.
    pub fn rows(&self, rows: Range<usize>) -> &[[u8; 4]] {
        self.frame.get(rows.start * self.width..rows.end * self.width).unwrap_or_default()
    }

    /// This frame is now on screen: the next one is compared with it.
    pub fn shown_now(&mut self) {
        std::mem::swap(&mut self.frame, &mut self.shown);
        self.stale = false;
    }
}

#[cfg(test)]
mod tests {
    use egui_software_backend::ColorFieldOrder;

    use super::{CpuFrame, opaque_pixel};

    const WHITE: [u8; 4] = [255; 4];
    const BLACK: [u8; 4] = [0, 0, 0, 255];

    #[test]
    fn a_new_frame_changes_every_row_and_the_same_frame_again_none() {
        let mut frame = CpuFrame::default();
        frame.next_frame(3, 4, WHITE);
        assert_eq!(frame.changed_rows(), Some(0..4));
        frame.shown_now();
        frame.next_frame(3, 4, WHITE);
        assert_eq!(frame.changed_rows(), None);
    }

    #[test]
    fn only_the_rows_from_the_first_to_the_last_change_are_sent() {
        let mut frame = CpuFrame::default();
        frame.next_frame(3, 6, WHITE);
        frame.shown_now();
        let pixels = frame.next_frame(3, 6, WHITE);
        pixels[3 + 1] = BLACK; // row 1
        pixels[3 * 3 + 2] = BLACK; // row 3
        assert_eq!(frame.changed_rows(), Some(1..4));
        assert_eq!(frame.rows(1..2), &[WHITE, BLACK, WHITE]);
    }

    #[test]
    fn a_new_size_or_lost_pixels_send_everything_again() {
        let mut frame = CpuFrame::default();
        frame.next_frame(3, 2, WHITE);
        frame.shown_now();
        frame.next_frame(3, 3, WHITE);
        assert_eq!(frame.changed_rows(), Some(0..3));
        frame.shown_now();
        frame.next_frame(3, 3, WHITE);
        frame.mark_stale();
        assert_eq!(frame.changed_rows(), Some(0..3));
    }

    #[test]
    fn the_background_is_opaque_in_either_order() {
        let colour = [1.0, 0.5, 0.0, 0.2];
        assert_eq!(opaque_pixel(colour, ColorFieldOrder::Rgba), [255, 128, 0, 255]);
        assert_eq!(opaque_pixel(colour, ColorFieldOrder::Bgra), [0, 128, 255, 255]);
        assert_eq!(opaque_pixel([2.0, -1.0, 0.0, 1.0], ColorFieldOrder::Rgba), [255, 0, 0, 255]);
    }

    #[test]
    fn an_empty_frame_has_no_rows() {
        let mut frame = CpuFrame::default();
        frame.next_frame(0, 0, WHITE);
        assert_eq!(frame.changed_rows(), None);
        assert!(frame.rows(0..1).is_empty());
    }
}
