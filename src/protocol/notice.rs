//! Desktop notifications for waiting questions (issue 11), decided from plain data: which
//! notification the inbox shows, with what text, and when it is replaced or closed. The D-Bus side
//! is `transport::notify`; the window feeds [`Notices::update`] what waits and whether it has focus.

use super::origin::RequestId;

/// Longest summary line, in characters: a notification's title is one short line.
const SUMMARY_CHARS: usize = 80;
/// Longest body, in characters: enough for a question, short of a wall of text on the desktop.
const BODY_CHARS: usize = 300;
/// How many waiting requests a grouped notification names before "and N more".
const LISTED: usize = 4;

/// One request waiting for the user, as a notification names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub id: RequestId,
    /// The project the agent works in, when known.
    pub project: Option<String>,
    /// The first question's header (its chip), possibly empty.
    pub header: String,
    /// The first question's text.
    pub question: String,
}

/// What the window reports whenever it changes: the requests waiting, in arrival order, and
/// whether the window has the keyboard focus.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub waiting: Vec<Waiting>,
    pub focused: bool,
}

/// A notification to show (or to replace the one shown with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The title line: `project · header` for one request, `3 questions waiting` for several.
    pub summary: String,
    /// Plain text (the notifier escapes it for servers that read markup).
    pub body: String,
    /// The request its "Open" action shows.
    pub open: RequestId,
}

/// What the notifier does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoticeCommand {
    /// Show this notification, replacing the one shown (one notification per inbox, never a pile).
    Show(Notification),
    /// Close the notification shown, if any.
    Close,
}

/// Remembers what was waiting and whether a notification is up, between changes.
#[derive(Debug, Default)]
pub struct Notices {
    /// The requests waiting at the last update, to tell new arrivals from old ones.
    seen: Vec<RequestId>,
    /// A notification is up (shown by us, and not closed by the user or the server since).
    showing: bool,
}

impl Notices {
    /// The command for what waits now (`waiting` in arrival order), `None` when nothing changes.
    ///
    /// - A request arrives while the window does not have focus: a notification, for that one
    ///   request or grouped ("3 questions waiting") when several wait. It replaces the one up.
    /// - A request leaves while a notification is up: the notification is updated, or closed when
    ///   nothing waits any more.
    /// - The window has focus: the user is looking at the questions, so any notification closes.
    pub fn update(&mut self, waiting: &[Waiting], focused: bool) -> Option<NoticeCommand> {
        let arrived: Vec<&Waiting> =
            waiting.iter().filter(|request| !self.seen.contains(&request.id)).collect();
        let changed = self.seen.len() != waiting.len() || !arrived.is_empty();
        self.seen = waiting.iter().map(|request| request.id).collect();
        if waiting.is_empty() || focused {
            return std::mem::take(&mut self.showing).then_some(NoticeCommand::Close);
        }
        // The newest arrival is what the notification is about; when only departures changed
        // the list, the newest still waiting.
        let newest = match arrived.last() {
            Some(newest) => *newest,
            None if self.showing && changed => waiting.last()?,
            None => return None,
        };
        self.showing = true;
        Some(NoticeCommand::Show(notification(waiting, newest)))
    }

    /// The notification was closed by the user or the server (dismissed, expired, its action
    /// taken): the next arrival shows a new one; departures alone show nothing.
    pub fn dismissed(&mut self) {
        self.showing = false;
    }
}

/// The notification for `waiting` (not empty), whose "Open" shows `newest`.
fn notification(waiting: &[Waiting], newest: &Waiting) -> Notification {
    if let [only] = waiting {
        return Notification {
            summary: clip(&one_line(&name(only)), SUMMARY_CHARS),
            body: clip(&plain(&only.question), BODY_CHARS),
            open: only.id,
        };
    }
    // Newest first: the one that just arrived heads the list.
    let mut lines: Vec<String> = waiting
        .iter()
        .rev()
        .take(LISTED)
        .map(|request| {
            let question = one_line(&request.question);
            match question.is_empty() {
                true => one_line(&name(request)),
                false => format!("{}: {question}", one_line(&name(request))),
            }
        })
        .map(|line| clip(&line, SUMMARY_CHARS))
        .collect();
    if waiting.len() > LISTED {
        lines.push(format!("and {} more", waiting.len() - LISTED));
    }
    Notification {
        summary: format!("{} questions waiting", waiting.len()),
        body: clip(&lines.join("\n"), BODY_CHARS),
        open: newest.id,
    }
}

/// `project · header`, or whichever of the two there is.
fn name(request: &Waiting) -> String {
    let project = request.project.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let header = Some(request.header.trim()).filter(|h| !h.is_empty());
    match (project, header) {
        (Some(project), Some(header)) => format!("{project} · {header}"),
        (Some(only), None) | (None, Some(only)) => only.to_owned(),
        (None, None) => "A question".to_owned(),
    }
}

/// The text on one line: line breaks and tabs become spaces, other control characters go.
fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\t' || c == '\r' { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text with its line breaks, without other control characters (a NUL cannot cross D-Bus).
fn plain(text: &str) -> String {
    text.chars().filter(|c| *c == '\n' || !c.is_control()).collect::<String>().trim().to_owned()
}

