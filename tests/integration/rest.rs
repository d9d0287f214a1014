//! The REST API beside GraphQL (issue 17): seed 000's `/api/lineage/...` routes and seed 004's
//! `/admin/lineage/...` routes answer what the GraphQL operations answer, field by field; the
//! seeds' curl examples work with data the test creates and answer the documented shapes; bad
//! input gets the seeds' statuses and changes nothing; and the OpenAPI document describes the
//! real answers.

use reqwest::Method;
use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    rest_and_graphql_agree_field_by_field,
    evidence_is_hidden_alike_without_viewer,
    seed_000_curl_examples_answer_the_documented_shapes,
    seed_004_routes_resolve_table_names,
    errors_have_the_seeds_statuses_and_change_nothing,
    openapi_describes_the_real_answers,
);

/// Who sends a REST request.
#[derive(Clone, Copy)]
enum As<'a> {
    Admin,
    Token(&'a str),
    Nobody,
}

async fn call(app: &TestApp, who: As<'_>, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("{}{path}", app.url);
    let mut req = match who {
        As::Admin => app.client().request(method, url),
        As::Token(t) => reqwest::Client::new().request(method, url).header("authorization", format!("Bearer {t}")),
        As::Nobody => reqwest::Client::new().request(method, url),
    };
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.expect("request sent");
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    (status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).expect("a JSON body") })
}

async fn get(app: &TestApp, path: &str) -> Value {
    let (status, body) = call(app, As::Admin, Method::GET, path, None).await;
    assert_eq!(status, 200, "GET {path}: {body:#}");
    body
}

fn snake(camel: &str) -> String {
    let mut out = String::new();
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Every field GraphQL answered, at its snake_case name in the REST answer, with the same value.
fn same(rest: &Value, gql: &Value, at: &str) {
    match gql {
        Value::Object(fields) => {
            assert!(rest.is_object(), "{at}: REST has {rest}, GraphQL an object {gql}");
            for (k, v) in fields {
                let key = snake(k);
                assert!(rest.get(&key).is_some(), "{at}: REST lacks {key} (GraphQL {k}): {rest:#}");
                if ["details", "value"].contains(&k.as_str()) {
                    // JSON values travel as they are stored, their keys unchanged.
                    assert_eq!(&rest[&key], v, "{at}.{key}: REST and GraphQL differ");
                } else {
                    same(&rest[&key], v, &format!("{at}.{key}"));
                }
            }
        }
        Value::Array(items) => {
            let r = rest.as_array().unwrap_or_else(|| panic!("{at}: REST has {rest}, GraphQL a list"));
            assert_eq!(r.len(), items.len(), "{at}: lengths differ: REST {rest:#} GraphQL {gql:#}");
            for (i, (r, g)) in r.iter().zip(items).enumerate() {
                same(r, g, &format!("{at}[{i}]"));
            }
        }
        other => assert_eq!(rest, other, "{at}: REST and GraphQL differ"),
    }
}

const CONTAINER: &str = "id name displayName containerType datastoreId datastoreName";
const FIELD: &str = "id name displayName type status containerId";
const EVIDENCE: &str = "provider evidenceType authorship sourceRelation observedAt firstObservedOperationId lastObservedOperationId details retiredAt";

fn edge_selection() -> String {
    format!(
        "id created sourceContainerId sourceFieldId targetContainerId targetFieldId sourceExternalFqn targetExternalFqn \
         description sourceType operation derived evidence {{ {EVIDENCE} }} lastAssertedAt retiredAt \
         sourceContainer {{ {CONTAINER} }} sourceField {{ {FIELD} }} targetContainer {{ {CONTAINER} }} targetField {{ {FIELD} }}"
    )
}

const GRAPH: &str = "nodes { nodeType id name displayName containerType tableType datastore { id name storeType type enrichmentOnly } fieldCount linkedFieldCount isTarget activeAnomalyCount purpose hasUpstream hasDownstream } \
    edges { id sourceContainerId sourceFieldId targetContainerId targetFieldId description sourceType operation evidence { provider evidenceType authorship sourceRelation observedAt firstObservedOperationId lastObservedOperationId } } \
    externalNodes { nodeType id fqn sourceType } \
    externalEdges { id sourceContainerId sourceFieldId targetContainerId targetFieldId sourceNodeId targetNodeId description sourceType operation evidence { provider evidenceType authorship sourceRelation observedAt firstObservedOperationId lastObservedOperationId } }";

const WAREHOUSE: &str = "postgres://warehouse.example.com:5432";

/// A small warehouse: `analytics.public.raw_orders -> orders -> orders_daily`, an OpenLineage
/// column edge with evidence, an external source, a manual column edge and a user description.
struct Shop {
    ds: i64,
    raw: i64,
    orders: i64,
    daily: i64,
    raw_fields: Vec<i64>,
    orders_fields: Vec<i64>,
    daily_fields: Vec<i64>,
}

async fn shop(app: &TestApp) -> Shop {
    let ds = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": "Production DB", "type": "postgresql", "storeType": "jdbc", "namespaces": [WAREHOUSE]}}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let mut ids = Vec::new();
    for (name, fields, description) in [
        ("raw_orders", vec!["amount", "email"], None),
        ("orders", vec!["order_total", "email"], Some("One row per order")),
        ("orders_daily", vec!["revenue"], None),
    ] {
        let fields: Vec<Value> = fields.iter().map(|f| json!({"name": f, "type": "string"})).collect();
        let c = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id } } } }",
                json!({"i": {"datastoreId": ds, "database": "analytics", "schema": "public", "name": name,
                             "fields": fields, "description": description}}),
            )
            .await;
        let c = &c["upsertContainer"];
        let f: Vec<i64> = c["fields"]["items"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
        ids.push((c["id"].as_i64().unwrap(), f));
    }
    let (raw, raw_fields) = ids[0].clone();
    let (orders, orders_fields) = ids[1].clone();
    let (daily, daily_fields) = ids[2].clone();
    let event = json!({
        "eventType": "COMPLETE",
        "eventTime": "2026-10-09T12:00:00Z",
        "producer": "https://github.com/your-org/lineage-exporter",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": { "runId": "3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90" },
        "job": { "namespace": "nightly", "name": "load_orders" },
        "inputs": [{ "namespace": WAREHOUSE, "name": "analytics.public.raw_orders" }],
        "outputs": [{ "namespace": WAREHOUSE, "name": "analytics.public.orders", "facets": { "columnLineage": {
            "_producer": "https://github.com/your-org/lineage-exporter",
            "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
            "fields": { "order_total": { "inputFields": [{ "namespace": WAREHOUSE, "name": "analytics.public.raw_orders",
                "field": "amount", "transformations": [{ "type": "DIRECT", "subtype": "AGGREGATION" }] }] } } } } }]
    });
    let (status, report) = call(app, As::Admin, Method::POST, "/api/v1/lineage", Some(event)).await;
    assert_eq!((status, &report["applied"]), (201, &json!(1)), "{report:#}");
    // A manual column edge, which brings the container edge orders -> orders_daily with it.
    app.field_edge(orders_fields[0], daily_fields[0]).await;
    // An external source feeding raw_orders.
    app.ok(
        "mutation { recordLineage(target: \"analytics.public.raw_orders\", sources: [\"SALES.PUBLIC.ORDERS_STAGING\"], operation: \"INSERT\") { status } }",
        json!({}),
    )
    .await;
    Shop { ds, raw, orders, daily, raw_fields, orders_fields, daily_fields }
}

