//! The change feed: `changes` pages through the store's change log with an opaque cursor, and
//! `follow_changes` is the stream behind the `lineageChanged` subscription.
//!
//! The feed is read from the store, never from this process's memory, so every replica on one
//! Neo4j sees every change, and a client that was away catches up from its cursor. A follower
//! polls the log (`POLL_INTERVAL`, at most `POLL_BATCH` changes a read) and keeps the changes
//! that touch a container within `depth` of its start, by the same traversal as `lineageGraph`;
//! a follower more than `MAX_BACKLOG` changes behind the log's head is told so, with the cursor
//! to resume from, and its stream ends.
//!
//! # How it fits
//!
//! (`domain::changes`, `store/*/changes.rs`, `service::changes`, `api::schema::changes`, `api::subscriptions`). Every
//! store write that changes lineage appends `NewChange`s (edge asserted, retired, revived, relabelled, deleted;
//! container or field created, dropped, each with the containers it touches) in the same transaction as the change, so
//! a change is in the log if and only if it committed. Positions must be unique and increasing in commit order, or a
//! reader paging "after X" could miss a change that commits later with a smaller position. The embedded store gets this
//! for free: positions are `AUTOINCREMENT` row ids given inside the one writer's transaction. On Neo4j, where replicas
//! write concurrently, positions come from the `:Counter {name: 'change'}` node, and `record_changes` is always the
//! last statement of its transaction: its write lock on the counter is held until commit, so the writer holding
//! position `p` commits before anyone can take `p + 1`, and a reader who has seen `p + 1` can never later see `p`
//! appear. The cost is that lineage writers serialize on that node for their final statement and commit only. (The
//! alternative, reading only up to a watermark of committed positions, needs a second structure and a way to tell a
//! slow commit from a rolled-back one.) `migrate_change_log` (each store's `schema.rs`) creates the table or labels at
//! open and, when this open created them, backfills the edges' history (`edge_history`) in the same transaction; on
//! Neo4j the counter's creation is the claim, so replicas starting together backfill once, and a log emptied by
//! retention is never backfilled again. `spawn_retention` purges changes with events. `changes` pages with an opaque
//! cursor (`base64url("change:<p>")`). The `lineageChanged` subscription is a poller over the store's log, never an
//! in-process channel, so every replica sees every change: each read takes at most 500 changes after its cursor,
//! recomputes the container's neighbourhood with `lineage_graph` when there are any, and keeps the changes touching a
//! container in it before or after; past 10,000 behind the head it sends `FELL_BEHIND` with its cursor and ends. `GET
//! /graphql` with a websocket upgrade runs it (`graphql-transport-ws`); the token comes from `connection_init`, a
//! refusal closes with 4401 or 4403, and the connection's `Loaders` are emptied before each change so no cache outlives
//! it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use futures_util::Stream;

use super::{validate_depth, Lineage, MAX_PAGE_SIZE};
use crate::domain::{Change, Edge, Id};
use crate::error::{Error, Result};

/// How often a follower looks at the log when it has nothing to send.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// Changes one poll reads at most.
pub const POLL_BATCH: i64 = 500;
/// How far behind the log's head a follower may fall before it is told to resume from its cursor.
pub const MAX_BACKLOG: i64 = 10_000;

/// Cursors are `base64url("change:<position>")`: opaque to clients, stable across restarts and
/// replicas (a position is the store's).
pub fn encode_cursor(position: Id) -> String {
    URL_SAFE_NO_PAD.encode(format!("change:{position}"))
}

/// The position of a cursor `encode_cursor` made; anything else is `BAD_USER_INPUT` naming it.
pub fn decode_cursor(argument: &str, cursor: &str) -> Result<Id> {
    let bad = || {
        Error::BadInput(format!(
            "{argument}: {cursor:?} is not a change cursor (pass back a `cursor` or `endCursor` this service returned)"
        ))
    };
    let bytes = URL_SAFE_NO_PAD.decode(cursor.trim_end_matches('=')).map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let position: Id = text.strip_prefix("change:").and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    if position < 0 {
        return Err(bad());
    }
    Ok(position)
}

/// A change with its edge as it is now (`None` when the change is not an edge's, or the edge
/// was deleted).
#[derive(Debug, Clone)]
pub struct ChangeItem {
    pub change: Change,
    pub edge: Option<Edge>,
}

impl ChangeItem {
    pub fn cursor(&self) -> String {
        encode_cursor(self.change.position)
    }
}

#[derive(Debug, Clone)]
pub struct ChangePage {
    pub items: Vec<ChangeItem>,
    /// Where the next page starts: the last item's cursor, or the one given when there is none.
    pub end_cursor: String,
    pub has_more: bool,
}

/// What a follower's stream carries.
#[derive(Debug, Clone)]
pub enum Followed {
    Change(Box<ChangeItem>),
    /// The follower fell more than `MAX_BACKLOG` changes behind; it resumes from `cursor`
    /// (every change up to it that concerned it was sent). The stream ends after this.
    Behind {
        cursor: String,
        backlog: i64,
    },
}

