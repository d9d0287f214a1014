//! The GraphQL schema: output types wrapping domain values, inputs, and the root resolvers.
//! Resolvers read the caller and the loaders from the context, call one service function and
//! map the result; cross-node fields go through the data loaders.

use async_graphql::{
    ComplexObject, Context, EmptySubscription, Enum, InputObject, Json, MaybeUndefined, Object, Schema, SimpleObject,
};

use std::sync::Arc;

use super::loaders::{LoadError, Loaders};
use crate::domain::{
    self, ContainerInput as DomainContainerInput, DatastoreInput as DomainDatastoreInput, Direction, EdgeFilter,
    EdgePatch, End, FieldInput as DomainFieldInput, Id,
};
use crate::error::Error;
use crate::service::{self, Caller, CreateEdge, Lineage, PiiOptions};

pub type TributarySchema = Schema<QueryRoot, MutationRoot, EmptySubscription>;

type GqlResult<T> = async_graphql::Result<T>;

/// Timestamps travel as RFC 3339 in UTC with microseconds and `Z`, as the seeds print them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime(pub crate::domain::Timestamp);

#[async_graphql::Scalar(name = "DateTime")]
impl async_graphql::ScalarType for DateTime {
    fn parse(value: async_graphql::Value) -> async_graphql::InputValueResult<Self> {
        match &value {
            async_graphql::Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
                .map(|t| DateTime(t.with_timezone(&chrono::Utc)))
                .map_err(|e| async_graphql::InputValueError::custom(format!("not an RFC 3339 date-time: {e}"))),
            _ => Err(async_graphql::InputValueError::expected_type(value)),
        }
    }
    fn to_value(&self) -> async_graphql::Value {
        async_graphql::Value::String(self.0.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))
    }
}

fn dt(t: crate::domain::Timestamp) -> DateTime {
    DateTime(t)
}
fn odt(t: Option<crate::domain::Timestamp>) -> Option<DateTime> {
    t.map(DateTime)
}

fn lineage<'a>(ctx: &Context<'a>) -> &'a Lineage {
    ctx.data_unchecked::<Lineage>()
}
fn loaders<'a>(ctx: &Context<'a>) -> &'a Loaders {
    ctx.data_unchecked::<Loaders>()
}
fn caller<'a>(ctx: &Context<'a>) -> &'a Caller {
    ctx.data_unchecked::<Caller>()
}
fn auth<'a>(ctx: &Context<'a>) -> &'a crate::auth::Auth {
    ctx.data_unchecked::<crate::auth::Auth>()
}

#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum Side {
    Upstream,
    Downstream,
}

impl From<Side> for Direction {
    fn from(s: Side) -> Self {
        match s {
            Side::Upstream => Direction::Upstream,
            Side::Downstream => Direction::Downstream,
        }
    }
}

// ---------------------------------------------------------------- outputs

pub struct Datastore(pub domain::Datastore);

#[Object]
impl Datastore {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// The datastore type (`snowflake`, `postgresql`, ...).
    #[graphql(name = "type")]
    async fn kind(&self) -> &str {
        &self.0.kind
    }
    async fn store_type(&self) -> Option<&str> {
        self.0.store_type.as_deref()
    }
    /// OpenLineage namespaces whose datasets resolve to this datastore.
    async fn namespaces(&self) -> &[String] {
        &self.0.namespaces
    }
    async fn enrichment_only(&self) -> bool {
        self.0.enrichment_only
    }
}

pub struct Container(pub domain::Container);

#[Object]
impl Container {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn display_name(&self) -> Option<&str> {
        self.0.display_name.as_deref()
    }
    async fn container_type(&self) -> &str {
        &self.0.container_type
    }
    async fn table_type(&self) -> Option<&str> {
        self.0.table_type.as_deref()
    }
    async fn database(&self) -> Option<&str> {
        self.0.database.as_deref()
    }
    async fn schema(&self) -> Option<&str> {
        self.0.schema.as_deref()
    }
    async fn datastore_id(&self) -> Id {
        self.0.datastore_id
    }
    async fn datastore_name(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(load_datastore(ctx, self.0.datastore_id).await?.map(|d| d.0.name))
    }
    async fn datastore(&self, ctx: &Context<'_>) -> GqlResult<Option<Datastore>> {
        load_datastore(ctx, self.0.datastore_id).await
    }
    async fn field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        field_count(ctx, self.0.id).await
    }
    async fn linked_field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        Ok(stats(ctx, self.0.id).await?.1)
    }
    async fn purpose(&self) -> Option<&str> {
        self.0.purpose.as_deref()
    }
    async fn active_anomaly_count(&self) -> i64 {
        self.0.active_anomaly_count
    }
    /// The container's fields, paged.
    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn fields(
        &self,
        ctx: &Context<'_>,
        name: Option<String>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<FieldPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        Ok(FieldPage::from(lineage(ctx).container_fields(self.0.id, name.as_deref(), page).await?))
    }
}

