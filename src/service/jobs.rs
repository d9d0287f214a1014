//! Jobs and runs as the API asks about them: lists and look-ups with their permission rule,
//! what a run touched and left stale (`run_impact`), the failed runs that are still their job's
//! latest (`incidents`), a container's producers, consumers and health, and the one-off backfill
//! of jobs and runs from the stored events of a store made before they were recorded.
//!
//! **Who sees a job.** A job (and each of its runs) is shown to a caller who has `VIEWER` on the
//! datastore of every container it reads or writes, the rule evidence follows; to anyone else it
//! is a restricted placeholder (its id, no name, no facets), so lists and graphs keep their
//! shape and nothing leaks. Unrestricted admins see everything.
//!
//! **Health, and why it stays cheap.** A container is `FAILED` when the latest run of a job that
//! writes it failed or aborted after the container's last complete write; `STALE` when something
//! within 20 hops upstream is `FAILED`; otherwise `FRESH` when a job writes it and `UNKNOWN` when
//! none does. Nothing is stored as a flag: [`HealthIndex`] is computed per request from the jobs'
//! latest runs that are failures (one indexed read), what those runs wrote (or their jobs', when
//! they wrote nothing), and one downstream traversal from the failed containers, one statement
//! per level. Its cost follows the number of failures, not the size of the graph: with nothing
//! failing it is one read.
//!
//! **As of an instant.** Read through a view (`Lineage::at`), the same functions answer for the
//! view's instant: the jobs' datasets, latest runs and failures come from the runs then
//! (`service::jobs_asof`), the stale walk from the edges live then.
//!
//! # How it fits
//!
//! (`domain::jobs`, `service/openlineage/runs.rs`, `service::jobs`, `api::schema::jobs`, `store/*/jobs.rs`). An
//! OpenLineage job (namespace and name) and run (`runId`) are records of their own, written by `Store::record_run` in
//! the event's transaction, right after its `apply_assertions`: the event's `RunRecord` (the job facets `jobType`,
//! `documentation`, `ownership`, `sourceCodeLocation`, `sql`; the run facets `nominalTime`, `errorMessage`, `parent`;
//! the datasets it read and wrote, as the resolver resolved them) is folded into the stored job and run by
//! `domain::jobs`'s pure rules (`merge_job`, `merge_run`, `merge_io`, `note_run`), which both stores call, so events
//! may arrive in any order: a job's facets are its latest event's, a run's state is its latest terminal state once it
//! has one (a terminal state stays terminal), its datasets the union of its events', and a job keeps its latest run (by
//! start) and, per written dataset, its latest COMPLETE run (`completed`). A run's datasets from earlier events
//! (`prior_datasets`, read beside the other reads of `apply_resolved`) are paired with the event's own when its table
//! edges are built, never with each other, so a run that sends its inputs on START and its outputs on COMPLETE (Spark's
//! DataSourceV2) gets its table edge. That read is `Store::run_with_io` (one statement); `record_run` writes only the
//! datasets whose time moves (one multi-row upsert per table; on Neo4j after its own locking lookup of the job and
//! run). The embedded store keeps a session's job and run updates in the session (`sqlite/jobs.rs` `JobsBuffer`):
//! `run_with_io` and `record_run` read and merge there, a new job or run is inserted at once (its id is needed), and
//! each updated row, dataset row and completed write is written once, before the commit or before any read of those
//! tables in the session, so a run's START and COMPLETE in one request cost one write of each (outside a session a call
//! flushes its own buffer at its end). A store upgraded from before jobs holds a note (`meta/jobs_backfill`, written by
//! its migration step); `serve` then records the stored events' jobs and runs through the same `run_record` before it
//! listens (`Lineage::backfill_jobs_and_runs`, `lifecycle::backfill_jobs_and_runs`), resolving datasets to what exists
//! and creating nothing. `service::jobs` answers the queries with one permission rule: a job (and its runs) is shown to
//! a caller with `VIEWER` on the datastore of every container it reads or writes, and is a placeholder
//! (`JobView::restricted`: id only) to anyone else. **Health stays cheap** because it is never stored: `HealthIndex` is
//! computed once per request (cached in `Loaders::health_index`) from the jobs' latest runs that are failures (one
//! indexed read: the job row names its latest run), what those runs wrote (or their jobs' outputs), whether each was
//! written completely since (`job_io.completed`), and one downstream traversal from the failed containers, one
//! statement per level, at most 20; with nothing failing it is one read, and its cost follows the failures, not the
//! graph. `runImpact` is the `impact` traversal started from several containers at once (`Start::Nodes`), the run's
//! outputs at distance 0; `lineageGraph(includeJobs)` and `jobLineageGraph` add `Lineage::jobs_between` (the jobs with
//! an input and an output among the graph's nodes, from `jobs_of_ends`). In GraphQL, a page of containers' `producers`,
//! `consumers` and `lastWrite` share one `jobs_of_ends` read (`Loaders::container_jobs`), and evidence's `job` and
//! `run` go through per-request loaders by name and by `runId`. **As of an instant** (`service::jobs_asof`) the same
//! functions read through the view's instant, as traversals do with `level_edges`: `job_io_at`/`jobs_of_ends_at` give
//! what each job's latest run then read and wrote (`Store::latest_runs_at`: the run that began last by then),
//! `latest_runs` that run with its states cut at the instant (`run_as_of`), `failing_runs` the failures still latest
//! then (`Store::failed_latest_runs_at`), and the stale walk reads the edges live then. Nothing is stored for it: the
//! runs' states and datasets are the history.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::auth::{Caller, Permission};
use crate::domain::jobs::HealthState;
use crate::domain::{
    Direction, End, Id, IoDirection, IoEntry, Job, JobFilter, Page, PageRequest, Run, RunState, Timestamp,
};
use crate::error::{Error, Result};
use crate::service::{Lineage, Transitive};

