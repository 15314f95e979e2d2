//! `askpane doctor` (issue 29 item 4): the judging of each check, pure. The binary gathers what
//! it inspects (environment, files, sockets, the session bus, fonts) into the facts below; each
//! function here turns one fact into a [`Check`]: its state and, for a problem, the exact command
//! that fixes it. So every broken set-up is a unit test, with no machine needed.
//!
//! The JSON report (`askpane doctor --json`) is a stable schema (docs/src/doctor.md): fields are
//! only ever added.

use serde::Serialize;

/// How one check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Set up and working.
    Ok,
    /// Broken or missing in a way the person has to fix (`fix` says how).
    NeedsYou,
    /// Nothing to check: not set up, and not needed unless wanted.
    NotApplicable,
}

impl State {
    /// The word the text report shows.
    pub fn word(self) -> &'static str {
        match self {
            State::Ok => "ok",
            State::NeedsYou => "NEEDS YOU",
            State::NotApplicable => "n/a",
        }
    }
}

/// One check's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Which check (stable names: `display`, `notifications`, `inbox`, `socket directory`, …).
    pub name: String,
    pub state: State,
    /// What was found, in a sentence.
    pub detail: String,
    /// The command (or step) that fixes it, for a check that needs you.
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &str, detail: impl Into<String>) -> Check {
        Check { name: name.to_owned(), state: State::Ok, detail: detail.into(), fix: None }
    }

    fn not_applicable(name: &str, detail: impl Into<String>) -> Check {
        Check {
            name: name.to_owned(),
            state: State::NotApplicable,
            detail: detail.into(),
            fix: None,
        }
    }

    fn needs_you(name: &str, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name: name.to_owned(),
            state: State::NeedsYou,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Every check: `askpane doctor`'s report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// True when no check needs the person (the exit code is then 0).
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl Report {
    pub fn of(checks: Vec<Check>) -> Report {
        let ok = checks.iter().all(|check| check.state != State::NeedsYou);
        Report { ok, checks }
    }

    /// `--json`: the report as one line.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| r#"{"ok":false,"checks":[]}"#.to_owned())
    }

    /// The text report: a line per check, its fix on the line below, then the verdict.
    pub fn text(&self) -> Vec<String> {
        let width = self.checks.iter().map(|check| check.name.chars().count()).max().unwrap_or(0);
        let mut lines = Vec::new();
        for check in &self.checks {
            lines.push(format!(
                "{:<9}  {:<width$}  {}",
                check.state.word(),
                check.name,
                check.detail
            ));
            if let Some(fix) = &check.fix {
                lines.push(format!("{:<9}  {:<width$}  fix: {fix}", "", ""));
            }
        }
        let problems = self.checks.iter().filter(|check| check.state == State::NeedsYou).count();
        lines.push(match problems {
            0 => "All is well.".to_owned(),
            1 => "1 check needs you: its fix is under it.".to_owned(),
            n => format!("{n} checks need you: each fix is under its check."),
        });
        lines
    }
}

/// What a display variable led to: `None` when it is not set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisplayFacts {
    /// `WAYLAND_DISPLAY`, and whether its socket accepted a connection (or why not).
    pub wayland: Option<(String, Result<(), String>)>,
    /// `DISPLAY`, and whether the X server accepted a connection (or why not).
    pub x11: Option<(String, Result<(), String>)>,
}

/// The display the window opens on.
pub fn display(facts: &DisplayFacts) -> Check {
    const NAME: &str = "display";
    let mut reached = Vec::new();
    let mut failed = Vec::new();
    for (kind, fact) in [("Wayland", &facts.wayland), ("X11", &facts.x11)] {
        match fact {
            Some((name, Ok(()))) => reached.push(format!("{kind} {name}")),
            Some((name, Err(why))) => failed.push(format!("{kind} {name}: {why}")),
            None => {}
        }
    }
    match (reached.is_empty(), failed.is_empty()) {
        (false, _) => Check::ok(NAME, format!("{} (connected)", reached.join(", "))),
        (true, true) => Check::needs_you(
            NAME,
            "DISPLAY and WAYLAND_DISPLAY are not set: no window can open here (questions go to a \
             browser page with --ui web)",
            "run askpane from your desktop session, or answer in a browser: askpane inbox --ui web",
        ),
        (true, false) => Check::needs_you(
            NAME,
            format!("cannot connect: {}", failed.join("; ")),
            "set DISPLAY / WAYLAND_DISPLAY to your session's (as a terminal of the desktop has \
             them, e.g. export DISPLAY=:0), or answer in a browser: askpane inbox --ui web",
        ),
    }
}

