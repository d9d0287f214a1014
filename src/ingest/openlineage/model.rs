//! The validated OpenLineage event: plain Rust types, what the rest of Tributary reads.
//!
//! These types hold only what Tributary applies (CONTRACT "Facets applied"); everything else in an
//! event (unknown facets, extra properties) stays in the stored raw JSON. They derive no serde
//! traits on purpose (STYLE item 4): the wire format is read by hand in `validate` and `facets`,
//! so changing these types never changes what the API accepts or returns.

use std::collections::BTreeSet;
use std::fmt;

use chrono::{DateTime, Utc};

/// Which of the three OpenLineage event types an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `run` and `job`: something ran (runtime lineage).
    Run,
    /// `job` without `run`: a job's design-time lineage.
    Job,
    /// `dataset` without `job` or `run`: metadata about one dataset.
    Dataset,
}

impl EventKind {
    /// The seed's `event_kind` in reports: `run_event`, `job_event`, `dataset_event`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Run => "run_event",
            EventKind::Job => "job_event",
            EventKind::Dataset => "dataset_event",
        }
    }
}

/// A RunEvent's `eventType`: the run state it reports, the domain's one type (parsed in the
/// spec's upper-case spelling only, `RunState::parse`).
pub use crate::domain::RunState;

/// A job's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobRef {
    pub namespace: String,
    pub name: String,
}

/// The `parent` run facet: the run (and job) that started this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentRef {
    pub run_id: String,
    pub job: JobRef,
    /// ParentRunFacet 1-1-0's `root`: the top of the parent chain, when the producer sends it.
    pub root: Option<RootRef>,
}

/// The root run of a parent chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootRef {
    pub run_id: String,
    pub job: JobRef,
}

/// The `sourceCode` job facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCode {
    pub language: Option<String>,
    pub code: String,
}

/// The job facets that describe a job itself (jobs and runs): `jobType`, `documentation`,
/// `ownership` and `sourceCodeLocation`. `sql` and `sourceCode` stay on [`Event`], where the
/// edges' evidence reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobFacets {
    /// `jobType.processingType`: `BATCH` or `STREAMING` as sent.
    pub processing_type: Option<String>,
    pub integration: Option<String>,
    pub job_type: Option<String>,
    pub description: Option<String>,
    /// `ownership.owners[].name`, in order.
    pub owners: Vec<String>,
    /// The `sourceCodeLocation` facet's properties (`type`, `url`, `repoUrl`, `path`, `version`,
    /// `tag`, `branch`), strings only, as a compact JSON object.
    pub source_code_location: Option<String>,
}

/// The run facets a run keeps: `nominalTime` and `errorMessage` (`parent` is on [`Event`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacets {
    pub nominal_start: Option<DateTime<Utc>>,
    pub nominal_end: Option<DateTime<Utc>>,
    pub error_message: Option<String>,
    pub error_language: Option<String>,
    pub stack_trace: Option<String>,
}

/// One validated event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// RunEvents only; `None` when the producer left it out (allowed) and for other kinds.
    pub event_type: Option<RunState>,
    pub event_time: DateTime<Utc>,
    pub producer: String,
    pub schema_url: String,
    /// RunEvents only: `run.runId` as sent. Usually a UUID; a non-empty string that is not one is
    /// kept as given, with a warning.
    pub run_id: Option<String>,
    /// RunEvents and JobEvents.
    pub job: Option<JobRef>,
    pub parent: Option<ParentRef>,
    /// The `sql` job facet's `query`.
    pub job_sql: Option<String>,
    /// The `sourceCode` job facet.
    pub job_source_code: Option<SourceCode>,
    /// What the job facets say about the job.
    pub job_facets: JobFacets,
    /// What the run facets say about the run (RunEvents).
    pub run_facets: RunFacets,
    pub inputs: Vec<Dataset>,
    pub outputs: Vec<Dataset>,
    /// DatasetEvents only: the dataset it describes.
    pub dataset: Option<Dataset>,
    /// Things in the event that were not applied but did not reject it: malformed references in
    /// facets (a column-lineage input with no `field`, a symlink with no name), facets of the
    /// wrong shape, a runId that is not a UUID. At most [`super::MAX_ISSUES`] are listed.
    pub warnings: Vec<ValidationIssue>,
}

impl Event {
    /// Every dataset the event names directly: inputs, outputs, and a DatasetEvent's dataset.
    pub fn datasets(&self) -> impl Iterator<Item = &Dataset> {
        self.inputs.iter().chain(self.outputs.iter()).chain(self.dataset.iter())
    }

