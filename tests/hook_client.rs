//! Issue 30 item 2: the small hook client, `askpane-hook`. In a running inbox it answers as
//! `askpane hook` does, byte for byte on stdout and stderr and with the same exit code, without
//! `askpane` anywhere it could hand over to; everything else it hands to `askpane hook` with the
//! same arguments and the very same standard input (100 KB of Japanese included), which a stand-in
//! `askpane` beside it records; a signal stops it with the reply `askpane hook` gives, and an agent
//! that stops reading its stdout has its question withdrawn as `askpane hook` withdraws it.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use askpane::protocol::Outcome;
use askpane::protocol::stream::PermissionDecision;
use askpane::transport::{self, ApprovalEvent, Inbound, PermissionAsk, Request, RequestEvent};
use crossbeam_channel::Receiver;

use crate::support::agents::{ServedInbox, next_event, permission_capture};
use crate::support::{Finished, fixture, run_bounded, scratch_dir};

/// The small client as built, beside askpane's own binary.
const SMALL: &str = env!("CARGO_BIN_EXE_askpane-hook");

/// An inbox server in this process whose window is the test.
struct Inbox {
    served: ServedInbox,
    window: Receiver<Inbound>,
}

impl Inbox {
    fn start(name: &str) -> Inbox {
        let (to_ui, window) = transport::memory();
        Inbox { served: ServedInbox::serve(scratch_dir(name), to_ui), window }
    }

    /// `askpane hook` (`program` None) or the small client at `program`, with no arguments,
    /// against this inbox, as the agent runs it.
    fn hook_command(&self, program: Option<&Path>) -> Command {
        let full = self.served.command("hook", &[]);
        match program {
            None => full,
            // Only the system's folders on PATH: no askpane there to hand over to.
            Some(program) => {
                let mut small = like(&full, program);
                small.env("PATH", "/usr/bin:/bin");
                small
            }
        }
    }

    fn run(&self, program: Option<&Path>, stdin: &str) -> thread::JoinHandle<Finished> {
        let mut command = self.hook_command(program);
        let stdin = stdin.to_owned();
        thread::spawn(move || run_bounded(&mut command, Some(&stdin)))
    }

    fn card(&self) -> PermissionAsk {
        next_event(&self.window, "a card", |event| match event {
            Inbound::Approval(ApprovalEvent::Permission(card)) => Some(*card),
            _ => None,
        })
    }

    fn question(&self) -> Request {
        next_event(&self.window, "a question", |event| match event {
            Inbound::Request(RequestEvent::Ask(request)) => Some(*request),
            _ => None,
        })
    }
}

/// `command` (askpane's `hook` subcommand) as the small client at `program`: the same variables
/// and arguments, less the subcommand.
fn like(command: &Command, program: &Path) -> Command {
    let mut small = Command::new(program);
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => small.env(name, value),
            None => small.env_remove(name),
        };
    }
    small.args(command.get_args().skip_while(|arg| *arg == "hook"));
    small
}

/// A copy of the small client in a folder of its own, with `askpane` beside it only when
/// `stand_in` says what it is: a script recording what it was given.
fn small_client_alone(name: &str, stand_in: Option<&str>) -> PathBuf {
    let dir = scratch_dir(name);
    let program = dir.join("askpane-hook");
    fs::copy(SMALL, &program).expect("copy the small client");
    if let Some(script) = stand_in {
        let askpane = dir.join("askpane");
        fs::write(&askpane, script).expect("the stand-in");
        fs::set_permissions(&askpane, fs::Permissions::from_mode(0o755)).expect("executable");
    }
    program
}

/// How the test decides a card, and answers a question, as a person would.
type Decide = fn(&PermissionAsk) -> PermissionDecision;
type Answer = fn(&Request) -> Outcome;

/// One run the small client is to hand over: its arguments, a variable set, its input, and
/// whether an inbox runs.
struct HandOver<'a> {
    case: &'a str,
    args: &'a [&'a str],
    variable: Option<(&'a str, &'a str)>,
    stdin: &'a str,
    inbox: bool,
}

fn same(full: &Finished, small: &Finished, case: &str) {
    assert_eq!(
        (full.status.code(), full.stdout.as_str(), full.stderr.as_str()),
        (small.status.code(), small.stdout.as_str(), small.stderr.as_str()),
        "{case}: askpane hook, then askpane-hook"
    );
}