async fn all_edge_ids(app: &TestApp) -> Vec<i64> {
    let v = app.ok("{ edges(includeRetired: true, size: 1000) { items { id } } }", json!({})).await;
    v["edges"]["items"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect()
}

async fn rest_and_graphql_agree_field_by_field(app: TestApp) {
    let s = shop(&app).await;
    let edge = edge_selection();
    // Every edge, one by one.
    for id in all_edge_ids(&app).await {
        let g = app.ok(&format!("query($id: Int!) {{ edge(id: $id) {{ {edge} }} }}"), json!({"id": id})).await;
        same(&get(&app, &format!("/api/lineage/edges/{id}")).await, &g["edge"], &format!("edge {id}"));
    }
    // Lists, with every filter.
    for (params, args) in [
        ("", "".to_string()),
        (&*format!("?container_id={}", s.orders), format!("containerId: {}", s.orders)),
        (
            &*format!("?field_id={}&include_retired=true", s.orders_fields[0]),
            format!("fieldId: {}, includeRetired: true", s.orders_fields[0]),
        ),
        ("?source_type=openlineage&page=1&size=1", "sourceType: \"openlineage\", page: 1, size: 1".to_string()),
        ("?page=2&size=2", "page: 2, size: 2".to_string()),
    ] {
        let args = if args.is_empty() { String::new() } else { format!("({args})") };
        let g = app.ok(&format!("{{ edges{args} {{ items {{ {edge} }} total page size pages }} }}"), json!({})).await;
        same(&get(&app, &format!("/api/lineage/edges{params}")).await, &g["edges"], &format!("edges{params}"));
    }
    // The graph, both ways and each way, at two depths.
    for centre in [s.raw, s.orders, s.daily] {
        for (side_q, side_g) in
            [("", ""), ("&side=upstream", ", side: UPSTREAM"), ("&side=downstream", ", side: DOWNSTREAM")]
        {
            for depth in [1, 2] {
                let g = app
                    .ok(
                        &format!("{{ lineageGraph(containerId: {centre}, depth: {depth}{side_g}) {{ {GRAPH} }} }}"),
                        json!({}),
                    )
                    .await;
                let path = format!("/api/lineage/graph?container_id={centre}&depth={depth}{side_q}");
                same(&get(&app, &path).await, &g["lineageGraph"], &path);
            }
        }
    }
    // Default depth.
    let g = app.ok(&format!("{{ lineageGraph(containerId: {}) {{ {GRAPH} }} }}", s.orders), json!({})).await;
    same(&get(&app, &format!("/api/lineage/graph?container_id={}", s.orders)).await, &g["lineageGraph"], "graph");
    // Fields, with a name filter and paging.
    for (params, args) in [
        ("", "".to_string()),
        ("?name=EMA", "name: \"EMA\"".to_string()),
        ("?page=2&size=1", "page: 2, size: 1".to_string()),
    ] {
        let args = if args.is_empty() { String::new() } else { format!(", {args}") };
        let g = app
            .ok(
                &format!("{{ containerFields(containerId: {}{args}) {{ items {{ id name displayName status latestProfileId type isComputedField activeAnomalyCount hasLineage }} total page size pages }} }}", s.orders),
                json!({}),
            )
            .await;
        let path = format!("/api/lineage/containers/{}/fields{params}", s.orders);
        same(&get(&app, &path).await, &g["containerFields"], &path);
    }
    // Field connections, all and kept to containers.
    for (params, args) in [
        ("".to_string(), "".to_string()),
        (format!("?container_ids={}", s.daily), format!(", containerIds: [{}]", s.daily)),
        (
            format!("?container_ids={}&container_ids={}", s.raw, s.daily),
            format!(", containerIds: [{}, {}]", s.raw, s.daily),
        ),
    ] {
        let g = app
            .ok(
                &format!("{{ fieldConnections(fieldId: {}{args}) {{ fields {{ id name displayName status latestProfileId type containerId }} edges {{ id sourceContainerId sourceFieldId targetContainerId targetFieldId description sourceType operation derived }} }} }}", s.orders_fields[0]),
                json!({}),
            )
            .await;
        let path = format!("/api/lineage/fields/{}/connections{params}", s.orders_fields[0]);
        same(&get(&app, &path).await, &g["fieldConnections"], &path);
    }
    // Metadata sources.
    let g = app
        .ok(
            &format!("{{ metadataAssertions(containerId: {}) {{ containerId fieldId attribute source provider value assertedAt observedAt details effective }} }}", s.orders),
            json!({}),
        )
        .await;
    assert!(!g["metadataAssertions"].as_array().unwrap().is_empty());
    same(
        &get(&app, &format!("/api/containers/{}/metadata-assertions", s.orders)).await,
        &g["metadataAssertions"],
        "metadata",
    );
    // Impact and PII flow by name, against the GraphQL queries by id.
    let g = app.ok(&format!("{{ impact(containerId: {}) {{ isPartial containers {{ container {{ id name }} distance via {{ id operation }} }} }} }}", s.raw), json!({})).await;
    let r = get(&app, "/admin/lineage/impact?table=analytics.public.raw_orders").await;
    assert_eq!(r["is_partial"], g["impact"]["isPartial"]);
    let reached: Vec<Value> = g["impact"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!({"id": c["container"]["id"], "name": c["container"]["name"], "distance": c["distance"], "via_edge_id": c["via"]["id"], "via_operation": c["via"]["operation"]}))
        .collect();
    assert_eq!(reached.len(), 2);
    let rest_reached: Vec<Value> = r["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!({"id": t["id"], "name": t["name"], "distance": t["distance"], "via_edge_id": t["via_edge_id"], "via_operation": t["via_operation"]}))
        .collect();
    assert_eq!(rest_reached, reached);
    let g = app
        .ok(&format!("{{ piiFlow(fieldId: {}) {{ isPartial fields {{ field {{ id name containerId }} distance derived via {{ id }} }} }} }}", s.raw_fields[0]), json!({}))
        .await;
    let r = get(&app, "/admin/lineage/pii-flow?table=raw_orders&column=AMOUNT").await;
    assert_eq!(r["is_partial"], g["piiFlow"]["isPartial"]);
    let flow: Vec<Value> = g["piiFlow"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            json!([
                f["field"]["id"],
                f["field"]["name"],
                f["field"]["containerId"],
                f["distance"],
                f["derived"],
                f["via"]["id"]
            ])
        })
        .collect();
    assert_eq!(flow.len(), 2, "{g:#}");
    let rest_flow: Vec<Value> = r["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| json!([f["field_id"], f["column"], f["table_id"], f["distance"], f["derived"], f["via_edge_id"]]))
        .collect();
    assert_eq!(rest_flow, flow);
    // The admin graph is lineageGraph around the resolved table.
    let g = app
        .ok(&format!("{{ lineageGraph(containerId: {}, depth: 3, side: UPSTREAM) {{ {GRAPH} }} }}", s.daily), json!({}))
        .await;
    same(
        &get(&app, "/admin/lineage/graph?root=analytics.public.orders_daily&depth=3&direction=up").await,
        &g["lineageGraph"],
        "admin graph",
    );
    // Writes: what REST creates and updates reads back the same through GraphQL.
    let (status, created) = call(
        &app,
        As::Admin,
        Method::POST,
        "/api/lineage/edges",
        Some(json!({"source_field_id": s.raw_fields[1], "target_field_id": s.orders_fields[1], "description": "lower(email)"})),
    )
    .await;
    assert_eq!(status, 201, "{created:#}");
    let id = created["id"].as_i64().unwrap();
    let g = app.ok(&format!("query($id: Int!) {{ edge(id: $id) {{ {edge} }} }}"), json!({"id": id})).await;
    same(&created, &g["edge"], "created");
    let (status, updated) = call(
        &app,
        As::Admin,
        Method::PUT,
        &format!("/api/lineage/edges/{id}"),
        Some(json!({"source_type": "inferred"})),
    )
    .await;
    assert_eq!(status, 200, "{updated:#}");
    assert_eq!(
        (updated["source_type"].as_str(), updated["description"].as_str()),
        (Some("inferred"), Some("lower(email)"))
    );
    let g = app.ok(&format!("query($id: Int!) {{ edge(id: $id) {{ {edge} }} }}"), json!({"id": id})).await;
    same(&updated, &g["edge"], "updated");
    let (status, cleared) =
        call(&app, As::Admin, Method::PUT, &format!("/api/lineage/edges/{id}"), Some(json!({"description": null})))
            .await;
    assert_eq!((status, &cleared["description"], &cleared["source_type"]), (200, &Value::Null, &json!("inferred")));
    // The columns of a table are the field edges into it.
    let r = get(&app, "/admin/lineage/columns?table=analytics.public.orders").await;
    let mut cols: Vec<(String, String, Option<bool>, String)> = r["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["column"].as_str().unwrap().to_string(),
                format!("{}.{}", c["source_table"].as_str().unwrap(), c["source_column"].as_str().unwrap()),
                c["derived"].as_bool(),
                c["source_type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    cols.sort();
    assert_eq!(
        cols,
        vec![
            // Created without `derived`: not said, so null (as GraphQL's `derived`), never false.
            ("email".into(), "analytics.public.raw_orders.email".into(), None, "inferred".into()),
            ("order_total".into(), "analytics.public.raw_orders.amount".into(), Some(true), "openlineage".into()),
        ],
        "{r:#}"
    );
    assert_eq!(r["table"]["id"], s.orders);
    assert_eq!(s.ds, r["table"]["datastore_id"].as_i64().unwrap());
}

async fn evidence_is_hidden_alike_without_viewer(app: TestApp) {
    let s = shop(&app).await;
    let member = app.token_for("reader", "MEMBER", None).await;
    let edge = edge_selection();
    let ol = app.ok("{ edges(sourceType: \"openlineage\") { items { id } } }", json!({})).await;
    let ids: Vec<i64> = ol["edges"]["items"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(!ids.is_empty());
    for id in ids {
        let g = app.gql_as(Some(&member), &format!("{{ edge(id: {id}) {{ {edge} }} }}"), json!({})).await;
        let (status, r) = call(&app, As::Token(&member), Method::GET, &format!("/api/lineage/edges/{id}"), None).await;
        assert_eq!(status, 200);
        same(&r, &g["data"]["edge"], "edge as member");
        let ev = &r["evidence"][0];
        assert_eq!((&ev["details"], &ev["source_relation"]), (&Value::Null, &json!("")), "{r:#}");
        // An admin sees them.
        let admin = get(&app, &format!("/api/lineage/edges/{id}")).await;
        assert!(admin["evidence"][0]["details"].is_object(), "{admin:#}");
    }
    let g = app
        .gql_as(Some(&member), &format!("{{ lineageGraph(containerId: {}) {{ {GRAPH} }} }}", s.orders), json!({}))
        .await;
    let (status, r) =
        call(&app, As::Token(&member), Method::GET, &format!("/api/lineage/graph?container_id={}", s.orders), None)
            .await;
    assert_eq!(status, 200);
    same(&r, &g["data"]["lineageGraph"], "graph as member");
    // VIEWER on the datastore shows them.
    app.ok(
        "mutation($i: TeamInput!) { upsertTeam(input: $i) { name } }",
        json!({"i": {"name": "readers", "members": ["reader"], "permissions": [{"datastoreId": s.ds, "permission": "VIEWER"}]}}),
    )
    .await;
    let (_, r) = call(&app, As::Token(&member), Method::GET, "/api/lineage/edges?source_type=openlineage", None).await;
    let g = app
        .gql_as(
            Some(&member),
            &format!("{{ edges(sourceType: \"openlineage\") {{ items {{ {edge} }} total page size pages }} }}"),
            json!({}),
        )
        .await;
    same(&r, &g["data"]["edges"], "edges as viewer");
    assert!(r["items"][0]["evidence"][0]["details"].is_object(), "{r:#}");
    assert_eq!(s.daily_fields.len(), 1);
}

/// Every key the seed shows is in the answer (more are welcome), recursively; lists are
/// compared by their first item.
fn has_shape(answer: &Value, documented: &Value, at: &str) {
    match documented {
        Value::Object(fields) => {
            let Some(obj) = answer.as_object() else {
                if answer.is_null() {
                    return;
                }
                panic!("{at}: expected an object like {documented}, got {answer}");
            };
            for (k, v) in fields {
                assert!(obj.contains_key(k), "{at}: the answer lacks {k}: {answer:#}");
                has_shape(&obj[k], v, &format!("{at}.{k}"));
            }
        }
        Value::Array(items) => {
            let a = answer.as_array().unwrap_or_else(|| panic!("{at}: expected a list, got {answer}"));
            if let (Some(doc), Some(first)) = (items.first(), a.first()) {
                has_shape(first, doc, &format!("{at}[0]"));
            }
        }
        _ => {}
    }
}

fn seed_edge() -> Value {
    json!({
        "id": 1, "created": "2026-05-01T10:00:00.000000Z", "source_container_id": 42, "source_field_id": null,
        "target_container_id": 55, "target_field_id": null, "source_external_fqn": null, "target_external_fqn": null,
        "description": null, "source_type": "manual", "evidence": [],
        "source_container": {"id": 42, "name": "raw_orders", "display_name": null, "container_type": "table", "datastore_id": 10, "datastore_name": "Production DB"},
        "source_field": null,
        "target_container": {"id": 55, "name": "orders_clean", "display_name": null, "container_type": "computed_table", "datastore_id": 10, "datastore_name": "Production DB"},
        "target_field": null
    })
}

async fn seed_000_curl_examples_answer_the_documented_shapes(app: TestApp) {
    let ds = app.datastore("Production DB", "snowflake").await;
    let (raw, raw_f) = app.container(ds, "raw_orders", &["email", "order_id"]).await;
    let c = app
        .ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields { items { id name } } } }",
            json!({"i": {"datastoreId": ds, "name": "orders_clean", "containerType": "computed_table", "activeAnomalyCount": 2,
                         "description": "One row per order",
                         "fields": [{"name": "email_upper", "type": "string", "isComputedField": true, "latestProfileId": 301},
                                    {"name": "order_date", "type": "date", "latestProfileId": 302, "activeAnomalyCount": 1}]}}),
        )
        .await;
    let clean = c["upsertContainer"]["id"].as_i64().unwrap();
    let clean_f: Vec<i64> =
        c["upsertContainer"]["fields"]["items"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
    // Create an Edge: container-level, then field-level.
    let (status, e) = call(
        &app,
        As::Admin,
        Method::POST,
        "/api/lineage/edges",
        Some(json!({"source_container_id": raw, "target_container_id": clean, "source_type": "manual"})),
    )
    .await;
    assert_eq!(status, 201, "{e:#}");
    has_shape(&e, &seed_edge(), "create");
    assert_eq!(
        (
            &e["source_container"]["name"],
            &e["target_container"]["container_type"],
            &e["target_container"]["datastore_name"]
        ),
        (&json!("raw_orders"), &json!("computed_table"), &json!("Production DB"))
    );
    let edge_id = e["id"].as_i64().unwrap();
    let (status, f) = call(
        &app,
        As::Admin,
        Method::POST,
        "/api/lineage/edges",
        Some(json!({"source_field_id": raw_f[0], "target_field_id": clean_f[0], "source_type": "manual", "description": "UPPER(email)"})),
    )
    .await;
    assert_eq!(status, 201, "{f:#}");
    has_shape(&f, &seed_edge(), "create field edge");
    assert_eq!(
        (&f["source_field"]["id"], &f["target_field"]["id"], &f["source_container"]),
        (&json!(raw_f[0]), &json!(clean_f[0]), &Value::Null)
    );
    // List Edges.
    let list = get(&app, &format!("/api/lineage/edges?container_id={raw}")).await;
    has_shape(&list, &json!({"items": [seed_edge()], "total": 1, "page": 1, "size": 50, "pages": 1}), "list");
    assert_eq!(
        (&list["total"], &list["page"], &list["size"], &list["pages"]),
        (&json!(1), &json!(1), &json!(50), &json!(1))
    );
    // Get an Edge.
    let one = get(&app, &format!("/api/lineage/edges/{edge_id}")).await;
    has_shape(&one, &seed_edge(), "get");
    assert_eq!(one, e);
    // Update an Edge.
    let (status, u) = call(
        &app,
        As::Admin,
        Method::PUT,
        &format!("/api/lineage/edges/{edge_id}"),
        Some(json!({"description": "ETL pipeline v2", "source_type": "catalog_import"})),
    )
    .await;
    assert_eq!(status, 200);
    has_shape(&u, &seed_edge(), "update");
    assert_eq!((&u["description"], &u["source_type"]), (&json!("ETL pipeline v2"), &json!("catalog_import")));
    // Get the Lineage Graph, with an asset outside the catalog upstream.
    app.ok(
        "mutation { recordLineage(target: \"raw_orders\", sources: [\"SALES.PUBLIC.ORDERS_STAGING\"], operation: \"INSERT\") { status } }",
        json!({}),
    )
    .await;
    let g = get(&app, &format!("/api/lineage/graph?container_id={clean}&depth=2&side=upstream")).await;
    let documented = json!({
        "nodes": [{"node_type": "container", "id": 42, "name": "raw_orders", "display_name": null, "container_type": "table", "table_type": "table",
                   "datastore": {"id": 10, "name": "Production DB", "store_type": "jdbc", "type": "snowflake", "enrichment_only": false},
                   "field_count": 12, "linked_field_count": 3, "is_target": false, "active_anomaly_count": 0, "purpose": null,
                   "has_upstream": false, "has_downstream": false}],
        "edges": [{"id": 1, "source_container_id": 42, "source_field_id": null, "target_container_id": 55, "target_field_id": null,
                   "description": "Raw orders → cleaned orders", "source_type": "manual", "evidence": []}],
        "external_nodes": [{"node_type": "external", "id": "ext:snowflake:SALES.PUBLIC.ORDERS_STAGING", "fqn": "SALES.PUBLIC.ORDERS_STAGING", "source_type": "snowflake"}],
        "external_edges": [{"id": 2, "source_container_id": null, "source_field_id": null, "target_container_id": 42, "target_field_id": null,
                            "source_node_id": "ext:snowflake:SALES.PUBLIC.ORDERS_STAGING", "target_node_id": null, "description": null, "source_type": "snowflake",
                            "evidence": [{"provider": "snowflake", "evidence_type": "structured_query_history", "authorship": "provider",
                                          "source_relation": "SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY", "observed_at": "2026-09-18T02:14:00.000000Z",
                                          "first_observed_operation_id": 901, "last_observed_operation_id": 944}]}]
    });
    has_shape(&g, &documented, "graph");
    let target = g["nodes"].as_array().unwrap().iter().find(|n| n["is_target"] == true).unwrap();
    assert_eq!(
        (&target["id"], &target["active_anomaly_count"], &target["field_count"]),
        (&json!(clean), &json!(2), &json!(2))
    );
    assert_eq!(g["external_nodes"][0]["id"], json!("ext:external:SALES.PUBLIC.ORDERS_STAGING"), "{g:#}");
    assert_eq!(g["external_edges"][0]["target_container_id"], json!(raw));
    // List Container Fields.
    let fields = get(&app, &format!("/api/lineage/containers/{clean}/fields")).await;
    has_shape(
        &fields,
        &json!({"items": [{"id": 200, "name": "email_upper", "display_name": null, "status": "active", "latest_profile_id": 301,
                            "type": "string", "is_computed_field": true, "active_anomaly_count": 0, "has_lineage": true}],
                "total": 10, "page": 1, "size": 50, "pages": 1}),
        "fields",
    );
    assert_eq!(
        fields["items"][0],
        json!({"id": clean_f[0], "name": "email_upper", "display_name": null, "status": "active", "latest_profile_id": 301,
               "type": "string", "is_computed_field": true, "active_anomaly_count": 0, "has_lineage": true})
    );
    assert_eq!(
        (&fields["items"][1]["has_lineage"], &fields["items"][1]["active_anomaly_count"]),
        (&json!(false), &json!(1))
    );
    // Get Field Connections.
    let conn = get(&app, &format!("/api/lineage/fields/{}/connections", raw_f[0])).await;
    has_shape(
        &conn,
        &json!({"fields": [{"id": 200, "name": "email_upper", "display_name": null, "status": "active", "latest_profile_id": 301, "type": "string", "container_id": 55}],
                "edges": [{"id": 2, "source_container_id": null, "source_field_id": 100, "target_container_id": null, "target_field_id": 200, "description": "UPPER(email)", "source_type": "manual"}]}),
        "connections",
    );
    assert_eq!(
        (&conn["fields"][0]["id"], &conn["edges"][0]["description"]),
        (&json!(clean_f[0]), &json!("UPPER(email)"))
    );
    // List a Container's Metadata Sources.
    let (status, m) =
        call(&app, As::Admin, Method::GET, &format!("/api/containers/{clean}/metadata-assertions"), None).await;
    assert_eq!(status, 200);
    has_shape(
        &m,
        &json!([{"container_id": 55, "field_id": null, "attribute": "description", "source": "openlineage", "provider": "p",
                 "value": "One row per order", "asserted_at": "2026-10-09T12:00:00Z", "observed_at": "2026-10-09T12:00:04Z",
                 "details": {}, "effective": true}]),
        "metadata",
    );
    assert_eq!(
        (&m[0]["value"], &m[0]["effective"], &m[0]["container_id"]),
        (&json!("One row per order"), &json!(true), &json!(clean))
    );
    // Delete an Edge: 204 and no body; then it is gone.
    let (status, body) = call(&app, As::Admin, Method::DELETE, &format!("/api/lineage/edges/{edge_id}"), None).await;
    assert_eq!((status, body), (204, Value::Null));
    let (status, body) = call(&app, As::Admin, Method::GET, &format!("/api/lineage/edges/{edge_id}"), None).await;
    assert_eq!((status, body), (404, json!({"detail": format!("Lineage edge {edge_id} not found")})));
    // An external engine's edge is retired, not deleted: still there with include_retired.
    let ext = get(&app, "/api/lineage/edges?source_type=external").await;
    let ext_id = ext["items"][0]["id"].as_i64().unwrap();
    let (status, _) = call(&app, As::Admin, Method::DELETE, &format!("/api/lineage/edges/{ext_id}"), None).await;
    assert_eq!(status, 204);
    assert_eq!(get(&app, "/api/lineage/edges?source_type=external").await["total"], 0);
    let retired = get(&app, "/api/lineage/edges?source_type=external&include_retired=true").await;
    assert_eq!(retired["items"][0]["id"], ext_id);
    assert!(retired["items"][0]["retired_at"].is_string(), "{retired:#}");
}

async fn seed_004_routes_resolve_table_names(app: TestApp) {
    let pg = app.datastore("pg", "postgresql").await;
    let lake = app.datastore("lake", "iceberg").await;
    for (ds, db, schema, name, fields) in [
        (pg, "pg", "public", "users", vec!["id", "ssn", "email"]),
        (lake, "ice", "s", "users_clean", vec!["id", "ssn_masked", "ssn_copy"]),
        (lake, "ice", "s", "report", vec!["n"]),
    ] {
        let fields: Vec<Value> = fields.iter().map(|f| json!({"name": f})).collect();
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "database": db, "schema": schema, "name": name, "fields": fields}}),
        )
        .await;
    }
    // Lineage from SQL: a copy, a masked copy and a rollup.
    let r = app
        .ok(
            "mutation($s: [String!]!, $d: Int!) { ingestSql(statements: $s, dialect: \"trino\", datastoreId: $d) { recorded failed } }",
            json!({"d": lake, "s": [
                "CREATE TABLE ice.s.users_clean AS SELECT id, sha256(ssn) AS ssn_masked, ssn AS ssn_copy FROM pg.public.users",
                "INSERT INTO ice.s.report SELECT count(*) AS n FROM ice.s.users_clean"
            ]}),
        )
        .await;
    assert_eq!(r["ingestSql"]["failed"], 0, "{r:#}");
    // GET /admin/lineage/graph?root=<table>&depth=<n>&direction=<up|down|both>
    for direction in ["both", "down", "up"] {
        let g = get(&app, &format!("/admin/lineage/graph?root=pg.public.users&depth=2&direction={direction}")).await;
        has_shape(&g, &json!({"nodes": [{"id": 1, "name": "x"}], "edges": []}), "admin graph");
        let names: Vec<&str> =
            g["nodes"].as_array().unwrap().iter().map(|n| n["qualified_name"].as_str().unwrap()).collect();
        match direction {
            "up" => assert_eq!(names, vec!["pg.public.users"]),
            _ => {
                assert_eq!(names.len(), 3, "{g:#}");
                assert!(g["edges"].as_array().unwrap().iter().any(|e| e["operation"] == "CTAS"), "{g:#}");
            }
        }
        assert_eq!(g["root"]["qualified_name"], "pg.public.users");
    }
    // GET /admin/lineage/columns?table=<table>
    let c = get(&app, "/admin/lineage/columns?table=ice.s.users_clean").await;
    let mut cols: Vec<String> = c["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} <- {}.{}{}",
                c["column"].as_str().unwrap(),
                c["source_table"].as_str().unwrap(),
                c["source_column"].as_str().unwrap(),
                if c["derived"] == true { " [derived]" } else { "" }
            )
        })
        .collect();
    cols.sort();
    assert_eq!(
        cols,
        vec![
            "id <- pg.public.users.id",
            "ssn_copy <- pg.public.users.ssn",
            "ssn_masked <- pg.public.users.ssn [derived]"
        ],
        "{c:#}"
    );
    // GET /admin/lineage/impact?table=<table>: transitive downstream tables.
    let i = get(&app, "/admin/lineage/impact?table=PG.PUBLIC.USERS").await;
    let reached: Vec<(&str, i64)> = i["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["qualified_name"].as_str().unwrap(), t["distance"].as_i64().unwrap()))
        .collect();
    assert_eq!(reached, vec![("ice.s.users_clean", 1), ("ice.s.report", 2)], "{i:#}");
    assert_eq!(i["is_partial"], false);
    let cut = get(&app, "/admin/lineage/impact?table=users&depth=1").await;
    assert_eq!((cut["tables"].as_array().unwrap().len(), &cut["is_partial"]), (1, &json!(true)));
    let up = get(&app, "/admin/lineage/impact?table=report&direction=up").await;
    assert_eq!(up["tables"].as_array().unwrap().len(), 2, "{up:#}");
    // GET /admin/lineage/pii-flow?table=pg.public.users&column=ssn
    let p = get(&app, "/admin/lineage/pii-flow?table=pg.public.users&column=ssn").await;
    let mut flow: Vec<String> = p["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}.{} {}", c["table"].as_str().unwrap(), c["column"].as_str().unwrap(), c["derived"]))
        .collect();
    flow.sort();
    assert!(flow.contains(&"ice.s.users_clean.ssn_copy false".to_string()), "{p:#}");
    assert_eq!(p["column"]["name"], "ssn");
    assert_eq!(p["table"]["datastore_name"], "pg");
}

