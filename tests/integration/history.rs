//! Lineage as of a past instant and diffs between two instants (issue #19, parts 1 and 2), and
//! the sticky terminal state of a run, fed through the real OpenLineage endpoint.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::{ids, TestApp};
use crate::openlineage::run_event;

both_stores!(
    an_edge_retired_and_revived_is_live_only_inside_its_intervals,
    a_diff_lists_what_a_sequence_of_runs_added_and_retired,
    bad_instants_are_refused,
    a_late_start_keeps_the_completed_state,
    as_of_graphs_and_diffs_agree_with_the_edges_live_then,
);

const WH: &str = "postgres://warehouse.example.com:5432";

fn ds(name: &str) -> Value {
    json!({"namespace": WH, "name": format!("analytics.public.{name}")})
}

fn with_lifecycle(mut d: Value, change: Value) -> Value {
    let mut facet = json!({"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json"});
    if let (Some(f), Some(c)) = (facet.as_object_mut(), change.as_object()) {
        f.extend(c.clone());
    }
    d["facets"] = json!({ "lifecycleStateChange": facet });
    d
}

/// An instant strictly between what was recorded before and what is recorded after.
async fn instant() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    let t = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    tokio::time::sleep(Duration::from_millis(20)).await;
    t
}

impl TestApp {
    async fn table(&self, datastore: i64, name: &str) -> i64 {
        self.ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": datastore, "database": "analytics", "schema": "public", "name": name, "fields": [{"name": "email"}]}}),
        )
        .await["upsertContainer"]["id"]
            .as_i64()
            .unwrap()
    }

    async fn send(&self, event: Value) {
        let (status, body) = self.post("/api/v1/lineage", &event).await;
        assert_eq!(status, 201, "{body}");
    }

    /// (source, target) container ids of a graph's edges, sorted.
    async fn graph_pairs(&self, container: i64, as_of: &str) -> Vec<(i64, i64)> {
        let g = self
            .ok(
                "query($c: Int!, $t: DateTime) { lineageGraph(containerId: $c, depth: 3, asOf: $t) { edges { sourceContainerId targetContainerId } } }",
                json!({"c": container, "t": as_of}),
            )
            .await;
        pairs_of(&g["lineageGraph"]["edges"])
    }
}

fn pairs_of(edges: &Value) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = edges
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["sourceContainerId"].as_i64().unwrap_or(-1), e["targetContainerId"].as_i64().unwrap_or(-1)))
        .collect();
    out.sort();
    out
}

