//! The "Pair a phone" window (issue 11): beside `askpane inbox --ui web --lan`'s browser pages,
//! a small native window with the link another device can use, its QR code, and New link. The
//! link's replacement and the QR encoder are injected: the app sees neither the bridge nor the
//! encoder crate.

use crate::view::pairing::{Pairing, PairingAction, QrModules, pairing_ui};
use crate::view::theme;

/// Replaces the bridge's link; the new links, loopback first, or why it could not.
pub type Relink = Box<dyn FnMut() -> Result<Vec<String>, String>>;

/// Encodes a link as a QR code (`None` when it cannot be).
pub type Encode = fn(&str) -> Option<QrModules>;

pub struct PairingApp {
    pairing: Pairing,
    relink: Relink,
    encode: Encode,
}

impl PairingApp {
    /// `links` as the bridge lists them: loopback first, then one per address of this machine.
    pub fn new(ctx: &egui::Context, links: &[String], relink: Relink, encode: Encode) -> Self {
        theme::install(ctx);
        let link = device_link(links);
        let pairing = Pairing { code: encode(&link), link, ..Pairing::default() };
        PairingApp { pairing, relink, encode }
    }

    pub fn pairing(&self) -> &Pairing {
        &self.pairing
    }

    fn apply(&mut self, ctx: &egui::Context, action: PairingAction) {
        match action {
            PairingAction::CopyLink => ctx.copy_text(self.pairing.link.clone()),
            PairingAction::NewLink => match (self.relink)() {
                Ok(links) => {
                    let link = device_link(&links);
                    self.pairing.code = (self.encode)(&link);
                    self.pairing.link = link;
                    self.pairing.replaced += 1;
                    self.pairing.problem = None;
                }
                Err(problem) => self.pairing.problem = Some(problem),
            },
        }
    }
}

/// The first link another device can use (the second listed), else the only one.
fn device_link(links: &[String]) -> String {
    links.get(1).or_else(|| links.first()).cloned().unwrap_or_default()
}

impl eframe::App for PairingApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let action = egui::Frame::central_panel(ui.style())
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| pairing_ui(ui, &self.pairing))
            })
            .inner
            .inner;
        if let Some(action) = action {
            self.apply(ui.ctx(), action);
            ui.ctx().request_repaint();
        }
    }
}