async fn errors_have_the_seeds_statuses_and_change_nothing(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, fa) = app.container(ds, "a", &["x"]).await;
    let (b, fb) = app.container(ds, "b", &["x"]).await;
    let e = app.edge(a, b).await;
    app.ok("mutation { recordLineage(target: \"b\", sources: [\"a\"], operation: \"INSERT\") { status } }", json!({}))
        .await;
    let before = all_edge_ids(&app).await;
    let ext = app.ok("{ edges(sourceType: \"external\") { items { id } } }", json!({})).await["edges"]["items"][0]
        ["id"]
        .as_i64()
        .unwrap();
    let member = app.token_for("member", "MEMBER", None).await;
    let post = |who, body: Value| {
        let app = &app;
        async move { call(app, who, Method::POST, "/api/lineage/edges", Some(body)).await }
    };
    // 401: no token, a bad token; before anything else is read.
    for (method, path) in [
        (Method::GET, "/api/lineage/edges".to_string()),
        (Method::POST, "/api/lineage/edges".to_string()),
        (Method::GET, format!("/api/lineage/edges/{e}")),
        (Method::PUT, format!("/api/lineage/edges/{e}")),
        (Method::DELETE, format!("/api/lineage/edges/{e}")),
        (Method::GET, format!("/api/lineage/graph?container_id={a}")),
        (Method::GET, format!("/api/lineage/containers/{a}/fields")),
        (Method::GET, format!("/api/lineage/fields/{}/connections", fa[0])),
        (Method::GET, format!("/api/containers/{a}/metadata-assertions")),
        (Method::GET, "/admin/lineage/graph?root=a".to_string()),
        (Method::GET, "/admin/lineage/columns?table=a".to_string()),
        (Method::GET, "/admin/lineage/impact?table=a".to_string()),
        (Method::GET, "/admin/lineage/pii-flow?table=a&column=x".to_string()),
    ] {
        let (status, body) = call(&app, As::Nobody, method.clone(), &path, Some(json!({}))).await;
        assert_eq!(status, 401, "{method} {path}: {body}");
        assert!(body["detail"].as_str().unwrap().contains("missing API token"), "{body}");
        let (status, _) = call(&app, As::Token("trb_nope"), method.clone(), &path, None).await;
        assert_eq!(status, 401, "{method} {path}");
    }
    // 403: a member without EDITOR; without REPORTER.
    let (status, body) = post(As::Token(&member), json!({"source_container_id": b, "target_container_id": a})).await;
    assert_eq!(
        (status, body["detail"].as_str().unwrap()),
        (403, &*format!("createEdge needs the EDITOR permission on datastore {ds}"))
    );
    let (status, _) = call(
        &app,
        As::Token(&member),
        Method::PUT,
        &format!("/api/lineage/edges/{e}"),
        Some(json!({"description": "x"})),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = call(&app, As::Token(&member), Method::DELETE, &format!("/api/lineage/edges/{e}"), None).await;
    assert_eq!(status, 403);
    let (status, _) =
        call(&app, As::Token(&member), Method::GET, &format!("/api/containers/{a}/metadata-assertions"), None).await;
    assert_eq!(status, 403);
    // Reads need only a token.
    let (status, _) =
        call(&app, As::Token(&member), Method::GET, &format!("/api/lineage/graph?container_id={a}"), None).await;
    assert_eq!(status, 200);
    // 404.
    for (method, path, detail) in [
        (Method::GET, "/api/lineage/edges/999999".to_string(), "Lineage edge 999999 not found"),
        (Method::PUT, "/api/lineage/edges/999999".to_string(), "Lineage edge 999999 not found"),
        (Method::DELETE, "/api/lineage/edges/999999".to_string(), "Lineage edge 999999 not found"),
        (Method::GET, "/api/lineage/graph?container_id=999999".to_string(), "Container 999999 not found"),
        (Method::GET, "/api/lineage/containers/999999/fields".to_string(), "Container 999999 not found"),
        (Method::GET, "/api/lineage/fields/999999/connections".to_string(), "Field 999999 not found"),
        (Method::GET, "/api/containers/999999/metadata-assertions".to_string(), "Container 999999 not found"),
        (Method::GET, "/admin/lineage/impact?table=nowhere.nothing".to_string(), "Table \"nowhere.nothing\" not found"),
        (Method::GET, "/admin/lineage/graph?root=nothing".to_string(), "Table \"nothing\" not found"),
        (
            Method::GET,
            "/admin/lineage/pii-flow?table=a&column=nope".to_string(),
            "Column \"nope\" not found in table \"a\"",
        ),
    ] {
        let body = if method == Method::PUT { Some(json!({"description": "x"})) } else { None };
        let (status, answer) = call(&app, As::Admin, method.clone(), &path, body).await;
        assert_eq!((status, answer), (404, json!({"detail": detail})), "{method} {path}");
    }
    let (status, body) = post(As::Admin, json!({"source_container_id": a, "target_container_id": 999999})).await;
    assert_eq!((status, body), (404, json!({"detail": "Container 999999 not found"})));
    // 409.
    let (status, body) = post(As::Admin, json!({"source_container_id": a, "target_container_id": b})).await;
    assert_eq!(
        (status, body),
        (409, json!({"detail": "A lineage edge with the same source and target already exists"}))
    );
    // 422, naming the parameter.
    let invalid =
        |body: &Value| (body["detail"][0]["loc"].clone(), body["detail"][0]["msg"].as_str().unwrap_or("").to_string());
    let (status, body) = post(As::Admin, json!({"source_container_id": a, "target_field_id": fb[0]})).await;
    assert_eq!(status, 422);
    assert_eq!(
        body["detail"][0],
        json!({"type": "value_error", "loc": ["body"], "msg": "Value error, source and target must be at the same granularity (both containers or both fields)"})
    );
    let (status, body) = post(As::Admin, json!({"target_container_id": b})).await;
    assert_eq!(status, 422);
    assert!(invalid(&body).1.contains("source_container_id or source_field_id"), "{body}");
    let (status, body) =
        post(As::Admin, json!({"source_container_id": b, "target_container_id": a, "source_type": "openlineage"}))
            .await;
    assert_eq!((status, invalid(&body).0), (422, json!(["body", "source_type"])), "{body}");
    let (status, body) = post(As::Admin, json!({"source_container_id": "one", "target_container_id": a})).await;
    assert_eq!((status, invalid(&body).0), (422, json!(["body", "source_container_id"])), "{body}");
    let (status, body) = post(As::Admin, json!({"source_containerid": b, "target_container_id": a})).await;
    assert_eq!((status, invalid(&body).0), (422, json!(["body", "source_containerid"])), "{body}");
    let (status, body) = call(
        &app,
        As::Admin,
        Method::PUT,
        &format!("/api/lineage/edges/{ext}"),
        Some(json!({"source_type": "manual"})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        invalid(&body),
        (
            json!(["body", "source_type"]),
            format!("The source_type of edge {ext} is maintained by its provider (external) and cannot be changed")
        )
    );
    for (path, loc, msg) in [
        (
            format!("/api/lineage/graph?container_id={a}&depth=0"),
            json!(["query", "depth"]),
            "depth must be between 1 and 20, got 0",
        ),
        (
            format!("/api/lineage/graph?container_id={a}&depth=21"),
            json!(["query", "depth"]),
            "depth must be between 1 and 20, got 21",
        ),
        (
            format!("/api/lineage/graph?container_id={a}&depth=two"),
            json!(["query", "depth"]),
            "query parameter depth must be an integer, got \"two\"",
        ),
        (
            format!("/api/lineage/graph?container_id={a}&side=sideways"),
            json!(["query", "side"]),
            "query parameter side must be one of upstream, downstream, got \"sideways\"",
        ),
        (
            "/api/lineage/graph".to_string(),
            json!(["query", "container_id"]),
            "query parameter container_id is required: an integer id",
        ),
        ("/api/lineage/edges?size=0".to_string(), json!(["query", "size"]), "size must be between 1 and 1000, got 0"),
        (
            "/api/lineage/edges?size=1001".to_string(),
            json!(["query", "size"]),
            "size must be between 1 and 1000, got 1001",
        ),
        ("/api/lineage/edges?page=0".to_string(), json!(["query", "page"]), "page must be 1 or more, got 0"),
        (
            "/api/lineage/edges?include_retired=maybe".to_string(),
            json!(["query", "include_retired"]),
            "query parameter include_retired must be true or false, got \"maybe\"",
        ),
        (
            "/api/lineage/edges/abc".to_string(),
            json!(["path", "id"]),
            "path parameter id must be an integer, got \"abc\"",
        ),
        (
            format!("/api/lineage/fields/{}/connections?container_ids=x", fa[0]),
            json!(["query", "container_ids"]),
            "query parameter container_ids must be integers, got \"x\"",
        ),
    ] {
        let (status, body) = call(&app, As::Admin, Method::GET, &path, None).await;
        assert_eq!(status, 422, "{path}: {body}");
        assert_eq!(invalid(&body), (loc, msg.to_string()), "{path}");
    }
    // 400: a body that is not JSON.
    let r = app.client().post(format!("{}/api/lineage/edges", app.url)).body("{not json").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().starts_with("the body is not valid JSON"), "{body}");
    // Seed 004's routes: 400 for any bad input, an ambiguous name with its candidates.
    let other = app.datastore("other", "postgresql").await;
    app.container(other, "a", &["x"]).await;
    let (status, body) = call(&app, As::Admin, Method::GET, "/admin/lineage/impact?table=a", None).await;
    assert_eq!(status, 400, "{body}");
    let detail = body["detail"].as_str().unwrap();
    // Each candidate as `<datastore>:<name>`, ready to pass back.
    assert!(detail.starts_with("table \"a\" is ambiguous: it matches wh:a (container"), "{detail}");
    assert!(detail.contains("other:a (container"), "{detail}");
    for (path, detail) in [
        ("/admin/lineage/graph?root=b&depth=0", "depth must be between 1 and 20, got 0"),
        (
            "/admin/lineage/graph?root=b&direction=sideways",
            "query parameter direction must be one of up, down, both, upstream, downstream, got \"sideways\"",
        ),
        (
            "/admin/lineage/graph",
            "query parameter root is required: a table name such as database.schema.table, \
             datastore:database.schema.table, an OpenLineage namespace/name, or the id (or container_id=)",
        ),
        (
            "/admin/lineage/columns?table=",
            "query parameter table is required: a table name such as database.schema.table, \
             datastore:database.schema.table, an OpenLineage namespace/name, or the id (or container_id=)",
        ),
        ("/admin/lineage/impact?table=b&limit=0", "limit must be between 1 and 100000, got 0"),
        (
            "/admin/lineage/impact?table=b&direction=both",
            "query parameter direction must be up or down here (both is for the graph)",
        ),
        (
            "/admin/lineage/pii-flow?table=b",
            "query parameter column is required: a column name of the table (or field_id=)",
        ),
        (
            "/admin/lineage/pii-flow?table=b&column=x&include_indirect=perhaps",
            "query parameter include_indirect must be true or false, got \"perhaps\"",
        ),
    ] {
        let (status, body) = call(&app, As::Admin, Method::GET, path, None).await;
        assert_eq!((status, body), (400, json!({"detail": detail})), "{path}");
    }
    // Nothing refused changed anything.
    assert_eq!(all_edge_ids(&app).await, before);
    let g = app.ok(&format!("{{ edge(id: {e}) {{ description sourceType }} }}"), json!({})).await;
    assert_eq!(g["edge"], json!({"description": null, "sourceType": "manual"}));
}

