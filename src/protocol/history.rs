//! The History page's data (issue 11) and its wire form for the browser: what a page asks for
//! ([`HistoryFilter`], sent as `history_request`) and what it gets back ([`HistoryPage`], sent
//! as `history_page`). Pure data (serde), shared by the native window, the bridge and the page;
//! the messages themselves are [`super::web`]'s (`FromPage::HistoryRequest`, `ToPage::HistoryPage`).
//!
//! Server → browser, once connected: `{"type":"history_kept"}` when the bridge keeps history
//! (the inbox's, with its store); only then does the page show its History button.
//! Browser → server: `{"type":"history_request","search":"…","project":"…"|null,"agent":"…"|null,
//! "kind":"question"|"approval"|"plan"|null,"before":ID}` (`before`, issue 30: the next page,
//! the entries older than entry `ID`, the oldest the page holds; absent or null: the newest).
//! Server → browser: `{"type":"history_page","filter":{…},"items":[…],"projects":[…],
//! "agents":[["hook","Claude Code (hook)"],…],"error":null|"…"}`. A request that breaks a bound
//! gets an `error` with `"request":"history_request"`; a page has one request in flight at a
//! time (the bridge refuses a second with `busy` until it has answered the first).

use serde::{Deserialize, Serialize};

/// How many entries one page shows, newest first (the search narrows the rest).
pub const PAGE_SIZE: usize = 200;
/// The longest search a page may send, in characters: more than any phrase a person types into
/// a search box, and it bounds what the store's `LIKE` scans for.
pub const MAX_HISTORY_SEARCH: usize = 200;
/// The longest project or agent name a filter may carry, in characters.
pub const MAX_HISTORY_NAME: usize = 256;

/// What a History page is read with, in words, where this askpane keeps none: a bridge with no
/// store (`askpane ask --ui web` without the inbox).
pub const NO_HISTORY_HERE: &str = "no history here: this askpane keeps no record of past \
    questions (only `askpane inbox` does, in its store)";

/// What kind of ask a history entry is (issue 26): a question, a tool call approved or denied,
/// or a plan (an approval of `ExitPlanMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryKind {
    #[default]
    Question,
    Approval,
    Plan,
}

impl HistoryKind {
    pub const ALL: [HistoryKind; 3] =
        [HistoryKind::Question, HistoryKind::Approval, HistoryKind::Plan];

    /// The name stored, sent and typed (`--kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryKind::Question => "question",
            HistoryKind::Approval => "approval",
            HistoryKind::Plan => "plan",
        }
    }

    pub fn from_name(name: &str) -> Option<HistoryKind> {
        HistoryKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// The kind of an approval of `tool_name`: a plan is an approval of `ExitPlanMode`.
    pub fn of_tool(tool_name: &str) -> HistoryKind {
        match tool_name {
            PLAN_TOOL => HistoryKind::Plan,
            _ => HistoryKind::Approval,
        }
    }

    /// In words, for a filter's menu.
    pub fn words(self) -> &'static str {
        match self {
            HistoryKind::Question => "Questions",
            HistoryKind::Approval => "Tool approvals",
            HistoryKind::Plan => "Plans",
        }
    }
}

/// The tool whose approval is a plan's.
pub const PLAN_TOOL: &str = "ExitPlanMode";

/// What the user asked the History page for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryFilter {
    /// Text in the questions, the answer or what the model read (any case); empty for all.
    #[serde(default)]
    pub search: String,
    /// Only this project.
    #[serde(default)]
    pub project: Option<String>,
    /// Only this kind of agent (a provenance `source`: `hook`, `ask`, …).
    #[serde(default, rename = "agent")]
    pub source: Option<String>,
    /// Only this kind of entry (issue 26); all kinds when `None`, which is left unsaid so a
    /// page from before kinds reads the filter it sent, field for field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<HistoryKind>,
    /// Issue 30: only the entries older than this one (its id, the oldest a page shows): the
    /// next [`PAGE_SIZE`] of the same filter. `None`: the newest. Left unsaid when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<i64>,
}

