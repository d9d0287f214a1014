//! Edges and their evidence on Neo4j: one `:LINEAGE` relationship per edge between its end nodes
//! (created, updated, retired, deleted, read by id or page), and the `:Evidence {edge_id, key}`
//! nodes that back them. An edge's uniqueness key (`ukey`) is checked up front so a taken one is
//! the store's `EDGE_EXISTS` conflict rather than a constraint failure mid-write.

use std::collections::{BTreeSet, HashSet};

use neo4rs::Txn;

use super::changes::record_in;
use super::rows::{
    catalog_end, edge_row, edge_ukey, evidence_row, intervals_text, list, map, micros, missing_end_message,
    parse_intervals, ts, EdgeProps, EvidenceProps,
};
use super::tx::Tx;
use super::{decode_by_ids, exec, first_id, internal, Cmd, Run, EDGE_COUNTER, EDGE_EXISTS};
use crate::domain::changes::relabel;
use crate::domain::{
    ChangeKind, Edge, EdgeFilter, EdgePatch, End, Evidence, Id, Interval, NewChange, NewEdge, Page, PageRequest,
    Timestamp,
};
use crate::store::{StoreError, StoreResult};

/// Any uniqueness conflict in an edge write is the edge-exists conflict.
pub(super) fn edge_conflict(e: StoreError) -> StoreError {
    match e {
        StoreError::Conflict(_) => StoreError::Conflict(EDGE_EXISTS.to_string()),
        other => other,
    }
}

/// `NotFound` for the first container or field end without a node (a deleted one still has its
/// node); external ends are merged when the edge is written. One statement, none without
/// catalog ends.
pub(super) async fn ensure_ends_exist<'a>(txn: &mut Txn, ends: impl IntoIterator<Item = &'a End>) -> StoreResult<()> {
    let mut params = Vec::new();
    let mut seen = HashSet::new();
    for end in ends {
        if let Some(param) = catalog_end(end) {
            if seen.insert(end.key()) {
                params.push(param);
            }
        }
    }
    if params.is_empty() {
        return Ok(());
    }
    let missing = exec(txn, cypher!("missing_edge_ends").param("ends", list(params))).await?;
    if let Some(row) = missing.rows.first() {
        let kind: String = missing.get(row, "kind")?;
        let id: Id = missing.get(row, "id")?;
        return Err(StoreError::NotFound(missing_end_message(&kind, id)));
    }
    Ok(())
}

pub(super) async fn create_edges_in(
    txn: &mut Tx<'_>,
    edges: Vec<NewEdge>,
    skip_existing: bool,
    now: Timestamp,
) -> StoreResult<Vec<Edge>> {
    let ukeys: Vec<String> = edges.iter().map(|e| edge_ukey(&e.source, &e.target, &e.source_type)).collect();
    let distinct_ukeys: Vec<String> = ukeys.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let taken: HashSet<String> = exec(txn, cypher!("edge_ukeys_taken").param("ukeys", distinct_ukeys))
        .await?
        .column::<String>("ukey")?
        .into_iter()
        .collect();

    let mut seen = HashSet::new();
    let mut keep = Vec::with_capacity(edges.len());
    for (edge, ukey) in edges.into_iter().zip(ukeys) {
        if taken.contains(&ukey) || !seen.insert(ukey) {
            if skip_existing {
                continue;
            }
            return Err(StoreError::Conflict(EDGE_EXISTS.to_string()));
        }
        keep.push(edge);
    }
    if keep.is_empty() {
        return Ok(Vec::new());
    }

    ensure_ends_exist(txn, keep.iter().flat_map(|e| [&e.source, &e.target])).await?;

    let n = keep.len();
    let first = first_id(&txn.allocate(&[(EDGE_COUNTER, n)]).await?, EDGE_COUNTER)?;
    let mut rows = Vec::with_capacity(n);
    for (id, new) in (first..).zip(keep) {
        let edge = Edge {
            id,
            created: now,
            source: new.source,
            target: new.target,
            description: new.description,
            source_type: new.source_type,
            operation: new.operation,
            derived: new.derived,
            transformations: new.transformations,
            last_asserted_at: new.last_asserted_at.map(micros),
            retired_at: None,
            intervals: vec![Interval { from: now, to: None }],
        };
        rows.push(edge_row(&edge)?);
    }
    let created = exec(txn, cypher!("create_edges").param("rows", list(rows))).await?.decode::<EdgeProps>("edge")?;
    if created.len() != n {
        return Err(internal(
            "create_edges",
            format!("created {} of {n} edges: an end node is missing", created.len()),
        ));
    }
    let changes: Vec<NewChange> = created.iter().map(|e| NewChange::edge(ChangeKind::EdgeAsserted, e, now)).collect();
    record_in(txn, &changes).await?;
    Ok(created)
}

