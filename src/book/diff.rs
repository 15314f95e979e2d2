//! Line diffs for the approval card (issue 26): an Edit, MultiEdit, Write or NotebookEdit shown as
//! a unified diff with context, as `git diff` shows it, its lines numbered when the change was
//! placed in the file on disk. Computed once when a card arrives (never per frame) and bounded:
//! at most [`MAX_SHOWN_LINES`] lines of at most [`MAX_LINE_CHARS`] characters are kept, the rest
//! counted ("… N more lines"), so a 5 MB file or a 100 000-line Write cannot stall a frame.
//!
//! Every kept line is inert text (`protocol::text::reveal_controls`): an ANSI escape or a U+202E
//! in a file is drawn as `<U+001B>`, `<U+202E>`, never obeyed.

use std::fmt::Write as _;

use similar::{Algorithm, DiffTag, capture_diff_slices, group_diff_ops};

use crate::protocol::text::{Breaks, reveal_controls};

/// Unchanged lines shown around each change (diff's and git's default).
pub const CONTEXT_LINES: usize = 3;
/// Lines of a diff kept for the card; the rest are counted in [`Diff::more_lines`].
pub const MAX_SHOWN_LINES: usize = 2_000;
/// Characters of one line kept; the rest are counted on the line ([`DiffLine::cut`]).
pub const MAX_LINE_CHARS: usize = 400;

/// What a line of a diff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// A hunk's header (`@@ -1,3 +1,4 @@`), or a file's name in a diff of several files.
    Header,
    Context,
    Removed,
    Added,
}

impl LineKind {
    /// The mark a unified diff puts before such a line.
    pub fn mark(self) -> &'static str {
        match self {
            LineKind::Header => "",
            LineKind::Context => " ",
            LineKind::Removed => "-",
            LineKind::Added => "+",
        }
    }
}

/// One line of a diff as the card shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// Its number in the old text and in the new one (from 1), when the diff is numbered and the
    /// line is in that text.
    pub old: Option<usize>,
    pub new: Option<usize>,
    /// The line, inert and cut to [`MAX_LINE_CHARS`] characters.
    pub text: String,
    /// Characters of the line that were cut off.
    pub cut: usize,
}

/// Whether a diff's lines get numbers: only when they are the file's own lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// The old text is the file on disk (or one cell of it): numbers are its lines'.
    File,
    /// Two strings alone, placed nowhere: numbers would mislead.
    None,
}

/// A unified diff, bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    pub lines: Vec<DiffLine>,
    /// Lines of the diff not kept (past [`MAX_SHOWN_LINES`]).
    pub more_lines: usize,
    /// Lines added and removed in all, kept or not.
    pub added: usize,
    pub removed: usize,
}

/// `text` as lines: split at `\n` (a final one ends the last line, it does not start another).
/// A `\r` stays on its line so that CRLF → LF is a change, and is dropped when shown.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.is_empty() || text.ends_with('\n') {
        lines.pop();
    }
    lines
}

impl Diff {
    /// The diff from `old` to `new`.
    pub fn between(old: &str, new: &str, numbering: Numbering) -> Diff {
        let mut diff = Diff::default();
        diff.append(old, new, numbering);
        diff
    }

    /// Adds the diff from `old` to `new` after what is there (a MultiEdit's next edit).
    pub fn append(&mut self, old: &str, new: &str, numbering: Numbering) {
        let old_lines = split_lines(old);
        let new_lines = split_lines(new);
        let ops = capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines);
        let numbered = numbering == Numbering::File;
        for group in group_diff_ops(ops, CONTEXT_LINES) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            self.push_header(format!(
                "@@ -{} +{} @@",
                hunk_range(&old_range),
                hunk_range(&new_range)
            ));
            for op in &group {
                let (tag, old_range, new_range) = op.as_tag_tuple();
                let number = |index: usize| numbered.then_some(index + 1);
                match tag {
                    DiffTag::Equal => {
                        for (old_index, new_index) in old_range.zip(new_range) {
                            let text = old_lines.get(old_index).copied().unwrap_or_default();
                            self.push(
                                LineKind::Context,
                                number(old_index),
                                number(new_index),
                                text,
                            );
                        }
                    }
                    DiffTag::Delete | DiffTag::Replace | DiffTag::Insert => {
                        for old_index in old_range {
                            let text = old_lines.get(old_index).copied().unwrap_or_default();
                            self.push(LineKind::Removed, number(old_index), None, text);
                        }
                        for new_index in new_range {
                            let text = new_lines.get(new_index).copied().unwrap_or_default();
                            self.push(LineKind::Added, None, number(new_index), text);
                        }
                    }
                }
            }
        }
    }

    /// A unified diff someone else wrote (Codex's file changes): its lines classified by their
    /// marks, unnumbered, bounded like the others.
    pub fn from_unified(text: &str) -> Diff {
        let mut diff = Diff::default();
        for line in split_lines(text) {
            let (kind, rest) = match line.chars().next() {
                _ if line.starts_with("+++") || line.starts_with("---") => (LineKind::Header, line),
                _ if line.starts_with("@@") => (LineKind::Header, line),
                Some('+') => (LineKind::Added, line.get(1..).unwrap_or_default()),
                Some('-') => (LineKind::Removed, line.get(1..).unwrap_or_default()),
                Some(' ') => (LineKind::Context, line.get(1..).unwrap_or_default()),
                // Codex's own lines: a file's name, "(new file)", "a → b".
                _ => (LineKind::Header, line),
            };
            diff.push(kind, None, None, rest);
        }
        diff
    }

    /// Nothing changes.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.more_lines == 0
    }

    /// A header line of one's own: a file's name, an edit's number.
    pub fn push_header(&mut self, text: String) {
        self.push(LineKind::Header, None, None, &text);
    }

    fn push(&mut self, kind: LineKind, old: Option<usize>, new: Option<usize>, text: &str) {
        match kind {
            LineKind::Added => self.added += 1,
            LineKind::Removed => self.removed += 1,
            LineKind::Header | LineKind::Context => {}
        }
        if self.lines.len() >= MAX_SHOWN_LINES {
            self.more_lines += 1;
            return;
        }
        let (text, cut) = shown_line(text);
        self.lines.push(DiffLine { kind, old, new, text, cut });
    }

    /// The diff as unified-diff text (what the tests compare, and what Copy would give).
    pub fn unified(&self) -> String {
        let mut text = String::new();
        for line in &self.lines {
            let _ = write!(text, "{}{}", line.kind.mark(), line.text);
            if line.cut > 0 {
                let _ = write!(text, "… ({} more characters)", line.cut);
            }
            text.push('\n');
        }
        if self.more_lines > 0 {
            let _ = writeln!(text, "… {} more lines", self.more_lines);
        }
        text
    }
}

