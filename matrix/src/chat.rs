//! The chat text of an ask and of a reply: an ask rendered as one message (plain and HTML), the
//! polls' questions, and a thread reply parsed into the socket verb to send, or a refusal that
//! says why. Pure: no IO, no Matrix types.
//!
//! LOCAL STAND-IN: the `frontend` branch writes the shared chat grammar as
//! `askpane::protocol::chat`; once it is merged this module is replaced by it (the rendering and
//! the grammar belong to every chat front end, not to this bridge alone).

use serde_json::{Map, Value};

use askpane::protocol::inbox::{AskContent, FrontEndDecision, Listed};

/// One question of an ask, as the bridge needs it (read from `list full`'s content).
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub header: String,
    pub text: String,
    pub multi_select: bool,
    pub options: Vec<Choice>,
}

/// One option of a question.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub label: String,
    pub description: String,
    pub preview: Option<String>,
}

/// What an ask asks, as the chat shows and answers it.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    Questions(Vec<Question>),
    /// A tool call to allow; `plan` for an ExitPlanMode plan to review.
    Approval {
        tool_name: String,
        summary: String,
        can_always: bool,
        plan: Option<String>,
    },
}

impl Ask {
    /// The ask in `content`, or `None` for content the bridge cannot show (then it posts nothing).
    pub fn of(content: &AskContent) -> Option<Ask> {
        match content {
            AskContent::Question { questions } => {
                let questions =
                    questions.as_array()?.iter().map(question_of).collect::<Option<Vec<_>>>()?;
                Some(Ask::Questions(questions))
            }
            AskContent::Approval { tool_name, input, description, suggestions, plan } => {
                let summary = description.clone().unwrap_or_else(|| input_summary(input));
                Some(Ask::Approval {
                    tool_name: tool_name.clone(),
                    summary,
                    can_always: !suggestions.is_empty(),
                    plan: plan.clone(),
                })
            }
        }
    }

    pub fn questions(&self) -> &[Question] {
        match self {
            Ask::Questions(questions) => questions,
            Ask::Approval { .. } => &[],
        }
    }
}

