//! The graph reads: the lineage graph around a container or an external asset, `impact`,
//! `piiFlow` and a field's connections. Each expands frontiers level by level (one batched store
//! statement per level and direction, `frontier`), stops at its depth, budget or limit and says
//! so (`Completeness`), and reads the edges live at the view's instant (`Lineage::at`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::frontier::{self, Completeness, StopReason, Unread};
use super::{
    container_not_found, external_node_id, far_end, field_not_found, near_end, parse_external_node_id, validate_depth,
    validate_limit, ExternalNode, GraphNode, GraphOptions, Lineage, LineageGraph, PiiOptions, Reached, ReachedExternal,
    Start, Transitive, MAX_DEPTH, MAX_RESULT_LIMIT,
};
use crate::domain::rules;
use crate::domain::{Direction, Edge, End, Id};
use crate::error::{Error, Result};

impl Lineage {
    pub(super) async fn require_container(&self, id: Id) -> Result<()> {
        if self.store.containers_by_ids(&[id]).await?.is_empty() {
            return Err(container_not_found(id));
        }
        Ok(())
    }

    pub(super) async fn require_field(&self, id: Id) -> Result<()> {
        if self.store.fields_by_ids(&[id]).await?.is_empty() {
            return Err(field_not_found(id));
        }
        Ok(())
    }

    /// An external asset's live container-level edges (of its source type): what a traversal
    /// centred on it starts from. Empty when no live edge names it.
    pub(super) async fn external_edges(&self, source_type: &str, fqn: &str) -> Result<Vec<Edge>> {
        let end = End::External { fqn: fqn.to_string() };
        let edges = self.store.live_edges_touching_ends(std::slice::from_ref(&end), source_type).await?;
        Ok(edges
            .into_iter()
            .filter(|e| !e.source.is_field() && !e.target.is_field() && (e.source == end || e.target == end))
            .collect())
    }

    /// The external asset an `ext:` id names, when a live edge names it.
    pub async fn external_node(&self, id: &str) -> Result<Option<ExternalNode>> {
        let Some((source_type, fqn)) = parse_external_node_id(id) else { return Ok(None) };
        if self.external_edges(source_type, fqn).await?.is_empty() {
            return Ok(None);
        }
        Ok(Some(ExternalNode {
            id: external_node_id(source_type, fqn),
            fqn: fqn.to_string(),
            source_type: source_type.to_string(),
            is_target: false,
        }))
    }

    /// The start of a traversal centred on an external asset: `NotFound` when the id is not an
    /// `ext:` id or no live edge names the asset.
    pub(super) async fn external_start(&self, id: &str) -> Result<(Start, String)> {
        let not_found = || Error::NotFound(format!("External node {id:?} not found"));
        let (source_type, fqn) = parse_external_node_id(id).ok_or_else(not_found)?;
        let edges = self.external_edges(source_type, fqn).await?;
        if edges.is_empty() {
            return Err(not_found());
        }
        Ok((Start::External { fqn: fqn.to_string(), edges }, source_type.to_string()))
    }

    /// The edges a traversal reads first from its start in `direction`.
    pub(super) async fn first_edges(
        &self,
        start: &Start,
        direction: Direction,
        over_fields: bool,
    ) -> Result<Vec<Edge>> {
        Ok(match start {
            Start::Node(id) => self.level_edges(&[*id], direction, over_fields).await?,
            Start::Nodes(ids) => self.level_edges(ids, direction, over_fields).await?,
            Start::External { edges, .. } => {
                edges.iter().filter(|e| start.is(near_end(e, direction))).cloned().collect()
            }
        })
    }

