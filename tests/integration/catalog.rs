//! Catalog: datastores, containers merged by name, fields, deletion and what it does to edges.

use serde_json::json;
use tributary::domain::{now, End, NewEdge};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    upsert_datastore_is_keyed_by_name,
    upsert_container_merges_fields_by_name,
    container_fields_filter_and_pages,
    deleting_a_container_retires_provider_edges_and_deletes_others,
    deleting_a_field_removes_its_edges,
    deleting_a_datastore_removes_its_containers,
    containers_filter_by_datastore_and_name,
    unknown_datastore_is_not_found,
    name_search_folds_unicode_case,
);

pub async fn openlineage_edge(app: &TestApp, source: End, target: End) -> i64 {
    let e = app
        .store
        .create_edges(
            vec![NewEdge {
                source,
                target,
                description: None,
                source_type: "openlineage".into(),
                operation: Some("run_event".into()),
                derived: None,
                transformations: None,
                last_asserted_at: Some(now()),
            }],
            false,
            now(),
        )
        .await
        .expect("create provider edge");
    e[0].id
}

async fn upsert_datastore_is_keyed_by_name(app: TestApp) {
    let q = "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id name type storeType namespaces enrichmentOnly } }";
    let a = app.ok(q, json!({"i": {"name": "Production DB", "type": "snowflake"}})).await;
    let id = a["upsertDatastore"]["id"].as_i64().unwrap();
    assert_eq!(a["upsertDatastore"]["namespaces"], json!([]));
    assert_eq!(a["upsertDatastore"]["enrichmentOnly"], json!(false));
    let b = app
        .ok(
            q,
            json!({"i": {"name": "Production DB", "type": "postgresql", "storeType": "jdbc",
                          "namespaces": ["postgres://warehouse:5432"], "enrichmentOnly": true}}),
        )
        .await;
    assert_eq!(b["upsertDatastore"]["id"].as_i64().unwrap(), id, "same name updates, not creates");
    assert_eq!(b["upsertDatastore"]["type"], "postgresql");
    assert_eq!(b["upsertDatastore"]["namespaces"], json!(["postgres://warehouse:5432"]));
    let all = app.ok("{ datastores { id name } }", json!({})).await;
    assert_eq!(all["datastores"].as_array().unwrap().len(), 1);
    let one =
        app.ok("query($id: Int!) { datastore(id: $id) { name storeType enrichmentOnly } }", json!({"id": id})).await;
    assert_eq!(one["datastore"], json!({"name": "Production DB", "storeType": "jdbc", "enrichmentOnly": true}));
    let (code, msg) = app.err(q, json!({"i": {"name": " ", "type": "snowflake"}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(msg.contains("name"), "{msg}");
}

async fn upsert_container_merges_fields_by_name(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let q = "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id name database schema containerType tableType displayName purpose activeAnomalyCount datastoreId datastore { name } fieldCount
               fields { items { name type status latestProfileId isComputedField activeAnomalyCount displayName } } } }";
    let a = app
        .ok(
            q,
            json!({"i": {"datastoreId": ds, "name": "orders", "database": "sales", "schema": "public",
                   "fields": [{"name": "id", "type": "integer"}, {"name": "email", "type": "string", "latestProfileId": 301, "isComputedField": true}]}}),
        )
        .await;
    let c = &a["upsertContainer"];
    assert_eq!(c["containerType"], "table", "default container type");
    assert_eq!(c["activeAnomalyCount"], 0);
    assert_eq!(c["purpose"], json!(null));
    assert_eq!(c["fieldCount"], 2);
    assert_eq!(c["datastore"]["name"], "wh");
    assert_eq!(
        c["fields"]["items"][1],
        json!({"name": "email", "type": "string", "status": "active", "latestProfileId": 301, "isComputedField": true, "activeAnomalyCount": 0, "displayName": null})
    );
    let b = app
        .ok(
            q,
            json!({"i": {"datastoreId": ds, "name": "orders", "database": "sales", "schema": "public", "purpose": "billing",
                   "containerType": "computed_table", "activeAnomalyCount": 2,
                   "fields": [{"name": "email", "type": "varchar", "activeAnomalyCount": 1}, {"name": "total", "type": "decimal"}]}}),
        )
        .await;
    let c2 = &b["upsertContainer"];
    assert_eq!(c2["id"], c["id"], "same datastore and database.schema.name updates");
    assert_eq!(c2["purpose"], "billing");
    assert_eq!(c2["containerType"], "computed_table");
    assert_eq!(c2["activeAnomalyCount"], 2);
    let names: Vec<&str> =
        c2["fields"]["items"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["id", "email", "total"], "unlisted fields are kept, new ones added");
    let email = &c2["fields"]["items"][1];
    assert_eq!(email["type"], "varchar");
    assert_eq!(email["latestProfileId"], 301, "unset inputs keep their value");
    assert_eq!(email["activeAnomalyCount"], 1);
    // Another schema is another container.
    let other =
        app.ok(q, json!({"i": {"datastoreId": ds, "name": "orders", "database": "sales", "schema": "stage"}})).await;
    assert_ne!(other["upsertContainer"]["id"], c["id"]);
    let (code, _) =
        app.err(q, json!({"i": {"datastoreId": ds, "name": "x", "fields": [{"name": "a"}, {"name": "a"}]}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
}

async fn container_fields_filter_and_pages(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (c, f) = app.container(ds, "customers", &["id", "Email", "email_upper", "name", "created_at"]).await;
    let (c2, f2) = app.container(ds, "mart", &["email"]).await;
    app.field_edge(f[1], f2[0]).await;
    let q = "query($c: Int!, $n: String, $p: Int, $s: Int) { containerFields(containerId: $c, name: $n, page: $p, size: $s) { total page size pages items { id name hasLineage containerId } } }";
    let all = app.ok(q, json!({"c": c, "p": 1, "s": 2})).await;
    let page = &all["containerFields"];
    assert_eq!((page["total"].as_i64(), page["pages"].as_i64(), page["size"].as_i64()), (Some(5), Some(3), Some(2)));
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    let last = app.ok(q, json!({"c": c, "p": 3, "s": 2})).await;
    assert_eq!(last["containerFields"]["items"].as_array().unwrap().len(), 1);
    let email = app.ok(q, json!({"c": c, "n": "EMAIL"})).await;
    let items = email["containerFields"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "case-insensitive substring");
    assert_eq!(items[0]["hasLineage"], true);
    assert_eq!(items[1]["hasLineage"], false);
    assert_eq!(items[0]["containerId"], c);
    let _ = c2;
    for (p, s) in [(0, 10), (-1, 10), (1, 0), (1, 1001)] {
        let (code, msg) = app.err(q, json!({"c": c, "p": p, "s": s})).await;
        assert_eq!(code, "BAD_USER_INPUT", "page {p} size {s}: {msg}");
    }
    let (code, msg) = app.err(q, json!({"c": 999_999})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Container 999999 not found"));
}

async fn deleting_a_container_retires_provider_edges_and_deletes_others(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    let (c, _) = app.container(ds, "c", &[]).await;
    let manual = app.edge(a, b).await;
    let provided = openlineage_edge(&app, End::Container { id: a }, End::Container { id: c }).await;
    let d = app.ok("mutation($id: Int!) { deleteContainer(id: $id) }", json!({"id": a})).await;
    assert_eq!(d["deleteContainer"], true);
    let q = "query($m: Int!, $p: Int!, $a: Int!) { m: edge(id: $m) { id } p: edge(id: $p) { id retiredAt } container(id: $a) { id } }";
    let v = app.ok(q, json!({"m": manual, "p": provided, "a": a})).await;
    assert_eq!(v["m"], json!(null), "manual edge deleted");
    assert!(v["p"]["retiredAt"].is_string(), "openlineage edge retired: {v}");
    assert_eq!(v["container"], json!(null));
    let live = app.ok("query($c: Int!) { edges(containerId: $c) { total } }", json!({"c": c})).await;
    assert_eq!(live["edges"]["total"], 0);
    let retired = app
        .ok("query($c: Int!) { edges(containerId: $c, includeRetired: true) { total items { id } } }", json!({"c": c}))
        .await;
    assert_eq!(retired["edges"]["items"][0]["id"], provided);
    let (code, _) = app.err("mutation($id: Int!) { deleteContainer(id: $id) }", json!({"id": a})).await;
    assert_eq!(code, "NOT_FOUND");
    // The name is free again: a new container, a new id.
    let (a2, _) = app.container(ds, "a", &[]).await;
    assert_ne!(a2, a);
}

async fn deleting_a_field_removes_its_edges(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (c1, f1) = app.container(ds, "a", &["x", "y"]).await;
    let (c2, f2) = app.container(ds, "b", &["x"]).await;
    let e = app.field_edge(f1[0], f2[0]).await;
    let provided =
        openlineage_edge(&app, End::Field { id: f1[1], container_id: c1 }, End::Field { id: f2[0], container_id: c2 })
            .await;
    let d = app.ok("mutation($id: Int!) { deleteField(id: $id) }", json!({"id": f2[0]})).await;
    assert_eq!(d["deleteField"], true);
    let v = app
        .ok("query($e: Int!, $p: Int!, $f: Int!) { e: edge(id: $e) { id } p: edge(id: $p) { retiredAt } field(id: $f) { id } }", json!({"e": e, "p": provided, "f": f2[0]}))
        .await;
    assert_eq!(v["e"], json!(null));
    assert!(v["p"]["retiredAt"].is_string());
    assert_eq!(v["field"], json!(null));
    let fields = app.ok("query($c: Int!) { containerFields(containerId: $c) { total } }", json!({"c": c2})).await;
    assert_eq!(fields["containerFields"]["total"], 0);
    let (code, msg) = app.err("mutation { deleteField(id: 987654) }", json!({})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Field 987654 not found"));
}

async fn deleting_a_datastore_removes_its_containers(app: TestApp) {
    let ds = app.datastore("gone", "postgresql").await;
    let keep = app.datastore("kept", "postgresql").await;
    let (a, _) = app.container(ds, "a", &["x"]).await;
    let (b, _) = app.container(keep, "b", &["x"]).await;
    let e = app.edge(a, b).await;
    let d = app.ok("mutation($id: Int!) { deleteDatastore(id: $id) }", json!({"id": ds})).await;
    assert_eq!(d["deleteDatastore"], true);
    let v = app
        .ok("query($a: Int!, $b: Int!, $e: Int!, $d: Int!) { a: container(id: $a) { id } b: container(id: $b) { id } edge(id: $e) { id } datastore(id: $d) { id } }", json!({"a": a, "b": b, "e": e, "d": ds}))
        .await;
    assert_eq!(v["a"], json!(null));
    assert_eq!(v["b"]["id"], b);
    assert_eq!(v["edge"], json!(null));
    assert_eq!(v["datastore"], json!(null));
}

async fn containers_filter_by_datastore_and_name(app: TestApp) {
    let one = app.datastore("one", "snowflake").await;
    let two = app.datastore("two", "snowflake").await;
    app.container(one, "raw_orders", &[]).await;
    app.container(one, "orders_clean", &[]).await;
    app.container(two, "Orders_Mart", &[]).await;
    let q = "query($d: Int, $n: String) { containers(datastoreId: $d, name: $n) { total items { name datastoreId } } }";
    let v = app.ok(q, json!({"d": one})).await;
    assert_eq!(v["containers"]["total"], 2);
    let v = app.ok(q, json!({"n": "ORDERS"})).await;
    assert_eq!(v["containers"]["total"], 3);
    let v = app.ok(q, json!({"d": two, "n": "mart"})).await;
    assert_eq!(v["containers"]["items"], json!([{"name": "Orders_Mart", "datastoreId": two}]));
}

async fn unknown_datastore_is_not_found(app: TestApp) {
    let (code, msg) =
        app.err("mutation { upsertContainer(input: {datastoreId: 4242, name: \"t\"}) { id } }", json!({})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Datastore 4242 not found"));
    let v = app.ok("{ container(id: 4242) { id } field(id: 4242) { id } datastore(id: 4242) { id } }", json!({})).await;
    assert_eq!(v, json!({"container": null, "field": null, "datastore": null}));
}

/// `containers(name:)`, `containerFields(name:)` and OpenLineage's name matching fold case beyond
/// ASCII, identically on both stores ("ÜBER" finds "Übersicht").
async fn name_search_folds_unicode_case(app: TestApp) {
    let ds = app
        .ok(
            "mutation { upsertDatastore(input: {name: \"dach\", type: \"postgresql\", namespaces: [\"postgres://dach:5432\"]}) { id } }",
            json!({}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let (c, _) = app.container(ds, "Übersicht", &["Größe", "ÄNDERUNG", "plain"]).await;
    let (other, _) = app.container(ds, "uebersicht", &["x"]).await;
    for needle in ["über", "ÜBER", "Übersicht", "bersicht"] {
        let v = app.ok("query($n: String) { containers(name: $n) { items { id } } }", json!({"n": needle})).await;
        let found = crate::common::ids(&v["containers"]["items"]);
        let want = if needle == "bersicht" { vec![c, other] } else { vec![c] };
        assert_eq!(found, want, "containers(name: {needle:?})");
    }
    for (needle, want) in
        [("grö", vec!["Größe"]), ("GRÖSSE", vec![]), ("änd", vec!["ÄNDERUNG"]), ("PLAIN", vec!["plain"])]
    {
        let v = app
            .ok(
                "query($c: Int!, $n: String) { containerFields(containerId: $c, name: $n) { items { name } } }",
                json!({"c": c, "n": needle}),
            )
            .await;
        let names: Vec<&str> =
            v["containerFields"]["items"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
        assert_eq!(names, want, "containerFields(name: {needle:?})");
    }
    // OpenLineage matches the dataset `ÜBERSICHT` to the container, whatever the case.
    let event = crate::openlineage::run_event(
        "COMPLETE",
        "u1",
        "unicode",
        vec![json!({"namespace": "s3://landing", "name": "in"})],
        vec![json!({"namespace": "postgres://dach:5432", "name": "ÜBERSICHT"})],
    );
    let (status, body) = app.post("/api/v1/lineage", &event).await;
    assert_eq!(status, 201, "{body}");
    let v = app.ok("query($c: Int!) { edges(containerId: $c) { total } }", json!({"c": c})).await;
    assert_eq!(v["edges"]["total"], 1, "{body}");
}
