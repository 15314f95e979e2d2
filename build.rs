//! Embeds the web app (`dist/web`, made by `scripts/build-web`) in the native binary when it has
//! been built, so `--ui web` can serve it; without it, askpane builds and says how to get it.
#![allow(
    clippy::expect_used,
    reason = "a build script reports failure by panicking: cargo prints the message and stops"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "wasm32");
    // Only the native binary embeds the bundle: the wasm build (which makes it) must not rebuild
    // itself each time it changes.
    if !wasm {
        println!("cargo::rerun-if-changed=dist/web");
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let bundle = root.join("dist/web");
    let complete = ["index.html", "app.js", "app_bg.wasm"].iter().all(|f| bundle.join(f).is_file());
    let mut files = Vec::new();
    if !wasm && complete {
        collect(&bundle, &mut files);
        files.sort();
    }
    let mut code = String::from(
        "/// The web app's files, embedded at build time.\npub static ASSETS: &[Asset] = &[\n",
    );
    for file in &files {
        // A file scripts/build-web gzipped is embedded gzipped only (`X.gz` for `X`): the binary
        // holds the compressed bytes the browsers are sent, not the file as well.
        let gzipped = PathBuf::from(format!("{}.gz", file.display()));
        let (embedded, encoding) = match files.contains(&gzipped) {
            true if !file.ends_with("index.html") => (&gzipped, "Gzip"),
            _ => (file, "Identity"),
        };
        if file.extension().is_some_and(|extension| extension == "gz") {
            continue;
        }
        let relative = file.strip_prefix(&bundle).expect("under the bundle");
        let path = format!("/{}", relative.to_string_lossy().replace('\\', "/"));
        let mime = match file.extension().and_then(|e| e.to_str()).unwrap_or_default() {
            "html" => "text/html; charset=utf-8",
            "js" => "text/javascript; charset=utf-8",
            "wasm" => "application/wasm",
            "ttf" => "font/ttf",
            "otf" => "font/otf",
            "woff2" => "font/woff2",
            "txt" | "" => "text/plain; charset=utf-8",
            "css" => "text/css; charset=utf-8",
            "png" => "image/png",
            "json" => "application/json",
            _ => "application/octet-stream",
        };
        writeln!(
            code,
            "    Asset {{ path: {path:?}, bytes: include_bytes!({:?}), mime: {mime:?}, \
             encoding: crate::transport::serve::Encoding::{encoding} }},",
            embedded.display()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    std::fs::write(out.join("web_bundle.rs"), code).expect("OUT_DIR is writable");
}

fn collect(folder: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
