//! `tributary backup`: a consistent copy of the embedded store, taken while `serve` writes to
//! it, through SQLite's online backup API.
//!
//! Consistency: the copy holds one read transaction on the store from its first page to its
//! last, so every page comes from the same snapshot (the store as it was when the backup
//! began), and the backup never restarts because a writer committed meanwhile. In WAL mode a
//! reader does not block writers, so `serve` goes on ingesting; the checkpointer cannot move
//! past the snapshot until the copy ends, so the `-wal` file may grow meanwhile.
//!
//! The copy is written to `<FILE>.partial` and renamed to `FILE` only once complete and synced,
//! so a backup that fails or is killed never leaves a file that looks whole.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use super::migrations::{file_version, SCHEMA_VERSION};
use crate::store::schema_version::too_new;
use crate::store::{StoreError, StoreResult};

/// Pages copied per step, between progress lines: 16 MiB at SQLite's default 4 KiB page.
const PAGES_PER_STEP: i32 = 4096;

/// What `backup` copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupReport {
    pub pages: i64,
    pub bytes: u64,
    /// The schema version of the copy (that of the store).
    pub schema_version: i64,
}

fn failed(what: &str, e: impl std::fmt::Display) -> StoreError {
    tracing::error!(error = %e, what, "backup failed");
    StoreError::Internal(format!("backup failed while {what}: {e}"))
}

/// `<FILE>.partial`, beside `to`.
fn partial_path(to: &Path) -> PathBuf {
    let mut name = to.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    to.with_file_name(name)
}

/// Copies the store in `dir` to the new file `to`. Refuses an existing `to`, a directory
/// without a store, and a store newer than this binary reads.
pub fn backup(dir: &Path, to: &Path) -> StoreResult<BackupReport> {
    let source = dir.join("tributary.db");
    if !source.is_file() {
        return Err(StoreError::Invalid(format!(
            "no embedded store at {}: check --data-dir (or TRIBUTARY_DATA_DIR)",
            source.display()
        )));
    }
    if to.exists() {
        return Err(StoreError::Invalid(format!(
            "{} already exists: name a new file (a backup never overwrites one)",
            to.display()
        )));
    }
    let parent = to.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(StoreError::Invalid(format!(
            "cannot write {}: {} is not a directory",
            to.display(),
            parent.display()
        )));
    }
    let partial = partial_path(to);
    // A leftover of a backup that was killed: never a usable copy.
    if partial.exists() {
        std::fs::remove_file(&partial).map_err(|e| failed("removing an earlier partial copy", e))?;
    }
    let result = copy(&source, &partial);
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
        return result;
    }
    std::fs::rename(&partial, to).map_err(|e| failed("renaming the finished copy", e))?;
    // The rename itself is durable only once the directory is synced.
    if let Ok(d) = std::fs::File::open(parent) {
        let _ = d.sync_all();
    }
    result
}

fn copy(source: &Path, partial: &Path) -> StoreResult<BackupReport> {
    // Read-write without create: a WAL reader updates the shared-memory index, and a missing
    // store must not be created by a backup.
    let src = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| failed("opening the store", e))?;
    src.busy_timeout(Duration::from_secs(10)).map_err(|e| failed("opening the store", e))?;
    // The snapshot: a read transaction held until the last page is copied (see the module doc),
    // begun before the version is read so that the version is the copy's.
    src.execute_batch("BEGIN DEFERRED").map_err(|e| failed("starting the snapshot", e))?;
    src.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
        .map_err(|e| failed("starting the snapshot", e))?;
    let version = file_version(&src)?.unwrap_or(1);
    if version > SCHEMA_VERSION {
        return Err(too_new(
            "embedded",
            &format!("the data directory {}", source.parent().unwrap_or(source).display()),
            version,
            SCHEMA_VERSION,
        ));
    }
    let mut dst = Connection::open(partial).map_err(|e| failed("creating the copy", e))?;
    let started = Instant::now();
    let pages = {
        let step = Backup::new(&src, &mut dst).map_err(|e| failed("starting the copy", e))?;
        loop {
            match step.step(PAGES_PER_STEP).map_err(|e| failed("copying pages", e))? {
                StepResult::Done => break,
                StepResult::More => {
                    let p = step.progress();
                    tracing::info!(
                        copied_pages = p.pagecount - p.remaining,
                        total_pages = p.pagecount,
                        "backup progress"
                    );
                }
                // The copy's own file is busy (someone opened it): wait a little and go on.
                StepResult::Busy | StepResult::Locked => std::thread::sleep(Duration::from_millis(50)),
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        i64::from(step.progress().pagecount)
    };
    src.execute_batch("COMMIT").map_err(|e| failed("ending the snapshot", e))?;
    dst.close().map_err(|(_, e)| failed("closing the copy", e))?;
    let file = std::fs::File::open(partial).map_err(|e| failed("syncing the copy", e))?;
    file.sync_all().map_err(|e| failed("syncing the copy", e))?;
    let bytes = file.metadata().map_err(|e| failed("syncing the copy", e))?.len();
    tracing::info!(pages, bytes, took_ms = started.elapsed().as_millis() as u64, "backup copied");
    Ok(BackupReport { pages, bytes, schema_version: version })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;

    fn rows(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap()
    }

    /// A store of several steps' worth of pages, written to by another connection all along: the
    /// copy is whole, passes the integrity check, and holds every row committed before it began
    /// and none committed after it ended.
    #[test]
    fn a_copy_of_many_steps_is_one_snapshot_while_a_writer_commits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tributary.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(&format!(
            "PRAGMA user_version = {SCHEMA_VERSION}; CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
             INSERT INTO t (b) SELECT randomblob(4000) FROM n;"
        ))
        .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (stop, path) = (stop.clone(), path.clone());
            std::thread::spawn(move || {
                let conn = Connection::open(&path).unwrap();
                conn.busy_timeout(Duration::from_secs(10)).unwrap();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) && n < 5000 {
                    conn.execute("INSERT INTO t (b) VALUES (randomblob(4000))", []).unwrap();
                    n += 1;
                }
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let before = rows(&conn);
        let to = dir.path().join("copy.db");
        let report = backup(dir.path(), &to).unwrap();
        let after = rows(&conn);
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();

        assert!(report.pages > i64::from(PAGES_PER_STEP), "{} pages: one step only", report.pages);
        assert_eq!(report.schema_version, SCHEMA_VERSION);
        assert!(!partial_path(&to).exists());
        let copy = Connection::open(&to).unwrap();
        let check: String = copy.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        let copied = rows(&copy);
        assert!(before <= copied && copied <= after, "{before} <= {copied} <= {after}");
    }
}
