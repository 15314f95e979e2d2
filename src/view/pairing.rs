//! The "Pair a phone" window of `askpane inbox --ui web --lan` (issue 11): the link another device
//! opens, as text and as a QR code to scan, Copy, and New link, which replaces the link (pages on
//! the old one stop at once).

use egui::{Color32, Rect, RichText, Sense, Ui, Vec2};

use crate::view::theme;

/// A QR code's modules, row by row (`true` is dark), `width` on a side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QrModules {
    pub width: usize,
    pub dark: Vec<bool>,
}

/// What the window shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pairing {
    /// The link another device opens (with its token).
    pub link: String,
    /// Its QR code; `None` when the link could not be encoded (it is shown as text anyway).
    pub code: Option<QrModules>,
    /// How many times the link was replaced in this window.
    pub replaced: u32,
    /// Why the last New link failed.
    pub problem: Option<String>,
}

/// What the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairingAction {
    CopyLink,
    NewLink,
}

/// Modules of empty border around the code that scanners need (the QR specification's quiet
/// zone).
const QUIET_ZONE: usize = 4;

/// The largest the code is drawn, in points.
const CODE_SIDE: f32 = 280.0;

pub fn pairing_ui(ui: &mut Ui, pairing: &Pairing) -> Option<PairingAction> {
    let mut action = None;
    ui.heading("Answer from your phone");
    ui.label(
        "Scan this with your phone's camera, or open the link on another device on this network.",
    );
    ui.add_space(8.0);
    if let Some(code) = &pairing.code {
        draw_code(ui, code, &pairing.link);
        ui.add_space(8.0);
    }
    ui.add(egui::Label::new(RichText::new(&pairing.link).monospace()).selectable(true));
    ui.add_space(8.0);
    ui.horizontal_wrapped(|ui| {
        if ui.button("Copy link").clicked() {
            action = Some(PairingAction::CopyLink);
        }
        let new_link = ui.button("New link").on_hover_text(
            "Make a new link: every page on this one stops at once, and phones scan again.",
        );
        if new_link.clicked() {
            action = Some(PairingAction::NewLink);
        }
    });
    if pairing.replaced > 0 {
        ui.label("The link above is new: pages on the old one were told, and it no longer works.");
    }
    if let Some(problem) = &pairing.problem {
        ui.colored_label(ui.visuals().error_fg_color, problem);
    }
    ui.add_space(8.0);
    ui.label(
        RichText::new(
            "Anyone who has the link can answer. Plain HTTP: on a shared network, prefer an SSH \
             port forward or a private overlay network. Closing this window keeps the inbox.",
        )
        .size(theme::size::SMALL),
    );
    action
}

/// The code as dark squares on white (scanners need the contrast in both themes), with its
/// quiet zone; AccessKit names it after the link.
fn draw_code(ui: &mut Ui, code: &QrModules, link: &str) {
    let modules = code.width + 2 * QUIET_ZONE;
    let side = CODE_SIDE.min(ui.available_width());
    // Whole pixels per module keep the squares sharp for the camera.
    let module = (side / modules as f32).floor().max(1.0);
    let side = module * modules as f32;
    let (rect, response) = ui.allocate_exact_size(Vec2::splat(side), Sense::hover());
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::Role::Image, true, format!("QR code of {link}"))
    });
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::WHITE);
    for (index, dark) in code.dark.iter().enumerate() {
        if !dark || code.width == 0 {
            continue;
        }
        let (row, column) = (index / code.width, index % code.width);
        let at =
            rect.min + Vec2::new((column + QUIET_ZONE) as f32, (row + QUIET_ZONE) as f32) * module;
        painter.rect_filled(Rect::from_min_size(at, Vec2::splat(module)), 0.0, Color32::BLACK);
    }
}
