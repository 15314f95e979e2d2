//! Approvals' vocabulary (issue 26): the rule suggestions Claude Code sends with a tool call
//! (`permission_suggestions`), what a person can choose on a card, how an approval ended, and
//! the `PermissionRequest` hook's input and reply. Pure data and rules: no IO, no clock.
//!
//! A suggestion is kept as the JSON Claude Code gave (it goes back byte for byte as
//! `updatedPermissions`: askpane never writes a rule of its own) beside a typed view that is
//! read only for wording the button. Suggestions askpane would not word honestly as an allow
//! (a deny rule, a rule removal) are skipped, never offered.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::envelope::{HookContext, TOOL_NAME};
use super::inbox::Policy;
use super::stream::{PermissionDecision, PermissionRequest};

/// Where a rule suggestion would be kept (Claude Code's `destination`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// `session`: until this Claude Code session ends.
    Session,
    /// `localSettings`: this project's `.claude/settings.local.json` (only this user).
    LocalSettings,
    /// `projectSettings`: this project's `.claude/settings.json` (shared with the team).
    ProjectSettings,
    /// `userSettings`: `~/.claude/settings.json` (every project of this user).
    UserSettings,
    /// `cliArg`: this run's command line.
    CliArg,
    /// A destination from a newer Claude Code, as it named it.
    Other(String),
}

impl Destination {
    fn parse(name: &str) -> Destination {
        match name {
            "session" => Destination::Session,
            "localSettings" => Destination::LocalSettings,
            "projectSettings" => Destination::ProjectSettings,
            "userSettings" => Destination::UserSettings,
            "cliArg" => Destination::CliArg,
            other => Destination::Other(other.to_owned()),
        }
    }

    /// Where, in words that end a button's label.
    fn words(&self) -> String {
        match self {
            Destination::Session => "in this session".to_owned(),
            Destination::LocalSettings => "in this project".to_owned(),
            Destination::ProjectSettings => "in this project, for everyone on it".to_owned(),
            Destination::UserSettings => "in all your projects".to_owned(),
            Destination::CliArg => "for this run".to_owned(),
            Destination::Other(name) => format!("({name})"),
        }
    }
}

/// One rule of an `addRules` suggestion: a tool, and what of it (`npm test *`), if narrowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub tool_name: String,
    pub content: Option<String>,
}

impl Rule {
    fn words(&self) -> String {
        match (self.tool_name.as_str(), &self.content) {
            ("Bash", Some(content)) => format!("`{content}`"),
            ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", None) => "edits".to_owned(),
            ("Bash", None) => "every command".to_owned(),
            (tool, Some(content)) => format!("{tool} `{content}`"),
            (tool, None) => tool.to_owned(),
        }
    }
}

/// What a suggestion would do, typed for wording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SuggestionView {
    /// `addRules` with `behavior: allow`: these tool calls no longer ask.
    AllowRules { rules: Vec<Rule>, destination: Destination },
    /// `addDirectories`: these folders join the working directories.
    AddDirectories { directories: Vec<String>, destination: Destination },
    /// `setMode`: the session's permission mode changes (`acceptEdits`, …).
    SetMode { mode: String, destination: Destination },
}

/// A "deny always" the agent offers by its own option (ACP's `reject_always`, issue 28): shown
/// by its name beside Deny, and picked by its id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenyRule {
    pub id: String,
    pub name: String,
}

/// One of Claude Code's `permission_suggestions`, as given, with its typed view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub struct Suggestion {
    raw: Value,
    view: SuggestionView,
}

