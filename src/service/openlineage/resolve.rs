//! Resolving OpenLineage datasets to catalog containers: the `Resolver` an event's datasets go
//! through (namespace to datastores, name to the best-matching container, symlinks, auto-creation)
//! and `Known`, what it learnt, handed from event to event so a batch reads each dataset once.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::auth::Permission;
use crate::domain::{Container, Datastore, End, Id};
use crate::error::{Error, Result};
use crate::ingest::openlineage::{self as ol, naming, Event};
use crate::service::{Caller, Lineage};

use super::Unresolved;

/// What resolution learns that holds for a whole batch of events: a batch's events name the
/// same datasets and fields over and over, and within a store session no other writer can add
/// a container or field meanwhile (the batch's own creations update it).
#[derive(Default)]
pub(super) struct Known {
    /// Datasets resolved so far, by identity (see `ident_key`).
    resolved: HashMap<(String, String), Resolution>,
    /// The candidate containers read so far (for a chunk by `Resolver::read_ahead`, for an event
    /// by `prefetch`), and the identities whose candidates they all are.
    pool: Pool,
    prefetched: HashSet<(String, String)>,
    /// Field ids by lowercased name, per container.
    fields: HashMap<Id, HashMap<String, Id>>,
    /// The datastore of each container read or created.
    datastores: HashMap<Id, Id>,
}

/// A dataset identity as resolution keys it: the namespace folded by the naming conventions, the
/// name trimmed and lowercased (warehouses fold unquoted names; producers spell them either way).
pub(super) fn ident_key(namespace: &str, name: &str) -> (String, String) {
    (naming::normalize_namespace(namespace), name.trim().to_lowercase())
}

/// At most this many container pairs are read ahead for a chunk (`Known::pairs`); a chunk that
/// makes more reads its edges per event.
const MAX_PAIRS: usize = 20_000;

impl Known {
    /// Drops what datasets resolved to, which depends on the caller's permissions (a group of
    /// requests from several callers), and keeps the candidates and fields read.
    pub(super) fn forget_resolutions(&mut self) {
        self.resolved.clear();
    }

    /// The (source, target) container pairs a chunk's events may connect, from the candidates
    /// read ahead: per run (or per event outside one), every input's and column-lineage input's
    /// candidate to every output's. Empty when they are more than [`MAX_PAIRS`].
    pub(super) fn pairs(&self, events: &[&Event]) -> Vec<(Id, Id)> {
        let candidates = |d: (&str, &str)| {
            let (ns, name) = ident_key(d.0, d.1);
            self.prefetched
                .contains(&(ns, name.clone()))
                .then(|| self.pool.candidates(&name).into_iter().map(|c| c.id))
                .into_iter()
                .flatten()
        };
        // A run's events pair each other's datasets; an event without a run stands alone.
        type Sides = (BTreeSet<Id>, BTreeSet<Id>);
        let mut sides: HashMap<(Option<&str>, usize), Sides> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            let key = match e.run_id.as_deref() {
                Some(run) => (Some(run), 0),
                None => (None, i),
            };
            let (ins, outs) = sides.entry(key).or_default();
            for d in &e.inputs {
                ins.extend(identities(d).flat_map(|(ns, name, _)| candidates((ns, name))));
            }
            for d in e.outputs.iter().chain(e.dataset.iter()) {
                outs.extend(identities(d).flat_map(|(ns, name, _)| candidates((ns, name))));
                ins.extend(d.column_inputs().flat_map(|i| candidates((&i.namespace, &i.name))));
            }
        }
        let mut pairs = BTreeSet::new();
        for (ins, outs) in sides.values() {
            for s in ins {
                pairs.extend(outs.iter().map(|t| (*s, *t)));
                if pairs.len() > MAX_PAIRS {
                    return Vec::new();
                }
            }
        }
        pairs.into_iter().collect()
    }
}

/// An asset that is not in the catalog keeps its OpenLineage identity as its fqn.
pub fn external_fqn(namespace: &str, name: &str) -> String {
    naming::external_fqn(namespace, name)
}

/// Every identity of a dataset: its own, then its `symlinks` (each with the symlink's type).
fn identities(d: &ol::Dataset) -> impl Iterator<Item = (&str, &str, Option<&str>)> {
    std::iter::once((d.namespace.as_str(), d.name.as_str(), None))
        .chain(d.symlinks.iter().map(|l| (l.namespace.as_str(), l.name.as_str(), l.kind.as_deref())))
}

