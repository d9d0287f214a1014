//! Marquez's read API (issue #30, part 1): the routes Marquez's clients call, answered in
//! Marquez's shapes after real sequences are ingested. The apples corpus is Marquez's own
//! lineage-graph test (MarquezProject/marquez@a89b89cad `api/src/test/resources/apples/`); its
//! graph is compared node by node with what Marquez answers for it: each job's current inputs
//! and outputs (those of its latest run), with Marquez's node shape (`lineage/node.json` in
//! Marquez's tests). Also: catalogued tables keep the names their events used, column lineage,
//! restricted jobs never named, and every refusal's status and body (issue #30); the lineage
//! walk against a reference written from `LineageDao.getLineage`'s SQL, events windowed by
//! `eventTime`, owners, dataset times, sources, tags, dataset versions and the error shape on
//! every `/api/v1` 4xx (issue #46).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use reqwest::Method;
use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    the_apples_graph_answers_as_marquez_does,
    catalogued_tables_keep_the_names_their_events_used,
    restricted_jobs_are_never_named,
    refusals_say_what_is_wrong,
    lineage_walks_jobs_sharing_datasets_as_marquez_sql_does,
    events_are_windowed_and_sorted_by_event_time,
    namespaces_datasets_sources_tags_and_versions_answer_as_marquez,
    every_api_v1_refusal_has_marquez_error_shape,
    the_marquez_demo_answers_as_marquez_does,
);

const NS: &str = "postgres://wh:5432";
const PRODUCER: &str = "https://github.com/OpenLineage/OpenLineage/tree/1.19.0/integration/spark";

/// The events of a shared-corpus folder, in the order of their numbers.
fn sequence(folder: &str) -> Vec<Value> {
    let dir = std::env::var_os("TRIBUTARY_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/openlineage"))
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the shared corpus folder {} is missing: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    let number = |p: &PathBuf| -> u64 {
        p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(u64::MAX)
    };
    files.sort_by_key(number);
    files.iter().map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()).collect()
}

/// (status, body) of a request with the admin's token, another token, or none.
async fn call(app: &TestApp, token: Option<Option<&str>>, method: Method, path: &str) -> (u16, Value) {
    let url = format!("{}{path}", app.url);
    let req = match token {
        None => app.client().request(method, url),
        Some(Some(t)) => reqwest::Client::new().request(method, url).header("authorization", format!("Bearer {t}")),
        Some(None) => reqwest::Client::new().request(method, url),
    };
    let r = req.send().await.expect("sent");
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    (status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).expect("a JSON body") })
}

async fn get(app: &TestApp, path: &str) -> Value {
    let (status, body) = call(app, None, Method::GET, path).await;
    assert_eq!(status, 200, "GET {path}: {body:#}");
    body
}

async fn send(app: &TestApp, events: Value) {
    let r = app.client().post(format!("{}/api/v1/lineage", app.url)).json(&events).send().await.expect("sent");
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 201, "{body:#}");
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn strings(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn id(d: &Value) -> String {
    format!("{}:{}", d["namespace"].as_str().unwrap(), d["name"].as_str().unwrap())
}

/// Marquez's keys of a DATASET node's data (`lineage/node.json`, Marquez's `Dataset`) and of a
/// JOB node's (Marquez's `Job`).
const DATASET_KEYS: [&str; 12] = [
    "id",
    "type",
    "name",
    "physicalName",
    "createdAt",
    "updatedAt",
    "namespace",
    "sourceName",
    "fields",
    "tags",
    "lastModifiedAt",
    "description",
];
const JOB_KEYS: [&str; 15] = [
    "id",
    "type",
    "name",
    "simpleName",
    "parentJobName",
    "createdAt",
    "updatedAt",
    "namespace",
    "inputs",
    "outputs",
    "location",
    "description",
    "latestRun",
    "facets",
    "currentVersion",
];
const RUN_KEYS: [&str; 12] = [
    "id",
    "createdAt",
    "updatedAt",
    "nominalStartTime",
    "nominalEndTime",
    "state",
    "startedAt",
    "endedAt",
    "durationMs",
    "args",
    "facets",
    "jobVersion",
];

/// Node id -> (the origins of its in-edges, the destinations of its out-edges).
type GraphMap = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

/// Marquez's lineage over a sequence of events, written from its SQL (MarquezProject/marquez
/// `LineageDao.getLineage` and `getJobFromInputOrOutput`, `LineageService.lineage`). A job's
/// current version is made when its run completes, from every dataset the run's events named
/// (`upsertJobVersionOnRunTransition`): its latest run's inputs and outputs.
struct MarquezModel {
    /// Job node -> its current version's (inputs, outputs), as dataset node ids.
    current: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
    /// (job, dataset, an output?, when the version was made) of every version: what
    /// `getJobFromInputOrOutput` orders by `io_type DESC, created_at DESC`.
    touched: Vec<(String, String, bool, chrono::DateTime<chrono::Utc>)>,
}

impl MarquezModel {
    fn of(events: &[Value]) -> Self {
        let time = |e: &Value| chrono::DateTime::parse_from_rfc3339(e["eventTime"].as_str().unwrap()).unwrap().to_utc();
        // Each run: its job, its last event's time, and what its events named.
        type RunIo = (String, chrono::DateTime<chrono::Utc>, BTreeSet<String>, BTreeSet<String>);
        let mut runs: BTreeMap<String, RunIo> = BTreeMap::new();
        for e in events {
            let job = format!("job:{}", id(&e["job"]));
            let r = runs.entry(e["run"]["runId"].as_str().unwrap().to_string()).or_insert((
                job,
                time(e),
                BTreeSet::new(),
                BTreeSet::new(),
            ));
            r.1 = r.1.max(time(e));
            let list = |k: &str| e[k].as_array().into_iter().flatten().map(|d| format!("dataset:{}", id(d)));
            r.2.extend(list("inputs"));
            r.3.extend(list("outputs"));
        }
        let mut sorted: Vec<RunIo> = runs.into_values().collect();
        sorted.sort_by_key(|r| r.1);
        let mut model = MarquezModel { current: BTreeMap::new(), touched: Vec::new() };
        for (job, at, ins, outs) in sorted {
            model.touched.extend(ins.iter().map(|d| (job.clone(), d.clone(), false, at)));
            model.touched.extend(outs.iter().map(|d| (job.clone(), d.clone(), true, at)));
            model.current.insert(job, (ins, outs));
        }
        model
    }

    fn datasets(&self, job: &str) -> BTreeSet<String> {
        self.current.get(job).map(|(i, o)| i.union(o).cloned().collect()).unwrap_or_default()
    }

    /// `LineageService.lineage(nodeId, depth)`: the nodes with their edges.
    fn lineage(&self, start: &str, depth: usize) -> GraphMap {
        let orphan = || GraphMap::from([(start.to_string(), Default::default())]);
        let start_job = if start.starts_with("job:") {
            start.to_string()
        } else {
            // getJobFromInputOrOutput: a writer first, then the latest version.
            match self.touched.iter().filter(|t| t.1 == start).max_by_key(|t| (t.2, t.3)) {
                Some(t) => t.0.clone(),
                None => return orphan(),
            }
        };
        // The recursive CTE: a job joins at the first depth where its current datasets overlap
        // those of a job of the depth before (`array_cat(..) && array_cat(..)`).
        let mut found = BTreeSet::from([start_job.clone()]);
        let mut level = vec![start_job];
        for _ in 0..depth {
            let next: Vec<String> = self
                .current
                .keys()
                .filter(|j| !found.contains(*j))
                .filter(|j| level.iter().any(|l| !self.datasets(j).is_disjoint(&self.datasets(l))))
                .cloned()
                .collect();
            found.extend(next.iter().cloned());
            level = next;
        }
        let mut graph = GraphMap::new();
        for job in &found {
            graph.entry(job.clone()).or_default();
            let (ins, outs) = self.current.get(job).cloned().unwrap_or_default();
            for d in ins {
                graph.entry(d.clone()).or_default().1.insert(job.clone());
                graph.entry(job.clone()).or_default().0.insert(d);
            }
            for d in outs {
                graph.entry(job.clone()).or_default().1.insert(d.clone());
                graph.entry(d).or_default().0.insert(job.clone());
            }
        }
        // "jobs which no longer share lineage with the dataset": the dataset alone.
        if start.starts_with("dataset:") && !graph.contains_key(start) {
            return orphan();
        }
        graph
    }
}

/// A Marquez graph answer as node -> (in origins, out destinations), checking each edge is
/// listed on both of its nodes and each node's data names it.
fn graph_map(g: &Value) -> GraphMap {
    let nodes = g["graph"].as_array().unwrap();
    let mut out = GraphMap::new();
    for n in nodes {
        let nid = n["id"].as_str().unwrap().to_string();
        assert_eq!(keys(n), strings(&["id", "type", "data", "inEdges", "outEdges"]), "{nid}");
        let ends = |k: &str, mine: &str, far: &str| -> BTreeSet<String> {
            n[k].as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    assert_eq!(e[mine], nid.as_str());
                    e[far].as_str().unwrap().to_string()
                })
                .collect()
        };
        let (ins, outs) = (ends("inEdges", "destination", "origin"), ends("outEdges", "origin", "destination"));
        let data = &n["data"];
        if nid.starts_with("dataset:") {
            assert_eq!(n["type"], "DATASET");
            assert!(keys(data).is_superset(&strings(&DATASET_KEYS)), "{nid}: {data:#}");
            assert_eq!(format!("dataset:{}", id(&data["id"])), nid);
            assert!(data["createdAt"].is_string() && data["updatedAt"].is_string(), "{nid}: {data:#}");
        } else {
            assert_eq!(n["type"], "JOB");
            assert!(keys(data).is_superset(&strings(&JOB_KEYS)), "{nid}: {data:#}");
            assert_eq!(format!("job:{}", id(&data["id"])), nid);
        }
        out.insert(nid, (ins, outs));
    }
    for (nid, (ins, outs)) in &out {
        for o in ins {
            assert!(out.get(o).is_some_and(|(_, d)| d.contains(nid)), "{o} -> {nid} only on one end");
        }
        for d in outs {
            assert!(out.get(d).is_some_and(|(i, _)| i.contains(nid)), "{nid} -> {d} only on one end");
        }
    }
    out
}

