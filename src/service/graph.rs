//! The one graph read. A `GraphRequest` says everything a graph read needs: the caller, the
//! root (a container, an external asset, a job, or where to walk over shared datasets from), the
//! side, the depth, the budget, the instant, and whether the jobs between the nodes are wanted.
//! `Lineage::graph` answers it with one walk as a `GraphAnswer`: the containers and external
//! assets, the edges among them, the jobs and their links to the nodes, and what the walk left
//! out (`Completeness`). GraphQL (`lineageGraph`, `jobLineageGraph`, `externalLineageGraph`), the
//! REST graph routes and their exports, and the Marquez lineage route only reshape the answer.
//!
//! The walk has two ways to step from a level to the next:
//! - **over edges** (every root but the shared-datasets one): the live edges of the view's
//!   instant, level by level (`traversal::graph_from`); a job root starts from the job's own
//!   datasets as the first level, its inputs upstream and its outputs downstream.
//! - **over shared datasets** (`Root::SharedDatasets`, Marquez's `LineageDao.getLineage`): from
//!   the start job, each step adds the visible jobs whose current datasets overlap those of the
//!   jobs found one step before, either side (two readers of one table are neighbours), `depth`
//!   steps at most; the nodes are those jobs' current datasets. A dataset root starts from the
//!   job Marquez picks for it (its latest writer, else its latest reader); when that job no
//!   longer touches it, or none ever did, the dataset stands alone (Marquez's orphan graph).
//!
//! Visibility is checked here: a job root the caller may not see is `FORBIDDEN`; the Marquez
//! walk leaves out the jobs the caller may not see (Marquez's shapes have no placeholder). The
//! jobs between the nodes of an edge walk are listed whatever the caller may see; their
//! transport shows a restricted one as a placeholder (`Lineage::job_views`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::jobs::{JobLink, JobsBetween};
use super::{
    external_node_id, max_nodes, validate_depth, ExternalNode, GraphNode, GraphOptions, Lineage, LineageGraph, Start,
    MAX_PAGE_SIZE,
};
use crate::auth::Caller;
use crate::domain::{Direction, End, Id, IoDirection, IoEntry, Job, Timestamp};
use crate::error::{Error, Result};

/// Where a graph read starts.
#[derive(Debug, Clone)]
pub enum Root {
    /// A container (`lineageGraph`, the REST graph routes).
    Container(Id),
    /// An external asset by its `ext:<source_type>:<fqn>` id (`externalLineageGraph`).
    External(String),
    /// A job: its inputs and what lies upstream of them, its outputs and what lies downstream,
    /// the job's own datasets counting as the first level (`jobLineageGraph`). The answer always
    /// lists the jobs between the nodes, this one even when it has only inputs or outputs.
    Job(Id),
    /// A job or a dataset walked over shared datasets (Marquez's lineage, `GET /api/v1/lineage`):
    /// the transport resolves its node id to one (`service::marquez`).
    SharedDatasets(SharedStart),
}

/// Where the walk over shared datasets starts.
#[derive(Debug, Clone)]
pub enum SharedStart {
    /// A job the caller may see.
    Job(Box<Job>),
    /// A dataset: from the job Marquez picks for it (see the module's notes).
    Dataset(End),
}

/// The most steps of jobs the walk over shared datasets takes (Marquez's default is 20).
pub const MAX_JOB_STEPS: i64 = 100;
/// Steps of jobs the walk over shared datasets may be asked for: 0 to `MAX_JOB_STEPS`.
pub fn validate_job_steps(depth: i64) -> Result<()> {
    if !(0..=MAX_JOB_STEPS).contains(&depth) {
        return Err(Error::BadInput(format!("depth must be between 0 and {MAX_JOB_STEPS}, got {depth}")));
    }
    Ok(())
}

/// The most nodes the walk over shared datasets returns: beyond it the walk stops (Marquez has
/// no cap; a hub must not make one answer unbounded).
pub const MAX_GRAPH_NODES: usize = 5_000;