async fn load_datastore(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Datastore>> {
    Ok(loaders(ctx).datastores.load_one(id).await.map_err(Error::from)?.map(Datastore))
}

async fn load_container(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Container>> {
    Ok(loaders(ctx).containers.load_one(id).await.map_err(Error::from)?.map(Container))
}

async fn load_field(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Field>> {
    Ok(loaders(ctx).fields.load_one(id).await.map_err(Error::from)?.map(Field))
}

async fn field_count(ctx: &Context<'_>, id: Id) -> GqlResult<i64> {
    Ok(loaders(ctx).field_counts.load_one(id).await.map_err(Error::from)?.unwrap_or(0))
}

async fn stats(ctx: &Context<'_>, id: Id) -> GqlResult<(i64, i64)> {
    let s = loaders(ctx).stats.load_one(id).await.map_err(Error::from)?;
    Ok(s.map(|s| (s.field_count, s.linked_field_count)).unwrap_or((0, 0)))
}

pub struct Field(pub domain::Field);

#[Object]
impl Field {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn display_name(&self) -> Option<&str> {
        self.0.display_name.as_deref()
    }
    #[graphql(name = "type")]
    async fn data_type(&self) -> Option<&str> {
        self.0.data_type.as_deref()
    }
    async fn status(&self) -> &str {
        &self.0.status
    }
    async fn latest_profile_id(&self) -> Option<i64> {
        self.0.latest_profile_id
    }
    async fn is_computed_field(&self) -> bool {
        self.0.is_computed_field
    }
    async fn active_anomaly_count(&self) -> i64 {
        self.0.active_anomaly_count
    }
    /// Whether the field has any live field-level edge.
    async fn has_lineage(&self, ctx: &Context<'_>) -> GqlResult<bool> {
        Ok(loaders(ctx).has_lineage.load_one(self.0.id).await.map_err(Error::from)?.unwrap_or(false))
    }
    async fn container_id(&self) -> Id {
        self.0.container_id
    }
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        load_container(ctx, self.0.container_id).await
    }
}

#[derive(SimpleObject)]
pub struct Interval {
    pub from: DateTime,
    pub to: Option<DateTime>,
}

/// Evidence, with `details` and `sourceRelation` only for callers with VIEWER on every
/// managed endpoint of its edge (the bool).
pub struct Evidence(pub domain::Evidence, pub bool);

#[Object]
impl Evidence {
    async fn provider(&self) -> &str {
        &self.0.provider
    }
    async fn evidence_type(&self) -> &str {
        &self.0.evidence_type
    }
    async fn authorship(&self) -> &str {
        &self.0.authorship
    }
    /// Empty without VIEWER on every managed endpoint of the edge.
    async fn source_relation(&self) -> String {
        if !self.1 {
            return String::new();
        }
        self.0.source_relation.clone().unwrap_or_default()
    }
    async fn observed_at(&self) -> Option<DateTime> {
        odt(self.0.observed_at)
    }
    async fn first_observed_operation_id(&self) -> Option<i64> {
        self.0.first_observed_operation_id
    }
    async fn last_observed_operation_id(&self) -> Option<i64> {
        self.0.last_observed_operation_id
    }
    /// Null without VIEWER on every managed endpoint of the edge.
    async fn details(&self) -> Option<Json<serde_json::Value>> {
        if !self.1 {
            return None;
        }
        self.0.details.clone().map(Json)
    }
    async fn retired_at(&self) -> Option<DateTime> {
        odt(self.0.retired_at)
    }
}

pub struct LineageEdge(pub domain::Edge);

/// VIEWER on the datastore of every managed endpoint (containers through the loader, so a
/// page of edges costs one batch); unrestricted admins always see the details.
async fn evidence_visible(ctx: &Context<'_>, edge: &domain::Edge) -> GqlResult<bool> {
    let caller = caller(ctx);
    if caller.unrestricted_admin {
        return Ok(true);
    }
    for end in [&edge.source, &edge.target] {
        let Some(cid) = end.container_id() else { continue };
        match loaders(ctx).containers.load_one(cid).await.map_err(Error::from)? {
            Some(c) if caller.has(c.datastore_id, crate::auth::Permission::Viewer) => {}
            Some(_) => return Ok(false),
            // A deleted container has no datastore left to grant access.
            None => return Ok(false),
        }
    }
    Ok(true)
}

fn container_end(end: &End) -> Option<Id> {
    match end {
        End::Container { id } => Some(*id),
        _ => None,
    }
}
fn field_end(end: &End) -> Option<Id> {
    match end {
        End::Field { id, .. } => Some(*id),
        _ => None,
    }
}

#[Object]
impl LineageEdge {
    async fn id(&self) -> Id {
        self.0.id
    }
    async fn created(&self) -> DateTime {
        dt(self.0.created)
    }
    async fn source_container_id(&self) -> Option<Id> {
        container_end(&self.0.source)
    }
    async fn source_field_id(&self) -> Option<Id> {
        field_end(&self.0.source)
    }
    async fn target_container_id(&self) -> Option<Id> {
        container_end(&self.0.target)
    }
    async fn target_field_id(&self) -> Option<Id> {
        field_end(&self.0.target)
    }
    async fn source_external_fqn(&self) -> Option<&str> {
        self.0.source.external_fqn()
    }
    async fn target_external_fqn(&self) -> Option<&str> {
        self.0.target.external_fqn()
    }
    /// `ext:<source_type>:<fqn>` when the source is an external asset.
    async fn source_node_id(&self) -> Option<String> {
        self.0.source.external_fqn().map(|f| service::external_node_id(&self.0.source_type, f))
    }
    /// `ext:<source_type>:<fqn>` when the target is an external asset.
    async fn target_node_id(&self) -> Option<String> {
        self.0.target.external_fqn().map(|f| service::external_node_id(&self.0.source_type, f))
    }
    async fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }
    async fn source_type(&self) -> &str {
        &self.0.source_type
    }
    /// What introduced the edge (`CTAS`, `INSERT_INTO`, `run_event`, ...); null for manual edges.
    async fn operation(&self) -> Option<&str> {
        self.0.operation.as_deref()
    }
    /// Field edges: the value passed through a transformation rather than a plain copy.
    async fn derived(&self) -> Option<bool> {
        self.0.derived
    }
    /// Field-edge transformations as their source sent them.
    async fn transformations(&self) -> Option<Json<serde_json::Value>> {
        self.0.transformations.clone().map(Json)
    }
    async fn evidence(&self, ctx: &Context<'_>) -> GqlResult<Vec<Evidence>> {
        let ev = loaders(ctx).evidence.load_one(self.0.id).await.map_err(Error::from)?;
        let visible = evidence_visible(ctx, &self.0).await?;
        Ok(ev.unwrap_or_default().into_iter().map(|e| Evidence(e, visible)).collect())
    }
    async fn last_asserted_at(&self) -> Option<DateTime> {
        odt(self.0.last_asserted_at)
    }
    async fn retired_at(&self) -> Option<DateTime> {
        odt(self.0.retired_at)
    }
    /// Every span of time during which the edge was live.
    async fn intervals(&self) -> Vec<Interval> {
        self.0.intervals.iter().map(|i| Interval { from: dt(i.from), to: odt(i.to) }).collect()
    }
    async fn source_container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match container_end(&self.0.source) {
            Some(id) => load_container(ctx, id).await,
            None => Ok(None),
        }
    }
    async fn target_container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match container_end(&self.0.target) {
            Some(id) => load_container(ctx, id).await,
            None => Ok(None),
        }
    }
    async fn source_field(&self, ctx: &Context<'_>) -> GqlResult<Option<Field>> {
        match field_end(&self.0.source) {
            Some(id) => load_field(ctx, id).await,
            None => Ok(None),
        }
    }
    async fn target_field(&self, ctx: &Context<'_>) -> GqlResult<Option<Field>> {
        match field_end(&self.0.target) {
            Some(id) => load_field(ctx, id).await,
            None => Ok(None),
        }
    }
}

