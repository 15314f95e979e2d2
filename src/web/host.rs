//! The page's [`Host`]: its title is the document's, and on a page that is not a secure context
//! (a LAN address over plain HTTP) the clipboard is reached through a hidden text box.

use askpane::app::Host;

/// The browser page as the app's host.
pub struct PageHost;

impl Host for PageHost {
    /// The document's title (eframe's web backend has no viewport title).
    fn set_title(&self, _ctx: &egui::Context, title: &str) {
        if let Some(document) = web_sys::window().and_then(|window| window.document()) {
            document.set_title(title);
        }
    }

    /// In the browser eframe uses the Clipboard API, which browsers give only to secure pages
    /// (https, 127.0.0.1, localhost): a page opened on a LAN address over plain HTTP (`--lan`, a
    /// phone) copies through a hidden text box and `execCommand("copy")` instead, which browsers
    /// still allow there during the click that asked for it.
    fn copy_text(&self, ctx: &egui::Context, text: String) {
        if web_sys::window().is_some_and(|window| !window.is_secure_context())
            && copy_by_selection(&text)
        {
            return;
        }
        ctx.copy_text(text);
    }
}

/// `execCommand("copy")` of `text` from a hidden, read-only text box; false when it did not copy.
fn copy_by_selection(text: &str) -> bool {
    use wasm_bindgen::JsCast as _;
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return false;
    };
    let Some(body) = document.body() else { return false };
    let Some(area) = document
        .create_element("textarea")
        .ok()
        .and_then(|element| element.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
    else {
        return false;
    };
    area.set_value(text);
    // Read-only: a phone opens no keyboard for it. Placed through the CSSOM (the page's
    // Content-Security-Policy refuses style attributes): fixed, so nothing scrolls, and unseen.
    let _ = area.set_attribute("readonly", "");
    let style = area.style();
    for (property, value) in [("position", "fixed"), ("top", "0"), ("left", "0"), ("opacity", "0")]
    {
        let _ = style.set_property(property, value);
    }
    if body.append_child(&area).is_err() {
        return false;
    }
    area.select();
    let copied = document
        .dyn_ref::<web_sys::HtmlDocument>()
        .and_then(|html| html.exec_command("copy").ok())
        .unwrap_or(false);
    area.remove();
    copied
}
