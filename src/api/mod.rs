//! HTTP transport: the axum router, GraphQL over it, health, readiness and metrics.
//! Handlers authenticate, call the service and map results; rules live in `service`.
//!
//! # How it fits
//!
//! The axum `router` serves `/graphql` (POST, and GET for GraphiQL) with a 2 MiB body limit, the four OpenLineage
//! routes and `/v1/api/lineage` with a 50 MiB limit, the REST lineage routes and `/openapi.json` (`api::rest`),
//! `/healthz`, `/readyz` and `/metrics` (no token), CORS, and a `track_requests` middleware for the HTTP metrics.
//! `graphql_handler` works in this order:
//! 1. It authenticates the `Authorization` header into a `Caller` (`auth::Auth::authenticate`).
//! 2. It parses the body; anything but GraphQL JSON gets 400 `BAD_USER_INPUT`.
//! 3. It parses the query once, or takes the parsed document of the same query text from `ParsedQueries` (an LRU of 256
//!    documents, for texts up to 16 KiB; clients send the same few queries again and again, and parsing was a tenth of
//!    a small graph query), hands it to the executor (`Request::set_parsed_query`) and counts its aliases
//!    (`MAX_ALIASES`).
//! 4. It attaches a fresh `Loaders`, the `Lineage` service, the `Auth` and the `Caller`.
//! 5. It gives `BAD_USER_INPUT` to executor errors that have no code: parse, validation, and the depth and complexity
//!    limits.

pub mod answers;
pub mod loaders;
pub mod marquez;
pub mod openlineage;
pub mod pushback;
pub mod rest;
pub mod schema;
pub mod subscriptions;
pub mod ui;
pub mod unavailable;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_graphql::parser::types::ExecutableDocument;
use async_graphql::{ServerError, Value};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::trace::TraceLayer;

use self::loaders::Loaders;
use self::schema::TributarySchema;
use crate::service::Lineage;

/// Bodies over this size on `/graphql` answer 413 (the contract's 2 MiB).
pub const GRAPHQL_BODY_LIMIT: usize = 2 * 1024 * 1024;
/// Aliases in one GraphQL document: more is a crafted query, refused before execution.
pub const MAX_ALIASES: usize = 50;

#[derive(Clone)]
pub struct AppState {
    pub schema: TributarySchema,
    pub lineage: Lineage,
    pub auth: crate::auth::Auth,
    pub parsed: ParsedQueries,
    pub pushback: pushback::PushBack,
    /// Concurrent OpenLineage requests written together (`service::group_commit`).
    pub group: crate::service::group_commit::GroupCommit,
}

/// Parsed GraphQL documents by query text. Clients send the same few queries over and over, and
/// copying a parsed document costs a fraction of parsing it again (a tenth of a small graph
/// query's time went to the parser).
#[derive(Clone)]
pub struct ParsedQueries(Arc<Mutex<lru::LruCache<String, ExecutableDocument>>>);

impl Default for ParsedQueries {
    fn default() -> Self {
        ParsedQueries(Arc::new(Mutex::new(lru::LruCache::new(
            NonZeroUsize::new(Self::CAPACITY).unwrap_or(NonZeroUsize::MIN),
        ))))
    }
}

impl ParsedQueries {
    const CAPACITY: usize = 256;
    /// Longer query texts are parsed every time rather than kept.
    const MAX_QUERY_BYTES: usize = 16 * 1024;

    /// The request's parsed document, from the cache or parsed now (and kept when it parsed).
    /// A parse error is returned for the caller to report.
    pub fn parse<'r>(
        &self,
        request: &'r mut async_graphql::Request,
    ) -> Result<&'r ExecutableDocument, async_graphql::ServerError> {
        if request.query.len() <= Self::MAX_QUERY_BYTES {
            let cached = self.0.lock().unwrap_or_else(|p| p.into_inner()).get(&request.query).cloned();
            match cached {
                Some(doc) => request.set_parsed_query(doc),
                None => {
                    let doc = request.parsed_query()?.clone();
                    self.0.lock().unwrap_or_else(|p| p.into_inner()).put(request.query.clone(), doc);
                }
            }
        }
        request.parsed_query()
    }
}

/// The `Authorization` header as text, if any.
pub fn authorization(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())
}

