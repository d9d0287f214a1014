//! Search by the names people know (issue #30, part 4): `search` over containers (name,
//! `database.schema.name`, datastore and name, OpenLineage namespace and name), fields
//! (`table.column`) and external assets (fqn), ranked exact, prefix, substring; `containers(name:)`
//! matching qualified names; `container(qualifiedName:, datastoreId:)`.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    search_ranks_exact_then_prefix_then_substring,
    search_by_datastore_namespace_field_and_external,
    search_refuses_bad_arguments_and_job_finds_nothing,
    containers_and_container_by_qualified_name,
);

/// `pg` (namespace `postgres://db:5432`) holds shop.raw.orders, shop.raw.orders_archive and
/// shop.mart.orders_daily; `wh` holds another shop.raw.orders. revenue feeds an S3 file.
async fn catalog(app: &TestApp) -> (i64, i64, Value) {
    let ds = |name: &str, ns: Value| {
        let name = name.to_string();
        async move {
            app.ok(
                "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                json!({"i": {"name": name, "type": "postgresql", "namespaces": ns}}),
            )
            .await["upsertDatastore"]["id"]
                .as_i64()
                .unwrap()
        }
    };
    let pg = ds("pg", json!(["postgres://db:5432"])).await;
    let wh = ds("wh", json!([])).await;
    let mut ids = serde_json::Map::new();
    for (ds, schema, name, key) in [
        (pg, "raw", "orders", "pg_orders"),
        (pg, "raw", "orders_archive", "archive"),
        (pg, "mart", "orders_daily", "daily"),
        (wh, "raw", "orders", "wh_orders"),
        (pg, "mart", "revenue", "revenue"),
    ] {
        let c = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id name } } } }",
                json!({"i": {"datastoreId": ds, "database": "shop", "schema": schema, "name": name,
                             "fields": [{"name": "amount"}, {"name": "order_id"}]}}),
            )
            .await;
        ids.insert(key.into(), c["upsertContainer"]["id"].clone());
        ids.insert(format!("{key}.amount"), c["upsertContainer"]["fields"]["items"][0]["id"].clone());
    }
    let event = json!({
        "eventType": "COMPLETE",
        "eventTime": "2026-12-01T10:00:00Z",
        "producer": "https://example.com/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193a0c4-0000-7000-8000-000000000040"},
        "job": {"namespace": "nightly", "name": "export_revenue"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.mart.revenue"}],
        "outputs": [{"namespace": "s3://shop-exports", "name": "revenue/daily_v2.parquet"}],
    });
    let r = app.client().post(format!("{}/api/v1/lineage", app.url)).json(&event).send().await.unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    (pg, wh, Value::Object(ids))
}

async fn search(app: &TestApp, query: &str, kinds: Value) -> Vec<Value> {
    let v = app
        .ok(
            "query($q: String!, $k: [SearchKind!]) { search(query: $q, kinds: $k) { kind id containerId fieldId qualifiedName datastoreName matched match container { id } } }",
            json!({"q": query, "k": kinds}),
        )
        .await;
    v["search"].as_array().unwrap().clone()
}

