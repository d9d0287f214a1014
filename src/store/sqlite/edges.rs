//! Edges and their evidence in the embedded store: creating, updating, retiring and deleting
//! edges, the whole-edge reads (`select_edges`, by ids, the paged list, the edges touching a
//! container or field), and the evidence writes every caller shares (`write_evidence`).

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension, Statement};

use super::changes::record;
use super::rows::{
    distinct_ids, edge_row, edge_ukey, end_cols, evidence_row, id_array, intervals_text, json_text, ts, EDGE_COLS,
    EVIDENCE_COLS,
};
use super::{select_page, select_rows, sql_err, Filter, Listing, STORE};
use crate::domain::changes::relabel;
use crate::domain::{
    ChangeKind, Edge, EdgeFilter, EdgePatch, Evidence, Id, Interval, NewChange, NewEdge, Page, PageRequest, Timestamp,
};
use crate::metrics::store_query;
use crate::store::{StoreError, StoreResult};

/// Whole edges matching `where_sql`, ordered by id.
pub(super) fn query_edges(
    conn: &Connection,
    op: &'static str,
    where_sql: &str,
    p: impl rusqlite::Params,
) -> rusqlite::Result<Vec<Edge>> {
    select_edges(conn, op, &format!("edges WHERE {where_sql}"), p)
}

/// Whole edges `FROM` the given source (the `edges` table, or a join of an `rarray` with it),
/// ordered by id.
pub(super) fn select_edges(
    conn: &Connection,
    op: &'static str,
    from: &str,
    p: impl rusqlite::Params,
) -> rusqlite::Result<Vec<Edge>> {
    select_rows(conn, op, &format!("SELECT {EDGE_COLS} FROM {from} ORDER BY id"), p, edge_row)
}

