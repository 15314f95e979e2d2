//! Design tokens: every colour and size the view uses, for the dark and the light theme.
//!
//! The view asks for a [`Tokens`] value and never names a colour itself, so both themes stay in
//! step. [`install`] applies the shared sizes to both styles; the desktop's own preference is
//! read by [`theme_from_portal`] / [`theme_from_gsettings`] where the window system reports none
//! (X11).

use egui::{
    Color32, Context, FallbackRequest, FontFamily, FontId, FontInsert, FontPriority, FontProvider,
    InsertFontFamily, TextStyle, Theme,
};

/// Colours and sizes for one theme.
#[derive(Clone, Copy, Debug)]
pub struct Tokens {
    /// Selected rows, the current tab, the primary button.
    pub accent: Color32,
    /// Text drawn on `accent`.
    pub on_accent: Color32,
    /// Background of an option row under the keyboard cursor or the pointer.
    pub row_hover: Color32,
    /// Background of a chosen option row.
    pub row_chosen: Color32,
    /// The "Recommended" badge.
    pub badge_fill: Color32,
    pub badge_text: Color32,
    /// The header chip beside the question.
    pub chip_fill: Color32,
    pub chip_text: Color32,
    /// Soft warnings about the input, and unanswered questions on Review.
    pub warning: Color32,
    pub warning_fill: Color32,
    /// Answered marks (✔) and the sent receipt.
    pub success: Color32,
    /// Secondary text: descriptions, provenance, hints.
    pub muted: Color32,
    /// The preview box and the reply JSON.
    pub code_fill: Color32,
    pub code_stroke: Color32,
    /// A diff's added and removed lines, on `code_fill` (the approval card, issue 26).
    pub diff_added: Color32,
    pub diff_removed: Color32,
}

/// Sizes shared by both themes.
pub mod size {
    /// The question text.
    pub const QUESTION: f32 = 18.0;
    pub const BODY: f32 = 14.5;
    pub const SMALL: f32 = 12.0;
    pub const MONOSPACE: f32 = 13.0;
    /// Corner radius of rows, chips, boxes.
    pub const RADIUS: u8 = 6;
    /// Inner margin of an option row.
    pub const ROW_PADDING: i8 = 8;
    /// Left indent of an option's description and of the Other box: past the indicator.
    pub const DESCRIPTION_INDENT: i8 = 26;
    /// Vertical gap between option rows.
    pub const ROW_GAP: f32 = 4.0;
    /// Diameter of the radio / side of the checkbox drawn in a row.
    pub const INDICATOR: f32 = 16.0;
    /// Width of the question list when a preview sits beside it, as a share of the page (the
    /// user can drag it; it keeps the share when the window is resized).
    pub const PREVIEW_SPLIT: f32 = 0.42;
    /// The narrowest the options and the preview get beside each other.
    pub const SPLIT_MIN_OPTIONS: f32 = 220.0;
    pub const SPLIT_MIN_PREVIEW: f32 = 160.0;
    /// Width of the handle between them.
    pub const SPLIT_HANDLE: f32 = 10.0;
    /// The request list, shown when several requests wait.
    pub const REQUEST_LIST_WIDTH: f32 = 200.0;
    /// Longest header shown in full on a chip; longer ones are cut with "…" (full text on hover).
    pub const CHIP_CHARS: usize = 12;
    /// Height of the Other and note boxes, in rows.
    pub const TEXT_ROWS: usize = 2;
    /// Below this width (points, CSS pixels in a browser) the page is one column: a phone.
    pub const NARROW_WIDTH: f32 = 600.0;
    /// The smallest a control gets on a touch screen: a finger's tap target (44 CSS px, Apple's
    /// and the WCAG 2.5.5 figure).
    pub const TAP_TARGET: f32 = 44.0;
}

/// Sizes for a finger instead of a mouse (issue 11: answering from a phone): taller controls,
/// more room between them. Applied and taken back by [`fit_for_touch`]; only the sizes change.
fn touch_sizes(style: &mut egui::Style, touch: bool) {
    let spacing = &mut style.spacing;
    match touch {
        true => {
            spacing.item_spacing = egui::vec2(10.0, 10.0);
            spacing.button_padding = egui::vec2(14.0, 12.0);
            spacing.interact_size.y = size::TAP_TARGET;
            spacing.icon_width = 22.0;
            spacing.icon_width_inner = 12.0;
        }
        false => {
            let default = egui::Spacing::default();
            spacing.item_spacing = egui::vec2(8.0, 6.0);
            spacing.button_padding = egui::vec2(10.0, 4.0);
            spacing.interact_size.y = 24.0;
            spacing.icon_width = default.icon_width;
            spacing.icon_width_inner = default.icon_width_inner;
        }
    }
}

