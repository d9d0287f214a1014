//! Marquez's JSON shapes (MarquezProject/marquez `spec/openapi.yml`, and its API's answers where
//! the spec is loose), built from `service::marquez`'s answers. camelCase, times in RFC 3339
//! with `Z`, absent values as `null` (Marquez's clients read the keys, so every key is sent).
//!
//! What Tributary does not keep is sent empty rather than invented: no job versions
//! (`currentVersion: null` on jobs), no run arguments (`args: {}`). A dataset's versions are the
//! runs that wrote it: one dataset asked for alone names its latest (`currentVersion`), and a
//! run's outputs name the version it made.

use serde::Serialize;
use serde_json::{json, Map, Value};
use utoipa::ToSchema;

use crate::domain::Timestamp;
use crate::service::marquez::{
    self as m, ColumnGraph, Dataset as MDataset, DatasetNode, Graph, MarquezJob, MarquezRun, Namespace as MNamespace,
};

/// The owner Marquez gives a namespace no one claimed (`NamespaceDao.DEFAULT_NAMESPACE_OWNER`).
pub const DEFAULT_OWNER: &str = "anonymous";

fn time(t: Option<Timestamp>) -> Option<String> {
    t.map(|t| crate::domain::time::rfc3339_micros(&t))
}

/// Marquez's error body: `{"code": <status>, "message": "..."}`.
#[derive(Serialize, ToSchema)]
#[schema(as = MarquezErrorBody)]
pub struct ErrorBody {
    pub code: u16,
    pub message: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezNamespace)]
pub struct Namespace {
    pub name: String,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// Tributary keeps no namespace owners: Marquez's default owner, `anonymous`.
    pub owner_name: String,
    pub description: Option<String>,
    pub is_hidden: bool,
}

impl From<MNamespace> for Namespace {
    fn from(n: MNamespace) -> Self {
        Namespace {
            name: n.name,
            created_at: time(n.created_at),
            updated_at: time(n.updated_at),
            owner_name: DEFAULT_OWNER.into(),
            description: None,
            is_hidden: false,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezNamespaceList)]
pub struct NamespaceList {
    pub namespaces: Vec<Namespace>,
}

/// A dataset's or job's identity.
#[derive(Serialize, ToSchema, Clone)]
#[schema(as = MarquezId)]
pub struct Id {
    pub namespace: String,
    pub name: String,
}

impl From<&m::DatasetId> for Id {
    fn from(d: &m::DatasetId) -> Self {
        Id { namespace: d.namespace.clone(), name: d.name.clone() }
    }
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezDatasetField)]
pub struct DatasetField {
    pub name: String,
    /// The data type, `null` when unknown.
    #[serde(rename = "type")]
    pub data_type: Option<String>,
    pub tags: Vec<String>,
    pub description: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezDataset)]
pub struct Dataset {
    pub id: Id,
    /// `DB_TABLE`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub physical_name: String,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub namespace: String,
    /// The datastore's name (the namespace for an asset outside the catalog).
    pub source_name: String,
    pub fields: Vec<DatasetField>,
    pub tags: Vec<String>,
    /// When a complete run last wrote it.
    pub last_modified_at: Option<String>,
    pub last_lifecycle_state: Option<String>,
    pub description: Option<String>,
    /// The facets Tributary keeps: `schema`, `documentation`, `ownership`, and `tributary`
    /// (the container id or the external asset's fqn).
    pub facets: Value,
    pub current_version: Option<String>,
    pub column_lineage: Option<Value>,
    pub deleted: bool,
}

