//! Desktop notifications from the inbox (issue 11), for real: a private session bus
//! (`dbus-daemon`, `tests/support/dbus.rs`), Debian's `dunst` as the notification server
//! on the test's Xvfb, and a monitor on the bus (zbus, `BecomeMonitor`) that sees every `Notify`
//! call askpane makes and what the server answers. The "Open" action is taken through dunst
//! itself (`dunstctl action`), which emits `ActionInvoked` as it does for a click.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use futures_lite::StreamExt as _;
use serde_json::{Value, json};
use zbus::zvariant::OwnedValue;

use crate::display::Xvfb;
use crate::inbox::Client;
use crate::support::dbus::SessionBus;
use crate::support::{Process, WAIT, artifact, read_lossy, require, run_bounded, scratch_dir};

/// What the monitor saw on the bus, in order.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    /// askpane's `Notify` call, with the id the server gave it.
    Notify {
        app: String,
        replaces: u32,
        icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        hints: Vec<String>,
        timeout: i32,
        id: u32,
    },
    CloseNotification {
        id: u32,
    },
    ActionInvoked {
        id: u32,
        action: String,
    },
    NotificationClosed {
        id: u32,
    },
}

/// A bus of the test's own with dunst on it, askpane's inbox, and the monitor.
struct World {
    xvfb: Xvfb,
    root: PathBuf,
    bus: String,
    seen: Receiver<Seen>,
    inbox: Option<Process>,
    _dunst: Option<Process>,
    _session: SessionBus,
}

impl World {
    /// A display, directories, a session bus, and (with `server`) dunst on it; no inbox yet.
    /// dunst reads bodies as plain text (its default): it does not say `body-markup`.
    fn new(name: &str, server: bool) -> World {
        World::with_dunst(name, server.then_some(""))
    }