/// How far upstream a failure makes a container stale.
pub const STALE_DEPTH: usize = 20;
/// The most failing runs a health computation considers (the newest first).
const MAX_FAILURES: i64 = 10_000;
/// The longest run id accepted (OpenLineage's are UUIDs; producers send other strings too).
const MAX_RUN_ID: usize = 256;

/// A job as a caller may see it.
#[derive(Debug, Clone)]
pub struct JobView {
    pub job: Job,
    /// The caller lacks `VIEWER` on a datastore the job touches: only the id is shown.
    pub restricted: bool,
    /// The instant of the view it was read through: its runs and datasets are asked as of it.
    pub as_of: Option<Timestamp>,
}

/// A run as a caller may see it: restricted as its job is (only the id is shown).
#[derive(Debug, Clone)]
pub struct RunView {
    pub run: Run,
    pub restricted: bool,
}

/// The health of one container.
#[derive(Debug, Clone)]
pub struct Health {
    pub state: HealthState,
    /// When a job last wrote it completely.
    pub last_written_at: Option<Timestamp>,
    /// The latest run of a job that writes it.
    pub last_run: Option<Run>,
    /// The failed runs that make it FAILED or STALE, nearest first.
    pub causes: Vec<Run>,
}

/// What is failing in the store now: see the module's notes.
#[derive(Debug, Default)]
pub struct HealthIndex {
    /// The failed runs, by run id (the store's).
    runs: HashMap<Id, Run>,
    /// Containers FAILED, with the failed runs (their ids) that make them so.
    failed: HashMap<Id, Vec<Id>>,
    /// Containers STALE: (distance, failed run id), nearest first.
    stale: HashMap<Id, Vec<(usize, Id)>>,
}

impl HealthIndex {
    /// FAILED or STALE when a failed run left the container so, from the index alone (no store
    /// read, so a whole graph's nodes cost nothing more); `None` for the rest (fresh or unknown:
    /// `health_of` tells those apart).
    pub fn alert(&self, id: Id) -> Option<HealthState> {
        if self.failed.contains_key(&id) {
            Some(HealthState::Failed)
        } else if self.stale.contains_key(&id) {
            Some(HealthState::Stale)
        } else {
            None
        }
    }
}

/// One failed run still its job's latest, with what it left stale.
#[derive(Debug, Clone)]
pub struct Incident {
    pub run: Run,
    /// Containers it wrote or should have written and did not refresh (FAILED because of it).
    pub failed_count: i64,
    /// Containers downstream of those (within `STALE_DEPTH`) STALE because of it.
    pub stale_count: i64,
}

