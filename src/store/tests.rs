//! The store on its own: migrations from an empty file and from every older version, drafts read
//! back exactly, the writer thread, history queries, pruning, abandoning.

use std::time::{Duration, SystemTime};

use rusqlite::Connection;
use serde_json::json;

use super::*;
use crate::book::Core;
use crate::protocol::{Outcome, Pick, parse_message};

fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let serial = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("askpane-store-{name}-{}-{serial}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn core(tool_use_id: Option<&str>, header: &str) -> Core {
    let input = json!({"questions": [{
        "question": format!("Which {header}?"), "header": header, "multiSelect": false,
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]
    }]});
    let message = match tool_use_id {
        Some(id) => {
            json!({"type": "tool_use", "name": "AskUserQuestion", "id": id, "input": input})
        }
        None => input,
    };
    let incoming = parse_message(&message).expect("a message askpane reads");
    let provenance = Provenance::new("ask", None).with_project(Some("orders".to_owned()));
    core_of(incoming, provenance)
}

/// The request `incoming` asks, as the book holds it (the store needs no transport to test).
fn core_of(incoming: crate::protocol::Incoming, provenance: Provenance) -> Core {
    let validated = crate::protocol::validate(&incoming.input).expect("valid questions");
    Core {
        id: crate::protocol::origin::RequestId::next(),
        envelope: incoming.envelope,
        ask: validated.ask,
        warnings: validated.warnings,
        provenance,
        reply_shape: crate::protocol::ReplyShape::default(),
    }
}

fn typed(other: &str, notes: &str) -> Form {
    let draft = Draft::restored(vec![], true, other.to_owned(), notes.to_owned(), true);
    Form { draft, cursor: 2, ..Form::default() }
}

fn table_names(connection: &Connection) -> Vec<String> {
    let mut statement = connection
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY name")
        .expect("sqlite_master");
    let names = statement.query_map([], |row| row.get(0)).expect("query");
    names.map(Result::unwrap).filter(|name: &String| !name.starts_with("sqlite_")).collect()
}

#[test]
fn an_empty_file_is_migrated_to_the_latest_version_in_wal_mode() {
    let dir = scratch("empty");
    let mut store = Store::open_in(&dir).expect("open");
    assert_eq!(store.version().expect("version"), schema::LATEST);
    let connection = store.connection();
    let mode: String =
        connection.pragma_query_value(None, "journal_mode", |row| row.get(0)).expect("mode");
    assert_eq!(mode, "wal");
    let synchronous: i64 =
        connection.pragma_query_value(None, "synchronous", |row| row.get(0)).expect("sync");
    assert_eq!(synchronous, 1, "NORMAL");
    assert_eq!(
        table_names(connection),
        [
            "card_drafts",
            "drafts",
            "history",
            "history_ended_at",
            "history_fts",
            "history_fts_config",
            "history_fts_data",
            "history_fts_idx",
            "history_fts_terms",
            "history_kind",
            "history_project",
            "history_source",
            "open_cards",
            "open_requests"
        ]
    );
    // Opening again changes nothing.
    drop(store);
    assert_eq!(Store::open_in(&dir).expect("reopen").version().expect("v"), schema::LATEST);
}

#[test]
fn every_older_version_migrates_to_the_latest_keeping_its_rows() {
    for old in 0..schema::LATEST {
        let dir = scratch("older");
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(FILE_NAME);
        {
            let mut connection = Connection::open(&path).expect("file");
            schema::migrate_to(&mut connection, old).expect("migrate to the old version");
            assert_eq!(schema::version(&connection).expect("v"), old);
            if old >= 1 {
                connection
                    .execute(
                        "INSERT INTO history (key, asked_at, ended_at, source, header, questions,
                         ended, outcome, answer) VALUES ('k', 1, 2, 'ask', 'Database', '{}',
                         'answered', 'answered', 'Postgres')",
                        [],
                    )
                    .expect("a row of the old version");
            }
        }
        let store = Store::open_file(&path).expect("open migrates");
        assert_eq!(store.version().expect("v"), schema::LATEST, "from version {old}");
        let entries = store.history(&HistoryQuery::default()).expect("history");
        assert_eq!(entries.len(), usize::from(old >= 1), "from version {old}");
        if let Some(entry) = entries.first() {
            assert_eq!(entry.record.answer, "Postgres");
            assert_eq!(entry.record.ended, Ended::Answered);
        }
    }
}

