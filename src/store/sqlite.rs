//! The embedded store: SQLite (bundled, through `rusqlite`) in `--data-dir`.
//!
//! Why SQLite: a proven embedded database with transactions and crash safety, no setup. WAL
//! mode with `synchronous=NORMAL` keeps every committed transaction across a `kill -9` of the
//! process (only an OS crash may lose the last ones). One writer connection behind a mutex
//! (SQLite has one writer anyway) and a few reader connections so reads never wait on writes.
//! Writes run on tokio's blocking pool; reads and a session's calls right on the calling
//! task's thread. Batched reads pass ids as one `rarray` parameter, so a read of any number
//! of ids is one statement.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::{GraphAround, GraphScope, PriorEvidence, Record, Store, StoreError, StoreResult};
use crate::domain::{
    container_key, Assertion, AssertionBatch, AssertionSummary, Container, ContainerInput, ContainerStats, Datastore,
    DatastoreInput, Direction, Edge, EdgeFilter, EdgePatch, End, EventFilter, EventOutcome, Evidence, Field, Id,
    Interval, NewEdge, Page, PageRequest, StoredEvent, Timestamp,
};
use crate::metrics::store_query;

const STORE: &str = "embedded";
const READERS: usize = 4;

const SCHEMA: &str = r#"
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
CREATE INDEX IF NOT EXISTS edges_source_container ON edges(source_container_id);
CREATE INDEX IF NOT EXISTS edges_target_container ON edges(target_container_id);
CREATE INDEX IF NOT EXISTS edges_source_type ON edges(source_type);
CREATE TABLE IF NOT EXISTS evidence (
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
);
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
CREATE TABLE IF NOT EXISTS metadata (
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
);
CREATE TABLE IF NOT EXISTS docs (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (kind, key)
);
"#;

pub struct SqliteStore {
    writer: Arc<Mutex<Connection>>,
    readers: Arc<Vec<Mutex<Connection>>>,
    next_reader: AtomicUsize,
    /// Taken by every write and by a session for its whole life: a session's open transaction
    /// on the writer must not see other writes slip in between its calls.
    gate: Arc<tokio::sync::Mutex<()>>,
    /// Stops its thread when the last handle on this store goes.
    _checkpointer: Arc<Checkpointer>,
    /// Set on the view `Store::session` returns: every call runs in the session's open transaction
    /// on the writer.
    session: Option<Session>,
}

/// Copies the WAL back into the database every second on a connection of its own. A passive
/// checkpoint waits for no one (readers and the writer go on), so the WAL stays small without a
/// commit ever paying for it.
struct Checkpointer {
    _stop: std::sync::mpsc::Sender<()>,
}

impl Checkpointer {
    fn start(conn: Connection) -> Checkpointer {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new().name("sqlite-checkpoint".into()).spawn(move || {
            // Ends when the store is dropped (the sender goes).
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(std::time::Duration::from_secs(1))
            {
                let r = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
                });
                match r {
                    Ok((_, wal_pages, copied)) if copied > 0 => {
                        tracing::debug!(store = STORE, wal_pages, copied, "checkpointed the WAL")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, store = STORE, "checkpointing the WAL failed"),
                }
            }
        });
        if let Err(e) = spawned {
            // The writer's own checkpoints still keep the WAL bounded.
            tracing::warn!(error = %e, store = STORE, "could not start the checkpoint thread");
        }
        Checkpointer { _stop: stop }
    }
}

/// One write transaction held open across many calls (an OpenLineage request's events): reads
/// see the session's own writes, and the pages touched stay in the writer's cache until one
/// commit writes them to the WAL once. The session holds the writer gate for its life, so no
/// other write interleaves; its calls run on the calling thread, like reads (see `read`).
/// Dropping it uncommitted rolls everything back.
struct Session {
    writer: Arc<Mutex<Connection>>,
    /// Held until the commit (or the rollback when dropped); `None` once committed.
    gate: Mutex<Option<tokio::sync::OwnedMutexGuard<()>>>,
    /// Set when an unguarded call (see `SqliteStore::write_unguarded`) failed part-way: its
    /// writes cannot be undone alone, so nothing more runs and nothing commits.
    poisoned: std::sync::atomic::AtomicBool,
}

fn session_ended() -> StoreError {
    StoreError::Unavailable("the store's transaction for this request already ended; retry".into())
}

impl Session {
    async fn start(writer: Arc<Mutex<Connection>>, gate: Arc<tokio::sync::Mutex<()>>) -> StoreResult<Session> {
        let gate = gate.lock_owned().await;
        let session = Session { writer, gate: Mutex::new(Some(gate)), poisoned: Default::default() };
        session.run(|c| {
            store_query(STORE, "begin");
            c.execute_batch("BEGIN IMMEDIATE").map_err(internal)
        })?;
        Ok(session)
    }

    fn committed(&self) -> bool {
        self.gate.lock().unwrap_or_else(|p| p.into_inner()).is_none()
    }

