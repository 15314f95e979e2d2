//! CPU software render backend for egui
//!
//! ## Basic example usage:
//! ```rust
//!use egui_software_backend::{BufferMutRef, ColorFieldOrder, EguiSoftwareRender};
//!let buffer = &mut vec![[0u8; 4]; 512 * 512];
//!let mut buffer_ref = BufferMutRef::new(buffer, 512, 512);
//!let ctx = egui::Context::default();
//!let mut demo = egui_demo_lib::DemoWindows::default();
//!let mut sw_render = EguiSoftwareRender::new(ColorFieldOrder::Bgra);
//!
//!let out = ctx.run_ui(egui::RawInput::default(), |ui| {
//!    demo.ui(ui);
//!});
//!
//!let primitives = ctx.tessellate(out.shapes, out.pixels_per_point);
//!
//!sw_render.render(
//!    &mut buffer_ref,
//!    &primitives,
//!    &out.textures_delta,
//!    out.pixels_per_point,
//!);
//!```
//!
//! ## Usage with optional winit backend:
//! ```rust
//!#[cfg(all(feature = "std", feature = "winit"))]
//!mod example {
//!    use egui::vec2;
//!    use egui_software_backend::{SoftwareBackend, SoftwareBackendAppConfiguration};
//!
//!    struct EguiApp {}
//!
//!    impl EguiApp {
//!        fn new(context: egui::Context) -> Self {
//!            egui_extras::install_image_loaders(&context);
//!            EguiApp {}
//!        }
//!    }
//!
//!    impl egui_software_backend::App for EguiApp {
//!        fn ui(&mut self, ui: &mut egui::Ui, _backend: &mut SoftwareBackend) {
//!            egui::CentralPanel::default().show_inside(ui, |ui| {
//!                ui.label("Hello World!");
//!            });
//!        }
//!    }
//!
//!    fn main() {
//!        let settings = SoftwareBackendAppConfiguration::new()
//!            .inner_size(Some(vec2(500.0, 300.0)))
//!            .title(Some("Simple example".to_string()));
//!
//!        egui_software_backend::run_app_with_software_backend(settings, EguiApp::new)
//!            //Can fail if winit fails to create the window
//!            .expect("Failed to run app")
//!    }
//!}
//!```
//!
//! Performance will be very poor without compiler optimizations. Run in release or use (Cargo.toml):
//!```toml
//!# Enable high optimizations for dependencies
//![profile.dev.package."*"]
//!opt-level = 3
//!```
//!

#![allow(clippy::needless_doctest_main)]
#![no_std]
extern crate alloc;

#[cfg(feature = "std")]
extern crate std;

use core::ops::Range;

use alloc::{borrow::Cow, vec, vec::Vec};

use ahash::HashMap;
use egui::{Color32, Mesh, Pos2, Vec2, vec2};

#[cfg(feature = "raster_stats")]
use crate::stats::RasterStats;
use crate::{
    color::{AvailableImpl, SelectedImpl, swizzle_rgba_bgra},
    egui_texture::EguiTexture,
    hash::Hash32,
    render::{draw_egui_mesh, egui_orient2df},
};

pub(crate) mod color;
pub(crate) mod egui_texture;
pub(crate) mod hash;
pub(crate) mod math;
pub(crate) mod raster;
pub(crate) mod render;
#[cfg(test)]
mod simd_tests;
#[cfg(feature = "raster_stats")]
pub mod stats;



#[inline(always)]
#[allow(dead_code)]
pub(crate) fn sse41() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    return std::arch::is_x86_feature_detected!("sse4.1");
    #[cfg(any(not(target_arch = "x86_64"), not(feature = "std")))]
    return false;
}

#[inline(always)]
#[allow(dead_code)]
pub(crate) fn neon() -> bool {
    #[cfg(all(target_arch = "aarch64", feature = "std"))]
    // This should always be true on aarch64
    return std::arch::is_aarch64_feature_detected!("neon");
    #[cfg(any(not(target_arch = "aarch64"), not(feature = "std")))]
    return false;
}

const TILE_SIZE: usize = 64;

/// Used to define the color swizzle order. Some backends require Rgba and others require Bgra. The renderer swizzles
/// textures as they are loaded so they can later be rasterized directly onto the frame buffer.
#[derive(Copy, Clone, Default)]
pub enum ColorFieldOrder {
    #[default]
    Rgba,
    Bgra,
}

/// Software render backend for egui.
pub struct EguiSoftwareRender {
    textures: HashMap<egui::TextureId, EguiTexture>,
    cached_primitives: HashMap<u32, CachedPrimitive>,
    tiles_dim: [usize; 2],
    dirty_tiles: Vec<u8>,
    target_size: Vec2,
    prims_updated_this_frame: usize,
    output_field_order: ColorFieldOrder,
    canvas: Canvas,
    redraw_everything_this_frame: bool,
    convert_tris_to_rects: bool,
    allow_raster_opt: bool,
    cacheing_enabled: bool,
    simd_impl: AvailableImpl,
    /// askpane: per tile, a fingerprint of the cached primitives drawn on it (their hashes and
    /// places, in z order), as of the last frame: a tile whose fingerprint is unchanged shows
    /// the same pixels, so it is neither recomposited nor sent again.
    tile_fingerprints: Vec<u64>,
    #[cfg(feature = "raster_stats")]
    pub stats: RasterStats,
}

/// askpane: a rectangle of the target, in pixels, that a frame drawn by
/// [`EguiSoftwareRender::render_damage`] changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Damage {
    pub x: usize,
    pub y: usize,
    pub width: usize,
    pub height: usize,
}