/// Why a suggestion is not offered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SuggestionError {
    #[error("a permission suggestion is not a JSON object")]
    NotObject,
    #[error("a permission suggestion has no `{0}`")]
    Missing(&'static str),
    #[error("a permission suggestion's `{0}` is not what Claude Code sends")]
    Malformed(&'static str),
    #[error("askpane offers only allows, not a `{0}` suggestion")]
    NotAnAllow(String),
}

fn text<'a>(object: &'a Map<String, Value>, key: &'static str) -> Result<&'a str, SuggestionError> {
    match object.get(key) {
        None | Some(Value::Null) => Err(SuggestionError::Missing(key)),
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(SuggestionError::Malformed(key)),
    }
}

fn rule(value: &Value) -> Result<Rule, SuggestionError> {
    let object = value.as_object().ok_or(SuggestionError::Malformed("rules"))?;
    let tool_name = text(object, "toolName")?.to_owned();
    let content = match object.get("ruleContent") {
        None | Some(Value::Null) => None,
        Some(Value::String(content)) => Some(content.clone()),
        Some(_) => return Err(SuggestionError::Malformed("ruleContent")),
    };
    Ok(Rule { tool_name, content })
}

impl TryFrom<Value> for Suggestion {
    type Error = SuggestionError;

    fn try_from(raw: Value) -> Result<Self, SuggestionError> {
        let object = raw.as_object().ok_or(SuggestionError::NotObject)?;
        let destination = Destination::parse(text(object, "destination")?);
        let view = match text(object, "type")? {
            "addRules" => {
                let behavior = text(object, "behavior")?;
                if behavior != "allow" {
                    return Err(SuggestionError::NotAnAllow(format!("addRules {behavior}")));
                }
                let rules = object
                    .get("rules")
                    .and_then(Value::as_array)
                    .ok_or(SuggestionError::Missing("rules"))?;
                let rules = rules.iter().map(rule).collect::<Result<Vec<_>, _>>()?;
                if rules.is_empty() {
                    return Err(SuggestionError::Missing("rules"));
                }
                SuggestionView::AllowRules { rules, destination }
            }
            "addDirectories" => {
                let directories = object
                    .get("directories")
                    .and_then(Value::as_array)
                    .ok_or(SuggestionError::Missing("directories"))?;
                let directories = directories
                    .iter()
                    .map(|directory| directory.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or(SuggestionError::Malformed("directories"))?;
                if directories.is_empty() {
                    return Err(SuggestionError::Missing("directories"));
                }
                SuggestionView::AddDirectories { directories, destination }
            }
            "setMode" => {
                SuggestionView::SetMode { mode: text(object, "mode")?.to_owned(), destination }
            }
            other => return Err(SuggestionError::NotAnAllow(other.to_owned())),
        };
        Ok(Suggestion { raw, view })
    }
}

impl From<Suggestion> for Value {
    fn from(suggestion: Suggestion) -> Value {
        suggestion.raw
    }
}

impl Suggestion {
    /// The JSON as Claude Code gave it: what goes back in `updatedPermissions`.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    pub fn view(&self) -> &SuggestionView {
        &self.view
    }

    /// The button's label, for a person: "Always allow `npm test *` in this project".
    pub fn label(&self) -> String {
        match &self.view {
            SuggestionView::AllowRules { rules, destination } => {
                let what: Vec<String> = rules.iter().map(Rule::words).collect();
                format!("Always allow {} {}", what.join(", "), destination.words())
            }
            SuggestionView::AddDirectories { directories, destination } => {
                let where_ = match destination {
                    Destination::Session => "for this session".to_owned(),
                    other => other.words(),
                };
                format!("Allow {} {where_}", directories.join(", "))
            }
            SuggestionView::SetMode { mode, destination } => {
                let where_ = destination.words();
                match mode.as_str() {
                    "acceptEdits" => format!("Always allow edits {where_}"),
                    "bypassPermissions" => format!("Allow every tool without asking {where_}"),
                    "plan" => format!("Allow, then plan only {where_}"),
                    "default" => format!("Allow, then ask for everything {where_}"),
                    other => format!("Allow, and switch to {other} mode {where_}"),
                }
            }
        }
    }

    /// What the rule added says, in one line (history's "rule" column).
    pub fn summary(&self) -> String {
        self.label()
    }
}

/// The suggestions of a `permission_suggestions` value: each one askpane can offer, in order.
/// Anything else (not a list, an entry that is no suggestion, a deny rule) is skipped: a
/// suggestion askpane cannot word is not offered, and never fails the tool call's card.
pub fn parse_suggestions(value: Option<&Value>) -> Vec<Suggestion> {
    let entries = value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    entries.iter().filter_map(|entry| Suggestion::try_from(entry.clone()).ok()).collect()
}

/// Who asked for an approval, which decides what "Answer in the terminal" can mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOrigin {
    /// A session askpane hosts (`askpane claude`, `askpane codex`): there is no terminal
    /// dialog to hand back to.
    #[default]
    Hosted,
    /// A `PermissionRequest` hook (`askpane hook`): Claude Code's own dialog can ask instead.
    Hook,
    /// An OpenCode server askpane follows (`askpane opencode`): a call handed back stays
    /// pending there, for OpenCode's own TUI.
    #[serde(rename = "opencode")]
    OpenCode,
}

