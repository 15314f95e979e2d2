//! Claude Code's `settings.json`: adding and removing askpane's PreToolUse hook, keeping the rest.
//!
//! Pure JSON in, JSON out; the caller reads, backs up and writes the file. The entry is
//! `{"matcher":"AskUserQuestion","hooks":[{"type":"command","command":"<askpane> hook","timeout":…,
//! "statusMessage":…}]}`
//! under `hooks.PreToolUse`. An askpane hook is recognised by its command: a program named
//! `askpane` run with `hook`, wherever it lives, so installing twice (or from a moved binary)
//! keeps one entry.

use serde_json::{Map, Value, json};

use askpane::protocol::HOOK_STATUS_MESSAGE;
use askpane::protocol::envelope::TOOL_NAME;

/// How long Claude Code waits for the hook, in seconds: a day, long enough for a human.
pub const HOOK_TIMEOUT_SECS: u64 = 86_400;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("the settings must be a JSON object, found {0}")]
    NotObject(&'static str),
    #[error("`{path}` must be {expected}, found {found}")]
    WrongType { path: String, expected: &'static str, found: &'static str },
}

/// What [`install`] or [`uninstall`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Added,
    /// An askpane hook was there with another command (a moved binary): now this one.
    Updated {
        from: String,
    },
    AlreadyThere,
    Removed {
        count: usize,
    },
    NothingToRemove,
}

impl Change {
    pub fn changed(&self) -> bool {
        matches!(self, Change::Added | Change::Updated { .. } | Change::Removed { .. })
    }
}

/// True for a hook command that runs askpane's hook: `/any/path/askpane hook [args…]`, the
/// program path possibly quoted (it may contain spaces).
pub fn is_askpane_hook(command: &str) -> bool {
    let command = command.trim_start();
    let (program, rest) = match command.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let inner = &command[1..];
            match inner.find(quote) {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => return false,
            }
        }
        _ => command.split_once(char::is_whitespace).unwrap_or((command, "")),
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    (name == "askpane" || name == "askpane.exe") && rest.split_whitespace().next() == Some("hook")
}

/// The hook command for this binary: its path (quoted if it holds a space) and `hook`.
pub fn hook_command(binary: &std::path::Path) -> String {
    let path = binary.display().to_string();
    match path.contains(char::is_whitespace) {
        true => format!("\"{path}\" hook"),
        false => format!("{path} hook"),
    }
}

fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a mut Map<String, Value>, SettingsError> {
    let value = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let found = askpane::protocol::json_type_name(value);
    value.as_object_mut().ok_or(SettingsError::WrongType {
        path: path.to_owned(),
        expected: "an object",
        found,
    })
}

fn array_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a mut Vec<Value>, SettingsError> {
    let value = map.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    let found = askpane::protocol::json_type_name(value);
    value.as_array_mut().ok_or(SettingsError::WrongType {
        path: path.to_owned(),
        expected: "an array",
        found,
    })
}

/// The command strings of every askpane hook in an AskUserQuestion matcher entry.
fn askpane_hooks(entry: &mut Value) -> impl Iterator<Item = &mut Value> {
    let for_tool = entry.get("matcher").and_then(Value::as_str) == Some(TOOL_NAME);
    entry
        .get_mut("hooks")
        .and_then(Value::as_array_mut)
        .filter(|_| for_tool)
        .into_iter()
        .flatten()
        .filter(|hook| hook.get("command").and_then(Value::as_str).is_some_and(is_askpane_hook))
}

/// Adds the hook (or points an existing askpane hook at `command`). Other keys and hooks stay.
pub fn install(settings: &mut Value, command: &str) -> Result<Change, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let hooks = object_at(root, "hooks", "hooks")?;
    let pre_tool_use = array_at(hooks, "PreToolUse", "hooks.PreToolUse")?;
    if let Some(hook) = pre_tool_use.iter_mut().flat_map(askpane_hooks).next() {
        let current = hook.get("command").and_then(Value::as_str).unwrap_or_default().to_owned();
        // The user's own arguments after `hook` (say `--timeout 60`) stay.
        let extra = current.split_once(" hook").map_or("", |(_, rest)| rest);
        let updated = format!("{command}{extra}");
        if current == updated {
            return Ok(Change::AlreadyThere);
        }
        hook["command"] = Value::String(updated);
        // A status message of the user's own stays; an entry written before there was one gets it.
        if let Some(hook) = hook.as_object_mut() {
            hook.entry("statusMessage").or_insert_with(|| json!(HOOK_STATUS_MESSAGE));
        }
        return Ok(Change::Updated { from: current });
    }
    pre_tool_use.push(json!({
        "matcher": TOOL_NAME,
        "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS,
            "statusMessage": HOOK_STATUS_MESSAGE}],
    }));
    Ok(Change::Added)
}

