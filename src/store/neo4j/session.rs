//! The Neo4j store's session (`Store::session`): one explicit transaction held open across the
//! calls of a run of writes (a chunk of an OpenLineage request's events, a chunk of SQL), so
//! its statements pay neither a BEGIN and COMMIT each nor a commit's log flush each, and its
//! reads see its own writes. Every call of the session view runs in it, reads included
//! (`write_txn!` and `AutoCommit` look for it), one at a time.
//!
//! Neo4j has no savepoints, and a failed statement fails the whole transaction on the server:
//! so any failed call fails the session (it is rolled back, later calls and the commit are
//! refused), as an unguarded call does in the embedded store. A concurrent writer can fail it
//! too (a deadlock Neo4j breaks, a uniqueness race): `Store::session_conflicts` says so, and
//! the callers then run the work again without a session, where each write is retried alone.
//!
//! Reads of what the session has not written (the catalog while it creates no container, the
//! events' outcomes, written at its end) run beside it on the pool instead, side by side with
//! its own statements as before sessions (`Neo4jStore::beside`).
//!
//! The session also keeps its job and run updates (`jobs::JobsBuffer`): written at the commit,
//! or before any read of jobs in the session, one `UNWIND` statement per kind. And its metadata
//! values and change-log entries (`Deferred`): written at the commit, in the order its calls made
//! them, one statement each for the session instead of one per write (and the `change` counter's
//! lock taken at the session's end instead of at its first write), or before a read of them in
//! the session (`flush_deferred`).
//!
//! And its edges and evidence (`overlay::AssertionBuffer`): `apply_assertions` in a session folds
//! each batch into the edges it has met, in memory, and they are written at the commit, one
//! statement per kind, or before any other statement of the session that reads or writes edges
//! or evidence (`Session::exec` for a `Cmd` naming them, every `write_txn!`, the jobs' and the
//! deferred writes).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use neo4rs::Txn;
use tokio::sync::{Mutex, MutexGuard};

use super::assertions::put_metadata_in;
use super::changes::record_in;
use super::ids::Ids;
use super::jobs::JobsBuffer;
use super::overlay::AssertionBuffer;
use super::tx::{Deferred, Tx};
use super::{db_error, detached, exec, first_id, Cmd, Rows, EDGE_COUNTER};
use crate::domain::{AssertionBatch, AssertionSummary, Id, KnownRun, RunRecord, Timestamp};
use crate::store::{ChunkJobs, PriorEvidence, StoreError, StoreResult};

/// The session view's side of the store's calls (see `Neo4jStore::session`).
impl super::Neo4jStore {
    /// Whether a read of `kind` runs beside the session's transaction (on the pool, side by
    /// side with the session's own statements): on a session view that has written none of it.
    pub(super) fn beside(&self, kind: Beside) -> bool {
        self.session.as_ref().is_some_and(|s| s.untouched(kind))
    }

    /// Notes, on a session view, that a write of `kind` is about to run in it.
    pub(super) fn writes(&self, kind: Beside) {
        if let Some(s) = &self.session {
            s.writes(kind);
        }
    }

    /// On a session view, writes its buffered job and run updates, so a read of jobs sees them.
    pub(super) async fn flush_jobs(&self) -> StoreResult<()> {
        match &self.session {
            Some(session) => session.flush_jobs().await,
            None => Ok(()),
        }
    }

    /// On a session view, writes what its calls deferred, so a read of metadata values or of
    /// the change log sees them.
    pub(super) async fn flush_deferred(&self) -> StoreResult<()> {
        match &self.session {
            Some(session) => session.flush_deferred().await,
            None => Ok(()),
        }
    }
}

pub(super) enum State {
    /// Boxed: a `Txn` is over a kilobyte.
    Open(Box<Txn>),
    /// A call failed: rolled back; whether by the store's own trouble (then the calls refused
    /// after it are `Unavailable`, worth sending again), else `Internal`.
    Failed {
        unavailable: bool,
    },
    Committed,
}

