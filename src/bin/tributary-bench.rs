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
#[path = "tributary-bench/gen.rs"]
mod gen;
#[path = "tributary-bench/neo.rs"]
mod neo;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::body::Bytes;
use clap::{Parser, ValueEnum};
use serde::Serialize;
use serde_json::{json, Value};
use tributary::service::Lineage;
use tributary::store::{Record, Store};

use crate::baseline::{Adj, Ask, BaselineState, EdgeSource};
use crate::gen::{Graph, Rng};

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
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
enum Scenario {
    /// Bulk load (`Store::import`): edges per second.
    Load,
    /// Store statements per lineageGraph at the full size and at a tenth of it.
    Statements,
    /// lineageGraph at depth 2, 5 and 20, impact from a hub, piiFlow from a hub field.
    Queries,
    /// Concurrent clients on a mixed read workload for a fixed time.
    Concurrency,
    /// Resident memory of a service process after loading, per edge.
    Memory,
    /// OpenLineage ingest over HTTP in batches of 1,000 RunEvents with column lineage.
    Ingest,
}

const ALL: [Scenario; 6] = [
    Scenario::Load,
    Scenario::Statements,
    Scenario::Queries,
    Scenario::Concurrency,
    Scenario::Memory,
    Scenario::Ingest,
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
    /// Comma-separated scenarios (default: all): load, statements, queries, concurrency, memory, ingest.
    #[arg(long, value_enum, value_delimiter = ',')]
    scenarios: Option<Vec<Scenario>>,
    /// Where to write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
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

#[derive(Serialize, Clone, Debug)]
struct Entry {
    scenario: &'static str,
    store: &'static str,
    metric: String,
    value: f64,
    baseline: Option<f64>,
    ratio: Option<f64>,
}

struct Report {
    store: &'static str,
    entries: Vec<Entry>,
}

impl Report {
    fn add(&mut self, scenario: &'static str, metric: impl Into<String>, value: f64, baseline: Option<f64>) {
        let ratio = baseline.filter(|b| *b != 0.0).map(|b| value / b);
        let e = Entry { scenario, store: self.store, metric: metric.into(), value, baseline, ratio };
        say(&format!(
            "  {:<12} {:<34} {:>14} {:>14} {:>9}",
            e.scenario,
            e.metric,
            num(e.value),
            e.baseline.map(num).unwrap_or_else(|| "-".into()),
            e.ratio.map(|r| format!("{r:.3}")).unwrap_or_else(|| "-".into())
        ));
        self.entries.push(e);
    }
}

fn num(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// One line on stdout (the crate denies `print_stdout`; a benchmark's output is its point).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if let Some(spec) = args.rss_probe.clone() {
        return rt.block_on(rss_probe(&args, &spec));
    }
    rt.block_on(run(args))
}

// ------------------------------------------------------------------ machine and memory

fn vm_rss(pid: Option<u32>) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".to_string(),
    };
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| t.lines().next().map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_string()))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| format!("{:.1} GiB", kb as f64 / 1024.0 / 1024.0))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!("{cpu}, {cores} cores, {mem} RAM, load average {}", load.join(" "))
}

/// Child mode: open the store as a service process would, answer a few graph queries, report RSS.
async fn rss_probe(args: &Args, spec: &str) -> anyhow::Result<()> {
    let rss_start = vm_rss(None).unwrap_or(0);
    let store: Arc<dyn Store> = if let Some(dir) = spec.strip_prefix("embedded:") {
        Arc::new(tributary::store::sqlite::SqliteStore::open(Path::new(dir))?)
    } else {
        let uri = args.neo4j_uri.clone().context("no Neo4j URI")?;
        Arc::new(
            tributary::store::neo4j::Neo4jStore::connect(&uri, &args.neo4j_user, &args.neo4j_password, None).await?,
        )
    };
    let lineage = Lineage::new(store);
    let (hub, centres) = args.probe_ids.split_first().context("no probe ids")?;
    for &c in centres {
        lineage.lineage_graph(c, 5, None).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
    }
    lineage
        .impact(*hub, 20, tributary::domain::Direction::Downstream, 10_000)
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    say(&json!({"rss_start": rss_start, "rss_loaded": vm_rss(None).unwrap_or(0)}).to_string());
    Ok(())
}

