//! Seed 004's external-engine lineage: `POST /v1/api/lineage` and `recordLineage`, with the
//! accumulation rules (CTAS/VIEW replace, others add, self-reads are no edge, labels stay).

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(external_edges_accumulate_as_seed_004_says, external_endpoint_contract);

async fn catalog(app: &TestApp) -> i64 {
    let ds = app.datastore("lake", "iceberg").await;
    for (db, schema, name) in [
        ("ice", "s", "orders"),
        ("tpch", "tiny", "orders"),
        ("pg", "public", "orders_backfill"),
        ("pg", "public", "extra"),
    ] {
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "database": db, "schema": schema, "name": name}}),
        )
        .await;
    }
    ds
}

async fn sources_of(app: &TestApp, target: &str) -> Vec<(String, String)> {
    let id = app
        .ok(
            "query($n: String) { containers(name: $n) { items { id database schema name } } }",
            json!({"n": target.rsplit('.').next()}),
        )
        .await["containers"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            format!(
                "{}.{}.{}",
                c["database"].as_str().unwrap(),
                c["schema"].as_str().unwrap(),
                c["name"].as_str().unwrap()
            ) == target
        })
        .unwrap()["id"]
        .clone();
    let edges = app
        .ok("query($c: Int) { edges(containerId: $c) { items { targetContainerId sourceType operation sourceContainer { database schema name } sourceExternalFqn } } }", json!({"c": id}))
        .await["edges"]["items"]
        .as_array()
        .unwrap()
        .clone();
    let mut out: Vec<(String, String)> = edges
        .iter()
        .filter(|e| e["targetContainerId"] == id)
        .map(|e| {
            let s = &e["sourceContainer"];
            let name = if s.is_null() {
                e["sourceExternalFqn"].as_str().unwrap().to_string()
            } else {
                format!(
                    "{}.{}.{}",
                    s["database"].as_str().unwrap(),
                    s["schema"].as_str().unwrap(),
                    s["name"].as_str().unwrap()
                )
            };
            assert_eq!(e["sourceType"], "external");
            (name, e["operation"].as_str().unwrap().to_string())
        })
        .collect();
    out.sort();
    out
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

async fn external_edges_accumulate_as_seed_004_says(app: TestApp) {
    catalog(&app).await;
    let post = |body: Value| {
        let app = &app;
        async move { app.post("/v1/api/lineage", &body).await }
    };
    assert_eq!(
        post(json!({"target": "ice.s.orders", "sources": ["tpch.tiny.orders"], "operation": "CTAS"})).await,
        (200, json!({"status": "ok"}))
    );
    post(json!({"target": "ice.s.orders", "sources": ["pg.public.orders_backfill"], "operation": "INSERT"})).await;
    // A table reading itself is no edge, and it does not relabel the existing sources.
    post(json!({"target": "ice.s.orders", "sources": ["ice.s.orders"], "operation": "INSERT_INTO"})).await;
    assert_eq!(
        sources_of(&app, "ice.s.orders").await,
        vec![pair("pg.public.orders_backfill", "INSERT"), pair("tpch.tiny.orders", "CTAS")],
        "SHOW LINEAGE ice.s.orders: tpch.tiny.orders, pg.public.orders_backfill"
    );
    // The label belongs to the statement that introduced the source.
    post(json!({"target": "ice.s.orders", "sources": ["tpch.tiny.orders"], "operation": "MERGE_INTO"})).await;
    assert!(sources_of(&app, "ice.s.orders").await.contains(&pair("tpch.tiny.orders", "CTAS")));
    // Any other operation adds; the default is EXTERNAL.
    post(json!({"target": "ice.s.orders", "sources": ["s3://landing/raw.csv"]})).await;
    assert!(
        sources_of(&app, "ice.s.orders").await.contains(&pair("s3://landing/raw.csv", "EXTERNAL")),
        "an unknown source stays an external end"
    );
    // A VIEW (or CTAS) defines the target afresh: the other sources retire.
    let g = app
        .ok("mutation { recordLineage(target: \"ice.s.orders\", sources: [\"pg.public.extra\"], operation: \"view\") { status operation edgesRetired unresolved } }", json!({}))
        .await;
    assert_eq!(g["recordLineage"], json!({"status": "ok", "operation": "VIEW", "edgesRetired": 3, "unresolved": []}));
    assert_eq!(sources_of(&app, "ice.s.orders").await, vec![pair("pg.public.extra", "VIEW")]);
    let retired = app
        .ok("{ edges(includeRetired: true, sourceType: \"external\") { total items { retiredAt } } }", json!({}))
        .await;
    assert_eq!(retired["edges"]["total"], 4);
    // Provider-maintained: deleting retires, and the type cannot be relabelled.
    let live = app.ok("{ edges(sourceType: \"external\") { items { id } } }", json!({})).await["edges"]["items"][0]
        ["id"]
        .clone();
    let (code, _) = app
        .err("mutation($id: Int!) { updateEdge(id: $id, input: {sourceType: \"manual\"}) { id } }", json!({"id": live}))
        .await;
    assert_eq!(code, "BAD_USER_INPUT");
    app.ok("mutation($id: Int!) { deleteEdge(id: $id) }", json!({"id": live})).await;
    let after = app.ok("query($id: Int!) { edge(id: $id) { retiredAt } }", json!({"id": live})).await;
    assert!(after["edge"]["retiredAt"].is_string());
}

async fn external_endpoint_contract(app: TestApp) {
    catalog(&app).await;
    let (s, b) = app.post("/v1/api/lineage", &json!({"sources": ["a"]})).await;
    assert_eq!(s, 400, "target is required: {b}");
    assert!(b["detail"].as_str().unwrap().contains("target"));
    assert_eq!(app.post("/v1/api/lineage", &json!({"target": ""})).await.0, 400);
    assert_eq!(app.post("/v1/api/lineage", &json!({"target": "ice.s.orders", "sources": "x"})).await.0, 400);
    assert_eq!(app.post_raw("/v1/api/lineage", b"{".to_vec(), false).await.0, 400);
    assert_eq!(app.post_as(None, "/v1/api/lineage", &json!({"target": "ice.s.orders"})).await.0, 401);
    // sources default to []: a target alone records nothing and answers ok.
    assert_eq!(app.post("/v1/api/lineage", &json!({"target": "ice.s.orders"})).await, (200, json!({"status": "ok"})));
    // Both ends unknown: nothing is stored as a relationship.
    app.post("/v1/api/lineage", &json!({"target": "nowhere.x", "sources": ["nowhere.y"]})).await;
    assert_eq!(app.ok("{ edges(includeRetired: true) { total } }", json!({})).await["edges"]["total"], 0);
    // A member without EDITOR is refused.
    let t = app.token_for("engine", "MEMBER", None).await;
    let (s, _) = app
        .post_as(Some(&t), "/v1/api/lineage", &json!({"target": "ice.s.orders", "sources": ["tpch.tiny.orders"]}))
        .await;
    assert_eq!(s, 403);
}