/// The session's transaction and its job and run updates not written yet (`jobs::JobsBuffer`),
/// behind one lock: a call has both to itself.
pub(super) struct Inner {
    pub(super) state: State,
    pub(super) jobs: JobsBuffer,
    /// What the session's calls deferred, in order, not written yet.
    pub(super) deferred: Deferred,
    /// The edges and evidence the session met, and its assertions not written yet.
    assertions: AssertionBuffer,
    /// The store's session gate, held while the transaction is open: this process's sessions
    /// run one at a time, as the embedded store's do, so two never deadlock on each other's
    /// locks (the edges and datasets both write).
    gate: Option<tokio::sync::OwnedMutexGuard<()>>,
}

pub(super) struct Session {
    inner: Mutex<Inner>,
    /// Where its writes take new ids from (see `ids`).
    ids: Arc<Ids>,

    /// What the session wrote of what is read beside it (see `Neo4jStore::beside`): the
    /// catalog (datastores, containers, fields) and the events' outcomes.
    wrote_catalog: AtomicBool,
    wrote_events: AtomicBool,
}

/// A kind of row the session may read beside its transaction while it has not written any.
#[derive(Clone, Copy)]
pub(super) enum Beside {
    Catalog,
    Events,
}

impl Session {
    pub(super) fn new(txn: Txn, gate: tokio::sync::OwnedMutexGuard<()>, ids: Arc<Ids>) -> Session {
        Session {
            inner: Mutex::new(Inner {
                state: State::Open(Box::new(txn)),
                jobs: JobsBuffer::default(),
                deferred: Deferred::default(),
                assertions: AssertionBuffer::default(),
                gate: Some(gate),
            }),
            ids,
            wrote_catalog: AtomicBool::new(false),
            wrote_events: AtomicBool::new(false),
        }
    }

    /// Where the session's writes take new ids from.
    pub(super) fn ids(&self) -> &Ids {
        &self.ids
    }

    /// `record_run` in the session: into its job and run buffer (see `jobs::JobsBuffer`).
    pub(super) async fn record_run(&self, record: &RunRecord) -> StoreResult<()> {
        let mut inner = self.lock().await;
        let result = match open_with_jobs(&mut inner) {
            Ok((txn, jobs)) => jobs.record(&mut Tx::new(txn, &self.ids), record).await,
            Err(e) => Err(e),
        };
        settle(&mut inner, result)
    }

    /// Writes the buffered job and run updates, so a read of jobs in the session sees them.
    pub(super) async fn flush_jobs(&self) -> StoreResult<()> {
        let mut inner = self.lock().await;
        // The edges and evidence first: the jobs' evidence ties name them.
        flush_assertions(&mut inner).await?;
        let result = match open_with_jobs(&mut inner) {
            Ok((txn, jobs)) => jobs.flush(txn).await,
            Err(e) => Err(e),
        };
        settle(&mut inner, result)
    }

    /// `Store::look_up_runs` in the session: the chunk's jobs and runs looked up and locked in
    /// one statement into the session's buffer, and the runs answered from it.
    pub(super) async fn look_up_runs(&self, wanted: &ChunkJobs) -> StoreResult<Vec<(String, KnownRun)>> {
        let mut inner = self.lock().await;
        let result = match open_with_jobs(&mut inner) {
            Ok((txn, jobs)) => jobs.look_up_chunk(txn, wanted).await.map(|()| {
                wanted.run_ids.iter().map(|r| (r.clone(), jobs.known_run(r).unwrap_or_default())).collect::<Vec<_>>()
            }),
            Err(e) => Err(e),
        };
        settle(&mut inner, result)
    }

    /// `run_with_io` in the session: from its buffer when it met the run.
    pub(super) async fn known_run(&self, run_id: &str) -> Option<KnownRun> {
        self.lock().await.jobs.known_run(run_id)
    }

    fn flag(&self, kind: Beside) -> &AtomicBool {
        match kind {
            Beside::Catalog => &self.wrote_catalog,
            Beside::Events => &self.wrote_events,
        }
    }

    /// Notes a write of `kind` (before it runs: from then on its reads stay in the transaction).
    pub(super) fn writes(&self, kind: Beside) {
        self.flag(kind).store(true, Ordering::SeqCst);
    }

    /// Whether the session wrote none of `kind`, so a read of it outside the transaction
    /// answers what one inside would.
    pub(super) fn untouched(&self, kind: Beside) -> bool {
        !self.flag(kind).load(Ordering::SeqCst)
    }

