//! The store (issue 11): one SQLite file beside the request book that keeps open requests, the
//! drafts the user is typing (so a crash loses at most the last debounce window) and the history
//! of every outcome. It records; it never decides. Native only.
//!
//! A store that cannot be opened never stops askpane from answering: the caller says so in one
//! line on stderr and runs without it. Drafts reach the file through [`DraftSink`], whose named
//! writer thread (`store-writer`) batches them, so the UI thread only sends a small message.

mod files;
mod records;
pub mod schema;
#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "a test starts its helper threads freely")]
mod tests;
mod writer;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::{Connection, OptionalExtension, params};

use crate::book::Form;
use crate::book::form::FormDraft;
use crate::book::plan::PlanDraft;
use crate::protocol::history::{HistoryFilter, HistoryItem, HistoryKind, HistoryPage, PAGE_SIZE};
use crate::protocol::origin::Provenance;
use crate::protocol::permission::ApprovalOrigin;
use crate::protocol::{Ask, Draft};

pub use records::{
    ApprovalFacts, Ended, HistoryEntry, HistoryQuery, HistoryRecord, OpenRecord, RecordedOutcome,
    asked_fingerprint, card_key, form_key, from_millis, plan_key, request_key, short_answer,
    to_millis,
};
pub use writer::{DEBOUNCE, DraftSink};
// Fitting a saved form to its questions is the book's rule (the page's drafts use it too).
pub use crate::book::fit_forms;

/// The database's file name inside the state directory.
pub const FILE_NAME: &str = "askpane.db";

/// Draft rows past this question index are ignored when read back (a request has at most four
/// questions; the bridge accepts up to 16).
const MAX_SAVED_QUESTIONS: usize = 64;

/// A search whose trigrams fewer entries than this hold reads those entries through the trigram
/// index; one more entries hold reads the rows newest first, where a page of them comes within
/// the first few thousand rows. Either way at most this many rows are read for a page of
/// [`PAGE_SIZE`] when the text is in at least this many entries of 100 000 (benches/history.rs).
const SPARSE_MATCHES: usize = 2000;

/// A search looks up at most this many of its trigrams in the index: enough to narrow a search
/// to the entries that hold it, and a long pasted text costs no more than a phrase.
const SEARCH_TRIGRAMS: usize = 12;

/// A search of one or two characters looks up at most this many of the index's trigrams that
/// begin with it; a text followed by more different characters is common: its entries are found
/// by reading the rows.
const SHORT_TERMS: usize = 256;

/// How long history is kept unless the user says otherwise (`askpane history --prune`).
pub const DEFAULT_KEEP_DAYS: u64 = 90;

/// Why the store could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no state directory: set XDG_STATE_HOME or HOME, or pass --state-dir")]
    NoStateDir,
    #[error("cannot create {}: {source}", path.display())]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("{}: {source}", path.display())]
    Migrate { path: PathBuf, source: schema::MigrateError },
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

impl StoreError {
    /// The file was busy (another askpane held a lock SQLite does not wait for).
    fn is_busy(&self) -> bool {
        let sql = match self {
            StoreError::Open { source, .. } | StoreError::Sql(source) => source,
            StoreError::Migrate { source: schema::MigrateError::Sql(source), .. } => source,
            _ => return false,
        };
        matches!(
            sql.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }
}

/// How long opening the store is retried while the file is busy.
const OPEN_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// Where the state lives: `dir` when given (`--state-dir` / `ASKPANE_STATE_DIR`), else the
/// platform's own place (the `dirs` crate keeps each platform's convention): on Linux
/// `$XDG_STATE_HOME/askpane` (a relative value is ignored, as the XDG spec says), else
/// `~/.local/state/askpane`; on macOS `~/Library/Application Support/askpane`; on Windows
/// `%LOCALAPPDATA%\askpane`.
pub fn state_dir(dir: Option<&Path>) -> Result<PathBuf, StoreError> {
    state_dir_from(dir, dirs::state_dir().or_else(dirs::data_local_dir))
}

/// [`state_dir`] with the platform's directory given.
fn state_dir_from(dir: Option<&Path>, platform: Option<PathBuf>) -> Result<PathBuf, StoreError> {
    match dir {
        Some(dir) => Ok(dir.to_owned()),
        None => Ok(platform.ok_or(StoreError::NoStateDir)?.join("askpane")),
    }
}

/// The SQLite database.
#[derive(Debug)]
pub struct Store {
    connection: Connection,
}

impl Store {
    /// Opens (creating if needed) the database in askpane's own state directory `dir` and
    /// brings its schema up to date. The directory is the user's alone (0700, narrowed if an
    /// older askpane left it open to others), as are the database's files (0600).
    pub fn open_in(dir: &Path) -> Result<Store, StoreError> {
        Store::open_in_dir(dir, true)
    }

    /// As [`Store::open_in`], in a directory the user named (`--state-dir`): made 0700 if
    /// missing, but an existing one keeps its mode (the database's files are 0600 all the same).
    pub fn open_in_given(dir: &Path) -> Result<Store, StoreError> {
        Store::open_in_dir(dir, false)
    }

    fn open_in_dir(dir: &Path, own: bool) -> Result<Store, StoreError> {
        let narrowed = files::make_dir(dir, own)
            .map_err(|source| StoreError::CreateDir { path: dir.to_owned(), source })?;
        Store::open_narrowing(&dir.join(FILE_NAME), narrowed)
    }

