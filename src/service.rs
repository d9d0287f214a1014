//! The lineage service: every operation the transports offer, validated and applied through the
//! store. Transports (GraphQL, REST) call these functions and map the result; no rule lives there.
//!
//! Graph queries expand frontiers level by level: one batched store statement per level and
//! direction, never one per node, and never variable-length path patterns (they enumerate paths
//! and explode on diamonds).
//!
//! This file holds `Lineage` itself, the answer types the transports share and the checks every
//! operation uses (pages, depths, limits, names); the methods are grouped by concern in
//! `impl Lineage` blocks of their own files: `catalog` (datastores, containers, fields),
//! `edges` (edges by hand), `traversal` (the lineage graph, impact, PII flow, a field's
//! connections), `runs` (a job's children and runs, a run's parent, children and events), and
//! the modules below for the rest.
//!
//! # How it fits
//!
//! `Lineage` holds an `Arc<dyn Store>` (private: transports go through the methods), the optional `Forwarder` and
//! the auto-create switch. Every method that needs a permission takes the `&Caller`.
//! - It validates input: names, page sizes 1..=1000, `depth` 1..=20 (`MAX_DEPTH`), `limit` up to `MAX_RESULT_LIMIT`.
//! - It checks permissions, applies the rules in `domain::rules`, and turns "not there" into `NotFound`.
//! - It traverses the graph: `lineage_graph`, `impact`, `pii_flow` and `field_connections`. These are breadth-first
//!   expansions of a frontier. Each level makes one batched `container_edges_of` / `field_edges_of` call per direction,
//!   the two directions side by side. It never uses variable-length path patterns, because those enumerate paths and
//!   explode on diamond-shaped graphs. `lineage_graph` then reads its flags and unsided edge set with
//!   `container_graph_around`: the edges inside the answer that the expansion did not read and `EXISTS` probes for the
//!   nodes whose edges it did not read (the last level's), never the whole fan-out of a hub (ARCHITECTURE.md, *Graph semantics*).
//!   A traversal starts from a `Start`: a container (a field for `pii_flow`) or an external asset
//!   (`external_lineage_graph`, `external_impact`), whose live edges `live_edges_touching_ends` reads once as the first
//!   level; the levels after it are the same code whichever the start.
//! - `upsert_container` records the user's own `description`, `tags` and `owners` as metadata of source `user`;
//!   `metadata_assertions` flags the effective value (`domain::effective_flags`).
//! - `match_container` is the one name matcher (`database.schema.name`, case-insensitive, exact before dot-suffix
//!   before slash-suffix) shared by OpenLineage, external engines and SQL. It costs one indexed store read:
//!   `name_candidates` turns the wanted name into the names a matching container can have (the name and its suffixes
//!   after each `.` or `/`), `Store::containers_by_names` finds those by lowercased name, and `match_rank` ranks them.

mod catalog;
mod edges;
mod runs;
mod traversal;

pub mod changes;
pub mod diff;
pub mod external;
pub mod frontier;
pub mod graph;
pub mod group_commit;
pub mod history;
pub mod jobs;
pub mod jobs_asof;
pub mod kafka;
pub mod marquez;
pub mod openlineage;
pub mod paths;
pub mod records;
pub mod search;
pub mod sql;
pub mod summary;
pub mod tables;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::domain::{Container, Direction, Edge, End, Id, PageRequest};
use crate::error::{Error, Result};
use crate::store::Store;
use frontier::Completeness;

pub const MAX_DEPTH: i64 = 20;
pub const MAX_PAGE_SIZE: i64 = 1000;
/// Hard cap on a transitive answer, whatever `limit` asks.
pub const MAX_RESULT_LIMIT: i64 = 100_000;

pub use crate::auth::Caller;
pub use graph::{GraphAnswer, GraphRequest, Root};

#[derive(Clone)]
pub struct Lineage {
    /// Private: every transport reads and writes through `Lineage`'s methods, which check what
    /// the caller may see, so no answer skips the check.
    store: Arc<dyn Store>,
    /// Where accepted OpenLineage events are also sent, when configured.
    pub forwarder: Option<crate::forward::Forwarder>,
    /// Create containers for OpenLineage datasets of mapped namespaces (seed 002's
    /// `autoCreateEntities`); off by default.
    pub auto_create: bool,
    /// The zero-setup mode (`--openlineage-zero-setup`): a namespace no datastore lists gets a
    /// datastore of its own and every OpenLineage dataset becomes a container; off by default.
    pub zero_setup: bool,
    /// On a store whose sessions can conflict (Neo4j), how long a session's events may take
    /// before it takes no more (`--ingest-session-ms`).
    pub ingest_session_time: std::time::Duration,
    /// Set on a view made by `Lineage::at`: traversals read the edges live at this instant.
    as_of: Option<crate::domain::Timestamp>,
    /// When the store's first edge was recorded, once known (see `Lineage::at`).
    first_recorded: Arc<std::sync::OnceLock<crate::domain::Timestamp>>,
}

