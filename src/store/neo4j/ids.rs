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
//!
//! # Replicas and clusters
//!
//! - **The service is stateless.** It keeps no cache across requests, no sessions and no local files when it uses
//!   Neo4j; users, tokens and teams are in the store. Any number of replicas can serve behind a load balancer, over one
//!   Neo4j. `/readyz` tells the balancer whether a replica's store answers. The one piece of memory is the forwarding
//!   queue: each replica forwards the events it accepted, and what is still queued at exit is lost.
//! - **The embedded store is single-node.** It is one SQLite file on one machine. Another process on the same host,
//!   such as `export` while `serve` runs, is fine. Several machines sharing the file (for example over NFS) are not. To
//!   grow, move to Neo4j with `export`/`import`.
//! - **Ids come from the database, not from the replica.** On Neo4j, a `Counter` node per kind hands out ids in blocks:
//!   a process reserves 64 (twice the last block, up to 8,192, when the last ran out within 2 s; or as many as one write
//!   needs) in a short transaction of its own, on a connection of its
//!   own (`SET k.value = k.value + $count`), and hands them out from memory (`store/neo4j/ids.rs`, hi/lo). Neo4j's
//!   write lock on the counter makes concurrent replicas get disjoint blocks. The lock lives for that one statement:
//!   taken inside the writing transaction, as it was until the two-replica test caught it, it was held until commit (up
//!   to 2 s for an ingest session), every writer of a kind waited for every other, and a writer holding one counter
//!   while waiting for another's lock deadlocked, often enough that Neo4j's deadlock breaking outlasted the retries and
//!   a catalog write answered `UNAVAILABLE`. The price: ids have gaps (a rolled-back write and a stopped process do not
//!   give theirs back) and order rows by creation within one process, not across replicas. Counters never go back while
//!   the data stays (an import only raises them past the imported ids), so a block a process holds is never handed out
//!   again.
//! - **What the replicas share, and how they stay consistent.** Everything lives in Neo4j: the catalog, edges,
//!   evidence, the event log, users, tokens, teams, the id counters and the change log. A replica holds nothing another
//!   replica needs. Two things keep concurrent writers consistent, and both are Neo4j write locks, not coordination
//!   between replicas:
//!   - *Ids* come from the `Counter` nodes (above). Upserts `MERGE` a datastore, container or field on its unique key
//!     (`:Datastore {name}`, `:Container {key}`, `:Field {key}`, each under a uniqueness constraint, which makes
//!     `MERGE` race-free: the second waits for the first and matches its node), so the same table upserted through two
//!     replicas at once is one node with one id. The id the second took for it is left unused, a gap, never a
//!     duplicate.
//!   - *The change feed's order* comes from the `change` counter, taken by `record_changes` as the last statement of
//!     every lineage write, so positions are handed out in commit order across replicas (see "The change log" above),
//!     and every replica pages the same log.
//!   - *Events* are deduplicated by fingerprint under a uniqueness constraint, so the same event sent to two replicas
//!     is stored once and applied once.
//!   - Neo4j breaks deadlocks between writers (two events of one job through two replicas) by failing one transaction
//!     with a transient error, which the store runs again (`store/neo4j/retry.rs`, counted in
//!     `tributary_store_retries_total`).
//!   - Replicas starting at once on an empty database race to create the schema; a `CREATE ... IF NOT EXISTS` that
//!     loses that race is taken as the rule being there (`store/neo4j/schema.rs`).
//!
//! `tests/replicas.rs` checks this with two real `serve` processes on the suite's Neo4j: OpenLineage batches and
//! id-allocating mutations (datastore and container upserts, SQL imports, manual edges) through both at once, with one
//! job's events split across them, one edge asserted through both, one event sent to both. It asserts that no ids
//! collide (datastores, containers, fields, edges, events, operations, change positions), that the stored events are
//! exactly the acknowledged ones, each applied once with one evidence per (edge, job), and that both replicas answer
//! `edges`, `lineageGraph`, `impact` and the change feed alike.
//! - **Where one Neo4j still serializes.** Adding replicas adds HTTP, GraphQL and resolver CPU; it does not add
//!   database capacity, and every write still goes to one Neo4j:
//!   - *The id counters*: one `Counter` node per kind, write-locked for one short statement each time a process
//!     reserves a block of ids.
//!   - *The change-log counter*: every lineage write takes it last and holds it through commit, so lineage commits are
//!     serialized across all replicas. This is the price of a gap-free feed.
//!   - *Per-job ordering*: the events of one job read and replace that job's evidence, so two of them at once (on one
//!     replica or two) contend on the same evidence nodes, and one waits or is retried after a deadlock.
//!
//! Measured on this 2-core machine, with Neo4j on the same box (BENCHMARKS.md, "Replicas over one Neo4j"; 30 s runs of
//! 24 readers and 8 writers of 10-event batches, three of each alternating, load average 27-38 from other builds): one
//! replica took 34.0 events/s and 147.5 reads/s (medians), two took 13.2 events/s (x0.39) and 177.6 reads/s (x1.20).
//! Neo4j's JVM used 115-147% of the two cores throughout, one `serve` 20-22%, each of two 12-15%: the database is the
//! limit, not the service. Conflicts were rare: one `DeadlockDetected` retry in the six runs (and 0-2 in the
//! two-replica test), so the writers lose time waiting on locks (the counters, then taken inside the writing
//! transaction, and the change log) rather than being retried. Why ingest fell: each replica's pool holds 16
//! connections, so one replica let at most 16 of the 32 clients' statements into Neo4j at once; two let all 32 in, the
//! readers took more of Neo4j's fixed CPU (reads went up) and the write transactions, which then held the counter locks
//! until commit, waited longer (an ingest batch's p50 went from 2.0-3.2 s to 5.9-6.4 s). With 16 clients, all of which
//! one replica admits, two replicas gave x0.86 events/s and x1.11 reads/s instead. With Neo4j on its own machine the
//! replicas' added read capacity is what scaling out buys; ingest is bounded by the one writer either way.
//! - **A Neo4j cluster.** Writes go to the leader of the database (a primary, in Neo4j 5's terms); every counter and
//!   the change log are ordinary nodes there, so all of the above holds unchanged, with the leader as the one writer.
//!   What a cluster adds is failover and read capacity: secondaries (read replicas) can answer the graph queries, which
//!   are most requests, while writes stay on the leader. Using them needs client-side routing: the driver reads the
//!   cluster's routing table (`neo4j://` URIs), sends writes to the leader and spreads reads marked as such
//!   (`execute_read`) over the readers, and follows a leader switch. A read on a secondary may lag the leader;
//!   read-your-writes across replicas then needs bookmarks.
//! - **Routing: the decision.** neo4rs 0.8 (ours) accepts a `neo4j://` URI but only logs that it does not implement
//!   client-side routing and connects to the one address given: against a single server that works (measured), against
//!   a cluster a write that reaches a follower fails. neo4rs 0.9.0-rc.11 with `unstable-bolt-protocol-impl-v2` routes
//!   `neo4j://` URIs: it fetched the routing table from the test server (which names itself), and reads, reads marked
//!   `execute_read` and a write transaction all worked. The same read statement by id, 8 clients, rounds interleaved,
//!   was 0.64-0.76x as fast through 0.9-rc with `neo4j://` as through 0.8 with `bolt://`, and 0.69-0.93x through 0.9-rc
//!   with `bolt://` (the load average was 20-25, so these ratios are rough). Moving costs little code: the driver is
//!   called in six places, all in `store/neo4j.rs` (connect, begin, a statement in a transaction, an auto-commit
//!   statement, commit, rollback), and `neo4rs` types appear in 13 files (31 mentions; `BoltType`, `Row`, `Txn`,
//!   `Error`). But 0.9 is a release candidate behind a feature its authors call unstable, and it was slower here.
//!   **Decision: no routing for now; the gap is documented.** A cluster deployment points every replica's `bolt://` URI
//!   at the leader (reads and writes both go there) or at a routing-capable Bolt proxy. What closes the gap: neo4rs
//!   0.9.0 stable with routing out of its unstable feature, then a `neo4j://` option whose graph reads (`AutoCommit` in
//!   `store/neo4j.rs`) go through `execute_read` and whose writes carry bookmarks, tested against a cluster of at least
//!   three servers, which this machine cannot hold.
//! - **What is tested:** both stores against the one behaviour suite, with Neo4j as a single 5.26 Community instance,
//!   and two replicas writing and reading at once over it (`tests/replicas.rs`).
//! - **What is not tested:** clusters, routing, failover, and read replicas. These are a design, not a verified
//!   property.

