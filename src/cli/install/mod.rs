//! `askpane install` / `askpane uninstall`: askpane's hook in Claude Code's settings, or its MCP
//! server in an MCP client's configuration, merged with what is there, with a backup first.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::Value;

use askpane::protocol::markup;

// Issue 29: `askpane doctor`'s look at what these editors installed.
#[cfg(target_os = "linux")]
pub(super) mod check;
mod claude;
mod codex;
mod mcp;

use claude::Change;
use mcp::McpClient;

use super::exit;

#[derive(Subcommand, Debug)]
pub(super) enum Target {
    /// Claude Code: a PreToolUse hook for AskUserQuestion in settings.json.
    Claude(ClaudeTarget),
    /// Codex: a PreToolUse hook for request_user_input in $CODEX_HOME/hooks.json (default
    /// ~/.codex), trusted in its config.toml, for Codex's own terminal UI and `codex exec`.
    Codex(CodexTarget),
    /// The inbox, started when you log in: an XDG autostart entry
    /// (~/.config/autostart/askpane-inbox.desktop), on macOS a launchd agent
    /// (~/Library/LaunchAgents/dev.askpane.inbox.plist), on Windows a script in the Startup
    /// folder (askpane-inbox.cmd).
    Autostart,
    /// An MCP client: `askpane mcp` as the server `askpane` in its configuration, with the
    /// tool timeout that client needs for a person to answer.
    Mcp {
        #[arg(value_enum)]
        client: ClientArg,
    },
}

/// The MCP clients whose configuration `install mcp` writes.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(super) enum ClientArg {
    /// Claude Code: ~/.claude.json (user scope).
    Claude,
    /// Codex: ~/.codex/config.toml, tool_timeout_sec = 86400.
    Codex,
    /// Gemini CLI: ~/.gemini/settings.json, timeout 86400000 ms.
    Gemini,
    /// Cursor: ~/.cursor/mcp.json.
    Cursor,
    /// OpenCode: ~/.config/opencode/opencode.json.
    Opencode,
    /// Goose: prints the entry for ~/.config/goose/config.yaml (askpane does not edit YAML).
    Goose,
}

#[derive(Args, Debug)]
pub(super) struct ClaudeTarget {
    #[command(flatten)]
    settings: ClaudeSettings,
    /// Also answer tool approvals in askpane: a PermissionRequest hook for every tool, or only
    /// for TOOLS (comma-separated: `--approvals Bash,Edit,Write`). With `uninstall`: remove only
    /// that hook.
    #[arg(long, value_name = "TOOLS", num_args = 0..=1, default_missing_value = "*")]
    approvals: Option<String>,
    /// Also announce Claude Code terminals that wait (its Notification hook, every type) in
    /// askpane's desktop notification, naming project and session. With `uninstall`: remove only
    /// that hook.
    #[arg(long)]
    notify: bool,
}

/// Which settings file `install claude` edits.
#[derive(Args, Debug)]
#[group(multiple = false)]
pub(super) struct ClaudeSettings {
    /// Your user settings, ~/.claude/settings.json (the default).
    #[arg(long)]
    user: bool,
    /// A project's shared settings, DIR/.claude/settings.json.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct CodexTarget {
    /// The Codex executable, asked for the hash it trusts the hook by (`hooks/list`).
    #[arg(long, value_name = "PATH", default_value = "codex", env = "ASKPANE_CODEX_BIN")]
    codex_bin: PathBuf,
    /// Also Codex's `PermissionRequest` hook: the commands and patches Codex would ask you to
    /// approve are shown by askpane (Allow, Deny with a reason, or Answer in the terminal).
    /// `uninstall codex` removes it with the question hook.
    #[arg(long)]
    approvals: bool,
}

/// `askpane install TARGET` (`install` true) or `askpane uninstall TARGET`.
pub(super) fn run(target: &Target, install: bool) -> anyhow::Result<u8> {
    match target {
        Target::Claude(target) => claude_hook(target, install),
        Target::Codex(target) => codex_hook(target, install),
        Target::Autostart => autostart(install),
        Target::Mcp { client } => mcp_server(*client, install),
    }
}