impl HistoryFilter {
    /// The same filter from the newest entry on (what the page's filter fields say).
    pub fn from_newest(&self) -> HistoryFilter {
        HistoryFilter { before: None, ..self.clone() }
    }
}

/// One past request, as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryItem {
    /// The store's id for it.
    pub id: i64,
    /// A question, an approval or a plan (older bridges send none: a question).
    #[serde(default)]
    pub kind: HistoryKind,
    /// When it ended, as text (`2026-11-22 16:30:05 UTC`).
    pub ended_at: String,
    pub project: Option<String>,
    /// Who asked, in words (`Claude Code (hook)`).
    pub agent: String,
    /// The first question's header; for an approval, the tool call in one line
    /// (`Bash: cargo test`).
    pub header: String,
    /// Each question's text, as asked (none for an approval).
    pub questions: Vec<String>,
    /// How it ended (`answered`, `declined`, …; an approval's decision: `allowed_once`,
    /// `allowed_always`, `denied`, …).
    pub ended: String,
    /// The answer in short; for an approval, the rule added or the deny message.
    pub answer: String,
    /// What the model read.
    pub model_text: Option<String>,
    /// The exact reply line sent; `None` when nothing was sent.
    pub reply: Option<String>,
}

/// The store's answer to one [`HistoryFilter`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryPage {
    /// The filter this page answers (an older answer than the filter shown is dropped).
    pub filter: HistoryFilter,
    /// Newest first, at most [`PAGE_SIZE`].
    pub items: Vec<HistoryItem>,
    /// Every project in history, to filter by.
    pub projects: Vec<String>,
    /// Every agent in history: its source and its name in words.
    pub agents: Vec<(String, String)>,
    /// The store could not be read: why (the page then shows this instead of entries).
    pub error: Option<String>,
}

impl HistoryPage {
    /// The page that says, for `filter`, that nothing here keeps history.
    pub fn none_kept(filter: HistoryFilter) -> HistoryPage {
        HistoryPage { filter, error: Some(NO_HISTORY_HERE.to_owned()), ..HistoryPage::default() }
    }
}

