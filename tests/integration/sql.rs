//! SQL lineage through GraphQL: analyzeSql (recording nothing) and ingestSql (recording it as
//! the datastore's type, with seed 004's accumulation and column rules).

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    analyze_sql_explains_statements,
    ingest_sql_records_table_and_column_lineage,
    evidence_names_the_operations_that_first_and_last_observed_it,
    external_table_location_links_the_storage_path,
    procedure_edges_name_their_procedure,
    analyze_sql_expands_star_over_every_catalogued_column,
    a_failing_statement_keeps_the_statements_before_it
);

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
    // An INSERT without a column list writes the catalogued target's columns by position.
    app.ok("mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, schema: \"public\", name: \"tgt\", fields: [{name: \"x\"}, {name: \"y\"}]}) { id } }", json!({"d": ds})).await;
    let insert = "INSERT INTO public.tgt SELECT a, b + 1 FROM public.src";
    let with = app.ok(ANALYZE, json!({"s": [insert], "d": "postgres", "ds": ds})).await;
    assert_eq!(
        with["analyzeSql"][0]["columns"],
        json!([
            {"target": "public.tgt.x", "sources": ["public.src.a"], "derived": false},
            {"target": "public.tgt.y", "sources": ["public.src.b"], "derived": true}
        ])
    );
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

const INGEST: &str = "mutation($s: [String!]!, $d: String!, $ds: Int!) { ingestSql(statements: $s, dialect: $d, datastoreId: $ds) { operationId recorded failed unresolved } }";

const EDGES: &str = "{ edges { items { sourceType operation sourceExternalFqn sourceContainer { name } targetContainer { name } sourceField { name } targetField { name } evidence { evidenceType details firstObservedOperationId lastObservedOperationId } } } }";

async fn live_edges(app: &TestApp) -> Vec<Value> {
    app.ok(EDGES, json!({})).await["edges"]["items"].as_array().unwrap().clone()
}

async fn evidence_names_the_operations_that_first_and_last_observed_it(app: TestApp) {
    let ds = app.datastore("pg", "postgresql").await;
    app.container(ds, "src", &["a"]).await;
    app.container(ds, "dst", &["a"]).await;
    app.container(ds, "other", &["a"]).await;
    let insert = "INSERT INTO dst SELECT a FROM src";
    let first = app.ok(INGEST, json!({"s": [insert], "d": "postgres", "ds": ds})).await["ingestSql"].clone();
    let op1 = first["operationId"].as_i64().unwrap();
    let second = app.ok(INGEST, json!({"s": [insert], "d": "postgres", "ds": ds})).await["ingestSql"].clone();
    let op2 = second["operationId"].as_i64().unwrap();
    assert!(op2 > op1, "each call is a new operation: {op1} then {op2}");
    // A third call observes a new source only.
    let third = app.ok(INGEST, json!({"s": ["INSERT INTO dst SELECT a FROM other"], "d": "postgres", "ds": ds})).await
        ["ingestSql"]
        .clone();
    let op3 = third["operationId"].as_i64().unwrap();
    assert!(op3 > op2);
    let edges = live_edges(&app).await;
    let table = |source: &str| {
        edges
            .iter()
            .find(|e| e["sourceField"].is_null() && e["sourceContainer"]["name"] == source)
            .unwrap_or_else(|| panic!("an edge from {source} in {edges:?}"))
            .clone()
    };
    let ev = &table("src")["evidence"][0];
    assert_eq!(ev["firstObservedOperationId"], op1, "the first observer stays: {ev}");
    assert_eq!(ev["lastObservedOperationId"], op2, "the last observer moves: {ev}");
    let ev = &table("other")["evidence"][0];
    assert_eq!(
        (ev["firstObservedOperationId"].as_i64(), ev["lastObservedOperationId"].as_i64()),
        (Some(op3), Some(op3))
    );
    // Column evidence carries them too; the INSERT from `other` re-decided column dst.a, so
    // the one live column edge is its own.
    let cols: Vec<&Value> = edges.iter().filter(|e| e["sourceField"].is_object()).collect();
    assert_eq!(cols.len(), 1, "{cols:?}");
    assert_eq!(cols[0]["evidence"][0]["firstObservedOperationId"], op3);
    assert_eq!(cols[0]["evidence"][0]["lastObservedOperationId"], op3);
    // recordLineage is an operation too, numbered from the same counter.
    let r = app
        .ok(
            "mutation { recordLineage(target: \"dst\", sources: [\"src\"], operation: \"INSERT\") { status } }",
            json!({}),
        )
        .await;
    assert_eq!(r["recordLineage"]["status"], "ok");
    let ext = app
        .ok(
            "{ edges { items { sourceType evidence { firstObservedOperationId lastObservedOperationId } } } }",
            json!({}),
        )
        .await["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sourceType"] == "external")
        .unwrap()
        .clone();
    assert!(ext["evidence"][0]["firstObservedOperationId"].as_i64().unwrap() > op3, "{ext}");
}

