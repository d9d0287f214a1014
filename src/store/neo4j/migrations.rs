//! The Neo4j database's schema version and the steps that move an older database forward.
//!
//! The version is the `version` of one `(:TributarySchema {name: 'tributary'})` node, unique by
//! a constraint. At connect (`open_schema`): a database newer than [`SCHEMA_VERSION`] is
//! refused before anything is written; an older one runs each missing step of [`MIGRATIONS`];
//! a new one gets the current version. Then `schema::set_up` creates the constraints and
//! indexes as it always did (`IF NOT EXISTS`), so one that a later version only adds needs no
//! step; a step is for what that cannot do: reshaping nodes and relationships, filling in data.
//!
//! A step has three parts, because Neo4j does not let index and constraint commands share a
//! transaction with data writes, and bounds what one transaction may hold: its `schema`
//! commands first, each in its own transaction and idempotent (`IF NOT EXISTS`), then its
//! `batches` (a change too large for one transaction: each statement run again, one transaction
//! a batch, until it reports none left; idempotent, so an interrupted upgrade redoes them
//! harmlessly), then its `data` statements in one write transaction that begins by locking the
//! version node and ends by recording the new version. Two replicas starting at once on an old
//! database both reach that lock; the second waits, reads the version the first recorded, and
//! skips the step (their batches, run side by side, merge the same relationships).

use std::time::Instant;

use neo4rs::Txn;

use super::{exec, Cmd, Neo4jStore, OwnTxn, Run};
use crate::store::schema_version::{log_step, too_new};
use crate::store::{StoreError, StoreResult};

/// The schema version this binary writes, and the newest it reads.
pub const SCHEMA_VERSION: i64 = 3;

const WHAT: &str = "the Neo4j database";

/// One step: from version `to - 1` to `to`.
struct Migration {
    to: i64,
    name: &'static str,
    /// Index and constraint commands, each in its own transaction before `data`; idempotent.
    schema: fn() -> Vec<Cmd>,
    /// Statements taking `$after` (0 at first) and returning `last` (the last id they did, null
    /// when none was left), each run again with `$after = last` in a transaction of its own until
    /// it returns null; after `schema`, before `data`. Idempotent.
    batches: fn() -> Vec<Cmd>,
    /// Statements run in order in the step's one write transaction, which records `to`.
    data: fn() -> Vec<Cmd>,
}

/// Every step, in order; adding a version is adding an entry here and raising `SCHEMA_VERSION`.
const MIGRATIONS: &[Migration] = &[
    Migration {
        to: 2,
        // Version 2 is version 1's schema with its version recorded: from here on a binary can
        // tell a database it cannot read from one it can.
        name: "record the schema version",
        schema: Vec::new,
        batches: Vec::new,
        data: Vec::new,
    },
    Migration {
        to: 3,
        // Jobs and runs (issue #29): their constraints and indexes; the catalog made navigable
        // (`CONTAINS` from each datastore to its containers, `HAS_FIELD` from each container to
        // its fields, as every write makes them from now on); and the note that asks the service
        // to build jobs and runs from the stored events at its next start (it then ties the
        // existing evidence to them as `record_run` does).
        name: "jobs and runs, a navigable catalog",
        schema: jobs_schema,
        batches: catalog_relationships,
        data: jobs_backfill_pending,
    },
];

fn jobs_schema() -> Vec<Cmd> {
    vec![
        cypher!("schema_job_id_unique"),
        cypher!("schema_job_name_unique"),
        cypher!("schema_job_parent_id_index"),
        cypher!("schema_run_id_unique"),
        cypher!("schema_run_run_id_unique"),
        cypher!("schema_run_job_id_index"),
        cypher!("schema_run_parent_run_id_index"),
        cypher!("schema_run_state_index"),
    ]
}

fn catalog_relationships() -> Vec<Cmd> {
    vec![cypher!("migrate_contains_batch"), cypher!("migrate_has_field_batch")]
}

/// The document the embedded store's version 4 writes too: `service` reads it at start.
pub(super) const JOBS_BACKFILL_KEY: &str = "jobs_backfill";

fn jobs_backfill_pending() -> Vec<Cmd> {
    vec![cypher!("put_doc").param("kind", "meta").param("key", JOBS_BACKFILL_KEY).param("value", r#"{"pending":true}"#)]
}

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
    let from = version.unwrap_or(1);
    if !new && from < SCHEMA_VERSION {
        migrate(store, from).await?;
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

/// The steps past `from`, the version read at connect (a replica that finds a step done under
/// the version lock skips its data; its schema commands and batches are idempotent).
async fn migrate(store: &Neo4jStore, from: i64) -> StoreResult<()> {
    for step in MIGRATIONS.iter().filter(|step| step.to > from) {
        for cmd in (step.schema)() {
            OwnTxn(store).run(cmd).await?;
        }
        for cmd in (step.batches)() {
            run_batches(store, cmd).await?;
        }
        let started = Instant::now();
        match write_txn!(store, |txn| apply(txn, step))? {
            Some(from) => log_step("neo4j", from, step.to, step.name, started.elapsed()),
            None => tracing::debug!(store = "neo4j", to = step.to, "schema migration step already applied"),
        }
    }
    Ok(())
}

/// Runs a batch statement (see `Migration::batches`) until it reports nothing left.
async fn run_batches(store: &Neo4jStore, cmd: Cmd) -> StoreResult<()> {
    let mut after: i64 = 0;
    let mut batches = 0_u64;
    loop {
        let last: Option<i64> = OwnTxn(store).run(cmd.clone().param("after", after)).await?.value("last")?;
        match last {
            Some(last) if last > after => {
                after = last;
                batches += 1;
            }
            _ => break,
        }
    }
    tracing::info!(store = "neo4j", statement = cmd.name, batches, "schema migration batches done");
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
