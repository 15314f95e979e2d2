//! The thin client (issue 10, on Unix and Windows): [`deliver`] hands a request to the running inbox over
//! its socket (starting one when none runs and a window or browser can show it), waits for its
//! outcome, and asks again when the inbox dies. What the callers do with it is `handover.rs`.
//!
//! While it waits, the client also keeps its own deadline and watches its agent (issue 24): a
//! request with `--timeout` that the inbox neither decides nor, when checked, still holds (the
//! inbox stopped by Ctrl+Z or SIGSTOP, or hung) gets the timed-out reply from the client itself;
//! an agent that went away (`ask` and `hook` only) has its request withdrawn and hears nothing.

use std::io::{self, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};
use serde_json::Value;

use askpane::protocol::inbox::{AskMessage, ClientMessage, ClientMode, InboxMessage, Policy};
use askpane::protocol::{Envelope, Outcome, ReplyFormat, ReplyShape, exit, parse_message};
use askpane::transport::caller::{Caller, CallerGone};
use askpane::transport::inbox::{ConnectError, InboxClient, Place};
use askpane::transport::signals::StopSignal;
use askpane::transport::{Control, Inbound, IoThreads, ui_channel};

use super::answer::PipeArgs;
use super::args::{StoreArgs, UiArgs};
use super::handover::{Delivered, Until};
use super::show::{missing_display, watch_signals};

/// How often a client starts an inbox and asks again after the inbox went away mid-question.
const RESTARTS: usize = 2;

/// How long a client waits for an inbox it started to listen.
const START_WAIT: Duration = Duration::from_secs(15);

/// How long past a request's `--timeout` the client waits for the inbox's outcome before it
/// checks on the inbox. The inbox's window ends a countdown on its next frame and writes the
/// outcome at once, so it normally comes within milliseconds; 2 s leaves room for a busy machine
/// and a window being drawn, and is little to an agent that allowed the timeout.
const OUTCOME_GRACE: Duration = Duration::from_secs(2);

/// How long the inbox has to answer the client's check (`list`, which the inbox's socket thread
/// answers, never its window): a running inbox answers in milliseconds, a stopped or hung one
/// never. As short as [`OUTCOME_GRACE`], for the same reasons.
const CHECK_ANSWER: Duration = Duration::from_secs(2);

/// How often a client past its deadline checks again on an inbox that answered: the person may
/// have stopped the countdown ("any key to stay") and be answering still, but the inbox may be
/// stopped later on.
const CHECK_AGAIN: Duration = Duration::from_secs(10);

/// How often a waiting `ask` or `hook` looks whether its agent is still there (two cheap
/// system calls); an agent that went away is noticed within this.
const CALLER_TICK: Duration = Duration::from_millis(250);