// ------------------------------------------------------------------ stores and servers

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> anyhow::Result<TempDir> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("tributary-bench-{}-{tag}-{n}", std::process::id()));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Opened {
    store: Arc<dyn Store>,
    neo4j: Option<Arc<tributary::store::neo4j::Neo4jStore>>,
    dir: Option<TempDir>,
}

async fn open_store(args: &Args, tag: &str) -> anyhow::Result<Opened> {
    use tributary::store::timeout::{limit_from_env, TimeoutStore};
    let limit = limit_from_env()?;
    match args.store {
        StoreArg::Embedded => {
            let dir = TempDir::new(tag)?;
            // As `serve` opens it: behind the per-call time limit, which also times each call.
            let store = Arc::new(TimeoutStore::new(tributary::store::sqlite::SqliteStore::open(&dir.0)?, limit));
            Ok(Opened { store, neo4j: None, dir: Some(dir) })
        }
        StoreArg::Neo4j => {
            let uri = args.neo4j_uri.clone().filter(|u| !u.is_empty()).context(
                "--store neo4j needs --neo4j-uri or NEO4J_URI (start one with `eval \"$(scripts/neo4j-start)\"`)",
            )?;
            let connect =
                || tributary::store::neo4j::Neo4jStore::connect(&uri, &args.neo4j_user, &args.neo4j_password, None);
            // The service's store as `serve` opens it; a second pool for wiping and baselines.
            let direct = Arc::new(connect().await?);
            direct.wipe().await?;
            let store = Arc::new(TimeoutStore::new(connect().await?, limit));
            Ok(Opened { store, neo4j: Some(direct), dir: None })
        }
    }
}

/// The real service, as `tributary::server::run` serves it (authentication off), on loopback.
async fn serve_service(store: Arc<dyn Store>) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = tributary::server::run(listener, store, &[], std::future::pending()).await;
    });
    Ok(url)
}

async fn serve(app: axum::Router) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(url)
}

fn store_name(s: StoreArg) -> &'static str {
    match s {
        StoreArg::Embedded => "embedded",
        StoreArg::Neo4j => "neo4j",
    }
}

// ------------------------------------------------------------------ requests

struct Client {
    http: reqwest::Client,
    service: String,
    baseline: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Service,
    Baseline,
}