fn question_of(value: &Value) -> Option<Question> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let options = value
        .get("options")
        .and_then(Value::as_array)
        .map(|options| {
            options
                .iter()
                .map(|option| Choice {
                    label: option
                        .get("label")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    description: option
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    preview: option.get("preview").and_then(Value::as_str).map(str::to_owned),
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Question {
        header: text("header"),
        text: text("question"),
        multi_select: value.get("multiSelect").and_then(Value::as_bool).unwrap_or(false),
        options,
    })
}

/// A tool call's input in one line: the command of a Bash call, the file of an edit, else JSON.
fn input_summary(input: &Value) -> String {
    for key in ["command", "file_path", "path", "url"] {
        if let Some(text) = input.get(key).and_then(Value::as_str) {
            return text.to_owned();
        }
    }
    let json = input.to_string();
    shorten(&json, 400)
}

fn shorten(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// The agent's name as a person knows it, from `list`'s `agent` (`hook` is Claude Code's hook).
pub fn agent_name(listed: &Listed) -> String {
    match listed.agent.as_deref() {
        Some("hook" | "claude") => "Claude Code".to_owned(),
        Some("codex") => "Codex".to_owned(),
        Some("opencode") => "OpenCode".to_owned(),
        Some("mcp") => "an MCP client".to_owned(),
        Some("acp") => "an ACP agent".to_owned(),
        Some("ask") => "askpane ask".to_owned(),
        Some(other) => other.to_owned(),
        None => listed.from.clone(),
    }
}

/// The ask's one room message: plain text and HTML.
pub struct Rendered {
    pub plain: String,
    pub html: String,
}

/// Renders the ask's message: who asked (agent, project, host), the questions with numbered
/// options, previews as code blocks, the deadline, and how to answer.
pub fn render(listed: &Listed, ask: &Ask, now: u64) -> Rendered {
    let mut plain = String::new();
    let mut html = String::new();
    let mut who = agent_name(listed);
    if let Some(project) = &listed.project {
        who.push_str(&format!(" in {project}"));
    }
    if let Some(host) = &listed.host {
        who.push_str(&format!(" on {host}"));
    }
    match ask {
        Ask::Questions(questions) => {
            plain.push_str(&format!("{who} asks:\n"));
            html.push_str(&format!("<p><b>{}</b> asks:</p>", escape(&who)));
            let numbered = questions.len() > 1;
            for (index, question) in questions.iter().enumerate() {
                let number = if numbered { format!("#{} ", index + 1) } else { String::new() };
                let kind = if question.multi_select { " (one or more)" } else { "" };
                plain
                    .push_str(&format!("\n{number}{}: {}{kind}\n", question.header, question.text));
                html.push_str(&format!(
                    "<p>{}<b>{}</b>: {}{}</p><ol>",
                    escape(&number),
                    escape(&question.header),
                    escape(&question.text),
                    escape(kind)
                ));
                for (option_index, option) in question.options.iter().enumerate() {
                    let description = if option.description.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", option.description)
                    };
                    plain.push_str(&format!(
                        "  {}. {}{description}\n",
                        option_index + 1,
                        option.label
                    ));
                    html.push_str(&format!(
                        "<li>{}{}",
                        escape(&option.label),
                        escape(&description)
                    ));
                    if let Some(preview) = &option.preview {
                        plain.push_str(&format!("```\n{preview}\n```\n"));
                        html.push_str(&format!("<pre><code>{}</code></pre>", escape(preview)));
                    }
                    html.push_str("</li>");
                }
                html.push_str("</ol>");
            }
            let how = if numbered {
                "Vote in the polls, or reply in this thread: `#1 2`, `#2 1,3`, `#1 other: …`, `#1 note: …` (one line each), or `decline: …`."
            } else {
                "Vote in the poll, or reply in this thread: `2`, `1,3`, `other: …`, `note: …`, or `decline: …`."
            };
            plain.push_str(&format!("\n{how}"));
            html.push_str(&format!("<p>{}</p>", escape(how)));
        }
        Ask::Approval { tool_name, summary, can_always, plan } => {
            match plan {
                Some(plan) => {
                    plain.push_str(&format!("{who} asks you to review its plan:\n\n{plan}\n"));
                    html.push_str(&format!(
                        "<p><b>{}</b> asks you to review its plan:</p><pre><code>{}</code></pre>",
                        escape(&who),
                        escape(plan)
                    ));
                }
                None => {
                    plain.push_str(&format!(
                        "{who} asks to run {tool_name}:\n```\n{summary}\n```\n"
                    ));
                    html.push_str(&format!(
                        "<p><b>{}</b> asks to run {}:</p><pre><code>{}</code></pre>",
                        escape(&who),
                        escape(tool_name),
                        escape(summary)
                    ));
                }
            }
            let how = match (plan.is_some(), can_always) {
                (true, _) => "Reply in this thread: `approve`, or `keep planning: …`.",
                (false, true) => "Reply in this thread: `allow`, `always`, or `deny: …`.",
                (false, false) => "Reply in this thread: `allow`, or `deny: …`.",
            };
            plain.push_str(&format!("\n{how}"));
            html.push_str(&format!("<p>{}</p>", escape(how)));
        }
    }
    if let Some(deadline) = listed.deadline_at {
        let left = deadline.saturating_sub(now);
        let line = format!("Answer within {} (by {} UTC).", duration(left), clock(deadline));
        plain.push_str(&format!("\n{line}"));
        html.push_str(&format!("<p>{}</p>", escape(&line)));
    }
    Rendered { plain, html }
}

fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs.div_ceil(60)),
        _ => format!("{} h {} min", secs / 3600, (secs % 3600) / 60),
    }
}

/// `HH:MM` of a Unix time, in UTC.
fn clock(unix: u64) -> String {
    let of_day = unix % 86_400;
    format!("{:02}:{:02}", of_day / 3600, (of_day % 3600) / 60)
}

/// Text for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            other => out.push(other),
        }
    }
    out
}

/// A poll's text for question `index` of `count`.
pub fn poll_question(question: &Question, index: usize, count: usize) -> String {
    if count > 1 {
        format!("#{} {}: {}", index + 1, question.header, question.text)
    } else {
        format!("{}: {}", question.header, question.text)
    }
}

