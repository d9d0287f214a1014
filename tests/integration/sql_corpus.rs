//! The SQL case corpus (`tests/fixtures/sql`) through the service's entry points on each store:
//! GraphQL `analyzeSql` and `ingestSql` must give every case the answer the corpus expects (the
//! library-level check is `ingest::sql::tests::corpus`; this one proves the API and the store do
//! not change it). Cases that need a catalog are covered at library level only.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(sql_corpus_through_analyze_and_ingest);

const FIELDS: &str = "index operation targets sources columns { target sources derived } errors";

struct Case {
    name: String,
    dialect: String,
    statements: Vec<String>,
    database: Option<String>,
    schema: Option<String>,
    expect: Vec<Value>,
}

fn cases() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sql");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut out = Vec::new();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "jsonl")) {
        let stem = f.file_stem().unwrap().to_str().unwrap().to_string();
        for line in std::fs::read_to_string(f).unwrap().lines().map(str::trim) {
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let v: Value = serde_json::from_str(line).unwrap();
            if v.get("catalog").is_some() {
                continue;
            }
            let statements = match (&v["sql"], &v["statements"]) {
                (Value::String(s), _) => vec![s.clone()],
                (_, Value::Array(a)) => a.iter().map(|s| s.as_str().unwrap().to_string()).collect(),
                _ => panic!("no sql in {line}"),
            };
            out.push(Case {
                name: format!("{stem}/{}", v["name"].as_str().unwrap()),
                dialect: v["dialect"].as_str().unwrap_or(&stem).to_string(),
                statements,
                database: v["default_database"].as_str().map(str::to_string),
                schema: v["default_schema"].as_str().map(str::to_string),
                expect: match &v["expect"] {
                    Value::Array(a) => a.clone(),
                    _ => vec![v.clone()],
                },
            });
        }
    }
    out
}

/// Differences between the expected entries and the API's answer.
fn diff(case: &Case, got: &Value) -> Option<String> {
    let got = got.as_array().unwrap();
    if got.len() != case.expect.len() {
        return Some(format!("{}: want {} entries, got {}", case.name, case.expect.len(), got.len()));
    }
    let sorted = |v: &Value| {
        let mut s: Vec<String> = v.as_array().into_iter().flatten().map(|x| x.as_str().unwrap().to_string()).collect();
        s.sort();
        s
    };
    let cols = |v: &Value| -> BTreeMap<String, (Vec<String>, bool)> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (c["target"].as_str().unwrap().to_string(), (sorted(&c["sources"]), c["derived"].as_bool().unwrap()))
            })
            .collect()
    };
    for (exp, g) in case.expect.iter().zip(got) {
        let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
        let same = exp["operation"] == g["operation"]
            && list(&exp["targets"]) == list(&g["targets"])
            && list(&exp["sources"]) == list(&g["sources"])
            && cols(&exp["columns"]) == cols(&g["columns"])
            && exp["error"].as_bool().unwrap_or(false) != g["errors"].as_array().unwrap().is_empty();
        if !same {
            return Some(format!("{}:\n  want {exp}\n  got  {g}", case.name));
        }
    }
    None
}

async fn sql_corpus_through_analyze_and_ingest(app: TestApp) {
    let cases = cases();
    assert!(cases.len() >= 200, "only {} cases", cases.len());
    let analyze = format!(
        "query($s: [String!]!, $d: String!, $db: String, $sc: String) {{
           analyzeSql(statements: $s, dialect: $d, defaultDatabase: $db, defaultSchema: $sc) {{ {FIELDS} }} }}"
    );
    let ingest = format!(
        "mutation($s: [String!]!, $d: String!, $ds: Int!) {{
           ingestSql(statements: $s, dialect: $d, datastoreId: $ds) {{ recorded statements {{ {FIELDS} }} }} }}"
    );
    let ds = app.datastore("corpus", "postgresql").await;
    let mut failures = Vec::new();
    let mut recorded = 0;
    for case in &cases {
        let v = app
            .ok(&analyze, json!({"s": case.statements, "d": case.dialect, "db": case.database, "sc": case.schema}))
            .await;
        failures.extend(diff(case, &v["analyzeSql"]).map(|d| format!("analyzeSql {d}")));
        // ingestSql takes no default database or schema: those cases are analyzeSql's alone.
        if case.database.is_none() && case.schema.is_none() {
            let v = app.ok(&ingest, json!({"s": case.statements, "d": case.dialect, "ds": ds})).await;
            recorded += v["ingestSql"]["recorded"].as_i64().unwrap();
            failures.extend(diff(case, &v["ingestSql"]["statements"]).map(|d| format!("ingestSql {d}")));
        }
    }
    assert!(failures.is_empty(), "{} corpus cases differ:\n{}", failures.len(), failures.join("\n"));
    assert!(recorded > 100, "ingestSql recorded only {recorded} statements");
}
