//! The questions and permission requests askpane holds for an agent server it follows
//! (`askpane opencode`): which are handed to the inbox, which come back to the server, and
//! which are taken back because the server settled them elsewhere, and when a permission
//! card's `--timeout` runs out. Pure: the caller does the IO each [`Step`] names and passes the
//! time in, so every turn of a server's events is testable without a server, an inbox or a
//! clock.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::protocol::opencode::{
    self, Happening, PermissionAsked, PermissionReply, QuestionRequest,
};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};
use crate::protocol::web::WhoAsked;

use super::approval::said_words;

/// A question handed to the inbox, by the server's id for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    /// The project directory the server asked it in (its replies go there).
    pub directory: String,
    /// The server's session that asked it.
    pub session: String,
    /// The message that carries it to the inbox.
    pub message: Value,
}

/// A permission request handed to the inbox, by the server's id for it.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldPermission {
    /// The project directory the server asked it in (its reply goes there).
    pub directory: String,
    /// The server's session that asked it.
    pub session: String,
    /// The card the inbox shows, and who asked.
    pub request: PermissionRequest,
    pub from: WhoAsked,
    /// When `--timeout` runs out on it with nobody deciding, counted from when askpane learnt
    /// of it (a card handed again to a new inbox keeps its deadline).
    pub deadline: Option<Instant>,
}

/// What the caller does next, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Hand the held question `id` to the inbox (connecting to one first).
    HandOver { id: String },
    /// Take the question `id` back from the inbox: the server settled it.
    Withdraw { id: String },
    /// Decide the question here, from the flags alone, and reply to the server.
    DecideHere { directory: String, id: String, message: Value },
    /// Refuse the question to the server: it cannot be shown (`reason` says why).
    Refuse { directory: String, id: String, reason: String },
    /// Hand the held permission request `id` to the inbox (connecting to one first).
    HandOverPermission { id: String },
    /// Take the permission request `id` back from the inbox: the server settled it, or its
    /// session ended.
    WithdrawPermission { id: String },
    /// `--timeout` ran out on the permission request `id` with nobody deciding: its card leaves
    /// the inbox as timed out, and nothing is sent to the server (the request stays pending
    /// for OpenCode's TUI).
    TimeOutPermission { id: String },
    /// Send `reply` to the server for its permission request `id`.
    ReplyPermission { directory: String, id: String, reply: PermissionReply },
    /// A line for the person running `askpane opencode`.
    Say(String),
}

/// The questions and permission requests held for one server.
#[derive(Debug)]
pub struct FollowedServer {
    held: BTreeMap<String, Held>,
    permissions: BTreeMap<String, HeldPermission>,
    /// False when the flags decide every outcome (`--decline`, `--answers --submit`, …): then
    /// nothing is handed to an inbox.
    needs_a_person: bool,
    /// What the flags decide for every permission request without a person
    /// (`permission::decided_by_policy`): `None` hands each to the inbox.
    permissions_decided: Option<PermissionDecision>,
    /// How long a permission card waits for a person (`--timeout`); `None`: as long as the
    /// server does.
    permission_timeout: Option<Duration>,
    /// Permission requests left to the server's own TUI (handed back, or timed out), by id,
    /// with their session: the server still lists them, and they are not asked again.
    left: BTreeMap<String, String>,
}

impl FollowedServer {
    pub fn new(needs_a_person: bool) -> Self {
        FollowedServer {
            held: BTreeMap::new(),
            permissions: BTreeMap::new(),
            needs_a_person,
            permissions_decided: None,
            permission_timeout: None,
            left: BTreeMap::new(),
        }
    }

    /// The same, with what the flags decide for permission requests: a deny (`--decline`)
    /// rejects each one; a hand-back (nobody to ask) leaves each pending for OpenCode's TUI.
    /// Nothing the flags say ever allows one.
    pub fn deciding_permissions(mut self, decided: Option<PermissionDecision>) -> Self {
        self.permissions_decided = decided;
        self
    }

    /// The same, with how long each permission card waits for a person (`--timeout`): then
    /// it is left to OpenCode's TUI, decided neither way ([`FollowedServer::due`]).
    pub fn timing_out_permissions(mut self, timeout: Option<Duration>) -> Self {
        self.permission_timeout = timeout;
        self
    }