#[test]
fn askpanes_opening_a_new_file_at_once_each_find_it_migrated() {
    // Rounds on fresh files: a busy file (switching a new file to WAL while others open it) is
    // rare in one round, and was once seen in CI.
    for round in 0..20 {
        let dir = scratch(&format!("race-{round}"));
        let openers: Vec<_> = (0..12)
            .map(|_| {
                let dir = dir.clone();
                std::thread::spawn(move || Store::open_in(&dir).and_then(|store| store.version()))
            })
            .collect();
        for opener in openers {
            let version = opener.join().expect("no panic").expect("every one opens");
            assert_eq!(version, schema::LATEST);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_file_from_a_newer_askpane_or_not_a_database_is_an_error_not_a_panic() {
    let dir = scratch("newer");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(FILE_NAME);
    Connection::open(&path)
        .and_then(|c| c.pragma_update(None, "user_version", schema::LATEST + 1))
        .expect("a newer file");
    let error = Store::open_file(&path).expect_err("a newer schema is refused");
    assert!(error.to_string().contains("made by a newer askpane"), "{error}");

    let corrupt = dir.join("corrupt.db");
    std::fs::write(&corrupt, vec![0x5a; 8192]).expect("garbage");
    let error = Store::open_file(&corrupt).expect_err("garbage is refused");
    assert!(error.to_string().contains("corrupt.db"), "{error}");
}

#[test]
fn drafts_read_back_exactly_including_100_kb_of_japanese() {
    let mut store = Store::in_memory().expect("store");
    let japanese = "下書きは入力中に保存されます。「改行」\nも絵文字😀も。".repeat(100 * 1024 / 60);
    assert!(japanese.len() >= 100 * 1024);
    let first = Form {
        draft: Draft::restored(vec![1, 0, 1], false, String::new(), "n".into(), true),
        cursor: 1,
        ..Form::default()
    };
    let second = typed(&japanese, "メモ: 第二");
    store.save_draft("toolu_1", "asked", 0, &first, SystemTime::now()).expect("save");
    store.save_draft("toolu_1", "asked", 2, &second, SystemTime::now()).expect("save");
    store.save_draft("toolu_other", "asked", 0, &typed("x", ""), SystemTime::now()).expect("save");
    let forms = store.drafts_for("toolu_1").expect("read");
    assert_eq!(forms.len(), 3);
    assert_eq!(forms[0].draft.chosen(), [0, 1]);
    assert_eq!(forms[0].cursor, 1);
    assert_eq!(forms[1], Form::default());
    assert_eq!(forms[2], second);
    assert_eq!(forms[2].draft.other_text(), japanese);
    assert!(store.drafts_for("toolu_none").expect("read").is_empty());
}

#[test]
fn restored_drafts_fit_the_questions_and_never_replace_a_preset() {
    let core = core(Some("toolu_fit"), "Database");
    let saved = vec![
        Form {
            draft: Draft::restored(vec![1, 7], false, String::new(), "note".into(), true),
            cursor: 9,
            ..Form::default()
        },
        typed("a second question that no longer exists", ""),
    ];
    let forms = fit_forms(&core.ask, saved.clone());
    assert_eq!(forms.len(), 1);
    assert_eq!(forms[0].draft.chosen(), [1]);
    assert_eq!(forms[0].draft.notes(), "note");
    assert_eq!(forms[0].cursor, 2, "Other is the last row");

    let mut policy = crate::book::Policy::default();
    assert!(restore_drafts(&mut policy, &core.ask, saved.clone()));
    assert_eq!(policy.preset.len(), 1);
    let mut preset = crate::book::Policy { preset: vec![Draft::default()], ..Default::default() };
    assert!(!restore_drafts(&mut preset, &core.ask, saved));
    assert_eq!(preset.preset, vec![Draft::default()]);
}

/// Issue 24 item 14 changed the made-up key: from one per request (so a plain `askpane ask`
/// lost its draft when asked again) to one from what was asked and who asked.
#[test]
fn keys_are_the_tool_use_id_or_a_made_up_one_that_stays_the_same() {
    let with_id = core(Some("toolu_key"), "Database");
    assert_eq!(request_key(&with_id), "toolu_key");
    let without = core(None, "Database");
    let key = request_key(&without);
    assert!(key.starts_with("asked-"), "{key}");
    assert_eq!(request_key(&without), key);
    assert_eq!(request_key(&core(None, "Database")), key, "asked again, the same key");
    assert_ne!(request_key(&core(None, "Cache")), key, "other questions, another key");
}

/// Reads the drafts of `key` from a second connection until `wanted` holds (bounded).
fn eventually(path: &Path, key: &str, wanted: impl Fn(&[Form]) -> bool) -> Vec<Form> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let forms = Store::open_file(path).and_then(|store| store.drafts_for(key)).expect("read");
        if wanted(&forms) || std::time::Instant::now() > deadline {
            return forms;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_writer_saves_the_last_draft_of_a_burst_without_being_asked_to() {
    let dir = scratch("writer");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let mut text = String::new();
    for character in "Postgres behind pgbouncer, please".chars() {
        text.push(character);
        sink.draft_changed("toolu_w", "asked", 0, &typed(&text, ""));
    }
    // No flush: the writer writes on its own once the debounce window passes.
    let forms = eventually(&dir.join(FILE_NAME), "toolu_w", |forms| {
        forms.first().is_some_and(|form| form.draft.other_text() == text)
    });
    assert_eq!(forms, vec![typed(&text, "")]);
    drop(sink);
}

#[test]
fn a_settled_request_goes_to_history_and_its_drafts_and_open_row_go() {
    let dir = scratch("settled");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let core = core(Some("toolu_s"), "Database");
    sink.opened(&core);
    sink.draft_changed(&request_key(&core), "asked", 0, &typed("MySQL", ""));
    sink.flush();
    let store = Store::open_in(&dir).expect("reader");
    assert_eq!(store.open_requests().expect("open").len(), 1);
    assert_eq!(store.drafts_for("toolu_s").expect("drafts").len(), 1);

    let mut draft = Draft::default();
    draft.pick(&core.ask.questions()[0], Pick::Option(1));
    let answers = crate::protocol::build_answers(&core.ask, &[draft]).expect("answers");
    let outcome = Outcome::Answered(answers);
    crate::book::journal::Journal::settled(&sink, &core, &outcome);
    drop(sink);

    assert!(store.open_requests().expect("open").is_empty());
    assert!(store.drafts_for("toolu_s").expect("drafts").is_empty());
    let entries = store.history(&HistoryQuery::default()).expect("history");
    let [entry] = entries.as_slice() else { panic!("one entry: {entries:?}") };
    let record = &entry.record;
    assert_eq!(
        (record.key.as_str(), record.ended, record.answer.as_str()),
        ("toolu_s", Ended::Answered, "B")
    );
    assert_eq!(record.header, "Database");
    assert_eq!(record.provenance.project.as_deref(), Some("orders"));
    let reply = core.envelope.reply(&outcome).map(|line| line.to_string());
    assert_eq!(record.reply, reply);
    assert_eq!(
        record.model_text.as_deref(),
        Some(
            "Your questions have been answered: \"Which Database?\"=\"B\". You can now continue with these answers in mind."
        )
    );
    assert!(entry.asked_at <= record.ended_at);
}

fn record_at(key: &str, project: &str, answer: &str, days_ago: u64) -> HistoryRecord {
    let at = SystemTime::now() - Duration::from_secs(days_ago * 24 * 3600);
    HistoryRecord {
        answered_by: None,
        key: key.to_owned(),
        asked_at: Some(at),
        ended_at: at,
        provenance: Provenance::new("hook", None).with_project(Some(project.to_owned())),
        header: "Database".to_owned(),
        questions: json!({"questions": [{"question": format!("Which database for {key}?")}]})
            .to_string(),
        ended: Ended::Answered,
        outcome: crate::protocol::OutcomeKind::Answered.into(),
        answer: answer.to_owned(),
        reply: Some("{}".to_owned()),
        model_text: Some("text".to_owned()),
        approval: None,
    }
}

#[test]
fn history_is_newest_first_and_filters_by_time_project_and_text() {
    let mut store = Store::in_memory().expect("store");
    store.record(&record_at("old", "orders", "MySQL", 100)).expect("record");
    store.record(&record_at("mid", "billing", "Postgres", 10)).expect("record");
    store.record(&record_at("new", "orders", "SQLite で十分", 0)).expect("record");
    let keys = |query: HistoryQuery| -> Vec<String> {
        store.history(&query).expect("history").into_iter().map(|e| e.record.key).collect()
    };
    assert_eq!(keys(HistoryQuery::default()), ["new", "mid", "old"]);
    let since = SystemTime::now() - Duration::from_secs(20 * 24 * 3600);
    assert_eq!(keys(HistoryQuery { since: Some(since), ..Default::default() }), ["new", "mid"]);
    assert_eq!(
        keys(HistoryQuery { project: Some("orders".into()), ..Default::default() }),
        ["new", "old"]
    );
    assert_eq!(
        keys(HistoryQuery { search: Some("POSTGRES".into()), ..Default::default() }),
        ["mid"]
    );
    assert_eq!(keys(HistoryQuery { search: Some("十分".into()), ..Default::default() }), ["new"]);
    assert_eq!(
        keys(HistoryQuery { search: Some("database for old".into()), ..Default::default() }),
        ["old"]
    );
    assert_eq!(
        keys(HistoryQuery { search: Some("%".into()), ..Default::default() }),
        Vec::<String>::new()
    );
    assert_eq!(keys(HistoryQuery { limit: Some(1), ..Default::default() }), ["new"]);
}

#[test]
fn pruning_removes_only_what_ended_before_the_retention() {
    let mut store = Store::in_memory().expect("store");
    store.record(&record_at("old", "orders", "MySQL", 100)).expect("record");
    store.record(&record_at("new", "orders", "Postgres", 1)).expect("record");
    let before = SystemTime::now() - Duration::from_secs(DEFAULT_KEEP_DAYS * 24 * 3600);
    assert_eq!(store.prune(before).expect("prune"), 1);
    let left = store.history(&HistoryQuery::default()).expect("history");
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].record.key, "new");
    assert_eq!(store.prune(before).expect("prune again"), 0);
}

#[test]
fn an_open_request_whose_process_is_gone_is_recorded_as_abandoned_keeping_its_drafts() {
    let mut store = Store::in_memory().expect("store");
    let core = core(Some("toolu_gone"), "Cache");
    store.opened(&OpenRecord::new(&core, SystemTime::now())).expect("open");
    store
        .save_draft("toolu_gone", "asked", 0, &typed("Redis", ""), SystemTime::now())
        .expect("draft");
    assert!(store.abandon("toolu_gone", SystemTime::now()).expect("abandon"));
    assert!(!store.abandon("toolu_gone", SystemTime::now()).expect("only once"));
    assert!(store.open_requests().expect("open").is_empty());
    let entries = store.history(&HistoryQuery::default()).expect("history");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].record.ended, Ended::Abandoned);
    assert_eq!(entries[0].record.header, "Cache");
    assert_eq!(store.drafts_for("toolu_gone").expect("drafts"), vec![typed("Redis", "")]);
}

#[test]
fn only_requests_whose_askpane_is_gone_are_swept_as_abandoned() {
    let mut store = Store::in_memory().expect("store");
    let mut held = OpenRecord::new(&core(Some("toolu_held"), "Held"), SystemTime::now());
    held.pid = 100;
    let mut left = OpenRecord::new(&core(Some("toolu_left"), "Left"), SystemTime::now());
    left.pid = 200;
    store.opened(&held).expect("open");
    store.opened(&left).expect("open");
    let swept = store.abandon_orphans(SystemTime::now(), |pid| pid == 100).expect("sweep");
    assert_eq!(swept, 1);
    let open: Vec<String> =
        store.open_requests().expect("open").into_iter().map(|r| r.key).collect();
    assert_eq!(open, ["toolu_held"]);
    let entries = store.history(&HistoryQuery::default()).expect("history");
    assert_eq!((entries.len(), entries[0].record.header.as_str()), (1, "Left"));
    // Asked again (by a live askpane) before the sweep: the row is that askpane's now.
    left.pid = 100;
    store.opened(&left).expect("asked again");
    assert_eq!(store.abandon_orphans(SystemTime::now(), |pid| pid == 100).expect("sweep"), 0);
}

