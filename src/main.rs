//! askpane's entry point: the command line natively ([`cli`]), the web app on wasm32 ([`web`]).
//!
//! Both are built from this one binary target, so the release profile's LTO applies to the wasm
//! bundle too (a cdylib+rlib library would silently skip it: see shared/toolchain.md).

// The inbox, the hosts and the clients need a local socket (a Unix domain socket; AF_UNIX on
// Windows 10 1803 and later), and the page is built for the browser.
#[cfg(not(any(unix, windows, target_arch = "wasm32")))]
compile_error!("askpane is built for Unix, Windows and the browser (wasm32)");

#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(not(target_arch = "wasm32"))]
mod paint;
#[cfg(not(target_arch = "wasm32"))]
mod window;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
mod web;

#[cfg(target_arch = "wasm32")]
fn main() {
    web::start()
}
