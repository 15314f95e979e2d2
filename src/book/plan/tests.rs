//! The plan review's model: blocks, feedback (literal text), and each outcome's decision as
//! the host and the hook write it, against Claude Code 2.1.332's captures.

use serde_json::{Value, json};

use super::*;
use crate::protocol::stream::{CliMessage, parse_cli_line, permission_reply};

const PLAN: &str = "# Greeting\n\nChange the greeting, then test.\n\n## Steps\n\n1. Change \
    greeting.txt to say hello world.\n2. Run the tests.\n\n```sh\ncargo test\n```\n\n| a | b |\n\
    |---|---|\n| 1 | 2 |\n";

/// The 2.1.332 captures this file reads, built in (the book reads no files).
fn capture(case: &str, file: &str) -> &'static str {
    macro_rules! captured {
        ($($case:literal / $file:literal),* $(,)?) => {
            match (case, file) {
                $(($case, $file) => include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code/2.1.332/", $case, "/",
                    $file
                )),)*
                _ => panic!("no capture {case}/{file}"),
            }
        };
    }
    captured!(
        "plan-host-allow" / "stdout.jsonl",
        "plan-host-allow-acceptedits" / "stdout.jsonl",
        "plan-host-deny-keep-planning" / "stdout.jsonl",
        "plan-hook-allow" / "hooks/PermissionRequest.1.stdin.json",
        "plan-hook-allow" / "hooks/PermissionRequest.1.stdout.json",
        "plan-hook-allow-input" / "hooks/PermissionRequest.1.stdin.json",
        "plan-hook-allow-input" / "hooks/PermissionRequest.1.stdout.json",
        "plan-hook-allow-acceptedits" / "hooks/PermissionRequest.1.stdin.json",
        "plan-hook-allow-acceptedits" / "hooks/PermissionRequest.1.stdout.json",
        "plan-hook-deny-keep-planning" / "hooks/PermissionRequest.1.stdin.json",
        "plan-hook-deny-keep-planning" / "hooks/PermissionRequest.1.stdout.json",
    )
}

fn fixture(case: &str, file: &str) -> Value {
    serde_json::from_str(capture(case, file)).expect("JSON")
}

/// The captured host run's `can_use_tool` for ExitPlanMode and the response it was given.
fn host_capture(case: &str) -> (PermissionRequest, Value) {
    let text = capture(case, "stdout.jsonl");
    let lines: Vec<Value> =
        text.lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let at = lines
        .iter()
        .position(|l| l["line"]["request"]["tool_name"] == "ExitPlanMode")
        .expect("an ExitPlanMode request");
    let CliMessage::Permission(request) = parse_cli_line(&lines[at]["line"]) else {
        panic!("a permission")
    };
    let response = lines[at + 1..]
        .iter()
        .find(|l| l["dir"] == ">>" && l["line"]["type"] == "control_response")
        .expect("its response");
    (request, response["line"].clone())
}

fn hook_request(case: &str) -> PermissionRequest {
    let input = fixture(case, "hooks/PermissionRequest.1.stdin.json");
    let parsed = permission::parse_hook_permission(&input).expect("an approval").expect("valid");
    parsed.request
}

#[test]
fn a_plan_is_cut_into_the_blocks_a_comment_can_be_anchored_to() {
    let review = PlanReview::new(PLAN.to_owned(), None);
    let kinds: Vec<BlockKind> = review.blocks.iter().map(|block| block.kind).collect();
    assert_eq!(
        kinds,
        [
            BlockKind::Heading { level: 1 },
            BlockKind::Paragraph,
            BlockKind::Heading { level: 2 },
            BlockKind::ListItem,
            BlockKind::ListItem,
            BlockKind::Code,
            BlockKind::Table,
        ]
    );
    assert_eq!(review.block_text(3), "1. Change greeting.txt to say hello world.");
    assert_eq!(review.block_text(4), "2. Run the tests.");
    assert_eq!(review.block_text(5), "```sh\ncargo test\n```");
    let outline: Vec<_> = review.outline().collect();
    assert_eq!(outline, [(0, 1, "Greeting"), (2, 2, "Steps")]);
}