macro_rules! page_type {
    ($name:ident, $item:ident, $domain:ty) => {
        #[derive(SimpleObject)]
        pub struct $name {
            pub items: Vec<$item>,
            pub total: i64,
            pub page: i64,
            pub size: i64,
            pub pages: i64,
        }
        impl From<domain::Page<$domain>> for $name {
            fn from(p: domain::Page<$domain>) -> Self {
                let pages = p.pages();
                $name {
                    total: p.total,
                    page: p.page.page,
                    size: p.page.size,
                    pages,
                    items: p.items.into_iter().map($item).collect(),
                }
            }
        }
    };
}

page_type!(EdgePage, LineageEdge, domain::Edge);
page_type!(ContainerPage, Container, domain::Container);
page_type!(FieldPage, Field, domain::Field);

/// A container in a lineage graph, with the seed's node fields and flags.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct GraphNode {
    /// Always `container`.
    pub node_type: &'static str,
    pub id: Id,
    pub is_target: bool,
    /// The container has connections upstream that are not in this response.
    pub has_upstream: bool,
    /// The container has connections downstream that are not in this response.
    pub has_downstream: bool,
    #[graphql(skip)]
    pub record: Option<Arc<domain::Container>>,
}

#[ComplexObject]
impl GraphNode {
    async fn name(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(self.record(ctx).await?.map(|c| c.name.clone()))
    }
    async fn display_name(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(self.record(ctx).await?.and_then(|c| c.display_name.clone()))
    }
    async fn container_type(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(self.record(ctx).await?.map(|c| c.container_type.clone()))
    }
    async fn table_type(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(self.record(ctx).await?.and_then(|c| c.table_type.clone()))
    }
    async fn purpose(&self, ctx: &Context<'_>) -> GqlResult<Option<String>> {
        Ok(self.record(ctx).await?.and_then(|c| c.purpose.clone()))
    }
    async fn active_anomaly_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        Ok(self.record(ctx).await?.map(|c| c.active_anomaly_count).unwrap_or(0))
    }
    async fn datastore(&self, ctx: &Context<'_>) -> GqlResult<Option<Datastore>> {
        match self.record(ctx).await? {
            Some(c) => load_datastore(ctx, c.datastore_id).await,
            None => Ok(None),
        }
    }
    async fn field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        field_count(ctx, self.id).await
    }
    async fn linked_field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        Ok(stats(ctx, self.id).await?.1)
    }
    /// The whole container record.
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        Ok(self.record(ctx).await?.map(|c| Container(c.as_ref().clone())))
    }
}

impl GraphNode {
    /// The container's record: the one attached when the graph was prefetched, else through
    /// the loader (a node's half-dozen fields would otherwise each look it up and clone it).
    async fn record(&self, ctx: &Context<'_>) -> GqlResult<Option<Arc<domain::Container>>> {
        match &self.record {
            Some(c) => Ok(Some(c.clone())),
            None => Ok(load_container(ctx, self.id).await?.map(|c| Arc::new(c.0))),
        }
    }
}

#[derive(SimpleObject)]
pub struct ExternalNode {
    /// Always `external`.
    pub node_type: &'static str,
    /// `ext:<source_type>:<fqn>`.
    pub id: String,
    pub fqn: String,
    pub source_type: String,
}

#[derive(SimpleObject)]
pub struct LineageGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<LineageEdge>,
    pub external_nodes: Vec<ExternalNode>,
    pub external_edges: Vec<LineageEdge>,
}

#[derive(SimpleObject)]
pub struct FieldConnections {
    pub fields: Vec<Field>,
    pub edges: Vec<LineageEdge>,
}

#[derive(SimpleObject)]
#[graphql(complex)]
pub struct ImpactedContainer {
    #[graphql(skip)]
    pub id: Id,
    pub distance: i64,
    /// The edge by which the container was first reached.
    pub via: LineageEdge,
}

#[ComplexObject]
impl ImpactedContainer {
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        load_container(ctx, self.id).await
    }
}

#[derive(SimpleObject)]
pub struct Impact {
    /// The depth or the limit cut the answer: more lies beyond.
    pub is_partial: bool,
    pub containers: Vec<ImpactedContainer>,
}

#[derive(SimpleObject)]
#[graphql(complex)]
pub struct PiiField {
    #[graphql(skip)]
    pub id: Id,
    pub distance: i64,
    /// Some step on the way was derived.
    pub derived: bool,
    pub via: LineageEdge,
}

#[ComplexObject]
impl PiiField {
    async fn field(&self, ctx: &Context<'_>) -> GqlResult<Option<Field>> {
        load_field(ctx, self.id).await
    }
}

#[derive(SimpleObject)]
pub struct PiiFlow {
    pub is_partial: bool,
    pub fields: Vec<PiiField>,
}

// ---------------------------------------------------------------- prefetching

/// Loads, in one batch per kind, what the selection under `path` will ask of these containers.
async fn prefetch_containers(ctx: &Context<'_>, sel: async_graphql::Lookahead<'_>, ids: &[Id]) -> GqlResult<()> {
    if ids.is_empty() || !sel.exists() {
        return Ok(());
    }
    let l = loaders(ctx);
    let wants_count = sel.field("fieldCount").exists();
    let wants_linked = sel.field("linkedFieldCount").exists();
    let wants_datastores = sel.field("datastore").exists() || sel.field("datastoreName").exists();
    // Side by side: on Neo4j each read is a round trip of its own (embedded reads run inline).
    let containers = async {
        l.containers.prefetch(ids.iter().copied()).await?;
        if wants_datastores {
            // From the cache just filled.
            let containers = l.containers.loader.load_many(ids.iter().copied()).await?;
            l.datastores.prefetch(containers.values().map(|c| c.datastore_id)).await?;
        }
        Ok(())
    };
    let stats = async {
        if wants_linked {
            // The full stats carry the counts too: one statement for both fields.
            l.stats.prefetch(ids.iter().copied()).await?;
            let stats = l.stats.loader.load_many(ids.iter().copied()).await?;
            let counts = ids.iter().map(|id| (*id, stats.get(id).map_or(0, |s| s.field_count)));
            l.field_counts.feed(counts).await;
        } else if wants_count {
            l.field_counts.prefetch(ids.iter().copied()).await?;
        }
        Ok(())
    };
    let (containers, stats): (Result<(), LoadError>, Result<(), LoadError>) = tokio::join!(containers, stats);
    containers.and(stats).map_err(Error::from)?;
    Ok(())
}

