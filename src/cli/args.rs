//! The argument groups several modes share: where questions are shown ([`UiArgs`]), how a
//! request may be answered without a person ([`AnsweringArgs`]), where drafts and history are
//! kept ([`StoreArgs`]), and the reply envelope (`--format`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use askpane::protocol::ReplyFormat;
use askpane::store::{self, Store};

use super::show::missing_display;

/// Where the questions are shown.
#[derive(Args, Clone, Debug)]
pub(super) struct UiArgs {
    /// A native window, a browser page that askpane serves, or auto (native when a display
    /// exists, else the browser).
    #[arg(long, value_enum, value_name = "WHERE", default_value = "native", env = "ASKPANE_UI")]
    pub(super) ui: UiKind,
    /// Where `--ui web` listens (a loopback address unless you mean to share it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", env = "ASKPANE_BIND")]
    pub(super) bind: SocketAddr,
    /// `--ui web` for your phone: listen on this machine's network addresses too (on
    /// `--bind`'s port), and print a QR code of the link. Anyone on the network with the link
    /// can answer: see the manual's Security page (docs/src/security.md) before using it on a
    /// shared network.
    #[arg(long)]
    pub(super) lan: bool,
    /// The window's colours: auto follows the system, else the desktop's colour-scheme setting
    /// (the XDG portal or GNOME's), else dark.
    #[arg(long, value_enum, value_name = "THEME", default_value = "auto", env = "ASKPANE_THEME")]
    pub(super) theme: ThemeArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum ThemeArg {
    Auto,
    Dark,
    Light,
}

impl From<ThemeArg> for crate::window::ThemeChoice {
    fn from(theme: ThemeArg) -> Self {
        match theme {
            ThemeArg::Auto => crate::window::ThemeChoice::Auto,
            ThemeArg::Dark => crate::window::ThemeChoice::Dark,
            ThemeArg::Light => crate::window::ThemeChoice::Light,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum UiKind {
    Native,
    Web,
    Auto,
}

impl UiArgs {
    /// The native window, for runs that show nothing.
    pub(super) fn native() -> Self {
        UiArgs {
            ui: UiKind::Native,
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            lan: false,
            theme: ThemeArg::Auto,
        }
    }

    /// Where the browser bridge listens: `--bind`, or with `--lan` every address on its port.
    pub(super) fn bind_address(&self) -> SocketAddr {
        match self.lan {
            true => SocketAddr::from(([0, 0, 0, 0], self.bind.port())),
            false => self.bind,
        }
    }

    /// True when this run shows its questions in a browser.
    pub(super) fn web(&self) -> bool {
        match self.ui {
            UiKind::Native => false,
            UiKind::Web => true,
            UiKind::Auto => missing_display().is_some(),
        }
    }
}

/// How a request may be answered; each flag can also come from the environment, so a hook
/// started by Claude Code can be steered without editing its command.
#[derive(Args, Debug)]
pub(super) struct AnsweringArgs {
    /// Pre-selected answers (JSON keyed by question text or header) that fill the form.
    #[arg(long, value_name = "FILE", env = "ASKPANE_ANSWERS")]
    pub(super) answers: Option<PathBuf>,
    /// Send the --answers as they are, without showing the window.
    #[arg(long, requires = "answers", env = "ASKPANE_SUBMIT", value_parser = clap::builder::FalseyValueParser::new())]
    pub(super) submit: bool,
    /// Decline without showing the window; the message is what the agent reads.
    #[arg(long, value_name = "MESSAGE", env = "ASKPANE_DECLINE", conflicts_with = "answers")]
    pub(super) decline: Option<String>,
    /// Time the user has: seconds, or a duration such as 90s, 10m or 1h30m (1 s to a year). Then
    /// what they answered in the window is sent; anything less is "timed out".
    #[arg(long, value_name = "SECS", env = "ASKPANE_TIMEOUT", value_parser = parse_timeout)]
    pub(super) timeout: Option<Duration>,
    /// Never show a window: reply at once that no human is available.
    #[arg(long, env = "ASKPANE_NONINTERACTIVE", value_parser = clap::builder::FalseyValueParser::new())]
    pub(super) non_interactive: bool,
}

/// The longest `--timeout`: a year. Far longer means a typo, and an `Instant` that far out can
/// overflow (issue 9: a huge value panicked the browser bridge).
const MAX_TIMEOUT_SECS: u64 = 365 * 24 * 60 * 60;

/// `--timeout` / `ASKPANE_TIMEOUT`: whole seconds, or a duration with units as `history
/// --since` takes them (`90s`, `10m`, `1h30m`, `2days`), from 1 s to a year.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let secs = match text.parse::<u64>() {
        Ok(secs) => Some(secs),
        Err(_) => humantime::parse_duration(text)
            .ok()
            .filter(|duration| duration.subsec_nanos() == 0)
            .map(|duration| duration.as_secs()),
    };
    match secs {
        Some(secs @ 1..=MAX_TIMEOUT_SECS) => Ok(Duration::from_secs(secs)),
        _ => Err(format!(
            "the timeout is a whole number of seconds from 1 to {MAX_TIMEOUT_SECS} (a year), \
             or a duration in whole seconds such as 90s, 10m or 1h30m"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24 item 26: `--timeout 10m`, as `history --since` takes units.
    #[test]
    fn a_timeout_takes_seconds_or_a_duration_with_units() {
        for (text, secs) in
            [("45", 45), ("90s", 90), ("10m", 600), ("1h30m", 5400), ("2days", 172_800)]
        {
            assert_eq!(parse_timeout(text), Ok(Duration::from_secs(secs)), "{text}");
        }
        for bad in ["0", "0s", "1.5", "500ms", "1500ms", "2years", "an hour", "-5", ""] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum FormatArg {
    /// `{questions, answers, annotations}`, or `{outcome, message}`.
    ToolInput,
    /// A stream-json `control_response`.
    ControlResponse,
    /// A PreToolUse hook's `hookSpecificOutput`.
    PreToolUse,
    /// A PermissionRequest hook's `hookSpecificOutput`.
    PermissionRequest,
    /// The web protocol's `question_answer`.
    SeedWeb,
}

impl From<FormatArg> for ReplyFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::ToolInput => ReplyFormat::ToolInput,
            FormatArg::ControlResponse => ReplyFormat::ControlResponse,
            FormatArg::PreToolUse => ReplyFormat::PreToolUse,
            FormatArg::PermissionRequest => ReplyFormat::PermissionRequest,
            FormatArg::SeedWeb => ReplyFormat::SeedWeb,
        }
    }
}

/// Whether `ask` and `hook` hand their request to the inbox (issue 10).
#[derive(Args, Debug)]
pub(super) struct InboxUse {
    /// Answer in a window of this command's own, not in the running inbox (and never start one).
    #[arg(long, env = "ASKPANE_NO_INBOX", value_parser = clap::builder::FalseyValueParser::new())]
    pub(super) no_inbox: bool,
}

/// Where drafts and history are kept (issue 11).
#[derive(Args, Clone, Debug, Default)]
pub(super) struct StoreArgs {
    /// The directory of askpane's database (askpane.db: drafts and history). Default:
    /// $XDG_STATE_HOME/askpane, else ~/.local/state/askpane.
    #[arg(long, value_name = "DIR", env = "ASKPANE_STATE_DIR")]
    pub(super) state_dir: Option<PathBuf>,
}

impl StoreArgs {
    /// The store, or the reason it cannot be opened.
    pub(super) fn open(&self) -> Result<Store, store::StoreError> {
        match &self.state_dir {
            // The user's directory keeps its mode; askpane's files in it are theirs alone.
            Some(dir) => Store::open_in_given(dir),
            None => Store::open_in(&store::state_dir(None)?),
        }
    }

    /// The store for a mode that answers questions: one that cannot be opened (a read-only
    /// disk, a corrupt file) never stops the answering. One line on stderr, and no store.
    pub(super) fn open_or_warn(&self) -> Option<Store> {
        self.open()
            .map_err(|error| {
                eprintln!(
                    "askpane: warning: no drafts or history this time: cannot open the store \
                     ({error})"
                );
            })
            .ok()
    }
}
