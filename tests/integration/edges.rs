//! Edges exactly as seed 000 says: granularity, uniqueness, the auto container edge, updates,
//! deletion versus retirement, listing.

use serde_json::json;
use tributary::domain::End;

use crate::both_stores;
use crate::catalog::openlineage_edge;
use crate::common::{ids, TestApp};

both_stores!(
    ends_must_be_one_source_one_target_same_granularity,
    unknown_ends_are_not_found,
    duplicates_conflict_per_source_type,
    source_type_must_be_a_user_type,
    manual_field_edge_brings_the_container_edge,
    update_edge_rules,
    delete_edge_deletes_manual_and_retires_provider_edges,
    edges_filters_and_pages,
    external_ends_carry_their_fqn,
);

const CREATE: &str = "mutation($i: CreateEdgeInput!) { createEdge(input: $i) { id sourceContainerId sourceFieldId targetContainerId targetFieldId sourceType description operation derived retiredAt lastAssertedAt } }";

async fn ends_must_be_one_source_one_target_same_granularity(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, fa) = app.container(ds, "a", &["x"]).await;
    let (b, fb) = app.container(ds, "b", &["x"]).await;
    let (code, msg) = app.err(CREATE, json!({"i": {"sourceContainerId": a, "targetFieldId": fb[0]}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert_eq!(msg, "Value error, source and target must be at the same granularity (both containers or both fields)");
    let (code, _) = app.err(CREATE, json!({"i": {"sourceFieldId": fa[0], "targetContainerId": b}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let (code, msg) = app.err(CREATE, json!({"i": {"targetContainerId": b}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(msg.contains("source"), "{msg}");
    let (code, _) =
        app.err(CREATE, json!({"i": {"sourceContainerId": a, "sourceFieldId": fa[0], "targetContainerId": b}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let (code, _) = app.err(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": a}})).await;
    assert_eq!(code, "BAD_USER_INPUT", "an edge from a container to itself");
    let none = app.ok("{ edges(includeRetired: true) { total } }", json!({})).await;
    assert_eq!(none["edges"]["total"], 0, "a refused edge changes nothing");
}

async fn unknown_ends_are_not_found(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, fa) = app.container(ds, "a", &["x"]).await;
    let (code, msg) = app.err(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": 999}})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Container 999 not found"));
    let (code, msg) = app.err(CREATE, json!({"i": {"sourceFieldId": 777, "targetFieldId": fa[0]}})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Field 777 not found"));
}

async fn duplicates_conflict_per_source_type(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    app.ok(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b}})).await;
    let (code, msg) =
        app.err(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b, "sourceType": "manual"}})).await;
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("CONFLICT", "A lineage edge with the same source and target already exists")
    );
    // Uniqueness is scoped to sourceType: the same pair may carry one edge per origin.
    let other =
        app.ok(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b, "sourceType": "inferred"}})).await;
    assert_eq!(other["createEdge"]["sourceType"], "inferred");
    // The reverse direction is another edge.
    app.ok(CREATE, json!({"i": {"sourceContainerId": b, "targetContainerId": a}})).await;
    let all = app.ok("{ edges { total } }", json!({})).await;
    assert_eq!(all["edges"]["total"], 3);
}

async fn source_type_must_be_a_user_type(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    for bad in ["openlineage", "snowflake", "MANUAL", ""] {
        let (code, msg) =
            app.err(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b, "sourceType": bad}})).await;
        assert_eq!(code, "BAD_USER_INPUT", "{bad}: {msg}");
    }
    let v = app
        .ok(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b, "sourceType": "catalog_import"}}))
        .await;
    assert_eq!(v["createEdge"]["sourceType"], "catalog_import");
    assert_eq!(v["createEdge"]["operation"], json!(null), "manual-style edges have no operation");
    assert_eq!(v["createEdge"]["lastAssertedAt"], json!(null));
}