#[test]
fn the_state_dir_follows_the_flag_then_the_platform() {
    let platform = Some(PathBuf::from("/s"));
    let flag = Some(Path::new("/x/y"));
    assert_eq!(state_dir_from(flag, platform.clone()).expect("dir"), PathBuf::from("/x/y"));
    assert_eq!(state_dir_from(None, platform).expect("dir"), PathBuf::from("/s/askpane"));
    assert!(matches!(state_dir_from(None, None), Err(StoreError::NoStateDir)));
}

/// Issue 24 item 5: a draft goes back only into the very questions it was typed into. A request
/// that reuses the id with other questions (or other options) opens empty.
#[test]
fn a_draft_is_restored_only_into_the_same_questions() {
    use crate::book::journal::Journal;
    let dir = scratch("same-questions");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let typed_into = core(Some("toolu_reused"), "Database");
    let mut picked = Form::default();
    picked.draft.pick(&typed_into.ask.questions()[0], Pick::Option(1));
    sink.opened(&typed_into);
    Journal::draft_changed(&sink, &typed_into, 0, &picked);
    sink.flush();

    // The same id, other questions ("Drop the production database now?"): nothing restored.
    let other = core(Some("toolu_reused"), "Production");
    let mut policy = crate::book::Policy::default();
    Journal::restore(&sink, &other, &mut policy);
    assert!(policy.preset.is_empty(), "restored into different questions: {policy:?}");

    // The same id and questions with one option more: not the same request either.
    let input = json!({"questions": [{
        "question": "Which Database?", "header": "Database", "multiSelect": false,
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"},
            {"label": "C", "description": "c"}]
    }]});
    let message = json!({"type": "tool_use", "name": "AskUserQuestion", "id": "toolu_reused",
        "input": input});
    let incoming = parse_message(&message).expect("a message askpane reads");
    let widened = core_of(incoming, Provenance::new("ask", None));
    Journal::restore(&sink, &widened, &mut policy);
    assert!(policy.preset.is_empty(), "restored into other options: {policy:?}");

    // The very same questions: restored, and known to be a saved draft.
    Journal::restore(&sink, &typed_into, &mut policy);
    assert_eq!(policy.preset.first().map(Draft::chosen), Some([1].as_slice()));
    assert_eq!(policy.prefill, crate::protocol::Prefill::SavedDraft);
}

/// Issue 24 item 14: a request without a tool_use_id is stored under a key made from what was
/// asked and who asked: asked again (after a crash), it finds its drafts.
#[test]
fn a_request_without_an_id_has_a_stable_key_from_its_content_and_origin() {
    let first = core(None, "Database");
    let again = core(None, "Database");
    assert_ne!(first.id, again.id, "two requests");
    assert_eq!(request_key(&first), request_key(&again));
    assert!(request_key(&first).starts_with("asked-"), "{}", request_key(&first));
    assert_ne!(request_key(&first), request_key(&core(None, "Cache")), "other questions");
    let mut elsewhere = core(None, "Database");
    elsewhere.provenance.project = Some("billing".into());
    assert_ne!(request_key(&first), request_key(&elsewhere), "another project");

    use crate::book::journal::Journal;
    let dir = scratch("no-id");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    Journal::draft_changed(&sink, &first, 0, &typed("Redis", "for caching"));
    sink.flush();
    let mut policy = crate::book::Policy::default();
    Journal::restore(&sink, &again, &mut policy);
    assert_eq!(policy.preset.first().map(Draft::other_text), Some("Redis"));
}

/// Issue 24 item 14: what was picked and typed on a request that did not end answered stays in
/// history (shown, searchable): before, declined, closed and timed-out requests showed an empty
/// answer although their drafts were in the store.
#[test]
fn history_keeps_what_was_typed_on_a_request_that_did_not_end_answered() {
    use crate::book::journal::Journal;
    let dir = scratch("unsent");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let asked = core(Some("toolu_unsent"), "Database");
    sink.opened(&asked);
    Journal::draft_changed(&sink, &asked, 0, &typed("Redis for caching", "only on staging"));
    Journal::settled(&sink, &asked, &Outcome::declined("not now"));
    drop(sink);
    let store = Store::open_in(&dir).expect("reader");
    let entries = store.history(&HistoryQuery::default()).expect("history");
    let [entry] = entries.as_slice() else { panic!("one entry: {entries:?}") };
    assert_eq!(
        entry.record.answer,
        "The user declined to answer these questions and said: not now · not sent: Database: \
         Redis for caching (note: only on staging)"
    );
    let found = store
        .history(&HistoryQuery { search: Some("redis".into()), ..HistoryQuery::default() })
        .expect("search");
    assert_eq!(found.len(), 1, "searchable");
}

/// Issue 25: the outcome's kind is read back as a kind; `abandoned` (history's own) and a name
/// a newer askpane stored are kept and shown as they are, never an error.
#[test]
fn stored_outcome_names_read_back_as_kinds_and_an_unknown_one_as_it_is() {
    let dir = scratch("outcome-names");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(FILE_NAME);
    drop(Store::open_file(&path).expect("a new store"));
    {
        let connection = Connection::open(&path).expect("file");
        for (key, ended, outcome) in [
            ("a", "answered", "replied"),
            ("b", "abandoned", "abandoned"),
            ("c", "declined", "declined_politely"),
        ] {
            connection
                .execute(
                    "INSERT INTO history (key, asked_at, ended_at, source, header, questions,
                     ended, outcome, answer) VALUES (?1, 1, 2, 'ask', 'Database', '{}', ?2, ?3,
                     '')",
                    [key, ended, outcome],
                )
                .expect("a row");
        }
    }
    let store = Store::open_file(&path).expect("open");
    let mut entries = store.history(&HistoryQuery::default()).expect("history");
    entries.sort_by(|a, b| a.record.key.cmp(&b.record.key));
    let outcomes: Vec<RecordedOutcome> =
        entries.iter().map(|entry| entry.record.outcome.clone()).collect();
    assert_eq!(
        outcomes,
        [
            RecordedOutcome::Kind(crate::protocol::OutcomeKind::Replied),
            RecordedOutcome::Abandoned,
            RecordedOutcome::Other("declined_politely".to_owned()),
        ]
    );
    let names: Vec<&str> = outcomes.iter().map(RecordedOutcome::as_str).collect();
    assert_eq!(names, ["replied", "abandoned", "declined_politely"], "shown as stored");
}

// --- Issue 26: approvals in history ----------------------------------------------------------

/// A hook's `Bash` call of `command`, suggesting an "always" rule for it in this project.
fn bash_call(command: &str) -> crate::protocol::stream::PermissionRequest {
    let suggestions = crate::protocol::permission::parse_suggestions(Some(&json!([{
        "type": "addRules", "behavior": "allow", "destination": "localSettings",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}]}])));
    crate::protocol::stream::PermissionRequest {
        request_id: "inbox-1-1".to_owned(),
        tool_name: "Bash".to_owned(),
        input: json!({"command": command, "description": "Run the tests"}),
        tool_use_id: Some("toolu_bash_9".to_owned()),
        suggestions,
        origin: crate::protocol::permission::ApprovalOrigin::Hook,
        ..Default::default()
    }
}

fn approval_record(
    request: &crate::protocol::stream::PermissionRequest,
    outcome: crate::protocol::permission::ApprovalOutcome,
    decision: &crate::protocol::stream::PermissionDecision,
) -> HistoryRecord {
    let provenance = Provenance::new("hook", None).with_project(Some("shop".to_owned()));
    // Whole milliseconds, as the store keeps times.
    let ended_at = from_millis(to_millis(SystemTime::now()));
    let asked_at = ended_at - Duration::from_secs(7);
    HistoryRecord::of_approval(request, provenance, outcome, decision, (Some(asked_at), ended_at))
}

