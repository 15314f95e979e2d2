//! AskUserQuestion input as validated types: questions, their options, and the original JSON to echo.
//!
//! Values of these types only come out of [`crate::protocol::validate`], so their invariants hold:
//! 1 or more questions with unique non-empty texts, each with 1 or more options whose labels are
//! unique and non-empty. Code that holds them never checks again.

use serde_json::{Map, Value, json};

/// The word an agent puts in parentheses after the label of the option it recommends, in the
/// languages agents answer in (compared without case). The tool description asks for
/// "(Recommended)"; agents writing in other languages translate it, often with full-width
/// parentheses: "（推荐）".
const RECOMMENDED_WORDS: [&str; 22] = [
    "recommended",
    "推奨",
    "おすすめ",
    "推荐",
    "推薦",
    "建议",
    "권장",
    "추천",
    "แนะนำ",
    "recomendado",
    "recomendada",
    "recommandé",
    "recommandée",
    "empfohlen",
    "consigliato",
    "consigliata",
    "aanbevolen",
    "zalecane",
    "zalecany",
    "önerilen",
    "рекомендуется",
    "рекомендовано",
];

/// One AskUserQuestion call: the questions to show, and the input they came in, kept verbatim.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    pub(crate) questions: Vec<Question>,
    /// The tool input object exactly as received (unknown keys included). The reply echoes it:
    /// the CLI refuses an `updatedInput` that lost or changed `questions`.
    pub(crate) input: Map<String, Value>,
}

impl Ask {
    pub fn questions(&self) -> &[Question] {
        &self.questions
    }

    /// The tool input as received, to echo back in `updatedInput`.
    pub fn input(&self) -> &Map<String, Value> {
        &self.input
    }

    /// The first question's header: the short name of this request (window title, request list).
    pub fn title(&self) -> &str {
        self.questions.first().map_or("", |question| question.header())
    }
}

/// One question with its options. `header` may be empty (a soft warning), never `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    pub(crate) text: String,
    pub(crate) header: String,
    pub(crate) options: Vec<Choice>,
    pub(crate) multi_select: bool,
    /// The answer is a secret (Codex's `isSecret`): typed in a masked box, and never kept in
    /// the history, the drafts or the receipt.
    pub(crate) secret: bool,
}

impl Question {
    /// True when the answer is a secret (`isSecret`).
    pub fn secret(&self) -> bool {
        self.secret
    }

    /// The full question text; `answers` and `annotations` are keyed by it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The short chip the agent gave (at most 12 chars when the agent follows the rules).
    pub fn header(&self) -> &str {
        &self.header
    }

    pub fn options(&self) -> &[Choice] {
        &self.options
    }

    pub fn multi_select(&self) -> bool {
        self.multi_select
    }

    /// True when some option carries a preview and the question is single-select: the layout
    /// then puts the option list on the left and the preview on the right.
    pub fn has_side_preview(&self) -> bool {
        !self.multi_select && self.options.iter().any(|choice| choice.preview.is_some())
    }

    /// The option with this exact label.
    pub fn option_index(&self, label: &str) -> Option<usize> {
        self.options.iter().position(|choice| choice.label == label)
    }
}

/// One option of a question. Named `Choice` because `Option` is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub(crate) label: String,
    pub(crate) description: String,
    /// `preview`, or the legacy `markdown` key of older CLI builds.
    pub(crate) preview: Option<String>,
}

impl Choice {
    /// The label exactly as sent; this is what the answer carries.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub fn preview(&self) -> Option<&str> {
        self.preview.as_deref()
    }

    /// The label split for display: the name without a trailing "(Recommended)" (or its
    /// translation), and whether that suffix was there. The answer still uses [`Self::label`].
    pub fn display_label(&self) -> (&str, bool) {
        let label = self.label.trim_end();
        let inner_start = |close: char, open: char| {
            let inner = label.strip_suffix(close)?;
            let at = inner.rfind(open)?;
            Some((at, &inner[at + open.len_utf8()..]))
        };
        let Some((at, word)) = inner_start(')', '(').or_else(|| inner_start('）', '（')) else {
            return (self.label.as_str(), false);
        };
        let word = word.trim().to_lowercase();
        let name = label[..at].trim_end();
        match RECOMMENDED_WORDS.contains(&word.as_str()) && !name.is_empty() {
            true => (name, true),
            false => (self.label.as_str(), false),
        }
    }

    pub fn is_recommended(&self) -> bool {
        self.display_label().1
    }
}

/// What the receipt and the history say instead of an answer that holds a secret (`isSecret`).
pub const SECRET_NOT_SHOWN: &str = "(the answer holds a secret: sent, but not shown or kept)";

/// One question another agent asked (Codex, OpenCode), in AskUserQuestion's form, ready for
/// [`super::validate`]: its text, header, `(label, description)` options and multi-select.
pub fn question_input<'a>(
    text: &str,
    header: &str,
    options: impl IntoIterator<Item = (&'a str, &'a str)>,
    multi_select: bool,
) -> Value {
    let options: Vec<Value> = options
        .into_iter()
        .map(|(label, description)| json!({"label": label, "description": description}))
        .collect();
    json!({"question": text, "header": header, "options": options, "multiSelect": multi_select})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(label: &str) -> Choice {
        Choice { label: label.into(), description: String::new(), preview: None }
    }

    #[test]
    fn recommended_suffix_is_split_off_for_display_only() {
        let recommended = choice("PostgreSQL (Recommended)");
        assert_eq!(recommended.display_label(), ("PostgreSQL", true));
        assert_eq!(recommended.label(), "PostgreSQL (Recommended)");
        assert_eq!(choice("reqwest (推奨)").display_label(), ("reqwest", true));
        assert_eq!(choice("Zustand (권장)").display_label(), ("Zustand", true));
        assert_eq!(choice("Redis（推荐）").display_label(), ("Redis", true));
        assert_eq!(choice("Redis (推荐)").display_label(), ("Redis", true));
        assert_eq!(choice("Vite (RECOMMENDED) ").display_label(), ("Vite", true));
        assert_eq!(choice("Axum (แนะนำ)").display_label(), ("Axum", true));
        assert_eq!(choice("Postgres (empfohlen)").display_label(), ("Postgres", true));
        assert_eq!(choice("Two (or three)").display_label(), ("Two (or three)", false));
        assert_eq!(choice("SQLite").display_label(), ("SQLite", false));
        // A label that is nothing but the suffix keeps it, so it never displays empty.
        assert_eq!(choice("(Recommended)").display_label(), ("(Recommended)", false));
    }
}
