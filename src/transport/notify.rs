//! Desktop notifications (issue 11): the `notifier` thread that shows what [`Notices`] decides
//! through the freedesktop `org.freedesktop.Notifications` interface on the session bus (zbus),
//! and hands a notification's "Open" back to the window.
//!
//! The window reports a [`Snapshot`] (what waits, whether it has focus) whenever it changes; the
//! report never blocks (an unbounded channel). The inbox's socket hands over the notices of Claude
//! Code terminals that wait (issue 26 item 6) on the same channel; [`Terminals`] holds them beside
//! the snapshot. One notification is kept per inbox, replaced by id.
//! The bus is reached on the first notification to show, and again after it was lost: with no bus
//! or no notification server there are no notifications, and one line on stderr says why.

use std::collections::HashMap;
use std::io;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures_lite::StreamExt as _;
use zbus::zvariant::Value;

use crate::protocol::doctor::BusFacts;
use crate::protocol::hook_notification::TerminalNotice;
use crate::protocol::markup;
use crate::protocol::notice::{NoticeCommand, Notices, Notification, Snapshot, Terminals};
use crate::protocol::origin::RequestId;
use crate::transport::session_bus::{NoOwnBus, connect_own};

const DESTINATION: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const INTERFACE: &str = "org.freedesktop.Notifications";

/// The action keys askpane offers: `default` (a click on the notification) and `open` (a button),
/// both showing the request.
const ACTIONS: [&str; 4] = ["default", "Open", "open", "Open"];

/// How long a call to the notification server may take: a hung server must not hold the inbox
/// up at its end (the thread is joined).
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a call may take for [`notify_once`]: its caller is a hook Claude Code waits for.
const ONCE_TIMEOUT: Duration = Duration::from_secs(2);

/// What wakes the notifier thread.
#[derive(Debug)]
enum Input {
    /// The window changed.
    Snapshot(Snapshot),
    /// A Claude Code terminal says it waits.
    Notice(TerminalNotice),
    /// Issue 29 item 5 (the tray's menu): no notification is shown until then.
    Pause(Instant),
}

/// The notifier thread and the channel that wakes it.
#[derive(Debug)]
pub struct Notifier {
    inputs: async_channel::Sender<Input>,
    thread: Option<JoinHandle<()>>,
}

impl Notifier {
    /// Starts the `notifier` thread. `open` is called (on that thread) with the request whose
    /// notification the user opened.
    pub fn start(open: impl Fn(RequestId) + Send + 'static) -> io::Result<Notifier> {
        let (inputs, receiver) = async_channel::unbounded();
        let thread = crate::transport::spawn_named("notifier", move || {
            zbus::block_on(run(&receiver, &open))
        })?;
        Ok(Notifier { inputs, thread: Some(thread) })
    }

    /// What the window calls with each change; it never blocks.
    pub fn reporter(&self) -> impl FnMut(Snapshot) + Send + 'static {
        let inputs = self.inputs.clone();
        move |snapshot| {
            // The notifier is gone only once the inbox ends; nothing is left to show then.
            let _ = inputs.try_send(Input::Snapshot(snapshot));
        }
    }

    /// What the inbox's socket calls with a terminal's notice (issue 26 item 6); it never blocks.
    pub fn noticer(&self) -> impl Fn(TerminalNotice) + Send + Sync + 'static {
        let inputs = self.inputs.clone();
        move |notice| {
            let _ = inputs.try_send(Input::Notice(notice));
        }
    }

    /// What the tray's "Pause notifications" calls with the end of the pause; it never blocks.
    pub fn pauser(&self) -> impl Fn(Instant) + Send + Sync + 'static {
        let inputs = self.inputs.clone();
        move |until| {
            let _ = inputs.try_send(Input::Pause(until));
        }
    }

    /// Closes the notification shown and ends the thread.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.inputs.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        self.end();
    }
}

/// The notification up now: the server's id for it, and the request its "Open" shows.
#[derive(Clone, Copy, Debug)]
struct Shown {
    id: u32,
    open: RequestId,
}

