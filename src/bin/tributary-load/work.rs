//! The clients: readers cycle through `lineageGraph`, `impact` and `piiFlow` over the seeded
//! tables; writers send OpenLineage batches (each event a new run writing one table from another
//! a few places up the chain). Choices are a function of the client and the request's number,
//! so a run is the same workload every time.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::api::{Api, Outcome};
use crate::seed::Seeded;

/// The operations the report has a row for, in its order.
pub(crate) const OPERATIONS: [&str; 4] = ["lineageGraph", "impact", "piiFlow", "ingest batch"];
const INGEST: usize = 3;

const LINEAGE_GRAPH: &str = "query($c: Int!) { lineageGraph(containerId: $c, depth: 2) { nodes { id } edges { id } } }";
const IMPACT: &str =
    "query($c: Int!) { impact(containerId: $c, depth: 5, limit: 500) { isPartial containers { distance } } }";
const PII_FLOW: &str =
    "query($f: Int!) { piiFlow(fieldId: $f, depth: 5, limit: 500) { isPartial fields { distance } } }";

/// One operation's figures from one client (merged across clients for the report).
#[derive(Default, Clone)]
pub(crate) struct OpStats {
    pub(crate) latencies_us: Vec<u64>,
    pub(crate) errors: u64,
    pub(crate) refused: u64,
}

#[derive(Default)]
pub(crate) struct ClientStats {
    pub(crate) ops: [OpStats; 4],
    /// Events in a 2xx answer.
    pub(crate) acknowledged: u64,
    /// Of them, reported other than `applied`.
    pub(crate) not_applied: u64,
    /// Table pairs the applied events asserted.
    pub(crate) pairs: BTreeSet<(usize, usize)>,
    pub(crate) first_error: Option<String>,
}

impl ClientStats {
    pub(crate) fn merge(&mut self, other: ClientStats) {
        for (a, b) in self.ops.iter_mut().zip(other.ops) {
            a.latencies_us.extend(b.latencies_us);
            a.errors += b.errors;
            a.refused += b.refused;
        }
        self.acknowledged += other.acknowledged;
        self.not_applied += other.not_applied;
        self.pairs.extend(other.pairs);
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    fn note(&mut self, op: usize, outcome: Outcome, took: Duration, error: impl FnOnce() -> String) {
        let s = &mut self.ops[op];
        match outcome {
            Outcome::Ok => s.latencies_us.push(took.as_micros() as u64),
            Outcome::Refused => s.refused += 1,
            Outcome::Failed => {
                s.errors += 1;
                if self.first_error.is_none() {
                    self.first_error = Some(format!("{}: {}", OPERATIONS[op], error()));
                }
            }
        }
    }
}

/// A reader until `until`: `lineageGraph`, `impact`, `piiFlow` in turn.
pub(crate) async fn reader(api: Api, seeded: std::sync::Arc<Seeded>, client: usize, until: Instant) -> ClientStats {
    let mut stats = ClientStats::default();
    let n_tables = seeded.tables.len();
    let mut n = 0usize;
    while Instant::now() < until {
        let op = (client + n) % 3;
        let (container, field) = seeded.tables[(client * 31 + n * 17) % n_tables];
        let (query, vars) = match op {
            0 => (LINEAGE_GRAPH, json!({ "c": container })),
            1 => (IMPACT, json!({ "c": container })),
            _ => (PII_FLOW, json!({ "f": field })),
        };
        let start = Instant::now();
        let (outcome, body) = api.gql_outcome(query, vars).await;
        stats.note(op, outcome, start.elapsed(), || body.to_string());
        n += 1;
    }
    stats
}

/// A writer until `until`: batches of `batch` events, or, with `alternate`, one-event and
/// batched requests in turn (the soak). An event in a 2xx answer is acknowledged; it counts as
/// applied when its answer says `applied`, or `ignored` as a duplicate of one applied (a retry
/// of a request whose answer was lost, see `Api`'s retry).
pub(crate) async fn writer(
    api: Api,
    seeded: std::sync::Arc<Seeded>,
    client: usize,
    batch: usize,
    alternate: bool,
    until: Instant,
) -> ClientStats {
    let mut stats = ClientStats::default();
    let n_tables = seeded.tables.len();
    let mut n = 0usize;
    while Instant::now() < until {
        let size = if alternate && n.is_multiple_of(2) { 1 } else { batch };
        let pairs: Vec<(usize, usize)> = (0..size)
            .map(|j| {
                // Spread over the chain: a large odd step visits every place before repeating.
                let k = (client * 7_919 + (n * batch + j) * 104_729) % (3 * (n_tables - 1));
                let from = k % (n_tables - 1);
                (from, (from + 1 + k / (n_tables - 1)).min(n_tables - 1))
            })
            .collect();
        let events: Vec<_> = pairs.iter().map(|(a, b)| seeded.event(*a, *b)).collect();
        let start = Instant::now();
        let (outcome, body, err) = api.ingest_body(&events).await;
        let took = start.elapsed();
        if outcome == Outcome::Ok {
            let reports = body["events"].as_array().cloned().unwrap_or_default();
            stats.acknowledged += reports.len() as u64;
            let mut bad = reports.len() != events.len();
            for (pair, r) in pairs.iter().zip(&reports) {
                let duplicate_of_applied = r["status"] == "ignored" && r["summary"]["original_status"] == "applied";
                if r["status"] == "applied" || duplicate_of_applied {
                    stats.pairs.insert(*pair);
                } else {
                    stats.not_applied += 1;
                    bad = true;
                }
            }
            let outcome = if bad { Outcome::Failed } else { Outcome::Ok };
            stats.note(INGEST, outcome, took, || format!("event reports {reports:?}"));
        } else {
            stats.note(INGEST, outcome, took, || err);
        }
        n += 1;
    }
    stats
}
