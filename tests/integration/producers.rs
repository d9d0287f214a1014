//! Real producers out of the box (issue 20): real captured sequences (tests/fixtures/
//! openlineage-real) give exactly their lineage in the zero-setup mode and with a catalog
//! registered; dataset naming and symlinks, column lineage as sent, and reports that say why.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;
use crate::openlineage::run_event;

both_stores!(
    spark_sequence_in_zero_setup_mode,
    spark_sequence_with_a_catalog,
    spark_drop_reaches_the_table_through_its_symlink,
    gcs_and_symlinked_datasets_are_auto_created,
    legacy_identity_is_not_derived,
    unresolved_reasons_are_the_true_ones,
    ignored_events_say_why,
    external_nodes_can_be_browsed,
    airflow_sequence_in_zero_setup_mode,
    airflow_sequence_with_a_catalog,
    dbt_sequence_in_zero_setup_mode,
    dbt_sequence_with_a_catalog,
    dbt_duckdb_seeds_with_a_catalog,
    dbt_duckdb_seeds_in_zero_setup_mode,
    flink_sequence_in_zero_setup_mode,
    flink_sequence_with_a_catalog,
    later_fields_join_the_container_in_zero_setup_mode,
    dataset_wide_column_lineage_gives_indirect_edges,
    symlink_aliases_outlive_the_request,
);

const SPARK_NS: &str = "file:/tmp/cll_test";

fn spark_events() -> Vec<Value> {
    (1..=9)
        .map(|i| {
            let path = format!("{}/tests/fixtures/openlineage-real/spark_cll/{i}.json", env!("CARGO_MANIFEST_DIR"));
            serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("JSON")
        })
        .collect()
}

/// The live lineage by container name: table edges, field edges with `derived`, external fqns.
#[derive(Debug, Default, PartialEq)]
struct Drawn {
    tables: BTreeSet<(String, String)>,
    /// `derived` per field edge: null when the producer did not say.
    fields: BTreeMap<(String, String), Option<bool>>,
    external: BTreeSet<String>,
}

async fn drawn(app: &TestApp) -> Drawn {
    let d = app
        .ok(
            "{ containers(size: 1000) { items { id name } }
               edges(size: 1000) { items { sourceContainerId targetContainerId sourceExternalFqn targetExternalFqn derived
                 sourceField { name containerId } targetField { name containerId } } } }",
            json!({}),
        )
        .await;
    let names: BTreeMap<i64, String> = d["containers"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_i64().unwrap(), c["name"].as_str().unwrap().to_string()))
        .collect();
    let name = |v: &Value| v.as_i64().map(|id| names[&id].clone());
    let mut out = Drawn::default();
    for e in d["edges"]["items"].as_array().unwrap() {
        for fqn in [&e["sourceExternalFqn"], &e["targetExternalFqn"]] {
            out.external.extend(fqn.as_str().map(str::to_string));
        }
        if e["sourceField"].is_object() {
            let f = |v: &Value| format!("{}.{}", name(&v["containerId"]).unwrap(), v["name"].as_str().unwrap());
            out.fields.insert((f(&e["sourceField"]), f(&e["targetField"])), e["derived"].as_bool());
        } else if let (Some(s), Some(t)) = (name(&e["sourceContainerId"]), name(&e["targetContainerId"])) {
            out.tables.insert((s, t));
        }
    }
    out
}

/// What the Spark CTAS's events describe: two sources into tbl1, and ten column edges of
/// which only the IDENTITY copy is not derived (INDIRECT-only inputs are derived).
fn spark_expected() -> Drawn {
    let t = |s: &str, t: &str| (s.to_string(), t.to_string());
    let mut fields = BTreeMap::new();
    for (src, tgt, derived) in [
        ("cll_source1.a", "tbl1.ident", false),
        ("cll_source1.b", "tbl1.ident", true),
        ("cll_source2.a", "tbl1.ident", true),
        ("cll_source1.a", "tbl1.trans", true),
        ("cll_source1.b", "tbl1.trans", true),
        ("cll_source2.a", "tbl1.trans", true),
        ("cll_source1.a", "tbl1.agg", true),
        ("cll_source1.b", "tbl1.agg", true),
        ("cll_source2.c", "tbl1.agg", true),
        ("cll_source2.a", "tbl1.agg", true),
    ] {
        fields.insert(t(src, tgt), Some(derived));
    }
    Drawn {
        tables: [t("cll_source1", "tbl1"), t("cll_source2", "tbl1")].into_iter().collect(),
        fields,
        external: BTreeSet::new(),
    }
}

/// Sends the events as one list; every event's report.
async fn send(app: &TestApp, events: Vec<Value>) -> Vec<Value> {
    let (status, body) = app.post("/api/v1/lineage", &Value::Array(events)).await;
    assert_eq!(status, 201, "{body:#}");
    body["events"].as_array().unwrap().clone()
}

fn unresolved_of(reports: &[Value]) -> Vec<Value> {
    reports.iter().flat_map(|r| r["summary"]["unresolved_datasets"].as_array().cloned().unwrap_or_default()).collect()
}

