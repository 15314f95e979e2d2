//! OpenCode's `question` tool (issue 13) as pure data: its pending question and the events of
//! its server's `/global/event` stream in, askpane's validated [`Ask`] out ([`to_ask`]), and an
//! [`Outcome`] back into the reply OpenCode takes ([`reply`]). No IO: the HTTP side is
//! `transport::opencode`.
//!
//! OpenCode answers a question with `POST /question/{id}/reply` and `{"answers": string[][]}`
//! (one list of labels per question; a typed answer is one more string) and dismisses it with
//! `POST /question/{id}/reject`, after which its model reads only "The user dismissed this
//! question" and the turn stops. Shapes: the fixtures in `tests/fixtures/opencode/`.
//!
//! Its permission requests (issue 26: a tool its config says to `ask` about) come the same way
//! (`permission.asked`, `permission.replied`, `GET /permission`) and are answered with `POST
//! /permission/{id}/reply` and `{"reply": "once" | "always" | "reject", "message"?}`
//! ([`PermissionReply`]). Observed with OpenCode 1.18.33: `once` runs the call; `always` runs
//! it and every later call matching the request's `always` patterns in that project directory,
//! until the server restarts; `reject` stops the turn (the model reads "The user rejected
//! permission to use this specific tool call."), and `reject` with a message lets the model go
//! on, reading "… with the following feedback: <message>".

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::outcome::Outcome;
use super::permission::{ApprovalOrigin, Suggestion};
use super::question::{Ask, question_input};
use super::stream::PermissionRequest;
use super::tool_call::ToolCall;
use super::validate::{Invalid, Validated, validate};
use super::web::WhoAsked;

/// The agent's name in a request's provenance (`Provenance::source`).
pub const SOURCE: &str = "opencode";

/// One pending question request: a `question.asked` event's `properties`, or an item of
/// `GET /question`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QuestionRequest {
    /// `que_…`: the id the reply and the `question.replied` event name.
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub questions: Vec<QuestionInfo>,
}

/// One question as OpenCode sends it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QuestionInfo {
    pub question: String,
    #[serde(default)]
    pub header: String,
    pub options: Vec<QuestionOption>,
    /// Several answers allowed.
    #[serde(default)]
    pub multiple: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// A question converted: the message askpane's inbox takes (its browser protocol's
/// `user_question`, naming who asked), and the questions as validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Converted {
    pub message: Value,
    pub validated: Validated,
}

/// OpenCode's question, asked in `directory`, as askpane's validated questions and the message
/// that carries them to the inbox: `multiple` is a multi-select; the request id is the
/// message's `tool_use_id` (the same question sent again is shown once); who asked is
/// `opencode · <directory> · <session>`. OpenCode never sends `custom` on (it strips it), and
/// its answers may be any text, so Other is always offered, as OpenCode's own TUI does.
pub fn to_ask(request: &QuestionRequest, directory: &str) -> Result<Converted, Invalid> {
    let questions: Vec<Value> = request
        .questions
        .iter()
        .map(|question| {
            let options =
                question.options.iter().map(|o| (o.label.as_str(), o.description.as_str()));
            question_input(&question.question, &question.header, options, question.multiple)
        })
        .collect();
    let validated = validate(&json!({ "questions": questions }))?;
    let project = directory.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    let message = json!({"type": "user_question", "tool_use_id": request.id,
        "questions": questions, "timestamp": "",
        "agent": SOURCE, "source": format!("{SOURCE} · {directory} · {}", request.session_id),
        "project": project, "session": request.session_id});
    Ok(Converted { message, validated })
}

/// What goes back to OpenCode for one question request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Reply {
    /// `POST /question/{id}/reply` with `{"answers": …}`: per question, the labels chosen (an
    /// empty list: the model reads "Unanswered").
    Reply { answers: Vec<Vec<String>> },
    /// `POST /question/{id}/reject`: the model reads "The user dismissed this question" and the
    /// turn stops.
    Reject,
}

impl Reply {
    /// The body of `POST /question/{id}/reply`; `None` for a reject (it has no body).
    pub fn body(&self) -> Option<Value> {
        match self {
            Reply::Reply { answers } => Some(json!({ "answers": answers })),
            Reply::Reject => None,
        }
    }
}

/// The reply OpenCode gets for `outcome`; `None` when nothing is to be sent (OpenCode took the
/// question back itself). An answer sends each question's labels, then its Other text, then a
/// note as `note: …` (OpenCode has no notes: its model reads the items joined by ", "). A
/// decline or a stop rejects it: OpenCode passes no message on, so the model reads only "The
/// user dismissed this question" and its turn stops. Every other ending lets the model go on
/// and read what happened, as the first question's answer (the others "Unanswered"): a reply in
/// the user's own words, "Chat about this", no human available, a timeout, an invalid question.
pub fn reply(outcome: &Outcome) -> Option<Reply> {
    match outcome {
        Outcome::Withdrawn => None,
        Outcome::Declined { .. } | Outcome::Stopped { .. } => Some(Reply::Reject),
        Outcome::Answered(answers) => {
            let input = answers.updated_input();
            let questions = input.get("questions").and_then(Value::as_array);
            let count = questions.map_or(0, Vec::len);
            let mut lists = vec![Vec::new(); count];
            for entry in answers.entries() {
                let Some(list) = lists.get_mut(entry.index) else { continue };
                let options = questions
                    .and_then(|questions| questions.get(entry.index))
                    .and_then(|question| question.get("options"))
                    .and_then(Value::as_array);
                for &picked in &entry.picked {
                    let label = options
                        .and_then(|options| options.get(picked))
                        .and_then(|option| option.get("label"))
                        .and_then(Value::as_str);
                    list.extend(label.map(str::to_owned));
                }
                // A question marked skipped carries its text as the answer, not a pick.
                if entry.picked.is_empty()
                    && entry.other.is_none()
                    && let (Some(answer), Some(_)) = (&entry.answer, entry.unanswered)
                {
                    list.push(answer.clone());
                }
                list.extend(entry.other.clone());
                list.extend(entry.notes.as_ref().map(|notes| format!("note: {notes}")));
            }
            Some(Reply::Reply { answers: lists })
        }
        Outcome::Replied(reply) => Some(first_answer(reply.text().to_owned())),
        other => Some(first_answer(other.deny_message().unwrap_or_default())),
    }
}

