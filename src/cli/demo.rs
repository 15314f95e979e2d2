//! `askpane demo`: the built-in question sets in the window (or the browser), no agent needed.

use anyhow::Context as _;
use clap::Args;

use askpane::app::AppOptions;
use askpane::transport::demo::{self, Fixture};
use askpane::transport::replies::AwaitedReply;

use super::args::UiArgs;
use super::exit;
use super::show::{missing_display, no_display, show_requests};

#[derive(Args, Debug)]
pub(super) struct DemoArgs {
    /// List the built-in question sets and exit.
    #[arg(long)]
    list: bool,
    /// Show only this question set (see --list).
    #[arg(long, value_name = "NAME")]
    fixture: Option<String>,
    #[command(flatten)]
    shown: UiArgs,
}

pub(super) fn run(args: DemoArgs) -> anyhow::Result<u8> {
    if args.list {
        let width = demo::FIXTURES.iter().map(|f| f.name.len()).max().unwrap_or(0);
        for fixture in demo::FIXTURES {
            say!("{:width$}  {}", fixture.name, fixture.summary);
        }
        return Ok(exit::OK);
    }
    let fixtures: Vec<&Fixture> = match &args.fixture {
        Some(name) => {
            let fixture = demo::find(name).with_context(|| {
                format!("no demo question set named {name:?}; `askpane demo --list` shows them")
            })?;
            vec![fixture]
        }
        None => demo::FIXTURES.iter().collect(),
    };
    if !args.shown.web()
        && let Some(problem) = missing_display()
    {
        return Ok(no_display(&problem));
    }
    let mut requests = Vec::with_capacity(fixtures.len());
    let mut awaited = Vec::with_capacity(fixtures.len());
    for fixture in fixtures {
        let (request, outcome) = fixture.request()?;
        let envelope = request.core.envelope.clone();
        awaited.push(AwaitedReply { envelope, format: None, outcome, always_a_line: false });
        requests.push(request);
    }
    let window = show_requests(
        requests,
        awaited,
        AppOptions { close_when_done: false, ..AppOptions::default() },
        &args.shown,
        None,
    )?;
    match (window.problem, window.stopped_by) {
        (Some(problem), _) => Ok(no_display(&problem)),
        (None, Some(_)) => Ok(exit::STOPPED),
        (None, None) => Ok(exit::OK),
    }
}