    /// Breadth-first expansion over container edges in one direction from a container or an
    /// external asset: distances of the containers reached and the container and external
    /// edges explored (those on the traversal's paths).
    pub(super) async fn expand_containers(
        &self,
        start: &Start,
        depth: usize,
        direction: Direction,
        budget: Option<usize>,
    ) -> Result<(HashMap<Id, usize>, Vec<Edge>, Vec<Edge>, usize)> {
        let mut dist = HashMap::new();
        match start {
            Start::Node(id) => {
                dist.insert(*id, 0usize);
            }
            Start::Nodes(ids) => dist.extend(ids.iter().map(|id| (*id, 0usize))),
            Start::External { .. } => {}
        }
        let mut frontier = Vec::new();
        let mut edges = Vec::new();
        let mut externals = Vec::new();
        // The nodes nearer than this had their edges this way read (all of them, bar a budget).
        let mut read_below = depth;
        for level in 1..=depth {
            let found = if level == 1 {
                self.first_edges(start, direction, false).await?
            } else if frontier.is_empty() {
                break;
            } else {
                self.level_edges(&frontier, direction, false).await?
            };
            let mut next = Vec::new();
            for e in found {
                if let End::Container { id } = far_end(&e, direction) {
                    if !dist.contains_key(id) {
                        dist.insert(*id, level);
                        next.push(*id);
                    }
                }
                match (&e.source, &e.target) {
                    (End::External { .. }, _) | (_, End::External { .. }) => externals.push(e),
                    (End::Container { .. }, End::Container { .. }) => edges.push(e),
                    _ => {}
                }
            }
            frontier = next;
            if budget.is_some_and(|b| dist.len() > b) && level < depth {
                read_below = level;
                break;
            }
        }
        Ok((dist, edges, externals, read_below))
    }

    pub(super) async fn graph_from(
        &self,
        start: Start,
        start_source_type: Option<String>,
        depth: usize,
        side: Option<Direction>,
        options: GraphOptions,
    ) -> Result<LineageGraph> {
        let container_id = match &start {
            Start::Node(id) => Some(*id),
            Start::External { .. } | Start::Nodes(_) => None,
        };
        let mut nodes: BTreeSet<Id> = container_id.into_iter().collect();
        let start = &start;
        let mut path_edges: BTreeMap<Id, Edge> = BTreeMap::new();
        let mut external_edges: BTreeMap<Id, Edge> = BTreeMap::new();
        // The two directions are independent: they are expanded side by side.
        let expand = |direction: Direction| async move {
            if side.is_some_and(|s| s != direction) {
                return Ok(None);
            }
            self.expand_containers(start, depth, direction, options.max_nodes).await.map(Some)
        };
        let (mut up, mut down) = tokio::try_join!(expand(Direction::Upstream), expand(Direction::Downstream))?;
        // Past the budget, the nearest levels are kept and what was cut is remembered.
        let cuts = frontier::apply_budget(options.max_nodes, container_id, &mut up, &mut down);
        // The containers whose every live edge that way the expansion read: those it reached
        // short of the depth or the budget (the last level's edges are not read).
        let read_before = |side: &Option<frontier::Expansion>| -> Vec<Id> {
            side.iter()
                .flat_map(|(dist, _, _, below)| dist.iter().filter(|(_, d)| *d < below).map(|(id, _)| *id))
                .collect()
        };
        let inbound_read = read_before(&up);
        let outbound_read = read_before(&down);
        let unread = [(Direction::Upstream, &up), (Direction::Downstream, &down)]
            .map(|(dir, e)| (dir, frontier::unread_of(e.as_ref(), depth)));
        for (dist, edges, externals, _) in [up, down].into_iter().flatten() {
            nodes.extend(dist.keys());
            path_edges.extend(edges.into_iter().map(|e| (e.id, e)));
            external_edges.extend(externals.into_iter().map(|e| (e.id, e)));
        }
        let ids: Vec<Id> = nodes.iter().copied().collect();
        // The flags and the edges between the nodes that the expansion did not read, without
        // reading every edge around the nodes in full.
        let scope = crate::store::GraphScope {
            ids: ids.clone(),
            known_external_edges: external_edges.keys().copied().collect(),
            inbound_read,
            outbound_read,
        };
        let around = self.graph_around(&scope).await?;
        let mut has_up: HashSet<Id> = around.has_upstream.into_iter().collect();
        let mut has_down: HashSet<Id> = around.has_downstream.into_iter().collect();

        if side.is_none() {
            // Every edge the expansion read joins two nodes: with the rest, all edges among them.
            path_edges.extend(around.edges.into_iter().map(|e| (e.id, e)));
        }
        let edges: Vec<Edge> = path_edges.into_values().collect();
        let flags = (&mut has_up, &mut has_down);
        let completeness = self.graph_completeness(cuts, unread, flags, &ids, &edges, options.count_frontier).await?;
        let mut external_nodes: BTreeMap<String, ExternalNode> = BTreeMap::new();
        for e in external_edges.values() {
            for end in [&e.source, &e.target] {
                if let End::External { fqn } = end {
                    let id = external_node_id(&e.source_type, fqn);
                    external_nodes.entry(id.clone()).or_insert(ExternalNode {
                        id,
                        fqn: fqn.clone(),
                        source_type: e.source_type.clone(),
                        is_target: false,
                    });
                }
            }
        }
        if let (Start::External { fqn, .. }, Some(source_type)) = (start, start_source_type) {
            let id = external_node_id(&source_type, fqn);
            external_nodes
                .entry(id.clone())
                .or_insert(ExternalNode { id, fqn: fqn.clone(), source_type, is_target: false })
                .is_target = true;
        }
        Ok(LineageGraph {
            nodes: ids
                .iter()
                .map(|id| GraphNode {
                    container_id: *id,
                    is_target: Some(*id) == container_id,
                    has_upstream: has_up.contains(id),
                    has_downstream: has_down.contains(id),
                })
                .collect(),
            edges,
            external_nodes: external_nodes.into_values().collect(),
            external_edges: external_edges.into_values().collect(),
            completeness,
        })
    }