    /// What the server's event, which came at `now`, asks of askpane.
    pub fn happened(&mut self, happening: Happening, now: Instant) -> Vec<Step> {
        match happening {
            Happening::Asked { directory, request } => self.asked(directory, &request),
            Happening::Settled { request_id, .. } => match self.held.remove(&request_id) {
                Some(_) => vec![
                    Step::Say(format!("{request_id} was answered elsewhere")),
                    Step::Withdraw { id: request_id },
                ],
                None => Vec::new(),
            },
            Happening::SessionEnded { session_id, .. } => {
                let ended: Vec<String> = self
                    .held
                    .iter()
                    .filter(|(_, held)| held.session == session_id)
                    .map(|(id, _)| id.clone())
                    .collect();
                let mut steps = Vec::new();
                for id in ended {
                    self.held.remove(&id);
                    steps.push(Step::Say(format!("the session of {id} ended")));
                    steps.push(Step::Withdraw { id });
                }
                // An abort leaves the request listed, but its call will never run.
                let ended: Vec<String> = self
                    .permissions
                    .iter()
                    .filter(|(_, held)| held.session == session_id)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in ended {
                    self.permissions.remove(&id);
                    steps.push(Step::Say(format!("the session of {id} ended")));
                    steps.push(Step::WithdrawPermission { id });
                }
                self.left.retain(|_, session| *session != session_id);
                steps
            }
            Happening::PermissionAsked { directory, request } => {
                self.permission_asked(directory, &request, now)
            }
            Happening::PermissionSettled { request_id, .. } => {
                self.left.remove(&request_id);
                match self.permissions.remove(&request_id) {
                    Some(_) => vec![
                        Step::Say(format!("{request_id} was answered elsewhere")),
                        Step::WithdrawPermission { id: request_id },
                    ],
                    None => Vec::new(),
                }
            }
            Happening::Other => Vec::new(),
        }
    }

    /// The server asks permission for a tool call in `directory`, at `now`. One asked before
    /// is not asked again: held, it waits in the inbox; left to OpenCode, it stays there.
    pub fn permission_asked(
        &mut self,
        directory: String,
        request: &PermissionAsked,
        now: Instant,
    ) -> Vec<Step> {
        if self.permissions.contains_key(&request.id) || self.left.contains_key(&request.id) {
            return Vec::new();
        }
        let (card, from) = opencode::to_permission(request, &directory);
        let what = card.title.clone().unwrap_or_else(|| card.tool_name.clone());
        let said = Step::Say(format!("{} asks to run {what} ({directory})", request.id));
        let id = request.id.clone();
        match &self.permissions_decided {
            Some(decision) => match permission_reply(decision) {
                Some(reply) => vec![said, Step::ReplyPermission { directory, id, reply }],
                None => {
                    self.left.insert(id.clone(), request.session_id.clone());
                    vec![said, Step::Say(format!("nobody is asked: {id} is left to OpenCode"))]
                }
            },
            None => {
                let session = request.session_id.clone();
                let deadline = self.permission_timeout.and_then(|timeout| now.checked_add(timeout));
                let held = HeldPermission { directory, session, request: card, from, deadline };
                self.permissions.insert(id.clone(), held);
                vec![said, Step::HandOverPermission { id }]
            }
        }
    }

    /// What is pending right after a (re)connect, at `now`, for permission requests: as
    /// [`pending`] is for questions. One left to OpenCode and no longer pending is forgotten.
    ///
    /// [`pending`]: FollowedServer::pending
    pub fn pending_permissions(
        &mut self,
        pending: Vec<(String, PermissionAsked)>,
        now: Instant,
    ) -> Vec<Step> {
        self.left.retain(|id, _| pending.iter().any(|(_, request)| &request.id == id));
        let gone: Vec<String> = self
            .permissions
            .keys()
            .filter(|id| !pending.iter().any(|(_, request)| &request.id == *id))
            .cloned()
            .collect();
        let mut steps = Vec::new();
        for id in gone {
            self.permissions.remove(&id);
            steps.push(Step::WithdrawPermission { id });
        }
        for (directory, request) in pending {
            steps.extend(self.permission_asked(directory, &request, now));
        }
        steps
    }