impl ApprovalOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalOrigin::Hosted => "hosted",
            ApprovalOrigin::Hook => "hook",
            ApprovalOrigin::OpenCode => "opencode",
        }
    }

    pub fn is_hosted(&self) -> bool {
        matches!(self, ApprovalOrigin::Hosted)
    }

    /// Whether the agent has its own way to ask when askpane hands the call back.
    pub fn can_hand_back(self) -> bool {
        matches!(self, ApprovalOrigin::Hook | ApprovalOrigin::OpenCode)
    }
}

/// What a person chose on a card. A suggestion is named by its place in the card's list, so
/// a page (or anyone) can only pick a rule the agent itself suggested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermissionChoice {
    AllowOnce,
    AllowAlways { suggestion: usize },
    Deny { message: String },
    HandBack,
}

impl PermissionChoice {
    /// The decision this choice makes on `request`; `None` for a suggestion it does not have,
    /// or a hand-back where nobody could take the call back.
    pub fn decide(self, request: &PermissionRequest) -> Option<PermissionDecision> {
        match self {
            PermissionChoice::AllowOnce => Some(PermissionDecision::AllowOnce),
            PermissionChoice::AllowAlways { suggestion } => {
                let suggestion = request.suggestions.get(suggestion)?.clone();
                Some(PermissionDecision::AllowAlways { suggestion })
            }
            PermissionChoice::Deny { message } => Some(PermissionDecision::Deny { message }),
            PermissionChoice::HandBack => {
                request.origin.can_hand_back().then_some(PermissionDecision::HandBack)
            }
        }
    }
}

/// How an approval ended, by kind (history stores [`ApprovalOutcome::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOutcome {
    /// The person allowed this one call.
    AllowedOnce,
    /// The person allowed it and added the agent's suggested rule.
    AllowedAlways,
    /// The person denied it (with words the model reads).
    Denied,
    /// The person left it to the agent's own dialog or policy.
    HandedBack,
    /// The agent took it back, or its client went away.
    Withdrawn,
    /// `--timeout` ran out with no decision.
    TimedOut,
    /// Nobody could be asked (`--non-interactive`, no display, the window closed).
    NoHuman,
}

impl ApprovalOutcome {
    pub const ALL: [ApprovalOutcome; 7] = [
        ApprovalOutcome::AllowedOnce,
        ApprovalOutcome::AllowedAlways,
        ApprovalOutcome::Denied,
        ApprovalOutcome::HandedBack,
        ApprovalOutcome::Withdrawn,
        ApprovalOutcome::TimedOut,
        ApprovalOutcome::NoHuman,
    ];

    /// The name stored and sent.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalOutcome::AllowedOnce => "allowed_once",
            ApprovalOutcome::AllowedAlways => "allowed_always",
            ApprovalOutcome::Denied => "denied",
            ApprovalOutcome::HandedBack => "handed_back",
            ApprovalOutcome::Withdrawn => "withdrawn",
            ApprovalOutcome::TimedOut => "timed_out",
            ApprovalOutcome::NoHuman => "no_human",
        }
    }

    /// The kind a person's (or a policy's) decision ends in.
    pub fn of(decision: &PermissionDecision) -> ApprovalOutcome {
        match decision {
            // A form filled in and sent is history's "allowed": the person gave what it asked.
            PermissionDecision::AllowOnce | PermissionDecision::Fill { .. } => {
                ApprovalOutcome::AllowedOnce
            }
            PermissionDecision::AllowAlways { .. } => ApprovalOutcome::AllowedAlways,
            PermissionDecision::Deny { .. } | PermissionDecision::DenyAlways { .. } => {
                ApprovalOutcome::Denied
            }
            PermissionDecision::HandBack => ApprovalOutcome::HandedBack,
        }
    }

    /// Whether the tool call may run.
    pub fn allowed(self) -> bool {
        matches!(self, ApprovalOutcome::AllowedOnce | ApprovalOutcome::AllowedAlways)
    }
}

/// The event name of the hook this module answers.
pub const HOOK_EVENT: &str = "PermissionRequest";

