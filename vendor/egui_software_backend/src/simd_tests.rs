//! askpane's differential test of the SIMD paths (not upstream's; see ASKPANE.md): every SIMD
//! implementation this processor runs (SSE4.1 and AVX2 on x86_64, NEON on aarch64) must give
//! exactly the bytes the scalar one (`GenericImpl`) gives, on seeded random inputs:
//!
//! - each blend and tint primitive of `SelectedImpl`, on spans of every length from 0 to past the
//!   widest vector loop (8 pixels) so every loop tail runs, with alphas 0 and 255 (the branches)
//!   as often as any other;
//! - whole renders of random meshes (axis-aligned quads for the rectangle rasterizer, triangles,
//!   textured or not, constant and varying vertex colours, clipped, at several scales), with and
//!   without the primitive cache and the raster shortcuts, over three frames.
//!
//! No tolerance: the SIMD code computes the scalar integer formula lane by lane
//! (`x = dst·(255 − a) + 128`, then `(x + (x >> 8)) >> 8`, which `mulhi(x, 257)` equals exactly
//! for every 16-bit `x`; then a saturating add), so any difference is a bug. The random numbers
//! come from a xorshift64* written here (no dependency); a failure names the seed.

use alloc::{format, string::String, vec, vec::Vec};

use egui::epaint::{ImageDelta, Primitive, Vertex};
use egui::{ClippedPrimitive, Color32, ColorImage, Mesh, Pos2, Rect, TextureId, TextureOptions};

use crate::color::{AvailableImpl, GenericImpl, SelectedImpl, available_instrs};
use crate::{BufferMutRef, ColorFieldOrder, EguiSoftwareRender};

/// xorshift64* (Vigna): small, seeded, good enough to spread test inputs.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Never zero (xorshift's fixed point), and unlike seeds give unlike streams.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// 0..n
    fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 32) % n
    }

    fn byte(&mut self) -> u8 {
        (self.next() >> 56) as u8
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// 0..1
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// An alpha: fully transparent and fully opaque (each a branch somewhere) as often as others.
    fn alpha(&mut self) -> u8 {
        match self.below(4) {
            0 => 0,
            1 => 255,
            _ => self.byte(),
        }
    }

    /// A premultiplied colour, as egui makes them (every channel at most alpha).
    fn premultiplied(&mut self) -> [u8; 4] {
        let alpha = self.alpha();
        let mut channel = || (self.next() >> 32) as u16 % (u16::from(alpha) + 1);
        [channel() as u8, channel() as u8, channel() as u8, alpha]
    }

    /// Mostly premultiplied; one in four any bytes at all, so the saturating adds saturate.
    fn pixel(&mut self) -> [u8; 4] {
        if self.chance(4) {
            [self.byte(), self.byte(), self.byte(), self.alpha()]
        } else {
            self.premultiplied()
        }
    }

    fn pixels(&mut self, count: usize) -> Vec<[u8; 4]> {
        (0..count).map(|_| self.pixel()).collect()
    }
}

/// The SIMD implementations to check: all this processor runs, apart from the scalar one.
fn simd_impls() -> Vec<AvailableImpl> {
    let simd: Vec<AvailableImpl> = available_instrs()
        .iter()
        .copied()
        .filter(|available| !matches!(available, AvailableImpl::Generic(_)))
        .collect();
    // On these architectures a SIMD path always exists (SSE4.1 since 2008, NEON always): a test
    // that compared nothing would pass without testing anything.
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert!(!simd.is_empty(), "no SIMD implementation on this processor: nothing compared");
    }
    simd
}

/// One span's inputs for every primitive.
struct SpanCase {
    src: Vec<[u8; 4]>,
    dst: Vec<[u8; 4]>,
    one_src: [u8; 4],
    tint: [u8; 4],
    tints: Vec<[u8; 4]>,
}

