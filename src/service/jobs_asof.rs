//! Jobs, runs and health as of an instant (issue #45): the reads `service::jobs` makes, given
//! the view's instant (`Lineage::at`), so one code path answers today and the past alike, as
//! [`Lineage::level_edges`] does for edges.
//!
//! **What the history is.** A run keeps every state it reported with its time (`Run::states`)
//! and the datasets it read and wrote; a job keeps its runs, each with when it began. So as of
//! `t`:
//! - a job existed when it was first seen by `t`;
//! - its latest run then is the one that began last by `t` ([`Store::latest_runs_at`]), with the
//!   states it had reported by `t` only ([`run_as_of`]): a run that failed after `t` was running;
//! - what the job read and wrote then is what that run read and wrote, so a job that read `a`
//!   until Monday's run and `b` from Tuesday's reads `a` as of Monday and `b` as of Wednesday
//!   (a direction its run named nothing in, as a FAIL without outputs, keeps the job's datasets
//!   last seen by `t`; a job with no run by `t`, only job events, has those);
//! - a written dataset's latest complete write then is the run then when it completed, else the
//!   job's record when that write was by `t`, else its latest COMPLETE run ended by `t` that
//!   wrote it;
//! - health is computed as today from those runs and the edges live at `t`.
//!
//! Today (no instant) every read is the store's as before: a job's datasets are the union over
//! its runs (`Store::job_io`), its latest run is the one it records. The store keeps no interval
//! per job and dataset beside the runs': it would repeat the runs' datasets and times, and
//! keeping it would put a read of the job's datasets into every event's write.
//!
//! [`Store::latest_runs_at`]: crate::store::Store::latest_runs_at

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use super::Lineage;
use crate::domain::jobs::current_state;
use crate::domain::{End, Id, IoDirection, IoEntry, Job, PageRequest, Run, RunFilter, RunState, Timestamp};
use crate::error::Result;

/// How many of a job's latest COMPLETE runs begun by an instant are searched for the one that
/// had ended by then (a run still going at the instant began before it, so a few suffice).
const EARLIER_RUNS: i64 = 10;

/// The run as it stood at `at`: the states it had reported by then and what follows from them
/// (state, start, end, its latest event), its facets as today (an error message only while it
/// had failed). `None` when it had reported nothing by then.
pub fn run_as_of(run: Run, at: Timestamp) -> Option<Run> {
    if run.states.iter().all(|s| s.at <= at) {
        return Some(run);
    }
    let states: Vec<_> = run.states.iter().filter(|s| s.at <= at).cloned().collect();
    let current = current_state(&states)?.clone();
    let first = |state: RunState| states.iter().filter(|s| s.state == state).map(|s| s.at).min();
    let started_at = first(RunState::Start).or_else(|| first(RunState::Running));
    let ended_at = current.state.is_terminal().then_some(current.at);
    let last_seen_at = states.iter().map(|s| s.at).max().unwrap_or(current.at);
    let failed = current.state.is_failure();
    Some(Run {
        state: current.state,
        started_at,
        ended_at,
        error_message: run.error_message.filter(|_| failed),
        error_language: run.error_language.filter(|_| failed),
        last_seen_at,
        states,
        ..run
    })
}

/// What an as-of read of jobs' datasets read on the way: the jobs that existed at the instant
/// and their latest runs then, as they stood then (by job id; a job with no run by then has none).
#[derive(Debug, Default)]
pub(super) struct JobsThen {
    pub jobs: Vec<Job>,
    pub latest_runs: HashMap<Id, Run>,
}

