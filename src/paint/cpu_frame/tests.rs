//! Tests of the CPU frame: what is drawn into and sent to the server. The drawing itself, against
//! a full rasterization, is tested in `window/cpu_tests.rs` (it needs egui).

use egui_software_backend::{ColorFieldOrder, Damage};

use super::{CpuFrame, opaque_pixel};

const WHITE: [u8; 4] = [255; 4];
const BLACK: [u8; 4] = [0, 0, 0, 255];

fn rect(x: usize, y: usize, width: usize, height: usize) -> Damage {
    Damage { x, y, width, height }
}

#[test]
fn the_first_frame_is_sent_whole_and_then_only_its_damage() {
    let mut frame = CpuFrame::default();
    let (_, whole) = frame.next_frame(3, 4, WHITE);
    assert!(whole);
    assert_eq!(frame.to_send(&[]), vec![rect(0, 0, 3, 4)]);
    frame.shown_now();
    let (_, whole) = frame.next_frame(3, 4, WHITE);
    assert!(!whole);
    assert_eq!(frame.to_send(&[]), vec![]);
    assert_eq!(frame.to_send(&[rect(1, 1, 9, 9)]), vec![rect(1, 1, 2, 3)], "kept within");
}

#[test]
fn the_pixels_are_kept_from_frame_to_frame() {
    let mut frame = CpuFrame::default();
    let (pixels, _) = frame.next_frame(3, 2, WHITE);
    pixels[4] = BLACK;
    frame.shown_now();
    let (pixels, whole) = frame.next_frame(3, 2, WHITE);
    assert!(!whole);
    assert_eq!(pixels[4], BLACK);
    let mut out = Vec::new();
    frame.copy_rect(rect(1, 0, 2, 2), 1, 1, &mut out);
    assert_eq!(out, vec![BLACK, WHITE]);
    frame.copy_rect(rect(1, 0, 2, 2), 0, 5, &mut out);
    assert_eq!(out, vec![WHITE, WHITE, BLACK, WHITE]);
}

#[test]
fn a_new_size_another_background_or_lost_pixels_send_everything_again() {
    let mut frame = CpuFrame::default();
    frame.next_frame(3, 2, WHITE);
    frame.shown_now();
    let (pixels, whole) = frame.next_frame(3, 3, WHITE);
    assert!(whole);
    assert_eq!(pixels.len(), 9);
    assert_eq!(frame.to_send(&[]), vec![rect(0, 0, 3, 3)]);
    frame.shown_now();
    let (pixels, whole) = frame.next_frame(3, 3, BLACK);
    assert!(whole);
    assert!(pixels.iter().all(|pixel| *pixel == BLACK));
    frame.shown_now();
    frame.next_frame(3, 3, BLACK);
    frame.mark_stale();
    assert_eq!(frame.to_send(&[rect(0, 0, 1, 1)]), vec![rect(0, 0, 3, 3)]);
}

#[test]
fn the_background_is_opaque_in_either_order() {
    let colour = [1.0, 0.5, 0.0, 0.2];
    assert_eq!(opaque_pixel(colour, ColorFieldOrder::Rgba), [255, 128, 0, 255]);
    assert_eq!(opaque_pixel(colour, ColorFieldOrder::Bgra), [0, 128, 255, 255]);
    assert_eq!(opaque_pixel([2.0, -1.0, 0.0, 1.0], ColorFieldOrder::Rgba), [255, 0, 0, 255]);
}

#[test]
fn an_empty_frame_sends_nothing() {
    let mut frame = CpuFrame::default();
    frame.next_frame(0, 0, WHITE);
    assert_eq!(frame.to_send(&[rect(0, 0, 1, 1)]), vec![]);
    let mut out = vec![WHITE];
    frame.copy_rect(rect(0, 0, 1, 1), 0, 1, &mut out);
    assert!(out.is_empty());
}
