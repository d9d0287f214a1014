//! `--soak`: the mixed load against a `tributary serve` this program owns, while a chaos loop
//! `kill -9`s and restarts it every few minutes (and, on Neo4j, restarts the database when given
//! the command that does). The clients retry as openlineage-python's HTTP transport does. At the
//! end, after the pending events are finished: every acknowledged event is stored and applied
//! once, no edge has two evidence rows of one job, a follower that read the change feed across
//! every restart saw the whole log once and in order with no position missing, and the
//! service's anonymous memory (its heap) at the end of each incarnation stayed within bounds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use base64::Engine as _;
use serde_json::json;

use crate::api::{Api, Retry};
use crate::report::{rss_parts_kib, say};
use crate::seed::{self, Seeded};
use crate::work::ClientStats;

/// What `--soak` needs beyond the load's own arguments.
pub(crate) struct SoakArgs {
    pub(crate) serve_bin: PathBuf,
    pub(crate) data_dir: PathBuf,
    pub(crate) neo4j_uri: Option<String>,
    pub(crate) neo4j_restart_cmd: Option<String>,
    pub(crate) chaos_every_secs: u64,
    pub(crate) duration_secs: u64,
    pub(crate) clients: usize,
    pub(crate) writers: usize,
    pub(crate) batch: usize,
    pub(crate) tables: usize,
    pub(crate) retry: Retry,
    pub(crate) timeout: Duration,
    pub(crate) json: Option<PathBuf>,
}

/// The last incarnation's anonymous RSS (the heap) at its end may be at most this many times the
/// first's, plus [`RSS_SLACK_KIB`]: the graph grows during the soak, a leak grows without bound.
/// File-backed RSS (the embedded store's memory-mapped database) is reported, not bounded: it
/// follows the size of the file.
const RSS_FACTOR: f64 = 2.0;
const RSS_SLACK_KIB: u64 = 64 * 1024;

/// The `serve` child and how to start it again.
struct Serve {
    bin: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    child: Child,
    url: String,
}

