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
//! `graph` (traversal reads), `adjacency` (the edge lists traversal levels keep in memory
//! between commits), `assertions` (provider batches, metadata), `events` (the event log),
//! `changes` (the change log), `jobs` (jobs and runs), `identity` (small documents), `transfer`
//! (export and import), `session` (the session transaction and the WAL checkpointer), `migrations` (the
//! schema version, checked and moved forward at open) and `backup` (`tributary backup`). Here:
//! the store and its connections, how a call runs (`read`, `write`, `write_unguarded`), the
//! statement helpers the concerns share (`select_rows`, `select_page`), and the `Store` impl,
//! each method a short dispatch.
//!
//! # How it fits
//!
//! is the default, embedded store: SQLite bundled through rusqlite, in `<data-dir>/tributary.db`. `store/sqlite.rs`
//! holds the store, how a call runs (`read` on one of four reader connections on the calling thread, `write` one
//! transaction on the writer via the blocking pool, `write_unguarded` without a savepoint in a session), the shared
//! `select_rows` and `select_page` (every paged list: a WHERE of only the filters given, a count, a cached page
//! statement), and the one `impl Store`, whose methods dispatch to the concern files: `schema.rs` (tables and indexes),
//! `rows.rs` (row mapping, `rarray` parameters), `catalog.rs`, `edges.rs`, `graph.rs`, `assertions.rs`, `events.rs`,
//! `identity.rs`, `transfer.rs`, `migrations.rs` (the schema version, see *Schema versions* below), `backup.rs`
//! (`tributary backup`: SQLite's online backup API inside one read transaction, so the copy is one snapshot while
//! `serve` writes; written to `FILE.partial` and renamed when whole), and `session.rs` (the request-long write
//! transaction and the checkpoint thread).
//! - There is one writer connection behind a mutex, as SQLite has one writer anyway, and four reader connections, so
//!   reads never wait on writes. A read runs right on the calling task's worker thread: a hop to the blocking pool and
//!   back costs two thread wake-ups, and `block_in_place` ~13 µs to hand the worker over, more than most statements
//!   here (a long read holds its worker while it runs; the other workers go on). A write outside a session runs on the
//!   blocking pool. The OpenLineage ingest yields between events, as its session's calls never do.
//! - Every write, and a session for its whole life, takes the writer gate (a tokio mutex), so a session's open
//!   transaction on the writer sees no other write slip in between its calls. A session's calls run on the calling
//!   thread; a committed session frees the gate at once, a dropped one rolls back.
//! - Batched reads pass the ids as one `rarray` parameter. The ingest's reads, the traversal's levels and the loaders'
//!   reads by id join it (`FROM rarray(?1) AS k CROSS JOIN edges ON edges.ukey = k.value`) rather than test `IN
//!   rarray(?1)`, which SQLite answers by copying the array into a temporary b-tree first. Counts per container
//!   (`field_counts`, `container_stats`) count each container's index range in a correlated subquery: a `GROUP BY`
//!   sorted every field first. A batched read over many ids (a traversal level's edges, `containers_by_ids`,
//!   `fields_by_ids`; from 128 ids) runs as two statements side by side, the second on another reader from the blocking
//!   pool (`read_split`): one graph query then uses both cores. The halves of the sorted ids give the rows back in one
//!   statement's order; a level's two halves may read two snapshots, as a traversal's levels always have; the statement
//!   counter counts the read once. Every connection keeps temporary storage (sorts, `IN` lists, a session's savepoint
//!   journal) in memory. The writer's page cache is 32 MiB, each reader's 8 MiB: a reader's cache is emptied after
//!   every commit of another connection, so it stays small enough to refill.
//! - A job's prior lineage for the OpenLineage ingest (`live_evidence_of_key`) is one join of its live evidence and
//!   their edges' ends, with the two run ids taken out of the details in SQL (`PriorEvidence`); the resolver reads
//!   column names from the `fields_key` index alone (`field_names_of_containers`).
//! - Every connection registers `unicode_lower` (Rust's `to_lowercase`), used by the name searches and by the
//!   expression index `containers_name_lc` behind `containers_by_names`, so the two stores fold non-ASCII case alike
//!   (SQLite's own `lower` folds ASCII only). The sqlite3 shell, which lacks the function, can read the file but not
//!   write containers.
//! - Edge uniqueness is enforced by a `ukey` column (`source|target|sourceType`). Live intervals are kept as JSON on
//!   the edge row. Events, metadata and documents have their own tables.
//! - The tables an ingest writes carry only the indexes a read needs, since every row written costs one b-tree insert
//!   per index (schema version 3): `evidence` and `metadata` are `WITHOUT ROWID` tables keyed by their primary keys
//!   (the row lives in the key's b-tree: one b-tree fewer per row, and an update by key finds the row there); `edges`
//!   keeps the unique `ukey`, the two ends' indexes (`edges_source_ends`, `edges_target_ends`, which the traversals
//!   read) and `edges_source_type`, but no index on its ends' containers: the edges touching a container (deleting a
//!   container or datastore) are found through the ends' indexes and `fields_container` (every field of a container,
//!   deleted ones included). A new field edge from OpenLineage writes 11 b-trees where it wrote 14 (the edge with its
//!   indexes, its change, its evidence with `evidence_key`).
//!
//! # Durability
//!
//! The store uses SQLite in WAL mode with `synchronous=NORMAL`. A committed transaction survives a `kill -9` of the
//! process. An OS crash or power cut may lose the last few commits, but never corrupts the database. `synchronous=FULL`
//! would survive those too, at the cost of an fsync per commit. We chose the contract's promise (kill -9) over write
//! latency. Reads go through a memory map of the whole file (`mmap_size` 64 GiB; `.cargo/config.toml` raises SQLite's
//! compile-time cap of 2 GiB), as every commit empties the other connections' page caches; only the writer keeps a
//! large page cache (32 MiB). Checkpoints run on a thread of their own (a passive checkpoint every second, on its own
//! connection), so no commit waits for one; the writer's own checkpoint at 50,000 WAL pages is only a backstop. A
//! passive checkpoint never shortens the file, so once a WAL longer than 64 MiB (what one huge transaction, a bulk
//! import, leaves) is wholly copied back, the same thread truncates it when no writer holds the lock (it never waits
//! for one); otherwise the next writer's commit would shrink it to that length (`journal_size_limit`) itself, which
//! cost the first ingest request after an xlarge import 2 s (docs/benchmarks-history.md, issue #22, third stop).

