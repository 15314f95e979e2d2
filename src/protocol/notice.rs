//! Desktop notifications for waiting questions and tool calls (issues 11, 26), decided from plain data: which
//! notification the inbox shows, with what text, and when it is replaced or closed. The D-Bus side
//! is `transport::notify`; the window feeds [`Notices::update`] what waits and whether it has focus.
//!
//! Issue 26 item 6: Claude Code terminals that say they wait (their `Notification` hook) join the
//! same notification as [`WaitingKind::Terminal`] entries, held by [`Terminals`] (the window does
//! not show them), one per session, never for a session whose ask the inbox already shows.

use super::hook_notification::TerminalNotice;
use super::origin::RequestId;

/// Longest summary line, in characters: a notification's title is one short line.
const SUMMARY_CHARS: usize = 80;
/// Longest body, in characters: enough for a question, short of a wall of text on the desktop.
const BODY_CHARS: usize = 300;
/// How many waiting requests a grouped notification names before "and N more".
const LISTED: usize = 4;
/// How many terminals are held at most (the oldest goes): a flood of notices from a broken or
/// hostile hook must not grow the notifier without bound.
const TERMINALS_HELD: usize = 16;

/// One request waiting for the user, as a notification names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub id: RequestId,
    pub kind: WaitingKind,
    /// The project the agent works in, when known.
    pub project: Option<String>,
    /// The agent's session (Claude Code's `session_id`), when known: a terminal of a session
    /// whose ask is listed here is not announced twice.
    pub session: Option<String>,
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
    /// A Claude Code terminal that waits on its own (its `Notification` hook): `header` is the
    /// terminal's headline, `question` what Claude Code said. Not in the window: only notified.
    Terminal,
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
    /// Whether it offers "Open": not when it names terminals alone, which the window does not
    /// show (nor when a hook raised it itself, gone before anyone clicks).
    pub opens: bool,
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
    /// What the notification up lists (or would list), to tell when it must change.
    listed: Vec<RequestId>,
    /// The notification up names a request of the inbox's (not only terminals).
    names_requests: bool,
}

impl Notices {
    /// The command for what waits now (`waiting` in arrival order), `None` when nothing changes.
    ///
    /// - A request arrives while the window does not have focus: a notification, for that one
    ///   request or grouped ("3 questions waiting") when several wait. It replaces the one up.
    /// - A request leaves while a notification is up: the notification is updated, or closed when
    ///   nothing waits any more.
    /// - The window has focus: the user is looking at the questions, so any notification closes,
    ///   except for terminals that wait ([`WaitingKind::Terminal`]): the window does not show them.
    /// - The window is hidden with requests waiting ("keep waiting in the background"): one
    ///   persistent notification says what waits, from the moment it hides (issue 24: agents were
    ///   left blocked with nothing on screen), until it is shown or nothing waits.
    pub fn update(
        &mut self,
        waiting: &[Waiting],
        focused: bool,
        hidden: bool,
    ) -> Option<NoticeCommand> {
        let arrived: Vec<RequestId> = waiting
            .iter()
            .filter(|request| !self.seen.contains(&request.id))
            .map(|request| request.id)
            .collect();
        let just_hidden = hidden && !self.hidden;
        self.seen = waiting.iter().map(|request| request.id).collect();
        self.hidden = hidden;
        // Someone looks at the window: what it shows needs no notification.
        let looking = focused && !hidden;
        let listed: Vec<Waiting> = waiting
            .iter()
            .filter(|request| !looking || request.kind == WaitingKind::Terminal)
            .cloned()
            .collect();
        let listed_ids: Vec<RequestId> = listed.iter().map(|request| request.id).collect();
        let changed = listed_ids != self.listed;
        self.listed = listed_ids;
        if listed.is_empty() {
            self.names_requests = false;
            return std::mem::take(&mut self.showing).then_some(NoticeCommand::Close);
        }
        // Terminals alone are announced, not kept up: hiding the window changes nothing for
        // them, and they never make the notification persistent.
        let requests = listed.iter().any(|request| request.kind != WaitingKind::Terminal);
        // The newest arrival is what the notification is about; when only departures changed
        // the list (or the window just hid), the newest still waiting.
        let newest_arrival = listed.iter().rev().find(|request| arrived.contains(&request.id));
        let newest = match newest_arrival {
            Some(newest) => newest,
            None if (self.showing && changed) || (just_hidden && requests) => listed.last()?,
            None => return None,
        };
        self.showing = true;
        self.names_requests = requests;
        let mut shown = notification(&listed, newest);
        shown.persistent = hidden && requests;
        Some(NoticeCommand::Show(shown))
    }

