//! Prometheus metrics, declared in one place and prefixed `tributary_`.
//!
//! # How it fits
//!
//! All metrics are declared in one place, with the `tributary_` prefix:
//! `tributary_store_queries_total{store,operation}` (stores call `store_query` once per statement),
//! `tributary_store_call_duration_seconds{store,call}` (each `Store` method, timed by `TimeoutStore`),
//! `tributary_store_statement_duration_seconds{store,statement}` (each Cypher statement inside a Neo4j transaction),
//! `tributary_http_requests_total`, `tributary_http_request_duration_seconds`,
//! `tributary_openlineage_forwarded_total{outcome}`, `tributary_events_purged_total` and
//! `tributary_store_retries_total{store,code}` (Neo4j transactions run again after a transient error). Tests read
//! deltas of `store_queries_total(store)` to prove that a query costs a bounded number of statements.

use std::sync::OnceLock;

use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

pub struct Metrics {
    pub registry: Registry,
    /// Every statement sent to a store, by `store` and `operation`.
    pub store_queries: IntCounterVec,
    /// Wall time of each store call (one trait method: a read, or a write transaction), by
    /// `store` and `call`; with `store_queries` it tells round trips from slow statements.
    pub store_calls: HistogramVec,
    /// Wall time of each statement inside a Neo4j transaction (sent, run, all rows pulled), by
    /// `store` and `statement` (the `cypher/` file's name).
    pub store_statements: HistogramVec,
    pub http_requests: IntCounterVec,
    pub http_latency: HistogramVec,
    /// OpenLineage events forwarded to another backend, by outcome (`sent`, `failed`, `dropped`).
    pub forwarded: IntCounterVec,
    /// Stored events deleted by the retention task.
    pub events_purged: prometheus::IntCounter,
    /// Transactions run again after a transient database error (a deadlock, a leader switch),
    /// by `store` and `code` (the database's status code).
    pub store_retries: IntCounterVec,
    /// Ingest requests running now (inside `api::pushback::IngestGate`).
    pub ingest_in_flight: prometheus::IntGauge,
    /// Ingest requests refused at the concurrency limit (429).
    pub ingest_refused: prometheus::IntCounter,
    /// Requests refused because their address failed authentication too often (429).
    pub auth_throttled: prometheus::IntCounter,
    /// The Kafka intake (src/kafka): messages read, by `topic`.
    pub kafka_messages: IntCounterVec,
    /// Events read from Kafka by outcome (`status`: `applied`, `ignored`, `rejected`, `failed`,
    /// `denied`); a message that is no event counts as one `rejected`.
    pub kafka_events: IntCounterVec,
    /// Messages behind the end of each assigned partition (`topic`, `partition`).
    pub kafka_lag: IntGaugeVec,
    /// Partitions assigned to this replica.
    pub kafka_partitions: prometheus::IntGauge,
    /// 1 for the consumer's current `state` (starting, consuming, paused, stopping, stopped,
    /// failed), 0 for the others.
    pub kafka_state: IntGaugeVec,
    /// Offset commits, by `outcome` (`committed`, `failed`).
    pub kafka_commits: IntCounterVec,
    /// Times the partitions were paused because the store was unavailable.
    pub kafka_pauses: prometheus::IntCounter,
    /// Rejected messages copied to the dead-letter topic, by `outcome` (`sent`, `failed`).
    pub kafka_dead_lettered: IntCounterVec,
    /// Time to store, apply and commit one batch of messages.
    pub kafka_batch_seconds: prometheus::Histogram,
    /// OpenLineage requests ingested together by the group commit (`service::group_commit`), per group.
    pub ingest_group_requests: prometheus::Histogram,
}

