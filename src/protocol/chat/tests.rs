//! The chat grammar: rendering (escaped, bounded), every reply rule and refusal, the polls, and
//! a round trip from the message to the outcome the window would send.

use serde_json::{Value, json};

use super::*;
use crate::protocol::inbox::{AskKind, FrontEndDecision, Listed};
use crate::protocol::web::{PageForm, PagePicks, Sent, answer_outcome, clarify_outcome};
use crate::protocol::{Draft, Outcome, Pick, build_answers, validate};

fn listed(content: AskContent) -> Listed {
    Listed {
        connection: 3,
        id: "1".to_owned(),
        from: "hook · orders · default".to_owned(),
        title: "Layout".to_owned(),
        tool_use_id: Some("toolu_1".to_owned()),
        pid: None,
        host: Some("devbox".to_owned()),
        agent: Some("hook".to_owned()),
        project: Some("orders".to_owned()),
        asked_at: Some(1_795_000_000),
        deadline_at: Some(1_795_000_300),
        kind: Some(AskKind::Question),
        content: Some(Box::new(content)),
    }
}

fn layout() -> Value {
    json!({"question": "Which layout?", "header": "Layout", "multiSelect": false, "options": [
        {"label": "Tabs", "description": "one pane", "preview": "[a|b|c]"},
        {"label": "Split", "description": "two panes"},
        {"label": "Grid", "description": "many panes"}]})
}

fn features() -> Value {
    json!({"question": "Which features?", "header": "Features", "multiSelect": true, "options": [
        {"label": "Search", "description": ""}, {"label": "Export", "description": "CSV"},
        {"label": "Sync", "description": "cloud"}]})
}

fn questions(questions: Vec<Value>) -> AskContent {
    AskContent::Question { questions: Value::Array(questions) }
}

fn one() -> AskContent {
    questions(vec![layout()])
}

fn two() -> AskContent {
    questions(vec![layout(), features()])
}

fn suggestions() -> Vec<Suggestion> {
    let raw = json!([
        {"type": "addDirectories", "directories": ["/home/dev/project"], "destination": "session"},
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]);
    crate::protocol::permission::parse_suggestions(Some(&raw))
}

fn bash(suggestions: Vec<Suggestion>) -> AskContent {
    AskContent::Approval {
        tool_name: "Bash".to_owned(),
        input: json!({"command": "rm -rf build", "description": "Clean"}),
        description: None,
        suggestions,
        plan: None,
    }
}

fn plan(text: &str) -> AskContent {
    AskContent::Approval {
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": text}),
        description: None,
        suggestions: Vec::new(),
        plan: Some(text.to_owned()),
    }
}

fn parsed(content: &AskContent, text: &str) -> Reply {
    parse_reply(content, text, &["askpane"]).unwrap_or_else(|refusal| panic!("{text:?}: {refusal}"))
}

fn refused(content: &AskContent, text: &str) -> String {
    match parse_reply(content, text, &["askpane"]) {
        Ok(reply) => panic!("{text:?} was taken as {reply:?}"),
        Err(Refusal(why)) => why,
    }
}

fn answer(pairs: &[(&str, &str)], notes: &[(&str, &str)]) -> Reply {
    let map = |pairs: &[(&str, &str)]| {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned()))).collect()
    };
    Reply::Answer { answers: map(pairs), notes: map(notes) }
}

// Rendering.

#[test]
fn who_asked_is_named_as_the_window_names_the_agent() {
    let asked_by = |agent: Option<&str>, from: &str| {
        let mut ask = listed(AskContent::Question { questions: json!([layout()]) });
        ask.agent = agent.map(str::to_owned);
        ask.from = from.to_owned();
        (ask.host, ask.project) = (None, None);
        let plain = render(&ask).expect("renders").plain;
        plain.lines().next().unwrap_or_default().to_owned()
    };
    // The window's words for each source (Provenance::agent), one owner.
    for (source, words) in [
        ("hook", "Claude Code (hook)"),
        ("codex-hook", "Codex (hook)"),
        ("opencode", "OpenCode"),
        ("claude", "askpane claude"),
        ("ask", "a script (askpane ask)"),
        ("mcp", "MCP"),
    ] {
        let expected = crate::protocol::origin::Provenance::new(source, None).agent();
        assert_eq!(expected, words, "the window's name of {source}");
        assert_eq!(asked_by(Some(source), "x"), format!("A question from {words}"));
    }
    // An older inbox sends no `agent`: the source is `from`'s first part.
    assert_eq!(asked_by(None, "hook · orders · default"), "A question from Claude Code (hook)");
    // Whatever a client calls itself is the agent's text: no mention gets through.
    assert_eq!(asked_by(Some("@room"), "x"), "A question from @\u{2060}room");
}

