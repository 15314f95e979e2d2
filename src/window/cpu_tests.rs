//! The CPU window's damage-region drawing against a full rasterization of the same frame, pixel
//! for pixel, through a sequence of edits (issue 30).

use egui_software_backend::{BufferMutRef, ColorFieldOrder, EguiSoftwareRender};

use super::tessellate_apart;
use crate::paint::cpu_frame::{CpuFrame, opaque_pixel};

/// One step of the edits: what happens before the frame is drawn.
enum Edit {
    Type(&'static str),
    /// 100 KB of Japanese pasted at once.
    PasteJapanese,
    Key(egui::Key, egui::Modifiers),
    Scroll(f32),
    Resize(f32, f32),
    Dark(bool),
    Popup(bool),
    /// One of two overlapping cards is raised over the other: the same shapes, in another order.
    Raise(&'static str),
    /// A frame with no input (egui's settling pass, or the cursor's blink).
    Nothing,
    /// The time moves on (the cursor blinks).
    Later(f64),
}

/// The form drawn: a text field with the keyboard, a scrolled list, buttons, and a popup over
/// them when `popup`.
struct Form {
    text: String,
    popup: bool,
    first: bool,
}

impl Form {
    fn ui(&mut self, ui: &mut egui::Ui) {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("Which layout?");
            ui.horizontal(|ui| {
                let _ = ui.radio(true, "Tabs");
                let _ = ui.radio(false, "Spaces");
                let _ = ui.button("Submit");
            });
            let field = ui.add(egui::TextEdit::multiline(&mut self.text).desired_rows(3));
            if std::mem::take(&mut self.first) {
                field.request_focus();
            }
            egui::ScrollArea::vertical().max_height(120.0).show(ui, |ui| {
                for row in 0..40 {
                    ui.label(format!("History row {row}: an answer given earlier"));
                }
            });
        });
        // Two cards that overlap, at fixed places: raising one changes only the order.
        for (card, x) in [("left", 240.0), ("right", 300.0)] {
            egui::Area::new(egui::Id::unique(("askpane test card", card)))
                .order(egui::Order::Foreground)
                .fixed_pos(egui::pos2(x, 20.0))
                .show(ui.ctx(), |ui| {
                    egui::Frame::popup(ui.style()).show(ui, |ui| {
                        ui.label(format!("The {card} card, opaque"));
                    });
                });
        }
        if self.popup {
            egui::Area::new(egui::Id::unique("askpane test popup"))
                .order(egui::Order::Foreground)
                .fixed_pos(egui::pos2(60.0, 70.0))
                .show(ui.ctx(), |ui| {
                    egui::Frame::popup(ui.style()).show(ui, |ui| {
                        ui.label("A popup over the form");
                        let _ = ui.button("Close");
                    });
                });
        }
    }
}

