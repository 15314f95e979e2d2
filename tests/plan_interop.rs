//! Plan review end to end with the real Claude Code 2.1.332 (issue 26): the CLI runs in plan mode
//! (`--permission-mode plan`, passed through as `askpane claude -- --permission-mode plan` passes
//! it) as a `ClaudeSession` hosted by the window (the app in a kittest harness, driven by keys
//! and accessible labels as a person would), against a fake Messages API playing the 2.1.332
//! recorder's plan scripts (tests/fixtures/claude-code/2.1.332/recorder/run.py: load ExitPlanMode
//! with ToolSearch, write the plan file, call ExitPlanMode, then edit). Each test checks what the
//! model then reads and whether the session left plan mode, as the captures `plan-host-allow`,
//! `plan-host-allow-acceptedits` and `plan-host-deny-keep-planning` show it:
//!
//! a. Approve: the model reads "User has approved your plan"; the next Edit asks (a card, with
//!    the `setMode acceptEdits` suggestion 2.1.332 offers outside plan mode);
//! b. Approve, then accept edits: the next two Edits run unasked;
//! c. Keep planning with two comments and a note: the model reads the review verbatim (both
//!    quotes, both comments, the note) as an error, and the session stays in plan mode (the next
//!    Edit asks without suggestions, as plan mode's "mode" reason does);
//! d. The turn stopped while the plan is open: the CLI takes it back, nothing is approved;
//! e. the binary, `askpane claude --ui web -- --permission-mode plan`, approved from the page's
//!    socket: the real CLI is in plan mode, the model reads the approval, the next Edit asks.
//!
//! The hook path: `askpane hook` given the captured `PermissionRequest` for ExitPlanMode, in a
//! running inbox whose window (the app) shows the plan page: approved, it prints the allow with
//! `updatedInput` equal to the `tool_input` it read; keep planning prints the deny with the review;
//! two plans at once each get their own decision; a `--timeout` that runs out prints nothing.
//!
//! The CLI gets its own HOME, TMPDIR and project through a wrapper script (the session starts
//! its program with the test's environment): the real home is never seen. Every wait is bounded;
//! the CLI is stopped by its PID when a test ends.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use askpane::app::{App, AppOptions, WindowState};
use askpane::protocol::permission::ApprovalOrigin;
use askpane::transport::agents::claude::{Autopilot, ClaudeOptions, ClaudeOwn, ClaudeSession};
use askpane::transport::{self, IoThreads, SessionCommand};
use egui::Key;
use egui::accesskit::Role;
use egui_kittest::Harness;
use serde_json::{Value, json};

use crate::fake_api::{FakeApi, ToolCall};
use crate::interop::{Scratch, tool_result_text};
use crate::support::agents::ServedInbox;
use crate::support::{Finished, WAIT};
use crate::ui::{CTRL, FONTS, Window};

/// The version whose plan mode was recorded.
const VERSION: &str = "2.1.332";

/// The plan the fake model writes to its plan file (the one of tests/plan.rs, whose blocks the
/// keys below walk: heading, paragraph, heading, two list items).
const PLAN: &str = "# Greeting\n\nChange the greeting, then test.\n\n## Steps\n\n1. Change \
    greeting.txt to say hello world.\n2. Run the tests.\n";

const PROMPT: &str = "Please do the task.";

/// What 2.1.332's model reads first when its plan is approved (`plan-host-allow`).
const APPROVED: &str = "User has approved your plan. You can now start coding. Start with \
    updating your todo list if applicable\n\nYour plan has been saved to: ";

/// `CACHE/bin/claude-2.1.332`, as `scripts/claude-cli` installs it.
fn claude_binary() -> PathBuf {
    crate::support::agents::claude_cli(VERSION)
}

/// The recorder's script, its ids as the recorder numbers them: `ToolSearch
/// select:ExitPlanMode`, the plan file written, ExitPlanMode, then Edits of `edits` (file, old,
/// new) in the project. (ToolSearch, the first call, is offered in every main-loop turn.)
fn planned(project: &Path, edits: &[(&str, &str, &str)]) -> Vec<ToolCall> {
    let id = |n: usize| format!("toolu_fake_{n:06}");
    let mut calls = vec![
        ToolCall::new(
            "ToolSearch",
            json!({"query": "select:ExitPlanMode", "max_results": 5}),
            &id(1),
        ),
        ToolCall::new("Write", json!({"file_path": "$planfile", "content": PLAN}), &id(2)),
        ToolCall::new("ExitPlanMode", json!({"plan": PLAN}), &id(3)),
    ];
    for (index, (name, old, new)) in edits.iter().enumerate() {
        let input = json!({"file_path": project.join(name), "old_string": old, "new_string": new});
        calls.push(ToolCall::new("Edit", input, &id(4 + index)));
    }
    calls
}

