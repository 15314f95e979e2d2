//! A plan to review (issue 26): Claude Code's `ExitPlanMode` call is not a tool call to allow
//! but a plan to approve, or to send back with comments like a code review. This is the pure
//! model: the plan's markdown cut into blocks a comment can be anchored to, the review's form
//! (comments, a general note, what happens after an approval), the feedback message the model
//! reads, and how every outcome becomes the agent's decision (host and hook).
//!
//! The decisions are those 2.1.332 was recorded taking (tests/fixtures/claude-code/2.1.332,
//! `plan-host-*`, `plan-hook-*`): approve is an allow (the hook's echoes the plan, see
//! [`permission::hook_reply`]), approve and accept edits adds `setMode acceptEdits`, keep
//! planning is a deny whose message the model reads verbatim while it stays in plan mode.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::permission::{self, ApprovalOutcome};
use crate::protocol::stream::{PermissionDecision, PermissionRequest};

/// The most blocks a plan is cut into; the rest is one last block. A 10 000-line plan of list
/// items is 10 000 blocks, which the page lays out only when in view.
pub const MAX_BLOCKS: usize = 20_000;

/// Lines of a block quoted above a comment; more are cut with `> …`.
pub const QUOTE_LINES: usize = 3;

/// Characters of one quoted line; a longer one is cut with `…`.
pub const QUOTE_LINE_CHARS: usize = 120;

/// Characters of a heading in the outline.
const OUTLINE_CHARS: usize = 80;

/// What the model reads when the person sends the plan back with nothing written. Allowed, as
/// Claude Code's own "No, keep planning" is: the person may want another plan without knowing
/// yet what to say, and the model is told to ask rather than guess.
pub const KEEP_PLANNING_DEFAULT: &str = "The user did not approve this plan and wants you to \
    keep planning. They left no comments: ask them what to change, or revise the plan and \
    present it again.";

/// The first line of a keep-planning message with comments or a note.
pub const KEEP_PLANNING_LEAD: &str =
    "The user did not approve this plan and wants you to keep planning. Their review:";

/// What the model reads when a plan is sent back with `note` and no comment on a block: what
/// [`PlanReview::feedback`] sends for a note alone ([`KEEP_PLANNING_DEFAULT`] for none). A
/// front end that has only words (the socket's `decide` deny on a plan, a chat room's `keep
/// planning: …`) sends this, so the model reads what the window's plan page sends.
pub fn keep_planning_words(note: &str) -> String {
    match note.trim() {
        "" => KEEP_PLANNING_DEFAULT.to_owned(),
        note => format!("{KEEP_PLANNING_LEAD}\n\n{note}"),
    }
}

/// What a block of the plan is, for the page (a heading joins the outline) and for quoting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    Heading {
        level: u8,
    },
    Paragraph,
    ListItem,
    Code,
    Table,
    Quote,
    Html,
    Rule,
    /// Anything else (a footnote, what is past [`MAX_BLOCKS`]).
    Other,
}

/// One block of the plan: a comment's anchor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanBlock {
    pub kind: BlockKind,
    /// Its markdown: bytes of [`PlanReview::plan`].
    pub source: Range<usize>,
    /// A heading's text, for the outline (cut at [`OUTLINE_CHARS`]).
    pub title: Option<String>,
}

/// What happens after an approval, as Claude Code's own plan dialog offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterApproval {
    /// The session leaves plan mode for its default mode: the next edit asks.
    #[default]
    KeepAsking,
    /// The session's mode becomes `acceptEdits`: edits run unasked.
    AcceptEdits,
}

/// A comment on block `block`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanComment {
    pub block: usize,
    pub text: String,
}

/// What the person wrote on a plan page, as the store keeps it (issue 26 leftovers: nothing
/// typed is lost): each comment with its anchor, the note, the choice after approval. Given
/// back with [`PlanReview::restore`] when the same plan is asked again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDraft {
    pub comments: Vec<DraftComment>,
    pub note: String,
    pub then: AfterApproval,
}

/// A comment in a [`PlanDraft`], anchored by its block's index and that block's markdown (the
/// index alone could point at another block of a plan that changed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DraftComment {
    pub block: usize,
    pub quoted: String,
    pub text: String,
}

