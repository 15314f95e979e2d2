//! Every way a request can end, and the exact text the model then reads (protocol.md §6–§7).
//!
//! The promise to the user is that the agent is always told what really happened: an answer, a
//! decline, a question the agent withdrew, nobody answering in time, nobody there to answer, or
//! input that could not be shown. Each variant carries the text the model will read.

use serde_json::{Map, Value};

use super::answer::{Answers, Draft, QuestionAnswer, build_answers};
use super::question::Ask;

/// What the model reads when the user closed the window with questions still open.
pub const CLOSED_MESSAGE: &str = "The user closed the question window without answering. Do not assume an answer; ask again \
     in chat if you still need one.";

/// Which way a request ended ([`Outcome::kind`]), without what it carries. Its name
/// ([`OutcomeKind::as_str`]) is stored in history and carried by the inbox's and the browser's
/// wires, byte for byte as before it was an enum: `answered`, `declined`, `withdrawn`,
/// `timed_out`, `clarify`, `unavailable`, `refused`, `stopped`, `replied`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Answered,
    Declined,
    Withdrawn,
    TimedOut,
    Clarify,
    Unavailable,
    Refused,
    Stopped,
    Replied,
}

impl OutcomeKind {
    pub const ALL: [OutcomeKind; 9] = [
        OutcomeKind::Answered,
        OutcomeKind::Declined,
        OutcomeKind::Withdrawn,
        OutcomeKind::TimedOut,
        OutcomeKind::Clarify,
        OutcomeKind::Unavailable,
        OutcomeKind::Refused,
        OutcomeKind::Stopped,
        OutcomeKind::Replied,
    ];

    /// The name stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Answered => "answered",
            OutcomeKind::Declined => "declined",
            OutcomeKind::Withdrawn => "withdrawn",
            OutcomeKind::TimedOut => "timed_out",
            OutcomeKind::Clarify => "clarify",
            OutcomeKind::Unavailable => "unavailable",
            OutcomeKind::Refused => "refused",
            OutcomeKind::Stopped => "stopped",
            OutcomeKind::Replied => "replied",
        }
    }
}

impl std::fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no [`OutcomeKind`]'s (one a newer askpane stored, or a hostile page sent).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a way a request ends")]
pub struct UnknownOutcomeKind(pub String);

impl std::str::FromStr for OutcomeKind {
    type Err = UnknownOutcomeKind;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        OutcomeKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| UnknownOutcomeKind(name.to_owned()))
    }
}

/// A kind equals the name it is stored under (the tests compare with the names).
impl PartialEq<&str> for OutcomeKind {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

/// How a request ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The user submitted; unanswered questions are left out (and may all be out).
    Answered(Answers),
    /// The user refused to answer. `message` is what the model reads, verbatim.
    Declined { message: String },
    /// The agent took the question back before the user answered; nothing is sent on paths that
    /// already know (the CLI's `control_cancel_request`).
    Withdrawn,
    /// The time allowed ran out before the user submitted. What they had picked is told to the
    /// model in words, never sent as their answer.
    TimedOut(TimedOut),
    /// "Chat about this": the user wants to talk before answering. `message` is the terminal
    /// dialog's own clarify feedback (protocol.md §15), with every answer picked so far; `picked`
    /// holds those picks for envelopes that carry them by number (the browser's).
    Clarify { message: String, picked: Option<Answers> },
    /// No human can answer (no display, a non-interactive run). `reason` says why.
    Unavailable { reason: String },
    /// The input could not be shown: `reason` lists what is wrong with it.
    Refused { reason: String },
    /// The user declined and stopped the agent's turn (a stream-json host's deny with
    /// `interrupt`). `message` goes where the envelope has room for it.
    Stopped { message: String },
    /// The user answered in their own words instead of the form (`updatedInput.response`).
    Replied(Reply),
}

/// A free-form reply, with the tool input it answers (the reply echoes it).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    input: Map<String, Value>,
    text: String,
}