/// What every primitive made of a `SpanCase`.
struct SpanResults {
    /// Each primitive's name and pixels.
    spans: [(&'static str, Vec<[u8; 4]>); 6],
    /// How many times the tint function was called (once a pixel, whatever the vector width).
    tint_fn_calls: usize,
}

impl SpanResults {
    /// The first primitive and pixel where `self` and `scalar` differ, said in a line.
    fn difference(&self, scalar: &SpanResults) -> Option<String> {
        if self.tint_fn_calls != scalar.tint_fn_calls {
            return Some(format!(
                "the tint function ran {} times, {} in the scalar code",
                self.tint_fn_calls, scalar.tint_fn_calls
            ));
        }
        self.spans.iter().zip(&scalar.spans).find_map(|((name, vector), (_, scalar))| {
            let index = vector.iter().zip(scalar).position(|(v, s)| v != s)?;
            Some(format!(
                "{name}: pixel {index} is {:?}, scalar {:?}",
                vector[index], scalar[index]
            ))
        })
    }
}

fn run_primitives<S: SelectedImpl>(simd: S, case: &SpanCase) -> SpanResults {
    simd.dispatch(|simd| {
        let mut blend_slice = case.dst.clone();
        simd.egui_blend_u8_slice(&case.src, &mut blend_slice);
        let mut blend_slice_one_src = case.dst.clone();
        simd.egui_blend_u8_slice_one_src(case.one_src, &mut blend_slice_one_src);
        let mut blend_slice_tinted = case.dst.clone();
        simd.egui_blend_u8_slice_tinted(&case.src, case.tint, &mut blend_slice_tinted);
        let mut blend_slice_one_src_tinted_fn = case.dst.clone();
        let mut tint_fn_calls = 0;
        let tint_fn = || {
            let tint = case.tints.get(tint_fn_calls).copied().unwrap_or([255; 4]);
            tint_fn_calls += 1;
            tint
        };
        simd.egui_blend_u8_slice_one_src_tinted_fn(
            case.one_src,
            tint_fn,
            &mut blend_slice_one_src_tinted_fn,
        );
        let pairs = case.src.iter().zip(&case.dst);
        let blend = pairs.clone().map(|(src, dst)| simd.egui_blend_u8(*src, *dst)).collect();
        let unorm_mult = pairs.map(|(a, b)| simd.unorm_mult4x4(*a, *b)).collect();
        SpanResults {
            spans: [
                ("egui_blend_u8_slice", blend_slice),
                ("egui_blend_u8_slice_one_src", blend_slice_one_src),
                ("egui_blend_u8_slice_tinted", blend_slice_tinted),
                ("egui_blend_u8_slice_one_src_tinted_fn", blend_slice_one_src_tinted_fn),
                ("egui_blend_u8", blend),
                ("unorm_mult4x4", unorm_mult),
            ],
            tint_fn_calls,
        }
    })
}

#[test]
fn simd_blend_primitives_match_the_scalar_ones_on_random_spans() {
    let simd = simd_impls();
    for seed in 0..3000 {
        let mut rng = Rng::new(seed);
        let len = rng.below(20) as usize;
        let case = SpanCase {
            src: rng.pixels(len),
            dst: rng.pixels(len),
            one_src: rng.pixel(),
            tint: rng.pixel(),
            tints: rng.pixels(len),
        };
        let scalar = run_primitives(GenericImpl, &case);
        assert_eq!(scalar.tint_fn_calls, len, "the scalar tint function runs once a pixel");
        for available in &simd {
            let vector = crate::dispatch_simd_impl!(*available, |simd| run_primitives(simd, &case));
            if let Some(difference) = vector.difference(&scalar) {
                panic!(
                    "{available} differs from the scalar code on seed {seed} ({len} pixels): \
                     {difference}; inputs: src {:?}, dst {:?}, one_src {:?}, tint {:?}, \
                     tints {:?}",
                    case.src, case.dst, case.one_src, case.tint, case.tints
                );
            }
        }
    }
}

/// A scene: a random texture and three frames of random meshes on a random background.
struct Scene {
    width: usize,
    height: usize,
    pixels_per_point: f32,
    order: ColorFieldOrder,
    background: Vec<[u8; 4]>,
    texture: ImageDelta,
    frames: Vec<Vec<ClippedPrimitive>>,
}

const TEXTURE: TextureId = TextureId::Managed(0);

fn color(rgba: [u8; 4]) -> Color32 {
    Color32::from_rgba_premultiplied(rgba[0], rgba[1], rgba[2], rgba[3])
}

impl Scene {
    fn random(rng: &mut Rng) -> Scene {
        let width = 40 + rng.below(260) as usize;
        let height = 30 + rng.below(200) as usize;
        let pixels_per_point = [1.0, 1.25, 1.5, 2.0][rng.below(4) as usize];
        let order = if rng.chance(2) { ColorFieldOrder::Rgba } else { ColorFieldOrder::Bgra };
        // Opaque as a window's clear colour is, or not, so the blit's blends do something.
        let background = if rng.chance(2) {
            let opaque = [rng.byte(), rng.byte(), rng.byte(), 255];
            vec![opaque; width * height]
        } else {
            rng.pixels(width * height)
        };
        // Like egui's font atlas: an opaque white texel at (0, 0) for untextured shapes.
        let size = [8 + rng.below(56) as usize, 8 + rng.below(56) as usize];
        let mut texels: Vec<Color32> =
            (0..size[0] * size[1]).map(|_| color(rng.premultiplied())).collect();
        texels[0] = Color32::WHITE;
        let options = if rng.chance(2) { TextureOptions::LINEAR } else { TextureOptions::NEAREST };
        let texture = ImageDelta::full(ColorImage::new(size, texels), options);
        let screen = egui::vec2(width as f32, height as f32) / pixels_per_point;
        let mut frames = Vec::new();
        let mut previous: Vec<ClippedPrimitive> = Vec::new();
        for _ in 0..3 {
            // Most primitives stay from one frame to the next (the cache keeps them), some go,
            // some come.
            let mut frame: Vec<ClippedPrimitive> =
                previous.iter().filter(|_| !rng.chance(3)).cloned().collect();
            for _ in 0..1 + rng.below(8) {
                frame.extend(random_primitive(rng, screen));
            }
            previous = frame.clone();
            frames.push(frame);
        }
        Scene { width, height, pixels_per_point, order, background, texture, frames }
    }

    /// Each frame as `simd` draws it, cleared to the background first as askpane's window does.
    fn render(&self, simd: AvailableImpl, caching: bool, raster_opt: bool) -> Vec<Vec<[u8; 4]>> {
        let mut renderer = EguiSoftwareRender::new(self.order)
            .with_caching(caching)
            .with_allow_raster_opt(raster_opt);
        renderer.simd_impl = simd;
        self.frames
            .iter()
            .enumerate()
            .map(|(index, primitives)| {
                let mut textures = egui::TexturesDelta::default();
                if index == 0 {
                    textures.set.entry(TEXTURE).or_default().push(self.texture.clone());
                }
                let mut pixels = self.background.clone();
                let mut target = BufferMutRef::new(&mut pixels, self.width, self.height);
                renderer.render(&mut target, primitives, &textures, self.pixels_per_point);
                // Applied (egui checks that no delta is dropped unapplied).
                textures.clear();
                pixels
            })
            .collect()
    }
}

/// A point on the screen or a little off it, on whole, half or any points.
fn random_point(rng: &mut Rng, screen: egui::Vec2) -> Pos2 {
    let mut coordinate = |extent: f32| {
        let value = rng.unit() * (extent * 1.2) - extent * 0.1;
        match rng.below(3) {
            0 => value.round(),
            1 => (value * 2.0).round() / 2.0,
            _ => value,
        }
    };
    egui::pos2(coordinate(screen.x), coordinate(screen.y))
}

fn random_uv(rng: &mut Rng) -> Pos2 {
    egui::pos2(rng.unit(), rng.unit())
}

/// One mesh of quads (the rectangle rasterizer's case: two triangles on a box's corners, each
/// followed by more triangles) and triangles, under a clip rectangle. The clip rectangle may be
/// empty or the mesh wholly outside it, which egui's tessellator leaves out but which must draw
/// nothing (not panic: see ASKPANE.md).
fn random_primitive(rng: &mut Rng, screen: egui::Vec2) -> Option<ClippedPrimitive> {
    let mut mesh = Mesh::with_texture(TEXTURE);
    for _ in 0..1 + rng.below(12) {
        let first = mesh.vertices.len() as u32;
        if rng.chance(2) {
            let (a, b) = (random_point(rng, screen), random_point(rng, screen));
            let (min, max) = (a.min(b), a.max(b));
            let fill = color(rng.premultiplied());
            let (uv_min, uv_max) = match rng.below(3) {
                // Untextured: egui's white texel.
                0 => (Pos2::ZERO, Pos2::ZERO),
                // One texel all over.
                1 => {
                    let uv = random_uv(rng);
                    (uv, uv)
                }
                // An image or a glyph.
                _ => {
                    let (a, b) = (random_uv(rng), random_uv(rng));
                    (a.min(b), a.max(b))
                }
            };
            for (pos, uv) in [
                (min, uv_min),
                (egui::pos2(max.x, min.y), egui::pos2(uv_max.x, uv_min.y)),
                (egui::pos2(min.x, max.y), egui::pos2(uv_min.x, uv_max.y)),
                (max, uv_max),
            ] {
                mesh.vertices.push(Vertex { pos, uv, color: fill });
            }
            mesh.indices.extend([first, first + 1, first + 2, first + 2, first + 1, first + 3]);
        } else {
            let shared = color(rng.premultiplied());
            let varying_colours = rng.chance(2);
            let uv = match rng.below(3) {
                0 => None,
                1 => Some(Pos2::ZERO),
                _ => Some(random_uv(rng)),
            };
            for _ in 0..3 {
                let pos = random_point(rng, screen);
                let color = if varying_colours { color(rng.premultiplied()) } else { shared };
                let uv = uv.unwrap_or_else(|| random_uv(rng));
                mesh.vertices.push(Vertex { pos, uv, color });
            }
            mesh.indices.extend([first, first + 1, first + 2]);
        }
    }
    // Within the screen, as egui's are; the meshes themselves may reach past it.
    let on_screen = Rect::from_min_size(Pos2::ZERO, screen);
    let clip_rect = if rng.chance(3) {
        on_screen
    } else {
        Rect::from_two_pos(random_point(rng, screen), random_point(rng, screen))
            .intersect(on_screen)
    };
    Some(ClippedPrimitive { clip_rect, primitive: Primitive::Mesh(mesh) })
}

/// Where two frames first differ, said in a line.
fn first_difference(vector: &[[u8; 4]], scalar: &[[u8; 4]], width: usize) -> Option<String> {
    let index = vector.iter().zip(scalar).position(|(v, s)| v != s)?;
    let differing = vector.iter().zip(scalar).filter(|(v, s)| v != s).count();
    Some(format!(
        "{differing} pixels differ, the first at ({}, {}): {:?}, scalar {:?}",
        index % width,
        index / width,
        vector[index],
        scalar[index]
    ))
}

#[test]
fn simd_rendering_matches_the_scalar_rendering_on_random_meshes() {
    let simd = simd_impls();
    let scalar_impl = AvailableImpl::Generic(GenericImpl);
    let (mut frames, mut drawn) = (0, 0);
    for seed in 0..60 {
        let scene = Scene::random(&mut Rng::new(seed));
        for (caching, raster_opt) in [(true, true), (false, true), (false, false)] {
            let scalar = scene.render(scalar_impl, caching, raster_opt);
            frames += scalar.len();
            drawn += scalar.iter().filter(|frame| **frame != scene.background).count();
            for available in &simd {
                let vector = scene.render(*available, caching, raster_opt);
                for (frame, (vector, scalar)) in vector.iter().zip(&scalar).enumerate() {
                    if let Some(difference) = first_difference(vector, scalar, scene.width) {
                        panic!(
                            "{available} draws frame {frame} of seed {seed} ({}×{}, caching \
                             {caching}, raster shortcuts {raster_opt}) unlike the scalar code: \
                             {difference}",
                            scene.width, scene.height
                        );
                    }
                }
            }
        }
    }
    // Identical because nothing was drawn would prove nothing.
    assert!(drawn * 10 >= frames * 9, "only {drawn} of {frames} frames drew anything");
}
