//! The Neo4j store: the `Store` trait over a Neo4j 5 database through `neo4rs`.
//!
//! Model (see `cypher/` for every statement, one per file, loaded with `include_str!`):
//! - nodes `:Datastore`, `:Container`, `:Field`, `:External {fqn}`, `:Evidence {edge_id, key}`,
//!   `:Event` (the event log, unique by `id` and `fingerprint`; JSON values as text),
//!   `:Metadata {container_id, field_id, attribute, source}` (one source's value of an asset's
//!   attribute, unique by those four, `field_id` 0 for the container's own; not linked to the
//!   container node, and kept when the container is deleted, as in the embedded store),
//!   `:Change {position, ...}` (the change log, see `changes`) and `:Counter {name, value}` (one
//!   id counter per kind, from which each process reserves blocks of ids in short transactions of
//!   their own, so several service replicas never hand out the same id: see `ids`);
//! - one `:LINEAGE` relationship per edge, between its two end nodes, so one lineage hop is one
//!   relationship hop. It carries the edge's attributes plus `ukey` (source key, target key and
//!   source type: the uniqueness constraint) and, per end, `*_kind`, `*_id`, `*_container_id`,
//!   `*_fqn`, so an edge reads back from the relationship alone;
//! - `:Job {id, namespace, name, ...}` and `:Run {id, run_id, job_id, state, states, ...}` (see
//!   `jobs`), ids from the `job` and `run` counters;
//! - relationships for people and Cypher, beside the id properties the reads use:
//!   `(:Datastore)-[:CONTAINS]->(:Container)-[:HAS_FIELD]->(:Field)`, `(:Job)-[:HAS_RUN]->(:Run)`,
//!   a run's and a job's datasets (`READ`/`WROTE`, `READS`/`WRITES`), `CHILD_OF` between jobs and
//!   between runs, `(:Evidence)-[:ASSERTED_BY]->(:Run|Job)`;
//! - deleting a container or field is a soft delete (`deleted = true`, `key` removed so the name
//!   can be reused): its relationships stay, so retired edges keep their ends. Deleted nodes are
//!   never returned by catalog reads, stats or traversal.
//!
//! Every statement sent counts once in `tributary_store_queries_total{store="neo4j"}` under the
//! name of its file. Reads of many ids are one statement (`UNWIND $ids`), writes of many rows one
//! statement per batch (`UNWIND $rows`). Each write runs in one explicit transaction
//! (`Graph::start_txn`), committed at the end and rolled back on any error; the batched reads a
//! query makes (traversal, catalog by ids, stats) are auto-commit queries, two round trips fewer.
//! `import` is the exception: it commits every `IMPORT_TX_ROWS` rows (see `transfer`). On a
//! session view (`Store::session`, see `session`) every call, reads included, runs in the
//! session's one transaction instead.
//!
//! Layout, one file per concern, as in the embedded store's folder: this file holds the store,
//! the statement plumbing (`Cmd`, `Rows`, the three ways a statement runs: see [`Run`]), the id
//! counters and the one `impl Store`, whose methods only say how they run and call the concern
//! file that holds their Cypher and row handling: `schema`, `rows`, `catalog`, `edges`, `graph`,
//! `assertions`, `events`, `changes`, `identity`, `jobs`, `transfer`, `session`, `ids`; `migrations` checks and moves
//! forward the schema version at connect.
//!
//! # How it fits
//!
//! is the Neo4j store: neo4rs 0.8 over `bolt://` (a vendored copy that sets `TCP_NODELAY` on its sockets,
//! `vendor/neo4rs/PATCHED.md`: without it a statement whose message passed 8 KiB waited 40 ms on Nagle's algorithm),
//! one Cypher statement per file in `cypher/`, loaded with `include_str!`. `store/neo4j.rs` holds the store, the
//! statement plumbing and the one `impl Store`; the concern files beside it have the embedded store's names (`schema`,
//! `rows`, `catalog`, `edges`, `graph`, `assertions`, `events`, `identity`, `jobs`, `transfer`). A concern function
//! takes a `Run` saying where its statements go: the caller's transaction (`&mut Txn`, inside `write_txn!`), one
//! transaction per statement (`OwnTxn`), or an auto-commit read (`AutoCommit`, two round trips fewer); the `impl Store`
//! picks one per method.
//! - Every statement and transaction runs to its end in its own task (`detached`), even when its caller stops waiting
//!   (a client gone, the store's time limit), so a Neo4j write, like an embedded one, may still commit after its caller
//!   gave up. neo4rs 0.8 returns a connection dropped mid-exchange to its pool with the reply unread; its recycling
//!   RESET takes a lone pending SUCCESS for its own answer, and every later exchange on that connection then reads the
//!   reply before its own: a read answers no rows. That was the change feed's empty page right after a subscriber went
//!   away (issue #33); `calls_dropped_mid_statement_leave_later_reads_whole` (tests/integration/changes.rs) drops
//!   writes and reads at every point of their exchange.
//! - Every write transaction (`write_txn!`, `OwnTxn`) runs again as a whole when Neo4j fails it with a
//!   `Neo.TransientError.*` (a deadlock between two writers, a leader switch): at most 8 more runs, waits doubling from
//!   20 ms to 1 s with jitter, 5 s of waiting in all (`neo4j/retry.rs`, on `backon`), each counted in
//!   `tributary_store_retries_total{store,code}`. `Transaction.Terminated` and `LockClientStopped` are not retried, nor
//!   is anything else: an unreachable server answers `Unavailable` at once. `import` is not retried; it undoes itself.
//! - Nodes have the labels `Datastore`, `Container`, `Field`, `External`, `Evidence`, `Event`, `Metadata`, `Doc`,
//!   `Counter`, `Job` and `Run`. Relationships make the graph navigable in Neo4j Browser:
//!   `(:Datastore)-[:CONTAINS]->(:Container)-[:HAS_FIELD]->(:Field)` (made where containers and fields are created or
//!   imported), `(:Job)-[:HAS_RUN]->(:Run)`, `(:Run)-[:READ|WROTE]->(x)` and `(:Job)-[:READS|WRITES]->(x)` (x a
//!   `Container` or `External`, each carrying its `end_key`, names and times), `CHILD_OF` between jobs and between
//!   runs, `(:Evidence)-[:ASSERTED_BY]->(:Run|Job)`. The reads keep seeking the id properties (`datastore_id`,
//!   `container_id`, `job_id`, `parent_id`, ...) and their indexes; the relationships are for people and Cypher
//!   (README's "Query the graph with Cypher", run by a test). `record_run` (`neo4j/jobs.rs`) costs at most eight
//!   statements: a lookup that locks the job's and run's keys, an id block when something is new, jobs, run, the two
//!   dataset `UNWIND`s, the completed writes of a COMPLETE run, and the evidence tie; the merge itself is
//!   `domain::jobs`'s, in Rust, as on SQLite.
//! - Each lineage edge is one `:LINEAGE` relationship, so one hop of lineage is one hop of traversal. The relationship
//!   carries the edge's id, `ukey`, `source_type`, `retired_at` and intervals.
//! - The batched reads a query makes (traversal, catalog by ids, stats) are auto-commit queries, as is an OpenLineage
//!   job's prior lineage (`live_evidence_of_key.cypher`: its live evidence and the edges they back in one read); every
//!   write runs in one explicit transaction. `import` is the exception: it commits every 10,000 rows, as Neo4j bounds a
//!   transaction's memory, and deletes what it wrote if a later part fails.
//! - Writes send `UNWIND $rows` batches, never one statement per row. Values always travel as `$params`.
//!   `apply_assertions` (`neo4j/assertions.rs`) costs at most ten statements whatever the batch, and write-locks the
//!   edges it names, so batches naming the same edge serialize.
//! - Constraints and indexes are created at start-up with `CREATE ... IF NOT EXISTS`, which is idempotent, after the
//!   schema version is checked and migrated (`neo4j/migrations.rs`).
//! - A container's `name_lc` property is its name lowercased by the service, written with the node and indexed
//!   (`container_name_lc`) for `containers_by_names` and the name search; nodes written before it existed get it at
//!   start-up (`backfill_container_name_lc`).
//!
//! Replicas, clusters and routing: `store/neo4j/ids.rs`'s doc ("Replicas and clusters").

