//! Composition: open the store, build the schema and router, serve until shutdown.
//! `run` takes its listener and shutdown signal as arguments so tests bind port 0.
//!
//! # How it fits
//!
//! `open_store` reports failure with a message that says what to fix. `app` builds the router from a `Lineage` and the
//! auth mode. `run_lineage` takes its listener and shutdown future, so it can be tested. `spawn_retention` purges
//! stored events past `--event-retention-days`, at start and hourly. `shutdown_signal` resolves on SIGTERM or Ctrl-C,
//! and axum then finishes the requests in flight.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::api::pushback::{Limits, PushBack};
use crate::api::{self, schema::build_schema, AppState};
use crate::config::StoreKind;
use crate::service::Lineage;
use crate::store::neo4j::Neo4jStore;
use crate::store::sqlite::SqliteStore;
use crate::store::timeout::{limit_from_env, TimeoutStore};
use crate::store::{Store, StoreError};

/// Opens the store the configuration names; fails fast with a message that says what to fix.
/// Every call but `export`/`import` is limited to `TRIBUTARY_STORE_TIMEOUT_SECS` (default 30 s;
/// see `store::timeout`): a slow store answers `UNAVAILABLE` instead of hanging the request.
pub async fn open_store(kind: &StoreKind) -> Result<Arc<dyn Store>, StoreError> {
    let limit = limit_from_env()?;
    match kind {
        StoreKind::Embedded { data_dir } => {
            let dir = data_dir.clone();
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(&dir))
                .await
                .map_err(|e| StoreError::Internal(e.to_string()))??;
            tracing::info!(store = "embedded", data_dir = %data_dir.display(), timeout_secs = limit.as_secs(), "store opened");
            Ok(Arc::new(TimeoutStore::new(store, limit)))
        }
        StoreKind::Neo4j { uri, user, password, database } => {
            let store = Neo4jStore::connect(uri, user, password, database.as_deref()).await?;
            tracing::info!(store = "neo4j", uri = %uri, timeout_secs = limit.as_secs(), "store opened");
            Ok(Arc::new(TimeoutStore::new(store, limit)))
        }
    }
}

pub fn app(lineage: Lineage, auth_enabled: bool, cors_origins: &[String]) -> axum::Router {
    app_limited(lineage, auth_enabled, cors_origins, Limits::default())
}

/// `app` with the push-back limits `serve`'s flags set.
pub fn app_limited(lineage: Lineage, auth_enabled: bool, cors_origins: &[String], limits: Limits) -> axum::Router {
    let auth = lineage.auth(auth_enabled);
    let pushback = PushBack::new(limits);
    let group = crate::service::group_commit::GroupCommit::new(limits.ingest_group);
    let state = AppState { schema: build_schema(), lineage, auth, parsed: Default::default(), pushback, group };
    api::router(state, cors_origins)
}

/// Serves the store with authentication off (for embedding and tests that are not about
/// identity; `serve` turns it on).
pub async fn run(
    listener: TcpListener,
    store: Arc<dyn Store>,
    cors_origins: &[String],
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    run_lineage(listener, Lineage::new(store), false, cors_origins, shutdown).await
}

pub async fn run_lineage(
    listener: TcpListener,
    lineage: Lineage,
    auth_enabled: bool,
    cors_origins: &[String],
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    run_limited(listener, lineage, auth_enabled, cors_origins, Limits::default(), shutdown).await
}

/// `run_lineage` with the push-back limits `serve`'s flags set. The peer's address goes with
/// each request (`ConnectInfo`) for the per-address throttle of failed authentication.
pub async fn run_limited(
    listener: TcpListener,
    lineage: Lineage,
    auth_enabled: bool,
    cors_origins: &[String],
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app_limited(lineage, auth_enabled, cors_origins, limits);
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown)
        .await
}

/// Deletes stored events and change-log entries older than `days`, now and every hour, while the
/// service runs.
pub fn spawn_retention(store: Arc<dyn Store>, days: u32) {
    if days == 0 {
        return;
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            tick.tick().await;
            let before = crate::domain::now() - chrono::Duration::days(i64::from(days));
            match store.purge_events(before).await {
                Ok(n) => {
                    crate::metrics::metrics().events_purged.inc_by(n);
                    if n > 0 {
                        tracing::info!(purged = n, days, "stored events past retention deleted");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "event retention failed; retrying in an hour"),
            }
            // The change log is kept as long as the events that caused its changes.
            match store.purge_changes(before).await {
                Ok(n) if n > 0 => tracing::info!(purged = n, days, "lineage changes past retention deleted"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "change log retention failed; retrying in an hour"),
            }
        }
    });
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown signal received; finishing requests in flight");
}