/// Resolves `$ref`s and `oneOf [null, X]` to the object schema.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        return resolve(doc, &doc["components"]["schemas"][name]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = schema[key].as_array() {
            if let Some(o) = options.iter().find(|o| o["type"] != "null") {
                return resolve(doc, o);
            }
        }
    }
    schema
}

/// `resolve`, except that of several object options (an untagged `oneOf`: a Marquez graph node's
/// data is a dataset, a job or a field) the first that documents every key answered is taken.
fn resolve_for<'a>(doc: &'a Value, schema: &'a Value, answer: &Value) -> &'a Value {
    let schema = if schema["$ref"].is_string() { resolve_ref(doc, schema) } else { schema };
    if let (Some(options), Some(obj)) = (schema["oneOf"].as_array(), answer.as_object()) {
        let fits = |o: &&Value| {
            let o = resolve(doc, o);
            o["properties"].as_object().is_some_and(|p| obj.keys().all(|k| p.contains_key(k)))
        };
        if let Some(o) = options.iter().find(fits) {
            return resolve(doc, o);
        }
    }
    resolve(doc, schema)
}

fn resolve_ref<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => resolve_ref(doc, &doc["components"]["schemas"][r.trim_start_matches("#/components/schemas/")]),
        None => schema,
    }
}

