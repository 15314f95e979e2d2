//! The Debian package of scripts/package installed into a clean Debian 12 root (issue 29): with
//! only its Depends it installs, `askpane --version` and `askpane validate` run, and the man
//! pages and completions are where the shells look; with its Recommends and Xvfb, the demo
//! window opens there, and `askpane doctor --json` reports its checks (the missing session bus
//! with its fix).
//!
//! It downloads Debian packages and takes minutes, so it runs only when asked:
//! `scripts/package && ASKPANE_TEST_PACKAGE=1 cargo test --test integration package::` (as root:
//! it uses chroot). The clean root is made once by debootstrap and kept as a tarball in
//! `~/.cache/askpane/` (`ASKPANE_PACKAGE_ROOT` names another).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{Process, collect, read_all, scratch_dir};

/// debootstrap and apt download from Debian's mirror: generous, but bounded.
const SLOW: Duration = Duration::from_secs(20 * 60);
const MIRROR: &str = "http://deb.debian.org/debian";

/// Why the test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    if std::env::var_os("ASKPANE_TEST_PACKAGE").is_none() {
        return Some("set ASKPANE_TEST_PACKAGE=1 (after scripts/package) to run it".to_owned());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in ["debootstrap", "unshare", "chroot", "tar", "dpkg-deb"] {
        if !std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()) {
            return Some(format!("`{tool}` is not installed (scripts/setup installs it)"));
        }
    }
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("it needs root (chroot, and a root's device nodes)".to_owned());
    }
    None
}

/// Runs `command`, giving it at most SLOW; its stdout and stderr together.
fn run_slow(command: &mut Command) -> (bool, String) {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let mut process = Process::new(child);
    let stdout = read_all(process.child.stdout.take().unwrap());
    let stderr = read_all(process.child.stderr.take().unwrap());
    let status = process.wait(SLOW);
    let text = format!("{}\n--- stderr ---\n{}", collect(stdout), collect(stderr));
    let status = status.unwrap_or_else(|| panic!("{command:?} still runs after {SLOW:?}\n{text}"));
    (status.success(), text)
}

/// The clean Debian 12 root as a tarball, made by debootstrap the first time.
fn clean_root_tarball() -> PathBuf {
    if let Some(given) = std::env::var_os("ASKPANE_PACKAGE_ROOT") {
        return PathBuf::from(given);
    }
    let home = std::env::var_os("HOME").expect("HOME");
    let cache = Path::new(&home).join(".cache/askpane");
    let tarball = cache.join("debian-12-minbase.tar");
    if tarball.is_file() {
        return tarball;
    }
    fs::create_dir_all(&cache).unwrap();
    let build = scratch_dir("debootstrap").join("root");
    let (ok, text) = run_slow(
        Command::new("debootstrap").args(["--variant=minbase", "bookworm"]).arg(&build).arg(MIRROR),
    );
    assert!(ok, "debootstrap failed:\n{text}");
    let partial = cache.join("debian-12-minbase.tar.partial");
    let (ok, text) =
        run_slow(Command::new("tar").arg("-C").arg(&build).arg("-cf").arg(&partial).arg("."));
    assert!(ok, "tar failed:\n{text}");
    fs::rename(&partial, &tarball).unwrap();
    let _ = fs::remove_dir_all(&build);
    tarball
}

/// The newest .deb scripts/package left in target/package.
fn built_deb() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/package");
    fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "deb"))
        .max_by_key(|path| fs::metadata(path).and_then(|meta| meta.modified()).ok())
}