fn touch_sizes_id() -> egui::Id {
    egui::Id::unique("askpane-touch-sizes")
}

/// True when controls are a finger's size ([`fit_for_touch`]).
pub fn touch_sized(ctx: &Context) -> bool {
    ctx.data(|data| data.get_temp::<bool>(touch_sizes_id())).unwrap_or(false)
}

/// Makes every control a finger's size (`touch`) or a mouse's; does nothing when it already is.
pub fn fit_for_touch(ctx: &Context, touch: bool) {
    let id = touch_sizes_id();
    if ctx.data(|data| data.get_temp::<bool>(id)) == Some(touch) {
        return;
    }
    ctx.data_mut(|data| data.insert_temp(id, touch));
    ctx.all_styles_mut(|style| touch_sizes(style, touch));
}

impl Tokens {
    pub fn for_theme(theme: Theme) -> Self {
        match theme {
            Theme::Dark => Tokens {
                accent: Color32::from_rgb(0x6c, 0x9e, 0xff),
                on_accent: Color32::from_rgb(0x0b, 0x12, 0x20),
                row_hover: Color32::from_rgb(0x2a, 0x2f, 0x38),
                row_chosen: Color32::from_rgb(0x1f, 0x33, 0x55),
                badge_fill: Color32::from_rgb(0x1d, 0x4d, 0x33),
                badge_text: Color32::from_rgb(0x9b, 0xe8, 0xb4),
                chip_fill: Color32::from_rgb(0x33, 0x38, 0x44),
                chip_text: Color32::from_rgb(0xd6, 0xdb, 0xe4),
                warning: Color32::from_rgb(0xf2, 0xc1, 0x4e),
                warning_fill: Color32::from_rgb(0x3d, 0x32, 0x14),
                success: Color32::from_rgb(0x6f, 0xd3, 0x8d),
                muted: Color32::from_rgb(0x9a, 0xa3, 0xb2),
                code_fill: Color32::from_rgb(0x16, 0x19, 0x1f),
                code_stroke: Color32::from_rgb(0x3a, 0x40, 0x4c),
                diff_added: Color32::from_rgb(0x6f, 0xd3, 0x8d),
                diff_removed: Color32::from_rgb(0xf4, 0x87, 0x87),
            },
            Theme::Light => Tokens {
                accent: Color32::from_rgb(0x1f, 0x5f, 0xd6),
                on_accent: Color32::WHITE,
                row_hover: Color32::from_rgb(0xee, 0xf1, 0xf6),
                row_chosen: Color32::from_rgb(0xdc, 0xe8, 0xfd),
                badge_fill: Color32::from_rgb(0xd8, 0xf3, 0xe1),
                badge_text: Color32::from_rgb(0x15, 0x63, 0x34),
                chip_fill: Color32::from_rgb(0xe4, 0xe8, 0xef),
                chip_text: Color32::from_rgb(0x2c, 0x33, 0x40),
                warning: Color32::from_rgb(0x8a, 0x5a, 0x00),
                warning_fill: Color32::from_rgb(0xfd, 0xf1, 0xd3),
                success: Color32::from_rgb(0x1c, 0x7c, 0x3e),
                muted: Color32::from_rgb(0x5d, 0x66, 0x75),
                code_fill: Color32::from_rgb(0xf6, 0xf7, 0xf9),
                code_stroke: Color32::from_rgb(0xd3, 0xd8, 0xe0),
                diff_added: Color32::from_rgb(0x1c, 0x7c, 0x3e),
                diff_removed: Color32::from_rgb(0xb4, 0x23, 0x18),
            },
        }
    }

    /// The tokens of the theme the context is showing now.
    pub fn of(ctx: &Context) -> Self {
        Tokens::for_theme(ctx.theme())
    }
}

/// The desktop's colour-scheme preference as the XDG desktop portal reports it
/// (`org.freedesktop.appearance color-scheme`, printed by `gdbus call … Settings.Read`):
/// `(<<uint32 1>>,)` prefers dark, `2` prefers light, `0` says nothing.
pub fn theme_from_portal(output: &str) -> Option<Theme> {
    let digits: String = output
        .rsplit("uint32")
        .next()
        .filter(|_| output.contains("uint32"))?
        .chars()
        .skip_while(|c| c.is_whitespace())
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.as_str() {
        "1" => Some(Theme::Dark),
        "2" => Some(Theme::Light),
        _ => None,
    }
}