/// `askpane install mcp CLIENT` / `askpane uninstall mcp CLIENT`.
fn mcp_server(client: ClientArg, install: bool) -> anyhow::Result<u8> {
    let binary = std::env::current_exe().context("cannot find askpane's own path")?;
    let binary = binary.display().to_string();
    let client = match client {
        ClientArg::Claude => McpClient::Claude,
        ClientArg::Codex => McpClient::Codex,
        ClientArg::Gemini => McpClient::Gemini,
        ClientArg::Cursor => McpClient::Cursor,
        ClientArg::Opencode => McpClient::Opencode,
        ClientArg::Goose => {
            // Goose keeps its settings in YAML, which askpane would rewrite without the
            // user's comments; the entry is printed for `goose configure` or the file.
            say!("Add askpane to Goose (`goose configure` → Add Extension → Command-line");
            say!("Extension, or ~/.config/goose/config.yaml under `extensions:`):");
            say!("  askpane:");
            say!("    enabled: true");
            say!("    type: stdio");
            say!("    name: askpane");
            say!("    cmd: {binary}");
            say!("    args: [mcp]");
            say!("    timeout: {}", mcp::TOOL_TIMEOUT_SECS);
            return Ok(exit::OK);
        }
    };
    let path = match client {
        McpClient::Opencode => config_home()?.join(client.relative_path()),
        _ => home()?.join(client.relative_path()),
    };
    let what = client.name();
    rewrite(
        &path,
        |existing| match client {
            McpClient::Codex => {
                let mut document: toml_edit::DocumentMut = existing
                    .unwrap_or_default()
                    .parse()
                    .with_context(|| format!("{} is not valid TOML", path.display()))?;
                let change = match install {
                    true => mcp::install_codex(&mut document, &binary)?,
                    false => mcp::uninstall_codex(&mut document),
                };
                Ok((document.to_string(), change))
            }
            _ => {
                let mut settings: Value = match existing {
                    Some(text) if !text.trim().is_empty() => serde_json::from_str(text)
                        .with_context(|| format!("{} is not valid JSON", path.display()))?,
                    _ => Value::Object(serde_json::Map::new()),
                };
                let change = match install {
                    true => mcp::install_json(client, &mut settings, &binary)?,
                    false => mcp::uninstall_json(client, &mut settings)?,
                };
                let mut text = serde_json::to_string_pretty(&settings)?;
                text.push('\n');
                Ok((text, change))
            }
        },
        |change| match change {
            Change::Added => format!("added the askpane MCP server ({what}) to"),
            Change::Updated { from } => {
                format!("pointed the askpane MCP server (was `{from}`) at this binary in")
            }
            Change::Removed { .. } => "removed the askpane MCP server from".to_owned(),
            Change::AlreadyThere => "already has the askpane MCP server;".to_owned(),
            Change::NothingToRemove => "has no askpane MCP server;".to_owned(),
        },
    )
}

fn home() -> anyhow::Result<PathBuf> {
    dirs::home_dir().context("cannot find your home directory")
}

/// `$XDG_CONFIG_HOME`, else `~/.config`: OpenCode's own rule on every platform (not the
/// platform's configuration folder, which on macOS is ~/Library/Application Support).
fn config_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()) {
        Some(dir) => Ok(dir),
        None => Ok(home()?.join(".config")),
    }
}

/// Reads `path` (absent: `None`), has `edit` compute the new text and what changed, and when
/// something did, backs the old file up and writes the new one; says what happened in words
/// from `describe`. A file that cannot be parsed is left untouched.
fn rewrite<C: Changed>(
    path: &Path,
    edit: impl FnOnce(Option<&str>) -> anyhow::Result<(String, C)>,
    describe: impl FnOnce(&C) -> String,
) -> anyhow::Result<u8> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    };
    let (text, change) = edit(existing.as_deref())
        .with_context(|| format!("{}: left it untouched", path.display()))?;
    if !change.changed() {
        say!("{} {} nothing changed", path.display(), describe(&change));
        return Ok(exit::OK);
    }
    let backup = match &existing {
        Some(old) => Some(write_backup(path, old)?),
        None => None,
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    match backup {
        Some(backup) => {
            say!("{} {} (backup: {})", describe(&change), path.display(), backup.display());
        }
        None => say!("{} {} (a new file)", describe(&change), path.display()),
    }
    Ok(exit::OK)
}

/// The XDG autostart entry's file name.
#[cfg(not(any(target_os = "macos", windows)))]
const AUTOSTART_FILE: &str = "askpane-inbox.desktop";

/// The launchd agent's label and file name (macOS).
const LAUNCH_AGENT: &str = "dev.askpane.inbox";