    /// Transitive closure from a container over container edges, nearest first.
    pub async fn impact(&self, container_id: Id, depth: i64, side: Direction, limit: i64) -> Result<Transitive> {
        let depth = validate_depth(depth)?;
        let limit = validate_limit(limit)?;
        self.require_container(container_id).await?;
        self.transitive(Start::Node(container_id), depth, side, limit, false, |_| true).await
    }

    /// `impact` from an external asset (`ext:<source_type>:<fqn>`): the containers it feeds
    /// or comes from, by the same closure.
    pub async fn external_impact(&self, id: &str, depth: i64, side: Direction, limit: i64) -> Result<Transitive> {
        let depth = validate_depth(depth)?;
        let limit = validate_limit(limit)?;
        let (start, _) = self.external_start(id).await?;
        self.transitive(start, depth, side, limit, false, |_| true).await
    }

    /// Where a field's value flows (or comes from): field edges that carry the value.
    pub async fn pii_flow(
        &self,
        field_id: Id,
        depth: i64,
        side: Direction,
        limit: i64,
        options: PiiOptions,
    ) -> Result<Transitive> {
        let depth = validate_depth(depth)?;
        let limit = validate_limit(limit)?;
        self.require_field(field_id).await?;
        let carries = move |e: &Edge| {
            let t = e.transformations.as_ref();
            (options.include_indirect || !rules::is_indirect_only(t))
                && (options.through_masking || !rules::is_masking(t))
        };
        self.transitive(Start::Node(field_id), depth, side, limit, true, carries).await
    }

