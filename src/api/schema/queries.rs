//! `QueryRoot`: every query field, whole in one object. The SDL lists them in the order they are
//! written here. Each resolver calls one service function, prefetches what the selection will
//! ask of the items it returns, and wraps the result.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_graphql::{Context, Object};

use super::lineage::{GraphNode, ImpactedContainer, ImpactedExternal, LineageNode, Named, PiiField, Shown};
use super::paths::{EndInput, LineageExplanation, LineageSummary};
use super::prefetch::{prefetch_containers, prefetch_edges};
use super::shared::{healths, load_container, load_datastore, load_field};
use super::types::{frontier_out, CycleList};
use super::{
    auth, caller, limited, lineage, loaders, paged, AsOf, ChangePage, Container, ContainerPage, Datastore,
    DatastorePermission, DateTime, EdgePage, ExternalNode, Field, FieldConnections, FieldPage, GqlResult, Impact,
    LineageChange, LineageDiff, LineageEdge, LineageGraph, Me, MetadataAssertion, Page, PiiFlow, SearchHit, SearchKind,
    Side, SqlStatementLineage, StoredEvent, StoredEventPage, Team,
};
use super::{Incident, IncidentPage, Job, JobPage, Run, RunState};
use crate::domain::{self, EdgeFilter, Id};
use crate::error::Error;
use crate::service::{self, PiiOptions};

pub struct QueryRoot;

/// A lineage graph as GraphQL returns it (as of `at` when asked), with what the selection asks
/// of it prefetched.
async fn graph_out(
    ctx: &Context<'_>,
    g: service::LineageGraph,
    at: Option<domain::Timestamp>,
) -> GqlResult<LineageGraph> {
    let look = ctx.look_ahead();
    let node_ids: Vec<Id> = g.nodes.iter().map(|n| n.container_id).collect();
    let wants_nodes = look.field("nodes").exists();
    prefetch_containers(ctx, look.field("nodes"), &node_ids).await?;
    prefetch_edges(ctx, look.field("edges"), &g.edges).await?;
    prefetch_edges(ctx, look.field("externalEdges"), &g.external_edges).await?;
    // The records just prefetched, attached to their nodes (one cache read for all), with the
    // datastores and counts the selection asks for, so that the nodes answer without a loader.
    let nodes = look.field("nodes");
    let l = loaders(ctx);
    let mut records = if wants_nodes && !node_ids.is_empty() {
        l.containers.loader.load_many(node_ids.iter().copied()).await.map_err(Error::from)?
    } else {
        Default::default()
    };
    let datastores = if nodes.field("datastore").exists() {
        let ids = records.values().map(|c| c.datastore_id).collect::<HashSet<_>>();
        Some(l.datastores.loader.load_many(ids).await.map_err(Error::from)?)
    } else {
        None
    };
    let counts = if nodes.field("fieldCount").exists() && !node_ids.is_empty() {
        l.field_counts.loader.load_many(node_ids.iter().copied()).await.map_err(Error::from)?
    } else {
        Default::default()
    };
    Ok(LineageGraph {
        nodes: g
            .nodes
            .into_iter()
            .map(|n| {
                let record = records.remove(&n.container_id).map(Arc::new);
                let datastore = datastores
                    .as_ref()
                    .map(|d| record.as_ref().and_then(|c| d.get(&c.datastore_id)).map(|d| Datastore(d.clone())));
                GraphNode {
                    node_type: "container",
                    id: n.container_id,
                    is_target: n.is_target,
                    has_upstream: n.has_upstream,
                    has_downstream: n.has_downstream,
                    field_count: counts.get(&n.container_id).copied(),
                    record,
                    datastore,
                    as_of: at,
                }
            })
            .collect::<Vec<_>>()
            .into(),
        edges: g.edges.into_iter().map(LineageEdge).collect::<Vec<_>>().into(),
        external_nodes: g
            .external_nodes
            .into_iter()
            .map(|n| ExternalNode {
                node_type: "external",
                id: n.id,
                fqn: n.fqn,
                source_type: n.source_type,
                is_target: n.is_target,
            })
            .collect::<Vec<_>>()
            .into(),
        external_edges: g.external_edges.into_iter().map(LineageEdge).collect::<Vec<_>>().into(),
        as_of: None,
        is_partial: g.completeness.is_partial,
        frontier: frontier_out(&g.completeness),
        cycles: CycleList(g.completeness.cycles),
        jobs: Vec::new(),
        job_edges: Vec::new(),
    })
}