    /// As [`World::new`], with `global` (lines of dunstrc's `[global]`) for dunst, if any.
    fn with_dunst(name: &str, global: Option<&str>) -> World {
        require("dunst");
        require("dunstctl");
        let xvfb = Xvfb::start();
        let root = scratch_dir(name);
        fs::create_dir_all(root.join("run")).expect("make the runtime dir");
        fs::set_permissions(root.join("run"), fs::Permissions::from_mode(0o700))
            .expect("narrow the runtime dir");
        let session = SessionBus::start(&root, &xvfb.display());
        let bus = session.address.clone();
        let dunst = global.map(|global| {
            // Notifications stay until closed: askpane, not a timer, closes them here.
            let config = root.join("dunstrc");
            fs::write(&config, format!("[global]\n{global}\n[urgency_normal]\n    timeout = 0\n"))
                .expect("write dunstrc");
            let child = Command::new("dunst")
                .arg("-config")
                .arg(&config)
                .env("DISPLAY", xvfb.display())
                .env("DBUS_SESSION_BUS_ADDRESS", &bus)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(root.join("dunst.log")).expect("dunst log"))
                .spawn()
                .expect("start dunst");
            Process::new(child)
        });
        let seen = monitor(&bus, global.is_some());
        World { xvfb, root, bus, seen, inbox: None, _dunst: dunst, _session: session }
    }

    /// `askpane <args>` in this world: its display, bus and directories, no ASKPANE_* setting.
    fn askpane(&self, args: &[&str]) -> Command {
        let mut command = crate::support::askpane_unset(args);
        command
            .env("DISPLAY", self.xvfb.display())
            .env_remove("WAYLAND_DISPLAY")
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .current_dir(&self.root);
        command
    }

    /// Starts the inbox with `command` and waits until its socket accepts.
    fn start_inbox(&mut self, mut command: Command) {
        command.stdin(Stdio::null()).stdout(Stdio::null());
        command.stderr(fs::File::create(self.root.join("inbox.stderr")).expect("stderr file"));
        self.inbox = Some(Process::new(command.spawn().expect("start askpane inbox")));
        // Until it greets: a socket that takes a connection may belong to an inbox still
        // starting, and a test that stops the inbox (SIGSTOP) must stop one that runs.
        let socket = self.root.join("run/askpane/inbox.sock");
        let deadline = Instant::now() + WAIT;
        while !greets(&socket) {
            assert!(Instant::now() < deadline, "no inbox greets\n{}", self.inbox_stderr());
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn inbox_stderr(&self) -> String {
        read_lossy(&self.root.join("inbox.stderr"))
    }

    /// `askpane hook` asking `question` in project `project` (its working directory's name).
    fn hook(&self, tool_use_id: &str, project: &str, header: &str, question: &str) -> Client {
        let input = json!({
            "session_id": "5e55-10n", "cwd": format!("/home/dev/{project}"),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "AskUserQuestion", "tool_use_id": tool_use_id,
            "tool_input": {"questions": [{
                "question": question, "header": header, "multiSelect": false,
                "options": [{"label": "Yes", "description": ""}, {"label": "No", "description": ""}]
            }]}
        });
        Client::spawn(self.askpane(&["hook"]), &input.to_string())
    }

    /// A `PermissionRequest` hook for Bash `command` in `project`: a tool call to allow or deny.
    fn approval(&self, project: &str, command: &str) -> Client {
        let input = json!({
            "session_id": "5e55-10n", "cwd": format!("/home/dev/{project}"),
            "permission_mode": "default", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": command, "description": "Run the tests"},
            "permission_suggestions": []
        });
        Client::spawn(self.askpane(&["hook"]), &input.to_string())
    }

    /// The next thing the monitor sees (fails the test after WAIT).
    fn next(&self) -> Seen {
        match self.seen.recv_timeout(WAIT) {
            Ok(seen) => seen,
            Err(error) => panic!(
                "nothing more on the bus within {WAIT:?} ({error})\ninbox:\n{}\ndunst:\n{}",
                self.inbox_stderr(),
                read_lossy(&self.root.join("dunst.log"))
            ),
        }
    }

    /// Waits until a visible window's title matches `pattern`; its id and exact title.
    fn window(&self, pattern: &str) -> (u32, String) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(window) = self.xvfb.find_window(pattern) {
                let title = crate::display::window_name(&self.xvfb.display(), window);
                return (window, title);
            }
            assert!(
                Instant::now() < deadline,
                "no window {pattern:?} within {WAIT:?}\n{}",
                self.inbox_stderr()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `dunstctl <args>` on this bus.
    fn dunstctl(&self, args: &[&str]) -> String {
        let mut command = Command::new("dunstctl");
        command.args(args).env("DBUS_SESSION_BUS_ADDRESS", &self.bus);
        let run = run_bounded(&mut command, None);
        assert!(run.status.success(), "dunstctl {args:?}: {run:?}");
        run.stdout
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let mut quit = self.askpane(&["inbox", "--quit"]);
        let _ = run_bounded(&mut quit, None);
        drop(self.inbox.take());
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// Watches the bus at `address` on a thread: every Notifications call and signal, and the
/// server's replies to `Notify`, as [`Seen`]. With `server`, returns once dunst owns the name.
fn monitor(address: &str, server: bool) -> Receiver<Seen> {
    let (sender, seen) = mpsc::channel();
    let (ready, started) = mpsc::channel();
    let address = address.to_owned();
    thread::spawn(move || {
        zbus::block_on(async move {
            let result = watch(&address, server, &sender, &ready).await;
            if let Err(error) = result {
                let _ = ready.send(Err(error.to_string()));
            }
        });
    });
    match started.recv_timeout(WAIT) {
        Ok(Ok(())) => seen,
        Ok(Err(error)) => panic!("cannot monitor the bus: {error}"),
        Err(error) => panic!("the bus monitor did not start within {WAIT:?} ({error})"),
    }
}

type NotifyCall =
    (String, u32, String, String, String, Vec<String>, HashMap<String, OwnedValue>, i32);

async fn watch(
    address: &str,
    server: bool,
    sender: &mpsc::Sender<Seen>,
    ready: &mpsc::Sender<Result<(), String>>,
) -> zbus::Result<()> {
    use zbus::message::Type;
    let connection = zbus::connection::Builder::address(address)?.build().await?;
    if server {
        let bus = zbus::fdo::DBusProxy::new(&connection).await?;
        let name = zbus::names::BusName::try_from("org.freedesktop.Notifications")?;
        let deadline = Instant::now() + WAIT;
        while !bus.name_has_owner(name.clone()).await? {
            if Instant::now() > deadline {
                return Err(zbus::Error::Failure("dunst never took its name".to_owned()));
            }
            // This thread is the monitor's own: blocking it a moment blocks nothing else.
            thread::sleep(Duration::from_millis(50));
        }
    }
    let rules = [
        zbus::MatchRule::builder().interface("org.freedesktop.Notifications")?.build(),
        zbus::MatchRule::builder().msg_type(Type::MethodReturn).build(),
    ];
    zbus::fdo::MonitoringProxy::new(&connection).await?.become_monitor(&rules, 0).await?;
    let _ = ready.send(Ok(()));
    let mut stream = zbus::MessageStream::from(&connection);
    // Notify calls waiting for their reply, by (caller, serial).
    let mut calls: HashMap<(String, u32), NotifyCall> = HashMap::new();
    while let Some(Ok(message)) = stream.next().await {
        let header = message.header();
        let member = header.member().map(|member| member.to_string()).unwrap_or_default();
        let caller = header.sender().map(|name| name.to_string()).unwrap_or_default();
        let seen = match (message.message_type(), member.as_str()) {
            (Type::MethodCall, "Notify") => {
                let Ok(call) = message.body().deserialize::<NotifyCall>() else { continue };
                calls.insert((caller, header.primary().serial_num().get()), call);
                continue;
            }
            (Type::MethodReturn, _) => {
                let destination = header.destination().map(|name| name.to_string());
                let key =
                    (destination.unwrap_or_default(), header.reply_serial().map_or(0, |s| s.get()));
                let Some(call) = calls.remove(&key) else { continue };
                let Ok(id) = message.body().deserialize::<u32>() else { continue };
                let (app, replaces, icon, summary, body, actions, hints, timeout) = call;
                let mut hints: Vec<String> = hints.into_keys().collect();
                hints.sort();
                Seen::Notify { app, replaces, icon, summary, body, actions, hints, timeout, id }
            }
            (Type::MethodCall, "CloseNotification") => {
                let Ok(id) = message.body().deserialize::<u32>() else { continue };
                Seen::CloseNotification { id }
            }
            (Type::Signal, "ActionInvoked") => {
                let Ok((id, action)) = message.body().deserialize::<(u32, String)>() else {
                    continue;
                };
                Seen::ActionInvoked { id, action }
            }
            (Type::Signal, "NotificationClosed") => {
                let Ok((id, _reason)) = message.body().deserialize::<(u32, u32)>() else {
                    continue;
                };
                Seen::NotificationClosed { id }
            }
            _ => continue,
        };
        if sender.send(seen).is_err() {
            break;
        }
    }
    Ok(())
}

/// The `Notify` askpane sends for `summary` and `body`, replacing `replaces`, given id `id`.
fn notify(replaces: u32, summary: &str, body: &str, id: u32) -> Seen {
    Seen::Notify {
        app: "askpane".to_owned(),
        replaces,
        icon: "dialog-question".to_owned(),
        summary: summary.to_owned(),
        body: body.to_owned(),
        actions: ["default", "Open", "open", "Open"].map(str::to_owned).to_vec(),
        hints: vec!["category".to_owned(), "urgency".to_owned()],
        timeout: -1,
        id,
    }
}

/// The `Notify` for terminals alone (issue 26 item 6): no "Open", as the window has nothing of
/// theirs to show (and a hook that raised it itself is gone before anyone clicks).
fn terminal_notify(replaces: u32, summary: &str, body: &str, id: u32) -> Seen {
    match notify(replaces, summary, body, id) {
        Seen::Notify { app, replaces, icon, summary, body, hints, timeout, id, .. } => {
            Seen::Notify {
                app,
                replaces,
                icon,
                summary,
                body,
                actions: Vec::new(),
                hints,
                timeout,
                id,
            }
        }
        other => other,
    }
}

fn notify_id(seen: &Seen) -> u32 {
    match seen {
        Seen::Notify { id, .. } => *id,
        other => panic!("expected a Notify, saw {other:?}"),
    }
}

#[test]
fn questions_arriving_unfocused_notify_grouped_replaced_closed_and_open_shows_that_request() {
    let mut world = World::new("notify", true);
    // A window manager, where focus is real: a question's window must not take it, "Open" must.
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));

    // One question: its project and header, and its question.
    let first = world.hook("toolu_n1", "shop", "Database", "Which database should orders use?");
    let shown = world.next();
    let id = notify_id(&shown);
    assert_eq!(shown, notify(0, "shop · Database", "Which database should orders use?", id));
    // A second one while the first waits: one grouped notification, replacing the first.
    let second = world.hook("toolu_n2", "blog", "Theme", "Light or dark?");
    assert_eq!(
        world.next(),
        notify(
            id,
            "2 questions waiting",
            "blog · Theme: Light or dark?\nshop · Database: Which database should orders use?",
            id
        )
    );
    assert_eq!(world.dunstctl(&["count", "displayed"]).trim(), "1", "one notification, not two");
    // The second client goes away: the notification names the one left.
    second.kill();
    assert_eq!(
        world.next(),
        notify(id, "shop · Database", "Which database should orders use?", id)
    );
    // Nothing waits: the notification closes.
    first.kill();
    assert_eq!(world.next(), Seen::CloseNotification { id });
    assert_eq!(world.next(), Seen::NotificationClosed { id });

    // A burst again, then the user takes "Open" on the notification (through dunst).
    let shop = world.hook("toolu_n3", "shop", "Database", "Which database should orders use?");
    let id = notify_id(&world.next());
    let blog = world.hook("toolu_n4", "blog", "Theme", "Light or dark?");
    let grouped = world.next();
    assert_eq!(notify_id(&grouped), id, "{grouped:?}");
    // The window shows the first question until then.
    let (window, title) = world.window("2 waiting");
    assert_eq!(title, "2 waiting · shop · 1 question — askpane");
    assert_ne!(world.xvfb.focused_window(), window, "a question's window took the focus");
    world.dunstctl(&["action", "0"]);
    assert_eq!(world.next(), Seen::ActionInvoked { id, action: "default".to_owned() });
    // askpane shows the window on the request the notification was about (the newest), and
    // closes the notification.
    let deadline = Instant::now() + WAIT;
    loop {
        let title = crate::display::window_name(&world.xvfb.display(), window);
        if title == "2 waiting · blog · 1 question — askpane" {
            break;
        }
        assert!(Instant::now() < deadline, "the window still shows {title:?}");
        thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(world.next(), Seen::CloseNotification { id });
    let deadline = Instant::now() + WAIT;
    while world.xvfb.focused_window() != window {
        assert!(Instant::now() < deadline, "\"Open\" did not raise the window");
        thread::sleep(Duration::from_millis(50));
    }
    // The window shows "blog": keys answer that request.
    world.xvfb.focus(window);
    world.xvfb.keys(window, &["2", "ctrl+Return"]);
    let (code, stdout, stderr) = blog.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("the hook printed JSON");
    assert_eq!(
        reply["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({"Light or dark?": "No"}),
        "{reply}"
    );
    shop.kill();
    assert!(
        world.inbox_stderr().lines().all(|line| !line.contains("notification")),
        "{}",
        world.inbox_stderr()
    );
}

#[test]
fn a_tool_call_waiting_notifies_as_a_question_does_and_is_counted_beside_them() {
    let mut world = World::new("notify-approval", true);
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));

    let call = world.approval("shop", "npm test");
    let shown = world.next();
    let id = notify_id(&shown);
    assert_eq!(shown, notify(0, "shop · Bash", "npm test", id));
    let question = world.hook("toolu_n5", "blog", "Theme", "Light or dark?");
    assert_eq!(
        world.next(),
        notify(
            id,
            "2 waiting: 1 question, 1 tool call",
            "blog · Theme: Light or dark?\nshop · Bash: npm test",
            id
        )
    );
    // The tool call's hook goes away (Claude Code gave up on it): the notification names the
    // question left.
    call.kill();
    assert_eq!(world.next(), notify(id, "blog · Theme", "Light or dark?", id));
    question.kill();
    assert_eq!(world.next(), Seen::CloseNotification { id });
}

#[test]
fn without_a_bus_the_inbox_works_and_says_once_why_there_are_no_notifications() {
    let mut world = World::new("notify-no-bus", false);
    // A bus address where nothing listens, as on a machine without a session bus.
    let mut inbox = world.askpane(&["inbox"]);
    inbox.env(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", world.root.join("nobus").display()),
    );
    world.start_inbox(inbox);
    let first = world.hook("toolu_b1", "shop", "Database", "Which database?");
    world.window("1 question");
    let second = world.hook("toolu_b2", "blog", "Theme", "Light or dark?");
    let (window, _) = world.window("2 waiting");
    world.xvfb.focus(window);
    world.xvfb.keys(window, &["1", "ctrl+Return"]);
    let (code, stdout, stderr) = first.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("the hook printed JSON");
    assert_eq!(
        reply["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({"Which database?": "Yes"}),
        "{reply}"
    );
    second.kill();
    let stderr = world.inbox_stderr();
    let why: Vec<&str> =
        stderr.lines().filter(|line| line.contains("no desktop notifications")).collect();
    assert_eq!(why.len(), 1, "{stderr}");
    assert!(why[0].starts_with("askpane: no desktop notifications ("), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn no_notify_and_askpane_notify_0_turn_notifications_off() {
    for off in ["--no-notify", "ASKPANE_NOTIFY=0"] {
        let mut world = World::new("notify-off", true);
        let mut inbox = world.askpane(&["inbox"]);
        match off.split_once('=') {
            Some((name, value)) => inbox.env(name, value),
            None => inbox.arg(off),
        };
        world.start_inbox(inbox);
        let first = world.hook("toolu_o1", "shop", "Database", "Which database?");
        let second = world.hook("toolu_o2", "blog", "Theme", "Light or dark?");
        world.window("2 waiting");
        // The window drew both; a notification would have been sent by now. Give the bus a
        // moment anyway (a notification that does not come marks nothing), then check nothing
        // reached the server.
        thread::sleep(Duration::from_millis(500));
        let seen: Vec<Seen> = world.seen.try_iter().collect();
        assert_eq!(seen, [], "{off}: {seen:?}");
        assert_eq!(world.dunstctl(&["count", "displayed"]).trim(), "0", "{off}");
        first.kill();
        second.kill();
    }
}

/// Issue 24 item 24: "keep waiting in the background" leaves the agents blocked with nothing on
/// screen but a notification: it stays (no expiry, resident) for as long as the window is hidden
/// and the question waits, and closes when it is answered elsewhere or goes.
#[test]
fn a_hidden_window_with_a_question_waiting_keeps_one_persistent_notification() {
    let mut world = World::new("notify-persistent", true);
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));
    let waiting = world.hook("toolu_p1", "shop", "Database", "Which database should orders use?");
    let shown = world.next();
    let id = notify_id(&shown);
    assert_eq!(shown, notify(0, "shop · Database", "Which database should orders use?", id));
    // The window is closed with the question waiting: "Keep waiting in the background" (Enter).
    let (window, _) = world.window("1 waiting|1 question");
    world.xvfb.focus(window);
    let undimmed = world.xvfb.brightness(window, &artifact("notify-before-close.png"));
    crate::display::send_wm_delete_window(world.xvfb.number, window);
    let dialog = "notify-close-dialog.png";
    crate::inbox::wait_for_the_close_dialog(&world.xvfb, window, undimmed, dialog);
    world.xvfb.xdotool(&["key", "--window", &window.to_string(), "Return"]);
    // Focusing it closed the first notification; hidden, a persistent one says what waits.
    let persistent = loop {
        let seen = world.next();
        match &seen {
            Seen::Notify { timeout: 0, .. } => break seen,
            Seen::CloseNotification { .. } | Seen::NotificationClosed { .. } => {}
            Seen::Notify { timeout, hints, .. } => {
                panic!("a notification that expires while hidden: {timeout} {hints:?}")
            }
            other => panic!("unexpected: {other:?}"),
        }
    };
    let Seen::Notify { summary, hints, timeout, .. } = persistent else {
        panic!("a Notify: {persistent:?}")
    };
    assert_eq!(summary, "shop · Database");
    assert_eq!(timeout, 0, "never expires");
    assert_eq!(hints, ["category", "resident", "urgency"]);
    // The question goes: the notification closes.
    waiting.kill();
    loop {
        match world.next() {
            Seen::CloseNotification { .. } => break,
            Seen::NotificationClosed { .. } => continue,
            other => panic!("expected the notification to close, saw {other:?}"),
        }
    }
}

/// Issue 26 item 6: Claude Code 2.1.332's captured `permission_prompt` Notification (its TUI,
/// tests/fixtures/claude-code/2.1.332/notification/), with `fields` replaced.
fn terminal_notice(fields: &Value) -> Value {
    let mut input = crate::support::fixture_json(
        "claude-code/2.1.332/notification/tui-handback-bash/hooks/Notification.1.stdin.json",
    );
    if let (Some(input), Some(fields)) = (input.as_object_mut(), fields.as_object()) {
        input.extend(fields.clone());
    }
    input
}

impl World {
    /// `askpane hook` given a terminal's Notification; its exit code, stdout and stderr.
    fn notice(&self, input: &Value) -> (Option<i32>, String, String) {
        let started = Instant::now();
        let done = Client::spawn(self.askpane(&["hook"]), &input.to_string()).finish();
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "the hook took {:?}",
            started.elapsed()
        );
        done
    }
}

/// A terminal's notice joins the inbox's one notification, named by its project and session,
/// and the same session's next notice replaces it; the hook prints nothing and exits 0.
#[test]
fn a_terminals_notice_joins_the_inbox_notification_naming_project_and_session() {
    let mut world = World::new("notify-terminal", true);
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));

    let (code, stdout, stderr) =
        world.notice(&terminal_notice(&json!({"cwd": "/home/dev/orders"})));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    let shown = world.next();
    let id = notify_id(&shown);
    let headline = "Claude Code waits in orders (session c1b4931d)";
    assert_eq!(shown, terminal_notify(0, headline, "Claude needs your permission", id));
    // The same terminal, now idle: its notice replaces the first, in place.
    let idle = json!({"cwd": "/home/dev/orders", "notification_type": "idle_prompt",
        "message": "Claude is waiting for your input"});
    let (code, stdout, stderr) = world.notice(&terminal_notice(&idle));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    assert_eq!(world.next(), terminal_notify(id, headline, "Claude is waiting for your input", id));
    // Another terminal, with 100 KB of Japanese: one grouped notification, cut to its size.
    let long = json!({"cwd": "/home/dev/注文", "session_id": "77aa0000-1111",
        "message": "待機中".repeat(12_000)});
    let (code, stdout, stderr) = world.notice(&terminal_notice(&long));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    let Seen::Notify { summary, body, replaces, .. } = world.next() else { panic!("a Notify") };
    assert_eq!((summary.as_str(), replaces), ("2 terminals waiting", id));
    assert!(body.starts_with("Claude Code waits in 注文 (session 77aa0000): 待機中"), "{body}");
    assert!(body.chars().count() <= 300, "{} characters", body.chars().count());
    assert_eq!(world.dunstctl(&["count", "displayed"]).trim(), "1", "one notification, not three");
}

