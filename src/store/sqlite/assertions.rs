//! What the providers (OpenLineage, SQL capture) write and read in the embedded store:
//! `apply_assertions` (a batch of asserted edges and their evidence in one transaction, with a
//! bounded number of reads whatever its size), metadata values, import operation ids, and the
//! evidence reads a provider needs to know what it asserted before.

use std::collections::HashMap;

use rusqlite::{params, Connection};

use super::changes::record;
use super::edges::{
    close_edges, edges_by_ids_tx, insert_evidence_tx, insert_new_edge, query_edges, update_evidence_tx,
};
use super::rows::{
    distinct_strs, edge_row, edge_ukey, end_from, evidence_row, id_array, intervals_text, json_text, metadata_row,
    str_array, ts, EDGE_COLS, EVIDENCE_COLS, METADATA_COLS,
};
use super::{select_rows, sql_err, STORE};
use crate::domain::{
    Assertion, AssertionBatch, AssertionSummary, ChangeKind, Edge, End, Evidence, Id, Interval, MetadataAssertion,
    NewChange, Timestamp,
};
use crate::metrics::store_query;
use crate::store::{ends_by_kind, PriorEvidence, StoreResult};

/// The edges with these unique keys, by key.
fn edges_by_ukeys_tx(tx: &Connection, ukeys: &[String]) -> rusqlite::Result<HashMap<String, Edge>> {
    if ukeys.is_empty() {
        return Ok(HashMap::new());
    }
    let ukey_col = EDGE_COLS.split(',').count();
    select_rows(
        tx,
        "edges_by_ukeys",
        &format!("SELECT {EDGE_COLS}, ukey FROM rarray(?1) AS k CROSS JOIN edges ON edges.ukey = k.value"),
        params![distinct_strs(ukeys)],
        |r| Ok((r.get::<_, String>(ukey_col)?, edge_row(r)?)),
    )
}

/// What an assertion's evidence meets: absent, live, or retired, and its observing operations.
struct EvidenceState {
    retired: bool,
    first: Option<Id>,
    last: Option<Id>,
}

/// The evidence rows of `edges` under the keys `assertions` carry, by (edge, key).
fn evidence_states_tx(
    tx: &Connection,
    edges: &HashMap<String, Edge>,
    assertions: &[Assertion],
) -> rusqlite::Result<HashMap<(Id, String), EvidenceState>> {
    if edges.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<Id> = edges.values().map(|e| e.id).collect();
    let keys: Vec<String> = assertions.iter().map(|a| a.evidence.key.clone()).collect();
    select_rows(
        tx,
        "evidence_states",
        "SELECT edge_id, key, retired_at IS NOT NULL, first_observed_operation_id, last_observed_operation_id
         FROM rarray(?1) AS i CROSS JOIN rarray(?2) AS k CROSS JOIN evidence
         ON evidence.edge_id = i.value AND evidence.key = k.value",
        params![id_array(&ids), distinct_strs(&keys)],
        |r| Ok(((r.get(0)?, r.get(1)?), EvidenceState { retired: r.get(2)?, first: r.get(3)?, last: r.get(4)? })),
    )
}