    /// Waits for the session's transaction (one call at a time).
    pub(super) async fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().await
    }

    /// Runs one statement in the session's transaction, failing the session when it fails.
    pub(super) async fn exec(self: Arc<Self>, cmd: Cmd) -> StoreResult<Rows> {
        // Run to its end even when the caller stops waiting (see `detached`).
        detached(async move {
            let mut inner = self.lock().await;
            if cmd.lineage {
                flush_assertions(&mut inner).await?;
            }
            let result = match open(&mut inner) {
                Ok(txn) => exec(txn, cmd).await,
                Err(e) => return Err(e),
            };
            settle(&mut inner, result)
        })
        .await
    }

    /// `apply_assertions` in the session, with each assertion's edge id in batch order: folded
    /// into its buffer (see `overlay`); new edges take their ids from `ids`, the metadata values
    /// and change-log entries wait with the deferred.
    pub(super) async fn apply_assertions(
        self: Arc<Self>,
        batch: AssertionBatch,
        now: Timestamp,
    ) -> StoreResult<(AssertionSummary, Vec<Id>)> {
        detached(async move {
            let mut inner = self.lock().await;
            let inner = &mut *inner;
            let txn = match &mut inner.state {
                State::Open(txn) => &mut **txn,
                _ => return open(inner).map(|_| (AssertionSummary::default(), Vec::new())),
            };
            let mut changes = Vec::new();
            let ids = &self.ids;
            let new_ids =
                async |n: usize| -> StoreResult<Id> { first_id(&ids.take(&[(EDGE_COUNTER, n)]).await?, EDGE_COUNTER) };
            let result = inner.assertions.apply(txn, &batch, now, new_ids, &mut changes).await;
            if result.is_ok() {
                inner.deferred.metadata.extend(batch.metadata.iter().cloned());
                inner.deferred.changes.extend(changes);
            }
            settle(inner, result)
        })
        .await
    }

    /// `read_ahead_edges` in the session: into its buffer (see `overlay::AssertionBuffer::read_ahead`).
    pub(super) async fn read_ahead_edges(self: Arc<Self>, pairs: Vec<(Id, Id)>, ids: Vec<Id>) -> StoreResult<()> {
        detached(async move {
            let mut inner = self.lock().await;
            let inner = &mut *inner;
            let txn = match &mut inner.state {
                State::Open(txn) => &mut **txn,
                _ => return open(inner).map(|_| ()),
            };
            let result = inner.assertions.read_ahead(txn, &pairs, &ids).await;
            settle(inner, result)
        })
        .await
    }

    /// `live_evidence_of_keys` in the session: the stored rows with its buffer's over them, by
    /// key in the given order, then edge id.
    pub(super) async fn live_evidence_of_keys(self: Arc<Self>, keys: Vec<String>) -> StoreResult<Vec<PriorEvidence>> {
        detached(async move {
            let mut inner = self.lock().await;
            let inner = &mut *inner;
            let txn = match &mut inner.state {
                State::Open(txn) => &mut **txn,
                _ => return open(inner).map(|_| Vec::new()),
            };
            let stored = super::assertions::live_evidence_of_keys(&mut *txn, &keys).await;
            let result = stored.map(|rows| {
                let mut by_key: std::collections::HashMap<String, Vec<PriorEvidence>> =
                    std::collections::HashMap::new();
                for row in rows {
                    by_key.entry(row.key.clone()).or_default().push(row);
                }
                let mut seen = std::collections::HashSet::new();
                keys.iter()
                    .filter(|k| seen.insert(k.as_str()))
                    .flat_map(|k| inner.assertions.patch_prior(k, by_key.remove(k).unwrap_or_default()))
                    .collect()
            });
            settle(inner, result)
        })
        .await
    }

    /// Commits.
    pub(super) async fn commit(self: Arc<Self>) -> StoreResult<()> {
        detached(async move {
            let mut inner = self.lock().await;
            // The edges and evidence first (the jobs' evidence ties name them), then the buffered
            // job and run updates, the change log last (see `record_changes`).
            flush_assertions(&mut inner).await?;
            let flushed = match open_with_jobs(&mut inner) {
                Ok((txn, jobs)) => jobs.flush(txn).await,
                Err(e) => return Err(e),
            };
            settle(&mut inner, flushed)?;
            self.flush_deferred_in(&mut inner).await?;
            let State::Open(txn) = std::mem::replace(&mut inner.state, State::Committed) else {
                return Err(StoreError::Internal("the session's transaction vanished".into()));
            };
            let committed = (*txn).commit().await.map_err(|e| db_error("commit", e)).inspect_err(|e| {
                inner.state = State::Failed { unavailable: matches!(e, StoreError::Unavailable(_)) };
            });
            // Ended: the next session may begin while this view lingers.
            inner.gate.take();
            committed
        })
        .await
    }

    /// Writes what the session's calls deferred: the metadata values, then the change log (last,
    /// as everywhere: see `record_changes`).
    async fn flush_deferred_in(&self, inner: &mut Inner) -> StoreResult<()> {
        flush_assertions(inner).await?;
        let Deferred { metadata, changes } = std::mem::take(&mut inner.deferred);
        if metadata.is_empty() && changes.is_empty() {
            return Ok(());
        }
        let result = match open(inner) {
            Ok(txn) => {
                let tx = &mut Tx::new(txn, &self.ids);
                async {
                    put_metadata_in(tx, &metadata).await?;
                    record_in(tx, &changes).await
                }
                .await
            }
            Err(e) => Err(e),
        };
        settle(inner, result)
    }

    /// Writes what the session's calls deferred, so a read of metadata values or of the change
    /// log in it sees them.
    pub(super) async fn flush_deferred(&self) -> StoreResult<()> {
        self.flush_deferred_in(&mut *self.lock().await).await
    }
}

