//! askpane answers an AI coding agent's `AskUserQuestion` questions in a native window.
//!
//! ```text
//!  agent ─► adapter (reader thread) ─Request{ask, provenance, reply}─► channel ─► App::logic
//!    ▲                                                                              │
//!    └── writer thread ◄── Outcome (through the request's own reply sender) ◄── state + view
//! ```
//!
//! [`protocol`] holds the wire rules and knows nothing of egui or IO; [`book`] is the one place a
//! request lives until its outcome (pure, generic over the reply handle); [`transport`] runs the
//! threads that talk to agents and wakes the UI through an injected closure; [`app`] owns the
//! channel and drives the book through its pure [`app::state`]; [`view`] draws that state and
//! returns actions; [`theme`] holds the design tokens. `main.rs` and `web.rs` compose them.

pub mod app;
pub mod book;
pub mod claude_settings;
#[cfg(not(target_arch = "wasm32"))]
pub mod codex_hooks;
pub mod demo;
#[cfg(not(target_arch = "wasm32"))]
pub mod mcp_config;
pub mod protocol;
#[cfg(not(target_arch = "wasm32"))]
pub mod store;
pub mod theme;
pub mod transport;
pub mod view;
#[cfg(not(target_arch = "wasm32"))]
pub mod web_bundle;
#[cfg(not(target_arch = "wasm32"))]
pub mod window_manager;