/// The batch's summary and each assertion's edge id, in batch order.
pub(super) fn apply_assertions(
    tx: &Connection,
    batch: AssertionBatch,
    now: Timestamp,
) -> StoreResult<(AssertionSummary, Vec<Id>)> {
    let mut sum = AssertionSummary::default();
    let mut edge_ids = Vec::with_capacity(batch.assert.len());
    put_metadata_tx(tx, &batch.metadata).map_err(sql_err)?;
    let ukeys: Vec<String> =
        batch.assert.iter().map(|a| edge_ukey(&a.edge.source, &a.edge.target, &a.edge.source_type)).collect();
    // Two reads for the whole batch (the edges already there, their evidence under the
    // asserted keys) instead of two per assertion; each write then knows what it meets.
    let mut existing = edges_by_ukeys_tx(tx, &ukeys).map_err(sql_err)?;
    let mut had = evidence_states_tx(tx, &existing, &batch.assert).map_err(sql_err)?;
    // By value: each evidence's details move into its row rather than being copied.
    for (a, ukey) in batch.assert.into_iter().zip(ukeys) {
        let edge_id = match existing.get(&ukey) {
            None => {
                let created = insert_new_edge(tx, &a.edge, &now, ukey.clone())?;
                sum.edges_created += 1;
                let id = created.id;
                // The same edge asserted again later in the batch (a rename) finds it.
                existing.insert(ukey, created);
                id
            }
            Some(e) => {
                let (id, revive) = (e.id, e.retired_at.is_some());
                // A revival, or an operation given to an edge that had none: changes to record.
                let mut changed = e.clone();
                if changed.operation.is_none() && a.edge.operation.is_some() {
                    changed.operation = a.edge.operation.clone();
                    let detail = serde_json::json!({"operation": {"from": null, "to": changed.operation}});
                    record(tx, &[NewChange::edge(ChangeKind::EdgeRelabelled, &changed, now).with_detail(detail)])?;
                }
                if revive {
                    record(tx, &[NewChange::edge(ChangeKind::EdgeRevived, &changed, now)])?;
                }
                let last = match (e.last_asserted_at, a.edge.last_asserted_at) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    (x, y) => x.or(y),
                };
                // Only a revived edge's intervals change (a new live one).
                let intervals = revive.then(|| {
                    let mut v = e.intervals.clone();
                    v.push(Interval { from: now, to: None });
                    v
                });
                let (last_at, transformations) =
                    (last.as_ref().map(ts), a.edge.transformations.as_ref().map(json_text));
                if let Some(intervals) = &intervals {
                    store_query(STORE, "revive_edge");
                    tx.prepare_cached(
                        "UPDATE edges SET last_asserted_at = ?2, operation = coalesce(operation, ?3),
                           derived = coalesce(?4, derived), transformations = coalesce(?5, transformations),
                           retired_at = NULL, intervals = ?6 WHERE id = ?1",
                    )
                    .map_err(sql_err)?
                    .execute(params![
                        id,
                        last_at,
                        a.edge.operation,
                        a.edge.derived,
                        transformations,
                        intervals_text(intervals)
                    ])
                    .map_err(sql_err)?;
                    sum.edges_revived += 1;
                } else {
                    // A live edge's indexed columns (its ends, `retired_at`) stay as they
                    // are: only unindexed ones are written, so no index entry moves.
                    store_query(STORE, "assert_edge");
                    tx.prepare_cached(
                        "UPDATE edges SET last_asserted_at = ?2, operation = coalesce(operation, ?3),
                           derived = coalesce(?4, derived), transformations = coalesce(?5, transformations)
                         WHERE id = ?1",
                    )
                    .map_err(sql_err)?
                    .execute(params![id, last_at, a.edge.operation, a.edge.derived, transformations])
                    .map_err(sql_err)?;
                }
                if let Some(e) = existing.get_mut(&ukey) {
                    e.retired_at = None;
                    e.last_asserted_at = last;
                    if let Some(intervals) = intervals {
                        e.intervals = intervals;
                    }
                }
                id
            }
        };
        sum.edges_asserted += 1;
        edge_ids.push(edge_id);
        let mut ev = a.evidence;
        ev.edge_id = edge_id;
        ev.retired_at = None;
        let key = (edge_id, ev.key.clone());
        match had.get(&key) {
            None => {
                sum.evidence_created += 1;
                insert_evidence_tx(tx, &ev).map_err(sql_err)?;
            }
            Some(prior) => {
                if prior.retired {
                    sum.evidence_created += 1;
                }
                // The operation that first observed the evidence stays; the last one moves.
                ev.first_observed_operation_id = prior.first.or(ev.first_observed_operation_id);
                ev.last_observed_operation_id = ev.last_observed_operation_id.or(prior.last);
                update_evidence_tx(tx, &ev).map_err(sql_err)?;
            }
        }
        had.insert(
            key,
            EvidenceState {
                retired: false,
                first: ev.first_observed_operation_id,
                last: ev.last_observed_operation_id,
            },
        );
    }
    {
        let mut stmt = tx
            .prepare_cached(
                "UPDATE evidence SET retired_at = ?3 WHERE edge_id = ?1 AND key = ?2 AND retired_at IS NULL",
            )
            .map_err(sql_err)?;
        for (edge_id, key) in &batch.retire_evidence {
            store_query(STORE, "retire_evidence");
            sum.evidence_retired += stmt.execute(params![edge_id, key, ts(&now)]).map_err(sql_err)? as i64;
        }
    }
    if !batch.retire_candidates.is_empty() {
        let unbacked: Vec<Id> = select_rows(
            tx,
            "unbacked_edges",
            "SELECT id FROM edges e WHERE e.id IN rarray(?1) AND e.retired_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM evidence v WHERE v.edge_id = e.id AND v.retired_at IS NULL)",
            params![id_array(&batch.retire_candidates)],
            |r| r.get(0),
        )
        .map_err(sql_err)?;
        let edges = edges_by_ids_tx(tx, &unbacked).map_err(sql_err)?;
        sum.edges_retired += close_edges(tx, edges, now)?;
    }
    Ok((sum, edge_ids))
}

pub(super) fn put_metadata_tx(tx: &Connection, rows: &[MetadataAssertion]) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO metadata ({METADATA_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT(container_id, field_id, attribute, source) DO UPDATE SET
           asserted_at = CASE WHEN metadata.value = excluded.value THEN metadata.asserted_at ELSE excluded.asserted_at END,
           value = excluded.value, provider = excluded.provider, observed_at = excluded.observed_at, details = excluded.details"
    ))?;
    for m in rows {
        store_query(STORE, "put_metadata");
        stmt.execute(params![
            m.container_id,
            m.field_id.unwrap_or(0),
            m.attribute,
            m.source,
            m.provider,
            json_text(&m.value),
            ts(&m.asserted_at),
            ts(&m.observed_at),
            m.details.as_ref().map(json_text)
        ])?;
    }
    Ok(())
}

