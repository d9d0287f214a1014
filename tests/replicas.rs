//! Two `serve` replicas over one Neo4j (issue #22 part 5), as a correctness check: two real
//! `tributary serve` processes on the suite's Neo4j take OpenLineage batches and id-allocating
//! GraphQL mutations through both at once (the same job's events split across the replicas, the
//! same edge asserted through both, the same event sent to both, the same datastore and
//! container upserted through both), then both are read and the test asserts what a user of a
//! load-balanced deployment relies on: ids never collide (datastores, containers, fields, edges,
//! events, operations), every event is stored and applied exactly once, and both replicas give
//! the same answers (lineageGraph, impact, edges, the change feed in the same order).
//!
//! It needs NEO4J_URI (scripts/test's Neo4j), or `TRIBUTARY_SKIP_NEO4J=1` to skip it on purpose.
//! On the embedded store it does not apply: that store is one SQLite file owned by one `serve`,
//! so there is no second replica to run (ARCHITECTURE.md, "Growing past one machine"). No timing is asserted; the whole check is
//! bounded by a time limit, and both processes are killed when it ends, whatever happened.

#![allow(clippy::unwrap_used)]

#[path = "faults/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use harness::{gql, namespace, until_none_pending, Serve, StoreAt};
use serde_json::{json, Value};

/// Writer clients in all, alternating between the two replicas.
const WRITERS: usize = 4;
/// Batches each writer sends.
const BATCHES: usize = 6;
/// Events of a batch with an edge of their own (plus one event each of the two shared jobs).
const OWN: usize = 8;
/// Catalog tables each replica's mutation client upserts, chained by manual edges.
const TABLES: usize = 10;
/// The whole check, processes included, ends within this.
const LIMIT: Duration = Duration::from_secs(420);

const PRODUCER: &str = "https://github.com/tributary/replicas-test";

fn event(ns: &str, job: &str, input: &str, output: &str, run: &str, time: &str) -> Value {
    let schema = json!({"schema": {"_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
        "fields": [{"name": "id", "type": "BIGINT"}, {"name": "amount", "type": "DECIMAL(10,2)"}]}});
    json!({
        "eventType": "COMPLETE",
        "eventTime": time,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": ns, "name": job},
        "inputs": [{"namespace": ns, "name": format!("analytics.public.{input}"), "facets": schema}],
        "outputs": [{"namespace": ns, "name": format!("analytics.public.{output}"), "facets": schema}],
    })
}

/// Batch `b` of writer `w`: `OWN` events with an edge each (`in_i -> out_i`, job `job_i`), one
/// event of job `shared` and one of job `shared_b` (both `shared_in -> shared_out`, a new run
/// each), and for writers 0 and 1 (one on each replica) the same event of job `dup_b`, byte for
/// byte (a job of its own: a job's later run retires what its earlier runs asserted and it does not).
fn batch(ns: &str, w: usize, b: usize) -> (Value, Vec<String>) {
    let now = chrono::Utc::now().to_rfc3339();
    let mut events = Vec::new();
    let mut runs = Vec::new();
    for k in 0..OWN {
        let i = (w * BATCHES + b) * OWN + k;
        let run = uuid::Uuid::new_v4().to_string();
        events.push(event(ns, &format!("job_{i}"), &format!("in_{i}"), &format!("out_{i}"), &run, &now));
        runs.push(run);
    }
    for job in ["shared", "shared_b"] {
        let run = uuid::Uuid::new_v4().to_string();
        events.push(event(ns, job, "shared_in", "shared_out", &run, &now));
        runs.push(run);
    }
    if w < 2 {
        // A run id and time fixed for the test: both replicas receive the very same event at
        // about once. The namespace's random part is in the id, so a run of the test against a
        // Neo4j an earlier run used does not add to that run's runs.
        let test = u128::from_str_radix(&ns[ns.len() - 13..ns.len() - 5], 16).unwrap();
        let run = uuid::Uuid::from_u128((test << 64) + b as u128).to_string();
        events.push(event(
            ns,
            &format!("dup_{b}"),
            &format!("dup_in_{b}"),
            &format!("dup_out_{b}"),
            &run,
            "2026-01-01T00:00:00Z",
        ));
        runs.push(run);
    }
    (Value::Array(events), runs)
}

