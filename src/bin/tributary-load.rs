//! `tributary-load`: a mixed load against a running `serve` (see BENCHMARKS.md, "Mixed load").
//!
//! It seeds a graph of its own (a datastore per run, `--tables` tables, a chain of lineage sent
//! as OpenLineage events), then runs `--clients` clients for `--duration-secs`: `--writers` of
//! them send OpenLineage batches to `POST /api/v1/lineage`, the others read (`lineageGraph`,
//! `impact`, `piiFlow` in turn). Optionally a reads-only phase runs first as the baseline the
//! mixed phase's read latencies are compared with. At the end it checks that every acknowledged
//! event is stored, applied and in the graph. It prints per operation throughput, p50, p99,
//! errors and push-back refusals, and the service's RSS at start and end (`--pid`), and exits
//! non-zero when a request failed or an acknowledged event is missing.
//!
//! With `--soak` it starts and owns a `serve` itself and runs the load for `--duration-secs`
//! (30 minutes unless given) while `kill -9`ing and restarting it every `--chaos-every-secs`
//! (and restarting Neo4j with `--neo4j-restart-cmd`), the clients retrying as
//! openlineage-python does; see `soak.rs` for what it checks at the end.

#[path = "tributary-load/api.rs"]
mod api;
#[path = "tributary-load/report.rs"]
mod report;
#[path = "tributary-load/seed.rs"]
mod seed;
#[path = "tributary-load/soak.rs"]
mod soak;
#[path = "tributary-load/work.rs"]
mod work;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use serde_json::json;

use report::say;
use work::ClientStats;

#[derive(Parser, Debug)]
#[command(name = "tributary-load", about = "A mixed read and ingest load against a running tributary serve")]
struct Args {
    /// The service's base URL; several (repeated, or comma-separated) spread the clients over
    /// replicas of one deployment, client `i` of each kind on URL `i mod n`. The seeding and the
    /// final check go through the first.
    #[arg(long, default_value = "http://127.0.0.1:8080", value_delimiter = ',', num_args = 1..)]
    url: Vec<String>,
    /// An admin's API token (the load creates a datastore and tables); none with auth off.
    #[arg(long, env = "TRIBUTARY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Seconds of mixed load (default 60; 1,800 with `--soak`).
    #[arg(long)]
    duration_secs: Option<u64>,
    /// Seconds of reads only before it, as the baseline of read latency (0: none).
    #[arg(long, default_value_t = 0)]
    baseline_secs: u64,
    /// Concurrent clients in all.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    clients: u32,
    /// Of them, clients sending OpenLineage batches (the others read).
    #[arg(long, default_value_t = 8)]
    writers: u32,
    /// Events per OpenLineage batch.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    batch: u32,
    /// Tables in the seeded graph.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    tables: u32,
    /// The service's process id, for its RSS (from /proc).
    #[arg(long)]
    pid: Option<u32>,
    /// Per-request time limit, in seconds (a request past it counts as an error).
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
    /// Also write the figures to this file as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Run a soak with faults: start `serve` (`--serve-bin`) on `--data-dir` (and
    /// `--neo4j-uri`), load it, and `kill -9` and restart it every `--chaos-every-secs`.
    #[arg(long)]
    soak: bool,
    /// With `--soak`: the `tributary` binary to serve with (default: the one beside this one).
    #[arg(long)]
    serve_bin: Option<PathBuf>,
    /// With `--soak`: serve's data directory (default: a new temporary one).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// With `--soak`: serve on this Neo4j instead of the embedded store (the `NEO4J_USER` and
    /// `NEO4J_PASSWORD` of the environment reach serve).
    #[arg(long)]
    neo4j_uri: Option<String>,
    /// With `--soak` on Neo4j: a shell command that stops and starts that Neo4j again and returns
    /// once it is back; run every other chaos round, while serve keeps running.
    #[arg(long)]
    neo4j_restart_cmd: Option<String>,
    /// With `--soak`: seconds between faults (each jittered by up to a quarter either way).
    #[arg(long, default_value_t = 180, value_parser = clap::value_parser!(u64).range(1..))]
    chaos_every_secs: u64,
    /// With `--soak`: attempts per request, as openlineage-python's `retry.total` + 1 (its
    /// backoff factor 0.3 s, each wait at most 10 s).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=100))]
    attempts: u32,
}

