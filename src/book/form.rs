//! A form to fill in (issue 28): an ACP agent's generic `elicitation/create` (any schema not
//! shaped like Claude's questions) is a card of the book, like a plan, drawn as fields in the
//! card's place. This is the pure model: what the person typed in each field, the check of every
//! field against its schema before anything is sent (the rules are
//! [`crate::protocol::acp::form::rules`], one pure function each; a broken one leaves its message
//! next to its field and sends nothing), and how each ending becomes the card's decision:
//! - Send, every field fine: [`PermissionDecision::Fill`] with the content in its JSON types
//!   (the agent reads `{"action": "accept", "content": …}`);
//! - Decline: a deny (`decline`: the person chose not to answer);
//! - Stop, a close, a timeout, nobody to ask: a hand-back (`cancel`: nobody answered).

use serde_json::{Map, Value};

use crate::protocol::acp::form::{FieldKind, FieldValue, Form};
use crate::protocol::permission;
use crate::protocol::stream::{PermissionDecision, PermissionRequest};

/// What a declined form's card says in history (ACP carries no words with a decline).
pub const DECLINED: &str = "The user declined to fill in the form.";

/// A form waiting on its card: what was asked and what the person has filled in so far.
#[derive(Clone, Debug, PartialEq)]
pub struct FormReview {
    /// What the agent says the form is for.
    pub message: String,
    /// A link the person is asked to open themselves (URL elicitation): shown as text, never
    /// opened by askpane; the form then has no fields, and Send is "Done".
    pub url: Option<String>,
    pub form: Form,
    /// One value per field, in field order (`None`: empty); the defaults to start with.
    pub values: Vec<Option<FieldValue>>,
    /// Per field, what is wrong with it since the last Send (shown next to it).
    pub problems: Vec<Option<String>>,
}

/// What was filled in on a form, kept while it waits (a crash, a restart, the agent asking again:
/// nothing typed is lost) and given back with [`FormReview::restore`] when the same form is asked
/// again. Each value under its field's key, so a value never lands in another field.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FormDraft {
    pub values: Vec<(String, Option<FieldValue>)>,
}

/// What the person does on a form's card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormAction {
    /// Field `field` now holds `value` (a text box edited, a choice picked, a box ticked).
    Set {
        field: usize,
        value: Option<FieldValue>,
    },
    /// Send what is filled in, when every field is fine.
    Send,
    Decline,
    /// Stop: nobody answers (`cancel`).
    Stop,
}

/// How a form ended on its card.
#[derive(Clone, Debug, PartialEq)]
pub enum FormOutcome {
    Sent(Map<String, Value>),
    Declined,
    Stopped,
}

impl FormOutcome {
    /// The decision the agent's handle hears.
    pub fn decision(self) -> PermissionDecision {
        match self {
            FormOutcome::Sent(content) => PermissionDecision::Fill { content },
            FormOutcome::Declined => PermissionDecision::Deny { message: DECLINED.to_owned() },
            FormOutcome::Stopped => PermissionDecision::HandBack,
        }
    }
}

/// The card's input for a form: what [`FormReview::of`] reads back.
pub fn card_input(message: &str, schema: &Value) -> Value {
    serde_json::json!({"message": message, "requestedSchema": schema})
}

/// The card's input for a link to open.
pub fn link_input(message: &str, url: &str) -> Value {
    serde_json::json!({"message": message, "url": url})
}

impl FormReview {
    /// The form a card asks, when it is one ([`permission::is_form`]) and its schema reads.
    pub fn of(request: &PermissionRequest) -> Option<FormReview> {
        if !permission::is_form(request) {
            return None;
        }
        let message = crate::protocol::acp::text(&request.input, "message").unwrap_or_default();
        if let Some(url) = crate::protocol::acp::text(&request.input, "url") {
            let form = Form { title: None, description: None, fields: Vec::new() };
            let (values, problems) = (Vec::new(), Vec::new());
            return Some(FormReview { message, url: Some(url), form, values, problems });
        }
        let form = Form::parse(request.input.get("requestedSchema")?).ok()?;
        // A required yes/no is sent as its box shows it: unticked is `false`.
        let values = form
            .defaults()
            .into_iter()
            .zip(&form.fields)
            .map(|(value, field)| match (&field.kind, value, field.required) {
                (FieldKind::Boolean { .. }, None, true) => Some(FieldValue::Boolean(false)),
                (_, value, _) => value,
            })
            .collect();
        let problems = vec![None; form.fields.len()];
        Some(FormReview { message, url: None, form, values, problems })
    }