    /// The notification was closed by the user or the server (dismissed, expired, its action
    /// taken): the next arrival shows a new one; departures alone show nothing.
    pub fn dismissed(&mut self) {
        self.showing = false;
        self.names_requests = false;
    }

    /// Whether the notification up names a request of the inbox's: the inbox closes it when it
    /// ends (its requests are answered then). One naming terminals alone is left to the person
    /// (it stays when the inbox goes lean, issue 14).
    pub fn names_requests(&self) -> bool {
        self.showing && self.names_requests
    }
}

/// The Claude Code terminals that said they wait (issue 26 item 6), oldest first, at most one
/// per session: the notifier holds them beside what the window reports.
#[derive(Debug, Default)]
pub struct Terminals {
    held: Vec<Waiting>,
}

impl Terminals {
    /// A terminal's notice arrives as request `id`: held (replacing that session's earlier one),
    /// unless the inbox already shows an ask of its session (false: that card notified already).
    pub fn arrive(&mut self, notice: &TerminalNotice, id: RequestId, inbox: &[Waiting]) -> bool {
        if shown_in_inbox(notice.session_id.as_deref(), inbox) {
            return false;
        }
        if let Some(session) = &notice.session_id {
            self.held.retain(|held| held.session.as_ref() != Some(session));
        }
        self.held.push(terminal_waiting(notice, id));
        if self.held.len() > TERMINALS_HELD {
            self.held.remove(0);
        }
        true
    }

    /// What the window now shows arrived: a terminal whose session has an ask in it leaves
    /// (the card speaks for that session now).
    pub fn settle(&mut self, inbox: &[Waiting]) {
        self.held.retain(|held| !shown_in_inbox(held.session.as_deref(), inbox));
    }

    /// The notification was dismissed, expired or opened: the person has seen them.
    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// The inbox's requests and the terminals held, in arrival order (ids are given in order).
    pub fn beside(&self, inbox: &[Waiting]) -> Vec<Waiting> {
        let mut all: Vec<Waiting> = inbox.iter().chain(&self.held).cloned().collect();
        all.sort_by_key(|request| request.id);
        all
    }
}

/// The one rule against duplicates (issue 26 item 6): whether the inbox already shows an ask
/// (a question, a tool call, a plan) of `session`, whose card notified when it came. A notice
/// of an unknown session is never taken for a duplicate.
pub fn shown_in_inbox(session: Option<&str>, inbox: &[Waiting]) -> bool {
    let Some(session) = session else { return false };
    inbox.iter().any(|request| {
        request.kind != WaitingKind::Terminal && request.session.as_deref() == Some(session)
    })
}

/// A terminal's notice as one of what waits: named by its headline, its words as the text.
pub fn terminal_waiting(notice: &TerminalNotice, id: RequestId) -> Waiting {
    Waiting {
        id,
        kind: WaitingKind::Terminal,
        project: notice.project.clone(),
        session: notice.session_id.clone(),
        header: notice.headline(),
        question: notice.words(),
        host: notice.host.clone(),
    }
}

/// The notification for a terminal's notice alone: what the hook raises itself when no inbox
/// runs (the inbox's own would say the same).
pub fn terminal_notification(notice: &TerminalNotice, id: RequestId) -> Notification {
    let only = terminal_waiting(notice, id);
    notification(std::slice::from_ref(&only), &only)
}