#[test]
fn in_a_running_inbox_the_small_client_answers_byte_for_byte_as_askpane_hook() {
    let inbox = Inbox::start("hook-client-same");
    // No askpane beside it and none on PATH: a hand-over could only fail, so an answer is its own.
    let small = small_client_alone("hook-client-same-bin", None);
    let decisions: Vec<(&str, Decide)> = vec![
        ("pr-bash-allow", |_| PermissionDecision::AllowOnce),
        ("pr-bash-deny-message", |_| PermissionDecision::Deny {
            message: "Not now: use the Makefile target instead.".to_owned(),
        }),
        ("pr-bash-allow-rule", |card| PermissionDecision::AllowAlways {
            suggestion: card.request.suggestions.first().expect("a suggestion").clone(),
        }),
        ("pr-bash-allow", |_| PermissionDecision::HandBack),
    ];
    for (case, decide) in decisions {
        let stdin = permission_capture(case, "stdin");
        let mut runs = Vec::new();
        for program in [None, Some(small.as_path())] {
            let hook = inbox.run(program, &stdin);
            let card = inbox.card();
            let decision = decide(&card);
            card.reply.send(decision);
            runs.push(hook.join().expect("the hook's runner"));
        }
        same(&runs[0], &runs[1], case);
        assert_eq!(runs[1].status.code(), Some(0), "{case}: {}", runs[1].stderr);
    }
    let question = fixture("hook.pretooluse.stdin.json");
    let answers: Vec<(&str, Answer)> = vec![
        ("declined", |_| Outcome::declined("not now")),
        ("replied", |request| Outcome::replied(&request.core.ask, "なぜ？ Tell me more.")),
    ];
    for (case, answer) in answers {
        let mut runs = Vec::new();
        for program in [None, Some(small.as_path())] {
            let hook = inbox.run(program, &question);
            let request = inbox.question();
            let outcome = answer(&request);
            request.reply.send(outcome);
            runs.push(hook.join().expect("the hook's runner"));
        }
        same(&runs[0], &runs[1], case);
        assert_eq!(runs[1].stdout.lines().count(), 1, "{case}: one line");
    }
}

/// With no `askpane` to hand over to (none beside it, none on PATH), the small client says so on
/// stderr, prints nothing and exits 0: Claude Code then asks in its own dialog.
#[test]
fn with_no_askpane_to_hand_over_to_it_says_so_and_leaves_the_question_to_claude_code() {
    let small = small_client_alone("hook-client-alone-bin", None);
    let question = fixture("hook.pretooluse.stdin.json");
    let mut command = like(&crate::support::askpane(&["hook"]), &small);
    command.env("PATH", "/usr/bin:/bin").arg("--timeout").arg("5");
    let done = run_bounded(&mut command, Some(&question));
    assert_eq!((done.status.code(), done.stdout.as_str()), (Some(0), ""), "{}", done.stderr);
    assert!(done.stderr.starts_with("askpane hook: cannot run askpane ("), "{}", done.stderr);
    assert!(done.stderr.ends_with("leaving the question to Claude Code\n"), "{}", done.stderr);
}

/// A stand-in `askpane` that keeps its arguments and standard input beside itself.
const RECORDER: &str = "#!/bin/sh\nhere=$(dirname \"$0\")\nprintf '%s\\n' \"$@\" > \"$here/args\"\ncat > \"$here/stdin\"\necho handed\n";

