//! `askpane status` (issue 29 item 6): what waits in this user's inbox, one line for a status
//! bar or a prompt (`--format text|json|waybar`); with `--watch`, a line at every change, from
//! the socket's `subscribe` (never by asking again and again).
//!
//! No inbox is no error: the format's zero is printed and the exit code is 0. A watch whose
//! inbox ends (or that starts before one) prints the zero once and tries to connect again,
//! waiting a little longer each time up to [`RETRY_MAX`]: a status bar's watcher may run all
//! day without an inbox, and costs nothing meanwhile.

use std::collections::BTreeMap;
use std::io::{self, Write as _};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};

use askpane::protocol::exit;
use askpane::protocol::inbox::{ClientMessage, InboxMessage, Listed};
use askpane::protocol::status::{InboxState, Summary};
use askpane::transport::inbox::{ConnectError, InboxClient, Place};

#[derive(Args, Debug)]
pub(super) struct StatusArgs {
    /// text: `0`, or `3 waiting · oldest 2m · deadline in 45s · hook 2, mcp 1`; json: one
    /// object (see the manual's status page); waybar: a custom module's JSON.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    format: StatusFormat,
    /// Keep running: print a line whenever what waits changes (for waybar's `exec`, polybar's
    /// `tail`). Without an inbox, prints the zero and connects again when one starts.
    #[arg(long)]
    watch: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum StatusFormat {
    Text,
    Json,
    Waybar,
}

impl StatusFormat {
    fn line(self, summary: &Summary) -> String {
        match self {
            StatusFormat::Text => summary.text(),
            StatusFormat::Json => summary.json(),
            StatusFormat::Waybar => summary.waybar(),
        }
    }
}

/// How long a one-shot status waits for the inbox's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// While something waits, a watch prints its line again this often if it changed (the ages in
/// it grow); with nothing waiting it only waits for the socket.
const AGE_TICK: Duration = Duration::from_secs(15);

/// A watch without an inbox tries to connect after this, then twice as long each time …
const RETRY_FIRST: Duration = Duration::from_millis(250);
/// … up to this.
const RETRY_MAX: Duration = Duration::from_secs(5);

pub(super) fn run(args: StatusArgs) -> anyhow::Result<u8> {
    match args.watch {
        false => once(args.format),
        true => watch(args.format),
    }
}

/// One line and done.
fn once(format: StatusFormat) -> anyhow::Result<u8> {
    let summary = match connect() {
        Some(mut client) => match open_asks(&mut client) {
            Ok(open) => Summary::of(InboxState::Running, &open, unix_now()),
            Err(error) => {
                eprintln!("askpane status: the inbox did not answer: {error}");
                Summary::no_inbox()
            }
        },
        None => Summary::no_inbox(),
    };
    // A reader that went away (`| head -c1`) is no failure of ours.
    let _ = print(&format.line(&summary));
    Ok(exit::OK)
}

/// This user's inbox, or `None` when none runs (said on stderr when it is not simply absent).
fn connect() -> Option<InboxClient> {
    let place = match Place::find() {
        Ok(place) => place,
        Err(error) => {
            eprintln!("askpane status: no inbox directory: {error}");
            return None;
        }
    };
    match InboxClient::connect(&place) {
        Ok(client) => Some(client),
        Err(ConnectError::NotRunning(_)) => None,
        Err(error) => {
            eprintln!("askpane status: {error}");
            None
        }
    }
}

/// The inbox's open asks (its `list`).
pub(super) fn open_asks(client: &mut InboxClient) -> io::Result<Vec<Listed>> {
    client.set_read_timeout(Some(ANSWER_WAIT))?;
    client.set_write_timeout(Some(ANSWER_WAIT))?;
    client.send(&ClientMessage::List { full: false })?;
    loop {
        match client.receive()? {
            Some(InboxMessage::List { requests }) => return Ok(requests),
            Some(_) => {}
            None => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "it closed")),
        }
    }
}

/// Runs until stdout closes (the status bar went away).
fn watch(format: StatusFormat) -> anyhow::Result<u8> {
    let mut printer = Printer { format, last: None };
    let mut retry = RETRY_FIRST;
    loop {
        if let Some(client) = connect() {
            retry = RETRY_FIRST;
            match follow(client, &mut printer) {
                Followed::ReaderGone => return Ok(exit::OK),
                Followed::InboxEnded => {
                    eprintln!(
                        "askpane status: the inbox ended; watching for the next one (every {}s \
                         at most)",
                        RETRY_MAX.as_secs()
                    );
                }
            }
        }
        if printer.show(&Summary::no_inbox()).is_err() {
            return Ok(exit::OK);
        }
        std::thread::sleep(retry);
        retry = (retry * 2).min(RETRY_MAX);
    }
}

/// Prints a watch's lines, each only when it differs from the one before.
struct Printer {
    format: StatusFormat,
    last: Option<String>,
}

impl Printer {
    fn show(&mut self, summary: &Summary) -> io::Result<()> {
        let line = self.format.line(summary);
        if self.last.as_deref() == Some(line.as_str()) {
            return Ok(());
        }
        print(&line)?;
        self.last = Some(line);
        Ok(())
    }
}

/// Why a watch stopped following an inbox.
enum Followed {
    /// The connection ended (the inbox quit or died).
    InboxEnded,
    /// Standard output closed: nobody reads the lines any more.
    ReaderGone,
}

/// Follows one inbox: its `list` once, then its `asked` and `settled` events, a line per change.
fn follow(mut client: InboxClient, printer: &mut Printer) -> Followed {
    // Subscribed first, then listed: an event either reaches the list or comes after it, and
    // one that does both changes nothing (the open asks are keyed).
    let sent = client
        .send(&ClientMessage::Subscribe { full: false })
        .and_then(|()| client.send(&ClientMessage::List { full: false }));
    if sent.is_err() {
        return Followed::InboxEnded;
    }
    let mut open: BTreeMap<(u64, String), Listed> = BTreeMap::new();
    let mut listed = false;
    loop {
        let tick = if open.is_empty() { None } else { Some(AGE_TICK) };
        if client.set_read_timeout(tick).is_err() {
            return Followed::InboxEnded;
        }
        match client.receive() {
            Ok(Some(InboxMessage::List { requests })) => {
                open = requests
                    .into_iter()
                    .map(|ask| ((ask.connection, ask.id.clone()), ask))
                    .collect();
                listed = true;
            }
            Ok(Some(InboxMessage::Asked { request })) => {
                open.insert((request.connection, request.id.clone()), request);
            }
            Ok(Some(InboxMessage::Settled { connection, id, .. })) => {
                open.remove(&(connection, id));
            }
            Ok(Some(_)) => continue,
            Ok(None) => return Followed::InboxEnded,
            // The tick: ages grew.
            Err(error)
                if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return Followed::InboxEnded,
        }
        if !listed {
            continue;
        }
        let asks: Vec<Listed> = open.values().cloned().collect();
        if printer.show(&Summary::of(InboxState::Running, &asks, unix_now())).is_err() {
            return Followed::ReaderGone;
        }
    }
}

/// Seconds since the Unix epoch, now.
fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

/// One line on stdout, flushed at once (a status bar reads it as it comes).
#[allow(
    clippy::disallowed_methods,
    reason = "askpane status's lines are its reply: the one thing it writes on stdout"
)]
fn print(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}