/// How a plan review ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanOutcome {
    Approved {
        then: AfterApproval,
    },
    KeepPlanning {
        message: String,
    },
    /// The agent took it back, or its client went away.
    Withdrawn,
    /// `--timeout` ran out.
    TimedOut,
    /// Nobody could be asked.
    NoHuman,
    /// Left to Claude Code's own dialog (a hook's only).
    HandedBack,
}

impl PlanOutcome {
    /// The decision the agent's handle hears: what the host renders as its `control_response`
    /// (`stream::permission_reply`) and the hook as its decision ([`PlanOutcome::hook_reply`]).
    /// An ending nobody decided is a hand-back: a hook prints nothing, a hosted session hears
    /// that nobody decided and, the plan not approved, stays in plan mode.
    pub fn decision(&self) -> PermissionDecision {
        match self {
            PlanOutcome::Approved { then: AfterApproval::KeepAsking } => {
                PermissionDecision::AllowOnce
            }
            PlanOutcome::Approved { then: AfterApproval::AcceptEdits } => {
                PermissionDecision::AllowAlways { suggestion: permission::accept_edits() }
            }
            PlanOutcome::KeepPlanning { message } => {
                PermissionDecision::Deny { message: message.clone() }
            }
            PlanOutcome::Withdrawn
            | PlanOutcome::TimedOut
            | PlanOutcome::NoHuman
            | PlanOutcome::HandedBack => PermissionDecision::HandBack,
        }
    }

    /// The `PermissionRequest` hook's reply line for this outcome of `request`'s plan: an
    /// approval echoes the plan as `updatedInput` (a bare allow is ignored and the session
    /// hangs); `None`, print nothing, when nobody decided.
    pub fn hook_reply(&self, request: &PermissionRequest) -> Option<Value> {
        permission::hook_reply(request, &self.decision())
    }

    /// The kind history keeps.
    pub fn kind(&self) -> ApprovalOutcome {
        match self {
            PlanOutcome::Approved { then: AfterApproval::KeepAsking } => {
                ApprovalOutcome::AllowedOnce
            }
            PlanOutcome::Approved { then: AfterApproval::AcceptEdits } => {
                ApprovalOutcome::AllowedAlways
            }
            PlanOutcome::KeepPlanning { .. } => ApprovalOutcome::Denied,
            PlanOutcome::Withdrawn => ApprovalOutcome::Withdrawn,
            PlanOutcome::TimedOut => ApprovalOutcome::TimedOut,
            PlanOutcome::NoHuman => ApprovalOutcome::NoHuman,
            PlanOutcome::HandedBack => ApprovalOutcome::HandedBack,
        }
    }
}

/// What the person does on a plan page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanAction {
    /// Opens a comment on block `block` (the one there already, if any).
    Comment {
        block: usize,
    },
    EditComment {
        block: usize,
        text: String,
    },
    RemoveComment {
        block: usize,
    },
    SetNote(String),
    SetThen(AfterApproval),
    Approve,
    KeepPlanning,
}

/// A plan under review: its markdown and blocks, where it comes from, and the review so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanReview {
    pub plan: String,
    /// Where Claude Code keeps it (`planFilePath`).
    pub file_path: Option<String>,
    pub blocks: Vec<PlanBlock>,
    /// The comments, in the order of their blocks.
    pub comments: Vec<PlanComment>,
    pub note: String,
    pub then: AfterApproval,
}

impl PlanReview {
    /// The plan `request` carries, when it is one ([`permission::PLAN_TOOL`]). A plan missing
    /// from the input is an empty plan: the review can still send it back.
    pub fn of(request: &PermissionRequest) -> Option<PlanReview> {
        if !permission::is_plan(request) {
            return None;
        }
        let text = |key: &str| request.input.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(PlanReview::new(text("plan").unwrap_or_default(), text("planFilePath")))
    }

    pub fn new(plan: String, file_path: Option<String>) -> PlanReview {
        let blocks = blocks_of(&plan);
        PlanReview {
            plan,
            file_path,
            blocks,
            comments: Vec::new(),
            note: String::new(),
            then: AfterApproval::default(),
        }
    }