/// The answer has exactly the properties its schema lists, recursively.
pub(crate) fn matches_schema(doc: &Value, schema: &Value, answer: &Value, at: &str) {
    let schema = resolve_for(doc, schema, answer);
    if answer.is_null() {
        return;
    }
    if let Some(props) = schema["properties"].as_object() {
        let obj = answer.as_object().unwrap_or_else(|| panic!("{at}: an object is documented, got {answer}"));
        // Every key answered is documented, and every required one is answered.
        for k in obj.keys() {
            assert!(props.contains_key(k), "{at}: {k} is answered but not documented");
        }
        for k in schema["required"].as_array().into_iter().flatten() {
            let k = k.as_str().unwrap();
            assert!(obj.contains_key(k), "{at}: {k} is required by the document but not answered: {answer}");
        }
        for (k, s) in props {
            matches_schema(doc, s, obj.get(k).unwrap_or(&Value::Null), &format!("{at}.{k}"));
        }
    } else if schema["items"].is_object() {
        for (i, item) in answer.as_array().unwrap_or_else(|| panic!("{at}: a list is documented")).iter().enumerate() {
            matches_schema(doc, &schema["items"], item, &format!("{at}[{i}]"));
        }
    }
}

pub(crate) fn response_schema<'a>(doc: &'a Value, path: &str, method: &str, status: &str) -> &'a Value {
    let s = &doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"];
    assert!(!s.is_null(), "{method} {path} {status} is not documented");
    s
}