/// How long one send to the inbox may block (an inbox that stopped reading) before the client
/// counts the inbox as failed.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// Hands `message` to the running inbox (starting one when none runs and a person is needed),
/// waits for its outcome, and asks again (restarting the inbox) when the inbox goes away.
pub(super) fn deliver(
    message: &Value,
    mode: ClientMode,
    policy: &Policy,
    args: &PipeArgs,
    until: Until,
) -> Delivered {
    let place = match Place::find() {
        Ok(place) => place,
        Err(error) => {
            eprintln!("askpane: cannot use the inbox ({error}); answering here");
            return Delivered::Yourself(format!("cannot use the inbox: {error}"));
        }
    };
    let ask =
        AskMessage { id: "1".to_owned(), mode, message: message.clone(), policy: policy.clone() };
    // `mcp` takes calls for as long as its client runs: its stdout is not one request's.
    let caller = match until {
        Until::Signal => Some(Caller::now()),
        Until::Cancelled(_) => None,
    };
    let watch = Watch { timeout: policy.timeout_secs.map(Duration::from_secs), caller };
    let mut restarts = 0;
    loop {
        let client = match InboxClient::connect(&place) {
            Ok(client) => client,
            Err(ConnectError::NotRunning(_) | ConnectError::Unsupported(_))
                if !policy.needs_a_person() =>
            {
                // Decided by the flags alone: the same reply here, without starting an inbox.
                return Delivered::Yourself("decided without a person".to_owned());
            }
            Err(ConnectError::NotRunning(_)) => match start_inbox(&place, &args.shown, &args.store)
            {
                Ok(client) => client,
                Err(why) => {
                    eprintln!(
                        "askpane: no inbox runs and none can be started ({why}); answering here"
                    );
                    return Delivered::Yourself(format!(
                        "no inbox runs and none can be started: {why}"
                    ));
                }
            },
            Err(
                error @ (ConnectError::NoHello(_)
                | ConnectError::Unsupported(_)
                | ConnectError::Foreign { .. }),
            ) => {
                eprintln!("askpane: cannot use the inbox ({error}); answering here");
                return Delivered::Yourself(format!("cannot use the inbox: {error}"));
            }
        };
        let until = match &until {
            Until::Signal => Until::Signal,
            Until::Cancelled(cancel) => Until::Cancelled(cancel.clone()),
        };
        match wait_for_outcome(client, &ask, until, &watch) {
            Waited::Outcome { reply, exit_code, problem } => {
                return Delivered::Outcome { reply, exit_code, problem };
            }
            Waited::NoAnswer => {
                let secs = policy.timeout_secs.unwrap_or_default();
                eprintln!(
                    "askpane: the {secs} s timeout has passed and the inbox does not answer (is \
                     it stopped, or hung?); telling the agent the time ran out"
                );
                return timed_out_here(message, mode, policy, secs);
            }
            Waited::CallerGone(gone) => {
                // Nobody reads stdout, and stderr may be gone with the agent: a line there is
                // best effort, never a panic.
                let _ = writeln!(
                    io::stderr(),
                    "askpane: {}; the question was withdrawn and nothing is printed",
                    gone.describe()
                );
                return Delivered::Outcome {
                    reply: None,
                    exit_code: exit::AGENT_GONE,
                    problem: None,
                };
            }
            Waited::Stopped(signal) => return Delivered::Stopped(signal),
            Waited::Cancelled => return Delivered::Cancelled,
            Waited::InboxGone if restarts < RESTARTS => {
                restarts += 1;
                eprintln!("askpane: the inbox went away before an answer; asking again");
            }
            Waited::InboxGone => {
                eprintln!("askpane: the inbox keeps going away; answering here");
                return Delivered::Yourself("the inbox keeps going away".to_owned());
            }
            Waited::Failed(why) => {
                eprintln!("askpane: the inbox failed ({why}); answering here");
                return Delivered::Yourself(format!("the inbox failed: {why}"));
            }
        }
    }
}

enum Waited {
    Outcome {
        reply: Option<Value>,
        exit_code: u8,
        problem: Option<String>,
    },
    /// A signal stopped this client before the outcome came.
    Stopped(StopSignal),
    /// The caller cancelled: the request was withdrawn.
    Cancelled,
    /// The connection ended without an outcome: the inbox crashed or was killed.
    InboxGone,
    /// The request's time ran out, and the inbox neither decided it nor answered a check: it
    /// is stopped or hung. The request was withdrawn (the connection closed).
    NoAnswer,
    /// The agent went away; the request was withdrawn.
    CallerGone(CallerGone),
    Failed(String),
}

/// What a client watches while it waits, besides the inbox's messages.
struct Watch {
    /// The request's `--timeout`, counted from when it is handed over.
    timeout: Option<Duration>,
    /// The agent, for `ask` and `hook`.
    caller: Option<Caller>,
}

/// Where a client stands with its own deadline.
#[derive(Clone, Copy, Debug)]
enum Deadline {
    /// No `--timeout`: the inbox alone decides when the request ends.
    Unset,
    /// The inbox is checked on at this instant.
    CheckAt(Instant),
    /// A check was sent: the inbox answers by this instant, or counts as stopped.
    AnswerBy(Instant),
}

