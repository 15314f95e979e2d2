//! `askpane opencode` (issue 13): answers every OpenCode session's questions in the inbox until
//! stopped. Its flags, and what the host needs from the command line (the inbox's connection,
//! history's recorder); the host itself is `askpane::transport::opencode::host`.

use clap::Args;

use askpane::protocol::ReplyFormat;
use askpane::transport::opencode::Server;
use askpane::transport::opencode::host::OpenCodeHost;
use askpane::transport::{Waker, ui_channel};

use super::answer::{Asked, policy, record};
use super::args::{AnsweringArgs, StoreArgs, UiArgs};
use super::show::watch_signals;

#[derive(Args, Debug)]
pub(super) struct OpenCodeArgs {
    /// The OpenCode server (`opencode serve`, or the TUI started with `--port`).
    #[arg(
        long,
        value_name = "URL",
        default_value = "http://127.0.0.1:4096",
        env = "ASKPANE_OPENCODE_URL"
    )]
    url: String,
    /// The server's password, when it has one.
    #[arg(long, value_name = "PASSWORD", env = "OPENCODE_SERVER_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// The user name that goes with the password.
    #[arg(long, value_name = "NAME", default_value = "opencode", env = "OPENCODE_SERVER_USERNAME")]
    username: String,
    #[command(flatten)]
    answering: AnsweringArgs,
    #[command(flatten)]
    shown: UiArgs,
    #[command(flatten)]
    store: StoreArgs,
}

pub(super) fn run(args: OpenCodeArgs) -> anyhow::Result<u8> {
    let signals = watch_signals();
    let (to_me, stop) = ui_channel(Waker::noop());
    let route = signals.as_ref().map(|watch| watch.route(to_me));
    let OpenCodeArgs { url, password, username, answering, shown, store } = args;
    let host = OpenCodeHost {
        server: Server::new(&url, &username, password.as_deref()),
        // Every reply comes back in OpenCode's form (`protocol::opencode::Reply`).
        policy: policy(&answering, Some(ReplyFormat::OpenCode), None),
        connect: Box::new({
            let (shown, store) = (shown, store.clone());
            move || super::client::connect(&shown, &store)
        }),
        record: Box::new(move |incoming, provenance, outcome, shape| {
            let asked = Asked::asked_by(incoming, provenance);
            record(&store, Some(&asked), Some(outcome), shape);
        }),
    };
    let code = host.run(&stop)?;
    drop(route);
    Ok(code)
}