use std::collections::{BTreeSet, HashMap};
use std::future::Future;

use async_trait::async_trait;
use neo4rs::{BoltType, ConfigBuilder, Graph, Query, Row, Txn};
use serde::de::DeserializeOwned;

use self::rows::{micros, Decode};
use super::{GraphAround, GraphScope, PriorEvidence, Record, RecordChunks, Store, StoreError, StoreResult};
use crate::domain::{
    AssertionBatch, AssertionSummary, Change, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput,
    Direction, Edge, EdgeFilter, EdgePatch, End, EventFilter, EventOutcome, Evidence, Field, Id, IoEntry, Job,
    JobFilter, MetadataAssertion, NewEdge, Page, PageRequest, Run as JobRun, RunFilter, RunRecord, StoredEvent,
    Timestamp,
};
use crate::metrics;

pub use self::migrations::SCHEMA_VERSION;

const KIND: &str = "neo4j";

/// The message of the `Conflict` raised when an edge's (source, target, sourceType) is taken.
pub const EDGE_EXISTS: &str = "A lineage edge with the same source and target already exists";

/// Neo4j's code for a violated uniqueness constraint.
const CONSTRAINT_VIOLATION: &str = "Neo.ClientError.Schema.ConstraintValidationFailed";

const DATASTORE_COUNTER: &str = "datastore";
const CONTAINER_COUNTER: &str = "container";
const FIELD_COUNTER: &str = "field";
const EDGE_COUNTER: &str = "edge";
const EVENT_COUNTER: &str = "event";
const OPERATION_COUNTER: &str = "operation";

