//! `askpane status` (issue 29 item 6): what waits in the inbox, summed up for a status bar or a
//! prompt, from the inbox's `list` (and `asked` / `settled` events). Pure: the caller passes the
//! open requests and the time; this says what to print in each `--format`.
//!
//! The JSON format is a stable schema (docs/src/status.md): fields are only ever added.
//! `waybar` is waybar's custom-module JSON (`text`, `tooltip`, `class`, `alt`), whose `text` and
//! `tooltip` waybar reads as Pango markup: every name an agent sent is escaped for it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::inbox::{AskKind, Listed};
use super::markup;

/// Whether an inbox answered: a status bar shows "0" either way, scripts can tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxState {
    /// An inbox of this user answered on its socket.
    Running,
    /// No inbox runs (or none could be reached).
    None,
}

/// One waiting ask, as the JSON format lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitingAsk {
    /// Questions, or a tool call to allow (an approval card).
    pub kind: AskKind,
    /// The adapter that asked (`hook`, `mcp`, …); `unknown` from an inbox too old to say.
    pub agent: String,
    pub project: Option<String>,
    /// The first question's header or text.
    pub title: String,
    /// Who asked, as the window names it (`hook · my-project · default`).
    pub from: String,
    /// The SSH host it came from (`askpane remote`), `null` for this machine.
    pub host: Option<String>,
    /// How long it has waited, in seconds (`null` from an inbox too old to say).
    pub waiting_secs: Option<u64>,
    /// Seconds left before its client's `--timeout` runs out; `null` when it has none.
    pub deadline_secs: Option<u64>,
}

/// What waits in the inbox: the JSON format's object, field for field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub inbox: InboxState,
    /// How many asks wait for the person.
    pub waiting: usize,
    /// How long the oldest has waited, in seconds.
    pub oldest_secs: Option<u64>,
    /// Seconds left before the nearest deadline of any waiting ask.
    pub nearest_deadline_secs: Option<u64>,
    /// How many wait per agent (adapter) name.
    pub agents: BTreeMap<String, usize>,
    /// Every waiting ask, the oldest first.
    pub asks: Vec<WaitingAsk>,
}

/// The agent name an inbox too old to send one is counted under.
const UNKNOWN_AGENT: &str = "unknown";

impl Summary {
    /// No inbox runs: every format's zero.
    pub fn no_inbox() -> Summary {
        Summary::of(InboxState::None, &[], 0)
    }

    /// The summary of `open` (the inbox's `list`) at `now` (seconds since the Unix epoch).
    pub fn of(inbox: InboxState, open: &[Listed], now: u64) -> Summary {
        let mut asks: Vec<WaitingAsk> = open
            .iter()
            .map(|listed| WaitingAsk {
                // An inbox too old to say listed questions only.
                kind: listed.kind.unwrap_or(AskKind::Question),
                agent: listed.agent.clone().unwrap_or_else(|| UNKNOWN_AGENT.to_owned()),
                project: listed.project.clone(),
                title: listed.title.clone(),
                from: listed.from.clone(),
                host: listed.host.clone(),
                waiting_secs: listed.asked_at.map(|at| now.saturating_sub(at)),
                deadline_secs: listed.deadline_at.map(|at| at.saturating_sub(now)),
            })
            .collect();
        // The oldest first; those of unknown age last.
        asks.sort_by_key(|ask| std::cmp::Reverse(ask.waiting_secs));
        let mut agents = BTreeMap::new();
        for ask in &asks {
            *agents.entry(ask.agent.clone()).or_insert(0) += 1;
        }
        Summary {
            inbox,
            waiting: asks.len(),
            oldest_secs: asks.iter().filter_map(|ask| ask.waiting_secs).max(),
            nearest_deadline_secs: asks.iter().filter_map(|ask| ask.deadline_secs).min(),
            agents,
            asks,
        }
    }

