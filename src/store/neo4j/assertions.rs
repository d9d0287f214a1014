//! `apply_assertions` on Neo4j: a provider batch in one transaction and a bounded number of
//! statements (at most seven), whatever the size of the batch.
//!
//! The batch's metadata values are upserted first (one `put_metadata` statement, none when it
//! has none), so a failure later in the batch rolls them back with the rest.
//!
//! The stored edges the batch names are read, write-locked, in one statement; the batch is folded
//! over them in memory with the embedded store's rules, in order (so an edge asserted twice is
//! created by the first assertion and asserted again by the second); then each kind of change is
//! one `UNWIND $rows` statement: create the new edges, with ids from the store's blocks (`ids`),
//! and their evidence (`assert_edges_create`; CREATE: it cannot exist yet, and a
//! MERGE that creates costs about twice as much), update the asserted ones and upsert their
//! evidence (`assert_edges_update`), retire the listed evidence, retire the candidates left
//! without live evidence and close their last interval; the change log last (in a session, at
//! its end). A missing end is looked up (to name it) only when `assert_edges_create` comes up
//! short.
//!
//! Also here, the other reads and writes the providers make around their batches: metadata
//! values, operation ids, evidence by key, a job's prior lineage, the live edges on some ends.

use std::collections::{BTreeSet, HashMap};

use neo4rs::BoltType;

use super::changes::record_in;
use super::edges::ensure_ends_exist;
use super::rows::{
    edge_row, edge_ukey, evidence_row, intervals_text, json_text, list, map, metadata_row, micros, opt_ts,
    parse_intervals, ts, Decode, EdgeProps, EvidenceProps, MetadataProps,
};
use super::tx::Tx;
use super::{count, distinct, exec, first_id, internal, Cmd, Neo4jStore, Rows, Run, EDGE_COUNTER};
use crate::domain::{
    AssertionBatch, AssertionSummary, ChangeKind, Edge, End, Evidence, Id, Interval, MetadataAssertion, NewChange,
    NewEdge, Timestamp,
};
use crate::store::{PriorEvidence, StoreError, StoreResult};

/// Where the edge of an assertion is while the batch is folded.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// The n-th edge to create.
    New(usize),
    /// The n-th stored edge asserted again.
    Stored(usize),
}

/// A new edge as the first assertion of its (source, target, sourceType) creates it; its id is
/// given once the new edges are counted.
pub(super) fn new_edge(new: &NewEdge, now: Timestamp) -> Edge {
    Edge {
        id: 0,
        created: now,
        source: new.source.clone(),
        target: new.target.clone(),
        description: new.description.clone(),
        source_type: new.source_type.clone(),
        operation: new.operation.clone(),
        derived: new.derived,
        transformations: new.transformations.clone(),
        last_asserted_at: new.last_asserted_at.map(micros),
        retired_at: None,
        intervals: vec![Interval { from: now, to: None }],
    }
}

/// An assertion of an edge that exists (stored, or created earlier in the batch): a retired edge
/// is revived with a new open interval; `last_asserted_at` only moves forward; `operation` is
/// kept once set; `derived` and `transformations` are replaced when the assertion gives them.
/// The revival and the operation given to an edge without one are changes for the log.
pub(super) fn assert_again(
    edge: &mut Edge,
    new: &NewEdge,
    now: Timestamp,
    summary: &mut AssertionSummary,
    changes: &mut Vec<NewChange>,
) {
    if edge.operation.is_none() && new.operation.is_some() {
        let relabelled = Edge { operation: new.operation.clone(), ..edge.clone() };
        let detail = serde_json::json!({"operation": {"from": null, "to": new.operation}});
        changes.push(NewChange::edge(ChangeKind::EdgeRelabelled, &relabelled, now).with_detail(detail));
    }
    if edge.retired_at.is_some() {
        edge.intervals.push(Interval { from: now, to: None });
        summary.edges_revived += 1;
        changes.push(NewChange::edge(ChangeKind::EdgeRevived, edge, now));
    }
    edge.retired_at = None;
    edge.last_asserted_at = match (edge.last_asserted_at, new.last_asserted_at.map(micros)) {
        (Some(stored), Some(asserted)) => Some(stored.max(asserted)),
        (stored, asserted) => stored.or(asserted),
    };
    if edge.operation.is_none() {
        edge.operation = new.operation.clone();
    }
    if new.derived.is_some() {
        edge.derived = new.derived;
    }
    if new.transformations.is_some() {
        edge.transformations = new.transformations.clone();
    }
}