/// `askpane install autostart` / `askpane uninstall autostart`: the entry that starts
/// `askpane inbox` when you log in, in the platform's own place ([`autostart_entry`]).
fn autostart(install: bool) -> anyhow::Result<u8> {
    let binary = std::env::current_exe().context("cannot find askpane's own path")?;
    let (path, entry) = autostart_entry(&binary.to_string_lossy())?;
    if !install {
        match std::fs::remove_file(&path) {
            Ok(()) => say!("removed {}", path.display()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                say!("{} was not there; nothing to do", path.display());
            }
            Err(error) => {
                return Err(error).with_context(|| format!("cannot remove {}", path.display()));
            }
        }
        return Ok(exit::OK);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    }
    std::fs::write(&path, entry).with_context(|| format!("cannot write {}", path.display()))?;
    say!("wrote {}: the inbox starts when you log in", path.display());
    Ok(exit::OK)
}

/// Where the autostart entry goes and what it says, on Linux and the BSDs: an XDG autostart
/// entry. XDG autostart rather than a systemd user unit: every desktop honours it (GNOME, KDE,
/// Xfce, LXQt, Cinnamon, MATE), it starts the inbox inside the graphical session with its
/// DISPLAY / WAYLAND_DISPLAY, and it is one file to remove; a systemd user unit starts before
/// (or without) the session's display and needs the desktop to import its environment, which
/// not all do.
#[cfg(not(any(target_os = "macos", windows)))]
fn autostart_entry(binary: &str) -> anyhow::Result<(PathBuf, String)> {
    let config = dirs::config_dir().context("neither XDG_CONFIG_HOME nor HOME is set")?;
    let entry = format!(
        "[Desktop Entry]\nType=Application\nName=askpane inbox\nComment=One window for every \
         AI agent's questions\nExec={} inbox --background\nTerminal=false\nNoDisplay=true\n\
         X-GNOME-Autostart-enabled=true\n",
        desktop_exec_quote(binary)
    );
    Ok((config.join("autostart").join(AUTOSTART_FILE), entry))
}

/// On macOS: a launchd agent in `~/Library/LaunchAgents`, which launchd starts in the user's
/// graphical session at login (`launchctl load` starts it at once).
#[cfg(target_os = "macos")]
fn autostart_entry(binary: &str) -> anyhow::Result<(PathBuf, String)> {
    let home = dirs::home_dir().context("cannot find your home directory")?;
    let path = home.join("Library/LaunchAgents").join(format!("{LAUNCH_AGENT}.plist"));
    Ok((path, launch_agent_plist(binary)))
}

/// On Windows: a script in the user's Startup folder
/// (`%APPDATA%\Microsoft\Windows\Start Menu\Programs\Startup`), which Windows runs at login.
/// A script rather than the registry's `Run` key: it is one file to remove like the other
/// platforms' entries, needs no crate, and lets the inbox's console start minimised.
#[cfg(windows)]
fn autostart_entry(binary: &str) -> anyhow::Result<(PathBuf, String)> {
    let roaming = dirs::data_dir().context("cannot find your %APPDATA% folder")?;
    let startup = roaming.join(r"Microsoft\Windows\Start Menu\Programs\Startup");
    Ok((startup.join(STARTUP_SCRIPT), startup_script(binary)))
}

/// The Startup folder script's file name (Windows).
#[cfg(windows)]
const STARTUP_SCRIPT: &str = "askpane-inbox.cmd";

/// A batch script that starts `BINARY inbox` in a minimised console of its own and ends at once
/// (its own console closes). A path cannot hold `"` on Windows; `%` is doubled, as batch files
/// read it as a variable otherwise. CRLF line ends, as cmd.exe expects.
#[cfg_attr(not(windows), allow(dead_code, reason = "written on Windows only; tested everywhere"))]
fn startup_script(binary: &str) -> String {
    let binary = binary.replace('%', "%%");
    format!(
        "@echo off\r\nrem askpane inbox: one window for every AI agent's questions\r\nstart \"askpane inbox\" /min \"{binary}\" inbox\r\n"
    )
}

/// A launchd agent that runs `BINARY inbox` at login, not kept alive (the inbox decides when
/// it ends; `askpane inbox --quit` must stay quit).
#[cfg_attr(
    not(target_os = "macos"),
    allow(dead_code, reason = "written on macOS only; tested everywhere")
)]
fn launch_agent_plist(binary: &str) -> String {
    let escaped = markup::escape(binary);
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{LAUNCH_AGENT}</string>
  <key>ProgramArguments</key>
  <array>
    <string>{escaped}</string>
    <string>inbox</string>
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <false/>
  <key>LimitLoadToSessionType</key>
  <string>Aqua</string>
</dict>
</plist>
"#
    )
}

