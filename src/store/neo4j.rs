//! The Neo4j store: the `Store` trait over a Neo4j 5 database through `neo4rs`.
//!
//! Model (see `cypher/` for every statement, one per file, loaded with `include_str!`):
//! - nodes `:Datastore`, `:Container`, `:Field`, `:External {fqn}`, `:Evidence {edge_id, key}`,
//!   `:Event` (the event log, unique by `id` and `fingerprint`; JSON values as text),
//!   `:Metadata {container_id, field_id, attribute, source}` (one source's value of an asset's
//!   attribute, unique by those four, `field_id` 0 for the container's own; not linked to the
//!   container node, and kept when the container is deleted, as in the embedded store) and
//!   `:Counter {name, value}` (one id counter per kind, advanced in blocks inside the writing
//!   transaction, so several service replicas never hand out the same id);
//! - one `:LINEAGE` relationship per edge, between its two end nodes, so one lineage hop is one
//!   relationship hop. It carries the edge's attributes plus `ukey` (source key, target key and
//!   source type: the uniqueness constraint) and, per end, `*_kind`, `*_id`, `*_container_id`,
//!   `*_fqn`, so an edge reads back from the relationship alone;
//! - deleting a container or field is a soft delete (`deleted = true`, `key` removed so the name
//!   can be reused): its relationships stay, so retired edges keep their ends. Deleted nodes are
//!   never returned by catalog reads, stats or traversal.
//!
//! Every statement sent counts once in `tributary_store_queries_total{store="neo4j"}` under the
//! name of its file. Reads of many ids are one statement (`UNWIND $ids`), writes of many rows one
//! statement per batch (`UNWIND $rows`). Each write runs in one explicit transaction
//! (`Graph::start_txn`), committed at the end and rolled back on any error; the batched reads a
//! query makes (traversal, catalog by ids, stats) are auto-commit queries, two round trips fewer.
//! `import` is the exception: it commits every `IMPORT_TX_ROWS` rows (see `import`).

mod rows;

use std::collections::{BTreeSet, HashMap, HashSet};

use async_trait::async_trait;
use neo4rs::{BoltType, ConfigBuilder, Graph, Query, Row, Txn};
use serde::de::DeserializeOwned;

use self::rows::{
    catalog_end, container_node_key, container_row, datastore_row, edge_row, edge_ukey, event_row, evidence_row,
    field_row, intervals_text, json_string, list, map, metadata_row, micros, missing_end_message, parse_intervals, ts,
    ContainerProps, DatastoreProps, Decode, EdgeProps, EventProps, EvidenceProps, FieldProps, MetadataProps,
};
use super::{GraphAround, GraphScope, PriorEvidence, Record, Store, StoreError, StoreResult};
use crate::domain::{
    AssertionBatch, AssertionSummary, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput, Direction,
    Edge, EdgeFilter, EdgePatch, End, EventFilter, EventOutcome, Evidence, Field, Id, Interval, MetadataAssertion,
    NewEdge, Page, PageRequest, StoredEvent, Timestamp,
};
use crate::metrics;

const KIND: &str = "neo4j";

/// The message of the `Conflict` raised when an edge's (source, target, sourceType) is taken.
pub const EDGE_EXISTS: &str = "A lineage edge with the same source and target already exists";

/// Neo4j's code for a violated uniqueness constraint.
const CONSTRAINT_VIOLATION: &str = "Neo.ClientError.Schema.ConstraintValidationFailed";

/// Rows per statement when importing.
const IMPORT_BATCH: usize = 1000;
/// Rows per transaction when importing: Neo4j bounds a transaction's memory
/// (`dbms.memory.transaction.total.max`), so an import commits as it goes instead of holding the
/// whole store in one transaction.
const IMPORT_TX_ROWS: usize = 10_000;

const DATASTORE_COUNTER: &str = "datastore";
const CONTAINER_COUNTER: &str = "container";
const FIELD_COUNTER: &str = "field";
const EDGE_COUNTER: &str = "edge";
const EVENT_COUNTER: &str = "event";
const OPERATION_COUNTER: &str = "operation";

/// One statement of `cypher/`, with its parameters; `name` (the file name) is its operation label
/// in metrics and logs.
struct Cmd {
    name: &'static str,
    query: Query,
}

impl Cmd {
    fn new(name: &'static str, text: &'static str) -> Self {
        Cmd { name, query: neo4rs::query(text) }
    }

    fn param(mut self, key: &str, value: impl Into<BoltType>) -> Self {
        self.query = self.query.param(key, value);
        self
    }
}