pub struct CreateEdge {
    pub source_container_id: Option<Id>,
    pub source_field_id: Option<Id>,
    pub target_container_id: Option<Id>,
    pub target_field_id: Option<Id>,
    pub description: Option<String>,
    pub source_type: Option<String>,
    /// A field edge whose value passes through a transformation (`sum(amount)`) rather than
    /// being copied; only field edges take it.
    pub derived: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct GraphNode {
    pub container_id: Id,
    pub is_target: bool,
    pub has_upstream: bool,
    pub has_downstream: bool,
}

#[derive(Debug, Clone)]
pub struct ExternalNode {
    pub id: String,
    pub fqn: String,
    pub source_type: String,
    /// The node a graph centred on an external asset is centred on.
    pub is_target: bool,
}

pub fn external_node_id(source_type: &str, fqn: &str) -> String {
    format!("ext:{source_type}:{fqn}")
}

/// `(source_type, fqn)` of an `ext:<source_type>:<fqn>` id (a source type has no colon).
pub fn parse_external_node_id(id: &str) -> Option<(&str, &str)> {
    let rest = id.strip_prefix("ext:")?;
    let (source_type, fqn) = rest.split_once(':')?;
    (!source_type.is_empty() && !fqn.is_empty()).then_some((source_type, fqn))
}

/// Where a traversal starts: a catalogued node (a container, or a field for `piiFlow`) or an
/// external asset with its live container-level edges, read once for both directions.
enum Start {
    Node(Id),
    External {
        fqn: String,
        edges: Vec<Edge>,
    },
    /// Several containers at once (what a run wrote, for `run_impact`), each at distance 0.
    Nodes(Vec<Id>),
}

impl Start {
    /// Whether `end` is the start itself.
    fn is(&self, end: &End) -> bool {
        match (self, end) {
            (Start::Node(id), End::Container { id: c } | End::Field { id: c, .. }) => id == c,
            (Start::Nodes(ids), End::Container { id: c } | End::Field { id: c, .. }) => ids.contains(c),
            (Start::External { fqn, .. }, End::External { fqn: f }) => fqn == f,
            _ => false,
        }
    }
}

/// The end an edge is reached from when traversing in `direction` (the other of `far_end`).
fn near_end(edge: &Edge, direction: Direction) -> &End {
    match direction {
        Direction::Upstream => &edge.target,
        Direction::Downstream => &edge.source,
    }
}

#[derive(Debug, Clone, Default)]
pub struct LineageGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<Edge>,
    pub external_nodes: Vec<ExternalNode>,
    pub external_edges: Vec<Edge>,
    pub completeness: Completeness,
}

/// What a lineage graph may cost and report beyond its depth.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphOptions {
    /// At most this many containers (the centre included), nearest levels first.
    pub max_nodes: Option<usize>,
    /// Count the neighbours beyond the frontier (one more statement per side when cut).
    pub count_frontier: bool,
}

#[derive(Debug, Clone)]
pub struct Reached {
    pub id: Id,
    pub distance: i64,
    pub via: Edge,
    pub derived: bool,
}

/// An asset outside the catalog that a container traversal reached (`impact`'s externals).
#[derive(Debug, Clone)]
pub struct ReachedExternal {
    /// `ext:<source_type>:<fqn>`, as the lineage graph's external nodes.
    pub id: String,
    pub fqn: String,
    pub source_type: String,
    pub distance: i64,
    pub via: Edge,
}

#[derive(Debug, Clone)]
pub struct Transitive {
    pub is_partial: bool,
    pub reached: Vec<Reached>,
    /// External assets on the way (container traversals only), nearest first. They are leaves:
    /// the traversal does not go on through them, as the lineage graph does not, and `limit`
    /// counts containers only (an external costs no read of its own).
    pub externals: Vec<ReachedExternal>,
    pub completeness: Completeness,
}

pub struct PiiOptions {
    pub include_indirect: bool,
    pub through_masking: bool,
}

pub fn validate_page(page: i64, size: i64) -> Result<PageRequest> {
    if page < 1 {
        return Err(Error::BadInput(format!("page must be 1 or more, got {page}")));
    }
    if !(1..=MAX_PAGE_SIZE).contains(&size) {
        return Err(Error::BadInput(format!("size must be between 1 and {MAX_PAGE_SIZE}, got {size}")));
    }
    // The offset (page - 1) * size must stay a valid number for every store.
    if (page - 1).checked_mul(size).is_none_or(|o| o > i64::from(i32::MAX)) {
        return Err(Error::BadInput(format!(
            "page {page} is past any result: at most {} with size {size}",
            i64::from(i32::MAX) / size + 1
        )));
    }
    Ok(PageRequest { page, size })
}

