//! The change log on Neo4j: `:Change {position, at, kind, edge_id, field_id, container_a,
//! container_b, detail}` nodes, appended by every lineage write as the last statement of its
//! own transaction (`record_in`), read in position order, purged with the event retention, and
//! backfilled from the edges' history on a database made before it existed.
//!
//! Order across replicas: positions come from the `change` counter node, whose write lock
//! `record_changes` takes last and holds until its transaction commits, so positions are handed
//! out in commit order (see `cypher/record_changes.cypher`).

use chrono::{DateTime, Utc};
use neo4rs::BoltType;
use serde::Deserialize;

use super::rows::{list, map, ts, Decode};
use super::tx::Tx;
use super::{exec, Cmd, Run};
use crate::domain::{changes::edge_history, Change, ChangeKind, Id, NewChange, Timestamp};
use crate::store::{StoreError, StoreResult};

fn change_row(c: &NewChange) -> BoltType {
    map([
        ("at", ts(&c.at).into()),
        ("kind", c.kind.as_str().into()),
        ("edge_id", c.edge_id.into()),
        ("field_id", c.field_id.into()),
        ("container_a", c.container_a().into()),
        ("container_b", c.container_b().into()),
        ("detail", c.detail.as_ref().map(|d| d.to_string()).into()),
    ])
}

/// Appends the changes in the caller's transaction. Must be the transaction's last statement
/// (see the module's note on order); nothing is sent for no changes. In a session call they
/// wait for the session's end (`Tx::defer_changes`), which appends them last.
pub(super) async fn record_in(txn: &mut Tx<'_>, changes: &[NewChange]) -> StoreResult<()> {
    if changes.is_empty() || txn.defer_changes(changes) {
        return Ok(());
    }
    let rows = changes.iter().map(change_row).collect();
    exec(txn, cypher!("record_changes").param("rows", list(rows))).await.map(|_| ())
}

#[derive(Deserialize)]
pub(super) struct ChangeProps {
    position: Id,
    at: String,
    kind: String,
    edge_id: Option<Id>,
    field_id: Option<Id>,
    container_a: Option<Id>,
    container_b: Option<Id>,
    detail: Option<String>,
}

impl Decode for ChangeProps {
    type Out = Change;

    fn decode(self) -> StoreResult<Change> {
        let bad = |what: String| StoreError::Internal(format!("bad change {} in neo4j: {what}", self.position));
        let at = DateTime::parse_from_rfc3339(&self.at).map_err(|e| bad(e.to_string()))?.with_timezone(&Utc);
        let kind = ChangeKind::parse(&self.kind).ok_or_else(|| bad(format!("kind {}", self.kind)))?;
        Ok(Change {
            position: self.position,
            change: NewChange {
                at,
                kind,
                edge_id: self.edge_id,
                field_id: self.field_id,
                container_ids: [self.container_a, self.container_b],
                detail: self.detail.and_then(|d| serde_json::from_str(&d).ok()),
            },
        })
    }
}

pub(super) async fn changes_after(
    mut db: impl Run,
    after: Id,
    first: i64,
    container_id: Option<Id>,
) -> StoreResult<Vec<Change>> {
    let cmd = match container_id {
        Some(id) => cypher!("changes_after_of_container").param("container_id", id),
        None => cypher!("changes_after"),
    };
    db.run(cmd.param("after", after).param("first", first)).await?.decode::<ChangeProps>("change")
}

pub(super) async fn latest_position(mut db: impl Run) -> StoreResult<Id> {
    db.run(cypher!("latest_change_position")).await?.value("position")
}

pub(super) async fn purge(mut db: impl Run, before: Timestamp) -> StoreResult<u64> {
    let n: i64 = db.run(cypher!("purge_changes").param("before", ts(&before))).await?.value("deleted")?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Claims the change log (see `claim_change_log`) and, when this call created it, records what
/// the edges' own history tells, oldest first; returns how many changes were backfilled.
pub(super) async fn claim_and_backfill(txn: &mut Tx<'_>) -> StoreResult<usize> {
    let todo: bool = exec(txn, cypher!("claim_change_log")).await?.value("todo")?;
    if !todo {
        return Ok(0);
    }
    let edges = exec(txn, cypher!("export_edges")).await?.decode::<super::rows::EdgeProps>("edge")?;
    let mut changes: Vec<NewChange> = edges.iter().flat_map(edge_history).collect();
    changes.sort_by_key(|c| (c.at, c.edge_id));
    // In slices, so no one statement carries the whole history.
    for chunk in changes.chunks(10_000) {
        record_in(txn, chunk).await?;
    }
    Ok(changes.len())
}
