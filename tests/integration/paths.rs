//! Why A feeds B and whether an answer is complete (issue #19, parts 3 to 5): explainLineage's k
//! shortest paths with evidence per hop, its reasons for no path, the `maxNodes` budget and the
//! frontier of every traversal, lineageSummary, and cycles.

use serde_json::{json, Value};
use tributary::domain::{now, ContainerInput, Direction, End, NewEdge};

use crate::both_stores;
use crate::common::TestApp;
use crate::openlineage::run_event;

both_stores!(
    explain_gives_the_k_shortest_paths_in_order_with_evidence_per_hop,
    explain_hides_evidence_details_without_viewer_and_ends_without_permission,
    explain_says_why_there_is_no_path,
    explain_rejects_bad_ends_and_arguments,
    cycles_are_reported_and_explain_does_not_loop,
    max_nodes_cuts_a_big_graph_nearest_levels_first,
    impact_and_pii_flow_report_their_frontier,
);

const EXPLAIN: &str = "query($f: EndInput!, $t: EndInput!, $k: Int, $d: Int, $at: DateTime) {
  explainLineage(from: $f, to: $t, maxPaths: $k, maxDepth: $d, asOf: $at) {
    reason isPartial cycles frontier { id side distance reason beyond }
    paths { length nodeIds hops { sourceType operation firstObserved lastObserved
      edge { id sourceContainerId targetContainerId sourceFieldId targetFieldId }
      evidence { provider evidenceType jobName runId details observedAt } } } } }";

fn c(id: i64) -> Value {
    json!({"containerId": id})
}

/// A datastore listing an OpenLineage namespace, and containers `db.public.<name>` in it.
async fn warehouse(app: &TestApp, names: &[&str]) -> (i64, Vec<i64>) {
    let ds = app
        .ok(
            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
            json!({"i": {"name": "wh", "type": "postgresql", "namespaces": ["postgres://wh:5432"]}}),
        )
        .await["upsertDatastore"]["id"]
        .as_i64()
        .unwrap();
    let mut ids = Vec::new();
    for name in names {
        let id = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                json!({"i": {"datastoreId": ds, "database": "db", "schema": "public", "name": name, "fields": [{"name": "x"}]}}),
            )
            .await["upsertContainer"]["id"]
            .as_i64()
            .unwrap();
        ids.push(id);
    }
    (ds, ids)
}

/// An OpenLineage run of job `job` reading `input` and writing `output` (table names).
async fn run(app: &TestApp, job: &str, input: &str, output: &str) {
    let ds = |n: &str| json!({"namespace": "postgres://wh:5432", "name": format!("db.public.{n}")});
    let ev = run_event("COMPLETE", &format!("run-{job}"), job, vec![ds(input)], vec![ds(output)]);
    let (status, body) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(status, 201, "{body}");
}

fn explanation(v: Value) -> Value {
    v["explainLineage"].clone()
}

