//! The thin client (issue 10, on Unix and Windows): [`deliver`] hands one request to the running
//! inbox over its socket (starting one, through the caller's starter, when none runs and a person
//! is needed), waits for its outcome, and asks again when the inbox dies.
//!
//! While it waits, the client also keeps its own deadline and watches its agent (issue 24): a
//! request with `--timeout` that the inbox neither decides nor, when checked, still holds (the
//! inbox stopped by Ctrl+Z or SIGSTOP, or hung) gets the timed-out reply from the client itself;
//! an agent that went away (`ask` and `hook` only) has its request withdrawn and hears nothing.
//! When to check and when to give up is [`Deadline`]'s, a clock-free state machine.

use std::io;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};
use serde_json::Value;

use crate::protocol::inbox::{AskMessage, ClientMessage, ClientMode, InboxMessage, Policy};
use crate::protocol::tool_call::FileSnapshot;
use crate::protocol::{Envelope, Outcome, ReplyFormat, ReplyShape, exit, parse_message};

use super::super::caller::{Caller, CallerGone};
use super::super::signals::{SignalWatch, StopSignal};
use super::super::{Control, Inbound, Waker, ui_channel};
use super::coming::coming_link_wait;
use super::connection::read_into;
use super::{ConnectError, InboxClient, MAX_LINE_BYTES, Place};

/// How often a client starts an inbox and asks again after the inbox went away mid-question.
const RESTARTS: usize = 2;

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

/// How many times a client asks again after its link to the desk (`askpane remote`, issue 27)
/// went down mid-question and came back.
const LINK_RETURNS: usize = 10;

/// How long a client without `--timeout` waits for its link to come back: Claude Code ends its
/// hook long before (at the hook's own timeout), which the caller watch notices. (A hosted
/// session's relay waits as long for each question: `agents/relay.rs`.)
pub const LINK_WAIT: Duration = Duration::from_secs(600);

/// How often a client whose link went down tries the socket again.
pub const LINK_POLL: Duration = Duration::from_millis(200);

/// How often a waiting `ask` or `hook` looks whether its agent is still there (two cheap
/// system calls); an agent that went away is noticed within this.
const CALLER_TICK: Duration = Duration::from_millis(250);

/// How long one send to the inbox may block (an inbox that stopped reading) before the client
/// counts the inbox as failed.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// What a thin client waits for besides its outcome.
#[derive(Clone, Debug)]
pub enum Until {
    /// A signal (SIGTERM, Ctrl+C …) that stops this client: `ask` and `hook`.
    Signal,
    /// A message on this channel: the agent took the request back (`askpane mcp`'s
    /// `notifications/cancelled`). The request is withdrawn from the inbox at once.
    Cancelled(Receiver<()>),
}

/// Starts an inbox for a client when none runs, and connects to it; or says why it cannot.
pub type Starter<'a> = dyn Fn(&Place) -> Result<InboxClient, String> + 'a;

/// How handing one request to the inbox ended.
#[derive(Debug)]
pub enum Delivered {
    /// The inbox decided: the reply line (`None`: print nothing), the exit code, and what did
    /// not fit the policy (for stderr).
    Outcome { reply: Option<Value>, exit_code: u8, problem: Option<String> },
    /// A signal stopped this client before the outcome came.
    Stopped(StopSignal),
    /// The caller cancelled; the request left the inbox.
    Cancelled,
    /// No inbox can be used (said on stderr): answer here. The reason, in words.
    Yourself(String),
    /// No inbox runs, and the caller starts none itself (it gave no starter): nothing is said.
    /// The small hook client hands the request to `askpane hook` then.
    NotRunning,
}

