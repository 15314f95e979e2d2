//! Text put inside markup: one escaper for every place askpane writes text it did not choose (an
//! agent's title, a project's name, a path) into HTML (a chat message), Pango or a notification
//! body (the status bar, the desktop notice) or XML (a launchd plist).

/// `text` as character data in any of those markups: its five special characters as entities.
///
/// The apostrophe is written `&#39;`, a numeric reference every one of them reads (HTML 4 has no
/// `&apos;`); quotes are escaped too, so the result is safe in an attribute's value as well.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn the_five_special_characters_become_entities_and_nothing_else_changes() {
        assert_eq!(
            escape(r#"<b>Tom & "Jerry"</b> isn't 日本語 @room"#),
            "&lt;b&gt;Tom &amp; &quot;Jerry&quot;&lt;/b&gt; isn&#39;t 日本語 @room"
        );
    }

    #[test]
    fn an_entity_in_the_text_is_shown_as_typed_not_read() {
        assert_eq!(escape("&amp; &#x3C;"), "&amp;amp; &amp;#x3C;");
    }
}