#[test]
fn a_question_is_rendered_with_who_asked_its_options_previews_and_deadline() {
    let message = render(&listed(two())).expect("renders");
    let plain = &message.plain;
    assert!(
        plain.starts_with("Questions from Claude Code (hook) in orders on devbox\n"),
        "{plain}"
    );
    assert!(plain.contains("Answer by 2026-11-18 11:11 UTC."), "{plain}");
    assert!(plain.contains("1. [Layout] Which layout? (one option)"), "{plain}");
    assert!(plain.contains("  1. Tabs — one pane\n```\n[a|b|c]\n```\n  2. Split"), "{plain}");
    assert!(plain.contains("2. [Features] Which features? (several options may be chosen"));
    assert!(plain.contains("  1. Search\n"), "{plain}");
    assert!(plain.ends_with("or `decline: why`, or `clarify`."), "{plain}");
    assert!(!message.cut);
    let html = &message.html;
    assert!(html.contains("<b>1. Layout</b>: Which layout? <i>(one option)</i>"), "{html}");
    assert!(html.contains("<pre><code>[a|b|c]</code></pre>"), "{html}");
    assert!(html.contains("<code>1: 2</code>"), "{html}");
}

#[test]
fn dates_are_utc_by_the_calendar() {
    assert_eq!(render::utc(0), "1970-01-01 00:00 UTC");
    assert_eq!(render::utc(951_782_400), "2000-02-29 00:00 UTC");
    assert_eq!(render::utc(1_795_000_300), "2026-11-18 11:11 UTC");
    assert_eq!(render::utc(4_102_444_799), "2099-12-31 23:59 UTC");
}

#[test]
fn hostile_text_injects_no_markup_and_mentions_nobody() {
    let hostile = json!({"question": "<a href=\"https://evil\">@room</a> & 'x'",
        "header": "<b>H</b>", "multiSelect": false, "options": [
        {"label": "<img src=x onerror=alert(1)>", "description": "ping @alice:example.org",
         "preview": "```\n</code></pre><script>alert(1)</script>\n````\n@room"},
        {"label": "B\u{7}\u{1b}[31m", "description": "d"}]});
    let message = render(&listed(questions(vec![hostile]))).expect("renders");
    let html = &message.html;
    for raw in ["<a ", "<img", "<script", "</code></pre><script", "<b>H</b>"] {
        assert!(!html.contains(raw), "{raw} in {html}");
    }
    assert!(html.contains("&lt;a href=&quot;https://evil&quot;&gt;"), "{html}");
    assert!(html.contains("&#39;x&#39;"), "{html}");
    for body in [&message.plain, &message.html] {
        assert!(!body.contains("@room"), "{body}");
        assert!(!body.contains("@alice"), "{body}");
        assert!(body.contains("@\u{2060}room"), "{body}");
        assert!(!body.contains('\u{7}') && !body.contains('\u{1b}'), "{body:?}");
    }
    // The preview's own fences cannot close its block: the block's fence is longer.
    assert!(message.plain.contains("\n`````\n```\n</code></pre>"), "{}", message.plain);
    assert!(message.plain.contains("\n````\n@\u{2060}room\n`````"), "{}", message.plain);
}

