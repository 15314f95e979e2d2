//! The store (issue 11) as users and agents meet it: `askpane ask` outcomes in history with the
//! exact reply line, `askpane history` (table, `--json`, `--search`, `--since`, `--project`,
//! `--prune`, `--prune-before`, `--keep`, `--vacuum`), a store that cannot be opened (askpane still answers, one line on stderr), drafts
//! that survive `kill -9` of a process typing them, and the window (kittest) recording an
//! answered request and bringing saved drafts back.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use askpane::app::App;
use askpane::book::Form;
use askpane::store::{self, DraftSink, Ended, HistoryQuery, HistoryRecord, Store};
use askpane::transport::{self, Provenance};
use egui::Key;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use serde_json::{Value, json};

use crate::support::{Process, WAIT, askpane, run_bounded, scratch_dir};
use crate::ui::{DATABASE_QUESTION, FONTS, Window, database_tool_use, reply};

const QUESTION: &str = r#"{"questions":[{"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"Postgres","description":"a"},{"label":"MySQL","description":"b"}]}]}"#;

/// `askpane <args>` keeping its store in `state`.
fn askpane_in(state: &Path, args: &[&str]) -> Command {
    let mut command = askpane(args);
    command.env("ASKPANE_STATE_DIR", state);
    command
}

