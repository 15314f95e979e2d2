//! The native "Pair a phone" window beside the inbox's browser pages (issue 11): the link another
//! device can use, its QR code and New link. It closes when the inbox's pages stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use askpane::app::pairing::{PairingApp, Relink};

use super::{Arrival, chosen_drawing, run_app};

/// Shows the pairing window for `links` until the user closes it or `until` returns (the pages
/// stopped), whichever is first. The error says in one line why no window could open.
pub(crate) fn show_pairing(
    links: Vec<String>,
    relink: Relink,
    until: impl FnOnce() + Send,
) -> Result<(), String> {
    let window_ctx = Arc::new(OnceLock::<egui::Context>::new());
    let ended = Arc::new(AtomicBool::new(false));
    let close = |ctx: &egui::Context| {
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        ctx.request_repaint();
    };
    std::thread::scope(|scope| {
        let (closing_ctx, closing_ended) = (Arc::clone(&window_ctx), Arc::clone(&ended));
        #[allow(
            clippy::disallowed_methods,
            reason = "named, and scoped: it borrows the bridge, which transport::spawn_named's 'static threads cannot"
        )]
        let closer = std::thread::Builder::new().name("pairing-close".into()).spawn_scoped(
            scope,
            move || {
                until();
                // The flag first, then the window: the window's creation does the reverse, so
                // one of the two always sees the other.
                closing_ended.store(true, Ordering::SeqCst);
                if let Some(ctx) = closing_ctx.get() {
                    close(ctx);
                }
            },
        );
        if closer.is_err() {
            // The window still shows the links; it only cannot close with the inbox.
            eprintln!("askpane: cannot watch the inbox for the pairing window; close it yourself");
        }
        let builder = egui::ViewportBuilder::default()
            .with_title("Pair a phone — askpane")
            .with_app_id("askpane")
            .with_inner_size([440.0, 640.0]);
        let make = move |ctx: &egui::Context| {
            let _ = window_ctx.set(ctx.clone());
            if ended.load(Ordering::SeqCst) {
                close(ctx);
            }
            PairingApp::new(ctx, &links, relink, qr_modules)
        };
        run_app("askpane-pairing", builder, chosen_drawing(), Arrival::TakesKeyboard, make)
    })
}

/// `link` as a QR code's modules, for the pairing window to draw.
fn qr_modules(link: &str) -> Option<askpane::view::pairing::QrModules> {
    let code = qrcode::QrCode::new(link.as_bytes()).ok()?;
    let dark = code.to_colors().into_iter().map(|color| color == qrcode::Color::Dark).collect();
    Some(askpane::view::pairing::QrModules { width: code.width(), dark })
}