impl Reply {
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The input echoed, `answers` empty, and `response`: the CLI then tells the model "The user
    /// responded: …" (protocol.md §5.3).
    pub fn updated_input(&self) -> Value {
        let mut input = self.input.clone();
        input.insert("answers".into(), Value::Object(Map::new()));
        input.shift_remove("annotations");
        input.insert("response".into(), Value::String(self.text.clone()));
        Value::Object(input)
    }
}

/// How the time ran out on a request: how long it was given, and what the user had done by then.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedOut {
    pub waited_secs: u64,
    /// The finished answers the user picked in this showing before the time ran out (none when
    /// nothing was picked).
    pub picked: Option<Answers>,
    /// The questions (index, text) whose Other or note box the user was still typing in: what
    /// they typed is left out.
    pub still_typing: Vec<(usize, String)>,
    /// Answers filled in before the user saw the form that they never confirmed: told to the
    /// model as what they are, never as the user's answer.
    /// (Boxed: rare, and every outcome would carry its size.)
    pub unconfirmed: Option<Box<Unconfirmed>>,
}

/// Where answers filled in before the user saw the form came from (by [`Prefill::name`] on the
/// browser's wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prefill {
    /// The asking client's `--answers`, filled in for the user to confirm.
    #[default]
    Preset,
    /// A draft the user left in an earlier showing of the same request (before a crash).
    SavedDraft,
}

impl Prefill {
    /// The name on the browser's wire.
    pub fn name(self) -> &'static str {
        match self {
            Prefill::Preset => "preset",
            Prefill::SavedDraft => "saved_draft",
        }
    }

    pub fn from_name(name: &str) -> Option<Prefill> {
        [Prefill::Preset, Prefill::SavedDraft].into_iter().find(|prefill| prefill.name() == name)
    }
}

/// Answers that were filled in and that the user never confirmed in this showing.
#[derive(Clone, Debug, PartialEq)]
pub struct Unconfirmed {
    pub from: Prefill,
    pub answers: Answers,
}

/// What a form held when its time ran out, question by question (one draft per question).
#[derive(Clone, Copy, Debug)]
pub struct AtDeadline<'a> {
    /// What the user did in this showing: a question they never acted on is an empty draft, and
    /// a box they were still typing in is cleared.
    pub finished: &'a [Draft],
    /// The questions whose box the user was still typing in.
    pub typing: &'a [usize],
    /// What was filled in before the showing on the questions the user never acted on (empty
    /// drafts for the others), and where it came from.
    pub prefilled: &'a [Draft],
    pub prefill: Prefill,
    /// The seconds the request was given in all.
    pub waited_secs: u64,
}

impl TimedOut {
    /// What the model reads: the terminal dialog's own auto-continue wording (the CLI's `afk`
    /// text, which hosts may not trigger themselves, protocol.md §15), then the picks.
    pub fn message(&self) -> String {
        let mut text = format!(
            "No response after {}s \u{2014} the user may be away from keyboard. Proceed using \
             your best judgment based on the context so far; you can re-ask this question later \
             if it's still relevant.",
            self.waited_secs
        );
        if let Some(picked) = self.picked.as_ref().filter(|picked| !picked.is_empty()) {
            let pieces: Vec<String> = picked.entries().iter().map(piece).collect();
            text.push_str(&format!(
                "\n\nBefore going idle the user had selected: {}.",
                pieces.join(", ")
            ));
        }
        if !self.still_typing.is_empty() {
            let quoted: Vec<String> =
                self.still_typing.iter().map(|(_, question)| format!("\"{question}\"")).collect();
            text.push_str(&format!(
                " The user was still typing an answer to {} when the time ran out; what they \
                 typed was not sent.",
                quoted.join(", ")
            ));
        }
        if let Some(unconfirmed) = &self.unconfirmed {
            let pieces: Vec<String> = unconfirmed.answers.entries().iter().map(piece).collect();
            let pieces = pieces.join(", ");
            text.push_str(&match unconfirmed.from {
                Prefill::Preset => format!(
                    "\n\nAnswers were filled in in advance for the user to confirm, but nobody \
                     confirmed them: {pieces}. They are not the user's answers."
                ),
                Prefill::SavedDraft => format!(
                    "\n\nA draft the user left in an earlier showing of these questions was \
                     restored, but they did not confirm it this time: {pieces}. It is not their \
                     answer."
                ),
            });
        }
        text
    }
}

