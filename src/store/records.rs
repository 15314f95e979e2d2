//! What the store keeps, as plain data: the key a request is stored under, an open request, how a
//! request ended, and one history entry.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::book::Core;
use crate::protocol::history::HistoryKind;
use crate::protocol::origin::Provenance;
use crate::protocol::permission::{self, ApprovalOrigin, ApprovalOutcome};
use crate::protocol::stream::{PermissionDecision, PermissionRequest, tool_summary};
use crate::protocol::{Envelope, Outcome, OutcomeKind, ReplyShape, ResultStyle};

/// The key a request is stored under: its tool_use_id when the envelope names one, else one
/// made from what was asked and who asked (`asked-` and a digest of both). Either way a request
/// asked again after a crash finds its drafts: a plain `askpane ask` without an id too.
pub fn request_key(core: &Core) -> String {
    let key = local_key(core);
    // Issue 27: a remote host's ids are its own; under the host's name they never meet this
    // machine's or another host's (nor their drafts).
    under_host(&core.provenance, key)
}

/// `key` under the remote host `provenance` came from (issue 27), so ids from two machines
/// never meet; this machine's keys as they are.
fn under_host(provenance: &Provenance, key: String) -> String {
    match &provenance.host {
        Some(host) => format!("{host}/{key}"),
        None => key,
    }
}

/// The key of [`request_key`] before a remote host's name is put in front.
fn local_key(core: &Core) -> String {
    match core.envelope.tool_use_id() {
        Some(id) => id.to_owned(),
        None => {
            let mut digest = who_asked(&core.provenance);
            digest.update(asked_fingerprint(core).as_bytes());
            format!("asked-{}", hex(&digest.finalize()))
        }
    }
}

/// A digest begun with who asked (each part framed), for the keys of requests without an id.
fn who_asked(provenance: &Provenance) -> Sha256 {
    let mut digest = Sha256::new();
    for part in [
        Some(provenance.source.as_str()),
        provenance.detail.as_deref(),
        provenance.project.as_deref(),
        provenance.session.as_deref(),
        provenance.subagent.as_deref(),
    ] {
        framed(&mut digest, part);
    }
    digest
}

/// `part` into `digest` after its length, so ("ab", "c") and ("a", "bc") differ.
fn framed(digest: &mut Sha256, part: Option<&str>) {
    let part = part.unwrap_or_default();
    digest.update((part.len() as u64).to_le_bytes());
    digest.update(part.as_bytes());
}

/// A fingerprint of the questions a request asks (their JSON as received, options and all): a
/// draft is restored only into questions with the same fingerprint.
pub fn asked_fingerprint(core: &Core) -> String {
    fingerprint_of(core.ask.input().get("questions"))
}

/// The key a plan's draft is saved under (issue 26 leftovers): `plan-` and the tool call's id,
/// which stays the same when the agent (or its relay, after an inbox restart) asks again;
/// without one, a digest of who asked and the plan, as [`request_key`] makes for a question.
pub fn plan_key(request: &PermissionRequest, provenance: &Provenance) -> String {
    if let Some(id) = request.tool_use_id.as_deref().filter(|id| !id.is_empty()) {
        return under_host(provenance, format!("plan-{id}"));
    }
    let mut digest = who_asked(provenance);
    framed(&mut digest, request.input.get("plan").and_then(serde_json::Value::as_str));
    under_host(provenance, format!("plan-{}", hex(&digest.finalize())))
}

/// The key an ACP form's draft is saved under: `form-` and a digest of who asked and the form
/// (its message and schema, as the card holds them). ACP's forms carry no tool call id; a relay's
/// new inbox, told the form again after a crash, asks it with the same provenance and input.
pub fn form_key(request: &PermissionRequest, provenance: &Provenance) -> String {
    let mut digest = who_asked(provenance);
    framed(&mut digest, Some(&request.input.to_string()));
    under_host(provenance, format!("form-{}", hex(&digest.finalize())))
}

/// The key under which a card's first ask is kept (issue 26 leftovers): `card-` and the tool
/// call's id, which stays when it is asked again (a relay's resend). `None` without one (a
/// hook's `PermissionRequest` names none): the same command asked again later in the same
/// session could not be told from a resend, and would be listed as old as the first.
pub fn card_key(request: &PermissionRequest, provenance: &Provenance) -> Option<String> {
    let id = request.tool_use_id.as_deref().filter(|id| !id.is_empty())?;
    Some(under_host(provenance, format!("card-{id}")))
}