/// The notification for `waiting` (not empty), whose "Open" shows `newest`.
fn notification(waiting: &[Waiting], newest: &Waiting) -> Notification {
    let opens = waiting.iter().any(|request| request.kind != WaitingKind::Terminal);
    if let [only] = waiting {
        return Notification {
            summary: clip(&one_line(&name(only)), SUMMARY_CHARS),
            body: clip(&plain(&only.question), BODY_CHARS),
            open: only.id,
            opens,
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
        opens,
        persistent: false,
    }
}

/// The title of a notification for several: `3 questions waiting`, `2 tool calls waiting`, or
/// `3 waiting: 2 questions, 1 tool call` (terminals counted as `1 terminal`).
fn grouped_summary(waiting: &[Waiting]) -> String {
    let count = |kind: WaitingKind| waiting.iter().filter(|request| request.kind == kind).count();
    let counted = |count: usize, one: &str, many: &str| match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {many}"),
    };
    let kinds: Vec<String> = [
        (count(WaitingKind::Question), "question", "questions"),
        (count(WaitingKind::ToolCall), "tool call", "tool calls"),
        (count(WaitingKind::Terminal), "terminal", "terminals"),
    ]
    .into_iter()
    .filter(|(count, _, _)| *count > 0)
    .map(|(count, one, many)| counted(count, one, many))
    .collect();
    match kinds.as_slice() {
        [only] => format!("{only} waiting"),
        _ => format!("{} waiting: {}", waiting.len(), kinds.join(", ")),
    }
}

/// `project · header`, or whichever of the two there is, and `@ host` for an SSH host's.
fn name(request: &Waiting) -> String {
    let named = match request.kind {
        // A terminal's headline names its project itself.
        WaitingKind::Terminal => request.header.clone(),
        WaitingKind::Question | WaitingKind::ToolCall => local_name(request),
    };
    match request.host.as_deref() {
        Some(host) => format!("{named} @ {host}"),
        None => named,
    }
}

