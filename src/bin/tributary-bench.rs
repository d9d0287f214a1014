//! `tributary-bench`: the benchmark program (see BENCHMARKS.md).
//!
//! It generates a seeded, realistic lineage graph, loads it with `Store::import` into a fresh
//! store (embedded in a temp dir, or a Neo4j named by `--store neo4j`, wiped first), serves the
//! real app in-process next to a baseline router on the same HTTP stack, and reports every figure
//! as a ratio against a baseline measured in the same run: a table on stdout and, with `--json`,
//! a list of `{scenario, store, metric, value, baseline, ratio}`.

/// mimalloc rather than the system allocator: a request allocates and frees many small
/// strings and JSON values across the runtime's threads, where glibc's malloc spent a sixth of
/// the ingest's CPU time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "tributary-bench/baseline.rs"]
mod baseline;
#[path = "tributary-bench/clients.rs"]
mod clients;
#[path = "tributary-bench/concurrency.rs"]
mod concurrency;
#[path = "tributary-bench/gen.rs"]
mod gen;
#[path = "tributary-bench/harness.rs"]
mod harness;
#[path = "tributary-bench/history.rs"]
mod history;
#[path = "tributary-bench/ingest.rs"]
mod ingest;
#[path = "tributary-bench/jobs.rs"]
mod jobs;
#[path = "tributary-bench/kafka.rs"]
mod kafka;
#[path = "tributary-bench/load.rs"]
mod load;
#[path = "tributary-bench/memory.rs"]
mod memory;
#[path = "tributary-bench/neo.rs"]
mod neo;
#[path = "tributary-bench/paths.rs"]
mod paths;
#[path = "tributary-bench/queries.rs"]
mod queries;
#[path = "tributary-bench/report.rs"]
mod report;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use tributary::service::Lineage;

