//! Why does A feed B: `explain_lineage` finds up to `max_paths` shortest distinct paths from one
//! container (or field) to another, over live container (or field) edges, and says why there is
//! none when there is none.
//!
//! The search reads the graph level by level from both ends at once, always the smaller side
//! (one batched statement per level, as every traversal), so it touches what lies between the
//! two ends rather than everything downstream of the first. Once the levels read from both sides
//! add up to `d`, every path of `d` hops or fewer lies among the edges read; Yen's algorithm
//! then takes the k shortest simple paths from them in memory. Simple: a path never visits a
//! node twice, so a cycle is never walked twice (the cycles met are listed instead). The work is
//! bounded by `SEARCH_BUDGET` nodes; past it the answer is partial, with the frontier it
//! stopped at.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::frontier::{self, Completeness, FrontierEntry, StopReason, Unread};
use super::{validate_depth, Caller, Lineage};
use crate::auth::Permission;
use crate::domain::{Direction, Edge, End, Id, Timestamp};
use crate::error::{Error, Result};

/// At most this many paths per answer.
pub const MAX_PATHS: i64 = 20;
/// The search reads at most this many nodes (both sides together) before it stops.
pub const SEARCH_BUDGET: usize = 50_000;

/// One end of `explain_lineage`: a container or a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEnd {
    Container(Id),
    Field(Id),
}

impl PathEnd {
    /// From an `EndInput`'s two optional ids; `what` names the argument in the error.
    pub fn of(what: &str, container_id: Option<Id>, field_id: Option<Id>) -> Result<PathEnd> {
        match (container_id, field_id) {
            (Some(c), None) => Ok(PathEnd::Container(c)),
            (None, Some(f)) => Ok(PathEnd::Field(f)),
            (Some(_), Some(_)) => {
                Err(Error::BadInput(format!("{what}: set exactly one of containerId and fieldId, not both")))
            }
            (None, None) => Err(Error::BadInput(format!("{what}: set exactly one of containerId and fieldId"))),
        }
    }

    fn id(self) -> Id {
        match self {
            PathEnd::Container(id) | PathEnd::Field(id) => id,
        }
    }

    fn describe(self) -> String {
        match self {
            PathEnd::Container(id) => format!("container {id}"),
            PathEnd::Field(id) => format!("field {id}"),
        }
    }
}

/// Why an explanation holds no path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPathReason {
    /// No path from `from` to `to` of `max_depth` hops or fewer.
    NoConnection,
    /// The caller has no permission at all on the datastore of an end.
    EndsHidden,
}

#[derive(Debug, Clone)]
pub struct Explanation {
    /// Shortest first; each path is its edges, from `from` to `to`.
    pub paths: Vec<Vec<Edge>>,
    /// Set when `paths` is empty.
    pub reason: Option<NoPathReason>,
    pub completeness: Completeness,
}

/// The ids of an edge's two ends when both are catalogued nodes of the kind searched.
fn hop_ends(e: &Edge, over_fields: bool) -> Option<(Id, Id)> {
    match (&e.source, &e.target) {
        (End::Field { id: s, .. }, End::Field { id: t, .. }) if over_fields => Some((*s, *t)),
        (End::Container { id: s }, End::Container { id: t }) if !over_fields => Some((*s, *t)),
        _ => None,
    }
}

