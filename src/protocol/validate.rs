//! Wire JSON → validated [`Ask`]: hard errors refuse the request, soft warnings show it anyway.
//!
//! Hard errors are the ones that make a correct answer impossible (nothing to ask, no label to
//! send back, two questions the answer map cannot tell apart). Everything the schema merely
//! discourages (long header, too many options, a preview on a multi-select question) is shown
//! with a visible warning: the human can still answer it, and the reply is still well-formed.
//! Every message names the question and option by number (from 1) and the field.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

use super::json_type_name;
use super::question::{Ask, Choice, Question};

/// The limits the tool schema states. Exceeding them is a soft warning.
pub const MAX_QUESTIONS: usize = 4;
pub const MIN_OPTIONS: usize = 2;
pub const MAX_OPTIONS: usize = 4;
pub const MAX_HEADER_CHARS: usize = 12;

/// Counts far above the schema's, past which a request is refused outright: no person answers a
/// hundred questions in one form, and checking each of 200 000 options only to refuse them is
/// wasted work (issue 9).
pub const QUESTION_LIMIT: usize = 100;
pub const OPTION_LIMIT: usize = 100;

/// Keys of the tool input that only a reply may carry. A request that already has them must not
/// have them echoed back as if the user had said them (the CLI reads `response` as "The user
/// responded: …"), so they are dropped from the input kept for the reply.
pub const REPLY_KEYS: [&str; 3] = ["answers", "annotations", "response"];

/// A request that passed validation, with what is off about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Validated {
    pub ask: Ask,
    pub warnings: Vec<Warning>,
}

/// Where a problem is: question and option numbers are 0-based here and printed from 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub question: Option<usize>,
    pub option: Option<usize>,
}

impl Place {
    const TOP: Place = Place { question: None, option: None };

    fn question(index: usize) -> Self {
        Place { question: Some(index), option: None }
    }

    fn option(question: usize, option: usize) -> Self {
        Place { question: Some(question), option: Some(option) }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.question, self.option) {
            (Some(q), Some(o)) => write!(f, "question {}, option {}: ", q + 1, o + 1),
            (Some(q), None) => write!(f, "question {}: ", q + 1),
            _ => Ok(()),
        }
    }
}

/// One reason to refuse a request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{place}{kind}")]
pub struct InputError {
    pub place: Place,
    pub kind: ErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    #[error("the tool input must be a JSON object, found {found}")]
    InputNotObject { found: &'static str },
    #[error("the tool input has no `questions` array")]
    MissingQuestions,
    #[error("`questions` must be an array, found {found}")]
    QuestionsNotArray { found: &'static str },
    #[error("`questions` is empty: there is nothing to ask")]
    NoQuestions,
    #[error("must be an object, found {found}")]
    NotObject { found: &'static str },
    #[error("`{field}` is missing")]
    Missing { field: &'static str },
    #[error("`{field}` must be {expected}, found {found}")]
    WrongType { field: &'static str, expected: &'static str, found: &'static str },
    #[error("`{field}` is empty")]
    Empty { field: &'static str },
    #[error("`options` is empty: there is nothing to choose from")]
    NoOptions,
    #[error(
        "the `question` text repeats question {first}; answers are keyed by it, so texts must be unique"
    )]
    DuplicateQuestion { first: usize },
    #[error(
        "the `label` {label:?} repeats option {first}; labels must be unique within a question"
    )]
    DuplicateLabel { label: String, first: usize },
    #[error(
        "the `label` {label:?} looks the same as option {first}'s; labels must look different \
         within a question (invisible characters, spacing, compatibility forms and look-alike \
         letters of other scripts do not make them differ)"
    )]
    LookalikeLabel { label: String, first: usize },
    #[error("{count} questions; askpane shows at most {QUESTION_LIMIT}")]
    QuestionLimit { count: usize },
    #[error("{count} options; askpane shows at most {OPTION_LIMIT}")]
    OptionLimit { count: usize },
}

/// Every reason a request was refused, in input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid(pub Vec<InputError>);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

