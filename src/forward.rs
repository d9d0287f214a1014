//! Forwarding accepted OpenLineage events to another OpenLineage backend
//! (`--emit-openlineage-url`), as seed 004's emission does.
//!
//! Ingest never waits on it: events go into a bounded queue that one background task drains,
//! posting each to the target with a few retries. A full queue or a target that keeps failing
//! drops the event with a warning and a metric, never an ingest error.
//!
//! # How it fits
//!
//! `Forwarder` posts accepted events to `--emit-openlineage-url` from one background task: a bounded queue (10,000),
//! four attempts, and drops counted in `tributary_openlineage_forwarded_total`. Ingest never waits on it or fails
//! because of it. `Forwarder::start_waiting` is for `import-query-log`: `submit` waits for room instead of dropping,
//! and the command awaits the task, which ends when the queue is drained.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

/// Events waiting to be forwarded; past this, new ones are dropped (and counted).
pub const QUEUE: usize = 10_000;
const ATTEMPTS: u32 = 4;

#[derive(Clone)]
pub struct Forwarder {
    tx: mpsc::Sender<Value>,
    /// A batch command (a query-log import) waits for room in the queue rather than dropping.
    wait: bool,
}

impl Forwarder {
    /// Starts the background task posting to `url` (the target's endpoint, for example
    /// `http://marquez:5000/api/v1/lineage`).
    pub fn start(url: String) -> Forwarder {
        Forwarder::spawn(url, false).0
    }

    /// For a batch command: [`Forwarder::submit`] waits while the queue is full, and the
    /// returned task ends once every clone of the forwarder is dropped and the queue is drained,
    /// so the command can await it before exiting.
    pub fn start_waiting(url: String) -> (Forwarder, tokio::task::JoinHandle<()>) {
        Forwarder::spawn(url, true)
    }

    fn spawn(url: String, wait: bool) -> (Forwarder, tokio::task::JoinHandle<()>) {
        let (tx, mut rx) = mpsc::channel::<Value>(QUEUE);
        let task = tokio::spawn(async move {
            let client = match reqwest::Client::builder().timeout(Duration::from_secs(10)).build() {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(error = %e, "cannot build the forwarding HTTP client; forwarding is off");
                    return;
                }
            };
            while let Some(event) = rx.recv().await {
                send(&client, &url, &event).await;
            }
        });
        (Forwarder { tx, wait }, task)
    }

    /// Queues an event built for forwarding (SQL emission): as [`Forwarder::forward`], except
    /// that a waiting forwarder waits for room instead of dropping it.
    pub async fn submit(&self, event: Value) {
        if !self.wait {
            return self.forward(&event);
        }
        if self.tx.send(event).await.is_err() {
            crate::metrics::metrics().forwarded.with_label_values(&["dropped"]).inc();
            tracing::warn!("the forwarding task has stopped; an OpenLineage event was not forwarded");
        }
    }

    /// Queues an event; never blocks ingest.
    pub fn forward(&self, event: &Value) {
        if self.tx.try_send(event.clone()).is_err() {
            crate::metrics::metrics().forwarded.with_label_values(&["dropped"]).inc();
            tracing::warn!("forwarding queue is full; an OpenLineage event was not forwarded");
        }
    }
}

async fn send(client: &reqwest::Client, url: &str, event: &Value) {
    let mut delay = Duration::from_millis(200);
    for attempt in 1..=ATTEMPTS {
        match client.post(url).json(event).send().await {
            Ok(r) if r.status().is_success() => {
                crate::metrics::metrics().forwarded.with_label_values(&["sent"]).inc();
                return;
            }
            // A client error will not get better by retrying.
            Ok(r) if r.status().is_client_error() => {
                tracing::warn!(status = r.status().as_u16(), url, "forwarding target refused an event");
                break;
            }
            Ok(r) => tracing::warn!(status = r.status().as_u16(), attempt, url, "forwarding target failed"),
            Err(e) => tracing::warn!(error = %e, attempt, url, "forwarding target unreachable"),
        }
        if attempt < ATTEMPTS {
            tokio::time::sleep(delay).await;
            delay *= 4;
        }
    }
    crate::metrics::metrics().forwarded.with_label_values(&["failed"]).inc();
}