/// The statement of `cypher/<name>.cypher` for a literal `<name>`, checked to exist at compile
/// time. Tests collect the names passed to this macro and compare them with the directory.
macro_rules! cypher {
    ($name:literal) => {
        Cmd::new($name, include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/cypher/", $name, ".cypher")))
    };
}

mod assertions;
mod events;

/// Constraints and indexes, created idempotently at start-up.
fn schema_statements() -> Vec<Cmd> {
    vec![
        cypher!("schema_counter_name_unique"),
        cypher!("schema_datastore_id_unique"),
        cypher!("schema_datastore_name_unique"),
        cypher!("schema_container_id_unique"),
        cypher!("schema_container_key_unique"),
        cypher!("schema_container_datastore_id_index"),
        cypher!("schema_container_name_lc_index"),
        cypher!("schema_field_id_unique"),
        cypher!("schema_field_key_unique"),
        cypher!("schema_field_container_id_index"),
        cypher!("schema_external_fqn_unique"),
        cypher!("schema_evidence_edge_key_unique"),
        cypher!("schema_evidence_edge_id_index"),
        cypher!("schema_evidence_key_index"),
        cypher!("schema_lineage_id_unique"),
        cypher!("schema_lineage_ukey_unique"),
        cypher!("schema_lineage_source_type_index"),
        cypher!("schema_event_id_unique"),
        cypher!("schema_event_fingerprint_unique"),
        cypher!("schema_event_run_id_index"),
        cypher!("schema_event_received_at_index"),
        cypher!("schema_doc_kind_key_unique"),
        cypher!("schema_metadata_key_unique"),
        cypher!("schema_metadata_container_id_index"),
    ]
}

/// The Neo4j status code of a server failure (`Neo.ClientError.Schema...`). neo4rs 0.8 returns a
/// failure answering RUN as `Error::Neo4j`, but one answering PULL (constraint violations and
/// deadlocks surface there, when the write executes) as `UnexpectedMessage` with the code only in
/// the text, so the code is also looked for in that text.
fn status_code(e: &neo4rs::Error) -> Option<&str> {
    match e {
        neo4rs::Error::Neo4j(n) => Some(n.code()),
        neo4rs::Error::UnexpectedMessage(text) => {
            let start = text.find("Neo.")?;
            let code = &text[start..];
            let end = code.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.')).unwrap_or(code.len());
            Some(&code[..end])
        }
        _ => None,
    }
}

/// Maps a driver error: connection-level failures (and Neo4j's transient and routing errors) are
/// `Unavailable`, a violated uniqueness constraint is `Conflict`, anything else `Internal`.
fn db_error(operation: &'static str, e: neo4rs::Error) -> StoreError {
    use neo4rs::{Error as E, Neo4jClientErrorKind as C, Neo4jErrorKind as K};
    let code = status_code(&e);
    if code == Some(CONSTRAINT_VIOLATION) {
        tracing::warn!(error = %e, operation, "neo4j constraint violation");
        return StoreError::Conflict("The change conflicts with data already stored".to_string());
    }
    tracing::error!(error = %e, operation, "neo4j query failed");
    let unavailable = match &e {
        E::IOError { .. }
        | E::ConnectionError
        | E::UrlParseError(_)
        | E::UnsupportedScheme(_)
        | E::InvalidDnsName(_)
        | E::AuthenticationError(_)
        | E::UnsupportedVersion(_) => true,
        E::Neo4j(n) => {
            matches!(n.kind(), K::Transient | K::Client(C::SessionExpired | C::FatalDiscovery | C::Security(_)))
        }
        _ => code.is_some_and(|code| code.starts_with("Neo.TransientError.")),
    };
    if unavailable {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Internal(e.to_string())
    }
}

fn internal(operation: &'static str, message: String) -> StoreError {
    tracing::error!(error = %message, operation, "neo4j query failed");
    StoreError::Internal(message)
}

/// The rows of one statement, with its name for error messages.
struct Rows {
    op: &'static str,
    rows: Vec<Row>,
}

impl Rows {
    fn first(&self) -> StoreResult<&Row> {
        self.rows.first().ok_or_else(|| internal(self.op, format!("{} returned no row", self.op)))
    }

    fn get<T: DeserializeOwned>(&self, row: &Row, column: &str) -> StoreResult<T> {
        row.get::<T>(column).map_err(|e| internal(self.op, format!("cannot read column {column} of {}: {e}", self.op)))
    }

    /// `column` of the first row.
    fn value<T: DeserializeOwned>(&self, column: &str) -> StoreResult<T> {
        self.get(self.first()?, column)
    }

    /// `column` of every row.
    fn column<T: DeserializeOwned>(&self, column: &str) -> StoreResult<Vec<T>> {
        self.rows.iter().map(|row| self.get(row, column)).collect()
    }

    fn decode<P: Decode>(&self, column: &str) -> StoreResult<Vec<P::Out>> {
        self.column::<P>(column)?.into_iter().map(Decode::decode).collect()
    }

    fn decode_first<P: Decode>(&self, column: &str) -> StoreResult<P::Out> {
        self.value::<P>(column)?.decode()
    }

    /// A page from a statement returning one row `items, total`.
    fn page<P: Decode>(&self, page: PageRequest) -> StoreResult<Page<P::Out>> {
        let items: Vec<P> = self.value("items")?;
        let items = items.into_iter().map(Decode::decode).collect::<StoreResult<_>>()?;
        Ok(Page { items, total: self.value("total")?, page })
    }
}

/// Runs a statement inside a transaction and reads all its rows.
async fn exec(txn: &mut Txn, cmd: Cmd) -> StoreResult<Rows> {
    let op = cmd.name;
    metrics::store_query(KIND, op);
    let started = std::time::Instant::now();
    let mut stream = txn.execute(cmd.query).await.map_err(|e| db_error(op, e))?;
    let mut rows = Vec::new();
    while let Some(row) = stream.next(txn.handle()).await.map_err(|e| db_error(op, e))? {
        rows.push(row);
    }
    metrics::store_statement(KIND, op, started.elapsed().as_secs_f64());
    Ok(Rows { op, rows })
}

/// Commits on success; rolls back on error (after a failed statement the server has already
/// failed the transaction and the rollback may itself fail: the pool resets the connection).
async fn finish<T>(txn: Txn, result: StoreResult<T>) -> StoreResult<T> {
    match result {
        Ok(value) => {
            txn.commit().await.map_err(|e| db_error("commit", e))?;
            Ok(value)
        }
        Err(error) => {
            if let Err(e) = txn.rollback().await {
                tracing::debug!(error = %e, "neo4j rollback after a failed statement failed");
            }
            Err(error)
        }
    }
}

/// Sorted, distinct ids: the `$ids` of a batched statement.
fn distinct(ids: &[Id]) -> Vec<Id> {
    let set: BTreeSet<Id> = ids.iter().copied().collect();
    set.into_iter().collect()
}

fn count(n: usize) -> StoreResult<i64> {
    i64::try_from(n).map_err(|_| StoreError::Invalid(format!("too many rows: {n}")))
}

/// Reserves ids from the counters, one block per `(counter, how many)`; returns the first id of
/// each block. One statement for all counters.
async fn allocate(txn: &mut Txn, wants: &[(&'static str, usize)]) -> StoreResult<HashMap<String, Id>> {
    let mut rows = Vec::new();
    for (name, n) in wants.iter().filter(|(_, n)| *n > 0) {
        rows.push(map([("name", (*name).into()), ("count", count(*n)?.into())]));
    }
    if rows.is_empty() {
        return Ok(HashMap::new());
    }
    let out = exec(txn, cypher!("allocate_ids").param("rows", list(rows))).await?;
    let names: Vec<String> = out.column("name")?;
    let firsts: Vec<Id> = out.column("first")?;
    Ok(names.into_iter().zip(firsts).collect())
}

fn first_id(ids: &HashMap<String, Id>, counter: &'static str) -> StoreResult<Id> {
    ids.get(counter).copied().ok_or_else(|| internal("allocate_ids", format!("no id block for {counter}")))
}

/// Any uniqueness conflict in an edge write is the edge-exists conflict.
fn edge_conflict(e: StoreError) -> StoreError {
    match e {
        StoreError::Conflict(_) => StoreError::Conflict(EDGE_EXISTS.to_string()),
        other => other,
    }
}

pub struct Neo4jStore {
    graph: Graph,
}

impl Neo4jStore {
    /// Connects (a pool of at most 16 connections) and creates the constraints and indexes the
    /// queries use, idempotently. `database` defaults to the server's default database.
    pub async fn connect(uri: &str, user: &str, password: &str, database: Option<&str>) -> StoreResult<Self> {
        let mut builder =
            ConfigBuilder::default().uri(uri).user(user).password(password).max_connections(16).fetch_size(500);
        if let Some(database) = database {
            builder = builder.db(database);
        }
        let config = builder.build().map_err(|e| db_error("connect", e))?;
        let graph = Graph::connect(config).await.map_err(|e| db_error("connect", e))?;
        let store = Neo4jStore { graph };
        for cmd in schema_statements() {
            store.single(cmd).await?;
        }
        let filled: i64 = store.single(cypher!("backfill_container_name_lc")).await?.value("filled")?;
        if filled > 0 {
            tracing::info!(containers = filled, "lowercased container names filled in for name lookups");
        }
        Ok(store)
    }

    /// Deletes every relationship and node (constraints and indexes stay), 10,000 at a time, each
    /// batch in its own transaction so the transaction memory stays bounded whatever the size of
    /// the graph. For tests and operators; not part of the `Store` trait.
    pub async fn wipe(&self) -> StoreResult<()> {
        loop {
            let deleted: i64 = self.single(cypher!("wipe_relationships_batch")).await?.value("deleted")?;
            if deleted == 0 {
                break;
            }
        }
        loop {
            let deleted: i64 = self.single(cypher!("wipe_nodes_batch")).await?.value("deleted")?;
            if deleted == 0 {
                return Ok(());
            }
        }
    }

    /// Runs one statement in its own explicit transaction. Not `Graph::execute`: neo4rs 0.8 retries
    /// that one with backoff for up to a minute when the server cannot be reached, and a store that
    /// is down must answer `Unavailable` at once (readiness probes, request timeouts).
    async fn single(&self, cmd: Cmd) -> StoreResult<Rows> {
        let mut txn = self.begin().await?;
        let result = exec(&mut txn, cmd).await;
        finish(txn, result).await
    }

    /// Runs one read-only statement as an auto-commit query: RUN and PULL, two round trips,
    /// where `single` adds BEGIN and COMMIT. For the graph and catalog reads a query answers,
    /// which are most of the statements a request sends. `Graph::execute` retries a *transient*
    /// server error (a leader switch, exhausted transaction memory) with backoff; an unreachable
    /// server fails at once as in `single`, and the store's time limit (`store::timeout`) bounds
    /// the retries.
    async fn read(&self, cmd: Cmd) -> StoreResult<Rows> {
        let op = cmd.name;
        metrics::store_query(KIND, op);
        let mut stream = self.graph.execute(cmd.query).await.map_err(|e| db_error(op, e))?;
        let mut rows = Vec::new();
        while let Some(row) = stream.next().await.map_err(|e| db_error(op, e))? {
            rows.push(row);
        }
        Ok(Rows { op, rows })
    }

    async fn begin(&self) -> StoreResult<Txn> {
        self.graph.start_txn().await.map_err(|e| db_error("begin", e))
    }
}

// ---- the bodies of multi-statement writes, run inside one transaction ----

async fn upsert_datastore_in(txn: &mut Txn, input: DatastoreInput) -> StoreResult<Datastore> {
    let existing = exec(txn, cypher!("datastore_id_by_name").param("name", input.name.clone())).await?;
    let new_id = if existing.rows.is_empty() {
        Some(first_id(&allocate(txn, &[(DATASTORE_COUNTER, 1)]).await?, DATASTORE_COUNTER)?)
    } else {
        None
    };
    exec(
        txn,
        cypher!("upsert_datastore")
            .param("name", input.name)
            .param("type", input.kind)
            .param("store_type", input.store_type)
            .param("namespaces", input.namespaces)
            .param("enrichment_only", input.enrichment_only)
            .param("new_id", new_id),
    )
    .await?
    .decode_first::<DatastoreProps>("datastore")
}

async fn upsert_container_in(txn: &mut Txn, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
    let key = container_node_key(input.datastore_id, input.database.as_deref(), input.schema.as_deref(), &input.name);
    let lookup = exec(
        txn,
        cypher!("container_upsert_lookup").param("datastore_id", input.datastore_id).param("key", key.clone()),
    )
    .await?;
    if !lookup.value::<bool>("datastore_exists")? {
        return Err(StoreError::NotFound(format!("Datastore {} not found", input.datastore_id)));
    }
    let container_id: Option<Id> = lookup.value("container_id")?;
    let existing: HashSet<String> = lookup.value::<Vec<String>>("field_names")?.into_iter().collect();

    // New fields (first mention of each new name) get ids; repeated names merge into the first.
    let mut new_names = HashSet::new();
    for field in &input.fields {
        if !existing.contains(&field.name) {
            new_names.insert(field.name.clone());
        }
    }
    let ids =
        allocate(txn, &[(CONTAINER_COUNTER, usize::from(container_id.is_none())), (FIELD_COUNTER, new_names.len())])
            .await?;
    let new_container_id = if container_id.is_none() { Some(first_id(&ids, CONTAINER_COUNTER)?) } else { None };
    let mut next_field_id = if new_names.is_empty() { 0 } else { first_id(&ids, FIELD_COUNTER)? };
    let mut assigned = HashSet::new();
    let mut fields = Vec::with_capacity(input.fields.len());
    for f in input.fields {
        let new_id = if new_names.contains(&f.name) && assigned.insert(f.name.clone()) {
            next_field_id += 1;
            Some(next_field_id - 1)
        } else {
            None
        };
        fields.push(map([
            ("name", f.name.into()),
            ("new_id", new_id.into()),
            ("data_type", f.data_type.into()),
            ("display_name", f.display_name.into()),
            ("status", f.status.into()),
            ("latest_profile_id", f.latest_profile_id.into()),
            ("is_computed_field", f.is_computed_field.into()),
            ("active_anomaly_count", f.active_anomaly_count.into()),
        ]));
    }
    let out = exec(
        txn,
        cypher!("upsert_container")
            .param("key", key)
            .param("new_id", new_container_id)
            .param("datastore_id", input.datastore_id)
            .param("name_lc", input.name.to_lowercase())
            .param("name", input.name)
            .param("database", input.database)
            .param("schema", input.schema)
            .param("container_type", input.container_type)
            .param("table_type", input.table_type)
            .param("display_name", input.display_name)
            .param("purpose", input.purpose)
            .param("active_anomaly_count", input.active_anomaly_count)
            .param("fields", list(fields)),
    )
    .await?;
    let container = out.decode_first::<ContainerProps>("container")?;
    let fields: Vec<FieldProps> = out.value("fields")?;
    let fields = fields.into_iter().map(Decode::decode).collect::<StoreResult<_>>()?;
    Ok((container, fields))
}

/// `NotFound` for the first container or field end without a node (a deleted one still has its
/// node); external ends are merged when the edge is written. One statement, none without
/// catalog ends.
async fn ensure_ends_exist<'a>(txn: &mut Txn, ends: impl IntoIterator<Item = &'a End>) -> StoreResult<()> {
    let mut params = Vec::new();
    let mut seen = HashSet::new();
    for end in ends {
        if let Some(param) = catalog_end(end) {
            if seen.insert(end.key()) {
                params.push(param);
            }
        }
    }
    if params.is_empty() {
        return Ok(());
    }
    let missing = exec(txn, cypher!("missing_edge_ends").param("ends", list(params))).await?;
    if let Some(row) = missing.rows.first() {
        let kind: String = missing.get(row, "kind")?;
        let id: Id = missing.get(row, "id")?;
        return Err(StoreError::NotFound(missing_end_message(&kind, id)));
    }
    Ok(())
}

async fn create_edges_in(
    txn: &mut Txn,
    edges: Vec<NewEdge>,
    skip_existing: bool,
    now: Timestamp,
) -> StoreResult<Vec<Edge>> {
    let ukeys: Vec<String> = edges.iter().map(|e| edge_ukey(&e.source, &e.target, &e.source_type)).collect();
    let distinct_ukeys: Vec<String> = ukeys.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let taken: HashSet<String> = exec(txn, cypher!("edge_ukeys_taken").param("ukeys", distinct_ukeys))
        .await?
        .column::<String>("ukey")?
        .into_iter()
        .collect();

    let mut seen = HashSet::new();
    let mut keep = Vec::with_capacity(edges.len());
    for (edge, ukey) in edges.into_iter().zip(ukeys) {
        if taken.contains(&ukey) || !seen.insert(ukey) {
            if skip_existing {
                continue;
            }
            return Err(StoreError::Conflict(EDGE_EXISTS.to_string()));
        }
        keep.push(edge);
    }
    if keep.is_empty() {
        return Ok(Vec::new());
    }

    ensure_ends_exist(txn, keep.iter().flat_map(|e| [&e.source, &e.target])).await?;

    let n = keep.len();
    let first = first_id(&allocate(txn, &[(EDGE_COUNTER, n)]).await?, EDGE_COUNTER)?;
    let mut rows = Vec::with_capacity(n);
    for (id, new) in (first..).zip(keep) {
        let edge = Edge {
            id,
            created: now,
            source: new.source,
            target: new.target,
            description: new.description,
            source_type: new.source_type,
            operation: new.operation,
            derived: new.derived,
            transformations: new.transformations,
            last_asserted_at: new.last_asserted_at.map(micros),
            retired_at: None,
            intervals: vec![Interval { from: now, to: None }],
        };
        rows.push(edge_row(&edge)?);
    }
    let created = exec(txn, cypher!("create_edges").param("rows", list(rows))).await?.decode::<EdgeProps>("edge")?;
    if created.len() != n {
        return Err(internal(
            "create_edges",
            format!("created {} of {n} edges: an end node is missing", created.len()),
        ));
    }
    Ok(created)
}

async fn update_edge_in(txn: &mut Txn, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
    let current = exec(txn, cypher!("edges_by_ids").param("ids", vec![id])).await?.decode::<EdgeProps>("edge")?;
    let Some(current) = current.into_iter().next() else {
        return Ok(None);
    };
    let mut new_ukey = None;
    if let Some(source_type) = &patch.source_type {
        if *source_type != current.source_type {
            let ukey = edge_ukey(&current.source, &current.target, source_type);
            let taken = exec(txn, cypher!("edge_ukeys_taken").param("ukeys", vec![ukey.clone()])).await?;
            if !taken.rows.is_empty() {
                return Err(StoreError::Conflict(EDGE_EXISTS.to_string()));
            }
            new_ukey = Some(ukey);
        }
    }
    let (set_description, description) = match patch.description {
        Some(description) => (true, description),
        None => (false, None),
    };
    let updated = exec(
        txn,
        cypher!("update_edge")
            .param("id", id)
            .param("set_description", set_description)
            .param("description", description)
            .param("source_type", patch.source_type)
            .param("ukey", new_ukey),
    )
    .await?
    .decode::<EdgeProps>("edge")?;
    Ok(updated.into_iter().next())
}

async fn retire_edges_in(txn: &mut Txn, ids: Vec<Id>, now: Timestamp) -> StoreResult<()> {
    let now_text = ts(&now);
    let marked =
        exec(txn, cypher!("retire_edges_mark").param("ids", ids.clone()).param("now", now_text.clone())).await?;
    let edge_ids: Vec<Id> = marked.column("id")?;
    let texts: Vec<Option<String>> = marked.column("intervals")?;
    let mut rows = Vec::with_capacity(edge_ids.len());
    for (id, text) in edge_ids.into_iter().zip(texts) {
        let mut intervals = parse_intervals(text.as_deref())?;
        // Close the open interval; an edge without one (never live) keeps its history as is.
        if let Some(open) = intervals.iter_mut().rev().find(|i| i.to.is_none()) {
            open.to = Some(now);
            rows.push(map([("id", id.into()), ("intervals", intervals_text(&intervals)?.into())]));
        }
    }
    if !rows.is_empty() {
        exec(txn, cypher!("set_edge_intervals").param("rows", list(rows))).await?;
    }
    exec(txn, cypher!("retire_evidence").param("ids", ids).param("now", now_text)).await?;
    Ok(())
}

/// Upserts metadata rows in one statement (none for no rows), in the caller's transaction. The
/// rows are sorted by key first, stably (a later row for the same key still applies last), so
/// concurrent writers lock the keys they share in the same order.
async fn put_metadata_in(txn: &mut Txn, rows: &[MetadataAssertion]) -> StoreResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut sorted: Vec<&MetadataAssertion> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        (a.container_id, a.field_id.unwrap_or(0), &a.attribute, &a.source).cmp(&(
            b.container_id,
            b.field_id.unwrap_or(0),
            &b.attribute,
            &b.source,
        ))
    });
    let rows = sorted.into_iter().map(metadata_row).collect::<StoreResult<Vec<_>>>()?;
    exec(txn, cypher!("put_metadata").param("rows", list(rows))).await.map(|_| ())
}