/// `text` as the first question's answer; the others are left out, which OpenCode's model reads
/// as "Unanswered".
fn first_answer(text: String) -> Reply {
    Reply::Reply { answers: vec![vec![text]] }
}

/// What OpenCode's model reads for `outcome` (OpenCode 1.18.33's own wording, captured in
/// `tests/fixtures/opencode/model-tool-results.txt`): each question of `ask` with its answer
/// (the items joined by ", ", else "Unanswered"), or the dismissal; empty when nothing is sent.
pub fn model_text(ask: &Ask, outcome: &Outcome) -> String {
    match reply(outcome) {
        None => String::new(),
        Some(Reply::Reject) => DISMISSED_TEXT.to_owned(),
        Some(Reply::Reply { answers }) => {
            let pieces: Vec<String> = ask
                .questions()
                .iter()
                .enumerate()
                .map(|(index, question)| {
                    let items = answers.get(index).filter(|items| !items.is_empty());
                    let answer = items.map_or("Unanswered".to_owned(), |items| items.join(", "));
                    format!("\"{}\"=\"{answer}\"", question.text())
                })
                .collect();
            format!(
                "User has answered your questions: {}. You can now continue with the user's \
                 answers in mind.",
                pieces.join(", ")
            )
        }
    }
}

/// What OpenCode's model reads after a reject, on the next prompt (the turn stops first).
pub const DISMISSED_TEXT: &str = "The user dismissed this question";

/// What one frame of `/global/event` means to askpane.
#[derive(Clone, Debug, PartialEq)]
pub enum Happening {
    /// A question was asked in `directory`.
    Asked { directory: String, request: QuestionRequest },
    /// The question `request_id` is no longer pending: answered or dismissed elsewhere (the
    /// TUI, another client).
    Settled { directory: String, request_id: String },
    /// The session went idle, failed (an abort) or was deleted: its questions and permission
    /// requests will never reach the model, though OpenCode still lists them.
    SessionEnded { directory: String, session_id: String },
    /// A tool call waits for permission in `directory`.
    PermissionAsked { directory: String, request: PermissionAsked },
    /// The permission request `request_id` was answered elsewhere (OpenCode's TUI, another
    /// client).
    PermissionSettled { directory: String, request_id: String },
    /// Anything else (heartbeats, messages, parts): nothing to do.
    Other,
}

/// Reads one `data:` payload of `/global/event`: `{"directory", "payload": {"type",
/// "properties"}}`. `Err` says why a frame could not be read (it is skipped).
pub fn global_event(data: &str) -> Result<Happening, String> {
    let frame: Value = serde_json::from_str(data).map_err(|error| format!("not JSON: {error}"))?;
    let directory = frame.get("directory").and_then(Value::as_str).unwrap_or_default().to_owned();
    let payload = frame.get("payload").unwrap_or(&Value::Null);
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or_default();
    let properties = payload.get("properties").cloned().unwrap_or(Value::Null);
    let text = |key: &str| properties.get(key).and_then(Value::as_str).map(str::to_owned);
    match kind {
        "question.asked" => {
            let request = serde_json::from_value(properties)
                .map_err(|error| format!("a question.asked that is not a question: {error}"))?;
            Ok(Happening::Asked { directory, request })
        }
        "question.replied" | "question.rejected" => match text("requestID") {
            Some(request_id) => Ok(Happening::Settled { directory, request_id }),
            None => Err(format!("a {kind} without requestID")),
        },
        "session.idle" | "session.error" => match text("sessionID") {
            Some(session_id) => Ok(Happening::SessionEnded { directory, session_id }),
            // A session.error not tied to a session (a provider error) ends nothing.
            None => Ok(Happening::Other),
        },
        "session.deleted" => {
            let info_id = properties.get("info").and_then(|info| info.get("id"));
            match text("sessionID").or_else(|| info_id.and_then(Value::as_str).map(str::to_owned)) {
                Some(session_id) => Ok(Happening::SessionEnded { directory, session_id }),
                None => Err("a session.deleted without sessionID".to_owned()),
            }
        }
        "permission.asked" => {
            let request = serde_json::from_value(properties).map_err(|error| {
                format!("a permission.asked that is not a permission request: {error}")
            })?;
            Ok(Happening::PermissionAsked { directory, request })
        }
        "permission.replied" => match text("requestID") {
            Some(request_id) => Ok(Happening::PermissionSettled { directory, request_id }),
            None => Err(format!("a {kind} without requestID")),
        },
        _ => Ok(Happening::Other),
    }
}

