//! The tray icon (issue 29 item 5): the `tray` thread puts a freedesktop StatusNotifierItem for
//! the running inbox on the session bus (zbus), with its menu as `com.canonical.dbusmenu`, and
//! keeps it following the asks that wait ([`TrayView`] decides what it shows).
//!
//! The item registers with the `org.kde.StatusNotifierWatcher` a tray host (KDE, waybar, GNOME's
//! AppIndicator extension …) provides; when none is on the bus it stays unregistered, says so in
//! one line, and registers when a watcher appears. With no session bus at all there is no icon
//! and nothing else changes. A bus of another user (its daemon's uid is not ours: a bus set up to
//! let others in, reached through an inherited DBUS_SESSION_BUS_ADDRESS) gets no item either.
//! Written on zbus directly (not `ksni`): the interface is two objects
//! of a few properties and methods, and this way no crate is added (see Cargo.toml).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures_lite::StreamExt as _;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, StructureBuilder, Value};

use crate::protocol::doctor::TrayFacts;
use crate::protocol::inbox::{InboxMessage, Listed};
use crate::protocol::tray::{TrayAction, TrayView, WAITING_ICON};
use crate::transport::session_bus::{NoOwnBus, connect_own};

const WATCHER: &str = "org.kde.StatusNotifierWatcher";
const WATCHER_PATH: &str = "/StatusNotifierWatcher";
const ITEM_PATH: &str = "/StatusNotifierItem";
const MENU_PATH: &str = "/MenuBar";

/// How long a call on the bus may take: a hung watcher must not hold the inbox up at its end
/// (the thread is joined).
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// How long "Pause notifications for an hour" pauses them.
pub const PAUSE: Duration = Duration::from_secs(60 * 60);

/// What a menu click or the icon's activation asks of the inbox; called on a bus thread, so it
/// must not block.
pub type Act = Arc<dyn Fn(TrayAction) + Send + Sync>;

/// How long `askpane doctor` waits for the bus.
const DOCTOR_TIMEOUT: Duration = Duration::from_secs(2);

/// `askpane doctor`'s look for a tray host: does the watcher's name have an owner?
pub fn host_facts() -> TrayFacts {
    zbus::block_on(async {
        let Ok(builder) = zbus::connection::Builder::session() else { return TrayFacts::NoBus };
        let Ok(connection) = builder.method_timeout(DOCTOR_TIMEOUT).build().await else {
            return TrayFacts::NoBus;
        };
        let Ok(bus) = zbus::fdo::DBusProxy::new(&connection).await else {
            return TrayFacts::NoBus;
        };
        let Ok(name) = zbus::names::BusName::try_from(WATCHER) else { return TrayFacts::NoHost };
        match bus.name_has_owner(name).await {
            Ok(true) => TrayFacts::Host,
            _ => TrayFacts::NoHost,
        }
    })
}

/// What wakes the tray thread.
#[derive(Debug)]
enum Input {
    Asked(Box<Listed>),
    Settled { connection: u64, id: String },
}

/// The tray thread and the channel that wakes it.
#[derive(Debug)]
pub struct Tray {
    inputs: async_channel::Sender<Input>,
    /// Closed when the tray is to end: stops a connection attempt to a bus that never answers
    /// (the lean inbox joins the thread before its exec).
    stop: async_channel::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Tray {
    /// Starts the `tray` thread; `act` is called with what the person clicked.
    pub fn start(act: impl Fn(TrayAction) + Send + Sync + 'static) -> io::Result<Tray> {
        let (inputs, receiver) = async_channel::unbounded();
        let (stop, stopped) = async_channel::bounded(1);
        let act: Act = Arc::new(act);
        let thread = crate::transport::spawn_named("tray", move || {
            zbus::block_on(run(&receiver, &stopped, act));
        })?;
        Ok(Tray { inputs, stop, thread: Some(thread) })
    }

    /// What the inbox's socket calls with each event it tells subscribers; it never blocks.
    pub fn observer(&self) -> impl Fn(&InboxMessage) + Send + Sync + 'static {
        let inputs = self.inputs.clone();
        move |message| {
            let input = match message {
                InboxMessage::Asked { request } => Input::Asked(Box::new(request.clone())),
                InboxMessage::Settled { connection, id, .. } => {
                    Input::Settled { connection: *connection, id: id.clone() }
                }
                _ => return,
            };
            // The tray is gone only once the inbox ends.
            let _ = inputs.try_send(input);
        }
    }

