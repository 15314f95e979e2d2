//! `askpane history`: what was asked and how it ended, from the store: a table by default,
//! `--json` lines for scripts, filters by time, project, kind (questions, tool approvals, plans)
//! and text; `--prune` (`--keep-days`), `--prune-before` and `--keep` apply a retention, and
//! `--vacuum` gives the space freed back to the disk.

use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use clap::Args;

use askpane::protocol::history::HistoryKind;
use askpane::store::{DEFAULT_KEEP_DAYS, HistoryEntry, HistoryQuery};

use super::args::StoreArgs;
use super::exit;

/// What the listing takes: pruning and vacuuming take none of it.
const LISTING: [&str; 7] = ["json", "since", "project", "search", "kind", "host", "limit"];

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("pruning").multiple(false).conflicts_with_all(LISTING))]
pub(super) struct HistoryArgs {
    /// One JSON object per line instead of the table.
    #[arg(long)]
    json: bool,
    /// Only what ended since then: a duration back from now (`90m`, `12h`, `3d`, `2weeks`), a
    /// date (`2026-11-01`, UTC midnight) or a time (`2026-11-01T09:30:00Z`).
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    since: Option<SystemTime>,
    /// Only what this project asked (its folder's name, exactly).
    #[arg(long, value_name = "NAME")]
    project: Option<String>,
    /// Only entries whose questions (a tool call's input), answer (a rule added, a deny
    /// message) or the text the model read contain this.
    #[arg(long, value_name = "TEXT")]
    search: Option<String>,
    /// Only questions, tool approvals, or plans (approvals of ExitPlanMode).
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    kind: Option<HistoryKind>,
    /// Only what agents on this SSH host asked through `askpane remote HOST` (the name as the
    /// link was given it).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// At most this many entries, newest first.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Delete what ended more than --keep-days ago, and print how many entries went.
    #[arg(long, group = "pruning")]
    prune: bool,
    /// How many days --prune keeps.
    #[arg(long, value_name = "DAYS", requires = "prune", default_value_t = DEFAULT_KEEP_DAYS,
          value_parser = clap::value_parser!(u64).range(0..=36_500))]
    keep_days: u64,
    /// Delete what ended before then (a date, a time, or a duration back from now, as --since
    /// takes), and print how many entries went.
    #[arg(long, value_name = "WHEN", value_parser = parse_since, group = "pruning")]
    prune_before: Option<SystemTime>,
    /// Delete every entry but the newest N, and print how many went.
    #[arg(long, value_name = "N", group = "pruning")]
    keep: Option<usize>,
    /// Give the space pruned entries leave back to the disk (SQLite's VACUUM: rewrites the
    /// file, needing as much free space again), after pruning if asked to; print the size
    /// before and after.
    #[arg(long, conflicts_with_all = LISTING)]
    vacuum: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// `askpane history`.
pub(super) fn run(args: HistoryArgs) -> anyhow::Result<u8> {
    let mut store = args.store.open().context("cannot open the history")?;
    let pruning = args.prune || args.prune_before.is_some() || args.keep.is_some();
    if pruning || args.vacuum {
        if pruning {
            prune(&mut store, &args)?;
        }
        if args.vacuum {
            let (before, after) = store.vacuum().context("cannot vacuum the history")?;
            let megabytes = |bytes: u64| bytes as f64 / 1_000_000.0;
            say!("vacuumed the history: {:.1} MB → {:.1} MB", megabytes(before), megabytes(after));
        }
        return Ok(exit::OK);
    }
    let query = HistoryQuery {
        since: args.since,
        project: args.project,
        search: args.search,
        source: None,
        kind: args.kind,
        host: args.host,
        limit: args.limit,
        before: None,
    };
    let entries = store.history(&query).context("cannot read the history")?;
    if args.json {
        for entry in &entries {
            say!("{}", json_line(entry));
        }
    } else {
        print_table(&entries);
    }
    Ok(exit::OK)
}

/// `--prune`, `--prune-before` or `--keep` (clap lets one through): deletes and says how many.
fn prune(store: &mut askpane::store::Store, args: &HistoryArgs) -> anyhow::Result<()> {
    let failed = "cannot prune the history";
    if let Some(newest) = args.keep {
        let pruned = store.prune_keeping(newest).context(failed)?;
        let entries = plural(pruned as u64, "entry", "entries");
        say!("pruned {pruned} {entries} beyond the newest {newest}");
        return Ok(());
    }
    if let Some(before) = args.prune_before {
        let pruned = store.prune(before).context(failed)?;
        let entries = plural(pruned as u64, "entry", "entries");
        say!("pruned {pruned} {entries} that ended before {}", when(before));
        return prune_drafts(store, before);
    }
    let before = SystemTime::now()
        .checked_sub(Duration::from_secs(args.keep_days.saturating_mul(24 * 60 * 60)))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let pruned = store.prune(before).context(failed)?;
    let days = args.keep_days;
    let entries = plural(pruned as u64, "entry", "entries");
    say!("pruned {pruned} {entries} older than {days} {}", plural(days, "day", "days"));
    prune_drafts(store, before)
}

/// Issue 30: with history, what was typed into requests no longer open and untouched since the
/// same time (an open request's drafts stay, however old), and says what went.
fn prune_drafts(store: &mut askpane::store::Store, before: SystemTime) -> anyhow::Result<()> {
    let pruned = store.prune_drafts(before).context("cannot prune the drafts")?;
    let since = when(before);
    if pruned == askpane::store::DraftsPruned::default() {
        say!("kept every draft: none of a request no longer open was untouched since {since}");
        return Ok(());
    }
    let forms = pruned.forms as u64;
    let cards = pruned.cards as u64;
    say!(
        "removed the drafts of {forms} {} and {cards} {} no longer open, untouched since \
         {since} (an open request's drafts are kept)",
        plural(forms, "request", "requests"),
        plural(cards, "plan or form", "plans or forms")
    );
    Ok(())
}

