//! How complete a traversal's answer is: whether it was cut (`is_partial`), the frontier where it
//! stopped (each node with the reason and how many neighbours lie beyond it), and the cycles it
//! met. Every traversal (`lineage_graph`, `impact`, `pii_flow`, `field_connections`,
//! `explain_lineage`) fills one `Completeness`, so the rules below are written once.
//!
//! Counting what lies beyond a frontier costs at most one batched count statement
//! (`Store::count_neighbours`), never a further level of traversal: where the traversal already
//! read a node's edges, the count comes from what it read.
//!
//! # How it fits
//!
//! Whether an answer is complete, written once for every traversal: `frontier::Completeness` (`is_partial`, the
//! frontier with a `StopReason` and the neighbours beyond each node, the cycles). The counts beyond come from the edges
//! a traversal already read; for the nodes it did not expand, one `Store::count_neighbours` per side (a count on the
//! ends' indexes, no edge read in full). Cycles are the strongly connected parts of what was read (`cycles_among`,
//! iterative Kosaraju), one shortest cycle each, in memory; a traversal keeps only the pairs it read (`Cycles`) and the
//! search runs when an answer selects `cycles` (`api::schema::types::CycleList`), as most never do (it was a tenth of
//! an `impact`); a quick acyclicity check (Kahn's peeling over flat arrays) answers the common case. `apply_budget`
//! cuts a graph's two expansions to `maxNodes`, nearest levels first, and `expand_containers` stops reading levels once
//! a side holds more than the budget, so a budget bounds the work as well as the answer. `paths::explain_lineage` walks
//! level by level from both ends, the smaller frontier first (`hop_edges` is its one read, through `level_edges`, so
//! `asOf` works as for every traversal), until the levels add up to `maxDepth` or `maxPaths + 1` paths are known, then
//! runs Yen's k shortest simple paths over the edges read (simple: a cycle is never walked twice); at most
//! `SEARCH_BUDGET` nodes. `summary::lineage_summary` is `lineage_graph`'s expansion counted per level, with nothing
//! read around the nodes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::{far_end, near_end, Lineage};
use crate::domain::{Direction, Edge, End, Id};
use crate::error::Result;
use crate::store::Store;

/// One side of a lineage graph's expansion: each container's distance, the container edges
/// and external edges read, and the level below which every node's edges that way were read.
pub type Expansion = (HashMap<Id, usize>, Vec<Edge>, Vec<Edge>, usize);

/// Why a traversal stopped at a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopReason {
    /// The node is at the depth asked for.
    Depth,
    /// The answer holds as many items as `limit` (or `maxPaths`) allows.
    Limit,
    /// The work budget (`maxNodes`, or explainLineage's search budget) ran out.
    Budget,
}

/// A node where a traversal stopped with more beyond it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierEntry {
    /// A container id, or a field id for field traversals.
    pub id: Id,
    /// The way the traversal was going when it stopped.
    pub side: Direction,
    /// The node's distance from the start.
    pub distance: i64,
    pub reason: StopReason,
    /// Distinct neighbours that way not in the answer (external assets included).
    pub beyond: i64,
}

/// Whether an answer is complete, where it stopped and which cycles it met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completeness {
    pub is_partial: bool,
    /// Ordered by side, distance and id.
    pub frontier: Vec<FrontierEntry>,
    /// The cycles among what was read, found when asked.
    pub cycles: Cycles,
}

/// The directed `(source, target)` pairs a traversal read, whose cycles are found only when an
/// answer asks for them (`list`): most never do, and the search was 3.4% of a profile of the
/// benchmark's `impact` runs, which do not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cycles(Vec<(Id, Id)>);

impl Cycles {
    pub fn among(pairs: impl IntoIterator<Item = (Id, Id)>) -> Self {
        Cycles(pairs.into_iter().collect())
    }

    /// Each cycle as the ids around it, starting at its smallest id (the edge back to the start
    /// is implied). One shortest cycle per strongly connected part of what was read.
    pub fn list(&self) -> Vec<Vec<Id>> {
        cycles_among(self.0.iter().copied())
    }
}

impl Completeness {
    pub fn new(mut frontier: Vec<FrontierEntry>, cycles: Cycles, cut: bool) -> Self {
        frontier.retain(|f| f.beyond > 0);
        frontier.sort_by_key(|f| (f.side as u8, f.distance, f.id));
        frontier.dedup_by_key(|f| (f.side as u8, f.id));
        Completeness { is_partial: cut || !frontier.is_empty(), frontier, cycles }
    }
}

/// A node the traversal stopped at whose edges that way it did not read: `beyond` is filled by
/// [`count_beyond`].
pub struct Unread {
    pub id: Id,
    pub distance: i64,
    pub reason: StopReason,
}