/// What the session bus said about a notification service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BusFacts {
    /// `DBUS_SESSION_BUS_ADDRESS` is not set (and no bus was found otherwise).
    NoBus(String),
    /// The bus could not be reached.
    Unreachable { address: String, why: String },
    /// `org.freedesktop.Notifications` has an owner (its server's name, when it said).
    Running { server: Option<String> },
    /// Nobody owns the name, but the bus starts a server on the first notification.
    Activatable,
    /// Nobody owns the name and the bus cannot start one.
    Absent,
}

/// A notification service (`org.freedesktop.Notifications`) on the session bus.
pub fn notifications(facts: &BusFacts) -> Check {
    const NAME: &str = "notifications";
    const INSTALL: &str = "start a notification server in your session: sudo apt install dunst \
        (or mako on Wayland), then run dunst (your desktop's own one, on GNOME or KDE)";
    match facts {
        BusFacts::Running { server: Some(server) } => {
            Check::ok(NAME, format!("{server} serves org.freedesktop.Notifications"))
        }
        BusFacts::Running { server: None } => {
            Check::ok(NAME, "org.freedesktop.Notifications is served on the session bus")
        }
        BusFacts::Activatable => Check::ok(
            NAME,
            "the session bus starts a notification server (org.freedesktop.Notifications) when \
             one is needed",
        ),
        BusFacts::Absent => Check::needs_you(
            NAME,
            "no notification server on the session bus: the inbox cannot tell you a question waits",
            INSTALL,
        ),
        BusFacts::NoBus(why) => Check::needs_you(
            NAME,
            format!("no session bus ({why}): the inbox cannot raise desktop notifications"),
            "run askpane inside your desktop session, or export \
             DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus",
        ),
        BusFacts::Unreachable { address, why } => Check::needs_you(
            NAME,
            format!("the session bus {address} cannot be reached: {why}"),
            "export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus (your session's \
             bus), or run askpane inside your desktop session",
        ),
    }
}

/// Issue 29 item 5: whether a tray host is there to show the inbox's icon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrayFacts {
    /// `org.kde.StatusNotifierWatcher` has an owner on the session bus.
    Host,
    /// The bus answered; nobody owns the watcher's name.
    NoHost,
    /// The session bus cannot be reached (the `notifications` check says why).
    NoBus,
}

/// A tray host (a StatusNotifierWatcher) for the inbox's icon. Without one nothing breaks: the
/// inbox runs without an icon, so this never needs the person.
pub fn tray(facts: &TrayFacts) -> Check {
    const NAME: &str = "tray";
    match facts {
        TrayFacts::Host => Check::ok(
            NAME,
            "a tray host (org.kde.StatusNotifierWatcher) is on the session bus: the inbox shows \
             its icon there",
        ),
        TrayFacts::NoHost => Check::not_applicable(
            NAME,
            "no tray host (org.kde.StatusNotifierWatcher) on the session bus: the inbox runs \
             without a tray icon (KDE, waybar's tray, sway bars, or GNOME with the AppIndicator \
             extension show one)",
        ),
        TrayFacts::NoBus => Check::not_applicable(
            NAME,
            "no session bus, so no tray host: the inbox runs without a tray icon",
        ),
    }
}

/// What the inbox's socket answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboxFacts {
    /// Nothing listens: no inbox runs.
    NotRunning,
    /// An inbox of this user greeted: its pid, its start (seconds since the Unix epoch, when it
    /// says), how many asks wait, and the time now.
    Running { pid: u32, started_at: Option<u64>, waiting: usize, now: u64 },
    /// Another user's process serves the socket.
    Foreign { socket: String, uid: u32 },
    /// Something listens but does not answer as an inbox.
    NoAnswer { why: String, lock: String },
    /// Not asked: the socket's directory needs the person first.
    NotChecked,
}