impl Lineage {
    /// Up to `max_paths` shortest distinct paths from `from` to `to` within `max_depth` hops.
    pub async fn explain_lineage(
        &self,
        caller: &Caller,
        from: PathEnd,
        to: PathEnd,
        max_paths: i64,
        max_depth: i64,
        as_of: Option<Timestamp>,
    ) -> Result<Explanation> {
        let max_depth = validate_depth(max_depth).map_err(|_| {
            Error::BadInput(format!("maxDepth must be between 1 and {}, got {max_depth}", super::MAX_DEPTH))
        })?;
        if !(1..=MAX_PATHS).contains(&max_paths) {
            return Err(Error::BadInput(format!("maxPaths must be between 1 and {MAX_PATHS}, got {max_paths}")));
        }
        let over_fields = match (from, to) {
            (PathEnd::Container(_), PathEnd::Container(_)) => false,
            (PathEnd::Field(_), PathEnd::Field(_)) => true,
            _ => {
                return Err(Error::BadInput(format!(
                    "from and to must both be containers or both be fields: from is {}, to is {}",
                    from.describe(),
                    to.describe()
                )))
            }
        };
        if from == to {
            return Err(Error::BadInput(format!("from and to are the same {}", from.describe())));
        }
        // As of an instant: the same search over the edges live then (`Lineage::at` checks it).
        let view = self.at(as_of).await?;
        let mut datastores = Vec::new();
        for end in [from, to] {
            datastores.push(match end {
                PathEnd::Container(id) => self.container_datastore(id).await?,
                PathEnd::Field(id) => {
                    let field =
                        self.store.fields_by_ids(&[id]).await?.pop().ok_or_else(|| super::field_not_found(id))?;
                    self.container_datastore(field.container_id).await?
                }
            });
        }
        if !datastores.iter().all(|d| caller.has(*d, Permission::Reporter)) {
            tracing::debug!(from = from.id(), to = to.id(), "explainLineage: an end is hidden from the caller");
            return Ok(Explanation {
                paths: Vec::new(),
                reason: Some(NoPathReason::EndsHidden),
                completeness: Completeness::default(),
            });
        }
        view.search(from.id(), to.id(), max_paths as usize, max_depth, over_fields).await
    }

    /// The live edges one hop `direction` of `ids` between nodes of the kind searched, as they
    /// were at the view's instant when it has one (`level_edges`): the one read of the search.
    async fn hop_edges(&self, ids: &[Id], direction: Direction, over_fields: bool) -> Result<Vec<Edge>> {
        let edges = self.level_edges(ids, direction, over_fields).await?;
        Ok(edges.into_iter().filter(|e| hop_ends(e, over_fields).is_some()).collect())
    }

    async fn search(&self, from: Id, to: Id, k: usize, max_depth: usize, over_fields: bool) -> Result<Explanation> {
        // side 0 walks downstream from `from`, side 1 upstream from `to`.
        let dirs = [Direction::Downstream, Direction::Upstream];
        let mut dist: [HashMap<Id, usize>; 2] = [HashMap::from([(from, 0)]), HashMap::from([(to, 0)])];
        let mut fronts: [Vec<Id>; 2] = [vec![from], vec![to]];
        let mut levels = [0usize; 2];
        let mut edges: BTreeMap<Id, Edge> = BTreeMap::new();
        let mut found = Vec::new();
        let mut over_budget = false;
        let mut enough = false;
        while levels[0] + levels[1] < max_depth && !fronts[0].is_empty() && !fronts[1].is_empty() {
            let side = usize::from(fronts[1].len() < fronts[0].len());
            let dir = dirs[side];
            levels[side] += 1;
            let mut next = Vec::new();
            for e in self.hop_edges(&fronts[side], dir, over_fields).await? {
                if let End::Container { id } | End::Field { id, .. } = super::far_end(&e, dir) {
                    if !dist[side].contains_key(id) {
                        dist[side].insert(*id, levels[side]);
                        next.push(*id);
                    }
                }
                edges.insert(e.id, e);
            }
            fronts[side] = next;
            // Every path of `levels` hops or fewer is among the edges read: once k + 1 of them
            // are found, the first k are the k shortest and a further one exists.
            if dist[0].keys().any(|id| dist[1].contains_key(id)) {
                found = yen(&edges, from, to, k + 1, levels[0] + levels[1], over_fields);
                if found.len() > k {
                    enough = true;
                    break;
                }
            }
            if dist[0].len() + dist[1].len() > SEARCH_BUDGET {
                over_budget = true;
                break;
            }
        }
        if !enough {
            // Past the budget, only paths as long as the levels read are known whole.
            let reach = if over_budget { levels[0] + levels[1] } else { max_depth };
            found = yen(&edges, from, to, k + 1, reach, over_fields);
        }
        let mut entries = Vec::new();
        if over_budget {
            for side in 0..2 {
                let unread = fronts[side]
                    .iter()
                    .map(|&id| Unread { id, distance: levels[side] as i64, reason: StopReason::Budget })
                    .collect();
                let known: Vec<Id> = dist[side].keys().copied().collect();
                let store = self.store.as_ref();
                entries.extend(frontier::count_beyond(store, unread, dirs[side], over_fields, &known).await?);
            }
        }
        let more = found.len() > k;
        if more {
            // At least one more path, of this length, lies past `max_paths`.
            let next_len = found[k].len() as i64;
            entries.push(FrontierEntry {
                id: to,
                side: Direction::Downstream,
                distance: next_len,
                reason: StopReason::Limit,
                beyond: 1,
            });
            found.truncate(k);
        }
        let paths: Vec<Vec<Edge>> =
            found.iter().map(|p| p.iter().filter_map(|id| edges.get(id).cloned()).collect()).collect();
        // The cycles of the part of the graph between the two ends that was read.
        let between = between(&edges, from, to, max_depth, over_fields);
        let cycles = frontier::Cycles::among(between);
        let reason = paths.is_empty().then_some(NoPathReason::NoConnection);
        tracing::debug!(from, to, paths = paths.len(), edges_read = edges.len(), over_budget, "explainLineage");
        Ok(Explanation { paths, reason, completeness: Completeness::new(entries, cycles, over_budget || more) })
    }
}