async fn export_in(txn: &mut Txn) -> StoreResult<Vec<Record>> {
    let mut records = Vec::new();
    let datastores = exec(txn, cypher!("list_datastores")).await?;
    records.extend(datastores.decode::<DatastoreProps>("datastore")?.into_iter().map(Record::Datastore));
    let containers = exec(txn, cypher!("export_containers")).await?;
    records.extend(containers.decode::<ContainerProps>("container")?.into_iter().map(Record::Container));
    let fields = exec(txn, cypher!("export_fields")).await?;
    records.extend(fields.decode::<FieldProps>("field")?.into_iter().map(Record::Field));
    let edges = exec(txn, cypher!("export_edges")).await?;
    records.extend(edges.decode::<EdgeProps>("edge")?.into_iter().map(Record::Edge));
    let evidence = exec(txn, cypher!("export_evidence")).await?;
    records.extend(evidence.decode::<EvidenceProps>("evidence")?.into_iter().map(Record::Evidence));
    let metadata = exec(txn, cypher!("export_metadata")).await?;
    records.extend(metadata.decode::<MetadataProps>("metadata")?.into_iter().map(Record::Metadata));
    let docs = exec(txn, cypher!("export_docs")).await?;
    let (kinds, keys, values): (Vec<String>, Vec<String>, Vec<String>) =
        (docs.column("kind")?, docs.column("key")?, docs.column("value")?);
    for ((kind, key), value) in kinds.into_iter().zip(keys).zip(values) {
        let value = serde_json::from_str(&value).map_err(|e| internal("export_docs", e.to_string()))?;
        records.push(Record::Doc { kind, key, value });
    }
    let events = exec(txn, cypher!("export_events")).await?;
    records.extend(events.decode::<EventProps>("event")?.into_iter().map(Record::Event));
    Ok(records)
}