/// The agent's text is text, not markup: a dunst that reads Pango markup in a body (`markup =
/// full`: it says `body-markup`) is sent the tags, ampersand and quotes as entities (one escaper,
/// `protocol::markup`, for the notice, the status bar, the chat room and the launchd plist); one
/// that reads plain text (the other tests' dunst) is sent the text as it is.
#[test]
fn an_agent_s_markup_in_a_notice_is_sent_as_text() {
    let mut world = World::with_dunst("notify-markup", Some("    markup = full"));
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));

    let hostile = json!({"cwd": "/home/dev/orders",
        "message": "<b>Deploy</b> & \"ship\" isn't <a href='x'>done</a>"});
    let (code, stdout, stderr) = world.notice(&terminal_notice(&hostile));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    let Seen::Notify { body, .. } = world.next() else { panic!("a Notify") };
    assert_eq!(
        body,
        "&lt;b&gt;Deploy&lt;/b&gt; &amp; &quot;ship&quot; isn&#39;t \
         &lt;a href=&#39;x&#39;&gt;done&lt;/a&gt;"
    );
    assert_eq!(world.dunstctl(&["count", "displayed"]).trim(), "1", "dunst took it");
}

/// The rule against duplicates, for real: a terminal whose card waits in the inbox (its
/// PermissionRequest hook still deciding: Claude Code's permission_prompt comes 6 s after its
/// dialog regardless) raises nothing more; another terminal still joins.
#[test]
fn a_terminal_whose_card_waits_in_the_inbox_is_not_announced_a_second_time() {
    let mut world = World::new("notify-terminal-card", true);
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));
    // The card of session 5e55-10n (World::approval's), in project shop.
    let call = world.approval("shop", "npm test");
    let shown = world.next();
    let id = notify_id(&shown);
    assert_eq!(shown, notify(0, "shop · Bash", "npm test", id));
    let same = json!({"cwd": "/home/dev/shop", "session_id": "5e55-10n"});
    let (code, stdout, stderr) = world.notice(&terminal_notice(&same));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    // Another session's terminal: the next thing on the bus is the notification naming it and
    // the card, and nothing of a second shop terminal.
    let other = json!({"cwd": "/home/dev/blog", "session_id": "0b1e0000-2222"});
    let (code, _, stderr) = world.notice(&terminal_notice(&other));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        world.next(),
        notify(
            id,
            "2 waiting: 1 tool call, 1 terminal",
            "Claude Code waits in blog (session 0b1e0000): Claude needs your permission\nshop · Bash: npm test",
            id
        )
    );
    call.kill();
}