/// The `(source, target)` pairs of the edges on some walk of at most `max_depth` hops from
/// `from` to `to`: the region a path could use.
fn between(edges: &BTreeMap<Id, Edge>, from: Id, to: Id, max_depth: usize, over_fields: bool) -> Vec<(Id, Id)> {
    let pairs: Vec<(Id, Id)> = edges.values().filter_map(|e| hop_ends(e, over_fields)).collect();
    let df = distances(&pairs, from, false);
    let db = distances(&pairs, to, true);
    pairs
        .into_iter()
        .filter(|(s, t)| match (df.get(s), db.get(t)) {
            (Some(a), Some(b)) => a + 1 + b <= max_depth,
            _ => false,
        })
        .collect()
}

/// Hop counts from `start` along the pairs (against them when `reverse`).
fn distances(pairs: &[(Id, Id)], start: Id, reverse: bool) -> HashMap<Id, usize> {
    let mut adj: HashMap<Id, Vec<Id>> = HashMap::new();
    for &(s, t) in pairs {
        let (a, b) = if reverse { (t, s) } else { (s, t) };
        adj.entry(a).or_default().push(b);
    }
    let mut dist = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        let d = dist[&n];
        for &m in adj.get(&n).into_iter().flatten() {
            if let std::collections::hash_map::Entry::Vacant(v) = dist.entry(m) {
                v.insert(d + 1);
                queue.push_back(m);
            }
        }
    }
    dist
}

