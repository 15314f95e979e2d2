//! Codex's `request_user_input` tool (issue 13) as pure data: the app-server's
//! `item/tool/requestUserInput` request in, askpane's validated questions out ([`to_ask`]), and an
//! [`Outcome`] back into the result Codex takes ([`response`]). No IO.
//!
//! Codex's model reads the result's `answers` object as JSON text, unchanged: per question id,
//! `{"answers": [strings]}`. askpane writes it the way Codex's own terminal UI does: the chosen
//! label, then free text as `"user_note: <text>"`; Other is `"None of the above"` and the note.
//! A JSON-RPC error or an empty answer both reach the model as `{"answers":{}}`, which it cannot
//! tell from nothing, so a decline is never sent that way: every question's answer is one note
//! that says what happened (`"user_note: The user declined to answer …"`), which the model reads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::outcome::Outcome;
use super::question::question_input;
use super::validate::{Invalid, Validated, validate};

/// The label Codex's terminal UI sends for its "None of the above" row (Other).
pub const NONE_OF_THE_ABOVE: &str = "None of the above";
/// What Codex's terminal UI puts before free text in an answer.
pub const NOTE_PREFIX: &str = "user_note: ";

/// The params of `item/tool/requestUserInput`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputRequest {
    pub thread_id: String,
    pub turn_id: String,
    /// The model's call id.
    pub item_id: String,
    pub questions: Vec<UserInputQuestion>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputQuestion {
    pub id: String,
    #[serde(default)]
    pub header: String,
    pub question: String,
    /// Codex forces this on: Other is always offered.
    #[serde(default)]
    pub is_other: bool,
    /// The answer is a secret (a masked box; never in the history or logs).
    #[serde(default)]
    pub is_secret: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<UserInputOption>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct UserInputOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// Codex's questions in AskUserQuestion's form (`isSecret` kept), for [`super::validate`] or a
/// message that carries them to the inbox.
pub fn questions_input(questions: &[UserInputQuestion]) -> Vec<Value> {
    questions
        .iter()
        .map(|question| {
            let options = question.options.iter().flatten();
            let options =
                options.map(|option| (option.label.as_str(), option.description.as_str()));
            let mut input = question_input(&question.question, &question.header, options, false);
            if let (true, Some(object)) = (question.is_secret, input.as_object_mut()) {
                object.insert("isSecret".to_owned(), Value::Bool(true));
            }
            input
        })
        .collect()
}

/// What Codex's model reads after a `PreToolUse` hook denied `request_user_input` with
/// `reason` (captured with 0.169.0: `plan-hook-deny`, `exec-hook-deny`).
pub fn blocked_by_hook(reason: &str) -> String {
    format!("Tool call blocked by PreToolUse hook: {reason}. Tool: request_user_input")
}

/// The reason askpane's hook gives Codex for `outcome`: Codex's hooks cannot answer the tool
/// (an `allow` is refused as unsupported), so every reply is a deny whose reason is the text
/// Claude Code's model reads for the same outcome: the answers, or why there are none. `None`
/// for a withdrawn question (nothing is printed; Codex then asks in its own terminal UI).
pub fn hook_reason(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Withdrawn => None,
        // Codex puts ". Tool: request_user_input" after the reason: no full stop of our own.
        outcome => {
            let text = outcome.model_text(super::outcome::ResultStyle::Current);
            Some(text.trim_end().trim_end_matches('.').to_owned())
        }
    }
}