/// Something off about a request that is still shown.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{place}{kind}")]
pub struct Warning {
    pub place: Place,
    pub kind: WarningKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WarningKind {
    #[error("{count} questions; the tool allows at most {MAX_QUESTIONS}")]
    TooManyQuestions { count: usize },
    #[error("{count} options; the tool allows at most {MAX_OPTIONS}")]
    TooManyOptions { count: usize },
    #[error("only {count} option; the tool asks for at least {MIN_OPTIONS}")]
    TooFewOptions { count: usize },
    #[error("the header {header:?} is {chars} characters; the tool allows {MAX_HEADER_CHARS}")]
    HeaderTooLong { header: String, chars: usize },
    #[error("no `header`")]
    MissingHeader,
    #[error("no `description`")]
    MissingDescription,
    #[error("a preview on a multi-select question; previews are meant for single-select questions")]
    PreviewOnMultiSelect,
    #[error(
        "the request already carries {}; askpane left {} out: only the user's own answers are sent",
        quoted_list(keys), if keys.len() == 1 { "it" } else { "them" }
    )]
    ReplyKeysDropped { keys: Vec<&'static str> },
}

/// `` `a` `` / `` `a` and `b` `` / `` `a`, `b` and `c` ``.
fn quoted_list(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Validates an AskUserQuestion tool input (the object holding `questions`).
pub fn validate(input: &Value) -> Result<Validated, Invalid> {
    let Some(object) = input.as_object() else {
        return Err(Invalid(vec![InputError {
            place: Place::TOP,
            kind: ErrorKind::InputNotObject { found: json_type_name(input) },
        }]));
    };
    let mut checker = Checker::default();
    let questions = checker.questions(object);
    // Report in input order: question by question, a question's own fields before its options.
    checker.errors.sort_by_key(|error| error.place);
    checker.warnings.sort_by_key(|warning| warning.place);
    match (questions, checker.errors.is_empty()) {
        (Some(questions), true) => {
            let mut input = object.clone();
            let dropped: Vec<&'static str> =
                REPLY_KEYS.into_iter().filter(|key| input.shift_remove(*key).is_some()).collect();
            let mut warnings = checker.warnings;
            if !dropped.is_empty() {
                let warning = Warning {
                    place: Place::TOP,
                    kind: WarningKind::ReplyKeysDropped { keys: dropped },
                };
                warnings.insert(0, warning);
            }
            Ok(Validated { ask: Ask { questions, input }, warnings })
        }
        _ => Err(Invalid(checker.errors)),
    }
}

#[derive(Default)]
struct Checker {
    errors: Vec<InputError>,
    warnings: Vec<Warning>,
}

impl Checker {
    fn error(&mut self, place: Place, kind: ErrorKind) {
        self.errors.push(InputError { place, kind });
    }

    /// Records an error and gives up on the value being read.
    fn fail<T>(&mut self, place: Place, kind: ErrorKind) -> Option<T> {
        self.error(place, kind);
        None
    }

    fn warn(&mut self, place: Place, kind: WarningKind) {
        self.warnings.push(Warning { place, kind });
    }

    fn questions(&mut self, input: &Map<String, Value>) -> Option<Vec<Question>> {
        let list = match input.get("questions") {
            None => return self.fail(Place::TOP, ErrorKind::MissingQuestions),
            Some(Value::Array(list)) => list,
            Some(other) => {
                let found = json_type_name(other);
                return self.fail(Place::TOP, ErrorKind::QuestionsNotArray { found });
            }
        };
        if list.is_empty() {
            return self.fail(Place::TOP, ErrorKind::NoQuestions);
        }
        if list.len() > QUESTION_LIMIT {
            return self.fail(Place::TOP, ErrorKind::QuestionLimit { count: list.len() });
        }
        if list.len() > MAX_QUESTIONS {
            self.warn(Place::TOP, WarningKind::TooManyQuestions { count: list.len() });
        }
        // Each text's first question, so a repeat is found in one look-up (linear, not quadratic).
        let mut texts = HashMap::with_capacity(list.len());
        let questions: Vec<Option<Question>> = list
            .iter()
            .enumerate()
            .map(|(index, value)| self.question(index, value, &mut texts))
            .collect();
        questions.into_iter().collect()
    }

    /// Records a repeat of an earlier question's text, whatever else is wrong with either.
    fn check_unique_text<'a>(
        &mut self,
        index: usize,
        text: &'a str,
        texts: &mut HashMap<&'a str, usize>,
    ) {
        match texts.get(text) {
            Some(first) => self
                .error(Place::question(index), ErrorKind::DuplicateQuestion { first: first + 1 }),
            None => {
                texts.insert(text, index);
            }
        }
    }

    fn question<'a>(
        &mut self,
        index: usize,
        value: &'a Value,
        texts: &mut HashMap<&'a str, usize>,
    ) -> Option<Question> {
        let place = Place::question(index);
        let Some(object) = value.as_object() else {
            let found = json_type_name(value);
            return self.fail(place, ErrorKind::NotObject { found });
        };
        let text = self.required_text(place, object, "question");
        if let (Some(_), Some(Value::String(raw))) = (&text, object.get("question")) {
            self.check_unique_text(index, raw, texts);
        }
        let header = self.optional_string(place, object, "header");
        if header.is_none() && !object.contains_key("header") {
            self.warn(place, WarningKind::MissingHeader);
        }
        let header = header.unwrap_or_default();
        let header_chars = header.chars().count();
        if header_chars > MAX_HEADER_CHARS {
            let kind = WarningKind::HeaderTooLong { header: header.clone(), chars: header_chars };
            self.warn(place, kind);
        }
        let multi_select = match object.get("multiSelect") {
            None | Some(Value::Null) => Some(false),
            Some(Value::Bool(flag)) => Some(*flag),
            Some(other) => {
                let found = json_type_name(other);
                let kind =
                    ErrorKind::WrongType { field: "multiSelect", expected: "a boolean", found };
                self.error(place, kind);
                None
            }
        };
        let options = self.options(index, object, multi_select.unwrap_or(false));
        // `isSecret` (Codex): only a literal true masks the answer; anything else is ignored.
        let secret = object.get("isSecret") == Some(&Value::Bool(true));
        Some(Question {
            text: text?,
            header,
            options: options?,
            multi_select: multi_select?,
            secret,
        })
    }

    fn options(
        &mut self,
        question: usize,
        object: &Map<String, Value>,
        multi_select: bool,
    ) -> Option<Vec<Choice>> {
        let place = Place::question(question);
        let list = match object.get("options") {
            None => return self.fail(place, ErrorKind::Missing { field: "options" }),
            Some(Value::Array(list)) => list,
            Some(other) => {
                let found = json_type_name(other);
                let kind = ErrorKind::WrongType { field: "options", expected: "an array", found };
                return self.fail(place, kind);
            }
        };
        match list.len() {
            0 => return self.fail(place, ErrorKind::NoOptions),
            count if count > OPTION_LIMIT => {
                return self.fail(place, ErrorKind::OptionLimit { count });
            }
            count if count < MIN_OPTIONS => self.warn(place, WarningKind::TooFewOptions { count }),
            count if count > MAX_OPTIONS => self.warn(place, WarningKind::TooManyOptions { count }),
            _ => {}
        }
        // Each label's first option: repeats are found in one look-up each, and found even when
        // either option has another problem (every error is reported, always).
        // Labels that look the same to a person are the same label ([`text::lookalike_key`]:
        // "Yes", "Y\u{435}s" and "Yes\u{200B}" would be two identical-looking choices).
        let mut labels: HashMap<String, usize> = HashMap::with_capacity(list.len());
        let mut choices: Vec<Option<Choice>> = Vec::with_capacity(list.len());
        for (index, value) in list.iter().enumerate() {
            let place = Place::option(question, index);
            let choice = self.choice(place, value);
            let label = value.get("label").and_then(Value::as_str).filter(|l| !l.trim().is_empty());
            if let Some(label) = label {
                let key = super::text::lookalike_key(label);
                match labels.get(&key) {
                    Some(first) => {
                        let kind = {
                            let (label, first) = (label.to_owned(), first + 1);
                            let exact = list
                                .get(first - 1)
                                .and_then(|earlier| earlier.get("label"))
                                .and_then(Value::as_str)
                                .is_some_and(|earlier| earlier == label);
                            match exact {
                                true => ErrorKind::DuplicateLabel { label, first },
                                false => ErrorKind::LookalikeLabel { label, first },
                            }
                        };
                        self.error(place, kind);
                    }
                    None => {
                        labels.insert(key, index);
                    }
                }
            }
            choices.push(choice);
        }
        if multi_select && choices.iter().flatten().any(|choice| choice.preview.is_some()) {
            self.warn(place, WarningKind::PreviewOnMultiSelect);
        }
        choices.into_iter().collect()
    }

    fn choice(&mut self, place: Place, value: &Value) -> Option<Choice> {
        let Some(object) = value.as_object() else {
            let found = json_type_name(value);
            return self.fail(place, ErrorKind::NotObject { found });
        };
        let label = self.required_text(place, object, "label");
        let description = self.optional_string(place, object, "description");
        if !object.contains_key("description") {
            self.warn(place, WarningKind::MissingDescription);
        }
        // `preview` is the current name; builds before it called the field `markdown`.
        let preview = match object.contains_key("preview") {
            true => self.optional_string(place, object, "preview"),
            false => self.optional_string(place, object, "markdown"),
        };
        Some(Choice { label: label?, description: description.unwrap_or_default(), preview })
    }

    /// A string field that must be present and not blank.
    fn required_text(
        &mut self,
        place: Place,
        object: &Map<String, Value>,
        field: &'static str,
    ) -> Option<String> {
        match object.get(field) {
            None | Some(Value::Null) => self.fail(place, ErrorKind::Missing { field }),
            Some(Value::String(text)) if text.trim().is_empty() => {
                self.fail(place, ErrorKind::Empty { field })
            }
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                let found = json_type_name(other);
                let kind = ErrorKind::WrongType { field, expected: "a string", found };
                self.fail(place, kind)
            }
        }
    }

    /// A string field that may be absent (or null); any other type is an error.
    fn optional_string(
        &mut self,
        place: Place,
        object: &Map<String, Value>,
        field: &'static str,
    ) -> Option<String> {
        match object.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                let found = json_type_name(other);
                let kind = ErrorKind::WrongType { field, expected: "a string", found };
                self.fail(place, kind)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(input: Value) -> String {
        validate(&input).expect_err("input should be refused").to_string()
    }

    fn warnings(input: Value) -> Vec<String> {
        let validated = validate(&input).expect("input should be accepted");
        validated.warnings.iter().map(ToString::to_string).collect()
    }

    fn option(label: &str) -> Value {
        json!({"label": label, "description": "d"})
    }

    fn question(text: &str, options: Vec<Value>) -> Value {
        json!({"question": text, "header": "H", "options": options, "multiSelect": false})
    }

    #[test]
    fn refuses_input_without_questions() {
        assert_eq!(errors(json!({})), "the tool input has no `questions` array");
        assert_eq!(
            errors(json!({"questions": "x"})),
            "`questions` must be an array, found a string"
        );
        assert_eq!(
            errors(json!({"questions": []})),
            "`questions` is empty: there is nothing to ask"
        );
        assert_eq!(errors(json!([1])), "the tool input must be a JSON object, found an array");
    }

    #[test]
    fn names_the_question_option_and_field() {
        let input = json!({"questions": [
            question("Fine?", vec![option("A"), option("B")]),
            {"header": "No text", "options": [option("A"), option("B")]},
            {"question": "Bad label?", "options": [option("A"), {"label": 7, "description": ""}]},
            {"question": "No options?", "header": "x"},
            {"question": "Empty options?", "options": []},
        ]});
        assert_eq!(
            errors(input),
            "question 2: `question` is missing; \
             question 3, option 2: `label` must be a string, found a number; \
             question 4: `options` is missing; \
             question 5: `options` is empty: there is nothing to choose from"
        );
    }

    #[test]
    fn refuses_duplicate_question_texts_and_labels() {
        let input = json!({"questions": [
            question("Same?", vec![option("A"), option("B")]),
            question("Same?", vec![option("A"), option("A")]),
        ]});
        assert_eq!(
            errors(input),
            "question 2: the `question` text repeats question 1; answers are keyed by it, so texts \
             must be unique; question 2, option 2: the `label` \"A\" repeats option 1; labels must be \
             unique within a question"
        );
    }

    /// Issue 24 item 20: options that look the same are refused as exact repeats are.
    #[test]
    fn refuses_labels_that_only_look_different_to_a_machine() {
        for twin in ["Y\u{0435}s", "Yes\u{200B}", "Yes ", "Ｙｅｓ", "Y\u{0065}\u{0301}s"] {
            let first = if twin.contains('\u{0301}') { "Y\u{00E9}s" } else { "Yes" };
            let input =
                json!({"questions": [question("Ship?", vec![option(first), option(twin)])]});
            let errors = errors(input);
            assert!(
                errors.starts_with("question 1, option 2: the `label`")
                    && errors.contains("looks the same as option 1's"),
                "{twin:?}: {errors}"
            );
        }
        let fine = json!({"questions": [question("Ship?", vec![option("Yes"), option("yes!")])]});
        assert!(validate(&fine).is_ok());
    }

    #[test]
    fn reports_a_repeat_even_when_either_copy_has_another_error() {
        let input = json!({"questions": [
            question("Same?", vec![option("A"), option("B")]),
            {"question": "Same?", "header": "H"},
            question("Labels?", vec![option("A"), json!({"label": "A", "description": 7})]),
        ]});
        assert_eq!(
            errors(input),
            "question 2: the `question` text repeats question 1; answers are keyed by it, so texts \
             must be unique; question 2: `options` is missing; \
             question 3, option 2: `description` must be a string, found a number; \
             question 3, option 2: the `label` \"A\" repeats option 1; labels must be unique \
             within a question"
        );
    }

    #[test]
    fn refuses_counts_far_above_the_schema_without_checking_each_item() {
        let many_questions: Vec<Value> = (0..=QUESTION_LIMIT)
            .map(|n| question(&format!("Q{n}?"), vec![option("A"), option("B")]))
            .collect();
        assert_eq!(
            errors(json!({"questions": many_questions})),
            "101 questions; askpane shows at most 100"
        );
        // Broken items past the limit are not read one by one: the count alone refuses.
        let many_options: Vec<Value> = (0..200_000).map(|_| json!(null)).collect();
        assert_eq!(
            errors(json!({"questions": [question("Q?", many_options)]})),
            "question 1: 200000 options; askpane shows at most 100"
        );
        let at_the_limit: Vec<Value> =
            (0..OPTION_LIMIT).map(|n| option(&format!("O{n}"))).collect();
        assert_eq!(
            warnings(json!({"questions": [question("Q?", at_the_limit)]})),
            ["question 1: 100 options; the tool allows at most 4"]
        );
    }

    #[test]
    fn drops_answers_annotations_and_response_the_request_already_carries() {
        let input = json!({"questions": [question("Q?", vec![option("A"), option("B")])],
            "answers": {"Q?": "A"}, "metadata": {"source": "x"},
            "annotations": {"Q?": {"notes": "agent's"}}, "response": "agent's words"});
        let validated = validate(&input).expect("valid");
        assert_eq!(
            Value::Object(validated.ask.input().clone()),
            json!({"questions": input["questions"], "metadata": {"source": "x"}})
        );
        assert_eq!(
            warnings(input),
            ["the request already carries `answers`, `annotations` and `response`; askpane left \
              them out: only the user's own answers are sent"]
        );
        let one = json!({"questions": [question("Q?", vec![option("A"), option("B")])],
            "response": "hi"});
        assert_eq!(
            warnings(one),
            ["the request already carries `response`; askpane left it out: only the user's own \
              answers are sent"]
        );
    }

    #[test]
    fn refuses_blank_text_and_wrong_types_of_known_fields() {
        let input = json!({"questions": [
            {"question": "  ", "header": 3, "options": [option("A"), {"label": ""}], "multiSelect": "yes"},
        ]});
        assert_eq!(
            errors(input),
            "question 1: `question` is empty; question 1: `header` must be a string, found a number; \
             question 1: `multiSelect` must be a boolean, found a string; \
             question 1, option 2: `label` is empty"
        );
    }

    #[test]
    fn shows_soft_problems_as_warnings() {
        let five = (1..=5).map(|n| option(&format!("O{n}"))).collect();
        let input = json!({"questions": [
            {"question": "Q1?", "header": "A very long header", "options": [option("A"), option("B")]},
            question("Q2?", five),
            question("Q3?", vec![option("Only")]),
            {"question": "Q4?", "header": "Multi", "multiSelect": true, "options": [
                {"label": "A", "description": "", "preview": "x"}, option("B")]},
            {"question": "Q5?", "options": [{"label": "A"}, option("B")]},
        ]});
        assert_eq!(
            warnings(input),
            vec![
                "5 questions; the tool allows at most 4",
                "question 1: the header \"A very long header\" is 18 characters; the tool allows 12",
                "question 2: 5 options; the tool allows at most 4",
                "question 3: only 1 option; the tool asks for at least 2",
                "question 4: a preview on a multi-select question; previews are meant for single-select questions",
                "question 5: no `header`",
                "question 5, option 1: no `description`",
            ]
        );
    }

    #[test]
    fn accepts_legacy_markdown_and_tolerates_unknown_keys() {
        let input = json!({"questions": [{
            "question": "Which?", "header": "H", "kind": "choice", "multiSelect": false,
            "options": [{"label": "A", "description": "a", "markdown": "# A", "id": 1},
                        {"label": "B", "description": "b", "preview": "# B", "markdown": "old"}],
        }], "metadata": {"source": "remember"}});
        let validated = validate(&input).expect("valid");
        assert!(validated.warnings.is_empty());
        let question = &validated.ask.questions()[0];
        assert_eq!(question.options()[0].preview(), Some("# A"));
        assert_eq!(question.options()[1].preview(), Some("# B"));
        assert_eq!(Value::Object(validated.ask.input().clone()), input);
    }

    #[test]
    fn counts_header_length_in_characters_not_bytes() {
        let input = json!({"questions": [{"question": "どのデータベースを使いますか？",
            "header": "データベース", "options": [option("A"), option("B")]}]});
        assert!(warnings(input).is_empty());
    }
}