/// Writes the session's buffered assertions (see `overlay`), so a statement that reads or
/// writes edges or evidence sees them; nothing when none wait.
pub(super) async fn flush_assertions(inner: &mut Inner) -> StoreResult<()> {
    if inner.assertions.is_clean() {
        return Ok(());
    }
    let result = match &mut inner.state {
        State::Open(txn) => inner.assertions.flush(txn).await,
        _ => open(inner).map(|_| ()),
    };
    settle(inner, result)
}

/// The open transaction for a write the buffer does not see (a `write_txn!`): the buffered
/// assertions written first and forgotten, as that write may change the edges they hold.
pub(super) async fn open_for_write(inner: &mut Inner) -> StoreResult<&mut Txn> {
    flush_assertions(inner).await?;
    inner.assertions.forget();
    open(inner)
}

/// The open transaction, or why there is none.
pub(super) fn open(inner: &mut Inner) -> StoreResult<&mut Txn> {
    open_with_jobs(inner).map(|(txn, _)| txn)
}

/// The open transaction and the session's job and run updates, or why there is none.
pub(super) fn open_with_jobs(inner: &mut Inner) -> StoreResult<(&mut Txn, &mut JobsBuffer)> {
    match &mut inner.state {
        State::Open(txn) => Ok((&mut **txn, &mut inner.jobs)),
        State::Failed { unavailable: true } => {
            Err(StoreError::Unavailable("an earlier write of this request failed; nothing of it is committed".into()))
        }
        State::Failed { unavailable: false } => {
            Err(StoreError::Internal("an earlier write of this request failed; nothing of it is committed".into()))
        }
        State::Committed => {
            Err(StoreError::Unavailable("the store's transaction for this request already ended; retry".into()))
        }
    }
}

/// A call's result; a failure fails the session (its writes so far cannot be undone alone) and
/// rolls its transaction back.
pub(super) fn settle<T>(inner: &mut Inner, result: StoreResult<T>) -> StoreResult<T> {
    if let Err(e) = &result {
        let failed = State::Failed { unavailable: matches!(e, StoreError::Unavailable(_)) };
        inner.gate.take();
        if let State::Open(txn) = std::mem::replace(&mut inner.state, failed) {
            rollback(txn);
        }
    }
    result
}

/// Rolls back in the background (the server has usually failed the transaction already; the
/// pool resets a connection whose rollback fails).
fn rollback(txn: Box<Txn>) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if let Err(e) = (*txn).rollback().await {
                tracing::debug!(error = %e, "rolling back a neo4j session failed");
            }
        });
    }
}

impl Drop for Session {
    /// Dropped uncommitted: rolled back.
    fn drop(&mut self) {
        let state = &mut self.inner.get_mut().state;
        if let State::Open(_) = state {
            if let State::Open(txn) = std::mem::replace(state, State::Committed) {
                rollback(txn);
            }
        }
    }
}
