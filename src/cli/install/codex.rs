//! `askpane install codex`: askpane's `PreToolUse` hook for `request_user_input` in Codex's
//! `hooks.json` (merged with what is there, other hooks and keys kept in order), with
//! `--approvals` its `PermissionRequest` hook too (every approval Codex would ask for), and the trust
//! Codex needs before it runs a hook, in `config.toml` (`[hooks.state."<key>"]`, with
//! `toml_edit`, which keeps comments and layout). Pure edits; the caller reads and writes.

use serde_json::{Map, Value, json};

use super::claude::{Change, SettingsError};

/// The tool askpane's hook answers.
pub const MATCHER: &str = "request_user_input";
/// How long Codex waits for the hook, in seconds: a person may take their time.
pub const TIMEOUT_SECS: u64 = 86_400;

/// True for a hook command that runs `askpane codex-hook` (the program path possibly quoted).
pub fn is_askpane_codex_hook(command: &str) -> bool {
    let command = command.trim_end();
    command.ends_with(" codex-hook") && command.contains("askpane")
}

/// The hook events askpane's command is installed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `PreToolUse` for `request_user_input`: Codex's questions.
    PreToolUse,
    /// `PermissionRequest`, every tool: the approvals Codex is about to ask for.
    PermissionRequest,
}

impl Event {
    const ALL: [Event; 2] = [Event::PreToolUse, Event::PermissionRequest];

    fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
        }
    }

    /// askpane's group: questions are matched to their tool; approvals are all askpane's to
    /// show (no matcher: Codex asks approval for its shell (`Bash`), `apply_patch`, and more).
    fn entry(self, command: &str) -> Value {
        let hooks = json!([{"type": "command", "command": command, "timeout": TIMEOUT_SECS}]);
        match self {
            Event::PreToolUse => json!({"matcher": MATCHER, "hooks": hooks}),
            Event::PermissionRequest => json!({"hooks": hooks}),
        }
    }
}

/// The groups of one event in `hooks.json`, made if missing.
fn event_groups(settings: &mut Value, event: Event) -> Result<&mut Vec<Value>, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let found = askpane::protocol::json_type_name(hooks);
    let hooks = hooks.as_object_mut().ok_or(SettingsError::WrongType {
        path: "hooks".into(),
        expected: "an object",
        found,
    })?;
    let groups = hooks.entry(event.name()).or_insert_with(|| Value::Array(Vec::new()));
    let found = askpane::protocol::json_type_name(groups);
    groups.as_array_mut().ok_or(SettingsError::WrongType {
        path: format!("hooks.{}", event.name()),
        expected: "an array",
        found,
    })
}

/// The commands of one group.
fn commands(group: &Value) -> impl Iterator<Item = &str> {
    let hooks = group.get("hooks").and_then(Value::as_array).map(Vec::as_slice);
    hooks.unwrap_or_default().iter().filter_map(|hook| hook.get("command")?.as_str())
}

/// Issue 29 (`askpane doctor`): the commands of askpane's hooks for `event` in `settings`.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read by askpane doctor, which is Linux's")
)]
pub fn installed(settings: &Value, event: Event) -> Vec<String> {
    let groups = settings.get("hooks").and_then(|hooks| hooks.get(event.name()));
    let groups = groups.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let commands = groups.iter().flat_map(commands);
    commands.filter(|command| is_askpane_codex_hook(command)).map(str::to_owned).collect()
}

/// Where askpane's group is among the `PreToolUse` groups, if it is there (the tests' view).
#[cfg(test)]
fn position(settings: &Value) -> Option<usize> {
    let groups = settings.get("hooks")?.get("PreToolUse")?.as_array()?;
    groups.iter().position(|group| commands(group).any(is_askpane_codex_hook))
}

/// Adds askpane's question hook (`command`: `<askpane> codex-hook`), or points an older one at it.
pub fn install(settings: &mut Value, command: &str) -> Result<Change, SettingsError> {
    install_for(settings, command, Event::PreToolUse)
}

/// Adds askpane's hook for `event`, or points an older one at `command`.
pub fn install_for(
    settings: &mut Value,
    command: &str,
    event: Event,
) -> Result<Change, SettingsError> {
    let entry = event.entry(command);
    let groups = event_groups(settings, event)?;
    let existing = groups.iter().position(|group| commands(group).any(is_askpane_codex_hook));
    match existing.and_then(|index| groups.get_mut(index)) {
        Some(group) if *group == entry => Ok(Change::AlreadyThere),
        Some(group) => {
            let from = commands(group).find(|found| is_askpane_codex_hook(found));
            let from = from.unwrap_or_default().to_owned();
            *group = entry;
            Ok(Change::Updated { from })
        }
        None => {
            groups.push(entry);
            Ok(Change::Added)
        }
    }
}

