//! Traversal reads on Neo4j: a level of a lineage walk (`container_edges_of`, `field_edges_of`),
//! what a lineage graph shows around its containers, and the per-container counts a graph and the
//! catalog show. One statement per call whatever the number of ids, each an auto-commit read
//! where the `Store` impl says so, since these are most of the statements a query sends.

use super::rows::{parse_opt_ts, ts, EdgeProps};
use super::{decode_by_ids, distinct, AutoCommit, Cmd, Run};
use crate::domain::{ContainerStats, Direction, Edge, Id, Timestamp};
use crate::store::{GraphAround, GraphScope, StoreResult};

pub(super) async fn container_edges_of(db: impl Run, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
    let cmd = match direction {
        Direction::Upstream => cypher!("container_edges_upstream"),
        Direction::Downstream => cypher!("container_edges_downstream"),
    };
    decode_by_ids::<EdgeProps>(db, cmd, ids, "edge").await
}

pub(super) async fn field_edges_of(db: impl Run, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>> {
    let cmd = match direction {
        Direction::Upstream => cypher!("field_edges_upstream"),
        Direction::Downstream => cypher!("field_edges_downstream"),
    };
    decode_by_ids::<EdgeProps>(db, cmd, ids, "edge").await
}

/// The edges live at one of `at` at one level of an as-of traversal: container-level or
/// field-level, into (`Upstream`) or out of (`Downstream`) `ids`. The liveness test is in the
/// Cypher's `WHERE` (see the statements).
pub(super) async fn edges_live_at(
    db: impl Run,
    ids: &[Id],
    direction: Direction,
    over_fields: bool,
    at: &[Timestamp],
) -> StoreResult<Vec<Edge>> {
    let cmd = match (over_fields, direction) {
        (false, Direction::Upstream) => cypher!("container_edges_live_at_upstream"),
        (false, Direction::Downstream) => cypher!("container_edges_live_at_downstream"),
        (true, Direction::Upstream) => cypher!("field_edges_live_at_upstream"),
        (true, Direction::Downstream) => cypher!("field_edges_live_at_downstream"),
    };
    decode_by_ids::<EdgeProps>(db, cmd.param("at", instants(at)), ids, "edge").await
}

/// `Store::container_edges_within_at`.
pub(super) async fn container_edges_within_at(
    mut db: impl Run,
    sources: &[Id],
    targets: &[Id],
    at: &[Timestamp],
) -> StoreResult<Vec<Edge>> {
    if sources.is_empty() || targets.is_empty() {
        return Ok(Vec::new());
    }
    let cmd = cypher!("container_edges_within_at")
        .param("sources", distinct(sources))
        .param("targets", distinct(targets))
        .param("at", instants(at));
    db.run(cmd).await?.decode::<EdgeProps>("edge")
}

/// `Store::container_edge_flags_at`.
pub(super) async fn container_edge_flags_at(
    mut db: impl Run,
    scope: &GraphScope,
    at: Timestamp,
) -> StoreResult<(Vec<Id>, Vec<Id>)> {
    let (sources, targets) = scope.unread();
    if sources.is_empty() && targets.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let flags = db
        .run(
            cypher!("container_edge_flags_at")
                .param("ids", distinct(&scope.ids))
                .param("known", distinct(&scope.known_external_edges))
                .param("up", distinct(&targets))
                .param("down", distinct(&sources))
                .param("at", instants(&[at])),
        )
        .await?;
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for row in &flags.rows {
        let id: Id = flags.get(row, "id")?;
        if flags.get::<bool>(row, "has_upstream")? {
            up.push(id);
        }
        if flags.get::<bool>(row, "has_downstream")? {
            down.push(id);
        }
    }
    Ok((up, down))
}

/// The `$at` of the as-of statements: each instant as the store writes timestamps (to the
/// microsecond, as every stored time is, so comparing the texts compares the times).
fn instants(at: &[Timestamp]) -> Vec<String> {
    at.iter().map(ts).collect()
}

pub(super) async fn first_edge_created(mut db: impl Run) -> StoreResult<Option<Timestamp>> {
    parse_opt_ts(db.run(cypher!("first_edge_created")).await?.value::<Option<String>>("created")?)
}

/// Auto-commit only: the two reads go out side by side, on two pooled connections.
pub(super) async fn container_graph_around(db: AutoCommit<'_>, scope: &GraphScope) -> StoreResult<GraphAround> {
    if scope.ids.is_empty() {
        return Ok(GraphAround::default());
    }
    // Only what the traversal did not read (see the trait): edges out of `sources` into
    // `targets`, and the flags of those containers on those sides.
    let (sources, targets) = scope.unread();
    let (sources, targets) = (distinct(&sources), distinct(&targets));
    let (mut within, mut flags) = (db, db);
    let within = within
        .run(cypher!("container_edges_within").param("sources", sources.clone()).param("targets", targets.clone()));
    let flags = flags.run(
        cypher!("container_edge_flags")
            .param("ids", distinct(&scope.ids))
            .param("known", distinct(&scope.known_external_edges))
            .param("up", targets)
            .param("down", sources),
    );
    let (within, flags) = tokio::join!(within, flags);
    let flags = flags?;
    let mut around = GraphAround { edges: within?.decode::<EdgeProps>("edge")?, ..GraphAround::default() };
    for row in &flags.rows {
        let id: Id = flags.get(row, "id")?;
        if flags.get::<bool>(row, "has_upstream")? {
            around.has_upstream.push(id);
        }
        if flags.get::<bool>(row, "has_downstream")? {
            around.has_downstream.push(id);
        }
    }
    Ok(around)
}

pub(super) async fn container_stats(mut db: impl Run, ids: &[Id]) -> StoreResult<Vec<ContainerStats>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let out = db.run(cypher!("container_stats").param("ids", distinct(ids))).await?;
    out.rows
        .iter()
        .map(|row| {
            Ok(ContainerStats {
                container_id: out.get(row, "container_id")?,
                field_count: out.get(row, "field_count")?,
                linked_field_count: out.get(row, "linked_field_count")?,
            })
        })
        .collect()
}

pub(super) async fn field_counts(mut db: impl Run, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let out = db.run(cypher!("field_counts").param("ids", distinct(ids))).await?;
    out.rows.iter().map(|row| Ok((out.get(row, "container_id")?, out.get(row, "field_count")?))).collect()
}

pub(super) async fn fields_with_lineage(mut db: impl Run, ids: &[Id]) -> StoreResult<Vec<Id>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    db.run(cypher!("fields_with_lineage").param("ids", distinct(ids))).await?.column("id")
}

pub(super) async fn live_container_edge_exists(mut db: impl Run, source: Id, target: Id) -> StoreResult<bool> {
    db.run(cypher!("live_container_edge_exists").param("source", source).param("target", target)).await?.value("exists")
}