/// The fingerprint of a tool input's `questions` ([`asked_fingerprint`]).
pub(super) fn fingerprint_of(questions: Option<&serde_json::Value>) -> String {
    let questions = questions.map(serde_json::Value::to_string).unwrap_or_default();
    hex(&Sha256::digest(questions.as_bytes()))
}

/// When this process started, in milliseconds: with the pid, it keeps the made-up keys of
/// messages decided before they became requests (no drafts) of two runs apart.
fn process_tag() -> u128 {
    static STARTED: OnceLock<u128> = OnceLock::new();
    *STARTED.get_or_init(|| to_millis(SystemTime::now()) as u128)
}

/// The first 128 bits of a digest in hex: plenty to tell requests apart, short enough to read.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().take(16).map(|byte| format!("{byte:02x}")).collect()
}

/// Unix milliseconds, as the database stores times (0 before 1970).
pub fn to_millis(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

/// The time `millis` (Unix milliseconds) stands for.
pub fn from_millis(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}

/// How a request ended, as history lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The user answered (with the form, or in their own words).
    Answered,
    /// The user declined (or stopped the agent, or closed the window; askpane was stopped).
    Declined,
    /// "Chat about this".
    Clarify,
    /// The agent took the question back, or it was settled elsewhere.
    Withdrawn,
    TimedOut,
    /// No human could answer (no display, a non-interactive run, `--non-interactive`).
    NoHuman,
    /// The input was invalid and was refused.
    Refused,
    /// The process that held it went away without an outcome (a crash, kill -9).
    Abandoned,
    /// A tool call the person allowed (once, or always: the outcome says which).
    Allowed,
    /// A tool call the person denied.
    Denied,
    /// A tool call the person left to the agent's own dialog or policy.
    HandedBack,
}

impl Ended {
    pub const ALL: [Ended; 11] = [
        Ended::Answered,
        Ended::Declined,
        Ended::Clarify,
        Ended::Withdrawn,
        Ended::TimedOut,
        Ended::NoHuman,
        Ended::Refused,
        Ended::Abandoned,
        Ended::Allowed,
        Ended::Denied,
        Ended::HandedBack,
    ];

    /// How an approval's outcome counts in history.
    pub fn of_approval(outcome: ApprovalOutcome) -> Ended {
        match outcome {
            ApprovalOutcome::AllowedOnce | ApprovalOutcome::AllowedAlways => Ended::Allowed,
            ApprovalOutcome::Denied => Ended::Denied,
            ApprovalOutcome::HandedBack => Ended::HandedBack,
            ApprovalOutcome::Withdrawn => Ended::Withdrawn,
            ApprovalOutcome::TimedOut => Ended::TimedOut,
            ApprovalOutcome::NoHuman => Ended::NoHuman,
        }
    }

    /// How an outcome counts in history.
    pub fn of(outcome: &Outcome) -> Ended {
        match outcome {
            Outcome::Answered(_) | Outcome::Replied(_) => Ended::Answered,
            Outcome::Declined { .. } | Outcome::Stopped { .. } => Ended::Declined,
            Outcome::Clarify { .. } => Ended::Clarify,
            Outcome::Withdrawn => Ended::Withdrawn,
            Outcome::TimedOut(_) => Ended::TimedOut,
            Outcome::Unavailable { .. } => Ended::NoHuman,
            Outcome::Refused { .. } => Ended::Refused,
        }
    }

    /// The name stored and printed: `answered`, `declined`, `clarify`, `withdrawn`,
    /// `timed_out`, `no_human`, `refused`, `abandoned`; for approvals also `allowed`, `denied`,
    /// `handed_back`.
    pub fn name(self) -> &'static str {
        match self {
            Ended::Answered => "answered",
            Ended::Declined => "declined",
            Ended::Clarify => "clarify",
            Ended::Withdrawn => "withdrawn",
            Ended::TimedOut => "timed_out",
            Ended::NoHuman => "no_human",
            Ended::Refused => "refused",
            Ended::Abandoned => "abandoned",
            Ended::Allowed => "allowed",
            Ended::Denied => "denied",
            Ended::HandedBack => "handed_back",
        }
    }

    pub fn from_name(name: &str) -> Option<Ended> {
        Ended::ALL.into_iter().find(|ended| ended.name() == name)
    }
}

