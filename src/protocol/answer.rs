//! What the user picked → the `answers` and `annotations` the CLI expects (protocol.md §5.3).
//!
//! Single-select: the option label exactly as sent. Multi-select: the chosen labels in option
//! order joined by `", "`, an item that itself contains `", "` or `"` written as a JSON string (the
//! CLI's own join), with the Other text as one more item. As Claude Code's own terminal dialog does
//! (protocol.md §15), `annotations` is always sent, holding the chosen option's preview whenever a
//! previewed single-select option is picked, then any note. Unanswered questions are left out. The
//! strict-host size limits are enforced here, so the user is told before sending rather than the
//! answer being cut.

use serde_json::{Map, Value};

use super::js_length;
use super::question::{Ask, Question};

// The size limits (and their error) live with every other limit in `limits` (issue 9).
pub use super::limits::{LimitError, MAX_ANSWER_LENGTH, MAX_NOTES_LENGTH, MAX_TOTAL_LENGTH};

/// One thing the user can pick in a question: an option (by index) or "Other".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Option(usize),
    Other,
}

/// The two boxes a question has for typing: the Other answer and the note to the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextField {
    Other,
    Notes,
}

/// The user's work on one question, kept exactly as typed, whether or not it is answered yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Draft {
    /// Chosen option indices, ascending. At most one on a single-select question.
    chosen: Vec<usize>,
    other_selected: bool,
    other_text: String,
    notes: String,
    touched: bool,
}

impl Draft {
    /// Picks an option or Other: exclusive on a single-select question, a toggle on multi-select.
    /// An index past the last option is ignored.
    pub fn pick(&mut self, question: &Question, pick: Pick) {
        self.touched = true;
        match (pick, question.multi_select()) {
            (Pick::Option(index), _) if index >= question.options().len() => {}
            (Pick::Option(index), false) => {
                self.chosen = vec![index];
                self.other_selected = false;
            }
            (Pick::Option(index), true) => match self.chosen.binary_search(&index) {
                Ok(at) => {
                    self.chosen.remove(at);
                }
                Err(at) => self.chosen.insert(at, index),
            },
            (Pick::Other, false) => {
                self.chosen.clear();
                self.other_selected = true;
            }
            (Pick::Other, true) => self.other_selected = !self.other_selected,
        }
    }

    /// Replaces the Other text. Typing into Other selects it; emptying it keeps the selection, so
    /// the Review step can point out an Other that was chosen but left blank.
    pub fn set_other_text(&mut self, question: &Question, text: String) {
        self.touched = true;
        if !text.trim().is_empty() && !self.other_selected {
            if question.multi_select() {
                self.other_selected = true;
            } else {
                self.pick(question, Pick::Other);
            }
        }
        self.other_text = text;
    }

    /// A draft as the store saved it (issue 11: typing that survives a crash). The indices are
    /// kept as saved, sorted and without repeats; [`Draft::fitted`] drops those a question
    /// does not have.
    pub fn restored(
        mut chosen: Vec<usize>,
        other_selected: bool,
        other_text: String,
        notes: String,
        touched: bool,
    ) -> Draft {
        chosen.sort_unstable();
        chosen.dedup();
        Draft { chosen, other_selected, other_text, notes, touched }
    }

    /// The same draft with only what `question` can hold: options past its last are dropped,
    /// and a single-select question keeps one choice (Other, when Other was chosen).
    pub fn fitted(mut self, question: &Question) -> Draft {
        self.chosen.retain(|&index| index < question.options().len());
        if !question.multi_select() {
            match self.other_selected {
                true => self.chosen.clear(),
                false => self.chosen.truncate(1),
            }
        }
        self
    }

    pub fn set_notes(&mut self, notes: String) {
        self.touched = true;
        self.notes = notes;
    }

    /// Clears the choice (options and Other) but keeps the typed texts.
    pub fn clear_choice(&mut self) {
        self.touched = true;
        self.chosen.clear();
        self.other_selected = false;
    }

    /// The same choice with one typed text left out (the user was still typing it). An Other
    /// left out stays selected, so it counts as blank rather than turning into another answer.
    pub fn without_text(&self, field: TextField) -> Draft {
        let mut draft = self.clone();
        match field {
            TextField::Other => draft.other_text.clear(),
            TextField::Notes => draft.notes.clear(),
        }
        draft
    }

