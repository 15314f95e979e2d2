//! The tray icon's content (issue 29 item 5): what a StatusNotifierItem shows for the asks that
//! wait (icon, status, tooltip) and which entries its menu has. Pure: the caller passes the open
//! asks (as `list` and the `asked` / `settled` events give them); `transport::tray` puts this on
//! the bus.

use super::inbox::{AskKind, Listed};

/// The icon while nothing waits: askpane's own (the package installs it; a tray without it
/// shows its fallback).
pub const IDLE_ICON: &str = "askpane";

/// The icon while something waits: the freedesktop theme's question mark, which every icon
/// theme has (the desktop notification uses it too).
pub const WAITING_ICON: &str = "dialog-question";

/// A StatusNotifierItem's `Status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrayStatus {
    /// Nothing waits: the tray may tuck the icon away.
    Active,
    /// Something waits for the person.
    NeedsAttention,
}

impl TrayStatus {
    /// The name the specification gives it.
    pub fn name(self) -> &'static str {
        match self {
            TrayStatus::Active => "Active",
            TrayStatus::NeedsAttention => "NeedsAttention",
        }
    }
}

/// What a menu entry does when clicked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrayAction {
    /// Brings the window back.
    Show,
    /// No desktop notifications for the next hour.
    PauseNotifications,
    /// Ends the inbox as `askpane inbox --quit` does.
    Quit,
}

/// One menu entry: its dbusmenu id, label and action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MenuEntry {
    pub id: i32,
    pub label: String,
    pub action: TrayAction,
}

/// The menu ids of the fixed entries; waiting asks get ids from [`FIRST_ASK_ID`] on.
const SHOW_ID: i32 = 1;
const PAUSE_ID: i32 = 2;
const QUIT_ID: i32 = 3;
const FIRST_ASK_ID: i32 = 100;

/// How many waiting asks the menu names one by one; the rest are behind "Show window".
const ASKS_IN_MENU: usize = 10;

/// The longest label a waiting ask's entry gets, in characters.
const LABEL_CHARS: usize = 60;

/// What waits, as the tray shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrayView {
    questions: usize,
    approvals: usize,
    /// Each waiting ask's menu label, in the order they arrived.
    asks: Vec<String>,
}

impl TrayView {
    /// The view of `open`, in the order given.
    pub fn of(open: &[Listed]) -> TrayView {
        let mut view = TrayView::default();
        for listed in open {
            // An inbox too old to say listed questions only.
            match listed.kind.unwrap_or(AskKind::Question) {
                AskKind::Question => view.questions += 1,
                AskKind::Approval => view.approvals += 1,
            }
            view.asks.push(label(listed));
        }
        view
    }

    /// How many asks wait.
    pub fn waiting(&self) -> usize {
        self.questions + self.approvals
    }

    pub fn icon_name(&self) -> &'static str {
        match self.waiting() {
            0 => IDLE_ICON,
            _ => WAITING_ICON,
        }
    }

    pub fn status(&self) -> TrayStatus {
        match self.waiting() {
            0 => TrayStatus::Active,
            _ => TrayStatus::NeedsAttention,
        }
    }

    /// The tooltip's title: `2 waiting: 1 question, 1 tool call`, or `nothing waiting`.
    pub fn tooltip(&self) -> String {
        if self.waiting() == 0 {
            return "nothing waiting".to_owned();
        }
        let mut parts = Vec::new();
        if self.questions > 0 {
            parts.push(counted(self.questions, "question", "questions"));
        }
        if self.approvals > 0 {
            parts.push(counted(self.approvals, "tool call", "tool calls"));
        }
        format!("{} waiting: {}", self.waiting(), parts.join(", "))
    }

    /// The menu, top to bottom: Show window, each waiting ask (which shows the window: the
    /// inbox's socket names no request the window could be opened on), pause, quit.
    /// `paused` says whether notifications are paused now (the entry says so).
    pub fn menu(&self, paused: bool) -> Vec<MenuEntry> {
        let mut entries = vec![MenuEntry {
            id: SHOW_ID,
            label: "Show window".to_owned(),
            action: TrayAction::Show,
        }];
        for (ask, id) in self.asks.iter().take(ASKS_IN_MENU).zip(FIRST_ASK_ID..) {
            entries.push(MenuEntry { id, label: ask.clone(), action: TrayAction::Show });
        }
        let pause = match paused {
            true => "Notifications paused (click for another hour)",
            false => "Pause notifications for an hour",
        };
        entries.push(MenuEntry {
            id: PAUSE_ID,
            label: pause.to_owned(),
            action: TrayAction::PauseNotifications,
        });
        entries.push(MenuEntry {
            id: QUIT_ID,
            label: "Quit the inbox".to_owned(),
            action: TrayAction::Quit,
        });
        entries
    }
}

fn counted(count: usize, one: &str, many: &str) -> String {
    match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {many}"),
    }
}

/// A waiting ask's menu label: its title and who asked, on one line, bounded. dbusmenu reads
/// `_` as a mnemonic mark, so each is doubled.
fn label(listed: &Listed) -> String {
    let line: String = format!("{} — {}", listed.title, listed.from)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut bounded: String = line.chars().take(LABEL_CHARS).collect();
    if line.chars().count() > LABEL_CHARS {
        bounded.push('…');
    }
    bounded.replace('_', "__")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: &str, kind: Option<AskKind>, title: &str) -> Listed {
        Listed {
            connection: 1,
            id: id.to_owned(),
            from: "hook · proj · default".to_owned(),
            title: title.to_owned(),
            tool_use_id: None,
            pid: None,
            host: None,
            agent: Some("hook".to_owned()),
            project: Some("proj".to_owned()),
            asked_at: None,
            deadline_at: None,
            kind,
            content: None,
        }
    }

    #[test]
    fn nothing_waiting_is_idle() {
        let view = TrayView::of(&[]);
        assert_eq!(view.icon_name(), IDLE_ICON);
        assert_eq!(view.status(), TrayStatus::Active);
        assert_eq!(view.tooltip(), "nothing waiting");
        let labels: Vec<_> = view.menu(false).into_iter().map(|entry| entry.label).collect();
        assert_eq!(labels, ["Show window", "Pause notifications for an hour", "Quit the inbox"]);
    }

    #[test]
    fn a_question_and_a_tool_call_are_counted_apart() {
        let open = [
            listed("a", Some(AskKind::Question), "Deploy?"),
            listed("b", Some(AskKind::Approval), "Bash"),
        ];
        let view = TrayView::of(&open);
        assert_eq!(view.icon_name(), WAITING_ICON);
        assert_eq!(view.status(), TrayStatus::NeedsAttention);
        assert_eq!(view.tooltip(), "2 waiting: 1 question, 1 tool call");
        let menu = view.menu(true);
        assert_eq!(
            menu.get(1).map(|entry| entry.label.as_str()),
            Some("Deploy? — hook · proj · default")
        );
        assert_eq!(menu.get(3).map(|entry| entry.action), Some(TrayAction::PauseNotifications));
    }

    #[test]
    fn hostile_titles_stay_one_bounded_line() {
        let title = format!("a_b\nc{}", "x".repeat(200));
        let view = TrayView::of(&[listed("a", None, &title), listed("b", None, "q")]);
        assert_eq!(view.tooltip(), "2 waiting: 2 questions");
        let menu = view.menu(false);
        let label = &menu.get(1).expect("an entry").label;
        assert!(!label.contains('\n'));
        assert!(label.starts_with("a__b c"));
        assert!(label.chars().count() <= LABEL_CHARS + 2);
    }
}
