//! The questions askpane holds for an agent server it follows (`askpane opencode`): which are
//! handed to the inbox, which come back to the server, and which are taken back because the
//! server settled them elsewhere. Pure: the caller does the IO each [`Step`] names, so every
//! turn of a server's events is testable without a server or an inbox.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::protocol::opencode::{self, Happening, QuestionRequest};

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
    /// A line for the person running `askpane opencode`.
    Say(String),
}

/// The questions held for one server.
#[derive(Debug)]
pub struct FollowedServer {
    held: BTreeMap<String, Held>,
    /// False when the flags decide every outcome (`--decline`, `--answers --submit`, …): then
    /// nothing is handed to an inbox.
    needs_a_person: bool,
}

impl FollowedServer {
    pub fn new(needs_a_person: bool) -> Self {
        FollowedServer { held: BTreeMap::new(), needs_a_person }
    }

    /// What the server's event asks of askpane.
    pub fn happened(&mut self, happening: Happening) -> Vec<Step> {
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
                steps
            }
            Happening::Other => Vec::new(),
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
        followed.happened(Happening::Asked {
            directory: "/work/app".into(),
            request: question(id, session),
        })
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
        let steps = followed.happened(settled());
        assert!(steps.contains(&Step::Withdraw { id: "que_1".into() }), "{steps:?}");
        assert!(followed.happened(settled()).is_empty(), "a second settle withdraws nothing");
        assert_eq!(followed.release("que_1"), None, "its late outcome is not sent to the server");
    }

    #[test]
    fn an_ended_session_takes_back_only_its_own_questions() {
        let mut followed = FollowedServer::new(true);
        asked(&mut followed, "que_1", "ses_a");
        asked(&mut followed, "que_2", "ses_b");
        asked(&mut followed, "que_3", "ses_a");
        let steps = followed.happened(Happening::SessionEnded {
            directory: "/work/app".into(),
            session_id: "ses_a".into(),
        });
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
}
