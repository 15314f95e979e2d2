//! `askpane doctor` (issue 29 item 4) on a set-up made by the test: a good one (an Xvfb display,
//! a private session bus with dunst serving notifications, a running inbox, askpane's hooks and an
//! MCP entry installed by `askpane install` for this binary) passes with exit 0; each broken one
//! made on purpose is found, with the command that fixes it: a stale hook path, no session bus, a
//! socket directory open to others or of another user, no fonts at all or none for CJK and Thai.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::inbox::World;
use crate::support::dbus::SessionBus;
use crate::support::{Process, require, run_bounded, web_bundle_built};

/// A doctor's world: the inbox tests' world (display, directories, inbox) with a home of its
/// own and a session bus with dunst on it.
struct Doctor {
    world: World,
    bus: SessionBus,
    _dunst: Process,
}

impl Doctor {
    fn new(name: &str) -> Doctor {
        require("dunst");
        let world = World::with_inbox(name);
        let bus = SessionBus::start(&world.root, &world.xvfb.display());
        let dunst = Command::new("dunst")
            .env("DISPLAY", world.xvfb.display())
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dunst");
        let doctor = Doctor { world, bus, _dunst: Process::new(dunst) };
        fs::create_dir_all(doctor.home()).expect("a home");
        // dunst owns org.freedesktop.Notifications once it is up.
        doctor.bus.wait_for_owner("org.freedesktop.Notifications");
        doctor
    }

    fn home(&self) -> PathBuf {
        self.world.root.join("home")
    }

    /// `askpane <args>` here: the world's display, bus, directories and home.
    fn askpane(&self, args: &[&str]) -> Command {
        let mut command = self.world.askpane(args);
        command
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env_remove("CODEX_HOME")
            .env_remove("FONTCONFIG_FILE");
        command
    }

    /// `askpane install <args>` here, which must succeed.
    fn install(&self, args: &[&str]) {
        let finished = run_bounded(&mut self.askpane(&[&["install"], args].concat()), None);
        assert!(finished.status.success(), "install {args:?}: {}", finished.stderr);
    }
}

/// `askpane doctor --json` run by `command`: its exit code and report.
fn doctor_json(mut command: Command) -> (Option<i32>, Value) {
    command.arg("--json");
    let finished = run_bounded(&mut command, None);
    let report: Value = serde_json::from_str(finished.stdout.trim())
        .unwrap_or_else(|error| panic!("{error}: {}\n{}", finished.stdout, finished.stderr));
    (finished.status.code(), report)
}

/// The check `name` of a report.
fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    let checks = report["checks"].as_array().expect("checks");
    checks
        .iter()
        .find(|check| check["name"] == name)
        .unwrap_or_else(|| panic!("no {name}: {report}"))
}

