//! Traversal reads of the embedded store: the live edges around a set of containers or fields
//! (one statement per call, whatever the number of ids), what a lineage graph shows beyond its
//! traversal, and the per-container counts a graph's nodes carry. These are the benchmarks' hot
//! path: each statement's shape is chosen for the index it walks (see the comments).

use rusqlite::{params, Connection};

use super::edges::{query_edges, select_edges};
use super::rows::{distinct_ids, id_array, parse_ts};
use super::{select_rows, STORE};
use crate::domain::{ContainerStats, Direction, Edge, Id, Timestamp};
use crate::metrics::store_query;
use crate::store::GraphAround;

pub(super) fn container_edges_of(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    container_edges(c, ids, direction, true)
}

pub(super) fn field_edges_of(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    field_edges(c, ids, direction, true)
}

/// `Store::container_edges_ever_of`: the same read without the liveness test, on the same index
/// prefix (kind, id); the caller keeps what was live at its instant.
pub(super) fn container_edges_ever_of(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    container_edges(c, ids, direction, false)
}

/// `Store::field_edges_ever_of`: `field_edges_of` without the liveness test.
pub(super) fn field_edges_ever_of(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    field_edges(c, ids, direction, false)
}

/// Container-level edges into (`Upstream`) or out of (`Downstream`) `ids`, live ones only or all.
fn container_edges(c: &Connection, ids: &[Id], direction: Direction, live: bool) -> rusqlite::Result<Vec<Edge>> {
    // One index seek per id, joined: `IN rarray(..)` would first copy the ids into a
    // temporary b-tree, for every level of every traversal.
    let (op, near, far) = match (direction, live) {
        (Direction::Upstream, true) => ("container_edges_upstream", "target", "source"),
        (Direction::Upstream, false) => ("container_edges_ever_upstream", "target", "source"),
        (Direction::Downstream, true) => ("container_edges_downstream", "source", "target"),
        (Direction::Downstream, false) => ("container_edges_ever_downstream", "source", "target"),
    };
    let live = if live { " AND retired_at IS NULL" } else { "" };
    let on = format!("{near}_kind = 'c' AND {near}_id = k.value{live} AND {far}_kind IN ('c', 'x')");
    select_edges(c, op, &format!("rarray(?1) AS k CROSS JOIN edges ON {on}"), params![distinct_ids(ids)])
}

/// Field-level edges into (`Upstream`) or out of (`Downstream`) `ids`, live ones only or all.
fn field_edges(c: &Connection, ids: &[Id], direction: Direction, live: bool) -> rusqlite::Result<Vec<Edge>> {
    let (op, near) = match (direction, live) {
        (Direction::Upstream, true) => ("field_edges_upstream", "target"),
        (Direction::Upstream, false) => ("field_edges_ever_upstream", "target"),
        (Direction::Downstream, true) => ("field_edges_downstream", "source"),
        (Direction::Downstream, false) => ("field_edges_ever_downstream", "source"),
    };
    let live = if live { " AND retired_at IS NULL" } else { "" };
    query_edges(c, op, &format!("{near}_kind = 'f' AND {near}_id IN rarray(?1){live}"), params![id_array(ids)])
}

/// `Store::first_edge_created`. Times are stored as fixed-width RFC 3339 text, so the smallest
/// text is the earliest time.
pub(super) fn first_edge_created(c: &Connection) -> rusqlite::Result<Option<Timestamp>> {
    store_query(STORE, "first_edge_created");
    parse_ts(c.query_row("SELECT min(created) FROM edges", [], |r| r.get::<_, Option<String>>(0))?)
}