impl Client {
    /// One query; the time is to the last byte of the answer. An HTTP or GraphQL error is an error.
    async fn ask(&self, side: Side, ask: &Ask) -> anyhow::Result<(Duration, Value)> {
        let url = match side {
            Side::Service => format!("{}/graphql", self.service),
            Side::Baseline => format!("{}{}", self.baseline, ask.path),
        };
        let body = Bytes::from(serde_json::to_vec(&ask.body)?);
        let t = Instant::now();
        let resp = self.http.post(url).header("content-type", "application/json").body(body).send().await?;
        let status = resp.status();
        let bytes = resp.bytes().await?;
        let took = t.elapsed();
        if !status.is_success() {
            anyhow::bail!("HTTP {status}: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)]));
        }
        let v: Value = serde_json::from_slice(&bytes)?;
        if let Some(errors) = v.get("errors") {
            anyhow::bail!("GraphQL errors: {errors}");
        }
        Ok((took, v))
    }

    async fn post(&self, url: String, body: Bytes) -> anyhow::Result<(Duration, Value)> {
        let t = Instant::now();
        let resp = self.http.post(url).header("content-type", "application/json").body(body).send().await?;
        let status = resp.status();
        let bytes = resp.bytes().await?;
        let took = t.elapsed();
        if !status.is_success() {
            anyhow::bail!("HTTP {status}: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)]));
        }
        Ok((took, serde_json::from_slice(&bytes)?))
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

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
        opened.store.import(small.records()).await?;
        let url = serve_service(opened.store.clone()).await?;
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
        let records = g.records();
        let n = g.edge_count();
        let t = Instant::now();
        match opened.store.import(records).await {
            Ok(_) => {
                let secs = t.elapsed().as_secs_f64();
                let base = match args.store {
                    StoreArg::Embedded => Some(baseline_load_sqlite(&g.records())?),
                    StoreArg::Neo4j => None,
                };
                report.add("load", "edges_per_sec", n as f64 / secs, base.map(|b| n as f64 / b.as_secs_f64()));
                report.add("load", "load_secs", secs, base.map(|b| b.as_secs_f64()));
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
    let source: Arc<dyn EdgeSource> = match &neo_base {
        Some(n) => n.clone(),
        None => adj.clone(),
    };
    let service_url = serve_service(opened.store.clone()).await?;
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
        statement_times(&lineage, &g).await?;
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

/// Mean and largest statements, and mean and largest node counts, of a lineageGraph at depth 5
/// over the graph's centres.
async fn graph_statements(client: &Client, store: &str, g: &Graph) -> anyhow::Result<[f64; 4]> {
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

/// Statements sent to the store so far, by operation (`tributary_store_queries_total`).
fn statements_by_operation(store: &str) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for family in tributary::metrics::metrics().registry.gather() {
        if family.name() != "tributary_store_queries_total" {
            continue;
        }
        for m in family.get_metric() {
            let label = |n: &str| m.get_label().iter().find(|l| l.name() == n).map(|l| l.value().to_string());
            if label("store").as_deref() == Some(store) {
                *out.entry(label("operation").unwrap_or_default()).or_default() += m.get_counter().get_value() as u64;
            }
        }
    }
    out
}

/// Seconds spent in store calls so far, by call: (count, sum).
fn store_call_seconds(store: &str) -> std::collections::BTreeMap<String, (u64, f64)> {
    histogram_sums("tributary_store_call_duration_seconds", "call", store)
}

/// Seconds spent in Neo4j statements inside transactions so far, by statement: (count, sum).
fn store_statement_seconds(store: &str) -> std::collections::BTreeMap<String, (u64, f64)> {
    histogram_sums("tributary_store_statement_duration_seconds", "statement", store)
}

fn histogram_sums(name: &str, by: &str, store: &str) -> std::collections::BTreeMap<String, (u64, f64)> {
    let mut out = std::collections::BTreeMap::new();
    for family in tributary::metrics::metrics().registry.gather() {
        if family.name() != name {
            continue;
        }
        for m in family.get_metric() {
            let label = |n: &str| m.get_label().iter().find(|l| l.name() == n).map(|l| l.value().to_string());
            if label("store").as_deref() == Some(store) {
                let h = m.get_histogram();
                let e: &mut (u64, f64) = out.entry(label(by).unwrap_or_default()).or_default();
                e.0 += h.get_sample_count();
                e.1 += h.get_sample_sum();
            }
        }
    }
    out
}

/// Milliseconds spent in store calls since `before`, by call, per unit of work.
fn print_store_time(
    what: &str,
    now: std::collections::BTreeMap<String, (u64, f64)>,
    before: &std::collections::BTreeMap<String, (u64, f64)>,
    units: usize,
) {
    let mut rows: Vec<(String, f64, f64)> = now
        .into_iter()
        .map(|(call, (n, secs))| {
            let (n0, s0) = before.get(&call).copied().unwrap_or_default();
            let per = units.max(1) as f64;
            (call, (n - n0) as f64 / per, (secs - s0) * 1000.0 / per)
        })
        .filter(|r| r.1 > 0.0)
        .collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    let total: f64 = rows.iter().map(|r| r.2).sum();
    let list: Vec<String> = rows.iter().map(|(c, n, ms)| format!("{c} {ms:.3} ms ({n:.2} calls)")).collect();
    say(&format!("  ({what}: {total:.3} ms = {})", list.join(", ")));
}

/// The statements spent since `before`, by operation, per unit of work.
fn print_statements(what: &str, store: &str, before: &std::collections::BTreeMap<String, u64>, units: usize) {
    let now = statements_by_operation(store);
    let mut rows: Vec<(String, f64)> = now
        .iter()
        .map(|(op, n)| (op.clone(), (n - before.get(op).copied().unwrap_or(0)) as f64 / units.max(1) as f64))
        .filter(|(_, n)| *n > 0.0)
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = rows.iter().map(|r| r.1).sum();
    let list: Vec<String> = rows.iter().map(|(op, n)| format!("{op} {n:.2}")).collect();
    say(&format!("  (statements {what}: {total:.1} = {})", list.join(", ")));
}

/// The embedded store's limit for a bulk load: the same rows into the same schema, through
/// cached prepared statements, in one transaction.
fn baseline_load_sqlite(records: &[Record]) -> anyhow::Result<Duration> {
    use rusqlite::params;
    let dir = TempDir::new("load-baseline")?;
    drop(tributary::store::sqlite::SqliteStore::open(&dir.0)?);
    let mut conn = rusqlite::Connection::open(dir.0.join("tributary.db"))?;
    // The schema's name index calls the store's `unicode_lower`; inserts need it too.
    tributary::store::sqlite::register_unicode_lower(&conn)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let ts = |t: &tributary::domain::Timestamp| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let cols = |e: &tributary::domain::End| match e {
        tributary::domain::End::Container { id } => ("c", Some(*id), Some(*id), None),
        tributary::domain::End::Field { id, container_id } => ("f", Some(*id), Some(*container_id), None),
        tributary::domain::End::External { fqn } => ("x", None, None, Some(fqn.clone())),
    };
    let t = Instant::now();
    let tx = conn.transaction()?;
    {
        let mut ds = tx.prepare_cached("INSERT INTO datastores (id, name, type, store_type, namespaces, enrichment_only) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        let mut cs = tx.prepare_cached("INSERT INTO containers (id, datastore_id, key, name, database, schema, container_type, table_type, display_name, purpose, active_anomaly_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")?;
        let mut fs = tx.prepare_cached("INSERT INTO fields (id, container_id, name, display_name, data_type, status, latest_profile_id, is_computed_field, active_anomaly_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?;
        let mut es = tx.prepare_cached("INSERT INTO edges (id, created, source_kind, source_id, source_container_id, source_fqn, target_kind, target_id, target_container_id, target_fqn, description, source_type, operation, derived, transformations, last_asserted_at, retired_at, intervals, ukey) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)")?;
        for r in records {
            match r {
                Record::Datastore(d) => {
                    ds.execute(params![
                        d.id,
                        d.name,
                        d.kind,
                        d.store_type,
                        serde_json::to_string(&d.namespaces)?,
                        d.enrichment_only
                    ])?;
                }
                Record::Container(x) => {
                    let key = tributary::domain::container_key(x.database.as_deref(), x.schema.as_deref(), &x.name);
                    cs.execute(params![
                        x.id,
                        x.datastore_id,
                        key,
                        x.name,
                        x.database,
                        x.schema,
                        x.container_type,
                        x.table_type,
                        x.display_name,
                        x.purpose,
                        x.active_anomaly_count
                    ])?;
                }
                Record::Field(x) => {
                    fs.execute(params![
                        x.id,
                        x.container_id,
                        x.name,
                        x.display_name,
                        x.data_type,
                        x.status,
                        x.latest_profile_id,
                        x.is_computed_field,
                        x.active_anomaly_count
                    ])?;
                }
                Record::Edge(e) => {
                    let (sk, sid, sc, sf) = cols(&e.source);
                    let (tk, tid, tc, tf) = cols(&e.target);
                    es.execute(params![
                        e.id,
                        ts(&e.created),
                        sk,
                        sid,
                        sc,
                        sf,
                        tk,
                        tid,
                        tc,
                        tf,
                        e.description,
                        e.source_type,
                        e.operation,
                        e.derived,
                        e.transformations.as_ref().map(|t| t.to_string()),
                        e.last_asserted_at.as_ref().map(ts),
                        e.retired_at.as_ref().map(ts),
                        serde_json::to_string(&e.intervals)?,
                        tributary::store::sqlite::edge_ukey(&e.source, &e.target, &e.source_type)
                    ])?;
                }
                _ => {}
            }
        }
    }
    tx.commit()?;
    Ok(t.elapsed())
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
    let auth = tributary::auth::Auth::new(lineage.store.clone(), false);
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
async fn queries(
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
/// on the node set of the answer, averaged over the centres.
async fn statement_times(lineage: &Lineage, g: &Graph) -> anyhow::Result<()> {
    use tributary::domain::Direction::{Downstream, Upstream};
    let store = &lineage.store;
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

async fn concurrency(
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

async fn memory(
    args: &Args,
    opened: &Opened,
    g: &Graph,
    edges: usize,
    adj: &Adj,
    report: &mut Report,
) -> anyhow::Result<()> {
    let spec = match (&opened.dir, args.store) {
        (Some(dir), StoreArg::Embedded) => format!("embedded:{}", dir.0.display()),
        _ => "neo4j".to_string(),
    };
    let mut ids = vec![Graph::container_id(g.hubs[0])];
    ids.extend(g.centres.iter().map(|&c| Graph::container_id(c)));
    let exe = std::env::current_exe()?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("--rss-probe")
        .arg(&spec)
        .arg("--probe-ids")
        .arg(ids.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
    if let Some(uri) = &args.neo4j_uri {
        cmd.arg("--neo4j-uri").arg(uri).arg("--neo4j-user").arg(&args.neo4j_user);
        cmd.env("NEO4J_PASSWORD", &args.neo4j_password);
    }
    let out = cmd.output().await?;
    if !out.status.success() {
        anyhow::bail!("the memory probe failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.lines().last().unwrap_or("{}"))?;
    let loaded = v["rss_loaded"].as_f64().unwrap_or(0.0);
    let start = v["rss_start"].as_f64().unwrap_or(0.0);
    let e = edges.max(1) as f64;
    report.add("memory", "service_rss_bytes_per_edge", loaded / e, Some(adj.heap_bytes() as f64 / e));
    report.add("memory", "service_rss_mib", loaded / 1048576.0, Some(adj.heap_bytes() as f64 / 1048576.0));
    report.add("memory", "service_rss_mib_at_start", start / 1048576.0, None);
    if args.store == StoreArg::Neo4j {
        let pid = std::env::var("TRIBUTARY_NEO4J_PID").ok().and_then(|p| p.parse().ok());
        if let Some(rss) = vm_rss(pid).filter(|_| pid.is_some()) {
            report.add("memory", "neo4j_server_rss_bytes_per_edge", rss as f64 / e, None);
        }
    }
    Ok(())
}

/// What resolving one OpenLineage dataset to a container costs the service (its resolver reads
/// `containers_by_names` for the dataset name's candidate names within the namespace's
/// datastore), against an indexed lookup of the same container by its unique (datastore, key) in
/// the same database file.
async fn resolver_lookups(store: &dyn Store, db_dir: &Path, g: &Graph, report: &mut Report) -> anyhow::Result<()> {
    let picks: Vec<usize> = (0..50).map(|i| g.layers[2][(i * 7919) % g.layers[2].len()]).collect();
    let t = Instant::now();
    for &c in &picks {
        let name = gen::container_key(g, c).to_lowercase();
        let found = store.containers_by_names(&tributary::service::name_candidates(&name), Some(&[2])).await?;
        anyhow::ensure!(!found.is_empty(), "container {name} not found");
    }
    let service = t.elapsed() / picks.len() as u32;
    let conn = rusqlite::Connection::open(db_dir.join("tributary.db"))?;
    tributary::store::sqlite::register_unicode_lower(&conn)?;
    let t = Instant::now();
    for &c in &picks {
        let key = gen::container_key(g, c);
        let mut stmt = conn
            .prepare_cached("SELECT id, name FROM containers WHERE datastore_id = ?1 AND key = ?2 AND deleted = 0")?;
        let id: i64 = stmt.query_row(rusqlite::params![2, key], |r| r.get(0))?;
        anyhow::ensure!(id == Graph::container_id(c), "wrong container");
    }
    let base = t.elapsed() / picks.len() as u32;
    report.add("ingest", "dataset_lookup_ms", ms(service), Some(ms(base)));
    Ok(())
}

async fn ingest(
    client: &Client,
    plan: &Plan,
    args: &Args,
    g: &Graph,
    cypher: bool,
    report: &mut Report,
) -> anyhow::Result<()> {
    if plan.ingest_events == 0 {
        return Ok(());
    }
    let events = g.openlineage_events(plan.ingest_events, args.seed);
    let bodies: Vec<(usize, Bytes)> = events
        .chunks(1_000)
        .map(|c| Ok((c.len(), Bytes::from(serde_json::to_vec(c)?))))
        .collect::<anyhow::Result<_>>()?;
    let store = store_name(args.store);
    let ops_before = statements_by_operation(store);
    let mut batch_ops_before = ops_before.clone();
    let mut time_before = store_call_seconds(store);
    let mut statements_before = store_statement_seconds(store);
    let (mut st, mut pt, mut ct) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut failed, mut applied, mut total) = (0i64, 0i64, 0usize);
    for (n, body) in &bodies {
        let (service_took, v) = client.post(format!("{}/api/v1/lineage", client.service), body.clone()).await?;
        st += service_took;
        total += n;
        applied += v["applied"].as_i64().unwrap_or(0);
        failed += v["failed"].as_i64().unwrap_or(0) + v["rejected"].as_i64().unwrap_or(0);
        if failed > 0 {
            if let Some(bad) = v["events"]
                .as_array()
                .and_then(|a| a.iter().find(|e| e["status"] == "failed" || e["status"] == "rejected"))
            {
                say(&format!("  ingest: an event was not applied: {bad}"));
            }
        }
        // Each batch alone: a later one meets a bigger store and the first one's WAL.
        print_statements("ingest, per event", store, &batch_ops_before, *n);
        print_store_time("store calls, per event", store_call_seconds(store), &time_before, *n);
        if cypher {
            let now = store_statement_seconds(store);
            print_store_time("Neo4j statements in transactions, per event", now.clone(), &statements_before, *n);
            statements_before = now;
        }
        batch_ops_before = statements_by_operation(store);
        time_before = store_call_seconds(store);
        let (took, _) = client.post(format!("{}/parse", client.baseline), body.clone()).await?;
        pt += took;
        if cypher {
            let (took, _) = client.post(format!("{}/ingestCypher", client.baseline), body.clone()).await?;
            ct += took;
        }
        say(&format!("  (ingest batch of {n}: service {:.2} s)", service_took.as_secs_f64()));
    }
    let rate = |d: Duration| total as f64 / d.as_secs_f64().max(1e-9);
    report.add("ingest", "events_per_sec_vs_json_parse", rate(st), Some(rate(pt)));
    if cypher {
        report.add("ingest", "events_per_sec_vs_cypher", rate(st), Some(rate(ct)));
    }
    let per_event = (tributary::metrics::store_queries_total(store) as f64 - ops_before.values().sum::<u64>() as f64)
        / total.max(1) as f64;
    report.add("ingest", "statements_per_event", per_event, None);
    report.add("ingest", "events_applied", applied as f64, Some(total as f64));
    report.add("ingest", "events_failed_or_rejected", failed as f64, None);
    Ok(())
}