#[test]
fn an_approval_is_recorded_and_read_back_with_its_decision_rule_and_times() {
    use crate::protocol::history::HistoryKind;
    use crate::protocol::permission::{ApprovalOrigin, ApprovalOutcome};
    use crate::protocol::stream::PermissionDecision;
    let mut store = Store::in_memory().expect("store");
    let request = bash_call("npm test -- --watch=false");
    let suggestion = request.suggestions.first().cloned().expect("a suggestion");
    let always = PermissionDecision::AllowAlways { suggestion };
    let record = approval_record(&request, ApprovalOutcome::AllowedAlways, &always);
    store.record(&record).expect("record");
    let entries = store.history(&HistoryQuery::default()).expect("history");
    let [entry] = entries.as_slice() else { panic!("one entry: {entries:?}") };
    assert_eq!(entry.record, record, "read back as it was recorded");
    assert_eq!(entry.record.kind(), HistoryKind::Approval);
    assert_eq!(entry.record.header, "Bash: npm test -- --watch=false");
    assert_eq!(entry.record.ended, Ended::Allowed);
    assert_eq!(entry.record.outcome.as_str(), "allowed_always");
    let approval = entry.record.approval.as_ref().expect("an approval's facts");
    assert_eq!(approval.tool, "Bash");
    assert_eq!(approval.rule.as_deref(), Some("Always allow `npm test *` in this project"));
    assert_eq!(approval.deny_message, None);
    assert_eq!(approval.origin, ApprovalOrigin::Hook);
    assert_eq!(entry.asked_at + Duration::from_secs(7), entry.record.ended_at);
    // The hook's reply line, byte for byte what Claude Code was given.
    let reply: serde_json::Value =
        serde_json::from_str(entry.record.reply.as_deref().expect("a reply")).expect("JSON");
    assert_eq!(reply["hookSpecificOutput"]["decision"]["behavior"], "allow");
    // A deny keeps its message, which is what the model read; a plan is a kind of its own.
    let denied = PermissionDecision::Deny { message: "Not on main.".to_owned() };
    store
        .record(&approval_record(&bash_call("git push"), ApprovalOutcome::Denied, &denied))
        .expect("record");
    let plan = crate::protocol::stream::PermissionRequest {
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": "1. Add the migration"}),
        ..bash_call("")
    };
    let handed = PermissionDecision::HandBack;
    store.record(&approval_record(&plan, ApprovalOutcome::HandedBack, &handed)).expect("record");
    store.record(&record_at("question", "shop", "SQLite", 0)).expect("record");
    let kinds = |kind| -> Vec<String> {
        let query = HistoryQuery { kind: Some(kind), ..Default::default() };
        store.history(&query).expect("history").into_iter().map(|e| e.record.header).collect()
    };
    assert_eq!(kinds(HistoryKind::Approval), ["Bash: git push", "Bash: npm test -- --watch=false"]);
    assert_eq!(kinds(HistoryKind::Plan), ["ExitPlanMode: 1. Add the migration"]);
    assert_eq!(kinds(HistoryKind::Question), ["Database"]);
    let denied = &store.history(&HistoryQuery::default()).expect("history")[2].record;
    assert_eq!(denied.outcome.as_str(), "denied");
    let facts = denied.approval.as_ref().expect("facts");
    assert_eq!(facts.deny_message.as_deref(), Some("Not on main."));
    assert_eq!(denied.model_text.as_deref(), Some("Not on main."));
}

#[test]
fn a_search_finds_an_approval_by_its_command_and_its_rule() {
    use crate::protocol::permission::ApprovalOutcome;
    use crate::protocol::stream::PermissionDecision;
    let mut store = Store::in_memory().expect("store");
    let request = bash_call("cargo build --release");
    let suggestion = request.suggestions.first().cloned().expect("a suggestion");
    let always = PermissionDecision::AllowAlways { suggestion };
    store
        .record(&approval_record(&request, ApprovalOutcome::AllowedAlways, &always))
        .expect("record");
    let once = PermissionDecision::AllowOnce;
    store
        .record(&approval_record(&bash_call("ls -la"), ApprovalOutcome::AllowedOnce, &once))
        .expect("record");
    store.record(&record_at("question", "shop", "SQLite", 0)).expect("record");
    let found = |text: &str| -> Vec<String> {
        let query = HistoryQuery { search: Some(text.to_owned()), ..Default::default() };
        store.history(&query).expect("history").into_iter().map(|e| e.record.header).collect()
    };
    assert_eq!(found("CARGO BUILD"), ["Bash: cargo build --release"], "by its command, any case");
    assert_eq!(found("npm test *"), ["Bash: cargo build --release"], "by the rule it added");
    assert_eq!(found("ls -la"), ["Bash: ls -la"]);
    assert_eq!(found("SQLite"), ["Database"]);
}

/// A database an askpane made before approvals were kept (version 4) opens: its questions stay
/// and read as questions, and approvals are recorded beside them.
#[test]
fn a_version_4_database_upgrades_keeping_its_questions_and_takes_approvals() {
    use crate::protocol::history::HistoryKind;
    use crate::protocol::permission::ApprovalOutcome;
    let dir = scratch("v4-approvals");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(FILE_NAME);
    {
        let mut connection = Connection::open(&path).expect("file");
        schema::migrate_to(&mut connection, 4).expect("version 4");
        connection
            .execute(
                "INSERT INTO history (key, asked_at, ended_at, source, header, questions,
                 ended, outcome, answer) VALUES ('k', 1, 2, 'hook', 'Database', '{}',
                 'withdrawn', 'withdrawn', '')",
                [],
            )
            .expect("a version 4 row");
    }
    let mut store = Store::open_file(&path).expect("open migrates");
    assert_eq!(store.version().expect("v"), schema::LATEST);
    let decision = crate::protocol::stream::PermissionDecision::HandBack;
    let record = approval_record(&bash_call("make"), ApprovalOutcome::Withdrawn, &decision);
    store.record(&record).expect("record");
    let entries = store.history(&HistoryQuery::default()).expect("history");
    let kinds: Vec<(HistoryKind, &str)> =
        entries.iter().map(|e| (e.record.kind(), e.record.outcome.as_str())).collect();
    assert_eq!(kinds, [(HistoryKind::Approval, "withdrawn"), (HistoryKind::Question, "withdrawn")]);
    let question = &entries[1].record;
    assert_eq!(question.outcome, RecordedOutcome::Kind(crate::protocol::OutcomeKind::Withdrawn));
    assert_eq!(question.approval, None);
    assert_eq!(
        entries[0].record.outcome,
        RecordedOutcome::Approval(ApprovalOutcome::Withdrawn),
        "an approval's `withdrawn` is its own"
    );
}

/// Issue 27: what a remote host asked keeps its host, is found by it, and its ids are its own.
#[test]
fn history_keeps_the_host_of_a_remote_request_and_filters_by_it() {
    let mut store = Store::in_memory().expect("store");
    let mut remote = record_at("devbox/toolu_1", "orders", "Postgres", 0);
    remote.provenance.host = Some("devbox".to_owned());
    store.record(&remote).expect("record");
    store.record(&record_at("toolu_1", "orders", "MySQL", 1)).expect("record");
    let entries = |host: Option<&str>| -> Vec<(String, Option<String>)> {
        let query = HistoryQuery { host: host.map(str::to_owned), ..Default::default() };
        let entries = store.history(&query).expect("history").into_iter();
        entries.map(|entry| (entry.record.key, entry.record.provenance.host)).collect()
    };
    assert_eq!(
        entries(None),
        [("devbox/toolu_1".to_owned(), Some("devbox".to_owned())), ("toolu_1".to_owned(), None)]
    );
    assert_eq!(entries(Some("devbox")), [("devbox/toolu_1".to_owned(), Some("devbox".to_owned()))]);
    assert!(entries(Some("laptop")).is_empty());
}

