//! OpenLineage ingest through the REST endpoints and GraphQL: validation with the seed's
//! statuses, resolution, evidence, run-state reconciliation, idempotency, seed 002's answers.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::{ids, TestApp};

both_stores!(
    seed_example_run_event_creates_edge_with_evidence,
    same_event_twice_changes_nothing,
    one_list_is_read_in_order,
    invalid_events_are_refused_and_change_nothing,
    body_errors_are_400_or_413,
    lists_report_each_event,
    unknown_datasets_become_external_ends,
    complete_reconciles_and_fail_retires_its_run_alone,
    job_events_replace_design_time_lineage,
    an_edge_two_jobs_assert_survives_one_dropping_it,
    column_lineage_gives_field_edges_that_pii_flow_follows,
    drop_retires_the_dataset_lineage,
    rename_moves_the_dataset_lineage,
    seed_002_single_and_batch_answers,
    graphql_mutation_and_stored_events,
    facets_become_metadata_assertions_and_user_values_win,
    auto_creation_makes_containers_from_the_schema_facet,
    later_events_of_a_request_resolve_to_what_earlier_ones_created,
);

const WH: &str = "postgres://warehouse.example.com:5432";
const PRODUCER: &str = "https://github.com/your-org/lineage-exporter";

impl TestApp {
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self.client().post(format!("{}{path}", self.url)).json(body).send().await.expect("sent");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn post_raw(&self, path: &str, body: Vec<u8>, gzip: bool) -> (u16, Value) {
        let mut req =
            self.client().post(format!("{}{path}", self.url)).header("content-type", "application/json").body(body);
        if gzip {
            req = req.header("content-encoding", "gzip");
        }
        let r = req.send().await.expect("sent");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The warehouse of seed 000's example: raw_orders and orders with a few fields.
    pub async fn warehouse(&self) -> (i64, i64, i64) {
        let ds = self
            .ok(
                "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                json!({"i": {"name": "warehouse", "type": "postgresql", "namespaces": [WH]}}),
            )
            .await["upsertDatastore"]["id"]
            .as_i64()
            .unwrap();
        let mut out = vec![ds];
        for (name, fields) in
            [("raw_orders", vec!["id", "amount", "email"]), ("orders", vec!["id", "order_total", "email"])]
        {
            let f: Vec<Value> = fields.iter().map(|n| json!({"name": n})).collect();
            let c = self
                .ok(
                    "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                    json!({"i": {"datastoreId": ds, "database": "analytics", "schema": "public", "name": name, "fields": f}}),
                )
                .await["upsertContainer"]["id"]
                .as_i64()
                .unwrap();
            out.push(c);
        }
        (out[0], out[1], out[2])
    }

    pub async fn live_edges(&self) -> Vec<Value> {
        self.ok(
            "{ edges(size: 1000) { items { id sourceContainerId targetContainerId sourceFieldId targetFieldId sourceExternalFqn targetExternalFqn sourceType operation derived retiredAt lastAssertedAt
               evidence { provider evidenceType authorship sourceRelation observedAt details retiredAt } } } }",
            json!({}),
        )
        .await["edges"]["items"]
            .as_array()
            .unwrap()
            .clone()
    }
}

fn ds(name: &str) -> Value {
    json!({"namespace": WH, "name": format!("analytics.public.{name}")})
}

pub fn run_event(state: &str, run: &str, job: &str, inputs: Vec<Value>, outputs: Vec<Value>) -> Value {
    json!({
        "eventType": state,
        "eventTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "nightly", "name": job},
        "inputs": inputs,
        "outputs": outputs,
    })
}

fn pairs(edges: &[Value]) -> Vec<(Value, Value)> {
    let mut p: Vec<(Value, Value)> = edges
        .iter()
        .filter(|e| e["sourceFieldId"].is_null())
        .map(|e| {
            (
                if e["sourceContainerId"].is_null() {
                    e["sourceExternalFqn"].clone()
                } else {
                    e["sourceContainerId"].clone()
                },
                if e["targetContainerId"].is_null() {
                    e["targetExternalFqn"].clone()
                } else {
                    e["targetContainerId"].clone()
                },
            )
        })
        .collect();
    p.sort_by_key(|a| format!("{a:?}"));
    p
}