    /// Breadth-first closure over container edges (or field edges), one statement per level;
    /// one more level is read past `depth` to tell whether the answer was cut.
    pub(super) async fn transitive(
        &self,
        start: Start,
        depth: usize,
        side: Direction,
        limit: usize,
        over_fields: bool,
        follows: impl Fn(&Edge) -> bool,
    ) -> Result<Transitive> {
        let mut seen: HashMap<Id, bool> = HashMap::new();
        match &start {
            Start::Node(id) => {
                seen.insert(*id, false);
            }
            Start::Nodes(ids) => seen.extend(ids.iter().map(|id| (*id, false))),
            Start::External { .. } => {}
        }
        let mut reached = Vec::new();
        let mut externals: Vec<ReachedExternal> = Vec::new();
        let mut external_seen: HashSet<String> = HashSet::new();
        let mut frontier = Vec::new();
        let mut is_partial = false;
        // What the answer leaves out (per near node) and every edge read, for the frontier and
        // the cycles; both come from what was read, bar one count after a limit cut.
        let mut cut: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
        let mut read: Vec<(Id, Id)> = Vec::new();
        let mut stop = StopReason::Depth;
        let mut unread = Vec::new();
        for level in 1..=depth + 1 {
            let found = if level == 1 {
                self.first_edges(&start, side, over_fields).await?
            } else if frontier.is_empty() {
                break;
            } else {
                self.level_edges(&frontier, side, over_fields).await?
            };
            let mut found: Vec<Edge> = found.into_iter().filter(|e| follows(e)).collect();
            found.sort_by_key(|e| e.id);
            let mut next = Vec::new();
            for e in found {
                let (near, far) = (near_end(&e, side), far_end(&e, side));
                if let End::External { fqn } = far {
                    // An asset outside the catalog, at the distance of the edge that reaches it.
                    if !over_fields && level <= depth && !start.is(far) && external_seen.insert(fqn.clone()) {
                        externals.push(ReachedExternal {
                            id: external_node_id(&e.source_type, fqn),
                            fqn: fqn.clone(),
                            source_type: e.source_type.clone(),
                            distance: level as i64,
                            via: e.clone(),
                        });
                    }
                    continue;
                }
                let (End::Container { id: far_id } | End::Field { id: far_id, .. }) = far else { continue };
                let far_id = *far_id;
                let near_id = match near {
                    End::Container { id } | End::Field { id, .. } => Some(*id),
                    End::External { .. } => None,
                };
                if let Some(n) = near_id {
                    read.push(match side {
                        Direction::Downstream => (n, far_id),
                        Direction::Upstream => (far_id, n),
                    });
                }
                if seen.contains_key(&far_id) {
                    continue;
                }
                if level > depth || reached.len() >= limit {
                    // Something lies beyond the depth or the limit: the answer is cut; the rest of
                    // the level (already read) says how much lies beyond each node.
                    is_partial = true;
                    stop = if level > depth { StopReason::Depth } else { StopReason::Limit };
                    if let Some(n) = near_id {
                        cut.entry(n).or_default().insert(far_id);
                    }
                    continue;
                }
                // The start (an external asset included) carries its value as it is.
                let near_derived = match near {
                    End::Container { id } | End::Field { id, .. } => seen.get(id).copied().unwrap_or(false),
                    End::External { .. } if start.is(near) => false,
                    End::External { .. } => continue,
                };
                let derived = near_derived || e.derived.unwrap_or(false);
                seen.insert(far_id, derived);
                next.push(far_id);
                reached.push(Reached { id: far_id, distance: level as i64, via: e, derived });
            }
            if is_partial {
                // The nodes this level reached before the limit: their edges were not read.
                unread = next.iter().map(|&id| Unread { id, distance: level as i64, reason: stop }).collect();
                break;
            }
            frontier = next;
        }
        let distance: HashMap<Id, i64> = reached.iter().map(|r| (r.id, r.distance)).collect();
        let mut entries = frontier::from_cut(&cut, &|id| distance.get(&id).copied().unwrap_or(0), side, stop);
        let answer: Vec<Id> = seen.keys().copied().collect();
        entries.extend(frontier::count_beyond(self.store.as_ref(), unread, side, over_fields, &answer).await?);
        let completeness = Completeness::new(entries, frontier::Cycles::among(read), is_partial);
        Ok(Transitive { is_partial, reached, externals, completeness })
    }

