//! Jobs and runs as of a past instant on Neo4j (issue #45), as the embedded store answers them
//! (`sqlite::jobs_asof`): each job's latest run then and the failures still latest then, read
//! from the `(:Run)` nodes as stored (`began`, `ended_at`, `state`, through the `job_id` and
//! `state` indexes). Nothing here writes: a run's states and datasets, kept with their times,
//! are the history these read.

use super::jobs::RunProps;
use super::rows::ts;
use super::{decode_by_ids, Cmd, Run as Runner};
use crate::domain::{Id, Run, Timestamp};
use crate::store::StoreResult;

/// `Store::latest_runs_at`.
pub(super) async fn latest_runs_at(db: impl Runner, job_ids: &[Id], at: &Timestamp) -> StoreResult<Vec<Run>> {
    decode_by_ids::<RunProps>(db, cypher!("run_latest_at").param("at", ts(at)), job_ids, "run").await
}

/// `Store::failed_latest_runs_at`.
pub(super) async fn failed_latest_runs_at(mut db: impl Runner, at: &Timestamp, limit: i64) -> StoreResult<Vec<Run>> {
    // SQLite's `LIMIT` with a negative value means none.
    let limit = if limit < 0 { i64::MAX } else { limit };
    db.run(cypher!("run_failed_latest_at").param("at", ts(at)).param("limit", limit)).await?.decode::<RunProps>("run")
}
