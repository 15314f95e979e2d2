//! Pre-selected answers (`--answers FILE`): a JSON object that fills the form for the user to
//! confirm, or answers without a window with `--submit`. Never a default; automation opts in.
//!
//! Keys are question texts or headers; a value is a label, a list of labels (multi-select), or
//! `{"choose": label | [labels], "other": text, "notes": text}`. A key or label that matches
//! nothing is an error that names it, never a silent skip.

use serde_json::{Map, Value};

use super::answer::{Draft, Pick};
use super::json_type_name;
use super::question::{Ask, Question};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    #[error("the answers file must be a JSON object keyed by question text or header, found {0}")]
    NotObject(&'static str),
    #[error("the answers file names {key:?}, which is neither a question text nor a header here")]
    UnknownQuestion { key: String },
    #[error(
        "the answers file names {key:?}, which is the header of more than one question; use the question text"
    )]
    AmbiguousHeader { key: String },
    #[error("the answers file answers question {question} twice (by text and by header)", question = .question + 1)]
    Repeated { question: usize },
    #[error("{key:?}: {label:?} is not one of its options ({options})")]
    UnknownLabel { key: String, label: String, options: String },
    #[error("{key:?} is single-select, but the answers file chooses {count} options")]
    SeveralOnSingle { key: String, count: usize },
    #[error("{key:?}: {what} must be {expected}, found {found}")]
    WrongType { key: String, what: &'static str, expected: &'static str, found: &'static str },
    #[error("{key:?}: unknown field {field:?} (expected choose, other, notes)")]
    UnknownField { key: String, field: String },
}

/// Turns an answers file into one draft per question (untouched where the file says nothing).
pub fn drafts_from_preset(ask: &Ask, preset: &Value) -> Result<Vec<Draft>, PresetError> {
    let Some(entries) = preset.as_object() else {
        return Err(PresetError::NotObject(json_type_name(preset)));
    };
    let mut drafts = vec![Draft::default(); ask.questions().len()];
    let mut answered = vec![false; ask.questions().len()];
    for (key, value) in entries {
        let index = find_question(ask, key)?;
        let (Some(question), Some(draft), Some(seen)) =
            (ask.questions().get(index), drafts.get_mut(index), answered.get_mut(index))
        else {
            return Err(PresetError::UnknownQuestion { key: key.to_owned() });
        };
        if std::mem::replace(seen, true) {
            return Err(PresetError::Repeated { question: index });
        }
        fill(question, key, value, draft)?;
    }
    Ok(drafts)
}

fn find_question(ask: &Ask, key: &str) -> Result<usize, PresetError> {
    if let Some(index) = ask.questions().iter().position(|q| q.text() == key) {
        return Ok(index);
    }
    let mut by_header = ask.questions().iter().enumerate().filter(|(_, q)| q.header() == key);
    match (by_header.next(), by_header.next()) {
        (Some((index, _)), None) => Ok(index),
        (Some(_), Some(_)) => Err(PresetError::AmbiguousHeader { key: key.to_owned() }),
        (None, _) => Err(PresetError::UnknownQuestion { key: key.to_owned() }),
    }
}

