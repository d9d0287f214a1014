//! Jobs and runs as GraphQL shows them: the resolvers of `Job`, `Run`, a container's health and
//! last write (defined in `types.rs`, which other files name them from), the datasets they read
//! and wrote, and `incidents`; what a graph with jobs adds. The reads other files make of jobs
//! (a container's jobs, health, `Run::checked`) are in `shared.rs`. Restricted jobs and runs (the
//! caller lacks VIEWER on a datastore they touch, `service::jobs`) answer their id and
//! `restricted: true`, and null or empty for everything else.

use async_graphql::{Context, Enum, Json, Object, SimpleObject};

use super::scalars::{dt, odt, DateTime};
use super::shared::{load_container, load_job};
use super::{caller, lineage, loaders, paged, Container, ExternalNode, GqlResult, LineageEdge, Page, StoredEvent};
use super::{ContainerHealth, HealthState, Job, JobEdge, JobEdgeKind, LastWrite, Run};
use crate::domain::{self, End, Id, IoDirection, IoEntry, Timestamp};
use crate::error::Error;
use crate::service::{self, jobs as svc};

// GraphQL's spelling of the domain's `RunState` (a stored state it does not know reads as
// OTHER, `RunState::stored`); its doc is the schema's description.
/// An OpenLineage run state (the event types a run reports).
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "crate::domain::RunState")]
pub enum RunState {
    Start,
    Running,
    Complete,
    Fail,
    Abort,
    Other,
}

impl Job {
    fn visible(&self) -> Option<&domain::Job> {
        (!self.0.restricted).then_some(&self.0.job)
    }
}