/// A page of incidents: `after` cursors are positions in the list, newest failure first.
#[derive(Debug, Clone)]
pub struct IncidentPage {
    pub items: Vec<Incident>,
    pub end_cursor: String,
    pub has_more: bool,
}

/// The jobs between a graph's nodes: each job with a dataset it read and one it wrote among
/// them, and those datasets (`JobLink`s), for the dataset -> job -> dataset view.
#[derive(Debug, Clone, Default)]
pub struct JobsBetween {
    pub jobs: Vec<Job>,
    pub links: Vec<JobLink>,
    /// As of an instant: each job's latest run then, as it stood then (a job with no run by
    /// then has none); `None` today, when a job names its own (`Job::latest_run_id`).
    pub latest_runs: Option<HashMap<Id, Run>>,
}

/// A job's input (`Read`: dataset -> job) or output (`Wrote`: job -> dataset) in a graph.
#[derive(Debug, Clone, PartialEq)]
pub struct JobLink {
    pub job_id: Id,
    pub end: End,
    pub direction: IoDirection,
    /// The dataset's name as the job's events sent it (Marquez names its nodes so).
    pub namespace: String,
    pub name: String,
}

/// The job (and run) an `ingestSql` call's statements belong to, when the caller names one.
#[derive(Debug, Clone)]
pub struct SqlJob {
    pub namespace: String,
    pub name: String,
    /// The run's id; a new UUID when not given.
    pub run_id: Option<String>,
}

/// One run of a SQL job among a batch of analysed statements (`record_sql`): the statements it
/// ran (those whose `index`, the input statement they came from, is in `statements`) and when.
/// An `ingestSql(job:)` call is one run of all its statements, ended when it was recorded; a
/// query log's row with a user is one run of its statement, with the log's times.
#[derive(Debug, Clone)]
pub struct SqlRun {
    pub job: crate::domain::JobName,
    pub run_id: String,
    pub statements: std::ops::Range<usize>,
    /// The run's START, when known together with its end.
    pub started_at: Option<Timestamp>,
    /// Its COMPLETE, and when its datasets were read and written.
    pub ended_at: Timestamp,
}

impl SqlRun {
    /// `BAD_USER_INPUT` for a job name or run id an OpenLineage event could not carry either.
    pub fn validate(&self) -> Result<()> {
        super::require_name("job namespace", &self.job.namespace)?;
        super::require_name("job name", &self.job.name)?;
        validate_run_id(&self.run_id)
    }
}

/// Whether the caller may see what touches these datastores.
pub fn may_see(caller: &Caller, datastores: impl IntoIterator<Item = Id>) -> bool {
    caller.unrestricted_admin || datastores.into_iter().all(|d| caller.has(d, Permission::Viewer))
}

fn run_not_found(run_id: &str) -> Error {
    Error::NotFound(format!("run {run_id:?} not found"))
}

/// `BAD_USER_INPUT` for a run id no producer could have sent.
pub fn validate_run_id(run_id: &str) -> Result<()> {
    if run_id.trim().is_empty() {
        return Err(Error::BadInput("runId must not be empty".into()));
    }
    if run_id.len() > MAX_RUN_ID || run_id.chars().any(char::is_control) {
        return Err(Error::BadInput(format!(
            "runId must be at most {MAX_RUN_ID} characters without control characters (a UUID, as OpenLineage sends)"
        )));
    }
    Ok(())
}

impl Lineage {
    /// The datastores of the containers each job reads or writes.
    pub async fn job_datastores(&self, job_ids: &[Id]) -> Result<HashMap<Id, Vec<Id>>> {
        let io = self.store.job_io(job_ids).await?;
        let containers: Vec<Id> = io.iter().filter_map(|(_, e)| e.end.container_id()).collect();
        let datastore_of: HashMap<Id, Id> = if containers.is_empty() {
            HashMap::new()
        } else {
            self.store.containers_by_ids(&containers).await?.into_iter().map(|c| (c.id, c.datastore_id)).collect()
        };
        let mut out: HashMap<Id, Vec<Id>> = job_ids.iter().map(|id| (*id, Vec::new())).collect();
        for (job, e) in io {
            if let Some(d) = e.end.container_id().and_then(|c| datastore_of.get(&c)) {
                out.entry(job).or_default().push(*d);
            }
        }
        Ok(out)
    }

