//! Marquez's read API at Marquez's paths (`/api/v1/namespaces`, `/api/v1/jobs`, `/api/v1/lineage`
//! ...), so Marquez's clients (`marquez-python`, scripts written against Marquez) work unchanged
//! against Tributary with its token as their `api_key`.
//!
//! Each handler authenticates (`MarquezCaller`: the same `auth::Auth` as every route, 401 without
//! a valid token), reads its parameters, calls one `service::marquez` method and shapes the
//! answer (`shapes`). Errors use Marquez's body, `{"code": <status>, "message": "..."}`: 400 for
//! a bad parameter (the message names it), 401, 403 for a job the caller may not see, 404 for an
//! unknown namespace, dataset, job or run. Marquez's write routes (namespaces, sources,
//! datasets, jobs, runs, tags made by hand) answer 405 pointing at OpenLineage ingest: in
//! Tributary lineage comes from events (`POST /api/v1/lineage`) and the catalog from GraphQL.
//! Those refusals serve nothing, so they are not in the OpenAPI document.
//!
//! # How it fits
//!
//! Marquez's read API at Marquez's paths, so Marquez's clients work unchanged: `GET /api/v1/namespaces[/{ns}]`,
//! `/api/v1/namespaces/{ns}/datasets[/{name}]`, `/api/v1/namespaces/{ns}/jobs[/{name}[/runs]]`,
//! `/api/v1/jobs?lastRunStates=`, `/api/v1/jobs/runs/{id}`, `/api/v1/lineage?nodeId=`,
//! `/api/v1/column-lineage?nodeId=`, `/api/v1/search`, `/api/v1/events/lineage` and `/api/v1/events` (what
//! `marquez-python`'s `list_events` asks), `/api/v1/sources[/{name}]`, `/api/v1/tags` and
//! `/api/v1/namespaces/{ns}/datasets/{name}/versions[/{version}]`. `MarquezCaller` authenticates with the same
//! `auth::Auth` (401 first); each handler reads its query with errors naming the parameter, calls one
//! `service::marquez` method and maps it to `shapes` (camelCase, typed, `ToSchema`, registered through
//! `utoipa_axum::routes!` like `api::rest`'s and merged into the same OpenAPI document). Errors are Marquez's `{"code",
//! "message"}`, bad input 400; the router's own 404 and 405 answer that shape under `/api/v1/` too (`api::refusal`), so
//! Marquez's clients read every refusal. Marquez's write routes (`WRITE_ROUTES`) answer 405 pointing at OpenLineage
//! ingest; they serve nothing, so they are not in the document. `GET /api/v1/lineage` shares its path with the ingest
//! route's `POST`.

pub mod shapes;

use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{on, MethodFilter};
use axum::Json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use self::shapes::ErrorBody;
use super::AppState;
use crate::error::Error;
use crate::service::marquez::{self as svc, NodeId, SearchFilter};
use crate::service::{Caller, MAX_PAGE_SIZE};

/// Marquez's default page (`limit`) and search sizes.
const DEFAULT_LIMIT: i64 = 100;
const DEFAULT_SEARCH_LIMIT: i64 = 10;
/// Marquez's default graph depth (the client's too).
const DEFAULT_DEPTH: i64 = 20;

/// An error in Marquez's shape.
#[derive(Debug)]
pub struct MarquezError {
    status: StatusCode,
    message: String,
}

impl MarquezError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        MarquezError { status, message: message.into() }
    }

    fn bad(message: impl Into<String>) -> Self {
        MarquezError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for MarquezError {
    fn into_response(self) -> Response {
        (self.status, Json(ErrorBody { code: self.status.as_u16(), message: self.message })).into_response()
    }
}

impl From<Error> for MarquezError {
    /// The one error table's status, except that bad input is Marquez's 400 (not 422); internal
    /// and store errors keep their masked message (`client_message`).
    fn from(e: Error) -> Self {
        let status = match e {
            Error::BadInput(_) => StatusCode::BAD_REQUEST,
            ref other => StatusCode::from_u16(other.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        };
        MarquezError::new(status, e.client_message())
    }
}

type Answer<T> = Result<Json<T>, MarquezError>;

/// The caller, from the `Authorization` header as on every route; 401 in Marquez's shape.
pub struct MarquezCaller(pub Caller);

impl FromRequestParts<AppState> for MarquezCaller {
    type Rejection = MarquezError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, MarquezError> {
        state.auth.authenticate(super::authorization(&parts.headers)).await.map(MarquezCaller).map_err(|e| {
            MarquezError::new(
                StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::UNAUTHORIZED),
                e.client_message(),
            )
        })
    }
}

/// A path's segments, as `Path` reads them; a segment that is not UTF-8 once decoded (`%FF`)
/// is a 400 in Marquez's shape rather than axum's plain text.
pub struct MarquezPath<T>(pub T);

impl<T, S> FromRequestParts<S> for MarquezPath<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = MarquezError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, MarquezError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(t)| MarquezPath(t))
            .map_err(|e| MarquezError::new(e.status(), e.body_text()))
    }
}

