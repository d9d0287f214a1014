//! The OpenLineage REST endpoints. All four run the same ingest (`Lineage::ingest_openlineage`);
//! only the answer's shape differs: seed 000's per-event report on `/api/v1/lineage` and
//! `/api/lineage/openlineage`, seed 002's summary on `/api/v1/openlineage/lineage[/batch]`.

use std::marker::PhantomData;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::AppState;
use crate::ingest::openlineage::{self as ol, BodyError, Limits, ParsedBody};
use crate::service::openlineage::{unresolved_json, EventReport, IngestReport};
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
    (status, Json(json!({ "detail": message.into() }))).into_response()
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

/// Seed 000's `{"detail": ...}` answer.
pub struct Detail;

impl Wording for Detail {
    fn refuse(e: BodyError) -> Response {
        body_error(e)
    }
}

/// Seed 002's `{"status": "failure", ...}` answer.
pub struct Collated;

impl Wording for Collated {
    fn refuse(e: BodyError) -> Response {
        collate_error(body_error_message(e))
    }
}

/// The seed 000 report of one event.
pub fn event_json(e: &EventReport) -> Value {
    json!({
        "index": e.index,
        "id": e.id,
        "status": public_status(e.status),
        "event_kind": e.kind,
        "errors": e.errors.iter().map(|(l, m)| json!({"location": l, "message": m})).collect::<Vec<_>>(),
        "summary": e.summary,
    })
}

/// A denied event is reported as rejected: seed 000 lists four statuses.
pub fn public_status(status: &str) -> &str {
    if status == "denied" {
        "rejected"
    } else {
        status
    }
}

pub fn report_json(r: &IngestReport) -> Value {
    json!({
        "received": r.events.len(),
        "applied": r.count("applied"),
        "ignored": r.count("ignored"),
        "rejected": r.count("rejected") + r.count("denied"),
        "failed": r.count("failed"),
        "events": r.events.iter().map(event_json).collect::<Vec<_>>(),
    })
}

/// `POST /api/v1/lineage` and `POST /api/lineage/openlineage`.
pub async fn ingest(
    State(state): State<AppState>,
    Authenticated(caller, parsed, _): Authenticated<ParsedBody, Detail>,
) -> Response {
    let report = match state.lineage.ingest_openlineage(&caller, parsed.events).await {
        Ok(r) => r,
        Err(e) => return service_error(&e),
    };
    let body = report_json(&report);
    if parsed.is_list {
        return (StatusCode::CREATED, Json(body)).into_response();
    }
    let status = match report.events.first().map(|e| e.status) {
        Some("applied") | Some("ignored") => return (StatusCode::CREATED, Json(body)).into_response(),
        Some("denied") => StatusCode::FORBIDDEN,
        Some("rejected") => StatusCode::UNPROCESSABLE_ENTITY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, Json(json!({ "detail": body }))).into_response()
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

/// `POST /api/v1/openlineage/lineage`: one event, seed 002's answer.
pub async fn collate_single(
    State(state): State<AppState>,
    Authenticated(caller, parsed, _): Authenticated<ParsedBody, Collated>,
) -> Response {
    if parsed.is_list {
        return collate_error((
            StatusCode::BAD_REQUEST,
            "this endpoint takes one event object; send a list to /api/v1/openlineage/lineage/batch as {\"events\": [...]}"
                .into(),
        ));
    }
    let report = match state.lineage.ingest_openlineage(&caller, parsed.events).await {
        Ok(r) => r,
        Err(e) => return service_error(&e),
    };
    let Some(e) = report.events.first() else {
        return collate_error((StatusCode::BAD_REQUEST, "no event in the body".into()));
    };
    let outcome = collate_status(e);
    let written = edges_written(e);
    let unresolved: Vec<Value> = e.unresolved.iter().map(|u| unresolved_json(u, None)).collect();
    let (status, http, message) = match outcome {
        "successful" | "skipped" => ("success", StatusCode::OK, format!("Created {written} lineage edge(s)")),
        "partial" => (
            "partial_success",
            StatusCode::OK,
            format!("Created {written} lineage edge(s); {} dataset(s) could not be resolved", unresolved.len()),
        ),
        _ => ("failure", StatusCode::BAD_REQUEST, failure_reason(e)),
    };
    let failed: Vec<Value> = if outcome == "failed" {
        vec![json!({"index": 0, "reason": failure_reason(e), "retriable": false})]
    } else {
        Vec::new()
    };
    (
        http,
        Json(json!({
            "status": status,
            "message": message,
            "lineageEdgesCreated": written,
            "unresolvedDatasets": unresolved,
            "unresolvedJobs": [],
            "failedEvents": failed,
            "eventId": e.id,
            "errors": e.errors.iter().map(|(l, m)| json!({"location": l, "message": m})).collect::<Vec<_>>(),
        })),
    )
        .into_response()
}

fn body_error_message(e: BodyError) -> (StatusCode, String) {
    match e {
        BodyError::TooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, m),
        BodyError::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
    }
}

fn collate_error((http, message): (StatusCode, String)) -> Response {
    (
        http,
        Json(json!({
            "status": "failure",
            "message": message,
            "lineageEdgesCreated": 0,
            "unresolvedDatasets": [],
            "unresolvedJobs": [],
            "failedEvents": [],
        })),
    )
        .into_response()
}

/// `POST /api/v1/openlineage/lineage/batch`: `{"events": [...]}`, seed 002's summary.
pub async fn collate_batch(
    State(state): State<AppState>,
    Authenticated(caller, Batch(parsed), _): Authenticated<Batch, Collated>,
) -> Response {
    let report = match state.lineage.ingest_openlineage(&caller, parsed.events).await {
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
        unresolved.extend(e.unresolved.iter().map(|u| unresolved_json(u, Some(e.index))));
        if outcome == "failed" {
            failed.push(json!({"index": e.index, "reason": failure_reason(e), "retriable": false}));
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
    (
        http,
        Json(json!({
            "status": status,
            "message": format!(
                "Processed {received} events: {} successful, {} failed, {} skipped. Created {written} lineage edges.",
                counts["successful"] + counts["partial"], counts["failed"], counts["skipped"]
            ),
            "summary": {
                "received": received,
                "successful": counts["successful"],
                "failed": counts["failed"],
                "skipped": counts["skipped"],
                "partial": counts["partial"],
            },
            "lineageEdgesCreated": written,
            "unresolvedDatasets": unresolved,
            "unresolvedJobs": [],
            "failedEvents": failed,
        })),
    )
        .into_response()
}

/// `POST /v1/api/lineage`: seed 004's external-engine edge `{target, sources?, operation?}`.
pub async fn external_lineage(
    State(state): State<AppState>,
    Authenticated(caller, value, _): Authenticated<Value, Detail>,
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
        Ok(_) => (StatusCode::OK, Json(json!({"status": "ok"}))).into_response(),
        Err(e) => {
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            // Seed 004 answers a bad body with 400.
            let status = if status == StatusCode::UNPROCESSABLE_ENTITY { StatusCode::BAD_REQUEST } else { status };
            detail(status, e.client_message())
        }
    }
}
