//! Issue 27 item 5: containers on the desk ask its inbox through its bind-mounted folder.
//! `askpane remote --container` prints the mount; a "container" here is what one is to the
//! kernel: a user namespace (`unshare --user`, the container's uids mapped to the desk's) with a
//! mount namespace of its own in which the inbox's folder is bind-mounted where the printed line
//! puts it. A real Docker container is tried where a daemon answers (skipped, said, otherwise).
//!
//! What the inbox checks is the client's uid as the kernel reports it in the inbox's own
//! namespace (SO_PEERCRED): a container user mapped to the desk's uid is the desk user; any
//! other is refused, whatever it is called inside.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::inbox::{World, hook_answers, hook_input, wait_for_window};
use crate::support::{WAIT, read_lossy, run_bounded};

/// Where the printed line mounts the inbox's folder, and the runtime folder it sets.
const CONTAINER_RUNTIME: &str = "/run/askpane-desk";

fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"))
}

/// Whether this machine lets a process make a user namespace (some kernels forbid it to users).
fn user_namespaces_work() -> bool {
    let probe =
        run_bounded(Command::new("unshare").args(["--user", "--map-root-user", "true"]), None);
    if !probe.status.success() {
        eprintln!("SKIPPED: no user namespaces here (unshare --user: {})", probe.stderr.trim());
    }
    probe.status.success()
}

/// Answers the one question in the inbox window: the second option, sent.
fn answer_blue(world: &World) {
    let window = wait_for_window(&world.xvfb, "1 question", true).expect("the question's window");
    world.xvfb.focus(window);
    world.xvfb.keys(window, &["2", "ctrl+Return"]);
}

#[test]
fn remote_container_prints_the_bind_mount_and_the_devcontainer_snippet() {
    let world = World::new("container-help");
    let printed = run_bounded(&mut world.askpane(&["remote", "--container"]), None);
    assert_eq!(printed.status.code(), Some(0), "{printed:?}");
    let folder = world.root.join("run/askpane");
    let mount = format!(
        "-v \"{}:{CONTAINER_RUNTIME}/askpane\" -e XDG_RUNTIME_DIR={CONTAINER_RUNTIME}",
        folder.display()
    );
    assert!(printed.stdout.contains(&mount), "{printed:?}");
    let start = printed.stdout.find('{').expect("a devcontainer.json snippet");
    let end = printed.stdout.rfind('}').expect("its end");
    let snippet: Value = serde_json::from_str(&printed.stdout[start..=end]).expect("JSON");
    assert_eq!(
        snippet["mounts"][0],
        json!({"source": "${localEnv:XDG_RUNTIME_DIR}/askpane",
               "target": format!("{CONTAINER_RUNTIME}/askpane"), "type": "bind"})
    );
    assert_eq!(snippet["containerEnv"]["XDG_RUNTIME_DIR"], CONTAINER_RUNTIME);
    // Nothing else is accepted with it.
    let both = run_bounded(&mut world.askpane(&["remote", "devbox", "--container"]), None);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

/// `askpane hook` as a "container" would run it: in a user namespace whose uid `inside` is the
/// desk's uid, in a mount namespace where the inbox's folder is bind-mounted at
/// [`CONTAINER_RUNTIME`]`/askpane` (a folder of the world's, as the container's `/run` is its
/// image's), with the printed `XDG_RUNTIME_DIR`.
fn hook_in_a_container(world: &World, inside: u32, input: &str) -> crate::inbox::Client {
    hook_in_a_container_with(world, inside, input, true)
}

/// [`hook_in_a_container`], with or without the desk's display in its environment.
fn hook_in_a_container_with(
    world: &World,
    inside: u32,
    input: &str,
    display: bool,
) -> crate::inbox::Client {
    let container_run = world.root.join("container-run");
    fs::create_dir_all(container_run.join("askpane")).expect("the mount point");
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let mut command = world.askpane(&[]);
    // As a container runtime does: its root (the desk's uid) mounts, then the process runs as
    // the container's user (a user namespace inside, `inside` mapped to that root).
    let script = format!(
        "mount --bind {folder} {point} && exec unshare --user --map-user={inside} \
         --map-group={inside} sh -c 'echo uid $(id -u) inside >&2; exec {askpane} hook'",
        folder = world.root.join("run/askpane").display(),
        point = container_run.join("askpane").display(),
    );
    let mut unshare = Command::new("unshare");
    unshare
        .args(["--user", "--map-root-user", "--mount", "--propagation", "private"])
        .args(["sh", "-c", &script]);
    // The world's environment (display, state folder), the container's runtime folder.
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => unshare.env(key, value),
            None => unshare.env_remove(key),
        };
    }
    unshare.env("XDG_RUNTIME_DIR", &container_run).current_dir(&world.root);
    if !display {
        unshare.env_remove("DISPLAY");
    }
    command = unshare;
    crate::inbox::Client::spawn(command, input)
}