async fn manual_field_edge_brings_the_container_edge(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, fa) = app.container(ds, "a", &["x", "y"]).await;
    let (b, fb) = app.container(ds, "b", &["x", "y"]).await;
    let (c, fc) = app.container(ds, "c", &["x"]).await;
    let (d, fd) = app.container(ds, "d", &["x"]).await;
    let q = "query($c: Int!) { edges(containerId: $c) { items { sourceContainerId targetContainerId sourceType } } }";
    let e = app.ok(CREATE, json!({"i": {"sourceFieldId": fa[0], "targetFieldId": fb[0]}})).await;
    assert_eq!(e["createEdge"]["sourceFieldId"], fa[0]);
    assert_eq!(e["createEdge"]["sourceContainerId"], json!(null), "a field edge names fields, not containers");
    let v = app.ok(q, json!({"c": a})).await;
    assert_eq!(v["edges"]["items"], json!([{"sourceContainerId": a, "targetContainerId": b, "sourceType": "manual"}]));
    // A second field edge between the same containers adds no second container edge.
    app.ok(CREATE, json!({"i": {"sourceFieldId": fa[1], "targetFieldId": fb[1]}})).await;
    assert_eq!(app.ok(q, json!({"c": a})).await["edges"]["items"].as_array().unwrap().len(), 1);
    // Fields of one container: no container edge.
    app.ok(CREATE, json!({"i": {"sourceFieldId": fa[0], "targetFieldId": fa[1]}})).await;
    assert_eq!(app.ok(q, json!({"c": a})).await["edges"]["items"].as_array().unwrap().len(), 1);
    // Only manual field edges bring one.
    app.ok(CREATE, json!({"i": {"sourceFieldId": fb[0], "targetFieldId": fc[0], "sourceType": "inferred"}})).await;
    assert_eq!(app.ok(q, json!({"c": c})).await["edges"]["items"], json!([]));
    // An existing container edge of another type counts as existing.
    openlineage_edge(&app, End::Container { id: c }, End::Container { id: d }).await;
    app.ok(CREATE, json!({"i": {"sourceFieldId": fc[0], "targetFieldId": fd[0]}})).await;
    let v = app.ok(q, json!({"c": d})).await;
    assert_eq!(
        v["edges"]["items"],
        json!([{"sourceContainerId": c, "targetContainerId": d, "sourceType": "openlineage"}])
    );
}