/// At most `limit` characters, the cut marked with `…`.
fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some(_) => {
            let kept: String = text.chars().take(limit.saturating_sub(1)).collect();
            format!("{}…", kept.trim_end())
        }
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::panic, reason = "a test may assume: a failed assumption is a failed test")]
mod tests {
    use super::*;

    fn waiting(project: Option<&str>, header: &str, question: &str) -> Waiting {
        Waiting {
            id: RequestId::next(),
            project: project.map(str::to_owned),
            header: header.to_owned(),
            question: question.to_owned(),
        }
    }

    fn shown(command: Option<NoticeCommand>) -> Notification {
        match command {
            Some(NoticeCommand::Show(notification)) => notification,
            other => panic!("expected a notification, got {other:?}"),
        }
    }

    #[test]
    fn one_request_names_its_project_header_and_question() {
        let mut notices = Notices::default();
        let db = waiting(Some("shop"), "Database", "Which database should orders use?");
        let notification = shown(notices.update(std::slice::from_ref(&db), false));
        assert_eq!(
            notification,
            Notification {
                summary: "shop · Database".to_owned(),
                body: "Which database should orders use?".to_owned(),
                open: db.id,
            }
        );
    }

    #[test]
    fn nothing_is_shown_while_the_window_has_focus() {
        let mut notices = Notices::default();
        let db = waiting(Some("shop"), "Database", "Which?");
        assert_eq!(notices.update(std::slice::from_ref(&db), true), None);
        // Seen while focused: losing focus later does not announce it as new.
        assert_eq!(notices.update(std::slice::from_ref(&db), false), None);
    }

    #[test]
    fn a_burst_gives_one_grouped_notification_replaced_in_place() {
        let mut notices = Notices::default();
        let first = waiting(Some("shop"), "Database", "Which database?");
        let second = waiting(Some("blog"), "Theme", "Light or dark?");
        let third = waiting(None, "", "Ship it?");
        shown(notices.update(std::slice::from_ref(&first), false));
        shown(notices.update(&[first.clone(), second.clone()], false));
        let all = [first.clone(), second.clone(), third.clone()];
        let grouped = shown(notices.update(&all, false));
        assert_eq!(
            grouped,
            Notification {
                summary: "3 questions waiting".to_owned(),
                body: "A question: Ship it?\nblog · Theme: Light or dark?\nshop · Database: Which database?"
                    .to_owned(),
                open: third.id,
            }
        );
        // Nothing new: nothing to do.
        assert_eq!(notices.update(&all, false), None);
    }

    #[test]
    fn departures_update_the_notification_and_the_last_one_closes_it() {
        let mut notices = Notices::default();
        let first = waiting(Some("shop"), "Database", "Which database?");
        let second = waiting(Some("blog"), "Theme", "Light or dark?");
        shown(notices.update(&[first.clone(), second.clone()], false));
        let left = shown(notices.update(std::slice::from_ref(&first), false));
        assert_eq!(left.summary, "shop · Database");
        assert_eq!(left.open, first.id);
        assert_eq!(notices.update(&[], false), Some(NoticeCommand::Close));
        assert_eq!(notices.update(&[], false), None);
    }

    #[test]
    fn focus_closes_it_and_a_dismissed_one_stays_closed_until_something_new_arrives() {
        let mut notices = Notices::default();
        let first = waiting(Some("shop"), "Database", "Which database?");
        let second = waiting(Some("blog"), "Theme", "Light or dark?");
        let third = waiting(Some("blog"), "Font", "Serif?");
        shown(notices.update(std::slice::from_ref(&first), false));
        assert_eq!(notices.update(std::slice::from_ref(&first), true), Some(NoticeCommand::Close));
        shown(notices.update(&[first.clone(), second.clone()], false));
        notices.dismissed();
        // The user dismissed it: a departure does not bring it back ...
        assert_eq!(notices.update(std::slice::from_ref(&second), false), None);
        // ... nor does the last one leaving (there is nothing to close) ...
        assert_eq!(notices.update(&[], false), None);
        // ... but a new question does.
        assert_eq!(shown(notices.update(std::slice::from_ref(&third), false)).open, third.id);
    }

    #[test]
    fn long_lists_and_texts_are_cut_and_control_characters_dropped() {
        let mut notices = Notices::default();
        let many: Vec<Waiting> =
            (0..6).map(|n| waiting(Some("p"), &format!("H{n}"), "Q\u{0}?\nmore")).collect();
        let grouped = shown(notices.update(&many, false));
        assert_eq!(grouped.summary, "6 questions waiting");
        assert_eq!(
            grouped.body,
            "p · H5: Q? more\np · H4: Q? more\np · H3: Q? more\np · H2: Q? more\nand 2 more"
        );
        let mut notices = Notices::default();
        let long = waiting(None, "Essay", &"é".repeat(1000));
        let one = shown(notices.update(std::slice::from_ref(&long), false));
        assert_eq!(one.body.chars().count(), BODY_CHARS);
        assert!(one.body.ends_with('…'));
        assert_eq!(one.summary, "Essay");
    }
}
