//! `askpane remote HOST --http` (issue 27 item 6): Claude Code's HTTP hooks on the remote, with
//! no askpane there. ssh forwards a loopback port of the remote to this endpoint on the desk's
//! loopback; each POST that carries the link's token (`X-Askpane-Token`, compared in constant
//! time) is handed, as its body, to `askpane hook` run here, whose inbox socket is a second
//! socket of the link's: the request is stamped with the link's host exactly as a relayed
//! client's is. What the hook prints is the response body (nothing: Claude Code asks in its own
//! dialog). A request without the token, or with another, gets 401 and reaches no inbox.
//! Claude Code closing the connection (its hook timeout, the session ended) ends the hook, so
//! the inbox withdraws the card.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The header that carries the link's token.
pub const TOKEN_HEADER: &str = "X-Askpane-Token";

/// The longest request head (request line and headers) read.
const HEAD_MAX_BYTES: u64 = 16 * 1024;

/// The longest body read: a hook input is a few KB; a plan may be larger.
const BODY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// How long a client may take to send its request.
const READ_WAIT: Duration = Duration::from_secs(10);

/// The endpoint, accepting on `remote-http` until stopped.
pub struct HttpHooks {
    address: SocketAddr,
    token: String,
    stopping: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl HttpHooks {
    /// Listens on a free port of 127.0.0.1; each POST carrying `token` (the host's, `token.rs`)
    /// runs `askpane` (`program`) `hook` with `runtime_dir` as its `XDG_RUNTIME_DIR` (where the
    /// link's second socket is).
    pub fn serve(program: PathBuf, runtime_dir: PathBuf, token: String) -> io::Result<HttpHooks> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let (expected, stops) = (token.clone(), Arc::clone(&stopping));
        let accept = crate::transport::spawn_named("remote-http", move || {
            accept_loop(&listener, &stops, &expected, &program, &runtime_dir)
        })?;
        Ok(HttpHooks { address, token, stopping, accept: Some(accept) })
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    fn end(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // The accept loop blocks in accept(2): a connection of our own wakes it to see the flag.
        let _ = TcpStream::connect(self.address);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

impl Drop for HttpHooks {
    fn drop(&mut self) {
        self.end();
    }
}

fn accept_loop(
    listener: &TcpListener,
    stopping: &AtomicBool,
    token: &str,
    program: &Path,
    runtime_dir: &Path,
) {
    let mut served: Vec<JoinHandle<()>> = Vec::new();
    for client in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(client) = client else { continue };
        let (token, program, runtime_dir) =
            (token.to_owned(), program.to_owned(), runtime_dir.to_owned());
        let serving = crate::transport::spawn_named("remote-http-hook", move || {
            if let Err(error) = serve(client, &token, &program, &runtime_dir) {
                log::debug!("an HTTP hook request failed: {error}");
            }
        });
        match serving {
            Ok(thread) => {
                let (done, live): (Vec<_>, Vec<_>) =
                    std::mem::take(&mut served).into_iter().partition(JoinHandle::is_finished);
                done.into_iter().for_each(|thread| {
                    let _ = thread.join();
                });
                served = live;
                served.push(thread);
            }
            Err(error) => log::error!("cannot serve an HTTP hook request: {error}"),
        }
    }
    // Each hook ends when its client goes; ssh's end (the link stops) closes them.
    for thread in served {
        let _ = thread.join();
    }
}

/// A request's head: what the endpoint needs of it. The body is read only once the token holds.
#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    pub token: Option<String>,
    pub length: usize,
}

/// Why a request is answered with an error status.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    BadRequest(&'static str),
    /// Its head is longer than [`HEAD_MAX_BYTES`].
    TooLarge,
}

/// Reads one HTTP/1.1 request's head, bounded.
pub fn read_head(reader: &mut impl BufRead) -> io::Result<Result<Head, Refusal>> {
    let mut head = Vec::new();
    let mut limited = reader.take(HEAD_MAX_BYTES);
    loop {
        let before = head.len();
        let read = limited.read_until(b'\n', &mut head)?;
        if read == 0 && limited.limit() == 0 {
            return Ok(Err(Refusal::TooLarge));
        }
        if read == 0 {
            return Ok(Err(Refusal::BadRequest("the request's head ended early")));
        }
        let line = head.get(before..).unwrap_or_default();
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let Some(method) = lines.next().and_then(|line| line.split(' ').next()) else {
        return Ok(Err(Refusal::BadRequest("no request line")));
    };
    let (mut length, mut token) = (0_usize, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            let Ok(parsed) = value.parse::<usize>() else {
                return Ok(Err(Refusal::BadRequest("Content-Length is not a number")));
            };
            length = parsed;
        } else if name.eq_ignore_ascii_case(TOKEN_HEADER) {
            token = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Ok(Err(Refusal::BadRequest("only a Content-Length body is read")));
        }
    }
    Ok(Ok(Head { method: method.to_owned(), token, length }))
}