async fn spark_sequence_in_zero_setup_mode(app: TestApp) {
    let app = app.with_zero_setup().await;
    let reports = send(&app, spark_events()).await;
    assert!(reports.iter().all(|r| r["status"] != "failed" && r["status"] != "rejected"), "{reports:#?}");
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    // The application's own START and COMPLETE name no dataset.
    assert_eq!(reports[0]["summary"]["ignored_reason"], "no lineage", "{:#}", reports[0]);
    assert_eq!(drawn(&app).await, spark_expected());
    // One datastore for the namespace the TABLE symlinks name, typed by its scheme; the tables
    // under their Hive database.
    let d = app
        .ok("{ datastores { name type namespaces } containers(size: 100) { items { name schema } } }", json!({}))
        .await;
    assert_eq!(d["datastores"], json!([{"name": SPARK_NS, "type": "file", "namespaces": [SPARK_NS]}]));
    let mut tables: Vec<(String, String)> = d["containers"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["schema"].as_str().unwrap().to_string(), c["name"].as_str().unwrap().to_string()))
        .collect();
    tables.sort();
    let want: Vec<(String, String)> =
        ["cll_source1", "cll_source2", "tbl1"].iter().map(|t| ("default".to_string(), t.to_string())).collect();
    assert_eq!(tables, want);
    // The output is found by its table name in its namespace, and its graph drawn from there.
    let d = app
        .ok(
            "query($ns: String!) { node(namespace: $ns, name: \"default.tbl1\") { kind containerId container { name } } }",
            json!({"ns": SPARK_NS}),
        )
        .await;
    assert_eq!(d["node"]["kind"], "container");
    assert_eq!(d["node"]["container"]["name"], "tbl1");
    let g = app
        .ok(
            "query($id: Int!) { lineageGraph(containerId: $id, side: UPSTREAM) { nodes { name isTarget } } }",
            json!({"id": d["node"]["containerId"]}),
        )
        .await;
    let mut names: Vec<&str> =
        g["lineageGraph"]["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["cll_source1", "cll_source2", "tbl1"]);
    // The same sequence again changes nothing.
    send(&app, spark_events()).await;
    assert_eq!(drawn(&app).await, spark_expected());
}

async fn spark_catalog(app: &TestApp) {
    let ds = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": "spark-warehouse", "type": "hive", "namespaces": [SPARK_NS]}}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    for (name, fields) in
        [("cll_source1", ["a", "b", ""]), ("cll_source2", ["a", "c", ""]), ("tbl1", ["ident", "trans", "agg"])]
    {
        let f: Vec<Value> = fields.iter().filter(|n| !n.is_empty()).map(|n| json!({"name": n})).collect();
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "schema": "default", "name": name, "fields": f}}),
        )
        .await;
    }
}

async fn spark_sequence_with_a_catalog(app: TestApp) {
    spark_catalog(&app).await;
    // Seed 002's batch answer: the datasets resolve through their TABLE symlinks, and the
    // column-lineage inputs (named by path) through the same symlinks: nothing is unresolved.
    let (status, body) = app.post("/api/v1/openlineage/lineage/batch", &json!({"events": spark_events()})).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["unresolvedDatasets"], json!([]), "{body:#}");
    assert_eq!(drawn(&app).await, spark_expected());
    // Nothing was created: the catalog is as registered.
    let d = app.ok("{ datastores { name } containers { total } }", json!({})).await;
    assert_eq!(d["containers"]["total"], 3);
    assert_eq!(d["datastores"].as_array().unwrap().len(), 1);
}

async fn spark_drop_reaches_the_table_through_its_symlink(app: TestApp) {
    let app = app.with_zero_setup().await;
    send(&app, spark_events()).await;
    // Spark's DROP TABLE names the table by its path with the TABLE symlink, as it created it.
    let mut drop = spark_events()[2].clone();
    drop["run"]["runId"] = json!("01912800-0000-7000-8000-000000000001");
    drop["eventTime"] = json!(chrono::Utc::now().to_rfc3339());
    let out = &mut drop["outputs"][0];
    out["name"] = json!("/tmp/cll_test/tbl1");
    out["facets"]["symlinks"]["identifiers"][0]["name"] = json!("default.tbl1");
    out["facets"]["lifecycleStateChange"]["lifecycleStateChange"] = json!("DROP");
    let reports = send(&app, vec![drop]).await;
    assert_eq!(reports[0]["status"], "applied", "{:#}", reports[0]);
    let now = drawn(&app).await;
    assert!(now.tables.is_empty() && now.fields.is_empty(), "{now:#?}");
    // A dropped table is not created again by its DROP.
    let d = app.ok("{ containers { total } }", json!({})).await;
    assert_eq!(d["containers"]["total"], 3);
}

fn airflow_like(legacy: bool) -> Value {
    let field = |input: &str, kind: &str| {
        if legacy {
            json!({"inputFields": [{"namespace": "gs://bucket", "name": "data/source.csv", "field": input}],
                   "transformationType": kind, "transformationDescription": ""})
        } else {
            json!({"inputFields": [{"namespace": "gs://bucket", "name": "data/source.csv", "field": input,
                   "transformations": [{"type": "DIRECT", "subtype": kind}]}]})
        }
    };
    run_event(
        "COMPLETE",
        "0191aaaa-0000-7000-8000-000000000001",
        "gcs_to_hive.copy",
        vec![json!({"namespace": "gs://bucket", "name": "data/source.csv",
            "facets": {"schema": {"fields": [{"name": "a", "type": "STRING"}, {"name": "b", "type": "INTEGER"}]}}})],
        vec![json!({"namespace": "hdfs://namenode:8020", "name": "/warehouse/db.db/t",
            "facets": {
                "symlinks": {"identifiers": [{"namespace": "hive://metastore:9083", "name": "db.t", "type": "TABLE"}]},
                "schema": {"fields": [{"name": "a", "type": "STRING"}, {"name": "b", "type": "INTEGER"}]},
                "columnLineage": {"fields": {"a": field("a", "IDENTITY"), "b": field("b", "TRANSFORMATION")}}}})],
    )
}

async fn register(app: &TestApp, name: &str, kind: &str, namespace: &str) -> i64 {
    app.ok(
        "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
        json!({"i": {"name": name, "type": kind, "namespaces": [namespace]}}),
    )
    .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap()
}

async fn gcs_and_symlinked_datasets_are_auto_created(app: TestApp) {
    let app = app.with_auto_create().await;
    register(&app, "lake", "gcs", "gs://bucket").await;
    register(&app, "metastore", "hive", "hive://metastore:9083").await;
    let reports = send(&app, vec![airflow_like(true)]).await;
    assert_eq!(reports[0]["status"], "applied", "{:#}", reports[0]);
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    let now = drawn(&app).await;
    assert_eq!(now.tables, [("data/source.csv".to_string(), "t".to_string())].into_iter().collect());
    assert_eq!(
        now.fields,
        [
            (("data/source.csv.a".to_string(), "t.a".to_string()), Some(false)),
            (("data/source.csv.b".to_string(), "t.b".to_string()), Some(true))
        ]
        .into_iter()
        .collect()
    );
}