fn history_json(state: &Path, args: &[&str]) -> Vec<Value> {
    let finished =
        run_bounded(&mut askpane_in(state, &[&["history", "--json"], args].concat()), None);
    assert!(finished.status.success(), "history --json: {}", finished.stderr);
    finished.stdout.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

#[test]
fn ask_decline_is_recorded_with_the_exact_reply_line_and_what_the_model_read() {
    let state = scratch_dir("store-decline");
    let finished =
        run_bounded(&mut askpane_in(&state, &["ask", "--decline", "not now"]), Some(QUESTION));
    assert_eq!(finished.status.code(), Some(1));
    assert_eq!(finished.stderr, "", "no warning when the store opens");
    let sent = finished.stdout.trim_end_matches('\n');
    assert_eq!(
        sent,
        r#"{"outcome":"declined","message":"The user declined to answer these questions and said: not now"}"#
    );
    let entries = history_json(&state, &[]);
    let [entry] = entries.as_slice() else { panic!("one entry: {entries:?}") };
    assert_eq!(entry["reply"], sent, "the exact line sent");
    assert_eq!(entry["ended"], "declined");
    assert_eq!(entry["outcome"], "declined");
    assert_eq!(entry["source"], "ask");
    assert_eq!(entry["agent"], "a script (askpane ask)");
    assert_eq!(entry["header"], "Database");
    assert_eq!(entry["questions"], serde_json::from_str::<Value>(QUESTION).expect("JSON"));
    assert_eq!(
        entry["model_text"],
        "The user declined to answer these questions and said: not now"
    );
    assert!(state.join("askpane.db").is_file());
}

#[test]
fn the_reply_recorded_is_the_one_written_in_the_format_asked_for() {
    let state = scratch_dir("store-format");
    let mut command =
        askpane_in(&state, &["ask", "--decline", "later", "--format", "control-response"]);
    let message = json!({"type": "tool_use", "name": "AskUserQuestion", "id": "toolu_fmt",
        "input": serde_json::from_str::<Value>(QUESTION).expect("JSON")});
    let finished = run_bounded(&mut command, Some(&message.to_string()));
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stderr);
    let sent = finished.stdout.trim_end();
    assert!(sent.starts_with(r#"{"type":"control_response""#), "{sent}");
    let entries = history_json(&state, &[]);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["reply"], sent);
    assert_eq!(entries[0]["key"], "toolu_fmt", "stored under its tool_use_id");
}

#[test]
fn ask_with_no_human_and_an_invalid_request_are_recorded_too() {
    let state = scratch_dir("store-no-human");
    let no_human = run_bounded(&mut askpane_in(&state, &["ask"]), Some(QUESTION));
    assert_eq!(no_human.status.code(), Some(3), "no display: no human");
    let invalid = run_bounded(&mut askpane_in(&state, &["ask"]), Some(r#"{"questions":[]}"#));
    assert_eq!(invalid.status.code(), Some(2));
    let entries = history_json(&state, &[]);
    let ended: Vec<&str> =
        entries.iter().map(|entry| entry["ended"].as_str().unwrap_or("")).collect();
    assert_eq!(ended, ["refused", "no_human"], "newest first");
    assert_eq!(entries[0]["reply"], invalid.stdout.trim_end());
    assert_eq!(entries[1]["reply"], no_human.stdout.trim_end());
}

/// A history entry `days_ago` days old.
fn entry(key: &str, project: &str, header: &str, answer: &str, days_ago: u64) -> HistoryRecord {
    let at = SystemTime::now() - Duration::from_secs(days_ago * 24 * 3600 + 60);
    HistoryRecord {
        answered_by: None,
        key: key.to_owned(),
        asked_at: Some(at),
        ended_at: at,
        provenance: Provenance::new("hook", None).with_project(Some(project.to_owned())),
        header: header.to_owned(),
        questions: json!({"questions": [{"question": format!("Which {header} for {key}?")}]})
            .to_string(),
        ended: Ended::Answered,
        outcome: askpane::protocol::OutcomeKind::Answered.into(),
        answer: answer.to_owned(),
        reply: Some(format!(r#"{{"answer":"{answer}"}}"#)),
        model_text: Some(format!("The user answered {answer}")),
        approval: None,
    }
}

fn seeded(name: &str) -> PathBuf {
    let state = scratch_dir(name);
    let mut store = Store::open_in(&state).expect("a store");
    store.record(&entry("k-old", "orders", "Database", "MySQL", 120)).expect("record");
    store.record(&entry("k-mid", "billing", "Cache", "Redis", 5)).expect("record");
    store.record(&entry("k-new", "orders", "Queue", "NATS と Kafka", 0)).expect("record");
    state
}

fn keys(entries: &[Value]) -> Vec<&str> {
    entries.iter().map(|entry| entry["key"].as_str().unwrap_or("")).collect()
}

#[test]
fn history_prints_a_table_newest_first() {
    let state = seeded("store-table");
    let finished = run_bounded(&mut askpane_in(&state, &["history"]), None);
    assert!(finished.status.success(), "{}", finished.stderr);
    let lines: Vec<&str> = finished.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", finished.stdout);
    let columns = |line: &str| {
        line.split("  ")
            .filter(|cell| !cell.is_empty())
            .map(str::trim)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(columns(lines[0]), ["WHEN", "PROJECT", "AGENT", "HEADER", "ENDED", "ANSWER"]);
    let first = columns(lines[1]);
    assert_eq!(first[1..], ["orders", "Claude Code (hook)", "Queue", "answered", "NATS と Kafka"]);
    assert!(first[0].ends_with('Z') && first[0].len() == 20, "UTC to the second: {}", first[0]);
    assert_eq!(columns(lines[2])[3], "Cache");
    assert_eq!(columns(lines[3])[3], "Database");
}

/// Issue 24 item 20: an agent's bidi controls and zero-width characters cannot reorder the
/// table or hide in it: they are written out.
#[test]
fn history_writes_out_characters_that_would_reorder_the_table() {
    let state = scratch_dir("store-bidi");
    let mut store = Store::open_in(&state).expect("a store");
    let header = "Deploy\u{202E}dlrow\u{2066}";
    let answer = "Yes\u{200B} \u{2067}now";
    store.record(&entry("k-bidi", "orders", header, answer, 0)).expect("record");
    let finished = run_bounded(&mut askpane_in(&state, &["history"]), None);
    assert!(finished.status.success(), "{}", finished.stderr);
    for hidden in ['\u{202E}', '\u{2066}', '\u{200B}', '\u{2067}'] {
        assert!(!finished.stdout.contains(hidden), "{hidden:?} printed raw: {}", finished.stdout);
    }
    assert!(finished.stdout.contains("Deploy<U+202E>dlrow<U+2066>"), "{}", finished.stdout);
    assert!(finished.stdout.contains("Yes<U+200B> <U+2067>now"), "{}", finished.stdout);
}

#[test]
fn history_json_search_since_and_project_filter() {
    let state = seeded("store-filters");
    assert_eq!(keys(&history_json(&state, &[])), ["k-new", "k-mid", "k-old"]);
    assert_eq!(keys(&history_json(&state, &["--search", "redis"])), ["k-mid"]);
    assert_eq!(keys(&history_json(&state, &["--search", "Kafka"])), ["k-new"]);
    assert_eq!(keys(&history_json(&state, &["--search", "which database"])), ["k-old"]);
    assert_eq!(keys(&history_json(&state, &["--since", "2d"])), ["k-new"]);
    assert_eq!(keys(&history_json(&state, &["--since", "30days"])), ["k-new", "k-mid"]);
    let date = humantime::format_rfc3339(SystemTime::now() - Duration::from_secs(10 * 24 * 3600))
        .to_string();
    assert_eq!(keys(&history_json(&state, &["--since", &date[..10]])), ["k-new", "k-mid"]);
    assert_eq!(keys(&history_json(&state, &["--project", "orders"])), ["k-new", "k-old"]);
    assert_eq!(keys(&history_json(&state, &["--project", "orders", "--limit", "1"])), ["k-new"]);
    let entry = &history_json(&state, &["--search", "redis"])[0];
    assert_eq!(entry["reply"], r#"{"answer":"Redis"}"#);
    assert_eq!(entry["model_text"], "The user answered Redis");
    assert_eq!(entry["project"], "billing");

    let bad = run_bounded(&mut askpane_in(&state, &["history", "--since", "last tuesday"]), None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        bad.stderr
            .contains("`last tuesday` is neither a duration (90m, 12h, 3d, 2weeks) nor a date"),
        "{}",
        bad.stderr
    );
}

#[test]
fn history_prune_keeps_the_retention() {
    let state = seeded("store-prune");
    let pruned = run_bounded(&mut askpane_in(&state, &["history", "--prune"]), None);
    assert!(pruned.status.success(), "{}", pruned.stderr);
    assert_eq!(
        pruned.stdout.lines().next(),
        Some("pruned 1 entry older than 90 days"),
        "{}",
        pruned.stdout
    );
    assert_eq!(keys(&history_json(&state, &[])), ["k-new", "k-mid"]);
    let pruned =
        run_bounded(&mut askpane_in(&state, &["history", "--prune", "--keep-days", "1"]), None);
    assert_eq!(pruned.stdout.lines().next(), Some("pruned 1 entry older than 1 day"));
    assert_eq!(keys(&history_json(&state, &[])), ["k-new"]);
    let misuse = run_bounded(&mut askpane_in(&state, &["history", "--keep-days", "3"]), None);
    assert_eq!(misuse.status.code(), Some(2), "--keep-days needs --prune");
}

/// Issue 30: `--prune-before WHEN` and `--keep N` prune history (never a request still open),
/// the pruned are no longer found by a search, and `--vacuum` gives the space back and says how
/// much. Pruning and listing do not mix.
#[test]
fn history_prune_before_a_date_keep_the_newest_and_vacuum() {
    let state = seeded("store-prune-keep");
    {
        let mut store = Store::open_in(&state).expect("a store");
        let open = store::OpenRecord {
            key: "toolu_waiting".to_owned(),
            envelope: "a hook's input".to_owned(),
            input: QUESTION.to_owned(),
            provenance: Provenance::new("hook", None),
            asked_at: SystemTime::now() - Duration::from_secs(400 * 24 * 3600),
            pid: std::process::id(),
        };
        store.opened(&open).expect("an open request a year old");
        // Issue 30: what was typed: into the open request, a year ago; into one no longer
        // open, two months ago (goes) and yesterday (stays).
        let mut form = Form::default();
        form.draft.set_notes("typed by a person".to_owned());
        let at = |days: u64| SystemTime::now() - Duration::from_secs(days * 24 * 3600);
        store.save_draft("toolu_waiting", "asked", 0, &form, at(400)).expect("draft");
        store.save_draft("toolu_gone", "asked", 0, &form, at(60)).expect("draft");
        store.save_draft("toolu_lately", "asked", 0, &form, at(1)).expect("draft");
    }
    let month_ago =
        humantime::format_rfc3339(SystemTime::now() - Duration::from_secs(30 * 24 * 3600))
            .to_string();
    let date = &month_ago[..10];
    let pruned = run_bounded(&mut askpane_in(&state, &["history", "--prune-before", date]), None);
    assert!(pruned.status.success(), "{}", pruned.stderr);
    assert_eq!(
        pruned.stdout,
        format!(
            "pruned 1 entry that ended before {date}T00:00:00Z\nremoved the drafts of 1 request \
             and 0 plans or forms no longer open, untouched since {date}T00:00:00Z (an open \
             request's drafts are kept)\n"
        )
    );
    {
        let store = Store::open_in(&state).expect("a store");
        assert!(store.drafts_for("toolu_gone").expect("drafts").is_empty());
        assert_eq!(store.drafts_for("toolu_lately").expect("drafts").len(), 1);
        assert_eq!(store.drafts_for("toolu_waiting").expect("drafts").len(), 1);
    }
    let again = run_bounded(&mut askpane_in(&state, &["history", "--prune-before", date]), None);
    assert_eq!(
        again.stdout.lines().nth(1),
        Some(
            format!(
                "kept every draft: none of a request no longer open was untouched since \
                 {date}T00:00:00Z"
            )
            .as_str()
        )
    );
    assert_eq!(keys(&history_json(&state, &[])), ["k-new", "k-mid"]);
    assert!(history_json(&state, &["--search", "Database for k-old"]).is_empty());
    let kept = run_bounded(&mut askpane_in(&state, &["history", "--keep", "1", "--vacuum"]), None);
    assert!(kept.status.success(), "{}", kept.stderr);
    let lines: Vec<&str> = kept.stdout.lines().collect();
    assert_eq!(lines[0], "pruned 1 entry beyond the newest 1");
    assert!(
        lines[1].starts_with("vacuumed the history: ") && lines[1].ends_with(" MB"),
        "{lines:?}"
    );
    assert_eq!(keys(&history_json(&state, &[])), ["k-new"]);
    assert_eq!(keys(&history_json(&state, &["--search", "kafka"])), ["k-new"]);
    let store = Store::open_in(&state).expect("a store");
    assert_eq!(store.open_requests().expect("open").len(), 1, "the open request is never pruned");
    for misuse in [
        &["history", "--keep", "1", "--prune"][..],
        &["history", "--keep", "1", "--prune-before", "3d"],
        &["history", "--keep", "1", "--search", "kafka"],
        &["history", "--vacuum", "--json"],
    ] {
        let finished = run_bounded(&mut askpane_in(&state, misuse), None);
        assert_eq!(finished.status.code(), Some(2), "{misuse:?}: {}", finished.stderr);
    }
}

#[test]
fn a_store_that_cannot_be_opened_never_stops_the_answer() {
    let root = scratch_dir("store-unwritable");
    // A directory that cannot be made (its parent is a file: even root cannot), and a database
    // file that is not one.
    let blocker = root.join("a-file");
    std::fs::write(&blocker, "not a directory").expect("file");
    let corrupt = root.join("corrupt");
    std::fs::create_dir_all(&corrupt).expect("dir");
    std::fs::write(corrupt.join("askpane.db"), vec![0x5a_u8; 8192]).expect("garbage");
    // The user's alone, as askpane makes it: a file open to others would be narrowed, in a
    // line of its own (tests/security.rs).
    #[cfg(unix)]
    {
        let private = std::os::unix::fs::PermissionsExt::from_mode(0o600);
        std::fs::set_permissions(corrupt.join("askpane.db"), private).expect("0600");
    }
    for (state, why) in [(blocker.join("state"), "cannot create"), (corrupt.clone(), "askpane.db")]
    {
        let finished =
            run_bounded(&mut askpane_in(&state, &["ask", "--decline", "not now"]), Some(QUESTION));
        assert_eq!(finished.status.code(), Some(1), "still answers: {}", finished.stderr);
        assert_eq!(
            finished.stdout,
            "{\"outcome\":\"declined\",\"message\":\"The user declined to answer these questions and said: not now\"}\n"
        );
        let lines: Vec<&str> = finished.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {}", finished.stderr);
        assert!(
            lines[0].starts_with(
                "askpane: warning: no drafts or history this time: cannot open the store ("
            ) && lines[0].contains(why),
            "{}",
            lines[0]
        );
        // `askpane history` itself fails clearly.
        let history = run_bounded(&mut askpane_in(&state, &["history"]), None);
        assert_eq!(history.status.code(), Some(2));
        assert!(
            history.stderr.starts_with("askpane: cannot open the history: "),
            "{}",
            history.stderr
        );
    }
}

// --- Drafts that survive kill -9 -------------------------------------------------------------

const OTHER_TEXT: &str = "MariaDB を使いたい — ただし管理はマネージドで、バックアップは毎晩";
const NOTE_TEXT: &str = "Note: 本番は東京リージョン";
const TYPIST_DIR: &str = "ASKPANE_TEST_TYPIST_DIR";
const TYPIST_MODE: &str = "ASKPANE_TEST_TYPIST_MODE";

/// The form after `other` and `note` were typed into question 0 of the database question.
/// The fingerprint of the questions `toolu_crash` asks: its drafts are saved under it.
fn crash_asked() -> String {
    let (request, _) = crate::ui::request(&database_tool_use("toolu_crash"));
    store::asked_fingerprint(&request.core)
}

fn typed_form(other: &str, note: &str) -> Form {
    let (request, _) = crate::ui::request(&database_tool_use("toolu_crash"));
    let question = &request.core.ask.questions()[0];
    let mut form = Form::default();
    form.draft.set_other_text(question, other.to_owned());
    if !note.is_empty() {
        form.draft.set_notes(note.to_owned());
    }
    form.cursor = question.options().len();
    form
}

/// Not a test on its own: the child process of the kill -9 tests (started by them with
/// `--ignored`). It types into a DraftSink as a user types, one character at a time, saying on
/// stdout what it has typed; `idle` types everything then waits to be killed, `steady` keeps
/// typing (slowly) until it is.
#[test]
#[ignore = "the child process of the kill -9 tests"]
#[allow(
    clippy::disallowed_methods,
    reason = "the child reports its progress to the test on stdout"
)]
fn typist_child() {
    use std::io::Write as _;
    let Some(dir) = std::env::var_os(TYPIST_DIR) else { return };
    let steady = std::env::var(TYPIST_MODE).is_ok_and(|mode| mode == "steady");
    let sink = DraftSink::start(Store::open_in(Path::new(&dir)).expect("store")).expect("writer");
    let asked = crash_asked();
    let mut stdout = std::io::stdout();
    let text: String = match steady {
        true => OTHER_TEXT.repeat(8),
        false => OTHER_TEXT.to_owned(),
    };
    let pause = Duration::from_millis(if steady { 15 } else { 2 });
    let mut other = String::new();
    for (count, character) in text.chars().enumerate() {
        other.push(character);
        sink.draft_changed("toolu_crash", &asked, 0, &typed_form(&other, ""));
        let _ = writeln!(stdout, "typed other {}", count + 1);
        let _ = stdout.flush();
        std::thread::sleep(pause);
    }
    let mut note = String::new();
    for (count, character) in NOTE_TEXT.chars().enumerate() {
        note.push(character);
        sink.draft_changed("toolu_crash", &asked, 0, &typed_form(&other, &note));
        let _ = writeln!(stdout, "typed note {}", count + 1);
        let _ = stdout.flush();
        std::thread::sleep(pause);
    }
    let _ = writeln!(stdout, "idle");
    let _ = stdout.flush();
    // Killed long before this ends; bounded all the same.
    std::thread::sleep(Duration::from_secs(60));
    std::mem::forget(sink);
}

/// Starts the typist child in `mode`, its stdout lines arriving with the time they were read.
fn start_typist(dir: &Path, mode: &str) -> (Process, std::sync::mpsc::Receiver<(Instant, String)>) {
    let child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["store::typist_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(TYPIST_DIR, dir)
        .env(TYPIST_MODE, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the typist child");
    let mut process = Process::new(child);
    let stdout = process.child.stdout.take().expect("piped");
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    (process, lines)
}

/// The saved form of toolu_crash's question 0, read through a connection of this process.
fn saved(dir: &Path) -> Option<Form> {
    Store::open_in(dir).ok()?.drafts_for("toolu_crash").ok()?.into_iter().next()
}

#[test]
fn kill_9_after_typing_loses_nothing_and_the_form_comes_back() {
    let dir = scratch_dir("store-kill-idle");
    let (mut typist, lines) = start_typist(&dir, "idle");
    let deadline = Instant::now() + WAIT;
    loop {
        let (_, line) = lines.recv_timeout(deadline - Instant::now()).expect("the typist types");
        if line == "idle" {
            break;
        }
    }
    // The writer saves within the debounce window on its own (no flush, no exit): wait for it
    // (bounded), then kill the process the hard way.
    let full = typed_form(OTHER_TEXT, NOTE_TEXT);
    let deadline = Instant::now() + Duration::from_secs(10);
    while saved(&dir).as_ref() != Some(&full) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    typist.child.kill().expect("kill -9");
    let _ = typist.child.wait();
    assert_eq!(saved(&dir), Some(full.clone()), "every character and the note, exactly");

    // Asked again with the same tool_use_id: the window shows the form as it was left.
    let store = Store::open_in(&dir).expect("store");
    let (mut request, outcome) = crate::ui::request(&database_tool_use("toolu_crash"));
    let forms = store.drafts_for(&store::request_key(&request.core)).expect("drafts");
    assert!(store::restore_drafts(&mut request.policy, &request.core.ask, forms));
    let mut window = crate::ui::window();
    let asked = window.send(request, outcome);
    let sent = send_restored_form(&mut window, &asked);
    assert_eq!(sent["answers"], json!({DATABASE_QUESTION: OTHER_TEXT}));
    assert_eq!(sent["annotations"], json!({DATABASE_QUESTION: {"notes": NOTE_TEXT}}));
}

#[test]
fn kill_9_while_typing_keeps_a_prefix_of_what_was_typed_up_to_the_debounce_window() {
    let dir = scratch_dir("store-kill-steady");
    let (mut typist, lines) = start_typist(&dir, "steady");
    // Kill it 3 s into its typing; everything it reported typed 2 s before that (ten debounce
    // windows: a loaded machine's margin) must be on disk.
    let margin = Duration::from_secs(2);
    let mut reported: Vec<(Instant, usize)> = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        let Ok((at, line)) = lines.recv_timeout(WAIT) else { panic!("the typist stopped") };
        if let Some(count) = line.strip_prefix("typed other ") {
            reported.push((at, count.parse().expect("a count")));
        }
    }
    let killed_at = Instant::now();
    typist.child.kill().expect("kill -9");
    let _ = typist.child.wait();
    let form = saved(&dir).expect("something was saved");
    let other = form.draft.other_text().to_owned();
    let full = OTHER_TEXT.repeat(8);
    assert!(full.starts_with(&other), "a prefix of what was typed, never torn: {other}");
    let surely_saved = reported
        .iter()
        .filter(|(at, _)| *at + margin <= killed_at)
        .map(|(_, count)| *count)
        .max()
        .unwrap_or(0);
    assert!(surely_saved > 0, "the typist typed for more than the margin");
    assert!(
        other.chars().count() >= surely_saved,
        "{} characters saved, {surely_saved} were typed {margin:?} before the kill",
        other.chars().count()
    );
    assert!(form.draft.is_chosen(askpane::protocol::Pick::Other));
}

/// Checks that the window shows the restored Other text and note, sends them, and returns the
/// reply the agent got.
fn send_restored_form(window: &mut Window, asked: &crate::ui::Asked) -> serde_json::Value {
    assert!(window.is_on(Role::RadioButton, "Other"));
    assert_eq!(window.answer_box().value().as_deref(), Some(OTHER_TEXT));
    let note = window.harness.get_by_role_and_label(Role::MultilineTextInput, "Note");
    assert_eq!(note.value().as_deref(), Some(NOTE_TEXT));
    window.click_button("Submit");
    reply(&asked.envelope, &asked.outcome)
}

// --- The window records what it settles ------------------------------------------------------

/// A kittest window whose drafts and outcomes go to `sink`.
fn window_with_store(sink: DraftSink) -> Window {
    let (sender, inbox) = transport::memory();
    let harness = Harness::builder()
        .with_size(egui::vec2(960.0, 680.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| {
            App::new(&cc.egui_ctx, inbox, askpane::app::AppOptions::default()).with_store(sink)
        });
    Window { harness, sender }
}

#[test]
fn the_window_saves_drafts_as_the_user_types_and_records_the_answer() {
    let state = scratch_dir("store-window");
    let sink = DraftSink::start(Store::open_in(&state).expect("store")).expect("writer");
    let mut window = window_with_store(sink);
    let asked = window.ask(&database_tool_use("toolu_store_window"));
    let reader = Store::open_in(&state).expect("reader");
    window.press(Key::Num5, None);
    window.type_text("MariaDB, managed");
    let deadline = Instant::now() + Duration::from_secs(10);
    let typed =
        |forms: &[Form]| forms.first().is_some_and(|f| f.draft.other_text() == "MariaDB, managed");
    while !typed(&reader.drafts_for("toolu_store_window").expect("drafts"))
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(typed(&reader.drafts_for("toolu_store_window").expect("drafts")), "saved while typing");
    let open = reader.open_requests().expect("open");
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].key, "toolu_store_window");

    window.press(Key::Escape, None);
    window.press(Key::Enter, None);
    window.press(Key::Enter, None);
    let sent = reply(&asked.envelope, &asked.outcome);
    assert_eq!(sent["answers"], json!({DATABASE_QUESTION: "MariaDB, managed"}));
    // The window ends: the writer writes what is pending and stops.
    drop(window);
    let entries = reader.history(&HistoryQuery::default()).expect("history");
    let [entry] = entries.as_slice() else { panic!("one entry: {entries:?}") };
    let record = &entry.record;
    assert_eq!(record.ended, Ended::Answered);
    assert_eq!(record.answer, "MariaDB, managed");
    assert_eq!(record.reply.as_deref(), Some(sent.to_string().as_str()), "the exact reply");
    assert_eq!(
        record.model_text.as_deref(),
        Some(format!(
            "The user answered: \"{DATABASE_QUESTION}\"=\"MariaDB, managed\". Read the answers \
             carefully \u{2014} they may request clarification, changes, or that you not proceed \
             \u{2014} and follow what they actually say."
        ))
        .as_deref()
    );
    assert!(reader.open_requests().expect("open").is_empty(), "no longer open");
    assert!(reader.drafts_for("toolu_store_window").expect("drafts").is_empty(), "drafts done");
}

#[test]
fn the_window_with_a_store_brings_back_the_form_of_a_question_asked_again() {
    let state = scratch_dir("store-window-restore");
    {
        let mut store = Store::open_in(&state).expect("store");
        let form = typed_form(OTHER_TEXT, NOTE_TEXT);
        let asked = crash_asked();
        store.save_draft("toolu_crash", &asked, 0, &form, SystemTime::now()).expect("saved before");
    }
    let sink = DraftSink::start(Store::open_in(&state).expect("store")).expect("writer");
    let mut window = window_with_store(sink);
    let asked = window.ask(&database_tool_use("toolu_crash"));
    let sent = send_restored_form(&mut window, &asked);
    assert_eq!(sent["answers"], json!({DATABASE_QUESTION: OTHER_TEXT}));
    drop(window);
    let store = Store::open_in(&state).expect("store");
    assert!(store.drafts_for("toolu_crash").expect("drafts").is_empty(), "done with");
    let entries = store.history(&HistoryQuery::default()).expect("history");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].record.reply.as_deref(), Some(sent.to_string().as_str()));
}