    /// Takes the icon off the bus and ends the thread.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.stop.close();
        self.inputs.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Tray {
    fn drop(&mut self) {
        self.end();
    }
}

/// What the icon shows, shared by the thread and the bus's handlers.
#[derive(Debug, Default)]
struct State {
    open: Vec<Listed>,
    view: TrayView,
    paused_until: Option<Instant>,
    /// The menu's layout revision (dbusmenu), bumped at every change.
    revision: u32,
}

impl State {
    fn paused(&self) -> bool {
        self.paused_until.is_some_and(|until| Instant::now() < until)
    }
}

type Shared = Arc<Mutex<State>>;

fn view_of(state: &Shared) -> TrayView {
    state.lock().map(|state| state.view.clone()).unwrap_or_default()
}

/// The thread: serves the item, registers it, follows the inputs until the channel closes.
async fn run(
    inputs: &async_channel::Receiver<Input>,
    stopped: &async_channel::Receiver<()>,
    act: Act,
) {
    let state: Shared = Arc::default();
    let connecting = async { Some(connect(&state, &act).await) };
    let stopping = async {
        let _ = stopped.recv().await;
        None
    };
    let connection = match futures_lite::future::or(connecting, stopping).await {
        // Ended while the bus had not answered yet.
        None => return,
        Some(Ok(connection)) => Some(connection),
        Some(Err(NoOwnBus::Unreachable(error))) => {
            log::info!("no tray icon: the session bus cannot be reached ({error})");
            None
        }
        Some(Err(NoOwnBus::AnotherUsers(uid))) => {
            log::warn!(
                "no tray icon: the session bus (DBUS_SESSION_BUS_ADDRESS) belongs to another \
                 user (uid {uid}), who would see what waits and could pause or quit this inbox"
            );
            None
        }
    };
    let mut watchers = match &connection {
        Some(connection) => watcher_changes(connection).await,
        None => None,
    };
    if let Some(connection) = &connection {
        register(connection).await;
    }
    loop {
        let event = match &mut watchers {
            Some(changes) => {
                let input = async { Event::Input(inputs.recv().await.ok()) };
                let watcher = async { Event::Watcher(changes.next().await.is_some()) };
                futures_lite::future::or(input, watcher).await
            }
            None => Event::Input(inputs.recv().await.ok()),
        };
        match event {
            Event::Input(None) => break,
            Event::Input(Some(input)) => {
                if let Ok(mut state) = state.lock() {
                    match input {
                        // Seeded and then announced (`serve_observer`): counted once.
                        Input::Asked(listed) => {
                            let known = state.open.iter().any(|open| {
                                open.connection == listed.connection && open.id == listed.id
                            });
                            if !known {
                                state.open.push(*listed);
                            }
                        }
                        Input::Settled { connection, id } => state
                            .open
                            .retain(|listed| listed.connection != connection || listed.id != id),
                    }
                    state.view = TrayView::of(&state.open);
                    state.revision = state.revision.wrapping_add(1);
                }
                if let Some(connection) = &connection {
                    changed(connection, &state).await;
                }
            }
            // A watcher appeared (a tray host started, or restarted): register with it.
            Event::Watcher(true) => {
                if let Some(connection) = &connection {
                    register(connection).await;
                }
            }
            Event::Watcher(false) => watchers = None,
        }
    }
}

/// What the thread woke for.
enum Event {
    Input(Option<Input>),
    Watcher(bool),
}

/// This item's bus name, as the specification spells it.
fn item_name() -> String {
    format!("org.kde.StatusNotifierItem-{}-1", std::process::id())
}

/// Connects to the session bus and, only once the bus is known to be this user's, serves the
/// item and its menu there and takes the item's name.
async fn connect(state: &Shared, act: &Act) -> Result<zbus::Connection, NoOwnBus> {
    let connection = connect_own(CALL_TIMEOUT).await?;
    let item = Item { state: Arc::clone(state), act: Arc::clone(act) };
    let menu = Menu { state: Arc::clone(state), act: Arc::clone(act) };
    connection.object_server().at(ITEM_PATH, item).await?;
    connection.object_server().at(MENU_PATH, menu).await?;
    connection.request_name(item_name()).await?;
    Ok(connection)
}

/// Every time the watcher's name gets a new owner; `None` when the bus will not say.
async fn watcher_changes(
    connection: &zbus::Connection,
) -> Option<zbus::fdo::NameOwnerChangedStream> {
    let bus = zbus::fdo::DBusProxy::new(connection).await.ok()?;
    bus.receive_name_owner_changed_with_args(&[(0, WATCHER)]).await.ok()
}

/// Registers the item with the watcher; with none on the bus, says so once per attempt.
async fn register(connection: &zbus::Connection) {
    let registered = async {
        let watcher = zbus::Proxy::new(connection, WATCHER, WATCHER_PATH, WATCHER).await?;
        watcher.call::<_, _, ()>("RegisterStatusNotifierItem", &(item_name(),)).await
    };
    match registered.await {
        Ok(()) => log::info!("tray icon registered"),
        Err(error) => log::info!(
            "no tray icon shown: no tray host (StatusNotifierWatcher) on the session bus ({error})"
        ),
    }
}

/// Tells the tray host what changed: the icon, status, tooltip and menu.
async fn changed(connection: &zbus::Connection, state: &Shared) {
    let view = view_of(state);
    let revision = state.lock().map(|state| state.revision).unwrap_or(0);
    let server = connection.object_server();
    if let Ok(item) = server.interface::<_, Item>(ITEM_PATH).await {
        let emitter = item.signal_emitter();
        let _ = Item::new_icon(emitter).await;
        let _ = Item::new_tool_tip(emitter).await;
        let _ = Item::new_status(emitter, view.status().name()).await;
        let item = item.get().await;
        let _ = item.icon_name_changed(emitter).await;
        let _ = item.status_changed(emitter).await;
        let _ = item.tool_tip_changed(emitter).await;
    }
    if let Ok(menu) = server.interface::<_, Menu>(MENU_PATH).await {
        let _ = Menu::layout_updated(menu.signal_emitter(), revision, 0).await;
    }
}

/// `org.kde.StatusNotifierItem` at [`ITEM_PATH`].
struct Item {
    state: Shared,
    act: Act,
}

/// A tooltip: icon name, icon pixmaps (none), title, text.
type ToolTip = (String, Vec<(i32, i32, Vec<u8>)>, String, String);

#[zbus::interface(name = "org.kde.StatusNotifierItem")]
impl Item {
    #[zbus(property)]
    fn category(&self) -> &str {
        "Communications"
    }