async fn legacy_identity_is_not_derived(app: TestApp) {
    // Catalogued tables; the output named by its path and its TABLE symlink.
    let lake = register(&app, "lake", "gcs", "gs://bucket").await;
    let hive = register(&app, "metastore", "hive", "hive://metastore:9083").await;
    for (ds, schema, name) in [(lake, None, "data/source.csv"), (hive, Some("db"), "t")] {
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "schema": schema, "name": name, "fields": [{"name": "a"}, {"name": "b"}]}}),
        )
        .await;
    }
    let want: BTreeMap<(String, String), Option<bool>> = [
        (("data/source.csv.a".to_string(), "t.a".to_string()), Some(false)),
        (("data/source.csv.b".to_string(), "t.b".to_string()), Some(true)),
    ]
    .into_iter()
    .collect();
    // The older per-field `transformationType`: IDENTITY is a copy, TRANSFORMATION is not.
    let reports = send(&app, vec![airflow_like(true)]).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new(), "{reports:#?}");
    assert_eq!(drawn(&app).await.fields, want);
    // The current `transformations` list says the same, and so the edges stay as they are.
    let mut current = airflow_like(false);
    current["job"]["name"] = json!("gcs_to_hive.copy_v2");
    send(&app, vec![current]).await;
    assert_eq!(drawn(&app).await.fields, want);
}

async fn unresolved_reasons_are_the_true_ones(app: TestApp) {
    let app = app.with_auto_create().await;
    register(&app, "warehouse", "postgresql", "postgres://db:5432").await;
    register(&app, "lake", "gcs", "gs://bucket").await;
    let event = run_event(
        "COMPLETE",
        "0191bbbb-0000-7000-8000-000000000001",
        "reasons",
        vec![
            json!({"namespace": "postgres://db:5432", "name": "orders"}),
            json!({"namespace": "gs://bucket", "name": "/"}),
            json!({"namespace": "gs://bucket", "name": "no_schema.csv"}),
        ],
        vec![json!({"namespace": "postgres://db:5432", "name": "shop.public.out",
            "facets": {"schema": {"fields": [{"name": "x"}]},
                "columnLineage": {"fields": {"x": {"inputFields": [{"namespace": "gs://bucket", "name": "copied.csv", "field": "a"}]}}}}})],
    );
    let (status, body) = app.post("/api/v1/openlineage/lineage", &event).await;
    assert_eq!(status, 200, "{body:#}");
    let mut got: Vec<(String, String, Option<String>)> = body["unresolvedDatasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["name"].as_str().unwrap().to_string(),
                u["reason"].as_str().unwrap().to_string(),
                u["field"].as_str().map(str::to_string),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("/".into(), "unparsableName".into(), None),
            // The column-lineage input is created from the field it names; its field resolves.
            ("no_schema.csv".into(), "missingColumns".into(), None),
            // Seed 002: a bare table name is unparsable, auto-creation or not.
            ("orders".into(), "unparsableName".into(), None),
        ],
        "{body:#}"
    );
}

async fn ignored_events_say_why(app: TestApp) {
    app.warehouse().await;
    let wh = "postgres://warehouse.example.com:5432";
    let ds = |n: &str| json!({"namespace": wh, "name": format!("analytics.public.{n}")});
    let ok = run_event(
        "COMPLETE",
        "0191cccc-0000-7000-8000-000000000001",
        "load",
        vec![ds("raw_orders")],
        vec![ds("orders")],
    );
    let unknown = run_event(
        "COMPLETE",
        "0191cccc-0000-7000-8000-000000000002",
        "elsewhere",
        vec![json!({"namespace": "s3://nobody", "name": "in.csv"})],
        vec![json!({"namespace": "s3://nobody", "name": "out.csv"})],
    );
    let fail = run_event("FAIL", "0191cccc-0000-7000-8000-000000000003", "load", vec![], vec![]);
    let late =
        run_event("START", "0191cccc-0000-7000-8000-000000000003", "load", vec![ds("raw_orders")], vec![ds("orders")]);
    let reports = send(&app, vec![ok.clone(), ok, unknown, fail, late]).await;
    let reasons: Vec<Value> = reports.iter().map(|r| r["summary"]["ignored_reason"].clone()).collect();
    assert_eq!(
        reasons,
        vec![Value::Null, json!("duplicate"), json!("nothing resolved"), json!("no lineage"), json!("late START")],
        "{reports:#?}"
    );
    // The COMPLETE and the FAIL recorded their runs' states although their lineage changed nothing.
    let statuses: Vec<&str> = reports.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["applied", "ignored", "recorded", "recorded", "ignored"], "{reports:#?}");
    // A duplicate is not stored again (its report names the event it repeats), so only the
    // stored events' own reasons are there to filter by.
    for (reason, count) in [("nothing resolved", 1), ("late START", 1), ("no lineage", 1), ("already known", 0)] {
        let d = app
            .ok(
                "query($r: String) { openLineageEvents(ignoredReason: $r) { total items { status summary } } }",
                json!({"r": reason}),
            )
            .await;
        assert_eq!(d["openLineageEvents"]["total"], count, "{reason}: {d:#}");
    }
}