#[test]
fn a_megabyte_preview_is_cut_and_says_where_and_how_much() {
    let lines: Vec<String> = (0..40_000).map(|n| format!("line {n} of the preview")).collect();
    let huge = json!({"question": "Q?", "header": "H", "multiSelect": false, "options": [
        {"label": "A", "description": "", "preview": lines.join("\n")},
        {"label": "B", "description": ""}]});
    let message = render(&listed(questions(vec![huge]))).expect("renders");
    assert!(message.plain.len() <= MAX_BODY_BYTES && message.html.len() <= MAX_BODY_BYTES);
    let note = "… (cut from option 1's preview of question 1: ";
    let at = message.plain.find(note).unwrap_or_else(|| panic!("{}", message.plain));
    let rest = &message.plain[at + note.len()..];
    let hidden: usize = rest.split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
    let shown = message.plain.matches("of the preview").count();
    assert_eq!(shown + hidden, 40_000, "every line is either shown or counted");
    assert!(rest.contains("more lines; open the inbox to see it all)"), "{rest}");
    // The rest of the ask still shows: option B and the hint.
    assert!(message.plain.contains("  2. B"), "{}", message.plain);
    assert!(message.plain.ends_with("`decline: why`, or `clarify`."));
    // One line of a megabyte, and a megabyte of CJK: cut at a character, still bounded.
    for preview in ["x".repeat(1 << 20), "漢".repeat(400_000)] {
        let one = json!({"question": "Q?", "header": "H", "multiSelect": false,
            "options": [{"label": "A", "description": "", "preview": preview},
                        {"label": "B", "description": ""}]});
        let message = render(&listed(questions(vec![one]))).expect("renders");
        assert!(message.plain.len() <= MAX_BODY_BYTES, "{}", message.plain.len());
        assert!(message.plain.contains("(cut from option 1's preview of question 1: 1 more line;"));
    }
}

#[test]
fn many_large_options_are_cut_as_a_whole_and_the_hint_stays() {
    let options: Vec<Value> = (0..4)
        .map(|n| {
            json!({"label": format!("Option {n}"), "description": "d".repeat(5_000),
                        "preview": "p".repeat(5_000)})
        })
        .collect();
    let questions_value: Vec<Value> = (0..4)
        .map(|n| {
            json!({"question": format!("Q{n}?"), "header": format!("H{n}"),
                        "multiSelect": true, "options": options.clone()})
        })
        .collect();
    let message = render(&listed(questions(questions_value))).expect("renders");
    assert!(message.cut);
    assert!(message.plain.len() <= MAX_BODY_BYTES, "{}", message.plain.len());
    assert!(message.html.len() <= MAX_BODY_BYTES, "{}", message.html.len());
    assert!(message.plain.contains("more lines; open the inbox to see it all)"));
    assert!(message.plain.ends_with("or `clarify`."));
    assert!(message.html.ends_with("</p>"));
}

#[test]
fn a_tool_call_shows_its_command_the_rules_and_the_choices() {
    let mut ask = listed(bash(suggestions()));
    ask.kind = Some(AskKind::Approval);
    let message = render(&ask).expect("renders");
    let plain = &message.plain;
    assert!(
        plain.starts_with("A tool call to allow from Claude Code (hook) in orders on devbox"),
        "{plain}"
    );
    assert!(plain.contains("Tool: Bash\n```\nrm -rf build\n```"), "{plain}");
    assert!(plain.contains("  always 1: "), "{plain}");
    assert!(plain.contains("  always 2: "), "{plain}");
    assert!(
        plain.ends_with("Reply `allow`, `always 1` (allow, and add rule 1 above), or `deny: why`.")
    );
    let none = render(&listed(bash(Vec::new()))).expect("renders");
    assert!(none.plain.ends_with("Reply `allow`, or `deny: why`."), "{}", none.plain);
    // An edit shows its file and a short diff.
    let edit = AskContent::Approval {
        tool_name: "Edit".to_owned(),
        input: json!({"file_path": "/src/main.rs", "old_string": "a\nb", "new_string": "c"}),
        description: None,
        suggestions: Vec::new(),
        plan: None,
    };
    let message = render(&listed(edit)).expect("renders");
    assert!(
        message.plain.contains("File: /src/main.rs\n```\n- a\n- b\n+ c\n```"),
        "{}",
        message.plain
    );
}