/// The row of `assert_edges_update` for an edge asserted again.
fn asserted_row(e: &Edge) -> StoreResult<BoltType> {
    Ok(map([
        ("id", e.id.into()),
        ("intervals", intervals_text(&e.intervals)?.into()),
        ("last_asserted_at", opt_ts(e.last_asserted_at.as_ref())),
        ("operation", e.operation.clone().into()),
        ("derived", e.derived.into()),
        ("transformations", json_text(e.transformations.as_ref())?),
    ]))
}

/// Runs the batch in one transaction. Batches naming the same edge serialize on its uniqueness
/// key (see `assert_edges_lookup`), so a concurrent batch creating it first makes this one assert
/// it, as in the embedded store.
/// The batch's summary and each assertion's edge id, in batch order.
pub(super) async fn apply_assertions(
    store: &Neo4jStore,
    batch: AssertionBatch,
    now: Timestamp,
) -> StoreResult<(AssertionSummary, Vec<Id>)> {
    // Two batches creating the same new edge cannot lock a relationship that does not exist
    // yet: the second hits the uniqueness constraint and rolls back. Run again, it finds the
    // edge and asserts it, as the embedded store's single writer would have.
    let batch = std::sync::Arc::new(batch);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let this = batch.clone();
        match write_txn!(store, |txn| apply_assertions_in(txn, &this, now)) {
            Err(StoreError::Conflict(m)) if attempt < 5 => {
                tracing::debug!(attempt, error = %m, "concurrent assertion of a new edge; retrying the batch");
                tokio::time::sleep(std::time::Duration::from_millis(10 * attempt)).await;
            }
            other => return other,
        }
    }
}

