//! The web app (wasm32): eframe's `WebRunner` on the `askpane_canvas` canvas, fed by the demo
//! fixtures (later also askpane's WebSocket bridge), with CJK and Thai fonts fetched on first use.
//!
//! The page (`assets/web/index.html`, bundled by `scripts/build-web`) calls `main`, which reads the
//! URL fragment: `#fixture=NAME` shows one demo set, `#token=…` means askpane's bridge served the
//! page (see [`connect`], where the WebSocket client plugs in). The token is then kept in the
//! tab's `sessionStorage` (a reload still connects) and dropped from the address bar, so it is
//! not left in the history or shown to someone looking at the screen. Tests read what the page
//! publishes on `window`: `askpaneReady` and `askpaneFirstFrameMs` (`performance.now()` once the
//! first frame is presented: the animation frame after it), `askpaneReplies` (each reply as a
//! JSON string, in the order sent),
//! `askpaneFonts` (the names of the fonts fetched so far) `askpaneDeliveries` (what became of
//! each answer sent to the bridge: `{tool_use_id, state, detail}`, state `sending`, `sent`,
//! `refused` or `lost`), `askpaneHistory` (the last History page the bridge answered), and
//! `askpaneNeedsLink` (askpane served the page, which was opened without its token: it shows
//! only how to get the link, never the built-in demo).
//!
//! Fonts: egui gets no system fonts in the browser (eframe only draws a missing glyph with the
//! canvas's fonts, one by one, and a box where the machine has none), and a CJK font is
//! megabytes, so the subsets made by `scripts/build-web` are served next to the page (`fonts/`)
//! and fetched only when text needs them: when a request's text has such characters, and from a
//! font provider egui asks for any character no installed font has.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, PoisonError};

use askpane::app::{App, AppOptions, FrameHook};
use askpane::protocol::web::TimeoutChange;
use askpane::protocol::{Envelope, Outcome};
use askpane::transport::demo::{self, Fixture};
use askpane::transport::web_client::{BridgeClient, BridgeHistory};
use askpane::transport::{
    Inbound, Request, RequestEvent, SessionCommand, UiSender, Waker, ui_channel,
};
use crossbeam_channel::{Receiver, TryRecvError};
use egui::epaint::text::FallbackRequest;
use wasm_bindgen::{JsCast as _, JsValue};
use wasm_bindgen_futures::JsFuture;

mod host;

/// The canvas egui draws on, and the message shown until the first frame (index.html).
const CANVAS_ID: &str = "askpane_canvas";
const LOADING_ID: &str = "askpane_loading";

/// Starts the app: `main` on wasm32, which wasm-bindgen runs when the page's `init()` loads it.
pub fn start() {
    // eframe's logger sends `log` records to the browser console.
    let _ = eframe::WebLogger::init(log::LevelFilter::Info);
    publish::init();
    let fragment = remember_token(Fragment::parse(&location_hash()));
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(error) = run(fragment).await {
            let message = error.as_string().unwrap_or_else(|| format!("{error:?}"));
            log::error!("askpane could not start: {message}");
            show_loading_message(&format!("askpane could not start: {message}"));
        }
    });
}

/// What the URL fragment asks for: `#fixture=database`, `#token=…` (both `&`-separated).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fragment {
    /// One demo set by name, instead of all of them.
    pub fixture: Option<String>,
    /// The bridge's per-run token: askpane served this page and waits on its WebSocket.
    pub token: Option<String>,
}

impl Fragment {
    /// Parses `location.hash` (with or without its `#`); unknown keys are ignored.
    pub fn parse(hash: &str) -> Self {
        let mut fragment = Fragment::default();
        for pair in hash.trim_start_matches('#').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value);
            match key {
                "fixture" if !value.is_empty() => fragment.fixture = Some(value),
                "token" if !value.is_empty() => fragment.token = Some(value),
                _ => {}
            }
        }
        fragment
    }
}

/// Where the tab keeps the bridge's token once it is out of the address bar.
const TOKEN_KEY: &str = "askpane-token";