/// Issue 20 (3): nodes outside the catalog are found by namespace and name or by their `ext:`
/// id, and `externalLineageGraph` and `externalImpact` are centred on them, by the traversal
/// `lineageGraph` and `impact` use.
async fn external_nodes_can_be_browsed(app: TestApp) {
    const WH: &str = "postgres://warehouse.example.com:5432";
    let (_, raw_orders, orders) = app.warehouse().await;
    let ds = |ns: &str, name: &str| json!({"namespace": ns, "name": name});
    let events = vec![
        run_event(
            "COMPLETE",
            "8d9e3f0a-0000-4000-8000-000000000001",
            "load",
            vec![ds("gs://landing", "orders.csv")],
            vec![ds(WH, "analytics.public.raw_orders")],
        ),
        run_event(
            "COMPLETE",
            "8d9e3f0a-0000-4000-8000-000000000002",
            "build",
            vec![ds(WH, "analytics.public.raw_orders")],
            vec![ds(WH, "analytics.public.orders")],
        ),
        run_event(
            "COMPLETE",
            "8d9e3f0a-0000-4000-8000-000000000003",
            "export",
            vec![ds(WH, "analytics.public.orders")],
            vec![ds("s3://exports", "orders.parquet")],
        ),
    ];
    send(&app, events).await;
    const LANDING: &str = "ext:openlineage:gs://landing/orders.csv";
    const EXPORT: &str = "ext:openlineage:s3://exports/orders.parquet";
    let node = |ns: &str, name: &str| {
        let app = &app;
        let vars = json!({"ns": ns, "name": name});
        async move {
            app.ok(
                "query($ns: String!, $name: String!) { node(namespace: $ns, name: $name) {
                   kind containerId externalId fqn sourceType container { name } } }",
                vars,
            )
            .await["node"]
                .clone()
        }
    };
    // A catalogued dataset: its container (the name matched as resolution matches it).
    assert_eq!(
        node(WH, "analytics.public.orders").await,
        json!({"kind": "container", "containerId": orders, "externalId": null, "fqn": null, "sourceType": null,
               "container": {"name": "orders"}})
    );
    assert_eq!(
        node("postgresql://warehouse.example.com:5432/", "ANALYTICS.public.raw_orders").await["containerId"],
        raw_orders
    );
    // An external one: its ext: id, whatever spelling of its namespace.
    let landing = json!({"kind": "external", "containerId": null, "externalId": LANDING,
                         "fqn": "gs://landing/orders.csv", "sourceType": "openlineage", "container": null});
    assert_eq!(node("gs://landing", "orders.csv").await, landing);
    assert_eq!(node("gcs://landing/", "orders.csv").await, landing);
    // Nothing by that name: null.
    assert_eq!(node("gs://landing", "other.csv").await, Value::Null);
    assert_eq!(node(WH, "analytics.public.missing").await, Value::Null);
    let by_id = |id: &str| {
        let app = &app;
        let vars = json!({"id": id});
        async move {
            app.ok("query($id: String!) { externalNode(id: $id) { kind externalId } }", vars).await["externalNode"]
                .clone()
        }
    };
    assert_eq!(by_id(LANDING).await, json!({"kind": "external", "externalId": LANDING}));
    assert_eq!(by_id("ext:openlineage:gs://landing/other.csv").await, Value::Null);
    assert_eq!(by_id("gs://landing/orders.csv").await, Value::Null);

    // The graph centred on the landing file: the two containers it feeds, the file flagged as
    // the target, the export beyond the depth flagged on `orders`.
    let graph = |id: &str, depth: i64| {
        let app = &app;
        let vars = json!({"id": id, "depth": depth});
        async move {
            app.ok(
                "query($id: String!, $depth: Int!) { externalLineageGraph(id: $id, depth: $depth) {
                   nodes { id name isTarget hasUpstream hasDownstream }
                   edges { sourceContainerId targetContainerId }
                   externalNodes { id isTarget }
                   externalEdges { sourceNodeId targetNodeId sourceContainerId targetContainerId } } }",
                vars,
            )
            .await["externalLineageGraph"]
                .clone()
        }
    };
    let g = graph(LANDING, 2).await;
    assert_eq!(
        g["nodes"],
        json!([
            {"id": raw_orders, "name": "raw_orders", "isTarget": false, "hasUpstream": false, "hasDownstream": false},
            {"id": orders, "name": "orders", "isTarget": false, "hasUpstream": false, "hasDownstream": true},
        ])
    );
    assert_eq!(g["edges"], json!([{"sourceContainerId": raw_orders, "targetContainerId": orders}]));
    assert_eq!(g["externalNodes"], json!([{"id": LANDING, "isTarget": true}]));
    assert_eq!(
        g["externalEdges"],
        json!([{"sourceNodeId": LANDING, "targetNodeId": null, "sourceContainerId": null, "targetContainerId": raw_orders}])
    );
    let g = graph(LANDING, 3).await;
    assert_eq!(g["nodes"][1]["hasDownstream"], false);
    assert_eq!(g["externalNodes"], json!([{"id": LANDING, "isTarget": true}, {"id": EXPORT, "isTarget": false}]));
    // From the export upstream, one level: `orders`, with more upstream.
    let g = graph(EXPORT, 1).await;
    assert_eq!(
        g["nodes"],
        json!([{"id": orders, "name": "orders", "isTarget": false, "hasUpstream": true, "hasDownstream": false}])
    );
    // `lineageGraph` on a container still flags no external node as the target.
    let d = app
        .ok(
            "query($id: Int!) { lineageGraph(containerId: $id) { nodes { id isTarget } externalNodes { id isTarget } } }",
            json!({"id": raw_orders}),
        )
        .await;
    assert_eq!(
        d["lineageGraph"]["externalNodes"],
        json!([{"id": LANDING, "isTarget": false}, {"id": EXPORT, "isTarget": false}])
    );

    // Impact from either end, nearest first.
    let impact = |id: &str, side: &str| {
        let app = &app;
        let q = format!(
            "query($id: String!) {{ externalImpact(id: $id, side: {side}) {{ isPartial containers {{ distance container {{ name }} }} }} }}"
        );
        let vars = json!({"id": id});
        async move { app.ok(&q, vars).await["externalImpact"].clone() }
    };
    let reached = |v: &Value| -> Vec<(i64, String)> {
        v["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["distance"].as_i64().unwrap(), c["container"]["name"].as_str().unwrap().to_string()))
            .collect()
    };
    let down = impact(LANDING, "DOWNSTREAM").await;
    assert_eq!(down["isPartial"], false);
    assert_eq!(reached(&down), [(1, "raw_orders".to_string()), (2, "orders".to_string())]);
    assert_eq!(reached(&impact(LANDING, "UPSTREAM").await), []);
    assert_eq!(reached(&impact(EXPORT, "UPSTREAM").await), [(1, "orders".to_string()), (2, "raw_orders".to_string())]);
    let d = app
        .ok(
            "query($id: String!) { externalImpact(id: $id, depth: 1) { isPartial containers { distance } } }",
            json!({"id": LANDING}),
        )
        .await;
    assert_eq!(d["externalImpact"], json!({"isPartial": true, "containers": [{"distance": 1}]}));

    // An id no live edge names is NOT_FOUND to the traversals.
    for q in [
        "{ externalLineageGraph(id: \"ext:openlineage:gs://landing/other.csv\") { nodes { id } } }",
        "{ externalImpact(id: \"ext:openlineage:gs://landing/other.csv\") { isPartial } }",
        "{ externalLineageGraph(id: \"not an id\") { nodes { id } } }",
    ] {
        assert_eq!(app.err(q, json!({})).await.0, "NOT_FOUND", "{q}");
    }
}