    /// The inbox decided the held permission request `id`: what the server is sent (nothing
    /// for one no longer held, or handed back: it stays pending for OpenCode's TUI).
    pub fn permission_decided(&mut self, id: &str, decision: &PermissionDecision) -> Vec<Step> {
        let Some(held) = self.permissions.remove(id) else { return Vec::new() };
        match permission_reply(decision) {
            Some(reply) => {
                let said = Step::Say(format!("{id} {}", reply.as_str()));
                let id = id.to_owned();
                vec![said, Step::ReplyPermission { directory: held.directory, id, reply }]
            }
            None => {
                self.left.insert(id.to_owned(), held.session);
                vec![Step::Say(format!("{id} is left to OpenCode"))]
            }
        }
    }

    /// When the next held permission card's `--timeout` runs out, if any has one.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.permissions.values().filter_map(|held| held.deadline).min()
    }

    /// The permission cards whose `--timeout` ran out by `now`: each leaves the inbox as timed
    /// out and is left to OpenCode's TUI, never allowed and never rejected for want of a person.
    pub fn due(&mut self, now: Instant) -> Vec<Step> {
        let due: Vec<String> = self
            .permissions
            .iter()
            .filter(|(_, held)| held.deadline.is_some_and(|deadline| deadline <= now))
            .map(|(id, _)| id.clone())
            .collect();
        let secs = self.permission_timeout.unwrap_or_default().as_secs();
        let mut steps = Vec::new();
        for id in due {
            let Some(held) = self.permissions.remove(&id) else { continue };
            self.left.insert(id.clone(), held.session);
            let said = format!("{id}: no decision within --timeout ({secs} s); left to OpenCode");
            steps.push(Step::Say(said));
            steps.push(Step::TimeOutPermission { id });
        }
        steps
    }

    /// The held permission request `id`, if it is held.
    pub fn permission(&self, id: &str) -> Option<&HeldPermission> {
        self.permissions.get(id)
    }

    /// Lets go of the permission request `id` (no inbox could take it).
    pub fn release_permission(&mut self, id: &str) -> Option<HeldPermission> {
        self.permissions.remove(id)
    }

    /// The held permission requests' ids, to hand to a new inbox when the old one went away.
    pub fn held_permission_ids(&self) -> Vec<String> {
        self.permissions.keys().cloned().collect()
    }

    /// What is pending right after a (re)connect: held questions no longer among them were
    /// settled while askpane was away; new ones are asked (one seen again is held once).
    pub fn pending(&mut self, pending: Vec<(String, QuestionRequest)>) -> Vec<Step> {
        let gone: Vec<String> = self
            .held
            .keys()
            .filter(|id| !pending.iter().any(|(_, request)| &request.id == *id))
            .cloned()
            .collect();
        let mut steps = Vec::new();
        for id in gone {
            self.held.remove(&id);
            steps.push(Step::Withdraw { id });
        }
        for (directory, request) in pending {
            steps.extend(self.asked(directory, &request));
        }
        steps
    }

    /// The server asked `request` in `directory`.
    pub fn asked(&mut self, directory: String, request: &QuestionRequest) -> Vec<Step> {
        if self.held.contains_key(&request.id) {
            return Vec::new();
        }
        let converted = match opencode::to_ask(request, &directory) {
            Ok(converted) => converted,
            Err(invalid) => {
                let reason = invalid.to_string();
                return vec![Step::Refuse { directory, id: request.id.clone(), reason }];
            }
        };
        let title = converted.validated.ask.title();
        let said = Step::Say(format!("{} asks “{title}” ({directory})", request.id));
        if !self.needs_a_person {
            let id = request.id.clone();
            return vec![said, Step::DecideHere { directory, id, message: converted.message }];
        }
        let session = request.session_id.clone();
        self.held
            .insert(request.id.clone(), Held { directory, session, message: converted.message });
        vec![said, Step::HandOver { id: request.id.clone() }]
    }

    /// The held question `id`, if it is held.
    pub fn get(&self, id: &str) -> Option<&Held> {
        self.held.get(id)
    }

    /// Lets go of the question `id` (the inbox gave its outcome, or no inbox could take it),
    /// returning it if it was held: an outcome for a question taken back is not sent twice.
    pub fn release(&mut self, id: &str) -> Option<Held> {
        self.held.remove(id)
    }

    /// The held questions' ids, to hand to a new inbox when the old one went away.
    pub fn held_ids(&self) -> Vec<String> {
        self.held.keys().cloned().collect()
    }
}

