//! Who draws the native window's pixels (issue 14): the GPU through eframe, or the CPU
//! rasterizer where the GPU would only be a software renderer (Mesa's llvmpipe), slower to start
//! than drawing the pixels ourselves. The choice is made in `window::chosen_drawing`; the browser
//! page always draws with eframe's WebGL.

#[cfg(target_os = "linux")]
pub mod cpu_frame;

/// What draws a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drawing {
    /// OpenGL, through eframe.
    Gpu,
    /// askpane's CPU rasterizer: `window::cpu` (Linux, X11).
    Cpu,
}

impl Drawing {
    /// What `ASKPANE_DRAWING` asks for: nothing when unset or empty, and the value itself as the
    /// error when it names neither `cpu` nor `gpu`.
    pub fn asked(value: Option<&str>) -> Result<Option<Drawing>, String> {
        match value.map(str::trim) {
            None | Some("") => Ok(None),
            Some("cpu") => Ok(Some(Drawing::Cpu)),
            Some("gpu" | "gl") => Ok(Some(Drawing::Gpu)),
            Some(other) => Err(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Drawing;

    #[test]
    fn cpu_and_gpu_are_asked_for_and_anything_else_is_named() {
        assert_eq!(Drawing::asked(None), Ok(None));
        assert_eq!(Drawing::asked(Some(" ")), Ok(None));
        assert_eq!(Drawing::asked(Some("cpu")), Ok(Some(Drawing::Cpu)));
        assert_eq!(Drawing::asked(Some("gpu")), Ok(Some(Drawing::Gpu)));
        assert_eq!(Drawing::asked(Some("gl")), Ok(Some(Drawing::Gpu)));
        assert_eq!(Drawing::asked(Some("vulkan")), Err("vulkan".to_owned()));
    }
}
