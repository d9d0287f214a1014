//! Jobs and runs as of a past instant in the embedded store (issue #45): each job's latest run
//! then and the failures still latest then, read from the runs as stored (their `began` and
//! `ended_at` columns and the `runs_job (job_id, began)` index). Nothing here writes: a run's
//! states and datasets, kept with their times since version 4, are the history these read.

use rusqlite::{params, Connection};

use super::jobs::{run_row, RUN_COLS};
use super::rows::{distinct_ids, ts};
use super::select_rows;
use crate::domain::{Id, Run, Timestamp};

/// `Store::latest_runs_at`: per job, one seek of `runs_job` for the run that began last by then.
pub(super) fn latest_runs_at(c: &Connection, job_ids: &[Id], at: &Timestamp) -> rusqlite::Result<Vec<Run>> {
    select_rows(
        c,
        "latest_runs_at",
        &format!(
            "SELECT {RUN_COLS} FROM runs WHERE id IN (
               SELECT (SELECT r.id FROM runs r WHERE r.job_id = j.value AND r.began <= ?2
                       ORDER BY r.began DESC, r.id DESC LIMIT 1)
               FROM rarray(?1) j)
             ORDER BY id"
        ),
        params![distinct_ids(job_ids), ts(at)],
        run_row,
    )
}

/// `Store::failed_latest_runs_at`: the failed runs ended by then, each kept when no run of its
/// job began after it (and by then).
pub(super) fn failed_latest_runs_at(c: &Connection, at: &Timestamp, limit: i64) -> rusqlite::Result<Vec<Run>> {
    let cols = RUN_COLS.split(", ").map(|col| format!("r.{col}")).collect::<Vec<_>>().join(", ");
    select_rows(
        c,
        "failed_latest_runs_at",
        &format!(
            "SELECT {cols} FROM runs r
             WHERE r.state IN ('FAIL', 'ABORT') AND r.ended_at <= ?1
               AND NOT EXISTS (SELECT 1 FROM runs n WHERE n.job_id = r.job_id AND n.began <= ?1
                                 AND (n.began > r.began OR (n.began = r.began AND n.id > r.id)))
             ORDER BY r.ended_at DESC, r.id DESC LIMIT ?2"
        ),
        params![ts(at), limit],
        run_row,
    )
}