fn serve(client: TcpStream, token: &str, program: &Path, runtime_dir: &Path) -> io::Result<()> {
    client.set_read_timeout(Some(READ_WAIT))?;
    let mut reader = BufReader::new(&client);
    let head = match read_head(&mut reader)? {
        Ok(head) => head,
        Err(Refusal::BadRequest(why)) => {
            return respond(&client, 400, "Bad Request", why.as_bytes());
        }
        Err(Refusal::TooLarge) => return respond(&client, 413, "Content Too Large", b""),
    };
    // The token first: nothing of the request is read further, nor told, without it.
    let authorised =
        head.token.as_deref().is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes()));
    if !authorised {
        log::warn!("an HTTP hook request without the link's token was refused");
        return respond(&client, 401, "Unauthorized", b"");
    }
    if head.method != "POST" {
        return respond(&client, 405, "Method Not Allowed", b"");
    }
    if head.length > BODY_MAX_BYTES {
        return respond(&client, 413, "Content Too Large", b"");
    }
    let mut body = vec![0_u8; head.length];
    reader.read_exact(&mut body)?;
    client.set_read_timeout(None)?;
    let (reply, watcher) = run_hook(&client, program, runtime_dir, &body)?;
    let responded = respond(&client, 200, "OK", &reply);
    // The socket's shutdown ended the watcher's read.
    let _ = watcher.join();
    responded
}

/// Runs `askpane hook` with `body` on its stdin; its stdout is the reply. The client's end
/// (EOF on its connection) ends the hook.
fn run_hook(
    client: &TcpStream,
    program: &Path,
    runtime_dir: &Path,
    body: &[u8],
) -> io::Result<(Vec<u8>, JoinHandle<()>)> {
    let mut command = Command::new(program);
    command.arg("hook").env("XDG_RUNTIME_DIR", runtime_dir);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = command.spawn()?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let child = Arc::new(Mutex::new(child));
    let watched = Arc::clone(&child);
    let watching = client.try_clone()?;
    let watcher = crate::transport::spawn_named("remote-http-watch", move || {
        // Claude Code sends nothing more: a read that returns is its end (or ours, below).
        let _ = (&watching).read(&mut [0_u8; 1]);
        if let Ok(mut child) = watched.lock() {
            // std signals no pid it has reaped already.
            let _ = child.kill();
        }
    })?;
    if let Some(mut stdin) = stdin {
        let _ = stdin.write_all(body);
    }
    let mut reply = Vec::new();
    if let Some(mut stdout) = stdout {
        let _ = stdout.read_to_end(&mut reply);
    }
    if let Ok(mut child) = child.lock() {
        let _ = child.wait();
    }
    Ok((reply, watcher))
}

fn respond(client: &TcpStream, status: u16, reason: &str, body: &[u8]) -> io::Result<()> {
    let mut out = client;
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(body)?;
    out.flush()?;
    let _ = client.shutdown(Shutdown::Both);
    Ok(())
}

/// Equal in constant time: how long it takes says nothing about where the first difference is.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_s_token_and_length_are_read_and_a_huge_head_is_refused() {
        let raw = b"POST /hook HTTP/1.1\r\nHost: x\r\nx-askpane-token: abc\r\nContent-Length: 2\r\n\r\n{}";
        let read = read_head(&mut &raw[..]).expect("reads");
        assert_eq!(read, Ok(Head { method: "POST".into(), token: Some("abc".into()), length: 2 }));
        let huge = format!("POST / HTTP/1.1\r\nX-Filler: {}\r\n\r\n", "a".repeat(20_000));
        assert_eq!(read_head(&mut huge.as_bytes()).expect("reads"), Err(Refusal::TooLarge));
        let chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(
            read_head(&mut &chunked[..]).expect("reads"),
            Err(Refusal::BadRequest(_))
        ));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(same_secret(b"abc", b"abc"));
    }
}