    /// `--format text`: `0` when nothing waits, else the count first (so `cut -d' ' -f1`
    /// gives it) and then what there is to say: `3 waiting · oldest 2m · deadline in 45s ·
    /// hook 2, mcp 1`. Always one line.
    pub fn text(&self) -> String {
        if self.waiting == 0 {
            return "0".to_owned();
        }
        let mut parts = vec![format!("{} waiting", self.waiting)];
        if let Some(oldest) = self.oldest_secs {
            parts.push(format!("oldest {}", duration(oldest)));
        }
        if let Some(deadline) = self.nearest_deadline_secs {
            parts.push(format!("deadline in {}", duration(deadline)));
        }
        parts.push(self.per_agent());
        one_line(&parts.join(" · "))
    }

    /// `--format json`: this summary as one line of JSON.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| r#"{"inbox":"none","waiting":0}"#.into())
    }

    /// `--format waybar`: waybar's custom-module JSON, one line. `text` is the count, `class`
    /// and `alt` are `waiting` or `idle`, and `tooltip` names each ask (escaped as Pango markup
    /// needs: waybar parses both).
    pub fn waybar(&self) -> String {
        let state = if self.waiting == 0 { "idle" } else { "waiting" };
        let tooltip = match (self.inbox, self.waiting) {
            (InboxState::None, _) => "askpane: no inbox runs".to_owned(),
            (InboxState::Running, 0) => "askpane: nothing waits".to_owned(),
            (InboxState::Running, _) => {
                let mut lines = vec![format!("askpane: {}", self.text())];
                lines.extend(self.asks.iter().map(tooltip_line));
                lines.join("\n")
            }
        };
        let module = Waybar {
            text: self.waiting.to_string(),
            tooltip: markup::escape(&tooltip),
            class: state,
            alt: state,
        };
        serde_json::to_string(&module)
            .unwrap_or_else(|_| r#"{"text":"0","class":"idle","alt":"idle"}"#.into())
    }

    /// `hook 2, mcp 1`.
    fn per_agent(&self) -> String {
        let counts: Vec<String> =
            self.agents.iter().map(|(agent, count)| format!("{agent} {count}")).collect();
        counts.join(", ")
    }
}

/// waybar's custom-module JSON (its `return-type: json`).
#[derive(Serialize)]
struct Waybar<'a> {
    text: String,
    tooltip: String,
    class: &'a str,
    alt: &'a str,
}

/// One ask in waybar's tooltip: `hook · my-project: Which colour? (2m, 45s left)`, one line
/// whatever the names hold.
fn tooltip_line(ask: &WaitingAsk) -> String {
    let mut when = Vec::new();
    if let Some(waiting) = ask.waiting_secs {
        when.push(duration(waiting));
    }
    if let Some(deadline) = ask.deadline_secs {
        when.push(format!("{} left", duration(deadline)));
    }
    let when = match when.is_empty() {
        true => String::new(),
        false => format!(" ({})", when.join(", ")),
    };
    one_line(&format!("{}: {}{when}", ask.from, ask.title))
}

