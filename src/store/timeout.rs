//! A time limit on every store call: a slow or hung database answers `StoreError::Unavailable`
//! (the client sees `UNAVAILABLE`) instead of holding the request, its connection and whatever
//! it locked for as long as the database likes.
//!
//! `TimeoutStore` wraps any [`Store`] and delegates each method through
//! `tokio::time::timeout`. The limit is 30 s by default; `TRIBUTARY_STORE_TIMEOUT_SECS` (a whole
//! number of seconds, at least 1) changes it for every command that opens the store
//! ([`limit_from_env`], read by `server::open_store`).
//!
//! What a timeout does and does not do:
//! - It stops waiting; it cannot always stop the work. The embedded store runs a write on
//!   tokio's blocking pool, and a blocking task cannot be cancelled: a timed-out SQLite write may
//!   still commit a moment later, and it keeps the single writer connection until it ends (later
//!   writes queue behind it and may time out in turn). Embedded reads and a session's calls run
//!   right on the calling task's thread, so the limit cannot cut them short at all: they
//!   are single indexed statements, and SQLite's own busy timeout (10 s) bounds their waiting.
//!   A client that got `UNAVAILABLE` for a write must therefore read before retrying, or rely
//!   on the write being idempotent (upserts, OpenLineage events deduplicated by fingerprint). A
//!   Neo4j call is a future: dropping it drops the Bolt request, and the server rolls the
//!   transaction back when the connection is reset.
//! - `export` and `import` are not limited: they move the whole store at once, only the CLI
//!   (`tributary export` / `import`) calls them, and a big store legitimately takes minutes.
//! - `kind()` is the inner store's, so metrics keep their `store` label.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;

use super::{GraphAround, GraphScope, PriorEvidence, Record, Store, StoreError, StoreResult};
use crate::domain::{
    AssertionBatch, AssertionSummary, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput, Direction,
    Edge, EdgeFilter, EdgePatch, End, EventFilter, EventOutcome, Evidence, Field, Id, MetadataAssertion, NewEdge, Page,
    PageRequest, StoredEvent, Timestamp,
};

/// The limit when `TRIBUTARY_STORE_TIMEOUT_SECS` is not set.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(30);
/// The environment variable that sets the limit, in whole seconds.
pub const LIMIT_ENV: &str = "TRIBUTARY_STORE_TIMEOUT_SECS";

/// The limit `TRIBUTARY_STORE_TIMEOUT_SECS` asks for, or [`DEFAULT_LIMIT`] when it is unset or
/// empty. Anything but a whole number of seconds from 1 up is refused with a message saying so,
/// so a typo fails at start instead of silently running without the limit the operator chose.
pub fn limit_from_env() -> StoreResult<Duration> {
    match std::env::var(LIMIT_ENV) {
        Ok(v) if !v.trim().is_empty() => parse_limit(&v),
        _ => Ok(DEFAULT_LIMIT),
    }
}

fn parse_limit(v: &str) -> StoreResult<Duration> {
    match v.trim().parse::<u64>() {
        Ok(secs) if secs >= 1 => Ok(Duration::from_secs(secs)),
        _ => Err(StoreError::Invalid(format!(
            "{LIMIT_ENV} must be a whole number of seconds, 1 or more (for example 30); got {v:?}"
        ))),
    }
}

/// A store whose every call (but `export` and `import`) gives up after `limit`.
pub struct TimeoutStore {
    inner: std::sync::Arc<dyn Store>,
    limit: Duration,
}

impl TimeoutStore {
    pub fn new(inner: impl Store, limit: Duration) -> Self {
        TimeoutStore { inner: std::sync::Arc::new(inner), limit }
    }

    pub fn limit(&self) -> Duration {
        self.limit
    }

    pub fn inner(&self) -> &dyn Store {
        self.inner.as_ref()
    }

    /// Runs one call of the inner store within the limit. `operation` names the trait method,
    /// for the log.
    async fn within<T>(&self, operation: &'static str, call: impl Future<Output = StoreResult<T>>) -> StoreResult<T> {
        let started = std::time::Instant::now();
        match tokio::time::timeout(self.limit, call).await {
            Ok(result) => {
                crate::metrics::store_call(self.inner.kind(), operation, started.elapsed().as_secs_f64());
                result
            }
            Err(_elapsed) => {
                tracing::warn!(
                    store = self.inner.kind(),
                    operation,
                    limit_ms = u64::try_from(self.limit.as_millis()).unwrap_or(u64::MAX),
                    "store call timed out"
                );
                Err(StoreError::Unavailable(format!("the store did not answer within {}", seconds(self.limit))))
            }
        }
    }
}

