//! An ask as one chat message: a plain-text body and a small HTML body (Matrix's
//! `formatted_body`), built from the same blocks so that both say the same, and cut to a bound
//! at block boundaries (HTML is never cut inside a tag).
//!
//! Everything the agent wrote is escaped: HTML's five characters become entities, control
//! characters become U+FFFD, and every `@` is followed by an invisible WORD JOINER (U+2060), so
//! that no text of the agent's mentions a person or the whole room (`@room`) in either body.

use std::fmt::Write as _;

use serde_json::Value;

use super::Shape;
use crate::protocol::inbox::Listed;
pub use crate::protocol::markup::escape as html;
use crate::protocol::origin::agent_in_words;
use crate::protocol::permission::Suggestion;
use crate::protocol::question::{Ask, Question};

/// The most bytes each body may take: both, JSON-escaped at worst twice, stay inside a Matrix
/// event's 64 KiB with room for the event's own fields.
pub const MAX_BODY_BYTES: usize = 15_000;

/// The most bytes of one code block (a preview, a command, a diff, a plan) before it is cut.
const MAX_BLOCK_BYTES: usize = 6_000;

/// The most bytes of one line of the agent's (a header, a question, a label, a description).
const MAX_FIELD_BYTES: usize = 1_000;

/// Room kept for the cut note and the reply hint at the end.
const TAIL_ROOM: usize = 600;

/// Breaks a mention: follows every `@` of the agent's.
const WORD_JOINER: char = '\u{2060}';

/// One ask as a chat message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The plain-text body (`body`): markdown-ish, code blocks fenced.
    pub plain: String,
    /// The HTML body (`formatted_body`): `<p>`, `<b>`, `<i>`, `<code>`, `<pre>`, `<br>` only.
    pub html: String,
    /// Whether anything was cut to fit (the message then says so where it was cut).
    pub cut: bool,
}

/// One piece of the message, in both forms.
#[derive(Debug, Default)]
struct Block {
    plain: String,
    html: String,
}

impl Block {
    fn line(plain: String, html: String) -> Block {
        Block { plain, html: format!("<p>{html}</p>") }
    }
}

/// The ask `listed` (as `list` with `full` gives it) as one message; `None` without its
/// content, or with questions the window could not show either.
pub fn render(listed: &Listed) -> Option<Message> {
    let content = listed.content.as_deref()?;
    let shape = Shape::of(content)?;
    let mut blocks = vec![who_asked(listed, &shape)];
    if let Some(deadline) = listed.deadline_at {
        let when = utc(deadline);
        blocks.push(Block::line(format!("Answer by {when}."), format!("Answer by {when}.")));
    }
    let hint = match &shape {
        Shape::Questions(ask) => {
            questions(ask, &mut blocks);
            question_hint(ask)
        }
        Shape::Approval { tool_name, input, description, suggestions } => {
            approval(tool_name, input, *description, &mut blocks);
            approval_hint(suggestions, &mut blocks)
        }
        Shape::Plan { plan, suggestions } => {
            blocks.push(Block::line("The plan:".to_owned(), "The plan:".to_owned()));
            blocks.push(code_block(plan, "the plan"));
            let mut hint = "Reply `approve`, or `keep planning: what to change`.".to_owned();
            if !suggestions.is_empty() {
                hint.push_str(" `always` approves and adds a rule:");
                suggestion_list(suggestions, &mut blocks);
            }
            hint
        }
    };
    Some(assemble(blocks, &hint))
}

/// Joins the blocks while they fit, then says what was cut, then the hint.
fn assemble(blocks: Vec<Block>, hint: &str) -> Message {
    let mut message = Message { plain: String::new(), html: String::new(), cut: false };
    let budget = MAX_BODY_BYTES.saturating_sub(TAIL_ROOM);
    let mut hidden_lines = 0;
    for block in blocks {
        let fits = message.plain.len() + block.plain.len() < budget
            && message.html.len() + block.html.len() < budget;
        if message.cut || !fits {
            message.cut = true;
            hidden_lines += block.plain.lines().count();
            continue;
        }
        if !message.plain.is_empty() {
            message.plain.push('\n');
        }
        message.plain.push_str(&block.plain);
        message.html.push_str(&block.html);
    }
    if message.cut {
        let note = cut_note(hidden_lines);
        message.plain.push('\n');
        message.plain.push_str(&note);
        let _ = write!(message.html, "<p><i>{}</i></p>", html(&note));
    }
    message.plain.push('\n');
    message.plain.push_str(hint);
    let _ = write!(message.html, "<p>{}</p>", code_spans(hint));
    message
}

/// What a cut says, where it cut.
fn cut_note(lines: usize) -> String {
    let lines = match lines {
        1 => "1 more line".to_owned(),
        n => format!("{n} more lines"),
    };
    format!("… (cut: {lines}; open the inbox to see it all)")
}