#[test]
fn a_plan_shows_its_markdown_as_text_and_the_two_replies() {
    let message =
        render(&listed(plan("# Plan\n\n1. Build <it>\n```sh\nmake\n```"))).expect("renders");
    assert!(
        message.plain.starts_with("A plan to review from Claude Code (hook)"),
        "{}",
        message.plain
    );
    assert!(message.plain.contains("````\n# Plan\n\n1. Build <it>\n```sh\nmake\n```\n````"));
    assert!(message.html.contains("<pre><code># Plan\n\n1. Build &lt;it&gt;"), "{}", message.html);
    assert!(message.plain.ends_with("Reply `approve`, or `keep planning: what to change`."));
}

// Replies to questions.

#[test]
fn a_number_other_and_a_note_answer_one_question() {
    let content = one();
    assert_eq!(parsed(&content, "2"), answer(&[("0", "2")], &[]));
    assert_eq!(parsed(&content, "  2  "), answer(&[("0", "2")], &[]));
    assert_eq!(parsed(&content, "1: 3"), answer(&[("0", "3")], &[]));
    assert_eq!(parsed(&content, "other: a sidebar"), answer(&[("0", "other:a sidebar")], &[]));
    assert_eq!(parsed(&content, "OTHER : a, b"), answer(&[("0", "other:a, b")], &[]));
    assert_eq!(
        parsed(&content, "2\nnote: keep it small"),
        answer(&[("0", "2")], &[("0", "keep it small")])
    );
    assert_eq!(
        parsed(&content, "other: line one\nline two\n\nline four"),
        answer(&[("0", "other:line one\nline two\n\nline four")], &[])
    );
}

#[test]
fn several_options_and_several_questions_are_one_line_each() {
    let content = two();
    assert_eq!(parsed(&content, "1: 2\n2: 1,3"), answer(&[("0", "2"), ("1", "1,3")], &[]));
    assert_eq!(parsed(&content, "2: 3,1,3"), answer(&[("1", "1,3")], &[]));
    assert_eq!(
        parsed(&content, "2: 1, 3, other: webhooks\n1: 1\n1 note: tabs only"),
        answer(&[("0", "1"), ("1", "1,3,other:webhooks")], &[("0", "tabs only")])
    );
    assert_eq!(parsed(&content, "2: note: later\n2: 2"), answer(&[("1", "2")], &[("1", "later")]));
    // One question answered: the other is left unanswered, as the window allows.
    assert_eq!(parsed(&content, "2: 3"), answer(&[("1", "3")], &[]));
}

#[test]
fn replies_that_do_not_fit_are_refused_with_why() {
    let content = two();
    assert_eq!(refused(&content, "2: 5"), "question 2 has options 1–3; 5 is not one");
    assert_eq!(refused(&one(), "5"), "this question has options 1–3; 5 is not one");
    assert_eq!(refused(&one(), "0"), "this question has options 1–3; 0 is not one");
    assert_eq!(refused(&one(), "1,2"), "this question takes one option; you gave 2");
    assert_eq!(refused(&content, "1: 1,2"), "question 1 takes one option; you gave 2");
    assert_eq!(refused(&one(), "1, other: x"), "this question takes one option; you gave 2");
    assert!(refused(&content, "2").starts_with("ambiguous: this ask has 2 questions"));
    assert!(refused(&content, "note: hi").starts_with("ambiguous: this ask has 2 questions"));
    assert_eq!(refused(&content, "1: 1\n1: 2"), "ambiguous: question 1 is answered twice");
    assert_eq!(refused(&content, "3: 1"), "this ask has questions 1–2; there is no question 3");
    assert_eq!(refused(&one(), "2: 1"), "this ask has one question; there is no question 2");
    assert!(refused(&one(), "tabs please").starts_with("not understood: \"tabs please\""));
    assert!(refused(&one(), "note: only a note").starts_with("nothing to send"));
    assert_eq!(refused(&one(), "other:"), "`other:` needs your words after it (this question)");
    assert!(refused(&one(), "allow").starts_with("this is a question, not a tool call"));
    assert_eq!(refused(&one(), ""), "the reply is empty");
    assert_eq!(refused(&one(), "@askpane:example.org"), "the reply is empty");
    assert!(refused(&one(), "1\u{7}").contains("control character (U+0007)"));
    assert!(refused(&one(), "other: \u{1b}[31mred").contains("U+001B"));
    assert!(refused(&one(), "clarify please").starts_with("`clarify` takes no words"));
}