/// Rows of `import`, by kind, in the order they are written.
#[derive(Default)]
struct ImportRows {
    datastores: Vec<BoltType>,
    containers: Vec<BoltType>,
    fields: Vec<BoltType>,
    edges: Vec<BoltType>,
    evidence: Vec<BoltType>,
    metadata: Vec<BoltType>,
    events: Vec<BoltType>,
    docs: Vec<BoltType>,
    counters: Vec<BoltType>,
}

/// Turns the records into rows (failing, before anything is written, on a record that cannot be
/// stored), and finds how far each id counter must move.
fn import_rows(records: &[Record]) -> StoreResult<ImportRows> {
    let mut out = ImportRows::default();
    // The highest id of each kind, edge ends included (an end may name a deleted container or
    // field that is not among the records), so the counters continue past them.
    let mut max: HashMap<&'static str, Id> = HashMap::new();
    let mut see = |counter: &'static str, id: Id| {
        let entry = max.entry(counter).or_insert(id);
        *entry = (*entry).max(id);
    };
    for record in records {
        match record {
            Record::Doc { kind, key, value } => out.docs.push(map([
                ("kind", kind.clone().into()),
                ("key", key.clone().into()),
                ("value", value.to_string().into()),
            ])),
            Record::Datastore(d) => {
                see(DATASTORE_COUNTER, d.id);
                out.datastores.push(datastore_row(d));
            }
            Record::Container(c) => {
                see(CONTAINER_COUNTER, c.id);
                out.containers.push(container_row(c));
            }
            Record::Field(f) => {
                see(FIELD_COUNTER, f.id);
                out.fields.push(field_row(f));
            }
            Record::Edge(e) => {
                see(EDGE_COUNTER, e.id);
                for end in [&e.source, &e.target] {
                    match end {
                        End::Container { id } => see(CONTAINER_COUNTER, *id),
                        End::Field { id, container_id } => {
                            see(FIELD_COUNTER, *id);
                            see(CONTAINER_COUNTER, *container_id);
                        }
                        End::External { .. } => {}
                    }
                }
                out.edges.push(edge_row(e)?);
            }
            Record::Evidence(e) => {
                if let Some(op) = e.last_observed_operation_id {
                    see(OPERATION_COUNTER, op);
                }
                out.evidence.push(evidence_row(e)?)
            }
            Record::Metadata(m) => out.metadata.push(metadata_row(m)?),
            Record::Event(e) => {
                see(EVENT_COUNTER, e.id);
                out.events.push(event_row(e)?);
            }
        }
    }
    out.counters = max.into_iter().map(|(name, value)| map([("name", name.into()), ("value", value.into())])).collect();
    Ok(out)
}

