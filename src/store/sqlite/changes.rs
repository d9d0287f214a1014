//! The change log in the embedded store: the `changes` table, written by every lineage write in
//! its own transaction (`record`), read in position order (`changes_after`), purged with the
//! event retention, and backfilled from the edges' history on a store made before it existed.
//!
//! Order: positions are `AUTOINCREMENT` row ids handed out inside the writer's transaction, and
//! the store has one writer at a time (the `gate`), so position order is commit order: a reader
//! that has seen position `p` can never later see a change below `p` commit.

use rusqlite::{params, Connection, Row};

use super::rows::{json_text, parse_ts, ts};
use super::{internal, select_rows, sql_err, STORE};
use crate::domain::{Change, ChangeKind, Id, NewChange, Timestamp};
use crate::metrics::store_query;
use crate::store::StoreResult;

const COLS: &str = "position, at, kind, edge_id, field_id, container_a, container_b, detail";

/// Appends the changes, in order, in the caller's transaction.
pub(super) fn record(tx: &Connection, changes: &[NewChange]) -> StoreResult<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let mut stmt = tx
        .prepare_cached(
            "INSERT INTO changes (at, kind, edge_id, field_id, container_a, container_b, detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(sql_err)?;
    for c in changes {
        store_query(STORE, "record_change");
        stmt.execute(params![
            ts(&c.at),
            c.kind.as_str(),
            c.edge_id,
            c.field_id,
            c.container_a(),
            c.container_b(),
            c.detail.as_ref().map(json_text)
        ])
        .map_err(sql_err)?;
    }
    Ok(())
}

fn change_row(r: &Row) -> rusqlite::Result<Change> {
    let kind: String = r.get(2)?;
    let kind = ChangeKind::parse(&kind).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, format!("change kind {kind}").into())
    })?;
    let detail: Option<String> = r.get(7)?;
    Ok(Change {
        position: r.get(0)?,
        change: NewChange {
            at: parse_ts(Some(r.get(1)?))?.unwrap_or_default(),
            kind,
            edge_id: r.get(3)?,
            field_id: r.get(4)?,
            container_ids: [r.get(5)?, r.get(6)?],
            detail: detail.and_then(|d| serde_json::from_str(&d).ok()),
        },
    })
}

pub(super) fn changes_after(
    c: &Connection,
    after: Id,
    first: i64,
    container: Option<Id>,
) -> rusqlite::Result<Vec<Change>> {
    match container {
        None => select_rows(
            c,
            "changes_after",
            &format!("SELECT {COLS} FROM changes WHERE position > ?1 ORDER BY position LIMIT ?2"),
            params![after, first],
            change_row,
        ),
        // One index range per column (a change has a container at most once), each bounded.
        Some(id) => select_rows(
            c,
            "changes_after_of_container",
            &format!(
                "SELECT * FROM (SELECT {COLS} FROM changes WHERE container_a = ?3 AND position > ?1 ORDER BY position LIMIT ?2)
                 UNION ALL
                 SELECT * FROM (SELECT {COLS} FROM changes WHERE container_b = ?3 AND position > ?1 ORDER BY position LIMIT ?2)
                 ORDER BY position LIMIT ?2"
            ),
            params![after, first, id],
            change_row,
        ),
    }
}

pub(super) fn latest_position(c: &Connection) -> rusqlite::Result<Id> {
    store_query(STORE, "latest_change_position");
    c.query_row("SELECT coalesce(max(position), 0) FROM changes", [], |r| r.get(0))
}

pub(super) fn purge(tx: &Connection, before: Timestamp) -> StoreResult<u64> {
    store_query(STORE, "purge_changes");
    let n = tx.execute("DELETE FROM changes WHERE at < ?1", params![ts(&before)]).map_err(sql_err)?;
    Ok(n as u64)
}

/// `internal` for the schema step, which runs before the store exists.
pub(super) fn migrate_error(e: rusqlite::Error) -> crate::store::StoreError {
    internal(e)
}