fn fixture(path: &str) -> Value {
    let path = format!("{}/tests/fixtures/openlineage-real/{path}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("JSON")
}

/// The Airflow provider's DAG runs (compatibility-tests `consumer/scenarios/airflow`), as captured.
fn airflow_events() -> Vec<Value> {
    (1..=32).map(|i| fixture(&format!("airflow_gcs_bq/line_{i:02}.json"))).collect()
}

/// dbt's 72 events (a `dbt run` of jaffle_shop on Postgres) from the dbt integration's test
/// expectations. Each run's `runId` (and each parent facet's) is the placeholder `{{ any(result) }}`
/// there: a job runs once in the sequence, so each job gets a UUID of its own. The expectation
/// leaves out `producer` and `schemaURL`, which the test fills in.
fn dbt_events() -> Vec<Value> {
    let mut runs: BTreeMap<String, String> = BTreeMap::new();
    let mut run_of = |job: &str| {
        let n = runs.len();
        runs.entry(job.to_string()).or_insert_with(|| format!("0193a000-0000-7000-8000-{n:012x}")).clone()
    };
    let Value::Array(events) = fixture("dbt_postgres/successful_run_ol_events.json") else { panic!("a list") };
    events
        .into_iter()
        .map(|mut e| {
            let job = e["job"]["name"].as_str().unwrap().to_string();
            e["run"]["runId"] = json!(run_of(&job));
            if let Some(parent) = e["run"]["facets"]["parent"].as_object_mut() {
                let pjob = parent["job"]["name"].as_str().unwrap().to_string();
                parent.insert("run".into(), json!({"runId": run_of(&pjob)}));
            }
            e["producer"] = json!("https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/dbt");
            e["schemaURL"] = json!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent");
            e
        })
        .collect()
}

/// A Flink streaming job reading two Kafka topics into a third (the Flink integration's test
/// expectations: its START, then a RUNNING checkpoint event). The expectation leaves `eventTime`,
/// `runId` as json-unit placeholders and `producer` out; the test fills them in.
fn flink_events() -> Vec<Value> {
    ["flink_kafka/1_expected_kafka.json", "flink_kafka/2_expected_kafka_checkpoints.json"]
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut e = fixture(f);
            e["eventTime"] = json!(format!("2024-11-20T19:45:5{i}.000000Z"));
            e["run"]["runId"] = json!("0193a000-0000-7000-8000-00000000f11c");
            e["producer"] = json!("https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/flink");
            e["schemaURL"] = json!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent");
            e
        })
        .collect()
}

/// `(target container, parent job)` of every live table edge's evidence.
async fn parents(app: &TestApp) -> BTreeSet<(String, Option<String>)> {
    let d = app
        .ok(
            "{ edges(size: 1000) { items { sourceField { id } targetContainer { name } targetExternalFqn evidence { details } } } }",
            json!({}),
        )
        .await;
    let mut out = BTreeSet::new();
    for e in d["edges"]["items"].as_array().unwrap().iter().filter(|e| e["sourceField"].is_null()) {
        let target = e["targetContainer"]["name"].as_str().or(e["targetExternalFqn"].as_str()).unwrap().to_string();
        for ev in e["evidence"].as_array().unwrap() {
            out.insert((target.clone(), ev["details"]["parent"]["job"]["name"].as_str().map(str::to_string)));
        }
    }
    out
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// The twelve table links the Airflow DAG runs describe, and the sixteen IDENTITY column links
/// of the three BigQuery operators (the older per-field form, with an empty `transformations`
/// list beside it), none derived.
fn airflow_expected() -> Drawn {
    let compose_inputs =
        ["uploaded_file.txt", "uploaded_data.txt", "copy_of_uploaded_data.txt", "copy_of_uploaded_file.txt"];
    let mut tables = pairs(&[
        ("copied.csv", "upload"),
        ("test.csv", "upload"),
        ("upload", "upload_cp"),
        ("upload_cp", "result.csv"),
        ("/files/temp/data.txt", "uploaded_file.txt"),
        ("uploaded_file.txt", "copy_of_uploaded_file.txt"),
        ("uploaded_data.txt", "copy_of_uploaded_data.txt"),
        ("uploaded_file.txt", "/files/temp/downloaded_file.txt"),
    ]);
    tables.extend(compose_inputs.iter().map(|i| (i.to_string(), "compose_result.txt".to_string())));
    let mut fields = BTreeMap::new();
    for c in ["a", "b", "c", "d"] {
        for (src, tgt) in
            [("copied.csv", "upload"), ("test.csv", "upload"), ("upload", "upload_cp"), ("upload_cp", "result.csv")]
        {
            fields.insert((format!("{src}.{c}"), format!("{tgt}.{c}")), Some(false));
        }
    }
    Drawn { tables, fields, external: BTreeSet::new() }
}

fn airflow_parents() -> BTreeSet<(String, Option<String>)> {
    let t = airflow_expected().tables;
    t.into_iter()
        .map(|(_, target)| {
            let parent =
                if ["upload", "upload_cp", "result.csv"].contains(&target.as_str()) { "BQ" } else { "gcs_hook" };
            (target, Some(parent.to_string()))
        })
        .collect()
}

async fn airflow_sequence_in_zero_setup_mode(app: TestApp) {
    let app = app.with_zero_setup().await;
    let reports = send(&app, airflow_events()).await;
    assert!(reports.iter().all(|r| r["status"] != "failed" && r["status"] != "rejected"), "{reports:#?}");
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, airflow_expected());
    assert_eq!(parents(&app).await, airflow_parents());
    // A datastore per namespace, typed by its scheme.
    let d = app.ok("{ datastores { type namespaces } }", json!({})).await;
    let mut kinds: Vec<(String, String)> = d["datastores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["namespaces"][0].as_str().unwrap().to_string(), d["type"].as_str().unwrap().to_string()))
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [("bigquery", "bigquery"), ("file", "file"), ("gs://mock-bucket", "gcs")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // Again: nothing changes.
    send(&app, airflow_events()).await;
    assert_eq!(drawn(&app).await, airflow_expected());
}

/// A container to register: `(database, schema, name, fields)`.
type Table<'a> = (Option<&'a str>, Option<&'a str>, &'a str, &'a [&'a str]);

