//! Lineage's output types: the resolvers of `LineageEdge` and its `Evidence` (defined in
//! `types.rs`, which other files name them from), `Interval`s, the lineage graph's nodes, field
//! connections, and what `impact` and `piiFlow` reach.

use std::sync::Arc;

use async_graphql::{ComplexObject, Context, Json, Object, SimpleObject};

use super::plain::PlainList;
use super::scalars::{dt, odt, DateTime};
use super::shared::{
    container_end, edge_evidence, field_count, field_end, health_index, healths, load_container, load_datastore,
    load_field, load_jobs, stats,
};
use super::types::{CycleList, FrontierNode};
use super::{Container, Datastore, Evidence, ExternalNode, Field, GqlResult, LineageEdge};
use crate::domain::{self, Id};
use crate::error::Error;
use crate::service;

#[derive(SimpleObject)]
pub struct Interval {
    pub from: DateTime,
    pub to: Option<DateTime>,
}

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
    /// The job that asserted it (`namespace/name`, from `details`); null without VIEWER on
    /// every managed endpoint of the edge.
    async fn job_name(&self) -> Option<String> {
        let job = self.0.details.as_ref().filter(|_| self.1)?.get("job")?;
        Some(format!("{}/{}", job.get("namespace")?.as_str()?, job.get("name")?.as_str()?))
    }
    /// The OpenLineage job that asserted it; null without VIEWER on every managed endpoint of
    /// the edge (as `details`).
    async fn job(&self, ctx: &Context<'_>) -> GqlResult<Option<super::Job>> {
        let Some(job) = self.0.details.as_ref().filter(|_| self.1).and_then(|d| d.get("job")) else { return Ok(None) };
        let (Some(ns), Some(name)) =
            (job.get("namespace").and_then(|v| v.as_str()), job.get("name").and_then(|v| v.as_str()))
        else {
            return Ok(None);
        };
        let key = (ns.to_string(), name.to_string());
        match super::loaders(ctx).jobs_by_name.load_one(key).await.map_err(Error::from)? {
            Some(j) => Ok(load_jobs(ctx, &[j.id]).await?.into_iter().next()),
            None => Ok(None),
        }
    }
    /// The run that last asserted it; null without VIEWER on every managed endpoint of the edge.
    async fn run(&self, ctx: &Context<'_>) -> GqlResult<Option<super::Run>> {
        let Some(run_id) =
            self.0.details.as_ref().filter(|_| self.1).and_then(|d| d.get("runId")).and_then(|v| v.as_str())
        else {
            return Ok(None);
        };
        match super::loaders(ctx).runs_by_run_id.load_one(run_id.to_string()).await.map_err(Error::from)? {
            Some(run) => Ok(Some(super::Run::checked(ctx, run).await?)),
            None => Ok(None),
        }
    }
    /// The run that last asserted it (from `details`); null without VIEWER on every managed
    /// endpoint of the edge.
    async fn run_id(&self) -> Option<&str> {
        self.0.details.as_ref().filter(|_| self.1)?.get("runId")?.as_str()
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
        edge_evidence(ctx, &self.0).await
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

/// A container in a lineage graph: its catalog fields, and whether it has lineage up and down and is the centre.
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
    /// The datastore of `record` (`Some(None)`: it has none left), when the selection asked.
    #[graphql(skip)]
    pub datastore: Option<Option<Datastore>>,
    /// The live field count, when the selection asked.
    #[graphql(skip)]
    pub field_count: Option<i64>,
    /// The instant of an as-of graph: `healthAlert` is the health then.
    #[graphql(skip)]
    pub as_of: Option<domain::Timestamp>,
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
        if let Some(d) = &self.datastore {
            return Ok(d.as_ref().map(|d| Datastore(d.0.clone())));
        }
        match self.record(ctx).await? {
            Some(c) => load_datastore(ctx, c.datastore_id).await,
            None => Ok(None),
        }
    }
    async fn field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        match self.field_count {
            Some(n) => Ok(n),
            None => field_count(ctx, self.id).await,
        }
    }
    async fn linked_field_count(&self, ctx: &Context<'_>) -> GqlResult<i64> {
        Ok(stats(ctx, self.id).await?.1)
    }
    /// The whole container record.
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        Ok(self.record(ctx).await?.map(|c| Container(c.as_ref().clone(), self.as_of)))
    }
    /// FAILED or STALE when a failed run (still its job's latest) left the container so, else
    /// null. Read from the request's health index only, so a whole graph costs one index;
    /// `container { health }` tells FRESH from UNKNOWN and gives the causes.
    async fn health_alert(&self, ctx: &Context<'_>) -> GqlResult<Option<super::HealthState>> {
        let index = health_index(ctx, self.as_of).await?;
        Ok(index.alert(self.id).map(Into::into))
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

/// A node of the lineage graph found by name or id: a catalogued container or an external
/// asset (one that lineage names but the catalog does not hold).
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct LineageNode {
    /// `container` or `external`.
    pub kind: &'static str,
    /// The container's id, when catalogued: what `lineageGraph` and `impact` take.
    pub container_id: Option<Id>,
    /// `ext:<source_type>:<fqn>`, when external: what `externalLineageGraph` and
    /// `externalImpact` take.
    pub external_id: Option<String>,
    /// The external asset's name (an OpenLineage dataset's `namespace/name`).
    pub fqn: Option<String>,
    /// The source type of the external asset's edges.
    pub source_type: Option<String>,
}

impl LineageNode {
    pub fn of_container(id: Id) -> LineageNode {
        LineageNode { kind: "container", container_id: Some(id), external_id: None, fqn: None, source_type: None }
    }
    pub fn of_external(n: service::ExternalNode) -> LineageNode {
        LineageNode {
            kind: "external",
            container_id: None,
            external_id: Some(n.id),
            fqn: Some(n.fqn),
            source_type: Some(n.source_type),
        }
    }
}

#[ComplexObject]
impl LineageNode {
    /// The whole container record, when catalogued.
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match self.container_id {
            Some(id) => load_container(ctx, id).await,
            None => Ok(None),
        }
    }
}

