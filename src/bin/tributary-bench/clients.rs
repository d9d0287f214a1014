//! The ingest-clients scenario (issue #44, item 2): OpenLineage events sent one per request, as
//! `openlineage-python` sends them (one event per `POST /api/v1/lineage`, HTTP keep-alive), from
//! 8 concurrent clients, against the same number of events of the same shape posted in requests
//! of 1,000 in the same run (and, on Neo4j, the hand-written batched Cypher of those requests).
//! Two sets from the generator with two seeds, so neither duplicates the other. Each run's
//! events go to one client, in their order (a run's START before its COMPLETE), as one
//! producer process sends them; the clients stop starting requests after `MAX_TIME`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;

use crate::gen::Graph;
use crate::harness::{store_name, Client};
use crate::report::{
    ms, percentile, print_statements, print_store_time, say, statements_by_operation, store_call_seconds,
    store_statement_seconds, Report,
};
use crate::{Args, Plan};

/// Concurrent single-event clients.
pub(crate) const CLIENTS: usize = 8;
/// The single-event side stops starting requests after this long, whatever is left.
const MAX_TIME: Duration = Duration::from_secs(120);

pub(crate) async fn ingest_clients(
    client: &Client,
    plan: &Plan,
    args: &Args,
    g: &Graph,
    cypher: bool,
    report: &mut Report,
) -> anyhow::Result<()> {
    let n = plan.ingest_events;
    if n == 0 {
        return Ok(());
    }
    let url = format!("{}/api/v1/lineage", client.service);
    // The single-event side: run r's events (2r, 2r+1) go to client r % CLIENTS.
    let singles = g.openlineage_events(n, args.seed ^ 0x5349_4E47);
    let mut per_client: Vec<Vec<Bytes>> = vec![Vec::new(); CLIENTS];
    for (i, e) in singles.iter().enumerate() {
        per_client[(i / 2) % CLIENTS].push(Bytes::from(serde_json::to_vec(e)?));
    }
    // Where the single-event side's time goes, per event (as the ingest scenario prints it).
    let store = store_name(args.store);
    let (ops_before, calls_before, statements_before) =
        (statements_by_operation(store), store_call_seconds(store), store_statement_seconds(store));
    let http = Arc::new(Client { http: client.http.clone(), service: client.service.clone(), baseline: String::new() });
    let start = Instant::now();
    let deadline = start + MAX_TIME;
    let mut tasks = Vec::new();
    for bodies in per_client {
        let (http, url) = (http.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors, mut accepted) = (Vec::with_capacity(bodies.len()), 0usize, 0i64);
            for body in bodies {
                if Instant::now() >= deadline {
                    break;
                }
                match http.post(url.clone(), body).await {
                    Ok((took, v)) => {
                        lat.push((ms(took), start.elapsed().as_secs_f64()));
                        accepted +=
                            ["applied", "recorded", "ignored"].iter().map(|k| v[k].as_i64().unwrap_or(0)).sum::<i64>();
                    }
                    Err(e) => {
                        if errors == 0 {
                            say(&format!("  ingest-clients: a request failed: {e}"));
                        }
                        errors += 1;
                    }
                }
            }
            (lat, errors, accepted)
        }));
    }
    let (mut lat, mut errors, mut accepted) = (Vec::new(), 0usize, 0i64);
    for t in tasks {
        let (l, e, a) = t.await?;
        lat.extend(l);
        errors += e;
        accepted += a;
    }
    let secs = start.elapsed().as_secs_f64();
    // When the slow requests ended: at the start (cold plans, the first groups) or throughout.
    let slow: Vec<f64> = lat.iter().filter(|(l, _)| *l > 1_000.0).map(|(_, at)| *at).collect();
    if let (Some(first), Some(last)) = (slow.iter().copied().reduce(f64::min), slow.iter().copied().reduce(f64::max)) {
        let early = slow.iter().filter(|at| **at < secs / 10.0).count();
        say(&format!(
            "  (ingest-clients: {} requests over 1 s, ended {first:.1}-{last:.1} s in; {early} in the first tenth)",
            slow.len()
        ));
    }
    let mut lat: Vec<f64> = lat.into_iter().map(|(l, _)| l).collect();
    lat.sort_by(f64::total_cmp);
    let sent = lat.len() + errors;
    let single_rate = lat.len() as f64 / secs.max(1e-9);
    say(&format!("  (ingest-clients: {sent} of {n} single-event requests in {secs:.1} s from {CLIENTS} clients)"));
    print_statements("single-event requests, per event", store, &ops_before, sent);
    print_store_time("store calls, per event", store_call_seconds(store), &calls_before, sent);
    if cypher {
        print_store_time(
            "Neo4j statements in transactions, per event",
            store_statement_seconds(store),
            &statements_before,
            sent,
        );
    }

    // The batched side: as many events of the same shape, in requests of 1,000.
    let batched = g.openlineage_events(sent.max(1), args.seed ^ 0x4241_5443);
    let bodies: Vec<Bytes> =
        batched.chunks(1_000).map(|c| Ok(Bytes::from(serde_json::to_vec(c)?))).collect::<anyhow::Result<_>>()?;
    let (mut took, mut cypher_took) = (Duration::ZERO, Duration::ZERO);
    for body in &bodies {
        took += client.post(url.clone(), body.clone()).await?.0;
        if cypher {
            cypher_took += client.post(format!("{}/ingestCypherBatched", client.baseline), body.clone()).await?.0;
        }
    }
    let rate = |d: Duration| batched.len() as f64 / d.as_secs_f64().max(1e-9);
    let label = |m: &str| format!("clients{CLIENTS}_{m}");
    report.add("ingest_clients", label("events_per_sec_vs_batched"), single_rate, Some(rate(took)));
    if cypher {
        report.add("ingest_clients", label("events_per_sec_vs_cypher_batched"), single_rate, Some(rate(cypher_took)));
    }
    report.add("ingest_clients", label("p50_ms"), percentile(&lat, 50.0), None);
    report.add("ingest_clients", label("p99_ms"), percentile(&lat, 99.0), None);
    report.add("ingest_clients", label("errors"), errors as f64, None);
    report.add("ingest_clients", label("events_accepted"), accepted as f64, Some(lat.len() as f64));
    Ok(())
}
