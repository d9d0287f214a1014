//! A job's children and runs, a run's parent, children and events, and the stored events: each
//! read here checks what the caller may see (`service::jobs`'s rule: a run is shown as its job
//! is) and answers only that, so the transports reshape and never reach the store.

use std::collections::HashMap;

use super::jobs::{may_see, JobView, RunView};
use super::{Caller, Lineage, MAX_PAGE_SIZE};
use crate::domain::{EventFilter, Id, Page, PageRequest, Run, RunFilter, StoredEvent};
use crate::error::Result;

impl Lineage {
    /// The jobs whose parent is `job`, as the caller may see them; none under a restricted job.
    pub async fn child_jobs(&self, caller: &Caller, job: &JobView) -> Result<Vec<JobView>> {
        if job.restricted {
            return Ok(Vec::new());
        }
        let children = self.store.child_jobs(&[job.job.id]).await?;
        self.job_views(caller, children).await
    }

    /// A page of `job`'s runs, the latest first; none of a restricted job. In an as-of view
    /// (`job.as_of`) only the runs begun by then, each as it stood then.
    pub async fn job_runs(&self, job: &JobView, filter: RunFilter, page: PageRequest) -> Result<Page<RunView>> {
        if job.restricted {
            return Ok(Page { items: Vec::new(), total: 0, page });
        }
        let filter = RunFilter {
            until: match (filter.until, job.as_of) {
                (Some(u), Some(t)) => Some(u.min(t)),
                (u, t) => u.or(t),
            },
            ..filter
        };
        let p = self.store.runs_of_job(job.job.id, &filter, page).await?;
        let items: Vec<Run> = match job.as_of {
            None => p.items,
            Some(t) => p.items.into_iter().filter_map(|r| super::jobs_asof::run_as_of(r, t)).collect(),
        };
        // A visible job's runs are visible: they touch what the job touches.
        let items = items.into_iter().map(|run| RunView { run, restricted: false }).collect();
        Ok(Page { items, total: p.total, page: p.page })
    }

    /// The run of `run`'s `parent` facet, when stored, as the caller may see it; none for a
    /// restricted run.
    pub async fn run_parent(&self, caller: &Caller, run: &RunView) -> Result<Option<RunView>> {
        if run.restricted {
            return Ok(None);
        }
        let Some(parent) = run.run.parent_run_id.clone() else { return Ok(None) };
        let Some(found) = self.store.runs_by_run_ids(&[parent]).await?.into_iter().next() else {
            return Ok(None);
        };
        Ok(self.run_views(caller, vec![found]).await?.pop())
    }

    /// The runs whose `parent` facet names `run`, ordered by id, each as the caller may see it
    /// (one visibility check for all of them); none for a restricted run.
    pub async fn child_runs(&self, caller: &Caller, run: &RunView) -> Result<Vec<RunView>> {
        if run.restricted {
            return Ok(Vec::new());
        }
        let found = self.store.child_runs(std::slice::from_ref(&run.run.run_id)).await?;
        self.run_views(caller, found).await
    }

    /// `run`'s stored OpenLineage events, newest first (at most `MAX_PAGE_SIZE`); none for a
    /// restricted run.
    pub async fn run_events(&self, run: &RunView) -> Result<Vec<StoredEvent>> {
        if run.restricted {
            return Ok(Vec::new());
        }
        let filter = EventFilter { run_id: Some(run.run.run_id.clone()), ..Default::default() };
        let page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
        Ok(self.store.list_events(&filter, page).await?.items)
    }

    /// A page of stored OpenLineage events (`openLineageEvents`).
    pub async fn events(&self, filter: &EventFilter, page: PageRequest) -> Result<Page<StoredEvent>> {
        Ok(self.store.list_events(filter, page).await?)
    }

    /// Runs as the caller may see them, in the order given: each as its job, the jobs' datastores
    /// read once for all (a run whose job is gone touches nothing, so it is shown).
    pub async fn run_views(&self, caller: &Caller, runs: Vec<Run>) -> Result<Vec<RunView>> {
        if caller.unrestricted_admin || runs.is_empty() {
            return Ok(runs.into_iter().map(|run| RunView { run, restricted: false }).collect());
        }
        let mut jobs: Vec<Id> = runs.iter().map(|r| r.job_id).collect();
        jobs.sort_unstable();
        jobs.dedup();
        let datastores: HashMap<Id, Vec<Id>> = self.job_datastores(&jobs).await?;
        Ok(runs
            .into_iter()
            .map(|run| {
                let restricted = !may_see(caller, datastores.get(&run.job_id).cloned().unwrap_or_default());
                RunView { run, restricted }
            })
            .collect())
    }
}