async fn seed_example_run_event_creates_edge_with_evidence(app: TestApp) {
    let (_, raw, orders) = app.warehouse().await;
    let mut ev = run_event(
        "COMPLETE",
        "3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90",
        "load_orders",
        vec![ds("raw_orders")],
        vec![ds("orders")],
    );
    ev["eventTime"] = json!("2026-10-09T12:00:00Z");
    ev["job"]["facets"] = json!({"sql": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SQLJobFacet.json", "query": "INSERT INTO orders SELECT * FROM raw_orders"}});
    let (status, body) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (
            body["received"].clone(),
            body["applied"].clone(),
            body["ignored"].clone(),
            body["rejected"].clone(),
            body["failed"].clone()
        ),
        (json!(1), json!(1), json!(0), json!(0), json!(0))
    );
    let e0 = &body["events"][0];
    assert_eq!(e0["index"], 0);
    assert!(e0["id"].is_i64());
    assert_eq!(e0["status"], "applied");
    assert_eq!(e0["event_kind"], "run_event");
    assert_eq!(e0["errors"], json!([]));
    assert_eq!(e0["summary"]["edges_created"], 1);
    assert_eq!(e0["summary"]["evidence_created"], 1);
    assert_eq!(e0["summary"]["edges_asserted"], 1);
    let edges = app.live_edges().await;
    assert_eq!(edges.len(), 1);
    let e = &edges[0];
    assert_eq!((e["sourceContainerId"].as_i64(), e["targetContainerId"].as_i64()), (Some(raw), Some(orders)));
    assert_eq!(e["sourceType"], "openlineage");
    assert_eq!(e["operation"], "run_event");
    assert_eq!(e["lastAssertedAt"], "2026-10-09T12:00:00.000000Z");
    let v = &e["evidence"][0];
    assert_eq!(v["provider"], PRODUCER);
    assert_eq!(v["evidenceType"], "run_event");
    assert_eq!(v["authorship"], "asserted");
    assert_eq!(v["sourceRelation"], json!(["nightly", "load_orders"]).to_string());
    assert_eq!(v["observedAt"], "2026-10-09T12:00:00.000000Z");
    let d = &v["details"];
    assert_eq!(d["runId"], "3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90");
    assert_eq!(d["runState"], "COMPLETE");
    assert_eq!(d["job"], json!({"namespace": "nightly", "name": "load_orders"}));
    assert_eq!(d["eventId"], e0["id"]);
    assert_eq!(d["sql"], "INSERT INTO orders SELECT * FROM raw_orders");
    assert!(d["submittedBy"].is_string());
    // The other path behaves the same.
    let (status, _) = app
        .post(
            "/api/lineage/openlineage",
            &run_event("START", "r2", "load_orders", vec![ds("raw_orders")], vec![ds("orders")]),
        )
        .await;
    assert_eq!(status, 201);
}

async fn same_event_twice_changes_nothing(app: TestApp) {
    app.warehouse().await;
    let ev = run_event("COMPLETE", "run-1", "load", vec![ds("raw_orders")], vec![ds("orders")]);
    let (_, first) = app.post("/api/v1/lineage", &ev).await;
    let before = app.live_edges().await;
    let (status, second) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(status, 201);
    assert_eq!(second["events"][0]["status"], "ignored");
    assert_eq!(second["events"][0]["id"], first["events"][0]["id"], "the stored event is the same");
    assert_eq!(app.live_edges().await, before);
    let stored = app.ok("{ openLineageEvents { total } }", json!({})).await;
    assert_eq!(stored["openLineageEvents"]["total"], 1);
}

/// A list is stored at once but applied event by event: what an earlier event of the same list
/// did decides a later one, as if they had been posted one at a time.
async fn one_list_is_read_in_order(app: TestApp) {
    let (_, raw, orders) = app.warehouse().await;
    let ok = run_event("COMPLETE", "run-a", "load", vec![ds("raw_orders")], vec![ds("orders")]);
    let mut bad = ok.clone();
    bad["eventTime"] = json!("2026-10-09");
    let fail = run_event("FAIL", "run-b", "load", vec![], vec![]);
    let late_start = run_event("START", "run-b", "load", vec![ds("orders")], vec![ds("raw_orders")]);
    let (status, body) = app.post("/api/v1/lineage", &json!([ok, ok, bad, bad, fail, late_start])).await;
    assert_eq!(status, 201, "{body}");
    let events = body["events"].as_array().unwrap();
    let statuses: Vec<&str> = events.iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["applied", "ignored", "rejected", "rejected", "recorded", "ignored"], "{body}");
    assert_eq!(events[1]["id"], events[0]["id"], "the repeated event is the first one");
    assert_eq!(events[1]["summary"]["duplicate_of"], events[0]["id"]);
    assert_eq!(events[3]["id"], events[2]["id"]);
    assert_eq!(events[3]["errors"], events[2]["errors"], "the same rejection, with its errors");
    assert_eq!(events[3]["errors"][0]["location"], "/eventTime");
    // The FAIL of a run that asserted nothing changes no lineage, yet the run failed (recorded):
    // the START after it is ignored, although the FAIL's outcome was not stored yet.
    assert_eq!(pairs(&app.live_edges().await), vec![(json!(raw), json!(orders))], "{body}");
    // Every outcome is recorded on the stored events (four distinct events were stored).
    let stored = app.ok("{ openLineageEvents { total items { id status } } }", json!({})).await;
    assert_eq!(stored["openLineageEvents"]["total"], 4, "{stored}");
    let mut recorded: Vec<&str> = stored["openLineageEvents"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    recorded.sort();
    assert_eq!(recorded, ["applied", "ignored", "recorded", "rejected"], "{stored}");
    // Sent again, the list changes nothing and reports the stored outcomes.
    let (_, again) = app.post("/api/v1/lineage", &json!([ok, bad])).await;
    assert_eq!(again["events"][0]["status"], "ignored");
    assert_eq!(again["events"][1]["status"], "rejected");
    assert_eq!(again["events"][1]["errors"][0]["location"], "/eventTime");
}

async fn invalid_events_are_refused_and_change_nothing(app: TestApp) {
    app.warehouse().await;
    let good = run_event("COMPLETE", "r", "j", vec![ds("raw_orders")], vec![ds("orders")]);
    let future = (chrono::Utc::now() + chrono::Duration::minutes(10)).to_rfc3339();
    let cases: Vec<(&str, Value, &str)> = vec![
        ("future", json!(future), "/eventTime"),
        ("naive", json!("2026-10-09T12:00:00"), "/eventTime"),
        ("number", json!(1760011200), "/eventTime"),
        ("numeric string", json!("1760011200"), "/eventTime"),
        ("date", json!("2026-10-09"), "/eventTime"),
    ];
    for (what, time, pointer) in cases {
        let mut ev = good.clone();
        ev["eventTime"] = time;
        let (status, body) = app.post("/api/v1/lineage", &ev).await;
        assert_eq!(status, 422, "{what}: {body}");
        let report = &body["detail"];
        assert_eq!(report["rejected"], 1, "{what}");
        assert_eq!(report["events"][0]["status"], "rejected");
        let locations: Vec<&str> =
            report["events"][0]["errors"].as_array().unwrap().iter().map(|e| e["location"].as_str().unwrap()).collect();
        assert!(locations.contains(&pointer), "{what}: {locations:?}");
    }
    let mut ev = good.clone();
    ev["producer"] = json!("not/absolute");
    let (status, body) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(status, 422);
    assert_eq!(body["detail"]["events"][0]["errors"][0]["location"], "/producer");
    let mut ev = good.clone();
    ev["schemaURL"] = json!("spec.json");
    assert_eq!(app.post("/api/v1/lineage", &ev).await.0, 422);
    let mut ev = good.clone();
    ev["eventType"] = json!("DONE");
    assert_eq!(app.post("/api/v1/lineage", &ev).await.0, 422);
    assert!(app.live_edges().await.is_empty(), "rejected events applied nothing");
}

async fn body_errors_are_400_or_413(app: TestApp) {
    app.warehouse().await;
    let good = run_event("COMPLETE", "r", "j", vec![ds("raw_orders")], vec![ds("orders")]);
    let (s, b) = app.post_raw("/api/v1/lineage", b"{\"eventType\": ".to_vec(), false).await;
    assert_eq!(s, 400, "{b}");
    assert!(b["detail"].is_string());
    let nul = serde_json::to_string(&good).unwrap().replace("\"nightly\"", "\"night\\u0000ly\"");
    assert_eq!(app.post_raw("/api/v1/lineage", nul.into_bytes(), false).await.0, 400);
    let deep = format!("{}{}", "[".repeat(150), "]".repeat(150));
    assert_eq!(app.post_raw("/api/v1/lineage", deep.into_bytes(), false).await.0, 400);
    let surrogate = serde_json::to_string(&good).unwrap().replace("\"nightly\"", "\"\\ud800x\"");
    assert_eq!(app.post_raw("/api/v1/lineage", surrogate.into_bytes(), false).await.0, 400);
    assert_eq!(app.post_raw("/api/v1/lineage", b"not gzip".to_vec(), true).await.0, 400);
    let many: Vec<Value> = (0..1001).map(|i| run_event("START", &format!("r{i}"), "j", vec![], vec![])).collect();
    assert_eq!(app.post("/api/v1/lineage", &json!(many)).await.0, 413);
    // A gzip bomb: 60 MiB of zeros compresses to ~60 KiB; it must be refused, not inflated.
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..60 {
        enc.write_all(&chunk).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert_eq!(app.post_raw("/api/v1/lineage", bomb, true).await.0, 413);
    // gzip itself is accepted.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(serde_json::to_string(&good).unwrap().as_bytes()).unwrap();
    let (s, b) = app.post_raw("/api/v1/lineage", enc.finish().unwrap(), true).await;
    assert_eq!(s, 201, "{b}");
    let stored = app.ok("{ openLineageEvents { total } }", json!({})).await;
    assert_eq!(stored["openLineageEvents"]["total"], 1, "refused bodies stored nothing");
}

async fn lists_report_each_event(app: TestApp) {
    app.warehouse().await;
    let good = run_event("COMPLETE", "r", "j", vec![ds("raw_orders")], vec![ds("orders")]);
    let mut bad = good.clone();
    bad["eventTime"] = json!("yesterday");
    let nothing = run_event("START", "r3", "k", vec![], vec![ds("orders")]);
    let (status, body) = app.post("/api/v1/lineage", &json!([good, bad, nothing])).await;
    assert_eq!(status, 201, "a list answers 201 whatever its events' outcomes");
    assert_eq!(body["received"], 3);
    assert_eq!(body["applied"], 1);
    assert_eq!(body["rejected"], 1);
    assert_eq!(body["recorded"], 1, "a START with no inputs records its run: {body}");
    assert_eq!(body["ignored"], 0);
    let statuses: Vec<&str> =
        body["events"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, vec!["applied", "rejected", "recorded"]);
    assert_eq!(body["events"][1]["index"], 1);
    assert_eq!(app.live_edges().await.len(), 1);
}

async fn unknown_datasets_become_external_ends(app: TestApp) {
    let (_, _, orders) = app.warehouse().await;
    let s3 = json!({"namespace": "s3://landing", "name": "raw/orders.csv"});
    let ev = run_event("COMPLETE", "r", "j", vec![s3.clone()], vec![ds("orders")]);
    let (status, body) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(status, 201, "{body}");
    let edges = app.live_edges().await;
    assert_eq!(edges.len(), 1);
    assert_eq!(edges[0]["sourceExternalFqn"], "s3://landing/raw/orders.csv");
    assert_eq!(edges[0]["targetContainerId"], orders);
    let g = app
        .ok("query($c: Int!) { lineageGraph(containerId: $c) { nodes { id } externalNodes { id fqn sourceType } externalEdges { sourceNodeId } } }", json!({"c": orders}))
        .await["lineageGraph"]
        .clone();
    assert_eq!(g["externalNodes"][0]["id"], "ext:openlineage:s3://landing/raw/orders.csv");
    assert_eq!(ids(&g["nodes"]), vec![orders]);
    // Both ends unknown: no relationship, the event is kept.
    let ev = run_event("COMPLETE", "r2", "j2", vec![s3], vec![json!({"namespace": "s3://out", "name": "x"})]);
    let (status, body) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(status, 201);
    assert_eq!(body["events"][0]["status"], "recorded", "no lineage, but its run completed: {body}");
    assert_eq!(body["events"][0]["summary"]["ignored_reason"], "nothing resolved", "{body}");
    assert_eq!(app.live_edges().await.len(), 1);
    let stored = app.ok("{ openLineageEvents(jobName: \"j2\") { total items { status body } } }", json!({})).await;
    assert_eq!(stored["openLineageEvents"]["total"], 1);
    assert_eq!(stored["openLineageEvents"]["items"][0]["body"]["run"]["runId"], "r2");
}

async fn complete_reconciles_and_fail_retires_its_run_alone(app: TestApp) {
    let (ds_id, raw, orders) = app.warehouse().await;
    let other = app.container(ds_id, "analytics.public.audit", &[]).await.0;
    let _ = other;
    let audit = app
        .ok("mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, database: \"analytics\", schema: \"public\", name: \"audit\"}) { id } }", json!({"d": ds_id}))
        .await["upsertContainer"]["id"]
        .as_i64()
        .unwrap();
    // Run 1: raw -> orders.
    app.post("/api/v1/lineage", &run_event("COMPLETE", "run1", "job", vec![ds("raw_orders")], vec![ds("orders")]))
        .await;
    // Run 2 reports raw -> audit across START (empty inputs: not reported) and COMPLETE.
    app.post("/api/v1/lineage", &run_event("START", "run2", "job", vec![], vec![ds("audit")])).await;
    app.post("/api/v1/lineage", &run_event("RUNNING", "run2", "job", vec![ds("raw_orders")], vec![ds("audit")])).await;
    let (_, body) = app.post("/api/v1/lineage", &run_event("COMPLETE", "run2", "job", vec![], vec![])).await;
    assert_eq!(body["events"][0]["summary"]["edges_retired"], 1, "{body}");
    assert_eq!(pairs(&app.live_edges().await), vec![(json!(raw), json!(audit))], "raw->orders no longer asserted");
    let retired = app.ok("{ edges(includeRetired: true) { items { sourceContainerId targetContainerId retiredAt evidence { retiredAt } } } }", json!({})).await;
    let old = retired["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["targetContainerId"] == orders)
        .unwrap()
        .clone();
    assert!(old["retiredAt"].is_string());
    assert!(old["evidence"][0]["retiredAt"].is_string());
    // Run 3 starts with raw -> orders, then fails: what it alone asserted is retired again.
    app.post("/api/v1/lineage", &run_event("START", "run3", "job", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!(app.live_edges().await.len(), 2, "a later assertion revives the edge");
    app.post("/api/v1/lineage", &run_event("FAIL", "run3", "job", vec![], vec![])).await;
    assert_eq!(pairs(&app.live_edges().await), vec![(json!(raw), json!(audit))]);
    // A late START of the failed run does not undo its terminal state.
    let (_, late) =
        app.post("/api/v1/lineage", &run_event("START", "run3", "job", vec![ds("orders")], vec![ds("audit")])).await;
    assert_eq!(late["events"][0]["status"], "ignored", "{late}");
    assert_eq!(app.live_edges().await.len(), 1);
    // COMPLETE arriving before START gives the same graph as START then COMPLETE.
    app.post("/api/v1/lineage", &run_event("COMPLETE", "run4", "job", vec![ds("raw_orders")], vec![ds("audit")])).await;
    app.post("/api/v1/lineage", &run_event("START", "run4", "job", vec![ds("orders")], vec![ds("audit")])).await;
    let mut want = vec![(json!(raw), json!(audit)), (json!(orders), json!(audit))];
    want.sort_by_key(|a| format!("{a:?}"));
    assert_eq!(pairs(&app.live_edges().await), want);
    let intervals = app
        .ok(
            "{ edges(includeRetired: true) { items { targetContainerId sourceContainerId intervals { from to } } } }",
            json!({}),
        )
        .await;
    let revived = intervals["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["targetContainerId"] == orders && e["sourceContainerId"] == raw)
        .unwrap()
        .clone();
    assert_eq!(
        revived["intervals"].as_array().unwrap().len(),
        2,
        "retired, revived and retired again: two live intervals"
    );
}

fn job_event(job: &str, inputs: Vec<Value>, outputs: Vec<Value>) -> Value {
    json!({
        "eventTime": chrono::Utc::now().to_rfc3339(),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "design", "name": job},
        "inputs": inputs,
        "outputs": outputs,
    })
}

async fn job_events_replace_design_time_lineage(app: TestApp) {
    let (ds_id, raw, orders) = app.warehouse().await;
    let audit = app
        .ok("mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, database: \"analytics\", schema: \"public\", name: \"audit\"}) { id } }", json!({"d": ds_id}))
        .await["upsertContainer"]["id"]
        .as_i64()
        .unwrap();
    let (s, b) = app.post("/api/v1/lineage", &job_event("plan", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["events"][0]["event_kind"], "job_event");
    let e = app.live_edges().await;
    assert_eq!(e[0]["operation"], "job_event");
    assert_eq!(e[0]["evidence"][0]["evidenceType"], "job_event");
    app.post("/api/v1/lineage", &job_event("plan", vec![ds("raw_orders")], vec![ds("audit")])).await;
    assert_eq!(pairs(&app.live_edges().await), vec![(json!(raw), json!(audit))]);
    let _ = orders;
}

async fn an_edge_two_jobs_assert_survives_one_dropping_it(app: TestApp) {
    let (ds_id, raw, orders) = app.warehouse().await;
    let audit = app
        .ok("mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, database: \"analytics\", schema: \"public\", name: \"audit\"}) { id } }", json!({"d": ds_id}))
        .await["upsertContainer"]["id"]
        .as_i64()
        .unwrap();
    app.post("/api/v1/lineage", &run_event("COMPLETE", "a1", "job_a", vec![ds("raw_orders")], vec![ds("orders")]))
        .await;
    app.post("/api/v1/lineage", &run_event("COMPLETE", "b1", "job_b", vec![ds("raw_orders")], vec![ds("orders")]))
        .await;
    let e = app.live_edges().await;
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["evidence"].as_array().unwrap().len(), 2, "one evidence per asserting job");
    app.post("/api/v1/lineage", &run_event("COMPLETE", "a2", "job_a", vec![ds("raw_orders")], vec![ds("audit")])).await;
    let live = app.live_edges().await;
    let mut want = vec![(json!(raw), json!(audit)), (json!(raw), json!(orders))];
    want.sort_by_key(|a| format!("{a:?}"));
    assert_eq!(pairs(&live), want, "job_b still asserts raw->orders");
    // Deleting an OpenLineage edge retires it; a later assertion revives it.
    let id = live.iter().find(|e| e["targetContainerId"] == orders).unwrap()["id"].clone();
    app.ok("mutation($id: Int!) { deleteEdge(id: $id) }", json!({"id": id})).await;
    assert_eq!(app.live_edges().await.len(), 1);
    app.post("/api/v1/lineage", &run_event("COMPLETE", "b2", "job_b", vec![ds("raw_orders")], vec![ds("orders")]))
        .await;
    assert_eq!(app.live_edges().await.len(), 2);
}

async fn column_lineage_gives_field_edges_that_pii_flow_follows(app: TestApp) {
    app.warehouse().await;
    let mut out = ds("orders");
    out["facets"] = json!({"columnLineage": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json", "fields": {
        "order_total": {"inputFields": [{"namespace": WH, "name": "analytics.public.raw_orders", "field": "amount", "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}]}]},
        "email": {"inputFields": [{"namespace": WH, "name": "analytics.public.raw_orders", "field": "email", "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]},
        "id": {"inputFields": [{"namespace": WH, "name": "analytics.public.raw_orders", "field": "id", "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": true}]},
                                {"namespace": WH, "name": "analytics.public.raw_orders", "field": "no_such_column"}]}
    }}});
    let (s, b) = app.post("/api/v1/lineage", &run_event("COMPLETE", "r", "j", vec![ds("raw_orders")], vec![out])).await;
    assert_eq!(s, 201, "{b}");
    let unresolved = b["events"][0]["summary"]["unresolved_datasets"].as_array().unwrap().clone();
    assert!(
        unresolved.iter().any(|u| u["reason"] == "missingColumns"),
        "an unknown column is flagged, not dropped silently: {b}"
    );
    let edges = app.live_edges().await;
    let fields: Vec<&Value> = edges.iter().filter(|e| e["sourceFieldId"].is_i64()).collect();
    assert_eq!(fields.len(), 3);
    for f in &fields {
        assert_eq!(f["sourceType"], "openlineage");
        assert!(f["evidence"][0]["details"]["sql"].is_null(), "field evidence carries no SQL");
        assert!(f["evidence"][0]["details"]["transformations"].is_array());
    }
    let derived: Vec<bool> = fields.iter().map(|f| f["derived"].as_bool().unwrap()).collect();
    assert_eq!(derived.iter().filter(|d| !**d).count(), 1, "only DIRECT/IDENTITY is not derived");
    let email = app.ok("{ containerFields(containerId: 1, name: \"email\") { items { id } } }", json!({})).await;
    let _ = email;
    let raw_email = fields.iter().find(|f| f["derived"] == false).unwrap()["sourceFieldId"].clone();
    let flow = app
        .ok("query($f: Int!) { piiFlow(fieldId: $f) { fields { derived field { name } } } }", json!({"f": raw_email}))
        .await;
    assert_eq!(flow["piiFlow"]["fields"], json!([{"derived": false, "field": {"name": "email"}}]));
    let raw_id = fields.iter().find(|f| f["evidence"][0]["details"]["transformations"][0]["masking"] == true).unwrap()
        ["sourceFieldId"]
        .clone();
    let masked =
        app.ok("query($f: Int!) { piiFlow(fieldId: $f) { fields { field { name } } } }", json!({"f": raw_id})).await;
    assert_eq!(masked["piiFlow"]["fields"], json!([]), "the flow stops at a masking transformation");
}

async fn drop_retires_the_dataset_lineage(app: TestApp) {
    app.warehouse().await;
    app.post("/api/v1/lineage", &run_event("COMPLETE", "r", "j", vec![ds("raw_orders")], vec![ds("orders")])).await;
    let mut dropped = ds("orders");
    dropped["facets"] = json!({"lifecycleStateChange": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json", "lifecycleStateChange": "DROP"}});
    let (s, b) = app.post("/api/v1/lineage", &run_event("COMPLETE", "r2", "dropper", vec![], vec![dropped])).await;
    assert_eq!(s, 201, "{b}");
    assert!(app.live_edges().await.is_empty(), "DROP retires the dataset's lineage");
}

async fn seed_002_single_and_batch_answers(app: TestApp) {
    app.warehouse().await;
    let ok = run_event(
        "COMPLETE",
        "r1",
        "build_orders",
        vec![json!({"namespace": "postgresql://warehouse.example.com:5432", "name": "analytics.public.raw_orders"})],
        vec![ds("orders")],
    );
    let (s, b) = app.post("/api/v1/openlineage/lineage", &ok).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "success");
    assert_eq!(b["lineageEdgesCreated"], 1);
    assert_eq!(b["message"], "Created 1 lineage edge(s)");
    let partial = run_event(
        "COMPLETE",
        "r2",
        "build_orders",
        vec![ds("raw_orders")],
        vec![
            ds("orders"),
            json!({"namespace": "postgresql://unmapped.example.com:5432", "name": "analytics.public.audit_log"}),
        ],
    );
    let (s, b) = app.post("/api/v1/openlineage/lineage", &partial).await;
    assert_eq!(s, 200);
    assert_eq!(b["status"], "partial_success", "{b}");
    assert_eq!(b["unresolvedDatasets"][0]["reason"], "namespaceNotMapped");
    assert_eq!(b["unresolvedDatasets"][0]["name"], "analytics.public.audit_log");
    let missing =
        run_event("COMPLETE", "r3", "x", vec![ds("nope")], vec![json!({"namespace": "kafka://b", "name": "t"})]);
    let (s, b) = app.post("/api/v1/openlineage/lineage", &missing).await;
    assert_eq!(s, 400, "a single event that wrote nothing because of unresolved datasets: {b}");
    assert_eq!(b["status"], "failure");
    let reasons: Vec<&str> =
        b["unresolvedDatasets"].as_array().unwrap().iter().map(|u| u["reason"].as_str().unwrap()).collect();
    assert!(reasons.contains(&"creationDisabled") && reasons.contains(&"namespaceNotMapped"), "{reasons:?}");
    let (s, _) = app.post("/api/v1/openlineage/lineage", &json!([ok])).await;
    assert_eq!(s, 400, "a list is not a single event");
    let (s, b) = app
        .post(
            "/api/v1/openlineage/lineage/batch",
            &json!({"events": [run_event("COMPLETE", "b1", "b", vec![ds("raw_orders")], vec![ds("orders")]),
                               run_event("COMPLETE", "b2", "x", vec![ds("nope")], vec![json!({"namespace": "kafka://b", "name": "t"})])]}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "partial_success");
    assert_eq!(b["summary"]["received"], 2);
    assert_eq!(b["summary"]["successful"], 1);
    assert_eq!(b["summary"]["failed"], 1);
    assert_eq!(b["failedEvents"][0]["index"], 1);
    assert_eq!(b["failedEvents"][0]["retriable"], false);
    assert_eq!(b["unresolvedDatasets"][0]["eventIndex"], 1);
    let (s, b) = app.post("/api/v1/openlineage/lineage/batch", &json!([ok])).await;
    assert_eq!(s, 400, "a bare array is not a batch request: {b}");
    let mut bad = ok.clone();
    bad["eventTime"] = json!("2026-10-09");
    let (s, b) = app.post("/api/v1/openlineage/lineage/batch", &json!({"events": [bad]})).await;
    assert_eq!(s, 400, "every event failed: {b}");
    assert_eq!(b["status"], "failure");
}

async fn graphql_mutation_and_stored_events(app: TestApp) {
    app.warehouse().await;
    let mut bad = run_event("COMPLETE", "r0", "load", vec![], vec![]);
    bad["producer"] = json!("relative");
    let q = "mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { received applied rejected ignored failed events { index id status eventKind errors { location message } summary } } }";
    let r = app
        .ok(q, json!({"e": [run_event("COMPLETE", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")]), bad]}))
        .await["ingestOpenLineage"]
        .clone();
    assert_eq!((r["received"].as_i64(), r["applied"].as_i64(), r["rejected"].as_i64()), (Some(2), Some(1), Some(1)));
    assert_eq!(r["events"][0]["eventKind"], "run_event");
    assert_eq!(r["events"][0]["summary"]["edges_created"], 1);
    assert_eq!(r["events"][1]["errors"][0]["location"], "/producer");
    let stored = app.ok("{ openLineageEvents(status: \"rejected\") { total items { id status errors jobName runId eventType kind } } }", json!({})).await;
    let items = stored["openLineageEvents"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["errors"][0]["location"], "/producer");
    assert_eq!(items[0]["id"], r["events"][1]["id"]);
    let by_job = app.ok("{ openLineageEvents(jobName: \"load\", status: \"applied\") { total } }", json!({})).await;
    assert_eq!(by_job["openLineageEvents"]["total"], 1);
}

async fn facets_become_metadata_assertions_and_user_values_win(app: TestApp) {
    let (ds_id, _, orders) = app.warehouse().await;
    let mut out = ds("orders");
    out["facets"] = json!({
        "documentation": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json", "description": "One row per order"},
        "ownership": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/OwnershipDatasetFacet.json", "owners": [{"name": "team:billing", "type": "MAINTAINER"}]},
        "tags": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json", "tags": [{"key": "pii", "value": "true", "source": "USER", "field": "email"}]},
        "schema": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json", "fields": [{"name": "order_total", "type": "DECIMAL(10,2)"}, {"name": "not_catalogued", "type": "INT"}]}
    });
    let mut ev = run_event("COMPLETE", "m1", "load", vec![ds("raw_orders")], vec![out]);
    ev["eventTime"] = json!("2026-10-09T12:00:00Z");
    let (s, b) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(s, 201, "{b}");
    let event_id = b["events"][0]["id"].clone();
    let q = "query($c: Int!) { metadataAssertions(containerId: $c) { containerId fieldId attribute source provider value assertedAt observedAt details effective } }";
    let rows = app.ok(q, json!({"c": orders})).await["metadataAssertions"].as_array().unwrap().clone();
    let find = |attr: &str, field: bool| {
        rows.iter().find(|r| r["attribute"] == attr && r["fieldId"].is_null() != field).cloned()
    };
    let d = find("description", false).expect("description row");
    assert_eq!(d["containerId"], orders);
    assert_eq!(d["source"], "openlineage");
    assert_eq!(d["provider"], PRODUCER);
    assert_eq!(d["value"], "One row per order");
    assert_eq!(d["assertedAt"], "2026-10-09T12:00:00.000000Z");
    assert!(d["observedAt"].is_string());
    assert_eq!(
        d["details"],
        json!({"event_id": event_id, "dataset": {"namespace": WH, "name": "analytics.public.orders"}})
    );
    assert_eq!(d["effective"], true);
    assert_eq!(find("owners", false).unwrap()["value"], json!([{"name": "team:billing", "type": "MAINTAINER"}]));
    let tag = find("tags", true).expect("a field-level tag");
    assert_eq!(tag["containerId"], json!(null));
    assert_eq!(tag["value"][0]["key"], "pii");
    let ty = find("type", true).expect("a field type");
    assert_eq!(ty["value"], "DECIMAL(10,2)");
    assert_eq!(rows.iter().filter(|r| r["attribute"] == "type").count(), 1, "an uncatalogued field has no row");
    // The same value reported again moves observedAt, not assertedAt; a new value moves both.
    let mut again = ev.clone();
    again["run"]["runId"] = json!("m2");
    app.post("/api/v1/lineage", &again).await;
    let d2 = app.ok(q, json!({"c": orders})).await["metadataAssertions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["attribute"] == "description")
        .cloned()
        .unwrap();
    assert_eq!(d2["assertedAt"], "2026-10-09T12:00:00.000000Z");
    // A user's own value wins over the source's.
    app.ok(
        "mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, database: \"analytics\", schema: \"public\", name: \"orders\", description: \"Curated by hand\"}) { id } }",
        json!({"d": ds_id}),
    )
    .await;
    let rows = app.ok(q, json!({"c": orders})).await["metadataAssertions"].as_array().unwrap().clone();
    let descs: Vec<(String, bool)> = rows
        .iter()
        .filter(|r| r["attribute"] == "description" && r["fieldId"].is_null())
        .map(|r| (r["source"].as_str().unwrap().to_string(), r["effective"].as_bool().unwrap()))
        .collect();
    assert_eq!(descs.len(), 2);
    assert!(
        descs.contains(&("user".to_string(), true)) && descs.contains(&("openlineage".to_string(), false)),
        "{descs:?}"
    );
    let (code, _) = app.err(q, json!({"c": 987654})).await;
    assert_eq!(code, "NOT_FOUND");
}

async fn auto_creation_makes_containers_from_the_schema_facet(app: TestApp) {
    let (ds_id, _, _) = app.warehouse().await;
    let app = app.with_auto_create().await;
    let schema = |cols: &[&str]| {
        json!({"schema": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                          "fields": cols.iter().map(|c| json!({"name": c, "type": "VARCHAR"})).collect::<Vec<_>>()}})
    };
    let mut new_table = ds("daily_sales");
    new_table["facets"] = schema(&["day", "total"]);
    let mut no_columns = ds("no_columns");
    no_columns["facets"] = json!({});
    let mut bare = json!({"namespace": WH, "name": "bare_table"});
    bare["facets"] = schema(&["x"]);
    let unmapped = json!({"namespace": "postgres://elsewhere:5432", "name": "db.public.t", "facets": schema(&["x"])});
    let (s, b) = app
        .post(
            "/api/v1/openlineage/lineage",
            &run_event("COMPLETE", "ac1", "build", vec![ds("orders")], vec![new_table, no_columns, bare, unmapped]),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let mut reasons: Vec<(String, String)> = b["unresolvedDatasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["name"].as_str().unwrap().to_string(), u["reason"].as_str().unwrap().to_string()))
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        vec![
            ("analytics.public.no_columns".to_string(), "missingColumns".to_string()),
            ("bare_table".to_string(), "unparsableName".to_string()),
            ("db.public.t".to_string(), "namespaceNotMapped".to_string()),
        ]
    );
    let created = app
        .ok("query($d: Int!) { containers(datastoreId: $d, name: \"daily_sales\") { items { database schema name fieldCount fields { items { name type } } } } }", json!({"d": ds_id}))
        .await;
    assert_eq!(
        created["containers"]["items"],
        json!([{"database": "analytics", "schema": "public", "name": "daily_sales", "fieldCount": 2,
                "fields": {"items": [{"name": "day", "type": "VARCHAR"}, {"name": "total", "type": "VARCHAR"}]}}])
    );
    let edges = app.live_edges().await;
    assert!(edges.iter().any(|e| e["targetExternalFqn"].is_null()
        && e["targetContainerId"].is_i64()
        && e["sourceContainerId"].is_i64()));
}

/// A request's datasets are resolved ahead for all its events at once (issue #44), so what an
/// earlier event creates must still be what a later event's other spelling of it resolves to,
/// not a second container or an unresolved dataset.
async fn later_events_of_a_request_resolve_to_what_earlier_ones_created(app: TestApp) {
    let (ds_id, _, orders) = app.warehouse().await;
    let app = app.with_auto_create().await;
    let with_schema = |name: &str, cols: &[&str]| {
        let mut d = json!({"namespace": WH, "name": name});
        d["facets"] = json!({"schema": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                          "fields": cols.iter().map(|c| json!({"name": c, "type": "VARCHAR"})).collect::<Vec<_>>()}});
        d
    };
    let create = run_event(
        "COMPLETE",
        "ra1",
        "daily",
        vec![ds("orders")],
        vec![with_schema("analytics.public.daily_sales", &["day"])],
    );
    // The same table without its database, as another producer names it.
    let read = run_event(
        "COMPLETE",
        "ra2",
        "weekly",
        vec![json!({"namespace": WH, "name": "PUBLIC.Daily_Sales"})],
        vec![with_schema("analytics.public.weekly_sales", &["week"])],
    );
    let (status, body) = app.post("/api/v1/lineage", &json!([create, read])).await;
    assert_eq!(status, 201, "{body}");
    let statuses: Vec<&str> =
        body["events"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["applied", "applied"], "{body}");
    assert_eq!(body["events"][1]["summary"]["unresolved_datasets"], json!([]), "{body}");
    let id_of = |name: &'static str| {
        let app = &app;
        async move {
            let found = app
                .ok(
                    "query($d: Int!, $n: String!) { containers(datastoreId: $d, name: $n) { items { id name } } }",
                    json!({"d": ds_id, "n": name}),
                )
                .await;
            let items = found["containers"]["items"].as_array().unwrap().clone();
            assert_eq!(items.len(), 1, "one container {name}: {found}");
            items[0]["id"].clone()
        }
    };
    let (daily, weekly) = (id_of("daily_sales").await, id_of("weekly_sales").await);
    assert_eq!(pairs(&app.live_edges().await), {
        let mut want = vec![(json!(orders), daily.clone()), (daily, weekly)];
        want.sort_by_key(|a| format!("{a:?}"));
        want
    });
}

async fn rename_moves_the_dataset_lineage(app: TestApp) {
    let (ds_id, raw, orders) = app.warehouse().await;
    let renamed = app
        .ok("mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, database: \"analytics\", schema: \"public\", name: \"orders_v2\"}) { id } }", json!({"d": ds_id}))
        .await["upsertContainer"]["id"]
        .as_i64()
        .unwrap();
    app.post("/api/v1/lineage", &run_event("COMPLETE", "r", "j", vec![ds("raw_orders")], vec![ds("orders")])).await;
    let mut new_name = ds("orders_v2");
    new_name["facets"] = json!({"lifecycleStateChange": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json",
        "lifecycleStateChange": "RENAME", "previousIdentifier": {"namespace": WH, "name": "analytics.public.orders"}}});
    let (s, b) = app.post("/api/v1/lineage", &run_event("COMPLETE", "r2", "renamer", vec![], vec![new_name])).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(pairs(&app.live_edges().await), vec![(json!(raw), json!(renamed))], "the lineage moved to the new name");
    let old = app
        .ok(
            "query($c: Int) { edges(containerId: $c, includeRetired: true) { items { retiredAt } } }",
            json!({"c": orders}),
        )
        .await;
    assert!(old["edges"]["items"][0]["retiredAt"].is_string());
    let moved = app.live_edges().await;
    assert_eq!(
        moved[0]["evidence"][0]["sourceRelation"],
        json!(["nightly", "j"]).to_string(),
        "the asserting job's evidence moves with it"
    );
}

/// The embedded store applies a request's events in one transaction, and `apply_assertions`
/// runs there without a savepoint: when the store fails part-way through it (here evidence
/// cannot be written, as on a full disk), no event of the batch may leave an edge behind without
/// its evidence, every one reports `failed`, and sending them again applies them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_store_failing_mid_batch_leaves_nothing_half_applied() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = tributary::store::sqlite::SqliteStore::open(dir.path()).expect("open the embedded store");
    let app = TestApp::start(std::sync::Arc::new(store), None, None).await;
    let (_, raw, orders) = app.warehouse().await;
    let file = rusqlite::Connection::open(dir.path().join("tributary.db")).expect("open the store's file");
    file.execute_batch(
        "CREATE TRIGGER no_evidence BEFORE INSERT ON evidence BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    )
    .expect("install the failing trigger");
    let events = json!([
        run_event(
            "COMPLETE",
            "3d0c0b1e-7f55-4c1e-9d55-0a2f6c1e8b01",
            "copy",
            vec![ds("raw_orders")],
            vec![ds("orders")]
        ),
        run_event(
            "COMPLETE",
            "3d0c0b1e-7f55-4c1e-9d55-0a2f6c1e8b02",
            "back",
            vec![ds("orders")],
            vec![ds("raw_orders")]
        ),
    ]);
    let (status, body) = app.post("/api/v1/lineage", &events).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!((body["applied"].as_i64(), body["failed"].as_i64()), (Some(0), Some(2)), "{body}");
    for e in body["events"].as_array().expect("events") {
        assert_eq!(e["status"], "failed", "{e}");
        assert!(e["errors"][0]["message"].as_str().is_some_and(|m| !m.is_empty()), "a failed event says why: {e}");
    }
    assert!(app.live_edges().await.is_empty(), "an edge was written without its evidence");

    file.execute_batch("DROP TRIGGER no_evidence").expect("remove the failing trigger");
    let (status, body) = app.post("/api/v1/lineage", &events).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["applied"].as_i64(), Some(2), "failed events are applied when sent again: {body}");
    let edges = app.live_edges().await;
    assert_eq!(pairs(&edges), {
        let mut p = vec![(json!(raw), json!(orders)), (json!(orders), json!(raw))];
        p.sort_by_key(|a| format!("{a:?}"));
        p
    });
    assert!(edges.iter().all(|e| e["evidence"].as_array().is_some_and(|v| v.len() == 1)), "{edges:?}");
}