/// Registers a datastore for a namespace and its containers.
async fn register_catalog(app: &TestApp, namespace: &str, kind: &str, tables: &[Table<'_>]) {
    let ds = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": namespace, "type": kind, "namespaces": [namespace]}}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    for (database, schema, name, fields) in tables {
        let f: Vec<Value> = fields.iter().map(|n| json!({"name": n})).collect();
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "database": database, "schema": schema, "name": name, "fields": f}}),
        )
        .await;
    }
}

async fn airflow_sequence_with_a_catalog(app: TestApp) {
    const ABCD: &[&str] = &["a", "b", "c", "d"];
    let bq = |t| (Some("mock-project"), Some("test"), t, ABCD);
    register_catalog(&app, "bigquery", "bigquery", &[bq("upload"), bq("upload_cp")]).await;
    let mut gcs: Vec<Table<'_>> =
        ["copied.csv", "test.csv", "result.csv"].iter().map(|n| (None, None, *n, ABCD)).collect();
    for n in [
        "uploaded_file.txt",
        "uploaded_data.txt",
        "to_be_deleted.txt",
        "copy_of_uploaded_file.txt",
        "copy_of_uploaded_data.txt",
        "compose_result.txt",
    ] {
        gcs.push((None, None, n, &[]));
    }
    register_catalog(&app, "gs://mock-bucket", "gcs", &gcs).await;
    register_catalog(
        &app,
        "file",
        "file",
        &[(None, None, "/files/temp/data.txt", &[]), (None, None, "/files/temp/downloaded_file.txt", &[])],
    )
    .await;
    let reports = send(&app, airflow_events()).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, airflow_expected());
    assert_eq!(parents(&app).await, airflow_parents());
    let d = app.ok("{ containers { total } }", json!({})).await;
    assert_eq!(d["containers"]["total"], 13, "nothing created");
}

/// The jaffle_shop models: three staging models over the raw seeds, `customers` and `orders`
/// over the staging models; each model's run the child of the `dbt run` (the query jobs under
/// the models name no dataset). No column lineage.
fn dbt_expected() -> Drawn {
    let tables = pairs(&[
        ("raw_customers", "stg_customers"),
        ("raw_orders", "stg_orders"),
        ("raw_payments", "stg_payments"),
        ("stg_customers", "customers"),
        ("stg_orders", "customers"),
        ("stg_payments", "customers"),
        ("stg_orders", "orders"),
        ("stg_payments", "orders"),
    ]);
    Drawn { tables, fields: BTreeMap::new(), external: BTreeSet::new() }
}

fn dbt_parents() -> BTreeSet<(String, Option<String>)> {
    dbt_expected().tables.into_iter().map(|(_, t)| (t, Some("dbt-run-jaffle_shop".to_string()))).collect()
}

async fn dbt_sequence_in_zero_setup_mode(app: TestApp) {
    let app = app.with_zero_setup().await;
    let reports = send(&app, dbt_events()).await;
    assert_eq!(reports.len(), 72);
    assert!(reports.iter().all(|r| r["status"] != "failed" && r["status"] != "rejected"), "{reports:#?}");
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, dbt_expected());
    assert_eq!(parents(&app).await, dbt_parents());
    // One datastore for the Postgres server; the tables under database and schema.
    let d = app
        .ok("{ datastores { type namespaces } containers(size: 100) { items { database schema name } } }", json!({}))
        .await;
    assert_eq!(d["datastores"], json!([{"type": "postgresql", "namespaces": ["postgres://postgres:5432"]}]));
    assert!(d["containers"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["database"] == "postgres" && c["schema"] == "public"));
    assert_eq!(d["containers"]["items"].as_array().unwrap().len(), 8);
}

async fn dbt_sequence_with_a_catalog(app: TestApp) {
    let tables: Vec<Table<'_>> = [
        "raw_customers",
        "raw_orders",
        "raw_payments",
        "stg_customers",
        "stg_orders",
        "stg_payments",
        "customers",
        "orders",
    ]
    .iter()
    .map(|t| (Some("postgres"), Some("public"), *t, &["id"][..]))
    .collect();
    register_catalog(&app, "postgres://postgres:5432", "postgresql", &tables).await;
    let reports = send(&app, dbt_events()).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, dbt_expected());
    assert_eq!(parents(&app).await, dbt_parents());
}