impl Lineage {
    /// A page of the change log after `after` (from the start without it), oldest first.
    pub async fn changes(&self, after: Option<&str>, first: i64, container_id: Option<Id>) -> Result<ChangePage> {
        if !(1..=MAX_PAGE_SIZE).contains(&first) {
            return Err(Error::BadInput(format!("first must be between 1 and {MAX_PAGE_SIZE}, got {first}")));
        }
        let position = after.map(|a| decode_cursor("after", a)).transpose()?.unwrap_or(0);
        let mut changes = self.store.changes_after(position, first + 1, container_id).await?;
        let has_more = changes.len() as i64 > first;
        changes.truncate(first as usize);
        let items = self.with_edges(changes).await?;
        let end_cursor = items.last().map(ChangeItem::cursor).unwrap_or_else(|| encode_cursor(position));
        Ok(ChangePage { items, end_cursor, has_more })
    }

    /// Attaches each change's edge, in one store read for them all.
    async fn with_edges(&self, changes: Vec<Change>) -> Result<Vec<ChangeItem>> {
        let ids: Vec<Id> = changes.iter().filter_map(|c| c.change.edge_id).collect();
        let edges: HashMap<Id, Edge> = if ids.is_empty() {
            HashMap::new()
        } else {
            self.store.edges_by_ids(&ids).await?.into_iter().map(|e| (e.id, e)).collect()
        };
        Ok(changes
            .into_iter()
            .map(|change| {
                let edge = change.change.edge_id.and_then(|id| edges.get(&id).cloned());
                ChangeItem { change, edge }
            })
            .collect())
    }

    /// The containers within `depth` of `container_id`, both sides, as `lineageGraph` finds them.
    async fn scope(&self, container_id: Id, depth: i64) -> Result<HashSet<Id>> {
        let graph = self.lineage_graph(container_id, depth, None).await?;
        Ok(graph.nodes.iter().map(|n| n.container_id).collect())
    }

    /// The stream of `lineageChanged`: the changes after `after` (after the log's head now
    /// without it) that touch a container within `depth` of `container_id`, as they commit.
    /// Checks its arguments (and that the container exists) before the stream starts.
    pub async fn follow_changes(
        &self,
        container_id: Id,
        depth: i64,
        after: Option<&str>,
    ) -> Result<impl Stream<Item = Result<Followed>> + Send + 'static> {
        validate_depth(depth)?;
        let cursor = match after {
            Some(a) => decode_cursor("after", a)?,
            None => self.store.latest_change_position().await?,
        };
        let scope = self.scope(container_id, depth).await?;
        tracing::info!(container_id, depth, cursor, "change follower started");
        let state =
            Follower { lineage: self.clone(), container_id, depth, cursor, scope, queue: VecDeque::new(), done: false };
        Ok(futures_util::stream::unfold(state, |mut f| async move {
            let next = f.next().await;
            next.map(|item| (item, f))
        }))
    }
}

struct Follower {
    lineage: Lineage,
    container_id: Id,
    depth: i64,
    /// The last position read (sent or not of interest).
    cursor: Id,
    /// The containers in scope at the last read.
    scope: HashSet<Id>,
    /// Changes read and kept, not sent yet.
    queue: VecDeque<ChangeItem>,
    done: bool,
}

impl Follower {
    async fn next(&mut self) -> Option<Result<Followed>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(Ok(Followed::Change(Box::new(item))));
            }
            if self.done {
                return None;
            }
            match self.poll().await {
                Ok(Some(behind)) => {
                    self.done = true;
                    return Some(Ok(behind));
                }
                Ok(None) => {}
                Err(e) => {
                    // A store error ends the stream with it; the client resumes from its cursor.
                    tracing::warn!(error = %e.message(), container_id = self.container_id, "change follower stopped");
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }

    /// One read of the log: queues what concerns the follower and advances the cursor, or
    /// waits a poll interval when nothing is new. `Some` when the follower fell behind.
    async fn poll(&mut self) -> Result<Option<Followed>> {
        let store = &self.lineage.store;
        let changes = store.changes_after(self.cursor, POLL_BATCH, None).await?;
        if changes.is_empty() {
            tokio::time::sleep(POLL_INTERVAL).await;
            return Ok(None);
        }
        if changes.len() as i64 == POLL_BATCH {
            let backlog = store.latest_change_position().await? - self.cursor;
            if backlog > MAX_BACKLOG {
                let cursor = encode_cursor(self.cursor);
                tracing::warn!(container_id = self.container_id, backlog, cursor = %cursor, "change follower fell behind");
                return Ok(Some(Followed::Behind { cursor, backlog }));
            }
        }
        // What was in scope before these changes or is now: a retirement that takes a container
        // out of the lineage is still news to the follower.
        let before = std::mem::take(&mut self.scope);
        self.scope = match self.lineage.scope(self.container_id, self.depth).await {
            Ok(now) => now,
            // The container itself was dropped: the last scope stays the follower's.
            Err(Error::NotFound(_)) => before.clone(),
            Err(e) => return Err(e),
        };
        if let Some(last) = changes.last() {
            self.cursor = last.position;
        }
        let kept: Vec<Change> = changes
            .into_iter()
            .filter(|c| c.containers().any(|id| before.contains(&id) || self.scope.contains(&id)))
            .collect();
        self.queue.extend(self.lineage.with_edges(kept).await?);
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_anything_else_is_refused() {
        for p in [0, 1, 41, i64::MAX] {
            assert_eq!(decode_cursor("after", &encode_cursor(p)).ok(), Some(p));
        }
        for bad in ["", "42", "!!", &URL_SAFE_NO_PAD.encode("change:-1"), &URL_SAFE_NO_PAD.encode("edge:3")] {
            let e = decode_cursor("after", bad).expect_err("refused");
            assert_eq!(e.code(), "BAD_USER_INPUT");
            assert!(e.message().starts_with("after: "), "{}", e.message());
        }
    }
}
