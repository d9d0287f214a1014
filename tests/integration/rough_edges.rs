//! What a new user tripped over (issue #30, part 5), each as the user met it: `impact` leaving
//! out external assets, the documented `limit` refused as "too complex", manual field edges
//! that could not say they transform, containers without their description, owners and tags,
//! `explainLineage` without `asOf` in its answer, and a token sent without its scheme.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    impact_lists_the_external_assets_it_reaches,
    impact_at_the_documented_limit_works_and_refusals_name_the_limit,
    a_manual_field_edge_can_say_it_transforms,
    containers_show_their_effective_description_owners_and_tags,
    explain_lineage_says_its_as_of,
    a_token_without_its_scheme_is_told_so,
);

/// `shop.mart.revenue_daily` feeds an S3 file no datastore lists (an external end), through
/// OpenLineage; `shop.raw.orders` feeds `revenue_daily` by a manual edge.
async fn shop_with_an_export(app: &TestApp) -> (i64, i64) {
    let ds = app
        .ok(
            "mutation { upsertDatastore(input: {name: \"pg\", type: \"postgresql\", namespaces: [\"postgres://db:5432\"]}) { id } }",
            json!({}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let mut ids = Vec::new();
    for (schema, name) in [("raw", "orders"), ("mart", "revenue_daily")] {
        let c = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                json!({"i": {"datastoreId": ds, "database": "shop", "schema": schema, "name": name}}),
            )
            .await;
        ids.push(c["upsertContainer"]["id"].as_i64().unwrap());
    }
    app.edge(ids[0], ids[1]).await;
    let event = json!({
        "eventType": "COMPLETE",
        "eventTime": "2026-12-01T10:00:00Z",
        "producer": "https://example.com/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193a0c4-0000-7000-8000-000000000030"},
        "job": {"namespace": "nightly", "name": "export_revenue"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.mart.revenue_daily"}],
        "outputs": [{"namespace": "s3://shop-exports", "name": "revenue/daily_v2.parquet"}],
    });
    let r = app.client().post(format!("{}/api/v1/lineage", app.url)).json(&event).send().await.unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    (ids[0], ids[1])
}

const S3: &str = "s3://shop-exports/revenue/daily_v2.parquet";

async fn impact_lists_the_external_assets_it_reaches(app: TestApp) {
    let (orders, daily) = shop_with_an_export(&app).await;
    let q = "query($c: Int!, $d: Int) { impact(containerId: $c, depth: $d) { isPartial containers { distance container { name } }
             externals { distance external { id fqn sourceType nodeType } via { id sourceType } } } }";
    let a = app.ok(q, json!({"c": orders})).await;
    assert_eq!(a["impact"]["containers"], json!([{"distance": 1, "container": {"name": "revenue_daily"}}]));
    let ext = &a["impact"]["externals"];
    assert_eq!(ext.as_array().map(Vec::len), Some(1), "{a:#}");
    assert_eq!(ext[0]["distance"], 2);
    assert_eq!(ext[0]["external"]["fqn"], S3);
    assert_eq!(ext[0]["external"]["id"], format!("ext:openlineage:{S3}"));
    assert_eq!(ext[0]["via"]["sourceType"], "openlineage");
    // The same distance rule as containers: at depth 1 the file is beyond reach.
    let a = app.ok(q, json!({"c": orders, "d": 1})).await;
    assert_eq!(a["impact"]["externals"], json!([]));
    let a = app.ok(q, json!({"c": daily})).await;
    assert_eq!(a["impact"]["externals"][0]["distance"], 1);
    // The lineage graph shows the same asset.
    let g =
        app.ok("query($c: Int!) { lineageGraph(containerId: $c) { externalNodes { id } } }", json!({"c": daily})).await;
    assert_eq!(g["lineageGraph"]["externalNodes"][0]["id"], format!("ext:openlineage:{S3}"));
    // The REST impact route lists it too.
    let r: Value = app
        .client()
        .get(format!("{}/admin/lineage/impact?table=shop.raw.orders", app.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["externals"][0]["fqn"], S3, "{r:#}");
    assert_eq!(r["externals"][0]["distance"], 2);
    assert_eq!(r["externals"][0]["source_type"], "openlineage");
}

