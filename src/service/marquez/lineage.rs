//! Marquez's lineage graph (`LineageDao.getLineage`) and column lineage.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::*;

impl Lineage {
    /// Marquez's lineage graph around a dataset or a job, as `LineageDao.getLineage` builds it:
    /// the start job, then every visible job whose current inputs or outputs share a dataset
    /// with a job found one step before (either side: two readers of one table are neighbours),
    /// `depth` steps at most; the nodes are those jobs and all their current datasets, the edges
    /// input -> job -> output. A dataset starts from the job Marquez picks for it
    /// (`getJobFromInputOrOutput`): its latest writer, else its latest reader, among every job
    /// that ever touched it; when that job no longer touches it (or none ever did) the dataset
    /// stands alone, as Marquez's orphan graph.
    pub async fn marquez_lineage(&self, caller: &Caller, node: &NodeId, depth: i64) -> Result<Graph> {
        if !(0..=MAX_DEPTH).contains(&depth) {
            return Err(Error::BadInput(format!("depth must be between 0 and {MAX_DEPTH}, got {depth}")));
        }
        // Each dataset's end with the name its node goes by (the one events sent).
        let mut names: HashMap<End, DatasetId> = HashMap::new();
        let (start, start_end) = match node {
            NodeId::Dataset(id) => {
                let end = match self.find_dataset(id).await? {
                    Some(Ok(c)) => End::Container { id: c.id },
                    Some(Err(fqn)) => End::External { fqn },
                    None => {
                        return Err(Error::NotFound(format!(
                            "dataset {:?} in namespace {:?} not found",
                            id.name, id.namespace
                        )))
                    }
                };
                names.insert(end.clone(), id.clone());
                match self.marquez_start_job(caller, &end).await? {
                    Some(job) => (job, Some(end)),
                    None => return self.graph_of(caller, names, Vec::new()).await,
                }
            }
            NodeId::Job { namespace, name } => (self.marquez_job(caller, namespace, name).await?.job, None),
            NodeId::Field(..) => return Err(Error::BadInput("nodeId of lineage must be a dataset or a job".into())),
        };
        let found = self.jobs_sharing_datasets(caller, start, depth).await?;
        if let Some(end) = &start_end {
            if !found.values().any(|(_, io)| io.iter().any(|e| &e.end == end)) {
                // "jobs which no longer share lineage with the dataset": the orphan graph.
                names.retain(|e, _| e == end);
                return self.graph_of(caller, names, Vec::new()).await;
            }
        }
        let mut edges = BTreeSet::new();
        let mut jobs = Vec::new();
        for (job, io) in found.into_values() {
            let job_node = node_id_of_job(&job.namespace, &job.name);
            for e in &io {
                let id = names
                    .entry(e.end.clone())
                    .or_insert_with(|| DatasetId { namespace: e.namespace.clone(), name: e.name.clone() });
                let ds_node = node_id_of_dataset(id);
                edges.insert(match e.direction {
                    IoDirection::Read => (ds_node, job_node.clone()),
                    IoDirection::Wrote => (job_node.clone(), ds_node),
                });
            }
            jobs.push(job);
        }
        let mut graph = self.graph_of(caller, names, jobs).await?;
        graph.edges = edges;
        Ok(graph)
    }

