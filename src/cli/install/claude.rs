//! Claude Code's `settings.json`: adding and removing askpane's hooks, keeping the rest.
//!
//! Pure JSON in, JSON out; the caller reads, backs up and writes the file. The question hook is
//! `{"matcher":"AskUserQuestion","hooks":[{"type":"command","command":"<askpane> hook","timeout":…,
//! "statusMessage":…}]}` under `hooks.PreToolUse`; the approval hook (issue 26) is the same under
//! `hooks.PermissionRequest`, its matcher the tools it answers (`*`, or `Bash|Edit`); the notice hook
//! (issue 26 item 6) runs the same command under `hooks.Notification`, matcher `*` (every type),
//! with a short timeout and no status message (it decides nothing). An askpane
//! hook is recognised by its command: a program named `askpane` run with `hook`, wherever it
//! lives, so installing twice (or from a moved binary) keeps one entry.

use serde_json::{Map, Value, json};

use askpane::protocol::HOOK_STATUS_MESSAGE;
use askpane::protocol::envelope::TOOL_NAME;

/// How long Claude Code waits for the hook, in seconds: a day, long enough for a human.
pub const HOOK_TIMEOUT_SECS: u64 = 86_400;

/// How long Claude Code waits for the notice hook, in seconds: it hands a notice on, bounded by
/// a few seconds of its own; this is a backstop.
pub const NOTICE_TIMEOUT_SECS: u64 = 10;

/// The notice hook's matcher: every notification type.
pub const NOTICE_MATCHER: &str = "*";

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

/// The small hook client's name (issue 30), installed beside askpane's binary.
pub const SMALL_HOOK: &str = "askpane-hook";

/// True for a hook command that runs askpane's hook: `/any/path/askpane hook [args…]` or the
/// small client, `/any/path/askpane-hook [args…]`, the program path possibly quoted (it may
/// contain spaces).
pub fn is_askpane_hook(command: &str) -> bool {
    hook_arguments(command).is_some()
}

/// The arguments after askpane's hook in `command` (`""` when none, with the space before them
/// when there are), or `None` when `command` does not run askpane's hook.
pub fn hook_arguments(command: &str) -> Option<&str> {
    let command = command.trim_start();
    let (program, rest) = match command.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let inner = &command[1..];
            let end = inner.find(quote)?;
            (&inner[..end], &inner[end + 1..])
        }
        _ => command.find(char::is_whitespace).map_or((command, ""), |at| command.split_at(at)),
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let name = name.strip_suffix(".exe").unwrap_or(name);
    match name {
        SMALL_HOOK => Some(rest),
        "askpane" => {
            let trimmed = rest.trim_start();
            let after = trimmed.strip_prefix("hook")?;
            (after.is_empty() || after.starts_with(char::is_whitespace)).then_some(after)
        }
        _ => None,
    }
}

/// `binary` as the program of a command: its path, quoted if it holds a space.
pub fn program_command(binary: &std::path::Path) -> String {
    let path = binary.display().to_string();
    match path.contains(char::is_whitespace) {
        true => format!("\"{path}\""),
        false => path,
    }
}

