//! The OpenLineage REST endpoints. All four run the same ingest (`Lineage::ingest_openlineage`,
//! small requests grouped with concurrent ones by `service::group_commit`);
//! only the answer's shape differs: seed 000's per-event report on `/api/v1/lineage` and
//! `/api/lineage/openlineage`, seed 002's summary on `/api/v1/openlineage/lineage[/batch]`.
//!
//! # How it fits
//!
//! The REST handlers. All four OpenLineage routes run `Lineage::ingest_openlineage`; only the answer differs: seed
//! 000's per-event report (`report_json`) or seed 002's summary (`collate_single`, `collate_batch`). `external_lineage`
//! is seed 004's `POST /v1/api/lineage`. REST errors are `{"detail": ...}`. Every ingest handler takes the
//! `Authenticated<Body, Wording>` extractor: it authenticates from the headers first, so a request without a valid
//! token is answered 401 before its body (up to 50 MiB) is read or inflated; only then does it read the body within the
//! limit, gunzip it and parse it (a single event or list, a `{"events": [...]}` batch, or any JSON for seed 004's
//! edge). A refusal is worded as seed 000's `{detail}` or seed 002's failure, by `Wording`.

use std::marker::PhantomData;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::answers::{
    event_errors, Collated, CollatedSummary, Detail, ExternalLineage, FailedEvent, IngestDetail, IngestReport,
    OpenLineageBatch, OpenLineageBody, Status, UnresolvedDataset,
};
use super::AppState;
use crate::ingest::openlineage::{self as ol, BodyError, Limits, ParsedBody};
use crate::service::openlineage::EventReport;

pub use super::answers::public_status;
use crate::service::Caller;

/// The caller of a REST request, or its 401 (`{"detail": ...}`).
async fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, Box<Response>> {
    state.auth.authenticate(super::authorization(headers)).await.map_err(|e| {
        Box::new(detail(StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::UNAUTHORIZED), e.client_message()))
    })
}

/// Body limit of the ingest routes: the seed's 50 MiB, checked again after decompression.
pub const INGEST_BODY_LIMIT: usize = 50 * 1024 * 1024;

fn detail(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(Detail { detail: message.into() })).into_response()
}

/// A request the service could not run: its status from the one error table (503 for a store
/// that is down, with `Retry-After` added by `api::unavailable`).
fn service_error(e: &crate::error::Error) -> Response {
    detail(StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), e.client_message())
}

fn body_error(e: BodyError) -> Response {
    match e {
        BodyError::TooLarge(m) => detail(StatusCode::PAYLOAD_TOO_LARGE, m),
        BodyError::BadRequest(m) => detail(StatusCode::BAD_REQUEST, m),
    }
}

fn is_gzip(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|p| p.trim().eq_ignore_ascii_case("gzip")))
}

/// An ingest request past the preamble every ingest route shares, as an extractor: the caller
/// is authenticated from the headers first, so a request without a valid token costs a hash
/// lookup and never has its (up to 50 MiB) body read or inflated; then the body is read within
/// the route's limit, gunzipped when the request says so, and parsed as `B`. A refusal is the
/// route's answer: 401 for a missing or bad token, the body's own error when it could not be
/// read, and otherwise worded as `W` says.
pub struct Authenticated<B, W>(pub Caller, pub B, PhantomData<W>);

impl<B: Body, W: Wording> FromRequest<AppState> for Authenticated<B, W> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Response> {
        let caller = caller(state, req.headers()).await.map_err(|r| *r)?;
        let gzip = is_gzip(req.headers());
        let body = Bytes::from_request(req, state).await.map_err(|e| detail(e.status(), e.body_text()))?;
        let limits = Limits::default();
        let bytes = ol::decode_body(&body, gzip, &limits).map_err(W::refuse)?;
        let parsed = B::parse(&bytes, &limits).map_err(W::refuse)?;
        Ok(Authenticated(caller, parsed, PhantomData))
    }
}