/// The thread: decides with [`Notices`], shows through the bus, until the channel closes.
async fn run(inputs: &async_channel::Receiver<Input>, open: &dyn Fn(RequestId)) {
    let mut notices = Notices::default();
    let mut terminals = Terminals::default();
    // What the window last reported (nothing waits, not focused, until it reports).
    let mut window = Snapshot::default();
    let mut bus: Option<Bus> = None;
    let mut said_why = false;
    let mut paused_until: Option<Instant> = None;
    loop {
        let event = match &mut bus {
            Some(bus) => {
                let input = async { Event::Input(inputs.recv().await.ok()) };
                let signal = async { Event::Signal(bus.signals.next().await) };
                futures_lite::future::or(input, signal).await
            }
            None => Event::Input(inputs.recv().await.ok()),
        };
        match event {
            Event::Input(None) => break,
            Event::Input(Some(input)) => {
                match input {
                    Input::Snapshot(snapshot) => {
                        terminals.settle(&snapshot.waiting);
                        window = snapshot;
                    }
                    Input::Pause(until) => {
                        log::info!(
                            "desktop notifications paused for {:?}",
                            until.saturating_duration_since(Instant::now())
                        );
                        paused_until = Some(until);
                        continue;
                    }
                    Input::Notice(notice) => {
                        if !terminals.arrive(&notice, RequestId::next(), &window.waiting) {
                            log::info!(
                                "{}: its session's card in the inbox has notified already",
                                notice.headline()
                            );
                            continue;
                        }
                    }
                }
                let waiting = terminals.beside(&window.waiting);
                let Some(command) = notices.update(&waiting, window.focused, window.hidden) else {
                    continue;
                };
                // Paused (the tray's menu): what would show is taken as dismissed, so the next
                // arrival after the pause shows afresh.
                if matches!(command, NoticeCommand::Show(_))
                    && paused_until.is_some_and(|until| Instant::now() < until)
                {
                    log::info!("a desktop notification was not shown: notifications are paused");
                    dismissed(&mut notices, &mut terminals);
                    continue;
                }
                if bus.is_none() && matches!(command, NoticeCommand::Show(_)) {
                    match Bus::connect(CALL_TIMEOUT).await {
                        Ok(connected) => bus = Some(connected),
                        Err(error) => {
                            if !std::mem::replace(&mut said_why, true) {
                                log::warn!("no desktop notifications ({error})");
                            }
                            dismissed(&mut notices, &mut terminals);
                            continue;
                        }
                    }
                }
                let Some(connected) = &mut bus else { continue };
                if let Err(error) = connected.perform(command).await {
                    log::warn!("a desktop notification failed ({error})");
                    dismissed(&mut notices, &mut terminals);
                    bus = None;
                }
            }
            Event::Signal(Some(signal)) => {
                let Some(connected) = &mut bus else { continue };
                match connected.heard(&signal) {
                    Heard::Opened(request) => {
                        dismissed(&mut notices, &mut terminals);
                        open(request);
                        // Servers close a notification whose action was taken; some keep it.
                        let _ = connected.perform(NoticeCommand::Close).await;
                    }
                    Heard::Closed => dismissed(&mut notices, &mut terminals),
                    Heard::Other => {}
                }
            }
            // The bus went away: reached again for the next notification.
            Event::Signal(None) => {
                dismissed(&mut notices, &mut terminals);
                bus = None;
            }
        }
    }
    // The inbox ends (or goes lean): its requests are answered, so a notification naming them
    // goes; one naming terminals alone stays, the person's to dismiss.
    if let Some(mut bus) = bus
        && notices.names_requests()
    {
        let _ = bus.perform(NoticeCommand::Close).await;
    }
}

/// The notification is gone (dismissed, expired, opened, or never shown): the next arrival shows
/// a new one, and the terminals it named are done with (the window does not list them).
fn dismissed(notices: &mut Notices, terminals: &mut Terminals) {
    notices.dismissed();
    terminals.clear();
}

/// Raises `notification` once, on its own, for a process that is not the inbox (`askpane hook`
/// given a terminal's notice when no inbox runs): the inbox's app name and category, so it sits
/// with the inbox's own. Every call to the bus is bounded by [`CALL_TIMEOUT`].
pub fn notify_once(notification: &Notification) -> Result<(), NoOwnBus> {
    zbus::block_on(async {
        let mut bus = Bus::connect(ONCE_TIMEOUT).await?;
        Ok(bus.show(notification).await?)
    })
}

