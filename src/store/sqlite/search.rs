//! Search in the embedded store (`service::search`): containers by qualified name (ranked by
//! it or by the name alone, whichever matches better), fields by
//! `table.column`, external assets by fqn, each a case-insensitive substring scan ranked in SQL
//! (exact, then prefix, then the rest; shorter first). A scan, not an index: a substring of a
//! qualified name has no index to seek, and a search box asks for a few dozen hits.

use rusqlite::{params, Connection};

use super::rows::{container_row, field_row, id_array, CONTAINER_COLS, FIELD_COLS};
use super::select_rows;
use crate::domain::{Container, Field, Id};

/// `database.schema.name` of a `containers` row as SQL, lowercased (`domain::container_key`:
/// empty parts left out).
const QUALIFIED: &str =
    "unicode_lower(coalesce(nullif(c.database, '') || '.', '') || coalesce(nullif(c.schema, '') || '.', '') || c.name)";

fn in_datastores(datastores: Option<&[Id]>) -> &'static str {
    if datastores.is_some() {
        " AND c.datastore_id IN rarray(?3)"
    } else {
        ""
    }
}

pub(super) fn search_containers(
    conn: &Connection,
    needle: &str,
    datastores: Option<&[Id]>,
    limit: usize,
) -> rusqlite::Result<Vec<Container>> {
    let cols = CONTAINER_COLS.split(", ").map(|c| format!("c.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT {cols} FROM (SELECT c.*, {QUALIFIED} AS q FROM containers AS c WHERE c.deleted = 0{}) AS c
         WHERE instr(c.q, ?1) > 0
         ORDER BY CASE WHEN c.q = ?1 OR unicode_lower(c.name) = ?1 THEN 0
                       WHEN instr(c.q, ?1) = 1 OR instr(unicode_lower(c.name), ?1) = 1 THEN 1 ELSE 2 END,
                  length(c.q), c.q, c.id
         LIMIT ?2",
        in_datastores(datastores)
    );
    let limit = limit as i64;
    match datastores {
        Some(ds) => select_rows(conn, "search_containers", &sql, params![needle, limit, id_array(ds)], container_row),
        None => select_rows(conn, "search_containers", &sql, params![needle, limit], container_row),
    }
}

pub(super) fn search_fields(
    conn: &Connection,
    needle: &str,
    datastores: Option<&[Id]>,
    limit: usize,
) -> rusqlite::Result<Vec<Field>> {
    let cols = FIELD_COLS.split(", ").map(|c| format!("f.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT {cols} FROM (
           SELECT f.*, unicode_lower(c.name || '.' || f.name) AS short, {QUALIFIED} || '.' || unicode_lower(f.name) AS q
           FROM fields AS f JOIN containers AS c ON c.id = f.container_id
           WHERE f.deleted = 0 AND c.deleted = 0{}) AS f
         WHERE instr(f.q, ?1) > 0
         ORDER BY CASE WHEN f.short = ?1 OR f.q = ?1 THEN 0 WHEN instr(f.short, ?1) = 1 OR instr(f.q, ?1) = 1 THEN 1 ELSE 2 END,
                  length(f.short), f.q, f.id
         LIMIT ?2",
        in_datastores(datastores)
    );
    let limit = limit as i64;
    match datastores {
        Some(ds) => select_rows(conn, "search_fields", &sql, params![needle, limit, id_array(ds)], field_row),
        None => select_rows(conn, "search_fields", &sql, params![needle, limit], field_row),
    }
}

pub(super) fn search_externals(
    conn: &Connection,
    needle: &str,
    limit: usize,
) -> rusqlite::Result<Vec<(String, String)>> {
    let sql = "SELECT fqn, source_type FROM (
                 SELECT source_fqn AS fqn, source_type FROM edges WHERE source_kind = 'x' AND retired_at IS NULL
                 UNION
                 SELECT target_fqn AS fqn, source_type FROM edges WHERE target_kind = 'x' AND retired_at IS NULL)
               WHERE instr(unicode_lower(fqn), ?1) > 0
               ORDER BY CASE WHEN unicode_lower(fqn) = ?1 THEN 0 WHEN instr(unicode_lower(fqn), ?1) = 1 THEN 1 ELSE 2 END,
                        length(fqn), fqn, source_type
               LIMIT ?2";
    select_rows(conn, "search_externals", sql, params![needle, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))
}