    #[zbus(property)]
    fn id(&self) -> &str {
        "askpane"
    }

    #[zbus(property)]
    fn title(&self) -> &str {
        "askpane inbox"
    }

    #[zbus(property)]
    fn status(&self) -> String {
        view_of(&self.state).status().name().to_owned()
    }

    #[zbus(property)]
    fn icon_name(&self) -> String {
        view_of(&self.state).icon_name().to_owned()
    }

    #[zbus(property)]
    fn attention_icon_name(&self) -> &str {
        WAITING_ICON
    }

    #[zbus(property)]
    fn tool_tip(&self) -> ToolTip {
        let view = view_of(&self.state);
        (view.icon_name().to_owned(), Vec::new(), "askpane".to_owned(), view.tooltip())
    }

    #[zbus(property)]
    fn item_is_menu(&self) -> bool {
        false
    }

    #[zbus(property)]
    fn menu(&self) -> OwnedObjectPath {
        OwnedObjectPath::from(ObjectPath::from_static_str_unchecked(MENU_PATH))
    }

    /// A click on the icon: the window.
    fn activate(&self, _x: i32, _y: i32) {
        (self.act)(TrayAction::Show);
    }

    fn secondary_activate(&self, _x: i32, _y: i32) {
        (self.act)(TrayAction::Show);
    }

    /// The host shows the menu itself (from [`MENU_PATH`]).
    fn context_menu(&self, _x: i32, _y: i32) {}

    fn scroll(&self, _delta: i32, _orientation: &str) {}

