//! What changed in a lineage between two instants (issue #19, part 2): `lineageDiff` around a
//! container and `fieldLineageDiff` around a field.
//!
//! A diff compares what the lineage was as of each instant: the nodes and edges only the later
//! one has appeared, those only the earlier one has were retired, and an edge retired in favour
//! of one between the same ends with another label (source type or operation) is reported once,
//! as relabelled. Both instants are read by one traversal (issue #45, item 3): each level asks
//! the store once for the edges live at either instant (`Store::container_edges_live_at` with
//! both), and `Edge::live_at` splits them between two walks that each go on from their own
//! frontier; the edges between a container graph's nodes that neither walk read come the same
//! way (`container_edges_within_at`). Each walk gathers what `graph_from` as of its instant
//! draws (the integration test `as_of_graphs_and_diffs_agree_with_the_edges_live_then` holds
//! the two to the same answers), at about the cost of one as-of traversal instead of two. Each change carries the instant it happened (from the edge's intervals); its
//! evidence (job, run, operation ids, observed time) is the edge's.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{validate_depth, Lineage, MAX_DEPTH};
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

/// One instant's walk of `container_snapshots`: what `graph_from`'s two expansions gather.
struct Walk {
    centre: Id,
    /// Distance of each container reached, per side.
    up: HashMap<Id, usize>,
    down: HashMap<Id, usize>,
    /// Container-to-container edges and edges to or from external assets, by id.
    edges: BTreeMap<Id, Edge>,
    externals: BTreeMap<Id, Edge>,
    /// The depth: containers nearer than it had their edges that way read.
    depth: usize,
}

impl Walk {
    fn new(centre: Id) -> Walk {
        Walk {
            centre,
            up: HashMap::new(),
            down: HashMap::new(),
            edges: BTreeMap::new(),
            externals: BTreeMap::new(),
            depth: 0,
        }
    }