    /// Each job's current datasets (Marquez shows a job's current version): its latest run's,
    /// else its own.
    pub(super) async fn current_io(&self, jobs: &[Job]) -> Result<HashMap<Id, Vec<IoEntry>>> {
        let latest: Vec<Id> = jobs.iter().filter_map(|j| j.latest_run_id).collect();
        let mut run_io: HashMap<Id, Vec<IoEntry>> = HashMap::new();
        if !latest.is_empty() {
            for (run, e) in self.store.run_io(&latest).await? {
                run_io.entry(run).or_default().push(e);
            }
        }
        self.current_io_with(jobs, &run_io).await
    }

    /// `current_io` given the latest runs' datasets (by run id): a job whose latest run has none
    /// (a job event's declared datasets, a run that reported nothing) shows its own.
    pub(super) async fn current_io_with(
        &self,
        jobs: &[Job],
        run_io: &HashMap<Id, Vec<IoEntry>>,
    ) -> Result<HashMap<Id, Vec<IoEntry>>> {
        let mut out: HashMap<Id, Vec<IoEntry>> = HashMap::new();
        let mut rest = Vec::new();
        for j in jobs {
            match j.latest_run_id.and_then(|r| run_io.get(&r)).filter(|rows| !rows.is_empty()) {
                Some(rows) => {
                    out.insert(j.id, rows.clone());
                }
                None => rest.push(j.id),
            }
        }
        if !rest.is_empty() {
            for (job, e) in self.store.job_io(&rest).await? {
                out.entry(job).or_default().push(e);
            }
        }
        Ok(out)
    }

    /// The jobs as the caller may see them.
    pub async fn job_views(&self, caller: &Caller, jobs: Vec<Job>) -> Result<Vec<JobView>> {
        if caller.unrestricted_admin {
            return Ok(jobs.into_iter().map(|job| JobView { job, restricted: false, as_of: self.as_of }).collect());
        }
        let ids: Vec<Id> = jobs.iter().map(|j| j.id).collect();
        let datastores = self.job_datastores(&ids).await?;
        Ok(jobs
            .into_iter()
            .map(|job| {
                let restricted = !may_see(caller, datastores.get(&job.id).cloned().unwrap_or_default());
                JobView { job, restricted, as_of: self.as_of }
            })
            .collect())
    }

    /// The filter of `jobs(...)`: a state is one of the run states, a datastore must exist.
    pub async fn job_filter(
        &self,
        namespace: Option<String>,
        name: Option<String>,
        last_run_state: Option<RunState>,
        datastore_id: Option<Id>,
    ) -> Result<JobFilter> {
        let container_ids = match datastore_id {
            None => None,
            Some(d) => {
                if self.store.datastores_by_ids(&[d]).await?.is_empty() {
                    return Err(Error::NotFound(format!("datastore {d} not found")));
                }
                let mut ids = Vec::new();
                let mut page = PageRequest { page: 1, size: super::MAX_PAGE_SIZE };
                loop {
                    let p = self.store.list_containers(Some(d), None, page).await?;
                    let n = p.items.len() as i64;
                    ids.extend(p.items.into_iter().map(|c| c.id));
                    if n < page.size {
                        break;
                    }
                    page.page += 1;
                }
                Some(ids)
            }
        };
        Ok(JobFilter { namespace, name: name.map(|n| n.to_lowercase()), last_run_state, container_ids })
    }

    /// `jobs(...)`: a page of jobs, restricted ones as placeholders.
    pub async fn jobs(&self, caller: &Caller, filter: JobFilter, page: PageRequest) -> Result<Page<JobView>> {
        let page = self.store.list_jobs(&filter, page).await?;
        let items = self.job_views(caller, page.items).await?;
        Ok(Page { items, total: page.total, page: page.page })
    }

