//! Health far from the failure (issue #49): what a failed run leaves `FAILED` and `STALE` over a
//! chain of six jobs with a manual edge (one no job wrote) in it, a side branch off the chain, a
//! sibling beside it and a tail of manual edges to 21 hops; `STALE` reaches exactly as far as the
//! service promises ("within 20 hops upstream", `service/jobs.rs`), and a later successful run
//! clears it all. A shorter reach (a smaller `STALE_DEPTH`) fails here at its first missing hop.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;
use crate::jobs::{at, ds, event, uuid, NS};

both_stores!(a_failure_is_stale_through_six_jobs_and_a_manual_edge_and_no_further_than_20_hops);

/// How far a failure makes its downstream STALE: the module's documented promise.
const REACH: usize = 20;

/// `(job, input, output)`: the chain's six jobs (`load_hop3` is missing: `hop2 -> hop3` is a
/// manual edge), a side branch off the chain and a sibling of the failed output.
const JOBS: [(&str, &str, &str); 8] = [
    ("load_out", "src", "out"),
    ("load_hop1", "out", "hop1"),
    ("load_hop2", "hop1", "hop2"),
    ("load_hop4", "hop3", "hop4"),
    ("load_hop5", "hop4", "hop5"),
    ("load_hop6", "hop5", "hop6"),
    ("load_side", "hop1", "side"),
    ("load_sibling", "src", "sibling"),
];

/// A START and a terminal event of one run of `job`.
fn run(job: &str, input: &str, output: &str, run_id: &str, start: i64, end: &str) -> Value {
    json!([
        event("START", &at(start), run_id, job, vec![ds(input)], vec![ds(output)]),
        event(end, &at(start + 5), run_id, job, vec![ds(input)], vec![ds(output)]),
    ])
}

/// The health of every table: name -> (state, causes' run ids).
async fn healths(app: &TestApp, tables: &BTreeMap<String, i64>) -> BTreeMap<String, (String, Vec<String>)> {
    let mut out = BTreeMap::new();
    for (name, id) in tables {
        out.insert(name.clone(), app.health(*id).await);
    }
    out
}