use crate::baseline::{Adj, BaselineState, EdgeSource};
use crate::concurrency::concurrency;
use crate::gen::Graph;
use crate::harness::{open_store, serve, serve_service, store_name, Client};
use crate::ingest::{ingest, resolver_lookups};
use crate::load::{baseline_load_sqlite, import_graph};
use crate::memory::{load_average, machine, memory, rss_probe, vm_rss};
use crate::queries::{graph_statements, queries, statement_times};
use crate::report::{say, Report};

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
enum StoreArg {
    Embedded,
    Neo4j,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
enum Size {
    /// About 2,000 containers and 10,000 field edges: a smoke run.
    Small,
    /// 20,000 containers and 200,000 field edges.
    Medium,
    /// 100,000 containers and 1,000,000 field edges (the default).
    Large,
    /// 1,000,000 containers and 10,000,000 field edges (issue #22): a warehouse at ten times the
    /// large size; over an hour on a 2-core box, with the queries capped per kind.
    Xlarge,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
enum Scenario {
    /// Bulk load (`Store::import_chunks`): containers, fields and edges per second, wall time.
    Load,
    /// Store statements per lineageGraph at the full size and at a tenth of it.
    Statements,
    /// lineageGraph at depth 2, 5 and 20, impact from a hub, piiFlow from a hub field.
    Queries,
    /// lineageGraph as of an instant against the same without one; lineageDiff (issue #19).
    History,
    /// Concurrent clients on a mixed read workload for a fixed time.
    Concurrency,
    /// Resident memory of a service process after loading, per edge.
    Memory,
    /// OpenLineage ingest over HTTP in batches of 1,000 RunEvents with column lineage.
    Ingest,
    /// OpenLineage events one per request from 8 concurrent clients, as `openlineage-python`
    /// sends them, against the same number in requests of 1,000 (issue #44).
    IngestClients,
    /// explainLineage, lineageSummary and lineageGraph's maxNodes against lineageGraph (issue #19).
    Paths,
    /// lineageGraph with includeJobs, and impact with each item's health, against the same
    /// without (issue #29); records its jobs through OpenLineage first, so it runs last.
    Jobs,
    /// OpenLineage events read from a Kafka topic by the service's consumer, against the HTTP
    /// ingest of as many events of the same shape (issue #48). Needs a broker (--kafka-brokers),
    /// so it runs only when named.
    Kafka,
}

const ALL: [Scenario; 10] = [
    Scenario::Load,
    Scenario::Statements,
    Scenario::Queries,
    Scenario::History,
    Scenario::Concurrency,
    Scenario::Memory,
    Scenario::Ingest,
    Scenario::IngestClients,
    Scenario::Paths,
    Scenario::Jobs,
];

/// Benchmarks Tributary against baselines measured in the same run.
#[derive(Parser, Debug)]
#[command(name = "tributary-bench", version)]
struct Args {
    /// The store to benchmark. Neo4j is used only with `--store neo4j`, and it is WIPED first.
    #[arg(long, value_enum, default_value = "embedded")]
    store: StoreArg,
    /// A preset for the sizes, iterations, duration and ingest volume (default: large).
    #[arg(long, value_enum)]
    size: Option<Size>,
    /// Containers to generate (overrides the preset).
    #[arg(long)]
    containers: Option<usize>,
    /// Field-level edges to generate (overrides the preset).
    #[arg(long)]
    field_edges: Option<usize>,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Measured requests per query kind and side (overrides the preset).
    #[arg(long)]
    iterations: Option<usize>,
    /// Length of the concurrency run, per side (overrides the preset).
    #[arg(long)]
    duration_secs: Option<u64>,
    /// Concurrent clients in the concurrency scenario.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// OpenLineage events to ingest, sent in batches of 1,000 (overrides the preset).
    #[arg(long)]
    ingest_events: Option<usize>,
    /// Time budget per query kind and side in the queries scenario; fewer iterations run past it.
    #[arg(long, default_value_t = 60)]
    max_secs_per_query: u64,
    /// Comma-separated query kinds the queries scenario runs (default: all): lineageGraph_d2,
    /// lineageGraph_d5, lineageGraph_d20, impact_hub, piiFlow_hub. For profiling one of them.
    #[arg(long, value_delimiter = ',')]
    queries: Option<Vec<String>>,
    /// Comma-separated scenarios (default: all but kafka): load, statements, queries, history,
    /// concurrency, memory, ingest, ingest-clients, paths, jobs, kafka.
    #[arg(long, value_enum, value_delimiter = ',')]
    scenarios: Option<Vec<Scenario>>,
    /// The service's `--ingest-group-events` (default: `serve`'s); 0 turns the group commit off,
    /// to measure the ingest as it was before it (issue #44).
    #[arg(long)]
    ingest_group_events: Option<usize>,
    /// The service's `--ingest-group-wait-ms` (default: `serve`'s).
    #[arg(long)]
    ingest_group_wait_ms: Option<u64>,
    /// Where to write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// The Kafka broker(s) of the kafka scenario (scripts/kafka-start prints one).
    #[arg(long, env = "KAFKA_BOOTSTRAP_SERVERS")]
    kafka_brokers: Option<String>,
    #[arg(long, env = "NEO4J_URI")]
    neo4j_uri: Option<String>,
    #[arg(long, env = "NEO4J_USER", default_value = "neo4j")]
    neo4j_user: String,
    #[arg(long, env = "NEO4J_PASSWORD", default_value = "", hide_env_values = true)]
    neo4j_password: String,
    /// Internal: measure a service process's resident memory (`embedded:<dir>` or `neo4j`).
    #[arg(long, hide = true)]
    rss_probe: Option<String>,
    #[arg(long, hide = true, value_delimiter = ',')]
    probe_ids: Vec<i64>,
}

struct Plan {
    containers: usize,
    field_edges: usize,
    iterations: usize,
    duration: Duration,
    ingest_events: usize,
    scenarios: Vec<Scenario>,
}

impl Plan {
    fn of(a: &Args) -> Plan {
        let (c, f, i, d, e) = match a.size.unwrap_or(Size::Large) {
            Size::Small => (2_000, 10_000, 10, 3, 1_000),
            Size::Medium => (20_000, 200_000, 50, 15, 2_000),
            Size::Large => (100_000, 1_000_000, 50, 30, 2_000),
            // Fewer iterations: one xlarge lineageGraph at depth 20 or impact from a hub takes
            // seconds, and `--max-secs-per-query` caps each kind anyway.
            Size::Xlarge => (1_000_000, 10_000_000, 20, 30, 2_000),
        };
        Plan {
            containers: a.containers.unwrap_or(c),
            field_edges: a.field_edges.unwrap_or(f),
            iterations: a.iterations.unwrap_or(i).max(1),
            duration: Duration::from_secs(a.duration_secs.unwrap_or(d).max(1)),
            ingest_events: a.ingest_events.unwrap_or(e),
            scenarios: a.scenarios.clone().unwrap_or_else(|| ALL.to_vec()),
        }
    }
    fn has(&self, s: Scenario) -> bool {
        self.scenarios.contains(&s)
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if let Some(spec) = args.rss_probe.clone() {
        return rt.block_on(rss_probe(&args, &spec));
    }
    rt.block_on(run(args))
}

// ------------------------------------------------------------------ the run

async fn run(args: Args) -> anyhow::Result<()> {
    let plan = Plan::of(&args);
    let store_kind = store_name(args.store);
    let mut report = Report { store: store_kind, entries: Vec::new() };
    say(&format!("tributary-bench: store {store_kind}, seed {}", args.seed));
    say(&format!("machine: {}", machine()));
    let t = Instant::now();
    let mut g = Graph::generate(plan.containers, plan.field_edges, args.seed);
    describe(&g, t.elapsed());
    say(&format!("  {:<12} {:<34} {:>14} {:>14} {:>9}", "scenario", "metric", "value", "baseline", "ratio"));

    // Statements at a tenth of the size first: a Neo4j database holds one graph at a time.
    let mut small_statements = None;
    if plan.has(Scenario::Statements) {
        let small = Graph::generate(plan.containers / 10, plan.field_edges / 10, args.seed);
        let opened = open_store(&args, "small").await?;
        import_graph(opened.store.as_ref(), &small).await?;
        let url = serve_service(opened.store.clone(), (args.ingest_group_events, args.ingest_group_wait_ms)).await?;
        let client = Client { http: reqwest::Client::new(), service: url, baseline: String::new() };
        small_statements = Some(graph_statements(&client, store_kind, &small).await?);
        if let Some(neo) = &opened.neo4j {
            neo.wipe().await?;
        }
    }

    // Load.
    let mut opened = open_store(&args, "main").await?;
    let rss_before = vm_rss(None).unwrap_or(0);
    let edges = loop {
        let n = g.edge_count();
        let t = Instant::now();
        match import_graph(opened.store.as_ref(), &g).await {
            Ok(_) => {
                let secs = t.elapsed().as_secs_f64();
                say(&format!("  (imported in {secs:.1} s; load average {})", load_average()));
                let base = match args.store {
                    // The baseline's own bulk load doubles the load time: only when `load` is asked for.
                    StoreArg::Embedded if plan.has(Scenario::Load) => Some(baseline_load_sqlite(&g)?.as_secs_f64()),
                    _ => None,
                };
                for (metric, count) in [
                    ("containers_per_sec", g.containers.len()),
                    ("fields_per_sec", g.field_container.len()),
                    ("edges_per_sec", n),
                ] {
                    let rate = |s: f64| count as f64 / s;
                    report.add("load", metric, rate(secs), base.map(rate));
                }
                report.add("load", "load_secs", secs, base);
                break n;
            }
            Err(e) if args.store == StoreArg::Neo4j && g.containers.len() > 1_000 => {
                let (c, f) = (g.containers.len() / 2, g.fedges.len() / 2);
                say(&format!("  NOTE: the import of {n} edges failed on Neo4j ({e}); retrying at {c} containers / {f} field edges"));
                if let Some(neo) = &opened.neo4j {
                    neo.wipe().await?;
                }
                g = Graph::generate(c, f, args.seed);
                describe(&g, Duration::ZERO);
            }
            Err(e) => return Err(e.into()),
        }
    };
    let g = Arc::new(g);
    let rss_after = vm_rss(None).unwrap_or(0);
    say(&format!(
        "  (bench process RSS {:.0} MiB before the import, {:.0} MiB after)",
        rss_before as f64 / 1048576.0,
        rss_after as f64 / 1048576.0
    ));

    // Servers: the real app and the baseline router, in this process, on loopback.
    let adj = Arc::new(Adj::build(&g));
    let neo_base = match (&args.store, &args.neo4j_uri) {
        (StoreArg::Neo4j, Some(uri)) => Some(Arc::new(
            neo::NeoBase::new(neo::connect(uri, &args.neo4j_user, &args.neo4j_password).await?, &g).await?,
        )),
        _ => None,
    };
    if let Some(n) = &neo_base {
        say(&format!("server: {}", n.server().await));
    }
    let source: Arc<dyn EdgeSource> = match &neo_base {
        Some(n) => n.clone(),
        None => adj.clone(),
    };
    let service_url =
        serve_service(opened.store.clone(), (args.ingest_group_events, args.ingest_group_wait_ms)).await?;
    let baseline_url = serve(baseline::router(BaselineState { source: source.clone(), neo: neo_base.clone() })).await?;
    let client = Client {
        http: reqwest::Client::builder().pool_max_idle_per_host(256).build()?,
        service: service_url,
        baseline: baseline_url,
    };

    if plan.has(Scenario::Statements) {
        let big = graph_statements(&client, store_kind, &g).await?;
        if let Some(small) = small_statements {
            report.add("statements", "lineageGraph_d5_statements_mean", big[0], Some(small[0]));
            report.add("statements", "lineageGraph_d5_statements_max", big[1], Some(small[1]));
            report.add("statements", "lineageGraph_d5_nodes_mean", big[2], Some(small[2]));
            report.add("statements", "lineageGraph_d5_nodes_max", big[3], Some(small[3]));
        }
    }
    if plan.has(Scenario::Queries) {
        let lineage = Lineage::new(opened.store.clone());
        queries(&client, &plan, &args, &g, &lineage, source.as_ref(), &mut report).await?;
        statement_times(&lineage, opened.store.as_ref(), &g).await?;
    }
    if plan.has(Scenario::History) {
        history::history(&client, &plan, &g, &mut report).await?;
    }
    if plan.has(Scenario::Paths) {
        paths::paths(&plan, &g, &Lineage::new(opened.store.clone()), &mut report).await?;
    }
    if plan.has(Scenario::Concurrency) {
        concurrency(&client, &plan, &args, &g, &mut report).await?;
    }
    if plan.has(Scenario::Memory) {
        memory(&args, &opened, &g, edges, &adj, &mut report).await?;
    }
    if plan.has(Scenario::Ingest) {
        if let Some(dir) = &opened.dir {
            resolver_lookups(opened.store.as_ref(), &dir.0, &g, &mut report).await?;
        }
        ingest(&client, &plan, &args, &g, neo_base.is_some(), &mut report).await?;
    }
    if plan.has(Scenario::IngestClients) {
        clients::ingest_clients(&client, &plan, &args, &g, neo_base.is_some(), &mut report).await?;
    }
    if plan.has(Scenario::Kafka) {
        kafka::kafka(&client, &plan, &args, &g, opened.store.clone(), &mut report).await?;
    }
    if plan.has(Scenario::Jobs) {
        jobs::jobs(&client, &plan, &g, &mut report).await?;
    }
    if plan.has(Scenario::Load) {
        // Reported above; nothing else to run.
    } else {
        report.entries.retain(|e| e.scenario != "load");
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report.entries)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        say(&format!("results written to {}", path.display()));
    }
    opened.dir.take();
    Ok(())
}

fn describe(g: &Graph, took: Duration) {
    let hub_out = g.cedges.iter().filter(|e| e.src == gen::EndRef::C(g.hubs[0])).count();
    say(&format!(
        "graph: {} containers, {} fields, {} container edges, {} field edges, {} external assets, {} hubs (the first feeds {} tables), generated in {:.1} s",
        g.containers.len(),
        g.field_container.len(),
        g.cedges.len(),
        g.fedges.len(),
        g.externals.len(),
        g.hubs.len(),
        hub_out,
        took.as_secs_f64()
    ));
}