mod adjacency;
mod assertions;
mod backup;
mod calls;
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

use self::calls::*;

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
    /// The edge lists traversal levels read, kept between reads until a commit (`adjacency`).
    adjacency: Arc<adjacency::Adjacency>,
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
            adjacency: self.adjacency.clone(),
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

    async fn container_names_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<(Id, String)>> {
        self.read_split(ids, catalog::container_names_by_ids).await
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

    async fn field_names_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
        self.read_split(ids, catalog::field_names_by_ids).await
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
        self.level_edges(ids, adjacency::Lists::containers(direction), None).await
    }

    async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
        let (sources, targets) = scope.unread();
        let (ids, known) = (scope.ids.clone(), scope.known_external_edges.clone());
        self.read(move |c| graph::container_graph_around(c, &ids, &known, &sources, &targets)).await
    }

    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        self.level_edges(ids, adjacency::Lists::fields(direction), None).await
    }

    async fn container_edges_live_at(
        &self,
        ids: &[Id],
        direction: Direction,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Edge>> {
        self.level_edges(ids, adjacency::Lists::containers(direction), Some(at.to_vec())).await
    }

    async fn field_edges_live_at(&self, ids: &[Id], direction: Direction, at: &[Timestamp]) -> StoreResult<Vec<Edge>> {
        self.level_edges(ids, adjacency::Lists::fields(direction), Some(at.to_vec())).await
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
        Ok(self.apply_assertions_with_ids(batch, now).await?.0)
    }

    async fn apply_assertions_with_ids(
        &self,
        batch: AssertionBatch,
        now: Timestamp,
    ) -> StoreResult<(AssertionSummary, Vec<Id>)> {
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

    async fn live_evidence_of_keys(&self, keys: &[String]) -> StoreResult<Vec<PriorEvidence>> {
        let keys = keys.to_vec();
        self.read(move |c| assertions::live_evidence_of_keys(c, &keys)).await
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

    async fn runs_event_states(&self, run_ids: &[String]) -> StoreResult<Vec<(String, Id, String, Option<String>)>> {
        let run_ids = run_ids.to_vec();
        self.read(move |c| {
            let mut out = Vec::new();
            for run_id in run_ids {
                let states = events::run_event_states(c, &run_id)?;
                out.extend(states.into_iter().map(|(id, status, t)| (run_id.clone(), id, status, t)));
            }
            Ok(out)
        })
        .await
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