/// A path as one argument of a desktop entry's `Exec` (the spec's quoting).
#[cfg(not(any(target_os = "macos", windows)))]
fn desktop_exec_quote(path: &str) -> String {
    let plain = path.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        return path.to_owned();
    }
    let mut quoted = String::from("\"");
    for c in path.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted.replace('%', "%%")
}

/// `askpane install claude` / `askpane uninstall claude`.
fn claude_hook(target: &ClaudeTarget, install: bool) -> anyhow::Result<u8> {
    let path = settings_path(&target.settings)?;
    let matcher = match (&target.approvals, install) {
        (Some(tools), true) => Some(
            claude::approvals_matcher(tools)
                .map_err(|why| anyhow::anyhow!("--approvals: {why}"))?,
        ),
        _ => None,
    };
    rewrite(
        &path,
        |existing| {
            let mut settings: Value = match existing {
                Some(text) if !text.trim().is_empty() => serde_json::from_str(text)
                    .with_context(|| format!("{} is not valid JSON", path.display()))?,
                _ => Value::Object(serde_json::Map::new()),
            };
            let mut changes = Changes::default();
            if install {
                let binary = std::env::current_exe().context("cannot find askpane's own path")?;
                let command = claude::hook_command(&binary);
                changes.questions = Some(claude::install(&mut settings, &command)?);
                if let Some(matcher) = &matcher {
                    changes.approvals =
                        Some(claude::install_approvals(&mut settings, &command, matcher)?);
                }
                if target.notify {
                    changes.notices = Some(claude::install_notices(&mut settings, &command)?);
                }
            } else {
                // `uninstall claude --approvals` / `--notify`: those hooks only; plain
                // `uninstall claude`: all of askpane's.
                let only_named = target.approvals.is_some() || target.notify;
                if !only_named {
                    changes.questions = Some(claude::uninstall(&mut settings)?);
                }
                if !only_named || target.approvals.is_some() {
                    changes.approvals = Some(claude::uninstall_approvals(&mut settings)?);
                }
                if !only_named || target.notify {
                    changes.notices = Some(claude::uninstall_notices(&mut settings)?);
                }
            }
            let change = changes;
            let mut text = serde_json::to_string_pretty(&settings)?;
            text.push('\n');
            Ok((text, change))
        },
        |changes| changes.describe(matcher.as_deref()),
    )
}

/// What `install claude` / `uninstall claude` did to each of askpane's three hooks (`None`: that
/// hook was not touched).
#[derive(Default)]
struct Changes {
    questions: Option<Change>,
    approvals: Option<Change>,
    notices: Option<Change>,
}

impl Changed for Changes {
    fn changed(&self) -> bool {
        [&self.questions, &self.approvals, &self.notices].into_iter().flatten().any(Change::changed)
    }
}

impl Changes {
    /// The words before the file's path. One hook touched: as it always read; an uninstall: how
    /// many were removed; several installed: each hook's change.
    fn describe(&self, matcher: Option<&str>) -> String {
        let approvals_hook = match matcher {
            Some("*") | None => "PermissionRequest hook for every tool".to_owned(),
            Some(tools) => format!("PermissionRequest hook for {}", tools.replace('|', ", ")),
        };
        let touched: Vec<(String, &Change)> = [
            ("PreToolUse hook for AskUserQuestion".to_owned(), &self.questions),
            (approvals_hook, &self.approvals),
            ("Notification hook (terminals that wait)".to_owned(), &self.notices),
        ]
        .into_iter()
        .filter_map(|(hook, change)| Some((hook, change.as_ref()?)))
        .collect();
        let changes = || touched.iter().map(|(_, change)| *change);
        if let [(hook, change)] = touched.as_slice() {
            return describe_change(change, hook);
        }
        if touched.is_empty() {
            return "nothing asked of".to_owned();
        }
        let removing = changes()
            .all(|change| matches!(change, Change::Removed { .. } | Change::NothingToRemove));
        if removing {
            let count = changes()
                .map(|change| match change {
                    Change::Removed { count } => *count,
                    _ => 0,
                })
                .sum();
            return match count {
                0 => describe_change(&Change::NothingToRemove, ""),
                count => describe_change(&Change::Removed { count }, ""),
            };
        }
        if changes().all(|change| *change == Change::AlreadyThere) {
            return "already has askpane's hooks;".to_owned();
        }
        let words: Vec<String> = touched
            .iter()
            .enumerate()
            .map(|(index, (hook, change))| {
                let whose = if index == 0 { "askpane's" } else { "its" };
                format!("{whose} {hook}: {}", change_word(change))
            })
            .collect();
        format!("{}; in", words.join("; "))
    }
}