/// The statement of `cypher/<name>.cypher` for a literal `<name>`, checked to exist at compile
/// time. Tests collect the names passed to this macro and compare them with the directory.
macro_rules! cypher {
    ($name:literal) => {
        Cmd::new($name, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/cypher/", $name, ".cypher")))
    };
}

/// Runs `$body` (a future using `$txn: &mut Tx`, see [`tx`]) in one explicit transaction of `$store`:
/// committed when it succeeds, rolled back when it fails, and run again as a whole when Neo4j
/// failed it with a transient error, such as a deadlock between two writers (see [`retry`]). So
/// `$body` may run more than once, each time on a fresh transaction, and must not consume what
/// it captures. A macro rather than a function taking an async closure: the futures such a
/// closure returns borrow it, and `async_trait` cannot prove those `Send` for every lifetime.
///
/// The transaction runs to its end in its own task (see [`detached`]) even when the caller stops
/// waiting, so `$body` takes what it captures by value (`'static`): a write dropped mid-exchange
/// returned its connection to the pool one reply behind, and the next statement on it read an
/// empty answer as its own (issue #33).
///
/// On a session view (see [`session`]) `$body` runs once in the session's transaction instead,
/// its metadata values and change-log entries wait for the session's end, and its failure fails
/// the session.
macro_rules! write_txn {
    ($store:expr, |$txn:ident| $body:expr) => {{
        let store = $store.clone();
        $crate::store::neo4j::detached(async move {
            if let Some(session) = store.session.clone() {
                let mut inner = session.lock().await;
                let mut deferred = $crate::store::neo4j::tx::Deferred::default();
                let result = match $crate::store::neo4j::session::open_for_write(&mut inner).await {
                    Ok(txn) => {
                        let $txn = &mut $crate::store::neo4j::tx::Tx::deferring(txn, session.ids(), &mut deferred);
                        $body.await
                    }
                    Err(e) => Err(e),
                };
                inner.deferred.append(deferred);
                return $crate::store::neo4j::session::settle(&mut inner, result);
            }
            $crate::store::neo4j::retry::transient(|| async {
                let mut txn = store.begin().await?;
                let result = {
                    let $txn = &mut $crate::store::neo4j::tx::Tx::new(&mut txn, &store.ids);
                    $body.await
                };
                $crate::store::neo4j::finish(txn, result).await
            })
            .await
        })
        .await
    }};
}

// Declared after `cypher!`, which they use (a `macro_rules!` macro is visible below its
// definition only).
mod assertions;
mod catalog;
mod changes;
mod edges;
mod events;
mod frontier;
mod graph;
mod identity;
mod ids;
mod jobs;
mod jobs_asof;
mod migrations;
mod overlay;
mod retry;
mod rows;
mod schema;
mod search;
mod session;
mod statements;
mod transfer;
mod tx;

use self::statements::*;

#[derive(Clone)]
pub struct Neo4jStore {
    graph: Graph,
    /// `host:port` of the server, to tell a refused connection at once (`refused`).
    address: std::sync::Arc<str>,
    /// Set on the view `Store::session` returns: every call runs in its transaction.
    session: Option<std::sync::Arc<session::Session>>,
    /// Held by a session for its life: this process's sessions run one at a time.
    gate: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Where writes take new ids (see `ids`), shared by every view of the store.
    ids: std::sync::Arc<ids::Ids>,
}

impl Neo4jStore {
    /// Connects (a pool of at most 16 connections, and one more for reserving ids), checks and
    /// migrates the schema version (`migrations`), and creates the constraints and indexes the
    /// queries use, idempotently.
    /// `database` defaults to the server's default database.
    pub async fn connect(uri: &str, user: &str, password: &str, database: Option<&str>) -> StoreResult<Self> {
        let pool = |connections: usize| async move {
            let mut builder = ConfigBuilder::default()
                .uri(uri)
                .user(user)
                .password(password)
                .max_connections(connections)
                .fetch_size(500);
            if let Some(database) = database {
                builder = builder.db(database);
            }
            let config = builder.build().map_err(|e| db_error("connect", e))?;
            Graph::connect(config).await.map_err(|e| db_error("connect", e))
        };
        let graph = pool(16).await?;
        // Reserving ids takes a connection of its own (see `ids::Ids`).
        let ids = std::sync::Arc::new(ids::Ids::new(pool(1).await?));
        let store =
            Neo4jStore { graph, address: bolt_address(uri).into(), session: None, gate: Default::default(), ids };
        migrations::open_schema(&store).await?;
        // Idempotent: creates and backfills the change log on a store made before it existed.
        schema::migrate_change_log(&store).await?;
        Ok(store)
    }

    /// Deletes every relationship and node (constraints and indexes stay), 10,000 at a time, each
    /// batch in its own transaction so the transaction memory stays bounded whatever the size of
    /// the graph. For tests and operators; not part of the `Store` trait. The id counters go too,
    /// so ids start again from 1: this store forgets the ids it held, and another process that
    /// holds some must not write to the wiped database (it would hand them out again).
    pub async fn wipe(&self) -> StoreResult<()> {
        self.ids.forget().await;
        transfer::wipe(OwnTxn(self)).await
    }

    /// `write_txn!` without the retry, for `import`, whose transactions consume their rows as they
    /// go and which undoes what it wrote itself when a later part fails.
    async fn write_once<T>(&self, work: impl AsyncFnOnce(&mut Txn) -> StoreResult<T>) -> StoreResult<T> {
        let mut txn = self.begin().await?;
        let result = work(&mut txn).await;
        finish(txn, result).await
    }

    async fn begin(&self) -> StoreResult<Txn> {
        self.graph.start_txn().await.map_err(|e| db_error("begin", e))
    }
}

/// Each method says how its statements run (`write`: one transaction for them all; `OwnTxn`:
/// each in its own; `AutoCommit`: auto-commit reads) and hands over to its concern file.
#[async_trait]
impl Store for Neo4jStore {
    fn kind(&self) -> &'static str {
        KIND
    }

    async fn session(&self) -> StoreResult<Option<std::sync::Arc<dyn Store>>> {
        if self.session.is_some() {
            return Ok(None);
        }
        // One session at a time in this process (see `session::Inner::gate`).
        let gate = self.gate.clone().lock_owned().await;
        let txn = self.begin().await?;
        let view = Neo4jStore {
            session: Some(std::sync::Arc::new(session::Session::new(txn, gate, self.ids.clone()))),
            ..self.clone()
        };
        Ok(Some(std::sync::Arc::new(view)))
    }

    fn session_conflicts(&self) -> bool {
        true
    }

    async fn ping(&self) -> StoreResult<()> {
        OwnTxn(self).run(cypher!("ping")).await.map(|_| ())
    }

    async fn commit_session(&self) -> StoreResult<()> {
        match &self.session {
            Some(session) => session.clone().commit().await,
            None => Ok(()),
        }
    }

    // ---- catalog ----

    async fn upsert_datastore(&self, input: DatastoreInput) -> StoreResult<Datastore> {
        self.writes(session::Beside::Catalog);
        write_txn!(self, |txn| catalog::upsert_datastore_in(txn, input.clone()))
    }

    async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
        catalog::datastores_by_ids(AutoCommit(self), ids).await
    }

    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        catalog::list_datastores(OwnTxn(self)).await
    }

    async fn delete_datastore(&self, id: Id) -> StoreResult<bool> {
        self.writes(session::Beside::Catalog);
        write_txn!(self, |txn| catalog::delete_datastore_in(txn, id))
    }

    async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        self.writes(session::Beside::Catalog);
        write_txn!(self, |txn| catalog::upsert_container_in(txn, input.clone()))
    }

    async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>> {
        catalog::containers_by_ids(AutoCommit(self), ids).await
    }

    async fn container_names_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<(Id, String)>> {
        catalog::container_names_by_ids(AutoCommit(self), ids).await
    }

    async fn list_containers(
        &self,
        datastore_id: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Container>> {
        catalog::list_containers(OwnTxn(self), datastore_id, name, page).await
    }

    async fn containers_by_names(&self, names: &[String], datastores: Option<&[Id]>) -> StoreResult<Vec<Container>> {
        if self.beside(session::Beside::Catalog) {
            return catalog::containers_by_names(Pool(self), names, datastores).await;
        }
        catalog::containers_by_names(AutoCommit(self), names, datastores).await
    }

    async fn search_containers(
        &self,
        needle: &str,
        datastores: Option<&[Id]>,
        limit: usize,
    ) -> StoreResult<Vec<Container>> {
        search::search_containers(AutoCommit(self), needle, datastores, limit).await
    }

    async fn search_fields(&self, needle: &str, datastores: Option<&[Id]>, limit: usize) -> StoreResult<Vec<Field>> {
        search::search_fields(AutoCommit(self), needle, datastores, limit).await
    }

    async fn search_externals(&self, needle: &str, limit: usize) -> StoreResult<Vec<(String, String)>> {
        search::search_externals(AutoCommit(self), needle, limit).await
    }

    async fn delete_container(&self, id: Id) -> StoreResult<bool> {
        self.writes(session::Beside::Catalog);
        write_txn!(self, |txn| catalog::delete_container_in(txn, id))
    }

    async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        catalog::fields_by_ids(AutoCommit(self), ids).await
    }

    async fn field_names_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
        catalog::field_names_by_ids(AutoCommit(self), ids).await
    }

    async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        if self.beside(session::Beside::Catalog) {
            return catalog::fields_of_containers(Pool(self), ids).await;
        }
        catalog::fields_of_containers(AutoCommit(self), ids).await
    }

    async fn container_fields(
        &self,
        container_id: Id,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Field>> {
        catalog::container_fields(OwnTxn(self), container_id, name, page).await
    }

    async fn delete_field(&self, id: Id) -> StoreResult<bool> {
        self.writes(session::Beside::Catalog);
        write_txn!(self, |txn| catalog::delete_field_in(txn, id))
    }

    async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        graph::container_stats(AutoCommit(self), ids).await
    }

    async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
        graph::field_counts(AutoCommit(self), ids).await
    }

    async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        graph::fields_with_lineage(AutoCommit(self), ids).await
    }

    // ---- edges ----

    async fn create_edges(&self, edges: Vec<NewEdge>, skip_existing: bool, now: Timestamp) -> StoreResult<Vec<Edge>> {
        if edges.is_empty() {
            return Ok(Vec::new());
        }
        write_txn!(self, |txn| edges::create_edges_in(txn, edges.clone(), skip_existing, micros(now)))
            .map_err(edges::edge_conflict)
    }

    async fn live_container_edge_exists(&self, source: Id, target: Id) -> StoreResult<bool> {
        graph::live_container_edge_exists(OwnTxn(self), source, target).await
    }

    async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
        write_txn!(self, |txn| edges::update_edge_in(txn, id, patch.clone())).map_err(edges::edge_conflict)
    }

    async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let ids = distinct(ids);
        write_txn!(self, |txn| edges::retire_edges_in(txn, ids.clone(), micros(now)))
    }

    async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let ids = distinct(ids);
        write_txn!(self, |txn| edges::delete_edges_in(txn, ids.clone()))
    }

    async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        edges::edges_by_ids(AutoCommit(self), ids).await
    }

    async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
        edges::list_edges(OwnTxn(self), filter, page).await
    }

    async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        edges::edges_touching_containers(OwnTxn(self), ids).await
    }

    async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        edges::edges_touching_fields(OwnTxn(self), ids).await
    }

    async fn evidence_for_edges(&self, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>> {
        edges::evidence_for_edges(AutoCommit(self), edge_ids).await
    }

    async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()> {
        edges::put_evidence(OwnTxn(self), evidence).await
    }

    // ---- traversal: one statement per call ----

    async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        graph::container_edges_of(AutoCommit(self), ids, direction).await
    }

    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        graph::field_edges_of(AutoCommit(self), ids, direction).await
    }

    async fn container_edges_live_at(
        &self,
        ids: &[Id],
        direction: Direction,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Edge>> {
        graph::edges_live_at(AutoCommit(self), ids, direction, false, at).await
    }

    async fn field_edges_live_at(&self, ids: &[Id], direction: Direction, at: &[Timestamp]) -> StoreResult<Vec<Edge>> {
        graph::edges_live_at(AutoCommit(self), ids, direction, true, at).await
    }

    async fn container_edges_within_at(
        &self,
        sources: &[Id],
        targets: &[Id],
        at: &[Timestamp],
    ) -> StoreResult<Vec<Edge>> {
        graph::container_edges_within_at(AutoCommit(self), sources, targets, at).await
    }

    async fn container_edge_flags_at(&self, scope: &GraphScope, at: Timestamp) -> StoreResult<(Vec<Id>, Vec<Id>)> {
        graph::container_edge_flags_at(AutoCommit(self), scope, at).await
    }

    async fn first_edge_created(&self) -> StoreResult<Option<Timestamp>> {
        graph::first_edge_created(AutoCommit(self)).await
    }

    async fn count_neighbours(
        &self,
        ids: &[Id],
        direction: Direction,
        over_fields: bool,
        exclude: &[Id],
    ) -> StoreResult<Vec<(Id, i64)>> {
        frontier::count_neighbours(AutoCommit(self), ids, direction, over_fields, exclude).await
    }

    /// Two auto-commit reads, side by side on two pooled connections.
    async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
        graph::container_graph_around(AutoCommit(self), scope).await
    }

    // ---- provider assertions ----

    /// One transaction of at most nine statements whatever the batch size (see `assertions`),
    /// run again when a concurrent batch created one of its edges first.
    async fn apply_assertions(&self, batch: AssertionBatch, now: Timestamp) -> StoreResult<AssertionSummary> {
        Ok(self.apply_assertions_with_ids(batch, now).await?.0)
    }

    /// In a session, folded into the session's buffer and written at its end (see `overlay`).
    async fn apply_assertions_with_ids(
        &self,
        batch: AssertionBatch,
        now: Timestamp,
    ) -> StoreResult<(AssertionSummary, Vec<Id>)> {
        if let Some(session) = &self.session {
            return session.clone().apply_assertions(batch, now).await;
        }
        assertions::apply_assertions(self, batch, now).await
    }

    /// In a session, into its assertion buffer (one locking statement); outside one, nothing.
    async fn read_ahead_edges(&self, pairs: &[(Id, Id)], ids: &[Id]) -> StoreResult<()> {
        match &self.session {
            Some(session) => session.clone().read_ahead_edges(pairs.to_vec(), ids.to_vec()).await,
            None => Ok(()),
        }
    }

    async fn put_doc(&self, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
        identity::put_doc(OwnTxn(self), kind, key, value).await
    }

    async fn get_doc(&self, kind: &str, key: &str) -> StoreResult<Option<serde_json::Value>> {
        identity::get_doc(OwnTxn(self), kind, key).await
    }

    async fn list_docs(&self, kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
        identity::list_docs(OwnTxn(self), kind).await
    }

    /// One statement in one transaction (none for no rows).
    async fn put_metadata(&self, rows: Vec<MetadataAssertion>) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        write_txn!(self, |txn| assertions::put_metadata_in(txn, &rows))
    }

    async fn metadata_for_container(&self, container_id: Id) -> StoreResult<Vec<MetadataAssertion>> {
        self.flush_deferred().await?;
        assertions::metadata_for_container(OwnTxn(self), container_id).await
    }

    async fn container_metadata_of(&self, ids: &[Id]) -> StoreResult<Vec<MetadataAssertion>> {
        self.flush_deferred().await?;
        assertions::container_metadata_of(AutoCommit(self), ids).await
    }

    async fn next_operation_id(&self) -> StoreResult<Id> {
        // An id and nothing else: no transaction (see `ids`).
        first_id(&self.ids.take(&[(OPERATION_COUNTER, 1)]).await?, OPERATION_COUNTER)
    }

    async fn evidence_by_keys(&self, keys: &[String]) -> StoreResult<Vec<Evidence>> {
        assertions::evidence_by_keys(AutoCommit(self), keys).await
    }

    async fn live_evidence_of_key(&self, key: &str) -> StoreResult<Vec<PriorEvidence>> {
        if let Some(session) = &self.session {
            return session.clone().live_evidence_of_keys(vec![key.to_string()]).await;
        }
        assertions::live_evidence_of_key(AutoCommit(self), key).await
    }

    /// One statement for all the keys (`live_evidence_of_keys.cypher`).
    async fn live_evidence_of_keys(&self, keys: &[String]) -> StoreResult<Vec<PriorEvidence>> {
        if let Some(session) = &self.session {
            return session.clone().live_evidence_of_keys(keys.to_vec()).await;
        }
        assertions::live_evidence_of_keys(AutoCommit(self), keys).await
    }

    async fn live_edges_touching_ends(&self, ends: &[End], source_type: &str) -> StoreResult<Vec<Edge>> {
        assertions::live_edges_touching_ends(AutoCommit(self), ends, source_type).await
    }

    // ---- jobs and runs (see `jobs`) ----

    /// One transaction of at most eight statements (see `jobs`), run once more when a
    /// concurrent event created the job or run first; in a session, into its buffer.
    async fn record_run(&self, record: RunRecord) -> StoreResult<()> {
        match &self.session {
            Some(session) => session.record_run(&record).await,
            None => jobs::record_run(self, record).await,
        }
    }

    /// In a session, from the session's buffer when it met the run (no statement).
    async fn run_with_io(&self, run_id: &str) -> StoreResult<crate::domain::KnownRun> {
        if let Some(session) = &self.session {
            if let Some(known) = session.known_run(run_id).await {
                return Ok(known);
            }
        }
        // Not met: nothing of it waits in the buffer, so Neo4j's rows are current (no flush).
        let runs = jobs::runs_by_run_ids(AutoCommit(self), &[run_id.to_string()]).await?;
        let Some(run) = runs.into_iter().next() else {
            return Ok(crate::domain::KnownRun::default());
        };
        let io = jobs::run_io(AutoCommit(self), &[run.id]).await?.into_iter().map(|(_, e)| e).collect();
        Ok(crate::domain::KnownRun { run: Some(run), io })
    }

    /// In a session, one locking statement into the session's buffer for the chunk's jobs and
    /// runs (`job_record_lookup_many`), the runs then answered from it; outside one, two reads.
    async fn look_up_runs(
        &self,
        wanted: &crate::store::ChunkJobs,
    ) -> StoreResult<Vec<(String, crate::domain::KnownRun)>> {
        match &self.session {
            Some(session) => session.look_up_runs(wanted).await,
            None => jobs::look_up_runs(self, wanted).await,
        }
    }

    async fn jobs_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Job>> {
        self.flush_jobs().await?;
        jobs::jobs_by_ids(AutoCommit(self), ids).await
    }

    async fn job_by_name(&self, namespace: &str, name: &str) -> StoreResult<Option<Job>> {
        self.flush_jobs().await?;
        jobs::job_by_name(AutoCommit(self), namespace, name).await
    }

    async fn list_jobs(&self, filter: &JobFilter, page: PageRequest) -> StoreResult<Page<Job>> {
        self.flush_jobs().await?;
        jobs::list_jobs(OwnTxn(self), filter, page).await
    }

    async fn child_jobs(&self, ids: &[Id]) -> StoreResult<Vec<Job>> {
        self.flush_jobs().await?;
        jobs::child_jobs(AutoCommit(self), ids).await
    }

    async fn runs_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<JobRun>> {
        self.flush_jobs().await?;
        jobs::runs_by_ids(AutoCommit(self), ids).await
    }

    async fn runs_by_run_ids(&self, run_ids: &[String]) -> StoreResult<Vec<JobRun>> {
        self.flush_jobs().await?;
        jobs::runs_by_run_ids(AutoCommit(self), run_ids).await
    }

    async fn runs_of_job(&self, job_id: Id, filter: &RunFilter, page: PageRequest) -> StoreResult<Page<JobRun>> {
        self.flush_jobs().await?;
        jobs::runs_of_job(OwnTxn(self), job_id, filter, page).await
    }

    async fn child_runs(&self, run_ids: &[String]) -> StoreResult<Vec<JobRun>> {
        self.flush_jobs().await?;
        jobs::child_runs(AutoCommit(self), run_ids).await
    }

    async fn job_io(&self, job_ids: &[Id]) -> StoreResult<Vec<(Id, IoEntry)>> {
        self.flush_jobs().await?;
        jobs::job_io(AutoCommit(self), job_ids).await
    }

    async fn run_io(&self, run_ids: &[Id]) -> StoreResult<Vec<(Id, IoEntry)>> {
        self.flush_jobs().await?;
        jobs::run_io(AutoCommit(self), run_ids).await
    }

    async fn replace_io_ends(
        &self,
        from: &[End],
        to: &End,
        change: Option<crate::domain::NewChange>,
    ) -> StoreResult<u64> {
        self.flush_jobs().await?;
        let (from, to) = (from.to_vec(), to.clone());
        write_txn!(self, |txn| jobs::replace_io_ends(txn, &from, &to, change.as_slice()))
    }

    async fn external_placeholders(
        &self,
        needle: &str,
        source_type: &str,
    ) -> StoreResult<Vec<(String, String, String)>> {
        self.flush_jobs().await?;
        jobs::external_placeholders(AutoCommit(self), needle, source_type).await
    }

    async fn jobs_of_ends(&self, ends: &[End]) -> StoreResult<Vec<(Id, IoEntry)>> {
        self.flush_jobs().await?;
        jobs::jobs_of_ends(AutoCommit(self), ends).await
    }

    async fn failed_latest_runs(
        &self,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        limit: i64,
    ) -> StoreResult<Vec<JobRun>> {
        self.flush_jobs().await?;
        jobs::failed_latest_runs(AutoCommit(self), since, until, limit).await
    }

    async fn latest_runs_at(&self, job_ids: &[Id], at: Timestamp) -> StoreResult<Vec<JobRun>> {
        self.flush_jobs().await?;
        jobs_asof::latest_runs_at(AutoCommit(self), job_ids, &at).await
    }

    async fn failed_latest_runs_at(&self, at: Timestamp, limit: i64) -> StoreResult<Vec<JobRun>> {
        self.flush_jobs().await?;
        jobs_asof::failed_latest_runs_at(AutoCommit(self), &at, limit).await
    }

    // ---- the event log ----

    /// One transaction; should a concurrent insert of the same fingerprint win, a second one
    /// reads the winner (see `events`).
    async fn insert_event(&self, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
        self.writes(session::Beside::Events);
        events::insert_event(self, event).await
    }

    /// One transaction; on a conflict, one event at a time instead (see `events`).
    async fn insert_events(&self, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
        self.writes(session::Beside::Events);
        events::insert_events(self, events).await
    }

    async fn finish_events(&self, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
        self.writes(session::Beside::Events);
        events::finish_events(OwnTxn(self), outcomes).await
    }

    async fn finish_event(
        &self,
        id: Id,
        status: &str,
        errors: serde_json::Value,
        summary: serde_json::Value,
    ) -> StoreResult<()> {
        self.writes(session::Beside::Events);
        events::finish_event(OwnTxn(self), id, status, errors, summary).await
    }

    async fn run_event_states(&self, run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
        if self.beside(session::Beside::Events) {
            return events::run_event_states(Pool(self), run_id).await;
        }
        events::run_event_states(AutoCommit(self), run_id).await
    }

    /// One statement for all the runs, beside a session that wrote no outcome yet.
    async fn runs_event_states(&self, run_ids: &[String]) -> StoreResult<Vec<(String, Id, String, Option<String>)>> {
        if self.beside(session::Beside::Events) {
            return events::runs_event_states(Pool(self), run_ids).await;
        }
        events::runs_event_states(AutoCommit(self), run_ids).await
    }

    async fn list_events(&self, filter: &EventFilter, page: PageRequest) -> StoreResult<Page<StoredEvent>> {
        events::list_events(OwnTxn(self), filter, page).await
    }

    async fn events_after(&self, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
        events::events_after(OwnTxn(self), after, limit).await
    }

    async fn events_by_event_time(
        &self,
        window: &crate::domain::EventTimeWindow,
    ) -> StoreResult<(Vec<StoredEvent>, i64)> {
        events::events_by_event_time(OwnTxn(self), window).await
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        events::purge_events(OwnTxn(self), before).await
    }

    // ---- the change log ----

    async fn changes_after(&self, after: Id, first: i64, container_id: Option<Id>) -> StoreResult<Vec<Change>> {
        self.flush_deferred().await?;
        changes::changes_after(AutoCommit(self), after, first, container_id).await
    }

    async fn latest_change_position(&self) -> StoreResult<Id> {
        self.flush_deferred().await?;
        changes::latest_position(AutoCommit(self)).await
    }

    async fn purge_changes(&self, before: Timestamp) -> StoreResult<u64> {
        changes::purge(OwnTxn(self), before).await
    }

    // ---- whole store ----

    /// One transaction (see `transfer`).
    async fn export(&self) -> StoreResult<Vec<Record>> {
        self.flush_jobs().await?;
        self.flush_deferred().await?;
        write_txn!(self, |txn| transfer::export_in(txn))
    }

    /// Transactions of `IMPORT_TX_ROWS` rows, undone when one fails (see `transfer`).
    async fn import(&self, records: Vec<Record>) -> StoreResult<usize> {
        transfer::import(self, records).await
    }

    /// As `import`, a chunk at a time (see `transfer`).
    async fn import_chunks(&self, chunks: RecordChunks) -> StoreResult<usize> {
        transfer::import_chunks(self, chunks).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bolt_address_is_host_and_port() {
        assert_eq!(bolt_address("bolt://127.0.0.1:33321"), "127.0.0.1:33321");
        assert_eq!(bolt_address("neo4j+s://db.example.com"), "db.example.com:7687");
        assert_eq!(bolt_address("bolt://user@neo4j:7688/?routing=x"), "neo4j:7688");
        assert_eq!(bolt_address("bolt://[::1]"), "[::1]:7687");
        assert_eq!(bolt_address("bolt://[::1]:7000"), "[::1]:7000");
    }

    #[test]
    fn failures_reported_as_unexpected_messages_keep_their_code() {
        let text = "unexpected response for PULL: Ok(Failure(Failure { metadata: BoltMap { value: \
            {BoltString { value: \"code\" }: String(BoltString { value: \
            \"Neo.ClientError.Schema.ConstraintValidationFailed\" })} } }))";
        let e = neo4rs::Error::UnexpectedMessage(text.to_string());
        assert_eq!(status_code(&e), Some(CONSTRAINT_VIOLATION));
        assert!(matches!(db_error("test", e), StoreError::Conflict(_)));

        let deadlock =
            neo4rs::Error::UnexpectedMessage("... \"Neo.TransientError.Transaction.DeadlockDetected\" ...".to_string());
        assert!(matches!(db_error("test", deadlock), StoreError::Unavailable(_)));
        let other = neo4rs::Error::UnexpectedMessage("no code here".to_string());
        assert!(matches!(db_error("test", other), StoreError::Internal(_)));
    }

    #[test]
    fn batched_ids_are_sorted_and_distinct() {
        assert_eq!(distinct(&[3, 1, 3, 2]), vec![1, 2, 3]);
    }
}
