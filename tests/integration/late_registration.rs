//! Issue 46: late registration converges. Events sent before some of their tables were registered
//! keep those datasets as external placeholders; registering the tables (no replay) moves the
//! jobs' and runs' datasets, the edges and their evidence to the containers, retires the
//! placeholders' edges (as-of reads before the registration still show them) and records one
//! `EXTERNAL_ADOPTED` change per placeholder. What is left has the shape a clean ingest of the
//! same events gives where the tables were registered first (here: the same events in another
//! namespace of the same store), and replaying the events, once or twice, changes nothing.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    registering_the_tables_adopts_their_placeholders,
    listing_the_namespace_adopts_its_placeholders,
    an_auto_created_container_adopts_its_placeholder
);

const LATE: &str = "postgres://late.example.com:5432";
const CLEAN: &str = "postgres://clean.example.com:5432";
const JOBS: [&str; 4] = ["load", "stage", "audit", "publish"];

fn ds(ns: &str, name: &str) -> Value {
    json!({"namespace": ns, "name": format!("analytics.public.{name}")})
}

fn event(ns: &str, state: &str, run: &str, job: &str, inputs: &[&str], outputs: &[&str]) -> Value {
    json!({
        "eventType": state,
        "eventTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "producer": "https://example.com/late-registration-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": jobs_ns(ns), "name": job},
        "inputs": inputs.iter().map(|n| ds(ns, n)).collect::<Vec<_>>(),
        "outputs": outputs.iter().map(|n| ds(ns, n)).collect::<Vec<_>>(),
    })
}

fn jobs_ns(ns: &str) -> String {
    if ns == LATE {
        "late_jobs".into()
    } else {
        "clean_jobs".into()
    }
}

fn run_id(ns: &str, n: u32) -> String {
    format!("{}-0000-4000-8000-00000000000{n}", if ns == LATE { "1aaaaaaa" } else { "2aaaaaaa" })
}

/// raw_orders feeds load (START and COMPLETE), stage (only started) and audit (a read alone);
/// publish writes export from orders.
fn events(ns: &str) -> Vec<Value> {
    vec![
        event(ns, "START", &run_id(ns, 1), "load", &["raw_orders"], &["orders"]),
        event(ns, "COMPLETE", &run_id(ns, 1), "load", &["raw_orders"], &["orders"]),
        event(ns, "START", &run_id(ns, 2), "stage", &["raw_orders"], &["stage"]),
        event(ns, "COMPLETE", &run_id(ns, 3), "audit", &["raw_orders"], &[]),
        event(ns, "COMPLETE", &run_id(ns, 4), "publish", &["orders"], &["export"]),
    ]
}

async fn datastore(app: &TestApp, name: &str, namespaces: &[&str]) -> i64 {
    let d = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": name, "type": "postgresql", "namespaces": namespaces}}),
        )
        .await;
    d["upsertDatastore"]["id"].as_i64().unwrap()
}

async fn register(app: &TestApp, datastore: i64, tables: &[&str]) -> Vec<i64> {
    let mut ids = Vec::new();
    for t in tables {
        let c = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                json!({"i": {"datastoreId": datastore, "database": "analytics", "schema": "public", "name": t}}),
            )
            .await;
        ids.push(c["upsertContainer"]["id"].as_i64().unwrap());
    }
    ids
}

async fn ingest(app: &TestApp, ns: &str) {
    let (status, body) = app.post("/api/v1/lineage", &json!(events(ns))).await;
    assert_eq!(status, 201, "{body:#}");
}

