//! The case corpus: `tests/fixtures/sql/<dialect>.jsonl`, one case a line.
//!
//! A case is `{"name", "sql"` (one input string) or `"statements"` (several), optional
//! `"dialect"` (else the file's name), `"default_database"`, `"default_schema"`, `"catalog"`
//! (`{table: [columns]}`), and `"expect"`: the entries `analyze` must return, in order (a case with
//! one entry may put its fields at the top level instead). Each expected entry is checked
//! strictly: `operation`; `targets`, `sources` and `columns` (`[{target, sources, derived}]`, in any
//! order) default to empty; `error: true` means errors are expected (otherwise there must be none);
//! `unresolved`, `external_location`, `procedure` and `intermediate` are checked when given.
//! Expectations were written from the rules of CONTRACT.md `analyzeSql` and the module comment of
//! `ingest::sql`, not from this code's output. A statement is one expected entry.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use serde_json::Value;

use super::super::*;

struct Case {
    file: String,
    name: String,
    dialect: Dialect,
    statements: Vec<String>,
    options: Options,
    catalog: HashMap<String, Vec<String>>,
    expect: Vec<Value>,
}

fn load() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sql");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        if f.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let stem = f.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        for (ln, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{stem}.jsonl:{}: {e}", ln + 1));
            let name = v["name"].as_str().unwrap_or_else(|| panic!("{stem}.jsonl:{}: no name", ln + 1)).to_string();
            let dialect = Dialect::parse(v["dialect"].as_str().unwrap_or(&stem)).unwrap();
            let statements: Vec<String> = match (&v["sql"], &v["statements"]) {
                (Value::String(s), _) => vec![s.clone()],
                (_, Value::Array(a)) => a.iter().map(|s| s.as_str().unwrap().to_string()).collect(),
                _ => panic!("{name}: no sql"),
            };
            let options = Options {
                default_database: v["default_database"].as_str().map(str::to_string),
                default_schema: v["default_schema"].as_str().map(str::to_string),
                ..Options::default()
            };
            let mut catalog = HashMap::new();
            if let Some(c) = v["catalog"].as_object() {
                for (t, cols) in c {
                    let cols = cols.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
                    catalog.insert(t.clone(), cols);
                }
            }
            let expect = match &v["expect"] {
                Value::Array(a) => a.clone(),
                _ => vec![v.clone()],
            };
            cases.push(Case { file: stem.clone(), name, dialect, statements, options, catalog, expect });
        }
    }
    cases
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect()).unwrap_or_default()
}

/// Differences between one expected entry and one result.
fn check(exp: &Value, got: &StatementLineage) -> Vec<String> {
    let mut d = Vec::new();
    let op = exp["operation"].as_str().unwrap_or("?");
    if op != got.operation {
        d.push(format!("operation: want {op}, got {}", got.operation));
    }
    let targets = strings(&exp["targets"]);
    if targets != got.targets {
        d.push(format!("targets: want {targets:?}, got {:?}", got.targets));
    }
    let sources = strings(&exp["sources"]);
    if sources != got.sources {
        d.push(format!("sources: want {sources:?}, got {:?}", got.sources));
    }
    let mut want_cols: BTreeMap<String, (Vec<String>, bool)> = BTreeMap::new();
    for c in exp["columns"].as_array().cloned().unwrap_or_default() {
        let mut s = strings(&c["sources"]);
        s.sort();
        want_cols.insert(c["target"].as_str().unwrap().to_string(), (s, c["derived"].as_bool().unwrap()));
    }
    let got_cols: BTreeMap<String, (Vec<String>, bool)> =
        got.columns.iter().map(|c| (c.target.clone(), (c.sources.clone(), c.derived))).collect();
    if want_cols != got_cols || got_cols.len() != got.columns.len() {
        d.push(format!("columns:\n      want {want_cols:?}\n      got  {:?}", got.columns));
    }
    let want_error = exp["error"].as_bool().unwrap_or(false);
    if want_error == got.errors.is_empty() {
        d.push(format!("errors: want {}, got {:?}", if want_error { "some" } else { "none" }, got.errors));
    }
    if let Some(u) = exp["unresolved"].as_bool() {
        if u == got.unresolved.is_empty() {
            d.push(format!("unresolved: want {}, got {:?}", if u { "some" } else { "none" }, got.unresolved));
        }
    }
    if !exp["external_location"].is_null() && exp["external_location"].as_str() != got.external_location.as_deref() {
        d.push(format!("external_location: want {}, got {:?}", exp["external_location"], got.external_location));
    }
    if !exp["procedure"].is_null() && exp["procedure"].as_str() != got.procedure.as_deref() {
        d.push(format!("procedure: want {}, got {:?}", exp["procedure"], got.procedure));
    }
    if let Some(i) = exp["intermediate"].as_bool() {
        if i != got.intermediate {
            d.push(format!("intermediate: want {i}, got {}", got.intermediate));
        }
    }
    d
}