/// `30 s`, or `0.25 s` for the short limits tests use.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

#[async_trait]
impl Store for TimeoutStore {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    async fn ping(&self) -> StoreResult<()> {
        self.within("ping", self.inner.ping()).await
    }
    async fn session(&self) -> StoreResult<Option<std::sync::Arc<dyn Store>>> {
        // Waiting for the writer counts against the limit; the session's calls are limited too.
        let session = self.within("session", self.inner.session()).await?;
        Ok(session
            .map(|inner| std::sync::Arc::new(TimeoutStore { inner, limit: self.limit }) as std::sync::Arc<dyn Store>))
    }
    async fn commit_session(&self) -> StoreResult<()> {
        self.within("commit_session", self.inner.commit_session()).await
    }

    // ---- catalog ----
    async fn upsert_datastore(&self, input: DatastoreInput) -> StoreResult<Datastore> {
        self.within("upsert_datastore", self.inner.upsert_datastore(input)).await
    }
    async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
        self.within("datastores_by_ids", self.inner.datastores_by_ids(ids)).await
    }
    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        self.within("list_datastores", self.inner.list_datastores()).await
    }
    async fn delete_datastore(&self, id: Id) -> StoreResult<bool> {
        self.within("delete_datastore", self.inner.delete_datastore(id)).await
    }
    async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        self.within("upsert_container", self.inner.upsert_container(input)).await
    }
    async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>> {
        self.within("containers_by_ids", self.inner.containers_by_ids(ids)).await
    }
    async fn list_containers(
        &self,
        datastore_id: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Container>> {
        self.within("list_containers", self.inner.list_containers(datastore_id, name, page)).await
    }
    async fn containers_by_names(&self, names: &[String], datastores: Option<&[Id]>) -> StoreResult<Vec<Container>> {
        self.within("containers_by_names", self.inner.containers_by_names(names, datastores)).await
    }
    async fn delete_container(&self, id: Id) -> StoreResult<bool> {
        self.within("delete_container", self.inner.delete_container(id)).await
    }
    async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        self.within("fields_by_ids", self.inner.fields_by_ids(ids)).await
    }
    async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        self.within("fields_of_containers", self.inner.fields_of_containers(ids)).await
    }
    async fn field_names_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
        self.within("field_names_of_containers", self.inner.field_names_of_containers(ids)).await
    }
    async fn container_fields(
        &self,
        container_id: Id,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Field>> {
        self.within("container_fields", self.inner.container_fields(container_id, name, page)).await
    }
    async fn delete_field(&self, id: Id) -> StoreResult<bool> {
        self.within("delete_field", self.inner.delete_field(id)).await
    }
    async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        self.within("container_stats", self.inner.container_stats(ids)).await
    }
    async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
        self.within("field_counts", self.inner.field_counts(ids)).await
    }
    async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        self.within("fields_with_lineage", self.inner.fields_with_lineage(ids)).await
    }

    // ---- edges ----
    async fn create_edges(&self, edges: Vec<NewEdge>, skip_existing: bool, now: Timestamp) -> StoreResult<Vec<Edge>> {
        self.within("create_edges", self.inner.create_edges(edges, skip_existing, now)).await
    }
    async fn live_container_edge_exists(&self, source: Id, target: Id) -> StoreResult<bool> {
        self.within("live_container_edge_exists", self.inner.live_container_edge_exists(source, target)).await
    }
    async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
        self.within("update_edge", self.inner.update_edge(id, patch)).await
    }
    async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()> {
        self.within("retire_edges", self.inner.retire_edges(ids, now)).await
    }
    async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()> {
        self.within("delete_edges", self.inner.delete_edges(ids)).await
    }
    async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        self.within("edges_by_ids", self.inner.edges_by_ids(ids)).await
    }
    async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
        self.within("list_edges", self.inner.list_edges(filter, page)).await
    }
    async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        self.within("edges_touching_containers", self.inner.edges_touching_containers(ids)).await
    }
    async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        self.within("edges_touching_fields", self.inner.edges_touching_fields(ids)).await
    }
    async fn evidence_for_edges(&self, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>> {
        self.within("evidence_for_edges", self.inner.evidence_for_edges(edge_ids)).await
    }
    async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()> {
        self.within("put_evidence", self.inner.put_evidence(evidence)).await
    }

    // ---- traversal ----
    async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        self.within("container_edges_of", self.inner.container_edges_of(ids, direction)).await
    }
    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        self.within("field_edges_of", self.inner.field_edges_of(ids, direction)).await
    }
    async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
        self.within("container_graph_around", self.inner.container_graph_around(scope)).await
    }

    // ---- provider assertions ----
    async fn apply_assertions(&self, batch: AssertionBatch, now: Timestamp) -> StoreResult<AssertionSummary> {
        self.within("apply_assertions", self.inner.apply_assertions(batch, now)).await
    }
    async fn put_metadata(&self, rows: Vec<MetadataAssertion>) -> StoreResult<()> {
        self.within("put_metadata", self.inner.put_metadata(rows)).await
    }
    async fn metadata_for_container(&self, container_id: Id) -> StoreResult<Vec<MetadataAssertion>> {
        self.within("metadata_for_container", self.inner.metadata_for_container(container_id)).await
    }
    async fn next_operation_id(&self) -> StoreResult<Id> {
        self.within("next_operation_id", self.inner.next_operation_id()).await
    }
    async fn evidence_by_keys(&self, keys: &[String]) -> StoreResult<Vec<Evidence>> {
        self.within("evidence_by_keys", self.inner.evidence_by_keys(keys)).await
    }
    async fn live_evidence_of_key(&self, key: &str) -> StoreResult<Vec<PriorEvidence>> {
        self.within("live_evidence_of_key", self.inner.live_evidence_of_key(key)).await
    }
    async fn live_edges_touching_ends(&self, ends: &[End], source_type: &str) -> StoreResult<Vec<Edge>> {
        self.within("live_edges_touching_ends", self.inner.live_edges_touching_ends(ends, source_type)).await
    }

    // ---- the event log ----
    async fn insert_event(&self, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
        self.within("insert_event", self.inner.insert_event(event)).await
    }
    async fn finish_event(
        &self,
        id: Id,
        status: &str,
        errors: serde_json::Value,
        summary: serde_json::Value,
    ) -> StoreResult<()> {
        self.within("finish_event", self.inner.finish_event(id, status, errors, summary)).await
    }
    async fn insert_events(&self, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
        self.within("insert_events", self.inner.insert_events(events)).await
    }
    async fn finish_events(&self, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
        self.within("finish_events", self.inner.finish_events(outcomes)).await
    }
    async fn run_event_states(&self, run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
        self.within("run_event_states", self.inner.run_event_states(run_id)).await
    }
    async fn list_events(&self, filter: &EventFilter, page: PageRequest) -> StoreResult<Page<StoredEvent>> {
        self.within("list_events", self.inner.list_events(filter, page)).await
    }
    async fn events_after(&self, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
        self.within("events_after", self.inner.events_after(after, limit)).await
    }
    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        self.within("purge_events", self.inner.purge_events(before)).await
    }

    // ---- small documents ----
    async fn put_doc(&self, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
        self.within("put_doc", self.inner.put_doc(kind, key, value)).await
    }
    async fn get_doc(&self, kind: &str, key: &str) -> StoreResult<Option<serde_json::Value>> {
        self.within("get_doc", self.inner.get_doc(kind, key)).await
    }
    async fn list_docs(&self, kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
        self.within("list_docs", self.inner.list_docs(kind)).await
    }

    // ---- whole store: not limited (see the module comment) ----
    async fn export(&self) -> StoreResult<Vec<Record>> {
        self.inner.export().await
    }
    async fn import(&self, records: Vec<Record>) -> StoreResult<usize> {
        self.inner.import(records).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_whole_seconds_from_one_up() {
        assert_eq!(parse_limit("5").ok(), Some(Duration::from_secs(5)));
        assert_eq!(parse_limit(" 120 ").ok(), Some(Duration::from_secs(120)));
        for bad in ["0", "-1", "1.5", "30s", "abc"] {
            let Err(StoreError::Invalid(m)) = parse_limit(bad) else { panic!("{bad:?} was accepted") };
            assert!(m.contains(LIMIT_ENV), "{m}");
        }
    }

    #[test]
    fn seconds_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25 s");
    }
}