#[derive(SimpleObject)]
pub struct LineageGraph {
    pub nodes: PlainList<GraphNode>,
    pub edges: PlainList<LineageEdge>,
    pub external_nodes: PlainList<ExternalNode>,
    pub external_edges: PlainList<LineageEdge>,
    /// Set when asked `asOf`: the instant, and what could and could not be rebuilt for it.
    pub as_of: Option<super::AsOf>,
    /// The depth or `maxNodes` cut the answer: more lies beyond the `frontier`.
    pub is_partial: bool,
    /// Where the answer stopped with more beyond, nearest first.
    pub frontier: Vec<FrontierNode>,
    /// The cycles among the returned containers, as the ids around each (from its smallest).
    pub cycles: CycleList,
    /// With `includeJobs`: the jobs between the graph's nodes, each with its latest run
    /// (restricted jobs as placeholders, so the graph stays connected).
    pub jobs: Vec<super::Job>,
    /// With `includeJobs`: from each input to its job and from the job to each output.
    pub job_edges: Vec<super::JobEdge>,
}

#[derive(SimpleObject)]
pub struct FieldConnections {
    pub fields: Vec<Field>,
    pub edges: Vec<LineageEdge>,
    /// Set when asked `asOf` (see `LineageGraph.asOf`).
    pub as_of: Option<super::AsOf>,
    /// The closure stopped at its bounds (100 levels, 100,000 fields) with more beyond.
    pub is_partial: bool,
    pub frontier: Vec<FrontierNode>,
    /// The cycles among the connected fields, as the field ids around each.
    pub cycles: CycleList,
}

#[derive(SimpleObject)]
#[graphql(complex)]
pub struct ImpactedContainer {
    #[graphql(skip)]
    pub id: Id,
    pub distance: i64,
    /// The edge by which the container was first reached (null for where `runImpact` starts:
    /// what the run wrote).
    pub via: Option<LineageEdge>,
    /// The container's record (`Some(None)`: none left), when the selection asked for it.
    #[graphql(skip)]
    pub record: Option<Option<Shown<Container>>>,
    /// Its health, when the selection asked for it (computed for the whole answer at once).
    #[graphql(skip)]
    pub health: Option<crate::service::jobs::Health>,
    /// The instant of an as-of answer: `health` is the health then.
    #[graphql(skip)]
    pub as_of: Option<domain::Timestamp>,
}