async fn apply_assertions_in(
    txn: &mut Tx<'_>,
    batch: &AssertionBatch,
    now: Timestamp,
) -> StoreResult<(AssertionSummary, Vec<Id>)> {
    let now = micros(now);
    let now_text = ts(&now);
    let mut summary = AssertionSummary { edges_asserted: count(batch.assert.len())?, ..AssertionSummary::default() };

    // ---- 0. metadata values the event reports ----
    put_metadata_in(txn, &batch.metadata).await?;

    // ---- 1. edges: create or assert again, in batch order ----
    let ukeys: Vec<String> =
        batch.assert.iter().map(|a| edge_ukey(&a.edge.source, &a.edge.target, &a.edge.source_type)).collect();
    let mut stored: HashMap<String, Edge> = HashMap::new();
    if !ukeys.is_empty() {
        let wanted: Vec<String> = ukeys.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
        let found =
            exec(txn, cypher!("assert_edges_lookup").param("ukeys", wanted)).await?.decode::<EdgeProps>("edge")?;
        stored = found.into_iter().map(|e| (edge_ukey(&e.source, &e.target, &e.source_type), e)).collect();
    }
    let mut created: Vec<Edge> = Vec::new();
    let mut asserted: Vec<Edge> = Vec::new();
    let mut slots: HashMap<&str, Slot> = HashMap::new();
    let mut slot_of_assertion = Vec::with_capacity(batch.assert.len());
    // Recorded last, in the order the embedded store records them (see `changes::record_in`).
    let mut changes: Vec<NewChange> = Vec::new();
    for (assertion, ukey) in batch.assert.iter().zip(&ukeys) {
        let slot = match slots.get(ukey.as_str()) {
            Some(&slot) => {
                let edge = match slot {
                    Slot::New(i) => &mut created[i],
                    Slot::Stored(i) => &mut asserted[i],
                };
                assert_again(edge, &assertion.edge, now, &mut summary, &mut changes);
                slot
            }
            None => {
                let slot = match stored.remove(ukey) {
                    Some(mut edge) => {
                        assert_again(&mut edge, &assertion.edge, now, &mut summary, &mut changes);
                        asserted.push(edge);
                        Slot::Stored(asserted.len() - 1)
                    }
                    None => {
                        summary.edges_created += 1;
                        created.push(new_edge(&assertion.edge, now));
                        // Its id is given below; a placeholder keeps the log in batch order.
                        changes.push(NewChange::edge(ChangeKind::EdgeAsserted, &created[created.len() - 1], now));
                        Slot::New(created.len() - 1)
                    }
                };
                slots.insert(ukey, slot);
                slot
            }
        };
        slot_of_assertion.push(slot);
    }

    // ---- 2. evidence of the assertions, live; one row per (edge, key), the last one wins ----
    // Written with the edges it backs: an edge created now gets its evidence in the statement
    // that creates it (CREATE: none can exist yet), an edge asserted again gets its evidence
    // upserted in the statement that updates it; a round trip each instead of two.
    // Each edge's rows, the n-th list the n-th new or asserted edge's; a new edge's id is given
    // by the statement that creates it.
    let mut new_evidence: Vec<Vec<Evidence>> = vec![Vec::new(); created.len()];
    let mut stored_evidence: Vec<Vec<Evidence>> = vec![Vec::new(); asserted.len()];
    for (assertion, slot) in batch.assert.iter().zip(&slot_of_assertion) {
        let (rows, edge_id) = match *slot {
            Slot::New(i) => (&mut new_evidence[i], 0),
            Slot::Stored(i) => (&mut stored_evidence[i], asserted[i].id),
        };
        let row = Evidence { edge_id, retired_at: None, ..assertion.evidence.clone() };
        match rows.iter_mut().find(|e| e.key == row.key) {
            Some(e) => *e = row,
            None => rows.push(row),
        }
    }

    if !created.is_empty() {
        // One statement creates the edges, with ids from the store's blocks, and their evidence.
        let first = first_id(&txn.allocate(&[(EDGE_COUNTER, created.len())]).await?, EDGE_COUNTER)?;
        let rows = created.iter().map(edge_row).collect::<StoreResult<Vec<_>>>()?;
        let evidence = new_evidence
            .iter()
            .map(|rows| rows.iter().map(evidence_row).collect::<StoreResult<Vec<_>>>().map(list))
            .collect::<StoreResult<Vec<_>>>()?;
        let out = exec(
            txn,
            cypher!("assert_edges_create")
                .param("rows", list(rows))
                .param("first", first)
                .param("evidence", list(evidence)),
        )
        .await?;
        let ids: Vec<Id> = out.column("id")?;
        if ids.len() != created.len() {
            // An end is missing (deleted meanwhile): name it. The transaction fails either way,
            // so the check costs a statement only when it fails, not on every batch.
            ensure_ends_exist(txn, created.iter().flat_map(|e| [&e.source, &e.target])).await?;
            return Err(internal(
                "assert_edges_create",
                format!("created {} of {} edges: an end node is missing", ids.len(), created.len()),
            ));
        }
        summary.evidence_created += out.column::<i64>("evidence")?.into_iter().sum::<i64>();
        for (edge, id) in created.iter_mut().zip(&ids) {
            edge.id = *id;
        }
        // The placeholders of the new edges, in creation order, take their ids.
        let mut ids = ids.into_iter();
        for c in changes.iter_mut().filter(|c| c.kind == ChangeKind::EdgeAsserted) {
            c.edge_id = ids.next();
        }
    }
    if !asserted.is_empty() {
        let rows = asserted.iter().map(asserted_row).collect::<StoreResult<Vec<_>>>()?;
        let evidence = stored_evidence.iter().flatten().map(evidence_row).collect::<StoreResult<Vec<_>>>()?;
        let made: i64 =
            exec(txn, cypher!("assert_edges_update").param("rows", list(rows)).param("evidence", list(evidence)))
                .await?
                .value("created")?;
        summary.evidence_created += made;
    }

    // ---- 3. evidence that no longer asserts its edge ----
    let retire: BTreeSet<(Id, &str)> = batch.retire_evidence.iter().map(|(id, key)| (*id, key.as_str())).collect();
    if !retire.is_empty() {
        let rows: Vec<BoltType> =
            retire.into_iter().map(|(edge_id, key)| map([("edge_id", edge_id.into()), ("key", key.into())])).collect();
        summary.evidence_retired =
            exec(txn, cypher!("retire_evidence_keys").param("rows", list(rows)).param("now", now_text.clone()))
                .await?
                .value("retired")?;
    }

    // ---- 4. candidates left without live evidence retire; their last interval closes ----
    if !batch.retire_candidates.is_empty() {
        let retired = exec(
            txn,
            cypher!("retire_unbacked_edges").param("ids", distinct(&batch.retire_candidates)).param("now", now_text),
        )
        .await?;
        let ids: Vec<Id> = retired.column("id")?;
        let texts: Vec<Option<String>> = retired.column("intervals")?;
        summary.edges_retired = count(ids.len())?;
        for e in retired.decode::<EdgeProps>("edge")? {
            changes.push(NewChange::edge(ChangeKind::EdgeRetired, &e, now));
        }
        let mut rows = Vec::new();
        for (id, text) in ids.into_iter().zip(texts) {
            let mut intervals = parse_intervals(text.as_deref())?;
            if let Some(last) = intervals.last_mut().filter(|last| last.to.is_none()) {
                last.to = Some(now);
                rows.push(map([("id", id.into()), ("intervals", intervals_text(&intervals)?.into())]));
            }
        }
        if !rows.is_empty() {
            exec(txn, cypher!("set_edge_intervals").param("rows", list(rows))).await?;
        }
    }
    record_in(txn, &changes).await?;
    let edge_ids = slot_of_assertion
        .iter()
        .map(|slot| match *slot {
            Slot::New(i) => created[i].id,
            Slot::Stored(i) => asserted[i].id,
        })
        .collect();
    Ok((summary, edge_ids))
}