/// `graph_out` with the jobs between the graph's nodes (`includeJobs`, `jobLineageGraph`), as of
/// `at` when asked.
async fn graph_with_jobs(
    ctx: &Context<'_>,
    answer: service::GraphAnswer,
    at: Option<domain::Timestamp>,
) -> GqlResult<LineageGraph> {
    let service::GraphAnswer { graph, jobs: between } = answer;
    // The jobs just read and their latest runs go into the request's caches, so each job's
    // `latestRun` (and the run's check of its job) finds them there instead of waiting out a
    // loader's batching window per kind.
    loaders(ctx).jobs.feed(between.jobs.iter().map(|j| (j.id, j.clone()))).await;
    match at {
        // As of an instant, the walk read the jobs' runs then already (`JobsBetween::latest_runs`).
        Some(t) => {
            let runs = between.latest_runs.as_ref();
            let run_of = |id: Id| runs.and_then(|r| r.get(&id)).cloned();
            super::jobs::feed_latest_runs_at(ctx, between.jobs.iter().map(|j| ((t, j.id), run_of(j.id))));
        }
        None => prefetch_latest_runs(ctx, &between.jobs).await?,
    }
    let (jobs, job_edges) = super::jobs::jobs_out(ctx, between, at).await?;
    Ok(LineageGraph { jobs, job_edges, ..graph_out(ctx, graph, at).await? })
}

/// The graph's jobs' latest runs today, read at once when the selection asks for them.
async fn prefetch_latest_runs(ctx: &Context<'_>, jobs: &[domain::Job]) -> GqlResult<()> {
    if !ctx.look_ahead().field("jobs").field("latestRun").exists() {
        return Ok(());
    }
    let latest: Vec<Id> = jobs.iter().filter_map(|j| j.latest_run_id).collect();
    loaders(ctx).runs.prefetch(latest).await.map_err(Error::from)?;
    Ok(())
}

/// What a record shows from its name alone (`Shown::Named`).
const NAMED: [&str; 4] = ["id", "name", "containerId", "__typename"];

/// Whether the selection asks of its object only what a name read answers.
fn names_only(sel: &async_graphql::Lookahead<'_>) -> bool {
    sel.selection_fields().iter().all(|f| f.selection_set().all(|sub| NAMED.contains(&sub.name())))
}

/// The reached fields' records when the selection asks for them, read in one batch to be
/// attached: only names when the selection asks nothing else of a field (a read of three
/// properties, past the loaders' cache), else the whole records (one cache read for all).
async fn field_records(
    ctx: &Context<'_>,
    sel: async_graphql::Lookahead<'_>,
    ids: &[Id],
) -> GqlResult<Option<HashMap<Id, Shown<Field>>>> {
    if !sel.exists() || ids.is_empty() {
        return Ok(None);
    }
    if names_only(&sel) {
        let names = lineage(ctx).reader().field_names_by_ids(ids).await.map_err(Error::from)?;
        let named = |(container_id, id, name)| {
            (id, Shown::Named(Named { type_name: "Field", id, name, container_id: Some(container_id) }))
        };
        return Ok(Some(names.into_iter().map(named).collect()));
    }
    let l = loaders(ctx);
    l.fields.prefetch(ids.iter().copied()).await.map_err(Error::from)?;
    let records = l.fields.loader.load_many(ids.iter().copied()).await.map_err(Error::from)?;
    Ok(Some(records.into_iter().map(|(id, f)| (id, Shown::Full(Field(f)))).collect()))
}