/// A token in the fragment is kept in the tab's session storage and removed from the address
/// bar; a fragment with nothing in it (a reload) gets the kept token back.
fn remember_token(mut fragment: Fragment) -> Fragment {
    let Some(window) = web_sys::window() else { return fragment };
    let storage = window.session_storage().ok().flatten();
    match (&fragment.token, &fragment.fixture) {
        (Some(token), _) => {
            if let Some(storage) = &storage {
                let _ = storage.set_item(TOKEN_KEY, token);
            }
            let location = window.location();
            let bare = format!(
                "{}{}",
                location.pathname().unwrap_or_default(),
                location.search().unwrap_or_default()
            );
            if let Ok(history) = window.history() {
                let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&bare));
            }
        }
        (None, None) => {
            fragment.token = storage.and_then(|storage| storage.get_item(TOKEN_KEY).ok().flatten());
        }
        (None, Some(_)) => {}
    }
    fragment
}

/// `%XX` escapes to bytes, then UTF-8 (lossy); anything malformed is kept as it is.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(decoded) => {
                out.push(decoded);
                index += 3;
            }
            None => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the questions come from.
enum Source {
    /// The built-in question sets: all of them, or the one `#fixture=` names.
    Demo(Vec<&'static Fixture>),
    /// askpane's bridge (`--ui web`) served the page; its WebSocket is on the same origin.
    Bridge { token: String },
}

impl Source {
    fn from_fragment(fragment: &Fragment) -> Result<Self, String> {
        if let Some(token) = &fragment.token {
            return Ok(Source::Bridge { token: token.clone() });
        }
        match &fragment.fixture {
            None => Ok(Source::Demo(demo::FIXTURES.iter().collect())),
            Some(name) => match demo::find(name) {
                Some(fixture) => Ok(Source::Demo(vec![fixture])),
                None => {
                    let names: Vec<&str> = demo::FIXTURES.iter().map(|f| f.name).collect();
                    Err(format!(
                        "no demo question set named {name:?}; the sets are: {}",
                        names.join(", ")
                    ))
                }
            },
        }
    }
}

/// Work run once per frame that moves messages between a source and the app (no threads here).
type Feed = Box<dyn FnMut(&egui::Context)>;

/// Connects `source` to the app's channel (`to_ui`, whose every send calls `waker`: a repaint)
/// and returns the feed the frame hook runs at the start of every frame.
///
/// With a token in the fragment the page was opened by askpane's bridge: the questions come over
/// the WebSocket ([`BridgeClient`]) and the answers go back on it. Fonts need nothing here: the
/// font provider fetches them when the questions are drawn.
fn connect(
    source: Source,
    to_ui: UiSender,
    waker: Waker,
    fonts: &WebFonts,
    countdown_changes: Receiver<(String, TimeoutChange)>,
    session_commands: Receiver<SessionCommand>,
    history: &mut Option<BridgeHistory>,
) -> Result<Feed, String> {
    match source {
        Source::Demo(fixtures) => demo_feed(&fixtures, &to_ui, fonts),
        Source::Bridge { token } => {
            let mut client = BridgeClient::new(bridge_url(), token, to_ui, waker);
            // Issue 11: the prompt box and Stop of the session the bridge carries, if any.
            client.carry_session_commands(session_commands);
            // Issue 11: the History page, read from the bridge (which says when it keeps none).
            *history = Some(client.history());
            Ok(Box::new(move |ctx| {
                // "Any key to stay" and "+1 min": the bridge's backstop follows the page.
                for (tool_use_id, change) in countdown_changes.try_iter() {
                    client.send_timeout_change(&tool_use_id, change);
                }
                client.pump(now_ms());
                for event in client.take_events() {
                    publish::delivery(&event);
                }
                for page in client.take_history_pages() {
                    publish::history(&page);
                }
                if client.waiting_to_retry() {
                    ctx.request_repaint_after(std::time::Duration::from_millis(500));
                }
            }))
        }
    }
}

/// The bridge's WebSocket endpoint: the page's own host (askpane serves both). The token goes
/// in a header, not here.
fn bridge_url() -> String {
    let host = web_sys::window()
        .and_then(|window| window.location().host().ok())
        .unwrap_or_else(|| "127.0.0.1".to_owned());
    format!("ws://{host}/ws")
}

/// `performance.now()`: milliseconds since navigation started.
fn now_ms() -> f64 {
    web_sys::window().and_then(|window| window.performance()).map_or(0.0, |p| p.now())
}

/// Sends every fixture to the app; replies are published on `window.askpaneReplies`.
fn demo_feed(fixtures: &[&Fixture], to_ui: &UiSender, fonts: &WebFonts) -> Result<Feed, String> {
    let mut replies = Replies::new(Box::new(|reply| publish::reply(&reply)));
    for fixture in fixtures {
        let (request, outcome) = fixture.request().map_err(|error| error.to_string())?;
        fonts.want_request(&request);
        replies.await_outcome(&request, outcome);
        to_ui.send(Inbound::Request(RequestEvent::Ask(Box::new(request))));
    }
    Ok(Box::new(move |_ctx| replies.poll()))
}

/// The requests whose outcomes are still to come, and where their replies go.
struct Replies {
    awaited: Vec<(Envelope, Receiver<Outcome>)>,
    sink: Box<dyn FnMut(serde_json::Value)>,
}

impl Replies {
    fn new(sink: Box<dyn FnMut(serde_json::Value)>) -> Self {
        Replies { awaited: Vec::new(), sink }
    }