/// Runs `readers` readers and `writers` writers until `secs` have passed; their merged figures.
async fn phase(
    apis: &[api::Api],
    seeded: &Arc<seed::Seeded>,
    readers: usize,
    writers: usize,
    batch: usize,
    secs: u64,
) -> anyhow::Result<(ClientStats, f64)> {
    let start = Instant::now();
    let until = start + Duration::from_secs(secs);
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..writers {
        tasks.spawn(work::writer(apis[c % apis.len()].clone(), seeded.clone(), c, batch, false, until));
    }
    for c in 0..readers {
        tasks.spawn(work::reader(apis[c % apis.len()].clone(), seeded.clone(), c, until));
    }
    let mut all = ClientStats::default();
    while let Some(stats) = tasks.join_next().await {
        all.merge(stats.context("a client task panicked")?);
    }
    Ok((all, start.elapsed().as_secs_f64()))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.soak {
        return soak_main(args).await;
    }
    let duration_secs = args.duration_secs.unwrap_or(60);
    let writers = args.writers.min(args.clients) as usize;
    let readers = args.clients as usize - writers;
    let batch = args.batch as usize;
    let apis = args
        .url
        .iter()
        .map(|url| api::Api::new(url, args.token.clone(), Duration::from_secs(args.timeout_secs)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let api = &apis[0];
    let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();

    let t = Instant::now();
    let (seeded, mut pairs) = seed::seed(api, &run, args.tables as usize, batch).await?;
    let seeded = Arc::new(seeded);
    say(&format!(
        "seeded run {run}: {} tables, {} chain events, in {:.1} s; {readers} readers, {writers} writers of {batch}-event batches, over {} URL(s)",
        args.tables,
        pairs.len(),
        t.elapsed().as_secs_f64(),
        apis.len()
    ));
    let rss_start = report::rss_kib(args.pid);

    let mut rows = Vec::new();
    if args.baseline_secs > 0 {
        let (mut stats, secs) = phase(&apis, &seeded, readers.max(1), 0, batch, args.baseline_secs).await?;
        rows.extend(report::rows("baseline", &mut stats, secs));
    }
    let (mut stats, secs) = phase(&apis, &seeded, readers, writers, batch, duration_secs).await?;
    rows.extend(report::rows("mixed", &mut stats, secs));
    let rss_end = report::rss_kib(args.pid);
    pairs.extend(stats.pairs.iter().copied());
    // The chain's events were acknowledged (and applied) while seeding.
    let acknowledged = stats.acknowledged + (args.tables as u64 - 1);
    let verified = seed::verify(api, &seeded, &pairs).await?;

    report::print_table(&rows);
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    let refused: u64 = rows.iter().map(|r| r.refused).sum();
    let events_ok = verified.stored == acknowledged && verified.applied == acknowledged && verified.edges_missing == 0;
    say(&format!(
        "events: {acknowledged} acknowledged, {} reported not applied; stored {}, applied {}, asserted pairs missing from the graph {}",
        stats.not_applied, verified.stored, verified.applied, verified.edges_missing
    ));
    let kib = |r: Option<(u64, u64)>, i: usize| r.map(|(a, b)| if i == 0 { a } else { b });
    match (rss_start, rss_end) {
        (Some((s, _)), Some((e, peak))) => {
            say(&format!("service RSS: {} MiB at start, {} MiB at end (peak {} MiB)", s / 1024, e / 1024, peak / 1024))
        }
        _ => say("service RSS: not measured (give --pid of the local serve)"),
    }
    if let Some(e) = &stats.first_error {
        say(&format!("first error: {e}"));
    }
    let ok = errors == 0 && events_ok;
    say(&format!("result: {}", if ok { "ok" } else { "FAILED" }));
    if let Some(path) = &args.json {
        let doc = json!({
            "run": run,
            "url": args.url[0],
            "urls": args.url,
            "clients": args.clients,
            "writers": writers,
            "batch": batch,
            "tables": args.tables,
            "duration_secs": duration_secs,
            "baseline_secs": args.baseline_secs,
            "operations": rows,
            "errors": errors,
            "refused": refused,
            "events_acknowledged": acknowledged,
            "events_not_applied": stats.not_applied,
            "verification": verified,
            "rss_start_kib": kib(rss_start, 0),
            "rss_end_kib": kib(rss_end, 0),
            "rss_peak_kib": kib(rss_end, 1),
            "first_error": stats.first_error,
            "ok": ok,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

/// `--soak`: see `soak.rs`. Exits non-zero when a check failed.
async fn soak_main(args: Args) -> anyhow::Result<()> {
    let serve_bin = match args.serve_bin {
        Some(p) => p,
        None => std::env::current_exe()?.with_file_name("tributary"),
    };
    // A temporary data directory only when none is given, removed after the run.
    let temp = match args.data_dir {
        Some(_) => None,
        None => Some(tempfile_dir()?),
    };
    let data_dir = args.data_dir.or_else(|| temp.clone()).unwrap_or_default();
    let ok = soak::run(soak::SoakArgs {
        serve_bin,
        data_dir,
        neo4j_uri: args.neo4j_uri.filter(|u| !u.is_empty()),
        neo4j_restart_cmd: args.neo4j_restart_cmd,
        chaos_every_secs: args.chaos_every_secs,
        duration_secs: args.duration_secs.unwrap_or(1800),
        clients: args.clients as usize,
        writers: args.writers as usize,
        batch: args.batch as usize,
        tables: args.tables as usize,
        retry: api::Retry {
            attempts: args.attempts,
            backoff: Duration::from_millis(300),
            max_wait: Duration::from_secs(10),
        },
        timeout: Duration::from_secs(args.timeout_secs),
        json: args.json,
    })
    .await?;
    if let Some(temp) = temp {
        let _ = std::fs::remove_dir_all(&temp);
    }
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

/// A fresh directory under the system's temporary one.
fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("tributary-soak-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}