impl From<&MDataset> for Dataset {
    fn from(d: &MDataset) -> Self {
        let fields: Vec<DatasetField> = d
            .fields
            .iter()
            .map(|f| {
                let (description, tags) = d.field_meta.get(&f.id).cloned().unwrap_or_default();
                DatasetField { name: f.name.clone(), data_type: f.data_type.clone(), tags, description }
            })
            .collect();
        let mut facets = Map::new();
        if !fields.is_empty() {
            let schema: Vec<Value> = fields.iter().map(|f| json!({"name": f.name, "type": f.data_type})).collect();
            facets.insert("schema".into(), json!({ "fields": schema }));
        }
        if let Some(desc) = &d.description {
            facets.insert("documentation".into(), json!({ "description": desc }));
        }
        if !d.owners.is_empty() {
            let owners: Vec<Value> = d.owners.iter().map(|o| json!({ "name": o })).collect();
            facets.insert("ownership".into(), json!({ "owners": owners }));
        }
        let source_name = match &d.node {
            DatasetNode::Container { container, datastore } => {
                facets.insert("tributary".into(), json!({ "containerId": container.id }));
                datastore.as_ref().map(|s| s.name.clone()).unwrap_or_else(|| d.id.namespace.clone())
            }
            DatasetNode::External { fqn } => {
                facets.insert("tributary".into(), json!({ "externalFqn": fqn }));
                d.id.namespace.clone()
            }
        };
        Dataset {
            id: Id::from(&d.id),
            kind: "DB_TABLE".into(),
            name: d.id.name.clone(),
            physical_name: d.id.name.clone(),
            created_at: time(d.created_at),
            updated_at: time(d.updated_at.or(d.created_at)),
            namespace: d.id.namespace.clone(),
            source_name,
            fields,
            tags: d.tags.clone(),
            last_modified_at: time(d.last_modified_at),
            last_lifecycle_state: None,
            description: d.description.clone(),
            facets: Value::Object(facets),
            current_version: None,
            column_lineage: None,
            deleted: false,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezDatasetList)]
pub struct DatasetList {
    pub datasets: Vec<Dataset>,
    pub total_count: usize,
}

/// A job version's or dataset version's id (`version: null` where Tributary has none).
#[derive(Serialize, ToSchema)]
#[schema(as = MarquezVersionId)]
pub struct VersionId {
    pub namespace: String,
    pub name: String,
    pub version: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezDatasetVersionRef)]
pub struct DatasetVersionRef {
    pub dataset_version_id: VersionId,
    pub facets: Value,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezRun)]
pub struct Run {
    /// The OpenLineage `runId`.
    pub id: String,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub nominal_start_time: Option<String>,
    pub nominal_end_time: Option<String>,
    /// `NEW`, `RUNNING`, `COMPLETED`, `FAILED` or `ABORTED`.
    pub state: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub duration_ms: Option<i64>,
    pub args: Value,
    pub job_version: VersionId,
    pub input_dataset_versions: Vec<DatasetVersionRef>,
    pub output_dataset_versions: Vec<DatasetVersionRef>,
    pub context: Value,
    /// `errorMessage` when the run reported one.
    pub facets: Value,
}

impl From<&MarquezRun> for Run {
    fn from(r: &MarquezRun) -> Self {
        // An output's version is the one this run made (`versions` of the dataset); an input's,
        // the version current when it was read, is not kept.
        let versions = |list: &[m::DatasetId], made: bool| -> Vec<DatasetVersionRef> {
            list.iter()
                .map(|d| DatasetVersionRef {
                    dataset_version_id: VersionId {
                        namespace: d.namespace.clone(),
                        name: d.name.clone(),
                        version: made.then(|| m::version_id(d, &r.run.run_id)),
                    },
                    facets: json!({}),
                })
                .collect()
        };
        let run = &r.run;
        let mut facets = Map::new();
        if let Some(message) = &run.error_message {
            facets.insert(
                "errorMessage".into(),
                json!({ "message": message, "programmingLanguage": run.error_language }),
            );
        }
        if let Some(parent) = &run.parent_run_id {
            facets.insert("parent".into(), json!({ "run": { "runId": parent } }));
        }
        Run {
            id: run.run_id.clone(),
            created_at: time(Some(run.first_seen_at)),
            updated_at: time(Some(run.last_seen_at)),
            nominal_start_time: time(run.nominal_start),
            nominal_end_time: time(run.nominal_end),
            state: run.state.marquez_name().to_string(),
            started_at: time(run.started_at),
            ended_at: time(run.ended_at),
            duration_ms: run.duration_ms(),
            args: json!({}),
            job_version: VersionId { namespace: r.job_namespace.clone(), name: r.job_name.clone(), version: None },
            input_dataset_versions: versions(&r.inputs, false),
            output_dataset_versions: versions(&r.outputs, true),
            context: json!({}),
            facets: Value::Object(facets),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezRunList)]
pub struct RunList {
    pub runs: Vec<Run>,
    pub total_count: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezJob)]