/// The same for edges: their evidence and the containers and fields at their ends.
async fn prefetch_edges(ctx: &Context<'_>, sel: async_graphql::Lookahead<'_>, edges: &[domain::Edge]) -> GqlResult<()> {
    if edges.is_empty() || !sel.exists() {
        return Ok(());
    }
    let l = loaders(ctx);
    if sel.field("evidence").exists() {
        l.evidence.prefetch(edges.iter().map(|e| e.id)).await.map_err(Error::from)?;
    }
    let ends = || edges.iter().flat_map(|e| [&e.source, &e.target]);
    let source = sel.field("sourceContainer");
    let target = sel.field("targetContainer");
    if source.exists() || target.exists() {
        let ids: Vec<Id> = ends().filter_map(container_end).collect();
        let merged = if source.exists() { source } else { target };
        prefetch_containers(ctx, merged, &ids).await?;
    }
    if sel.field("sourceField").exists() || sel.field("targetField").exists() {
        l.fields.prefetch(ends().filter_map(field_end)).await.map_err(Error::from)?;
    }
    Ok(())
}

/// One source's current value of a container's or field's metadata.
pub struct MetadataAssertion(pub domain::MetadataAssertion, pub bool);

#[Object]
impl MetadataAssertion {
    /// Set when the value belongs to the container.
    async fn container_id(&self) -> Option<Id> {
        self.0.field_id.is_none().then_some(self.0.container_id)
    }
    /// Set when the value belongs to one of its fields.
    async fn field_id(&self) -> Option<Id> {
        self.0.field_id
    }
    /// `description`, `tags`, `owners` or `type`.
    async fn attribute(&self) -> &str {
        &self.0.attribute
    }
    /// `user`, `sync`, `openlineage` or a data catalog's name.
    async fn source(&self) -> &str {
        &self.0.source
    }
    async fn provider(&self) -> &str {
        &self.0.provider
    }
    async fn value(&self) -> Json<serde_json::Value> {
        Json(self.0.value.clone())
    }
    async fn asserted_at(&self) -> DateTime {
        dt(self.0.asserted_at)
    }
    async fn observed_at(&self) -> DateTime {
        dt(self.0.observed_at)
    }
    async fn details(&self) -> Option<Json<serde_json::Value>> {
        self.0.details.clone().map(Json)
    }
    /// Whether this is the value shown: a user's own wins, otherwise the latest asserted.
    async fn effective(&self) -> bool {
        self.1
    }
}

#[derive(SimpleObject)]
pub struct RecordLineageResult {
    /// `ok`.
    pub status: String,
    /// The operation as stored (upper-cased; `EXTERNAL` by default).
    pub operation: String,
    pub edges_created: i64,
    pub edges_asserted: i64,
    /// Sources a replacing operation (CTAS, VIEW) retired.
    pub edges_retired: i64,
    /// Names that matched no catalog container and became external ends.
    pub unresolved: Vec<String>,
}

#[derive(SimpleObject)]
pub struct SqlColumnLineage {
    /// `<table as in targets>.<column>`.
    pub target: String,
    /// `<table>.<column>` of the base tables whose columns appear in the expression.
    pub sources: Vec<String>,
    /// False only for a bare column reference.
    pub derived: bool,
}

#[derive(SimpleObject)]
pub struct SqlStatementLineage {
    pub index: i64,
    /// `CTAS`, `INSERT_INTO`, `MERGE_INTO`, `VIEW`, `UPDATE`, `SELECT`, ... (`UNKNOWN`: did not parse).
    pub operation: String,
    pub targets: Vec<String>,
    pub sources: Vec<String>,
    pub columns: Vec<SqlColumnLineage>,
    pub errors: Vec<String>,
    /// `SELECT *` over tables of unknown columns, ambiguous or unknown column references.
    pub unresolved: Vec<String>,
    /// The statement with every literal replaced by `?` (what is stored as evidence).
    pub masked_sql: String,
    /// An external table's `LOCATION` (or a COPY's stage or file).
    pub external_location: Option<String>,
    /// The stored procedure the statement came from.
    pub procedure: Option<String>,
}

impl From<crate::ingest::sql::StatementLineage> for SqlStatementLineage {
    fn from(s: crate::ingest::sql::StatementLineage) -> Self {
        SqlStatementLineage {
            index: s.index as i64,
            operation: s.operation,
            targets: s.targets,
            sources: s.sources,
            columns: s
                .columns
                .into_iter()
                .map(|c| SqlColumnLineage { target: c.target, sources: c.sources, derived: c.derived })
                .collect(),
            errors: s.errors,
            unresolved: s.unresolved,
            masked_sql: s.masked_sql,
            external_location: s.external_location,
            procedure: s.procedure,
        }
    }
}

#[derive(SimpleObject)]
pub struct SqlIngestReport {
    /// The import operation this call was: its evidence's `lastObservedOperationId` (and
    /// `firstObservedOperationId` where it observed the evidence first).
    pub operation_id: Id,
    pub statements: Vec<SqlStatementLineage>,
    /// Statements recorded (parsed, with a target).
    pub recorded: i64,
    /// Statements that did not parse (each lists its parser error).
    pub failed: i64,
    /// Table names that matched no catalog container and became external ends.
    pub unresolved: Vec<String>,
}

// ---------------------------------------------------------------- identity

#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(name = "Permission")]
pub enum PermissionLevel {
    Reporter,
    Viewer,
    Editor,
}

impl From<PermissionLevel> for crate::auth::Permission {
    fn from(p: PermissionLevel) -> Self {
        match p {
            PermissionLevel::Reporter => crate::auth::Permission::Reporter,
            PermissionLevel::Viewer => crate::auth::Permission::Viewer,
            PermissionLevel::Editor => crate::auth::Permission::Editor,
        }
    }
}

impl From<crate::auth::Permission> for PermissionLevel {
    fn from(p: crate::auth::Permission) -> Self {
        match p {
            crate::auth::Permission::Reporter => PermissionLevel::Reporter,
            crate::auth::Permission::Viewer => PermissionLevel::Viewer,
            crate::auth::Permission::Editor => PermissionLevel::Editor,
        }
    }
}