/// The inbox: running or not, and how it is.
pub fn inbox(facts: &InboxFacts) -> Check {
    const NAME: &str = "inbox";
    match facts {
        InboxFacts::NotRunning => Check::not_applicable(
            NAME,
            "not running; the first question starts it (or: askpane inbox --background)",
        ),
        InboxFacts::Running { pid, started_at, waiting, now } => {
            let up = match started_at {
                Some(started) => {
                    format!(", up {}", super::status::duration(now.saturating_sub(*started)))
                }
                None => String::new(),
            };
            Check::ok(NAME, format!("running (pid {pid}{up}), {waiting} waiting"))
        }
        InboxFacts::Foreign { socket, uid } => Check::needs_you(
            NAME,
            format!("{socket} is served by another user (uid {uid}), not by your inbox"),
            format!("have that user (or root) end the process serving it, then: rm {socket}"),
        ),
        InboxFacts::NoAnswer { why, lock } => Check::needs_you(
            NAME,
            format!("something listens on the inbox's socket but does not answer: {why}"),
            format!("askpane inbox --quit, or end it by the pid in its lock: kill $(cat {lock})"),
        ),
        InboxFacts::NotChecked => Check::not_applicable(
            NAME,
            "not asked: its socket directory needs you first (see above)",
        ),
    }
}

/// A directory askpane keeps private: as found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirFacts {
    /// Not there yet: askpane makes it (0700) when first needed.
    Missing,
    /// Something that is not a directory (or a link) is in its place.
    NotADirectory,
    /// A directory: its owner, its permission bits, and this user's uid.
    Present { owner: u32, mode: u32, uid: u32 },
}

/// The inbox's socket directory or the state directory: this user's own, mode 0700.
pub fn private_dir(name: &str, path: &str, facts: &DirFacts) -> Check {
    match facts {
        DirFacts::Missing => Check::not_applicable(
            name,
            format!("{path} is not there yet; askpane makes it (0700) when first needed"),
        ),
        DirFacts::NotADirectory => Check::needs_you(
            name,
            format!("{path} is not a directory (askpane will not use it)"),
            format!("rm {path}  (askpane makes the directory again)"),
        ),
        DirFacts::Present { owner, uid, .. } if owner != uid => Check::needs_you(
            name,
            format!("{path} belongs to another user (uid {owner}), not to you (uid {uid})"),
            format!("sudo chown {uid} {path} && chmod 700 {path}"),
        ),
        DirFacts::Present { mode, .. } if mode & 0o077 != 0 => Check::needs_you(
            name,
            format!(
                "{path} has mode {:04o}: other users may open it (it must be 0700)",
                mode & 0o7777
            ),
            format!("chmod 700 {path}"),
        ),
        DirFacts::Present { .. } => Check::ok(name, format!("{path} is yours, mode 0700")),
    }
}

/// The web app for `--ui web`, built into this binary or not.
pub fn web_bundle(built_in: bool) -> Check {
    const NAME: &str = "web bundle";
    match built_in {
        true => Check::ok(NAME, "the browser page (--ui web) is built into this binary"),
        false => Check::needs_you(
            NAME,
            "this binary was built without the browser page: --ui web (and a phone) cannot \
             answer",
            "in askpane's source folder: scripts/build-web && cargo install --locked --path .",
        ),
    }
}

/// What `askpane doctor` found of the Matrix bridge (issue 31).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatrixFacts {
    /// No session or no room in the state directory's `matrix/`.
    NotConfigured,
    /// Configured, but `askpane-matrix disable` keeps the inbox from starting it.
    Disabled,
    /// The room's file cannot be read as the bridge writes it: why.
    Broken(String),
    /// Configured: where its program is (`None`: not found), and whether a bridge runs.
    Configured { program: Option<String>, running: bool },
}