#[test]
fn keep_planning_quotes_each_commented_block_then_the_comment_then_the_note() {
    let mut review = PlanReview::new(PLAN.to_owned(), None);
    // Commented out of order, kept in the plan's order.
    for (block, text) in [(4, "Only the unit tests."), (1, "Say why.")] {
        assert_eq!(review.apply(PlanAction::Comment { block }), None);
        review.apply(PlanAction::EditComment { block, text: text.to_owned() });
    }
    review.apply(PlanAction::Comment { block: 5 });
    review.apply(PlanAction::SetNote("  Also update the README.  ".to_owned()));
    let Some(PlanOutcome::KeepPlanning { message }) = review.apply(PlanAction::KeepPlanning) else {
        panic!("keep planning")
    };
    assert_eq!(
        message,
        "The user did not approve this plan and wants you to keep planning. Their review:\n\
         \n\
         > Change the greeting, then test.\n\
         \n\
         Say why.\n\
         \n\
         > 2. Run the tests.\n\
         \n\
         Only the unit tests.\n\
         \n\
         Also update the README."
    );
}

#[test]
fn an_empty_keep_planning_sends_the_default_and_removed_comments_are_gone() {
    let mut review = PlanReview::new(PLAN.to_owned(), None);
    review.apply(PlanAction::Comment { block: 0 });
    review.apply(PlanAction::EditComment { block: 0, text: "gone".into() });
    review.apply(PlanAction::RemoveComment { block: 0 });
    assert!(!review.has_feedback());
    assert_eq!(review.feedback(), KEEP_PLANNING_DEFAULT);
    // A block that is not there takes no comment.
    review.apply(PlanAction::Comment { block: 99 });
    assert!(review.comments.is_empty());
}

#[test]
fn a_long_block_is_quoted_cut() {
    let long = format!("{}\nsecond\nthird\nfourth\nfifth", "é".repeat(130));
    assert_eq!(
        quote(&long),
        format!("> {}…\n> second\n> third\n> …", "é".repeat(QUOTE_LINE_CHARS))
    );
    assert_eq!(quote(""), ">");
}

#[test]
fn each_outcome_is_the_decision_claude_code_was_recorded_taking_from_a_host() {
    let (request, sent) = host_capture("plan-host-allow");
    let approve = PlanOutcome::Approved { then: AfterApproval::KeepAsking };
    assert_eq!(permission_reply(&request, &approve.decision()), sent);
    assert_eq!(
        sent["response"]["response"],
        json!({"behavior": "allow"}),
        "no echo: the plan is not taken for an edited one"
    );
    let (request, sent) = host_capture("plan-host-allow-acceptedits");
    let accept = PlanOutcome::Approved { then: AfterApproval::AcceptEdits };
    assert_eq!(permission_reply(&request, &accept.decision()), sent);
    let (request, sent) = host_capture("plan-host-deny-keep-planning");
    let message = sent["response"]["response"]["message"].as_str().expect("a message").to_owned();
    let keep = PlanOutcome::KeepPlanning { message };
    assert_eq!(permission_reply(&request, &keep.decision()), sent);
}