/// Everything a graph read needs.
#[derive(Debug, Clone)]
pub struct GraphRequest<'a> {
    pub caller: &'a Caller,
    pub root: Root,
    /// Levels for an edge walk (1 to `MAX_DEPTH`); steps of jobs over shared datasets (0 to
    /// `MAX_JOB_STEPS`).
    pub depth: i64,
    /// One side only; both when `None` (Marquez's walk has no sides).
    pub side: Option<Direction>,
    pub options: GraphOptions,
    /// The graph as it was at this instant; today's when `None`.
    pub at: Option<Timestamp>,
    /// The jobs between the graph's nodes (`includeJobs`); a job root and Marquez always have them.
    pub jobs: bool,
}

impl<'a> GraphRequest<'a> {
    /// Today's graph around `root`, both sides, no budget, without jobs (a job root and the
    /// walk over shared datasets have them always).
    pub fn new(caller: &'a Caller, root: Root, depth: i64) -> GraphRequest<'a> {
        GraphRequest { caller, root, depth, side: None, options: GraphOptions::default(), at: None, jobs: false }
    }
}

/// The one walk's answer: the graph, and the jobs between its nodes when asked (see `Root`).
#[derive(Debug, Clone, Default)]
pub struct GraphAnswer {
    pub graph: LineageGraph,
    pub jobs: JobsBetween,
}

impl GraphAnswer {
    /// The node the walk was centred on, as an end (a Marquez dataset root, an external root).
    pub fn target(&self) -> Option<End> {
        let container = self.graph.nodes.iter().find(|n| n.is_target).map(|n| End::Container { id: n.container_id });
        container.or_else(|| {
            self.graph.external_nodes.iter().find(|x| x.is_target).map(|x| End::External { fqn: x.fqn.clone() })
        })
    }

    /// A graph of one dataset standing alone.
    fn alone(end: &End) -> GraphAnswer {
        let mut graph = LineageGraph::default();
        push_end(&mut graph, end, true);
        GraphAnswer { graph, jobs: JobsBetween::default() }
    }
}

impl Lineage {
    /// Answers a graph request (see the module's notes): checks the instant, then walks.
    pub async fn graph(&self, req: &GraphRequest<'_>) -> Result<GraphAnswer> {
        let view = self.at(req.at).await?;
        view.walk(req).await
    }

    /// Today's graph around a container, both sides or one, as any caller sees it (the catalog
    /// is not restricted): `graph` for the callers that want only the graph.
    pub async fn lineage_graph(&self, container_id: Id, depth: i64, side: Option<Direction>) -> Result<LineageGraph> {
        let caller = Caller::system();
        let req = GraphRequest { side, ..GraphRequest::new(&caller, Root::Container(container_id), depth) };
        Ok(self.graph(&req).await?.graph)
    }

    async fn walk(&self, req: &GraphRequest<'_>) -> Result<GraphAnswer> {
        let (graph, keep) = match &req.root {
            Root::SharedDatasets(start) => return self.shared_datasets_walk(req.caller, start, req.depth).await,
            Root::Container(id) => {
                let depth = validate_depth(req.depth)?;
                if let Some(n) = req.options.max_nodes {
                    max_nodes(n as i64)?;
                }
                self.require_container(*id).await?;
                (self.graph_from(Start::Node(*id), None, depth, req.side, req.options).await?, None)
            }
            Root::External(id) => {
                let depth = validate_depth(req.depth)?;
                let (start, source_type) = self.external_start(id).await?;
                (self.graph_from(start, Some(source_type), depth, req.side, req.options).await?, None)
            }
            Root::Job(id) => (self.job_walk(req.caller, *id, req.depth, req.side).await?, Some(*id)),
        };
        let jobs = match req.jobs || keep.is_some() {
            true => self.jobs_between(&graph, keep).await?,
            false => JobsBetween::default(),
        };
        Ok(GraphAnswer { graph, jobs })
    }

