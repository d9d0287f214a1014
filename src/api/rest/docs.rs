//! The OpenAPI document's frame: its info, the bearer scheme, and the routes `api::router`
//! registers itself (GraphQL, the OpenLineage and external-engine ingest, health, metrics and
//! this document), described by `#[utoipa::path]` on stand-ins that are never routed. Their
//! shapes are written down here from what `api::openlineage` answers (`report_json`,
//! `collate_single`, `collate_batch`, `external_lineage`); the integration suite checks real
//! answers against them, and the Python client tests check that every route served is here.

#![allow(dead_code)]

use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa::{Modify, OpenApi as _, ToSchema};

use super::shapes::Detail;

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
    pub applied: i64,
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
pub enum OpenLineageBody {
    Event(Value),
    Events(Vec<Value>),
}

/// A batch body.
#[derive(Serialize, ToSchema)]
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
    /// In a batch: the event's position.
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
    pub summary: Option<CollatedSummary>,
    pub unresolved_datasets: Vec<UnresolvedDataset>,
    pub unresolved_jobs: Vec<Value>,
    pub failed_events: Vec<FailedEvent>,
    /// Single events only: the id it was stored under.
    pub event_id: Option<i64>,
    /// Single events only.
    pub errors: Option<Vec<IngestError>>,
}

/// An external engine's table lineage.
#[derive(Serialize, ToSchema)]
pub struct ExternalLineage {
    /// The table written (required).
    pub target: String,
    /// The tables read; default none.
    pub sources: Option<Vec<String>>,
    /// `CTAS`, `VIEW` and `semantic-view` replace the target's sources; any other value adds.
    /// Default `EXTERNAL`.
    pub operation: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct Ok {
    /// `ok`.
    pub status: String,
}

/// A GraphQL request.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphqlRequest {
    pub query: String,
    pub variables: Option<Value>,
    pub operation_name: Option<String>,
}

/// A GraphQL response; errors carry `extensions.code`.
#[derive(Serialize, ToSchema)]
pub struct GraphqlResponse {
    pub data: Option<Value>,
    pub errors: Option<Vec<Value>>,
}

#[utoipa::path(
    post,
    path = "/api/v1/lineage",
    tag = "ingest",
    description = "OpenLineage events: one event or a list of up to 1,000; `Content-Encoding: gzip` accepted. Answers a report per event. The path the OpenLineage clients send to.",
    request_body(content = OpenLineageBody, description = "One event, or a JSON list of events"),
    responses(
        (status = 201, description = "Applied or ignored (a list answers 201 whatever its events' outcomes)", body = IngestReport),
        (status = 400, description = "Invalid JSON or gzip, nesting over 100, ...", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "A single event lacked EDITOR on an affected datastore", body = IngestDetail),
        (status = 413, description = "Over 50 MiB, or over 1,000 events", body = Detail),
        (status = 422, description = "A single event was rejected", body = IngestDetail),
        (status = 500, description = "A single event could not be applied", body = IngestDetail),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = Detail),
        (status = 503, description = "Ingest is at its limit of running and queued requests, or the store is down or too slow: retry after `Retry-After` seconds", body = Detail),
    ),
    security(("bearer" = []))
)]
fn ingest_v1() {}

#[utoipa::path(
    post,
    path = "/api/lineage/openlineage",
    tag = "ingest",
    description = "The same as `POST /api/v1/lineage`.",
    request_body(content = OpenLineageBody, description = "One event, or a JSON list of events"),
    responses(
        (status = 201, description = "Applied or ignored (a list answers 201 whatever its events' outcomes)", body = IngestReport),
        (status = 400, description = "Invalid JSON or gzip, nesting over 100, ...", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "A single event lacked EDITOR on an affected datastore", body = IngestDetail),
        (status = 413, description = "Over 50 MiB, or over 1,000 events", body = Detail),
        (status = 422, description = "A single event was rejected", body = IngestDetail),
        (status = 500, description = "A single event could not be applied", body = IngestDetail),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = Detail),
        (status = 503, description = "Ingest is at its limit of running and queued requests, or the store is down or too slow: retry after `Retry-After` seconds", body = Detail),
    ),
    security(("bearer" = []))
)]
fn ingest_openlineage() {}

#[utoipa::path(
    post,
    path = "/api/v1/openlineage/lineage",
    tag = "ingest",
    description = "One OpenLineage event, answered with a status (`success`, `partial_success`, `failure`), the edges created and the datasets that matched no catalog container.",
    request_body(content = Value, description = "One OpenLineage event object"),
    responses(
        (status = 200, description = "`success` or `partial_success`", body = Collated),
        (status = 400, description = "A bad format, or an event that wrote nothing (`failure`)", body = Collated),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 413, description = "Over 50 MiB", body = Collated),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = Detail),
        (status = 503, description = "Ingest is at its limit of running and queued requests, or the store is down or too slow: retry after `Retry-After` seconds", body = Detail),
    ),
    security(("bearer" = []))
)]
fn collate_single() {}

#[utoipa::path(
    post,
    path = "/api/v1/openlineage/lineage/batch",
    tag = "ingest",
    description = "A batch of OpenLineage events (`{\"events\": [...]}`), answered with a status, a summary of the batch, the edges created and the datasets that matched no catalog container.",
    request_body = OpenLineageBatch,
    responses(
        (status = 200, description = "`success` or `partial_success`, with the batch's summary", body = Collated),
        (status = 400, description = "A bad format, or every event failed (`failure`)", body = Collated),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 413, description = "Over 50 MiB, or over 1,000 events", body = Collated),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = Detail),
        (status = 503, description = "Ingest is at its limit of running and queued requests, or the store is down or too slow: retry after `Retry-After` seconds", body = Detail),
    ),
    security(("bearer" = []))
)]
fn collate_batch() {}

