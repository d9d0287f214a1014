//! Graph queries: lineageGraph (depth, sides, flags, externals), fieldConnections, impact, piiFlow.

use serde_json::{json, Value};
use tributary::domain::{now, End, NewEdge};

use crate::both_stores;
use crate::catalog::openlineage_edge;
use crate::common::{ids, TestApp};

both_stores!(
    depth_is_validated_and_centre_must_exist,
    depth_bounds_the_graph_and_flags_mark_what_is_left_out,
    unsided_graph_has_no_siblings_but_every_edge_between_nodes,
    one_sided_graph_keeps_only_edges_on_its_paths,
    externals_only_in_external_arrays,
    flags_around_a_hub_count_only_live_edges_that_leave_the_answer,
    edges_between_the_last_levels_and_their_flags,
    field_connections_are_transitive_both_ways,
    impact_is_transitive_with_distance_via_and_limits,
    pii_flow_follows_value_carrying_edges,
    node_counts_and_records_whatever_the_selection,
);

const GRAPH: &str = "query($c: Int!, $d: Int, $s: Side) { lineageGraph(containerId: $c, depth: $d, side: $s) {
  nodes { nodeType id name isTarget hasUpstream hasDownstream fieldCount linkedFieldCount activeAnomalyCount datastore { id name } }
  edges { id sourceContainerId targetContainerId sourceType evidence { provider } }
  externalNodes { nodeType id fqn sourceType }
  externalEdges { id sourceNodeId targetNodeId sourceContainerId targetContainerId sourceType } } }";