/// The six events `dbt-ol run` (openlineage-dbt 1.54.0, dbt-duckdb 1.10) sent for the project
/// in `dbt_duckdb_seeds/project`: two seeds loaded by `dbt seed`, `stg_orders` over
/// `seed_orders`, `customer_totals` over `stg_orders` and `seed_customers`. dbt-ol leaves the
/// seeds out of the models' `inputs` and names them only in `columnLineage`, with
/// `"transformations": []`.
fn dbt_duckdb_events() -> Vec<Value> {
    let path = format!("{}/tests/fixtures/openlineage-real/dbt_duckdb_seeds/events.jsonl", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("fixture").lines().map(|l| serde_json::from_str(l).expect("JSON")).collect()
}

const DUCKDB_NS: &str = "duckdb:///tmp/dbtrec/shop/shop.duckdb";

/// The table graph agrees with the column graph: each seed is its model's parent.
fn dbt_duckdb_expected() -> Drawn {
    let tables = pairs(&[
        ("seed_orders", "stg_orders"),
        ("stg_orders", "customer_totals"),
        ("seed_customers", "customer_totals"),
    ]);
    // An empty `transformations` list says nothing: `derived` not said.
    let fields = [
        ("seed_orders.id", "stg_orders.id"),
        ("seed_orders.customer_id", "stg_orders.customer_id"),
        ("seed_orders.amount", "stg_orders.amount"),
        ("seed_orders.status", "stg_orders.status"),
        ("seed_customers.id", "customer_totals.customer_id"),
        ("seed_customers.name", "customer_totals.name"),
        ("stg_orders.amount", "customer_totals.total"),
    ]
    .into_iter()
    .map(|(s, t)| ((s.to_string(), t.to_string()), None))
    .collect();
    Drawn { tables, fields, external: BTreeSet::new() }
}

/// The table edges the column lineage alone implies, by (source, target) name, with the
/// evidence's `impliedBy`.
async fn implied_by(app: &TestApp) -> BTreeMap<(String, String), Value> {
    let d = app
        .ok(
            "{ edges(size: 100) { items { sourceContainer { name } targetContainer { name } sourceFieldId evidence { details } } } }",
            json!({}),
        )
        .await;
    d["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sourceFieldId"].is_null())
        .map(|e| {
            let name = |v: &Value| v["name"].as_str().unwrap_or("").to_string();
            (
                (name(&e["sourceContainer"]), name(&e["targetContainer"])),
                e["evidence"][0]["details"]["impliedBy"].clone(),
            )
        })
        .collect()
}

async fn dbt_duckdb_seeds_with_a_catalog(app: TestApp) {
    let table = |name, fields| (Some("shop"), Some("main"), name, fields);
    let orders: &[&str] = &["id", "customer_id", "amount", "status"];
    register_catalog(
        &app,
        DUCKDB_NS,
        "duckdb",
        &[
            table("seed_orders", orders),
            table("seed_customers", &["id", "name"]),
            table("stg_orders", orders),
            table("customer_totals", &["customer_id", "name", "total"]),
        ],
    )
    .await;
    let reports = send(&app, dbt_duckdb_events()).await;
    assert!(reports.iter().all(|r| r["status"] != "failed" && r["status"] != "rejected"), "{reports:#?}");
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, dbt_duckdb_expected());
    // The evidence says which table edges only the column lineage gave.
    let implied = implied_by(&app).await;
    let want: BTreeMap<(String, String), Value> = [
        (("seed_orders", "stg_orders"), json!("columnLineage")),
        (("seed_customers", "customer_totals"), json!("columnLineage")),
        (("stg_orders", "customer_totals"), Value::Null),
    ]
    .into_iter()
    .map(|((s, t), v)| ((s.to_string(), t.to_string()), v))
    .collect();
    assert_eq!(implied, want);
    // Impact agrees: both seeds are upstream of customer_totals.
    let d = app.ok("{ containers(name: \"customer_totals\") { items { id } } }", json!({})).await;
    let id = d["containers"]["items"][0]["id"].clone();
    let up = app
        .ok(
            "query($c: Int!) { impact(containerId: $c, side: UPSTREAM) { containers { distance container { name } } } }",
            json!({"c": id}),
        )
        .await;
    let mut reached: Vec<(i64, String)> = up["impact"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["distance"].as_i64().unwrap(), c["container"]["name"].as_str().unwrap().to_string()))
        .collect();
    reached.sort();
    assert_eq!(
        reached,
        [(1, "seed_customers".to_string()), (1, "stg_orders".to_string()), (2, "seed_orders".to_string())]
    );
    // Sent again: nothing changes.
    send(&app, dbt_duckdb_events()).await;
    assert_eq!(drawn(&app).await, dbt_duckdb_expected());
}

async fn dbt_duckdb_seeds_in_zero_setup_mode(app: TestApp) {
    let app = app.with_zero_setup().await;
    let reports = send(&app, dbt_duckdb_events()).await;
    assert!(reports.iter().all(|r| r["status"] != "failed" && r["status"] != "rejected"), "{reports:#?}");
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await.tables, dbt_duckdb_expected().tables);
    let implied = implied_by(&app).await;
    assert_eq!(implied[&("seed_orders".to_string(), "stg_orders".to_string())], "columnLineage");
}

const FLINK_TOPICS: [&str; 3] =
    ["io.openlineage.flink.kafka.input1", "io.openlineage.flink.kafka.input2", "io.openlineage.flink.kafka.output"];

/// Both input topics feed the output topic; the job has no parent.
fn flink_expected() -> Drawn {
    let [i1, i2, out] = FLINK_TOPICS;
    Drawn { tables: pairs(&[(i1, out), (i2, out)]), fields: BTreeMap::new(), external: BTreeSet::new() }
}

async fn flink_sequence_in_zero_setup_mode(app: TestApp) {
    let app = app.with_zero_setup().await;
    let reports = send(&app, flink_events()).await;
    assert!(reports.iter().all(|r| r["status"] != "failed" && r["status"] != "rejected"), "{reports:#?}");
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, flink_expected());
    assert_eq!(parents(&app).await, [(FLINK_TOPICS[2].to_string(), None)].into_iter().collect());
    let d = app
        .ok("{ datastores { type namespaces } containers(name: \"output\") { items { name fields { items { name } } } } }", json!({}))
        .await;
    assert_eq!(d["datastores"], json!([{"type": "kafka", "namespaces": ["kafka://kafka-cluster-prod:9092"]}]));
    assert_eq!(
        d["containers"]["items"],
        json!([{"name": FLINK_TOPICS[2], "fields": {"items": [{"name": "id"}, {"name": "version"}, {"name": "counter"}]}}])
    );
}

async fn flink_sequence_with_a_catalog(app: TestApp) {
    let tables: Vec<Table<'_>> = FLINK_TOPICS.iter().map(|t| (None, None, *t, &["id", "version"][..])).collect();
    register_catalog(&app, "kafka://kafka-cluster-prod:9092", "kafka", &tables).await;
    let reports = send(&app, flink_events()).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new());
    assert_eq!(drawn(&app).await, flink_expected());
}

