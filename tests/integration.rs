//! The single integration-test binary (`autotests = false`): each module below is one area's tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "a test may assume: a failed assumption is a failed test, reported with its message"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "tests start helper threads freely and unnamed (clippy.toml's thread rules are the product's)"
)]

// Modules marked Linux-only drive real processes through what only these Linux machines have
// (Xvfb, X11 tools, signals by PID, the inbox's socket); the rest also build for Windows and
// macOS, where `scripts/check-platforms` checks them (issue 15).

// `askpane acp` (issue 28): the real claude-agent-acp 0.101.0 (scripts/acp-agents) against the
// fake Messages API, and a fake ACP agent of the tests' own (forms, agents that never answer).
#[cfg(target_os = "linux")]
mod acp;
// ACP generic forms, links, stuck turns and reject-always in the window (issue 28), with a fake
// agent of the tests' own (tests/fixtures/acp/form_agent.py).
#[cfg(target_os = "linux")]
mod acp_forms;
// More real ACP agents (issue 28): codex-acp 0.16.0 and Gemini CLI 0.61.0 `--acp` (scripts/acp-agents)
// against fake model servers: permissions allowed and rejected, a turn the agent never ends.
#[cfg(target_os = "linux")]
mod acp_agents;
// The `--ui web` bridge driven by WebSocket clients: questions, answers, refusals, ending.
mod bridge;
// `askpane-matrix` (issue 31): the bridge to an encrypted Matrix room, its CLI and, with the
// Synapse harness, end to end with a second Matrix client (askpane-matrix-peer).
#[cfg(target_os = "linux")]
mod matrix;
// `askpane claude` hosting a scripted Claude Code (tests/fake-claude) and the real CLI.
#[cfg(target_os = "linux")]
mod claude_host;
// Codex's request_user_input against the real Codex CLI (0.169.0; scripts/codex-cli): what its
// model reads for every reply, `askpane codex` hosting it (alone and under the inbox), and
// `askpane install codex`'s hook.
#[cfg(target_os = "linux")]
mod codex;
// The approval card's body (issue 26): typed tool calls, diffs, the card drawn (kittest).
mod cards;
// The plan page (issue 26): approve, keep planning with comments, the guard (kittest).
mod plan;
// Issue 26: plan review end to end with the real Claude Code 2.1.332 in plan mode, hosted by the
// window: approve, approve and accept edits, keep planning with comments.
#[cfg(target_os = "linux")]
mod plan_interop;
// `askpane ask`, `hook`, `install`/`uninstall claude` run as a user or Claude Code runs them.
#[cfg(target_os = "linux")]
mod cli;
// `askpane completions SHELL` in bash, zsh and fish; the man pages rendered (issue 29).
#[cfg(target_os = "linux")]
mod completions;
// The History page in the inbox's window (issue 11), by accessible label (kittest).
mod history_page;
// Issue 26: `askpane hook` given a PermissionRequest for any tool: a card in the inbox, each
// decision the reply Claude Code 2.1.332 was given, and nothing where nobody decides.
#[cfg(target_os = "linux")]
mod hook_approval;
// Issue 30 item 2: the small hook client `askpane-hook`, byte for byte `askpane hook`'s replies,
// and what it hands over to it.
#[cfg(target_os = "linux")]
mod hook_client;
// Issue 26 part 5: `askpane codex-hook` given Codex 0.169.0's PermissionRequest (recorded in
// tests/fixtures/codex/approvals): a card marked as Codex's, each decision the reply Codex honoured.
#[cfg(target_os = "linux")]
mod codex_approval;
// Issue 26 end to end: the real Claude Code 2.1.332 with the approval hook, each card decided on
// `askpane inbox --ui web`'s page, and what Claude Code then did and its model read.
#[cfg(target_os = "linux")]
mod interop_approvals;
// `askpane claude` under the inbox (issue 10): its questions, permissions and transcript in the
// running inbox, which is restarted when it dies and ends the session when it quits.
#[cfg(target_os = "linux")]
mod hosted;
// `askpane inbox` and its thin clients over the real socket: many at once, killed clients and
// inboxes, racing starts, malformed lines, --quit, signals, permissions.
#[cfg(target_os = "linux")]
mod inbox;
// Issue 31: the inbox's socket as a front end's way in (list with full content).
#[cfg(target_os = "linux")]
mod front_end;
// Issue 31: the real Synapse the Matrix bridge's tests start (tests/support/synapse.rs) proven:
// two users talk, a restart keeps them, two homeservers at once.
#[cfg(target_os = "linux")]
mod synapse;
// Issue 29: `askpane doctor` on a good set-up and on each broken one made on purpose.
#[cfg(target_os = "linux")]
mod doctor;
// Issue 29: `askpane status` (every format, --watch) against a real inbox with hooks asking.
#[cfg(target_os = "linux")]
mod status;
// Issue 11: the "Pair a phone" window beside `askpane inbox --ui web --lan`.
#[cfg(target_os = "linux")]
mod pairing;
// Issue 14: the inbox sheds its window when closed with nothing open (`--lean`, same pid, socket
// and lock) and comes back for the next client.
#[cfg(target_os = "linux")]
mod lean;
// Issue 29: the manual (docs/src and the README): its links and anchors resolve, and its
// `console` examples run and print what it says.
#[cfg(target_os = "linux")]
mod manual;
// The virtual display: an Xvfb per test, askpane on it, finding and closing its window.
#[cfg(target_os = "linux")]
mod display;
#[cfg(target_os = "linux")]
mod drawing;
// Issue 30: typing into the CPU-drawn window, which redraws only the tiles a key changed.
#[cfg(target_os = "linux")]
mod keys;
// Desktop notifications from the inbox on a private session bus with dunst (issue 11).
#[cfg(target_os = "linux")]
mod notify;
// Issue 29 item 5: the tray icon on a private session bus with a watcher the test serves.
#[cfg(target_os = "linux")]
mod tray;
// A fake Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI.
#[cfg(target_os = "linux")]
mod fake_api;
// askpane's hook against the real Claude Code CLI (2.1.330 and 2.1.197; scripts/claude-cli).
#[cfg(target_os = "linux")]
mod interop;
// The one flags → policy rule (issue 25) under `ask`, `hook`, `claude` and `codex`, alone, in a
// window of their own and under the inbox.
#[cfg(target_os = "linux")]
mod policy;
// `askpane mcp` driven by real MCP clients: the Python MCP SDK, the MCP Inspector CLI, and the
// real Claude Code CLI with --mcp-config (scripts/mcp-clients installs the first two).
#[cfg(target_os = "linux")]
mod mcp;
// `askpane opencode` against the real OpenCode CLI (1.18.33; scripts/opencode-cli) and a fake
// OpenAI-compatible model: answers, decline, answered elsewhere, aborted sessions.
#[cfg(target_os = "linux")]
mod opencode;
// Issue 27: `askpane remote HOST` against a real sshd on 127.0.0.1: a remote hook answered in
// the desk's inbox with its host, a killed ssh, what a link's client may see and do.
#[cfg(target_os = "linux")]
mod remote;
// Issue 27 item 5: a container (a user and mount namespace, a real Docker where one answers) asks
// the desk's inbox through its bind-mounted folder; another uid is refused.
#[cfg(target_os = "linux")]
mod container;
#[cfg(target_os = "linux")]
mod remote_http;
// Issue 29: the .deb installed into a clean Debian 12 root (ASKPANE_TEST_PACKAGE=1; minutes).
#[cfg(target_os = "linux")]
mod package;
// Property tests (proptest): parsers, validator and answer builders never panic nor invent an
// answer; `ask` on generated requests prints one line whose outcome matches its exit code.
mod properties;
// Literal-JSON checks of our replies against what the real Claude Code host and CLI sent.
mod protocol;
// askpane stopped by a signal (sent by PID) with a question open: one reply, exit 4; a window
// destroyed from outside is a closed window.
#[cfg(target_os = "linux")]
mod signals;
// Issue 24, "nobody else gets in": what another user planted in the inbox's directory is not
// trusted, and the store's files are the user's alone.
#[cfg(target_os = "linux")]
mod security;
// The store (issue 11): history of `ask`, `askpane history`, drafts that survive kill -9, a
// store that cannot be opened.
mod store;
// Reading the captured fixtures in tests/fixtures; child processes with bounded waits.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "some helpers serve only the Unix-only modules")
)]
mod support;
// The window driven headless through egui_kittest: clicks, keys, accessible labels, replies.
mod ui;
// The window's promise: no answer the user did not give, keys only when meant, honest timeouts,
// "Chat about this", and a layout that holds (kittest).
mod trust;
// Real-window smoke tests: the binary on its own Xvfb, driven by xdotool; validate and demo --list.
#[cfg(target_os = "linux")]
mod window;