/// The id the fake gives the script's ExitPlanMode call (its third).
const PLAN_TOOL_USE: &str = "toolu_fake_000003";

fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Claude Code 2.1.332 in plan mode, hosted by the window, against a scripted fake model.
struct PlanRun {
    window: Window,
    session: Option<ClaudeSession>,
    threads: Option<IoThreads>,
    api: FakeApi,
    scratch: Scratch,
}

impl PlanRun {
    /// The recorder's plan script, then Edits of `edits` (file, old, new).
    fn start(name: &str, edits: &[(&str, &str, &str)]) -> PlanRun {
        let binary = claude_binary();
        let scratch = Scratch::new(&format!("plan-{name}-{VERSION}"));
        for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
            fs::create_dir_all(&dir).expect("create a scratch directory");
        }
        let project = scratch.project();
        fs::write(project.join("greeting.txt"), "hello\n").expect("write greeting.txt");
        fs::write(project.join("notes.txt"), "one\n").expect("write notes.txt");
        let api = FakeApi::scripted(planned(&project, edits));
        // The environment `Scratch::isolate` gives a CLI, written into a wrapper that execs it:
        // the session starts its program with this test process's own environment.
        let mut isolated = Command::new(&binary);
        scratch.isolate(&mut isolated, &api.base_url());
        let variables: Vec<String> = isolated
            .get_envs()
            .filter_map(|(name, value)| Some((name, value?)))
            .map(|(name, value)| {
                quoted(&format!("{}={}", name.to_string_lossy(), value.to_string_lossy()))
            })
            .collect();
        let wrapper = scratch.root.join("claude");
        fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n# Claude Code {VERSION} in the scratch project, environment cleared.\n\
                 cd {} || exit 97\nexec env -i {} {} \"$@\"\n",
                quoted(&project.to_string_lossy()),
                variables.join(" "),
                quoted(&binary.to_string_lossy())
            ),
        )
        .expect("write the wrapper");
        let mut permissions = fs::metadata(&wrapper).expect("stat the wrapper").permissions();
        permissions.set_mode(0o755);
        fs::set_permissions(&wrapper, permissions).expect("make the wrapper executable");

        let options = ClaudeOptions {
            program: wrapper,
            extra_args: vec!["--permission-mode".into(), "plan".into()],
            prompt: Some(PROMPT.to_owned()),
            debug: false,
            autopilot: Autopilot::default(),
            own: ClaudeOwn { allow_tools: Vec::new(), print_stream: false },
        };
        let (sender, inbox) = transport::memory();
        let mut threads = IoThreads::default();
        let session = ClaudeSession::start(&options, sender.clone(), &mut threads)
            .expect("start Claude Code");
        let commands = session.commands();
        let harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 800.0))
            .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
            .build_eframe(move |cc| {
                App::new(&cc.egui_ctx, inbox, AppOptions::default())
                    .with_session(commands, Some(PROMPT))
            });
        PlanRun {
            window: Window { harness, sender },
            session: Some(session),
            threads: Some(threads),
            api,
            scratch,
        }
    }

    fn state(&self) -> &WindowState {
        self.window.app().state()
    }

    /// Steps the window until `done`, for at most twice WAIT (the CLI starts in a few seconds).
    fn step_until(&mut self, what: &str, done: impl Fn(&PlanRun) -> bool) {
        let deadline = Instant::now() + WAIT * 2;
        loop {
            self.window.harness.step();
            if done(self) {
                self.window.harness.run();
                return;
            }
            assert!(Instant::now() < deadline, "waited for {what}\n{}", self.report());
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the plan page, then past the input guard (a page takes no key as it appears).
    fn wait_for_plan(&mut self) {
        self.step_until("the plan page", |run| run.state().plan().is_some());
        let (card, review) = self.state().plan().expect("a plan");
        assert_eq!(card.request.tool_name, "ExitPlanMode");
        assert_eq!(review.plan, PLAN, "the page shows the plan file's text");
        self.window.wait_out_key_grace();
    }

    /// Waits for a tool call card (not a plan) and returns its request's `tool_name`,
    /// suggestions (raw) and reason.
    fn wait_for_card(&mut self) -> (String, Vec<Value>, Option<String>) {
        self.step_until("a tool call card", |run| {
            run.state().permissions().cards().any(|card| card.plan.is_none())
        });
        let card =
            self.state().permissions().cards().find(|card| card.plan.is_none()).expect("a card");
        let suggestions = card.request.suggestions.iter().map(|s| s.raw().clone()).collect();
        (card.request.tool_name.clone(), suggestions, card.request.reason.clone())
    }

    fn wait_for_turn_end(&mut self) {
        self.step_until("the turn's end", |run| {
            run.state().session().is_some_and(|session| !session.busy)
                && run.api.tool_results().len() >= 3
        });
    }

    /// The text and `is_error` of the tool_result the model read for `tool_use_id`.
    fn result_for(&self, tool_use_id: &str) -> (String, bool) {
        let results = self.api.tool_results();
        let result = results
            .iter()
            .find(|result| result["tool_use_id"] == tool_use_id)
            .unwrap_or_else(|| panic!("no tool_result for {tool_use_id}\n{}", self.report()));
        (tool_result_text(result), result["is_error"] == true)
    }

    /// Every message text the model was sent, joined (system reminders included).
    fn everything_the_model_read(&self) -> String {
        self.api.requests().iter().map(|request| request["body"]["messages"].to_string()).collect()
    }

    fn report(&self) -> String {
        let results: Vec<String> =
            self.api.tool_results().iter().map(|result| format!("  {result}")).collect();
        format!(
            "--- Claude Code {VERSION} in plan mode (scratch {}) ---\ntool_results:\n{}\n\
             API requests:\n{}notices: {:?}\ncards: {:?}",
            self.scratch.root.display(),
            results.join("\n"),
            self.api.request_summary(),
            self.state().notices(),
            self.state()
                .permissions()
                .cards()
                .map(|card| card.request.tool_name.clone())
                .collect::<Vec<_>>(),
        )
    }

    /// Ends the session (stdin closed, a grace, then its PID killed) and joins its threads.
    fn finish(&mut self) -> ExitStatus {
        let session = self.session.take().expect("finished once");
        let status = session.shut_down(Duration::from_secs(5)).expect("shut the session down");
        let threads = self.threads.take().expect("finished once");
        let (sender, joined) = crossbeam_channel::bounded(1);
        thread::spawn(move || {
            let _ = sender.send(threads.join().map_err(|error| error.to_string()));
        });
        let joined = joined.recv_timeout(WAIT).expect("the session's threads end");
        assert_eq!(joined, Ok(()), "a session thread failed\n{}", self.report());
        status
    }
}

impl Drop for PlanRun {
    fn drop(&mut self) {
        // A failed test still stops the CLI (by its PID, after a short grace).
        if let Some(session) = self.session.take() {
            let _ = session.shut_down(Duration::from_millis(300));
        }
    }
}

/// The Edit the recorder's plan scenarios make after the plan.
const GREETING: (&str, &str, &str) = ("greeting.txt", "hello", "hello world");

/// The setMode suggestion 2.1.332 offers with an Edit outside plan mode.
fn accept_edits() -> Value {
    json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
}

#[test]
fn an_approved_plan_leaves_plan_mode_and_the_next_edit_asks() {
    let mut run = PlanRun::start("approve", &[GREETING]);
    run.wait_for_plan();
    run.window.press(Key::A, Some("a"));
    let (tool, suggestions, _) = run.wait_for_card();
    let (read, is_error) = run.result_for(PLAN_TOOL_USE);
    assert!(read.starts_with(APPROVED), "{read}\n{}", run.report());
    assert!(read.ends_with(&format!("## Approved Plan:\n{PLAN}")), "{read}");
    assert!(!is_error);
    assert!(
        run.everything_the_model_read().contains("You have exited plan mode."),
        "{}",
        run.report()
    );
    // Out of plan mode the Edit asks, with the way to accept edits from now on.
    assert_eq!((tool.as_str(), suggestions), ("Edit", vec![accept_edits()]), "{}", run.report());
    run.window.wait_out_key_grace();
    run.window.click_button("Allow once");
    run.wait_for_turn_end();
    let greeting = fs::read_to_string(run.scratch.project().join("greeting.txt"));
    assert_eq!(greeting.ok().as_deref(), Some("hello world\n"), "{}", run.report());
    let status = run.finish();
    assert!(status.success(), "{status}\n{}", run.report());
}

#[test]
fn approved_then_accept_edits_the_next_edits_run_unasked() {
    let mut run = PlanRun::start("accept-edits", &[GREETING, ("notes.txt", "one", "two")]);
    run.wait_for_plan();
    run.window.click(Role::RadioButton, "then accept edits");
    run.window.click_button("Approve");
    run.step_until("both edits' results", |run| run.api.tool_results().len() >= 5);
    let (read, _) = run.result_for(PLAN_TOOL_USE);
    assert!(read.starts_with(APPROVED), "{read}");
    for id in ["toolu_fake_000004", "toolu_fake_000005"] {
        let (read, is_error) = run.result_for(id);
        assert!(read.contains("has been updated successfully"), "{read}\n{}", run.report());
        assert!(!is_error, "{read}");
    }
    assert!(run.state().permissions().is_empty(), "nothing asked\n{}", run.report());
    let project = run.scratch.project();
    assert_eq!(
        fs::read_to_string(project.join("greeting.txt")).ok().as_deref(),
        Some("hello world\n")
    );
    assert_eq!(fs::read_to_string(project.join("notes.txt")).ok().as_deref(), Some("two\n"));
    run.wait_for_turn_end();
    let status = run.finish();
    assert!(status.success(), "{status}\n{}", run.report());
}

#[test]
fn keep_planning_sends_the_review_verbatim_and_the_session_stays_in_plan_mode() {
    let mut run = PlanRun::start("keep-planning", &[GREETING]);
    run.wait_for_plan();
    // The keys of tests/plan.rs: a comment on the paragraph, one on "2. Run the tests.", a note.
    let window = &mut run.window;
    window.press(Key::J, Some("j"));
    window.press(Key::C, Some("c"));
    window.type_text("Say why.");
    window.press(Key::Escape, None);
    for _ in 0..3 {
        window.press(Key::J, Some("j"));
    }
    window.press(Key::C, Some("c"));
    window.type_text("Only the unit tests.");
    window.press(Key::Escape, None);
    window.press(Key::N, Some("n"));
    window.type_text("Also update the README.");
    window.press_with(CTRL, Key::Enter);
    let (tool, suggestions, _) = run.wait_for_card();
    let (read, is_error) = run.result_for(PLAN_TOOL_USE);
    assert_eq!(
        read,
        "The user did not approve this plan and wants you to keep planning. Their review:\n\n\
         > Change the greeting, then test.\n\nSay why.\n\n\
         > 2. Run the tests.\n\nOnly the unit tests.\n\n\
         Also update the README.",
        "{}",
        run.report()
    );
    assert!(is_error, "a deny is read as an error");
    assert!(!run.everything_the_model_read().contains("You have exited plan mode."));
    // Still in plan mode: the Edit asks, and 2.1.332 offers no way out of it from the card.
    assert_eq!((tool.as_str(), suggestions), ("Edit", Vec::<Value>::new()), "{}", run.report());
    assert_eq!(
        fs::read_to_string(run.scratch.project().join("greeting.txt")).ok().as_deref(),
        Some("hello\n")
    );
    run.finish();
}

/// The turn stopped while the plan page is open (what the session's Stop sends; the plan page
/// itself offers no Stop, it takes the whole window): 2.1.332 takes its ExitPlanMode back (a
/// cancel), the page goes at once, and nothing is approved or denied in the person's name: the
/// model read no approval and the session did not leave plan mode.
#[test]
fn a_turn_stopped_while_the_plan_is_open_takes_the_page_away_and_approves_nothing() {
    let mut run = PlanRun::start("stop", &[]);
    run.wait_for_plan();
    let commands = run.session.as_ref().expect("running").commands();
    commands.send(SessionCommand::Interrupt).expect("the session takes commands");
    run.step_until("the plan page to go", |run| run.state().plan().is_none());
    run.step_until("the turn's end", |run| {
        run.state().session().is_some_and(|session| !session.busy)
    });
    assert!(run.state().permissions().is_empty(), "{}", run.report());
    let read = run.everything_the_model_read();
    assert!(!read.contains("User has approved your plan"), "{}", run.report());
    assert!(!read.contains("You have exited plan mode."), "{}", run.report());
    run.finish();
}

// ---------------------------------------------------------------------------------------------
// The binary: `askpane claude --ui web -- --permission-mode plan`, answered from the page's socket

/// A page's WebSocket to `askpane … --ui web` at `url`, reads bounded by WAIT.
fn page_socket(url: &str) -> tungstenite::WebSocket<std::net::TcpStream> {
    let socket = crate::support::agents::page_socket(url);
    socket.get_ref().set_read_timeout(Some(WAIT)).expect("a read timeout");
    socket
}

/// The next message of `kind` the page is sent (others skipped), within WAIT each.
fn next_of(socket: &mut tungstenite::WebSocket<std::net::TcpStream>, kind: &str) -> Value {
    let deadline = Instant::now() + WAIT * 2;
    loop {
        assert!(Instant::now() < deadline, "no {kind} reached the page");
        match socket.read().unwrap_or_else(|error| panic!("waiting for {kind}: {error}")) {
            tungstenite::Message::Text(text) => {
                let message = parsed(text.as_str());
                if message["type"] == kind {
                    return message;
                }
            }
            _ => continue,
        }
    }
}

/// The whole path a person uses: the binary passes `--permission-mode plan` on to the real
/// 2.1.332, the plan reaches the browser page as a plan, the page's approval (what its Approve
/// sends) reaches Claude Code, whose model reads the approval, and the next Edit comes to the
/// page asking, with the accept-edits suggestion of a session out of plan mode.
#[test]
fn askpane_claude_in_the_browser_hosts_plan_mode_and_the_pages_approval_reaches_the_model() {
    if !crate::support::web_bundle_built() {
        eprintln!("skipped: askpane was built without its web app (run scripts/build-web)");
        return;
    }
    let binary = claude_binary();
    let scratch = Scratch::new(&format!("plan-web-{VERSION}"));
    for dir in [scratch.home(), scratch.project(), scratch.tmp()] {
        fs::create_dir_all(&dir).expect("create a scratch directory");
    }
    let project = scratch.project();
    fs::write(project.join("greeting.txt"), "hello\n").expect("write greeting.txt");
    let api = FakeApi::scripted(planned(&project, &[GREETING]));
    let mut command = crate::support::askpane_command();
    command.arg("claude").arg("--claude-bin").arg(&binary);
    command.args(["-p", PROMPT, "--ui", "web", "--", "--permission-mode", "plan"]);
    scratch
        .isolate(&mut command, &api.base_url())
        .env("ASKPANE_NO_INBOX", "1")
        .env("ASKPANE_STATE_DIR", crate::support::private_state_dir())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let child = command.spawn().expect("start askpane claude");
    let marker = format!("{}={}", crate::interop::RUN_MARKER, scratch.root.display());
    let mut process = crate::interop::CliProcess::new(child, Some(marker));
    let stderr = process.child.stderr.take().expect("piped stderr");
    let url = crate::support::agents::browser_link(stderr);
    let mut page = page_socket(&url);
    let plan = next_of(&mut page, "permission_request");
    assert_eq!(plan["request"]["tool_name"], "ExitPlanMode", "{plan}");
    assert_eq!(plan["request"]["input"]["plan"], PLAN, "{plan}");
    let decision = json!({"type": "permission_decision",
        "request_id": plan["request"]["request_id"], "decision": "allow"});
    page.send(tungstenite::Message::text(decision.to_string())).expect("send the approval");
    let edit = next_of(&mut page, "permission_request");
    let context = format!("{edit}\nAPI requests:\n{}", api.request_summary());
    assert_eq!(edit["request"]["tool_name"], "Edit", "{context}");
    assert_eq!(edit["request"]["suggestions"], json!([accept_edits()]), "{context}");
    let results = api.tool_results();
    let approved = results.iter().find(|result| result["tool_use_id"] == PLAN_TOOL_USE);
    let read = approved.map(tool_result_text).unwrap_or_default();
    assert!(read.starts_with(APPROVED), "{read}\n{context}");
    // Ended as Ctrl+C in its terminal would: askpane stops Claude Code itself and exits 4.
    crate::hosted::send_signal(process.child.id(), "TERM");
    let status = process.wait(WAIT);
    assert_eq!(status.and_then(|status| status.code()), Some(4), "{context}");
    drop(page);
    drop(process); // whatever is left (nothing, unless the test failed), by PID and run marker
}

// ---------------------------------------------------------------------------------------------
// The hook path: `askpane hook` given 2.1.332's PermissionRequest for ExitPlanMode

fn capture(case: &str, file: &str) -> String {
    crate::support::agents::permission_capture(case, file)
}

fn parsed(text: &str) -> Value {
    crate::support::agents::json_of(text)
}

/// A running inbox (its server in this process, on a runtime directory of its own) whose window
/// is the app in a kittest harness: the plan page a person answers.
struct HookInbox {
    served: ServedInbox,
    window: Window,
}

impl HookInbox {
    fn start(name: &str) -> HookInbox {
        let (sender, inbox) = transport::memory();
        let served = ServedInbox::serve(crate::support::scratch_dir(name), sender.clone());
        let harness = Harness::builder()
            .with_size(egui::vec2(1280.0, 800.0))
            .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
            .build_eframe(move |cc| App::new(&cc.egui_ctx, inbox, AppOptions::default()));
        let mut window = Window { harness, sender };
        window.harness.step();
        window.wait_out_key_grace();
        HookInbox { served, window }
    }

    /// `askpane hook` against this inbox, fed `stdin`, running in the background.
    fn hook(&self, stdin: String) -> thread::JoinHandle<Finished> {
        self.served.run("hook", &[], stdin)
    }

    /// Steps the window until the plan page shows `plan`, then past the input guard.
    fn wait_for_plan(&mut self, plan: &str) {
        let deadline = Instant::now() + WAIT;
        while self.window.app().state().plan().is_none() {
            assert!(Instant::now() < deadline, "the plan never reached the window");
            self.window.harness.step();
            thread::sleep(Duration::from_millis(20));
        }
        let (card, review) = self.window.app().state().plan().expect("a plan");
        assert_eq!(card.request.origin, ApprovalOrigin::Hook);
        assert_eq!(review.plan, plan);
        self.window.wait_out_key_grace();
    }
}

fn finished(hook: thread::JoinHandle<Finished>) -> Finished {
    let done = hook.join().expect("the hook's runner");
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert_eq!(done.stdout.lines().count(), 1, "one line: {:?}", done.stdout);
    done
}

/// Approved on the plan page, the hook prints the allow with `updatedInput` exactly the
/// `tool_input` it read (2.1.332 ignores a bare allow for ExitPlanMode and the session hangs:
/// `plan-hook-allow`); approved with accept edits, it prints what `plan-hook-allow-acceptedits`
/// printed, byte for byte in JSON.
#[test]
fn a_plan_approved_in_the_inbox_is_the_hook_allow_echoing_the_plan() {
    let mut inbox = HookInbox::start("plan-hook-approve");
    let stdin = capture("plan-hook-allow", "stdin");
    let tool_input = parsed(&stdin)["tool_input"].clone();
    let plan = tool_input["plan"].as_str().expect("a plan").to_owned();
    let hook = inbox.hook(stdin);
    inbox.wait_for_plan(&plan);
    inbox.window.press(Key::A, Some("a"));
    let done = finished(hook);
    assert_eq!(
        parsed(&done.stdout),
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": tool_input}}}),
        "{}",
        done.stderr
    );

    let case = "plan-hook-allow-acceptedits";
    let hook = inbox.hook(capture(case, "stdin"));
    inbox.wait_for_plan(&plan);
    inbox.window.click(Role::RadioButton, "then accept edits");
    inbox.window.click_button("Approve");
    let done = finished(hook);
    assert_eq!(parsed(&done.stdout), parsed(&capture(case, "stdout")), "{}", done.stderr);
}

/// Keep planning on the page: the hook prints the deny with the review composed on the page,
/// which 2.1.332 reads verbatim and stays in plan mode (`plan-hook-deny-keep-planning`).
#[test]
fn keep_planning_in_the_inbox_is_the_hook_deny_with_the_review() {
    let mut inbox = HookInbox::start("plan-hook-keep-planning");
    let stdin = capture("plan-hook-deny-keep-planning", "stdin");
    let plan = parsed(&stdin)["tool_input"]["plan"].as_str().expect("a plan").to_owned();
    let hook = inbox.hook(stdin);
    inbox.wait_for_plan(&plan);
    let window = &mut inbox.window;
    // From the heading down to "1. Change greeting.txt …", a comment, then a note.
    window.press(Key::J, Some("j"));
    window.press(Key::C, Some("c"));
    window.type_text("Which file exactly?");
    window.press(Key::Escape, None);
    window.press(Key::N, Some("n"));
    window.type_text("Also update the README.");
    window.press_with(CTRL, Key::Enter);
    let done = finished(hook);
    assert_eq!(
        parsed(&done.stdout),
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message":
                "The user did not approve this plan and wants you to keep planning. Their \
                 review:\n\n> 1. Change greeting.txt to say hello world.\n\nWhich file \
                 exactly?\n\nAlso update the README."}}}),
        "{}",
        done.stderr
    );
}

