//! The database's schema and its migrations: `PRAGMA user_version` says which steps ran; each
//! step is one function, run in one transaction, so a file is always at some whole version.

use rusqlite::{Connection, Transaction, TransactionBehavior};

/// One migration step: from version `index` to `index + 1`.
type Step = fn(&Transaction<'_>) -> rusqlite::Result<()>;

/// Every step, oldest first. Never edit a step that has shipped: add one.
pub(super) const STEPS: &[Step] = &[
    v1_tables,
    v2_history_indexes,
    v3_history_source_index,
    v4_drafts_know_what_was_asked,
    v5_history_keeps_approvals,
    v6_requests_know_their_host,
    v7_plan_drafts_and_open_cards,
    v8_history_search_index,
    v9_history_knows_who_answered,
    v10_history_search_finds_short_text,
    v11_card_drafts_keep_forms_too,
];

/// The version a fully migrated database has.
pub const LATEST: u32 = STEPS.len() as u32;

/// Why a database could not be brought to [`LATEST`].
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(
        "the database is at schema version {found}, made by a newer askpane (this one knows {LATEST})"
    )]
    Newer { found: u32 },
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

/// The schema version the file is at.
pub fn version(connection: &Connection) -> rusqlite::Result<u32> {
    connection.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Runs every step the file has not had, up to `target` (tests stop at older versions).
pub fn migrate_to(connection: &mut Connection, target: u32) -> Result<(), MigrateError> {
    let found = version(connection)?;
    if found > LATEST {
        return Err(MigrateError::Newer { found });
    }
    for (index, step) in STEPS.iter().enumerate().take(target as usize).skip(found as usize) {
        // IMMEDIATE takes the write lock first: two askpanes opening a new file at once (two
        // hooks) run each step once; the second sees the version the first left.
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if version(&transaction)? > index as u32 {
            continue;
        }
        step(&transaction)?;
        // `user_version` takes no bound parameter; the number is ours.
        transaction.pragma_update(None, "user_version", index as u32 + 1)?;
        transaction.commit()?;
    }
    Ok(())
}

/// Version 1: open requests, their drafts, and the history of outcomes. Times are Unix
/// milliseconds.
fn v1_tables(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "CREATE TABLE open_requests (
             key TEXT PRIMARY KEY,       -- the tool_use_id, else an id made for it
             envelope TEXT NOT NULL,     -- which envelope it came in
             input TEXT NOT NULL,        -- the AskUserQuestion tool input as received (JSON)
             source TEXT NOT NULL,
             detail TEXT,
             project TEXT,
             session TEXT,
             subagent TEXT,
             asked_at INTEGER NOT NULL,
             pid INTEGER NOT NULL        -- the askpane process that holds it
         );
         CREATE TABLE drafts (
             key TEXT NOT NULL,
             question INTEGER NOT NULL,
             chosen TEXT NOT NULL,       -- option indices, a JSON array
             other_selected INTEGER NOT NULL,
             other_text TEXT NOT NULL,
             notes TEXT NOT NULL,
             cursor INTEGER NOT NULL,
             touched INTEGER NOT NULL,
             saved_at INTEGER NOT NULL,
             PRIMARY KEY (key, question)
         );
         CREATE TABLE history (
             id INTEGER PRIMARY KEY,
             key TEXT NOT NULL,
             asked_at INTEGER NOT NULL,
             ended_at INTEGER NOT NULL,
             source TEXT NOT NULL,
             detail TEXT,
             project TEXT,
             session TEXT,
             subagent TEXT,
             header TEXT NOT NULL,
             questions TEXT NOT NULL,    -- the tool input as asked (JSON)
             ended TEXT NOT NULL,        -- answered, declined, clarify, withdrawn, timed_out, …
             outcome TEXT NOT NULL,      -- the outcome's own kind (replied, stopped, …)
             answer TEXT NOT NULL,       -- the answer in short
             reply TEXT,                 -- the exact reply line sent, if one was
             model_text TEXT             -- what the model read
         );",
    )
}

/// Version 2: `askpane history --since/--project` and pruning read by time and project.
fn v2_history_indexes(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "CREATE INDEX history_ended_at ON history (ended_at);
         CREATE INDEX history_project ON history (project, ended_at);",
    )
}

