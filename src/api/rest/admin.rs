//! Seed 004's read-only lineage routes, by table name: `graph`, `columns`, `impact` and
//! `pii-flow`. A `<table>` is any form `Lineage::resolve_table` takes (`database.schema.table`
//! or an end of it, `<datastore>:<database.schema.table>`, an OpenLineage `<namespace>/<name>`,
//! the id), or an OpenLineage dataset as the pair `namespace=` and the name
//! (`Lineage::resolve_dataset_table`), or `container_id=` (`field_id=` for `pii-flow`): 404 when
//! nothing matches, 400 naming the candidates when several match equally well. Then each route
//! calls the service method of the GraphQL query (`lineage_graph`, `impact`, `pii_flow`;
//! `columns` is `Lineage::column_lineage`). Any bad input answers 400 `{"detail": ...}`.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::export::{self, Format};
use super::params::{choice, required, Query, QueryParams};
use super::shapes::{field_end, Detail, ExternalEdge, ExternalNode, GraphEdge, GraphNode, Lookups, Want};
use super::{ApiError, RestCaller, Seed};
use crate::api::AppState;
use crate::domain::{container_key, Container, Direction, End, Id};
use crate::error::Error;
use crate::service::tables::unique_name;
use crate::service::{GraphRequest, PiiOptions, Root};

/// A direction: `up` (where it comes from), `down` (what it feeds) or `both`.
#[derive(ToSchema, Clone, Copy)]
#[schema(rename_all = "lowercase")]
pub enum Direction3 {
    Up,
    Down,
    Both,
}

/// `upstream` and `downstream` are read too (the `/api/...` routes' words), undocumented.
const DIRECTIONS: [(&str, Direction3); 5] = [
    ("up", Direction3::Up),
    ("down", Direction3::Down),
    ("both", Direction3::Both),
    ("upstream", Direction3::Up),
    ("downstream", Direction3::Down),
];

impl<'de> Deserialize<'de> for Direction3 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Direction3, D::Error> {
        choice(d, &DIRECTIONS)
    }
}

impl Direction3 {
    /// The traversal's direction, none for both.
    fn direction(self) -> Option<Direction> {
        match self {
            Direction3::Up => Some(Direction::Upstream),
            Direction3::Down => Some(Direction::Downstream),
            Direction3::Both => None,
        }
    }
}

/// How a route names its table: the fields every by-name route's parameters share.
struct TableParams<'a> {
    /// The parameter that names it (`root`, `table`), and its value.
    name: &'a str,
    given: Option<String>,
    namespace: Option<String>,
    container_id: Option<i64>,
}

/// A table, as resolved from its name.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct TableRef {
    pub id: i64,
    pub name: String,
    /// `database.schema.name`.
    pub qualified_name: String,
    /// `<datastore>:<database.schema.name>`: the name no other table shares, which every
    /// by-name route takes.
    pub unique_name: Option<String>,
    pub container_type: String,
    pub datastore_id: i64,
    pub datastore_name: Option<String>,
}

fn table_ref(c: &Container, l: &Lookups) -> TableRef {
    TableRef {
        id: c.id,
        name: c.name.clone(),
        qualified_name: container_key(c.database.as_deref(), c.schema.as_deref(), &c.name),
        unique_name: l.datastores.get(&c.datastore_id).map(|d| unique_name(&d.name, c)),
        container_type: c.container_type.clone(),
        datastore_id: c.datastore_id,
        datastore_name: l.datastores.get(&c.datastore_id).map(|d| d.name.clone()),
    }
}

fn fail(e: Error) -> ApiError {
    ApiError::service(Seed::Admin, e, &[])
}