    /// Opens the database file at `path` (0600; narrowed to that if open to others). Several
    /// askpanes opening a new file at once can find it busy where SQLite's busy wait does not
    /// apply (switching a new file to WAL while another connection opens it): such an open is
    /// tried again, for up to [`OPEN_RETRY`].
    pub fn open_file(path: &Path) -> Result<Store, StoreError> {
        Store::open_narrowing(path, Vec::new())
    }

    /// Makes the database's files the user's alone, says once what it narrowed (beside what
    /// was narrowed already: the directory), and opens the database.
    fn open_narrowing(
        path: &Path,
        mut narrowed: Vec<files::Narrowed>,
    ) -> Result<Store, StoreError> {
        let (made, failed) = files::make_files(path);
        narrowed.extend(made);
        files::say(path.parent().unwrap_or(path), &narrowed, &failed);
        let deadline = std::time::Instant::now() + OPEN_RETRY;
        loop {
            match Store::open_file_once(path) {
                Err(error) if error.is_busy() && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Ok(store) => {
                    log::debug!("opened the store {}", path.display());
                    return Ok(store);
                }
                failed => return failed,
            }
        }
    }

    fn open_file_once(path: &Path) -> Result<Store, StoreError> {
        let open = |source| StoreError::Open { path: path.to_owned(), source };
        let connection = Connection::open(path).map_err(open)?;
        Store::prepare(connection, schema::LATEST).map_err(|error| match error {
            StoreError::Sql(source) => open(source),
            StoreError::Migrate { source, .. } => {
                StoreError::Migrate { path: path.to_owned(), source }
            }
            other => other,
        })
    }

    /// A database in memory, for tests.
    pub fn in_memory() -> Result<Store, StoreError> {
        Store::prepare(Connection::open_in_memory()?, schema::LATEST)
    }

    /// Sets the connection up and migrates it to `version`.
    pub fn prepare(mut connection: Connection, version: u32) -> Result<Store, StoreError> {
        // Several askpane processes share the file (each hook run is one): wait for a writer
        // rather than fail. WAL lets readers go on while one writes; NORMAL syncs at
        // checkpoints only, which in WAL mode still never corrupts the file on a crash (a power
        // cut may lose the last commits: drafts, which are a convenience).
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        // A file that is not a database fails here, at open, not at the first write.
        schema::migrate_to(&mut connection, version)
            .map_err(|source| StoreError::Migrate { path: PathBuf::new(), source })?;
        Ok(Store { connection })
    }

    /// The schema version of the file.
    pub fn version(&self) -> Result<u32, StoreError> {
        Ok(schema::version(&self.connection)?)
    }

    /// The connection, for the writer and for tests.
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.connection
    }

    /// Stores a request that is now open.
    pub fn opened(&mut self, record: &OpenRecord) -> Result<(), StoreError> {
        insert_open(&self.connection, record)?;
        Ok(())
    }