#[test]
fn corpus() {
    let cases = load();
    let mut per_dialect: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &cases {
        let got = analyze(&case.statements, case.dialect, &case.options, &case.catalog);
        let entry = per_dialect.entry(case.file.clone()).or_default();
        entry.1 += case.expect.len();
        if got.len() != case.expect.len() {
            failures.push(format!(
                "{}/{}: want {} entries, got {}: {:#?}",
                case.file,
                case.name,
                case.expect.len(),
                got.len(),
                got
            ));
            continue;
        }
        for (i, (exp, g)) in case.expect.iter().zip(&got).enumerate() {
            let d = check(exp, g);
            if d.is_empty() {
                entry.0 += 1;
            } else {
                failures.push(format!("{}/{} entry {i}:\n    {}", case.file, case.name, d.join("\n    ")));
            }
        }
    }
    let (mut ok, mut total) = (0, 0);
    eprintln!("SQL lineage corpus: accuracy per dialect");
    for (d, (p, t)) in &per_dialect {
        eprintln!("  {d:<10} {p:>4}/{t:<4} {:>6.1}%", 100.0 * *p as f64 / (*t).max(1) as f64);
        ok += p;
        total += t;
    }
    eprintln!(
        "  {:<10} {ok:>4}/{total:<4} {:>6.1}%  ({} cases)",
        "all",
        100.0 * ok as f64 / total.max(1) as f64,
        cases.len()
    );
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    assert!(total >= 200, "the corpus has {total} statements, fewer than 200");
    assert!(failures.is_empty(), "{} corpus entries failed", failures.len());
}

/// Statements per second over the whole corpus (split, parse, analyse, mask). A measuring tool,
/// not a test: it prints the figure and asserts nothing about it. Run it with
/// `cargo test --release --lib corpus_throughput -- --ignored --nocapture`.
#[test]
#[ignore = "a measuring tool: prints the corpus throughput; asserts nothing"]
fn corpus_throughput() {
    let cases = load();
    let statements: usize = cases.iter().map(|c| c.statements.len()).sum();
    let rounds = if cfg!(debug_assertions) { 2 } else { 50 };
    let start = Instant::now();
    let mut entries = 0usize;
    for _ in 0..rounds {
        for case in &cases {
            entries += analyze(&case.statements, case.dialect, &case.options, &case.catalog).len();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let per_sec = (statements * rounds) as f64 / secs;
    // The parser's share: every input parsed once per round, nothing else.
    let start = Instant::now();
    for _ in 0..rounds {
        for case in &cases {
            let d = case.dialect.parser_dialect();
            for s in &case.statements {
                let _ = super::super::parse(s, &*d, false, 800);
            }
        }
    }
    let parse_secs = start.elapsed().as_secs_f64();
    eprintln!(
        "SQL lineage throughput: parsing alone takes {:.0}% of it ({:.1} us a statement)",
        100.0 * parse_secs / secs,
        1e6 * parse_secs / (statements * rounds) as f64
    );
    eprintln!(
        "SQL lineage throughput: {} input statements x {rounds} rounds in {secs:.3} s = {per_sec:.0} statements/s ({:.1} us each; {entries} entries)",
        statements,
        1e6 / per_sec
    );
}

/// Prints what `analyze` says about each `{"dialect", "sql"}` line of the file named by
/// `SQL_PROBE`: a tool for writing cases (the expectation still comes from the SQL's meaning).
/// `SQL_PROBE=/tmp/p.jsonl cargo test --lib ingest::sql::tests::corpus::probe -- --ignored --nocapture`
#[test]
#[ignore = "a tool for writing cases: prints what analyze says about SQL_PROBE's lines; asserts nothing"]
fn probe() {
    let path = std::env::var("SQL_PROBE").expect("SQL_PROBE: a file of {dialect, sql} lines");
    let text = std::fs::read_to_string(path).unwrap();
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with("//")) {
        let v: Value = serde_json::from_str(line).unwrap();
        let dialect = Dialect::parse(v["dialect"].as_str().unwrap()).unwrap();
        let statements: Vec<String> = match (&v["sql"], &v["statements"]) {
            (Value::String(s), _) => vec![s.clone()],
            (_, Value::Array(a)) => a.iter().map(|s| s.as_str().unwrap().to_string()).collect(),
            _ => panic!("no sql"),
        };
        let mut catalog = HashMap::new();
        if let Some(c) = v["catalog"].as_object() {
            for (t, cols) in c {
                let cols = cols.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
                catalog.insert(t.clone(), cols);
            }
        }
        let options = Options {
            default_database: v["default_database"].as_str().map(str::to_string),
            default_schema: v["default_schema"].as_str().map(str::to_string),
            ..Options::default()
        };
        eprintln!("=== [{}] {}", v["dialect"].as_str().unwrap_or(""), statements.join(" ;; "));
        for r in analyze(&statements, dialect, &options, &catalog) {
            eprintln!("  op={} targets={:?} sources={:?}", r.operation, r.targets, r.sources);
            for c in &r.columns {
                eprintln!("    {} <- {:?}{}", c.target, c.sources, if c.derived { " (derived)" } else { "" });
            }
            if !r.errors.is_empty() {
                eprintln!("  ERRORS {:?}", r.errors);
            }
            if !r.unresolved.is_empty() {
                eprintln!("  unresolved {:?}", r.unresolved);
            }
            if let Some(l) = &r.external_location {
                eprintln!("  location {l}");
            }
        }
    }
}