#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum Role {
    Admin,
    Manager,
    Member,
}

impl From<crate::auth::Role> for Role {
    fn from(r: crate::auth::Role) -> Self {
        match r {
            crate::auth::Role::Admin => Role::Admin,
            crate::auth::Role::Manager => Role::Manager,
            crate::auth::Role::Member => Role::Member,
        }
    }
}

#[derive(SimpleObject, InputObject, Clone)]
#[graphql(input_name = "DatastorePermissionInput")]
pub struct DatastorePermission {
    pub datastore_id: Id,
    pub permission: PermissionLevel,
}

#[derive(SimpleObject)]
pub struct Team {
    pub name: String,
    pub members: Vec<String>,
    pub permissions: Vec<DatastorePermission>,
}

impl From<crate::auth::Team> for Team {
    fn from(t: crate::auth::Team) -> Self {
        Team {
            name: t.name,
            members: t.members,
            permissions: t
                .permissions
                .into_iter()
                .map(|p| DatastorePermission { datastore_id: p.datastore_id, permission: p.permission.into() })
                .collect(),
        }
    }
}

#[derive(InputObject)]
pub struct TeamInput {
    /// The key: an existing team of this name is replaced.
    pub name: String,
    #[graphql(default)]
    pub members: Vec<String>,
    #[graphql(default)]
    pub permissions: Vec<DatastorePermission>,
}

/// The caller's own identity and rights.
#[derive(SimpleObject)]
pub struct Me {
    pub user: String,
    pub role: Role,
    pub unrestricted_admin: bool,
    /// The caller's permission per datastore (empty for an unrestricted admin, who has all).
    pub permissions: Vec<DatastorePermission>,
}

// ---------------------------------------------------------------- OpenLineage

#[derive(SimpleObject)]
pub struct IngestError {
    /// A JSON pointer into the event (empty for the whole event).
    pub location: String,
    pub message: String,
}

#[derive(SimpleObject)]
pub struct IngestEventReport {
    pub index: i64,
    /// The id the event was stored under.
    pub id: Option<Id>,
    /// `applied`, `ignored`, `rejected` or `failed`.
    pub status: String,
    /// `run_event`, `job_event` or `dataset_event`.
    pub event_kind: Option<String>,
    pub errors: Vec<IngestError>,
    pub summary: Json<serde_json::Value>,
}

#[derive(SimpleObject)]
pub struct IngestReport {
    pub received: i64,
    pub applied: i64,
    pub ignored: i64,
    pub rejected: i64,
    pub failed: i64,
    pub events: Vec<IngestEventReport>,
}

impl From<crate::service::openlineage::IngestReport> for IngestReport {
    fn from(r: crate::service::openlineage::IngestReport) -> Self {
        let n = |s: &str| r.count(s) as i64;
        IngestReport {
            received: r.events.len() as i64,
            applied: n("applied"),
            ignored: n("ignored"),
            rejected: n("rejected") + n("denied"),
            failed: n("failed"),
            events: r
                .events
                .iter()
                .map(|e| IngestEventReport {
                    index: e.index as i64,
                    id: e.id,
                    status: super::openlineage::public_status(e.status).to_string(),
                    event_kind: e.kind.map(str::to_string),
                    errors: e
                        .errors
                        .iter()
                        .map(|(l, m)| IngestError { location: l.clone(), message: m.clone() })
                        .collect(),
                    summary: Json(e.summary.clone()),
                })
                .collect(),
        }
    }
}

/// An OpenLineage event as stored, with what became of it.
pub struct StoredEvent(pub domain::StoredEvent);

#[Object]
impl StoredEvent {
    async fn id(&self) -> Id {
        self.0.id
    }
    /// `run_event`, `job_event`, `dataset_event` (or `unknown` when it did not validate).
    async fn kind(&self) -> &str {
        &self.0.kind
    }
    async fn status(&self) -> &str {
        super::openlineage::public_status(&self.0.status)
    }
    async fn errors(&self) -> Json<serde_json::Value> {
        Json(self.0.errors.clone())
    }
    async fn summary(&self) -> Json<serde_json::Value> {
        Json(self.0.summary.clone())
    }
    async fn job_namespace(&self) -> Option<&str> {
        self.0.job_namespace.as_deref()
    }
    async fn job_name(&self) -> Option<&str> {
        self.0.job_name.as_deref()
    }
    async fn run_id(&self) -> Option<&str> {
        self.0.run_id.as_deref()
    }
    async fn event_type(&self) -> Option<&str> {
        self.0.event_type.as_deref()
    }
    async fn event_time(&self) -> Option<DateTime> {
        odt(self.0.event_time)
    }
    async fn received_at(&self) -> DateTime {
        dt(self.0.received_at)
    }
    async fn submitted_by(&self) -> Option<&str> {
        self.0.submitted_by.as_deref()
    }
    /// The event as received, unknown facets included.
    async fn body(&self) -> Json<serde_json::Value> {
        Json(self.0.body.clone())
    }
}

page_type!(StoredEventPage, StoredEvent, domain::StoredEvent);

// ---------------------------------------------------------------- inputs

#[derive(InputObject)]
pub struct DatastoreInput {
    /// The key: an existing datastore of this name is updated.
    pub name: String,
    #[graphql(name = "type")]
    pub kind: String,
    pub store_type: Option<String>,
    #[graphql(default)]
    pub namespaces: Vec<String>,
    #[graphql(default)]
    pub enrichment_only: bool,
}

#[derive(InputObject)]
pub struct FieldInput {
    pub name: String,
    #[graphql(name = "type")]
    pub data_type: Option<String>,
    pub display_name: Option<String>,
    pub status: Option<String>,
    pub latest_profile_id: Option<i64>,
    pub is_computed_field: Option<bool>,
    pub active_anomaly_count: Option<i64>,
}

#[derive(InputObject)]
pub struct ContainerInput {
    pub datastore_id: Id,
    pub name: String,
    pub database: Option<String>,
    pub schema: Option<String>,
    pub container_type: Option<String>,
    pub table_type: Option<String>,
    pub display_name: Option<String>,
    pub purpose: Option<String>,
    pub active_anomaly_count: Option<i64>,
    #[graphql(default)]
    pub fields: Vec<FieldInput>,
    /// Your own description; it wins over any source's (see `metadataAssertions`).
    pub description: Option<String>,
    /// Your own tags; they win over any source's.
    pub tags: Option<Vec<String>>,
    /// Your own owners; they win over any source's.
    pub owners: Option<Vec<String>>,
}