/// One hook's change, before the file's path: `added askpane's {hook} to`.
fn describe_change(change: &Change, hook: &str) -> String {
    match change {
        Change::Added => format!("added askpane's {hook} to"),
        Change::Updated { from } => {
            format!("pointed askpane's hook (was `{from}`) at this binary in")
        }
        Change::Removed { count } => format!("removed {count} askpane hook(s) from"),
        Change::AlreadyThere => "already has askpane's hook;".to_owned(),
        Change::NothingToRemove => "has no askpane hook;".to_owned(),
    }
}

/// One hook's change in a word or two, for a line about both.
fn change_word(change: &Change) -> String {
    match change {
        Change::Added => "added".to_owned(),
        Change::Updated { from } => format!("updated (was `{from}`)"),
        Change::Removed { count } => format!("{count} removed"),
        Change::AlreadyThere => "already there".to_owned(),
        Change::NothingToRemove => "none there".to_owned(),
    }
}

/// Whether an edit changed the file (nothing is written when it did not).
trait Changed {
    fn changed(&self) -> bool;
}

impl Changed for Change {
    fn changed(&self) -> bool {
        Change::changed(self)
    }
}

/// Codex's own folder: `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()) {
        Some(dir) => Ok(dir),
        None => Ok(home()?.join(".codex")),
    }
}

/// `askpane install codex` / `askpane uninstall codex`: the hook in `hooks.json`, then its
/// trust in `config.toml`. Codex silently skips a hook nobody trusted, so the trust is part of
/// installing: its key and hash come from Codex itself (`hooks/list`); when Codex cannot be
/// asked, the hook stays installed and this says how to trust it by hand (exit 1).
fn codex_hook(target: &CodexTarget, install: bool) -> anyhow::Result<u8> {
    let folder = codex_home()?;
    let hooks_path = folder.join("hooks.json");
    let config_path = folder.join("config.toml");
    let cwd = std::env::current_dir().context("the current folder")?;
    let cwd = cwd.to_string_lossy().into_owned();
    let binary = std::env::current_exe().context("cannot find askpane's own path")?;
    let command = format!("{} codex-hook", claude::program_command(&binary));
    let list = || {
        askpane::transport::agents::codex::list_hooks(&target.codex_bin, &cwd, CODEX_LIST_WAIT)
            .map(|hooks| {
                hooks.into_iter().filter(|hook| codex::is_askpane_codex_hook(&hook.command))
            })
            .map(Iterator::collect::<Vec<_>>)
    };
    let read_toml = |existing: Option<&str>| -> anyhow::Result<toml_edit::DocumentMut> {
        existing
            .unwrap_or_default()
            .parse()
            .with_context(|| format!("{} is not valid TOML", config_path.display()))
    };
    if !install {
        // The trust first, while Codex still lists the hook under its key.
        let keys: Vec<String> = match list() {
            Ok(hooks) => hooks.into_iter().map(|hook| hook.key).collect(),
            Err(error) => {
                eprintln!("askpane: cannot ask Codex which trust entries are askpane's ({error})");
                Vec::new()
            }
        };
        if !keys.is_empty() {
            rewrite(
                &config_path,
                |existing| {
                    let mut document = read_toml(existing)?;
                    let change = codex::untrust(&mut document, &keys);
                    Ok((document.to_string(), change))
                },
                |change| match change {
                    Change::Removed { .. } => "removed the trust of askpane's hook from".to_owned(),
                    _ => "has no trust entry for askpane's hook;".to_owned(),
                },
            )?;
        }
    }
    rewrite(
        &hooks_path,
        |existing| {
            let mut settings: Value = match existing {
                Some(text) if !text.trim().is_empty() => serde_json::from_str(text)
                    .with_context(|| format!("{} is not valid JSON", hooks_path.display()))?,
                _ => Value::Object(serde_json::Map::new()),
            };
            let change = match install {
                true => codex::install(&mut settings, &command)?,
                false => codex::uninstall(&mut settings),
            };
            if install && target.approvals {
                let event = codex::Event::PermissionRequest;
                let approvals = codex::install_for(&mut settings, &command, event)?;
                match approvals {
                    Change::Updated { from } => say!(
                        "askpane: pointed askpane's PermissionRequest hook (was `{from}`) at this \
                         binary"
                    ),
                    Change::Added => say!(
                        "askpane: added askpane's PermissionRequest hook: the commands and \
                         patches Codex asks you to approve are shown by askpane"
                    ),
                    _ => {}
                }
            }
            let mut text = serde_json::to_string_pretty(&settings)?;
            text.push('\n');
            Ok((text, change))
        },
        |change| match change {
            Change::Added => "added askpane's PreToolUse hook for request_user_input to".to_owned(),
            Change::Updated { from } => {
                format!("pointed askpane's hook (was `{from}`) at this binary in")
            }
            Change::Removed { count } => format!("removed {count} askpane hook(s) from"),
            Change::AlreadyThere => "already has askpane's hook;".to_owned(),
            Change::NothingToRemove => "has no askpane hook;".to_owned(),
        },
    )?;
    if !install {
        return Ok(exit::OK);
    }
    let hooks = match list() {
        Ok(hooks) if !hooks.is_empty() => hooks,
        problem => {
            let why = match problem {
                Err(error) => error.to_string(),
                Ok(_) => "Codex does not list askpane's hook".to_owned(),
            };
            eprintln!(
                "askpane: the hook is installed but not trusted, and Codex skips hooks nobody \
                 trusted: {why}. Trust it in Codex (its hooks list), or run \
                 `askpane install codex --codex-bin PATH` again with Codex's path."
            );
            return Ok(exit::DECLINED);
        }
    };
    for hook in hooks {
        rewrite(
            &config_path,
            |existing| {
                let mut document = read_toml(existing)?;
                let change = codex::trust(&mut document, &hook.key, &hook.current_hash);
                Ok((document.to_string(), change))
            },
            |change| match change {
                Change::Added | Change::Updated { .. } => {
                    "trusted askpane's hook (as Codex does when you trust it) in".to_owned()
                }
                _ => "already trusts askpane's hook;".to_owned(),
            },
        )?;
    }
    Ok(exit::OK)
}