impl EguiSoftwareRender {
    /// # Arguments
    /// * `output_field_order` - egui textures and vertex colors will be swizzled before rendering to match the desired
    ///   output buffer order.
    pub fn new(output_field_order: ColorFieldOrder) -> Self {
        EguiSoftwareRender {
            textures: Default::default(),
            cached_primitives: Default::default(),
            tiles_dim: Default::default(),
            dirty_tiles: Default::default(),
            target_size: Default::default(),
            prims_updated_this_frame: Default::default(),
            output_field_order,
            canvas: Default::default(),
            redraw_everything_this_frame: Default::default(),
            convert_tris_to_rects: true,
            allow_raster_opt: true,
            cacheing_enabled: true,
            simd_impl: Default::default(),
            tile_fingerprints: Vec::new(),
            #[cfg(feature = "raster_stats")]
            stats: Default::default(),
        }
    }

    /// If true: attempts to optimize by converting suitable triangle pairs into rectangles for faster rendering.
    ///   Things *should* look the same with this set to `true` while rendering faster.
    pub fn with_convert_tris_to_rects(mut self, set: bool) -> Self {
        self.convert_tris_to_rects = set;
        self
    }

    /// If false: Rasterize everything with triangles, always calculate vertex colors, uvs, use bilinear
    ///   everywhere, etc... Things *should* look the same with this set to `true` while rendering faster.
    pub fn with_allow_raster_opt(mut self, set: bool) -> Self {
        self.allow_raster_opt = set;
        self
    }

    /// If true: rasterized ClippedPrimitives are cached and rendered to an intermediate tiled canvas. That canvas is
    /// then rendered over the frame buffer. If false ClippedPrimitives are rendered directly to the frame buffer.
    /// Rendering without caching is much slower and primarily intended for testing.
    pub fn with_caching(mut self, set: bool) -> Self {
        self.cacheing_enabled = set;
        self
    }

    /// Renders the given paint jobs to buffer_ref. Alternatively, when using caching
    /// EguiSoftwareRender::render_to_canvas() and subsequently EguiSoftwareRender::blit_canvas_to_buffer() can be run
    /// separately so that the primary rendering in render_to_canvas() can happen without a lock on the frame buffer.
    ///
    ///
    /// # Arguments
    /// * `paint_jobs` - List of `egui::ClippedPrimitive` from egui to be rendered.
    /// * `textures_delta` - The change in egui textures since last frame
    /// * `pixels_per_point` - The number of physical pixels for each logical point.
    pub fn render(
        &mut self,
        buffer_ref: &mut BufferMutRef,
        paint_jobs: &[egui::ClippedPrimitive],
        textures_delta: &egui::TexturesDelta,
        pixels_per_point: f32,
    ) {
        if self.cacheing_enabled {
            self.render_to_canvas(
                buffer_ref.width,
                buffer_ref.height,
                paint_jobs,
                textures_delta,
                pixels_per_point,
            );
            self.blit_canvas_to_buffer(buffer_ref);
        } else {
            self.render_direct(buffer_ref, paint_jobs, textures_delta, pixels_per_point);
        }
    }

    /// Renders the given paint jobs to an intermediate canvas.
    ///
    /// # Arguments
    /// * `width` - The width of the output in pixels. Must match final output buffer dimensions.
    /// * `height` - The height of the output in pixels. Must match final output buffer dimensions.
    /// * `paint_jobs` - List of `egui::ClippedPrimitive` from egui to be rendered.
    /// * `textures_delta` - The change in egui textures since last frame
    /// * `pixels_per_point` - The number of physical pixels for each logical point.
    pub fn render_to_canvas(
        &mut self,
        width: usize,
        height: usize,
        paint_jobs: &[egui::ClippedPrimitive],
        textures_delta: &egui::TexturesDelta,
        pixels_per_point: f32,
    ) {
        // TODO: need to deal with user textures. Either make the fields of EguiUserTextures pub or need to come up with a replacement.

        #[cfg(feature = "raster_stats")]
        self.stats.clear();

        assert!(width > 0);
        assert!(height > 0);
        assert!(pixels_per_point > 0.0);

        self.redraw_everything_this_frame = self.canvas.resize(width, height);
        // askpane: a texture replaced whole (not patched at a position) may change the pixels of
        // primitives whose vertices did not change: everything is drawn again.
        if textures_delta
            .set
            .iter()
            .any(|(_, deltas)| deltas.iter().any(|delta| delta.pos.is_none()))
        {
            self.redraw_everything_this_frame = true;
        }

        if self.redraw_everything_this_frame {
            self.canvas.clear();
            self.cached_primitives.clear();
        }

        for (_hash, prim) in self.cached_primitives.iter_mut() {
            prim.seen_this_frame = false;
        }

        self.target_size = vec2(width as f32, height as f32);
        self.tiles_dim = [width.div_ceil(TILE_SIZE), height.div_ceil(TILE_SIZE)];

        self.set_textures(textures_delta);

        self.render_prims_to_cache(paint_jobs, pixels_per_point);

        self.update_dirty_tiles();
        self.clear_unused_cached_prims();

        let mut reinit_canvas = self.redraw_everything_this_frame;

        if self.prims_updated_this_frame > 0 {
            // TODO use tiles
            reinit_canvas = true;
        }
        // askpane: tiles whose primitives were reordered or moved are dirty without a new
        // primitive (see `update_dirty_tiles`).
        if self.dirty_tiles.iter().any(|mask| mask & Self::DIRTY_TILE_MASK != 0) {
            reinit_canvas = true;
        }

        if reinit_canvas {
            self.update_canvas_from_cached();
        }

        self.free_textures(textures_delta);
    }