/// The desktop's preference from GNOME's settings (`gsettings get org.gnome.desktop.interface
/// color-scheme`, and `gtk-theme` for desktops that only name a dark theme): `'prefer-dark'`,
/// `'prefer-light'`, or `'default'` (light, unless the GTK theme is a dark one).
pub fn theme_from_gsettings(color_scheme: &str, gtk_theme: Option<&str>) -> Option<Theme> {
    let dark_gtk_theme = gtk_theme.is_some_and(|name| name.to_lowercase().contains("dark"));
    match color_scheme.trim().trim_matches('\'') {
        "prefer-dark" => Some(Theme::Dark),
        "prefer-light" => Some(Theme::Light),
        "default" if dark_gtk_theme => Some(Theme::Dark),
        "default" => Some(Theme::Light),
        _ => None,
    }
}

/// Applies the shared sizes to both themes. Which theme shows is the composition root's choice
/// (`--theme`, the system's, the desktop's setting, else dark).
pub fn install(ctx: &Context) {
    ctx.all_styles_mut(|style| {
        style
            .text_styles
            .insert(TextStyle::Body, FontId::new(size::BODY, FontFamily::Proportional));
        style
            .text_styles
            .insert(TextStyle::Button, FontId::new(size::BODY, FontFamily::Proportional));
        style
            .text_styles
            .insert(TextStyle::Small, FontId::new(size::SMALL, FontFamily::Proportional));
        style
            .text_styles
            .insert(TextStyle::Monospace, FontId::new(size::MONOSPACE, FontFamily::Monospace));
        style
            .text_styles
            .insert(TextStyle::Heading, FontId::new(size::QUESTION, FontFamily::Proportional));
        style.spacing.item_spacing = egui::vec2(8.0, 6.0);
        style.spacing.button_padding = egui::vec2(10.0, 4.0);
        style.spacing.interact_size.y = 24.0;
        // No eased highlights: each key is one frame, not the six an 83 ms fade draws. With
        // software GL a frame of this window costs milliseconds of CPU (issue 14).
        style.animation_time = 0.0;
        // Each glyph drawn once, not at up to four sub-pixel offsets: a quarter of the glyph
        // rasterizing, most of the first frame's cost (issue 14: about 35 ms of the web app's
        // first frame), and text no blurrier.
        style.visuals.text_options.subpixel_binning = false;
        // The web page draws its glyphs unhinted (issue 30 item 5): hinting ran the fonts'
        // hinting programs in wasm compiled on first call, 36–38 ms of the page's first frame
        // (two runs of 21 cold loads each, alternating, per-load medians), for stems a little
        // crisper at a device pixel ratio of 1 and nothing at the 2 and 3 of phones, which the
        // page mostly serves. The native window, in native code, keeps it.
        style.visuals.text_options.font_hinting = !cfg!(target_arch = "wasm32");
    });
    ctx.set_fonts(font_definitions());
    // Natively, emoji in previews come from the system (colour, as in a terminal), and egui's
    // monochrome ones only where it has none (issue 24.25).
    #[cfg(not(target_arch = "wasm32"))]
    ctx.add_font_provider(std::sync::Arc::new(embedded_emoji));
    for theme in [Theme::Dark, Theme::Light] {
        let tokens = Tokens::for_theme(theme);
        ctx.style_mut_of(theme, |style| {
            style.visuals.selection.bg_fill = tokens.accent.gamma_multiply(0.45);
            // The window is cleared to the panels' colour (`background`) and the panels paint
            // nothing: with software GL every full-window fill is a pass over every pixel, and
            // the panels tile the window (issue 14: it was most of a keypress's frame).
            style.visuals.panel_fill = Color32::TRANSPARENT;
        });
    }
}