    /// The same choice without any typed text.
    pub fn choice_only(&self) -> Draft {
        self.without_text(TextField::Other).without_text(TextField::Notes)
    }

    /// The typed text of one box.
    pub fn text(&self, field: TextField) -> &str {
        match field {
            TextField::Other => &self.other_text,
            TextField::Notes => &self.notes,
        }
    }

    pub fn is_chosen(&self, pick: Pick) -> bool {
        match pick {
            Pick::Option(index) => self.chosen.contains(&index),
            Pick::Other => self.other_selected,
        }
    }

    pub fn chosen(&self) -> &[usize] {
        &self.chosen
    }

    pub fn other_text(&self) -> &str {
        &self.other_text
    }

    pub fn notes(&self) -> &str {
        &self.notes
    }

    /// True once the user did anything to this question.
    pub fn is_touched(&self) -> bool {
        self.touched
    }

    /// The Other text that counts as an answer: selected and not blank.
    fn other_answer(&self) -> Option<&str> {
        let text = self.other_text.trim();
        (self.other_selected && !text.is_empty()).then_some(text)
    }

    fn notes_answer(&self) -> Option<&str> {
        let notes = self.notes.trim();
        (!notes.is_empty()).then_some(notes)
    }

    /// True when Other is selected but nothing is typed in it (it then does not count).
    pub fn other_is_blank(&self) -> bool {
        self.other_selected && self.other_answer().is_none()
    }

    /// The answer string for this question, or `None` when it is not answered.
    pub fn answer(&self, question: &Question) -> Option<String> {
        let labels = self
            .chosen
            .iter()
            .filter_map(|&index| question.options().get(index))
            .map(|choice| choice.label());
        let items: Vec<&str> = labels.chain(self.other_answer()).collect();
        match (question.multi_select(), items.as_slice()) {
            (_, []) => None,
            (false, [single, ..]) => Some((*single).to_owned()),
            (true, items) => Some(join_labels(items)),
        }
    }
}

/// The CLI's multi-select join: `", "` between items, an item containing `", "` or `"` written as
/// a JSON string so the join can be split again.
pub fn join_labels(items: &[&str]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|item| match item.contains(", ") || item.contains('"') {
            true => Value::String((*item).to_owned()).to_string(),
            false => (*item).to_owned(),
        })
        .collect();
    quoted.join(", ")
}

/// What the reply carries for one question that has an answer, notes, or both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionAnswer {
    /// Position in `questions` (0-based).
    pub index: usize,
    pub question: String,
    /// The `answers` value; `None` for a question with notes only.
    pub answer: Option<String>,
    /// Option indices chosen (ascending), for envelopes that answer by number.
    pub picked: Vec<usize>,
    /// The Other text, when it is part of the answer.
    pub other: Option<String>,
    pub notes: Option<String>,
    /// The chosen option's preview (single-select only), so the model knows which mockup was
    /// picked: `"Q"="Sidebar" selected preview:\n…`.
    pub preview: Option<String>,
    /// True when the answer is made only of option labels (no Other text).
    pub labels_only: bool,
    /// `annotations[q].unanswered`: how the question went unanswered (see [`Answers::mark_skipped`]).
    pub unanswered: Option<&'static str>,
}

/// The answer text of a question the user skipped, when the session can say so.
pub const SKIPPED_TEXT: &str = "The user skipped this question.";

/// A complete answer: the input to echo and, per question, what the user gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Answers {
    input: Map<String, Value>,
    entries: Vec<QuestionAnswer>,
}

impl Answers {
    /// Questions with an answer or notes, in question order. Unanswered ones are absent.
    pub fn entries(&self) -> &[QuestionAnswer] {
        &self.entries
    }

    /// True when nothing was answered and no note was written.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Says "skipped" for every question left unanswered (no answer, no note): the answer text
    /// the model reads, and `annotations[q].unanswered`. Only for a session that advertises
    /// `ask_user_question_unanswered_v1`: an older CLI on a strict host refuses the whole answer.
    pub fn mark_skipped(&mut self, ask: &Ask) {
        for (index, question) in ask.questions().iter().enumerate() {
            if self.entries.iter().any(|entry| entry.index == index) {
                continue;
            }
            let at = self.entries.iter().position(|entry| entry.index > index);
            let skipped = QuestionAnswer {
                index,
                question: question.text().to_owned(),
                answer: Some(SKIPPED_TEXT.to_owned()),
                picked: Vec::new(),
                other: None,
                notes: None,
                preview: None,
                labels_only: false,
                unanswered: Some("skipped"),
            };
            self.entries.insert(at.unwrap_or(self.entries.len()), skipped);
        }
    }

