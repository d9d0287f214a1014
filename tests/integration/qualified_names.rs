//! Issue 46 (1): the same table in two datastores (prod and staging) stays reachable through every
//! route and argument that takes a table by name, in every form `search` answers and the README
//! shows: `<datastore>:<database.schema.table>`, the OpenLineage `<namespace>/<name>` (and the
//! namespace and name as a pair), the id; the plain name is ambiguous and the answer lists each
//! candidate in a form that can be pasted back. The by-id forms of impact and PII flow too.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(the_same_table_in_two_datastores_is_reachable_by_every_name);

const NS: [(&str, &str); 2] =
    [("prod", "postgres://prod.example.com:5432"), ("staging", "postgres://staging.example.com:5432")];

/// One datastore's tables: (raw orders id, its customer_email field id, orders_clean id).
struct Store {
    name: &'static str,
    namespace: &'static str,
    raw: i64,
    email: i64,
    clean: i64,
}

async fn datastore(app: &TestApp, name: &'static str, namespace: &'static str) -> Store {
    let ds = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": name, "type": "postgresql", "namespaces": [namespace]}}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let table = |schema: &str, name: &str, fields: &[&str]| {
        json!({"i": {"datastoreId": ds, "database": "shop", "schema": schema, "name": name,
                     "fields": fields.iter().map(|f| json!({"name": f})).collect::<Vec<_>>()}})
    };
    let q = "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id name } } } }";
    let raw = app.ok(q, table("raw", "orders", &["id", "customer_email"])).await["upsertContainer"].clone();
    let clean = app.ok(q, table("staging", "orders_clean", &["id", "email"])).await["upsertContainer"].clone();
    let field = |c: &Value, n: &str| {
        c["fields"]["items"].as_array().unwrap().iter().find(|f| f["name"] == n).unwrap()["id"].as_i64().unwrap()
    };
    let (raw_id, clean_id) = (raw["id"].as_i64().unwrap(), clean["id"].as_i64().unwrap());
    app.edge(raw_id, clean_id).await;
    app.field_edge(field(&raw, "customer_email"), field(&clean, "email")).await;
    Store { name, namespace, raw: raw_id, email: field(&raw, "customer_email"), clean: clean_id }
}