    /// Draw canvas alpha over given buffer.
    /// Only run after EguiSoftwareRender::render_to_canvas(), or use EguiSoftwareRender::render() to run both.
    /// Only writes tile regions that contain pixels that are not fully transparent.
    pub fn blit_canvas_to_buffer(&mut self, buffer: &mut BufferMutRef) {
        #[cfg(feature = "raster_stats")]
        let start = std::time::Instant::now();

        // Simple tile-less version
        // buffer.data.iter_mut().zip(self.canvas.iter()).for_each(|(pixel, src)| {
        //     *pixel = egui_blend_u8(*src, *pixel);
        // });

        if self.canvas.data.is_empty() {
            #[cfg(feature = "log")]
            log::error!(
                "Canvas not initialized, call EguiSoftwareRender::blit_canvas_to_buffer() only after EguiSoftwareRender::render_to_canvas()"
            );
            return;
        }

        let width = self.canvas.width;
        let height = self.canvas.height;
        assert_eq!(self.canvas.data.len(), width * height);
        assert_eq!(buffer.data.len(), width * height);

        let tiles_x = self.tiles_dim[0];

        #[cfg(feature = "rayon")]
        {
            use rayon::{
                iter::{IndexedParallelIterator, ParallelIterator},
                slice::ParallelSliceMut,
            };
            // blit rows of tiles in parallel

            let width = buffer.width;
            let px_per_row_of_tiles = width * TILE_SIZE;

            buffer
                .data
                .par_chunks_mut(px_per_row_of_tiles)
                .enumerate()
                .for_each(|(tile_row, tile_height_row)| {
                    let height = tile_height_row.len() / width; // Might be less than TILE_SIZE
                    let buffer_tile_row = &mut BufferMutRef::new(tile_height_row, width, height);

                    for (tile_idx, &mask) in self.dirty_tiles.iter().enumerate() {
                        if mask & Self::OCCUPIED_TILE_MASK == 0 {
                            continue;
                        }

                        let tile_y = tile_idx / tiles_x;
                        if tile_y != tile_row {
                            continue;
                        }

                        let tile_x = tile_idx % tiles_x;

                        let x_start = tile_x * TILE_SIZE;
                        let y_start = 0;
                        let x_end = (x_start + TILE_SIZE).min(width);
                        let y_end = TILE_SIZE.min(height);

                        let canvas_row_offset = tile_row * TILE_SIZE;

                        dispatch_simd_impl!(self.simd_impl, |simd_impl| self.blit_tile(
                            simd_impl,
                            buffer_tile_row,
                            x_start,
                            y_start,
                            x_end,
                            y_end,
                            canvas_row_offset,
                        ));
                    }
                });
        }
        #[cfg(not(feature = "rayon"))]
        {
            for (tile_idx, &mask) in self.dirty_tiles.iter().enumerate() {
                if mask & Self::OCCUPIED_TILE_MASK == 0 {
                    continue;
                }

                let tile_x = tile_idx % tiles_x;
                let tile_y = tile_idx / tiles_x;

                let x_start = tile_x * TILE_SIZE;
                let y_start = tile_y * TILE_SIZE;
                let x_end = (x_start + TILE_SIZE).min(width);
                let y_end = (y_start + TILE_SIZE).min(height);

                dispatch_simd_impl!(self.simd_impl, |simd_impl| self
                    .blit_tile(simd_impl, buffer, x_start, y_start, x_end, y_end, 0));
            }
        }

        #[cfg(feature = "raster_stats")]
        {
            self.stats.blit_canvas_to_buffer = start.elapsed().as_secs_f32();
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn blit_tile(
        &self,
        simd_impl: impl SelectedImpl,
        buffer: &mut BufferMutRef,
        x_start: usize,
        y_start: usize,
        x_end: usize,
        y_end: usize,
        canvas_row_offset: usize,
    ) {
        for y in y_start..y_end {
            let src_row = self.canvas.get_span(x_start, x_end, y + canvas_row_offset);
            let dst_row = &mut buffer.get_mut_span(x_start, x_end, y);
            simd_impl.egui_blend_u8_slice(src_row, dst_row);
        }
    }

    /// Render directly into buffer without cache. This is much slower and mainly intended for testing.
    fn render_direct(
        &mut self,
        direct_draw_buffer: &mut BufferMutRef,
        paint_jobs: &[egui::ClippedPrimitive],
        textures_delta: &egui::TexturesDelta,
        pixels_per_point: f32,
    ) {
        #[cfg(feature = "raster_stats")]
        self.stats.clear();

        self.set_textures(textures_delta);

        self.target_size = vec2(
            direct_draw_buffer.width as f32,
            direct_draw_buffer.height as f32,
        );

        #[cfg(feature = "raster_stats")]
        let start = std::time::Instant::now();

        for egui::ClippedPrimitive {
            clip_rect,
            primitive,
        } in paint_jobs.iter()
        {
            let input_mesh = match primitive {
                egui::epaint::Primitive::Mesh(input_mesh) => input_mesh,
                egui::epaint::Primitive::Callback(_) => {
                    #[cfg(feature = "log")]
                    log::error!("egui::epaint::Primitive::Callback(PaintCallback) not supported");
                    continue;
                }
            };

            if input_mesh.vertices.is_empty() || input_mesh.indices.is_empty() {
                continue;
            }

            let clip_rect = egui::Rect {
                min: clip_rect.min * pixels_per_point,
                max: clip_rect.max * pixels_per_point,
            };

            let mut mesh_min = egui::Vec2::splat(f32::MAX);
            let mut mesh_max = egui::Vec2::splat(-f32::MAX);

            let px_mesh =
                self.prepare_px_mesh(pixels_per_point, input_mesh, &mut mesh_min, &mut mesh_max);

            let mesh_size = mesh_max - mesh_min;
            if mesh_size.x > 8192.0 || mesh_size.y > 8192.0 {
                // TODO it occasionally tries to make giant buffers in the first couple frames initially for some reason.
                continue;
            }

            let render_in_low_precision = mesh_size.x > 4096.0 || mesh_size.y > 4096.0;
            if render_in_low_precision {
                draw_egui_mesh::<2>(
                    self.simd_impl,
                    &self.textures,
                    direct_draw_buffer,
                    &clip_rect,
                    &px_mesh,
                    Vec2::ZERO,
                    self.allow_raster_opt,
                    self.convert_tris_to_rects,
                    #[cfg(all(feature = "raster_stats", not(feature = "rayon")))]
                    &mut self.stats,
                );
            } else {
                draw_egui_mesh::<8>(
                    self.simd_impl,
                    &self.textures,
                    direct_draw_buffer,
                    &clip_rect,
                    &px_mesh,
                    Vec2::ZERO,
                    self.allow_raster_opt,
                    self.convert_tris_to_rects,
                    #[cfg(all(feature = "raster_stats", not(feature = "rayon")))]
                    &mut self.stats,
                );
            }
        }

        #[cfg(feature = "raster_stats")]
        {
            self.stats.render_direct = start.elapsed().as_secs_f32();
        }
        self.free_textures(textures_delta);
    }

    fn prepare_px_mesh(
        &self,
        pixels_per_point: f32,
        mesh: &egui::Mesh,
        mesh_min: &mut Vec2,
        mesh_max: &mut Vec2,
    ) -> Mesh {
        let mut px_mesh = mesh.clone();

        for v in px_mesh.vertices.iter_mut() {
            v.pos *= pixels_per_point;

            match self.output_field_order {
                ColorFieldOrder::Rgba => (), // egui uses rgba
                ColorFieldOrder::Bgra => {
                    let d = swizzle_rgba_bgra(v.color.to_array());
                    v.color = Color32::from_rgba_premultiplied(d[0], d[1], d[2], d[3]);
                }
            }

            *mesh_min = mesh_min.min(v.pos.to_vec2());
            *mesh_max = mesh_max.max(v.pos.to_vec2());
        }

        // Make all the tris face forward (ccw) to simplify rasterization.
        // TODO perf: could store the area so it's not recomputed later.
        for i in (0..px_mesh.indices.len()).step_by(3) {
            let i0 = px_mesh.indices[i] as usize;
            let i1 = px_mesh.indices[i + 1] as usize;
            let i2 = px_mesh.indices[i + 2] as usize;
            let v0 = px_mesh.vertices[i0];
            let v1 = px_mesh.vertices[i1];
            let v2 = px_mesh.vertices[i2];
            let area = egui_orient2df(&v0.pos, &v1.pos, &v2.pos);
            if area < 0.0 {
                px_mesh.indices.swap(i + 1, i + 2);
            }
        }
        px_mesh
    }

    fn render_prims_to_cache(
        &mut self,
        paint_jobs: &[egui::ClippedPrimitive],
        pixels_per_point: f32,
    ) {
        #[cfg(feature = "raster_stats")]
        let start = std::time::Instant::now();

        struct CacheReuse {
            seen_this_frame: bool,
            z_order: usize,
            min_x: usize,
            min_y: usize,
            rendered_this_frame: bool,
            hash: u32,
        }

        enum CacheUpdate {
            CacheReuse(CacheReuse),
            New(u32, CachedPrimitive),
            None,
        }

        // Render paint jobs in parallel
        #[cfg(feature = "rayon")]
        use rayon::iter::{IndexedParallelIterator, IntoParallelRefIterator, ParallelIterator};
        #[cfg(feature = "rayon")]
        let iter = paint_jobs.par_iter().enumerate();

        #[cfg(not(feature = "rayon"))]
        let iter = paint_jobs.iter().enumerate();

        let updates: Vec<CacheUpdate> = iter
            .map(
                |(
                    prim_idx,
                    egui::ClippedPrimitive {
                        clip_rect,
                        primitive,
                    },
                )| {
                    let input_mesh = match primitive {
                        egui::epaint::Primitive::Mesh(input_mesh) => input_mesh,
                        egui::epaint::Primitive::Callback(_) => {
                            #[cfg(feature = "log")]
                            log::error!(
                                "egui::epaint::Primitive::Callback(PaintCallback) not supported"
                            );
                            return CacheUpdate::None;
                        }
                    };

                    if input_mesh.vertices.is_empty() || input_mesh.indices.is_empty() {
                        return CacheUpdate::None;
                    }

                    let clip_rect = egui::Rect {
                        min: clip_rect.min * pixels_per_point,
                        max: clip_rect.max * pixels_per_point,
                    };

                    let mut mesh_min = egui::Vec2::splat(f32::MAX);
                    let mut mesh_max = egui::Vec2::splat(-f32::MAX);

                    let px_mesh = self.prepare_px_mesh(
                        pixels_per_point,
                        input_mesh,
                        &mut mesh_min,
                        &mut mesh_max,
                    );

                    let cropped_min = mesh_min.max(clip_rect.min.to_vec2());
                    let cropped_max = mesh_max.min(clip_rect.max.to_vec2());
                    let clip_rect = egui::Rect {
                        min: Pos2::ZERO,
                        max: (cropped_max - cropped_min).to_pos2() + egui::Vec2::splat(0.5),
                    };

                    let hash = {
                        let mut hasher = Hash32::new_fnv();

                        hasher.hash_wrap(clip_rect.min.x.to_bits());
                        hasher.hash_wrap(clip_rect.min.y.to_bits());
                        hasher.hash_wrap(clip_rect.max.x.to_bits());
                        hasher.hash_wrap(clip_rect.max.y.to_bits());
                        // askpane: where the crop starts. The same vertices under a clip
                        // rectangle of the same size elsewhere are another part of the mesh:
                        // upstream reused the cached pixels of the old part, at the new place.
                        hasher.hash_wrap(cropped_min.x.to_bits());
                        hasher.hash_wrap(cropped_min.y.to_bits());
                        hasher.hash_wrap(match px_mesh.texture_id {
                            egui::TextureId::Managed(id) => id as u32,
                            egui::TextureId::User(id) => id as u32 + 9358476,
                        });
                        for ind in &px_mesh.indices {
                            let v = px_mesh.vertices[*ind as usize];

                            // Tried to do this to avoid full redraws when moving a window but it was resulting in some
                            // meshes to be matches incorrectly in the ui gradient portion of the egui color test:
                            //let pos = v.pos - cropped_min;

                            // It's much faster to not wrap for every field. General ordering should be sufficiently preserved.
                            hasher.hash(v.pos.x.to_bits());
                            hasher.hash(v.pos.y.to_bits());
                            hasher.hash(v.uv.x.to_bits());
                            hasher.hash(v.uv.y.to_bits());
                            hasher.hash(u32::from_le_bytes(v.color.to_array()));
                            hasher.fnv_wrap();
                        }
                        hasher.hash_wrap(px_mesh.indices.len() as u32);
                        hasher.finalize()
                    };

                    if self.cached_primitives.contains_key(&hash) {
                        CacheUpdate::CacheReuse(CacheReuse {
                            hash,
                            seen_this_frame: true,
                            z_order: prim_idx,
                            min_x: cropped_min.x as usize,
                            min_y: cropped_min.y as usize,
                            rendered_this_frame: false,
                        })
                    } else {
                        let min_x = cropped_min.x as usize;
                        let min_y = cropped_min.y as usize;
                        // askpane: saturating, so a mesh wholly outside its clip rectangle (or
                        // an empty one) is an empty region, not an overflow panic in a debug build.
                        let width = (cropped_max.x.ceil() as usize).saturating_sub(min_x);
                        let height = (cropped_max.y.ceil() as usize).saturating_sub(min_y);

                        if width > 8192 || height > 8192 {
                            // TODO it occasionally tries to make giant buffers in the first couple frames initially for some reason.
                            return CacheUpdate::None;
                        }

                        if width == 0 || height == 0 {
                            return CacheUpdate::None;
                        }

                        let render_in_low_precision = width > 4096 || height > 4096;

                        let mut prim = CachedPrimitive::new(min_x, min_y, width, height, prim_idx);
                        let mut buffer_ref = BufferMutRef {
                            data: &mut prim.buffer,
                            width,
                            height,
                            width_extent: width - 1,
                            height_extent: height - 1,
                        };

                        let offset = -vec2(cropped_min.x.floor(), cropped_min.y.floor());

                        if render_in_low_precision {
                            // Seems to not be an issue in direct draw? Seems like a bug.
                            draw_egui_mesh::<2>(
                                self.simd_impl,
                                &self.textures,
                                &mut buffer_ref,
                                &clip_rect,
                                &px_mesh,
                                offset,
                                self.allow_raster_opt,
                                self.convert_tris_to_rects,
                                #[cfg(all(feature = "raster_stats", not(feature = "rayon")))]
                                &mut self.stats,
                            );
                        } else {
                            draw_egui_mesh::<8>(
                                self.simd_impl,
                                &self.textures,
                                &mut buffer_ref,
                                &clip_rect,
                                &px_mesh,
                                offset,
                                self.allow_raster_opt,
                                self.convert_tris_to_rects,
                                #[cfg(all(feature = "raster_stats", not(feature = "rayon")))]
                                &mut self.stats,
                            );
                        }
                        prim.update_occupied_tiles(self.tiles_dim[0], self.tiles_dim[1]);
                        CacheUpdate::New(hash, prim)
                    }
                },
            )
            .collect::<Vec<_>>();

        updates.into_iter().for_each(|update| match update {
            CacheUpdate::CacheReuse(cache_reuse) => {
                if let Some(cached_primitive) = self.cached_primitives.get_mut(&cache_reuse.hash) {
                    cached_primitive.seen_this_frame = cache_reuse.seen_this_frame;
                    cached_primitive.z_order = cache_reuse.z_order;
                    cached_primitive.min_x = cache_reuse.min_x;
                    cached_primitive.min_y = cache_reuse.min_y;
                    cached_primitive.rendered_this_frame = cache_reuse.rendered_this_frame;
                }
            }
            CacheUpdate::New(hash, prim) => {
                self.prims_updated_this_frame += 1;
                self.cached_primitives.insert(hash, prim);
            }
            CacheUpdate::None => (),
        });

        #[cfg(feature = "raster_stats")]
        {
            self.stats.render_prims_to_cache = start.elapsed().as_secs_f32();
        }
    }

    fn update_canvas_from_cached(&mut self) {
        let simd_impl = self.simd_impl;
        #[cfg(feature = "raster_stats")]
        let start = std::time::Instant::now();

        let mut sorted_prim_cache = self.cached_primitives.values().collect::<Vec<_>>();
        sorted_prim_cache.sort_unstable_by_key(|prim| prim.z_order);

        #[allow(unused_mut)]
        let mut canvas =
            BufferMutRef::new(&mut self.canvas.data, self.canvas.width, self.canvas.height);

        #[cfg(feature = "rayon")]
        {
            use rayon::{
                iter::{IndexedParallelIterator, ParallelIterator},
                slice::ParallelSliceMut,
            };
            // composite rows of tiles in parallel

            let full_height = self.canvas.height;

            let width = canvas.width;
            let px_per_row_of_tiles = width * TILE_SIZE;

            canvas
                .data
                .par_chunks_mut(px_per_row_of_tiles)
                .enumerate()
                .for_each(|(tile_row, tile_height_row)| {
                    let height = tile_height_row.len() / width; // Might be less than TILE_SIZE
                    let canvas_tile_row = &mut BufferMutRef::new(tile_height_row, width, height);

                    let dirty_tile_row_start = tile_row * self.tiles_dim[0];
                    let dirty_tile_row_end = dirty_tile_row_start + self.tiles_dim[0];

                    self.dirty_tiles
                        .iter()
                        .enumerate()
                        .skip(dirty_tile_row_start)
                        .take(dirty_tile_row_end)
                        .filter(|(_, mask)| **mask & Self::DIRTY_TILE_MASK != 0)
                        .map(|(idx, _)| idx)
                        .for_each(|tile_idx| {
                            let tile_y = tile_idx / self.tiles_dim[0];

                            if tile_y != tile_row {
                                return;
                            }
                            let canvas_row_offset = tile_row * TILE_SIZE;

                            let tile_x = tile_idx % self.tiles_dim[0];

                            update_canvas_tile(
                                simd_impl,
                                &sorted_prim_cache,
                                canvas_tile_row,
                                tile_x,
                                tile_y,
                                full_height,
                                canvas_row_offset,
                            );
                        });
                });
        }

        #[cfg(not(feature = "rayon"))]
        {
            for tile_idx in self
                .dirty_tiles
                .iter()
                .enumerate()
                .filter(|(_, mask)| **mask & Self::DIRTY_TILE_MASK != 0)
                .map(|(idx, _)| idx)
            {
                let tile_x = tile_idx % self.tiles_dim[0];
                let tile_y = tile_idx / self.tiles_dim[0];
                let full_height = canvas.height;
                update_canvas_tile(
                    simd_impl,
                    &sorted_prim_cache,
                    &mut canvas,
                    tile_x,
                    tile_y,
                    full_height,
                    0,
                );
            }
        }
        #[cfg(feature = "raster_stats")]
        {
            self.stats.update_canvas_from_cached = start.elapsed().as_secs_f32();
        }
    }

    fn clear_unused_cached_prims(&mut self) {
        self.cached_primitives
            .retain(|_hash, prim| prim.seen_this_frame);
    }

    const DIRTY_TILE_MASK: u8 = 0b00000001;
    const OCCUPIED_TILE_MASK: u8 = 0b000000010;
    fn update_dirty_tiles(&mut self) {
        #[cfg(feature = "raster_stats")]
        let start = std::time::Instant::now();
        self.dirty_tiles
            .resize(self.tiles_dim[0] * self.tiles_dim[1], 0);
        self.dirty_tiles.fill(0);
        for prim in self.cached_primitives.values() {
            for tile in &prim.occupied_tiles {
                let mask =
                    &mut self.dirty_tiles[tile[0] as usize + tile[1] as usize * self.tiles_dim[0]];
                if !prim.seen_this_frame || prim.rendered_this_frame {
                    *mask |= Self::DIRTY_TILE_MASK;
                }
                *mask |= Self::OCCUPIED_TILE_MASK;
            }
        }
        self.compare_tile_fingerprints();
        #[cfg(feature = "raster_stats")]
        {
            self.stats.update_dirty_tiles = start.elapsed().as_secs_f32();
        }
    }

    /// askpane: marks dirty every tile whose primitives differ from the last frame's in any way
    /// upstream's marks miss: the same cached primitives in another order (a popup raised), or
    /// fewer of them. Every tile, when everything is drawn again.
    fn compare_tile_fingerprints(&mut self) {
        const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
        const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
        let tiles = self.dirty_tiles.len();
        let mut fingerprints = vec![FNV_OFFSET; tiles];
        let mut drawn: Vec<(&u32, &CachedPrimitive)> = self
            .cached_primitives
            .iter()
            .filter(|(_, prim)| prim.seen_this_frame)
            .collect();
        drawn.sort_unstable_by_key(|(_, prim)| prim.z_order);
        for (hash, prim) in drawn {
            for tile in &prim.occupied_tiles {
                let index = tile[0] as usize + tile[1] as usize * self.tiles_dim[0];
                if let Some(fingerprint) = fingerprints.get_mut(index) {
                    for word in [u64::from(*hash), prim.min_x as u64, prim.min_y as u64] {
                        *fingerprint = (*fingerprint ^ word).wrapping_mul(FNV_PRIME);
                    }
                }
            }
        }
        let everything = self.redraw_everything_this_frame || self.tile_fingerprints.len() != tiles;
        for ((mask, now), before) in self
            .dirty_tiles
            .iter_mut()
            .zip(&fingerprints)
            .zip(self.tile_fingerprints.iter().chain(std::iter::repeat(&0)))
        {
            if everything || now != before {
                *mask |= Self::DIRTY_TILE_MASK;
            }
        }
        self.tile_fingerprints = fingerprints;
    }

    /// askpane: renders the paint jobs into `buffer`, which holds this renderer's previous frame
    /// (drawn over `background`), redrawing only the tiles whose primitives changed: they are
    /// cleared to `background` and the canvas is blended over them. `whole`: the buffer does not
    /// hold the previous frame (a new buffer, another background), so every tile is drawn.
    /// Returns the rectangles changed, runs of dirty tiles row of tiles by row of tiles.
    pub fn render_damage(
        &mut self,
        buffer: &mut BufferMutRef,
        paint_jobs: &[egui::ClippedPrimitive],
        textures_delta: &egui::TexturesDelta,
        pixels_per_point: f32,
        background: [u8; 4],
        whole: bool,
    ) -> Vec<Damage> {
        let (width, height) = (buffer.width, buffer.height);
        self.render_to_canvas(width, height, paint_jobs, textures_delta, pixels_per_point);
        if self.canvas.data.len() != width * height || buffer.data.len() != width * height {
            return Vec::new();
        }
        let tiles_x = self.tiles_dim[0];
        let mut damage: Vec<Damage> = Vec::new();
        for (tile_idx, &mask) in self.dirty_tiles.iter().enumerate() {
            if !whole && mask & Self::DIRTY_TILE_MASK == 0 {
                continue;
            }
            let tile_x = tile_idx % tiles_x;
            let tile_y = tile_idx / tiles_x;
            let x_start = tile_x * TILE_SIZE;
            let y_start = tile_y * TILE_SIZE;
            let x_end = (x_start + TILE_SIZE).min(width);
            let y_end = (y_start + TILE_SIZE).min(height);
            for y in y_start..y_end {
                buffer.get_mut_span(x_start, x_end, y).fill(background);
            }
            if mask & Self::OCCUPIED_TILE_MASK != 0 {
                dispatch_simd_impl!(self.simd_impl, |simd_impl| self
                    .blit_tile(simd_impl, buffer, x_start, y_start, x_end, y_end, 0));
            }
            let rect = Damage {
                x: x_start,
                y: y_start,
                width: x_end - x_start,
                height: y_end - y_start,
            };
            match damage.last_mut() {
                Some(last) if last.y == rect.y && last.x + last.width == rect.x => {
                    last.width += rect.width;
                }
                _ => damage.push(rect),
            }
        }
        damage
    }

    fn set_textures(&mut self, textures_delta: &egui::TexturesDelta) {
        #[cfg(feature = "raster_stats")]
        let start = std::time::Instant::now();
        for (id, delta) in textures_delta
            .set
            .iter()
            .flat_map(|(id, deltas)| deltas.iter().map(move |delta| (id, delta)))
        {
            if delta.options.magnification != delta.options.minification {
                // Would need helper lanes to impl?
                #[cfg(feature = "log")]
                log::warn!(
                    "TextureOptions magnification and minification not matching is unsupported."
                );
            }
            let pixels = match &delta.image {
                egui::ImageData::Color(image) => {
                    assert_eq!(image.width() * image.height(), image.pixels.len());
                    Cow::Borrowed(&image.pixels)
                }
            };
            let size = delta.image.size();
            if let Some(pos) = delta.pos {
                if let Some(texture) = self.textures.get_mut(id) {
                    for y in 0..size[1] {
                        for x in 0..size[0] {
                            let src_pos = x + y * size[0];
                            let dest_pos = (x + pos[0]) + (y + pos[1]) * texture.width;
                            texture.data[dest_pos] = match self.output_field_order {
                                ColorFieldOrder::Rgba => pixels[src_pos].to_array(),
                                ColorFieldOrder::Bgra => {
                                    swizzle_rgba_bgra(pixels[src_pos].to_array())
                                }
                            };
                        }
                    }
                }
            } else {
                let new_texture =
                    EguiTexture::new(self.output_field_order, delta.options, size, &pixels);

                self.textures.insert(*id, new_texture);
            }
        }
        #[cfg(feature = "raster_stats")]
        {
            self.stats.set_textures = start.elapsed().as_secs_f32();
        }
    }

    fn free_textures(&mut self, textures_delta: &egui::TexturesDelta) {
        for free in &textures_delta.free {
            self.textures.remove(free);
        }
    }
}

fn update_canvas_tile(
    simd_impl: AvailableImpl,
    sorted_prim_cache: &[&CachedPrimitive],
    canvas: &mut BufferMutRef,
    tile_x: usize,
    tile_y: usize,
    full_height: usize,
    canvas_row_offset: usize,
) {
    let tile_x_start = tile_x * TILE_SIZE;
    let tile_y_start = tile_y * TILE_SIZE;
    let tile_x_end = (tile_x_start + TILE_SIZE).min(canvas.width);
    let tile_y_end = (tile_y_start + TILE_SIZE).min(full_height);

    // clear tile
    for y in (tile_y_start - canvas_row_offset)..(tile_y_end - canvas_row_offset) {
        let row_start = y * canvas.width;
        let start = row_start + tile_x_start;
        let end = row_start + tile_x_end;
        canvas.data[start..end].fill([0; 4]);
    }

    let tile_n = [tile_x as u16, tile_y as u16];
    // redraw cached prims on tile
    for prim in sorted_prim_cache {
        if !prim.occupied_tiles.contains(&tile_n) {
            continue;
        }

        let mut min_x = prim.min_x;
        let mut min_y = prim.min_y;
        let mut max_x = min_x + prim.width;
        let mut max_y = min_y + prim.height;

        min_x = min_x.max(tile_x_start).min(canvas.width);
        min_y = min_y
            .max(tile_y_start)
            .min(canvas.height + canvas_row_offset);
        max_x = max_x.min(tile_x_end).min(canvas.width);
        max_y = max_y.min(tile_y_end).min(canvas.height + canvas_row_offset);

        let prim_buf = prim.get_buffer_ref();

        if max_x <= min_x || max_y <= min_y {
            continue;
        }
        let prim_x_min = (min_x - prim.min_x).min(prim_buf.width);
        let prim_x_max = (max_x - prim.min_x).min(prim_buf.width);

        let get_ranges = |y: usize| -> (Range<usize>, Range<usize>) {
            let canvas_row_start = (y - canvas_row_offset).min(canvas.height) * canvas.width;
            let canvas_start = canvas_row_start + min_x;
            let canvas_end = canvas_row_start + max_x;

            let prim_y = (y - prim.min_y).min(prim_buf.height);
            let prim_row_start = prim_y * prim_buf.width;
            let prim_start = prim_row_start + prim_x_min;
            let prim_end = prim_row_start + prim_x_max;

            (canvas_start..canvas_end, prim_start..prim_end)
        };

        dispatch_simd_impl!(simd_impl, |simd_impl| {
            for y in min_y..max_y {
                let (canvas_slice, prim_slice) = get_ranges(y);
                let src_row = &prim_buf.data[prim_slice];
                let dst_row = &mut canvas.data[canvas_slice];
                simd_impl.egui_blend_u8_slice(src_row, dst_row);
            }
        });
    }
}

#[derive(Default)]
struct Canvas {
    data: Vec<[u8; 4]>,
    width: usize,
    height: usize,
    width_extent: usize,
    height_extent: usize,
}

impl Canvas {
    fn clear(&mut self) {
        self.data.iter_mut().for_each(|p| *p = [0; 4]);
    }

    /// returns true if wasn't already the given size
    fn resize(&mut self, width: usize, height: usize) -> bool {
        if width != self.width || height != self.height {
            self.data.resize(width * height, [0; 4]);
            self.width = width;
            self.height = height;
            self.width_extent = width - 1;
            self.height_extent = height - 1;
            true
        } else {
            false
        }
    }

    #[inline(always)]
    pub fn get_range(&self, start: usize, end: usize, y: usize) -> Range<usize> {
        let row_start = y * self.width;
        let start = row_start + start;
        let end = row_start + end;
        start..end
    }

    #[inline(always)]
    pub fn get_span(&self, start: usize, end: usize, y: usize) -> &[[u8; 4]] {
        let range = self.get_range(start, end, y);
        &self.data[range]
    }
}

/// A region of cached rendered image data that corresponds to a ClippedPrimitive.
pub struct CachedPrimitive {
    buffer: Vec<[u8; 4]>,
    min_x: usize,
    min_y: usize,
    width: usize,
    height: usize,
    z_order: usize,
    seen_this_frame: bool,
    rendered_this_frame: bool,
    occupied_tiles: Vec<[u16; 2]>,
}

impl CachedPrimitive {
    fn get_buffer_ref(&self) -> BufferRef<'_> {
        BufferRef {
            data: &self.buffer,
            width: self.width,
            height: self.height,
            width_extent: self.width - 1,
            height_extent: self.height - 1,
        }
    }

    fn new(min_x: usize, min_y: usize, width: usize, height: usize, z_order: usize) -> Self {
        CachedPrimitive {
            buffer: vec![[0; 4]; width * height],
            min_x,
            min_y,
            width,
            height,
            z_order,
            seen_this_frame: true,
            rendered_this_frame: true,
            occupied_tiles: Vec::with_capacity(64),
        }
    }

    fn update_occupied_tiles(&mut self, tiles_wide: usize, tiles_tall: usize) {
        // list which tiles contain a pixel with that isn't fully transparent (also containing not color info)
        self.occupied_tiles.clear();
        let max_x = self.min_x + self.width;
        let max_y = self.min_y + self.height;
        let first_tile_x = (self.min_x / TILE_SIZE).min(tiles_wide);
        let first_tile_y = (self.min_y / TILE_SIZE).min(tiles_tall);
        let last_tile_x = max_x.div_ceil(TILE_SIZE).min(tiles_wide);
        let last_tile_y = max_y.div_ceil(TILE_SIZE).min(tiles_tall);

        for tile_y in first_tile_y..last_tile_y {
            let mut px_start_y = (tile_y * TILE_SIZE).max(self.min_y);
            let mut px_end_y = (px_start_y + TILE_SIZE).min(max_y);
            px_start_y -= self.min_y;
            px_end_y -= self.min_y;
            for tile_x in first_tile_x..last_tile_x {
                let mut px_start_x = (tile_x * TILE_SIZE).max(self.min_x);
                let mut px_end_x = (px_start_x + TILE_SIZE).min(max_x);
                px_start_x -= self.min_x;
                px_end_x -= self.min_x;

                'px_outer: for y in px_start_y..px_end_y {
                    for x in px_start_x..px_end_x {
                        // Purposefully panicing when out of bounds. If it's out of bounds then the math is wrong and
                        // the tile is not being calculated correctly.
                        if u32::from_le_bytes(self.buffer[x + y * self.width]) > 0 {
                            self.occupied_tiles.push([tile_x as u16, tile_y as u16]);
                            break 'px_outer;
                        }
                    }
                }
            }
        }
    }
}

