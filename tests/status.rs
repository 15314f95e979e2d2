//! `askpane status` (issue 29 item 6) against a real inbox with real hooks asking: every format
//! with 0, 1 and 3 asks, no inbox at all, `--watch` lines as asks come and go, a watched inbox
//! that ends and another that starts, and hostile project names in waybar's JSON.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::inbox::{Client, World, hook_input};
use crate::support::{Process, WAIT, run_bounded, scratch_dir};

/// `askpane status <args>` in `world`, run to its end: its exit code and stdout.
fn status(world: &World, args: &[&str]) -> (Option<i32>, String) {
    let mut command = world.askpane(&[&["status"], args].concat());
    let finished = run_bounded(&mut command, None);
    (finished.status.code(), finished.stdout)
}

/// The single line `status` printed, as JSON.
fn status_json(world: &World, format: &str) -> Value {
    let (code, stdout) = status(world, &["--format", format]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

/// Waits until the inbox lists `count` open asks.
fn wait_for_listed(world: &World, count: usize) {
    let mut watcher = world.connect();
    let deadline = Instant::now() + WAIT;
    while watcher.list().len() != count {
        assert!(Instant::now() < deadline, "the inbox never listed {count} asks");
        thread::sleep(Duration::from_millis(50));
    }
}

/// A hook asking in `project` (the last part of its cwd), waiting in the window.
fn hook_in(world: &World, project: &str, id: &str, args: &[&str]) -> Client {
    let mut input: Value = serde_json::from_str(&hook_input(id, "Which colour?")).expect("JSON");
    input["cwd"] = json!(format!("/home/dev/{project}"));
    world.client(&[&["hook"], args].concat(), &input.to_string())
}

#[test]
fn every_format_counts_zero_one_and_three_asks_of_a_real_inbox() {
    let world = World::with_inbox("status-formats");
    assert_eq!(status(&world, &[]), (Some(0), "0\n".to_owned()));
    let json = status_json(&world, "json");
    assert_eq!(json["inbox"], "running", "{json}");
    assert_eq!(json["waiting"], 0, "{json}");
    let waybar = status_json(&world, "waybar");
    assert_eq!(
        (&waybar["text"], &waybar["class"], &waybar["alt"]),
        (&json!("0"), &json!("idle"), &json!("idle"))
    );

    let first = hook_in(&world, "shop", "toolu_1", &["--timeout", "600"]);
    wait_for_listed(&world, 1);
    let (code, text) = status(&world, &["--format", "text"]);
    assert_eq!(code, Some(0));
    assert!(text.starts_with("1 waiting · oldest "), "{text}");
    assert!(
        text.contains(" · deadline in 9m · hook 1\n")
            || text.contains(" · deadline in 10m · hook 1\n"),
        "{text}"
    );
    let json = status_json(&world, "json");
    assert_eq!(json["waiting"], 1, "{json}");
    assert_eq!(json["agents"], json!({"hook": 1}), "{json}");
    assert_eq!(json["asks"][0]["project"], "shop", "{json}");
    assert_eq!(json["asks"][0]["title"], "Colour", "{json}");
    assert!(
        json["nearest_deadline_secs"].as_u64().is_some_and(|left| (500..=600).contains(&left)),
        "{json}"
    );
    let waybar = status_json(&world, "waybar");
    assert_eq!((&waybar["text"], &waybar["class"]), (&json!("1"), &json!("waiting")));

    // Two more: a hook without a deadline and `askpane ask`.
    let second = hook_in(&world, "blog", "toolu_2", &[]);
    let plain = r#"{"questions":[{"question":"Go?","header":"Go","options":[{"label":"Yes","description":""},{"label":"No","description":""}]}]}"#;
    let third = world.client(&["ask", "--timeout", "60"], plain);
    wait_for_listed(&world, 3);
    let (_, text) = status(&world, &[]);
    assert!(text.starts_with("3 waiting · oldest "), "{text}");
    assert!(text.trim_end().ends_with(" · ask 1, hook 2"), "{text}");
    let json = status_json(&world, "json");
    assert_eq!(json["waiting"], 3, "{json}");
    assert_eq!(json["agents"], json!({"ask": 1, "hook": 2}), "{json}");
    assert!(json["nearest_deadline_secs"].as_u64().is_some_and(|left| left <= 60), "{json}");
    let asks = json["asks"].as_array().expect("asks");
    assert_eq!(asks[0]["project"], "shop", "the oldest first: {json}");
    let waybar = status_json(&world, "waybar");
    assert_eq!((&waybar["text"], &waybar["class"]), (&json!("3"), &json!("waiting")));
    let tooltip = waybar["tooltip"].as_str().expect("a tooltip");
    assert_eq!(tooltip.lines().count(), 4, "a headline and a line per ask: {tooltip}");
    for client in [first, second, third] {
        client.kill();
    }
}

#[test]
fn without_an_inbox_every_format_prints_its_zero_and_exits_0() {
    let root = scratch_dir("status-no-inbox");
    let run = |format: &str| {
        let mut command = crate::support::askpane_unset(&["status", "--format", format]);
        command.env("XDG_RUNTIME_DIR", &root);
        let finished = run_bounded(&mut command, None);
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        assert_eq!(finished.stderr, "", "no inbox is no error");
        finished.stdout
    };
    assert_eq!(run("text"), "0\n");
    assert_eq!(
        run("json"),
        "{\"inbox\":\"none\",\"waiting\":0,\"oldest_secs\":null,\"nearest_deadline_secs\":null,\"agents\":{},\"asks\":[]}\n"
    );
    let waybar: Value = serde_json::from_str(&run("waybar")).expect("JSON");
    assert_eq!(
        waybar,
        json!({"text": "0", "tooltip": "askpane: no inbox runs", "class": "idle", "alt": "idle"})
    );
    // Asking for the status started no inbox.
    assert!(!root.join("askpane/inbox.sock").exists());
}

/// A running `askpane status --watch`, its stdout lines as they come.
struct Watch {
    process: Process,
    lines: Receiver<String>,
}

impl Watch {
    fn start(world: &World, format: &str) -> Watch {
        let mut command = world.askpane(&["status", "--watch", "--format", format]);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut process = Process::new(command.spawn().expect("start status --watch"));
        let stdout = process.child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Watch { process, lines }
    }

    /// The next line, within WAIT.
    fn next(&self) -> String {
        self.lines.recv_timeout(WAIT).expect("a line from status --watch in time")
    }

    fn next_json(&self) -> Value {
        let line = self.next();
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"))
    }

    /// Nothing printed within `quiet`.
    fn assert_quiet(&self, quiet: Duration) {
        if let Ok(line) = self.lines.recv_timeout(quiet) {
            panic!("status --watch printed with nothing changed: {line}");
        }
    }

    /// Ends the watcher (by its pid): what it wrote on stderr.
    fn stop(mut self) -> String {
        self.process.terminate();
        let _ = self.process.wait(WAIT);
        let mut stderr = String::new();
        if let Some(mut pipe) = self.process.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
        }
        stderr
    }

    /// The CPU time the watcher has used, in clock ticks (user + system).
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.process.child.id()))
            .expect("the watcher's /proc stat");
        // After the command's name in parentheses: fields 14 and 15 are utime and stime.
        let after = stat.rsplit_once(')').expect("a stat line").1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
    }
}

