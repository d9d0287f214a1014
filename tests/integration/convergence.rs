//! Issue 46 (2): replay and late registration converge. Events sent before one of their tables was
//! registered keep that dataset as an external placeholder; registered and replayed (as the
//! README advises), the store holds what a clean ingest of the same events after registration
//! holds: the jobs and runs list the container once, the edges join containers, the placeholder's
//! edges are retired (in the change log) and nothing external is left. Replaying again changes
//! nothing.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;
use crate::openlineage::run_event;

both_stores!(replay_after_registration_equals_a_clean_ingest);

const WH: &str = "postgres://warehouse.example.com:5432";

fn ds(name: &str) -> Value {
    json!({"namespace": WH, "name": format!("analytics.public.{name}")})
}

fn events() -> Vec<Value> {
    vec![
        run_event("START", "run-1", "load", vec![ds("raw_orders")], vec![ds("orders")]),
        run_event("COMPLETE", "run-1", "load", vec![ds("raw_orders")], vec![ds("orders")]),
        // A run that only started: its edge stands on the START alone.
        run_event("START", "run-2", "stage", vec![ds("raw_orders")], vec![ds("stage")]),
        // A run that only read: no edge, the dataset only in its job's and run's inputs.
        run_event("COMPLETE", "run-3", "audit", vec![ds("raw_orders")], vec![]),
    ]
}

async fn register(app: &TestApp, tables: &[&str]) {
    let d = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": "warehouse", "type": "postgresql", "namespaces": [WH]}}),
        )
        .await;
    let ds = d["upsertDatastore"]["id"].as_i64().unwrap();
    for t in tables {
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "database": "analytics", "schema": "public", "name": t}}),
        )
        .await;
    }
}

/// What a user sees: live edges by container name (externals by fqn), each job's and run's
/// datasets (kind and name), and the live external assets.
async fn seen(app: &TestApp) -> Value {
    let d = app
        .ok(
            "{ edges(size: 100) { items { sourceContainer { name } targetContainer { name } sourceExternalFqn targetExternalFqn
                 evidence { details } } }
               search(query: \"raw_orders\", kinds: [EXTERNAL]) { id } }",
            json!({}),
        )
        .await;
    let end = |e: &Value, side: &str| -> String {
        e[format!("{side}Container")]["name"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("ext:{}", e[format!("{side}ExternalFqn")].as_str().unwrap_or("?")))
    };
    let edges: BTreeSet<(String, String, String)> =
        d["edges"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| {
                let (s, t) = (end(e, "source"), end(e, "target"));
                e["evidence"].as_array().unwrap().iter().map(move |v| {
                    (s.clone(), t.clone(), v["details"]["job"]["name"].as_str().unwrap_or("").to_string())
                })
            })
            .collect();
    let io = |v: &Value| -> Vec<String> {
        let mut out: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                format!(
                    "{} {}",
                    x["kind"].as_str().unwrap(),
                    x["container"]["name"].as_str().unwrap_or(x["name"].as_str().unwrap())
                )
            })
            .collect();
        out.sort();
        out
    };
    let mut jobs = serde_json::Map::new();
    for (job, run) in [("load", "run-1"), ("stage", "run-2"), ("audit", "run-3")] {
        let q = "query($j: String!, $r: String!) {
            job(namespace: \"nightly\", name: $j) { inputs { kind name container { name } } outputs { kind name container { name } } }
            run(runId: $r) { state inputs { kind name container { name } } outputs { kind name container { name } } } }";
        let d = app.ok(q, json!({"j": job, "r": run})).await;
        jobs.insert(
            job.to_string(),
            json!({
                "job": [io(&d["job"]["inputs"]), io(&d["job"]["outputs"])],
                "run": [io(&d["run"]["inputs"]), io(&d["run"]["outputs"])],
                "state": d["run"]["state"],
            }),
        );
    }
    json!({"edges": edges, "jobs": jobs, "externals": d["search"]})
}

async fn replay(app: &TestApp) -> Value {
    let lineage = tributary::service::Lineage::new(app.store.clone());
    let report = lineage.replay_openlineage(0, &[], |_| {}).await.expect("replay");
    let statuses: Vec<&str> = report.events.iter().map(|e| e.status).collect();
    json!(statuses)
}

async fn replay_after_registration_equals_a_clean_ingest(app: TestApp) {
    // Before: the warehouse lists orders and stage, not yet raw_orders.
    register(&app, &["orders", "stage"]).await;
    let (status, body) = app.post("/api/v1/lineage", &json!(events())).await;
    assert_eq!(status, 201, "{body:#}");
    let before = seen(&app).await;
    assert_eq!(before["externals"].as_array().unwrap().len(), 1, "raw_orders is a placeholder: {before:#}");

    // raw_orders is registered, then the stored events are replayed.
    register(&app, &["raw_orders"]).await;
    let statuses = replay(&app).await;
    assert!(statuses.as_array().unwrap().iter().all(|s| s != "failed" && s != "rejected"), "{statuses}");
    let replayed = seen(&app).await;

    // The placeholder's edges are retired, and the change log says so.
    let changes = app.ok("{ changes(first: 100) { items { kind edge { sourceExternalFqn } } } }", json!({})).await;
    let retired: Vec<&Value> = changes["changes"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "EDGE_RETIRED" && c["edge"]["sourceExternalFqn"].is_string())
        .collect();
    assert_eq!(retired.len(), 2, "load's and stage's placeholder edges: {changes:#}");

    // Replayed again: the same.
    replay(&app).await;
    assert_eq!(seen(&app).await, replayed, "a second replay changes nothing");

    // A clean ingest of the same events after registration holds the same.
    let clean = TestApp::embedded().await;
    register(&clean, &["orders", "stage", "raw_orders"]).await;
    let (status, body) = clean.post("/api/v1/lineage", &json!(events())).await;
    assert_eq!(status, 201, "{body:#}");
    let want = seen(&clean).await;
    assert_eq!(replayed, want, "replay after registration vs a clean ingest");
    assert_eq!(want["externals"], json!([]));
    assert_eq!(
        want["jobs"]["audit"]["job"],
        json!([["CONTAINER raw_orders"], []]),
        "the dataset listed once, as the container"
    );
}
