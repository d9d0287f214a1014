//! Table lineage that a provider records by name: external engines through
//! `POST /v1/api/lineage` and `recordLineage` (seed 004), and SQL capture. One rule set, seed
//! 004's accumulation: CTAS, VIEW and semantic views replace the target's sources from the same
//! provider; INSERT, MERGE, EXTERNAL and any other operation add; a table reading itself is no
//! edge; an edge keeps the label of the statement that introduced it.

use std::collections::{BTreeSet, HashMap};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use serde_json::{json, Value};

use super::{Caller, Lineage};
use crate::auth::Permission;
use crate::domain::{Assertion, AssertionBatch, AssertionSummary, Container, Datastore, End, Evidence, Id, NewEdge};
use crate::error::{Error, Result};

/// The source type of edges sent by external engines.
pub const EXTERNAL: &str = "external";

/// Names (per lookup scope) and containers' field lists one operation remembers. A query log
/// names a few hundred tables thousands of times; past this many, the least recently used go.
const CACHED_NAMES: usize = 10_000;
const CACHED_FIELD_LISTS: usize = 2_000;
/// Names resolved by one catalog read in `resolve_many` (a few candidates each).
const NAMES_PER_READ: usize = 500;

type NameKey = (Option<Id>, String);

/// A container's fields as the catalog lists them.
#[derive(Debug, Default)]
pub struct FieldList {
    /// Names in catalog order (`SELECT *` expands in it).
    pub names: Vec<String>,
    by_name: HashMap<String, Id>,
}

impl FieldList {
    /// A field's id by name, case-insensitive.
    pub fn id(&self, name: &str) -> Option<Id> {
        self.by_name.get(&name.to_lowercase()).copied()
    }
}

struct Cache {
    names: LruCache<NameKey, Option<Container>>,
    fields: LruCache<Id, Arc<FieldList>>,
    datastores: HashMap<Id, Datastore>,
}

/// One import operation: an `ingestSql` call, a `recordLineage` call or a whole query-log
/// import. Its id goes on the evidence it writes (`firstObservedOperationId` when the evidence
/// is new, `lastObservedOperationId` always), and it carries the name-resolution cache, scoped
/// to the operation so a catalog change is seen by the next one. Clones share the cache.
#[derive(Clone)]
pub struct Operation {
    pub id: Id,
    cache: Arc<Mutex<Cache>>,
}

impl Operation {
    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        // The cache holds no invariant a panicking holder could break: reuse it.
        self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Operations that define the target afresh, replacing its sources.
pub fn replaces(operation: &str) -> bool {
    matches!(operation, "CTAS" | "VIEW" | "SEMANTIC-VIEW" | "SEMANTIC_VIEW")
}

/// `INSERT` and `INSERT_INTO` both add; the operation is kept upper-cased as sent.
pub fn normalize_operation(operation: Option<&str>) -> String {
    match operation.map(str::trim).filter(|o| !o.is_empty()) {
        Some(o) => o.to_uppercase(),
        None => "EXTERNAL".to_string(),
    }
}

/// One provider's table-level statement about a target.
pub struct TableLineage<'a> {
    pub target: &'a str,
    pub sources: &'a [String],
    pub operation: String,
    /// `external`, or the datastore type for SQL capture.
    pub source_type: String,
    /// Where the names are looked up first (`None`: every datastore).
    pub datastore: Option<Id>,
    /// The evidence row: its key is the provider's identity for this target.
    pub evidence_type: String,
    pub authorship: String,
    pub provider: String,
    pub details: Value,
}

/// A batch being built, with what applying it needs to know.
#[derive(Debug, Default)]
pub struct Plan {
    pub batch: AssertionBatch,
    /// Datastores of the catalogued ends: the caller needs `EDITOR` on each.
    pub datastores: BTreeSet<Id>,
    /// Names that matched no container and became external ends.
    pub unresolved: BTreeSet<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub summary: AssertionSummary,
    /// Names that matched no container and became external ends.
    pub unresolved: Vec<String>,
}