/// Frontier entries for nodes whose edges that way were not read: one count statement for all
/// (neighbours outside `answer`), entries with nothing beyond are dropped.
pub async fn count_beyond(
    store: &dyn Store,
    unread: Vec<Unread>,
    side: Direction,
    over_fields: bool,
    answer: &[Id],
) -> Result<Vec<FrontierEntry>> {
    if unread.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Id> = unread.iter().map(|u| u.id).collect();
    let counts: HashMap<Id, i64> = store.count_neighbours(&ids, side, over_fields, answer).await?.into_iter().collect();
    Ok(unread
        .into_iter()
        .filter_map(|u| {
            let beyond = counts.get(&u.id).copied().unwrap_or(0);
            (beyond > 0).then_some(FrontierEntry { id: u.id, side, distance: u.distance, reason: u.reason, beyond })
        })
        .collect())
}

/// Frontier entries from edges the traversal read but did not follow: `cut` holds, per near
/// node, the far ends it left out of the answer.
pub fn from_cut(
    cut: &BTreeMap<Id, BTreeSet<Id>>,
    distance: &dyn Fn(Id) -> i64,
    side: Direction,
    reason: StopReason,
) -> Vec<FrontierEntry> {
    cut.iter()
        .map(|(id, far)| FrontierEntry { id: *id, side, distance: distance(*id), reason, beyond: far.len() as i64 })
        .collect()
}

/// Cuts a graph's two expansions to `max_nodes` containers, nearest levels first (ties by id);
/// returns the frontier the cut left (each kept node with the containers it lost, by the edges
/// read) and whether anything was cut. A node on both sides counts once, at its nearer distance.
pub fn apply_budget(
    max_nodes: Option<usize>,
    centre: Option<Id>,
    up: &mut Option<Expansion>,
    down: &mut Option<Expansion>,
) -> (Vec<FrontierEntry>, bool) {
    let Some(budget) = max_nodes else { return (Vec::new(), false) };
    let mut nearest: HashMap<Id, usize> = centre.map(|c| (c, 0)).into_iter().collect();
    for (dist, ..) in [&*up, &*down].into_iter().flatten() {
        for (&id, &d) in dist {
            let e = nearest.entry(id).or_insert(d);
            *e = (*e).min(d);
        }
    }
    if nearest.len() <= budget {
        return (Vec::new(), false);
    }
    let mut order: Vec<(usize, Id)> = nearest.into_iter().map(|(id, d)| (d, id)).collect();
    order.sort_unstable();
    let kept: HashSet<Id> = order.into_iter().take(budget).map(|(_, id)| id).collect();
    let mut entries = Vec::new();
    for (side, exp) in [(Direction::Upstream, up), (Direction::Downstream, down)] {
        let Some((dist, edges, externals, _)) = exp else { continue };
        let mut cut: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
        for e in edges.iter() {
            if let (End::Container { id: near }, End::Container { id: far }) = (near_end(e, side), far_end(e, side)) {
                if kept.contains(near) && !kept.contains(far) {
                    cut.entry(*near).or_default().insert(*far);
                }
            }
        }
        let is_kept = |end: &End| end.container_id().is_none_or(|c| kept.contains(&c));
        edges.retain(|e| is_kept(&e.source) && is_kept(&e.target));
        externals.retain(|e| is_kept(&e.source) && is_kept(&e.target));
        dist.retain(|id, _| kept.contains(id));
        let distance = |id: Id| dist.get(&id).map_or(0, |d| *d as i64);
        entries.extend(from_cut(&cut, &distance, side, StopReason::Budget));
    }
    (entries, true)
}

/// The nodes of one side that the expansion reached but did not expand: at the depth, or at
/// the level where the budget stopped it.
pub fn unread_of(exp: Option<&Expansion>, depth: usize) -> Vec<Unread> {
    let Some((dist, _, _, below)) = exp else { return Vec::new() };
    let reason = if *below >= depth { StopReason::Depth } else { StopReason::Budget };
    dist.iter().filter(|(_, d)| **d == *below).map(|(&id, &d)| Unread { id, distance: d as i64, reason }).collect()
}