fn brief(hits: &[Value]) -> Vec<(String, String, String)> {
    hits.iter()
        .map(|h| {
            (
                h["match"].as_str().unwrap().to_string(),
                h["qualifiedName"].as_str().unwrap().to_string(),
                h["datastoreName"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

async fn search_ranks_exact_then_prefix_then_substring(app: TestApp) {
    let (_, _, ids) = catalog(&app).await;
    let hits = search(&app, "shop.raw.orders", json!(["CONTAINER"])).await;
    let got = brief(&hits);
    let s = |m: &str, q: &str, d: &str| (m.to_string(), q.to_string(), d.to_string());
    assert_eq!(
        got,
        vec![
            s("EXACT", "shop.raw.orders", "pg"),
            s("EXACT", "shop.raw.orders", "wh"),
            s("PREFIX", "shop.raw.orders_archive", "pg"),
        ],
        "{hits:#?}"
    );
    assert_eq!(hits[0]["id"], ids["pg_orders"].to_string());
    assert_eq!(hits[0]["containerId"], ids["pg_orders"]);
    assert_eq!(hits[0]["container"]["id"], ids["pg_orders"]);
    // A name alone: the tables of that name, then those whose name it starts.
    let got = brief(&search(&app, "ORDERS", json!(["CONTAINER"])).await);
    assert_eq!(
        got,
        vec![
            s("EXACT", "shop.raw.orders", "pg"),
            s("EXACT", "shop.raw.orders", "wh"),
            s("PREFIX", "shop.mart.orders_daily", "pg"),
            s("PREFIX", "shop.raw.orders_archive", "pg"),
        ]
    );
    let got = brief(&search(&app, "rders_d", json!(["CONTAINER"])).await);
    assert_eq!(got, vec![s("SUBSTRING", "shop.mart.orders_daily", "pg")]);
    let got = brief(&search(&app, "shop.ma", json!(["CONTAINER"])).await);
    assert_eq!(got, vec![s("PREFIX", "shop.mart.revenue", "pg"), s("PREFIX", "shop.mart.orders_daily", "pg")]);
}

async fn search_by_datastore_namespace_field_and_external(app: TestApp) {
    let (_, _, ids) = catalog(&app).await;
    // Datastore and name.
    let hits = search(&app, "wh:shop.raw.orders", json!(["CONTAINER"])).await;
    assert_eq!(brief(&hits)[0], ("EXACT".into(), "shop.raw.orders".into(), "wh".into()), "{hits:#?}");
    assert_eq!(hits[0]["matched"], "wh:shop.raw.orders");
    assert_eq!(hits.len(), 1, "{hits:#?}");
    // OpenLineage namespace and name.
    let hits = search(&app, "postgres://db:5432/shop.raw.orders", json!(["CONTAINER"])).await;
    assert_eq!(hits[0]["containerId"], ids["pg_orders"], "{hits:#?}");
    assert_eq!(hits[0]["match"], "EXACT");
    assert_eq!(hits[0]["matched"], "postgres://db:5432/shop.raw.orders");
    // table.column.
    let hits = search(&app, "revenue.amount", json!(["FIELD"])).await;
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["kind"], "FIELD");
    assert_eq!(hits[0]["fieldId"], ids["revenue.amount"]);
    assert_eq!(hits[0]["qualifiedName"], "shop.mart.revenue.amount");
    assert_eq!(hits[0]["match"], "EXACT");
    assert_eq!(hits[0]["container"]["id"], ids["revenue"]);
    // An external asset by its fqn, with the id externalLineageGraph takes.
    let hits = search(&app, "s3://shop-exports/revenue", json!(["EXTERNAL"])).await;
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["kind"], "EXTERNAL");
    assert_eq!(hits[0]["match"], "PREFIX");
    assert_eq!(hits[0]["id"], "ext:openlineage:s3://shop-exports/revenue/daily_v2.parquet");
    let g = app
        .ok("query($id: String!) { externalLineageGraph(id: $id) { nodes { name } } }", json!({"id": hits[0]["id"]}))
        .await;
    assert_eq!(g["externalLineageGraph"]["nodes"][0]["name"], "revenue");
    // Every kind at once: the exact container before the fields and the file that contain it.
    let hits = search(&app, "shop.mart.revenue", Value::Null).await;
    let kinds: Vec<(&str, &str)> =
        hits.iter().map(|h| (h["kind"].as_str().unwrap(), h["match"].as_str().unwrap())).collect();
    assert_eq!(kinds, vec![("CONTAINER", "EXACT"), ("FIELD", "PREFIX"), ("FIELD", "PREFIX")], "{hits:#?}");
}

async fn search_refuses_bad_arguments_and_job_finds_nothing(app: TestApp) {
    catalog(&app).await;
    for (q, first, wanted) in
        [("  ", 20, "query must not be empty"), ("orders", 0, "first must be between 1 and 100, got 0")]
    {
        let (code, message) = app
            .err("query($q: String!, $f: Int) { search(query: $q, first: $f) { id } }", json!({"q": q, "f": first}))
            .await;
        assert_eq!(code, "BAD_USER_INPUT");
        assert!(message.starts_with(wanted), "{message}");
    }
    assert_eq!(search(&app, "orders", json!(["JOB"])).await, Vec::<Value>::new());
    let v = app.ok("{ search(query: \"o\", first: 2) { id } }", json!({})).await;
    assert_eq!(v["search"].as_array().map(Vec::len), Some(2));
    // Once a job ran, JOB finds it by its name and by `namespace/name`, exact before prefix.
    let event = crate::openlineage::run_event(
        "COMPLETE",
        "9f1c2d3e-0000-4000-8000-000000000001",
        "load_orders",
        vec![],
        vec![],
    );
    let (status, body) = app.post("/api/v1/lineage", &event).await;
    assert_eq!(status, 201, "{body}");
    for q in ["load_orders", "nightly/load_orders", "LOAD_ord"] {
        let hits = search(&app, q, json!(["JOB"])).await;
        assert_eq!(hits.len(), 1, "{q}: {hits:#?}");
        assert_eq!(
            (hits[0]["kind"].as_str(), hits[0]["qualifiedName"].as_str()),
            (Some("JOB"), Some("nightly/load_orders"))
        );
    }
    assert_eq!(search(&app, "nightly/load_orders", json!(["JOB"])).await[0]["match"], "EXACT");
}

async fn containers_and_container_by_qualified_name(app: TestApp) {
    let (pg, wh, ids) = catalog(&app).await;
    // containers(name:) matched names only: "shop.raw.orders" found nothing.
    let v = app.ok("{ containers(name: \"shop.raw.orders\") { total items { id } } }", json!({})).await;
    assert_eq!(v["containers"]["total"], 3, "{v:#}");
    let v = app.ok("{ containers(name: \"RAW.ORDERS_a\") { items { id } } }", json!({})).await;
    assert_eq!(v["containers"]["items"], json!([{"id": ids["archive"]}]));
    // container(qualifiedName:, datastoreId:).
    let q = "query($n: String, $d: Int) { container(qualifiedName: $n, datastoreId: $d) { id } }";
    let v = app.ok(q, json!({"n": "shop.raw.orders", "d": wh})).await;
    assert_eq!(v["container"]["id"], ids["wh_orders"]);
    let v = app.ok(q, json!({"n": "Shop.Raw.Orders", "d": pg})).await;
    assert_eq!(v["container"]["id"], ids["pg_orders"]);
    let v = app.ok(q, json!({"n": "shop.mart.revenue"})).await;
    assert_eq!(v["container"]["id"], ids["revenue"]);
    assert_eq!(app.ok(q, json!({"n": "shop.raw.nothing"})).await["container"], Value::Null);
    let (code, message) = app.err(q, json!({"n": "shop.raw.orders"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(
        message.contains("ambiguous")
            && message.contains("pg:shop.raw.orders")
            && message.contains("wh:shop.raw.orders"),
        "{message}"
    );
    let (code, _) = app.err("{ container { id } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let v = app.ok("query($id: Int) { container(id: $id) { id } }", json!({"id": ids["revenue"]})).await;
    assert_eq!(v["container"]["id"], ids["revenue"]);
}
