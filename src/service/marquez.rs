//! What Marquez's read API asks, over the same store reads and permission rule as GraphQL:
//! namespaces, datasets by their OpenLineage names, jobs with their current inputs and outputs,
//! runs, the job/dataset lineage graph, column lineage and search. `api::marquez` only shapes
//! these answers into Marquez's JSON.
//!
//! **Names.** Marquez names a dataset by its OpenLineage namespace and name; Tributary keys a
//! container by datastore and `database.schema.name`. A container is named as the latest event
//! that read or wrote it sent it (`IoEntry.namespace/name`), else by its datastore's first
//! namespace (`sql::namespace_of`) and its key. An external asset keeps the name it was sent
//! with. A namespace is one that a job, a dataset sent in an event or a datastore uses.
//!
//! **A job's current inputs and outputs.** Marquez shows a job's current version: the datasets
//! its latest run read and wrote. Tributary keeps the union over all runs too; here the latest
//! run's are used when it has any (a job whose inputs changed, like the apples corpus's
//! `gather_apples`, shows only its new input), else the job's own.
//!
//! **Who sees what.** Datasets are catalog reads (any valid token, as `lineageGraph`). A job the
//! caller may not see (`jobs::may_see`) is left out of lists, searches, graphs and the namespace
//! list: Marquez's shapes have no placeholder, and a name must not leak. Asked for by name or by
//! run id, it is `FORBIDDEN`.
//!
//! **Cost.** Namespaces, dataset lists and search read every job and its datasets (one
//! `list_jobs` page and one `job_io` per thousand jobs): jobs are few next to tables. Graphs read
//! one level per statement batch, as the GraphQL traversals do.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::auth::Permission;
use crate::domain::{
    Container, Datastore, Direction, Edge, End, Field, Id, IoDirection, IoEntry, Job, JobFilter, PageRequest, Run,
    RunFilter, StoredEvent, Timestamp,
};
use crate::error::{Error, Result};
use crate::service::jobs::may_see;
use crate::service::{Caller, Lineage, MAX_PAGE_SIZE};

/// The deepest lineage graph asked for (Marquez's default is 20 jobs away).
pub const MAX_DEPTH: i64 = 100;
/// The most nodes a Marquez graph returns: beyond it the walk stops (Marquez has no cap; a hub
/// must not make one answer unbounded).
pub const MAX_GRAPH_NODES: usize = 5_000;

/// A dataset's OpenLineage identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatasetId {
    pub namespace: String,
    pub name: String,
}

/// What a Marquez node id names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeId {
    Dataset(DatasetId),
    Field(DatasetId, String),
    Job { namespace: String, name: String },
}

impl NodeId {
    /// `dataset:<ns>:<name>`, `datasetField:<ns>:<name>:<field>` or `job:<ns>:<name>`. A namespace
    /// may hold colons (`postgres://host:5432`), so the split is on the known forms: the name is
    /// what follows the namespace's scheme-and-authority part (see `split_namespace`). A `#version`
    /// suffix (the Python client's) is refused: Tributary keeps no versions.
    pub fn parse(text: &str) -> Result<NodeId> {
        let bad = |why: &str| {
            Error::BadInput(format!(
                "nodeId must be dataset:<namespace>:<name>, datasetField:<namespace>:<name>:<field> or job:<namespace>:<name> ({why}); got {:?}",
                text.chars().take(200).collect::<String>()
            ))
        };
        if text.len() > 4096 || text.chars().any(char::is_control) {
            return Err(bad("at most 4096 characters without control characters"));
        }
        let (kind, rest) = text.split_once(':').ok_or_else(|| bad("no kind"))?;
        if rest.contains('#') && kind != "job" {
            return Err(bad("versions (#...) are not kept"));
        }
        let (namespace, tail) = split_namespace(rest).ok_or_else(|| bad("no namespace and name"))?;
        let nonempty = |s: &str| !s.trim().is_empty();
        match kind {
            "dataset" if nonempty(tail) => Ok(NodeId::Dataset(DatasetId { namespace, name: tail.to_string() })),
            "job" if nonempty(tail) => Ok(NodeId::Job { namespace, name: tail.to_string() }),
            "datasetField" => {
                let (name, field) = tail.rsplit_once(':').ok_or_else(|| bad("no field"))?;
                if !nonempty(name) || !nonempty(field) {
                    return Err(bad("empty name or field"));
                }
                Ok(NodeId::Field(DatasetId { namespace, name: name.to_string() }, field.to_string()))
            }
            "dataset" | "job" => Err(bad("empty name")),
            _ => Err(bad("unknown kind")),
        }
    }
}