/// Who asked: the agent, the project, the host.
fn who_asked(listed: &Listed, shape: &Shape) -> Block {
    let what = match shape {
        Shape::Questions(ask) if ask.questions().len() > 1 => "Questions",
        Shape::Questions(_) => "A question",
        Shape::Approval { .. } => "A tool call to allow",
        Shape::Plan { .. } => "A plan to review",
    };
    // The window's words for the agent (`Claude Code (hook)`), from the adapter's name: `agent`,
    // or `from`'s first part from an older inbox that sends no `agent`.
    let source = listed.agent.as_deref().unwrap_or_else(|| {
        let first = listed.from.split(" · ").next().unwrap_or_default();
        first.split(" @ ").next().unwrap_or_default().trim()
    });
    let agent = agent_in_words(source);
    let mut plain = format!("{what} from {}", field(&agent));
    let mut rich = format!("<b>{what}</b> from <b>{}</b>", html(&field(&agent)));
    if let Some(project) = &listed.project {
        let _ = write!(plain, " in {}", field(project));
        let _ = write!(rich, " in <b>{}</b>", html(&field(project)));
    }
    if let Some(host) = &listed.host {
        let _ = write!(plain, " on {}", field(host));
        let _ = write!(rich, " on <b>{}</b>", html(&field(host)));
    }
    Block::line(plain, rich)
}

/// Every question with its header, its numbered options and their previews.
fn questions(ask: &Ask, blocks: &mut Vec<Block>) {
    let several = ask.questions().len() > 1;
    for (index, question) in ask.questions().iter().enumerate() {
        let number = match several {
            true => format!("{}. ", index + 1),
            false => String::new(),
        };
        let (header, text) = (field(question.header()), field(question.text()));
        let how = match question.multi_select() {
            true => "several options may be chosen, like 1,3",
            false => "one option",
        };
        blocks.push(Block::line(
            format!("{number}[{header}] {text} ({how})"),
            format!("<b>{number}{}</b>: {} <i>({how})</i>", html(&header), html(&text)),
        ));
        if question.secret() {
            let secret = "The answer is a secret: give it in the inbox, not in this room.";
            blocks.push(Block::line(secret.to_owned(), format!("<i>{secret}</i>")));
        }
        options(index, question, blocks);
    }
}

fn options(question_index: usize, question: &Question, blocks: &mut Vec<Block>) {
    for (index, option) in question.options().iter().enumerate() {
        let number = index + 1;
        let label = field(option.label());
        let description = field(option.description());
        let (plain, rich) = match description.is_empty() {
            true => (format!("  {number}. {label}"), format!("<b>{number}.</b> {}", html(&label))),
            false => (
                format!("  {number}. {label} — {description}"),
                format!("<b>{number}.</b> {} — <i>{}</i>", html(&label), html(&description)),
            ),
        };
        blocks.push(Block::line(plain, rich));
        if let Some(preview) = option.preview() {
            let place = format!("option {number}'s preview of question {}", question_index + 1);
            blocks.push(code_block(preview, &place));
        }
    }
}

/// How to answer questions.
fn question_hint(ask: &Ask) -> String {
    match ask.questions().len() {
        1 => "Reply with an option's number (`2`, or `1,3` where several may be chosen), \
              `other: your words`, `note: …` on a line of its own, `decline: why`, or `clarify`."
            .to_owned(),
        _ => "Reply one line per question: `1: 2`, `2: 1,3`, `2: other: your words`, \
              `1 note: …`; or `decline: why`, or `clarify`."
            .to_owned(),
    }
}

/// A tool call: what it runs or changes.
fn approval(tool_name: &str, input: &Value, description: Option<&str>, blocks: &mut Vec<Block>) {
    let tool = field(tool_name);
    blocks
        .push(Block::line(format!("Tool: {tool}"), format!("Tool: <code>{}</code>", html(&tool))));
    if let Some(description) = description.filter(|text| !text.trim().is_empty()) {
        let description = field(description);
        blocks.push(Block::line(description.clone(), format!("<i>{}</i>", html(&description))));
    }
    let text = |name: &str| input.get(name).and_then(Value::as_str);
    if let Some(path) = text("file_path").or_else(|| text("notebook_path")).or_else(|| text("path"))
    {
        let path = field(path);
        blocks.push(Block::line(
            format!("File: {path}"),
            format!("File: <code>{}</code>", html(&path)),
        ));
    }
    match (text("command"), text("old_string"), text("new_string"), text("content")) {
        (Some(command), ..) => blocks.push(code_block(command, "the command")),
        (None, Some(old), Some(new), _) => blocks.push(code_block(&diff(old, new), "the change")),
        (None, _, _, Some(content)) => blocks.push(code_block(content, "the file's content")),
        _ => match input.get("edits").and_then(Value::as_array) {
            Some(edits) => {
                let changes: Vec<String> = edits
                    .iter()
                    .filter_map(|edit| {
                        let old = edit.get("old_string").and_then(Value::as_str)?;
                        let new = edit.get("new_string").and_then(Value::as_str)?;
                        Some(diff(old, new))
                    })
                    .collect();
                blocks.push(code_block(&changes.join("\n"), "the changes"));
            }
            None => {
                let input = serde_json::to_string_pretty(input).unwrap_or_default();
                blocks.push(code_block(&input, "the tool's input"));
            }
        },
    }
}

