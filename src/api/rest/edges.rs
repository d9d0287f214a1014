//! Seed 000's edge routes: create, list, get, update, delete. Each calls the service method the
//! GraphQL mutation or query calls (`create_edge`, `list_edges`, `update_edge`, `delete_edge`;
//! `edge` reads the store by id as the `edge` query does).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::params::{Body, Query, QueryParams};
use super::shapes::{Detail, Edge, Lookups, Page, ValidationError};
use super::{path_id, ApiError, RestCaller, Seed};
use crate::api::AppState;
use crate::domain::{EdgeFilter, EdgePatch};
use crate::error::Error;
use crate::service::{self, CreateEdge};

/// Create an edge: exactly one of `source_container_id` / `source_field_id` and one of
/// `target_container_id` / `target_field_id`, both sides at the same granularity.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct CreateEdgeBody {
    /// Mutually exclusive with `source_field_id`.
    source_container_id: Option<i64>,
    /// Mutually exclusive with `source_container_id`.
    source_field_id: Option<i64>,
    /// Mutually exclusive with `target_field_id`.
    target_container_id: Option<i64>,
    /// Mutually exclusive with `target_container_id`.
    target_field_id: Option<i64>,
    /// A transformation note (e.g. `UPPER(email)`).
    description: Option<String>,
    /// `manual` (default), `catalog_import` or `inferred`.
    source_type: Option<String>,
    /// Field edges: the value passes through a transformation rather than being copied.
    derived: Option<bool>,
}

const CREATE_FIELDS: [&str; 7] = [
    "source_container_id",
    "source_field_id",
    "target_container_id",
    "target_field_id",
    "description",
    "source_type",
    "derived",
];

/// Update an edge: omit a field to keep its value; `description: null` clears it.
#[derive(Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct UpdateEdgeBody {
    /// The new transformation note; null clears it.
    description: Option<String>,
    /// `manual`, `catalog_import` or `inferred`; the type of an edge its provider maintains
    /// cannot change (422).
    source_type: Option<String>,
}

const UPDATE_FIELDS: [&str; 2] = ["description", "source_type"];