    /// Block `index`'s markdown.
    pub fn block_text(&self, index: usize) -> &str {
        let source = self.blocks.get(index).map(|block| block.source.clone());
        source.and_then(|source| self.plan.get(source)).unwrap_or_default()
    }

    /// The comment on block `block`.
    pub fn comment(&self, block: usize) -> Option<&PlanComment> {
        self.comments.iter().find(|comment| comment.block == block)
    }

    /// Applies a form edit; `Some` outcome for Approve and Keep planning, which end the review.
    pub fn apply(&mut self, action: PlanAction) -> Option<PlanOutcome> {
        match action {
            PlanAction::Comment { block } => {
                if block < self.blocks.len() && self.comment(block).is_none() {
                    let at = self.comments.partition_point(|comment| comment.block < block);
                    self.comments.insert(at, PlanComment { block, text: String::new() });
                }
            }
            PlanAction::EditComment { block, text } => {
                if let Some(comment) = self.comments.iter_mut().find(|c| c.block == block) {
                    comment.text = text;
                }
            }
            PlanAction::RemoveComment { block } => self.comments.retain(|c| c.block != block),
            PlanAction::SetNote(note) => self.note = note,
            PlanAction::SetThen(then) => self.then = then,
            PlanAction::Approve => return Some(PlanOutcome::Approved { then: self.then }),
            PlanAction::KeepPlanning => {
                return Some(PlanOutcome::KeepPlanning { message: self.feedback() });
            }
        }
        None
    }

    /// The message "Keep planning" sends, like a code review: for each comment, its block
    /// quoted (`> ` lines, cut at [`QUOTE_LINES`] of [`QUOTE_LINE_CHARS`]) then the comment;
    /// then the general note. Blank comments say nothing and are left out; with nothing
    /// written at all it is [`KEEP_PLANNING_DEFAULT`].
    pub fn feedback(&self) -> String {
        let mut parts = Vec::new();
        for comment in &self.comments {
            let text = comment.text.trim();
            if text.is_empty() {
                continue;
            }
            parts.push(format!("{}\n\n{text}", quote(self.block_text(comment.block))));
        }
        let note = self.note.trim();
        if !note.is_empty() {
            parts.push(note.to_owned());
        }
        if parts.is_empty() {
            return KEEP_PLANNING_DEFAULT.to_owned();
        }
        format!("{KEEP_PLANNING_LEAD}\n\n{}", parts.join("\n\n"))
    }

    /// Whether anything was written (a comment or the note): what keep planning would send
    /// beyond [`KEEP_PLANNING_DEFAULT`].
    pub fn has_feedback(&self) -> bool {
        !self.note.trim().is_empty() || self.comments.iter().any(|c| !c.text.trim().is_empty())
    }

    /// What was written so far, for the store ([`PlanDraft`]).
    pub fn draft(&self) -> PlanDraft {
        let comments = self.comments.iter().map(|comment| DraftComment {
            block: comment.block,
            quoted: self.block_text(comment.block).to_owned(),
            text: comment.text.clone(),
        });
        PlanDraft { comments: comments.collect(), note: self.note.clone(), then: self.then }
    }

    /// Gives back what `draft` kept. Each comment goes on the block its anchor names when that
    /// block still reads the same, else on the first block that reads as its quote did; one
    /// with no such block (or whose block has a comment already) is added to the note under
    /// its quote, so nothing written is lost (an empty one is dropped).
    pub fn restore(&mut self, draft: PlanDraft) {
        let PlanDraft { comments, note, then } = draft;
        self.note = note;
        self.then = then;
        self.comments.clear();
        for DraftComment { block, quoted, text } in comments {
            let free = |review: &PlanReview, at: usize| {
                review.block_text(at) == quoted && review.comment(at).is_none()
            };
            let at = match block < self.blocks.len() && free(self, block) {
                true => Some(block),
                false => (0..self.blocks.len()).find(|&at| free(self, at)),
            };
            match at {
                Some(at) => {
                    let index = self.comments.partition_point(|comment| comment.block < at);
                    self.comments.insert(index, PlanComment { block: at, text });
                }
                None if text.trim().is_empty() => {}
                None => {
                    if !self.note.is_empty() {
                        self.note.push_str("\n\n");
                    }
                    self.note.push_str(&format!("{}\n\n{text}", quote(&quoted)));
                }
            }
        }
    }