/// The first line of the clarify feedback the terminal dialog sends for "Chat about this"
/// (protocol.md §15, read from the 2.1.330 dialog); the rest lists the questions.
const CLARIFY_HEAD: &str = "The user wants to clarify these questions.
    This means they may have additional information, context or questions for you.
    Take their response into account and then reformulate the questions if appropriate.
    Start by asking them what they would like to clarify.

    Questions asked:";

/// What the model reads when the user submitted without answering anything.
pub const NOTHING_ANSWERED_MESSAGE: &str = "The user submitted without answering any of these \
    questions. Do not assume an answer; continue without one or ask in chat.";

/// What the model reads after a deny with `interrupt` (protocol.md §6); the message is not used.
pub const STOPPED_TEXT: &str = "The user doesn't want to proceed with this tool use. The tool use \
    was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what \
    you are doing and wait for the user to tell you how to proceed.";

/// The two endings the CLI has used for an answered tool_result (protocol.md §7, §12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResultStyle {
    /// 2.1.330: "Your questions have been answered" only when every answer is an option label and
    /// there are no notes; otherwise "The user answered: … Read the answers carefully …".
    #[default]
    Current,
    /// 2.1.197 and earlier: always "Your questions have been answered: …".
    Legacy,
}

impl Outcome {
    /// A decline with the user's optional words to the agent.
    pub fn declined(user_message: &str) -> Self {
        Outcome::Declined { message: decline_message(user_message) }
    }

    /// Declined, and the agent's turn stopped.
    pub fn stopped(user_message: &str) -> Self {
        Outcome::Stopped { message: decline_message(user_message) }
    }

    /// The user's own words instead of the form.
    pub fn replied(ask: &Ask, text: &str) -> Self {
        Outcome::Replied(Reply { input: ask.input().clone(), text: text.trim().to_owned() })
    }

    /// The decline sent when the window closes with the question still open.
    pub fn closed() -> Self {
        Outcome::Declined { message: CLOSED_MESSAGE.to_owned() }
    }

    /// The decline sent when the inbox is told to quit (`askpane inbox --quit`) with the
    /// question still open: the inbox was closed, not the question by the user.
    pub fn inbox_closed() -> Self {
        Outcome::Declined {
            message: "askpane's inbox was closed (askpane inbox --quit) before the user answered. \
                      Do not assume an answer; ask again in chat if you still need one."
                .to_owned(),
        }
    }

    /// Submitted with nothing answered: not an answer, so a decline that says so.
    pub fn nothing_answered() -> Self {
        Outcome::Declined { message: NOTHING_ANSWERED_MESSAGE.to_owned() }
    }

    /// "Chat about this": the dialog's clarify feedback with each question, the answer picked
    /// so far (or "(No answer provided)") and any note, as the dialog writes it.
    pub fn clarify(ask: &Ask, drafts: &[Draft]) -> Self {
        let empty = Draft::default();
        let mut lines = vec![CLARIFY_HEAD.to_owned()];
        for (index, question) in ask.questions().iter().enumerate() {
            let draft = drafts.get(index).unwrap_or(&empty);
            lines.push(format!("- \"{}\"", question.text()));
            lines.push(match draft.answer(question) {
                Some(answer) => format!("  Answer: {answer}"),
                None => "  (No answer provided)".to_owned(),
            });
            if !draft.notes().trim().is_empty() {
                lines.push(format!("  User notes: {}", draft.notes().trim()));
            }
        }
        let picked = build_answers(ask, drafts).ok().filter(|picked| !picked.is_empty());
        Outcome::Clarify { message: lines.join("\n"), picked }
    }

    /// Nobody picked anything before the time ran out.
    pub fn timed_out(waited_secs: u64) -> Self {
        Outcome::TimedOut(TimedOut {
            waited_secs,
            picked: None,
            still_typing: Vec::new(),
            unconfirmed: None,
        })
    }