pub struct Job {
    pub id: Id,
    /// `BATCH`, `STREAM` or `SERVICE` (the `jobType` facet's processing type; `BATCH` when unsent).
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub simple_name: String,
    pub parent_job_name: Option<String>,
    pub parent_job_uuid: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub namespace: String,
    pub inputs: Vec<Id>,
    pub outputs: Vec<Id>,
    pub location: Option<String>,
    pub context: Value,
    pub description: Option<String>,
    pub latest_run: Option<Run>,
    pub latest_runs: Vec<Run>,
    /// `sql`, `sourceCodeLocation`, `jobType` and `ownership`, where sent.
    pub facets: Value,
    pub current_version: Option<String>,
}

impl From<&MarquezJob> for Job {
    fn from(j: &MarquezJob) -> Self {
        let job = &j.job;
        let location: Option<Value> = job.source_code_location.as_deref().and_then(|s| serde_json::from_str(s).ok());
        let mut facets = Map::new();
        if let Some(sql) = &job.sql {
            facets.insert("sql".into(), json!({ "query": sql }));
        }
        if let Some(l) = &location {
            facets.insert("sourceCodeLocation".into(), l.clone());
        }
        if job.processing_type.is_some() || job.integration.is_some() || job.job_type.is_some() {
            facets.insert(
                "jobType".into(),
                json!({ "processingType": job.processing_type, "integration": job.integration, "jobType": job.job_type }),
            );
        }
        if !job.owners.is_empty() {
            let owners: Vec<Value> = job.owners.iter().map(|o| json!({ "name": o })).collect();
            facets.insert("ownership".into(), json!({ "owners": owners }));
        }
        let latest_run = j.latest_run.as_ref().map(Run::from);
        let kind = job.processing_type.as_deref().map(str::to_ascii_uppercase).unwrap_or_else(|| "BATCH".into());
        Job {
            id: Id { namespace: job.namespace.clone(), name: job.name.clone() },
            kind,
            simple_name: job.name.rsplit('.').next().unwrap_or(&job.name).to_string(),
            name: job.name.clone(),
            parent_job_name: j.parent_name.clone(),
            parent_job_uuid: None,
            created_at: time(Some(job.first_seen_at)),
            updated_at: time(Some(job.last_seen_at)),
            namespace: job.namespace.clone(),
            inputs: j.inputs.iter().map(Id::from).collect(),
            outputs: j.outputs.iter().map(Id::from).collect(),
            location: location.as_ref().and_then(|l| l.get("url")).and_then(Value::as_str).map(str::to_string),
            context: json!({}),
            description: job.description.clone(),
            latest_runs: j.latest_run.as_ref().map(Run::from).into_iter().collect(),
            latest_run,
            facets: Value::Object(facets),
            current_version: None,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezJobList)]
pub struct JobList {
    pub jobs: Vec<Job>,
    pub total_count: usize,
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezEdge)]
pub struct Edge {
    pub origin: String,
    pub destination: String,
}

/// A node's data: a dataset or a job (by `type`), or a field on column lineage.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = MarquezNodeData)]
pub enum NodeData {
    Dataset(Box<Dataset>),
    Job(Box<Job>),
    Field(Box<FieldData>),
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezNode)]
pub struct Node {
    pub id: String,
    /// `DATASET` or `JOB` (`DATASET_FIELD` on column lineage).
    #[serde(rename = "type")]
    pub kind: String,
    pub data: NodeData,
    pub in_edges: Vec<Edge>,
    pub out_edges: Vec<Edge>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezLineageGraph)]