    /// Remembers `request`'s envelope, to render its outcome in it when it arrives.
    fn await_outcome(&mut self, request: &Request, outcome: Receiver<Outcome>) {
        self.awaited.push((request.core.envelope.clone(), outcome));
    }

    /// Renders and sends every outcome that has arrived, in the order they are found.
    fn poll(&mut self) {
        let sink = &mut self.sink;
        self.awaited.retain(|(envelope, outcome)| match outcome.try_recv() {
            Ok(outcome) => {
                if let Some(reply) = envelope.reply(&outcome) {
                    sink(reply);
                }
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => false,
        });
    }
}

async fn run(fragment: Fragment) -> Result<(), JsValue> {
    // Without a token, only a page a plain file server served may show the built-in demo: one
    // askpane served (its address bar, another tab, history) needs its link, and says so.
    if fragment.token.is_none() && served_by_askpane() {
        show_loading_message(askpane::protocol::web::NEEDS_LINK_MESSAGE);
        publish::needs_link();
        return Ok(());
    }
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or_else(|| JsValue::from_str("no document"))?;
    let canvas = document
        .get_element_by_id(CANVAS_ID)
        .ok_or_else(|| JsValue::from_str(&format!("the page has no #{CANVAS_ID} canvas")))?
        .dyn_into::<web_sys::HtmlCanvasElement>()?;
    let source = Source::from_fragment(&fragment).map_err(|error| JsValue::from_str(&error))?;

    // Senders wake the app once it exists; what is sent before it starts waits in the channel.
    let app_ctx = Arc::new(OnceLock::<egui::Context>::new());
    let waker_ctx = Arc::clone(&app_ctx);
    let waker = Waker::new(move || {
        if let Some(ctx) = waker_ctx.get() {
            ctx.request_repaint();
        }
    });
    let (to_ui, inbox) = ui_channel(waker.clone());

    let runner = eframe::WebRunner::new();
    let creator: eframe::AppCreator<'static> = Box::new(move |cc| {
        let ctx = cc.egui_ctx.clone();
        let _ = app_ctx.set(ctx.clone());
        let fonts = WebFonts::install(&ctx);
        // A finger, not a mouse (a phone, a tablet): every control gets a finger's size.
        let touch = web_sys::window()
            .and_then(|window| window.match_media("(pointer: coarse)").ok().flatten())
            .is_some_and(|query| query.matches());
        ctx.data_mut(|data| data.insert_temp(askpane::view::touch_screen_id(), touch));
        let (countdown_changes, changed) = crossbeam_channel::unbounded();
        let (session_commands, commands) = crossbeam_channel::unbounded();
        let mut history = None;
        let feed = connect(source, to_ui, waker, &fonts, changed, commands, &mut history)?;
        let mut app = App::new(&ctx, inbox, AppOptions::default())
            .with_host(host::PageHost)
            .with_frame_hook(frame_hook(feed))
            .with_countdown_changes(countdown_changes)
            .with_session_commands(session_commands);
        if let Some(history) = history {
            app = app.with_history(history);
        }
        Ok(Box::new(app))
    });
    runner.start(canvas, eframe::WebOptions::default(), creator).await
}

/// The per-frame work: the feed, and the first-frame marker for tests.
fn frame_hook(mut feed: Feed) -> FrameHook {
    let mut first = true;
    Box::new(move |ctx, _frame| {
        if std::mem::take(&mut first) {
            // A microtask runs after the current task, that is once this frame has been painted.
            wasm_bindgen_futures::spawn_local(async {
                publish::ready();
                remove_loading_message();
            });
        }
        feed(ctx);
        publish::widgets(ctx);
    })
}