/// Runs one import statement per `IMPORT_BATCH` rows, in transactions of `IMPORT_TX_ROWS` rows.
async fn import_batches(store: &Neo4jStore, rows: Vec<BoltType>, cmd: fn() -> Cmd) -> StoreResult<()> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut txn = store.begin().await?;
        let mut result = Ok(());
        for _ in 0..IMPORT_TX_ROWS.div_ceil(IMPORT_BATCH) {
            if rows.peek().is_none() {
                break;
            }
            let batch: Vec<BoltType> = rows.by_ref().take(IMPORT_BATCH).collect();
            if let Err(e) = exec(&mut txn, cmd().param("rows", list(batch))).await {
                result = Err(e);
                break;
            }
        }
        finish(txn, result).await?;
    }
    Ok(())
}

/// The writes of `import` after the emptiness check. The documents and the counters go last, in
/// one transaction: until then a failure has touched nothing but the imported nodes.
async fn import_all(store: &Neo4jStore, rows: ImportRows) -> StoreResult<()> {
    import_batches(store, rows.datastores, || cypher!("import_datastores")).await?;
    import_batches(store, rows.containers, || cypher!("import_containers")).await?;
    import_batches(store, rows.fields, || cypher!("import_fields")).await?;
    import_batches(store, rows.edges, || cypher!("import_edges")).await?;
    import_batches(store, rows.evidence, || cypher!("put_evidence")).await?;
    // Upserted as `put_metadata` does, in record order, as the embedded store imports them.
    import_batches(store, rows.metadata, || cypher!("put_metadata")).await?;
    import_batches(store, rows.events, || cypher!("import_events")).await?;
    let mut txn = store.begin().await?;
    let result = async {
        for batch in rows.docs.chunks(IMPORT_BATCH) {
            exec(&mut txn, cypher!("import_docs").param("rows", list(batch.to_vec()))).await?;
        }
        if !rows.counters.is_empty() {
            exec(&mut txn, cypher!("raise_counters").param("rows", list(rows.counters))).await?;
        }
        Ok(())
    }
    .await;
    finish(txn, result).await
}