fn build() -> Metrics {
    let registry = Registry::new();
    let store_queries = IntCounterVec::new(
        Opts::new("tributary_store_queries_total", "Statements sent to the store"),
        &["store", "operation"],
    )
    .expect("valid metric definition");
    let store_calls = HistogramVec::new(
        HistogramOpts::new("tributary_store_call_duration_seconds", "Store call latency")
            .buckets(vec![0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0]),
        &["store", "call"],
    )
    .expect("valid metric definition");
    let store_statements = HistogramVec::new(
        HistogramOpts::new("tributary_store_statement_duration_seconds", "Store statement latency")
            .buckets(vec![0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0]),
        &["store", "statement"],
    )
    .expect("valid metric definition");
    let http_requests = IntCounterVec::new(
        Opts::new("tributary_http_requests_total", "HTTP requests answered"),
        &["method", "path", "status"],
    )
    .expect("valid metric definition");
    let http_latency = HistogramVec::new(
        HistogramOpts::new("tributary_http_request_duration_seconds", "HTTP request latency"),
        &["method", "path"],
    )
    .expect("valid metric definition");
    let forwarded = IntCounterVec::new(
        Opts::new("tributary_openlineage_forwarded_total", "OpenLineage events forwarded, by outcome"),
        &["outcome"],
    )
    .expect("valid metric definition");
    let events_purged =
        prometheus::IntCounter::new("tributary_events_purged_total", "Stored events deleted by retention")
            .expect("valid metric definition");
    let store_retries = IntCounterVec::new(
        Opts::new("tributary_store_retries_total", "Store transactions retried after a transient error"),
        &["store", "code"],
    )
    .expect("valid metric definition");
    let ingest_in_flight = prometheus::IntGauge::new("tributary_ingest_in_flight", "Ingest requests running now")
        .expect("valid metric definition");
    let ingest_refused = prometheus::IntCounter::new(
        "tributary_ingest_refused_total",
        "Ingest requests refused at the concurrency limit",
    )
    .expect("valid metric definition");
    let auth_throttled = prometheus::IntCounter::new(
        "tributary_auth_throttled_total",
        "Requests refused because their address failed authentication too often",
    )
    .expect("valid metric definition");
    let kafka_messages = IntCounterVec::new(
        Opts::new("tributary_kafka_messages_consumed_total", "Kafka messages read, by topic"),
        &["topic"],
    )
    .expect("valid metric definition");
    let kafka_events = IntCounterVec::new(
        Opts::new("tributary_kafka_events_total", "OpenLineage events read from Kafka, by outcome"),
        &["status"],
    )
    .expect("valid metric definition");
    let kafka_lag = IntGaugeVec::new(
        Opts::new("tributary_kafka_consumer_lag", "Messages behind the end of each assigned Kafka partition"),
        &["topic", "partition"],
    )
    .expect("valid metric definition");
    let kafka_partitions =
        prometheus::IntGauge::new("tributary_kafka_partitions_assigned", "Kafka partitions assigned to this replica")
            .expect("valid metric definition");
    let kafka_state = IntGaugeVec::new(
        Opts::new("tributary_kafka_consumer_state", "1 for the Kafka consumer's current state"),
        &["state"],
    )
    .expect("valid metric definition");
    let kafka_commits = IntCounterVec::new(
        Opts::new("tributary_kafka_commits_total", "Kafka offset commits, by outcome"),
        &["outcome"],
    )
    .expect("valid metric definition");
    let kafka_pauses = prometheus::IntCounter::new(
        "tributary_kafka_pauses_total",
        "Times the Kafka partitions were paused because the store was unavailable",
    )
    .expect("valid metric definition");
    let kafka_dead_lettered = IntCounterVec::new(
        Opts::new("tributary_kafka_dead_lettered_total", "Rejected Kafka messages copied to the dead-letter topic"),
        &["outcome"],
    )
    .expect("valid metric definition");
    let kafka_batch_seconds = prometheus::Histogram::with_opts(
        HistogramOpts::new("tributary_kafka_batch_duration_seconds", "Time to store, apply and commit a Kafka batch")
            .buckets(vec![0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0]),
    )
    .expect("valid metric definition");
    let ingest_group_requests = prometheus::Histogram::with_opts(
        HistogramOpts::new("tributary_ingest_group_requests", "OpenLineage requests ingested together, per group")
            .buckets(vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]),
    )
    .expect("valid metric definition");
    for c in [
        Box::new(store_queries.clone()) as Box<dyn prometheus::core::Collector>,
        Box::new(store_calls.clone()),
        Box::new(store_statements.clone()),
        Box::new(http_requests.clone()),
        Box::new(http_latency.clone()),
        Box::new(forwarded.clone()),
        Box::new(events_purged.clone()),
        Box::new(store_retries.clone()),
        Box::new(ingest_in_flight.clone()),
        Box::new(ingest_refused.clone()),
        Box::new(auth_throttled.clone()),
        Box::new(kafka_messages.clone()),
        Box::new(kafka_events.clone()),
        Box::new(kafka_lag.clone()),
        Box::new(kafka_partitions.clone()),
        Box::new(kafka_state.clone()),
        Box::new(kafka_commits.clone()),
        Box::new(kafka_pauses.clone()),
        Box::new(kafka_dead_lettered.clone()),
        Box::new(kafka_batch_seconds.clone()),
        Box::new(ingest_group_requests.clone()),
    ] {
        registry.register(c).expect("metric registered once");
    }
    Metrics {
        registry,
        store_queries,
        store_calls,
        store_statements,
        http_requests,
        http_latency,
        forwarded,
        events_purged,
        store_retries,
        ingest_in_flight,
        ingest_refused,
        auth_throttled,
        kafka_messages,
        kafka_events,
        kafka_lag,
        kafka_partitions,
        kafka_state,
        kafka_commits,
        kafka_pauses,
        kafka_dead_lettered,
        kafka_batch_seconds,
        ingest_group_requests,
    }
}

pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(build)
}

thread_local! {
    /// Set while this thread runs the second half of a read split in two (`uncounted`).
    static UNCOUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts one statement sent to a store. A batched read that the embedded store runs in two
/// halves on two connections (`uncounted` around the second) counts once: the count says how
/// many reads a request makes, which must not grow with the number of nodes.
pub fn store_query(store: &'static str, operation: &'static str) {
    if UNCOUNTED.with(|u| u.get()) {
        return;
    }
    metrics().store_queries.with_label_values(&[store, operation]).inc();
}

/// Runs `f` without counting its statements (see `store_query`).
pub fn uncounted<T>(f: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            UNCOUNTED.with(|u| u.set(false));
        }
    }
    UNCOUNTED.with(|u| u.set(true));
    let _reset = Reset;
    f()
}

/// Counts one transaction run again after a transient error with this status code.
pub fn store_retry(store: &'static str, code: &str) {
    metrics().store_retries.with_label_values(&[store, code]).inc();
}

/// Times one store call.
pub fn store_call(store: &'static str, call: &'static str, seconds: f64) {
    metrics().store_calls.with_label_values(&[store, call]).observe(seconds);
}

/// Times one statement inside a transaction.
pub fn store_statement(store: &'static str, statement: &'static str, seconds: f64) {
    metrics().store_statements.with_label_values(&[store, statement]).observe(seconds);
}

/// Total statements sent to one store so far (tests and benchmarks read deltas of it).
pub fn store_queries_total(store: &str) -> u64 {
    store_queries_where(store, None)
}

/// Statements of one operation (its `cypher/` file or SQL name) sent to one store so far.
pub fn store_queries_of(store: &str, operation: &str) -> u64 {
    store_queries_where(store, Some(operation))
}

/// The sum of `tributary_store_queries_total` for `store`, of one operation or of all.
fn store_queries_where(store: &str, operation: Option<&str>) -> u64 {
    let label = |m: &prometheus::proto::Metric, name: &str, value: &str| {
        m.get_label().iter().any(|l| l.name() == name && l.value() == value)
    };
    metrics()
        .registry
        .gather()
        .iter()
        .filter(|f| f.name() == "tributary_store_queries_total")
        .flat_map(|f| f.get_metric())
        .filter(|m| label(m, "store", store) && operation.is_none_or(|op| label(m, "operation", op)))
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}

/// The text exposition format served at `/metrics`.
pub fn render() -> String {
    let mut buf = Vec::new();
    let encoder = TextEncoder::new();
    if let Err(e) = encoder.encode(&metrics().registry.gather(), &mut buf) {
        tracing::error!(error = %e, "metrics encoding failed");
    }
    String::from_utf8(buf).unwrap_or_default()
}
