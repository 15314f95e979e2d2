//! `askpane doctor`'s look at what `askpane install` wrote (issue 29 item 4): each agent's hooks
//! and MCP entries, and the autostart entry, found by the same editors that install them, and
//! whether each runs THIS binary. A stale path after a reinstall is the classic failure: the
//! agent's hook then fails and the question never reaches askpane.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use askpane::protocol::doctor::{self, Check, EntryFacts, Points};

use super::claude::{self, Hook};
use super::codex;
use super::mcp::{self, McpClient};

/// Every entry askpane can install, checked against `this_binary`.
pub(in crate::cli) fn checks(this_binary: &Path) -> Vec<Check> {
    let shown = this_binary.display().to_string();
    let askpane = claude::program_command(this_binary);
    let mut checks = Vec::new();
    let mut add = |name: &str, file: &Path, facts: EntryFacts, fix: String| {
        let file = file.display().to_string();
        checks.push(doctor::entry(name, &file, &facts, &fix, &shown));
    };

    let home = dirs::home_dir().unwrap_or_default();
    let settings = std::env::var_os("HOME")
        .map_or_else(|| home.clone(), PathBuf::from)
        .join(".claude")
        .join("settings.json");
    let claude_settings = read_json(&settings);
    for (name, hook, flag) in [
        ("claude hook", Hook::Questions, ""),
        ("claude approvals hook", Hook::Approvals, " --approvals"),
        ("claude notify hook", Hook::Notices, " --notify"),
    ] {
        let (facts, matcher) = match &claude_settings {
            Err(why) => (EntryFacts::Unreadable { why: why.clone() }, None),
            Ok(settings) => {
                let found = settings.as_ref().map(|json| claude::installed(json, hook));
                let found = found.unwrap_or_default();
                let matcher = found.first().and_then(|(matcher, _)| matcher.clone());
                let commands = found.into_iter().map(|(_, command)| command);
                let programs = commands.map(|command| askpane_of(&program(&command)));
                (facts_of(programs, this_binary), matcher)
            }
        };
        // The approval hook keeps the tools it was installed for.
        let flag = match (hook, matcher) {
            (Hook::Approvals, Some(tools)) if tools != "*" => {
                format!("{flag} {}", tools.replace('|', ","))
            }
            _ => flag.to_owned(),
        };
        add(name, &settings, facts, format!("{askpane} install claude{flag}"));
    }

    let codex_home = super::codex_home().unwrap_or_else(|_| home.join(".codex"));
    let hooks = codex_home.join("hooks.json");
    let codex_hooks = read_json(&hooks);
    for (name, event, flag) in [
        ("codex hook", codex::Event::PreToolUse, ""),
        ("codex approvals hook", codex::Event::PermissionRequest, " --approvals"),
    ] {
        let facts = match &codex_hooks {
            Err(why) => EntryFacts::Unreadable { why: why.clone() },
            Ok(settings) => {
                let found = settings.as_ref().map(|json| codex::installed(json, event));
                let commands = found.unwrap_or_default().into_iter();
                facts_of(commands.map(|command| program(&command)), this_binary)
            }
        };
        add(name, &hooks, facts, format!("{askpane} install codex{flag}"));
    }

    for (name, client, word) in [
        ("claude mcp", McpClient::Claude, "claude"),
        ("codex mcp", McpClient::Codex, "codex"),
        ("gemini mcp", McpClient::Gemini, "gemini"),
        ("cursor mcp", McpClient::Cursor, "cursor"),
        ("opencode mcp", McpClient::Opencode, "opencode"),
    ] {
        let file = match client {
            McpClient::Opencode => super::config_home()
                .unwrap_or_else(|_| home.join(".config"))
                .join(client.relative_path()),
            _ => home.join(client.relative_path()),
        };
        let facts = match client {
            McpClient::Codex => match read_text(&file) {
                Err(why) => EntryFacts::Unreadable { why },
                Ok(None) => EntryFacts::NotInstalled,
                Ok(Some(text)) => match text.parse::<toml_edit::DocumentMut>() {
                    Err(error) => {
                        EntryFacts::Unreadable { why: format!("not valid TOML: {error}") }
                    }
                    Ok(document) => facts_of(mcp::installed_codex_program(&document), this_binary),
                },
            },
            _ => match read_json(&file) {
                Err(why) => EntryFacts::Unreadable { why },
                Ok(json) => facts_of(
                    json.as_ref().and_then(|json| mcp::installed_program(client, json)),
                    this_binary,
                ),
            },
        };
        add(name, &file, facts, format!("{askpane} install mcp {word}"));
    }

    #[cfg(not(any(target_os = "macos", windows)))]
    if let Some(config) = dirs::config_dir() {
        let file = config.join("autostart").join(super::AUTOSTART_FILE);
        let facts = match read_text(&file) {
            Err(why) => EntryFacts::Unreadable { why },
            Ok(text) => facts_of(text.as_deref().and_then(desktop_exec_program), this_binary),
        };
        add("autostart", &file, facts, format!("{askpane} install autostart"));
    }
    checks
}

