//! The figures: per operation throughput, p50, p99 and max latency, errors and refusals; events
//! acknowledged and found applied; the service's memory. A table on stdout and, with `--json`,
//! the same as one JSON document.

use std::io::Write as _;

use serde::Serialize;

use crate::work::{ClientStats, OPERATIONS};

#[derive(Serialize, Debug)]
pub(crate) struct OpRow {
    pub(crate) phase: &'static str,
    pub(crate) operation: &'static str,
    pub(crate) requests: u64,
    pub(crate) per_sec: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    pub(crate) errors: u64,
    pub(crate) refused: u64,
}

/// The rows of one phase (operations without a request are left out).
pub(crate) fn rows(phase: &'static str, stats: &mut ClientStats, secs: f64) -> Vec<OpRow> {
    let mut out = Vec::new();
    for (op, s) in OPERATIONS.iter().zip(stats.ops.iter_mut()) {
        if s.latencies_us.is_empty() && s.errors == 0 && s.refused == 0 {
            continue;
        }
        s.latencies_us.sort_unstable();
        let ms = |p: f64| percentile(&s.latencies_us, p) as f64 / 1000.0;
        out.push(OpRow {
            phase,
            operation: op,
            requests: s.latencies_us.len() as u64,
            per_sec: s.latencies_us.len() as f64 / secs.max(f64::MIN_POSITIVE),
            p50_ms: ms(50.0),
            p99_ms: ms(99.0),
            max_ms: s.latencies_us.last().copied().unwrap_or(0) as f64 / 1000.0,
            errors: s.errors,
            refused: s.refused,
        });
    }
    out
}

/// The nearest-rank percentile of sorted values (0 when there are none).
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The table of every phase's rows; a read's p99 in the mixed phase is also given as a ratio to
/// the same read's p99 in the reads-only baseline, when there was one.
pub(crate) fn print_table(rows: &[OpRow]) {
    say(&format!(
        "{:<9} {:<13} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>10}",
        "phase", "operation", "requests", "per_sec", "p50_ms", "p99_ms", "max_ms", "errors", "refused", "p99/base"
    ));
    for r in rows {
        let base = rows.iter().find(|b| b.phase == "baseline" && b.operation == r.operation && r.phase != "baseline");
        let ratio = base.filter(|b| b.p99_ms > 0.0).map(|b| format!("{:.2}", r.p99_ms / b.p99_ms));
        say(&format!(
            "{:<9} {:<13} {:>9} {:>9.1} {:>9.2} {:>9.2} {:>9.2} {:>7} {:>8} {:>10}",
            r.phase,
            r.operation,
            r.requests,
            r.per_sec,
            r.p50_ms,
            r.p99_ms,
            r.max_ms,
            r.errors,
            r.refused,
            ratio.unwrap_or_else(|| "-".into())
        ));
    }
}

/// The service's resident memory, from `/proc/<pid>/status`: (VmRSS, VmHWM) in KiB.
pub(crate) fn rss_kib(pid: Option<u32>) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    let field = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// The service's resident memory split by kind, from `/proc/<pid>/status`: (RssAnon, RssFile)
/// in KiB. The heap is anonymous; the embedded store's memory-mapped database file is not, and
/// its resident pages grow with the file, not with time.
pub(crate) fn rss_parts_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    Some((field("RssAnon:")?, field("RssFile:")?))
}

/// One line on stdout (the crate denies `print_stdout`; a load report's output is its point).
pub(crate) fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