async fn an_edge_retired_and_revived_is_live_only_inside_its_intervals(app: TestApp) {
    let (_, raw, orders) = app.warehouse().await;
    app.send(run_event("COMPLETE", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    let edge = app.ok("{ edges { items { id } } }", json!({})).await["edges"]["items"][0]["id"].as_i64().unwrap();
    let live1 = instant().await;
    app.ok("mutation($e: Int!) { deleteEdge(id: $e) }", json!({"e": edge})).await;
    let dead = instant().await;
    app.send(run_event("COMPLETE", "r2", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    let live2 = instant().await;
    let fields =
        app.ok("query($c: Int!) { containerFields(containerId: $c) { items { id name } } }", json!({"c": raw})).await;
    let raw_email =
        fields["containerFields"]["items"].as_array().unwrap().iter().find(|f| f["name"] == "email").unwrap()["id"]
            .as_i64()
            .unwrap();
    let orders_fields = app
        .ok("query($c: Int!) { containerFields(containerId: $c) { items { id name } } }", json!({"c": orders}))
        .await;
    let orders_email =
        orders_fields["containerFields"]["items"].as_array().unwrap().iter().find(|f| f["name"] == "email").unwrap()
            ["id"]
            .as_i64()
            .unwrap();
    app.field_edge(raw_email, orders_email).await;

    // The graph, impact and the edge listings answer from the edge's intervals.
    assert_eq!(app.graph_pairs(raw, &live1).await, vec![(raw, orders)], "live in its first interval");
    assert_eq!(app.graph_pairs(raw, &dead).await, vec![], "retired between its intervals");
    assert_eq!(app.graph_pairs(raw, &live2).await, vec![(raw, orders)], "live again once revived");
    let q = "query($c: Int!, $e: Int!, $t: DateTime) {
        impact(containerId: $c, asOf: $t) { containers { container { id } } asOf { at reconstructed notReconstructed } }
        edges(asOf: $t) { total items { id } }
        edge(id: $e, asOf: $t) { id retiredAt }
        lineageGraph(containerId: $c, asOf: $t) { nodes { id hasDownstream } asOf { at } } }";
    let at_dead = app.ok(q, json!({"c": raw, "e": edge, "t": dead})).await;
    assert_eq!(at_dead["impact"]["containers"], json!([]));
    assert_eq!(at_dead["edges"]["total"], 0, "{at_dead}");
    assert_eq!(at_dead["edge"], Value::Null);
    assert_eq!(at_dead["lineageGraph"]["nodes"], json!([{"id": raw, "hasDownstream": false}]));
    assert_eq!(at_dead["lineageGraph"]["asOf"]["at"], json!(dead));
    let reconstructed = at_dead["impact"]["asOf"]["reconstructed"].as_array().unwrap();
    assert!(reconstructed[0].as_str().unwrap().contains("live intervals"), "{reconstructed:?}");
    assert!(at_dead["impact"]["asOf"]["notReconstructed"][0].as_str().unwrap().contains("today's"));
    // Health (on impact items) is computed from the runs then, and the answer says so.
    let rebuilt = at_dead["impact"]["asOf"]["reconstructed"].to_string();
    assert!(rebuilt.contains("health (healthAlert, impact's health)"), "{rebuilt}");
    let at_live = app.ok(q, json!({"c": raw, "e": edge, "t": live1})).await;
    assert_eq!(
        ids(&at_live["impact"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["container"].clone())
            .collect::<Value>()),
        vec![orders]
    );
    assert_eq!(at_live["edges"]["items"], json!([{"id": edge}]));
    assert_eq!(at_live["edge"]["id"], edge);
    assert_eq!(at_live["lineageGraph"]["nodes"].as_array().unwrap().len(), 2);
    // explainLineage searches the edges live at the instant, as the other traversals do.
    let xq = "query($a: EndInput!, $b: EndInput!, $t: DateTime) {
        explainLineage(from: $a, to: $b, asOf: $t) { reason paths { length nodeIds } } }";
    let (a, b) = (json!({"containerId": raw}), json!({"containerId": orders}));
    let explained = app.ok(xq, json!({"a": a, "b": b, "t": live1})).await;
    assert_eq!(explained["explainLineage"]["paths"], json!([{"length": 1, "nodeIds": [raw, orders]}]));
    let explained = app.ok(xq, json!({"a": a, "b": b, "t": dead})).await;
    assert_eq!(explained["explainLineage"], json!({"reason": "NO_CONNECTION", "paths": []}), "retired then");
    let (fa, fb) = (json!({"fieldId": raw_email}), json!({"fieldId": orders_email}));
    let explained = app.ok(xq, json!({"a": fa, "b": fb, "t": live2})).await;
    assert_eq!(explained["explainLineage"]["paths"], json!([]), "the field edge came after");
    let explained = app.ok(xq, json!({"a": fa, "b": fb, "t": null})).await;
    assert_eq!(explained["explainLineage"]["paths"], json!([{"length": 1, "nodeIds": [raw_email, orders_email]}]));
    // Today's answers carry no `asOf` and still see the field edge made after `live2`.
    let now = app.ok(q, json!({"c": raw, "e": edge, "t": null})).await;
    assert_eq!(now["impact"]["asOf"], Value::Null);
    assert_eq!(now["edges"]["total"], 2);
    // Field-level: the field edge did not exist at `live2`.
    let fq = "query($f: Int!, $t: DateTime) {
        piiFlow(fieldId: $f, asOf: $t) { fields { field { id } } asOf { at } }
        fieldConnections(fieldId: $f, asOf: $t) { fields { id } edges { id } asOf { at } } }";
    let then = app.ok(fq, json!({"f": raw_email, "t": live2})).await;
    assert_eq!(then["piiFlow"]["fields"], json!([]));
    assert_eq!(then["fieldConnections"]["fields"], json!([]));
    assert_eq!(then["fieldConnections"]["asOf"]["at"], json!(live2));
    let today = app.ok(fq, json!({"f": raw_email, "t": null})).await;
    assert_eq!(today["piiFlow"]["fields"], json!([{"field": {"id": orders_email}}]));
    assert_eq!(ids(&today["fieldConnections"]["fields"]), vec![orders_email]);
    assert_eq!(today["fieldConnections"]["asOf"], Value::Null);
}

async fn a_diff_lists_what_a_sequence_of_runs_added_and_retired(app: TestApp) {
    let (ds_id, raw, orders) = app.warehouse().await;
    let (audit, stage, report, orders_v2) = (
        app.table(ds_id, "audit").await,
        app.table(ds_id, "stage").await,
        app.table(ds_id, "report").await,
        app.table(ds_id, "orders_v2").await,
    );
    app.send(run_event("COMPLETE", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    app.send(run_event("START", "r2", "audit", vec![ds("orders")], vec![ds("audit")])).await;
    app.send(run_event("COMPLETE", "r3", "stage", vec![ds("raw_orders")], vec![ds("stage")])).await;
    let from = instant().await;
    // The failed run's edge retires; a new job's edge appears; a DROP and a RENAME retire and move.
    app.send(run_event("FAIL", "r2", "audit", vec![], vec![])).await;
    app.send(run_event("COMPLETE", "r4", "report", vec![ds("orders")], vec![ds("report")])).await;
    let drop = with_lifecycle(ds("stage"), json!({"lifecycleStateChange": "DROP"}));
    app.send(run_event("COMPLETE", "r5", "dropper", vec![], vec![drop])).await;
    let rename = with_lifecycle(
        ds("orders_v2"),
        json!({"lifecycleStateChange": "RENAME", "previousIdentifier": {"namespace": WH, "name": "analytics.public.orders"}}),
    );
    app.send(run_event("COMPLETE", "r6", "renamer", vec![], vec![rename])).await;
    let to = instant().await;
    // Changes after `to` are not in the diff.
    app.send(run_event("COMPLETE", "r7", "late", vec![ds("raw_orders")], vec![ds("audit")])).await;

    let q = "query($c: Int!, $f: DateTime!, $t: DateTime) { lineageDiff(containerId: $c, depth: 3, from: $f, to: $t) {
        from to
        appearedNodes { kind containerId } retiredNodes { kind containerId }
        appearedEdges { at edge { sourceContainerId targetContainerId sourceType evidence { observedAt retiredAt details } } }
        retiredEdges { at edge { sourceContainerId targetContainerId retiredAt evidence { retiredAt details } } }
        relabelledEdges { before { at } }
        asOf { at } } }";
    let d = app.ok(q, json!({"c": raw, "f": from, "t": to})).await["lineageDiff"].clone();
    let nodes = |v: &Value| -> Vec<i64> {
        let mut out: Vec<i64> = v.as_array().unwrap().iter().map(|n| n["containerId"].as_i64().unwrap()).collect();
        out.sort();
        out
    };
    let mut appeared_nodes = vec![report, orders_v2];
    appeared_nodes.sort();
    let mut retired_nodes = vec![orders, audit, stage];
    retired_nodes.sort();
    assert_eq!(nodes(&d["appearedNodes"]), appeared_nodes, "{d:#}");
    assert_eq!(nodes(&d["retiredNodes"]), retired_nodes, "{d:#}");
    let edges = |k: &str| pairs_of(&Value::Array(d[k].as_array().unwrap().iter().map(|c| c["edge"].clone()).collect()));
    let mut appeared = vec![(raw, orders_v2), (orders_v2, report)];
    appeared.sort();
    let mut retired = vec![(raw, orders), (orders, audit), (raw, stage)];
    retired.sort();
    assert_eq!(edges("appearedEdges"), appeared);
    assert_eq!(edges("retiredEdges"), retired);
    assert_eq!(d["relabelledEdges"], json!([]));
    assert_eq!(d["asOf"]["at"], json!(to));
    // Every change happened between the two instants, and its evidence names the run behind it.
    for change in d["appearedEdges"].as_array().unwrap().iter().chain(d["retiredEdges"].as_array().unwrap()) {
        let at = change["at"].as_str().unwrap();
        assert!(from.as_str() < at && at <= to.as_str(), "{change}");
    }
    let evidence_of = |k: &str, pair: (i64, i64)| -> Value {
        d[k].as_array()
            .unwrap()
            .iter()
            .find(|c| {
                (c["edge"]["sourceContainerId"].as_i64(), c["edge"]["targetContainerId"].as_i64())
                    == (Some(pair.0), Some(pair.1))
            })
            .unwrap()["edge"]["evidence"][0]
            .clone()
    };
    let moved = evidence_of("appearedEdges", (raw, orders_v2));
    assert_eq!((&moved["details"]["job"]["name"], &moved["details"]["runId"]), (&json!("load"), &json!("r1")));
    let new = evidence_of("appearedEdges", (orders_v2, report));
    assert_eq!((&new["details"]["job"]["name"], &new["details"]["runId"]), (&json!("report"), &json!("r4")));
    let failed = evidence_of("retiredEdges", (orders, audit));
    assert_eq!((&failed["details"]["job"]["name"], &failed["details"]["runId"]), (&json!("audit"), &json!("r2")));
    assert!(failed["retiredAt"].is_string());
    let dropped = evidence_of("retiredEdges", (raw, stage));
    assert_eq!(dropped["details"]["job"]["name"], "stage");
    assert!(dropped["retiredAt"].is_string());

    // Without `to`, the diff runs to now and sees the later run too.
    let until_now = app.ok(q, json!({"c": raw, "f": from})).await["lineageDiff"].clone();
    let mut still_retired = vec![orders, stage];
    still_retired.sort();
    assert_eq!(nodes(&until_now["retiredNodes"]), still_retired, "audit is reached again, from raw_orders");
    let late: Vec<(i64, i64)> = pairs_of(&Value::Array(
        until_now["appearedEdges"].as_array().unwrap().iter().map(|c| c["edge"].clone()).collect(),
    ));
    let mut appeared_by_now = vec![(raw, orders_v2), (orders_v2, report), (raw, audit)];
    appeared_by_now.sort();
    assert_eq!(late, appeared_by_now);

    // Field level: the DROP retired the dropped table's field edges of no one; a manual field
    // edge made between the instants appears.
    let email = |c: i64| {
        let app = &app;
        async move {
            let f = app
                .ok("query($c: Int!) { containerFields(containerId: $c) { items { id name } } }", json!({"c": c}))
                .await;
            f["containerFields"]["items"].as_array().unwrap().iter().find(|f| f["name"] == "email").unwrap()["id"]
                .as_i64()
                .unwrap()
        }
    };
    let (raw_email, report_email) = (email(raw).await, email(report).await);
    let before_field = instant().await;
    app.field_edge(raw_email, report_email).await;
    let fd = app
        .ok(
            "query($f: Int!, $from: DateTime!) { fieldLineageDiff(fieldId: $f, from: $from) {
                appearedNodes { kind fieldId } retiredNodes { kind } appearedEdges { edge { sourceFieldId targetFieldId } } retiredEdges { at } } }",
            json!({"f": raw_email, "from": before_field}),
        )
        .await["fieldLineageDiff"]
        .clone();
    assert_eq!(fd["appearedNodes"], json!([{"kind": "field", "fieldId": report_email}]));
    assert_eq!(fd["appearedEdges"], json!([{"edge": {"sourceFieldId": raw_email, "targetFieldId": report_email}}]));
    assert_eq!((&fd["retiredNodes"], &fd["retiredEdges"]), (&json!([]), &json!([])));
}