#[test]
fn a_remote_request_s_key_is_under_its_host_and_never_meets_a_local_one() {
    let local = core(Some("toolu_same"), "Colour");
    let mut remote = core(Some("toolu_same"), "Colour");
    remote.provenance.host = Some("devbox".to_owned());
    let mut other = core(Some("toolu_same"), "Colour");
    other.provenance.host = Some("devbox2".to_owned());
    assert_eq!(request_key(&local), "toolu_same");
    assert_eq!(request_key(&remote), "devbox/toolu_same");
    assert_eq!(request_key(&other), "devbox2/toolu_same");
    // Without a tool_use_id too: the made-up key is under the host.
    let mut asked = core(None, "Colour");
    let local_key = request_key(&asked);
    asked.provenance.host = Some("devbox".to_owned());
    assert_eq!(request_key(&asked), format!("devbox/{local_key}"));
}

// ---------------------------------------------------------------------------------------------
// Plan drafts (issue 26 leftovers)

/// A plan card as the window holds it, asked by a hook with this tool_use_id.
fn plan_card(tool_use_id: Option<&str>) -> crate::book::approval::PendingPermission {
    use crate::book::approval::Approvals;
    let request = crate::protocol::stream::PermissionRequest {
        request_id: "plan-1".to_owned(),
        tool_name: "ExitPlanMode".to_owned(),
        input: json!({"plan": "# Greeting\n\nChange the greeting.\n\n1. 日本語を書く\n"}),
        tool_use_id: tool_use_id.map(str::to_owned),
        ..Default::default()
    };
    let mut approvals: Approvals<()> = Approvals::default();
    let provenance = Provenance::new("hook", Some("shop".to_owned()));
    approvals.ask(crate::protocol::origin::RequestId::next(), request, provenance, ());
    approvals.cards().next().cloned().expect("the card")
}

/// `card` with a comment on block `block` and a note written.
fn reviewed(
    mut card: crate::book::approval::PendingPermission,
    block: usize,
    text: &str,
) -> crate::book::approval::PendingPermission {
    use crate::book::plan::PlanAction;
    let review = card.plan.as_mut().expect("a plan");
    review.apply(PlanAction::Comment { block });
    review.apply(PlanAction::EditComment { block, text: text.to_owned() });
    review.apply(PlanAction::SetNote("Also the README.".to_owned()));
    card
}

/// How `card` ended, as the window tells its journal (nobody named as deciding it).
fn ended_as(
    card: &crate::book::approval::PendingPermission,
    outcome: crate::protocol::permission::ApprovalOutcome,
    decision: crate::protocol::stream::PermissionDecision,
) -> crate::book::approval::EndedApproval {
    crate::book::approval::EndedApproval {
        id: card.id,
        request: card.request.clone(),
        provenance: card.provenance.clone(),
        outcome,
        decision,
        answered_by: None,
    }
}

#[test]
fn a_plan_draft_survives_the_process_and_is_restored_into_the_same_plan_only() {
    use crate::book::journal::Journal;
    let dir = scratch("plan-drafts");
    let card = reviewed(plan_card(Some("toolu_plan")), 2, &"コメント".repeat(25_000));
    {
        let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
        // A burst of typing: the last wins.
        sink.plan_changed(&reviewed(plan_card(Some("toolu_plan")), 1, "first"));
        sink.plan_changed(&card);
        sink.flush();
        // The process ends without the plan being decided (dropping the sink, as a crash
        // loses at most the debounce window).
    }
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let restored = sink.restore_plan(&plan_card(Some("toolu_plan"))).expect("a draft");
    assert_eq!(restored, card.plan.as_ref().expect("a plan").draft());
    assert_eq!(restored.comments.len(), 1);
    assert_eq!(restored.comments[0].quoted, "1. 日本語を書く");
    // Another plan (another tool_use_id, or none) gets nothing.
    assert_eq!(sink.restore_plan(&plan_card(Some("toolu_other"))), None);
    assert_eq!(sink.restore_plan(&plan_card(None)), None);
    // A question's card that is not a plan is never given a plan's draft.
    let mut bash = plan_card(Some("toolu_plan"));
    bash.plan = None;
    assert_eq!(sink.restore_plan(&bash), None);
}

#[test]
fn a_plan_draft_goes_when_the_plan_is_decided_and_stays_when_it_ended_without_the_person() {
    use crate::book::journal::Journal;
    use crate::protocol::permission::ApprovalOutcome;
    use crate::protocol::stream::PermissionDecision;
    let dir = scratch("plan-drafts-decided");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let card = reviewed(plan_card(Some("toolu_plan")), 1, "Say why.");
    let ended = |outcome, decision| ended_as(&card, outcome, decision);
    sink.plan_changed(&card);
    sink.approval_ended(&ended(ApprovalOutcome::Withdrawn, PermissionDecision::HandBack));
    sink.approval_ended(&ended(ApprovalOutcome::NoHuman, PermissionDecision::HandBack));
    assert!(sink.restore_plan(&card).is_some(), "withdrawn, or askpane ended: kept");
    // Typed and decided within one debounce window: the pending draft goes too.
    sink.plan_changed(&card);
    let message = "The user did not approve this plan …".to_owned();
    sink.approval_ended(&ended(ApprovalOutcome::Denied, PermissionDecision::Deny { message }));
    assert_eq!(sink.restore_plan(&card), None, "kept planning: done with");
    sink.flush();
    let store = Store::open_in(&dir).expect("store");
    assert_eq!(store.plan_draft(&plan_key(&card.request, &card.provenance)).expect("read"), None);
}

/// An ACP agent's form card (issue 28) as the window holds it, asked in `project`.
fn form_card(project: &str) -> crate::book::approval::PendingPermission {
    use crate::book::approval::Approvals;
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "title": "Name"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "confirm": {"type": "boolean"}}, "required": ["name"]});
    let request = crate::protocol::stream::PermissionRequest {
        request_id: "form-1".to_owned(),
        tool_name: crate::protocol::permission::FORM_TOOL.to_owned(),
        input: crate::book::form::card_input("Deploy where?", &schema),
        ..Default::default()
    };
    let mut approvals: Approvals<()> = Approvals::default();
    let provenance = Provenance::new("acp", Some(project.to_owned()));
    approvals.ask(crate::protocol::origin::RequestId::next(), request, provenance, ());
    approvals.cards().next().cloned().expect("the card")
}

/// `card` with `name` typed into its Name field.
fn filled(
    mut card: crate::book::approval::PendingPermission,
    name: &str,
) -> crate::book::approval::PendingPermission {
    use crate::book::form::FormAction;
    use crate::protocol::acp::form::FieldValue;
    let review = card.form.as_mut().expect("a form");
    let value = Some(FieldValue::Text(name.to_owned()));
    assert_eq!(review.apply(FormAction::Set { field: 0, value }), None);
    card
}

#[test]
fn a_form_s_draft_survives_the_process_and_goes_once_sent_or_declined_never_otherwise() {
    use crate::book::journal::Journal;
    use crate::protocol::permission::ApprovalOutcome;
    use crate::protocol::stream::PermissionDecision;
    let dir = scratch("form-drafts");
    let card = filled(form_card("shop"), &"名前".repeat(20_000));
    {
        let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
        // A burst of typing: the last wins.
        sink.form_changed(&filled(form_card("shop"), "first"));
        sink.form_changed(&card);
        sink.flush();
    }
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    let restored = sink.restore_form(&form_card("shop")).expect("a draft");
    assert_eq!(restored, card.form.as_ref().expect("a form").draft());
    // The same form asked in another project, a plan, or a card that is no form: nothing.
    assert_eq!(sink.restore_form(&form_card("other")), None);
    assert_eq!(sink.restore_form(&plan_card(Some("toolu_plan"))), None);
    assert_eq!(sink.restore_plan(&card), None, "a form's draft is never a plan's");
    let ended = |outcome, decision| ended_as(&card, outcome, decision);
    // Nobody answered (the agent took it back, askpane ended, Stop): kept.
    sink.approval_ended(&ended(ApprovalOutcome::Withdrawn, PermissionDecision::HandBack));
    sink.approval_ended(&ended(ApprovalOutcome::HandedBack, PermissionDecision::HandBack));
    sink.approval_ended(&ended(ApprovalOutcome::NoHuman, PermissionDecision::HandBack));
    assert!(sink.restore_form(&card).is_some(), "ended without the person: kept");
    // Declined: done with. Typed again and sent (allowed once) within one debounce: done with.
    let message = crate::book::form::DECLINED.to_owned();
    sink.approval_ended(&ended(ApprovalOutcome::Denied, PermissionDecision::Deny { message }));
    assert_eq!(sink.restore_form(&card), None, "declined: done with");
    sink.form_changed(&card);
    let content = serde_json::Map::new();
    sink.approval_ended(&ended(ApprovalOutcome::AllowedOnce, PermissionDecision::Fill { content }));
    assert_eq!(sink.restore_form(&card), None, "sent: done with");
    sink.flush();
    let store = Store::open_in(&dir).expect("store");
    let key = crate::store::form_key(&card.request, &card.provenance);
    assert!(key.starts_with("form-"), "{key}");
    assert_eq!(store.form_draft(&key).expect("read"), None);
}