impl Lineage {
    /// A lineage graph's completeness: the budget's cuts (their nodes flagged, as they now have
    /// neighbours outside the answer), the unexpanded nodes that have something beyond (by
    /// their flags; counted when `count` asks, one statement per side), and the cycles among
    /// its container edges.
    pub(super) async fn graph_completeness(
        &self,
        (cuts, cut): (Vec<FrontierEntry>, bool),
        unread: [(Direction, Vec<Unread>); 2],
        (has_up, has_down): (&mut HashSet<Id>, &mut HashSet<Id>),
        ids: &[Id],
        edges: &[Edge],
        count: bool,
    ) -> Result<Completeness> {
        for f in &cuts {
            match f.side {
                Direction::Upstream => has_up.insert(f.id),
                Direction::Downstream => has_down.insert(f.id),
            };
        }
        let [(up_side, up), (down_side, down)] = unread;
        let up: Vec<Unread> = up.into_iter().filter(|u| has_up.contains(&u.id)).collect();
        let down: Vec<Unread> = down.into_iter().filter(|u| has_down.contains(&u.id)).collect();
        let flagged = !up.is_empty() || !down.is_empty();
        let mut frontier = cuts;
        if count {
            let store = self.store.as_ref();
            let (up, down) = tokio::try_join!(
                count_beyond(store, up, up_side, false, ids),
                count_beyond(store, down, down_side, false, ids)
            )?;
            frontier.extend(up.into_iter().chain(down));
        }
        let pairs = edges.iter().filter_map(|e| match (&e.source, &e.target) {
            (End::Container { id: s }, End::Container { id: t }) => Some((*s, *t)),
            _ => None,
        });
        Ok(Completeness::new(frontier, Cycles::among(pairs), cut || flagged))
    }
}