/// What a user sees of one namespace's lineage, with the namespace's own names (its fqn prefix,
/// its run ids, its job namespace) written alike, so the two namespaces compare.
async fn shape(app: &TestApp, ns: &str, centre: i64) -> Value {
    let jobs_ns = jobs_ns(ns);
    let plain = |s: &str| s.replace(ns, "NS");
    // Live table edges with, per edge, the jobs of its live evidence (a duplicate shows twice).
    let d = app
        .ok(
            "{ edges(size: 200) { items { sourceContainer { name } targetContainer { name } sourceExternalFqn
                 targetExternalFqn evidence { retiredAt details } } } }",
            json!({}),
        )
        .await;
    let end = |e: &Value, side: &str| -> String {
        e[format!("{side}Container")]["name"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("ext:{}", plain(e[format!("{side}ExternalFqn")].as_str().unwrap_or("?"))))
    };
    let mut edges: Vec<String> = Vec::new();
    for e in d["edges"]["items"].as_array().unwrap() {
        for v in e["evidence"].as_array().unwrap() {
            if v["details"]["job"]["namespace"] == jobs_ns.as_str() && v["retiredAt"].is_null() {
                edges.push(format!("{} -> {} by {}", end(e, "source"), end(e, "target"), v["details"]["job"]["name"]));
            }
        }
    }
    edges.sort();
    let io = |v: &Value| -> Vec<String> {
        let mut out: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let name = x["container"]["name"].as_str().map(str::to_string);
                format!(
                    "{} {}",
                    x["kind"].as_str().unwrap(),
                    name.unwrap_or_else(|| plain(x["name"].as_str().unwrap()))
                )
            })
            .collect();
        out.sort();
        out
    };
    let mut jobs = serde_json::Map::new();
    for (n, job) in JOBS.iter().enumerate() {
        let q = "query($ns: String!, $j: String!, $r: String!) {
            job(namespace: $ns, name: $j) { inputs { kind name container { name } } outputs { kind name container { name } } }
            run(runId: $r) { state inputs { kind name container { name } } outputs { kind name container { name } } } }";
        let d = app.ok(q, json!({"ns": jobs_ns, "j": job, "r": run_id(ns, n as u32 + 1)})).await;
        jobs.insert(
            job.to_string(),
            json!({
                "job": [io(&d["job"]["inputs"]), io(&d["job"]["outputs"])],
                "run": [io(&d["run"]["inputs"]), io(&d["run"]["outputs"])],
                "state": d["run"]["state"],
            }),
        );
    }
    // The graph around orders with its jobs, by name.
    let g = app
        .ok(
            "query($id: Int!) { lineageGraph(containerId: $id, depth: 3, includeJobs: true) {
                nodes { id name } externalNodes { fqn } jobs { id name }
                edges { sourceContainerId targetContainerId } externalEdges { sourceNodeId targetNodeId sourceContainerId targetContainerId }
                jobEdges { kind sourceNodeId targetNodeId } } }",
            json!({"id": centre}),
        )
        .await;
    let g = &g["lineageGraph"];
    let name_of = |id: &str| -> String {
        if let Some(job) = id.strip_prefix("job:") {
            let j = g["jobs"].as_array().unwrap().iter().find(|j| j["id"].as_i64() == job.parse().ok());
            return format!("job {}", j.map(|j| j["name"].as_str().unwrap()).unwrap_or("?"));
        }
        let node = g["nodes"].as_array().unwrap().iter().find(|n| n["id"].as_i64() == id.parse().ok());
        node.map(|n| n["name"].as_str().unwrap().to_string()).unwrap_or_else(|| plain(id))
    };
    let mut nodes: Vec<String> = g["nodes"].as_array().unwrap().iter().map(|n| name_of(&n["id"].to_string())).collect();
    nodes.extend(g["externalNodes"].as_array().unwrap().iter().map(|x| plain(x["fqn"].as_str().unwrap())));
    nodes.sort();
    let mut graph_edges: Vec<String> = g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} -> {}",
                name_of(&e["sourceContainerId"].to_string()),
                name_of(&e["targetContainerId"].to_string())
            )
        })
        .chain(g["externalEdges"].as_array().unwrap().iter().map(|e| {
            let id = |side: &str| {
                e[format!("{side}NodeId")]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| e[format!("{side}ContainerId")].to_string())
            };
            format!("{} -> {}", name_of(&id("source")), name_of(&id("target")))
        }))
        .chain(g["jobEdges"].as_array().unwrap().iter().map(|e| {
            format!(
                "{} {} -> {}",
                e["kind"].as_str().unwrap(),
                name_of(e["sourceNodeId"].as_str().unwrap()),
                name_of(e["targetNodeId"].as_str().unwrap())
            )
        }))
        .collect();
    graph_edges.sort();
    json!({"edges": edges, "jobs": jobs, "graph": {"nodes": nodes, "edges": graph_edges}})
}

