//! sqllineage's own test suite (`tests/fixtures/sqllineage/`, vendored from reata/sqllineage with
//! its MIT licence; `tools/sqllineage-cases/convert.py` made `cases.jsonl` from its python tests).
//!
//! Each case is one SQL string sqllineage analyses as one call, with what its helpers assert: the
//! call's source and target tables (`kind: "table"`), or its column lineage (`kind: "column"`),
//! optionally with a catalog. Every case runs through [`analyze`], the analysis `analyzeSql` runs,
//! and its answer is read the way sqllineage reads a call:
//!
//! - tables: an edge from each source of an entry to each of its targets; the call's sources are
//!   the tables no edge leads into (plus those read by an entry that writes nothing), its targets
//!   the tables no edge leaves (plus those written from nothing). A table both written and read in
//!   the call is neither. Entries Tributary marks `intermediate` (temp tables) are already folded
//!   into the entries that read them, so they are left out.
//! - columns: the column edges of every entry, followed from each column nothing is read into to
//!   each column nothing is read from (sqllineage's `get_column_lineage`, first and last of each
//!   path), except the columns of a view of the call that a later entry reads (Tributary reads
//!   through such a view to the columns it reads, where sqllineage's paths pass the view's).
//!
//! Names are compared lower-cased without quotes, sqllineage's `<default>.` left out. A case with
//! an error in any entry fails. A case either passes or is listed in
//! `tests/fixtures/sqllineage/differences.txt` with the convention it differs by (one of
//! [`CONVENTIONS`], each a row of the README's table "Where Tributary's SQL lineage differs from
//! sqllineage on purpose") and the exact answer Tributary gives it ([`answer`]: its tables or
//! columns, and its entries' errors and unresolved names). A listed case fails when that answer
//! changes (a difference that loses its lineage, or starts failing to parse, is a regression, not
//! the convention), and when it passes (the list must shrink when a difference goes away).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Value};

use super::super::*;

/// The conventions a case may differ by, each with what it means.
const CONVENTIONS: &[(&str, &str)] = &[
    ("star-pseudo-column", "no `*` pseudo-column: `count(*)` has no source, `SELECT *` is expanded from the catalog or not at all"),
    ("self-read", "a table that a statement reads and writes is not a source of itself (the contract)"),
    ("expression-name", "a target column computed by an unaliased expression is named by its position or the catalog (a cast of a column by the column), not by the expression's text"),
    ("create-like", "`CREATE TABLE t LIKE s` copies a shape, not data: no lineage"),
    ("using-keys", "an unqualified key of `a JOIN b USING (k)` is read from the first relation, `a.k`"),
    ("cache-table", "`CACHE TABLE t AS SELECT` is a view of its query"),
    ("rename-moves-lineage", "`ALTER TABLE a RENAME TO b` and `RENAME TABLE` are operation RENAME from `a` to `b`, so a caller can move lineage"),
    ("lateral-alias", "a name an earlier select item defines as its alias reads that item, unless the item's own expression reads a column of that name"),
    ("ambiguous-column", "an unqualified column two relations of unknown columns could hold is reported in `unresolved`, not as a source without a table"),
    ("invalid-sql", "a statement that is not valid SQL reports an error rather than partial lineage"),
    ("procedure-statements", "each statement of a procedure body is its own entry, so a table one writes and a later one reads is between them, not a source and a target of the procedure"),
    ("truncate-target", "`TRUNCATE t` names `t` as its target (it changes `t`, as a DELETE does), with no source"),
    ("unused-cte", "a CTE nothing in the statement reads is no source (its query never runs)"),
    ("dialect-not-supported", "syntax or functions of a dialect Tributary has no parser for (Teradata, Vertica) are not read"),
];

struct Case {
    name: String,
    dialect: Dialect,
    sql: String,
    kind: String,
    sources: BTreeSet<String>,
    targets: BTreeSet<String>,
    columns: BTreeSet<(String, String)>,
    catalog: HashMap<String, Vec<String>>,
}

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sqllineage")
}

/// Lower-cased, without quotes, without sqllineage's `<default>.`.
fn norm(s: &str) -> String {
    let s: String = s.chars().filter(|c| !matches!(c, '"' | '`' | '[' | ']')).collect::<String>().to_lowercase();
    s.strip_prefix("<default>.").map(str::to_string).unwrap_or(s)
}

