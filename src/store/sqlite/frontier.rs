//! What lies beyond a traversal's frontier on the embedded store: per node, how many distinct
//! neighbours one way are not in the answer. A count on the ends' indexes, never the edge rows:
//! it is what a partial answer adds to the traversal it reports on.

use rusqlite::{params, Connection};

use super::rows::{distinct_ids, id_array};
use super::STORE;
use crate::domain::{Direction, Id};
use crate::metrics::store_query;

pub(super) fn count_neighbours(
    c: &Connection,
    ids: &[Id],
    direction: Direction,
    over_fields: bool,
    exclude: &[Id],
) -> rusqlite::Result<Vec<(Id, i64)>> {
    // Column names only vary with the direction and kind; values travel as parameters.
    let (near, far) = match direction {
        Direction::Upstream => ("target", "source"),
        Direction::Downstream => ("source", "target"),
    };
    let (kind, far_kinds) = if over_fields { ("f", "('f')") } else { ("c", "('c', 'x')") };
    let op = if over_fields { "field_neighbour_counts" } else { "container_neighbour_counts" };
    store_query(STORE, op);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT k.value, (SELECT count(DISTINCT e.{far}_kind || ':' || coalesce(e.{far}_id, e.{far}_fqn))
           FROM edges e WHERE e.{near}_kind = '{kind}' AND e.{near}_id = k.value AND e.retired_at IS NULL
             AND e.{far}_kind IN {far_kinds}
             AND NOT (e.{far}_kind = '{kind}' AND e.{far}_id IN rarray(?2)))
         FROM rarray(?1) AS k"
    ))?;
    let rows = stmt.query_map(params![distinct_ids(ids), id_array(exclude)], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