/// The identities a container is created under, best first: a `TABLE` symlink (the table a
/// path is the storage of), then the dataset's own name, then its other symlinks.
fn creation_order(d: &ol::Dataset) -> Vec<(&str, &str, Option<&str>)> {
    let table = |k: Option<&str>| k.is_some_and(|k| k.eq_ignore_ascii_case("TABLE"));
    let mut out: Vec<_> = identities(d).filter(|(_, _, k)| table(*k)).collect();
    out.push((d.namespace.as_str(), d.name.as_str(), None));
    out.extend(
        d.symlinks
            .iter()
            .filter(|l| !table(l.kind.as_deref()))
            .map(|l| (l.namespace.as_str(), l.name.as_str(), l.kind.as_deref())),
    );
    out
}

/// Candidate containers read ahead, by lowercased name (as `containers_by_names` matches them:
/// both stores lowercase with Rust's `to_lowercase`), so resolving a name reads only the
/// containers a store read for its `name_candidates` would return, whatever the pool's size.
#[derive(Default)]
struct Pool(HashMap<String, Vec<Container>>);

impl Pool {
    fn add(&mut self, c: Container) {
        let same = self.0.entry(c.name.to_lowercase()).or_default();
        match same.iter_mut().find(|k| k.id == c.id) {
            Some(k) => *k = c,
            None => same.push(c),
        }
    }

    /// The containers named by one of `wanted`'s candidates, by id, as the store read returns them.
    fn candidates(&self, wanted: &str) -> Vec<Container> {
        let mut out: Vec<Container> =
            crate::service::name_candidates(wanted).iter().filter_map(|n| self.0.get(n)).flatten().cloned().collect();
        out.sort_by_key(|c| c.id);
        out.dedup_by_key(|c| c.id);
        out
    }
}

/// Every identity an event's datasets may resolve through: each dataset's own and its symlinks,
/// a RENAME's previous name, the datasets its column lineage reads.
fn wanted_keys(event: &Event) -> BTreeSet<(String, String)> {
    let mut wanted = BTreeSet::new();
    for d in event.datasets() {
        wanted.extend(identities(d).map(|(ns, name, _)| ident_key(ns, name)));
        if let Some(prev) = d.lifecycle.as_ref().and_then(|l| l.previous.as_ref()) {
            wanted.insert(ident_key(&prev.namespace, &prev.name));
        }
        wanted.extend(d.column_inputs().map(|input| ident_key(&input.namespace, &input.name)));
    }
    wanted
}

/// Whether resolving the event looks fields up: schemas and column lineage name them.
fn names_fields(event: &Event) -> bool {
    event.datasets().any(|d| !d.schema.is_empty() || !d.column_lineage.is_empty() || !d.dataset_wide.is_empty())
}

/// The best match for `wanted` (trimmed, lowercased) in each of `datastores` (see
/// `match_rank`), best first, ties in datastore order.
fn best_matches(pool: &[Container], datastores: &[Id], wanted: &str) -> Vec<Container> {
    let mut best: Vec<(u8, usize, Container)> = Vec::new();
    for (order, ds) in datastores.iter().enumerate() {
        let mut top: Option<(u8, &Container)> = None;
        for c in pool.iter().filter(|c| c.datastore_id == *ds) {
            let rank = crate::service::match_rank(wanted, c);
            if rank > 0 && top.is_none_or(|(r, _)| rank > r) {
                top = Some((rank, c));
            }
        }
        if let Some((rank, c)) = top {
            best.push((rank, order, c.clone()));
        }
    }
    best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    best.into_iter().map(|(_, _, c)| c).collect()
}

/// What an OpenLineage dataset identity denotes now, creating nothing and whoever asks: the
/// best-matching container of the datastores that list its namespace, else the external asset
/// its lineage was recorded under (when a live edge names it), else nothing.
pub(crate) async fn lookup_dataset(
    lineage: &Lineage,
    namespace: &str,
    name: &str,
) -> Result<Option<std::result::Result<Container, crate::service::ExternalNode>>> {
    let (ns, wanted) = ident_key(namespace, name);
    let datastores: Vec<Id> = lineage
        .store
        .list_datastores()
        .await?
        .into_iter()
        .filter(|d| d.namespaces.iter().any(|n| naming::normalize_namespace(n) == ns))
        .map(|d| d.id)
        .collect();
    if !datastores.is_empty() {
        let pool =
            lineage.store.containers_by_names(&crate::service::name_candidates(&wanted), Some(&datastores)).await?;
        if let Some(c) = best_matches(&pool, &datastores, &wanted).into_iter().next() {
            return Ok(Some(Ok(c)));
        }
    }
    if let Some(c) = alias_target(lineage, namespace, name).await?.into_iter().next() {
        return Ok(Some(Ok(c)));
    }
    // The fqn as recorded (the namespace as sent), then with the namespace folded.
    let mut fqns = vec![external_fqn(namespace.trim(), name.trim()), external_fqn(&ns, name.trim())];
    fqns.dedup();
    for fqn in fqns {
        let id = crate::service::external_node_id(super::SOURCE_TYPE, &fqn);
        if let Some(node) = lineage.external_node(&id).await? {
            return Ok(Some(Err(node)));
        }
    }
    Ok(None)
}

