//! `askpane mcp` driven by real MCP clients (issue 12): the Python MCP SDK (initialize, list,
//! call with preset answers through the inbox, cancel mid-question, invalid input, no human),
//! raw lines for malformed input, and the MCP Inspector CLI (tools/list, tools/call).
//!
//! The clients come from PyPI and npm through `scripts/mcp-clients`, pinned, into
//! `${ASKPANE_MCP_CACHE:-$HOME/.cache/askpane/mcp-clients}`. Without them a test says so and
//! passes, except under CI (`CI=true`), where a missing client fails it. The server is started
//! as MCP clients start it: a reduced environment, no `DISPLAY`; an inbox, when a test needs a
//! person's window, runs on the test's own Xvfb (`inbox::World`).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use askpane::protocol::mcp;

use crate::inbox::World;
use crate::support::{Process, WAIT, read_all, run_bounded, scratch_dir};

const QUESTION: &str = "Which layout should the settings page use?";

/// One question, as a model would call the tool with it.
fn arguments() -> Value {
    json!({"questions": [{
        "question": QUESTION, "header": "Layout", "multiSelect": false,
        "options": [{"label": "Tabs", "description": "One tab per section"},
                    {"label": "Sidebar", "description": "Sections listed on the left"}]
    }]})
}

/// The answered result the model reads for `Tabs`, as the Python SDK returns it.
fn answered_tabs() -> Value {
    let text = format!(
        "Your questions have been answered: \"{QUESTION}\"=\"Tabs\". You can now continue with \
         these answers in mind."
    );
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"answers": {QUESTION: "Tabs"}, "annotations": {}, "message": text},
        "isError": false,
        "resultType": "complete"
    })
}

// ---------------------------------------------------------------------------------------------
// The clients

/// Where scripts/mcp-clients put the clients (keep in step with it).
fn cache() -> PathBuf {
    match std::env::var_os("ASKPANE_MCP_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/askpane/mcp-clients"),
    }
}

/// `path` when it exists; else `None` after saying the test is skipped (a failure under CI).
fn installed(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{what} is not installed at {}: run scripts/mcp-clients (needs PyPI and npm)",
        path.display()
    );
    assert!(std::env::var("CI").map_or(true, |ci| ci != "true"), "{message}");
    eprintln!("mcp: skipped: {message}");
    None
}

fn python() -> Option<PathBuf> {
    installed(cache().join("python-mcp-2.3.0/bin/python"), "the Python MCP SDK (mcp 2.3.0)")
}

fn inspector() -> Option<PathBuf> {
    let path = cache().join("inspector-2.12.0/node_modules/.bin/mcp-inspector");
    installed(path, "the MCP Inspector 2.12.0")
}

/// The Python client playing `scenario` against `askpane mcp <server_args>`, the server's
/// environment exactly `server_env` (plus what the SDK passes on: HOME, PATH, …), its working
/// directory `cwd`.
fn python_client(
    python: &Path,
    scenario: &str,
    arguments: &Value,
    server_args: &[&str],
    server_env: &Value,
    cwd: &Path,
) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut command = Command::new(python);
    command
        .arg(script)
        .arg(scenario)
        .arg(arguments.to_string())
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_askpane"))
        .arg("mcp")
        .args(server_args)
        .env("ASKPANE_TEST_SERVER_ENV", server_env.to_string())
        .current_dir(cwd);
    command
}

/// The `{"event": …}` lines a client printed, by event.
fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

fn event<'a>(events: &'a [Value], name: &str) -> &'a Value {
    events
        .iter()
        .find(|event| event["event"] == name)
        .unwrap_or_else(|| panic!("no {name:?} event in {events:#?}"))
}

/// A directory for a test without a display or inbox: its runtime and state directories.
fn quiet_world(name: &str) -> (PathBuf, Value) {
    let root = scratch_dir(name);
    let env = json!({
        "XDG_RUNTIME_DIR": root.join("run").display().to_string(),
        "XDG_STATE_HOME": root.join("state").display().to_string(),
    });
    std::fs::create_dir_all(root.join("run")).expect("make the runtime dir");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("run"), std::fs::Permissions::from_mode(0o700))
        .expect("narrow the runtime dir");
    (root, env)
}

// ---------------------------------------------------------------------------------------------
// The Python SDK