impl Lineage {
    /// The service as of `at` without the checks of `Lineage::at` (an instant an answer already
    /// carries: a job or graph of an as-of read asking for more of the same instant).
    pub fn view_at(&self, at: Option<Timestamp>) -> Cow<'_, Lineage> {
        match at {
            None => Cow::Borrowed(self),
            Some(at) => {
                let mut view = self.clone();
                view.as_of = Some(at);
                Cow::Owned(view)
            }
        }
    }

    /// The jobs' latest runs, by job id: the ones they record today; as of the instant, the run
    /// then as it stood then (see the module's notes).
    pub async fn latest_runs(&self, jobs: &[Job]) -> Result<HashMap<Id, Run>> {
        let Some(at) = self.as_of else {
            let ids: Vec<Id> = jobs.iter().filter_map(|j| j.latest_run_id).collect();
            if ids.is_empty() {
                return Ok(HashMap::new());
            }
            return Ok(self.store.runs_by_ids(&ids).await?.into_iter().map(|r| (r.job_id, r)).collect());
        };
        let ids: Vec<Id> = jobs.iter().filter(|j| j.first_seen_at <= at).map(|j| j.id).collect();
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let runs = self.store.latest_runs_at(&ids, at).await?;
        Ok(runs.into_iter().filter_map(|r| run_as_of(r, at)).map(|r| (r.job_id, r)).collect())
    }

    /// The failed runs still their job's latest (at most `limit`, the latest ended first): now,
    /// or as of the instant.
    pub(crate) async fn failing_runs(&self, limit: i64) -> Result<Vec<Run>> {
        let Some(at) = self.as_of else {
            return Ok(self.store.failed_latest_runs(None, None, limit).await?);
        };
        let runs = self.store.failed_latest_runs_at(at, limit).await?;
        Ok(runs.into_iter().filter_map(|r| run_as_of(r, at)).collect())
    }

    /// The datasets these jobs read and wrote, by job id: every one they ever did today; as of
    /// the instant, what each job's latest run then read and wrote (see the module's notes),
    /// with the job's latest complete write of each as far as it was known then.
    pub async fn job_io_at(&self, job_ids: &[Id]) -> Result<Vec<(Id, IoEntry)>> {
        Ok(self.job_io_read(job_ids, None).await?.0)
    }

    /// `job_io_at` with, as of the instant, what it read on the way: the jobs that existed then
    /// and their latest runs then (a graph's jobs and their `latestRun` need them again).
    /// `stored`: the jobs' stored datasets when already read, when only those are asked about.
    async fn job_io_read(
        &self,
        job_ids: &[Id],
        stored: Option<Vec<(Id, IoEntry)>>,
    ) -> Result<(Vec<(Id, IoEntry)>, Option<JobsThen>)> {
        if job_ids.is_empty() {
            return Ok((Vec::new(), None));
        }
        let Some(at) = self.as_of else { return Ok((self.store.job_io(job_ids).await?, None)) };
        let jobs: Vec<Job> =
            self.store.jobs_by_ids(job_ids).await?.into_iter().filter(|j| j.first_seen_at <= at).collect();
        if jobs.is_empty() {
            return Ok((Vec::new(), Some(JobsThen::default())));
        }
        let ids: Vec<Id> = jobs.iter().map(|j| j.id).collect();
        let latest = self.latest_runs(&jobs).await?;
        let run_ids: Vec<Id> = latest.values().map(|r| r.id).collect();
        let mut run_io: HashMap<Id, Vec<IoEntry>> = HashMap::new();
        if !run_ids.is_empty() {
            for (run, e) in self.store.run_io(&run_ids).await? {
                run_io.entry(run).or_default().push(e);
            }
        }
        let rows = match stored {
            Some(rows) => rows,
            None => self.store.job_io(&ids).await?,
        };
        let mut stored: HashMap<Id, Vec<IoEntry>> = HashMap::new();
        for (job, e) in rows {
            stored.entry(job).or_default().push(e);
        }
        let mut out = Vec::new();
        // Jobs whose latest complete write of a dataset came after the instant: the one before
        // it is looked for among their earlier runs.
        let mut earlier: BTreeSet<Id> = BTreeSet::new();
        for id in ids {
            let stored = stored.remove(&id).unwrap_or_default();
            let run = latest.get(&id);
            let of_run = run.and_then(|r| run_io.get(&r.id)).map(Vec::as_slice).unwrap_or_default();
            for direction in [IoDirection::Read, IoDirection::Wrote] {
                let named: Vec<&IoEntry> = of_run.iter().filter(|e| e.direction == direction).collect();
                let (entries, by_run): (Vec<IoEntry>, _) = if named.is_empty() {
                    (stored.iter().filter(|e| e.direction == direction && e.at <= at).cloned().collect(), None)
                } else {
                    (named.into_iter().cloned().collect(), run)
                };
                for mut e in entries {
                    e.completed = completed_then(by_run, &stored, &e, at);
                    if e.completed.is_none() && replaced_after(&stored, &e, at) {
                        earlier.insert(id);
                    }
                    out.push((id, e));
                }
            }
        }
        self.complete_writes_before(&mut out, &earlier, at).await?;
        Ok((out, Some(JobsThen { jobs, latest_runs: latest })))
    }

    /// Fills in, for `jobs`' written datasets in `io` with no complete write known by `at`, the
    /// latest COMPLETE run of the job that had ended by `at` and wrote them (among its last
    /// `EARLIER_RUNS` begun by then): the write a later one replaced in the job's record.
    async fn complete_writes_before(&self, io: &mut [(Id, IoEntry)], jobs: &BTreeSet<Id>, at: Timestamp) -> Result<()> {
        let filter = RunFilter { state: Some(RunState::Complete), until: Some(at), ..Default::default() };
        let mut done: HashMap<Id, Run> = HashMap::new();
        for job in jobs {
            let page = PageRequest { page: 1, size: EARLIER_RUNS };
            let runs = self.store.runs_of_job(*job, &filter, page).await?.items;
            if let Some(run) = runs.into_iter().find(|r| r.ended_at.is_some_and(|e| e <= at)) {
                done.insert(run.id, run);
            }
        }
        if done.is_empty() {
            return Ok(());
        }
        let ids: Vec<Id> = done.keys().copied().collect();
        let mut wrote: HashMap<(Id, (IoDirection, String)), (Id, Timestamp)> = HashMap::new();
        for (run, e) in self.store.run_io(&ids).await? {
            if let Some(r) = done.get(&run).filter(|_| e.direction == IoDirection::Wrote) {
                if let Some(ended) = r.ended_at {
                    wrote.insert((r.job_id, e.key()), (r.id, ended));
                }
            }
        }
        for (job, e) in io.iter_mut().filter(|(job, e)| e.completed.is_none() && jobs.contains(job)) {
            e.completed = wrote.get(&(*job, e.key())).copied();
        }
        Ok(())
    }

    /// The job datasets on these ends, as `Store::jobs_of_ends`: today's, or as of the instant
    /// (`job_io_at` of the jobs that ever read or wrote them, kept on the ends).
    pub async fn jobs_of_ends_at(&self, ends: &[End]) -> Result<Vec<(Id, IoEntry)>> {
        Ok(self.jobs_of_ends_read(ends).await?.0)
    }

    /// `jobs_of_ends_at` with, as of the instant, the jobs and latest runs it read (`JobsThen`).
    pub(super) async fn jobs_of_ends_read(&self, ends: &[End]) -> Result<(Vec<(Id, IoEntry)>, Option<JobsThen>)> {
        if ends.is_empty() {
            return Ok((Vec::new(), self.as_of.map(|_| JobsThen::default())));
        }
        let rows = self.store.jobs_of_ends(ends).await?;
        if self.as_of.is_none() {
            return Ok((rows, None));
        }
        let jobs: Vec<Id> = rows.iter().map(|(j, _)| *j).collect::<BTreeSet<_>>().into_iter().collect();
        let keys: BTreeSet<String> = ends.iter().map(End::key).collect();
        // Only these ends are kept, so what the jobs stored on them is all of their stored
        // datasets the answer consults (see `job_io_read`).
        let (io, then) = self.job_io_read(&jobs, Some(rows)).await?;
        Ok((io.into_iter().filter(|(_, e)| keys.contains(&e.end.key())).collect(), then))
    }
}

/// Whether the job's record holds a complete write of `e` after `at` (which replaced any before).
fn replaced_after(stored: &[IoEntry], e: &IoEntry, at: Timestamp) -> bool {
    e.direction == IoDirection::Wrote
        && stored.iter().find(|s| s.key() == e.key()).and_then(|s| s.completed).is_some_and(|(_, done)| done > at)
}

/// A written dataset's latest complete write by its job as of `at`: by the run then when it
/// wrote it (`run`) and had completed, else the one stored when it was by then (an earlier one a later write replaced is
/// not kept, so it is then unknown).
fn completed_then(run: Option<&Run>, stored: &[IoEntry], e: &IoEntry, at: Timestamp) -> Option<(Id, Timestamp)> {
    if e.direction != IoDirection::Wrote {
        return None;
    }
    if let Some(r) = run.filter(|r| r.state == RunState::Complete) {
        if let Some(ended) = r.ended_at {
            return Some((r.id, ended));
        }
    }
    stored.iter().find(|s| s.key() == e.key()).and_then(|s| s.completed).filter(|(_, done)| *done <= at)
}
