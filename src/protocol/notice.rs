//! Desktop notifications for waiting questions and tool calls (issues 11, 26), decided from plain data: which
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
    pub kind: WaitingKind,
    /// The project the agent works in, when known.
    pub project: Option<String>,
    /// The first question's header (its chip), or the tool's name; possibly empty.
    pub header: String,
    /// The first question's text, or what the tool would do (`npm test`).
    pub question: String,
    /// The SSH host it was asked on (issue 27), as its link names it; `None` for this machine.
    pub host: Option<String>,
}

/// What waits: the notification counts them by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitingKind {
    Question,
    /// A tool call to allow or deny (an approval).
    ToolCall,
}

/// What the window reports whenever it changes: the requests waiting, in arrival order,
/// whether the window has the keyboard focus, and whether it is hidden (closed to the
/// background: the notification is then all there is on screen).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub waiting: Vec<Waiting>,
    pub focused: bool,
    pub hidden: bool,
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
    /// The window is hidden with requests waiting: the notification stays until they are
    /// answered or the window is shown (it does not expire, and stays after its action).
    pub persistent: bool,
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
    /// The window was hidden at the last update.
    hidden: bool,
}

impl Notices {
    /// The command for what waits now (`waiting` in arrival order), `None` when nothing changes.
    ///
    /// - A request arrives while the window does not have focus: a notification, for that one
    ///   request or grouped ("3 questions waiting") when several wait. It replaces the one up.
    /// - A request leaves while a notification is up: the notification is updated, or closed when
    ///   nothing waits any more.
    /// - The window has focus: the user is looking at the questions, so any notification closes.
    /// - The window is hidden with requests waiting ("keep waiting in the background"): one
    ///   persistent notification says what waits, from the moment it hides (issue 24: agents were
    ///   left blocked with nothing on screen), until it is shown or nothing waits.
    pub fn update(
        &mut self,
        waiting: &[Waiting],
        focused: bool,
        hidden: bool,
    ) -> Option<NoticeCommand> {
        let arrived: Vec<&Waiting> =
            waiting.iter().filter(|request| !self.seen.contains(&request.id)).collect();
        let changed = self.seen.len() != waiting.len() || !arrived.is_empty();
        let just_hidden = hidden && !self.hidden;
        self.seen = waiting.iter().map(|request| request.id).collect();
        self.hidden = hidden;
        if waiting.is_empty() || (focused && !hidden) {
            return std::mem::take(&mut self.showing).then_some(NoticeCommand::Close);
        }
        // The newest arrival is what the notification is about; when only departures changed
        // the list (or the window just hid), the newest still waiting.
        let newest = match arrived.last() {
            Some(newest) => *newest,
            None if (self.showing && changed) || just_hidden => waiting.last()?,
            None => return None,
        };
        self.showing = true;
        let mut shown = notification(waiting, newest);
        shown.persistent = hidden;
        Some(NoticeCommand::Show(shown))
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
            persistent: false,
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
        summary: grouped_summary(waiting),
        body: clip(&lines.join("\n"), BODY_CHARS),
        open: newest.id,
        persistent: false,
    }
}

/// The title of a notification for several: `3 questions waiting`, `2 tool calls waiting`, or
/// `3 waiting: 2 questions, 1 tool call`.
fn grouped_summary(waiting: &[Waiting]) -> String {
    let calls = waiting.iter().filter(|request| request.kind == WaitingKind::ToolCall).count();
    let questions = waiting.len() - calls;
    let counted = |count: usize, one: &str, many: &str| match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {many}"),
    };
    match (questions, calls) {
        (_, 0) => format!("{} waiting", counted(questions, "question", "questions")),
        (0, _) => format!("{} waiting", counted(calls, "tool call", "tool calls")),
        _ => format!(
            "{} waiting: {}, {}",
            waiting.len(),
            counted(questions, "question", "questions"),
            counted(calls, "tool call", "tool calls")
        ),
    }
}