fn node(g: &Value, id: i64) -> &Value {
    g["nodes"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap_or_else(|| panic!("node {id} in {g:#}"))
}

/// (has_upstream, has_downstream) of a node.
fn flags(g: &Value, id: i64) -> (bool, bool) {
    let n = node(g, id);
    (n["hasUpstream"].as_bool().unwrap(), n["hasDownstream"].as_bool().unwrap())
}

async fn chain(app: &TestApp, n: usize) -> Vec<i64> {
    let ds = app.datastore("wh", "snowflake").await;
    let mut out = Vec::new();
    for i in 0..n {
        out.push(app.container(ds, &format!("t{i}"), &[]).await.0);
    }
    for w in out.windows(2) {
        app.edge(w[0], w[1]).await;
    }
    out
}

async fn depth_is_validated_and_centre_must_exist(app: TestApp) {
    let c = chain(&app, 2).await;
    for d in [0, 21, -3] {
        let (code, msg) = app.err(GRAPH, json!({"c": c[0], "d": d})).await;
        assert_eq!(code, "BAD_USER_INPUT", "depth {d}: {msg}");
    }
    for d in [1, 20] {
        app.ok(GRAPH, json!({"c": c[0], "d": d})).await;
    }
    let (code, msg) = app.err(GRAPH, json!({"c": 5555})).await;
    assert_eq!((code.as_str(), msg.as_str()), ("NOT_FOUND", "Container 5555 not found"));
}

async fn depth_bounds_the_graph_and_flags_mark_what_is_left_out(app: TestApp) {
    let t = chain(&app, 5).await;
    let g = app.ok(GRAPH, json!({"c": t[2], "d": 1})).await["lineageGraph"].clone();
    assert_eq!(ids(&g["nodes"]), vec![t[1], t[2], t[3]]);
    assert_eq!(node(&g, t[2])["isTarget"], true);
    assert_eq!(node(&g, t[1])["isTarget"], false);
    assert_eq!(node(&g, t[1])["nodeType"], "container");
    assert_eq!(flags(&g, t[1]), (true, false), "t0 is upstream of t1 and not in the response");
    assert_eq!(flags(&g, t[2]), (false, false));
    assert_eq!(flags(&g, t[3]), (false, true));
    assert_eq!(g["edges"].as_array().unwrap().len(), 2);
    let g = app.ok(GRAPH, json!({"c": t[2], "d": 2})).await["lineageGraph"].clone();
    assert_eq!(ids(&g["nodes"]), t);
    for id in &t {
        assert_eq!(flags(&g, *id), (false, false));
    }
    // Default depth is 2.
    let d = app.ok("query($c: Int!) { lineageGraph(containerId: $c) { nodes { id } } }", json!({"c": t[0]})).await;
    assert_eq!(ids(&d["lineageGraph"]["nodes"]), vec![t[0], t[1], t[2]]);
}

async fn unsided_graph_has_no_siblings_but_every_edge_between_nodes(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let mut c = Vec::new();
    for name in ["a", "b", "s", "x"] {
        c.push(app.container(ds, name, &[]).await.0);
    }
    let (a, b, s, x) = (c[0], c[1], c[2], c[3]);
    app.edge(a, b).await;
    app.edge(a, s).await; // s is b's sibling: reached only by turning around at a
    app.edge(b, x).await;
    let g = app.ok(GRAPH, json!({"c": b, "d": 2})).await["lineageGraph"].clone();
    assert_eq!(ids(&g["nodes"]), vec![a, b, x]);
    assert_eq!(flags(&g, a), (false, true), "a connects downstream to s, which is not returned");
    assert_eq!(g["edges"].as_array().unwrap().len(), 2);
    assert_eq!(node(&g, a)["datastore"]["name"], "wh");
}

async fn one_sided_graph_keeps_only_edges_on_its_paths(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    let (c, _) = app.container(ds, "c", &[]).await;
    let (d, _) = app.container(ds, "d", &[]).await;
    let ab = app.edge(a, b).await;
    let bc = app.edge(b, c).await;
    let ac = app.edge(a, c).await;
    app.edge(c, d).await;
    let up = app.ok(GRAPH, json!({"c": c, "d": 1, "s": "UPSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(ids(&up["nodes"]), vec![a, b, c]);
    assert_eq!(ids(&up["edges"]), vec![bc, ac], "a->b is not on an upstream path of length 1");
    assert_eq!(flags(&up, a), (false, false), "a's only downstream containers are both returned");
    assert_eq!(flags(&up, c), (false, true), "d is downstream of c and not returned");
    let both = app.ok(GRAPH, json!({"c": c, "d": 1})).await["lineageGraph"].clone();
    assert_eq!(ids(&both["nodes"]), vec![a, b, c, d]);
    assert!(ids(&both["edges"]).contains(&ab), "without side every edge between returned nodes");
    let up2 = app.ok(GRAPH, json!({"c": c, "d": 2, "s": "UPSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(ids(&up2["edges"]), vec![ab, bc, ac]);
    let down = app.ok(GRAPH, json!({"c": a, "d": 5, "s": "DOWNSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(ids(&down["nodes"]), vec![a, b, c, d]);
}

async fn externals_only_in_external_arrays(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    app.edge(a, b).await;
    let x =
        openlineage_edge(&app, End::External { fqn: "SALES.PUBLIC.ORDERS_STAGING".into() }, End::Container { id: a })
            .await;
    let g = app.ok(GRAPH, json!({"c": b, "d": 2, "s": "UPSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(ids(&g["nodes"]), vec![a, b]);
    assert_eq!(g["edges"].as_array().unwrap().len(), 1);
    assert_eq!(
        g["externalNodes"],
        json!([{"nodeType": "external", "id": "ext:openlineage:SALES.PUBLIC.ORDERS_STAGING", "fqn": "SALES.PUBLIC.ORDERS_STAGING", "sourceType": "openlineage"}])
    );
    assert_eq!(
        g["externalEdges"],
        json!([{"id": x, "sourceNodeId": "ext:openlineage:SALES.PUBLIC.ORDERS_STAGING", "targetNodeId": null, "sourceContainerId": null, "targetContainerId": a, "sourceType": "openlineage"}])
    );
    assert_eq!(flags(&g, a), (false, false), "the external source is in the response");
    let g1 = app.ok(GRAPH, json!({"c": b, "d": 1, "s": "UPSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(g1["externalNodes"], json!([]), "the external is two hops away");
    assert_eq!(flags(&g1, a), (true, false));
}

async fn flags_around_a_hub_count_only_live_edges_that_leave_the_answer(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (hub, _) = app.container(ds, "hub", &[]).await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    let mut fed = Vec::new();
    for i in 0..40 {
        let (t, _) = app.container(ds, &format!("fed{i}"), &[]).await;
        app.edge(hub, t).await;
        fed.push(t);
    }
    app.edge(a, hub).await;
    app.edge(hub, b).await;
    // a's other way out is retired (a provider edge, deleted): it no longer counts.
    let (gone, _) = app.container(ds, "gone", &[]).await;
    let retired = openlineage_edge(&app, End::Container { id: a }, End::Container { id: gone }).await;
    app.ok("mutation($id: Int!) { deleteEdge(id: $id) }", json!({"id": retired})).await;
    // b is exported to a file: outside the answer unless the graph reached it.
    let x = openlineage_edge(&app, End::Container { id: b }, End::External { fqn: "s3://out/b".into() }).await;

    let g = app.ok(GRAPH, json!({"c": b, "d": 1})).await["lineageGraph"].clone();
    assert_eq!(ids(&g["nodes"]), vec![hub, b]);
    assert_eq!(flags(&g, hub), (true, true), "a feeds the hub, which feeds 40 tables not returned");
    assert_eq!(flags(&g, b), (false, false), "b's export is in the answer");
    assert_eq!(ids(&g["externalEdges"]), vec![x]);
    assert_eq!(g["edges"].as_array().unwrap().len(), 1, "hub -> b");

    let g = app.ok(GRAPH, json!({"c": a, "d": 2, "s": "DOWNSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(ids(&g["nodes"]).len(), 43, "a, the hub, b and the 40 tables");
    assert_eq!(flags(&g, a), (false, false), "the retired edge to gone does not count");
    assert_eq!(flags(&g, hub), (false, false), "everything the hub feeds is returned");
    assert_eq!(flags(&g, b), (false, true), "b's export lies one hop past the depth");
    assert_eq!(g["externalEdges"], json!([]));

    let g = app.ok(GRAPH, json!({"c": a, "d": 2})).await["lineageGraph"].clone();
    assert_eq!(g["edges"].as_array().unwrap().len(), 42, "every live edge between returned nodes");
}

/// The traversal reads each level's edges but the last one's: what joins the outermost nodes, or
/// leaves them, must still be in the answer.
async fn edges_between_the_last_levels_and_their_flags(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let mut c = std::collections::HashMap::new();
    for name in ["o", "u2", "u1", "m", "d1", "d2", "p"] {
        c.insert(name, app.container(ds, name, &[]).await.0);
    }
    let mut e = std::collections::HashMap::new();
    for (s, t) in
        [("o", "u2"), ("u2", "u1"), ("u1", "m"), ("m", "d1"), ("d1", "d2"), ("d2", "p"), ("u2", "d2"), ("d2", "u2")]
    {
        e.insert((s, t), app.edge(c[s], c[t]).await);
    }
    let edge_ids = |pairs: &[(&'static str, &'static str)]| {
        let mut v: Vec<i64> = pairs.iter().map(|k| e[k]).collect();
        v.sort();
        v
    };
    let g = app.ok(GRAPH, json!({"c": c["m"], "d": 2})).await["lineageGraph"].clone();
    let mut nodes: Vec<i64> = ["u2", "u1", "m", "d1", "d2"].iter().map(|n| c[n]).collect();
    nodes.sort();
    assert_eq!(ids(&g["nodes"]), nodes);
    assert_eq!(
        ids(&g["edges"]),
        edge_ids(&[("u2", "u1"), ("u1", "m"), ("m", "d1"), ("d1", "d2"), ("u2", "d2"), ("d2", "u2")]),
        "both edges between the outermost nodes, u2 and d2, are between returned nodes"
    );
    assert_eq!(flags(&g, c["u2"]), (true, false), "o feeds u2 and is not returned");
    assert_eq!(flags(&g, c["d2"]), (false, true), "d2 feeds p, which is not returned");
    for n in ["u1", "m", "d1"] {
        assert_eq!(flags(&g, c[n]), (false, false), "{n}");
    }

    let up = app.ok(GRAPH, json!({"c": c["m"], "d": 2, "s": "UPSTREAM"})).await["lineageGraph"].clone();
    assert_eq!(ids(&up["edges"]), edge_ids(&[("u2", "u1"), ("u1", "m")]));
    assert_eq!(flags(&up, c["u2"]), (true, true), "u2 also feeds d2, which this side does not return");
    assert_eq!(flags(&up, c["u1"]), (false, false));
    assert_eq!(flags(&up, c["m"]), (false, true));
}

async fn field_connections_are_transitive_both_ways(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (_, fa) = app.container(ds, "a", &["email"]).await;
    let (b, fb) = app.container(ds, "b", &["email", "other"]).await;
    let (c, fc) = app.container(ds, "c", &["email_upper"]).await;
    let (_, fd) = app.container(ds, "d", &["x"]).await;
    let e1 = app.field_edge(fa[0], fb[0]).await;
    let e2 = app.field_edge(fb[0], fc[0]).await;
    app.field_edge(fd[0], fa[0]).await;
    app.field_edge(fb[1], fc[0]).await; // sibling of b.email: not connected to it by direction
    let q = "query($f: Int!, $c: [Int!]) { fieldConnections(fieldId: $f, containerIds: $c) { fields { id name containerId } edges { id sourceFieldId targetFieldId sourceContainerId } } }";
    let v = app.ok(q, json!({"f": fb[0]})).await["fieldConnections"].clone();
    assert_eq!(ids(&v["fields"]), vec![fa[0], fc[0], fd[0]]);
    assert_eq!(v["edges"].as_array().unwrap().len(), 3);
    assert_eq!(v["edges"][0]["sourceContainerId"], json!(null));
    let only_c = app.ok(q, json!({"f": fb[0], "c": [c]})).await["fieldConnections"].clone();
    assert_eq!(ids(&only_c["fields"]), vec![fc[0]]);
    assert_eq!(ids(&only_c["edges"]), vec![e2]);
    let none = app.ok(q, json!({"f": fb[0], "c": [b]})).await["fieldConnections"].clone();
    assert_eq!(none["fields"], json!([]));
    let _ = e1;
    let (code, _) = app.err(q, json!({"f": 424242})).await;
    assert_eq!(code, "NOT_FOUND");
}

async fn impact_is_transitive_with_distance_via_and_limits(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let mut t = Vec::new();
    for i in 0..5 {
        t.push(app.container(ds, &format!("t{i}"), &[]).await.0);
    }
    let e01 = app.edge(t[0], t[1]).await;
    app.edge(t[1], t[2]).await;
    app.edge(t[0], t[3]).await;
    app.edge(t[3], t[2]).await; // diamond
    app.edge(t[2], t[4]).await;
    app.edge(t[4], t[0]).await; // cycle back to the start
    let q = "query($c: Int!, $d: Int, $s: Side, $l: Int) { impact(containerId: $c, depth: $d, side: $s, limit: $l) { isPartial containers { distance container { id name } via { id sourceContainerId targetContainerId } } } }";
    let v = app.ok(q, json!({"c": t[0]})).await["impact"].clone();
    assert_eq!(v["isPartial"], false);
    let got: Vec<(i64, i64)> = v["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["container"]["id"].as_i64().unwrap(), c["distance"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![(t[1], 1), (t[3], 1), (t[2], 2), (t[4], 3)],
        "each container once, nearest distance, the start excluded"
    );
    assert_eq!(v["containers"][0]["via"]["id"], e01);
    assert_eq!(v["containers"][2]["via"]["targetContainerId"], t[2]);
    let cut = app.ok(q, json!({"c": t[0], "d": 2})).await["impact"].clone();
    assert_eq!(cut["isPartial"], true, "t4 lies beyond depth 2");
    assert_eq!(cut["containers"].as_array().unwrap().len(), 3);
    let lim = app.ok(q, json!({"c": t[0], "l": 2})).await["impact"].clone();
    assert_eq!(lim["isPartial"], true);
    assert_eq!(lim["containers"].as_array().unwrap().len(), 2);
    let up = app.ok(q, json!({"c": t[2], "s": "UPSTREAM", "d": 1})).await["impact"].clone();
    let mut up_ids: Vec<i64> =
        up["containers"].as_array().unwrap().iter().map(|c| c["container"]["id"].as_i64().unwrap()).collect();
    up_ids.sort();
    assert_eq!(up_ids, vec![t[1], t[3]]);
    assert_eq!(up["isPartial"], true);
    let (code, _) = app.err(q, json!({"c": t[0], "l": 0})).await;
    assert_eq!(code, "BAD_USER_INPUT");
}

async fn field_edge(app: &TestApp, s: (i64, i64), t: (i64, i64), transformations: Value) -> i64 {
    let derived =
        transformations.as_array().map(|a| a.iter().any(|x| !(x["type"] == "DIRECT" && x["subtype"] == "IDENTITY")));
    app.store
        .create_edges(
            vec![NewEdge {
                source: End::Field { id: s.1, container_id: s.0 },
                target: End::Field { id: t.1, container_id: t.0 },
                description: None,
                source_type: "openlineage".into(),
                operation: Some("run_event".into()),
                derived,
                transformations: Some(transformations),
                last_asserted_at: Some(now()),
            }],
            false,
            now(),
        )
        .await
        .expect("field edge")[0]
        .id
}

async fn pii_flow_follows_value_carrying_edges(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, fa) = app.container(ds, "users", &["email"]).await;
    let (b, fb) = app.container(ds, "stage", &["email", "email_hash"]).await;
    let (c, fc) = app.container(ds, "mart", &["email_upper", "filtered"]).await;
    let (d, fd) = app.container(ds, "report", &["email"]).await;
    let identity = json!([{"type": "DIRECT", "subtype": "IDENTITY"}]);
    field_edge(&app, (a, fa[0]), (b, fb[0]), identity.clone()).await;
    field_edge(&app, (a, fa[0]), (b, fb[1]), json!([{"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": true}]))
        .await;
    field_edge(&app, (b, fb[0]), (c, fc[0]), json!([{"type": "DIRECT", "subtype": "TRANSFORMATION"}])).await;
    field_edge(&app, (b, fb[0]), (c, fc[1]), json!([{"type": "INDIRECT", "subtype": "FILTER"}])).await;
    field_edge(&app, (c, fc[0]), (d, fd[0]), identity).await;
    let q = "query($f: Int!, $i: Boolean, $m: Boolean, $s: Side) { piiFlow(fieldId: $f, includeIndirect: $i, throughMasking: $m, side: $s) { isPartial fields { distance derived field { id name containerId } } } }";
    let v = app.ok(q, json!({"f": fa[0]})).await["piiFlow"].clone();
    let got: Vec<(i64, i64, bool)> = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["field"]["id"].as_i64().unwrap(), f["distance"].as_i64().unwrap(), f["derived"].as_bool().unwrap()))
        .collect();
    assert_eq!(got, vec![(fb[0], 1, false), (fc[0], 2, true), (fd[0], 3, true)], "stops at the mask, skips INDIRECT");
    let all = app.ok(q, json!({"f": fa[0], "i": true, "m": true})).await["piiFlow"].clone();
    let mut all_ids: Vec<i64> =
        all["fields"].as_array().unwrap().iter().map(|f| f["field"]["id"].as_i64().unwrap()).collect();
    all_ids.sort();
    assert_eq!(all_ids, vec![fb[0], fb[1], fc[0], fc[1], fd[0]]);
    let up = app.ok(q, json!({"f": fd[0], "s": "UPSTREAM"})).await["piiFlow"].clone();
    let up_ids: Vec<i64> =
        up["fields"].as_array().unwrap().iter().map(|f| f["field"]["id"].as_i64().unwrap()).collect();
    assert_eq!(up_ids, vec![fc[0], fb[0], fa[0]], "where the value came from");
    let (code, _) = app.err(q, json!({"f": 31337})).await;
    assert_eq!(code, "NOT_FOUND");
}

/// `fieldCount` alone reads the counts alone, `linkedFieldCount` the full stats, both one read
/// for the two; the answers agree, count live fields only, and say 0 for a container without
/// any. A node's container fields come from the record attached at prefetch.
async fn node_counts_and_records_whatever_the_selection(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, af) = app.container(ds, "a", &["x", "y", "z"]).await;
    let (b, bf) = app.container(ds, "b", &["x", "y"]).await;
    let (c, _) = app.container(ds, "c", &[]).await;
    app.edge(a, b).await;
    app.edge(b, c).await;
    app.field_edge(af[0], bf[0]).await;
    let d = app.ok("mutation($id: Int!) { deleteField(id: $id) }", json!({"id": af[2]})).await;
    assert_eq!(d["deleteField"], true);

    let counts = |g: &Value, key: &str| -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = g["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| (n["id"].as_i64().expect("id"), n[key].as_i64().unwrap_or_else(|| panic!("{key} in {n}"))))
            .collect();
        v.sort();
        v
    };
    let graph = |selection: &str| {
        format!("query($c: Int!) {{ lineageGraph(containerId: $c, depth: 1) {{ nodes {{ id {selection} }} }} }}")
    };
    let alone = app.ok(&graph("fieldCount"), json!({"c": b})).await["lineageGraph"].clone();
    assert_eq!(counts(&alone, "fieldCount"), vec![(a, 2), (b, 2), (c, 0)], "{alone:#}");
    let linked = app.ok(&graph("linkedFieldCount"), json!({"c": b})).await["lineageGraph"].clone();
    assert_eq!(counts(&linked, "linkedFieldCount"), vec![(a, 1), (b, 1), (c, 0)], "{linked:#}");
    let both = app.ok(&graph("fieldCount linkedFieldCount"), json!({"c": b})).await["lineageGraph"].clone();
    assert_eq!(counts(&both, "fieldCount"), vec![(a, 2), (b, 2), (c, 0)], "{both:#}");
    assert_eq!(counts(&both, "linkedFieldCount"), vec![(a, 1), (b, 1), (c, 0)], "{both:#}");

    // The same counts on a plain container, and the node's record fields.
    let one = app.ok("query($c: Int!) { container(id: $c) { fieldCount linkedFieldCount } }", json!({"c": a})).await;
    assert_eq!(
        (one["container"]["fieldCount"].as_i64(), one["container"]["linkedFieldCount"].as_i64()),
        (Some(2), Some(1))
    );
    let records = app.ok(&graph("name containerType datastore { id } container { id name }"), json!({"c": b})).await
        ["lineageGraph"]
        .clone();
    for (id, name) in [(a, "a"), (b, "b"), (c, "c")] {
        let n = node(&records, id);
        assert_eq!(n["name"], name, "{n}");
        assert_eq!(n["container"]["name"], name, "{n}");
        assert_eq!(n["container"]["id"], id, "{n}");
        assert_eq!(n["datastore"]["id"], ds, "{n}");
        assert!(n["containerType"].is_string(), "{n}");
    }
}
