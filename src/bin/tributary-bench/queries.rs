//! The statements and queries scenarios: each query kind asked of the service and the baseline
//! (answers compared, latencies, statements and rows per request), the same calls in process
//! without HTTP and GraphQL, and where a lineageGraph spends its store time.

use std::time::{Duration, Instant};

use serde_json::Value;
use tributary::service::Lineage;

use crate::baseline::{self, Ask, EdgeSource};
use crate::gen::Graph;
use crate::harness::{store_name, Client, Side};
use crate::report::{ms, percentile, print_statements, say, statements_by_operation, Report};
use crate::{Args, Plan, StoreArg};

/// The first difference between two answers, for the equivalence check.
fn diff(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if let Some(d) =
                x.iter().find_map(|(k, v)| diff(v, y.get(k).unwrap_or(&Value::Null), &format!("{path}.{k}")))
            {
                return Some(d);
            }
            y.keys().find(|k| !x.contains_key(*k)).map(|k| format!("{path}.{k}: only in the baseline"))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items vs {} in the baseline", x.len(), y.len()));
            }
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| diff(p, q, &format!("{path}[{i}]")))
        }
        _ if a == b => None,
        _ => Some(format!("{path}: {a} vs {b} in the baseline")),
    }
}

fn diff_all(a: &Value, b: &Value) -> Option<String> {
    if let (Value::Object(x), Value::Object(y)) = (a, b) {
        for (k, v) in x {
            if let Some(d) = diff(v, y.get(k).unwrap_or(&Value::Null), k) {
                return Some(d);
            }
        }
        return None;
    }
    diff(a, b, "")
}

/// Mean and largest statements, and mean and largest node counts, of a lineageGraph at depth 5
/// over the graph's centres.
pub(crate) async fn graph_statements(client: &Client, store: &str, g: &Graph) -> anyhow::Result<[f64; 4]> {
    let (mut statements, mut nodes, mut max_statements, mut max_nodes) = (0u64, 0usize, 0u64, 0usize);
    for &c in &g.centres {
        let before = tributary::metrics::store_queries_total(store);
        let (_, v) = client.ask(Side::Service, &Ask::lineage_graph(Graph::container_id(c), 5)).await?;
        let spent = tributary::metrics::store_queries_total(store) - before;
        let n = v["data"]["lineageGraph"]["nodes"].as_array().map_or(0, Vec::len);
        statements += spent;
        nodes += n;
        max_statements = max_statements.max(spent);
        max_nodes = max_nodes.max(n);
    }
    let n = g.centres.len().max(1) as f64;
    Ok([statements as f64 / n, max_statements as f64, nodes as f64 / n, max_nodes as f64])
}

/// The kinds of query, each with its requests (cycling over centres or hubs).
fn query_kinds(g: &Graph) -> Vec<(&'static str, Vec<Ask>)> {
    let centres: Vec<i64> = g.centres.iter().map(|&c| Graph::container_id(c)).collect();
    let lg = |d: usize| centres.iter().map(|&c| Ask::lineage_graph(c, d)).collect::<Vec<_>>();
    vec![
        ("lineageGraph_d2", lg(2)),
        ("lineageGraph_d5", lg(5)),
        ("lineageGraph_d20", lg(20)),
        ("impact_hub", g.hubs.iter().map(|&h| Ask::impact(Graph::container_id(h), 20, 10_000)).collect()),
        ("piiFlow_hub", vec![Ask::pii_flow(Graph::field_id(g.hub_field), 20, 10_000)]),
    ]
}

/// The service's GraphQL request executed in process (parse, validation, resolvers and the
/// response's serialisation, without HTTP): what the GraphQL layer costs.
async fn graphql_in_process(
    schema: &tributary::api::schema::TributarySchema,
    parsed: &tributary::api::ParsedQueries,
    lineage: &Lineage,
    ask: &Ask,
) -> anyhow::Result<Duration> {
    let body = serde_json::to_vec(&ask.body)?;
    let auth = lineage.auth(false);
    let t = Instant::now();
    let mut request: async_graphql::Request = serde_json::from_slice(&body)?;
    // As the service's handler does: the document parsed once and kept.
    parsed.parse(&mut request).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let caller = auth.authenticate(None).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let response = schema.execute(tributary::api::with_context(request, lineage, &auth, caller)).await;
    if !response.errors.is_empty() {
        anyhow::bail!("{:?}", response.errors);
    }
    let bytes = serde_json::to_vec(&response)?;
    std::hint::black_box(bytes);
    Ok(t.elapsed())
}

