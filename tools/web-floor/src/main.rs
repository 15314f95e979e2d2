//! The floor of `scripts/bench-web`: eframe's WebGL page drawing nothing of askpane, on the web
//! app's own page (`index.html`, with its canvas and loading message) and build profile.
//!
//! `#empty` draws an empty panel: what eframe costs to fetch, start, draw and present a first frame
//! at all. `#question` draws one question in plain egui widgets (a heading, a paragraph, three
//! choices with a line each, two buttons): the same plus egui's first text. The page marks its first
//! frame as the web app does (`askpaneFirstFrameMs` and `askpaneReady` at the animation frame after
//! it, once it is presented), so the bench reads all three pages alike.

#[cfg(target_arch = "wasm32")]
mod page {
    use wasm_bindgen::{JsCast as _, JsValue};

    /// What the page draws, from the URL fragment.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Content {
        Empty,
        Question,
    }

    struct Floor {
        content: Content,
        choice: usize,
        first: bool,
    }

    impl eframe::App for Floor {
        fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
            if std::mem::take(&mut self.first) {
                // As the web app: once this frame has run, mark the next animation frame, when
                // the browser has presented this one, and drop the loading message.
                wasm_bindgen_futures::spawn_local(async {
                    mark_when_presented();
                    if let Some(loading) =
                        document().and_then(|d| d.get_element_by_id("askpane_loading"))
                    {
                        loading.remove();
                    }
                });
            }
            egui::CentralPanel::default().show(ui, |ui| {
                if self.content == Content::Question {
                    question(ui, &mut self.choice);
                }
            });
        }
    }

    fn question(ui: &mut egui::Ui, choice: &mut usize) {
        ui.heading("Which database should the service use?");
        ui.label(
            "The service stores sessions and audit events; pick the database it should use in \
             production.",
        );
        let choices = [
            ("PostgreSQL", "Relational, strong consistency, what the team knows"),
            ("SQLite", "One file, no server, fine for one node"),
            ("DynamoDB", "Managed, scales without operations"),
        ];
        for (index, (name, why)) in choices.into_iter().enumerate() {
            ui.radio_value(choice, index, name);
            ui.label(why);
        }
        ui.horizontal(|ui| {
            let _ = ui.button("Submit");
            let _ = ui.button("Skip");
        });
    }

    fn document() -> Option<web_sys::Document> {
        web_sys::window().and_then(|window| window.document())
    }

    fn mark_when_presented() {
        let mark = wasm_bindgen::closure::Closure::once_into_js(|| {
            let Some(window) = web_sys::window() else { return };
            let now = window.performance().map_or(0.0, |performance| performance.now());
            let _ = js_sys::Reflect::set(&window, &"askpaneFirstFrameMs".into(), &now.into());
            let _ = js_sys::Reflect::set(&window, &"askpaneReady".into(), &JsValue::TRUE);
        });
        if let Some(window) = web_sys::window() {
            let _ = window.request_animation_frame(mark.unchecked_ref());
        }
    }

    pub fn start() {
        let content = match web_sys::window().and_then(|window| window.location().hash().ok()) {
            Some(hash) if hash == "#question" => Content::Question,
            _ => Content::Empty,
        };
        let Some(canvas) = document()
            .and_then(|document| document.get_element_by_id("askpane_canvas"))
            .and_then(|element| element.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            return;
        };
        wasm_bindgen_futures::spawn_local(async move {
            let creator: eframe::AppCreator<'static> = Box::new(move |cc| {
                // The web app's text options (askpane's theme): glyphs unhinted on the web.
                for theme in [egui::Theme::Light, egui::Theme::Dark] {
                    cc.egui_ctx.style_mut_of(theme, |style| {
                        style.visuals.text_options.font_hinting = false;
                    });
                }
                Ok(Box::new(Floor { content, choice: 0, first: true }))
            });
            let runner = eframe::WebRunner::new();
            if let Err(error) = runner.start(canvas, eframe::WebOptions::default(), creator).await {
                web_sys::console::error_1(&error);
            }
        });
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    page::start();
}

/// Natively there is nothing to run: the page is built for wasm32 by `scripts/build-web --floor`.
#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "askpane-web-floor is a web page for scripts/bench-web: build it with scripts/build-web --floor"
    );
    std::process::ExitCode::from(2)
}