#[test]
fn a_watch_prints_a_line_when_an_ask_comes_and_when_it_is_settled() {
    let world = World::with_inbox("status-watch");
    let watch = Watch::start(&world, "json");
    let first = watch.next_json();
    assert_eq!((&first["inbox"], &first["waiting"]), (&json!("running"), &json!(0)), "{first}");
    // A hook whose preset is sent when its 2 s run out: asked, then settled.
    let answers = world.answers("answers.json", &json!({"Colour": "Red"}));
    let answers = answers.to_str().expect("UTF-8").to_owned();
    let client = hook_in(&world, "shop", "toolu_w", &["--answers", &answers, "--timeout", "2"]);
    let asked = watch.next_json();
    assert_eq!(asked["waiting"], 1, "{asked}");
    assert_eq!(asked["asks"][0]["project"], "shop", "{asked}");
    let settled = watch.next_json();
    assert_eq!(settled["waiting"], 0, "{settled}");
    let (code, _, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // A client killed mid-question: withdrawn, and the watch says so.
    let killed = hook_in(&world, "blog", "toolu_k", &[]);
    assert_eq!(watch.next_json()["waiting"], 1);
    killed.kill();
    assert_eq!(watch.next_json()["waiting"], 0);
    watch.assert_quiet(Duration::from_secs(1));
}

#[test]
fn a_watch_whose_inbox_ends_goes_back_to_zero_waits_quietly_and_finds_the_next_inbox() {
    let mut world = World::with_inbox("status-watch-ends");
    let watch = Watch::start(&world, "json");
    assert_eq!(watch.next_json()["inbox"], "running");
    let client = hook_in(&world, "shop", "toolu_e", &[]);
    assert_eq!(watch.next_json()["waiting"], 1);
    client.kill();
    assert_eq!(watch.next_json()["waiting"], 0);
    let mut quit = world.askpane(&["inbox", "--quit"]);
    assert!(run_bounded(&mut quit, None).status.success());
    if let Some(inbox) = world.inbox.as_mut() {
        assert!(inbox.wait(WAIT).is_some(), "the inbox ended");
    }
    let zero = watch.next_json();
    assert_eq!((&zero["inbox"], &zero["waiting"]), (&json!("none"), &json!(0)), "{zero}");
    // No inbox: the watcher retries with a growing pause, printing nothing and using next to
    // no CPU (a busy loop would use most of the 3 s).
    let before = watch.cpu_ticks();
    watch.assert_quiet(Duration::from_secs(3));
    let used = watch.cpu_ticks() - before;
    assert!(used <= 10, "the watcher used {used} ticks of CPU in 3 s without an inbox");
    // The next inbox is found within the longest pause (5 s).
    let started = Instant::now();
    world.start_inbox_command(world.askpane(&["inbox"]));
    let back = watch.next_json();
    assert_eq!((&back["inbox"], &back["waiting"]), (&json!("running"), &json!(0)), "{back}");
    assert!(started.elapsed() < Duration::from_secs(8), "found after {:?}", started.elapsed());
    let stderr = watch.stop();
    assert!(stderr.contains("the inbox ended"), "the watcher said so: {stderr:?}");
}

#[test]
fn hostile_project_names_are_escaped_in_waybar_s_json() {
    let world = World::with_inbox("status-hostile");
    // No `/` in it: the project is the last part of the hook's cwd.
    let hostile = "<b>bold & \"quoted\" 'it's'\nsecond line";
    let client = hook_in(&world, hostile, "toolu_h", &[]);
    wait_for_listed(&world, 1);
    let (code, stdout) = status(&world, &["--format", "waybar"]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout.lines().count(), 1, "one line for waybar: {stdout:?}");
    let waybar: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    let tooltip = waybar["tooltip"].as_str().expect("a tooltip");
    assert!(!tooltip.contains("<b>") && !tooltip.contains("\"quoted"), "{tooltip}");
    assert!(
        tooltip.contains("&lt;b&gt;bold &amp; &quot;quoted&quot; &#39;it&#39;s&#39; second line"),
        "{tooltip}"
    );
    assert_eq!(tooltip.lines().count(), 2, "the newline in the name made a space: {tooltip}");
    // The text format keeps to one line too, and JSON carries the name exactly.
    let (_, text) = status(&world, &[]);
    assert_eq!(text.lines().count(), 1, "{text:?}");
    let json = status_json(&world, "json");
    assert_eq!(json["asks"][0]["project"], hostile, "{json}");
    client.kill();
}

#[test]
fn a_tool_call_waiting_for_approval_is_counted_and_leaves_when_its_hook_goes() {
    let world = World::with_inbox("status-approval");
    let watch = Watch::start(&world, "json");
    assert_eq!(watch.next_json()["waiting"], 0);
    // Claude Code's PermissionRequest hook for Bash: a card in the inbox, for 10 minutes.
    let input = crate::support::fixture("hook.permissionrequest.bash.stdin.2.1.332.json");
    let hook = world.client(&["hook", "--timeout", "600"], &input);
    let asked = watch.next_json();
    assert_eq!(asked["waiting"], 1, "{asked}");
    assert_eq!(asked["asks"][0]["kind"], "approval", "{asked}");
    assert_eq!(asked["asks"][0]["title"], "Bash", "{asked}");
    assert_eq!(asked["asks"][0]["project"], "project", "{asked}");
    assert!(asked["nearest_deadline_secs"].as_u64().is_some_and(|left| left > 500), "{asked}");
    let (_, text) = status(&world, &[]);
    assert!(text.starts_with("1 waiting · "), "{text}");
    // Claude Code gave up on the hook: the card leaves, and the count with it.
    hook.kill();
    let settled = watch.next_json();
    assert_eq!(settled["waiting"], 0, "{settled}");
    watch.assert_quiet(Duration::from_millis(500));
}
