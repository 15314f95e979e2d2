//! MCP clients' configuration files: adding and removing the `askpane` server entry
//! (`askpane mcp`) with the tool timeout each client needs for a person to answer, keeping the
//! rest of the file (issue 12).
//!
//! Pure: text or JSON in, the same out; the caller reads, backs up and writes the file. JSON
//! clients (Claude Code, Gemini CLI, Cursor, OpenCode) are edited as `serde_json` values (key
//! order kept); Codex's TOML with `toml_edit`, which keeps comments and layout.

use serde_json::{Map, Value, json};

use super::claude::{Change, SettingsError};

/// The name of askpane's entry in every client's list of servers.
pub const SERVER_NAME: &str = "askpane";

/// A day, in seconds: how long a client is told to wait for one tool call (a person may be
/// away; askpane's own `--timeout` is the way to end a question sooner).
pub const TOOL_TIMEOUT_SECS: u64 = 86_400;

/// The MCP clients `askpane install mcp` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpClient {
    /// Claude Code: `~/.claude.json`, `mcpServers` (user scope). No per-server timeout: Claude
    /// Code's `MCP_TOOL_TIMEOUT` (environment) applies.
    Claude,
    /// Codex: `~/.codex/config.toml`, `[mcp_servers.askpane]` with `tool_timeout_sec` (default
    /// 60 s).
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`, `mcpServers` with `timeout` in ms (default 10 min).
    Gemini,
    /// Cursor: `~/.cursor/mcp.json`, `mcpServers` (no timeout setting).
    Cursor,
    /// OpenCode: `~/.config/opencode/opencode.json`, `mcp` (a `local` server, the command as one
    /// list).
    Opencode,
}

impl McpClient {
    /// The configuration file, relative to the home directory (OpenCode's: to
    /// `$XDG_CONFIG_HOME`, else `~/.config`).
    pub fn relative_path(self) -> &'static str {
        match self {
            McpClient::Claude => ".claude.json",
            McpClient::Codex => ".codex/config.toml",
            McpClient::Gemini => ".gemini/settings.json",
            McpClient::Cursor => ".cursor/mcp.json",
            McpClient::Opencode => "opencode/opencode.json",
        }
    }

    /// The client's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            McpClient::Claude => "Claude Code",
            McpClient::Codex => "Codex",
            McpClient::Gemini => "Gemini CLI",
            McpClient::Cursor => "Cursor",
            McpClient::Opencode => "OpenCode",
        }
    }

    /// The key of the object that lists the servers, in a JSON client's file.
    fn servers_key(self) -> &'static str {
        match self {
            McpClient::Opencode => "mcp",
            _ => "mcpServers",
        }
    }

    /// askpane's entry in a JSON client's list of servers, for the binary `binary`.
    pub fn json_entry(self, binary: &str) -> Value {
        match self {
            McpClient::Claude => {
                json!({"type": "stdio", "command": binary, "args": ["mcp"], "env": {}})
            }
            McpClient::Gemini => json!({"command": binary, "args": ["mcp"],
                "timeout": TOOL_TIMEOUT_SECS * 1000}),
            // Codex's entry is TOML (`install_codex`); this is the same entry in JSON.
            McpClient::Cursor | McpClient::Codex => {
                json!({"type": "stdio", "command": binary, "args": ["mcp"]})
            }
            McpClient::Opencode => {
                json!({"type": "local", "command": [binary, "mcp"], "enabled": true})
            }
        }
    }
}

/// The command an entry runs (for "was `…`" in messages).
fn entry_command(entry: &Value) -> String {
    match &entry["command"] {
        Value::String(command) => command.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// Issue 29 (`askpane doctor`): the program askpane's entry in a JSON client's settings runs.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read by askpane doctor, which is Linux's")
)]
pub fn installed_program(client: McpClient, settings: &Value) -> Option<String> {
    let entry = settings.get(client.servers_key())?.get(SERVER_NAME)?;
    match entry.get("command")? {
        Value::String(program) => Some(program.clone()),
        // OpenCode's: the command as a list, the program first.
        Value::Array(parts) => parts.first()?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// The program `[mcp_servers.askpane]` in Codex's `config.toml` runs.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read by askpane doctor, which is Linux's")
)]
pub fn installed_codex_program(document: &toml_edit::DocumentMut) -> Option<String> {
    let entry = document.get("mcp_servers")?.as_table()?.get(SERVER_NAME)?.as_table()?;
    entry.get("command")?.as_str().map(str::to_owned)
}

/// Adds askpane's entry to a JSON client's settings, or makes the one there what it should be.
pub fn install_json(
    client: McpClient,
    settings: &mut Value,
    binary: &str,
) -> Result<Change, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let key = client.servers_key();
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let found = askpane::protocol::json_type_name(servers);
    let servers = servers.as_object_mut().ok_or(SettingsError::WrongType {
        path: key.to_owned(),
        expected: "an object",
        found,
    })?;
    let wanted = client.json_entry(binary);
    match servers.get(SERVER_NAME) {
        Some(current) if *current == wanted => Ok(Change::AlreadyThere),
        Some(current) => {
            let from = entry_command(current);
            servers.insert(SERVER_NAME.to_owned(), wanted);
            Ok(Change::Updated { from })
        }
        None => {
            servers.insert(SERVER_NAME.to_owned(), wanted);
            Ok(Change::Added)
        }
    }
}

/// Removes askpane's entry from a JSON client's settings (and the list, if it is left empty).
pub fn uninstall_json(client: McpClient, settings: &mut Value) -> Result<Change, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let key = client.servers_key();
    let Some(servers) = root.get_mut(key).and_then(Value::as_object_mut) else {
        return Ok(Change::NothingToRemove);
    };
    if servers.shift_remove(SERVER_NAME).is_none() {
        return Ok(Change::NothingToRemove);
    }
    if servers.is_empty() {
        root.shift_remove(key);
    }
    Ok(Change::Removed { count: 1 })
}

/// Adds (or corrects) `[mcp_servers.askpane]` in Codex's `config.toml`; comments and the other
/// tables stay as they are.
pub fn install_codex(
    document: &mut toml_edit::DocumentMut,
    binary: &str,
) -> Result<Change, SettingsError> {
    use toml_edit::{Item, Table, value};
    let servers = document
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or(SettingsError::WrongType {
            path: "mcp_servers".to_owned(),
            expected: "a table",
            found: "something else",
        })?;
    let current = servers.get(SERVER_NAME).and_then(Item::as_table);
    let command = current.and_then(|table| table.get("command")).and_then(Item::as_str);
    let from = command.map(str::to_owned);
    let args_fit =
        current.and_then(|table| table.get("args")).and_then(Item::as_array).is_some_and(|args| {
            args.len() == 1 && args.get(0).and_then(|arg| arg.as_str()) == Some("mcp")
        });
    let timeout_fits = current
        .and_then(|table| table.get("tool_timeout_sec"))
        .and_then(Item::as_integer)
        .is_some_and(|secs| u64::try_from(secs).is_ok_and(|secs| secs == TOOL_TIMEOUT_SECS));
    if from.as_deref() == Some(binary) && args_fit && timeout_fits {
        return Ok(Change::AlreadyThere);
    }
    let timeout = i64::try_from(TOOL_TIMEOUT_SECS).unwrap_or(i64::MAX);
    let mut table = servers.get(SERVER_NAME).and_then(Item::as_table).cloned().unwrap_or_default();
    table.insert("command", value(binary));
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    table.insert("args", value(args));
    table.insert("tool_timeout_sec", value(timeout));
    servers.insert(SERVER_NAME, Item::Table(table));
    Ok(match from {
        Some(from) => Change::Updated { from },
        None => Change::Added,
    })
}

/// Removes `[mcp_servers.askpane]` from Codex's `config.toml` (and `[mcp_servers]`, if it is
/// left empty).
pub fn uninstall_codex(document: &mut toml_edit::DocumentMut) -> Change {
    let Some(servers) = document.get_mut("mcp_servers").and_then(toml_edit::Item::as_table_mut)
    else {
        return Change::NothingToRemove;
    };
    if servers.remove(SERVER_NAME).is_none() {
        return Change::NothingToRemove;
    }
    if servers.is_empty() {
        document.remove("mcp_servers");
    }
    Change::Removed { count: 1 }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn json_install_merges_is_idempotent_and_uninstall_restores() {
        let original = json!({"theme": "dark", "mcpServers": {"other": {"command": "x"}}});
        let mut settings = original.clone();
        assert_eq!(
            install_json(McpClient::Gemini, &mut settings, "/bin/askpane"),
            Ok(Change::Added)
        );
        assert_eq!(
            settings["mcpServers"]["askpane"],
            json!({"command": "/bin/askpane", "args": ["mcp"], "timeout": 86_400_000})
        );
        assert_eq!(
            install_json(McpClient::Gemini, &mut settings, "/bin/askpane"),
            Ok(Change::AlreadyThere)
        );
        assert_eq!(
            install_json(McpClient::Gemini, &mut settings, "/new/askpane"),
            Ok(Change::Updated { from: "/bin/askpane".into() })
        );
        assert_eq!(
            uninstall_json(McpClient::Gemini, &mut settings),
            Ok(Change::Removed { count: 1 })
        );
        assert_eq!(settings, original);
        assert_eq!(uninstall_json(McpClient::Gemini, &mut settings), Ok(Change::NothingToRemove));
    }

    #[test]
    fn codex_install_keeps_comments_and_other_tables() {
        let text = "# my settings\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
        let mut document: toml_edit::DocumentMut = text.parse().unwrap();
        assert_eq!(install_codex(&mut document, "/bin/askpane"), Ok(Change::Added));
        let written = document.to_string();
        assert!(written.starts_with(text), "{written}");
        assert!(
            written.ends_with(
                "[mcp_servers.askpane]\ncommand = \"/bin/askpane\"\nargs = [\"mcp\"]\ntool_timeout_sec = 86400\n"
            ),
            "{written}"
        );
        let mut again: toml_edit::DocumentMut = written.parse().unwrap();
        assert_eq!(install_codex(&mut again, "/bin/askpane"), Ok(Change::AlreadyThere));
        assert_eq!(uninstall_codex(&mut again), Change::Removed { count: 1 });
        assert_eq!(again.to_string(), text);
    }
}