async fn the_apples_graph_answers_as_marquez_does(app: TestApp) {
    let events = sequence("27_marquez_apples_graph");
    for e in &events {
        send(&app, e.clone()).await;
    }
    // Namespaces: the job's and every dataset's.
    let ns = get(&app, "/api/v1/namespaces").await;
    let names: BTreeSet<String> =
        ns["namespaces"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap().to_string()).collect();
    assert!(strings(&["backyard", "cupboard", "grandmas.kitchen", "laurents-orchard"]).is_subset(&names), "{ns:#}");
    let kitchen = get(&app, "/api/v1/namespaces/grandmas.kitchen").await;
    assert_eq!(kitchen["name"], "grandmas.kitchen");
    assert_eq!(kitchen["createdAt"], "2020-08-29T23:00:00.000000Z", "the first event in it: {kitchen:#}");
    // Datasets of the kitchen, by name, in Marquez's shape; paged by limit and offset.
    let list = get(&app, "/api/v1/namespaces/grandmas.kitchen/datasets").await;
    let got: Vec<&str> = list["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(got, ["apple.cider", "apple.filling", "apple.pie", "apples", "cinnamon"], "{list:#}");
    assert_eq!(list["totalCount"], 5);
    let second = get(&app, "/api/v1/namespaces/grandmas.kitchen/datasets?limit=2&offset=1").await;
    let got: Vec<&str> = second["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(got, ["apple.filling", "apple.pie"]);
    let pie = get(&app, "/api/v1/namespaces/grandmas.kitchen/datasets/apple.pie").await;
    assert!(keys(&pie).is_superset(&strings(&DATASET_KEYS)), "{pie:#}");
    assert_eq!(
        (&pie["id"], &pie["type"]),
        (&json!({"namespace": "grandmas.kitchen", "name": "apple.pie"}), &json!("DB_TABLE"))
    );
    // Written by two complete runs; the latest ended at 9_apple_pie's time.
    assert_eq!(pie["lastModifiedAt"], "2020-10-16T05:00:00.000000Z", "{pie:#}");
    // Jobs: five, with the current version's inputs (gather_apples now picks crab apples).
    let jobs = get(&app, "/api/v1/namespaces/grandmas.kitchen/jobs").await;
    assert_eq!(jobs["totalCount"], 5, "{jobs:#}");
    let gather = get(&app, "/api/v1/namespaces/grandmas.kitchen/jobs/gather_apples").await;
    assert!(keys(&gather).is_superset(&strings(&JOB_KEYS)), "{gather:#}");
    assert_eq!(gather["inputs"], json!([{"namespace": "backyard", "name": "crab.apples"}]), "{gather:#}");
    assert_eq!(gather["outputs"], json!([{"namespace": "grandmas.kitchen", "name": "apples"}]));
    let latest = &gather["latestRun"];
    assert!(keys(latest).is_superset(&strings(&RUN_KEYS)), "{latest:#}");
    assert_eq!(
        (latest["id"].as_str(), latest["state"].as_str()),
        (events[5]["run"]["runId"].as_str(), Some("COMPLETED"))
    );
    // Its runs, the latest first; one by id.
    let runs = get(&app, "/api/v1/namespaces/grandmas.kitchen/jobs/gather_apples/runs").await;
    let ids: Vec<&str> = runs["runs"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [events[5]["run"]["runId"].as_str().unwrap(), events[0]["run"]["runId"].as_str().unwrap()]);
    let page = get(&app, "/api/v1/namespaces/grandmas.kitchen/jobs/gather_apples/runs?limit=1&offset=1").await;
    assert_eq!(page["runs"][0]["id"], events[0]["run"]["runId"], "{page:#}");
    assert_eq!(page["totalCount"], 2);
    let first = events[0]["run"]["runId"].as_str().unwrap();
    let run = get(&app, &format!("/api/v1/jobs/runs/{first}")).await;
    assert_eq!(run["state"], "COMPLETED");
    assert_eq!(run["jobVersion"]["name"], "gather_apples");
    assert_eq!(run["inputDatasetVersions"][0]["datasetVersionId"]["name"], "red.delicious", "{run:#}");
    assert_eq!(run["endedAt"], "2020-08-29T23:00:00.000000Z");
    // Every job across namespaces by its latest run's state.
    let done = get(&app, "/api/v1/jobs?lastRunStates=COMPLETED").await;
    assert_eq!(done["totalCount"], 5, "{done:#}");
    let failed = get(&app, "/api/v1/jobs?lastRunStates=FAILED&lastRunStates=ABORTED").await;
    assert_eq!(failed, json!({"jobs": [], "totalCount": 0}));
    // The lineage graph, node by node against Marquez's answer for these events.
    let model = MarquezModel::of(&events);
    for start in [
        "job:grandmas.kitchen:prepare_apple_filling",
        "dataset:grandmas.kitchen:apple.pie",
        "dataset:grandmas.kitchen:apple.filling",
        "dataset:laurents-orchard:red.delicious",
    ] {
        for depth in [0, 1, 2, 10] {
            let g = get(&app, &format!("/api/v1/lineage?nodeId={start}&depth={depth}")).await;
            assert_eq!(graph_map(&g), model.lineage(start, depth), "{start} at depth {depth}");
        }
    }
    let whole = graph_map(&get(&app, "/api/v1/lineage?nodeId=dataset:grandmas.kitchen:apple.pie").await);
    assert!(!whole.contains_key("dataset:laurents-orchard:red.delicious"), "not in the current versions");
    // A dataset only an older version of a job read stands alone, as Marquez's orphaned dataset.
    let orphan = get(&app, "/api/v1/lineage?nodeId=dataset:laurents-orchard:red.delicious").await;
    let nodes = orphan["graph"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{orphan:#}");
    assert_eq!(nodes[0]["data"]["createdAt"], "2020-08-29T23:00:00.000000Z");
    // Search: jobs and datasets by a LIKE pattern, a kind at a time.
    let hits = get(&app, "/api/v1/search?q=apple%25pie").await;
    let got: BTreeSet<String> =
        hits["results"].as_array().unwrap().iter().map(|h| h["nodeId"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        got,
        strings(&["dataset:grandmas.kitchen:apple.pie", "job:grandmas.kitchen:prepare_apple_pie"]),
        "{hits:#}"
    );
    let jobs_only = get(&app, "/api/v1/search?q=APPLE&filter=JOB&limit=2").await;
    assert_eq!(jobs_only["totalCount"], 4, "{jobs_only:#}");
    assert_eq!(jobs_only["results"].as_array().unwrap().len(), 2);
    assert!(jobs_only["results"].as_array().unwrap().iter().all(|h| h["type"] == "JOB"));
    // Stored events, by eventTime newest first (not as received: 5_apple_vinegar is the
    // latest), at both paths; paged, windowed, and oldest first on asking.
    let mut by_time: Vec<&Value> = events.iter().collect();
    by_time.sort_by_key(|e| chrono::DateTime::parse_from_rfc3339(e["eventTime"].as_str().unwrap()).unwrap().to_utc());
    let all = get(&app, "/api/v1/events/lineage").await;
    assert_eq!(all["totalCount"], 8);
    let newest: Vec<&Value> = all["events"].as_array().unwrap().iter().map(|e| &e["run"]["runId"]).collect();
    let expected: Vec<&Value> = by_time.iter().rev().map(|e| &e["run"]["runId"]).collect();
    assert_eq!(newest, expected, "by eventTime, newest first");
    assert_eq!(get(&app, "/api/v1/events").await, all, "the client's path");
    let two = get(&app, "/api/v1/events?limit=2&offset=3").await;
    assert_eq!(
        two["events"].as_array().unwrap().iter().map(|e| &e["run"]["runId"]).collect::<Vec<_>>(),
        expected[3..5]
    );
    let oldest = get(&app, "/api/v1/events/lineage?sortDirection=asc&limit=1").await;
    assert_eq!(&oldest["events"][0], by_time[0]);
    let future = get(&app, "/api/v1/events/lineage?after=2999-01-01T00:00:00Z").await;
    assert_eq!(future, json!({"events": [], "totalCount": 0}));
    let past = get(&app, "/api/v1/events/lineage?before=2000-01-01T00:00:00Z").await;
    assert_eq!(past["totalCount"], 0);
    // Every answer is what /openapi.json documents for its route (keys, required keys, lists).
    let doc = get(&app, "/openapi.json").await;
    let run = events[0]["run"]["runId"].as_str().unwrap();
    for (path, documented) in [
        ("/api/v1/namespaces".to_string(), "/api/v1/namespaces"),
        ("/api/v1/namespaces/grandmas.kitchen".to_string(), "/api/v1/namespaces/{namespace}"),
        ("/api/v1/namespaces/grandmas.kitchen/datasets".to_string(), "/api/v1/namespaces/{namespace}/datasets"),
        (
            "/api/v1/namespaces/grandmas.kitchen/datasets/apples".to_string(),
            "/api/v1/namespaces/{namespace}/datasets/{dataset}",
        ),
        ("/api/v1/namespaces/grandmas.kitchen/jobs".to_string(), "/api/v1/namespaces/{namespace}/jobs"),
        (
            "/api/v1/namespaces/grandmas.kitchen/jobs/gather_apples".to_string(),
            "/api/v1/namespaces/{namespace}/jobs/{job}",
        ),
        (
            "/api/v1/namespaces/grandmas.kitchen/jobs/gather_apples/runs".to_string(),
            "/api/v1/namespaces/{namespace}/jobs/{job}/runs",
        ),
        ("/api/v1/jobs".to_string(), "/api/v1/jobs"),
        (format!("/api/v1/jobs/runs/{run}"), "/api/v1/jobs/runs/{id}"),
        ("/api/v1/lineage?nodeId=dataset:grandmas.kitchen:apples".to_string(), "/api/v1/lineage"),
        ("/api/v1/column-lineage?nodeId=dataset:grandmas.kitchen:apples".to_string(), "/api/v1/column-lineage"),
        ("/api/v1/search?q=apple".to_string(), "/api/v1/search"),
        ("/api/v1/events/lineage".to_string(), "/api/v1/events/lineage"),
        ("/api/v1/events".to_string(), "/api/v1/events"),
    ] {
        let answer = get(&app, &path).await;
        crate::rest::matches_schema(&doc, crate::rest::response_schema(&doc, documented, "get", "200"), &answer, &path);
    }
    let (_, missing) = call(&app, None, Method::GET, "/api/v1/namespaces/nowhere").await;
    let schema = crate::rest::response_schema(&doc, "/api/v1/namespaces/{namespace}", "get", "404");
    crate::rest::matches_schema(&doc, schema, &missing, "404");
}

fn event(state: &str, run: &str, job: &str, inputs: Vec<Value>, outputs: Vec<Value>) -> Value {
    json!({
        "eventType": state,
        "eventTime": (chrono::Utc::now() - chrono::Duration::minutes(5)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "etl", "name": job},
        "inputs": inputs,
        "outputs": outputs,
    })
}

fn ds(ns: &str, name: &str) -> Value {
    json!({"namespace": ns, "name": name})
}

fn uuid(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

/// Datastore `name` for `ns` with tables db.public.<t> (fields `id` and `amount`): (datastore,
/// container ids, field ids per table).
async fn tables(app: &TestApp, name: &str, ns: &str, names: &[&str]) -> (i64, Vec<(i64, Vec<i64>)>) {
    let d = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": name, "type": "postgresql", "namespaces": [ns]}}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let mut out = Vec::new();
    for n in names {
        let c = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id } } } }",
                json!({"i": {"datastoreId": d, "database": "db", "schema": "public", "name": n,
                    "fields": [{"name": "id", "type": "bigint"}, {"name": "amount", "type": "numeric"}],
                    "description": format!("the {n} table"), "tags": ["finance"]}}),
            )
            .await["upsertContainer"]
            .clone();
        let fields = c["fields"]["items"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
        out.push((c["id"].as_i64().unwrap(), fields));
    }
    (d, out)
}

async fn catalogued_tables_keep_the_names_their_events_used(app: TestApp) {
    let (_, t) = tables(&app, "wh", NS, &["orders", "revenue", "unsent"]).await;
    let (orders, revenue) = (&t[0], &t[1]);
    // The producer names the tables in its own spelling; the catalog resolves them.
    send(
        &app,
        json!([
            event("START", &uuid(1), "load_revenue", vec![ds(NS, "DB.PUBLIC.ORDERS")], vec![]),
            event(
                "COMPLETE",
                &uuid(1),
                "load_revenue",
                vec![ds(NS, "DB.PUBLIC.ORDERS")],
                vec![ds(NS, "db.public.revenue")]
            ),
        ]),
    )
    .await;
    // Column lineage: revenue.amount from orders.amount (a derived value).
    app.ok(
        "mutation($s: Int, $t: Int) { createEdge(input: {sourceFieldId: $s, targetFieldId: $t, description: \"sum(amount)\"}) { id } }",
        json!({"s": orders.1[1], "t": revenue.1[1]}),
    )
    .await;
    let ns = urlencoding(NS);
    let list = get(&app, &format!("/api/v1/namespaces/{ns}/datasets")).await;
    let got: Vec<&str> = list["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    // The names events sent; a table no event named by its key in its datastore's namespace.
    assert_eq!(got, ["DB.PUBLIC.ORDERS", "db.public.revenue", "db.public.unsent"], "{list:#}");
    let d = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.revenue")).await;
    assert_eq!(d["sourceName"], "wh");
    assert_eq!(
        d["fields"],
        json!([
            {"name": "id", "type": "bigint", "tags": [], "description": null},
            {"name": "amount", "type": "numeric", "tags": [], "description": null},
        ])
    );
    assert_eq!((d["description"].as_str(), &d["tags"]), (Some("the revenue table"), &json!(["finance"])), "{d:#}");
    assert_eq!(d["facets"]["tributary"]["containerId"], revenue.0);
    assert!(d["lastModifiedAt"].is_string(), "a complete run wrote it: {d:#}");
    let job = get(&app, "/api/v1/namespaces/etl/jobs/load_revenue").await;
    assert_eq!(job["inputs"], json!([{"namespace": NS, "name": "DB.PUBLIC.ORDERS"}]));
    assert_eq!(job["latestRun"]["state"], "COMPLETED");
    assert!(job["latestRun"]["startedAt"].is_string(), "START then COMPLETE: {job:#}");
    // The lineage from a table: URI namespaces keep their colons in node ids.
    let g = get(&app, &format!("/api/v1/lineage?nodeId=dataset:{ns}:db.public.revenue")).await;
    let ids: BTreeSet<String> =
        g["graph"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        ids,
        strings(&[
            &format!("dataset:{NS}:DB.PUBLIC.ORDERS"),
            &format!("dataset:{NS}:db.public.revenue"),
            "job:etl:load_revenue"
        ])
    );
    // Column lineage, with Python's spelling of booleans.
    let path = format!("/api/v1/column-lineage?nodeId=dataset:{ns}:db.public.revenue&depth=20&withDownstream=False");
    let cl = get(&app, &path).await;
    let nodes = cl["graph"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{cl:#}");
    let amount =
        nodes.iter().find(|n| n["id"] == format!("datasetField:{NS}:db.public.revenue:amount")).expect("the target");
    assert_eq!(amount["type"], "DATASET_FIELD");
    assert_eq!(
        amount["data"]["inputFields"],
        json!([{"namespace": NS, "dataset": "DB.PUBLIC.ORDERS", "datasetVersion": null, "field": "amount",
                "transformationDescription": "sum(amount)", "transformationType": null}]),
        "{amount:#}"
    );
    assert_eq!(
        amount["inEdges"],
        json!([{"origin": format!("datasetField:{NS}:DB.PUBLIC.ORDERS:amount"), "destination": amount["id"]}])
    );
    // From the source: nothing upstream; downstream only on asking.
    let src = format!("/api/v1/column-lineage?nodeId=datasetField:{ns}:DB.PUBLIC.ORDERS:amount");
    assert_eq!(get(&app, &format!("{src}&withDownstream=false")).await, json!({"graph": []}));
    let down = get(&app, &format!("{src}&withDownstream=True")).await;
    assert_eq!(down["graph"].as_array().unwrap().len(), 2, "{down:#}");
}

/// Percent-encodes a path segment as Marquez's Python client does (`quote(.., safe='')`).
fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn restricted_jobs_are_never_named(app: TestApp) {
    let (wh, _) = tables(&app, "wh", NS, &["a", "b"]).await;
    tables(&app, "secret", "postgres://secret:5432", &["s"]).await;
    let secret = ds("postgres://secret:5432", "db.public.s");
    send(
        &app,
        json!([
            event("COMPLETE", &uuid(10), "open_job", vec![ds(NS, "db.public.a")], vec![ds(NS, "db.public.b")]),
            event("FAIL", &uuid(11), "secret_job", vec![ds(NS, "db.public.a")], vec![secret]),
        ]),
    )
    .await;
    let ann = app.viewer_of("ann", json!(wh)).await;
    let as_ann = |path: String| {
        let (app, ann) = (&app, ann.clone());
        async move { call(app, Some(Some(&ann)), Method::GET, &path).await }
    };
    let (s, jobs) = as_ann("/api/v1/namespaces/etl/jobs".into()).await;
    assert_eq!(s, 200);
    let names: Vec<&str> = jobs["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!((names, &jobs["totalCount"]), (vec!["open_job"], &json!(1)), "{jobs:#}");
    let (_, failed) = as_ann("/api/v1/jobs?lastRunStates=FAILED".into()).await;
    assert_eq!(failed, json!({"jobs": [], "totalCount": 0}));
    let (s, body) = as_ann("/api/v1/namespaces/etl/jobs/secret_job".into()).await;
    assert_eq!((s, &body["code"]), (403, &json!(403)), "{body:#}");
    let (s, _) = as_ann(format!("/api/v1/jobs/runs/{}", uuid(11))).await;
    assert_eq!(s, 403);
    let (s, _) = as_ann("/api/v1/namespaces/etl/jobs/secret_job/runs".into()).await;
    assert_eq!(s, 403);
    let (_, g) = as_ann(format!("/api/v1/lineage?nodeId=dataset:{NS}:db.public.a")).await;
    let text = g.to_string();
    assert!(text.contains("open_job") && !text.contains("secret_job"), "{g:#}");
    let (_, hits) = as_ann("/api/v1/search?q=job".into()).await;
    assert!(!hits.to_string().contains("secret_job"), "{hits:#}");
    let (_, events) = as_ann("/api/v1/events/lineage".into()).await;
    assert!(!events["events"].to_string().contains("secret_job"), "{events:#}");
    // The admin sees both.
    let all = get(&app, "/api/v1/namespaces/etl/jobs").await;
    assert_eq!(all["totalCount"], 2);
    assert_eq!(get(&app, "/api/v1/jobs?lastRunStates=FAILED").await["jobs"][0]["name"], "secret_job");
}

async fn refusals_say_what_is_wrong(app: TestApp) {
    send(&app, event("COMPLETE", &uuid(20), "j", vec![ds("in", "a")], vec![ds("out", "b")])).await;
    // No token: 401 in Marquez's body, on reads and on refused writes.
    for (method, path) in [(Method::GET, "/api/v1/namespaces"), (Method::PUT, "/api/v1/namespaces/x")] {
        let (s, body) = call(&app, Some(None), method, path).await;
        assert_eq!((s, &body["code"]), (401, &json!(401)), "{path}: {body:#}");
        assert!(body["message"].as_str().unwrap().contains("token"), "{body:#}");
    }
    // Unknown things: 404 naming them.
    for (path, word) in [
        ("/api/v1/namespaces/nowhere", "nowhere"),
        ("/api/v1/namespaces/nowhere/datasets", "nowhere"),
        ("/api/v1/namespaces/nowhere/jobs", "nowhere"),
        ("/api/v1/namespaces/in/datasets/missing", "missing"),
        ("/api/v1/namespaces/etl/jobs/missing", "missing"),
        ("/api/v1/namespaces/etl/jobs/missing/runs", "missing"),
        ("/api/v1/jobs/runs/00000000-0000-4000-8000-999999999999", "00000000-0000-4000-8000-999999999999"),
        ("/api/v1/lineage?nodeId=dataset:in:missing", "missing"),
        ("/api/v1/lineage?nodeId=job:etl:missing", "missing"),
        ("/api/v1/column-lineage?nodeId=dataset:in:missing", "missing"),
    ] {
        let (s, body) = call(&app, None, Method::GET, path).await;
        assert_eq!((s, &body["code"]), (404, &json!(404)), "{path}: {body:#}");
        assert!(body["message"].as_str().unwrap().contains(word), "{path}: {body:#}");
    }
    // Bad parameters: 400 naming the parameter.
    for (path, param) in [
        ("/api/v1/lineage", "nodeId"),
        ("/api/v1/lineage?nodeId=table:in:a", "nodeId"),
        ("/api/v1/lineage?nodeId=dataset:in", "nodeId"),
        ("/api/v1/lineage?nodeId=dataset:in:a&depth=-1", "depth"),
        ("/api/v1/lineage?nodeId=dataset:in:a&depth=x", "depth"),
        ("/api/v1/lineage?nodeId=datasetField:in:a:f", "nodeId"),
        ("/api/v1/column-lineage?nodeId=dataset:in:a&withDownstream=maybe", "withDownstream"),
        ("/api/v1/column-lineage?nodeId=dataset:in:a%23v1", "nodeId"),
        ("/api/v1/namespaces?limit=0", "limit"),
        ("/api/v1/namespaces?offset=-1", "offset"),
        ("/api/v1/jobs?lastRunStates=DONE", "lastRunStates"),
        ("/api/v1/search", "q"),
        ("/api/v1/search?q=a&filter=TABLE", "filter"),
        ("/api/v1/search?q=a&limit=a", "limit"),
        ("/api/v1/events/lineage?sortDirection=sideways", "sortDirection"),
        ("/api/v1/events/lineage?before=yesterday", "before"),
        ("/api/v1/events?limit=1&limit=2", "limit"),
    ] {
        let (s, body) = call(&app, None, Method::GET, path).await;
        assert_eq!((s, &body["code"]), (400, &json!(400)), "{path}: {body:#}");
        assert!(body["message"].as_str().unwrap().contains(param), "{path}: {body:#}");
    }
    // Marquez's write routes: 405 pointing at OpenLineage ingest.
    for (method, path) in [
        (Method::PUT, "/api/v1/namespaces/etl"),
        (Method::PUT, "/api/v1/namespaces/etl/datasets/a"),
        (Method::PUT, "/api/v1/namespaces/etl/jobs/j"),
        (Method::POST, "/api/v1/namespaces/etl/jobs/j/runs"),
        (Method::POST, &format!("/api/v1/jobs/runs/{}/complete", uuid(20))),
        (Method::PUT, "/api/v1/sources/s"),
        (Method::PUT, "/api/v1/tags/t"),
    ] {
        let (s, body) = call(&app, None, method.clone(), path).await;
        assert_eq!((s, &body["code"]), (405, &json!(405)), "{method} {path}: {body:#}");
        assert!(body["message"].as_str().unwrap().contains("POST /api/v1/lineage"), "{body:#}");
    }
    // Ingest at Marquez's path still works beside the read of the same path.
    send(&app, event("COMPLETE", &uuid(21), "j", vec![ds("in", "a")], vec![ds("out", "b")])).await;
    assert_eq!(get(&app, "/api/v1/namespaces/etl/jobs/j/runs").await["totalCount"], 2);
}

/// A COMPLETE event of job `etl.<job>` at `2024-03-01T00:00:<second>Z`, one run per event.
fn at(second: u32, run: u32, job: &str, inputs: &[&str], outputs: &[&str]) -> Value {
    let list = |names: &[&str]| -> Vec<Value> { names.iter().map(|n| ds("shop", n)).collect() };
    let mut e = event("COMPLETE", &uuid(run), job, list(inputs), list(outputs));
    e["eventTime"] = json!(format!("2024-03-01T00:{:02}:{:02}Z", second / 60, second % 60));
    e
}

/// Jobs that share inputs and outputs several hops apart: two readers of one table
/// (`stg_orders`, `audit_orders`), two writers of one (`mart`, `backfill_mart`), a job whose
/// current version no longer reads what it once read (`legacy`), and an island.
fn shared_graph() -> Vec<Value> {
    vec![
        at(1, 101, "load_orders", &[], &["raw.orders"]),
        at(2, 102, "load_customers", &[], &["raw.customers"]),
        at(3, 103, "stg_orders", &["raw.orders"], &["stg.orders"]),
        at(4, 104, "audit_orders", &["raw.orders"], &["audit.orders"]),
        at(5, 105, "mart", &["stg.orders", "raw.customers"], &["mart.sales"]),
        at(6, 106, "backfill_mart", &["archive.sales"], &["mart.sales"]),
        at(7, 107, "report", &["mart.sales"], &["report.daily"]),
        at(8, 108, "export", &["report.daily"], &["exports.daily"]),
        at(9, 109, "legacy", &["stg.orders", "old.feed"], &["legacy.x"]),
        at(10, 110, "legacy", &["old.src"], &["legacy.x"]),
        at(11, 111, "island", &["island.a"], &["island.b"]),
        at(12, 112, "audit_orders", &["raw.orders"], &["audit.orders"]),
    ]
}

async fn lineage_walks_jobs_sharing_datasets_as_marquez_sql_does(app: TestApp) {
    let events = shared_graph();
    send(&app, Value::Array(events.clone())).await;
    let model = MarquezModel::of(&events);
    let starts = [
        "job:etl:stg_orders",
        "job:etl:report",
        "job:etl:legacy",
        "dataset:shop:raw.orders",
        "dataset:shop:mart.sales",
        "dataset:shop:report.daily",
        "dataset:shop:old.feed",
        "dataset:shop:island.b",
    ];
    for start in starts {
        for depth in [0, 1, 2, 3, 20] {
            let g = get(&app, &format!("/api/v1/lineage?nodeId={start}&depth={depth}")).await;
            assert_eq!(graph_map(&g), model.lineage(start, depth), "{start} at depth {depth}");
        }
    }
    // What the reference says, spelled out for one start, so the reference itself is checked.
    let jobs = |g: &GraphMap| -> BTreeSet<String> { g.keys().filter(|k| k.starts_with("job:")).cloned().collect() };
    let one = model.lineage("job:etl:stg_orders", 1);
    assert_eq!(
        jobs(&one),
        strings(&["job:etl:audit_orders", "job:etl:load_orders", "job:etl:mart", "job:etl:stg_orders"]),
        "a reader of the same input and the writer of it are one step away; legacy no longer reads stg.orders"
    );
    assert!(one.contains_key("dataset:shop:raw.customers"), "the datasets of the jobs found are nodes");
    assert_eq!(one["dataset:shop:raw.customers"], (BTreeSet::new(), strings(&["job:etl:mart"])));
    let two = model.lineage("job:etl:stg_orders", 2);
    assert!(jobs(&two).is_superset(&strings(&["job:etl:backfill_mart", "job:etl:report", "job:etl:load_customers"])));
    assert!(jobs(&model.lineage("job:etl:stg_orders", 3)).contains("job:etl:export"));
    // A dataset starts from its latest writer: mart.sales from backfill_mart, so at depth 0
    // only that job and its datasets.
    assert_eq!(jobs(&model.lineage("dataset:shop:mart.sales", 0)), strings(&["job:etl:backfill_mart"]),);
    // Only an old version read old.feed: it stands alone.
    assert_eq!(model.lineage("dataset:shop:old.feed", 5).len(), 1);
    // The default depth reaches the whole connected part and never the island.
    let all = graph_map(&get(&app, "/api/v1/lineage?nodeId=dataset:shop:raw.orders").await);
    assert!(all.contains_key("job:etl:export") && !all.contains_key("job:etl:island"), "{all:#?}");
}

async fn events_are_windowed_and_sorted_by_event_time(app: TestApp) {
    // Sent in an order unlike their event times, and with a job event beside the run events.
    let mut events = shared_graph();
    events.reverse();
    events.swap(2, 7);
    send(&app, Value::Array(events.clone())).await;
    send(
        &app,
        json!({"eventTime": "2024-03-01T00:00:06.500Z", "producer": PRODUCER,
               "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
               "job": {"namespace": "etl", "name": "declared"}, "inputs": [], "outputs": [ds("shop", "raw.orders")]}),
    )
    .await;
    let time = |e: &Value| chrono::DateTime::parse_from_rfc3339(e["eventTime"].as_str().unwrap()).unwrap().to_utc();
    let (after, before) = ("2024-03-01T00:00:04Z", "2024-03-01T00:00:10Z");
    let (lo, hi) =
        (chrono::DateTime::parse_from_rfc3339(after).unwrap(), chrono::DateTime::parse_from_rfc3339(before).unwrap());
    let mut window: Vec<&Value> = events.iter().filter(|e| time(e) >= lo && time(e) < hi).collect();
    window.sort_by_key(|e| time(e));
    assert_eq!(window.len(), 6, "the window holds seconds 4 to 9");
    let runs = |v: &Value| -> Vec<String> {
        v["events"].as_array().unwrap().iter().map(|e| e["run"]["runId"].as_str().unwrap().to_string()).collect()
    };
    let want = |list: &[&Value]| -> Vec<String> {
        list.iter().map(|e| e["run"]["runId"].as_str().unwrap().to_string()).collect()
    };
    let newest: Vec<&Value> = window.iter().rev().copied().collect();
    let desc = get(&app, &format!("/api/v1/events/lineage?after={after}&before={before}")).await;
    assert_eq!(runs(&desc), want(&newest), "by eventTime, newest first: {desc:#}");
    // Marquez lists run events and counts every event in the window (the job event too).
    assert_eq!(desc["totalCount"], 7, "{desc:#}");
    assert_eq!(desc["events"][0], **newest.first().unwrap(), "each event as it was sent");
    let asc = get(&app, &format!("/api/v1/events/lineage?after={after}&before={before}&sortDirection=asc")).await;
    assert_eq!(runs(&asc), want(&window));
    let paged = get(&app, &format!("/api/v1/events?after={after}&before={before}&limit=2&offset=1")).await;
    assert_eq!(runs(&paged), want(&newest[1..3]));
    // `after` is inclusive and `before` exclusive, as Marquez's SQL compares.
    let edge = get(&app, "/api/v1/events/lineage?after=2024-03-01T00:00:05Z&before=2024-03-01T00:00:06Z").await;
    assert_eq!(runs(&edge), [uuid(105)]);
}

async fn namespaces_datasets_sources_tags_and_versions_answer_as_marquez(app: TestApp) {
    let (_, t) = tables(&app, "wh", NS, &["seed", "stg", "idle"]).await;
    let seed = &t[0];
    // stg is written from a seed that only its columnLineage names (dbt-ol's seeds), with a
    // schema facet; an OpenLineage tag on it; an asset outside the catalog read.
    let lineage = json!({"fields": {"amount": {"inputFields": [{"namespace": NS, "name": "db.public.seed", "field": "amount"}]}}});
    let schema = |ty: &str| json!({"fields": [{"name": "id", "type": "bigint"}, {"name": "amount", "type": ty, "description": "in cents"}]});
    let mut first = event("COMPLETE", &uuid(30), "build_stg", vec![ds("s3://lake", "raw/x.csv")], vec![]);
    first["outputs"] = json!([{"namespace": NS, "name": "db.public.stg",
        "facets": {"schema": schema("numeric"), "columnLineage": lineage,
                   "tags": {"tags": [{"key": "pii", "value": "false", "source": "MANUAL"}]}}}]);
    first["eventTime"] = json!("2024-04-01T00:00:00Z");
    let mut second = first.clone();
    second["run"]["runId"] = json!(uuid(31));
    second["eventTime"] = json!("2024-04-02T00:00:00Z");
    second["outputs"][0]["facets"]["schema"] = schema("bigint");
    send(&app, json!([first, second])).await;
    let ns = urlencoding(NS);
    // Every namespace names an owner: Marquez's default.
    let all = get(&app, "/api/v1/namespaces").await;
    for n in all["namespaces"].as_array().unwrap() {
        assert_eq!(n["ownerName"], "anonymous", "{n:#}");
    }
    assert_eq!(get(&app, &format!("/api/v1/namespaces/{ns}")).await["ownerName"], "anonymous");
    // Every dataset has createdAt and updatedAt: the seed (named only by column lineage) from
    // its column edge, idle (only catalogued) from when it was made.
    let list = get(&app, &format!("/api/v1/namespaces/{ns}/datasets")).await;
    let names: Vec<&str> = list["datasets"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["db.public.idle", "db.public.seed", "db.public.stg"], "{list:#}");
    for d in list["datasets"].as_array().unwrap() {
        assert!(d["createdAt"].is_string() && d["updatedAt"].is_string(), "{d:#}");
    }
    let seed_ds = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.seed")).await;
    assert!(seed_ds["createdAt"].is_string(), "{seed_ds:#}");
    assert_eq!(seed_ds["facets"]["tributary"]["containerId"], seed.0);
    let stg_ds = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.stg")).await;
    assert!(stg_ds["createdAt"].as_str() <= stg_ds["updatedAt"].as_str(), "{stg_ds:#}");
    assert_eq!(stg_ds["updatedAt"], "2024-04-02T00:00:00.000000Z");
    // The user's tags win over the event's (the rule of `metadataAssertions`).
    assert_eq!(stg_ds["tags"], json!(["finance"]), "{stg_ds:#}");
    // Sources: the datastore, and the namespace of the asset outside the catalog.
    let sources = get(&app, "/api/v1/sources").await;
    let wh = sources["sources"].as_array().unwrap().iter().find(|s| s["name"] == "wh").expect("the datastore");
    assert_eq!((&wh["type"], &wh["connectionUrl"]), (&json!("POSTGRESQL"), &json!(NS)), "{wh:#}");
    assert!(wh["createdAt"].is_string(), "{wh:#}");
    assert_eq!(wh["updatedAt"], "2024-04-02T00:00:00.000000Z");
    assert!(keys(wh).is_superset(&strings(&[
        "type",
        "name",
        "createdAt",
        "updatedAt",
        "connectionUrl",
        "description"
    ])));
    assert_eq!(get(&app, "/api/v1/sources/wh").await["name"], "wh");
    let lake = get(&app, &format!("/api/v1/sources/{}", urlencoding("s3://lake"))).await;
    assert_eq!((&lake["type"], &lake["connectionUrl"]), (&json!("S3"), &json!("s3://lake")), "{lake:#}");
    let page = get(&app, "/api/v1/sources?limit=1&offset=1").await;
    assert_eq!(page["sources"].as_array().unwrap().len(), 1);
    // Tags: the catalog's (`tables` tags each table `finance`) and the OpenLineage one.
    let tags = get(&app, "/api/v1/tags").await;
    let names: Vec<&Value> = tags["tags"].as_array().unwrap().iter().map(|t| &t["name"]).collect();
    assert!(names.contains(&&json!("finance")) && names.contains(&&json!("pii=false")), "{tags:#}");
    assert!(tags["tags"][0].as_object().unwrap().contains_key("description"));
    // Versions: one per run that wrote stg, the latest first, with the schema that run sent.
    let versions = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.stg/versions")).await;
    assert_eq!(versions["totalCount"], 2, "{versions:#}");
    let v = versions["versions"].as_array().unwrap();
    assert_eq!(v[0]["createdByRun"]["id"], uuid(31));
    assert_eq!(v[1]["createdByRun"]["id"], uuid(30));
    assert_eq!(v[0]["fields"][1], json!({"name": "amount", "type": "bigint", "tags": [], "description": "in cents"}));
    assert_eq!(v[1]["fields"][1]["type"], "numeric");
    assert_eq!((&v[0]["id"], &v[0]["type"]), (&json!({"namespace": NS, "name": "db.public.stg"}), &json!("DB_TABLE")));
    assert_eq!(v[0]["createdAt"], "2024-04-02T00:00:00.000000Z");
    assert_ne!(v[0]["version"], v[1]["version"]);
    // A version by its id; the run's outputs and the dataset (its latest) name it.
    let id0 = v[0]["version"].as_str().unwrap();
    assert_eq!(get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.stg")).await["currentVersion"], id0);
    let one = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.stg/versions/{id0}")).await;
    assert_eq!(one["fields"], v[0]["fields"]);
    let run = get(&app, &format!("/api/v1/jobs/runs/{}", uuid(31))).await;
    assert_eq!(run["outputDatasetVersions"][0]["datasetVersionId"]["version"], id0, "{run:#}");
    let paged = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.stg/versions?limit=1&offset=1")).await;
    assert_eq!((paged["versions"][0]["version"].clone(), &paged["totalCount"]), (v[1]["version"].clone(), &json!(2)));
    // Read only (the lake file): its version is the first run that read it; the seed: none.
    let read =
        get(&app, &format!("/api/v1/namespaces/{}/datasets/raw%2Fx.csv/versions", urlencoding("s3://lake"))).await;
    assert_eq!(
        (&read["totalCount"], &read["versions"][0]["createdByRun"]["id"]),
        (&json!(1), &json!(uuid(30))),
        "{read:#}"
    );
    let none = get(&app, &format!("/api/v1/namespaces/{ns}/datasets/db.public.seed/versions")).await;
    assert_eq!(none, json!({"versions": [], "totalCount": 0}));
    // Each answer is what /openapi.json documents for it.
    let doc = get(&app, "/openapi.json").await;
    for (path, documented) in [
        ("/api/v1/sources".to_string(), "/api/v1/sources"),
        ("/api/v1/sources/wh".to_string(), "/api/v1/sources/{source}"),
        ("/api/v1/tags".to_string(), "/api/v1/tags"),
        (
            format!("/api/v1/namespaces/{ns}/datasets/db.public.stg/versions"),
            "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions",
        ),
        (
            format!("/api/v1/namespaces/{ns}/datasets/db.public.stg/versions/{id0}"),
            "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions/{version}",
        ),
        ("/api/v1/namespaces/etl".to_string(), "/api/v1/namespaces/{namespace}"),
    ] {
        let answer = get(&app, &path).await;
        crate::rest::matches_schema(&doc, crate::rest::response_schema(&doc, documented, "get", "200"), &answer, &path);
    }
}

async fn every_api_v1_refusal_has_marquez_error_shape(app: TestApp) {
    send(&app, event("COMPLETE", &uuid(40), "j", vec![ds("in", "a")], vec![ds("out", "b")])).await;
    let ns = urlencoding(NS);
    for (method, path, status, word) in [
        (Method::GET, "/api/v1/sources/nowhere".to_string(), 404, "nowhere"),
        (Method::GET, "/api/v1/namespaces/out/datasets/missing/versions".to_string(), 404, "missing"),
        (
            Method::GET,
            "/api/v1/namespaces/out/datasets/b/versions/00000000-0000-0000-0000-000000000000".to_string(),
            404,
            "00000000",
        ),
        (Method::GET, format!("/api/v1/namespaces/{ns}/datasets/x/versions"), 404, "x"),
        (Method::GET, "/api/v1/tags?limit=0".to_string(), 400, "limit"),
        (Method::GET, "/api/v1/sources?offset=-2".to_string(), 400, "offset"),
        (Method::GET, "/api/v1/namespaces/out/datasets/b/versions?limit=x".to_string(), 400, "limit"),
        // A path segment that is not UTF-8 once decoded.
        (Method::GET, "/api/v1/namespaces/%FF%FE/datasets".to_string(), 400, "UTF-8"),
        // No such route under /api/v1 (the client's list_events(namespace)), and a method a
        // Marquez path does not take.
        (Method::GET, "/api/v1/events/etl".to_string(), 404, "no route"),
        (Method::GET, "/api/v1/stats/lineage-events".to_string(), 404, "no route"),
        (Method::DELETE, "/api/v1/search".to_string(), 405, "DELETE"),
        (Method::POST, "/api/v1/tags".to_string(), 405, "POST"),
    ] {
        let (s, body) = call(&app, None, method.clone(), &path).await;
        assert_eq!((s, &body["code"]), (status, &json!(status)), "{method} {path}: {body:#}");
        assert_eq!(keys(&body), strings(&["code", "message"]), "{path}");
        assert!(body["message"].as_str().unwrap().contains(word), "{path}: {body:#}");
    }
    // Outside /api/v1 the REST body is unchanged.
    let (s, body) = call(&app, None, Method::GET, "/api/nothing/here").await;
    assert_eq!((s, body["detail"].is_string()), (404, true), "{body:#}");
}

/// Marquez's demo data (`docker/metadata.template.json`), filled in as `docker/seed.sh` does.
fn marquez_demo() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openlineage-real/marquez_demo/metadata.template.json");
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text = text.replace("{{RUN_START_TIME}}", "2024-05-01T10:00:00.000Z");
    for n in 5..=10 {
        text =
            text.replace(&format!("{{{{RUN_END_TIME_AFTER_{n}_MINUTES}}}}"), &format!("2024-05-01T10:{n:02}:00.000Z"));
    }
    serde_json::from_str(&text).expect("the demo's events")
}

async fn the_marquez_demo_answers_as_marquez_does(app: TestApp) {
    let events = marquez_demo();
    assert_eq!(events.len(), 26);
    send(&app, Value::Array(events.clone())).await;
    let model = MarquezModel::of(&events);
    let mut starts: BTreeSet<String> = model.current.keys().cloned().collect();
    starts.extend(model.current.values().flat_map(|(i, o)| i.iter().chain(o).cloned()));
    for start in &starts {
        for depth in [0, 1, 2, 3] {
            let g = get(&app, &format!("/api/v1/lineage?nodeId={start}&depth={depth}")).await;
            assert_eq!(graph_map(&g), model.lineage(start, depth), "{start} at depth {depth}");
        }
    }
    // The figures: from delivery_7_days at depth 1 Marquez answers 22 nodes (its
    // writer, the jobs sharing a table with it on either side, and all their tables).
    let g = get(&app, "/api/v1/lineage?nodeId=dataset:food_delivery:public.delivery_7_days&depth=1").await;
    assert_eq!(g["graph"].as_array().unwrap().len(), 22);
    // Windowed by eventTime: the 13 STARTs at 10:00 and the COMPLETEs at 10:05 and 10:06.
    let w = get(&app, "/api/v1/events/lineage?after=2024-05-01T10:00:00Z&before=2024-05-01T10:06:30Z&limit=100").await;
    let want = events.iter().filter(|e| e["eventTime"].as_str().unwrap() < "2024-05-01T10:06:30").count();
    assert_eq!((w["totalCount"].as_u64(), w["events"].as_array().unwrap().len()), (Some(want as u64), want));
    assert_eq!(want, 13 + 6);
}