    /// The time ran out on a form holding `at`. Every question answered by the user in this
    /// showing and nothing being typed is a complete answer, the user's own (the dialog's
    /// auto-continue sends it too); anything less is told as what it is, never as an answer. What
    /// was filled in for the user (a preset, a restored draft) and never confirmed is not theirs:
    /// it is told apart, and it never completes the answer.
    pub fn at_deadline(ask: &Ask, at: &AtDeadline<'_>) -> Self {
        let Ok(answers) = answers_within_limits(ask, at.finished) else {
            return Outcome::timed_out(at.waited_secs);
        };
        let complete = at.typing.is_empty()
            && answers.entries().len() == ask.questions().len()
            && answers.entries().iter().all(|entry| entry.answer.is_some());
        if complete {
            return Outcome::Answered(answers);
        }
        let still_typing = at
            .typing
            .iter()
            .filter_map(|&index| Some((index, ask.questions().get(index)?.text().to_owned())))
            .collect();
        let unconfirmed = answers_within_limits(ask, at.prefilled)
            .ok()
            .filter(|prefilled| !prefilled.is_empty())
            .map(|answers| Box::new(Unconfirmed { from: at.prefill, answers }));
        let picked = (!answers.is_empty()).then_some(answers);
        Outcome::TimedOut(TimedOut {
            waited_secs: at.waited_secs,
            picked,
            still_typing,
            unconfirmed,
        })
    }

    /// The outcome of a form submitted as it is (the window's Submit, a page's answer,
    /// `--answers … --submit`): the one rule for every front end and flag. Nothing chosen and no
    /// note is not an answer: a session that takes "skipped" is told each question was skipped;
    /// any other is told the user answered nothing (a decline that says so).
    pub fn submitted(ask: &Ask, mut answers: Answers, mark_skipped: bool) -> Self {
        if mark_skipped {
            answers.mark_skipped(ask);
            return Outcome::Answered(answers);
        }
        if answers.is_empty() {
            return Outcome::nothing_answered();
        }
        Outcome::Answered(answers)
    }

    /// The decline sent when askpane itself is stopped (`cause`: the signal, e.g. "SIGTERM")
    /// with the question still open: like a closed window, but saying what really happened.
    /// (issue 9; kept apart from the outcome rewrite of issue 8.)
    pub fn askpane_stopped(cause: &str) -> Self {
        Outcome::Declined {
            message: format!(
                "askpane was stopped ({cause}) before the user answered. Do not assume an \
                 answer; ask again in chat if you still need one."
            ),
        }
    }

    /// Which way it ended ([`OutcomeKind`]), by the name history stores and the wires carry.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Answered(_) => OutcomeKind::Answered,
            Outcome::Declined { .. } => OutcomeKind::Declined,
            Outcome::Withdrawn => OutcomeKind::Withdrawn,
            Outcome::TimedOut(_) => OutcomeKind::TimedOut,
            Outcome::Clarify { .. } => OutcomeKind::Clarify,
            Outcome::Unavailable { .. } => OutcomeKind::Unavailable,
            Outcome::Refused { .. } => OutcomeKind::Refused,
            Outcome::Stopped { .. } => OutcomeKind::Stopped,
            Outcome::Replied(_) => OutcomeKind::Replied,
        }
    }

    /// The message of a deny: what the model reads when the outcome is not an answer.
    pub fn deny_message(&self) -> Option<String> {
        match self {
            Outcome::Answered(_) | Outcome::Replied(_) => None,
            Outcome::Declined { message }
            | Outcome::Stopped { message }
            | Outcome::Clarify { message, .. } => Some(message.clone()),
            Outcome::Withdrawn => {
                Some("The question was withdrawn before the user answered it.".into())
            }
            Outcome::TimedOut(timed_out) => Some(timed_out.message()),
            Outcome::Unavailable { reason } => Some(format!(
                "No human is available to answer questions right now ({reason}). Proceed with \
                 reasonable assumptions and state them clearly, or stop and report what you need \
                 decided."
            )),
            Outcome::Refused { reason } => Some(format!(
                "These questions could not be shown to the user because the AskUserQuestion input \
                 is invalid: {reason}. Fix the input and call AskUserQuestion again."
            )),
        }
    }

    /// The tool_result text the model reads on the stream-json path, as the CLI builds it.
    pub fn model_text(&self, style: ResultStyle) -> String {
        match self {
            Outcome::Answered(answers) => answered_text(answers, style),
            Outcome::Replied(reply) => format!("The user responded: {}", reply.text),
            Outcome::Stopped { .. } => STOPPED_TEXT.to_owned(),
            other => other.deny_message().unwrap_or_default(),
        }
    }
}