/// The kind of the small documents that keep a created container's other names: key the
/// identity (`ident_key`, joined with `|`), value `{"container": id}`.
const ALIAS_DOC: &str = "openlineage-alias";

/// The live container an alias names, if any (none when the container is gone since).
async fn alias_target(lineage: &Lineage, namespace: &str, name: &str) -> Result<Vec<Container>> {
    let (ns, name) = ident_key(namespace, name);
    let Some(doc) = lineage.store.get_doc(ALIAS_DOC, &format!("{ns}|{name}")).await? else { return Ok(Vec::new()) };
    let Some(id) = doc.get("container").and_then(serde_json::Value::as_i64) else { return Ok(Vec::new()) };
    Ok(lineage.store.containers_by_ids(&[id]).await?)
}

/// What a dataset resolves to: the best-matching container in each datastore it matches that
/// the caller can edit (best first), or why it matches none.
type Resolution = std::result::Result<Vec<Container>, Unresolved>;

/// One end a dataset gives a connection: a container (with it), or an external asset.
type Resolved = (End, Option<Container>);

/// Resolves OpenLineage datasets to containers, caching per event. Seed 000: where several
/// datastores match a dataset, the event applies to the matches the caller can edit; a dataset
/// whose namespace a datastore lists but with no writable match is denied (tables not yet
/// catalogued included); a dataset no datastore lists stays an external endpoint. A dataset's
/// `symlinks` are other names of the same asset: it resolves through any of them, is created
/// under the best of them, and each of its names then resolves to what it resolved to.
pub(super) struct Resolver<'a> {
    lineage: &'a Lineage,
    caller: &'a Caller,
    datastores: Vec<Datastore>,
    /// Set when zero-setup mode created a datastore: the request's list is handed on.
    datastores_changed: bool,
    cache: HashMap<(String, String), Resolution>,
    /// Containers read ahead (see `Known`), and the identities covered.
    pool: Pool,
    prefetched: HashSet<(String, String)>,
    /// Field ids by lowercased name, per container (see `Known`).
    pub(super) fields: HashMap<Id, HashMap<String, Id>>,
    /// Container id to datastore id of every container read or created (see `Known`).
    container_datastores: HashMap<Id, Id>,
    /// The event's datasets that have symlinks, by each of their identities: a column-lineage
    /// input field names its dataset by one identity and resolves through all of them.
    aliases: HashMap<(String, String), ol::Dataset>,
    /// Field names the event's column lineage reads from each input identity (for creation).
    input_fields: HashMap<(String, String), BTreeSet<String>>,
    /// Identities of the datasets that resolved in this event.
    resolved_keys: HashSet<(String, String)>,
}

