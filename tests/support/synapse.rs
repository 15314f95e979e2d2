//! A real Matrix homeserver for the tests (issue 31): Synapse from the venv `scripts/synapse`
//! installs, started per test on a free 127.0.0.1 port with a generated config in a scratch
//! directory (SQLite, no federation, rate limits out of the way), registration by shared secret,
//! login, restart on the same database and port, and its own round trip for the figures.
//!
//! Every test pays Synapse's start: it starts from a database whose schema was made once per
//! build directory ([`template_database`]) instead of creating its ~100 tables and running its
//! background updates every time.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::{Process, read_lossy, run_bounded, scratch_dir, tail};

/// The Synapse `scripts/synapse` installs (keep the two in step).
pub const VERSION: &str = "1.163.2";

/// How long Synapse may take to serve after it is started. A start is 1.3 s of CPU; on the 2
/// shared cores of the test machine with builds beside it (load average 20) it took 7 to 17 s,
/// nearly all of it waiting for a CPU.
pub const START_LIMIT: Duration = Duration::from_secs(90);

/// How long Synapse may take to end after SIGTERM before it is killed.
const STOP_LIMIT: Duration = Duration::from_secs(15);

/// The server name every test homeserver has: user ids are `@user:localhost`.
pub const SERVER_NAME: &str = "localhost";

/// The venv of `scripts/synapse`: `$ASKPANE_SYNAPSE_CACHE/synapse-<version>` (default cache
/// `~/.cache/askpane`), whole when its `.complete` marker is there.
pub fn venv_dir() -> PathBuf {
    let cache = std::env::var_os("ASKPANE_SYNAPSE_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/askpane"),
        PathBuf::from,
    );
    cache.join(format!("synapse-{VERSION}"))
}

/// The venv's Python when Synapse is installed; else `None` after saying the test is skipped on
/// stderr. Under `CI=true` a missing Synapse fails the test instead: `scripts/test` installs it,
/// and a suite that skipped it would pass without testing the bridge.
pub fn installed() -> Option<PathBuf> {
    let venv = venv_dir();
    match missing_reason(&venv, std::env::var("CI").ok().as_deref()) {
        Ok(python) => Some(python),
        Err(Missing::Skip(message)) => {
            eprintln!("synapse: skipped: {message}");
            None
        }
        Err(Missing::Fail(message)) => panic!("{message}"),
    }
}

/// Why a venv cannot be used, and whether that skips or fails the test.
#[derive(Debug, PartialEq)]
pub enum Missing {
    Skip(String),
    Fail(String),
}

/// The venv's Python if `venv` is whole; else what to do, `ci` being `$CI`.
pub fn missing_reason(venv: &Path, ci: Option<&str>) -> Result<PathBuf, Missing> {
    let python = venv.join("bin/python");
    if venv.join(".complete").is_file() && python.is_file() {
        return Ok(python);
    }
    let message = format!(
        "Synapse {VERSION} is not installed at {}: run scripts/synapse (needs PyPI)",
        venv.display()
    );
    match ci {
        Some("true") => Err(Missing::Fail(message)),
        _ => Err(Missing::Skip(message)),
    }
}

/// An account registered on a [`Homeserver`].
#[derive(Debug, Clone)]
pub struct Account {
    /// The localpart, as registered (`alice`).
    pub user: String,
    /// `@alice:localhost`.
    pub user_id: String,
    pub password: String,
    /// The access token of the device registration made.
    pub access_token: String,
    pub device_id: String,
}

/// A running Synapse, stopped (by its PID) when dropped. Its directory holds `homeserver.yaml`,
/// `homeserver.db`, `homeserver.log` (WARNING and up), `stdout`/`stderr`, and the media store.
pub struct Homeserver {
    python: PathBuf,
    dir: PathBuf,
    port: u16,
    secret: String,
    process: Option<Process>,
    started_in: Duration,
    start_cpu: Duration,
    http: ureq::Agent,
}