/// Whether the directed pairs hold no cycle (a node's edge to itself included): Kahn's
/// peeling of nodes with nothing left coming in reaches every node exactly when there is none.
fn is_acyclic(pairs: &[(Id, Id)]) -> bool {
    let mut index: HashMap<Id, u32> = HashMap::with_capacity(pairs.len() + 1);
    let mut edges = Vec::with_capacity(pairs.len());
    for &(s, t) in pairs {
        if s == t {
            return false;
        }
        let next = index.len() as u32;
        let s = *index.entry(s).or_insert(next);
        let next = index.len() as u32;
        let t = *index.entry(t).or_insert(next);
        edges.push((s, t));
    }
    // Adjacency in compressed rows: the targets of node n are targets[start[n]..start[n + 1]].
    let n = index.len();
    let mut start = vec![0u32; n + 1];
    let mut incoming = vec![0u32; n];
    for &(s, t) in &edges {
        start[s as usize + 1] += 1;
        incoming[t as usize] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut targets = vec![0u32; edges.len()];
    let mut fill = start.clone();
    for &(s, t) in &edges {
        targets[fill[s as usize] as usize] = t;
        fill[s as usize] += 1;
    }
    let mut ready: Vec<u32> = (0..n as u32).filter(|&v| incoming[v as usize] == 0).collect();
    let mut peeled = 0;
    while let Some(v) = ready.pop() {
        peeled += 1;
        for &t in &targets[start[v as usize] as usize..start[v as usize + 1] as usize] {
            incoming[t as usize] -= 1;
            if incoming[t as usize] == 0 {
                ready.push(t);
            }
        }
    }
    peeled == n
}

/// The cycles among directed `(source, target)` pairs: for each strongly connected part with
/// more than one node (or a node with an edge to itself), the shortest cycle through its
/// smallest id, as the ids around it. Sorted; deterministic whatever the order of the pairs.
///
/// Kosaraju's algorithm with explicit stacks (a lineage chain can be thousands deep, too deep to
/// recurse); a few dozen lines did not justify a graph crate for one function.
pub fn cycles_among(pairs: impl IntoIterator<Item = (Id, Id)>) -> Vec<Vec<Id>> {
    let pairs: Vec<(Id, Id)> = pairs.into_iter().collect();
    // Most answers hold no cycle: proving that takes one pass over flat arrays, where the
    // ordered maps below cost a tree insertion per edge (an `impact` answer has thousands).
    if is_acyclic(&pairs) {
        return Vec::new();
    }
    search_cycles(pairs)
}

/// `cycles_among` without the quick check.
fn search_cycles(pairs: Vec<(Id, Id)>) -> Vec<Vec<Id>> {
    let mut out_adj: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
    let mut in_adj: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
    let mut self_loops = BTreeSet::new();
    for (s, t) in pairs {
        if s == t {
            self_loops.insert(s);
            continue;
        }
        out_adj.entry(s).or_default().insert(t);
        in_adj.entry(t).or_default().insert(s);
        out_adj.entry(t).or_default();
        in_adj.entry(s).or_default();
    }
    // First pass: nodes in order of finishing a depth-first walk.
    let mut order = Vec::with_capacity(out_adj.len());
    let mut visited = HashSet::new();
    for &root in out_adj.keys() {
        if !visited.insert(root) {
            continue;
        }
        let mut stack = vec![(root, out_adj[&root].iter())];
        while let Some((node, next)) = stack.last_mut() {
            match next.find(|n| !visited.contains(*n)) {
                Some(&n) => {
                    visited.insert(n);
                    stack.push((n, out_adj[&n].iter()));
                }
                None => {
                    order.push(*node);
                    stack.pop();
                }
            }
        }
    }
    // Second pass: walk the reversed graph in reverse finishing order; each walk is one part.
    let mut part_of: HashMap<Id, usize> = HashMap::new();
    let mut parts: Vec<Vec<Id>> = Vec::new();
    for &root in order.iter().rev() {
        if part_of.contains_key(&root) {
            continue;
        }
        let index = parts.len();
        let mut members = vec![root];
        part_of.insert(root, index);
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            for &prev in &in_adj[&node] {
                if let std::collections::hash_map::Entry::Vacant(v) = part_of.entry(prev) {
                    v.insert(index);
                    members.push(prev);
                    stack.push(prev);
                }
            }
        }
        parts.push(members);
    }
    let mut cycles: Vec<Vec<Id>> = self_loops.into_iter().map(|id| vec![id]).collect();
    for (index, members) in parts.iter().enumerate() {
        if members.len() < 2 {
            continue;
        }
        let Some(&start) = members.iter().min() else { continue };
        // Breadth-first inside the part from its smallest id back to it: the shortest cycle.
        let mut parent: HashMap<Id, Id> = HashMap::new();
        let mut queue = VecDeque::from([start]);
        let mut last = None;
        'walk: while let Some(node) = queue.pop_front() {
            for &n in &out_adj[&node] {
                if part_of.get(&n) != Some(&index) {
                    continue;
                }
                if n == start {
                    last = Some(node);
                    break 'walk;
                }
                if let std::collections::hash_map::Entry::Vacant(v) = parent.entry(n) {
                    v.insert(node);
                    queue.push_back(n);
                }
            }
        }
        let mut cycle = Vec::new();
        let mut at = last;
        while let Some(node) = at {
            cycle.push(node);
            at = if node == start { None } else { parent.get(&node).copied() };
        }
        cycle.reverse();
        cycles.push(cycle);
    }
    cycles.sort();
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_found_once_each_from_their_smallest_id() {
        // 1 → 2 → 3 → 1 and 3 → 4 → 5 → 4, with a chord 1 → 3 and a tail 5 → 6.
        let pairs = [(1, 2), (2, 3), (3, 1), (1, 3), (3, 4), (4, 5), (5, 4), (5, 6), (7, 7)];
        assert_eq!(cycles_among(pairs), vec![vec![1, 3], vec![4, 5], vec![7]]);
        assert_eq!(cycles_among(pairs.into_iter().rev()), vec![vec![1, 3], vec![4, 5], vec![7]]);
    }

    #[test]
    fn the_acyclic_check_agrees_with_the_search_for_cycles() {
        // Random small graphs, dense enough that about half hold a cycle: the quick check says
        // "none" exactly when the full search finds none.
        let mut state: u64 = 7;
        let mut next = |m: u64| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % m) as Id
        };
        let (mut with, mut without) = (0, 0);
        for _ in 0..2_000 {
            let nodes = 2 + next(10) as u64;
            let pairs: Vec<(Id, Id)> = (0..next(14)).map(|_| (next(nodes), next(nodes))).collect();
            let acyclic = is_acyclic(&pairs);
            assert_eq!(acyclic, search_cycles(pairs.clone()).is_empty(), "{pairs:?}");
            if acyclic {
                without += 1;
                // A DAG's pairs listed in any order are still one.
                assert!(is_acyclic(&pairs.iter().rev().copied().collect::<Vec<_>>()));
            } else {
                with += 1;
            }
        }
        assert!(with > 200 && without > 200, "{with} with cycles, {without} without");
    }

    #[test]
    fn a_diamond_is_not_a_cycle() {
        assert!(cycles_among([(1, 2), (1, 3), (2, 4), (3, 4)]).is_empty());
    }

    #[test]
    fn a_long_chain_closing_on_itself_is_one_cycle() {
        let n = 50_000;
        let pairs: Vec<(Id, Id)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        let cycles = cycles_among(pairs);
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].len(), n as usize);
        assert_eq!(cycles[0][..3], [0, 1, 2]);
    }

    #[test]
    fn the_frontier_keeps_what_has_something_beyond_in_order() {
        let e = |id, distance, beyond| FrontierEntry {
            id,
            side: Direction::Downstream,
            distance,
            reason: StopReason::Depth,
            beyond,
        };
        let c = Completeness::new(vec![e(9, 2, 3), e(4, 2, 0), e(5, 1, 1)], Cycles::default(), false);
        assert!(c.is_partial);
        assert_eq!(c.frontier, vec![e(5, 1, 1), e(9, 2, 3)]);
        assert!(!Completeness::new(vec![e(4, 2, 0)], Cycles::default(), false).is_partial);
    }
}