fn validate_depth(depth: i64) -> Result<usize> {
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(Error::BadInput(format!("depth must be between 1 and {MAX_DEPTH}, got {depth}")));
    }
    Ok(depth as usize)
}

/// A `maxNodes` budget as asked: between 1 and `MAX_RESULT_LIMIT`.
pub fn max_nodes(n: i64) -> Result<usize> {
    if !(1..=MAX_RESULT_LIMIT).contains(&n) {
        return Err(Error::BadInput(format!("maxNodes must be between 1 and {MAX_RESULT_LIMIT}, got {n}")));
    }
    Ok(n as usize)
}

fn validate_limit(limit: i64) -> Result<usize> {
    if !(1..=MAX_RESULT_LIMIT).contains(&limit) {
        return Err(Error::BadInput(format!("limit must be between 1 and {MAX_RESULT_LIMIT}, got {limit}")));
    }
    Ok(limit as usize)
}

fn require_name(what: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::BadInput(format!("{what} must not be empty")));
    }
    if value.len() > 1024 {
        return Err(Error::BadInput(format!("{what} is longer than 1024 characters")));
    }
    Ok(())
}

fn edge_not_found(id: Id) -> Error {
    Error::NotFound(format!("Lineage edge {id} not found"))
}

fn container_not_found(id: Id) -> Error {
    Error::NotFound(format!("Container {id} not found"))
}

fn field_not_found(id: Id) -> Error {
    Error::NotFound(format!("Field {id} not found"))
}

fn datastore_not_found(id: Id) -> Error {
    Error::NotFound(format!("Datastore {id} not found"))
}

/// Only the user source types can be set by hand; the others belong to their providers.
fn not_a_user_source_type(source_type: &str) -> Error {
    Error::BadInput(format!("sourceType must be one of manual, catalog_import, inferred; got {source_type:?}"))
}

/// The other end of an edge seen from a node reached in `direction`.
fn far_end(edge: &Edge, direction: Direction) -> &End {
    match direction {
        Direction::Upstream => &edge.source,
        Direction::Downstream => &edge.target,
    }
}