/// Two hooks' plans at once in one inbox: each decision reaches its own hook, the approval
/// echoing that hook's own plan file, never the other's; a hook whose `--timeout` runs out
/// prints nothing (Claude Code's own dialog decides), never an allow.
#[test]
fn two_plans_at_once_each_hook_gets_its_own_decision_and_a_timeout_allows_nothing() {
    let mut inbox = HookInbox::start("plan-hook-two");
    let first = capture("plan-hook-allow", "stdin");
    let second = capture("plan-hook-deny-keep-planning", "stdin");
    let inputs = [parsed(&first)["tool_input"].clone(), parsed(&second)["tool_input"].clone()];
    assert_ne!(inputs[0]["planFilePath"], inputs[1]["planFilePath"], "two plan files");
    let plan = inputs[0]["plan"].as_str().expect("a plan").to_owned();
    let hooks = [inbox.hook(first), inbox.hook(second)];
    inbox.wait_for_plan(&plan);
    // Both waiting: approve the one on the page, then keep planning on the next.
    let deadline = Instant::now() + WAIT;
    while inbox.window.app().state().permissions().len() < 2 {
        assert!(Instant::now() < deadline, "the second plan never reached the window");
        inbox.window.harness.step();
        thread::sleep(Duration::from_millis(20));
    }
    let shown = |inbox: &HookInbox| {
        let (card, _) = inbox.window.app().state().plan().expect("a plan on the page");
        card.request.input["planFilePath"].clone()
    };
    let approved = shown(&inbox);
    inbox.window.press(Key::A, Some("a"));
    inbox.wait_for_plan(&plan);
    let sent_back = shown(&inbox);
    assert_ne!(approved, sent_back);
    inbox.window.press_with(CTRL, Key::Enter);
    for (hook, input) in hooks.into_iter().zip(inputs) {
        let done = finished(hook);
        let decision = parsed(&done.stdout)["hookSpecificOutput"]["decision"].clone();
        if input["planFilePath"] == approved {
            assert_eq!(decision, json!({"behavior": "allow", "updatedInput": input}));
        } else {
            assert_eq!(decision["behavior"], "deny", "{decision}");
            assert_eq!(decision["message"], askpane::book::plan::KEEP_PLANNING_DEFAULT);
        }
    }

    let waiting =
        inbox.served.run("hook", &["--timeout", "1"], capture("plan-hook-allow", "stdin"));
    let deadline = Instant::now() + WAIT;
    while !waiting.is_finished() {
        assert!(Instant::now() < deadline, "the hook outlived its --timeout");
        inbox.window.harness.step();
        thread::sleep(Duration::from_millis(20));
    }
    let done = waiting.join().expect("the hook's runner");
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    inbox.window.harness.run();
    assert!(inbox.window.app().state().plan().is_none(), "the timed-out plan left the page");
}

