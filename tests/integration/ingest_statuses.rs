//! Issue 46 (3): the ingest log says what happened to each event. `applied` changed lineage,
//! `recorded` changed none but recorded the run's state (a FAIL that retires nothing still fails
//! its run), `ignored` had nothing new, `rejected` was refused, in REST's report, GraphQL's
//! `ingestOpenLineage` and the stored events `openLineageEvents(status:)` lists.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;
use crate::openlineage::run_event;

both_stores!(start_complete_fail_and_no_op_events_say_what_happened);

const WH: &str = "postgres://warehouse.example.com:5432";

fn ds(name: &str) -> Value {
    json!({"namespace": WH, "name": format!("analytics.public.{name}")})
}

/// Posts one event to seed 000's route: (HTTP status, its report entry, the whole report).
async fn post_one(app: &TestApp, event: &Value) -> (u16, Value, Value) {
    let (status, body) = app.post("/api/v1/lineage", event).await;
    // A single event that was not taken comes back inside `detail`.
    let report = if body["detail"].is_object() { body["detail"].clone() } else { body.clone() };
    (status, report["events"][0].clone(), report)
}

async fn stored_with(app: &TestApp, status: &str) -> Vec<(String, String)> {
    let d = app
        .ok(
            "query($s: String) { openLineageEvents(status: $s, size: 100) { items { status runId eventType } } }",
            json!({"s": status}),
        )
        .await;
    let mut out: Vec<(String, String)> = d["openLineageEvents"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .inspect(|e| assert_eq!(e["status"], status, "{d:#}"))
        .map(|e| (e["runId"].as_str().unwrap_or("").to_string(), e["eventType"].as_str().unwrap_or("").to_string()))
        .collect();
    out.sort();
    out
}

async fn start_complete_fail_and_no_op_events_say_what_happened(app: TestApp) {
    app.warehouse().await;
    // START with lineage: applied.
    let (status, start, report) =
        post_one(&app, &run_event("START", "run-1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!((status, start["status"].as_str()), (201, Some("applied")), "{report:#}");
    assert_eq!((report["applied"].as_i64(), report["recorded"].as_i64()), (Some(1), Some(0)), "{report:#}");
    // COMPLETE naming no dataset: no lineage changes, the run completes: recorded, 201.
    let (status, complete, report) = post_one(&app, &run_event("COMPLETE", "run-1", "load", vec![], vec![])).await;
    assert_eq!((status, complete["status"].as_str()), (201, Some("recorded")), "{report:#}");
    assert_eq!((report["recorded"].as_i64(), report["ignored"].as_i64()), (Some(1), Some(0)), "{report:#}");
    assert_eq!(complete["summary"]["run_state"], "COMPLETE", "{complete:#}");
    assert_eq!(complete["summary"]["ignored_reason"], "no lineage", "why no lineage changed: {complete:#}");
    // A FAIL whose run asserted nothing first retires nothing, yet the run failed: recorded.
    let mut fail = run_event("FAIL", "run-2", "load", vec![], vec![ds("orders")]);
    fail["run"]["facets"] = json!({"errorMessage": {
        "_producer": "https://example.com", "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json",
        "message": "disk full", "programmingLanguage": "python"}});
    let (status, failed, report) = post_one(&app, &fail).await;
    assert_eq!((status, failed["status"].as_str()), (201, Some("recorded")), "{report:#}");
    assert_eq!(failed["summary"]["run_state"], "FAIL");
    let run = app.ok("{ run(runId: \"run-2\") { state errorMessage } }", json!({})).await;
    assert_eq!(run["run"], json!({"state": "FAIL", "errorMessage": "disk full"}), "the FAIL was recorded");
    // The same FAIL again: nothing new.
    let (status, again, _) = post_one(&app, &fail).await;
    assert_eq!((status, again["status"].as_str()), (201, Some("ignored")), "{again:#}");
    assert_eq!(again["summary"]["ignored_reason"], "duplicate");
    assert_eq!(again["summary"]["original_status"], "recorded");
    // A late START of the failed run: the run stays failed, nothing new.
    let (status, late, _) =
        post_one(&app, &run_event("START", "run-2", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!((status, late["status"].as_str()), (201, Some("ignored")), "{late:#}");
    assert_eq!(late["summary"]["ignored_reason"], "late START");
    // An invalid event: rejected, 422.
    let mut bad = run_event("START", "run-3", "load", vec![], vec![]);
    bad["eventTime"] = json!("yesterday");
    let (status, rejected, _) = post_one(&app, &bad).await;
    assert_eq!((status, rejected["status"].as_str()), (422, Some("rejected")), "{rejected:#}");

    // The stored outcomes tell the kinds apart: the failure is never among the ignored.
    assert_eq!(stored_with(&app, "applied").await, [("run-1".into(), "START".into())]);
    assert_eq!(
        stored_with(&app, "recorded").await,
        [("run-1".to_string(), "COMPLETE".to_string()), ("run-2".into(), "FAIL".into())]
    );
    assert_eq!(stored_with(&app, "ignored").await, [("run-2".into(), "START".into())]);
    assert_eq!(stored_with(&app, "rejected").await.len(), 1);

    // GraphQL's report counts the same way.
    let q = "mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { received applied recorded ignored rejected failed events { status summary } } }";
    let abort = run_event("ABORT", "run-4", "load", vec![], vec![]);
    let d = app.ok(q, json!({"e": [abort.clone(), abort]})).await["ingestOpenLineage"].clone();
    assert_eq!(
        (d["received"].as_i64(), d["applied"].as_i64(), d["recorded"].as_i64(), d["ignored"].as_i64()),
        (Some(2), Some(0), Some(1), Some(1)),
        "{d:#}"
    );
    assert_eq!(d["events"][0]["status"], "recorded");
    assert_eq!(d["events"][1]["summary"]["ignored_reason"], "duplicate");
    // Seed 002's route answers a recorded event as a success that wrote no edge.
    let (status, body) =
        app.post("/api/v1/openlineage/lineage", &run_event("FAIL", "run-5", "load", vec![], vec![])).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!((body["status"].as_str(), body["lineageEdgesCreated"].as_i64()), (Some("success"), Some(0)), "{body:#}");
}