/// The hook command for this binary: the small client beside it when it is there (issue 30: a
/// hook process a fraction of the size), else the binary and `hook`. Only on Unix: elsewhere the
/// small client answers nothing itself (it runs `askpane hook`), so it would only add a process.
pub fn hook_command(binary: &std::path::Path) -> String {
    let small = binary.with_file_name(format!("{SMALL_HOOK}{}", std::env::consts::EXE_SUFFIX));
    match cfg!(unix) && small.is_file() {
        true => program_command(&small),
        false => format!("{} hook", program_command(binary)),
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

/// Which of askpane's three hooks: where it lives in `hooks`, and which matcher entries are its.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// `PreToolUse` for AskUserQuestion: the questions.
    Questions,
    /// `PermissionRequest` for the tools the user chose: the approvals (issue 26).
    Approvals,
    /// `Notification` of every type: terminals that wait, in the inbox's notification (issue 26
    /// item 6).
    Notices,
}

impl Hook {
    fn event(self) -> &'static str {
        match self {
            Hook::Questions => "PreToolUse",
            Hook::Approvals => "PermissionRequest",
            Hook::Notices => "Notification",
        }
    }

    /// The hook's entry as askpane writes it: a person may wait on the first two (a day, and
    /// Claude Code's spinner says so); a notice is handed on in seconds.
    fn written(self, command: &str) -> Value {
        match self {
            Hook::Questions | Hook::Approvals => json!({"type": "command", "command": command,
                "timeout": HOOK_TIMEOUT_SECS, "statusMessage": HOOK_STATUS_MESSAGE}),
            Hook::Notices => {
                json!({"type": "command", "command": command, "timeout": NOTICE_TIMEOUT_SECS})
            }
        }
    }

    /// Whether a matcher entry (by its `matcher`) is where this hook is kept: the question hook
    /// only under AskUserQuestion (an askpane hook the user put under `Bash` is the user's);
    /// the approval hook under any matcher, since the user picks the tools.
    fn owns(self, entry: &Value) -> bool {
        match self {
            Hook::Questions => entry.get("matcher").and_then(Value::as_str) == Some(TOOL_NAME),
            Hook::Approvals | Hook::Notices => true,
        }
    }
}

/// The matcher of an approval hook for `tools`: `*` for every tool, or the names joined with
/// `|` (Claude Code matches a tool's name against it as a regular expression). A name that is
/// not a tool's (letters, digits, `_`, `-`) is refused, saying which.
pub fn approvals_matcher(tools: &str) -> Result<String, String> {
    let tools = tools.trim();
    if tools.is_empty() || tools == "*" {
        return Ok("*".to_owned());
    }
    let mut names = Vec::new();
    for name in tools.split(',').map(str::trim).filter(|name| !name.is_empty()) {
        let is_a_name = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !is_a_name {
            return Err(format!(
                "`{name}` is not a tool name (letters, digits, `_` and `-`: Bash, Edit, \
                 mcp__server__tool)"
            ));
        }
        if name == TOOL_NAME {
            return Err(format!(
                "{TOOL_NAME} is a question, answered by the question hook; leave it out"
            ));
        }
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.is_empty() {
        true => Ok("*".to_owned()),
        false => Ok(names.join("|")),
    }
}

/// The askpane hooks of a matcher entry, when the entry is `hook`'s.
fn askpane_hooks(entry: &mut Value, hook: Hook) -> impl Iterator<Item = &mut Value> {
    let owned = hook.owns(entry);
    entry
        .get_mut("hooks")
        .and_then(Value::as_array_mut)
        .filter(|_| owned)
        .into_iter()
        .flatten()
        .filter(|hook| hook.get("command").and_then(Value::as_str).is_some_and(is_askpane_hook))
}

/// Whether a matcher entry holds `hook`.
fn holds_askpane_hook(entry: &Value, hook: Hook) -> bool {
    hook.owns(entry)
        && entry.get("hooks").and_then(Value::as_array).is_some_and(|hooks| {
            hooks.iter().any(|hook| {
                hook.get("command").and_then(Value::as_str).is_some_and(is_askpane_hook)
            })
        })
}

/// Issue 29 (`askpane doctor`): askpane's `which` hooks in `settings`, as install and uninstall
/// find them: each one's matcher and command.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read by askpane doctor, which is Linux's")
)]
pub fn installed(settings: &Value, which: Hook) -> Vec<(Option<String>, String)> {
    let entries = settings.get("hooks").and_then(|hooks| hooks.get(which.event()));
    let entries = entries.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut found = Vec::new();
    for entry in entries.iter().filter(|entry| which.owns(entry)) {
        let matcher = entry.get("matcher").and_then(Value::as_str).map(str::to_owned);
        let hooks = entry.get("hooks").and_then(Value::as_array).map(Vec::as_slice);
        for hook in hooks.unwrap_or_default() {
            if let Some(command) = hook.get("command").and_then(Value::as_str)
                && is_askpane_hook(command)
            {
                found.push((matcher.clone(), command.to_owned()));
            }
        }
    }
    found
}