/// No inbox: the hook raises one plain notification itself (the inbox's app name), starts no
/// inbox and prints nothing.
#[test]
fn with_no_inbox_the_hook_raises_one_plain_notification_itself() {
    let world = World::new("notify-terminal-alone", true);
    let (code, stdout, stderr) = world.notice(&terminal_notice(&json!({})));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    let shown = world.next();
    let id = notify_id(&shown);
    assert_eq!(
        shown,
        terminal_notify(
            0,
            "Claude Code waits in project (session c1b4931d)",
            "Claude needs your permission",
            id
        )
    );
    assert!(!world.root.join("run/askpane/inbox.sock").exists(), "an inbox was started");
}

/// No inbox and no bus: exit 0 at once, nothing on stdout, one line on stderr saying why.
#[test]
fn with_no_inbox_and_no_bus_the_hook_exits_at_once_printing_nothing() {
    let world = World::new("notify-terminal-nothing", false);
    let mut hook = world.askpane(&["hook"]);
    hook.env(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", world.root.join("nobus").display()),
    );
    let started = Instant::now();
    let input = terminal_notice(&json!({})).to_string();
    let (code, stdout, stderr) = Client::spawn(hook, &input).finish();
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    assert!(
        stderr.contains("no desktop notification for Claude Code waits in project"),
        "{stderr}"
    );
    assert!(!world.root.join("run/askpane/inbox.sock").exists(), "an inbox was started");
}

