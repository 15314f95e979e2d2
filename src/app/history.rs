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
    /// Issue 30: the next [`PAGE_SIZE`] older entries of the same filter, after those shown
    /// (the end of the list scrolled into view, or "Show older entries").
    Older,
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
    /// Issue 30: the last page read was full, so older entries may follow (the list ends with
    /// "Show older entries").
    pub more: bool,
    /// Why the older entries asked for could not be read (the entries shown stay).
    pub older_error: Option<String>,
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
            HistoryAction::Older => return self.older(),
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

    /// The filter of the page after the entries shown, when there may be one and nothing is
    /// on its way (one request at a time: a browser's bridge refuses a second).
    fn older(&mut self) -> Option<HistoryFilter> {
        let page = self.page.as_ref()?;
        if !self.more || self.waiting || page.error.is_some() {
            return None;
        }
        let oldest = page.items.last()?;
        self.waiting = true;
        Some(HistoryFilter { before: Some(oldest.id), ..self.filter.clone() })
    }

    /// A page arrived; one answering an older filter (the user typed on) is dropped. A next
    /// page (`before`) is added after the entries shown when it goes on from the oldest of
    /// them; any other is dropped.
    pub fn received(&mut self, page: HistoryPage) {
        if page.filter.from_newest() != self.filter {
            return;
        }
        let full = page.items.len() >= PAGE_SIZE;
        match (page.filter.before, self.page.as_mut()) {
            (None, _) => {
                self.older_error = None;
                if self.selected.is_none_or(|id| !page.items.iter().any(|item| item.id == id)) {
                    self.selected = page.items.first().map(|item| item.id);
                }
                self.page = Some(page);
            }
            (Some(before), Some(shown))
                if shown.error.is_none()
                    && shown.items.last().map(|item| item.id) == Some(before) =>
            {
                // Ids already shown (an entry recorded with an older end time meanwhile
                // cannot repeat one, but a page never lists an entry twice).
                let page = HistoryPage {
                    items: page
                        .items
                        .into_iter()
                        .filter(|item| !shown.items.iter().any(|known| known.id == item.id))
                        .collect(),
                    ..page
                };
                if page.error.is_some() {
                    // The entries shown stay; the list's end says why no older ones came.
                    self.older_error = page.error;
                    self.waiting = false;
                    self.more = false;
                    return;
                } else {
                    shown.items.extend(page.items);
                    shown.projects = page.projects;
                    shown.agents = page.agents;
                }
            }
            (Some(_), _) => return,
        }
        self.waiting = false;
        self.more = full;
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

    /// Issue 30: a full page asks for the next after its oldest entry; that page is added
    /// after the entries shown (none twice); a page for another filter, or going on from an
    /// entry no longer the oldest shown, is dropped; a short page ends the paging.
    #[test]
    fn older_pages_follow_the_oldest_entry_shown_and_stop_at_a_short_one() {
        let mut history = History::default();
        history.apply(&HistoryAction::Open);
        assert_eq!(history.apply(&HistoryAction::Older), None, "no page yet");
        let full: Vec<HistoryItem> =
            (0..PAGE_SIZE as i64).rev().map(|id| item(id + 1000)).collect();
        history.received(HistoryPage { items: full, ..HistoryPage::default() });
        assert!(history.more);
        let older = history.apply(&HistoryAction::Older).expect("the next page is asked");
        assert_eq!(older.before, Some(1000));
        assert_eq!(older.from_newest(), history.filter);
        assert_eq!(history.apply(&HistoryAction::Older), None, "one request at a time");
        // A page going on from another entry (an older request's) is dropped.
        let stray = HistoryFilter { before: Some(1005), ..HistoryFilter::default() };
        history.received(HistoryPage { filter: stray, items: vec![item(1)], ..Default::default() });
        assert_eq!(history.page.as_ref().map(|page| page.items.len()), Some(PAGE_SIZE));
        assert!(history.waiting);
        history.received(HistoryPage {
            filter: older,
            items: vec![item(1000), item(999), item(998)],
            ..Default::default()
        });
        let ids: Vec<i64> =
            history.page.iter().flat_map(|page| &page.items).map(|i| i.id).collect();
        assert_eq!(ids.len(), PAGE_SIZE + 2, "1000 was shown already");
        assert_eq!(ids.last(), Some(&998));
        assert!(!history.more && !history.waiting);
        assert_eq!(history.apply(&HistoryAction::Older), None, "a short page was the last");
        // The selection stays where it was.
        assert_eq!(history.selected, Some(1000 + PAGE_SIZE as i64 - 1));
    }
}