#[test]
fn python_sdk_lists_the_tool_and_gets_the_answer_the_inbox_window_sends() {
    let Some(python) = python() else { return };
    let world = World::with_inbox("mcp-preset");
    // Preset, not submitted: the inbox's window shows it and sends it when its time runs out.
    let answers = world.answers("answers.json", &json!({"Layout": "Tabs"}));
    let env = json!({
        "XDG_RUNTIME_DIR": world.root.join("run").display().to_string(),
        "XDG_STATE_HOME": world.root.join("state").display().to_string(),
        "ASKPANE_ANSWERS": answers.display().to_string(),
        "ASKPANE_TIMEOUT": "2",
    });
    let mut command = python_client(&python, "call", &arguments(), &[], &env, &world.root);
    let run = run_bounded(&mut command, None);
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    let events = events(&run.stdout);

    let initialized = &event(&events, "initialized")["result"];
    assert_eq!(initialized["serverInfo"]["name"], "askpane", "{initialized}");
    assert_eq!(initialized["capabilities"], json!({"tools": {}}), "{initialized}");

    let tools = event(&events, "tools")["result"]["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(tools.len(), 1, "{tools:#?}");
    let tool = &tools[0];
    assert_eq!(tool["name"], "ask_user_question");
    assert_eq!(tool["description"], mcp::DESCRIPTION);
    assert_eq!(tool["inputSchema"], mcp::input_schema());
    assert_eq!(tool["outputSchema"], mcp::output_schema());
    assert_eq!(
        tool["annotations"],
        json!({"title": "Ask the user", "readOnlyHint": false, "destructiveHint": false,
               "idempotentHint": false, "openWorldHint": false})
    );

    // Nobody confirms the preset in the window: it is told apart, never the answer (issue 24).
    assert_eq!(event(&events, "result")["result"], unconfirmed_tabs(2));
}

#[test]
fn python_sdk_submitted_preset_needs_no_inbox_and_starts_none() {
    let Some(python) = python() else { return };
    let (root, mut env) = quiet_world("mcp-submit");
    std::fs::write(root.join("answers.json"), r#"{"Layout":"Tabs"}"#).expect("answers");
    env["ASKPANE_ANSWERS"] = json!(root.join("answers.json").display().to_string());
    env["ASKPANE_SUBMIT"] = json!("1");
    let mut command = python_client(&python, "call", &arguments(), &[], &env, &root);
    let run = run_bounded(&mut command, None);
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(event(&events(&run.stdout), "result")["result"], answered_tabs());
    assert!(!root.join("run/askpane/inbox.sock").exists(), "an inbox was started");
    // Answered here, and recorded in the history as the inbox records what it decides.
    let mut history = crate::support::askpane_command();
    history.args(["history", "--json"]).env("XDG_STATE_HOME", root.join("state"));
    let listed = run_bounded(&mut history, None);
    let entries = events_of_lines(&listed.stdout);
    assert_eq!(entries.len(), 1, "{listed:?}");
    let entry = &entries[0];
    assert_eq!(entry["source"], "mcp", "{entry}");
    assert_eq!(entry["agent"], "MCP", "{entry}");
    assert_eq!(
        entry["project"],
        json!(root.file_name().map(|name| name.to_string_lossy())),
        "{entry}"
    );
    assert_eq!(entry["outcome"], "answered", "{entry}");
    assert_eq!(entry["reply"], json!(answered_tabs_reply().to_string()), "{entry}");
}

/// The result line askpane writes for `Tabs` (the SDK's dump adds `resultType`).
fn answered_tabs_reply() -> Value {
    let mut reply = answered_tabs();
    if let Some(object) = reply.as_object_mut() {
        object.remove("resultType");
    }
    reply
}

/// Every JSON line of `text`.
fn events_of_lines(text: &str) -> Vec<Value> {
    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

#[test]
fn python_sdk_no_inbox_and_no_display_is_told_no_human_can_answer() {
    let Some(python) = python() else { return };
    let (root, env) = quiet_world("mcp-nobody");
    let mut command = python_client(&python, "call", &arguments(), &[], &env, &root);
    let run = run_bounded(&mut command, None);
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        event(&events(&run.stdout), "result")["result"],
        json!({
            "content": [{"type": "text", "text": "No human is available to answer questions \
                right now (askpane mcp has no window of its own, and no inbox runs and none can \
                be started: no display: DISPLAY and WAYLAND_DISPLAY are not set). Proceed with \
                reasonable assumptions and state them clearly, or stop and report what you need \
                decided."}],
            "isError": true,
            "resultType": "complete"
        })
    );
}

#[test]
fn python_sdk_invalid_input_is_an_error_result_listing_every_problem() {
    let Some(python) = python() else { return };
    let (root, env) = quiet_world("mcp-invalid");
    let broken = json!({"questions": [
        {"header": "Layout", "multiSelect": false,
         "options": [{"label": 3, "description": "x"}, {"label": "B", "description": "y"}]},
        {"question": "Which?", "header": "Q", "multiSelect": false}
    ]});
    let mut command = python_client(&python, "call", &broken, &[], &env, &root);
    let run = run_bounded(&mut command, None);
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        event(&events(&run.stdout), "result")["result"],
        json!({
            "content": [{"type": "text", "text": "These questions could not be shown to the \
                user because the ask_user_question input is invalid: question 1: `question` is \
                missing; question 1, option 1: `label` must be a string, found a number; \
                question 2: `options` is missing. Fix the input and call ask_user_question \
                again."}],
            "isError": true,
            "resultType": "complete"
        })
    );
}

#[test]
fn python_sdk_cancel_withdraws_the_question_from_the_inbox_at_once() {
    let Some(python) = python() else { return };
    let world = World::with_inbox("mcp-cancel");
    let env = json!({
        "XDG_RUNTIME_DIR": world.root.join("run").display().to_string(),
        "XDG_STATE_HOME": world.root.join("state").display().to_string(),
    });
    let mut command = python_client(
        &python,
        "cancel",
        &arguments(),
        &["--progress-every", "1"],
        &env,
        &world.root,
    );
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut client = Process::new(command.spawn().expect("start the Python client"));
    let mut to_client = client.child.stdin.take().expect("piped stdin");
    let lines = line_reader(client.child.stdout.take().expect("piped stdout"));
    let stderr = read_all(client.child.stderr.take().expect("piped stderr"));

    // The question waits in the inbox, and the client hears progress while it does.
    let progress = next_event(&lines, "progress", &stderr);
    assert_eq!(progress["message"], "waiting for the user to answer (1 s)", "{progress}");
    let mut inbox = world.connect();
    let listed = inbox.list();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    let from = format!("mcp · askpane-tests 1.0 · {}", world.root.display());
    assert_eq!(listed[0]["from"], json!(from), "{listed:#?}");
    assert_eq!(listed[0]["title"], "Layout", "{listed:#?}");

    // The client abandons the call (notifications/cancelled): the question leaves the inbox.
    to_client.write_all(b"cancel\n").expect("tell the client to cancel");
    next_event(&lines, "cancelled", &stderr);
    let deadline = Instant::now() + WAIT;
    while !inbox.list().is_empty() {
        assert!(Instant::now() < deadline, "the question is still in the inbox after {WAIT:?}");
        thread::sleep(Duration::from_millis(50));
    }
    // The server goes on serving the same client.
    next_event(&lines, "pinged", &stderr);
    drop(to_client);
    let status = client.wait(WAIT).expect("the client ends");
    assert!(status.success(), "{status:?}");
}

/// Each line of `pipe`, as it comes.
fn line_reader(pipe: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { return };
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    receiver
}

/// The next event named `name` (others skipped), within WAIT.
fn next_event(lines: &Receiver<String>, name: &str, stderr: &Receiver<String>) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = lines.recv_timeout(left) else {
            let stderr = stderr.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
            panic!("no {name:?} event within {WAIT:?}; the client's stderr:\n{stderr}");
        };
        let Ok(event) = serde_json::from_str::<Value>(&line) else { continue };
        if event["event"] == name {
            return event;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Raw lines: what no SDK sends

#[test]
fn malformed_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let (root, _) = quiet_world("mcp-malformed");
    let mut command = crate::support::askpane_command();
    command
        .arg("mcp")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_RUNTIME_DIR", root.join("run"))
        .env("XDG_STATE_HOME", root.join("state"))
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = Process::new(command.spawn().expect("start askpane mcp"));
    let mut input = server.child.stdin.take().expect("piped stdin");
    let lines = line_reader(server.child.stdout.take().expect("piped stdout"));
    let say = |input: &mut std::process::ChildStdin, line: &str| {
        input.write_all(line.as_bytes()).and_then(|()| input.write_all(b"\n")).expect("write");
    };
    let next = || -> Value {
        let line = lines.recv_timeout(WAIT).expect("a line from askpane mcp in time");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"))
    };
    say(
        &mut input,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(next()["result"]["protocolVersion"], "2025-06-18");
    say(&mut input, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Not JSON: a Parse error with id null (JSON-RPC 2.0), saying which line and where.
    say(&mut input, "this is not JSON");
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message":
            "Parse error: line 3 of the input is not JSON (expected ident at line 1 column 2)"}})
    );
    // Bytes that are not UTF-8: the same, naming the byte; the session goes on.
    input.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\xff\"}\n").expect("write");
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message":
            "Parse error: line 4 of the input is not UTF-8 (at byte 39)"}})
    );
    // A line past the limit (8 MiB and some): skipped, never held whole, and said so.
    let huge = format!("{{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"{}\"}}", "x".repeat(9 << 20));
    say(&mut input, &huge);
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message":
            "Parse error: line 5 of the input is longer than 8454144 bytes; it was skipped"}})
    );
    // JSON of the wrong shape: its error, with its id (more in an_invalid_request_is_answered…).
    say(&mut input, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"not an object"}"#);
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602,
               "message": "Invalid params for tools/call: \"params\" must be an object"}})
    );
    // An unknown tool: an error naming it; the server still answers what follows.
    say(
        &mut input,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}"#,
    );
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
               "message": "no tool named \"rm_rf\"; askpane has \"ask_user_question\""}})
    );
    say(&mut input, r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    let listed = next();
    assert_eq!(listed["id"], 4, "{listed}");
    assert_eq!(listed["result"]["tools"][0]["name"], "ask_user_question", "{listed}");
    drop(input);
    let status = server.wait(WAIT).expect("askpane mcp ends when its input closes");
    assert_eq!(status.code(), Some(0));
}

