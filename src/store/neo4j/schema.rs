//! The Neo4j schema: the constraints and indexes the statements rely on, created idempotently
//! each time the store connects (`IF NOT EXISTS` in every `cypher/schema_*.cypher`), and the
//! one-off fill-ins an older database needs before the statements can use them.

use super::{changes, Cmd, Neo4jStore, Run};
use crate::store::StoreResult;

/// Neo4j's codes for a concurrent `CREATE ... IF NOT EXISTS` that lost the race (an index, and
/// a constraint whose index the winner has just made).
const LOST_RACE: [&str; 2] =
    ["Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists", "Neo.ClientError.Schema.IndexWithNameAlreadyExists"];

/// Constraints and indexes, created idempotently at start-up.
fn schema_statements() -> Vec<Cmd> {
    vec![
        cypher!("schema_counter_name_unique"),
        cypher!("schema_datastore_id_unique"),
        cypher!("schema_datastore_name_unique"),
        cypher!("schema_container_id_unique"),
        cypher!("schema_container_key_unique"),
        cypher!("schema_container_datastore_id_index"),
        cypher!("schema_container_name_lc_index"),
        cypher!("schema_field_id_unique"),
        cypher!("schema_field_key_unique"),
        cypher!("schema_field_container_id_index"),
        cypher!("schema_external_fqn_unique"),
        cypher!("schema_evidence_edge_key_unique"),
        cypher!("schema_evidence_edge_id_index"),
        cypher!("schema_evidence_key_index"),
        cypher!("schema_lineage_id_unique"),
        cypher!("schema_lineage_ukey_unique"),
        cypher!("schema_lineage_source_type_index"),
        cypher!("schema_lineage_container_pair_index"),
        cypher!("schema_event_id_unique"),
        cypher!("schema_event_fingerprint_unique"),
        cypher!("schema_event_run_id_index"),
        cypher!("schema_event_received_at_index"),
        cypher!("schema_doc_kind_key_unique"),
        cypher!("schema_metadata_key_unique"),
        cypher!("schema_metadata_container_id_index"),
        cypher!("schema_change_position_unique"),
        cypher!("schema_change_at_index"),
        cypher!("schema_change_container_a_index"),
        cypher!("schema_change_container_b_index"),
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

/// Creates the constraints and indexes, then gives containers stored before `name_lc` existed
/// their lowercased name, `name_lc`, which the lookups by name read.
pub(super) async fn set_up(mut db: impl Run) -> StoreResult<()> {
    for cmd in schema_statements() {
        let op = cmd.name;
        match db.run(cmd).await {
            // Replicas starting at once on a new database race to create the same rule, and
            // Neo4j refuses the loser's `IF NOT EXISTS` with one of these codes: the rule is there.
            Err(e) if LOST_RACE.iter().any(|code| e.to_string().contains(code)) => {
                tracing::debug!(operation = op, "schema rule created meanwhile by another replica");
            }
            other => {
                other?;
            }
        }
    }
    // A database from before the index fills it now; the read-ahead without it scans every edge.
    if let Err(e) = db.run(cypher!("schema_await_lineage_container_pair")).await {
        tracing::warn!(error = %e, "the edges' container-pair index is not online yet; the ingest reads ahead slowly until it is");
    }
    let filled: i64 = db.run(cypher!("backfill_container_name_lc")).await?.value("filled")?;
    if filled > 0 {
        tracing::info!(containers = filled, "lowercased container names filled in for name lookups");
    }
    Ok(())
}

/// Creates the change log when the database has none (made before it, or new) and, in the same
/// transaction, backfills it from the edges' history. Idempotent, and safe when several replicas
/// start at once: the change counter is the claim (see `claim_change_log`), so a log emptied by
/// retention is not backfilled again.
pub(super) async fn migrate_change_log(store: &Neo4jStore) -> StoreResult<()> {
    let backfilled = write_txn!(store, |txn| changes::claim_and_backfill(txn))?;
    if backfilled > 0 {
        tracing::info!(changes = backfilled, store = "neo4j", "change log created and backfilled from edge history");
    }
    Ok(())
}