fn load() -> Vec<Case> {
    let shared: Value = serde_json::from_str(&std::fs::read_to_string(dir().join("catalog.json")).unwrap()).unwrap();
    let text = std::fs::read_to_string(dir().join("cases.jsonl")).unwrap();
    let set = |v: &Value| -> BTreeSet<String> {
        v.as_array().map(|a| a.iter().map(|s| norm(s.as_str().unwrap())).collect()).unwrap_or_default()
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let catalog_v = match &v["catalog"] {
                Value::String(s) if s == "conftest" => shared.clone(),
                other => other.clone(),
            };
            let mut catalog = HashMap::new();
            if let Some(c) = catalog_v.as_object() {
                for (t, cols) in c {
                    let cols = cols.as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
                    catalog.insert(t.clone(), cols);
                }
            }
            let columns = v["columns"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| (norm(p[0].as_str().unwrap()), norm(p[1].as_str().unwrap())))
                        .collect::<BTreeSet<_>>()
                })
                .unwrap_or_default();
            Case {
                name: v["name"].as_str().unwrap().to_string(),
                dialect: Dialect::parse(v["dialect"].as_str().unwrap()).unwrap(),
                sql: v["sql"].as_str().unwrap().to_string(),
                kind: v["kind"].as_str().unwrap().to_string(),
                sources: set(&v["sources"]),
                targets: set(&v["targets"]),
                columns,
                catalog,
            }
        })
        .collect()
}

/// One case of `differences.txt`: the convention it differs by and Tributary's [`answer`] to it.
struct Difference {
    convention: String,
    answer: Value,
}

/// `name -> difference` from `differences.txt`: one JSON object a line, `case`, `convention`
/// (`a+b` when a case differs by two) and the keys of [`answer`]; `#` lines are comments.
fn differences() -> BTreeMap<String, Difference> {
    let text = std::fs::read_to_string(dir().join("differences.txt")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let mut v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("differences.txt: {e}: {line}"));
        let fields = v.as_object_mut().unwrap_or_else(|| panic!("differences.txt: not an object: {line}"));
        let name = fields.remove("case").and_then(|c| c.as_str().map(str::to_string));
        let name = name.unwrap_or_else(|| panic!("differences.txt: no case: {line}"));
        let conv = fields.remove("convention").and_then(|c| c.as_str().map(str::to_string));
        let conv = conv.unwrap_or_else(|| panic!("{name}: no convention"));
        for c in conv.split('+') {
            assert!(CONVENTIONS.iter().any(|(k, _)| *k == c), "{name}: unknown convention {c}");
        }
        let difference = Difference { convention: conv, answer: v };
        assert!(out.insert(name.clone(), difference).is_none(), "{name} listed twice");
    }
    out
}

/// The call's sources and targets, read as sqllineage reads them.
fn tables(got: &[StatementLineage]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    let (mut read_only, mut write_only) = (BTreeSet::new(), BTreeSet::new());
    for e in got.iter().filter(|e| !e.intermediate) {
        let sources: Vec<String> = e.sources.iter().map(|s| norm(s)).collect();
        let targets: Vec<String> = e.targets.iter().map(|s| norm(s)).collect();
        if targets.is_empty() {
            read_only.extend(sources.iter().cloned());
        } else if sources.is_empty() {
            write_only.extend(targets.iter().cloned());
        }
        for s in &sources {
            for t in &targets {
                edges.insert((s.clone(), t.clone()));
            }
        }
    }
    let into: BTreeSet<&String> = edges.iter().map(|(_, t)| t).collect();
    let out_of: BTreeSet<&String> = edges.iter().map(|(s, _)| s).collect();
    let mut sources: BTreeSet<String> = out_of.iter().filter(|s| !into.contains(*s)).map(|s| (*s).clone()).collect();
    let mut targets: BTreeSet<String> = into.iter().filter(|t| !out_of.contains(*t)).map(|t| (*t).clone()).collect();
    sources.extend(read_only.into_iter().filter(|s| !into.contains(s)));
    targets.extend(write_only.into_iter().filter(|t| !out_of.contains(t)));
    (sources, targets)
}

/// The views of the call that a later entry reads: Tributary reads through them to the columns
/// they read (the contract), where sqllineage goes from the view's column on.
fn views_read_later(got: &[StatementLineage]) -> BTreeSet<String> {
    let written: BTreeSet<String> =
        got.iter().filter(|e| e.operation == "VIEW").flat_map(|e| e.targets.iter().map(|t| norm(t))).collect();
    got.iter().flat_map(|e| e.sources.iter().map(|s| norm(s))).filter(|s| written.contains(s)).collect()
}

/// The call's column lineage: (first, last) of each path through the column edges, the last not
/// a column of a view read later in the call.
fn columns(got: &[StatementLineage]) -> BTreeSet<(String, String)> {
    let between = views_read_later(got);
    let mut up: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut has_down: BTreeSet<String> = BTreeSet::new();
    for e in got.iter().filter(|e| !e.intermediate) {
        for c in &e.columns {
            for s in &c.sources {
                up.entry(norm(&c.target)).or_default().insert(norm(s));
                has_down.insert(norm(s));
            }
        }
    }
    let mut out = BTreeSet::new();
    let table_of = |c: &str| c.rsplit_once('.').map(|(t, _)| t.to_string()).unwrap_or_default();
    for target in up.keys().filter(|t| !has_down.contains(*t) && !between.contains(&table_of(t))) {
        let mut stack = vec![target.clone()];
        let mut seen = BTreeSet::new();
        while let Some(c) = stack.pop() {
            if !seen.insert(c.clone()) {
                continue;
            }
            match up.get(&c) {
                Some(ups) => stack.extend(ups.iter().cloned()),
                None => {
                    out.insert((c, target.clone()));
                }
            }
        }
    }
    out
}