/// What runs inside the root: each finding on a line of its own starting with `==`.
const CHECKS: &str = r#"set -u
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8
apt-get update -qq || exit 10
dpkg-query -W -f '${Package}\n' | sort >/tmp/before
apt-get install -y -q --no-install-recommends /tmp/askpane.deb || exit 11
dpkg-query -W -f '${Package}\n' | sort >/tmp/after
echo "== new packages: $(comm -13 /tmp/before /tmp/after | tr '\n' ' ')"
echo "== version: $(askpane --version)"
askpane validate /tmp/database.json >/tmp/validate.out 2>&1
echo "== validate: exit $? $(head -n1 /tmp/validate.out)"
for file in /usr/share/man/man1/askpane.1.gz /usr/share/man/man1/askpane-hook.1.gz \
    /usr/share/bash-completion/completions/askpane /usr/share/zsh/vendor-completions/_askpane \
    /usr/share/fish/vendor_completions.d/askpane.fish /usr/share/applications/askpane.desktop \
    /usr/share/icons/hicolor/scalable/apps/askpane.svg /usr/share/doc/askpane/copyright \
    /usr/share/doc/askpane/LICENSE-MIT /usr/share/doc/askpane/LICENSE-APACHE \
    /usr/bin/askpane-hook; do
  [ -s "$file" ] && echo "== file: $file"
done
echo "== completion: $(bash -c '. /usr/share/bash-completion/completions/askpane && complete -p askpane')"
# The window: its Recommends (what it dlopens) and a virtual display.
recommends=$(dpkg-query -W -f '${Recommends}' askpane | sed 's/([^)]*)//g; s/,/ /g')
apt-get install -y -q --no-install-recommends $recommends xvfb x11-utils >/dev/null || exit 12
Xvfb :7 -nolisten tcp -screen 0 1280x800x24 >/tmp/xvfb.log 2>&1 &
xvfb=$!
for _ in $(seq 1 100); do [ -S /tmp/.X11-unix/X7 ] && break; sleep 0.1; done
DISPLAY=:7 askpane demo --fixture database >/tmp/demo.out 2>/tmp/demo.err &
demo=$!
window=
for _ in $(seq 1 300); do
  window=$(DISPLAY=:7 xwininfo -root -tree 2>/dev/null | grep -m1 '"database' || true)
  [ -n "$window" ] && break
  kill -0 $demo 2>/dev/null || break
  sleep 0.1
done
echo "== window: $window"
kill $demo 2>/dev/null; wait $demo 2>/dev/null
echo "== demo stderr: $(head -c 600 /tmp/demo.err | tr '\n' ' ')"
# The installed package's doctor, as a user runs it in a desktop with no session bus.
DISPLAY=:7 askpane doctor --json >/tmp/doctor.json 2>/tmp/doctor.err
echo "== doctor: exit $? $(tr -d '\n' </tmp/doctor.json)"
kill $xvfb; wait $xvfb 2>/dev/null
exit 0
"#;

