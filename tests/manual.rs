//! The manual (docs/src, an mdBook, and the README, its front page) checked against itself and
//! against askpane: every relative link and `#anchor` resolves, every page is in SUMMARY.md, and
//! every `console` example runs here and prints what the manual says it prints.
//!
//! A `console` block is a shell session: lines starting with `$ ` are commands, run in order in
//! one `sh` (so `echo $?` tells the exit code of the command before it) in a scratch folder, with
//! the built askpane first on `PATH`, no display, no `ASKPANE_*` settings and a state and runtime
//! folder of the example's own; the lines after a command are what it prints (stdout and stderr
//! together). In an expected line `…` stands for any text, and a line that is only `…` for any
//! number of lines. A fenced block right after `<!-- file: NAME -->` is written to NAME in that
//! folder first (every such block of the page, before any of its examples runs).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{run_bounded, scratch_dir};

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book_source() -> PathBuf {
    repository().join("docs/src")
}

/// Every page of the book, by file name, with its text.
fn pages() -> BTreeMap<String, String> {
    let mut pages = BTreeMap::new();
    for entry in fs::read_dir(book_source()).expect("read docs/src") {
        let path = entry.expect("a docs/src entry").path();
        if path.extension().is_some_and(|extension| extension == "md") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            pages.insert(name, fs::read_to_string(&path).expect("read a page"));
        }
    }
    pages
}

/// The lines of `text` outside fenced code blocks, with their numbers from 1.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((index + 1, line));
        }
    }
    lines
}

/// `line` without its inline code spans (a link written in backticks is no link).
fn without_code_spans(line: &str) -> String {
    let mut kept = String::new();
    for (index, part) in line.split('`').enumerate() {
        if index % 2 == 0 {
            kept.push_str(part);
        }
    }
    kept
}

/// The targets of the markdown links and images on `line`: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim().to_owned());
        rest = &after[end..];
    }
    targets
}

