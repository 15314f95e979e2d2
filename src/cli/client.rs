//! The command line's side of the thin client: how an inbox is started from a client's flags
//! (`--ui`, `--bind`, `--lan`, `--theme`, `--state-dir`) when none runs. Handing over, waiting and
//! restarting are `askpane::transport::inbox` ([`deliver`](askpane::transport::inbox::deliver),
//! [`InboxConnection`]).

use std::ffi::OsString;

use askpane::transport::inbox::{ConnectError, InboxClient, InboxConnection, Place, start_inbox};

use super::args::{StoreArgs, UiArgs};
use super::show::missing_display;

/// Starts an inbox that shows what the client's flags ask for, and connects to it.
pub(super) fn starter(
    shown: &UiArgs,
    store: &StoreArgs,
) -> impl Fn(&Place) -> Result<InboxClient, String> + Send + Sync + use<> {
    let args = inbox_args(shown, store);
    let web = shown.web();
    move |place| {
        if !web && let Some(problem) = missing_display() {
            return Err(format!("no display: {problem}"));
        }
        // The log goes to the state directory (`$XDG_STATE_HOME/askpane`), never to a
        // `--state-dir` a test or a user gave for the database.
        let log_dir = askpane::store::state_dir(None).map_err(|error| error.to_string())?;
        start_inbox(place, &args, &log_dir)
    }
}

/// `askpane inbox`'s arguments for an inbox started on a client's behalf: the client's window and
/// store settings, whether given as flags or variables, and never its answering flags (they
/// travel with each request).
fn inbox_args(shown: &UiArgs, store: &StoreArgs) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["--on-demand".into(), "--ui".into()];
    args.push(if shown.web() { "web" } else { "native" }.into());
    args.push("--bind".into());
    args.push(shown.bind.to_string().into());
    if shown.lan {
        args.push("--lan".into());
    }
    if let Some(theme) = clap::ValueEnum::to_possible_value(&shown.theme) {
        args.push("--theme".into());
        args.push(theme.get_name().into());
    }
    if let Some(dir) = &store.state_dir {
        args.push("--state-dir".into());
        args.push(dir.clone().into_os_string());
    }
    args
}

/// The running inbox, or one started now (as for `hook`), or why there is none: a connection
/// kept for a session's life (`askpane claude`, `codex`, `opencode`).
pub(super) fn connect(shown: &UiArgs, store: &StoreArgs) -> Result<InboxConnection, String> {
    let place = Place::find().map_err(|error| error.to_string())?;
    let client = match InboxClient::connect(&place) {
        Ok(client) => client,
        Err(ConnectError::NotRunning(_)) => starter(shown, store)(&place)?,
        Err(error) => return Err(error.to_string()),
    };
    InboxConnection::open(client).map_err(|error| error.to_string())
}

/// The inbox that answers now, if any, starting none: a link to the desk that came back
/// (`askpane claude` on an SSH host, issue 27).
pub(super) fn connect_running() -> Option<InboxConnection> {
    let place = Place::find().ok()?;
    let client = InboxClient::connect(&place).ok()?;
    InboxConnection::open(client).ok()
}