/// The table a request names: `container_id`, or the parameter `name` in any form
/// `resolve_table` takes, or with `namespace` the OpenLineage dataset of that namespace and name.
async fn table(state: &AppState, q: TableParams<'_>) -> Result<Container, ApiError> {
    let TableParams { name, given, namespace, container_id: by_id } = q;
    let given = given.filter(|v| !v.trim().is_empty());
    match (by_id, given) {
        (Some(_), Some(_)) => Err(ApiError::invalid(
            Seed::Admin,
            &["query", name],
            format!("give either {name} or container_id, not both"),
        )),
        (Some(id), None) => state.lineage.container_by_id(id).await.map_err(fail),
        (None, Some(wanted)) => match namespace {
            Some(ns) => state.lineage.resolve_dataset_table(name, &ns, &wanted, None).await.map_err(fail),
            None => state.lineage.resolve_table(name, &wanted).await.map_err(fail),
        },
        (None, None) => Err(ApiError::invalid(
            Seed::Admin,
            &["query", name],
            format!(
                "query parameter {name} is required: a table name such as database.schema.table, datastore:database.schema.table, an OpenLineage namespace/name, or the id (or container_id=)"
            ),
        )),
    }
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct AdminGraphQuery {
    /// The table at the centre: a qualified name (`database.schema.table`, or a unique suffix),
    /// `datastore:database.schema.table`, an OpenLineage `namespace/name`, or its id.
    root: Option<String>,
    /// With `root`: the OpenLineage namespace its name is in (the dataset as the pair).
    namespace: Option<String>,
    /// The table at the centre by id, instead of `root`.
    container_id: Option<i64>,
    /// Hops to include, 1 to 20.
    #[param(default = 2, minimum = 1, maximum = 20)]
    depth: Option<i64>,
    /// `up`, `down` or `both` (default).
    #[param(inline)]
    direction: Option<Direction3>,
    /// `json` (default), `csv` (one row per edge), `dot` (Graphviz), `graphml` or `mermaid`.
    #[param(inline)]
    format: Option<Format>,
}

impl QueryParams for AdminGraphQuery {
    const SEED: Seed = Seed::Admin;
}

/// The lineage graph around a table.
#[derive(Serialize, ToSchema, Debug)]
pub struct AdminGraph {
    pub root: TableRef,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    pub external_nodes: Vec<ExternalNode>,
    pub external_edges: Vec<ExternalEdge>,
}

#[utoipa::path(
    get,
    path = "/admin/lineage/graph",
    tag = "lineage by table name",
    params(AdminGraphQuery),
    responses(
        (status = 200, description = "The graph `{nodes, edges}` (and external nodes and edges); in the `format` asked", content(
            (AdminGraph = "application/json"),
            (String = "text/csv"),
            (String = "text/vnd.graphviz"),
            (String = "application/graphml+xml"),
            (String = "text/vnd.mermaid"),
        )),
        (status = 400, description = "A parameter is missing or invalid (`format` not one of json, csv, dot, graphml, mermaid, ...), or the name is ambiguous (the candidates are named)", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No table has that name", body = Detail),
    ),
    security(("bearer" = []))
)]
pub async fn graph(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Query(q): Query<AdminGraphQuery>,
) -> Result<Response, ApiError> {
    let format = q.format.unwrap_or_default();
    let depth = q.depth.unwrap_or(2);
    let side = q.direction.and_then(Direction3::direction);
    let root = TableParams { name: "root", given: q.root, namespace: q.namespace, container_id: q.container_id };
    let root = table(&state, root).await?;
    let req = GraphRequest { side, ..GraphRequest::new(&caller, Root::Container(root.id), depth) };
    let g = state.lineage.graph(&req).await.map_err(fail)?.graph;
    if format != Format::Json {
        let x = export::of_graph(&state.lineage, &caller, &g).await.map_err(fail)?;
        return Ok(x.respond(format, "lineage"));
    }
    let g = Lookups::graph(&state.lineage, &caller, g).await.map_err(fail)?;
    let l =
        Want { containers: BTreeSet::from([root.id]), ..Want::default() }.read(&state.lineage).await.map_err(fail)?;
    Ok(Json(AdminGraph {
        root: table_ref(&root, &l),
        nodes: g.nodes,
        edges: g.edges,
        external_nodes: g.external_nodes,
        external_edges: g.external_edges,
    })
    .into_response())
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct TableQuery {
    /// A qualified table name (`database.schema.table`, or a unique suffix),
    /// `datastore:database.schema.table`, an OpenLineage `namespace/name`, or its id.
    table: Option<String>,
    /// With `table`: the OpenLineage namespace its name is in (the dataset as the pair).
    namespace: Option<String>,
    /// The table by id, instead of `table`.
    container_id: Option<i64>,
}

impl QueryParams for TableQuery {
    const SEED: Seed = Seed::Admin;
}

/// One source column of one of the table's columns.
#[derive(Serialize, ToSchema, Debug)]
pub struct ColumnSource {
    /// The table's column.
    pub column: Option<String>,
    pub field_id: Option<i64>,
    /// The source's table (`database.schema.name`), or its name outside the catalog.
    pub source_table: Option<String>,
    pub source_table_id: Option<i64>,
    pub source_column: Option<String>,
    pub source_field_id: Option<i64>,
    /// Set when the source is an asset outside the catalog.
    pub source_external_fqn: Option<String>,
    /// The value passed through an expression rather than a plain copy; null when the producer
    /// did not say (an OpenLineage field with no `transformations`).
    pub derived: Option<bool>,
    pub operation: Option<String>,
    pub source_type: String,
    pub edge_id: i64,
}

/// Column-level lineage of a table: each live field edge into its columns.
#[derive(Serialize, ToSchema, Debug)]
pub struct ColumnLineage {
    pub table: TableRef,
    pub columns: Vec<ColumnSource>,
}

#[utoipa::path(
    get,
    path = "/admin/lineage/columns",
    tag = "lineage by table name",
    params(TableQuery),
    responses(
        (status = 200, description = "The table's column lineage, with the derived flag", body = ColumnLineage),
        (status = 400, description = "The table is missing, or its name is ambiguous (the candidates are named)", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No table has that name", body = Detail),
    ),
    security(("bearer" = []))
)]
pub async fn columns(
    State(state): State<AppState>,
    RestCaller(_caller): RestCaller,
    Query(q): Query<TableQuery>,
) -> Result<Json<ColumnLineage>, ApiError> {
    let t = TableParams { name: "table", given: q.table, namespace: q.namespace, container_id: q.container_id };
    let t = table(&state, t).await?;
    let edges = state.lineage.column_lineage(t.id).await.map_err(fail)?;
    let mut want = Want::default().edges(&edges, false);
    want.containers.insert(t.id);
    let l = want.read(&state.lineage).await.map_err(fail)?;
    let qualified =
        |id: Id| l.containers.get(&id).map(|c| container_key(c.database.as_deref(), c.schema.as_deref(), &c.name));
    let columns = edges
        .into_iter()
        .map(|e| {
            let target = field_end(&e.target).and_then(|id| l.fields.get(&id));
            let source = field_end(&e.source).and_then(|id| l.fields.get(&id));
            let source_table_id = e.source.container_id();
            ColumnSource {
                column: target.map(|f| f.name.clone()),
                field_id: field_end(&e.target),
                source_table: source_table_id
                    .and_then(qualified)
                    .or_else(|| e.source.external_fqn().map(str::to_string)),
                source_table_id,
                source_column: source.map(|f| f.name.clone()),
                source_field_id: field_end(&e.source),
                source_external_fqn: match &e.source {
                    End::External { fqn } => Some(fqn.clone()),
                    _ => None,
                },
                derived: e.derived,
                operation: e.operation,
                source_type: e.source_type,
                edge_id: e.id,
            }
        })
        .collect();
    Ok(Json(ColumnLineage { table: table_ref(&t, &l), columns }))
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct ImpactQuery {
    /// A qualified table name (`database.schema.table`, or a unique suffix),
    /// `datastore:database.schema.table`, an OpenLineage `namespace/name`, or its id.
    table: Option<String>,
    /// With `table`: the OpenLineage namespace its name is in (the dataset as the pair).
    namespace: Option<String>,
    /// The table by id, instead of `table`.
    container_id: Option<i64>,
    /// `down` (default: what the table feeds) or `up` (where it comes from).
    #[param(inline)]
    direction: Option<Direction3>,
    /// Hops to follow, 1 to 20.
    #[param(default = 20, minimum = 1, maximum = 20)]
    depth: Option<i64>,
    /// At most this many tables, 1 to 100,000.
    #[param(default = 10000, minimum = 1, maximum = 100000)]
    limit: Option<i64>,
    /// `json` (default), `csv` (one row per edge), `dot` (Graphviz), `graphml` or `mermaid`.
    #[param(inline)]
    format: Option<Format>,
}

impl QueryParams for ImpactQuery {
    const SEED: Seed = Seed::Admin;
}

/// A table reached, with how far and by which edge.
#[derive(Serialize, ToSchema, Debug)]
pub struct ImpactedTable {
    pub id: i64,
    pub name: Option<String>,
    pub qualified_name: Option<String>,
    pub container_type: Option<String>,
    pub datastore_id: Option<i64>,
    pub datastore_name: Option<String>,
    pub distance: i64,
    /// The edge by which the table was first reached.
    pub via_edge_id: i64,
    pub via_operation: Option<String>,
}

/// An asset outside the catalog the traversal reached (not followed further; `limit` counts
/// tables only).
#[derive(Serialize, ToSchema, Debug)]
pub struct ImpactedExternal {
    /// `ext:<source_type>:<fqn>`, as the graph's external nodes.
    pub id: String,
    pub fqn: String,
    pub source_type: String,
    pub distance: i64,
    /// The edge by which the asset was first reached.
    pub via_edge_id: i64,
    pub via_operation: Option<String>,
}

/// The tables a table feeds, transitively, nearest first, and the external assets on the way.
#[derive(Serialize, ToSchema, Debug)]
pub struct TableImpact {
    pub table: TableRef,
    /// The depth or the limit cut the answer.
    pub is_partial: bool,
    pub tables: Vec<ImpactedTable>,
    pub externals: Vec<ImpactedExternal>,
}

/// The column a `pii-flow` request names: `field_id`, or `column` of the table it names.
async fn column(state: &AppState, q: PiiFlowQuery) -> Result<(Container, crate::domain::Field), ApiError> {
    let Some(id) = q.field_id else {
        let column = required(Seed::Admin, "column", q.column, "a column name of the table (or field_id=)")?;
        let t = TableParams { name: "table", given: q.table, namespace: q.namespace, container_id: q.container_id };
        let t = table(state, t).await?;
        let f = state.lineage.resolve_column(&t, &column).await.map_err(fail)?;
        return Ok((t, f));
    };
    if q.table.is_some() || q.column.is_some() || q.container_id.is_some() || q.namespace.is_some() {
        return Err(ApiError::invalid(
            Seed::Admin,
            &["query", "field_id"],
            "give either field_id or table and column, not both",
        ));
    }
    state.lineage.field_with_container(id).await.map_err(fail)
}

/// `up` or `down` for the transitive routes (`both` is not a traversal of theirs).
fn one_side(direction: Option<Direction3>) -> Result<Direction, ApiError> {
    match direction.map(Direction3::direction) {
        None => Ok(Direction::Downstream),
        Some(Some(d)) => Ok(d),
        Some(None) => Err(ApiError::invalid(
            Seed::Admin,
            &["query", "direction"],
            "query parameter direction must be up or down here (both is for the graph)",
        )),
    }
}

#[utoipa::path(
    get,
    path = "/admin/lineage/impact",
    tag = "lineage by table name",
    params(ImpactQuery),
    responses(
        (status = 200, description = "The transitive downstream (or upstream) tables; in the `format` asked", content(
            (TableImpact = "application/json"),
            (String = "text/csv"),
            (String = "text/vnd.graphviz"),
            (String = "application/graphml+xml"),
            (String = "text/vnd.mermaid"),
        )),
        (status = 400, description = "A parameter is missing or invalid (`format` not one of json, csv, dot, graphml, mermaid, ...), or the name is ambiguous (the candidates are named)", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No table has that name", body = Detail),
    ),
    security(("bearer" = []))
)]
pub async fn impact(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Query(q): Query<ImpactQuery>,
) -> Result<Response, ApiError> {
    let format = q.format.unwrap_or_default();
    let side = one_side(q.direction)?;
    let (depth, limit) = (q.depth.unwrap_or(20), q.limit.unwrap_or(10_000));
    let t = TableParams { name: "table", given: q.table, namespace: q.namespace, container_id: q.container_id };
    let t = table(&state, t).await?;
    let r = state.lineage.impact(t.id, depth, side, limit).await.map_err(fail)?;
    if format != Format::Json {
        let start = End::Container { id: t.id };
        let x = export::of_transitive(&state.lineage, &caller, &start, &r).await.map_err(fail)?;
        return Ok(x.respond(format, "impact"));
    }
    let mut want = Want { containers: r.reached.iter().map(|x| x.id).collect(), ..Want::default() };
    want.containers.insert(t.id);
    let l = want.read(&state.lineage).await.map_err(fail)?;
    let tables = r
        .reached
        .into_iter()
        .map(|x| {
            let c = l.containers.get(&x.id);
            ImpactedTable {
                id: x.id,
                name: c.map(|c| c.name.clone()),
                qualified_name: c.map(|c| container_key(c.database.as_deref(), c.schema.as_deref(), &c.name)),
                container_type: c.map(|c| c.container_type.clone()),
                datastore_id: c.map(|c| c.datastore_id),
                datastore_name: c.and_then(|c| l.datastores.get(&c.datastore_id)).map(|d| d.name.clone()),
                distance: x.distance,
                via_edge_id: x.via.id,
                via_operation: x.via.operation,
            }
        })
        .collect();
    let externals = r
        .externals
        .into_iter()
        .map(|x| ImpactedExternal {
            id: x.id,
            fqn: x.fqn,
            source_type: x.source_type,
            distance: x.distance,
            via_edge_id: x.via.id,
            via_operation: x.via.operation,
        })
        .collect();
    Ok(Json(TableImpact { table: table_ref(&t, &l), is_partial: r.is_partial, tables, externals }).into_response())
}