/// egui's embedded fonts, with Hack (the monospace face) after Ubuntu in the proportional family
/// too: it has the arrows of the key hints and the Back/Next buttons, which Ubuntu lacks. Drawn
/// from a fallback instead, they cost the web app's first frame about 20 ms (the browser draws
/// and reads back each one) and the native window a search of the system's fonts.
///
/// Previews get a family of their own ([`preview_family`]): the monospace one, natively without
/// egui's monochrome emoji fonts. Every family draws a character with the first of its fonts
/// that has it, and those fonts have nearly every emoji (grey silhouettes): only without them
/// does an emoji reach the system's fonts, where Noto Color Emoji is. The window's own symbols
/// (✔ ⚠ ⏱ ⚙, drawn in its colours) stay with the other families, which keep them.
pub fn font_definitions() -> egui::FontDefinitions {
    let mut definitions = egui::FontDefinitions::default();
    if let Some(proportional) = definitions.families.get_mut(&FontFamily::Proportional) {
        let after_text =
            proportional.iter().position(|font| font == "Ubuntu-Light").map_or(0, |at| at + 1);
        proportional.insert(after_text, "Hack".to_owned());
    }
    #[cfg(target_arch = "wasm32")]
    add_web_symbols(&mut definitions);
    let mut preview = definitions.families.get(&FontFamily::Monospace).cloned().unwrap_or_default();
    if cfg!(not(target_arch = "wasm32")) {
        preview.retain(|font| !EMOJI_FONTS.contains(&font.as_str()));
    }
    definitions.families.insert(preview_family(), preview);
    definitions
}