/// How long `install codex` waits for Codex to list its hooks.
const CODEX_LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

fn settings_path(target: &ClaudeSettings) -> anyhow::Result<PathBuf> {
    if let Some(project) = &target.project {
        // A mistyped project must not grow a new folder tree.
        anyhow::ensure!(project.is_dir(), "{} is not a folder", project.display());
        return Ok(project.join(".claude").join("settings.json"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; use --project DIR")?;
    Ok(PathBuf::from(home).join(".claude").join("settings.json"))
}

/// Copies the settings before they are changed: `settings.json.askpane-backup-<unix time>`.
fn write_backup(path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    // Never overwrite an earlier backup: two changes within a second get -2, -3, ….
    let base = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let backup = (1..)
        .map(|n| match n {
            1 => path.with_file_name(format!("{base}.askpane-backup-{stamp}")),
            n => path.with_file_name(format!("{base}.askpane-backup-{stamp}-{n}")),
        })
        .find(|candidate| !candidate.exists())
        .context("no free backup name")?;
    std::fs::write(&backup, text)
        .with_context(|| format!("cannot write the backup {}", backup.display()))?;
    Ok(backup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_agent_runs_the_inbox_at_login_with_the_path_escaped() {
        let plist = launch_agent_plist("/Users/a&b/<bin>/askpane");
        assert!(plist.contains("<string>/Users/a&amp;b/&lt;bin&gt;/askpane</string>"), "{plist}");
        assert!(plist.contains("<string>inbox</string>"));
        assert!(plist.contains("<key>RunAtLoad</key>\n  <true/>"));
        assert!(plist.contains("<key>KeepAlive</key>\n  <false/>"));
        assert!(plist.contains(&format!("<string>{LAUNCH_AGENT}</string>")));
    }

    #[test]
    fn the_startup_script_starts_the_inbox_minimised_with_the_path_quoted() {
        let script = startup_script(r"C:\Users\Ada Lovelace\100% tools\askpane.exe");
        assert_eq!(
            script,
            "@echo off\r\n\
             rem askpane inbox: one window for every AI agent's questions\r\n\
             start \"askpane inbox\" /min \"C:\\Users\\Ada Lovelace\\100%% tools\\askpane.exe\" inbox\r\n"
        );
    }
}