impl Lineage {
    /// Starts an import operation: a new id from the store's counter and an empty cache.
    pub async fn begin_operation(&self) -> Result<Operation> {
        let id = self.store.next_operation_id().await?;
        let cache = Cache {
            names: LruCache::new(NonZeroUsize::new(CACHED_NAMES).unwrap_or(NonZeroUsize::MIN)),
            fields: LruCache::new(NonZeroUsize::new(CACHED_FIELD_LISTS).unwrap_or(NonZeroUsize::MIN)),
            datastores: HashMap::new(),
        };
        Ok(Operation { id, cache: Arc::new(Mutex::new(cache)) })
    }

    /// `match_container` in one scope, through the operation's cache.
    pub(crate) async fn resolve_cached(
        &self,
        op: &Operation,
        scope: Option<Id>,
        name: &str,
    ) -> Result<Option<Container>> {
        let key = (scope, name.trim().to_lowercase());
        if let Some(hit) = op.cache().names.get(&key) {
            return Ok(hit.clone());
        }
        let found = self.match_container(&[scope], name).await?;
        op.cache().names.put(key, found.clone());
        Ok(found)
    }

    /// The container a name denotes: in `datastore` first, then anywhere.
    pub(crate) async fn container_named(
        &self,
        op: &Operation,
        datastore: Option<Id>,
        name: &str,
    ) -> Result<Option<Container>> {
        if let Some(d) = datastore {
            if let Some(c) = self.resolve_cached(op, Some(d), name).await? {
                return Ok(Some(c));
            }
        }
        self.resolve_cached(op, None, name).await
    }

    /// A container's fields, read once per operation.
    pub(crate) async fn fields_cached(&self, op: &Operation, container: Id) -> Result<Arc<FieldList>> {
        if let Some(hit) = op.cache().fields.get(&container) {
            return Ok(hit.clone());
        }
        let mut names = FieldList::default();
        for f in self.store.fields_of_containers(&[container]).await? {
            names.by_name.entry(f.name.to_lowercase()).or_insert(f.id);
            names.names.push(f.name);
        }
        let names = Arc::new(names);
        op.cache().fields.put(container, names.clone());
        Ok(names)
    }

    /// `resolve_cached` of many names in one scope at once: the names not cached yet are read
    /// in one `containers_by_names` per `NAMES_PER_READ` and matched as `match_container` does
    /// (the same candidates, rank and tie-break), so the cache then answers every one of them.
    pub(crate) async fn resolve_many<'n>(
        &self,
        op: &Operation,
        scope: Option<Id>,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Result<()> {
        let wanted: BTreeSet<String> = {
            let cache = op.cache();
            names
                .into_iter()
                .map(|n| n.trim().to_lowercase())
                .filter(|n| !cache.names.contains(&(scope, n.clone())))
                .collect()
        };
        let wanted: Vec<String> = wanted.into_iter().collect();
        let restrict: Option<Vec<Id>> = scope.map(|d| vec![d]);
        for part in wanted.chunks(NAMES_PER_READ) {
            let candidates: BTreeSet<String> = part.iter().flat_map(|w| super::name_candidates(w)).collect();
            let candidates: Vec<String> = candidates.into_iter().collect();
            let found = self.store.containers_by_names(&candidates, restrict.as_deref()).await?;
            let mut cache = op.cache();
            for w in part {
                // Exactly the containers the name's own read would return (in id order), ranked.
                let own = super::name_candidates(w);
                let best = super::best_match(w, found.iter().filter(|c| own.contains(&c.name.to_lowercase())));
                cache.names.put((scope, w.clone()), best.cloned());
            }
        }
        Ok(())
    }

