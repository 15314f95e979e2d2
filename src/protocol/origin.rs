//! Who asked, and which request is which: plain data shared by the transport, the app's state and
//! the view (no IO, no threads).

use super::envelope::{Envelope, HookContext};
use super::permission::HookAgent;

/// Identifies one request for the life of the process. Plain data here: the process's ids are
/// handed out by the transport (`RequestId::next`, `transport/mod.rs`), where the adapters that
/// make requests run, so this layer keeps no global state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(u64);

impl RequestId {
    /// The id numbered `raw`. Only the transport's allocator numbers ids for requests.
    pub const fn from_raw(raw: u64) -> Self {
        RequestId(raw)
    }
}

/// Which agent session something belongs to: the one this process hosts (`askpane claude`'s
/// own window), or one an inbox client hosts (numbered by its connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SessionKey {
    Own,
    Hosted(u64),
}

/// Who asked, shown beside the question so the user knows which agent is waiting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The adapter: `demo`, `ask`, `hook`, `claude`, …
    pub source: String,
    /// What distinguishes this agent: a fixture name, a project folder, a session id.
    pub detail: Option<String>,
    /// The project the agent works in (its folder's name), for the window title and the
    /// request list's groups.
    pub project: Option<String>,
    /// The agent's session (Claude Code's `session_id`): requests of one session are listed
    /// together.
    pub session: Option<String>,
    /// The subagent that asked, when one did (its type, else its id).
    pub subagent: Option<String>,
    /// The SSH host it asked from, as `askpane remote HOST`'s link names it (issue 27), never
    /// as the client claims; `None` for this machine.
    pub host: Option<String>,
}

/// An adapter (a [`Provenance::source`], `listed.agent` on the socket) in words, as the window
/// says who asked: `hook` is `Claude Code (hook)`, `claude` is `askpane claude`, … One owner for
/// the window and the chat messages (issue 31).
pub fn agent_in_words(source: &str) -> String {
    match source {
        "hook" => format!("{} (hook)", HookAgent::ClaudeCode.name()),
        super::permission::CODEX_HOOK_SOURCE => format!("{} (hook)", HookAgent::Codex.name()),
        "claude" => "askpane claude".to_owned(),
        "ask" => "a script (askpane ask)".to_owned(),
        "mcp" => "MCP".to_owned(),
        super::opencode::SOURCE => "OpenCode".to_owned(),
        super::codex_server::SOURCE => "askpane codex".to_owned(),
        super::acp::SOURCE => "askpane acp".to_owned(),
        other => other.to_owned(),
    }
}

impl Provenance {
    pub fn new(source: impl Into<String>, detail: Option<String>) -> Self {
        Provenance { source: source.into(), detail, ..Provenance::default() }
    }

    /// The same, naming the project the agent works in.
    pub fn with_project(mut self, project: Option<String>) -> Self {
        self.project = project.filter(|name| !name.trim().is_empty());
        self
    }

    /// The provenance of a hook request: its project and permission mode. An MCP call's: its
    /// client (name and version) and where it works.
    pub fn from_envelope(source: &str, envelope: &Envelope) -> Self {
        if let Envelope::Mcp { context } = envelope {
            let detail = [context.client.clone(), context.place()].into_iter().flatten();
            let detail: Vec<String> = detail.collect();
            let mut provenance =
                Provenance::new(source, Some(detail.join(" · "))).with_project(context.project());
            provenance.detail = provenance.detail.filter(|detail| !detail.is_empty());
            provenance.session = context.session.clone();
            return provenance;
        }
        let detail = envelope.hook_context().map(|context| {
            let project = context.project().unwrap_or("unknown project");
            match &context.permission_mode {
                Some(mode) => format!("{project} · {mode}"),
                None => project.to_owned(),
            }
        });
        let context = envelope.hook_context();
        let project = context.and_then(HookContext::project).map(str::to_owned);
        let mut provenance = Provenance::new(source, detail).with_project(project);
        provenance.session = context.and_then(|context| context.session_id.clone());
        provenance.subagent = context
            .and_then(|context| context.agent_type.clone().or_else(|| context.agent_id.clone()));
        provenance
    }

    /// Who asked, in words: `Claude Code (hook)`, `askpane claude`, `a script (askpane ask)`, …
    pub fn agent(&self) -> String {
        agent_in_words(&self.source)
    }

    /// The agent itself, by name, for a sentence (`Codex wants to use Bash`): Codex's hook and
    /// `askpane codex` are Codex, OpenCode is OpenCode, `askpane acp`'s is "The ACP agent" (it
    /// may be any), and every other source is a Claude Code's (its hook, `askpane claude`).
    pub fn agent_name(&self) -> &'static str {
        match self.source.as_str() {
            super::permission::CODEX_HOOK_SOURCE | super::codex_server::SOURCE => {
                HookAgent::Codex.name()
            }
            super::opencode::SOURCE => "OpenCode",
            // `askpane acp` hosts any ACP agent: which one, its session's own name says.
            super::acp::SOURCE => "The ACP agent",
            _ => "Claude",
        }
    }

    /// The session, shortened for a list: its first eight characters.
    pub fn short_session(&self) -> Option<String> {
        let session = self.session.as_deref()?.trim();
        (!session.is_empty()).then(|| session.chars().take(8).collect())
    }

    /// Who asked, for a person: the agent in words, then what distinguishes it (`Claude Code
    /// (hook) · my-project`). [`Provenance::label`] is the short form the wire carries.
    pub fn shown(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{} · {detail}", self.agent()),
            None => self.agent(),
        }
    }

    /// One line for lists and the wire: `hook · my-project`.
    pub fn label(&self) -> String {
        let label = match &self.detail {
            Some(detail) => format!("{} · {detail}", self.source),
            None => self.source.clone(),
        };
        match &self.host {
            Some(host) => format!("{label} @ {host}"),
            None => label,
        }
    }
}