/// A font served next to the page and fetched the first time text needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WebFont {
    /// Noto Sans CJK JP, subset to JIS X 0208 + KS X 1001: kana, common kanji, hangul.
    Cjk,
    /// Noto Sans Thai, subset to the Thai block.
    Thai,
    /// egui's monochrome emoji (Noto Emoji), which the native window embeds: 420 KB the page
    /// neither downloads nor loads until a text has an emoji.
    NotoEmoji,
    /// egui's second emoji font (emoji-icon-font), after Noto Emoji as egui orders them.
    EmojiIcons,
}

/// Both emoji fonts: they are fetched together, for any emoji.
const EMOJI: &[WebFont] = &[WebFont::NotoEmoji, WebFont::EmojiIcons];

impl WebFont {
    const ALL: [WebFont; 4] =
        [WebFont::Cjk, WebFont::Thai, WebFont::NotoEmoji, WebFont::EmojiIcons];

    fn name(self) -> &'static str {
        match self {
            WebFont::Cjk => "askpane-cjk",
            WebFont::Thai => "askpane-thai",
            WebFont::NotoEmoji => "NotoEmoji-Regular",
            WebFont::EmojiIcons => "emoji-icon-font",
        }
    }

    /// Relative to the page, so it works wherever the bundle is served from.
    fn url(self) -> &'static str {
        match self {
            WebFont::Cjk => "fonts/askpane-cjk.ttf",
            WebFont::Thai => "fonts/askpane-thai.ttf",
            WebFont::NotoEmoji => "fonts/NotoEmoji-Regular.ttf",
            WebFont::EmojiIcons => "fonts/emoji-icon-font.ttf",
        }
    }

    /// egui's own size for its emoji fonts (epaint's `FontDefinitions::default`).
    fn tweak(self) -> Option<egui::FontTweak> {
        let scale = match self {
            WebFont::Cjk | WebFont::Thai => return None,
            WebFont::NotoEmoji => 0.81,
            WebFont::EmojiIcons => 0.90,
        };
        Some(egui::FontTweak { scale, ..Default::default() })
    }

    /// The fonts for a character of a request's text, fetched before it is drawn: a script
    /// askpane ships a font for, or an emoji (or another pictograph or symbol of the blocks
    /// egui's emoji fonts cover and its text fonts do not).
    fn for_char(c: char) -> &'static [WebFont] {
        match u32::from(c) {
            0x0E00..=0x0E7F => &[WebFont::Thai],
            // Hangul Jamo; CJK punctuation, kana, bopomofo, compatibility jamo, enclosed and
            // compatibility forms; ideographs (extension A, unified); Hangul syllables and
            // extended jamo; compatibility ideographs; vertical and small forms; full-width forms.
            0x1100..=0x11FF
            | 0x2E80..=0x33FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xA960..=0xA97F
            | 0xAC00..=0xD7FF
            | 0xF900..=0xFAFF
            | 0xFE30..=0xFE4F
            | 0xFF00..=0xFFEF => &[WebFont::Cjk],
            // Miscellaneous technical (⏱ ⌛), symbols and dingbats (☀ ⚠ ✔), arrows and symbols
            // (⭐), and the supplementary planes' pictographs and emoji (🚀 😀).
            0x2300..=0x23FF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x1F000..=0x1FAFF => EMOJI,
            _ => &[],
        }
    }

    /// The fonts for a character no installed font has (egui asks the provider): those of
    /// [`WebFont::for_char`], but none for the window's own ✕, which neither emoji font has (the
    /// browser's fonts draw it): each "Sent" receipt would fetch them for nothing.
    fn for_missing(c: char) -> &'static [WebFont] {
        match c {
            '\u{2715}' => &[],
            c => WebFont::for_char(c),
        }
    }
}

/// Fetches the web fonts on demand and adds them to egui as fallbacks of both families.
#[derive(Clone)]
struct WebFonts {
    /// The context the fonts are added to. The provider installed in it holds a clone: a cycle,
    /// but both live as long as the page.
    ctx: egui::Context,
    /// Per font (in [`WebFont::ALL`] order): already fetched or being fetched.
    requested: Arc<[AtomicBool; WebFont::ALL.len()]>,
    /// The fonts fetched so far. Each arrival sets egui's fonts to the window's own plus all of
    /// these: `set_fonts` only takes effect at the next pass, so two fonts arriving within one
    /// frame, each added to the definitions egui still had, kept only the second.
    loaded: Arc<std::sync::Mutex<Vec<Fetched>>>,
}

