//! Schema versions, the part both stores share: the refusal a binary gives a store written by a
//! newer one, and the log line of a migration step.
//!
//! Each store records the version of its own schema (the embedded store in `PRAGMA
//! user_version`, Neo4j in one `:TributarySchema` node) and numbers its versions on its own,
//! since a change to one store's schema (a table rebuilt for speed) need not touch the other's.
//! Version 1 is the schema of the releases that recorded no version; a store with data but no
//! record is at version 1. The steps themselves live with each store: `sqlite::migrations`,
//! `neo4j::migrations`.
//!
//! # How it fits
//!
//! (`store/schema_version.rs`, `store/sqlite/migrations.rs`, `store/neo4j/migrations.rs`). Each store records the
//! version of its schema, numbered on its own (`sqlite::SCHEMA_VERSION`, `neo4j::SCHEMA_VERSION`): the embedded store
//! in `PRAGMA user_version` (a header field: read at open without a table lookup, written inside the transaction that
//! writes it, copied into a backup), Neo4j in the one `(:TributarySchema {name: 'tributary', version})` node, unique by
//! a constraint. Version 1 is the schema of the releases before versions: a store with data but no record is at version
//! 1; version 2 is the same schema with its version recorded; the embedded store's version 3 rebuilds `evidence` and
//! `metadata` as `WITHOUT ROWID` tables and drops the edges' container-end indexes. Opening a store (every command,
//! `SqliteStore::open`, `Neo4jStore::connect`) reads the version once, then:
//! - newer than the binary: refused before anything is written (`StoreError::Invalid`, "... was written by a newer
//!   Tributary (schema version N); this binary reads schema versions up to M: upgrade the binary"), so start-up does
//!   not retry it;
//! - older: each missing step of the store's `MIGRATIONS` list runs and records its version in one transaction, logged
//!   `store schema migrated` with `from`, `to`, `step`, `duration_ms`. SQLite: `BEGIN IMMEDIATE`, the version read
//!   again under the write lock, so two processes opening one store migrate it once. Neo4j: a step's index and
//!   constraint commands first, each alone (Neo4j refuses them in a transaction that writes data; they must be `IF NOT
//!   EXISTS`), then one write transaction that begins by locking the version node (`schema_version_lock.cypher`) and
//!   reading the version under the lock, so of replicas starting together one migrates and the others find the step
//!   done;
//! - new (no record, no data): the current schema and version at once.
//!
//! Then the idempotent schema runs as it always did (`SCHEMA`, `schema::set_up`), so a new table, index or constraint
//! needs no step. Invariant: a step never assumes what `SCHEMA` or `set_up` creates, since on an old store it runs
//! before them; and a store created new never runs a step, so the two paths are compared by
//! `tests/upgrades_and_backups.rs`, which migrates the committed version-1 fixture and expects the answers version 1
//! gave. `wipe` keeps the version node, as it keeps the constraints it describes.

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