/// The `EXTERNAL_ADOPTED` changes: (container ids, the fqn adopted).
async fn adoptions(app: &TestApp) -> Vec<(Value, Value)> {
    let d = app.ok("{ changes(first: 500) { items { kind containerIds detail } } }", json!({})).await;
    d["changes"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "EXTERNAL_ADOPTED")
        .map(|c| (c["containerIds"].clone(), c["detail"]["fqn"].clone()))
        .collect()
}

async fn replay(app: &TestApp) {
    let lineage = tributary::service::Lineage::new(app.store.clone());
    let report = lineage.replay_openlineage(0, &[], |_| {}).await.expect("replay");
    assert!(report.events.iter().all(|e| e.status != "failed" && e.status != "rejected"));
}

async fn registering_the_tables_adopts_their_placeholders(app: TestApp) {
    // The clean namespace: every table registered before its events.
    let clean_ds = datastore(&app, "clean", &[CLEAN]).await;
    let clean = register(&app, clean_ds, &["orders", "stage", "raw_orders", "export"]).await;
    ingest(&app, CLEAN).await;
    let want = shape(&app, CLEAN, clean[0]).await;
    assert!(!want.to_string().contains("EXTERNAL") && !want.to_string().contains("ext:"), "{want:#}");

    // The late one: raw_orders and export are placeholders until registered.
    let late_ds = datastore(&app, "late", &[LATE]).await;
    let late = register(&app, late_ds, &["orders", "stage"]).await;
    ingest(&app, LATE).await;
    let before = shape(&app, LATE, late[0]).await;
    assert_eq!(
        before["jobs"]["audit"]["job"],
        json!([["EXTERNAL analytics.public.raw_orders"], []]),
        "the unregistered table is a placeholder: {before:#}"
    );
    assert_ne!(before, want);
    let registered_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);

    let adopted = register(&app, late_ds, &["raw_orders", "export"]).await;
    let after = shape(&app, LATE, late[0]).await;
    assert_eq!(after, want, "registered late vs registered first");
    assert_eq!(after["jobs"]["audit"]["job"], json!([["CONTAINER raw_orders"], []]), "listed once, as the container");
    assert_eq!(
        adoptions(&app).await,
        vec![
            (json!([adopted[0]]), json!(format!("{LATE}/analytics.public.raw_orders"))),
            (json!([adopted[1]]), json!(format!("{LATE}/analytics.public.export"))),
        ],
        "one change per adopted placeholder"
    );
    // The placeholders' own edges are retired, not deleted: as of before, they are there.
    let then = app
        .ok(
            "query($at: DateTime) { edges(size: 200, asOf: $at) { items { sourceExternalFqn targetExternalFqn } } }",
            json!({"at": registered_at}),
        )
        .await;
    let mut fqns: Vec<String> = then["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| [e["sourceExternalFqn"].as_str(), e["targetExternalFqn"].as_str()])
        .flatten()
        .map(str::to_string)
        .collect();
    fqns.sort();
    assert_eq!(
        fqns,
        [
            format!("{LATE}/analytics.public.export"),
            format!("{LATE}/analytics.public.raw_orders"),
            format!("{LATE}/analytics.public.raw_orders")
        ],
        "as of before the registration: {then:#}"
    );
    let now = app.ok("{ search(query: \"late.example.com\", kinds: [EXTERNAL]) { id } }", json!({})).await;
    assert_eq!(now["search"], json!([]), "no live placeholder is left");

    // Registering again, and replaying once or twice, changes nothing.
    register(&app, late_ds, &["raw_orders"]).await;
    assert_eq!(shape(&app, LATE, late[0]).await, after);
    replay(&app).await;
    let once = shape(&app, LATE, late[0]).await;
    assert_eq!(once, after, "replayed after the registration");
    replay(&app).await;
    assert_eq!(shape(&app, LATE, late[0]).await, once, "replayed twice");
    assert_eq!(shape(&app, CLEAN, clean[0]).await, want);
    assert_eq!(adoptions(&app).await.len(), 2, "nothing adopted twice");
}

