//! The lineage REST API beside GraphQL: seed 000's `/api/lineage/...` routes and seed 004's
//! read-only `/admin/lineage/...` routes, and the OpenAPI 3.1 document that describes every route
//! (`GET /openapi.json`).
//!
//! Each handler is a thin adapter: it authenticates (`RestCaller`, the `auth::Auth` of every
//! route), reads its parameters (`params::Query`, the struct its document describes; `Body`),
//! calls the same `service::Lineage` method as the GraphQL resolver, and writes the answer in
//! the seed's snake_case shape (`shapes`), reading what the shape needs beyond the service's
//! answer in one batch per kind (`shapes::Lookups`), as the GraphQL loaders do. No rule lives
//! here.
//!
//! Errors follow each seed: seed 000's routes answer `{"detail": "..."}` (401, 403, 404, 409), a
//! body that is not JSON 400, and invalid input 422 with FastAPI's list
//! `{"detail": [{"type", "loc", "msg"}]}` (`loc` names the parameter); seed 004's answer
//! `{"detail": "..."}` with 400 for any bad input, an ambiguous table name included.
//!
//! The routes and their documentation come from the same `#[utoipa::path]` attributes
//! (`utoipa_axum::routes!`), so they cannot drift; the routes `api::router` registers itself
//! (GraphQL, ingest, health) are described by `docs`.
//!
//! # How it fits
//!
//! The lineage REST API beside GraphQL: seed 000's `/api/lineage/...` routes (`edges`, `graph`) and seed 004's
//! `/admin/lineage/...` routes by table name (`admin`). Each handler is a thin adapter: `RestCaller` authenticates with
//! the same `auth::Auth` (401 `{"detail": ...}` before anything else is read), `params` reads the query string and JSON
//! body with errors that name the parameter, and the handler calls the `service::Lineage` method its GraphQL resolver
//! calls, so validation, permissions, limits and messages are the service's (`ApiError::service` maps
//! `Error::http_status`, respells GraphQL argument names in snake_case, and gives seed 000's 422 list `[{type, loc,
//! msg}]` or seed 004's 400). `shapes` holds the snake_case answers and `Lookups`, which reads what a shape needs
//! beyond the service's answer (ends' containers, datastores and fields, evidence, field counts, has-lineage) in one
//! batch per kind, side by side, as the loaders do; evidence `details` and `source_relation` follow the same VIEWER
//! rule as `evidence_visible`. Table names resolve with `Lineage::resolve_table` (`service::tables`: the id, an
//! OpenLineage `<namespace>/<name>` through `dataset_node`, `<datastore>:<name>`, else the one name matcher:
//! `name_candidates`, `containers_by_names`, `match_rank`): 404 when nothing matches, `BadInput` naming the candidates
//! as `<datastore>:<qualified name>` (`tables::unique_name`) when several match equally well. The routes are registered
//! through `utoipa_axum::routes!` from their `#[utoipa::path]` attributes, so a route and its documentation cannot
//! drift; `openapi()` merges them with `docs`, the frame (info, bearer scheme, tags) that lists by name the real
//! handlers of the routes `api::router` registers itself (GraphQL, ingest, health, the pages), each with its own
//! `#[utoipa::path]` naming the typed answer it sends (`api::answers`: the ingest reports and summaries, the GraphQL
//! request and response), into the OpenAPI 3.1 document served at `GET /openapi.json`. Invariant: no stand-in function
//! or hand-written copy of a shape documents a route. The integration suite checks real answers against the document,
//! and the Python tests check that every route the router registers is in it.
//!
//! `export` writes a graph answer in another `format` (`csv`, `dot`, `graphml`, `mermaid`; JSON is the default,
//! anything else 400): the graph, impact and pii-flow handlers turn their service answer into one neutral `Export`
//! (nodes with a qualified name, a datastore and attributes; edges with ends, type, source type, operation, the job
//! from visible evidence), and one writer per format renders it. Invariant: names are data; each writer escapes for its
//! syntax (CSV cells that a spreadsheet would run as a formula get a leading `'`).

mod admin;
mod docs;
mod edges;
mod export;
mod graph;
mod params;
mod shapes;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use crate::error::Error;
use crate::service::Caller;

pub use self::shapes::Detail;

/// The REST routes, with their documentation.
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(edges::create_edge, edges::list_edges))
        .routes(routes!(edges::get_edge, edges::update_edge, edges::delete_edge))
        .routes(routes!(graph::lineage_graph))
        .routes(routes!(graph::container_fields))
        .routes(routes!(graph::field_connections))
        .routes(routes!(graph::metadata_assertions))
        .routes(routes!(admin::graph))
        .routes(routes!(admin::columns))
        .routes(routes!(admin::impact))
        .routes(routes!(admin::pii_flow))
}

/// The REST lineage routes, for `api::router` to merge.
pub fn routes() -> axum::Router<AppState> {
    api().split_for_parts().0
}

/// The OpenAPI 3.1 document of every route the service serves: the REST routes as registered,
/// plus the routes `api::router` registers itself, the shared shapes and the bearer scheme.
pub fn openapi() -> OpenApi {
    let (_, rest) = api().split_for_parts();
    let (_, marquez) = super::marquez::api().split_for_parts();
    let mut doc = docs::base();
    doc.merge(rest);
    doc.merge(marquez);
    doc
}

