//! The single integration-test binary (`autotests = false`): each module below is one area's tests.

// Literal-JSON checks of our replies against what the real Claude Code host and CLI sent.
mod protocol;
// Reading the captured fixtures in tests/fixtures.
mod support;