pub(super) fn edges_by_ids_tx(conn: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Edge>> {
    select_edges(
        conn,
        "edges_by_ids",
        "rarray(?1) AS k CROSS JOIN edges ON edges.id = k.value",
        params![distinct_ids(ids)],
    )
}

/// What creating an edge whose (source, target, sourceType) is taken answers.
fn edge_clash() -> StoreError {
    StoreError::Conflict("A lineage edge with the same source and target already exists".into())
}

/// Whether an edge (live or retired) has this unique key.
fn ukey_taken(tx: &Connection, ukey: &str) -> StoreResult<bool> {
    store_query(STORE, "edge_exists");
    let exists: Option<Id> = tx
        .query_row("SELECT id FROM edges WHERE ukey = ?1", params![ukey], |r| r.get(0))
        .optional()
        .map_err(sql_err)?;
    Ok(exists.is_some())
}

fn insert_edge(tx: &Connection, e: &NewEdge, now: &Timestamp) -> StoreResult<Option<Edge>> {
    let ukey = edge_ukey(&e.source, &e.target, &e.source_type);
    if ukey_taken(tx, &ukey)? {
        return Ok(None);
    }
    insert_new_edge(tx, e, now, ukey).map(Some)
}

/// Inserts an edge the caller knows to be absent (its `ukey` looked up in this transaction), and
/// its `EDGE_ASSERTED` change.
pub(super) fn insert_new_edge(tx: &Connection, e: &NewEdge, now: &Timestamp, ukey: String) -> StoreResult<Edge> {
    let (sk, sid, sc, sf) = end_cols(&e.source);
    let (tk, tid, tc, tf) = end_cols(&e.target);
    let intervals = vec![Interval { from: *now, to: None }];
    store_query(STORE, "create_edge");
    let mut insert = tx.prepare_cached(
        "INSERT INTO edges (created, source_kind, source_id, source_container_id, source_fqn, target_kind, target_id, target_container_id, target_fqn, ukey, description, source_type, operation, derived, transformations, last_asserted_at, retired_at, intervals) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, NULL, ?17)",
    ).map_err(sql_err)?;
    insert
        .execute(params![
            ts(now),
            sk,
            sid,
            sc,
            sf,
            tk,
            tid,
            tc,
            tf,
            ukey,
            e.description,
            e.source_type,
            e.operation,
            e.derived,
            e.transformations.as_ref().map(json_text),
            e.last_asserted_at.as_ref().map(ts),
            intervals_text(&intervals),
        ])
        .map_err(sql_err)?;
    let id = tx.last_insert_rowid();
    let edge = Edge {
        id,
        created: *now,
        source: e.source.clone(),
        target: e.target.clone(),
        description: e.description.clone(),
        source_type: e.source_type.clone(),
        operation: e.operation.clone(),
        derived: e.derived,
        transformations: e.transformations.clone(),
        last_asserted_at: e.last_asserted_at,
        retired_at: None,
        intervals,
    };
    record(tx, &[NewChange::edge(ChangeKind::EdgeAsserted, &edge, *now)])?;
    Ok(edge)
}

pub(super) fn create_edges(
    tx: &Connection,
    edges: &[NewEdge],
    skip_existing: bool,
    now: Timestamp,
) -> StoreResult<Vec<Edge>> {
    let mut out = Vec::with_capacity(edges.len());
    for e in edges {
        match insert_edge(tx, e, &now)? {
            Some(edge) => out.push(edge),
            None if skip_existing => {}
            None => return Err(edge_clash()),
        }
    }
    Ok(out)
}

pub(super) fn update_edge(tx: &Connection, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>> {
    let Some(mut edge) = edges_by_ids_tx(tx, &[id]).map_err(sql_err)?.pop() else {
        return Ok(None);
    };
    let before = edge.clone();
    if let Some(description) = patch.description {
        edge.description = description;
    }
    if let Some(source_type) = patch.source_type {
        if source_type != edge.source_type {
            if ukey_taken(tx, &edge_ukey(&edge.source, &edge.target, &source_type))? {
                return Err(edge_clash());
            }
            edge.source_type = source_type;
        }
    }
    store_query(STORE, "update_edge");
    tx.execute(
        "UPDATE edges SET description = ?2, source_type = ?3, ukey = ?4 WHERE id = ?1",
        params![id, edge.description, edge.source_type, edge_ukey(&edge.source, &edge.target, &edge.source_type)],
    )
    .map_err(sql_err)?;
    if let Some(change) = relabel(&before, &edge, crate::domain::now()) {
        record(tx, &[change])?;
    }
    Ok(Some(edge))
}

/// Sets `retired_at` on these edges and closes their open live interval, recording each one's
/// `EDGE_RETIRED`; returns how many.
pub(super) fn close_edges(tx: &Connection, edges: impl IntoIterator<Item = Edge>, now: Timestamp) -> StoreResult<i64> {
    let mut stmt =
        tx.prepare_cached("UPDATE edges SET retired_at = ?2, intervals = ?3 WHERE id = ?1").map_err(sql_err)?;
    let mut closed = 0;
    let mut retired = Vec::new();
    for mut e in edges {
        retired.push(NewChange::edge(ChangeKind::EdgeRetired, &e, now));
        if let Some(last) = e.intervals.last_mut() {
            if last.to.is_none() {
                last.to = Some(now);
            }
        }
        store_query(STORE, "retire_edge");
        stmt.execute(params![e.id, ts(&now), intervals_text(&e.intervals)]).map_err(sql_err)?;
        closed += 1;
    }
    record(tx, &retired)?;
    Ok(closed)
}

pub(super) fn retire_edges(tx: &Connection, ids: &[Id], now: Timestamp) -> StoreResult<()> {
    let edges = edges_by_ids_tx(tx, ids).map_err(sql_err)?;
    close_edges(tx, edges.into_iter().filter(|e| e.retired_at.is_none()), now)?;
    store_query(STORE, "retire_evidence");
    tx.execute(
        "UPDATE evidence SET retired_at = ?2 WHERE retired_at IS NULL AND edge_id IN rarray(?1)",
        params![id_array(ids), ts(&now)],
    )
    .map_err(sql_err)?;
    Ok(())
}

pub(super) fn delete_edges(tx: &Connection, ids: &[Id]) -> StoreResult<()> {
    let now = crate::domain::now();
    let gone = edges_by_ids_tx(tx, ids).map_err(sql_err)?;
    record(tx, &gone.iter().map(|e| NewChange::edge(ChangeKind::EdgeDeleted, e, now)).collect::<Vec<_>>())?;
    store_query(STORE, "delete_edges");
    tx.execute("DELETE FROM edges WHERE id IN rarray(?1)", params![id_array(ids)]).map_err(sql_err)?;
    store_query(STORE, "delete_evidence");
    tx.execute("DELETE FROM evidence WHERE edge_id IN rarray(?1)", params![id_array(ids)]).map_err(sql_err)?;
    Ok(())
}

const EDGES: Listing =
    Listing { table: "edges", cols: EDGE_COLS, order: "id", count_op: "count_edges", list_op: "list_edges" };

pub(super) fn list_edges(c: &Connection, f: &EdgeFilter, page: PageRequest) -> rusqlite::Result<Page<Edge>> {
    let mut w = Filter::default();
    w.when(
        "(source_kind = 'c' AND source_id = ?) OR (target_kind = 'c' AND target_id = ?)",
        f.container_id.map(SqlValue::Integer),
    )
    .when(
        "(source_kind = 'f' AND source_id = ?) OR (target_kind = 'f' AND target_id = ?)",
        f.field_id.map(SqlValue::Integer),
    )
    .when("source_type = ?", f.source_type.clone().map(SqlValue::Text));
    if !f.include_retired {
        w.always("retired_at IS NULL");
    }
    select_page(c, &EDGES, &w.sql(), w.params, page, edge_row)
}

pub(super) fn edges_touching_containers(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Edge>> {
    // Through the ends' indexes (the ends' container columns have none, so that an ingested
    // edge writes two b-trees fewer): a container end by its id, a field end by each field of
    // the containers, deleted ones included (`fields_container`), whose retired edges remain.
    query_edges(
        c,
        "edges_touching_containers",
        "id IN (
           SELECT id FROM edges WHERE source_kind = 'c' AND source_id IN rarray(?1)
           UNION SELECT id FROM edges WHERE target_kind = 'c' AND target_id IN rarray(?1)
           UNION SELECT e.id FROM rarray(?1) AS k CROSS JOIN fields f ON f.container_id = k.value
             CROSS JOIN edges e ON e.source_kind = 'f' AND e.source_id = f.id
           UNION SELECT e.id FROM rarray(?1) AS k CROSS JOIN fields f ON f.container_id = k.value
             CROSS JOIN edges e ON e.target_kind = 'f' AND e.target_id = f.id)",
        params![id_array(ids)],
    )
}

pub(super) fn edges_touching_fields(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Edge>> {
    query_edges(
        c,
        "edges_touching_fields",
        "(source_kind = 'f' AND source_id IN rarray(?1)) OR (target_kind = 'f' AND target_id IN rarray(?1))",
        params![id_array(ids)],
    )
}

pub(super) fn evidence_for_edges(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Evidence>> {
    select_rows(
        c,
        "evidence_for_edges",
        &format!("SELECT {EVIDENCE_COLS} FROM evidence WHERE edge_id IN rarray(?1) ORDER BY edge_id, key"),
        params![id_array(ids)],
        evidence_row,
    )
}

/// Runs `sql` with an evidence row bound as `?1`..`?11` in `EVIDENCE_COLS` order: what every
/// evidence write below shares (an insert, an in-place update, an insert-or-replace).
fn write_evidence(tx: &Connection, op: &'static str, sql: &str, e: &Evidence) -> rusqlite::Result<()> {
    store_query(STORE, op);
    let mut stmt = tx.prepare_cached(sql)?;
    execute_evidence(&mut stmt, e)?;
    Ok(())
}

/// Runs `stmt` with an evidence row bound as `?1`..`?11` in `EVIDENCE_COLS` order (the evidence
/// writes above, and `import`'s own statement).
pub(super) fn execute_evidence(stmt: &mut Statement, e: &Evidence) -> rusqlite::Result<usize> {
    stmt.execute(params![
        e.edge_id,
        e.key,
        e.provider,
        e.evidence_type,
        e.authorship,
        e.source_relation,
        e.observed_at.as_ref().map(ts),
        e.first_observed_operation_id,
        e.last_observed_operation_id,
        e.details.as_ref().map(json_text),
        e.retired_at.as_ref().map(ts)
    ])
}

pub(super) fn put_evidence_tx(tx: &Connection, evidence: &[Evidence]) -> rusqlite::Result<()> {
    let sql = format!(
        "INSERT OR REPLACE INTO evidence ({EVIDENCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    );
    evidence.iter().try_for_each(|e| write_evidence(tx, "put_evidence", &sql, e))
}

/// Inserts evidence the caller knows to be absent (no conflict to resolve, no row to delete).
pub(super) fn insert_evidence_tx(tx: &Connection, e: &Evidence) -> rusqlite::Result<()> {
    let sql = format!("INSERT INTO evidence ({EVIDENCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    write_evidence(tx, "insert_evidence", &sql, e)
}

/// Rewrites evidence the caller knows to be there in place: its key columns stay, so unlike
/// `INSERT OR REPLACE` (a delete and an insert) no index entry moves.
pub(super) fn update_evidence_tx(tx: &Connection, e: &Evidence) -> rusqlite::Result<()> {
    let sql = "UPDATE evidence SET provider = ?3, evidence_type = ?4, authorship = ?5, source_relation = ?6,
           observed_at = ?7, first_observed_operation_id = ?8, last_observed_operation_id = ?9, details = ?10,
           retired_at = ?11
         WHERE edge_id = ?1 AND key = ?2";
    write_evidence(tx, "update_evidence", sql, e)
}
