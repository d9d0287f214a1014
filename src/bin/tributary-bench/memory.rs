//! The memory scenario: a child process opens the loaded store as the service would and reports
//! its resident memory (`--rss-probe`), against the baseline's in-memory adjacency; and the
//! machine's description that heads every run.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{json, Value};
use tributary::service::Lineage;
use tributary::store::Store;

use crate::baseline::Adj;
use crate::gen::Graph;
use crate::harness::Opened;
use crate::report::{say, Report};
use crate::{Args, StoreArg};

pub(crate) fn vm_rss(pid: Option<u32>) -> Option<u64> {
    status_bytes(pid, "VmRSS:")
}

/// The peak resident memory of this process so far (the kernel's high-water mark).
pub(crate) fn vm_peak_rss() -> Option<u64> {
    status_bytes(None, "VmHWM:")
}

fn status_bytes(pid: Option<u32>, key: &str) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".to_string(),
    };
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

pub(crate) fn machine() -> String {
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
    format!("{cpu}, {cores} cores, {mem} RAM, load average {}", load_average())
}

/// The 1, 5 and 15 minute load averages: the figures of a long run are read next to them.
pub(crate) fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Child mode: open the store as a service process would, answer a few graph queries, report RSS.
pub(crate) async fn rss_probe(args: &Args, spec: &str) -> anyhow::Result<()> {
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

pub(crate) async fn memory(
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
    // The bench process itself (graph, baseline adjacency, import): what the size needs to run.
    report.add("memory", "bench_peak_rss_mib", vm_peak_rss().unwrap_or(0) as f64 / 1048576.0, None);
    if args.store == StoreArg::Neo4j {
        let pid = std::env::var("TRIBUTARY_NEO4J_PID").ok().and_then(|p| p.parse().ok());
        if let Some(rss) = vm_rss(pid).filter(|_| pid.is_some()) {
            report.add("memory", "neo4j_server_rss_bytes_per_edge", rss as f64 / e, None);
        }
    }
    Ok(())
}