#[test]
fn a_plan_draft_that_does_not_read_is_none_not_an_error() {
    let dir = scratch("plan-drafts-broken");
    let mut store = Store::open_in(&dir).expect("store");
    store
        .connection()
        .execute("INSERT INTO card_drafts (key, draft, saved_at) VALUES ('plan-x', '{\"comments\": 7}', 1)", [])
        .expect("a broken row");
    assert_eq!(store.plan_draft("plan-x").expect("read"), None);
    assert_eq!(store.plan_draft("plan-none").expect("read"), None);
}

#[test]
fn a_card_asked_again_after_a_crash_is_as_old_as_when_it_was_first_asked() {
    use crate::book::journal::Journal;
    use crate::protocol::permission::ApprovalOutcome;
    use crate::protocol::stream::PermissionDecision;
    let dir = scratch("cards-first-asked");
    let card = plan_card(Some("toolu_first"));
    let first = {
        let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
        assert_eq!(sink.card_first_asked(&card), None, "never asked before");
        sink.approval_opened(&card);
        let first = sink.card_first_asked(&card).expect("asked now");
        // The inbox dies with the card open.
        first
    };
    std::thread::sleep(Duration::from_millis(20));
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    // Asked again (a relay's resend: another card id, the same call): as old as the first time.
    let again = plan_card(Some("toolu_first"));
    sink.approval_opened(&again);
    assert_eq!(sink.card_first_asked(&again), Some(first));
    assert_eq!(sink.card_first_asked(&plan_card(Some("toolu_other"))), None);
    // Ended by the person: a later ask of it is new.
    sink.approval_ended(&ended_as(
        &again,
        ApprovalOutcome::AllowedOnce,
        PermissionDecision::AllowOnce,
    ));
    assert_eq!(sink.card_first_asked(&again), None);
}

#[test]
fn a_card_without_a_tool_use_id_keeps_no_first_ask() {
    use crate::book::journal::Journal;
    let dir = scratch("cards-no-id");
    let sink = DraftSink::start(Store::open_in(&dir).expect("store")).expect("writer");
    // A hook's PermissionRequest names no tool call: a later ask of the same command is not
    // told from a resend, so none is kept.
    let card = plan_card(None);
    sink.approval_opened(&card);
    assert_eq!(sink.card_first_asked(&card), None);
    assert_eq!(card_key(&card.request, &card.provenance), None);
}

/// Issues 26 × 27: a plan's draft and a card's first ask from a remote host are kept under the
/// host, so the same tool call id from this machine or another host never meets them.
#[test]
fn plan_and_card_keys_of_a_remote_host_are_under_its_host() {
    let local = plan_card(Some("toolu_same"));
    let mut remote = plan_card(Some("toolu_same"));
    remote.provenance.host = Some("devbox".to_owned());
    assert_eq!(plan_key(&local.request, &local.provenance), "plan-toolu_same");
    assert_eq!(plan_key(&remote.request, &remote.provenance), "devbox/plan-toolu_same");
    assert_eq!(card_key(&local.request, &local.provenance).as_deref(), Some("card-toolu_same"));
    assert_eq!(
        card_key(&remote.request, &remote.provenance).as_deref(),
        Some("devbox/card-toolu_same")
    );
    let (local, mut remote) = (plan_card(None), plan_card(None));
    remote.provenance.host = Some("devbox".to_owned());
    let local_key = plan_key(&local.request, &local.provenance);
    assert_eq!(plan_key(&remote.request, &remote.provenance), format!("devbox/{local_key}"));
}

/// The entries `text` is in, by the rule a search has always had (any ASCII letter's case
/// ignored, every character literal), read from every row: what an indexed search must find.
fn holding(store: &Store, text: &str) -> Vec<String> {
    let all = store.history(&HistoryQuery::default()).expect("history");
    let folded = text.to_ascii_lowercase();
    all.into_iter()
        .filter(|entry| {
            let record = &entry.record;
            [Some(&record.questions), Some(&record.answer), record.model_text.as_ref()]
                .into_iter()
                .flatten()
                .any(|column| column.to_ascii_lowercase().contains(&folded))
        })
        .map(|entry| entry.record.key)
        .collect()
}

/// Issue 30: a search at 100 000 entries reads the trigram index; it finds exactly what the scan
/// found: substrings, any ASCII case, CJK, `%`, `_`, `"` and `\` as themselves, text shorter
/// than a trigram (read by the scan), and text most entries hold (read by the scan too).
#[test]
fn an_indexed_search_finds_exactly_what_every_row_read_finds() {
    let mut store = Store::in_memory().expect("store");
    let answers = [
        "SQLite で十分です",
        "Postgres 16",
        "50% of \"the\" rows_left",
        "back\\slash and Ünïcode",
        "emoji 🦀🦀 crab",
        "kaleidoscope",
        "ok",
        "ending in 片仮",
        "Ωmega ЖУК",
    ];
    for (n, answer) in answers.iter().enumerate() {
        store.record(&record_at(&format!("k{n}"), "orders", answer, 1)).expect("record");
    }
    // More entries than a page of the index is read for, each holding "common".
    for n in 0..SPARSE_MATCHES + 10 {
        store.record(&record_at(&format!("c{n}"), "shop", "the common answer", 2)).expect("record");
    }
    let searched = |text: &str| -> Vec<String> {
        let query = HistoryQuery { search: Some(text.to_owned()), ..Default::default() };
        store.history(&query).expect("history").into_iter().map(|e| e.record.key).collect()
    };
    for text in [
        "十分で",
        "で十分",
        "十分",
        "十",
        "POSTGRES",
        "gres 1",
        "50%",
        "% of",
        "\"the\"",
        "s_l",
        "rows_left",
        "k\\s",
        "Ünïcode",
        "ünïcode",
        "🦀🦀",
        "🦀",
        "KALEIDO",
        "scope",
        "ab",
        "x",
        // Two characters or one only at the end of a column, or a whole column of two.
        "16",
        "6",
        "OK",
        "k",
        "片仮",
        "仮",
        "🦀 ",
        "rab",
        "Ωm",
        "ωm",
        "уК",
        "Ж",
        "\\s",
        "%",
        "_l",
        "\"",
        "database for k3",
        "common",
        "COMMON ANSWER",
        "nowhere at all",
        "\"\"\"",
        "\" AND \"",
        "NEAR(a b)",
        "*",
        "kal*",
        "kale\0idoscope",
        "\0\0\0",
    ] {
        let found = searched(text);
        let held = holding(&store, text);
        assert_eq!(found, held, "searching {text:?}");
        // A page: the index for a text few entries hold, the newest rows for a common one.
        let query =
            HistoryQuery { search: Some(text.to_owned()), limit: Some(3), ..Default::default() };
        let page: Vec<String> =
            store.history(&query).expect("history").into_iter().map(|e| e.record.key).collect();
        assert_eq!(page, held.iter().take(3).cloned().collect::<Vec<_>>(), "a page of {text:?}");
    }
    assert_eq!(searched("十分で"), ["k0"]);
    assert_eq!(searched("KALEIDO"), ["k5"]);
    assert_eq!(searched("common").len(), SPARSE_MATCHES + 10);
    assert_eq!(store.indexed_matches(&trigram_query("KALEIDO").expect("3+")).expect("n"), 1);
    assert_eq!(trigram_query("十分"), None, "two characters: no trigram of their own");
}

