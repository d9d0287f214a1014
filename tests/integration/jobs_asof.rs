//! Jobs, runs and health as of an instant (issue #45): a job that read `a` until Monday's run
//! and `b` from Tuesday's reads `a` as of Monday and `b` as of Wednesday; as of an instant
//! between a failed run and its successful rerun the failed run is the job's latest, its output
//! FAILED and what lies downstream STALE, and after the rerun both are FRESH again. The days are
//! instants a few milliseconds apart: the edges' intervals follow the clock of the server that
//! recorded them, the runs the events' `eventTime`, and an answer as of an instant mixes both,
//! so the events carry the time they are sent at.

use std::time::Duration;

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;
use crate::jobs::{ds, event, uuid, NS};

both_stores!(
    a_jobs_datasets_as_of_an_instant_are_what_its_run_then_read_and_wrote,
    health_and_latest_runs_as_of_an_instant_are_the_runs_then,
);

/// Now, as an event time or an instant (microseconds, UTC).
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// An instant strictly between what was recorded before and what is recorded after.
async fn instant() -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    let t = now();
    tokio::time::sleep(Duration::from_millis(20)).await;
    t
}

/// One run of `job` reading `input` and writing `output`: its events with the states given,
/// each sent at the time it is made (a few milliseconds apart).
async fn run(app: &TestApp, job: &str, run_id: &str, input: &str, output: &str, states: &[&str]) {
    for state in states {
        app.ingest(json!([event(state, &now(), run_id, job, vec![ds(input)], vec![ds(output)])])).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn names(list: &Value) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().trim_start_matches("db.public.").to_string())
        .collect();
    out.sort();
    out
}

const GRAPH: &str = "query($c: Int!, $t: DateTime) {
    lineageGraph(containerId: $c, depth: 2, asOf: $t, includeJobs: true) {
      nodes { id healthAlert }
      jobs { name inputs { name } outputs { name } latestRun { runId state states { state } } }
      jobEdges { kind jobId containerId }
      asOf { reconstructed notReconstructed } } }";

/// The job named `name` among a graph's jobs.
fn job<'a>(graph: &'a Value, name: &str) -> &'a Value {
    graph["lineageGraph"]["jobs"].as_array().unwrap().iter().find(|j| j["name"] == name).unwrap_or_else(|| {
        panic!("no job {name} in {graph:#}");
    })
}

/// The containers a graph's job edges of `kind` join to a job.
fn linked(graph: &Value, kind: &str) -> Vec<i64> {
    let mut out: Vec<i64> = graph["lineageGraph"]["jobEdges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .filter_map(|e| e["containerId"].as_i64())
        .collect();
    out.sort();
    out
}

async fn a_jobs_datasets_as_of_an_instant_are_what_its_run_then_read_and_wrote(app: TestApp) {
    let ids = app.tables("wh", NS, &["a", "b", "out"]).await;
    let (a, b, out) = (ids[0], ids[1], ids[2]);
    run(&app, "load", &uuid(1), "a", "out", &["START", "COMPLETE"]).await;
    let monday = instant().await;
    run(&app, "load", &uuid(2), "b", "out", &["START", "COMPLETE"]).await;
    let wednesday = instant().await;

    let then = app.ok(GRAPH, json!({"c": out, "t": monday})).await;
    let load = job(&then, "load");
    assert_eq!((names(&load["inputs"]), names(&load["outputs"])), (vec!["a".into()], vec!["out".into()]), "{then:#}");
    assert_eq!(load["latestRun"]["runId"], json!(uuid(1)));
    assert_eq!(linked(&then, "INPUT"), vec![a], "{then:#}");
    assert_eq!(linked(&then, "OUTPUT"), vec![out]);

    let later = app.ok(GRAPH, json!({"c": out, "t": wednesday})).await;
    let load = job(&later, "load");
    assert_eq!((names(&load["inputs"]), names(&load["outputs"])), (vec!["b".into()], vec!["out".into()]), "{later:#}");
    assert_eq!(load["latestRun"]["runId"], json!(uuid(2)));
    assert_eq!(linked(&later, "INPUT"), vec![b], "{later:#}");

    // The job's own graph as of each day, from the same history.
    let q = "query($j: Int!, $t: DateTime) { jobLineageGraph(jobId: $j, depth: 1, asOf: $t) {
        nodes { id } jobEdges { kind containerId } asOf { at } } }";
    let job_id = app.ok("{ jobs { items { id name } } }", json!({})).await["jobs"]["items"][0]["id"].as_i64().unwrap();
    let nodes = |g: &Value| {
        let mut n: Vec<i64> =
            g["jobLineageGraph"]["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
        n.sort();
        n
    };
    let on_monday = app.ok(q, json!({"j": job_id, "t": monday})).await;
    assert_eq!(nodes(&on_monday), vec![a, out], "{on_monday:#}");
    assert_eq!(on_monday["jobLineageGraph"]["asOf"]["at"], json!(monday));
    assert_eq!(nodes(&app.ok(q, json!({"j": job_id, "t": wednesday})).await), vec![b, out]);

    // Jobs are no longer said to be today's; today the job lists every dataset it ever read.
    let not_rebuilt = then["lineageGraph"]["asOf"]["notReconstructed"].as_array().unwrap();
    assert!(not_rebuilt.iter().all(|t| !t
        .as_str()
        .unwrap()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "jobs")));
    assert!(then["lineageGraph"]["asOf"]["reconstructed"].to_string().contains("jobs and runs"));
    let today = app.ok(GRAPH, json!({"c": out, "t": null})).await;
    assert_eq!(names(&job(&today, "load")["inputs"]), vec!["a".to_string(), "b".to_string()]);
    assert_eq!(today["lineageGraph"]["asOf"], Value::Null);
}