// ---------------------------------------------------------------------------------------------
// The review survives a crash of the inbox (issue 26 leftovers): `askpane claude` hosting the
// scripted Claude Code (tests/fake-claude) under a running inbox, whose window shows the plan;
// comments typed there, the inbox killed (SIGKILL), the relay starts another and sends the plan
// again: the new window has the comments, and Ctrl+Enter sends them.

/// The scripted session: the captured start, ExitPlanMode asked as 2.1.332 asks it over the
/// host's stream, the reply expected (a deny: its message is compared by shape), the end.
fn crash_transcript(path: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/session.answer-with-notes.2.1.330.replay.jsonl");
    let records: Vec<Value> = fs::read_to_string(fixture)
        .expect("the fixture")
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_str(line).expect("a record"))
        .collect();
    let init = records
        .iter()
        .position(|record| record["line"]["subtype"] == "init")
        .expect("the init record");
    let input = json!({"plan": PLAN, "planFilePath": "/home/dev/.claude/plans/snug-duckling.md"});
    let mut lines: Vec<Value> = records.into_iter().take(init + 1).collect();
    lines.extend([
        json!({"dir": "<<", "line": {"type": "assistant", "message": {"role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_plan_crash", "name": "ExitPlanMode",
            "input": input}]}}}),
        json!({"dir": "<<", "line": {"type": "control_request", "request_id": "plan-crash",
            "request": {"subtype": "can_use_tool", "tool_name": "ExitPlanMode",
            "display_name": "ExitPlanMode", "input": input, "tool_use_id": "toolu_plan_crash",
            "requires_user_interaction": true}}}),
        json!({"dir": ">>", "line": {"type": "control_response", "response": {
            "subtype": "success", "request_id": "plan-crash",
            "response": {"behavior": "deny", "message": "(the review)"}}}}),
        json!({"dir": "<<", "line": {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": "(read)", "is_error": true,
            "tool_use_id": "toolu_plan_crash"}]}}}),
        json!({"dir": "<<", "line": {"type": "result", "subtype": "success", "is_error": false,
            "num_turns": 2, "duration_ms": 1200, "result": "Done."}}),
        json!({"dir": "exit", "line": 0}),
    ]);
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    fs::write(path, text).expect("write the transcript");
}