/// Upserts metadata rows in one statement (none for no rows), in the caller's transaction. The
/// rows are sorted by key first, stably (a later row for the same key still applies last), so
/// concurrent writers lock the keys they share in the same order. In a session call they wait
/// for the session's end (`Tx::defer_metadata`), which upserts all of its rows at once.
pub(super) async fn put_metadata_in(txn: &mut Tx<'_>, rows: &[MetadataAssertion]) -> StoreResult<()> {
    if rows.is_empty() || txn.defer_metadata(rows) {
        return Ok(());
    }
    let mut sorted: Vec<&MetadataAssertion> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        (a.container_id, a.field_id.unwrap_or(0), &a.attribute, &a.source).cmp(&(
            b.container_id,
            b.field_id.unwrap_or(0),
            &b.attribute,
            &b.source,
        ))
    });
    let rows = sorted.into_iter().map(metadata_row).collect::<StoreResult<Vec<_>>>()?;
    exec(txn, cypher!("put_metadata").param("rows", list(rows))).await.map(|_| ())
}

/// Ordered as the embedded store orders them: by field (the container's own values first),
/// attribute, source.
pub(super) async fn metadata_for_container(mut db: impl Run, container_id: Id) -> StoreResult<Vec<MetadataAssertion>> {
    db.run(cypher!("metadata_for_container").param("container_id", container_id))
        .await?
        .decode::<MetadataProps>("metadata")
}

pub(super) async fn container_metadata_of(mut db: impl Run, ids: &[Id]) -> StoreResult<Vec<MetadataAssertion>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    db.run(cypher!("container_metadata_of").param("ids", distinct(ids))).await?.decode::<MetadataProps>("metadata")
}

pub(super) async fn evidence_by_keys(mut db: impl Run, keys: &[String]) -> StoreResult<Vec<Evidence>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = keys.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    db.run(cypher!("evidence_by_keys").param("keys", keys)).await?.decode::<EvidenceProps>("evidence")
}

pub(super) async fn live_evidence_of_key(mut db: impl Run, key: &str) -> StoreResult<Vec<PriorEvidence>> {
    prior_evidence(db.run(cypher!("live_evidence_of_key").param("key", key.to_string())).await?)
}

/// `live_evidence_of_key` of each key in one statement, by key in the given order, then edge id.
pub(super) async fn live_evidence_of_keys(mut db: impl Run, keys: &[String]) -> StoreResult<Vec<PriorEvidence>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    prior_evidence(db.run(cypher!("live_evidence_of_keys").param("keys", keys.to_vec())).await?)
}

/// The rows of `live_evidence_of_key(s)`: each evidence with its edge (none when it is gone).
fn prior_evidence(rows: Rows) -> StoreResult<Vec<PriorEvidence>> {
    let evidence = rows.decode::<EvidenceProps>("evidence")?;
    let edges = rows.column::<Vec<EdgeProps>>("edge")?;
    evidence
        .iter()
        .zip(edges)
        .map(|(e, edge)| {
            let edge = edge.into_iter().next().map(Decode::decode).transpose()?;
            Ok(PriorEvidence::of(e, edge.as_ref()))
        })
        .collect()
}

pub(super) async fn live_edges_touching_ends(
    mut db: impl Run,
    ends: &[End],
    source_type: &str,
) -> StoreResult<Vec<Edge>> {
    if ends.is_empty() {
        return Ok(Vec::new());
    }
    let (container_ids, field_ids, fqns) = crate::store::ends_by_kind(ends);
    db.run(
        cypher!("live_edges_touching_ends")
            .param("container_ids", container_ids)
            .param("field_ids", field_ids)
            .param("fqns", fqns)
            .param("source_type", source_type.to_string()),
    )
    .await?
    .decode::<EdgeProps>("edge")
}