    /// Runs `f` in the session's transaction.
    fn run<T>(&self, f: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        if self.committed() || self.poisoned.load(Ordering::Relaxed) {
            return Err(session_ended());
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    fn commit(&self) -> StoreResult<()> {
        self.run(|c| {
            store_query(STORE, "commit");
            c.execute_batch("COMMIT").map_err(internal)
        })?;
        // Committed: other writers may go on while this view lingers.
        self.gate.lock().unwrap_or_else(|p| p.into_inner()).take();
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.committed() {
            return;
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if !conn.is_autocommit() {
            if let Err(e) = conn.execute_batch("ROLLBACK") {
                tracing::error!(error = %e, store = STORE, "rolling back a store session failed");
            }
        }
    }
}

fn internal(e: impl std::fmt::Display) -> StoreError {
    tracing::error!(error = %e, store = STORE, "embedded store failed");
    StoreError::Internal(e.to_string())
}

fn open_connection(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path)
        .map_err(|e| StoreError::Unavailable(format!("cannot open the embedded store at {}: {e}", path.display())))?;
    conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(internal)?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(internal)?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(internal)?;
    conn.pragma_update(None, "foreign_keys", "OFF").map_err(internal)?;
    // Reads through a memory map instead of a pread and a copy per page: every commit empties
    // the other connections' page caches, so readers fetch the same index pages again and again.
    conn.pragma_update(None, "mmap_size", 1i64 << 30).map_err(internal)?;
    // Temporary b-trees (sorts, `IN` lists, subqueries) and a session's savepoint journal stay
    // in memory instead of going through a temporary file.
    conn.pragma_update(None, "temp_store", "MEMORY").map_err(internal)?;
    // Ingest and traversal use a few dozen distinct statements; keep them all prepared.
    conn.set_prepared_statement_cache_capacity(128);
    rusqlite::vtab::array::load_module(&conn).map_err(internal)?;
    register_unicode_lower(&conn).map_err(internal)?;
    Ok(conn)
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

fn ts(t: &Timestamp) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn parse_ts(s: Option<String>) -> rusqlite::Result<Option<Timestamp>> {
    s.map(|s| {
        DateTime::parse_from_rfc3339(&s)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
    })
    .transpose()
}

fn json_col(s: Option<String>) -> rusqlite::Result<Option<serde_json::Value>> {
    s.map(|s| {
        serde_json::from_str(&s)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
    })
    .transpose()
}

fn id_array(ids: &[Id]) -> Rc<Vec<SqlValue>> {
    Rc::new(ids.iter().map(|i| SqlValue::Integer(*i)).collect())
}

fn str_array(items: &[String]) -> Rc<Vec<SqlValue>> {
    Rc::new(items.iter().map(|s| SqlValue::Text(s.clone())).collect())
}

const DATASTORE_COLS: &str = "id, name, type, store_type, namespaces, enrichment_only";
fn datastore_row(r: &Row) -> rusqlite::Result<Datastore> {
    let ns: String = r.get(4)?;
    Ok(Datastore {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        store_type: r.get(3)?,
        namespaces: serde_json::from_str(&ns).unwrap_or_default(),
        enrichment_only: r.get(5)?,
    })
}

const CONTAINER_COLS: &str =
    "id, datastore_id, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count";
fn container_row(r: &Row) -> rusqlite::Result<Container> {
    Ok(Container {
        id: r.get(0)?,
        datastore_id: r.get(1)?,
        name: r.get(2)?,
        database: r.get(3)?,
        schema: r.get(4)?,
        container_type: r.get(5)?,
        table_type: r.get(6)?,
        display_name: r.get(7)?,
        purpose: r.get(8)?,
        active_anomaly_count: r.get(9)?,
    })
}

const FIELD_COLS: &str = "id, container_id, name, display_name, data_type, status, latest_profile_id, is_computed_field, active_anomaly_count";
fn field_row(r: &Row) -> rusqlite::Result<Field> {
    Ok(Field {
        id: r.get(0)?,
        container_id: r.get(1)?,
        name: r.get(2)?,
        display_name: r.get(3)?,
        data_type: r.get(4)?,
        status: r.get(5)?,
        latest_profile_id: r.get(6)?,
        is_computed_field: r.get(7)?,
        active_anomaly_count: r.get(8)?,
    })
}

const EDGE_COLS: &str = "id, created, source_kind, source_id, source_container_id, source_fqn, target_kind, target_id, target_container_id, target_fqn, description, source_type, operation, derived, transformations, last_asserted_at, retired_at, intervals";

fn end_from(kind: &str, id: Option<Id>, container: Option<Id>, fqn: Option<String>) -> End {
    match kind {
        "c" => End::Container { id: id.unwrap_or_default() },
        "f" => End::Field { id: id.unwrap_or_default(), container_id: container.unwrap_or_default() },
        _ => End::External { fqn: fqn.unwrap_or_default() },
    }
}

/// (kind, id, container id, fqn) columns of an end.
fn end_cols(end: &End) -> (&'static str, Option<Id>, Option<Id>, Option<String>) {
    match end {
        End::Container { id } => ("c", Some(*id), Some(*id), None),
        End::Field { id, container_id } => ("f", Some(*id), Some(*container_id), None),
        End::External { fqn } => ("x", None, None, Some(fqn.clone())),
    }
}

fn edge_row(r: &Row) -> rusqlite::Result<Edge> {
    let source_kind: String = r.get(2)?;
    let target_kind: String = r.get(6)?;
    let intervals: String = r.get(17)?;
    Ok(Edge {
        id: r.get(0)?,
        created: parse_ts(r.get(1)?)?.unwrap_or_default(),
        source: end_from(&source_kind, r.get(3)?, r.get(4)?, r.get(5)?),
        target: end_from(&target_kind, r.get(7)?, r.get(8)?, r.get(9)?),
        description: r.get(10)?,
        source_type: r.get(11)?,
        operation: r.get(12)?,
        derived: r.get(13)?,
        transformations: json_col(r.get(14)?)?,
        last_asserted_at: parse_ts(r.get(15)?)?,
        retired_at: parse_ts(r.get(16)?)?,
        intervals: serde_json::from_str(&intervals).unwrap_or_default(),
    })
}

const EVENT_COLS: &str = "id, fingerprint, kind, job_namespace, job_name, run_id, event_type, event_time, received_at, submitted_by, status, errors, summary, body";
fn event_row(r: &Row) -> rusqlite::Result<StoredEvent> {
    Ok(StoredEvent {
        id: r.get(0)?,
        fingerprint: r.get(1)?,
        kind: r.get(2)?,
        job_namespace: r.get(3)?,
        job_name: r.get(4)?,
        run_id: r.get(5)?,
        event_type: r.get(6)?,
        event_time: parse_ts(r.get(7)?)?,
        received_at: parse_ts(r.get(8)?)?.unwrap_or_default(),
        submitted_by: r.get(9)?,
        status: r.get(10)?,
        errors: json_col(r.get(11)?)?.unwrap_or(serde_json::Value::Null),
        summary: json_col(r.get(12)?)?.unwrap_or(serde_json::Value::Null),
        body: json_col(r.get(13)?)?.unwrap_or(serde_json::Value::Null),
    })
}

fn insert_event_row(tx: &Connection, e: &StoredEvent, keep_id: bool) -> rusqlite::Result<Id> {
    store_query(STORE, "insert_event");
    tx.prepare_cached(&format!(
        "INSERT INTO events ({EVENT_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    ))?
    .execute(params![
        if keep_id { Some(e.id) } else { None },
        e.fingerprint,
        e.kind,
        e.job_namespace,
        e.job_name,
        e.run_id,
        e.event_type,
        e.event_time.as_ref().map(ts),
        ts(&e.received_at),
        e.submitted_by,
        e.status,
        e.errors.to_string(),
        e.summary.to_string(),
        e.body.to_string()
    ])?;
    Ok(tx.last_insert_rowid())
}

const METADATA_COLS: &str =
    "container_id, field_id, attribute, source, provider, value, asserted_at, observed_at, details";
fn metadata_row(r: &Row) -> rusqlite::Result<crate::domain::MetadataAssertion> {
    let field: Id = r.get(1)?;
    Ok(crate::domain::MetadataAssertion {
        container_id: r.get(0)?,
        field_id: (field != 0).then_some(field),
        attribute: r.get(2)?,
        source: r.get(3)?,
        provider: r.get(4)?,
        value: json_col(r.get(5)?)?.unwrap_or(serde_json::Value::Null),
        asserted_at: parse_ts(r.get(6)?)?.unwrap_or_default(),
        observed_at: parse_ts(r.get(7)?)?.unwrap_or_default(),
        details: json_col(r.get(8)?)?,
    })
}

fn put_metadata_tx(tx: &Connection, rows: &[crate::domain::MetadataAssertion]) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO metadata ({METADATA_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT(container_id, field_id, attribute, source) DO UPDATE SET
           asserted_at = CASE WHEN metadata.value = excluded.value THEN metadata.asserted_at ELSE excluded.asserted_at END,
           value = excluded.value, provider = excluded.provider, observed_at = excluded.observed_at, details = excluded.details"
    ))?;
    for m in rows {
        store_query(STORE, "put_metadata");
        stmt.execute(params![
            m.container_id,
            m.field_id.unwrap_or(0),
            m.attribute,
            m.source,
            m.provider,
            m.value.to_string(),
            ts(&m.asserted_at),
            ts(&m.observed_at),
            m.details.as_ref().map(|d| d.to_string())
        ])?;
    }
    Ok(())
}

/// Binds an evidence row as `?1`..`?11` in `EVIDENCE_COLS` order and runs `sql`, which every
/// evidence write below shares (an insert, an in-place update, an insert-or-replace).
fn write_evidence(tx: &Connection, op: &'static str, sql: &str, e: &Evidence) -> rusqlite::Result<()> {
    store_query(STORE, op);
    tx.prepare_cached(sql)?.execute(params![
        e.edge_id,
        e.key,
        e.provider,
        e.evidence_type,
        e.authorship,
        e.source_relation,
        e.observed_at.as_ref().map(ts),
        e.first_observed_operation_id,
        e.last_observed_operation_id,
        e.details.as_ref().map(|d| d.to_string()),
        e.retired_at.as_ref().map(ts)
    ])?;
    Ok(())
}

fn put_evidence_tx(tx: &Connection, evidence: &[Evidence]) -> rusqlite::Result<()> {
    let sql = format!(
        "INSERT OR REPLACE INTO evidence ({EVIDENCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    );
    evidence.iter().try_for_each(|e| write_evidence(tx, "put_evidence", &sql, e))
}

/// Inserts evidence the caller knows to be absent (no conflict to resolve, no row to delete).
fn insert_evidence_tx(tx: &Connection, e: &Evidence) -> rusqlite::Result<()> {
    let sql = format!("INSERT INTO evidence ({EVIDENCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    write_evidence(tx, "insert_evidence", &sql, e)
}

/// Rewrites evidence the caller knows to be there in place: its key columns stay, so unlike
/// `INSERT OR REPLACE` (a delete and an insert) no index entry moves.
fn update_evidence_tx(tx: &Connection, e: &Evidence) -> rusqlite::Result<()> {
    let sql = "UPDATE evidence SET provider = ?3, evidence_type = ?4, authorship = ?5, source_relation = ?6,
           observed_at = ?7, first_observed_operation_id = ?8, last_observed_operation_id = ?9, details = ?10,
           retired_at = ?11
         WHERE edge_id = ?1 AND key = ?2";
    write_evidence(tx, "update_evidence", sql, e)
}

/// `items` once each, sorted, as an `rarray` parameter (see `distinct_ids`).
fn distinct_strs(items: &[String]) -> Rc<Vec<SqlValue>> {
    let mut items = items.to_vec();
    items.sort_unstable();
    items.dedup();
    str_array(&items)
}

/// The edges with these unique keys, by key.
fn edges_by_ukeys_tx(tx: &Connection, ukeys: &[String]) -> rusqlite::Result<HashMap<String, Edge>> {
    if ukeys.is_empty() {
        return Ok(HashMap::new());
    }
    store_query(STORE, "edges_by_ukeys");
    let ukey_col = EDGE_COLS.split(',').count();
    let mut stmt = tx.prepare_cached(&format!(
        "SELECT {EDGE_COLS}, ukey FROM rarray(?1) AS k CROSS JOIN edges ON edges.ukey = k.value"
    ))?;
    let rows = stmt.query_map(params![distinct_strs(ukeys)], |r| Ok((r.get::<_, String>(ukey_col)?, edge_row(r)?)))?;
    rows.collect()
}

/// What an assertion's evidence meets: absent, live, or retired, and its observing operations.
struct EvidenceState {
    retired: bool,
    first: Option<Id>,
    last: Option<Id>,
}

/// The evidence rows of `edges` under the keys `assertions` carry, by (edge, key).
fn evidence_states_tx(
    tx: &Connection,
    edges: &HashMap<String, Edge>,
    assertions: &[Assertion],
) -> rusqlite::Result<HashMap<(Id, String), EvidenceState>> {
    if edges.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<Id> = edges.values().map(|e| e.id).collect();
    let keys: Vec<String> = assertions.iter().map(|a| a.evidence.key.clone()).collect();
    store_query(STORE, "evidence_states");
    let mut stmt = tx.prepare_cached(
        "SELECT edge_id, key, retired_at IS NOT NULL, first_observed_operation_id, last_observed_operation_id
         FROM rarray(?1) AS i CROSS JOIN rarray(?2) AS k CROSS JOIN evidence
         ON evidence.edge_id = i.value AND evidence.key = k.value",
    )?;
    let rows = stmt.query_map(params![id_array(&ids), distinct_strs(&keys)], |r| {
        Ok(((r.get(0)?, r.get(1)?), EvidenceState { retired: r.get(2)?, first: r.get(3)?, last: r.get(4)? }))
    })?;
    rows.collect()
}

pub fn edge_ukey(source: &End, target: &End, source_type: &str) -> String {
    format!("{}|{}|{}", source.key(), target.key(), source_type)
}

const EVIDENCE_COLS: &str = "edge_id, key, provider, evidence_type, authorship, source_relation, observed_at, first_observed_operation_id, last_observed_operation_id, details, retired_at";
fn evidence_row(r: &Row) -> rusqlite::Result<Evidence> {
    Ok(Evidence {
        edge_id: r.get(0)?,
        key: r.get(1)?,
        provider: r.get(2)?,
        evidence_type: r.get(3)?,
        authorship: r.get(4)?,
        source_relation: r.get(5)?,
        observed_at: parse_ts(r.get(6)?)?,
        first_observed_operation_id: r.get(7)?,
        last_observed_operation_id: r.get(8)?,
        details: json_col(r.get(9)?)?,
        retired_at: parse_ts(r.get(10)?)?,
    })
}

impl SqliteStore {
    /// Opens (creating when absent) the store in `dir/tributary.db`.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Unavailable(format!("cannot create the data directory {}: {e}", dir.display())))?;
        let path = dir.join("tributary.db");
        let writer = open_connection(&path)?;
        // Only the writer keeps a large page cache: its own commits do not empty it, whereas a
        // reader's is dropped after every write, and dropping a large cache costs in proportion.
        writer.pragma_update(None, "cache_size", -32_768).map_err(internal)?;
        // Checkpoints run on their own thread (`Checkpointer`), not inside whichever commit
        // crosses the threshold: a checkpoint copies and syncs tens of MiB, which a request
        // should not wait for. The writer's own only starts if that thread falls far behind.
        writer.pragma_update(None, "wal_autocheckpoint", 50_000).map_err(internal)?;
        writer.pragma_update(None, "journal_size_limit", 64i64 << 20).map_err(internal)?;
        writer.execute_batch(SCHEMA).map_err(internal)?;
        let readers = (0..READERS)
            .map(|_| {
                let reader = open_connection(&path)?;
                // Big enough for a graph query's index pages to stay between queries (at
                // SQLite's 2 MiB default, pages were loaded again for most queries), small
                // enough that the reset after another connection's commit stays cheap.
                reader.pragma_update(None, "cache_size", -8_192).map_err(internal)?;
                Ok(Mutex::new(reader))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let checkpointer = Arc::new(Checkpointer::start(open_connection(&path)?));
        Ok(Self {
            _checkpointer: checkpointer,
            writer: Arc::new(Mutex::new(writer)),
            readers: Arc::new(readers),
            next_reader: AtomicUsize::new(0),
            gate: Arc::new(tokio::sync::Mutex::new(())),
            session: None,
        })
    }

    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        if let Some(s) = &self.session {
            return s.run(move |c| f(c).map_err(internal));
        }
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        // Right here on the async worker: a read takes tens of microseconds, and handing the
        // worker to another thread around it (`block_in_place`, ~13 us) or hopping to the
        // blocking pool (two wake-ups) costs more than most reads. A large read holds its worker
        // as long as it runs; the other workers go on (the concurrency benchmark doubled).
        // A panic in an earlier read leaves no half-done state on a reader: recover its lock.
        let conn = self.readers[i].lock().unwrap_or_else(|p| p.into_inner());
        f(&conn).map_err(internal)
    }

    /// `write` for calls that fail only on the store's own errors (never on what they are
    /// asked): in a session, no savepoint guards the call, and a failure poisons the session
    /// instead (nothing of it commits, its caller reports every event of it failed). A
    /// savepoint copies every page a call first touches, a tenth of an ingested event's time.
    async fn write_unguarded<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        match &self.session {
            Some(s) => s.run(move |c| {
                let out = f(c);
                if out.is_err() {
                    s.poisoned.store(true, Ordering::Relaxed);
                }
                out
            }),
            None => self.write(f).await,
        }
    }

    /// Runs `f` in one transaction on the writer (in a session, under a savepoint of its
    /// transaction); an error rolls back everything `f` did.
    async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        if let Some(s) = &self.session {
            return s.run(move |c| {
                // Prepared once: parsing these three statements anew cost more than some calls.
                let run = |sql: &str| c.prepare_cached(sql).and_then(|mut s| s.execute([])).map_err(internal);
                run("SAVEPOINT call")?;
                let out = f(c);
                if out.is_err() {
                    run("ROLLBACK TO call")?;
                }
                run("RELEASE call")?;
                out
            });
        }
        let writer = self.writer.clone();
        // Held until the blocking work ends, even when the caller stops waiting for it.
        let gate = self.gate.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let _gate = gate;
            // A panicked write rolled back (its transaction was dropped): recover the lock.
            let mut conn = writer.lock().unwrap_or_else(|p| p.into_inner());
            let tx = conn.transaction().map_err(internal)?;
            let out = f(&tx)?;
            store_query(STORE, "commit");
            tx.commit().map_err(internal)?;
            Ok(out)
        })
        .await
        .map_err(internal)?
    }
}

fn sql_err(e: rusqlite::Error) -> StoreError {
    internal(e)
}

fn query_edges(
    conn: &Connection,
    op: &'static str,
    where_sql: &str,
    p: impl rusqlite::Params,
) -> rusqlite::Result<Vec<Edge>> {
    select_edges(conn, op, &format!("edges WHERE {where_sql}"), p)
}

/// Whole edges `FROM` the given source (the `edges` table, or a join of an `rarray` with it),
/// ordered by id.
fn select_edges(
    conn: &Connection,
    op: &'static str,
    from: &str,
    p: impl rusqlite::Params,
) -> rusqlite::Result<Vec<Edge>> {
    store_query(STORE, op);
    let mut stmt = conn.prepare_cached(&format!("SELECT {EDGE_COLS} FROM {from} ORDER BY id"))?;
    let rows = stmt.query_map(p, edge_row)?;
    rows.collect()
}

/// `ids` once each, sorted: the batched reads below join the `rarray` of them instead of
/// testing `IN rarray(..)`, which SQLite answers by first copying the array into a temporary
/// b-tree (a fifth of an ingested event's reads went to creating those).
fn distinct_ids(ids: &[Id]) -> Rc<Vec<SqlValue>> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    id_array(&ids)
}

fn edges_by_ids_tx(conn: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Edge>> {
    select_edges(
        conn,
        "edges_by_ids",
        "rarray(?1) AS k CROSS JOIN edges ON edges.id = k.value",
        params![distinct_ids(ids)],
    )
}

fn insert_edge(tx: &Connection, e: &NewEdge, now: &Timestamp) -> StoreResult<Option<Edge>> {
    let ukey = edge_ukey(&e.source, &e.target, &e.source_type);
    store_query(STORE, "edge_exists");
    let exists: Option<Id> = tx
        .query_row("SELECT id FROM edges WHERE ukey = ?1", params![ukey], |r| r.get(0))
        .optional()
        .map_err(sql_err)?;
    if exists.is_some() {
        return Ok(None);
    }
    insert_new_edge(tx, e, now, ukey).map(Some)
}

/// Inserts an edge the caller knows to be absent (its `ukey` looked up in this transaction).
fn insert_new_edge(tx: &Connection, e: &NewEdge, now: &Timestamp, ukey: String) -> StoreResult<Edge> {
    let (sk, sid, sc, sf) = end_cols(&e.source);
    let (tk, tid, tc, tf) = end_cols(&e.target);
    let intervals = vec![Interval { from: *now, to: None }];
    store_query(STORE, "create_edge");
    let mut insert = tx.prepare_cached(
        "INSERT INTO edges (created, source_kind, source_id, source_container_id, source_fqn, target_kind, target_id, target_container_id, target_fqn, ukey, description, source_type, operation, derived, transformations, last_asserted_at, retired_at, intervals) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, NULL, ?17)",
    ).map_err(sql_err)?;
    insert
        .execute(params![
            ts(now),
            sk,
            sid,
            sc,
            sf,
            tk,
            tid,
            tc,
            tf,
            ukey,
            e.description,
            e.source_type,
            e.operation,
            e.derived,
            e.transformations.as_ref().map(|t| t.to_string()),
            e.last_asserted_at.as_ref().map(ts),
            serde_json::to_string(&intervals).unwrap_or_else(|_| "[]".into()),
        ])
        .map_err(sql_err)?;
    let id = tx.last_insert_rowid();
    Ok(Edge {
        id,
        created: *now,
        source: e.source.clone(),
        target: e.target.clone(),
        description: e.description.clone(),
        source_type: e.source_type.clone(),
        operation: e.operation.clone(),
        derived: e.derived,
        transformations: e.transformations.clone(),
        last_asserted_at: e.last_asserted_at,
        retired_at: None,
        intervals,
    })
}

/// A WHERE clause of only the filters given, so the planner sees plain predicates it can answer
/// from an index (`?1 IS NULL OR run_id = ?1` in one cached statement scans the whole table).
#[derive(Default)]
struct Filter {
    clauses: Vec<String>,
    params: Vec<SqlValue>,
}

impl Filter {
    /// Adds `sql`, in which every `?` stands for `value`, when there is a value.
    fn when(&mut self, sql: &str, value: Option<SqlValue>) -> &mut Self {
        if let Some(v) = value {
            let mut numbered = String::new();
            for (i, part) in sql.split('?').enumerate() {
                if i > 0 {
                    numbered.push_str(&format!("?{}", self.params.len() + 1));
                }
                numbered.push_str(part);
            }
            self.clauses.push(format!("({numbered})"));
            self.params.push(v);
        }
        self
    }

    fn always(&mut self, sql: &str) -> &mut Self {
        self.clauses.push(format!("({sql})"));
        self
    }

    fn sql(&self) -> String {
        if self.clauses.is_empty() {
            "1".into()
        } else {
            self.clauses.join(" AND ")
        }
    }

    /// The placeholder for the next parameter (after the filter's own).
    fn next(&self, i: usize) -> String {
        format!("?{}", self.params.len() + i)
    }

    fn with(&self, extra: &[SqlValue]) -> rusqlite::ParamsFromIter<Vec<SqlValue>> {
        rusqlite::params_from_iter(self.params.iter().chain(extra).cloned().collect())
    }
}

fn page_of<T>(items: Vec<T>, total: i64, page: PageRequest) -> Page<T> {
    Page { items, total, page }
}

#[async_trait]
impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        STORE
    }

