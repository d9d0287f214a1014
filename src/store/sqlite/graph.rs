//! Traversal reads of the embedded store: the live edges around a set of containers or fields
//! (one statement per call, whatever the number of ids), what a lineage graph shows beyond its
//! traversal, and the per-container counts a graph's nodes carry. These are the benchmarks' hot
//! path: each statement's shape is chosen for the index it walks (see the comments).

use rusqlite::{params, Connection};

use super::edges::{query_edges, select_edges};
use super::live_at;
use super::rows::{distinct_ids, id_array, parse_ts};
use super::{select_rows, STORE};
use crate::domain::{ContainerStats, Direction, Edge, Id, Timestamp};
use crate::metrics::store_query;
use crate::store::GraphAround;

pub(super) fn container_edges_of(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    container_edges(c, ids, direction, Live::Now)
}

pub(super) fn field_edges_of(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    field_edges(c, ids, direction, Live::Now)
}

/// `Store::container_edges_live_at`: the same read with the liveness test at the instants in
/// place of `retired_at IS NULL`, on the same index prefix (kind, id); only the rows live then
/// are decoded.
pub(super) fn container_edges_live_at(
    c: &Connection,
    ids: &[Id],
    direction: Direction,
    at: &[Timestamp],
) -> rusqlite::Result<Vec<Edge>> {
    container_edges(c, ids, direction, Live::At(at))
}

/// `Store::field_edges_live_at`: `field_edges_of` with the liveness test at the instants.
pub(super) fn field_edges_live_at(
    c: &Connection,
    ids: &[Id],
    direction: Direction,
    at: &[Timestamp],
) -> rusqlite::Result<Vec<Edge>> {
    field_edges(c, ids, direction, Live::At(at))
}

/// Every container edge into or out of `ids`, retired ones too: the lists `adjacency` keeps,
/// from which both today's and an instant's edges are picked.
pub(super) fn container_edges_ever(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    container_edges(c, ids, direction, Live::Ever)
}

/// `container_edges_ever` of field edges.
pub(super) fn field_edges_ever(c: &Connection, ids: &[Id], direction: Direction) -> rusqlite::Result<Vec<Edge>> {
    field_edges(c, ids, direction, Live::Ever)
}

/// Which edges a level read returns: live now, live at one of the instants, or all.
#[derive(Clone, Copy)]
enum Live<'a> {
    Now,
    At(&'a [Timestamp]),
    Ever,
}

/// Live at one of the instants bound as `?{since}` ([`live_at::since`]) and `?{instants}`
/// ([`live_at::instants`]): first the indexed `retired_at` (no row fetched for an edge retired
/// before them), then `edge_live_at` on the row. Put last in a `WHERE`, after what the index
/// alone answers.
fn live_at_sql(alias: &str, since: usize, instants: usize) -> String {
    format!(
        "({alias}retired_at IS NULL OR {alias}retired_at >= ?{since}) \
         AND edge_live_at({alias}created, {alias}retired_at, {alias}intervals, ?{instants})"
    )
}

/// Container-level edges into (`Upstream`) or out of (`Downstream`) `ids`, live now, live at one
/// of the instants, or all.
fn container_edges(c: &Connection, ids: &[Id], direction: Direction, live: Live<'_>) -> rusqlite::Result<Vec<Edge>> {
    // One index seek per id, joined: `IN rarray(..)` would first copy the ids into a
    // temporary b-tree, for every level of every traversal.
    let (op, near, far) = match (direction, live) {
        (Direction::Upstream, Live::Now) => ("container_edges_upstream", "target", "source"),
        (Direction::Upstream, Live::At(_)) => ("container_edges_upstream_at", "target", "source"),
        (Direction::Upstream, Live::Ever) => ("container_edges_upstream_ever", "target", "source"),
        (Direction::Downstream, Live::Now) => ("container_edges_downstream", "source", "target"),
        (Direction::Downstream, Live::At(_)) => ("container_edges_downstream_at", "source", "target"),
        (Direction::Downstream, Live::Ever) => ("container_edges_downstream_ever", "source", "target"),
    };
    let on = format!("{near}_kind = 'c' AND {near}_id = k.value AND {far}_kind IN ('c', 'x')");
    let from = |live: &str| format!("rarray(?1) AS k CROSS JOIN edges ON {on}{live}");
    match live {
        Live::Now => select_edges(c, op, &from(" AND retired_at IS NULL"), params![distinct_ids(ids)]),
        Live::Ever => select_edges(c, op, &from(""), params![distinct_ids(ids)]),
        Live::At(at) => select_edges(
            c,
            op,
            &from(&format!(" AND {}", live_at_sql("", 2, 3))),
            params![distinct_ids(ids), live_at::since(at), live_at::instants(at)],
        ),
    }
}