/// `--kind`: `question`, `approval` or `plan`.
fn parse_kind(text: &str) -> Result<HistoryKind, String> {
    HistoryKind::from_name(text.trim())
        .ok_or_else(|| format!("`{text}` is not a kind: question, approval or plan"))
}

fn plural<'a>(count: u64, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 { one } else { many }
}

/// `--since`: a duration back from now, a date, or an RFC 3339 time.
fn parse_since(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Ok(back) = humantime::parse_duration(text) {
        return SystemTime::now()
            .checked_sub(back)
            .ok_or_else(|| format!("{text} goes back before 1970"));
    }
    let is_date = text.len() == 10 && text.chars().filter(|c| *c == '-').count() == 2;
    let time = match is_date {
        true => format!("{text}T00:00:00Z"),
        false => text.to_owned(),
    };
    humantime::parse_rfc3339_weak(&time).map_err(|_| {
        format!(
            "`{text}` is neither a duration (90m, 12h, 3d, 2weeks) nor a date (2026-11-01) nor a \
             time (2026-11-01T09:30:00Z)"
        )
    })
}

/// A time as history prints it: UTC to the second.
fn when(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

fn json_line(entry: &HistoryEntry) -> String {
    let record = &entry.record;
    let provenance = &record.provenance;
    let questions = serde_json::from_str::<serde_json::Value>(&record.questions)
        .unwrap_or_else(|_| serde_json::Value::String(record.questions.clone()));
    let mut line = serde_json::json!({
        "kind": record.kind().as_str(),
        "asked_at": when(entry.asked_at),
        "ended_at": when(record.ended_at),
        "key": record.key,
        "source": provenance.source,
        "agent": provenance.agent(),
        "project": provenance.project,
        "session": provenance.session,
        "subagent": provenance.subagent,
        "host": provenance.host,
        "header": record.header,
        "questions": questions,
        "ended": record.ended.name(),
        "outcome": record.outcome.as_str(),
        "answer": record.answer,
        "reply": record.reply,
        "model_text": record.model_text,
        "answered_by": record.answered_by,
    });
    // Issue 26: an approval's own facts, named as a reader of approvals looks for them (its
    // `questions` is the tool input, its `header` the call in one line).
    if let (Some(approval), Some(object)) = (&record.approval, line.as_object_mut()) {
        object.insert("tool".to_owned(), approval.tool.clone().into());
        object.insert("summary".to_owned(), record.header.clone().into());
        object.insert("decision".to_owned(), approval.outcome.as_str().into());
        object.insert("rule".to_owned(), approval.rule.clone().into());
        object.insert("deny_message".to_owned(), approval.deny_message.clone().into());
        object.insert("origin".to_owned(), approval.origin.as_str().into());
    }
    line.to_string()
}

/// The widest a table column gets, in characters; longer text is cut with "…".
const COLUMN_LIMITS: [usize; 6] = [20, 20, 20, 28, 14, 60];

fn print_table(entries: &[HistoryEntry]) {
    if entries.is_empty() {
        eprintln!("askpane: no history matches");
        return;
    }
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|entry| {
            let record = &entry.record;
            [
                when(record.ended_at),
                record.provenance.project.clone().unwrap_or_else(|| "-".to_owned()),
                record.provenance.agent(),
                record.header.clone(),
                // An approval's decision in full (`allowed_always`, not `allowed`).
                record
                    .approval
                    .as_ref()
                    .map_or(record.ended.name(), |approval| approval.outcome.as_str())
                    .to_owned(),
                record.answer.clone(),
            ]
        })
        .collect();
    let header = ["WHEN", "PROJECT", "AGENT", "HEADER", "ENDED", "ANSWER"].map(str::to_owned);
    let cells = |row: &[String; 6]| -> [String; 6] {
        std::array::from_fn(|column| {
            let limit = COLUMN_LIMITS.get(column).copied().unwrap_or(20);
            row.get(column).map(|text| cell(text, limit)).unwrap_or_default()
        })
    };
    let all: Vec<[String; 6]> =
        std::iter::once(cells(&header)).chain(rows.iter().map(cells)).collect();
    let widths: [usize; 6] = std::array::from_fn(|column| {
        all.iter()
            .map(|row| row.get(column).map_or(0, |text| text.chars().count()))
            .max()
            .unwrap_or(0)
    });
    for row in &all {
        let mut line = String::new();
        for (column, text) in row.iter().enumerate() {
            let width = widths.get(column).copied().unwrap_or(0);
            if column + 1 == row.len() {
                line.push_str(text);
            } else {
                line.push_str(&format!("{text:<width$}  "));
            }
        }
        say!("{}", line.trim_end());
    }
}

/// One line of at most `limit` characters: line breaks and tabs become spaces, and characters
/// that would reorder the line or hide in it (bidi controls, zero-width spaces) are written out
/// as `<U+202E>`: an agent's text cannot rearrange the table.
fn cell(text: &str, limit: usize) -> String {
    let revealed = askpane::protocol::text::reveal_hidden(text);
    let flat: String =
        revealed.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let flat = flat.trim();
    match flat.chars().count() > limit {
        true => flat.chars().take(limit.saturating_sub(1)).chain(std::iter::once('…')).collect(),
        false => flat.to_owned(),
    }
}