#[test]
fn a_container_user_mapped_to_the_desk_s_uid_is_admitted_through_the_bind_mounted_folder() {
    let world = World::with_inbox("container-mapped");
    if !user_namespaces_work() {
        return;
    }
    // Inside, the client is uid 1000 (as a devcontainer's `vscode` user is); the kernel maps it
    // to the desk's uid, which is what the inbox sees.
    let client = hook_in_a_container(&world, 1000, &hook_input("toolu_box", "Which colour?"));
    let deadline = std::time::Instant::now() + WAIT;
    let requests = loop {
        let requests = world.connect().list();
        if !requests.is_empty() {
            break requests;
        }
        if std::time::Instant::now() > deadline {
            let (stdout, stderr) = client.killed_with_output();
            panic!("never asked: {stdout}\n{stderr}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(requests[0]["tool_use_id"], "toolu_box", "{requests:?}");
    answer_blue(&world);
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(hook_answers(&stdout), json!({"Which colour?": "Blue"}), "{stderr}");
    assert!(stderr.starts_with("uid 1000 inside"), "{stderr}");
}

/// No inbox runs on the desk: the container's client (no display there) starts none in the
/// shared folder (whose socket the desk's own clients would then reach), and hands the question
/// back to Claude Code.
#[test]
fn with_no_inbox_on_the_desk_a_container_s_client_starts_none_and_claude_code_asks() {
    let world = World::new("container-no-inbox");
    if !user_namespaces_work() {
        return;
    }
    fs::create_dir_all(world.root.join("run/askpane")).expect("the inbox's folder");
    fs::set_permissions(world.root.join("run/askpane"), fs::Permissions::from_mode(0o700))
        .expect("private");
    let input = hook_input("toolu_alone", "Which colour?");
    let (code, stdout, stderr) = hook_in_a_container_with(&world, 1000, &input, false).finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Claude Code asks instead"), "{stdout}");
    assert!(!world.socket().exists(), "an inbox was started in the container: {stderr}");
}

/// Another uid than the desk's, however it calls itself inside: root of another user's user
/// namespace (a rootless container of someone else's, or a daemon's `userns-remap`) is refused
/// by the inbox's peer check, and `askpane hook` run as another uid refuses the folder itself.
/// Needs root (to be another user with setpriv); said and skipped otherwise.
#[test]
fn a_container_user_of_another_uid_is_refused_with_a_clear_message() {
    let world = World::with_inbox("container-other");
    if !running_as_root() || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("SKIPPED: needs root and setpriv to be another user");
        return;
    }
    if !user_namespaces_work() {
        return;
    }
    // The file modes would stop nobody first (0700 folder): open them, so that what is tested
    // is the peer check, as a bind mount of the folder would hand the socket to any uid.
    for (path, mode) in [(world.root.join("run"), 0o711), (world.root.join("run/askpane"), 0o711)] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("open up");
    }
    fs::set_permissions(world.socket(), fs::Permissions::from_mode(0o666)).expect("open up");
    let script = format!(
        "import os, socket; s = socket.socket(socket.AF_UNIX); s.connect({:?}); s.settimeout(10); \
         print(os.getuid(), repr(s.recv(100)))",
        world.socket().display().to_string()
    );
    let mut as_root_of_nobody = Command::new("setpriv");
    as_root_of_nobody
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["unshare", "--user", "--map-root-user", "/usr/bin/python3", "-c", &script])
        .env("PATH", "/usr/bin:/bin");
    let run = run_bounded(&mut as_root_of_nobody, None);
    // uid 0 inside; uid 65534 to the inbox: no greeting.
    assert_eq!(run.stdout.trim(), "0 b''", "{run:?}");
    let said = read_lossy(&world.root.join("inbox.stderr"));
    assert!(said.contains("refused a client of another user (uid 65534)"), "{said}");
    // askpane itself, as another uid, does not take the folder for its inbox's; no card.
    let mut hook = world.askpane(&["hook"]);
    let mut as_nobody = Command::new("setpriv");
    as_nobody
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(hook.get_program())
        .args(hook.get_args());
    for (key, value) in hook.get_envs() {
        match value {
            Some(value) => as_nobody.env(key, value),
            None => as_nobody.env_remove(key),
        };
    }
    // No display: nothing to answer in a window of its own.
    as_nobody.env_remove("DISPLAY").env("HOME", "/nonexistent").current_dir("/");
    hook = as_nobody;
    let refused = run_bounded(&mut hook, Some(&hook_input("toolu_other", "Which colour?")));
    assert_eq!(refused.status.code(), Some(0), "{refused:?}");
    assert!(refused.stderr.contains("belongs to another user (uid 0)"), "{refused:?}");
    assert!(refused.stdout.contains("Claude Code asks instead"), "{refused:?}");
    assert!(world.connect().list().is_empty());
}