/// The same question asked in process, without HTTP and GraphQL: the service's `Lineage` call
/// or the baseline's traversal.
async fn in_process(lineage: Option<&Lineage>, source: &dyn EdgeSource, ask: &Ask) -> anyhow::Result<Duration> {
    let v = &ask.body["variables"];
    let int = |k: &str| v[k].as_i64().unwrap_or(0);
    let t = Instant::now();
    let down = tributary::domain::Direction::Downstream;
    let err = |e: tributary::error::Error| anyhow::anyhow!("{e:?}");
    match (ask.path, lineage) {
        ("/lineageGraph", Some(l)) => drop(l.lineage_graph(int("c"), int("d"), None).await.map_err(err)?),
        ("/impact", Some(l)) => drop(l.impact(int("c"), int("d"), down, int("l")).await.map_err(err)?),
        ("/piiFlow", Some(l)) => {
            let o = tributary::service::PiiOptions { include_indirect: false, through_masking: false };
            drop(l.pii_flow(int("f"), int("d"), down, int("l"), o).await.map_err(err)?)
        }
        ("/lineageGraph", None) => drop(baseline::lineage_graph(source, int("c"), int("d") as usize).await?),
        ("/impact", None) => drop(baseline::impact(source, int("c"), int("d") as usize, int("l") as usize).await?),
        ("/piiFlow", None) => drop(baseline::pii_flow(source, int("f"), int("d") as usize, int("l") as usize).await?),
        _ => anyhow::bail!("unknown query {}", ask.path),
    }
    Ok(t.elapsed())
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn queries(
    client: &Client,
    plan: &Plan,
    args: &Args,
    g: &Graph,
    lineage: &Lineage,
    source: &dyn EdgeSource,
    report: &mut Report,
) -> anyhow::Result<()> {
    let store = store_name(args.store);
    let budget = Duration::from_secs(args.max_secs_per_query);
    let kinds = query_kinds(g);
    if let Some(unknown) = args.queries.iter().flatten().find(|q| !kinds.iter().any(|(k, _)| k == q)) {
        let known: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
        anyhow::bail!("--queries: unknown query kind {unknown:?}; the kinds are {}", known.join(", "));
    }
    let wanted = |kind: &str| args.queries.as_ref().is_none_or(|q| q.iter().any(|k| k == kind));
    for (kind, asks) in kinds.into_iter().filter(|(kind, _)| wanted(kind)) {
        // Equivalence and statements: every distinct request once on each side.
        let (mut statements, mut base_statements, mut mismatches, mut size) = (0u64, 0u64, 0usize, 0usize);
        let mut edge_rows = 0u64;
        for (i, ask) in asks.iter().enumerate() {
            if i == 0 {
                let before = statements_by_operation(store);
                client.ask(Side::Service, ask).await?;
                print_statements(&format!("per {kind}"), store, &before, 1);
            }
            let before = tributary::metrics::store_queries_total(store);
            let (_, s) = client.ask(Side::Service, ask).await?;
            statements += tributary::metrics::store_queries_total(store) - before;
            let before = (source.statements(), source.edge_rows());
            let (_, b) = client.ask(Side::Baseline, ask).await?;
            base_statements += source.statements() - before.0;
            edge_rows += source.edge_rows() - before.1;
            size += serde_json::to_vec(&s)?.len();
            if let Some(d) = diff_all(&s["data"], &b["data"]) {
                mismatches += 1;
                say(&format!("  MISMATCH {kind} {}: {d}", ask.body["variables"]));
            }
        }
        let n = asks.len() as f64;
        let (mut sl, mut bl) = (Vec::new(), Vec::new());
        let (mut st, mut bt) = (Duration::ZERO, Duration::ZERO);
        for i in 0..plan.iterations {
            let ask = &asks[i % asks.len()];
            let order = if i % 2 == 0 { [Side::Service, Side::Baseline] } else { [Side::Baseline, Side::Service] };
            for side in order {
                let (took, _) = client.ask(side, ask).await?;
                if side == Side::Service {
                    sl.push(ms(took));
                    st += took;
                } else {
                    bl.push(ms(took));
                    bt += took;
                }
            }
            if st > budget || bt > budget {
                say(&format!("  ({kind}: stopped after {} iterations, past the {budget:?} budget)", i + 1));
                break;
            }
        }
        sl.sort_by(f64::total_cmp);
        bl.sort_by(f64::total_cmp);
        report.add("queries", format!("{kind}_p50_ms"), percentile(&sl, 50.0), Some(percentile(&bl, 50.0)));
        report.add("queries", format!("{kind}_p99_ms"), percentile(&sl, 99.0), Some(percentile(&bl, 99.0)));
        let base = (args.store == StoreArg::Neo4j).then_some(base_statements as f64 / n);
        report.add("queries", format!("{kind}_statements"), statements as f64 / n, base);
        report.add("queries", format!("{kind}_response_kb"), size as f64 / n / 1024.0, None);
        report.add("queries", format!("{kind}_edge_rows_read"), edge_rows as f64 / n, None);
        // The same calls in process: what HTTP and GraphQL add on each side.
        let (mut si, mut bi, mut gi) = (Vec::new(), Vec::new(), Vec::new());
        let schema = tributary::api::schema::build_schema();
        let parsed = tributary::api::ParsedQueries::default();
        for i in 0..plan.iterations.min(40) {
            let ask = &asks[i % asks.len()];
            si.push(ms(in_process(Some(lineage), source, ask).await?));
            bi.push(ms(in_process(None, source, ask).await?));
            gi.push(ms(graphql_in_process(&schema, &parsed, lineage, ask).await?));
        }
        si.sort_by(f64::total_cmp);
        bi.sort_by(f64::total_cmp);
        gi.sort_by(f64::total_cmp);
        report.add("queries", format!("{kind}_in_process_p50_ms"), percentile(&si, 50.0), Some(percentile(&bi, 50.0)));
        // Against the service's own call: what GraphQL adds to it.
        report.add(
            "queries",
            format!("{kind}_graphql_in_process_p50_ms"),
            percentile(&gi, 50.0),
            Some(percentile(&si, 50.0)),
        );
        report.add("queries", format!("{kind}_mismatches"), mismatches as f64, None);
    }
    Ok(())
}

/// Where a lineageGraph at depth 5 spends its store time: each statement it sends, timed alone
/// on the node set of the answer, averaged over the centres. `store` is the one `lineage` reads
/// (the statements are timed on it directly, which the service does not offer).
pub(crate) async fn statement_times(
    lineage: &Lineage,
    store: &dyn tributary::store::Store,
    g: &Graph,
) -> anyhow::Result<()> {
    use tributary::domain::Direction::{Downstream, Upstream};
    let mut totals = [Duration::ZERO; 6];
    let mut rows = [0usize; 6];
    for &c in &g.centres {
        let graph =
            lineage.lineage_graph(Graph::container_id(c), 5, None).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let ids: Vec<i64> = graph.nodes.iter().map(|n| n.container_id).collect();
        let t = Instant::now();
        rows[0] += store.container_edges_of(&ids, Upstream).await?.len();
        totals[0] += t.elapsed();
        let t = Instant::now();
        rows[1] += store.container_edges_of(&ids, Downstream).await?.len();
        totals[1] += t.elapsed();
        let t = Instant::now();
        rows[2] += store.containers_by_ids(&ids).await?.len();
        totals[2] += t.elapsed();
        let t = Instant::now();
        rows[3] += store.container_stats(&ids).await?.len();
        totals[3] += t.elapsed();
        let t = Instant::now();
        rows[4] += store.datastores_by_ids(&[1, 2]).await?.len();
        totals[4] += t.elapsed();
        let t = Instant::now();
        rows[5] += store.containers_by_ids(&[Graph::container_id(c)]).await?.len();
        totals[5] += t.elapsed();
    }
    let n = g.centres.len().max(1);
    let names = [
        "flags upstream (container_edges_of, all nodes)",
        "flags downstream (container_edges_of, all nodes)",
        "containers_by_ids (all nodes)",
        "container_stats (all nodes)",
        "datastores_by_ids",
        "containers_by_ids (the centre)",
    ];
    let parts: Vec<String> = names
        .iter()
        .zip(totals.iter().zip(rows))
        .map(|(name, (t, r))| format!("{name} {:.2} ms / {} rows", ms(*t) / n as f64, r / n))
        .collect();
    say(&format!("  (lineageGraph_d5 store statements, timed alone: {})", parts.join("; ")));
    Ok(())
}
