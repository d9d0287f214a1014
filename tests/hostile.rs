//! Hostile input: what an attacker or a broken client can send, and what it must not achieve.
//!
//! - `internal_errors_are_masked`: a store that fails with a driver message; the client sees
//!   `INTERNAL` (or a bare 500 / 503) and a generic message, the log sees the detail.
//! - `a_slow_store_answers_unavailable`: a store that hangs behind `TimeoutStore` with a short
//!   limit; the client gets `UNAVAILABLE` in bounded time.
//! - `hostile_corpus_embedded` / `hostile_corpus_neo4j`: every request in
//!   `tests/fixtures/hostile/*.json` (format in that folder's README) replayed against a running
//!   server with auth on; each must answer what its file expects within 2 s, and leave the store as
//!   it was (compared through `Store::export`); the refused ones must send no statement to the
//!   store beyond authenticating the caller (`tributary_store_queries_total` from `/metrics`).
//! - `fuzz_regressions_replay`: every saved fuzz crasher in
//!   `tests/fixtures/hostile/fuzz-regressions/`, through the fuzz targets' own code
//!   (`fuzz/harness.rs`), counted: at least one per target, and exactly as many as are kept.
//! - `readiness_does_not_wait_for_the_replay_*`: a restart's replay of pending events held at a
//!   known point while `/readyz` answers.
//!
//! Metrics are process-global, so every test here takes `SERIAL` and the statement counts of
//! one request are exact. Without `NEO4J_URI` the Neo4j corpus fails unless
//! `TRIBUTARY_SKIP_NEO4J=1` says to skip it on purpose.

#![allow(clippy::unwrap_used)]

#[path = "../fuzz/harness.rs"]
mod harness;
#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{json, Value};
use tributary::domain::{
    AssertionBatch, AssertionSummary, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput, Direction,
    Edge, EdgeFilter, EdgePatch, End, EventFilter, Evidence, Field, FieldInput, Id, MetadataAssertion, NewEdge, Page,
    PageRequest, StoredEvent, Timestamp,
};
use tributary::store::neo4j::Neo4jStore;
use tributary::store::sqlite::SqliteStore;
use tributary::store::timeout::{TimeoutStore, DEFAULT_LIMIT};
use tributary::store::{GraphScope, Record, Store, StoreError, StoreResult};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const SECRET: &str = "secret driver detail";

// ---------------------------------------------------------------- log capture

/// Everything the service logs while these tests run (one global subscriber per process).
fn log() -> &'static Mutex<Vec<u8>> {
    static LOG: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();
    let log = LOG.get_or_init(|| Mutex::new(Vec::new()));
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        let _ = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(|| LogWriter)
            .try_init();
    });
    log
}

struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        log().lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_text() -> String {
    String::from_utf8_lossy(&log().lock().unwrap()).into_owned()
}

// ---------------------------------------------------------------- failure injection

/// Which calls fail, which are slow and which are held until released; `"*"` means every call.
#[derive(Default)]
struct Faults {
    failing: Mutex<HashSet<&'static str>>,
    slow: Mutex<HashMap<&'static str, Duration>>,
    held: Mutex<HashSet<&'static str>>,
    /// Calls waiting at a hold now.
    waiting: std::sync::atomic::AtomicUsize,
    /// Whether the store says a concurrent writer can fail its sessions (as Neo4j's).
    conflicts: std::sync::atomic::AtomicBool,
}

