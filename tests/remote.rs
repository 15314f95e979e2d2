//! Issue 27: `askpane remote HOST` against a real OpenSSH server on 127.0.0.1, started by each
//! test with its own host key, config and client key. "The remote" is this user with a home and
//! runtime folder of its own (sshd's `SetEnv`), so its `askpane hook` finds the forwarded socket
//! where it would find an inbox of its own. The local inbox is tests/inbox.rs's `World` (an
//! Xvfb, private folders); questions are answered there by keyboard.
//!
//! Skipped, with the reason printed, where `sshd` is not installed (scripts/setup and .ci/run
//! install `openssh-server`).

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use askpane::book::tool_call::ToolCallView;
use askpane::protocol::tool_call::FileSnapshot;
use serde_json::{Value, json};

use crate::claude_host::{FAKE, PROMPT, Report};
use crate::inbox::{Client, World, hook_answers, hook_input, wait_for_window};
use crate::support::{Process, WAIT, read_lossy, run_bounded};

const SSHD: &str = "/usr/sbin/sshd";

/// The ssh alias the tests link.
const HOST: &str = "devbox";

/// A private sshd on a free loopback port, and everything a client needs to log in to it.
pub(crate) struct Sshd {
    /// The ssh client config (`Host devbox` …), passed as `-F`.
    pub(crate) config: PathBuf,
    /// The remote's home and runtime folder.
    pub(crate) remote: PathBuf,
    /// The ssh alias of this host in [`Sshd::config`].
    pub(crate) alias: String,
    _process: Process,
}

impl Sshd {
    /// Starts sshd under `root` as host `devbox`, or `None` (said on stderr) where sshd is not
    /// installed.
    pub(crate) fn start(root: &Path) -> Option<Sshd> {
        Sshd::start_as(root, HOST)
    }

    /// Starts sshd under `root` for the ssh alias `alias`, with a remote of its own.
    pub(crate) fn start_as(root: &Path, alias: &str) -> Option<Sshd> {
        Sshd::start_with(root, alias, "")
    }

    /// Starts sshd under `root` for `alias`, `extra` at the start of its config (a
    /// `ForceCommand`, or a keyword whose first value wins over the one below).
    pub(crate) fn start_with(root: &Path, alias: &str, extra: &str) -> Option<Sshd> {
        if !Path::new(SSHD).is_file() {
            // CI installs it (scripts/setup): there a missing sshd is a failure, not a pass.
            let ci = std::env::var("CI").is_ok_and(|ci| ci == "true");
            assert!(!ci, "{SSHD} is not installed under CI=true: scripts/setup installs it");
            eprintln!("SKIPPED: {SSHD} is not installed (apt-get install openssh-server)");
            return None;
        }
        let dir = root.join(format!("sshd-{alias}"));
        let remote = root.join(format!("remote-{alias}"));
        for folder in [&dir, &remote.join("home"), &remote.join("run")] {
            fs::create_dir_all(folder).expect("make the sshd's folders");
        }
        fs::set_permissions(remote.join("run"), fs::Permissions::from_mode(0o700))
            .expect("a private runtime folder");
        // sshd's privilege separation folder (Debian's package makes it at boot).
        let _ = fs::create_dir_all("/run/sshd");
        for key in ["host_key", "client_key"] {
            let made = run_bounded(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                    .arg(dir.join(key)),
                None,
            );
            assert!(made.status.success(), "ssh-keygen: {made:?}");
        }
        fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).expect("authorize");
        let port = free_port();
        let sshd_config = dir.join("sshd_config");
        fs::write(
            &sshd_config,
            // `extra` first: sshd takes a keyword's first value, so it may also change one of
            // these (`StreamLocalBindUnlink no`, sshd's default).
            format!(
                "{extra}Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
                 PidFile {dir}/sshd.pid\nAuthorizedKeysFile {dir}/authorized_keys\n\
                 StrictModes no\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
                 StreamLocalBindUnlink yes\nAllowStreamLocalForwarding yes\n\
                 SetEnv HOME={remote}/home XDG_RUNTIME_DIR={remote}/run \
                 XDG_STATE_HOME={remote}/state PATH={remote}/bin:/usr/local/bin:/usr/bin:/bin\n",
                dir = dir.display(),
                remote = remote.display(),
            ),
        )
        .expect("write sshd_config");
        let config = dir.join("ssh_config");
        fs::write(
            &config,
            format!(
                "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {dir}/client_key\n\
                 \x20 IdentitiesOnly yes\n  UserKnownHostsFile {dir}/known_hosts\n\
                 \x20 StrictHostKeyChecking accept-new\n  BatchMode yes\n  LogLevel ERROR\n",
                dir = dir.display(),
            ),
        )
        .expect("write ssh_config");
        let log = fs::File::create(dir.join("sshd.log")).expect("sshd's log");
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&sshd_config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        let sshd = Sshd { config, remote, alias: alias.to_owned(), _process: Process::new(child) };
        let deadline = Instant::now() + WAIT;
        while !read_lossy(&dir.join("sshd.log")).contains("Server listening") {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen: {}",
                read_lossy(&dir.join("sshd.log"))
            );
            thread::sleep(Duration::from_millis(20));
        }
        Some(sshd)
    }

    /// `ssh -F CONFIG devbox COMMAND…`: a command on the remote.
    pub(crate) fn on_remote(&self, command: &[&str]) -> Command {
        let mut ssh = Command::new("ssh");
        ssh.arg("-F").arg(&self.config).arg(&self.alias).args(command);
        ssh
    }

    /// The inbox socket's path on the remote.
    pub(crate) fn remote_socket(&self) -> PathBuf {
        self.remote.join("run/askpane/inbox.sock")
    }
}

/// A loopback port nothing listens on (a moment ago).
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// A running `askpane remote devbox -- -F CONFIG`, its stderr in a file.
struct RemoteLink {
    process: Process,
    stderr: PathBuf,
}

impl RemoteLink {
    fn start(world: &World, sshd: &Sshd) -> RemoteLink {
        let stderr = world.root.join(format!("remote-link-{}.stderr", sshd.alias));
        let mut command = world.askpane(&["remote", &sshd.alias]);
        command.stdout(Stdio::null());
        let process = start_link(command, sshd, &[], &stderr);
        RemoteLink { process, stderr }
    }

    fn said(&self) -> String {
        read_lossy(&self.stderr)
    }

