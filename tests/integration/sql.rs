//! SQL lineage through GraphQL: analyzeSql (recording nothing) and ingestSql (recording it as
//! the datastore's type, with seed 004's accumulation and column rules).

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(analyze_sql_explains_statements, ingest_sql_records_table_and_column_lineage);

const ANALYZE: &str = "query($s: [String!]!, $d: String!, $db: String, $sc: String, $ds: Int) {
  analyzeSql(statements: $s, dialect: $d, defaultDatabase: $db, defaultSchema: $sc, datastoreId: $ds) {
    index operation targets sources columns { target sources derived } errors unresolved maskedSql } }";

const CTAS: &str = "CREATE TABLE iceberg_catalog.demo.cust_orders AS
SELECT c.c_name, count(o.o_orderkey) AS order_count, sum(o.o_totalprice) AS total_spend
FROM tpch.tiny.customer c JOIN tpch.tiny.orders o ON c.c_custkey = o.o_custkey
WHERE o.o_comment <> 'secret value' GROUP BY c.c_name";

fn column<'a>(st: &'a Value, target: &str) -> &'a Value {
    st["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"] == target)
        .unwrap_or_else(|| panic!("{target} in {st}"))
}

async fn analyze_sql_explains_statements(app: TestApp) {
    let v = app
        .ok(ANALYZE, json!({"s": [CTAS, "SELEC broken FROM", "INSERT INTO t2 SELECT a FROM t1"], "d": "Trino"}))
        .await;
    let out = v["analyzeSql"].as_array().unwrap();
    assert_eq!(out.len(), 3);
    let st = &out[0];
    assert_eq!(st["operation"], "CTAS");
    assert_eq!(st["targets"], json!(["iceberg_catalog.demo.cust_orders"]));
    assert_eq!(st["sources"], json!(["tpch.tiny.customer", "tpch.tiny.orders"]));
    assert_eq!(
        column(st, "iceberg_catalog.demo.cust_orders.c_name"),
        &json!({"target": "iceberg_catalog.demo.cust_orders.c_name", "sources": ["tpch.tiny.customer.c_name"], "derived": false})
    );
    assert_eq!(column(st, "iceberg_catalog.demo.cust_orders.order_count")["derived"], true);
    assert_eq!(
        column(st, "iceberg_catalog.demo.cust_orders.total_spend")["sources"],
        json!(["tpch.tiny.orders.o_totalprice"])
    );
    assert!(!st["maskedSql"].as_str().unwrap().contains("secret value"), "literals are masked");
    assert_eq!(out[1]["operation"], "UNKNOWN");
    assert!(!out[1]["errors"].as_array().unwrap().is_empty(), "the parser's message is reported");
    assert_eq!(out[2]["operation"], "INSERT_INTO", "the rest go on");
    // Defaults qualify names, folded as the dialect folds unquoted names.
    let v = app
        .ok(
            ANALYZE,
            json!({"s": ["INSERT INTO Mart SELECT Id FROM Raw"], "d": "snowflake", "db": "DB", "sc": "PUBLIC"}),
        )
        .await;
    assert_eq!(v["analyzeSql"][0]["targets"], json!(["DB.PUBLIC.MART"]));
    assert_eq!(v["analyzeSql"][0]["sources"], json!(["DB.PUBLIC.RAW"]));
    let (code, _) = app.err(ANALYZE, json!({"s": ["SELECT 1"], "d": "cobol"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    // With a datastore, the catalog's fields expand SELECT *.
    let ds = app.datastore("pg", "postgresql").await;
    app.ok("mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, schema: \"public\", name: \"src\", fields: [{name: \"a\"}, {name: \"b\"}]}) { id } }", json!({"d": ds})).await;
    let star = "CREATE TABLE public.dst AS SELECT * FROM public.src";
    let without = app.ok(ANALYZE, json!({"s": [star], "d": "postgres"})).await;
    assert!(
        !without["analyzeSql"][0]["unresolved"].as_array().unwrap().is_empty(),
        "SELECT * over unknown columns is reported"
    );
    let with = app.ok(ANALYZE, json!({"s": [star], "d": "postgres", "ds": ds})).await;
    let targets: Vec<&str> =
        with["analyzeSql"][0]["columns"].as_array().unwrap().iter().map(|c| c["target"].as_str().unwrap()).collect();
    assert_eq!(targets, vec!["public.dst.a", "public.dst.b"]);
    let edges = app.ok("{ edges(includeRetired: true) { total } }", json!({})).await;
    assert_eq!(edges["edges"]["total"], 0, "analyzeSql records nothing");
}

async fn ingest_sql_records_table_and_column_lineage(app: TestApp) {
    let ds = app.datastore("trino", "trino").await;
    for (db, schema, name, fields) in [
        ("tpch", "tiny", "customer", vec!["c_name", "c_custkey"]),
        ("tpch", "tiny", "orders", vec!["o_orderkey", "o_totalprice", "o_custkey"]),
        ("iceberg_catalog", "demo", "cust_orders", vec!["c_name", "order_count", "total_spend"]),
        ("iceberg_catalog", "demo", "extra", vec!["c_name"]),
    ] {
        let f: Vec<Value> = fields.iter().map(|n| json!({"name": n})).collect();
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "database": db, "schema": schema, "name": name, "fields": f}}),
        )
        .await;
    }
    let q = "mutation($s: [String!]!, $ds: Int!) { ingestSql(statements: $s, dialect: \"trino\", datastoreId: $ds) { recorded failed unresolved statements { operation errors } } }";
    let r = app.ok(q, json!({"s": [CTAS, "not sql at all"], "ds": ds})).await["ingestSql"].clone();
    assert_eq!((r["recorded"].as_i64(), r["failed"].as_i64()), (Some(1), Some(1)));
    let edges = app
        .ok("{ edges { items { sourceType operation derived sourceContainer { name } targetContainer { name } sourceField { name } targetField { name } evidence { evidenceType authorship details } } } }", json!({}))
        .await["edges"]["items"]
        .as_array()
        .unwrap()
        .clone();
    let tables: Vec<&Value> = edges.iter().filter(|e| e["sourceField"].is_null()).collect();
    assert_eq!(tables.len(), 2);
    for t in &tables {
        assert_eq!(t["sourceType"], "trino");
        assert_eq!(t["operation"], "CTAS");
        assert_eq!(t["targetContainer"]["name"], "cust_orders");
        assert_eq!(t["evidence"][0]["evidenceType"], "parsed_query_history");
        assert_eq!(t["evidence"][0]["authorship"], "tributary");
        assert!(
            !t["evidence"][0]["details"]["sql"].as_str().unwrap().contains("secret value"),
            "no data values stored"
        );
    }
    let cols: Vec<(String, String, bool)> = edges
        .iter()
        .filter(|e| e["sourceField"].is_object())
        .map(|e| {
            (
                e["sourceField"]["name"].as_str().unwrap().into(),
                e["targetField"]["name"].as_str().unwrap().into(),
                e["derived"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(cols.contains(&("c_name".into(), "c_name".into(), false)), "{cols:?}");
    assert!(cols.contains(&("o_orderkey".into(), "order_count".into(), true)));
    assert!(cols.contains(&("o_totalprice".into(), "total_spend".into(), true)));
    // INSERT adds a source; a new CTAS replaces them all.
    app.ok(q, json!({"s": ["INSERT INTO iceberg_catalog.demo.cust_orders (c_name) SELECT c_name FROM iceberg_catalog.demo.extra"], "ds": ds})).await;
    let live = app
        .ok("{ edges { items { sourceField { name } sourceContainer { name } targetContainer { name } } } }", json!({}))
        .await;
    let sources: std::collections::BTreeSet<String> = live["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sourceField"].is_null())
        .map(|e| e["sourceContainer"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sources, ["customer", "extra", "orders"].iter().map(|s| s.to_string()).collect());
    app.ok(q, json!({"s": ["CREATE TABLE iceberg_catalog.demo.cust_orders AS SELECT c_name FROM iceberg_catalog.demo.extra"], "ds": ds})).await;
    let live = app.ok("{ edges { items { sourceField { name } sourceContainer { name } } } }", json!({})).await;
    let sources: Vec<&str> = live["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sourceField"].is_null())
        .map(|e| e["sourceContainer"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(sources, vec!["extra"], "CTAS defines the target afresh");
}