/// The reply the inbox itself gives a request whose time ran out with nothing picked: `timed_out`
/// in the request's envelope (or `--format`'s), and the exit code the inbox gives it.
fn timed_out_here(message: &Value, mode: ClientMode, policy: &Policy, secs: u64) -> Delivered {
    // A hook's tool call: no decision is printed, so Claude Code's own dialog decides.
    if askpane::protocol::permission::parse_hook_permission(message).is_some() {
        return Delivered::Outcome { reply: None, exit_code: exit::OK, problem: None };
    }
    let outcome = Outcome::timed_out(secs);
    // Parsed before it was handed over, so this never falls back in practice.
    let envelope = parse_message(message).map_or(Envelope::ToolInput, |incoming| incoming.envelope);
    let shape = ReplyShape {
        format: policy.format.map(ReplyFormat::from),
        always_a_line: mode.always_a_line(),
    };
    // As the inbox's `take_ask` computes it: a hook exits 0 once it printed.
    let exit_code = match mode {
        ClientMode::Hook | ClientMode::Claude | ClientMode::Codex => exit::OK,
        ClientMode::Ask | ClientMode::Mcp => exit::for_ask(&outcome, false),
    };
    Delivered::Outcome { reply: shape.line(&envelope, &outcome), exit_code, problem: None }
}

/// Sends the request and waits for its outcome, a signal or a cancel, the inbox's end, the
/// client's own deadline, or its agent going away.
fn wait_for_outcome(
    mut client: InboxClient,
    ask: &AskMessage,
    until: Until,
    watch: &Watch,
) -> Waited {
    // Caught from before the request is handed over: once the inbox shows it, a Ctrl+C must
    // end it with a reply, never kill the client silently.
    let (signals, cancel) = match until {
        Until::Signal => (watch_signals(), crossbeam_channel::never()),
        Until::Cancelled(cancel) => (None, cancel),
    };
    if let Err(error) = client.set_write_timeout(Some(SEND_TIMEOUT)) {
        return Waited::Failed(error.to_string());
    }
    if let Err(error) = client.send(&ClientMessage::Ask(Box::new(ask.clone()))) {
        return match error.kind() {
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => Waited::InboxGone,
            _ => Waited::Failed(error.to_string()),
        };
    }
    let (to_me, stop) = ui_channel(askpane::transport::Waker::noop());
    // Kept open while waiting: a closed channel would wake the wait at once, again and again.
    let route = signals.as_ref().map(|watch| watch.route(to_me.clone()));
    let (messages_sender, messages) = crossbeam_channel::unbounded();
    let mut threads = IoThreads::default();
    let reading = match client.try_clone() {
        Ok(reading) => reading,
        Err(error) => return Waited::Failed(error.to_string()),
    };
    let spawned = threads.spawn("inbox-reader", move || {
        let mut reading = reading;
        loop {
            let message = reading.receive();
            let end = !matches!(message, Ok(Some(_)));
            if messages_sender.send(message).is_err() || end {
                return Ok(());
            }
        }
    });
    if let Err(error) = spawned {
        return Waited::Failed(error.to_string());
    }
    let waited = wait(&messages, &stop, &cancel, &ask.id, &mut client, watch);
    if matches!(waited, Waited::Cancelled | Waited::CallerGone(_)) {
        // Closing the connection withdraws it too; saying so first names the request. (An
        // inbox that did not answer is not reading: closing is all it will find.)
        let _ = client.send(&ClientMessage::Withdraw { id: ask.id.clone() });
    }
    client.close();
    drop(route);
    drop(to_me);
    drop(messages);
    let _ = threads.join();
    waited
}