pub fn router(state: AppState, cors_origins: &[String]) -> Router {
    let graphql = Router::new()
        .route("/graphql", get(subscriptions::graphql_get).post(graphql_handler))
        .layer(DefaultBodyLimit::max(GRAPHQL_BODY_LIMIT));
    // The limit is checked again after decompression; axum's refuses larger bodies with 413.
    let ingest = Router::new()
        .route("/api/v1/lineage", axum::routing::post(openlineage::ingest))
        .route("/api/lineage/openlineage", axum::routing::post(openlineage::ingest_openlineage))
        .route("/api/v1/openlineage/lineage", axum::routing::post(openlineage::collate_single))
        .route("/api/v1/openlineage/lineage/batch", axum::routing::post(openlineage::collate_batch))
        .route("/v1/api/lineage", axum::routing::post(openlineage::external_lineage))
        .layer(DefaultBodyLimit::max(openlineage::INGEST_BODY_LIMIT))
        .layer(middleware::from_fn_with_state(state.pushback.ingest.clone(), pushback::limit_ingest));
    // Every route that authenticates, behind the per-address throttle of failed authentication.
    let authenticated = Router::new()
        .merge(graphql)
        .merge(ingest)
        .merge(rest::routes())
        .merge(marquez::routes())
        .layer(middleware::from_fn_with_state(state.pushback.auth.clone(), pushback::throttle_auth));
    let mut app = Router::new()
        .merge(authenticated)
        .route("/openapi.json", get(rest::openapi_json))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(ui::routes())
        .route("/", get(root_redirect))
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .layer(middleware::from_fn(unavailable::retry_after))
        .layer(middleware::from_fn(track_requests))
        .layer(TraceLayer::new_for_http());
    if !cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = cors_origins.iter().filter_map(|o| o.parse().ok()).collect();
        let allow = if cors_origins.iter().any(|o| o == "*") { AllowOrigin::any() } else { AllowOrigin::list(origins) };
        app = app.layer(
            CorsLayer::new()
                .allow_origin(allow)
                .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS])
                .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION, header::CONTENT_ENCODING]),
        );
    }
    app
}

async fn track_requests(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().to_string();
    let path =
        req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_else(|| "unmatched".into());
    let resp = next.run(req).await;
    let m = crate::metrics::metrics();
    m.http_requests.with_label_values(&[&method, &path, resp.status().as_str()]).inc();
    m.http_latency.with_label_values(&[&method, &path]).observe(start.elapsed().as_secs_f64());
    resp
}

/// `GET /`: a person who opens the address lands on the explorer.
#[utoipa::path(
    get,
    path = "/",
    tag = "explorer",
    description = "Redirects to the lineage explorer at `/ui`.",
    responses((status = 307, description = "To `/ui`")),
    security(())
)]
pub async fn root_redirect() -> axum::response::Redirect {
    axum::response::Redirect::temporary("/ui")
}

/// No route has this path: 404 with the `{"detail": ...}` body the REST errors have, or under
/// `/api/v1/` (Marquez's paths) Marquez's `{"code": ..., "message": ...}`, which its clients read.
async fn no_route(method: Method, uri: axum::http::Uri) -> Response {
    let detail = format!(
        "no route {method} {}: the API is POST /graphql and the routes in /openapi.json; the explorer is at /ui",
        uri.path()
    );
    refusal(StatusCode::NOT_FOUND, uri.path(), detail)
}

/// The path exists but not with this method: 405 in the body `no_route` picks (axum keeps the
/// `Allow` header it computed).
async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> Response {
    let detail = format!("{method} is not allowed on {}; /openapi.json lists each route's methods", uri.path());
    refusal(StatusCode::METHOD_NOT_ALLOWED, uri.path(), detail)
}

fn refusal(status: StatusCode, path: &str, message: String) -> Response {
    if path.starts_with("/api/v1/") {
        return marquez::MarquezError::new(status, message).into_response();
    }
    (status, Json(serde_json::json!({ "detail": message }))).into_response()
}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses((status = 200, description = "Alive", content_type = "text/plain", body = String)),
    security(())
)]
pub async fn healthz() -> &'static str {
    "ok"
}

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
pub async fn readyz(State(state): State<AppState>) -> Response {
    // The Kafka consumer's state is reported, not required: HTTP ingest and queries work
    // whatever the brokers do.
    let with_kafka = |text: &'static str| match crate::kafka::readiness_line() {
        Some(kafka) => format!("{text}\n{kafka}"),
        None => text.to_string(),
    };
    match state.lineage.ping().await {
        Ok(()) => (StatusCode::OK, with_kafka("ready")).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, with_kafka("store unavailable")).into_response()
        }
    }
}

#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text", content_type = "text/plain", body = String)),
    security(())
)]
pub async fn metrics() -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], crate::metrics::render()).into_response()
}

fn error_response(status: StatusCode, code: &str, message: String) -> Response {
    let mut err = ServerError::new(message, None);
    let mut ext = async_graphql::ErrorExtensionValues::default();
    ext.set("code", code);
    err.extensions = Some(ext);
    (status, Json(async_graphql::Response::from_errors(vec![err]))).into_response()
}

/// Counts the aliases in a parsed document.
fn alias_count(doc: &async_graphql::parser::types::ExecutableDocument) -> usize {
    use async_graphql::parser::types::{Selection, SelectionSet};
    fn walk(set: &SelectionSet, n: &mut usize) {
        for item in &set.items {
            match &item.node {
                Selection::Field(f) => {
                    if f.node.alias.is_some() {
                        *n += 1;
                    }
                    walk(&f.node.selection_set.node, n);
                }
                Selection::InlineFragment(f) => walk(&f.node.selection_set.node, n),
                Selection::FragmentSpread(_) => {}
            }
        }
    }
    let mut n = 0;
    for (_, op) in doc.operations.iter() {
        walk(&op.node.selection_set.node, &mut n);
    }
    for f in doc.fragments.values() {
        walk(&f.node.selection_set.node, &mut n);
    }
    n
}

