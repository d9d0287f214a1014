//! The history scenario (issue #19): lineageGraph as of an instant against the same query
//! without one, and lineageDiff against the lineageGraph it compares, asked of the service over
//! the same centres in alternating order, in the same run.
//!
//! `asOf` now must give today's answer (counted as mismatches when it does not) at a cost within
//! 2x; `asOf` half-way through the generated history answers a smaller graph (only the edges
//! created by then), and a diff is two as-of traversals.

use std::time::Duration;

use chrono::SecondsFormat;
use serde_json::{json, Value};

use crate::baseline::Ask;
use crate::gen::{base_time, Graph};
use crate::harness::{Client, Side};
use crate::report::{ms, percentile, say, Report};
use crate::Plan;

const LINEAGE_GRAPH_AS_OF: &str =
    "query($c: Int!, $d: Int!, $t: DateTime) { lineageGraph(containerId: $c, depth: $d, asOf: $t) {
  nodes { id name containerType isTarget hasUpstream hasDownstream fieldCount datastore { name } }
  edges { id sourceContainerId targetContainerId sourceType }
  externalNodes { id fqn }
  externalEdges { id sourceContainerId targetContainerId sourceExternalFqn targetExternalFqn } } }";

const LINEAGE_DIFF: &str =
    "query($c: Int!, $d: Int!, $f: DateTime!) { lineageDiff(containerId: $c, depth: $d, from: $f) {
  appearedNodes { kind containerId externalId } retiredNodes { kind containerId externalId }
  appearedEdges { at edge { id sourceContainerId targetContainerId sourceType } }
  retiredEdges { at edge { id sourceContainerId targetContainerId sourceType } }
  relabelledEdges { before { edge { id } } after { edge { id } } } } }";

fn ask(query: &str, variables: Value) -> Ask {
    Ask { path: "/lineageGraph", body: json!({"query": query, "variables": variables}) }
}

/// Median latency of each of two request lists, asked alternately (which goes first alternates
/// too), cycling over the lists.
pub(crate) async fn paired(client: &Client, plan: &Plan, a: &[Ask], b: &[Ask]) -> anyhow::Result<(f64, f64)> {
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    let (mut ta, mut tb) = (Duration::ZERO, Duration::ZERO);
    for i in 0..plan.iterations {
        let (x, y) = (&a[i % a.len()], &b[i % b.len()]);
        for first in [i % 2 == 0, i % 2 != 0] {
            let (took, _) = client.ask(Side::Service, if first { x } else { y }).await?;
            if first {
                la.push(ms(took));
                ta += took;
            } else {
                lb.push(ms(took));
                tb += took;
            }
        }
        if ta + tb > Duration::from_secs(120) {
            say(&format!("  (history: stopped after {} iterations, past 120 s)", i + 1));
            break;
        }
    }
    la.sort_by(f64::total_cmp);
    lb.sort_by(f64::total_cmp);
    Ok((percentile(&la, 50.0), percentile(&lb, 50.0)))
}

pub(crate) async fn history(client: &Client, plan: &Plan, g: &Graph, report: &mut Report) -> anyhow::Result<()> {
    let centres: Vec<i64> = g.centres.iter().map(|&c| Graph::container_id(c)).collect();
    let now = chrono::Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
    // Edge i was created at base + i seconds: half-way, about half of them existed.
    let half = g.edge_count() as i64 / 2;
    let mid = (base_time() + chrono::Duration::seconds(half)).to_rfc3339_opts(SecondsFormat::Micros, true);
    for depth in [2, 5] {
        let plain: Vec<Ask> = centres.iter().map(|&c| Ask::lineage_graph(c, depth)).collect();
        let at = |t: &str| -> Vec<Ask> {
            centres.iter().map(|&c| ask(LINEAGE_GRAPH_AS_OF, json!({"c": c, "d": depth, "t": t}))).collect()
        };
        let (as_of_now, as_of_mid) = (at(&now), at(&mid));
        // The same answer as of now as today, centre by centre.
        let mut mismatches = 0;
        for (p, a) in plain.iter().zip(&as_of_now) {
            let (_, x) = client.ask(Side::Service, p).await?;
            let (_, y) = client.ask(Side::Service, a).await?;
            if x["data"] != y["data"] {
                mismatches += 1;
            }
        }
        report.add("history", format!("lineageGraph_d{depth}_asof_now_mismatches"), mismatches as f64, None);
        let (with, without) = paired(client, plan, &as_of_now, &plain).await?;
        report.add("history", format!("lineageGraph_d{depth}_asof_now_p50_ms"), with, Some(without));
        let (with, without) = paired(client, plan, &as_of_mid, &plain).await?;
        report.add("history", format!("lineageGraph_d{depth}_asof_mid_p50_ms"), with, Some(without));
    }
    let graph_d2: Vec<Ask> = centres.iter().map(|&c| Ask::lineage_graph(c, 2)).collect();
    let diffs: Vec<Ask> = centres.iter().map(|&c| ask(LINEAGE_DIFF, json!({"c": c, "d": 2, "f": mid}))).collect();
    let (diff, graph) = paired(client, plan, &diffs, &graph_d2).await?;
    report.add("history", "lineageDiff_d2_p50_ms", diff, Some(graph));
    Ok(())
}