    async fn session(&self) -> StoreResult<Option<Arc<dyn Store>>> {
        if self.session.is_some() {
            return Ok(None);
        }
        let session = Session::start(self.writer.clone(), self.gate.clone()).await?;
        Ok(Some(Arc::new(SqliteStore {
            writer: self.writer.clone(),
            readers: self.readers.clone(),
            next_reader: AtomicUsize::new(0),
            gate: self.gate.clone(),
            _checkpointer: self._checkpointer.clone(),
            session: Some(session),
        })))
    }

    async fn commit_session(&self) -> StoreResult<()> {
        match &self.session {
            Some(s) => s.commit(),
            None => Ok(()),
        }
    }

    async fn ping(&self) -> StoreResult<()> {
        self.read(|c| {
            store_query(STORE, "ping");
            c.query_row("SELECT 1", [], |_| Ok(()))
        })
        .await
    }

    async fn upsert_datastore(&self, input: DatastoreInput) -> StoreResult<Datastore> {
        self.write(move |tx| {
            store_query(STORE, "upsert_datastore");
            let ns = serde_json::to_string(&input.namespaces).map_err(internal)?;
            tx.query_row(
                &format!(
                    "INSERT INTO datastores (name, type, store_type, namespaces, enrichment_only) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT(name) DO UPDATE SET type = excluded.type, store_type = excluded.store_type,
                       namespaces = excluded.namespaces, enrichment_only = excluded.enrichment_only
                     RETURNING {DATASTORE_COLS}"
                ),
                params![input.name, input.kind, input.store_type, ns, input.enrichment_only],
                datastore_row,
            )
            .map_err(sql_err)
        })
        .await
    }

