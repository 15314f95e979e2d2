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
//! returns actions ([`view::theme`] holds the design tokens); [`store`] keeps history and drafts.
//! The binary composes them: `cli/` (the command line, one file per mode), `window/` (the native
//! window), `paint/` (what draws it) and `web/` (the page, wasm32). See docs/src/architecture.md.

// The library logs through the `log` facade (levels, `ASKPANE_LOG`, the binary's logger); only
// the binary speaks to the person on stderr (issue 25). The rest of the house rules are in
// Cargo.toml's [lints].
#![deny(clippy::print_stderr)]

pub mod app;
pub mod book;
pub mod protocol;
#[cfg(not(target_arch = "wasm32"))]
pub mod store;
pub mod transport;
pub mod view;