async fn impact_at_the_documented_limit_works_and_refusals_name_the_limit(app: TestApp) {
    let (orders, _) = shop_with_an_export(&app).await;
    // The documented maximum, with the fields a user selects (refused as "Query is too complex."
    // before).
    let a = app
        .ok(
            "query($c: Int!) { impact(containerId: $c, limit: 100000) { isPartial containers { distance container { id name } } } }",
            json!({"c": orders}),
        )
        .await;
    assert_eq!(a["impact"]["containers"][0]["container"]["name"], "revenue_daily");
    let a = app
        .ok(
            "query($f: Int!) { piiFlow(fieldId: $f, limit: 100000) { isPartial fields { distance derived field { id name } } } }",
            json!({"f": app.container(app.datastore("other", "snowflake").await, "t", &["x"]).await.1[0]}),
        )
        .await;
    assert_eq!(a["piiFlow"]["fields"], json!([]));
    // A query over the cap is refused with the cap and the excess named.
    let (code, message) =
        app.err(&format!("{{ containers(size: 1000) {{ items {{ id {} }} }} }}", "name ".repeat(200)), json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.contains("complexity is") && message.contains("over the limit of 150,000 by"), "{message}");
    let deep = format!(
        "{{ edges {{ items {{ sourceField {{ {} id {} }} }} }} }}",
        "container { fields { items { ".repeat(5),
        "} } } ".repeat(5)
    );
    let (code, message) = app.err(&deep, json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.contains("levels deep, over the limit of 15 by"), "{message}");
}

async fn a_manual_field_edge_can_say_it_transforms(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (_, a) = app.container(ds, "orders", &["amount"]).await;
    let (_, b) = app.container(ds, "revenue", &["total", "copy"]).await;
    let e = app
        .ok(
            "mutation($s: Int, $t: Int) { createEdge(input: {sourceFieldId: $s, targetFieldId: $t, description: \"sum(amount)\", derived: true}) { id derived } }",
            json!({"s": a[0], "t": b[0]}),
        )
        .await;
    assert_eq!(e["createEdge"]["derived"], true);
    let id = e["createEdge"]["id"].as_i64().unwrap();
    let flow = app
        .ok("query($f: Int!) { piiFlow(fieldId: $f) { fields { derived field { name } } } }", json!({"f": a[0]}))
        .await;
    assert_eq!(flow["piiFlow"]["fields"], json!([{"derived": true, "field": {"name": "total"}}]));
    assert_eq!(
        app.ok("query($id: Int!) { edge(id: $id) { derived } }", json!({"id": id})).await["edge"]["derived"],
        true
    );
    // Over REST too; a copy says false; a container edge cannot say it.
    let r = app
        .client()
        .post(format!("{}/api/lineage/edges", app.url))
        .json(&json!({"source_field_id": a[0], "target_field_id": b[1], "derived": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.json::<Value>().await.unwrap()["derived"], false);
    let (ca, cb) = (app.container(ds, "x", &[]).await.0, app.container(ds, "y", &[]).await.0);
    let (code, message) = app
        .err(
            "mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t, derived: true}) { id } }",
            json!({"s": ca, "t": cb}),
        )
        .await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.contains("derived applies to field edges"), "{message}");
}

async fn containers_show_their_effective_description_owners_and_tags(app: TestApp) {
    let ds = app
        .ok(
            "mutation { upsertDatastore(input: {name: \"pg\", type: \"postgresql\", namespaces: [\"postgres://db:5432\"]}) { id } }",
            json!({}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let c = app
        .ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id description owners tags } }",
            json!({"i": {"datastoreId": ds, "database": "shop", "schema": "raw", "name": "orders"}}),
        )
        .await;
    assert_eq!(c["upsertContainer"]["description"], Value::Null);
    assert_eq!(c["upsertContainer"]["owners"], json!([]));
    let id = c["upsertContainer"]["id"].as_i64().unwrap();
    // OpenLineage says something; then the user says otherwise for the description only.
    let event = json!({
        "eventType": "COMPLETE",
        "eventTime": "2026-12-01T10:00:00Z",
        "producer": "https://example.com/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193a0c4-0000-7000-8000-000000000031"},
        "job": {"namespace": "nightly", "name": "describe"},
        "inputs": [],
        "outputs": [{"namespace": "postgres://db:5432", "name": "shop.raw.orders", "facets": {
            "documentation": {"_producer": "x", "_schemaURL": "x", "description": "orders as loaded"},
            "ownership": {"_producer": "x", "_schemaURL": "x", "owners": [{"name": "team:data", "type": "MAINTAINER"}]},
            "tags": {"_producer": "x", "_schemaURL": "x", "tags": [{"key": "pii", "value": "true", "source": "MANUAL"}]}
        }}],
    });
    let r = app.client().post(format!("{}/api/v1/lineage", app.url)).json(&event).send().await.unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    let q = "query($id: Int!) { container(id: $id) { description owners tags } }";
    assert_eq!(
        app.ok(q, json!({"id": id})).await["container"],
        json!({"description": "orders as loaded", "owners": ["team:data"], "tags": ["pii"]})
    );
    app.ok(
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        json!({"i": {"datastoreId": ds, "database": "shop", "schema": "raw", "name": "orders", "description": "the user's words"}}),
    )
    .await;
    assert_eq!(
        app.ok(q, json!({"id": id})).await["container"],
        json!({"description": "the user's words", "owners": ["team:data"], "tags": ["pii"]})
    );
    // A list asks the store once for every container's metadata, not once per container.
    for name in ["a", "b", "c"] {
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "name": name, "description": format!("about {name}")}}),
        )
        .await;
    }
    let reads = |text: &str| -> f64 {
        text.lines()
            .filter(|l| {
                l.starts_with("tributary_store_queries_total{") && l.contains("operation=\"container_metadata_of\"")
            })
            .filter(|l| l.contains(&format!("store=\"{}\"", app.store.kind())))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let metrics =
        || async { app.client().get(format!("{}/metrics", app.url)).send().await.unwrap().text().await.unwrap() };
    let before = reads(&metrics().await);
    let list = app.ok("{ containers(size: 100) { items { name description owners tags } } }", json!({})).await;
    assert_eq!(reads(&metrics().await) - before, 1.0, "one metadata read for the whole list");
    let descriptions: Vec<&str> =
        list["containers"]["items"].as_array().unwrap().iter().filter_map(|c| c["description"].as_str()).collect();
    assert_eq!(descriptions, ["the user's words", "about a", "about b", "about c"]);
    // Without REPORTER on the datastore (as metadataAssertions): hidden, not an error.
    let member = app.token_for("outsider", "MEMBER", None).await;
    let v = app.gql_as(Some(&member), q, json!({"id": id})).await;
    assert_eq!(v["data"]["container"], json!({"description": null, "owners": null, "tags": null}), "{v:#}");
}