/// The client's one watch: the inbox's messages, a signal or a cancel, the deadline's timer,
/// and (for `ask` and `hook`) a tick that looks whether the agent is still there.
fn wait(
    messages: &Receiver<io::Result<Option<InboxMessage>>>,
    stop: &Receiver<Inbound>,
    cancel: &Receiver<()>,
    id: &str,
    client: &mut InboxClient,
    watch: &Watch,
) -> Waited {
    let mut deadline = match watch.timeout {
        Some(timeout) => Deadline::CheckAt(Instant::now() + timeout + OUTCOME_GRACE),
        None => Deadline::Unset,
    };
    let ticks = match watch.caller {
        Some(_) => crossbeam_channel::tick(CALLER_TICK),
        None => crossbeam_channel::never(),
    };
    loop {
        let timer = match deadline {
            Deadline::Unset => crossbeam_channel::never(),
            Deadline::CheckAt(at) | Deadline::AnswerBy(at) => crossbeam_channel::at(at),
        };
        select! {
            recv(messages) -> message => match message {
                Ok(Ok(Some(InboxMessage::Outcome(outcome)))) if outcome.id == id => {
                    return Waited::Outcome {
                        reply: outcome.reply,
                        exit_code: outcome.exit_code,
                        problem: outcome.problem,
                    };
                }
                Ok(Ok(Some(InboxMessage::Accepted { warnings, .. }))) => {
                    for warning in warnings {
                        eprintln!("askpane: warning: {warning}");
                    }
                }
                Ok(Ok(Some(InboxMessage::Error { message, .. }))) => return Waited::Failed(message),
                // The answer to a check: the inbox runs and still holds the request (its user
                // may have stopped the countdown), so the client waits on.
                Ok(Ok(Some(InboxMessage::List { .. }))) => {
                    if let Deadline::AnswerBy(_) = deadline {
                        deadline = Deadline::CheckAt(Instant::now() + CHECK_AGAIN);
                    }
                }
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None)) | Err(_) => return Waited::InboxGone,
                Ok(Err(error)) => match error.kind() {
                    io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => {
                        return Waited::InboxGone;
                    }
                    _ => return Waited::Failed(error.to_string()),
                },
            },
            recv(timer) -> _ => match deadline {
                Deadline::CheckAt(_) => match client.send(&ClientMessage::List) {
                    Ok(()) => deadline = Deadline::AnswerBy(Instant::now() + CHECK_ANSWER),
                    Err(error) => match error.kind() {
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => {
                            return Waited::InboxGone;
                        }
                        // Not even the check can be sent: the inbox stopped reading.
                        _ => return Waited::NoAnswer,
                    },
                },
                Deadline::AnswerBy(_) => return Waited::NoAnswer,
                Deadline::Unset => {}
            },
            recv(ticks) -> _ => {
                if let Some(gone) = watch.caller.as_ref().and_then(Caller::gone) {
                    return Waited::CallerGone(gone);
                }
            },
            recv(cancel) -> _ => return Waited::Cancelled,
            recv(stop) -> message => {
                if let Ok(Inbound::Control(Control::Shutdown { outcome })) = message
                    && let Some(signal) = StopSignal::from_outcome(&outcome)
                {
                    return Waited::Stopped(signal);
                }
            },
        }
    }
}