#[async_trait]
impl Store for Neo4jStore {
    fn kind(&self) -> &'static str {
        KIND
    }

    async fn ping(&self) -> StoreResult<()> {
        self.single(cypher!("ping")).await.map(|_| ())
    }

    // ---- catalog ----

    async fn upsert_datastore(&self, input: DatastoreInput) -> StoreResult<Datastore> {
        let mut txn = self.begin().await?;
        let result = upsert_datastore_in(&mut txn, input).await;
        finish(txn, result).await
    }

    async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("datastores_by_ids").param("ids", distinct(ids))).await?.decode::<DatastoreProps>("datastore")
    }

    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        self.single(cypher!("list_datastores")).await?.decode::<DatastoreProps>("datastore")
    }

    async fn delete_datastore(&self, id: Id) -> StoreResult<bool> {
        let deleted: i64 = self.single(cypher!("delete_datastore").param("id", id)).await?.value("deleted")?;
        Ok(deleted > 0)
    }

    async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        let mut txn = self.begin().await?;
        let result = upsert_container_in(&mut txn, input).await;
        finish(txn, result).await
    }

    async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("containers_by_ids").param("ids", distinct(ids))).await?.decode::<ContainerProps>("container")
    }

    async fn list_containers(
        &self,
        datastore_id: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Container>> {
        let cmd = match datastore_id {
            Some(datastore_id) => cypher!("list_containers_by_datastore").param("datastore_id", datastore_id),
            None => cypher!("list_containers"),
        };
        self.single(
            cmd.param("name", name.map(str::to_lowercase)).param("skip", page.offset()).param("limit", page.size),
        )
        .await?
        .page::<ContainerProps>(page)
    }

    async fn containers_by_names(&self, names: &[String], datastores: Option<&[Id]>) -> StoreResult<Vec<Container>> {
        if names.is_empty() || datastores.is_some_and(|d| d.is_empty()) {
            return Ok(Vec::new());
        }
        let names: Vec<String> = names.iter().cloned().collect::<HashSet<_>>().into_iter().collect();
        self.single(
            cypher!("containers_by_names").param("names", names).param("datastore_ids", datastores.map(distinct)),
        )
        .await?
        .decode::<ContainerProps>("container")
    }

    async fn delete_container(&self, id: Id) -> StoreResult<bool> {
        let deleted: i64 = self.single(cypher!("delete_container").param("id", id)).await?.value("deleted")?;
        Ok(deleted > 0)
    }

    async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("fields_by_ids").param("ids", distinct(ids))).await?.decode::<FieldProps>("field")
    }

    async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("fields_of_containers").param("ids", distinct(ids))).await?.decode::<FieldProps>("field")
    }

    async fn container_fields(
        &self,
        container_id: Id,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Field>> {
        self.single(
            cypher!("container_fields")
                .param("container_id", container_id)
                .param("name", name.map(str::to_lowercase))
                .param("skip", page.offset())
                .param("limit", page.size),
        )
        .await?
        .page::<FieldProps>(page)
    }

    async fn delete_field(&self, id: Id) -> StoreResult<bool> {
        let deleted: i64 = self.single(cypher!("delete_field").param("id", id)).await?.value("deleted")?;
        Ok(deleted > 0)
    }

    async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.read(cypher!("container_stats").param("ids", distinct(ids))).await?;
        out.rows
            .iter()
            .map(|row| {
                Ok(ContainerStats {
                    container_id: out.get(row, "container_id")?,
                    field_count: out.get(row, "field_count")?,
                    linked_field_count: out.get(row, "linked_field_count")?,
                })
            })
            .collect()
    }

    async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.read(cypher!("field_counts").param("ids", distinct(ids))).await?;
        out.rows.iter().map(|row| Ok((out.get(row, "container_id")?, out.get(row, "field_count")?))).collect()
    }

    async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("fields_with_lineage").param("ids", distinct(ids))).await?.column("id")
    }

    // ---- edges ----

    async fn create_edges(&self, edges: Vec<NewEdge>, skip_existing: bool, now: Timestamp) -> StoreResult<Vec<Edge>> {
        if edges.is_empty() {
            return Ok(Vec::new());
        }
        let mut txn = self.begin().await?;
        let result = create_edges_in(&mut txn, edges, skip_existing, micros(now)).await;
        finish(txn, result).await.map_err(edge_conflict)
    }

    async fn live_container_edge_exists(&self, source: Id, target: Id) -> StoreResult<bool> {
        self.single(cypher!("live_container_edge_exists").param("source", source).param("target", target))
            .await?
            .value("exists")
    }

    async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
        let mut txn = self.begin().await?;
        let result = update_edge_in(&mut txn, id, patch).await;
        finish(txn, result).await.map_err(edge_conflict)
    }

    async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut txn = self.begin().await?;
        let result = retire_edges_in(&mut txn, distinct(ids), micros(now)).await;
        finish(txn, result).await
    }

    async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.single(cypher!("delete_edges").param("ids", distinct(ids))).await.map(|_| ())
    }

    async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("edges_by_ids").param("ids", distinct(ids))).await?.decode::<EdgeProps>("edge")
    }

    async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
        let cmd = match (filter.container_id, filter.field_id) {
            (Some(container_id), field_id) => {
                cypher!("list_edges_by_container").param("container_id", container_id).param("field_id", field_id)
            }
            (None, Some(field_id)) => cypher!("list_edges_by_field").param("field_id", field_id),
            (None, None) => cypher!("list_edges"),
        };
        self.single(
            cmd.param("source_type", filter.source_type.clone())
                .param("include_retired", filter.include_retired)
                .param("skip", page.offset())
                .param("limit", page.size),
        )
        .await?
        .page::<EdgeProps>(page)
    }

    async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.single(cypher!("edges_touching_containers").param("ids", distinct(ids))).await?.decode::<EdgeProps>("edge")
    }

    async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.single(cypher!("edges_touching_fields").param("ids", distinct(ids))).await?.decode::<EdgeProps>("edge")
    }

    async fn evidence_for_edges(&self, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>> {
        if edge_ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(cypher!("evidence_for_edges").param("ids", distinct(edge_ids)))
            .await?
            .decode::<EvidenceProps>("evidence")
    }

    async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()> {
        if evidence.is_empty() {
            return Ok(());
        }
        let rows = evidence.iter().map(evidence_row).collect::<StoreResult<Vec<_>>>()?;
        self.single(cypher!("put_evidence").param("rows", list(rows))).await.map(|_| ())
    }

    // ---- traversal: one statement per call ----

    async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let cmd = match direction {
            Direction::Upstream => cypher!("container_edges_upstream"),
            Direction::Downstream => cypher!("container_edges_downstream"),
        };
        self.read(cmd.param("ids", distinct(ids))).await?.decode::<EdgeProps>("edge")
    }

    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let cmd = match direction {
            Direction::Upstream => cypher!("field_edges_upstream"),
            Direction::Downstream => cypher!("field_edges_downstream"),
        };
        self.read(cmd.param("ids", distinct(ids))).await?.decode::<EdgeProps>("edge")
    }

    async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
        if scope.ids.is_empty() {
            return Ok(GraphAround::default());
        }
        // Only what the traversal did not read (see the trait): edges out of `sources` into
        // `targets`, and the flags of those containers on those sides.
        let (sources, targets) = scope.unread();
        let (sources, targets) = (distinct(&sources), distinct(&targets));
        // The two reads go out side by side, on two pooled connections.
        let within = self.read(
            cypher!("container_edges_within").param("sources", sources.clone()).param("targets", targets.clone()),
        );
        let flags = self.read(
            cypher!("container_edge_flags")
                .param("ids", distinct(&scope.ids))
                .param("known", distinct(&scope.known_external_edges))
                .param("up", targets)
                .param("down", sources),
        );
        let (within, flags) = tokio::join!(within, flags);
        let flags = flags?;
        let mut around = GraphAround { edges: within?.decode::<EdgeProps>("edge")?, ..GraphAround::default() };
        for row in &flags.rows {
            let id: Id = flags.get(row, "id")?;
            if flags.get::<bool>(row, "has_upstream")? {
                around.has_upstream.push(id);
            }
            if flags.get::<bool>(row, "has_downstream")? {
                around.has_downstream.push(id);
            }
        }
        Ok(around)
    }

    // ---- provider assertions ----

    /// One transaction of at most ten statements whatever the batch size (see `assertions`).
    /// Batches naming the same edge serialize on its uniqueness key (see `assert_edges_lookup`),
    /// so a concurrent batch creating it first makes this one assert it, as in the embedded store.
    async fn apply_assertions(&self, batch: AssertionBatch, now: Timestamp) -> StoreResult<AssertionSummary> {
        // Two batches creating the same new edge cannot lock a relationship that does not exist
        // yet: the second hits the uniqueness constraint and rolls back. Run again, it finds the
        // edge and asserts it, as the embedded store's single writer would have.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut txn = self.begin().await?;
            let result = assertions::apply_assertions_in(&mut txn, &batch, now).await;
            match finish(txn, result).await {
                Err(StoreError::Conflict(m)) if attempt < 5 => {
                    tracing::debug!(attempt, error = %m, "concurrent assertion of a new edge; retrying the batch");
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
                }
                other => return other,
            }
        }
    }

    async fn put_doc(&self, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
        let cmd = cypher!("put_doc").param("kind", kind).param("key", key).param("value", value.to_string());
        self.single(cmd).await.map(|_| ())
    }

    async fn get_doc(&self, kind: &str, key: &str) -> StoreResult<Option<serde_json::Value>> {
        let rows = self.single(cypher!("get_doc").param("kind", kind).param("key", key)).await?;
        let values: Vec<String> = rows.column("value")?;
        values
            .into_iter()
            .next()
            .map(|v| serde_json::from_str(&v).map_err(|e| internal("get_doc", e.to_string())))
            .transpose()
    }

    async fn list_docs(&self, kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
        let rows = self.single(cypher!("list_docs").param("kind", kind)).await?;
        let (keys, values): (Vec<String>, Vec<String>) = (rows.column("key")?, rows.column("value")?);
        keys.into_iter()
            .zip(values)
            .map(|(k, v)| Ok((k, serde_json::from_str(&v).map_err(|e| internal("list_docs", e.to_string()))?)))
            .collect()
    }

    /// One statement in one transaction (none for no rows).
    async fn put_metadata(&self, rows: Vec<MetadataAssertion>) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut txn = self.begin().await?;
        let result = put_metadata_in(&mut txn, &rows).await;
        finish(txn, result).await
    }

    /// Ordered as the embedded store orders them: by field (the container's own values first),
    /// attribute, source.
    async fn metadata_for_container(&self, container_id: Id) -> StoreResult<Vec<MetadataAssertion>> {
        self.single(cypher!("metadata_for_container").param("container_id", container_id))
            .await?
            .decode::<MetadataProps>("metadata")
    }

    async fn next_operation_id(&self) -> StoreResult<Id> {
        let mut txn = self.begin().await?;
        let result = allocate(&mut txn, &[(OPERATION_COUNTER, 1)]).await;
        let ids = finish(txn, result).await?;
        first_id(&ids, OPERATION_COUNTER)
    }

    async fn evidence_by_keys(&self, keys: &[String]) -> StoreResult<Vec<Evidence>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = keys.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
        self.single(cypher!("evidence_by_keys").param("keys", keys)).await?.decode::<EvidenceProps>("evidence")
    }

    async fn live_evidence_of_key(&self, key: &str) -> StoreResult<Vec<PriorEvidence>> {
        let rows = self.read(cypher!("live_evidence_of_key").param("key", key.to_string())).await?;
        let evidence = rows.decode::<EvidenceProps>("evidence")?;
        let edges = rows.column::<Vec<EdgeProps>>("edge")?;
        evidence
            .iter()
            .zip(edges)
            .map(|(e, edge)| {
                let edge = edge.into_iter().next().map(Decode::decode).transpose()?;
                Ok(PriorEvidence::of(e, edge.as_ref()))
            })
            .collect()
    }

    async fn live_edges_touching_ends(&self, ends: &[End], source_type: &str) -> StoreResult<Vec<Edge>> {
        if ends.is_empty() {
            return Ok(Vec::new());
        }
        let (container_ids, field_ids, fqns) = super::ends_by_kind(ends);
        self.single(
            cypher!("live_edges_touching_ends")
                .param("container_ids", container_ids)
                .param("field_ids", field_ids)
                .param("fqns", fqns)
                .param("source_type", source_type.to_string()),
        )
        .await?
        .decode::<EdgeProps>("edge")
    }

    // ---- the event log ----

    /// The lookup and the create run in one transaction; a concurrent insert of the same
    /// fingerprint is matched by the create's MERGE, and should the constraint still refuse the
    /// create, the event that won is read and returned as the existing one.
    async fn insert_event(&self, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
        let fingerprint = event.fingerprint.clone();
        let mut txn = self.begin().await?;
        let result = events::insert_event_in(&mut txn, event).await;
        match finish(txn, result).await {
            Err(StoreError::Conflict(message)) => {
                let mut txn = self.begin().await?;
                let found = events::event_by_fingerprint(&mut txn, &fingerprint).await;
                match finish(txn, found).await? {
                    Some(existing) => Ok((existing, true)),
                    None => Err(StoreError::Conflict(message)),
                }
            }
            other => other,
        }
    }

    async fn insert_events(&self, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
        let mut txn = self.begin().await?;
        let result = events::insert_events_in(&mut txn, events.clone()).await;
        match finish(txn, result).await {
            // A concurrent request created one of these meanwhile: one event at a time instead.
            Err(StoreError::Conflict(_)) => {
                let mut out = Vec::with_capacity(events.len());
                for e in events {
                    out.push(self.insert_event(e).await?);
                }
                Ok(out)
            }
            other => other,
        }
    }

    async fn finish_events(&self, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
        if outcomes.is_empty() {
            return Ok(());
        }
        let rows = outcomes
            .into_iter()
            .map(|o| {
                Ok(map([
                    ("id", o.id.into()),
                    ("status", o.status.into()),
                    ("errors", json_string(&o.errors)?.into()),
                    ("summary", json_string(&o.summary)?.into()),
                ]))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        self.single(cypher!("finish_events").param("rows", list(rows))).await.map(|_| ())
    }

    async fn finish_event(
        &self,
        id: Id,
        status: &str,
        errors: serde_json::Value,
        summary: serde_json::Value,
    ) -> StoreResult<()> {
        self.single(
            cypher!("finish_event")
                .param("id", id)
                .param("status", status.to_string())
                .param("errors", json_string(&errors)?)
                .param("summary", json_string(&summary)?),
        )
        .await
        .map(|_| ())
    }

    async fn run_event_states(&self, run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
        let rows = self.read(cypher!("run_event_states").param("run_id", run_id)).await?;
        let ids: Vec<Id> = rows.column("id")?;
        let statuses: Vec<String> = rows.column("status")?;
        let types: Vec<Option<String>> = rows.column("event_type")?;
        Ok(ids.into_iter().zip(statuses).zip(types).map(|((i, s), t)| (i, s, t)).collect())
    }

    async fn list_events(&self, filter: &EventFilter, page: PageRequest) -> StoreResult<Page<StoredEvent>> {
        let cmd = if filter.run_id.is_some() { cypher!("list_events_of_run") } else { cypher!("list_events") };
        self.single(
            cmd.param("status", filter.status.clone())
                .param("job_namespace", filter.job_namespace.clone())
                .param("job_name", filter.job_name.clone())
                .param("run_id", filter.run_id.clone())
                .param("since", filter.since.as_ref().map(ts))
                .param("until", filter.until.as_ref().map(ts))
                .param("skip", page.offset())
                .param("limit", page.size),
        )
        .await?
        .page::<EventProps>(page)
    }

    /// A negative `limit` means no limit (SQLite's `LIMIT -1`).
    async fn events_after(&self, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
        let limit = if limit < 0 { i64::MAX } else { limit };
        self.single(cypher!("events_after").param("after", after).param("limit", limit))
            .await?
            .decode::<EventProps>("event")
    }

    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        let deleted: i64 = self.single(cypher!("purge_events").param("before", ts(&before))).await?.value("deleted")?;
        u64::try_from(deleted).map_err(|_| internal("purge_events", format!("negative count {deleted}")))
    }

    // ---- whole store ----

    /// Datastores, live containers, live fields, every edge (retired ones included), evidence,
    /// metadata, events: the embedded store's records in its order.
    ///
    /// Deleted containers and fields are not exported: `Record` has no way to say "deleted", and
    /// exporting them would bring them back to life on import. The edges that still reference
    /// them (retired edges keep their ends) are exported, and `import` gives such an end a node
    /// marked deleted, so export → import → export yields the same records.
    async fn export(&self) -> StoreResult<Vec<Record>> {
        let mut txn = self.begin().await?;
        let result = export_in(&mut txn).await;
        finish(txn, result).await
    }

    /// Loads the records into an empty store, keeping their ids and moving the id counters past
    /// them. Neo4j bounds a transaction's memory, so the rows are written in transactions of
    /// `IMPORT_TX_ROWS`; when one fails, the nodes already imported are deleted again, so a failed
    /// import still leaves the store as it was (empty, its counters and documents untouched).
    async fn import(&self, records: Vec<Record>) -> StoreResult<usize> {
        let total = records.len();
        let rows = import_rows(&records)?;
        drop(records);
        if self.single(cypher!("store_has_data")).await?.value::<bool>("has_data")? {
            return Err(StoreError::Invalid("Import needs an empty store; this one already holds data".to_string()));
        }
        if let Err(e) = import_all(self, rows).await {
            loop {
                match self.single(cypher!("unimport_nodes_batch")).await {
                    Ok(rows) if rows.value::<i64>("deleted")? > 0 => {}
                    Ok(_) => break,
                    Err(undo) => {
                        tracing::error!(error = %undo, "could not undo a failed import; wipe the database before retrying");
                        break;
                    }
                }
            }
            return Err(match e {
                StoreError::Conflict(_) => {
                    StoreError::Invalid("The records repeat an id or a unique name; nothing was imported".to_string())
                }
                other => other,
            });
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