/// The pending questions of `GET /question`.
pub fn pending(body: &Value) -> Result<Vec<QuestionRequest>, String> {
    let items = body.as_array().ok_or("GET /question did not return a list")?;
    // One broken item does not hide the others.
    Ok(items.iter().filter_map(|item| serde_json::from_value(item.clone()).ok()).collect())
}

/// One pending permission request: a `permission.asked` event's `properties`, or an item of
/// `GET /permission`. `permission` is the tool's kind (`bash`, `edit`, `webfetch`, …),
/// `patterns` what this call touches (`echo hi`, a path), `always` the patterns "always" would
/// allow from now on (`echo *`), `metadata` the call's details (`{"command": …}`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PermissionAsked {
    /// `per_…`: the id the reply and the `permission.replied` event name.
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub permission: String,
    #[serde(default)]
    pub patterns: Vec<String>,
    #[serde(default)]
    pub metadata: Value,
    #[serde(default)]
    pub always: Vec<String>,
    #[serde(default)]
    pub tool: Option<PermissionTool>,
}

/// The tool call a permission request is for.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PermissionTool {
    #[serde(rename = "callID")]
    pub call_id: String,
}

/// The pending permission requests of `GET /permission`.
pub fn pending_permissions(body: &Value) -> Result<Vec<PermissionAsked>, String> {
    let items = body.as_array().ok_or("GET /permission did not return a list")?;
    // One broken item does not hide the others.
    Ok(items.iter().filter_map(|item| serde_json::from_value(item.clone()).ok()).collect())
}

/// Where OpenCode keeps what "always" allows, in the words that end the card's button: the
/// project directory's rules, in memory until the server restarts (observed: a new session in
/// the same project was not asked again; a restarted server asked again).
pub const ALWAYS_SCOPE: &str = "in this project, until OpenCode restarts";

/// OpenCode's permission request, asked in `directory`, as the card the inbox shows and who
/// asked (`opencode · <directory> · <session>`, as its questions say). The tool is OpenCode's
/// kind (`bash`), its input the request's `metadata`, its title the kind and the patterns. Its
/// `always` patterns are the one "Always …" the card offers (a rule OpenCode itself proposed,
/// never one of askpane's); the card can hand the call back to OpenCode's own TUI.
pub fn to_permission(request: &PermissionAsked, directory: &str) -> (PermissionRequest, WhoAsked) {
    let input = match &request.metadata {
        Value::Object(_) => request.metadata.clone(),
        _ => json!({}),
    };
    let title = match request.patterns.is_empty() {
        true => request.permission.clone(),
        false => format!("{}: {}", request.permission, request.patterns.join(", ")),
    };
    let rules: Vec<Value> = request
        .always
        .iter()
        .map(|pattern| json!({"toolName": request.permission, "ruleContent": pattern}))
        .collect();
    let always = json!({"type": "addRules", "behavior": "allow", "destination": ALWAYS_SCOPE,
        "rules": rules});
    let permission = PermissionRequest {
        request_id: request.id.clone(),
        tool_name: request.permission.clone(),
        input,
        tool_use_id: request.tool.as_ref().map(|tool| tool.call_id.clone()),
        title: Some(title),
        description: None,
        reason: None,
        agent_id: None,
        cwd: Some(directory.to_owned()),
        on_disk: None,
        // No `always` patterns: no rule to offer (the suggestion is refused as empty).
        suggestions: Suggestion::try_from(always).into_iter().collect(),
        deny_always: Vec::new(),
        origin: ApprovalOrigin::OpenCode,
    };
    let project = directory.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    let who = WhoAsked {
        source: format!("{SOURCE} · {directory} · {}", request.session_id),
        agent: SOURCE.to_owned(),
        project: Some(project.to_owned()).filter(|project| !project.is_empty()),
        session: Some(request.session_id.clone()),
        subagent: None,
    };
    (permission, who)
}

/// OpenCode's permission `kind` and its `metadata`, typed as askpane's tool calls so the card
/// shows what a person checks (OpenCode 1.18.33's shapes, captured in
/// `tests/fixtures/opencode/permission-kinds.jsonl`): `bash` its `command` (the whole line;
/// the request's `patterns` split it per command); `edit` (OpenCode's edit, write and
/// apply_patch all ask as `edit`) its `filepath` and the unified `diff` OpenCode made against
/// the file, which is what it will write; `webfetch` its `url`. Every other kind (`read`, whose
/// metadata is empty: its path is in the title; `glob`, `grep`, `external_directory`,
/// `todowrite`, `task`, `doom_loop`, an MCP tool's `<server>_<tool>` with empty metadata, …),
/// and metadata missing what its kind needs, stays its JSON.
pub fn tool_call(kind: &str, metadata: &Value) -> ToolCall {
    let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
    let typed = match kind {
        "bash" => text("command").map(|command| ToolCall::Bash {
            command,
            description: None,
            timeout: None,
            run_in_background: false,
        }),
        "edit" => text("filepath")
            .zip(text("diff"))
            .map(|(files, diff)| ToolCall::Patch { files, diff: without_index(&diff).to_owned() }),
        "webfetch" => text("url").map(|url| ToolCall::WebFetch { url, prompt: None }),
        _ => None,
    };
    typed.unwrap_or_else(|| ToolCall::Other { name: kind.to_owned(), input: metadata.clone() })
}

