//! What changed in a lineage between two instants (issue #19, part 2): `lineageDiff` around a
//! container and `fieldLineageDiff` around a field.
//!
//! A diff is two traversals, one as of each instant (`Lineage::at`, so the same reads and the
//! same liveness rule as every as-of answer), compared: the nodes and edges only the later one
//! has appeared, those only the earlier one has were retired, and an edge retired in favour of
//! one between the same ends with another label (source type or operation) is reported once, as
//! relabelled. Each change carries the instant it happened (from the edge's intervals); its
//! evidence (job, run, operation ids, observed time) is the edge's.

use std::collections::{BTreeMap, BTreeSet};

use super::{validate_depth, GraphOptions, Lineage, Start, MAX_DEPTH};
use crate::domain::{self, Direction, Edge, End, Id, Timestamp};
use crate::error::{Error, Result};

/// A node of a diff: a container, a field, or an external asset (`ext:<source_type>:<fqn>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiffNode {
    Container(Id),
    Field(Id),
    External(String),
}

/// An edge that appeared or was retired between the two instants.
#[derive(Debug, Clone)]
pub struct EdgeChange {
    pub edge: Edge,
    /// When it happened: the start (appeared) or end (retired) of the edge's last live interval
    /// that does so between the two instants.
    pub at: Option<Timestamp>,
}

/// An edge retired between the two instants in favour of one between the same ends with another
/// source type or operation.
#[derive(Debug, Clone)]
pub struct Relabel {
    pub before: EdgeChange,
    pub after: EdgeChange,
}

#[derive(Debug, Clone)]
pub struct LineageDiff {
    pub from: Timestamp,
    pub to: Timestamp,
    pub appeared_nodes: Vec<DiffNode>,
    pub retired_nodes: Vec<DiffNode>,
    pub appeared_edges: Vec<EdgeChange>,
    pub retired_edges: Vec<EdgeChange>,
    pub relabelled_edges: Vec<Relabel>,
}

/// What a diff is around.
#[derive(Clone, Copy)]
enum Around {
    Container(Id),
    Field(Id),
}

/// What one traversal saw: its nodes and its edges by id.
#[derive(Default)]
struct Snapshot {
    nodes: BTreeSet<DiffNode>,
    edges: BTreeMap<Id, Edge>,
}

impl Lineage {
    /// The container lineage within `depth` (on `side`, or both) as of `to` (default now),
    /// compared with the same as of `from`.
    pub async fn lineage_diff(
        &self,
        container_id: Id,
        depth: i64,
        side: Option<Direction>,
        from: Timestamp,
        to: Option<Timestamp>,
    ) -> Result<LineageDiff> {
        self.diff(Around::Container(container_id), depth, side, from, to).await
    }

    /// The field lineage within `depth` (on `side`, or both) as of `to` (default now), compared
    /// with the same as of `from`: every field edge read level by level from the field.
    pub async fn field_lineage_diff(
        &self,
        field_id: Id,
        depth: i64,
        side: Option<Direction>,
        from: Timestamp,
        to: Option<Timestamp>,
    ) -> Result<LineageDiff> {
        self.diff(Around::Field(field_id), depth, side, from, to).await
    }

    async fn diff(
        &self,
        around: Around,
        depth: i64,
        side: Option<Direction>,
        from: Timestamp,
        to: Option<Timestamp>,
    ) -> Result<LineageDiff> {
        let depth = validate_depth(depth)?;
        let (from, to) = self.diff_instants(from, to).await?;
        match around {
            Around::Container(id) if self.store.containers_by_ids(&[id]).await?.is_empty() => {
                return Err(super::container_not_found(id))
            }
            Around::Field(id) if self.store.fields_by_ids(&[id]).await?.is_empty() => {
                return Err(super::field_not_found(id))
            }
            _ => {}
        }
        let (before, after) =
            tokio::try_join!(self.snapshot(around, depth, side, from), self.snapshot(around, depth, side, to))?;
        Ok(compare(before, after, from, to))
    }