    /// Does what the person did; the outcome when it ends the form. A Send with a field that
    /// breaks a rule (or a required one empty) ends nothing: each such field gets its message.
    pub fn apply(&mut self, action: FormAction) -> Option<FormOutcome> {
        match action {
            FormAction::Set { field, value } => {
                let slot = self.values.get_mut(field)?;
                *slot = value;
                // A field that was wrong is checked again as it is corrected.
                if self.problems.get(field).is_some_and(Option::is_some) {
                    self.problems = self.check().err().unwrap_or_else(|| self.no_problems());
                }
                None
            }
            FormAction::Send => match self.check() {
                Ok(content) => Some(FormOutcome::Sent(content)),
                Err(problems) => {
                    self.problems = problems;
                    None
                }
            },
            FormAction::Decline => Some(FormOutcome::Declined),
            FormAction::Stop => Some(FormOutcome::Stopped),
        }
    }

    /// What is filled in now, to keep.
    pub fn draft(&self) -> FormDraft {
        let keys = self.form.fields.iter().map(|field| field.key.clone());
        FormDraft { values: keys.zip(self.values.iter().cloned()).collect() }
    }

    /// Gives the form back what was filled in before: each kept value goes to the field of its
    /// key when that field takes its kind (a draft of another form, or a value that no longer
    /// fits, is left out: the field keeps its default). Nothing is checked or sent: the person
    /// sends it.
    pub fn restore(&mut self, draft: FormDraft) {
        for (key, value) in draft.values {
            let field = self.form.fields.iter().enumerate().find(|(_, field)| field.key == key);
            let Some((index, field)) = field else { continue };
            let fits = value.as_ref().is_none_or(|value| field.kind.takes(value));
            if let (true, Some(slot)) = (fits, self.values.get_mut(index)) {
                *slot = value;
            }
        }
    }

    fn no_problems(&self) -> Vec<Option<String>> {
        vec![None; self.form.fields.len()]
    }

    /// The content to send, or each field's problem (`None` where the field is fine).
    fn check(&self) -> Result<Map<String, Value>, Vec<Option<String>>> {
        self.form.content(&self.values).map_err(|errors| {
            let mut problems = self.no_problems();
            for error in errors {
                let at = self.form.fields.iter().position(|field| field.key == error.key);
                if let Some(slot) = at.and_then(|at| problems.get_mut(at)) {
                    *slot = Some(error.problem);
                }
            }
            problems
        })
    }

    /// True once the person typed or picked something that is not a default.
    pub fn is_touched(&self) -> bool {
        self.values.iter().zip(self.form.defaults()).any(|(now, default)| match (now, default) {
            (Some(FieldValue::Boolean(false)), None) => false,
            (now, default) => *now != default,
        })
    }

    /// Whether `content` (a decision made elsewhere) is exactly what this form accepts: the
    /// same check as a Send here, so no front end sends the agent what its schema refuses.
    pub fn accepts(&self, content: &Map<String, Value>) -> bool {
        let values: Vec<Option<FieldValue>> = self
            .form
            .fields
            .iter()
            .map(|field| field_value_of(&field.kind, content.get(&field.key)))
            .collect();
        self.form.content(&values).is_ok_and(|checked| &checked == content)
    }
}