/// An edit as a short diff: the old lines with `-`, the new with `+`.
fn diff(old: &str, new: &str) -> String {
    let old = old.lines().map(|line| format!("- {line}"));
    let new = new.lines().map(|line| format!("+ {line}"));
    old.chain(new).collect::<Vec<_>>().join("\n")
}

/// How to decide a tool call, listing the rules `always` may add.
fn approval_hint(suggestions: &[Suggestion], blocks: &mut Vec<Block>) -> String {
    match suggestions.len() {
        0 => "Reply `allow`, or `deny: why`.".to_owned(),
        1 => {
            suggestion_list(suggestions, blocks);
            "Reply `allow`, `always` (allow, and add the rule above), or `deny: why`.".to_owned()
        }
        _ => {
            suggestion_list(suggestions, blocks);
            "Reply `allow`, `always 1` (allow, and add rule 1 above), or `deny: why`.".to_owned()
        }
    }
}

fn suggestion_list(suggestions: &[Suggestion], blocks: &mut Vec<Block>) {
    for (index, suggestion) in suggestions.iter().enumerate() {
        let label = field(&suggestion.label());
        let number = index + 1;
        blocks.push(Block::line(
            format!("  always {number}: {label}"),
            format!("<code>always {number}</code>: {}", html(&label)),
        ));
    }
}

/// The agent's text as a code block (a fence longer than any run of backticks in it, so no
/// fence inside closes it), cut to [`MAX_BLOCK_BYTES`] at a line where it can be.
fn code_block(text: &str, place: &str) -> Block {
    let (shown, hidden) = cut_text(text, MAX_BLOCK_BYTES);
    let shown = agent_text(shown, false);
    let longest = longest_backtick_run(&shown);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut plain = format!("{fence}\n{shown}\n{fence}");
    let mut rich = format!("<pre><code>{}</code></pre>", html(&shown));
    if hidden > 0 {
        let note = cut_note(hidden).replace("(cut:", &format!("(cut from {place}:"));
        let _ = write!(plain, "\n{note}");
        let _ = write!(rich, "<p><i>{}</i></p>", html(&note));
    }
    Block { plain, html: rich }
}

/// The first lines of `text` that fit in `budget` bytes (a single longer line is cut at a
/// character), and how many lines were not shown whole.
fn cut_text(text: &str, budget: usize) -> (&str, usize) {
    if text.len() <= budget {
        return (text, 0);
    }
    let mut end = budget;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let (head, _) = text.split_at(end);
    let head = match head.rfind('\n') {
        Some(newline) => head.split_at(newline).0,
        None => head,
    };
    let hidden = text.lines().count().saturating_sub(head.lines().count());
    (head, hidden.max(1))
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// One line of the agent's, made safe and bounded: what a bridge writes of the agent's text
/// outside a rendered message (e.g. the ask's title in the edit saying how it ended).
pub fn field(text: &str) -> String {
    let (shown, hidden) = cut_text(text, MAX_FIELD_BYTES);
    let mut line = agent_text(shown, true);
    if hidden > 0 || shown.len() < text.len() {
        line.push('…');
    }
    line
}

/// The agent's text with its control characters replaced (newlines and tabs kept in a block,
/// made spaces on a line) and every `@` followed by a word joiner, so no mention pings anyone.
pub(super) fn agent_text(text: &str, one_line: bool) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' | '\r' if one_line => safe.push(' '),
            '\n' | '\t' => safe.push(c),
            '@' => {
                safe.push('@');
                safe.push(WORD_JOINER);
            }
            c if c.is_control() => safe.push('\u{fffd}'),
            c => safe.push(c),
        }
    }
    safe
}

/// askpane's own hint with its `code` spans as `<code>` (the hint is askpane's text, no agent's).
fn code_spans(hint: &str) -> String {
    let mut rich = String::new();
    for (index, part) in html(hint).split('`').enumerate() {
        match index % 2 {
            1 => {
                let _ = write!(rich, "<code>{part}</code>");
            }
            _ => rich.push_str(part),
        }
    }
    rich
}

/// Seconds since the Unix epoch as `2026-11-26 22:45 UTC`.
pub(super) fn utc(secs: u64) -> String {
    let days = secs / 86_400;
    let (hour, minute) = ((secs % 86_400) / 3_600, (secs % 3_600) / 60);
    // Howard Hinnant's days-to-civil, for days since 1970-01-01 (no negative dates here).
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}
