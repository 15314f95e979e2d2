//! The single integration-test binary (`autotests = false`): each module below is one area's tests.

// Literal-JSON checks of our replies against what the real Claude Code host and CLI sent.
mod protocol;
// Reading the captured fixtures in tests/fixtures.
mod support;
// The window driven headless through egui_kittest: clicks, keys, accessible labels, replies.
mod ui;
// Real-window smoke tests: the binary on its own Xvfb, driven by xdotool; validate and demo --list.
mod window;