/// The names a container must have to match `wanted` (lowercased) in `match_container`: the
/// name itself and each of its suffixes that starts after a '.' or a '/'. A container's name is
/// the last part of its `database.schema.name` key, so any key that equals the wanted name or
/// ends it at a dot or slash has one of these names.
pub fn name_candidates(wanted: &str) -> Vec<String> {
    let mut out = vec![wanted.to_string()];
    for (i, ch) in wanted.char_indices() {
        if matches!(ch, '.' | '/') && i + 1 < wanted.len() {
            out.push(wanted[i + 1..].to_string());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The best-ranked container for a lowercased name among `candidates`: the first of the highest
/// `match_rank` above zero, so the candidates' order breaks ties.
pub(crate) fn best_match<'c>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'c Container>,
) -> Option<&'c Container> {
    let mut best: Option<(u8, &Container)> = None;
    for c in candidates {
        let rank = match_rank(wanted, c);
        if rank > 0 && best.is_none_or(|(r, _)| rank > r) {
            best = Some((rank, c));
        }
    }
    best.map(|(_, c)| c)
}

/// How well container `c` matches `wanted` (trimmed, lowercased): 3 when its
/// `database.schema.name` is the name, 2 when one ends the other at a dot, 1 when the name ends
/// with it at a slash (a path), 0 when it does not match.
pub(crate) fn match_rank(wanted: &str, c: &Container) -> u8 {
    let key = crate::domain::container_key(c.database.as_deref(), c.schema.as_deref(), &c.name).to_lowercase();
    let ends_at = |long: &str, short: &str, sep: char| {
        long.len() > short.len() && long.ends_with(short) && long[..long.len() - short.len()].ends_with(sep)
    };
    if key == wanted {
        3
    } else if ends_at(wanted, &key, '.') || ends_at(&key, wanted, '.') {
        2
    } else if ends_at(wanted, &key, '/') {
        1
    } else {
        0
    }
}

impl Lineage {
    /// The datastores of the catalogued ends (containers, fields' containers) of edges;
    /// external ends and deleted containers have none.
    pub async fn datastores_of_ends<'e>(&self, ends: impl IntoIterator<Item = &'e End>) -> Result<Vec<Id>> {
        let containers: BTreeSet<Id> = ends.into_iter().filter_map(End::container_id).collect();
        if containers.is_empty() {
            return Ok(Vec::new());
        }
        let found = self.store.containers_by_ids(&containers.into_iter().collect::<Vec<_>>()).await?;
        let mut ds: Vec<Id> = found.iter().map(|c| c.datastore_id).collect();
        ds.sort_unstable();
        ds.dedup();
        Ok(ds)
    }

    /// The container a table name denotes in the given datastores (`None`: any): one whose
    /// `database.schema.name` equals the name, or one of them ends the other at a dot (a name
    /// without its database, or a catalog entry without it); exact matches win, then earlier
    /// scopes. Case-insensitive: warehouses fold unquoted names and producers spell them either
    /// way. One indexed store read (`containers_by_names`), whatever the catalog's size.
    pub(crate) async fn match_container(&self, datastores: &[Option<Id>], name: &str) -> Result<Option<Container>> {
        if datastores.is_empty() {
            return Ok(None);
        }
        let wanted = name.trim().to_lowercase();
        let restrict: Option<Vec<Id>> = if datastores.iter().any(Option::is_none) {
            None
        } else {
            Some(datastores.iter().flatten().copied().collect())
        };
        let found = self.store.containers_by_names(&name_candidates(&wanted), restrict.as_deref()).await?;
        let in_scope_order =
            datastores.iter().flat_map(|scope| found.iter().filter(move |c| scope.is_none_or(|d| c.datastore_id == d)));
        Ok(best_match(&wanted, in_scope_order).cloned())
    }

    /// Adds to a provider batch the retirement of these edges: every live evidence row of them
    /// retires (one read for all), and each becomes a candidate to retire once unbacked.
    pub(crate) async fn retire_edges_in(&self, batch: &mut crate::domain::AssertionBatch, edges: &[Id]) -> Result<()> {
        if edges.is_empty() {
            return Ok(());
        }
        for ev in self.store.evidence_for_edges(edges).await? {
            if ev.retired_at.is_none() {
                batch.retire_evidence.push((ev.edge_id, ev.key));
            }
        }
        batch.retire_candidates.extend_from_slice(edges);
        Ok(())
    }

    /// A field's id by name (case-insensitive) in a container, reading each container's fields
    /// once into `cache`.
    pub(crate) async fn field_id_cached(
        &self,
        cache: &mut HashMap<Id, HashMap<String, Id>>,
        container: Id,
        name: &str,
    ) -> Result<Option<Id>> {
        if !cache.contains_key(&container) {
            cache.extend(self.field_names(&[container]).await?);
        }
        Ok(cache.get(&container).and_then(|m| m.get(&name.to_lowercase())).copied())
    }

    /// Field ids by lowercased name for each of `containers` (every one gets a map, empty when it
    /// has no field), in one read. Of two names that fold alike the later field wins.
    pub(crate) async fn field_names(&self, containers: &[Id]) -> Result<HashMap<Id, HashMap<String, Id>>> {
        let mut out: HashMap<Id, HashMap<String, Id>> = containers.iter().map(|&c| (c, HashMap::new())).collect();
        for (container, id, name) in self.store.field_names_of_containers(containers).await? {
            out.entry(container).or_default().insert(name.to_lowercase(), id);
        }
        Ok(out)
    }

    async fn container_datastore(&self, id: Id) -> Result<Id> {
        match self.store.containers_by_ids(&[id]).await?.pop() {
            Some(c) => Ok(c.datastore_id),
            None => Err(container_not_found(id)),
        }
    }

    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            forwarder: None,
            auto_create: false,
            zero_setup: false,
            ingest_session_time: openlineage::CONFLICTING_SESSION_TIME,
            as_of: None,
            first_recorded: Arc::default(),
        }
    }

    pub fn with_zero_setup(mut self, on: bool) -> Self {
        self.zero_setup = on;
        self
    }

    pub fn with_ingest_session_time(mut self, time: std::time::Duration) -> Self {
        self.ingest_session_time = time;
        self
    }

    pub fn with_auto_create(mut self, on: bool) -> Self {
        self.auto_create = on;
        self
    }

    pub fn with_forwarder(mut self, forwarder: Option<crate::forward::Forwarder>) -> Self {
        self.forwarder = forwarder;
        self
    }

    /// Whether the store answers (readiness, and the Kafka consumer's wait for it).
    pub async fn ping(&self) -> crate::store::StoreResult<()> {
        self.store.ping().await
    }

    /// The tokens, users and teams kept in the same store (`enabled`: authentication is on).
    pub fn auth(&self, enabled: bool) -> crate::auth::Auth {
        crate::auth::Auth::new(self.store.clone(), enabled)
    }
}