    /// `{question text: answer}`, in question order.
    pub fn answers_json(&self) -> Map<String, Value> {
        self.entries
            .iter()
            .filter_map(|entry| {
                Some((entry.question.clone(), Value::String(entry.answer.clone()?)))
            })
            .collect()
    }

    /// `{question text: {preview?, notes?, unanswered?}}` for questions that have any.
    pub fn annotations_json(&self) -> Map<String, Value> {
        self.entries
            .iter()
            .filter_map(|entry| {
                // The dialog's key order: preview, then notes.
                let mut annotation = Map::new();
                if let Some(preview) = &entry.preview {
                    annotation.insert("preview".into(), Value::String(preview.clone()));
                }
                if let Some(notes) = &entry.notes {
                    annotation.insert("notes".into(), Value::String(notes.clone()));
                }
                if let Some(how) = entry.unanswered {
                    annotation.insert("unanswered".into(), Value::String(how.to_owned()));
                }
                (!annotation.is_empty())
                    .then(|| (entry.question.clone(), Value::Object(annotation)))
            })
            .collect()
    }

    /// The tool input echoed unchanged plus `answers` and `annotations` (possibly `{}`, as the
    /// terminal dialog sends it): the `updatedInput` of an allow, and the reply of the raw and
    /// tool_use envelopes.
    pub fn updated_input(&self) -> Value {
        let mut input = self.input.clone();
        input.insert("answers".into(), Value::Object(self.answers_json()));
        input.insert("annotations".into(), Value::Object(self.annotations_json()));
        Value::Object(input)
    }
}