/// A hunk's range as a unified diff writes it: `start,count`, or `start` for one line, where an
/// empty range starts at the line before it.
fn hunk_range(range: &std::ops::Range<usize>) -> String {
    match range.len() {
        0 => format!("{},0", range.start),
        1 => format!("{}", range.start + 1),
        count => format!("{},{count}", range.start + 1),
    }
}

/// One line as shown: without its `\r`, inert, cut to [`MAX_LINE_CHARS`] characters.
fn shown_line(line: &str) -> (String, usize) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let kept: String = line.chars().take(MAX_LINE_CHARS).collect();
    let cut = line.chars().count().saturating_sub(MAX_LINE_CHARS);
    (reveal_controls(&kept, Breaks::Reveal).into_owned(), cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_in_the_middle_of_a_file_has_three_lines_of_context_and_its_numbers() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let diff = Diff::between(old, new, Numbering::File);
        assert_eq!(diff.unified(), "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
        let changed: Vec<_> = diff.lines.iter().map(|line| (line.old, line.new)).collect();
        assert_eq!(changed.get(4), Some(&(Some(5), None)));
        assert_eq!(changed.get(5), Some(&(None, Some(5))));
        assert_eq!((diff.added, diff.removed), (1, 1));
    }

    #[test]
    fn two_strings_alone_are_unnumbered() {
        let diff = Diff::between("let a = 1;\n", "let a = 2;\nlet b = 3;", Numbering::None);
        assert_eq!(diff.unified(), "@@ -1 +1,2 @@\n-let a = 1;\n+let a = 2;\n+let b = 3;\n");
        assert!(diff.lines.iter().all(|line| line.old.is_none() && line.new.is_none()));
    }

    #[test]
    fn a_new_file_is_all_added_lines() {
        let diff = Diff::between("", "a\nb\n", Numbering::File);
        assert_eq!(diff.unified(), "@@ -0,0 +1,2 @@\n+a\n+b\n");
    }

    #[test]
    fn far_apart_changes_are_two_hunks() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new: String = (1..=20)
            .map(|n| match n {
                2 => "two\n".to_owned(),
                19 => "nineteen\n".to_owned(),
                n => format!("{n}\n"),
            })
            .collect();
        let diff = Diff::between(&old, &new, Numbering::File);
        assert_eq!(
            diff.unified(),
            "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n\
             @@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"
        );
    }

    #[test]
    fn a_huge_write_keeps_its_first_lines_and_counts_the_rest() {
        let content: String = (0..100_000).map(|n| format!("line {n}\n")).collect();
        let diff = Diff::between("", &content, Numbering::File);
        assert_eq!(diff.lines.len(), MAX_SHOWN_LINES);
        // The hunk header is one of the kept lines.
        assert_eq!(diff.more_lines, 100_000 + 1 - MAX_SHOWN_LINES);
        assert_eq!(diff.added, 100_000);
        assert!(diff.unified().ends_with("… 98001 more lines\n"), "{}", diff.unified().len());
    }

    #[test]
    fn a_long_line_is_cut_and_says_how_much() {
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        let diff = Diff::between("", &long, Numbering::None);
        let line = diff.lines.get(1).expect("the added line");
        assert_eq!(line.cut, 5);
        assert_eq!(line.text.chars().count(), MAX_LINE_CHARS);
        assert!(diff.unified().ends_with("… (5 more characters)\n"));
    }

    #[test]
    fn escapes_and_bidi_overrides_are_shown_not_obeyed() {
        let diff = Diff::between("", "\u{1b}[31mred\r\nevil\u{202e}txt\n", Numbering::None);
        assert_eq!(diff.unified(), "@@ -0,0 +1,2 @@\n+<U+001B>[31mred\n+evil<U+202E>txt\n");
    }

    #[test]
    fn crlf_to_lf_is_a_change() {
        let diff = Diff::between("a\r\n", "a\n", Numbering::File);
        assert_eq!((diff.added, diff.removed), (1, 1));
    }

    #[test]
    fn codex_diffs_are_classified_by_their_marks() {
        let diff = Diff::from_unified("src/a.rs\n@@ -1 +1 @@\n-old\n+new\n ctx\n");
        let kinds: Vec<LineKind> = diff.lines.iter().map(|line| line.kind).collect();
        use LineKind::*;
        assert_eq!(kinds, [Header, Header, Removed, Added, Context]);
        assert_eq!(diff.unified(), "src/a.rs\n@@ -1 +1 @@\n-old\n+new\n ctx\n");
    }
}