    /// The edge walk from a job: its datasets (as of the view's instant) are the first level,
    /// each side walked from them `depth - 1` levels further; the job's external datasets are
    /// nodes too.
    async fn job_walk(&self, caller: &Caller, job_id: Id, depth: i64, side: Option<Direction>) -> Result<LineageGraph> {
        let depth = validate_depth(depth)?;
        let view = self.job(caller, Some(job_id), None, None).await?;
        if view.restricted {
            return Err(Error::Forbidden(format!("job {job_id} touches datastores you have no VIEWER permission on")));
        }
        let io = self.job_io_at(&[job_id]).await?;
        let mut graph = LineageGraph::default();
        for (direction, dir) in [(IoDirection::Read, Direction::Upstream), (IoDirection::Wrote, Direction::Downstream)]
        {
            if side.is_some_and(|s| s != dir) {
                continue;
            }
            let roots: Vec<Id> =
                io.iter().filter(|(_, e)| e.direction == direction).filter_map(|(_, e)| e.end.container_id()).collect();
            let live: Vec<Id> = self.store.containers_by_ids(&roots).await?.into_iter().map(|c| c.id).collect();
            if live.is_empty() {
                continue;
            }
            let g = if depth > 1 {
                self.graph_from(Start::Nodes(live.clone()), None, depth - 1, Some(dir), Default::default()).await?
            } else {
                let mut g = LineageGraph::default();
                for id in live {
                    push_end(&mut g, &End::Container { id }, false);
                }
                g
            };
            merge_graph(&mut graph, g);
        }
        for (_, e) in io
            .iter()
            .filter(|(_, e)| side.is_none_or(|s| (e.direction == IoDirection::Read) == (s == Direction::Upstream)))
        {
            if let End::External { fqn } = &e.end {
                if !graph.external_nodes.iter().any(|x| &x.fqn == fqn) {
                    push_end(&mut graph, &e.end, false);
                }
            }
        }
        Ok(graph)
    }

    /// The walk over shared datasets (Marquez's `getLineage`, see the module's notes). The links
    /// carry the names the jobs' events gave their datasets: Marquez names its nodes so.
    async fn shared_datasets_walk(&self, caller: &Caller, start: &SharedStart, depth: i64) -> Result<GraphAnswer> {
        validate_job_steps(depth)?;
        let (start, start_end) = match start {
            SharedStart::Dataset(end) => match self.shared_start_job(caller, end).await? {
                Some(job) => (job, Some(end.clone())),
                None => return Ok(GraphAnswer::alone(end)),
            },
            SharedStart::Job(job) => (Job::clone(job), None),
        };
        let found = self.jobs_sharing_datasets(caller, start, depth).await?;
        if let Some(end) = &start_end {
            if !found.values().any(|(_, io)| io.iter().any(|e| &e.end == end)) {
                // "jobs which no longer share lineage with the dataset": the orphan graph.
                return Ok(GraphAnswer::alone(end));
            }
        }
        let mut answer = GraphAnswer::default();
        let mut added: HashSet<End> = HashSet::new();
        if let Some(end) = &start_end {
            added.insert(end.clone());
            push_end(&mut answer.graph, end, true);
        }
        for (job, io) in found.into_values() {
            for e in io {
                if added.insert(e.end.clone()) {
                    push_end(&mut answer.graph, &e.end, false);
                }
                let IoEntry { direction, end, namespace, name, .. } = e;
                answer.jobs.links.push(JobLink { job_id: job.id, end, direction, namespace, name });
            }
            answer.jobs.jobs.push(job);
        }
        Ok(answer)
    }

    /// The job Marquez starts a dataset's graph from: among the visible jobs that ever read or
    /// wrote it, a writer before a reader, then the latest (Marquez orders by the job version's
    /// time; Tributary keeps when each job last touched each dataset).
    async fn shared_start_job(&self, caller: &Caller, end: &End) -> Result<Option<Job>> {
        let rows = self.store.jobs_of_ends(std::slice::from_ref(end)).await?;
        let ids: Vec<Id> = rows.iter().map(|(j, _)| *j).collect::<BTreeSet<_>>().into_iter().collect();
        if ids.is_empty() {
            return Ok(None);
        }
        let visible: HashMap<Id, Job> = self
            .job_views(caller, self.store.jobs_by_ids(&ids).await?)
            .await?
            .into_iter()
            .filter(|v| !v.restricted)
            .map(|v| (v.job.id, v.job))
            .collect();
        let best = rows
            .iter()
            .filter(|(j, _)| visible.contains_key(j))
            .max_by_key(|(j, e)| (e.direction == IoDirection::Wrote, e.at, *j))
            .map(|(j, _)| *j);
        Ok(best.and_then(|j| visible.get(&j).cloned()))
    }