#[test]
fn the_review_typed_in_the_inbox_survives_its_crash_and_reaches_claude_code() {
    use crate::hosted::{kill_the_inbox_until_another_runs, reply_message, report_after};
    use crate::inbox::{Client, World, wait_for_window};
    let world = World::with_inbox("plan-review-crash");
    let transcript = world.root.join("transcript.jsonl");
    crash_transcript(&transcript);
    let report = world.root.join("report.json");
    let fake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake-claude/fake_claude.py");
    let args = ["claude", "--claude-bin", fake, "-p", PROMPT, "--", "--permission-mode", "plan"];
    let mut command = world.askpane(&args);
    command.env("FAKE_CLAUDE_TRANSCRIPT", &transcript).env("FAKE_CLAUDE_REPORT", &report);
    let claude = Client::spawn(command, "");
    let xvfb = &world.xvfb;
    let window = wait_for_window(xvfb, "ExitPlanMode", true).expect("the plan's window");
    xvfb.focus(window);
    let id = window.to_string();
    // What the store holds of the review, once it holds `comment` and `note` (the writer is a
    // fifth of a second behind the window at most).
    let state = world.root.join("state/askpane");
    let saved = |comment: &str, note: &str| {
        let deadline = Instant::now() + WAIT;
        loop {
            let saved = askpane::store::Store::open_in(&state)
                .and_then(|store| store.plan_draft("plan-toolu_plan_crash"))
                .ok()
                .flatten();
            let whole = saved.as_ref().is_some_and(|draft| {
                draft.note == note && draft.comments.iter().map(|c| c.text.as_str()).eq([comment])
            });
            if whole {
                return;
            }
            assert!(Instant::now() < deadline, "the review was never saved: {saved:?}");
            thread::sleep(Duration::from_millis(50));
        }
    };
    // The paragraph (j), a comment on it (c), typed; then the note (n), typed. (Escape waits
    // until the comment is in: pressed in the same frame as its last letter, it would take the
    // box's keyboard away before the letter is typed.)
    xvfb.keys(window, &["j", "c"]);
    xvfb.xdotool(&["type", "--window", &id, "Say why."]);
    saved("Say why.", "");
    xvfb.keys(window, &["Escape", "n"]);
    xvfb.xdotool(&["type", "--window", &id, "Also update the README."]);
    // Once the whole review is on disk, the inbox dies without a word.
    saved("Say why.", "Also update the README.");
    kill_the_inbox_until_another_runs(&world);
    // The relay's new inbox shows the plan again, with the review as it was left: Ctrl+Enter
    // sends it without a key typed since.
    let window = wait_for_window(xvfb, "ExitPlanMode", true).expect("the plan shown again");
    xvfb.focus(window);
    xvfb.keys(window, &["ctrl+Return"]);
    let compared = report_after(&report, 4);
    assert_eq!(
        reply_message(&compared),
        "The user did not approve this plan and wants you to keep planning. Their review:\n\n\
         > Change the greeting, then test.\n\nSay why.\n\nAlso update the README.",
        "{}",
        compared.summary()
    );
    // The session stays in the inbox until askpane claude is stopped (the scripted Claude Code
    // waits for its input to close).
    crate::hosted::send_signal(claude.pid(), "TERM");
    let (_, _, stderr) = claude.finish();
    assert!(stderr.contains("the inbox went away; starting it again"), "{stderr}");
}