pub struct LineageGraph {
    pub graph: Vec<Node>,
}

/// The edges of each node of a graph: in and out, by node id, sorted.
fn edges_of<'g>(edges: impl Iterator<Item = &'g (String, String)> + Clone, id: &str) -> (Vec<Edge>, Vec<Edge>) {
    let pick = |keep: &dyn Fn(&(String, String)) -> bool| -> Vec<Edge> {
        edges.clone().filter(|e| keep(e)).map(|(o, d)| Edge { origin: o.clone(), destination: d.clone() }).collect()
    };
    (pick(&|e| e.1 == id), pick(&|e| e.0 == id))
}

impl From<&Graph> for LineageGraph {
    fn from(g: &Graph) -> Self {
        let graph = g
            .nodes
            .iter()
            .map(|(id, node)| {
                let (in_edges, out_edges) = edges_of(g.edges.iter(), id);
                let (kind, data) = match node {
                    m::GraphNode::Dataset(d) => ("DATASET", NodeData::Dataset(Box::new(Dataset::from(d.as_ref())))),
                    m::GraphNode::Job(j) => ("JOB", NodeData::Job(Box::new(Job::from(j.as_ref())))),
                };
                Node { id: id.clone(), kind: kind.into(), data, in_edges, out_edges }
            })
            .collect();
        LineageGraph { graph }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezInputField)]
pub struct InputField {
    pub namespace: String,
    pub dataset: String,
    pub dataset_version: Option<String>,
    pub field: String,
    pub transformation_description: Option<String>,
    pub transformation_type: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezFieldData)]
pub struct FieldData {
    pub namespace: String,
    pub dataset: String,
    pub dataset_version: Option<String>,
    pub field: String,
    pub field_type: Option<String>,
    pub transformation_description: Option<String>,
    pub transformation_type: Option<String>,
    pub input_fields: Vec<InputField>,
}

/// An edge's transformation as Marquez names it: the first OpenLineage transformation's type
/// and description, else `IDENTITY` for a copy and `TRANSFORMATION` for a derived value, and
/// none when neither was said (as Marquez answers a field sent without a transformation).
fn transformation(e: &crate::domain::Edge) -> (Option<String>, Option<String>) {
    let first = e.transformations.as_ref().and_then(|t| t.as_array()).and_then(|a| a.first()).cloned();
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    match first {
        Some(t) => (
            text(t.get("description")).or_else(|| e.description.clone()),
            text(t.get("type")).or_else(|| Some("TRANSFORMATION".into())),
        ),
        None => (e.description.clone(), e.derived.map(|d| if d { "TRANSFORMATION" } else { "IDENTITY" }.into())),
    }
}

impl From<&ColumnGraph> for LineageGraph {
    fn from(g: &ColumnGraph) -> Self {
        let graph = g
            .nodes
            .iter()
            .map(|(id, n)| {
                let (in_edges, out_edges) = edges_of(g.edges.iter(), id);
                let input_fields: Vec<InputField> = n
                    .inputs
                    .iter()
                    .map(|(d, f, e)| {
                        let (description, kind) = transformation(e);
                        InputField {
                            namespace: d.namespace.clone(),
                            dataset: d.name.clone(),
                            dataset_version: None,
                            field: f.clone(),
                            transformation_description: description,
                            transformation_type: kind,
                        }
                    })
                    .collect();
                let (description, kind) = n.inputs.first().map(|(_, _, e)| transformation(e)).unwrap_or((None, None));
                let data = FieldData {
                    namespace: n.dataset.namespace.clone(),
                    dataset: n.dataset.name.clone(),
                    dataset_version: None,
                    field: n.field.clone(),
                    field_type: n.field_type.clone(),
                    transformation_description: description,
                    transformation_type: kind,
                    input_fields,
                };
                Node {
                    id: id.clone(),
                    kind: "DATASET_FIELD".into(),
                    data: NodeData::Field(Box::new(data)),
                    in_edges,
                    out_edges,
                }
            })
            .collect();
        LineageGraph { graph }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezSearchResult)]