fn fill(
    question: &Question,
    key: &str,
    value: &Value,
    draft: &mut Draft,
) -> Result<(), PresetError> {
    let wrong = |what, expected, found: &Value| PresetError::WrongType {
        key: key.to_owned(),
        what,
        expected,
        found: json_type_name(found),
    };
    let (choose, other, notes) = match value {
        Value::Object(fields) => split_fields(key, fields)?,
        choose => (Some(choose), None, None),
    };
    if let Some(choose) = choose {
        let labels: Vec<&str> = match choose {
            Value::String(label) => vec![label.as_str()],
            Value::Array(items) => items
                .iter()
                .map(|item| item.as_str().ok_or_else(|| wrong("each label", "a string", item)))
                .collect::<Result<_, _>>()?,
            other => return Err(wrong("the choice", "a label or a list of labels", other)),
        };
        if !question.multi_select() && labels.len() > 1 {
            return Err(PresetError::SeveralOnSingle { key: key.to_owned(), count: labels.len() });
        }
        for label in labels {
            let index = question.option_index(label).ok_or_else(|| PresetError::UnknownLabel {
                key: key.to_owned(),
                label: label.to_owned(),
                options: question
                    .options()
                    .iter()
                    .map(|c| format!("{:?}", c.label()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            if !draft.is_chosen(Pick::Option(index)) {
                draft.pick(question, Pick::Option(index));
            }
        }
    }
    if let Some(other) = other {
        let text = other.as_str().ok_or_else(|| wrong("other", "a string", other))?;
        draft.set_other_text(question, text.to_owned());
        if !draft.is_chosen(Pick::Other) {
            draft.pick(question, Pick::Other);
        }
    }
    if let Some(notes) = notes {
        let text = notes.as_str().ok_or_else(|| wrong("notes", "a string", notes))?;
        draft.set_notes(text.to_owned());
    }
    Ok(())
}

type Fields<'a> = (Option<&'a Value>, Option<&'a Value>, Option<&'a Value>);

fn split_fields<'a>(key: &str, fields: &'a Map<String, Value>) -> Result<Fields<'a>, PresetError> {
    if let Some(unknown) =
        fields.keys().find(|k| !matches!(k.as_str(), "choose" | "other" | "notes"))
    {
        return Err(PresetError::UnknownField { key: key.to_owned(), field: unknown.clone() });
    }
    Ok((fields.get("choose"), fields.get("other"), fields.get("notes")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{build_answers, validate};

    fn ask() -> Ask {
        validate(&json!({"questions": [
            {"question": "Which layout?", "header": "Layout", "options": [
                {"label": "Sidebar", "description": ""}, {"label": "Tabs", "description": ""}]},
            {"question": "Which features?", "header": "Features", "multiSelect": true, "options": [
                {"label": "Dark mode", "description": ""}, {"label": "Search", "description": ""},
                {"label": "Export", "description": ""}]},
            {"question": "Which DB?", "header": "DB", "options": [
                {"label": "PostgreSQL", "description": ""}, {"label": "SQLite", "description": ""}]},
        ]}))
        .expect("valid")
        .ask
    }

    fn answers(preset: Value) -> Value {
        let ask = ask();
        let drafts = drafts_from_preset(&ask, &preset).expect("preset applies");
        let answers = build_answers(&ask, &drafts).expect("within limits");
        json!({"answers": answers.answers_json(), "annotations": answers.annotations_json()})
    }

    #[test]
    fn keys_by_text_or_header_and_every_value_form() {
        assert_eq!(
            answers(json!({
                "Layout": "Tabs",
                "Which features?": ["Export", "Dark mode"],
                "DB": {"other": "MySQL", "notes": "managed, please"},
            })),
            json!({"answers": {"Which layout?": "Tabs", "Which features?": "Dark mode, Export",
                               "Which DB?": "MySQL"},
                   "annotations": {"Which DB?": {"notes": "managed, please"}}})
        );
        assert_eq!(
            answers(json!({"Features": {"choose": ["Search"], "other": "Sync"}})),
            json!({"answers": {"Which features?": "Search, Sync"}, "annotations": {}})
        );
    }

    #[test]
    fn names_what_matches_nothing() {
        let ask = ask();
        let error = |preset| drafts_from_preset(&ask, &preset).expect_err("refused").to_string();
        assert_eq!(
            error(json!({"Colour": "Red"})),
            "the answers file names \"Colour\", which is neither a question text nor a header here"
        );
        assert_eq!(
            error(json!({"Layout": "Grid"})),
            "\"Layout\": \"Grid\" is not one of its options (\"Sidebar\", \"Tabs\")"
        );
        assert_eq!(
            error(json!({"Layout": ["Sidebar", "Tabs"]})),
            "\"Layout\" is single-select, but the answers file chooses 2 options"
        );
        assert_eq!(
            error(json!({"Layout": "Tabs", "Which layout?": "Tabs"})),
            "the answers file answers question 1 twice (by text and by header)"
        );
        assert_eq!(
            error(json!({"Layout": {"pick": "Tabs"}})),
            "\"Layout\": unknown field \"pick\" (expected choose, other, notes)"
        );
        assert_eq!(
            error(json!(["Tabs"])),
            "the answers file must be a JSON object keyed by question text or header, found an array"
        );
    }
}
