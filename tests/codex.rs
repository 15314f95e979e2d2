//! Codex's `request_user_input` against the real Codex CLI (issue 13): `codex app-server`
//! 0.169.0 (from npm through `scripts/codex-cli`, cached outside the repo) with the fake
//! Responses API of `tests/fixtures/codex/fake_model_server.py` on a port chosen at run time,
//! and a throwaway CODEX_HOME and HOME. The test hosts the app-server itself (JSON-RPC lines on
//! stdio) and answers with `protocol::codex`: what the model then reads is taken from the fake
//! model's log. `askpane codex` (the host mode) is not built yet; these prove the encoding it
//! will send, above all the honest decline.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use askpane::protocol::Outcome;
use askpane::protocol::codex::{self, UserInputRequest};

use crate::support::{Process, WAIT, read_lossy, scratch_dir, tail};

const VERSION: &str = "0.169.0";

fn binary() -> PathBuf {
    let cache = std::env::var_os("ASKPANE_CODEX_CACHE").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set, to find the CLI cache");
            PathBuf::from(home).join(".cache/askpane/codex-cli")
        },
        PathBuf::from,
    );
    let binary = cache.join("bin").join(format!("codex-{VERSION}"));
    assert!(
        binary.is_file(),
        "Codex {VERSION} is not installed at {}: run scripts/codex-cli (needs the npm registry)",
        binary.display()
    );
    binary
}

/// One Codex app-server, hosted by the test, with its fake model.
struct AppServer {
    root: PathBuf,
    _fake: Process,
    codex: Process,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl AppServer {
    fn start(name: &str) -> AppServer {
        let binary = binary();
        let root = scratch_dir(name);
        for dir in ["codex_home", "home", "work", "model"] {
            fs::create_dir_all(root.join(dir)).expect("make a folder");
        }
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex");
        let port_file = root.join("model/port");
        let mut fake = Command::new("python3");
        fake.arg(fixture.join("fake_model_server.py"))
            .arg(root.join("model"))
            .arg(&port_file)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let fake = Process::new(fake.spawn().expect("start the fake model (python3)"));
        let deadline = Instant::now() + WAIT;
        let port = loop {
            if let Ok(port) = read_lossy(&port_file).trim().parse::<u16>() {
                break port;
            }
            assert!(Instant::now() < deadline, "the fake model did not start");
            thread::sleep(Duration::from_millis(20));
        };
        let config = fs::read_to_string(fixture.join("config.toml.template"))
            .expect("read the config template")
            .replace("__PORT__", &port.to_string());
        fs::write(root.join("codex_home/config.toml"), config).expect("write config.toml");
        let mut command = Command::new(binary);
        command
            .arg("app-server")
            .current_dir(root.join("work"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("CODEX_HOME", root.join("codex_home"))
            .env("FAKE_API_KEY", "sk-dummy-not-a-real-key")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(root.join("codex.stderr")).expect("stderr file"));
        let mut codex = Process::new(command.spawn().expect("start codex app-server"));
        let stdin = codex.child.stdin.take().expect("piped stdin");
        let stdout = codex.child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && sender.send(value).is_err()
                {
                    return;
                }
            }
        });
        AppServer { root, _fake: fake, codex, stdin, lines, next_id: 1 }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to codex app-server");
    }

    /// Sends a request and waits for its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}));
        let reply = self.receive(|line| line["id"] == id && line.get("method").is_none());
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    /// Waits for the first line that `wanted` accepts.
    fn receive(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(_) => {}
                Err(_) => panic!("codex app-server said nothing in time: {}", self.report()),
            }
        }
    }

    /// Starts a thread with the question tool switched on for it alone, and a turn.
    fn ask(&mut self) {
        let capabilities = json!({"experimentalApi": false, "requestAttestation": false});
        let client = json!({"name": "askpane_test", "title": "askpane test", "version": "0"});
        self.call("initialize", json!({"clientInfo": client, "capabilities": capabilities}));
        self.send(&json!({"method": "initialized"}));
        let work = self.root.join("work");
        let thread = self.call(
            "thread/start",
            json!({"cwd": work, "approvalPolicy": "never", "sandbox": "read-only",
                "ephemeral": true,
                "config": {"features.default_mode_request_user_input": true}}),
        );
        let thread_id = thread["thread"]["id"].as_str().expect("a thread id").to_owned();
        let text = "Set up a new service. Ask me which database to use and what to name it.";
        self.call(
            "turn/start",
            json!({"threadId": thread_id,
                "input": [{"type": "text", "text": text, "text_elements": []}]}),
        );
    }

    /// Answers the question with `outcome` (through `protocol::codex`), waits for the turn to
    /// end, and returns what the model read: the function_call_output of the next request.
    fn answer(&mut self, outcome: impl Fn(&UserInputRequest) -> Outcome) -> Value {
        let asked = self.receive(|line| line["method"] == "item/tool/requestUserInput");
        let request: UserInputRequest =
            serde_json::from_value(asked["params"].clone()).expect("a request_user_input");
        codex::to_ask(&request).expect("askpane can show Codex's questions");
        let result = codex::response(&request, &outcome(&request)).expect("a result to send");
        self.send(&json!({"id": asked["id"], "result": result}));
        self.receive(|line| line["method"] == "turn/completed");
        let log = read_lossy(&self.root.join("model/model_requests.jsonl"));
        let output = log
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .flat_map(|record| record["body"]["input"].as_array().cloned().unwrap_or_default())
            .find(|item| item["type"] == "function_call_output")
            .unwrap_or_else(|| panic!("the model read no tool output: {}", self.report()));
        let text = output["output"].as_str().expect("the output is text");
        serde_json::from_str(text).expect("the output is the answers JSON")
    }

    fn report(&self) -> String {
        format!("\n--- codex stderr:\n{}", tail(&read_lossy(&self.root.join("codex.stderr")), 3000))
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        let _ = self.codex.wait(Duration::from_millis(10));
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

#[test]
fn a_decline_reaches_codexs_model_in_words_not_as_an_empty_answer() {
    let mut server = AppServer::start("codex-decline");
    server.ask();
    let read = server.answer(|_| Outcome::declined("I'll decide this myself later"));
    let note = "user_note: The user declined to answer these questions and said: I'll decide \
                this myself later";
    assert_eq!(
        read,
        json!({"answers": {"db_choice": {"answers": [note]}, "project_name": {"answers": [note]}}}),
        "{}",
        server.report()
    );
}

#[test]
fn picks_notes_and_other_reach_codexs_model_as_its_own_ui_sends_them() {
    use askpane::protocol::{Draft, Pick, build_answers};
    let mut server = AppServer::start("codex-answer");
    server.ask();
    let read = server.answer(|request| {
        let ask = codex::to_ask(request).expect("valid").ask;
        let mut drafts = vec![Draft::default(), Draft::default()];
        drafts[0].pick(&ask.questions()[0], Pick::Option(1));
        drafts[0].set_notes("prefer WAL mode".to_owned());
        drafts[1].set_other_text(&ask.questions()[1], "my-custom-service".to_owned());
        Outcome::Answered(build_answers(&ask, &drafts).expect("fits"))
    });
    // What the probe captured from Codex's own terminal UI (`tui-notes`).
    assert_eq!(
        read,
        json!({"answers": {
            "db_choice": {"answers": ["SQLite", "user_note: prefer WAL mode"]},
            "project_name": {"answers": ["None of the above", "user_note: my-custom-service"]}}}),
        "{}",
        server.report()
    );
}