    /// The lineage around a container (as `lineageGraph` draws it) or a field as of `at`.
    async fn snapshot(&self, around: Around, depth: usize, side: Option<Direction>, at: Timestamp) -> Result<Snapshot> {
        let view = self.at(Some(at)).await?;
        let mut s = Snapshot::default();
        let field_id = match around {
            Around::Container(id) => {
                let g = view.graph_from(Start::Node(id), None, depth, side, GraphOptions::default()).await?;
                s.nodes.extend(g.nodes.iter().map(|n| DiffNode::Container(n.container_id)));
                s.nodes.extend(g.external_nodes.iter().map(|n| DiffNode::External(n.id.clone())));
                s.edges.extend(g.edges.into_iter().chain(g.external_edges).map(|e| (e.id, e)));
                return Ok(s);
            }
            Around::Field(id) => id,
        };
        s.nodes.insert(DiffNode::Field(field_id));
        for direction in [Direction::Upstream, Direction::Downstream] {
            if side.is_some_and(|s| s != direction) {
                continue;
            }
            let mut seen = BTreeSet::from([field_id]);
            let mut frontier = vec![field_id];
            for _ in 0..depth.min(MAX_DEPTH as usize) {
                if frontier.is_empty() {
                    break;
                }
                let mut next = Vec::new();
                for e in view.level_edges(&frontier, direction, true).await? {
                    if let End::Field { id, .. } = super::far_end(&e, direction) {
                        if seen.insert(*id) {
                            next.push(*id);
                            s.nodes.insert(DiffNode::Field(*id));
                        }
                    }
                    s.edges.insert(e.id, e);
                }
                frontier = next;
            }
        }
        Ok(s)
    }

    /// `from` and `to` (default now) checked as `asOf` is, and in order.
    async fn diff_instants(&self, from: Timestamp, to: Option<Timestamp>) -> Result<(Timestamp, Timestamp)> {
        let to = to.unwrap_or_else(domain::now);
        self.check_instant("from", from).await?;
        self.check_instant("to", to).await?;
        if from >= to {
            return Err(Error::BadInput(format!(
                "from must be before to, got from {} and to {}",
                domain::time::rfc3339_micros(&from),
                domain::time::rfc3339_micros(&to)
            )));
        }
        Ok((from, to))
    }
}

/// The changes between two snapshots taken at `from` and `to`.
fn compare(before: Snapshot, after: Snapshot, from: Timestamp, to: Timestamp) -> LineageDiff {
    let between = |t: &Timestamp| from < *t && *t <= to;
    let appeared =
        |e: &Edge| EdgeChange { at: e.intervals.iter().map(|i| i.from).filter(between).max(), edge: e.clone() };
    let retired = |e: &Edge| EdgeChange {
        at: e.intervals.iter().filter_map(|i| i.to).filter(between).max().or(e.retired_at.filter(between)),
        edge: e.clone(),
    };
    let mut appeared_edges: Vec<EdgeChange> =
        after.edges.values().filter(|e| !before.edges.contains_key(&e.id)).map(appeared).collect();
    let mut retired_edges: Vec<EdgeChange> =
        before.edges.values().filter(|e| !after.edges.contains_key(&e.id)).map(retired).collect();
    // A retired edge and an appeared one between the same ends: one edge whose label changed.
    let mut relabelled_edges = Vec::new();
    retired_edges.retain(|old| {
        let ends = (old.edge.source.key(), old.edge.target.key());
        let Some(i) = appeared_edges.iter().position(|new| (new.edge.source.key(), new.edge.target.key()) == ends)
        else {
            return true;
        };
        let new = appeared_edges.remove(i);
        relabelled_edges.push(Relabel { before: old.clone(), after: new });
        false
    });
    LineageDiff {
        from,
        to,
        appeared_nodes: after.nodes.difference(&before.nodes).cloned().collect(),
        retired_nodes: before.nodes.difference(&after.nodes).cloned().collect(),
        appeared_edges,
        retired_edges,
        relabelled_edges,
    }
}