async fn external_table_location_links_the_storage_path(app: TestApp) {
    let ds = app.datastore("lake", "hive").await;
    app.ok(
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        json!({"i": {"datastoreId": ds, "schema": "raw", "name": "logs", "fields": [{"name": "ts"}, {"name": "msg"}]}}),
    )
    .await;
    let ddl = "CREATE EXTERNAL TABLE raw.logs (ts STRING, msg STRING) STORED AS PARQUET LOCATION 's3://bucket/logs/'";
    let r = app.ok(INGEST, json!({"s": [ddl], "d": "hive", "ds": ds})).await["ingestSql"].clone();
    assert_eq!(r["recorded"], 1, "{r}");
    assert_eq!(r["unresolved"], json!(["s3://bucket/logs/"]), "the path is not catalogued: an external asset");
    let edges = live_edges(&app).await;
    assert_eq!(edges.len(), 1, "{edges:?}");
    assert_eq!(edges[0]["sourceExternalFqn"], "s3://bucket/logs/");
    assert_eq!(edges[0]["targetContainer"]["name"], "logs");
    assert_eq!(edges[0]["operation"], "CREATE_EXTERNAL_TABLE");
    assert_eq!(edges[0]["sourceType"], "hive");
    // The storage path as a container of a file datastore: the edge joins the two containers.
    let files = app.datastore("bucket", "s3").await;
    app.ok(
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        json!({"i": {"datastoreId": files, "name": "clicks", "containerType": "file"}}),
    )
    .await;
    app.ok(
        "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
        json!({"i": {"datastoreId": ds, "schema": "raw", "name": "clicks", "fields": [{"name": "url"}]}}),
    )
    .await;
    let ddl = "CREATE EXTERNAL TABLE raw.clicks (url STRING) LOCATION 's3://bucket/clicks'";
    let r = app.ok(INGEST, json!({"s": [ddl], "d": "hive", "ds": ds})).await["ingestSql"].clone();
    assert_eq!(r["unresolved"], json!([]), "{r}");
    let edges = live_edges(&app).await;
    let e = edges.iter().find(|e| e["targetContainer"]["name"] == "clicks").unwrap();
    assert_eq!(e["sourceContainer"]["name"], "clicks", "{e}");
}