/// A request's query parameters; a value given twice or of the wrong type is a 400 naming it.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(raw: Option<&str>) -> Self {
        Query(url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()).into_owned().collect())
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }

    fn one(&self, name: &str) -> Result<Option<&str>, MarquezError> {
        match self.all(name).as_slice() {
            [] => Ok(None),
            [v] => Ok(Some(v)),
            _ => Err(MarquezError::bad(format!("query parameter {name} is given more than once; give it once"))),
        }
    }

    fn int(&self, name: &str, default: i64, min: i64, max: i64) -> Result<i64, MarquezError> {
        let Some(v) = self.one(name)? else { return Ok(default) };
        match v.trim().parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(MarquezError::bad(format!(
                "query parameter {name} must be an integer from {min} to {max}, got {v:?}"
            ))),
        }
    }

    /// `true`/`false` in any case (Python's client sends `True` and `False`), or 1/0.
    fn bool(&self, name: &str, default: bool) -> Result<bool, MarquezError> {
        let Some(v) = self.one(name)? else { return Ok(default) };
        match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(MarquezError::bad(format!("query parameter {name} must be true or false, got {v:?}"))),
        }
    }

    fn time(&self, name: &str) -> Result<Option<crate::domain::Timestamp>, MarquezError> {
        self.one(name)?
            .map(|v| {
                chrono::DateTime::parse_from_rfc3339(v.trim()).map(|t| t.with_timezone(&chrono::Utc)).map_err(|_| {
                    MarquezError::bad(format!(
                        "query parameter {name} must be an RFC 3339 time (2022-09-15T07:47:19Z), got {v:?}"
                    ))
                })
            })
            .transpose()
    }

    /// `limit` (1 to 1000) and `offset` (0 or more).
    fn window(&self, default_limit: i64) -> Result<(usize, usize), MarquezError> {
        let limit = self.int("limit", default_limit, 1, MAX_PAGE_SIZE)?;
        let offset = self.int("offset", 0, 0, i64::MAX)?;
        Ok((offset as usize, limit as usize))
    }

    fn node_id(&self) -> Result<NodeId, MarquezError> {
        let v = self.one("nodeId")?.ok_or_else(|| {
            MarquezError::bad(
                "query parameter nodeId is required: dataset:<namespace>:<name> or job:<namespace>:<name>",
            )
        })?;
        Ok(NodeId::parse(v)?)
    }
}

fn page<T>(items: Vec<T>, (offset, limit): (usize, usize)) -> Vec<T> {
    items.into_iter().skip(offset).take(limit).collect()
}

/// The documented routes.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_namespaces))
        .routes(routes!(get_namespace))
        .routes(routes!(list_datasets))
        .routes(routes!(get_dataset))
        .routes(routes!(list_jobs))
        .routes(routes!(get_job))
        .routes(routes!(list_all_jobs))
        .routes(routes!(list_runs))
        .routes(routes!(get_run))
        .routes(routes!(lineage))
        .routes(routes!(column_lineage))
        .routes(routes!(search))
        .routes(routes!(lineage_events))
        .routes(routes!(events))
        .routes(routes!(list_sources))
        .routes(routes!(get_source))
        .routes(routes!(list_tags))
        .routes(routes!(list_dataset_versions))
        .routes(routes!(get_dataset_version))
}