/// Removes askpane's hook groups, for questions and approvals; other hooks stay as they were
/// (an event with no hooks is not added).
pub fn uninstall(settings: &mut Value) -> Change {
    let mut removed = 0;
    for event in Event::ALL {
        let present = settings.get("hooks").and_then(|hooks| hooks.get(event.name())).is_some();
        if !present {
            continue;
        }
        let Ok(groups) = event_groups(settings, event) else { continue };
        let before = groups.len();
        groups.retain(|group| !commands(group).any(is_askpane_codex_hook));
        removed += before - groups.len();
    }
    match removed {
        0 => Change::NothingToRemove,
        count => Change::Removed { count },
    }
}

/// Records in `config.toml` that Codex may run the hook `key` as it is now (`hash`, from
/// `hooks/list`): the same `[hooks.state."<key>"] trusted_hash` Codex writes when a user trusts
/// a hook in its own UI.
pub fn trust(document: &mut toml_edit::DocumentMut, key: &str, hash: &str) -> Change {
    use toml_edit::{Item, Table, value};
    let hooks = document.entry("hooks").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(hooks) = hooks.as_table_mut() else { return Change::NothingToRemove };
    let state = hooks.entry("state").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(state) = state.as_table_mut() else { return Change::NothingToRemove };
    let before = state.get(key).and_then(|entry| entry.get("trusted_hash")?.as_str());
    if before == Some(hash) {
        return Change::AlreadyThere;
    }
    let change = match before {
        Some(from) => Change::Updated { from: from.to_owned() },
        None => Change::Added,
    };
    let mut entry = Table::new();
    entry.insert("trusted_hash", value(hash));
    state.insert(key, Item::Table(entry));
    change
}

/// Forgets the trust of the hooks `keys` (askpane's, as `hooks/list` named them).
pub fn untrust(document: &mut toml_edit::DocumentMut, keys: &[String]) -> Change {
    let state = document
        .get_mut("hooks")
        .and_then(|hooks| hooks.get_mut("state"))
        .and_then(toml_edit::Item::as_table_mut);
    let Some(state) = state else { return Change::NothingToRemove };
    let count = keys.iter().filter(|key| state.remove(key).is_some()).count();
    match count {
        0 => Change::NothingToRemove,
        count => Change::Removed { count },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_is_added_once_kept_beside_others_and_removed_alone() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}});
        assert_eq!(install(&mut settings, "/bin/askpane codex-hook"), Ok(Change::Added));
        assert_eq!(install(&mut settings, "/bin/askpane codex-hook"), Ok(Change::AlreadyThere));
        assert_eq!(position(&settings), Some(1));
        assert_eq!(
            install(&mut settings, "/opt/askpane codex-hook"),
            Ok(Change::Updated { from: "/bin/askpane codex-hook".into() })
        );
        assert_eq!(uninstall(&mut settings), Change::Removed { count: 1 });
        assert_eq!(
            settings,
            json!({"hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}})
        );
    }

    #[test]
    fn the_approvals_hook_is_a_permission_request_group_for_every_tool_and_leaves_with_the_rest() {
        let mut settings = json!({"hooks": {"PermissionRequest": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}});
        let command = "/bin/askpane codex-hook";
        assert_eq!(install(&mut settings, command), Ok(Change::Added));
        assert_eq!(
            install_for(&mut settings, command, Event::PermissionRequest),
            Ok(Change::Added)
        );
        assert_eq!(
            install_for(&mut settings, command, Event::PermissionRequest),
            Ok(Change::AlreadyThere)
        );
        // The shape the recordings ran with: no matcher, Codex's own `timeout` key.
        assert_eq!(
            settings["hooks"]["PermissionRequest"][1],
            json!({"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_SECS}]})
        );
        assert_eq!(position(&settings), Some(0));
        assert_eq!(uninstall(&mut settings), Change::Removed { count: 2 });
        assert_eq!(
            settings,
            json!({"hooks": {"PreToolUse": [], "PermissionRequest": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}})
        );
        // Uninstalling adds no event that was not there.
        let mut bare = json!({"hooks": {}});
        assert_eq!(uninstall(&mut bare), Change::NothingToRemove);
        assert_eq!(bare, json!({"hooks": {}}));
    }

    #[test]
    fn trust_is_written_as_codex_writes_it_and_keeps_comments() {
        let text = "# mine\nmodel = \"o4\"\n";
        let mut document: toml_edit::DocumentMut = text.parse().expect("TOML");
        let key = "/h/.codex/hooks.json:pre_tool_use:0:0";
        assert_eq!(trust(&mut document, key, "sha256:ab"), Change::Added);
        assert_eq!(trust(&mut document, key, "sha256:ab"), Change::AlreadyThere);
        let written = document.to_string();
        assert!(written.starts_with(text), "{written}");
        assert!(
            written.contains("[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:ab\""),
            "{written}"
        );
        assert_eq!(untrust(&mut document, &[key.to_owned()]), Change::Removed { count: 1 });
    }
}