#[test]
fn each_outcome_is_the_hook_decision_claude_code_was_recorded_taking() {
    let approve = PlanOutcome::Approved { then: AfterApproval::KeepAsking };
    let request = hook_request("plan-hook-allow-input");
    assert_eq!(
        approve.hook_reply(&request),
        Some(fixture("plan-hook-allow-input", "hooks/PermissionRequest.1.stdout.json"))
    );
    let accept = PlanOutcome::Approved { then: AfterApproval::AcceptEdits };
    let request = hook_request("plan-hook-allow-acceptedits");
    assert_eq!(
        accept.hook_reply(&request),
        Some(fixture("plan-hook-allow-acceptedits", "hooks/PermissionRequest.1.stdout.json"))
    );
    let request = hook_request("plan-hook-deny-keep-planning");
    let expected = fixture("plan-hook-deny-keep-planning", "hooks/PermissionRequest.1.stdout.json");
    let message = expected["hookSpecificOutput"]["decision"]["message"].as_str().expect("words");
    let keep = PlanOutcome::KeepPlanning { message: message.to_owned() };
    assert_eq!(keep.hook_reply(&request), Some(expected));
    // Never the bare allow 2.1.332 ignores (fixture plan-hook-allow hung until killed).
    let bare = fixture("plan-hook-allow", "hooks/PermissionRequest.1.stdout.json");
    assert_ne!(approve.hook_reply(&hook_request("plan-hook-allow")), Some(bare));
    for nobody in [
        PlanOutcome::Withdrawn,
        PlanOutcome::TimedOut,
        PlanOutcome::NoHuman,
        PlanOutcome::HandedBack,
    ] {
        assert_eq!(nobody.hook_reply(&request), None, "{nobody:?}");
        assert!(!nobody.kind().allowed());
    }
}

#[test]
fn the_plan_comes_from_the_request_with_its_file() {
    let review = PlanReview::of(&hook_request("plan-hook-allow-input")).expect("a plan");
    assert_eq!(
        review.file_path.as_deref(),
        Some("/home/dev/.claude/plans/please-do-the-task-snug-duckling.md")
    );
    assert_eq!(review.blocks.len(), 3);
    let bash = PermissionRequest { tool_name: "Bash".into(), ..Default::default() };
    assert_eq!(PlanReview::of(&bash), None);
    let empty = PermissionRequest { tool_name: "ExitPlanMode".into(), ..Default::default() };
    assert_eq!(PlanReview::of(&empty).map(|review| review.blocks.len()), Some(0));
}