/// Issue 30: a search of one or two characters (`十分`, `db`) is answered through the trigram
/// index too (the trigrams that begin with it), never by reading every row: an entry the index
/// does not know (its trigger dropped for the test) is not found, one it knows is, the page and
/// every match alike. A two-character CJK word is the common case.
#[test]
fn a_search_of_one_or_two_characters_is_answered_by_the_index() {
    let mut store = Store::in_memory().expect("store");
    store.record(&record_at("indexed", "orders", "SQLite で十分です", 3)).expect("record");
    store.record(&record_at("tail", "orders", "ends with 十分", 3)).expect("record");
    store.connection().execute_batch("DROP TRIGGER history_fts_insert").expect("no trigger");
    store.record(&record_at("unindexed", "orders", "これで十分", 1)).expect("record");
    for limit in [None, Some(PAGE_SIZE)] {
        for (text, wanted) in [("十分", vec!["tail", "indexed"]), ("分", vec!["tail", "indexed"])]
        {
            let query = HistoryQuery { search: Some(text.to_owned()), limit, ..Default::default() };
            let found: Vec<String> =
                store.history(&query).expect("history").into_iter().map(|e| e.record.key).collect();
            assert_eq!(found, wanted, "searching {text:?} with the limit {limit:?}");
        }
    }
}

/// The index follows what history holds: a new entry is found at once, a pruned one is gone
/// from the index as from the table, and the index reads whole (FTS5's integrity check).
#[test]
fn the_search_index_follows_new_and_pruned_entries() {
    let mut store = Store::in_memory().expect("store");
    store.record(&record_at("old", "orders", "kaleidoscope one", 100)).expect("record");
    store.record(&record_at("new", "orders", "kaleidoscope two", 1)).expect("record");
    let trigrams = trigram_query("kaleidoscope").expect("a trigram");
    assert_eq!(store.indexed_matches(&trigrams).expect("count"), 2);
    let before = SystemTime::now() - Duration::from_secs(DEFAULT_KEEP_DAYS * 24 * 3600);
    assert_eq!(store.prune(before).expect("prune"), 1);
    assert_eq!(store.indexed_matches(&trigrams).expect("count"), 1, "the pruned entry's rows went");
    store
        .connection()
        .execute("INSERT INTO history_fts (history_fts, rank) VALUES ('integrity-check', 1)", [])
        .expect("the index matches the table");
}

/// A database made before the index (version 7) is migrated: its entries are indexed and found
/// through the index, and new ones join them.
#[test]
fn a_version_7_database_is_indexed_for_search_when_migrated() {
    let dir = scratch("v7-search");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(FILE_NAME);
    {
        let mut connection = Connection::open(&path).expect("file");
        schema::migrate_to(&mut connection, 7).expect("version 7");
        for (key, answer) in [("a", "SQLite で十分です"), ("b", "Postgres"), ("c", "kaleidoscope")]
        {
            connection
                .execute(
                    "INSERT INTO history (key, asked_at, ended_at, source, header, questions,
                     ended, outcome, answer, model_text) VALUES (?1, 1, 2, 'hook', 'Database',
                     '{}', 'answered', 'answered', ?2, 'read')",
                    [key, answer],
                )
                .expect("a version 7 row");
        }
    }
    let mut store = Store::open_file(&path).expect("open migrates");
    assert_eq!(store.version().expect("v"), schema::LATEST);
    for (text, key) in [("十分です", "a"), ("POSTGRES", "b"), ("leidos", "c"), ("十分", "a")]
    {
        let query = HistoryQuery { search: Some(text.to_owned()), ..Default::default() };
        let found: Vec<String> =
            store.history(&query).expect("history").into_iter().map(|e| e.record.key).collect();
        assert_eq!(found, [key], "searching {text:?}");
    }
    assert_eq!(store.indexed_matches(&trigram_query("十分です").expect("3+")).expect("n"), 1);
    store.record(&record_at("d", "orders", "kaleidoscope again", 0)).expect("record");
    assert_eq!(store.indexed_matches(&trigram_query("leidos").expect("3+")).expect("n"), 2);
    store
        .connection()
        .execute("INSERT INTO history_fts (history_fts, rank) VALUES ('integrity-check', 1)", [])
        .expect("the index matches the table");
}

/// Issue 30: drafts of requests never asked again go once untouched for the age given; those
/// of an open request stay however old, recent ones stay, and a plan's comments likewise
/// (kept while its card waits).
#[test]
fn old_drafts_of_requests_no_longer_open_go_and_the_rest_stay() {
    let mut store = Store::in_memory().expect("store");
    let long_ago = SystemTime::now() - Duration::from_secs(40 * 24 * 3600);
    let lately = SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    let form = typed("typed long ago", "a note");
    // Closed (abandoned: no longer open), untouched for 40 days: goes, every question of it.
    store.save_draft("closed-old", "asked", 0, &form, long_ago).expect("draft");
    store.save_draft("closed-old", "asked", 1, &form, long_ago).expect("draft");
    // Closed, one question typed into lately: the request's drafts stay.
    store.save_draft("closed-mixed", "asked", 0, &form, long_ago).expect("draft");
    store.save_draft("closed-mixed", "asked", 1, &form, lately).expect("draft");
    // Closed, recent: stays.
    store.save_draft("closed-recent", "asked", 0, &form, lately).expect("draft");
    // Open (an askpane holds it), untouched for 40 days: stays.
    let record = OpenRecord::new(&core(Some("toolu_still_open"), "Open"), long_ago);
    store.opened(&record).expect("open");
    store.save_draft(&record.key, "asked", 0, &form, long_ago).expect("draft");
    // Plans: one whose card waits, one whose card is gone, one recent, one without an id.
    let plan = PlanDraft { note: "keep the README".to_owned(), ..PlanDraft::default() };
    for key in ["plan-waiting", "devbox/plan-gone", "plan-recent", "plan-0123abcd"] {
        let at = if key == "plan-recent" { lately } else { long_ago };
        store.save_card_draft(key, &plan, at).expect("plan draft");
    }
    store.card_opened("card-waiting", long_ago).expect("card");
    store.card_opened("card-gone", long_ago).expect("a card of another host's plan");
    // Forms (no card key): an old one goes, a recent one stays.
    let fields = crate::book::form::FormDraft { values: vec![("name".to_owned(), None)] };
    store.save_card_draft("form-old", &fields, long_ago).expect("form draft");
    store.save_card_draft("form-recent", &fields, lately).expect("form draft");
    let cutoff = SystemTime::now() - Duration::from_secs(DEFAULT_DRAFT_DAYS * 24 * 3600);
    let pruned = store.prune_drafts(cutoff).expect("prune drafts");
    assert_eq!(pruned, DraftsPruned { forms: 1, cards: 3 });
    assert!(store.form_draft("form-old").expect("read").is_none());
    assert_eq!(store.form_draft("form-recent").expect("read"), Some(fields));
    assert!(store.drafts_for("closed-old").expect("read").is_empty());
    assert_eq!(store.drafts_for("closed-mixed").expect("read").len(), 2);
    assert_eq!(store.drafts_for("closed-recent").expect("read").len(), 1);
    assert_eq!(store.drafts_for(&record.key).expect("read"), [form]);
    assert!(store.plan_draft("plan-waiting").expect("read").is_some());
    assert!(store.plan_draft("plan-recent").expect("read").is_some());
    assert!(store.plan_draft("devbox/plan-gone").expect("read").is_none());
    assert!(store.plan_draft("plan-0123abcd").expect("read").is_none());
    // Again: nothing more is old enough.
    assert_eq!(store.prune_drafts(cutoff).expect("again"), DraftsPruned::default());
    assert_eq!(card_key_of_draft("devbox/plan-x"), "devbox/card-x");
}