/// What an ingest route's decoded body is parsed into.
pub trait Body: Sized {
    fn parse(bytes: &[u8], limits: &Limits) -> Result<Self, BodyError>;
}

/// An event or a list of events.
impl Body for ParsedBody {
    fn parse(bytes: &[u8], limits: &Limits) -> Result<Self, BodyError> {
        ol::parse_body(bytes, limits)
    }
}

/// Seed 002's batch, `{"events": [...]}`.
pub struct Batch(pub ParsedBody);

impl Body for Batch {
    fn parse(bytes: &[u8], limits: &Limits) -> Result<Self, BodyError> {
        ol::parse_batch_body(bytes, limits).map(Batch)
    }
}

/// Any JSON value (seed 004's edge); what is not JSON is a bad request.
impl Body for Value {
    fn parse(bytes: &[u8], _: &Limits) -> Result<Self, BodyError> {
        serde_json::from_slice(bytes).map_err(|e| BodyError::BadRequest(format!("the body is not JSON: {e}")))
    }
}

/// How a route words a body it refuses (too large, not valid gzip, not parsable).
pub trait Wording {
    fn refuse(e: BodyError) -> Response;
}

/// The `{"detail": ...}` answer.
pub struct WordedAsDetail;

impl Wording for WordedAsDetail {
    fn refuse(e: BodyError) -> Response {
        body_error(e)
    }
}

/// The `{"status": "failure", ...}` answer of the single-event and batch routes.
pub struct WordedAsCollated;

impl Wording for WordedAsCollated {
    fn refuse(e: BodyError) -> Response {
        collate_error(body_error_message(e))
    }
}