/// What every resolver finds in the request's context: a fresh `Loaders` (its caches live for
/// this request only), the service, the `Auth` and the caller.
pub fn with_context(
    request: async_graphql::Request,
    lineage: &Lineage,
    auth: &crate::auth::Auth,
    caller: crate::auth::Caller,
) -> async_graphql::Request {
    request.data(Loaders::new(lineage.reader())).data(lineage.clone()).data(auth.clone()).data(caller)
}

/// `POST /graphql`.
#[utoipa::path(
    post,
    path = "/graphql",
    tag = "graphql",
    description = "GraphQL (`tributary schema` prints the SDL). Errors, an unauthenticated request's included, are GraphQL errors with `extensions.code`.",
    request_body = answers::GraphqlRequest,
    responses(
        (status = 200, description = "The GraphQL response", body = answers::GraphqlResponse),
        (status = 400, description = "The body is not a GraphQL request", body = answers::GraphqlResponse),
        (status = 413, description = "Over 2 MiB"),
        (status = 429, description = "Too many failed authentications from this address: retry after `Retry-After` seconds", body = answers::GraphqlResponse),
        (status = 503, description = "The store is unavailable or too slow, or `ingestOpenLineage` met the ingest limit: retry after `Retry-After` seconds", body = answers::GraphqlResponse),
    ),
    security(("bearer" = []))
)]
pub async fn graphql_handler(State(state): State<AppState>, headers: axum::http::HeaderMap, body: Bytes) -> Response {
    let caller = match state.auth.authenticate(authorization(&headers)).await {
        Ok(c) => c,
        Err(e) => {
            let mut resp = error_response(StatusCode::OK, e.code(), e.client_message());
            resp.extensions_mut().insert(pushback::AuthFailed);
            return resp;
        }
    };
    let mut request: async_graphql::Request = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                format!("the body is not a GraphQL request (JSON with `query`, `variables`, `operationName`): {e}"),
            )
        }
    };
    // Parsed once, here (or found parsed): the executor uses this document. A parse error is
    // left for the executor to report.
    let aliases = state.parsed.parse(&mut request).map(alias_count).unwrap_or(0);
    if aliases > MAX_ALIASES {
        return error_response(
            StatusCode::OK,
            "BAD_USER_INPUT",
            format!("the query uses {aliases} aliases; at most {MAX_ALIASES} are allowed"),
        );
    }
    let request = with_context(request, &state.lineage, &state.auth, caller).data(state.pushback.ingest.clone());
    let mut response = state.schema.execute(request).await;
    // Parse, validation and limit errors come from the executor without a code: they are the
    // client's to fix.
    for err in &mut response.errors {
        let has_code = err.extensions.as_ref().is_some_and(|e| e.get("code").is_some());
        if !has_code {
            let mut ext = err.extensions.take().unwrap_or_default();
            ext.set("code", Value::from("BAD_USER_INPUT"));
            err.extensions = Some(ext);
        }
    }
    Json(response).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str) -> async_graphql::Request {
        async_graphql::Request::new(query)
    }

    #[test]
    fn parsed_queries_hand_out_the_document_of_the_same_text_only() {
        let cache = ParsedQueries::default();
        let a = "query($c: Int!) { lineageGraph(containerId: $c) { nodes { id } } }";
        let b = "{ datastores { id name } }";
        let first = cache.parse(&mut request(a)).map(|d| format!("{d:?}")).expect("parses");
        cache.parse(&mut request(b)).expect("parses");
        // From the cache now: the same document as a fresh parse of the same text.
        let again = cache.parse(&mut request(a)).map(|d| format!("{d:?}")).expect("parses");
        assert_eq!(first, again);
        let fresh = async_graphql::parser::parse_query(a).map(|d| format!("{d:?}")).expect("parses");
        assert_eq!(again, fresh);
        let other = cache.parse(&mut request(b)).map(|d| format!("{d:?}")).expect("parses");
        assert_ne!(again, other);
        assert_eq!(cache.0.lock().unwrap_or_else(|p| p.into_inner()).len(), 2);
    }

    #[test]
    fn parse_errors_are_reported_and_not_kept() {
        let cache = ParsedQueries::default();
        let err = cache.parse(&mut request("{ datastores { id ")).expect_err("does not parse");
        assert!(!err.message.is_empty());
        assert_eq!(cache.0.lock().unwrap_or_else(|p| p.into_inner()).len(), 0);
        // A text over the limit is parsed, but not kept.
        let long = format!("{{ datastores {{ id {} }} }}", "name ".repeat(ParsedQueries::MAX_QUERY_BYTES / 5));
        cache.parse(&mut request(&long)).expect("parses");
        assert_eq!(cache.0.lock().unwrap_or_else(|p| p.into_inner()).len(), 0);
    }
}