/// The id mdBook gives a heading (mdbook-html 0.5's `id_from_content`, which GitHub's matches
/// for these headings): lower case, letters, digits, `_` and `-` kept, white space made `-`.
fn heading_id(heading: &str) -> String {
    let text: String = without_code_spans_keep_text(heading);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|ch| match ch {
            ch if ch.is_alphanumeric() || ch == '_' || ch == '-' => Some(ch),
            ch if ch.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// A heading's text as rendered: code spans keep their text (only the backticks go).
fn without_code_spans_keep_text(heading: &str) -> String {
    heading.replace('`', "")
}

/// The anchors a page has: its headings' ids (a repeated one gets `-1`, `-2`, … as mdBook
/// gives it) and any `id="…"` written in HTML.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&ch| ch == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let id = heading_id(&line[hashes..]);
            let mut unique = id.clone();
            let mut counter = 1;
            while !used.insert(unique.clone()) {
                unique = format!("{id}-{counter}");
                counter += 1;
            }
        }
        let mut rest = line;
        while let Some(start) = rest.find("id=\"") {
            let after = &rest[start + 4..];
            let Some(end) = after.find('"') else { break };
            used.insert(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    used
}

/// What is wrong with the links of `file` (its text `text`): a relative target that does not
/// exist, or an `#anchor` its target page does not have.
fn broken_links(file: &Path, text: &str) -> Vec<String> {
    let folder = file.parent().expect("a page is in a folder");
    let mut broken = Vec::new();
    for (number, line) in prose_lines(text) {
        for target in link_targets(line) {
            let external = target.contains("://") || target.starts_with("mailto:");
            if external || target.is_empty() {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() { file.to_path_buf() } else { folder.join(path) };
            let place = format!("{}:{number}", file.display());
            if !resolved.exists() {
                broken.push(format!("{place}: `{target}`: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let page = fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&page).contains(anchor) {
                    broken.push(format!("{place}: `{target}`: no heading has the id `{anchor}`"));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_of_the_manual_and_the_readme_resolves() {
    let mut broken = Vec::new();
    for (name, text) in pages() {
        broken.extend(broken_links(&book_source().join(name), &text));
    }
    let readme = repository().join("README.md");
    broken.extend(broken_links(&readme, &fs::read_to_string(&readme).expect("read README.md")));
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_manual_is_in_its_summary_and_every_entry_is_a_page() {
    let pages = pages();
    let summary = pages.get("SUMMARY.md").expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<String> =
        prose_lines(summary).into_iter().flat_map(|(_, line)| link_targets(line)).collect();
    let missing: Vec<&String> = listed.iter().filter(|name| !pages.contains_key(*name)).collect();
    assert!(missing.is_empty(), "SUMMARY.md lists pages that do not exist: {missing:?}");
    let unlisted: Vec<&String> = pages
        .keys()
        .filter(|name| name.as_str() != "SUMMARY.md" && !listed.contains(*name))
        .collect();
    assert!(
        unlisted.is_empty(),
        "pages SUMMARY.md does not list (the book leaves them out): {unlisted:?}"
    );
    for (name, text) in &pages {
        if name != "SUMMARY.md" {
            assert!(text.starts_with("# "), "{name} does not open with a `# Title` line");
        }
    }
}

/// One `console` block: where it is, and its commands with what each prints.
#[derive(Debug)]
struct Example {
    place: String,
    steps: Vec<(String, Vec<String>)>,
}

/// The `console` examples of a page, and the files (`<!-- file: NAME -->`) they use.
fn examples(name: &str, text: &str) -> (Vec<Example>, Vec<(String, String)>) {
    let lines: Vec<&str> = text.lines().collect();
    let (mut examples, mut files) = (Vec::new(), Vec::new());
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index].trim();
        let file = line
            .strip_prefix("<!-- file:")
            .and_then(|rest| rest.strip_suffix("-->"))
            .map(|file| file.trim().to_owned());
        if let Some(file) = file {
            let fence = lines.get(index + 1).map(|line| line.trim()).unwrap_or_default();
            assert!(
                fence.starts_with("```"),
                "{name}:{}: a file marker without a block",
                index + 1
            );
            let end = (index + 2..lines.len())
                .find(|&at| lines[at].trim() == "```")
                .unwrap_or_else(|| panic!("{name}:{}: a block that does not end", index + 2));
            let mut body = lines[index + 2..end].join("\n");
            body.push('\n');
            files.push((file, body));
            index = end + 1;
            continue;
        }
        if line == "```console" {
            // A block inside a list item is indented as the item is.
            let indent = lines[index].len() - lines[index].trim_start().len();
            let start = index + 1;
            let end = (start..lines.len())
                .find(|&at| lines[at].trim() == "```")
                .unwrap_or_else(|| panic!("{name}:{start}: a console block that does not end"));
            let mut steps: Vec<(String, Vec<String>)> = Vec::new();
            for line in &lines[start..end] {
                let line = line.strip_prefix(&" ".repeat(indent)).unwrap_or(line.trim_start());
                match line.strip_prefix("$ ") {
                    Some(command) => steps.push((command.to_owned(), Vec::new())),
                    None => {
                        let (_, expected) = steps.last_mut().unwrap_or_else(|| {
                            panic!("{name}:{start}: output before the first `$ ` command")
                        });
                        expected.push(line.to_owned());
                    }
                }
            }
            examples.push(Example { place: format!("{name}:{start}"), steps });
            index = end + 1;
            continue;
        }
        index += 1;
    }
    (examples, files)
}

/// True when `actual` is `expected`, where `…` in a line stands for any text and a line that
/// is only `…` for any number of lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "…" => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, others)| line_matches(first, line) && matches(rest, others)),
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split('…').collect();
    let [first, middle @ .., last] = parts.as_slice() else { return expected == actual };
    let Some(mut rest) = actual.strip_prefix(first) else { return false };
    for part in middle {
        let Some(at) = rest.find(part) else { return false };
        rest = &rest[at + part.len()..];
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The line askpane never prints, between one command's output and the next's.
const BETWEEN: &str = "@@ the next example command @@";

/// Runs `example` in `folder` and says how each command's output differs from the manual's.
fn run(example: &Example, folder: &Path) -> Vec<String> {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_askpane"));
    let path = format!("{}:/usr/bin:/bin", binary.parent().expect("a folder").display());
    // Each command's exit status is kept across the marker, so `echo $?` reads the command's.
    let mut script = String::new();
    for (command, _) in &example.steps {
        script.push_str(&format!(
            "status=$?; printf '\\n%s\\n' '{BETWEEN}'; (exit $status)\n{command}\n"
        ));
    }
    fs::create_dir_all(folder.join("home")).expect("a home folder");
    let runtime = folder.join("run");
    fs::create_dir_all(&runtime).expect("a runtime folder");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).expect("narrow it");
    }
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(format!("exec 2>&1\n{script}")).current_dir(folder).env_clear();
    shell
        .env("PATH", path)
        .env("HOME", folder.join("home"))
        .env("XDG_STATE_HOME", folder.join("state"))
        .env("XDG_CONFIG_HOME", folder.join("config"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("LANG", "C.UTF-8");
    let finished = run_bounded(&mut shell, None);
    let output = finished.stdout;
    let mut outputs: Vec<&str> = output.split(&format!("\n{BETWEEN}\n")).collect();
    // Before the first marker there is nothing; each command's output then ends with the
    // newline the next marker's printf put before it.
    let _ = outputs.remove(0);
    let mut differences = Vec::new();
    for (index, (command, expected)) in example.steps.iter().enumerate() {
        let printed = outputs.get(index).copied().unwrap_or("<nothing: the shell ended>");
        let printed_lines: Vec<&str> = match printed.strip_suffix('\n') {
            Some(text) => text.lines().collect(),
            None if printed.is_empty() => Vec::new(),
            None => printed.lines().collect(),
        };
        if !matches(expected, &printed_lines) {
            differences.push(format!(
                "{}: `$ {command}`\n--- the manual says:\n{}\n--- it printed:\n{}",
                example.place,
                expected.join("\n"),
                printed_lines.join("\n")
            ));
        }
    }
    differences
}

#[test]
fn the_manual_s_console_examples_print_what_the_manual_says() {
    let mut differences = Vec::new();
    let mut count = 0;
    for (name, text) in pages() {
        let (examples, files) = examples(&name, &text);
        if examples.is_empty() {
            continue;
        }
        let folder = scratch_dir(&format!("manual-{}", name.trim_end_matches(".md")));
        for (file, body) in &files {
            fs::write(folder.join(file), body).expect("write an example's file");
        }
        for example in &examples {
            count += example.steps.len();
            differences.extend(run(example, &folder));
        }
    }
    assert!(count >= 10, "only {count} example commands found in docs/src: the markers moved?");
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
}

#[test]
fn an_example_s_expected_output_may_leave_out_text_and_lines_with_an_ellipsis() {
    let expected = |lines: &[&str]| lines.iter().map(|line| (*line).to_owned()).collect::<Vec<_>>();
    assert!(matches(&expected(&["a…z", "…", "end"]), &["abcz", "x", "y", "end"]));
    assert!(matches(&expected(&["…"]), &[]));
    assert!(!matches(&expected(&["a…z"]), &["abc"]));
    assert!(!matches(&expected(&["one"]), &["one", "two"]));
    assert!(line_matches("…", "anything"));
    assert!(!line_matches("ab…ba", "aba"));
}
