//! The History page's state (issue 11): what the user filters by, and the page of past requests
//! the store sent back. Plain data: the query runs on the store's own thread (the journal's), and
//! its answer arrives as a [`HistoryPage`] the app hands to [`History::received`]. The data
//! types live in [`crate::protocol::history`]: the browser page gets them over the WebSocket.

pub use crate::protocol::history::{
    HistoryFilter, HistoryItem, HistoryKind, HistoryPage, PAGE_SIZE,
};

/// What the user does on the History page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HistoryAction {
    /// Show the page (the questions stay open behind it).
    Open,
    /// Back to the questions.
    Close,
    Search(String),
    Project(Option<String>),
    Agent(Option<String>),
    /// Issue 26: only questions, tool approvals or plans (`None`: everything).
    Kind(Option<HistoryKind>),
    /// Show this entry's details.
    Select(i64),
    /// Put this text on the clipboard (an answer, what the model read, the reply).
    Copy(String),
}

/// The History page: shown or not, its filter, and the last page the store sent.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub open: bool,
    pub filter: HistoryFilter,
    pub page: Option<HistoryPage>,
    pub selected: Option<i64>,
    /// A query is on its way (the page says "Searching…" when none came yet).
    pub waiting: bool,
}

impl History {
    /// Applies `action`; returns the filter to query the store with, when one is needed.
    /// (`Copy` is the app's to perform.)
    pub fn apply(&mut self, action: &HistoryAction) -> Option<HistoryFilter> {
        match action {
            HistoryAction::Open => {
                self.open = true;
                // Each visit reads afresh: requests ended since the last one are there.
                self.waiting = true;
                return Some(self.filter.clone());
            }
            HistoryAction::Close => self.open = false,
            HistoryAction::Search(text) if *text != self.filter.search => {
                self.filter.search = text.clone();
            }
            HistoryAction::Project(project) if *project != self.filter.project => {
                self.filter.project = project.clone();
            }
            HistoryAction::Agent(source) if *source != self.filter.source => {
                self.filter.source = source.clone();
            }
            HistoryAction::Kind(kind) if *kind != self.filter.kind => self.filter.kind = *kind,
            HistoryAction::Select(id) => self.selected = Some(*id),
            HistoryAction::Search(_)
            | HistoryAction::Project(_)
            | HistoryAction::Agent(_)
            | HistoryAction::Kind(_)
            | HistoryAction::Copy(_) => {}
        }
        let refilter = matches!(
            action,
            HistoryAction::Search(_)
                | HistoryAction::Project(_)
                | HistoryAction::Agent(_)
                | HistoryAction::Kind(_)
        );
        // Only a filter that changed asks again (the guards above left unchanged ones out).
        (refilter && self.page.as_ref().is_none_or(|page| page.filter != self.filter)).then(|| {
            self.waiting = true;
            self.filter.clone()
        })
    }

    /// A page arrived; one answering an older filter (the user typed on) is dropped.
    pub fn received(&mut self, page: HistoryPage) {
        if page.filter != self.filter {
            return;
        }
        self.waiting = false;
        if self.selected.is_none_or(|id| !page.items.iter().any(|item| item.id == id)) {
            self.selected = page.items.first().map(|item| item.id);
        }
        self.page = Some(page);
    }

    /// The entry whose details are shown.
    pub fn selected_item(&self) -> Option<&HistoryItem> {
        let page = self.page.as_ref()?;
        page.items.iter().find(|item| Some(item.id) == self.selected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64) -> HistoryItem {
        HistoryItem {
            id,
            kind: HistoryKind::Question,
            ended_at: String::new(),
            project: None,
            agent: "hook".to_owned(),
            header: "H".to_owned(),
            questions: vec!["Q?".to_owned()],
            ended: "answered".to_owned(),
            answer: "A".to_owned(),
            model_text: None,
            reply: None,
        }
    }

    #[test]
    fn opening_queries_and_a_page_for_an_older_filter_is_dropped() {
        let mut history = History::default();
        assert_eq!(history.apply(&HistoryAction::Open), Some(HistoryFilter::default()));
        assert!(history.open && history.waiting);
        let searched = history.apply(&HistoryAction::Search("post".to_owned()));
        assert_eq!(searched.map(|filter| filter.search), Some("post".to_owned()));
        // The answer to the first query comes late: it is not shown.
        history.received(HistoryPage { items: vec![item(1)], ..HistoryPage::default() });
        assert!(history.page.is_none() && history.waiting);
        let filter = history.filter.clone();
        history.received(HistoryPage {
            filter,
            items: vec![item(2), item(3)],
            ..Default::default()
        });
        assert!(!history.waiting);
        assert_eq!(history.selected_item().map(|item| item.id), Some(2));
        // The same search again asks nothing; Select and Copy never do.
        assert_eq!(history.apply(&HistoryAction::Search("post".to_owned())), None);
        assert_eq!(history.apply(&HistoryAction::Select(3)), None);
        assert_eq!(history.selected_item().map(|item| item.id), Some(3));
        assert_eq!(history.apply(&HistoryAction::Copy("x".to_owned())), None);
        let project = history.apply(&HistoryAction::Project(Some("shop".to_owned())));
        assert_eq!(project.and_then(|filter| filter.project), Some("shop".to_owned()));
        // Issue 26: the kind filters too.
        let approvals = history.apply(&HistoryAction::Kind(Some(HistoryKind::Approval)));
        assert_eq!(approvals.and_then(|filter| filter.kind), Some(HistoryKind::Approval));
        history.apply(&HistoryAction::Close);
        assert!(!history.open);
    }
}