/// The outcome's own kind as history keeps it (`replied` and `stopped` apart, unlike [`Ended`]).
/// Stored by its name, byte for byte [`OutcomeKind::as_str`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedOutcome {
    Kind(OutcomeKind),
    /// How an approval ended (issue 26): `allowed_once`, `allowed_always`, `denied`, …
    Approval(ApprovalOutcome),
    /// Nothing ended it: its askpane went away first (`abandoned`).
    Abandoned,
    /// A name this askpane does not know (a newer one stored it): shown as it is.
    Other(String),
}

impl RecordedOutcome {
    /// The name stored and printed.
    pub fn as_str(&self) -> &str {
        match self {
            RecordedOutcome::Kind(kind) => kind.as_str(),
            RecordedOutcome::Approval(outcome) => outcome.as_str(),
            RecordedOutcome::Abandoned => Ended::Abandoned.name(),
            RecordedOutcome::Other(name) => name,
        }
    }

    /// Reads a stored name back.
    pub fn from_name(name: String) -> Self {
        match name.parse() {
            Ok(kind) => RecordedOutcome::Kind(kind),
            Err(_) if name == Ended::Abandoned.name() => RecordedOutcome::Abandoned,
            Err(_) => RecordedOutcome::Other(name),
        }
    }

    /// Reads a stored name back for an entry of `kind` (an approval's names are its own:
    /// `withdrawn` there is an approval's, not a question's).
    pub fn from_stored(name: String, kind: HistoryKind) -> Self {
        if kind == HistoryKind::Question {
            return RecordedOutcome::from_name(name);
        }
        match ApprovalOutcome::ALL.into_iter().find(|outcome| outcome.as_str() == name) {
            Some(outcome) => RecordedOutcome::Approval(outcome),
            None => RecordedOutcome::Other(name),
        }
    }
}

impl From<OutcomeKind> for RecordedOutcome {
    fn from(kind: OutcomeKind) -> Self {
        RecordedOutcome::Kind(kind)
    }
}

/// A request that is open, as stored while it waits (so a crash leaves a trace of it).
#[derive(Clone, Debug, PartialEq)]
pub struct OpenRecord {
    pub key: String,
    /// Which envelope it came in (`Envelope::describe`).
    pub envelope: String,
    /// The AskUserQuestion tool input as received, JSON.
    pub input: String,
    pub provenance: Provenance,
    pub asked_at: SystemTime,
    /// The askpane process holding it.
    pub pid: u32,
}

impl OpenRecord {
    pub fn new(core: &Core, asked_at: SystemTime) -> Self {
        OpenRecord {
            key: request_key(core),
            envelope: core.envelope.describe().to_owned(),
            input: serde_json::Value::Object(core.ask.input().clone()).to_string(),
            provenance: core.provenance.clone(),
            asked_at,
            pid: std::process::id(),
        }
    }
}

/// One ended request, as history keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryRecord {
    pub key: String,
    /// When it was asked; `None` takes the time its open request was stored, else `ended_at`.
    pub asked_at: Option<SystemTime>,
    pub ended_at: SystemTime,
    pub provenance: Provenance,
    /// The request's title (its first header).
    pub header: String,
    /// The tool input as asked, JSON.
    pub questions: String,
    pub ended: Ended,
    /// The outcome's own kind ([`Outcome::kind`]): `replied` and `stopped` are kept apart here.
    pub outcome: RecordedOutcome,
    /// The answer in short, for tables and search.
    pub answer: String,
    /// The exact reply line sent; `None` when nothing was sent (a withdrawn `can_use_tool`).
    pub reply: Option<String>,
    /// What the model read.
    pub model_text: Option<String>,
    /// Issue 26: what only an approval's entry has (`None` for a question's).
    pub approval: Option<ApprovalFacts>,
    /// Issue 31: who answered: `window`, `page`, or `socket:<label>` (a front end on the inbox
    /// socket); `None` where nobody did (withdrawn, timed out, decided by a flag).
    pub answered_by: Option<String>,
}