async fn a_failure_is_stale_through_six_jobs_and_a_manual_edge_and_no_further_than_20_hops(app: TestApp) {
    // Hop n of the failure is `hop<n>` up to 6 and `far<n>` from 7 to 21.
    let mut names: Vec<String> =
        ["src", "out", "hop1", "hop2", "hop3", "hop4", "hop5", "hop6", "side", "sibling"].map(String::from).to_vec();
    names.extend((7..=REACH + 1).map(|n| format!("far{n}")));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let tables: BTreeMap<String, i64> = names.iter().cloned().zip(app.tables("wh", NS, &refs).await).collect();
    let id = |name: &str| tables[name];
    let hop = |n: usize| if n <= 6 { format!("hop{n}") } else { format!("far{n}") };

    let mut events = Vec::new();
    for (i, (job, input, output)) in JOBS.iter().enumerate() {
        events.extend(
            run(job, input, output, &uuid(100 + i as u32), i as i64 * 10, "COMPLETE").as_array().unwrap().clone(),
        );
    }
    app.ingest(Value::Array(events)).await;
    // The edges no job wrote: one inside the chain, and the tail.
    app.edge(id("hop2"), id("hop3")).await;
    for n in 6..=REACH {
        app.edge(id(&hop(n)), id(&hop(n + 1))).await;
    }
    let unwritten = |name: &str| name == "src" || name == "hop3" || name.starts_with("far");
    let all_clear = |h: &BTreeMap<String, (String, Vec<String>)>| {
        for (name, (state, causes)) in h {
            let want = if unwritten(name) { "UNKNOWN" } else { "FRESH" };
            assert_eq!((state.as_str(), causes.len()), (want, 0), "{name}: {h:#?}");
        }
    };
    all_clear(&healths(&app, &tables).await);

    // load_out fails: its output is FAILED, everything within 20 hops below it STALE.
    let failed = uuid(200);
    app.ingest(run("load_out", "src", "out", &failed, 300, "FAIL")).await;
    let h = healths(&app, &tables).await;
    let failure = vec![failed.clone()];
    let mut want: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    want.insert("src".into(), ("UNKNOWN".into(), vec![]));
    want.insert("sibling".into(), ("FRESH".into(), vec![]));
    want.insert("out".into(), ("FAILED".into(), failure.clone()));
    want.insert("side".into(), ("STALE".into(), failure.clone()));
    for n in 1..=REACH {
        want.insert(hop(n), ("STALE".into(), failure.clone()));
    }
    want.insert(hop(REACH + 1), ("UNKNOWN".into(), vec![]));
    // Hop by hop, nearest first, so that a shorter reach names the first hop it misses.
    let mut order: Vec<String> = ["src", "sibling", "out"].map(String::from).to_vec();
    order.extend((1..=REACH + 1).map(hop));
    order.insert(5, "side".into()); // after hop2: it is 2 hops down too
    for name in order {
        assert_eq!(h[&name], want[&name], "{name} after the failure");
    }
    assert_eq!(h, want);

    // The incident counts what it leaves: its output failed, 20 hops and the side branch stale.
    let inc = app.ok("{ incidents { items { run { runId } failedCount staleCount } } }", json!({})).await;
    assert_eq!(
        inc["incidents"]["items"],
        json!([{"run": {"runId": failed}, "failedCount": 1, "staleCount": REACH + 1}]),
        "{inc:#}"
    );

    // runImpact: each container's distance from the run's output and its health (depth 20).
    let ri = app
        .ok(
            "query($r: String!) { runImpact(runId: $r) { isPartial containers { container { id } distance health { state } } } }",
            json!({"r": failed}),
        )
        .await;
    let got: BTreeMap<i64, (i64, String)> = ri["runImpact"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let state = x["health"]["state"].as_str().unwrap().to_string();
            (x["container"]["id"].as_i64().unwrap(), (x["distance"].as_i64().unwrap(), state))
        })
        .collect();
    let mut expected = BTreeMap::from([(id("out"), (0, "FAILED".to_string())), (id("side"), (2, "STALE".to_string()))]);
    for n in 1..=REACH {
        expected.insert(id(&hop(n)), (n as i64, "STALE".to_string()));
    }
    assert_eq!(got, expected, "{ri:#}");

    // impact from above the failure: the items' health, the sibling's included.
    let impact_states = |v: &Value| -> BTreeMap<i64, String> {
        v["impact"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["container"]["id"].as_i64().unwrap(), x["health"]["state"].as_str().unwrap().to_string()))
            .collect()
    };
    const IMPACT: &str =
        "query($c: Int!) { impact(containerId: $c) { containers { container { id } health { state } } } }";
    let imp = app.ok(IMPACT, json!({"c": id("src")})).await;
    // src's impact reaches 20 hops from src: hop 19 of the failure.
    let mut expected = BTreeMap::from([
        (id("out"), "FAILED".to_string()),
        (id("sibling"), "FRESH".to_string()),
        (id("side"), "STALE".to_string()),
    ]);
    for n in 1..REACH {
        expected.insert(id(&hop(n)), "STALE".to_string());
    }
    assert_eq!(impact_states(&imp), expected, "{imp:#}");

    // load_out runs again and completes: nothing is failed or stale any more.
    app.ingest(run("load_out", "src", "out", &uuid(201), 400, "COMPLETE")).await;
    all_clear(&healths(&app, &tables).await);
    assert_eq!(app.ok("{ incidents { items { run { runId } } } }", json!({})).await["incidents"]["items"], json!([]));
    let imp = app.ok(IMPACT, json!({"c": id("src")})).await;
    let states = impact_states(&imp);
    assert_eq!(states.len(), expected.len(), "{imp:#}");
    for (c, state) in states {
        let name = tables.iter().find(|(_, v)| **v == c).map(|(k, _)| k.as_str()).unwrap();
        assert_eq!(state, if unwritten(name) { "UNKNOWN" } else { "FRESH" }, "{name}");
    }
}
