//! The typed answers (and request bodies) of the routes `api::router` registers itself: the
//! OpenLineage and external-engine ingest, GraphQL. The handlers build these and serialize
//! them, and their `#[utoipa::path]` attributes name the same types, so the OpenAPI document
//! (`api::rest::openapi`) describes exactly what is sent.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::service::openlineage::{EventReport, IngestReport as Report, Unresolved};

/// An error: `{"detail": "..."}`, the REST error body (the REST routes' and the ingest routes').
#[derive(Serialize, ToSchema)]
pub struct Detail {
    pub detail: String,
}

/// The report of one event.
#[derive(Serialize, ToSchema)]
pub struct IngestEvent {
    /// The event's position in the request.
    pub index: i64,
    /// The id it was stored under.
    pub id: Option<i64>,
    /// `applied`, `ignored`, `rejected` or `failed`.
    pub status: String,
    /// `run_event`, `job_event` or `dataset_event`.
    pub event_kind: Option<String>,
    pub errors: Vec<IngestError>,
    /// What changed: `edges_created`, `evidence_created`, `edges_asserted`, ...
    pub summary: Value,
}

/// A validation error, with its JSON pointer into the event.
#[derive(Serialize, ToSchema)]
pub struct IngestError {
    pub location: String,
    pub message: String,
}

/// The ingest report: counts and one entry per event.
#[derive(Serialize, ToSchema)]
pub struct IngestReport {
    pub received: i64,
    /// Events that changed lineage or metadata.
    pub applied: i64,
    /// Events that changed no lineage but recorded their run's state (a FAIL that retired
    /// nothing, a START naming no dataset).
    pub recorded: i64,
    /// Events with nothing new (duplicates, a late START of an ended run, ...).
    pub ignored: i64,
    pub rejected: i64,
    pub failed: i64,
    pub events: Vec<IngestEvent>,
}

/// A single event that was not applied: its report under `detail`.
#[derive(Serialize, ToSchema)]
pub struct IngestDetail {
    pub detail: IngestReport,
}

/// One OpenLineage event (RunEvent, JobEvent or DatasetEvent), or a list of up to 1,000.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // A request body: documented, parsed by `ingest::openlineage`.
pub enum OpenLineageBody {
    Event(Value),
    Events(Vec<Value>),
}

/// A batch body.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // A request body: documented, parsed by `ingest::openlineage`.
pub struct OpenLineageBatch {
    /// Up to 1,000 OpenLineage events.
    pub events: Vec<Value>,
}

/// The counts of a batch.
#[derive(Serialize, ToSchema)]
pub struct CollatedSummary {
    pub received: i64,
    pub successful: i64,
    pub failed: i64,
    pub skipped: i64,
    pub partial: i64,
}

/// A dataset that matched no catalog container, with a reason code.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnresolvedDataset {
    pub namespace: String,
    pub name: String,
    /// `namespaceNotMapped`, `notFound`, `unparsableName`, `missingColumns`, `creationDisabled`, ...
    pub reason: String,
    pub message: String,
    /// The column, when a column-lineage field did not resolve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// In a batch: the event's position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_index: Option<i64>,
}

#[derive(Serialize, ToSchema)]
pub struct FailedEvent {
    pub index: i64,
    pub reason: String,
    pub retriable: bool,
}

/// The answer of the single-event and batch routes.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Collated {
    /// `success`, `partial_success` or `failure`.
    pub status: String,
    pub message: String,
    pub lineage_edges_created: i64,
    /// Batches only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<CollatedSummary>,
    pub unresolved_datasets: Vec<UnresolvedDataset>,
    pub unresolved_jobs: Vec<Value>,
    pub failed_events: Vec<FailedEvent>,
    /// Single events only: the id it was stored under (null when it was not stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>)]
    pub event_id: Option<Value>,
    /// Single events only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<IngestError>>,
}

/// An external engine's table lineage.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // A request body: documented, read field by field by `external_lineage`.
pub struct ExternalLineage {
    /// The table written (required).
    pub target: String,
    /// The tables read; default none.
    pub sources: Option<Vec<String>>,
    /// `CTAS`, `VIEW` and `semantic-view` replace the target's sources; any other value adds.
    /// Default `EXTERNAL`.
    pub operation: Option<String>,
}

/// `{"status": "ok"}`.
#[derive(Serialize, ToSchema)]
pub struct Status {
    /// `ok`.
    pub status: String,
}

/// A GraphQL request.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // A request body: documented, parsed by async-graphql.
pub struct GraphqlRequest {
    pub query: String,
    pub variables: Option<Value>,
    pub operation_name: Option<String>,
}

/// A GraphQL response (async-graphql's); errors carry `extensions.code`.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // async-graphql's `Response` is what is sent; this is its documented shape.
pub struct GraphqlResponse {
    pub data: Option<Value>,
    pub errors: Option<Vec<Value>>,
}

/// A denied event is reported as rejected: the report lists four statuses.
pub fn public_status(status: &str) -> &str {
    if status == "denied" {
        "rejected"
    } else {
        status
    }
}

fn errors(e: &EventReport) -> Vec<IngestError> {
    e.errors.iter().map(|(l, m)| IngestError { location: l.clone(), message: m.clone() }).collect()
}

impl IngestEvent {
    pub fn of(e: &EventReport) -> Self {
        IngestEvent {
            index: e.index as i64,
            id: e.id,
            status: public_status(e.status).to_string(),
            event_kind: e.kind.map(str::to_string),
            errors: errors(e),
            summary: e.summary.clone(),
        }
    }
}

impl IngestReport {
    pub fn of(r: &Report) -> Self {
        IngestReport {
            received: r.events.len() as i64,
            applied: r.count("applied") as i64,
            recorded: r.count("recorded") as i64,
            ignored: r.count("ignored") as i64,
            rejected: (r.count("rejected") + r.count("denied")) as i64,
            failed: r.count("failed") as i64,
            events: r.events.iter().map(IngestEvent::of).collect(),
        }
    }
}

impl UnresolvedDataset {
    pub fn of(u: &Unresolved, event_index: Option<usize>) -> Self {
        UnresolvedDataset {
            namespace: u.namespace.clone(),
            name: u.name.clone(),
            reason: u.reason.to_string(),
            message: u.message.clone(),
            field: u.field.clone(),
            event_index: event_index.map(|i| i as i64),
        }
    }
}

impl Collated {
    /// A refusal: `failure` with the message, nothing written.
    pub fn failure(message: String) -> Self {
        Collated {
            status: "failure".into(),
            message,
            lineage_edges_created: 0,
            summary: None,
            unresolved_datasets: Vec::new(),
            unresolved_jobs: Vec::new(),
            failed_events: Vec::new(),
            event_id: None,
            errors: None,
        }
    }
}

/// The errors of a single event, for `Collated.errors`.
pub fn event_errors(e: &EventReport) -> Vec<IngestError> {
    errors(e)
}