#[test]
fn everything_else_is_handed_to_askpane_hook_with_the_same_arguments_and_input() {
    let inbox = Inbox::start("hook-client-hand");
    let small = small_client_alone("hook-client-hand-bin", Some(RECORDER));
    let dir = small.parent().expect("its folder").to_owned();
    let question = fixture("hook.pretooluse.stdin.json");
    let japanese = "日本語のテキスト、".repeat(100 * 1024 / 27);
    let mut long = serde_json::from_str::<serde_json::Value>(&question).expect("JSON");
    long["tool_input"]["questions"][0]["options"][0]["preview"] = japanese.into();
    let long = long.to_string();
    assert!(long.len() > 100 * 1024);
    let notification = r#"{"hook_event_name":"Notification","session_id":"s","cwd":"/tmp","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}"#;
    let mut invalid = serde_json::from_str::<serde_json::Value>(&question).expect("JSON");
    invalid["tool_input"]["questions"] = serde_json::json!([]);
    let invalid = invalid.to_string();
    let cases = [
        HandOver {
            case: "arguments",
            args: &["--timeout", "5"],
            variable: None,
            stdin: &question,
            inbox: true,
        },
        HandOver {
            case: "a variable that answers",
            args: &[],
            variable: Some(("ASKPANE_DECLINE", "no")),
            stdin: &question,
            inbox: false,
        },
        HandOver { case: "no inbox runs", args: &[], variable: None, stdin: &long, inbox: false },
        HandOver {
            case: "a notification",
            args: &[],
            variable: None,
            stdin: notification,
            inbox: true,
        },
        HandOver {
            case: "a question askpane refuses",
            args: &[],
            variable: None,
            stdin: &invalid,
            inbox: true,
        },
    ];
    for HandOver { case, args, variable, stdin, inbox: runs } in cases {
        let _ = fs::remove_file(dir.join("args"));
        let _ = fs::remove_file(dir.join("stdin"));
        let mut command = match runs {
            true => like(&inbox.served.command("hook", &[]), &small),
            false => {
                // A runtime folder where no inbox runs.
                let runtime = scratch_dir("hook-client-no-inbox");
                fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).expect("0700");
                let mut command = like(&crate::support::askpane(&["hook"]), &small);
                command.env_remove("ASKPANE_NO_INBOX").env("XDG_RUNTIME_DIR", runtime);
                command
            }
        };
        command.args(args);
        if let Some((name, value)) = variable {
            command.env(name, value);
        }
        let done = run_bounded(&mut command, Some(stdin));
        assert_eq!(done.stdout, "handed\n", "{case}: {}", done.stderr);
        let mut expected = vec!["hook".to_owned()];
        expected.extend(args.iter().map(|&arg| arg.to_owned()));
        let given = fs::read_to_string(dir.join("args")).expect("the arguments");
        assert_eq!(given.lines().collect::<Vec<_>>(), expected, "{case}");
        let input = fs::read(dir.join("stdin")).expect("the input");
        assert!(input == stdin.as_bytes(), "{case}: the input handed on differs");
    }

    // What it reads itself: another tool's call (nothing, exit 0) and an input that is not JSON
    // (said as `askpane hook` says it); neither is handed over.
    let other = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}"#;
    for (case, stdin) in [("another tool", other), ("not JSON", "{\"hook_event_name\": ")] {
        let _ = fs::remove_file(dir.join("args"));
        let full = run_bounded(&mut inbox.hook_command(None), Some(stdin));
        let mine = run_bounded(&mut inbox.hook_command(Some(&small)), Some(stdin));
        same(&full, &mine, case);
        assert_eq!(mine.stdout, "", "{case}");
        assert!(!dir.join("args").exists(), "{case}: handed over");
    }
}

#[test]
fn with_askpane_beside_it_no_inbox_and_no_display_the_reply_is_askpane_hook_s() {
    let runtime = scratch_dir("hook-client-beside");
    fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).expect("0700");
    let question = fixture("hook.pretooluse.stdin.json");
    let approval = permission_capture("pr-bash-allow", "stdin");
    for (case, stdin) in [("a question", &question), ("a tool call", &approval)] {
        let mut full = crate::support::askpane(&["hook"]);
        full.env_remove("ASKPANE_NO_INBOX").env("XDG_RUNTIME_DIR", &runtime);
        let mut small = like(&full, Path::new(SMALL));
        let full = run_bounded(&mut full, Some(stdin));
        let small = run_bounded(&mut small, Some(stdin));
        same(&full, &small, case);
    }
}

