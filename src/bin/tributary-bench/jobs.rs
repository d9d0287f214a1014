//! The jobs scenario (issue #29): `lineageGraph` at depth 5 with `includeJobs` against the same
//! query without it, and `Container.health` over the first hub's downstream (its `impact` with
//! each item's health) against the same `impact` without health, asked of the service over the
//! same requests in alternating order, in the same run; then both as of now against today's
//! (issue #45: the same answers, read through the instant).
//!
//! The generated graph has no jobs: the scenario first records them through OpenLineage, as a
//! producer would. Each container edge of the centres' depth-5 graphs (up to `PER_CENTRE` each)
//! gets a job that reads its source and writes its target (a START and a COMPLETE run), and the
//! hub's downstream gets jobs writing its first layer, one of which (picked by name, so both
//! stores fail the same one) then fails, so the health answer has a STALE downstream to find. It runs after the other scenarios: the events add
//! OpenLineage edges beside the generated ones.

use axum::body::Bytes;
use chrono::{Duration, SecondsFormat, Utc};
use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::baseline::Ask;
use crate::gen::{container_key, Graph};
use crate::harness::{Client, Side};
use crate::history::paired;
use crate::report::{say, Report};
use crate::Plan;

/// Container edges of each centre's depth-5 graph given a job.
const PER_CENTRE: usize = 40;
/// Jobs writing the hub's first downstream layer.
const HUB_JOBS: usize = 20;
/// Containers of the hub's first layer (the first by name) considered for the failure: one
/// `impact` each.
const CANDIDATES: usize = 50;

const LINEAGE_GRAPH_JOBS: &str =
    "query($c: Int!, $d: Int!) { lineageGraph(containerId: $c, depth: $d, includeJobs: true) {
  nodes { id name containerType isTarget hasUpstream hasDownstream fieldCount datastore { name } }
  edges { id sourceContainerId targetContainerId sourceType }
  externalNodes { id fqn }
  externalEdges { id sourceContainerId targetContainerId sourceExternalFqn targetExternalFqn }
  jobs { id name latestRun { state } } jobEdges { jobId kind containerId } } }";

/// `LINEAGE_GRAPH_JOBS` as of an instant (issue #45: jobs, runs and health as of it).
const LINEAGE_GRAPH_JOBS_AS_OF: &str =
    "query($c: Int!, $d: Int!, $t: DateTime) { lineageGraph(containerId: $c, depth: $d, includeJobs: true, asOf: $t) {
  nodes { id name containerType isTarget hasUpstream hasDownstream fieldCount datastore { name } }
  edges { id sourceContainerId targetContainerId sourceType }
  externalNodes { id fqn }
  externalEdges { id sourceContainerId targetContainerId sourceExternalFqn targetExternalFqn }
  jobs { id name latestRun { state } } jobEdges { jobId kind containerId } } }";

/// `IMPACT_HEALTH` as of an instant.
const IMPACT_HEALTH_AS_OF: &str =
    "query($c: Int!, $d: Int!, $l: Int!, $t: DateTime) { impact(containerId: $c, depth: $d, side: DOWNSTREAM, limit: $l, asOf: $t) {
  isPartial containers { distance container { id name } via { id sourceContainerId } health { state } } } }";

const IMPACT_HEALTH: &str =
    "query($c: Int!, $d: Int!, $l: Int!) { impact(containerId: $c, depth: $d, side: DOWNSTREAM, limit: $l) {
  isPartial containers { distance container { id name } via { id sourceContainerId } health { state } } } }";

/// The OpenLineage dataset of generated container `id`.
fn dataset(g: &Graph, id: i64) -> Option<Value> {
    let i = usize::try_from(id - 1).ok().filter(|&i| i < g.containers.len())?;
    let ds = &g.datastores[g.containers[i].ds];
    Some(json!({"namespace": ds.namespace, "name": container_key(g, i)}))
}

/// A START and a terminal event of one run of `job`, reading `inputs` and writing `outputs`.
fn run_events(job: &str, n: usize, inputs: Vec<Value>, outputs: Vec<Value>, end: &str) -> [Value; 2] {
    let t0 = Utc::now() - Duration::minutes(30) + Duration::milliseconds(n as i64 * 2);
    let event = |kind: &str, t: chrono::DateTime<Utc>| {
        json!({
            "eventType": kind,
            "eventTime": t.to_rfc3339_opts(SecondsFormat::Millis, true),
            "producer": "https://github.com/acme/tributary-bench/1.0",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": uuid::Uuid::new_v4().to_string()},
            "job": {"namespace": "bench-jobs", "name": job},
            "inputs": inputs,
            "outputs": outputs,
        })
    };
    let (start, mut stop) = (event("START", t0), event(end, t0 + Duration::milliseconds(1)));
    stop["run"] = start["run"].clone();
    [start, stop]
}