#[utoipa::path(
    post,
    path = "/v1/api/lineage",
    tag = "ingest",
    description = "Table lineage from an external engine: a target table and the tables it reads (CTAS and VIEW replace the target's sources, other operations add); also `Authorization: Token <token>`.",
    request_body = ExternalLineage,
    responses(
        (status = 200, description = "Recorded", body = Ok),
        (status = 400, description = "No target, or a malformed body", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "EDITOR is missing on an affected datastore", body = Detail),
        (status = 413, description = "Over 10,000 sources, or over 50 MiB", body = Detail),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = Detail),
        (status = 503, description = "Ingest is at its limit of running and queued requests, or the store is down or too slow: retry after `Retry-After` seconds", body = Detail),
    ),
    security(("bearer" = []))
)]
fn external_lineage() {}

#[utoipa::path(
    post,
    path = "/graphql",
    tag = "graphql",
    description = "GraphQL (`tributary schema` prints the SDL). Errors, an unauthenticated request's included, are GraphQL errors with `extensions.code`.",
    request_body = GraphqlRequest,
    responses(
        (status = 200, description = "The GraphQL response", body = GraphqlResponse),
        (status = 400, description = "The body is not a GraphQL request", body = GraphqlResponse),
        (status = 413, description = "Over 2 MiB"),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = GraphqlResponse),
        (status = 503, description = "The store is unavailable or too slow, or `ingestOpenLineage` met the ingest limit: retry after `Retry-After` seconds", body = GraphqlResponse),
    ),
    security(("bearer" = []))
)]
fn graphql_post() {}

#[utoipa::path(
    get,
    path = "/graphql",
    tag = "graphql",
    description = "GraphiQL, for a person in a browser. A websocket upgrade (`Upgrade: websocket`, subprotocol `graphql-transport-ws`) runs GraphQL subscriptions instead (`lineageChanged`); its token goes in the `connection_init` payload as `{\"Authorization\": \"Bearer <token>\"}`, and a connection without a valid one is closed with code 4401.",
    responses(
        (status = 200, description = "The GraphiQL page", content_type = "text/html", body = String),
        (status = 101, description = "Switched to the websocket of a subscription client"),
    ),
    security(())
)]
fn graphql_get() {}

#[utoipa::path(
    get,
    path = "/",
    tag = "explorer",
    description = "Redirects to the lineage explorer at `/ui`.",
    responses((status = 307, description = "To `/ui`")),
    security(())
)]
fn root() {}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses((status = 200, description = "Alive", content_type = "text/plain", body = String)),
    security(())
)]
fn healthz() {}

#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, description = "The store answers", content_type = "text/plain", body = String),
        (status = 503, description = "The store does not answer", content_type = "text/plain", body = String),
    ),
    security(())
)]
fn readyz() {}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text", content_type = "text/plain", body = String)),
    security(())
)]
fn metrics() {}

#[utoipa::path(
    get,
    path = "/ui",
    tag = "explorer",
    description = "The lineage explorer, a page for a person in a browser (`?container=<id>&depth=&side=up|down`).",
    responses((status = 200, description = "The explorer page", content_type = "text/html", body = String)),
    security(())
)]
fn ui() {}

#[utoipa::path(
    get,
    path = "/ui/",
    tag = "explorer",
    description = "The lineage explorer (as `/ui`).",
    responses((status = 200, description = "The explorer page", content_type = "text/html", body = String)),
    security(())
)]
fn ui_slash() {}

#[utoipa::path(
    get,
    path = "/ui/{path}",
    tag = "explorer",
    description = "The explorer's assets (`/ui/assets/...`) and deep links: any other path under `/ui` is the explorer page.",
    params(("path" = String, Path, description = "Any path under /ui (axum's catch-all `{*path}`)")),
    responses((status = 200, description = "An asset, or the explorer page")),
    security(())
)]
fn ui_path() {}

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    responses((status = 200, description = "This document", body = Value)),
    security(())
)]
fn openapi_json() {}

/// The bearer scheme: `Authorization: Bearer <token>` (`Token <token>` is accepted too).
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut OpenApi) {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "An API token from `tributary token create` (or the one `serve` prints on first start), as \
                 `Authorization: Bearer <token>`; `Authorization: Token <token>` works too. Missing or invalid: 401.",
            ))
            .build();
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", SecurityScheme::Http(scheme));
    }
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Tributary",
        description = "Data lineage over REST and GraphQL. The REST lineage routes are `/api/lineage/...` (edges, the graph, fields and their connections, by id) and `/admin/lineage/...` (read-only, tables by qualified name); every route calls the same service as GraphQL, with the same rules, permissions and limits.",
        license(name = "Apache-2.0")
    ),
    paths(
        ingest_v1,
        ingest_openlineage,
        collate_single,
        collate_batch,
        external_lineage,
        graphql_post,
        graphql_get,
        healthz,
        readyz,
        metrics,
        openapi_json,
        root,
        ui,
        ui_slash,
        ui_path
    ),
    modifiers(&Bearer),
    security(("bearer" = [])),
    tags(
        (name = "lineage", description = "Lineage by id: edges, the graph, fields, connections, metadata"),
        (name = "lineage by table name", description = "Read-only lineage routes; tables by qualified name"),
        (name = "ingest", description = "OpenLineage and external-engine ingest"),
        (name = "graphql", description = "The GraphQL endpoint"),
        (name = "operations", description = "Health, readiness, metrics, this document"),
        (name = "explorer", description = "The lineage explorer page and its assets"),
    )
)]
struct Frame;

/// The document before the REST routes are merged in.
pub fn base() -> OpenApi {
    let mut doc = Frame::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}
