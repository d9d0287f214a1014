//! What lies beyond a traversal's frontier on Neo4j: per node, how many distinct neighbours one
//! way are not in the answer, counted in one auto-commit statement (`COUNT {}` subqueries, no
//! edge is returned).

use super::{distinct, Cmd, Run};
use crate::domain::{Direction, Id};
use crate::store::StoreResult;

pub(super) async fn count_neighbours(
    mut db: impl Run,
    ids: &[Id],
    direction: Direction,
    over_fields: bool,
    exclude: &[Id],
) -> StoreResult<Vec<(Id, i64)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let cmd = match (over_fields, direction) {
        (false, Direction::Upstream) => cypher!("container_neighbour_counts_upstream"),
        (false, Direction::Downstream) => cypher!("container_neighbour_counts_downstream"),
        (true, Direction::Upstream) => cypher!("field_neighbour_counts_upstream"),
        (true, Direction::Downstream) => cypher!("field_neighbour_counts_downstream"),
    };
    let out = db.run(cmd.param("ids", distinct(ids)).param("exclude", distinct(exclude))).await?;
    out.rows.iter().map(|row| Ok((out.get(row, "id")?, out.get(row, "beyond")?))).collect()
}