    /// Fields connected to a field through field edges, upstream and downstream, with the edges
    /// of those hops; `container_ids` keeps only fields in those containers.
    pub async fn field_connections(
        &self,
        field_id: Id,
        container_ids: Option<Vec<Id>>,
    ) -> Result<(Vec<Id>, Vec<Edge>)> {
        let (fields, edges, _) = self.field_connections_full(field_id, container_ids).await?;
        Ok((fields, edges))
    }

    /// `field_connections` with whether the closure was cut, where, and the cycles it met.
    pub async fn field_connections_full(
        &self,
        field_id: Id,
        container_ids: Option<Vec<Id>>,
    ) -> Result<(Vec<Id>, Vec<Edge>, Completeness)> {
        self.require_field(field_id).await?;
        // Each direction is its own closure; the two run side by side.
        let closure = |direction: Direction| async move {
            let mut fields: BTreeSet<Id> = BTreeSet::new();
            let mut edges: BTreeMap<Id, Edge> = BTreeMap::new();
            let mut seen: HashSet<Id> = HashSet::from([field_id]);
            let mut frontier = vec![field_id];
            let mut level = 0;
            // Bounded like every transitive query: a cycle or a huge component cannot run away.
            for _ in 0..MAX_DEPTH * 5 {
                if frontier.is_empty() || seen.len() > MAX_RESULT_LIMIT as usize {
                    break;
                }
                level += 1;
                let mut next = Vec::new();
                for e in self.level_edges(&frontier, direction, true).await? {
                    if let End::Field { id, .. } = far_end(&e, direction) {
                        if seen.insert(*id) {
                            next.push(*id);
                        }
                        fields.insert(*id);
                    }
                    edges.insert(e.id, e);
                }
                frontier = next;
            }
            // Stopped with nodes left to expand: by the level cap or the size cap.
            let reason = if seen.len() > MAX_RESULT_LIMIT as usize { StopReason::Limit } else { StopReason::Depth };
            let unread = frontier.iter().map(|&id| Unread { id, distance: level, reason }).collect();
            let answer: Vec<Id> = seen.iter().copied().collect();
            let beyond = frontier::count_beyond(self.store.as_ref(), unread, direction, true, &answer).await?;
            Ok::<_, Error>((fields, edges, beyond))
        };
        let ((mut fields, mut edges, mut beyond), (down_fields, down_edges, down_beyond)) =
            tokio::try_join!(closure(Direction::Upstream), closure(Direction::Downstream))?;
        fields.extend(down_fields);
        edges.extend(down_edges);
        beyond.extend(down_beyond);
        fields.remove(&field_id);
        let edges: Vec<Edge> = edges.into_values().collect();
        let pairs = edges.iter().filter_map(|e| match (&e.source, &e.target) {
            (End::Field { id: s, .. }, End::Field { id: t, .. }) => Some((*s, *t)),
            _ => None,
        });
        let completeness = Completeness::new(beyond, frontier::Cycles::among(pairs), false);
        let Some(keep) = container_ids else {
            return Ok((fields.into_iter().collect(), edges, completeness));
        };
        let keep: HashSet<Id> = keep.into_iter().collect();
        let field_container: HashMap<Id, Id> = edges
            .iter()
            .flat_map(|e| [&e.source, &e.target])
            .filter_map(|end| match end {
                End::Field { id, container_id } => Some((*id, *container_id)),
                _ => None,
            })
            .collect();
        let kept: BTreeSet<Id> =
            fields.into_iter().filter(|f| field_container.get(f).is_some_and(|c| keep.contains(c))).collect();
        let is_kept = |end: &End| match end {
            End::Field { id, .. } => *id == field_id || kept.contains(id),
            _ => false,
        };
        let edges = edges.into_iter().filter(|e| is_kept(&e.source) && is_kept(&e.target)).collect();
        Ok((kept.into_iter().collect(), edges, completeness))
    }
}
