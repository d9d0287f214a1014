//! The lineage service: every operation the transports offer, validated and applied through the
//! store. Transports (GraphQL, REST) call these functions and map the result; no rule lives there.
//!
//! Graph queries expand frontiers level by level: one batched store statement per level and
//! direction, never one per node, and never variable-length path patterns (they enumerate paths
//! and explode on diamonds).
//!
//! # How it fits
//!
//! `Lineage` holds an `Arc<dyn Store>`, the optional `Forwarder` and the auto-create switch. Every method that needs a
//! permission takes the `&Caller`.
//! - It validates input: names, page sizes 1..=1000, `depth` 1..=20 (`MAX_DEPTH`), `limit` up to `MAX_RESULT_LIMIT`.
//! - It checks permissions, applies the rules in `domain::rules`, and turns "not there" into `NotFound`.
//! - It traverses the graph: `lineage_graph`, `impact`, `pii_flow` and `field_connections`. These are breadth-first
//!   expansions of a frontier. Each level makes one batched `container_edges_of` / `field_edges_of` call per direction,
//!   the two directions side by side. It never uses variable-length path patterns, because those enumerate paths and
//!   explode on diamond-shaped graphs. `lineage_graph` then reads its flags and unsided edge set with
//!   `container_graph_around`: the edges inside the answer that the expansion did not read and `EXISTS` probes for the
//!   nodes whose edges it did not read (the last level's), never the whole fan-out of a hub (see *What is read* below).
//!   A traversal starts from a `Start`: a container (a field for `pii_flow`) or an external asset
//!   (`external_lineage_graph`, `external_impact`), whose live edges `live_edges_touching_ends` reads once as the first
//!   level; the levels after it are the same code whichever the start.
//! - `upsert_container` records the user's own `description`, `tags` and `owners` as metadata of source `user`;
//!   `metadata_assertions` flags the effective value (`domain::effective_flags`).
//! - `match_container` is the one name matcher (`database.schema.name`, case-insensitive, exact before dot-suffix
//!   before slash-suffix) shared by OpenLineage, external engines and SQL. It costs one indexed store read:
//!   `name_candidates` turns the wanted name into the names a matching container can have (the name and its suffixes
//!   after each `.` or `/`), `Store::containers_by_names` finds those by lowercased name, and `match_rank` ranks them.

pub mod changes;
pub mod diff;
pub mod external;
pub mod frontier;
pub mod history;
pub mod jobs;
pub mod jobs_asof;
pub mod kafka;
pub mod marquez;
pub mod openlineage;
pub mod paths;
pub mod search;
pub mod sql;
pub mod summary;
pub mod tables;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::domain::rules::{self, check_granularity, delete_retires, is_user_source_type};
use crate::domain::{
    Container, ContainerInput, Datastore, DatastoreInput, Direction, Edge, EdgeFilter, EdgePatch, End, Field, Id,
    NewEdge, Page, PageRequest,
};
use crate::error::{Error, Result};
use crate::store::Store;
use frontier::{Completeness, StopReason, Unread};

pub const MAX_DEPTH: i64 = 20;
pub const MAX_PAGE_SIZE: i64 = 1000;
/// Hard cap on a transitive answer, whatever `limit` asks.
pub const MAX_RESULT_LIMIT: i64 = 100_000;

pub use crate::auth::Caller;
use crate::auth::Permission;