/// Issue 30: the History page's next page: the entries older than the one named, in the same
/// order, the search and filters kept, ties in time broken by id; an entry pruned meanwhile
/// has nothing after it.
#[test]
fn a_page_goes_on_after_the_entry_named_in_the_listed_order() {
    let mut store = Store::in_memory().expect("store");
    for n in 0..7 {
        // Two entries at each time: the id decides between them.
        store.record(&record_at(&format!("e{n}"), "orders", "Postgres", n / 2)).expect("record");
    }
    store.record(&record_at("other", "orders", "MySQL", 0)).expect("record");
    let all: Vec<HistoryEntry> = store
        .history(&HistoryQuery { search: Some("postgres".to_owned()), ..Default::default() })
        .expect("history");
    let keys = |entries: &[HistoryEntry]| -> Vec<String> {
        entries.iter().map(|entry| entry.record.key.clone()).collect()
    };
    let mut paged: Vec<HistoryEntry> = Vec::new();
    let mut before = None;
    loop {
        let query = HistoryQuery {
            search: Some("postgres".to_owned()),
            limit: Some(3),
            before,
            ..Default::default()
        };
        let page = store.history(&query).expect("a page");
        let Some(last) = page.last() else { break };
        before = Some(last.id);
        paged.extend(page);
    }
    assert_eq!(keys(&paged), keys(&all));
    assert_eq!(paged.len(), 7);
    let pruned = all.get(2).expect("a third entry").id;
    store.connection().execute("DELETE FROM history WHERE id = ?1", [pruned]).expect("gone");
    let query = HistoryQuery { before: Some(pruned), ..Default::default() };
    assert!(store.history(&query).expect("history").is_empty());
}

/// Issue 30: a version 9 database with entries (indexed without the padding) is indexed again
/// when migrated to version 10: its one- and two-character texts are found through the index,
/// at the end of a column too, three-character ones still are, and the index reads whole.
#[test]
fn a_version_9_database_finds_short_text_through_the_index_when_migrated() {
    let dir = scratch("v9-search");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(FILE_NAME);
    {
        let mut connection = Connection::open(&path).expect("file");
        schema::migrate_to(&mut connection, 9).expect("version 9");
        for (key, answer) in [("a", "SQLite で十分です"), ("b", "Postgres 16"), ("c", "ok")] {
            connection
                .execute(
                    "INSERT INTO history (key, asked_at, ended_at, source, header, questions,
                     ended, outcome, answer, model_text) VALUES (?1, 1, 2, 'hook', 'Database',
                     '{}', 'answered', 'answered', ?2, 'read')",
                    [key, answer],
                )
                .expect("a version 9 row");
        }
    }
    let mut store = Store::open_file(&path).expect("open migrates");
    assert_eq!(store.version().expect("v"), schema::LATEST);
    store
        .connection()
        .execute("INSERT INTO history_fts (history_fts, rank) VALUES ('integrity-check', 1)", [])
        .expect("the index matches the table");
    // The rows of version 9 are not read: only the index can find what they hold.
    store.connection().execute_batch("DROP TRIGGER history_fts_insert").expect("no trigger");
    store.record(&record_at("unindexed", "orders", "十分 16 ok", 0)).expect("record");
    for (text, key) in
        [("十分", "a"), ("分", "a"), ("16", "b"), ("6", "b"), ("OK", "c"), ("十分です", "a")]
    {
        for limit in [None, Some(PAGE_SIZE)] {
            let query = HistoryQuery { search: Some(text.to_owned()), limit, ..Default::default() };
            let found: Vec<String> =
                store.history(&query).expect("history").into_iter().map(|e| e.record.key).collect();
            assert_eq!(found, [key], "searching {text:?} with the limit {limit:?}");
        }
    }
}

/// Issue 30: pruning history takes entries (and their rows of the search index) only: a request
/// still open, the drafts typed into one, a plan's draft and a card's first ask stay however old
/// they are (what the person typed is never lost to a retention).
#[test]
fn pruning_takes_history_only_never_open_requests_or_drafts() {
    let mut store = Store::in_memory().expect("store");
    let long_ago = SystemTime::now() - Duration::from_secs(200 * 24 * 3600);
    let core = core(Some("toolu_waiting"), "Cache");
    store.opened(&OpenRecord::new(&core, long_ago)).expect("open");
    store.save_draft("toolu_waiting", "asked", 0, &typed("Redis", ""), long_ago).expect("draft");
    store.card_opened("card-toolu_plan", long_ago).expect("card");
    store
        .connection()
        .execute(
            "INSERT INTO card_drafts (key, draft, saved_at) VALUES ('plan-toolu_plan', '{}', ?1)",
            [to_millis(long_ago)],
        )
        .expect("a plan draft");
    store.record(&record_at("old", "orders", "kaleidoscope", 100)).expect("record");
    store.record(&record_at("new", "orders", "Postgres", 1)).expect("record");
    let before = SystemTime::now() - Duration::from_secs(DEFAULT_KEEP_DAYS * 24 * 3600);
    assert_eq!(store.prune(before).expect("prune"), 1);
    assert_eq!(store.open_requests().expect("open").len(), 1, "the open request stays");
    assert_eq!(store.drafts_for("toolu_waiting").expect("drafts"), vec![typed("Redis", "")]);
    assert_eq!(
        store.card_first_asked("card-toolu_plan").expect("card"),
        Some(from_millis(to_millis(long_ago)))
    );
    let plans: i64 = store
        .connection()
        .query_row("SELECT count(*) FROM card_drafts", [], |row| row.get(0))
        .expect("count");
    assert_eq!(plans, 1, "the plan's draft stays");
    assert_eq!(store.indexed_matches(&trigram_query("kaleidoscope").expect("3+")).expect("n"), 0);
}

/// `askpane history --keep N`: the newest N entries stay, older ones go with their index rows;
/// a vacuum gives the freed pages back and keeps what stays searchable.
#[test]
fn keeping_the_newest_entries_prunes_the_rest_and_vacuum_shrinks_the_file() {
    let dir = scratch("keep");
    let mut store = Store::open_in(&dir).expect("store");
    for n in 0..300 {
        let mut record = record_at(&format!("k{n}"), "orders", "kaleidoscope", 300 - n);
        record.model_text = Some("a long text the model read ".repeat(40));
        store.record(&record).expect("record");
    }
    assert_eq!(store.prune_keeping(500).expect("nothing to prune"), 0);
    assert_eq!(store.prune_keeping(2).expect("prune"), 298);
    let keys: Vec<String> = store
        .history(&HistoryQuery::default())
        .expect("history")
        .into_iter()
        .map(|entry| entry.record.key)
        .collect();
    assert_eq!(keys, ["k299", "k298"]);
    let (before, after) = store.vacuum().expect("vacuum");
    assert!(after < before, "{before} → {after} bytes");
    let query = HistoryQuery { search: Some("KALEIDO".to_owned()), ..Default::default() };
    assert_eq!(store.history(&query).expect("history").len(), 2);
    assert_eq!(store.prune_keeping(0).expect("prune all"), 2);
    assert!(store.history(&HistoryQuery::default()).expect("history").is_empty());
}

/// The History page's filters: each project and agent once, sorted, none for an entry without
/// one (read a value at a time through the indexes since issue 30; the same lists as before).
#[test]
fn the_facets_list_each_project_and_agent_once_in_order() {
    let mut store = Store::in_memory().expect("store");
    assert_eq!(store.history_facets().expect("facets"), (vec![], vec![]));
    for (n, project) in ["shop", "Blog", "shop", "ääkköset", "blog", "shop"].iter().enumerate() {
        let mut record = record_at(&format!("k{n}"), project, "x", 1);
        record.provenance.source = ["hook", "claude", "ask"][n % 3].to_owned();
        store.record(&record).expect("record");
    }
    let mut unnamed = record_at("none", "x", "x", 1);
    unnamed.provenance.project = None;
    store.record(&unnamed).expect("record");
    let (projects, sources) = store.history_facets().expect("facets");
    assert_eq!(projects, ["Blog", "blog", "shop", "ääkköset"]);
    assert_eq!(sources, ["ask", "claude", "hook"]);
}