/// Version 3: the History page filters by agent and lists the agents there are (`DISTINCT
/// source` reads the index instead of every row).
fn v3_history_source_index(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch("CREATE INDEX history_source ON history (source, ended_at);")
}

/// Version 4 (issue 24): a draft knows which questions it was typed into (a fingerprint of them,
/// [`super::asked_fingerprint`]), so it is restored only into the very same questions and never
/// into a different request that reuses the id. Drafts saved before have none and are never
/// restored.
fn v4_drafts_know_what_was_asked(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch("ALTER TABLE drafts ADD COLUMN asked TEXT NOT NULL DEFAULT '';")
}

/// Version 5 (issue 26): history keeps tool approvals beside questions. `kind` says which
/// (`question`, `approval`, `plan`; every older row is a question); an approval's row keeps the
/// tool's name, the rule an "always" added (worded as its button was), the deny message, and
/// who asked (`hook` or `hosted`). The tool input goes where a question's input goes
/// (`questions`), so a search finds an approval by its command.
fn v5_history_keeps_approvals(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "ALTER TABLE history ADD COLUMN kind TEXT NOT NULL DEFAULT 'question';
         ALTER TABLE history ADD COLUMN tool TEXT;
         ALTER TABLE history ADD COLUMN rule TEXT;
         ALTER TABLE history ADD COLUMN deny_message TEXT;
         ALTER TABLE history ADD COLUMN origin TEXT;
         CREATE INDEX history_kind ON history (kind, ended_at);",
    )
}

/// Version 6 (issue 27): a request asked through `askpane remote HOST`'s link keeps the host,
/// as the link named it, in history and among open requests (`NULL`: this machine).
fn v6_requests_know_their_host(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "ALTER TABLE history ADD COLUMN host TEXT;
         ALTER TABLE open_requests ADD COLUMN host TEXT;",
    )
}

/// Version 7 (issue 26 leftovers): what the person wrote on a plan page (its comments with
/// their anchors, the note, the choice after approval: a `book::plan::PlanDraft` as JSON),
/// one row per plan, kept until the plan is decided so a crash or a restart loses none of it;
/// and when each card waiting was first asked, so one asked again after a crash is listed as
/// old as it is.
fn v7_plan_drafts_and_open_cards(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "CREATE TABLE plan_drafts (
             key TEXT PRIMARY KEY,       -- `plan-` and the tool_use_id, else one made for it
             draft TEXT NOT NULL,        -- the PlanDraft (JSON)
             saved_at INTEGER NOT NULL
         );
         CREATE TABLE open_cards (
             key TEXT PRIMARY KEY,       -- `card-` and the tool_use_id, else one made for it
             asked_at INTEGER NOT NULL   -- when it was first asked
         );",
    )
}

/// Version 8 (issue 30): a full-text index over what a history search reads (the questions as
/// asked, the answer, what the model read), so a search at 100 000 entries reads the entries
/// holding the text instead of every row. Its tokens are trigrams (three characters each): a
/// trigram index finds any substring of three characters or more in any script (`十分です`,
/// `ild --rel`), where a word tokenizer (`unicode61`) finds whole words only and no CJK inside a
/// run of text; a search is a substring search, and stays one. The index keeps no text of its
/// own (`content='history'`: the rows are the text), no positions and no sizes (`detail=none`,
/// `columnsize=0`): it only says which entries hold every trigram of what is searched, and the
/// search then checks those few entries with the `LIKE` it always used (see `Store::history`),
/// so what is found is exactly what was found before. Triggers keep it in step with every
/// insert, delete and update of `history`; the index of the rows already there is built here.
fn v8_history_search_index(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "CREATE VIRTUAL TABLE history_fts USING fts5(
             questions, answer, model_text,
             content = 'history', content_rowid = 'id',
             tokenize = 'trigram', detail = none, columnsize = 0
         );
         CREATE TRIGGER history_fts_insert AFTER INSERT ON history BEGIN
             INSERT INTO history_fts (rowid, questions, answer, model_text)
             VALUES (new.id, new.questions, new.answer, new.model_text);
         END;
         CREATE TRIGGER history_fts_delete AFTER DELETE ON history BEGIN
             INSERT INTO history_fts (history_fts, rowid, questions, answer, model_text)
             VALUES ('delete', old.id, old.questions, old.answer, old.model_text);
         END;
         CREATE TRIGGER history_fts_update AFTER UPDATE OF questions, answer, model_text
             ON history BEGIN
             INSERT INTO history_fts (history_fts, rowid, questions, answer, model_text)
             VALUES ('delete', old.id, old.questions, old.answer, old.model_text);
             INSERT INTO history_fts (rowid, questions, answer, model_text)
             VALUES (new.id, new.questions, new.answer, new.model_text);
         END;
         INSERT INTO history_fts (history_fts) VALUES ('rebuild');",
    )
}