/// The answers `drafts` hold; a note over its limit cannot be sent as it is, so then only the
/// choices count (for what is told at a deadline, never sent as an answer by itself).
fn answers_within_limits(ask: &Ask, drafts: &[Draft]) -> Result<Answers, super::LimitError> {
    build_answers(ask, drafts).or_else(|_| {
        let choices: Vec<Draft> = drafts.iter().map(Draft::choice_only).collect();
        build_answers(ask, &choices)
    })
}

/// What the model reads after a decline, with the user's words when they gave any (the
/// window's wording; a chat room's `decline: …` sends it too).
pub fn decline_message(user_message: &str) -> String {
    match user_message.trim() {
        "" => "The user declined to answer these questions. Do not assume an answer; continue \
               without it or ask in chat."
            .to_owned(),
        words => format!("The user declined to answer these questions and said: {words}"),
    }
}

/// The CLI's per-question piece: `"Q"="A"`, then ` selected preview:\n…` and ` notes: …`.
fn piece(entry: &QuestionAnswer) -> String {
    let mut parts = vec![match &entry.answer {
        Some(answer) => format!("\"{}\"=\"{answer}\"", entry.question),
        None => format!("\"{}\"=(no option selected)", entry.question),
    }];
    if let Some(preview) = &entry.preview {
        parts.push(format!("selected preview:\n{preview}"));
    }
    if let Some(notes) = &entry.notes {
        parts.push(format!("notes: {notes}"));
    }
    parts.join(" ")
}

fn answered_text(answers: &Answers, style: ResultStyle) -> String {
    if answers.is_empty() {
        return "The user did not answer the questions.".into();
    }
    let pieces: Vec<String> = answers.entries().iter().map(piece).collect();
    let pieces = pieces.join(", ");
    // The CLI checks each answer against the option labels and that no question has notes.
    let plain = answers.entries().iter().all(|entry| entry.notes.is_none() && entry.labels_only);
    match (style, plain) {
        (ResultStyle::Legacy, _) | (ResultStyle::Current, true) => format!(
            "Your questions have been answered: {pieces}. You can now continue with these answers \
             in mind."
        ),
        (ResultStyle::Current, false) => format!(
            "The user answered: {pieces}. Read the answers carefully \u{2014} they may request \
             clarification, changes, or that you not proceed \u{2014} and follow what they \
             actually say."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// History and the browser's wire hold these names: they stay byte for byte what
    /// `Outcome::kind` returned when it returned strings.
    #[test]
    fn outcome_kinds_keep_their_stored_names_and_read_back() {
        let names: Vec<&str> = OutcomeKind::ALL.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(
            names,
            [
                "answered",
                "declined",
                "withdrawn",
                "timed_out",
                "clarify",
                "unavailable",
                "refused",
                "stopped",
                "replied"
            ]
        );
        for kind in OutcomeKind::ALL {
            assert_eq!(kind.as_str().parse::<OutcomeKind>(), Ok(kind));
            assert_eq!(serde_json::to_value(kind).ok(), Some(Value::from(kind.as_str())));
            assert_eq!(kind.to_string(), kind.as_str());
        }
        assert_eq!(
            "Answered".parse::<OutcomeKind>(),
            Err(UnknownOutcomeKind("Answered".to_owned())),
            "names are exact"
        );
        assert!("abandoned".parse::<OutcomeKind>().is_err(), "history's own, not an outcome's");
        assert_eq!(Outcome::closed().kind(), OutcomeKind::Declined);
        assert_eq!(Outcome::Withdrawn.kind(), "withdrawn");
    }
}