    /// The relationships this event attempts, as the 10,000 limit counts them (CONTRACT: before
    /// resolution to containers):
    ///
    /// - `|inputs| x |outputs|` table-level relationships, plus
    /// - one per column-lineage input field of every dataset (each `fields.<out>.inputFields[i]`
    ///   that names a field), plus
    /// - for the dataset-wide `dataset` list of a columnLineage facet: each entry counts once per
    ///   output field of that dataset (the distinct names from its `schema` facet, nested fields
    ///   included, and its `columnLineage.fields` keys), or once if the event names no field of
    ///   it, because it affects the whole dataset.
    ///
    /// Malformed references (kept as warnings) are not attempted, so they do not count.
    pub fn relationship_count(&self) -> usize {
        let mut count = self.inputs.len().saturating_mul(self.outputs.len());
        for dataset in self.datasets() {
            count = count.saturating_add(dataset.column_lineage.len());
            if !dataset.dataset_wide.is_empty() {
                let per_entry = dataset.output_field_names().len().max(1);
                count = count.saturating_add(dataset.dataset_wide.len().saturating_mul(per_entry));
            }
        }
        count
    }
}

/// A dataset as an event names it, with the facets Tributary applies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dataset {
    pub namespace: String,
    pub name: String,
    /// The `symlinks` facet's identifiers: other names of the same dataset (a table behind a
    /// path, for instance), used to match it to a catalog container.
    pub symlinks: Vec<DatasetRef>,
    /// The `schema` facet's fields, nested `fields` flattened to `parent.child` after their
    /// parent. Empty when there is no schema facet (or it lists no field).
    pub schema: Vec<SchemaField>,
    /// The `documentation` facet's description.
    pub description: Option<String>,
    /// The `ownership` facet; `Some(vec![])` is an explicit "no owners".
    pub owners: Option<Vec<Owner>>,
    /// The `tags` facet; `Some(vec![])` is an explicit "no tags".
    pub tags: Option<Vec<Tag>>,
    /// The `lifecycleStateChange` facet.
    pub lifecycle: Option<Lifecycle>,
    /// The `columnLineage` facet's per-field lineage, one edge per (output field, input field).
    pub column_lineage: Vec<ColumnEdge>,
    /// The `columnLineage` facet's dataset-wide `dataset` list: input fields that affect the
    /// whole dataset (filters, joins, sorting), usually INDIRECT.
    pub dataset_wide: Vec<InputField>,
}

impl Dataset {
    /// The names the event gives to this dataset's fields: the flattened schema and the
    /// column-lineage outputs, sorted and distinct.
    pub fn output_field_names(&self) -> BTreeSet<&str> {
        self.schema
            .iter()
            .map(|f| f.name.as_str())
            .chain(self.column_lineage.iter().map(|e| e.output_field.as_str()))
            .collect()
    }

    /// The column lineage as field-to-field edges: the per-field entries as sent, then each
    /// dataset-wide `dataset` entry once per field the event names for the dataset (as
    /// `relationship_count` counts them), since it affects the whole dataset; an entry that says
    /// nothing of its transformation is INDIRECT, as the spec defines the list. Borrowed unless
    /// there are dataset-wide entries.
    pub fn column_edges(&self) -> impl Iterator<Item = std::borrow::Cow<'_, ColumnEdge>> + '_ {
        let outputs: Vec<&str> =
            if self.dataset_wide.is_empty() { Vec::new() } else { self.output_field_names().into_iter().collect() };
        let wide = self.dataset_wide.iter().enumerate().flat_map(move |(i, input)| {
            let outputs = outputs.clone();
            outputs.into_iter().map(move |out| {
                let mut input = input.clone();
                if input.transformations.is_empty() {
                    input.transformations.push(Transformation {
                        kind: TransformationKind::Indirect,
                        subtype: None,
                        description: None,
                        masking: false,
                    });
                }
                std::borrow::Cow::Owned(ColumnEdge {
                    output_field: out.to_string(),
                    input,
                    pointer: format!("columnLineage/dataset/{i}"),
                })
            })
        });
        self.column_lineage.iter().map(std::borrow::Cow::Borrowed).chain(wide)
    }

    /// The input fields the column lineage reads: per-field entries' and dataset-wide ones'.
    pub fn column_inputs(&self) -> impl Iterator<Item = &InputField> {
        self.column_lineage.iter().map(|e| &e.input).chain(self.dataset_wide.iter())
    }
}

/// Another dataset's identity: a symlink (with its `type`, such as `TABLE`) or a lifecycle
/// facet's `previousIdentifier` (no type).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatasetRef {
    pub namespace: String,
    pub name: String,
    pub kind: Option<String>,
}

/// One field of the `schema` facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaField {
    /// The field's name; nested fields are `parent.child`.
    pub name: String,
    pub data_type: Option<String>,
    pub description: Option<String>,
}

/// One owner of the `ownership` facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Usually a URN such as `team:data-platform`.
    pub name: String,
    /// The ownership type, such as `MAINTAINER`.
    pub kind: Option<String>,
}

/// One tag of the `tags` dataset facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub key: String,
    pub value: String,
    /// Who set it (`USER`, `DBT CORE`, ...).
    pub source: Option<String>,
    /// TagsDatasetFacet's `field`: the tag applies to this field, not the whole dataset.
    pub field: Option<String>,
}

/// The `lifecycleStateChange` facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    pub change: LifecycleChange,
    /// `previousIdentifier`: the dataset's identity before a RENAME.
    pub previous: Option<DatasetRef>,
}