/// The Matrix bridge: whether the inbox starts it, and whether it can.
pub fn matrix_bridge(facts: &MatrixFacts) -> Check {
    const NAME: &str = "matrix bridge";
    match facts {
        MatrixFacts::NotConfigured => Check::not_applicable(
            NAME,
            "not configured (askpane-matrix login and room; see the manual's Matrix page)",
        ),
        MatrixFacts::Disabled => Check::not_applicable(
            NAME,
            "configured, but the inbox does not start it (askpane-matrix enable)",
        ),
        MatrixFacts::Broken(why) => Check::needs_you(
            NAME,
            format!("the inbox cannot start it: {why}"),
            "askpane-matrix room use ROOM (writes the room's file again)",
        ),
        MatrixFacts::Configured { program: None, .. } => Check::needs_you(
            NAME,
            "configured, but askpane-matrix is found neither beside askpane nor on PATH: the \
             inbox cannot start it",
            "in askpane's source folder: cargo install --locked --path matrix (or: askpane-matrix \
             disable)",
        ),
        MatrixFacts::Configured { program: Some(program), running: true } => {
            Check::ok(NAME, format!("configured and running ({program})"))
        }
        MatrixFacts::Configured { program: Some(program), running: false } => {
            Check::ok(NAME, format!("configured; the inbox starts it as it starts ({program})"))
        }
    }
}

/// A kind of text the window needs a system font for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Script {
    Cjk,
    Thai,
    Emoji,
}

impl Script {
    pub const ALL: [Script; 3] = [Script::Cjk, Script::Thai, Script::Emoji];

    /// A character of the script the window's font fallback is asked for.
    pub fn sample(self) -> char {
        match self {
            Script::Cjk => '日',
            Script::Thai => 'ก',
            Script::Emoji => '😀',
        }
    }

    fn check_name(self) -> &'static str {
        match self {
            Script::Cjk => "font: CJK",
            Script::Thai => "font: Thai",
            Script::Emoji => "font: emoji",
        }
    }

    fn package(self) -> &'static str {
        match self {
            Script::Cjk => "fonts-noto-cjk",
            Script::Thai => "fonts-thai-tlwg",
            Script::Emoji => "fonts-noto-color-emoji",
        }
    }
}

/// A font for `script`: `found` is the system font the window would use for its sample
/// character, if any.
pub fn font(script: Script, found: Option<&str>) -> Check {
    let name = script.check_name();
    let sample = script.sample();
    match found {
        Some(font) => Check::ok(name, format!("{sample} is drawn with {font}")),
        None => Check::needs_you(
            name,
            format!("no system font has {sample}: such text shows as boxes in the window"),
            format!(
                "sudo apt install {} (Debian/Ubuntu; or your system's package of it)",
                script.package()
            ),
        ),
    }
}

/// The system offers no font at all (fontconfig matches none).
pub fn no_system_fonts() -> Check {
    Check::needs_you(
        "fonts",
        "the system offers no font (fontconfig matches none: is FONTCONFIG_FILE or the \
         fontconfig configuration broken?); the window draws with its own fonts alone: Latin \
         text, other scripts as boxes",
        "fc-list | head (it should list fonts); unset FONTCONFIG_FILE, or: sudo apt install \
         fontconfig fonts-noto-core",
    )
}

/// Where an installed entry's command points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Points {
    /// At the binary running this check.
    ThisBinary,
    /// At a path where nothing is (the binary moved or was removed).
    Missing { program: String },
    /// At another program (another copy or version of askpane).
    Another { program: String },
}

/// What an agent's configuration holds of askpane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryFacts {
    /// No file, or no askpane entry in it.
    NotInstalled,
    /// The file could not be read or parsed.
    Unreadable { why: String },
    /// askpane's entry, and where its command points.
    Installed { points: Points },
}

/// One hook or MCP entry of an agent: `name` (`claude hook`), `file` where it lives, `fix` the
/// command that installs it for this binary, `this_binary` the path of the binary running.
pub fn entry(name: &str, file: &str, facts: &EntryFacts, fix: &str, this_binary: &str) -> Check {
    match facts {
        EntryFacts::NotInstalled => {
            Check::not_applicable(name, format!("not installed in {file} ({fix} adds it)"))
        }
        EntryFacts::Unreadable { why } => Check::needs_you(
            name,
            format!("{file} cannot be read: {why}"),
            format!("repair {file} (askpane leaves a file it cannot parse untouched), then: {fix}"),
        ),
        EntryFacts::Installed { points: Points::ThisBinary } => {
            Check::ok(name, format!("installed in {file}, runs this askpane ({this_binary})"))
        }
        EntryFacts::Installed { points: Points::Missing { program } } => Check::needs_you(
            name,
            format!(
                "{file} runs {program}, which does not exist (moved or removed by a reinstall?): \
                 the agent's calls fail"
            ),
            fix,
        ),
        EntryFacts::Installed { points: Points::Another { program } } => Check::needs_you(
            name,
            format!("{file} runs {program}, not this askpane ({this_binary})"),
            fix,
        ),
    }
}