/// What history keeps of an approval beyond what every entry has (issue 26). The entry's
/// `header` is the tool call in one line ([`tool_summary`]), its `questions` the tool input.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalFacts {
    /// The tool's name (`Bash`, `Edit`, `ExitPlanMode`, …).
    pub tool: String,
    pub outcome: ApprovalOutcome,
    /// The rule an "always" added, worded as its button was.
    pub rule: Option<String>,
    /// The message a deny sent (what the model read).
    pub deny_message: Option<String>,
    /// Who asked: a `PermissionRequest` hook, or a session askpane hosts.
    pub origin: ApprovalOrigin,
}

impl ApprovalFacts {
    /// An approval, or a plan when the tool is `ExitPlanMode`.
    pub fn kind(&self) -> HistoryKind {
        HistoryKind::of_tool(&self.tool)
    }
}

impl HistoryRecord {
    /// A question, an approval or a plan.
    pub fn kind(&self) -> HistoryKind {
        self.approval.as_ref().map_or(HistoryKind::Question, ApprovalFacts::kind)
    }

    /// Issue 26: an approval of `request` (asked by `provenance`) that ended as `outcome` with
    /// `decision` sent to the agent. `asked_at` `None` takes `ended_at`.
    pub fn of_approval(
        request: &PermissionRequest,
        provenance: Provenance,
        outcome: ApprovalOutcome,
        decision: &PermissionDecision,
        (asked_at, ended_at): (Option<SystemTime>, SystemTime),
    ) -> Self {
        let rule = match decision {
            PermissionDecision::AllowAlways { suggestion } => Some(suggestion.summary()),
            _ => None,
        };
        let deny_message = match decision {
            PermissionDecision::Deny { message } => Some(message.clone()),
            _ => None,
        };
        let answer = rule.clone().or_else(|| deny_message.clone()).unwrap_or_default();
        // A hook's reply is the one line it printed; a hosted session's answer is the
        // session's own message, not kept here.
        let reply = match request.origin {
            ApprovalOrigin::Hook => {
                permission::hook_reply(request, decision).map(|line| line.to_string())
            }
            // OpenCode's reply body, as it was sent (`POST /permission/{id}/reply`).
            ApprovalOrigin::OpenCode => crate::book::followed::permission_reply(decision)
                .map(|reply| reply.body().to_string()),
            ApprovalOrigin::Hosted => None,
        };
        // The request's own id is unique per card in a process only: the tool call's id is
        // the agent's, and the prefix keeps it apart from a question's key.
        let id = request.tool_use_id.as_deref().unwrap_or(&request.request_id);
        let key = match id.is_empty() {
            true => {
                format!("approval-{}-{}-{}", process_tag(), std::process::id(), to_millis(ended_at))
            }
            false => format!("approval-{id}"),
        };
        HistoryRecord {
            answered_by: None,
            key,
            asked_at: Some(asked_at.unwrap_or(ended_at)),
            ended_at,
            provenance,
            header: approval_summary(request),
            questions: request.input.to_string(),
            ended: Ended::of_approval(outcome),
            outcome: RecordedOutcome::Approval(outcome),
            answer,
            reply,
            model_text: deny_message.clone(),
            approval: Some(ApprovalFacts {
                tool: request.tool_name.clone(),
                outcome,
                rule,
                deny_message,
                origin: request.origin,
            }),
        }
    }

    /// A request that ended with `outcome`; `reply` is the line sent for it.
    pub fn new(
        core: &Core,
        outcome: &Outcome,
        reply: Option<String>,
        ended_at: SystemTime,
    ) -> Self {
        HistoryRecord {
            answered_by: None,
            key: request_key(core),
            asked_at: None,
            ended_at,
            provenance: core.provenance.clone(),
            header: core.ask.title().to_owned(),
            questions: serde_json::Value::Object(core.ask.input().clone()).to_string(),
            ended: Ended::of(outcome),
            outcome: outcome.kind().into(),
            answer: short_answer(outcome),
            reply,
            model_text: Some(core.reply_shape.model_text(&core.envelope, &core.ask, outcome)),
            approval: None,
        }
    }

