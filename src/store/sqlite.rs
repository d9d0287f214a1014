//! The embedded store: SQLite (bundled, through `rusqlite`) in `--data-dir`.
//!
//! Why SQLite: a proven embedded database with transactions and crash safety, no setup. WAL
//! mode with `synchronous=NORMAL` keeps every committed transaction across a `kill -9` of the
//! process (only an OS crash may lose the last ones). One writer connection behind a mutex
//! (SQLite has one writer anyway) and a few reader connections so reads never wait on writes.
//! Writes run on tokio's blocking pool; reads and a session's calls right on the calling
//! task's thread. Batched reads pass ids as one `rarray` parameter, so a read of any number
//! of ids is one statement.
//!
//! One file per concern, as in the Neo4j store: `schema` (tables, indexes), `rows` (row <->
//! domain mapping), `catalog` (datastores, containers, fields), `edges` (edges and evidence),
//! `graph` (traversal reads), `assertions` (provider batches, metadata), `events` (the event
//! log), `changes` (the change log), `jobs` (jobs and runs), `identity` (small documents), `transfer` (export and
//! import), `session` (the session transaction and the WAL checkpointer), `migrations` (the
//! schema version, checked and moved forward at open) and `backup` (`tributary backup`). Here:
//! the store and its connections, how a call runs (`read`, `write`, `write_unguarded`), the
//! statement helpers the concerns share (`select_rows`, `select_page`), and the `Store` impl,
//! each method a short dispatch.

mod assertions;
mod backup;
mod catalog;
mod changes;
mod disk;
mod edges;
mod events;
mod frontier;
mod graph;
mod identity;
mod jobs;
mod jobs_asof;
mod live_at;
mod migrations;
mod rows;
mod schema;
mod search;
mod session;
mod transfer;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Row, TransactionBehavior};

pub use self::backup::{backup, BackupReport};
pub use self::migrations::SCHEMA_VERSION;
pub use self::rows::edge_ukey;
use self::rows::ts;
pub use self::schema::register_unicode_lower;
use self::session::{Checkpointer, Session};
use super::{GraphAround, GraphScope, PriorEvidence, Record, RecordChunks, Store, StoreError, StoreResult};
use crate::domain::{
    AssertionBatch, AssertionSummary, Change, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput,
    Direction, Edge, EdgeFilter, EdgePatch, End, EventFilter, EventOutcome, Evidence, Field, Id, IoEntry, Job,
    JobFilter, KnownRun, NewChange, NewEdge, Page, PageRequest, Run, RunFilter, RunRecord, StoredEvent, Timestamp,
};
use crate::metrics::store_query;

const STORE: &str = "embedded";
const READERS: usize = 4;
/// The memory map's size for every connection: address space, not memory (pages are the
/// kernel's page cache, shared by the connections). Matches `SQLITE_MAX_MMAP_SIZE` in
/// `.cargo/config.toml`.
const MMAP_BYTES: i64 = 1 << 36;

/// What a WAL is cut back to when a writer starts it over (`journal_size_limit`), and the
/// length past which the checkpoint thread empties one that is wholly copied back.
const WAL_LIMIT_BYTES: i64 = 64 << 20;
/// Ids from which a batched read runs in two halves side by side (`read_split`): below
/// it the hop to the blocking pool costs more than half the read saves.
const SPLIT_LEVEL_AT: usize = 128;

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

fn internal<E: std::fmt::Display + 'static>(e: E) -> StoreError {
    if let Some(unavailable) = disk::unavailable(&e) {
        return unavailable;
    }
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
    // The whole file: at 1 GiB a store of a million containers (6 GB) read most pages through
    // the pager. SQLite caps the map at compile time (2 GiB by default); `.cargo/config.toml`
    // raises the cap to this size.
    conn.pragma_update(None, "mmap_size", MMAP_BYTES).map_err(internal)?;
    // Temporary b-trees (sorts, `IN` lists, subqueries) and a session's savepoint journal stay
    // in memory instead of going through a temporary file.
    conn.pragma_update(None, "temp_store", "MEMORY").map_err(internal)?;
    // Ingest and traversal use a few dozen distinct statements; keep them all prepared.
    conn.set_prepared_statement_cache_capacity(128);
    rusqlite::vtab::array::load_module(&conn).map_err(internal)?;
    register_unicode_lower(&conn).map_err(internal)?;
    live_at::register(&conn).map_err(internal)?;
    Ok(conn)
}