async fn bad_instants_are_refused(app: TestApp) {
    let (_, raw, _) = app.warehouse().await;
    let graph = "query($c: Int!, $t: DateTime) { lineageGraph(containerId: $c, asOf: $t) { nodes { id } } }";
    let (code, message) = app.err(graph, json!({"c": raw, "t": "2020-01-01T00:00:00Z"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert_eq!(
        message,
        "asOf 2020-01-01T00:00:00.000000Z: nothing has been recorded yet, so there is no lineage to show as of a time"
    );
    app.send(run_event("COMPLETE", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    let (code, message) = app.err(graph, json!({"c": raw, "t": "2020-01-01T00:00:00Z"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(
        message.starts_with(
            "asOf 2020-01-01T00:00:00.000000Z is before anything was recorded (the first edge was recorded at 20"
        ),
        "{message}"
    );
    let (code, message) = app.err(graph, json!({"c": raw, "t": "2999-01-01T00:00:00Z"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.starts_with("asOf 2999-01-01T00:00:00.000000Z is in the future (now is 20"), "{message}");
    for (query, name) in [
        ("query($t: DateTime) { edges(asOf: $t) { total } }", "asOf"),
        ("query($t: DateTime) { edge(id: 1, asOf: $t) { id } }", "asOf"),
        ("query($t: DateTime) { impact(containerId: 1, asOf: $t) { isPartial } }", "asOf"),
        ("query($t: DateTime!) { lineageDiff(containerId: 1, from: $t) { from } }", "from"),
    ] {
        let (code, message) = app.err(query, json!({"t": "2999-01-01T00:00:00Z"})).await;
        assert_eq!(code, "BAD_USER_INPUT", "{query}");
        assert!(message.starts_with(&format!("{name} 2999-01-01T")), "{query}: {message}");
    }
    let (code, message) = app.err(graph, json!({"c": raw, "t": "last tuesday"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.contains("not an RFC 3339 date-time"), "{message}");
    let now = instant().await;
    let (code, message) = app
        .err(
            "query($c: Int!, $f: DateTime!, $t: DateTime) { lineageDiff(containerId: $c, from: $f, to: $t) { from } }",
            json!({"c": raw, "f": now, "t": now}),
        )
        .await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert_eq!(message, format!("from must be before to, got from {now} and to {now}"));
    let (code, _) = app
        .err("query($f: DateTime!) { lineageDiff(containerId: 999999, from: $f) { from } }", json!({"f": now}))
        .await;
    assert_eq!(code, "NOT_FOUND");
}

/// The `runState` of each live edge's first evidence row.
async fn run_states(app: &TestApp) -> Vec<Value> {
    app.live_edges().await.iter().map(|e| e["evidence"][0]["details"]["runState"].clone()).collect()
}

async fn a_late_start_keeps_the_completed_state(app: TestApp) {
    app.warehouse().await;
    app.send(run_event("COMPLETE", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    app.send(run_event("START", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!(run_states(&app).await, vec![json!("COMPLETE")], "a START after its COMPLETE");
    app.send(run_event("RUNNING", "r1", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!(run_states(&app).await, vec![json!("COMPLETE")], "a RUNNING after its COMPLETE");
    // In one request, in that order, too.
    let (status, body) = app
        .post(
            "/api/v1/lineage",
            &json!([
                run_event("COMPLETE", "r2", "load", vec![ds("raw_orders")], vec![ds("orders")]),
                run_event("START", "r2", "load", vec![ds("raw_orders")], vec![ds("orders")]),
            ]),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let e = app.live_edges().await;
    assert_eq!(e[0]["evidence"][0]["details"]["runId"], "r2");
    assert_eq!(e[0]["evidence"][0]["details"]["runState"], "COMPLETE");
    // A START of a new run still records START.
    app.send(run_event("START", "r3", "load", vec![ds("raw_orders")], vec![ds("orders")])).await;
    assert_eq!(run_states(&app).await, vec![json!("START")]);
}

/// A container-level end as the oracle below keys it: a container id or an external asset's fqn.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Node {
    C(i64),
    X(String),
}

/// A live container-level edge as `edges(asOf:)` lists it: (id, source, target, sourceType).
type LiveEdge = (i64, Node, Node, String);

fn node_of(e: &Value, side: &str) -> Node {
    match e[format!("{side}ContainerId")].as_i64() {
        Some(id) => Node::C(id),
        None => Node::X(e[format!("{side}ExternalFqn")].as_str().unwrap().to_string()),
    }
}

/// What `lineageGraph(containerId, depth, asOf)` must draw, worked out from the edges live then
/// alone: (container ids, external node ids, edge ids, external edge ids, hasUpstream ids,
/// hasDownstream ids).
type Drawn = (BTreeSet<i64>, BTreeSet<String>, BTreeSet<i64>, BTreeSet<i64>, BTreeSet<i64>, BTreeSet<i64>);

fn draw(live: &[LiveEdge], centre: i64, depth: usize) -> Drawn {
    let mut nodes = BTreeSet::from([centre]);
    let mut externals: BTreeSet<i64> = BTreeSet::new();
    for upstream in [true, false] {
        let mut seen = BTreeSet::from([centre]);
        let mut frontier = vec![centre];
        for _ in 0..depth {
            let mut next = Vec::new();
            for (id, s, t, _) in live {
                let (near, far) = if upstream { (t, s) } else { (s, t) };
                if !matches!(near, Node::C(n) if frontier.contains(n)) {
                    continue;
                }
                match far {
                    Node::C(f) if seen.insert(*f) => next.push(*f),
                    Node::X(_) => {
                        externals.insert(*id);
                    }
                    _ => {}
                }
            }
            nodes.extend(&next);
            frontier = next;
        }
    }
    let inside = |n: &Node| matches!(n, Node::C(c) if nodes.contains(c));
    let edges = live.iter().filter(|(_, s, t, _)| inside(s) && inside(t)).map(|e| e.0).collect();
    let leaves = |id: i64, far: &Node| match far {
        Node::C(c) => !nodes.contains(c),
        Node::X(_) => !externals.contains(&id),
    };
    let (mut up, mut down) = (BTreeSet::new(), BTreeSet::new());
    for (id, s, t, _) in live {
        if let Node::C(c) = t {
            if nodes.contains(c) && leaves(*id, s) {
                up.insert(*c);
            }
        }
        if let Node::C(c) = s {
            if nodes.contains(c) && leaves(*id, t) {
                down.insert(*c);
            }
        }
    }
    let external_nodes = live
        .iter()
        .filter(|e| externals.contains(&e.0))
        .flat_map(|(_, s, t, st)| {
            [s, t].into_iter().filter_map(move |n| match n {
                Node::X(fqn) => Some(format!("ext:{st}:{fqn}")),
                Node::C(_) => None,
            })
        })
        .collect();
    (nodes, external_nodes, edges, externals, up, down)
}

/// As of instants around edges created, retired (a job's next run, a failed run) and revived (an
/// edge with two intervals), with external assets at both ends: `lineageGraph` draws what the
/// edges live then (`edges(asOf:)`, a listing filtered in the service) draw, its
/// `hasUpstream`/`hasDownstream` flags included, from several centres and depths; and
/// `lineageDiff` between any two of the instants lists exactly what differs between the two
/// graphs (it reads both instants in one traversal; the graphs are read one instant at a time).
async fn as_of_graphs_and_diffs_agree_with_the_edges_live_then(app: TestApp) {
    let (ds_id, raw, orders) = app.warehouse().await;
    // b and c are only drawn; their tables make the events' datasets containers.
    let (a, _b, _c, d, e) = (
        app.table(ds_id, "a").await,
        app.table(ds_id, "b").await,
        app.table(ds_id, "c").await,
        app.table(ds_id, "d").await,
        app.table(ds_id, "e").await,
    );
    let landing = json!({"namespace": "s3://landing", "name": "drop/orders.csv"});
    let export = json!({"namespace": "s3://exports", "name": "b.parquet"});
    app.send(run_event("COMPLETE", "r1", "load", vec![landing.clone()], vec![ds("raw_orders")])).await;
    app.send(run_event("COMPLETE", "r2", "clean", vec![ds("raw_orders")], vec![ds("orders"), ds("a")])).await;
    app.send(run_event("COMPLETE", "r3", "agg", vec![ds("orders")], vec![ds("b")])).await;
    app.send(run_event("COMPLETE", "r4", "fan", vec![ds("a")], vec![ds("c"), ds("d")])).await;
    let t1 = instant().await;
    app.send(run_event("COMPLETE", "r5", "clean", vec![ds("raw_orders")], vec![ds("orders")])).await;
    app.send(run_event("COMPLETE", "r6", "export", vec![ds("b")], vec![export.clone()])).await;
    app.send(run_event("START", "r7", "agg2", vec![ds("d")], vec![ds("e")])).await;
    let t2 = instant().await;
    app.send(run_event("COMPLETE", "r8", "clean", vec![ds("raw_orders")], vec![ds("orders"), ds("a")])).await;
    app.send(run_event("FAIL", "r7", "agg2", vec![], vec![])).await;
    let t3 = instant().await;
    app.send(run_event("COMPLETE", "r9", "fan", vec![ds("a")], vec![ds("c")])).await;
    let t4 = instant().await;
    let instants = [t1, t2, t3, t4];

    let listing = "query($t: DateTime) { edges(asOf: $t, size: 1000) { total items {
        id sourceType sourceContainerId targetContainerId sourceExternalFqn targetExternalFqn sourceFieldId targetFieldId } } }";
    let graph = "query($c: Int!, $d: Int!, $t: DateTime) { lineageGraph(containerId: $c, depth: $d, asOf: $t) {
        nodes { id hasUpstream hasDownstream } edges { id } externalNodes { id } externalEdges { id } } }";
    let mut drawn: BTreeMap<(i64, usize, usize), Drawn> = BTreeMap::new();
    for (i, t) in instants.iter().enumerate() {
        let listed = app.ok(listing, json!({"t": t})).await["edges"].clone();
        let live: Vec<LiveEdge> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["sourceFieldId"].is_null() && e["targetFieldId"].is_null())
            .map(|e| {
                let st = e["sourceType"].as_str().unwrap().to_string();
                (e["id"].as_i64().unwrap(), node_of(e, "source"), node_of(e, "target"), st)
            })
            .collect();
        for centre in [raw, orders, a, d] {
            for depth in [1, 2, 3] {
                let g = app.ok(graph, json!({"c": centre, "d": depth, "t": t})).await["lineageGraph"].clone();
                let list = |k: &str| g[k].as_array().unwrap().clone();
                let ids = |k: &str| -> BTreeSet<i64> { list(k).iter().map(|n| n["id"].as_i64().unwrap()).collect() };
                let flagged = |k: &str| -> BTreeSet<i64> {
                    list("nodes").iter().filter(|n| n[k] == json!(true)).map(|n| n["id"].as_i64().unwrap()).collect()
                };
                let externals: BTreeSet<String> =
                    list("externalNodes").iter().map(|n| n["id"].as_str().unwrap().to_string()).collect();
                let answer = (
                    ids("nodes"),
                    externals,
                    ids("edges"),
                    ids("externalEdges"),
                    flagged("hasUpstream"),
                    flagged("hasDownstream"),
                );
                let expected = draw(&live, centre, depth);
                assert_eq!(answer, expected, "centre {centre}, depth {depth}, as of {t}; live then: {live:?}");
                drawn.insert((centre, depth, i), expected);
            }
        }
    }
    // The instants did see the history: a's edge from raw_orders retired at t2, revived by t3;
    // d -> e live only at t2; a -> d gone at t4.
    let edges_at = |i: usize| drawn[&(raw, 3, i)].2.clone();
    assert!(
        drawn[&(raw, 1, 0)].0.contains(&a) && !drawn[&(raw, 1, 1)].0.contains(&a) && drawn[&(raw, 1, 2)].0.contains(&a)
    );
    assert!(drawn[&(d, 1, 1)].0.contains(&e) && !drawn[&(d, 1, 2)].0.contains(&e));
    assert!(drawn[&(a, 1, 2)].0.contains(&d) && !drawn[&(a, 1, 3)].0.contains(&d));
    assert!(drawn[&(orders, 2, 1)].1.iter().any(|x| x.contains("b.parquet")));
    assert_ne!(edges_at(0), edges_at(1));

    let diff = "query($c: Int!, $d: Int!, $f: DateTime!, $t: DateTime) { lineageDiff(containerId: $c, depth: $d, from: $f, to: $t) {
        appearedNodes { kind containerId externalId } retiredNodes { kind containerId externalId }
        appearedEdges { edge { id } } retiredEdges { edge { id } }
        relabelledEdges { before { edge { id } } after { edge { id } } } } }";
    for centre in [raw, orders, a, d] {
        for depth in [1, 2, 3] {
            for i in 0..instants.len() {
                for j in i + 1..instants.len() {
                    let v = json!({"c": centre, "d": depth, "f": instants[i], "t": instants[j]});
                    let x = app.ok(diff, v).await["lineageDiff"].clone();
                    let (before, after) = (&drawn[&(centre, depth, i)], &drawn[&(centre, depth, j)]);
                    let nodes_of = |k: &str| -> BTreeSet<String> {
                        x[k].as_array()
                            .unwrap()
                            .iter()
                            .map(|n| match n["containerId"].as_i64() {
                                Some(id) => id.to_string(),
                                None => n["externalId"].as_str().unwrap().to_string(),
                            })
                            .collect()
                    };
                    let all = |g: &Drawn| -> BTreeSet<String> {
                        g.0.iter().map(|id| id.to_string()).chain(g.1.iter().cloned()).collect()
                    };
                    let edge_ids = |k: &str, part: Option<&str>| -> BTreeSet<i64> {
                        x[k].as_array()
                            .unwrap()
                            .iter()
                            .map(|c| part.map_or(c, |p| &c[p])["edge"]["id"].as_i64().unwrap())
                            .collect()
                    };
                    let every = |g: &Drawn| -> BTreeSet<i64> { g.2.union(&g.3).copied().collect() };
                    let appeared: BTreeSet<i64> = edge_ids("appearedEdges", None)
                        .union(&edge_ids("relabelledEdges", Some("after")))
                        .copied()
                        .collect();
                    let retired: BTreeSet<i64> = edge_ids("retiredEdges", None)
                        .union(&edge_ids("relabelledEdges", Some("before")))
                        .copied()
                        .collect();
                    let what = format!("centre {centre}, depth {depth}, {} -> {}: {x:#}", instants[i], instants[j]);
                    assert_eq!(nodes_of("appearedNodes"), &all(after) - &all(before), "{what}");
                    assert_eq!(nodes_of("retiredNodes"), &all(before) - &all(after), "{what}");
                    assert_eq!(appeared, &every(after) - &every(before), "{what}");
                    assert_eq!(retired, &every(before) - &every(after), "{what}");
                }
            }
        }
    }
}