/// Starts an inbox in the background (its own process group, its output in the log file) and
/// connects to it. Of several clients doing this at once, the inbox lock keeps one inbox.
pub(super) fn start_inbox(
    place: &Place,
    shown: &UiArgs,
    store: &StoreArgs,
) -> Result<InboxClient, String> {
    let web = shown.web();
    if !web && let Some(problem) = missing_display() {
        return Err(format!("no display: {problem}"));
    }
    let exe = std::env::current_exe().map_err(|error| format!("cannot find askpane: {error}"))?;
    let log = log_file()?;
    let (log_out, log_path) = log;
    let log_err = log_out.try_clone().map_err(|error| error.to_string())?;
    let mut command = Command::new(exe);
    command.arg("inbox").arg("--on-demand");
    command.arg("--ui").arg(if web { "web" } else { "native" });
    command.arg("--bind").arg(shown.bind.to_string());
    if shown.lan {
        command.arg("--lan");
    }
    // The client's window and store settings, whether given as flags or variables.
    if let Some(theme) = clap::ValueEnum::to_possible_value(&shown.theme) {
        command.arg("--theme").arg(theme.get_name());
    }
    if let Some(dir) = &store.state_dir {
        command.arg("--state-dir").arg(dir);
    }
    // Never the client's own flags (they travel with each request).
    for name in
        ["ASKPANE_ANSWERS", "ASKPANE_SUBMIT", "ASKPANE_DECLINE", "ASKPANE_TIMEOUT", "ASKPANE_UI"]
    {
        command.env_remove(name);
    }
    command.env_remove("ASKPANE_NONINTERACTIVE");
    detach(&mut command);
    command.stdin(Stdio::null()).stdout(log_out).stderr(log_err);
    let mut child =
        command.spawn().map_err(|error| format!("cannot start `askpane inbox`: {error}"))?;
    let deadline = Instant::now() + START_WAIT;
    loop {
        match InboxClient::connect(place) {
            Ok(client) => return Ok(client),
            Err(ConnectError::NoHello(why)) => return Err(why),
            Err(ConnectError::Unsupported(error)) => return Err(error.to_string()),
            Err(error @ ConnectError::Foreign { .. }) => return Err(error.to_string()),
            Err(ConnectError::NotRunning(_)) => {}
        }
        // An inbox that lost the race to another exits 0 at once; keep trying the winner.
        if let Ok(Some(status)) = child.try_wait()
            && !status.success()
        {
            return Err(format!(
                "the inbox failed to start ({status}); see {}",
                log_path.display()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!("the inbox did not start in time; see {}", log_path.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Lets the inbox outlive the client that starts it. Unix: a process group of its own, so Claude
/// Code ending the hook's group leaves the inbox alone.
#[cfg(unix)]
fn detach(command: &mut Command) {
    std::os::unix::process::CommandExt::process_group(command, 0);
}

/// Lets the inbox outlive the client that starts it. Windows: no console of its own (its output
/// goes to the log file) and a process group of its own, so the client's console closing or its
/// Ctrl+C leaves the inbox alone.
#[cfg(windows)]
fn detach(command: &mut Command) {
    std::os::windows::process::CommandExt::creation_flags(command, detached_flags());
}

/// `DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP`.
#[cfg(windows)]
fn detached_flags() -> u32 {
    use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS};
    DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
}

/// The inbox's log: `inbox.log` in the state directory (`$XDG_STATE_HOME/askpane`, default
/// `~/.local/state/askpane`), never in a `--state-dir` a test or a user gave for the database.
fn log_file() -> Result<(std::fs::File, std::path::PathBuf), String> {
    let dir = askpane::store::state_dir(None).map_err(|error| error.to_string())?;
    // Private: the log holds the browser page's address, whose token lets anyone answer. (On
    // Windows the state directory is under %LOCALAPPDATA%, whose ACL is the user's already.)
    let mut make_dir = std::fs::DirBuilder::new();
    make_dir.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut make_dir, 0o700);
    make_dir.create(&dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
    let path = dir.join("inbox.log");
    let mut open = std::fs::File::options();
    open.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let file =
        open.open(&path).map_err(|error| format!("cannot open {}: {error}", path.display()))?;
    Ok((file, path))
}

/// A long-lived connection to the inbox (`askpane opencode`, `askpane claude`) and the thread
/// that reads it: what the inbox sends arrives on `messages`, ending with `Ok(None)` or an error
/// when the connection ends.
pub(super) struct Inbox {
    pub(super) client: InboxClient,
    pub(super) messages: Receiver<io::Result<Option<InboxMessage>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Inbox {
    /// Connects to the running inbox, starting one when none runs (as [`deliver`] does).
    pub(super) fn connect(shown: &UiArgs, store: &StoreArgs) -> Result<Inbox, String> {
        let place = Place::find().map_err(|error| error.to_string())?;
        let client = match InboxClient::connect(&place) {
            Ok(client) => client,
            Err(ConnectError::NotRunning(_)) => start_inbox(&place, shown, store)?,
            Err(error) => return Err(error.to_string()),
        };
        Inbox::open(client).map_err(|error| error.to_string())
    }

    fn open(client: InboxClient) -> io::Result<Inbox> {
        let mut reading = client.try_clone()?;
        let (sender, messages) = crossbeam_channel::unbounded();
        let reader = askpane::transport::spawn_named("inbox-reader", move || {
            loop {
                let message = reading.receive();
                let end = !matches!(message, Ok(Some(_)));
                if sender.send(message).is_err() || end {
                    return;
                }
            }
        })?;
        Ok(Inbox { client, messages, reader: Some(reader) })
    }

    /// Closes the connection (the inbox withdraws what it still holds for it) and joins the
    /// reader.
    pub(super) fn close(mut self) {
        self.client.close();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}
