//! The paths scenario (issue #19): `explainLineage`, `lineageSummary` and `lineageGraph`'s
//! `maxNodes` budget and counted frontier, each called in process (the service's `Lineage`,
//! without HTTP and GraphQL) from the graph's centres, against an unsided `lineageGraph` at
//! depth 5 from the same centre in the same run. The two calls alternate, in alternating order.

use std::future::Future;
use std::time::{Duration, Instant};

use tributary::domain::Direction;
use tributary::service::paths::PathEnd;
use tributary::service::{GraphOptions, GraphRequest, Lineage, Root};

use crate::gen::Graph;
use crate::report::{ms, percentile, say, Report};
use crate::Plan;

async fn timed<T, F: Future<Output = tributary::error::Result<T>>>(f: F) -> anyhow::Result<(Duration, T)> {
    let t = Instant::now();
    let out = f.await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    Ok((t.elapsed(), out))
}

pub(crate) async fn paths(plan: &Plan, g: &Graph, lineage: &Lineage, report: &mut Report) -> anyhow::Result<()> {
    let auth = lineage.auth(false);
    let caller = auth.authenticate(None).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let centres: Vec<i64> = g.centres.iter().map(|&c| Graph::container_id(c)).collect();
    // explainLineage's ends: each centre and the farthest container downstream of it within 5.
    let mut pairs = Vec::new();
    for &c in &centres {
        let t = lineage.impact(c, 5, Direction::Downstream, 10_000).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        if let Some(far) = t.reached.iter().max_by_key(|r| (r.distance, -r.id)) {
            pairs.push((c, far.id, far.distance));
        }
    }
    let base = |c: i64| lineage.lineage_graph(c, 5, None);
    let walk = |c: i64, options: GraphOptions| {
        let req = GraphRequest { options, ..GraphRequest::new(&caller, Root::Container(c), 5) };
        async move { lineage.graph(&req).await.map(|a| a.graph) }
    };
    let budget = GraphOptions { max_nodes: Some(500), count_frontier: true };
    let counted = GraphOptions { max_nodes: None, count_frontier: true };
    let mut sizes = (0usize, 0usize);
    let kinds = ["lineageGraph_d5_maxNodes500", "lineageGraph_d5_frontier", "lineageSummary_d5", "explainLineage_k3"];
    for kind in kinds {
        let (mut value, mut baseline) = (Vec::new(), Vec::new());
        for i in 0..plan.iterations {
            let (c, to) = match kind {
                "explainLineage_k3" if !pairs.is_empty() => {
                    let p = pairs[i % pairs.len()];
                    (p.0, Some(p.1))
                }
                _ => (centres[i % centres.len()], None),
            };
            let b = if i % 2 == 0 { Some(timed(base(c)).await?) } else { None };
            let v = match kind {
                "lineageGraph_d5_maxNodes500" => {
                    let (d, g) = timed(walk(c, budget)).await?;
                    sizes.0 = sizes.0.max(g.nodes.len());
                    d
                }
                "lineageGraph_d5_frontier" => timed(walk(c, counted)).await?.0,
                "lineageSummary_d5" => {
                    let (d, s) = timed(lineage.lineage_summary(c, 5, None)).await?;
                    sizes.1 = sizes.1.max(s.nodes as usize);
                    d
                }
                _ => {
                    let (from, to) = (PathEnd::Container(c), PathEnd::Container(to.unwrap_or(c)));
                    let (d, x) = timed(lineage.explain_lineage(&caller, from, to, 3, 20, None)).await?;
                    anyhow::ensure!(!x.paths.is_empty(), "explainLineage found no path from {c} to {to:?}");
                    d
                }
            };
            let b = match b {
                Some(b) => b,
                None => timed(base(c)).await?,
            };
            value.push(ms(v));
            baseline.push(ms(b.0));
        }
        value.sort_by(f64::total_cmp);
        baseline.sort_by(f64::total_cmp);
        report.add("paths", format!("{kind}_p50_ms"), percentile(&value, 50.0), Some(percentile(&baseline, 50.0)));
    }
    let longest = pairs.iter().map(|p| p.2).max().unwrap_or(0);
    say(&format!(
        "  (paths: baseline lineageGraph depth 5 unsided; maxNodes answers up to {} nodes; summaries up to {} nodes; explain ends up to {longest} hops apart)",
        sizes.0, sizes.1
    ));
    Ok(())
}
