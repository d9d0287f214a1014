//! The answers about paths and size: `explainLineage`'s paths with the evidence of each hop and
//! `lineageSummary`'s counts. What every traversal says about itself (`isPartial`, the
//! `frontier` it stopped at, the `cycles` it met) is in `types.rs`, since every traversal's
//! answer names it.

use async_graphql::{Context, Enum, InputObject, Object, SimpleObject};

use super::scalars::{dt, odt, DateTime};
use super::shared::edge_evidence;
use super::types::{frontier_out, CycleList, FrontierNode};
use super::{Evidence, GqlResult, LineageEdge, Side};
use crate::domain::{self, Id};
use crate::service::{paths, summary};

/// One end of `explainLineage`: set exactly one of the two.
#[derive(InputObject)]
pub struct EndInput {
    pub container_id: Option<Id>,
    pub field_id: Option<Id>,
}

/// Why `explainLineage` returned no path.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "paths::NoPathReason")]
pub enum NoPathReason {
    /// No path from `from` to `to` of `maxDepth` hops or fewer.
    NoConnection,
    /// The caller has no permission on the datastore of `from` or `to`.
    EndsHidden,
}

/// One hop of a path: the edge, its labels, and the evidence behind it.
pub struct PathHop(pub domain::Edge);

#[Object]
impl PathHop {
    async fn edge(&self) -> LineageEdge {
        LineageEdge(self.0.clone())
    }
    async fn source_type(&self) -> &str {
        &self.0.source_type
    }
    /// What introduced the edge (`CTAS`, `INSERT_INTO`, `run_event`, ...); null for manual edges.
    async fn operation(&self) -> Option<&str> {
        self.0.operation.as_deref()
    }
    /// When the edge was first seen live: the start of its first interval.
    async fn first_observed(&self) -> DateTime {
        dt(self.0.intervals.iter().map(|i| i.from).min().unwrap_or(self.0.created))
    }
    /// When a provider last asserted it.
    async fn last_observed(&self) -> Option<DateTime> {
        odt(self.0.last_asserted_at)
    }
    /// Who or what asserts the edge, with `details`, `sourceRelation`, `job` and `runId` gated as
    /// on `LineageEdge.evidence` (VIEWER on every catalogued end).
    async fn evidence(&self, ctx: &Context<'_>) -> GqlResult<Vec<Evidence>> {
        edge_evidence(ctx, &self.0).await
    }
}

/// One path from `from` to `to`.
pub struct LineagePath(pub Vec<domain::Edge>);

#[Object]
impl LineagePath {
    /// Hops.
    async fn length(&self) -> i64 {
        self.0.len() as i64
    }
    /// The container (or field) ids along the path, `from` first and `to` last.
    async fn node_ids(&self) -> Vec<Id> {
        let id = |end: &domain::End| match end {
            domain::End::Container { id } | domain::End::Field { id, .. } => Some(*id),
            domain::End::External { .. } => None,
        };
        let first = self.0.first().and_then(|e| id(&e.source));
        first.into_iter().chain(self.0.iter().filter_map(|e| id(&e.target))).collect()
    }
    async fn hops(&self) -> Vec<PathHop> {
        self.0.iter().cloned().map(PathHop).collect()
    }
}

#[derive(SimpleObject)]
pub struct LineageExplanation {
    /// Shortest first, then by edge ids; distinct by their edges; never through a node twice.
    pub paths: Vec<LineagePath>,
    /// Why `paths` is empty; null when it is not.
    pub reason: Option<NoPathReason>,
    /// More paths than `maxPaths` exist, or the search budget ran out.
    pub is_partial: bool,
    pub frontier: Vec<FrontierNode>,
    /// The cycles between the two ends, as the ids around each (from its smallest).
    pub cycles: CycleList,
    /// Set when asked `asOf` (see `LineageGraph.asOf`).
    pub as_of: Option<super::AsOf>,
}

impl From<paths::Explanation> for LineageExplanation {
    fn from(x: paths::Explanation) -> Self {
        LineageExplanation {
            is_partial: x.completeness.is_partial,
            frontier: frontier_out(&x.completeness),
            cycles: CycleList(x.completeness.cycles),
            reason: x.reason.map(Into::into),
            paths: x.paths.into_iter().map(LineagePath).collect(),
            as_of: None,
        }
    }
}

#[derive(SimpleObject)]
pub struct SummaryLevel {
    pub side: Side,
    /// Hops from the centre.
    pub distance: i64,
    /// Containers first reached at this distance.
    pub nodes: i64,
    /// Container edges walked into this level.
    pub edges: i64,
    /// Edges to or from external assets walked into this level.
    pub external_edges: i64,
}

/// How big a lineage graph is, without it.
#[derive(SimpleObject)]
pub struct LineageSummary {
    pub levels: Vec<SummaryLevel>,
    /// Containers, the centre included: what `lineageGraph` with the same arguments returns.
    pub nodes: i64,
    /// Container edges walked (an unsided `lineageGraph` adds the edges among its nodes).
    pub edges: i64,
    pub external_edges: i64,
    /// A side stopped at 100,000 nodes before the depth: the counts are a floor.
    pub is_partial: bool,
}

impl From<summary::LineageSummary> for LineageSummary {
    fn from(s: summary::LineageSummary) -> Self {
        LineageSummary {
            levels: s
                .levels
                .into_iter()
                .map(|l| SummaryLevel {
                    side: l.side.into(),
                    distance: l.distance,
                    nodes: l.nodes,
                    edges: l.edges,
                    external_edges: l.external_edges,
                })
                .collect(),
            nodes: s.nodes,
            edges: s.edges,
            external_edges: s.external_edges,
            is_partial: s.is_partial,
        }
    }
}