async fn post_events(client: &Client, events: &[Value]) -> anyhow::Result<()> {
    for chunk in events.chunks(1_000) {
        let (_, v) =
            client.post(format!("{}/api/v1/lineage", client.service), Bytes::from(serde_json::to_vec(chunk)?)).await?;
        let bad = v["failed"].as_i64().unwrap_or(0) + v["rejected"].as_i64().unwrap_or(0);
        anyhow::ensure!(bad == 0, "jobs scenario: {bad} events not applied: {v}");
    }
    Ok(())
}

/// The containers within `depth` downstream of `c` (not `c` itself), each with its distance, by
/// the service's `impact`: the baseline's in-memory graph lacks the edges the ingest scenario
/// adds, which health follows too.
async fn downstream(client: &Client, c: i64, depth: usize, limit: usize) -> anyhow::Result<BTreeMap<i64, i64>> {
    let (_, b) = client.ask(Side::Service, &Ask::impact(c, depth, limit)).await?;
    anyhow::ensure!(b["errors"].is_null(), "impact of {c} failed: {}", b["errors"]);
    Ok(b["data"]["impact"]["containers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| Some((x["container"]["id"].as_i64()?, x["distance"].as_i64()?)))
                .filter(|(id, _)| *id != c)
                .collect()
        })
        .unwrap_or_default())
}

fn ask(query: &str, variables: Value) -> Ask {
    Ask { path: "/lineageGraph", body: json!({"query": query, "variables": variables}) }
}

