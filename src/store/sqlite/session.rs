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
///
/// A passive checkpoint never shrinks the file, though: after one huge transaction (a bulk
/// import of a million containers leaves a WAL of 5.8 GB) the file stays that long until the
/// next writer starts over at its head, and that writer's commit then truncates it to
/// `journal_size_limit`, which took the first ingest request after an xlarge import 2 s (the
/// kernel dropping the file's cached pages and freeing its blocks; docs/benchmarks-history.md, issue #22,
/// third stop). So once a WAL longer than that limit is wholly copied back, this thread
/// truncates it itself, when no writer is busy (it tries without waiting and tries again a
/// second later).
pub(super) struct Checkpointer {
    _stop: std::sync::mpsc::Sender<()>,
}

impl Checkpointer {
    /// `truncate_above`: the WAL length in bytes past which a WAL wholly copied back is emptied.
    pub(super) fn start(conn: Connection, truncate_above: i64) -> Checkpointer {
        Self::start_with(conn, truncate_above, std::time::Duration::from_secs(1))
    }

    fn start_with(conn: Connection, truncate_above: i64, every: std::time::Duration) -> Checkpointer {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        // A truncating checkpoint needs the write lock: take it only when it is free, never
        // keep a writer (or this thread) waiting for it.
        if let Err(e) = conn.busy_timeout(std::time::Duration::ZERO) {
            tracing::warn!(error = %e, store = STORE, "could not set the checkpoint connection's busy timeout");
        }
        let page_size = conn.pragma_query_value(None, "page_size", |r| r.get::<_, i64>(0)).unwrap_or(4096).max(512);
        let spawned = std::thread::Builder::new().name("sqlite-checkpoint".into()).spawn(move || {
            // Ends when the store is dropped (the sender goes).
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                match checkpoint(&conn, "PASSIVE") {
                    Ok((_, wal_pages, copied)) if copied > 0 => {
                        tracing::debug!(store = STORE, wal_pages, copied, "checkpointed the WAL");
                        if wal_pages * page_size > truncate_above && copied == wal_pages {
                            truncate(&conn, wal_pages);
                        }
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

/// `PRAGMA wal_checkpoint(mode)`: whether it was blocked, the WAL's length in pages, and how
/// many of them are copied back.
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(i64, i64, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
}

/// Empties a long WAL that is wholly copied back; a busy writer or reader makes it a no-op.
fn truncate(conn: &Connection, wal_pages: i64) {
    let started = std::time::Instant::now();
    match checkpoint(conn, "TRUNCATE") {
        Ok((0, _, _)) => tracing::info!(
            store = STORE,
            wal_pages,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "truncated a long WAL after copying it back"
        ),
        Err(e) if e.sqlite_error_code() != Some(rusqlite::ErrorCode::DatabaseBusy) => {
            tracing::warn!(error = %e, store = STORE, "truncating the WAL failed")
        }
        // Busy (as a row or as an error): a writer or a reader holds it; the next round tries again.
        _ => tracing::debug!(store = STORE, wal_pages, "the WAL is busy; truncating it later"),
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
    /// Its job and run updates not written yet; written before the commit.
    jobs: Mutex<super::jobs::JobsBuffer>,
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
            jobs: Default::default(),
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

    /// `run`, marking the session failed part-way when `f` fails (see `poisoned`): for calls run
    /// without a savepoint.
    pub(super) fn run_unguarded<T>(&self, f: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        self.run(|c| {
            let out = f(c);
            if let Err(e) = &out {
                self.poison(e);
            }
            out
        })
    }

    /// Marks it failed part-way by `error` (see `poisoned`).
    fn poison(&self, error: &StoreError) {
        self.poisoned_by_store.store(matches!(error, StoreError::Unavailable(_)), Ordering::Relaxed);
        self.poisoned.store(true, Ordering::Relaxed);
    }

    /// `f` on the session's buffered job and run updates.
    pub(super) fn with_jobs<T>(
        &self,
        f: impl FnOnce(&mut super::jobs::JobsBuffer) -> StoreResult<T>,
    ) -> StoreResult<T> {
        f(&mut self.jobs.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(super) fn commit(&self) -> StoreResult<()> {
        self.run(|c| {
            if let Err(e) = self.with_jobs(|buffer| buffer.flush(c).map_err(super::sql_err)) {
                self.poison(&e);
                return Err(e);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// SQLite's default page size, which these stores have: the thresholds are in bytes.
    const PAGE: i64 = 4096;

    /// A store whose writer leaves a WAL of about 4 MiB (1,000 pages) behind it in one
    /// transaction, with its own checkpoints off so only the checkpoint thread copies it back.
    struct LongWal {
        writer: Connection,
        db: std::path::PathBuf,
        wal: std::path::PathBuf,
        /// Last: removed after the connection closes (fields drop in order).
        _dir: tempfile::TempDir,
    }

    impl LongWal {
        fn new() -> LongWal {
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("t.db");
            let writer = super::super::open_connection(&db).unwrap();
            writer.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
            writer
                .execute_batch(
                    "CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB);
                     BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
                     INSERT INTO t (b) SELECT zeroblob(3500) FROM n; COMMIT;",
                )
                .unwrap();
            let wal = dir.path().join("t.db-wal");
            assert!(std::fs::metadata(&wal).unwrap().len() > 900 * 4096, "the WAL holds the transaction");
            LongWal { writer, db, wal, _dir: dir }
        }

        /// A checkpoint thread on a connection of its own, every 20 ms, truncating past `pages`.
        fn checkpointer(&self, pages: i64) -> Checkpointer {
            let conn = super::super::open_connection(&self.db).unwrap();
            Checkpointer::start_with(conn, pages * PAGE, Duration::from_millis(20))
        }
    }

    /// The file's length once `done` holds, or after `wait` (0 when the file is gone).
    fn len_within(file: &std::path::Path, wait: Duration, done: impl Fn(u64) -> bool) -> u64 {
        let started = Instant::now();
        loop {
            let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            if done(len) || started.elapsed() > wait {
                return len;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_long_wal_copied_back_is_truncated_by_the_checkpoint_thread() {
        let store = LongWal::new();
        let _c = store.checkpointer(500);
        assert_eq!(len_within(&store.wal, Duration::from_secs(20), |l| l == 0), 0, "the WAL is emptied");
        // Nothing is lost: every row is in the database file, and the writer goes on.
        let n: i64 = store.writer.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1000);
        store.writer.execute("INSERT INTO t (b) VALUES (x'01')", []).unwrap();
    }

    #[test]
    fn a_wal_under_the_threshold_keeps_its_length() {
        let store = LongWal::new();
        let before = std::fs::metadata(&store.wal).unwrap().len();
        let _c = store.checkpointer(5_000);
        // Copied back (the database file grows to hold the rows), but not truncated.
        len_within(&store.db, Duration::from_secs(20), |l| l >= 900 * 4096);
        std::thread::sleep(Duration::from_millis(200));
        assert!(std::fs::metadata(&store.db).unwrap().len() >= 900 * 4096, "the checkpoint copied the WAL back");
        assert_eq!(std::fs::metadata(&store.wal).unwrap().len(), before);
    }

    #[test]
    fn a_busy_writer_defers_the_truncation() {
        let store = LongWal::new();
        // A write transaction open: the truncation cannot take the write lock and must not wait
        // for it; the WAL stays until the writer is done.
        store.writer.execute_batch("BEGIN IMMEDIATE; INSERT INTO t (b) VALUES (x'02');").unwrap();
        let _c = store.checkpointer(500);
        std::thread::sleep(Duration::from_millis(500));
        assert!(std::fs::metadata(&store.wal).unwrap().len() > 0, "not truncated under an open write transaction");
        store.writer.execute_batch("COMMIT").unwrap();
        assert_eq!(len_within(&store.wal, Duration::from_secs(20), |l| l == 0), 0, "truncated once the writer is done");
    }
}