/// `project · header`, or whichever of the two there is.
fn name(request: &Waiting) -> String {
    let project = request.project.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let header = Some(request.header.trim()).filter(|h| !h.is_empty());
    let named = match (project, header) {
        (Some(project), Some(header)) => format!("{project} · {header}"),
        (Some(only), None) | (None, Some(only)) => only.to_owned(),
        (None, None) => match request.kind {
            WaitingKind::Question => "A question".to_owned(),
            WaitingKind::ToolCall => "A tool call".to_owned(),
        },
    };
    match request.host.as_deref() {
        Some(host) => format!("{named} @ {host}"),
        None => named,
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
            kind: WaitingKind::Question,
            project: project.map(str::to_owned),
            header: header.to_owned(),
            question: question.to_owned(),
            host: None,
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
        let notification = shown(notices.update(std::slice::from_ref(&db), false, false));
        assert_eq!(
            notification,
            Notification {
                summary: "shop · Database".to_owned(),
                body: "Which database should orders use?".to_owned(),
                open: db.id,
                persistent: false,
            }
        );
    }

    #[test]
    fn nothing_is_shown_while_the_window_has_focus() {
        let mut notices = Notices::default();
        let db = waiting(Some("shop"), "Database", "Which?");
        assert_eq!(notices.update(std::slice::from_ref(&db), true, false), None);
        // Seen while focused: losing focus later does not announce it as new.
        assert_eq!(notices.update(std::slice::from_ref(&db), false, false), None);
    }

    #[test]
    fn a_burst_gives_one_grouped_notification_replaced_in_place() {
        let mut notices = Notices::default();
        let first = waiting(Some("shop"), "Database", "Which database?");
        let second = waiting(Some("blog"), "Theme", "Light or dark?");
        let third = waiting(None, "", "Ship it?");
        shown(notices.update(std::slice::from_ref(&first), false, false));
        shown(notices.update(&[first.clone(), second.clone()], false, false));
        let all = [first.clone(), second.clone(), third.clone()];
        let grouped = shown(notices.update(&all, false, false));
        assert_eq!(
            grouped,
            Notification {
                summary: "3 questions waiting".to_owned(),
                body: "A question: Ship it?\nblog · Theme: Light or dark?\nshop · Database: Which database?"
                    .to_owned(),
                open: third.id,
                persistent: false,
            }
        );
        // Nothing new: nothing to do.
        assert_eq!(notices.update(&all, false, false), None);
    }

    #[test]
    fn departures_update_the_notification_and_the_last_one_closes_it() {
        let mut notices = Notices::default();
        let first = waiting(Some("shop"), "Database", "Which database?");
        let second = waiting(Some("blog"), "Theme", "Light or dark?");
        shown(notices.update(&[first.clone(), second.clone()], false, false));
        let left = shown(notices.update(std::slice::from_ref(&first), false, false));
        assert_eq!(left.summary, "shop · Database");
        assert_eq!(left.open, first.id);
        assert_eq!(notices.update(&[], false, false), Some(NoticeCommand::Close));
        assert_eq!(notices.update(&[], false, false), None);
    }

    #[test]
    fn focus_closes_it_and_a_dismissed_one_stays_closed_until_something_new_arrives() {
        let mut notices = Notices::default();
        let first = waiting(Some("shop"), "Database", "Which database?");
        let second = waiting(Some("blog"), "Theme", "Light or dark?");
        let third = waiting(Some("blog"), "Font", "Serif?");
        shown(notices.update(std::slice::from_ref(&first), false, false));
        assert_eq!(
            notices.update(std::slice::from_ref(&first), true, false),
            Some(NoticeCommand::Close)
        );
        shown(notices.update(&[first.clone(), second.clone()], false, false));
        notices.dismissed();
        // The user dismissed it: a departure does not bring it back ...
        assert_eq!(notices.update(std::slice::from_ref(&second), false, false), None);
        // ... nor does the last one leaving (there is nothing to close) ...
        assert_eq!(notices.update(&[], false, false), None);
        // ... but a new question does.
        assert_eq!(
            shown(notices.update(std::slice::from_ref(&third), false, false)).open,
            third.id
        );
    }

    #[test]
    fn tool_calls_are_named_and_counted_beside_questions() {
        let call = |header: &str, what: &str| Waiting {
            kind: WaitingKind::ToolCall,
            ..waiting(Some("shop"), header, what)
        };
        let mut notices = Notices::default();
        let bash = call("Bash", "npm test");
        let one = shown(notices.update(std::slice::from_ref(&bash), false, false));
        assert_eq!((one.summary.as_str(), one.body.as_str()), ("shop · Bash", "npm test"));
        let edit = call("Edit", "src/main.rs");
        let two = shown(notices.update(&[bash.clone(), edit.clone()], false, false));
        assert_eq!(two.summary, "2 tool calls waiting");
        assert_eq!(two.body, "shop · Edit: src/main.rs\nshop · Bash: npm test");
        let question = waiting(Some("shop"), "Colour", "Which colour?");
        let mixed = shown(notices.update(&[bash, edit, question], false, false));
        assert_eq!(mixed.summary, "3 waiting: 1 question, 2 tool calls");
        let mut notices = Notices::default();
        let unnamed = Waiting { project: None, header: String::new(), ..call("", "") };
        let one = shown(notices.update(std::slice::from_ref(&unnamed), false, false));
        assert_eq!(one.summary, "A tool call");
    }

    /// Issue 27: a request from an SSH host says which, alone and in a group.
    #[test]
    fn a_remote_host_s_request_is_named_with_its_host() {
        let mut notices = Notices::default();
        let remote = Waiting {
            host: Some("devbox".to_owned()),
            ..waiting(Some("orders"), "Database", "Which database?")
        };
        let one = shown(notices.update(std::slice::from_ref(&remote), false, false));
        assert_eq!(one.summary, "orders · Database @ devbox");
        let local = waiting(Some("shop"), "Colour", "Which colour?");
        let two = shown(notices.update(&[remote, local], false, false));
        assert_eq!(
            two.body,
            "shop · Colour: Which colour?\norders · Database @ devbox: Which database?"
        );
    }

    #[test]
    fn long_lists_and_texts_are_cut_and_control_characters_dropped() {
        let mut notices = Notices::default();
        let many: Vec<Waiting> =
            (0..6).map(|n| waiting(Some("p"), &format!("H{n}"), "Q\u{0}?\nmore")).collect();
        let grouped = shown(notices.update(&many, false, false));
        assert_eq!(grouped.summary, "6 questions waiting");
        assert_eq!(
            grouped.body,
            "p · H5: Q? more\np · H4: Q? more\np · H3: Q? more\np · H2: Q? more\nand 2 more"
        );
        let mut notices = Notices::default();
        let long = waiting(None, "Essay", &"é".repeat(1000));
        let one = shown(notices.update(std::slice::from_ref(&long), false, false));
        assert_eq!(one.body.chars().count(), BODY_CHARS);
        assert!(one.body.ends_with('…'));
        assert_eq!(one.summary, "Essay");
    }
}

