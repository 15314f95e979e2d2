//! `askpane completions SHELL` (a shell's completion script on stdout) and the hidden `askpane
//! man DIR` (one man page per command), both generated from the clap definition `--help` uses,
//! so they can never disagree with the command line. scripts/package ships both.

use std::path::Path;

use anyhow::Context as _;
use clap::{Args, CommandFactory as _};

use askpane::protocol::exit;

/// `askpane completions SHELL`.
#[derive(Args, Debug)]
pub(super) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Prints the completion script for `args.shell`.
pub(super) fn run(args: &CompletionsArgs) -> anyhow::Result<u8> {
    let mut command = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "askpane", &mut script);
    let script = String::from_utf8(script).context("the completion script is not UTF-8")?;
    // `say!` ends the text with a newline of its own, and keeps a closed stdout
    // (`askpane completions bash | head`) from being an error.
    say!("{}", script.trim_end_matches('\n'));
    Ok(exit::OK)
}

/// Writes askpane.1 and a page for every command (askpane-hook.1, askpane-install-claude.1, …)
/// into `dir`, creating it. Hidden commands (this one) get no page. `date` (YYYY-MM-DD) is the
/// pages' date: scripts/package gives the last commit's, so the same tree makes the same pages.
pub(super) fn write_man_pages(dir: &Path, date: Option<&str>) -> anyhow::Result<u8> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // As clap_mangen::generate_to, but every page says which askpane it documents (a
    // subcommand's own would read "acp ", as subcommands carry no version).
    let mut command = super::Cli::command().disable_help_subcommand(true);
    command.build();
    write_page_and_below(command, dir, date)
        .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
    Ok(exit::OK)
}

fn write_page_and_below(
    command: clap::Command,
    dir: &Path,
    date: Option<&str>,
) -> std::io::Result<()> {
    for below in command.get_subcommands().filter(|below| !below.is_hide_set()) {
        write_page_and_below(below.clone(), dir, date)?;
    }
    let page = clap_mangen::Man::new(command)
        .source(concat!("askpane ", env!("CARGO_PKG_VERSION")))
        .manual("askpane manual");
    let page = match date {
        Some(date) => page.date(date),
        None => page,
    };
    page.generate_to(dir).map(drop)
}
