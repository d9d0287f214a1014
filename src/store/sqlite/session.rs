//! The two pieces of the embedded store that outlive a call: the `Session` (one write
//! transaction held open across many calls, what `Store::session` hands out) and the
//! `Checkpointer` thread that keeps the WAL small.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::{internal, STORE};
use crate::metrics::store_query;
use crate::store::{StoreError, StoreResult};

/// Copies the WAL back into the database every second on a connection of its own. A passive
/// checkpoint waits for no one (readers and the writer go on), so the WAL stays small without a
/// commit ever paying for it.
pub(super) struct Checkpointer {
    _stop: std::sync::mpsc::Sender<()>,
}

impl Checkpointer {
    pub(super) fn start(conn: Connection) -> Checkpointer {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new().name("sqlite-checkpoint".into()).spawn(move || {
            // Ends when the store is dropped (the sender goes).
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(std::time::Duration::from_secs(1))
            {
                let r = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
                });
                match r {
                    Ok((_, wal_pages, copied)) if copied > 0 => {
                        tracing::debug!(store = STORE, wal_pages, copied, "checkpointed the WAL")
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, store = STORE, "checkpointing the WAL failed"),
                }
            }
        });
        if let Err(e) = spawned {
            // The writer's own checkpoints still keep the WAL bounded.
            tracing::warn!(error = %e, store = STORE, "could not start the checkpoint thread");
        }
        Checkpointer { _stop: stop }
    }
}

/// One write transaction held open across many calls (an OpenLineage request's events): reads
/// see the session's own writes, and the pages touched stay in the writer's cache until one
/// commit writes them to the WAL once. The session holds the writer gate for its life, so no
/// other write interleaves; its calls run on the calling thread, like reads (see `SqliteStore::read`).
/// Dropping it uncommitted rolls everything back.
pub(super) struct Session {
    writer: Arc<Mutex<Connection>>,
    /// Held until the commit (or the rollback when dropped); `None` once committed.
    gate: Mutex<Option<tokio::sync::OwnedMutexGuard<()>>>,
    /// Set when an unguarded call (see `SqliteStore::write_unguarded`) failed part-way: its
    /// writes cannot be undone alone, so nothing more runs and nothing commits.
    pub(super) poisoned: std::sync::atomic::AtomicBool,
    /// Whether what poisoned it was the store's own trouble (a full or read-only disk): then the
    /// calls refused after it are `Unavailable` too, and the request is worth sending again;
    /// otherwise (a bug) they are `Internal`, as the first failure was.
    pub(super) poisoned_by_store: std::sync::atomic::AtomicBool,
}

fn session_ended() -> StoreError {
    StoreError::Unavailable("the store's transaction for this request already ended; retry".into())
}

impl Session {
    pub(super) async fn start(
        writer: Arc<Mutex<Connection>>,
        gate: Arc<tokio::sync::Mutex<()>>,
    ) -> StoreResult<Session> {
        let gate = gate.lock_owned().await;
        let session = Session {
            writer,
            gate: Mutex::new(Some(gate)),
            poisoned: Default::default(),
            poisoned_by_store: Default::default(),
        };
        session.run(|c| {
            store_query(STORE, "begin");
            c.execute_batch("BEGIN IMMEDIATE").map_err(internal)
        })?;
        Ok(session)
    }

    fn committed(&self) -> bool {
        self.gate.lock().unwrap_or_else(|p| p.into_inner()).is_none()
    }

    /// Runs `f` in the session's transaction.
    pub(super) fn run<T>(&self, f: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        if self.poisoned.load(Ordering::Relaxed) && !self.poisoned_by_store.load(Ordering::Relaxed) {
            return Err(StoreError::Internal(
                "an earlier write of this request failed; nothing of it is committed".into(),
            ));
        }
        if self.committed() || self.poisoned.load(Ordering::Relaxed) {
            return Err(session_ended());
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn)
    }

    /// Marks it failed part-way by `error` (see `poisoned`).
    pub(super) fn poison(&self, error: &StoreError) {
        self.poisoned_by_store.store(matches!(error, StoreError::Unavailable(_)), Ordering::Relaxed);
        self.poisoned.store(true, Ordering::Relaxed);
    }

    pub(super) fn commit(&self) -> StoreResult<()> {
        self.run(|c| {
            store_query(STORE, "commit");
            c.execute_batch("COMMIT").map_err(internal)
        })?;
        // Committed: other writers may go on while this view lingers.
        self.gate.lock().unwrap_or_else(|p| p.into_inner()).take();
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.committed() {
            return;
        }
        let conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if !conn.is_autocommit() {
            if let Err(e) = conn.execute_batch("ROLLBACK") {
                tracing::error!(error = %e, store = STORE, "rolling back a store session failed");
            }
        }
    }
}