/// Why a page's `history_request` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HistoryRequestError {
    #[error(
        "the history search is {length} characters long; askpane searches at most \
         {MAX_HISTORY_SEARCH}"
    )]
    SearchTooLong { length: usize },
    #[error("the history filter's `{field}` is longer than {MAX_HISTORY_NAME} characters")]
    NameTooLong { field: &'static str },
    #[error("the history filter's `{field}` must be a string or null")]
    NotText { field: &'static str },
    #[error("the history filter's `kind` must be question, approval, plan or null")]
    UnknownKind,
    #[error("the history filter's `before` must be the number of a history entry or null")]
    NotAnEntry,
    #[error("one history request at a time: wait for the history_page of the last one")]
    Busy,
}

impl HistoryRequestError {
    /// The request field at fault, when one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            HistoryRequestError::SearchTooLong { .. } => Some("search"),
            HistoryRequestError::NameTooLong { field } | HistoryRequestError::NotText { field } => {
                Some(field)
            }
            HistoryRequestError::UnknownKind => Some("kind"),
            HistoryRequestError::NotAnEntry => Some("before"),
            HistoryRequestError::Busy => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::web::{self, FromPage, ToPage};
    use serde_json::{Value, json};

    // The wire's messages as JSON, read as the bridge and the page read them.
    fn history_request(filter: &HistoryFilter) -> Value {
        serde_json::to_value(web::history_request(filter)).expect("JSON")
    }
    fn parse_history_request(value: &Value) -> Option<Result<HistoryFilter, HistoryRequestError>> {
        match FromPage::read(value).ok()? {
            FromPage::HistoryRequest(query) => Some(query.filter()),
            _ => None,
        }
    }
    fn history_page(page: &HistoryPage) -> Value {
        serde_json::to_value(web::history_page::<Value>(page)).expect("JSON")
    }
    fn parse_history_page(value: &Value) -> Option<HistoryPage> {
        match serde_json::from_value::<ToPage>(value.clone()).ok()? {
            ToPage::HistoryPage(page) => Some(page),
            _ => None,
        }
    }

    #[test]
    fn requests_round_trip_and_bounds_are_named() {
        let filter = HistoryFilter {
            search: "post".into(),
            project: Some("shop".into()),
            source: Some("hook".into()),
            kind: Some(HistoryKind::Approval),
            before: None,
        };
        let request = history_request(&filter);
        assert_eq!(
            request.to_string(),
            r#"{"type":"history_request","search":"post","project":"shop","agent":"hook","kind":"approval"}"#
        );
        assert_eq!(parse_history_request(&request), Some(Ok(filter.clone())));
        // Issue 30: the next page names the oldest entry shown; anything else is refused.
        let older = HistoryFilter { before: Some(41), ..filter };
        let request = history_request(&older);
        assert_eq!(request.get("before"), Some(&json!(41)));
        assert_eq!(parse_history_request(&request), Some(Ok(older)));
        for bad in [json!("41"), json!(4.5), json!(-1), json!([1])] {
            let error = parse_history_request(&json!({"type": "history_request", "before": bad}));
            assert_eq!(error, Some(Err(HistoryRequestError::NotAnEntry)), "before: {bad}");
        }
        let newest = parse_history_request(&json!({"type": "history_request", "before": null}));
        assert_eq!(newest, Some(Ok(HistoryFilter::default())));
        assert_eq!(
            parse_history_request(&json!({"type": "history_request"})),
            Some(Ok(HistoryFilter::default()))
        );
        assert_eq!(parse_history_request(&json!({"type": "question_answer"})), None);
        let long = "x".repeat(MAX_HISTORY_SEARCH + 1);
        let error = parse_history_request(&json!({"type": "history_request", "search": long}));
        assert_eq!(error, Some(Err(HistoryRequestError::SearchTooLong { length: 201 })));
        let error = parse_history_request(&json!({"type": "history_request", "project": 7}));
        assert_eq!(error, Some(Err(HistoryRequestError::NotText { field: "project" })));
        // Issue 26: a kind askpane does not know is refused by name, never read as "all".
        let error = parse_history_request(&json!({"type": "history_request", "kind": "plans"}));
        assert_eq!(error, Some(Err(HistoryRequestError::UnknownKind)));
        let plans = parse_history_request(&json!({"type": "history_request", "kind": "plan"}));
        assert_eq!(
            plans.and_then(Result::ok).and_then(|filter| filter.kind),
            Some(HistoryKind::Plan)
        );
    }

    #[test]
    fn pages_round_trip() {
        let page = HistoryPage {
            filter: HistoryFilter { search: "a".into(), ..HistoryFilter::default() },
            items: vec![HistoryItem {
                id: 3,
                kind: HistoryKind::Question,
                ended_at: "2026-11-22T16:30:05Z".into(),
                project: None,
                agent: "askpane ask".into(),
                header: "H".into(),
                questions: vec!["Q?".into()],
                ended: "answered".into(),
                answer: "A".into(),
                model_text: Some("M".into()),
                reply: None,
            }],
            projects: vec!["shop".into()],
            agents: vec![("ask".into(), "askpane ask".into())],
            error: None,
        };
        let message = history_page(&page);
        assert_eq!(message.get("type"), Some(&json!("history_page")));
        assert_eq!(message.pointer("/agents/0"), Some(&json!(["ask", "askpane ask"])));
        assert_eq!(parse_history_page(&message), Some(page));
        let none = history_page(&HistoryPage::none_kept(HistoryFilter::default()));
        assert_eq!(none.get("error"), Some(&json!(NO_HISTORY_HERE)));
    }
}