/// Runs `f` on reader `i`. A panic in an earlier read leaves no half-done state on a reader:
/// its lock is recovered.
fn on_reader<T>(
    readers: &[Mutex<Connection>],
    i: usize,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> StoreResult<T> {
    let conn = readers[i].lock().unwrap_or_else(|p| p.into_inner());
    f(&conn).map_err(internal)
}

fn sql_err(e: rusqlite::Error) -> StoreError {
    internal(e)
}

impl SqliteStore {
    /// Opens (creating when absent) the store in `dir/tributary.db`.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Unavailable(format!("cannot create the data directory {}: {e}", dir.display())))?;
        disk::remember_data_dir(dir);
        let path = dir.join("tributary.db");
        let mut writer = open_connection(&path)?;
        // Files that cannot be written can still open (SQLite falls back to reading them, and a
        // WAL left by a process that ended without closing it reads through its `-shm`), and
        // every write would fail later: refuse such a store here, as an unwritable directory is.
        if writer.is_readonly(rusqlite::MAIN_DB).map_err(internal)? {
            tracing::error!(store = STORE, data_dir = %dir.display(), "the embedded store's file cannot be written");
            return Err(StoreError::Unavailable(format!(
                "the store file {} can only be read (a read-only file system or file); make it writable",
                path.display()
            )));
        }
        // Only the writer keeps a large page cache: its own commits do not empty it, whereas a
        // reader's is dropped after every write, and dropping a large cache costs in proportion.
        writer.pragma_update(None, "cache_size", -32_768).map_err(internal)?;
        // Checkpoints run on their own thread (`Checkpointer`), not inside whichever commit
        // crosses the threshold: a checkpoint copies and syncs tens of MiB, which a request
        // should not wait for. The writer's own only starts if that thread falls far behind.
        writer.pragma_update(None, "wal_autocheckpoint", 50_000).map_err(internal)?;
        writer.pragma_update(None, "journal_size_limit", WAL_LIMIT_BYTES).map_err(internal)?;
        migrations::open_schema(&mut writer, dir)?;
        // Idempotent: creates and backfills the change log on a store made before it existed.
        schema::migrate_change_log(&mut writer)?;
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
        let checkpointer = Arc::new(Checkpointer::start(open_connection(&path)?, WAL_LIMIT_BYTES));
        Ok(Self {
            _checkpointer: checkpointer,
            writer: Arc::new(Mutex::new(writer)),
            readers: Arc::new(readers),
            next_reader: AtomicUsize::new(0),
            gate: Arc::new(tokio::sync::Mutex::new(())),
            session: None,
        })
    }

    /// Runs `f` on a reader connection, or in the session's transaction on a session view.
    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        if let Some(s) = &self.session {
            return s.run(move |c| f(c).map_err(internal));
        }
        // Right here on the async worker: a read takes tens of microseconds, and handing the
        // worker to another thread around it (`block_in_place`, ~13 us) or hopping to the
        // blocking pool (two wake-ups) costs more than most reads. A large read holds its worker
        // as long as it runs; the other workers go on (the concurrency benchmark doubled).
        on_reader(&self.readers, self.next_reader(), f)
    }

    /// The reader the next read takes, in turn.
    fn next_reader(&self) -> usize {
        self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len()
    }

    /// A batched read over many ids (a traversal level's edges, the records of its answer) in
    /// two halves side by side, the second on another reader from the blocking pool, so that one
    /// graph query uses both cores instead of one. Each statement is one index seek per id in
    /// id order, so the halves of the sorted ids give back the rows in the order one statement
    /// would. Few ids, and reads inside a session (one connection), take one statement.
    async fn read_split<T, F>(&self, ids: &[Id], f: F) -> StoreResult<Vec<T>>
    where
        T: Send + 'static,
        F: Fn(&Connection, &[Id]) -> rusqlite::Result<Vec<T>> + Clone + Send + 'static,
    {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() < SPLIT_LEVEL_AT || self.session.is_some() || self.readers.len() < 2 {
            return self.read(move |c| f(c, &ids)).await;
        }
        let upper = ids.split_off(ids.len() / 2);
        let (readers, i, g) = (self.readers.clone(), self.next_reader(), f.clone());
        // One read, counted once (`metrics::store_query`).
        let other =
            tokio::task::spawn_blocking(move || crate::metrics::uncounted(|| on_reader(&readers, i, |c| g(c, &upper))));
        let mut rows = self.read(move |c| f(c, &ids)).await?;
        let upper = other.await.map_err(|e| StoreError::Internal(format!("a split read's half stopped: {e}")))??;
        rows.extend(upper);
        Ok(rows)
    }

    /// In a session, writes its buffered job and run updates, so that a read of their tables
    /// sees them (see `jobs::JobsBuffer`).
    fn flush_jobs(&self) -> StoreResult<()> {
        match &self.session {
            Some(s) => s.run(|c| s.with_jobs(|buffer| buffer.flush(c).map_err(sql_err))),
            None => Ok(()),
        }
    }

    /// `read` of a batched statement over `ids` (copied for `f`, which `read` needs to own).
    async fn read_ids<T, F>(&self, ids: &[Id], f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &[Id]) -> rusqlite::Result<T> + Send + 'static,
    {
        let ids = ids.to_vec();
        self.read(move |c| f(c, &ids)).await
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
            Some(s) => s.run_unguarded(f),
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
            // The write lock from the start: a deferred transaction that has read cannot wait
            // for it (SQLite answers `SQLITE_BUSY` at once to avoid a deadlock), and the
            // checkpoint thread takes it for a moment when it truncates a long WAL.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(internal)?;
            let out = f(&tx)?;
            store_query(STORE, "commit");
            tx.commit().map_err(internal)?;
            Ok(out)
        })
        .await
        .map_err(internal)?
    }
}