#[test]
fn the_deb_installs_and_runs_in_a_clean_debian_12_root() {
    if let Some(reason) = missing_prerequisite() {
        eprintln!("skipped: {reason}");
        return;
    }
    let Some(deb) = built_deb() else {
        eprintln!("skipped: no .deb in target/package: run scripts/package first");
        return;
    };
    let fields = Command::new("dpkg-deb").args(["-f"]).arg(&deb).arg("Depends").output().unwrap();
    let depends = String::from_utf8_lossy(&fields.stdout).into_owned();
    let names: Vec<&str> =
        depends.split(',').map(|item| item.trim().split(' ').next().unwrap_or_default()).collect();
    // What dpkg-shlibdeps finds the binary uses: libc6, and libgcc-s1 if it takes a symbol of
    // libgcc_s (libc6 depends on it anyway). Never a library of the window's.
    assert!(names.first() == Some(&"libc6"), "Depends: {depends}");
    assert!(names.iter().all(|name| ["libc6", "libgcc-s1"].contains(name)), "Depends: {depends}");

    let root = scratch_dir("debian-12").join("root");
    fs::create_dir_all(&root).unwrap();
    let (ok, text) =
        run_slow(Command::new("tar").arg("-xpf").arg(clean_root_tarball()).arg("-C").arg(&root));
    assert!(ok, "cannot unpack the clean root:\n{text}");
    fs::copy(&deb, root.join("tmp/askpane.deb")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/fixtures/database.json");
    fs::copy(fixture, root.join("tmp/database.json")).unwrap();
    fs::write(root.join("tmp/checks.sh"), CHECKS).unwrap();
    fs::copy("/etc/resolv.conf", root.join("etc/resolv.conf")).unwrap();
    // A mount and PID namespace of its own: /proc is mounted for the root only, and everything
    // started inside (Xvfb, the demo) ends with it.
    let inside = format!(
        "mount -t proc proc {root}/proc && exec chroot {root} /bin/sh /tmp/checks.sh",
        root = root.display()
    );
    let (ok, report) = run_slow(Command::new("unshare").args([
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "sh",
        "-c",
        &inside,
    ]));
    let _ = fs::remove_dir_all(root.parent().unwrap());
    assert!(ok, "the checks in the clean root failed:\n{report}");
    // For the record (`-- --nocapture`): what the root said.
    for line in report.lines().filter(|line| line.starts_with("== ")) {
        eprintln!("{line}");
    }
    let found = |prefix: &str| -> String {
        report
            .lines()
            .find_map(|line| line.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` line:\n{report}"))
            .trim()
            .to_owned()
    };
    // Only askpane: libc6 and libgcc-s1 are in every Debian root.
    assert_eq!(found("== new packages:"), "askpane", "{report}");
    assert_eq!(found("== version:"), concat!("askpane ", env!("CARGO_PKG_VERSION")), "{report}");
    assert!(found("== validate:").starts_with("exit 0"), "{report}");
    assert_eq!(report.lines().filter(|line| line.starts_with("== file: ")).count(), 11, "{report}");
    assert!(found("== completion:").contains("-F _askpane"), "{report}");
    assert!(found("== window:").contains("askpane"), "no demo window:\n{report}");
    doctor_says_what_a_user_looks_at(&found("== doctor:"));
}

/// `askpane doctor --json` of the installed package, `exit N {report}`: its exit code is its
/// verdict, every check is named with its state and what it found, each problem has its fix;
/// there the display (Xvfb) and the built-in web page are fine, the missing session bus is a
/// problem for notifications with its fix, and a missing CJK font names its Debian package.
fn doctor_says_what_a_user_looks_at(line: &str) {
    let (code, json) = line
        .strip_prefix("exit ")
        .and_then(|rest| rest.split_once(' '))
        .unwrap_or_else(|| panic!("doctor: {line}"));
    let report: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|error| panic!("{error}: {json}"));
    let ok = report["ok"].as_bool().unwrap_or_else(|| panic!("no ok: {report}"));
    assert_eq!(code, if ok { "0" } else { "1" }, "{report}");
    let checks = report["checks"].as_array().unwrap_or_else(|| panic!("no checks: {report}"));
    for check in checks {
        let name = check["name"].as_str().unwrap_or_default();
        let detail = check["detail"].as_str().unwrap_or_default();
        assert!(!name.is_empty() && !detail.is_empty(), "{check}");
        match check["state"].as_str() {
            Some("needs_you") => {
                let fix = check["fix"].as_str().unwrap_or_default();
                assert!(!fix.is_empty(), "a problem without its fix: {check}");
            }
            Some("ok" | "not_applicable") => assert!(check["fix"].is_null(), "{check}"),
            _ => panic!("no state: {check}"),
        }
    }
    let state = |name: &str| -> &str {
        let check = checks.iter().find(|check| check["name"] == name);
        check.and_then(|check| check["state"].as_str()).unwrap_or_else(|| panic!("no {name}"))
    };
    for name in ["tray", "inbox", "socket directory", "state directory", "font: emoji"] {
        state(name);
    }
    assert_eq!(state("display"), "ok", "{report}");
    assert_eq!(state("web bundle"), "ok", "the package's binary has no web page: {report}");
    assert_eq!(state("notifications"), "needs_you", "no session bus there: {report}");
    // The Recommends bring no font for CJK: the window would show boxes, and doctor names the
    // Debian package that fixes it.
    let cjk = checks.iter().find(|check| check["name"] == "font: CJK");
    let fix = cjk.and_then(|check| check["fix"].as_str()).unwrap_or_default();
    assert!(state("font: CJK") == "ok" || fix.contains("fonts-noto-cjk"), "{report}");
    assert!(!ok, "a problem was found, yet ok: {report}");
}