    /// Waits until the link has said `line` `count` times.
    fn wait_for(&self, line: &str, count: usize) {
        let deadline = Instant::now() + WAIT;
        while self.said().matches(line).count() < count {
            assert!(Instant::now() < deadline, "the link did not come up: {}", self.said());
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Starts `command`, an `askpane remote ALIAS …` to which this adds `-- -F CONFIG SSH_ARGS…`
/// (`sshd`'s ssh config), its stderr into the file `stderr`, and waits until it says it linked.
pub(crate) fn start_link(
    mut command: Command,
    sshd: &Sshd,
    ssh_args: &[&str],
    stderr: &Path,
) -> Process {
    command.args(["--", "-F"]).arg(&sshd.config).args(ssh_args).stdin(Stdio::null());
    command.stderr(fs::File::create(stderr).expect("the link's stderr"));
    let process = Process::new(command.spawn().expect("askpane remote"));
    let linked = format!("linked {}", sshd.alias);
    let deadline = Instant::now() + WAIT;
    while !read_lossy(stderr).contains(&linked) {
        assert!(Instant::now() < deadline, "the link did not come up: {}", read_lossy(stderr));
        thread::sleep(Duration::from_millis(20));
    }
    process
}

fn unix_nanos() -> u128 {
    let now = std::time::SystemTime::now();
    now.duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_nanos()
}

/// The link's state file.
pub(crate) fn link_state(world: &World) -> Value {
    let text = read_lossy(&world.root.join("run/askpane/links/devbox.state"));
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Waits until the inbox lists `count` requests, and returns them.
pub(crate) fn listed(world: &World, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let requests = world.connect().list();
        if requests.len() == count {
            return requests;
        }
        assert!(Instant::now() < deadline, "{} listed, not {count}: {requests:?}", requests.len());
        thread::sleep(Duration::from_millis(20));
    }
}

/// `askpane hook` on the remote, reading `input`.
fn remote_hook(sshd: &Sshd, input: &str) -> Client {
    let askpane = env!("CARGO_BIN_EXE_askpane");
    Client::spawn(sshd.on_remote(&[askpane, "hook"]), input)
}

/// Answers the one question in the inbox window: the second option, sent.
pub(crate) fn answer_blue(world: &World) {
    let window = wait_for_window(&world.xvfb, "1 question", true).expect("the question's window");
    world.xvfb.focus(window);
    world.xvfb.keys(window, &["2", "ctrl+Return"]);
}

#[test]
fn a_hook_on_the_remote_is_answered_in_the_desk_s_inbox_with_its_host() {
    let world = World::with_inbox("remote-answer");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = RemoteLink::start(&world, &sshd);
    assert_eq!(link_state(&world)["state"], "up", "{}", link.said());
    // The forwarded socket is the user's alone, in a folder of theirs alone.
    let mode = |path: &Path| fs::metadata(path).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&sshd.remote_socket()), 0o600);
    assert_eq!(mode(sshd.remote_socket().parent().expect("its folder")), 0o700);

    // A subscriber hears the question arrive; the remote hook says when it started (the same
    // clock: the remote is this machine).
    let mut watcher = world.connect();
    watcher.send(r#"{"type":"subscribe"}"#);
    watcher.receive_kind("subscribed");
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let timed = format!("date +%s%N >&2; exec {askpane} hook");
    let client =
        Client::spawn(sshd.on_remote(&[&timed]), &hook_input("toolu_remote", "Which colour?"));
    let asked = watcher.receive_kind("asked");
    let arrived_ns = unix_nanos();
    assert_eq!(asked["request"]["host"], HOST, "{asked}");
    let requests = listed(&world, 1);
    assert_eq!(requests[0]["host"], HOST, "{requests:?}");
    let from = requests[0]["from"].as_str().expect("who asked");
    assert!(from.starts_with("hook · ") && from.ends_with(" @ devbox"), "{from}");
    answer_blue(&world);
    let (code, stdout, stderr) = client.finish();
    let started_ns: u128 =
        stderr.lines().next().and_then(|line| line.trim().parse().ok()).expect("its start");
    eprintln!(
        "FIGURE: a remote hook's question reached the desk's inbox {:.1} ms after the hook started",
        (arrived_ns - started_ns) as f64 / 1e6
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(hook_answers(&stdout), json!({"Which colour?": "Blue"}), "{stderr}");
    assert_eq!(stdout.trim().lines().count(), 1, "{stdout}");
    // History keeps the host, under a key of the host's own, and finds it by the host.
    let deadline = Instant::now() + WAIT;
    let recorded = loop {
        let history = run_bounded(&mut world.askpane(&["history", "--host", HOST, "--json"]), None);
        if let Some(line) = history.stdout.lines().next() {
            break serde_json::from_str::<Value>(line).expect("a JSON line");
        }
        assert!(Instant::now() < deadline, "not recorded: {history:?}");
        thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(recorded["host"], HOST, "{recorded}");
    assert_eq!(recorded["key"], "devbox/toolu_remote", "{recorded}");
    let elsewhere =
        run_bounded(&mut world.askpane(&["history", "--host", "laptop", "--json"]), None);
    assert_eq!(elsewhere.stdout, "", "{elsewhere:?}");
}

#[test]
fn a_question_whose_ssh_is_killed_is_asked_again_when_the_link_is_back_and_answered_once() {
    let world = World::with_inbox("remote-drop");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = RemoteLink::start(&world, &sshd);
    let client = remote_hook(&sshd, &hook_input("toolu_drop", "Which colour?"));
    let before = listed(&world, 1);
    let ssh_pid = link_state(&world)["ssh_pid"].as_u64().expect("the link's ssh pid");
    let killed = Command::new("kill").args(["-KILL", &ssh_pid.to_string()]).status();
    assert!(killed.is_ok_and(|status| status.success()), "kill ssh {ssh_pid}");
    // One line that it went, one that it is back; the question is asked again meanwhile.
    link.wait_for("the link to devbox is back", 1);
    let said = link.said();
    assert_eq!(said.matches("went down").count(), 1, "{said}");
    assert_eq!(said.matches("linked devbox").count(), 1, "{said}");
    // Asked again on a new connection (the old one's request was withdrawn with it).
    let deadline = Instant::now() + WAIT;
    let after = loop {
        let after = world.connect().list();
        if after.len() == 1 && after[0]["connection"] != before[0]["connection"] {
            break after;
        }
        if Instant::now() > deadline {
            let (stdout, stderr) = client.killed_with_output();
            panic!("never asked again: {after:?}\nhook: {stdout} {stderr}\nlink: {}", link.said());
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(after[0]["tool_use_id"], before[0]["tool_use_id"]);
    answer_blue(&world);
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.trim().lines().count(), 1, "answered exactly once: {stdout}");
    assert_eq!(hook_answers(&stdout), json!({"Which colour?": "Blue"}), "{stderr}");
    assert!(stderr.contains("the link to your desk went down"), "{stderr}");
    assert!(world.connect().list().is_empty());
}

/// A session of the fake Claude Code (tests/fake-claude) that asks "Which colour?" once and
/// wants, as its host's reply, an allow with an answer (`answered`) or a deny with a message,
/// then ends its turn and exits. Returns the transcript's path.
fn colour_session(dir: &Path, answered: bool) -> PathBuf {
    let mut records =
        crate::support::fixture_lines("session.answer-with-notes.2.1.330.replay.jsonl");
    let init = records
        .iter()
        .position(|record| record["line"]["subtype"] == "init")
        .expect("the capture has system/init");
    records.truncate(init + 1);
    let questions = json!([{
        "question": "Which colour?", "header": "Colour", "multiSelect": false,
        "options": [{"label": "Red", "description": "warm"},
                    {"label": "Blue", "description": "cool"}]
    }]);
    let input = json!({"questions": questions});
    let reply = match answered {
        true => json!({"behavior": "allow", "toolUseID": "toolu_hosted_colour",
            "updatedInput": {"questions": questions, "answers": {"Which colour?": "Blue"},
                "annotations": {}}}),
        false => json!({"behavior": "deny", "message": "no answer",
            "toolUseID": "toolu_hosted_colour"}),
    };
    let cli = |line: Value| json!({"dir": "<<", "line": line});
    records.extend([
        cli(json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_hosted_colour", "name": "AskUserQuestion",
             "input": input}]}})),
        cli(json!({"type": "control_request", "request_id": "ask-colour", "request": {
            "subtype": "can_use_tool", "tool_name": "AskUserQuestion",
            "display_name": "AskUserQuestion", "input": input,
            "tool_use_id": "toolu_hosted_colour"}})),
        json!({"dir": ">>", "line": {"type": "control_response", "response": {
            "subtype": "success", "request_id": "ask-colour", "response": reply}}}),
        cli(json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": "read", "is_error": !answered,
             "tool_use_id": "toolu_hosted_colour"}]}})),
        cli(json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": 2,
            "duration_ms": 120, "result": "Done."})),
        json!({"dir": "die", "line": 0}),
    ]);
    let path = dir.join(format!("colour-session-{answered}.jsonl"));
    let text: String = records.iter().map(|record| format!("{record}\n")).collect();
    fs::write(&path, text).expect("write the transcript");
    path
}

/// `askpane claude ARGS…` on the remote, hosting the fake Claude Code replaying `transcript`;
/// its report goes to `report`.
fn remote_hosted_claude(sshd: &Sshd, transcript: &Path, report: &Path, args: &[&str]) -> Client {
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let transcript = format!("FAKE_CLAUDE_TRANSCRIPT={}", transcript.display());
    let report = format!("FAKE_CLAUDE_REPORT={}", report.display());
    let mut command =
        vec!["env", &transcript, &report, askpane, "claude", "--claude-bin", FAKE, "-p", PROMPT];
    command.extend(args);
    // ssh hands the remote's shell one line: each word quoted for it.
    let line: Vec<String> = command.iter().map(|word| format!("'{word}'")).collect();
    Client::spawn(sshd.on_remote(&[&line.join(" ")]), "")
}