async fn health_and_latest_runs_as_of_an_instant_are_the_runs_then(app: TestApp) {
    let ids = app.tables("wh", NS, &["src", "out", "down"]).await;
    let (src, out, down) = (ids[0], ids[1], ids[2]);
    run(&app, "load_out", &uuid(10), "src", "out", &["START", "COMPLETE"]).await;
    run(&app, "load_down", &uuid(20), "out", "down", &["START", "COMPLETE"]).await;
    let fresh = instant().await;
    run(&app, "load_out", &uuid(11), "src", "out", &["START"]).await;
    let running = instant().await;
    run(&app, "load_out", &uuid(11), "src", "out", &["FAIL"]).await;
    let failed = instant().await;
    run(&app, "load_out", &uuid(12), "src", "out", &["START", "COMPLETE"]).await;
    let rerun = instant().await;

    // healthAlert on the graph, health on impact, and each job's latest run, as of `t`.
    let q = "query($c: Int!, $t: DateTime) {
        lineageGraph(containerId: $c, depth: 2, asOf: $t, includeJobs: true) {
          nodes { id healthAlert container { health { state } } } jobs { name latestRun { runId state } } }
        impact(containerId: $c, asOf: $t) {
          containers { container { id health { state } } health { state lastWrittenAt causes { runId } lastRun { runId state } } } } }";
    let at = |t: Option<&str>| {
        let app = &app;
        let vars = json!({"c": src, "t": t});
        async move { app.ok(q, vars).await }
    };
    let alert = |g: &Value, id: i64| {
        let node = g["lineageGraph"]["nodes"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap();
        // The node's container record answers the same state as of the instant (FRESH where
        // the alert is null).
        let state = node["container"]["health"]["state"].clone();
        let alert = node["healthAlert"].clone();
        assert_eq!(if alert.is_null() { json!("FRESH") } else { alert.clone() }, state, "{node:#}");
        alert
    };
    let health = |g: &Value, id: i64| {
        let item = g["impact"]["containers"].as_array().unwrap().iter().find(|c| c["container"]["id"] == id).unwrap();
        assert_eq!(item["container"]["health"]["state"], item["health"]["state"], "{item:#}");
        let h = item["health"].clone();
        let causes: Vec<String> =
            h["causes"].as_array().unwrap().iter().map(|r| r["runId"].as_str().unwrap().to_string()).collect();
        (h["state"].as_str().unwrap().to_string(), causes)
    };
    let written = |g: &Value, id: i64| {
        g["impact"]["containers"].as_array().unwrap().iter().find(|c| c["container"]["id"] == id).unwrap()["health"]
            ["lastWrittenAt"]
            .clone()
    };
    let ended = |run: String| {
        let app = &app;
        async move {
            let q = "query($r: String!) { run(runId: $r) { endedAt } }";
            app.ok(q, json!({"r": run})).await["run"]["endedAt"].clone()
        }
    };
    let (first_write, rewrite) = (ended(uuid(10)).await, ended(uuid(12)).await);
    let latest = |g: &Value, name: &str| {
        let r = &job(g, name)["latestRun"];
        (r["runId"].as_str().unwrap().to_string(), r["state"].as_str().unwrap().to_string())
    };

    let before = at(Some(&fresh)).await;
    assert_eq!((alert(&before, out), alert(&before, down)), (Value::Null, Value::Null), "{before:#}");
    assert_eq!(health(&before, out), ("FRESH".into(), vec![]));
    assert_eq!(latest(&before, "load_out"), (uuid(10), "COMPLETE".into()));

    // While the failing run ran, it was the latest, running, and nothing had failed.
    let during = at(Some(&running)).await;
    assert_eq!(latest(&during, "load_out"), (uuid(11), "START".into()), "{during:#}");
    assert_eq!(health(&during, out), ("FRESH".into(), vec![]));

    let between = at(Some(&failed)).await;
    assert_eq!(alert(&between, out), json!("FAILED"), "{between:#}");
    assert_eq!(alert(&between, down), json!("STALE"));
    assert_eq!(health(&between, out), ("FAILED".into(), vec![uuid(11)]));
    assert_eq!(health(&between, down), ("STALE".into(), vec![uuid(11)]));
    assert_eq!(latest(&between, "load_out"), (uuid(11), "FAIL".into()));
    // Its last complete write then was the first run's, though the job's record now holds the rerun's.
    assert_eq!(written(&between, out), first_write);
    assert_eq!(latest(&between, "load_down"), (uuid(20), "COMPLETE".into()));

    for g in [at(Some(&rerun)).await, at(None).await] {
        assert_eq!((alert(&g, out), alert(&g, down)), (Value::Null, Value::Null), "{g:#}");
        assert_eq!(health(&g, out), ("FRESH".into(), vec![]));
        assert_eq!(health(&g, down), ("FRESH".into(), vec![]));
        assert_eq!(latest(&g, "load_out"), (uuid(12), "COMPLETE".into()));
        assert_eq!(written(&g, out), rewrite);
    }
    // Today's answer about the container itself agrees.
    assert_eq!(app.health(out).await, ("FRESH".into(), vec![]));
}