    /// The job Marquez starts a dataset's graph from: among the visible jobs that ever read or
    /// wrote it, a writer before a reader, then the latest (Marquez orders by the job version's
    /// time; Tributary keeps when each job last touched each dataset).
    async fn marquez_start_job(&self, caller: &Caller, end: &End) -> Result<Option<Job>> {
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
    /// datasets (see the module's notes). One `jobs_of_ends` per step finds the candidates (every
    /// job that ever touched the new datasets); a candidate joins when its current datasets hold
    /// one of them. The walk stops early past `MAX_GRAPH_NODES`.
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

    /// A graph of these datasets (by end, with their names) and jobs, without edges: each
    /// dataset's catalog data in batches, each job made into a Marquez job.
    async fn graph_of(&self, caller: &Caller, names: HashMap<End, DatasetId>, jobs: Vec<Job>) -> Result<Graph> {
        let mut graph = Graph::default();
        for d in self.datasets_of_ends(caller, &names).await? {
            graph.nodes.insert(node_id_of_dataset(&d.id), GraphNode::Dataset(Box::new(d)));
        }
        for j in self.marquez_jobs(jobs).await? {
            graph.nodes.insert(node_id_of_job(&j.job.namespace, &j.job.name), GraphNode::Job(Box::new(j)));
        }
        Ok(graph)
    }

    /// The datasets of these ends, each under the name given (a container deleted since keeps
    /// its name without its catalog data).
    pub(super) async fn datasets_of_ends(
        &self,
        caller: &Caller,
        names: &HashMap<End, DatasetId>,
    ) -> Result<Vec<Dataset>> {
        let containers: Vec<Id> = names.keys().filter_map(End::container_id).collect();
        let mut by_container: HashMap<Id, Dataset> = HashMap::new();
        if !containers.is_empty() {
            let datastores = self.datastore_map().await?;
            let mut found = Vec::new();
            for chunk in containers.chunks(MAX_PAGE_SIZE as usize) {
                found.extend(self.store.containers_by_ids(chunk).await?);
            }
            for d in self.datasets_of_containers(caller, found, &datastores).await? {
                if let DatasetNode::Container { container, .. } = &d.node {
                    by_container.insert(container.id, d);
                }
            }
        }
        let externals: Vec<End> = names.keys().filter(|e| matches!(e, End::External { .. })).cloned().collect();
        let external_rows = if externals.is_empty() { Vec::new() } else { self.store.jobs_of_ends(&externals).await? };
        let mut out = Vec::new();
        for (end, id) in names {
            let mut d = match end {
                End::External { fqn } => {
                    let rows: Vec<&IoEntry> =
                        external_rows.iter().filter(|(_, e)| &e.end == end).map(|(_, e)| e).collect();
                    self.external_dataset(id.clone(), fqn.clone(), &rows).await?
                }
                _ => match end.container_id().and_then(|c| by_container.remove(&c)) {
                    Some(d) => d,
                    None => Dataset::bare(id.clone(), DatasetNode::External { fqn: String::new() }),
                },
            };
            d.id = id.clone();
            out.push(d);
        }
        Ok(out)
    }

    /// Column lineage around a dataset's fields, one field, or a job's outputs' fields: the
    /// fields each is computed from, `depth` hops upstream, and with `with_downstream` the
    /// fields computed from them too.
    pub async fn marquez_column_lineage(
        &self,
        caller: &Caller,
        node: &NodeId,
        depth: i64,
        with_downstream: bool,
    ) -> Result<ColumnGraph> {
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(Error::BadInput(format!("depth must be between 1 and {MAX_DEPTH}, got {depth}")));
        }
        let not_found = |id: &DatasetId| {
            Error::NotFound(format!("dataset {:?} in namespace {:?} not found", id.name, id.namespace))
        };
        // An asset outside the catalog has no fields: its column lineage is empty.
        let container_of = |id: &DatasetId| {
            let id = id.clone();
            async move {
                match self.find_dataset(&id).await? {
                    Some(Ok(c)) => Ok(Some(c)),
                    Some(Err(_)) => Ok(None),
                    None => Err(not_found(&id)),
                }
            }
        };
        let start: Vec<Field> = match node {
            NodeId::Dataset(id) => match container_of(id).await? {
                Some(c) => self.store.fields_of_containers(&[c.id]).await?,
                None => Vec::new(),
            },
            NodeId::Field(id, field) => {
                let Some(c) = container_of(id).await? else {
                    return Err(Error::NotFound(format!("field {field:?} of dataset {:?} not found", id.name)));
                };
                let f: Vec<Field> = self
                    .store
                    .fields_of_containers(&[c.id])
                    .await?
                    .into_iter()
                    .filter(|f| f.name.eq_ignore_ascii_case(field))
                    .collect();
                if f.is_empty() {
                    return Err(Error::NotFound(format!("field {field:?} of dataset {:?} not found", id.name)));
                }
                f
            }
            NodeId::Job { namespace, name } => {
                let j = self.marquez_job(caller, namespace, name).await?;
                let io = self.store.job_io(&[j.job.id]).await?;
                let outs: Vec<Id> = io
                    .iter()
                    .filter(|(_, e)| e.direction == IoDirection::Wrote)
                    .filter_map(|(_, e)| e.end.container_id())
                    .collect();
                if outs.is_empty() {
                    Vec::new()
                } else {
                    self.store.fields_of_containers(&outs).await?
                }
            }
        };
        let mut edges: BTreeMap<Id, Edge> = BTreeMap::new();
        let start_ids: Vec<Id> = start.iter().map(|f| f.id).collect();
        let mut sides = vec![Direction::Upstream];
        if with_downstream {
            sides.push(Direction::Downstream);
        }
        for side in sides {
            let mut seen: HashSet<Id> = start_ids.iter().copied().collect();
            let mut frontier = start_ids.clone();
            for _ in 0..depth {
                if frontier.is_empty() {
                    break;
                }
                let found = self.store.field_edges_of(&frontier, side).await?;
                frontier = Vec::new();
                for e in found {
                    let far = match side {
                        Direction::Upstream => &e.source,
                        Direction::Downstream => &e.target,
                    };
                    if let End::Field { id, .. } = far {
                        if seen.insert(*id) {
                            frontier.push(*id);
                        }
                    }
                    edges.insert(e.id, e);
                }
            }
        }
        // Every field named, with its container's name.
        let mut field_ids: BTreeSet<Id> = start_ids.iter().copied().collect();
        for e in edges.values() {
            for end in [&e.source, &e.target] {
                if let End::Field { id, .. } = end {
                    field_ids.insert(*id);
                }
            }
        }
        let ids: Vec<Id> = field_ids.into_iter().collect();
        let mut fields: HashMap<Id, Field> = HashMap::new();
        for chunk in ids.chunks(MAX_PAGE_SIZE as usize) {
            fields.extend(self.store.fields_by_ids(chunk).await?.into_iter().map(|f| (f.id, f)));
        }
        let container_ids: Vec<Id> =
            fields.values().map(|f| f.container_id).collect::<BTreeSet<_>>().into_iter().collect();
        let mut containers = Vec::new();
        for chunk in container_ids.chunks(MAX_PAGE_SIZE as usize) {
            containers.extend(self.store.containers_by_ids(chunk).await?);
        }
        let datastores = self.datastore_map().await?;
        let names = self.container_names(&containers, &datastores).await?;
        let name_of = |field: Id| -> Option<(DatasetId, &Field)> {
            let f = fields.get(&field)?;
            Some((names.get(&f.container_id)?.0.clone(), f))
        };
        let mut graph = ColumnGraph::default();
        let add = |graph: &mut ColumnGraph, field: Id| -> Option<String> {
            let (ds, f) = name_of(field)?;
            let key = node_id_of_field(&ds, &f.name);
            graph.nodes.entry(key.clone()).or_insert_with(|| FieldNode {
                dataset: ds,
                field: f.name.clone(),
                field_type: f.data_type.clone(),
                inputs: Vec::new(),
            });
            Some(key)
        };
        for e in edges.values() {
            let (End::Field { id: s, .. }, End::Field { id: t, .. }) = (&e.source, &e.target) else { continue };
            let (Some(sk), Some(tk)) = (add(&mut graph, *s), add(&mut graph, *t)) else { continue };
            if let (Some((sd, sf)), Some(node)) = (name_of(*s), graph.nodes.get_mut(&tk)) {
                node.inputs.push((sd, sf.name.clone(), e.clone()));
            }
            graph.edges.insert((sk, tk));
        }
        Ok(graph)
    }
}