/// Version 9 (issue 31): who answered each entry (`window`, `page`, `socket:<label>`); `NULL`
/// where nobody did (withdrawn, timed out) or the entry is older than this column.
fn v9_history_knows_who_answered(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch("ALTER TABLE history ADD COLUMN answered_by TEXT;")
}

/// Version 10 (issue 30): a search of one or two characters (`十分`, `db`) reads the index too.
/// Every text is indexed with two U+0001 after it, so each of its characters begins a trigram,
/// the last two included (`…十分` gives `十分\u{1}`), and a column of one or two characters
/// has one: the trigrams that begin with a short text name exactly the entries holding it
/// (case folded), and `history_fts_terms` (FTS5's own list of the index's terms) lists them
/// by a range of terms, reading no row. The index is built again over `history_search_text`
/// (the padded text; version 8's index read `history`, unpadded). A search holding U+0001
/// still finds what holds it: the `LIKE` decides, the index only narrows.
fn v10_history_search_finds_short_text(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "DROP TRIGGER history_fts_insert;
         DROP TRIGGER history_fts_delete;
         DROP TRIGGER history_fts_update;
         DROP TABLE history_fts;
         CREATE VIEW history_search_text (id, questions, answer, model_text) AS
             SELECT id, questions || char(1, 1), answer || char(1, 1), model_text || char(1, 1)
             FROM history;
         CREATE VIRTUAL TABLE history_fts USING fts5(
             questions, answer, model_text,
             content = 'history_search_text', content_rowid = 'id',
             tokenize = 'trigram', detail = none, columnsize = 0
         );
         CREATE VIRTUAL TABLE history_fts_terms USING fts5vocab(history_fts, 'row');
         CREATE TRIGGER history_fts_insert AFTER INSERT ON history BEGIN
             INSERT INTO history_fts (rowid, questions, answer, model_text)
             VALUES (new.id, new.questions || char(1, 1), new.answer || char(1, 1),
                     new.model_text || char(1, 1));
         END;
         CREATE TRIGGER history_fts_delete AFTER DELETE ON history BEGIN
             INSERT INTO history_fts (history_fts, rowid, questions, answer, model_text)
             VALUES ('delete', old.id, old.questions || char(1, 1), old.answer || char(1, 1),
                     old.model_text || char(1, 1));
         END;
         CREATE TRIGGER history_fts_update AFTER UPDATE OF questions, answer, model_text
             ON history BEGIN
             INSERT INTO history_fts (history_fts, rowid, questions, answer, model_text)
             VALUES ('delete', old.id, old.questions || char(1, 1), old.answer || char(1, 1),
                     old.model_text || char(1, 1));
             INSERT INTO history_fts (rowid, questions, answer, model_text)
             VALUES (new.id, new.questions || char(1, 1), new.answer || char(1, 1),
                     new.model_text || char(1, 1));
         END;
         INSERT INTO history_fts (history_fts) VALUES ('rebuild');",
    )
}

/// Version 11: what was filled in on an ACP agent's form is kept as a plan's review is (a crash,
/// a restart: nothing typed is lost), in the same table, renamed for both: a row's key says
/// whose it is (`plan-…` holds a `book::plan::PlanDraft`, `form-…` a `book::form::FormDraft`,
/// each as JSON).
fn v11_card_drafts_keep_forms_too(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch("ALTER TABLE plan_drafts RENAME TO card_drafts;")
}