/// The web app has no emoji fonts until a text has an emoji (src/web: 740 KB fetched on first
/// use, issue 30), but the window's own symbols come from them: ✔ ⚠ from Noto Emoji, ⏱ ⚙ from
/// emoji-icon-font. Those four, subset from the same fonts (assets/web/fonts, 3 KB; made with
/// fonttools' `pyftsubset FONT --unicodes=… --notdef-outline`) and drawn at egui's sizes for
/// them, are embedded where egui puts its emoji fonts, so every frame that shows one draws it.
#[cfg(target_arch = "wasm32")]
fn add_web_symbols(definitions: &mut egui::FontDefinitions) {
    let subsets: [(&str, &'static [u8], f32); 2] = [
        (
            "askpane-symbols-noto-emoji",
            include_bytes!("../../assets/web/fonts/symbols-noto-emoji.ttf"),
            0.81,
        ),
        (
            "askpane-symbols-emoji-icon-font",
            include_bytes!("../../assets/web/fonts/symbols-emoji-icon-font.ttf"),
            0.90,
        ),
    ];
    for (name, bytes, scale) in subsets {
        let tweak = egui::FontTweak { scale, ..Default::default() };
        let data = egui::FontData::from_static(bytes).tweak(tweak);
        definitions.font_data.insert(name.to_owned(), std::sync::Arc::new(data));
        for family in [FontFamily::Proportional, FontFamily::Monospace] {
            definitions.families.entry(family).or_default().push(name.to_owned());
        }
    }
}

/// egui's monochrome emoji fonts (its `monochrome_emoji_fonts`).
const EMOJI_FONTS: [&str; 2] = ["NotoEmoji-Regular", "emoji-icon-font"];

/// The font family previews are drawn in: monospace, with colour emoji (see [`font_definitions`]).
pub fn preview_family() -> FontFamily {
    FontFamily::Name(PREVIEW_FAMILY.into())
}

const PREVIEW_FAMILY: &str = "askpane-preview";

/// The preview's monospace font: the family of [`preview_family`] at the monospace size.
pub fn preview_font() -> FontId {
    FontId::new(size::MONOSPACE, preview_family())
}

/// egui's monochrome emoji for an emoji in a preview, where no system font has it (the provider
/// installed after the system's). The other families have these fonts already.
#[cfg(not(target_arch = "wasm32"))]
fn embedded_emoji(request: &FallbackRequest<'_>) -> Option<FontInsert> {
    if *request.family != preview_family() {
        return None;
    }
    let wanted = request.cluster.chars().next()?;
    let definitions = egui::FontDefinitions::default();
    EMOJI_FONTS.iter().find_map(|name| {
        let data = definitions.font_data.get(*name)?;
        glyph_height(data.bytes(), data.index, wanted)?;
        let family = InsertFontFamily { family: preview_family(), priority: FontPriority::Lowest };
        Some(FontInsert::new(name, (**data).clone(), vec![family]))
    })
}

/// A font from `system` (the system's fonts) for a character the window's own fonts lack, made
/// to fit (issue 24.25): a preview asks for the system's monospace fonts, as a terminal would,
/// and a Thai font is drawn as large as the Latin text beside it.
pub fn system_font_for(
    system: &dyn FontProvider,
    request: &FallbackRequest<'_>,
) -> Option<FontInsert> {
    let family = match *request.family == preview_family() {
        true => &FontFamily::Monospace,
        false => request.family,
    };
    let asked = FallbackRequest { cluster: request.cluster, family };
    let mut insert = system.font_for(&asked)?;
    insert.families =
        vec![InsertFontFamily { family: request.family.clone(), priority: FontPriority::Lowest }];
    if let Some(wanted) = request.cluster.chars().next()
        && is_thai(wanted)
    {
        insert.data.tweak.scale = thai_scale(insert.data.bytes(), insert.data.index);
    }
    Some(insert)
}

fn is_thai(c: char) -> bool {
    ('\u{0E00}'..='\u{0E7F}').contains(&c)
}

/// How much larger a Thai font is drawn than its size: some Thai fonts draw their letters far
/// smaller on the em than Latin fonts do (Tlwg Typo, fontconfig's monospace Thai: บ is 0.455 em
/// tall, Hack's x 0.547), so at the same size Thai looked a size smaller than the text around
/// it. The scale makes a Thai letter without ascender or descender (บ) as tall as Hack's
/// x-height; never smaller (Loma, the sans-serif one, is 1.0), at most 1.5.
fn thai_scale(bytes: &[u8], index: u32) -> f32 {
    let hack = egui::FontDefinitions::default().font_data.get("Hack").cloned();
    let latin = hack.and_then(|hack| glyph_height(hack.bytes(), hack.index, 'x'));
    let thai = glyph_height(bytes, index, '\u{0E1A}');
    match (latin, thai) {
        (Some(latin), Some(thai)) if thai > 0.0 => (latin / thai).clamp(1.0, 1.5),
        _ => 1.0,
    }
}

/// The height of `c`'s glyph above the baseline, in ems; `None` where the font lacks it.
fn glyph_height(bytes: &[u8], index: u32, c: char) -> Option<f32> {
    use skrifa::MetadataProvider as _;
    use skrifa::instance::{LocationRef, Size};
    let font = skrifa::FontRef::from_index(bytes, index).ok()?;
    let glyph = font.charmap().map(c).filter(|glyph| *glyph != skrifa::GlyphId::NOTDEF)?;
    let units_per_em =
        f32::from(font.metrics(Size::unscaled(), LocationRef::default()).units_per_em);
    let bounds = font.glyph_metrics(Size::unscaled(), LocationRef::default()).bounds(glyph);
    // A colour emoji font has bitmaps, not outlines: the glyph is there, of no measured height.
    Some(bounds.map_or(0.0, |bounds| bounds.y_max / units_per_em.max(1.0)))
}

/// The window's background: what the panels would fill, cleared once per frame instead.
pub fn background(visuals: &egui::Visuals) -> Color32 {
    match visuals.dark_mode {
        true => egui::Visuals::dark().panel_fill,
        false => egui::Visuals::light().panel_fill,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_texts_are_drawn_by_the_embedded_fonts() {
        let ctx = Context::default();
        install(&ctx);
        ctx.run_ui(egui::RawInput::default(), |_| {}).textures_delta.clear();
        // Every symbol the view's own texts use (an agent's text may need the system's fonts).
        let fixed = [crate::view::KEY_HINT, "← Back", "Next →", "→↳·–—…“”•✔⚠⏱⚙", "╔═╗║╚╝"];
        for family in [FontFamily::Proportional, FontFamily::Monospace] {
            let font = FontId::new(size::BODY, family.clone());
            for text in fixed {
                let missing: String = text
                    .chars()
                    .filter(|c| !ctx.fonts_mut(|fonts| fonts.has_glyph(&font, *c)))
                    .collect();
                assert_eq!(missing, "", "{family:?} lacks these in {text:?}");
            }
        }
    }

    #[test]
    fn the_portals_colour_scheme() {
        assert_eq!(theme_from_portal("(<<uint32 1>>,)\n"), Some(Theme::Dark));
        assert_eq!(theme_from_portal("(<<uint32 2>>,)"), Some(Theme::Light));
        assert_eq!(theme_from_portal("(<<uint32 0>>,)"), None);
        assert_eq!(theme_from_portal("Error: no such interface"), None);
    }

    #[test]
    fn gnomes_colour_scheme_and_dark_gtk_themes() {
        assert_eq!(theme_from_gsettings("'prefer-dark'\n", None), Some(Theme::Dark));
        assert_eq!(theme_from_gsettings("'prefer-light'", None), Some(Theme::Light));
        assert_eq!(theme_from_gsettings("'default'", Some("'Adwaita'")), Some(Theme::Light));
        assert_eq!(theme_from_gsettings("'default'", Some("'Adwaita-dark'")), Some(Theme::Dark));
        assert_eq!(theme_from_gsettings("No such key", None), None);
    }
}
