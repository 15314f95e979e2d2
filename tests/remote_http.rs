//! Issue 27 item 6: `askpane remote HOST --http`, Claude Code's HTTP hooks on the remote with no
//! askpane there: the real Claude Code 2.1.332 on the remote (tests/remote.rs's sshd) asks
//! through the printed hook and the forwarded loopback port; a request without the link's token,
//! or with another, is refused (401) and reaches no card.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::inbox::World;
use crate::remote::{
    RemoteClaude, Sshd, answer_blue, claude_on_the_remote_asks_and_reads_blue, colour_model,
    free_port, link_state, listed, remote_claude_dirs, start_link, the_model_reads,
};
use crate::support::{Process, WAIT, read_lossy};

/// A running `askpane remote devbox --http PORT -- -F CONFIG`, and the settings it printed.
struct HttpLink {
    process: Process,
    stderr: PathBuf,
    /// The host's loopback port Claude Code posts to.
    port: u16,
    /// The `hooks` settings printed for the host.
    settings: Value,
}

impl HttpLink {
    fn start(world: &World, sshd: &Sshd) -> HttpLink {
        HttpLink::start_as(world.askpane(&[]), &world.root, sshd)
    }

    /// `askpane remote devbox --http PORT` run as `askpane` is (its environment: which inbox).
    fn start_as(command: std::process::Command, root: &std::path::Path, sshd: &Sshd) -> HttpLink {
        HttpLink::start_on(command, root, sshd, free_port(), &[])
    }

    /// `askpane remote devbox --http PORT EXTRA…` with the host's port `port`.
    fn start_on(
        command: std::process::Command,
        root: &std::path::Path,
        sshd: &Sshd,
        port: u16,
        extra: &[&str],
    ) -> HttpLink {
        HttpLink::start_with_ssh(command, root, sshd, port, extra, &[])
    }

    /// [`HttpLink::start_on`] with `ssh_args` for ssh after the config.
    fn start_with_ssh(
        mut command: std::process::Command,
        root: &std::path::Path,
        sshd: &Sshd,
        port: u16,
        extra: &[&str],
        ssh_args: &[&str],
    ) -> HttpLink {
        let (stdout, stderr) = (root.join("http-link.stdout"), root.join("http-link.stderr"));
        command.args(["remote", &sshd.alias, "--http", &port.to_string()]).args(extra);
        command.stdout(fs::File::create(&stdout).expect("stdout"));
        let process = start_link(command, sshd, ssh_args, &stderr);
        let deadline = Instant::now() + WAIT;
        let printed = read_lossy(&stdout);
        let settings = printed
            .find('{')
            .and_then(|start| serde_json::from_str(&printed[start..]).ok())
            .unwrap_or_else(|| panic!("no settings printed: {printed}"));
        // The forward of the port holds once a connection through it is accepted.
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the port is not forwarded: {}",
                read_lossy(&stderr)
            );
            thread::sleep(Duration::from_millis(20));
        }
        HttpLink { process, stderr, port, settings }
    }

    /// What it printed on stdout.
    fn printed(&self, root: &std::path::Path) -> String {
        read_lossy(&root.join("http-link.stdout"))
    }

    /// Stops it (SIGTERM) and waits for its end.
    fn stop(mut self) {
        let pid = self.process.child.id();
        let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        let status = self.process.wait(WAIT);
        assert!(status.is_some_and(|status| status.success()), "{status:?}");
    }

    fn token(&self) -> String {
        let hook = &self.settings["hooks"]["PreToolUse"][0]["hooks"][0];
        hook["headers"]["X-Askpane-Token"].as_str().expect("a token").to_owned()
    }
}