/// The facts of the programs found (none: not installed); the first that is not this binary
/// decides, as one stale entry is enough to fail.
fn facts_of(programs: impl IntoIterator<Item = String>, this_binary: &Path) -> EntryFacts {
    let mut facts = EntryFacts::NotInstalled;
    for found in programs {
        let points = points(&found, this_binary);
        let stale = points != Points::ThisBinary;
        facts = EntryFacts::Installed { points };
        if stale {
            break;
        }
    }
    facts
}

/// Where `program` (a path, or a name looked up on PATH) leads, compared with this binary.
fn points(program: &str, this_binary: &Path) -> Points {
    let path = match program.contains(['/', '\\']) {
        true => Some(PathBuf::from(program)),
        false => on_path(program),
    };
    let found = path.and_then(|path| std::fs::canonicalize(path).ok());
    let this = std::fs::canonicalize(this_binary).unwrap_or_else(|_| this_binary.to_owned());
    match found {
        Some(found) if found == this => Points::ThisBinary,
        Some(found) if found.is_file() => Points::Another { program: program.to_owned() },
        _ => Points::Missing { program: program.to_owned() },
    }
}

/// `name` as the shell finds it on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// The program a hook command runs.
fn program(command: &str) -> String {
    doctor::program_of(command).to_owned()
}

/// The askpane a hook's program stands for: the small hook client (issue 30), where it is,
/// stands for the askpane beside it, which it hands the rest to; one that is gone stays itself,
/// found missing.
fn askpane_of(program: &str) -> String {
    let path = Path::new(program);
    let small = path.file_stem().is_some_and(|stem| stem == claude::SMALL_HOOK) && path.is_file();
    match small {
        true => path
            .with_file_name(format!("askpane{}", std::env::consts::EXE_SUFFIX))
            .display()
            .to_string(),
        false => program.to_owned(),
    }
}

/// The program of a desktop entry's `Exec` line (the spec's quoting undone).
fn desktop_exec_program(entry: &str) -> Option<String> {
    let exec = entry.lines().find_map(|line| line.strip_prefix("Exec="))?.trim();
    let Some(quoted) = exec.strip_prefix('"') else {
        return exec.split_whitespace().next().map(|program| program.replace("%%", "%"));
    };
    let mut program = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => program.extend(chars.next()),
            c => program.push(c),
        }
    }
    Some(program.replace("%%", "%"))
}

/// A file's text; `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// A JSON file; `None` when it does not exist or is empty.
fn read_json(path: &Path) -> Result<Option<Value>, String> {
    match read_text(path)? {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(&text)
            .map(Some)
            .map_err(|error| format!("not valid JSON: {error}")),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_desktop_entry_s_program_is_unquoted() {
        assert_eq!(
            desktop_exec_program("[Desktop Entry]\nExec=/usr/bin/askpane inbox --background\n"),
            Some("/usr/bin/askpane".to_owned())
        );
        assert_eq!(
            desktop_exec_program("Exec=\"/opt/my \\$tools/100%% askpane\" inbox\n"),
            Some("/opt/my $tools/100% askpane".to_owned())
        );
    }

    #[test]
    fn a_program_that_is_gone_is_missing_and_this_binary_is_this_binary() {
        let this = std::env::current_exe().expect("the test binary");
        let shown = this.display().to_string();
        assert_eq!(points(&shown, &this), Points::ThisBinary);
        assert_eq!(
            points("/nonexistent/askpane", &this),
            Points::Missing { program: "/nonexistent/askpane".into() }
        );
        assert_eq!(points("/bin/sh", &this), Points::Another { program: "/bin/sh".into() });
    }
}
