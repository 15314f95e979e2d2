//! askpane's entry point: the command line natively ([`cli`]), the web app on wasm32 ([`web`]).
//!
//! Both are built from this one binary target, so the release profile's LTO applies to the wasm
//! bundle too (a cdylib+rlib library would silently skip it: see shared/toolchain.md).

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