/// Marquez's write routes, each refused with 405 (see the module's notes).
const WRITE_ROUTES: [(&str, &[Method]); 12] = [
    ("/api/v1/namespaces/{namespace}", &[Method::PUT, Method::DELETE]),
    ("/api/v1/namespaces/{namespace}/datasets/{dataset}", &[Method::PUT, Method::DELETE]),
    ("/api/v1/namespaces/{namespace}/datasets/{dataset}/tags/{tag}", &[Method::POST, Method::DELETE]),
    ("/api/v1/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}", &[Method::POST, Method::DELETE]),
    ("/api/v1/namespaces/{namespace}/jobs/{job}", &[Method::PUT, Method::DELETE]),
    ("/api/v1/namespaces/{namespace}/jobs/{job}/runs", &[Method::POST]),
    ("/api/v1/jobs/runs/{id}/start", &[Method::POST]),
    ("/api/v1/jobs/runs/{id}/complete", &[Method::POST]),
    ("/api/v1/jobs/runs/{id}/fail", &[Method::POST]),
    ("/api/v1/jobs/runs/{id}/abort", &[Method::POST]),
    ("/api/v1/sources/{source}", &[Method::PUT]),
    ("/api/v1/tags/{tag}", &[Method::PUT]),
];

/// The Marquez routes, for `api::router` to merge: the documented reads and the refused writes.
pub fn routes() -> axum::Router<AppState> {
    let mut router = api().split_for_parts().0;
    for (path, methods) in WRITE_ROUTES {
        let filter = methods.iter().filter_map(|m| MethodFilter::try_from(m.clone()).ok()).reduce(MethodFilter::or);
        if let Some(filter) = filter {
            router = router.route(path, on(filter, write_refused));
        }
    }
    router
}

/// 405 for Marquez's write routes, after authenticating like the rest (no token: 401).
async fn write_refused(MarquezCaller(_): MarquezCaller, method: Method) -> MarquezError {
    MarquezError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{method} is Marquez's legacy write API, which Tributary does not serve: send OpenLineage events to POST /api/v1/lineage (lineage, jobs, runs and dataset schemas come from them), and edit the catalog through GraphQL (POST /graphql)"
        ),
    )
}

const NS: &str = "An OpenLineage namespace (URL-encoded: `postgres:%2F%2Fdb:5432`)";