/// Field-level edges into (`Upstream`) or out of (`Downstream`) `ids`, live now, live at one of
/// the instants, or all.
fn field_edges(c: &Connection, ids: &[Id], direction: Direction, live: Live<'_>) -> rusqlite::Result<Vec<Edge>> {
    let (op, near) = match (direction, live) {
        (Direction::Upstream, Live::Now) => ("field_edges_upstream", "target"),
        (Direction::Upstream, Live::At(_)) => ("field_edges_upstream_at", "target"),
        (Direction::Upstream, Live::Ever) => ("field_edges_upstream_ever", "target"),
        (Direction::Downstream, Live::Now) => ("field_edges_downstream", "source"),
        (Direction::Downstream, Live::At(_)) => ("field_edges_downstream_at", "source"),
        (Direction::Downstream, Live::Ever) => ("field_edges_downstream_ever", "source"),
    };
    let near = format!("{near}_kind = 'f' AND {near}_id IN rarray(?1)");
    match live {
        Live::Now => query_edges(c, op, &format!("{near} AND retired_at IS NULL"), params![id_array(ids)]),
        Live::Ever => query_edges(c, op, &near, params![id_array(ids)]),
        Live::At(at) => query_edges(
            c,
            op,
            &format!("{near} AND {}", live_at_sql("", 2, 3)),
            params![id_array(ids), live_at::since(at), live_at::instants(at)],
        ),
    }
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
    let edges = edges_within(c, sources, targets, None)?;
    let (has_upstream, has_downstream) = edge_flags(c, ids, known, sources, targets, None)?;
    Ok(GraphAround { edges, has_upstream, has_downstream })
}

/// `Store::container_edges_within_at`: the edges from `sources` to `targets` live at one of the
/// instants, read as `container_graph_around` reads today's.
pub(super) fn container_edges_within_at(
    c: &Connection,
    sources: &[Id],
    targets: &[Id],
    at: &[Timestamp],
) -> rusqlite::Result<Vec<Edge>> {
    edges_within(c, sources, targets, Some(at))
}

/// `Store::container_edge_flags_at`: `container_graph_around`'s flags as of `at`, each an
/// `EXISTS` that stops at the first edge live then that leaves the graph.
pub(super) fn container_edge_flags_at(
    c: &Connection,
    ids: &[Id],
    known: &[Id],
    sources: &[Id],
    targets: &[Id],
    at: Timestamp,
) -> rusqlite::Result<(Vec<Id>, Vec<Id>)> {
    edge_flags(c, ids, known, sources, targets, Some(at))
}