async fn openapi_describes_the_real_answers(app: TestApp) {
    let s = shop(&app).await;
    let (status, doc) = call(&app, As::Nobody, Method::GET, "/openapi.json", None).await;
    assert_eq!(status, 200, "the document needs no token");
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc, serde_json::to_value(tributary::api::rest::openapi()).unwrap());
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    let edge = all_edge_ids(&app).await[0];
    for (path, documented) in [
        (format!("/api/lineage/edges/{edge}"), "/api/lineage/edges/{id}"),
        ("/api/lineage/edges?size=1000".to_string(), "/api/lineage/edges"),
        (format!("/api/lineage/graph?container_id={}", s.raw), "/api/lineage/graph"),
        (format!("/api/lineage/containers/{}/fields", s.orders), "/api/lineage/containers/{container_id}/fields"),
        (
            format!("/api/lineage/fields/{}/connections", s.orders_fields[0]),
            "/api/lineage/fields/{field_id}/connections",
        ),
        (format!("/api/containers/{}/metadata-assertions", s.orders), "/api/containers/{id}/metadata-assertions"),
        ("/admin/lineage/graph?root=orders".to_string(), "/admin/lineage/graph"),
        ("/admin/lineage/columns?table=orders".to_string(), "/admin/lineage/columns"),
        ("/admin/lineage/impact?table=raw_orders".to_string(), "/admin/lineage/impact"),
        ("/admin/lineage/pii-flow?table=raw_orders&column=amount".to_string(), "/admin/lineage/pii-flow"),
    ] {
        let answer = get(&app, &path).await;
        matches_schema(&doc, response_schema(&doc, documented, "get", "200"), &answer, &path);
    }
    // Errors, and the ingest routes' answers (their shapes are written down in `docs`).
    let (_, answer) = call(&app, As::Admin, Method::GET, "/api/lineage/edges/999999", None).await;
    matches_schema(&doc, response_schema(&doc, "/api/lineage/edges/{id}", "get", "404"), &answer, "404");
    let (_, answer) = call(&app, As::Admin, Method::GET, "/api/lineage/edges?size=0", None).await;
    matches_schema(&doc, response_schema(&doc, "/api/lineage/edges", "get", "422"), &answer, "422");
    let event = json!({"eventType": "COMPLETE", "eventTime": "2026-10-09T12:00:00Z", "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b91"}, "job": {"namespace": "n", "name": "j"},
        "inputs": [{"namespace": WAREHOUSE, "name": "analytics.public.orders"}],
        "outputs": [{"namespace": WAREHOUSE, "name": "analytics.public.orders_daily"}]});
    let (status, answer) = call(&app, As::Admin, Method::POST, "/api/v1/lineage", Some(event.clone())).await;
    assert_eq!(status, 201);
    matches_schema(&doc, response_schema(&doc, "/api/v1/lineage", "post", "201"), &answer, "ingest");
    let (status, answer) =
        call(&app, As::Admin, Method::POST, "/api/v1/lineage", Some(json!({"eventType": "COMPLETE"}))).await;
    assert_eq!(status, 422);
    matches_schema(&doc, response_schema(&doc, "/api/v1/lineage", "post", "422"), &answer, "ingest 422");
    let (status, answer) =
        call(&app, As::Admin, Method::POST, "/api/v1/openlineage/lineage/batch", Some(json!({"events": [event]})))
            .await;
    assert_eq!(status, 200, "{answer}");
    matches_schema(&doc, response_schema(&doc, "/api/v1/openlineage/lineage/batch", "post", "200"), &answer, "batch");
    let (status, answer) =
        call(&app, As::Admin, Method::POST, "/v1/api/lineage", Some(json!({"target": "orders_daily"}))).await;
    assert_eq!(status, 200);
    matches_schema(&doc, response_schema(&doc, "/v1/api/lineage", "post", "200"), &answer, "external");
    assert!(s.daily > 0);
}