/// [`name`] before the host.
fn local_name(request: &Waiting) -> String {
    let project = request.project.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let header = Some(request.header.trim()).filter(|h| !h.is_empty());
    match (project, header) {
        (Some(project), Some(header)) => format!("{project} · {header}"),
        (Some(only), None) | (None, Some(only)) => only.to_owned(),
        (None, None) => match request.kind {
            WaitingKind::Question => "A question".to_owned(),
            WaitingKind::ToolCall => "A tool call".to_owned(),
            WaitingKind::Terminal => "A terminal".to_owned(),
        },
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
            session: None,
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
                opens: true,
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
                opens: true,
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
            session: None,
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

#[cfg(test)]
#[allow(clippy::panic, reason = "a test may assume: a failed assumption is a failed test")]
mod terminal_tests {
    use super::*;
    use crate::protocol::hook_notification::parse_notification;

    fn notice(kind: &str, session: Option<&str>, cwd: &str) -> TerminalNotice {
        let mut input = serde_json::json!({"hook_event_name": "Notification",
        "notification_type": kind, "cwd": cwd,
        "message": match kind {
            "idle_prompt" => "Claude is waiting for your input",
            _ => "Claude needs your permission",
        }});
        if let Some(session) = session {
            input["session_id"] = serde_json::json!(session);
        }
        parse_notification(&input).unwrap_or_else(|| panic!("a notice: {input}"))
    }

    fn card(session: Option<&str>, kind: WaitingKind) -> Waiting {
        Waiting {
            id: RequestId::next(),
            kind,
            project: Some("orders".to_owned()),
            session: session.map(str::to_owned),
            header: "Bash".to_owned(),
            question: "npm test".to_owned(),
            host: None,
        }
    }

    fn shown(command: Option<NoticeCommand>) -> Notification {
        match command {
            Some(NoticeCommand::Show(notification)) => notification,
            other => panic!("expected a notification, got {other:?}"),
        }
    }

    const SESSION: &str = "3f2a1b2c-9d8e-4f00-8000-000000000001";

    #[test]
    fn a_session_whose_ask_the_inbox_shows_is_a_duplicate_and_nothing_else_is() {
        let question = card(Some(SESSION), WaitingKind::Question);
        let call = card(Some(SESSION), WaitingKind::ToolCall);
        let elsewhere = card(Some("other-session"), WaitingKind::ToolCall);
        let unknown = card(None, WaitingKind::Question);
        assert!(shown_in_inbox(Some(SESSION), std::slice::from_ref(&question)));
        assert!(shown_in_inbox(Some(SESSION), &[elsewhere.clone(), call]));
        assert!(!shown_in_inbox(Some(SESSION), &[elsewhere, unknown.clone()]));
        assert!(!shown_in_inbox(None, &[unknown]), "an unknown session is no duplicate");
        assert!(!shown_in_inbox(Some(SESSION), &[]));
        // A terminal of the session (an earlier notice) is no card: it is replaced, not a reason.
        let terminal =
            terminal_waiting(&notice("idle_prompt", Some(SESSION), "/w/orders"), RequestId::next());
        assert!(!shown_in_inbox(Some(SESSION), &[terminal]));
    }

    #[test]
    fn a_terminal_notification_names_project_and_session_then_claude_codes_words() {
        let one = terminal_notification(
            &notice("permission_prompt", Some(SESSION), "/home/dev/orders"),
            RequestId::next(),
        );
        assert_eq!(one.summary, "Claude Code waits in orders (session 3f2a1b2c)");
        assert_eq!(one.body, "Claude needs your permission");
        assert!(!one.persistent);
        assert!(!one.opens, "the window has nothing of a terminal's to open");
        let finished = terminal_notification(
            &notice("auth_success", None, "/home/dev/orders"),
            RequestId::next(),
        );
        assert_eq!(finished.summary, "Claude Code in orders");
    }

    /// Issues 26 × 27: a terminal on an SSH host, its notice stamped by the inbox with the
    /// link's host, says where it waits.
    #[test]
    fn a_remote_terminal_s_notification_names_its_host() {
        let mut remote = notice("permission_prompt", Some(SESSION), "/home/dev/orders");
        remote.host = Some("devbox".to_owned());
        let one = terminal_notification(&remote, RequestId::next());
        assert_eq!(one.summary, "Claude Code waits in orders (session 3f2a1b2c) @ devbox");
    }

    #[test]
    fn terminals_join_the_inbox_notification_one_per_session_and_leave_when_a_card_comes() {
        let mut terminals = Terminals::default();
        let mut notices = Notices::default();
        let question = Waiting {
            kind: WaitingKind::Question,
            ..card(Some("q-session"), WaitingKind::Question)
        };
        let inbox = vec![question.clone()];
        shown(notices.update(&inbox, false, false));
        assert!(terminals.arrive(
            &notice("permission_prompt", Some(SESSION), "/w/orders"),
            RequestId::next(),
            &inbox
        ));
        let both = shown(notices.update(&terminals.beside(&inbox), false, false));
        assert_eq!(both.summary, "2 waiting: 1 question, 1 terminal");
        assert!(both.opens, "Open shows the question");
        assert_eq!(
            both.body,
            "Claude Code waits in orders (session 3f2a1b2c): Claude needs your permission\norders · Bash: npm test"
        );
        // The same session again (now idle): it replaces its earlier notice.
        assert!(terminals.arrive(
            &notice("idle_prompt", Some(SESSION), "/w/orders"),
            RequestId::next(),
            &inbox
        ));
        let replaced = shown(notices.update(&terminals.beside(&inbox), false, false));
        assert_eq!(replaced.summary, "2 waiting: 1 question, 1 terminal");
        assert!(
            replaced
                .body
                .starts_with("Claude Code waits in orders (session 3f2a1b2c): Claude is waiting")
        );
        // A card of that session arrives: the terminal leaves, the card speaks for it.
        let card_of_it = card(Some(SESSION), WaitingKind::ToolCall);
        let inbox = vec![question.clone(), card_of_it.clone()];
        terminals.settle(&inbox);
        assert_eq!(terminals.beside(&inbox).len(), 2);
        // While that card waits, the session's notices are refused: no second notification.
        assert!(!terminals.arrive(
            &notice("permission_prompt", Some(SESSION), "/w/orders"),
            RequestId::next(),
            &inbox
        ));
        assert_eq!(terminals.beside(&inbox), inbox);
    }

    #[test]
    fn a_terminal_is_notified_even_while_the_window_has_focus_which_does_not_show_it() {
        let mut terminals = Terminals::default();
        let mut notices = Notices::default();
        let question = card(Some("q"), WaitingKind::Question);
        let inbox = vec![question];
        assert_eq!(notices.update(&inbox, true, false), None, "the window shows the question");
        assert!(terminals.arrive(
            &notice("idle_prompt", Some(SESSION), "/w/orders"),
            RequestId::next(),
            &inbox
        ));
        let alone = shown(notices.update(&terminals.beside(&inbox), true, false));
        assert_eq!(alone.summary, "Claude Code waits in orders (session 3f2a1b2c)");
        // Nothing changed for the notification: nothing to do.
        assert_eq!(notices.update(&terminals.beside(&inbox), true, false), None);
        // Focus lost: the question joins it; the person dismisses it: the terminals are seen.
        let grouped = shown(notices.update(&terminals.beside(&inbox), false, false));
        assert_eq!(grouped.summary, "2 waiting: 1 question, 1 terminal");
        notices.dismissed();
        terminals.clear();
        assert_eq!(notices.update(&terminals.beside(&inbox), false, false), None);
    }

    /// A hidden window (a lean inbox resumed for a notice) makes a terminal's notification
    /// neither persistent nor shown again; it names no request, so the inbox leaves it up.
    #[test]
    fn terminals_alone_are_never_persistent_and_left_up_at_the_end() {
        let mut terminals = Terminals::default();
        let mut notices = Notices::default();
        assert!(terminals.arrive(
            &notice("idle_prompt", Some(SESSION), "/w/orders"),
            RequestId::next(),
            &[]
        ));
        let alone = shown(notices.update(&terminals.beside(&[]), false, false));
        assert!(!alone.persistent);
        assert!(!notices.names_requests());
        assert_eq!(
            notices.update(&terminals.beside(&[]), false, true),
            None,
            "hidden: nothing new"
        );
        let question = card(Some("q"), WaitingKind::Question);
        let inbox = vec![question];
        let both = shown(notices.update(&terminals.beside(&inbox), false, true));
        assert!(both.persistent, "a request waits behind a hidden window");
        assert!(notices.names_requests());
        assert_eq!(
            notices.update(&terminals.beside(&[]), false, true).map(|c| match c {
                NoticeCommand::Show(n) => n.persistent,
                NoticeCommand::Close => true,
            }),
            Some(false)
        );
        assert!(!notices.names_requests());
    }

    #[test]
    fn a_flood_of_sessions_keeps_the_newest_sixteen() {
        let mut terminals = Terminals::default();
        for n in 0..40 {
            let session = format!("session-{n:02}");
            assert!(terminals.arrive(
                &notice("idle_prompt", Some(&session), "/w/x"),
                RequestId::next(),
                &[]
            ));
        }
        let held = terminals.beside(&[]);
        assert_eq!(held.len(), TERMINALS_HELD);
        assert_eq!(held.first().and_then(|w| w.session.as_deref()), Some("session-24"));
        // Notices without a session are each their own.
        let mut unnamed = Terminals::default();
        unnamed.arrive(&notice("idle_prompt", None, "/w/x"), RequestId::next(), &[]);
        unnamed.arrive(&notice("idle_prompt", None, "/w/x"), RequestId::next(), &[]);
        assert_eq!(unnamed.beside(&[]).len(), 2);
    }
}