#[test]
fn decline_and_clarify_are_keywords_in_any_case() {
    assert_eq!(parsed(&one(), "decline: not now"), Reply::Decline { message: "not now".into() });
    assert_eq!(parsed(&one(), "Decline"), Reply::Decline { message: String::new() });
    assert_eq!(parsed(&two(), "DECLINE : ask Bob"), Reply::Decline { message: "ask Bob".into() });
    assert_eq!(parsed(&one(), "clarify"), Reply::Clarify);
    assert_eq!(parsed(&two(), " Clarify \n"), Reply::Clarify);
    let long = "x".repeat(crate::protocol::limits::MAX_DECLINE_LENGTH + 1);
    assert!(refused(&one(), &format!("decline: {long}")).starts_with("the decline's message"));
}

#[test]
fn a_leading_mention_and_quoted_lines_are_skipped() {
    let content = one();
    for text in [
        "@askpane:example.org: 2",
        "@askpane 2",
        "askpane: 2",
        "Askpane, 2",
        "> <@bot:example.org> A question from hook\n> 1. Tabs\n\n2",
        "> quoted\n@askpane:example.org 2",
    ] {
        assert_eq!(parsed(&content, text), answer(&[("0", "2")], &[]), "{text:?}");
    }
    // Only a leading mention: one inside the text is the person's.
    assert_eq!(parsed(&content, "other: ask @alice"), answer(&[("0", "other:ask @alice")], &[]));
}

#[test]
fn cjk_and_long_texts_pass_whole_up_to_the_host_s_limit() {
    let text: String = "漢字かな交じり文".chars().cycle().take(32_768).collect();
    assert_eq!(
        parsed(&one(), &format!("other: {text}")),
        answer(&[("0", &format!("other:{text}"))], &[])
    );
    let over = refused(&one(), &format!("other: {text}字"));
    assert!(over.contains("32769"), "{over}");
    assert_eq!(
        parsed(&one(), "other: 表示はタブで\nnote: 日本語のメモ"),
        answer(&[("0", "other:表示はタブで")], &[("0", "日本語のメモ")])
    );
    // Hostile markup in a reply is the person's words, sent as they are.
    assert_eq!(
        parsed(&one(), "other: <b>@room</b> ```"),
        answer(&[("0", "other:<b>@room</b> ```")], &[])
    );
}

#[test]
fn a_secret_question_takes_no_words_in_a_chat() {
    let secret = json!({"question": "Token?", "header": "Token", "multiSelect": false,
        "isSecret": true, "options": [{"label": "Skip", "description": ""},
                                      {"label": "Later", "description": ""}]});
    let content = questions(vec![secret]);
    let Some(Shape::Questions(ask)) = Shape::of(&content) else { panic!("questions") };
    assert!(ask.questions().first().is_some_and(|q| q.secret()));
    assert!(refused(&content, "other: hunter2").contains("is a secret"));
    assert_eq!(parsed(&content, "2"), answer(&[("0", "2")], &[]));
    assert!(polls(&content).is_empty());
    let message = render(&listed(content.clone())).expect("renders");
    assert!(message.plain.contains("The answer is a secret"), "{}", message.plain);
}

// Replies to tool calls and plans.