/// A fetched font, ready for egui.
type Fetched = (WebFont, Arc<egui::FontData>);

impl WebFonts {
    /// Also installs a font provider: egui asks it for every character no installed font has.
    fn install(ctx: &egui::Context) -> Self {
        let fonts =
            WebFonts { ctx: ctx.clone(), requested: Arc::default(), loaded: Arc::default() };
        let provider = fonts.clone();
        ctx.add_font_provider(Arc::new(move |request: &FallbackRequest<'_>| {
            if let Some(c) = request.cluster.chars().next() {
                WebFont::for_missing(c).iter().for_each(|font| provider.load(*font));
            }
            // The glyph comes once the font is fetched; until then eframe's canvas fallback (or
            // a box) draws it.
            None
        }));
        fonts
    }

    /// Starts fetching every font a request's text needs, before it is drawn.
    fn want_request(&self, request: &Request) {
        for value in request.core.ask.input().values() {
            self.want_value(value);
        }
    }

    fn want_value(&self, value: &serde_json::Value) {
        match value {
            serde_json::Value::String(text) => {
                for font in text.chars().flat_map(WebFont::for_char) {
                    self.load(*font);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|item| self.want_value(item)),
            serde_json::Value::Object(map) => map.values().for_each(|item| self.want_value(item)),
            _ => {}
        }
    }

    /// Fetches `font` once, then adds it and repaints. Never blocks: the fetch runs as a task.
    fn load(&self, font: WebFont) {
        let index = WebFont::ALL.iter().position(|f| *f == font).unwrap_or_default();
        let Some(requested) = self.requested.get(index) else { return };
        if requested.swap(true, Ordering::Relaxed) {
            return;
        }
        let ctx = self.ctx.clone();
        let loaded = Arc::clone(&self.loaded);
        wasm_bindgen_futures::spawn_local(async move {
            match fetch_bytes(font.url()).await {
                Ok(bytes) => {
                    let data = egui::FontData::from_owned(bytes);
                    let data = match font.tweak() {
                        Some(tweak) => data.tweak(tweak),
                        None => data,
                    };
                    let definitions = {
                        let mut loaded = loaded.lock().unwrap_or_else(PoisonError::into_inner);
                        loaded.push((font, Arc::new(data)));
                        with_fonts(&loaded)
                    };
                    ctx.set_fonts(definitions);
                    ctx.request_repaint();
                    publish::font(font.name());
                }
                Err(error) => {
                    let error = error.as_string().unwrap_or_else(|| format!("{error:?}"));
                    log::warn!("could not load the font {}: {error}", font.url());
                }
            }
        });
    }
}

