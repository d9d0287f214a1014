//! Marquez's jobs and runs: each job's current inputs and outputs, its runs, one run by id.

use std::collections::{BTreeMap, HashMap};

use super::*;

impl Lineage {
    /// Visible jobs made into Marquez jobs (a page of `marquez_job_list`): current inputs and
    /// outputs, parent name, latest run.
    pub async fn marquez_jobs(&self, jobs: Vec<Job>) -> Result<Vec<MarquezJob>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let latest_ids: Vec<Id> = jobs.iter().filter_map(|j| j.latest_run_id).collect();
        let latest: HashMap<Id, Run> = if latest_ids.is_empty() {
            HashMap::new()
        } else {
            self.store.runs_by_ids(&latest_ids).await?.into_iter().map(|r| (r.id, r)).collect()
        };
        let mut run_io: HashMap<Id, Vec<IoEntry>> = HashMap::new();
        if !latest_ids.is_empty() {
            for (run, e) in self.store.run_io(&latest_ids).await? {
                run_io.entry(run).or_default().push(e);
            }
        }
        let current = self.current_io_with(&jobs, &run_io).await?;
        let parent_ids: Vec<Id> = jobs.iter().filter_map(|j| j.parent_id).collect();
        let parents: HashMap<Id, String> = if parent_ids.is_empty() {
            HashMap::new()
        } else {
            self.store.jobs_by_ids(&parent_ids).await?.into_iter().map(|j| (j.id, j.name)).collect()
        };
        Ok(jobs
            .into_iter()
            .map(|job| {
                let run = job.latest_run_id.and_then(|r| latest.get(&r)).cloned();
                let run_entries = job.latest_run_id.and_then(|r| run_io.get(&r)).cloned().unwrap_or_default();
                let (inputs, outputs) = split_io(current.get(&job.id).map(Vec::as_slice).unwrap_or_default());
                let latest_run = run.map(|run| {
                    let (ri, ro) = split_io(&run_entries);
                    MarquezRun {
                        run,
                        job_namespace: job.namespace.clone(),
                        job_name: job.name.clone(),
                        inputs: ri,
                        outputs: ro,
                    }
                });
                MarquezJob {
                    parent_name: job.parent_id.and_then(|p| parents.get(&p).cloned()),
                    inputs,
                    outputs,
                    latest_run,
                    job,
                }
            })
            .collect())
    }

    /// The visible jobs of a namespace (or of all, with `None`) whose latest run is in one of
    /// `states` (Marquez's; all with `None`), by name.
    pub async fn marquez_job_list(
        &self,
        caller: &Caller,
        namespace: Option<&str>,
        states: Option<&[String]>,
    ) -> Result<Vec<Job>> {
        if let Some(ns) = namespace {
            self.marquez_namespace(caller, ns).await?;
        }
        let wanted: Vec<Option<RunState>> = match states {
            None => vec![None],
            Some(list) => {
                let mut out = Vec::new();
                for s in list {
                    let covered = RunState::of_marquez_name(s);
                    if covered.is_empty() {
                        return Err(Error::BadInput(format!(
                            "lastRunStates must be among NEW, RUNNING, COMPLETED, FAILED, ABORTED; got {s:?}"
                        )));
                    }
                    out.extend(covered.into_iter().map(Some));
                }
                out
            }
        };
        let mut jobs: BTreeMap<Id, Job> = BTreeMap::new();
        for state in wanted {
            let filter =
                JobFilter { namespace: namespace.map(str::to_string), last_run_state: state, ..Default::default() };
            let mut page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
            loop {
                let p = self.store.list_jobs(&filter, page).await?;
                let n = p.items.len() as i64;
                jobs.extend(p.items.into_iter().map(|j| (j.id, j)));
                if n < page.size {
                    break;
                }
                page.page += 1;
            }
        }
        let jobs: Vec<Job> = jobs.into_values().collect();
        let views = self.job_views(caller, jobs).await?;
        let mut out: Vec<Job> = views.into_iter().filter(|v| !v.restricted).map(|v| v.job).collect();
        out.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        Ok(out)
    }

    /// A visible job by name: NOT_FOUND, or FORBIDDEN when restricted.
    pub async fn marquez_job(&self, caller: &Caller, namespace: &str, name: &str) -> Result<MarquezJob> {
        let view = self.job(caller, None, Some(namespace), Some(name)).await?;
        if view.restricted {
            return Err(Error::Forbidden(format!(
                "job {name:?} in namespace {namespace:?} touches datastores you have no VIEWER permission on"
            )));
        }
        self.marquez_jobs(vec![view.job]).await?.pop().ok_or_else(|| Error::NotFound(format!("job {name:?} not found")))
    }

    /// A page of a visible job's runs, the latest first, and their total.
    pub async fn marquez_runs(
        &self,
        caller: &Caller,
        namespace: &str,
        name: &str,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<MarquezRun>, i64)> {
        let job = self.marquez_job(caller, namespace, name).await?;
        let mut runs = Vec::new();
        let mut total = 0;
        for (page, keep) in pages_for(offset, limit) {
            let p = self.store.runs_of_job(job.job.id, &RunFilter::default(), page).await?;
            total = p.total;
            runs.extend(p.items.into_iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, r)| r));
        }
        let runs = self.with_io(runs, &job.job).await?;
        Ok((runs, total))
    }

    pub(super) async fn with_io(&self, runs: Vec<Run>, job: &Job) -> Result<Vec<MarquezRun>> {
        let ids: Vec<Id> = runs.iter().map(|r| r.id).collect();
        let mut io: HashMap<Id, Vec<IoEntry>> = HashMap::new();
        if !ids.is_empty() {
            for (run, e) in self.store.run_io(&ids).await? {
                io.entry(run).or_default().push(e);
            }
        }
        Ok(runs
            .into_iter()
            .map(|run| {
                let (inputs, outputs) = split_io(io.get(&run.id).map(Vec::as_slice).unwrap_or_default());
                MarquezRun { run, job_namespace: job.namespace.clone(), job_name: job.name.clone(), inputs, outputs }
            })
            .collect())
    }

    /// A run by its id: NOT_FOUND, or FORBIDDEN when its job is restricted.
    pub async fn marquez_run(&self, caller: &Caller, run_id: &str) -> Result<MarquezRun> {
        let (run, restricted) = self.run(caller, run_id).await?;
        if restricted {
            return Err(Error::Forbidden(format!(
                "run {run_id:?} touches datastores you have no VIEWER permission on"
            )));
        }
        let job = self
            .store
            .jobs_by_ids(&[run.job_id])
            .await?
            .pop()
            .ok_or_else(|| Error::NotFound(format!("run {run_id:?} not found")))?;
        self.with_io(vec![run], &job).await?.pop().ok_or_else(|| Error::NotFound(format!("run {run_id:?} not found")))
    }
}