pub(super) fn metadata_for_container(c: &Connection, container_id: Id) -> rusqlite::Result<Vec<MetadataAssertion>> {
    select_rows(
        c,
        "metadata_for_container",
        &format!("SELECT {METADATA_COLS} FROM metadata WHERE container_id = ?1 ORDER BY field_id, attribute, source"),
        params![container_id],
        metadata_row,
    )
}

/// The containers' own rows (`field_id` 0), one join over the ids.
pub(super) fn container_metadata_of(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<MetadataAssertion>> {
    let cols = METADATA_COLS.split(", ").map(|col| format!("m.{col}")).collect::<Vec<_>>().join(", ");
    select_rows(
        c,
        "container_metadata_of",
        &format!(
            "SELECT {cols} FROM rarray(?1) AS k CROSS JOIN metadata AS m ON m.container_id = k.value AND m.field_id = 0
             ORDER BY m.container_id, m.attribute, m.source"
        ),
        params![id_array(ids)],
        metadata_row,
    )
}

/// `now` is the operation's start, as stored.
pub(super) fn next_operation_id(tx: &Connection, now: &str) -> StoreResult<Id> {
    store_query(STORE, "next_operation_id");
    tx.execute("INSERT INTO operations (started) VALUES (?1)", params![now]).map_err(sql_err)?;
    Ok(tx.last_insert_rowid())
}

pub(super) fn evidence_by_keys(c: &Connection, keys: &[String]) -> rusqlite::Result<Vec<Evidence>> {
    select_rows(
        c,
        "evidence_by_keys",
        &format!("SELECT {EVIDENCE_COLS} FROM evidence WHERE key IN rarray(?1) ORDER BY edge_id, key"),
        params![str_array(keys)],
        evidence_row,
    )
}

/// `live_evidence_of_key` of each key, one cached statement each (in process, a loop of index
/// seeks costs what one statement over all of them would).
pub(super) fn live_evidence_of_keys(c: &Connection, keys: &[String]) -> rusqlite::Result<Vec<PriorEvidence>> {
    let mut out = Vec::new();
    for key in keys {
        out.extend(live_evidence_of_key(c, key)?);
    }
    Ok(out)
}

pub(super) fn live_evidence_of_key(c: &Connection, key: &str) -> rusqlite::Result<Vec<PriorEvidence>> {
    // One statement, and only the columns used: the two run ids come out of the details
    // in SQLite (whole rows and their JSON, parsed into values, were half the read).
    select_rows(
        c,
        "live_evidence_of_key",
        "SELECT v.edge_id, v.key,
           CASE json_type(v.details, '$.runId') WHEN 'text' THEN json_extract(v.details, '$.runId') END,
           CASE json_type(v.details, '$.firstRunId') WHEN 'text' THEN json_extract(v.details, '$.firstRunId') END,
           e.source_kind, e.source_id, e.source_container_id, e.source_fqn,
           e.target_kind, e.target_id, e.target_container_id, e.target_fqn
         FROM evidence v LEFT JOIN edges e ON e.id = v.edge_id
         WHERE v.key = ?1 AND v.retired_at IS NULL ORDER BY v.edge_id",
        params![key],
        |r| {
            let source_kind: Option<String> = r.get(4)?;
            let target_kind: Option<String> = r.get(8)?;
            let ends = match (source_kind, target_kind) {
                (Some(s), Some(t)) => Some((
                    end_from(&s, r.get(5)?, r.get(6)?, r.get(7)?).key(),
                    end_from(&t, r.get(9)?, r.get(10)?, r.get(11)?).key(),
                )),
                _ => None,
            };
            Ok(PriorEvidence { edge_id: r.get(0)?, key: r.get(1)?, run_id: r.get(2)?, first_run_id: r.get(3)?, ends })
        },
    )
}

pub(super) fn live_edges_touching_ends(c: &Connection, ends: &[End], source_type: &str) -> rusqlite::Result<Vec<Edge>> {
    let (containers, fields, fqns) = ends_by_kind(ends);
    // Each arm walks the (kind, id, retired_at) index to the live edges only, so the cost
    // follows the ends' live edges, not the store's size or history (a query log rewrites
    // hot tables over and over, retiring their old column edges each time).
    query_edges(
        c,
        "live_edges_touching_ends",
        "source_type = ?4 AND id IN (
           SELECT id FROM edges WHERE source_kind = 'c' AND source_id IN rarray(?1) AND retired_at IS NULL
           UNION SELECT id FROM edges WHERE target_kind = 'c' AND target_id IN rarray(?1) AND retired_at IS NULL
           UNION SELECT id FROM edges WHERE source_kind = 'f' AND source_id IN rarray(?2) AND retired_at IS NULL
           UNION SELECT id FROM edges WHERE target_kind = 'f' AND target_id IN rarray(?2) AND retired_at IS NULL
           UNION SELECT id FROM edges WHERE source_kind = 'x' AND source_fqn IN rarray(?3) AND retired_at IS NULL
           UNION SELECT id FROM edges WHERE target_kind = 'x' AND target_fqn IN rarray(?3) AND retired_at IS NULL)",
        params![id_array(&containers), id_array(&fields), str_array(&fqns), source_type],
    )
}