#[derive(IntoParams, Deserialize)]
#[into_params(parameter_in = Query)]
pub struct PiiFlowQuery {
    /// A qualified table name (`database.schema.table`, or a unique suffix),
    /// `datastore:database.schema.table`, an OpenLineage `namespace/name`, or its id.
    table: Option<String>,
    /// With `table`: the OpenLineage namespace its name is in (the dataset as the pair).
    namespace: Option<String>,
    /// The table by id, instead of `table`.
    container_id: Option<i64>,
    /// A column of that table (case-insensitive).
    column: Option<String>,
    /// The column by id, instead of `table` and `column`.
    field_id: Option<i64>,
    /// `down` (default: where the value goes) or `up` (where it came from).
    #[param(inline)]
    direction: Option<Direction3>,
    #[param(default = 20, minimum = 1, maximum = 20)]
    depth: Option<i64>,
    #[param(default = 10000, minimum = 1, maximum = 100000)]
    limit: Option<i64>,
    /// Follow INDIRECT edges too (filters, joins).
    #[param(default = false)]
    include_indirect: Option<bool>,
    /// Go on past a masking transformation.
    #[param(default = false)]
    through_masking: Option<bool>,
    /// `json` (default), `csv` (one row per edge), `dot` (Graphviz), `graphml` or `mermaid`.
    #[param(inline)]
    format: Option<Format>,
}

