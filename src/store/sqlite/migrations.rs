//! The embedded store's schema version and the steps that move an older data directory forward.
//!
//! The version is `PRAGMA user_version`, an integer in the database file's header: reading it
//! at open costs no table lookup, writing it is part of the transaction that writes it (so a
//! step and its record commit together), and it travels with the file into a backup. A meta
//! table would need its own creation step and a query; nothing else here uses the header field.
//!
//! At open (`open_schema`): a store newer than [`SCHEMA_VERSION`] is refused before anything
//! is written; an older one runs each missing step of [`MIGRATIONS`] in its own `BEGIN
//! IMMEDIATE` transaction, which also records the step's version; a new store gets the current
//! schema and version at once. Then `SCHEMA` runs as it always did (`CREATE ... IF NOT EXISTS`),
//! so a table or index a later version only adds needs no step; a step is for what `IF NOT
//! EXISTS` cannot do: rebuilding a table, changing a column, filling in data.

use std::path::Path;
use std::time::Instant;

use rusqlite::{Connection, TransactionBehavior};

use super::schema::{SCHEMA, VERSION_3, VERSION_4};
use crate::store::schema_version::{log_step, too_new};
use crate::store::{StoreError, StoreResult};

/// The schema version this binary writes, and the newest it reads.
pub const SCHEMA_VERSION: i64 = 4;

/// One step: from version `to - 1` to `to`, run inside the step's transaction.
struct Migration {
    to: i64,
    name: &'static str,
    run: fn(&Connection) -> rusqlite::Result<()>,
}

/// Every step, in order; adding a version is adding an entry here and raising `SCHEMA_VERSION`.
const MIGRATIONS: &[Migration] = &[
    Migration {
        to: 2,
        // Version 2 is version 1's schema with its version recorded: from here on a binary can
        // tell a store it cannot read from one it can.
        name: "record the schema version",
        run: |_| Ok(()),
    },
    Migration {
        to: 3,
        // Fewer b-tree writes per ingested edge (see `schema`): a rebuild, which `IF NOT
        // EXISTS` cannot do. `fields_container`, which replaces the dropped indexes for the
        // reads by container, is new and comes with `SCHEMA` after the steps.
        name: "evidence and metadata without rowid, no container-end indexes on edges",
        run: |c| c.execute_batch(VERSION_3),
    },
    Migration {
        to: 4,
        // The job tables are new (`IF NOT EXISTS` alone would make them); the step also notes
        // that the stored events' jobs and runs are to be recorded, once, at the next start.
        name: "jobs and runs",
        run: |c| c.execute_batch(VERSION_4),
    },
];

/// The stored version: `None` for a new, empty file; 1 for a store with the tables but no
/// record (the releases before versions).
fn stored_version(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > 0 {
        return Ok(Some(version));
    }
    let has_tables: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'edges')",
        [],
        |r| r.get(0),
    )?;
    Ok(has_tables.then_some(1))
}

/// `PRAGMA user_version` takes no parameter; `version` is one of this file's constants.
fn record_version(conn: &Connection, version: i64) -> rusqlite::Result<()> {
    conn.execute_batch(&format!("PRAGMA user_version = {version}"))
}

fn failed(what: &str, e: rusqlite::Error) -> StoreError {
    tracing::error!(error = %e, store = "embedded", what, "store schema migration failed");
    StoreError::Internal(format!("{what} failed: {e}"))
}

/// Checks, migrates or creates the schema of the store in `dir` on its writer connection.
pub(super) fn open_schema(conn: &mut Connection, dir: &Path) -> StoreResult<()> {
    let found = stored_version(conn).map_err(|e| failed("reading the schema version", e))?;
    match found {
        Some(v) if v > SCHEMA_VERSION => {
            return Err(too_new("embedded", &format!("the data directory {}", dir.display()), v, SCHEMA_VERSION));
        }
        Some(v) if v < SCHEMA_VERSION => migrate(conn)?,
        Some(_) => {}
        None => create(conn).map_err(|e| failed("creating the store", e))?,
    }
    conn.execute_batch(SCHEMA).map_err(|e| failed("creating tables and indexes", e))
}

/// A new store: the current schema and its version in one transaction. Another process may
/// create the same store at the same moment; the version is read again under the write lock.
fn create(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if stored_version(&tx)?.is_none() {
        tx.execute_batch(SCHEMA)?;
        record_version(&tx, SCHEMA_VERSION)?;
        tracing::info!(store = "embedded", version = SCHEMA_VERSION, "new store created");
    }
    tx.commit()
}

/// Runs every step the store lacks, each in its own transaction with its version record.
/// `BEGIN IMMEDIATE` takes the write lock before the version is read again, so two processes
/// opening one old store at once migrate it once: the second finds the step done.
fn migrate(conn: &mut Connection) -> StoreResult<()> {
    for step in MIGRATIONS {
        let what = format!("schema migration to version {} ({})", step.to, step.name);
        let started = Instant::now();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| failed(&what, e))?;
        let from = stored_version(&tx).map_err(|e| failed(&what, e))?.unwrap_or(1);
        if from >= step.to {
            continue;
        }
        if from != step.to - 1 {
            return Err(StoreError::Internal(format!("{what}: the store is at version {from}, not {}", step.to - 1)));
        }
        (step.run)(&tx).map_err(|e| failed(&what, e))?;
        record_version(&tx, step.to).map_err(|e| failed(&what, e))?;
        tx.commit().map_err(|e| failed(&what, e))?;
        log_step("embedded", from, step.to, step.name, started.elapsed());
    }
    Ok(())
}

/// The stored version, for `backup`, which reads the file without opening it as a store.
pub(super) fn file_version(conn: &Connection) -> StoreResult<Option<i64>> {
    stored_version(conn).map_err(|e| failed("reading the schema version", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_consecutive_and_end_at_the_current_version() {
        crate::store::schema_version::assert_steps(MIGRATIONS.iter().map(|m| m.to), SCHEMA_VERSION);
    }
}