/// What a reply asks the bridge to send.
#[derive(Clone, Debug, PartialEq)]
pub enum Verb {
    /// `answer`: by question index, the option numbers (from 1) and `other:` text, and notes.
    Answer {
        answers: Map<String, Value>,
        notes: Map<String, Value>,
    },
    Decline {
        message: String,
    },
    Decide {
        decision: FrontEndDecision,
        suggestion: Option<usize>,
        message: String,
    },
}

/// One question's answer from a reply line: the choices (option numbers from 1), Other's text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Picked {
    pub choices: Vec<usize>,
    pub other: Option<String>,
    pub note: Option<String>,
}

/// Parses a thread reply to `ask`. `votes` holds what the polls already say (question index →
/// option numbers); a reply that answers only some questions takes the rest from them.
pub fn parse_reply(ask: &Ask, text: &str, votes: &[Option<Vec<usize>>]) -> Result<Verb, String> {
    let text = text.trim();
    let lower = text.to_lowercase();
    if let Some(message) = after(text, &lower, "decline") {
        return Ok(Verb::Decline { message });
    }
    match ask {
        Ask::Approval { can_always, plan, .. } => {
            parse_decision(text, &lower, *can_always, plan.is_some())
        }
        Ask::Questions(questions) => {
            let mut picked: Vec<Picked> = vec![Picked::default(); questions.len()];
            let mut given = vec![false; questions.len()];
            for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
                let (index, rest) = question_of_line(line, questions.len())?;
                let question = questions.get(index).ok_or("no such question")?;
                let slot = picked.get_mut(index).ok_or("no such question")?;
                parse_line(question, rest, slot)?;
                if let Some(mark) = given.get_mut(index) {
                    *mark |= !slot.choices.is_empty() || slot.other.is_some();
                }
            }
            let mut answers = Map::new();
            let mut notes = Map::new();
            let mut missing = Vec::new();
            for (index, (question, slot)) in questions.iter().zip(&picked).enumerate() {
                let mut parts: Vec<String> = if given.get(index).copied().unwrap_or(false) {
                    slot.choices.iter().map(usize::to_string).collect()
                } else {
                    votes
                        .get(index)
                        .cloned()
                        .flatten()
                        .unwrap_or_default()
                        .iter()
                        .map(usize::to_string)
                        .collect()
                };
                if let Some(other) = &slot.other {
                    parts.push(format!("other:{other}"));
                }
                if parts.is_empty() {
                    missing.push(if questions.len() > 1 {
                        format!("#{} {}", index + 1, question.header)
                    } else {
                        question.header.clone()
                    });
                    continue;
                }
                answers.insert(index.to_string(), Value::String(parts.join(",")));
                if let Some(note) = &slot.note {
                    notes.insert(index.to_string(), Value::String(note.clone()));
                }
            }
            if !missing.is_empty() {
                return Err(format!(
                    "still to answer: {} (vote in its poll, or reply with the option's number)",
                    missing.join(", ")
                ));
            }
            Ok(Verb::Answer { answers, notes })
        }
    }
}

fn parse_decision(
    text: &str,
    lower: &str,
    can_always: bool,
    is_plan: bool,
) -> Result<Verb, String> {
    let decide =
        |decision, suggestion, message: String| Ok(Verb::Decide { decision, suggestion, message });
    if is_plan {
        if lower == "approve" {
            return decide(FrontEndDecision::Allow, None, String::new());
        }
        if let Some(message) = after(text, lower, "keep planning") {
            return decide(FrontEndDecision::Deny, None, message);
        }
        return Err("reply `approve`, or `keep planning: …` with what to change".to_owned());
    }
    match lower {
        "allow" => decide(FrontEndDecision::Allow, None, String::new()),
        "always" if can_always => decide(FrontEndDecision::AllowAlways, Some(0), String::new()),
        "always" => {
            Err("this tool call offers no rule to always allow: reply `allow` or `deny: …`"
                .to_owned())
        }
        _ => match after(text, lower, "deny") {
            Some(message) => decide(FrontEndDecision::Deny, None, message),
            None => Err("reply `allow`, `always` or `deny: …`".to_owned()),
        },
    }
}