impl Serve {
    fn spawn(bin: &Path, args: &[String], log: &Path) -> anyhow::Result<Child> {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
        Command::new(bin)
            .args(args)
            .env("NO_COLOR", "1")
            .stdout(out.try_clone()?)
            .stderr(out)
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))
    }

    fn start(args: &SoakArgs) -> anyhow::Result<Serve> {
        let port = free_port()?;
        let url = format!("http://127.0.0.1:{port}");
        let mut serve_args: Vec<String> =
            ["serve", "--listen", &format!("127.0.0.1:{port}"), "--store-wait-secs", "300"].map(String::from).into();
        serve_args.extend(store_args(args));
        std::fs::create_dir_all(&args.data_dir)?;
        let log = args.data_dir.join("soak-serve.log");
        let child = Self::spawn(&args.serve_bin, &serve_args, &log)?;
        Ok(Serve { bin: args.serve_bin.clone(), args: serve_args, log, child, url })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `kill -9`, then the same command again on the same port and store.
    fn kill9_and_restart(&mut self) -> anyhow::Result<()> {
        self.child.kill().context("kill -9 serve")?;
        self.child.wait()?;
        self.child = Self::spawn(&self.bin, &self.args, &self.log)?;
        Ok(())
    }

    /// Until `/readyz` answers 200 (or `within` passes, or the process exits).
    async fn ready(&mut self, within: Duration) -> anyhow::Result<()> {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build()?;
        let until = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("serve exited with {status}; its log: {}", self.log.display());
            }
            if let Ok(r) = client.get(format!("{}/readyz", self.url)).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            if Instant::now() > until {
                bail!("serve not ready within {within:?}; its log: {}", self.log.display());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn store_args(args: &SoakArgs) -> Vec<String> {
    let mut out = vec!["--data-dir".to_string(), args.data_dir.display().to_string()];
    out.push("--neo4j-uri".into());
    out.push(args.neo4j_uri.clone().unwrap_or_default());
    out
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// An admin token made with `tributary token create` on the store serve has opened.
fn admin_token(args: &SoakArgs) -> anyhow::Result<String> {
    let out = Command::new(&args.serve_bin)
        .args(["token", "create", "--user", "soak", "--role", "ADMIN"])
        .args(store_args(args))
        .output()
        .context("cannot run `tributary token create`")?;
    if !out.status.success() {
        bail!("`tributary token create` failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().last().map(|l| l.trim().to_string()).filter(|t| !t.is_empty()).ok_or_else(|| anyhow!("no token"))
}

/// The change log's position in a cursor (`base64url("change:<p>")`).
fn position(cursor: &str) -> Option<i64> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor).ok()?;
    String::from_utf8(bytes).ok()?.strip_prefix("change:")?.parse().ok()
}

const CHANGES: &str = "query($a: String) { changes(after: $a, first: 1000) { endCursor hasMore items { cursor } } }";

/// Follows the change log from `cursor` until `stop`, resuming from its cursor after every
/// failure (serve killed, the store restarting); the positions it read, in order.
async fn follow(api: Api, mut cursor: Option<String>, stop: Arc<AtomicBool>) -> Vec<i64> {
    let mut seen = Vec::new();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        match api.gql(CHANGES, json!({ "a": cursor })).await {
            Ok(d) => {
                let page = &d["changes"];
                let items = page["items"].as_array().cloned().unwrap_or_default();
                seen.extend(items.iter().filter_map(|i| i["cursor"].as_str().and_then(position)));
                cursor = page["endCursor"].as_str().map(str::to_string).or(cursor);
                if items.is_empty() {
                    if stopping {
                        return seen;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// Edges between the seeded tables with two evidence rows of one job (and provider).
async fn duplicate_evidence(api: &Api, seeded: &Seeded) -> anyhow::Result<(usize, usize)> {
    let mut seen_edges = BTreeSet::new();
    let mut duplicates = 0;
    for (container, _) in &seeded.tables {
        let d = api
            .gql(
                "query($c: Int!) { edges(containerId: $c, size: 1000) { items { id evidence { provider jobName } } } }",
                json!({ "c": container }),
            )
            .await?;
        for e in d["edges"]["items"].as_array().into_iter().flatten() {
            let Some(id) = e["id"].as_i64() else { continue };
            if !seen_edges.insert(id) {
                continue;
            }
            let mut by_job: BTreeMap<(String, String), usize> = BTreeMap::new();
            for ev in e["evidence"].as_array().into_iter().flatten() {
                let key = (ev["provider"].to_string(), ev["jobName"].to_string());
                *by_job.entry(key).or_default() += 1;
            }
            duplicates += by_job.values().filter(|n| **n > 1).count();
        }
    }
    Ok((seen_edges.len(), duplicates))
}

/// The whole change log after `cursor`, read at the end.
async fn log_after(api: &Api, mut cursor: Option<String>) -> anyhow::Result<Vec<i64>> {
    let mut out = Vec::new();
    loop {
        let d = api.gql(CHANGES, json!({ "a": cursor })).await?;
        let page = &d["changes"];
        for i in page["items"].as_array().into_iter().flatten() {
            out.push(i["cursor"].as_str().and_then(position).ok_or_else(|| anyhow!("bad cursor in {i}"))?);
        }
        cursor = page["endCursor"].as_str().map(str::to_string);
        if page["hasMore"] != true {
            return Ok(out);
        }
    }
}

pub(crate) async fn run(args: SoakArgs) -> anyhow::Result<bool> {
    let store = if args.neo4j_uri.is_some() { "neo4j" } else { "embedded" };
    let mut serve = Serve::start(&args)?;
    serve.ready(Duration::from_secs(300)).await?;
    let token = admin_token(&args)?;
    let retries = Arc::new(AtomicU64::new(0));
    let api = Api::new(&serve.url, Some(token), args.timeout)?.with_retry(args.retry, retries.clone());
    let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let (seeded, mut pairs) = seed::seed(&api, &run, args.tables, args.batch).await?;
    let seeded = Arc::new(seeded);
    // The soak's changes are those after the log's end now.
    let start_cursor = log_after(&api, None)
        .await?
        .last()
        .map(|p| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("change:{p}")));
    say(&format!(
        "soak on the {store} store: run {run}, {} tables, {} clients ({} writers, batches of {} and single events), {} s, chaos every ~{} s{}",
        args.tables,
        args.clients,
        args.writers,
        args.batch,
        args.duration_secs,
        args.chaos_every_secs,
        if args.neo4j_restart_cmd.is_some() { ", Neo4j restarted every other round" } else { "" }
    ));

    let stop = Arc::new(AtomicBool::new(false));
    let follower = tokio::spawn(follow(api.clone(), start_cursor.clone(), stop.clone()));
    let started = Instant::now();
    let until = started + Duration::from_secs(args.duration_secs);
    let mut tasks = tokio::task::JoinSet::new();
    let writers = args.writers.min(args.clients);
    for c in 0..writers {
        tasks.spawn(crate::work::writer(api.clone(), seeded.clone(), c, args.batch, true, until));
    }
    for c in 0..args.clients - writers {
        tasks.spawn(crate::work::reader(api.clone(), seeded.clone(), c, until));
    }

    // The chaos loop, in this task: the serve child is here.
    let rss: Arc<Mutex<Vec<(u64, u64)>>> = Arc::new(Mutex::new(Vec::new()));
    let (mut serve_kills, mut neo4j_restarts, mut round) = (0u64, 0u64, 0u64);
    loop {
        // Jittered by a quarter either way, the same every run.
        let every = args.chaos_every_secs.max(1) as f64;
        let jitter = ((round * 7_919) % 100) as f64 / 100.0 - 0.5;
        let next = Instant::now() + Duration::from_secs_f64(every * (1.0 + jitter / 2.0));
        if next + Duration::from_secs(args.chaos_every_secs.min(10)) >= until {
            break;
        }
        tokio::time::sleep_until(next.into()).await;
        round += 1;
        match &args.neo4j_restart_cmd {
            Some(cmd) if round.is_multiple_of(2) => {
                say(&format!("[{:>5.0} s] restarting Neo4j", started.elapsed().as_secs_f64()));
                let status = Command::new("sh").args(["-c", cmd]).stdout(Stdio::null()).status()?;
                if !status.success() {
                    bail!("the Neo4j restart command failed: {status}");
                }
                neo4j_restarts += 1;
            }
            _ => {
                if let Some(parts) = rss_parts_kib(serve.pid()) {
                    rss.lock().map_err(|_| anyhow!("poisoned"))?.push(parts);
                }
                say(&format!(
                    "[{:>5.0} s] kill -9 serve (pid {}) and start it again",
                    started.elapsed().as_secs_f64(),
                    serve.pid()
                ));
                serve.kill9_and_restart()?;
                serve_kills += 1;
            }
        }
        serve.ready(Duration::from_secs(300)).await?;
    }

    let mut stats = ClientStats::default();
    while let Some(s) = tasks.join_next().await {
        stats.merge(s.context("a client task panicked")?);
    }
    let secs = started.elapsed().as_secs_f64();
    // The last incarnation's memory at the end of the load, as the others' were taken.
    if let Some(parts) = rss_parts_kib(serve.pid()) {
        rss.lock().map_err(|_| anyhow!("poisoned"))?.push(parts);
    }
    // Pending events are finished in the background after a restart: wait for them.
    let acknowledged = stats.acknowledged + (args.tables as u64 - 1);
    pairs.extend(stats.pairs.iter().copied());
    let mut verified = seed::verify(&api, &seeded, &pairs).await?;
    let settle = Instant::now() + Duration::from_secs(300);
    while (verified.applied != verified.stored || verified.edges_missing > 0) && Instant::now() < settle {
        tokio::time::sleep(Duration::from_secs(1)).await;
        verified = seed::verify(&api, &seeded, &pairs).await?;
    }
    stop.store(true, Ordering::SeqCst);
    let followed = follower.await.context("the change follower panicked")?;
    let log = log_after(&api, start_cursor).await?;
    let gaps = log.windows(2).filter(|w| w[1] != w[0] + 1).count();
    let (edges, duplicates) = duplicate_evidence(&api, &seeded).await?;
    let rss = rss.lock().map_err(|_| anyhow!("poisoned"))?.clone();

    let mut rows = crate::report::rows("soak", &mut stats, secs);
    crate::report::print_table(&rows);
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    let events_ok = verified.stored == acknowledged && verified.applied == acknowledged && verified.edges_missing == 0;
    let feed_ok = followed == log && gaps == 0;
    let rss_ok = match (rss.first(), rss.last()) {
        (Some((first, _)), Some((last, _))) => (*last as f64) <= *first as f64 * RSS_FACTOR + RSS_SLACK_KIB as f64,
        _ => false,
    };
    say(&format!(
        "chaos: {serve_kills} kill -9 of serve, {neo4j_restarts} Neo4j restarts; {} requests retried",
        retries.load(Ordering::SeqCst)
    ));
    say(&format!(
        "events: {acknowledged} acknowledged, stored {}, applied {}, asserted pairs missing from the graph {}",
        verified.stored, verified.applied, verified.edges_missing
    ));
    say(&format!("evidence: {edges} edges between the tables, {duplicates} with two evidence rows of one job"));
    say(&format!(
        "change feed: {} positions followed across the restarts, {} in the log after the start, {gaps} gaps",
        followed.len(),
        log.len()
    ));
    let mib = |k: u64| format!("{:.1}", k as f64 / 1024.0);
    say(&format!(
        "serve anonymous RSS (heap) at the end of each incarnation (MiB): {} (bound: last <= {RSS_FACTOR} x first + {} MiB)",
        rss.iter().map(|(anon, _)| mib(*anon)).collect::<Vec<_>>().join(", "),
        RSS_SLACK_KIB / 1024
    ));
    say(&format!(
        "serve file-backed RSS (mapped store, binary) at the same moments (MiB): {}",
        rss.iter().map(|(_, file)| mib(*file)).collect::<Vec<_>>().join(", ")
    ));
    if let Some(e) = &stats.first_error {
        say(&format!("first error: {e}"));
    }
    let ok = errors == 0 && events_ok && duplicates == 0 && feed_ok && rss_ok;
    say(&format!("result: {}", if ok { "ok" } else { "FAILED" }));
    if let Some(path) = &args.json {
        rows.retain(|r| r.requests > 0 || r.errors > 0);
        let doc = json!({
            "store": store,
            "run": run,
            "duration_secs": secs,
            "chaos_every_secs": args.chaos_every_secs,
            "clients": args.clients,
            "writers": writers,
            "batch": args.batch,
            "tables": args.tables,
            "operations": rows,
            "serve_kills": serve_kills,
            "neo4j_restarts": neo4j_restarts,
            "retried_requests": retries.load(Ordering::SeqCst),
            "events_acknowledged": acknowledged,
            "verification": verified,
            "edges_checked": edges,
            "duplicate_evidence": duplicates,
            "changes_followed": followed.len(),
            "changes_in_log": log.len(),
            "change_gaps": gaps,
            "rss_anon_kib_per_incarnation": rss.iter().map(|(a, _)| *a).collect::<Vec<_>>(),
            "rss_file_kib_per_incarnation": rss.iter().map(|(_, f)| *f).collect::<Vec<_>>(),
            "first_error": stats.first_error,
            "ok": ok,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ok)
}
