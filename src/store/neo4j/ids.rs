//! Ids on Neo4j: each kind has a `:Counter {name, value}` node, and a process takes ids from it
//! in blocks, each in a short transaction of its own on a connection of its own, then hands them
//! out from memory (hi/lo, as Hibernate's pooled sequences do).
//!
//! Why not in the writing transaction: advancing a counter write-locks its node until the
//! transaction ends, so every writer of that kind of id waited for every other, and a writer
//! holding one counter while waiting for another's lock (or for an edge another writer held)
//! deadlocked. An ingest session holds its transaction for up to two seconds, and two `serve`
//! replicas failed each other's catalog writes with `UNAVAILABLE` once Neo4j's deadlock breaking
//! outlasted the retries. Now a counter's lock lives for one statement, and most writes take no
//! lock on a counter at all.
//!
//! What it costs: ids are unique but not gap-free. A rolled-back write does not return its ids,
//! a block a process had not used by its end is never handed out, and two replicas hand out
//! interleaved blocks, so ids order the rows of one process by creation but not across
//! replicas. A counter never goes back while the data stays (an import only raises it), so a
//! block a running process holds never overlaps one the database hands out later; `wipe` deletes
//! the counters with everything else and forgets the store's own blocks.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use neo4rs::Graph;
use tokio::sync::Mutex;

use super::rows::{list, map};
use super::{count, db_error, detached, exec, finish, retry, Cmd};
use crate::domain::Id;
use crate::store::{StoreError, StoreResult};

/// Ids a process takes from a counter at once (more when one write wants more): few enough that
/// a process's end wastes little, enough that one write in this many reserves.
const BLOCK: usize = 64;

/// The ids this process holds, per counter: `next..end` not handed out yet.
pub(super) struct Ids {
    /// A pool of its own (one connection): reserving never waits for a connection a writing
    /// transaction holds while that transaction waits for its ids.
    graph: Graph,
    held: Mutex<HashMap<&'static str, (Id, Id)>>,
}

tokio::task_local! {
    /// The store's ids, for the `allocate` calls of the write running on this task.
    static IDS: Arc<Ids>;
}

/// Runs `work` (a store write) with `ids` as where its `allocate` calls take ids from.
pub(super) async fn scoped<F: Future>(ids: Arc<Ids>, work: F) -> F::Output {
    IDS.scope(ids, work).await
}

/// The store's ids when a write runs on this task (see `scoped`).
pub(super) fn current() -> Option<Arc<Ids>> {
    IDS.try_with(Arc::clone).ok()
}

impl Ids {
    pub(super) fn new(graph: Graph) -> Ids {
        Ids { graph, held: Mutex::default() }
    }

    /// Drops the held ids (the counters were deleted: see `Neo4jStore::wipe`).
    pub(super) async fn forget(&self) {
        self.held.lock().await.clear();
    }

    /// The first id of a block of `n` consecutive ids per `(counter, n)` (counters distinct),
    /// reserving in one short transaction for the counters whose held ids do not suffice.
    pub(super) async fn take(&self, wants: &[(&'static str, usize)]) -> StoreResult<HashMap<String, Id>> {
        let mut held = self.held.lock().await;
        let mut short = Vec::new();
        for &(name, n) in wants.iter().filter(|(_, n)| *n > 0) {
            let (next, end) = held.get(name).copied().unwrap_or((0, 0));
            if end - next < count(n)? {
                short.push((name, n.max(BLOCK)));
            }
        }
        if !short.is_empty() {
            let firsts = reserve(&self.graph, &short).await?;
            for &(name, n) in &short {
                let first = firsts
                    .get(name)
                    .copied()
                    .ok_or_else(|| StoreError::Internal(format!("no id block reserved for {name}")))?;
                held.insert(name, (first, first + count(n)?));
            }
        }
        let mut firsts = HashMap::new();
        for &(name, n) in wants.iter().filter(|(_, n)| *n > 0) {
            let Some(block) = held.get_mut(name) else { continue };
            firsts.insert(name.to_string(), block.0);
            block.0 += count(n)?;
        }
        Ok(firsts)
    }
}

/// Advances each counter by its count in a transaction of its own (run again on a transient
/// error, run to its end whoever waits: see `detached`); the first id of each block by name.
async fn reserve(graph: &Graph, blocks: &[(&'static str, usize)]) -> StoreResult<HashMap<String, Id>> {
    let mut rows = Vec::new();
    for (name, n) in blocks {
        rows.push(map([("name", (*name).into()), ("count", count(*n)?.into())]));
    }
    let graph = graph.clone();
    detached(async move {
        retry::transient(|| async {
            let mut txn = graph.start_txn().await.map_err(|e| db_error("begin", e))?;
            let result = exec(&mut txn, cypher!("allocate_ids").param("rows", list(rows.clone()))).await;
            let out = finish(txn, result).await?;
            let names: Vec<String> = out.column("name")?;
            let firsts: Vec<Id> = out.column("first")?;
            Ok(names.into_iter().zip(firsts).collect())
        })
        .await
    })
    .await
}