/// `field_records` for containers: names, or the whole records with what else the selection
/// asks of them prefetched.
async fn container_records(
    ctx: &Context<'_>,
    sel: async_graphql::Lookahead<'_>,
    ids: &[Id],
) -> GqlResult<Option<HashMap<Id, Shown<Container>>>> {
    if !sel.exists() || ids.is_empty() {
        return Ok(None);
    }
    if names_only(&sel) {
        let names = lineage(ctx).reader().container_names_by_ids(ids).await.map_err(Error::from)?;
        let named = |(id, name)| (id, Shown::Named(Named { type_name: "Container", id, name, container_id: None }));
        return Ok(Some(names.into_iter().map(named).collect()));
    }
    prefetch_containers(ctx, sel, ids).await?;
    let records = loaders(ctx).containers.loader.load_many(ids.iter().copied()).await.map_err(Error::from)?;
    Ok(Some(records.into_iter().map(|(id, c)| (id, Shown::Full(Container::today(c)))).collect()))
}

/// An impact answer as GraphQL returns it (as of `at` when asked), with what the selection asks
/// of it prefetched.
async fn impact_out(ctx: &Context<'_>, t: service::Transitive, at: Option<domain::Timestamp>) -> GqlResult<Impact> {
    impact_from(ctx, Vec::new(), t, at).await
}

/// `impact_out` with `roots` first, at distance 0 and reached by no edge (`runImpact`).
async fn impact_from(
    ctx: &Context<'_>,
    roots: Vec<Id>,
    t: service::Transitive,
    at: Option<domain::Timestamp>,
) -> GqlResult<Impact> {
    let look = ctx.look_ahead().field("containers");
    let ids: Vec<Id> = roots.iter().copied().chain(t.reached.iter().map(|r| r.id)).collect();
    let mut healths = match look.field("health").exists() && !ids.is_empty() {
        true => Some(healths(ctx, &ids, at).await?),
        false => None,
    };
    let mut records = container_records(ctx, look.field("container"), &ids).await?;
    let vias: Vec<&domain::Edge> = t.reached.iter().map(|r| &r.via).collect();
    prefetch_edges(ctx, look.field("via"), &vias).await?;
    let external_vias: Vec<&domain::Edge> = t.externals.iter().map(|r| &r.via).collect();
    prefetch_edges(ctx, ctx.look_ahead().field("externals").field("via"), &external_vias).await?;
    Ok(Impact {
        is_partial: t.is_partial,
        frontier: frontier_out(&t.completeness),
        cycles: CycleList(t.completeness.cycles),
        containers: roots
            .into_iter()
            .map(|id| (id, 0, None))
            .chain(t.reached.into_iter().map(|r| (r.id, r.distance, Some(LineageEdge(r.via)))))
            .map(|(id, distance, via)| ImpactedContainer {
                id,
                distance,
                via,
                record: records.as_mut().map(|m| m.remove(&id)),
                health: healths.as_mut().and_then(|h| h.remove(&id)),
                as_of: at,
            })
            .collect::<Vec<_>>()
            .into(),
        externals: t
            .externals
            .into_iter()
            .map(|x| ImpactedExternal {
                external: ExternalNode {
                    node_type: "external",
                    id: x.id,
                    fqn: x.fqn,
                    source_type: x.source_type,
                    is_target: false,
                },
                distance: x.distance,
                via: LineageEdge(x.via),
            })
            .collect(),
        as_of: None,
    })
}

#[Object]
impl QueryRoot {
    /// One edge by id, retired ones too; null when unknown (with `asOf`: when not live then).
    async fn edge(&self, ctx: &Context<'_>, id: Id, as_of: Option<DateTime>) -> GqlResult<Option<LineageEdge>> {
        let edge = lineage(ctx).at(as_of.map(|d| d.0)).await?.edge_by_id(id).await?;
        Ok(edge.map(LineageEdge))
    }

