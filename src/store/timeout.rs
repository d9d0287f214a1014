//! A time limit on every store call: a slow or hung database answers `StoreError::Unavailable`
//! (the client sees `UNAVAILABLE`) instead of holding the request, its connection and whatever
//! it locked for as long as the database likes.
//!
//! `TimeoutStore` wraps any [`Store`] and delegates each method through
//! `tokio::time::timeout`. The limit is 30 s by default; `TRIBUTARY_STORE_TIMEOUT_SECS` (a whole
//! number of seconds, at least 1) changes it for every command that opens the store
//! ([`limit_from_env`], read by `server::open_store`).
//!
//! What a timeout does and does not do:
//! - It stops waiting; it cannot always stop the work. The embedded store runs a write on
//!   tokio's blocking pool, and a blocking task cannot be cancelled: a timed-out SQLite write may
//!   still commit a moment later, and it keeps the single writer connection until it ends (later
//!   writes queue behind it and may time out in turn). Embedded reads and a session's calls run
//!   right on the calling task's thread, so the limit cannot cut them short at all: they
//!   are single indexed statements, and SQLite's own busy timeout (10 s) bounds their waiting.
//!   A Neo4j statement or transaction likewise runs to its end in its own task (see
//!   `store::neo4j::detached`: a Bolt exchange cut short corrupted the pooled connection), so a
//!   timed-out Neo4j write may commit too. A client that got `UNAVAILABLE` for a write must
//!   therefore read before retrying, or rely on the write being idempotent (upserts,
//!   OpenLineage events deduplicated by fingerprint).
//! - `export` and `import` are not limited: they move the whole store at once, only the CLI
//!   (`tributary export` / `import`) calls them, and a big store legitimately takes minutes.
//! - `kind()` is the inner store's, so metrics keep their `store` label.

use std::future::Future;
use std::time::Duration;

use super::{Store, StoreError, StoreResult};

/// The limit when `TRIBUTARY_STORE_TIMEOUT_SECS` is not set.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(30);
/// The environment variable that sets the limit, in whole seconds.
pub const LIMIT_ENV: &str = "TRIBUTARY_STORE_TIMEOUT_SECS";

/// The limit `TRIBUTARY_STORE_TIMEOUT_SECS` asks for, or [`DEFAULT_LIMIT`] when it is unset or
/// empty. Anything but a whole number of seconds from 1 up is refused with a message saying so,
/// so a typo fails at start instead of silently running without the limit the operator chose.
pub fn limit_from_env() -> StoreResult<Duration> {
    match std::env::var(LIMIT_ENV) {
        Ok(v) if !v.trim().is_empty() => parse_limit(&v),
        _ => Ok(DEFAULT_LIMIT),
    }
}

fn parse_limit(v: &str) -> StoreResult<Duration> {
    match v.trim().parse::<u64>() {
        Ok(secs) if secs >= 1 => Ok(Duration::from_secs(secs)),
        _ => Err(StoreError::Invalid(format!(
            "{LIMIT_ENV} must be a whole number of seconds, 1 or more (for example 30); got {v:?}"
        ))),
    }
}

/// A store whose every call (but `export` and `import`) gives up after `limit`.
pub struct TimeoutStore {
    // Visible to the parent module, where `store_trait!` expands this type's `Store` impl.
    pub(super) inner: std::sync::Arc<dyn Store>,
    pub(super) limit: Duration,
}

impl TimeoutStore {
    pub fn new(inner: impl Store, limit: Duration) -> Self {
        TimeoutStore { inner: std::sync::Arc::new(inner), limit }
    }

    pub fn limit(&self) -> Duration {
        self.limit
    }

    pub fn inner(&self) -> &dyn Store {
        self.inner.as_ref()
    }

    /// Runs one call of the inner store within the limit. `operation` names the trait method,
    /// for the log.
    pub(super) async fn within<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = StoreResult<T>>,
    ) -> StoreResult<T> {
        let started = std::time::Instant::now();
        match tokio::time::timeout(self.limit, call).await {
            Ok(result) => {
                crate::metrics::store_call(self.inner.kind(), operation, started.elapsed().as_secs_f64());
                result
            }
            Err(_elapsed) => {
                tracing::warn!(
                    store = self.inner.kind(),
                    operation,
                    limit_ms = u64::try_from(self.limit.as_millis()).unwrap_or(u64::MAX),
                    "store call timed out"
                );
                Err(StoreError::Unavailable(format!("the store did not answer within {}", seconds(self.limit))))
            }
        }
    }
}

/// `30 s`, or `0.25 s` for the short limits tests use.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

/// `TimeoutStore`'s implementation of [`Store`]: the methods the trait lists as `limited` each
/// run the inner store's method of the same name within the limit ([`TimeoutStore::within`],
/// which also records the call's metric under the method's name); the others are written here.
/// `store_trait!` in store/mod.rs invokes this with the trait's own list, so nothing is
/// forwarded by hand and a new store method cannot be left out.
macro_rules! limit_store_methods {
    ($( fn $name:ident($($arg:ident: $ty:ty),*) -> $ok:ty; )*) => {
        #[async_trait::async_trait]
        impl $crate::store::Store for $crate::store::timeout::TimeoutStore {
            fn kind(&self) -> &'static str {
                self.inner.kind()
            }
            fn session_conflicts(&self) -> bool {
                self.inner.session_conflicts()
            }
            async fn session(&self) -> $crate::store::StoreResult<Option<std::sync::Arc<dyn $crate::store::Store>>> {
                // Waiting for the writer counts against the limit; the session's calls are
                // limited too.
                let session = self.within("session", self.inner.session()).await?;
                Ok(session.map(|inner| {
                    let limited = $crate::store::timeout::TimeoutStore { inner, limit: self.limit };
                    std::sync::Arc::new(limited) as std::sync::Arc<dyn $crate::store::Store>
                }))
            }
            // The whole store: not limited (see the module comment).
            async fn export(&self) -> $crate::store::StoreResult<Vec<$crate::store::Record>> {
                self.inner.export().await
            }
            async fn import(&self, records: Vec<$crate::store::Record>) -> $crate::store::StoreResult<usize> {
                self.inner.import(records).await
            }
            async fn import_chunks(&self, chunks: $crate::store::RecordChunks) -> $crate::store::StoreResult<usize> {
                self.inner.import_chunks(chunks).await
            }
            $(
                async fn $name(&self $(, $arg: $ty)*) -> $crate::store::StoreResult<$ok> {
                    self.within(stringify!($name), self.inner.$name($($arg),*)).await
                }
            )*
        }
    };
}
pub(super) use limit_store_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_whole_seconds_from_one_up() {
        assert_eq!(parse_limit("5").ok(), Some(Duration::from_secs(5)));
        assert_eq!(parse_limit(" 120 ").ok(), Some(Duration::from_secs(120)));
        for bad in ["0", "-1", "1.5", "30s", "abc"] {
            let Err(StoreError::Invalid(m)) = parse_limit(bad) else { panic!("{bad:?} was accepted") };
            assert!(m.contains(LIMIT_ENV), "{m}");
        }
    }

    #[test]
    fn seconds_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25 s");
    }
}