/// The field `askpane codex-hook` adds to Codex's `PermissionRequest` input before handing it
/// on, with [`CODEX_AGENT`]: Codex's input has Claude Code's shape (and takes the same reply),
/// so only this says which agent asked.
pub const AGENT_FIELD: &str = "askpane_agent";
pub const CODEX_AGENT: &str = "codex";
/// Who asked, as a card's provenance names it: Claude Code's hook, or Codex's.
pub const CLAUDE_HOOK_SOURCE: &str = "hook";
pub const CODEX_HOOK_SOURCE: &str = "codex-hook";

/// Which agent's `PermissionRequest` hook asked: Codex's input has Claude Code's shape and takes
/// the same reply, so only [`AGENT_FIELD`] tells them apart. The one place that names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookAgent {
    ClaudeCode,
    Codex,
}

impl HookAgent {
    /// The agent whose hook gave `input` (`askpane codex-hook` marks Codex's).
    pub fn of_input(input: &Value) -> HookAgent {
        match input.get(AGENT_FIELD).and_then(Value::as_str) {
            Some(CODEX_AGENT) => HookAgent::Codex,
            _ => HookAgent::ClaudeCode,
        }
    }

    /// The agent for a person: `Claude Code`, `Codex`.
    pub fn name(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => "Claude Code",
            HookAgent::Codex => "Codex",
        }
    }

    /// The askpane command its hook runs, as its lines on stderr begin.
    pub fn command(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => "askpane hook",
            HookAgent::Codex => "askpane codex-hook",
        }
    }

    /// Who asked, as a card's provenance names it.
    pub fn source(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => CLAUDE_HOOK_SOURCE,
            HookAgent::Codex => CODEX_HOOK_SOURCE,
        }
    }
}

/// A `PermissionRequest` hook's input for any tool but AskUserQuestion (which stays a
/// question): the card's request, the session it came from, and which agent's hook asked
/// ([`CLAUDE_HOOK_SOURCE`] or [`CODEX_HOOK_SOURCE`]).
#[derive(Clone, Debug, PartialEq)]
pub struct HookPermission {
    pub request: PermissionRequest,
    pub context: HookContext,
    pub source: &'static str,
}

/// Why a hook input that names a tool call cannot become a card.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HookPermissionError {
    #[error("the PermissionRequest hook input has no `{0}`")]
    Missing(&'static str),
}

/// Reads a hook input as an approval: `None` when it is none (another event, AskUserQuestion,
/// not a hook input at all: that is for [`super::envelope::parse_message`]).
pub fn parse_hook_permission(
    message: &Value,
) -> Option<Result<HookPermission, HookPermissionError>> {
    let object = message.as_object()?;
    if object.get("hook_event_name").and_then(Value::as_str) != Some(HOOK_EVENT) {
        return None;
    }
    let tool_name = object.get("tool_name").and_then(Value::as_str);
    if tool_name == Some(TOOL_NAME) {
        return None;
    }
    let field = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let Some(tool_name) = tool_name else {
        return Some(Err(HookPermissionError::Missing("tool_name")));
    };
    let Some(input) = object.get("tool_input").cloned() else {
        return Some(Err(HookPermissionError::Missing("tool_input")));
    };
    let context = HookContext {
        session_id: field("session_id"),
        cwd: field("cwd"),
        permission_mode: field("permission_mode"),
        tool_use_id: field("tool_use_id"),
        agent_id: field("agent_id"),
        agent_type: field("agent_type"),
    };
    let request = PermissionRequest {
        // The inbox gives each client's card a request id of its own.
        request_id: context.tool_use_id.clone().unwrap_or_default(),
        tool_name: tool_name.to_owned(),
        input,
        tool_use_id: context.tool_use_id.clone(),
        title: None,
        description: None,
        reason: None,
        agent_id: context.agent_id.clone(),
        suggestions: parse_suggestions(object.get("permission_suggestions")),
        deny_always: Vec::new(),
        origin: ApprovalOrigin::Hook,
        // The card shows a command's directory and reads a relative path from there.
        cwd: context.cwd.clone(),
        on_disk: None,
    };
    let source = HookAgent::of_input(message).source();
    Some(Ok(HookPermission { request, context, source }))
}

