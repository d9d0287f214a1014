//! `lineage_summary`: how big a lineage graph would be, level by level, without returning it, so
//! a page can warn before it draws twenty thousand nodes. The same expansion as `lineage_graph`
//! (one statement per level and side), bounded by `MAX_RESULT_LIMIT` nodes per side; nothing is
//! read around the nodes and nothing about them is loaded.

use std::collections::{BTreeMap, HashSet};

use super::{validate_depth, Lineage, Start, MAX_RESULT_LIMIT};
use crate::domain::{Direction, End, Id};
use crate::error::Result;

/// One level of one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryLevel {
    pub side: Direction,
    /// Hops from the centre.
    pub distance: i64,
    /// Containers first reached at this distance.
    pub nodes: i64,
    /// Container edges walked into this level (from the level before).
    pub edges: i64,
    /// Edges to or from external assets walked into this level.
    pub external_edges: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineageSummary {
    pub levels: Vec<SummaryLevel>,
    /// Distinct containers, the centre included: the `nodes` a `lineageGraph` of the same
    /// arguments returns.
    pub nodes: i64,
    /// Distinct container edges walked (an unsided `lineageGraph` also returns the edges among
    /// its nodes that no walk took).
    pub edges: i64,
    pub external_edges: i64,
    /// A side stopped at `MAX_RESULT_LIMIT` nodes before the depth: the counts are a floor.
    pub is_partial: bool,
}

impl Lineage {
    pub async fn lineage_summary(
        &self,
        container_id: Id,
        depth: i64,
        side: Option<Direction>,
    ) -> Result<LineageSummary> {
        let depth = validate_depth(depth)?;
        self.require_container(container_id).await?;
        let start = &Start::Node(container_id);
        let budget = Some(MAX_RESULT_LIMIT as usize);
        let expand = |direction: Direction| async move {
            if side.is_some_and(|s| s != direction) {
                return Ok(None);
            }
            self.expand_containers(start, depth, direction, budget).await.map(|e| Some((direction, e)))
        };
        let (up, down) = tokio::try_join!(expand(Direction::Upstream), expand(Direction::Downstream))?;
        let mut nodes: HashSet<Id> = HashSet::from([container_id]);
        let (mut edges, mut externals) = (HashSet::new(), HashSet::new());
        let mut levels = Vec::new();
        let mut is_partial = false;
        for (side, (dist, path_edges, external_edges, read_below)) in [up, down].into_iter().flatten() {
            is_partial |= read_below < depth;
            // Per distance: (nodes, edges, external edges); an edge belongs to the level after
            // its near end's.
            let mut per: BTreeMap<usize, (i64, i64, i64)> = BTreeMap::new();
            for d in dist.values().filter(|d| **d > 0) {
                per.entry(*d).or_default().0 += 1;
            }
            let level_of = |end: &End| end.container_id().and_then(|c| dist.get(&c)).map_or(1, |d| d + 1);
            for e in &path_edges {
                per.entry(level_of(super::near_end(e, side))).or_default().1 += 1;
            }
            for e in &external_edges {
                per.entry(level_of(super::near_end(e, side))).or_default().2 += 1;
            }
            levels.extend(per.into_iter().filter(|(d, _)| *d <= depth).map(|(d, (n, e, x))| SummaryLevel {
                side,
                distance: d as i64,
                nodes: n,
                edges: e,
                external_edges: x,
            }));
            nodes.extend(dist.keys());
            edges.extend(path_edges.iter().map(|e| e.id));
            externals.extend(external_edges.iter().map(|e| e.id));
        }
        Ok(LineageSummary {
            levels,
            nodes: nodes.len() as i64,
            edges: edges.len() as i64,
            external_edges: externals.len() as i64,
            is_partial,
        })
    }
}
