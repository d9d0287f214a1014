//! The embedded store's tables and indexes, created at open (`CREATE ... IF NOT EXISTS`, so
//! opening an existing store leaves its data alone), and the `unicode_lower` SQL function one
//! of the indexes is built on.
//!
//! Every row an ingest writes costs a b-tree insert per index of its table, so the tables it
//! writes carry only the indexes a read needs: `evidence` and `metadata` are keyed by their
//! primary keys (`WITHOUT ROWID`: the row lives in the key's b-tree, and a look-up by key reads
//! it there), and `edges` has no index on its ends' containers (the edges touching a container
//! are found through the ends' own indexes and `fields_container`). A store made before that is
//! rebuilt by version 3's migration step (`migrations.rs`).

use rusqlite::Connection;

use super::changes::{migrate_error, record};
use super::edges::query_edges;
use super::sql_err;
use crate::domain::{changes::edge_history, NewChange};
use crate::store::StoreResult;

/// The `evidence` table's definition after `CREATE TABLE [IF NOT EXISTS] evidence`, shared by
/// the schema and version 3's migration step, so a new and a migrated store hold the same text.
macro_rules! evidence_table {
    () => {
        r#" (
  edge_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  provider TEXT NOT NULL,
  evidence_type TEXT NOT NULL,
  authorship TEXT NOT NULL,
  source_relation TEXT,
  observed_at TEXT,
  first_observed_operation_id INTEGER,
  last_observed_operation_id INTEGER,
  details TEXT,
  retired_at TEXT,
  PRIMARY KEY (edge_id, key)
) WITHOUT ROWID"#
    };
}

/// The `metadata` table's definition, as `evidence_table!`.
macro_rules! metadata_table {
    () => {
        r#" (
  container_id INTEGER NOT NULL,
  field_id INTEGER NOT NULL DEFAULT 0,
  attribute TEXT NOT NULL,
  source TEXT NOT NULL,
  provider TEXT NOT NULL,
  value TEXT NOT NULL,
  asserted_at TEXT NOT NULL,
  observed_at TEXT NOT NULL,
  details TEXT,
  PRIMARY KEY (container_id, field_id, attribute, source)
) WITHOUT ROWID"#
    };
}

/// Version 3's step: `evidence` and `metadata` rebuilt without their rowids (each old table is
/// renamed out of the way first, so the new one is created under its own name with the schema's
/// text), and the container-end indexes of `edges` dropped. Runs inside the step's transaction.
pub(super) const VERSION_3: &str = concat!(
    "ALTER TABLE evidence RENAME TO evidence_v2;\n",
    "CREATE TABLE evidence",
    evidence_table!(),
    ";\n",
    "INSERT INTO evidence (edge_id, key, provider, evidence_type, authorship, source_relation, observed_at,
       first_observed_operation_id, last_observed_operation_id, details, retired_at)
     SELECT edge_id, key, provider, evidence_type, authorship, source_relation, observed_at,
       first_observed_operation_id, last_observed_operation_id, details, retired_at FROM evidence_v2;
     DROP TABLE evidence_v2;
     CREATE INDEX evidence_key ON evidence(key);
     ALTER TABLE metadata RENAME TO metadata_v2;
",
    "CREATE TABLE metadata",
    metadata_table!(),
    ";
",
    "INSERT INTO metadata (container_id, field_id, attribute, source, provider, value, asserted_at, observed_at, details)
     SELECT container_id, field_id, attribute, source, provider, value, asserted_at, observed_at, details
     FROM metadata_v2;
     DROP TABLE metadata_v2;
     DROP INDEX IF EXISTS edges_source_container;
     DROP INDEX IF EXISTS edges_target_container;"
);