/// Claude Code's interactive terminal (its TUI, not `-p`), driven in a private tmux server.
struct Terminal {
    socket: PathBuf,
}

impl Terminal {
    /// Starts `program args…` in a 120x40 tmux pane in `dir`, with exactly `env`.
    fn start(
        root: &std::path::Path,
        dir: &std::path::Path,
        env: &[(&str, String)],
        argv: &[String],
    ) -> Terminal {
        require("tmux");
        let socket = root.join("tmux.sock");
        let quote = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
        let assignments: Vec<String> =
            env.iter().map(|(name, value)| format!("{name}={}", quote(value))).collect();
        let words: Vec<String> = argv.iter().map(|word| quote(word)).collect();
        let command = format!("env -i {} {}", assignments.join(" "), words.join(" "));
        let mut tmux = Command::new("tmux");
        tmux.arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", "-c"])
            .arg(dir)
            .arg(command);
        let started = run_bounded(&mut tmux, None);
        assert!(started.status.success(), "tmux: {started:?}");
        Terminal { socket }
    }

    fn tmux(&self, args: &[&str]) -> crate::support::Finished {
        let mut tmux = Command::new("tmux");
        tmux.arg("-S").arg(&self.socket).args(args);
        run_bounded(&mut tmux, None)
    }