/// The hook's stdout for `outcome` (see [`hook_reason`]).
pub fn hook_reply(outcome: &Outcome) -> Option<Value> {
    let reason = hook_reason(outcome)?;
    Some(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": reason}}))
}

/// What Codex's model reads when askpane's hook replies with `outcome`.
pub fn hook_model_text(outcome: &Outcome) -> String {
    hook_reason(outcome).map(|reason| blocked_by_hook(&reason)).unwrap_or_default()
}

/// Codex's questions as askpane's validated questions (each single-select, as Codex's own UI
/// asks them; Other always offered). The result is keyed by the question ids, in this order.
pub fn to_ask(request: &UserInputRequest) -> Result<Validated, Invalid> {
    let questions = questions_input(&request.questions);
    validate(&json!({ "questions": questions }))
}

/// The JSON-RPC `result` for `outcome` of `request`; `None` when nothing is to be sent (the
/// question was resolved or its turn interrupted: Codex drops a late answer anyway). Answered
/// questions carry the label (Other: "None of the above") then any typed text as a
/// `user_note:`; unanswered ones are left out. Every other ending answers each question with one
/// note that tells the model what happened, in askpane's words: a decline with the user's
/// message, "Chat about this", no human, a timeout, an answer in the user's own words.
pub fn response(request: &UserInputRequest, outcome: &Outcome) -> Option<Value> {
    let mut answers = Map::new();
    match outcome {
        Outcome::Withdrawn => return None,
        Outcome::Answered(given) => {
            for entry in given.entries() {
                let Some(question) = request.questions.get(entry.index) else { continue };
                let mut items = Vec::new();
                let options = question.options.as_deref().unwrap_or_default();
                for &picked in &entry.picked {
                    items.extend(options.get(picked).map(|option| option.label.clone()));
                }
                if let Some(other) = &entry.other {
                    items.push(NONE_OF_THE_ABOVE.to_owned());
                    items.push(format!("{NOTE_PREFIX}{other}"));
                }
                if let Some(notes) = &entry.notes {
                    items.push(format!("{NOTE_PREFIX}{notes}"));
                }
                if !items.is_empty() {
                    answers.insert(question.id.clone(), json!({ "answers": items }));
                }
            }
        }
        other => {
            let text = match other {
                Outcome::Replied(reply) => {
                    format!("The user answered in their own words: {}", reply.text())
                }
                other => other.deny_message().unwrap_or_default(),
            };
            for question in &request.questions {
                answers.insert(
                    question.id.clone(),
                    json!({"answers": [format!("{NOTE_PREFIX}{text}")]}),
                );
            }
        }
    }
    Some(json!({ "answers": answers }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Draft, Pick, build_answers};

    /// The captured `item/tool/requestUserInput` of the probe's first run, and its answer.
    const REQUEST: &str = include_str!("../../tests/fixtures/codex/first-plan.request.json");
    const ANSWER: &str = include_str!("../../tests/fixtures/codex/first-plan.answer.json");

    fn captured() -> UserInputRequest {
        let record: Value = serde_json::from_str(REQUEST).expect("JSON");
        serde_json::from_value(record["msg"]["params"].clone()).expect("a request")
    }

    fn answered(request: &UserInputRequest, drafts: Vec<Draft>) -> Outcome {
        let ask = to_ask(request).expect("valid").ask;
        Outcome::Answered(build_answers(&ask, &drafts).expect("fits"))
    }

    #[test]
    fn the_captured_request_becomes_an_ask() {
        let request = captured();
        assert_eq!(request.item_id, "call_ask_1");
        assert!(request.questions.iter().all(|question| question.is_other));
        let ask = to_ask(&request).expect("valid").ask;
        let questions = ask.questions();
        assert_eq!(questions.len(), 2);
        assert_eq!(questions[0].text(), "Which database should the service use?");
        assert_eq!(questions[0].header(), "Database");
        assert_eq!(questions[0].options()[0].label(), "Postgres (Recommended)");
        assert!(!questions[1].multi_select());
    }

    #[test]
    fn picks_go_back_as_the_probe_sent_them() {
        let request = captured();
        let ask = to_ask(&request).expect("valid").ask;
        let mut drafts = vec![Draft::default(), Draft::default()];
        drafts[0].pick(&ask.questions()[0], Pick::Option(1));
        drafts[1].pick(&ask.questions()[1], Pick::Option(1));
        let record: Value = serde_json::from_str(ANSWER).expect("JSON");
        assert_eq!(
            response(&request, &answered(&request, drafts)).map(|result| result.to_string()),
            Some(record["msg"]["result"].to_string())
        );
    }

    #[test]
    fn typed_text_is_encoded_as_codexs_terminal_ui_does() {
        let request = captured();
        let ask = to_ask(&request).expect("valid").ask;
        let mut drafts = vec![Draft::default(), Draft::default()];
        drafts[0].pick(&ask.questions()[0], Pick::Option(1));
        drafts[0].set_notes("prefer WAL mode".to_owned());
        drafts[1].set_other_text(&ask.questions()[1], "my-custom-service".to_owned());
        // Byte for byte what Codex's TUI sent in the probe (`tui-notes`).
        assert_eq!(
            response(&request, &answered(&request, drafts)).map(|result| result.to_string()),
            Some(
                r#"{"answers":{"db_choice":{"answers":["SQLite","user_note: prefer WAL mode"]},"project_name":{"answers":["None of the above","user_note: my-custom-service"]}}}"#
                    .to_owned()
            )
        );
    }

    #[test]
    fn the_hook_denies_with_the_answer_or_the_decline_as_its_reason() {
        let declined = hook_model_text(&Outcome::declined("Not now"));
        assert_eq!(
            declined,
            "Tool call blocked by PreToolUse hook: The user declined to answer these questions \
             and said: Not now. Tool: request_user_input"
        );
        assert_eq!(hook_reply(&Outcome::Withdrawn), None);
    }

    #[test]
    fn a_decline_is_a_note_in_every_answer_never_an_empty_result() {
        let request = captured();
        let result = response(&request, &Outcome::declined("I'll decide later")).expect("sent");
        let note =
            "user_note: The user declined to answer these questions and said: I'll decide later";
        assert_eq!(
            result,
            json!({"answers": {"db_choice": {"answers": [note]}, "project_name": {"answers": [note]}}})
        );
        assert_eq!(response(&request, &Outcome::Withdrawn), None);
        let nobody = response(&request, &Outcome::Unavailable { reason: "no display".into() });
        let text = nobody.expect("sent")["answers"]["db_choice"]["answers"][0].to_string();
        assert!(text.contains("No human is available"), "{text}");
    }
}