    /// The outline: each heading's block and its level and text.
    pub fn outline(&self) -> impl Iterator<Item = (usize, u8, &str)> + '_ {
        self.blocks.iter().enumerate().filter_map(|(index, block)| match block.kind {
            BlockKind::Heading { level } => Some((index, level, block.title.as_deref()?)),
            _ => None,
        })
    }
}

/// `text` as a markdown quote: its first [`QUOTE_LINES`] non-blank lines, each cut at
/// [`QUOTE_LINE_CHARS`], then `> …` when more was left out.
pub fn quote(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(QUOTE_LINES)
        .map(|line| match line.char_indices().nth(QUOTE_LINE_CHARS) {
            Some((cut, _)) => format!("> {}…", line.get(..cut).unwrap_or_default()),
            None => format!("> {line}"),
        })
        .collect();
    if lines.len() > QUOTE_LINES {
        out.push("> …".to_owned());
    }
    if out.is_empty() {
        out.push(">".to_owned());
    }
    out.join("\n")
}

/// Cuts `plan` into its top-level blocks, each list item a block of its own (its nested lists
/// with it). Linear in the plan; at most [`MAX_BLOCKS`].
fn blocks_of(plan: &str) -> Vec<PlanBlock> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut blocks = Vec::new();
    let mut depth = 0usize;
    // Whether the open block at depth 0 is a list, whose items are the blocks.
    let mut in_list = false;
    let mut open: Option<(BlockKind, usize)> = None;
    let mut title = String::new();
    for (event, range) in Parser::new_ext(plan, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                let item = in_list && depth == 1 && matches!(tag, Tag::Item);
                if depth == 0 {
                    match tag {
                        Tag::List(_) => in_list = true,
                        tag => open = Some((kind_of(&tag), range.start)),
                    }
                    title.clear();
                } else if item {
                    open = Some((BlockKind::ListItem, range.start));
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                let closes = match end {
                    TagEnd::List(_) if depth == 0 => {
                        in_list = false;
                        false
                    }
                    TagEnd::Item => in_list && depth == 1,
                    _ => depth == 0,
                };
                if closes && let Some((kind, start)) = open.take() {
                    let title = match kind {
                        BlockKind::Heading { .. } => Some(cut(title.trim(), OUTLINE_CHARS)),
                        _ => None,
                    };
                    let end = trimmed_end(plan, start, range.end);
                    blocks.push(PlanBlock { kind, source: start..end, title });
                }
            }
            Event::Text(text) | Event::Code(text) if open.is_some() && title.len() < 400 => {
                title.push_str(&text);
            }
            Event::Rule if depth == 0 => {
                blocks.push(PlanBlock { kind: BlockKind::Rule, source: range, title: None });
            }
            _ => {}
        }
    }
    if blocks.len() > MAX_BLOCKS {
        // The rest, whole: nothing is dropped from view.
        blocks.truncate(MAX_BLOCKS - 1);
        let start = blocks.last().map_or(0, |block| block.source.end);
        blocks.push(PlanBlock { kind: BlockKind::Other, source: start..plan.len(), title: None });
    }
    blocks
}

/// A block's kind from its opening tag (at the top level; lists are cut at their items).
fn kind_of(tag: &Tag<'_>) -> BlockKind {
    match tag {
        Tag::Heading { level, .. } => BlockKind::Heading { level: *level as u8 },
        Tag::Paragraph => BlockKind::Paragraph,
        Tag::CodeBlock(_) => BlockKind::Code,
        Tag::Table(_) => BlockKind::Table,
        Tag::BlockQuote(_) => BlockKind::Quote,
        Tag::HtmlBlock => BlockKind::Html,
        Tag::Item => BlockKind::ListItem,
        _ => BlockKind::Other,
    }
}

/// `end`, moved back over trailing line breaks (a block's range keeps the newline after it).
fn trimmed_end(plan: &str, start: usize, end: usize) -> usize {
    let text = plan.get(start..end).unwrap_or_default();
    start + text.trim_end_matches(['\n', '\r']).len()
}

/// `text` cut at `chars` characters, with `…`.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or_default()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
