//! Marquez's lineage graph (`LineageDao.getLineage`: the one graph walk's shared-datasets mode,
//! reshaped) and column lineage.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::*;
use crate::service::graph::{validate_job_steps, GraphRequest, Root, SharedStart};

impl Lineage {
    /// Marquez's lineage graph around a dataset or a job: the one walk over shared datasets
    /// (`service::graph`, `Root::SharedDatasets`), reshaped. The nodes are the walk's jobs and datasets,
    /// each dataset named as the request named it, else as the first job's events that named it
    /// sent it; the edges input -> job -> output.
    pub async fn marquez_lineage(&self, caller: &Caller, node: &NodeId, depth: i64) -> Result<Graph> {
        // Before the node is resolved, so a bad depth is refused as such first.
        validate_job_steps(depth)?;
        let start = match node {
            NodeId::Dataset(id) => match self.find_dataset(id).await? {
                Some(Ok(c)) => SharedStart::Dataset(End::Container { id: c.id }),
                Some(Err(fqn)) => SharedStart::Dataset(End::External { fqn }),
                None => {
                    return Err(Error::NotFound(format!(
                        "dataset {:?} in namespace {:?} not found",
                        id.name, id.namespace
                    )))
                }
            },
            NodeId::Job { namespace, name } => {
                SharedStart::Job(Box::new(self.marquez_job(caller, namespace, name).await?.job))
            }
            NodeId::Field(..) => return Err(Error::BadInput("nodeId of lineage must be a dataset or a job".into())),
        };
        let answer = self.graph(&GraphRequest::new(caller, Root::SharedDatasets(start), depth)).await?;
        let mut names: HashMap<End, DatasetId> = HashMap::new();
        if let (NodeId::Dataset(id), Some(end)) = (node, answer.target()) {
            names.insert(end, id.clone());
        }
        let job_nodes: HashMap<Id, String> =
            answer.jobs.jobs.iter().map(|j| (j.id, node_id_of_job(&j.namespace, &j.name))).collect();
        let mut edges = BTreeSet::new();
        for link in &answer.jobs.links {
            let Some(job_node) = job_nodes.get(&link.job_id) else { continue };
            let id = names
                .entry(link.end.clone())
                .or_insert_with(|| DatasetId { namespace: link.namespace.clone(), name: link.name.clone() });
            let ds_node = node_id_of_dataset(id);
            edges.insert(match link.direction {
                IoDirection::Read => (ds_node, job_node.clone()),
                IoDirection::Wrote => (job_node.clone(), ds_node),
            });
        }
        let mut graph = self.graph_of(caller, names, answer.jobs.jobs).await?;
        graph.edges = edges;
        Ok(graph)
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