#[ComplexObject]
impl ImpactedContainer {
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match &self.record {
            Some(Some(Shown::Full(c))) => Ok(Some(Container(c.0.clone(), self.as_of))),
            Some(None) => Ok(None),
            Some(Some(Shown::Named(_))) | None => {
                Ok(load_container(ctx, self.id).await?.map(|c| Container(c.0, self.as_of)))
            }
        }
    }
    /// Whether it is fresh, failed or stale because of a failed run upstream (see `HealthState`).
    async fn health(&self, ctx: &Context<'_>) -> GqlResult<super::ContainerHealth> {
        match &self.health {
            Some(h) => Ok(super::ContainerHealth(h.clone())),
            None => {
                let mut all = healths(ctx, &[self.id], self.as_of).await?;
                let h = all.remove(&self.id).ok_or_else(|| Error::Internal("no health computed".into()))?;
                Ok(super::ContainerHealth(h))
            }
        }
    }
}

/// An asset outside the catalog that the traversal reached (an S3 file, a dataset no
/// datastore lists), with the same distance rule as the containers. The traversal does not
/// go on through it, and `limit` does not count it.
#[derive(SimpleObject)]
pub struct ImpactedExternal {
    /// The asset, as the lineage graph's external nodes (`id` is `ext:<source_type>:<fqn>`).
    pub external: ExternalNode,
    pub distance: i64,
    /// The edge by which the asset was first reached.
    pub via: LineageEdge,
}

#[derive(SimpleObject)]
pub struct Impact {
    /// The depth or the limit cut the answer: more lies beyond.
    pub is_partial: bool,
    pub containers: PlainList<ImpactedContainer>,
    /// The external assets reached, nearest first.
    pub externals: Vec<ImpactedExternal>,
    /// Set when asked `asOf` (see `LineageGraph.asOf`).
    pub as_of: Option<super::AsOf>,
    /// Where the depth or the limit stopped the answer, with how much lies beyond.
    pub frontier: Vec<FrontierNode>,
    /// The cycles among the edges read, as the container ids around each.
    pub cycles: CycleList,
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
    /// The field's record (`Some(None)`: none left), when the selection asked for it.
    #[graphql(skip)]
    pub record: Option<Option<Shown<Field>>>,
}

/// An `impact` or `piiFlow` item's record as read for the answer: the whole record, or only its
/// name when the selection asks nothing else of it (thousands of items: the whole records, through
/// the loaders' cache, were most of a Neo4j `piiFlow`'s GraphQL time). Any other field of a
/// named one is the resolver's, which reads the record.
pub enum Shown<R> {
    Full(R),
    Named(Named),
}

/// What a name read gives (`Store::container_names_by_ids`, `field_names_by_ids`).
pub struct Named {
    /// The GraphQL type it stands for.
    pub type_name: &'static str,
    pub id: Id,
    pub name: String,
    /// A field's container.
    pub container_id: Option<Id>,
}

#[ComplexObject]
impl PiiField {
    async fn field(&self, ctx: &Context<'_>) -> GqlResult<Option<Field>> {
        match &self.record {
            Some(Some(Shown::Full(f))) => Ok(Some(Field(f.0.clone()))),
            Some(None) => Ok(None),
            Some(Some(Shown::Named(_))) | None => load_field(ctx, self.id).await,
        }
    }
}

#[derive(SimpleObject)]
pub struct PiiFlow {
    pub is_partial: bool,
    pub fields: PlainList<PiiField>,
    /// Set when asked `asOf` (see `LineageGraph.asOf`).
    pub as_of: Option<super::AsOf>,
    /// Where the depth or the limit stopped the answer, with how much lies beyond.
    pub frontier: Vec<FrontierNode>,
    /// The cycles among the field edges followed, as the field ids around each.
    pub cycles: CycleList,
}