fn node_ids(x: &Value) -> Vec<Vec<i64>> {
    x["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["nodeIds"].as_array().unwrap().iter().map(|n| n.as_i64().unwrap()).collect())
        .collect()
}

async fn explain_gives_the_k_shortest_paths_in_order_with_evidence_per_hop(app: TestApp) {
    let (_, t) = warehouse(&app, &["a", "b", "c", "d", "e"]).await;
    let (a, b, cc, d, e) = (t[0], t[1], t[2], t[3], t[4]);
    // a → e by hand; a → b → e and a → c → d → e by OpenLineage jobs.
    app.edge(a, e).await;
    run(&app, "load_b", "a", "b").await;
    run(&app, "publish_b", "b", "e").await;
    run(&app, "load_c", "a", "c").await;
    run(&app, "load_d", "c", "d").await;
    run(&app, "publish_d", "d", "e").await;

    let x = explanation(app.ok(EXPLAIN, json!({"f": c(a), "t": c(e)})).await);
    assert_eq!(node_ids(&x), vec![vec![a, e], vec![a, b, e], vec![a, cc, d, e]], "{x:#}");
    assert_eq!(x["reason"], Value::Null);
    assert_eq!(x["isPartial"], false);
    assert_eq!(x["frontier"], json!([]));
    let lengths: Vec<i64> = x["paths"].as_array().unwrap().iter().map(|p| p["length"].as_i64().unwrap()).collect();
    assert_eq!(lengths, vec![1, 2, 3]);
    // The manual hop has no evidence and no operation; each OpenLineage hop names its job and run.
    let manual = &x["paths"][0]["hops"][0];
    assert_eq!((manual["sourceType"].as_str(), &manual["operation"]), (Some("manual"), &Value::Null));
    assert_eq!(manual["evidence"], json!([]));
    assert_eq!(manual["edge"]["sourceContainerId"], a);
    let hops = x["paths"][1]["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 2);
    for (hop, job) in hops.iter().zip(["load_b", "publish_b"]) {
        assert_eq!(hop["sourceType"], "openlineage");
        assert!(hop["operation"].is_string(), "{hop}");
        assert!(hop["firstObserved"].is_string() && hop["lastObserved"].is_string(), "{hop}");
        let ev = &hop["evidence"][0];
        assert_eq!(ev["jobName"], format!("nightly/{job}"), "{hop}");
        assert_eq!(ev["runId"], format!("run-{job}"));
        assert_eq!(ev["details"]["job"]["name"], job);
        assert!(ev["observedAt"].is_string());
    }
    assert_eq!(x["paths"][1]["hops"][0]["edge"]["targetContainerId"], b);

    // Two paths asked: the two shortest, and the answer says a third exists.
    let two = explanation(app.ok(EXPLAIN, json!({"f": c(a), "t": c(e), "k": 2})).await);
    assert_eq!(node_ids(&two), vec![vec![a, e], vec![a, b, e]]);
    assert_eq!(two["isPartial"], true);
    assert_eq!(
        two["frontier"],
        json!([{"id": e, "side": "DOWNSTREAM", "distance": 3, "reason": "LIMIT", "beyond": 1}])
    );
    // Within two hops the three-hop path is not a path at all: the answer is whole.
    let near = explanation(app.ok(EXPLAIN, json!({"f": c(a), "t": c(e), "d": 2})).await);
    assert_eq!(node_ids(&near), vec![vec![a, e], vec![a, b, e]]);
    assert_eq!(near["isPartial"], false);
    // A middle node is an end too.
    let mid = explanation(app.ok(EXPLAIN, json!({"f": c(cc), "t": c(e)})).await);
    assert_eq!(node_ids(&mid), vec![vec![cc, d, e]]);
}

async fn explain_hides_evidence_details_without_viewer_and_ends_without_permission(app: TestApp) {
    let (ds, t) = warehouse(&app, &["a", "b"]).await;
    run(&app, "load_b", "a", "b").await;
    let q = EXPLAIN;
    let vars = json!({"f": c(t[0]), "t": c(t[1])});
    let user = app.token_for("ana", "MEMBER", None).await;
    let team = |perm: &str| json!({"i": {"name": "analysts", "members": ["ana"], "permissions": [{"datastoreId": ds, "permission": perm}]}});
    // No permission on the ends' datastore: no path, and why.
    let hidden = app.gql_as(Some(&user), q, vars.clone()).await;
    assert!(hidden.get("errors").is_none(), "{hidden}");
    let x = &hidden["data"]["explainLineage"];
    assert_eq!((x["paths"].clone(), x["reason"].clone()), (json!([]), json!("ENDS_HIDDEN")), "{x}");
    // REPORTER sees the path but not the evidence's details.
    app.ok("mutation($i: TeamInput!) { upsertTeam(input: $i) { name } }", team("REPORTER")).await;
    let reporter = app.gql_as(Some(&user), q, vars.clone()).await;
    let ev = &reporter["data"]["explainLineage"]["paths"][0]["hops"][0]["evidence"][0];
    assert_eq!(reporter["data"]["explainLineage"]["reason"], Value::Null, "{reporter}");
    assert_eq!(
        (ev["details"].clone(), ev["jobName"].clone(), ev["runId"].clone()),
        (Value::Null, Value::Null, Value::Null)
    );
    assert_eq!(ev["provider"].as_str().map(|p| !p.is_empty()), Some(true), "the rest stays visible: {ev}");
    // VIEWER sees everything, as on `edges`.
    app.ok("mutation($i: TeamInput!) { upsertTeam(input: $i) { name } }", team("VIEWER")).await;
    let viewer = app.gql_as(Some(&user), q, vars).await;
    let ev = &viewer["data"]["explainLineage"]["paths"][0]["hops"][0]["evidence"][0];
    assert_eq!(ev["jobName"], "nightly/load_b", "{viewer}");
    assert!(ev["details"].is_object());
}

async fn explain_says_why_there_is_no_path(app: TestApp) {
    let (_, t) = warehouse(&app, &["a", "b", "c", "d", "lone"]).await;
    for w in t[..4].windows(2) {
        app.edge(w[0], w[1]).await;
    }
    // Against the flow, too far, or not connected at all: an empty list and NO_CONNECTION.
    for (from, to, depth) in [(t[3], t[0], 20), (t[0], t[3], 2), (t[0], t[4], 20)] {
        let x = explanation(app.ok(EXPLAIN, json!({"f": c(from), "t": c(to), "d": depth})).await);
        assert_eq!(x["paths"], json!([]), "{from} → {to} within {depth}: {x}");
        assert_eq!(x["reason"], "NO_CONNECTION");
        assert_eq!(x["isPartial"], false);
    }
    let x = explanation(app.ok(EXPLAIN, json!({"f": c(t[0]), "t": c(t[3]), "d": 3})).await);
    assert_eq!(node_ids(&x), vec![t[..4].to_vec()]);
}

async fn explain_rejects_bad_ends_and_arguments(app: TestApp) {
    let (ds, t) = warehouse(&app, &["a", "b"]).await;
    app.edge(t[0], t[1]).await;
    let field = app.container(ds, "with_field", &["f"]).await.1[0];
    let cases = [
        (
            json!({"f": {"containerId": t[0], "fieldId": field}, "t": c(t[1])}),
            "from: set exactly one of containerId and fieldId, not both",
        ),
        (json!({"f": c(t[0]), "t": {}}), "to: set exactly one of containerId and fieldId"),
        (
            json!({"f": c(t[0]), "t": {"fieldId": field}}),
            &*format!(
                "from and to must both be containers or both be fields: from is container {}, to is field {field}",
                t[0]
            ),
        ),
        (json!({"f": c(t[0]), "t": c(t[0])}), &*format!("from and to are the same container {}", t[0])),
        (json!({"f": c(t[0]), "t": c(t[1]), "k": 0}), "maxPaths must be between 1 and 20, got 0"),
        (json!({"f": c(t[0]), "t": c(t[1]), "k": 21}), "maxPaths must be between 1 and 20, got 21"),
        (json!({"f": c(t[0]), "t": c(t[1]), "d": 0}), "maxDepth must be between 1 and 20, got 0"),
    ];
    for (vars, msg) in cases {
        let (code, got) = app.err(EXPLAIN, vars.clone()).await;
        assert_eq!((code.as_str(), got.as_str()), ("BAD_USER_INPUT", msg), "{vars}");
    }
    // asOf is checked as on every traversal (the message also names the present instant).
    let (code, got) = app.err(EXPLAIN, json!({"f": c(t[0]), "t": c(t[1]), "at": "2999-01-01T00:00:00Z"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(got.starts_with("asOf 2999-01-01T00:00:00.000000Z is in the future"), "{got}");
    let (code, msg) = app.err(EXPLAIN, json!({"f": c(t[0]), "t": c(987654)})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Container 987654 not found"));
}

async fn cycles_are_reported_and_explain_does_not_loop(app: TestApp) {
    let (ds, t) = warehouse(&app, &["a", "b", "c", "d"]).await;
    let (a, b, cc, d) = (t[0], t[1], t[2], t[3]);
    // A job reads and writes the same pair of tables: b → c → b, on the way from a to d.
    app.edge(a, b).await;
    app.edge(b, cc).await;
    app.edge(cc, b).await;
    app.edge(cc, d).await;
    let x = explanation(app.ok(EXPLAIN, json!({"f": c(a), "t": c(d), "k": 10})).await);
    assert_eq!(node_ids(&x), vec![vec![a, b, cc, d]], "one simple path, the loop walked never: {x}");
    assert_eq!(x["cycles"], json!([[b, cc]]));
    assert_eq!(x["isPartial"], false);

    let g = app
        .ok(
            "query($c: Int!) { lineageGraph(containerId: $c, depth: 5, side: DOWNSTREAM) { isPartial cycles nodes { id } } }",
            json!({"c": a}),
        )
        .await["lineageGraph"]
        .clone();
    assert_eq!((g["cycles"].clone(), g["isPartial"].clone()), (json!([[b, cc]]), json!(false)), "{g}");
    let i = app
        .ok("query($c: Int!) { impact(containerId: $c) { isPartial cycles containers { distance } } }", json!({"c": a}))
        .await["impact"]
        .clone();
    assert_eq!(i["cycles"], json!([[b, cc]]), "{i}");
    assert_eq!(i["containers"].as_array().unwrap().len(), 3);

    // Fields: x1 → x2 → x3 → x1, and x3 → x4.
    let (_, f) = app.container(ds, "cols", &["x1", "x2", "x3", "x4"]).await;
    for (s, t) in [(0, 1), (1, 2), (2, 0), (2, 3)] {
        app.field_edge(f[s], f[t]).await;
    }
    let fc = app
        .ok("query($f: Int!) { fieldConnections(fieldId: $f) { isPartial cycles fields { id } } }", json!({"f": f[1]}))
        .await["fieldConnections"]
        .clone();
    assert_eq!((fc["cycles"].clone(), fc["isPartial"].clone()), (json!([[f[0], f[1], f[2]]]), json!(false)), "{fc}");
    let pii = app
        .ok("query($f: Int!) { piiFlow(fieldId: $f) { isPartial cycles fields { field { id } } } }", json!({"f": f[0]}))
        .await["piiFlow"]
        .clone();
    assert_eq!(pii["cycles"], json!([[f[0], f[1], f[2]]]), "{pii}");
    let fx = explanation(app.ok(EXPLAIN, json!({"f": {"fieldId": f[1]}, "t": {"fieldId": f[3]}, "k": 10})).await);
    assert_eq!(node_ids(&fx), vec![vec![f[1], f[2], f[3]]], "{fx}");
    assert_eq!(fx["cycles"], json!([[f[0], f[1], f[2]]]));
}

const BUDGETED: &str = "query($c: Int!, $d: Int, $n: Int) {
  lineageGraph(containerId: $c, depth: $d, side: DOWNSTREAM, maxNodes: $n) {
    isPartial nodes { id hasDownstream } edges { sourceContainerId targetContainerId }
    frontier { id side distance reason beyond } } }";

async fn max_nodes_cuts_a_big_graph_nearest_levels_first(app: TestApp) {
    // A tree of 5,000 containers: 10 children each, level by level (10, 100, 1,000, 3,889).
    let ds = app.datastore("big", "snowflake").await;
    let mut ids = Vec::with_capacity(5000);
    for chunk in (0..5000).collect::<Vec<usize>>().chunks(50) {
        let mut set = tokio::task::JoinSet::new();
        for &i in chunk {
            let store = app.store.clone();
            set.spawn(async move {
                let input = ContainerInput { datastore_id: ds, name: format!("t{i:04}"), ..Default::default() };
                (i, store.upsert_container(input).await.expect("container").0.id)
            });
        }
        let mut got: Vec<(usize, i64)> = set.join_all().await;
        got.sort();
        ids.extend(got.into_iter().map(|(_, id)| id));
    }
    let edges: Vec<NewEdge> = (1..5000)
        .map(|i| NewEdge {
            source: End::Container { id: ids[(i - 1) / 10] },
            target: End::Container { id: ids[i] },
            description: None,
            source_type: "manual".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: None,
        })
        .collect();
    app.store.create_edges(edges, false, now()).await.expect("edges");
    let level = |i: usize| match i {
        0 => 0,
        1..=10 => 1,
        11..=110 => 2,
        111..=1110 => 3,
        _ => 4,
    };
    let centre = ids[0];

    // The summary counts the whole graph without returning it.
    let s = app
        .ok(
            "query($c: Int!) { lineageSummary(containerId: $c, depth: 5, side: DOWNSTREAM) {
               nodes edges externalEdges isPartial levels { side distance nodes edges externalEdges } } }",
            json!({"c": centre}),
        )
        .await["lineageSummary"]
        .clone();
    let levels: Vec<(i64, i64, i64)> = s["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["distance"].as_i64().unwrap(), l["nodes"].as_i64().unwrap(), l["edges"].as_i64().unwrap()))
        .collect();
    assert_eq!(levels, vec![(1, 10, 10), (2, 100, 100), (3, 1000, 1000), (4, 3889, 3889)], "{s}");
    assert_eq!(
        (s["nodes"].as_i64(), s["edges"].as_i64(), s["isPartial"].as_bool()),
        (Some(5000), Some(4999), Some(false))
    );

    // 500 nodes: levels 0 to 2 whole (111), then the first 389 of level 3 by id.
    let g = app.ok(BUDGETED, json!({"c": centre, "d": 5, "n": 500})).await["lineageGraph"].clone();
    assert_eq!(g["isPartial"], true);
    let mut got: Vec<i64> = g["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
    got.sort();
    let mut want: Vec<i64> = ids[..500].to_vec();
    want.sort();
    assert_eq!(got, want, "nearest levels first");
    assert_eq!(g["edges"].as_array().unwrap().len(), 499, "the edges among the nodes kept");
    // The frontier: level-2 nodes that lost children to the budget (611 in all), and the kept
    // level-3 nodes, not expanded, with their own children beyond.
    let frontier = g["frontier"].as_array().unwrap();
    assert!(frontier.iter().all(|f| f["reason"] == "BUDGET" && f["side"] == "DOWNSTREAM"), "{frontier:?}");
    let at = |d: i64| frontier.iter().filter(move |f| f["distance"] == d);
    assert_eq!(at(2).map(|f| f["beyond"].as_i64().unwrap()).sum::<i64>(), 1000 - 389);
    let index = |id: &Value| ids.iter().position(|x| Some(*x) == id.as_i64()).unwrap();
    let level3: Vec<&Value> = at(3).collect();
    let with_children = (111..500).filter(|&i| (i * 10 + 1) < 5000).count();
    assert_eq!(level3.len(), with_children);
    for f in &level3 {
        let i = index(&f["id"]);
        assert_eq!(level(i), 3);
        let children = (i * 10 + 1..=i * 10 + 10).filter(|&c| c < 5000).count() as i64;
        assert_eq!(f["beyond"], children, "{f}");
    }
    for f in frontier {
        let n = g["nodes"].as_array().unwrap().iter().find(|n| n["id"] == f["id"]).unwrap();
        assert_eq!(n["hasDownstream"], true, "a frontier node is flagged: {n}");
    }
    // Nothing in the frontier lies nearer than what was kept whole.
    assert!(frontier.iter().all(|f| f["distance"].as_i64().unwrap() >= 2));

    // No budget at depth 2: the depth cuts, each level-2 node has its 10 children beyond.
    let g = app.ok(BUDGETED, json!({"c": centre, "d": 2})).await["lineageGraph"].clone();
    assert_eq!((g["isPartial"].clone(), g["nodes"].as_array().unwrap().len()), (json!(true), 111));
    let frontier = g["frontier"].as_array().unwrap();
    assert_eq!(frontier.len(), 100);
    assert!(frontier.iter().all(|f| f["reason"] == "DEPTH" && f["distance"] == 2 && f["beyond"] == 10), "{frontier:?}");
    // A budget the graph fits in, and a depth that reaches the leaves: complete.
    let g = app.ok(BUDGETED, json!({"c": ids[1110], "d": 5, "n": 100})).await["lineageGraph"].clone();
    assert_eq!((g["isPartial"].clone(), g["frontier"].clone()), (json!(false), json!([])), "{g}");
    for n in [0, 100_001] {
        let (code, msg) = app.err(BUDGETED, json!({"c": centre, "n": n})).await;
        assert_eq!((code.as_str(), msg), ("BAD_USER_INPUT", format!("maxNodes must be between 1 and 100000, got {n}")));
    }
    // The service's frontier and the store's count agree on a node's children.
    let counts = app.store.count_neighbours(&[ids[1]], Direction::Downstream, false, &[ids[11]]).await.unwrap();
    assert_eq!(counts, vec![(ids[1], 9)]);
}

async fn impact_and_pii_flow_report_their_frontier(app: TestApp) {
    let (ds, t) = warehouse(&app, &["a", "b", "c", "d", "e"]).await;
    // a → b, a → c, b → d, b → e.
    for (s, d) in [(0, 1), (0, 2), (1, 3), (1, 4)] {
        app.edge(t[s], t[d]).await;
    }
    let q = "query($c: Int!, $d: Int, $l: Int) { impact(containerId: $c, depth: $d, limit: $l) {
      isPartial containers { container { id } } frontier { id side distance reason beyond } } }";
    let i = app.ok(q, json!({"c": t[0], "d": 1})).await["impact"].clone();
    assert_eq!(i["isPartial"], true);
    assert_eq!(
        i["frontier"],
        json!([{"id": t[1], "side": "DOWNSTREAM", "distance": 1, "reason": "DEPTH", "beyond": 2}])
    );
    // The limit stops the first level after one container: a has c left, b (reached) has d and e.
    let i = app.ok(q, json!({"c": t[0], "l": 1})).await["impact"].clone();
    assert_eq!(
        i["frontier"],
        json!([
            {"id": t[0], "side": "DOWNSTREAM", "distance": 0, "reason": "LIMIT", "beyond": 1},
            {"id": t[1], "side": "DOWNSTREAM", "distance": 1, "reason": "LIMIT", "beyond": 2}
        ]),
        "{i}"
    );
    let whole = app.ok(q, json!({"c": t[0]})).await["impact"].clone();
    assert_eq!((whole["isPartial"].clone(), whole["frontier"].clone()), (json!(false), json!([])));

    let (_, f) = app.container(ds, "cols", &["x1", "x2", "x3"]).await;
    app.field_edge(f[0], f[1]).await;
    app.field_edge(f[1], f[2]).await;
    let p = app
        .ok(
            "query($f: Int!) { piiFlow(fieldId: $f, depth: 1) { isPartial frontier { id distance reason beyond } } }",
            json!({"f": f[0]}),
        )
        .await["piiFlow"]
        .clone();
    assert_eq!(p["frontier"], json!([{"id": f[1], "distance": 1, "reason": "DEPTH", "beyond": 1}]), "{p}");
}