/// Splits `<namespace>:<rest>` where the namespace may be a URI (`scheme://host[:port][/path]`,
/// as OpenLineage names them): the namespace ends at the first colon after `scheme://`, the host
/// and a `:port` followed by `:` or `/`. So `postgres://db:5432:shop.orders` is
/// (`postgres://db:5432`, `shop.orders`) and `s3://bucket:/data/x` is (`s3://bucket`, `/data/x`).
/// `postgres://db:5432` alone stays ambiguous and reads as host `db`, name `5432`.
fn split_namespace(s: &str) -> Option<(String, &str)> {
    let start = match s.find("://") {
        Some(i) if !s[..i].contains(':') => {
            let after = i + 3;
            let host_end = s[after..].find([':', '/']).map_or(s.len(), |j| after + j);
            let rest = &s[host_end..];
            let digits = rest.strip_prefix(':').map(|r| r.chars().take_while(char::is_ascii_digit).count());
            match digits {
                Some(n) if n > 0 && rest[1 + n..].starts_with([':', '/']) => host_end + 1 + n,
                _ => host_end,
            }
        }
        _ => 0,
    };
    let colon = start + s[start..].find(':')?;
    let (ns, rest) = (&s[..colon], &s[colon + 1..]);
    (!ns.trim().is_empty()).then(|| (ns.to_string(), rest))
}

/// The Marquez run state of an OpenLineage event type.
pub fn run_state(state: &str) -> &'static str {
    match state {
        "START" => "NEW",
        "RUNNING" => "RUNNING",
        "COMPLETE" => "COMPLETED",
        "FAIL" => "FAILED",
        "ABORT" => "ABORTED",
        // OTHER says nothing about the run's progress: it has begun.
        _ => "RUNNING",
    }
}

/// The OpenLineage event types a Marquez run state covers (`lastRunStates=`).
pub fn states_of(marquez: &str) -> Option<&'static [&'static str]> {
    match marquez.trim().to_ascii_uppercase().as_str() {
        "NEW" => Some(&["START"]),
        "RUNNING" => Some(&["RUNNING", "OTHER"]),
        "COMPLETED" => Some(&["COMPLETE"]),
        "FAILED" => Some(&["FAIL"]),
        "ABORTED" => Some(&["ABORT"]),
        _ => None,
    }
}

/// A namespace and when it was first and last seen in an event (none for a datastore's own).
#[derive(Debug, Clone)]
pub struct Namespace {
    pub name: String,
    pub created_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
}

/// What a dataset is in Tributary.
#[derive(Debug, Clone)]
pub enum DatasetNode {
    Container { container: Box<Container>, datastore: Option<Box<Datastore>> },
    External { fqn: String },
}

/// A dataset as Marquez shows it.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub id: DatasetId,
    pub node: DatasetNode,
    pub fields: Vec<Field>,
    /// The effective metadata (see `domain::effective_flags`), when the caller may read it.
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub owners: Vec<String>,
    /// Per field id: its effective description and tags.
    pub field_meta: HashMap<Id, (Option<String>, Vec<String>)>,
    /// The first and the latest time an event read or wrote it.
    pub created_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
    /// The latest complete run that wrote it ended then.
    pub last_modified_at: Option<Timestamp>,
}

/// A job as Marquez shows it (only visible jobs are made into one).
#[derive(Debug, Clone)]
pub struct MarquezJob {
    pub job: Job,
    pub parent_name: Option<String>,
    pub inputs: Vec<DatasetId>,
    pub outputs: Vec<DatasetId>,
    pub latest_run: Option<MarquezRun>,
}

/// A run with its job's name and the datasets it read and wrote.
#[derive(Debug, Clone)]
pub struct MarquezRun {
    pub run: Run,
    pub job_namespace: String,
    pub job_name: String,
    pub inputs: Vec<DatasetId>,
    pub outputs: Vec<DatasetId>,
}

/// A node of Marquez's lineage graph and the ids of its neighbours.
#[derive(Debug, Clone)]
pub enum GraphNode {
    Dataset(Box<Dataset>),
    Job(Box<MarquezJob>),
}

#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// By node id (`dataset:...`, `job:...`), sorted.
    pub nodes: BTreeMap<String, GraphNode>,
    /// (origin, destination) node ids.
    pub edges: BTreeSet<(String, String)>,
}

/// One field of a column-lineage graph, with the edges into it.
#[derive(Debug, Clone)]
pub struct FieldNode {
    pub dataset: DatasetId,
    pub field: String,
    pub field_type: Option<String>,
    /// The fields it is computed from, with the edge that says so.
    pub inputs: Vec<(DatasetId, String, Edge)>,
}

#[derive(Debug, Clone, Default)]
pub struct ColumnGraph {
    pub nodes: BTreeMap<String, FieldNode>,
    pub edges: BTreeSet<(String, String)>,
}

/// A search hit.
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub is_job: bool,
    pub id: DatasetId,
    pub updated_at: Option<Timestamp>,
}

/// Which kinds `search` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchFilter {
    Dataset,
    Job,
}

/// Every job and what it read and wrote: what namespace lists, dataset lists and search read.
struct Scan {
    jobs: Vec<Job>,
    visible: HashSet<Id>,
    io: Vec<(Id, IoEntry)>,
}

pub fn node_id_of_dataset(d: &DatasetId) -> String {
    format!("dataset:{}:{}", d.namespace, d.name)
}

pub fn node_id_of_job(namespace: &str, name: &str) -> String {
    format!("job:{namespace}:{name}")
}

