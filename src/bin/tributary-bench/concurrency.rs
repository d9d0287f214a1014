//! The concurrency scenario: many clients on a mixed read workload for a fixed time, the same
//! request sequence against the service and then the baseline.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::baseline::Ask;
use crate::gen::{Graph, Rng};
use crate::harness::{Client, Side};
use crate::report::{ms, percentile, say, Report};
use crate::{Args, Plan};

/// The mixed read workload of one client: the same sequence for the service and the baseline.
fn mixed_ask(g: &Graph, rng: &mut Rng) -> Ask {
    let n = g.containers.len();
    match rng.below(100) {
        0..=44 => Ask::lineage_graph(Graph::container_id(rng.below(n)), 2),
        45..=69 => Ask::lineage_graph(Graph::container_id(rng.below(n)), 5),
        70..=84 => Ask::impact(Graph::container_id(rng.below(n)), 5, 1_000),
        _ => Ask::pii_flow(Graph::field_id(rng.below(g.field_container.len())), 5, 1_000),
    }
}

async fn mixed(
    client: &Arc<Client>,
    g: &Arc<Graph>,
    side: Side,
    clients: usize,
    dur: Duration,
    seed: u64,
) -> (usize, usize, Vec<f64>, Duration) {
    let start = Instant::now();
    let deadline = start + dur;
    let mut tasks = Vec::new();
    for k in 0..clients {
        let (client, g) = (client.clone(), g.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::new(seed.wrapping_add(k as u64 * 7919));
            let (mut done, mut errors, mut lat) = (0usize, 0usize, Vec::new());
            while Instant::now() < deadline {
                let ask = mixed_ask(&g, &mut rng);
                match client.ask(side, &ask).await {
                    Ok((took, _)) => lat.push(ms(took)),
                    Err(e) => {
                        if errors == 0 {
                            say(&format!("  error under concurrency: {e}"));
                        }
                        errors += 1;
                    }
                }
                done += 1;
            }
            (done, errors, lat)
        }));
    }
    let (mut done, mut errors, mut lat) = (0, 0, Vec::new());
    for t in tasks {
        if let Ok((d, e, l)) = t.await {
            done += d;
            errors += e;
            lat.extend(l);
        } else {
            errors += 1;
        }
    }
    lat.sort_by(f64::total_cmp);
    (done, errors, lat, start.elapsed())
}

pub(crate) async fn concurrency(
    client: &Client,
    plan: &Plan,
    args: &Args,
    g: &Arc<Graph>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let client = Arc::new(Client {
        http: client.http.clone(),
        service: client.service.clone(),
        baseline: client.baseline.clone(),
    });
    let (sd, se, sl, stime) = mixed(&client, g, Side::Service, args.clients, plan.duration, args.seed).await;
    let (bd, be, bl, btime) = mixed(&client, g, Side::Baseline, args.clients, plan.duration, args.seed).await;
    let label = |m: &str| format!("{m}_{}_clients", args.clients);
    report.add(
        "concurrency",
        label("throughput_rps"),
        sd as f64 / stime.as_secs_f64(),
        Some(bd as f64 / btime.as_secs_f64()),
    );
    report.add("concurrency", label("p50_ms"), percentile(&sl, 50.0), Some(percentile(&bl, 50.0)));
    report.add("concurrency", label("p99_ms"), percentile(&sl, 99.0), Some(percentile(&bl, 99.0)));
    report.add("concurrency", label("errors"), se as f64, Some(be as f64));
    report.add("concurrency", label("requests"), sd as f64, Some(bd as f64));
    Ok(())
}