/// Draws every frame of `edits` twice: into one frame kept across them with only its damage
/// redrawn (and a "screen" that receives only the rectangles sent), and by a new renderer from
/// nothing. After each edit the two, and the screen, must be equal pixel for pixel.
#[test]
fn the_damage_region_frame_equals_a_full_rasterization_after_every_edit() {
    use egui::{Key, Modifiers};
    let edits = [
        Edit::Nothing,
        Edit::Type("Hello"),
        Edit::Nothing,
        Edit::Type(" world"),
        Edit::Key(Key::ArrowLeft, Modifiers::NONE),
        Edit::Key(Key::ArrowLeft, Modifiers::SHIFT),
        Edit::Key(Key::ArrowLeft, Modifiers::SHIFT),
        Edit::Type("X"),
        Edit::Key(Key::Enter, Modifiers::NONE),
        Edit::Type("second line"),
        Edit::Later(0.6),
        Edit::Later(1.2),
        Edit::Scroll(-60.0),
        Edit::Nothing,
        Edit::Scroll(-200.0),
        Edit::Popup(true),
        Edit::Type("y"),
        Edit::Popup(false),
        Edit::Raise("left"),
        Edit::Nothing,
        Edit::Raise("right"),
        Edit::Resize(420.0, 300.0),
        Edit::Type("z"),
        Edit::Dark(true),
        Edit::Type("ok"),
        Edit::Resize(520.0, 380.0),
        Edit::Key(Key::Backspace, Modifiers::NONE),
        Edit::Dark(false),
        Edit::Nothing,
        // A key held down: a character every frame, no settling frame between.
        Edit::Type("k"),
        Edit::Type("k"),
        Edit::Type("k"),
        Edit::Type("k"),
        Edit::PasteJapanese,
        Edit::Nothing,
        Edit::Type("末"),
        Edit::Type("尾"),
        Edit::Nothing,
    ];
    let ctx = egui::Context::default();
    ctx.set_theme(egui::Theme::Light);
    let mut form = Form { text: String::new(), popup: false, first: true };
    let mut renderer = EguiSoftwareRender::new(ColorFieldOrder::Bgra);
    let mut frame = CpuFrame::default();
    let mut screen: Vec<[u8; 4]> = Vec::new();
    // Every texture change so far (deltas must be cleared, not dropped: epaint checks).
    let mut all_textures = egui::TexturesDelta::default();
    let (mut width, mut height, mut time) = (480.0_f32, 360.0_f32, 0.0_f64);
    let mut damaged_less_than_all = 0;
    for (step, edit) in edits.iter().enumerate() {
        let mut events = Vec::new();
        match edit {
            Edit::Type(text) => events.push(egui::Event::Text((*text).to_owned())),
            Edit::PasteJapanese => {
                let japanese = "日本語の長い文章を入力する。".repeat(100 * 1024 / 42);
                events.push(egui::Event::Paste(japanese));
            }
            Edit::Key(key, modifiers) => events.push(egui::Event::Key {
                key: *key,
                physical_key: None,
                pressed: true,
                repeat: false,
                modifiers: *modifiers,
            }),
            Edit::Scroll(by) => {
                events.push(egui::Event::PointerMoved(egui::pos2(100.0, 250.0)));
                events.push(egui::Event::MouseWheel {
                    unit: egui::MouseWheelUnit::Point,
                    delta: egui::vec2(0.0, *by),
                    phase: egui::TouchPhase::Move,
                    source: egui::MouseWheelSource::Unknown,
                    modifiers: Modifiers::NONE,
                });
            }
            Edit::Resize(w, h) => (width, height) = (*w, *h),
            Edit::Dark(dark) => {
                ctx.set_theme(if *dark { egui::Theme::Dark } else { egui::Theme::Light });
            }
            Edit::Popup(shown) => form.popup = *shown,
            Edit::Raise(card) => ctx.move_to_top(egui::LayerId::new(
                egui::Order::Foreground,
                egui::Id::unique(("askpane test card", *card)),
            )),
            Edit::Nothing => {}
            Edit::Later(seconds) => time += seconds,
        }
        time += 0.016;
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(width, height),
            )),
            time: Some(time),
            events,
            ..Default::default()
        };
        let output = ctx.run_ui(input, |ui| form.ui(ui));
        let ppp = output.pixels_per_point;
        all_textures.append(output.textures_delta.clone());
        let clipped = tessellate_apart(&ctx, output.shapes, ppp);
        let (w, h) = ((width * ppp) as usize, (height * ppp) as usize);
        let background = opaque_pixel(
            ctx.global_style().visuals.panel_fill.to_normalized_gamma_f32(),
            ColorFieldOrder::Bgra,
        );

        let (pixels, whole) = frame.next_frame(w, h, background);
        let mut target = BufferMutRef::new(pixels, w, h);
        let damage = renderer.render_damage(
            &mut target,
            &clipped,
            &output.textures_delta,
            ppp,
            background,
            whole,
        );
        let mut textures = output.textures_delta;
        textures.clear();
        let sent = frame.to_send(&damage);
        if screen.len() != w * h {
            screen = vec![[0; 4]; w * h];
        }
        let mut band = Vec::new();
        for rect in &sent {
            frame.copy_rect(*rect, 0, rect.height, &mut band);
            for (row, pixels) in band.chunks_exact(rect.width).enumerate() {
                let start = (rect.y + row) * w + rect.x;
                screen[start..start + rect.width].copy_from_slice(pixels);
            }
        }
        frame.shown_now();
        if sent.iter().map(|rect| rect.width * rect.height).sum::<usize>() < w * h {
            damaged_less_than_all += 1;
        }

        // The reference: a renderer that has seen every texture but no earlier frame.
        let mut fresh = EguiSoftwareRender::new(ColorFieldOrder::Bgra);
        let mut whole_textures = all_textures.clone();
        let mut reference = vec![background; w * h];
        let mut reference_target = BufferMutRef::new(&mut reference, w, h);
        fresh.render(&mut reference_target, &clipped, &whole_textures, ppp);
        whole_textures.clear();

        let (pixels, _) = frame.next_frame(w, h, background);
        if pixels.iter().zip(&reference).any(|(a, b)| a != b) || screen != reference {
            all_textures.clear();
        }
        let differ = pixels.iter().zip(&reference).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "step {step}: the kept frame differs from a full rasterization in {differ} pixels"
        );
        let differ = screen.iter().zip(&reference).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "step {step}: the screen differs from a full rasterization in {differ} pixels"
        );
    }
    all_textures.clear();
    assert!(
        damaged_less_than_all > edits.len() / 2,
        "most edits redraw part of the window: {damaged_less_than_all}"
    );
}