#[derive(Clone)]
pub struct Lineage {
    pub store: Arc<dyn Store>,
    /// Where accepted OpenLineage events are also sent, when configured.
    pub forwarder: Option<crate::forward::Forwarder>,
    /// Create containers for OpenLineage datasets of mapped namespaces (seed 002's
    /// `autoCreateEntities`); off by default.
    pub auto_create: bool,
    /// The zero-setup mode (`--openlineage-zero-setup`): a namespace no datastore lists gets a
    /// datastore of its own and every OpenLineage dataset becomes a container; off by default.
    pub zero_setup: bool,
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
            as_of: None,
            first_recorded: Arc::default(),
        }
    }

    pub fn with_zero_setup(mut self, on: bool) -> Self {
        self.zero_setup = on;
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

    // ---------------- catalog ----------------

    pub async fn upsert_datastore(&self, caller: &Caller, input: DatastoreInput) -> Result<Datastore> {
        caller.require_unrestricted_admin("upsertDatastore")?;
        require_name("name", &input.name)?;
        require_name("type", &input.kind)?;
        let mut input = input;
        input.namespaces = input.namespaces.iter().map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
        let datastore = self.store.upsert_datastore(input).await?;
        // A namespace listed now may make datasets recorded as external assets its containers.
        if !datastore.namespaces.is_empty() {
            self.adopt_placeholders("", None, Some(&datastore.namespaces)).await?;
        }
        Ok(datastore)
    }

    pub async fn upsert_container(&self, caller: &Caller, input: ContainerInput) -> Result<Container> {
        require_name("name", &input.name)?;
        if self.store.datastores_by_ids(&[input.datastore_id]).await?.is_empty() {
            return Err(datastore_not_found(input.datastore_id));
        }
        caller.require([input.datastore_id], Permission::Editor, "upsertContainer")?;
        let mut seen = HashSet::new();
        for (i, f) in input.fields.iter().enumerate() {
            require_name(&format!("fields[{i}].name"), &f.name)?;
            if !seen.insert(f.name.as_str()) {
                return Err(Error::BadInput(format!("fields[{i}].name: field {:?} is listed twice", f.name)));
            }
        }
        if input.active_anomaly_count.is_some_and(|n| n < 0) {
            return Err(Error::BadInput("activeAnomalyCount must not be negative".into()));
        }
        let user_values = [
            ("description", input.description.clone().map(|d| serde_json::json!(d))),
            ("tags", input.tags.clone().map(|t| serde_json::json!(t))),
            ("owners", input.owners.clone().map(|o| serde_json::json!(o))),
        ];
        let container = self.store.upsert_container(input).await?.0;
        let now = crate::domain::now();
        let rows: Vec<crate::domain::MetadataAssertion> = user_values
            .into_iter()
            .filter_map(|(attribute, value)| {
                Some(crate::domain::MetadataAssertion {
                    container_id: container.id,
                    field_id: None,
                    attribute: attribute.to_string(),
                    source: "user".into(),
                    provider: caller.user.clone(),
                    value: value?,
                    asserted_at: now,
                    observed_at: now,
                    details: None,
                })
            })
            .collect();
        if !rows.is_empty() {
            self.store.put_metadata(rows).await?;
        }
        // Late registration: lineage recorded under the table's external placeholder moves here.
        self.adopt_placeholders(&container.name, Some(container.id), None).await?;
        Ok(container)
    }

    /// Each source's value of a container's and its fields' metadata, the shown one flagged.
    pub async fn metadata_assertions(
        &self,
        caller: &Caller,
        container_id: Id,
    ) -> Result<Vec<(crate::domain::MetadataAssertion, bool)>> {
        let ds = self.container_datastore(container_id).await?;
        caller.require([ds], Permission::Reporter, "metadataAssertions")?;
        let rows = self.store.metadata_for_container(container_id).await?;
        let flags = crate::domain::effective_flags(&rows);
        Ok(rows.into_iter().zip(flags).collect())
    }

    /// Retires the provider-maintained edges and deletes the others, as `deleteEdge` would.
    async fn remove_edges(&self, edges: Vec<Edge>) -> Result<()> {
        let now = crate::domain::now();
        let (retire, delete): (Vec<Edge>, Vec<Edge>) = edges.into_iter().partition(|e| delete_retires(&e.source_type));
        let retire: Vec<Id> = retire.iter().filter(|e| e.is_live()).map(|e| e.id).collect();
        let delete: Vec<Id> = delete.iter().map(|e| e.id).collect();
        if !retire.is_empty() {
            self.store.retire_edges(&retire, now).await?;
        }
        if !delete.is_empty() {
            self.store.delete_edges(&delete).await?;
        }
        Ok(())
    }

    pub async fn delete_container(&self, caller: &Caller, id: Id) -> Result<bool> {
        let ds = self.container_datastore(id).await?;
        caller.require([ds], Permission::Editor, "deleteContainer")?;
        let edges = self.store.edges_touching_containers(&[id]).await?;
        self.remove_edges(edges).await?;
        Ok(self.store.delete_container(id).await?)
    }

    pub async fn delete_field(&self, caller: &Caller, id: Id) -> Result<bool> {
        let Some(field) = self.store.fields_by_ids(&[id]).await?.pop() else {
            return Err(field_not_found(id));
        };
        let ds = self.container_datastore(field.container_id).await?;
        caller.require([ds], Permission::Editor, "deleteField")?;
        let edges = self.store.edges_touching_fields(&[id]).await?;
        self.remove_edges(edges).await?;
        Ok(self.store.delete_field(id).await?)
    }

    pub async fn delete_datastore(&self, caller: &Caller, id: Id) -> Result<bool> {
        caller.require_unrestricted_admin("deleteDatastore")?;
        if self.store.datastores_by_ids(&[id]).await?.is_empty() {
            return Err(datastore_not_found(id));
        }
        let mut containers = Vec::new();
        let mut page = 1;
        loop {
            let p = self.store.list_containers(Some(id), None, PageRequest { page, size: MAX_PAGE_SIZE }).await?;
            let done = p.items.len() < MAX_PAGE_SIZE as usize;
            containers.extend(p.items.into_iter().map(|c| c.id));
            if done {
                break;
            }
            page += 1;
        }
        for chunk in containers.chunks(MAX_PAGE_SIZE as usize) {
            let edges = self.store.edges_touching_containers(chunk).await?;
            self.remove_edges(edges).await?;
        }
        Ok(self.store.delete_datastore(id).await?)
    }

    pub async fn container_fields(
        &self,
        container_id: Id,
        name: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<Field>> {
        self.require_container(container_id).await?;
        Ok(self.store.container_fields(container_id, name, page).await?)
    }

    // ---------------- edges ----------------

    async fn container_end(&self, id: Id) -> Result<End> {
        match self.store.containers_by_ids(&[id]).await?.pop() {
            Some(c) => Ok(End::Container { id: c.id }),
            None => Err(container_not_found(id)),
        }
    }

    async fn field_end(&self, id: Id) -> Result<End> {
        match self.store.fields_by_ids(&[id]).await?.pop() {
            Some(f) => Ok(End::Field { id: f.id, container_id: f.container_id }),
            None => Err(field_not_found(id)),
        }
    }

    pub async fn create_edge(&self, caller: &Caller, input: CreateEdge) -> Result<Edge> {
        let is_field = check_granularity(
            input.source_container_id,
            input.source_field_id,
            input.target_container_id,
            input.target_field_id,
        )
        .map_err(Error::BadInput)?;
        let source_type = input.source_type.unwrap_or_else(|| "manual".to_string());
        if !is_user_source_type(&source_type) {
            return Err(not_a_user_source_type(&source_type));
        }
        let (source, target) = if is_field {
            (
                self.field_end(input.source_field_id.unwrap_or_default()).await?,
                self.field_end(input.target_field_id.unwrap_or_default()).await?,
            )
        } else {
            (
                self.container_end(input.source_container_id.unwrap_or_default()).await?,
                self.container_end(input.target_container_id.unwrap_or_default()).await?,
            )
        };
        if source == target {
            return Err(Error::BadInput("source and target must be different".into()));
        }
        if input.derived.is_some() && !is_field {
            return Err(Error::BadInput(
                "derived applies to field edges (a column's value transformed); omit it for a container edge".into(),
            ));
        }
        caller.require(self.datastores_of_ends([&source, &target]).await?, Permission::Editor, "createEdge")?;
        let mut edges = vec![NewEdge {
            source: source.clone(),
            target: target.clone(),
            description: input.description,
            source_type: source_type.clone(),
            operation: None,
            derived: input.derived,
            transformations: None,
            last_asserted_at: None,
        }];
        if let (End::Field { container_id: sc, .. }, End::Field { container_id: tc, .. }) = (&source, &target) {
            if rules::wants_auto_container_edge(&source_type, *sc, *tc)
                && !self.store.live_container_edge_exists(*sc, *tc).await?
            {
                edges.push(NewEdge {
                    source: End::Container { id: *sc },
                    target: End::Container { id: *tc },
                    description: None,
                    source_type: "manual".into(),
                    operation: None,
                    derived: None,
                    transformations: None,
                    last_asserted_at: None,
                });
            }
        }
        let created = self.store.create_edges(edges, false, crate::domain::now()).await?;
        created.into_iter().next().ok_or_else(|| Error::Internal("edge creation returned nothing".into()))
    }

    /// An edge the caller may change: EDITOR on the datastores of both its ends.
    async fn editable_edge(&self, caller: &Caller, id: Id, operation: &str) -> Result<Edge> {
        let edge = self.store.edges_by_ids(&[id]).await?.pop().ok_or_else(|| edge_not_found(id))?;
        caller.require(self.datastores_of_ends([&edge.source, &edge.target]).await?, Permission::Editor, operation)?;
        Ok(edge)
    }

    pub async fn update_edge(&self, caller: &Caller, id: Id, patch: EdgePatch) -> Result<Edge> {
        let edge = self.editable_edge(caller, id, "updateEdge").await?;
        if let Some(st) = &patch.source_type {
            if !is_user_source_type(st) {
                return Err(not_a_user_source_type(st));
            }
            if !is_user_source_type(&edge.source_type) && st != &edge.source_type {
                return Err(Error::BadInput(format!(
                    "The sourceType of edge {id} is maintained by its provider ({}) and cannot be changed",
                    edge.source_type
                )));
            }
        }
        self.store.update_edge(id, patch).await?.ok_or_else(|| edge_not_found(id))
    }

    pub async fn delete_edge(&self, caller: &Caller, id: Id) -> Result<bool> {
        let edge = self.editable_edge(caller, id, "deleteEdge").await?;
        self.remove_edges(vec![edge]).await?;
        Ok(true)
    }

    pub async fn list_edges(&self, filter: EdgeFilter, page: PageRequest) -> Result<Page<Edge>> {
        Ok(self.store.list_edges(&filter, page).await?)
    }

    // ---------------- graph queries ----------------

    async fn require_container(&self, id: Id) -> Result<()> {
        if self.store.containers_by_ids(&[id]).await?.is_empty() {
            return Err(container_not_found(id));
        }
        Ok(())
    }

    async fn require_field(&self, id: Id) -> Result<()> {
        if self.store.fields_by_ids(&[id]).await?.is_empty() {
            return Err(field_not_found(id));
        }
        Ok(())
    }

    /// An external asset's live container-level edges (of its source type): what a traversal
    /// centred on it starts from. Empty when no live edge names it.
    async fn external_edges(&self, source_type: &str, fqn: &str) -> Result<Vec<Edge>> {
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
    async fn external_start(&self, id: &str) -> Result<(Start, String)> {
        let not_found = || Error::NotFound(format!("External node {id:?} not found"));
        let (source_type, fqn) = parse_external_node_id(id).ok_or_else(not_found)?;
        let edges = self.external_edges(source_type, fqn).await?;
        if edges.is_empty() {
            return Err(not_found());
        }
        Ok((Start::External { fqn: fqn.to_string(), edges }, source_type.to_string()))
    }

    /// The edges a traversal reads first from its start in `direction`.
    async fn first_edges(&self, start: &Start, direction: Direction, over_fields: bool) -> Result<Vec<Edge>> {
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
    async fn expand_containers(
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

    pub async fn lineage_graph(&self, container_id: Id, depth: i64, side: Option<Direction>) -> Result<LineageGraph> {
        let depth = validate_depth(depth)?;
        self.lineage_graph_with(container_id, depth as i64, side, GraphOptions::default()).await
    }

    /// `lineage_graph` with a node budget and the frontier counted (see `GraphOptions`).
    pub async fn lineage_graph_with(
        &self,
        container_id: Id,
        depth: i64,
        side: Option<Direction>,
        options: GraphOptions,
    ) -> Result<LineageGraph> {
        let depth = validate_depth(depth)?;
        if let Some(n) = options.max_nodes {
            max_nodes(n as i64)?;
        }
        self.require_container(container_id).await?;
        self.graph_from(Start::Node(container_id), None, depth, side, options).await
    }

    /// The lineage graph centred on an external asset (`ext:<source_type>:<fqn>`): the same
    /// traversal, started from the asset's live edges; the asset is the external node flagged
    /// `is_target`.
    pub async fn external_lineage_graph(&self, id: &str, depth: i64, side: Option<Direction>) -> Result<LineageGraph> {
        let depth = validate_depth(depth)?;
        let (start, source_type) = self.external_start(id).await?;
        self.graph_from(start, Some(source_type), depth, side, GraphOptions::default()).await
    }

    async fn graph_from(
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
    async fn transitive(
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