pub fn node_id_of_field(d: &DatasetId, field: &str) -> String {
    format!("datasetField:{}:{}:{}", d.namespace, d.name, field)
}

/// A case-insensitive match of `q` anywhere in `text`, with SQL LIKE's `%` (any run) and `_`
/// (one character), as Marquez's search matches.
pub fn like(q: &str, text: &str) -> bool {
    let p: Vec<char> = q.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    // Substring: as if wrapped in `%...%`. Iterative matcher with backtracking on the last `%`.
    let mut pattern = vec!['%'];
    pattern.extend(p);
    pattern.push('%');
    let (mut pi, mut ti, mut star, mut mark) = (0usize, 0usize, None::<usize>, 0usize);
    while ti < t.len() {
        if pi < pattern.len() && (pattern[pi] == '_' || (pattern[pi] != '%' && pattern[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < pattern.len() && pattern[pi] == '%' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    pattern[pi..].iter().all(|c| *c == '%')
}

impl Lineage {
    async fn scan(&self, caller: &Caller) -> Result<Scan> {
        let mut jobs = Vec::new();
        let mut page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
        loop {
            let p = self.store.list_jobs(&JobFilter::default(), page).await?;
            let n = p.items.len() as i64;
            jobs.extend(p.items);
            if n < page.size {
                break;
            }
            page.page += 1;
        }
        let mut io = Vec::new();
        for chunk in jobs.chunks(MAX_PAGE_SIZE as usize) {
            let ids: Vec<Id> = chunk.iter().map(|j| j.id).collect();
            io.extend(self.store.job_io(&ids).await?);
        }
        let visible = self.visible_jobs(caller, &jobs, &io).await?;
        Ok(Scan { jobs, visible, io })
    }

    /// The ids of the jobs the caller may see, from their datasets (`io`, every row of theirs).
    async fn visible_jobs(&self, caller: &Caller, jobs: &[Job], io: &[(Id, IoEntry)]) -> Result<HashSet<Id>> {
        if caller.unrestricted_admin {
            return Ok(jobs.iter().map(|j| j.id).collect());
        }
        let containers: Vec<Id> =
            io.iter().filter_map(|(_, e)| e.end.container_id()).collect::<BTreeSet<_>>().into_iter().collect();
        let mut datastore_of: HashMap<Id, Id> = HashMap::new();
        for chunk in containers.chunks(MAX_PAGE_SIZE as usize) {
            datastore_of.extend(self.store.containers_by_ids(chunk).await?.into_iter().map(|c| (c.id, c.datastore_id)));
        }
        let mut by_job: HashMap<Id, Vec<Id>> = HashMap::new();
        for (job, e) in io {
            if let Some(d) = e.end.container_id().and_then(|c| datastore_of.get(&c)) {
                by_job.entry(*job).or_default().push(*d);
            }
        }
        Ok(jobs.iter().filter(|j| may_see(caller, by_job.remove(&j.id).unwrap_or_default())).map(|j| j.id).collect())
    }

    /// The names of containers (see the module's notes), with when events first and last
    /// touched each and when a complete run last wrote it.
    async fn container_names(
        &self,
        containers: &[Container],
        datastores: &HashMap<Id, Datastore>,
    ) -> Result<HashMap<Id, (DatasetId, Option<Timestamp>, Option<Timestamp>, Option<Timestamp>)>> {
        let mut out = HashMap::new();
        let mut rows = Vec::new();
        for chunk in containers.chunks(MAX_PAGE_SIZE as usize) {
            let ends: Vec<End> = chunk.iter().map(|c| End::Container { id: c.id }).collect();
            rows.extend(self.store.jobs_of_ends(&ends).await?);
        }
        let mut latest: HashMap<Id, &IoEntry> = HashMap::new();
        let mut times: HashMap<Id, (Timestamp, Timestamp, Option<Timestamp>)> = HashMap::new();
        for (_, e) in &rows {
            let Some(c) = e.end.container_id() else { continue };
            if latest.get(&c).is_none_or(|l| e.at > l.at) {
                latest.insert(c, e);
            }
            let t = times.entry(c).or_insert((e.at, e.at, None));
            t.0 = t.0.min(e.at);
            t.1 = t.1.max(e.at);
            if let Some((_, done)) = e.completed {
                t.2 = Some(t.2.map_or(done, |d| d.max(done)));
            }
        }
        for c in containers {
            let id = match latest.get(&c.id) {
                Some(e) => DatasetId { namespace: e.namespace.clone(), name: e.name.clone() },
                None => DatasetId {
                    namespace: datastores
                        .get(&c.datastore_id)
                        .map(super::sql::namespace_of)
                        .unwrap_or_else(|| format!("datastore-{}", c.datastore_id)),
                    name: crate::domain::container_key(c.database.as_deref(), c.schema.as_deref(), &c.name),
                },
            };
            let t = times.get(&c.id);
            out.insert(c.id, (id, t.map(|t| t.0), t.map(|t| t.1), t.and_then(|t| t.2)));
        }
        Ok(out)
    }

    async fn datastore_map(&self) -> Result<HashMap<Id, Datastore>> {
        Ok(self.store.list_datastores().await?.into_iter().map(|d| (d.id, d)).collect())
    }

    /// Containers made into Marquez datasets: fields, metadata (when the caller may read it,
    /// the rule of `metadataAssertions`), names and times.
    async fn datasets_of_containers(
        &self,
        caller: &Caller,
        containers: Vec<Container>,
        datastores: &HashMap<Id, Datastore>,
    ) -> Result<Vec<Dataset>> {
        let names = self.container_names(&containers, datastores).await?;
        let ids: Vec<Id> = containers.iter().map(|c| c.id).collect();
        let mut fields: HashMap<Id, Vec<Field>> = HashMap::new();
        for chunk in ids.chunks(MAX_PAGE_SIZE as usize) {
            for f in self.store.fields_of_containers(chunk).await? {
                fields.entry(f.container_id).or_default().push(f);
            }
        }
        let mut out = Vec::new();
        for c in containers {
            let (id, created_at, updated_at, last_modified_at) = names
                .get(&c.id)
                .cloned()
                .unwrap_or_else(|| (DatasetId { namespace: String::new(), name: c.name.clone() }, None, None, None));
            let mut d = Dataset {
                id,
                fields: fields.remove(&c.id).unwrap_or_default(),
                description: None,
                tags: Vec::new(),
                owners: Vec::new(),
                field_meta: HashMap::new(),
                created_at,
                updated_at,
                last_modified_at,
                node: DatasetNode::Container {
                    datastore: datastores.get(&c.datastore_id).cloned().map(Box::new),
                    container: Box::new(c),
                },
            };
            self.add_metadata(caller, &mut d).await?;
            out.push(d);
        }
        Ok(out)
    }

    async fn add_metadata(&self, caller: &Caller, d: &mut Dataset) -> Result<()> {
        let DatasetNode::Container { container, .. } = &d.node else { return Ok(()) };
        if !caller.has(container.datastore_id, Permission::Reporter) {
            return Ok(());
        }
        let rows = self.store.metadata_for_container(container.id).await?;
        let flags = crate::domain::effective_flags(&rows);
        let strings = |v: &serde_json::Value| -> Vec<String> {
            v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()).unwrap_or_default()
        };
        for (row, shown) in rows.iter().zip(flags) {
            if !shown {
                continue;
            }
            let text = row.value.as_str().map(str::to_string);
            match (row.field_id, row.attribute.as_str()) {
                (None, "description") => d.description = text,
                (None, "tags") => d.tags = strings(&row.value),
                (None, "owners") => d.owners = strings(&row.value),
                (Some(f), "description") => d.field_meta.entry(f).or_default().0 = text,
                (Some(f), "tags") => d.field_meta.entry(f).or_default().1 = strings(&row.value),
                _ => {}
            }
        }
        Ok(())
    }

    fn external_dataset(id: DatasetId, fqn: String, rows: &[&IoEntry]) -> Dataset {
        Dataset {
            id,
            node: DatasetNode::External { fqn },
            fields: Vec::new(),
            description: None,
            tags: Vec::new(),
            owners: Vec::new(),
            field_meta: HashMap::new(),
            created_at: rows.iter().map(|e| e.at).min(),
            updated_at: rows.iter().map(|e| e.at).max(),
            last_modified_at: rows.iter().filter_map(|e| e.completed.map(|(_, t)| t)).max(),
        }
    }

    /// Every namespace, by name.
    pub async fn marquez_namespaces(&self, caller: &Caller) -> Result<Vec<Namespace>> {
        let scan = self.scan(caller).await?;
        self.namespaces_of(&scan).await
    }

    async fn namespaces_of(&self, scan: &Scan) -> Result<Vec<Namespace>> {
        let mut out: BTreeMap<String, Namespace> = BTreeMap::new();
        let mut note = |name: &str, at: Option<(Timestamp, Timestamp)>| {
            let n = out.entry(name.to_string()).or_insert_with(|| Namespace {
                name: name.to_string(),
                created_at: None,
                updated_at: None,
            });
            if let Some((first, last)) = at {
                n.created_at = Some(n.created_at.map_or(first, |c| c.min(first)));
                n.updated_at = Some(n.updated_at.map_or(last, |u| u.max(last)));
            }
        };
        for j in scan.jobs.iter().filter(|j| scan.visible.contains(&j.id)) {
            note(&j.namespace, Some((j.first_seen_at, j.last_seen_at)));
        }
        for (_, e) in &scan.io {
            note(&e.namespace, Some((e.at, e.at)));
        }
        for d in self.store.list_datastores().await? {
            note(&super::sql::namespace_of(&d), None);
            for n in &d.namespaces {
                note(n, None);
            }
        }
        Ok(out.into_values().collect())
    }

    /// One namespace, or NOT_FOUND.
    pub async fn marquez_namespace(&self, caller: &Caller, name: &str) -> Result<Namespace> {
        super::require_name("namespace", name)?;
        self.marquez_namespaces(caller)
            .await?
            .into_iter()
            .find(|n| n.name == name)
            .ok_or_else(|| Error::NotFound(format!("namespace {name:?} not found")))
    }

    /// The datasets of a namespace, by name (the whole list: the caller pages it).
    pub async fn marquez_datasets(&self, caller: &Caller, namespace: &str) -> Result<Vec<Dataset>> {
        super::require_name("namespace", namespace)?;
        let scan = self.scan(caller).await?;
        if !self.namespaces_of(&scan).await?.iter().any(|n| n.name == namespace) {
            return Err(Error::NotFound(format!("namespace {namespace:?} not found")));
        }
        let datastores = self.datastore_map().await?;
        let folded = crate::ingest::openlineage::naming::normalize_namespace(namespace);
        let mut containers: BTreeMap<Id, Container> = BTreeMap::new();
        for d in datastores.values().filter(|d| {
            super::sql::namespace_of(d) == namespace
                || d.namespaces.iter().any(|n| crate::ingest::openlineage::naming::normalize_namespace(n) == folded)
        }) {
            let mut page = PageRequest { page: 1, size: MAX_PAGE_SIZE };
            loop {
                let p = self.store.list_containers(Some(d.id), None, page).await?;
                let n = p.items.len() as i64;
                containers.extend(p.items.into_iter().map(|c| (c.id, c)));
                if n < page.size {
                    break;
                }
                page.page += 1;
            }
        }
        // Containers elsewhere that an event named in this namespace (an alias, a symlink).
        let named_here: Vec<Id> = scan
            .io
            .iter()
            .filter(|(_, e)| e.namespace == namespace)
            .filter_map(|(_, e)| e.end.container_id())
            .filter(|c| !containers.contains_key(c))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for chunk in named_here.chunks(MAX_PAGE_SIZE as usize) {
            containers.extend(self.store.containers_by_ids(chunk).await?.into_iter().map(|c| (c.id, c)));
        }
        let mut out: Vec<Dataset> = self
            .datasets_of_containers(caller, containers.into_values().collect(), &datastores)
            .await?
            .into_iter()
            .filter(|d| d.id.namespace == namespace)
            .collect();
        let mut externals: BTreeMap<(String, String), Vec<&IoEntry>> = BTreeMap::new();
        for (_, e) in scan.io.iter().filter(|(_, e)| e.namespace == namespace) {
            if let End::External { fqn } = &e.end {
                externals.entry((e.name.clone(), fqn.clone())).or_default().push(e);
            }
        }
        for ((name, fqn), rows) in externals {
            let id = DatasetId { namespace: namespace.to_string(), name };
            if !out.iter().any(|d| d.id == id) {
                out.push(Self::external_dataset(id, fqn, &rows));
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// What an OpenLineage identity denotes now: its container, or the external asset lineage
    /// or a job's datasets name (an asset read and written only by jobs has no edge of its own).
    async fn find_dataset(&self, id: &DatasetId) -> Result<Option<std::result::Result<Container, String>>> {
        match self.dataset_node(&id.namespace, &id.name).await? {
            Some(Ok(c)) => return Ok(Some(Ok(c))),
            Some(Err(x)) => return Ok(Some(Err(x.fqn))),
            None => {}
        }
        let folded = crate::ingest::openlineage::naming::normalize_namespace(&id.namespace);
        let mut fqns = vec![
            super::openlineage::external_fqn(id.namespace.trim(), id.name.trim()),
            super::openlineage::external_fqn(&folded, id.name.trim()),
        ];
        fqns.dedup();
        for fqn in fqns {
            if !self.store.jobs_of_ends(&[End::External { fqn: fqn.clone() }]).await?.is_empty() {
                return Ok(Some(Err(fqn)));
            }
        }
        Ok(None)
    }

    /// The dataset an OpenLineage identity denotes now, or NOT_FOUND.
    pub async fn marquez_dataset(&self, caller: &Caller, id: &DatasetId) -> Result<Dataset> {
        let not_found = || Error::NotFound(format!("dataset {:?} in namespace {:?} not found", id.name, id.namespace));
        match self.find_dataset(id).await? {
            Some(Ok(c)) => {
                let datastores = self.datastore_map().await?;
                let mut d =
                    self.datasets_of_containers(caller, vec![c], &datastores).await?.pop().ok_or_else(not_found)?;
                // Asked by a name that denotes it: answer under that name, as Marquez would.
                d.id = id.clone();
                Ok(d)
            }
            Some(Err(fqn)) => {
                let rows = self.store.jobs_of_ends(&[End::External { fqn: fqn.clone() }]).await?;
                let rows: Vec<&IoEntry> = rows.iter().map(|(_, e)| e).collect();
                Ok(Self::external_dataset(id.clone(), fqn, &rows))
            }
            None => Err(not_found()),
        }
    }

    /// Each job's current datasets (see the module's notes).
    async fn current_io(&self, jobs: &[Job]) -> Result<HashMap<Id, Vec<IoEntry>>> {
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
    async fn current_io_with(
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
        let wanted: Vec<Option<String>> = match states {
            None => vec![None],
            Some(list) => {
                let mut out = Vec::new();
                for s in list {
                    let Some(ol) = states_of(s) else {
                        return Err(Error::BadInput(format!(
                            "lastRunStates must be among NEW, RUNNING, COMPLETED, FAILED, ABORTED; got {s:?}"
                        )));
                    };
                    out.extend(ol.iter().map(|s| Some(s.to_string())));
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

    async fn with_io(&self, runs: Vec<Run>, job: &Job) -> Result<Vec<MarquezRun>> {
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

    /// Marquez's lineage graph around a dataset or a job: datasets and the visible jobs between
    /// them, `depth` jobs away at most, each edge from an input to its job and from a job to its
    /// output (the jobs' current datasets, see the module's notes).
    pub async fn marquez_lineage(&self, caller: &Caller, node: &NodeId, depth: i64) -> Result<Graph> {
        if !(0..=MAX_DEPTH).contains(&depth) {
            return Err(Error::BadInput(format!("depth must be between 0 and {MAX_DEPTH}, got {depth}")));
        }
        let mut graph = Graph::default();
        // Datasets by node id, with their Tributary end; jobs by id.
        let mut ends: HashMap<End, DatasetId> = HashMap::new();
        let mut jobs_done: HashSet<Id> = HashSet::new();
        let mut ends_done: HashSet<End> = HashSet::new();
        let (mut frontier_ends, mut frontier_jobs): (Vec<End>, Vec<Job>) = (Vec::new(), Vec::new());
        let mut start_job: Option<Id> = None;
        match node {
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
                ends.insert(end.clone(), id.clone());
                frontier_ends.push(end);
            }
            NodeId::Job { namespace, name } => {
                let j = self.marquez_job(caller, namespace, name).await?;
                start_job = Some(j.job.id);
                frontier_jobs.push(j.job);
            }
            NodeId::Field(..) => return Err(Error::BadInput("nodeId of lineage must be a dataset or a job".into())),
        }
        let mut marquez_jobs: BTreeMap<Id, MarquezJob> = BTreeMap::new();
        let mut level = 0;
        loop {
            // Datasets -> the jobs that read or write them (their current datasets only).
            let new_ends: Vec<End> = frontier_ends.drain(..).filter(|e| ends_done.insert(e.clone())).collect();
            if !new_ends.is_empty() && level < depth {
                let rows = self.store.jobs_of_ends(&new_ends).await?;
                let ids: Vec<Id> = rows
                    .iter()
                    .map(|(j, _)| *j)
                    .filter(|j| !jobs_done.contains(j))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if !ids.is_empty() {
                    frontier_jobs.extend(self.store.jobs_by_ids(&ids).await?);
                }
            }
            let new_jobs: Vec<Job> = frontier_jobs.drain(..).filter(|j| jobs_done.insert(j.id)).collect();
            if new_jobs.is_empty() || graph_size(&ends, &marquez_jobs) >= MAX_GRAPH_NODES {
                break;
            }
            level += 1;
            let views = self.job_views(caller, new_jobs).await?;
            let visible: Vec<Job> = views.into_iter().filter(|v| !v.restricted).map(|v| v.job).collect();
            let made = self.marquez_jobs(visible).await?;
            let jobs: Vec<Job> = made.iter().map(|j| j.job.clone()).collect();
            let current = self.current_io(&jobs).await?;
            for j in made {
                let rows = current.get(&j.job.id).map(Vec::as_slice).unwrap_or_default();
                // A job that once touched a dataset of the graph but no longer does is not in
                // it (Marquez's current version); the job asked for always is.
                if Some(j.job.id) != start_job && !rows.iter().any(|e| ends_done.contains(&e.end)) {
                    continue;
                }
                let job_node = node_id_of_job(&j.job.namespace, &j.job.name);
                for e in rows {
                    let id = ends
                        .entry(e.end.clone())
                        .or_insert_with(|| DatasetId { namespace: e.namespace.clone(), name: e.name.clone() })
                        .clone();
                    let ds_node = node_id_of_dataset(&id);
                    match e.direction {
                        IoDirection::Read => graph.edges.insert((ds_node, job_node.clone())),
                        IoDirection::Wrote => graph.edges.insert((job_node.clone(), ds_node)),
                    };
                    if !ends_done.contains(&e.end) {
                        frontier_ends.push(e.end.clone());
                    }
                }
                marquez_jobs.insert(j.job.id, j);
            }
        }
        // The datasets' data, in batches.
        let containers: Vec<Id> = ends.keys().filter_map(End::container_id).collect();
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
        let externals: Vec<End> = ends.keys().filter(|e| matches!(e, End::External { .. })).cloned().collect();
        let external_rows = if externals.is_empty() { Vec::new() } else { self.store.jobs_of_ends(&externals).await? };
        for (end, id) in &ends {
            let mut d = match end {
                End::External { fqn } => {
                    let rows: Vec<&IoEntry> =
                        external_rows.iter().filter(|(_, e)| &e.end == end).map(|(_, e)| e).collect();
                    Self::external_dataset(id.clone(), fqn.clone(), &rows)
                }
                _ => match end.container_id().and_then(|c| by_container.get(&c)) {
                    Some(d) => d.clone(),
                    // Deleted since: its name stays, its catalog data is gone.
                    None => Self::external_dataset(id.clone(), String::new(), &[]),
                },
            };
            // The name the graph's edges use (the one events sent).
            d.id = id.clone();
            graph.nodes.insert(node_id_of_dataset(id), GraphNode::Dataset(Box::new(d)));
        }
        for j in marquez_jobs.into_values() {
            graph.nodes.insert(node_id_of_job(&j.job.namespace, &j.job.name), GraphNode::Job(Box::new(j)));
        }
        Ok(graph)
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

    /// Datasets and visible jobs whose name matches `q` (see `like`), by name, with the total.
    pub async fn marquez_search(
        &self,
        caller: &Caller,
        q: &str,
        filter: Option<SearchFilter>,
        limit: usize,
    ) -> Result<(Vec<SearchHit>, usize)> {
        let scan = self.scan(caller).await?;
        let mut hits: BTreeMap<(String, bool, String), SearchHit> = BTreeMap::new();
        let mut put = |hit: SearchHit| {
            let key = (hit.id.name.to_lowercase(), hit.is_job, hit.id.namespace.clone());
            let slot = hits.entry(key).or_insert_with(|| hit.clone());
            if hit.updated_at > slot.updated_at {
                slot.updated_at = hit.updated_at;
            }
        };
        if filter != Some(SearchFilter::Dataset) {
            for j in scan.jobs.iter().filter(|j| scan.visible.contains(&j.id) && like(q, &j.name)) {
                put(SearchHit {
                    is_job: true,
                    id: DatasetId { namespace: j.namespace.clone(), name: j.name.clone() },
                    updated_at: Some(j.last_seen_at),
                });
            }
        }
        if filter != Some(SearchFilter::Job) {
            // Datasets events named, then catalogued containers whose name holds the query's
            // last literal part (the store's name index), matched on their full name.
            let mut named: HashSet<Id> = HashSet::new();
            for (_, e) in &scan.io {
                if let Some(c) = e.end.container_id() {
                    named.insert(c);
                }
                if like(q, &e.name) {
                    put(SearchHit {
                        is_job: false,
                        id: DatasetId { namespace: e.namespace.clone(), name: e.name.clone() },
                        updated_at: Some(e.at),
                    });
                }
            }
            let literal = q.split(['%', '_', '.', '/']).rfind(|s| !s.trim().is_empty()).unwrap_or("");
            if !literal.is_empty() {
                let datastores = self.datastore_map().await?;
                let p = self
                    .store
                    .list_containers(None, Some(literal), PageRequest { page: 1, size: MAX_PAGE_SIZE })
                    .await?;
                let unnamed: Vec<Container> = p.items.into_iter().filter(|c| !named.contains(&c.id)).collect();
                for (id, _, updated, _) in self.container_names(&unnamed, &datastores).await?.into_values() {
                    if like(q, &id.name) {
                        put(SearchHit { is_job: false, id, updated_at: updated });
                    }
                }
            }
        }
        let total = hits.len();
        Ok((hits.into_values().take(limit).collect(), total))
    }

    /// Stored events, newest first (or oldest first with `ascending`), received in the window,
    /// with their total: the events of jobs the caller may not see are left out of the page.
    pub async fn marquez_events(
        &self,
        caller: &Caller,
        after: Option<Timestamp>,
        before: Option<Timestamp>,
        ascending: bool,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<StoredEvent>, i64)> {
        let filter = crate::domain::EventFilter { since: after, until: before, ..Default::default() };
        let total = self.store.list_events(&filter, PageRequest { page: 1, size: 1 }).await?.total;
        // The store pages newest first; oldest first is the same list read from its end.
        let (start, count) = if ascending {
            let end = (total - offset).max(0);
            ((end - limit).max(0), end.min(limit))
        } else {
            (offset, limit)
        };
        let mut events = self.events_slice(&filter, start, count).await?;
        if ascending {
            events.reverse();
        }
        if !caller.unrestricted_admin {
            let mut seen: HashMap<(String, String), bool> = HashMap::new();
            let mut kept = Vec::new();
            for e in events {
                let (Some(ns), Some(name)) = (e.job_namespace.clone(), e.job_name.clone()) else {
                    kept.push(e);
                    continue;
                };
                let visible = match seen.get(&(ns.clone(), name.clone())) {
                    Some(v) => *v,
                    None => {
                        let v = match self.store.job_by_name(&ns, &name).await? {
                            Some(job) => !self.job_views(caller, vec![job]).await?.remove(0).restricted,
                            None => true,
                        };
                        seen.insert((ns, name), v);
                        v
                    }
                };
                if visible {
                    kept.push(e);
                }
            }
            events = kept;
        }
        Ok((events, total))
    }

    /// Events `start..start + count` of the store's newest-first list, through its pages.
    async fn events_slice(
        &self,
        filter: &crate::domain::EventFilter,
        start: i64,
        count: i64,
    ) -> Result<Vec<StoredEvent>> {
        let mut out = Vec::new();
        for (page, keep) in pages_for(start, count) {
            let p = self.store.list_events(filter, page).await?;
            out.extend(p.items.into_iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, e)| e));
        }
        Ok(out)
    }
}

/// The store pages (page, size) that hold items `start..start + count` of a list, with which
/// positions of each page's items to keep: pages of `count` items, so the slice spans two at
/// most (Marquez pages by offset, the stores by page number).
fn pages_for(start: i64, count: i64) -> Vec<(PageRequest, impl Fn(usize) -> bool)> {
    if count <= 0 || start < 0 {
        return Vec::new();
    }
    let size = count.min(MAX_PAGE_SIZE);
    let first = start / size + 1;
    let end = start.saturating_add(count);
    [first, first + 1]
        .into_iter()
        .filter(|page| (page - 1).saturating_mul(size) < end)
        .map(|page| {
            let from = (page - 1).saturating_mul(size);
            (PageRequest { page, size }, move |i: usize| {
                let at = from.saturating_add(i as i64);
                at >= start && at < end
            })
        })
        .collect()
}

fn graph_size(ends: &HashMap<End, DatasetId>, jobs: &BTreeMap<Id, MarquezJob>) -> usize {
    ends.len() + jobs.len()
}

/// Inputs and outputs of io rows, each once, by name.
fn split_io(rows: &[IoEntry]) -> (Vec<DatasetId>, Vec<DatasetId>) {
    let (mut i, mut o) = (BTreeSet::new(), BTreeSet::new());
    for e in rows {
        let id = DatasetId { namespace: e.namespace.clone(), name: e.name.clone() };
        match e.direction {
            IoDirection::Read => i.insert(id),
            IoDirection::Wrote => o.insert(id),
        };
    }
    (i.into_iter().collect(), o.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(ns: &str, name: &str) -> NodeId {
        NodeId::Dataset(DatasetId { namespace: ns.into(), name: name.into() })
    }

    #[test]
    fn node_ids_split_uri_namespaces() {
        assert_eq!(
            NodeId::parse("dataset:food_delivery:public.orders").ok(),
            Some(ds("food_delivery", "public.orders"))
        );
        assert_eq!(
            NodeId::parse("dataset:postgres://db:5432:shop.public.orders").ok(),
            Some(ds("postgres://db:5432", "shop.public.orders"))
        );
        assert_eq!(
            NodeId::parse("dataset:s3://bucket:/data/x.parquet").ok(),
            Some(ds("s3://bucket", "/data/x.parquet"))
        );
        assert_eq!(
            NodeId::parse("job:grandmas.kitchen:prepare_apple_pie").ok(),
            Some(NodeId::Job { namespace: "grandmas.kitchen".into(), name: "prepare_apple_pie".into() })
        );
        assert_eq!(
            NodeId::parse("datasetField:postgres://db:5432:shop.public.orders:amount").ok(),
            Some(NodeId::Field(
                DatasetId { namespace: "postgres://db:5432".into(), name: "shop.public.orders".into() },
                "amount".into()
            ))
        );
        for bad in [
            "",
            "dataset",
            "dataset:",
            "dataset:ns",
            "dataset:ns:",
            "table:ns:x",
            "dataset:ns:x#v1",
            "datasetField:ns:x",
            "dataset:ns:\u{0}",
        ] {
            assert!(matches!(NodeId::parse(bad), Err(Error::BadInput(_))), "{bad:?}");
        }
    }

    #[test]
    fn any_short_text_parses_or_is_refused() {
        // Every text up to 6 characters over the characters node ids are made of: no panic,
        // and what parses is written back unchanged.
        let alphabet = ['d', 'a', 't', 's', 'e', ':', '/', '1', '#', 'é', 'j', 'o', 'b'];
        let mut texts = vec![String::new()];
        for _ in 0..6 {
            let next: Vec<String> =
                texts.iter().flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}"))).collect();
            for t in &next {
                let _ = NodeId::parse(t);
                let _ = NodeId::parse(&format!("dataset:{t}"));
                let _ = NodeId::parse(&format!("datasetField:{t}"));
            }
            texts = next.into_iter().filter(|t| t.len() < 5).collect();
        }
    }

    #[test]
    fn like_matches_as_marquez_search() {
        assert!(like("apple", "prepare_apple_pie"));
        assert!(like("APPLE%pie", "prepare_apple_pie"));
        assert!(like("a_ple", "apple.filling"));
        assert!(!like("pear", "apple"));
        assert!(like("", "x"));
    }

    #[test]
    fn run_states_map_both_ways() {
        for (ol, mq) in [
            ("START", "NEW"),
            ("RUNNING", "RUNNING"),
            ("COMPLETE", "COMPLETED"),
            ("FAIL", "FAILED"),
            ("ABORT", "ABORTED"),
        ] {
            assert_eq!(run_state(ol), mq);
            assert!(states_of(mq).is_some_and(|s| s.contains(&ol)));
        }
        assert!(states_of("DONE").is_none());
    }
}