impl<'a> Resolver<'a> {
    pub(super) fn new(
        lineage: &'a Lineage,
        caller: &'a Caller,
        datastores: Vec<Datastore>,
        known: Known,
    ) -> Resolver<'a> {
        Resolver {
            lineage,
            caller,
            datastores,
            datastores_changed: false,
            cache: known.resolved,
            pool: known.pool,
            prefetched: known.prefetched,
            fields: known.fields,
            container_datastores: known.datastores,
            aliases: HashMap::new(),
            input_fields: HashMap::new(),
            resolved_keys: HashSet::new(),
        }
    }

    /// What this resolver learnt, for the next event's; and the datastores when it created one.
    pub(super) fn into_known(self) -> (Known, Option<Vec<Datastore>>) {
        let datastores = self.datastores_changed.then_some(self.datastores);
        let known = Known {
            resolved: self.cache,
            pool: self.pool,
            prefetched: self.prefetched,
            fields: self.fields,
            datastores: self.container_datastores,
        };
        (known, datastores)
    }

    pub(super) fn creates(&self) -> bool {
        self.lineage.auto_create || self.lineage.zero_setup
    }

    /// The datastores that list the namespace, in the order the store lists datastores.
    fn namespace_datastores(&self, namespace: &str) -> Vec<Id> {
        let ns = naming::normalize_namespace(namespace);
        self.datastores
            .iter()
            .filter(|d| d.namespaces.iter().any(|n| naming::normalize_namespace(n) == ns))
            .map(|d| d.id)
            .collect()
    }

    fn writable(&self, datastore: Id) -> bool {
        self.caller.has(datastore, Permission::Editor)
    }

    /// Whether an identity belongs to a dataset that resolved in this event.
    pub(super) fn resolved(&self, namespace: &str, name: &str) -> bool {
        self.resolved_keys.contains(&ident_key(namespace, name))
    }

    /// The event's dataset a column-lineage input names, with its symlinks, when the event
    /// carries it; otherwise a dataset of that one identity.
    pub(super) fn input_dataset(&self, namespace: &str, name: &str) -> ol::Dataset {
        match self.aliases.get(&ident_key(namespace, name)) {
            Some(d) => d.clone(),
            None => ol::Dataset { namespace: namespace.to_string(), name: name.to_string(), ..Default::default() },
        }
    }

    /// Reads the candidate containers of every dataset the event names in one store call, so
    /// resolving an event costs one lookup rather than one per dataset (none when the chunk's
    /// `read_ahead` covered them).
    pub(super) async fn prefetch(&mut self, event: &Event) -> Result<()> {
        let creates = self.creates();
        for d in event.datasets() {
            if !d.symlinks.is_empty() {
                for (ns, name, _) in identities(d) {
                    self.aliases.insert(ident_key(ns, name), d.clone());
                }
            }
            if creates {
                for input in d.column_inputs() {
                    let key = ident_key(&input.namespace, &input.name);
                    self.input_fields.entry(key).or_default().insert(input.field.clone());
                }
            }
        }
        self.read_candidates(wanted_keys(event), names_fields(event)).await
    }

    /// Reads the candidate containers (and, when an event names fields, their fields) of every
    /// dataset a chunk's events name, in one store call each, before the first is applied
    /// (issue #44, item 1: "resolve every dataset name of the chunk in one read"); each event's
    /// `prefetch` then reads only what the chunk's own creations changed.
    pub(super) async fn read_ahead(&mut self, events: &[&Event]) -> Result<()> {
        let wanted = events.iter().flat_map(|e| wanted_keys(e)).collect();
        self.read_candidates(wanted, events.iter().any(|e| names_fields(e))).await
    }

    /// One `containers_by_names` for the identities neither resolved nor read before, and one
    /// `field_names` for the candidates' and resolved containers' fields not read yet.
    async fn read_candidates(&mut self, wanted: BTreeSet<(String, String)>, names_fields: bool) -> Result<()> {
        let mut names = BTreeSet::new();
        let mut datastores = BTreeSet::new();
        let mut covered = Vec::new();
        // Containers resolved or read before: no read, but their fields may be.
        let mut known: Vec<Id> = Vec::new();
        for key in wanted {
            if let Some(hit) = self.cache.get(&key) {
                known.extend(hit.iter().flatten().map(|c| c.id));
                continue;
            }
            if self.prefetched.contains(&key) {
                known.extend(self.pool.candidates(&key.1).iter().map(|c| c.id));
                continue;
            }
            let ds = self.namespace_datastores(&key.0);
            if ds.is_empty() {
                continue;
            }
            names.extend(crate::service::name_candidates(&key.1));
            datastores.extend(ds);
            covered.push(key);
        }
        if !names.is_empty() {
            let names: Vec<String> = names.into_iter().collect();
            let datastores: Vec<Id> = datastores.into_iter().collect();
            let read = self.lineage.store.containers_by_names(&names, Some(&datastores)).await?;
            self.container_datastores.extend(read.iter().map(|c| (c.id, c.datastore_id)));
            known.extend(read.iter().map(|c| c.id));
            read.into_iter().for_each(|c| self.pool.add(c));
            self.prefetched.extend(covered);
        }
        let mut missing: Vec<Id> = known.into_iter().filter(|id| !self.fields.contains_key(id)).collect();
        missing.sort_unstable();
        missing.dedup();
        if names_fields && !missing.is_empty() {
            self.fields.extend(self.lineage.field_names(&missing).await?);
        }
        Ok(())
    }

    /// One identity: its containers, or why it has none. `kind` is a symlink's type.
    async fn find(&mut self, namespace: &str, name: &str, kind: Option<&str>) -> Result<Resolution> {
        let key = ident_key(namespace, name);
        if let Some(hit) = self.cache.get(&key) {
            return Ok(hit.clone());
        }
        let matching = self.namespace_datastores(namespace);
        let unresolved = |reason: &'static str, message: String| Unresolved {
            namespace: namespace.to_string(),
            name: name.to_string(),
            field: None,
            reason,
            message,
        };
        let result = if matching.is_empty() {
            Err(unresolved("namespaceNotMapped", format!("no datastore lists the namespace {namespace:?}")))
        } else {
            let found = self.lookup(&matching, &key).await?;
            if !found.is_empty() {
                let writable: Vec<Container> =
                    found.iter().filter(|c| self.writable(c.datastore_id)).cloned().collect();
                if writable.is_empty() {
                    let ids: Vec<String> = found.iter().map(|c| c.datastore_id.to_string()).collect();
                    return Err(Error::Forbidden(format!(
                        "the dataset {namespace}/{name} matches containers only in datastores you cannot edit ({}); \
                         this OpenLineage event needs EDITOR on at least one of them",
                        ids.join(", ")
                    )));
                }
                Ok(writable)
            } else if !matching.iter().any(|d| self.writable(*d)) {
                let ids: Vec<String> = matching.iter().map(Id::to_string).collect();
                return Err(Error::Forbidden(format!(
                    "the dataset {namespace}/{name} is not catalogued and its namespace belongs to datastores you \
                     cannot edit ({}); this OpenLineage event needs EDITOR on at least one of them",
                    ids.join(", ")
                )));
            } else {
                match naming::parse(namespace, name, kind) {
                    Err(naming::NameError::Unparsable) => Err(unresolved(
                        "unparsableName",
                        format!("{name:?} names no dataset by the naming conventions of {namespace:?}"),
                    )),
                    // Seed 002 calls a bare table name unparsable, auto-creation or not (the
                    // zero-setup mode creates it all the same).
                    Err(naming::NameError::NoSchema) => Err(unresolved(
                        "unparsableName",
                        format!("{name:?} has no schema and table to match or create a container with"),
                    )),
                    Ok(n) if n.kind != naming::NameKind::Table && !self.creates() => {
                        Err(unresolved("notFound", format!("no container matches the path or topic {name:?}")))
                    }
                    Ok(_) => Err(unresolved(
                        "creationDisabled",
                        format!("no container {name:?} in the datastore; auto-creation is off"),
                    )),
                }
            }
        };
        if let Ok(found) = &result {
            self.container_datastores.extend(found.iter().map(|c| (c.id, c.datastore_id)));
        }
        self.cache.insert(key, result.clone());
        Ok(result)
    }

    /// The best match in each of `datastores` (see `match_rank`), best first, ties in datastore
    /// order. Case-insensitive: warehouses fold unquoted names, producers spell them either way.
    async fn lookup(&self, datastores: &[Id], key: &(String, String)) -> Result<Vec<Container>> {
        let wanted = &key.1;
        let pool = if self.prefetched.contains(key) {
            self.pool.candidates(wanted)
        } else {
            self.lineage.store.containers_by_names(&crate::service::name_candidates(wanted), Some(datastores)).await?
        };
        Ok(best_matches(&pool, datastores, wanted))
    }

    /// Container id to datastore id of every container this resolver has read or created.
    pub(super) fn known_datastores(&self) -> &HashMap<Id, Id> {
        &self.container_datastores
    }

    /// Every name of the dataset now resolves to `found`.
    fn remember(&mut self, d: &ol::Dataset, found: &[Container]) {
        for (ns, name, _) in identities(d) {
            let key = ident_key(ns, name);
            self.cache.insert(key.clone(), Ok(found.to_vec()));
            self.resolved_keys.insert(key);
        }
        self.container_datastores.extend(found.iter().map(|c| (c.id, c.datastore_id)));
    }

    /// The containers of the first of the dataset's identities that resolves, and the failures
    /// of those before it (all of them when none resolves). When creation is on, a name no
    /// container has may still be an alias recorded when a container was created under another
    /// name of the same dataset (a path whose `TABLE` symlink named the container).
    async fn first_found(&mut self, d: &ol::Dataset) -> Result<std::result::Result<Vec<Container>, Vec<Unresolved>>> {
        let mut failures = Vec::new();
        for (ns, name, kind) in identities(d) {
            match self.find(ns, name, kind).await? {
                Ok(found) => {
                    self.remember(d, &found);
                    return Ok(Ok(found));
                }
                Err(why) => failures.push(why),
            }
        }
        if self.creates() {
            for (ns, name, _) in identities(d) {
                let found = alias_target(self.lineage, ns, name).await?;
                let found: Vec<Container> = found.into_iter().filter(|c| self.writable(c.datastore_id)).collect();
                if !found.is_empty() {
                    self.remember(d, &found);
                    return Ok(Ok(found));
                }
            }
        }
        Ok(Err(failures))
    }

    /// The containers of a dataset through any of its names; none when no name resolves (no
    /// creation here).
    pub(super) async fn containers(&mut self, d: &ol::Dataset) -> Result<Vec<Container>> {
        Ok(self.first_found(d).await?.unwrap_or_default())
    }

    /// The ends a dataset already has, creating nothing: its containers through any of its
    /// names, and the external end of each name (a DROP or RENAME reaches lineage recorded
    /// under any of them).
    pub(super) async fn existing_ends(
        &mut self,
        d: &ol::Dataset,
        unresolved: &mut BTreeSet<Unresolved>,
    ) -> Result<Vec<Resolved>> {
        let mut out: Vec<Resolved> = match self.first_found(d).await? {
            Ok(found) => found.into_iter().map(|c| (End::Container { id: c.id }, Some(c))).collect(),
            Err(failures) => {
                unresolved.extend(failures.into_iter().next());
                Vec::new()
            }
        };
        for (ns, name, _) in identities(d) {
            let end = End::External { fqn: external_fqn(ns, name) };
            if !out.iter().any(|(e, _)| *e == end) {
                out.push((end, None));
            }
        }
        Ok(out)
    }

    /// The dataset's ends: its containers through any of its names, else auto-created (seed
    /// 002's auto-creation, or the zero-setup mode), else one external asset.
    pub(super) async fn end(
        &mut self,
        d: &ol::Dataset,
        unresolved: &mut BTreeSet<Unresolved>,
    ) -> Result<Vec<Resolved>> {
        let as_ends = |found: Vec<Container>| -> Vec<Resolved> {
            found.into_iter().map(|c| (End::Container { id: c.id }, Some(c))).collect()
        };
        let failures = match self.first_found(d).await? {
            Ok(found) => {
                if self.lineage.zero_setup {
                    self.add_missing_fields(d, &found).await?;
                }
                return Ok(as_ends(found));
            }
            Err(failures) => failures,
        };
        match self.auto_create(d, failures).await? {
            Ok(c) => return Ok(as_ends(vec![c])),
            Err(why) => {
                unresolved.insert(why);
            }
        }
        Ok(vec![(End::External { fqn: external_fqn(&d.namespace, &d.name) }, None)])
    }

    /// Zero-setup mode: the fields the event names for a dataset (its schema facet, its column
    /// lineage) that its containers lack are added to them, so a column a later event names
    /// first is lineage, not `missingColumns`. Fields already there stay as they are. One read of
    /// each container's field names per request, and a write only when one is missing.
    async fn add_missing_fields(&mut self, d: &ol::Dataset, found: &[Container]) -> Result<()> {
        let wanted = self.creation_fields(d);
        if wanted.is_empty() {
            return Ok(());
        }
        for c in found {
            if !self.fields.contains_key(&c.id) {
                let read = self.lineage.field_names(&[c.id]).await?;
                self.fields.extend(read);
            }
            let known = self.fields.get(&c.id);
            let missing: Vec<crate::domain::FieldInput> = wanted
                .iter()
                .filter(|f| !known.is_some_and(|k| k.contains_key(&f.name.to_lowercase())))
                .cloned()
                .collect();
            if missing.is_empty() {
                continue;
            }
            let input = crate::domain::ContainerInput {
                datastore_id: c.datastore_id,
                name: c.name.clone(),
                database: c.database.clone(),
                schema: c.schema.clone(),
                fields: missing,
                ..Default::default()
            };
            let (_, fields) = self.lineage.store.upsert_container(input).await?;
            tracing::info!(
                container = c.id,
                "fields an OpenLineage event names added to the container (zero-setup mode)"
            );
            let map = self.fields.entry(c.id).or_default();
            for f in fields {
                map.insert(f.name.to_lowercase(), f.id);
            }
        }
        Ok(())
    }

    /// The fields a container created for the dataset gets: its `schema` facet's (with types),
    /// then those its column lineage writes and the event's column lineage reads from it.
    fn creation_fields(&self, d: &ol::Dataset) -> Vec<crate::domain::FieldInput> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut out = Vec::new();
        let mut add = |name: &str, data_type: Option<String>| {
            if seen.insert(name.to_lowercase()) {
                out.push(crate::domain::FieldInput { name: name.to_string(), data_type, ..Default::default() });
            }
        };
        for f in &d.schema {
            add(&f.name, f.data_type.clone());
        }
        for e in &d.column_lineage {
            add(&e.output_field, None);
        }
        for (ns, name, _) in identities(d) {
            for f in self.input_fields.get(&ident_key(ns, name)).into_iter().flatten() {
                add(f, None);
            }
        }
        out
    }

    /// Creation, when enabled: seed 002's auto-creation makes a container for a dataset whose
    /// namespace a datastore the caller can edit lists but whose table or path is missing, with
    /// the dataset's fields (it needs at least one); the zero-setup mode also gives a namespace
    /// no datastore lists a datastore of its own (unrestricted admins only: a datastore is
    /// theirs to create) and creates every dataset, fields or not. The container is created
    /// under the dataset's best name (`creation_order`) and every name then resolves to it. A
    /// dataset being dropped is never created. Otherwise, the reason it stays unresolved.
    async fn auto_create(
        &mut self,
        d: &ol::Dataset,
        failures: Vec<Unresolved>,
    ) -> Result<std::result::Result<Container, Unresolved>> {
        let own = failures.first().cloned().unwrap_or_else(|| Unresolved {
            namespace: d.namespace.clone(),
            name: d.name.clone(),
            field: None,
            reason: "notFound",
            message: "no container matches the dataset".into(),
        });
        // The most telling failure: one in a namespace some datastore lists, else the dataset's own.
        let best = failures.iter().find(|u| u.reason != "namespaceNotMapped").cloned().unwrap_or(own);
        let dropping = d.lifecycle.as_ref().is_some_and(|l| l.change == ol::LifecycleChange::Drop);
        if !self.creates() || dropping {
            return Ok(Err(best));
        }
        let zero = self.lineage.zero_setup;
        let fields = self.creation_fields(d);
        let reason_of = |ns: &str, name: &str| {
            let key = ident_key(ns, name);
            failures.iter().find(|u| ident_key(&u.namespace, &u.name) == key).map(|u| u.reason)
        };
        let mut chosen = None;
        for (ns, name, kind) in creation_order(d) {
            let creatable = match reason_of(ns, name) {
                Some("creationDisabled") | Some("notFound") => true,
                Some("unparsableName") => zero && naming::parse(ns, name, kind) == Err(naming::NameError::NoSchema),
                Some("namespaceNotMapped") => zero && self.caller.unrestricted_admin,
                _ => false,
            };
            if creatable {
                chosen = Some((ns, name, kind));
                break;
            }
        }
        let Some((ns, name, kind)) = chosen else { return Ok(Err(best)) };
        if fields.is_empty() && !zero {
            return Ok(Err(Unresolved {
                reason: "missingColumns",
                message: "the table is missing and the event's schema facet carries no columns".into(),
                ..best
            }));
        }
        let parsed = naming::parse(ns, name, kind);
        let (database, schema, table) = match &parsed {
            Ok(n) => (n.database.clone(), n.schema.clone(), n.name.clone()),
            Err(naming::NameError::NoSchema) => (None, None, name.trim().to_string()),
            Err(naming::NameError::Unparsable) => return Ok(Err(best)),
        };
        let ds = match self.namespace_datastores(ns).into_iter().find(|ds| self.writable(*ds)) {
            Some(ds) => ds,
            None if zero && self.caller.unrestricted_admin => {
                let kind = parsed.as_ref().map(|n| n.kind).unwrap_or(naming::NameKind::Table);
                self.datastore_for(ns, kind).await?
            }
            None => return Ok(Err(best)),
        };
        let input = crate::domain::ContainerInput {
            datastore_id: ds,
            name: table,
            database,
            schema,
            fields,
            ..Default::default()
        };
        let (container, _) = self.lineage.store.upsert_container(input).await?;
        tracing::info!(container = container.id, dataset = %d.name, "container created from an OpenLineage dataset");
        // The dataset's other names stay its aliases for later requests (a DROP or a column
        // lineage input may name it by its path alone).
        for (other_ns, other_name, _) in identities(d) {
            if ident_key(other_ns, other_name) != ident_key(ns, name) {
                let (k_ns, k_name) = ident_key(other_ns, other_name);
                self.lineage
                    .store
                    .put_doc(ALIAS_DOC, &format!("{k_ns}|{k_name}"), serde_json::json!({"container": container.id}))
                    .await?;
            }
        }
        // Lineage recorded under the dataset's placeholder before (its namespace listed since)
        // moves to the new container.
        for (other_ns, other_name, _) in identities(d) {
            self.lineage.adopt_into(other_ns, other_name, None, &container).await?;
        }
        // Another spelling that did not resolve before may name the new container now (a column
        // lineage input naming `public.orders` for the `shop.public.orders` this event created):
        // its failure is forgotten, and the names read ahead for the event include the container.
        self.cache.retain(|_, r| r.is_ok());
        self.pool.add(container.clone());
        self.remember(d, std::slice::from_ref(&container));
        Ok(Ok(container))
    }

    /// Zero-setup mode: a datastore of its own for a namespace no datastore lists, named after
    /// the namespace, its type from the scheme.
    async fn datastore_for(&mut self, namespace: &str, kind: naming::NameKind) -> Result<Id> {
        let ns = namespace.trim().trim_end_matches('/').to_string();
        let mut name = ns.clone();
        if self.datastores.iter().any(|d| d.name == name) {
            name = format!("{ns} (openlineage)");
        }
        let store_type = match kind {
            naming::NameKind::Table => "jdbc",
            naming::NameKind::Path => "dfs",
            naming::NameKind::Topic => "stream",
        };
        let created = self
            .lineage
            .store
            .upsert_datastore(crate::domain::DatastoreInput {
                name,
                kind: naming::datastore_type(&ns),
                store_type: Some(store_type.into()),
                namespaces: vec![ns.clone()],
                enrichment_only: false,
            })
            .await?;
        tracing::info!(datastore = created.id, namespace = %ns, "datastore created for an OpenLineage namespace (zero-setup mode)");
        let id = created.id;
        self.datastores.push(created);
        self.datastores_changed = true;
        self.cache.retain(|_, r| r.is_ok());
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinked_tables_are_created_first() {
        let d = ol::Dataset {
            namespace: "hdfs://nn:8020".into(),
            name: "/warehouse/t".into(),
            symlinks: vec![
                ol::DatasetRef { namespace: "s3://b".into(), name: "w/t".into(), kind: Some("LOCATION".into()) },
                ol::DatasetRef { namespace: "hive://ms:9083".into(), name: "db.t".into(), kind: Some("TABLE".into()) },
            ],
            ..Default::default()
        };
        let order: Vec<&str> = creation_order(&d).into_iter().map(|(ns, _, _)| ns).collect();
        assert_eq!(order, ["hive://ms:9083", "hdfs://nn:8020", "s3://b"]);
        assert_eq!(ident_key("postgresql://H:1/", " A.B.C "), ("postgres://h:1".to_string(), "a.b.c".to_string()));
    }

    const NS: &str = "postgres://h:1";

    fn event(run: Option<&str>, inputs: &[&str], outputs: &[&str]) -> Event {
        let ds = |names: &[&str]| -> Vec<serde_json::Value> {
            names.iter().map(|n| serde_json::json!({"namespace": NS, "name": format!("db.s.{n}")})).collect()
        };
        let mut v = serde_json::json!({
            "eventTime": "2026-12-01T00:00:00Z",
            "producer": "https://example.com/p",
            "job": {"namespace": "j", "name": "job"},
            "inputs": ds(inputs),
            "outputs": ds(outputs),
        });
        match run {
            Some(run) => {
                v["eventType"] = "COMPLETE".into();
                v["run"] = serde_json::json!({"runId": run});
                v["schemaURL"] = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent".into();
            }
            None => v["schemaURL"] = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent".into(),
        }
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T00:00:00Z").unwrap().with_timezone(&chrono::Utc);
        ol::validate(&v, now, &ol::Limits::default()).unwrap()
    }

    /// The pairs a chunk's edges are read ahead for: a run's inputs to its outputs, across its
    /// events; an event without a run alone; only datasets read ahead, each by its candidates.
    #[test]
    fn pairs_join_each_runs_inputs_to_its_outputs() {
        let mut known = Known::default();
        for (id, name) in [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")] {
            known.pool.add(Container {
                id,
                datastore_id: 9,
                name: name.into(),
                database: Some("db".into()),
                schema: Some("s".into()),
                container_type: "table".into(),
                table_type: None,
                display_name: None,
                purpose: None,
                active_anomaly_count: 0,
            });
            if name != "e" {
                known.prefetched.insert(ident_key(NS, &format!("db.s.{name}")));
            }
        }
        let start = event(Some("r1"), &["a"], &[]);
        let complete = event(Some("r1"), &[], &["b"]);
        let job = event(None, &["c"], &["d"]);
        let other_job = event(None, &["e"], &["b"]);
        let events = [&start, &complete, &job, &other_job];
        assert_eq!(known.pairs(&events), vec![(1, 2), (3, 4)]);
    }
}
