//! Small documents in the embedded store (users, API tokens, teams): JSON values keyed by
//! (kind, key) in the `docs` table.

use rusqlite::{params, Connection, OptionalExtension};

use super::rows::json_col;
use super::{select_rows, sql_err, STORE};
use crate::metrics::store_query;
use crate::store::StoreResult;

pub(super) fn put_doc(tx: &Connection, kind: &str, key: &str, value: serde_json::Value) -> StoreResult<()> {
    store_query(STORE, "put_doc");
    tx.execute(
        "INSERT INTO docs (kind, key, value) VALUES (?1, ?2, ?3) ON CONFLICT(kind, key) DO UPDATE SET value = excluded.value",
        params![kind, key, value.to_string()],
    )
    .map_err(sql_err)?;
    Ok(())
}

pub(super) fn get_doc(c: &Connection, kind: &str, key: &str) -> rusqlite::Result<Option<serde_json::Value>> {
    store_query(STORE, "get_doc");
    let v: Option<Option<String>> = c
        .query_row("SELECT value FROM docs WHERE kind = ?1 AND key = ?2", params![kind, key], |r| r.get(0))
        .optional()?;
    json_col(v.flatten())
}

pub(super) fn list_docs(c: &Connection, kind: &str) -> rusqlite::Result<Vec<(String, serde_json::Value)>> {
    select_rows(c, "list_docs", "SELECT key, value FROM docs WHERE kind = ?1 ORDER BY key", params![kind], |r| {
        Ok((r.get::<_, String>(0)?, json_col(r.get(1)?)?.unwrap_or(serde_json::Value::Null)))
    })
}