async fn explain_lineage_says_its_as_of(app: TestApp) {
    let (orders, daily) = shop_with_an_export(&app).await;
    let at = chrono::Utc::now().to_rfc3339();
    let v = app
        .ok(
            "query($a: Int, $b: Int, $at: DateTime) { explainLineage(from: {containerId: $a}, to: {containerId: $b}, asOf: $at) { paths { hops { edge { id } } } asOf { at } } }",
            json!({"a": orders, "b": daily, "at": at}),
        )
        .await;
    assert_eq!(v["explainLineage"]["paths"].as_array().map(Vec::len), Some(1), "{v:#}");
    assert!(v["explainLineage"]["asOf"]["at"].is_string(), "{v:#}");
    let v = app
        .ok(
            "query($a: Int, $b: Int) { explainLineage(from: {containerId: $a}, to: {containerId: $b}) { asOf { at } } }",
            json!({"a": orders, "b": daily}),
        )
        .await;
    assert_eq!(v["explainLineage"]["asOf"], Value::Null);
}

async fn a_token_without_its_scheme_is_told_so(app: TestApp) {
    let token = app.token_for("someone", "ADMIN", None).await;
    let r = reqwest::Client::new()
        .get(format!("{}/admin/lineage/graph?root=x", app.url))
        .header("authorization", token.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    let detail = body["detail"].as_str().unwrap_or("");
    assert!(detail.contains("no scheme") && detail.contains("Bearer"), "{body}");
    let v: Value = reqwest::Client::new()
        .post(format!("{}/graphql", app.url))
        .header("authorization", token)
        .json(&json!({"query": "{ datastores { id } }"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["errors"][0]["extensions"]["code"], "UNAUTHENTICATED");
    assert!(v["errors"][0]["message"].as_str().unwrap_or("").contains("no scheme"), "{v}");
}