pub struct SearchResult {
    /// `DATASET` or `JOB`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub updated_at: Option<String>,
    pub namespace: String,
    pub node_id: String,
}

impl From<&m::SearchHit> for SearchResult {
    fn from(h: &m::SearchHit) -> Self {
        SearchResult {
            kind: if h.is_job { "JOB" } else { "DATASET" }.into(),
            name: h.id.name.clone(),
            updated_at: time(h.updated_at),
            namespace: h.id.namespace.clone(),
            node_id: if h.is_job {
                m::node_id_of_job(&h.id.namespace, &h.id.name)
            } else {
                m::node_id_of_dataset(&h.id)
            },
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezSearchResultList)]
pub struct SearchResultList {
    pub total_count: usize,
    pub results: Vec<SearchResult>,
}

/// Stored OpenLineage events, each as it was received.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezLineageEventList)]
pub struct LineageEventList {
    pub events: Vec<Value>,
    pub total_count: i64,
}

/// A source: a datastore, or the namespace of assets outside the catalog.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezSource)]
pub struct Source {
    /// The datastore's type in upper case (`POSTGRESQL`), or the namespace's scheme.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    /// When an event first named one of its datasets (`null` when none did yet).
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// The datastore's first OpenLineage namespace.
    pub connection_url: String,
    pub description: Option<String>,
}

impl From<m::Source> for Source {
    fn from(s: m::Source) -> Self {
        Source {
            kind: s.kind,
            name: s.name,
            created_at: time(s.created_at),
            updated_at: time(s.updated_at),
            connection_url: s.connection_url,
            description: None,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezSourceList)]
pub struct SourceList {
    pub sources: Vec<Source>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezTag)]
pub struct Tag {
    pub name: String,
    pub description: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = MarquezTagList)]
pub struct TagList {
    pub tags: Vec<Tag>,
}

/// A dataset version: a run that wrote the dataset, with the schema its event sent.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezDatasetVersion)]
pub struct DatasetVersion {
    pub id: Id,
    /// `DB_TABLE`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub physical_name: String,
    pub created_at: Option<String>,
    /// A UUID named by the dataset and the run.
    pub version: String,
    pub namespace: String,
    pub source_name: String,
    /// The schema facet's fields.
    pub fields: Vec<DatasetField>,
    pub tags: Vec<String>,
    pub lifecycle_state: Option<String>,
    pub description: Option<String>,
    pub current_schema_version: Option<String>,
    pub created_by_run: Option<Run>,
    /// The dataset's facets in the event the version's schema came from.
    pub facets: Value,
}

impl From<&m::DatasetVersion> for DatasetVersion {
    fn from(v: &m::DatasetVersion) -> Self {
        let d = Dataset::from(&v.dataset);
        DatasetVersion {
            id: d.id,
            kind: d.kind,
            name: d.name,
            physical_name: d.physical_name,
            created_at: time(Some(v.created_at)),
            version: v.version.clone(),
            namespace: d.namespace,
            source_name: d.source_name,
            fields: v
                .fields
                .iter()
                .map(|(name, data_type, description)| DatasetField {
                    name: name.clone(),
                    data_type: data_type.clone(),
                    tags: Vec::new(),
                    description: description.clone(),
                })
                .collect(),
            tags: d.tags,
            lifecycle_state: None,
            description: d.description,
            current_schema_version: None,
            created_by_run: Some(Run::from(&v.run)),
            facets: v.facets.clone(),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = MarquezDatasetVersionList)]
pub struct DatasetVersionList {
    pub versions: Vec<DatasetVersion>,
    pub total_count: usize,
}