    /// The screen's text now.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"]).stdout
    }

    /// Waits (bounded) until the screen shows `text`; the screen then.
    fn shows(&self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "no {text:?} on the terminal within {within:?}:\n{screen}"
            );
            thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &str) {
        let sent = self.tmux(&["send-keys", "-t", "0", keys]);
        assert!(sent.status.success(), "send-keys: {sent:?}");
    }
}

impl Drop for Terminal {
    /// Ends the tmux server this test started (by its own socket), and Claude Code with it.
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// `CACHE/bin/claude-2.1.332`, as `scripts/claude-cli` installs it.
fn claude_2_1_332() -> PathBuf {
    let cache = std::env::var_os("ASKPANE_CLAUDE_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/askpane/claude-cli"),
        PathBuf::from,
    );
    let binary = cache.join("bin/claude-2.1.332");
    assert!(binary.is_file(), "Claude Code 2.1.332 is not installed: run scripts/claude-cli");
    binary
}

/// The real Claude Code 2.1.332 in its interactive terminal, in project `orders` with `askpane
/// install claude --approvals --notify`, its fake model calling Bash once (`touch made-by-bash`).
/// With `hand_back` the PermissionRequest hook runs `--fallback terminal` (Answer in the terminal
/// at once: it prints nothing).
struct ClaudeTui {
    terminal: Terminal,
    touched: PathBuf,
    _api: crate::fake_api::FakeApi,
}

impl ClaudeTui {
    fn start(world: &World, hand_back: bool) -> ClaudeTui {
        let home = world.root.join("home");
        let project = home.join("orders");
        fs::create_dir_all(project.join(".claude")).expect("make the project");
        let project_key = project.display().to_string();
        // Past the TUI's first-run screens: onboarding done, the folder trusted, the key approved.
        let config = json!({"hasCompletedOnboarding": true, "theme": "dark",
            "customApiKeyResponses": {"approved": ["sk-ant-dummy"], "rejected": []},
            "projects": {project_key: {"hasTrustDialogAccepted": true,
                                       "hasCompletedProjectOnboarding": true}}});
        fs::write(home.join(".claude.json"), config.to_string()).expect("write ~/.claude.json");
        let mut install =
            world.askpane(&["install", "claude", "--approvals", "--notify", "--project"]);
        install.arg(&project).env("HOME", &home);
        let installed = run_bounded(&mut install, None);
        assert_eq!(installed.status.code(), Some(0), "{installed:?}");
        if hand_back {
            let path = project.join(".claude/settings.json");
            let mut settings: Value =
                serde_json::from_str(&fs::read_to_string(&path).expect("read")).expect("JSON");
            let hook = &mut settings["hooks"]["PermissionRequest"][0]["hooks"][0]["command"];
            *hook = json!(format!("{} --fallback terminal", hook.as_str().expect("a command")));
            fs::write(&path, settings.to_string()).expect("write settings");
        }
        let touched = project.join("made-by-bash");
        let call = json!({"command": format!("touch {}", touched.display()),
            "description": "Create a marker file"});
        let api = crate::fake_api::FakeApi::scripted(vec![crate::fake_api::ToolCall::new(
            "Bash",
            call,
            "toolu_tui_1",
        )]);
        fs::create_dir_all(world.root.join("tmp")).expect("make TMPDIR");
        let env = [
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", home.display().to_string()),
            ("TMPDIR", world.root.join("tmp").display().to_string()),
            ("LANG", "C.UTF-8".to_owned()),
            ("TERM", "xterm-256color".to_owned()),
            ("ANTHROPIC_BASE_URL", api.base_url()),
            ("ANTHROPIC_API_KEY", "sk-ant-dummy".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
            ("DISABLE_TELEMETRY", "1".to_owned()),
            ("DISABLE_ERROR_REPORTING", "1".to_owned()),
            // What the hooks need to reach this world's inbox and bus.
            ("XDG_RUNTIME_DIR", world.root.join("run").display().to_string()),
            ("XDG_STATE_HOME", world.root.join("state").display().to_string()),
            ("DBUS_SESSION_BUS_ADDRESS", world.bus.clone()),
        ];
        // Without `--permission-mode default` 2.1.332 starts in auto mode and asks nobody.
        let argv = [
            claude_2_1_332().display().to_string(),
            "--permission-mode".to_owned(),
            "default".to_owned(),
            "Please do the task.".to_owned(),
        ];
        let terminal = Terminal::start(&world.root, &project, &env, &argv);
        ClaudeTui { terminal, touched, _api: api }
    }
}

/// Issue 26 item 6, end to end with the real Claude Code 2.1.332 in its interactive terminal:
/// askpane's PermissionRequest hook hands the Bash call back (`--fallback terminal`: it prints
/// nothing), so the TUI's own dialog is what the person answers; 6 s after the dialog appeared
/// Claude Code's Notification hook (`askpane install claude --notify`) reaches the inbox, whose
/// notification names the project and session; "1" in the terminal then runs the command.
#[test]
fn a_real_claude_code_terminal_that_waits_on_its_own_dialog_is_announced_by_the_inbox() {
    let mut world = World::new("notify-tui", true);
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));
    let started = Instant::now();
    let claude = ClaudeTui::start(&world, true);
    // The hand-back: Claude Code's own dialog.
    let screen = claude.terminal.shows("Do you want to proceed?", WAIT);
    assert!(screen.contains("1. Yes"), "{screen}");
    // About 6 s after it: the terminal's notice, in the inbox's notification.
    let shown = world.next();
    let Seen::Notify { app, summary, body, .. } = &shown else { panic!("a Notify: {shown:?}") };
    assert_eq!(app, "askpane");
    assert!(summary.starts_with("Claude Code waits in orders (session "), "{shown:?}");
    assert_eq!(body, "Claude needs your permission");
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    // The dialog still decides: "1" (Yes) runs the command.
    claude.terminal.keys("1");
    let deadline = Instant::now() + WAIT;
    while !claude.touched.exists() {
        let screen = claude.terminal.screen();
        assert!(Instant::now() < deadline, "the command did not run:\n{screen}");
        thread::sleep(Duration::from_millis(100));
    }
}