/// `POST /api/v1/lineage`: the path the OpenLineage clients send to.
#[utoipa::path(
    post,
    path = "/api/v1/lineage",
    tag = "ingest",
    description = "OpenLineage events: one event or a list of up to 1,000; `Content-Encoding: gzip` accepted. Answers a report per event. The path the OpenLineage clients send to.",
    request_body(content = OpenLineageBody, description = "One event, or a JSON list of events"),
    responses(
        (status = 201, description = "Applied, recorded or ignored (a list answers 201 whatever its events' outcomes)", body = IngestReport),
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
pub async fn ingest(state: State<AppState>, request: Authenticated<ParsedBody, WordedAsDetail>) -> Response {
    ingest_events(state, request).await
}

/// `POST /api/lineage/openlineage`: the same as `POST /api/v1/lineage`.
#[utoipa::path(
    post,
    path = "/api/lineage/openlineage",
    tag = "ingest",
    description = "The same as `POST /api/v1/lineage`.",
    request_body(content = OpenLineageBody, description = "One event, or a JSON list of events"),
    responses(
        (status = 201, description = "Applied, recorded or ignored (a list answers 201 whatever its events' outcomes)", body = IngestReport),
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
pub async fn ingest_openlineage(
    state: State<AppState>,
    request: Authenticated<ParsedBody, WordedAsDetail>,
) -> Response {
    ingest_events(state, request).await
}

async fn ingest_events(
    State(state): State<AppState>,
    Authenticated(caller, parsed, _): Authenticated<ParsedBody, WordedAsDetail>,
) -> Response {
    let report = match state.group.ingest(&state.lineage, &caller, parsed.events).await {
        Ok(r) => r,
        Err(e) => return service_error(&e),
    };
    let body = IngestReport::of(&report);
    if parsed.is_list {
        return (StatusCode::CREATED, Json(body)).into_response();
    }
    let status = match report.events.first().map(|e| e.status) {
        Some("applied" | "recorded" | "ignored") => return (StatusCode::CREATED, Json(body)).into_response(),
        Some("denied") => StatusCode::FORBIDDEN,
        Some("rejected") => StatusCode::UNPROCESSABLE_ENTITY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, Json(IngestDetail { detail: body })).into_response()
}

/// Seed 002's outcome of one event: written edges, unresolved datasets.
fn collate_status(e: &EventReport) -> &'static str {
    let wrote = e.edges_created > 0 || e.summary.get("edges_asserted").and_then(Value::as_i64).unwrap_or(0) > 0;
    match (e.status, wrote, e.unresolved.is_empty()) {
        ("rejected" | "failed" | "denied", _, _) => "failed",
        (_, true, true) => "successful",
        (_, true, false) => "partial",
        (_, false, false) => "failed",
        (_, false, true) => "skipped",
    }
}

fn edges_written(e: &EventReport) -> i64 {
    e.summary.get("edges_asserted").and_then(Value::as_i64).unwrap_or(0)
}

fn failure_reason(e: &EventReport) -> String {
    if !e.errors.is_empty() {
        return e
            .errors
            .iter()
            .map(|(l, m)| if l.is_empty() { m.clone() } else { format!("{l}: {m}") })
            .collect::<Vec<_>>()
            .join("; ");
    }
    format!("{} dataset(s) could not be resolved and no edge was written", e.unresolved.len())
}

/// `POST /api/v1/openlineage/lineage`: one event, answered with a status and the datasets that
/// matched no catalog container.
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
pub async fn collate_single(
    State(state): State<AppState>,
    Authenticated(caller, parsed, _): Authenticated<ParsedBody, WordedAsCollated>,
) -> Response {
    if parsed.is_list {
        return collate_error((
            StatusCode::BAD_REQUEST,
            "this endpoint takes one event object; send a list to /api/v1/openlineage/lineage/batch as {\"events\": [...]}"
                .into(),
        ));
    }
    let report = match state.group.ingest(&state.lineage, &caller, parsed.events).await {
        Ok(r) => r,
        Err(e) => return service_error(&e),
    };
    let Some(e) = report.events.first() else {
        return collate_error((StatusCode::BAD_REQUEST, "no event in the body".into()));
    };
    let outcome = collate_status(e);
    let written = edges_written(e);
    let unresolved: Vec<UnresolvedDataset> = e.unresolved.iter().map(|u| UnresolvedDataset::of(u, None)).collect();
    let (status, http, message) = match outcome {
        "successful" | "skipped" => ("success", StatusCode::OK, format!("Created {written} lineage edge(s)")),
        "partial" => (
            "partial_success",
            StatusCode::OK,
            format!("Created {written} lineage edge(s); {} dataset(s) could not be resolved", unresolved.len()),
        ),
        _ => ("failure", StatusCode::BAD_REQUEST, failure_reason(e)),
    };
    let failed: Vec<FailedEvent> = if outcome == "failed" {
        vec![FailedEvent { index: 0, reason: failure_reason(e), retriable: false }]
    } else {
        Vec::new()
    };
    let body = Collated {
        status: status.into(),
        message,
        lineage_edges_created: written,
        summary: None,
        unresolved_datasets: unresolved,
        unresolved_jobs: Vec::new(),
        failed_events: failed,
        event_id: Some(e.id.map_or(Value::Null, Value::from)),
        errors: Some(event_errors(e)),
    };
    (http, Json(body)).into_response()
}

fn body_error_message(e: BodyError) -> (StatusCode, String) {
    match e {
        BodyError::TooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, m),
        BodyError::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
    }
}

fn collate_error((http, message): (StatusCode, String)) -> Response {
    (http, Json(Collated::failure(message))).into_response()
}