/// The initialize request of the raw-line tests.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `askpane mcp` as a client starts it (no display, private directories), fed `lines`, its
/// input then closed: everything it wrote (each line checked whole), and how it ended.
fn raw_session(root: &Path, lines: &[String]) -> (String, crate::support::Finished) {
    let mut command = crate::support::askpane_command();
    command
        .arg("mcp")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_RUNTIME_DIR", root.join("run"))
        .env("XDG_STATE_HOME", root.join("state"))
        .current_dir(root);
    let mut input = String::new();
    for line in lines {
        input.push_str(line);
        input.push('\n');
    }
    let run = run_bounded(&mut command, Some(&input));
    assert!(
        run.stdout.is_empty() || run.stdout.ends_with('\n'),
        "the output is cut: {:?}",
        crate::support::tail(&run.stdout, 300)
    );
    (run.stdout.clone(), run)
}

/// The replies of a session's output: each line's members as raw JSON (an id like `1e400` is
/// kept as written), a batch's replies one by one; requests and notifications the server sent
/// are left out.
fn replies(stdout: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    use serde_json::value::RawValue;
    let mut replies = Vec::new();
    let mut add = |text: &str| {
        let members: std::collections::BTreeMap<String, &RawValue> = serde_json::from_str(text)
            .unwrap_or_else(|error| panic!("not a JSON object ({error}): {text}"));
        if !members.contains_key("method") {
            replies.push(members.into_iter().map(|(k, v)| (k, v.get().to_owned())).collect());
        }
    };
    for line in stdout.lines() {
        if line.starts_with('[') {
            let items: Vec<&RawValue> = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("not a JSON array ({error}): {line}"));
            items.iter().for_each(|item| add(item.get()));
        } else {
            add(line);
        }
    }
    replies
}