/// Adds the question hook (or points an existing askpane hook at `command`). Other keys and
/// hooks stay.
pub fn install(settings: &mut Value, command: &str) -> Result<Change, SettingsError> {
    install_hook(settings, command, Hook::Questions, TOOL_NAME)
}

/// Adds the notice hook (issue 26 item 6), or points an existing one at `command`. Other keys
/// and hooks stay.
pub fn install_notices(settings: &mut Value, command: &str) -> Result<Change, SettingsError> {
    install_hook(settings, command, Hook::Notices, NOTICE_MATCHER)
}

/// Removes askpane's notice hook, as [`uninstall`] does the question hook.
pub fn uninstall_notices(settings: &mut Value) -> Result<Change, SettingsError> {
    uninstall_hook(settings, Hook::Notices)
}

/// Adds the approval hook for the tools `matcher` names ([`approvals_matcher`]), or points an
/// existing one at `command` and `matcher`. Other keys and hooks stay.
pub fn install_approvals(
    settings: &mut Value,
    command: &str,
    matcher: &str,
) -> Result<Change, SettingsError> {
    install_hook(settings, command, Hook::Approvals, matcher)
}

fn install_hook(
    settings: &mut Value,
    command: &str,
    which: Hook,
    matcher: &str,
) -> Result<Change, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let hooks = object_at(root, "hooks", "hooks")?;
    let event = which.event();
    let entries = array_at(hooks, event, &format!("hooks.{event}"))?;
    // The approval hook's entry takes the matcher asked for now (the tools may have changed).
    let ours = entries.iter().position(|entry| holds_askpane_hook(entry, which));
    if let Some(entry) = ours.and_then(|index| entries.get_mut(index)) {
        let old_matcher = entry.get("matcher").and_then(Value::as_str).map(str::to_owned);
        let matcher_changed = old_matcher.as_deref() != Some(matcher);
        if matcher_changed {
            entry["matcher"] = json!(matcher);
        }
        let Some(hook) = askpane_hooks(entry, which).next() else {
            return Ok(Change::AlreadyThere);
        };
        let current = hook.get("command").and_then(Value::as_str).unwrap_or_default().to_owned();
        // The user's own arguments after `hook` (say `--timeout 60`) stay.
        let extra = hook_arguments(&current).unwrap_or_default();
        let updated = format!("{command}{extra}");
        if current == updated {
            return Ok(match (matcher_changed, old_matcher) {
                (true, Some(from)) => Change::Updated { from: format!("matcher `{from}`") },
                (true, None) => Change::Updated { from: "no matcher".to_owned() },
                (false, _) => Change::AlreadyThere,
            });
        }
        hook["command"] = Value::String(updated);
        // A status message of the user's own stays; an entry written before there was one gets it.
        if let Some(hook) = hook.as_object_mut()
            && which != Hook::Notices
        {
            hook.entry("statusMessage").or_insert_with(|| json!(HOOK_STATUS_MESSAGE));
        }
        return Ok(Change::Updated { from: current });
    }
    entries.push(json!({"matcher": matcher, "hooks": [which.written(command)]}));
    Ok(Change::Added)
}

/// Removes every askpane question hook, and the entries, lists and objects that become empty
/// by it.
pub fn uninstall(settings: &mut Value) -> Result<Change, SettingsError> {
    uninstall_hook(settings, Hook::Questions)
}

