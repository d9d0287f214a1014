//! The results: `Report` prints each figure as a table row as it comes and keeps it for the
//! `--json` file (`Entry` is that file's shape), with the few numeric helpers every scenario
//! uses and the readers of the service's own metrics (statements and store time per operation)
//! that the queries and ingest scenarios print along the way.

use std::io::Write as _;
use std::time::Duration;

use serde::Serialize;

#[derive(Serialize, Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) scenario: &'static str,
    store: &'static str,
    metric: String,
    value: f64,
    baseline: Option<f64>,
    ratio: Option<f64>,
}

pub(crate) struct Report {
    pub(crate) store: &'static str,
    pub(crate) entries: Vec<Entry>,
}

impl Report {
    pub(crate) fn add(&mut self, scenario: &'static str, metric: impl Into<String>, value: f64, baseline: Option<f64>) {
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
pub(crate) fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Statements sent to the store so far, by operation (`tributary_store_queries_total`).
pub(crate) fn statements_by_operation(store: &str) -> std::collections::BTreeMap<String, u64> {
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
pub(crate) fn store_call_seconds(store: &str) -> std::collections::BTreeMap<String, (u64, f64)> {
    histogram_sums("tributary_store_call_duration_seconds", "call", store)
}

/// Seconds spent in Neo4j statements inside transactions so far, by statement: (count, sum).
pub(crate) fn store_statement_seconds(store: &str) -> std::collections::BTreeMap<String, (u64, f64)> {
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
pub(crate) fn print_store_time(
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
pub(crate) fn print_statements(
    what: &str,
    store: &str,
    before: &std::collections::BTreeMap<String, u64>,
    units: usize,
) {
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