/// LifecycleStateChangeDatasetFacet's enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifecycleChange {
    Alter,
    Create,
    Drop,
    Overwrite,
    Rename,
    Truncate,
}

impl LifecycleChange {
    pub fn parse(s: &str) -> Option<LifecycleChange> {
        Some(match s {
            "ALTER" => LifecycleChange::Alter,
            "CREATE" => LifecycleChange::Create,
            "DROP" => LifecycleChange::Drop,
            "OVERWRITE" => LifecycleChange::Overwrite,
            "RENAME" => LifecycleChange::Rename,
            "TRUNCATE" => LifecycleChange::Truncate,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleChange::Alter => "ALTER",
            LifecycleChange::Create => "CREATE",
            LifecycleChange::Drop => "DROP",
            LifecycleChange::Overwrite => "OVERWRITE",
            LifecycleChange::Rename => "RENAME",
            LifecycleChange::Truncate => "TRUNCATE",
        }
    }
}

/// One column-lineage relationship: `input` is used to compute `output_field` of the dataset
/// that carries the facet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnEdge {
    pub output_field: String,
    pub input: InputField,
    /// Where it is in the event (`/outputs/0/facets/columnLineage/fields/id/inputFields/2`).
    pub pointer: String,
}

/// An input field of column lineage, with how it was transformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputField {
    pub namespace: String,
    pub name: String,
    pub field: String,
    /// Empty when the producer said nothing about the transformation.
    pub transformations: Vec<Transformation>,
}

/// ColumnLineageDatasetFacet 1-2-0's transformation, or one read from the legacy strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transformation {
    pub kind: TransformationKind,
    /// `IDENTITY`, `TRANSFORMATION`, `AGGREGATION` (DIRECT); `JOIN`, `GROUP_BY`, `FILTER`, `SORT`,
    /// `WINDOW`, `CONDITIONAL` (INDIRECT); or what a legacy `transformationType` said. An empty
    /// string is read as absent.
    pub subtype: Option<String>,
    /// An empty string is read as absent.
    pub description: Option<String>,
    /// The input value was obfuscated (a hash, a count): PII tracing stops here.
    pub masking: bool,
}

/// A transformation's `type`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransformationKind {
    /// The output value is computed from the input value.
    Direct,
    /// The input influences the output (filter, join, sort) without its value flowing into it.
    Indirect,
    /// A type the spec does not define, kept as sent.
    Other(String),
}

impl TransformationKind {
    pub fn parse(s: &str) -> TransformationKind {
        match s {
            "DIRECT" => TransformationKind::Direct,
            "INDIRECT" => TransformationKind::Indirect,
            other => TransformationKind::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            TransformationKind::Direct => "DIRECT",
            TransformationKind::Indirect => "INDIRECT",
            TransformationKind::Other(s) => s,
        }
    }
}

/// Whether a value reaching an output through these transformations is derived rather than a
/// plain copy (CONTRACT: a field edge's `derived`).
///
/// Not derived only when at least one transformation is DIRECT/IDENTITY, every DIRECT one is
/// IDENTITY, and none masks. INDIRECT entries beside an identity do not make the copy derived
/// (Spark's legacy mode lists the filters and joins of a query on every copied column); an edge
/// with only INDIRECT transformations is derived (nothing was copied). An empty list says
/// nothing either way (dbt-ol sends `"transformations": []` for plain copies and computed
/// columns alike): `None`, stored as not said. A legacy `transformationType: "IDENTITY"` is read
/// as DIRECT/IDENTITY, so it is not derived.
pub fn derived(transformations: &[Transformation]) -> Option<bool> {
    if transformations.is_empty() {
        return None;
    }
    let mut identity = false;
    for t in transformations {
        if t.masking {
            return Some(true);
        }
        match &t.kind {
            TransformationKind::Direct if t.subtype.as_deref() == Some("IDENTITY") => identity = true,
            TransformationKind::Indirect => {}
            TransformationKind::Direct | TransformationKind::Other(_) => return Some(true),
        }
    }
    Some(!identity)
}

/// Whether any of the transformations masks the value (PII tracing stops at such an edge).
pub fn masking(transformations: &[Transformation]) -> bool {
    transformations.iter().any(|t| t.masking)
}

/// Whether the input only influences the output (every transformation INDIRECT, at least one):
/// PII tracing skips such edges unless asked.
pub fn indirect_only(transformations: &[Transformation]) -> bool {
    !transformations.is_empty() && transformations.iter().all(|t| t.kind == TransformationKind::Indirect)
}

/// A problem found in an event, and where: `pointer` is a JSON pointer (RFC 6901) into the event
/// as sent, `""` for the event as a whole.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ValidationIssue {
    pub pointer: String,
    pub message: String,
}

impl ValidationIssue {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        ValidationIssue { pointer: pointer.into(), message: message.into() }
    }
}

impl fmt::Display for ValidationIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.pointer, self.message)
        }
    }
}