/// POSTs `body` to the forwarded port with `token` (if any); the response's status line and body.
fn post(port: u16, token: Option<&str>, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("a read timeout");
    let header = token.map(|token| format!("X-Askpane-Token: {token}\r\n")).unwrap_or_default();
    write!(
        stream,
        "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{header}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    let status = response.lines().next().unwrap_or_default().to_owned();
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default();
    (status, body)
}

#[test]
fn claude_code_on_the_remote_asks_the_desk_through_an_http_hook() {
    let world = World::with_inbox("remote-http-claude");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = HttpLink::start(&world, &sshd);
    let api = colour_model();
    let [home, project, tmp] = remote_claude_dirs(&sshd);
    // What the person pastes on the remote: the printed settings, nothing else of askpane's.
    fs::write(home.join(".claude/settings.json"), link.settings.to_string()).expect("settings");
    // The answer comes over HTTP (no link socket on the remote): Claude Code's own host is
    // never asked.
    claude_on_the_remote_asks_and_reads_blue(&sshd, &world, &api, [&project, &home, &tmp], None);
    assert!(read_lossy(&link.stderr).contains("linked devbox"));
}

#[test]
fn an_http_hook_request_without_the_link_s_token_or_with_another_is_refused_and_reaches_no_card() {
    let world = World::with_inbox("remote-http-token");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = HttpLink::start(&world, &sshd);
    let input = crate::inbox::hook_input("toolu_http", "Which colour?");
    let token = link.token();
    assert_eq!(token.len(), 64, "{token}");
    let mut wrong = token.clone();
    wrong.replace_range(63.., if token.ends_with('0') { "1" } else { "0" });
    for given in [None, Some(wrong.as_str()), Some(""), Some(&token[..32])] {
        let (status, body) = post(link.port, given, &input);
        assert!(status.starts_with("HTTP/1.1 401"), "{given:?}: {status} {body}");
        assert_eq!(body, "", "{given:?}: nothing is told without the token");
    }
    // No card came of them.
    assert!(world.connect().list().is_empty(), "{}", read_lossy(&link.stderr));
    // With the token the same request reaches the inbox, with the link's host.
    let asking = thread::spawn({
        let (port, input) = (link.port, input.clone());
        move || post(port, Some(&token), &input)
    });
    let requests = listed(&world, 1);
    assert_eq!(requests[0]["host"], "devbox", "{requests:?}");
    answer_blue(&world);
    let (status, body) = asking.join().expect("the asking thread");
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {body}");
    assert_eq!(crate::inbox::hook_answers(&body), json!({"Which colour?": "Blue"}), "{body}");
}

/// Claude Code hangs up (its hook timeout, the session ended): the card is withdrawn, not left
/// to be answered for nobody.
#[test]
fn an_http_hook_whose_client_hangs_up_withdraws_its_card() {
    let world = World::with_inbox("remote-http-hangup");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = HttpLink::start(&world, &sshd);
    let input = crate::inbox::hook_input("toolu_hangup", "Which colour?");
    let mut stream = TcpStream::connect(("127.0.0.1", link.port)).expect("connect");
    write!(
        stream,
        "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Askpane-Token: {}\r\n\
         Content-Length: {}\r\n\r\n{input}",
        link.token(),
        input.len()
    )
    .expect("send");
    let requests = listed(&world, 1);
    assert_eq!(requests[0]["host"], "devbox", "{requests:?}");
    drop(stream);
    listed(&world, 0);
}

/// The link stopped (SIGTERM) while an HTTP hook waits: it ends within the wait, Claude Code's
/// connection is closed (it asks in its own dialog) and the card is withdrawn.
#[test]
fn a_link_stopped_while_an_http_hook_waits_ends_and_withdraws_its_card() {
    let world = World::with_inbox("remote-http-stop");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let mut link = HttpLink::start(&world, &sshd);
    let input = crate::inbox::hook_input("toolu_stop", "Which colour?");
    let asking = thread::spawn({
        let (port, token, input) = (link.port, link.token(), input.clone());
        move || {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
            stream.set_read_timeout(Some(WAIT)).expect("a read timeout");
            write!(
                stream,
                "POST /hook HTTP/1.1\r\nX-Askpane-Token: {token}\r\nContent-Length: {}\r\n\r\n{input}",
                input.len()
            )
            .expect("send");
            let mut response = Vec::new();
            stream.read_to_end(&mut response).map(|_| response)
        }
    });
    listed(&world, 1);
    let pid = link.process.child.id();
    let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    let status = link.process.wait(WAIT);
    assert!(
        status.is_some_and(|status| status.success()),
        "{status:?}: {}",
        read_lossy(&link.stderr)
    );
    let response = asking.join().expect("the asking thread");
    // Closed (with no answer, or a reply of askpane hook's own that answers nothing).
    let response = response.expect("closed within the wait, not timed out");
    let text = String::from_utf8_lossy(&response);
    assert!(!text.contains("Blue"), "{text}");
    listed(&world, 0);
}

/// A tool approval (PermissionRequest) through the HTTP hook: the card reaches the inbox with
/// the link's host, and the decision made there is the response's body, the same line
/// `askpane hook` prints (the 2.1.332 capture `pr-bash-allow`).
#[test]
fn an_approval_asked_through_an_http_hook_is_answered_as_askpane_hook_answers_it() {
    let inbox = crate::hook_approval::Inbox::start("remote-http-approval");
    let root = crate::support::scratch_dir("remote-http-approval-link");
    let Some(sshd) = Sshd::start(&root) else { return };
    let mut command = crate::support::askpane_unset(&[]);
    command.env("XDG_RUNTIME_DIR", &inbox.served.run).env("ASKPANE_STATE_DIR", root.join("state"));
    let link = HttpLink::start_as(command, &root, &sshd);
    let captures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code/2.1.332");
    let capture = |file: &str| {
        let path = format!("{captures}/pr-bash-allow/hooks/PermissionRequest.1.{file}.json");
        fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    };
    let asking = thread::spawn({
        let (port, token, input) = (link.port, link.token(), capture("stdin"));
        move || post(port, Some(&token), &input)
    });
    let card = inbox.card();
    assert_eq!(card.provenance.host.as_deref(), Some("devbox"), "{:?}", card.provenance);
    card.reply.send(askpane::protocol::stream::PermissionDecision::AllowOnce);
    let (status, body) = asking.join().expect("the asking thread");
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {body}");
    let body: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("JSON: {body}"));
    let recorded: Value = serde_json::from_str(&capture("stdout")).expect("the capture");
    assert_eq!(body, recorded);
}