/// Issue 29 (`askpane doctor`): whether the session bus has a notification server, asking the
/// bus only (no notification is shown); every call bounded by [`ONCE_TIMEOUT`].
pub fn service_facts() -> BusFacts {
    let address = std::env::var("DBUS_SESSION_BUS_ADDRESS").ok().filter(|set| !set.is_empty());
    let connected = zbus::block_on(async {
        zbus::connection::Builder::session()?.method_timeout(ONCE_TIMEOUT).build().await
    });
    let connection = match (connected, address) {
        (Ok(connection), _) => connection,
        (Err(error), Some(address)) => {
            return BusFacts::Unreachable { address, why: error.to_string() };
        }
        (Err(error), None) => {
            return BusFacts::NoBus(format!("DBUS_SESSION_BUS_ADDRESS is not set: {error}"));
        }
    };
    zbus::block_on(async {
        let Ok(bus) = zbus::fdo::DBusProxy::new(&connection).await else {
            return BusFacts::Absent;
        };
        let name = zbus::names::BusName::try_from(DESTINATION);
        let owned = match name {
            Ok(name) => bus.name_has_owner(name).await.unwrap_or(false),
            Err(_) => false,
        };
        if owned {
            let server = match zbus::Proxy::new(&connection, DESTINATION, PATH, INTERFACE).await {
                Ok(proxy) => proxy
                    .call::<_, _, (String, String, String, String)>("GetServerInformation", &())
                    .await
                    .ok()
                    .map(|(name, ..)| name),
                Err(_) => None,
            };
            return BusFacts::Running { server };
        }
        let activatable = bus.list_activatable_names().await.unwrap_or_default();
        match activatable.iter().any(|name| name.as_str() == DESTINATION) {
            true => BusFacts::Activatable,
            false => BusFacts::Absent,
        }
    })
}

enum Event {
    Input(Option<Input>),
    Signal(Option<zbus::Message>),
}

/// What a signal from the server meant for us.
enum Heard {
    Opened(RequestId),
    Closed,
    Other,
}

/// The session bus and the notification server on it.
struct Bus {
    proxy: zbus::Proxy<'static>,
    signals: zbus::proxy::SignalStream<'static>,
    /// The server reads markup in the body (`body-markup`): the text must be escaped.
    markup: bool,
    shown: Option<Shown>,
}

impl Bus {
    /// Reaches the server on the user's own session bus only (a notification tells what waits);
    /// every call to it is bounded by `timeout`.
    async fn connect(timeout: Duration) -> Result<Bus, NoOwnBus> {
        let connection = connect_own(timeout).await?;
        let proxy = zbus::Proxy::new(&connection, DESTINATION, PATH, INTERFACE).await?;
        // Also proves a server is there (or can be started by the bus).
        let capabilities: Vec<String> = proxy.call("GetCapabilities", &()).await?;
        let markup = capabilities.iter().any(|capability| capability == "body-markup");
        let signals = proxy.receive_all_signals().await?;
        Ok(Bus { proxy, signals, markup, shown: None })
    }

    async fn perform(&mut self, command: NoticeCommand) -> zbus::Result<()> {
        match command {
            NoticeCommand::Show(notification) => self.show(&notification).await,
            NoticeCommand::Close => match self.shown.take() {
                Some(shown) => self.proxy.call("CloseNotification", &(shown.id,)).await,
                None => Ok(()),
            },
        }
    }

    /// Shows `notification` in place of the one up (by its id), never taking the keyboard:
    /// a notification server does not, and askpane asks for nothing that would.
    async fn show(&mut self, notification: &Notification) -> zbus::Result<()> {
        let body = match self.markup {
            true => markup::escape(&notification.body),
            false => notification.body.clone(),
        };
        let replaces = self.shown.map_or(0, |shown| shown.id);
        let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
        // Normal urgency: a question waits, nothing is on fire.
        hints.insert("urgency", Value::U8(1));
        hints.insert("category", Value::from("im.received"));
        // Hidden with requests waiting: it stays (no expiry; kept after its action) until the
        // requests are answered or the window is shown, when askpane closes it.
        if notification.persistent {
            hints.insert("resident", Value::Bool(true));
        }
        let id: u32 = self
            .proxy
            .call(
                "Notify",
                &(
                    "askpane",
                    replaces,
                    "dialog-question",
                    notification.summary.as_str(),
                    body.as_str(),
                    if notification.opens { &ACTIONS[..] } else { &[] },
                    hints,
                    // 0: never expires; -1: the server's own time.
                    if notification.persistent { 0i32 } else { -1i32 },
                ),
            )
            .await?;
        self.shown = Some(Shown { id, open: notification.open });
        Ok(())
    }

    fn heard(&mut self, signal: &zbus::Message) -> Heard {
        let header = signal.header();
        let Some(shown) = self.shown else { return Heard::Other };
        match header.member().map(|member| member.as_str()) {
            Some("ActionInvoked") => match signal.body().deserialize::<(u32, String)>() {
                // `shown` stays: the caller closes it (some servers keep it up after an action).
                Ok((id, action)) if id == shown.id && (action == "default" || action == "open") => {
                    Heard::Opened(shown.open)
                }
                _ => Heard::Other,
            },
            Some("NotificationClosed") => match signal.body().deserialize::<(u32, u32)>() {
                Ok((id, _reason)) if id == shown.id => {
                    self.shown = None;
                    Heard::Closed
                }
                _ => Heard::Other,
            },
            _ => Heard::Other,
        }
    }
}