/// The tool whose call is a plan to review (issue 26): Claude Code's way out of plan mode.
pub const PLAN_TOOL: &str = "ExitPlanMode";

/// Whether `request` is a plan to review rather than a tool call to allow.
pub fn is_plan(request: &PermissionRequest) -> bool {
    request.tool_name == PLAN_TOOL
}

/// The tool name of a form's card: an ACP agent's generic `elicitation/create` is shown as a
/// card (issue 28), its input `{"message", "requestedSchema"}`, or `{"message", "url"}` for a
/// link the person is asked to open. No agent's tool is named with a `/`, so no tool call is
/// taken for a form.
pub const FORM_TOOL: &str = "elicitation/create";

/// Whether `request` is a form to fill in (or a link to open) rather than a tool call to allow.
pub fn is_form(request: &PermissionRequest) -> bool {
    request.tool_name == FORM_TOOL
        && (request.input.get("requestedSchema").is_some()
            || request.input.get("url").is_some_and(Value::is_string))
}

/// Claude Code's own "approve and accept edits" for a plan: the session's mode becomes
/// `acceptEdits` (2.1.332 offers no suggestion with ExitPlanMode; this is what its own plan
/// dialog sends, and the one rule askpane words itself).
pub fn accept_edits() -> Suggestion {
    Suggestion {
        raw: json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
        view: SuggestionView::SetMode {
            mode: "acceptEdits".to_owned(),
            destination: Destination::Session,
        },
    }
}

/// The `PermissionRequest` hook's reply line for `decision` on `request`; `None` (print
/// nothing, exit 0: Claude Code's own dialog or policy decides) for a hand-back. An allow of a
/// plan ([`PLAN_TOOL`]) echoes the plan as `updatedInput`: 2.1.332 ignores a plan's bare hook
/// allow and the session hangs (fixtures `plan-hook-allow`, `plan-hook-allow-input`).
pub fn hook_reply(request: &PermissionRequest, decision: &PermissionDecision) -> Option<Value> {
    let mut decision = match decision {
        PermissionDecision::AllowOnce => json!({"behavior": "allow"}),
        PermissionDecision::AllowAlways { suggestion } => {
            json!({"behavior": "allow", "updatedPermissions": [suggestion.raw()]})
        }
        PermissionDecision::Deny { message } | PermissionDecision::DenyAlways { message, .. } => {
            json!({"behavior": "deny", "message": message})
        }
        // A hook asks no forms: a filled form is no decision of its.
        PermissionDecision::HandBack | PermissionDecision::Fill { .. } => return None,
    };
    let allowed = matches!(decision.get("behavior").and_then(Value::as_str), Some("allow"));
    if allowed
        && is_plan(request)
        && let Some(object) = decision.as_object_mut()
    {
        // After `behavior`, as Claude Code's own captures have it.
        let mut echoed = Map::new();
        echoed.insert("behavior".into(), json!("allow"));
        echoed.insert("updatedInput".into(), request.input.clone());
        echoed.extend(std::mem::take(object).into_iter().filter(|(key, _)| key != "behavior"));
        *object = echoed;
    }
    Some(json!({"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "decision": decision}}))
}

/// What a client's flags decide about an approval with no person asked, or `None` when a
/// person is to decide. `--decline MESSAGE` denies with the message; `--non-interactive` and
/// `hook --fallback` leave it to Claude Code's own dialog or policy. `--answers` answers
/// questions, never a tool call: with `--submit` it asks nobody, so nobody allows it.
pub fn decided_by_policy(policy: &Policy) -> Option<(ApprovalOutcome, PermissionDecision)> {
    if let Some(message) = &policy.decline {
        let decision = PermissionDecision::Deny { message: message.clone() };
        return Some((ApprovalOutcome::Denied, decision));
    }
    let nobody = policy.non_interactive
        || policy.unavailable.is_some()
        || (policy.submit && policy.answers.is_some());
    nobody.then_some((ApprovalOutcome::NoHuman, PermissionDecision::HandBack))
}

/// What the model reads when a hosted session's call is handed back: a hosted session has no
/// terminal dialog, so the call is not run, and nothing says the person refused it.
pub const HANDED_BACK_HOSTED: &str = "The user did not decide on this tool call in askpane, and \
    this session has no other place to ask: it did not run. Ask again if it is still needed.";

#[cfg(test)]
mod tests;