/// What OpenCode is sent for `decision`: allow once → `once`, allow always → `always`, deny →
/// `reject` (with the person's words alone as its message, since OpenCode says who spoke: its
/// model reads "… with the following feedback: <words>" and goes on; a deny without words
/// rejects as OpenCode's own TUI does, and the turn stops). A hand-back sends
/// nothing: the request stays pending for OpenCode's TUI.
pub fn permission_reply(decision: &PermissionDecision) -> Option<PermissionReply> {
    match decision {
        PermissionDecision::AllowOnce => Some(PermissionReply::Once),
        PermissionDecision::AllowAlways { .. } => Some(PermissionReply::Always),
        PermissionDecision::Deny { message } | PermissionDecision::DenyAlways { message, .. } => {
            let message = said_words(message).map(str::to_owned);
            Some(PermissionReply::Reject { message })
        }
        // OpenCode asks no forms: never offered, so no decision.
        PermissionDecision::HandBack | PermissionDecision::Fill { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::book::approval::deny_words;
    use crate::protocol::opencode::PermissionAsked;

    fn now() -> Instant {
        Instant::now()
    }

    fn question(id: &str, session: &str) -> QuestionRequest {
        serde_json::from_value(json!({
            "id": id, "sessionID": session,
            "questions": [{"question": "Which database?", "header": "Database",
                "options": [{"label": "SQLite", "description": "a file"},
                            {"label": "Postgres", "description": "a server"}]}]
        }))
        .expect("a QuestionRequest")
    }

    fn asked(followed: &mut FollowedServer, id: &str, session: &str) -> Vec<Step> {
        followed.happened(
            Happening::Asked { directory: "/work/app".into(), request: question(id, session) },
            now(),
        )
    }

    fn handed_over(steps: &[Step]) -> Vec<&str> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::HandOver { id } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_question_asked_twice_is_handed_over_once() {
        let mut followed = FollowedServer::new(true);
        assert_eq!(handed_over(&asked(&mut followed, "que_1", "ses_a")), ["que_1"]);
        assert!(asked(&mut followed, "que_1", "ses_a").is_empty());
        assert!(followed.get("que_1").is_some_and(|held| held.directory == "/work/app"));
    }

    #[test]
    fn a_question_settled_elsewhere_is_taken_back_once() {
        let mut followed = FollowedServer::new(true);
        asked(&mut followed, "que_1", "ses_a");
        let settled =
            || Happening::Settled { directory: "/work/app".into(), request_id: "que_1".into() };
        let steps = followed.happened(settled(), now());
        assert!(steps.contains(&Step::Withdraw { id: "que_1".into() }), "{steps:?}");
        assert!(
            followed.happened(settled(), now()).is_empty(),
            "a second settle withdraws nothing"
        );
        assert_eq!(followed.release("que_1"), None, "its late outcome is not sent to the server");
    }

    #[test]
    fn an_ended_session_takes_back_only_its_own_questions() {
        let mut followed = FollowedServer::new(true);
        asked(&mut followed, "que_1", "ses_a");
        asked(&mut followed, "que_2", "ses_b");
        asked(&mut followed, "que_3", "ses_a");
        let steps = followed.happened(
            Happening::SessionEnded { directory: "/work/app".into(), session_id: "ses_a".into() },
            now(),
        );
        let withdrawn: Vec<&Step> =
            steps.iter().filter(|step| matches!(step, Step::Withdraw { .. })).collect();
        assert_eq!(
            withdrawn,
            [&Step::Withdraw { id: "que_1".into() }, &Step::Withdraw { id: "que_3".into() }]
        );
        assert_eq!(followed.held_ids(), ["que_2"]);
    }

    #[test]
    fn after_a_reconnect_what_was_settled_meanwhile_goes_and_what_is_new_is_asked() {
        let mut followed = FollowedServer::new(true);
        asked(&mut followed, "que_1", "ses_a");
        asked(&mut followed, "que_2", "ses_a");
        let steps = followed.pending(vec![
            ("/work/app".into(), question("que_2", "ses_a")),
            ("/work/other".into(), question("que_3", "ses_c")),
        ]);
        assert_eq!(steps.first(), Some(&Step::Withdraw { id: "que_1".into() }));
        assert_eq!(handed_over(&steps), ["que_3"], "que_2 is still held, not asked again");
        assert_eq!(followed.held_ids(), ["que_2", "que_3"]);
    }

    #[test]
    fn a_question_that_cannot_be_shown_is_refused_to_the_server_and_not_held() {
        let mut followed = FollowedServer::new(true);
        let mut bad = question("que_bad", "ses_a");
        bad.questions.clear();
        let steps = followed.asked("/work/app".into(), &bad);
        assert!(
            matches!(steps.as_slice(), [Step::Refuse { id, .. }] if id == "que_bad"),
            "{steps:?}"
        );
        assert!(followed.held_ids().is_empty());
    }

    #[test]
    fn flags_that_decide_alone_decide_here_and_hold_nothing() {
        let mut followed = FollowedServer::new(false);
        let steps = asked(&mut followed, "que_1", "ses_a");
        assert!(
            steps.iter().any(|step| matches!(step, Step::DecideHere { id, .. } if id == "que_1")),
            "{steps:?}"
        );
        assert!(handed_over(&steps).is_empty());
        assert!(followed.held_ids().is_empty());
    }

    #[test]
    fn hostile_ids_and_text_are_carried_as_data() {
        let mut followed = FollowedServer::new(true);
        let id = "que_\u{202e}\n\"; rm -rf /";
        let steps = asked(&mut followed, id, "ses_a");
        assert_eq!(handed_over(&steps), [id]);
        assert_eq!(followed.release(id).map(|held| held.session), Some("ses_a".to_owned()));
    }

    fn permission(id: &str, session: &str) -> PermissionAsked {
        serde_json::from_value(json!({
            "id": id, "sessionID": session, "permission": "bash",
            "patterns": ["echo askpane-ran"], "metadata": {"command": "echo askpane-ran"},
            "always": ["echo *"], "tool": {"messageID": "msg_1", "callID": "call_1"}
        }))
        .expect("a PermissionAsked")
    }

    fn permission_asked(followed: &mut FollowedServer, id: &str, session: &str) -> Vec<Step> {
        followed.happened(
            Happening::PermissionAsked {
                directory: "/work/app".into(),
                request: permission(id, session),
            },
            now(),
        )
    }

    fn cards_handed_over(steps: &[Step]) -> Vec<&str> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::HandOverPermission { id } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    fn replies(steps: &[Step]) -> Vec<(&str, &PermissionReply)> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::ReplyPermission { id, reply, directory } => {
                    assert_eq!(directory, "/work/app");
                    Some((id.as_str(), reply))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_permission_request_is_handed_over_once_as_a_card_from_its_session() {
        let mut followed = FollowedServer::new(true);
        assert_eq!(
            cards_handed_over(&permission_asked(&mut followed, "per_1", "ses_a")),
            ["per_1"]
        );
        assert!(permission_asked(&mut followed, "per_1", "ses_a").is_empty());
        let held = followed.permission("per_1").expect("held");
        assert_eq!(held.request.tool_name, "bash");
        assert_eq!(held.request.input, json!({"command": "echo askpane-ran"}));
        assert_eq!(held.request.title.as_deref(), Some("bash: echo askpane-ran"));
        assert_eq!(held.request.origin, crate::protocol::permission::ApprovalOrigin::OpenCode);
        assert_eq!(
            held.from.provenance().label(),
            "opencode · /work/app · ses_a",
            "as its questions say"
        );
        assert_eq!(held.from.source, "opencode · /work/app · ses_a");
        // A question with the same id space is another thing: both are held.
        asked(&mut followed, "que_1", "ses_a");
        assert_eq!(
            (followed.held_ids(), followed.held_permission_ids()),
            (vec!["que_1".to_owned()], vec!["per_1".to_owned()])
        );
    }

    #[test]
    fn each_decision_becomes_opencodes_reply_and_a_hand_back_sends_nothing() {
        use crate::protocol::stream::PermissionDecision as D;
        let mut followed = FollowedServer::new(true);
        for id in ["per_1", "per_2", "per_3", "per_4", "per_5"] {
            permission_asked(&mut followed, id, "ses_a");
        }
        let always = followed.permission("per_2").expect("held").request.suggestions[0].clone();
        let decided = |followed: &mut FollowedServer, id: &str, decision: D| {
            let steps = followed.permission_decided(id, &decision);
            replies(&steps).into_iter().map(|(_, reply)| reply.clone()).collect::<Vec<_>>()
        };
        assert_eq!(decided(&mut followed, "per_1", D::AllowOnce), [PermissionReply::Once]);
        let suggestion = always;
        assert_eq!(
            decided(&mut followed, "per_2", D::AllowAlways { suggestion }),
            [PermissionReply::Always]
        );
        // A deny without words rejects as OpenCode's TUI does (the turn stops); with words,
        // the model reads them.
        let wordless = D::Deny { message: deny_words("") };
        assert_eq!(
            decided(&mut followed, "per_3", wordless),
            [PermissionReply::Reject { message: None }]
        );
        // The person's words only: OpenCode's own wrapper already says who spoke ("… with the
        // following feedback: <words>").
        let words = D::Deny { message: deny_words("  Use make instead. ") };
        assert_eq!(
            decided(&mut followed, "per_4", words),
            [PermissionReply::Reject { message: Some("Use make instead.".to_owned()) }]
        );
        // Handed back: nothing is sent, OpenCode's TUI still has it.
        let steps = followed.permission_decided("per_5", &D::HandBack);
        assert!(replies(&steps).is_empty(), "{steps:?}");
        assert!(followed.held_permission_ids().is_empty());
        // A late or second decision reaches nobody.
        assert!(followed.permission_decided("per_1", &D::AllowOnce).is_empty());
    }

    #[test]
    fn a_deny_sends_opencode_the_words_alone_as_typed_or_given() {
        let reject = |message: &str| {
            permission_reply(&PermissionDecision::Deny { message: message.to_owned() })
        };
        let said = |words: &str| Some(PermissionReply::Reject { message: Some(words.to_owned()) });
        let wordless = Some(PermissionReply::Reject { message: None });
        assert_eq!(reject(&deny_words("")), wordless);
        assert_eq!(reject(&deny_words(" \n ")), wordless);
        assert_eq!(reject(""), wordless);
        assert_eq!(reject(&deny_words("no")), said("no"));
        // Words that look like the sentence are still the person's words, once.
        let echo = "The user denied this tool call and said: twice";
        assert_eq!(reject(&deny_words(echo)), said(echo));
        // --decline MESSAGE: the message as given.
        assert_eq!(reject("Not in CI."), said("Not in CI."));
        let long = "拒否".repeat(50_000);
        assert_eq!(reject(&deny_words(&long)), said(&long));
        // The wire body holds the words alone.
        let body = permission_reply(&PermissionDecision::Deny { message: deny_words("Use make.") })
            .map(|reply| reply.body().to_string());
        assert_eq!(body.as_deref(), Some(r#"{"reply":"reject","message":"Use make."}"#));
    }

    #[test]
    fn a_permission_answered_in_opencode_or_whose_session_ends_leaves_the_inbox() {
        let mut followed = FollowedServer::new(true);
        permission_asked(&mut followed, "per_1", "ses_a");
        permission_asked(&mut followed, "per_2", "ses_b");
        permission_asked(&mut followed, "per_3", "ses_b");
        let settled = || Happening::PermissionSettled {
            directory: "/work/app".into(),
            request_id: "per_1".into(),
        };
        let steps = followed.happened(settled(), now());
        assert!(steps.contains(&Step::WithdrawPermission { id: "per_1".into() }), "{steps:?}");
        assert!(
            followed.happened(settled(), now()).is_empty(),
            "a second settle withdraws nothing"
        );
        // The inbox's decision for it, crossing in flight, is not sent.
        let late = followed.permission_decided("per_1", &PermissionDecision::AllowOnce);
        assert!(late.is_empty(), "{late:?}");
        let steps = followed.happened(
            Happening::SessionEnded { directory: "/work/app".into(), session_id: "ses_b".into() },
            now(),
        );
        let withdrawn: Vec<&Step> =
            steps.iter().filter(|step| matches!(step, Step::WithdrawPermission { .. })).collect();
        assert_eq!(
            withdrawn,
            [
                &Step::WithdrawPermission { id: "per_2".into() },
                &Step::WithdrawPermission { id: "per_3".into() }
            ]
        );
        assert!(followed.held_permission_ids().is_empty());
    }

    #[test]
    fn after_a_reconnect_permissions_settled_meanwhile_go_and_new_ones_are_asked() {
        let mut followed = FollowedServer::new(true);
        permission_asked(&mut followed, "per_1", "ses_a");
        permission_asked(&mut followed, "per_2", "ses_a");
        let steps = followed.pending_permissions(
            vec![
                ("/work/app".into(), permission("per_2", "ses_a")),
                ("/work/other".into(), permission("per_3", "ses_c")),
            ],
            now(),
        );
        assert_eq!(steps.first(), Some(&Step::WithdrawPermission { id: "per_1".into() }));
        assert_eq!(cards_handed_over(&steps), ["per_3"], "per_2 is still held, not asked again");
        assert_eq!(followed.held_permission_ids(), ["per_2", "per_3"]);
        assert_eq!(
            followed.permission("per_3").map(|held| held.directory.as_str()),
            Some("/work/other")
        );
    }

    #[test]
    fn flags_reject_or_leave_a_permission_but_never_allow_it() {
        let decline = PermissionDecision::Deny { message: "Not now.".into() };
        let mut declining = FollowedServer::new(false).deciding_permissions(Some(decline));
        let steps = permission_asked(&mut declining, "per_1", "ses_a");
        assert_eq!(
            replies(&steps),
            [("per_1", &PermissionReply::Reject { message: Some("Not now.".into()) })]
        );
        assert!(cards_handed_over(&steps).is_empty());
        assert!(declining.held_permission_ids().is_empty());
        // Nobody to ask (--non-interactive, --answers --submit): no reply at all, the request
        // stays pending for OpenCode's TUI.
        let mut nobody =
            FollowedServer::new(false).deciding_permissions(Some(PermissionDecision::HandBack));
        let steps = permission_asked(&mut nobody, "per_1", "ses_a");
        assert!(replies(&steps).is_empty() && cards_handed_over(&steps).is_empty(), "{steps:?}");
        assert!(
            steps
                .iter()
                .any(|step| matches!(step, Step::Say(line) if line.contains("left to OpenCode")))
        );
        // --answers without --submit still needs a person for questions; a permission goes to
        // the inbox too.
        let mut asking = FollowedServer::new(true).deciding_permissions(None);
        assert_eq!(cards_handed_over(&permission_asked(&mut asking, "per_1", "ses_a")), ["per_1"]);
    }

    #[test]
    fn hostile_permission_ids_and_patterns_are_carried_as_data() {
        let mut followed = FollowedServer::new(true);
        let id = "per_\u{202e}\n\"; rm -rf /";
        let mut request = permission(id, "ses_a");
        request.patterns = vec!["$(reboot)".into(), "\u{0}".into()];
        request.always.clear();
        request.metadata = json!(["not", "an", "object"]);
        let steps = followed.permission_asked("/".into(), &request, now());
        assert_eq!(cards_handed_over(&steps), [id]);
        let held = followed.release_permission(id).expect("held");
        assert_eq!(held.request.input, json!({}), "metadata that is not an object is not input");
        assert!(held.request.suggestions.is_empty(), "no `always` patterns: no Always button");
        assert_eq!(held.from.project, None);
    }

    fn timed_out(steps: &[Step]) -> Vec<&str> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::TimeOutPermission { id } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_card_whose_timeout_runs_out_leaves_the_inbox_and_is_decided_neither_way() {
        let timeout = Duration::from_secs(30);
        let mut followed = FollowedServer::new(true).timing_out_permissions(Some(timeout));
        let start = now();
        let ask = |followed: &mut FollowedServer, id: &str, at: Instant| {
            let request = permission(id, "ses_a");
            followed
                .happened(Happening::PermissionAsked { directory: "/work/app".into(), request }, at)
        };
        assert_eq!(cards_handed_over(&ask(&mut followed, "per_1", start)), ["per_1"]);
        let later = start + Duration::from_secs(10);
        ask(&mut followed, "per_2", later);
        assert_eq!(followed.next_deadline(), Some(start + timeout));
        assert!(followed.due(start + Duration::from_secs(29)).is_empty());
        // Asked again (a reconnect lists it): the deadline is the first one.
        assert!(ask(&mut followed, "per_1", later).is_empty());
        let steps = followed.due(start + timeout);
        assert_eq!(timed_out(&steps), ["per_1"]);
        assert!(replies(&steps).is_empty(), "neither allowed nor rejected: {steps:?}");
        assert!(steps.iter().any(|step| matches!(step, Step::Say(line)
            if line == "per_1: no decision within --timeout (30 s); left to OpenCode")));
        assert!(followed.due(start + timeout).is_empty(), "it times out once");
        assert_eq!(followed.held_permission_ids(), ["per_2"]);
        assert_eq!(followed.next_deadline(), Some(later + timeout));
        // The inbox's decision crossing the time-out reaches nobody.
        assert!(followed.permission_decided("per_1", &PermissionDecision::AllowOnce).is_empty());
        // OpenCode still lists it: it is not asked again, on an event or after a reconnect.
        assert!(ask(&mut followed, "per_1", start + timeout).is_empty());
        let listed = vec![("/work/app".to_owned(), permission("per_1", "ses_a"))];
        let steps = followed.pending_permissions(listed, start + timeout);
        assert!(cards_handed_over(&steps).is_empty(), "{steps:?}");
        // Answered in OpenCode's TUI: forgotten, so the same id asked anew is a new card.
        followed.happened(
            Happening::PermissionSettled {
                directory: "/work/app".into(),
                request_id: "per_1".into(),
            },
            start + timeout,
        );
        assert_eq!(cards_handed_over(&ask(&mut followed, "per_1", start + timeout)), ["per_1"]);
    }

    #[test]
    fn without_a_timeout_a_card_waits_as_long_as_opencode_does() {
        let mut followed = FollowedServer::new(true);
        permission_asked(&mut followed, "per_1", "ses_a");
        assert_eq!(followed.next_deadline(), None);
        assert!(followed.due(now() + Duration::from_secs(365 * 24 * 3600)).is_empty());
        assert_eq!(followed.held_permission_ids(), ["per_1"]);
        // A timeout of 0 s runs out at once; one too large for the clock never does.
        let mut at_once = FollowedServer::new(true).timing_out_permissions(Some(Duration::ZERO));
        permission_asked(&mut at_once, "per_1", "ses_a");
        assert_eq!(timed_out(&at_once.due(now())), ["per_1"]);
        let mut never = FollowedServer::new(true).timing_out_permissions(Some(Duration::MAX));
        permission_asked(&mut never, "per_1", "ses_a");
        assert_eq!(never.next_deadline(), None);
    }

    #[test]
    fn a_card_handed_back_stays_with_opencode_after_a_reconnect_until_its_session_ends() {
        let mut followed = FollowedServer::new(true);
        permission_asked(&mut followed, "per_1", "ses_a");
        followed.permission_decided("per_1", &PermissionDecision::HandBack);
        let listed = || vec![("/work/app".to_owned(), permission("per_1", "ses_a"))];
        assert!(cards_handed_over(&followed.pending_permissions(listed(), now())).is_empty());
        assert!(permission_asked(&mut followed, "per_1", "ses_a").is_empty());
        followed.happened(
            Happening::SessionEnded { directory: "/work/app".into(), session_id: "ses_a".into() },
            now(),
        );
        assert_eq!(cards_handed_over(&followed.pending_permissions(listed(), now())), ["per_1"]);
    }
}