/// `GET /openapi.json`: the document, built once. No token needed: tools read it to learn the API.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    responses((status = 200, description = "This document", body = Value)),
    security(())
)]
pub async fn openapi_json() -> Response {
    static DOC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let body = DOC.get_or_init(|| openapi().to_json().unwrap_or_else(|_| "{}".into()));
    ([(header::CONTENT_TYPE, "application/json")], body.clone()).into_response()
}

/// The seed whose error conventions a route follows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Seed {
    /// `/api/...`: invalid input 422 with a `[{type, loc, msg}]` detail.
    Lineage,
    /// `/admin/lineage/...`: invalid input 400 with a string detail.
    Admin,
}

/// A REST error: its status and JSON body.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Value,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

impl ApiError {
    pub fn detail(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, body: json!({ "detail": message.into() }) }
    }

    /// Invalid input at `loc` (`["query", "depth"]`, `["body", "source_type"]`) in the route's
    /// seed's shape.
    pub fn invalid(seed: Seed, loc: &[&str], message: impl Into<String>) -> Self {
        let message = message.into();
        match seed {
            Seed::Admin => ApiError::detail(StatusCode::BAD_REQUEST, message),
            Seed::Lineage => ApiError {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                body: json!({ "detail": [{ "type": "value_error", "loc": loc, "msg": message }] }),
            },
        }
    }

    /// A service error with the status of the one error table (`Error::http_status`), worded for
    /// REST: the GraphQL argument names in its message spelled as the REST parameters are.
    /// `BadInput` names, as `loc`, the first of `params` (location, name) its message mentions.
    pub fn service(seed: Seed, e: Error, params: &[(&str, &str)]) -> Self {
        let message = rest_words(&e.client_message());
        match e {
            Error::BadInput(_) => {
                let mut by_length: Vec<&(&str, &str)> = params.iter().collect();
                by_length.sort_by_key(|(_, name)| std::cmp::Reverse(name.len()));
                let loc: Vec<&str> = match by_length.iter().find(|(_, name)| mentions(&message, name)) {
                    Some((place, name)) => vec![place, name],
                    None => vec![params.first().map_or("query", |(place, _)| place)],
                };
                ApiError::invalid(seed, &loc, message)
            }
            other => ApiError::detail(
                StatusCode::from_u16(other.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                message,
            ),
        }
    }
}

/// Whether `message` names `word` as a whole word.
fn mentions(message: &str, word: &str) -> bool {
    message.match_indices(word).any(|(i, _)| {
        let before = message[..i].chars().next_back();
        let after = message[i + word.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !part(before) && !part(after)
    })
}

/// The service speaks GraphQL's argument names; REST clients send the snake_case ones.
fn rest_words(message: &str) -> String {
    const WORDS: [(&str, &str); 9] = [
        ("sourceContainerId", "source_container_id"),
        ("targetContainerId", "target_container_id"),
        ("sourceFieldId", "source_field_id"),
        ("targetFieldId", "target_field_id"),
        ("sourceType", "source_type"),
        ("containerId", "container_id"),
        ("fieldId", "field_id"),
        ("includeRetired", "include_retired"),
        ("activeAnomalyCount", "active_anomaly_count"),
    ];
    let mut out = message.to_string();
    for (camel, snake) in WORDS {
        out = out.replace(camel, snake);
    }
    out
}

/// The caller of a REST request: its token checked by `auth::Auth`, as on every route; a
/// missing or bad one answers 401 `{"detail": ...}` before anything else is read.
pub struct RestCaller(pub Caller);

impl FromRequestParts<AppState> for RestCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        state.auth.authenticate(super::authorization(&parts.headers)).await.map(RestCaller).map_err(|e| {
            ApiError::detail(
                StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::UNAUTHORIZED),
                e.client_message(),
            )
        })
    }
}

/// An integer path parameter, or the route's invalid-input answer naming it.
fn path_id(seed: Seed, name: &str, raw: &str) -> Result<i64, ApiError> {
    raw.trim().parse().map_err(|_| {
        ApiError::invalid(seed, &["path", name], format!("path parameter {name} must be an integer, got {raw:?}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_speak_rest_and_locate_the_parameter() {
        let e = ApiError::service(
            Seed::Lineage,
            Error::BadInput("sourceType must be one of manual, catalog_import, inferred; got \"x\"".into()),
            &[("body", "source_type"), ("body", "description")],
        );
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.body["detail"][0]["loc"], json!(["body", "source_type"]));
        assert!(e.body["detail"][0]["msg"].as_str().unwrap_or("").starts_with("source_type must be"));
        let e = ApiError::service(
            Seed::Lineage,
            Error::BadInput("size must be between 1 and 1000, got 0".into()),
            &[("query", "page"), ("query", "size")],
        );
        assert_eq!(e.body["detail"][0]["loc"], json!(["query", "size"]));
        let e = ApiError::service(Seed::Admin, Error::BadInput("depth must be between 1 and 20".into()), &[]);
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.body, json!({"detail": "depth must be between 1 and 20"}));
        let e = ApiError::service(Seed::Lineage, Error::NotFound("Lineage edge 9 not found".into()), &[]);
        assert_eq!((e.status, e.body), (StatusCode::NOT_FOUND, json!({"detail": "Lineage edge 9 not found"})));
        assert!(!mentions("container_ids must", "container_id"));
        assert!(mentions("a container_id, here", "container_id"));
    }
}