/// [`listed`], while `client` runs: a client that ends first says what it wrote.
fn listed_while(world: &World, count: usize, client: Client) -> (Vec<Value>, Client) {
    let deadline = Instant::now() + WAIT;
    loop {
        let requests = world.connect().list();
        if requests.len() == count {
            return (requests, client);
        }
        if Instant::now() > deadline {
            let (stdout, stderr) = client.killed_with_output();
            panic!(
                "{} listed, not {count}: {requests:?}\nclient: {stdout}\n{stderr}",
                requests.len()
            );
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the inbox lists one request on another connection than `before`'s: asked again.
fn asked_again(
    world: &World,
    before: &Value,
    client: Client,
    link: &RemoteLink,
) -> (Value, Client) {
    let deadline = Instant::now() + WAIT;
    loop {
        let after = world.connect().list();
        if let [again] = after.as_slice()
            && again["connection"] != before["connection"]
        {
            return (again.clone(), client);
        }
        if Instant::now() > deadline {
            let (stdout, stderr) = client.killed_with_output();
            panic!(
                "never asked again: {after:?}\nclient: {stdout} {stderr}\nlink: {}",
                link.said()
            );
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 27: `askpane claude` on the host, whose session's question waits in the desk's inbox
/// when the link's ssh is killed: it waits for the link (no inbox of the host's own, which would
/// fail there without a display), asks again on it once it is back, and the answer given there
/// reaches Claude Code exactly once.
#[test]
fn a_hosted_claude_s_question_whose_ssh_is_killed_is_asked_again_when_the_link_is_back() {
    let world = World::with_inbox("remote-hosted-drop");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = RemoteLink::start(&world, &sshd);
    let report = world.root.join("report.json");
    let transcript = colour_session(&world.root, true);
    let claude = remote_hosted_claude(&sshd, &transcript, &report, &[]);
    let (mut listed_now, claude) = listed_while(&world, 1, claude);
    let before = listed_now.remove(0);
    assert_eq!(before["host"], HOST, "{before}");
    assert_eq!(before["tool_use_id"], "toolu_hosted_colour", "{before}");
    let ssh_pid = link_state(&world)["ssh_pid"].as_u64().expect("the link's ssh pid");
    let killed = Command::new("kill").args(["-KILL", &ssh_pid.to_string()]).status();
    assert!(killed.is_ok_and(|status| status.success()), "kill ssh {ssh_pid}");
    link.wait_for("the link to devbox is back", 1);
    let (again, claude) = asked_again(&world, &before, claude, &link);
    assert_eq!(again["tool_use_id"], before["tool_use_id"], "{again}");
    assert_eq!(again["host"], HOST, "{again}");
    answer_blue(&world);
    // The fake ends after its turn; askpane claude ends with it.
    let (code, _, stderr) = claude.finish();
    let report = Report::read(&report);
    report.assert_all_ok(&stderr);
    let replies: Vec<&Value> = report
        .comparisons()
        .iter()
        .filter(|c| c["step"].as_str().is_some_and(|step| step.ends_with("control_response")))
        .collect();
    assert_eq!(replies.len(), 1, "answered exactly once\n{}", report.summary());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("the link to your desk went down"), "{stderr}");
    assert!(!stderr.contains("starting it again"), "no inbox of the host's own: {stderr}");
    assert!(world.connect().list().is_empty());
}

/// The same with the link down past the session's `--timeout`: the question gets the honest
/// timed-out reply (as the inbox would have given it), not "no inbox can be started".
#[test]
fn a_hosted_claude_s_question_whose_link_stays_down_past_its_timeout_is_told_the_time_ran_out() {
    let world = World::with_inbox("remote-hosted-down");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let mut link = RemoteLink::start(&world, &sshd);
    let report = world.root.join("report.json");
    let transcript = colour_session(&world.root, false);
    let claude = remote_hosted_claude(&sshd, &transcript, &report, &["--timeout", "4"]);
    let (_, claude) = listed_while(&world, 1, claude);
    // The link ends for good (its process stopped): the question leaves the desk's inbox.
    let pid = link.process.child.id();
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    link.process.wait(WAIT).expect("the link ended");
    let (code, _, stderr) = claude.finish();
    let report = Report::read(&report);
    report.assert_all_ok(&stderr);
    let message = crate::hosted::reply_message(&report);
    assert!(message.starts_with("No response after 4s"), "{message}\n{}", report.summary());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("did not come back within the 4 s timeout"), "{stderr}");
    assert!(world.connect().list().is_empty());
}

/// Sends each of `lines` on the remote's forwarded socket (a raw client there: python3 through
/// ssh) and returns the one reply each got, after the inbox's hello.
fn raw_on_remote(sshd: &Sshd, lines: &[Value]) -> Vec<Value> {
    let script = r#"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
r = s.makefile("r")
print(r.readline().strip(), flush=True)
for line in sys.stdin:
    s.sendall(line.encode())
    print(r.readline().strip(), flush=True)
"#;
    let program = sshd.remote.join("raw.py");
    fs::write(&program, script).expect("write the raw client");
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut command = sshd.on_remote(&[
        "python3",
        program.to_str().expect("a UTF-8 path"),
        sshd.remote_socket().to_str().expect("a UTF-8 path"),
    ]);
    let ran = run_bounded(&mut command, Some(&input));
    assert!(ran.status.success(), "{ran:?}");
    let mut replies: Vec<Value> =
        ran.stdout.lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    // The link hands on the inbox's hello, naming the host it relays.
    let hello = replies.remove(0);
    assert_eq!(hello["type"], "hello", "{ran:?}");
    assert_eq!(hello["link"], HOST, "{ran:?}");
    replies
}

#[test]
fn a_client_through_the_link_sees_and_touches_only_its_own_host_s_requests() {
    let world = World::with_inbox("remote-scope");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let _link = RemoteLink::start(&world, &sshd);
    // A question of this desk's, and one of another host's (a connection that names its link
    // as `askpane remote` does).
    let local = world.client(&["hook"], &hook_input("toolu_local", "Which colour here?"));
    let mut other_host = world.connect();
    other_host.send(r#"{"type":"via_link","host":"devbox2"}"#);
    assert_eq!(other_host.receive_kind("linked")["host"], "devbox2");
    let ask = json!({"type": "ask", "id": "1", "mode": "hook",
                     "message": serde_json::from_str::<Value>(&hook_input("toolu_other", "Which colour there?")).expect("json")});
    other_host.send(&ask.to_string());
    other_host.receive_kind("accepted");
    let all = listed(&world, 2);
    assert!(all.iter().any(|request| request["host"] == "devbox2"), "{all:?}");

    let replies = raw_on_remote(
        &sshd,
        &[
            json!({"type": "list"}),
            json!({"type": "withdraw", "id": "1"}),
            json!({"type": "subscribe"}),
            json!({"type": "new_link"}),
            json!({"type": "quit"}),
            json!({"type": "show"}),
            json!({"type": "via_link", "host": "devbox2"}),
            json!({"type": "list"}),
        ],
    );
    let kinds: Vec<&str> =
        replies.iter().map(|reply| reply["type"].as_str().unwrap_or("?")).collect();
    assert_eq!(
        kinds,
        ["list", "error", "error", "error", "error", "error", "error", "list"],
        "{replies:?}"
    );
    assert_eq!(replies[0]["requests"], json!([]), "another host's and this desk's are not listed");
    let said = |reply: &Value, words: &str| {
        assert!(reply["message"].as_str().is_some_and(|m| m.contains(words)), "{reply}");
    };
    said(&replies[1], "no open request");
    for reply in &replies[2..6] {
        said(reply, "through the link of devbox");
    }
    said(&replies[6], "cannot name another host");
    assert_eq!(replies[7]["requests"], json!([]), "still scoped to devbox after its via_link");
    // Nothing was withdrawn, nothing quit: both questions still wait.
    assert_eq!(listed(&world, 2).len(), 2);
    // Another user on the host cannot reach the forwarded socket at all (its folder is 0700).
    if running_as_root() {
        let socket = sshd.remote_socket();
        let mut as_nobody = sshd.on_remote(&[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "python3",
            "-c",
            &format!(
                "'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
                socket.display()
            ),
        ]);
        let refused = run_bounded(&mut as_nobody, None);
        assert!(!refused.status.success(), "{refused:?}");
        assert!(refused.stderr.contains("PermissionError"), "{refused:?}");
    } else {
        eprintln!("SKIPPED (another user on the host): the tests do not run as root");
    }
    local.kill();
}

fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"))
}

#[test]
fn a_link_that_stays_down_past_the_timeout_gets_the_honest_timed_out_reply() {
    let world = World::with_inbox("remote-down");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let mut link = RemoteLink::start(&world, &sshd);
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let client = Client::spawn(
        sshd.on_remote(&[askpane, "hook", "--timeout", "4"]),
        &hook_input("toolu_down", "Which colour?"),
    );
    listed(&world, 1);
    // The link ends for good (its process stopped): the question leaves the desk's inbox.
    let pid = link.process.child.id();
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    link.process.wait(WAIT).expect("the link ended");
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("one JSON reply");
    let reason = reply["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap_or("");
    assert!(reason.starts_with("No response after 4s"), "the timed-out reply: {reply}");
    assert!(stderr.contains("did not come back within the 4 s timeout"), "{stderr}");
    assert!(world.connect().list().is_empty());
}

#[test]
fn with_no_link_a_remote_hook_names_askpane_remote_and_leaves_the_question_to_claude_code() {
    let world = World::new("remote-none");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let client = remote_hook(&sshd, &hook_input("toolu_none", "Which colour?"));
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // As today without an inbox: Claude Code asks in its own dialog.
    assert!(stdout.contains("Claude Code asks instead"), "{stdout}");
    assert!(stderr.contains("askpane remote HOST"), "{stderr}");
}

#[test]
fn remote_list_shows_a_running_link_and_forgets_it_when_it_ends() {
    let world = World::new("remote-list");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let mut link = RemoteLink::start(&world, &sshd);
    let listed = run_bounded(&mut world.askpane(&["remote", "--list"]), None);
    assert!(listed.stdout.starts_with("devbox\tup\tsince "), "{listed:?}");
    // A second link to the same host is refused.
    let second = run_bounded(world.askpane(&["remote", HOST, "--", "-F"]).arg(&sshd.config), None);
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    assert!(second.stderr.contains("runs already"), "{second:?}");
    // SIGTERM ends it cleanly: its ssh, socket and state go.
    let ssh_pid = link_state(&world)["ssh_pid"].as_u64().expect("ssh's pid");
    let pid = link.process.child.id();
    let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let status = link.process.wait(WAIT).expect("the link ended");
    assert!(status.success(), "{status:?}: {}", link.said());
    assert!(!Path::new(&format!("/proc/{ssh_pid}")).exists(), "ssh {ssh_pid} still runs");
    assert!(!world.root.join("run/askpane/links/devbox.sock").exists());
    let listed = run_bounded(&mut world.askpane(&["remote", "--list"]), None);
    assert!(listed.stdout.starts_with("no link runs"), "{listed:?}");
    let _ = std::io::stderr().flush();
}

/// `CACHE/bin/claude-2.1.332`, the layout `scripts/claude-cli` documents.
pub(crate) fn claude_binary() -> PathBuf {
    let cache = std::env::var_os("ASKPANE_CLAUDE_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/askpane/claude-cli"),
        PathBuf::from,
    );
    let binary = cache.join("bin/claude-2.1.332");
    assert!(binary.is_file(), "Claude Code 2.1.332 is not installed: run scripts/claude-cli");
    binary
}

/// The real Claude Code 2.1.332, run on the remote through ssh against the fake model with
/// `askpane install claude`'s hook: its question is answered in the desk's inbox, and the model
/// reads the answer.
#[test]
fn claude_code_on_the_remote_asks_the_desk_and_its_model_reads_the_answer() {
    let world = World::with_inbox("remote-claude");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let _link = RemoteLink::start(&world, &sshd);
    let api = colour_model();
    let [home, project, tmp] = remote_claude_dirs(&sshd);
    // Installed on the remote as a person would there (the same binary: the remote is this
    // machine).
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let mut install = Command::new(askpane);
    install.args(["install", "claude", "--project"]).arg(&project).env("HOME", &home);
    let installed = run_bounded(&mut install, None);
    assert_eq!(installed.status.code(), Some(0), "{installed:?}");
    // As the interop tests run it (the Agent SDK's way, which offers AskUserQuestion) and
    // isolate it, on the remote: nothing of the test's environment but PATH; the remote's HOME
    // and runtime folder (where the link's socket is).
    let run_dir = sshd.remote.join("run");
    claude_on_the_remote_asks_and_reads_blue(
        &sshd,
        &world,
        &api,
        [&project, &home, &tmp],
        Some(&run_dir),
    );
}

/// A host that cannot be reached: said once (not at every try), tried again with a growing
/// backoff, shown as down by `--list` with ssh's reason; no sshd needed.
#[test]
fn an_unreachable_host_is_said_once_and_tried_again_with_backoff() {
    let world = World::new("remote-unreachable");
    let config = world.root.join("ssh_config");
    fs::write(
        &config,
        format!(
            "Host nowhere\n  HostName 127.0.0.1\n  Port {}\n  BatchMode yes\n  ConnectTimeout 5\n",
            free_port()
        ),
    )
    .expect("write ssh_config");
    let stderr = world.root.join("link.stderr");
    let mut command = world.askpane(&["remote", "nowhere", "--", "-F"]);
    command.arg(&config).stdin(Stdio::null()).stdout(Stdio::null());
    command.stderr(fs::File::create(&stderr).expect("the link's stderr"));
    let _link = Process::new(command.spawn().expect("askpane remote"));
    // Tries at 0, 1 and 3 s: three failures, one line.
    let deadline = Instant::now() + WAIT;
    loop {
        let state = read_lossy(&world.root.join("run/askpane/links/nowhere.state"));
        let state: Value = serde_json::from_str(&state).unwrap_or(Value::Null);
        if state["state"] == "down"
            && Instant::now() > deadline - WAIT + Duration::from_millis(3500)
        {
            assert!(state["why"].as_str().is_some_and(|why| why.contains("refused")), "{state}");
            break;
        }
        assert!(Instant::now() < deadline, "never down: {state}");
        thread::sleep(Duration::from_millis(50));
    }
    let said = read_lossy(&stderr);
    assert_eq!(said.matches("cannot link nowhere").count(), 1, "{said}");
    let listed = run_bounded(&mut world.askpane(&["remote", "--list"]), None);
    assert!(listed.stdout.starts_with("nowhere\tdown\tsince "), "{listed:?}");
}

/// Issue 27's figure: 20 questions from 4 links at once (5 remote hooks on each of 4 hosts, each
/// its own sshd) are all listed, each with its own host, and how long the slowest took from its
/// hook's start.
#[test]
fn twenty_questions_from_four_links_at_once_are_all_listed_with_their_hosts() {
    let world = World::with_inbox("remote-twenty");
    let hosts = ["devbox1", "devbox2", "devbox3", "devbox4"];
    let Some(sshds) =
        hosts.iter().map(|host| Sshd::start_as(&world.root, host)).collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let _links: Vec<RemoteLink> =
        sshds.iter().map(|sshd| RemoteLink::start(&world, sshd)).collect();
    let mut watcher = world.connect();
    watcher.send(r#"{"type":"subscribe"}"#);
    watcher.receive_kind("subscribed");
    let askpane = env!("CARGO_BIN_EXE_askpane");
    let timed = format!("date +%s%N >&2; exec {askpane} hook --timeout 30");
    let clients: Vec<(String, Client)> = sshds
        .iter()
        .flat_map(|sshd| (0..5).map(move |index| (sshd, index)))
        .map(|(sshd, index)| {
            let id = format!("toolu_{}_{index}", sshd.alias);
            let input = hook_input(&id, &format!("Which colour for {id}?"));
            (id, Client::spawn(sshd.on_remote(&[&timed]), &input))
        })
        .collect();
    // Each question's arrival, by its tool_use_id.
    let mut arrived = std::collections::HashMap::new();
    while arrived.len() < 20 {
        let asked = watcher.receive_kind("asked");
        let request = &asked["request"];
        let id = request["tool_use_id"].as_str().expect("an id").to_owned();
        let host = request["host"].as_str().expect("a host");
        assert!(id.starts_with(&format!("toolu_{host}_")), "{id} labelled {host}");
        arrived.insert(id, unix_nanos());
    }
    assert_eq!(world.connect().list().len(), 20);
    // Their hooks say when they started; they end (withdrawn) when killed.
    let mut slowest: u128 = 0;
    for (id, client) in clients {
        let (_, stderr) = client.killed_with_output();
        let started: u128 =
            stderr.lines().next().and_then(|line| line.trim().parse().ok()).expect("its start");
        slowest = slowest.max(arrived[&id].saturating_sub(started));
    }
    eprintln!(
        "FIGURE: 20 remote questions from 4 links at once all listed, the slowest {:.0} ms after its hook started",
        slowest as f64 / 1e6
    );
}

/// How long `--setup` may take in a test.
const SETUP_WAIT: Duration = Duration::from_secs(120);

/// `--setup claude` puts this askpane and its small hook client on the host (each checked there
/// by its checksum) and installs its hook there; `--undo` takes them all away.
#[test]
fn setup_copies_askpane_to_the_host_installs_its_hook_and_undo_leaves_nothing() {
    let world = World::new("remote-setup");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let home = sshd.remote.join("home");
    // The copy is the debug binary (over 100 MB) through ssh: a busy machine (the whole suite)
    // may take longer than one of the suite's usual waits.
    let run = |args: &[&str]| {
        let mut command = world.askpane(&[&["remote", HOST][..], args, &["--", "-F"]].concat());
        command
            .arg(&sshd.config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut process = Process::new(command.spawn().expect("askpane remote --setup"));
        let stdout = crate::support::read_all(process.child.stdout.take().expect("stdout"));
        let stderr = crate::support::read_all(process.child.stderr.take().expect("stderr"));
        let status = process.wait(SETUP_WAIT);
        let (stdout, stderr) = (crate::support::collect(stdout), crate::support::collect(stderr));
        let status = status.unwrap_or_else(|| panic!("still setting up: {stdout}\n{stderr}"));
        crate::support::Finished { status, stdout, stderr }
    };
    let set_up = run(&["--setup", "claude"]);
    assert_eq!(set_up.status.code(), Some(0), "{set_up:?}");
    assert!(set_up.stdout.contains("copied askpane to devbox:"), "{set_up:?}");
    assert!(set_up.stdout.contains("checked there"), "{set_up:?}");
    let copied = home.join(".local/bin/askpane");
    let ours = fs::metadata(env!("CARGO_BIN_EXE_askpane")).expect("this askpane").len();
    assert_eq!(fs::metadata(&copied).expect("the copy").len(), ours);
    assert_eq!(fs::metadata(&copied).expect("the copy").permissions().mode() & 0o777, 0o755);
    // The small hook client beside it goes too, and is what the hook there runs (issue 30).
    assert!(set_up.stdout.contains("copied askpane-hook to devbox:"), "{set_up:?}");
    let small = home.join(".local/bin/askpane-hook");
    let ours = fs::metadata(env!("CARGO_BIN_EXE_askpane-hook")).expect("this client").len();
    assert_eq!(fs::metadata(&small).expect("the copy").len(), ours);
    assert_eq!(fs::metadata(&small).expect("the copy").permissions().mode() & 0o777, 0o755);
    let settings = read_lossy(&home.join(".claude/settings.json"));
    assert!(settings.contains(&format!("\"{}\"", small.display())), "{settings}");
    let undone = run(&["--setup", "claude", "--undo"]);
    assert_eq!(undone.status.code(), Some(0), "{undone:?}");
    assert!(!copied.exists(), "{undone:?}");
    assert!(!small.exists(), "{undone:?}");
    let settings = read_lossy(&home.join(".claude/settings.json"));
    assert!(!settings.contains("askpane"), "{settings}");
    assert!(!home.join(".local/bin/.askpane.partial").exists());
}

/// `--setup` onto a host of another processor copies nothing and says what to do (an ssh that
/// answers `uname -sm` as a RISC-V host does; no sshd needed).
#[test]
fn setup_refuses_a_host_this_binary_cannot_run_on() {
    let world = World::new("remote-setup-arch");
    let fake_ssh = world.root.join("fake-ssh");
    let log = world.root.join("fake-ssh.log");
    fs::write(
        &fake_ssh,
        format!(
            "#!/bin/sh\necho \"$@\" >> {log}\ncase \"$*\" in *uname*) echo \"Linux riscv64\";; *) exit 1;; esac\n",
            log = log.display()
        ),
    )
    .expect("a fake ssh");
    fs::set_permissions(&fake_ssh, fs::Permissions::from_mode(0o755)).expect("executable");
    let mut command = world.askpane(&["remote", "riscbox", "--setup", "claude", "--ssh"]);
    let refused = run_bounded(command.arg(&fake_ssh), None);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(refused.stderr.contains("riscbox runs Linux riscv64"), "{refused:?}");
    assert_eq!(read_lossy(&log).lines().count(), 1, "only uname was run: {}", read_lossy(&log));
}

/// `askpane remote devbox ARGS… -- -F CONFIG` (a `--setup`), run to its end.
fn remote_setup(world: &World, sshd: &Sshd, args: &[&str]) -> crate::support::Finished {
    let mut command = world.askpane(&[&["remote", HOST][..], args, &["--", "-F"]].concat());
    command.arg(&sshd.config).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut process = Process::new(command.spawn().expect("askpane remote --setup"));
    let stdout = crate::support::read_all(process.child.stdout.take().expect("stdout"));
    let stderr = crate::support::read_all(process.child.stderr.take().expect("stderr"));
    let status = process.wait(SETUP_WAIT);
    let (stdout, stderr) = (crate::support::collect(stdout), crate::support::collect(stderr));
    let status = status.unwrap_or_else(|| panic!("still setting up: {stdout}\n{stderr}"));
    crate::support::Finished { status, stdout, stderr }
}

/// `--undo` takes away only what `--setup` made: the person's own `~/.local/bin` (and what is
/// in it) and their settings file stay, their settings as they were (askpane's backups of
/// that file beside it, as `askpane uninstall` leaves them anywhere).
#[test]
fn undo_after_setup_keeps_the_person_s_own_folders_and_settings() {
    let world = World::new("remote-setup-own");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let home = sshd.remote.join("home");
    fs::create_dir_all(home.join(".local/bin")).expect("their bin");
    fs::write(home.join(".local/bin/mytool"), "#!/bin/sh\n").expect("their tool");
    fs::create_dir_all(home.join(".claude")).expect("their .claude");
    let theirs = json!({"theme": "dark"});
    fs::write(home.join(".claude/settings.json"), theirs.to_string()).expect("their settings");
    let before = tree(&home);
    let set_up = remote_setup(&world, &sshd, &["--setup", "claude"]);
    assert_eq!(set_up.status.code(), Some(0), "{set_up:?}");
    let undone = remote_setup(&world, &sshd, &["--setup", "claude", "--undo"]);
    assert_eq!(undone.status.code(), Some(0), "{undone:?}");
    let after: Vec<String> =
        tree(&home).into_iter().filter(|path| !path.contains(".askpane-backup-")).collect();
    assert_eq!(after, before, "{undone:?}");
    let settings: Value =
        serde_json::from_str(&read_lossy(&home.join(".claude/settings.json"))).expect("JSON");
    assert_eq!(settings, theirs, "{undone:?}");
}

/// A host set up for Claude Code and for Codex keeps the binary while either is left: undoing
/// one takes away its own hook and files, not the binary the other's hook runs; undoing the
/// last leaves the home as it was.
#[test]
fn undo_of_one_agent_keeps_the_binary_the_other_agent_s_hook_runs() {
    let world = World::new("remote-setup-two");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let home = sshd.remote.join("home");
    // The host has Codex on its PATH (`askpane install codex` there asks it to trust the hook).
    fs::create_dir_all(sshd.remote.join("bin")).expect("the host's bin");
    std::os::unix::fs::symlink(crate::codex::binary(), sshd.remote.join("bin/codex"))
        .expect("codex on the host");
    let before = tree(&home);
    for agent in ["claude", "codex"] {
        let set_up = remote_setup(&world, &sshd, &["--setup", agent]);
        assert_eq!(set_up.status.code(), Some(0), "{set_up:?}");
    }
    let undone = remote_setup(&world, &sshd, &["--setup", "claude", "--undo"]);
    assert_eq!(undone.status.code(), Some(0), "{undone:?}");
    assert!(home.join(".local/bin/askpane").is_file(), "Codex's hook lost its binary: {undone:?}");
    assert!(home.join(".codex/hooks.json").is_file(), "{undone:?}");
    assert!(!home.join(".claude").exists(), "Claude Code's files stayed: {undone:?}");
    assert!(undone.stdout.contains("kept"), "it says the binary stays: {undone:?}");
    let last = remote_setup(&world, &sshd, &["--setup", "codex", "--undo"]);
    assert_eq!(last.status.code(), Some(0), "{last:?}");
    // What askpane made is gone; Codex's own state (it ran there to trust the hook) is
    // Codex's, and stays.
    let left: Vec<String> =
        tree(&home).into_iter().filter(|path| !path.starts_with(".codex")).collect();
    assert_eq!(left, before, "the home after both were undone: {last:?}");
    let hooks = read_lossy(&home.join(".codex/hooks.json"));
    assert!(!hooks.contains("askpane"), "Codex's hooks still run askpane: {hooks}");
}

/// Every path under `dir`, relative, sorted (`find -printf '%P'`): what a home holds.
fn tree(dir: &Path) -> Vec<String> {
    let listed = run_bounded(
        Command::new("find").arg(dir).args(["-mindepth", "1", "-printf", "%P\\n"]),
        None,
    );
    let mut paths: Vec<String> = listed.stdout.lines().map(str::to_owned).collect();
    paths.sort();
    paths
}

/// Issue 27: `--setup` onto a host whose `/tmp` is a `noexec` tmpfs (every ssh session there
/// runs in a mount namespace of its own with one mounted over `/tmp`, sshd's `ForceCommand`):
/// the copy still runs from `~/.local/bin`, and `--undo` leaves the home as it was.
#[test]
fn setup_onto_a_host_whose_tmp_is_noexec_installs_a_binary_that_runs_and_undo_leaves_nothing() {
    let world = World::new("remote-noexec");
    let wrapper = world.root.join("noexec-session");
    // Each session: a private mount namespace whose /tmp is a noexec tmpfs. The test's own
    // folder (the host's home, sshd's files), when it lies under /tmp (a checkout there, as a
    // CI clone may be), is put back at its path over the tmpfs: only /tmp itself is noexec.
    let session = format!(
        "#!/bin/sh\n\
         exec unshare --mount --propagation private sh -c '\n\
         root={root}\n\
         keep=\n\
         case \"$root\" in /tmp/*) keep=$(mktemp -d /run/askpane-keep.XXXXXX) && \
         mount --bind \"$root\" \"$keep\" || exit 1 ;; esac\n\
         mount -t tmpfs -o noexec,nosuid,nodev askpane-noexec /tmp || exit 1\n\
         if [ -n \"$keep\" ]; then mkdir -p \"$root\" && mount --bind \"$keep\" \"$root\" && \
         umount \"$keep\" && rmdir \"$keep\" || exit 1; fi\n\
         exec sh -c \"$SSH_ORIGINAL_COMMAND\"'\n",
        root = world.root.display(),
    );
    fs::write(&wrapper, session).expect("the session wrapper");
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).expect("executable");
    let extra = format!("ForceCommand {}\n", wrapper.display());
    let Some(sshd) = Sshd::start_with(&world.root, HOST, &extra) else { return };
    let on_remote = |script: &str| run_bounded(&mut sshd.on_remote(&[script]), None);
    // The host's /tmp is noexec indeed: a program copied there does not run.
    let mounted = on_remote("findmnt -no OPTIONS /tmp; cp /bin/true /tmp/t && /tmp/t; echo ran=$?");
    if mounted.stderr.contains("unshare") || mounted.stderr.contains("mount:") {
        eprintln!("SKIPPED: cannot make a noexec /tmp for the sessions here: {mounted:?}");
        return;
    }
    assert!(mounted.stdout.contains("noexec"), "{mounted:?}");
    assert!(mounted.stdout.contains("ran=126"), "a program ran from the noexec /tmp: {mounted:?}");
    let home = sshd.remote.join("home");
    let before = tree(&home);
    let run = |args: &[&str]| remote_setup(&world, &sshd, args);
    let set_up = run(&["--setup", "claude"]);
    assert_eq!(set_up.status.code(), Some(0), "{set_up:?}");
    assert!(set_up.stdout.contains("checked there"), "{set_up:?}");
    assert!(home.join(".local/bin/askpane").is_file(), "not in the remote's home: {set_up:?}");
    // It runs there, from the host's home, in a session whose /tmp is noexec.
    let ran = on_remote("\"$HOME/.local/bin/askpane\" --version && findmnt -no OPTIONS /tmp");
    assert!(ran.status.success(), "{ran:?}");
    assert!(ran.stdout.starts_with("askpane "), "{ran:?}");
    assert!(ran.stdout.contains("noexec"), "{ran:?}");
    let undone = run(&["--setup", "claude", "--undo"]);
    assert_eq!(undone.status.code(), Some(0), "{undone:?}");
    assert_eq!(tree(&home), before, "the home after --undo: {undone:?}");
}

/// The real Claude Code 2.1.332 run through `sshd` on the remote (`project`, `home`, `tmp`
/// there; `runtime` its XDG_RUNTIME_DIR, where a link's socket is, else none) asks the fake
/// model's question; it comes to the desk's inbox (`world`) from the host, is answered Blue
/// there, and the model reads it; Claude Code's own host is never asked.
pub(crate) fn claude_on_the_remote_asks_and_reads_blue(
    sshd: &Sshd,
    world: &World,
    api: &crate::fake_api::FakeApi,
    dirs: [&Path; 3],
    runtime: Option<&Path>,
) {
    let RemoteClaude { mut run, stdin, lines, stderr } =
        RemoteClaude::asking(sshd, world, api, dirs, runtime);
    answer_blue(world);
    // The model's next turn carries the answer; then the session ends with its input.
    the_model_reads(api, "Blue");
    // The turn ends (its `result`), and the session with its input. The answer came from the
    // desk: Claude Code's host was never asked (no can_use_tool).
    let mut said = Vec::new();
    let result = loop {
        let line = lines.recv_timeout(WAIT).unwrap_or_else(|_| panic!("no result: {said:?}"));
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if message["type"] == "result" {
            break message;
        }
        said.push(line);
    };
    assert_eq!(result["subtype"], "success", "{result}");
    assert!(!said.iter().any(|line| line.contains("can_use_tool")), "{said:?}");
    drop(stdin);
    let status = run.wait(WAIT);
    let stderr = crate::support::collect(stderr);
    assert!(status.is_some_and(|status| status.success()), "{status:?}\n{stderr}");
}

/// The real Claude Code 2.1.332 run on the remote through ssh, in stream-json host mode
/// (`--permission-prompt-tool stdio`: a question no hook answers comes to its host, this test, as
/// `can_use_tool`), against `api`, in `project` with `home` and `tmp` there.
pub(crate) struct RemoteClaude {
    pub(crate) run: Process,
    pub(crate) stdin: std::process::ChildStdin,
    /// Its stdout's lines.
    pub(crate) lines: std::sync::mpsc::Receiver<String>,
    pub(crate) stderr: std::sync::mpsc::Receiver<String>,
}

impl RemoteClaude {
    pub(crate) fn start(
        sshd: &Sshd,
        api: &crate::fake_api::FakeApi,
        [project, home, tmp]: [&Path; 3],
        runtime: Option<&Path>,
    ) -> RemoteClaude {
        let claude = format!(
            "cd {project} && exec env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
             HOME={home} TMPDIR={tmp} {runtime}ANTHROPIC_BASE_URL={api} \
             ANTHROPIC_API_KEY=dummy CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 \
             DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 {cli} --output-format stream-json \
             --verbose --input-format stream-json --permission-prompt-tool stdio",
            project = project.display(),
            home = home.display(),
            tmp = tmp.display(),
            runtime = runtime
                .map(|run| format!("XDG_RUNTIME_DIR={} ", run.display()))
                .unwrap_or_default(),
            api = api.base_url(),
            cli = claude_binary().display(),
        );
        let mut command = sshd.on_remote(&[&claude]);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut run = Process::new(command.spawn().expect("ssh devbox claude"));
        let stdin = run.child.stdin.take().expect("piped stdin");
        let (line_sender, lines) = std::sync::mpsc::channel::<String>();
        let stdout = run.child.stdout.take().expect("piped stdout");
        thread::spawn(move || {
            for line in
                std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok)
            {
                let _ = line_sender.send(line);
            }
        });
        let stderr = crate::support::read_all(run.child.stderr.take().expect("piped stderr"));
        RemoteClaude { run, stdin, lines, stderr }
    }
}

impl RemoteClaude {
    /// [`RemoteClaude::start`], given the user's turn: its question is listed in `world`'s
    /// inbox, from the host.
    pub(crate) fn asking(
        sshd: &Sshd,
        world: &World,
        api: &crate::fake_api::FakeApi,
        dirs: [&Path; 3],
        runtime: Option<&Path>,
    ) -> RemoteClaude {
        let mut claude = RemoteClaude::start(sshd, api, dirs, runtime);
        let turn = json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
            "message": {"role": "user", "content": [{"type": "text", "text": "Please ask me."}]}});
        writeln!(claude.stdin, "{turn}").expect("the user's turn");
        let requests = listed(world, 1);
        assert_eq!(requests[0]["host"], HOST, "{requests:?}");
        assert_eq!(requests[0]["tool_use_id"], crate::fake_api::TOOL_USE_ID, "{requests:?}");
        claude
    }
}

/// The remote's `home`, `project` and `tmp` for Claude Code (made, with their `.claude`).
pub(crate) fn remote_claude_dirs(sshd: &Sshd) -> [PathBuf; 3] {
    let dirs = ["home", "project", "tmp"].map(|name| sshd.remote.join(name));
    for dir in &dirs {
        fs::create_dir_all(dir.join(".claude")).expect("the remote's folders");
    }
    dirs
}

/// Waits for the model's one tool_result and checks it read `colour` for "Which colour?".
pub(crate) fn the_model_reads(api: &crate::fake_api::FakeApi, colour: &str) {
    let deadline = Instant::now() + WAIT;
    while api.tool_results().is_empty() {
        assert!(Instant::now() < deadline, "no tool_result: {}", api.request_summary());
        thread::sleep(Duration::from_millis(50));
    }
    let results = api.tool_results();
    let [result] = results.as_slice() else { panic!("one tool_result: {results:?}") };
    let read = crate::interop::tool_result_text(result);
    let expected = format!(r#""Which colour?"="{colour}""#);
    assert!(read.contains(&expected), "the model read: {read}");
}

/// The fake model that calls AskUserQuestion with "Which colour?" (Red or Blue).
pub(crate) fn colour_model() -> crate::fake_api::FakeApi {
    crate::fake_api::FakeApi::asking(json!({"questions": [{
        "question": "Which colour?", "header": "Colour", "multiSelect": false,
        "options": [{"label": "Red", "description": "warm"},
                    {"label": "Blue", "description": "cool"}]
    }]}))
}

/// Issue 27: a tool approval for an Edit asked by `askpane hook` on the host shows the diff
/// against the host's file, which the hook read there and sent with the request; the desk's
/// file at the same path (another one: the host's session sees a file of its own there, in a
/// mount namespace of its own) is never read for it.
#[test]
fn a_host_s_edit_approval_card_shows_the_diff_against_the_host_s_file_not_the_desk_s() {
    let inbox = crate::hook_approval::Inbox::start("remote-diff");
    let root = crate::support::scratch_dir("remote-diff-link");
    let Some(sshd) = Sshd::start(&root) else { return };
    let project = root.join("project");
    fs::create_dir_all(&project).expect("the project");
    let file = project.join("greeting.txt");
    fs::write(&file, "the desk's own greeting\n").expect("the desk's file");
    // The link, to the inbox this test serves.
    let stderr = root.join("link.stderr");
    let mut command = crate::support::askpane_unset(&["remote", HOST, "--", "-F"]);
    command.arg(&sshd.config).env("XDG_RUNTIME_DIR", &inbox.served.run);
    command.env("ASKPANE_STATE_DIR", root.join("state")).env("XDG_STATE_HOME", root.join("state"));
    command.stdin(Stdio::null()).stdout(Stdio::null());
    command.stderr(fs::File::create(&stderr).expect("the link's stderr"));
    let _link = Process::new(command.spawn().expect("askpane remote"));
    let deadline = Instant::now() + WAIT;
    while !read_lossy(&stderr).contains("linked devbox") {
        assert!(Instant::now() < deadline, "no link: {}", read_lossy(&stderr));
        thread::sleep(Duration::from_millis(20));
    }
    let private = run_bounded(&mut sshd.on_remote(&["unshare --mount true"]), None);
    if !private.status.success() {
        eprintln!("SKIPPED: no mount namespace of its own for the host's session: {private:?}");
        return;
    }
    // On the host, the project folder holds the host's own greeting (a tmpfs over it, in the
    // hook's own mount namespace).
    let captures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code/2.1.332");
    let capture = format!("{captures}/pr-edit-allow-setmode/hooks/PermissionRequest.1.stdin.json");
    let mut input: Value =
        serde_json::from_str(&fs::read_to_string(capture).expect("the capture")).expect("JSON");
    input["cwd"] = json!(project);
    input["tool_input"]["file_path"] = json!(file);
    let hook = format!(
        "unshare --mount --propagation private sh -c 'mount -t tmpfs askpane-host {project} && \
         printf \"hello from the host\\n\" > {file} && exec {askpane} hook'",
        project = project.display(),
        file = file.display(),
        askpane = env!("CARGO_BIN_EXE_askpane"),
    );
    let client = Client::spawn(sshd.on_remote(&[&hook]), &input.to_string());
    let card = inbox.card();
    assert_eq!(card.provenance.host.as_deref(), Some(HOST), "{:?}", card.provenance);
    let path = file.to_string_lossy().into_owned();
    assert_eq!(
        card.request.on_disk,
        Some(FileSnapshot::Text { path, text: "hello from the host\n".to_owned() }),
        "the host's file, as the hook read it there"
    );
    let body = format!("{:?}", ToolCallView::of(&card.request));
    assert!(body.contains("hello from the host"), "{body}");
    assert!(!body.contains("desk's own"), "{body}");
    card.reply.send(askpane::protocol::stream::PermissionDecision::AllowOnce);
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("one JSON reply");
    assert_eq!(reply["hookSpecificOutput"]["decision"]["behavior"], "allow", "{reply}");
}

/// ssh options a test gives after `--` so that a link cut silently is noticed within 4–6 s
/// (askpane's own keep-alives, which they override, take about 30 s).
pub(crate) const SHORT_KEEP_ALIVES: [&str; 4] =
    ["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=2"];

/// A ProxyCommand for ssh (`ProxyCommand=…`) that relays to `sshd` and appends its pid to the
/// file returned, so a test can stop it (SIGSTOP): a network cut silently.
pub(crate) fn freezable_proxy(root: &Path, sshd: &Sshd) -> (String, PathBuf) {
    let proxy = root.join("proxy.py");
    let pids = root.join("proxy.pids");
    fs::write(
        &proxy,
        format!(
            "import os, socket, sys, threading\n\
             open({pids:?}, 'a').write(f'{{os.getpid()}}\\n')\n\
             s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\n\
             def down():\n\
             \x20   while True:\n\
             \x20       b = s.recv(65536)\n\
             \x20       if not b: os._exit(0)\n\
             \x20       os.write(1, b)\n\
             threading.Thread(target=down, daemon=True).start()\n\
             while True:\n\
             \x20   b = os.read(0, 65536)\n\
             \x20   if not b: os._exit(0)\n\
             \x20   s.sendall(b)\n",
            pids = pids.display().to_string(),
        ),
    )
    .expect("the proxy");
    let port = read_lossy(&sshd.config)
        .lines()
        .find_map(|line| line.trim().strip_prefix("Port ").map(str::to_owned))
        .expect("the port");
    (format!("ProxyCommand=python3 {} {port}", proxy.display()), pids)
}

/// A link cut silently (a network gone, no packet saying so), simulated by a ProxyCommand that
/// the test stops (SIGSTOP): ssh on the desk notices within its keep-alives (30 s) and ends, but
/// sshd on the host keeps the old session, holding a waiting hook's connection (and, with
/// `--http`, the port). The next link ends that stale session of its own first: the hook sees
/// its link go, waits for it, asks again once it is back, and is answered exactly once.
#[test]
fn a_link_cut_silently_ends_its_stale_session_on_the_host_so_a_waiting_hook_asks_again() {
    let world = World::with_inbox("remote-silent");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let (proxy_command, pids) = freezable_proxy(&world.root, &sshd);
    let stderr = world.root.join("link.stderr");
    let mut command = world.askpane(&["remote", HOST, "--", "-F"]);
    command.arg(&sshd.config).arg("-o");
    command.arg(&proxy_command);
    // The person's keep-alives win over askpane's 3 × 10 s: the cut is noticed within 4–6 s.
    command.args(SHORT_KEEP_ALIVES);
    command.stdin(Stdio::null()).stdout(Stdio::null());
    command.stderr(fs::File::create(&stderr).expect("the link's stderr"));
    let _link = Process::new(command.spawn().expect("askpane remote"));
    let said = || read_lossy(&stderr);
    let wait_for = |line: &str, within: Duration| {
        let deadline = Instant::now() + within;
        while !said().contains(line) {
            assert!(Instant::now() < deadline, "never said {line:?}: {}", said());
            thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for("linked devbox", WAIT);
    let client = remote_hook(&sshd, &hook_input("toolu_silent", "Which colour?"));
    let (before, client) = listed_while(&world, 1, client);
    // The link's own ssh goes through the last proxy started: it stops relaying.
    let proxies = read_lossy(&pids);
    let forward = proxies.lines().last().expect("the forward's proxy").trim().to_owned();
    let stopped = Command::new("kill").args(["-STOP", &forward]).status();
    assert!(stopped.is_ok_and(|status| status.success()), "kill -STOP {forward}");
    // Keep-alives: 2 × 2 s; then the link comes back (a new proxy) and the hook asks again.
    wait_for("the link to devbox is back", Duration::from_secs(60));
    let deadline = Instant::now() + WAIT;
    let after = loop {
        let after = world.connect().list();
        if after.len() == 1 && after[0]["connection"] != before[0]["connection"] {
            break after;
        }
        if Instant::now() > deadline {
            let _ = Command::new("kill").args(["-KILL", &forward]).status();
            let (stdout, stderr) = client.killed_with_output();
            panic!("never asked again: {after:?}\nhook: {stdout} {stderr}\nlink: {}", said());
        }
        thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(after[0]["tool_use_id"], "toolu_silent");
    answer_blue(&world);
    let (code, stdout, hook_stderr) = client.finish();
    let _ = Command::new("kill").args(["-KILL", &forward]).status();
    assert_eq!(code, Some(0), "{hook_stderr}");
    assert_eq!(stdout.trim().lines().count(), 1, "answered exactly once: {stdout}");
    assert_eq!(hook_answers(&stdout), json!({"Which colour?": "Blue"}), "{hook_stderr}");
    assert!(hook_stderr.contains("the link to your desk went down"), "{hook_stderr}");
}

/// The inbox's stderr (its `connection N comes through the link of HOST` lines).
fn inbox_said(world: &World) -> String {
    read_lossy(&world.root.join("inbox.stderr"))
}

/// The numbers of the inbox's connections that said `via_link` for devbox, in order.
fn link_connections(world: &World) -> Vec<u64> {
    inbox_said(world)
        .lines()
        .filter(|line| line.ends_with("comes through the link of devbox"))
        .filter_map(|line| line.split("connection ").nth(1)?.split(' ').next()?.parse().ok())
        .collect()
}

/// Waits until the inbox has had `count` connections from devbox's link.
fn wait_for_link_connections(world: &World, count: usize) -> Vec<u64> {
    let deadline = Instant::now() + WAIT;
    loop {
        let seen = link_connections(world);
        if seen.len() >= count {
            return seen;
        }
        assert!(
            Instant::now() < deadline,
            "{} link connections, not {count}; the inbox said:\n{}",
            seen.len(),
            inbox_said(world)
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// A remote hook asking "Which colour?", answered Blue in the desk's window; returns the
/// connection it was listed on and its stderr.
fn remote_hook_answered(world: &World, sshd: &Sshd, tool_use_id: &str) -> (Value, String) {
    let client = remote_hook(sshd, &hook_input(tool_use_id, "Which colour?"));
    let connection = listed(world, 1)[0]["connection"].clone();
    answer_blue(world);
    let (code, stdout, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(hook_answers(&stdout), json!({"Which colour?": "Blue"}), "{stderr}");
    // Gone from the list before the next one asks.
    listed(world, 0);
    (connection, stderr)
}

#[test]
fn after_a_remote_hook_the_link_keeps_one_greeted_spare_that_the_next_hook_takes() {
    let world = World::with_inbox("remote-spare");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let _link = RemoteLink::start(&world, &sshd);
    // The link touches no inbox before a client comes (it starts none for a spare).
    assert_eq!(link_connections(&world), Vec::<u64>::new());
    let (first, _) = remote_hook_answered(&world, &sshd, "toolu_spare_1");
    // The first hook's connection and the spare made once it came, greeted in either order
    // (the inbox may read the spare's `via_link` before the hook's).
    let seen = wait_for_link_connections(&world, 2);
    assert!(seen.iter().any(|connection| json!(connection) == first), "{seen:?} {first}");
    let spare = *seen.iter().find(|connection| json!(connection) != first).expect("a spare");
    // The next hook is asked on the spare, already greeted: no connect, no via_link of its own.
    let (second, stderr) = remote_hook_answered(&world, &sshd, "toolu_spare_2");
    assert_eq!(second, json!(spare), "{seen:?} {stderr}");
    // And the spare taken is replaced, by one.
    let seen = wait_for_link_connections(&world, 3);
    assert_eq!(seen.len(), 3, "{seen:?}");
}

#[test]
fn a_spare_the_restarted_inbox_never_had_is_not_used_and_the_next_hook_gets_through() {
    let mut world = World::with_inbox("remote-spare-restart");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = RemoteLink::start(&world, &sshd);
    remote_hook_answered(&world, &sshd, "toolu_restart_1");
    wait_for_link_connections(&world, 2);
    // The inbox ends (its spare connection with it) and another starts.
    drop(world.inbox.take());
    let command = world.askpane(&["inbox"]);
    world.start_inbox_command(command);
    let (_, stderr) = remote_hook_answered(&world, &sshd, "toolu_restart_2");
    // Straight through: the dead spare was not handed to it (it would have heard the inbox go
    // and waited for the link).
    assert!(!stderr.contains("went down"), "{stderr}");
    assert!(!link.said().contains("could not reach"), "{}", link.said());
    // The new inbox: the hook's own connection, then a new spare.
    assert_eq!(wait_for_link_connections(&world, 2).len(), 2);
}

/// The link process's threads and open descriptors.
fn threads_and_fds(pid: u32) -> (usize, usize) {
    let count = |dir: String| fs::read_dir(dir).map(Iterator::count).unwrap_or(usize::MAX);
    (count(format!("/proc/{pid}/task")), count(format!("/proc/{pid}/fd")))
}

#[test]
fn a_link_that_drops_again_and_again_leaks_no_connection_or_thread() {
    let world = World::with_inbox("remote-spare-drops");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = RemoteLink::start(&world, &sshd);
    let pid = link.process.child.id();
    remote_hook_answered(&world, &sshd, "toolu_drops_0");
    wait_for_link_connections(&world, 2);
    // Settled: the relay's threads have ended once its client and connection closed.
    let settled = |rounds: usize| {
        let deadline = Instant::now() + WAIT;
        let mut last = threads_and_fds(pid);
        loop {
            thread::sleep(Duration::from_millis(200));
            let now = threads_and_fds(pid);
            if now == last {
                return now;
            }
            assert!(Instant::now() < deadline, "round {rounds}: never settled: {now:?}");
            last = now;
        }
    };
    let before = settled(0);
    for round in 1..=3 {
        let ssh_pid = link_state(&world)["ssh_pid"].as_u64().expect("the link's ssh pid");
        let killed = Command::new("kill").args(["-KILL", &ssh_pid.to_string()]).status();
        assert!(killed.is_ok_and(|status| status.success()), "kill ssh {ssh_pid}");
        link.wait_for("the link to devbox is back", round);
        remote_hook_answered(&world, &sshd, &format!("toolu_drops_{round}"));
        // Each hook took the spare (or went the long way) and one new spare was made.
        wait_for_link_connections(&world, 2 + round);
    }
    assert_eq!(settled(4), before, "threads and descriptors (before: {before:?})");
    assert_eq!(link_connections(&world).len(), 5, "{}", inbox_said(&world));
}

/// A link's connection that said `via_link` and nothing else counts as a client for a while
/// (`LINK_SETTLES`, 3 s): a remote client's first line follows its link's `via_link`, and an
/// inbox going lean in between closed it under the client. Then it counts as an idle spare and
/// the inbox may go lean. A link's connection that asks within that time counts from then on.
#[test]
fn a_link_s_connection_keeps_the_inbox_awake_until_it_settles_as_a_spare() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixStream;

    let inbox = crate::support::agents::ServedInbox::serve(
        crate::support::scratch_dir("remote-link-settles"),
        askpane::transport::memory().0,
    );
    let socket = inbox.run.join("askpane/inbox.sock");
    let linked = |with_question: bool| {
        let stream = UnixStream::connect(&socket).expect("connect");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut line = String::new();
        reader.read_line(&mut line).expect("the hello");
        (&stream).write_all(b"{\"type\":\"via_link\",\"host\":\"devbox\"}\n").expect("via_link");
        line.clear();
        reader.read_line(&mut line).expect("linked");
        assert!(line.contains("linked"), "{line}");
        if with_question {
            let ask = json!({"type": "subscribe"}).to_string() + "\n";
            (&stream).write_all(ask.as_bytes()).expect("a first line");
            line.clear();
            reader.read_line(&mut line).expect("subscribed");
        }
        stream
    };
    // A spare just made: it still counts (once the inbox has counted afresh after its
    // via_link, which before made it quiet at once).
    let spare = linked(false);
    let made = Instant::now();
    thread::sleep(Duration::from_millis(200));
    assert!(!inbox.claim_quiet(), "a link's connection just made let the inbox go lean");
    // One that asks: it counts as long as it is connected, long after the spare settled.
    let asking = linked(true);
    thread::sleep(Duration::from_secs(4).saturating_sub(made.elapsed()));
    assert!(!inbox.claim_quiet(), "the connection that asked no longer counts");
    drop(asking);
    // The settled spare alone: the inbox may go lean.
    let deadline = Instant::now() + WAIT;
    while !inbox.claim_quiet() {
        assert!(Instant::now() < deadline, "the idle spare still keeps the inbox awake");
        thread::sleep(Duration::from_millis(50));
    }
    drop(spare);
}

/// Whether the inbox process `pid` is the lean inbox now.
fn is_lean(pid: u32) -> bool {
    read_lossy(format!("/proc/{pid}/cmdline").as_ref()).replace('\0', " ").contains("--lean")
}

#[test]
fn a_link_s_spare_does_not_keep_the_inbox_from_going_lean_and_the_next_hook_wakes_it() {
    let world = World::with_inbox("remote-spare-lean");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = RemoteLink::start(&world, &sshd);
    let pid = world.inbox.as_ref().expect("the test's inbox").child.id();
    remote_hook_answered(&world, &sshd, "toolu_lean_1");
    wait_for_link_connections(&world, 2);
    // The window closed with nothing open: lean, although the link holds its spare.
    let window = wait_for_window(&world.xvfb, "askpane", true).expect("the inbox's window");
    crate::display::send_wm_delete_window(world.xvfb.number, window);
    let deadline = Instant::now() + WAIT;
    while !is_lean(pid) {
        assert!(Instant::now() < deadline, "never lean: {}", inbox_said(&world));
        thread::sleep(Duration::from_millis(50));
    }
    // The next remote hook wakes it and is answered; the closed spare was not handed to it.
    let (_, stderr) = remote_hook_answered(&world, &sshd, "toolu_lean_2");
    assert!(!stderr.contains("went down"), "{stderr}");
    assert!(!link.said().contains("could not reach"), "{}", link.said());
}

/// `askpane hook` run on the host itself (as the bench does: no ssh in between, so it starts
/// the moment the link says it is up), with the environment sshd's `SetEnv` gives a session
/// there and no display.
fn hook_on_the_host(sshd: &Sshd, input: &str) -> Client {
    let mut hook = crate::support::askpane_unset(&["hook"]);
    hook.env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("HOME", sshd.remote.join("home"))
        .env("XDG_RUNTIME_DIR", sshd.remote.join("run"))
        .env("XDG_STATE_HOME", sshd.remote.join("state"))
        .env("ASKPANE_LOG", "debug");
    Client::spawn(hook, input)
}

/// Restarts the link `rounds` times as scripts/bench-startup does (SIGTERM, wait, a new
/// `askpane remote`, its "linked"), each time at once running a hook on the host: every one of
/// them must reach the desk's inbox; it is then withdrawn.
fn a_restarted_link_s_first_hook_reaches_the_inbox(name: &str, sshd_extra: &str, rounds: usize) {
    let world = World::with_inbox(name);
    let Some(sshd) = Sshd::start_with(&world.root, HOST, sshd_extra) else { return };
    let mut link = RemoteLink::start(&world, &sshd);
    for round in 1..=rounds {
        let pid = link.process.child.id();
        let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        let status = link.process.wait(WAIT).expect("the link ended");
        assert!(status.success(), "round {round}: {status:?}: {}", link.said());
        let old = fs::read_to_string(&link.stderr).unwrap_or_default();
        link = RemoteLink::start(&world, &sshd);
        let client =
            hook_on_the_host(&sshd, &hook_input(&format!("toolu_relink_{round}"), "Which?"));
        reaches_the_inbox_then_withdrawn(&world, client, &format!("round {round}"), || {
            format!("link: {}\nold link: {old}", link.said())
        });
    }
}

/// Requires `hook` to be listed in the desk's inbox before it ends (a hook that answered here
/// ends at once), then withdraws it as Claude Code does a hook it gave up on (SIGKILL).
fn reaches_the_inbox_then_withdrawn(
    world: &World,
    hook: Client,
    what: &str,
    context: impl Fn() -> String,
) {
    let deadline = Instant::now() + WAIT;
    let mut hook = hook;
    while world.connect().list().len() != 1 {
        if hook.process.exited().is_some() || Instant::now() > deadline {
            let (stdout, stderr) = hook.killed_with_output();
            panic!(
                "{what}: the hook never reached the inbox\nhook stdout: {stdout}\n\
                 hook stderr: {stderr}\n{}\ninbox: {}",
                context(),
                inbox_said(world)
            );
        }
        thread::sleep(Duration::from_millis(5));
    }
    hook.kill();
    listed(world, 0);
}

#[test]
fn a_restarted_link_s_first_hook_on_the_host_reaches_the_inbox_every_time() {
    a_restarted_link_s_first_hook_reaches_the_inbox("remote-relink", "", 15);
}

#[test]
fn a_restarted_link_s_first_hook_reaches_the_inbox_where_sshd_keeps_its_default_socket_binding() {
    // sshd's default, as the bench's sshd and most hosts have it.
    let extra = "StreamLocalBindUnlink no\n";
    a_restarted_link_s_first_hook_reaches_the_inbox("remote-relink-default", extra, 15);
}

#[test]
fn a_hook_on_the_host_while_a_restarted_link_comes_up_waits_for_its_forward_and_reaches_the_inbox()
{
    // sshd's default binding, as most hosts have it: the new link's first ssh removes the socket
    // the ended link left, and the forward binds it again a login later.
    let world = World::with_inbox("remote-coming");
    let Some(sshd) = Sshd::start_with(&world.root, HOST, "StreamLocalBindUnlink no\n") else {
        return;
    };
    let mut link = RemoteLink::start(&world, &sshd);
    for round in 1..=5 {
        let pid = link.process.child.id();
        let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        let status = link.process.wait(WAIT).expect("the link ended");
        assert!(status.success(), "round {round}: {status:?}: {}", link.said());
        // The ended link's socket stays on the host (sshd removes none) until the new link's
        // first ssh removes it: from then until its forward holds, nothing is there.
        assert!(sshd.remote_socket().exists(), "round {round}: the stale socket went already");
        let stderr = world.root.join(format!("remote-link-coming-{round}.stderr"));
        let mut command = world.askpane(&["remote", HOST, "--", "-F"]);
        command.arg(&sshd.config).stdin(Stdio::null()).stdout(Stdio::null());
        command.stderr(fs::File::create(&stderr).expect("the link's stderr"));
        let process = Process::new(command.spawn().expect("askpane remote"));
        let deadline = Instant::now() + WAIT;
        while sshd.remote_socket().exists() {
            assert!(Instant::now() < deadline, "round {round}: {}", read_lossy(&stderr));
            thread::sleep(Duration::from_millis(1));
        }
        let client =
            hook_on_the_host(&sshd, &hook_input(&format!("toolu_coming_{round}"), "Which?"));
        let said = || format!("link: {}", read_lossy(&stderr));
        reaches_the_inbox_then_withdrawn(&world, client, &format!("round {round}"), said);
        link = RemoteLink { process, stderr };
        link.wait_for("linked devbox", 1);
    }
}

/// A hook on the host waiting for a link that is coming up (its `link-ID.coming` note, up to
/// 15 s) still hears a signal at once and tells the agent it was stopped, as a hook waiting for a
/// link that went down does. Before, its wait looked at nothing else: SIGTERM killed it outright
/// (exit 143, nothing printed), the agent without a reply.
#[test]
fn a_hook_waiting_for_a_coming_link_hears_sigterm_and_tells_the_agent() {
    let root = crate::support::scratch_dir("remote-coming-signal");
    let folder = root.join("run/askpane");
    fs::create_dir_all(&folder).expect("the runtime folder");
    for dir in [root.join("run"), folder.clone()] {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("0700");
    }
    fs::write(folder.join("link-0123456789abcdef.coming"), "").expect("the note");
    let mut hook = crate::support::askpane(&["hook"]);
    hook.env("XDG_RUNTIME_DIR", root.join("run"))
        .env("XDG_STATE_HOME", root.join("state"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("ASKPANE_NO_INBOX")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut process = Process::new(hook.spawn().expect("start the hook"));
    let input = hook_input("toolu_coming_signal", "Which layout?");
    process.child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    let stderr = process.child.stderr.take().expect("stderr");
    let (said, heard) = std::sync::mpsc::channel();
    thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if said.send(line).is_err() {
                return;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + WAIT;
    while !lines.iter().any(|line: &String| line.contains("is coming up on this host")) {
        let left = deadline.saturating_duration_since(Instant::now());
        match heard.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => panic!("the hook never waited for the coming link: {lines:?}"),
        }
    }
    let signalled = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &process.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let ended = process.wait(Duration::from_secs(5)).expect("the hook ends within 5 s");
    assert!(
        signalled.elapsed() < Duration::from_secs(2),
        "{:?} after SIGTERM",
        signalled.elapsed()
    );
    lines.extend(heard.try_iter());
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut process.child.stdout.take().expect("stdout"), &mut stdout)
        .expect("read stdout");
    assert!(lines.iter().any(|line| line.contains("stopped by SIGTERM")), "{lines:?}");
    assert_ne!(ended.code(), None, "killed by the signal, not ended by askpane: {lines:?}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("one JSON reply for the agent");
    assert!(reply.to_string().contains("SIGTERM"), "{reply}");
}