/// The checks that need the person, by name.
fn needing_you(report: &Value) -> Vec<String> {
    let checks = report["checks"].as_array().expect("checks");
    checks
        .iter()
        .filter(|check| check["state"] == "needs_you")
        .map(|check| check["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_good_set_up_passes_and_the_json_names_each_check() {
    assert!(web_bundle_built(), "copy the web bundle first: cp -r …/dist/web dist/web");
    let doctor = Doctor::new("doctor-good");
    doctor.install(&["claude", "--approvals", "Bash,Edit"]);
    doctor.install(&["mcp", "gemini"]);
    let (code, report) = doctor_json(doctor.askpane(&["doctor"]));
    assert_eq!(needing_you(&report), Vec::<String>::new(), "{report}");
    assert_eq!((code, &report["ok"]), (Some(0), &json!(true)), "{report}");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for name in [
        "display",
        "notifications",
        "inbox",
        "socket directory",
        "state directory",
        "claude hook",
        "claude approvals hook",
        "claude notify hook",
        "codex hook",
        "claude mcp",
        "codex mcp",
        "gemini mcp",
        "cursor mcp",
        "opencode mcp",
        "web bundle",
        "font: CJK",
        "font: Thai",
        "font: emoji",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let inbox_pid = doctor.world.inbox.as_ref().map(|inbox| inbox.child.id()).expect("an inbox");
    let inbox = check(&report, "inbox");
    assert_eq!(inbox["state"], "ok", "{inbox}");
    let detail = inbox["detail"].as_str().expect("detail");
    assert!(detail.starts_with(&format!("running (pid {inbox_pid}, up ")), "{detail}");
    assert!(detail.ends_with("), 0 waiting"), "{detail}");
    assert_eq!(
        check(&report, "notifications")["detail"],
        "dunst serves org.freedesktop.Notifications"
    );
    for name in ["claude hook", "claude approvals hook", "gemini mcp"] {
        assert_eq!(check(&report, name)["state"], "ok", "{report}");
    }
    assert_eq!(check(&report, "codex hook")["state"], "not_applicable");
    assert_eq!(check(&report, "display")["state"], "ok");
    // The text report says the same, and exits 0.
    let finished = run_bounded(&mut doctor.askpane(&["doctor"]), None);
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stdout);
    assert!(finished.stdout.ends_with("All is well.\n"), "{}", finished.stdout);
}

#[test]
fn a_hook_pointing_at_a_binary_that_is_gone_is_found_with_its_fix() {
    let doctor = Doctor::new("doctor-stale");
    let settings = doctor.home().join(".claude/settings.json");
    fs::create_dir_all(settings.parent().expect("a folder")).expect("make .claude");
    // As a reinstall leaves it: askpane's hook (and approvals for Bash) at the old path.
    let hook = |matcher: &str| {
        json!({"matcher": matcher, "hooks": [{"type": "command",
            "command": "/nonexistent/askpane hook", "timeout": 86400}]})
    };
    let stale = json!({"hooks": {"PreToolUse": [hook("AskUserQuestion")],
        "PermissionRequest": [hook("Bash")]}});
    fs::write(&settings, stale.to_string()).expect("write settings.json");
    let (code, report) = doctor_json(doctor.askpane(&["doctor"]));
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(needing_you(&report), ["claude hook", "claude approvals hook"], "{report}");
    let found = check(&report, "claude hook");
    let detail = found["detail"].as_str().expect("detail");
    assert!(detail.contains("runs /nonexistent/askpane, which does not exist"), "{detail}");
    let binary = env!("CARGO_BIN_EXE_askpane");
    assert_eq!(found["fix"], format!("{binary} install claude"));
    assert_eq!(
        check(&report, "claude approvals hook")["fix"],
        format!("{binary} install claude --approvals Bash")
    );
    // The fix fixes it: the small hook client beside this binary (issue 30) counts as it.
    doctor.install(&["claude", "--approvals", "Bash"]);
    let (code, report) = doctor_json(doctor.askpane(&["doctor"]));
    assert_eq!((code, needing_you(&report)), (Some(0), Vec::new()), "{report}");
    let installed = fs::read_to_string(&settings).expect("settings.json");
    assert!(installed.contains(env!("CARGO_BIN_EXE_askpane-hook")), "{installed}");

    // A small client that is gone is found as any other program that is gone.
    let gone = installed.replace(env!("CARGO_BIN_EXE_askpane-hook"), "/nonexistent/askpane-hook");
    fs::write(&settings, gone).expect("write settings.json");
    let (code, report) = doctor_json(doctor.askpane(&["doctor"]));
    assert_eq!(code, Some(1), "{report}");
    let detail = check(&report, "claude hook")["detail"].as_str().expect("detail").to_owned();
    assert!(detail.contains("runs /nonexistent/askpane-hook, which does not exist"), "{detail}");
}

#[test]
fn no_session_bus_is_found_with_its_fix() {
    let doctor = Doctor::new("doctor-no-bus");
    let mut command = doctor.askpane(&["doctor"]);
    command.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    let (code, report) = doctor_json(command);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(needing_you(&report), ["notifications"], "{report}");
    let found = check(&report, "notifications");
    assert!(
        found["detail"].as_str().is_some_and(|d| d.contains("unix:path=/nonexistent/bus")),
        "{found}"
    );
    assert!(
        found["fix"].as_str().is_some_and(|fix| fix.contains("DBUS_SESSION_BUS_ADDRESS")),
        "{found}"
    );
}

#[test]
fn a_socket_directory_open_to_others_or_of_another_user_is_found_with_its_fix() {
    let doctor = Doctor::new("doctor-socket-dir");
    let dir = doctor.world.root.join("run/askpane");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("open it to others");
    let (code, report) = doctor_json(doctor.askpane(&["doctor"]));
    assert_eq!(code, Some(1), "{report}");
    let found = check(&report, "socket directory");
    assert_eq!(found["state"], "needs_you", "{found}");
    assert!(found["detail"].as_str().is_some_and(|d| d.contains("mode 0755")), "{found}");
    assert_eq!(found["fix"], format!("chmod 700 {}", dir.display()));
    // The doctor changed nothing (askpane itself narrows it when the next inbox starts).
    let mode = fs::metadata(&dir).expect("the directory").permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    // Another user's (only a root test run can make one).
    if rustix::process::getuid().is_root() {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("narrow it");
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).expect("chown");
        let (code, report) = doctor_json(doctor.askpane(&["doctor"]));
        assert_eq!(code, Some(1), "{report}");
        let found = check(&report, "socket directory");
        assert!(
            found["detail"].as_str().is_some_and(|d| d.contains("another user (uid 65534)")),
            "{found}"
        );
        let uid = rustix::process::getuid().as_raw();
        assert_eq!(found["fix"], format!("sudo chown {uid} {0} && chmod 700 {0}", dir.display()));
        // Its inbox is not asked through another user's directory.
        assert_eq!(check(&report, "inbox")["state"], "not_applicable", "{report}");
        std::os::unix::fs::chown(&dir, Some(0), Some(0)).expect("chown back");
    }
}

/// A fontconfig configuration of `dirs` only (none: no font at all).
fn fontconfig(root: &Path, dirs: &[&str]) -> PathBuf {
    let dirs: String = dirs.iter().map(|dir| format!("<dir>{dir}</dir>")).collect();
    let path = root.join(format!("fonts-{}.conf", dirs.len()));
    let cache = root.join("fontcache");
    fs::write(
        &path,
        format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n<fontconfig>{dirs}<cachedir>{}</cachedir></fontconfig>\n",
            cache.display()
        ),
    )
    .expect("write a fontconfig file");
    path
}

