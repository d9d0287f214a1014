//! Graphs people can take away (issue #30, part 3): `format=csv|dot|graphml|mermaid` on
//! `GET /api/lineage/graph` and `GET /admin/lineage/graph|impact|pii-flow`, with names that are
//! spreadsheet formulas, quotes, markup, brackets and line breaks. The CSV is read back here with
//! the `csv` crate; `tests/python/test_exports.py` reads every format with Python's `csv`,
//! networkx's `read_graphml` and Graphviz's `dot`.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(exports_write_every_format_with_names_as_data, an_unknown_format_is_refused_naming_the_formats);

pub const HOSTILE: [&str; 4] =
    ["=HYPERLINK(\"http://evil.example/x\",\"click\")", "a\"b<c>]&d", "two\nlines", "@sum|x`#"];

/// `orders` feeds each hostile table in a chain, by container and by field edges.
async fn hostile_chain(app: &TestApp) -> (i64, Vec<i64>) {
    let ds = app.datastore("-warehouse", "snowflake").await;
    let (orders, of) = app.container(ds, "orders", &["amount"]).await;
    let (mut prev, mut prev_field) = (orders, of[0]);
    let mut ids = Vec::new();
    for name in HOSTILE {
        let (c, f) = app.container(ds, name, &[name]).await;
        app.edge(prev, c).await;
        app.field_edge(prev_field, f[0]).await;
        (prev, prev_field) = (c, f[0]);
        ids.push(c);
    }
    (orders, ids)
}

async fn get(app: &TestApp, path: &str) -> (u16, String, String) {
    let r = app.client().get(format!("{}{path}", app.url)).send().await.unwrap();
    let status = r.status().as_u16();
    let kind = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, kind, r.text().await.unwrap())
}

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    r.records().map(|x| x.unwrap().iter().map(str::to_string).collect()).collect()
}

async fn exports_write_every_format_with_names_as_data(app: TestApp) {
    let (orders, _) = hostile_chain(&app).await;
    let json: Value =
        serde_json::from_str(&get(&app, &format!("/api/lineage/graph?container_id={orders}&depth=5")).await.2).unwrap();
    let edges = json["edges"].as_array().unwrap().len();
    assert_eq!(edges, 4, "{json:#}");

    // CSV: a header and one row per edge; no cell a spreadsheet would run.
    let (status, kind, text) = get(&app, &format!("/api/lineage/graph?container_id={orders}&depth=5&format=csv")).await;
    assert_eq!((status, kind.as_str()), (200, "text/csv; charset=utf-8"), "{text}");
    let rows = csv_rows(&text);
    assert_eq!(rows[0][..3], ["edge_id", "source", "source_datastore"]);
    assert_eq!(rows.len(), 1 + edges, "{text}");
    for row in &rows {
        for cell in row {
            assert!(!cell.starts_with(['=', '+', '-', '@']), "a formula cell {cell:?} in {text}");
        }
    }
    let targets: Vec<&str> = rows[1..].iter().map(|r| r[4].as_str()).collect();
    assert!(targets.contains(&"'=HYPERLINK(\"http://evil.example/x\",\"click\")"), "{targets:?}");
    assert!(targets.contains(&"two\nlines"), "{targets:?}");
    assert!(rows[1..].iter().all(|r| r[2] == "'-warehouse" && r[7] == "table" && r[8] == "manual"), "{rows:?}");

    // DOT: one statement per node and edge; every name inside a quoted string.
    let (status, kind, dot) = get(&app, &format!("/api/lineage/graph?container_id={orders}&depth=5&format=dot")).await;
    assert_eq!((status, kind.as_str()), (200, "text/vnd.graphviz; charset=utf-8"));
    assert!(dot.starts_with("digraph \"lineage\" {"), "{dot}");
    assert_eq!(dot.lines().filter(|l| l.contains(" -> ")).count(), edges, "{dot}");
    assert!(dot.contains("label=\"a\\\"b<c>]&d\"") && dot.contains("label=\"two\\nlines\""), "{dot}");

    // GraphML: the markup characters escaped.
    let (status, kind, xml) =
        get(&app, &format!("/api/lineage/graph?container_id={orders}&depth=5&format=graphml")).await;
    assert_eq!((status, kind.as_str()), (200, "application/graphml+xml; charset=utf-8"));
    assert!(xml.contains("a&quot;b&lt;c&gt;]&amp;d") && xml.contains("two&#10;lines"), "{xml}");
    assert_eq!(xml.matches("<edge ").count(), edges);

    // Mermaid: one line per node and edge, whatever the names hold.
    let (status, kind, m) =
        get(&app, &format!("/api/lineage/graph?container_id={orders}&depth=5&format=mermaid")).await;
    assert_eq!((status, kind.as_str()), (200, "text/vnd.mermaid; charset=utf-8"));
    assert!(m.starts_with("flowchart LR\n"), "{m}");
    assert_eq!(m.lines().count(), 1 + 5 + edges, "{m}");
    assert!(m.contains("a#quot;b#lt;c#gt;]#amp;d") && m.contains("two lines"), "{m}");

    // The admin routes: graph, impact (nodes with their distance), pii-flow (columns).
    let (status, _, text) = get(&app, "/admin/lineage/graph?root=orders&depth=5&format=csv").await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(csv_rows(&text).len(), 1 + edges);
    let (status, _, text) = get(&app, "/admin/lineage/impact?table=orders&format=csv").await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(csv_rows(&text).len(), 1 + 4, "one row per table reached: {text}");
    let (status, _, xml) = get(&app, "/admin/lineage/impact?table=orders&format=graphml").await;
    assert_eq!(status, 200);
    assert!(xml.contains("<data key=\"n_distance\">4</data>"), "{xml}");
    let (status, _, text) = get(&app, "/admin/lineage/pii-flow?table=orders&column=amount&format=csv").await;
    assert_eq!(status, 200, "{text}");
    let rows = csv_rows(&text);
    assert_eq!(rows.len(), 1 + 4, "{text}");
    assert!(rows[1..].iter().all(|r| r[7] == "column"), "{rows:?}");
    assert_eq!(rows[1][1], "orders.amount");
    let (status, _, dot) = get(&app, "/admin/lineage/pii-flow?table=orders&column=amount&format=dot").await;
    assert_eq!(status, 200);
    assert_eq!(dot.lines().filter(|l| l.contains(" -> ")).count(), 4, "{dot}");
    // JSON stays the default, and `format=json` is the same answer.
    let (_, kind, default) = get(&app, "/admin/lineage/impact?table=orders").await;
    let (_, _, explicit) = get(&app, "/admin/lineage/impact?table=orders&format=JSON").await;
    assert_eq!(kind, "application/json");
    assert_eq!(serde_json::from_str::<Value>(&default).unwrap(), serde_json::from_str::<Value>(&explicit).unwrap());
}

async fn an_unknown_format_is_refused_naming_the_formats(app: TestApp) {
    let (orders, _) = hostile_chain(&app).await;
    for path in [
        format!("/api/lineage/graph?container_id={orders}&format=xlsx"),
        "/admin/lineage/graph?root=orders&format=xlsx".to_string(),
        "/admin/lineage/impact?table=orders&format=xlsx".to_string(),
        "/admin/lineage/pii-flow?table=orders&column=amount&format=xlsx".to_string(),
    ] {
        let (status, kind, text) = get(&app, &path).await;
        assert_eq!((status, kind.as_str()), (400, "application/json"), "{path}: {text}");
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"detail": "query parameter format must be one of json, csv, dot, graphml, mermaid; got \"xlsx\""}),
            "{path}"
        );
    }
}