#[cfg(test)]
#[allow(clippy::panic, reason = "a test may assume: a failed assumption is a failed test")]
mod hidden_tests {
    use super::*;

    fn waiting(header: &str) -> Waiting {
        Waiting {
            id: RequestId::next(),
            kind: WaitingKind::Question,
            project: Some("shop".to_owned()),
            header: header.to_owned(),
            question: format!("{header}?"),
            host: None,
        }
    }

    /// Issue 24 item 24: "keep waiting in the background" leaves one persistent notification up
    /// for as long as the window is hidden and something waits; shown again, it closes.
    #[test]
    fn a_hidden_window_with_requests_waiting_keeps_one_persistent_notification() {
        let mut notices = Notices::default();
        let (db, cache) = (waiting("Database"), waiting("Cache"));
        let both = [db.clone(), cache.clone()];
        // Seen in the focused window: nothing to notify.
        assert_eq!(notices.update(&both, true, false), None);
        // Hidden with both waiting: a persistent notification at once.
        let Some(NoticeCommand::Show(shown)) = notices.update(&both, false, true) else {
            panic!("a notification when the window hides with requests waiting")
        };
        assert!(shown.persistent);
        assert_eq!(shown.summary, "2 questions waiting");
        // One is answered elsewhere: it is updated, still persistent.
        let Some(NoticeCommand::Show(updated)) =
            notices.update(std::slice::from_ref(&cache), false, true)
        else {
            panic!("updated")
        };
        assert!(updated.persistent && updated.open == cache.id);
        // Shown again and focused: it closes.
        assert_eq!(
            notices.update(std::slice::from_ref(&cache), true, false),
            Some(NoticeCommand::Close)
        );
        // Hidden with nothing waiting: nothing.
        assert_eq!(notices.update(&[], false, true), None);
    }
}
