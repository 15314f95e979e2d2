//! Agent text as a person sees it: which characters are there but unseen (bidi controls that
//! reorder a line, zero-width and filler characters), how to show them, and when two labels look
//! the same (issue 24: "Yes", "Y\u{435}s" with a Cyrillic e, "Yes\u{200B}" and "Yes " were shown as
//! identical choices).
//!
//! Pure: the comparison's Unicode data comes from unicode-rs crates (NFKC, UTS #39 skeletons),
//! which are data and rules, no IO. It is compiled natively only: every question is validated by
//! a native askpane before any page sees it, and the tables would weigh on the web app.

use std::borrow::Cow;

/// True for a character a terminal or a window draws as nothing, or that reorders the text around
/// it: the bidi controls, zero-width spaces and joiners that carry no script's meaning, invisible
/// operators, the byte-order mark, Hangul fillers, and the line and paragraph separators.
/// (ZWJ, ZWNJ, variation selectors and tags are left alone: emoji and scripts need them.)
pub fn is_hidden(character: char) -> bool {
    matches!(
        character,
        '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{3164}'
            | '\u{FEFF}'
            | '\u{FFA0}'
    )
}

/// `text` with every hidden character ([`is_hidden`]) written out as `<U+202E>`: what a terminal
/// prints and the window draws, so nothing reorders the line or hides in it. Borrowed when there
/// is nothing to write out.
pub fn reveal_hidden(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for character in text.chars() {
        match is_hidden(character) {
            true => shown.push_str(&format!("<U+{:04X}>", u32::from(character))),
            false => shown.push(character),
        }
    }
    Cow::Owned(shown)
}

/// Where a text's line breaks go when it is made inert ([`reveal_controls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breaks {
    /// Kept: a command or a file's content, shown over several lines.
    Keep,
    /// Written out too: a path or a URL, which is one line.
    Reveal,
}

/// `text` as inert, visible text (issue 26, the approval card): what [`reveal_hidden`] writes out,
/// and every control character too (C0, DEL, C1: an ANSI escape's ESC, a carriage return, a NUL)
/// as `<U+001B>`. Tabs are kept; line feeds as `breaks` says. Borrowed when nothing changes.
pub fn reveal_controls(text: &str, breaks: Breaks) -> Cow<'_, str> {
    let shown = |character: char| match character {
        '\t' => true,
        '\n' => breaks == Breaks::Keep,
        _ => !character.is_control() && !is_hidden(character),
    };
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut inert = String::with_capacity(text.len() + 16);
    for character in text.chars() {
        match shown(character) {
            true => inert.push(character),
            false => inert.push_str(&format!("<U+{:04X}>", u32::from(character))),
        }
    }
    Cow::Owned(inert)
}

/// The form in which two labels are compared: NFKC, without the characters Unicode says to
/// ignore when drawing, trimmed, and with look-alike letters of other scripts folded together
/// (UTS #39's skeleton). Two labels with the same key look the same to a person.
#[cfg(not(target_arch = "wasm32"))]
pub fn lookalike_key(label: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let visible: String = label.nfkc().filter(|&character| !is_ignorable(character)).collect();
    unicode_security::confusable_detection::skeleton(visible.trim()).collect()
}

/// Exact comparison where the Unicode tables are not compiled in (the web app: see the module
/// docs).
#[cfg(target_arch = "wasm32")]
pub fn lookalike_key(label: &str) -> String {
    label.to_owned()
}

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, stable since 2011): drawn
/// as nothing when a font has no glyph for it.
#[cfg(not(target_arch = "wasm32"))]
fn is_ignorable(character: char) -> bool {
    matches!(
        character,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_written_out_and_plain_text_is_borrowed() {
        assert!(matches!(reveal_hidden("Yes, ship it 🚀"), Cow::Borrowed(_)));
        assert_eq!(reveal_hidden("abc\u{202E}fed\u{2066}x"), "abc<U+202E>fed<U+2066>x");
        assert_eq!(reveal_hidden("Yes\u{200B}"), "Yes<U+200B>");
        // An emoji family (ZWJ) and a heart with its variation selector stay as they are.
        assert_eq!(
            reveal_hidden("👨\u{200D}👩\u{200D}👧 ❤\u{FE0F}"),
            "👨\u{200D}👩\u{200D}👧 ❤\u{FE0F}"
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn labels_that_look_the_same_have_one_key() {
        let yes = lookalike_key("Yes");
        for twin in ["Y\u{0435}s", "Yes\u{200B}", "Yes ", " Yes", "Ｙｅｓ", "Y\u{202E}es\u{202C}"]
        {
            assert_eq!(lookalike_key(twin), yes, "{twin:?}");
        }
        // NFD and NFC forms of one word.
        assert_eq!(lookalike_key("Cafe\u{0301}"), lookalike_key("Caf\u{00E9}"));
        for other in ["No", "yes", "Yes!", "Yes, now"] {
            assert_ne!(lookalike_key(other), yes, "{other:?}");
        }
    }
}