    /// A message as it came in (perhaps invalid, perhaps decided before it became a request):
    /// what was asked, and how it ended.
    pub fn from_message(
        envelope: &Envelope,
        input: &serde_json::Value,
        provenance: Provenance,
        outcome: &Outcome,
        shape: ReplyShape,
        at: SystemTime,
    ) -> Self {
        let ask = crate::protocol::validate(input).ok().map(|validated| validated.ask);
        let reply = shape.line(envelope, outcome).map(|line| line.to_string());
        let model_text = match &ask {
            Some(ask) => shape.model_text(envelope, ask, outcome),
            None => outcome.model_text(ResultStyle::Current),
        };
        let key = match envelope.tool_use_id() {
            Some(id) => id.to_owned(),
            None => format!("local-{}-{}-{}", process_tag(), std::process::id(), to_millis(at)),
        };
        HistoryRecord {
            answered_by: None,
            key,
            asked_at: None,
            ended_at: at,
            provenance,
            header: ask.as_ref().map(|ask| ask.title().to_owned()).unwrap_or_default(),
            questions: match &ask {
                Some(ask) => serde_json::Value::Object(ask.input().clone()).to_string(),
                None => input.to_string(),
            },
            ended: Ended::of(outcome),
            outcome: outcome.kind().into(),
            answer: short_answer(outcome),
            reply,
            model_text: Some(model_text),
            approval: None,
        }
    }
}

/// An approval in one line: [`tool_summary`], and a plan by its first line (its input is the
/// plan's markdown, which `tool_summary` does not look into).
fn approval_summary(request: &PermissionRequest) -> String {
    let plan = request.input.get("plan").and_then(serde_json::Value::as_str);
    match (HistoryKind::of_tool(&request.tool_name), plan) {
        (HistoryKind::Plan, Some(plan)) => {
            let first = plan.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
            let mut line: String = first.chars().take(80).collect();
            if line.len() < first.len() {
                line.push('…');
            }
            format!("{}: {line}", request.tool_name)
        }
        _ => tool_summary(&request.tool_name, &request.input),
    }
}

/// The answer in a few words: each question's answer (and note), or why there is none.
pub fn short_answer(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Answered(answers) => {
            let pieces: Vec<String> = answers
                .entries()
                .iter()
                .map(|entry| {
                    let mut piece = entry.answer.clone().unwrap_or_else(|| "(none)".to_owned());
                    if let Some(notes) = &entry.notes {
                        piece.push_str(&format!(" (notes: {notes})"));
                    }
                    piece
                })
                .collect();
            pieces.join(" · ")
        }
        Outcome::Replied(reply) => format!("in own words: {}", reply.text()),
        Outcome::Declined { message } | Outcome::Stopped { message } => message.clone(),
        Outcome::Clarify { .. } => "wants to talk about it first".to_owned(),
        Outcome::Withdrawn => String::new(),
        Outcome::TimedOut(timed_out) => format!("no response after {} s", timed_out.waited_secs),
        Outcome::Unavailable { reason } | Outcome::Refused { reason } => reason.clone(),
    }
}

/// One entry read back from history.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryEntry {
    pub id: i64,
    pub record: HistoryRecord,
    /// When it was asked (always known once stored).
    pub asked_at: SystemTime,
}

/// Which history entries to read.
#[derive(Clone, Debug, Default)]
pub struct HistoryQuery {
    /// Ended at or after this time.
    pub since: Option<SystemTime>,
    /// Asked in this project (exactly).
    pub project: Option<String>,
    /// Asked by this kind of agent (its provenance `source`: `hook`, `ask`, …; exactly).
    pub source: Option<String>,
    /// Containing this text in the questions, the answer or what the model read (ASCII letters
    /// match either case).
    pub search: Option<String>,
    /// Only this kind of entry (issue 26); every kind when `None`.
    pub kind: Option<HistoryKind>,
    /// Only what was asked through the link of this SSH host (issue 27; exactly).
    pub host: Option<String>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
    /// Issue 30: only entries older than this one (by id; in the order entries are listed,
    /// `ended_at` then id), the History page's next page. An entry no longer kept (pruned
    /// meanwhile) has nothing older to show: none is read.
    pub before: Option<i64>,
}