/// What differs between the case's expectation and Tributary's answer `got`; empty when it passes.
fn diff(case: &Case, got: &[StatementLineage]) -> Vec<String> {
    let mut d = Vec::new();
    for e in got {
        if !e.errors.is_empty() {
            d.push(format!("errors {:?}", e.errors));
        }
    }
    if case.kind == "table" {
        let (sources, targets) = tables(got);
        if sources != case.sources {
            d.push(format!("sources: want {:?}, got {sources:?}", case.sources));
        }
        if targets != case.targets {
            d.push(format!("targets: want {:?}, got {targets:?}", case.targets));
        }
    } else {
        let cols = columns(got);
        if cols != case.columns {
            let missing: Vec<_> = case.columns.difference(&cols).collect();
            let extra: Vec<_> = cols.difference(&case.columns).collect();
            d.push(format!("columns: missing {missing:?}, extra {extra:?}"));
        }
    }
    d
}

/// Tributary's answer to a case as `differences.txt` records it: `sources` and `targets` (a
/// table case) or `columns` (`[source, target]` pairs, a column case), read as sqllineage reads
/// a call, and, when there are any, every entry's `errors` and `unresolved` in entry order.
fn answer(case: &Case, got: &[StatementLineage]) -> Value {
    let mut a = serde_json::Map::new();
    if case.kind == "table" {
        let (sources, targets) = tables(got);
        a.insert("sources".into(), json!(sources));
        a.insert("targets".into(), json!(targets));
    } else {
        a.insert("columns".into(), json!(columns(got)));
    }
    let errors: Vec<&String> = got.iter().flat_map(|e| &e.errors).collect();
    if !errors.is_empty() {
        a.insert("errors".into(), json!(errors));
    }
    let unresolved: Vec<&String> = got.iter().flat_map(|e| &e.unresolved).collect();
    if !unresolved.is_empty() {
        a.insert("unresolved".into(), json!(unresolved));
    }
    Value::Object(a)
}

/// The line of `differences.txt` that records `answer` for `name`.
fn line(name: &str, convention: &str, answer: &Value) -> String {
    let mut v = json!({"case": name, "convention": convention});
    if let (Some(v), Some(a)) = (v.as_object_mut(), answer.as_object()) {
        v.extend(a.clone());
    }
    v.to_string()
}

#[test]
fn sqllineage_suite() {
    let cases = load();
    let listed = differences();
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let mut problems = Vec::new();
    for name in listed.keys() {
        if !names.contains(name.as_str()) {
            problems.push(format!("{name}: listed in differences.txt but no such case"));
        }
    }
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut per_convention: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &cases {
        let kind = match (case.kind.as_str(), case.catalog.is_empty()) {
            ("table", _) => "table",
            (_, true) => "column",
            (_, false) => "column with a catalog",
        };
        let t = tally.entry(kind).or_default();
        t.1 += 1;
        let got = analyze(std::slice::from_ref(&case.sql), case.dialect, &Options::default(), &case.catalog);
        let d = diff(case, &got);
        match (d.is_empty(), listed.get(&case.name)) {
            (true, None) => t.0 += 1,
            (true, Some(l)) => {
                problems.push(format!("{}: passes, but is listed as differing by {}", case.name, l.convention))
            }
            (false, Some(l)) => {
                let now = answer(case, &got);
                if now == l.answer {
                    *per_convention.entry(l.convention.as_str()).or_default() += 1;
                } else {
                    problems.push(format!(
                        "{}: listed as differing by {}, but its answer changed\n    recorded {}\n    now      {}\n    {}",
                        case.name,
                        l.convention,
                        l.answer,
                        now,
                        d.join("\n    ")
                    ));
                }
            }
            (false, None) => problems.push(format!(
                "{} [{:?}]\n    {}\n    {}\n    differs on purpose? list it: {}",
                case.name,
                case.dialect,
                case.sql.replace('\n', " "),
                d.join("\n    "),
                line(&case.name, "<convention>", &answer(case, &got))
            )),
        }
    }
    let (mut ok, mut total) = (0, 0);
    eprintln!("sqllineage's suite: cases passed");
    for (kind, (p, n)) in &tally {
        eprintln!("  {kind:<22} {p:>4}/{n:<4} {:>6.1}%", 100.0 * *p as f64 / (*n).max(1) as f64);
        ok += p;
        total += n;
    }
    eprintln!("  {:<22} {ok:>4}/{total:<4} {:>6.1}%", "all", 100.0 * ok as f64 / total.max(1) as f64);
    for (conv, n) in &per_convention {
        eprintln!("  differs by {conv}: {n}");
    }
    for p in &problems {
        eprintln!("FAIL {p}");
    }
    assert!(cases.len() >= 400, "{} cases, fewer than the 425 vendored", cases.len());
    assert!(
        problems.is_empty(),
        "{} sqllineage cases neither pass nor give the answer differences.txt records",
        problems.len()
    );
}