async fn update_edge_rules(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    let e = app
        .ok(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b, "description": "first"}}))
        .await["createEdge"]["id"]
        .as_i64()
        .unwrap();
    let q = "mutation($id: Int!, $i: UpdateEdgeInput!) { updateEdge(id: $id, input: $i) { id description sourceType sourceContainerId targetContainerId } }";
    let v = app.ok(q, json!({"id": e, "i": {"description": "ETL pipeline v2", "sourceType": "catalog_import"}})).await;
    assert_eq!(
        v["updateEdge"],
        json!({"id": e, "description": "ETL pipeline v2", "sourceType": "catalog_import", "sourceContainerId": a, "targetContainerId": b})
    );
    let v = app.ok(q, json!({"id": e, "i": {"sourceType": "inferred"}})).await;
    assert_eq!(v["updateEdge"]["description"], "ETL pipeline v2", "an omitted description is kept");
    let v = app.ok(q, json!({"id": e, "i": {"description": null}})).await;
    assert_eq!(v["updateEdge"]["description"], json!(null), "null clears");
    let got = app.ok("query($id: Int!) { edge(id: $id) { description sourceType } }", json!({"id": e})).await;
    assert_eq!(got["edge"], json!({"description": null, "sourceType": "inferred"}));
    let (code, msg) = app.err(q, json!({"id": 999, "i": {"description": "x"}})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Lineage edge 999 not found"));
    let (code, _) = app.err(q, json!({"id": e, "i": {"sourceType": "openlineage"}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    // A provider-maintained edge keeps its type; its description may change.
    let p = openlineage_edge(&app, End::Container { id: b }, End::Container { id: a }).await;
    let (code, msg) = app.err(q, json!({"id": p, "i": {"sourceType": "manual"}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(msg.contains("openlineage"), "{msg}");
    let v = app.ok(q, json!({"id": p, "i": {"description": "noted"}})).await;
    assert_eq!(v["updateEdge"]["sourceType"], "openlineage");
    // Changing the type onto an existing (source, target, type) is a conflict.
    app.ok(CREATE, json!({"i": {"sourceContainerId": a, "targetContainerId": b, "sourceType": "manual"}})).await;
    let (code, _) = app.err(q, json!({"id": e, "i": {"sourceType": "manual"}})).await;
    assert_eq!(code, "CONFLICT");
}

async fn delete_edge_deletes_manual_and_retires_provider_edges(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    let m = app.edge(a, b).await;
    let p = openlineage_edge(&app, End::Container { id: b }, End::Container { id: a }).await;
    let del = "mutation($id: Int!) { deleteEdge(id: $id) }";
    assert_eq!(app.ok(del, json!({"id": m})).await["deleteEdge"], true);
    assert_eq!(app.ok(del, json!({"id": p})).await["deleteEdge"], true);
    let v = app
        .ok("query($m: Int!, $p: Int!) { m: edge(id: $m) { id } p: edge(id: $p) { id retiredAt sourceType intervals { from to } } }", json!({"m": m, "p": p}))
        .await;
    assert_eq!(v["m"], json!(null));
    assert!(v["p"]["retiredAt"].is_string());
    let iv = v["p"]["intervals"].as_array().unwrap();
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0]["to"], v["p"]["retiredAt"], "the live interval closes when the edge retires");
    assert_eq!(app.ok("{ edges { total } }", json!({})).await["edges"]["total"], 0);
    let all = app.ok("{ edges(includeRetired: true) { total items { id retiredAt } } }", json!({})).await;
    assert_eq!(ids(&all["edges"]["items"]), vec![p]);
    // A retired edge is out of the graph.
    let g = app
        .ok("query($c: Int!) { lineageGraph(containerId: $c) { nodes { id } edges { id } } }", json!({"c": a}))
        .await;
    assert_eq!(ids(&g["lineageGraph"]["nodes"]), vec![a]);
    let (code, msg) = app.err(del, json!({"id": 999})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Lineage edge 999 not found"));
}

async fn edges_filters_and_pages(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, fa) = app.container(ds, "a", &["x"]).await;
    let (b, fb) = app.container(ds, "b", &["x"]).await;
    let (c, _) = app.container(ds, "c", &[]).await;
    let ab = app.edge(a, b).await;
    let bc = app.edge(b, c).await;
    let ca = app
        .ok(CREATE, json!({"i": {"sourceContainerId": c, "targetContainerId": a, "sourceType": "inferred"}}))
        .await["createEdge"]["id"]
        .as_i64()
        .unwrap();
    let fe = app
        .ok(CREATE, json!({"i": {"sourceFieldId": fa[0], "targetFieldId": fb[0], "sourceType": "inferred"}}))
        .await["createEdge"]["id"]
        .as_i64()
        .unwrap();
    let q = "query($c: Int, $f: Int, $t: String, $p: Int, $s: Int) { edges(containerId: $c, fieldId: $f, sourceType: $t, page: $p, size: $s) { total page size pages items { id } } }";
    assert_eq!(ids(&app.ok(q, json!({"c": b})).await["edges"]["items"]), vec![ab, bc]);
    assert_eq!(ids(&app.ok(q, json!({"f": fb[0]})).await["edges"]["items"]), vec![fe]);
    assert_eq!(ids(&app.ok(q, json!({"t": "inferred"})).await["edges"]["items"]), vec![ca, fe]);
    assert_eq!(ids(&app.ok(q, json!({"c": a, "t": "inferred"})).await["edges"]["items"]), vec![ca]);
    let p = app.ok(q, json!({"p": 2, "s": 3})).await;
    assert_eq!(p["edges"]["total"], 4);
    assert_eq!(p["edges"]["pages"], 2);
    assert_eq!(p["edges"]["page"], 2);
    assert_eq!(ids(&p["edges"]["items"]), vec![fe]);
    let (code, _) = app.err(q, json!({"p": 0})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let (code, _) = app.err(q, json!({"s": 5000})).await;
    assert_eq!(code, "BAD_USER_INPUT");
}

async fn external_ends_carry_their_fqn(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let e =
        openlineage_edge(&app, End::External { fqn: "s3://bucket/raw/orders".into() }, End::Container { id: a }).await;
    let v = app
        .ok("query($id: Int!) { edge(id: $id) { sourceContainerId sourceExternalFqn targetExternalFqn targetContainerId sourceNodeId sourceContainer { id } targetContainer { name } } }", json!({"id": e}))
        .await;
    assert_eq!(
        v["edge"],
        json!({"sourceContainerId": null, "sourceExternalFqn": "s3://bucket/raw/orders", "targetExternalFqn": null, "targetContainerId": a,
               "sourceNodeId": "ext:openlineage:s3://bucket/raw/orders", "sourceContainer": null, "targetContainer": {"name": "a"}})
    );
}