/// A mutable reference to a slice of image buffer data and corresponding image extents.
#[derive(Debug)]
pub struct BufferMutRef<'a> {
    pub data: &'a mut [[u8; 4]],
    pub width: usize,
    pub height: usize,
    pub width_extent: usize,
    pub height_extent: usize,
}

impl<'a> BufferMutRef<'a> {
    pub fn new(data: &'a mut [[u8; 4]], width: usize, height: usize) -> Self {
        assert!(width > 0);
        assert!(height > 0);
        BufferMutRef {
            data,
            width,
            height,
            width_extent: width - 1,
            height_extent: height - 1,
        }
    }

    #[inline(always)]
    pub fn get_range(&self, start: usize, end: usize, y: usize) -> Range<usize> {
        let row_start = y * self.width;
        let start = row_start + start;
        let end = row_start + end;
        start..end
    }

    #[inline(always)]
    pub fn get_mut_span(&mut self, start: usize, end: usize, y: usize) -> &mut [[u8; 4]] {
        let range = self.get_range(start, end, y);
        &mut self.data[range]
    }

    #[inline(always)]
    pub fn get_mut_clamped(&mut self, x: usize, y: usize) -> &mut [u8; 4] {
        let x = x.min(self.width_extent);
        let y = y.min(self.height_extent);
        &mut self.data[x + y * self.width]
    }

    #[inline(always)]
    pub fn get_mut(&mut self, x: usize, y: usize) -> &mut [u8; 4] {
        &mut self.data[x + y * self.width]
    }
}

/// A reference to a slice of image buffer data and corresponding image extents.
#[derive(Debug)]
pub struct BufferRef<'a> {
    pub data: &'a [[u8; 4]],
    pub width: usize,
    pub height: usize,
    pub width_extent: usize,
    pub height_extent: usize,
}

impl<'a> BufferRef<'a> {
    #[inline(always)]
    pub fn get_ref_clamped(&self, x: usize, y: usize) -> &[u8; 4] {
        let x = x.min(self.width_extent);
        let y = y.min(self.height_extent);
        &self.data[x + y * self.width]
    }

    #[inline(always)]
    pub fn get_ref(&self, x: usize, y: usize) -> &[u8; 4] {
        &self.data[x + y * self.width]
    }
}