async fn get(app: &TestApp, path: &str, params: &[(&str, String)]) -> (u16, String) {
    let query: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(params).finish();
    let r = app.client().get(format!("{}{path}?{query}", app.url)).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn get_json(app: &TestApp, path: &str, params: &[(&str, String)]) -> Value {
    let (status, body) = get(app, path, params).await;
    assert_eq!(status, 200, "GET {path} {params:?}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The CSV export's datastores, source and target, of every row.
fn csv_datastores(text: &str) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let head = r.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (s, t) = (col("source_datastore"), col("target_datastore"));
    let mut out: Vec<String> = r
        .records()
        .flat_map(|x| {
            let x = x.unwrap();
            [x[s].to_string(), x[t].to_string()]
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

async fn the_same_table_in_two_datastores_is_reachable_by_every_name(app: TestApp) {
    let mut stores = Vec::new();
    for (name, ns) in NS {
        stores.push(datastore(&app, name, ns).await);
    }

    // The plain name is ambiguous on every route; the answer names both in a form to paste.
    for (path, param) in [
        ("/admin/lineage/graph", "root"),
        ("/admin/lineage/impact", "table"),
        ("/admin/lineage/columns", "table"),
        ("/admin/lineage/pii-flow", "table"),
    ] {
        let mut params = vec![(param, "shop.raw.orders".to_string())];
        if path.ends_with("pii-flow") {
            params.push(("column", "customer_email".into()));
        }
        let (status, body) = get(&app, path, &params).await;
        assert_eq!(status, 400, "{path}: {body}");
        let detail = serde_json::from_str::<Value>(&body).unwrap()["detail"].as_str().unwrap().to_string();
        for s in &stores {
            assert!(detail.contains(&format!("{}:shop.raw.orders", s.name)), "{path}: {detail}");
        }
    }
    let (code, message) = app.err("{ container(qualifiedName: \"shop.raw.orders\") { id } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.contains("prod:shop.raw.orders") && message.contains("staging:shop.raw.orders"), "{message}");

    for s in &stores {
        let prefixed = format!("{}:shop.raw.orders", s.name);
        let dataset = format!("{}/shop.raw.orders", s.namespace);
        // Every form of the name, each as `table` (or `root`) alone, plus the pair and the id.
        let forms: Vec<Vec<(&str, String)>> = vec![
            vec![("T", prefixed.clone())],
            vec![("T", prefixed.to_uppercase())],
            vec![("T", dataset.clone())],
            vec![("T", "shop.raw.orders".into()), ("namespace", s.namespace.into())],
            vec![("T", s.raw.to_string())],
            vec![("container_id", s.raw.to_string())],
        ];
        for form in &forms {
            let with = |param: &'static str, extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
                let mut p: Vec<(&'static str, String)> =
                    form.iter().map(|(k, v)| (if *k == "T" { param } else { *k }, v.clone())).collect();
                p.extend(extra.iter().cloned());
                p
            };
            let g = get_json(&app, "/admin/lineage/graph", &with("root", &[])).await;
            assert_eq!(g["root"]["id"], s.raw, "{form:?}: {g:#}");
            assert_eq!(g["root"]["unique_name"], prefixed, "{g:#}");
            let mut nodes: Vec<i64> =
                g["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
            nodes.sort();
            assert_eq!(nodes, [s.raw, s.clean], "{form:?}: this datastore's graph");
            let i = get_json(&app, "/admin/lineage/impact", &with("table", &[])).await;
            assert_eq!(i["table"]["id"], s.raw, "{form:?}");
            assert_eq!(i["tables"][0]["id"], s.clean, "{form:?}: {i:#}");
            let c = get_json(&app, "/admin/lineage/columns", &with("table", &[])).await;
            assert_eq!(c["table"]["id"], s.raw, "{form:?}");
            let p =
                get_json(&app, "/admin/lineage/pii-flow", &with("table", &[("column", "customer_email".into())])).await;
            assert_eq!(
                (p["table"]["id"].as_i64(), p["column"]["id"].as_i64()),
                (Some(s.raw), Some(s.email)),
                "{form:?}"
            );
            assert_eq!(p["columns"][0]["table_id"], s.clean, "{form:?}: {p:#}");
            // The exports reach the same table: every row's ends are in this datastore.
            for (path, param, extra) in [
                ("/admin/lineage/graph", "root", vec![]),
                ("/admin/lineage/impact", "table", vec![]),
                ("/admin/lineage/pii-flow", "table", vec![("column", "customer_email".to_string())]),
            ] {
                let mut params = with(param, &extra);
                params.push(("format", "csv".into()));
                let (status, text) = get(&app, path, &params).await;
                assert_eq!(status, 200, "{path} {params:?}: {text}");
                assert_eq!(csv_datastores(&text), [s.name.to_string()], "{path} {params:?}: {text}");
            }
        }
        // PII flow by the column's id, in JSON and exported.
        let p = get_json(&app, "/admin/lineage/pii-flow", &[("field_id", s.email.to_string())]).await;
        assert_eq!((p["table"]["id"].as_i64(), p["columns"][0]["table_id"].as_i64()), (Some(s.raw), Some(s.clean)));
        let (status, text) =
            get(&app, "/admin/lineage/pii-flow", &[("field_id", s.email.to_string()), ("format", "csv".into())]).await;
        assert_eq!((status, csv_datastores(&text)), (200, vec![s.name.to_string()]), "{text}");

        // GraphQL: `container(qualifiedName:)` in each form, with `qualifiedName` and `uniqueName`.
        for name in [prefixed.clone(), dataset.clone(), s.raw.to_string()] {
            let d = app
                .ok(
                    "query($n: String!) { container(qualifiedName: $n) { id qualifiedName uniqueName datastore { name } } }",
                    json!({"n": name}),
                )
                .await;
            assert_eq!(
                d["container"],
                json!({"id": s.raw, "qualifiedName": "shop.raw.orders", "uniqueName": prefixed, "datastore": {"name": s.name}}),
                "{name}"
            );
        }
    }

    // The candidates an ambiguous answer lists work when pasted back, and search's spelling too.
    let d =
        app.ok("{ search(query: \"staging:shop.raw.orders\", kinds: [CONTAINER]) { id matched } }", json!({})).await;
    let matched = d["search"][0]["matched"].as_str().unwrap().to_string();
    let g = get_json(&app, "/admin/lineage/graph", &[("root", matched)]).await;
    assert_eq!(g["root"]["id"], stores[1].raw);

    // What matches nothing still says so, in the datastore named.
    let (status, body) = get(&app, "/admin/lineage/impact", &[("table", "prod:shop.raw.nothing".into())]).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("not found in datastore prod"), "{body}");
    let (status, body) =
        get(&app, "/admin/lineage/impact", &[("table", "postgres://prod.example.com:5432/shop.raw.nothing".into())])
            .await;
    assert_eq!(status, 404, "{body}");
    // Both a name and an id: which one? Refused.
    let (status, body) = get(
        &app,
        "/admin/lineage/impact",
        &[("table", "prod:shop.raw.orders".into()), ("container_id", stores[0].raw.to_string())],
    )
    .await;
    assert_eq!(status, 400, "{body}");
}
