//! Who draws askpane's pixels, in the native window and in the browser (issue 14): the GPU
//! through eframe, or the CPU rasterizer where the GPU would only be a software renderer
//! (Mesa's llvmpipe, Chromium's SwiftShader), slower to start than drawing the pixels ourselves.
//! The native choice is made in `window::chosen_drawing`, the page's in `web::painting`.

#[cfg(any(target_os = "linux", target_arch = "wasm32"))]
pub mod cpu_frame;

/// What draws a window or a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawing {
    /// OpenGL (natively) or WebGL (in the browser), through eframe.
    Gpu,
    /// askpane's CPU rasterizer: `window::cpu` (Linux, X11) or `web::painting`'s 2D canvas.
    Cpu,
}

impl Drawing {
    /// What `ASKPANE_DRAWING` (or the page's `drawing=`) asks for: nothing when unset or empty,
    /// and the value itself as the error when it names neither `cpu` nor `gpu`.
    pub fn asked(value: Option<&str>) -> Result<Option<Drawing>, String> {
        match value.map(str::trim) {
            None | Some("") => Ok(None),
            Some("cpu") => Ok(Some(Drawing::Cpu)),
            Some("gpu" | "gl") => Ok(Some(Drawing::Gpu)),
            Some(other) => Err(other.to_owned()),
        }
    }
}

/// Whether a GPU renderer's name (WebGL's unmasked renderer, OpenGL's `GL_RENDERER`) is a
/// software rasterizer's.
#[cfg_attr(
    not(any(target_arch = "wasm32", test)),
    expect(
        dead_code,
        reason = "natively the machine's GPU devices decide (window::chosen_drawing)"
    )
)]
pub fn is_software_renderer(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["swiftshader", "llvmpipe", "softpipe", "lavapipe", "software", "basic render driver"]
        .iter()
        .any(|software| name.contains(software))
}

#[cfg(test)]
mod tests {
    use super::{Drawing, is_software_renderer};

    #[test]
    fn cpu_and_gpu_are_asked_for_and_anything_else_is_named() {
        assert_eq!(Drawing::asked(None), Ok(None));
        assert_eq!(Drawing::asked(Some(" ")), Ok(None));
        assert_eq!(Drawing::asked(Some("cpu")), Ok(Some(Drawing::Cpu)));
        assert_eq!(Drawing::asked(Some("gpu")), Ok(Some(Drawing::Gpu)));
        assert_eq!(Drawing::asked(Some("gl")), Ok(Some(Drawing::Gpu)));
        assert_eq!(Drawing::asked(Some("vulkan")), Err("vulkan".to_owned()));
    }

    #[test]
    fn software_renderers_are_told_from_gpus() {
        for software in [
            "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)",
            "Google SwiftShader",
            "llvmpipe (LLVM 15.0.6, 256 bits)",
            "ANGLE (Microsoft, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0)",
        ] {
            assert!(is_software_renderer(software), "{software}");
        }
        for gpu in [
            "ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)",
            "Apple GPU",
            "Adreno (TM) 640",
            "Mali-G78",
            "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)",
        ] {
            assert!(!is_software_renderer(gpu), "{gpu}");
        }
    }
}