#[test]
fn hostile_plans_parse_bounded() {
    // HTML is a block like any other, kept as text.
    let html = "<script>alert(1)</script>\n\n<div onclick=x>\n\nhi\n</div>\n";
    let review = PlanReview::new(html.to_owned(), None);
    assert!(review.blocks.iter().all(|block| block.source.end <= html.len()));
    assert_eq!(review.blocks[0].kind, BlockKind::Html);
    // 100 KB of Japanese in one paragraph: one block, quoted cut.
    let japanese = "計画を見直してください。".repeat(3_000);
    assert!(japanese.len() > 100_000);
    let review = PlanReview::new(japanese.clone(), None);
    assert_eq!(review.blocks.len(), 1);
    assert!(quote(review.block_text(0)).chars().count() <= QUOTE_LINE_CHARS + 3);
    // 10 000 list items: a block each.
    let long: String = (1..=10_000).map(|n| format!("- step {n}\n")).collect();
    let review = PlanReview::new(long, None);
    assert_eq!(review.blocks.len(), 10_000);
    assert_eq!(review.block_text(9_999), "- step 10000");
    // Past MAX_BLOCKS, the rest is one block.
    let many: String = (0..MAX_BLOCKS + 50).map(|n| format!("- {n}\n")).collect();
    let review = PlanReview::new(many.clone(), None);
    assert_eq!(review.blocks.len(), MAX_BLOCKS);
    assert_eq!(review.blocks.last().map(|b| b.source.end), Some(many.len()));
    // Deep nesting and unclosed fences end.
    let deep = format!("{}x\n\n```\nnever closed", "> ".repeat(5_000));
    let review = PlanReview::new(deep, None);
    assert!(!review.blocks.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Drafts (issue 26 leftovers): what the person wrote, kept and given back.

/// A review of [`PLAN`] with comments on blocks 1 and 4, a note, and accept edits.
fn written() -> PlanReview {
    let mut review = PlanReview::new(PLAN.to_owned(), None);
    for (block, text) in [(1, "Say why."), (4, "Only the unit tests.")] {
        review.apply(PlanAction::Comment { block });
        review.apply(PlanAction::EditComment { block, text: text.to_owned() });
    }
    review.apply(PlanAction::SetNote("Also the README.".to_owned()));
    review.apply(PlanAction::SetThen(AfterApproval::AcceptEdits));
    review
}

#[test]
fn a_draft_keeps_each_comment_with_its_anchor_and_the_note() {
    let draft = written().draft();
    assert_eq!(
        draft,
        PlanDraft {
            comments: vec![
                DraftComment {
                    block: 1,
                    quoted: "Change the greeting, then test.".to_owned(),
                    text: "Say why.".to_owned(),
                },
                DraftComment {
                    block: 4,
                    quoted: "2. Run the tests.".to_owned(),
                    text: "Only the unit tests.".to_owned(),
                },
            ],
            note: "Also the README.".to_owned(),
            then: AfterApproval::AcceptEdits,
        }
    );
    // As the store keeps it: literal JSON.
    assert_eq!(
        serde_json::to_value(&draft).expect("JSON"),
        json!({
            "comments": [
                {"block": 1, "quoted": "Change the greeting, then test.", "text": "Say why."},
                {"block": 4, "quoted": "2. Run the tests.", "text": "Only the unit tests."},
            ],
            "note": "Also the README.",
            "then": "accept_edits",
        })
    );
}

#[test]
fn a_draft_restored_into_the_same_plan_is_the_review_as_it_was() {
    let before = written();
    let mut after = PlanReview::new(PLAN.to_owned(), None);
    after.restore(before.draft());
    assert_eq!(after, before);
    assert_eq!(after.feedback(), before.feedback());
}

#[test]
fn a_comment_whose_block_moved_follows_its_quote_and_one_with_no_block_goes_into_the_note() {
    let draft = written().draft();
    // The same plan with a paragraph put in front: every block moved down one; "2. Run the
    // tests." is gone.
    let moved = PLAN
        .replace("# Greeting\n", "# Greeting\n\nA new first paragraph.\n")
        .replace("2. Run the tests.\n", "");
    let mut review = PlanReview::new(moved, None);
    review.restore(draft);
    assert_eq!(review.comments.len(), 1, "{:?}", review.comments);
    assert_eq!(review.block_text(review.comments[0].block), "Change the greeting, then test.");
    assert_eq!(review.comments[0].text, "Say why.");
    // Nothing typed is lost: the comment without its block is in the note, quoted.
    assert_eq!(review.note, "Also the README.\n\n> 2. Run the tests.\n\nOnly the unit tests.");
    assert_eq!(review.then, AfterApproval::AcceptEdits);
}

#[test]
fn a_hostile_draft_cannot_put_a_comment_outside_the_plan() {
    let mut review = PlanReview::new(PLAN.to_owned(), None);
    let draft = PlanDraft {
        comments: vec![
            DraftComment { block: usize::MAX, quoted: "nowhere".to_owned(), text: "x".to_owned() },
            // Two comments on one block: the second joins the note rather than replace it.
            DraftComment { block: 0, quoted: "# Greeting".to_owned(), text: "a".to_owned() },
            DraftComment { block: 0, quoted: "# Greeting".to_owned(), text: "b".to_owned() },
            // An empty comment whose block is gone says nothing: dropped.
            DraftComment { block: 99, quoted: "gone".to_owned(), text: "  ".to_owned() },
        ],
        note: String::new(),
        then: AfterApproval::KeepAsking,
    };
    review.restore(draft);
    assert_eq!(review.comments, vec![PlanComment { block: 0, text: "a".to_owned() }]);
    assert_eq!(review.note, "> nowhere\n\nx\n\n> # Greeting\n\nb");
    assert!(review.comments.iter().all(|comment| comment.block < review.blocks.len()));
}

/// A front end with words only (the socket's `decide` deny on a plan, a room's `keep planning:
/// …`) sends what the page sends for a note alone (tests/matrix/claude.rs read "The user denied
/// this tool call and said: …" before).
#[test]
fn keep_planning_words_are_the_page_s_review_of_a_note_alone() {
    let mut review = PlanReview::new(PLAN.to_owned(), None);
    review.apply(PlanAction::SetNote(" split step 2 ".to_owned()));
    assert_eq!(keep_planning_words("split step 2 "), review.feedback());
    assert_eq!(keep_planning_words("  "), KEEP_PLANNING_DEFAULT);
}