pub(crate) async fn jobs(client: &Client, plan: &Plan, g: &Graph, report: &mut Report) -> anyhow::Result<()> {
    let centres: Vec<i64> = g.centres.iter().map(|&c| Graph::container_id(c)).collect();
    let mut events = Vec::new();
    let mut n = 0;
    for &c in &centres {
        let (_, v) = client.ask(Side::Service, &Ask::lineage_graph(c, 5)).await?;
        let edges = v["data"]["lineageGraph"]["edges"].as_array().cloned().unwrap_or_default();
        for e in edges.iter().filter(|e| e["sourceType"] != "openlineage").take(PER_CENTRE) {
            let (Some(s), Some(t)) = (e["sourceContainerId"].as_i64(), e["targetContainerId"].as_i64()) else {
                continue;
            };
            let (Some(src), Some(tgt)) = (dataset(g, s), dataset(g, t)) else { continue };
            events.extend(run_events(&format!("build_{t}_from_{s}"), n, vec![src], vec![tgt], "COMPLETE"));
            n += 1;
        }
    }
    // The hub's first downstream layer, written by jobs reading the hub, the first `HUB_JOBS` by
    // name, not by `impact`'s order (which differs by store), so both stores must find the same
    // FAILED and STALE containers.
    let hub = Graph::container_id(g.hubs[0]);
    let (_, v) = client.ask(Side::Service, &Ask::impact(hub, 1, 10_000)).await?;
    let mut layer: Vec<(String, i64)> = v["data"]["impact"]["containers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| Some((c["container"]["name"].as_str()?.to_owned(), c["container"]["id"].as_i64()?)))
                .collect()
        })
        .unwrap_or_default();
    layer.sort();
    let first: Vec<i64> = layer.iter().map(|(_, id)| *id).take(HUB_JOBS).collect();
    let hub_ds = dataset(g, hub).ok_or_else(|| anyhow::anyhow!("the hub is not a generated container"))?;
    for &t in &first {
        let Some(tgt) = dataset(g, t) else { continue };
        events.extend(run_events(&format!("load_{t}_from_hub"), n, vec![hub_ds.clone()], vec![tgt], "COMPLETE"));
        n += 1;
    }
    post_events(client, &events).await?;
    // Then one of the first `CANDIDATES` by name fails: the one with the largest downstream now
    // (its `impact`, which both stores answer alike: the queries scenario compares it with the
    // baseline), the first by name among equals, so that health has STALE containers to find,
    // far down where the graph allows; that `impact` is also what health must then say.
    let reach = tributary::service::jobs::STALE_DEPTH;
    let mut failing = (None, BTreeMap::new());
    for (_, c) in layer.iter().take(CANDIDATES) {
        let below = downstream(client, *c, reach, 10_000).await?;
        if failing.0.is_none() || below.len() > failing.1.len() {
            failing = (Some(*c), below);
        }
    }
    if let Some(t) = failing.0 {
        let tgt = dataset(g, t).ok_or_else(|| anyhow::anyhow!("container {t} is not a generated container"))?;
        let job = format!("load_{t}_from_hub");
        let mut runs = Vec::new();
        if !first.contains(&t) {
            runs.extend(run_events(&job, n, vec![hub_ds.clone()], vec![tgt.clone()], "COMPLETE"));
            n += 1;
        }
        runs.extend(run_events(&job, n, vec![hub_ds], vec![tgt], "FAIL"));
        n += 1;
        post_events(client, &runs).await?;
    }
    say(&format!("  (jobs: {n} runs recorded, {} around the hub)", first.len()));

    let plain: Vec<Ask> = centres.iter().map(|&c| Ask::lineage_graph(c, 5)).collect();
    let with_jobs: Vec<Ask> = centres.iter().map(|&c| ask(LINEAGE_GRAPH_JOBS, json!({"c": c, "d": 5}))).collect();
    let mut jobs_seen = 0;
    for a in &with_jobs {
        let (_, v) = client.ask(Side::Service, a).await?;
        anyhow::ensure!(v["errors"].is_null(), "lineageGraph(includeJobs) failed: {}", v["errors"]);
        jobs_seen += v["data"]["lineageGraph"]["jobs"].as_array().map_or(0, Vec::len);
    }
    report.add("jobs", "lineageGraph_d5_jobs_mean", jobs_seen as f64 / with_jobs.len().max(1) as f64, None);
    let (with, without) = paired(client, plan, &with_jobs, &plain).await?;
    report.add("jobs", "lineageGraph_d5_include_jobs_p50_ms", with, Some(without));

    let plain = vec![Ask::impact(hub, 20, 10_000)];
    let health = vec![Ask {
        path: "/impact",
        body: json!({"query": IMPACT_HEALTH, "variables": {"c": hub, "d": 20, "l": 10_000}}),
    }];
    let (_, v) = client.ask(Side::Service, &health[0]).await?;
    anyhow::ensure!(v["errors"].is_null(), "impact with health failed: {}", v["errors"]);
    let items = v["data"]["impact"]["containers"].as_array().cloned().unwrap_or_default();
    // What health must say: the failed run's output FAILED, and exactly the hub's downstream
    // within the stale reach below it STALE, however far down; any other answer is a mismatch
    // (the smoke test requires none).
    let (mut failed, mut stale, mut mismatches, mut farthest) = (0, 0, 0, 0);
    for c in &items {
        let Some(id) = c["container"]["id"].as_i64() else { continue };
        let state = c["health"]["state"].as_str().unwrap_or_default();
        failed += usize::from(state == "FAILED");
        stale += usize::from(state == "STALE");
        let expected = if failing.0 == Some(id) {
            "FAILED"
        } else if let Some(&d) = failing.1.get(&id) {
            farthest = farthest.max(d);
            "STALE"
        } else {
            ""
        };
        if (state == "FAILED" || state == "STALE" || !expected.is_empty()) && state != expected {
            mismatches += 1;
        }
    }
    if mismatches > 0 {
        say(&format!("  MISMATCH jobs health: {mismatches} of the hub's downstream (FAILED {failed}, STALE {stale})"));
    }
    report.add("jobs", "hub_downstream_containers", items.len() as f64, None);
    report.add("jobs", "hub_downstream_not_refreshed", failed as f64, None);
    report.add("jobs", "hub_downstream_stale", stale as f64, None);
    report.add("jobs", "hub_downstream_stale_mismatches", mismatches as f64, None);
    report.add("jobs", "hub_downstream_stale_farthest_hops", farthest as f64, None);
    let (with, without) = paired(client, plan, &health, &plain).await?;
    report.add("jobs", "impact_hub_health_p50_ms", with, Some(without));

    // The same two reads as of now (every job has one run, so the answers equal today's) against
    // today's: what reading jobs, runs and health through the instant costs (issue #45).
    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
    let graphs_now: Vec<Ask> =
        centres.iter().map(|&c| ask(LINEAGE_GRAPH_JOBS_AS_OF, json!({"c": c, "d": 5, "t": now}))).collect();
    let health_now = vec![Ask {
        path: "/impact",
        body: json!({"query": IMPACT_HEALTH_AS_OF, "variables": {"c": hub, "d": 20, "l": 10_000, "t": now}}),
    }];
    let mut mismatches = 0;
    for (today, then) in with_jobs.iter().zip(&graphs_now).chain(health.iter().zip(&health_now)) {
        let (_, x) = client.ask(Side::Service, today).await?;
        let (_, y) = client.ask(Side::Service, then).await?;
        anyhow::ensure!(y["errors"].is_null(), "an as-of read with jobs failed: {}", y["errors"]);
        if x["data"] != y["data"] {
            mismatches += 1;
        }
    }
    report.add("jobs", "asof_now_with_jobs_and_health_mismatches", mismatches as f64, None);
    let (with, without) = paired(client, plan, &graphs_now, &with_jobs).await?;
    report.add("jobs", "lineageGraph_d5_include_jobs_asof_now_p50_ms", with, Some(without));
    let (with, without) = paired(client, plan, &health_now, &health).await?;
    report.add("jobs", "impact_hub_health_asof_now_p50_ms", with, Some(without));
    Ok(())
}