/// The text after `word` (`word` alone, or `word: text`), keeping the original case.
fn after(text: &str, lower: &str, word: &str) -> Option<String> {
    if lower == word {
        return Some(String::new());
    }
    let rest = lower.strip_prefix(word)?;
    let rest = rest.trim_start();
    rest.strip_prefix(':')?;
    let skip = text.len() - rest.len() + 1;
    Some(text.get(skip..).unwrap_or_default().trim().to_owned())
}

/// `#2 1,3` → question 1 (from 0) and `1,3`; without `#N`, question 0 when there is one.
fn question_of_line(line: &str, count: usize) -> Result<(usize, &str), String> {
    if let Some(rest) = line.strip_prefix('#') {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let number: usize = digits
            .parse()
            .map_err(|_| format!("`{line}`: `#` must be followed by a question's number"))?;
        if number == 0 || number > count {
            return Err(format!("`{line}`: there is no question #{number} (this ask has {count})"));
        }
        let rest = rest.get(digits.len()..).unwrap_or_default().trim();
        return Ok((number - 1, rest));
    }
    if count == 1 {
        Ok((0, line))
    } else {
        Err(format!("this ask has {count} questions: start each line with its number, e.g. `#2 1`"))
    }
}

fn parse_line(question: &Question, rest: &str, slot: &mut Picked) -> Result<(), String> {
    let lower = rest.to_lowercase();
    if let Some(note) = after(rest, &lower, "note") {
        slot.note = Some(note);
        return Ok(());
    }
    if let Some(other) = after(rest, &lower, "other") {
        if other.is_empty() {
            return Err("`other:` needs your answer after the colon".to_owned());
        }
        slot.other = Some(other);
        return Ok(());
    }
    let mut choices = Vec::new();
    for part in rest.split(',').map(str::trim).filter(|part| !part.is_empty()) {
        let number: usize = part.parse().map_err(|_| {
            format!("`{rest}` is not an answer: reply an option's number (`2`), several (`1,3`), `other: …`, `note: …` or `decline: …`")
        })?;
        if number == 0 || number > question.options.len() {
            return Err(format!(
                "{}: there is no option {number} (it has {})",
                question.header,
                question.options.len()
            ));
        }
        if !choices.contains(&number) {
            choices.push(number);
        }
    }
    if choices.is_empty() {
        return Err(format!("`{rest}` is not an answer"));
    }
    if choices.len() > 1 && !question.multi_select {
        return Err(format!("{} takes one option, not {}", question.header, choices.len()));
    }
    slot.choices = choices;
    Ok(())
}