impl Faults {
    /// Calls of `op` wait (before reaching the store) until `release`.
    fn hold(&self, op: &'static str) {
        self.held.lock().unwrap().insert(op);
    }
    fn release(&self, op: &'static str) {
        self.held.lock().unwrap().remove(op);
    }
    fn waiting(&self) -> usize {
        self.waiting.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn fail(&self, op: &'static str) {
        self.failing.lock().unwrap().insert(op);
    }
    fn slow(&self, op: &'static str, d: Duration) {
        self.slow.lock().unwrap().insert(op, d);
    }
    fn clear(&self) {
        self.held.lock().unwrap().clear();
        self.failing.lock().unwrap().clear();
        self.slow.lock().unwrap().clear();
    }
}

/// A real embedded store whose calls can be made to fail with a driver-like message or to hang
/// first, by name (deterministic: only the calls named, every time).
struct FaultyStore {
    inner: Arc<dyn Store>,
    faults: Arc<Faults>,
}

impl FaultyStore {
    async fn gate(&self, op: &'static str) -> StoreResult<()> {
        if self.faults.held.lock().unwrap().contains(op) {
            self.faults.waiting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            while self.faults.held.lock().unwrap().contains(op) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            self.faults.waiting.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
        let delay = {
            let slow = self.faults.slow.lock().unwrap();
            slow.get(op).or_else(|| slow.get("*")).copied()
        };
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        let fail = {
            let failing = self.faults.failing.lock().unwrap();
            failing.contains(op) || failing.contains("*")
        };
        if fail {
            return Err(StoreError::Internal(format!(
                "{SECRET}: bolt://10.20.30.40:7687 refused user neo4j password hunter2 in {op}"
            )));
        }
        Ok(())
    }
}

/// `self.gate(op)` then the inner store's method of the same name.
macro_rules! delegate {
    ($self:ident, $op:ident ( $($arg:expr),* )) => {{
        $self.gate(stringify!($op)).await?;
        $self.inner.$op($($arg),*).await
    }};
}

#[async_trait]
impl Store for FaultyStore {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn session_conflicts(&self) -> bool {
        self.faults.conflicts.load(std::sync::atomic::Ordering::SeqCst) || self.inner.session_conflicts()
    }
    async fn ping(&self) -> StoreResult<()> {
        delegate!(self, ping())
    }
    async fn session(&self) -> StoreResult<Option<Arc<dyn Store>>> {
        self.gate("session").await?;
        let session = self.inner.session().await?;
        Ok(session.map(|inner| Arc::new(FaultyStore { inner, faults: self.faults.clone() }) as Arc<dyn Store>))
    }
    async fn commit_session(&self) -> StoreResult<()> {
        delegate!(self, commit_session())
    }
    async fn upsert_datastore(&self, input: DatastoreInput) -> StoreResult<Datastore> {
        delegate!(self, upsert_datastore(input))
    }
    async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>> {
        delegate!(self, datastores_by_ids(ids))
    }
    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        delegate!(self, list_datastores())
    }
    async fn delete_datastore(&self, id: Id) -> StoreResult<bool> {
        delegate!(self, delete_datastore(id))
    }
    async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        delegate!(self, upsert_container(input))
    }
    async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>> {
        delegate!(self, containers_by_ids(ids))
    }
    async fn list_containers(
        &self,
        d: Option<Id>,
        name: Option<&str>,
        page: PageRequest,
    ) -> StoreResult<Page<Container>> {
        delegate!(self, list_containers(d, name, page))
    }
    async fn containers_by_names(&self, names: &[String], ds: Option<&[Id]>) -> StoreResult<Vec<Container>> {
        delegate!(self, containers_by_names(names, ds))
    }
    async fn search_containers(&self, needle: &str, ds: Option<&[Id]>, limit: usize) -> StoreResult<Vec<Container>> {
        delegate!(self, search_containers(needle, ds, limit))
    }
    async fn search_fields(&self, needle: &str, ds: Option<&[Id]>, limit: usize) -> StoreResult<Vec<Field>> {
        delegate!(self, search_fields(needle, ds, limit))
    }
    async fn search_externals(&self, needle: &str, limit: usize) -> StoreResult<Vec<(String, String)>> {
        delegate!(self, search_externals(needle, limit))
    }
    async fn delete_container(&self, id: Id) -> StoreResult<bool> {
        delegate!(self, delete_container(id))
    }
    async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        delegate!(self, fields_by_ids(ids))
    }
    async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>> {
        delegate!(self, fields_of_containers(ids))
    }
    async fn container_fields(&self, c: Id, name: Option<&str>, page: PageRequest) -> StoreResult<Page<Field>> {
        delegate!(self, container_fields(c, name, page))
    }
    async fn delete_field(&self, id: Id) -> StoreResult<bool> {
        delegate!(self, delete_field(id))
    }
    async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        delegate!(self, container_stats(ids))
    }
    async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
        delegate!(self, field_counts(ids))
    }
    async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        delegate!(self, fields_with_lineage(ids))
    }
    async fn create_edges(&self, edges: Vec<NewEdge>, skip: bool, now: Timestamp) -> StoreResult<Vec<Edge>> {
        delegate!(self, create_edges(edges, skip, now))
    }
    async fn live_container_edge_exists(&self, s: Id, t: Id) -> StoreResult<bool> {
        delegate!(self, live_container_edge_exists(s, t))
    }
    async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
        delegate!(self, update_edge(id, patch))
    }
    async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()> {
        delegate!(self, retire_edges(ids, now))
    }
    async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()> {
        delegate!(self, delete_edges(ids))
    }
    async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        delegate!(self, edges_by_ids(ids))
    }
    async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
        delegate!(self, list_edges(filter, page))
    }
    async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        delegate!(self, edges_touching_containers(ids))
    }
    async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>> {
        delegate!(self, edges_touching_fields(ids))
    }
    async fn evidence_for_edges(&self, ids: &[Id]) -> StoreResult<Vec<Evidence>> {
        delegate!(self, evidence_for_edges(ids))
    }
    async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()> {
        delegate!(self, put_evidence(evidence))
    }
    async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        delegate!(self, container_edges_of(ids, direction))
    }
    async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
        delegate!(self, field_edges_of(ids, direction))
    }
    async fn container_edges_live_at(&self, ids: &[Id], d: Direction, at: &[Timestamp]) -> StoreResult<Vec<Edge>> {
        delegate!(self, container_edges_live_at(ids, d, at))
    }
    async fn field_edges_live_at(&self, ids: &[Id], d: Direction, at: &[Timestamp]) -> StoreResult<Vec<Edge>> {
        delegate!(self, field_edges_live_at(ids, d, at))
    }
    async fn container_edges_within_at(&self, s: &[Id], t: &[Id], at: &[Timestamp]) -> StoreResult<Vec<Edge>> {
        delegate!(self, container_edges_within_at(s, t, at))
    }
    async fn container_edge_flags_at(&self, scope: &GraphScope, at: Timestamp) -> StoreResult<(Vec<Id>, Vec<Id>)> {
        delegate!(self, container_edge_flags_at(scope, at))
    }
    async fn first_edge_created(&self) -> StoreResult<Option<tributary::domain::Timestamp>> {
        delegate!(self, first_edge_created())
    }
    async fn count_neighbours(
        &self,
        ids: &[Id],
        direction: Direction,
        over_fields: bool,
        exclude: &[Id],
    ) -> StoreResult<Vec<(Id, i64)>> {
        delegate!(self, count_neighbours(ids, direction, over_fields, exclude))
    }
    async fn apply_assertions(&self, batch: AssertionBatch, now: Timestamp) -> StoreResult<AssertionSummary> {
        delegate!(self, apply_assertions(batch, now))
    }
    async fn put_metadata(&self, rows: Vec<MetadataAssertion>) -> StoreResult<()> {
        delegate!(self, put_metadata(rows))
    }
    async fn metadata_for_container(&self, id: Id) -> StoreResult<Vec<MetadataAssertion>> {
        delegate!(self, metadata_for_container(id))
    }
    async fn container_metadata_of(&self, ids: &[Id]) -> StoreResult<Vec<MetadataAssertion>> {
        delegate!(self, container_metadata_of(ids))
    }
    async fn next_operation_id(&self) -> StoreResult<Id> {
        delegate!(self, next_operation_id())
    }
    async fn evidence_by_keys(&self, keys: &[String]) -> StoreResult<Vec<Evidence>> {
        delegate!(self, evidence_by_keys(keys))
    }
    async fn live_edges_touching_ends(&self, ends: &[End], source_type: &str) -> StoreResult<Vec<Edge>> {
        delegate!(self, live_edges_touching_ends(ends, source_type))
    }
    async fn insert_event(&self, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
        delegate!(self, insert_event(event))
    }
    async fn finish_event(&self, id: Id, status: &str, errors: Value, summary: Value) -> StoreResult<()> {
        delegate!(self, finish_event(id, status, errors, summary))
    }
    async fn run_event_states(&self, run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
        delegate!(self, run_event_states(run_id))
    }
    async fn list_events(&self, filter: &EventFilter, page: PageRequest) -> StoreResult<Page<StoredEvent>> {
        delegate!(self, list_events(filter, page))
    }
    async fn events_after(&self, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
        delegate!(self, events_after(after, limit))
    }
    async fn purge_events(&self, before: Timestamp) -> StoreResult<u64> {
        delegate!(self, purge_events(before))
    }
    async fn record_run(&self, record: tributary::domain::RunRecord) -> StoreResult<()> {
        delegate!(self, record_run(record))
    }
    async fn jobs_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<tributary::domain::Job>> {
        delegate!(self, jobs_by_ids(ids))
    }
    async fn job_by_name(&self, namespace: &str, name: &str) -> StoreResult<Option<tributary::domain::Job>> {
        delegate!(self, job_by_name(namespace, name))
    }
    async fn list_jobs(
        &self,
        filter: &tributary::domain::JobFilter,
        page: PageRequest,
    ) -> StoreResult<Page<tributary::domain::Job>> {
        delegate!(self, list_jobs(filter, page))
    }
    async fn child_jobs(&self, ids: &[Id]) -> StoreResult<Vec<tributary::domain::Job>> {
        delegate!(self, child_jobs(ids))
    }
    async fn runs_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<tributary::domain::Run>> {
        delegate!(self, runs_by_ids(ids))
    }
    async fn runs_by_run_ids(&self, run_ids: &[String]) -> StoreResult<Vec<tributary::domain::Run>> {
        delegate!(self, runs_by_run_ids(run_ids))
    }
    async fn runs_of_job(
        &self,
        job_id: Id,
        filter: &tributary::domain::RunFilter,
        page: PageRequest,
    ) -> StoreResult<Page<tributary::domain::Run>> {
        delegate!(self, runs_of_job(job_id, filter, page))
    }
    async fn child_runs(&self, run_ids: &[String]) -> StoreResult<Vec<tributary::domain::Run>> {
        delegate!(self, child_runs(run_ids))
    }
    async fn job_io(&self, job_ids: &[Id]) -> StoreResult<Vec<(Id, tributary::domain::IoEntry)>> {
        delegate!(self, job_io(job_ids))
    }
    async fn run_io(&self, run_ids: &[Id]) -> StoreResult<Vec<(Id, tributary::domain::IoEntry)>> {
        delegate!(self, run_io(run_ids))
    }
    async fn jobs_of_ends(&self, ends: &[End]) -> StoreResult<Vec<(Id, tributary::domain::IoEntry)>> {
        delegate!(self, jobs_of_ends(ends))
    }
    async fn replace_io_ends(
        &self,
        from: &[End],
        to: &End,
        change: Option<tributary::domain::NewChange>,
    ) -> StoreResult<u64> {
        delegate!(self, replace_io_ends(from, to, change))
    }
    async fn external_placeholders(
        &self,
        needle: &str,
        source_type: &str,
    ) -> StoreResult<Vec<(String, String, String)>> {
        delegate!(self, external_placeholders(needle, source_type))
    }
    async fn failed_latest_runs(
        &self,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        limit: i64,
    ) -> StoreResult<Vec<tributary::domain::Run>> {
        delegate!(self, failed_latest_runs(since, until, limit))
    }
    async fn put_doc(&self, kind: &str, key: &str, value: Value) -> StoreResult<()> {
        delegate!(self, put_doc(kind, key, value))
    }
    async fn get_doc(&self, kind: &str, key: &str) -> StoreResult<Option<Value>> {
        delegate!(self, get_doc(kind, key))
    }
    async fn list_docs(&self, kind: &str) -> StoreResult<Vec<(String, Value)>> {
        delegate!(self, list_docs(kind))
    }
    async fn export(&self) -> StoreResult<Vec<Record>> {
        delegate!(self, export())
    }
    async fn import(&self, records: Vec<Record>) -> StoreResult<usize> {
        delegate!(self, import(records))
    }
}

