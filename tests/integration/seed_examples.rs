//! Every request/response example of seed 000 from "Create an Edge" to "Get Field Connections",
//! and its error examples, reproduced through GraphQL with the seed's data and values. Ids and
//! timestamps, which the store assigns, are compared after mapping the seed's ids to ours.

use std::collections::HashMap;

use serde_json::{json, Map, Value};
use tributary::domain::{End, Evidence, NewEdge};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(seed_000_examples);

fn camel(key: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for ch in key.chars() {
        if ch == '_' {
            up = true;
        } else if up {
            out.extend(ch.to_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}

const ID_KEYS: [&str; 7] =
    ["id", "sourceContainerId", "targetContainerId", "sourceFieldId", "targetFieldId", "datastoreId", "containerId"];

/// The seed's snake_case JSON as our GraphQL answer: camelCase keys, seed ids mapped to ours.
fn from_seed(seed: &Value, ids: &HashMap<i64, i64>, edge_ids: &HashMap<i64, i64>) -> Value {
    match seed {
        Value::Object(m) => {
            let is_edge = m.contains_key("source_type") && m.contains_key("target_container_id");
            let mut out = Map::new();
            for (k, v) in m {
                let key = camel(k);
                let mapped = match (key.as_str(), v) {
                    ("id", Value::Number(n)) if is_edge => json!(edge_ids[&n.as_i64().unwrap()]),
                    (k, Value::Number(n)) if ID_KEYS.contains(&k) => json!(ids
                        .get(&n.as_i64().unwrap())
                        .copied()
                        .unwrap_or_else(|| panic!("no mapping for seed id {n}"))),
                    _ => from_seed(v, ids, edge_ids),
                };
                out.insert(key, mapped);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| from_seed(x, ids, edge_ids)).collect()),
        other => other.clone(),
    }
}

/// Replaces store-assigned timestamps by a marker after checking their format.
fn redact_times(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "created" {
                    let s = x.as_str().expect("created is a string");
                    assert!(
                        s.ends_with('Z') && s.len() == "2026-05-01T10:00:00.000000Z".len(),
                        "timestamp format: {s}"
                    );
                    *x = json!("<created>");
                } else {
                    redact_times(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_times),
        _ => {}
    }
}

const CONTAINER_SHAPE: &str = "{ id name displayName containerType datastoreId datastoreName }";

fn edge_shape() -> String {
    format!("id created sourceContainerId sourceFieldId targetContainerId targetFieldId sourceExternalFqn targetExternalFqn description sourceType evidence {{ provider }} sourceContainer {CONTAINER_SHAPE} sourceField {{ id }} targetContainer {CONTAINER_SHAPE} targetField {{ id }}")
}

async fn seed_000_examples(app: TestApp) {
    // The seed's catalog: datastore 10, containers 42 and 55, fields 100 and 200, 201.
    let ds = app
        .ok("mutation { upsertDatastore(input: {name: \"Production DB\", type: \"snowflake\", storeType: \"jdbc\"}) { id } }", json!({}))
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let mut raw_fields = vec![json!({"name": "email", "type": "string"})];
    raw_fields.extend((1..12).map(|i| json!({"name": format!("raw_col_{i}"), "type": "string"})));
    let raw = app
        .ok("mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields(size: 100) { items { id } } } }",
            json!({"i": {"datastoreId": ds, "name": "raw_orders", "containerType": "table", "tableType": "table", "fields": raw_fields}}))
        .await["upsertContainer"]
        .clone();
    let mut clean_fields = vec![
        json!({"name": "email_upper", "type": "string", "latestProfileId": 301, "isComputedField": true, "activeAnomalyCount": 0}),
        json!({"name": "order_date", "type": "date", "latestProfileId": 302, "isComputedField": false, "activeAnomalyCount": 1}),
    ];
    clean_fields.extend((2..10).map(|i| json!({"name": format!("clean_col_{i}"), "type": "string"})));
    let clean = app
        .ok("mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields(size: 100) { items { id } } } }",
            json!({"i": {"datastoreId": ds, "name": "orders_clean", "containerType": "computed_table", "activeAnomalyCount": 2, "fields": clean_fields}}))
        .await["upsertContainer"]
        .clone();
    let c42 = raw["id"].as_i64().unwrap();
    let c55 = clean["id"].as_i64().unwrap();
    let rf: Vec<i64> = raw["fields"]["items"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
    let cf: Vec<i64> = clean["fields"]["items"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
    let mut ids = HashMap::from([(10, ds), (42, c42), (55, c55), (100, rf[0]), (200, cf[0]), (201, cf[1])]);
    let mut edge_ids = HashMap::new();

    // ---- Create an Edge: container level ----
    let q = format!("mutation($i: CreateEdgeInput!) {{ createEdge(input: $i) {{ {} }} }}", edge_shape());
    let mut got = app
        .ok(&q, json!({"i": {"sourceContainerId": c42, "targetContainerId": c55, "sourceType": "manual"}}))
        .await["createEdge"]
        .clone();
    edge_ids.insert(1, got["id"].as_i64().unwrap());
    redact_times(&mut got);
    let seed = json!({
      "id": 1, "created": "<created>", "source_container_id": 42, "source_field_id": null, "target_container_id": 55, "target_field_id": null,
      "source_external_fqn": null, "target_external_fqn": null, "description": null, "source_type": "manual", "evidence": [],
      "source_container": { "id": 42, "name": "raw_orders", "display_name": null, "container_type": "table", "datastore_id": 10, "datastore_name": "Production DB" },
      "source_field": null,
      "target_container": { "id": 55, "name": "orders_clean", "display_name": null, "container_type": "computed_table", "datastore_id": 10, "datastore_name": "Production DB" },
      "target_field": null
    });
    assert_eq!(got, from_seed(&seed, &ids, &edge_ids), "Create an Edge (container-level)");

    // The list and get examples show the edge with its description.
    app.ok(
        "mutation($id: Int!) { updateEdge(id: $id, input: {description: \"Raw orders → cleaned orders\"}) { id } }",
        json!({"id": edge_ids[&1]}),
    )
    .await;

    // ---- List Edges (container_id=42) ----
    let lq = format!("query($c: Int) {{ edges(containerId: $c) {{ items {{ id created sourceContainerId sourceFieldId targetContainerId targetFieldId description sourceType sourceContainer {CONTAINER_SHAPE} sourceField {{ id }} targetContainer {CONTAINER_SHAPE} targetField {{ id }} }} total page size pages }} }}");
    let mut got = app.ok(&lq, json!({"c": c42})).await["edges"].clone();
    redact_times(&mut got);
    let seed = json!({
      "items": [{
          "id": 1, "created": "<created>", "source_container_id": 42, "source_field_id": null, "target_container_id": 55, "target_field_id": null,
          "description": "Raw orders → cleaned orders", "source_type": "manual",
          "source_container": { "id": 42, "name": "raw_orders", "display_name": null, "container_type": "table", "datastore_id": 10, "datastore_name": "Production DB" },
          "source_field": null,
          "target_container": { "id": 55, "name": "orders_clean", "display_name": null, "container_type": "computed_table", "datastore_id": 10, "datastore_name": "Production DB" },
          "target_field": null
      }],
      "total": 1, "page": 1, "size": 50, "pages": 1
    });
    assert_eq!(got, from_seed(&seed, &ids, &edge_ids), "List Edges");

    // ---- Get an Edge: same structure as create ----
    let gq = format!("query($id: Int!) {{ edge(id: $id) {{ {} }} }}", edge_shape());
    let got = app.ok(&gq, json!({"id": edge_ids[&1]})).await["edge"].clone();
    assert_eq!(got["description"], "Raw orders → cleaned orders");
    assert_eq!(got["sourceContainer"]["name"], "raw_orders");

    // ---- Create an Edge: field level (100 -> 200, UPPER(email)) ----
    let mut got = app
        .ok(&q, json!({"i": {"sourceFieldId": rf[0], "targetFieldId": cf[0], "sourceType": "manual", "description": "UPPER(email)"}}))
        .await["createEdge"]
        .clone();
    edge_ids.insert(2, got["id"].as_i64().unwrap());
    redact_times(&mut got);
    assert_eq!(got["sourceField"], json!({"id": rf[0]}));
    assert_eq!(got["targetField"], json!({"id": cf[0]}));
    assert_eq!(got["sourceContainer"], json!(null));
    assert_eq!(got["sourceContainerId"], json!(null));
    // The container edge existed already: no second one.
    let n = app.ok(&lq, json!({"c": c42})).await["edges"]["total"].clone();
    assert_eq!(n, 1);
    // Two more linked fields on each side, for the graph's linked_field_count of 3.
    app.field_edge(rf[1], cf[2]).await;
    app.field_edge(rf[2], cf[3]).await;

    // ---- Get the Lineage Graph (55, depth 2, upstream), with the external snowflake source ----
    let x = app
        .store
        .create_edges(
            vec![NewEdge {
                source: End::External { fqn: "SALES.PUBLIC.ORDERS_STAGING".into() },
                target: End::Container { id: c42 },
                description: None,
                source_type: "snowflake".into(),
                operation: None,
                derived: None,
                transformations: None,
                last_asserted_at: None,
            }],
            false,
            tributary::domain::now(),
        )
        .await
        .unwrap()[0]
        .id;
    edge_ids.insert(3, x);
    ids.insert(3, x);
    app.store
        .put_evidence(vec![Evidence {
            edge_id: x,
            key: "snowflake:access_history".into(),
            provider: "snowflake".into(),
            evidence_type: "structured_query_history".into(),
            authorship: "provider".into(),
            source_relation: Some("SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY".into()),
            observed_at: Some("2026-09-18T02:14:00Z".parse().unwrap()),
            first_observed_operation_id: Some(901),
            last_observed_operation_id: Some(944),
            details: None,
            retired_at: None,
        }])
        .await
        .unwrap();
    let graph_q = "query { lineageGraph(containerId: CENTRE, depth: 2, side: UPSTREAM) {
      nodes { nodeType id name displayName containerType tableType datastore { id name storeType type enrichmentOnly } fieldCount linkedFieldCount isTarget activeAnomalyCount purpose hasUpstream hasDownstream }
      edges { id sourceContainerId sourceFieldId targetContainerId targetFieldId description sourceType evidence { provider } }
      externalNodes { nodeType id fqn sourceType }
      externalEdges { id sourceContainerId sourceFieldId targetContainerId targetFieldId sourceNodeId targetNodeId description sourceType
        evidence { provider evidenceType authorship sourceRelation observedAt firstObservedOperationId lastObservedOperationId } } } }"
        .replace("CENTRE", &c55.to_string());
    let got = app.ok(&graph_q, json!({})).await["lineageGraph"].clone();
    let seed = json!({
      "nodes": [
        { "node_type": "container", "id": 42, "name": "raw_orders", "display_name": null, "container_type": "table", "table_type": "table",
          "datastore": { "id": 10, "name": "Production DB", "store_type": "jdbc", "type": "snowflake", "enrichment_only": false },
          "field_count": 12, "linked_field_count": 3, "is_target": false, "active_anomaly_count": 0, "purpose": null, "has_upstream": false, "has_downstream": false },
        { "node_type": "container", "id": 55, "name": "orders_clean", "display_name": null, "container_type": "computed_table", "table_type": null,
          "datastore": { "id": 10, "name": "Production DB", "store_type": "jdbc", "type": "snowflake", "enrichment_only": false },
          "field_count": 10, "linked_field_count": 3, "is_target": true, "active_anomaly_count": 2, "purpose": null, "has_upstream": false, "has_downstream": false }
      ],
      "edges": [
        { "id": 1, "source_container_id": 42, "source_field_id": null, "target_container_id": 55, "target_field_id": null,
          "description": "Raw orders → cleaned orders", "source_type": "manual", "evidence": [] }
      ],
      "external_nodes": [
        { "node_type": "external", "id": "ext:snowflake:SALES.PUBLIC.ORDERS_STAGING", "fqn": "SALES.PUBLIC.ORDERS_STAGING", "source_type": "snowflake" }
      ],
      "external_edges": [
        { "id": 3, "source_container_id": null, "source_field_id": null, "target_container_id": 42, "target_field_id": null,
          "source_node_id": "ext:snowflake:SALES.PUBLIC.ORDERS_STAGING", "target_node_id": null, "description": null, "source_type": "snowflake",
          "evidence": [
            { "provider": "snowflake", "evidence_type": "structured_query_history", "authorship": "provider",
              "source_relation": "SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY", "observed_at": "2026-09-18T02:14:00.000000Z",
              "first_observed_operation_id": 901, "last_observed_operation_id": 944 }
          ] }
      ]
    });
    assert_eq!(got, from_seed(&seed, &ids, &edge_ids), "Get the Lineage Graph");

    // ---- List Container Fields (55) ----
    let got = app
        .ok("query($c: Int!) { containerFields(containerId: $c) { items { id name displayName status latestProfileId type isComputedField activeAnomalyCount hasLineage } total page size pages } }", json!({"c": c55}))
        .await["containerFields"]
        .clone();
    let seed = json!({
      "items": [
        { "id": 200, "name": "email_upper", "display_name": null, "status": "active", "latest_profile_id": 301, "type": "string", "is_computed_field": true, "active_anomaly_count": 0, "has_lineage": true },
        { "id": 201, "name": "order_date", "display_name": null, "status": "active", "latest_profile_id": 302, "type": "date", "is_computed_field": false, "active_anomaly_count": 1, "has_lineage": false }
      ],
      "total": 10, "page": 1, "size": 50, "pages": 1
    });
    let mut expected = from_seed(&seed, &ids, &edge_ids);
    let mut trimmed = got.clone();
    trimmed["items"] = json!(got["items"].as_array().unwrap()[..2].to_vec());
    expected["items"] = expected["items"].clone();
    assert_eq!(trimmed, expected, "List Container Fields");

    // ---- Get Field Connections (100) ----
    let got = app
        .ok("query($f: Int!) { fieldConnections(fieldId: $f) { fields { id name displayName status latestProfileId type containerId } edges { id sourceContainerId sourceFieldId targetContainerId targetFieldId description sourceType } } }", json!({"f": rf[0]}))
        .await["fieldConnections"]
        .clone();
    let seed = json!({
      "fields": [ { "id": 200, "name": "email_upper", "display_name": null, "status": "active", "latest_profile_id": 301, "type": "string", "container_id": 55 } ],
      "edges": [ { "id": 2, "source_container_id": null, "source_field_id": 100, "target_container_id": null, "target_field_id": 200, "description": "UPPER(email)", "source_type": "manual" } ]
    });
    assert_eq!(got, from_seed(&seed, &ids, &edge_ids), "Get Field Connections");

    // ---- Update an Edge ----
    let got = app
        .ok("mutation($id: Int!) { updateEdge(id: $id, input: {description: \"ETL pipeline v2\", sourceType: \"catalog_import\"}) { id description sourceType sourceContainerId targetContainerId } }", json!({"id": edge_ids[&1]}))
        .await["updateEdge"]
        .clone();
    assert_eq!(
        got,
        json!({"id": edge_ids[&1], "description": "ETL pipeline v2", "sourceType": "catalog_import", "sourceContainerId": c42, "targetContainerId": c55})
    );

    // ---- Error Responses ----
    let (code, msg) = app.err("mutation { deleteEdge(id: 999) }", json!({})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Lineage edge 999 not found"));
    let (code, msg) = app
        .err("mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t, sourceType: \"catalog_import\"}) { id } }", json!({"s": c42, "t": c55}))
        .await;
    assert_eq!(
        (code.as_str(), msg.as_str()),
        ("CONFLICT", "A lineage edge with the same source and target already exists")
    );
    let (code, msg) = app
        .err(
            "mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetFieldId: $t}) { id } }",
            json!({"s": c42, "t": cf[0]}),
        )
        .await;
    assert_eq!(
        (code.as_str(), msg.as_str()),
        (
            "BAD_USER_INPUT",
            "Value error, source and target must be at the same granularity (both containers or both fields)"
        )
    );

    // ---- Delete an Edge ----
    let d = app.ok("mutation($id: Int!) { deleteEdge(id: $id) }", json!({"id": edge_ids[&1]})).await;
    assert_eq!(d["deleteEdge"], true);
    assert_eq!(app.ok(&gq, json!({"id": edge_ids[&1]})).await["edge"], json!(null));
}