/// The rule against duplicates with the real CLI: the Bash call is a card in the inbox (its
/// notification says so); Claude Code's own `permission_prompt` comes 6 s after its dialog
/// although the hook still waits, and the inbox raises nothing for it (the same session's card
/// notified). Claude Code ended, the card leaves and the notification closes.
#[test]
fn a_real_claude_code_terminal_whose_card_waits_in_the_inbox_is_not_announced_twice() {
    let mut world = World::new("notify-tui-card", true);
    let _window_manager = world.xvfb.window_manager();
    world.start_inbox(world.askpane(&["inbox"]));
    let claude = ClaudeTui::start(&world, false);
    let shown = world.next();
    let id = notify_id(&shown);
    let command = format!("touch {}", claude.touched.display());
    // The body is the card's one-line summary, cut with "…" where the command is long (a
    // checkout under a long path): the start of the command, word for word.
    let Seen::Notify { body, .. } = &shown else { panic!("not a notification: {shown:?}") };
    let body = match body.strip_suffix('…') {
        Some(start) if command.starts_with(start) => body.clone(),
        _ => command,
    };
    assert_eq!(shown, notify(0, "orders · Bash", &body, id));
    // The inbox hears the terminal's notice and says why it raises nothing.
    let deadline = Instant::now() + WAIT;
    while !world.inbox_stderr().contains("its session's card in the inbox has notified already") {
        assert!(
            Instant::now() < deadline,
            "no notice reached the inbox:\n{}",
            world.inbox_stderr()
        );
        thread::sleep(Duration::from_millis(100));
    }
    let line = world.inbox_stderr();
    assert!(line.contains("Claude Code waits in orders (session "), "{line}");
    let seen: Vec<Seen> = world.seen.try_iter().collect();
    assert_eq!(seen, [], "a second notification: {seen:?}");
    drop(claude);
    assert_eq!(world.next(), Seen::CloseNotification { id });
}

/// An inbox that is stopped (Ctrl+Z in its terminal) does not hold Claude Code's hook: the hook
/// gives up on it within its bounds and raises the notification itself; the inbox, resumed, goes on.
#[test]
fn a_stopped_inbox_does_not_hold_the_notice_hook() {
    let mut world = World::new("notify-terminal-stopped", true);
    world.start_inbox(world.askpane(&["inbox"]));
    let pid = world.inbox.as_ref().map(|inbox| inbox.child.id()).expect("an inbox").to_string();
    let signal = |name: &str| {
        let mut kill = Command::new("kill");
        kill.args([name, pid.as_str()]);
        assert!(run_bounded(&mut kill, None).status.success(), "kill {name} {pid}");
    };
    signal("-STOP");
    let state = || {
        let stat = read_lossy(&PathBuf::from(format!("/proc/{pid}/stat")));
        stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next()).unwrap_or_default()
    };
    let deadline = Instant::now() + WAIT;
    while state() != Some('T') {
        assert!(Instant::now() < deadline, "the inbox {pid} never stopped: {:?}", state());
        thread::sleep(Duration::from_millis(10));
    }
    let started = Instant::now();
    let input = terminal_notice(&json!({"cwd": "/home/dev/orders"})).to_string();
    let (code, stdout, stderr) = Client::spawn(world.askpane(&["hook"]), &input).finish();
    let took = started.elapsed();
    let state_after = state();
    signal("-CONT");
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    assert!(took < Duration::from_secs(9), "took {took:?}: {stderr}");
    // The hook raises the notification itself: saying why when the inbox took the connection
    // and never greeted (the usual case), silently when its connection was refused or closed
    // before a greeting, which it reads as no inbox at all. (Full-suite CI runs have seen the
    // second with the inbox stopped, never a run of this test alone; why is not known yet.)
    assert!(
        stderr.is_empty() || stderr.contains("raising the notification here"),
        "the hook's stderr: {stderr:?}, after {took:?}, the inbox {pid} then {state_after:?}\nthe inbox's: {}",
        world.inbox_stderr()
    );
    let Seen::Notify { summary, .. } = world.next() else { panic!("a Notify") };
    assert_eq!(summary, "Claude Code waits in orders (session c1b4931d)");
}