/// Removes askpane's approval hook, as [`uninstall`] does the question hook.
pub fn uninstall_approvals(settings: &mut Value) -> Result<Change, SettingsError> {
    uninstall_hook(settings, Hook::Approvals)
}

fn uninstall_hook(settings: &mut Value, which: Hook) -> Result<Change, SettingsError> {
    let found = askpane::protocol::json_type_name(settings);
    let root = settings.as_object_mut().ok_or(SettingsError::NotObject(found))?;
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(Change::NothingToRemove);
    };
    let event = which.event();
    let Some(entries) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
        return Ok(Change::NothingToRemove);
    };
    let mut count = 0;
    entries.retain_mut(|entry| {
        let owned = which.owns(entry);
        let Some(list) = entry.get_mut("hooks").and_then(Value::as_array_mut).filter(|_| owned)
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
    if entries.is_empty() {
        hooks.shift_remove(event);
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
        assert!(!is_askpane_hook("/usr/local/bin/askpane hooks"));
    }

    /// Issue 30: the small hook client is askpane's hook too; installing over either keeps the
    /// user's arguments, and the small client is written only where it is beside the binary.
    #[test]
    fn the_small_hook_client_is_askpane_s_hook_and_is_installed_when_it_is_beside_the_binary() {
        for (command, arguments) in [
            ("/usr/bin/askpane-hook", Some("")),
            ("/usr/bin/askpane-hook --timeout 60", Some(" --timeout 60")),
            ("\"/a b/askpane-hook\" --timeout 60", Some(" --timeout 60")),
            ("C:\\askpane\\askpane-hook.exe", Some("")),
            ("/usr/bin/askpane hook --timeout 60", Some(" --timeout 60")),
            ("/usr/bin/askpane hook", Some("")),
            ("/usr/bin/askpane-hooks", None),
            ("/usr/bin/askpane ask", None),
        ] {
            assert_eq!(hook_arguments(command), arguments, "{command}");
        }
        let mut settings = json!({});
        install(&mut settings, "/old/askpane hook --timeout 60").expect("installs");
        assert_eq!(
            install(&mut settings, "/new/askpane-hook"),
            Ok(Change::Updated { from: "/old/askpane hook --timeout 60".to_owned() })
        );
        let installed = installed(&settings, Hook::Questions);
        assert_eq!(
            installed.first().map(|(_, command)| command.as_str()),
            Some("/new/askpane-hook --timeout 60")
        );

        let dir =
            std::env::temp_dir().join(format!("askpane-install-small-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let binary = dir.join("askpane");
        assert_eq!(hook_command(&binary), format!("{} hook", binary.display()));
        let small = dir.join(format!("{SMALL_HOOK}{}", std::env::consts::EXE_SUFFIX));
        std::fs::write(&small, "").expect("the small client");
        let expected = match cfg!(unix) {
            true => small.display().to_string(),
            false => format!("{} hook", binary.display()),
        };
        assert_eq!(hook_command(&binary), expected);
        std::fs::remove_dir_all(&dir).expect("cleaned");
    }

    #[test]
    fn the_approval_hook_is_added_beside_the_question_hook_and_follows_the_tools_asked_for() {
        let mut settings = json!({"hooks": {"PermissionRequest": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]}});
        install(&mut settings, COMMAND).expect("installs");
        assert_eq!(install_approvals(&mut settings, COMMAND, "*"), Ok(Change::Added));
        assert_eq!(install_approvals(&mut settings, COMMAND, "*"), Ok(Change::AlreadyThere));
        assert_eq!(
            settings["hooks"]["PermissionRequest"],
            json!([
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND,
                    "timeout": 86_400, "statusMessage": HOOK_STATUS_MESSAGE}]},
            ])
        );
        // Fewer tools: the same entry, its matcher changed.
        let change = install_approvals(&mut settings, COMMAND, "Bash|Edit").expect("installs");
        assert_eq!(change, Change::Updated { from: "matcher `*`".into() });
        assert_eq!(settings["hooks"]["PermissionRequest"][1]["matcher"], "Bash|Edit");
        assert_eq!(settings["hooks"]["PermissionRequest"].as_array().map(Vec::len), Some(2));

        // Uninstalling the questions leaves the approvals, and the other way round.
        let mut without_questions = settings.clone();
        assert_eq!(uninstall(&mut without_questions), Ok(Change::Removed { count: 1 }));
        assert_eq!(
            without_questions["hooks"]["PermissionRequest"],
            settings["hooks"]["PermissionRequest"]
        );
        assert_eq!(uninstall_approvals(&mut settings), Ok(Change::Removed { count: 1 }));
        assert_eq!(
            settings["hooks"]["PermissionRequest"],
            json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]),
            "the user's own PermissionRequest hook stays"
        );
        assert_eq!(uninstall_approvals(&mut settings), Ok(Change::NothingToRemove));
        assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "AskUserQuestion");
    }

    /// Issue 26 item 6: the notice hook sits under `Notification` beside the user's own, with a
    /// short timeout and no status message; installing twice changes nothing, and uninstalling it
    /// leaves the other hooks (askpane's and the user's).
    #[test]
    fn the_notice_hook_is_added_under_notification_and_removed_alone() {
        let mut settings = json!({"hooks": {"Notification": [
            {"matcher": "idle_prompt", "hooks": [{"type": "command", "command": "notify-send idle"}]}]}});
        install(&mut settings, COMMAND).expect("installs");
        assert_eq!(install_notices(&mut settings, COMMAND), Ok(Change::Added));
        let once = settings.clone();
        assert_eq!(install_notices(&mut settings, COMMAND), Ok(Change::AlreadyThere));
        assert_eq!(settings, once);
        assert_eq!(
            settings["hooks"]["Notification"],
            json!([
                {"matcher": "idle_prompt", "hooks": [{"type": "command", "command": "notify-send idle"}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": 10}]},
            ])
        );
        // A moved binary: the one entry follows, still without a status message.
        assert_eq!(
            install_notices(&mut settings, "/new/askpane hook"),
            Ok(Change::Updated { from: COMMAND.to_owned() })
        );
        assert_eq!(
            settings["hooks"]["Notification"][1],
            json!({"matcher": "*", "hooks": [{"type": "command", "command": "/new/askpane hook", "timeout": 10}]})
        );
        assert_eq!(uninstall_notices(&mut settings), Ok(Change::Removed { count: 1 }));
        assert_eq!(
            settings["hooks"]["Notification"],
            json!([{"matcher": "idle_prompt", "hooks": [{"type": "command", "command": "notify-send idle"}]}]),
            "the user's own Notification hook stays"
        );
        assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "AskUserQuestion");
        assert_eq!(uninstall_notices(&mut settings), Ok(Change::NothingToRemove));
    }

    #[test]
    fn the_tools_named_become_a_matcher_and_anything_else_is_refused_by_name() {
        assert_eq!(approvals_matcher("*"), Ok("*".to_owned()));
        assert_eq!(approvals_matcher(""), Ok("*".to_owned()));
        assert_eq!(approvals_matcher(" , "), Ok("*".to_owned()));
        assert_eq!(
            approvals_matcher("Bash, Edit,Write,Bash,mcp__github__create_issue"),
            Ok("Bash|Edit|Write|mcp__github__create_issue".to_owned())
        );
        let refused = approvals_matcher("Bash,.*").expect_err("a pattern is not a tool");
        assert!(refused.contains("`.*` is not a tool name"), "{refused}");
        let refused = approvals_matcher("Bash|Edit").expect_err("one name per comma");
        assert!(refused.contains("`Bash|Edit`"), "{refused}");
        let refused = approvals_matcher("AskUserQuestion").expect_err("a question");
        assert!(refused.contains("question hook"), "{refused}");
    }
}