    /// `container_named` of many names at once: the datastore's scope first, then everywhere
    /// for the names it did not hold (two reads, whatever the number of names).
    pub(crate) async fn containers_named(&self, op: &Operation, datastore: Id, names: &BTreeSet<&str>) -> Result<()> {
        self.resolve_many(op, Some(datastore), names.iter().copied()).await?;
        let elsewhere: Vec<&str> = {
            let mut cache = op.cache();
            names
                .iter()
                .copied()
                .filter(|n| cache.names.get(&(Some(datastore), n.trim().to_lowercase())).is_some_and(Option::is_none))
                .collect()
        };
        self.resolve_many(op, None, elsewhere).await
    }

    /// The containers the operation's cache resolved these names to (in the datastore's scope
    /// first, as `container_named`), without reading the store.
    pub(crate) fn cached_containers<'n>(
        &self,
        op: &Operation,
        datastore: Id,
        names: impl IntoIterator<Item = &'n str>,
    ) -> BTreeSet<Id> {
        let mut cache = op.cache();
        let mut out = BTreeSet::new();
        for n in names {
            let n = n.trim().to_lowercase();
            for scope in [Some(datastore), None] {
                if let Some(Some(c)) = cache.names.get(&(scope, n.clone())) {
                    out.insert(c.id);
                    break;
                }
            }
        }
        out
    }

    /// `fields_cached` of many containers at once: those not cached yet in one store read.
    pub(crate) async fn fields_many(&self, op: &Operation, containers: &BTreeSet<Id>) -> Result<()> {
        let missing: Vec<Id> = {
            let cache = op.cache();
            containers.iter().copied().filter(|id| !cache.fields.contains(id)).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let mut lists: HashMap<Id, FieldList> = missing.iter().map(|&id| (id, FieldList::default())).collect();
        // In id order, as `fields_cached` reads one container's.
        for (container, id, name) in self.store.field_names_of_containers(&missing).await? {
            if let Some(list) = lists.get_mut(&container) {
                list.by_name.entry(name.to_lowercase()).or_insert(id);
                list.names.push(name);
            }
        }
        let mut cache = op.cache();
        for (id, list) in lists {
            cache.fields.put(id, Arc::new(list));
        }
        Ok(())
    }

    /// A datastore by id, read once per operation.
    pub(crate) async fn datastore_cached(&self, op: &Operation, id: Id) -> Result<Option<Datastore>> {
        if let Some(hit) = op.cache().datastores.get(&id) {
            return Ok(Some(hit.clone()));
        }
        let Some(ds) = self.store.datastores_by_ids(&[id]).await?.pop() else { return Ok(None) };
        op.cache().datastores.insert(id, ds.clone());
        Ok(Some(ds))
    }

    async fn end_of(
        &self,
        op: &Operation,
        datastore: Option<Id>,
        name: &str,
        unresolved: &mut BTreeSet<String>,
        datastores: &mut BTreeSet<Id>,
    ) -> Result<End> {
        if let Some(c) = self.container_named(op, datastore, name).await? {
            datastores.insert(c.datastore_id);
            return Ok(End::Container { id: c.id });
        }
        unresolved.insert(name.to_string());
        Ok(End::External { fqn: name.trim().to_string() })
    }

    /// Records a provider's table lineage with seed 004's accumulation rules, in one transaction.
    pub async fn record_table_lineage(&self, caller: &Caller, op: &Operation, t: TableLineage<'_>) -> Result<Recorded> {
        if t.target.trim().is_empty() {
            return Err(Error::BadInput("target is required".into()));
        }
        let mut plan = Plan::default();
        self.plan_table_lineage(op, t, &mut plan).await?;
        let summary = self.apply_plan(caller, plan.batch, &plan.datastores, "recording lineage").await?;
        Ok(Recorded { summary, unresolved: plan.unresolved.into_iter().collect() })
    }

    /// Checks `EDITOR` on the datastores a batch touches and applies it (one transaction);
    /// an empty batch (a DELETE, a table with no catalogued end) writes nothing.
    pub(crate) async fn apply_plan(
        &self,
        caller: &Caller,
        batch: AssertionBatch,
        datastores: &BTreeSet<Id>,
        action: &str,
    ) -> Result<AssertionSummary> {
        caller.require(datastores.iter().copied(), Permission::Editor, action)?;
        if batch.assert.is_empty() && batch.retire_candidates.is_empty() {
            return Ok(AssertionSummary::default());
        }
        Ok(self.store.apply_assertions(batch, crate::domain::now()).await?)
    }

    /// Adds a provider's table lineage about one target to `plan`, with seed 004's rules.
    pub(crate) async fn plan_table_lineage(&self, op: &Operation, t: TableLineage<'_>, plan: &mut Plan) -> Result<()> {
        let unresolved = &mut plan.unresolved;
        let datastores = &mut plan.datastores;
        let target = self.end_of(op, t.datastore, t.target, unresolved, datastores).await?;
        let mut sources = Vec::new();
        for s in t.sources.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            let end = self.end_of(op, t.datastore, s, unresolved, datastores).await?;
            // A table reading itself is not an edge.
            if end != target && !sources.contains(&end) {
                sources.push(end);
            }
        }
        let key = json!([t.source_type, "target", target.key()]).to_string();
        let now = crate::domain::now();
        let batch = &mut plan.batch;
        for source in &sources {
            if source.container_id().is_none() && target.container_id().is_none() {
                // Both ends unknown: never stored as a relationship.
                continue;
            }
            batch.assert.push(Assertion {
                edge: NewEdge {
                    source: source.clone(),
                    target: target.clone(),
                    description: None,
                    source_type: t.source_type.clone(),
                    operation: Some(t.operation.clone()),
                    derived: None,
                    transformations: None,
                    last_asserted_at: Some(now),
                },
                evidence: Evidence {
                    edge_id: 0,
                    key: key.clone(),
                    provider: t.provider.clone(),
                    evidence_type: t.evidence_type.clone(),
                    authorship: t.authorship.clone(),
                    source_relation: None,
                    observed_at: Some(now),
                    first_observed_operation_id: Some(op.id),
                    last_observed_operation_id: Some(op.id),
                    details: Some(t.details.clone()),
                    retired_at: None,
                },
            });
        }
        if replaces(&t.operation) {
            // The target is defined afresh: this provider's other sources of it retire.
            let keep: BTreeSet<String> = sources.iter().map(End::key).collect();
            let stale: Vec<Id> = self
                .store
                .live_edges_touching_ends(std::slice::from_ref(&target), &t.source_type)
                .await?
                .into_iter()
                .filter(|e| e.target == target && !e.is_field_edge() && !keep.contains(&e.source.key()))
                .map(|e| e.id)
                .collect();
            self.retire_edges_in(batch, &stale).await?;
        }
        Ok(())
    }

    /// Seed 004's external-engine edge: `POST /v1/api/lineage` and `recordLineage`.
    pub async fn record_external(
        &self,
        caller: &Caller,
        target: &str,
        sources: &[String],
        operation: Option<&str>,
    ) -> Result<Recorded> {
        if target.trim().is_empty() {
            // Before the operation starts: bad input takes no operation id.
            return Err(Error::BadInput("target is required".into()));
        }
        let operation = normalize_operation(operation);
        let op = self.begin_operation().await?;
        self.record_table_lineage(
            caller,
            &op,
            TableLineage {
                target,
                sources,
                operation: operation.clone(),
                source_type: EXTERNAL.into(),
                datastore: None,
                evidence_type: "external_engine".into(),
                authorship: "provider".into(),
                provider: EXTERNAL.into(),
                details: json!({"operation": operation, "submittedBy": caller.user}),
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulation_rules() {
        assert!(replaces("CTAS") && replaces("VIEW") && replaces("SEMANTIC-VIEW"));
        assert!(!replaces("INSERT") && !replaces("INSERT_INTO") && !replaces("MERGE_INTO") && !replaces("EXTERNAL"));
        assert_eq!(normalize_operation(None), "EXTERNAL");
        assert_eq!(normalize_operation(Some(" insert ")), "INSERT");
    }
}