    /// Edges by container, field and source type; with `asOf`, the edges live at that instant
    /// (`includeRetired` is then moot).
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
        as_of: Option<DateTime>,
    ) -> GqlResult<EdgePage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        let filter =
            EdgeFilter { container_id, field_id, source_type, include_retired: include_retired.unwrap_or(false) };
        let p = lineage(ctx).at(as_of.map(|d| d.0)).await?.edges_page(filter, page).await?;
        prefetch_edges(ctx, ctx.look_ahead().field("items"), &p.items).await?;
        Ok(Page::new(p, LineageEdge))
    }

    /// The containers around one within `depth`, with the edges among them; with `asOf`, as the
    /// graph was at that instant (the answer's `asOf` says what could be rebuilt). `maxNodes` keeps
    /// at most that many containers (the centre included), nearest levels first; the rest is cut,
    /// with `isPartial` and the `frontier` saying where. `includeJobs` adds the jobs between the
    /// graph's nodes (`jobs`, `jobEdges`): the dataset -> job -> dataset view.
    #[allow(clippy::too_many_arguments)]
    async fn lineage_graph(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
        as_of: Option<DateTime>,
        max_nodes: Option<i64>,
        #[graphql(default_with = "Some(false)")] include_jobs: Option<bool>,
    ) -> GqlResult<LineageGraph> {
        let at = as_of.map(|d| d.0);
        let options = service::GraphOptions {
            max_nodes: max_nodes.map(service::max_nodes).transpose()?,
            count_frontier: ctx.look_ahead().field("frontier").exists(),
        };
        let include_jobs = include_jobs.unwrap_or(false);
        let root = service::Root::Container(container_id);
        let req = service::GraphRequest {
            side: side.map(Into::into),
            options,
            at,
            jobs: include_jobs,
            ..service::GraphRequest::new(caller(ctx), root, depth.unwrap_or(2))
        };
        let answer = lineage(ctx).graph(&req).await?;
        let out = match include_jobs {
            true => graph_with_jobs(ctx, answer, at).await?,
            false => graph_out(ctx, answer.graph, at).await?,
        };
        Ok(LineageGraph { as_of: AsOf::of(at), ..out })
    }

    /// The lineage graph centred on a job: its inputs and what lies upstream of them, its
    /// outputs and what lies downstream (`side` keeps one), `depth` levels counting the job's
    /// own datasets as the first, with the jobs between them (`jobs`, `jobEdges`); with `asOf`,
    /// as it was at that instant: what the job's latest run then read and wrote, the edges live
    /// then, each job with its run then.
    async fn job_lineage_graph(
        &self,
        ctx: &Context<'_>,
        job_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
        as_of: Option<DateTime>,
    ) -> GqlResult<LineageGraph> {
        let at = as_of.map(|d| d.0);
        let root = service::Root::Job(job_id);
        let req = service::GraphRequest {
            side: side.map(Into::into),
            at,
            ..service::GraphRequest::new(caller(ctx), root, depth.unwrap_or(2))
        };
        let answer = lineage(ctx).graph(&req).await?;
        Ok(LineageGraph { as_of: AsOf::of(at), ..graph_with_jobs(ctx, answer, at).await? })
    }

    /// How big `lineageGraph` with these arguments would be, level by level, without returning
    /// it: the nodes and edges per level, counted on the same walk.
    async fn lineage_summary(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
    ) -> GqlResult<LineageSummary> {
        let s = lineage(ctx).lineage_summary(container_id, depth.unwrap_or(2), side.map(Into::into)).await?;
        Ok(s.into())
    }

    /// Why `from` feeds `to`: up to `maxPaths` shortest distinct paths (both ends containers,
    /// or both fields), each hop with its edge and the evidence behind it. No path is an empty
    /// list with a `reason`, not an error.
    async fn explain_lineage(
        &self,
        ctx: &Context<'_>,
        from: EndInput,
        to: EndInput,
        #[graphql(default_with = "Some(3)")] max_paths: Option<i64>,
        #[graphql(default_with = "Some(20)")] max_depth: Option<i64>,
        as_of: Option<DateTime>,
    ) -> GqlResult<LineageExplanation> {
        let from = service::paths::PathEnd::of("from", from.container_id, from.field_id)?;
        let to = service::paths::PathEnd::of("to", to.container_id, to.field_id)?;
        let at = as_of.map(|d| d.0);
        let x = lineage(ctx)
            .explain_lineage(caller(ctx), from, to, max_paths.unwrap_or(3), max_depth.unwrap_or(20), at)
            .await?;
        let edges: Vec<domain::Edge> = x.paths.iter().flatten().cloned().collect();
        let hops = ctx.look_ahead().field("paths").field("hops");
        prefetch_edges(ctx, hops.field("edge"), &edges).await?;
        if hops.field("evidence").exists() {
            loaders(ctx).evidence.prefetch(edges.iter().map(|e| e.id)).await.map_err(Error::from)?;
        }
        Ok(LineageExplanation { as_of: AsOf::of(at), ..x.into() })
    }

    /// The lineage graph centred on an external asset, by its `ext:<source_type>:<fqn>` id (see
    /// `node`): the containers it feeds or comes from, as `lineageGraph` draws them; the asset
    /// is the external node flagged `isTarget`. NOT_FOUND when no live edge names it.
    async fn external_lineage_graph(
        &self,
        ctx: &Context<'_>,
        id: String,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
    ) -> GqlResult<LineageGraph> {
        let root = service::Root::External(id);
        let req = service::GraphRequest {
            side: side.map(Into::into),
            ..service::GraphRequest::new(caller(ctx), root, depth.unwrap_or(2))
        };
        graph_out(ctx, lineage(ctx).graph(&req).await?.graph, None).await
    }

    /// The node an OpenLineage dataset identity denotes: its container when catalogued (the
    /// datastores listing the namespace, matched by the naming conventions), else the external
    /// asset its lineage was recorded under; null when neither.
    async fn node(&self, ctx: &Context<'_>, namespace: String, name: String) -> GqlResult<Option<LineageNode>> {
        Ok(lineage(ctx).dataset_node(&namespace, &name).await?.map(|n| match n {
            Ok(c) => LineageNode::of_container(c.id),
            Err(x) => LineageNode::of_external(x),
        }))
    }

    /// An external asset by its `ext:<source_type>:<fqn>` id; null when no live edge names it.
    async fn external_node(&self, ctx: &Context<'_>, id: String) -> GqlResult<Option<LineageNode>> {
        Ok(lineage(ctx).external_node(&id).await?.map(LineageNode::of_external))
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
        Ok(Page::new(lineage(ctx).container_fields(container_id, name.as_deref(), page).await?, Field))
    }

    async fn field_connections(
        &self,
        ctx: &Context<'_>,
        field_id: Id,
        container_ids: Option<Vec<Id>>,
        as_of: Option<DateTime>,
    ) -> GqlResult<FieldConnections> {
        let at = as_of.map(|d| d.0);
        let (fields, edges, completeness) =
            lineage(ctx).at(at).await?.field_connections_full(field_id, container_ids).await?;
        let l = loaders(ctx);
        l.fields.prefetch(fields.iter().copied()).await.map_err(Error::from)?;
        let loaded = l.fields.loader.load_many(fields.iter().copied()).await.map_err(Error::from)?;
        prefetch_edges(ctx, ctx.look_ahead().field("edges"), &edges).await?;
        Ok(FieldConnections {
            fields: fields.iter().filter_map(|id| loaded.get(id).cloned()).map(Field).collect(),
            edges: edges.into_iter().map(LineageEdge).collect(),
            as_of: AsOf::of(at),
            is_partial: completeness.is_partial,
            frontier: frontier_out(&completeness),
            cycles: CycleList(completeness.cycles),
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
        as_of: Option<DateTime>,
    ) -> GqlResult<Impact> {
        let side = side.unwrap_or(Side::Downstream);
        let at = as_of.map(|d| d.0);
        let t = lineage(ctx)
            .at(at)
            .await?
            .impact(container_id, depth.unwrap_or(20), side.into(), limit.unwrap_or(10000))
            .await?;
        Ok(Impact { as_of: AsOf::of(at), ..impact_out(ctx, t, at).await? })
    }

    /// `impact` from an external asset, by its `ext:<source_type>:<fqn>` id: the containers
    /// it feeds (DOWNSTREAM) or comes from (UPSTREAM), transitively. NOT_FOUND when no live
    /// edge names it.
    #[graphql(complexity = "limited(limit, child_complexity)")]
    async fn external_impact(
        &self,
        ctx: &Context<'_>,
        id: String,
        #[graphql(default_with = "Some(20)")] depth: Option<i64>,
        #[graphql(default_with = "Some(Side::Downstream)")] side: Option<Side>,
        #[graphql(default_with = "Some(10000)")] limit: Option<i64>,
    ) -> GqlResult<Impact> {
        let side = side.unwrap_or(Side::Downstream);
        let t = lineage(ctx).external_impact(&id, depth.unwrap_or(20), side.into(), limit.unwrap_or(10000)).await?;
        impact_out(ctx, t, None).await
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
        as_of: Option<DateTime>,
    ) -> GqlResult<PiiFlow> {
        let at = as_of.map(|d| d.0);
        let t = lineage(ctx)
            .at(at)
            .await?
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
        let ids: Vec<Id> = t.reached.iter().map(|r| r.id).collect();
        let mut records = field_records(ctx, look.field("field"), &ids).await?;
        let vias: Vec<&domain::Edge> = t.reached.iter().map(|r| &r.via).collect();
        prefetch_edges(ctx, look.field("via"), &vias).await?;
        Ok(PiiFlow {
            is_partial: t.is_partial,
            frontier: frontier_out(&t.completeness),
            cycles: CycleList(t.completeness.cycles),
            fields: t
                .reached
                .into_iter()
                .map(|r| PiiField {
                    id: r.id,
                    distance: r.distance,
                    derived: r.derived,
                    via: LineageEdge(r.via),
                    record: records.as_mut().map(|m| m.remove(&r.id)),
                })
                .collect::<Vec<_>>()
                .into(),
            as_of: AsOf::of(at),
        })
    }

    /// What changed around a container between `from` and `to` (default now): the nodes and
    /// edges that appeared or were retired within `depth` (on `side`, or both), and edges
    /// replaced by one with another label; each edge's `evidence` says who asserted it.
    async fn lineage_diff(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
        from: DateTime,
        to: Option<DateTime>,
    ) -> GqlResult<LineageDiff> {
        let l = lineage(ctx);
        let d = l.lineage_diff(container_id, depth.unwrap_or(2), side.map(Into::into), from.0, to.map(|t| t.0)).await?;
        Ok(d.into())
    }

    /// `lineageDiff` at field level: the field edges around a field.
    async fn field_lineage_diff(
        &self,
        ctx: &Context<'_>,
        field_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        side: Option<Side>,
        from: DateTime,
        to: Option<DateTime>,
    ) -> GqlResult<LineageDiff> {
        let l = lineage(ctx);
        let d =
            l.field_lineage_diff(field_id, depth.unwrap_or(2), side.map(Into::into), from.0, to.map(|t| t.0)).await?;
        Ok(d.into())
    }

    async fn datastore(&self, ctx: &Context<'_>, id: Id) -> GqlResult<Option<Datastore>> {
        load_datastore(ctx, id).await
    }

    async fn datastores(&self, ctx: &Context<'_>) -> GqlResult<Vec<Datastore>> {
        let all = lineage(ctx).datastores().await?;
        Ok(all.into_iter().map(Datastore).collect())
    }

    /// A container by `id`, or by `qualifiedName`: `database.schema.name` (case-insensitive; the
    /// matcher's rules, so a unique suffix such as `raw.orders` also finds it),
    /// `datastore:database.schema.name`, an OpenLineage `namespace/name` of a namespace a
    /// datastore lists, or the id as text; in `datastoreId` when given. Null when none matches;
    /// BAD_USER_INPUT naming the candidates (as `datastore:database.schema.name`) when several
    /// match equally well, or when neither or both of `id` and `qualifiedName` are given.
    async fn container(
        &self,
        ctx: &Context<'_>,
        id: Option<Id>,
        qualified_name: Option<String>,
        datastore_id: Option<Id>,
    ) -> GqlResult<Option<Container>> {
        match (id, qualified_name) {
            (Some(id), None) => load_container(ctx, id).await,
            (None, Some(name)) => match lineage(ctx).resolve_table_in("qualifiedName", &name, datastore_id).await {
                Ok(c) => Ok(Some(Container::today(c))),
                Err(Error::NotFound(_)) => Ok(None),
                Err(e) => Err(e.into()),
            },
            _ => Err(Error::BadInput("container: give exactly one of id and qualifiedName".into()).into()),
        }
    }

    /// Containers, fields and external assets (and, once they exist, jobs) whose names contain
    /// `query`, case-insensitive: a container by its name, `database.schema.name`, datastore and
    /// name (`warehouse:shop.raw.orders`) or OpenLineage namespace and name
    /// (`postgres://db:5432/shop.raw.orders`); a field by `table.column`; an external asset by
    /// its fqn. Exact qualified matches first, then prefixes, then substrings; `first` 1 to 100.
    async fn search(
        &self,
        ctx: &Context<'_>,
        query: String,
        kinds: Option<Vec<SearchKind>>,
        #[graphql(default_with = "Some(20)")] first: Option<i64>,
    ) -> GqlResult<Vec<SearchHit>> {
        let kinds: Option<Vec<service::search::SearchKind>> = kinds.map(|k| k.into_iter().map(Into::into).collect());
        let hits = lineage(ctx).search_by_name(caller(ctx), &query, kinds.as_deref(), first.unwrap_or(20)).await?;
        Ok(hits.into_iter().map(SearchHit::from).collect())
    }

    /// Containers by id, in a datastore, and/or whose qualified name `database.schema.name`
    /// contains `name` (case-insensitive: `shop.raw.orders`, `raw.ord` and `orders` all find
    /// `shop.raw.orders`).
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
        let p = lineage(ctx).containers(datastore_id, name.as_deref(), page).await?;
        Ok(Page::new(p, Container::today))
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
        #[graphql(
            desc = "Only events with this outcome: `applied`, `recorded`, `ignored`, `rejected`, `failed` or `pending` (see the README's table of statuses)."
        )]
        status: Option<String>,
        job_namespace: Option<String>,
        job_name: Option<String>,
        run_id: Option<String>,
        since: Option<DateTime>,
        until: Option<DateTime>,
        #[graphql(
            desc = "Only events whose lineage changed nothing for this reason (`ignored` events, and `recorded` ones, which recorded only their run's state): `duplicate`, `late START`, `nothing resolved`, `no lineage`, `already known`."
        )]
        ignored_reason: Option<String>,
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
            ignored_reason,
        };
        let p = lineage(ctx).events(&filter, page).await?;
        Ok(Page::new(p, StoredEvent))
    }

    /// Jobs (from OpenLineage, and SQL statements that name one), ordered by id. `name` is a
    /// case-insensitive substring; `lastRunState` the state of the job's latest run;
    /// `datastoreId` keeps jobs that read or write a container there. Jobs touching datastores
    /// the caller cannot view are listed as restricted placeholders.
    #[graphql(complexity = "paged(size, child_complexity)")]
    #[allow(clippy::too_many_arguments)]
    async fn jobs(
        &self,
        ctx: &Context<'_>,
        namespace: Option<String>,
        name: Option<String>,
        last_run_state: Option<RunState>,
        datastore_id: Option<Id>,
        #[graphql(default_with = "Some(1)")] page: Option<i64>,
        #[graphql(default_with = "Some(50)")] size: Option<i64>,
    ) -> GqlResult<JobPage> {
        let page = service::validate_page(page.unwrap_or(1), size.unwrap_or(50))?;
        let filter = lineage(ctx).job_filter(namespace, name, last_run_state.map(Into::into), datastore_id).await?;
        let p = lineage(ctx).jobs(caller(ctx), filter, page).await?;
        Ok(Page::new(p, Job))
    }

    /// One job, by `id` or by `namespace` and `name`: NOT_FOUND when there is none.
    async fn job(
        &self,
        ctx: &Context<'_>,
        id: Option<Id>,
        namespace: Option<String>,
        name: Option<String>,
    ) -> GqlResult<Option<Job>> {
        Ok(Some(Job(lineage(ctx).job(caller(ctx), id, namespace.as_deref(), name.as_deref()).await?)))
    }

    /// One run by its OpenLineage `runId`: NOT_FOUND when there is none.
    async fn run(&self, ctx: &Context<'_>, run_id: String) -> GqlResult<Option<Run>> {
        let (run, restricted) = lineage(ctx).run(caller(ctx), &run_id).await?;
        Ok(Some(Run(service::jobs::RunView { run, restricted })))
    }

    /// What a run wrote (or should have written: its job's outputs when it wrote nothing), at
    /// distance 0, and everything downstream of it, as `impact` answers.
    #[graphql(complexity = "limited(limit, child_complexity)")]
    async fn run_impact(
        &self,
        ctx: &Context<'_>,
        run_id: String,
        #[graphql(default_with = "Some(20)")] depth: Option<i64>,
        #[graphql(default_with = "Some(10000)")] limit: Option<i64>,
    ) -> GqlResult<Impact> {
        let (roots, t) =
            lineage(ctx).run_impact(caller(ctx), &run_id, depth.unwrap_or(20), limit.unwrap_or(10000)).await?;
        impact_from(ctx, roots, t, None).await
    }

    /// The runs that failed or aborted (ended between `since` and `until`) and are still their
    /// job's latest run, newest first, each with its job, error and what it left stale. Page
    /// on with `endCursor` as `after`.
    #[graphql(complexity = "paged(first, child_complexity)")]
    async fn incidents(
        &self,
        ctx: &Context<'_>,
        since: Option<DateTime>,
        until: Option<DateTime>,
        #[graphql(default_with = "Some(50)")] first: Option<i64>,
        after: Option<String>,
    ) -> GqlResult<IncidentPage> {
        let p = lineage(ctx)
            .incidents(caller(ctx), since.map(|d| d.0), until.map(|d| d.0), first.unwrap_or(50), after.as_deref())
            .await?;
        Ok(IncidentPage {
            items: p.items.into_iter().map(Incident).collect(),
            end_cursor: p.end_cursor,
            has_more: p.has_more,
        })
    }

    /// The store's change log, oldest first: every committed change to lineage (edges asserted,
    /// retired, revived, relabelled, deleted; containers and fields created and dropped), after
    /// the opaque cursor `after` (from the start without it). With `containerId`, only the
    /// changes touching that container. Page on with `endCursor` to catch up after downtime.
    #[graphql(complexity = "paged(first, child_complexity)")]
    async fn changes(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        #[graphql(default_with = "Some(100)")] first: Option<i64>,
        container_id: Option<Id>,
    ) -> GqlResult<ChangePage> {
        let page = lineage(ctx).changes(after.as_deref(), first.unwrap_or(100), container_id).await?;
        let edges: Vec<domain::Edge> = page.items.iter().filter_map(|i| i.edge.clone()).collect();
        prefetch_edges(ctx, ctx.look_ahead().field("items").field("edge"), &edges).await?;
        Ok(ChangePage {
            items: page.items.into_iter().map(LineageChange).collect(),
            end_cursor: page.end_cursor,
            has_more: page.has_more,
        })
    }
}