// ---------------------------------------------------------------- servers

struct Server {
    url: String,
    store: Arc<dyn Store>,
    /// Bearer token of an unrestricted admin (auth on only).
    admin: Option<String>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// Serves `store` on port 0, with auth on (as `serve` runs) or off.
async fn serve(store: Arc<dyn Store>, auth: bool) -> Server {
    let admin = if auth {
        Some(
            tributary::auth::Auth::new(store.clone(), true)
                .create_token("hostile-admin", tributary::auth::Role::Admin, None)
                .await
                .expect("create the admin token"),
        )
    } else {
        None
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let lineage = tributary::service::Lineage::new(store.clone());
    tokio::spawn(async move {
        let _ = tributary::server::run_lineage(listener, lineage, auth, &[], async {
            let _ = rx.await;
        })
        .await;
    });
    Server { url, store, admin, _shutdown: tx }
}

fn faulty_store() -> (FaultyStore, Arc<Faults>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let faults = Arc::new(Faults::default());
    (FaultyStore { inner: Arc::new(SqliteStore::open(dir.path()).unwrap()), faults: faults.clone() }, faults, dir)
}

async fn gql(url: &str, query: &str) -> (u16, Value, Duration) {
    let start = Instant::now();
    let r =
        reqwest::Client::new().post(format!("{url}/graphql")).json(&json!({ "query": query })).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null), start.elapsed())
}

fn first_error(v: &Value) -> (&str, &str) {
    let e = &v["errors"][0];
    (e["extensions"]["code"].as_str().unwrap_or(""), e["message"].as_str().unwrap_or(""))
}

// ---------------------------------------------------------------- masking and timeouts

/// STYLE 7: a driver error reaches the client as a code and a generic message; the log has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn internal_errors_are_masked() {
    let _serial = SERIAL.lock().await;
    log();
    let (store, faults, _dir) = faulty_store();
    let store: Arc<dyn Store> = Arc::new(store);
    let ds = store
        .upsert_datastore(DatastoreInput { name: "w".into(), kind: "snowflake".into(), ..Default::default() })
        .await
        .unwrap();
    let (c, _) = store
        .upsert_container(ContainerInput { datastore_id: ds.id, name: "orders".into(), ..Default::default() })
        .await
        .unwrap();
    let server = serve(store, false).await;
    let url = &server.url;

    // A resolver that calls the store itself, one that goes through a data loader, one that goes
    // through the service, and a mutation.
    for (op, query) in [
        ("list_datastores", "{ datastores { id name } }".to_string()),
        ("containers_by_ids", format!("{{ container(id: {}) {{ name }} }}", c.id)),
        ("container_edges_of", format!("{{ lineageGraph(containerId: {}) {{ nodes {{ id }} }} }}", c.id)),
        ("upsert_datastore", "mutation { upsertDatastore(input: {name: \"x\", type: \"y\"}) { id } }".to_string()),
    ] {
        faults.clear();
        faults.fail(op);
        let (status, v, _) = gql(url, &query).await;
        let text = v.to_string();
        assert_eq!(status, 200, "{op}: {text}");
        assert_eq!(first_error(&v), ("INTERNAL", "Internal error; the server log has the details"), "{op}: {text}");
        assert!(!text.contains(SECRET) && !text.contains("hunter2") && !text.contains("10.20.30.40"), "{op}: {text}");
    }
    let logged = log_text();
    assert!(logged.contains(SECRET), "the log must keep the detail; it has:\n{logged}");
    assert!(logged.contains("store failed"), "{logged}");

    // REST: storing the event fails; the report says to retry and nothing more.
    faults.clear();
    faults.fail("insert_event");
    let event = json!({
        "eventType": "START", "eventTime": "2024-01-01T00:00:00Z",
        "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"}, "job": {"namespace": "n", "name": "j"},
        "producer": "https://example.com/p", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
    });
    let r = reqwest::Client::new().post(format!("{url}/api/v1/lineage")).json(&event).send().await.unwrap();
    assert_eq!(r.status(), 500);
    let text = r.text().await.unwrap();
    assert!(!text.contains(SECRET) && !text.contains("hunter2"), "{text}");
    // Applying it fails after it was stored: the report is masked the same way.
    faults.clear();
    faults.fail("finish_event");
    faults.fail("list_datastores");
    let r = reqwest::Client::new().post(format!("{url}/api/v1/lineage")).json(&json!([event])).send().await.unwrap();
    let text = r.text().await.unwrap();
    assert!(!text.contains(SECRET) && !text.contains("hunter2"), "{text}");

    // Readiness says the store is down, not why.
    faults.clear();
    faults.fail("ping");
    let r = reqwest::get(format!("{url}/readyz")).await.unwrap();
    assert_eq!(r.status(), 503);
    let text = r.text().await.unwrap();
    assert!(!text.contains(SECRET), "{text}");
}

/// With auth on, a failing identity lookup is masked too (the caller is not told why).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_identity_lookup_is_masked() {
    let _serial = SERIAL.lock().await;
    let (store, faults, _dir) = faulty_store();
    let server = serve(Arc::new(store), true).await;
    faults.fail("get_doc");
    let token = server.admin.as_deref().unwrap();
    let r = reqwest::Client::new()
        .post(format!("{}/graphql", server.url))
        .bearer_auth(token)
        .json(&json!({"query": "{ datastores { id } }"}))
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(first_error(&v), ("INTERNAL", "Internal error; the server log has the details"), "{v}");
    assert!(!v.to_string().contains(SECRET), "{v}");
    let r = reqwest::Client::new()
        .post(format!("{}/api/v1/lineage", server.url))
        .header("authorization", format!("Bearer {token}"))
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 500);
    let text = r.text().await.unwrap();
    assert!(!text.contains(SECRET), "{text}");
}