/// The body of a same-origin GET, or why there is none.
async fn fetch_bytes(url: &str) -> Result<Vec<u8>, JsValue> {
    let window = web_sys::window().ok_or_else(|| JsValue::from_str("no window"))?;
    let response: web_sys::Response =
        JsFuture::from(window.fetch_with_str(url)).await?.dyn_into()?;
    if !response.ok() {
        return Err(JsValue::from_str(&format!("HTTP {}", response.status())));
    }
    let buffer = JsFuture::from(response.array_buffer()?).await?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// True when askpane's bridge served this page: it serves the page's `askpane-served-by` tag
/// saying so (a plain file server leaves it saying `files`).
fn served_by_askpane() -> bool {
    web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.query_selector(r#"meta[name="askpane-served-by"]"#).ok()?)
        .and_then(|meta| meta.get_attribute("content"))
        .is_some_and(|served_by| served_by == "askpane")
}

fn location_hash() -> String {
    web_sys::window().and_then(|window| window.location().hash().ok()).unwrap_or_default()
}

fn loading_element() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.get_element_by_id(LOADING_ID)
}

fn show_loading_message(text: &str) {
    if let Some(element) = loading_element() {
        element.set_text_content(Some(text));
    }
}

fn remove_loading_message() {
    if let Some(element) = loading_element() {
        element.remove();
    }
}

/// What the page publishes on `window` for tests (and for anyone curious, in the console).
mod publish {
    use js_sys::{Array, Reflect};
    use wasm_bindgen::{JsCast as _, JsValue};

    const REPLIES: &str = "askpaneReplies";
    const FONTS: &str = "askpaneFonts";
    const DELIVERIES: &str = "askpaneDeliveries";

    /// Creates the empty arrays and clears the ready flag.
    pub fn init() {
        set(REPLIES, &Array::new());
        set(FONTS, &Array::new());
        set(DELIVERIES, &Array::new());
        set("askpaneReady", &JsValue::FALSE);
    }

    /// The page was opened without its token where askpane served it: `window.askpaneNeedsLink`
    /// is true, and it shows no questions.
    pub fn needs_link() {
        set("askpaneNeedsLink", &JsValue::TRUE);
    }

    /// The first frame has been painted into the canvas: `askpaneFirstFrameMs` (since
    /// navigation started) and `askpaneReady` are set at the next animation frame, once the
    /// browser has presented it, as scripts/bench-web's blank baseline page marks its own (its
    /// second animation frame). Set at once, the mark came before the presenting: without a GPU,
    /// Chromium reads the canvas back and SwiftShader runs the frame's GL commands then, about
    /// 100 ms the ratio left out (issue 30). Where no animation frame can be asked for, at once.
    pub fn ready() {
        fn mark() {
            set("askpaneFirstFrameMs", &JsValue::from_f64(super::now_ms()));
            set("askpaneReady", &JsValue::TRUE);
        }
        let presented = wasm_bindgen::closure::Closure::once_into_js(mark);
        let asked = web_sys::window()
            .map(|window| window.request_animation_frame(presented.unchecked_ref()));
        if !matches!(asked, Some(Ok(_))) {
            mark();
        }
    }

    /// Appends one reply, as JSON text, to `window.askpaneReplies`.
    pub fn reply(reply: &serde_json::Value) {
        push(REPLIES, &JsValue::from_str(&reply.to_string()));
    }

    /// Appends what became of an answer sent to the bridge to `window.askpaneDeliveries`.
    pub fn delivery(event: &askpane::transport::web_client::DeliveryEvent) {
        let object = js_sys::Object::new();
        for (key, value) in [
            ("tool_use_id", event.tool_use_id.as_str()),
            ("state", event.state.name()),
            ("detail", &event.detail),
        ] {
            let _ = Reflect::set(&object, &JsValue::from_str(key), &JsValue::from_str(value));
        }
        push(DELIVERIES, &object);
    }

    /// When a test sets `window.askpaneWantWidgets`: every widget of the last frame that takes
    /// a click or a tap, as `{x, y, w, h, click, drag, label}` in CSS pixels, on
    /// `window.askpaneWidgets` (egui's canvas has no DOM for a test to measure tap targets on, nor
    /// to find a button by its words). `label` is what the widget says to a screen reader (a
    /// button's text), or null: the accessibility tree is built only once a test asked, and read
    /// at the end of each pass by [`WidgetsPublisher`].
    pub fn widgets(ctx: &egui::Context) {
        let Some(window) = web_sys::window() else { return };
        let wanted = Reflect::get(&window, &JsValue::from_str("askpaneWantWidgets"))
            .is_ok_and(|value| value.is_truthy());
        if wanted {
            ctx.enable_accesskit();
            // Added once: egui ignores a second plugin of the same type.
            ctx.add_plugin(WidgetsPublisher);
        }
    }

    /// Publishes `window.askpaneWidgets` from each finished pass, labels from its accessibility
    /// tree (see [`widgets`]).
    struct WidgetsPublisher;

    impl egui::plugin::Plugin for WidgetsPublisher {
        fn debug_name(&self) -> &'static str {
            "askpane-widgets"
        }

        fn output_hook(&mut self, ctx: &egui::Context, output: &mut egui::FullOutput) {
            let labels: std::collections::HashMap<_, String> = output
                .platform_output
                .accesskit_update
                .iter()
                .flat_map(|update| update.nodes.iter())
                .filter_map(|(id, node)| Some((*id, node.label()?.to_owned())))
                .collect();
            let zoom = f64::from(ctx.zoom_factor());
            let widgets = Array::new();
            // The pass just ended is the previous one once its output is made.
            ctx.viewport(|viewport| {
                for (_, layer) in viewport.prev_pass.widgets.layers() {
                    for widget in layer {
                        let sense = widget.sense;
                        if !(widget.enabled && widget.visible && sense.senses_click()) {
                            continue;
                        }
                        let rect = widget.interact_rect;
                        let object = js_sys::Object::new();
                        for (key, value) in [
                            ("x", f64::from(rect.min.x) * zoom),
                            ("y", f64::from(rect.min.y) * zoom),
                            ("w", f64::from(rect.width()) * zoom),
                            ("h", f64::from(rect.height()) * zoom),
                        ] {
                            let _ = Reflect::set(&object, &key.into(), &JsValue::from_f64(value));
                        }
                        let drag = JsValue::from_bool(sense.senses_drag());
                        let _ = Reflect::set(&object, &"drag".into(), &drag);
                        let label = labels
                            .get(&widget.id.accesskit_id())
                            .map_or(JsValue::NULL, |label| JsValue::from_str(label));
                        let _ = Reflect::set(&object, &"label".into(), &label);
                        widgets.push(&object);
                    }
                }
            });
            set("askpaneWidgets", &widgets);
        }
    }

    /// Issue 11: the last History page the bridge answered, on `window.askpaneHistory`:
    /// `{search, headers: [the first question's header of each entry], answers: [each entry's
    /// answer], error}`.
    pub fn history(page: &askpane::protocol::history::HistoryPage) {
        let object = js_sys::Object::new();
        let (headers, answers) = (Array::new(), Array::new());
        for item in &page.items {
            headers.push(&JsValue::from_str(&item.header));
            answers.push(&JsValue::from_str(&item.answer));
        }
        let error = page.error.as_deref().map_or(JsValue::NULL, JsValue::from_str);
        let _ = Reflect::set(&object, &"search".into(), &JsValue::from_str(&page.filter.search));
        let _ = Reflect::set(&object, &"headers".into(), &headers);
        let _ = Reflect::set(&object, &"answers".into(), &answers);
        let _ = Reflect::set(&object, &"error".into(), &error);
        set("askpaneHistory", &object);
    }

    /// Appends a font name to `window.askpaneFonts` once it is added to egui.
    pub fn font(name: &str) {
        push(FONTS, &JsValue::from_str(name));
    }

    fn set(key: &str, value: &JsValue) {
        if let Some(window) = web_sys::window() {
            let _ = Reflect::set(&window, &JsValue::from_str(key), value);
        }
    }

    fn push(key: &str, value: &JsValue) {
        let Some(window) = web_sys::window() else { return };
        let array = Reflect::get(&window, &JsValue::from_str(key))
            .ok()
            .and_then(|array| array.dyn_into::<Array>().ok());
        match array {
            Some(array) => {
                array.push(value);
            }
            None => set(key, &Array::of1(value)),
        }
    }
}

