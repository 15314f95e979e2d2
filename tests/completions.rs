//! `askpane completions SHELL` and the man pages (`askpane man DIR`, issue 29): the scripts load
//! in the real shells and complete askpane's commands; every page renders without a warning.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{askpane, run_bounded, scratch_dir};

/// True when `tool` is on PATH; else the test says why it skips that part.
fn installed(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| dir.join(tool).is_file());
    if !found {
        eprintln!("skipped: `{tool}` is not installed (scripts/setup installs it)");
    }
    found
}

/// What `askpane completions SHELL` printed (it must succeed).
fn script(shell: &str) -> String {
    let finished = run_bounded(&mut askpane(&["completions", shell]), None);
    assert!(finished.status.success(), "completions {shell}: {finished:?}");
    assert!(finished.stderr.is_empty(), "completions {shell}: {}", finished.stderr);
    finished.stdout
}

/// What bash's completion offers for `words` (the last one being completed), as a person
/// pressing Tab would get: the script is loaded, then `_askpane` runs with COMP_WORDS and
/// COMP_CWORD set, and the arguments bash passes to a `complete -F` function.
fn bash_offers(words: &[&str]) -> Vec<String> {
    let file = scratch_dir("completion").join("askpane.bash");
    fs::write(&file, script("bash")).unwrap();
    let line = words.join(" ");
    let current = words.last().unwrap();
    let previous = words.get(words.len().wrapping_sub(2)).unwrap_or(&"");
    let driver = format!(
        r#"source "$1" || exit 9
COMP_WORDS=({line}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}
_askpane askpane '{current}' '{previous}'
printf '%s\n' "${{COMPREPLY[@]}}""#,
        cword = words.len() - 1,
    );
    let finished =
        run_bounded(Command::new("bash").args(["--norc", "-c", &driver, "bash"]).arg(&file), None);
    assert!(finished.status.success(), "{driver}\n{finished:?}");
    finished.stdout.lines().map(|word| word.trim().to_owned()).collect()
}

#[test]
fn bash_loads_the_completion_and_registers_it_for_askpane() {
    if !installed("bash") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_askpane");
    let finished = run_bounded(
        Command::new("bash").args([
            "--norc",
            "-c",
            "source <(\"$1\" completions bash) && complete -p askpane",
            "bash",
            bin,
        ]),
        None,
    );
    assert!(finished.status.success(), "{finished:?}");
    assert!(finished.stdout.contains("-F _askpane"), "{}", finished.stdout);
    assert!(finished.stdout.trim_end().ends_with(" askpane"), "{}", finished.stdout);
}

#[test]
fn bash_completes_subcommands_their_options_and_the_shells() {
    if !installed("bash") {
        return;
    }
    assert_eq!(bash_offers(&["askpane", "hi"]), ["history"]);
    let all = bash_offers(&["askpane", ""]);
    for command in ["ask", "hook", "inbox", "install", "validate", "completions", "history"] {
        assert!(all.iter().any(|word| word == command), "{command} not in {all:?}");
    }
    assert_eq!(bash_offers(&["askpane", "completions", "f"]), ["fish"]);
    assert_eq!(bash_offers(&["askpane", "install", "cl"]), ["claude"]);
    assert!(bash_offers(&["askpane", "hook", "--no-"]).contains(&"--no-inbox".to_owned()));
}

#[test]
fn the_zsh_fish_elvish_and_powershell_scripts_are_written_and_parse() {
    let zsh = script("zsh");
    assert!(zsh.starts_with("#compdef askpane"), "{}", &zsh[..zsh.len().min(200)]);
    let fish = script("fish");
    assert!(fish.contains("complete -c askpane"), "{}", &fish[..fish.len().min(200)]);
    assert!(script("elvish").contains("askpane"));
    assert!(script("powershell").contains("Register-ArgumentCompleter"));
    let dir = scratch_dir("completion");
    for (shell, text, parse) in [("zsh", &zsh, ["-n"]), ("fish", &fish, ["--no-execute"])] {
        if !installed(shell) {
            continue;
        }
        let file = dir.join(format!("askpane.{shell}"));
        fs::write(&file, text).unwrap();
        let finished = run_bounded(Command::new(shell).args(parse).arg(&file), None);
        assert!(finished.status.success(), "{shell} cannot parse the script: {finished:?}");
        assert!(finished.stderr.is_empty(), "{shell}: {}", finished.stderr);
    }
}