/// Jobs and runs (`jobs.rs`): a job by its OpenLineage namespace and name, a run by its runId;
/// what each read and wrote (`run_io`, `job_io`) keyed by owner, direction and end, so an event's
/// datasets are merged by key. `job_io_end` answers "which jobs write this table".
macro_rules! job_tables {
    () => {
        r#"
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  processing_type TEXT,
  integration TEXT,
  job_type TEXT,
  description TEXT,
  owners TEXT NOT NULL DEFAULT '[]',
  source_code_location TEXT,
  sql TEXT,
  parent_id INTEGER,
  root_id INTEGER,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  latest_run_id INTEGER,
  latest_run_began TEXT,
  UNIQUE (namespace, name)
);
CREATE INDEX IF NOT EXISTS jobs_parent ON jobs(parent_id) WHERE parent_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL UNIQUE,
  job_id INTEGER NOT NULL,
  state TEXT NOT NULL,
  states TEXT NOT NULL DEFAULT '[]',
  started_at TEXT,
  ended_at TEXT,
  nominal_start TEXT,
  nominal_end TEXT,
  error_message TEXT,
  error_language TEXT,
  parent_run_id TEXT,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  began TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_job ON runs(job_id, began);
CREATE INDEX IF NOT EXISTS runs_parent ON runs(parent_run_id) WHERE parent_run_id IS NOT NULL;
-- The failures by when they ended: health as of an instant (`jobs_asof`) starts from them.
CREATE INDEX IF NOT EXISTS runs_failed_ended ON runs(ended_at) WHERE state IN ('FAIL', 'ABORT');
CREATE TABLE IF NOT EXISTS run_io (
  run_id INTEGER NOT NULL,
  direction TEXT NOT NULL,
  end_key TEXT NOT NULL,
  container_id INTEGER,
  fqn TEXT,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (run_id, direction, end_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_io (
  job_id INTEGER NOT NULL,
  direction TEXT NOT NULL,
  end_key TEXT NOT NULL,
  container_id INTEGER,
  fqn TEXT,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  at TEXT NOT NULL,
  completed_run_id INTEGER,
  completed_at TEXT,
  PRIMARY KEY (job_id, direction, end_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_io_end ON job_io(end_key, direction);
"#
    };
}

/// Version 4's step: the job tables, and the note that the stored events' jobs and runs are yet
/// to be recorded (`service::jobs::backfill` does it at the next `serve`, through the same code
/// as ingest, and removes the note). A new store has no events, so it gets no note.
pub(super) const VERSION_4: &str = concat!(
    job_tables!(),
    r#"INSERT OR REPLACE INTO docs (kind, key, value) VALUES ('meta', 'jobs_backfill', '{"pending":true}');"#
);

pub(super) const SCHEMA: &str = concat!(
    r#"
CREATE TABLE IF NOT EXISTS datastores (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  store_type TEXT,
  namespaces TEXT NOT NULL DEFAULT '[]',
  enrichment_only INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS containers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  datastore_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  name TEXT NOT NULL,
  database TEXT,
  schema TEXT,
  container_type TEXT NOT NULL,
  table_type TEXT,
  display_name TEXT,
  purpose TEXT,
  active_anomaly_count INTEGER NOT NULL DEFAULT 0,
  deleted INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS containers_key ON containers(datastore_id, key) WHERE deleted = 0;
CREATE INDEX IF NOT EXISTS containers_datastore ON containers(datastore_id);
CREATE INDEX IF NOT EXISTS containers_name_lc ON containers(unicode_lower(name)) WHERE deleted = 0;
CREATE TABLE IF NOT EXISTS fields (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  container_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  display_name TEXT,
  data_type TEXT,
  status TEXT NOT NULL DEFAULT 'active',
  latest_profile_id INTEGER,
  is_computed_field INTEGER NOT NULL DEFAULT 0,
  active_anomaly_count INTEGER NOT NULL DEFAULT 0,
  deleted INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS fields_key ON fields(container_id, name) WHERE deleted = 0;
CREATE INDEX IF NOT EXISTS fields_container ON fields(container_id);
CREATE TABLE IF NOT EXISTS edges (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created TEXT NOT NULL,
  source_kind TEXT NOT NULL,
  source_id INTEGER,
  source_container_id INTEGER,
  source_fqn TEXT,
  target_kind TEXT NOT NULL,
  target_id INTEGER,
  target_container_id INTEGER,
  target_fqn TEXT,
  ukey TEXT NOT NULL UNIQUE,
  description TEXT,
  source_type TEXT NOT NULL,
  operation TEXT,
  derived INTEGER,
  transformations TEXT,
  last_asserted_at TEXT,
  retired_at TEXT,
  intervals TEXT NOT NULL DEFAULT '[]'
);
DROP INDEX IF EXISTS edges_source;
DROP INDEX IF EXISTS edges_target;
DROP INDEX IF EXISTS edges_source_end;
DROP INDEX IF EXISTS edges_target_end;
CREATE INDEX IF NOT EXISTS edges_source_ends ON edges(source_kind, source_id, retired_at, target_kind, target_id);
CREATE INDEX IF NOT EXISTS edges_target_ends ON edges(target_kind, target_id, retired_at, source_kind, source_id);
CREATE INDEX IF NOT EXISTS edges_source_type ON edges(source_type);
CREATE TABLE IF NOT EXISTS evidence"#,
    evidence_table!(),
    r#";
CREATE INDEX IF NOT EXISTS evidence_key ON evidence(key);
CREATE TABLE IF NOT EXISTS operations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  fingerprint TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  job_namespace TEXT,
  job_name TEXT,
  run_id TEXT,
  event_type TEXT,
  event_time TEXT,
  received_at TEXT NOT NULL,
  submitted_by TEXT,
  status TEXT NOT NULL,
  errors TEXT NOT NULL DEFAULT '[]',
  summary TEXT NOT NULL DEFAULT '{}',
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_job ON events(job_namespace, job_name);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id);
CREATE INDEX IF NOT EXISTS events_received ON events(received_at);
CREATE TABLE IF NOT EXISTS metadata"#,
    metadata_table!(),
    r#";
CREATE TABLE IF NOT EXISTS docs (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (kind, key)
);
"#,
    job_tables!()
);

const CHANGE_LOG: &str = r#"
CREATE TABLE IF NOT EXISTS changes (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  kind TEXT NOT NULL,
  edge_id INTEGER,
  field_id INTEGER,
  container_a INTEGER,
  container_b INTEGER,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS changes_container_a ON changes(container_a, position);
CREATE INDEX IF NOT EXISTS changes_container_b ON changes(container_b, position);
CREATE INDEX IF NOT EXISTS changes_at ON changes(at);
"#;

/// Creates the change log when the store has none (a store made before it, or a new one) and,
/// in the same transaction, backfills it from the edges' history. Idempotent: a store whose log
/// exists (even emptied by retention) is left alone, so nothing is recorded twice.
pub(super) fn migrate_change_log(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn.transaction().map_err(migrate_error)?;
    let exists: bool = tx
        .query_row("SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'changes'", [], |r| r.get(0))
        .map_err(migrate_error)?;
    if exists {
        return Ok(());
    }
    tx.execute_batch(CHANGE_LOG).map_err(migrate_error)?;
    let backfilled = backfill(&tx)?;
    tx.commit().map_err(migrate_error)?;
    if backfilled > 0 {
        tracing::info!(changes = backfilled, store = "embedded", "change log created and backfilled from edge history");
    }
    Ok(())
}

/// `unicode_lower(text)`: Rust's Unicode lowercasing, so name searches fold "Ü" as Neo4j's
/// `toLower` and the service do (SQLite's `lower` folds ASCII only). Deterministic, so the
/// `containers_name_lc` index can use it; every connection registers it before touching the
/// schema, and a connection without it (the sqlite3 shell) can read but not write containers.
pub fn register_unicode_lower(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    use rusqlite::types::ValueRef;
    conn.create_scalar_function(
        "unicode_lower",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(t) => Some(String::from_utf8_lossy(t).to_lowercase()),
                _ => None,
            })
        },
    )
}

/// Records what the edges' own history tells (see `edge_history`), oldest first; returns how
/// many changes. Containers and fields keep no creation time, so nothing is made up for them.
fn backfill(tx: &Connection) -> StoreResult<usize> {
    let edges = query_edges(tx, "backfill_changes_edges", "1", []).map_err(sql_err)?;
    let mut changes: Vec<NewChange> = edges.iter().flat_map(edge_history).collect();
    // Stable: an edge's own changes keep their order at equal times.
    changes.sort_by_key(|c| (c.at, c.edge_id));
    record(tx, &changes)?;
    Ok(changes.len())
}
