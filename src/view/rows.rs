//! A scrolled column that lays out only the rows in view: a long session's transcript (issue 14:
//! 10 000 events, a frame ≤ 2 ms) costs what the visible rows cost.
//!
//! Rows differ in height (a paragraph of markdown, a one-line tool call, an opened result), so
//! each row's height is learnt when it is shown and kept in egui's memory; a row never shown
//! counts as the estimate. Scrolling past rows not yet measured may move the scroll bar a
//! little as they are measured, as in any list of this kind.

use egui::{Id, Rect, ScrollArea, Ui, UiBuilder, pos2, vec2};

/// Shows rows `0..count` in `scroll`, calling `row` only for those that intersect the view.
/// `id` keeps the learnt heights (one list per id).
pub fn show_rows(
    ui: &mut Ui,
    scroll: ScrollArea,
    id: Id,
    count: usize,
    estimate: f32,
    mut row: impl FnMut(&mut Ui, usize),
) {
    let memory = id.with("row-heights");
    // Taken out of egui's memory for the frame (no copy), put back after.
    let mut heights: Vec<f32> =
        ui.data_mut(|data| std::mem::take(data.get_temp_mut_or_default(memory)));
    heights.resize(count, estimate);
    let gap = ui.spacing().item_spacing.y;
    scroll.show_viewport(ui, |ui, viewport| {
        let origin = ui.max_rect().min;
        let width = ui.available_width();
        let mut top = 0.0;
        for (index, height) in heights.iter_mut().enumerate() {
            if top + *height >= viewport.min.y && top <= viewport.max.y {
                let room =
                    Rect::from_min_size(pos2(origin.x, origin.y + top), vec2(width, f32::MAX));
                let builder = UiBuilder::new().max_rect(room).id_salt(("row", index));
                let mut child = ui.new_child(builder);
                row(&mut child, index);
                *height = child.min_rect().height();
            }
            top += *height + gap;
        }
        // The whole column's size, so the scroll bar and "stick to bottom" see every row.
        ui.allocate_rect(
            Rect::from_min_size(origin, vec2(width, top.max(0.0))),
            egui::Sense::hover(),
        );
    });
    ui.data_mut(|data| data.insert_temp(memory, heights));
}