#[derive(InputObject)]
pub struct CreateEdgeInput {
    pub source_container_id: Option<Id>,
    pub source_field_id: Option<Id>,
    pub target_container_id: Option<Id>,
    pub target_field_id: Option<Id>,
    pub description: Option<String>,
    /// `manual` (default), `catalog_import` or `inferred`.
    pub source_type: Option<String>,
}

#[derive(InputObject)]
pub struct UpdateEdgeInput {
    /// Omit to keep, null to clear.
    pub description: MaybeUndefined<String>,
    pub source_type: Option<String>,
}

// ---------------------------------------------------------------- roots

pub struct QueryRoot;

#[Object]
impl QueryRoot {
    /// One edge by id, retired ones too; null when unknown.
    async fn edge(&self, ctx: &Context<'_>, id: Id) -> GqlResult<Option<LineageEdge>> {
        let edges = lineage(ctx).store.edges_by_ids(&[id]).await.map_err(Error::from)?;
        Ok(edges.into_iter().next().map(LineageEdge))
    }

    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn edges(
        &self,
        ctx: &Context<'_>,
        container_id: Option<Id>,
        field_id: Option<Id>,
        source_type: Option<String>,
        #[graphql(default_with = "Some(false)")] include_retired: Option<bool>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<EdgePage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        let filter =
            EdgeFilter { container_id, field_id, source_type, include_retired: include_retired.unwrap_or(false) };
        let p = lineage(ctx).list_edges(filter, page).await?;
        prefetch_edges(ctx, ctx.look_ahead().field("items"), &p.items).await?;
        Ok(EdgePage::from(p))
    }

    async fn lineage_graph(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
    ) -> GqlResult<LineageGraph> {
        let g = lineage(ctx).lineage_graph(container_id, depth.unwrap_or(2), side.map(Into::into)).await?;
        let look = ctx.look_ahead();
        let node_ids: Vec<Id> = g.nodes.iter().map(|n| n.container_id).collect();
        let wants_nodes = look.field("nodes").exists();
        prefetch_containers(ctx, look.field("nodes"), &node_ids).await?;
        prefetch_edges(ctx, look.field("edges"), &g.edges).await?;
        prefetch_edges(ctx, look.field("externalEdges"), &g.external_edges).await?;
        // The records just prefetched, attached to their nodes (one cache read for all).
        let mut records = if wants_nodes && !node_ids.is_empty() {
            loaders(ctx).containers.loader.load_many(node_ids.iter().copied()).await.map_err(Error::from)?
        } else {
            Default::default()
        };
        Ok(LineageGraph {
            nodes: g
                .nodes
                .into_iter()
                .map(|n| GraphNode {
                    node_type: "container",
                    id: n.container_id,
                    is_target: n.is_target,
                    has_upstream: n.has_upstream,
                    has_downstream: n.has_downstream,
                    record: records.remove(&n.container_id).map(Arc::new),
                })
                .collect(),
            edges: g.edges.into_iter().map(LineageEdge).collect(),
            external_nodes: g
                .external_nodes
                .into_iter()
                .map(|n| ExternalNode { node_type: "external", id: n.id, fqn: n.fqn, source_type: n.source_type })
                .collect(),
            external_edges: g.external_edges.into_iter().map(LineageEdge).collect(),
        })
    }

    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn container_fields(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        name: Option<String>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<FieldPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        Ok(FieldPage::from(lineage(ctx).container_fields(container_id, name.as_deref(), page).await?))
    }

    async fn field_connections(
        &self,
        ctx: &Context<'_>,
        field_id: Id,
        container_ids: Option<Vec<Id>>,
    ) -> GqlResult<FieldConnections> {
        let (fields, edges) = lineage(ctx).field_connections(field_id, container_ids).await?;
        let l = loaders(ctx);
        l.fields.prefetch(fields.iter().copied()).await.map_err(Error::from)?;
        let loaded = l.fields.loader.load_many(fields.iter().copied()).await.map_err(Error::from)?;
        prefetch_edges(ctx, ctx.look_ahead().field("edges"), &edges).await?;
        Ok(FieldConnections {
            fields: fields.iter().filter_map(|id| loaded.get(id).cloned()).map(Field).collect(),
            edges: edges.into_iter().map(LineageEdge).collect(),
        })
    }

    /// What a container feeds (DOWNSTREAM) or comes from (UPSTREAM), transitively.
    #[graphql(complexity = "limited(limit, child_complexity)")]
    async fn impact(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        #[graphql(default_with = "Some(20)")] depth: Option<i64>,
        #[graphql(default_with = "Some(Side::Downstream)")] side: Option<Side>,
        #[graphql(default_with = "Some(10000)")] limit: Option<i64>,
    ) -> GqlResult<Impact> {
        let side = side.unwrap_or(Side::Downstream);
        let t = lineage(ctx).impact(container_id, depth.unwrap_or(20), side.into(), limit.unwrap_or(10000)).await?;
        let look = ctx.look_ahead().field("containers");
        let ids: Vec<Id> = t.reached.iter().map(|r| r.id).collect();
        prefetch_containers(ctx, look.field("container"), &ids).await?;
        let vias: Vec<domain::Edge> = t.reached.iter().map(|r| r.via.clone()).collect();
        prefetch_edges(ctx, look.field("via"), &vias).await?;
        Ok(Impact {
            is_partial: t.is_partial,
            containers: t
                .reached
                .into_iter()
                .map(|r| ImpactedContainer { id: r.id, distance: r.distance, via: LineageEdge(r.via) })
                .collect(),
        })
    }

