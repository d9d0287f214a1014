//! What `serve` does around serving, so that faults cost a wait rather than data: it waits for
//! a Neo4j that is not up yet (a container starting beside it), finishes at start the events a
//! previous process stored but did not apply (a `kill -9` mid-request), and on SIGTERM lets
//! the requests in flight finish within a bounded grace period.
//!
//! # How it fits
//!
//! What `serve` does around serving, so a fault costs a wait rather than data. `open_store_waiting` retries a Neo4j
//! that cannot be reached yet (0.5 s doubling to 5 s, a log line each time) for `--store-wait-secs`; the embedded store
//! opens at once or not at all. `spawn_finish_pending` finds, on a task of its own so readiness does not wait, the
//! events a previous process stored but never applied (status `pending`, received before this start, so no request in
//! flight now) and applies them (`Lineage::finish_pending_openlineage`, `service/openlineage/recover.rs`: `replay`
//! bounded to their id range). `serve_until_drained` runs `run_lineage` and, once the signal came, gives the requests
//! in flight `--shutdown-grace-secs` before returning without them. `serve_finishing_pending`, what `main` calls once
//! the store is open, starts the one and runs the other (tests/hostile.rs holds that replay at a known point and checks
//! `/readyz` answers meanwhile).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;

use crate::config::StoreKind;
use crate::service::Lineage;
use crate::store::{Store, StoreError};

/// `server::open_store`, but a Neo4j that cannot be reached yet is tried again, with a log line
/// per attempt and a growing pause (0.5 s doubling up to 5 s), until `wait` has passed. The
/// embedded store opens at once or not at all: its errors do not pass by waiting.
pub async fn open_store_waiting(kind: &StoreKind, wait: Duration) -> Result<Arc<dyn Store>, StoreError> {
    let StoreKind::Neo4j { uri, .. } = kind else { return crate::server::open_store(kind).await };
    let started = Instant::now();
    let mut pause = Duration::from_millis(500);
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let e = match crate::server::open_store(kind).await {
            Ok(store) => {
                if attempt > 1 {
                    tracing::info!(uri = %uri, attempt, waited_secs = started.elapsed().as_secs(), "Neo4j reachable; starting");
                }
                return Ok(store);
            }
            Err(StoreError::Unavailable(e)) => e,
            Err(other) => return Err(other),
        };
        let waited = started.elapsed();
        if waited >= wait {
            tracing::error!(uri = %uri, attempt, waited_secs = waited.as_secs(), error = %e, "Neo4j still not reachable; giving up (raise --store-wait-secs to wait longer)");
            return Err(StoreError::Unavailable(format!(
                "Neo4j at {uri} could not be reached within {} s: {e}",
                wait.as_secs()
            )));
        }
        let pause_now = pause.min(wait - waited);
        tracing::warn!(
            uri = %uri,
            attempt,
            retry_in_ms = pause_now.as_millis() as u64,
            waited_secs = waited.as_secs(),
            wait_secs = wait.as_secs(),
            error = %e,
            "Neo4j not reachable yet; will keep trying until --store-wait-secs"
        );
        tokio::time::sleep(pause_now).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// Finds the events earlier processes stored but did not apply (received before now, still
/// `pending`) and applies them, on a task of its own so that neither listening nor readiness
/// waits for it (finding them scans the stored events). Logs what it found, progress every 500
/// events, and the counts at the end; when the store cannot say or fails meanwhile, they wait
/// for the next start or `tributary replay --status pending`.
/// Records the jobs and runs of a store upgraded from a version that did not (its migration
/// left a note; see `Lineage::backfill_jobs_and_runs`), before serving, so the first answers
/// already hold them. A one-off: later starts find no note and return at once.
pub async fn backfill_jobs_and_runs(lineage: &Lineage) -> Result<(), crate::error::Error> {
    let started = std::time::Instant::now();
    let read = lineage
        .backfill_jobs_and_runs(|n| tracing::info!(events = n, "recording jobs and runs from the stored events"))
        .await?;
    if read > 0 {
        tracing::info!(
            events = read,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "jobs and runs recorded from the stored events"
        );
    }
    Ok(())
}

pub fn spawn_finish_pending(lineage: Lineage) -> tokio::task::JoinHandle<()> {
    let process_start = crate::domain::now();
    tokio::spawn(async move {
        let range = match lineage.pending_openlineage(process_start).await {
            Ok(Some(range)) => range,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(
                    error = e.message(),
                    "cannot look for events left pending; run `tributary replay --status pending` later"
                );
                return;
            }
        };
        tracing::info!(
            pending = range.count,
            first_id = range.first,
            last_id = range.last,
            "events stored but not applied before the last stop; finishing them in the background"
        );
        let started = Instant::now();
        let mut done = 0i64;
        let result = lineage
            .finish_pending_openlineage(range, |e| {
                done += 1;
                if done % 500 == 0 {
                    tracing::info!(finished = done, of = range.count, last_id = e.id, "finishing pending events");
                }
            })
            .await;
        match result {
            Ok(report) => tracing::info!(
                finished = report.events.len(),
                applied = report.count("applied"),
                recorded = report.count("recorded"),
                ignored = report.count("ignored"),
                rejected = report.count("rejected") + report.count("denied"),
                failed = report.count("failed"),
                secs = started.elapsed().as_secs_f64(),
                "pending events finished"
            ),
            Err(e) => tracing::error!(
                error = e.message(),
                finished = done,
                "finishing pending events stopped; they stay pending until the next start or `tributary replay --status pending`"
            ),
        }
    })
}

/// What `serve` does once its store is open and its listener bound: starts finishing the events
/// an earlier process left pending (`spawn_finish_pending`, in the background) and serves at
/// once (`serve_until_drained`), so neither listening nor readiness waits for that replay.
pub async fn serve_finishing_pending(
    listener: TcpListener,
    lineage: Lineage,
    auth_enabled: bool,
    cors_origins: &[String],
    limits: crate::api::pushback::Limits,
    grace: Duration,
) -> std::io::Result<()> {
    spawn_finish_pending(lineage.clone());
    serve_until_drained(listener, lineage, auth_enabled, cors_origins, limits, grace).await
}

/// `server::run_lineage` until SIGTERM or Ctrl-C, then at most `grace` more for the requests in
/// flight (axum stops accepting at once); past it, exits without them. Their events stay stored
/// as pending, and the next start finishes them.
pub async fn serve_until_drained(
    listener: TcpListener,
    lineage: Lineage,
    auth_enabled: bool,
    cors_origins: &[String],
    limits: crate::api::pushback::Limits,
    grace: Duration,
) -> std::io::Result<()> {
    let (stopping, mut stopped) = tokio::sync::watch::channel(false);
    let signal = async move {
        crate::server::shutdown_signal().await;
        let _ = stopping.send(true);
    };
    let serve = crate::server::run_limited(listener, lineage, auth_enabled, cors_origins, limits, signal);
    let deadline = async move {
        if stopped.wait_for(|s| *s).await.is_err() {
            // The sender went without a signal: only the server's end counts then.
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        out = serve => {
            tracing::info!("requests in flight finished");
            out
        }
        () = deadline => {
            tracing::warn!(grace_secs = grace.as_secs(), "requests still in flight after the shutdown grace period; exiting without them (their events are finished at the next start)");
            Ok(())
        }
    }
}