#[test]
fn missing_fonts_are_found_with_the_package_to_install() {
    let doctor = Doctor::new("doctor-fonts");
    // No font at all (fontconfig pointed at an empty configuration).
    let mut command = doctor.askpane(&["doctor"]);
    command.env("FONTCONFIG_FILE", fontconfig(&doctor.world.root, &[]));
    let (code, report) = doctor_json(command);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        needing_you(&report),
        ["fonts", "font: CJK", "font: Thai", "font: emoji"],
        "{report}"
    );
    // The window survives it (tests/cli.rs, `ask_window_without_any_system_font_…`): the check
    // says what the person will see, not that the window ends.
    assert!(
        check(&report, "fonts")["detail"]
            .as_str()
            .is_some_and(|detail| detail.contains("its own fonts alone")),
        "{report}"
    );
    assert!(
        check(&report, "font: CJK")["fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("fonts-noto-cjk"))
    );
    // DejaVu only: Latin and DejaVu's emoji, but neither CJK nor Thai.
    let dejavu = "/usr/share/fonts/truetype/dejavu";
    assert!(Path::new(dejavu).is_dir(), "the tests' machines have DejaVu ({dejavu})");
    let mut command = doctor.askpane(&["doctor"]);
    command.env("FONTCONFIG_FILE", fontconfig(&doctor.world.root, &[dejavu]));
    let (code, report) = doctor_json(command);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(needing_you(&report), ["font: CJK", "font: Thai"], "{report}");
    assert!(
        check(&report, "font: Thai")["fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("fonts-thai-tlwg"))
    );
}