    /// Where a field's value flows (DOWNSTREAM) or comes from (UPSTREAM) through field edges.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "limited(limit, child_complexity)")]
    async fn pii_flow(
        &self,
        ctx: &Context<'_>,
        field_id: Id,
        #[graphql(default_with = "Some(20)")] depth: Option<i64>,
        #[graphql(default_with = "Some(Side::Downstream)")] side: Option<Side>,
        #[graphql(default_with = "Some(10000)")] limit: Option<i64>,
        #[graphql(default_with = "Some(false)")] include_indirect: Option<bool>,
        #[graphql(default_with = "Some(false)")] through_masking: Option<bool>,
    ) -> GqlResult<PiiFlow> {
        let t = lineage(ctx)
            .pii_flow(
                field_id,
                depth.unwrap_or(20),
                side.unwrap_or(Side::Downstream).into(),
                limit.unwrap_or(10000),
                PiiOptions {
                    include_indirect: include_indirect.unwrap_or(false),
                    through_masking: through_masking.unwrap_or(false),
                },
            )
            .await?;
        let look = ctx.look_ahead().field("fields");
        if look.field("field").exists() {
            loaders(ctx).fields.prefetch(t.reached.iter().map(|r| r.id)).await.map_err(Error::from)?;
        }
        let vias: Vec<domain::Edge> = t.reached.iter().map(|r| r.via.clone()).collect();
        prefetch_edges(ctx, look.field("via"), &vias).await?;
        Ok(PiiFlow {
            is_partial: t.is_partial,
            fields: t
                .reached
                .into_iter()
                .map(|r| PiiField { id: r.id, distance: r.distance, derived: r.derived, via: LineageEdge(r.via) })
                .collect(),
        })
    }

    async fn datastore(&self, ctx: &Context<'_>, id: Id) -> GqlResult<Option<Datastore>> {
        load_datastore(ctx, id).await
    }

    async fn datastores(&self, ctx: &Context<'_>) -> GqlResult<Vec<Datastore>> {
        let all = lineage(ctx).store.list_datastores().await.map_err(Error::from)?;
        Ok(all.into_iter().map(Datastore).collect())
    }

    async fn container(&self, ctx: &Context<'_>, id: Id) -> GqlResult<Option<Container>> {
        load_container(ctx, id).await
    }

    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn containers(
        &self,
        ctx: &Context<'_>,
        datastore_id: Option<Id>,
        name: Option<String>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<ContainerPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        let p = lineage(ctx).store.list_containers(datastore_id, name.as_deref(), page).await.map_err(Error::from)?;
        Ok(ContainerPage::from(p))
    }

    async fn field(&self, ctx: &Context<'_>, id: Id) -> GqlResult<Option<Field>> {
        load_field(ctx, id).await
    }

    /// Each source's current value of a container's and its fields' description, tags, owners
    /// and types, with the one shown flagged `effective`.
    async fn metadata_assertions(&self, ctx: &Context<'_>, container_id: Id) -> GqlResult<Vec<MetadataAssertion>> {
        let rows = lineage(ctx).metadata_assertions(caller(ctx), container_id).await?;
        Ok(rows.into_iter().map(|(m, e)| MetadataAssertion(m, e)).collect())
    }

    /// What SQL statements mean (tables and columns read and written), recording nothing.
    /// With `datastoreId`, the catalog's fields expand `SELECT *`.
    async fn analyze_sql(
        &self,
        ctx: &Context<'_>,
        statements: Vec<String>,
        dialect: String,
        default_database: Option<String>,
        default_schema: Option<String>,
        datastore_id: Option<Id>,
    ) -> GqlResult<Vec<SqlStatementLineage>> {
        let out =
            lineage(ctx).analyze_sql(statements, &dialect, default_database, default_schema, datastore_id).await?;
        Ok(out.into_iter().map(SqlStatementLineage::from).collect())
    }

    /// Who the token belongs to and what it may do.
    async fn me(&self, ctx: &Context<'_>) -> Me {
        let c = caller(ctx);
        let mut permissions: Vec<DatastorePermission> = c
            .permissions
            .iter()
            .map(|(d, p)| DatastorePermission { datastore_id: *d, permission: (*p).into() })
            .collect();
        permissions.sort_by_key(|p| p.datastore_id);
        Me { user: c.user.clone(), role: c.role.into(), unrestricted_admin: c.unrestricted_admin, permissions }
    }

    /// Teams with their members and per-datastore permissions.
    async fn teams(&self, ctx: &Context<'_>) -> GqlResult<Vec<Team>> {
        Ok(auth(ctx).teams().await?.into_iter().map(Team::from).collect())
    }

    /// Stored OpenLineage events, newest first, with their outcome and errors.
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "paged(size, child_complexity)")]
    async fn open_lineage_events(
        &self,
        ctx: &Context<'_>,
        status: Option<String>,
        job_namespace: Option<String>,
        job_name: Option<String>,
        run_id: Option<String>,
        since: Option<DateTime>,
        until: Option<DateTime>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<StoredEventPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        let filter = domain::EventFilter {
            status,
            job_namespace,
            job_name,
            run_id,
            since: since.map(|d| d.0),
            until: until.map(|d| d.0),
        };
        let p = lineage(ctx).store.list_events(&filter, page).await.map_err(Error::from)?;
        Ok(StoredEventPage::from(p))
    }
}

pub struct MutationRoot;

#[Object]
impl MutationRoot {
    async fn create_edge(&self, ctx: &Context<'_>, input: CreateEdgeInput) -> GqlResult<LineageEdge> {
        let e = lineage(ctx)
            .create_edge(
                caller(ctx),
                CreateEdge {
                    source_container_id: input.source_container_id,
                    source_field_id: input.source_field_id,
                    target_container_id: input.target_container_id,
                    target_field_id: input.target_field_id,
                    description: input.description,
                    source_type: input.source_type,
                },
            )
            .await?;
        Ok(LineageEdge(e))
    }

    async fn update_edge(&self, ctx: &Context<'_>, id: Id, input: UpdateEdgeInput) -> GqlResult<LineageEdge> {
        let description = match input.description {
            MaybeUndefined::Undefined => None,
            MaybeUndefined::Null => Some(None),
            MaybeUndefined::Value(v) => Some(Some(v)),
        };
        let patch = EdgePatch { description, source_type: input.source_type };
        Ok(LineageEdge(lineage(ctx).update_edge(caller(ctx), id, patch).await?))
    }

