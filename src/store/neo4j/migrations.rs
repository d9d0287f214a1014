//! The Neo4j database's schema version and the steps that move an older database forward.
//!
//! The version is the `version` of one `(:TributarySchema {name: 'tributary'})` node, unique by
//! a constraint. At connect (`open_schema`): a database newer than [`SCHEMA_VERSION`] is
//! refused before anything is written; an older one runs each missing step of [`MIGRATIONS`];
//! a new one gets the current version. Then `schema::set_up` creates the constraints and
//! indexes as it always did (`IF NOT EXISTS`), so one that a later version only adds needs no
//! step; a step is for what that cannot do: reshaping nodes and relationships, filling in data.
//!
//! A step has two parts, because Neo4j does not let index and constraint commands share a
//! transaction with data writes: its `schema` commands first, each in its own transaction and
//! idempotent (`IF NOT EXISTS`), then its `data` statements in one write transaction that
//! begins by locking the version node and ends by recording the new version. Two replicas
//! starting at once on an old database both reach that lock; the second waits, reads the
//! version the first recorded, and skips the step.

use std::time::Instant;

use neo4rs::Txn;

use super::{exec, Cmd, Neo4jStore, OwnTxn, Run};
use crate::store::schema_version::{log_step, too_new};
use crate::store::{StoreError, StoreResult};

/// The schema version this binary writes, and the newest it reads.
pub const SCHEMA_VERSION: i64 = 2;

const WHAT: &str = "the Neo4j database";

/// One step: from version `to - 1` to `to`.
struct Migration {
    to: i64,
    name: &'static str,
    /// Index and constraint commands, each in its own transaction before `data`; idempotent.
    schema: fn() -> Vec<Cmd>,
    /// Statements run in order in the step's one write transaction, which records `to`.
    data: fn() -> Vec<Cmd>,
}

/// Every step, in order; adding a version is adding an entry here and raising `SCHEMA_VERSION`.
const MIGRATIONS: &[Migration] = &[Migration {
    to: 2,
    // Version 2 is version 1's schema with its version recorded: from here on a binary can tell
    // a database it cannot read from one it can.
    name: "record the schema version",
    schema: Vec::new,
    data: Vec::new,
}];

/// Checks, migrates or records the schema version, then creates the constraints and indexes.
pub(super) async fn open_schema(store: &Neo4jStore) -> StoreResult<()> {
    // In a transaction of its own: an auto-commit run is retried by the driver for ~30 s when
    // Neo4j is down, which would outlast `--store-wait-secs`.
    let found = OwnTxn(store).run(cypher!("schema_version")).await?;
    let version: Option<i64> = found.value("version")?;
    let has_data: bool = found.value("has_data")?;
    if let Some(v) = version.filter(|v| *v > SCHEMA_VERSION) {
        return Err(too_new("neo4j", WHAT, v, SCHEMA_VERSION));
    }
    OwnTxn(store).run(cypher!("schema_tributary_schema_name_unique")).await?;
    let new = version.is_none() && !has_data;
    if !new && version.unwrap_or(1) < SCHEMA_VERSION {
        migrate(store).await?;
    }
    super::schema::set_up(OwnTxn(store)).await?;
    if new {
        let recorded: i64 = OwnTxn(store)
            .run(cypher!("schema_version_create").param("version", SCHEMA_VERSION))
            .await?
            .value("version")?;
        if recorded > SCHEMA_VERSION {
            return Err(too_new("neo4j", WHAT, recorded, SCHEMA_VERSION));
        }
        tracing::info!(store = "neo4j", version = recorded, "new store created");
    }
    Ok(())
}

async fn migrate(store: &Neo4jStore) -> StoreResult<()> {
    for step in MIGRATIONS {
        for cmd in (step.schema)() {
            OwnTxn(store).run(cmd).await?;
        }
        let started = Instant::now();
        match write_txn!(store, |txn| apply(txn, step))? {
            Some(from) => log_step("neo4j", from, step.to, step.name, started.elapsed()),
            None => tracing::debug!(store = "neo4j", to = step.to, "schema migration step already applied"),
        }
    }
    Ok(())
}

/// The step in the caller's transaction: the version it started from, or `None` when the
/// database is already past it (another replica migrated it meanwhile).
async fn apply(txn: &mut Txn, step: &Migration) -> StoreResult<Option<i64>> {
    let from: i64 = exec(txn, cypher!("schema_version_lock").param("assumed", 1i64)).await?.value("version")?;
    if from >= step.to {
        return Ok(None);
    }
    if from != step.to - 1 {
        return Err(StoreError::Internal(format!(
            "schema migration to version {} ({}): the database is at version {from}, not {}",
            step.to,
            step.name,
            step.to - 1
        )));
    }
    for cmd in (step.data)() {
        exec(txn, cmd).await?;
    }
    exec(txn, cypher!("schema_version_record").param("version", step.to)).await?;
    Ok(Some(from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_consecutive_and_end_at_the_current_version() {
        crate::store::schema_version::assert_steps(MIGRATIONS.iter().map(|m| m.to), SCHEMA_VERSION);
    }
}