/// A content value read back as what the person would have typed.
fn field_value_of(kind: &FieldKind, value: Option<&Value>) -> Option<FieldValue> {
    let value = value?;
    Some(match kind {
        FieldKind::Text { .. } | FieldKind::Choice { .. } => {
            FieldValue::Text(value.as_str()?.to_owned())
        }
        FieldKind::Choices { .. } => FieldValue::Choices(
            value.as_array()?.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        ),
        FieldKind::Boolean { .. } => FieldValue::Boolean(value.as_bool()?),
        FieldKind::Number { .. } => match value {
            Value::Number(number) => FieldValue::Number(number.to_string()),
            _ => return None,
        },
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::permission::FORM_TOOL;

    fn deploy() -> FormReview {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
            "email": {"type": "string", "format": "email"},
            "region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "USA"],
                       "default": "eu"},
            "confirm": {"type": "boolean", "default": false},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1}},
            "required": ["name", "replicas"]});
        let request = PermissionRequest {
            tool_name: FORM_TOOL.to_owned(),
            input: card_input("Deploy where?", &schema),
            ..PermissionRequest::default()
        };
        FormReview::of(&request).expect("a form")
    }

    fn set(review: &mut FormReview, key: &str, value: FieldValue) {
        let field = review.form.fields.iter().position(|f| f.key == key).expect("the field");
        assert_eq!(review.apply(FormAction::Set { field, value: Some(value) }), None);
    }

    fn problem<'a>(review: &'a FormReview, key: &str) -> Option<&'a str> {
        let field = review.form.fields.iter().position(|f| f.key == key).expect("the field");
        review.problems[field].as_deref()
    }

    #[test]
    fn a_send_with_a_number_out_of_range_sends_nothing_and_says_so_by_the_field() {
        let mut review = deploy();
        set(&mut review, "name", FieldValue::Text("web".into()));
        set(&mut review, "replicas", FieldValue::Number("12".into()));
        assert_eq!(review.apply(FormAction::Send), None);
        assert_eq!(problem(&review, "replicas"), Some("at most 9"));
        assert_eq!(problem(&review, "name"), None);
        // Corrected: the message goes as the field is fixed, and the Send goes through.
        set(&mut review, "replicas", FieldValue::Number("3".into()));
        assert_eq!(problem(&review, "replicas"), None);
        let sent = review.apply(FormAction::Send).expect("sent");
        assert_eq!(
            sent.decision(),
            PermissionDecision::Fill {
                content: json!({"name": "web", "region": "eu", "confirm": false, "replicas": 3})
                    .as_object()
                    .cloned()
                    .expect("an object")
            }
        );
    }

    #[test]
    fn every_rule_has_its_message_and_required_fields_are_named() {
        let mut review = deploy();
        set(&mut review, "email", FieldValue::Text("not an address".into()));
        set(&mut review, "ratio", FieldValue::Number("1.5".into()));
        assert_eq!(review.apply(FormAction::Send), None);
        assert_eq!(problem(&review, "name"), Some("required"));
        assert_eq!(problem(&review, "replicas"), Some("required"));
        assert_eq!(problem(&review, "email"), Some("not a valid email"));
        assert_eq!(problem(&review, "ratio"), Some("at most 1"));
        set(&mut review, "name", FieldValue::Text("x".into()));
        set(&mut review, "replicas", FieldValue::Number("2.5".into()));
        assert_eq!(review.apply(FormAction::Send), None);
        assert_eq!(problem(&review, "name"), Some("at least 2 characters"));
        assert_eq!(problem(&review, "replicas"), Some("`2.5` is not a whole number"));
    }

    #[test]
    fn a_draft_kept_through_json_fills_the_same_form_asked_again_and_sends_nothing() {
        let mut review = deploy();
        set(&mut review, "name", FieldValue::Text("東京-web".into()));
        set(&mut review, "replicas", FieldValue::Number("4".into()));
        set(&mut review, "confirm", FieldValue::Boolean(true));
        let kept = serde_json::to_string(&review.draft()).expect("a draft serialises");
        let mut again = deploy();
        again.restore(serde_json::from_str(&kept).expect("and reads back"));
        assert_eq!(again.values, review.values);
        // Restored is not sent, nor checked: the person sends it (name is too long here).
        assert_eq!(again.problems, vec![None; again.form.fields.len()]);
        assert_eq!(again.apply(FormAction::Send), None);
        assert_eq!(problem(&again, "name"), Some("at most 5 characters"));
    }

    #[test]
    fn a_draft_s_value_goes_only_to_a_field_of_its_key_that_takes_its_kind() {
        let mut review = deploy();
        let defaults = review.values.clone();
        review.restore(FormDraft {
            values: vec![
                // A text where a number is asked, a yes/no where a text is: left out.
                ("replicas".into(), Some(FieldValue::Text("three".into()))),
                ("name".into(), Some(FieldValue::Boolean(true))),
                // A field the form no longer has: left out.
                ("zone".into(), Some(FieldValue::Text("b".into()))),
                // An emptied field stays empty (its default is not brought back).
                ("region".into(), None),
                ("ratio".into(), Some(FieldValue::Number("0.25".into()))),
            ],
        });
        let at = |key: &str| review.form.fields.iter().position(|f| f.key == key).expect("field");
        assert_eq!(review.values[at("replicas")], defaults[at("replicas")]);
        assert_eq!(review.values[at("name")], defaults[at("name")]);
        assert_eq!(review.values[at("region")], None);
        assert_eq!(review.values[at("ratio")], Some(FieldValue::Number("0.25".into())));
    }

    #[test]
    fn decline_and_stop_are_the_agent_s_decline_and_cancel() {
        let mut review = deploy();
        let declined = review.apply(FormAction::Decline).expect("ended").decision();
        assert!(matches!(declined, PermissionDecision::Deny { .. }));
        let stopped = review.apply(FormAction::Stop).expect("ended").decision();
        assert_eq!(stopped, PermissionDecision::HandBack);
    }

    #[test]
    fn content_decided_elsewhere_is_accepted_only_as_the_schema_allows() {
        let review = deploy();
        let good = json!({"name": "web", "replicas": 2});
        assert!(review.accepts(good.as_object().expect("object")));
        for bad in [
            json!({"name": "web"}),
            json!({"name": "web", "replicas": 12}),
            json!({"name": "web", "replicas": "2"}),
            json!({"name": "web", "replicas": 2, "extra": true}),
        ] {
            assert!(!review.accepts(bad.as_object().expect("object")), "{bad}");
        }
    }
}