    async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "datastores_by_ids");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {DATASTORE_COLS} FROM rarray(?1) AS k CROSS JOIN datastores ON datastores.id = k.value"
            ))?;
            let rows = stmt.query_map(params![Rc::new(ids)], datastore_row)?;
            rows.collect()
        })
        .await
    }

    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        self.read(|c| {
            store_query(STORE, "list_datastores");
            let mut stmt = c.prepare_cached(&format!("SELECT {DATASTORE_COLS} FROM datastores ORDER BY id"))?;
            let rows = stmt.query_map([], datastore_row)?;
            rows.collect()
        })
        .await
    }

    async fn delete_datastore(&self, id: Id) -> StoreResult<bool> {
        self.write(move |tx| {
            store_query(STORE, "delete_datastore");
            let n = tx.execute("DELETE FROM datastores WHERE id = ?1", params![id]).map_err(sql_err)?;
            store_query(STORE, "delete_datastore_fields");
            tx.execute(
                "UPDATE fields SET deleted = 1 WHERE container_id IN (SELECT id FROM containers WHERE datastore_id = ?1)",
                params![id],
            )
            .map_err(sql_err)?;
            store_query(STORE, "delete_datastore_containers");
            tx.execute("UPDATE containers SET deleted = 1 WHERE datastore_id = ?1", params![id]).map_err(sql_err)?;
            Ok(n > 0)
        })
        .await
    }

    async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        self.write(move |tx| {
            store_query(STORE, "datastore_exists");
            let ds: Option<Id> = tx
                .query_row("SELECT id FROM datastores WHERE id = ?1", params![input.datastore_id], |r| r.get(0))
                .optional()
                .map_err(sql_err)?;
            if ds.is_none() {
                return Err(StoreError::NotFound(format!("Datastore {} not found", input.datastore_id)));
            }
            let key = container_key(input.database.as_deref(), input.schema.as_deref(), &input.name);
            store_query(STORE, "upsert_container");
            let container = tx
                .query_row(
                    &format!(
                        "INSERT INTO containers (datastore_id, key, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count)
                         VALUES (?1, ?2, ?3, ?4, ?5, coalesce(?6, 'table'), ?7, ?8, ?9, coalesce(?10, 0))
                         ON CONFLICT(datastore_id, key) WHERE deleted = 0 DO UPDATE SET
                           container_type = coalesce(?6, container_type), table_type = coalesce(?7, table_type),
                           display_name = coalesce(?8, display_name), purpose = coalesce(?9, purpose),
                           active_anomaly_count = coalesce(?10, active_anomaly_count)
                         RETURNING {CONTAINER_COLS}"
                    ),
                    params![
                        input.datastore_id, key, input.name, input.database, input.schema, input.container_type,
                        input.table_type, input.display_name, input.purpose, input.active_anomaly_count
                    ],
                    container_row,
                )
                .map_err(sql_err)?;
            let mut fields = Vec::with_capacity(input.fields.len());
            {
                let mut stmt = tx
                    .prepare_cached(&format!(
                        "INSERT INTO fields (container_id, name, data_type, display_name, status, latest_profile_id, is_computed_field, active_anomaly_count)
                         VALUES (?1, ?2, ?3, ?4, coalesce(?5, 'active'), ?6, coalesce(?7, 0), coalesce(?8, 0))
                         ON CONFLICT(container_id, name) WHERE deleted = 0 DO UPDATE SET
                           data_type = coalesce(?3, data_type), display_name = coalesce(?4, display_name),
                           status = coalesce(?5, status), latest_profile_id = coalesce(?6, latest_profile_id),
                           is_computed_field = coalesce(?7, is_computed_field), active_anomaly_count = coalesce(?8, active_anomaly_count)
                         RETURNING {FIELD_COLS}"
                    ))
                    .map_err(sql_err)?;
                for f in &input.fields {
                    store_query(STORE, "upsert_field");
                    let field = stmt
                        .query_row(
                            params![
                                container.id, f.name, f.data_type, f.display_name, f.status, f.latest_profile_id,
                                f.is_computed_field, f.active_anomaly_count
                            ],
                            field_row,
                        )
                        .map_err(sql_err)?;
                    fields.push(field);
                }
            }
            Ok((container, fields))
        })
        .await
    }

    async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "containers_by_ids");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {CONTAINER_COLS} FROM rarray(?1) AS k CROSS JOIN containers
                 ON containers.id = k.value AND containers.deleted = 0"
            ))?;
            let rows = stmt.query_map(params![Rc::new(ids)], container_row)?;
            rows.collect()
        })
        .await
    }

    async fn list_containers(
        &self,
        datastore_id: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Container>> {
        let name = name.map(|n| n.to_lowercase());
        self.read(move |c| {
            let mut w = Filter::default();
            w.always("deleted = 0")
                .when("datastore_id = ?", datastore_id.map(SqlValue::Integer))
                .when("instr(unicode_lower(name), ?) > 0", name.map(SqlValue::Text));
            let filter = w.sql();
            store_query(STORE, "count_containers");
            let total: i64 =
                c.query_row(&format!("SELECT count(*) FROM containers WHERE {filter}"), w.with(&[]), |r| r.get(0))?;
            store_query(STORE, "list_containers");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {CONTAINER_COLS} FROM containers WHERE {filter} ORDER BY id LIMIT {} OFFSET {}",
                w.next(1),
                w.next(2)
            ))?;
            let rows = stmt
                .query_map(w.with(&[SqlValue::Integer(page.size), SqlValue::Integer(page.offset())]), container_row)?;
            Ok(page_of(rows.collect::<rusqlite::Result<_>>()?, total, page))
        })
        .await
    }

    async fn containers_by_names(&self, names: &[String], datastores: Option<&[Id]>) -> StoreResult<Vec<Container>> {
        if names.is_empty() || datastores.is_some_and(|d| d.is_empty()) {
            return Ok(Vec::new());
        }
        let names = str_array(names).to_vec();
        let datastores = datastores.map(|d| id_array(d).to_vec());
        self.read(move |c| {
            store_query(STORE, "containers_by_names");
            // The expression must read exactly as the index's for the planner to use it.
            let sql = format!(
                "SELECT {CONTAINER_COLS} FROM containers WHERE deleted = 0 AND unicode_lower(name) IN rarray(?1){} ORDER BY id",
                if datastores.is_some() { " AND datastore_id IN rarray(?2)" } else { "" }
            );
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = match datastores {
                Some(ds) => stmt.query_map(params![Rc::new(names), Rc::new(ds)], container_row)?.collect(),
                None => stmt.query_map(params![Rc::new(names)], container_row)?.collect(),
            };
            rows
        })
        .await
    }

    async fn delete_container(&self, id: Id) -> StoreResult<bool> {
        self.write(move |tx| {
            store_query(STORE, "delete_container");
            let n = tx
                .execute("UPDATE containers SET deleted = 1 WHERE id = ?1 AND deleted = 0", params![id])
                .map_err(sql_err)?;
            store_query(STORE, "delete_container_fields");
            tx.execute("UPDATE fields SET deleted = 1 WHERE container_id = ?1", params![id]).map_err(sql_err)?;
            Ok(n > 0)
        })
        .await
    }

    async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "fields_by_ids");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {FIELD_COLS} FROM rarray(?1) AS k CROSS JOIN fields ON fields.id = k.value AND fields.deleted = 0"
            ))?;
            let rows = stmt.query_map(params![Rc::new(ids)], field_row)?;
            rows.collect()
        })
        .await
    }

    async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "fields_of_containers");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {FIELD_COLS} FROM rarray(?1) AS k CROSS JOIN fields
                 ON fields.container_id = k.value AND fields.deleted = 0 ORDER BY id"
            ))?;
            let rows = stmt.query_map(params![Rc::new(ids)], field_row)?;
            rows.collect()
        })
        .await
    }

    async fn field_names_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "field_names_of_containers");
            // `fields_key` (container_id, name) holds all three columns: the table is not read.
            let mut stmt = c.prepare_cached(
                "SELECT fields.container_id, fields.id, fields.name FROM rarray(?1) AS k CROSS JOIN fields
                 ON fields.container_id = k.value AND fields.deleted = 0 ORDER BY fields.id",
            )?;
            let rows = stmt.query_map(params![Rc::new(ids)], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
        })
        .await
    }
    async fn container_fields(
        &self,
        container_id: Id,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Field>> {
        let name = name.map(|n| n.to_lowercase());
        self.read(move |c| {
            let filter = "deleted = 0 AND container_id = ?1 AND (?2 IS NULL OR instr(unicode_lower(name), ?2) > 0)";
            store_query(STORE, "count_fields");
            let total: i64 = c.query_row(
                &format!("SELECT count(*) FROM fields WHERE {filter}"),
                params![container_id, name],
                |r| r.get(0),
            )?;
            store_query(STORE, "container_fields");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {FIELD_COLS} FROM fields WHERE {filter} ORDER BY id LIMIT ?3 OFFSET ?4"
            ))?;
            let rows = stmt.query_map(params![container_id, name, page.size, page.offset()], field_row)?;
            Ok(page_of(rows.collect::<rusqlite::Result<_>>()?, total, page))
        })
        .await
    }

    async fn delete_field(&self, id: Id) -> StoreResult<bool> {
        self.write(move |tx| {
            store_query(STORE, "delete_field");
            let n = tx
                .execute("UPDATE fields SET deleted = 1 WHERE id = ?1 AND deleted = 0", params![id])
                .map_err(sql_err)?;
            Ok(n > 0)
        })
        .await
    }

    async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "container_stats");
            let mut stmt = c.prepare_cached(
                // Two EXISTS, one per end: each is answered from its (kind, id, retired_at)
                // index alone, where one OR-ed EXISTS also reads the edge rows (~20 % slower).
                // Per container, not GROUP BY: that sorted every field first (see `field_counts`).
                "SELECT k.value,
                   (SELECT count(*) FROM fields f WHERE f.container_id = k.value AND f.deleted = 0),
                   (SELECT count(*) FROM fields f WHERE f.container_id = k.value AND f.deleted = 0
                     AND (EXISTS (SELECT 1 FROM edges e WHERE e.source_kind = 'f' AND e.source_id = f.id AND e.retired_at IS NULL)
                       OR EXISTS (SELECT 1 FROM edges e WHERE e.target_kind = 'f' AND e.target_id = f.id AND e.retired_at IS NULL)))
                 FROM rarray(?1) AS k",
            )?;
            let rows = stmt.query_map(params![Rc::new(ids)], |r| {
                Ok(ContainerStats { container_id: r.get(0)?, field_count: r.get(1)?, linked_field_count: r.get(2)? })
            })?;
            // No row for a container without fields, as before.
            rows.filter(|s| !matches!(s, Ok(s) if s.field_count == 0)).collect()
        })
        .await
    }

    async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "field_counts");
            // Each container's range of the partial `fields_key` index counted alone: a GROUP BY
            // sorted every field of the graph's containers first (a seventh of a graph query).
            let mut stmt = c.prepare_cached(
                "SELECT k.value, (SELECT count(*) FROM fields f WHERE f.container_id = k.value AND f.deleted = 0)
                 FROM rarray(?1) AS k",
            )?;
            let rows = stmt.query_map(params![Rc::new(ids)], |r| Ok((r.get::<_, Id>(0)?, r.get::<_, i64>(1)?)))?;
            // No row for a container without fields, as before.
            rows.filter(|row| !matches!(row, Ok((_, 0)))).collect()
        })
        .await
    }

    async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        let ids = id_array(ids).to_vec();
        self.read(move |c| {
            store_query(STORE, "fields_with_lineage");
            let mut stmt = c.prepare_cached(
                "SELECT source_id FROM edges WHERE retired_at IS NULL AND source_kind = 'f' AND source_id IN rarray(?1)
                 UNION SELECT target_id FROM edges WHERE retired_at IS NULL AND target_kind = 'f' AND target_id IN rarray(?1)",
            )?;
            let rows = stmt.query_map(params![Rc::new(ids)], |r| r.get(0))?;
            rows.collect()
        })
        .await
    }

    async fn create_edges(&self, edges: Vec<NewEdge>, skip_existing: bool, now: Timestamp) -> StoreResult<Vec<Edge>> {
        self.write(move |tx| {
            let mut out = Vec::with_capacity(edges.len());
            for e in &edges {
                match insert_edge(tx, e, &now)? {
                    Some(edge) => out.push(edge),
                    None if skip_existing => {}
                    None => {
                        return Err(StoreError::Conflict(
                            "A lineage edge with the same source and target already exists".into(),
                        ))
                    }
                }
            }
            Ok(out)
        })
        .await
    }

    async fn live_container_edge_exists(&self, source: Id, target: Id) -> StoreResult<bool> {
        self.read(move |c| {
            store_query(STORE, "live_container_edge_exists");
            c.query_row(
                "SELECT EXISTS (SELECT 1 FROM edges WHERE source_kind = 'c' AND source_id = ?1 AND target_kind = 'c' AND target_id = ?2 AND retired_at IS NULL)",
                params![source, target],
                |r| r.get(0),
            )
        })
        .await
    }

    async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
        self.write(move |tx| {
            let Some(mut edge) = edges_by_ids_tx(tx, &[id]).map_err(sql_err)?.pop() else {
                return Ok(None);
            };
            if let Some(description) = patch.description {
                edge.description = description;
            }
            if let Some(source_type) = patch.source_type {
                if source_type != edge.source_type {
                    let ukey = edge_ukey(&edge.source, &edge.target, &source_type);
                    store_query(STORE, "edge_exists");
                    let clash: Option<Id> = tx
                        .query_row("SELECT id FROM edges WHERE ukey = ?1", params![ukey], |r| r.get(0))
                        .optional()
                        .map_err(sql_err)?;
                    if clash.is_some() {
                        return Err(StoreError::Conflict(
                            "A lineage edge with the same source and target already exists".into(),
                        ));
                    }
                    edge.source_type = source_type;
                }
            }
            store_query(STORE, "update_edge");
            tx.execute(
                "UPDATE edges SET description = ?2, source_type = ?3, ukey = ?4 WHERE id = ?1",
                params![
                    id,
                    edge.description,
                    edge.source_type,
                    edge_ukey(&edge.source, &edge.target, &edge.source_type)
                ],
            )
            .map_err(sql_err)?;
            Ok(Some(edge))
        })
        .await
    }

    async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()> {
        let ids = ids.to_vec();
        self.write(move |tx| {
            let edges = edges_by_ids_tx(tx, &ids).map_err(sql_err)?;
            let mut stmt =
                tx.prepare_cached("UPDATE edges SET retired_at = ?2, intervals = ?3 WHERE id = ?1").map_err(sql_err)?;
            for mut e in edges.into_iter().filter(|e| e.retired_at.is_none()) {
                if let Some(last) = e.intervals.last_mut() {
                    if last.to.is_none() {
                        last.to = Some(now);
                    }
                }
                store_query(STORE, "retire_edge");
                stmt.execute(params![e.id, ts(&now), serde_json::to_string(&e.intervals).map_err(internal)?])
                    .map_err(sql_err)?;
            }
            store_query(STORE, "retire_evidence");
            tx.execute(
                "UPDATE evidence SET retired_at = ?2 WHERE retired_at IS NULL AND edge_id IN rarray(?1)",
                params![id_array(&ids), ts(&now)],
            )
            .map_err(sql_err)?;
            Ok(())
        })
        .await
    }

    async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()> {
        let ids = ids.to_vec();
        self.write(move |tx| {
            store_query(STORE, "delete_edges");
            tx.execute("DELETE FROM edges WHERE id IN rarray(?1)", params![id_array(&ids)]).map_err(sql_err)?;
            store_query(STORE, "delete_evidence");
            tx.execute("DELETE FROM evidence WHERE edge_id IN rarray(?1)", params![id_array(&ids)]).map_err(sql_err)?;
            Ok(())
        })
        .await
    }

    async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        let ids = ids.to_vec();
        self.read(move |c| edges_by_ids_tx(c, &ids)).await
    }

    async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
        let f = filter.clone();
        self.read(move |c| {
            let mut w = Filter::default();
            w.when(
                "(source_kind = 'c' AND source_id = ?) OR (target_kind = 'c' AND target_id = ?)",
                f.container_id.map(SqlValue::Integer),
            )
            .when(
                "(source_kind = 'f' AND source_id = ?) OR (target_kind = 'f' AND target_id = ?)",
                f.field_id.map(SqlValue::Integer),
            )
            .when("source_type = ?", f.source_type.clone().map(SqlValue::Text));
            if !f.include_retired {
                w.always("retired_at IS NULL");
            }
            let where_sql = w.sql();
            store_query(STORE, "count_edges");
            let total: i64 =
                c.query_row(&format!("SELECT count(*) FROM edges WHERE {where_sql}"), w.with(&[]), |r| r.get(0))?;
            let items = query_edges(
                c,
                "list_edges",
                &format!("{where_sql} ORDER BY id LIMIT {} OFFSET {} --", w.next(1), w.next(2)),
                w.with(&[SqlValue::Integer(page.size), SqlValue::Integer(page.offset())]),
            )?;
            Ok(page_of(items, total, page))
        })
        .await
    }

    async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        let ids = ids.to_vec();
        self.read(move |c| {
            query_edges(
                c,
                "edges_touching_containers",
                "source_container_id IN rarray(?1) OR target_container_id IN rarray(?1)",
                params![id_array(&ids)],
            )
        })
        .await
    }

    async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        let ids = ids.to_vec();
        self.read(move |c| {
            query_edges(
                c,
                "edges_touching_fields",
                "(source_kind = 'f' AND source_id IN rarray(?1)) OR (target_kind = 'f' AND target_id IN rarray(?1))",
                params![id_array(&ids)],
            )
        })
        .await
    }

    async fn evidence_for_edges(&self, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>> {
        let ids = edge_ids.to_vec();
        self.read(move |c| {
            store_query(STORE, "evidence_for_edges");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {EVIDENCE_COLS} FROM evidence WHERE edge_id IN rarray(?1) ORDER BY edge_id, key"
            ))?;
            let rows = stmt.query_map(params![id_array(&ids)], evidence_row)?;
            rows.collect()
        })
        .await
    }

    async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()> {
        self.write(move |tx| put_evidence_tx(tx, &evidence).map_err(sql_err)).await
    }

    async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        let ids = distinct_ids(ids).to_vec();
        self.read(move |c| {
            // One index seek per id, joined: `IN rarray(..)` would first copy the ids into a
            // temporary b-tree, for every level of every traversal.
            let (op, on) = match direction {
                Direction::Upstream => (
                    "container_edges_upstream",
                    "target_kind = 'c' AND target_id = k.value AND retired_at IS NULL AND source_kind IN ('c', 'x')",
                ),
                Direction::Downstream => (
                    "container_edges_downstream",
                    "source_kind = 'c' AND source_id = k.value AND retired_at IS NULL AND target_kind IN ('c', 'x')",
                ),
            };
            select_edges(c, op, &format!("rarray(?1) AS k CROSS JOIN edges ON {on}"), params![Rc::new(ids)])
        })
        .await
    }

    async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
        // Only what the traversal did not read: edges out of the containers whose outgoing
        // edges it did not read, into those whose incoming edges it did not read; and the flags
        // of those containers on those sides. A hub in the middle of the graph is not read again.
        let (sources, targets) = scope.unread();
        let (ids, known) = (scope.ids.clone(), scope.known_external_edges.clone());
        self.read(move |c| {
            let edges = if sources.is_empty() || targets.is_empty() {
                Vec::new()
            } else {
                // Each target's live incoming edges are read from the index and their source
                // tested (`+` keeps it out of the seek: seeking every (source, target) pair costs
                // sources × targets, a million seeks around a hub). From the targets' side, not
                // the sources': fan-in is bounded by what one job reads, while a source hub's
                // fan-out runs to thousands (reading it was a third of a depth-5 graph's time).
                // The test runs on the index alone; only the edges found are read in full.
                query_edges(
                    c,
                    "container_edges_within",
                    "id IN (SELECT e.id FROM rarray(?2) AS k CROSS JOIN edges e
                       ON e.target_kind = 'c' AND e.target_id = k.value AND e.retired_at IS NULL
                       WHERE +e.source_kind = 'c' AND +e.source_id IN rarray(?1))",
                    params![id_array(&sources), distinct_ids(&targets)],
                )?
            };
            let mut around = GraphAround { edges, ..GraphAround::default() };
            if sources.is_empty() && targets.is_empty() {
                return Ok(around);
            }
            // EXISTS stops at the first edge that leaves the set: a hub's fan-out is not read.
            store_query(STORE, "container_edge_flags");
            let mut stmt = c.prepare_cached(
                "SELECT n.value, 0, EXISTS (SELECT 1 FROM edges e WHERE e.target_kind = 'c' AND e.target_id = n.value
                     AND e.retired_at IS NULL AND ((e.source_kind = 'c' AND e.source_id NOT IN rarray(?1))
                       OR (e.source_kind = 'x' AND e.id NOT IN rarray(?2))))
                 FROM rarray(?3) n
                 UNION ALL
                 SELECT n.value, 1, EXISTS (SELECT 1 FROM edges e WHERE e.source_kind = 'c' AND e.source_id = n.value
                     AND e.retired_at IS NULL AND ((e.target_kind = 'c' AND e.target_id NOT IN rarray(?1))
                       OR (e.target_kind = 'x' AND e.id NOT IN rarray(?2))))
                 FROM rarray(?4) n",
            )?;
            let rows = stmt
                .query_map(params![id_array(&ids), id_array(&known), id_array(&targets), id_array(&sources)], |r| {
                    Ok((r.get::<_, Id>(0)?, r.get::<_, bool>(1)?, r.get::<_, bool>(2)?))
                })?;
            for row in rows {
                match row? {
                    (id, false, true) => around.has_upstream.push(id),
                    (id, true, true) => around.has_downstream.push(id),
                    _ => {}
                }
            }
            Ok(around)
        })
        .await
    }

    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        let ids = ids.to_vec();
        self.read(move |c| {
            let (op, where_sql) = match direction {
                Direction::Upstream => {
                    ("field_edges_upstream", "target_kind = 'f' AND target_id IN rarray(?1) AND retired_at IS NULL")
                }
                Direction::Downstream => {
                    ("field_edges_downstream", "source_kind = 'f' AND source_id IN rarray(?1) AND retired_at IS NULL")
                }
            };
            query_edges(c, op, where_sql, params![id_array(&ids)])
        })
        .await
    }

    async fn apply_assertions(&self, batch: AssertionBatch, now: Timestamp) -> StoreResult<AssertionSummary> {
        self.write_unguarded(move |tx| {
            let mut sum = AssertionSummary::default();
            put_metadata_tx(tx, &batch.metadata).map_err(sql_err)?;
            let ukeys: Vec<String> =
                batch.assert.iter().map(|a| edge_ukey(&a.edge.source, &a.edge.target, &a.edge.source_type)).collect();
            // Two reads for the whole batch (the edges already there, their evidence under the
            // asserted keys) instead of two per assertion; each write then knows what it meets.
            let mut existing = edges_by_ukeys_tx(tx, &ukeys).map_err(sql_err)?;
            let mut had = evidence_states_tx(tx, &existing, &batch.assert).map_err(sql_err)?;
            // By value: each evidence's details move into its row rather than being copied.
            for (a, ukey) in batch.assert.into_iter().zip(ukeys) {
                let edge_id = match existing.get(&ukey) {
                    None => {
                        let created = insert_new_edge(tx, &a.edge, &now, ukey.clone())?;
                        sum.edges_created += 1;
                        let id = created.id;
                        // The same edge asserted again later in the batch (a rename) finds it.
                        existing.insert(ukey, created);
                        id
                    }
                    Some(e) => {
                        let (id, revive) = (e.id, e.retired_at.is_some());
                        let last = match (e.last_asserted_at, a.edge.last_asserted_at) {
                            (Some(x), Some(y)) => Some(x.max(y)),
                            (x, y) => x.or(y),
                        };
                        // Only a revived edge's intervals change (a new live one).
                        let intervals = revive.then(|| {
                            let mut v = e.intervals.clone();
                            v.push(Interval { from: now, to: None });
                            v
                        });
                        let (last_at, transformations) =
                            (last.as_ref().map(ts), a.edge.transformations.as_ref().map(|t| t.to_string()));
                        if let Some(intervals) = &intervals {
                            store_query(STORE, "revive_edge");
                            tx.prepare_cached(
                                "UPDATE edges SET last_asserted_at = ?2, operation = coalesce(operation, ?3),
                                   derived = coalesce(?4, derived), transformations = coalesce(?5, transformations),
                                   retired_at = NULL, intervals = ?6 WHERE id = ?1",
                            )
                            .map_err(sql_err)?
                            .execute(params![
                                id,
                                last_at,
                                a.edge.operation,
                                a.edge.derived,
                                transformations,
                                serde_json::to_string(intervals).map_err(internal)?
                            ])
                            .map_err(sql_err)?;
                            sum.edges_revived += 1;
                        } else {
                            // A live edge's indexed columns (its ends, `retired_at`) stay as they
                            // are: only unindexed ones are written, so no index entry moves.
                            store_query(STORE, "assert_edge");
                            tx.prepare_cached(
                                "UPDATE edges SET last_asserted_at = ?2, operation = coalesce(operation, ?3),
                                   derived = coalesce(?4, derived), transformations = coalesce(?5, transformations)
                                 WHERE id = ?1",
                            )
                            .map_err(sql_err)?
                            .execute(params![id, last_at, a.edge.operation, a.edge.derived, transformations])
                            .map_err(sql_err)?;
                        }
                        if let Some(e) = existing.get_mut(&ukey) {
                            e.retired_at = None;
                            e.last_asserted_at = last;
                            if let Some(intervals) = intervals {
                                e.intervals = intervals;
                            }
                        }
                        id
                    }
                };
                sum.edges_asserted += 1;
                let mut ev = a.evidence;
                ev.edge_id = edge_id;
                ev.retired_at = None;
                let key = (edge_id, ev.key.clone());
                match had.get(&key) {
                    None => {
                        sum.evidence_created += 1;
                        insert_evidence_tx(tx, &ev).map_err(sql_err)?;
                    }
                    Some(prior) => {
                        if prior.retired {
                            sum.evidence_created += 1;
                        }
                        // The operation that first observed the evidence stays; the last one moves.
                        ev.first_observed_operation_id = prior.first.or(ev.first_observed_operation_id);
                        ev.last_observed_operation_id = ev.last_observed_operation_id.or(prior.last);
                        update_evidence_tx(tx, &ev).map_err(sql_err)?;
                    }
                }
                had.insert(
                    key,
                    EvidenceState {
                        retired: false,
                        first: ev.first_observed_operation_id,
                        last: ev.last_observed_operation_id,
                    },
                );
            }
            {
                let mut stmt = tx
                    .prepare_cached(
                        "UPDATE evidence SET retired_at = ?3 WHERE edge_id = ?1 AND key = ?2 AND retired_at IS NULL",
                    )
                    .map_err(sql_err)?;
                for (edge_id, key) in &batch.retire_evidence {
                    store_query(STORE, "retire_evidence");
                    sum.evidence_retired += stmt.execute(params![edge_id, key, ts(&now)]).map_err(sql_err)? as i64;
                }
            }
            if !batch.retire_candidates.is_empty() {
                store_query(STORE, "unbacked_edges");
                let unbacked: Vec<Id> = {
                    let mut stmt = tx
                        .prepare_cached(
                            "SELECT id FROM edges e WHERE e.id IN rarray(?1) AND e.retired_at IS NULL
                             AND NOT EXISTS (SELECT 1 FROM evidence v WHERE v.edge_id = e.id AND v.retired_at IS NULL)",
                        )
                        .map_err(sql_err)?;
                    let rows =
                        stmt.query_map(params![id_array(&batch.retire_candidates)], |r| r.get(0)).map_err(sql_err)?;
                    rows.collect::<rusqlite::Result<_>>().map_err(sql_err)?
                };
                let edges = edges_by_ids_tx(tx, &unbacked).map_err(sql_err)?;
                let mut stmt = tx
                    .prepare_cached("UPDATE edges SET retired_at = ?2, intervals = ?3 WHERE id = ?1")
                    .map_err(sql_err)?;
                for mut e in edges {
                    if let Some(last) = e.intervals.last_mut() {
                        if last.to.is_none() {
                            last.to = Some(now);
                        }
                    }
                    store_query(STORE, "retire_edge");
                    stmt.execute(params![e.id, ts(&now), serde_json::to_string(&e.intervals).map_err(internal)?])
                        .map_err(sql_err)?;
                    sum.edges_retired += 1;
                }
            }
            Ok(sum)
        })
        .await
    }

    async fn put_doc(&self, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
        let (kind, key) = (kind.to_string(), key.to_string());
        self.write(move |tx| {
            store_query(STORE, "put_doc");
            tx.execute(
                "INSERT INTO docs (kind, key, value) VALUES (?1, ?2, ?3) ON CONFLICT(kind, key) DO UPDATE SET value = excluded.value",
                params![kind, key, value.to_string()],
            )
            .map_err(sql_err)?;
            Ok(())
        })
        .await
    }

    async fn get_doc(&self, kind: &str, key: &str) -> StoreResult<Option<serde_json::Value>> {
        let (kind, key) = (kind.to_string(), key.to_string());
        self.read(move |c| {
            store_query(STORE, "get_doc");
            let v: Option<Option<String>> = c
                .query_row("SELECT value FROM docs WHERE kind = ?1 AND key = ?2", params![kind, key], |r| r.get(0))
                .optional()?;
            json_col(v.flatten())
        })
        .await
    }

    async fn list_docs(&self, kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
        let kind = kind.to_string();
        self.read(move |c| {
            store_query(STORE, "list_docs");
            let mut stmt = c.prepare_cached("SELECT key, value FROM docs WHERE kind = ?1 ORDER BY key")?;
            let rows = stmt.query_map(params![kind], |r| {
                Ok((r.get::<_, String>(0)?, json_col(r.get(1)?)?.unwrap_or(serde_json::Value::Null)))
            })?;
            rows.collect()
        })
        .await
    }

    async fn put_metadata(&self, rows: Vec<crate::domain::MetadataAssertion>) -> StoreResult<()> {
        self.write(move |tx| put_metadata_tx(tx, &rows).map_err(sql_err)).await
    }

    async fn metadata_for_container(&self, container_id: Id) -> StoreResult<Vec<crate::domain::MetadataAssertion>> {
        self.read(move |c| {
            store_query(STORE, "metadata_for_container");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {METADATA_COLS} FROM metadata WHERE container_id = ?1 ORDER BY field_id, attribute, source"
            ))?;
            let rows = stmt.query_map(params![container_id], metadata_row)?;
            rows.collect()
        })
        .await
    }

    async fn next_operation_id(&self) -> StoreResult<Id> {
        let now = ts(&crate::domain::now());
        self.write(move |tx| {
            store_query(STORE, "next_operation_id");
            tx.execute("INSERT INTO operations (started) VALUES (?1)", params![now]).map_err(sql_err)?;
            Ok(tx.last_insert_rowid())
        })
        .await
    }

    async fn evidence_by_keys(&self, keys: &[String]) -> StoreResult<Vec<Evidence>> {
        let keys = str_array(keys).to_vec();
        self.read(move |c| {
            store_query(STORE, "evidence_by_keys");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {EVIDENCE_COLS} FROM evidence WHERE key IN rarray(?1) ORDER BY edge_id, key"
            ))?;
            let rows = stmt.query_map(params![Rc::new(keys)], evidence_row)?;
            rows.collect()
        })
        .await
    }

    async fn live_evidence_of_key(&self, key: &str) -> StoreResult<Vec<PriorEvidence>> {
        let key = key.to_string();
        self.read(move |c| {
            store_query(STORE, "live_evidence_of_key");
            // One statement, and only the columns used: the two run ids come out of the details
            // in SQLite (whole rows and their JSON, parsed into values, were half the read).
            let mut stmt = c.prepare_cached(
                "SELECT v.edge_id, v.key,
                   CASE json_type(v.details, '$.runId') WHEN 'text' THEN json_extract(v.details, '$.runId') END,
                   CASE json_type(v.details, '$.firstRunId') WHEN 'text' THEN json_extract(v.details, '$.firstRunId') END,
                   e.source_kind, e.source_id, e.source_container_id, e.source_fqn,
                   e.target_kind, e.target_id, e.target_container_id, e.target_fqn
                 FROM evidence v LEFT JOIN edges e ON e.id = v.edge_id
                 WHERE v.key = ?1 AND v.retired_at IS NULL ORDER BY v.edge_id",
            )?;
            let rows = stmt.query_map(params![key], |r| {
                let source_kind: Option<String> = r.get(4)?;
                let target_kind: Option<String> = r.get(8)?;
                let ends = match (source_kind, target_kind) {
                    (Some(s), Some(t)) => Some((
                        end_from(&s, r.get(5)?, r.get(6)?, r.get(7)?).key(),
                        end_from(&t, r.get(9)?, r.get(10)?, r.get(11)?).key(),
                    )),
                    _ => None,
                };
                Ok(PriorEvidence {
                    edge_id: r.get(0)?,
                    key: r.get(1)?,
                    run_id: r.get(2)?,
                    first_run_id: r.get(3)?,
                    ends,
                })
            })?;
            rows.collect()
        })
        .await
    }
    async fn live_edges_touching_ends(&self, ends: &[End], source_type: &str) -> StoreResult<Vec<Edge>> {
        let (containers, fields, fqns) = super::ends_by_kind(ends);
        let source_type = source_type.to_string();
        self.read(move |c| {
            // Each arm walks the (kind, id, retired_at) index to the live edges only, so the cost
            // follows the ends' live edges, not the store's size or history (a query log rewrites
            // hot tables over and over, retiring their old column edges each time).
            query_edges(
                c,
                "live_edges_touching_ends",
                "source_type = ?4 AND id IN (
                   SELECT id FROM edges WHERE source_kind = 'c' AND source_id IN rarray(?1) AND retired_at IS NULL
                   UNION SELECT id FROM edges WHERE target_kind = 'c' AND target_id IN rarray(?1) AND retired_at IS NULL
                   UNION SELECT id FROM edges WHERE source_kind = 'f' AND source_id IN rarray(?2) AND retired_at IS NULL
                   UNION SELECT id FROM edges WHERE target_kind = 'f' AND target_id IN rarray(?2) AND retired_at IS NULL
                   UNION SELECT id FROM edges WHERE source_kind = 'x' AND source_fqn IN rarray(?3) AND retired_at IS NULL
                   UNION SELECT id FROM edges WHERE target_kind = 'x' AND target_fqn IN rarray(?3) AND retired_at IS NULL)",
                params![id_array(&containers), id_array(&fields), str_array(&fqns), source_type],
            )
        })
        .await
    }

    async fn insert_event(&self, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
        self.insert_events(vec![event]).await?.pop().ok_or_else(|| internal("storing one event returned none"))
    }

    async fn insert_events(&self, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
        self.write(move |tx| {
            let mut out = Vec::with_capacity(events.len());
            let mut lookup = tx
                .prepare_cached(&format!("SELECT {EVENT_COLS} FROM events WHERE fingerprint = ?1"))
                .map_err(sql_err)?;
            for event in events {
                store_query(STORE, "event_by_fingerprint");
                match lookup.query_row(params![event.fingerprint], event_row).optional().map_err(sql_err)? {
                    Some(existing) => out.push((existing, true)),
                    None => {
                        let id = insert_event_row(tx, &event, false).map_err(sql_err)?;
                        out.push((StoredEvent { id, ..event }, false));
                    }
                }
            }
            Ok(out)
        })
        .await
    }

    async fn finish_events(&self, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
        self.write(move |tx| {
            let mut stmt = tx
                .prepare_cached("UPDATE events SET status = ?2, errors = ?3, summary = ?4 WHERE id = ?1")
                .map_err(sql_err)?;
            for o in outcomes {
                store_query(STORE, "finish_event");
                stmt.execute(params![o.id, o.status, o.errors.to_string(), o.summary.to_string()]).map_err(sql_err)?;
            }
            Ok(())
        })
        .await
    }

    async fn finish_event(
        &self,
        id: Id,
        status: &str,
        errors: serde_json::Value,
        summary: serde_json::Value,
    ) -> StoreResult<()> {
        self.finish_events(vec![EventOutcome { id, status: status.to_string(), errors, summary }]).await
    }

    async fn run_event_states(&self, run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
        let run_id = run_id.to_string();
        self.read(move |c| {
            store_query(STORE, "run_event_states");
            let mut stmt =
                c.prepare_cached("SELECT id, status, event_type FROM events WHERE run_id = ?1 ORDER BY id")?;
            let rows = stmt.query_map(params![run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect()
        })
        .await
    }

    async fn list_events(&self, filter: &EventFilter, page: PageRequest) -> StoreResult<Page<StoredEvent>> {
        let f = filter.clone();
        self.read(move |c| {
            let text = |v: &Option<String>| v.clone().map(SqlValue::Text);
            let mut w = Filter::default();
            w.when("status = ?", text(&f.status))
                .when("job_namespace = ?", text(&f.job_namespace))
                .when("job_name = ?", text(&f.job_name))
                .when("run_id = ?", text(&f.run_id))
                .when("received_at >= ?", f.since.as_ref().map(|t| SqlValue::Text(ts(t))))
                .when("received_at <= ?", f.until.as_ref().map(|t| SqlValue::Text(ts(t))));
            let where_sql = w.sql();
            store_query(STORE, "count_events");
            let total: i64 =
                c.query_row(&format!("SELECT count(*) FROM events WHERE {where_sql}"), w.with(&[]), |r| r.get(0))?;
            store_query(STORE, "list_events");
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {EVENT_COLS} FROM events WHERE {where_sql} ORDER BY id DESC LIMIT {} OFFSET {}",
                w.next(1),
                w.next(2)
            ))?;
            let rows =
                stmt.query_map(w.with(&[SqlValue::Integer(page.size), SqlValue::Integer(page.offset())]), event_row)?;
            Ok(page_of(rows.collect::<rusqlite::Result<_>>()?, total, page))
        })
        .await
    }

    async fn events_after(&self, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
        self.read(move |c| {
            store_query(STORE, "events_after");
            let mut stmt =
                c.prepare_cached(&format!("SELECT {EVENT_COLS} FROM events WHERE id > ?1 ORDER BY id LIMIT ?2"))?;
            let rows = stmt.query_map(params![after, limit], event_row)?;
            rows.collect()
        })
        .await
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        self.write(move |tx| {
            store_query(STORE, "purge_events");
            let n = tx.execute("DELETE FROM events WHERE received_at < ?1", params![ts(&before)]).map_err(sql_err)?;
            Ok(n as u64)
        })
        .await
    }

    async fn export(&self) -> StoreResult<Vec<Record>> {
        self.read(|c| {
            let mut out = Vec::new();
            store_query(STORE, "export");
            let mut s = c.prepare(&format!("SELECT {DATASTORE_COLS} FROM datastores ORDER BY id"))?;
            for d in s.query_map([], datastore_row)? {
                out.push(Record::Datastore(d?));
            }
            // Deleted containers and fields are not exported: retired edges keep their ids,
            // which is all a deleted end ever shows.
            let mut s = c.prepare(&format!("SELECT {CONTAINER_COLS} FROM containers WHERE deleted = 0 ORDER BY id"))?;
            for x in s.query_map([], container_row)? {
                out.push(Record::Container(x?));
            }
            let mut s = c.prepare(&format!("SELECT {FIELD_COLS} FROM fields WHERE deleted = 0 ORDER BY id"))?;
            for x in s.query_map([], field_row)? {
                out.push(Record::Field(x?));
            }
            let mut s = c.prepare(&format!("SELECT {EDGE_COLS} FROM edges ORDER BY id"))?;
            for x in s.query_map([], edge_row)? {
                out.push(Record::Edge(x?));
            }
            let mut s = c.prepare(&format!("SELECT {EVIDENCE_COLS} FROM evidence ORDER BY edge_id, key"))?;
            for x in s.query_map([], evidence_row)? {
                out.push(Record::Evidence(x?));
            }
            let mut s = c.prepare(&format!(
                "SELECT {METADATA_COLS} FROM metadata ORDER BY container_id, field_id, attribute, source"
            ))?;
            for x in s.query_map([], metadata_row)? {
                out.push(Record::Metadata(x?));
            }
            let mut s = c.prepare("SELECT kind, key, value FROM docs ORDER BY kind, key")?;
            for x in s.query_map([], |r| {
                Ok(Record::Doc {
                    kind: r.get(0)?,
                    key: r.get(1)?,
                    value: json_col(r.get(2)?)?.unwrap_or(serde_json::Value::Null),
                })
            })? {
                out.push(x?);
            }
            let mut s = c.prepare(&format!("SELECT {EVENT_COLS} FROM events ORDER BY id"))?;
            for x in s.query_map([], event_row)? {
                out.push(Record::Event(x?));
            }
            Ok(out)
        })
        .await
    }

    async fn import(&self, records: Vec<Record>) -> StoreResult<usize> {
        self.write(move |tx| {
            store_query(STORE, "import_check_empty");
            let n: i64 = tx
                .query_row(
                    "SELECT (SELECT count(*) FROM datastores) + (SELECT count(*) FROM containers) + (SELECT count(*) FROM edges)",
                    [],
                    |r| r.get(0),
                )
                .map_err(sql_err)?;
            if n > 0 {
                return Err(StoreError::Invalid("import needs an empty store; this one already holds data".into()));
            }
            // Each statement is prepared once for the whole import, not once per row.
            let prepare = |sql: &str| tx.prepare(sql).map_err(sql_err);
            let mut datastore = prepare(&format!(
                "INSERT INTO datastores ({DATASTORE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            ))?;
            let mut container = prepare(
                "INSERT INTO containers (id, datastore_id, key, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            let mut field = prepare(&format!("INSERT INTO fields ({FIELD_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"))?;
            let mut edge = prepare(&format!(
                "INSERT INTO edges ({EDGE_COLS}, ukey) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
            ))?;
            // A first-start admin may already exist: the imported documents replace it.
            let mut doc = prepare("INSERT OR REPLACE INTO docs (kind, key, value) VALUES (?1, ?2, ?3)")?;
            let mut evidence = prepare(&format!(
                "INSERT INTO evidence ({EVIDENCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
            ))?;
            for r in &records {
                store_query(STORE, "import_record");
                match r {
                    Record::Datastore(d) => datastore.execute(
                        params![d.id, d.name, d.kind, d.store_type, serde_json::to_string(&d.namespaces).map_err(internal)?, d.enrichment_only],
                    ),
                    Record::Container(x) => container.execute(
                        params![x.id, x.datastore_id, container_key(x.database.as_deref(), x.schema.as_deref(), &x.name), x.name, x.database, x.schema, x.container_type, x.table_type, x.display_name, x.purpose, x.active_anomaly_count],
                    ),
                    Record::Field(x) => field.execute(
                        params![x.id, x.container_id, x.name, x.display_name, x.data_type, x.status, x.latest_profile_id, x.is_computed_field, x.active_anomaly_count],
                    ),
                    Record::Edge(e) => {
                        let (sk, sid, sc, sf) = end_cols(&e.source);
                        let (tk, tid, tc, tf) = end_cols(&e.target);
                        edge.execute(
                            params![
                                e.id, ts(&e.created), sk, sid, sc, sf, tk, tid, tc, tf, e.description, e.source_type, e.operation, e.derived,
                                e.transformations.as_ref().map(|t| t.to_string()), e.last_asserted_at.as_ref().map(ts),
                                e.retired_at.as_ref().map(ts), serde_json::to_string(&e.intervals).map_err(internal)?,
                                edge_ukey(&e.source, &e.target, &e.source_type)
                            ],
                        )
                    }
                    Record::Event(e) => insert_event_row(tx, e, true).map(|_| 1),
                    Record::Metadata(m) => put_metadata_tx(tx, std::slice::from_ref(m)).map(|_| 1),
                    Record::Doc { kind, key, value } => doc.execute(params![kind, key, value.to_string()]),
                    Record::Evidence(e) => evidence.execute(
                        params![
                            e.edge_id, e.key, e.provider, e.evidence_type, e.authorship, e.source_relation,
                            e.observed_at.as_ref().map(ts), e.first_observed_operation_id, e.last_observed_operation_id,
                            e.details.as_ref().map(|d| d.to_string()), e.retired_at.as_ref().map(ts)
                        ],
                    ),
                }
                .map_err(|e| StoreError::Invalid(format!("record could not be imported: {e}")))?;
            }
            // Operation ids continue past those the imported evidence names.
            store_query(STORE, "raise_operation_id");
            tx.execute(
                "INSERT INTO operations (id, started) SELECT max(last_observed_operation_id), ?1 FROM evidence
                 WHERE last_observed_operation_id IS NOT NULL HAVING count(*) > 0",
                params![ts(&crate::domain::now())],
            )
            .map_err(sql_err)?;
            Ok(records.len())
        })
        .await
    }
}