/// OpenCode's diff without the `Index: <path>` and `====` lines it starts with: the card names
/// the file already.
fn without_index(diff: &str) -> &str {
    let mut rest = diff;
    for start in ["Index: ", "==="] {
        if rest.starts_with(start) {
            rest = rest.split_once('\n').map_or("", |(_, after)| after);
        }
    }
    rest
}

/// What goes back to OpenCode for one permission request: the body of `POST
/// /permission/{id}/reply`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermissionReply {
    /// Run this call.
    Once,
    /// Run it, and allow the request's `always` patterns in its project until OpenCode
    /// restarts.
    Always,
    /// Do not run it. Without a message the turn stops; with one the model reads it and goes
    /// on.
    Reject { message: Option<String> },
}

impl PermissionReply {
    pub fn body(&self) -> Value {
        match self {
            PermissionReply::Once => json!({"reply": "once"}),
            PermissionReply::Always => json!({"reply": "always"}),
            PermissionReply::Reject { message: None } => json!({"reply": "reject"}),
            PermissionReply::Reject { message: Some(message) } => {
                json!({"reply": "reject", "message": message})
            }
        }
    }

    /// How it ended, in one word, for the log.
    pub fn as_str(&self) -> &'static str {
        match self {
            PermissionReply::Once => "allowed once",
            PermissionReply::Always => "allowed always",
            PermissionReply::Reject { .. } => "rejected",
        }
    }
}

/// The sessions of `GET /session/status` that are working (busy, or retrying): a question
/// pending in any other session was left by an abort, and its model will never read a reply.
pub fn working_sessions(body: &Value) -> Result<Vec<String>, String> {
    let statuses = body.as_object().ok_or("GET /session/status did not return an object")?;
    Ok(statuses
        .iter()
        .filter(|(_, status)| status.get("type").and_then(Value::as_str) != Some("idle"))
        .map(|(session, _)| session.clone())
        .collect())
}