    /// Provider-maintained edges are retired (kept, `retiredAt` set); others are deleted.
    async fn delete_edge(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_edge(caller(ctx), id).await?)
    }

    async fn upsert_datastore(&self, ctx: &Context<'_>, input: DatastoreInput) -> GqlResult<Datastore> {
        let d = lineage(ctx)
            .upsert_datastore(
                caller(ctx),
                DomainDatastoreInput {
                    name: input.name,
                    kind: input.kind,
                    store_type: input.store_type,
                    namespaces: input.namespaces,
                    enrichment_only: input.enrichment_only,
                },
            )
            .await?;
        Ok(Datastore(d))
    }

    async fn upsert_container(&self, ctx: &Context<'_>, input: ContainerInput) -> GqlResult<Container> {
        let c = lineage(ctx)
            .upsert_container(
                caller(ctx),
                DomainContainerInput {
                    datastore_id: input.datastore_id,
                    name: input.name,
                    database: input.database,
                    schema: input.schema,
                    container_type: input.container_type,
                    table_type: input.table_type,
                    display_name: input.display_name,
                    purpose: input.purpose,
                    active_anomaly_count: input.active_anomaly_count,
                    description: input.description,
                    tags: input.tags,
                    owners: input.owners,
                    fields: input
                        .fields
                        .into_iter()
                        .map(|f| DomainFieldInput {
                            name: f.name,
                            data_type: f.data_type,
                            display_name: f.display_name,
                            status: f.status,
                            latest_profile_id: f.latest_profile_id,
                            is_computed_field: f.is_computed_field,
                            active_anomaly_count: f.active_anomaly_count,
                        })
                        .collect(),
                },
            )
            .await?;
        Ok(Container(c))
    }

    async fn delete_container(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_container(caller(ctx), id).await?)
    }

    async fn delete_field(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_field(caller(ctx), id).await?)
    }

    async fn delete_datastore(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_datastore(caller(ctx), id).await?)
    }

    /// Records an external engine's table lineage (seed 004): CTAS, VIEW and semantic views
    /// replace the target's sources, any other operation adds; `operation` defaults to EXTERNAL.
    async fn record_lineage(
        &self,
        ctx: &Context<'_>,
        target: String,
        #[graphql(default)] sources: Option<Vec<String>>,
        operation: Option<String>,
    ) -> GqlResult<RecordLineageResult> {
        let sources = sources.unwrap_or_default();
        let r = lineage(ctx).record_external(caller(ctx), &target, &sources, operation.as_deref()).await?;
        Ok(RecordLineageResult {
            status: "ok".into(),
            operation: crate::service::external::normalize_operation(operation.as_deref()),
            edges_created: r.summary.edges_created,
            edges_asserted: r.summary.edges_asserted,
            edges_retired: r.summary.edges_retired,
            unresolved: r.unresolved,
        })
    }

    /// Records the lineage SQL statements imply, as edges of the datastore's type (seed 004's
    /// accumulation: CTAS and VIEW replace the target's sources, INSERT and MERGE add).
    async fn ingest_sql(
        &self,
        ctx: &Context<'_>,
        statements: Vec<String>,
        dialect: String,
        datastore_id: Id,
    ) -> GqlResult<SqlIngestReport> {
        let r = lineage(ctx).ingest_sql(caller(ctx), statements, &dialect, datastore_id).await?;
        let failed = r.statements.iter().filter(|s| !s.errors.is_empty()).count() as i64;
        Ok(SqlIngestReport {
            operation_id: r.operation_id,
            statements: r.statements.into_iter().map(SqlStatementLineage::from).collect(),
            recorded: r.recording.recorded as i64,
            failed,
            unresolved: r.recording.unresolved.into_iter().collect(),
        })
    }

    /// Creates or replaces a team: members (user names) and per-datastore permissions. ADMIN only.
    async fn upsert_team(&self, ctx: &Context<'_>, input: TeamInput) -> GqlResult<Team> {
        let team = crate::auth::Team {
            name: input.name,
            members: input.members,
            permissions: input
                .permissions
                .into_iter()
                .map(|p| crate::auth::TeamPermission { datastore_id: p.datastore_id, permission: p.permission.into() })
                .collect(),
        };
        Ok(Team::from(auth(ctx).upsert_team(caller(ctx), team).await?))
    }

    /// Applies OpenLineage events (at most 1,000), as `POST /api/v1/lineage` does.
    async fn ingest_open_lineage(
        &self,
        ctx: &Context<'_>,
        events: Vec<Json<serde_json::Value>>,
    ) -> GqlResult<IngestReport> {
        let limits = crate::ingest::openlineage::Limits::default();
        if events.len() > limits.max_events {
            return Err(Error::BadInput(format!(
                "{} events sent; at most {} are accepted at once",
                events.len(),
                limits.max_events
            ))
            .into());
        }
        let events: Vec<serde_json::Value> = events.into_iter().map(|e| e.0).collect();
        for (i, e) in events.iter().enumerate() {
            crate::ingest::openlineage::check_value(e, &limits).map_err(|err| {
                let m = match err {
                    crate::ingest::openlineage::BodyError::TooLarge(m)
                    | crate::ingest::openlineage::BodyError::BadRequest(m) => m,
                };
                Error::BadInput(format!("events[{i}]: {m}"))
            })?;
        }
        let report = lineage(ctx).ingest_openlineage(caller(ctx), events).await?;
        Ok(IngestReport::from(report))
    }
}

/// Query depth and complexity caps: a crafted query is refused before it touches the store.
/// A list field taking `size` or `limit` weighs that many copies of its selection (`paged`,
/// `limited`), so lists nested at 1,000 weigh billions; the cap leaves room for a page of 1,000
/// items of up to 150 fields each, or `impact` / `piiFlow` at their default limit of 10,000
/// with a selection of up to 15 fields (a smaller `limit` allows more).
pub const MAX_QUERY_DEPTH: usize = 15;
pub const MAX_QUERY_COMPLEXITY: usize = 150_000;

/// The complexity of a paged field: `size` items of its selection. Out-of-range sizes are
/// refused by the resolver; here they only need to weigh something sane.
fn paged(size: Option<i64>, child_complexity: usize) -> usize {
    weigh(size.unwrap_or(50), service::MAX_PAGE_SIZE, child_complexity)
}

/// The complexity of a traversal answering up to `limit` items of its selection.
fn limited(limit: Option<i64>, child_complexity: usize) -> usize {
    weigh(limit.unwrap_or(10_000), service::MAX_RESULT_LIMIT, child_complexity)
}

fn weigh(count: i64, max: i64, child_complexity: usize) -> usize {
    usize::try_from(count.clamp(1, max)).unwrap_or(1).saturating_mul(child_complexity.max(1))
}

pub fn build_schema() -> TributarySchema {
    Schema::build(QueryRoot, MutationRoot, EmptySubscription)
        .limit_depth(MAX_QUERY_DEPTH)
        .limit_complexity(MAX_QUERY_COMPLEXITY)
        .finish()
}