/// Live container-to-container edges from `sources` to `targets`, now or at one of `at`.
fn edges_within(
    c: &Connection,
    sources: &[Id],
    targets: &[Id],
    at: Option<&[Timestamp]>,
) -> rusqlite::Result<Vec<Edge>> {
    if sources.is_empty() || targets.is_empty() {
        return Ok(Vec::new());
    }
    // Each target's live incoming edges are read from the index and their source tested (`+`
    // keeps it out of the seek: seeking every (source, target) pair costs sources × targets, a
    // million seeks around a hub). From the targets' side, not the sources': fan-in is bounded
    // by what one job reads, while a source hub's fan-out runs to thousands (reading it was a
    // third of a depth-5 graph's time). Today's test runs on the index alone; at an instant the
    // row of an edge whose source is in the graph is fetched for `edge_live_at`. Only the edges
    // found are read in full.
    let Some(at) = at else {
        return query_edges(
            c,
            "container_edges_within",
            "id IN (SELECT e.id FROM rarray(?2) AS k CROSS JOIN edges e
               ON e.target_kind = 'c' AND e.target_id = k.value AND e.retired_at IS NULL
               WHERE +e.source_kind = 'c' AND +e.source_id IN rarray(?1))",
            params![id_array(sources), distinct_ids(targets)],
        );
    };
    query_edges(
        c,
        "container_edges_within_at",
        &format!(
            "id IN (SELECT e.id FROM rarray(?2) AS k CROSS JOIN edges e
               ON e.target_kind = 'c' AND e.target_id = k.value
               WHERE +e.source_kind = 'c' AND +e.source_id IN rarray(?1) AND {})",
            live_at_sql("e.", 3, 4)
        ),
        params![id_array(sources), distinct_ids(targets), live_at::since(at), live_at::instants(at)],
    )
}

/// Which of `targets` have a live edge from outside the graph (`ids`, or an external asset by an
/// edge not in `known`), and which of `sources` one to outside: `(upstream, downstream)`, now or
/// at `at`.
fn edge_flags(
    c: &Connection,
    ids: &[Id],
    known: &[Id],
    sources: &[Id],
    targets: &[Id],
    at: Option<Timestamp>,
) -> rusqlite::Result<(Vec<Id>, Vec<Id>)> {
    let (mut has_upstream, mut has_downstream) = (Vec::new(), Vec::new());
    if sources.is_empty() && targets.is_empty() {
        return Ok((has_upstream, has_downstream));
    }
    // EXISTS stops at the first edge that leaves the set: a hub's fan-out is not read. Today's
    // liveness is a seek on the index (`retired_at IS NULL`); an instant's is tested last, on
    // the rows of the edges that leave the set.
    let (op, seek, row) = match at {
        None => ("container_edge_flags", "AND e.retired_at IS NULL", String::new()),
        Some(_) => ("container_edge_flags_at", "", format!("AND {}", live_at_sql("e.", 5, 6))),
    };
    store_query(STORE, op);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT n.value, 0, EXISTS (SELECT 1 FROM edges e WHERE e.target_kind = 'c' AND e.target_id = n.value
             {seek} AND ((e.source_kind = 'c' AND e.source_id NOT IN rarray(?1))
               OR (e.source_kind = 'x' AND e.id NOT IN rarray(?2))) {row})
         FROM rarray(?3) n
         UNION ALL
         SELECT n.value, 1, EXISTS (SELECT 1 FROM edges e WHERE e.source_kind = 'c' AND e.source_id = n.value
             {seek} AND ((e.target_kind = 'c' AND e.target_id NOT IN rarray(?1))
               OR (e.target_kind = 'x' AND e.id NOT IN rarray(?2))) {row})
         FROM rarray(?4) n"
    ))?;
    let (ids, known, targets, sources) = (id_array(ids), id_array(known), id_array(targets), id_array(sources));
    let row = |r: &rusqlite::Row<'_>| Ok((r.get::<_, Id>(0)?, r.get::<_, bool>(1)?, r.get::<_, bool>(2)?));
    let rows: Vec<(Id, bool, bool)> = match at {
        None => stmt.query_map(params![ids, known, targets, sources], row)?.collect::<rusqlite::Result<_>>()?,
        Some(at) => stmt
            .query_map(params![ids, known, targets, sources, live_at::since(&[at]), live_at::instants(&[at])], row)?
            .collect::<rusqlite::Result<_>>()?,
    };
    for row in rows {
        match row {
            (id, false, true) => has_upstream.push(id),
            (id, true, true) => has_downstream.push(id),
            _ => {}
        }
    }
    Ok((has_upstream, has_downstream))
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