/// A real container where a Docker daemon answers: the printed mount, the container's user the
/// desk's uid, this askpane bind-mounted in (it needs only libc). Skipped, said, without a
/// daemon or a local image to run it in.
#[test]
fn a_docker_container_with_the_printed_mount_asks_the_desk_s_inbox() {
    let reachable = run_bounded(Command::new("docker").args(["info", "--format", "{{.ID}}"]), None);
    if !reachable.status.success() {
        eprintln!("SKIPPED: no Docker daemon answers here: {}", reachable.stderr.trim());
        return;
    }
    let image = "debian:bookworm-slim";
    let present = run_bounded(Command::new("docker").args(["image", "inspect", image]), None);
    if !present.status.success() {
        eprintln!("SKIPPED: the image {image} is not on this machine (docker pull {image})");
        return;
    }
    let world = World::with_inbox("container-docker");
    let printed = run_bounded(&mut world.askpane(&["remote", "--container"]), None);
    let line = printed.stdout.lines().find(|line| line.starts_with("-v ")).expect("the mount line");
    let mut words: Vec<String> =
        line.split_whitespace().map(|word| word.trim_matches('"').to_owned()).collect();
    let askpane = env!("CARGO_BIN_EXE_askpane");
    words.extend(["-v".to_owned(), format!("{askpane}:/usr/local/bin/askpane:ro")]);
    let mut docker = Command::new("docker");
    docker.args(["run", "--rm", "-i"]).args(&words).args([image, "askpane", "hook"]);
    let client = crate::inbox::Client::spawn(docker, &hook_input("toolu_docker", "Which colour?"));
    let deadline = std::time::Instant::now() + WAIT;
    while world.connect().list().is_empty() {
        if std::time::Instant::now() > deadline {
            let (stdout, stderr) = client.killed_with_output();
            panic!("never asked: {stdout}\n{stderr}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    answer_blue(&world);
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(hook_answers(&stdout), json!({"Which colour?": "Blue"}), "{stderr}");
}