impl QueryParams for PiiFlowQuery {
    const SEED: Seed = Seed::Admin;
}

/// A column the value reaches.
#[derive(Serialize, ToSchema, Debug)]
pub struct FlowColumn {
    pub table: Option<String>,
    pub table_id: Option<i64>,
    pub column: Option<String>,
    pub field_id: i64,
    pub distance: i64,
    /// Some step on the way was derived.
    pub derived: bool,
    pub via_edge_id: i64,
}

/// The column named.
#[derive(Serialize, ToSchema, Debug)]
pub struct ColumnRef {
    pub id: i64,
    pub name: String,
}

/// Where a column's value flows, transitively, through column lineage.
#[derive(Serialize, ToSchema, Debug)]
pub struct PiiFlow {
    pub table: TableRef,
    pub column: ColumnRef,
    pub is_partial: bool,
    pub columns: Vec<FlowColumn>,
}

#[utoipa::path(
    get,
    path = "/admin/lineage/pii-flow",
    tag = "lineage by table name",
    params(PiiFlowQuery),
    responses(
        (status = 200, description = "Every (table, column) the column's value flows into; in the `format` asked", content(
            (PiiFlow = "application/json"),
            (String = "text/csv"),
            (String = "text/vnd.graphviz"),
            (String = "application/graphml+xml"),
            (String = "text/vnd.mermaid"),
        )),
        (status = 400, description = "A parameter is missing or invalid (`format` not one of json, csv, dot, graphml, mermaid, ...), or the name is ambiguous (the candidates are named)", body = Detail),
        (status = 401, description = "Missing or invalid token", body = Detail),
        (status = 404, description = "No table has that name, or it has no such column", body = Detail),
    ),
    security(("bearer" = []))
)]
pub async fn pii_flow(
    State(state): State<AppState>,
    RestCaller(caller): RestCaller,
    Query(q): Query<PiiFlowQuery>,
) -> Result<Response, ApiError> {
    let format = q.format.unwrap_or_default();
    let side = one_side(q.direction)?;
    let (depth, limit) = (q.depth.unwrap_or(20), q.limit.unwrap_or(10_000));
    let options = PiiOptions {
        include_indirect: q.include_indirect.unwrap_or(false),
        through_masking: q.through_masking.unwrap_or(false),
    };
    let (t, f) = column(&state, q).await?;
    let r = state.lineage.pii_flow(f.id, depth, side, limit, options).await.map_err(fail)?;
    if format != Format::Json {
        let start = End::Field { id: f.id, container_id: t.id };
        let x = export::of_transitive(&state.lineage, &caller, &start, &r).await.map_err(fail)?;
        return Ok(x.respond(format, "pii-flow"));
    }
    let fields = Want { fields: r.reached.iter().map(|x| x.id).collect(), ..Want::default() }
        .read(&state.lineage)
        .await
        .map_err(fail)?;
    let mut want = Want { containers: fields.fields.values().map(|f| f.container_id).collect(), ..Want::default() };
    want.containers.insert(t.id);
    let l = want.read(&state.lineage).await.map_err(fail)?;
    let columns = r
        .reached
        .into_iter()
        .map(|x| {
            let field = fields.fields.get(&x.id);
            let c = field.and_then(|f| l.containers.get(&f.container_id));
            FlowColumn {
                table: c.map(|c| container_key(c.database.as_deref(), c.schema.as_deref(), &c.name)),
                table_id: field.map(|f| f.container_id),
                column: field.map(|f| f.name.clone()),
                field_id: x.id,
                distance: x.distance,
                derived: x.derived,
                via_edge_id: x.via.id,
            }
        })
        .collect();
    Ok(Json(PiiFlow {
        table: table_ref(&t, &l),
        column: ColumnRef { id: f.id, name: f.name },
        is_partial: r.is_partial,
        columns,
    })
    .into_response())
}