impl Homeserver {
    /// Starts a fresh Synapse and waits (bounded) until it serves; `None` when Synapse is not
    /// installed (see [`installed`]).
    pub fn start() -> Option<Homeserver> {
        let python = installed()?;
        let template = template_database(&python);
        // A free port can be taken by another test between our probe and Synapse's bind: the
        // start is tried again on another port, never more than three times.
        let mut last_failure = String::new();
        for _ in 0..3 {
            let dir = scratch_dir("synapse");
            fs::copy(template, dir.join("homeserver.db")).expect("copy the template database");
            let mut homeserver = Homeserver {
                python: python.clone(),
                port: free_port(),
                secret: random_hex(32),
                process: None,
                started_in: Duration::ZERO,
                start_cpu: Duration::ZERO,
                http: ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(30)))
                    .build()
                    .into(),
                dir,
            };
            homeserver.write_config();
            match homeserver.launch() {
                Ok(()) => return Some(homeserver),
                Err(Launch::PortTaken) => last_failure = homeserver.report(),
            }
        }
        panic!("Synapse found its port taken three times: {last_failure}");
    }

    /// `http://127.0.0.1:PORT`, the client API's base.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The scratch directory holding its config, database and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How long the last start took, from spawning Python to the first answer of
    /// `/_matrix/client/versions`.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// The CPU time (user and system) Synapse spent in its last start: unlike
    /// [`Homeserver::started_in`] it does not grow with the machine's load.
    pub fn start_cpu(&self) -> Duration {
        self.start_cpu
    }

    /// Its log, stdout and stderr, for failure messages.
    pub fn report(&self) -> String {
        format!(
            "Synapse in {}\nhomeserver.log:\n{}\nstderr:\n{}",
            self.dir.display(),
            tail(&read_lossy(&self.dir.join("homeserver.log")), 4000),
            tail(&read_lossy(&self.dir.join("stderr")), 4000),
        )
    }

    /// Stops Synapse (SIGTERM by its PID; SIGKILL when it has not ended within 15 s). Its
    /// database and config stay for [`Homeserver::restart`].
    pub fn stop(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.terminate();
            if process.wait(STOP_LIMIT).is_none() {
                let _ = process.child.kill();
                let _ = process.child.wait();
            }
        }
    }

    /// Kills Synapse (SIGKILL by its PID) as a crash or a power cut would: no clean shutdown.
    /// [`Homeserver::restart`] starts it again on what its database had committed.
    pub fn kill(&mut self) {
        if let Some(mut process) = self.process.take()
            && process.exited().is_none()
        {
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }

    /// Stops Synapse if it runs and starts it again on the same database, config and port.
    pub fn restart(&mut self) {
        self.stop();
        // The port was ours and Synapse binds with SO_REUSEADDR (Twisted does on POSIX), but
        // another test may have taken it meanwhile: say so rather than wait for nothing.
        match self.launch() {
            Ok(()) => {}
            Err(Launch::PortTaken) => {
                panic!("another process took Synapse's port for its restart: {}", self.report())
            }
        }
    }

    /// Registers `user` with `password` through the shared-secret admin API
    /// (`/_synapse/admin/v1/register`, HMAC-SHA1 over nonce, user, password and admin flag, as
    /// Synapse's own `register_new_matrix_user` does).
    pub fn register(&self, user: &str, password: &str, admin: bool) -> Account {
        let (status, nonce) = self.get("/_synapse/admin/v1/register", None);
        assert_eq!(status, 200, "no registration nonce: {nonce}");
        let nonce = nonce["nonce"].as_str().expect("a nonce").to_owned();
        let role = if admin { "admin" } else { "notadmin" };
        let message = [nonce.as_str(), user, password, role].join("\0");
        let mac = hex(&hmac_sha1(self.secret.as_bytes(), message.as_bytes()));
        let body = json!({
            "nonce": nonce, "username": user, "password": password, "admin": admin, "mac": mac,
        });
        let (status, reply) = self.post("/_synapse/admin/v1/register", None, &body);
        assert_eq!(status, 200, "registering {user} failed: {reply}\n{}", self.report());
        Account {
            user: user.to_owned(),
            user_id: reply["user_id"].as_str().expect("a user id").to_owned(),
            password: password.to_owned(),
            access_token: reply["access_token"].as_str().expect("an access token").to_owned(),
            device_id: reply["device_id"].as_str().expect("a device id").to_owned(),
        }
    }

    /// Logs `user` in with `password` over the client API (a new device); its access token.
    pub fn login(&self, user: &str, password: &str) -> String {
        let body = json!({
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": user},
            "password": password,
        });
        let (status, reply) = self.post("/_matrix/client/v3/login", None, &body);
        assert_eq!(status, 200, "{user} could not log in: {reply}");
        reply["access_token"].as_str().expect("an access token").to_owned()
    }

    /// The homeserver's own round trip on loopback: the median of `samples` authenticated
    /// `GET /_matrix/client/v3/account/whoami` with `token` (a request that reads the database
    /// for the token, as every client request does).
    pub fn round_trip(&self, token: &str, samples: usize) -> Duration {
        let mut times: Vec<Duration> = (0..samples.max(1))
            .map(|_| {
                let began = Instant::now();
                let (status, reply) = self.get("/_matrix/client/v3/account/whoami", Some(token));
                assert_eq!(status, 200, "whoami failed: {reply}");
                began.elapsed()
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    }

    /// Creates a private room as `token`'s user, inviting `invite` (user ids); end-to-end
    /// encrypted (`m.room.encryption`, Megolm, in its initial state) when `encrypted`. Its id.
    pub fn create_room(&self, token: &str, invite: &[&str], encrypted: bool) -> String {
        let encryption = json!({
            "type": "m.room.encryption",
            "state_key": "",
            "content": {"algorithm": "m.megolm.v1.aes-sha2"},
        });
        let initial_state = if encrypted { vec![encryption] } else { Vec::new() };
        let body = json!({
            "preset": "private_chat", "invite": invite, "initial_state": initial_state,
        });
        let (status, reply) = self.post("/_matrix/client/v3/createRoom", Some(token), &body);
        assert_eq!(status, 200, "createRoom: {reply}");
        reply["room_id"].as_str().expect("a room id").to_owned()
    }

    /// Joins `room` (an id) as `token`'s user.
    pub fn join(&self, token: &str, room: &str) {
        let (status, reply) =
            self.post(&format!("/_matrix/client/v3/join/{room}"), Some(token), &json!({}));
        assert_eq!(status, 200, "join {room}: {reply}");
    }

    /// Sends the plain text `text` to `room` as `token`'s user with transaction id
    /// `transaction` (the same id again from the same device is the same event); the event id.
    pub fn send_text(&self, token: &str, room: &str, transaction: &str, text: &str) -> String {
        let path = format!("/_matrix/client/v3/rooms/{room}/send/m.room.message/{transaction}");
        let body = json!({"msgtype": "m.text", "body": text});
        let (status, reply) = self.put(&path, Some(token), &body);
        assert_eq!(status, 200, "send to {room}: {reply}");
        reply["event_id"].as_str().expect("an event id").to_owned()
    }

    /// The (sender, body) of the last 50 `m.room.message` events of `room` that `token`'s user
    /// may read, oldest first (encrypted ones are `m.room.encrypted`, so not among them).
    pub fn texts(&self, token: &str, room: &str) -> Vec<(String, String)> {
        let path = format!("/_matrix/client/v3/rooms/{room}/messages?dir=b&limit=50");
        let (status, reply) = self.get(&path, Some(token));
        assert_eq!(status, 200, "messages of {room}: {reply}");
        let events = reply["chunk"].as_array().cloned().unwrap_or_default();
        let mut texts: Vec<(String, String)> = events
            .iter()
            .filter(|event| event["type"] == "m.room.message")
            .map(|event| {
                let sender = event["sender"].as_str().unwrap_or_default().to_owned();
                (sender, event["content"]["body"].as_str().unwrap_or_default().to_owned())
            })
            .collect();
        texts.reverse();
        texts
    }

    /// `GET path` (with `token` as Bearer when given): the status and the JSON body (`Null`
    /// when the body is not JSON).
    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut request = self.http.get(format!("{}{path}", self.url()));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        answer(request.call(), path)
    }

    /// `POST path` with the JSON `body` (and `token` as Bearer when given).
    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut request = self.http.post(format!("{}{path}", self.url()));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        answer(request.content_type("application/json").send(body.to_string()), path)
    }

    /// `PUT path` with the JSON `body` (and `token` as Bearer when given).
    pub fn put(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut request = self.http.put(format!("{}{path}", self.url()));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        answer(request.content_type("application/json").send(body.to_string()), path)
    }

    /// Spawns Synapse on this homeserver's config and waits until it serves.
    fn launch(&mut self) -> Result<(), Launch> {
        let began = Instant::now();
        let mut process = Process::new(
            self.synapse_command()
                .args(["-m", "synapse.app.homeserver", "-c"])
                .arg(self.dir.join("homeserver.yaml"))
                .stdout(fs::File::create(self.dir.join("stdout")).expect("a stdout file"))
                .stderr(fs::File::create(self.dir.join("stderr")).expect("a stderr file"))
                .spawn()
                .expect("start Synapse"),
        );
        // A request sent while Synapse starts may wait for long: each try has a short timeout.
        let probe: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .into();
        let versions = format!("{}/_matrix/client/versions", self.url());
        loop {
            if probe.get(&versions).call().is_ok_and(|response| response.status() == 200) {
                break;
            }
            if process.exited().is_some() {
                let said = read_lossy(&self.dir.join("stderr"));
                if said.contains("Address already in use") {
                    return Err(Launch::PortTaken);
                }
                panic!("Synapse ended before it served: {}", self.report());
            }
            assert!(
                began.elapsed() < START_LIMIT,
                "Synapse did not serve within {START_LIMIT:?}: {}",
                self.report()
            );
            thread::sleep(Duration::from_millis(50));
        }
        self.started_in = began.elapsed();
        self.start_cpu = cpu_time(process.child.id());
        self.process = Some(process);
        Ok(())
    }

    /// The venv's Python with none of the caller's Python settings.
    fn synapse_command(&self) -> Command {
        python_command(&self.python)
    }

    /// Writes `homeserver.yaml` (JSON, which YAML reads), the logging config and a signing key.
    fn write_config(&self) {
        let dir = &self.dir;
        fs::create_dir_all(dir.join("media")).expect("the media store");
        // An ed25519 seed in Synapse's key file format (`ALGORITHM VERSION BASE64-SEED`), made
        // here: `--generate-keys` would cost another start of Python.
        use base64::Engine as _;
        let seed = base64::engine::general_purpose::STANDARD_NO_PAD.encode(random_bytes(32));
        fs::write(dir.join("signing.key"), format!("ed25519 a_test {seed}\n"))
            .expect("write the signing key");
        let log_config = json!({
            "version": 1,
            "formatters": {"precise": {"format": "%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(request)s - %(message)s"}},
            "handlers": {"file": {
                "class": "logging.FileHandler",
                "formatter": "precise",
                "filename": dir.join("homeserver.log"),
            }},
            "root": {"level": "WARNING", "handlers": ["file"]},
            "disable_existing_loggers": false,
        });
        fs::write(dir.join("log.yaml"), log_config.to_string()).expect("write the log config");
        let config = config(dir, self.port, &self.secret, &random_hex(32));
        fs::write(dir.join("homeserver.yaml"), serde_json::to_string_pretty(&config).unwrap())
            .expect("write homeserver.yaml");
    }
}

