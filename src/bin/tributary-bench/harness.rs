//! What every scenario stands on: a fresh store per run (a temp dir, or a wiped Neo4j), the real
//! service and the baseline router served in this process on loopback, and the HTTP client that
//! asks either side the same question.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::body::Bytes;
use serde_json::Value;
use tributary::store::Store;

use crate::baseline::Ask;
use crate::{Args, StoreArg};

pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> anyhow::Result<TempDir> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("tributary-bench-{}-{tag}-{n}", std::process::id()));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) struct Opened {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) neo4j: Option<Arc<tributary::store::neo4j::Neo4jStore>>,
    pub(crate) dir: Option<TempDir>,
}

pub(crate) async fn open_store(args: &Args, tag: &str) -> anyhow::Result<Opened> {
    use tributary::store::timeout::{limit_from_env, TimeoutStore};
    let limit = limit_from_env()?;
    match args.store {
        StoreArg::Embedded => {
            let dir = TempDir::new(tag)?;
            // As `serve` opens it: behind the per-call time limit, which also times each call.
            let store = Arc::new(TimeoutStore::new(tributary::store::sqlite::SqliteStore::open(&dir.0)?, limit));
            Ok(Opened { store, neo4j: None, dir: Some(dir) })
        }
        StoreArg::Neo4j => {
            let uri = args.neo4j_uri.clone().filter(|u| !u.is_empty()).context(
                "--store neo4j needs --neo4j-uri or NEO4J_URI (start one with `eval \"$(scripts/neo4j-start)\"`)",
            )?;
            let connect =
                || tributary::store::neo4j::Neo4jStore::connect(&uri, &args.neo4j_user, &args.neo4j_password, None);
            // The service's store as `serve` opens it; a second pool for wiping and baselines.
            let direct = Arc::new(connect().await?);
            direct.wipe().await?;
            let store = Arc::new(TimeoutStore::new(connect().await?, limit));
            Ok(Opened { store, neo4j: Some(direct), dir: None })
        }
    }
}

/// The real service, as `tributary::server::run` serves it (authentication off), on loopback;
/// `group` sets `serve --ingest-group-events` (0: no group commit, as before issue #44) and
/// `--ingest-group-wait-ms`.
pub(crate) async fn serve_service(
    store: Arc<dyn Store>,
    group: (Option<usize>, Option<u64>),
) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let mut limits = tributary::api::pushback::Limits::default();
    if let Some(n) = group.0 {
        limits.ingest_group.max_events = n;
    }
    if let Some(ms) = group.1 {
        limits.ingest_group.wait = Duration::from_millis(ms);
    }
    let lineage = tributary::service::Lineage::new(store);
    tokio::spawn(async move {
        let _ = tributary::server::run_limited(listener, lineage, false, &[], limits, std::future::pending()).await;
    });
    Ok(url)
}

pub(crate) async fn serve(app: axum::Router) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(url)
}

pub(crate) fn store_name(s: StoreArg) -> &'static str {
    match s {
        StoreArg::Embedded => "embedded",
        StoreArg::Neo4j => "neo4j",
    }
}

// ------------------------------------------------------------------ requests

pub(crate) struct Client {
    pub(crate) http: reqwest::Client,
    pub(crate) service: String,
    pub(crate) baseline: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Service,
    Baseline,
}

impl Client {
    /// One query; the time is to the last byte of the answer. An HTTP or GraphQL error is an error.
    pub(crate) async fn ask(&self, side: Side, ask: &Ask) -> anyhow::Result<(Duration, Value)> {
        let url = match side {
            Side::Service => format!("{}/graphql", self.service),
            Side::Baseline => format!("{}{}", self.baseline, ask.path),
        };
        let (took, v) = self.post(url, Bytes::from(serde_json::to_vec(&ask.body)?)).await?;
        if let Some(errors) = v.get("errors") {
            anyhow::bail!("GraphQL errors: {errors}");
        }
        Ok((took, v))
    }

    /// One JSON body posted; the time is to the last byte of the answer. An HTTP error is an error.
    pub(crate) async fn post(&self, url: String, body: Bytes) -> anyhow::Result<(Duration, Value)> {
        let t = Instant::now();
        let resp = self.http.post(url).header("content-type", "application/json").body(body).send().await?;
        let status = resp.status();
        let bytes = resp.bytes().await?;
        let took = t.elapsed();
        if !status.is_success() {
            anyhow::bail!("HTTP {status}: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)]));
        }
        Ok((took, serde_json::from_slice(&bytes)?))
    }
}