async fn procedure_edges_name_their_procedure(app: TestApp) {
    let ds = app.datastore("pg", "postgresql").await;
    for (schema, name, fields) in [("shop", "orders", vec!["amount"]), ("mart", "daily", vec!["day", "total"])] {
        let f: Vec<Value> = fields.iter().map(|n| json!({"name": n})).collect();
        app.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "schema": schema, "name": name, "fields": f}}),
        )
        .await;
    }
    let proc = "CREATE OR REPLACE PROCEDURE etl.load_daily() LANGUAGE plpgsql AS $$ BEGIN DELETE FROM mart.daily WHERE day = current_date; INSERT INTO mart.daily (day, total) SELECT current_date, sum(amount) FROM shop.orders WHERE created_at >= current_date; END; $$";
    let r = app.ok(INGEST, json!({"s": [proc], "d": "postgres", "ds": ds})).await["ingestSql"].clone();
    assert_eq!(r["failed"], 0, "{r}");
    let edges = live_edges(&app).await;
    let table = edges.iter().find(|e| e["sourceField"].is_null()).unwrap_or_else(|| panic!("{edges:?}"));
    assert_eq!(table["sourceContainer"]["name"], "orders");
    assert_eq!(table["evidence"][0]["evidenceType"], "parsed_stored_code");
    assert_eq!(table["evidence"][0]["details"]["procedure"], "etl.load_daily");
    let column = edges.iter().find(|e| e["sourceField"]["name"] == "amount").unwrap_or_else(|| panic!("{edges:?}"));
    assert_eq!(column["targetField"]["name"], "total");
    assert_eq!(column["evidence"][0]["details"]["procedure"], "etl.load_daily");
}

/// `SELECT *` over a table of more columns than a page of fields (1,000) expands to all of them.
async fn analyze_sql_expands_star_over_every_catalogued_column(app: TestApp) {
    let ds = app.datastore("pg", "postgresql").await;
    let names: Vec<String> = (0..1_205).map(|i| format!("c{i:04}")).collect();
    let fields: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
    app.ok(
        "mutation($d: Int!, $f: [FieldInput!]) { upsertContainer(input: {datastoreId: $d, schema: \"public\", name: \"wide\", fields: $f}) { id } }",
        json!({"d": ds, "f": fields}),
    )
    .await;
    let star = "CREATE TABLE public.narrow AS SELECT * FROM public.wide";
    let v = app.ok(ANALYZE, json!({"s": [star], "d": "postgres", "ds": ds})).await;
    let targets: Vec<&str> =
        v["analyzeSql"][0]["columns"].as_array().unwrap().iter().map(|c| c["target"].as_str().unwrap()).collect();
    let expected: Vec<String> = names.iter().map(|n| format!("public.narrow.{n}")).collect();
    assert_eq!(targets, expected, "every catalogued column, in catalogue order");
}

/// A statement whose recording fails (here it writes a table of a datastore the caller may not
/// edit) stops the call with its error: the statements before it stay recorded, the ones after
/// it are not. (The embedded store records a call in one transaction: on the failure it rolls
/// it back and records it again statement by statement.)
async fn a_failing_statement_keeps_the_statements_before_it(app: TestApp) {
    let mine = app.datastore("mine", "postgresql").await;
    let theirs = app.datastore("theirs", "postgresql").await;
    for table in ["src", "dst", "late"] {
        app.container(mine, table, &["a"]).await;
    }
    app.container(theirs, "locked", &["a"]).await;
    let user = app.token_for("ed", "MEMBER", None).await;
    let team = json!({"i": {"name": "eds", "members": ["ed"], "permissions": [{"datastoreId": mine, "permission": "EDITOR"}]}});
    app.ok("mutation($i: TeamInput!) { upsertTeam(input: $i) { name } }", team).await;
    let statements = [
        "INSERT INTO dst SELECT a FROM src",
        "INSERT INTO locked SELECT a FROM src",
        "INSERT INTO late SELECT a FROM src",
    ];
    let v = app.gql_as(Some(&user), INGEST, json!({"s": statements, "d": "postgres", "ds": mine})).await;
    assert_eq!(v["errors"][0]["extensions"]["code"], "FORBIDDEN", "{v}");
    let edges = live_edges(&app).await;
    let targets: Vec<&str> = edges
        .iter()
        .filter(|e| e["sourceField"].is_null())
        .map(|e| e["targetContainer"]["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(targets, vec!["dst"], "{edges:#?}");
    let columns = edges.iter().filter(|e| !e["sourceField"].is_null()).count();
    assert_eq!(columns, 1, "the first statement's column edge is kept too: {edges:#?}");
}