/// Removes every askpane hook, and the entries, lists and objects that become empty by it.
pub fn uninstall(settings: &mut Value) -> Result<Change, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(Change::NothingToRemove);
    };
    let Some(pre_tool_use) = hooks.get_mut("PreToolUse").and_then(Value::as_array_mut) else {
        return Ok(Change::NothingToRemove);
    };
    let mut count = 0;
    pre_tool_use.retain_mut(|entry| {
        let for_tool = entry.get("matcher").and_then(Value::as_str) == Some(TOOL_NAME);
        let Some(list) = entry.get_mut("hooks").and_then(Value::as_array_mut).filter(|_| for_tool)
        else {
            return true;
        };
        let before = list.len();
        list.retain(|hook| {
            !hook.get("command").and_then(Value::as_str).is_some_and(is_askpane_hook)
        });
        count += before - list.len();
        !(before > list.len() && list.is_empty())
    });
    if count == 0 {
        return Ok(Change::NothingToRemove);
    }
    if pre_tool_use.is_empty() {
        hooks.shift_remove("PreToolUse");
    }
    if hooks.is_empty() {
        root.shift_remove("hooks");
    }
    Ok(Change::Removed { count })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMAND: &str = "/opt/askpane/bin/askpane hook";

    #[test]
    fn install_merges_keeps_everything_else_and_is_idempotent() {
        let mut settings = json!({
            "model": "opus",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
            },
        });
        assert_eq!(install(&mut settings, COMMAND), Ok(Change::Added));
        let once = settings.clone();
        assert_eq!(install(&mut settings, COMMAND), Ok(Change::AlreadyThere));
        assert_eq!(settings, once);
        assert_eq!(
            settings,
            json!({
                "model": "opus",
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]},
                        {"matcher": "AskUserQuestion", "hooks": [
                            {"type": "command", "command": COMMAND, "timeout": 86_400,
                             "statusMessage": HOOK_STATUS_MESSAGE}]},
                    ],
                    "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
                },
            })
        );
    }

    #[test]
    fn a_moved_binary_updates_the_one_entry() {
        let mut settings = json!({});
        install(&mut settings, "/old/askpane hook").expect("installs");
        let change = install(&mut settings, COMMAND).expect("installs");
        assert_eq!(change, Change::Updated { from: "/old/askpane hook".into() });
        assert_eq!(settings["hooks"]["PreToolUse"].as_array().map(Vec::len), Some(1));
        install(&mut settings, "/old/askpane hook --timeout 60").expect("installs");
        install(&mut settings, COMMAND).expect("installs");
        let hook = &settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"];
        assert_eq!(hook, "/opt/askpane/bin/askpane hook --timeout 60", "the user's arguments stay");
        assert_eq!(install(&mut settings, COMMAND), Ok(Change::AlreadyThere));
    }

    #[test]
    fn uninstall_removes_exactly_the_askpane_hook() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "AskUserQuestion", "hooks": [
                {"type": "command", "command": "other-tool"},
                {"type": "command", "command": COMMAND}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/x/askpane hook"}]},
        ]}, "theme": "dark"});
        assert_eq!(uninstall(&mut settings), Ok(Change::Removed { count: 1 }));
        assert_eq!(
            settings,
            json!({"hooks": {"PreToolUse": [
                {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": "other-tool"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/x/askpane hook"}]},
            ]}, "theme": "dark"})
        );
        assert_eq!(uninstall(&mut settings), Ok(Change::NothingToRemove));
        let mut only_ours = json!({"theme": "dark"});
        install(&mut only_ours, COMMAND).expect("installs");
        assert_eq!(uninstall(&mut only_ours), Ok(Change::Removed { count: 1 }));
        assert_eq!(only_ours, json!({"theme": "dark"}));
    }

    #[test]
    fn wrong_shapes_are_errors_that_name_the_key() {
        let error = |mut settings: Value| install(&mut settings, COMMAND).expect_err("refused");
        assert_eq!(
            error(json!([])).to_string(),
            "the settings must be a JSON object, found an array"
        );
        assert_eq!(
            error(json!({"hooks": {"PreToolUse": {}}})).to_string(),
            "`hooks.PreToolUse` must be an array, found an object"
        );
        assert!(is_askpane_hook("\"/Applications/x y/askpane\" hook --timeout 60"));
        assert_eq!(hook_command(std::path::Path::new("/a b/askpane")), "\"/a b/askpane\" hook");
        assert!(is_askpane_hook("/usr/local/bin/askpane hook --timeout 60"));
        assert!(!is_askpane_hook("/usr/local/bin/askpane ask"));
    }
}