    #[zbus(signal)]
    async fn new_icon(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn new_tool_tip(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn new_status(emitter: &SignalEmitter<'_>, status: &str) -> zbus::Result<()>;
}

/// `com.canonical.dbusmenu` at [`MENU_PATH`]: a flat menu under the root (id 0).
struct Menu {
    state: Shared,
    act: Act,
}

type Properties = HashMap<String, OwnedValue>;
type Layout = (i32, Properties, Vec<OwnedValue>);

fn owned<'a>(value: impl Into<Value<'a>>) -> Option<OwnedValue> {
    value.into().try_to_owned().ok()
}

fn properties(pairs: Vec<(&str, Option<OwnedValue>)>) -> Properties {
    pairs.into_iter().filter_map(|(name, value)| Some((name.to_owned(), value?))).collect()
}

impl Menu {
    fn entries(&self) -> (u32, Vec<crate::protocol::tray::MenuEntry>) {
        match self.state.lock() {
            Ok(state) => (state.revision, state.view.menu(state.paused())),
            Err(_) => (0, TrayView::default().menu(false)),
        }
    }

    fn entry_properties(label: &str) -> Properties {
        properties(vec![
            ("label", owned(label)),
            ("enabled", owned(true)),
            ("visible", owned(true)),
        ])
    }

    fn root_properties() -> Properties {
        properties(vec![("children-display", owned("submenu"))])
    }

    fn clicked(&self, id: i32) -> bool {
        let (_, entries) = self.entries();
        let Some(entry) = entries.iter().find(|entry| entry.id == id) else { return false };
        if entry.action == TrayAction::PauseNotifications
            && let Ok(mut state) = self.state.lock()
        {
            state.paused_until = Some(Instant::now() + PAUSE);
            state.revision = state.revision.wrapping_add(1);
        }
        (self.act)(entry.action);
        true
    }
}

#[zbus::interface(name = "com.canonical.dbusmenu")]
impl Menu {
    fn get_layout(
        &self,
        parent_id: i32,
        _recursion_depth: i32,
        _property_names: Vec<String>,
    ) -> zbus::fdo::Result<(u32, Layout)> {
        let (revision, entries) = self.entries();
        if parent_id != 0 {
            // Entries have no children.
            let properties = entries
                .iter()
                .find(|entry| entry.id == parent_id)
                .map(|entry| Menu::entry_properties(&entry.label))
                .ok_or_else(|| zbus::fdo::Error::InvalidArgs(format!("no entry {parent_id}")))?;
            return Ok((revision, (parent_id, properties, Vec::new())));
        }
        let mut children = Vec::new();
        for entry in &entries {
            let child = StructureBuilder::new()
                .add_field(entry.id)
                .add_field(Menu::entry_properties(&entry.label))
                .add_field(Vec::<Value<'_>>::new())
                .build()
                .map_err(|error| zbus::fdo::Error::Failed(error.to_string()))?;
            if let Some(child) = owned(child) {
                children.push(child);
            }
        }
        Ok((revision, (0, Menu::root_properties(), children)))
    }

    fn get_group_properties(
        &self,
        ids: Vec<i32>,
        _property_names: Vec<String>,
    ) -> Vec<(i32, Properties)> {
        let (_, entries) = self.entries();
        let mut found = Vec::new();
        for id in ids {
            if id == 0 {
                found.push((0, Menu::root_properties()));
            } else if let Some(entry) = entries.iter().find(|entry| entry.id == id) {
                found.push((id, Menu::entry_properties(&entry.label)));
            }
        }
        found
    }

    fn get_property(&self, id: i32, name: &str) -> zbus::fdo::Result<OwnedValue> {
        let (_, entries) = self.entries();
        let properties = match id {
            0 => Menu::root_properties(),
            _ => entries
                .iter()
                .find(|entry| entry.id == id)
                .map(|entry| Menu::entry_properties(&entry.label))
                .unwrap_or_default(),
        };
        properties
            .get(name)
            .and_then(|value| value.try_clone().ok())
            .ok_or_else(|| zbus::fdo::Error::InvalidArgs(format!("no property {name} on {id}")))
    }

    fn event(&self, id: i32, event_id: &str, _data: Value<'_>, _timestamp: u32) {
        if event_id == "clicked" {
            self.clicked(id);
        }
    }

    /// The ids that were not found.
    fn event_group(&self, events: Vec<(i32, String, OwnedValue, u32)>) -> Vec<i32> {
        let mut missing = Vec::new();
        for (id, event_id, _, _) in events {
            if event_id == "clicked" && !self.clicked(id) {
                missing.push(id);
            }
        }
        missing
    }

    fn about_to_show(&self, _id: i32) -> bool {
        false
    }

    fn about_to_show_group(&self, _ids: Vec<i32>) -> (Vec<i32>, Vec<i32>) {
        (Vec::new(), Vec::new())
    }

    #[zbus(property)]
    fn version(&self) -> u32 {
        3
    }

    #[zbus(property)]
    fn text_direction(&self) -> &str {
        "ltr"
    }

    #[zbus(property)]
    fn status(&self) -> &str {
        "normal"
    }

    #[zbus(property)]
    fn icon_theme_path(&self) -> Vec<String> {
        Vec::new()
    }

    #[zbus(signal)]
    async fn layout_updated(
        emitter: &SignalEmitter<'_>,
        revision: u32,
        parent: i32,
    ) -> zbus::Result<()>;
}