#[test]
fn fish_completes_subcommands() {
    if !installed("fish") {
        return;
    }
    let file = scratch_dir("completion").join("askpane.fish");
    fs::write(&file, script("fish")).unwrap();
    let finished = run_bounded(
        Command::new("fish")
            .args(["--no-config", "-c", "source $argv[1]; complete -C 'askpane hi'"])
            .arg(&file),
        None,
    );
    assert!(finished.status.success(), "{finished:?}");
    assert!(finished.stdout.starts_with("history\t"), "{}", finished.stdout);
}

#[test]
fn an_unknown_shell_is_a_clear_usage_error() {
    let finished = run_bounded(&mut askpane(&["completions", "tcsh"]), None);
    assert_eq!(finished.status.code(), Some(2), "{finished:?}");
    assert!(finished.stdout.is_empty(), "{}", finished.stdout);
    assert!(finished.stderr.contains("invalid value 'tcsh'"), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{}",
        finished.stderr
    );
}

/// The pages `askpane man` writes into a new folder, by file name, sorted.
fn man_pages(dir: &Path) -> Vec<String> {
    let finished =
        run_bounded(&mut askpane(&["man", dir.to_str().unwrap(), "--date", "2026-11-26"]), None);
    assert!(finished.status.success(), "{finished:?}");
    let mut pages: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    pages
}

#[test]
fn a_man_page_for_askpane_and_every_command_it_lists() {
    let dir = scratch_dir("man").join("man1");
    let pages = man_pages(&dir);
    for page in ["askpane.1", "askpane-hook.1", "askpane-inbox.1", "askpane-completions.1"] {
        assert!(pages.contains(&page.to_owned()), "{page} not in {pages:?}");
    }
    // Each command of `askpane --help` has its page, and each of `askpane install --help`.
    for (parent, prefix) in
        [(vec!["--help"], "askpane-"), (vec!["install", "--help"], "askpane-install-")]
    {
        let help = run_bounded(&mut askpane(&parent), None).stdout;
        let commands = help
            .split("Commands:")
            .nth(1)
            .unwrap()
            .split("Options:")
            .next()
            .unwrap()
            .lines()
            // A command's line is indented by two; its wrapped description by more.
            .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
            .filter_map(|line| line.split_whitespace().next())
            .filter(|name| *name != "help")
            .map(str::to_owned)
            .collect::<Vec<_>>();
        assert!(commands.len() >= 2, "{help}");
        for command in commands {
            assert!(pages.contains(&format!("{prefix}{command}.1")), "{command}: {pages:?}");
        }
    }
    assert!(
        !pages.iter().any(|page| page.contains("-man.") || page.contains("-help.")),
        "{pages:?}"
    );
    let top = fs::read_to_string(dir.join("askpane-hook.1")).unwrap();
    let header = top.lines().find(|line| line.starts_with(".TH")).unwrap();
    assert_eq!(
        header,
        concat!(
            ".TH askpane-hook 1 2026-11-26 \"askpane ",
            env!("CARGO_PKG_VERSION"),
            "\" \"askpane manual\""
        )
    );
}

#[test]
fn every_man_page_renders_without_a_warning() {
    let dir = scratch_dir("man").join("man1");
    let pages = man_pages(&dir);
    let (man, groff, mandoc) = (installed("man"), installed("groff"), installed("mandoc"));
    for page in &pages {
        let path = dir.join(page);
        if man {
            let finished = run_bounded(
                Command::new("man")
                    .arg("-l")
                    .arg(&path)
                    .env("MANWIDTH", "80")
                    .env("MAN_KEEP_STDERR", "1"),
                None,
            );
            assert!(finished.status.success(), "{page}: {finished:?}");
            assert!(finished.stderr.is_empty(), "man -l {page}: {}", finished.stderr);
            assert!(finished.stdout.contains("NAME"), "{page}: {}", finished.stdout);
        }
        if groff {
            // -k: the pages are UTF-8 (…, —), as man's own preconv reads them.
            let finished = run_bounded(
                Command::new("groff").args(["-k", "-ww", "-man", "-Tutf8", "-z"]).arg(&path),
                None,
            );
            assert!(
                finished.status.success() && finished.stderr.is_empty(),
                "groff {page}: {finished:?}"
            );
        }
        if mandoc {
            // Errors only: at -W warning, mandoc objects to clap_mangen's own blank line
            // between paragraphs (`.br` next to `.sp`), which renders the same either way.
            let finished = run_bounded(
                Command::new("mandoc").args(["-T", "lint", "-W", "error"]).arg(&path),
                None,
            );
            assert!(
                finished.status.success() && finished.stdout.is_empty(),
                "mandoc {page}: {finished:?}"
            );
        }
    }
}