async fn load_run(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Run>> {
    let Some(run) = loaders(ctx).runs.load_one(id).await.map_err(Error::from)? else { return Ok(None) };
    Ok(Some(Run::checked(ctx, run).await?))
}

/// What a job or run read or wrote: a container or an external asset, as the event named it.
pub struct JobDataset(pub IoEntry);

#[Object]
impl JobDataset {
    /// `CONTAINER` or `EXTERNAL`.
    async fn kind(&self) -> &str {
        match self.0.end {
            End::External { .. } => "EXTERNAL",
            _ => "CONTAINER",
        }
    }
    /// The lineage graph's node id: the container's id as text, or `ext:openlineage:<fqn>`.
    async fn node_id(&self) -> String {
        match &self.0.end {
            End::External { fqn } => service::external_node_id(service::openlineage::SOURCE_TYPE, fqn),
            end => end.container_id().unwrap_or_default().to_string(),
        }
    }
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match self.0.end.container_id() {
            Some(id) => load_container(ctx, id).await,
            None => Ok(None),
        }
    }
    async fn external(&self) -> Option<ExternalNode> {
        let fqn = self.0.end.external_fqn()?;
        Some(ExternalNode {
            node_type: "external",
            id: service::external_node_id(service::openlineage::SOURCE_TYPE, fqn),
            fqn: fqn.to_string(),
            source_type: service::openlineage::SOURCE_TYPE.to_string(),
            is_target: false,
        })
    }
    /// The OpenLineage namespace and name the events used.
    async fn namespace(&self) -> &str {
        &self.0.namespace
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// When it was last read (inputs) or written (outputs).
    async fn at(&self) -> DateTime {
        dt(self.0.at)
    }
}

fn datasets(io: Vec<IoEntry>, direction: IoDirection) -> Vec<JobDataset> {
    io.into_iter().filter(|e| e.direction == direction).map(JobDataset).collect()
}

#[Object]
impl Job {
    async fn id(&self) -> Id {
        self.0.job.id
    }
    /// The caller lacks VIEWER on a datastore the job reads or writes: only `id` is shown.
    async fn restricted(&self) -> bool {
        self.0.restricted
    }
    async fn namespace(&self) -> Option<&str> {
        self.visible().map(|j| j.namespace.as_str())
    }
    async fn name(&self) -> Option<&str> {
        self.visible().map(|j| j.name.as_str())
    }
    /// The `jobType` facet's `processingType`: `BATCH` or `STREAMING`.
    async fn processing_type(&self) -> Option<&str> {
        self.visible()?.processing_type.as_deref()
    }
    async fn integration(&self) -> Option<&str> {
        self.visible()?.integration.as_deref()
    }
    async fn job_type(&self) -> Option<&str> {
        self.visible()?.job_type.as_deref()
    }
    /// The `documentation` facet's description.
    async fn description(&self) -> Option<&str> {
        self.visible()?.description.as_deref()
    }
    /// The `ownership` facet's owners.
    async fn owners(&self) -> Vec<String> {
        self.visible().map(|j| j.owners.clone()).unwrap_or_default()
    }
    /// The `sourceCodeLocation` facet (`type`, `url`, `repoUrl`, `path`, `version`, `tag`, `branch`).
    async fn source_code_location(&self) -> Option<Json<serde_json::Value>> {
        let text = self.visible()?.source_code_location.as_deref()?;
        serde_json::from_str(text).ok().map(Json)
    }
    /// The `sql` facet's query.
    async fn sql(&self) -> Option<&str> {
        self.visible()?.sql.as_deref()
    }
    /// The job of the `parent` run facet (an Airflow DAG of a task, for example).
    async fn parent(&self, ctx: &Context<'_>) -> GqlResult<Option<Job>> {
        match self.visible().and_then(|j| j.parent_id) {
            Some(id) => load_job(ctx, id).await,
            None => Ok(None),
        }
    }
    /// The top of the parent chain, when producers send it.
    async fn root(&self, ctx: &Context<'_>) -> GqlResult<Option<Job>> {
        match self.visible().and_then(|j| j.root_id) {
            Some(id) => load_job(ctx, id).await,
            None => Ok(None),
        }
    }
    async fn children(&self, ctx: &Context<'_>) -> GqlResult<Vec<Job>> {
        Ok(lineage(ctx).child_jobs(caller(ctx), &self.0).await?.into_iter().map(Job).collect())
    }
    /// What its runs (and job events) read, each with when it was last read (in an as-of
    /// answer, what its latest run then read).
    async fn inputs(&self, ctx: &Context<'_>) -> GqlResult<Vec<JobDataset>> {
        self.io(ctx, IoDirection::Read).await
    }
    /// What its runs (and job events) wrote, each with when it was last written (in an as-of
    /// answer, what its latest run then wrote).
    async fn outputs(&self, ctx: &Context<'_>) -> GqlResult<Vec<JobDataset>> {
        self.io(ctx, IoDirection::Wrote).await
    }
    /// The run that began last (in an as-of answer, the one that had begun last by then, with
    /// the states it had reported by then).
    async fn latest_run(&self, ctx: &Context<'_>) -> GqlResult<Option<Run>> {
        let Some(job) = self.visible() else { return Ok(None) };
        if let Some(at) = self.0.as_of {
            let cached = loaders(ctx).latest_runs_at.lock().ok().and_then(|c| c.get(&(at, job.id)).cloned());
            let run = match cached {
                Some(run) => run,
                None => lineage(ctx).view_at(Some(at)).latest_runs(std::slice::from_ref(job)).await?.remove(&job.id),
            };
            return Ok(run.map(|run| Run(svc::RunView { run, restricted: false })));
        }
        match job.latest_run_id {
            Some(id) => load_run(ctx, id).await,
            None => Ok(None),
        }
    }
    /// Its runs, the latest first; `since`/`until` bound when they began (in an as-of answer,
    /// those begun by then, as they stood then).
    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn runs(
        &self,
        ctx: &Context<'_>,
        state: Option<RunState>,
        since: Option<DateTime>,
        until: Option<DateTime>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<RunPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        let filter =
            domain::RunFilter { state: state.map(Into::into), since: since.map(|d| d.0), until: until.map(|d| d.0) };
        Ok(Page::new(lineage(ctx).job_runs(&self.0, filter, page).await?, Run))
    }
    async fn first_seen_at(&self) -> Option<DateTime> {
        self.visible().map(|j| dt(j.first_seen_at))
    }
    async fn last_seen_at(&self) -> Option<DateTime> {
        self.visible().map(|j| dt(j.last_seen_at))
    }
}

impl Job {
    async fn io(&self, ctx: &Context<'_>, direction: IoDirection) -> GqlResult<Vec<JobDataset>> {
        if self.visible().is_none() {
            return Ok(Vec::new());
        }
        let io = match self.0.as_of {
            None => loaders(ctx).job_io.load_one(self.0.job.id).await.map_err(Error::from)?.unwrap_or_default(),
            Some(_) => {
                let view = lineage(ctx).view_at(self.0.as_of);
                view.job_io_at(&[self.0.job.id]).await?.into_iter().map(|(_, e)| e).collect()
            }
        };
        Ok(datasets(io, direction))
    }
}

/// One state a run reported and when.
#[derive(SimpleObject)]
pub struct RunStateChange {
    pub state: RunState,
    pub at: DateTime,
}

impl Run {
    fn visible(&self) -> Option<&domain::Run> {
        (!self.0.restricted).then_some(&self.0.run)
    }
}

#[Object]
impl Run {
    /// The store's id of the run (restricted runs show only this).
    async fn id(&self) -> Id {
        self.0.run.id
    }
    async fn restricted(&self) -> bool {
        self.0.restricted
    }
    /// The OpenLineage `runId`.
    async fn run_id(&self) -> Option<&str> {
        self.visible().map(|r| r.run_id.as_str())
    }
    async fn job(&self, ctx: &Context<'_>) -> GqlResult<Option<Job>> {
        load_job(ctx, self.0.run.job_id).await
    }
    /// Its latest terminal state once it has one (COMPLETE, FAIL, ABORT stay), else its latest.
    async fn state(&self) -> Option<RunState> {
        self.visible().map(|r| r.state.into())
    }
    /// Every state it reported, by time.
    async fn states(&self) -> Vec<RunStateChange> {
        self.visible()
            .map(|r| r.states.iter().map(|s| RunStateChange { state: s.state.into(), at: dt(s.at) }).collect())
            .unwrap_or_default()
    }
    async fn started_at(&self) -> Option<DateTime> {
        odt(self.visible()?.started_at)
    }
    async fn ended_at(&self) -> Option<DateTime> {
        odt(self.visible()?.ended_at)
    }
    async fn duration_ms(&self) -> Option<i64> {
        self.visible()?.duration_ms()
    }
    async fn nominal_start_time(&self) -> Option<DateTime> {
        odt(self.visible()?.nominal_start)
    }
    async fn nominal_end_time(&self) -> Option<DateTime> {
        odt(self.visible()?.nominal_end)
    }
    /// The `errorMessage` facet's message.
    async fn error_message(&self) -> Option<&str> {
        self.visible()?.error_message.as_deref()
    }
    /// The `errorMessage` facet's `programmingLanguage`.
    async fn error_language(&self) -> Option<&str> {
        self.visible()?.error_language.as_deref()
    }
    /// The run of the `parent` run facet, when Tributary has it.
    async fn parent(&self, ctx: &Context<'_>) -> GqlResult<Option<Run>> {
        Ok(lineage(ctx).run_parent(caller(ctx), &self.0).await?.map(Run))
    }
    async fn children(&self, ctx: &Context<'_>) -> GqlResult<Vec<Run>> {
        Ok(lineage(ctx).child_runs(caller(ctx), &self.0).await?.into_iter().map(Run).collect())
    }
    /// What it read, over all its events.
    async fn inputs(&self, ctx: &Context<'_>) -> GqlResult<Vec<JobDataset>> {
        self.io(ctx, IoDirection::Read).await
    }
    /// What it wrote, over all its events.
    async fn outputs(&self, ctx: &Context<'_>) -> GqlResult<Vec<JobDataset>> {
        self.io(ctx, IoDirection::Wrote).await
    }
    /// The lineage edges whose OpenLineage evidence names this run (as the run that last
    /// asserted them, or the first).
    async fn edges(&self, ctx: &Context<'_>) -> GqlResult<Vec<LineageEdge>> {
        let Some(run) = self.visible() else { return Ok(Vec::new()) };
        let edges = lineage(ctx).run_edges(run).await?;
        Ok(edges.into_iter().map(LineageEdge).collect())
    }
    /// Its stored OpenLineage events, newest first (at most 1,000).
    async fn events(&self, ctx: &Context<'_>) -> GqlResult<Vec<StoredEvent>> {
        Ok(lineage(ctx).run_events(&self.0).await?.into_iter().map(StoredEvent).collect())
    }
}

impl Run {
    async fn io(&self, ctx: &Context<'_>, direction: IoDirection) -> GqlResult<Vec<JobDataset>> {
        if self.visible().is_none() {
            return Ok(Vec::new());
        }
        let io = loaders(ctx).run_io.load_one(self.0.run.id).await.map_err(Error::from)?.unwrap_or_default();
        Ok(datasets(io, direction))
    }
}

pub type JobPage = Page<Job>;
pub type RunPage = Page<Run>;

#[Object]
impl LastWrite {
    async fn run(&self, ctx: &Context<'_>) -> GqlResult<Option<Run>> {
        load_run(ctx, self.run_id).await
    }
    async fn at(&self) -> DateTime {
        dt(self.at)
    }
}

#[Object]
impl ContainerHealth {
    async fn state(&self) -> HealthState {
        self.0.state.into()
    }
    /// When a job last wrote it completely.
    async fn last_written_at(&self) -> Option<DateTime> {
        odt(self.0.last_written_at)
    }
    /// The latest run of a job that writes it.
    async fn last_run(&self, ctx: &Context<'_>) -> GqlResult<Option<Run>> {
        match &self.0.last_run {
            Some(r) => Ok(Some(Run::checked(ctx, r.clone()).await?)),
            None => Ok(None),
        }
    }
    /// The failed runs that make it FAILED or STALE, nearest first.
    async fn causes(&self, ctx: &Context<'_>) -> GqlResult<Vec<Run>> {
        // One visibility check for all of them (`Lineage::run_views`), not one per run.
        let runs = lineage(ctx).run_views(caller(ctx), self.0.causes.clone()).await?;
        Ok(runs.into_iter().map(Run).collect())
    }
}

/// Jobs' latest runs as of an instant, read for a whole graph, for each `Job.latestRun` to find.
pub(super) fn feed_latest_runs_at(
    ctx: &Context<'_>,
    runs: impl Iterator<Item = ((Timestamp, Id), Option<domain::Run>)>,
) {
    if let Ok(mut cache) = loaders(ctx).latest_runs_at.lock() {
        cache.extend(runs);
    }
}

/// A run that failed and is still its job's latest.
pub struct Incident(pub svc::Incident);

#[Object]
impl Incident {
    async fn run(&self, ctx: &Context<'_>) -> GqlResult<Run> {
        Run::checked(ctx, self.0.run.clone()).await
    }
    async fn job(&self, ctx: &Context<'_>) -> GqlResult<Option<Job>> {
        load_job(ctx, self.0.run.job_id).await
    }
    async fn state(&self) -> RunState {
        self.0.run.state.into()
    }
    async fn error_message(&self) -> Option<&str> {
        self.0.run.error_message.as_deref()
    }
    /// When it failed.
    async fn at(&self) -> Option<DateTime> {
        odt(self.0.run.ended_at)
    }
    /// Containers it wrote or should have written and did not refresh.
    async fn failed_count(&self) -> i64 {
        self.0.failed_count
    }
    /// Containers downstream of those left STALE by it.
    async fn stale_count(&self) -> i64 {
        self.0.stale_count
    }
}

#[derive(SimpleObject)]
pub struct IncidentPage {
    pub items: Vec<Incident>,
    /// Pass as `after` for the next page.
    pub end_cursor: String,
    pub has_more: bool,
}

/// The jobs and job edges of a graph (as of `at`, in an as-of answer), as the caller may see them.
pub(super) async fn jobs_out(
    ctx: &Context<'_>,
    between: svc::JobsBetween,
    at: Option<Timestamp>,
) -> GqlResult<(Vec<Job>, Vec<JobEdge>)> {
    let jobs: Vec<Job> =
        lineage(ctx).view_at(at).job_views(caller(ctx), between.jobs).await?.into_iter().map(Job).collect();
    let edges = between
        .links
        .into_iter()
        .map(|l| {
            let (container_id, external_node_id, node) = match &l.end {
                End::External { fqn } => {
                    let id = service::external_node_id(service::openlineage::SOURCE_TYPE, fqn);
                    (None, Some(id.clone()), id)
                }
                end => {
                    let id = end.container_id().unwrap_or_default();
                    (Some(id), None, id.to_string())
                }
            };
            let job = format!("job:{}", l.job_id);
            let (kind, source_node_id, target_node_id) = match l.direction {
                IoDirection::Read => (JobEdgeKind::Input, node, job),
                IoDirection::Wrote => (JobEdgeKind::Output, job, node),
            };
            JobEdge { job_id: l.job_id, kind, container_id, external_node_id, source_node_id, target_node_id }
        })
        .collect();
    Ok((jobs, edges))
}