/// What was sent, as the confirmation says it (`Layout = Tabs`).
pub fn describe(ask: &Ask, verb: &Verb) -> String {
    match verb {
        Verb::Decline { message } if message.is_empty() => "declined".to_owned(),
        Verb::Decline { message } => format!("declined: {message}"),
        Verb::Decide { decision: FrontEndDecision::Allow, .. } => match ask {
            Ask::Approval { plan: Some(_), .. } => "plan approved".to_owned(),
            _ => "allowed".to_owned(),
        },
        Verb::Decide { decision: FrontEndDecision::AllowAlways, .. } => "always allowed".to_owned(),
        Verb::Decide { decision: FrontEndDecision::Deny, message, .. } => match ask {
            Ask::Approval { plan: Some(_), .. } => format!("keep planning: {message}"),
            _ if message.is_empty() => "denied".to_owned(),
            _ => format!("denied: {message}"),
        },
        Verb::Answer { answers, notes } => {
            let questions = ask.questions();
            let mut parts = Vec::new();
            for (index, question) in questions.iter().enumerate() {
                let Some(answer) = answers.get(&index.to_string()).and_then(Value::as_str) else {
                    continue;
                };
                let mut labels = Vec::new();
                let mut rest = answer;
                while !rest.is_empty() {
                    if let Some(other) = rest.strip_prefix("other:") {
                        labels.push(other.to_owned());
                        break;
                    }
                    let (part, tail) = rest.split_once(',').unwrap_or((rest, ""));
                    let label = part
                        .parse::<usize>()
                        .ok()
                        .and_then(|number| question.options.get(number.wrapping_sub(1)))
                        .map_or(part, |option| option.label.as_str());
                    labels.push(label.to_owned());
                    rest = tail;
                }
                let mut line = format!("{} = {}", question.header, labels.join(", "));
                if let Some(note) = notes.get(&index.to_string()).and_then(Value::as_str) {
                    line.push_str(&format!(" (note: {note})"));
                }
                parts.push(line);
            }
            parts.join("; ")
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ask(multi: bool, count: usize) -> Ask {
        let question = |header: &str| Question {
            header: header.to_owned(),
            text: "Which?".to_owned(),
            multi_select: multi,
            options: ["Tabs", "Spaces", "Both"]
                .iter()
                .map(|label| Choice {
                    label: (*label).to_owned(),
                    description: String::new(),
                    preview: None,
                })
                .collect(),
        };
        Ask::Questions((0..count).map(|index| question(&format!("Q{index}"))).collect())
    }

    #[test]
    fn replies_become_the_verbs_the_window_would_send() {
        let single = ask(false, 1);
        let Verb::Answer { answers, notes } =
            parse_reply(&single, "2", &[None]).expect("an answer")
        else {
            panic!()
        };
        assert_eq!(Value::Object(answers), json!({"0": "2"}));
        assert!(notes.is_empty());
        let reply = parse_reply(&single, "Other: Both, kind of\nnote: because", &[None])
            .expect("an answer");
        let Verb::Answer { answers, notes } = &reply else { panic!() };
        assert_eq!(Value::Object(answers.clone()), json!({"0": "other:Both, kind of"}));
        assert_eq!(Value::Object(notes.clone()), json!({"0": "because"}));
        assert_eq!(describe(&single, &reply), "Q0 = Both, kind of (note: because)");
        assert!(
            parse_reply(&single, "1,3", &[None])
                .expect_err("one only")
                .contains("takes one option")
        );
        assert!(parse_reply(&single, "4", &[None]).expect_err("no 4").contains("no option 4"));
        assert!(parse_reply(&single, "tabs please", &[None]).is_err());
        assert_eq!(
            parse_reply(&single, "Decline: not now", &[None]),
            Ok(Verb::Decline { message: "not now".to_owned() })
        );
        let multi = ask(true, 2);
        let reply = parse_reply(&multi, "#1 1,3\n#2 note: fine", &[None, Some(vec![2])])
            .expect("an answer");
        let Verb::Answer { answers, .. } = &reply else { panic!() };
        assert_eq!(Value::Object(answers.clone()), json!({"0": "1,3", "1": "2"}));
        assert_eq!(describe(&multi, &reply), "Q0 = Tabs, Both; Q1 = Spaces (note: fine)");
        assert!(
            parse_reply(&multi, "1", &[None, None]).expect_err("which").contains("2 questions")
        );
        assert!(parse_reply(&multi, "#1 1", &[None, None]).expect_err("missing").contains("#2 Q1"));
        assert!(parse_reply(&multi, "#3 1", &[None, None]).is_err());
    }

    #[test]
    fn approvals_and_plans_take_their_own_words() {
        let tool = Ask::Approval {
            tool_name: "Bash".into(),
            summary: "ls".into(),
            can_always: true,
            plan: None,
        };
        assert_eq!(
            parse_reply(&tool, "always", &[]),
            Ok(Verb::Decide {
                decision: FrontEndDecision::AllowAlways,
                suggestion: Some(0),
                message: String::new()
            })
        );
        assert_eq!(
            parse_reply(&tool, "deny: use make clean", &[]),
            Ok(Verb::Decide {
                decision: FrontEndDecision::Deny,
                suggestion: None,
                message: "use make clean".into()
            })
        );
        assert!(parse_reply(&tool, "approve", &[]).is_err());
        let plan = Ask::Approval {
            tool_name: "ExitPlanMode".into(),
            summary: String::new(),
            can_always: false,
            plan: Some("1. x".into()),
        };
        assert_eq!(
            parse_reply(&plan, "keep planning: add tests", &[]),
            Ok(Verb::Decide {
                decision: FrontEndDecision::Deny,
                suggestion: None,
                message: "add tests".into()
            })
        );
        assert!(parse_reply(&plan, "allow", &[]).is_err());
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(escape("<b>&\"x\""), "&lt;b&gt;&amp;&quot;x&quot;");
    }
}
