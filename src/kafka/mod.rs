//! The Kafka intake of `serve`: a consumer in a group that reads OpenLineage events from the
//! configured topics and sends them through the same ingest as a request. Off unless
//! `--kafka-brokers` is given.
//!
//! At least once, applied once: a batch's events are stored in the event log (and applied)
//! before its offsets are committed, per partition; a message read again is recognised by its
//! content and changes nothing (`service::kafka`). While the store is unavailable the consumer
//! pauses its partitions and commits nothing; on SIGTERM it commits what it stored and leaves
//! the group. `config` holds the flags, `consumer` the loop, and this file what the rest of
//! the service sees: `spawn`, and the state `/readyz` reports.
//!
//! # How it fits
//!
//! The second transport of OpenLineage ingest, off unless `--kafka-brokers` is set. `kafka::spawn` runs a librdkafka
//! consumer (`rdkafka`, built from vendored source) in a group on a task of its own; `main` starts it beside the HTTP
//! server and waits for it at shutdown. Each batch of messages goes to `Lineage::ingest_kafka_batch`
//! (`service/kafka.rs`), which stores messages that are no event as `rejected` with their topic, partition and offset
//! and passes the events to `ingest_openlineage`, the HTTP routes' function. Invariant: an offset is committed only
//! after that call returned Ok (its events are in the event log), and only for partitions still assigned; on any error
//! the batch is retried with the partitions paused, and nothing is committed. Applied once follows from the event log's
//! fingerprint (content) identity, as for a resent request. Rebalance callbacks run only inside `recv`, never while a
//! batch is stored. `/readyz` shows `kafka::readiness_line`; the `tributary_kafka_*` metrics live in `metrics.rs`.

pub mod config;
mod consumer;

use std::sync::{Mutex, OnceLock};

pub use config::{KafkaArgs, KafkaConfig};
pub use consumer::spawn;

/// What the consumer is doing, as `/readyz` and `tributary_kafka_consumer_state` report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Connecting and joining the group.
    Starting,
    /// Reading and ingesting.
    Consuming,
    /// The store is unavailable: partitions paused, nothing committed, until it is back.
    Paused,
    /// Committing what was stored and leaving the group (SIGTERM).
    Stopping,
    /// Left the group.
    Stopped,
    /// The consumer could not be created or subscribed (a wrong property): `serve` stops at
    /// start with the reason.
    Failed,
}

impl State {
    pub const ALL: [State; 6] =
        [State::Starting, State::Consuming, State::Paused, State::Stopping, State::Stopped, State::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Consuming => "consuming",
            State::Paused => "paused",
            State::Stopping => "stopping",
            State::Stopped => "stopped",
            State::Failed => "failed",
        }
    }
}

/// The consumer's state as `/readyz` shows it.
#[derive(Debug, Clone)]
pub struct Status {
    pub state: State,
    pub group: String,
    pub topics: Vec<String>,
    /// Partitions assigned to this replica, as `topic/partition`.
    pub partitions: Vec<String>,
    /// Messages behind the end of the assigned partitions, at the last statistics.
    pub lag: i64,
    /// The last error the client reported (brokers unreachable, authentication failed, ...),
    /// cleared once a batch goes through.
    pub last_error: Option<String>,
}

fn cell() -> &'static Mutex<Option<Status>> {
    static STATUS: OnceLock<Mutex<Option<Status>>> = OnceLock::new();
    STATUS.get_or_init(|| Mutex::new(None))
}

/// The consumer's status; `None` when this process reads no topic.
pub fn status() -> Option<Status> {
    cell().lock().ok().and_then(|s| s.clone())
}

fn update(f: impl FnOnce(&mut Status)) {
    if let Ok(mut s) = cell().lock() {
        if let Some(s) = s.as_mut() {
            f(s);
        }
    }
}

fn set_state(state: State) {
    update(|s| s.state = state);
    let gauge = &crate::metrics::metrics().kafka_state;
    for st in State::ALL {
        gauge.with_label_values(&[st.as_str()]).set(i64::from(st == state));
    }
}

/// The line `/readyz` adds for the consumer, e.g. `kafka: consuming (group tributary, 4
/// partitions, lag 0)`.
pub fn readiness_line() -> Option<String> {
    let s = status()?;
    let mut line = format!(
        "kafka: {} (group {}, topics {}, {} partition(s) assigned, lag {})",
        s.state.as_str(),
        s.group,
        s.topics.join(","),
        s.partitions.len(),
        s.lag
    );
    if let Some(e) = &s.last_error {
        line.push_str(&format!("; last error: {e}"));
    }
    Some(line)
}
