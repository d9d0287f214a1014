//! Schema versions, the part both stores share: the refusal a binary gives a store written by a
//! newer one, and the log line of a migration step.
//!
//! Each store records the version of its own schema (the embedded store in `PRAGMA
//! user_version`, Neo4j in one `:TributarySchema` node) and numbers its versions on its own,
//! since a change to one store's schema (a table rebuilt for speed) need not touch the other's.
//! Version 1 is the schema of the releases that recorded no version; a store with data but no
//! record is at version 1. The steps themselves live with each store: `sqlite::migrations`,
//! `neo4j::migrations`.

use std::time::Duration;

use super::StoreError;

/// The refusal to open a store whose schema is newer than this binary knows. `Invalid`, not
/// `Unavailable`: waiting does not help, and start-up retries only what may come back.
pub(crate) fn too_new(store: &'static str, what: &str, found: i64, reads_up_to: i64) -> StoreError {
    tracing::error!(store, place = what, found, reads_up_to, "store schema is newer than this binary");
    StoreError::Invalid(format!(
        "{what} was written by a newer Tributary (schema version {found}); this binary reads schema versions up to \
         {reads_up_to}: upgrade the binary"
    ))
}

/// One migration step, applied and committed.
pub(crate) fn log_step(store: &'static str, from: i64, to: i64, step: &'static str, took: Duration) {
    tracing::info!(store, from, to, step, duration_ms = took.as_millis() as u64, "store schema migrated");
}

/// The steps of a `MIGRATIONS` list, by the version each reaches: one per version after 1, in
/// order, up to the current one.
#[cfg(test)]
pub(crate) fn assert_steps(tos: impl Iterator<Item = i64>, current: i64) {
    let tos: Vec<i64> = tos.collect();
    assert_eq!(tos, (2..=current).collect::<Vec<_>>(), "one step per version after 1, in order");
}
