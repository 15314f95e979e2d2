//! The web app for `--ui web`, embedded by `build.rs` from `dist/web` when `scripts/build-web` has
//! made it (empty otherwise: askpane then says how to get it).

use crate::transport::serve::Asset;

include!(concat!(env!("OUT_DIR"), "/web_bundle.rs"));

/// True when the web app was built into this binary.
pub fn available() -> bool {
    ASSETS.iter().any(|asset| asset.path == "/app_bg.wasm")
}