/// egui's own last-resort fonts: icons and emoji (natively embedded; fetched on the web). They
/// also hold a few CJK punctuation marks (the full-width "？"), so a script font must come before
/// them to draw its own.
const SYMBOL_FONTS: [&str; 3] = ["egui-icons", "NotoEmoji-Regular", "emoji-icon-font"];

/// The window's fonts with the fetched ones added to every family (the previews' too) where
/// egui's defaults have them: a script font after the text fonts and before [`SYMBOL_FONTS`], an
/// emoji font among those, in their order, whichever arrived first.
fn with_fonts(loaded: &[Fetched]) -> egui::FontDefinitions {
    let mut definitions = askpane::view::theme::font_definitions();
    let families = [
        egui::FontFamily::Proportional,
        egui::FontFamily::Monospace,
        askpane::view::theme::preview_family(),
    ];
    for font in WebFont::ALL {
        let Some((_, data)) = loaded.iter().find(|(fetched, _)| *fetched == font) else {
            continue;
        };
        let name = font.name();
        definitions.font_data.insert(name.to_owned(), Arc::clone(data));
        // The symbol fonts that must come after this one.
        let after: &[&str] = match SYMBOL_FONTS.iter().position(|symbol| *symbol == name) {
            Some(at) => SYMBOL_FONTS.get(at + 1..).unwrap_or_default(),
            None => &SYMBOL_FONTS,
        };
        for family in &families {
            let list = definitions.families.entry(family.clone()).or_default();
            let at = list.iter().position(|font| after.contains(&font.as_str()));
            list.insert(at.unwrap_or(list.len()), name.to_owned());
        }
    }
    definitions
}