/// A notice to a lean inbox (issue 14: its window closed with nothing waiting) resumes it
/// without showing a window; the terminal's notification is raised and stays when the inbox goes
/// lean again (it is the person's to dismiss: no request of the inbox's is in it), and it is not
/// made persistent by the window being hidden.
#[test]
fn a_notice_to_a_lean_inbox_stays_up_when_the_inbox_goes_lean_again() {
    let mut world = World::new("notify-terminal-lean", true);
    world.start_inbox(world.askpane(&["inbox"]));
    let pid = world.inbox.as_ref().map(|inbox| inbox.child.id()).expect("an inbox");
    let lean = || {
        let command = read_lossy(format!("/proc/{pid}/cmdline").as_ref());
        command.contains("--lean")
    };
    let times_lean = |world: &World| world.inbox_stderr().matches("inbox lean (no window").count();
    let (window, _) = world.window("askpane");
    crate::display::send_wm_delete_window(world.xvfb.number, window);
    let deadline = Instant::now() + WAIT;
    while !(lean() && times_lean(&world) == 1) {
        assert!(Instant::now() < deadline, "never lean:\n{}", world.inbox_stderr());
        thread::sleep(Duration::from_millis(50));
    }
    let (code, stdout, stderr) =
        world.notice(&terminal_notice(&json!({"cwd": "/home/dev/orders"})));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    let shown = world.next();
    let Seen::Notify { summary, timeout, hints, .. } = &shown else {
        panic!("a Notify: {shown:?}")
    };
    assert_eq!(summary, "Claude Code waits in orders (session c1b4931d)");
    assert_eq!(
        (*timeout, hints.as_slice()),
        (-1, ["category".to_owned(), "urgency".to_owned()].as_slice())
    );
    let deadline = Instant::now() + WAIT;
    while !(lean() && times_lean(&world) == 2) {
        assert!(Instant::now() < deadline, "never lean again:\n{}", world.inbox_stderr());
        thread::sleep(Duration::from_millis(50));
    }
    let seen: Vec<Seen> = world.seen.try_iter().collect();
    assert_eq!(seen, [], "{seen:?}");
    assert_eq!(world.dunstctl(&["count", "displayed"]).trim(), "1");
}

/// An inbox that shows no notifications (`--no-notify`) takes the notice and says so: the hook
/// raises nothing (the person turned them off) and says why on stderr.
#[test]
fn an_inbox_with_no_notify_takes_the_notice_and_raises_nothing() {
    let mut world = World::new("notify-terminal-off", true);
    world.start_inbox(world.askpane(&["inbox", "--no-notify"]));
    let (code, stdout, stderr) = world.notice(&terminal_notice(&json!({})));
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    assert!(stderr.contains("the inbox shows no desktop notifications"), "{stderr}");
    // The answer came after the inbox took the notice: nothing was sent to the server by then.
    let seen: Vec<Seen> = world.seen.try_iter().collect();
    assert_eq!(seen, [], "{seen:?}");
    assert_eq!(world.dunstctl(&["count", "displayed"]).trim(), "0");
}

/// Another user's session bus that admits everyone (`<allow user="*"/>`), reached through an
/// inherited DBUS_SESSION_BUS_ADDRESS: the hook shows no notification there (its text tells what
/// waits), says why, and exits 0 printing nothing. The inbox's notifier connects the same way
/// (`transport::session_bus::connect_own`), as its tray does (tests/tray.rs).
#[test]
fn a_notice_is_never_shown_on_another_user_s_session_bus() {
    use crate::support::dbus::{Admits, NOBODY};
    let world = World::new("notify-their-bus", false);
    let theirs = scratch_dir("notify-their-bus-root");
    let Some(session) =
        SessionBus::of_another_user(&theirs, &world.xvfb.display(), Admits::Everyone)
    else {
        return;
    };
    let mut hook = world.askpane(&["hook"]);
    hook.env("DBUS_SESSION_BUS_ADDRESS", &session.address);
    let input = terminal_notice(&json!({})).to_string();
    let (code, stdout, stderr) = Client::spawn(hook, &input).finish();
    assert_eq!((code, stdout.as_str()), (Some(0), ""), "{stderr}");
    assert!(stderr.contains(&format!("belongs to another user (uid {NOBODY})")), "{stderr}");
}

/// Whether an inbox on `socket` sends its hello line within a second of a connection.
fn greets(socket: &std::path::Path) -> bool {
    use std::io::BufRead as _;
    let Ok(stream) = std::os::unix::net::UnixStream::connect(socket) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut line = String::new();
    std::io::BufReader::new(stream).read_line(&mut line).is_ok() && line.contains(r#""hello""#)
}