/// The project directories of `GET /experimental/session` (each session's `directory`), each
/// once.
pub fn session_directories(body: &Value) -> Vec<String> {
    let mut directories: Vec<String> = Vec::new();
    for session in body.as_array().into_iter().flatten() {
        if let Some(directory) = session.get("directory").and_then(Value::as_str)
            && !directories.iter().any(|known| known == directory)
        {
            directories.push(directory.to_owned());
        }
    }
    directories
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Draft, Pick, build_answers};

    /// Every raw `question.*` SSE data line of the probe (`tests/fixtures/opencode/`).
    const EVENTS: &str = include_str!("../../tests/fixtures/opencode/question-events.jsonl");

    /// The raw `/global/event` frames of the captures, in order.
    fn global_frames() -> Vec<String> {
        EVENTS
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter_map(|record| record.get("raw")?.as_str().map(str::to_owned))
            .filter(|raw| raw.starts_with("{\"directory\""))
            .collect()
    }

    /// The first captured question (two questions: a single select, then `multiple`), with the
    /// answers its `question.replied` carried.
    fn captured() -> (String, QuestionRequest, Value) {
        let frames = global_frames();
        let asked = frames.first().expect("a captured frame");
        let Ok(Happening::Asked { directory, request }) = global_event(asked) else {
            panic!("the first frame is a question: {asked}");
        };
        let replied = frames
            .iter()
            .filter_map(|raw| serde_json::from_str::<Value>(raw).ok())
            .find(|frame| {
                frame["payload"]["type"] == "question.replied"
                    && frame["payload"]["properties"]["requestID"] == request.id.as_str()
            })
            .expect("its reply was captured");
        (directory, request, replied["payload"]["properties"]["answers"].clone())
    }

    fn answer(request: &QuestionRequest, picks: &[&[usize]], other: &[&str]) -> Outcome {
        let Converted { validated, .. } = to_ask(request, "/p").expect("valid");
        let ask = validated.ask;
        let drafts: Vec<Draft> = ask
            .questions()
            .iter()
            .enumerate()
            .map(|(index, question)| {
                let mut draft = Draft::default();
                for &option in picks.get(index).copied().unwrap_or_default() {
                    draft.pick(question, Pick::Option(option));
                }
                if let Some(text) = other.get(index).filter(|text| !text.is_empty()) {
                    draft.set_other_text(question, (*text).to_owned());
                }
                draft
            })
            .collect();
        Outcome::Answered(build_answers(&ask, &drafts).expect("within the limits"))
    }

    #[test]
    fn every_captured_frame_is_read() {
        let frames = global_frames();
        assert!(frames.len() >= 6, "{}", frames.len());
        for raw in &frames {
            let happening = global_event(raw).unwrap_or_else(|error| panic!("{error}: {raw}"));
            let frame: Value = serde_json::from_str(raw).expect("JSON");
            let properties = &frame["payload"]["properties"];
            match frame["payload"]["type"].as_str() {
                Some("question.asked") => {
                    let Happening::Asked { directory, request } = happening else { panic!() };
                    assert_eq!(directory, frame["directory"].as_str().unwrap_or_default());
                    assert!(directory.starts_with("/home/dev/probe-opencode/project"));
                    assert_eq!(request.id, properties["id"].as_str().unwrap_or_default());
                    assert_eq!(request.session_id, properties["sessionID"].as_str().unwrap());
                }
                Some(_) => {
                    let Happening::Settled { request_id, .. } = happening else { panic!() };
                    assert_eq!(request_id, properties["requestID"].as_str().unwrap_or_default());
                }
                None => panic!("{raw}"),
            }
        }
    }

    #[test]
    fn a_captured_question_becomes_an_ask_and_a_message_naming_who_asked() {
        let (directory, request, _) = captured();
        let Converted { message, validated } = to_ask(&request, &directory).expect("valid");
        let questions = validated.ask.questions();
        assert_eq!(questions.len(), 2);
        assert_eq!(questions[0].text(), "Which database should the service use?");
        assert_eq!(questions[0].header(), "Database");
        assert!(!questions[0].multi_select() && questions[1].multi_select());
        let labels: Vec<&str> = questions[1].options().iter().map(|o| o.label()).collect();
        assert_eq!(labels, ["Auth", "Billing", "Search"]);
        assert_eq!(questions[0].options()[1].description(), "Embedded, zero config");
        assert!(validated.warnings.is_empty(), "{:?}", validated.warnings);
        assert_eq!(message["type"], "user_question");
        assert_eq!(message["tool_use_id"], "que_2025bf653001wnfD8i8huoXyJ1");
        assert_eq!(message["agent"], "opencode");
        assert_eq!(
            message["source"],
            "opencode · /home/dev/probe-opencode/project · ses_dfda413dbffe0KeURMld4o1eES"
        );
        assert_eq!(message["project"], "project");
        assert_eq!(message["session"], "ses_dfda413dbffe0KeURMld4o1eES");
        // The inbox reads the message back as the same questions.
        let incoming = crate::protocol::parse_message(&message).expect("an envelope askpane reads");
        assert_eq!(validate(&incoming.input).expect("valid").ask, validated.ask);
    }

    #[test]
    fn answers_go_back_exactly_as_opencode_took_them() {
        let (_, request, captured_answers) = captured();
        let outcome = answer(&request, &[&[0], &[0, 1]], &[]);
        let reply = reply(&outcome).expect("a reply");
        let body = reply.body().expect("a reply has a body");
        // Byte for byte what the probe sent (and OpenCode echoed in question.replied).
        assert_eq!(body.to_string(), json!({ "answers": captured_answers }).to_string());
        assert_eq!(body.to_string(), r#"{"answers":[["PostgreSQL"],["Auth","Billing"]]}"#);
        assert_eq!(
            serde_json::to_string(&reply).expect("serialises"),
            r#"{"action":"reply","answers":[["PostgreSQL"],["Auth","Billing"]]}"#
        );
    }

    #[test]
    fn the_model_text_is_opencodes_own() {
        let (_, request, _) = captured();
        let ask = to_ask(&request, "/p").expect("valid").validated.ask;
        let captured = include_str!("../../tests/fixtures/opencode/model-tool-results.txt");
        for outcome in [answer(&request, &[&[0], &[0, 1]], &[]), answer(&request, &[&[1]], &[])] {
            let text = serde_json::to_string(&model_text(&ask, &outcome)).expect("a string");
            assert!(captured.contains(&text), "{text}");
        }
        assert_eq!(model_text(&ask, &Outcome::declined("")), "The user dismissed this question");
        assert!(captured.contains(&format!("\"{DISMISSED_TEXT}\"")));
        assert_eq!(model_text(&ask, &Outcome::Withdrawn), "");
    }

    #[test]
    fn typed_answers_unanswered_questions_and_notes() {
        let (_, request, _) = captured();
        // The probe's free-text reply: Other on the single select, an option and Other on the
        // multi-select (OpenCode puts the typed text after the labels, unescaped).
        let typed = answer(
            &request,
            &[&[], &[2]],
            &["Use CockroachDB, with a \"quoted\" note", "My own feature"],
        );
        assert_eq!(
            reply(&typed).and_then(|reply| reply.body()).map(|body| body.to_string()),
            Some(r#"{"answers":[["Use CockroachDB, with a \"quoted\" note"],["Search","My own feature"]]}"#.to_owned())
        );
        // A question left unanswered is an empty list: OpenCode's model reads "Unanswered".
        let partial = answer(&request, &[&[1]], &[]);
        assert_eq!(
            reply(&partial),
            Some(Reply::Reply { answers: vec![vec!["SQLite".to_owned()], vec![]] })
        );
        // OpenCode has no notes: a note is one more item.
        let Converted { validated, .. } = to_ask(&request, "/p").expect("valid");
        let mut draft = Draft::default();
        draft.pick(&validated.ask.questions()[0], Pick::Option(1));
        draft.set_notes("only for now".to_owned());
        let noted = Outcome::Answered(build_answers(&validated.ask, &[draft]).expect("fits"));
        assert_eq!(
            reply(&noted),
            Some(Reply::Reply {
                answers: vec![vec!["SQLite".to_owned(), "note: only for now".to_owned()], vec![]]
            })
        );
    }

    #[test]
    fn every_other_ending_has_its_reply() {
        let (_, request, _) = captured();
        let ask = to_ask(&request, "/p").expect("valid").validated.ask;
        // A decline or a stop dismisses the question: the model reads OpenCode's own text.
        assert_eq!(reply(&Outcome::declined("not now")), Some(Reply::Reject));
        assert_eq!(reply(&Outcome::stopped("")), Some(Reply::Reject));
        assert_eq!(reply(&Outcome::closed()), Some(Reply::Reject));
        assert_eq!(Reply::Reject.body(), None);
        // Taken back by OpenCode: nothing to send.
        assert_eq!(reply(&Outcome::Withdrawn), None);
        // The others let the model go on, reading what happened as the first answer.
        let own_words = Outcome::replied(&ask, "Use whatever is simplest");
        assert_eq!(
            reply(&own_words),
            Some(Reply::Reply { answers: vec![vec!["Use whatever is simplest".to_owned()]] })
        );
        let nobody = Outcome::Unavailable { reason: "no display".to_owned() };
        let Some(Reply::Reply { answers }) = reply(&nobody) else { panic!("a reply") };
        assert_eq!(answers, vec![vec![nobody.deny_message().expect("a message")]]);
        assert!(answers[0][0].starts_with("No human is available"), "{answers:?}");
        let timed_out = Outcome::timed_out(30);
        let Some(Reply::Reply { answers }) = reply(&timed_out) else { panic!("a reply") };
        assert!(answers[0][0].starts_with("No response after 30s"), "{answers:?}");
    }

    #[test]
    fn sessions_that_end_and_frames_that_mean_nothing() {
        let idle = r#"{"directory":"/d","payload":{"type":"session.idle","properties":{"sessionID":"ses_1"}}}"#;
        assert_eq!(
            global_event(idle),
            Ok(Happening::SessionEnded { directory: "/d".into(), session_id: "ses_1".into() })
        );
        let error = r#"{"directory":"/d","payload":{"type":"session.error","properties":{"sessionID":"ses_2","error":{"name":"MessageAbortedError"}}}}"#;
        assert!(matches!(global_event(error), Ok(Happening::SessionEnded { .. })));
        let heartbeat = r#"{"payload":{"type":"server.heartbeat","properties":{}}}"#;
        assert_eq!(global_event(heartbeat), Ok(Happening::Other));
        let providerless =
            r#"{"directory":"/d","payload":{"type":"session.error","properties":{}}}"#;
        assert_eq!(global_event(providerless), Ok(Happening::Other));
        // Broken frames are refused with a reason, never a panic.
        assert!(global_event("not json").is_err());
        assert!(
            global_event(r#"{"payload":{"type":"question.asked","properties":{"id":3}}}"#).is_err()
        );
        assert!(
            global_event(r#"{"payload":{"type":"question.replied","properties":{}}}"#).is_err()
        );
        assert_eq!(global_event("[]"), Ok(Happening::Other));
    }

    #[test]
    fn a_question_askpane_cannot_show_is_refused_with_the_reason() {
        let request = QuestionRequest {
            id: "que_1".into(),
            session_id: "ses_1".into(),
            questions: vec![QuestionInfo {
                question: "Pick".into(),
                header: "Pick".into(),
                options: Vec::new(),
                multiple: false,
            }],
        };
        let invalid = to_ask(&request, "/p").expect_err("no options");
        let outcome = Outcome::Refused { reason: invalid.to_string() };
        let Some(Reply::Reply { answers }) = reply(&outcome) else { panic!("a reply") };
        assert!(answers[0][0].contains("could not be shown"), "{answers:?}");
    }

    #[test]
    fn listings_are_read_leniently() {
        let sessions = json!([{"directory": "/a"}, {"directory": "/b"}, {"directory": "/a"}, {}]);
        assert_eq!(session_directories(&sessions), ["/a", "/b"]);
        let listed = json!([{"id": "que_1", "sessionID": "ses_1", "questions": []}, {"id": 7}]);
        assert_eq!(pending(&listed).expect("a list").len(), 1);
        assert!(pending(&json!({})).is_err());
        let statuses = json!({"ses_1": {"type": "busy"}, "ses_2": {"type": "idle"},
            "ses_3": {"type": "retry", "attempt": 1}});
        assert_eq!(working_sessions(&statuses).expect("an object"), ["ses_1", "ses_3"]);
        assert!(working_sessions(&json!([])).is_err());
    }

    /// Every `permission.*`, `session.idle`, `session.error` and `session.deleted` frame of
    /// `/global/event` seen while probing OpenCode 1.18.33's permission requests.
    const PERMISSION_EVENTS: &str =
        include_str!("../../tests/fixtures/opencode/permission-events.jsonl");

    #[test]
    fn every_captured_permission_frame_is_read() {
        let mut asked = Vec::new();
        let mut settled = Vec::new();
        for raw in PERMISSION_EVENTS.lines() {
            let frame: Value = serde_json::from_str(raw).expect("JSON");
            let properties = &frame["payload"]["properties"];
            match global_event(raw).unwrap_or_else(|error| panic!("{error}: {raw}")) {
                Happening::PermissionAsked { directory, request } => {
                    assert_eq!(directory, "/home/dev/probe-opencode/project");
                    assert_eq!(request.id, properties["id"].as_str().unwrap_or_default());
                    assert_eq!(request.permission, "bash");
                    assert_eq!(request.patterns, ["echo askpane-ran"]);
                    assert_eq!(request.always, ["echo *"]);
                    assert_eq!(request.metadata, json!({"command": "echo askpane-ran"}));
                    asked.push(request.id);
                }
                Happening::PermissionSettled { request_id, .. } => {
                    assert!(asked.contains(&request_id), "{request_id} was asked first");
                    settled.push(request_id);
                }
                Happening::SessionEnded { session_id, .. } => {
                    assert_eq!(session_id, properties["sessionID"].as_str().unwrap_or_default());
                }
                other => panic!("{other:?}: {raw}"),
            }
        }
        // Asked six times, answered five: the sixth was left by an abort (no replied event).
        assert_eq!((asked.len(), settled.len()), (6, 5));
    }

    #[test]
    fn a_captured_permission_becomes_a_card_opencode_can_take_back() {
        let raw = PERMISSION_EVENTS.lines().next().expect("a frame");
        let Ok(Happening::PermissionAsked { directory, request }) = global_event(raw) else {
            panic!("{raw}")
        };
        let (card, who) = to_permission(&request, &directory);
        assert_eq!(card.tool_name, "bash");
        assert_eq!(card.input, json!({"command": "echo askpane-ran"}));
        assert_eq!(card.title.as_deref(), Some("bash: echo askpane-ran"));
        assert_eq!(card.tool_use_id.as_deref(), Some("call_q1"));
        assert_eq!(card.cwd.as_deref(), Some("/home/dev/probe-opencode/project"));
        assert_eq!(card.origin, ApprovalOrigin::OpenCode);
        assert!(card.origin.can_hand_back(), "OpenCode's TUI can still answer it");
        let labels: Vec<String> = card.suggestions.iter().map(Suggestion::label).collect();
        assert_eq!(
            labels,
            ["Always allow bash `echo *` (in this project, until OpenCode restarts)"]
        );
        assert_eq!(who.agent, "opencode");
        assert_eq!(who.project.as_deref(), Some("project"));
        assert_eq!(who.session.as_deref(), Some(request.session_id.as_str()));
        // `GET /permission` lists the same shape.
        let listed = json!([serde_json::from_str::<Value>(raw).expect("JSON")["payload"]["properties"], {"id": 3}]);
        assert_eq!(pending_permissions(&listed), Ok(vec![request]));
        assert!(pending_permissions(&json!({})).is_err());
    }

    #[test]
    fn permission_replies_are_the_bodies_opencode_takes() {
        // The schema: {"reply": "once" | "always" | "reject", "message"?: string}; the probe
        // sent exactly these, each answered `200 true`.
        assert_eq!(PermissionReply::Once.body().to_string(), r#"{"reply":"once"}"#);
        assert_eq!(PermissionReply::Always.body().to_string(), r#"{"reply":"always"}"#);
        assert_eq!(
            PermissionReply::Reject { message: None }.body().to_string(),
            r#"{"reply":"reject"}"#
        );
        assert_eq!(
            PermissionReply::Reject { message: Some("Use make instead.".into()) }
                .body()
                .to_string(),
            r#"{"reply":"reject","message":"Use make instead."}"#
        );
    }

    #[test]
    fn hostile_permission_frames_are_refused_or_ignored_never_a_panic() {
        for raw in [
            r#"{"payload":{"type":"permission.asked","properties":{"id":"per_1"}}}"#,
            r#"{"payload":{"type":"permission.asked","properties":{"id":1,"sessionID":"s","permission":"bash"}}}"#,
            r#"{"payload":{"type":"permission.asked","properties":null}}"#,
            r#"{"payload":{"type":"permission.replied","properties":{"requestID":7}}}"#,
            r#"{"payload":{"type":"session.deleted","properties":{"info":[]}}}"#,
        ] {
            assert!(global_event(raw).is_err(), "{raw}");
        }
        // Missing optional parts are defaults; an odd `metadata` is no input.
        let lean = r#"{"directory":"","payload":{"type":"permission.asked","properties":{"id":"per_1","sessionID":"s","permission":"edit","metadata":"x"}}}"#;
        let Ok(Happening::PermissionAsked { directory, request }) = global_event(lean) else {
            panic!("{lean}")
        };
        let (card, who) = to_permission(&request, &directory);
        assert_eq!((card.input, card.title.as_deref()), (json!({}), Some("edit")));
        assert!(card.suggestions.is_empty());
        assert_eq!(who.project, None);
        let deleted = r#"{"directory":"/d","payload":{"type":"session.deleted","properties":{"info":{"id":"ses_9"}}}}"#;
        assert_eq!(
            global_event(deleted),
            Ok(Happening::SessionEnded { directory: "/d".into(), session_id: "ses_9".into() })
        );
    }

    /// One `permission.asked` frame per kind OpenCode 1.18.33's tools asked about, captured
    /// with the real CLI against the fake model (every kind set to `ask`): bash, edit (an edit,
    /// a write of a new file, a write over a file), webfetch, read, glob, grep,
    /// external_directory (a read outside the project), todowrite.
    const PERMISSION_KINDS: &str =
        include_str!("../../tests/fixtures/opencode/permission-kinds.jsonl");

    /// The captured requests of `kind`, in order.
    fn captured_kind(kind: &str) -> Vec<PermissionAsked> {
        PERMISSION_KINDS
            .lines()
            .filter_map(|raw| match global_event(raw) {
                Ok(Happening::PermissionAsked { request, .. }) => Some(request),
                _ => None,
            })
            .filter(|request| request.permission == kind)
            .collect()
    }

    fn typed(request: &PermissionAsked) -> ToolCall {
        let (card, _) = to_permission(request, "/tmp/ocprobe/run/project");
        ToolCall::of(&card)
    }

    #[test]
    fn a_captured_bash_request_is_a_command() {
        let [bash] = captured_kind("bash").try_into().expect("one bash");
        assert_eq!(bash.patterns, ["echo hi", "ls"], "OpenCode splits the line per command");
        assert_eq!(
            typed(&bash),
            ToolCall::Bash {
                command: "echo hi && ls".into(),
                description: None,
                timeout: None,
                run_in_background: false
            }
        );
    }

    #[test]
    fn captured_edits_and_writes_are_opencodes_own_diffs() {
        let edits = captured_kind("edit");
        assert_eq!(edits.len(), 3, "an edit, a new file, a write over a file");
        let expected = [
            "--- /tmp/ocprobe/run/project/hello.txt\n+++ /tmp/ocprobe/run/project/hello.txt\n\
             @@ -1,2 +1,2 @@\n-hello world\n+hello askpane\n second line\n",
            "--- /tmp/ocprobe/run/project/new.txt\n+++ /tmp/ocprobe/run/project/new.txt\n\
             @@ -0,0 +1,2 @@\n+line one\n+line two\n",
            "--- /tmp/ocprobe/run/project/hello.txt\n+++ /tmp/ocprobe/run/project/hello.txt\n\
             @@ -1,2 +1,1 @@\n-hello world\n-second line\n+hello askpane\n",
        ];
        let files = ["hello.txt", "new.txt", "hello.txt"];
        for ((edit, diff), file) in edits.iter().zip(expected).zip(files) {
            let path = format!("/tmp/ocprobe/run/project/{file}");
            assert_eq!(typed(edit), ToolCall::Patch { files: path.clone(), diff: diff.into() });
            // The request list's one line names the file, not the diff.
            let (card, _) = to_permission(edit, "/p");
            assert_eq!(
                crate::protocol::stream::tool_summary(&card.tool_name, &card.input),
                format!("edit: {path}")
            );
        }
    }

    #[test]
    fn a_captured_webfetch_is_its_url() {
        let [fetch] = captured_kind("webfetch").try_into().expect("one webfetch");
        assert_eq!(
            typed(&fetch),
            ToolCall::WebFetch { url: "https://example.com/docs".into(), prompt: None }
        );
    }

    #[test]
    fn the_other_captured_kinds_stay_their_json() {
        let other = |kind: &str, metadata: Value| {
            let [request] = captured_kind(kind).try_into().expect("one of the kind");
            assert_eq!(typed(&request), ToolCall::Other { name: kind.into(), input: metadata });
        };
        // A read's metadata is empty: the file is in its patterns, and so in the card's title.
        other("read", json!({}));
        other("glob", json!({"pattern": "**/*.txt"}));
        other("grep", json!({"pattern": "world", "include": "*.txt"}));
        other("external_directory", json!({"filepath": "/etc/hostname", "parentDir": "/etc"}));
        other("todowrite", json!({}));
        let [read] = captured_kind("read").try_into().expect("one read");
        let (card, _) = to_permission(&read, "/p");
        assert_eq!(card.title.as_deref(), Some("read: tmp/ocprobe/run/project/hello.txt"));
    }

    #[test]
    fn hostile_metadata_falls_back_to_json_and_a_long_command_is_kept_whole() {
        // Wrong types, or a kind missing what it needs: its JSON.
        for (kind, metadata) in [
            ("bash", json!({"command": 7})),
            ("bash", json!({"command": ["rm", "-rf", "/"]})),
            ("bash", json!({})),
            ("edit", json!({"filepath": "/p/a", "diff": null})),
            ("edit", json!({"diff": "--- a\n+++ b\n"})),
            ("edit", json!({"filepath": {"x": 1}, "diff": "d"})),
            ("webfetch", json!({"url": false})),
            ("doom_loop", json!({"tool": "bash", "input": {"command": "ls"}})),
            ("myserver_mytool", json!({})),
            ("", json!({"command": "ls"})),
        ] {
            assert_eq!(
                tool_call(kind, &metadata),
                ToolCall::Other { name: kind.into(), input: metadata.clone() },
                "{kind} {metadata}"
            );
        }
        // Metadata that is not an object is no input at all (`to_permission`), and stays JSON.
        assert!(matches!(tool_call("bash", &json!("ls")), ToolCall::Other { .. }));
        // 100 KB of Japanese: the whole command; the card bounds what it draws.
        let command = format!("echo {}", "日本語のテキスト".repeat(4_300));
        assert!(command.len() > 100_000);
        let ToolCall::Bash { command: typed, .. } = tool_call("bash", &json!({"command": command}))
        else {
            panic!("a command")
        };
        assert_eq!(typed, command);
        // A diff without OpenCode's Index lines, or only them, is taken as it is.
        let bare = json!({"filepath": "/p/a", "diff": "@@ -1 +1 @@\n-a\n+b\n"});
        assert_eq!(
            tool_call("edit", &bare),
            ToolCall::Patch { files: "/p/a".into(), diff: "@@ -1 +1 @@\n-a\n+b\n".into() }
        );
        let only_index = json!({"filepath": "/p/a", "diff": "Index: /p/a\n====="});
        assert_eq!(
            tool_call("edit", &only_index),
            ToolCall::Patch { files: "/p/a".into(), diff: String::new() }
        );
    }

    #[test]
    fn only_opencodes_cards_are_read_as_opencodes_kinds() {
        // Claude Code's tools are capitalised; a hook's lowercase `bash` is not OpenCode's.
        let mut card = PermissionRequest {
            tool_name: "bash".into(),
            input: json!({"command": "ls"}),
            ..PermissionRequest::default()
        };
        assert!(matches!(ToolCall::of(&card), ToolCall::Other { .. }));
        card.origin = ApprovalOrigin::OpenCode;
        assert!(matches!(ToolCall::of(&card), ToolCall::Bash { .. }));
    }
}