    /// Every request stored as open (by this process or another, perhaps one that crashed),
    /// oldest first.
    pub fn open_requests(&self) -> Result<Vec<OpenRecord>, StoreError> {
        let mut statement = self.connection.prepare(
            "SELECT key, envelope, input, source, detail, project, session, subagent, asked_at,
                    pid, host
             FROM open_requests ORDER BY asked_at, key",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(OpenRecord {
                key: row.get(0)?,
                envelope: row.get(1)?,
                input: row.get(2)?,
                provenance: Provenance { host: row.get(10)?, ..provenance_at(row, 3)? },
                asked_at: from_millis(row.get(8)?),
                pid: row.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Saves one question's form, typed into the questions with fingerprint `asked` ([`asked_fingerprint`])
    /// (what the writer thread does, batched).
    pub fn save_draft(
        &mut self,
        key: &str,
        asked: &str,
        question: usize,
        form: &Form,
        at: SystemTime,
    ) -> Result<(), StoreError> {
        upsert_draft(&self.connection, &DraftRow { key, asked, question, form, at })?;
        Ok(())
    }

    /// The forms saved for request `key`, whatever they were typed into (to look at them: only
    /// [`Store::drafts_to_restore`] gives them back to a request).
    pub fn drafts_for(&self, key: &str) -> Result<Vec<Form>, StoreError> {
        self.read_drafts(key, None)
    }

    /// The forms saved for request `key` typed into the very questions with fingerprint
    /// `asked`: a request that reuses an id with other questions or options gets none.
    pub fn drafts_to_restore(&self, key: &str, asked: &str) -> Result<Vec<Form>, StoreError> {
        self.read_drafts(key, Some(asked))
    }

    fn read_drafts(&self, key: &str, asked: Option<&str>) -> Result<Vec<Form>, StoreError> {
        Ok(read_drafts(&self.connection, key, asked)?)
    }

    /// Card `key` ([`card_key`]) is open, asked at `at`; a card already kept keeps its first
    /// time.
    pub fn card_opened(&mut self, key: &str, at: SystemTime) -> Result<(), StoreError> {
        insert_open_card(&self.connection, key, at)?;
        Ok(())
    }

    /// When card `key` was first asked, while it is kept as open.
    pub fn card_first_asked(&self, key: &str) -> Result<Option<SystemTime>, StoreError> {
        Ok(read_open_card(&self.connection, key)?)
    }

    /// Saves what was written on the plan `key` ([`plan_key`]) or filled in on the form `key`
    /// ([`form_key`]): a [`PlanDraft`] or a [`FormDraft`] (what the writer thread does, batched).
    pub fn save_card_draft(
        &mut self,
        key: &str,
        draft: &impl serde::Serialize,
        at: SystemTime,
    ) -> Result<(), StoreError> {
        upsert_card_draft(&self.connection, key, &card_draft_json(draft), at)?;
        Ok(())
    }

    /// What was written on the plan `key`, when something was kept (a row that does not read
    /// as a draft counts as none).
    pub fn plan_draft(&self, key: &str) -> Result<Option<PlanDraft>, StoreError> {
        Ok(read_card_draft(&self.connection, key)?.and_then(|json| read_draft_json(&json)))
    }

    /// What was filled in on the form `key` ([`form_key`]), as [`Store::plan_draft`].
    pub fn form_draft(&self, key: &str) -> Result<Option<FormDraft>, StoreError> {
        Ok(read_card_draft(&self.connection, key)?.and_then(|json| read_draft_json(&json)))
    }

    /// Records an ended request in history, and forgets it as open (with its drafts), in one
    /// transaction.
    pub fn record(&mut self, record: &HistoryRecord) -> Result<(), StoreError> {
        let transaction = self.connection.transaction()?;
        insert_history(&transaction, record)?;
        transaction.commit()?;
        Ok(())
    }

    /// Records the open request `key` as abandoned (the process holding it is gone): its
    /// history entry says so, and it is no longer open. Its drafts stay until it is asked again
    /// and settled (pruning history never takes drafts). False when no such request is open.
    pub fn abandon(&mut self, key: &str, at: SystemTime) -> Result<bool, StoreError> {
        let Some(open) = self.open_requests()?.into_iter().find(|open| open.key == key) else {
            return Ok(false);
        };
        let header = serde_json::from_str::<serde_json::Value>(&open.input)
            .ok()
            .and_then(|input| crate::protocol::validate(&input).ok())
            .map(|validated| validated.ask.title().to_owned())
            .unwrap_or_default();
        let record = HistoryRecord {
            answered_by: None,
            key: open.key.clone(),
            asked_at: Some(open.asked_at),
            ended_at: at,
            provenance: open.provenance,
            header,
            questions: open.input,
            ended: Ended::Abandoned,
            outcome: RecordedOutcome::Abandoned,
            answer: String::new(),
            reply: None,
            model_text: None,
            approval: None,
        };
        let transaction = self.connection.transaction()?;
        insert_history_keeping_drafts(&transaction, &record)?;
        transaction.commit()?;
        Ok(true)
    }

    /// Records as abandoned every open request whose askpane is gone (`alive` says whether a
    /// pid still runs): killed before an outcome, and not asked again since. Returns how many.
    pub fn abandon_orphans(
        &mut self,
        at: SystemTime,
        alive: impl Fn(u32) -> bool,
    ) -> Result<usize, StoreError> {
        let mut abandoned = 0;
        for open in self.open_requests()? {
            if !alive(open.pid) && self.abandon(&open.key, at)? {
                abandoned += 1;
            }
        }
        Ok(abandoned)
    }

    /// History entries, newest first.
    ///
    /// A search finds the entries whose questions, answer or model text hold the text, any
    /// ASCII letter's case ignored (`LIKE`). When the text has a trigram (three characters) and
    /// few entries hold them all ([`SPARSE_MATCHES`]) or every match is wanted (no limit), the
    /// trigram index (schema v8) names those entries and only they are read; a shorter text
    /// (`十分`, `db`) or, for a page, one many entries hold (where the page is found within the
    /// first rows read) reads the rows newest first.
    /// Both check each row with the same `LIKE`, so they find the same entries.
    pub fn history(&self, query: &HistoryQuery) -> Result<Vec<HistoryEntry>, StoreError> {
        // SQLite reads a LIKE pattern (and an FTS5 query) as a C string: a NUL ends it, so
        // `\0\0\0` matched every entry. What askpane keeps is JSON or typed text, where a NUL
        // is written out (`\u0000`) or cannot be typed: a search holding one finds nothing.
        if query.search.as_deref().is_some_and(|text| text.contains('\0')) {
            return Ok(Vec::new());
        }
        let indexed = match query.search.as_deref() {
            Some(text) => match self.candidates(text, query.limit.is_none())? {
                Candidates::Indexed(terms) => Some(terms),
                Candidates::Rows => None,
                Candidates::Nothing => return Ok(Vec::new()),
            },
            None => None,
        };
        // Where the page goes on from: the listed order's key of the entry named.
        let older_than = match query.before {
            Some(id) => match self.ended_at_of(id)? {
                Some(ended_at) => Some((ended_at, id)),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        // The fragments that differ are ours, never outside text; their parameters follow
        // the seven every query binds.
        let older = match older_than {
            Some(_) => "AND ended_at <= ?8 AND (ended_at < ?8 OR id < ?9)",
            None => "",
        };
        let candidates = match (&indexed, older_than) {
            (Some(_), Some(_)) => {
                "AND id IN (SELECT rowid FROM history_fts WHERE history_fts MATCH ?10)"
            }
            (Some(_), None) => {
                "AND id IN (SELECT rowid FROM history_fts WHERE history_fts MATCH ?8)"
            }
            (None, _) => "",
        };
        let mut statement = self.connection.prepare(&format!(
            "SELECT id, key, asked_at, ended_at, source, detail, project, session, subagent,
                    header, questions, ended, outcome, answer, reply, model_text,
                    kind, tool, rule, deny_message, origin, host, answered_by
             FROM history
             WHERE (?1 IS NULL OR ended_at >= ?1)
               AND (?2 IS NULL OR project = ?2)
               AND (?3 IS NULL OR questions LIKE ?3 ESCAPE '\\'
                    OR answer LIKE ?3 ESCAPE '\\'
                    OR model_text LIKE ?3 ESCAPE '\\')
               AND (?5 IS NULL OR source = ?5)
               AND (?6 IS NULL OR kind = ?6)
               AND (?7 IS NULL OR host = ?7)
               {older}
               {candidates}
             ORDER BY ended_at DESC, id DESC
             LIMIT ?4"
        ))?;
        let limit = query.limit.map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX));
        let since = query.since.map(to_millis);
        let kind = query.kind.map(HistoryKind::as_str);
        // LIKE ignores the case of ASCII letters, as lower() did, without copying each row's
        // text (benches/history.rs); the text's own `%`, `_` and `\` are matched literally.
        let search = query.search.as_deref().map(|text| {
            let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
            format!("%{escaped}%")
        });
        let mut bound: Vec<&dyn rusqlite::ToSql> =
            vec![&since, &query.project, &search, &limit, &query.source, &kind, &query.host];
        if let Some((ended_at, id)) = &older_than {
            bound.push(ended_at);
            bound.push(id);
        }
        if let Some(trigrams) = &indexed {
            bound.push(trigrams);
        }
        let rows = statement.query_map(bound.as_slice(), |row| {
            let asked_at = from_millis(row.get(2)?);
            let ended: String = row.get(11)?;
            // A kind this askpane does not know (a newer one wrote it) reads as a question:
            // its row has every question's column.
            let kind =
                HistoryKind::from_name(&row.get::<_, String>(16)?).unwrap_or(HistoryKind::Question);
            let outcome = RecordedOutcome::from_stored(row.get(12)?, kind);
            let approval = match (&outcome, row.get::<_, Option<String>>(17)?) {
                (RecordedOutcome::Approval(approval), Some(tool)) => Some(ApprovalFacts {
                    tool,
                    outcome: *approval,
                    rule: row.get(18)?,
                    deny_message: row.get(19)?,
                    origin: match row.get::<_, Option<String>>(20)?.as_deref() {
                        Some("hook") => ApprovalOrigin::Hook,
                        _ => ApprovalOrigin::Hosted,
                    },
                }),
                _ => None,
            };
            let record = HistoryRecord {
                key: row.get(1)?,
                asked_at: Some(asked_at),
                ended_at: from_millis(row.get(3)?),
                provenance: Provenance { host: row.get(21)?, ..provenance_at(row, 4)? },
                header: row.get(9)?,
                questions: row.get(10)?,
                // A name this askpane does not know (a newer one wrote it): abandoned is the
                // honest "we do not know how".
                ended: Ended::from_name(&ended).unwrap_or(Ended::Abandoned),
                outcome,
                answer: row.get(13)?,
                reply: row.get(14)?,
                model_text: row.get(15)?,
                approval,
                answered_by: row.get(22)?,
            };
            Ok(HistoryEntry { id: row.get(0)?, record, asked_at })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// When entry `id` ended (Unix milliseconds), or `None` when no such entry is kept.
    fn ended_at_of(&self, id: i64) -> Result<Option<i64>, StoreError> {
        Ok(self
            .connection
            .query_row("SELECT ended_at FROM history WHERE id = ?1", [id], |row| row.get(0))
            .optional()?)
    }

    /// How a search for `text` finds its entries. Three characters or more: its trigrams, when
    /// every match is wanted (`askpane history --search` without `--limit`: the rows that hold
    /// none are never read) or few entries hold them all. One or two: the index's trigrams that
    /// begin with it (schema v10 pads every text so each of its characters begins one), looked
    /// up in the index's list of terms, when few entries hold them; none at all means no entry
    /// holds the text. Otherwise the rows, newest first.
    fn candidates(&self, text: &str, every_match: bool) -> Result<Candidates, StoreError> {
        if let Some(trigrams) = trigram_query(text) {
            return Ok(if every_match || self.indexed_matches(&trigrams)? < SPARSE_MATCHES {
                Candidates::Indexed(trigrams)
            } else {
                Candidates::Rows
            });
        }
        let Some(folded) = short_folded(text) else {
            return Ok(Candidates::Rows);
        };
        // Every term that begins with `folded` sorts between it and `folded` followed by the
        // largest character up to a trigram's length (terms compare as UTF-8 bytes).
        let mut last = folded.clone();
        for _ in folded.chars().count()..3 {
            last.push(char::MAX);
        }
        let mut statement = self.connection.prepare_cached(
            "SELECT term, doc FROM history_fts_terms WHERE term >= ?1 AND term <= ?2",
        )?;
        let mut rows = statement.query(params![folded, last])?;
        let mut terms: Vec<String> = Vec::new();
        let mut holding: i64 = 0;
        while let Some(row) = rows.next()? {
            // Counting each term's entries reads its list: stop as soon as they are many,
            // where the newest rows hold a page of matches within the first few thousand.
            holding = holding.saturating_add(row.get::<_, i64>(1)?);
            if holding >= SPARSE_MATCHES as i64 || terms.len() == SHORT_TERMS {
                return Ok(Candidates::Rows);
            }
            terms.push(row.get(0)?);
        }
        if terms.is_empty() {
            return Ok(Candidates::Nothing);
        }
        let quoted: Vec<String> =
            terms.iter().map(|term| format!("\"{}\"", term.replace('"', "\"\""))).collect();
        Ok(Candidates::Indexed(quoted.join(" OR ")))
    }

    /// How many entries the trigram index says hold every trigram of `trigrams`
    /// ([`trigram_query`]), counted up to [`SPARSE_MATCHES`] (the index stops there).
    fn indexed_matches(&self, trigrams: &str) -> Result<usize, StoreError> {
        let counted: i64 = self.connection.query_row(
            "SELECT count(*) FROM
                 (SELECT 1 FROM history_fts WHERE history_fts MATCH ?1 LIMIT ?2)",
            params![trigrams, SPARSE_MATCHES as i64],
            |row| row.get(0),
        )?;
        Ok(usize::try_from(counted).unwrap_or(SPARSE_MATCHES))
    }

    /// The projects and the agents (provenance sources) history holds, each sorted: what the
    /// History page offers to filter by.
    pub fn history_facets(&self) -> Result<(Vec<String>, Vec<String>), StoreError> {
        let distinct = |column: &str| -> Result<Vec<String>, StoreError> {
            // `column` is one of the two names below, never outside text. Each is the first
            // column of an index: one step from each value to the next larger one reads a few
            // index pages per value, where `SELECT DISTINCT` read every entry of the index
            // (issue 30: 100 000 entries).
            let sql = format!(
                "WITH RECURSIVE seen (value) AS (
                     SELECT min({column}) FROM history
                     UNION ALL
                     SELECT (SELECT min({column}) FROM history WHERE {column} > seen.value)
                     FROM seen WHERE seen.value IS NOT NULL
                 )
                 SELECT value FROM seen WHERE value IS NOT NULL"
            );
            let mut statement = self.connection.prepare(&sql)?;
            let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
            Ok(rows.collect::<Result<_, _>>()?)
        };
        Ok((distinct("project")?, distinct("source")?))
    }

    /// Deletes history that ended before `before` (its rows of the search index go with it, by
    /// trigger). Returns how many entries went. Open requests, drafts, plan drafts and open
    /// cards are never pruned: they are what is waiting and what the person typed, and they go
    /// when their request ends.
    pub fn prune(&mut self, before: SystemTime) -> Result<usize, StoreError> {
        Ok(self
            .connection
            .execute("DELETE FROM history WHERE ended_at < ?1", [to_millis(before)])?)
    }

    /// Issue 30: deletes what was typed into requests that are no longer open and was not
    /// touched since `before`: a question's drafts (its request no longer among the open
    /// ones: abandoned, or asked by an askpane that never ended it) and a plan's comments or a
    /// form's fields (no card of it waiting). A draft of an open request stays however old it is; a recent one
    /// stays, as it may still be asked again (a crashed agent's question, restored with its
    /// drafts). Returns how many requests' drafts and cards' (plans' and forms') drafts went.
    pub fn prune_drafts(&mut self, before: SystemTime) -> Result<DraftsPruned, StoreError> {
        let before = to_millis(before);
        let transaction = self.connection.transaction()?;
        // Every draft row of a request counts only if all of them are old: the newest
        // decides (each question's form is saved apart).
        let stale_forms = "SELECT key FROM drafts GROUP BY key HAVING max(saved_at) < ?1
                           EXCEPT SELECT key FROM open_requests";
        let forms: i64 = transaction.query_row(
            &format!("SELECT count(*) FROM ({stale_forms})"),
            [before],
            |row| row.get(0),
        )?;
        transaction
            .execute(&format!("DELETE FROM drafts WHERE key IN ({stale_forms})"), [before])?;
        let old_cards: Vec<String> = {
            let mut statement =
                transaction.prepare("SELECT key FROM card_drafts WHERE saved_at < ?1")?;
            let keys = statement.query_map([before], |row| row.get(0))?;
            keys.collect::<Result<_, _>>()?
        };
        let mut cards = 0;
        for key in old_cards {
            if read_open_card(&transaction, &card_key_of_draft(&key))?.is_none() {
                forget_card_draft(&transaction, &key)?;
                cards += 1;
            }
        }
        transaction.commit()?;
        Ok(DraftsPruned { forms: usize::try_from(forms).unwrap_or(0), cards })
    }

    /// Deletes every history entry but the newest `newest` (as [`Store::prune`]). Returns how
    /// many went.
    pub fn prune_keeping(&mut self, newest: usize) -> Result<usize, StoreError> {
        let newest = i64::try_from(newest).unwrap_or(i64::MAX);
        Ok(self.connection.execute(
            "DELETE FROM history WHERE id NOT IN
                 (SELECT id FROM history ORDER BY ended_at DESC, id DESC LIMIT ?1)",
            [newest],
        )?)
    }

    /// Gives the pages pruning freed back to the file system (SQLite keeps a file's size when
    /// rows go, and reuses the space): merges the search index into one piece, then `VACUUM`
    /// (which rewrites the whole file: it needs as much free disk again, and holds every other
    /// askpane's writes meanwhile). Returns the database's size in bytes before and after.
    pub fn vacuum(&mut self) -> Result<(u64, u64), StoreError> {
        let before = self.database_bytes()?;
        self.connection.execute_batch(
            "INSERT INTO history_fts (history_fts) VALUES ('optimize');
             VACUUM;
             PRAGMA wal_checkpoint(TRUNCATE);",
        )?;
        Ok((before, self.database_bytes()?))
    }

    /// The database's size: its pages times their size.
    fn database_bytes(&self) -> Result<u64, StoreError> {
        let pages: i64 =
            self.connection.pragma_query_value(None, "page_count", |row| row.get(0))?;
        let size: i64 = self.connection.pragma_query_value(None, "page_size", |row| row.get(0))?;
        Ok(u64::try_from(pages.saturating_mul(size)).unwrap_or(0))
    }
}

/// What [`Store::prune_drafts`] removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DraftsPruned {
    /// Requests whose drafts (every question's) went.
    pub forms: usize,
    /// Plans whose comments and note, and ACP forms whose fields, went.
    pub cards: usize,
}

/// How long a draft of a request no longer open is kept untouched before the inbox removes it
/// as it starts (`ASKPANE_KEEP_DRAFTS_DAYS`).
pub const DEFAULT_DRAFT_DAYS: u64 = 30;

/// The key of the card a plan's draft `key` was typed on ([`plan_key`], [`card_key`]: the same
/// tool_use_id, under the same host). A plan without an id, and a form ([`form_key`]: ACP's
/// forms carry no tool call id), have no card key: none matches.
fn card_key_of_draft(key: &str) -> String {
    let (host, own) = match key.rsplit_once('/') {
        Some((host, own)) => (Some(host), own),
        None => (None, key),
    };
    let card = match own.strip_prefix("plan-") {
        Some(id) => format!("card-{id}"),
        None => own.to_owned(),
    };
    match host {
        Some(host) => format!("{host}/{card}"),
        None => card,
    }
}

/// How a search finds its entries ([`Store::candidates`]).
#[derive(Debug, PartialEq, Eq)]
enum Candidates {
    /// The index's query (FTS5) naming every entry that may hold the text; each is then read
    /// and checked with the `LIKE`.
    Indexed(String),
    /// Every row, newest first, each checked with the `LIKE`.
    Rows,
    /// The index says no entry holds the text.
    Nothing,
}

/// A search of one or two characters as the trigram index folds it (ASCII letters to lower
/// case), or `None` when it is longer, or holds a character with a case outside ASCII (`Ω`,
/// `é`): the index folds those by Unicode's rules and the `LIKE` does not, so such a search
/// reads the rows.
fn short_folded(text: &str) -> Option<String> {
    let count = text.chars().count();
    if !(1..3).contains(&count) {
        return None;
    }
    text.chars()
        .map(|character| {
            let caseless = character.to_lowercase().eq([character])
                && character.to_uppercase().eq([character]);
            if character.is_ascii() {
                Some(character.to_ascii_lowercase())
            } else if caseless {
                Some(character)
            } else {
                None
            }
        })
        .collect()
}

/// The trigram index's query for a search: every distinct trigram (three characters) of `text`
/// (up to [`SEARCH_TRIGRAMS`]; none with a NUL), each quoted (a `"` in it doubled), all
/// required. `None` when `text` has no such trigram (fewer than three characters): the index
/// holds nothing shorter. The index folds case
/// as the tokenizer does, so an entry that holds `text` (`LIKE`) holds every one of these.
fn trigram_query(text: &str) -> Option<String> {
    let characters: Vec<char> = text.chars().collect();
    let mut trigrams: Vec<String> = Vec::new();
    for window in characters.windows(3) {
        // FTS5 reads its query as a C string: a NUL would end it mid-quote. Leaving a trigram
        // out only widens what the index names (the `LIKE` decides).
        if window.contains(&'\0') {
            continue;
        }
        let trigram: String = window.iter().collect();
        if !trigrams.contains(&trigram) {
            trigrams.push(trigram);
        }
        if trigrams.len() == SEARCH_TRIGRAMS {
            break;
        }
    }
    if trigrams.is_empty() {
        return None;
    }
    let quoted: Vec<String> =
        trigrams.iter().map(|trigram| format!("\"{}\"", trigram.replace('"', "\"\""))).collect();
    Some(quoted.join(" AND "))
}

/// The provenance stored in five columns from `first` (source, detail, project, session,
/// subagent), as both tables keep it; the host (issue 27) is a column of its own, read apart.
fn provenance_at(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Provenance> {
    Ok(Provenance {
        source: row.get(first)?,
        detail: row.get(first + 1)?,
        project: row.get(first + 2)?,
        session: row.get(first + 3)?,
        subagent: row.get(first + 4)?,
        host: None,
    })
}

/// Issue 11: the History page `filter` asks for: at most [`PAGE_SIZE`] entries, newest first,
/// and what there is to filter by. A store that cannot be read gives a page that says why.
pub fn history_page(store: &Store, filter: HistoryFilter) -> HistoryPage {
    let search = filter.search.trim();
    let query = HistoryQuery {
        project: filter.project.clone(),
        source: filter.source.clone(),
        kind: filter.kind,
        search: (!search.is_empty()).then(|| search.to_owned()),
        limit: Some(PAGE_SIZE),
        before: filter.before,
        ..HistoryQuery::default()
    };
    let read = store.history(&query).and_then(|entries| Ok((entries, store.history_facets()?)));
    let (entries, (projects, sources)) = match read {
        Ok(read) => read,
        Err(error) => {
            return HistoryPage {
                filter,
                error: Some(error.to_string()),
                ..HistoryPage::default()
            };
        }
    };
    let agents = sources
        .into_iter()
        .map(|source| {
            let words = Provenance::new(source.clone(), None).agent();
            (source, words)
        })
        .collect();
    HistoryPage {
        filter,
        items: entries.iter().map(history_item).collect(),
        projects,
        agents,
        error: None,
    }
}

/// One history entry as the page shows it.
fn history_item(entry: &HistoryEntry) -> HistoryItem {
    let record = &entry.record;
    // The questions as asked: each `question` of the stored tool input (none if it was not one).
    let input: serde_json::Value = serde_json::from_str(&record.questions).unwrap_or_default();
    let questions = input
        .get("questions")
        .and_then(serde_json::Value::as_array)
        .map(|questions| {
            questions
                .iter()
                .filter_map(|question| question.get("question")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let ended_at = humantime::format_rfc3339_seconds(record.ended_at).to_string();
    HistoryItem {
        id: entry.id,
        kind: record.kind(),
        ended_at: ended_at.replacen('T', " ", 1).replacen('Z', " UTC", 1),
        project: record.provenance.project.clone(),
        agent: record.provenance.agent(),
        header: record.header.clone(),
        questions,
        // An approval's decision in full (`allowed_always`, not `allowed`).
        ended: match &record.approval {
            Some(approval) => approval.outcome.as_str().to_owned(),
            None => record.ended.name().to_owned(),
        },
        answer: record.answer.clone(),
        model_text: record.model_text.clone(),
        reply: record.reply.clone(),
    }
}

/// Fills a request's policy with the drafts saved for it, when the policy has no preset of its
/// own: a request asked again (same tool_use_id) after a crash comes back as the user left it.
/// Returns true when something was restored.
pub fn restore_drafts(policy: &mut crate::book::Policy, ask: &Ask, saved: Vec<Form>) -> bool {
    if saved.is_empty() || !policy.preset.is_empty() || policy.submit {
        return false;
    }
    policy.preset = fit_forms(ask, saved).into_iter().map(|form| form.draft).collect();
    policy.prefill = crate::protocol::Prefill::SavedDraft;
    true
}

fn insert_open(connection: &Connection, record: &OpenRecord) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO open_requests
             (key, envelope, input, source, detail, project, session, subagent, asked_at, pid,
              host)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (key) DO UPDATE SET pid = excluded.pid",
        params![
            record.key,
            record.envelope,
            record.input,
            record.provenance.source,
            record.provenance.detail,
            record.provenance.project,
            record.provenance.session,
            record.provenance.subagent,
            to_millis(record.asked_at),
            record.pid,
            record.provenance.host,
        ],
    )?;
    Ok(())
}

/// One question's form as it is saved: under which request, typed into which questions.
struct DraftRow<'a> {
    key: &'a str,
    /// The fingerprint of the questions it was typed into ([`asked_fingerprint`]).
    asked: &'a str,
    question: usize,
    form: &'a Form,
    at: SystemTime,
}

fn upsert_draft(connection: &Connection, row: &DraftRow<'_>) -> rusqlite::Result<()> {
    let DraftRow { key, asked, question, form, at } = *row;
    let draft = &form.draft;
    let chosen = serde_json::to_string(draft.chosen()).unwrap_or_else(|_| "[]".to_owned());
    connection.execute(
        "INSERT INTO drafts
             (key, question, chosen, other_selected, other_text, notes, cursor, touched, saved_at,
              asked)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (key, question) DO UPDATE SET
             chosen = excluded.chosen, other_selected = excluded.other_selected,
             other_text = excluded.other_text, notes = excluded.notes,
             cursor = excluded.cursor, touched = excluded.touched, saved_at = excluded.saved_at,
             asked = excluded.asked",
        params![
            key,
            i64::try_from(question).unwrap_or(i64::MAX),
            chosen,
            draft.is_chosen(crate::protocol::Pick::Other),
            draft.other_text(),
            draft.notes(),
            i64::try_from(form.cursor).unwrap_or(0),
            draft.is_touched(),
            to_millis(at),
            asked,
        ],
    )?;
    Ok(())
}

/// A plan's or a form's draft as the `card_drafts` table keeps it.
pub(super) fn card_draft_json(draft: &impl serde::Serialize) -> String {
    serde_json::to_string(draft).unwrap_or_default()
}

/// A kept draft read back; `None` when it does not read as one (a newer askpane's, a damaged
/// row): the card then starts empty rather than fail.
pub(super) fn read_draft_json<T: serde::de::DeserializeOwned>(json: &str) -> Option<T> {
    serde_json::from_str(json).ok()
}

/// Saves card `key`'s draft (a plan's or a form's, as JSON), replacing the one before.
fn upsert_card_draft(
    connection: &Connection,
    key: &str,
    json: &str,
    at: SystemTime,
) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO card_drafts (key, draft, saved_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET draft = excluded.draft, saved_at = excluded.saved_at",
        params![key, json, to_millis(at)],
    )?;
    Ok(())
}

/// Card `key` is open since `at`, unless it is kept already (then since its first ask).
fn insert_open_card(connection: &Connection, key: &str, at: SystemTime) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT OR IGNORE INTO open_cards (key, asked_at) VALUES (?1, ?2)",
        params![key, to_millis(at)],
    )?;
    Ok(())
}

/// When card `key` was first asked.
fn read_open_card(connection: &Connection, key: &str) -> rusqlite::Result<Option<SystemTime>> {
    let millis: Option<i64> = connection
        .query_row("SELECT asked_at FROM open_cards WHERE key = ?1", [key], |row| row.get(0))
        .optional()?;
    Ok(millis.map(from_millis))
}

/// Card `key` ended: a later ask of it is a new one.
fn forget_open_card(connection: &Connection, key: &str) -> rusqlite::Result<()> {
    connection.execute("DELETE FROM open_cards WHERE key = ?1", [key])?;
    Ok(())
}

/// Card `key`'s draft as JSON, when one is kept.
fn read_card_draft(connection: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    connection
        .query_row("SELECT draft FROM card_drafts WHERE key = ?1", [key], |row| row.get(0))
        .optional()
}

/// The plan or form `key` was decided: what was written on it is done with.
fn forget_card_draft(connection: &Connection, key: &str) -> rusqlite::Result<()> {
    connection.execute("DELETE FROM card_drafts WHERE key = ?1", [key])?;
    Ok(())
}

/// History gets the entry; the request is no longer open and its drafts are done with.
fn insert_history(connection: &Connection, record: &HistoryRecord) -> rusqlite::Result<()> {
    insert_history_keeping_drafts(connection, record)?;
    connection.execute("DELETE FROM drafts WHERE key = ?1", [&record.key])?;
    Ok(())
}

/// The forms saved for `key` (typed into `asked`, when given), one per question up to the
/// last saved (questions with nothing saved are empty forms). Fit them to the questions with
/// [`fit_forms`].
fn read_drafts(
    connection: &Connection,
    key: &str,
    asked: Option<&str>,
) -> rusqlite::Result<Vec<Form>> {
    let mut statement = connection.prepare(
        "SELECT question, chosen, other_selected, other_text, notes, cursor, touched
         FROM drafts WHERE key = ?1 AND (?2 IS NULL OR asked = ?2) ORDER BY question",
    )?;
    let rows = statement.query_map(params![key, asked], |row| {
        let question: i64 = row.get(0)?;
        let chosen: String = row.get(1)?;
        // A row this askpane did not write is read as nothing chosen, never an error.
        let chosen: Vec<usize> = serde_json::from_str(&chosen).unwrap_or_default();
        let draft = Draft::restored(chosen, row.get(2)?, row.get(3)?, row.get(4)?, row.get(6)?);
        Ok((question, draft, row.get::<_, i64>(5)?))
    })?;
    let mut forms = Vec::new();
    for row in rows {
        let (question, draft, cursor) = row?;
        // A request has a few questions; a stray index (another program's row) is skipped.
        let Ok(question) = usize::try_from(question) else { continue };
        if question >= MAX_SAVED_QUESTIONS {
            continue;
        }
        if forms.len() <= question {
            forms.resize_with(question + 1, Form::default);
        }
        if let Some(slot) = forms.get_mut(question) {
            *slot = Form { draft, cursor: usize::try_from(cursor).unwrap_or(0), acted: false };
        }
    }
    Ok(forms)
}

/// What the user picked and typed on a request that did not end answered (declined, closed,
/// timed out, abandoned, …), from its drafts, for history to keep: `Header: answer (note: …)`
/// per question touched, or `None` when nothing was. Only drafts typed into these very questions
/// count.
fn unsent_text(connection: &Connection, record: &HistoryRecord) -> Option<String> {
    if record.ended == Ended::Answered {
        return None;
    }
    let input: serde_json::Value = serde_json::from_str(&record.questions).ok()?;
    let ask = crate::protocol::validate(&input).ok()?.ask;
    let asked = records::fingerprint_of(input.get("questions"));
    let forms = read_drafts(connection, &record.key, Some(&asked)).ok()?;
    let pieces: Vec<String> = fit_forms(&ask, forms)
        .iter()
        .zip(ask.questions())
        // A secret is never written as a draft; this keeps it so.
        .filter(|(_, question)| !question.secret())
        .filter_map(|(form, question)| {
            let note = Some(form.draft.notes().trim())
                .filter(|note| !note.is_empty())
                .map(|note| format!("(note: {note})"));
            let piece = match (form.draft.answer(question), note) {
                (None, None) => return None,
                (Some(answer), None) => answer,
                (None, Some(note)) => note,
                (Some(answer), Some(note)) => format!("{answer} {note}"),
            };
            Some(format!("{}: {piece}", question.header()))
        })
        .collect();
    (!pieces.is_empty()).then(|| pieces.join(" · "))
}

/// `record` with what was picked and typed and not sent added to its answer ([`unsent_text`]).
fn with_unsent(connection: &Connection, record: &HistoryRecord) -> HistoryRecord {
    let mut record = record.clone();
    if let Some(unsent) = unsent_text(connection, &record) {
        record.answer = match record.answer.is_empty() {
            true => format!("not sent: {unsent}"),
            false => format!("{} · not sent: {unsent}", record.answer),
        };
    }
    record
}

fn insert_history_keeping_drafts(
    connection: &Connection,
    record: &HistoryRecord,
) -> rusqlite::Result<()> {
    let record = &match record.approval {
        // An approval has no drafts; nothing of it was left unsent.
        Some(_) => record.clone(),
        None => with_unsent(connection, record),
    };
    let stored_asked_at: Option<i64> = connection
        .query_row("SELECT asked_at FROM open_requests WHERE key = ?1", [&record.key], |row| {
            row.get(0)
        })
        .optional()?;
    let asked_at = record
        .asked_at
        .map(to_millis)
        .or(stored_asked_at)
        .unwrap_or_else(|| to_millis(record.ended_at));
    let provenance = &record.provenance;
    let approval = record.approval.as_ref();
    connection.execute(
        "INSERT INTO history
             (key, asked_at, ended_at, source, detail, project, session, subagent, header,
              questions, ended, outcome, answer, reply, model_text, kind, tool, rule,
              deny_message, origin, host, answered_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22)",
        params![
            record.key,
            asked_at,
            to_millis(record.ended_at),
            provenance.source,
            provenance.detail,
            provenance.project,
            provenance.session,
            provenance.subagent,
            record.header,
            record.questions,
            record.ended.name(),
            record.outcome.as_str(),
            record.answer,
            record.reply,
            record.model_text,
            record.kind().as_str(),
            approval.map(|approval| approval.tool.as_str()),
            approval.and_then(|approval| approval.rule.as_deref()),
            approval.and_then(|approval| approval.deny_message.as_deref()),
            approval.map(|approval| approval.origin.as_str()),
            provenance.host,
            record.answered_by,
        ],
    )?;
    connection.execute("DELETE FROM open_requests WHERE key = ?1", [&record.key])?;
    Ok(())
}
