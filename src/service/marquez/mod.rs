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
//! `list_jobs` page and one `job_io` per thousand jobs): jobs are few next to tables. The
//! lineage graph reads one step of jobs per statement batch.
//!
//! **Files.** `datasets` (namespaces, datasets, their names and times), `catalog` (sources, tags
//! and dataset versions), `jobs` (jobs and runs), `lineage` (the lineage graph, reshaped from
//! the one graph walk's shared-datasets mode in `service::graph`, and column lineage), `events`
//! (search and the stored events).
//!
//! # How it fits
//!
//! (`service/marquez/`: `datasets`, `catalog`, `jobs`, `lineage`, `events`). What Marquez's API asks, composed from the
//! existing store reads (one store method of its own, `events_by_event_time`): a dataset is named as the latest event
//! that read or wrote it named it (`IoEntry.namespace/name` from `jobs_of_ends`), else by its datastore's first
//! namespace and key; a job's current inputs and outputs are its latest run's (`run_io`), else its own (`job_io`), as
//! Marquez shows a job's current version; the lineage graph is `LineageDao.getLineage`'s, walked by `service::graph`:
//! from the start job (a dataset's latest writer, else latest reader), each step adds the visible jobs whose current datasets overlap those
//! of the jobs of the step before (`jobs_of_ends` finds candidates, one step per batch), `depth` steps, at most
//! `MAX_GRAPH_NODES`; column lineage walks `field_edges_of`. Sources are datastores, tags the global tags and the
//! containers' tags, dataset versions the runs that wrote a dataset with the schema facet of their stored events. Jobs
//! the caller may not see (`jobs::may_see`) are left out of lists, graphs, search and events (Marquez's shapes have no
//! placeholder) and are 403 by name. Namespace and dataset lists and search read every job and its datasets (jobs are
//! few next to tables).

mod catalog;
mod datasets;
mod events;
mod jobs;
mod lineage;

pub use catalog::{version_id, DatasetVersion, Source};

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::auth::Permission;
use crate::domain::{
    Container, Datastore, Direction, Edge, End, Field, Id, IoDirection, IoEntry, Job, JobFilter, PageRequest, Run,
    RunFilter, RunState, StoredEvent, Timestamp,
};
use crate::error::{Error, Result};
use crate::service::jobs::may_see;
use crate::service::{Caller, Lineage, MAX_PAGE_SIZE};

/// The deepest lineage graph asked for (Marquez's default is 20 jobs away).
pub const MAX_DEPTH: i64 = super::graph::MAX_JOB_STEPS;
pub use super::graph::MAX_GRAPH_NODES;

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

impl Dataset {
    /// A dataset with a name and a node only: no fields, metadata or times yet.
    pub fn bare(id: DatasetId, node: DatasetNode) -> Dataset {
        Dataset {
            id,
            node,
            fields: Vec::new(),
            description: None,
            tags: Vec::new(),
            owners: Vec::new(),
            field_meta: HashMap::new(),
            created_at: None,
            updated_at: None,
            last_modified_at: None,
        }
    }
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
}