/// The program a hook or server command runs: its first word, or the quoted path it starts with.
pub fn program_of(command: &str) -> &str {
    let command = command.trim_start();
    for quote in ['"', '\''] {
        if let Some(rest) = command.strip_prefix(quote) {
            return rest.split_once(quote).map_or(rest, |(program, _)| program);
        }
    }
    command.split_once(char::is_whitespace).map_or(command, |(program, _)| program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_display_that_connects_passes_and_none_or_a_dead_one_needs_you() {
        let ok = display(&DisplayFacts { wayland: None, x11: Some((":99".into(), Ok(()))) });
        assert_eq!((ok.state, ok.detail.as_str()), (State::Ok, "X11 :99 (connected)"));
        let none = display(&DisplayFacts { wayland: None, x11: None });
        assert_eq!(none.state, State::NeedsYou);
        assert!(none.fix.as_deref().is_some_and(|fix| fix.contains("askpane inbox --ui web")));
        let dead = display(&DisplayFacts {
            wayland: Some(("wayland-9".into(), Err("no such file".into()))),
            x11: None,
        });
        assert_eq!(dead.state, State::NeedsYou);
        assert!(dead.detail.contains("Wayland wayland-9: no such file"), "{}", dead.detail);
    }

    #[test]
    fn no_bus_or_no_server_needs_you_with_the_fix() {
        assert_eq!(
            notifications(&BusFacts::Running { server: Some("dunst".into()) }).state,
            State::Ok
        );
        assert_eq!(notifications(&BusFacts::Activatable).state, State::Ok);
        assert_eq!(tray(&TrayFacts::Host).state, State::Ok);
        assert_eq!(tray(&TrayFacts::NoHost).state, State::NotApplicable);
        assert_eq!(tray(&TrayFacts::NoBus).state, State::NotApplicable);
        let absent = notifications(&BusFacts::Absent);
        assert_eq!(absent.state, State::NeedsYou);
        assert!(absent.fix.as_deref().is_some_and(|fix| fix.contains("apt install dunst")));
        let nowhere = notifications(&BusFacts::Unreachable {
            address: "unix:path=/nowhere".into(),
            why: "connection refused".into(),
        });
        assert_eq!(nowhere.state, State::NeedsYou);
        assert!(nowhere.detail.contains("unix:path=/nowhere"), "{}", nowhere.detail);
        assert!(
            nowhere.fix.as_deref().is_some_and(|fix| fix.contains("DBUS_SESSION_BUS_ADDRESS")),
            "{nowhere:?}"
        );
    }

    #[test]
    fn the_inbox_says_pid_uptime_and_waiting() {
        let running = inbox(&InboxFacts::Running {
            pid: 42,
            started_at: Some(1000),
            waiting: 2,
            now: 1000 + 3700,
        });
        assert_eq!(
            (running.state, running.detail.as_str()),
            (State::Ok, "running (pid 42, up 1h1m), 2 waiting")
        );
        assert_eq!(inbox(&InboxFacts::NotRunning).state, State::NotApplicable);
        let foreign = inbox(&InboxFacts::Foreign { socket: "/run/a/inbox.sock".into(), uid: 7 });
        assert_eq!(foreign.state, State::NeedsYou);
    }

    #[test]
    fn a_directory_open_to_others_or_of_another_user_needs_you() {
        let good = DirFacts::Present { owner: 1000, mode: 0o40700, uid: 1000 };
        assert_eq!(private_dir("socket directory", "/run/askpane", &good).state, State::Ok);
        let open = DirFacts::Present { owner: 1000, mode: 0o40755, uid: 1000 };
        let check = private_dir("socket directory", "/run/askpane", &open);
        assert_eq!(check.state, State::NeedsYou);
        assert!(check.detail.contains("mode 0755"), "{}", check.detail);
        assert_eq!(check.fix.as_deref(), Some("chmod 700 /run/askpane"));
        let foreign = DirFacts::Present { owner: 0, mode: 0o40700, uid: 1000 };
        let check = private_dir("socket directory", "/run/askpane", &foreign);
        assert_eq!(
            check.fix.as_deref(),
            Some("sudo chown 1000 /run/askpane && chmod 700 /run/askpane")
        );
        assert_eq!(
            private_dir("state directory", "/s", &DirFacts::Missing).state,
            State::NotApplicable
        );
    }

    #[test]
    fn a_stale_hook_path_needs_you_with_the_install_command() {
        let fix = "/usr/bin/askpane install claude";
        let stale = EntryFacts::Installed {
            points: Points::Missing { program: "/nonexistent/askpane".into() },
        };
        let check =
            entry("claude hook", "~/.claude/settings.json", &stale, fix, "/usr/bin/askpane");
        assert_eq!(check.state, State::NeedsYou);
        assert!(
            check.detail.contains("/nonexistent/askpane, which does not exist"),
            "{}",
            check.detail
        );
        assert_eq!(check.fix.as_deref(), Some(fix));
        let good = EntryFacts::Installed { points: Points::ThisBinary };
        assert_eq!(entry("claude hook", "f", &good, fix, "/usr/bin/askpane").state, State::Ok);
        assert_eq!(
            entry("claude hook", "f", &EntryFacts::NotInstalled, fix, "b").state,
            State::NotApplicable
        );
    }

    #[test]
    fn a_missing_font_names_its_package() {
        assert_eq!(font(Script::Thai, Some("Loma")).state, State::Ok);
        let missing = font(Script::Cjk, None);
        assert_eq!(missing.state, State::NeedsYou);
        assert!(missing.fix.as_deref().is_some_and(|fix| fix.contains("fonts-noto-cjk")));
    }

    #[test]
    fn the_matrix_bridge_needs_you_only_when_the_inbox_cannot_start_it() {
        assert_eq!(matrix_bridge(&MatrixFacts::NotConfigured).state, State::NotApplicable);
        assert_eq!(matrix_bridge(&MatrixFacts::Disabled).state, State::NotApplicable);
        let missing = matrix_bridge(&MatrixFacts::Configured { program: None, running: false });
        assert_eq!(missing.state, State::NeedsYou);
        assert!(missing.detail.contains("found neither beside askpane nor on PATH"));
        let broken = matrix_bridge(&MatrixFacts::Broken("room.json: no room_id".into()));
        assert_eq!(broken.state, State::NeedsYou);
        let running =
            MatrixFacts::Configured { program: Some("/bin/askpane-matrix".into()), running: true };
        assert_eq!(matrix_bridge(&running).detail, "configured and running (/bin/askpane-matrix)");
    }

    #[test]
    fn the_program_of_a_command_is_its_first_word_or_quoted_path() {
        assert_eq!(program_of("/usr/bin/askpane hook --timeout 60"), "/usr/bin/askpane");
        assert_eq!(program_of("\"/opt/my tools/askpane\" hook"), "/opt/my tools/askpane");
        assert_eq!(program_of("askpane"), "askpane");
    }

    #[test]
    fn the_report_exits_1_when_a_check_needs_you_and_its_json_names_each_check() {
        let report = Report::of(vec![web_bundle(true), font(Script::Emoji, None)]);
        assert!(!report.ok);
        let json: serde_json::Value = serde_json::from_str(&report.json()).expect("JSON");
        assert_eq!(json["checks"][0]["name"], "web bundle");
        assert_eq!(json["checks"][0]["state"], "ok");
        assert_eq!(json["checks"][0]["fix"], serde_json::Value::Null);
        assert_eq!(json["checks"][1]["state"], "needs_you");
        let text = report.text();
        assert_eq!(
            text.last().map(String::as_str),
            Some("1 check needs you: its fix is under it.")
        );
        assert!(Report::of(vec![web_bundle(true)]).ok);
    }
}