#[test]
fn tool_calls_are_allowed_always_allowed_or_denied() {
    let decide = |decision, suggestion, message: &str| Reply::Decide {
        decision,
        suggestion,
        message: message.to_owned(),
    };
    let two_rules = bash(suggestions());
    assert_eq!(parsed(&two_rules, "allow"), decide(FrontEndDecision::Allow, None, ""));
    assert_eq!(parsed(&two_rules, "ALLOW "), decide(FrontEndDecision::Allow, None, ""));
    assert_eq!(parsed(&two_rules, "always 2"), decide(FrontEndDecision::AllowAlways, Some(1), ""));
    assert!(refused(&two_rules, "always").starts_with("ambiguous: there are 2 rules to add"));
    assert_eq!(refused(&two_rules, "always 3"), "the rules to add are 1–2; \"3\" is not one");
    let mut one_rule = suggestions();
    one_rule.truncate(1);
    assert_eq!(
        parsed(&bash(one_rule), "Always"),
        decide(FrontEndDecision::AllowAlways, Some(0), "")
    );
    assert!(refused(&bash(Vec::new()), "always").starts_with("this tool call offers no rule"));
    assert_eq!(
        parsed(&two_rules, "deny: use make clean"),
        decide(FrontEndDecision::Deny, None, "use make clean")
    );
    assert_eq!(parsed(&two_rules, "Deny"), decide(FrontEndDecision::Deny, None, ""));
    assert!(refused(&two_rules, "2").starts_with("not understood: reply `allow`"));
    assert!(refused(&two_rules, "allow it").starts_with("not understood"));
    assert!(refused(&two_rules, "clarify").starts_with("this is a tool call to decide"));
}

#[test]
fn plans_are_approved_or_sent_back_with_feedback() {
    let content = plan("# Plan");
    let approve = Reply::Decide {
        decision: FrontEndDecision::Allow,
        suggestion: None,
        message: String::new(),
    };
    assert_eq!(parsed(&content, "approve"), approve);
    assert_eq!(parsed(&content, "@askpane Approve"), approve);
    assert_eq!(
        parsed(&content, "keep planning: split step 2\nand test it"),
        Reply::Decide {
            decision: FrontEndDecision::Deny,
            suggestion: None,
            message: "split step 2\nand test it".to_owned()
        }
    );
    assert_eq!(
        parsed(&content, "Keep  Planning:更に"),
        Reply::Decide {
            decision: FrontEndDecision::Deny,
            suggestion: None,
            message: "更に".into()
        }
    );
    assert!(refused(&content, "keep going").starts_with("not understood: reply `approve`"));
}

// Polls.

#[test]
fn each_question_is_a_poll_and_chosen_ids_are_its_answer() {
    let content = two();
    let polls = polls(&content);
    assert_eq!(polls.len(), 2);
    let first = polls.first().expect("a poll");
    assert_eq!(first.text, "Layout: Which layout?");
    assert_eq!(first.max_selections, 1);
    let ids: Vec<&str> = first.answers.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3"]);
    assert_eq!(first.answers.first().map(|a| a.text.as_str()), Some("Tabs — one pane"));
    assert_eq!(polls.get(1).map(|p| p.max_selections), Some(3));
    assert_eq!(poll_reply(&content, 1, &["3", "1"]), Ok(answer(&[("1", "1,3")], &[])));
    assert_eq!(poll_reply(&content, 0, &["2"]), Ok(answer(&[("0", "2")], &[])));
    let refusal = |result: Result<Reply, Refusal>| result.expect_err("refused").0;
    assert_eq!(
        refusal(poll_reply(&content, 0, &["1", "2"])),
        "this question takes one option; you gave 2"
    );
    assert_eq!(refusal(poll_reply(&content, 0, &["9"])), "\"9\" is not one of the poll's options");
    assert_eq!(refusal(poll_reply(&content, 0, &[])), "no option chosen");
    assert_eq!(refusal(poll_reply(&content, 5, &["1"])), "the ask has no poll for question 6");
    assert!(super::polls(&bash(Vec::new())).is_empty());
    // A poll's text is made safe too.
    let hostile = questions(vec![
        json!({"question": "@room?", "header": "H", "multiSelect": false,
        "options": [{"label": "@everyone", "description": ""}, {"label": "b", "description": ""}]}),
    ]);
    let poll = super::polls(&hostile).into_iter().next().expect("a poll");
    assert!(
        !poll.text.contains("@room") && !poll.answers.iter().any(|a| a.text.contains("@every"))
    );
}

// The round trip.