/// Sends one batch as a client with retries would: a 429 or 503 is tried again (events are
/// idempotent); any other refusal fails the test.
async fn send(client: &reqwest::Client, url: &str, body: &Value) {
    for _ in 0..20 {
        let r = client.post(format!("{url}/api/v1/lineage")).json(body).send().await.expect("ingest answers");
        let status = r.status();
        if status.is_success() {
            return;
        }
        let text = r.text().await.unwrap_or_default();
        assert!(status == 429 || status == 503, "ingest through {url} answered {status}: {text}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("ingest through {url} still refused after 20 tries");
}

/// What a catalog client was given: the datastore's id, the tables' ids by name, the manual
/// edges' ids, the SQL import operations' ids by target table.
type Catalogued = (i64, BTreeMap<String, i64>, Vec<i64>, BTreeMap<String, i64>);

/// One replica's catalog client: the shared datastore, `TABLES` tables of its own and the table
/// `both` (upserted through both replicas), one SQL import per table (`both -> r{r}_t{k}`, an
/// operation id each), manual edges `r{r}_t{k} -> r{r}_t{k+1}` and `both -> r{r}_t0`.
async fn catalog_client(url: String, r: usize, ds_name: String) -> Catalogued {
    let ds = gql(
        &url,
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        json!({"i": {"name": ds_name, "type": "postgresql"}}),
    )
    .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let upsert = "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id name } }";
    let fields = json!([{"name": "a", "type": "INT"}, {"name": "b", "type": "TEXT"}]);
    let mut ids = BTreeMap::new();
    let mut names: Vec<String> = (0..TABLES).map(|k| format!("r{r}_t{k}")).collect();
    names.insert(TABLES / 2, "both".into());
    for name in names {
        let input =
            json!({"datastoreId": ds, "database": "analytics", "schema": "public", "name": name, "fields": fields});
        let c = gql(&url, upsert, json!({"i": input})).await;
        ids.insert(name, c["upsertContainer"]["id"].as_i64().unwrap());
    }
    // One SQL import operation per table: `INSERT INTO r{r}_t{k} ... FROM both`.
    let sql = "mutation($s: [String!]!, $ds: Int!) { ingestSql(statements: $s, dialect: \"trino\", datastoreId: $ds) { operationId recorded } }";
    let mut operations = BTreeMap::new();
    for k in 0..TABLES {
        let statement = format!("INSERT INTO analytics.public.r{r}_t{k} SELECT a, b FROM analytics.public.both");
        let d = gql(&url, sql, json!({"s": [statement], "ds": ds})).await;
        assert_eq!(d["ingestSql"]["recorded"], 1, "the statement is recorded: {d}");
        operations.insert(format!("r{r}_t{k}"), d["ingestSql"]["operationId"].as_i64().unwrap());
    }
    let create = "mutation($i: CreateEdgeInput!) { createEdge(input: $i) { id } }";
    let mut edges = Vec::new();
    let mut pairs: Vec<(String, String)> =
        (0..TABLES - 1).map(|k| (format!("r{r}_t{k}"), format!("r{r}_t{}", k + 1))).collect();
    pairs.push(("both".into(), format!("r{r}_t0")));
    for (s, t) in pairs {
        let e = gql(&url, create, json!({"i": {"sourceContainerId": ids[&s], "targetContainerId": ids[&t]}})).await;
        edges.push(e["createEdge"]["id"].as_i64().unwrap());
    }
    (ds, ids, edges, operations)
}

/// Every item of a paged list `root` (the query takes `$p`, the page), all pages read.
async fn all_items(url: &str, query: &str, mut variables: Value, root: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for page in 1.. {
        variables["p"] = json!(page);
        let d = gql(url, query, variables.clone()).await;
        out.extend(d[root]["items"].as_array().cloned().unwrap_or_default());
        if page >= d[root]["pages"].as_i64().unwrap_or(0) {
            break;
        }
    }
    out
}

/// Every container of datastore `ds` by name.
async fn containers(url: &str, ds: i64) -> BTreeMap<String, i64> {
    let q = "query($d: Int, $p: Int) { containers(datastoreId: $d, page: $p, size: 1000) { items { id name } pages } }";
    let mut out = BTreeMap::new();
    for c in all_items(url, q, json!({"d": ds}), "containers").await {
        let name = c["name"].as_str().unwrap().to_string();
        assert!(out.insert(name.clone(), c["id"].as_i64().unwrap()).is_none(), "container {name} listed twice");
    }
    out
}

/// One aliased field per container id, 50 a query (the service's alias cap); the answers in order.
async fn per_container(url: &str, ids: &[i64], field: impl Fn(i64) -> String) -> Vec<Value> {
    let mut out = Vec::new();
    for chunk in ids.chunks(50) {
        let q: String = chunk.iter().enumerate().map(|(k, id)| format!("c{k}: {} ", field(*id))).collect();
        let d = gql(url, &format!("{{ {q} }}"), json!({})).await;
        out.extend((0..chunk.len()).map(|k| d[format!("c{k}")].clone()));
    }
    out
}

/// The stored events of `ns`: (id, status, runId).
async fn events(url: &str, ns: &str) -> Vec<(i64, String, String)> {
    let q = "query($ns: String, $p: Int) { openLineageEvents(jobNamespace: $ns, page: $p, size: 1000) { items { id status runId } pages } }";
    let items = all_items(url, q, json!({"ns": ns}), "openLineageEvents").await;
    let text = |e: &Value, k: &str| e[k].as_str().unwrap_or_default().to_string();
    items.iter().map(|e| (e["id"].as_i64().unwrap(), text(e, "status"), text(e, "runId"))).collect()
}

/// The change feed after `cursor` up to its head at the time of reading, `first` a page.
async fn feed(url: &str, cursor: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after = cursor.to_string();
    while out.len() < limit {
        let d = gql(
            url,
            "query($a: String) { changes(after: $a, first: 500) { items { cursor kind edgeId fieldId containerIds } endCursor hasMore } }",
            json!({"a": after}),
        )
        .await;
        let page = &d["changes"];
        out.extend(page["items"].as_array().cloned().unwrap_or_default());
        after = page["endCursor"].as_str().unwrap().to_string();
        if !page["hasMore"].as_bool().unwrap_or(false) {
            break;
        }
    }
    out.truncate(limit);
    out
}

/// `tributary_store_retries_total` summed over its labels, from a replica's `/metrics`.
async fn retries(url: &str) -> f64 {
    let text = reqwest::get(format!("{url}/metrics")).await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("tributary_store_retries_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_over_one_neo4j_agree_and_never_collide() {
    // Replicas share one Neo4j; the embedded store is one SQLite file owned by one serve, so a
    // second replica does not apply to it.
    let Some(uri) = skip_neo4j::neo4j_uri_or_skip() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let store = StoreAt::Neo4j(uri);
    let (log_a, log_b) = (tmp.path().join("a.log"), tmp.path().join("b.log"));
    let (a, b) = tokio::join!(Serve::start(&store, &log_a, &[]), Serve::start(&store, &log_b, &[]));
    // Both are dropped (killed) when this returns or panics, the time limit included. A failed
    // check prints both replicas' logs first: what the store said is there, not in the panic.
    let outcome = AssertUnwindSafe(tokio::time::timeout(LIMIT, check(&a, &b))).catch_unwind().await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(_)) => {
            panic!("the two-replica check did not finish in {LIMIT:?}\nA:\n{}\nB:\n{}", a.log_text(), b.log_text())
        }
        Err(panic) => {
            eprintln!("replica A's log:\n{}\nreplica B's log:\n{}", a.log_text(), b.log_text());
            std::panic::resume_unwind(panic);
        }
    }
}

async fn check(a: &Serve, b: &Serve) {
    let urls = [a.url.clone(), b.url.clone()];
    let ns = namespace("replicas");
    let cat_ds = format!("replicas-catalog-{}", &ns[ns.len() - 13..ns.len() - 5]);

    // The feed's position before this test wrote: a container of its own, created first.
    let marker_ds = gql(
        &urls[0],
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        json!({"i": {"name": format!("{cat_ds}-marker"), "type": "postgresql"}}),
    )
    .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let marker = gql(
        &urls[0],
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        json!({"i": {"datastoreId": marker_ds, "name": "marker"}}),
    )
    .await["upsertContainer"]["id"]
        .as_i64()
        .unwrap();
    let start =
        gql(&urls[0], "query($c: Int) { changes(containerId: $c) { items { cursor } } }", json!({"c": marker})).await;
    let start_cursor = start["changes"]["items"][0]["cursor"].as_str().unwrap().to_string();
    let retries_before = retries(&urls[0]).await + retries(&urls[1]).await;

    // Ingest through both at once, and catalog mutations through both at the same time.
    let acked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut writers = tokio::task::JoinSet::new();
    for w in 0..WRITERS {
        let (url, ns, acked) = (urls[w % 2].clone(), ns.clone(), acked.clone());
        writers.spawn(async move {
            let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
            for n in 0..BATCHES {
                let (body, runs) = batch(&ns, w, n);
                send(&client, &url, &body).await;
                acked.lock().unwrap().extend(runs);
            }
        });
    }
    let catalog = tokio::join!(
        catalog_client(urls[0].clone(), 0, cat_ds.clone()),
        catalog_client(urls[1].clone(), 1, cat_ds.clone())
    );
    while let Some(done) = writers.join_next().await {
        done.expect("a writer failed (its panic says why)");
    }
    let acked = acked.lock().unwrap().clone();
    until_none_pending(a, &ns, Duration::from_secs(60)).await;
    let retried = retries(&urls[0]).await + retries(&urls[1]).await - retries_before;
    eprintln!("{} events acknowledged; store retries during the run: {retried}", acked.len());

    // The same datastore and the same container, upserted through both, are one each.
    let ((ds0, ids0, edges0, ops0), (ds1, ids1, edges1, ops1)) = catalog;
    assert_eq!(ds0, ds1, "the datastore upserted through both replicas has one id");
    assert_eq!(ids0["both"], ids1["both"], "the table upserted through both replicas has one id");

    // Every event stored once and applied once, exactly the acknowledged ones, ids distinct.
    let stored = events(&urls[1], &ns).await;
    let not_applied: Vec<_> = stored.iter().filter(|e| e.1 != "applied").collect();
    assert!(not_applied.is_empty(), "every stored event is applied: {not_applied:?}");
    let run_ids: BTreeSet<&String> = stored.iter().map(|e| &e.2).collect();
    assert_eq!(run_ids.len(), stored.len(), "each event is stored once (the one sent to both replicas too)");
    let expected = WRITERS * BATCHES * (OWN + 2) + BATCHES;
    assert_eq!(stored.len(), expected, "stored events = events sent, duplicates once");
    assert_eq!(run_ids, acked.iter().collect::<BTreeSet<_>>(), "stored events = acknowledged events");
    let event_ids: HashSet<i64> = stored.iter().map(|e| e.0).collect();
    assert_eq!(event_ids.len(), stored.len(), "event ids never collide");

    // Containers: both replicas list the same ones, with distinct ids across both datastores.
    let ingest_ds = gql(&urls[0], "{ datastores { id name } }", json!({})).await["datastores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == ns.as_str())
        .map(|d| d["id"].as_i64().unwrap())
        .expect("zero-setup created the namespace's datastore");
    let mut all = containers(&urls[0], ingest_ds).await;
    let ingested = all.len();
    assert_eq!(ingested, WRITERS * BATCHES * OWN * 2 + 2 + BATCHES * 2, "in_i, out_i, shared_*, dup_*");
    assert_eq!(all, containers(&urls[1], ingest_ds).await, "both replicas list the same containers");
    let cat = containers(&urls[1], ds0).await;
    assert_eq!(cat.len(), 2 * TABLES + 1);
    for (name, id) in ids0.iter().chain(ids1.iter()) {
        assert_eq!(cat.get(name), Some(id), "{name} is listed with the id its upsert returned");
    }
    all.extend(cat.iter().map(|(n, id)| (format!("cat:{n}"), *id)));
    let container_ids: Vec<i64> = all.values().copied().collect();
    assert_eq!(container_ids.iter().collect::<HashSet<_>>().len(), all.len(), "container ids never collide");

    // Fields: two a container (the schema facet's, or the upsert's; `both` too, though upserted
    // twice), all ids distinct.
    let fields = per_container(&urls[0], &container_ids, |id| {
        format!("containerFields(containerId: {id}, size: 10) {{ items {{ id name }} }}")
    })
    .await;
    let mut field_ids = HashSet::new();
    for (f, name) in fields.iter().zip(all.keys()) {
        let items = f["items"].as_array().unwrap();
        assert_eq!(items.len(), 2, "{name} has its two fields: {items:?}");
        for i in items {
            assert!(field_ids.insert(i["id"].as_i64().unwrap()), "field id {} given twice", i["id"]);
        }
    }

    // Edges: read around every container through both replicas; the answers agree, an id always
    // means the same edge, and no edge exists twice.
    let edges_query = |id: i64| {
        format!("edges(containerId: {id}, size: 100) {{ items {{ id sourceContainerId targetContainerId sourceType evidence {{ jobName runId lastObservedOperationId }} }} }}")
    };
    let around_a = per_container(&urls[0], &container_ids, edges_query).await;
    let around_b = per_container(&urls[1], &container_ids, edges_query).await;
    assert_eq!(around_a, around_b, "both replicas answer `edges` alike");
    let mut by_id: HashMap<i64, Value> = HashMap::new();
    for e in around_a.iter().flat_map(|p| p["items"].as_array().cloned().unwrap_or_default()) {
        let id = e["id"].as_i64().unwrap();
        let seen = by_id.entry(id).or_insert_with(|| e.clone());
        assert_eq!(*seen, e, "edge id {id} names one edge");
    }
    let ends: HashSet<(i64, i64, String)> = by_id
        .values()
        .map(|e| {
            let end = |k: &str| e[k].as_i64().unwrap();
            (end("sourceContainerId"), end("targetContainerId"), e["sourceType"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(ends.len(), by_id.len(), "no edge exists twice (the one asserted through both included)");
    let own = WRITERS * BATCHES * OWN;
    assert_eq!(
        by_id.len(),
        own + 1 + BATCHES + 2 * TABLES + 2 * TABLES,
        "one edge per job's pair, per dup, per manual edge, per SQL import"
    );
    let mut manual: Vec<i64> = edges0.iter().chain(edges1.iter()).copied().collect();
    manual.sort_unstable();
    manual.dedup();
    assert_eq!(manual.len(), 2 * TABLES, "manual edge ids never collide");
    assert!(manual.iter().all(|id| by_id.contains_key(id)), "every created manual edge is listed");

    // Evidence: one per (edge, job) as the rules say; the shared edge has one per job whose run
    // is one of that job's; every own event's edge names its run, with an operation of its own.
    let shared =
        by_id.values().find(|e| e["targetContainerId"].as_i64() == Some(all["shared_out"])).expect("the shared edge");
    let jobs: BTreeSet<&str> =
        shared["evidence"].as_array().unwrap().iter().map(|v| v["jobName"].as_str().unwrap()).collect();
    assert_eq!(shared["evidence"].as_array().unwrap().len(), 2, "one evidence per job: {shared}");
    assert_eq!(jobs, [format!("{ns}/shared"), format!("{ns}/shared_b")].iter().map(String::as_str).collect());
    for i in 0..own {
        let target = all[&format!("out_{i}")];
        let e = by_id.values().find(|e| e["targetContainerId"].as_i64() == Some(target)).unwrap();
        let ev = e["evidence"].as_array().unwrap();
        assert_eq!(ev.len(), 1, "out_{i}'s edge has one evidence: {e}");
        assert!(acked.contains(ev[0]["runId"].as_str().unwrap()), "out_{i}'s evidence names an acknowledged run");
    }

    // Operations: the SQL imports through both replicas have distinct ids, each the one its
    // edge's evidence names.
    let operations: HashSet<i64> = ops0.values().chain(ops1.values()).copied().collect();
    assert_eq!(operations.len(), 2 * TABLES, "operation ids never collide: {ops0:?} {ops1:?}");
    for (name, op) in ops0.iter().chain(ops1.iter()) {
        let target = cat[name];
        let e = by_id
            .values()
            .find(|e| e["targetContainerId"].as_i64() == Some(target) && e["sourceType"] != "manual")
            .unwrap_or_else(|| panic!("{name} has its SQL edge"));
        let named: Vec<i64> =
            e["evidence"].as_array().unwrap().iter().filter_map(|v| v["lastObservedOperationId"].as_i64()).collect();
        assert_eq!(named, vec![*op], "{name}'s SQL edge names its import operation");
    }

    // Graph queries agree between the replicas.
    let reads = [
        format!("{{ lineageGraph(containerId: {}, depth: 3) {{ nodes {{ id }} edges {{ id sourceContainerId targetContainerId }} isPartial }} }}", all["shared_out"]),
        format!("{{ lineageGraph(containerId: {}, depth: 5) {{ nodes {{ id }} edges {{ id }} }} }}", ids0["r0_t0"]),
        format!("{{ impact(containerId: {}) {{ isPartial containers {{ distance container {{ id }} via {{ id }} }} }} }}", ids0["both"]),
        format!("{{ impact(containerId: {}, side: UPSTREAM) {{ containers {{ distance container {{ id }} }} }} }}", ids1[&format!("r1_t{}", TABLES - 1)]),
    ];
    for q in &reads {
        let (x, y) = (gql(&urls[0], q, json!({})).await, gql(&urls[1], q, json!({})).await);
        assert_eq!(x, y, "both replicas answer {q} alike");
        assert!(x.to_string().contains("\"id\""), "the read found something: {x}");
    }

    // The change feed: the same changes in the same order through both (other tests may append
    // meanwhile, so the common prefix is compared), positions strictly after the marker, each
    // of this test's containers created once and each of its edges asserted.
    let feed_a = feed(&urls[0], &start_cursor, 100_000).await;
    let feed_b = feed(&urls[1], &start_cursor, feed_a.len()).await;
    assert_eq!(feed_a.len(), feed_b.len(), "replica B reads as far as A did");
    assert_eq!(feed_a, feed_b, "both replicas give the change feed in the same order");
    let cursors: HashSet<&str> = feed_a.iter().map(|c| c["cursor"].as_str().unwrap()).collect();
    assert_eq!(cursors.len(), feed_a.len(), "change positions never collide");
    let ours: HashSet<i64> = container_ids.iter().copied().collect();
    let mut created: HashMap<i64, usize> = HashMap::new();
    let mut asserted = HashSet::new();
    for c in &feed_a {
        match c["kind"].as_str().unwrap() {
            "CONTAINER_CREATED" => {
                let id = c["containerIds"][0].as_i64().unwrap();
                if ours.contains(&id) {
                    *created.entry(id).or_default() += 1;
                }
            }
            "EDGE_ASSERTED" => {
                asserted.insert(c["edgeId"].as_i64().unwrap());
            }
            _ => {}
        }
    }
    assert_eq!(created.len(), ours.len(), "each container's creation is in the feed");
    assert!(created.values().all(|n| *n == 1), "each container is created once in the feed: {created:?}");
    let missing: Vec<&i64> = by_id.keys().filter(|id| !asserted.contains(id)).collect();
    assert!(missing.is_empty(), "each edge's assertion is in the feed; missing {missing:?}");
}