#[utoipa::path(get, path = "/api/v1/namespaces", tag = "marquez",
    params(("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The namespaces of jobs, of datasets sent in events and of datastores, by name", body = shapes::NamespaceList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_namespaces(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::NamespaceList> {
    let window = Query::parse(raw.as_deref()).window(DEFAULT_LIMIT)?;
    let all = state.lineage.marquez_namespaces(&caller).await?;
    Ok(Json(shapes::NamespaceList { namespaces: page(all, window).into_iter().map(Into::into).collect() }))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}", tag = "marquez",
    params(("namespace" = String, Path, description = NS)),
    responses((status = 200, description = "The namespace", body = shapes::Namespace),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such namespace", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_namespace(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath(namespace): MarquezPath<String>,
) -> Answer<shapes::Namespace> {
    Ok(Json(state.lineage.marquez_namespace(&caller, &namespace).await?.into()))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/datasets", tag = "marquez",
    params(("namespace" = String, Path, description = NS),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The namespace's datasets, by name", body = shapes::DatasetList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such namespace", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_datasets(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath(namespace): MarquezPath<String>,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::DatasetList> {
    let window = Query::parse(raw.as_deref()).window(DEFAULT_LIMIT)?;
    let all = state.lineage.marquez_datasets(&caller, &namespace).await?;
    let total_count = all.len();
    let datasets = page(all, window).iter().map(shapes::Dataset::from).collect();
    Ok(Json(shapes::DatasetList { datasets, total_count }))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/datasets/{dataset}", tag = "marquez",
    params(("namespace" = String, Path, description = NS),
           ("dataset" = String, Path, description = "The dataset's OpenLineage name")),
    responses((status = 200, description = "The dataset: fields, metadata, when last written, its latest version (currentVersion)", body = shapes::Dataset),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such dataset", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_dataset(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath((namespace, name)): MarquezPath<(String, String)>,
) -> Answer<shapes::Dataset> {
    let d = state.lineage.marquez_dataset(&caller, &svc::DatasetId { namespace, name }).await?;
    let mut answer = shapes::Dataset::from(&d);
    // Asked for alone, a dataset names its latest version (lists and graphs leave it null:
    // finding it reads the runs of every job that touched the dataset).
    answer.current_version = state.lineage.marquez_current_version(&caller, &d).await?;
    Ok(Json(answer))
}

async fn job_list(
    state: &AppState,
    caller: &Caller,
    namespace: Option<&str>,
    q: &Query,
) -> Result<shapes::JobList, MarquezError> {
    let window = q.window(DEFAULT_LIMIT)?;
    // `lastRunStates=FAILED&lastRunStates=ABORTED`, or comma-separated.
    let states: Vec<String> = q
        .all("lastRunStates")
        .iter()
        .flat_map(|v| v.split(','))
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
        .collect();
    let all =
        state.lineage.marquez_job_list(caller, namespace, (!states.is_empty()).then_some(states.as_slice())).await?;
    let total_count = all.len();
    let jobs = state.lineage.marquez_jobs(page(all, window)).await?;
    Ok(shapes::JobList { jobs: jobs.iter().map(shapes::Job::from).collect(), total_count })
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/jobs", tag = "marquez",
    params(("namespace" = String, Path, description = NS),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The namespace's jobs the caller may see, by name", body = shapes::JobList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such namespace", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_jobs(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath(namespace): MarquezPath<String>,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::JobList> {
    Ok(Json(job_list(&state, &caller, Some(&namespace), &Query::parse(raw.as_deref())).await?))
}

#[utoipa::path(get, path = "/api/v1/jobs", tag = "marquez",
    params(("lastRunStates" = Option<Vec<String>>, Query, description = "Only jobs whose latest run is in one of these states: NEW, RUNNING, COMPLETED, FAILED, ABORTED (repeated or comma-separated)"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The jobs the caller may see, by namespace and name", body = shapes::JobList),
              (status = 400, description = "A bad parameter (an unknown state)", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_all_jobs(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::JobList> {
    Ok(Json(job_list(&state, &caller, None, &Query::parse(raw.as_deref())).await?))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/jobs/{job}", tag = "marquez",
    params(("namespace" = String, Path, description = NS), ("job" = String, Path, description = "The job's name")),
    responses((status = 200, description = "The job: current inputs and outputs, parent, latest run", body = shapes::Job),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 403, description = "The job touches datastores the caller may not view", body = ErrorBody),
              (status = 404, description = "No such job", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_job(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath((namespace, name)): MarquezPath<(String, String)>,
) -> Answer<shapes::Job> {
    let j = state.lineage.marquez_job(&caller, &namespace, &name).await?;
    Ok(Json(shapes::Job::from(&j)))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/jobs/{job}/runs", tag = "marquez",
    params(("namespace" = String, Path, description = NS), ("job" = String, Path, description = "The job's name"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The job's runs, the latest first", body = shapes::RunList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 403, description = "The job touches datastores the caller may not view", body = ErrorBody),
              (status = 404, description = "No such job", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_runs(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath((namespace, name)): MarquezPath<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::RunList> {
    let (offset, limit) = Query::parse(raw.as_deref()).window(DEFAULT_LIMIT)?;
    let (runs, total_count) =
        state.lineage.marquez_runs(&caller, &namespace, &name, offset as i64, limit as i64).await?;
    Ok(Json(shapes::RunList { runs: runs.iter().map(shapes::Run::from).collect(), total_count }))
}

#[utoipa::path(get, path = "/api/v1/jobs/runs/{id}", tag = "marquez",
    params(("id" = String, Path, description = "The OpenLineage runId")),
    responses((status = 200, description = "The run", body = shapes::Run),
              (status = 400, description = "Not a run id", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 403, description = "Its job touches datastores the caller may not view", body = ErrorBody),
              (status = 404, description = "No such run", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_run(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath(id): MarquezPath<String>,
) -> Answer<shapes::Run> {
    let r = state.lineage.marquez_run(&caller, &id).await?;
    Ok(Json(shapes::Run::from(&r)))
}

#[utoipa::path(get, path = "/api/v1/lineage", tag = "marquez",
    params(("nodeId" = String, Query, description = "dataset:<namespace>:<name> or job:<namespace>:<name>"),
           ("depth" = Option<i64>, Query, description = "How many jobs away (0 to 100, default 20)")),
    responses((status = 200, description = "Marquez's graph of DATASET and JOB nodes with their in and out edges", body = shapes::LineageGraph),
              (status = 400, description = "A bad nodeId or depth", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 403, description = "The job asked for touches datastores the caller may not view", body = ErrorBody),
              (status = 404, description = "No such dataset or job", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn lineage(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::LineageGraph> {
    let q = Query::parse(raw.as_deref());
    let node = q.node_id()?;
    let depth = q.int("depth", DEFAULT_DEPTH, 0, svc::MAX_DEPTH)?;
    let g = state.lineage.marquez_lineage(&caller, &node, depth).await?;
    Ok(Json(shapes::LineageGraph::from(&g)))
}

#[utoipa::path(get, path = "/api/v1/column-lineage", tag = "marquez",
    params(("nodeId" = String, Query, description = "dataset:<namespace>:<name>, datasetField:<namespace>:<name>:<field> or job:<namespace>:<name>"),
           ("depth" = Option<i64>, Query, description = "Hops (1 to 100, default 20)"),
           ("withDownstream" = Option<bool>, Query, description = "Also what is computed from the fields (true/false, Python's True/False too)")),
    responses((status = 200, description = "DATASET_FIELD nodes with the fields each is computed from", body = shapes::LineageGraph),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such dataset, field or job", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn column_lineage(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::LineageGraph> {
    let q = Query::parse(raw.as_deref());
    let node = q.node_id()?;
    let depth = q.int("depth", DEFAULT_DEPTH, 1, svc::MAX_DEPTH)?;
    let downstream = q.bool("withDownstream", false)?;
    let g = state.lineage.marquez_column_lineage(&caller, &node, depth, downstream).await?;
    Ok(Json(shapes::LineageGraph::from(&g)))
}

#[utoipa::path(get, path = "/api/v1/search", tag = "marquez",
    params(("q" = String, Query, description = "Case-insensitive; % matches any run of characters, _ one"),
           ("filter" = Option<String>, Query, description = "DATASET or JOB"),
           ("sort" = Option<String>, Query, description = "NAME (the only order served)"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 10)")),
    responses((status = 200, description = "Datasets and jobs whose name matches, by name", body = shapes::SearchResultList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn search(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::SearchResultList> {
    let q = Query::parse(raw.as_deref());
    let text = q
        .one("q")?
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| MarquezError::bad("query parameter q is required"))?;
    if text.len() > 1024 {
        return Err(MarquezError::bad("query parameter q is longer than 1024 characters"));
    }
    let filter = match q.one("filter")?.map(|f| f.trim().to_ascii_uppercase()) {
        None => None,
        Some(f) if f == "DATASET" => Some(SearchFilter::Dataset),
        Some(f) if f == "JOB" => Some(SearchFilter::Job),
        Some(f) => return Err(MarquezError::bad(format!("query parameter filter must be DATASET or JOB, got {f:?}"))),
    };
    if let Some(sort) = q.one("sort")? {
        if !sort.trim().eq_ignore_ascii_case("name") {
            return Err(MarquezError::bad(format!("query parameter sort must be NAME, got {sort:?}")));
        }
    }
    let limit = q.int("limit", DEFAULT_SEARCH_LIMIT, 1, MAX_PAGE_SIZE)?;
    let (hits, total_count) = state.lineage.marquez_search(&caller, text, filter, limit as usize).await?;
    Ok(Json(shapes::SearchResultList { total_count, results: hits.iter().map(shapes::SearchResult::from).collect() }))
}

async fn event_list(state: &AppState, caller: &Caller, raw: Option<&str>) -> Answer<shapes::LineageEventList> {
    let q = Query::parse(raw);
    let (offset, limit) = q.window(DEFAULT_LIMIT)?;
    let ascending = match q.one("sortDirection")?.map(|s| s.trim().to_ascii_lowercase()) {
        None => false,
        Some(s) if s == "desc" => false,
        Some(s) if s == "asc" => true,
        Some(s) => {
            return Err(MarquezError::bad(format!("query parameter sortDirection must be asc or desc, got {s:?}")))
        }
    };
    let window = crate::domain::EventTimeWindow {
        after: q.time("after")?,
        before: q.time("before")?,
        ascending,
        offset: offset as i64,
        limit: limit as i64,
    };
    let (events, total_count) = state.lineage.marquez_events(caller, &window).await?;
    Ok(Json(shapes::LineageEventList { events: events.into_iter().map(|e| e.body).collect(), total_count }))
}

#[utoipa::path(get, path = "/api/v1/events/lineage", tag = "marquez",
    params(("before" = Option<String>, Query, description = "Events whose eventTime is before this RFC 3339 time"),
           ("after" = Option<String>, Query, description = "Events whose eventTime is at or after this RFC 3339 time"),
           ("sortDirection" = Option<String>, Query, description = "By eventTime: desc (newest first, the default) or asc"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The stored OpenLineage run events as received, by eventTime; totalCount counts every event in the window (job and dataset events too, as Marquez counts)", body = shapes::LineageEventList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn lineage_events(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::LineageEventList> {
    event_list(&state, &caller, raw.as_deref()).await
}

/// `marquez-python`'s `list_events()` asks this path (Marquez serves only `/events/lineage`).
#[utoipa::path(get, path = "/api/v1/events", tag = "marquez",
    params(("before" = Option<String>, Query, description = "Events whose eventTime is before this RFC 3339 time"),
           ("after" = Option<String>, Query, description = "Events whose eventTime is at or after this RFC 3339 time"),
           ("sortDirection" = Option<String>, Query, description = "By eventTime: desc (newest first, the default) or asc"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "As /api/v1/events/lineage", body = shapes::LineageEventList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn events(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::LineageEventList> {
    event_list(&state, &caller, raw.as_deref()).await
}

#[utoipa::path(get, path = "/api/v1/sources", tag = "marquez",
    params(("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The datastores, then the namespaces of assets outside the catalog, as Marquez's sources, by name", body = shapes::SourceList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_sources(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::SourceList> {
    let window = Query::parse(raw.as_deref()).window(DEFAULT_LIMIT)?;
    let all = state.lineage.marquez_sources(&caller).await?;
    Ok(Json(shapes::SourceList { sources: page(all, window).into_iter().map(Into::into).collect() }))
}

#[utoipa::path(get, path = "/api/v1/sources/{source}", tag = "marquez",
    params(("source" = String, Path, description = "A datastore's name, or a namespace of assets outside the catalog")),
    responses((status = 200, description = "The source", body = shapes::Source),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such source", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_source(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath(name): MarquezPath<String>,
) -> Answer<shapes::Source> {
    Ok(Json(state.lineage.marquez_source(&caller, &name).await?.into()))
}

#[utoipa::path(get, path = "/api/v1/tags", tag = "marquez",
    params(("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The global tags OpenLineage events created and the tags on containers, by name", body = shapes::TagList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_tags(
    State(state): State<AppState>,
    MarquezCaller(_caller): MarquezCaller,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::TagList> {
    let window = Query::parse(raw.as_deref()).window(DEFAULT_LIMIT)?;
    let all = state.lineage.marquez_tags().await?;
    let tags = page(all, window).into_iter().map(|name| shapes::Tag { name, description: None }).collect();
    Ok(Json(shapes::TagList { tags }))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions", tag = "marquez",
    params(("namespace" = String, Path, description = NS),
           ("dataset" = String, Path, description = "The dataset's OpenLineage name"),
           ("limit" = Option<i64>, Query, description = "At most this many (1 to 1000, default 100)"),
           ("offset" = Option<i64>, Query, description = "Skip this many (default 0)")),
    responses((status = 200, description = "The dataset's versions, the latest first: one per run that wrote it (the first run that read it when none did), with the schema facet that run sent", body = shapes::DatasetVersionList),
              (status = 400, description = "A bad parameter", body = ErrorBody),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such dataset", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_dataset_versions(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath((namespace, name)): MarquezPath<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Answer<shapes::DatasetVersionList> {
    let (offset, limit) = Query::parse(raw.as_deref()).window(DEFAULT_LIMIT)?;
    let id = svc::DatasetId { namespace, name };
    let (versions, total_count) = state.lineage.marquez_dataset_versions(&caller, &id, offset, limit).await?;
    Ok(Json(shapes::DatasetVersionList {
        versions: versions.iter().map(shapes::DatasetVersion::from).collect(),
        total_count,
    }))
}

#[utoipa::path(get, path = "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions/{version}", tag = "marquez",
    params(("namespace" = String, Path, description = NS),
           ("dataset" = String, Path, description = "The dataset's OpenLineage name"),
           ("version" = String, Path, description = "A version id from the dataset's versions (or a run's outputDatasetVersions)")),
    responses((status = 200, description = "The version", body = shapes::DatasetVersion),
              (status = 401, description = "Missing or invalid token", body = ErrorBody),
              (status = 404, description = "No such dataset or version", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn get_dataset_version(
    State(state): State<AppState>,
    MarquezCaller(caller): MarquezCaller,
    MarquezPath((namespace, name, version)): MarquezPath<(String, String, String)>,
) -> Answer<shapes::DatasetVersion> {
    let id = svc::DatasetId { namespace, name };
    let v = state.lineage.marquez_dataset_version(&caller, &id, &version).await?;
    Ok(Json(shapes::DatasetVersion::from(&v)))
}
