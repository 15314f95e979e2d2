//! What the tests of real agents share (Linux only): finding the Claude Code CLI that
//! `scripts/claude-cli` installed and its 2.1.332 hook captures, an inbox served by the test
//! process with its hooks run against it, and a browser page's WebSocket to `--ui web`.

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use askpane::transport::inbox::InboxServer;
use askpane::transport::{Inbound, UiSender};
use crossbeam_channel::Receiver;
use serde_json::Value;
use tungstenite::WebSocket;
use tungstenite::client::IntoClientRequest;

use super::{Finished, WAIT, askpane, run_bounded};

/// A CLI cache of `scripts/*-cli`: `$variable` when set, else `~/.cache/askpane/<folder>`.
pub fn cli_cache(variable: &str, folder: &str) -> PathBuf {
    std::env::var_os(variable).map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set, to find the CLI cache");
            PathBuf::from(home).join(".cache/askpane").join(folder)
        },
        PathBuf::from,
    )
}

/// `CACHE/bin/claude-<version>`, the layout `scripts/claude-cli` documents.
pub fn claude_cli(version: &str) -> PathBuf {
    let binary = cli_cache("ASKPANE_CLAUDE_CACHE", "claude-cli")
        .join("bin")
        .join(format!("claude-{version}"));
    assert!(
        binary.is_file(),
        "Claude Code {version} is not installed at {}: run scripts/claude-cli (needs the npm \
         registry)",
        binary.display()
    );
    binary
}

/// The text of `<case>/hooks/PermissionRequest.1.<file>.json` of the 2.1.332 captures
/// (`file` is `stdin` or `stdout`).
pub fn permission_capture(case: &str, file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/2.1.332")
        .join(case)
        .join(format!("hooks/PermissionRequest.1.{file}.json"));
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `text` as JSON (a hook's stdout, a capture), or a failure naming it.
pub fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("not JSON ({error}): {text:?}"))
}

/// An inbox served by this test process on `<run>/askpane/inbox.sock`: `askpane` started with
/// `XDG_RUNTIME_DIR=<run>` reaches it. Its window is whatever reads the channel it was given.
pub struct ServedInbox {
    pub run: PathBuf,
    server: Option<InboxServer>,
}

impl ServedInbox {
    /// Serves the socket of runtime directory `run` (made, and narrowed to 0700 as askpane
    /// wants it), handing what the window gets to `to_ui`.
    pub fn serve(run: PathBuf, to_ui: UiSender) -> ServedInbox {
        let dir = run.join("askpane");
        fs::create_dir_all(&dir).expect("the socket's directory");
        for path in [&run, &dir] {
            fs::set_permissions(path, fs::Permissions::from_mode(0o700)).expect("narrow it");
        }
        let socket = dir.join("inbox.sock");
        let listener = UnixListener::bind(&socket).expect("listen");
        let server = InboxServer::start(listener, socket, to_ui).expect("serve the socket");
        ServedInbox { run, server: Some(server) }
    }

    /// The window's question whether the inbox may go lean ([`InboxServer::claim_quiet`]); a
    /// yes stops the server accepting.
    pub fn claim_quiet(&self) -> bool {
        self.server.as_ref().is_some_and(|server| server.claim_quiet()())
    }

    /// `askpane <subcommand> <args>` as an agent runs it against this inbox (no display).
    pub fn command(&self, subcommand: &str, args: &[&str]) -> Command {
        let mut command = askpane(&[subcommand]);
        command.args(args).env_remove("ASKPANE_NO_INBOX").env("XDG_RUNTIME_DIR", &self.run);
        command
    }

    /// [`ServedInbox::command`] fed `stdin`, running in the background; join it for what it
    /// printed.
    pub fn run(
        &self,
        subcommand: &str,
        args: &[&str],
        stdin: String,
    ) -> thread::JoinHandle<Finished> {
        let mut command = self.command(subcommand, args);
        thread::spawn(move || run_bounded(&mut command, Some(&stdin)))
    }
}

impl Drop for ServedInbox {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop();
        }
    }
}

/// The first event the window is given (within [`WAIT`]) that `pick` takes; the others are
/// skipped. `what` names it in the failure.
pub fn next_event<T>(
    window: &Receiver<Inbound>,
    what: &str,
    mut pick: impl FnMut(Inbound) -> Option<T>,
) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match window.recv_timeout(left) {
            Ok(event) => {
                if let Some(picked) = pick(event) {
                    return picked;
                }
            }
            Err(error) => panic!("{what} did not reach the window: {error}"),
        }
    }
}

/// The link `askpane … --ui web` prints on its `stderr` (`http://127.0.0.1:PORT/#token=…`),
/// within [`WAIT`]; the rest of stderr is read (and dropped) by a thread until the process ends.
pub fn browser_link(stderr: impl Read + Send + 'static) -> String {
    let (sender, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).unwrap_or_else(|_| panic!("no link: {seen:?}"));
        if let Some(rest) = line.strip_prefix("askpane: answer in your browser: ") {
            thread::spawn(move || lines.into_iter().for_each(drop));
            return rest.split_whitespace().next().unwrap_or_default().to_owned();
        }
        seen.push(line);
    }
}

/// A page's WebSocket to `askpane … --ui web` at `link` (`http://127.0.0.1:PORT/#token=…`),
/// with the origin and token a browser tab presents. Reads block until the caller sets a
/// timeout on `get_ref()`.
pub fn page_socket(link: &str) -> WebSocket<TcpStream> {
    let rest = link.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{link}"));
    let (port, token) = rest.split_once("/#token=").unwrap_or_else(|| panic!("{link}"));
    let mut request = format!("ws://127.0.0.1:{port}/ws").into_client_request().expect("a URL");
    let headers = request.headers_mut();
    let origin = format!("http://127.0.0.1:{port}");
    headers.insert("Origin", origin.parse().expect("a header value"));
    let protocols = format!("askpane, askpane-token.{token}");
    headers.insert("Sec-WebSocket-Protocol", protocols.parse().expect("a header value"));
    let stream = TcpStream::connect(format!("127.0.0.1:{port}")).expect("reach the page's server");
    tungstenite::client(request, stream).expect("the page's upgrade").0
}