    /// `job(id:)` or `job(namespace:, name:)`: NOT_FOUND naming what was asked for.
    pub async fn job(
        &self,
        caller: &Caller,
        id: Option<Id>,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Result<JobView> {
        let found = match (id, namespace, name) {
            (Some(id), None, None) => self
                .store
                .jobs_by_ids(&[id])
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| Error::NotFound(format!("job {id} not found")))?,
            (None, Some(ns), Some(n)) => {
                super::require_name("namespace", ns)?;
                super::require_name("name", n)?;
                self.store
                    .job_by_name(ns, n)
                    .await?
                    .ok_or_else(|| Error::NotFound(format!("job {n:?} in namespace {ns:?} not found")))?
            }
            _ => return Err(Error::BadInput("give a job's id, or its namespace and name (not both)".into())),
        };
        Ok(self.job_views(caller, vec![found]).await?.remove(0))
    }

    /// `run(runId:)`: the run with its job's visibility.
    pub async fn run(&self, caller: &Caller, run_id: &str) -> Result<(Run, bool)> {
        validate_run_id(run_id)?;
        let run = self
            .store
            .runs_by_run_ids(&[run_id.to_string()])
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| run_not_found(run_id))?;
        let restricted = self.run_restricted(caller, &run).await?;
        Ok((run, restricted))
    }

    async fn run_restricted(&self, caller: &Caller, run: &Run) -> Result<bool> {
        if caller.unrestricted_admin {
            return Ok(false);
        }
        let datastores = self.job_datastores(&[run.job_id]).await?;
        Ok(!may_see(caller, datastores.get(&run.job_id).cloned().unwrap_or_default()))
    }

    /// What a run wrote, or its job's outputs when the run wrote nothing: the containers a
    /// failure of it leaves unrefreshed.
    async fn outputs_of_runs(&self, runs: &[Run]) -> Result<HashMap<Id, Vec<Id>>> {
        let run_ids: Vec<Id> = runs.iter().map(|r| r.id).collect();
        let mut out: HashMap<Id, Vec<Id>> = HashMap::new();
        for (run, e) in self.store.run_io(&run_ids).await? {
            if let (IoDirection::Wrote, Some(c)) = (e.direction, e.end.container_id()) {
                out.entry(run).or_default().push(c);
            }
        }
        let missing: Vec<&Run> = runs.iter().filter(|r| !out.contains_key(&r.id)).collect();
        if !missing.is_empty() {
            let jobs: Vec<Id> = missing.iter().map(|r| r.job_id).collect();
            let mut by_job: HashMap<Id, Vec<Id>> = HashMap::new();
            for (job, e) in self.job_io_at(&jobs).await? {
                if let (IoDirection::Wrote, Some(c)) = (e.direction, e.end.container_id()) {
                    by_job.entry(job).or_default().push(c);
                }
            }
            for r in missing {
                if let Some(cs) = by_job.get(&r.job_id) {
                    out.insert(r.id, cs.clone());
                }
            }
        }
        for list in out.values_mut() {
            list.sort_unstable();
            list.dedup();
        }
        Ok(out)
    }

    /// `runImpact`: what the run wrote or should have written (distance 0) and everything
    /// downstream of it, as `impact` answers. The roots come first in the answer.
    pub async fn run_impact(
        &self,
        caller: &Caller,
        run_id: &str,
        depth: i64,
        limit: i64,
    ) -> Result<(Vec<Id>, Transitive)> {
        let depth = super::validate_depth(depth)?;
        let limit = super::validate_limit(limit)?;
        let (run, restricted) = self.run(caller, run_id).await?;
        if restricted {
            return Err(Error::Forbidden(format!(
                "run {run_id:?} touches datastores you have no VIEWER permission on"
            )));
        }
        let roots = self.outputs_of_runs(std::slice::from_ref(&run)).await?.remove(&run.id).unwrap_or_default();
        let live: HashSet<Id> = self.store.containers_by_ids(&roots).await?.into_iter().map(|c| c.id).collect();
        let roots: Vec<Id> = roots.into_iter().filter(|id| live.contains(id)).collect();
        let t = if roots.is_empty() {
            Transitive {
                is_partial: false,
                reached: Vec::new(),
                externals: Vec::new(),
                completeness: Default::default(),
            }
        } else {
            self.transitive(super::Start::Nodes(roots.clone()), depth, Direction::Downstream, limit, false, |_| true)
                .await?
        };
        Ok((roots, t))
    }

    /// The edges whose OpenLineage evidence names the run as the one that last asserted them,
    /// or the first (evidence is one row per edge and job, so older runs' share is what they
    /// asserted first or last).
    pub async fn run_edges(&self, run: &Run) -> Result<Vec<crate::domain::Edge>> {
        let Some(job) = self.store.jobs_by_ids(&[run.job_id]).await?.into_iter().next() else { return Ok(Vec::new()) };
        let key = super::openlineage::job_key(crate::ingest::openlineage::EventKind::Run, &job.namespace, &job.name);
        let names = |e: &crate::domain::Evidence, k: &str| {
            e.details.as_ref().and_then(|d| d.get(k)).and_then(|v| v.as_str()) == Some(run.run_id.as_str())
        };
        let ids: Vec<Id> = self
            .store
            .evidence_by_keys(&[key])
            .await?
            .into_iter()
            .filter(|e| names(e, "runId") || names(e, "firstRunId"))
            .map(|e| e.edge_id)
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.store.edges_by_ids(&ids).await?)
    }

    /// The jobs between the graph's containers and external assets (see `JobsBetween`); with
    /// `keep`, that job also when it has only inputs or only outputs among them.
    pub(super) async fn jobs_between(&self, graph: &super::LineageGraph, keep: Option<Id>) -> Result<JobsBetween> {
        let mut ends: Vec<End> = graph.nodes.iter().map(|n| End::Container { id: n.container_id }).collect();
        ends.extend(graph.external_nodes.iter().map(|x| End::External { fqn: x.fqn.clone() }));
        if ends.is_empty() {
            return Ok(JobsBetween { latest_runs: self.as_of.map(|_| HashMap::new()), ..JobsBetween::default() });
        }
        let (rows, then) = self.jobs_of_ends_read(&ends).await?;
        let mut by_job: BTreeMap<Id, (bool, bool)> = BTreeMap::new();
        for (job, e) in &rows {
            let slot = by_job.entry(*job).or_default();
            match e.direction {
                IoDirection::Read => slot.0 = true,
                IoDirection::Wrote => slot.1 = true,
            }
        }
        let kept: HashSet<Id> =
            by_job.into_iter().filter(|(id, (r, w))| (*r && *w) || Some(*id) == keep).map(|(id, _)| id).collect();
        let mut ids: Vec<Id> = kept.iter().copied().collect();
        ids.sort_unstable();
        // As of an instant, the read of the jobs' datasets then has read the jobs and their
        // runs then already.
        let (jobs, latest_runs) = match then {
            Some(mut then) => {
                then.jobs.retain(|j| kept.contains(&j.id));
                then.jobs.sort_unstable_by_key(|j| j.id);
                then.latest_runs.retain(|id, _| kept.contains(id));
                (then.jobs, Some(then.latest_runs))
            }
            None if ids.is_empty() => (Vec::new(), None),
            None => (self.store.jobs_by_ids(&ids).await?, None),
        };
        let links = rows
            .into_iter()
            .filter(|(job, _)| kept.contains(job))
            .map(|(job_id, e)| JobLink {
                job_id,
                end: e.end,
                direction: e.direction,
                namespace: e.namespace,
                name: e.name,
            })
            .collect();
        Ok(JobsBetween { jobs, links, latest_runs })
    }

    /// The job and COMPLETE run `run` records (`record_sql` writes it with the statements'
    /// lineage): the run read the sources and wrote the targets of its statements that parsed,
    /// each resolved in `datastore` by name, else an external asset named `<datastore>/<table>`,
    /// as an OpenLineage run would be. Names resolve through the operation's cache.
    pub(crate) async fn sql_run_record(
        &self,
        op: &super::external::Operation,
        datastore: &crate::domain::Datastore,
        run: &SqlRun,
        statements: &[crate::ingest::sql::StatementLineage],
    ) -> Result<crate::domain::RunRecord> {
        let at = run.ended_at;
        let namespace = datastore.namespaces.first().cloned().unwrap_or_else(|| format!("sql://{}", datastore.name));
        let mut io = Vec::new();
        for st in statements.iter().filter(|s| s.errors.is_empty() && run.statements.contains(&s.index)) {
            for (direction, names) in [(IoDirection::Read, &st.sources), (IoDirection::Wrote, &st.targets)] {
                for name in names {
                    let end = match self.resolve_cached(op, Some(datastore.id), name).await? {
                        Some(c) => End::Container { id: c.id },
                        None => End::External { fqn: format!("{}/{name}", datastore.name) },
                    };
                    io.push(IoEntry::new(direction, end, &namespace, name, at));
                }
            }
        }
        Ok(crate::domain::RunRecord {
            job: crate::domain::JobUpsert::named(run.job.clone(), at),
            run: Some(crate::domain::RunUpsert {
                run_id: run.run_id.clone(),
                state: RunState::Complete,
                at,
                start: run.started_at,
                nominal_start: None,
                nominal_end: None,
                error_message: None,
                error_language: None,
                parent_run_id: None,
            }),
            io,
            event_id: 0,
            evidence_key: String::new(),
        })
    }

    /// What is failing now, or as of the view's instant (`service::jobs_asof`): see the
    /// module's notes.
    pub async fn health_index(&self) -> Result<HealthIndex> {
        let failing = self.failing_runs(MAX_FAILURES).await?;
        let mut index = HealthIndex::default();
        if failing.is_empty() {
            return Ok(index);
        }
        let outputs = self.outputs_of_runs(&failing).await?;
        let candidates: Vec<End> = {
            let mut ids: Vec<Id> = outputs.values().flatten().copied().collect();
            ids.sort_unstable();
            ids.dedup();
            ids.into_iter().map(|id| End::Container { id }).collect()
        };
        // When each candidate was last written completely, by any job.
        let mut completed: HashMap<Id, Timestamp> = HashMap::new();
        for (_, e) in self.jobs_of_ends_at(&candidates).await? {
            if let (IoDirection::Wrote, Some(c), Some((_, at))) = (e.direction, e.end.container_id(), e.completed) {
                let slot = completed.entry(c).or_insert(at);
                *slot = (*slot).max(at);
            }
        }
        for run in &failing {
            let failed_at = run.ended_at.unwrap_or(run.last_seen_at);
            for c in outputs.get(&run.id).into_iter().flatten() {
                if completed.get(c).is_none_or(|done| *done < failed_at) {
                    index.failed.entry(*c).or_default().push(run.id);
                }
            }
        }
        index.runs = failing.into_iter().map(|r| (r.id, r)).collect();
        // Downstream of every failed container, nearest failure first per stale container.
        let roots: Vec<Id> = index.failed.keys().copied().collect();
        let mut nearest: HashMap<Id, BTreeMap<Id, usize>> = HashMap::new();
        let mut frontier: HashMap<Id, HashSet<Id>> =
            roots.iter().map(|r| (*r, index.failed[r].iter().copied().collect())).collect();
        let mut seen: HashMap<Id, HashSet<Id>> = frontier.clone();
        for level in 1..=STALE_DEPTH {
            if frontier.is_empty() {
                break;
            }
            let ids: Vec<Id> = frontier.keys().copied().collect();
            let edges = self.level_edges(&ids, Direction::Downstream, false).await?;
            let mut next: HashMap<Id, HashSet<Id>> = HashMap::new();
            for e in edges {
                let (Some(from), End::Container { id: to }) = (e.source.container_id(), &e.target) else { continue };
                let Some(causes) = frontier.get(&from) else { continue };
                for cause in causes {
                    if seen.entry(*to).or_default().insert(*cause) {
                        next.entry(*to).or_default().insert(*cause);
                        nearest.entry(*to).or_default().entry(*cause).or_insert(level);
                    }
                }
            }
            frontier = next;
        }
        for (c, causes) in nearest {
            if index.failed.contains_key(&c) {
                continue;
            }
            let mut list: Vec<(usize, Id)> = causes.into_iter().map(|(run, d)| (d, run)).collect();
            list.sort_unstable();
            index.stale.insert(c, list);
        }
        Ok(index)
    }

    /// The health of each container, against `index` (computed once per request).
    pub async fn health_of(&self, index: &HealthIndex, ids: &[Id]) -> Result<HashMap<Id, Health>> {
        let ends: Vec<End> = ids.iter().map(|id| End::Container { id: *id }).collect();
        let rows = self.jobs_of_ends_at(&ends).await?;
        let mut producers: HashMap<Id, Vec<(Id, IoEntry)>> = HashMap::new();
        for (job, e) in rows {
            if let (IoDirection::Wrote, Some(c)) = (e.direction, e.end.container_id()) {
                producers.entry(c).or_default().push((job, e));
            }
        }
        let job_ids: Vec<Id> =
            producers.values().flatten().map(|(j, _)| *j).collect::<HashSet<_>>().into_iter().collect();
        let jobs = if job_ids.is_empty() { Vec::new() } else { self.store.jobs_by_ids(&job_ids).await? };
        let latest: HashMap<Id, Run> = self.latest_runs(&jobs).await?;
        let mut out = HashMap::new();
        for id in ids {
            let rows = producers.get(id).map(Vec::as_slice).unwrap_or_default();
            let last_written_at = rows.iter().filter_map(|(_, e)| e.completed.map(|(_, at)| at)).max();
            let last_run =
                rows.iter().filter_map(|(job, _)| latest.get(job)).max_by_key(|r| (r.began(), r.id)).cloned();
            let runs = |list: Vec<Id>| list.into_iter().filter_map(|r| index.runs.get(&r).cloned()).collect::<Vec<_>>();
            let (state, causes) = if let Some(failed) = index.failed.get(id) {
                (HealthState::Failed, runs(failed.clone()))
            } else if let Some(stale) = index.stale.get(id) {
                (HealthState::Stale, runs(stale.iter().map(|(_, r)| *r).collect()))
            } else if rows.is_empty() {
                (HealthState::Unknown, Vec::new())
            } else {
                // A failure the index did not see (a newer one than it read) still shows.
                let failed: Vec<Run> = rows
                    .iter()
                    .filter_map(|(job, _)| latest.get(job))
                    .filter(|r| r.state.is_failure())
                    .filter(|r| last_written_at.is_none_or(|w| w < r.ended_at.unwrap_or(r.last_seen_at)))
                    .cloned()
                    .collect();
                if failed.is_empty() {
                    (HealthState::Fresh, Vec::new())
                } else {
                    (HealthState::Failed, failed)
                }
            };
            out.insert(*id, Health { state, last_written_at, last_run, causes });
        }
        Ok(out)
    }

    /// `incidents`: the failed runs still their job's latest, in the window, newest first, each
    /// with how many containers it leaves stale. Restricted runs are left out of the page.
    pub async fn incidents(
        &self,
        caller: &Caller,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        first: i64,
        after: Option<&str>,
    ) -> Result<IncidentPage> {
        if !(1..=super::MAX_PAGE_SIZE).contains(&first) {
            return Err(Error::BadInput(format!("first must be between 1 and {}, got {first}", super::MAX_PAGE_SIZE)));
        }
        let offset: usize = match after {
            None => 0,
            Some(c) => c
                .strip_prefix("incident:")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Error::BadInput(format!("after {c:?} is not a cursor incidents gave")))?,
        };
        let runs = self.store.failed_latest_runs(since, until, MAX_FAILURES).await?;
        let jobs: Vec<Id> = runs.iter().map(|r| r.job_id).collect();
        let datastores = if caller.unrestricted_admin { HashMap::new() } else { self.job_datastores(&jobs).await? };
        let visible: Vec<Run> = runs
            .into_iter()
            .filter(|r| {
                caller.unrestricted_admin || may_see(caller, datastores.get(&r.job_id).cloned().unwrap_or_default())
            })
            .collect();
        let index = self.health_index().await?;
        let page: Vec<Run> = visible.iter().skip(offset).take(first as usize).cloned().collect();
        let end = offset + page.len();
        let items = page
            .into_iter()
            .map(|run| {
                let failed = index.failed.values().filter(|rs| rs.contains(&run.id)).count();
                let stale = index.stale.values().filter(|rs| rs.iter().any(|(_, r)| *r == run.id)).count();
                Incident { failed_count: failed as i64, stale_count: stale as i64, run }
            })
            .collect();
        Ok(IncidentPage { items, end_cursor: format!("incident:{end}"), has_more: visible.len() > end })
    }
}