impl Drop for Homeserver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why a launch failed in a way another try may mend.
enum Launch {
    PortTaken,
}

/// Synapse's config for a test homeserver in `dir` on 127.0.0.1:`port`.
fn config(dir: &Path, port: u16, secret: &str, macaroon: &str) -> Value {
    // Rate limits high enough never to be met by a test (a test that sends 50 answers a second
    // must not be told to wait), in the shape each option wants.
    let unlimited = json!({"per_second": 10000, "burst_count": 100000});
    json!({
        "server_name": SERVER_NAME,
        "public_baseurl": format!("http://127.0.0.1:{port}/"),
        "report_stats": false,
        // The client API (and the admin API under it) only: no federation listener.
        "listeners": [{
            "port": port,
            "bind_addresses": ["127.0.0.1"],
            "type": "http",
            "tls": false,
            "x_forwarded": false,
            "resources": [{"names": ["client"], "compress": false}],
        }],
        "database": {"name": "sqlite3", "args": {"database": dir.join("homeserver.db")}},
        "log_config": dir.join("log.yaml"),
        "media_store_path": dir.join("media"),
        "signing_key_path": dir.join("signing.key"),
        "registration_shared_secret": secret,
        "macaroon_secret_key": macaroon,
        "enable_registration": false,
        "trusted_key_servers": [],
        "suppress_key_server_warning": true,
        // Nothing the tests use, and each costs work at start or per request.
        "use_presence": false,
        "enable_metrics": false,
        "url_preview_enabled": false,
        "rc_message": unlimited,
        "rc_registration": unlimited,
        "rc_registration_token_validity": unlimited,
        "rc_login": {"address": unlimited, "account": unlimited, "failed_attempts": unlimited},
        "rc_admin_redaction": unlimited,
        "rc_joins": {"local": unlimited, "remote": unlimited},
        "rc_joins_per_room": unlimited,
        "rc_3pid_validation": unlimited,
        "rc_invites": {"per_room": unlimited, "per_user": unlimited, "per_issuer": unlimited},
        "rc_third_party_invite": unlimited,
        "rc_key_requests": unlimited,
        "rc_room_creation": unlimited,
        "rc_reports": unlimited,
        "rc_delayed_event_mgmt": unlimited,
        "rc_media_create": unlimited,
        "rc_presence": {"per_user": unlimited},
    })
}