/// Runs a cached select and collects its rows (counted once under `op`): how almost every read
/// of the store goes.
fn select_rows<T, B: FromIterator<T>>(
    conn: &Connection,
    op: &'static str,
    sql: &str,
    p: impl rusqlite::Params,
    row: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<B> {
    store_query(STORE, op);
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(p, row)?;
    rows.collect()
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
}

/// A paged list (`list_containers`, `container_fields`, `list_edges`, `list_events`): the table,
/// the columns its rows are read with and their order, and the names its count and its page
/// are counted under in `tributary_store_queries_total`.
struct Listing {
    table: &'static str,
    cols: &'static str,
    order: &'static str,
    count_op: &'static str,
    list_op: &'static str,
}

/// One page of a list and the number of all its rows: those of `where_sql`, in which `?1`..`?N`
/// stand for `params`. Two statements: the count, then the page (its LIMIT and OFFSET bound as
/// `?N+1` and `?N+2`, so one cached statement serves every page).
fn select_page<T>(
    c: &Connection,
    list: &Listing,
    where_sql: &str,
    params: Vec<SqlValue>,
    page: PageRequest,
    row: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<Page<T>> {
    let Listing { table, cols, order, count_op, list_op } = list;
    store_query(STORE, count_op);
    let total: i64 = c.query_row(
        &format!("SELECT count(*) FROM {table} WHERE {where_sql}"),
        rusqlite::params_from_iter(&params),
        |r| r.get(0),
    )?;
    let (limit, offset) = (params.len() + 1, params.len() + 2);
    let sql = format!("SELECT {cols} FROM {table} WHERE {where_sql} ORDER BY {order} LIMIT ?{limit} OFFSET ?{offset}");
    let params = params.into_iter().chain([SqlValue::Integer(page.size), SqlValue::Integer(page.offset())]);
    let items = select_rows(c, list_op, &sql, rusqlite::params_from_iter(params), row)?;
    Ok(Page { items, total, page })
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
        self.write(move |tx| catalog::upsert_datastore(tx, input)).await
    }

    async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
        self.read_ids(ids, catalog::datastores_by_ids).await
    }

    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        self.read(catalog::list_datastores).await
    }

    async fn delete_datastore(&self, id: Id) -> StoreResult<bool> {
        self.write(move |tx| catalog::delete_datastore(tx, id)).await
    }

    async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        self.write(move |tx| catalog::upsert_container(tx, input)).await
    }

    async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>> {
        self.read_split(ids, catalog::containers_by_ids).await
    }

    async fn list_containers(
        &self,
        datastore_id: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Container>> {
        let name = name.map(|n| n.to_lowercase());
        self.read(move |c| catalog::list_containers(c, datastore_id, name, page)).await
    }

    async fn containers_by_names(&self, names: &[String], datastores: Option<&[Id]>) -> StoreResult<Vec<Container>> {
        if names.is_empty() || datastores.is_some_and(|d| d.is_empty()) {
            return Ok(Vec::new());
        }
        let (names, datastores) = (names.to_vec(), datastores.map(<[Id]>::to_vec));
        self.read(move |c| catalog::containers_by_names(c, &names, datastores.as_deref())).await
    }

    async fn search_containers(
        &self,
        needle: &str,
        datastores: Option<&[Id]>,
        limit: usize,
    ) -> StoreResult<Vec<Container>> {
        if datastores.is_some_and(|d| d.is_empty()) {
            return Ok(Vec::new());
        }
        let (needle, datastores) = (needle.to_string(), datastores.map(<[Id]>::to_vec));
        self.read(move |c| search::search_containers(c, &needle, datastores.as_deref(), limit)).await
    }

    async fn search_fields(&self, needle: &str, datastores: Option<&[Id]>, limit: usize) -> StoreResult<Vec<Field>> {
        if datastores.is_some_and(|d| d.is_empty()) {
            return Ok(Vec::new());
        }
        let (needle, datastores) = (needle.to_string(), datastores.map(<[Id]>::to_vec));
        self.read(move |c| search::search_fields(c, &needle, datastores.as_deref(), limit)).await
    }

    async fn search_externals(&self, needle: &str, limit: usize) -> StoreResult<Vec<(String, String)>> {
        let needle = needle.to_string();
        self.read(move |c| search::search_externals(c, &needle, limit)).await
    }

    async fn delete_container(&self, id: Id) -> StoreResult<bool> {
        self.write(move |tx| catalog::delete_container(tx, id)).await
    }

    async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        self.read_split(ids, catalog::fields_by_ids).await
    }

    async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        self.read_ids(ids, catalog::fields_of_containers).await
    }

    async fn field_names_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
        self.read_ids(ids, catalog::field_names_of_containers).await
    }

    async fn container_fields(
        &self,
        container_id: Id,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Field>> {
        let name = name.map(|n| n.to_lowercase());
        self.read(move |c| catalog::container_fields(c, container_id, name, page)).await
    }

    async fn delete_field(&self, id: Id) -> StoreResult<bool> {
        self.write(move |tx| catalog::delete_field(tx, id)).await
    }

    async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        self.read_ids(ids, graph::container_stats).await
    }

    async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
        self.read_ids(ids, graph::field_counts).await
    }

    async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        self.read_ids(ids, graph::fields_with_lineage).await
    }

    async fn create_edges(&self, edges: Vec<NewEdge>, skip_existing: bool, now: Timestamp) -> StoreResult<Vec<Edge>> {
        self.write(move |tx| edges::create_edges(tx, &edges, skip_existing, now)).await
    }

    async fn live_container_edge_exists(&self, source: Id, target: Id) -> StoreResult<bool> {
        self.read(move |c| graph::live_container_edge_exists(c, source, target)).await
    }

    async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
        self.write(move |tx| edges::update_edge(tx, id, patch)).await
    }

    async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()> {
        let ids = ids.to_vec();
        self.write(move |tx| edges::retire_edges(tx, &ids, now)).await
    }

    async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()> {
        let ids = ids.to_vec();
        self.write(move |tx| edges::delete_edges(tx, &ids)).await
    }

    async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        self.read_ids(ids, edges::edges_by_ids_tx).await
    }

    async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
        let filter = filter.clone();
        self.read(move |c| edges::list_edges(c, &filter, page)).await
    }

    async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        self.read_ids(ids, edges::edges_touching_containers).await
    }

    async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        self.read_ids(ids, edges::edges_touching_fields).await
    }

    async fn evidence_for_edges(&self, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>> {
        self.read_ids(edge_ids, edges::evidence_for_edges).await
    }

    async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()> {
        self.write(move |tx| edges::put_evidence_tx(tx, &evidence).map_err(sql_err)).await
    }

    async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        self.read_split(ids, move |c, ids| graph::container_edges_of(c, ids, direction)).await
    }

    async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
        let (sources, targets) = scope.unread();
        let (ids, known) = (scope.ids.clone(), scope.known_external_edges.clone());
        self.read(move |c| graph::container_graph_around(c, &ids, &known, &sources, &targets)).await
    }

    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        self.read_split(ids, move |c, ids| graph::field_edges_of(c, ids, direction)).await
    }

    async fn container_edges_live_at(
        &self,
        ids: &[Id],
        direction: Direction,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Edge>> {
        let at = at.to_vec();
        self.read_split(ids, move |c, ids| graph::container_edges_live_at(c, ids, direction, &at)).await
    }

    async fn field_edges_live_at(&self, ids: &[Id], direction: Direction, at: &[Timestamp]) -> StoreResult<Vec<Edge>> {
        let at = at.to_vec();
        self.read_split(ids, move |c, ids| graph::field_edges_live_at(c, ids, direction, &at)).await
    }

    async fn container_edges_within_at(
        &self,
        sources: &[Id],
        targets: &[Id],
        at: &[Timestamp],
    ) -> StoreResult<Vec<Edge>> {
        let (sources, targets, at) = (sources.to_vec(), targets.to_vec(), at.to_vec());
        self.read(move |c| graph::container_edges_within_at(c, &sources, &targets, &at)).await
    }

    async fn container_edge_flags_at(&self, scope: &GraphScope, at: Timestamp) -> StoreResult<(Vec<Id>, Vec<Id>)> {
        let (sources, targets) = scope.unread();
        let (ids, known) = (scope.ids.clone(), scope.known_external_edges.clone());
        self.read(move |c| graph::container_edge_flags_at(c, &ids, &known, &sources, &targets, at)).await
    }

    async fn first_edge_created(&self) -> StoreResult<Option<Timestamp>> {
        self.read(graph::first_edge_created).await
    }

    async fn count_neighbours(
        &self,
        ids: &[Id],
        direction: Direction,
        over_fields: bool,
        exclude: &[Id],
    ) -> StoreResult<Vec<(Id, i64)>> {
        let exclude = exclude.to_vec();
        self.read_ids(ids, move |c, ids| frontier::count_neighbours(c, ids, direction, over_fields, &exclude)).await
    }

    async fn apply_assertions(&self, batch: AssertionBatch, now: Timestamp) -> StoreResult<AssertionSummary> {
        self.write_unguarded(move |tx| assertions::apply_assertions(tx, batch, now)).await
    }

    async fn record_run(&self, record: RunRecord) -> StoreResult<()> {
        match &self.session {
            // Unguarded, as `write_unguarded`: a run's record fails only on the store's own
            // errors, and a savepoint cost a tenth of recording it. Its writes wait in the
            // session's buffer (see `jobs::JobsBuffer`).
            Some(s) => s.run_unguarded(|c| s.with_jobs(|buffer| jobs::record_run(c, buffer, &record))),
            None => {
                self.write(move |tx| {
                    let mut buffer = jobs::JobsBuffer::default();
                    jobs::record_run(tx, &mut buffer, &record)?;
                    buffer.flush(tx).map_err(sql_err)
                })
                .await
            }
        }
    }

    async fn jobs_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Job>> {
        self.flush_jobs()?;
        self.read_ids(ids, jobs::jobs_by_ids).await
    }

    async fn job_by_name(&self, namespace: &str, name: &str) -> StoreResult<Option<Job>> {
        self.flush_jobs()?;
        let (namespace, name) = (namespace.to_string(), name.to_string());
        self.read(move |c| jobs::job_by_name(c, &namespace, &name)).await
    }

    async fn list_jobs(&self, filter: &JobFilter, page: PageRequest) -> StoreResult<Page<Job>> {
        self.flush_jobs()?;
        let filter = filter.clone();
        self.read(move |c| jobs::list_jobs(c, &filter, page)).await
    }

    async fn child_jobs(&self, ids: &[Id]) -> StoreResult<Vec<Job>> {
        self.flush_jobs()?;
        self.read_ids(ids, jobs::child_jobs).await
    }

    async fn runs_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Run>> {
        self.flush_jobs()?;
        self.read_ids(ids, jobs::runs_by_ids).await
    }

    async fn runs_by_run_ids(&self, run_ids: &[String]) -> StoreResult<Vec<Run>> {
        self.flush_jobs()?;
        let run_ids = run_ids.to_vec();
        self.read(move |c| jobs::runs_by_run_ids(c, &run_ids)).await
    }

    async fn run_with_io(&self, run_id: &str) -> StoreResult<KnownRun> {
        if let Some(s) = &self.session {
            return s.run(|c| s.with_jobs(|buffer| buffer.known_run(c, run_id).map_err(sql_err)));
        }
        let run_id = run_id.to_string();
        self.read(move |c| jobs::run_with_io(c, &run_id)).await
    }

    async fn runs_of_job(&self, job_id: Id, filter: &RunFilter, page: PageRequest) -> StoreResult<Page<Run>> {
        self.flush_jobs()?;
        let filter = filter.clone();
        self.read(move |c| jobs::runs_of_job(c, job_id, &filter, page)).await
    }

    async fn child_runs(&self, run_ids: &[String]) -> StoreResult<Vec<Run>> {
        self.flush_jobs()?;
        let run_ids = run_ids.to_vec();
        self.read(move |c| jobs::child_runs(c, &run_ids)).await
    }

    async fn job_io(&self, job_ids: &[Id]) -> StoreResult<Vec<(Id, IoEntry)>> {
        self.flush_jobs()?;
        self.read_ids(job_ids, jobs::job_io).await
    }

    async fn run_io(&self, run_ids: &[Id]) -> StoreResult<Vec<(Id, IoEntry)>> {
        self.flush_jobs()?;
        self.read_ids(run_ids, jobs::run_io).await
    }

    async fn replace_io_ends(&self, from: &[End], to: &End, change: Option<NewChange>) -> StoreResult<u64> {
        self.flush_jobs()?;
        let (from, to) = (from.to_vec(), to.clone());
        self.write(move |tx| {
            let mut n = 0;
            for f in &from {
                n += jobs::replace_io_end(tx, f, &to).map_err(sql_err)?;
            }
            if let Some(change) = &change {
                changes::record(tx, std::slice::from_ref(change))?;
            }
            Ok(n)
        })
        .await
    }

    async fn external_placeholders(
        &self,
        needle: &str,
        source_type: &str,
    ) -> StoreResult<Vec<(String, String, String)>> {
        self.flush_jobs()?;
        let (needle, source_type) = (needle.to_string(), source_type.to_string());
        self.read(move |c| jobs::external_placeholders(c, &needle, &source_type)).await
    }

    async fn jobs_of_ends(&self, ends: &[End]) -> StoreResult<Vec<(Id, IoEntry)>> {
        self.flush_jobs()?;
        let ends = ends.to_vec();
        self.read(move |c| jobs::jobs_of_ends(c, &ends)).await
    }

    async fn failed_latest_runs(
        &self,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        limit: i64,
    ) -> StoreResult<Vec<Run>> {
        self.flush_jobs()?;
        self.read(move |c| jobs::failed_latest_runs(c, since, until, limit)).await
    }

    async fn latest_runs_at(&self, job_ids: &[Id], at: Timestamp) -> StoreResult<Vec<Run>> {
        self.flush_jobs()?;
        self.read_ids(job_ids, move |c, ids| jobs_asof::latest_runs_at(c, ids, &at)).await
    }

    async fn failed_latest_runs_at(&self, at: Timestamp, limit: i64) -> StoreResult<Vec<Run>> {
        self.flush_jobs()?;
        self.read(move |c| jobs_asof::failed_latest_runs_at(c, &at, limit)).await
    }

    async fn put_doc(&self, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
        let (kind, key) = (kind.to_string(), key.to_string());
        self.write(move |tx| identity::put_doc(tx, &kind, &key, value)).await
    }

    async fn get_doc(&self, kind: &str, key: &str) -> StoreResult<Option<serde_json::Value>> {
        let (kind, key) = (kind.to_string(), key.to_string());
        self.read(move |c| identity::get_doc(c, &kind, &key)).await
    }

    async fn list_docs(&self, kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
        let kind = kind.to_string();
        self.read(move |c| identity::list_docs(c, &kind)).await
    }

    async fn put_metadata(&self, rows: Vec<crate::domain::MetadataAssertion>) -> StoreResult<()> {
        self.write(move |tx| assertions::put_metadata_tx(tx, &rows).map_err(sql_err)).await
    }

    async fn metadata_for_container(&self, container_id: Id) -> StoreResult<Vec<crate::domain::MetadataAssertion>> {
        self.read(move |c| assertions::metadata_for_container(c, container_id)).await
    }

    async fn container_metadata_of(&self, ids: &[Id]) -> StoreResult<Vec<crate::domain::MetadataAssertion>> {
        self.read_ids(ids, assertions::container_metadata_of).await
    }

    async fn next_operation_id(&self) -> StoreResult<Id> {
        let now = ts(&crate::domain::now());
        self.write(move |tx| assertions::next_operation_id(tx, &now)).await
    }

    async fn evidence_by_keys(&self, keys: &[String]) -> StoreResult<Vec<Evidence>> {
        let keys = keys.to_vec();
        self.read(move |c| assertions::evidence_by_keys(c, &keys)).await
    }

    async fn live_evidence_of_key(&self, key: &str) -> StoreResult<Vec<PriorEvidence>> {
        let key = key.to_string();
        self.read(move |c| assertions::live_evidence_of_key(c, &key)).await
    }

    async fn live_edges_touching_ends(&self, ends: &[End], source_type: &str) -> StoreResult<Vec<Edge>> {
        let (ends, source_type) = (ends.to_vec(), source_type.to_string());
        self.read(move |c| assertions::live_edges_touching_ends(c, &ends, &source_type)).await
    }

    async fn insert_event(&self, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
        self.insert_events(vec![event]).await?.pop().ok_or_else(|| internal("storing one event returned none"))
    }

    async fn insert_events(&self, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
        self.write(move |tx| events::insert_events(tx, events)).await
    }

    async fn finish_events(&self, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
        self.write(move |tx| events::finish_events(tx, outcomes)).await
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
        self.read(move |c| events::run_event_states(c, &run_id)).await
    }

    async fn list_events(&self, filter: &EventFilter, page: PageRequest) -> StoreResult<Page<StoredEvent>> {
        let filter = filter.clone();
        self.read(move |c| events::list_events(c, &filter, page)).await
    }

    async fn events_after(&self, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
        self.read(move |c| events::events_after(c, after, limit)).await
    }

    async fn events_by_event_time(
        &self,
        window: &crate::domain::EventTimeWindow,
    ) -> StoreResult<(Vec<StoredEvent>, i64)> {
        let window = window.clone();
        self.read(move |c| events::events_by_event_time(c, &window)).await
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        self.write(move |tx| events::purge_events(tx, before)).await
    }

    async fn changes_after(&self, after: Id, first: i64, container_id: Option<Id>) -> StoreResult<Vec<Change>> {
        self.read(move |c| changes::changes_after(c, after, first, container_id)).await
    }

    async fn latest_change_position(&self) -> StoreResult<Id> {
        self.read(changes::latest_position).await
    }

    async fn purge_changes(&self, before: Timestamp) -> StoreResult<u64> {
        self.write(move |tx| changes::purge(tx, before)).await
    }

    async fn export(&self) -> StoreResult<Vec<Record>> {
        self.read(transfer::export).await
    }

    async fn import(&self, records: Vec<Record>) -> StoreResult<usize> {
        self.write(move |tx| transfer::import(tx, [records])).await
    }

    async fn import_chunks(&self, mut chunks: RecordChunks) -> StoreResult<usize> {
        // One transaction, as `import`: the writer thread waits for each chunk.
        self.write(move |tx| transfer::import(tx, std::iter::from_fn(|| chunks.blocking_recv()))).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ContainerInput, DatastoreInput};
    use crate::store::Store;

    /// Another connection holding the write lock for a moment (the checkpoint thread truncating
    /// a long WAL does) makes a write wait, not fail: here one that reads before it writes,
    /// which a deferred transaction could not wait for.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_waits_for_a_brief_holder_of_the_write_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).unwrap();
        let ds = store
            .upsert_datastore(DatastoreInput { name: "wh".into(), kind: "snowflake".into(), ..Default::default() })
            .await
            .unwrap();
        let other = Connection::open(dir.path().join("tributary.db")).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let holder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            other.execute_batch("COMMIT").unwrap();
        });
        let input = ContainerInput { datastore_id: ds.id, name: "orders".into(), ..Default::default() };
        let written = store.upsert_container(input).await;
        holder.join().unwrap();
        let (container, _) = written.expect("the write waited for the lock instead of failing");
        assert_eq!(store.containers_by_ids(&[container.id]).await.unwrap()[0].name, "orders");
    }
}