/// Builds the answer from one draft per question (missing drafts count as untouched).
pub fn build_answers(ask: &Ask, drafts: &[Draft]) -> Result<Answers, LimitError> {
    let empty = Draft::default();
    let mut entries = Vec::new();
    let (mut typed, mut previews) = (0, 0);
    for (index, question) in ask.questions().iter().enumerate() {
        let draft = drafts.get(index).unwrap_or(&empty);
        let answer = draft.answer(question);
        let notes = draft.notes_answer().map(str::to_owned);
        if answer.is_none() && notes.is_none() {
            continue;
        }
        let other = draft.other_answer().map(str::to_owned);
        // The terminal dialog echoes the picked option's preview whenever a previewed
        // single-select option is the answer, note or not (protocol.md §15): the model then reads
        // which mockup was chosen, not only its label.
        let preview = match (question.multi_select(), &other, draft.chosen.as_slice()) {
            (false, None, [chosen]) => {
                question.options().get(*chosen).and_then(|c| c.preview.clone())
            }
            _ => None,
        };
        let answer_length = answer.as_deref().map_or(0, js_length);
        if answer_length > MAX_ANSWER_LENGTH {
            return Err(LimitError::AnswerTooLong { question: index, length: answer_length });
        }
        let notes_length = notes.as_deref().map_or(0, js_length);
        if notes_length > MAX_NOTES_LENGTH {
            return Err(LimitError::NotesTooLong { question: index, length: notes_length });
        }
        typed += answer_length + notes_length;
        previews += preview.as_deref().map_or(0, js_length);
        entries.push(QuestionAnswer {
            index,
            question: question.text().to_owned(),
            labels_only: answer.is_some() && other.is_none(),
            answer,
            picked: draft.chosen.clone(),
            other,
            notes,
            preview,
            unanswered: None,
        });
    }
    if typed > MAX_TOTAL_LENGTH {
        return Err(LimitError::TooLarge { length: typed });
    }
    if typed + previews > MAX_TOTAL_LENGTH {
        // The previews are the agent's own text, echoed only as context for a note: drop them
        // rather than refuse what the user wrote.
        entries.iter_mut().for_each(|entry| entry.preview = None);
    }
    Ok(Answers { input: ask.input().clone(), entries })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::validate;

    fn ask(input: Value) -> Ask {
        validate(&input).expect("valid input").ask
    }

    fn colours() -> Ask {
        ask(
            json!({"questions": [{"question": "Which colours?", "header": "Colours", "multiSelect": true,
            "options": [{"label": "Red, green", "description": ""}, {"label": "Say \"hi\"", "description": ""},
                        {"label": "Plain", "description": ""}]}]}),
        )
    }

    #[test]
    fn multi_select_joins_in_option_order_and_quotes_like_the_cli() {
        let ask = colours();
        let question = &ask.questions()[0];
        let mut draft = Draft::default();
        for index in [2, 0, 1] {
            draft.pick(question, Pick::Option(index));
        }
        assert_eq!(draft.answer(question).as_deref(), Some(r#""Red, green", "Say \"hi\"", Plain"#));
        draft.pick(question, Pick::Option(1));
        draft.set_other_text(question, "  Teal  ".into());
        assert_eq!(draft.answer(question).as_deref(), Some(r#""Red, green", Plain, Teal"#));
    }

    #[test]
    fn single_select_other_replaces_the_option_and_keeps_both_texts() {
        let ask = ask(json!({"questions": [{"question": "Which DB?", "header": "DB",
            "options": [{"label": "PostgreSQL (Recommended)", "description": ""}, {"label": "SQLite", "description": ""}]}]}));
        let question = &ask.questions()[0];
        let mut draft = Draft::default();
        draft.pick(question, Pick::Option(0));
        assert_eq!(draft.answer(question).as_deref(), Some("PostgreSQL (Recommended)"));
        draft.set_other_text(question, "MySQL".into());
        assert!(draft.is_chosen(Pick::Other) && !draft.is_chosen(Pick::Option(0)));
        assert_eq!(draft.answer(question).as_deref(), Some("MySQL"));
        draft.pick(question, Pick::Option(1));
        assert_eq!(draft.answer(question).as_deref(), Some("SQLite"));
        assert_eq!(draft.other_text(), "MySQL", "switching away from Other keeps what was typed");
    }

    #[test]
    fn blank_other_is_not_an_answer() {
        let ask = colours();
        let question = &ask.questions()[0];
        let mut draft = Draft::default();
        draft.pick(question, Pick::Other);
        assert!(draft.other_is_blank());
        assert_eq!(draft.answer(question), None);
    }

    #[test]
    fn skipped_questions_are_marked_only_when_asked_to() {
        let ask = ask(json!({"questions": [
            {"question": "A?", "header": "A", "options": [{"label": "x"}, {"label": "y"}]},
            {"question": "B?", "header": "B", "options": [{"label": "x"}, {"label": "y"}]}]}));
        let mut second = Draft::default();
        second.pick(&ask.questions()[1], Pick::Option(1));
        let mut answers = build_answers(&ask, &[Draft::default(), second]).expect("fits");
        assert_eq!(Value::Object(answers.answers_json()), json!({"B?": "y"}));
        answers.mark_skipped(&ask);
        assert_eq!(
            Value::Object(answers.answers_json()),
            json!({"A?": "The user skipped this question.", "B?": "y"})
        );
        assert_eq!(
            Value::Object(answers.annotations_json()),
            json!({"A?": {"unanswered": "skipped"}})
        );
    }

    #[test]
    fn limits_are_reported_not_truncated() {
        let ask = colours();
        let question = &ask.questions()[0];
        let mut draft = Draft::default();
        draft.set_notes("n".repeat(MAX_NOTES_LENGTH + 1));
        assert_eq!(
            build_answers(&ask, std::slice::from_ref(&draft)),
            Err(LimitError::NotesTooLong { question: 0, length: MAX_NOTES_LENGTH + 1 })
        );
        draft.set_notes(String::new());
        // 16 385 two-unit characters: JavaScript counts UTF-16 units, not chars.
        draft.set_other_text(question, "😀".repeat(16_385));
        assert_eq!(
            build_answers(&ask, &[draft]),
            Err(LimitError::AnswerTooLong { question: 0, length: 32_770 })
        );
    }

    #[test]
    fn an_oversized_echoed_preview_is_dropped_before_the_note_is_refused() {
        let big = "x".repeat(MAX_TOTAL_LENGTH);
        let ask = ask(json!({"questions": [{"question": "Which?", "header": "H", "options": [
            {"label": "A", "description": "", "preview": big}, {"label": "B", "description": ""}]}]}));
        let question = &ask.questions()[0];
        let mut draft = Draft::default();
        draft.pick(question, Pick::Option(0));
        draft.set_notes("narrower".into());
        let answers = build_answers(&ask, &[draft]).expect("the note fits on its own");
        assert_eq!(answers.entries()[0].preview, None);
        assert_eq!(answers.entries()[0].notes.as_deref(), Some("narrower"));
    }
}