/// The one reply whose id is `id` (as JSON text), failing the test unless there is exactly one.
fn reply_to<'a>(
    replies: &'a [std::collections::BTreeMap<String, String>],
    id: &str,
    stdout: &str,
) -> &'a std::collections::BTreeMap<String, String> {
    let found: Vec<_> =
        replies.iter().filter(|reply| reply.get("id").map(String::as_str) == Some(id)).collect();
    assert_eq!(found.len(), 1, "{} replies with id {id}; the output:\n{stdout}", found.len());
    found[0]
}

/// The error code of a reply, failing the test for a result.
fn error_code(reply: &std::collections::BTreeMap<String, String>) -> i64 {
    let error: Value =
        serde_json::from_str(reply.get("error").unwrap_or_else(|| panic!("no error: {reply:?}")))
            .expect("the error is JSON");
    error["code"].as_i64().unwrap_or_else(|| panic!("no code: {reply:?}"))
}

/// Issue 24 item 22: JSON of the wrong shape with a readable id was answered `-32600` with no
/// id at all, so the client waited for ever on that request. Each gets its error with its id.
#[test]
fn an_invalid_request_is_answered_with_its_id() {
    let (root, _) = quiet_world("mcp-invalid-ids");
    let cases = [
        (r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"not an object"}"#, "2", -32602),
        (r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#, "9", -32600),
        (r#"{"id":"no-version","method":"ping"}"#, r#""no-version""#, -32600),
        (r#"{"jsonrpc":"2.0","id":13,"method":5}"#, "13", -32600),
        (r#"{"jsonrpc":"2.0","id":"no-method"}"#, r#""no-method""#, -32600),
        (r#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":5}"#, "11", -32602),
        (r#"{"jsonrpc":"2.0","id":14,"method":"nope","params":[1]}"#, "14", -32601),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, "1.5", -32600),
        (r#"[{"jsonrpc":"2.0","id":"in-a-batch","method":"ping"}]"#, r#""in-a-batch""#, -32600),
    ];
    let mut lines = vec![INITIALIZE.to_owned(), INITIALIZED.to_owned()];
    lines.extend(cases.iter().map(|(line, _, _)| (*line).to_owned()));
    let (stdout, run) = raw_session(&root, &lines);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let replies = replies(&stdout);
    for (line, id, code) in cases {
        assert_eq!(error_code(reply_to(&replies, id, &stdout)), code, "{line}");
    }
    assert_eq!(replies.len(), cases.len() + 1, "{stdout}");
}

/// Issue 24 item 22: `"id": 1e400` (no number type holds it) got no response at all. It gets
/// an Invalid Request error with the id echoed exactly as the client wrote it.
#[test]
fn an_id_no_number_holds_is_answered_as_written() {
    let (root, _) = quiet_world("mcp-huge-id");
    let lines = [
        INITIALIZE.to_owned(),
        INITIALIZED.to_owned(),
        r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"tools/list"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#.to_owned(),
    ];
    let (stdout, run) = raw_session(&root, &lines);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let replies = replies(&stdout);
    for id in ["1e400", "18446744073709551616"] {
        assert_eq!(error_code(reply_to(&replies, id, &stdout)), -32600);
        let echoed = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"#);
        assert!(stdout.lines().any(|line| line.starts_with(&echoed)), "{stdout}");
    }
    assert_eq!(reply_to(&replies, r#""after""#, &stdout)["result"], "{}");
}

/// Issue 24 item 22: `tools/call` whose `arguments` are not an object was answered -32601
/// Method not found (rmcp read it as an unknown method); it is -32602 Invalid params.
#[test]
fn wrong_arguments_are_invalid_params() {
    let (root, _) = quiet_world("mcp-wrong-arguments");
    let lines = [
        INITIALIZE.to_owned(),
        INITIALIZED.to_owned(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_user_question","arguments":[1]}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask_user_question","arguments":"x"}}"#.to_owned(),
    ];
    let (stdout, run) = raw_session(&root, &lines);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let replies = replies(&stdout);
    for id in ["5", "6"] {
        let reply = reply_to(&replies, id, &stdout);
        assert_eq!(error_code(reply), -32602, "{reply:?}");
        assert!(reply["error"].contains("Invalid params for tools/call: "), "{reply:?}");
    }
}

/// Issue 24 item 22: a client whose first message is not `initialize` got its output cut (no
/// final newline, replies lost) when the server ended. Every request gets its whole reply.
#[test]
fn output_is_whole_when_the_first_message_is_not_initialize() {
    let (root, _) = quiet_world("mcp-no-initialize");
    let lines: Vec<String> = (1..=300)
        .map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#))
        .collect();
    let (stdout, run) = raw_session(&root, &lines);
    assert!(run.stderr.contains("did not initialize"), "{}", run.stderr);
    let replies = replies(&stdout);
    assert_eq!(replies.len(), 300, "{}", crate::support::tail(&stdout, 500));
    for id in 1..=300 {
        reply_to(&replies, &id.to_string(), &stdout);
    }
}

/// Issue 24 item 22: many malformed requests, each with an id of its own (readable or not), and
/// some well-formed ones, through one server: each request gets exactly one reply, carrying its
/// id (`null` where none can be read); notifications get none. `ASKPANE_MCP_CASES` (default
/// 2000) and `ASKPANE_MCP_SEED` change the count and the draw.
#[test]
fn every_request_gets_exactly_one_reply_with_its_id() {
    let cases: u64 =
        std::env::var("ASKPANE_MCP_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    let seed: u64 =
        std::env::var("ASKPANE_MCP_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(0x5eed_2422);
    let (root, _) = quiet_world("mcp-fuzzed-ids");
    let mut random = Xorshift(seed | 1);
    let mut lines = vec![INITIALIZE.to_owned(), INITIALIZED.to_owned()];
    let mut expected: Vec<String> = vec![r#"s:init"#.to_owned()];
    for case in 1..=cases {
        let (line, expect) = fuzzed_request(&mut random, case);
        lines.push(line);
        expected.extend(expect);
    }
    let (stdout, run) = raw_session(&root, &lines);
    assert_eq!(
        run.status.code(),
        Some(0),
        "seed {seed}: {}",
        crate::support::tail(&run.stderr, 2000)
    );
    let mut got: Vec<String> = replies(&stdout)
        .iter()
        .map(|reply| id_key(reply.get("id").map_or("<no id>", String::as_str)))
        .collect();
    got.sort();
    expected.sort();
    if got != expected {
        let mut missing = expected.clone();
        let mut extra = Vec::new();
        for key in &got {
            match missing.iter().position(|wanted| wanted == key) {
                Some(at) => {
                    missing.remove(at);
                }
                None => extra.push(key.clone()),
            }
        }
        panic!(
            "seed {seed}: {} replies for {} expected; missing {:?}, unexpected {:?}",
            got.len(),
            expected.len(),
            missing.iter().take(20).collect::<Vec<_>>(),
            extra.iter().take(20).collect::<Vec<_>>()
        );
    }
}

/// A small deterministic generator (xorshift64), so a failing draw can be run again.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// The key a reply's id is matched by: a string's value; a number the integer rmcp answers with
/// when it is one (`7.0` is 7), else its text as written.
fn id_key(id: &str) -> String {
    if let Ok(text) = serde_json::from_str::<String>(id) {
        return format!("s:{text}");
    }
    match id.parse::<f64>() {
        Ok(number) if number.fract() == 0.0 && number.abs() < 9.0e15 && !id.contains("e-") => {
            format!("n:{}", number as i64)
        }
        _ => format!("raw:{id}"),
    }
}

/// One request with an id of its own (`case` makes it unique), mostly malformed: the line and
/// the reply keys it must get (none for a notification).
fn fuzzed_request(random: &mut Xorshift, case: u64) -> (String, Vec<String>) {
    // The id: readable (a string, an integer, an integer in float form, a number no type holds
    // or askpane cannot carry) or not (null, a boolean, an object, an array).
    let (id, key) = match random.next() % 12 {
        0 | 1 => (case.to_string(), Some(format!("n:{case}"))),
        2 => (format!("-{case}"), Some(format!("n:-{case}"))),
        3 | 4 => (format!("\"s{case}\""), Some(format!("s:s{case}"))),
        5 => (format!("\"\\u0073\\n{case}\""), Some(format!("s:s\n{case}"))),
        6 => (format!("{case}.0"), Some(format!("n:{case}"))),
        7 => {
            let id = random
                .pick(&["{}e400", "{}.5", "-{}e-400", "18446744073709551616{}", "{}e19"])
                .replace("{}", &case.to_string());
            (id.clone(), Some(format!("raw:{id}")))
        }
        8 => ("null".to_owned(), Some("raw:null".to_owned())),
        9 => (random.pick(&["true", "false"]).to_owned(), Some("raw:null".to_owned())),
        10 => (format!("{{\"n\":{case}}}"), Some("raw:null".to_owned())),
        _ => (format!("[{case}]"), Some("raw:null".to_owned())),
    };
    let body = random.pick(&[
        r#""method":"ping""#,
        r#""method":"tools/list""#,
        r#""method":"tools/list","params":{"cursor":5}"#,
        r#""method":"tools/call","params":{"name":"ask_user_question","arguments":{"questions":[]}}"#,
        r#""method":"tools/call","params":{"name":"rm_rf","arguments":{}}"#,
        r#""method":"tools/call","params":{"name":"ask_user_question","arguments":[1]}"#,
        r#""method":"tools/call","params":{"name":"ask_user_question","arguments":5}"#,
        r#""method":"tools/call","params":{"name":5}"#,
        r#""method":"tools/call","params":{"arguments":{}}"#,
        r#""method":"tools/call","params":"x""#,
        r#""method":"tools/call","params":{"name":"ask_user_question","arguments":{"n":1e400}}"#,
        r#""method":"tools/call","params":{"name":"ask_user_question","arguments":{"deep":DEEP}}"#,
        r#""method":"tools/call","params":{"name":"ask_user_question","_meta":5}"#,
        r#""method":"tools/list","params":5"#,
        r#""method":"ping","params":[]"#,
        r#""method":"initialize","params":{}"#,
        r#""method":"initialize","params":{"protocolVersion":5}"#,
        r#""method":"nope""#,
        r#""method":"nope","params":"x""#,
        r#""method":"notifications/foo","params":5"#,
        r#""method":5"#,
        r#""method":null"#,
        r#""method":"ping","result":{}"#,
        r#""result":5,"method":"ping""#,
        r#""noMethod":true"#,
        r#""method":"ping","method":"ping""#,
        r#""method":"tools/call","params":{"name":"ask_user_question"},"params":{}"#,
    ]);
    let body = body.replace("DEEP", &format!("{}{}", "[".repeat(200), "]".repeat(200)));
    let version = random.pick(&[
        r#""jsonrpc":"2.0","#,
        r#""jsonrpc":"2.0","#,
        r#""jsonrpc":"2.0","#,
        r#""jsonrpc":"1.0","#,
        "",
        r#""jsonrpc":2,"#,
    ]);
    let line = format!("{{{version}\"id\":{id},{body}}}");
    match random.next() % 20 {
        // In a batch of its own: the reply is in an array.
        0 => (format!("[{line}]"), key.into_iter().collect()),
        // Cut short: not JSON at all, a Parse error with id null.
        1 => {
            let cut = line.get(..line.len() / 2).unwrap_or_default().to_owned();
            (cut, vec!["raw:null".to_owned()])
        }
        // Without an id: a notification, never answered; or no valid JSON-RPC at all (no
        // "jsonrpc": "2.0", no method that is a string), an Invalid Request with id null.
        2 => {
            let notification = version == r#""jsonrpc":"2.0","# && body.contains(r#""method":""#);
            let expect = if notification { Vec::new() } else { vec!["raw:null".to_owned()] };
            (format!("{{{version}{body}}}"), expect)
        }
        _ => (line, key.into_iter().collect()),
    }
}

// ---------------------------------------------------------------------------------------------
// The MCP Inspector CLI

#[test]
fn inspector_cli_lists_the_tool_and_calls_it() {
    let Some(inspector) = inspector() else { return };
    let (root, _) = quiet_world("mcp-inspector");
    std::fs::write(root.join("answers.json"), r#"{"Layout":"Tabs"}"#).expect("answers");
    let run = |method_args: &[&str]| {
        let mut command = Command::new(&inspector);
        command
            .arg("--cli")
            .args(["-e", &format!("XDG_RUNTIME_DIR={}", root.join("run").display())])
            .args(["-e", &format!("XDG_STATE_HOME={}", root.join("state").display())])
            .args(["-e", &format!("ASKPANE_ANSWERS={}", root.join("answers.json").display())])
            .args(["-e", "ASKPANE_SUBMIT=1"])
            .arg(env!("CARGO_BIN_EXE_askpane"))
            .arg("mcp")
            .args(method_args)
            .env("HOME", &root)
            .env("MCP_CATALOG_PATH", root.join("catalog.json"))
            .env_remove("DISPLAY")
            .current_dir(&root);
        let run = run_bounded(&mut command, None);
        assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
        serde_json::from_str::<Value>(&run.stdout)
            .unwrap_or_else(|error| panic!("{error}: {}", run.stdout))
    };
    let listed = run(&["--method", "tools/list"]);
    assert_eq!(listed["tools"][0]["name"], "ask_user_question", "{listed}");
    assert_eq!(listed["tools"][0]["inputSchema"], mcp::input_schema(), "{listed}");
    let questions = arguments()["questions"].to_string();
    let called = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "ask_user_question",
        "--tool-arg",
        &format!("questions={questions}"),
    ]);
    assert_eq!(called, answered_tabs_reply());
}

// ---------------------------------------------------------------------------------------------
// The real Claude Code CLI

/// Claude Code 2.1.330 with `--mcp-config` naming `askpane mcp` (its `env` in the config: the
/// answering variables `answering` and private directories), the fake model calling
/// `mcp__askpane__ask_user_question`: the one tool_result block of the model's next request,
/// and a report for failures.
fn claude_code_run(name: &str, answering: &[(&str, &str)]) -> (Value, String) {
    use crate::fake_api::FakeApi;
    use crate::interop::{Cli, CliProcess, RUN_MARKER, Scratch};

    let cli = Cli::V2_1_330;
    let binary = cli.binary();
    let scratch = Scratch::new(name);
    for dir in [scratch.home(), scratch.project(), scratch.tmp(), scratch.root.join("run")] {
        std::fs::create_dir_all(&dir).expect("make a scratch directory");
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(scratch.root.join("run"), std::fs::Permissions::from_mode(0o700))
        .expect("narrow the runtime dir");
    let mut env = json!({
        "XDG_RUNTIME_DIR": scratch.root.join("run").display().to_string(),
        "XDG_STATE_HOME": scratch.root.join("state").display().to_string(),
    });
    for (variable, value) in answering {
        let value = match *value {
            "<answers>" => {
                let answers = scratch.root.join("answers.json");
                std::fs::write(&answers, r#"{"Layout":"Sidebar"}"#).expect("write the answers");
                answers.display().to_string()
            }
            other => other.to_owned(),
        };
        env[*variable] = json!(value);
    }
    let config = scratch.root.join("mcp.json");
    let server = json!({"mcpServers": {"askpane": {
        "type": "stdio", "command": env!("CARGO_BIN_EXE_askpane"), "args": ["mcp"], "env": env
    }}});
    std::fs::write(&config, server.to_string()).expect("write the MCP config");
    let tool = "mcp__askpane__ask_user_question";
    let api = FakeApi::calling(tool, arguments(), "toolu_fake_mcp_000001");

    let mut command = Command::new(binary);
    command
        .args(["-p", "Ask me which layout I want.", "--output-format", "stream-json", "--verbose"])
        .arg("--mcp-config")
        .arg(&config)
        .args(["--strict-mcp-config", "--allowedTools", tool]);
    scratch
        .isolate(&mut command, &api.base_url())
        // MCP tools offered directly, not behind ToolSearch: the fake model calls it at once.
        .env("ENABLE_TOOL_SEARCH", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let marker = format!("{RUN_MARKER}={}", scratch.root.display());
    let mut process = CliProcess::new(command.spawn().expect("start Claude Code"), Some(marker));
    let stdout = read_all(process.child.stdout.take().expect("piped stdout"));
    let stderr = read_all(process.child.stderr.take().expect("piped stderr"));
    let status = process.wait(Duration::from_secs(60));
    drop(process);
    let (stdout, stderr) = (crate::support::collect(stdout), crate::support::collect(stderr));
    let report = format!(
        "status {status:?}\nrequests:\n{}\nstdout:\n{}\nstderr:\n{}",
        api.request_summary(),
        crate::support::tail(&stdout, 6000),
        crate::support::tail(&stderr, 3000)
    );
    assert!(status.is_some_and(|status| status.success()), "{report}");
    let results = api.tool_results();
    assert_eq!(results.len(), 1, "{report}");
    assert_eq!(results[0]["tool_use_id"], "toolu_fake_mcp_000001", "{report}");
    (results[0].clone(), report)
}

/// The preset answer (ASKPANE_ANSWERS, ASKPANE_SUBMIT in the server's config) is the result,
/// and the model's next request carries it exactly.
#[test]
fn claude_code_calls_the_tool_and_the_model_reads_the_answer() {
    let (result, report) = claude_code_run(
        "mcp-claude-answer",
        &[("ASKPANE_ANSWERS", "<answers>"), ("ASKPANE_SUBMIT", "1")],
    );
    // Claude Code gives its model `structuredContent` (as JSON) in place of the text content:
    // the worded answer reaches the model as its `message`.
    let text = format!(
        "Your questions have been answered: \"{QUESTION}\"=\"Sidebar\". You can now continue \
         with these answers in mind."
    );
    let read = json!({"answers": {QUESTION: "Sidebar"}, "annotations": {}, "message": text});
    assert_eq!(crate::interop::tool_result_text(&result), read.to_string(), "{report}");
    assert!(result.get("is_error").is_none_or(|error| error == false), "{report}");
}

/// A decline (ASKPANE_DECLINE) is an error result whose text the model reads, never an answer.
#[test]
fn claude_code_model_reads_a_decline_as_an_error() {
    let (result, report) =
        claude_code_run("mcp-claude-decline", &[("ASKPANE_DECLINE", "Not now, use the defaults.")]);
    assert_eq!(
        crate::interop::tool_result_text(&result),
        "The user declined to answer these questions and said: Not now, use the defaults.",
        "{report}"
    );
    assert_eq!(result["is_error"], true, "{report}");
}

// ---------------------------------------------------------------------------------------------
// askpane install mcp CLIENT

/// `askpane install|uninstall mcp <client>` with HOME (and XDG_CONFIG_HOME) at `home`.
fn install(home: &Path, verb: &str, client: &str) -> crate::support::Finished {
    let mut command = crate::support::askpane_command();
    command
        .args([verb, "mcp", client])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_RUNTIME_DIR", crate::support::private_runtime_dir())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"));
    let run = run_bounded(&mut command, None);
    assert!(run.status.success(), "{run:?}");
    run
}

/// What `install mcp claude` writes is a server the real Claude Code connects to; installing
/// twice changes nothing; `uninstall` takes it out again, keeping a backup.
#[test]
fn install_mcp_claude_writes_a_server_claude_code_connects_to() {
    let cli = crate::interop::Cli::V2_1_330;
    let (home, _) = quiet_world("mcp-install-claude");
    let config = home.join(".claude.json");
    std::fs::write(&config, r#"{"numStartups": 3}"#).expect("an existing config");
    let run = install(&home, "install", "claude");
    assert!(run.stdout.starts_with("added the askpane MCP server (Claude Code) to"), "{run:?}");
    let run = install(&home, "install", "claude");
    assert_eq!(
        run.stdout,
        format!("{} already has the askpane MCP server; nothing changed\n", config.display())
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("read")).expect("JSON");
    assert_eq!(written["numStartups"], 3, "{written}");
    assert_eq!(
        written["mcpServers"]["askpane"],
        json!({"type": "stdio", "command": env!("CARGO_BIN_EXE_askpane"), "args": ["mcp"],
               "env": {}})
    );

    let mut list = Command::new(cli.binary());
    list.args(["mcp", "list"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .current_dir(&home);
    let listed = run_bounded(&mut list, None);
    let connected = format!("askpane: {} mcp - ✔ Connected", env!("CARGO_BIN_EXE_askpane"));
    assert!(listed.stdout.contains(&connected), "{listed:?}");

    let run = install(&home, "uninstall", "claude");
    assert!(run.stdout.starts_with("removed the askpane MCP server from"), "{run:?}");
    let left: Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("read")).expect("JSON");
    assert!(
        left.get("mcpServers").is_none_or(|servers| servers.get("askpane").is_none()),
        "{left}"
    );
    let backups = std::fs::read_dir(&home)
        .expect("list HOME")
        .filter_map(Result::ok)
        .filter(|entry| {
            entry.file_name().to_string_lossy().starts_with(".claude.json.askpane-backup-")
        })
        .count();
    assert_eq!(backups, 2, "one backup per change");
}

/// Codex (TOML, comments kept), Gemini CLI and OpenCode get their entries with the timeout
/// each needs, merged into what is there.
#[test]
fn install_mcp_writes_each_clients_entry_with_its_timeout() {
    let (home, _) = quiet_world("mcp-install-clients");
    let binary = env!("CARGO_BIN_EXE_askpane");
    std::fs::create_dir_all(home.join(".codex")).expect("mkdir");
    let codex = "# mine\nmodel = \"o4\"\n";
    std::fs::write(home.join(".codex/config.toml"), codex).expect("write");
    install(&home, "install", "codex");
    assert_eq!(
        std::fs::read_to_string(home.join(".codex/config.toml")).expect("read"),
        format!(
            "{codex}\n[mcp_servers.askpane]\ncommand = \"{binary}\"\nargs = [\"mcp\"]\n\
             tool_timeout_sec = 86400\n"
        )
    );
    install(&home, "uninstall", "codex");
    assert_eq!(std::fs::read_to_string(home.join(".codex/config.toml")).expect("read"), codex);

    let written = |path: &str| -> Value {
        let text = std::fs::read_to_string(home.join(path)).expect("read");
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}: {text}"))
    };
    install(&home, "install", "gemini");
    assert_eq!(
        written(".gemini/settings.json"),
        json!({"mcpServers": {"askpane": {"command": binary, "args": ["mcp"], "timeout": 86_400_000}}})
    );
    install(&home, "install", "opencode");
    assert_eq!(
        written(".config/opencode/opencode.json"),
        json!({"mcp": {"askpane": {"type": "local", "command": [binary, "mcp"], "enabled": true}}})
    );
}

/// The inbox is killed (-9) while the call's question waits in it: `askpane mcp` starts a new
/// inbox and asks it again (the code `hook` and `ask` use), and the call still ends with the
/// answer the new inbox's window sends.
/// The result when a `--timeout` of `secs` ran out on the `Layout: Tabs` preset that nobody
/// confirmed in the inbox's window (issue 24 item 6): an error result that tells it apart.
fn unconfirmed_tabs(secs: u64) -> Value {
    let text = format!(
        "No response after {secs}s \u{2014} the user may be away from keyboard. Proceed using \
         your best judgment based on the context so far; you can re-ask this question later if \
         it's still relevant.\n\nAnswers were filled in in advance for the user to confirm, but \
         nobody confirmed them: \"Which layout should the settings page use?\"=\"Tabs\". They \
         are not the user's answers."
    );
    json!({"content": [{"type": "text", "text": text}], "isError": true, "resultType": "complete"})
}

#[test]
fn python_sdk_call_survives_the_inbox_being_killed() {
    let Some(python) = python() else { return };
    let world = World::with_inbox("mcp-inbox-killed");
    let first = world.locked_pid().expect("the inbox's pid in its lock");
    let answers = world.answers("answers.json", &json!({"Layout": "Tabs"}));
    let env = json!({
        "XDG_RUNTIME_DIR": world.root.join("run").display().to_string(),
        "XDG_STATE_HOME": world.root.join("state").display().to_string(),
        // To start a new inbox, the server needs the display the killed one had.
        "DISPLAY": world.xvfb.display(),
        "ASKPANE_ANSWERS": answers.display().to_string(),
        "ASKPANE_TIMEOUT": "4",
    });
    let mut command = python_client(&python, "call", &arguments(), &[], &env, &world.root);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut client = Process::new(command.spawn().expect("start the Python client"));
    let stdout = read_all(client.child.stdout.take().expect("piped stdout"));
    let stderr = read_all(client.child.stderr.take().expect("piped stderr"));
    let mut inbox = world.connect();
    let deadline = Instant::now() + WAIT;
    while inbox.list().is_empty() {
        assert!(Instant::now() < deadline, "the question never reached the inbox");
        thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill").args(["-KILL", &first.to_string()]).status();
    assert!(killed.is_ok_and(|status| status.success()), "kill -9 {first}");
    let status = client.wait(WAIT).expect("the client ends");
    let (stdout, stderr) = (crate::support::collect(stdout), crate::support::collect(stderr));
    assert!(status.success(), "{stdout}\n{stderr}");
    assert_eq!(event(&events(&stdout), "result")["result"], unconfirmed_tabs(4), "{stderr}");
    let second = world.locked_pid().expect("a new inbox's pid in the lock");
    assert_ne!(first, second, "the answer came from the inbox that was killed");
}

/// The client goes away mid-question (closes the server's input, as a client does when it
/// quits): `askpane mcp` ends at once (issue 24 item 22: it ended 5 s later, when rmcp gave up
/// waiting for the call), the question is withdrawn from the inbox before it ends, and the
/// call's reply (withdrawn) is its last, whole line.
#[test]
fn a_client_that_goes_away_takes_its_question_out_of_the_inbox() {
    let world = World::with_inbox("mcp-client-gone");
    let mut command = crate::support::askpane_command();
    command
        .arg("mcp")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_RUNTIME_DIR", world.root.join("run"))
        .env("XDG_STATE_HOME", world.root.join("state"))
        .current_dir(&world.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = Process::new(command.spawn().expect("start askpane mcp"));
    let mut input = server.child.stdin.take().expect("piped stdin");
    let stdout = read_all(server.child.stdout.take().expect("piped stdout"));
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ask_user_question", "arguments": arguments()}});
    for line in [INITIALIZE.to_owned(), INITIALIZED.to_owned(), call.to_string()] {
        input.write_all(line.as_bytes()).and_then(|()| input.write_all(b"\n")).expect("write");
    }
    let mut inbox = world.connect();
    let deadline = Instant::now() + WAIT;
    while inbox.list().is_empty() {
        assert!(Instant::now() < deadline, "the question never reached the inbox");
        thread::sleep(Duration::from_millis(20));
    }
    drop(input);
    let closed = Instant::now();
    let status = server.wait(WAIT).expect("askpane mcp ends when its client goes away");
    let took = closed.elapsed();
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_secs(1), "askpane mcp ended {took:?} after its input closed");
    // Withdrawn before the process ended: the inbox shows it no longer.
    let deadline = Instant::now() + Duration::from_secs(1);
    while !inbox.list().is_empty() {
        assert!(Instant::now() < deadline, "the question is still in the inbox 1 s later");
        thread::sleep(Duration::from_millis(20));
    }
    let stdout = crate::support::collect(stdout);
    assert!(stdout.ends_with('\n'), "the output is cut: {stdout:?}");
    let replies = replies(&stdout);
    let reply = reply_to(&replies, "2", &stdout);
    let result: Value = serde_json::from_str(&reply["result"]).expect("a result");
    assert_eq!(result["isError"], true, "{result}");
}