/// `python` (a venv's) with none of the caller's Python settings, which could change what it
/// imports.
fn python_command(python: &Path) -> Command {
    let mut command = Command::new(python);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PYTHON") {
            command.env_remove(name);
        }
    }
    command.stdin(Stdio::null());
    command
}

/// A database with Synapse's schema and its background updates done, made once per build
/// directory (`target/tmp/synapse-<version>-template.db`) by `update_synapse_database` and
/// copied for every homeserver: a fresh database costs each start its schema (~100 tables)
/// and then background updates while the test runs. It holds no account, room or key.
fn template_database(python: &Path) -> &'static Path {
    static TEMPLATE: OnceLock<PathBuf> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let template =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("synapse-{VERSION}-template.db"));
        if template.is_file() {
            return template;
        }
        // Made aside and renamed into place: another test binary may make it at the same time.
        let dir = scratch_dir("synapse-template");
        fs::create_dir_all(dir.join("media")).expect("the media store");
        use base64::Engine as _;
        let seed = base64::engine::general_purpose::STANDARD_NO_PAD.encode(random_bytes(32));
        fs::write(dir.join("signing.key"), format!("ed25519 a_test {seed}\n")).unwrap();
        let mut config = config(&dir, free_port(), "unused", "unused");
        // update_synapse_database logs to stderr; the log config is not needed.
        config.as_object_mut().unwrap().remove("log_config");
        fs::write(dir.join("homeserver.yaml"), config.to_string()).unwrap();
        let mut command = python_command(python);
        command
            .args(["-m", "synapse._scripts.update_synapse_database", "--run-background-updates"])
            .arg("--database-config")
            .arg(dir.join("homeserver.yaml"));
        let made = run_bounded(&mut command, None);
        assert!(made.status.success(), "the template database was not made: {made:?}");
        fs::rename(dir.join("homeserver.db"), &template).expect("keep the template database");
        template
    })
}

