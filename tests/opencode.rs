//! `askpane opencode` against the real OpenCode CLI (issue 13): `opencode serve` 1.18.33 (from
//! npm through `scripts/opencode-cli`, cached outside the repo) with the fake OpenAI-compatible
//! model of `tests/fixtures/opencode/fake_openai.py`, each on a port chosen at run time, with a
//! throwaway HOME and XDG folders. askpane attaches to the server, its inbox shows the question
//! in a browser page (`--ui web`, no display needed), and each test checks the exact text the
//! model read next, from the fake model's log.
//!
//! Questions are settled without clicks: `--answers` with `--timeout` (the inbox sends the
//! complete preset when the time runs out), `--answers --submit` and `--decline` (decided at
//! once), or by a reply sent to OpenCode directly (another client answered).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Process, WAIT, read_lossy, run_bounded, scratch_dir, tail};

/// The OpenCode version under test (`scripts/opencode-cli` installs exactly this one).
const VERSION: &str = "1.18.33";
/// How long OpenCode may take to start listening (its first start sets up its config folder).
const START_LIMIT: Duration = Duration::from_secs(60);

const DATABASE: &str = "Which database should the service use?";
const FEATURES: &str = "Which features should be enabled?";

/// `CACHE/bin/opencode-<version>` and `CACHE/plugin`, the layout `scripts/opencode-cli` makes.
fn cache() -> PathBuf {
    crate::support::agents::cli_cache("ASKPANE_OPENCODE_CACHE", "opencode-cli")
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

/// One test's OpenCode: the fake model, `opencode serve`, and askpane attached to it.
struct World {
    root: PathBuf,
    url: String,
    port: u16,
    /// `OPENCODE_SERVER_PASSWORD` of the server, when it has one.
    password: Option<String>,
    model_log: PathBuf,
    _fake: Process,
    opencode: Option<Process>,
    askpane: Option<Process>,
    http: ureq::Agent,
}

impl World {
    fn start(name: &str) -> World {
        World::start_with(name, None)
    }

    /// The world, its OpenCode server wanting `password`.
    fn start_with(name: &str, password: Option<&str>) -> World {
        let root = scratch_dir(name);
        let home = root.join("home");
        let config = home.join(".config/opencode");
        fs::create_dir_all(&config).expect("make the config folder");
        for dir in ["run", "state", "home/.local/share", "home/.cache", "home/.local/state"] {
            fs::create_dir_all(root.join(dir)).expect("make a folder");
        }
        fs::set_permissions(root.join("run"), fs::Permissions::from_mode(0o700))
            .expect("narrow the runtime dir");
        // OpenCode installs its plugin package into its config folder on first start: a copy
        // of the one scripts/opencode-cli installed, instead of a download per test. Its 64 MB
        // of node_modules are hard links (OpenCode only reads them; copying them was seconds
        // of each test), its package files real copies; a cache on another file system is
        // copied whole.
        let plugin = cache().join("plugin");
        let linked = Command::new("cp")
            .arg("-al")
            .arg(plugin.join("node_modules"))
            .arg(&config)
            .status()
            .expect("run cp");
        let copied = match linked.success() {
            true => ["package.json", "package-lock.json"]
                .iter()
                .filter(|name| plugin.join(name).exists())
                .all(|name| fs::copy(plugin.join(name), config.join(name)).is_ok()),
            false => Command::new("cp")
                .arg("-r")
                .arg(plugin.join("."))
                .arg(&config)
                .status()
                .expect("run cp")
                .success(),
        };
        assert!(copied, "cannot copy the OpenCode plugin from {}", cache().display());
        let model_log = root.join("model-requests.jsonl");
        let port_file = root.join("fake.port");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode");
        let mut fake = Command::new("python3");
        fake.arg(fixture.join("fake_openai.py"))
            .args(["--port", "0", "--log"])
            .arg(&model_log)
            .arg("--portfile")
            .arg(&port_file)
            .stdout(Stdio::null())
            .stderr(fs::File::create(root.join("fake.stderr")).expect("stderr file"));
        let fake = Process::new(fake.spawn().expect("start the fake model (python3)"));
        let port = free_port();
        let mut world = World {
            url: format!("http://127.0.0.1:{port}"),
            port,
            password: password.map(str::to_owned),
            root,
            model_log,
            _fake: fake,
            opencode: None,
            askpane: None,
            http: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                .build()
                .into(),
        };
        // OpenCode takes seconds to start: it starts while the fake model does. It reads a
        // project's config when first asked about that directory, which `wait_for_opencode`
        // does once the config names the fake model's port.
        fs::create_dir_all(world.root.join("project")).expect("make the project folder");
        world.spawn_opencode_on_a_free_port();
        let deadline = Instant::now() + WAIT;
        let fake_port = loop {
            if let Ok(port) = read_lossy(&port_file).trim().parse::<u16>() {
                break port;
            }
            assert!(Instant::now() < deadline, "the fake model did not start");
            thread::sleep(Duration::from_millis(20));
        };
        let config_text = fs::read_to_string(fixture.join("opencode.json"))
            .expect("read the provider config")
            .replace("127.0.0.1:40825", &format!("127.0.0.1:{fake_port}"));
        fs::write(world.root.join("opencode.json.in"), config_text).expect("keep the config");
        world.project("project");
        world.wait_for_opencode();
        world
    }

    /// Starts `opencode serve` on this world's port (again, after [`World::stop_opencode`]),
    /// in the first project, and waits until it answers.
    fn start_opencode(&mut self) {
        self.spawn_opencode();
        self.wait_for_opencode();
    }

    /// Starts `opencode serve` on this world's port, on another free one while the port turns
    /// out taken: [`free_port`] lets its port go before OpenCode binds it, and another test
    /// running beside this one may bind it first (OpenCode then ends at once with `ServeError`;
    /// seen once in a full run). Bounded: three ports.
    fn spawn_opencode_on_a_free_port(&mut self) {
        for _ in 0..3 {
            self.spawn_opencode();
            let deadline = Instant::now() + START_LIMIT;
            let stdout = self.root.join("opencode.stdout");
            loop {
                if read_lossy(&stdout).contains("opencode server listening on") {
                    return;
                }
                let ended = self.opencode.as_mut().and_then(|serve| serve.child.try_wait().ok());
                if ended.flatten().is_some() {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "opencode serve did not say it listens within {START_LIMIT:?}: {}",
                    self.report()
                );
                thread::sleep(Duration::from_millis(20));
            }
            let stderr = read_lossy(&self.root.join("opencode.stderr"));
            assert!(stderr.contains("ServeError"), "opencode serve ended: {}", self.report());
            self.port = free_port();
            self.url = format!("http://127.0.0.1:{}", self.port);
        }
        panic!("opencode serve found three ports taken: {}", self.report());
    }

    /// Starts `opencode serve` on this world's port, in the first project.
    fn spawn_opencode(&mut self) {
        let binary = cache().join("bin").join(format!("opencode-{VERSION}"));
        assert!(
            binary.is_file(),
            "OpenCode {VERSION} is not installed at {}: run scripts/opencode-cli (needs the npm registry)",
            binary.display()
        );
        let home = self.root.join("home");
        let mut opencode = Command::new(&binary);
        opencode
            .args(["serve", "--port", &self.port.to_string(), "--hostname", "127.0.0.1"])
            .current_dir(self.root.join("project"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_SHARE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .stdin(Stdio::null())
            .stdout(fs::File::create(self.root.join("opencode.stdout")).expect("stdout file"))
            .stderr(fs::File::create(self.root.join("opencode.stderr")).expect("stderr file"));
        if let Some(password) = &self.password {
            opencode.env("OPENCODE_SERVER_PASSWORD", password);
        }
        self.opencode = Some(Process::new(opencode.spawn().expect("start opencode serve")));
    }

    /// Waits until `opencode serve` answers for the first project.
    fn wait_for_opencode(&self) {
        let deadline = Instant::now() + START_LIMIT;
        // First the line OpenCode prints once it listens: a request that reaches it the moment
        // it starts listening hangs (each OpenCode start cost the probe's 3 s timeout; issue 35
        // measured it), one sent after the line is answered at once.
        let stdout = self.root.join("opencode.stdout");
        while !read_lossy(&stdout).contains("opencode server listening on") {
            assert!(
                Instant::now() < deadline,
                "opencode serve did not say it listens within {START_LIMIT:?}: {}",
                self.report()
            );
            thread::sleep(Duration::from_millis(20));
        }
        // A request sent while OpenCode starts can hang for long (seen in the probe): each try
        // has a short timeout of its own.
        let probe: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(3)))
            .build()
            .into();
        loop {
            let listed = self.authorized(probe.get(format!("{}/question", self.url))).call();
            if listed.is_ok_and(|response| response.status() == 200) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "opencode serve did not listen within {START_LIMIT:?}: {}",
                self.report()
            );
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops `opencode serve` (SIGTERM, by its PID) and waits until it is gone.
    fn stop_opencode(&mut self) {
        self.opencode.take();
    }

    /// `request` with this world's Basic auth, when the server has a password.
    fn authorized<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        use base64::Engine as _;
        match &self.password {
            Some(password) => {
                let token = base64::engine::general_purpose::STANDARD
                    .encode(format!("opencode:{password}"));
                request.header("Authorization", format!("Basic {token}"))
            }
            None => request,
        }
    }

    /// A project folder with the fake provider's config.
    fn project(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        fs::create_dir_all(&dir).expect("make a project folder");
        fs::copy(self.root.join("opencode.json.in"), dir.join("opencode.json"))
            .expect("write opencode.json");
        dir
    }

    fn call(&self, method: &str, path: &str, directory: &Path, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.url);
        let directory = directory.to_string_lossy().into_owned();
        let response = match (method, body) {
            ("POST", Some(body)) => self
                .authorized(self.http.post(url))
                .query("directory", directory)
                .content_type("application/json")
                .send(body.to_string()),
            ("POST", None) => {
                self.authorized(self.http.post(url)).query("directory", directory).send_empty()
            }
            _ => self.authorized(self.http.get(url)).query("directory", directory).call(),
        };
        let mut response = response.unwrap_or_else(|error| panic!("{method} {path}: {error}"));
        let status = response.status();
        let text = response.body_mut().read_to_string().expect("read a response");
        assert!(status.is_success(), "{method} {path}: {status} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// Starts a session in `directory` whose model asks the question of `scenario`; its id.
    fn ask(&self, directory: &Path, scenario: &str) -> String {
        let session = self.call("POST", "/session", directory, Some(json!({"title": "test"})));
        let id = session["id"].as_str().expect("a session id").to_owned();
        self.prompt(directory, &id, &format!("Ask me. SCENARIO={scenario}"));
        id
    }

    fn prompt(&self, directory: &Path, session: &str, text: &str) {
        let body = json!({"parts": [{"type": "text", "text": text}]});
        self.call("POST", &format!("/session/{session}/prompt_async"), directory, Some(body));
    }

    /// Waits until OpenCode says `session` (in `directory`) is idle: its turn has ended.
    fn wait_idle(&self, directory: &Path, session: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let statuses = self.call("GET", "/session/status", directory, None);
            // A session OpenCode does not list is idle (it lists a busy one as `{"type":"busy"}`).
            let status = &statuses[session]["type"];
            if status.is_null() || status == "idle" {
                return;
            }
            assert!(Instant::now() < deadline, "{session} is still {status}: {}", self.report());
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The questions pending in `directory`, as OpenCode lists them.
    fn pending(&self, directory: &Path) -> Vec<Value> {
        self.call("GET", "/question", directory, None).as_array().cloned().unwrap_or_default()
    }

    /// Waits for a question to be pending in `directory`; its OpenCode id.
    fn wait_pending(&self, directory: &Path) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(id) = self.pending(directory).first().and_then(|q| q["id"].as_str()) {
                return id.to_owned();
            }
            assert!(Instant::now() < deadline, "no question asked in time: {}", self.report());
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The model requests so far (from the fake model's log), as request bodies.
    fn model_requests(&self) -> Vec<Value> {
        read_lossy(&self.model_log)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|entry| entry["method"] == "POST")
            .map(|entry| entry["body"].clone())
            .collect()
    }

    /// The tool results the model read, in order: the content of each request whose last
    /// message is the tool's.
    fn tool_results(&self) -> Vec<String> {
        self.model_requests()
            .iter()
            .filter_map(|body| body["messages"].as_array()?.last().cloned())
            .filter(|message| message["role"] == "tool")
            .filter_map(|message| message["content"].as_str().map(str::to_owned))
            .collect()
    }

    /// Waits until the model has read `count` tool results; them.
    fn wait_tool_results(&self, count: usize) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let results = self.tool_results();
            if results.len() >= count {
                return results;
            }
            assert!(
                Instant::now() < deadline,
                "the model read {} tool results, not {count}: {}",
                results.len(),
                self.report()
            );
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts `askpane opencode --url … --ui web <args>` with this world's private folders.
    fn attach(&mut self, args: &[&str]) {
        let mut command = self.askpane(&["opencode", "--url", &self.url, "--ui", "web"]);
        command.args(args);
        command.stdin(Stdio::null()).stdout(Stdio::null());
        command.stderr(fs::File::create(self.root.join("askpane.stderr")).expect("stderr file"));
        self.askpane = Some(Process::new(command.spawn().expect("start askpane opencode")));
    }

    fn askpane(&self, args: &[&str]) -> Command {
        let mut command = crate::support::askpane_unset_also(args, &["OPENCODE_"]);
        command
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .current_dir(&self.root);
        command
    }

    fn answers(&self, answers: &Value) -> String {
        let path = self.root.join("answers.json");
        fs::write(&path, answers.to_string()).expect("write an answers file");
        path.to_string_lossy().into_owned()
    }

    /// A connection to the inbox askpane started, subscribed to its requests.
    fn subscribe(&self) -> Subscriber {
        let socket = self.root.join("run/askpane/inbox.sock");
        let deadline = Instant::now() + WAIT;
        let stream = loop {
            if let Ok(stream) = UnixStream::connect(&socket) {
                break stream;
            }
            assert!(Instant::now() < deadline, "no inbox started: {}", self.report());
            thread::sleep(Duration::from_millis(50));
        };
        stream.set_read_timeout(Some(WAIT)).expect("set a read timeout");
        let mut writer = stream.try_clone().expect("clone the stream");
        writer.write_all(b"{\"type\":\"subscribe\"}\n").expect("subscribe");
        Subscriber { reader: BufReader::new(stream), writer }
    }

    fn askpane_log(&self) -> String {
        read_lossy(&self.root.join("askpane.stderr"))
    }

    /// What went on, for a failure message.
    fn report(&self) -> String {
        format!(
            "\n--- askpane stderr:\n{}\n--- inbox log:\n{}\n--- opencode stderr:\n{}\n--- model requests: {}",
            tail(&self.askpane_log(), 3000),
            tail(&read_lossy(&self.root.join("state/askpane/inbox.log")), 2000),
            tail(&read_lossy(&self.root.join("opencode.stderr")), 2000),
            self.model_requests().len()
        )
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // askpane first (it lets go of its questions), then the inbox it started, then OpenCode.
        // askpane is only told to stop here, not waited for: after letting go of its questions
        // it waits up to 2 s for its event thread, which reads OpenCode's stream, and OpenCode
        // stopping ends that stream at once (waiting first cost each test 2 s; issue 35).
        if let Some(askpane) = &mut self.askpane {
            askpane.terminate();
        }
        let mut quit = self.askpane(&["inbox", "--quit"]);
        let _ = run_bounded(&mut quit, None);
        self.opencode.take();
        self.askpane.take();
        if !thread::panicking() {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// A subscriber on the inbox socket.
struct Subscriber {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Subscriber {
    /// The requests waiting in the inbox, once there are any.
    fn waiting(&mut self) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            self.writer.write_all(b"{\"type\":\"list\"}\n").expect("ask for the list");
            let list = self.receive_kind("list");
            let requests = list["requests"].as_array().cloned().unwrap_or_default();
            if !requests.is_empty() {
                return requests;
            }
            assert!(Instant::now() < deadline, "nothing reached the inbox");
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Skips lines until one of `kind` comes.
    fn receive_kind(&mut self, kind: &str) -> Value {
        loop {
            let mut line = String::new();
            let read = self.reader.read_line(&mut line).expect("a line from the inbox in time");
            assert!(read > 0, "the inbox closed the connection");
            let message: Value = serde_json::from_str(&line).expect("the inbox sends JSON");
            if message["type"] == kind {
                return message;
            }
        }
    }
}

/// What OpenCode's model reads for an answer (its own wording, `model-tool-results.txt`).
fn answered(pieces: &[(&str, &str)]) -> String {
    let pieces: Vec<String> =
        pieces.iter().map(|(question, answer)| format!("\"{question}\"=\"{answer}\"")).collect();
    format!(
        "User has answered your questions: {}. You can now continue with the user's answers in mind.",
        pieces.join(", ")
    )
}

#[test]
fn the_fixture_wording_is_what_the_tests_expect() {
    // The captured tool result of the first probe run, byte for byte.
    let captured = crate::support::fixture("opencode/model-tool-results.txt");
    let expected =
        serde_json::to_string(&answered(&[(DATABASE, "PostgreSQL"), (FEATURES, "Auth, Billing")]))
            .expect("a JSON string");
    assert!(captured.contains(&expected), "{expected}");
}

#[test]
fn questions_of_two_directories_are_answered_through_the_inbox() {
    let mut world = World::start("opencode-two-dirs");
    let second = world.project("second");
    let answers = world.answers(&json!({
        "Database": "SQLite",
        "Features": {"choose": ["Auth", "Search"], "other": "My own feature"},
    }));
    // No --submit: each question waits in the inbox until its --timeout runs out. Nobody
    // confirms the preset, so each model reads it told apart, never as the answer (issue 24).
    world.attach(&["--answers", &answers, "--timeout", "2"]);
    let first = world.root.join("project");
    world.ask(&first, "default");
    world.ask(&second, "default");
    let results = world.wait_tool_results(2);
    assert_eq!(results.len(), 2, "{}", world.report());
    for result in &results {
        for told in [
            "No response after 2s",
            "nobody confirmed them: ",
            &format!("\"{DATABASE}\"=\"SQLite\""),
            "They are not the user's answers.",
        ] {
            assert!(result.contains(told), "{told:?} not in {result}\n{}", world.report());
        }
    }
    assert!(world.pending(&first).is_empty() && world.pending(&second).is_empty());
    let log = world.askpane_log();
    assert_eq!(log.matches(" timed_out\n").count(), 2, "{log}");
}

#[test]
fn submitted_answers_reach_the_model_as_opencode_words_them() {
    let mut world = World::start("opencode-submit");
    let answers =
        world.answers(&json!({"Database": "PostgreSQL", "Features": ["Auth", "Billing"]}));
    world.attach(&["--answers", &answers, "--submit"]);
    world.ask(&world.root.join("project"), "default");
    let results = world.wait_tool_results(1);
    // Exactly the capture's text for this reply.
    assert_eq!(
        results,
        vec![answered(&[(DATABASE, "PostgreSQL"), (FEATURES, "Auth, Billing")])],
        "{}",
        world.report()
    );
    // Decided by the flags, without the inbox, and recorded all the same, as from OpenCode.
    let mut history = world.askpane(&["history", "--json"]);
    let listed = crate::support::run_bounded(&mut history, None);
    let entry: Value = serde_json::from_str(listed.stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{error}: {listed:?}"));
    assert_eq!((&entry["outcome"], &entry["agent"]), (&json!("answered"), &json!("OpenCode")));
    let reply: Value = serde_json::from_str(entry["reply"].as_str().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{error}: {entry}"));
    assert_eq!(reply, json!({"action": "reply", "answers": [["PostgreSQL"], ["Auth", "Billing"]]}));
    // What OpenCode's model read, in OpenCode's words (not Claude Code's).
    assert_eq!(entry["model_text"], json!(results[0]), "{entry}");
}

#[test]
fn a_decline_dismisses_the_question_and_the_turn_stops() {
    let mut world = World::start("opencode-decline");
    world.attach(&["--decline", "Not now"]);
    let project = world.root.join("project");
    let session = world.ask(&project, "default");
    // The reject reaches OpenCode: nothing is pending, and the model is not called again.
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains(" asks ") || !world.pending(&project).is_empty() {
        assert!(Instant::now() < deadline, "the question was not dismissed: {}", world.report());
        thread::sleep(Duration::from_millis(100));
    }
    let requests = world.model_requests().len();
    // The turn is over once OpenCode says the session is idle (it is busy for as long as its
    // loop may still call the model): no call came by then, none comes in this turn.
    world.wait_idle(&project, &session);
    assert_eq!(world.tool_results(), Vec::<String>::new(), "{}", world.report());
    assert_eq!(world.model_requests().len(), requests, "the turn went on: {}", world.report());
    // The next prompt shows what the model reads of a decline: OpenCode's fixed text only.
    world.prompt(&project, &session, "Carry on.");
    let deadline = Instant::now() + WAIT;
    let dismissed = loop {
        let found = world.model_requests().iter().rev().find_map(|body| {
            body["messages"].as_array()?.iter().rev().find(|m| m["role"] == "tool").cloned()
        });
        if let Some(message) = found {
            break message;
        }
        assert!(Instant::now() < deadline, "no follow-up request: {}", world.report());
        thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(dismissed["content"], "The user dismissed this question", "{dismissed}");
}

#[test]
fn a_question_answered_in_another_client_leaves_the_inbox_at_once() {
    let mut world = World::start("opencode-elsewhere");
    // No flags: the question waits in the inbox for a person.
    world.attach(&[]);
    let project = world.root.join("project");
    world.ask(&project, "default");
    let id = world.wait_pending(&project);
    let mut inbox = world.subscribe();
    let waiting = inbox.waiting();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0]["tool_use_id"], id.as_str(), "{waiting:?}");
    let from = waiting[0]["from"].as_str().unwrap_or_default();
    assert!(from.starts_with("opencode · ") && from.contains("/project · ses_"), "{from}");
    // OpenCode's TUI (here: a direct reply) answers first.
    let body = json!({"answers": [["DynamoDB"], ["Search"]]});
    world.call("POST", &format!("/question/{id}/reply"), &project, Some(body));
    let settled = inbox.receive_kind("settled");
    assert_eq!(settled["outcome"], "withdrawn", "{settled}");
    let results = world.wait_tool_results(1);
    assert_eq!(results, vec![answered(&[(DATABASE, "DynamoDB"), (FEATURES, "Search")])]);
    assert!(world.askpane_log().contains(&format!("{id} was answered elsewhere")));
}

#[test]
fn an_aborted_session_takes_its_question_out_of_the_inbox() {
    let mut world = World::start("opencode-abort");
    world.attach(&[]);
    let project = world.root.join("project");
    let session = world.ask(&project, "default");
    let id = world.wait_pending(&project);
    let mut inbox = world.subscribe();
    inbox.waiting();
    // An abort leaves the question listed in OpenCode, but its model will never read a reply.
    world.call("POST", &format!("/session/{session}/abort"), &project, None);
    let settled = inbox.receive_kind("settled");
    assert_eq!(settled["outcome"], "withdrawn", "{settled}");
    assert!(world.askpane_log().contains(&format!("the session of {id} ended")));
}

#[test]
fn askpane_connects_again_when_the_server_restarts() {
    let mut world = World::start("opencode-restart");
    let answers =
        world.answers(&json!({"Database": "PostgreSQL", "Features": ["Auth", "Billing"]}));
    world.attach(&["--answers", &answers, "--submit"]);
    let project = world.root.join("project");
    // askpane is attached before the question (it lists what is pending, then follows events).
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains("answering the questions") {
        assert!(Instant::now() < deadline, "askpane did not start: {}", world.report());
        thread::sleep(Duration::from_millis(50));
    }
    world.stop_opencode();
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains("connecting again") {
        assert!(Instant::now() < deadline, "askpane did not notice: {}", world.report());
        thread::sleep(Duration::from_millis(50));
    }
    // Down for a while: askpane keeps trying (with backoff) and says so once. Its tries are
    // not seen from here: 2 s is three of them (askpane opencode's FIRST_BACKOFF, 250 ms,
    // doubling); OpenCode's own start then adds more.
    thread::sleep(Duration::from_secs(2));
    world.start_opencode();
    world.ask(&project, "default");
    let results = world.wait_tool_results(1);
    assert_eq!(results, vec![answered(&[(DATABASE, "PostgreSQL"), (FEATURES, "Auth, Billing")])]);
    let log = world.askpane_log();
    assert_eq!(log.matches("connecting again").count(), 1, "{log}");
    assert!(log.contains(&format!("connected to {}", world.url)), "{log}");
}

#[test]
fn a_server_with_a_password_is_answered_with_it_and_refuses_without() {
    let mut world = World::start_with("opencode-password", Some("s3cret"));
    let answers = world.answers(&json!({"Database": "SQLite", "Features": ["Search"]}));
    // Without the password: askpane says what is missing, and keeps trying.
    world.attach(&["--answers", &answers, "--submit"]);
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains("wants a password (401)") {
        assert!(Instant::now() < deadline, "no word of the password: {}", world.report());
        thread::sleep(Duration::from_millis(50));
    }
    world.askpane.take();
    // With it (as the variable OpenCode itself reads).
    let mut command = world.askpane(&["opencode", "--url", &world.url, "--answers", &answers]);
    command.arg("--submit").env("OPENCODE_SERVER_PASSWORD", "s3cret");
    command.stdin(Stdio::null()).stdout(Stdio::null());
    command.stderr(fs::File::create(world.root.join("askpane.stderr")).expect("stderr file"));
    world.askpane = Some(Process::new(command.spawn().expect("start askpane opencode")));
    world.ask(&world.root.join("project"), "default");
    let results = world.wait_tool_results(1);
    assert_eq!(results, vec![answered(&[(DATABASE, "SQLite"), (FEATURES, "Search")])]);
    assert!(!world.askpane_log().contains("s3cret"), "the password was logged");
}

// The window, for an OpenCode question (kittest, no process): declining says what OpenCode's
// model will read, and the receipt shows OpenCode's reply and wording.
#[test]
fn the_window_says_what_declining_an_opencode_question_does() {
    use askpane::protocol::opencode::{self, Reply};
    use askpane::protocol::{ReplyFormat, ReplyShape};
    let frame = crate::support::fixture("opencode/question-events.jsonl");
    let raw = frame
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|record| record["raw"].as_str().map(str::to_owned))
        .find(|raw| raw.starts_with("{\"directory\""))
        .expect("a captured global frame");
    let Ok(opencode::Happening::Asked { directory, request }) = opencode::global_event(&raw) else {
        panic!("a question: {raw}");
    };
    let converted = opencode::to_ask(&request, &directory).expect("valid");
    let (mut request, outcome) = crate::ui::request(&converted.message);
    request.core.reply_shape =
        ReplyShape { format: Some(ReplyFormat::OpenCode), always_a_line: true };
    let mut window = crate::ui::window();
    let asked = window.send(request, outcome);
    window.click_button("Decline…");
    let notice = "OpenCode passes no message on: its model reads only “The user dismissed this \
                  question”, and its turn stops.";
    assert!(window.has_label(notice));
    window.click_button("Decline");
    let outcome = crate::ui::outcome(&asked);
    assert_eq!(opencode::reply(&outcome), Some(Reply::Reject));
    assert!(window.has_text_with(&["The user dismissed this question"]));
    assert!(window.has_text_with(&["\"action\": \"reject\""]));
}

#[test]
fn questions_waiting_at_start_are_asked_but_not_those_an_abort_left() {
    let mut world = World::start("opencode-at-start");
    let project = world.root.join("project");
    let aborted = world.ask(&project, "default");
    let left = world.wait_pending(&project);
    world.call("POST", &format!("/session/{aborted}/abort"), &project, None);
    world.ask(&project, "nocustom");
    let deadline = Instant::now() + WAIT;
    while world.pending(&project).len() < 2 {
        assert!(Instant::now() < deadline, "the second question was not asked: {}", world.report());
        thread::sleep(Duration::from_millis(100));
    }
    let answers = world.answers(&json!({"Color": "Blue"}));
    world.attach(&["--answers", &answers, "--submit"]);
    let results = world.wait_tool_results(1);
    assert_eq!(results, vec![answered(&[("Pick a color", "Blue")])], "{}", world.report());
    // The aborted session's question is still listed by OpenCode, and was not answered.
    let pending: Vec<String> = world
        .pending(&project)
        .iter()
        .filter_map(|question| question["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(pending, vec![left.clone()]);
    let log = world.askpane_log();
    assert!(log.contains(&format!("{left} is left from a session that ended")), "{log}");
}

#[test]
fn stopping_askpane_leaves_the_question_to_opencode() {
    let mut world = World::start("opencode-stop");
    world.attach(&[]);
    let project = world.root.join("project");
    world.ask(&project, "default");
    let id = world.wait_pending(&project);
    let mut inbox = world.subscribe();
    inbox.waiting();
    let mut askpane = world.askpane.take().expect("askpane runs");
    let killed = Command::new("kill")
        .args(["-TERM", &askpane.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let status = askpane.wait(WAIT).unwrap_or_else(|| panic!("still runs: {}", world.report()));
    assert_eq!(status.code(), Some(0), "{}", world.report());
    // Its request leaves the inbox; OpenCode still waits for an answer (its TUI, another askpane).
    let settled = inbox.receive_kind("settled");
    assert_eq!(settled["outcome"], "withdrawn", "{settled}");
    let pending: Vec<Value> = world.pending(&project);
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["id"], id.as_str());
    assert!(world.tool_results().is_empty(), "{}", world.report());
}

// ---------------------------------------------------------------------------------------------
// Permission requests (issue 26): OpenCode's config asks before `bash` (tests/fixtures/opencode/
// opencode.json), and the fake model's SCENARIO=bash runs `echo askpane-ran`. The inbox here is
// served by the test process on the world's socket; its window is a channel, so a card is
// decided as a person's click would decide it.

/// The tool result of the fake model's `bash` call when it ran.
const RAN: &str = "askpane-ran\n";
/// What OpenCode's model reads of a reject (OpenCode 1.18.33's words).
const REJECTED: &str = "The user rejected permission to use this specific tool call.";

/// An inbox served by this test process on a world's socket; its window is `window`.
struct TestInbox {
    _served: crate::support::agents::ServedInbox,
    window: crossbeam_channel::Receiver<askpane::transport::Inbound>,
}

impl TestInbox {
    fn serve(world: &World) -> TestInbox {
        let (to_ui, window) = askpane::transport::memory();
        let served = crate::support::agents::ServedInbox::serve(world.root.join("run"), to_ui);
        TestInbox { _served: served, window }
    }

    /// The next permission card the window is given (other events are skipped).
    fn card(&self, world: &World) -> askpane::transport::PermissionAsk {
        use askpane::transport::{ApprovalEvent, Inbound};
        let what = format!("a card ({})", world.report());
        crate::support::agents::next_event(&self.window, &what, |event| match event {
            Inbound::Approval(ApprovalEvent::Permission(card)) => Some(*card),
            _ => None,
        })
    }

    /// The next card the window is told to let go of: its request id.
    fn withdrawn(&self, world: &World) -> String {
        use askpane::transport::{ApprovalEvent, Inbound};
        let what = format!("a card withdrawn ({})", world.report());
        crate::support::agents::next_event(&self.window, &what, |event| match event {
            Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id }) => Some(request_id),
            _ => None,
        })
    }

    /// Whether a card reached the window since the last look.
    fn any_card(&self) -> bool {
        use askpane::transport::{ApprovalEvent, Inbound};
        self.window
            .try_iter()
            .any(|event| matches!(event, Inbound::Approval(ApprovalEvent::Permission(_))))
    }
}

impl World {
    /// The permission requests pending in `directory`, as OpenCode lists them.
    fn pending_permissions(&self, directory: &Path) -> Vec<Value> {
        self.call("GET", "/permission", directory, None).as_array().cloned().unwrap_or_default()
    }

    /// The content of every tool message of the model's latest request (what it read so far
    /// in its session), once a request after `after` requests has come.
    fn tool_messages_after(&self, after: usize) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let requests = self.model_requests();
            if let Some(latest) = requests.get(after..).and_then(<[Value]>::last) {
                return latest["messages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|message| message["role"] == "tool")
                    .filter_map(|message| message["content"].as_str().map(str::to_owned))
                    .collect();
            }
            assert!(Instant::now() < deadline, "no request came: {}", self.report());
            thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn permissions_decided_in_the_inbox_reach_opencode_as_once_reject_and_always() {
    use askpane::protocol::permission::ApprovalOrigin;
    use askpane::protocol::stream::PermissionDecision;
    let mut world = World::start("opencode-permissions");
    let inbox = TestInbox::serve(&world);
    world.attach(&[]);
    let project = world.root.join("project");

    // Allow once: the call runs, and the model reads its output.
    world.ask(&project, "bash");
    let card = inbox.card(&world);
    assert_eq!(card.request.tool_name, "bash");
    assert_eq!(card.request.input, json!({"command": "echo askpane-ran"}));
    assert_eq!(card.request.title.as_deref(), Some("bash: echo askpane-ran"));
    assert_eq!(card.request.origin, ApprovalOrigin::OpenCode);
    assert_eq!(card.provenance.source, "opencode");
    assert_eq!(card.provenance.project.as_deref(), Some("project"));
    let always: Vec<String> = card.request.suggestions.iter().map(|rule| rule.label()).collect();
    assert_eq!(always, ["Always allow bash `echo *` (in this project, until OpenCode restarts)"]);
    card.reply.send(PermissionDecision::AllowOnce);
    assert_eq!(world.wait_tool_results(1), [RAN], "{}", world.report());

    // Deny with words (as the window builds them): the call does not run; the model reads
    // OpenCode's own wrapper and the person's words, once, and goes on.
    world.ask(&project, "bash");
    let words = askpane::book::approval::deny_words("Use make instead.");
    inbox.card(&world).reply.send(PermissionDecision::Deny { message: words });
    let results = world.wait_tool_results(2);
    assert_eq!(
        results[1],
        "The user rejected permission to use this specific tool call with the following \
         feedback: Use make instead.",
        "{}",
        world.report()
    );

    // Deny without words: rejected as OpenCode's own TUI does; the turn stops.
    let session = world.ask(&project, "bash");
    inbox
        .card(&world)
        .reply
        .send(PermissionDecision::Deny { message: askpane::book::approval::deny_words("") });
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains(" rejected\n")
        || !world.pending_permissions(&project).is_empty()
    {
        assert!(Instant::now() < deadline, "not rejected: {}", world.report());
        thread::sleep(Duration::from_millis(100));
    }
    let requests = world.model_requests().len();
    world.wait_idle(&project, &session);
    assert_eq!(world.model_requests().len(), requests, "the turn went on: {}", world.report());
    assert_eq!(world.tool_results().len(), 2, "the call did not run: {}", world.report());
    // What the model read of it, on the next prompt.
    world.prompt(&project, &session, "Carry on. SCENARIO=say");
    assert_eq!(world.tool_messages_after(requests), [REJECTED], "{}", world.report());

    // Always: the call runs, and a second one in another session of the project asks nobody.
    world.ask(&project, "bash");
    let card = inbox.card(&world);
    let suggestion = card.request.suggestions.first().expect("OpenCode's always").clone();
    card.reply.send(PermissionDecision::AllowAlways { suggestion });
    assert_eq!(world.wait_tool_results(3)[2], RAN, "{}", world.report());
    world.ask(&project, "bash");
    assert_eq!(world.wait_tool_results(4)[3], RAN, "{}", world.report());
    assert!(!inbox.any_card(), "the second call was asked about: {}", world.report());
    assert!(world.pending_permissions(&project).is_empty());
    let log = world.askpane_log();
    for said in [" allowed once\n", " rejected\n", " allowed always\n"] {
        assert!(log.contains(said), "{said:?} not in {log}");
    }
}

#[test]
fn a_permission_answered_in_opencode_leaves_the_inbox_and_a_hand_back_leaves_it_to_opencode() {
    use askpane::protocol::stream::PermissionDecision;
    let mut world = World::start("opencode-permission-elsewhere");
    let inbox = TestInbox::serve(&world);
    world.attach(&[]);
    let project = world.root.join("project");

    // Answered in OpenCode itself (a direct reply, as its TUI sends): the card leaves at once.
    world.ask(&project, "bash");
    let card = inbox.card(&world);
    let pending = world.pending_permissions(&project);
    let id = pending.first().and_then(|request| request["id"].as_str()).expect("pending");
    world.call(
        "POST",
        &format!("/permission/{id}/reply"),
        &project,
        Some(json!({"reply": "once"})),
    );
    assert_eq!(inbox.withdrawn(&world), card.request.request_id);
    assert_eq!(world.wait_tool_results(1), [RAN]);
    assert!(world.askpane_log().contains(&format!("{id} was answered elsewhere")));
    // The window's decision, too late, is sent nowhere.
    card.reply.send(PermissionDecision::AllowOnce);

    // Handed back: nothing is sent; the request waits for OpenCode's TUI, which answers it.
    world.ask(&project, "bash");
    inbox.card(&world).reply.send(PermissionDecision::HandBack);
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains("is left to OpenCode") {
        assert!(Instant::now() < deadline, "not handed back: {}", world.report());
        thread::sleep(Duration::from_millis(50));
    }
    let pending = world.pending_permissions(&project);
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(world.tool_results().len(), 1, "the call did not run");
    let id = pending[0]["id"].as_str().expect("an id");
    world.call(
        "POST",
        &format!("/permission/{id}/reply"),
        &project,
        Some(json!({"reply": "once"})),
    );
    assert_eq!(world.wait_tool_results(2)[1], RAN);
}

#[test]
fn decline_rejects_a_permission_with_its_message_and_nobody_ever_allows_one() {
    let mut world = World::start("opencode-permission-flags");
    world.attach(&["--decline", "Not in CI."]);
    let project = world.root.join("project");
    world.ask(&project, "bash");
    let results = world.wait_tool_results(1);
    assert_eq!(
        results,
        ["The user rejected permission to use this specific tool call with the following \
          feedback: Not in CI."],
        "{}",
        world.report()
    );
    // Nobody to ask (--non-interactive): nothing is sent; OpenCode's TUI still can answer.
    world.askpane.take();
    world.attach(&["--non-interactive"]);
    world.ask(&project, "bash");
    let deadline = Instant::now() + WAIT;
    while !world.askpane_log().contains("is left to OpenCode") {
        assert!(Instant::now() < deadline, "not left: {}", world.report());
        thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(world.pending_permissions(&project).len(), 1);
    assert_eq!(world.tool_results().len(), 1, "the call did not run: {}", world.report());
}

impl TestInbox {
    /// The next card the window is told timed out: its request id.
    fn timed_out(&self, world: &World) -> String {
        use askpane::transport::{ApprovalEvent, Inbound};
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.window.recv_timeout(left) {
                Ok(Inbound::Approval(ApprovalEvent::TimedOutPermission { request_id })) => {
                    return request_id;
                }
                Ok(Inbound::Approval(ApprovalEvent::WithdrawPermission { request_id })) => {
                    panic!("{request_id} was withdrawn, not timed out: {}", world.report())
                }
                Ok(_) => {}
                Err(error) => panic!("no card timed out ({error}): {}", world.report()),
            }
        }
    }
}

#[test]
fn a_permission_card_whose_timeout_runs_out_is_left_pending_for_opencode() {
    use askpane::protocol::stream::PermissionDecision;
    let mut world = World::start("opencode-permission-timeout");
    let inbox = TestInbox::serve(&world);
    world.attach(&["--timeout", "2"]);
    let project = world.root.join("project");
    world.ask(&project, "bash");
    let card = inbox.card(&world);
    let asked = Instant::now();
    // The card shows OpenCode's command as a command, not its metadata's JSON.
    let body = askpane::book::tool_call::ToolCallView::of(&card.request);
    let askpane::book::tool_call::ToolCallView::Command { command, .. } = body else {
        panic!("not a command: {body:?}")
    };
    assert_eq!(command.text, "echo askpane-ran");
    // Nobody decides: after --timeout the card leaves the window as timed out (the window's
    // history says so), and nothing is sent to OpenCode: neither an allow nor a reject.
    assert_eq!(inbox.timed_out(&world), card.request.request_id);
    assert!(asked.elapsed() < Duration::from_secs(10), "{:?}", asked.elapsed());
    let pending = world.pending_permissions(&project);
    assert_eq!(pending.len(), 1, "{pending:?}");
    let id = pending[0]["id"].as_str().expect("an id").to_owned();
    let log = world.askpane_log();
    assert!(log.contains(&format!("{id}: no decision within --timeout (2 s)")), "{log}");
    // A decision crossing the time-out reaches nobody.
    card.reply.send(PermissionDecision::AllowOnce);
    thread::sleep(Duration::from_millis(500));
    assert_eq!(world.pending_permissions(&project).len(), 1, "{}", world.report());
    assert!(world.tool_results().is_empty(), "the call ran: {}", world.report());
    assert!(!inbox.any_card(), "asked again: {}", world.report());
    // OpenCode's TUI still has it, and its answer runs the call.
    world.call(
        "POST",
        &format!("/permission/{id}/reply"),
        &project,
        Some(json!({"reply": "once"})),
    );
    assert_eq!(world.wait_tool_results(1), [RAN], "{}", world.report());
}