/// Issue 27: the link's ssh is killed while the real Claude Code 2.1.332 on the host waits for
/// its HTTP hook's answer. The forward dies with ssh, so nothing can carry an answer to that
/// request any more: its card leaves the desk's inbox (it is answered by no one there), and
/// Claude Code, whose connection sshd closed, asks in its own way at once (here its host, as
/// `can_use_tool`), whose answer the model reads. Once the link is back, the next question
/// comes to the desk again.
#[test]
fn an_http_hook_whose_ssh_is_killed_mid_question_leaves_it_to_claude_code_and_withdraws_the_card() {
    let world = World::with_inbox("remote-http-drop");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let link = HttpLink::start(&world, &sshd);
    let api = colour_model();
    let [home, project, tmp] = remote_claude_dirs(&sshd);
    fs::write(home.join(".claude/settings.json"), link.settings.to_string()).expect("settings");
    let RemoteClaude { mut run, mut stdin, lines, stderr } =
        RemoteClaude::asking(&sshd, &world, &api, [&project, &home, &tmp], None);
    let ssh_pid = link_state(&world)["ssh_pid"].as_u64().expect("the link's ssh pid");
    let killed_at = Instant::now();
    let killed = std::process::Command::new("kill").args(["-KILL", &ssh_pid.to_string()]).status();
    assert!(killed.is_ok_and(|status| status.success()), "kill ssh {ssh_pid}");
    // Claude Code asks its host: the hook failed (its connection closed without a response).
    let mut said = Vec::new();
    let asked = loop {
        let Ok(line) = lines.recv_timeout(WAIT) else {
            let link_said = read_lossy(&link.stderr);
            let _ = run.child.kill();
            let _ = run.wait(WAIT);
            let stderr = crate::support::collect(stderr);
            panic!("Claude Code never asked its host: {said:?}\n{stderr}\nlink: {link_said}");
        };
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if message["request"]["subtype"] == "can_use_tool" {
            break message;
        }
        said.push(line);
    };
    eprintln!(
        "FIGURE: Claude Code asked its host {:.0} ms after the link's ssh was killed",
        killed_at.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(asked["request"]["tool_name"], "AskUserQuestion", "{asked}");
    // The desk's card is gone: no answer given there could reach Claude Code.
    listed(&world, 0);
    let input = &asked["request"]["input"];
    let reply = json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": asked["request_id"], "response": {"behavior": "allow",
        "updatedInput": {"questions": input["questions"], "answers": {"Which colour?": "Red"}},
        "toolUseID": asked["request"]["tool_use_id"]}}});
    writeln!(stdin, "{reply}").expect("the host's answer");
    the_model_reads(&api, "Red");
    // The link comes back (its forward of the port too).
    let deadline = Instant::now() + WAIT;
    while !read_lossy(&link.stderr).contains("the link to devbox is back") {
        assert!(Instant::now() < deadline, "not back: {}", read_lossy(&link.stderr));
        thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let status = run.wait(WAIT);
    let stderr = crate::support::collect(stderr);
    assert!(status.is_some_and(|status| status.success()), "{status:?}\n{stderr}");
    assert!(world.connect().list().is_empty());
}