/// The outcome the socket's answer makes, by the page's (and so the socket's) rules.
fn outcome_of(content: &AskContent, reply: Reply) -> Outcome {
    let AskContent::Question { questions } = content else { panic!("a question") };
    let ask = validate(&json!({ "questions": questions })).expect("valid").ask;
    let line = serde_json::to_value(reply.message(3, "1".into(), "@alice".into())).expect("JSON");
    let picks = PagePicks {
        answers: Sent::Given(line["answers"].as_object().cloned().unwrap_or_default()),
        notes: Sent::Given(line["notes"].as_object().cloned().unwrap_or_default()),
    };
    let body = PageForm { tool_use_id: Sent::Absent, picks, response: Sent::Absent };
    match line["type"].as_str() {
        Some("answer") => answer_outcome(&ask, &body, false).expect("an outcome"),
        Some("clarify") => clarify_outcome(&ask, &body).expect("an outcome"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_person_s_reply_becomes_what_the_window_would_send() {
    let content = two();
    let message = render(&listed(content.clone())).expect("renders");
    assert!(message.plain.contains("`1: 2`"));
    // The person picks Split, then Search and Sync with Other, and notes the first.
    let reply =
        parsed(&content, "@askpane:example.org: 1: 2\n2: 1,3, other: webhooks\n1 note: a tab bar");
    let from_chat = outcome_of(&content, reply);
    // The window: the same picks in its drafts.
    let AskContent::Question { questions } = &content else { panic!() };
    let ask = validate(&json!({ "questions": questions })).expect("valid").ask;
    let qs = ask.questions();
    let mut first = Draft::default();
    first.pick(&qs[0], Pick::Option(1));
    first.set_notes("a tab bar".to_owned());
    let mut second = Draft::default();
    second.pick(&qs[1], Pick::Option(0));
    second.pick(&qs[1], Pick::Option(2));
    second.pick(&qs[1], Pick::Other);
    second.set_other_text(&qs[1], "webhooks".to_owned());
    let drafts = [first, second];
    let window = Outcome::submitted(&ask, build_answers(&ask, &drafts).expect("answers"), false);
    assert_eq!(from_chat, window);
    // "Chat about this" with nothing picked, as the window's button sends it.
    assert_eq!(outcome_of(&content, parsed(&content, "clarify")), Outcome::clarify(&ask, &[]));
    // The socket line, as docs/src/inbox-socket.md shows it.
    let line = parsed(&one(), "2").message(3, "1".into(), "@alice:example.org".into());
    assert_eq!(
        serde_json::to_string(&line).expect("JSON"),
        r#"{"type":"answer","connection":3,"id":"1","answers":{"0":"2"},"answered_by":"@alice:example.org"}"#
    );
    let line = parsed(&bash(suggestions()), "always 2").message(3, "2".into(), "@a".into());
    assert_eq!(
        serde_json::to_string(&line).expect("JSON"),
        r#"{"type":"decide","connection":3,"id":"2","decision":"allow_always","suggestion":1,"message":"","answered_by":"@a"}"#
    );
}

/// What a bridge writes of the agent's text outside a rendered message (the title in the edit
/// saying how an ask ended) is made safe the same way: no mention pings, no control characters,
/// one line, and the HTML escaped.
#[test]
fn an_agent_s_title_outside_the_message_pings_nobody_and_injects_nothing() {
    let title = super::field("@room <b>now</b>\n\u{7}ship it");
    assert!(!title.contains("@room"), "{title:?}");
    assert!(title.contains("@\u{2060}room"), "{title:?}");
    assert!(!title.contains('\n') && !title.contains('\u{7}'), "{title:?}");
    let html = super::html(&title);
    assert!(!html.contains("<b>") && html.contains("&lt;b&gt;"), "{html}");
}

/// Found by tests/matrix/claude.rs: a decline from a room reached the model as the bare words
/// ("not now, ask Bob") where the window's reads "The user declined … and said: not now, ask Bob".
#[test]
fn a_decline_sends_the_window_s_wording_around_the_words() {
    let message = |text: &str| match parsed(&one(), text).message(3, "1".into(), "@a".into()) {
        crate::protocol::inbox::ClientMessage::Decline { message, .. } => message,
        other => panic!("not a decline: {other:?}"),
    };
    let said = "The user declined to answer these questions and said: not now";
    assert_eq!(message("decline: not now"), said);
    assert_eq!(message("decline"), crate::protocol::outcome::decline_message(""));
}