fn body_params(fields: &[&'static str]) -> Vec<(&'static str, &'static str)> {
    fields.iter().map(|f| ("body", *f)).collect()
}

#[utoipa::path(
    post,
    path = "/api/lineage/edges",
    tag = "lineage",
    request_body = CreateEdgeBody,
    responses(
        (status = 201, description = "The edge created", body = Edge),
        (status = 400, description = "The body is not JSON", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "EDITOR is missing on an affected datastore", body = Detail),
        (status = 404, description = "A container or field does not exist", body = Detail),
        (status = 409, description = "An edge with the same source, target and source_type exists", body = Detail),
        (status = 422, description = "Invalid body: mixed granularity, a missing end, a bad source_type", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn create_edge(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let body = Body::parse(&bytes, &CREATE_FIELDS)?;
    let input = CreateEdge {
        source_container_id: body.int("source_container_id")?,
        source_field_id: body.int("source_field_id")?,
        target_container_id: body.int("target_container_id")?,
        target_field_id: body.int("target_field_id")?,
        description: body.string("description")?,
        source_type: body.string("source_type")?,
        derived: body.bool("derived")?,
    };
    let params = body_params(&CREATE_FIELDS);
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &params);
    let edge = state.lineage.create_edge(&caller, input).await.map_err(fail)?;
    let mut out = Lookups::edges(&state.lineage, &caller, vec![edge]).await.map_err(fail)?;
    Ok((StatusCode::CREATED, Json(out.remove(0))).into_response())
}

/// The filters of List Edges.
#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct ListEdgesQuery {
    /// Edges where this container is the source or target.
    container_id: Option<i64>,
    /// Edges where this field is the source or target.
    field_id: Option<i64>,
    /// The value stored on the edge (`manual`, `openlineage`, a datastore type, ...).
    source_type: Option<String>,
    /// Include retired edges.
    #[param(default = false)]
    include_retired: Option<bool>,
    /// Page number, from 1.
    #[param(default = 1, minimum = 1)]
    page: Option<i64>,
    /// Page size, 1 to 1,000.
    #[param(default = 50, minimum = 1, maximum = 1000)]
    size: Option<i64>,
}

impl QueryParams for ListEdgesQuery {
    const SEED: Seed = Seed::Lineage;
}

#[utoipa::path(
    get,
    path = "/api/lineage/edges",
    tag = "lineage",
    params(ListEdgesQuery),
    responses(
        (status = 200, description = "A page of edges", body = Page<Edge>),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 422, description = "A parameter is invalid", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn list_edges(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Query(q): Query<ListEdgesQuery>,
) -> Result<Json<Page<Edge>>, ApiError> {
    let filter = EdgeFilter {
        container_id: q.container_id,
        field_id: q.field_id,
        source_type: q.source_type,
        include_retired: q.include_retired.unwrap_or(false),
    };
    let (page, size) = (q.page.unwrap_or(1), q.size.unwrap_or(50));
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &[("query", "page"), ("query", "size")]);
    let page = service::validate_page(page, size).map_err(fail)?;
    let p = state.lineage.list_edges(filter, page).await.map_err(fail)?;
    let meta = (p.total, p.page, p.pages());
    let items = Lookups::edges(&state.lineage, &caller, p.items).await.map_err(fail)?;
    Ok(Json(Page { items, total: meta.0, page: meta.1.page, size: meta.1.size, pages: meta.2 }))
}

#[utoipa::path(
    get,
    path = "/api/lineage/edges/{id}",
    tag = "lineage",
    params(("id" = i64, Path, description = "The edge id")),
    responses(
        (status = 200, description = "The edge, retired ones too", body = Edge),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No such edge", body = Detail),
        (status = 422, description = "The id is not an integer", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn get_edge(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Path(id): Path<String>,
) -> Result<Json<Edge>, ApiError> {
    let id = path_id(Seed::Lineage, "id", &id)?;
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &[]);
    let Some(found) = state.lineage.edge_by_id(id).await.map_err(fail)? else {
        return Err(fail(Error::NotFound(format!("Lineage edge {id} not found"))));
    };
    let mut out = Lookups::edges(&state.lineage, &caller, vec![found]).await.map_err(fail)?;
    Ok(Json(out.remove(0)))
}

#[utoipa::path(
    put,
    path = "/api/lineage/edges/{id}",
    tag = "lineage",
    params(("id" = i64, Path, description = "The edge id")),
    request_body = UpdateEdgeBody,
    responses(
        (status = 200, description = "The updated edge", body = Edge),
        (status = 400, description = "The body is not JSON", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "EDITOR is missing on an affected datastore", body = Detail),
        (status = 404, description = "No such edge", body = Detail),
        (status = 422, description = "A bad source_type, or a change to a provider-maintained edge's type", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn update_edge(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Json<Edge>, ApiError> {
    let id = path_id(Seed::Lineage, "id", &id)?;
    let body = Body::parse(&bytes, &UPDATE_FIELDS)?;
    let description = if body.has("description") { Some(body.string("description")?) } else { None };
    let patch = EdgePatch { description, source_type: body.string("source_type")? };
    let params = body_params(&UPDATE_FIELDS);
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &params);
    let edge = state.lineage.update_edge(&caller, id, patch).await.map_err(fail)?;
    let mut out = Lookups::edges(&state.lineage, &caller, vec![edge]).await.map_err(fail)?;
    Ok(Json(out.remove(0)))
}

#[utoipa::path(
    delete,
    path = "/api/lineage/edges/{id}",
    tag = "lineage",
    params(("id" = i64, Path, description = "The edge id")),
    responses(
        (status = 204, description = "Deleted; a provider-maintained edge (OpenLineage, SQL, external) is retired instead"),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "EDITOR is missing on an affected datastore", body = Detail),
        (status = 404, description = "No such edge", body = Detail),
        (status = 422, description = "The id is not an integer", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn delete_edge(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = path_id(Seed::Lineage, "id", &id)?;
    state.lineage.delete_edge(&caller, id).await.map_err(|e| ApiError::service(Seed::Lineage, e, &[]))?;
    Ok(StatusCode::NO_CONTENT)
}