/// The CPU time (user and system) process `pid` has used so far, from `/proc/PID/stat`
/// (zero when it cannot be read).
fn cpu_time(pid: u32) -> Duration {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces, so after its closing
    // parenthesis): state is the first, utime the 12th, stime the 13th.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 =
        after_name.split_whitespace().skip(11).take(2).filter_map(|n| n.parse::<u64>().ok()).sum();
    // USER_HZ, the unit of these fields, is 100 on every Linux architecture.
    Duration::from_millis(ticks * 10)
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

fn random_bytes(count: usize) -> Vec<u8> {
    let mut bytes = vec![0; count];
    getrandom::fill(&mut bytes).expect("random bytes");
    bytes
}

fn random_hex(count: usize) -> String {
    hex(&random_bytes(count))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// HMAC-SHA1 (RFC 2104) of `message` under `key`, as Synapse checks a shared-secret
/// registration.
pub fn hmac_sha1(key: &[u8], message: &[u8]) -> [u8; 20] {
    const BLOCK: usize = 64;
    let mut padded = [0u8; BLOCK];
    if key.len() > BLOCK {
        padded[..20].copy_from_slice(&Sha1::digest(key));
    } else {
        padded[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha1::new();
    inner.update(padded.map(|byte| byte ^ 0x36));
    inner.update(message);
    let mut outer = Sha1::new();
    outer.update(padded.map(|byte| byte ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// A response's status and JSON body (`Null` when not JSON); a failure to reach the server fails
/// the test, naming `path`.
fn answer(
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    path: &str,
) -> (u16, Value) {
    let mut response = response.unwrap_or_else(|error| panic!("{path}: {error}"));
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}
