//! Seed 000's read routes: the lineage graph, a container's fields, a field's connections and a
//! container's metadata sources, each over the service method of its GraphQL query
//! (`lineage_graph`, `container_fields`, `field_connections`, `metadata_assertions`).

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Deserializer};
use utoipa::{IntoParams, ToSchema};

use super::export::{self, Format};
use super::params::{choice, Query, QueryParams};
use super::shapes::{
    ConnectedField, Detail, FieldConnections, FieldItem, Graph, Lookups, MetadataAssertion, Page, ValidationError, Want,
};
use super::{path_id, ApiError, RestCaller, Seed};
use crate::api::AppState;
use crate::domain::Direction;
use crate::error::Error;
use crate::service::{self, GraphRequest, Root};

/// A traversal direction.
#[derive(ToSchema, Clone, Copy)]
#[schema(rename_all = "lowercase")]
pub enum Side {
    Upstream,
    Downstream,
}

const SIDES: [(&str, Side); 2] = [("upstream", Side::Upstream), ("downstream", Side::Downstream)];

impl From<Side> for Direction {
    fn from(side: Side) -> Direction {
        match side {
            Side::Upstream => Direction::Upstream,
            Side::Downstream => Direction::Downstream,
        }
    }
}

impl<'de> Deserialize<'de> for Side {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Side, D::Error> {
        choice(d, &SIDES)
    }
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct GraphQuery {
    /// The container to centre the graph on.
    container_id: i64,
    /// Hops to include, 1 to 20.
    #[param(default = 2, minimum = 1, maximum = 20)]
    depth: Option<i64>,
    /// Only this direction; omit for both.
    #[param(inline)]
    side: Option<Side>,
    /// `json` (default), `csv` (one row per edge), `dot` (Graphviz), `graphml` or `mermaid`.
    #[param(inline)]
    format: Option<Format>,
}

impl QueryParams for GraphQuery {
    const SEED: Seed = Seed::Lineage;
    const REQUIRED: &'static str = "an integer id";
}

#[utoipa::path(
    get,
    path = "/api/lineage/graph",
    tag = "lineage",
    params(GraphQuery),
    responses(
        (status = 200, description = "The graph: nodes, edges, external nodes and edges; in the `format` asked", content(
            (Graph = "application/json"),
            (String = "text/csv"),
            (String = "text/vnd.graphviz"),
            (String = "application/graphml+xml"),
            (String = "text/vnd.mermaid"),
        )),
        (status = 400, description = "`format` is not one of json, csv, dot, graphml, mermaid", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No such container", body = Detail),
        (status = 422, description = "A parameter is missing or invalid (depth outside 1..20, ...)", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn lineage_graph(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Query(q): Query<GraphQuery>,
) -> Result<Response, ApiError> {
    let (format, container_id) = (q.format.unwrap_or_default(), q.container_id);
    let depth = q.depth.unwrap_or(2);
    let side = q.side.map(Direction::from);
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &[("query", "container_id"), ("query", "depth")]);
    let req = GraphRequest { side, ..GraphRequest::new(&caller, Root::Container(container_id), depth) };
    let g = state.lineage.graph(&req).await.map_err(fail)?.graph;
    if format != Format::Json {
        let x = export::of_graph(&state.lineage, &caller, &g).await.map_err(fail)?;
        return Ok(x.respond(format, "lineage"));
    }
    Ok(Json(Lookups::graph(&state.lineage, &caller, g).await.map_err(fail)?).into_response())
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct FieldsQuery {
    /// A case-insensitive part of the field name.
    name: Option<String>,
    #[param(default = 1, minimum = 1)]
    page: Option<i64>,
    #[param(default = 50, minimum = 1, maximum = 1000)]
    size: Option<i64>,
}

impl QueryParams for FieldsQuery {
    const SEED: Seed = Seed::Lineage;
}

#[utoipa::path(
    get,
    path = "/api/lineage/containers/{container_id}/fields",
    tag = "lineage",
    params(("container_id" = i64, Path, description = "The container"), FieldsQuery),
    responses(
        (status = 200, description = "A page of the container's fields", body = Page<FieldItem>),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No such container", body = Detail),
        (status = 422, description = "A parameter is invalid", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn container_fields(
    State(state): State<AppState>,
    RestCaller(_caller): RestCaller,
    Path(container_id): Path<String>,
    q: Result<Query<FieldsQuery>, ApiError>,
) -> Result<Json<Page<FieldItem>>, ApiError> {
    // The path is checked before the query, as it always was.
    let container_id = path_id(Seed::Lineage, "container_id", &container_id)?;
    let Query(q) = q?;
    let name = q.name;
    let (page, size) = (q.page.unwrap_or(1), q.size.unwrap_or(50));
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &[("query", "page"), ("query", "size")]);
    let page = service::validate_page(page, size).map_err(fail)?;
    let p = state.lineage.container_fields(container_id, name.as_deref(), page).await.map_err(fail)?;
    let l = Want { has_lineage: p.items.iter().map(|f| f.id).collect(), ..Want::default() }
        .read(&state.lineage)
        .await
        .map_err(fail)?;
    Ok(Json(Page::new(p, |f| FieldItem {
        has_lineage: l.with_lineage.contains(&f.id),
        id: f.id,
        name: f.name,
        display_name: f.display_name,
        status: f.status,
        latest_profile_id: f.latest_profile_id,
        data_type: f.data_type,
        is_computed_field: f.is_computed_field,
        active_anomaly_count: f.active_anomaly_count,
    })))
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct ConnectionsQuery {
    /// Keep only fields in these containers; repeat it: `?container_ids=42&container_ids=55`.
    #[param(style = Form, explode)]
    container_ids: Option<Vec<i64>>,
}

impl QueryParams for ConnectionsQuery {
    const SEED: Seed = Seed::Lineage;
}

#[utoipa::path(
    get,
    path = "/api/lineage/fields/{field_id}/connections",
    tag = "lineage",
    params(("field_id" = i64, Path, description = "The field"), ConnectionsQuery),
    responses(
        (status = 200, description = "Every field connected through field edges, and those edges", body = FieldConnections),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No such field", body = Detail),
        (status = 422, description = "A parameter is invalid", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn field_connections(
    State(state): State<AppState>,
    RestCaller(_caller): RestCaller,
    Path(field_id): Path<String>,
    q: Result<Query<ConnectionsQuery>, ApiError>,
) -> Result<Json<FieldConnections>, ApiError> {
    // The path is checked before the query, as it always was.
    let field_id = path_id(Seed::Lineage, "field_id", &field_id)?;
    let Query(q) = q?;
    let container_ids = q.container_ids;
    let fail = |e: Error| ApiError::service(Seed::Lineage, e, &[("path", "field_id")]);
    let (fields, edges) = state.lineage.field_connections(field_id, container_ids).await.map_err(fail)?;
    let l = Want { fields: fields.iter().copied().collect(), ..Want::default() }
        .read(&state.lineage)
        .await
        .map_err(fail)?;
    Ok(Json(FieldConnections {
        fields: fields
            .iter()
            .filter_map(|id| l.fields.get(id))
            .map(|f| ConnectedField {
                id: f.id,
                name: f.name.clone(),
                display_name: f.display_name.clone(),
                status: f.status.clone(),
                latest_profile_id: f.latest_profile_id,
                data_type: f.data_type.clone(),
                container_id: f.container_id,
            })
            .collect(),
        edges: edges.into_iter().map(super::shapes::connection_edge).collect(),
    }))
}

#[utoipa::path(
    get,
    path = "/api/containers/{id}/metadata-assertions",
    tag = "lineage",
    params(("id" = i64, Path, description = "The container")),
    responses(
        (status = 200, description = "Each source's current value of the container's and its fields' metadata", body = Vec<MetadataAssertion>),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 403, description = "REPORTER is missing on the container's datastore", body = Detail),
        (status = 404, description = "No such container", body = Detail),
        (status = 422, description = "The id is not an integer", body = ValidationError),
    ),
    security(("bearer" = []))
)]
pub async fn metadata_assertions(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Path(id): Path<String>,
) -> Result<Json<Vec<MetadataAssertion>>, ApiError> {
    let id = path_id(Seed::Lineage, "id", &id)?;
    let rows =
        state.lineage.metadata_assertions(&caller, id).await.map_err(|e| ApiError::service(Seed::Lineage, e, &[]))?;
    Ok(Json(rows.into_iter().map(|(m, e)| MetadataAssertion::new(m, e)).collect()))
}