/// `text` with every control character (a newline in a project's name) made a space: each ask
/// keeps to its line, and a watch's output to one line per change.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// A short age: `45s`, `12m`, `3h5m`, `2d4h` (also the inbox's uptime in `askpane doctor`).
pub(crate) fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h{}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d{}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn listed(
        id: &str,
        agent: &str,
        project: &str,
        asked_at: u64,
        deadline: Option<u64>,
    ) -> Listed {
        Listed {
            connection: 1,
            id: id.to_owned(),
            from: format!("{agent} · {project} · default"),
            title: "Colour".to_owned(),
            tool_use_id: None,
            pid: None,
            host: None,
            agent: Some(agent.to_owned()),
            project: Some(project.to_owned()),
            asked_at: Some(asked_at),
            deadline_at: deadline,
            kind: None,
            content: None,
        }
    }

    #[test]
    fn nothing_waiting_is_every_format_s_zero() {
        for summary in [Summary::no_inbox(), Summary::of(InboxState::Running, &[], 100)] {
            assert_eq!(summary.text(), "0");
            let waybar: Value = serde_json::from_str(&summary.waybar()).expect("JSON");
            assert_eq!(waybar["text"], "0");
            assert_eq!(waybar["class"], "idle");
            assert_eq!(waybar["alt"], "idle");
            let json: Value = serde_json::from_str(&summary.json()).expect("JSON");
            assert_eq!(json["waiting"], 0);
            assert_eq!(json["asks"], json!([]));
        }
        assert_eq!(
            Summary::no_inbox().json(),
            r#"{"inbox":"none","waiting":0,"oldest_secs":null,"nearest_deadline_secs":null,"agents":{},"asks":[]}"#
        );
    }

    #[test]
    fn three_asks_are_counted_by_agent_with_the_oldest_age_and_the_nearest_deadline() {
        let open = [
            listed("1", "hook", "shop", 1000, None),
            listed("2", "mcp", "shop", 900, Some(1200)),
            listed("3", "hook", "blog", 1030, Some(1045)),
        ];
        let summary = Summary::of(InboxState::Running, &open, 1030);
        assert_eq!(summary.text(), "3 waiting · oldest 2m · deadline in 15s · hook 2, mcp 1");
        let json: Value = serde_json::from_str(&summary.json()).expect("JSON");
        assert_eq!(json["inbox"], "running");
        assert_eq!(json["oldest_secs"], 130);
        assert_eq!(json["nearest_deadline_secs"], 15);
        assert_eq!(json["agents"], json!({"hook": 2, "mcp": 1}));
        assert_eq!(
            json["asks"][0],
            json!({"kind": "question", "agent": "mcp", "project": "shop", "title": "Colour",
                   "from": "mcp · shop · default", "host": null, "waiting_secs": 130,
                   "deadline_secs": 170})
        );
        let waybar: Value = serde_json::from_str(&summary.waybar()).expect("JSON");
        assert_eq!(waybar["text"], "3");
        assert_eq!(waybar["class"], "waiting");
        assert_eq!(
            waybar["tooltip"],
            "askpane: 3 waiting · oldest 2m · deadline in 15s · hook 2, mcp 1\n\
             mcp · shop · default: Colour (2m, 2m left)\n\
             hook · shop · default: Colour (30s)\n\
             hook · blog · default: Colour (0s, 15s left)"
        );
    }

    #[test]
    fn hostile_names_stay_on_their_line_and_are_escaped_for_pango() {
        let mut ask = listed("1", "hook", "<b>x</b> & \"q\" 'a'\nnext", 10, None);
        ask.from = format!("hook · {}", ask.project.clone().unwrap_or_default());
        ask.agent = Some("evil\nagent".to_owned());
        let summary = Summary::of(InboxState::Running, &[ask], 20);
        assert!(!summary.text().contains('\n'), "{}", summary.text());
        let line = summary.waybar();
        assert!(!line.contains('\n'), "one line: {line}");
        let waybar: Value = serde_json::from_str(&line).expect("JSON");
        let tooltip = waybar["tooltip"].as_str().expect("a tooltip");
        assert!(!tooltip.contains("<b>"), "{tooltip}");
        assert!(
            tooltip.contains(
                "hook · &lt;b&gt;x&lt;/b&gt; &amp; &quot;q&quot; &#39;a&#39; next: Colour (10s)"
            ),
            "{tooltip}"
        );
        assert_eq!(tooltip.lines().count(), 2, "{tooltip}");
    }

    #[test]
    fn ages_are_short() {
        assert_eq!(duration(59), "59s");
        assert_eq!(duration(60), "1m");
        assert_eq!(duration(3599), "59m");
        assert_eq!(duration(3600 + 5 * 60), "1h5m");
        assert_eq!(duration(2 * 86_400 + 4 * 3600), "2d4h");
    }
}