/// Yen's k shortest simple paths from `from` to `to` of at most `max_len` hops, as edge-id
/// sequences, shortest first and then by edge ids. Two paths are distinct when their edges
/// differ (parallel edges asserted by different sources make distinct paths).
fn yen(edges: &BTreeMap<Id, Edge>, from: Id, to: Id, k: usize, max_len: usize, over_fields: bool) -> Vec<Vec<Id>> {
    // Adjacency in edge-id order, so every answer is deterministic.
    let mut adj: HashMap<Id, Vec<(Id, Id)>> = HashMap::new();
    for (id, e) in edges {
        if let Some((s, t)) = hop_ends(e, over_fields) {
            if s != t {
                adj.entry(s).or_default().push((*id, t));
            }
        }
    }
    let target_of = |edge: Id| edges.get(&edge).and_then(|e| hop_ends(e, over_fields)).map(|(_, t)| t);
    let nodes_of =
        |path: &[Id]| -> Vec<Id> { std::iter::once(from).chain(path.iter().filter_map(|e| target_of(*e))).collect() };
    let none = (HashSet::new(), HashSet::new());
    let Some(first) = shortest(&adj, from, to, &none, max_len) else { return Vec::new() };
    let mut found: Vec<Vec<Id>> = vec![first];
    let mut candidates: BTreeSet<(usize, Vec<Id>)> = BTreeSet::new();
    while found.len() < k {
        let Some(last) = found.last().cloned() else { break };
        let nodes = nodes_of(&last);
        for i in 0..last.len() {
            let root = &last[..i];
            let banned_edges: HashSet<Id> =
                found.iter().filter(|p| p.len() > i && p[..i] == *root).map(|p| p[i]).collect();
            let banned_nodes: HashSet<Id> = nodes[..i].iter().copied().collect();
            let Some(spur) = shortest(&adj, nodes[i], to, &(banned_nodes, banned_edges), max_len - i) else {
                continue;
            };
            let mut path = root.to_vec();
            path.extend(spur);
            if !found.contains(&path) {
                candidates.insert((path.len(), path));
            }
        }
        let Some((_, next)) = candidates.pop_first() else { break };
        found.push(next);
    }
    found
}

/// A shortest path (breadth-first, edges in id order) avoiding the banned nodes and edges.
fn shortest(
    adj: &HashMap<Id, Vec<(Id, Id)>>,
    from: Id,
    to: Id,
    (banned_nodes, banned_edges): &(HashSet<Id>, HashSet<Id>),
    max_len: usize,
) -> Option<Vec<Id>> {
    let mut parent: HashMap<Id, (Id, Id)> = HashMap::new();
    let mut depth: HashMap<Id, usize> = HashMap::from([(from, 0)]);
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        if n == to {
            let mut path = Vec::new();
            let mut at = to;
            while let Some(&(edge, prev)) = parent.get(&at) {
                path.push(edge);
                at = prev;
            }
            path.reverse();
            return Some(path);
        }
        let d = depth[&n];
        if d >= max_len {
            continue;
        }
        for &(edge, m) in adj.get(&n).into_iter().flatten() {
            if banned_edges.contains(&edge) || banned_nodes.contains(&m) || depth.contains_key(&m) {
                continue;
            }
            depth.insert(m, d + 1);
            parent.insert(m, (edge, n));
            queue.push_back(m);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(id: Id, s: Id, t: Id) -> (Id, Edge) {
        let e = Edge {
            id,
            created: crate::domain::now(),
            source: End::Container { id: s },
            target: End::Container { id: t },
            description: None,
            source_type: "manual".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: None,
            retired_at: None,
            intervals: Vec::new(),
        };
        (id, e)
    }

    #[test]
    fn yen_gives_the_k_shortest_simple_paths_in_order() {
        // 1 → 2 → 5, 1 → 3 → 5, 1 → 3 → 4 → 5, a parallel 1 → 2 (edge 7), and a loop 5 → 1.
        let edges: BTreeMap<Id, Edge> = [
            edge(10, 1, 2),
            edge(11, 2, 5),
            edge(12, 1, 3),
            edge(13, 3, 5),
            edge(14, 3, 4),
            edge(15, 4, 5),
            edge(7, 1, 2),
            edge(16, 5, 1),
        ]
        .into_iter()
        .collect();
        let paths = yen(&edges, 1, 5, 10, 20, false);
        assert_eq!(paths, vec![vec![7, 11], vec![10, 11], vec![12, 13], vec![12, 14, 15]]);
        assert_eq!(yen(&edges, 1, 5, 2, 20, false).len(), 2);
        // Within 2 hops the three-hop path is out of reach.
        assert_eq!(yen(&edges, 1, 5, 10, 2, false).len(), 3);
        assert!(yen(&edges, 5, 4, 10, 1, false).is_empty());
    }
}