/// A store that hangs answers `UNAVAILABLE` once the limit passes, not when the store wakes up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_store_answers_unavailable() {
    let _serial = SERIAL.lock().await;
    log();
    let (store, faults, _dir) = faulty_store();
    let limit = Duration::from_millis(300);
    let store: Arc<dyn Store> = Arc::new(TimeoutStore::new(store, limit));
    let server = serve(store.clone(), false).await;
    let url = &server.url;
    // Far longer than any bounded wait below: a request that waited for the store would show.
    let hang = Duration::from_secs(30);
    let bound = Duration::from_secs(5);

    faults.slow("list_datastores", hang);
    let (status, v, took) = gql(url, "{ datastores { id } }").await;
    eprintln!("slow list_datastores answered in {took:?}");
    assert_eq!(status, 200);
    assert_eq!(first_error(&v), ("UNAVAILABLE", "The store is unavailable or too slow; try again"), "{v}");
    assert!(took >= limit && took < bound, "answered after {took:?}");

    // A write that hangs, through the service.
    faults.clear();
    faults.slow("upsert_datastore", hang);
    let (_, v, took) = gql(url, "mutation { upsertDatastore(input: {name: \"late\", type: \"x\"}) { id } }").await;
    assert_eq!(first_error(&v).0, "UNAVAILABLE", "{v}");
    assert!(took < bound, "answered after {took:?}");

    // Readiness.
    faults.clear();
    faults.slow("ping", hang);
    let start = Instant::now();
    let r = reqwest::get(format!("{url}/readyz")).await.unwrap();
    assert_eq!(r.status(), 503);
    assert!(start.elapsed() < bound, "readyz answered after {:?}", start.elapsed());

    // Every call hanging: an OpenLineage event answers (500 with a retry message) in bounded time.
    faults.slow("*", hang);
    let start = Instant::now();
    let r = reqwest::Client::new()
        .post(format!("{url}/api/v1/lineage"))
        .json(&json!({
            "eventType": "START", "eventTime": "2024-01-01T00:00:00Z",
            "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"}, "job": {"namespace": "n", "name": "j"},
            "producer": "https://example.com/p", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
        }))
        .send()
        .await
        .unwrap();
    let took = start.elapsed();
    eprintln!("OpenLineage event over a hung store answered {} in {took:?}", r.status());
    assert!(r.status().is_server_error(), "{}", r.status());
    assert!(took < bound, "answered after {took:?}");

    let logged = log_text();
    assert!(logged.contains("store call timed out") && logged.contains("operation=\"list_datastores\""), "{logged}");

    // The store works again once it is fast, and the late write never happened (it was still
    // asleep, before the inner store, when it was given up).
    faults.clear();
    let (_, v, _) = gql(url, "{ datastores { name } }").await;
    assert_eq!(v["data"]["datastores"], json!([]), "{v}");
}

/// The limit the service reads from the environment, and its refusal of nonsense.
#[test]
fn the_timeout_comes_from_the_environment() {
    let _serial = SERIAL.blocking_lock();
    // This test binary never sets it elsewhere.
    std::env::remove_var(tributary::store::timeout::LIMIT_ENV);
    assert_eq!(tributary::store::timeout::limit_from_env().unwrap(), DEFAULT_LIMIT);
    std::env::set_var(tributary::store::timeout::LIMIT_ENV, "7");
    assert_eq!(tributary::store::timeout::limit_from_env().unwrap(), Duration::from_secs(7));
    std::env::set_var(tributary::store::timeout::LIMIT_ENV, "0");
    assert!(matches!(tributary::store::timeout::limit_from_env(), Err(StoreError::Invalid(_))));
    std::env::remove_var(tributary::store::timeout::LIMIT_ENV);
}

// ---------------------------------------------------------------- the corpus

// ---------------------------------------------------------------- store sessions

const SESSION_NS: &str = "postgres://wh.example:5432";

/// A store with a warehouse datastore mapped to `SESSION_NS` and tables `raw_orders` and
/// `orders` (fields id, email) in analytics.public.
async fn session_warehouse(store: &Arc<dyn Store>) -> (Id, Id) {
    let ds = store
        .upsert_datastore(DatastoreInput {
            name: "warehouse".into(),
            kind: "postgresql".into(),
            namespaces: vec![SESSION_NS.into()],
            ..Default::default()
        })
        .await
        .unwrap();
    let mut ids = Vec::new();
    for name in ["raw_orders", "orders"] {
        let fields = ["id", "email"].iter().map(|f| FieldInput { name: (*f).into(), ..Default::default() }).collect();
        let input = ContainerInput {
            datastore_id: ds.id,
            name: name.into(),
            database: Some("analytics".into()),
            schema: Some("public".into()),
            fields,
            ..Default::default()
        };
        ids.push(store.upsert_container(input).await.unwrap().0.id);
    }
    (ids[0], ids[1])
}

fn complete_event(run: &str, input: &str, output: &str) -> Value {
    json!({
        "eventType": "COMPLETE",
        "eventTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "producer": "https://example.com/hostile-tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "nightly", "name": format!("load_{output}")},
        "inputs": [{"namespace": SESSION_NS, "name": format!("analytics.public.{input}")}],
        "outputs": [{"namespace": SESSION_NS, "name": format!("analytics.public.{output}")}],
    })
}

async fn live_openlineage_edges(store: &Arc<dyn Store>) -> Vec<(End, End)> {
    let filter = EdgeFilter { source_type: Some("openlineage".into()), ..Default::default() };
    let page = store.list_edges(&filter, PageRequest { page: 1, size: 100 }).await.unwrap();
    page.items.into_iter().map(|e| (e.source, e.target)).collect()
}

/// The embedded store applies a request's events in one transaction. When that transaction
/// cannot commit, every event of the request says `failed` (not `applied`), none of its lineage
/// stays, the events themselves stay stored, and `replay` applies them once the store is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_commit_fails_keeps_its_events_for_replay() {
    let _serial = SERIAL.lock().await;
    log();
    let (store, faults, _dir) = faulty_store();
    let store: Arc<dyn Store> = Arc::new(TimeoutStore::new(store, DEFAULT_LIMIT));
    let (raw, orders) = session_warehouse(&store).await;
    let lineage = tributary::service::Lineage::new(store.clone());
    let caller = tributary::service::Caller::system();
    let events = vec![
        complete_event("7c1d2e6a-0000-4000-8000-000000000001", "raw_orders", "orders"),
        complete_event("7c1d2e6a-0000-4000-8000-000000000002", "orders", "raw_orders"),
    ];

    faults.fail("commit_session");
    let report = lineage.ingest_openlineage(&caller, events.clone()).await.unwrap();
    let statuses: Vec<&str> = report.events.iter().map(|e| e.status).collect();
    assert_eq!(statuses, ["failed", "failed"], "{report:?}");
    assert!(report.events[0].errors.iter().any(|(_, m)| m.contains("retry")), "{report:?}");
    assert!(live_openlineage_edges(&store).await.is_empty(), "a failed commit kept lineage");
    let stored = store.list_events(&EventFilter::default(), PageRequest { page: 1, size: 10 }).await.unwrap();
    assert_eq!(stored.total, 2, "the events themselves are kept");

    faults.clear();
    let replayed = lineage.replay_openlineage(0, &[], |_| {}).await.unwrap();
    assert_eq!(replayed.count("applied"), 2, "{replayed:?}");
    let mut edges = live_openlineage_edges(&store).await;
    edges.sort_by_key(|(s, t)| (s.key(), t.key()));
    let mut want = vec![
        (End::Container { id: raw }, End::Container { id: orders }),
        (End::Container { id: orders }, End::Container { id: raw }),
    ];
    want.sort_by_key(|(s, t)| (s.key(), t.key()));
    assert_eq!(edges, want);

    // Sent again, they are duplicates of applied events: nothing new, nothing failed.
    let again = lineage.ingest_openlineage(&caller, events).await.unwrap();
    assert_eq!(again.count("ignored"), 2, "{again:?}");
}