/// Hands `message` to the running inbox (starting one with `start` when none runs and a person is
/// needed, or saying [`Delivered::NotRunning`] without it), waits for its outcome, and asks again
/// (restarting the inbox) when the inbox goes away.
pub fn deliver(
    message: &Value,
    mode: ClientMode,
    policy: &Policy,
    until: &Until,
    start: Option<&Starter<'_>>,
) -> Delivered {
    let place = match Place::find() {
        Ok(place) => place,
        Err(error) => {
            log::warn!("cannot use the inbox ({error}); answering here");
            return Delivered::Yourself(format!("cannot use the inbox: {error}"));
        }
    };
    let mut ask = AskMessage {
        id: "1".to_owned(),
        mode,
        message: message.clone(),
        policy: policy.clone(),
        on_disk: None,
    };
    // `mcp` takes calls for as long as its client runs: its stdout is not one request's.
    let caller = match until {
        Until::Signal => Some(Caller::now()),
        Until::Cancelled(_) => None,
    };
    let mut watch = Watch { timeout: policy.timeout_secs.map(Duration::from_secs), caller };
    let handed_at = Instant::now();
    let mut restarts = 0;
    let mut link_returns = 0;
    // A client whose link came back: the connection to ask on again.
    let mut back: Option<InboxClient> = None;
    loop {
        let connected = match back.take() {
            Some(client) => Ok(client),
            None => InboxClient::connect(&place),
        };
        // A link coming up on this host (stop 38): its forward is waited for, not answered past,
        // hearing a signal, a cancel or the agent's end meanwhile as a link's return does.
        let connected = match connected {
            Err(ConnectError::NotRunning(error)) if policy.needs_a_person() => {
                match coming_link_wait(&place) {
                    None => Err(ConnectError::NotRunning(error)),
                    Some(wait) => {
                        let said = "a link to your desk is coming up on this host; waiting for it";
                        match wait_for_link(&place, until, &watch, Instant::now() + wait, said) {
                            LinkWait::Back(client) => Ok(client),
                            LinkWait::TimedOut => Err(ConnectError::NotRunning(error)),
                            LinkWait::Stopped(signal) => return Delivered::Stopped(signal),
                            LinkWait::Cancelled => return Delivered::Cancelled,
                            LinkWait::CallerGone(gone) => return caller_gone(&gone),
                        }
                    }
                }
            }
            connected => connected,
        };
        let client = match connected {
            Ok(client) => client,
            Err(ConnectError::NotRunning(_) | ConnectError::Unsupported(_))
                if !policy.needs_a_person() =>
            {
                // Decided by the flags alone: the same reply here, without starting an inbox.
                return Delivered::Yourself("decided without a person".to_owned());
            }
            Err(ConnectError::NotRunning(_)) => match start.map(|start| start(&place)) {
                None => return Delivered::NotRunning,
                Some(Ok(client)) => client,
                Some(Err(why)) => {
                    log::warn!(
                        "no inbox runs and none can be started ({why}); answering here{}",
                        remote_hint()
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
                log::warn!("cannot use the inbox ({error}); answering here");
                return Delivered::Yourself(format!("cannot use the inbox: {error}"));
            }
        };
        // Through a link (issue 27) the inbox is on another machine: a tool call's file is read
        // here, where the agent runs, and sent with it (once; asked again, it goes again).
        if client.link.is_some() && ask.on_disk.is_none() && mode == ClientMode::Hook {
            ask.on_disk = snapshot_to_send(&ask);
        }
        match wait_for_outcome(client, &ask, until.clone(), &watch) {
            Waited::Outcome { reply, exit_code, problem } => {
                return Delivered::Outcome { reply, exit_code, problem };
            }
            Waited::NoAnswer => {
                let secs = policy.timeout_secs.unwrap_or_default();
                log::warn!(
                    "the {secs} s timeout has passed and the inbox does not answer (is it \
                     stopped, or hung?); telling the agent the time ran out"
                );
                return timed_out_here(message, mode, policy, secs);
            }
            Waited::CallerGone(gone) => {
                // Nobody reads stdout, and stderr may be gone with the agent: the logger's line
                // there is best effort, never a panic.
                log::warn!(
                    "{}; the question was withdrawn and nothing is printed",
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
            Waited::InboxGone { linked: true } if link_returns < LINK_RETURNS => {
                link_returns += 1;
                log::warn!(
                    "the link to your desk went down before an answer; waiting for it to come back"
                );
                // The time the agent allowed runs on: asked again, the request has what is left.
                let by = match watch.timeout {
                    Some(timeout) => handed_at + timeout,
                    None => Instant::now() + LINK_WAIT,
                };
                match wait_for_link(&place, until, &watch, by, "") {
                    LinkWait::Back(client) => {
                        log::warn!("the link is back; asking again");
                        let left = by.saturating_duration_since(Instant::now());
                        if watch.timeout.is_some() {
                            let secs = left.as_secs().max(1);
                            ask.policy.timeout_secs = Some(secs);
                            watch.timeout = Some(Duration::from_secs(secs));
                        }
                        back = Some(client);
                    }
                    LinkWait::TimedOut if policy.timeout_secs.is_some() => {
                        let secs = policy.timeout_secs.unwrap_or_default();
                        log::warn!("the link did not come back within the {secs} s timeout");
                        return timed_out_here(message, mode, policy, secs);
                    }
                    LinkWait::TimedOut => {
                        log::warn!("the link did not come back; answering here");
                        return Delivered::Yourself("the link did not come back".to_owned());
                    }
                    LinkWait::Stopped(signal) => return Delivered::Stopped(signal),
                    LinkWait::Cancelled => return Delivered::Cancelled,
                    LinkWait::CallerGone(gone) => return caller_gone(&gone),
                }
            }
            Waited::InboxGone { .. } if restarts < RESTARTS => {
                restarts += 1;
                log::warn!("the inbox went away before an answer; asking again");
            }
            Waited::InboxGone { .. } => {
                log::warn!("the inbox keeps going away; answering here");
                return Delivered::Yourself("the inbox keeps going away".to_owned());
            }
            Waited::Failed(why) => {
                log::warn!("the inbox failed ({why}); answering here");
                return Delivered::Yourself(format!("the inbox failed: {why}"));
            }
        }
    }
}

/// The file `ask`'s hook call would change, read here, if the request still fits the inbox's
/// line with it (a file at the snapshot's cap, escaped as JSON, beside a large call may not):
/// else why it was not sent.
fn snapshot_to_send(ask: &AskMessage) -> Option<FileSnapshot> {
    let snapshot = super::super::snapshot::of_hook_input(&ask.message)?;
    let with = AskMessage { on_disk: Some(snapshot), ..ask.clone() };
    let bytes = serde_json::to_vec(&ClientMessage::Ask(Box::new(with.clone())))
        .map_or(u64::MAX, |line| line.len() as u64);
    // Room for the newline and the inbox's own framing.
    match (bytes < MAX_LINE_BYTES - 1024, with.on_disk) {
        (true, on_disk) => on_disk,
        (false, Some(snapshot)) => Some(FileSnapshot::Unreadable {
            path: snapshot.path().to_owned(),
            reason: format!("it is too large to send with the request ({bytes} bytes with it)"),
        }),
        (false, None) => None,
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
    /// The connection ended without an outcome: the inbox crashed or was killed, or (`linked`:
    /// it came through `askpane remote`'s link, issue 27) the link went down.
    InboxGone {
        linked: bool,
    },
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

/// Where a client stands with its own deadline. Pure: every instant is given to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deadline {
    /// No `--timeout`: the inbox alone decides when the request ends.
    Unset,
    /// The inbox is checked on at this instant.
    CheckAt(Instant),
    /// A check was sent: the inbox answers by this instant, or counts as stopped.
    AnswerBy(Instant),
}

/// What the client does when its deadline's instant comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Due {
    /// Ask the inbox whether it still runs (`list`), and wait for the answer until then.
    Check(Deadline),
    /// The inbox did not answer the check: it is stopped or hung.
    GiveUp,
    /// Nothing was due.
    Nothing,
}

impl Deadline {
    /// The deadline of a request handed over at `now`: the first check comes when its timeout
    /// and the grace for the inbox's own outcome have passed.
    fn start(timeout: Option<Duration>, now: Instant) -> Deadline {
        match timeout {
            Some(timeout) => Deadline::CheckAt(now + timeout + OUTCOME_GRACE),
            None => Deadline::Unset,
        }
    }

    /// When the timer next fires.
    fn instant(self) -> Option<Instant> {
        match self {
            Deadline::Unset => None,
            Deadline::CheckAt(at) | Deadline::AnswerBy(at) => Some(at),
        }
    }

    /// The timer fired at `now`.
    fn fired(self, now: Instant) -> Due {
        match self {
            Deadline::CheckAt(_) => Due::Check(Deadline::AnswerBy(now + CHECK_ANSWER)),
            Deadline::AnswerBy(_) => Due::GiveUp,
            Deadline::Unset => Due::Nothing,
        }
    }

    /// The inbox answered a check at `now`: it runs and still holds the request (its user may
    /// have stopped the countdown), so the client waits on and checks again later.
    fn answered(self, now: Instant) -> Deadline {
        match self {
            Deadline::AnswerBy(_) => Deadline::CheckAt(now + CHECK_AGAIN),
            other => other,
        }
    }
}

/// The reply the inbox itself gives a request whose time ran out with nothing picked: `timed_out`
/// in the request's envelope (or `--format`'s), and the exit code the inbox gives it.
fn timed_out_here(message: &Value, mode: ClientMode, policy: &Policy, secs: u64) -> Delivered {
    // A hook's tool call: no decision is printed, so Claude Code's own dialog decides.
    if crate::protocol::permission::parse_hook_permission(message).is_some() {
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
        ClientMode::Hook | ClientMode::Claude | ClientMode::Codex | ClientMode::Acp => exit::OK,
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
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => {
                Waited::InboxGone { linked: client.link.is_some() }
            }
            _ => Waited::Failed(error.to_string()),
        };
    }
    let (to_me, stop) = ui_channel(Waker::noop());
    // Kept open while waiting: a closed channel would wake the wait at once, again and again.
    let route = signals.as_ref().map(|watch| watch.route(to_me.clone()));
    let (messages_sender, messages) = crossbeam_channel::unbounded();
    let reader = match client.try_clone().and_then(|reading| read_into(reading, messages_sender)) {
        Ok(reader) => reader,
        Err(error) => return Waited::Failed(error.to_string()),
    };
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
    let _ = reader.join();
    waited
}

/// How waiting for a link that went down ended.
enum LinkWait {
    /// A connection through it again (its hello read).
    Back(InboxClient),
    TimedOut,
    Stopped(StopSignal),
    Cancelled,
    CallerGone(CallerGone),
}

/// Waits until the inbox's socket answers again (the link is back), at most until `by`, while
/// the agent is still there and no signal or cancel came. `said` (if not empty) is logged once
/// the signals are caught, so that whoever reads it may signal this client.
fn wait_for_link(place: &Place, until: &Until, watch: &Watch, by: Instant, said: &str) -> LinkWait {
    let (signals, cancel) = match until {
        Until::Signal => (watch_signals(), crossbeam_channel::never()),
        Until::Cancelled(cancel) => (None, cancel.clone()),
    };
    if !said.is_empty() {
        log::info!("{said}");
    }
    loop {
        if let Ok(client) = InboxClient::connect(place) {
            return LinkWait::Back(client);
        }
        if let Some(signal) = signals.as_ref().and_then(SignalWatch::caught) {
            return LinkWait::Stopped(signal);
        }
        if let Some(gone) = watch.caller.as_ref().and_then(Caller::gone) {
            return LinkWait::CallerGone(gone);
        }
        let now = Instant::now();
        if now >= by {
            return LinkWait::TimedOut;
        }
        if cancel.recv_timeout(LINK_POLL.min(by - now)).is_ok() {
            return LinkWait::Cancelled;
        }
    }
}

/// The agent ended while its client waited for a link: nothing is printed (no one reads it).
fn caller_gone(gone: &CallerGone) -> Delivered {
    log::warn!("{}; nothing is printed", gone.describe());
    Delivered::Outcome { reply: None, exit_code: exit::AGENT_GONE, problem: None }
}

/// On an SSH host (`SSH_CONNECTION` set), how its questions reach the person's desk instead.
fn remote_hint() -> &'static str {
    match std::env::var_os("SSH_CONNECTION") {
        Some(_) => {
            "; this is an SSH session: run `askpane remote HOST` on your desk to answer this \
             host's questions there"
        }
        None => "",
    }
}

/// Catches the signals that stop a client, or says why it goes on without.
fn watch_signals() -> Option<SignalWatch> {
    SignalWatch::start()
        .map_err(|error| log::warn!("cannot catch signals ({error}); going on without"))
        .ok()
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
    let mut deadline = Deadline::start(watch.timeout, Instant::now());
    // Whether this connection comes through a link (issue 27): its hello said so.
    let linked = client.link.is_some();
    let ticks = match watch.caller {
        Some(_) => crossbeam_channel::tick(CALLER_TICK),
        None => crossbeam_channel::never(),
    };
    loop {
        let timer = match deadline.instant() {
            Some(at) => crossbeam_channel::at(at),
            None => crossbeam_channel::never(),
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
                        log::warn!("warning: {warning}");
                    }
                }
                Ok(Ok(Some(InboxMessage::Error { message, .. }))) => return Waited::Failed(message),
                Ok(Ok(Some(InboxMessage::List { .. }))) => {
                    deadline = deadline.answered(Instant::now());
                }
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None)) | Err(_) => return Waited::InboxGone { linked },
                Ok(Err(error)) => match error.kind() {
                    io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => {
                        return Waited::InboxGone { linked };
                    }
                    _ => return Waited::Failed(error.to_string()),
                },
            },
            recv(timer) -> _ => match deadline.fired(Instant::now()) {
                Due::Check(next) => match client.send(&ClientMessage::List { full: false }) {
                    Ok(()) => deadline = next,
                    Err(error) => match error.kind() {
                        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => {
                            return Waited::InboxGone { linked };
                        }
                        // Not even the check can be sent: the inbox stopped reading.
                        _ => return Waited::NoAnswer,
                    },
                },
                Due::GiveUp => return Waited::NoAnswer,
                Due::Nothing => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_timeout_the_client_never_checks_on_the_inbox() {
        let now = Instant::now();
        let deadline = Deadline::start(None, now);
        assert_eq!(deadline, Deadline::Unset);
        assert_eq!(deadline.instant(), None);
        assert_eq!(deadline.fired(now), Due::Nothing);
        assert_eq!(deadline.answered(now), Deadline::Unset);
    }

    #[test]
    fn the_first_check_comes_after_the_timeout_and_the_grace_for_the_inbox_s_own_outcome() {
        let now = Instant::now();
        let deadline = Deadline::start(Some(Duration::from_secs(30)), now);
        assert_eq!(deadline.instant(), Some(now + Duration::from_secs(30) + OUTCOME_GRACE));
    }

    #[test]
    fn an_unanswered_check_gives_up_and_an_answered_one_checks_again_later() {
        let start = Instant::now();
        let deadline = Deadline::start(Some(Duration::from_secs(1)), start);
        let first = start + Duration::from_secs(3);
        let Due::Check(waiting) = deadline.fired(first) else { panic!("a check is due") };
        assert_eq!(waiting, Deadline::AnswerBy(first + CHECK_ANSWER));
        // The inbox does not answer: stopped or hung.
        assert_eq!(waiting.fired(first + CHECK_ANSWER), Due::GiveUp);
        // It answers: it runs, and is checked on again after a while.
        let answered_at = first + Duration::from_millis(5);
        let again = waiting.answered(answered_at);
        assert_eq!(again, Deadline::CheckAt(answered_at + CHECK_AGAIN));
        assert!(matches!(again.fired(answered_at + CHECK_AGAIN), Due::Check(_)));
    }

    #[test]
    fn a_list_that_comes_when_no_check_waits_changes_nothing() {
        let now = Instant::now();
        let deadline = Deadline::CheckAt(now + Duration::from_secs(60));
        assert_eq!(deadline.answered(now), deadline);
    }
}