    /// One level of `expand_containers` from `frontier` over `found` (the level's edges live at
    /// this walk's instant, of both walks' frontiers): the next frontier.
    fn level<'e>(
        &mut self,
        direction: Direction,
        level: usize,
        depth: usize,
        frontier: &[Id],
        found: impl Iterator<Item = &'e Edge>,
    ) -> Vec<Id> {
        self.depth = depth;
        let dist = match direction {
            Direction::Upstream => &mut self.up,
            Direction::Downstream => &mut self.down,
        };
        dist.entry(self.centre).or_insert(0);
        let near: HashSet<Id> = frontier.iter().copied().collect();
        let mut next = Vec::new();
        for e in found {
            if !matches!(super::near_end(e, direction), End::Container { id } if near.contains(id)) {
                continue;
            }
            if let End::Container { id } = super::far_end(e, direction) {
                if !dist.contains_key(id) {
                    dist.insert(*id, level);
                    next.push(*id);
                }
            }
            match (&e.source, &e.target) {
                (End::External { .. }, _) | (_, End::External { .. }) => {
                    self.externals.insert(e.id, e.clone());
                }
                (End::Container { .. }, End::Container { .. }) => {
                    self.edges.insert(e.id, e.clone());
                }
                _ => {}
            }
        }
        next
    }

    fn nodes(&self) -> BTreeSet<Id> {
        std::iter::once(self.centre).chain(self.up.keys().copied()).chain(self.down.keys().copied()).collect()
    }

    /// `GraphScope::unread` of this walk's graph: (the nodes whose outgoing edges it did not
    /// read, those whose incoming edges it did not read).
    fn unread(&self) -> (HashSet<Id>, HashSet<Id>) {
        let read = |dist: &HashMap<Id, usize>| -> HashSet<Id> {
            dist.iter().filter(|(_, d)| **d < self.depth).map(|(id, _)| *id).collect()
        };
        let (inbound, outbound) = (read(&self.up), read(&self.down));
        let nodes = self.nodes();
        (
            nodes.iter().copied().filter(|id| !outbound.contains(id)).collect(),
            nodes.iter().copied().filter(|id| !inbound.contains(id)).collect(),
        )
    }

    fn snapshot(self) -> Snapshot {
        let mut s = Snapshot::default();
        s.nodes.extend(self.nodes().into_iter().map(DiffNode::Container));
        for e in self.externals.values() {
            for end in [&e.source, &e.target] {
                if let End::External { fqn } = end {
                    s.nodes.insert(DiffNode::External(super::external_node_id(&e.source_type, fqn)));
                }
            }
        }
        s.edges.extend(self.edges.into_iter().chain(self.externals));
        s
    }
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
        let (before, after) = match around {
            Around::Container(id) => self.container_snapshots(id, depth, side, [from, to]).await?,
            Around::Field(id) => self.field_snapshots(id, depth, side, [from, to]).await?,
        };
        Ok(compare(before, after, from, to))
    }

    /// The lineage around a container as `lineageGraph` draws it (its nodes, external nodes,
    /// edges and external edges) as of each instant, by one traversal: each level's edges are
    /// read once, live at either instant, and split by `Edge::live_at` into the two walks, which
    /// then go on from their own frontiers; so are the edges between the nodes that the walks
    /// did not read. The same answers as two `graph_from`s as of each instant.
    async fn container_snapshots(
        &self,
        id: Id,
        depth: usize,
        side: Option<Direction>,
        at: [Timestamp; 2],
    ) -> Result<(Snapshot, Snapshot)> {
        let mut walks = [Walk::new(id), Walk::new(id)];
        for direction in [Direction::Upstream, Direction::Downstream] {
            if side.is_some_and(|s| s != direction) {
                continue;
            }
            let mut frontiers = [vec![id], vec![id]];
            for level in 1..=depth {
                let ids: BTreeSet<Id> = frontiers.iter().flatten().copied().collect();
                if ids.is_empty() {
                    break;
                }
                let ids: Vec<Id> = ids.into_iter().collect();
                let found = self.store.container_edges_live_at(&ids, direction, &at).await?;
                for ((walk, frontier), t) in walks.iter_mut().zip(frontiers.iter_mut()).zip(at) {
                    *frontier = walk.level(direction, level, depth, frontier, found.iter().filter(|e| e.live_at(t)));
                }
            }
        }
        // The edges between the nodes that neither walk read (as `graph_from` reads them for a
        // graph of both sides; one side's graph holds only its paths).
        if side.is_none() {
            let unread = walks.each_ref().map(Walk::unread);
            let (mut sources, mut targets) = (BTreeSet::new(), BTreeSet::new());
            for (s, t) in &unread {
                sources.extend(s);
                targets.extend(t);
            }
            let (sources, targets): (Vec<Id>, Vec<Id>) = (sources.into_iter().collect(), targets.into_iter().collect());
            let within = self.store.container_edges_within_at(&sources, &targets, &at).await?;
            for ((walk, (sources, targets)), t) in walks.iter_mut().zip(&unread).zip(at) {
                let joins = |e: &&Edge| match (&e.source, &e.target) {
                    (End::Container { id: s }, End::Container { id: t }) => sources.contains(s) && targets.contains(t),
                    _ => false,
                };
                walk.edges.extend(within.iter().filter(|e| e.live_at(t)).filter(joins).map(|e| (e.id, e.clone())));
            }
        }
        let [before, after] = walks.map(Walk::snapshot);
        Ok((before, after))
    }

    /// The field lineage around a field as of each instant, by one traversal as
    /// `container_snapshots`: every field edge read level by level from the field.
    async fn field_snapshots(
        &self,
        field_id: Id,
        depth: usize,
        side: Option<Direction>,
        at: [Timestamp; 2],
    ) -> Result<(Snapshot, Snapshot)> {
        let mut snapshots = [Snapshot::default(), Snapshot::default()];
        for s in &mut snapshots {
            s.nodes.insert(DiffNode::Field(field_id));
        }
        for direction in [Direction::Upstream, Direction::Downstream] {
            if side.is_some_and(|s| s != direction) {
                continue;
            }
            let mut seen = [BTreeSet::from([field_id]), BTreeSet::from([field_id])];
            let mut frontiers = [vec![field_id], vec![field_id]];
            for _ in 0..depth.min(MAX_DEPTH as usize) {
                let ids: BTreeSet<Id> = frontiers.iter().flatten().copied().collect();
                if ids.is_empty() {
                    break;
                }
                let ids: Vec<Id> = ids.into_iter().collect();
                let found = self.store.field_edges_live_at(&ids, direction, &at).await?;
                for (((s, seen), frontier), t) in snapshots.iter_mut().zip(&mut seen).zip(&mut frontiers).zip(at) {
                    let near: HashSet<Id> = frontier.drain(..).collect();
                    for e in found.iter().filter(|e| e.live_at(t)) {
                        if !matches!(super::near_end(e, direction), End::Field { id, .. } if near.contains(id)) {
                            continue;
                        }
                        if let End::Field { id, .. } = super::far_end(e, direction) {
                            if seen.insert(*id) {
                                frontier.push(*id);
                                s.nodes.insert(DiffNode::Field(*id));
                            }
                        }
                        s.edges.insert(e.id, e.clone());
                    }
                }
            }
        }
        let [before, after] = snapshots;
        Ok((before, after))
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