use std::collections::HashMap;

use neo4rs::Graph;
use tokio::sync::Mutex;

use super::rows::{list, map};
use super::{count, db_error, detached, exec, finish, retry, Cmd};
use crate::domain::Id;
use crate::store::{StoreError, StoreResult};

/// Ids a process takes from a counter at once (more when one write wants more): few enough that
/// a process's end wastes little, enough that one write in this many reserves.
const BLOCK: usize = 64;

/// The largest block: a counter whose block ran out less than `GROW_WITHIN` after it was taken
/// gets one twice as large next time, up to this. A chunk of 1,000 OpenLineage events makes
/// about 10,000 edges and evidence rows, which took 80 reservations at 64 and takes 8 now; an
/// idle process falls back to `BLOCK`, so what its end wastes stays small.
const MAX_BLOCK: usize = 8_192;
const GROW_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Ids held for one counter: `next..end` not handed out yet, and the last block's size and time.
#[derive(Clone, Copy)]
struct Held {
    next: Id,
    end: Id,
    block: usize,
    taken: std::time::Instant,
}

/// The ids this process holds, per counter.
pub(super) struct Ids {
    /// A pool of its own (one connection): reserving never waits for a connection a writing
    /// transaction holds while that transaction waits for its ids.
    graph: Graph,
    held: Mutex<HashMap<&'static str, Held>>,
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
            let (last, wanted) = (held.get(name).copied(), count(n)?);
            if last.is_none_or(|h| h.end - h.next < wanted) {
                let block = match last {
                    Some(h) if h.taken.elapsed() < GROW_WITHIN => (h.block * 2).min(MAX_BLOCK),
                    _ => BLOCK,
                };
                short.push((name, n.max(block)));
            }
        }
        if !short.is_empty() {
            let firsts = reserve(&self.graph, &short).await?;
            for &(name, n) in &short {
                let first = firsts
                    .get(name)
                    .copied()
                    .ok_or_else(|| StoreError::Internal(format!("no id block reserved for {name}")))?;
                let block = Held { next: first, end: first + count(n)?, block: n, taken: std::time::Instant::now() };
                held.insert(name, block);
            }
        }
        let mut firsts = HashMap::new();
        for &(name, n) in wants.iter().filter(|(_, n)| *n > 0) {
            let Some(block) = held.get_mut(name) else { continue };
            firsts.insert(name.to_string(), block.next);
            block.next += count(n)?;
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