    /// `LineageDao.getLineage`'s recursion: from `start`, the visible jobs whose current datasets
    /// overlap those of a job found one step before, `depth` steps at most, each with its current
    /// datasets. One `jobs_of_ends` per step finds the candidates (every job that ever touched the
    /// new datasets); a candidate joins when its current datasets hold one of them. The walk stops
    /// early past `MAX_GRAPH_NODES`.
    async fn jobs_sharing_datasets(
        &self,
        caller: &Caller,
        start: Job,
        depth: i64,
    ) -> Result<BTreeMap<Id, (Job, Vec<IoEntry>)>> {
        let start_io = self.current_io(std::slice::from_ref(&start)).await?.remove(&start.id).unwrap_or_default();
        let mut seen: HashSet<End> = HashSet::new();
        let mut frontier: Vec<End> =
            start_io.iter().map(|e| e.end.clone()).filter(|e| seen.insert(e.clone())).collect();
        let mut found: BTreeMap<Id, (Job, Vec<IoEntry>)> = BTreeMap::new();
        found.insert(start.id, (start, start_io));
        // Candidates already read: their current datasets, or None when the caller may not see them.
        let mut known: HashMap<Id, Option<(Job, Vec<IoEntry>)>> = HashMap::new();
        for _ in 0..depth {
            if frontier.is_empty() || found.len() + seen.len() >= MAX_GRAPH_NODES {
                break;
            }
            let rows = self.store.jobs_of_ends(&frontier).await?;
            let candidates: BTreeSet<Id> = rows.iter().map(|(j, _)| *j).filter(|j| !found.contains_key(j)).collect();
            let unread: Vec<Id> = candidates.iter().filter(|j| !known.contains_key(j)).copied().collect();
            for chunk in unread.chunks(MAX_PAGE_SIZE as usize) {
                let views = self.job_views(caller, self.store.jobs_by_ids(chunk).await?).await?;
                let visible: Vec<Job> = views.iter().filter(|v| !v.restricted).map(|v| v.job.clone()).collect();
                let mut io = self.current_io(&visible).await?;
                for v in views {
                    let id = v.job.id;
                    let entry = (!v.restricted).then(|| (v.job, io.remove(&id).unwrap_or_default()));
                    known.insert(id, entry);
                }
            }
            let step: HashSet<&End> = frontier.iter().collect();
            let mut next = Vec::new();
            for id in candidates {
                let Some(Some((job, io))) = known.get(&id) else { continue };
                if !io.iter().any(|e| step.contains(&e.end)) {
                    continue;
                }
                next.extend(io.iter().map(|e| e.end.clone()).filter(|e| seen.insert(e.clone())));
                found.insert(id, (job.clone(), io.clone()));
            }
            frontier = next;
        }
        Ok(found)
    }
}

/// Adds a dataset end to the graph as a node (`is_target` marks the centre); the caller keeps
/// it from being added twice. A job's external dataset is an OpenLineage asset.
fn push_end(graph: &mut LineageGraph, end: &End, is_target: bool) {
    match end {
        End::Container { id } => {
            graph.nodes.push(GraphNode { container_id: *id, is_target, has_upstream: false, has_downstream: false })
        }
        End::External { fqn } => graph.external_nodes.push(ExternalNode {
            id: external_node_id(super::openlineage::SOURCE_TYPE, fqn),
            fqn: fqn.clone(),
            source_type: super::openlineage::SOURCE_TYPE.to_string(),
            is_target,
        }),
        End::Field { .. } => {}
    }
}

/// Adds `g`'s nodes and edges to `into`, each once.
fn merge_graph(into: &mut LineageGraph, g: LineageGraph) {
    let known: HashSet<Id> = into.nodes.iter().map(|n| n.container_id).collect();
    for n in g.nodes {
        if !known.contains(&n.container_id) {
            into.nodes.push(n);
        }
    }
    let edges: HashSet<Id> = into.edges.iter().map(|e| e.id).collect();
    into.edges.extend(g.edges.into_iter().filter(|e| !edges.contains(&e.id)));
    let xs: HashSet<String> = into.external_nodes.iter().map(|x| x.id.clone()).collect();
    into.external_nodes.extend(g.external_nodes.into_iter().filter(|x| !xs.contains(&x.id)));
    let xe: HashSet<Id> = into.external_edges.iter().map(|e| e.id).collect();
    into.external_edges.extend(g.external_edges.into_iter().filter(|e| !xe.contains(&e.id)));
    into.completeness.is_partial |= g.completeness.is_partial;
}