#[test]
fn stopped_by_a_signal_while_the_inbox_shows_it_the_small_client_replies_as_askpane_hook() {
    let inbox = Inbox::start("hook-client-signal");
    let small = small_client_alone("hook-client-signal-bin", None);
    let question = fixture("hook.pretooluse.stdin.json");
    let approval = permission_capture("pr-bash-allow", "stdin");
    for (case, stdin, is_question) in
        [("a question", &question, true), ("a tool call", &approval, false)]
    {
        let mut runs = Vec::new();
        for program in [None, Some(small.as_path())] {
            let mut command = inbox.hook_command(program);
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = command.spawn().expect("the hook");
            child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("written");
            // Held until the hook has ended: a dropped handle would be a closed window's reply.
            let held = match is_question {
                true => (Some(inbox.question()), None),
                false => (None, Some(inbox.card())),
            };
            let killed = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(killed.success());
            let deadline = Instant::now() + Duration::from_secs(20);
            while child.try_wait().expect("wait").is_none() {
                assert!(Instant::now() < deadline, "{case}: still runs after SIGTERM");
                thread::sleep(Duration::from_millis(20));
            }
            let output = child.wait_with_output().expect("its output");
            drop(held);
            runs.push(Finished {
                status: output.status,
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        same(&runs[0], &runs[1], case);
        assert_eq!(runs[1].status.code(), Some(0), "{case}");
        assert_eq!(runs[1].stdout.is_empty(), !is_question, "{case}: {}", runs[1].stdout);
    }
}

/// An inbox killed mid-question (SIGKILL): the small client asks again, finds none running, and
/// hands the very same input to `askpane hook` (which starts one and asks there: tests/inbox.rs).
#[test]
fn an_inbox_killed_mid_question_hands_the_same_input_to_askpane_hook() {
    let world = crate::inbox::World::with_inbox("hook-client-killed");
    let inbox_pid = world.inbox.as_ref().map(|inbox| inbox.child.id()).expect("an inbox");
    let mut watcher = world.connect();
    watcher.send(r#"{"type":"subscribe"}"#);
    watcher.receive_kind("subscribed");
    let small = small_client_alone("hook-client-killed-bin", Some(RECORDER));
    let dir = small.parent().expect("its folder").to_owned();
    let question = fixture("hook.pretooluse.stdin.json");
    let mut command = like(&world.askpane(&["hook"]), &small);
    let hook = {
        let question = question.clone();
        thread::spawn(move || run_bounded(&mut command, Some(&question)))
    };
    watcher.receive_kind("asked");
    let killed =
        Command::new("kill").args(["-KILL", &inbox_pid.to_string()]).status().expect("run kill");
    assert!(killed.success());
    let done = hook.join().expect("the hook's runner");
    assert_eq!(done.stdout, "handed\n", "{}", done.stderr);
    assert!(
        done.stderr.contains("the inbox went away before an answer; asking again"),
        "{}",
        done.stderr
    );
    assert_eq!(fs::read_to_string(dir.join("args")).expect("the arguments"), "hook\n");
    assert!(fs::read(dir.join("stdin")).expect("the input") == question.as_bytes());
}

/// The agent stops reading (its end of the hook's stdout closes, a pipe or the socket Node gives
/// its children) while the inbox shows the question: the small client withdraws it and ends as
/// `askpane hook` does, with the same exit code and the same words, and never hands over.
#[test]
fn when_the_agent_stops_reading_the_small_client_withdraws_the_question_as_askpane_hook() {
    use crate::inbox::{StdoutKind, hook_input, hook_whose_reader_goes};

    let world = crate::inbox::World::with_inbox("hook-client-reader-gone");
    let mut watcher = world.connect();
    watcher.send(r#"{"type":"subscribe"}"#);
    watcher.receive_kind("subscribed");
    let small = small_client_alone("hook-client-reader-gone-bin", None);
    for kind in [StdoutKind::Pipe, StdoutKind::Socket] {
        let mut runs = Vec::new();
        for program in [None, Some(small.as_path())] {
            let full = world.askpane(&["hook"]);
            let (command, which) = match program {
                None => (full, "askpane hook"),
                Some(small) => {
                    // No askpane on PATH either: a hand-over would fail, and show.
                    let mut command = like(&full, small);
                    command.env("PATH", "/usr/bin:/bin");
                    (command, "askpane-hook")
                }
            };
            let case = format!("{kind:?}, {which}");
            let input = hook_input(&format!("toolu_gone_{kind:?}_{which}"), "Which colour?");
            let (status, stderr) =
                hook_whose_reader_goes(command, kind, &input, &mut watcher, &case);
            runs.push(Finished { status, stdout: String::new(), stderr });
        }
        same(&runs[0], &runs[1], &format!("{kind:?}"));
        assert_eq!(runs[1].status.code(), Some(6), "{kind:?}: {}", runs[1].stderr);
        assert!(runs[1].stderr.contains("standard output"), "{kind:?}: {}", runs[1].stderr);
    }
}