/// `Store::container_graph_around` over `ids` (the graph's containers) and `known` (its known
/// external edges), reading only what the traversal did not: edges out of the containers whose
/// outgoing edges it did not read (`sources`), into those whose incoming edges it did not read
/// (`targets`); and the flags of those containers on those sides (see `GraphScope::unread`). A
/// hub in the middle of the graph is not read again.
pub(super) fn container_graph_around(
    c: &Connection,
    ids: &[Id],
    known: &[Id],
    sources: &[Id],
    targets: &[Id],
) -> rusqlite::Result<GraphAround> {
    let edges = if sources.is_empty() || targets.is_empty() {
        Vec::new()
    } else {
        // Each target's live incoming edges are read from the index and their source
        // tested (`+` keeps it out of the seek: seeking every (source, target) pair costs
        // sources × targets, a million seeks around a hub). From the targets' side, not
        // the sources': fan-in is bounded by what one job reads, while a source hub's
        // fan-out runs to thousands (reading it was a third of a depth-5 graph's time).
        // The test runs on the index alone; only the edges found are read in full.
        query_edges(
            c,
            "container_edges_within",
            "id IN (SELECT e.id FROM rarray(?2) AS k CROSS JOIN edges e
               ON e.target_kind = 'c' AND e.target_id = k.value AND e.retired_at IS NULL
               WHERE +e.source_kind = 'c' AND +e.source_id IN rarray(?1))",
            params![id_array(sources), distinct_ids(targets)],
        )?
    };
    let mut around = GraphAround { edges, ..GraphAround::default() };
    if sources.is_empty() && targets.is_empty() {
        return Ok(around);
    }
    // EXISTS stops at the first edge that leaves the set: a hub's fan-out is not read.
    store_query(STORE, "container_edge_flags");
    let mut stmt = c.prepare_cached(
        "SELECT n.value, 0, EXISTS (SELECT 1 FROM edges e WHERE e.target_kind = 'c' AND e.target_id = n.value
             AND e.retired_at IS NULL AND ((e.source_kind = 'c' AND e.source_id NOT IN rarray(?1))
               OR (e.source_kind = 'x' AND e.id NOT IN rarray(?2))))
         FROM rarray(?3) n
         UNION ALL
         SELECT n.value, 1, EXISTS (SELECT 1 FROM edges e WHERE e.source_kind = 'c' AND e.source_id = n.value
             AND e.retired_at IS NULL AND ((e.target_kind = 'c' AND e.target_id NOT IN rarray(?1))
               OR (e.target_kind = 'x' AND e.id NOT IN rarray(?2))))
         FROM rarray(?4) n",
    )?;
    let rows = stmt.query_map(params![id_array(ids), id_array(known), id_array(targets), id_array(sources)], |r| {
        Ok((r.get::<_, Id>(0)?, r.get::<_, bool>(1)?, r.get::<_, bool>(2)?))
    })?;
    for row in rows {
        match row? {
            (id, false, true) => around.has_upstream.push(id),
            (id, true, true) => around.has_downstream.push(id),
            _ => {}
        }
    }
    Ok(around)
}

pub(super) fn container_stats(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<ContainerStats>> {
    store_query(STORE, "container_stats");
    let mut stmt = c.prepare_cached(
        // Two EXISTS, one per end: each is answered from its (kind, id, retired_at)
        // index alone, where one OR-ed EXISTS also reads the edge rows (~20 % slower).
        // Per container, not GROUP BY: that sorted every field first (see `field_counts`).
        "SELECT k.value,
           (SELECT count(*) FROM fields f WHERE f.container_id = k.value AND f.deleted = 0),
           (SELECT count(*) FROM fields f WHERE f.container_id = k.value AND f.deleted = 0
             AND (EXISTS (SELECT 1 FROM edges e WHERE e.source_kind = 'f' AND e.source_id = f.id AND e.retired_at IS NULL)
               OR EXISTS (SELECT 1 FROM edges e WHERE e.target_kind = 'f' AND e.target_id = f.id AND e.retired_at IS NULL)))
         FROM rarray(?1) AS k",
    )?;
    let rows = stmt.query_map(params![distinct_ids(ids)], |r| {
        Ok(ContainerStats { container_id: r.get(0)?, field_count: r.get(1)?, linked_field_count: r.get(2)? })
    })?;
    // No row for a container without fields, as before.
    rows.filter(|s| !matches!(s, Ok(s) if s.field_count == 0)).collect()
}

pub(super) fn field_counts(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<(Id, i64)>> {
    store_query(STORE, "field_counts");
    // Each container's range of the partial `fields_key` index counted alone: a GROUP BY
    // sorted every field of the graph's containers first (a seventh of a graph query).
    let mut stmt = c.prepare_cached(
        "SELECT k.value, (SELECT count(*) FROM fields f WHERE f.container_id = k.value AND f.deleted = 0)
         FROM rarray(?1) AS k",
    )?;
    let rows = stmt.query_map(params![distinct_ids(ids)], |r| Ok((r.get::<_, Id>(0)?, r.get::<_, i64>(1)?)))?;
    // No row for a container without fields, as before.
    rows.filter(|row| !matches!(row, Ok((_, 0)))).collect()
}

pub(super) fn fields_with_lineage(c: &Connection, ids: &[Id]) -> rusqlite::Result<Vec<Id>> {
    select_rows(
        c,
        "fields_with_lineage",
        "SELECT source_id FROM edges WHERE retired_at IS NULL AND source_kind = 'f' AND source_id IN rarray(?1)
         UNION SELECT target_id FROM edges WHERE retired_at IS NULL AND target_kind = 'f' AND target_id IN rarray(?1)",
        params![id_array(ids)],
        |r| r.get(0),
    )
}

pub(super) fn live_container_edge_exists(c: &Connection, source: Id, target: Id) -> rusqlite::Result<bool> {
    store_query(STORE, "live_container_edge_exists");
    c.query_row(
        "SELECT EXISTS (SELECT 1 FROM edges WHERE source_kind = 'c' AND source_id = ?1 AND target_kind = 'c' AND target_id = ?2 AND retired_at IS NULL)",
        params![source, target],
        |r| r.get(0),
    )
}