/// Where a concurrent writer can fail a store's session (Neo4j breaks a deadlock by failing one
/// of the two transactions, and has no savepoints), a request whose session fails is applied
/// again event by event: every event ends `applied`, the lineage and the runs are there once,
/// and the client gets a 200, not a retry. Here the session's commit fails, on each store (the
/// embedded one made to say its sessions can conflict).
async fn a_request_whose_session_a_writer_fails_is_applied_event_by_event(inner: Arc<dyn Store>) {
    let faults = Arc::new(Faults::default());
    let store: Arc<dyn Store> = Arc::new(FaultyStore { inner, faults: faults.clone() });
    let (raw, orders) = session_warehouse(&store).await;
    let lineage = tributary::service::Lineage::new(store.clone());
    let caller = tributary::service::Caller::system();
    let run = "7c1d2e6a-0000-4000-8000-0000000000b1";
    let start = {
        let mut e = complete_event(run, "raw_orders", "orders");
        e["eventType"] = json!("START");
        e
    };
    let events = vec![start, complete_event(run, "raw_orders", "orders")];

    faults.conflicts.store(true, std::sync::atomic::Ordering::SeqCst);
    faults.fail("commit_session");
    let report = lineage.ingest_openlineage(&caller, events.clone()).await.expect("a 200, not a retry");
    let statuses: Vec<&str> = report.events.iter().map(|e| e.status).collect();
    assert_eq!(statuses, ["applied", "applied"], "{report:?}");
    assert_eq!(report.events.iter().map(|e| e.index).collect::<Vec<_>>(), [0, 1], "one report per event, in order");
    assert!(log_text().contains("applying them one by one"), "the fallback is logged");
    assert_eq!(
        live_openlineage_edges(&store).await,
        vec![(End::Container { id: raw }, End::Container { id: orders })],
        "the lineage, once"
    );
    let job = store.job_by_name("nightly", "load_orders").await.unwrap().expect("the job is recorded");
    let runs = store.runs_of_job(job.id, &Default::default(), PageRequest { page: 1, size: 10 }).await.unwrap();
    assert_eq!(runs.total, 1, "one run, recorded once");
    assert_eq!(runs.items[0].state.as_str(), "COMPLETE");
    let stored = store.list_events(&EventFilter::default(), PageRequest { page: 1, size: 10 }).await.unwrap();
    assert!(stored.items.iter().all(|e| e.status == "applied"), "{:?}", stored.items);

    faults.clear();
    let again = lineage.ingest_openlineage(&caller, events).await.unwrap();
    assert_eq!(again.count("ignored"), 2, "sent again, duplicates: {again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_session_a_writer_fails_is_applied_event_by_event_embedded() {
    let _serial = SERIAL.lock().await;
    log();
    let dir = tempfile::tempdir().unwrap();
    a_request_whose_session_a_writer_fails_is_applied_event_by_event(Arc::new(SqliteStore::open(dir.path()).unwrap()))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_session_a_writer_fails_is_applied_event_by_event_neo4j() {
    let _serial = SERIAL.lock().await;
    log();
    let Some(neo) = neo4j_or_skip().await else { return };
    a_request_whose_session_a_writer_fails_is_applied_event_by_event(Arc::new(neo)).await;
}

// ---------------------------------------------------------------- start-up

/// Readiness does not wait for the replay of pending events after a restart (README,
/// "Operations"): `lifecycle::serve_finishing_pending`, what `serve` runs once its store is
/// open, over a store holding an event an earlier process stored and never applied. The replay
/// is held at its first read of the events (`events_after`), so the check cannot race it:
/// `/readyz` answers 200 while the event is still pending, and once released the replay
/// applies it.
async fn readiness_does_not_wait_for_the_replay(inner: Arc<dyn Store>) {
    log();
    let faults = Arc::new(Faults::default());
    let store: Arc<dyn Store> = Arc::new(FaultyStore { inner, faults: faults.clone() });
    let (raw, orders) = session_warehouse(&store).await;
    let run = "7c1d2e6a-0000-4000-8000-0000000000a1";
    let body = complete_event(run, "raw_orders", "orders");
    let a_minute_ago = tributary::domain::now() - chrono::Duration::minutes(1);
    let left = StoredEvent {
        id: 0,
        fingerprint: tributary::ingest::openlineage::event_fingerprint(&body),
        kind: "run_event".into(),
        job_namespace: Some("nightly".into()),
        job_name: Some("load_orders".into()),
        run_id: Some(run.into()),
        event_type: Some("COMPLETE".into()),
        event_time: Some(a_minute_ago),
        received_at: a_minute_ago,
        submitted_by: Some("admin".into()),
        status: "pending".into(),
        errors: json!([]),
        summary: json!({}),
        body,
    };
    store.insert_event(left).await.unwrap();
    let pending = |store: Arc<dyn Store>| async move {
        let filter = EventFilter { status: Some("pending".into()), ..EventFilter::default() };
        store.list_events(&filter, PageRequest { page: 1, size: 1 }).await.unwrap().total
    };
    assert_eq!(pending(store.clone()).await, 1);

    faults.hold("events_after");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let lineage = tributary::service::Lineage::new(store.clone());
    let limits = tributary::api::pushback::Limits::default();
    let serving = tokio::spawn(tributary::lifecycle::serve_finishing_pending(
        listener,
        lineage,
        false,
        &[],
        limits,
        Duration::from_secs(1),
    ));
    let started = Instant::now();
    while faults.waiting() == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "the replay never started:\n{}", log_text());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let ready = client.get(format!("{url}/readyz")).send().await;
    let ready = ready.expect("readiness answers while the replay is held");
    assert_eq!(ready.status(), 200, "readiness waited for the replay of pending events");
    assert_eq!(pending(store.clone()).await, 1, "the held replay finished nothing yet");
    assert!(log_text().contains("events stored but not applied before the last stop"), "{}", log_text());

    faults.release("events_after");
    let started = Instant::now();
    while pending(store.clone()).await > 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "the released replay never finished:\n{}", log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        live_openlineage_edges(&store).await,
        vec![(End::Container { id: raw }, End::Container { id: orders })],
        "the replay applied the pending event"
    );
    serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_does_not_wait_for_the_replay_embedded() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    readiness_does_not_wait_for_the_replay(Arc::new(SqliteStore::open(dir.path()).unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_does_not_wait_for_the_replay_neo4j() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = neo4j_or_skip().await else { return };
    readiness_does_not_wait_for_the_replay(Arc::new(neo)).await;
}

/// A session's reads see its own writes and no one else does until it commits; a failing write
/// inside it is undone alone; a session dropped without committing leaves nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_session_commits_together_and_undoes_a_failed_write_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(TimeoutStore::new(SqliteStore::open(dir.path()).unwrap(), DEFAULT_LIMIT));
    let (raw, orders) = session_warehouse(&store).await;
    let edge = NewEdge {
        source: End::Container { id: raw },
        target: End::Container { id: orders },
        description: None,
        source_type: "user".into(),
        operation: None,
        derived: None,
        transformations: None,
        last_asserted_at: None,
    };

    let session = store.session().await.unwrap().expect("the embedded store has sessions");
    assert!(session.session().await.unwrap().is_none(), "a session does not nest");
    session.put_doc("note", "a", json!(1)).await.unwrap();
    session.create_edges(vec![edge.clone()], false, chrono::Utc::now()).await.unwrap();
    assert_eq!(session.get_doc("note", "a").await.unwrap(), Some(json!(1)), "the session reads its writes");
    assert_eq!(store.get_doc("note", "a").await.unwrap(), None, "others do not see them before the commit");
    // The same edge again is a conflict: that write (with the new edge before it) fails and is
    // undone, the rest stays.
    let back = NewEdge { source: End::Container { id: orders }, target: End::Container { id: raw }, ..edge.clone() };
    let twice = vec![back, edge.clone()];
    assert!(session.create_edges(twice, false, chrono::Utc::now()).await.is_err());
    session.commit_session().await.unwrap();
    assert_eq!(store.get_doc("note", "a").await.unwrap(), Some(json!(1)));
    let live = store.list_edges(&EdgeFilter::default(), PageRequest { page: 1, size: 10 }).await.unwrap();
    assert_eq!(live.total, 1, "only the first edge: the failed write's orders -> raw_orders was undone");
    assert!(session.put_doc("note", "late", json!(2)).await.is_err(), "a committed session takes no more calls");

    let dropped = store.session().await.unwrap().unwrap();
    dropped.put_doc("note", "b", json!(2)).await.unwrap();
    drop(dropped);
    assert_eq!(store.get_doc("note", "b").await.unwrap(), None, "a dropped session rolled back");
    // The writer is free again.
    store.put_doc("note", "c", json!(3)).await.unwrap();
    assert_eq!(store.get_doc("note", "c").await.unwrap(), Some(json!(3)));
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile")
}

struct Fixture {
    name: String,
    spec: Value,
}

fn load_fixtures() -> Vec<Fixture> {
    let mut out: Vec<Fixture> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let spec: Value = serde_json::from_slice(&std::fs::read(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", p.display()));
            Fixture { name, spec }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(out.len() >= 40, "the hostile corpus lost files: {}", out.len());
    out
}

/// Bytes from a `parts` list: `{"text"}`, `{"hex"}`, `{"repeat", "times"}`, and
/// `{"repeat_numbered", "times"}` (with `{n}` replaced by 0, 1, ...).
fn build_parts(parts: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts.as_array().expect("parts is a list") {
        let times = part["times"].as_u64().unwrap_or(1) as usize;
        if let Some(t) = part["text"].as_str() {
            out.extend_from_slice(t.as_bytes());
        } else if let Some(h) = part["hex"].as_str() {
            for byte in h.split_whitespace() {
                out.push(u8::from_str_radix(byte, 16).expect("hex byte"));
            }
        } else if let Some(r) = part["repeat"].as_str() {
            out.reserve(r.len() * times);
            for _ in 0..times {
                out.extend_from_slice(r.as_bytes());
            }
        } else if let Some(r) = part["repeat_numbered"].as_str() {
            for n in 0..times {
                out.extend_from_slice(r.replace("{n}", &n.to_string()).as_bytes());
            }
        } else {
            panic!("unknown part {part}");
        }
    }
    out
}

fn replace_bytes(haystack: Vec<u8>, needle: &[u8], with: &[u8]) -> Vec<u8> {
    if haystack.windows(needle.len()).all(|w| w != needle) {
        return haystack;
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// Values the fixtures name by placeholder.
struct Placeholders {
    datastore: Id,
    container: Id,
}

fn request_body(req: &Value, p: &Placeholders) -> Vec<u8> {
    let mut body = if let Some(g) = req.get("graphql") {
        serde_json::to_vec(g).unwrap()
    } else if let Some(j) = req.get("json") {
        serde_json::to_vec(j).unwrap()
    } else if let Some(t) = req.get("text") {
        t.as_str().expect("text is a string").as_bytes().to_vec()
    } else if let Some(parts) = req.get("parts") {
        build_parts(parts)
    } else {
        Vec::new()
    };
    let year_ahead =
        (chrono::Utc::now() + chrono::Duration::days(365)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (d, c) = (p.datastore.to_string(), p.container.to_string());
    for (needle, with) in [
        ("\"__DATASTORE_ID__\"", d.as_str()),
        ("__DATASTORE_ID__", d.as_str()),
        ("\"__CONTAINER_ID__\"", c.as_str()),
        ("__CONTAINER_ID__", c.as_str()),
        ("__ONE_YEAR_AHEAD__", year_ahead.as_str()),
    ] {
        body = replace_bytes(body, needle.as_bytes(), with.as_bytes());
    }
    if req["gzip"].as_bool() == Some(true) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&body).unwrap();
        body = gz.finish().unwrap();
    }
    body
}

/// The request's path, with `__CONTAINER_ID__` and `__DATASTORE_ID__` filled in.
fn request_path(req: &Value, p: &Placeholders) -> String {
    req["path"]
        .as_str()
        .unwrap()
        .replace("__CONTAINER_ID__", &p.container.to_string())
        .replace("__DATASTORE_ID__", &p.datastore.to_string())
}

/// The store as comparable lines. A token's `last_used` is left out: authenticating writes it
/// (at most once a minute), which is the caller's doing, not the request's.
async fn snapshot(store: &Arc<dyn Store>) -> Result<BTreeMap<String, usize>, StoreError> {
    let mut out = BTreeMap::new();
    for record in store.export().await? {
        let mut v = serde_json::to_value(&record).unwrap();
        if v["record"] == "doc" && v["kind"] == "token" {
            if let Some(o) = v["value"].as_object_mut() {
                o.remove("last_used");
            }
        }
        *out.entry(v.to_string()).or_insert(0) += 1;
    }
    Ok(out)
}

/// (added, removed) lines between two snapshots.
fn diff(before: &BTreeMap<String, usize>, after: &BTreeMap<String, usize>) -> (Vec<Value>, Vec<Value>) {
    let lines = |a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>| -> Vec<Value> {
        a.iter()
            .flat_map(|(k, n)| {
                let extra = n.saturating_sub(b.get(k).copied().unwrap_or(0));
                std::iter::repeat_n(k, extra)
            })
            .map(|k| serde_json::from_str(k).unwrap())
            .collect()
    };
    (lines(after, before), lines(before, after))
}

fn has_string(v: &Value, s: &str) -> bool {
    match v {
        Value::String(x) => x == s,
        Value::Array(a) => a.iter().any(|x| has_string(x, s)),
        Value::Object(o) => o.values().any(|x| has_string(x, s)),
        _ => false,
    }
}

/// Operations that authenticate the caller: allowed on a refused request (auth runs first).
const IDENTITY_OPS: [&str; 4] = ["get_doc", "put_doc", "list_docs", "commit"];

/// Statements sent to the store of this kind so far, by operation, from `/metrics`.
async fn statements(url: &str, kind: &str) -> BTreeMap<String, u64> {
    let text = reqwest::get(format!("{url}/metrics")).await.unwrap().text().await.unwrap();
    let label = |line: &str, name: &str| -> Option<String> {
        let start = line.find(&format!("{name}=\""))? + name.len() + 2;
        let len = line[start..].find('"')?;
        Some(line[start..start + len].to_string())
    };
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("tributary_store_queries_total{")) {
        if label(line, "store").as_deref() != Some(kind) {
            continue;
        }
        let (Some(op), Some(n)) =
            (label(line, "operation"), line.rsplit(' ').next().and_then(|n| n.parse::<f64>().ok()))
        else {
            continue;
        };
        out.insert(op, n as u64);
    }
    out
}

fn statement_delta(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(op, _)| !IDENTITY_OPS.contains(&op.as_str()))
        .map(|(op, n)| (op.clone(), n - before.get(op).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// A catalog for the requests to aim at: a datastore, two containers with fields, a container
/// edge and a field edge. Returns the placeholders' values.
async fn seed(store: &Arc<dyn Store>) -> Placeholders {
    let ds = store
        .upsert_datastore(DatastoreInput {
            name: "hostile-base".into(),
            kind: "postgresql".into(),
            store_type: Some("jdbc".into()),
            namespaces: vec!["postgres://db:5432".into()],
            enrichment_only: false,
        })
        .await
        .unwrap();
    let mut made = Vec::new();
    for name in ["orders", "report"] {
        let (c, f) = store
            .upsert_container(ContainerInput {
                datastore_id: ds.id,
                name: name.into(),
                schema: Some("public".into()),
                fields: ["id", "email"]
                    .iter()
                    .map(|n| FieldInput { name: (*n).into(), ..Default::default() })
                    .collect(),
                ..Default::default()
            })
            .await
            .unwrap();
        made.push((c.id, f[1].id));
    }
    let edge = |source, target| NewEdge {
        source,
        target,
        description: None,
        source_type: "manual".into(),
        operation: None,
        derived: None,
        transformations: None,
        last_asserted_at: None,
    };
    let ((a, af), (b, bf)) = (made[0], made[1]);
    store
        .create_edges(
            vec![
                edge(End::Container { id: a }, End::Container { id: b }),
                edge(End::Field { id: af, container_id: a }, End::Field { id: bf, container_id: b }),
            ],
            false,
            tributary::domain::now(),
        )
        .await
        .unwrap();
    Placeholders { datastore: ds.id, container: a }
}

/// Where the corpus runs: a fresh, seeded store behind a server with auth on.
enum Backend {
    Embedded,
    Neo4j,
}

struct Running {
    server: Server,
    placeholders: Placeholders,
    _dir: Option<tempfile::TempDir>,
}

impl Backend {
    fn kind(&self) -> &'static str {
        match self {
            Backend::Embedded => "embedded",
            Backend::Neo4j => "neo4j",
        }
    }

    /// A new server over an emptied, seeded store, wrapped as `open_store` wraps it so the
    /// corpus runs through the time limit too.
    async fn start(&self) -> Running {
        let (inner, dir): (Arc<dyn Store>, _) = match self {
            Backend::Embedded => {
                let dir = tempfile::tempdir().unwrap();
                let store = TimeoutStore::new(SqliteStore::open(dir.path()).unwrap(), DEFAULT_LIMIT);
                (Arc::new(store), Some(dir))
            }
            Backend::Neo4j => {
                let neo = neo4j_or_skip().await.expect("the Neo4j corpus runs only with NEO4J_URI");
                (Arc::new(TimeoutStore::new(neo, DEFAULT_LIMIT)), None)
            }
        };
        let placeholders = seed(&inner).await;
        Running { server: serve(inner, true).await, placeholders, _dir: dir }
    }
}

/// Replays every fixture and returns the failures. Files marked `isolate` run last, each on a
/// server and store of its own, so a request that damages the service cannot spoil the others.
async fn replay_corpus(backend: &Backend) -> Vec<String> {
    let mut fixtures = load_fixtures();
    fixtures.sort_by_key(|f| f.spec["isolate"].as_bool() == Some(true));
    let shared = backend.start().await;
    let mut failures = Vec::new();
    let mut gaps = Vec::new();
    eprintln!("{:<42} {:>6} {:<16} {:>9}  statements / message", "hostile request", "status", "code", "time");
    for f in fixtures {
        let own;
        let run = if f.spec["isolate"].as_bool() == Some(true) {
            own = backend.start().await;
            &own
        } else {
            &shared
        };
        let problems = replay_one(run, backend.kind(), &f).await;
        match (problems.is_empty(), f.spec["expect"]["known_gap"].as_str()) {
            (true, Some(_)) => eprintln!("  {}: the known gap is closed; remove `known_gap` from its file", f.name),
            (true, None) => {}
            (false, Some(gap)) => gaps.push(format!("{}: {gap}\n    {}", f.name, problems.join("\n    "))),
            (false, None) => failures.push(format!("{}:\n    {}", f.name, problems.join("\n    "))),
        }
    }
    for g in &gaps {
        eprintln!("KNOWN GAP {g}");
    }
    failures
}

/// How long any hostile request may take to be answered: generous, so that only a hang or a
/// quadratic blow-up fails it, not a loaded machine.
const MAX_ANSWER_TIME: Duration = Duration::from_secs(2);

/// Sends one fixture's request and returns what went wrong (nothing when all is as expected).
async fn replay_one(run: &Running, kind: &str, f: &Fixture) -> Vec<String> {
    let (server, req, expect) = (&run.server, &f.spec["request"], &f.spec["expect"]);
    let client = reqwest::Client::builder().timeout(Duration::from_secs(120)).build().unwrap();
    let method: reqwest::Method = req["method"].as_str().unwrap_or("POST").parse().unwrap();
    let mut builder = client
        .request(method, format!("{}{}", server.url, request_path(req, &run.placeholders)))
        .header("content-type", "application/json");
    if req["auth"].as_str().unwrap_or("admin") == "admin" {
        builder = builder.bearer_auth(server.admin.as_deref().unwrap());
    }
    for (k, v) in req["headers"].as_object().into_iter().flatten() {
        let value = match v {
            Value::String(s) => s.as_bytes().to_vec(),
            parts => build_parts(parts),
        };
        builder = builder.header(k.as_str(), reqwest::header::HeaderValue::from_bytes(&value).unwrap());
    }
    let body = request_body(req, &run.placeholders);

    let mut problems = Vec::new();
    let before = match snapshot(&server.store).await {
        Ok(s) => s,
        Err(e) => return vec![format!("the store was unusable before the request: {e}")],
    };
    let stmts_before = statements(&server.url, kind).await;
    let start = Instant::now();
    let (status, text) = match builder.body(body).send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.text().await.unwrap_or_default())
        }
        Err(e) => {
            eprintln!("{:<42} no answer after {:?}: {e}", f.name, start.elapsed());
            return vec![format!("no answer: {e}")];
        }
    };
    let took = start.elapsed();
    let stmts_after = statements(&server.url, kind).await;
    let after = snapshot(&server.store).await;

    let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let code = answer.pointer("/errors/0/extensions/code").and_then(Value::as_str).unwrap_or("");
    let message = answer
        .pointer("/errors/0/message")
        .or_else(|| answer.get("detail"))
        .map(|m| m.as_str().map(str::to_string).unwrap_or_else(|| m.to_string()))
        .unwrap_or_default();
    let sent = statement_delta(&stmts_before, &stmts_after);
    let short = |t: &str| t.chars().take(100).collect::<String>();
    let note = if sent.is_empty() { short(&message) } else { format!("{sent:?}") };
    eprintln!("{:<42} {status:>6} {code:<16} {:>7.1}ms  {note}", f.name, took.as_secs_f64() * 1e3);

    // What the file expects of the answer.
    if let Some(s) = expect["status"].as_u64() {
        if u64::from(status) != s {
            problems.push(format!("status {status}, expected {s}"));
        }
    }
    if let Some(c) = expect["code"].as_str() {
        if code != c {
            problems.push(format!("code {code:?}, expected {c:?}"));
        }
    }
    if let Some(m) = expect["message_contains"].as_str() {
        if !text.contains(m) {
            problems.push(format!("the answer does not mention {m:?}"));
        }
    }
    if expect["no_errors"].as_bool() == Some(true)
        && answer.get("errors").is_some_and(|e| e.as_array().is_some_and(|a| !a.is_empty()))
    {
        problems.push("errors where none were expected".into());
    }
    for (pointer, want) in expect["data"].as_object().into_iter().flatten() {
        if answer.pointer(pointer) != Some(want) {
            problems.push(format!("{pointer} is {:?}, expected {want}", answer.pointer(pointer)));
        }
    }
    let store_rule = expect["store"].as_str().unwrap_or("unchanged");
    let refused_before_store = expect["refused_before_store"].as_bool().unwrap_or(store_rule == "unchanged");
    if refused_before_store && !sent.is_empty() {
        problems.push(format!("the refused request reached the store: {sent:?}"));
    }

    // Never, whatever the file says: a slow answer (a hang or a blow-up, not a slow machine),
    // a 5xx or an error without a code.
    if took > MAX_ANSWER_TIME {
        problems.push(format!("answered in {took:?}, over the bound of {MAX_ANSWER_TIME:?}"));
    }
    if status >= 500 {
        problems.push(format!("status {status}"));
    }
    for e in answer.get("errors").and_then(Value::as_array).into_iter().flatten() {
        if e.pointer("/extensions/code").is_none() {
            problems.push(format!("an error without a code: {e}"));
        }
    }

    // The store: unchanged, or changed only as the file allows.
    let after = match after {
        Ok(a) => a,
        Err(e) => {
            problems.push(format!("the store is unusable after the request: {e}"));
            return problems;
        }
    };
    let (added, removed) = diff(&before, &after);
    let store_ok = match store_rule {
        "unchanged" => added.is_empty() && removed.is_empty(),
        "event_log" => {
            removed.is_empty()
                && added.len() == 1
                && added.iter().all(|r| r["record"] == "event" && r["status"] == "rejected")
        }
        "payload_only" => {
            let payload = expect["payload"].as_str().expect("payload_only needs a payload");
            removed.is_empty() && !added.is_empty() && added.iter().all(|r| has_string(r, payload))
        }
        other => panic!("{}: unknown store rule {other}", f.name),
    };
    if !store_ok {
        problems.push(format!("the store changed ({store_rule}): added {added:?}, removed {removed:?}"));
    }
    if !problems.is_empty() {
        problems.push(format!("answer: {}", text.chars().take(400).collect::<String>()));
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_corpus_embedded() {
    let _serial = SERIAL.lock().await;
    let failures = replay_corpus(&Backend::Embedded).await;
    assert!(failures.is_empty(), "{} hostile request(s) misbehaved:\n{}", failures.len(), failures.join("\n"));
}

/// Whether the Neo4j cases run: `NEO4J_URI` set, or a panic unless `TRIBUTARY_SKIP_NEO4J=1`
/// says to skip them on purpose (`support/skip_neo4j.rs`).
fn neo4j_wanted() -> bool {
    skip_neo4j::neo4j_uri_or_skip().is_some()
}

/// The suite's Neo4j, emptied; `None` when the run opted out of Neo4j.
async fn neo4j_or_skip() -> Option<Neo4jStore> {
    let uri = skip_neo4j::neo4j_uri_or_skip()?;
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_default();
    let database = std::env::var("NEO4J_DATABASE").ok().filter(|d| !d.is_empty());
    let neo = Neo4jStore::connect(&uri, &user, &password, database.as_deref()).await.expect("connect to NEO4J_URI");
    neo.wipe().await.expect("wipe the test Neo4j");
    Some(neo)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_corpus_neo4j() {
    let _serial = SERIAL.lock().await;
    if !neo4j_wanted() {
        return;
    }
    let failures = replay_corpus(&Backend::Neo4j).await;
    assert!(failures.is_empty(), "{} hostile request(s) misbehaved on Neo4j:\n{}", failures.len(), failures.join("\n"));
}

// ---------------------------------------------------------------- fuzz crashers

/// The regressions kept in `fuzz-regressions/`: replaying fewer means files were lost (or the
/// folder moved), and the test would prove nothing. Raise it when you add one.
const FUZZ_REGRESSIONS: usize = 12;

/// Every saved crasher, through the code of the fuzz target that found it (the file name's
/// prefix names the target). Each replay panics when the input breaks the target's invariants,
/// and its outcome (accepted with this answer, or refused with this status or code) must be the
/// one `expected.json` records for it: an input that is refused today and accepted tomorrow, or
/// answered differently, fails here even though nothing panics.
#[test]
fn fuzz_regressions_replay() {
    let _serial = SERIAL.blocking_lock();
    let dir = fixtures_dir().join("fuzz-regressions");
    let expected: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let graphql = harness::GraphqlHarness::new();
    let mut replayed = BTreeMap::<&str, usize>::new();
    let mut outcomes = BTreeMap::<String, Value>::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "README.md" || name == "expected.json" {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let (target, outcome) = if name.starts_with("openlineage_body-") {
            ("openlineage_body", harness::openlineage_body(&data))
        } else if name.starts_with("graphql_request-") {
            ("graphql_request", graphql.request(&data))
        } else if name.starts_with("marquez_node_id-") {
            ("marquez_node_id", harness::marquez_node_id(&data))
        } else {
            panic!("{name}: a regression's name starts with its fuzz target's name and a dash");
        };
        *replayed.entry(target).or_default() += 1;
        outcomes.insert(name, outcome);
    }
    eprintln!("replayed fuzz regression inputs: {replayed:?}");
    assert_eq!(replayed.values().sum::<usize>(), FUZZ_REGRESSIONS, "{replayed:?}");
    for target in ["openlineage_body", "graphql_request", "marquez_node_id"] {
        assert!(replayed.contains_key(target), "no regression input for the {target} target: {replayed:?}");
    }
    let mut wrong = Vec::new();
    for (name, outcome) in &outcomes {
        match expected.get(name) {
            Some(want) if want == outcome => {}
            Some(want) => wrong.push(format!("{name}: expected {want}, got {outcome}")),
            None => wrong.push(format!("{name}: no outcome in expected.json; it got {outcome}")),
        }
    }
    for name in expected.keys().filter(|n| !outcomes.contains_key(*n)) {
        wrong.push(format!("{name}: in expected.json, but no such input"));
    }
    assert!(wrong.is_empty(), "fuzz regressions with another outcome than expected.json's:\n{}", wrong.join("\n"));
}