/// A datastore that lists the namespace only after the events: its tables were registered, but
/// no datastore listed the events' namespace, so every dataset stayed external (in the jobs'
/// and runs' datasets; two external ends make no edge). Listing the namespace adopts them all;
/// the edges, which no placeholder held, come with the replay, as the README says.
async fn listing_the_namespace_adopts_its_placeholders(app: TestApp) {
    let clean_ds = datastore(&app, "clean", &[CLEAN]).await;
    let clean = register(&app, clean_ds, &["orders", "stage", "raw_orders", "export"]).await;
    ingest(&app, CLEAN).await;
    let want = shape(&app, CLEAN, clean[0]).await;

    let late_ds = datastore(&app, "late", &[]).await;
    let late = register(&app, late_ds, &["orders", "stage", "raw_orders", "export"]).await;
    ingest(&app, LATE).await;
    let before = shape(&app, LATE, late[0]).await;
    assert_eq!(
        before["jobs"]["load"]["run"],
        json!([["EXTERNAL analytics.public.raw_orders"], ["EXTERNAL analytics.public.orders"]])
    );

    datastore(&app, "late", &[LATE]).await;
    let after = shape(&app, LATE, late[0]).await;
    assert_eq!(after["jobs"], want["jobs"], "every job's and run's datasets are the containers");
    assert_eq!(adoptions(&app).await.len(), 4, "one change per placeholder");
    replay(&app).await;
    assert_eq!(shape(&app, LATE, late[0]).await, want, "and with the replay, the edges");
    assert_eq!(adoptions(&app).await.len(), 4);
}

/// Auto-creation turned on after the events: the next event naming the table (with the columns
/// creation needs) creates its container, which adopts what the placeholder held.
async fn an_auto_created_container_adopts_its_placeholder(app: TestApp) {
    let late_ds = datastore(&app, "late", &[LATE]).await;
    let late = register(&app, late_ds, &["orders", "stage", "export"]).await;
    ingest(&app, LATE).await;
    let app = app.with_auto_create().await;
    let mut again = event(LATE, "COMPLETE", &run_id(LATE, 5), "audit", &["raw_orders"], &[]);
    again["inputs"][0]["facets"] = json!({"schema": {"fields": [{"name": "id", "type": "bigint"}]}});
    let (status, body) = app.post("/api/v1/lineage", &json!([again])).await;
    assert_eq!(status, 201, "{body:#}");
    let after = shape(&app, LATE, late[0]).await;
    assert_eq!(after["jobs"]["load"]["job"], json!([["CONTAINER raw_orders"], ["CONTAINER orders"]]), "{after:#}");
    assert_eq!(after["jobs"]["audit"]["job"], json!([["CONTAINER raw_orders"], []]), "{after:#}");
    assert!(after["edges"].as_array().unwrap().contains(&json!("raw_orders -> orders by \"load\"")), "{after:#}");
    let adopted = adoptions(&app).await;
    assert_eq!(adopted.len(), 1, "{adopted:?}");
    assert_eq!(adopted[0].1, json!(format!("{LATE}/analytics.public.raw_orders")));
}