/// Zero-setup mode: a column a later event names first (in its schema facet or its column
/// lineage) joins the container made by an earlier one, and its lineage is drawn, not
/// `missingColumns`.
async fn later_fields_join_the_container_in_zero_setup_mode(app: TestApp) {
    const PG: &str = "postgres://db.example.com:5432";
    let schema = |names: &[&str]| json!({"fields": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()});
    let ds = |name: &str, facets: Value| json!({"namespace": PG, "name": name, "facets": facets});
    // First: the two tables with one column each.
    let first = run_event(
        "COMPLETE",
        "0193a000-0000-7000-8000-0000000000a1",
        "load",
        vec![ds("shop.public.src", json!({"schema": schema(&["a"])}))],
        vec![ds("shop.public.dst", json!({"schema": schema(&["a"])}))],
    );
    // Later: a job writes a new column `b` of dst from a new column `x` of src.
    let cll = json!({"fields": {"b": {"inputFields": [
        {"namespace": PG, "name": "shop.public.src", "field": "x",
         "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}}});
    let later = run_event(
        "COMPLETE",
        "0193a000-0000-7000-8000-0000000000a2",
        "enrich",
        vec![ds("shop.public.src", json!({}))],
        vec![ds("shop.public.dst", json!({"columnLineage": cll}))],
    );
    let zero = app.with_zero_setup().await;
    send(&zero, vec![first.clone()]).await;
    let reports = send(&zero, vec![later.clone()]).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new(), "{reports:#?}");
    let now = drawn(&zero).await;
    assert_eq!(now.fields, [(("src.x".to_string(), "dst.b".to_string()), Some(false))].into_iter().collect());
    let d = zero.ok("{ containers(name: \"dst\") { items { fields { items { name } } } } }", json!({})).await;
    assert_eq!(d["containers"]["items"][0]["fields"]["items"], json!([{"name": "a"}, {"name": "b"}]));
}

/// The columnLineage facet's dataset-wide `dataset` entries (filters, joins, sorts: inputs that
/// affect the whole output) give an INDIRECT edge to each field the event names for the output;
/// `piiFlow` leaves them out unless asked (`includeIndirect`).
async fn dataset_wide_column_lineage_gives_indirect_edges(app: TestApp) {
    const PG: &str = "postgres://db.example.com:5432";
    let app = app.with_zero_setup().await;
    let schema = |names: &[&str]| json!({"fields": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()});
    let input = |field: &str, transformations: Value| json!({"namespace": PG, "name": "shop.public.orders", "field": field, "transformations": transformations});
    let cll = json!({
        "fields": {"total": {"inputFields": [input("amount", json!([{"type": "DIRECT", "subtype": "AGGREGATION"}]))]}},
        "dataset": [input("status", json!([{"type": "INDIRECT", "subtype": "FILTER"}])), input("region", json!([]))]
    });
    let event = run_event(
        "COMPLETE",
        "0193a000-0000-7000-8000-0000000000b1",
        "daily",
        vec![
            json!({"namespace": PG, "name": "shop.public.orders", "facets": {"schema": schema(&["amount", "status", "region"])}}),
        ],
        vec![json!({"namespace": PG, "name": "shop.public.daily",
                    "facets": {"schema": schema(&["day", "total"]), "columnLineage": cll}})],
    );
    let reports = send(&app, vec![event]).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new(), "{reports:#?}");
    let want: BTreeMap<(String, String), Option<bool>> = [
        ("orders.amount", "daily.total"),
        ("orders.status", "daily.day"),
        ("orders.status", "daily.total"),
        ("orders.region", "daily.day"),
        ("orders.region", "daily.total"),
    ]
    .into_iter()
    .map(|(s, t)| ((s.to_string(), t.to_string()), Some(true)))
    .collect();
    assert_eq!(drawn(&app).await.fields, want);
    let d = app
        .ok("{ edges(size: 100) { items { sourceField { name } targetField { name } transformations } } }", json!({}))
        .await;
    let region = d["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sourceField"]["name"] == "region" && e["targetField"]["name"] == "day")
        .cloned()
        .unwrap();
    assert_eq!(region["transformations"][0]["type"], "INDIRECT", "{region:#}");
    // piiFlow from `status`: nothing by default, both daily fields with includeIndirect.
    let status = app.ok("{ containers(name: \"orders\") { items { fields { items { id name } } } } }", json!({})).await;
    let status_id = status["containers"]["items"][0]["fields"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "status")
        .unwrap()["id"]
        .clone();
    let flow = |indirect: bool| {
        let app = &app;
        let vars = json!({"id": status_id, "ind": indirect});
        async move {
            app.ok(
                "query($id: Int!, $ind: Boolean!) { piiFlow(fieldId: $id, includeIndirect: $ind) { fields { distance } } }",
                vars,
            )
            .await["piiFlow"]["fields"]
                .as_array()
                .unwrap()
                .len()
        }
    };
    assert_eq!(flow(false).await, 0);
    assert_eq!(flow(true).await, 2);
}

/// A container created under a dataset's `TABLE` symlink keeps the dataset's other names: a later
/// request naming the table only by its path reaches it (no second container), and so does `node`.
async fn symlink_aliases_outlive_the_request(app: TestApp) {
    let app = app.with_zero_setup().await;
    send(&app, spark_events()).await;
    let reader = run_event(
        "COMPLETE",
        "0193a000-0000-7000-8000-0000000000c1",
        "report",
        vec![json!({"namespace": "file", "name": "/tmp/cll_test/tbl1"})],
        vec![
            json!({"namespace": "file", "name": "/tmp/reports/daily", "facets": {"schema": {"fields": [{"name": "n"}]}}}),
        ],
    );
    let reports = send(&app, vec![reader]).await;
    assert_eq!(unresolved_of(&reports), Vec::<Value>::new(), "{reports:#?}");
    let now = drawn(&app).await;
    assert!(now.tables.contains(&("tbl1".to_string(), "/tmp/reports/daily".to_string())), "{now:#?}");
    let d = app.ok("{ containers { total } }", json!({})).await;
    assert_eq!(d["containers"]["total"], 4, "the path named the table, not a new container");
    let d = app
        .ok("{ node(namespace: \"file\", name: \"/tmp/cll_test/tbl1\") { kind container { name schema } } }", json!({}))
        .await;
    assert_eq!(d["node"], json!({"kind": "container", "container": {"name": "tbl1", "schema": "default"}}));
}