pub(super) async fn update_edge_in(txn: &mut Tx<'_>, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
    let Some(current) = edges_by_ids(&mut *txn, &[id]).await?.into_iter().next() else {
        return Ok(None);
    };
    let mut new_ukey = None;
    if let Some(source_type) = &patch.source_type {
        if *source_type != current.source_type {
            let ukey = edge_ukey(&current.source, &current.target, source_type);
            let taken = exec(txn, cypher!("edge_ukeys_taken").param("ukeys", vec![ukey.clone()])).await?;
            if !taken.rows.is_empty() {
                return Err(StoreError::Conflict(EDGE_EXISTS.to_string()));
            }
            new_ukey = Some(ukey);
        }
    }
    let (set_description, description) = match patch.description {
        Some(description) => (true, description),
        None => (false, None),
    };
    let updated = exec(
        txn,
        cypher!("update_edge")
            .param("id", id)
            .param("set_description", set_description)
            .param("description", description)
            .param("source_type", patch.source_type)
            .param("ukey", new_ukey),
    )
    .await?
    .decode::<EdgeProps>("edge")?;
    let updated = updated.into_iter().next();
    if let Some(change) = updated.as_ref().and_then(|after| relabel(&current, after, crate::domain::now())) {
        record_in(txn, &[change]).await?;
    }
    Ok(updated)
}

pub(super) async fn retire_edges_in(txn: &mut Tx<'_>, ids: Vec<Id>, now: Timestamp) -> StoreResult<()> {
    let now_text = ts(&now);
    let marked =
        exec(txn, cypher!("retire_edges_mark").param("ids", ids.clone()).param("now", now_text.clone())).await?;
    let edge_ids: Vec<Id> = marked.column("id")?;
    let texts: Vec<Option<String>> = marked.column("intervals")?;
    let retired: Vec<NewChange> =
        marked.decode::<EdgeProps>("edge")?.iter().map(|e| NewChange::edge(ChangeKind::EdgeRetired, e, now)).collect();
    let mut rows = Vec::with_capacity(edge_ids.len());
    for (id, text) in edge_ids.into_iter().zip(texts) {
        let mut intervals = parse_intervals(text.as_deref())?;
        // Close the open interval; an edge without one (never live) keeps its history as is.
        if let Some(open) = intervals.iter_mut().rev().find(|i| i.to.is_none()) {
            open.to = Some(now);
            rows.push(map([("id", id.into()), ("intervals", intervals_text(&intervals)?.into())]));
        }
    }
    if !rows.is_empty() {
        exec(txn, cypher!("set_edge_intervals").param("rows", list(rows))).await?;
    }
    exec(txn, cypher!("retire_evidence").param("ids", ids).param("now", now_text)).await?;
    record_in(txn, &retired).await
}

/// `ids` distinct. Records an `EDGE_DELETED` per edge that was there.
pub(super) async fn delete_edges_in(txn: &mut Tx<'_>, ids: Vec<Id>) -> StoreResult<()> {
    let now = crate::domain::now();
    let gone = edges_by_ids(&mut *txn, &ids).await?;
    exec(txn, cypher!("delete_edges").param("ids", ids)).await?;
    let changes: Vec<NewChange> = gone.iter().map(|e| NewChange::edge(ChangeKind::EdgeDeleted, e, now)).collect();
    record_in(txn, &changes).await
}

pub(super) async fn edges_by_ids(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Edge>> {
    decode_by_ids::<EdgeProps>(db, cypher!("edges_by_ids"), ids, "edge").await
}

pub(super) async fn list_edges(mut db: impl Run, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>> {
    let cmd = match (filter.container_id, filter.field_id) {
        (Some(container_id), field_id) => {
            cypher!("list_edges_by_container").param("container_id", container_id).param("field_id", field_id)
        }
        (None, Some(field_id)) => cypher!("list_edges_by_field").param("field_id", field_id),
        (None, None) => cypher!("list_edges"),
    };
    db.run(
        cmd.param("source_type", filter.source_type.clone())
            .param("include_retired", filter.include_retired)
            .param("skip", page.offset())
            .param("limit", page.size),
    )
    .await?
    .page::<EdgeProps>(page)
}

pub(super) async fn edges_touching_containers(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Edge>> {
    decode_by_ids::<EdgeProps>(db, cypher!("edges_touching_containers"), ids, "edge").await
}

pub(super) async fn edges_touching_fields(db: impl Run, ids: &[Id]) -> StoreResult<Vec<Edge>> {
    decode_by_ids::<EdgeProps>(db, cypher!("edges_touching_fields"), ids, "edge").await
}

pub(super) async fn evidence_for_edges(db: impl Run, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>> {
    decode_by_ids::<EvidenceProps>(db, cypher!("evidence_for_edges"), edge_ids, "evidence").await
}

pub(super) async fn put_evidence(mut db: impl Run, evidence: Vec<Evidence>) -> StoreResult<()> {
    if evidence.is_empty() {
        return Ok(());
    }
    let rows = evidence.iter().map(evidence_row).collect::<StoreResult<Vec<_>>>()?;
    db.run(cypher!("put_evidence").param("rows", list(rows))).await.map(|_| ())
}