/// `POST /api/v1/openlineage/lineage/batch`: `{"events": [...]}`, answered with a summary.
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
pub async fn collate_batch(
    State(state): State<AppState>,
    Authenticated(caller, Batch(parsed), _): Authenticated<Batch, WordedAsCollated>,
) -> Response {
    let report = match state.group.ingest(&state.lineage, &caller, parsed.events).await {
        Ok(r) => r,
        Err(e) => return service_error(&e),
    };
    let mut counts =
        std::collections::BTreeMap::from([("successful", 0), ("failed", 0), ("skipped", 0), ("partial", 0)]);
    let mut unresolved = Vec::new();
    let mut failed = Vec::new();
    let mut written = 0;
    for e in &report.events {
        let outcome = collate_status(e);
        *counts.entry(outcome).or_default() += 1;
        written += edges_written(e);
        unresolved.extend(e.unresolved.iter().map(|u| UnresolvedDataset::of(u, Some(e.index))));
        if outcome == "failed" {
            failed.push(FailedEvent { index: e.index as i64, reason: failure_reason(e), retriable: false });
        }
    }
    let received = report.events.len();
    let all_failed = received > 0 && counts["failed"] == received;
    let status = if all_failed {
        "failure"
    } else if counts["failed"] > 0 || counts["partial"] > 0 {
        "partial_success"
    } else {
        "success"
    };
    let http = if all_failed { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    let body = Collated {
        status: status.into(),
        message: format!(
            "Processed {received} events: {} successful, {} failed, {} skipped. Created {written} lineage edges.",
            counts["successful"] + counts["partial"],
            counts["failed"],
            counts["skipped"]
        ),
        summary: Some(CollatedSummary {
            received: received as i64,
            successful: counts["successful"] as i64,
            failed: counts["failed"] as i64,
            skipped: counts["skipped"] as i64,
            partial: counts["partial"] as i64,
        }),
        lineage_edges_created: written,
        unresolved_datasets: unresolved,
        unresolved_jobs: Vec::new(),
        failed_events: failed,
        event_id: None,
        errors: None,
    };
    (http, Json(body)).into_response()
}

/// `POST /v1/api/lineage`: an external engine's table lineage `{target, sources?, operation?}`.
#[utoipa::path(
    post,
    path = "/v1/api/lineage",
    tag = "ingest",
    description = "Table lineage from an external engine: a target table and the tables it reads (CTAS and VIEW replace the target's sources, other operations add); also `Authorization: Token <token>`.",
    request_body = ExternalLineage,
    responses(
        (status = 200, description = "Recorded", body = Status),
        (status = 400, description = "No target, or a malformed body", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "EDITOR is missing on an affected datastore", body = Detail),
        (status = 413, description = "Over 10,000 sources, or over 50 MiB", body = Detail),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = Detail),
        (status = 503, description = "Ingest is at its limit of running and queued requests, or the store is down or too slow: retry after `Retry-After` seconds", body = Detail),
    ),
    security(("bearer" = []))
)]
pub async fn external_lineage(
    State(state): State<AppState>,
    Authenticated(caller, value, _): Authenticated<Value, WordedAsDetail>,
) -> Response {
    let Some(target) = value.get("target").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) else {
        return detail(StatusCode::BAD_REQUEST, "target is required: a table name string");
    };
    let sources: Vec<String> = match value.get("sources") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, s) in items.iter().enumerate() {
                match s.as_str() {
                    Some(s) => out.push(s.to_string()),
                    None => {
                        return detail(StatusCode::BAD_REQUEST, format!("sources[{i}] must be a table name string"))
                    }
                }
            }
            out
        }
        Some(_) => return detail(StatusCode::BAD_REQUEST, "sources must be a list of table names"),
    };
    if sources.len() > 10_000 {
        return detail(StatusCode::PAYLOAD_TOO_LARGE, "at most 10,000 sources per edge");
    }
    let operation = match value.get("operation") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return detail(StatusCode::BAD_REQUEST, "operation must be a string"),
    };
    match state.lineage.record_external(&caller, target, &sources, operation).await {
        Ok(_) => (StatusCode::OK, Json(Status { status: "ok".into() })).into_response(),
        Err(e) => {
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            // Seed 004 answers a bad body with 400.
            let status = if status == StatusCode::UNPROCESSABLE_ENTITY { StatusCode::BAD_REQUEST } else { status };
            detail(status, e.client_message())
        }
    }
}