/// The link's token is kept per host: `askpane remote devbox --http` started again uses the one
/// it made before (a private file in the state folder), so the settings pasted on the host hold;
/// `--new-token` makes another, which the old settings no longer pass (401).
#[test]
fn the_http_token_is_kept_per_host_across_restarts_and_new_token_rotates_it() {
    let world = World::with_inbox("remote-http-keep");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let first = HttpLink::start(&world, &sshd);
    let (port, token) = (first.port, first.token());
    first.stop();
    let file = world.root.join("state/askpane/remote/devbox.http-token");
    let mode = fs::metadata(&file).map(|meta| meta.permissions().mode() & 0o777);
    assert_eq!(mode.ok(), Some(0o600), "{}", file.display());
    // Started again: the same token, and a request with the old settings is asked and answered.
    let again = HttpLink::start_on(world.askpane(&[]), &world.root, &sshd, port, &[]);
    assert_eq!(again.token(), token, "{}", again.printed(&world.root));
    assert!(again.printed(&world.root).contains("kept"), "{}", again.printed(&world.root));
    let input = crate::inbox::hook_input("toolu_kept", "Which colour?");
    let asking = thread::spawn({
        let (token, input) = (token.clone(), input.clone());
        move || post(port, Some(&token), &input)
    });
    listed(&world, 1);
    answer_blue(&world);
    let (status, body) = asking.join().expect("the asking thread");
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {body}");
    assert_eq!(crate::inbox::hook_answers(&body), json!({"Which colour?": "Blue"}), "{body}");
    again.stop();
    // Rotated: another token, said to need pasting on the host; the old one is refused.
    let rotated =
        HttpLink::start_on(world.askpane(&[]), &world.root, &sshd, port, &["--new-token"]);
    let new = rotated.token();
    assert_ne!(new, token);
    assert_eq!(new.len(), 64, "{new}");
    let printed = rotated.printed(&world.root);
    assert!(printed.contains("new token") && printed.contains("update"), "{printed}");
    let (status, body) = post(port, Some(&token), &input);
    assert!(status.starts_with("HTTP/1.1 401"), "the old token: {status} {body}");
    assert!(world.connect().list().is_empty());
    assert_eq!(fs::read_to_string(&file).expect("the token file").trim(), new);
    rotated.stop();
}

/// A link cut silently (its ssh's ProxyCommand stopped) while an HTTP hook request waits: once
/// ssh on the desk gives up (its keep-alives), the next link ends the stale session on the host,
/// which closes the waiting request (Claude Code then asks in its own dialog) and frees the port,
/// so the link comes back with its forward and the next request is asked and answered.
#[test]
fn an_http_link_cut_silently_closes_the_waiting_request_and_comes_back_with_its_port() {
    let world = World::with_inbox("remote-http-silent");
    let Some(sshd) = Sshd::start(&world.root) else { return };
    let (proxy, pids) = crate::remote::freezable_proxy(&world.root, &sshd);
    let link = HttpLink::start_with_ssh(
        world.askpane(&[]),
        &world.root,
        &sshd,
        free_port(),
        &[],
        &[&["-o", proxy.as_str()][..], &crate::remote::SHORT_KEEP_ALIVES[..]].concat(),
    );
    let input = crate::inbox::hook_input("toolu_http_silent", "Which colour?");
    let asking = thread::spawn({
        let (port, token, input) = (link.port, link.token(), input.clone());
        move || {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
            stream.set_read_timeout(Some(Duration::from_secs(120))).expect("a read timeout");
            write!(
                stream,
                "POST /hook HTTP/1.1\r\nX-Askpane-Token: {token}\r\nContent-Length: {}\r\n\r\n{input}",
                input.len()
            )
            .expect("send");
            let mut response = Vec::new();
            stream.read_to_end(&mut response).map(|_| response)
        }
    });
    listed(&world, 1);
    let forward = read_lossy(&pids).lines().last().expect("the forward's proxy").trim().to_owned();
    let stopped = std::process::Command::new("kill").args(["-STOP", &forward]).status();
    assert!(stopped.is_ok_and(|status| status.success()), "kill -STOP {forward}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !read_lossy(&link.stderr).contains("the link to devbox is back") {
        if Instant::now() > deadline {
            let _ = std::process::Command::new("kill").args(["-KILL", &forward]).status();
            panic!("not back: {}", read_lossy(&link.stderr));
        }
        thread::sleep(Duration::from_millis(50));
    }
    // The waiting request was closed, unanswered (within the thread's own 120 s bound).
    let response = asking.join().expect("the asking thread");
    let _ = std::process::Command::new("kill").args(["-KILL", &forward]).status();
    let response = response.expect("closed, not timed out");
    assert!(!String::from_utf8_lossy(&response).contains("Blue"));
    listed(&world, 0);
    // The port is forwarded again: the next request is asked and answered.
    let asking = thread::spawn({
        let (port, token) = (link.port, link.token());
        move || post(port, Some(&token), &input)
    });
    listed(&world, 1);
    answer_blue(&world);
    let (status, body) = asking.join().expect("the asking thread");
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {body}");
    assert_eq!(crate::inbox::hook_answers(&body), json!({"Which colour?": "Blue"}), "{body}");
}
